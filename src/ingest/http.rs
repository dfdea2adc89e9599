//! HTTP response parsing for archived records: the status line and headers,
//! `Transfer-Encoding: chunked` and `Content-Encoding` (gzip, deflate, br).
//!
//! Archived responses are often not quite HTTP: status lines without reason
//! text, LF-only line ends, bodies stored already de-chunked or decompressed
//! while the headers still say otherwise. The functions here are lenient
//! where the intent is clear and report an error only when the data cannot
//! be made sense of. They never panic.

use std::io::Read;

/// A parsed HTTP response header; the body is what follows it in the block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    /// Status code of the status line (`HTTP/1.1 200 OK` → 200).
    pub status: u16,
    /// Header fields in order; names lowercased, values trimmed.
    pub headers: Vec<(String, String)>,
    /// Byte offset of the body in the block.
    pub body_start: usize,
}

impl HttpResponse {
    /// The value of the first header named `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// Parses the status line and headers at the start of `block`. Accepts
/// CRLF, LF and CR-CR-LF line ends, a missing reason phrase and header
/// continuation lines. A block that ends inside the header is accepted as a
/// header with an empty body. Errors when the status line is not
/// `HTTP/<version> <3-digit code>`.
pub fn parse_response(block: &[u8]) -> Result<HttpResponse, String> {
    let mut pos = 0;
    let mut status = None;
    let mut headers: Vec<(String, String)> = Vec::new();
    while pos < block.len() {
        let (line, next) = match block[pos..].iter().position(|b| *b == b'\n') {
            Some(i) => (&block[pos..pos + i], pos + i + 1),
            None => (&block[pos..], block.len()),
        };
        pos = next;
        let mut end = line.len();
        while end > 0 && line[end - 1] == b'\r' {
            end -= 1;
        }
        let line = String::from_utf8_lossy(&line[..end]);
        if status.is_none() {
            status = Some(parse_status_line(&line)?);
            continue;
        }
        if line.is_empty() {
            break;
        }
        if line.starts_with([' ', '\t']) {
            if let Some(last) = headers.last_mut() {
                last.1.push(' ');
                last.1.push_str(line.trim());
            }
        } else if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
    match status {
        Some(status) => Ok(HttpResponse { status, headers, body_start: pos }),
        None => Err("empty HTTP message".into()),
    }
}

/// `HTTP/1.1 200 OK`, `HTTP/1.0 302 ` and `HTTP/1.1 200` → the code.
fn parse_status_line(line: &str) -> Result<u16, String> {
    let bad = || format!("bad HTTP status line {:?}", truncate_chars(line, 80));
    let mut parts = line.split_whitespace();
    let proto = parts.next().ok_or_else(bad)?;
    if !proto.to_ascii_uppercase().starts_with("HTTP/") {
        return Err(bad());
    }
    let code = parts.next().ok_or_else(bad)?;
    if code.len() != 3 {
        return Err(bad());
    }
    code.parse::<u16>().map_err(|_| bad())
}

/// At most `n` characters of `s`, for error messages.
fn truncate_chars(s: &str, n: usize) -> &str {
    s.char_indices().nth(n).map_or(s, |(i, _)| &s[..i])
}

/// Undoes chunked transfer encoding. `Ok(None)` when `body` does not start
/// with a valid chunk (a size line, that many bytes and a line end): the
/// caller then uses the body as stored, since many archives store it
/// already de-chunked under the original header. A stream that ends without
/// the final zero-size chunk, or inside its last chunk, keeps the data read
/// so far (the crawler cut it). `Err` when a later chunk contradicts its
/// size (no line end after the data, a size line that is not hex): the body
/// is chunked but damaged, and where its next chunk starts is a guess.
pub fn dechunk(body: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let mut out = Vec::with_capacity(body.len());
    let mut pos = 0;
    let mut chunks = 0;
    let bad = |chunks: usize, at: usize, why: &str| {
        if chunks == 0 {
            Ok(None)
        } else {
            Err(format!("chunk {} at body byte {at}: {why}", chunks + 1))
        }
    };
    loop {
        if pos >= body.len() {
            return Ok((chunks > 0).then_some(out));
        }
        let start = pos;
        let Some(nl) = body[pos..].iter().position(|b| *b == b'\n') else {
            return bad(chunks, start, "no line end after the chunk size");
        };
        let line = String::from_utf8_lossy(&body[pos..pos + nl]);
        let size_text = line.split(';').next().unwrap_or("").trim();
        let size = match usize::from_str_radix(size_text, 16) {
            Ok(size) if size_text.len() <= 15 => size,
            _ => {
                return bad(
                    chunks,
                    start,
                    &format!("chunk size {:?} is not a hex number", truncate_chars(size_text, 20)),
                )
            }
        };
        pos += nl + 1;
        if size == 0 {
            return Ok(Some(out));
        }
        if size > body.len() - pos {
            // A last chunk cut short: keep it only if earlier chunks were good.
            if chunks == 0 {
                return Ok(None);
            }
            out.extend_from_slice(&body[pos..]);
            return Ok(Some(out));
        }
        out.extend_from_slice(&body[pos..pos + size]);
        pos += size;
        // The chunk data must be followed by a line end.
        if body[pos..].starts_with(b"\r\n") {
            pos += 2;
        } else if body[pos..].starts_with(b"\n") {
            pos += 1;
        } else if pos < body.len() {
            return bad(chunks, start, &format!("no line end after its {size} bytes"));
        }
        chunks += 1;
    }
}

/// Why content decoding failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// The data is not valid for the encoding.
    Corrupt(String),
    /// The decoded data is larger than the limit.
    TooLarge,
}

/// Undoes a `Content-Encoding` (a comma-separated list, applied in reverse
/// order). `identity` and unknown-but-harmless values (`none`, `utf-8`, ...)
/// leave the body unchanged. A body that is clearly not encoded (a gzip
/// header that does not start with the gzip magic, or `br`/`deflate` data
/// that fails to decode but starts like markup) is taken as stored, since
/// crawlers often save the decoded body under the original header. The
/// output is limited to `limit` bytes.
pub fn decode_content(encoding: &str, body: &[u8], limit: u64) -> Result<Vec<u8>, DecodeError> {
    let mut data = body.to_vec();
    for enc in encoding.split(',').rev() {
        let enc = enc.trim().to_ascii_lowercase();
        data = match enc.as_str() {
            "gzip" | "x-gzip" => {
                if !data.starts_with(&[0x1f, 0x8b]) {
                    continue;
                }
                read_limited(flate2::read::MultiGzDecoder::new(&data[..]), limit)?
            }
            "deflate" => match read_limited(flate2::read::ZlibDecoder::new(&data[..]), limit) {
                Ok(d) => d,
                Err(DecodeError::TooLarge) => return Err(DecodeError::TooLarge),
                Err(e) => match read_limited(flate2::read::DeflateDecoder::new(&data[..]), limit) {
                    Ok(d) => d,
                    Err(DecodeError::TooLarge) => return Err(DecodeError::TooLarge),
                    Err(_) if looks_like_markup(&data) => continue,
                    Err(_) => return Err(e),
                },
            },
            "br" => match read_limited(brotli_decompressor::Decompressor::new(&data[..], 4096), limit) {
                Ok(d) => d,
                Err(DecodeError::TooLarge) => return Err(DecodeError::TooLarge),
                Err(_) if looks_like_markup(&data) => continue,
                Err(e) => return Err(e),
            },
            _ => continue,
        };
    }
    Ok(data)
}

/// Reads a decoder to the end, failing past `limit` bytes of output.
fn read_limited(r: impl Read, limit: u64) -> Result<Vec<u8>, DecodeError> {
    let mut out = Vec::new();
    r.take(limit.saturating_add(1)).read_to_end(&mut out).map_err(|e| DecodeError::Corrupt(e.to_string()))?;
    if out.len() as u64 > limit {
        return Err(DecodeError::TooLarge);
    }
    Ok(out)
}

/// Starts (after whitespace and a BOM) with `<`: stored text, not compressed data.
fn looks_like_markup(data: &[u8]) -> bool {
    let data = data.strip_prefix(b"\xef\xbb\xbf").unwrap_or(data);
    data.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'<')
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn status_line_with_and_without_reason() {
        let r = parse_response(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\nbody").unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(r.header("content-type"), Some("text/html"));
        assert_eq!(r.body_start, 44);
        let r = parse_response(b"HTTP/1.0 302 \r\nLocation: /x\r\n\r\n").unwrap();
        assert_eq!(r.status, 302);
        let r = parse_response(b"HTTP/1.1 404\r\n\r\n").unwrap();
        assert_eq!(r.status, 404);
    }

    #[test]
    fn lf_only_and_cr_cr_lf_line_ends() {
        let block = b"HTTP/1.1 200 OK\nContent-Type: text/html;\n  charset=utf-8\n\n<p>x";
        let r = parse_response(block).unwrap();
        assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
        assert_eq!(&block[r.body_start..], b"<p>x");
        let block = b"HTTP/1.0 302 \r\r\nServer: BigIP\r\r\n\r\r\nrest";
        let r = parse_response(block).unwrap();
        assert_eq!(r.header("server"), Some("BigIP"));
        assert_eq!(&block[r.body_start..], b"rest");
    }

    #[test]
    fn bad_status_lines_are_errors() {
        assert!(parse_response(b"<html>hello</html>").is_err());
        assert!(parse_response(b"HTTP/1.1 OK\r\n\r\n").is_err());
        assert!(parse_response(b"").is_err());
        assert!(parse_response(b"HTTP/1.1 20x OK\r\n\r\n").is_err());
    }

    #[test]
    fn chunked_good_bad_and_cut() {
        assert_eq!(dechunk(b"4\r\nWiki\r\n5;ext=1\r\npedia\r\n0\r\n\r\n").unwrap().unwrap(), b"Wikipedia");
        assert_eq!(dechunk(b"4\nWiki\n0\n").unwrap().unwrap(), b"Wiki");
        // Not chunked at all: the caller falls back to the raw body.
        assert_eq!(dechunk(b"<html><body>hi</body></html>"), Ok(None));
        // Size larger than the data on the first chunk.
        assert_eq!(dechunk(b"ff\r\nshort"), Ok(None));
        // First chunk data not followed by a line end: not chunked either.
        assert_eq!(dechunk(b"2\r\nabc\r\n0\r\n"), Ok(None));
        // Cut after a good chunk: keep what is there.
        assert_eq!(dechunk(b"3\r\nabc\r\n10\r\nde").unwrap().unwrap(), b"abcde");
        assert_eq!(dechunk(b""), Ok(None));
        // A later chunk whose size lies (data runs on past it), or whose size
        // line is not a number: chunked, but damaged.
        let lie = dechunk(b"3\r\nabc\r\n2\r\ndefgh\r\n0\r\n\r\n").unwrap_err();
        assert_eq!(lie, "chunk 2 at body byte 8: no line end after its 2 bytes");
        let lie = dechunk(b"3\r\nabc\r\nzz\r\nde\r\n0\r\n\r\n").unwrap_err();
        assert!(lie.starts_with("chunk 2 at body byte 8: chunk size \"zz\""), "{lie}");
    }

    #[test]
    fn gzip_deflate_brotli_content() {
        let text = b"<html><body>Hello gzip</body></html>".repeat(10);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&text).unwrap();
        let gz = gz.finish().unwrap();
        assert_eq!(decode_content("gzip", &gz, 1 << 20).unwrap(), text);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&text).unwrap();
        assert_eq!(decode_content("deflate", &z.finish().unwrap(), 1 << 20).unwrap(), text);
        let mut d = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        d.write_all(&text).unwrap();
        assert_eq!(decode_content("Deflate", &d.finish().unwrap(), 1 << 20).unwrap(), text);
        // A tiny brotli stream of "hello": produced by `brotli -c`.
        let br: &[u8] = &[0x0b, 0x02, 0x80, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x03];
        assert_eq!(decode_content("br", br, 1 << 20).unwrap(), b"hello");
        assert_eq!(decode_content("identity", b"abc", 10).unwrap(), b"abc");
    }

    #[test]
    fn stored_decoded_bodies_and_failures() {
        // Header says gzip, body is plain: taken as stored.
        assert_eq!(decode_content("gzip", b"<html>x</html>", 100).unwrap(), b"<html>x</html>");
        assert_eq!(decode_content("br", b"  <html>x</html>", 100).unwrap(), b"  <html>x</html>");
        // Corrupt gzip data and garbage brotli are errors.
        assert!(matches!(
            decode_content("gzip", &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3], 100),
            Err(DecodeError::Corrupt(_))
        ));
        assert!(matches!(decode_content("br", &[0xff; 20], 100), Err(DecodeError::Corrupt(_))));
        // Output over the limit.
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&[b'a'; 5000]).unwrap();
        assert_eq!(decode_content("gzip", &gz.finish().unwrap(), 1000), Err(DecodeError::TooLarge));
    }
}

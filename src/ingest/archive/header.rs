//! A record's header, read one way wherever it is read: by the archive
//! scan (ingest) and by the export, which reads a record's header again to
//! copy or rewrite it. Where a header ends and what its fields say is
//! decided here only, so the export accepts every header ingest accepted:
//! LF-only and CR CR LF line ends, continuation lines, overlong lines.
//!
//! A WARC header ([`Header`]) is a first line (`WARC/1.0`; an HTTP
//! message's header, its status line, has the same form), then
//! `Name: value` lines, then a blank line. An ARC record's header is one
//! line ([`arc_fields`]).

use std::io::{self, BufRead, Write};

/// Longest header line kept; longer lines are cut (the rest is skipped).
pub const MAX_LINE: usize = 64 << 10;
/// Largest header accepted (its lines after the first) before the record
/// is declared malformed.
pub const MAX_HEADER_BYTES: usize = 1 << 20;

/// Where a header's lines come from.
pub trait HeaderLines {
    /// The next line with its line end: at most [`MAX_LINE`] bytes of it,
    /// the rest of a longer line skipped. Empty at the end of the data.
    fn next_line(&mut self) -> io::Result<Vec<u8>>;
}

/// How the reading of a header ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderEnd {
    /// At its blank line: the block follows.
    Complete,
    /// The data ended inside the header.
    DataEnds,
    /// The header ran over [`MAX_HEADER_BYTES`]: no record.
    TooLong,
}

/// A record's header: its first line and its fields.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// The first line without its line end (`WARC/1.0`, `WARC/0.17`,
    /// `HTTP/1.1 200 OK`).
    pub first_line: String,
    /// The fields in order: names as written, values trimmed, a
    /// continuation line joined to its field with a space. Lines that are
    /// neither a field nor a continuation are left out.
    pub fields: Vec<(String, String)>,
    /// How the reading ended (the fields read until then are kept).
    pub end: HeaderEnd,
}

impl Header {
    /// Reads a header from its first line to its blank line (included).
    pub fn read(lines: &mut dyn HeaderLines) -> io::Result<Header> {
        let first_line = String::from_utf8_lossy(trim_eol(&lines.next_line()?)).into_owned();
        let mut fields: Vec<(String, String)> = Vec::new();
        let mut bytes = 0usize;
        let end = loop {
            let line = lines.next_line()?;
            if line.is_empty() {
                break HeaderEnd::DataEnds;
            }
            bytes += line.len();
            let text = trim_eol(&line);
            if text.is_empty() {
                break HeaderEnd::Complete;
            }
            if bytes > MAX_HEADER_BYTES {
                break HeaderEnd::TooLong;
            }
            let text = String::from_utf8_lossy(text);
            if text.starts_with([' ', '\t']) {
                if let Some(last) = fields.last_mut() {
                    last.1.push(' ');
                    last.1.push_str(text.trim());
                }
            } else if let Some((name, value)) = text.split_once(':') {
                fields.push((name.trim().to_string(), value.trim().to_string()));
            }
        };
        Ok(Header { first_line, fields, end })
    }

    /// The value of field `name` (in any case), its first occurrence.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// Every value of field `name` (in any case), in order.
    pub fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.fields.iter().filter(move |(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The URI of field `name` without its angle brackets.
    pub fn uri(&self, name: &str) -> Option<String> {
        self.field(name).map(clean_uri)
    }

    /// The block length the header declares (`Content-Length`), when it is
    /// a number.
    pub fn content_length(&self) -> Option<u64> {
        self.field("content-length").and_then(|v| v.parse().ok())
    }
}

/// Header lines read from a [`BufRead`], each also copied whole to `copy`
/// (overlong lines too): the export copies a record's header as it is while
/// it reads it, and `read` counts the bytes, so that the header's length
/// is known.
pub struct CopiedLines<'a, R: BufRead> {
    input: R,
    copy: &'a mut dyn Write,
    /// The bytes read so far.
    pub read: u64,
}

impl<'a, R: BufRead> CopiedLines<'a, R> {
    /// Lines of `input`, copied to `copy`.
    pub fn new(input: R, copy: &'a mut dyn Write) -> CopiedLines<'a, R> {
        CopiedLines { input, copy, read: 0 }
    }
}

impl<R: BufRead> HeaderLines for CopiedLines<'_, R> {
    fn next_line(&mut self) -> io::Result<Vec<u8>> {
        let mut line = Vec::new();
        loop {
            let available = match self.input.fill_buf() {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                return Ok(line);
            }
            let (take, ends) = match available.iter().position(|b| *b == b'\n') {
                Some(i) => (i + 1, true),
                None => (available.len(), false),
            };
            let piece = &available[..take];
            self.copy.write_all(piece)?;
            let room = MAX_LINE.saturating_sub(line.len()).min(take);
            line.extend_from_slice(&piece[..room]);
            self.input.consume(take);
            self.read += take as u64;
            if ends {
                return Ok(line);
            }
        }
    }
}

/// Removes the line end (any number of CR and LF) from a line.
pub fn trim_eol(line: &[u8]) -> &[u8] {
    let mut end = line.len();
    while end > 0 && matches!(line[end - 1], b'\r' | b'\n') {
        end -= 1;
    }
    &line[..end]
}

/// A WARC record header's first line: `WARC/` and a version digit.
pub fn is_warc_start(line: &[u8]) -> bool {
    line.len() > 5 && line.starts_with(b"WARC/") && line[5].is_ascii_digit()
}

/// A URI header value without surrounding angle brackets and whitespace.
pub fn clean_uri(v: &str) -> String {
    let v = v.trim();
    v.strip_prefix('<').and_then(|v| v.strip_suffix('>')).unwrap_or(v).trim().to_string()
}

/// An ARC record header line split into fields, when it looks like one:
/// at least five space-separated fields, a URL-like first field (a scheme,
/// a colon and more, like `http://x`, `dns:x`, `filedesc://x`) and an IP
/// address (dots or colons, or `-`) in the v1 or v2 position. The length
/// field is not checked here, so that bad lengths are reported.
pub fn arc_fields(line: &[u8]) -> Option<Vec<&[u8]>> {
    let line = trim_eol(line);
    if line.is_empty() || line.len() > 16 << 10 || line.iter().any(|b| *b < 0x20 && *b != b'\t') {
        return None;
    }
    let fields: Vec<&[u8]> = line.split(|b| *b == b' ').filter(|f| !f.is_empty()).collect();
    if fields.len() < 5 {
        return None;
    }
    let url = fields[0];
    let colon = url.iter().position(|b| *b == b':')?;
    let scheme = &url[..colon];
    if scheme.is_empty()
        || !scheme[0].is_ascii_alphabetic()
        || !scheme.iter().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(b))
        || colon + 1 >= url.len()
    {
        return None;
    }
    let ip_like = |f: &[u8]| {
        f == b"-"
            || (f.iter().any(|b| *b == b'.' || *b == b':')
                && f.iter().any(u8::is_ascii_digit)
                && f.iter().all(|b| b.is_ascii_hexdigit() || *b == b'.' || *b == b':'))
    };
    let n = fields.len();
    if ip_like(fields[n - 4]) || (n >= 10 && ip_like(fields[n - 9])) {
        Some(fields)
    } else {
        None
    }
}

/// The fields of an ARC record's header line that a reader uses. v1 has
/// `URL IP date mime length`; v2 `URL IP date mime status checksum
/// location offset filename length`. A URL may hold spaces: it is every
/// field before the fixed ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArcLine {
    /// The URL (`filedesc://...` for the file's header record).
    pub url: String,
    /// The IP address, or `-`.
    pub ip: String,
    /// The date as written (`YYYYMMDDhhmmss`; see [`arc_date_to_iso`]).
    pub date: String,
    /// The MIME type of the payload.
    pub mime: String,
    /// The block length as written (checked by the reader, not here).
    pub length: String,
}

impl ArcLine {
    /// Reads a header line (`version2`: the file's header record said v2);
    /// `None` when [`arc_fields`] does not take it for one.
    pub fn parse(line: &[u8], version2: bool) -> Option<ArcLine> {
        let fields: Vec<String> = arc_fields(line)?.iter().map(|f| String::from_utf8_lossy(f).into_owned()).collect();
        let n = fields.len();
        let tail = if version2 && n >= 10 { 9 } else { 4 };
        Some(ArcLine {
            url: fields[..n - tail].join(" "),
            ip: fields[n - tail].clone(),
            date: fields[n - tail + 1].clone(),
            mime: fields[n - tail + 2].clone(),
            length: fields[n - 1].clone(),
        })
    }
}

/// Converts an ARC date (`YYYYMMDDhhmmss`, possibly shorter) to ISO 8601
/// (`YYYY-MM-DDThh:mm:ssZ`); `None` when it is not such a date.
pub fn arc_date_to_iso(d: &str) -> Option<String> {
    let d = d.trim();
    if !(4..=14).contains(&d.len()) || !d.len().is_multiple_of(2) || !d.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let part = |i: usize, default: &'static str| d.get(i..i + 2).unwrap_or(default).to_string();
    Some(format!(
        "{}-{}-{}T{}:{}:{}Z",
        &d[..4],
        part(4, "01"),
        part(6, "01"),
        part(8, "00"),
        part(10, "00"),
        part(12, "00")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads a header from `bytes` as the export does: (header, bytes it
    /// took, bytes copied).
    fn read_header(bytes: &[u8]) -> (Header, u64, Vec<u8>) {
        let mut copy = Vec::new();
        let mut lines = CopiedLines::new(bytes, &mut copy);
        let header = Header::read(&mut lines).unwrap();
        let read = lines.read;
        (header, read, copy)
    }

    #[test]
    fn crlf_lf_and_cr_cr_lf_line_ends_end_the_same_header() {
        for end in ["\r\n", "\n", "\r\r\n"] {
            let text = format!("WARC/1.0{end}WARC-Type: response{end}Content-Length: 3{end}{end}abc");
            let (h, read, copy) = read_header(text.as_bytes());
            assert_eq!(h.end, HeaderEnd::Complete, "{end:?}");
            assert_eq!(h.first_line, "WARC/1.0");
            assert_eq!(h.field("warc-type"), Some("response"));
            assert_eq!(h.content_length(), Some(3));
            assert_eq!(read as usize, text.len() - 3, "{end:?}");
            assert_eq!(copy, text.as_bytes()[..text.len() - 3]);
        }
    }

    #[test]
    fn continuation_lines_repeated_fields_and_uris() {
        let text = b"WARC/1.1\r\nWARC-Target-URI: < http://e.com/a b >\r\nX-Note: one\r\n\t two \r\n\
                     WARC-Concurrent-To: <urn:a>\r\nnot a field\r\nwarc-concurrent-to: <urn:b>\r\n\r\n";
        let (h, _, _) = read_header(text);
        assert_eq!(h.uri("WARC-Target-URI").as_deref(), Some("http://e.com/a b"));
        assert_eq!(h.field("x-note"), Some("one two"));
        assert_eq!(h.all("WARC-Concurrent-To").collect::<Vec<_>>(), ["<urn:a>", "<urn:b>"]);
        assert_eq!(h.fields.len(), 4);
    }

    #[test]
    fn a_header_cut_short_or_too_long_says_so() {
        let (h, read, _) = read_header(b"WARC/1.0\r\nWARC-Type: response\r\n");
        assert_eq!((h.end, read), (HeaderEnd::DataEnds, 31));
        assert_eq!(h.field("WARC-Type"), Some("response"));
        let long = format!("WARC/1.0\r\n{}\r\n", "X-Pad: y\r\n".repeat(MAX_HEADER_BYTES / 10 + 1));
        assert_eq!(read_header(long.as_bytes()).0.end, HeaderEnd::TooLong);
    }

    #[test]
    fn an_overlong_line_is_cut_but_copied_whole() {
        let text = format!("WARC/1.0\r\nX-Long: {}\r\nWARC-Type: resource\r\n\r\n", "a".repeat(MAX_LINE * 2));
        let (h, read, copy) = read_header(text.as_bytes());
        assert_eq!(h.end, HeaderEnd::Complete);
        assert_eq!(h.field("x-long").map(str::len), Some(MAX_LINE - "X-Long: ".len()));
        assert_eq!(h.field("warc-type"), Some("resource"));
        assert_eq!((read as usize, copy), (text.len(), text.into_bytes()));
    }
}

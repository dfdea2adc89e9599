//! One archive record → a document, a revisit, a reject or nothing.
//!
//! [`process_record`] is pure (no I/O, no shared state), so the caller can
//! run it on many records in parallel. It takes `response`, `resource` and
//! ARC records whose payload is HTML, parses the HTTP response when the
//! block is one, undoes chunking and content encoding, decides the charset
//! and extracts title, visible text and language ([`super::html`]). WET
//! `conversion` records of type `text/plain` (text already extracted by the
//! crawler) become documents as they are. Every
//! record that does not become a document is accounted for: non-content
//! record types are `Skipped`, revisits become `Revisit`, everything else
//! gets a `Reject` with a short reason.

use super::archive::{ArchiveFormat, RawRecord};
use super::html;
use super::http::{self, DecodeError};
use crate::ingest::settings::IngestConfig;
use xxhash_rust::xxh3::xxh3_64;

/// What a record became.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// An HTML page with its extracted text.
    Document(Document),
    /// A revisit record (the payload is stored elsewhere).
    Revisit(Revisit),
    /// A content record (or unreadable bytes) that did not become a document.
    Reject(Reject),
    /// A record type that carries no page content (warcinfo, request,
    /// metadata, continuation, ARC filedesc, unknown types; conversions
    /// that are not plain text).
    Skipped {
        /// The record type, as in [`RawRecord::record_type`].
        record_type: String,
    },
}

/// One page of the crawl (an HTML page, a WET text extract or a line of a
/// text corpus).
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// Stable id: xxh3_64 of the file name and WARC-Record-ID (or corpus
    /// `id`), or of `"{file}:{offset}"` when the record has none (ARC).
    pub doc_id: u64,
    /// The id the source gave the record: WARC-Record-ID, or the `id` of a
    /// corpus line; `None` for ARC records. Gold labels refer to it.
    pub record_id: Option<String>,
    /// Target URI (may contain spaces if the archive has them).
    pub url: String,
    /// File name of the archive (no directories).
    pub warc_file: String,
    /// Record offset (see [`RawRecord::offset`]).
    pub warc_offset: u64,
    /// Record length (see [`super::archive::Extent::length`]; a corpus line:
    /// its bytes).
    pub warc_length: Option<u64>,
    /// Capture date, ISO 8601 as in the header (ARC dates converted);
    /// `None` when missing or not a valid date (`null`, day 65, ...).
    pub crawl_date: Option<String>,
    /// HTTP status; `None` when the block is not an HTTP response.
    pub http_status: Option<u16>,
    /// MIME type of the payload, lowercased, without parameters.
    pub content_type: Option<String>,
    /// Encoding used to decode the payload (encoding_rs name, lowercased).
    pub charset: String,
    /// Text of `<title>`.
    pub title: String,
    /// ISO 639-1 code, or `""` when unknown or unreliable.
    pub lang: String,
    /// Visible text, one line per block element.
    pub text: String,
    /// HTTP payload bytes as stored (before de-chunking and decompression).
    pub raw_bytes: u64,
    /// The payload's digest as `WARC-Payload-Digest` spells it: the
    /// record's own `WARC-Payload-Digest`, else computed
    /// ([`super::digest::payload_digest`]; a corpus line: of its text or
    /// HTML, the block its export record has). Equal digests are equal
    /// payloads: the export writes a removed page as an
    /// `identical-payload-digest` revisit only then.
    pub payload_digest: String,
    /// The HTML was simplified to stay within the limits (see
    /// [`html::Extracted::flattened`]); counted per file, not stored with
    /// the document.
    pub flattened: bool,
    /// `text` was cut to `max_text_bytes`; counted per file.
    pub text_truncated: bool,
    /// The URL the page declares canonical (resolved), else its URL
    /// without fragment and tracking parameters ([`super::canonical`]).
    pub canonical_url: String,
    /// Why the document takes no part in deduplication ([`not_content`]);
    /// `None` for content.
    pub not_content: Option<String>,
}

/// Why a page is not content, the pages deduplicated; `None` when it is.
/// Not content: an HTTP status outside `cfg.content_statuses` (error pages
/// and redirects are templates, alike across a site), a meta-refresh stub
/// (`refresh` and at most `cfg.refresh_stub_max_words` words), a text
/// without a letter or digit (an empty stub), a site's `/robots.txt`
/// (plain text, but crawler instructions: the many identical ones of
/// different sites are no duplicates an archive may drop) and the crawler's
/// own `metadata:` resources (wget stores its arguments and log as such).
pub fn not_content(url: &str, status: Option<u16>, refresh: bool, text: &str, cfg: &IngestConfig) -> Option<String> {
    if let Some(status) = status.filter(|s| !cfg.content_statuses.is_empty() && !cfg.content_statuses.contains(s)) {
        return Some(format!("http status {status}"));
    }
    if is_robots_txt(url) {
        return Some("robots.txt".into());
    }
    if url.get(..9).is_some_and(|scheme| scheme.eq_ignore_ascii_case("metadata:")) {
        return Some("crawler metadata".into());
    }
    if refresh && text.split_whitespace().count() as u64 <= cfg.refresh_stub_max_words {
        return Some("meta refresh stub".into());
    }
    if !text.chars().any(char::is_alphanumeric) {
        return Some("empty stub".into());
    }
    None
}

/// Is `url`'s path `/robots.txt` (any case, any query)?
fn is_robots_txt(url: &str) -> bool {
    let Some((_, after_scheme)) = url.split_once("://") else {
        return false;
    };
    let path = after_scheme.find('/').map_or("", |i| &after_scheme[i..]);
    let path = path.split(['?', '#']).next().unwrap_or("");
    path.eq_ignore_ascii_case("/robots.txt")
}

/// A revisit record: the capture repeats an earlier payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Revisit {
    /// Stable id, computed as for [`Document::doc_id`].
    pub doc_id: u64,
    /// Target URI.
    pub url: String,
    /// File name of the archive.
    pub warc_file: String,
    /// Record offset.
    pub warc_offset: u64,
    /// Capture date (validated as for documents).
    pub crawl_date: Option<String>,
    /// WARC-Refers-To, or WARC-Refers-To-Target-URI when the former is missing.
    pub refers_to: Option<String>,
    /// WARC-Payload-Digest (the digest of the repeated payload).
    pub payload_digest: Option<String>,
}

/// A record (or unreadable region) that did not become a document, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reject {
    /// File name of the archive.
    pub warc_file: String,
    /// Record offset.
    pub warc_offset: u64,
    /// Record type (`unknown` when the header could not be read).
    pub record_type: String,
    /// Target URI when known.
    pub url: Option<String>,
    /// Short snake_case reason: `not_html`, `truncated`, `bad_gzip`,
    /// `bad_http_header`, `bad_chunking`, `decode_error`, `empty_text`,
    /// `too_large`, `too_deep`, `unsupported_compression`,
    /// `malformed_record`, `missing_warc_type`; corpus files add
    /// `missing_id`, `missing_text`, `bad_json`, `bad_parquet`,
    /// `too_many_rows`, `bad_gzip`, `bad_zstd`.
    pub reason: String,
    /// Human-readable explanation.
    pub detail: String,
}

/// Record types that never carry page content (`conversion` does when it is
/// plain text, see [`process_record`]).
const NON_CONTENT: &[&str] = &["warcinfo", "request", "metadata", "conversion", "continuation", "filedesc"];

/// Block type of the WET conversion records that hold extracted text.
const PLAIN_TEXT: &str = "text/plain";

/// MIME types that are HTML.
const HTML_TYPES: &[&str] = &["text/html", "application/xhtml+xml"];

/// MIME types that say nothing about the content, so the body is sniffed.
const GENERIC_TYPES: &[&str] = &[
    "",
    "application/octet-stream",
    "binary/octet-stream",
    "application/unknown",
    "unknown/unknown",
    "application/x-unknown-content-type",
    "*/*",
    "no-type",
    "unk",
];

/// Turns one record into its outcome. `file` is the archive file name used
/// in ids and rows (pass the name, not the full path, so ids do not depend
/// on where the data lives).
pub fn process_record(raw: &RawRecord, file: &str, cfg: &IngestConfig) -> Outcome {
    let rtype = raw.record_type.as_str();
    let plain_conversion = rtype == "conversion" && split_content_type(raw.content_type.as_deref()).0 == PLAIN_TEXT;
    if NON_CONTENT.contains(&rtype) && !plain_conversion {
        return Outcome::Skipped { record_type: raw.record_type.clone() };
    }
    let doc_id = doc_id(raw, file);
    if rtype == "revisit" {
        return Outcome::Revisit(Revisit {
            doc_id,
            url: raw.target_uri.clone().unwrap_or_default(),
            warc_file: file.to_string(),
            warc_offset: raw.offset,
            crawl_date: valid_date(raw.date.as_deref()),
            refers_to: raw.refers_to.clone(),
            payload_digest: raw.payload_digest.clone(),
        });
    }
    let is_content = matches!(rtype, "response" | "resource")
        || (raw.format == ArchiveFormat::Arc && rtype == "arc")
        || plain_conversion;
    if !is_content {
        return Outcome::Skipped { record_type: raw.record_type.clone() };
    }
    let page = if plain_conversion { text_page(raw, cfg) } else { page(raw, cfg) };
    match page {
        Ok(p) => Outcome::Document(Document {
            doc_id,
            record_id: raw.record_id.clone(),
            not_content: not_content(
                raw.target_uri.as_deref().unwrap_or_default(),
                p.status,
                p.links.refresh,
                &p.text,
                cfg,
            ),
            canonical_url: super::canonical::canonical_url(
                raw.target_uri.as_deref().unwrap_or_default(),
                p.links.canonical.as_deref(),
            ),
            url: raw.target_uri.clone().unwrap_or_default(),
            warc_file: file.to_string(),
            warc_offset: raw.offset,
            warc_length: raw.extent.length,
            crawl_date: valid_date(raw.date.as_deref()),
            http_status: p.status,
            content_type: p.mime,
            charset: p.charset,
            title: p.title,
            lang: p.lang,
            text: p.text,
            raw_bytes: p.raw_bytes,
            payload_digest: p.payload_digest,
            flattened: p.flattened,
            text_truncated: p.text_truncated,
        }),
        Err((reason, detail)) => Outcome::Reject(Reject {
            warc_file: file.to_string(),
            warc_offset: raw.offset,
            record_type: raw.record_type.clone(),
            url: raw.target_uri.clone(),
            reason: reason.to_string(),
            detail,
        }),
    }
}

/// xxh3_64 of `"{file}\n{record id}"`, or of `"{file}:{offset}"` when the
/// record has no id. The file name is part of the id because the same
/// records are often archived in several files (a `.warc` and its `.warc.gz`,
/// a crawl and its re-compression): each copy is then its own document (an
/// exact duplicate that a0 finds) instead of a clash of ids.
fn doc_id(raw: &RawRecord, file: &str) -> u64 {
    match &raw.record_id {
        Some(id) => xxh3_64(format!("{file}\n{id}").as_bytes()),
        None => xxh3_64(format!("{file}:{}", raw.offset).as_bytes()),
    }
}

/// The parts of a document that come from the block.
struct Page {
    status: Option<u16>,
    mime: Option<String>,
    charset: String,
    title: String,
    lang: String,
    text: String,
    raw_bytes: u64,
    payload_digest: String,
    flattened: bool,
    text_truncated: bool,
    links: html::PageLinks,
}

type Rejection = (&'static str, String);

/// A record cut short or too large is no page, whatever its content.
fn check_complete(raw: &RawRecord) -> Result<(), Rejection> {
    if raw.truncated {
        return Err(("truncated", format!("block has {} bytes, the file ends before its declared end", raw.block_len)));
    }
    if let Some(why) = &raw.warc_truncated {
        return Err(("truncated", format!("WARC-Truncated: {why}")));
    }
    if raw.too_large {
        return Err(("too_large", format!("block of {} bytes", raw.block_len)));
    }
    Ok(())
}

/// A WET conversion block → page: the block is the text (UTF-8, bad bytes
/// become U+FFFD), without title or HTTP status.
fn text_page(raw: &RawRecord, cfg: &IngestConfig) -> Result<Page, Rejection> {
    check_complete(raw)?;
    let raw_bytes = raw.block.len() as u64;
    if raw_bytes > cfg.max_payload_bytes {
        return Err(("too_large", format!("text of {raw_bytes} bytes")));
    }
    let mut text = String::from_utf8_lossy(&raw.block).trim().to_string();
    check_text_length(&text, cfg)?;
    let text_truncated = cut_text(&mut text, cfg.max_text_bytes);
    Ok(Page {
        status: None,
        mime: Some(PLAIN_TEXT.to_string()),
        charset: "utf-8".into(),
        title: String::new(),
        lang: html::detect_lang(&text),
        text,
        raw_bytes,
        payload_digest: stored_or_computed_digest(raw, &raw.block),
        flattened: false,
        text_truncated,
        links: html::PageLinks::default(),
    })
}

/// The record's `WARC-Payload-Digest`, else the digest of `payload`.
fn stored_or_computed_digest(raw: &RawRecord, payload: &[u8]) -> String {
    raw.payload_digest.clone().unwrap_or_else(|| super::digest::payload_digest(payload))
}

/// Block → page, or the reason it is not one.
fn page(raw: &RawRecord, cfg: &IngestConfig) -> Result<Page, Rejection> {
    check_complete(raw)?;
    let block = &raw.block[..];
    let block_type = raw.content_type.as_deref().unwrap_or("").to_ascii_lowercase();
    let is_http = block_type.starts_with("application/http")
        || (block.starts_with(b"HTTP/") && (rtype_may_be_http(&raw.record_type) || block_type.is_empty()));
    let (status, content_type, transfer_enc, content_enc, body) = if is_http {
        let resp = http::parse_response(block).map_err(|e| ("bad_http_header", e))?;
        let body = &block[resp.body_start.min(block.len())..];
        (
            Some(resp.status),
            resp.header("content-type").map(str::to_string),
            resp.header("transfer-encoding").map(str::to_string),
            resp.header("content-encoding").map(str::to_string),
            body,
        )
    } else {
        (None, raw.content_type.clone(), None, None, block)
    };
    let raw_bytes = body.len() as u64;
    if raw_bytes > cfg.max_payload_bytes {
        return Err(("too_large", format!("payload of {raw_bytes} bytes")));
    }
    let payload_digest = stored_or_computed_digest(raw, body);
    let (mime, header_charset) = split_content_type(content_type.as_deref());
    let explicit = !GENERIC_TYPES.contains(&mime.as_str());
    if explicit && !cfg.content_types.iter().any(|t| t.eq_ignore_ascii_case(&mime)) {
        return Err(("not_html", format!("content type {mime} is not in [ingest] content_types")));
    }
    let plain = explicit && !HTML_TYPES.contains(&mime.as_str());
    let dechunked;
    let mut payload = body;
    if transfer_enc.as_deref().is_some_and(|t| t.to_ascii_lowercase().contains("chunked")) {
        match http::dechunk(body) {
            Ok(Some(d)) => {
                dechunked = d;
                payload = &dechunked;
            }
            Ok(None) => {}
            Err(why) => return Err(("bad_chunking", why)),
        }
    }
    let decoded;
    if let Some(enc) = content_enc.as_deref() {
        decoded = http::decode_content(enc, payload, cfg.max_payload_bytes).map_err(|e| match e {
            DecodeError::TooLarge => {
                ("too_large", format!("{enc} payload decodes to more than {} bytes", cfg.max_payload_bytes))
            }
            DecodeError::Corrupt(m) => ("decode_error", format!("Content-Encoding {enc}: {m}")),
        })?;
        payload = &decoded;
    }
    if !explicit && !sniff_html(payload) {
        let shown = if mime.is_empty() { "none" } else { mime.as_str() };
        return Err(("not_html", format!("content type {shown} and the body does not look like HTML")));
    }
    let (enc, _) = html::decide_charset(payload, header_charset.as_deref());
    let text = html::decode(payload, enc);
    let mut ex = if plain {
        html::Extracted { text: plain_lines(&text), ..html::Extracted::default() }
    } else {
        html::extract(&text, cfg).map_err(|e| too_deep(e, cfg))?
    };
    check_text_length(&ex.text, cfg)?;
    let text_truncated = cut_text(&mut ex.text, cfg.max_text_bytes);
    Ok(Page {
        status,
        mime: (!mime.is_empty()).then_some(mime),
        charset: enc.name().to_ascii_lowercase(),
        title: ex.title,
        lang: html::detect_lang(&ex.text),
        text: ex.text,
        raw_bytes,
        payload_digest,
        flattened: ex.flattened,
        text_truncated,
        links: ex.links,
    })
}

/// A plain-text body as document text, shaped like the text of an HTML
/// page: one line per non-blank line, its whitespace runs made one space,
/// so boilerplate finds a site's repeated lines in both alike.
fn plain_lines(body: &str) -> String {
    let mut text = String::with_capacity(body.len());
    for line in body.lines() {
        let mut words = line.split_whitespace().peekable();
        if words.peek().is_none() {
            continue;
        }
        if !text.is_empty() {
            text.push('\n');
        }
        for (i, w) in words.enumerate() {
            if i > 0 {
                text.push(' ');
            }
            text.push_str(w);
        }
    }
    text
}

/// The rejection of a page whose tree stays too deep after flattening.
pub(crate) fn too_deep(e: html::TooDeep, cfg: &IngestConfig) -> Rejection {
    (
        "too_deep",
        format!(
            "the HTML nests deeper than {} elements even with the elements beyond max_html_depth = {} dropped",
            e.limit, cfg.max_html_depth
        ),
    )
}

/// A text shorter than `min_text_chars` (or empty) is no document.
pub(crate) fn check_text_length(text: &str, cfg: &IngestConfig) -> Result<(), Rejection> {
    let chars = text.chars().count() as u64;
    if chars < cfg.min_text_chars || text.is_empty() {
        return Err(("empty_text", format!("{chars} characters of text")));
    }
    Ok(())
}

/// Cuts `text` to at most `max_bytes` bytes at a character boundary (and
/// trims the whitespace the cut leaves at its end); true when it cut.
pub(crate) fn cut_text(text: &mut String, max_bytes: u64) -> bool {
    let max = usize::try_from(max_bytes).unwrap_or(usize::MAX);
    if text.len() <= max {
        return false;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(text[..end].trim_end().len());
    true
}

/// Record types whose block may be an HTTP response without saying so.
fn rtype_may_be_http(rtype: &str) -> bool {
    matches!(rtype, "response" | "arc")
}

/// `text/html; charset="UTF-8"` → (`text/html`, `Some("UTF-8")`).
fn split_content_type(ct: Option<&str>) -> (String, Option<String>) {
    let Some(ct) = ct else {
        return (String::new(), None);
    };
    let mut parts = ct.split(';');
    let mime = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    let charset = parts.find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim().eq_ignore_ascii_case("charset").then(|| v.trim().trim_matches(['"', '\'']).to_string())
    });
    (mime, charset.filter(|c| !c.is_empty()))
}

/// Does the body start like an HTML document? Looks for `<html`,
/// `<!doctype html`, `<head` or `<body` in the first 1 KB (after a BOM and
/// whitespace, comments allowed before).
pub fn sniff_html(body: &[u8]) -> bool {
    let head = &body[..body.len().min(1024)];
    let lower = head.to_ascii_lowercase();
    [&b"<html"[..], b"<!doctype html", b"<head", b"<body"].iter().any(|tag| lower.windows(tag.len()).any(|w| w == *tag))
}

/// The date if it is an ISO 8601 date or date-time (a prefix such as
/// `2014-01` or `2014-01-27T17:12` is accepted, with or without zone);
/// `None` for `null`, empty or impossible values.
pub fn valid_date(d: Option<&str>) -> Option<String> {
    let d = d?.trim();
    let b = d.as_bytes();
    let num = |r: std::ops::Range<usize>, lo: u32, hi: u32| -> bool {
        b.get(r.clone()).is_some_and(|s| s.iter().all(u8::is_ascii_digit))
            && d[r].parse::<u32>().is_ok_and(|v| (lo..=hi).contains(&v))
    };
    let ok = num(0..4, 1, 9999)
        && match b.len() {
            4 => true,
            7 => b[4] == b'-' && num(5..7, 1, 12),
            10 => b[4] == b'-' && num(5..7, 1, 12) && b[7] == b'-' && num(8..10, 1, 31),
            n if n > 10 => {
                b[4] == b'-'
                    && num(5..7, 1, 12)
                    && b[7] == b'-'
                    && num(8..10, 1, 31)
                    && b[10] == b'T'
                    && valid_time(&d[11..])
            }
            _ => false,
        };
    ok.then(|| d.to_string())
}

/// `hh:mm[:ss[.frac]][Z|±hh[:]mm]`.
fn valid_time(t: &str) -> bool {
    // Only ASCII can be valid, and the slicing below needs it.
    if !t.is_ascii() {
        return false;
    }
    let (clock, zone) = match t.find(['Z', '+', '-']) {
        Some(i) => (&t[..i], &t[i..]),
        None => (t, ""),
    };
    let two = |s: &str, hi: u32| {
        s.len() == 2 && s.bytes().all(|c| c.is_ascii_digit()) && s.parse::<u32>().is_ok_and(|v| v <= hi)
    };
    let mut parts = clock.splitn(3, ':');
    let (Some(h), Some(m)) = (parts.next(), parts.next()) else {
        return false;
    };
    let sec_ok = match parts.next() {
        None => true,
        Some(s) => {
            let (whole, frac) = s.split_once('.').unwrap_or((s, "0"));
            two(whole, 60) && !frac.is_empty() && frac.bytes().all(|c| c.is_ascii_digit())
        }
    };
    let zone_ok = match zone {
        "" | "Z" => true,
        z => {
            let z = z[1..].replace(':', "");
            z.len() == 4 && two(&z[..2], 23) && two(&z[2..], 59)
        }
    };
    two(h, 23) && two(m, 59) && sec_ok && zone_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(record_type: &str, content_type: &str, block: &[u8]) -> RawRecord {
        RawRecord {
            offset: 42,
            format: ArchiveFormat::Warc,
            record_type: record_type.into(),
            record_id: Some("<urn:uuid:1>".into()),
            target_uri: Some("http://example.com/".into()),
            date: Some("2014-01-27T17:12:38Z".into()),
            refers_to: None,
            payload_digest: None,
            concurrent_to: Vec::new(),
            content_type: Some(content_type.into()),
            warc_truncated: None,
            block: block.to_vec(),
            block_len: block.len() as u64,
            too_large: false,
            truncated: false,
            extent: Default::default(),
        }
    }

    fn reject_reason(o: Outcome) -> String {
        match o {
            Outcome::Reject(r) => r.reason,
            other => panic!("expected a reject, got {other:?}"),
        }
    }

    const HTTP: &str = "application/http; msgtype=response";

    #[test]
    fn html_response_becomes_document() {
        let block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n\
                      <html><head><title>T</title></head><body><p>Hello world</p></body></html>";
        let Outcome::Document(d) = process_record(&raw("response", HTTP, block), "a.warc.gz", &IngestConfig::default())
        else {
            panic!("not a document")
        };
        assert_eq!(d.doc_id, xxh3_64(b"a.warc.gz\n<urn:uuid:1>"));
        assert_eq!((d.http_status, d.content_type.as_deref()), (Some(200), Some("text/html")));
        assert_eq!((d.title.as_str(), d.text.as_str(), d.charset.as_str()), ("T", "Hello world", "utf-8"));
        assert_eq!(d.crawl_date.as_deref(), Some("2014-01-27T17:12:38Z"));
        assert_eq!(d.raw_bytes, 73);
    }

    /// Error pages, redirects and stubs stay documents, marked not content;
    /// the canonical URL comes from the page or from the cleaned URL.
    #[test]
    fn what_is_not_content() {
        let cfg = IngestConfig::default();
        let document = |block: &[u8]| match process_record(&raw("response", HTTP, block), "f", &cfg) {
            Outcome::Document(d) => d,
            other => panic!("not a document: {other:?}"),
        };
        let page = document(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>Hello world</p>");
        assert_eq!((page.not_content, page.canonical_url.as_str()), (None, "http://example.com/"));
        let missing = document(b"HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n\r\n<p>No such page</p>");
        assert_eq!(missing.not_content.as_deref(), Some("http status 404"));
        let stub = document(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<head><meta http-equiv=\"Refresh\" \
              content=\"0; url=/new\"><link rel=\"canonical\" href=\"/new\"></head><p>Redirecting to /new</p>",
        );
        assert_eq!(stub.not_content.as_deref(), Some("meta refresh stub"));
        assert_eq!(stub.canonical_url, "http://example.com/new");
        let empty = document(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>* * *</p>");
        assert_eq!(empty.not_content.as_deref(), Some("empty stub"));
        // Every status counts when the list is empty; a long page with a
        // refresh is content.
        let any = IngestConfig { content_statuses: vec![], ..IngestConfig::default() };
        assert_eq!(not_content("http://a/", Some(404), false, "text", &any), None);
        let long = vec!["word"; 51].join(" ");
        assert_eq!(not_content("http://a/", Some(200), true, &long, &cfg), None);
        // A site's robots.txt is not content; a file of that name elsewhere is.
        for url in ["http://a.org/robots.txt", "https://A.ORG/Robots.TXT?x=1", "dns:x/robots.txt"] {
            let want = (!url.starts_with("dns")).then(|| "robots.txt".to_string());
            assert_eq!(not_content(url, Some(200), false, "User-agent: *", &cfg), want, "{url}");
        }
        assert_eq!(not_content("http://a.org/docs/robots.txt", None, false, "text", &cfg), None);
        let wget = "metadata://gnu.org/software/wget/warc/wget_arguments.txt";
        assert_eq!(not_content(wget, None, false, "\"--delete-after\"", &cfg).as_deref(), Some("crawler metadata"));
    }

    #[test]
    fn chunked_and_gzipped_payload() {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(b"<html><body><p>Zipped text</p></body></html>").unwrap();
        let gz = gz.finish().unwrap();
        let mut block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n".to_vec();
        block.extend_from_slice(format!("{:x}\r\n", gz.len()).as_bytes());
        block.extend_from_slice(&gz);
        block.extend_from_slice(b"\r\n0\r\n\r\n");
        let Outcome::Document(d) = process_record(&raw("response", HTTP, &block), "f", &IngestConfig::default()) else {
            panic!("not a document")
        };
        assert_eq!(d.text, "Zipped text");
        // Wrong chunking (body stored de-chunked): the raw body is used.
        let block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n<p>plain</p>";
        let Outcome::Document(d) = process_record(&raw("response", HTTP, block), "f", &IngestConfig::default()) else {
            panic!("not a document")
        };
        assert_eq!(d.text, "plain");
        // Corrupt gzip → decode_error.
        let block =
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n\r\n\x1f\x8b\x08\x00garbage";
        assert_eq!(
            reject_reason(process_record(&raw("response", HTTP, block), "f", &IngestConfig::default())),
            "decode_error"
        );
    }

    #[test]
    fn rejects_and_skips() {
        let cfg = IngestConfig::default();
        let img = b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n\x89PNG";
        assert_eq!(reject_reason(process_record(&raw("response", HTTP, img), "f", &cfg)), "not_html");
        let empty = b"HTTP/1.1 301 Moved\r\nContent-Type: text/html\r\n\r\n<html><body> </body></html>";
        assert_eq!(reject_reason(process_record(&raw("response", HTTP, empty), "f", &cfg)), "empty_text");
        assert_eq!(
            reject_reason(process_record(&raw("response", HTTP, b"<html>no status"), "f", &cfg)),
            "bad_http_header"
        );
        let mut t = raw("response", HTTP, b"HTTP/1.1 200 OK\r\n\r\n<html>");
        t.truncated = true;
        assert_eq!(reject_reason(process_record(&t, "f", &cfg)), "truncated");
        let big = raw("response", HTTP, b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>0123456789</p>");
        let small = IngestConfig { max_payload_bytes: 5, ..IngestConfig::default() };
        assert_eq!(reject_reason(process_record(&big, "f", &small)), "too_large");
        let short = IngestConfig { min_text_chars: 100, ..IngestConfig::default() };
        assert_eq!(reject_reason(process_record(&big, "f", &short)), "empty_text");
        for t in ["warcinfo", "request", "metadata", "conversion", "filedesc", "unknown"] {
            assert_eq!(process_record(&raw(t, "x", b""), "f", &cfg), Outcome::Skipped { record_type: t.into() });
        }
    }

    #[test]
    fn lying_chunk_sizes_are_rejected() {
        let cfg = IngestConfig::default();
        let block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n\
                      5\r\n<p>ab\r\n3\r\ncdefgh</p>\r\n0\r\n\r\n";
        let Outcome::Reject(r) = process_record(&raw("response", HTTP, block), "f", &cfg) else { panic!() };
        assert_eq!(
            (r.reason.as_str(), r.detail.as_str()),
            ("bad_chunking", "chunk 2 at body byte 10: no line end after its 3 bytes")
        );
    }

    #[test]
    fn deep_pages_are_flattened_or_rejected_and_long_texts_cut() {
        let http = |body: &str| format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n{body}");
        let cfg = IngestConfig { max_html_depth: 20, max_text_bytes: 12, ..IngestConfig::default() };
        // 50 nested divs: flattened, every line kept.
        let deep = format!("<body>{}<p>end</p></body>", (0..50).map(|i| format!("<div>{i}")).collect::<String>());
        let Outcome::Document(d) = process_record(&raw("response", HTTP, http(&deep).as_bytes()), "f", &cfg) else {
            panic!()
        };
        assert!(d.flattened && d.text_truncated);
        assert_eq!(d.text, "0\n1\n2\n3\n4\n5");
        let wide = IngestConfig { max_text_bytes: 1 << 20, ..cfg.clone() };
        let Outcome::Document(d) = process_record(&raw("response", HTTP, http(&deep).as_bytes()), "f", &wide) else {
            panic!()
        };
        let lines: Vec<String> = (0..50).map(|i| i.to_string()).chain(["end".to_string()]).collect();
        assert_eq!((d.text, d.text_truncated), (lines.join("\n"), false));
        // Stray end tags html5ever ignores keep it nesting past the model
        // of the flattening: rejected.
        let evasive = format!("<body>{}x</body>", "<span><div></span>".repeat(50));
        let Outcome::Reject(r) = process_record(&raw("response", HTTP, http(&evasive).as_bytes()), "f", &cfg) else {
            panic!()
        };
        assert_eq!(r.reason, "too_deep");
        // A shallow page is parsed as it is.
        let Outcome::Document(d) = process_record(&raw("response", HTTP, http("<p>short</p>").as_bytes()), "f", &cfg)
        else {
            panic!()
        };
        assert_eq!((d.text.as_str(), d.flattened, d.text_truncated), ("short", false, false));
    }

    #[test]
    fn texts_are_cut_at_character_boundaries() {
        let mut t = "ab\u{e9}\u{e9}".to_string();
        assert!(cut_text(&mut t, 4));
        assert_eq!(t, "ab\u{e9}");
        let mut t = "ab cd".to_string();
        assert!(cut_text(&mut t, 3));
        assert_eq!(t, "ab");
        assert!(!cut_text(&mut t, 3));
    }

    #[test]
    fn wet_plain_text_conversion_becomes_document() {
        let cfg = IngestConfig::default();
        let block = "Title line\nSecond line caf\u{e9}\r\n\r\n".as_bytes();
        let Outcome::Document(d) = process_record(&raw("conversion", "text/plain", block), "x.wet", &cfg) else {
            panic!("not a document")
        };
        assert_eq!(d.text, "Title line\nSecond line caf\u{e9}");
        assert_eq!((d.http_status, d.content_type.as_deref(), d.title.as_str()), (None, Some("text/plain"), ""));
        assert_eq!(d.record_id.as_deref(), Some("<urn:uuid:1>"));
        assert_eq!(d.doc_id, xxh3_64(b"x.wet\n<urn:uuid:1>"));
        assert_eq!(d.raw_bytes, block.len() as u64);
        // Invalid UTF-8 is replaced, not rejected.
        let Outcome::Document(d) = process_record(&raw("conversion", "text/plain", b"ok \xff ok"), "x", &cfg) else {
            panic!("not a document")
        };
        assert_eq!(d.text, "ok \u{fffd} ok");
        assert_eq!(reject_reason(process_record(&raw("conversion", "text/plain", b" \r\n "), "x", &cfg)), "empty_text");
        let mut cut = raw("conversion", "text/plain", b"some text");
        cut.truncated = true;
        assert_eq!(reject_reason(process_record(&cut, "x", &cfg)), "truncated");
    }

    /// An HTTP text/plain response is a document read as text: its lines
    /// kept (blank ones dropped, spaces collapsed), its charset from the
    /// header, markup-looking text left as it is; without text/plain in
    /// `content_types` it is a reject.
    #[test]
    fn plain_text_response_is_read_as_text() {
        let cfg = IngestConfig::default();
        let block = "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=windows-1251\r\n\r\n\
                     User-agent: *\r\n\r\n  Disallow:   /private <b>\r\n\u{f2}\n"
            .chars()
            .map(|c| if c == '\u{f2}' { 0xf2 } else { c as u8 })
            .collect::<Vec<u8>>();
        let Outcome::Document(d) = process_record(&raw("response", HTTP, &block), "f", &cfg) else {
            panic!("not a document")
        };
        assert_eq!(d.text, "User-agent: *\nDisallow: /private <b>\nт");
        assert_eq!(
            (d.content_type.as_deref(), d.charset.as_str(), d.title.as_str()),
            (Some("text/plain"), "windows-1251", "")
        );
        assert_eq!((d.http_status, d.not_content), (Some(200), None));
        let html_only = IngestConfig { content_types: vec!["text/html".into()], ..IngestConfig::default() };
        assert_eq!(reject_reason(process_record(&raw("response", HTTP, &block), "f", &html_only)), "not_html");
        // The type's case does not matter.
        let upper = b"HTTP/1.1 200 OK\r\nContent-Type: Text/Plain\r\n\r\nhello";
        assert!(matches!(process_record(&raw("response", HTTP, upper), "f", &cfg), Outcome::Document(_)));
    }

    #[test]
    fn sniffing_generic_types_and_plain_blocks() {
        let cfg = IngestConfig::default();
        // No HTTP header: resource record of type text/html.
        let Outcome::Document(d) = process_record(&raw("resource", "text/html", b"<p>res</p>"), "f", &cfg) else {
            panic!("not a document")
        };
        assert_eq!((d.text.as_str(), d.http_status), ("res", None));
        // Generic type, HTML body → sniffed as HTML; generic type, other body → not_html.
        let gen = b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n<!DOCTYPE html><p>x</p>";
        assert!(matches!(process_record(&raw("response", HTTP, gen), "f", &cfg), Outcome::Document(_)));
        let none = b"HTTP/1.1 200 OK\r\n\r\nplain words";
        assert_eq!(reject_reason(process_record(&raw("response", HTTP, none), "f", &cfg)), "not_html");
    }

    #[test]
    fn revisit_and_arc_ids() {
        let mut r = raw("revisit", HTTP, b"");
        r.refers_to = Some("<urn:uuid:0>".into());
        r.payload_digest = Some("sha1:X".into());
        let Outcome::Revisit(v) = process_record(&r, "f", &IngestConfig::default()) else { panic!() };
        assert_eq!((v.refers_to.as_deref(), v.payload_digest.as_deref()), (Some("<urn:uuid:0>"), Some("sha1:X")));
        let mut a = raw("arc", "text/html", b"HTTP/1.0 200 OK\nContent-Type: text/html\n\n<p>arc page</p>");
        a.format = ArchiveFormat::Arc;
        a.record_id = None;
        let Outcome::Document(d) = process_record(&a, "x.arc", &IngestConfig::default()) else { panic!() };
        assert_eq!(d.doc_id, xxh3_64(b"x.arc:42"));
        assert_eq!(d.text, "arc page");
    }

    #[test]
    fn dates() {
        for ok in [
            "2014-01-27T17:12:38Z",
            "2009-03-05T08:43:19-0800",
            "2014-01-27T17:12:38.123+01:00",
            "2014-01",
            "2014-01-27T17:12",
        ] {
            assert_eq!(valid_date(Some(ok)).as_deref(), Some(ok), "{ok}");
        }
        for bad in ["null", "", "2009-03-65T08:43:19-0800", "2008-10-294T05:21:46-0700", "20140127", "2014-13-01"] {
            assert_eq!(valid_date(Some(bad)), None, "{bad}");
        }
        assert_eq!(valid_date(None), None);
    }

    #[test]
    fn dates_with_non_ascii_zones_or_times_are_invalid() {
        // A four-byte zone whose third byte is inside a character: sliced
        // at a byte that is not a character boundary, this panicked.
        for bad in [
            "2020-01-01T00:00+1\u{e9}1",
            "2020-01-01T00:00-\u{e9}\u{e9}",
            "2020-01-01T0\u{e9}:00Z",
            "2020-01-01T00:00:0\u{e9}",
        ] {
            assert_eq!(valid_date(Some(bad)), None, "{bad}");
        }
    }
}

//! WARC/1.1 headers for what is not WARC/1.x already: ARC records, the
//! WARC/0.x drafts, corpus lines, and the records of removed documents
//! that name their kept copy (revisits and notes).
//!
//! The original headers are kept, so nothing the input said is lost:
//! - an ARC record keeps its header line verbatim in `WARC-Source-Header`
//!   (`http://e.com/ 1.2.3.4 20080430204826 text/html 1591`);
//! - a WARC/0.x record keeps every header line as it is (0.17 and 0.18
//!   already use WARC/1.0's field names), except two that WARC/1.1 needs
//!   in another form: its date becomes UTC `YYYY-MM-DDThh:mm:ssZ` (the
//!   original in `WARC-Source-Date` when it differs) and its length the
//!   block's;
//! - a corpus line keeps its fields other than `text` and `html` as one
//!   JSON object in `WARC-Source-Fields`;
//! - every converted record says what it was in `WARC-Source-Format`
//!   (`ARC/1`, `WARC/0.17`, `jsonl`, `parquet`).
//!
//! A record without a usable id or date of its own gets a derived one: its
//! id a UUID made from its file and offset ([`record_id`], so a revisit can
//! name a converted kept copy), its date the time the run read the input.

use std::fmt::Write as _;
use std::io::{self, BufRead};

use crate::ingest::archive::header::{trim_eol, ArcLine, CopiedLines, Header as InputHeader, HeaderEnd, HeaderLines};

/// The WARC-Profile of the revisit records `pipeline export --removed
/// --format warc` writes, WARC/1.1 §6.7.2: "this capture's payload is
/// byte for byte the payload of the record named by
/// WARC-Refers-To-Target-URI and WARC-Refers-To-Date". Replay tools serve
/// that record's payload under this capture's URL (pywb resolves a
/// revisit by those two fields whatever the profile), so the export writes
/// it only where the two payload digests are equal ([`revisit_record`]);
/// every other removed page is a [`removed_note`] that replay tools do not
/// resolve.
pub(super) const IDENTICAL_PAYLOAD_PROFILE: &str = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";

/// The Content-Type of a record block that is an HTTP response (or its
/// header only, in a revisit).
const HTTP_RESPONSE: &str = "application/http; msgtype=response";

/// Header lines being built, each ended by CRLF.
#[derive(Debug, Default)]
pub(super) struct Header {
    text: String,
}

impl Header {
    /// A header that starts with the version line `WARC/1.1`.
    pub(super) fn warc_1_1() -> Header {
        Header { text: "WARC/1.1\r\n".into() }
    }

    /// Appends `name: value`; line breaks in the value become spaces (a
    /// field is one line).
    pub(super) fn field(&mut self, name: &str, value: &str) {
        let value: String = value.chars().map(|c| if c == '\r' || c == '\n' { ' ' } else { c }).collect();
        let _ = write!(self.text, "{name}: {}\r\n", value.trim());
    }

    /// The header with the blank line that ends it, for a block of `length`
    /// bytes (the `Content-Length` field is added here).
    pub(super) fn finish(mut self, length: u64) -> Vec<u8> {
        let _ = write!(self.text, "Content-Length: {length}\r\n\r\n");
        self.text.into_bytes()
    }
}

/// A target URI as WARC wants it: no spaces or control characters (the
/// readers of ARC files and corpora accept them; they are percent-encoded
/// here, the original is kept in the source header).
pub(super) fn clean_uri(uri: &str) -> String {
    let mut out = String::with_capacity(uri.len());
    for c in uri.trim().chars() {
        if c == ' ' || c.is_control() {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                let _ = write!(out, "%{b:02X}");
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The WARC-Record-ID the export gives the record at `offset` of `file`
/// (the file as the tables name it) when it has none of its own: a UUID
/// (version 8, "custom") from the xxh3-128 hash of both, so the same record
/// gets the same id in every export, and a revisit can name a converted
/// kept copy by its file and offset.
pub(super) fn record_id(file: &str, offset: u64) -> String {
    uuid_urn(xxhash_rust::xxh3::xxh3_128(format!("neardup-export\n{file}\n{offset}").as_bytes()))
}

/// The id of the record (revisit or note) of removed document `doc_id`.
pub(super) fn removed_record_id(doc_id: u64) -> String {
    uuid_urn(xxhash_rust::xxh3::xxh3_128(format!("neardup-export-revisit\n{doc_id}").as_bytes()))
}

/// `<urn:uuid:…>` of a 128-bit value, with the version (8) and variant bits set.
fn uuid_urn(hash: u128) -> String {
    let mut b = hash.to_be_bytes();
    b[6] = (b[6] & 0x0f) | 0x80;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("<urn:uuid:{}-{}-{}-{}-{}>", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

/// Days from 1970-01-01 to a civil date (proleptic Gregorian).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day count from 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// `YYYY-MM-DDThh:mm:ssZ` of a Unix time.
pub(super) fn unix_to_w3c(seconds: i64) -> String {
    let (days, rest) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rest / 3600, rest / 60 % 60, rest % 60)
}

/// A date as WARC/1.1 wants it (W3C-DTF in UTC: `YYYY-MM-DDThh:mm:ssZ`,
/// with the fraction of a second kept), from the ISO 8601 forms crawlers
/// write: a date or date-time prefix (`2014-01`, `2014-01-27T17:12`), with
/// or without a zone (`Z`, `+01:00`, `-0800`; none is UTC). `None` for what
/// is no date (`null`, day 65, February 30).
pub(super) fn w3c_utc(date: &str) -> Option<String> {
    let date = crate::ingest::record::valid_date(Some(date))?;
    let number = |from: usize, len: usize, default: i64| -> i64 {
        date.get(from..from + len).and_then(|s| s.parse().ok()).unwrap_or(default)
    };
    let (y, m, d) = (number(0, 4, 1), number(5, 2, 1), number(8, 2, 1));
    let month_days = [31, if is_leap(y) { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if d > month_days[(m - 1) as usize] {
        return None;
    }
    let time = date.get(11..).unwrap_or("");
    let (clock, zone) = match time.find(['Z', '+', '-']) {
        Some(i) => (&time[..i], &time[i..]),
        None => (time, ""),
    };
    let mut parts = clock.splitn(3, ':');
    let hour: i64 = parts.next().and_then(|h| h.parse().ok()).unwrap_or(0);
    let minute: i64 = parts.next().and_then(|m| m.parse().ok()).unwrap_or(0);
    let (second, fraction) = match parts.next() {
        Some(s) => {
            let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
            (whole.parse::<i64>().unwrap_or(0).min(59), frac)
        }
        None => (0, ""),
    };
    let offset_minutes = match zone {
        "" | "Z" => 0,
        z => {
            let digits = z[1..].replace(':', "");
            let minutes = digits[..2].parse::<i64>().ok()? * 60 + digits[2..].parse::<i64>().ok()?;
            if z.starts_with('-') {
                -minutes
            } else {
                minutes
            }
        }
    };
    let seconds = days_from_civil(y, m, d) * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    let whole = unix_to_w3c(seconds);
    Some(if fraction.is_empty() { whole } else { format!("{}.{fraction}Z", &whole[..whole.len() - 1]) })
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

/// The 14-digit timestamp a CDX index gives a record (`YYYYMMDDhhmmss`)
/// from its WARC-Date: the UTC date when it is one, else its digits (what
/// pywb does with a date it cannot read), cut or padded with zeros.
pub(super) fn timestamp14(date: &str) -> String {
    let digits: String = match w3c_utc(date) {
        Some(utc) => utc.chars().filter(char::is_ascii_digit).collect(),
        None => date.chars().filter(char::is_ascii_digit).collect(),
    };
    format!("{:0<14}", digits.chars().take(14).collect::<String>())
}

/// What an ARC record is written from.
pub(super) struct ArcRecord<'a> {
    /// Its header line, without the line end.
    pub line: &'a str,
    /// The file's format, `ARC/1` or `ARC/2` (whose header lines have five
    /// more fields before the length).
    pub version: &'a str,
    /// The block is an HTTP response.
    pub http: bool,
    /// The id it gets ([`record_id`]).
    pub id: &'a str,
    /// Its date when its ARC date is no date.
    pub fallback_date: &'a str,
}

/// The WARC/1.1 header of an ARC record with a block of `length` bytes. An
/// HTTP block makes a `response`, the `filedesc://` file header a
/// `warcinfo`, anything else (`dns:`) a `resource` of the ARC's MIME type.
pub(super) fn arc_header(r: &ArcRecord, length: u64) -> Vec<u8> {
    let (line, block_is_http, id, fallback) = (r.line, r.http, r.id, r.fallback_date);
    let arc = ArcLine::parse(line.as_bytes(), r.version == "ARC/2");
    let (url, ip, date, mime) = match &arc {
        Some(a) => (a.url.clone(), a.ip.as_str(), a.date.as_str(), a.mime.as_str()),
        None => (String::new(), "-", "", ""),
    };
    let (record_type, content_type) = if url.starts_with("filedesc:") {
        ("warcinfo", "text/plain")
    } else if block_is_http {
        ("response", "application/http; msgtype=response")
    } else {
        ("resource", mime)
    };
    let mut h = Header::warc_1_1();
    h.field("WARC-Type", record_type);
    h.field("WARC-Record-ID", id);
    let date = crate::ingest::archive::arc_date_to_iso(date).and_then(|d| w3c_utc(&d));
    h.field("WARC-Date", date.as_deref().unwrap_or(fallback));
    if record_type != "warcinfo" {
        h.field("WARC-Target-URI", &clean_uri(&url));
    }
    if ip != "-" && ip != "0.0.0.0" && ip.parse::<std::net::IpAddr>().is_ok() {
        h.field("WARC-IP-Address", ip);
    }
    if !content_type.is_empty() {
        h.field("Content-Type", content_type);
    }
    h.field("WARC-Source-Format", r.version);
    h.field("WARC-Source-Header", line);
    h.finish(length)
}

/// The WARC/1.1 header of a WARC/0.x record: `version` its version line,
/// `fields` its header fields (as [`InputHeader`] reads them),
/// block of `length` bytes. See the module doc for what changes.
pub(super) fn warc0_header(
    version: &str,
    fields: &[(String, String)],
    length: u64,
    id: &str,
    fallback: &str,
) -> Vec<u8> {
    let mut h = Header::warc_1_1();
    let (mut has_id, mut has_date) = (false, false);
    for (name, value) in fields {
        let (name, value) = (name.as_str(), value.as_str());
        match name.to_ascii_lowercase().as_str() {
            "content-length" => {}
            "warc-date" => {
                has_date = true;
                match w3c_utc(value) {
                    Some(utc) if utc == value => h.field("WARC-Date", value),
                    Some(utc) => {
                        h.field("WARC-Date", &utc);
                        h.field("WARC-Source-Date", value);
                    }
                    None => {
                        h.field("WARC-Date", fallback);
                        h.field("WARC-Source-Date", value);
                    }
                }
            }
            "warc-record-id" => {
                has_id = true;
                h.field(name, value);
            }
            _ => h.field(name, value),
        }
    }
    if !has_id {
        h.field("WARC-Record-ID", id);
    }
    if !has_date {
        h.field("WARC-Date", fallback);
    }
    h.field("WARC-Source-Format", version.trim());
    h.finish(length)
}

/// What an ARC or WARC/0.x record of an input is rewritten with.
pub(super) struct Converted<'a> {
    /// The file's format (`ARC/1`, `ARC/2`, `WARC/0.17`, ...).
    pub format: &'a str,
    /// The block is an HTTP response.
    pub http: bool,
    /// The id it gets when it has none ([`record_id`]).
    pub id: &'a str,
    /// Its date when it has no usable one.
    pub fallback_date: &'a str,
}

/// The WARC/1.1 header of the ARC or WARC/0.x record whose bytes `r`
/// starts at ([`arc_header`], [`warc0_header`]), its header read as ingest
/// read it; `r` is left where the block starts.
pub(super) fn converted_header(r: &mut dyn BufRead, record: &Converted, length: u64) -> io::Result<Vec<u8>> {
    let mut nowhere = io::sink();
    let mut lines = CopiedLines::new(r, &mut nowhere);
    if record.format.starts_with("ARC") {
        let line = lines.next_line()?;
        let line = String::from_utf8_lossy(trim_eol(&line));
        let arc = ArcRecord {
            line: &line,
            version: record.format,
            http: record.http,
            id: record.id,
            fallback_date: record.fallback_date,
        };
        return Ok(arc_header(&arc, length));
    }
    let header = InputHeader::read(&mut lines)?;
    if header.end != HeaderEnd::Complete {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the record header ends early: the input changed"));
    }
    Ok(warc0_header(&header.first_line, &header.fields, length, record.id, record.fallback_date))
}

/// The value of field `name` in a header written here.
pub(super) fn field_value(header: &[u8], name: &str) -> Option<String> {
    let text = String::from_utf8_lossy(header);
    text.split("\r\n").find_map(|line| line.strip_prefix(name)?.strip_prefix(": ").map(str::to_string))
}

/// What a corpus record is written from.
pub(super) struct CorpusRecord<'a> {
    /// `documents.url` of the line (its `url`, else its `id`).
    pub url: &'a str,
    /// The record's id ([`record_id`]).
    pub id: &'a str,
    /// Its date (the corpus has none: the fallback date).
    pub date: &'a str,
    /// `jsonl` or `parquet`.
    pub format: &'a str,
    /// True when the text came from the `html` field.
    pub html: bool,
    /// The other fields, as one JSON object.
    pub fields: &'a str,
}

/// The WARC/1.1 header of a corpus line or row whose text (or HTML) has
/// `length` bytes: a `conversion` record of type text/plain (text already
/// extracted, as a WET file has it) or a `resource` of type text/html.
pub(super) fn corpus_header(r: &CorpusRecord, length: u64) -> Vec<u8> {
    let mut h = Header::warc_1_1();
    h.field("WARC-Type", if r.html { "resource" } else { "conversion" });
    h.field("WARC-Record-ID", r.id);
    h.field("WARC-Date", r.date);
    h.field("WARC-Target-URI", &clean_uri(r.url));
    h.field("Content-Type", if r.html { "text/html; charset=utf-8" } else { "text/plain; charset=utf-8" });
    h.field("WARC-Source-Format", r.format);
    h.field("WARC-Source-Fields", r.fields);
    h.finish(length)
}

/// A removed document and the kept copy it is written against (see
/// [`revisit_record`] and [`removed_note`]).
pub(super) struct Removed<'a> {
    /// The removed document (its id names the record, [`removed_record_id`]).
    pub doc_id: u64,
    /// Its target URI.
    pub url: &'a str,
    /// Its capture date, as WARC/1.1 wants it.
    pub date: &'a str,
    /// `decisions.reason`: `near_duplicate` or `exact_duplicate`.
    pub reason: &'a str,
    /// The verified similarity to the kept copy.
    pub similarity: Option<f64>,
    /// Its payload digest (`documents.payload_digest`).
    pub payload_digest: Option<&'a str>,
    /// The kept copy's target URI,
    pub kept_url: &'a str,
    /// capture date (as WARC/1.1 wants it: the fallback date its
    /// conversion wrote when it had none)
    pub kept_date: &'a str,
    /// and WARC-Record-ID.
    pub kept_id: Option<&'a str>,
}

/// The fields every record about a removed capture starts with: its type,
/// an id of its own, and the removed capture's date and URL.
fn removed_header(r: &Removed, record_type: &str) -> Header {
    let mut h = Header::warc_1_1();
    h.field("WARC-Type", record_type);
    h.field("WARC-Record-ID", &removed_record_id(r.doc_id));
    h.field("WARC-Date", r.date);
    h.field("WARC-Target-URI", &clean_uri(r.url));
    h
}

/// The whole `revisit` record of a removed document whose payload is
/// byte for byte its kept copy's (the caller compared the digests): the
/// standard profile ([`IDENTICAL_PAYLOAD_PROFILE`]), the shared
/// `WARC-Payload-Digest`, and as block the removed capture's own HTTP
/// response header (`http_header`, its status line to the blank line
/// after its fields; empty for a capture that is no HTTP response), so its
/// status and headers replay as they were captured.
pub(super) fn revisit_record(r: &Removed, payload_digest: &str, http_header: &[u8]) -> Vec<u8> {
    let mut h = removed_header(r, "revisit");
    h.field("WARC-Profile", IDENTICAL_PAYLOAD_PROFILE);
    h.field("WARC-Refers-To-Target-URI", &clean_uri(r.kept_url));
    h.field("WARC-Refers-To-Date", r.kept_date);
    if let Some(id) = r.kept_id {
        h.field("WARC-Refers-To", id);
    }
    h.field("WARC-Payload-Digest", payload_digest);
    if !http_header.is_empty() {
        h.field("Content-Type", HTTP_RESPONSE);
    }
    h.field("WARC-Block-Digest", &crate::ingest::digest::payload_digest(http_header));
    with_block(h, http_header)
}

/// The Content-Type of a [`removed_note`]: WARC fields, which pywb's
/// indexer (and ours, [`super::cdxj`]) leaves out of the index by default.
pub(super) const NOTE_TYPE: &str = "application/warc-fields";

/// The whole `metadata` record that says why a removed document whose
/// payload is not its kept copy's (a near-duplicate, or the same visible
/// text in other bytes) is not in the kept export: its block, WARC fields,
/// names the kept record (`kept-target-uri`, `kept-date`,
/// `kept-record-id`), the `reason`, the `similarity` and the removed
/// capture's `payload-digest`. Not a revisit: pywb resolves any revisit to
/// the record it refers to and would serve the kept page's bytes under
/// this URL. Its type ([`NOTE_TYPE`]) keeps it out of replay indexes, so
/// the URL is not found there.
pub(super) fn removed_note(r: &Removed) -> Vec<u8> {
    let mut fields = Header::default();
    fields.field("kept-target-uri", &clean_uri(r.kept_url));
    fields.field("kept-date", r.kept_date);
    if let Some(id) = r.kept_id {
        fields.field("kept-record-id", id);
    }
    fields.field("reason", r.reason);
    if let Some(s) = r.similarity {
        fields.field("similarity", &format!("{s:.4}"));
    }
    if let Some(digest) = r.payload_digest {
        fields.field("payload-digest", digest);
    }
    let block = fields.text.into_bytes();
    let mut h = removed_header(r, "metadata");
    h.field("Content-Type", NOTE_TYPE);
    h.field("WARC-Block-Digest", &crate::ingest::digest::payload_digest(&block));
    with_block(h, &block)
}

/// A record of header `h` and `block`, with the record end.
fn with_block(h: Header, block: &[u8]) -> Vec<u8> {
    let mut record = h.finish(block.len() as u64);
    record.extend_from_slice(block);
    record.extend_from_slice(b"\r\n\r\n");
    record
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_become_utc_w3c_dates_or_none() {
        for (given, utc) in [
            ("2014-01-27T17:12:38Z", "2014-01-27T17:12:38Z"),
            ("2009-03-05T08:43:19-0800", "2009-03-05T16:43:19Z"),
            ("2014-12-31T23:30:00-01:00", "2015-01-01T00:30:00Z"),
            ("2014-03-01T00:30:00+01:00", "2014-02-28T23:30:00Z"),
            ("2014-01-27T17:12:38.123Z", "2014-01-27T17:12:38.123Z"),
            ("2014-01", "2014-01-01T00:00:00Z"),
            ("2014-01-27T17:12", "2014-01-27T17:12:00Z"),
            ("2000-02-29", "2000-02-29T00:00:00Z"),
        ] {
            assert_eq!(w3c_utc(given).as_deref(), Some(utc), "{given}");
        }
        for bad in ["null", "", "2009-03-65T08:43:19-0800", "2014-02-30", "1900-02-29"] {
            assert_eq!(w3c_utc(bad), None, "{bad}");
        }
        assert_eq!(unix_to_w3c(0), "1970-01-01T00:00:00Z");
        assert_eq!(unix_to_w3c(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(timestamp14("2009-03-05T08:43:19-0800"), "20090305164319");
        assert_eq!(timestamp14("2009-03-65T08:43:19-0800"), "20090365084319");
        assert_eq!(timestamp14("2014"), "20140101000000");
    }

    #[test]
    fn derived_ids_are_stable_version_8_uuids() {
        let id = record_id("crawl/a.arc.gz", 1234);
        assert_eq!(id, record_id("crawl/a.arc.gz", 1234));
        assert_ne!(id, record_id("crawl/a.arc.gz", 1235));
        assert_eq!(id.len(), "<urn:uuid:>".len() + 36);
        assert_eq!(&id[24..25], "8", "{id}");
        assert!("89ab".contains(&id[29..30]), "{id}");
    }

    #[test]
    fn arc_headers_keep_the_line_and_become_warc_fields() {
        let line = "http://e.com/a b 1.2.3.4 20080430204826 text/html 42";
        let arc = |line, http| ArcRecord { line, version: "ARC/1", http, id: "<urn:uuid:x>", fallback_date: "F" };
        let h = String::from_utf8(arc_header(&arc(line, true), 42)).unwrap();
        assert_eq!(
            h,
            "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:x>\r\nWARC-Date: 2008-04-30T20:48:26Z\r\n\
             WARC-Target-URI: http://e.com/a%20b\r\nWARC-IP-Address: 1.2.3.4\r\n\
             Content-Type: application/http; msgtype=response\r\nWARC-Source-Format: ARC/1\r\n\
             WARC-Source-Header: http://e.com/a b 1.2.3.4 20080430204826 text/html 42\r\nContent-Length: 42\r\n\r\n"
        );
        let dns = String::from_utf8(arc_header(&arc("dns:e.com 1.2.3.4 2008 text/dns 3", false), 3)).unwrap();
        assert!(dns.contains("WARC-Type: resource\r\n") && dns.contains("Content-Type: text/dns\r\n"), "{dns}");
        let desc = "filedesc://x.arc 0.0.0.0 20080430204825 text/plain 75";
        let desc = String::from_utf8(arc_header(&arc(desc, false), 75)).unwrap();
        assert!(desc.contains("WARC-Type: warcinfo\r\n") && !desc.contains("WARC-IP-Address"), "{desc}");
    }

    #[test]
    fn warc0_headers_keep_their_fields_with_a_utc_date() {
        let lines: Vec<(String, String)> = [
            ("WARC-Type", "response"),
            ("WARC-Date", "2009-03-65T08:43:19-0800"),
            ("WARC-TREC-ID", "clueweb09-en0000-00-00000"),
            ("Content-Length", "99"),
        ]
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
        let h =
            String::from_utf8(warc0_header("WARC/0.18", &lines, 10, "<urn:uuid:d>", "2020-01-01T00:00:00Z")).unwrap();
        assert_eq!(
            h,
            "WARC/1.1\r\nWARC-Type: response\r\nWARC-Date: 2020-01-01T00:00:00Z\r\n\
             WARC-Source-Date: 2009-03-65T08:43:19-0800\r\nWARC-TREC-ID: clueweb09-en0000-00-00000\r\n\
             WARC-Record-ID: <urn:uuid:d>\r\nWARC-Source-Format: WARC/0.18\r\nContent-Length: 10\r\n\r\n"
        );
    }

    fn removed(reason: &'static str) -> Removed<'static> {
        Removed {
            doc_id: 7,
            url: "http://e.com/b?utm_source=x",
            date: "2020-01-02T00:00:00Z",
            reason,
            similarity: Some(0.93456),
            payload_digest: Some("sha1:AAAA"),
            kept_url: "http://e.com/b",
            kept_date: "2020-01-01T00:00:00Z",
            kept_id: Some("<urn:uuid:k>"),
        }
    }

    #[test]
    fn identical_payloads_are_standard_revisits_with_their_own_http_header() {
        let http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n";
        let text = String::from_utf8(revisit_record(&removed("exact_duplicate"), "sha1:AAAA", http)).unwrap();
        assert!(text.starts_with("WARC/1.1\r\nWARC-Type: revisit\r\n"), "{text}");
        assert!(text.contains(
            "WARC-Profile: http://netpreserve.org/warc/1.1/revisit/identical-payload-digest\r\n\
             WARC-Refers-To-Target-URI: http://e.com/b\r\nWARC-Refers-To-Date: 2020-01-01T00:00:00Z\r\n\
             WARC-Refers-To: <urn:uuid:k>\r\nWARC-Payload-Digest: sha1:AAAA\r\n\
             Content-Type: application/http; msgtype=response\r\n"
        ));
        let block_digest = crate::ingest::digest::payload_digest(http);
        assert!(text.contains(&format!("WARC-Block-Digest: {block_digest}\r\nContent-Length: {}\r\n\r\n", http.len())));
        assert!(text.ends_with("Content-Type: text/html\r\n\r\n\r\n\r\n"), "{text}");
    }

    #[test]
    fn other_removed_pages_are_notes_that_name_the_kept_record_and_no_revisits() {
        let text = String::from_utf8(removed_note(&removed("near_duplicate"))).unwrap();
        let (header, block) = text.split_once("\r\n\r\n").unwrap();
        assert!(header.contains("WARC-Type: metadata\r\n") && header.contains("Content-Type: application/warc-fields"));
        assert!(header.contains("WARC-Target-URI: http://e.com/b?utm_source=x\r\n"), "{header}");
        // Nothing a replay tool follows to another record.
        assert!(!header.contains("Refers-To") && !header.contains("WARC-Profile"), "{header}");
        let block = block.strip_suffix("\r\n\r\n").unwrap();
        assert_eq!(
            block,
            "kept-target-uri: http://e.com/b\r\nkept-date: 2020-01-01T00:00:00Z\r\nkept-record-id: <urn:uuid:k>\r\n\
             reason: near_duplicate\r\nsimilarity: 0.9346\r\npayload-digest: sha1:AAAA\r\n"
        );
        assert!(header.ends_with(&format!("Content-Length: {}", block.len())));
    }
}

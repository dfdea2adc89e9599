//! The first pass over an input archive: every record with the header
//! fields and extent the second pass needs, read by ingest's reader (the
//! same records at the same offsets as `documents`, the same headers).

use anyhow::{Context, Result};
use std::io::{self, BufReader, Read, Seek};

use crate::export::cdxj::Entry;
use crate::export::job::Decision;
use crate::ingest::archive::header::{CopiedLines, Header, HeaderEnd};
use crate::ingest::archive::{member_size, scan_archive_range, scan_archive_source, ArchiveEvent, Extent, RawRecord};
use crate::ingest::digest::{payload_digest, payload_digest_of};
use crate::ingest::source::{ReadSeek, Source};

/// One record of an input archive, as the second pass needs it.
#[derive(Debug, Clone)]
pub(super) struct Record {
    /// Where it starts (see [`RawRecord::offset`]).
    pub(super) offset: u64,
    /// Where its bytes are.
    pub(super) extent: Extent,
    /// Its WARC-Type (`arc` or `filedesc` for ARC).
    pub(super) record_type: String,
    /// WARC-Record-ID.
    pub(super) record_id: Option<String>,
    /// WARC-Target-URI, or the ARC URL.
    pub(super) target_uri: Option<String>,
    /// Every WARC-Concurrent-To.
    pub(super) concurrent_to: Vec<String>,
    /// WARC-Refers-To (or WARC-Refers-To-Target-URI).
    pub(super) refers_to: Option<String>,
    /// Block bytes present in the file.
    pub(super) block_len: u64,
    /// Its own gzip member ends the record with exactly CR LF CR LF, so
    /// the member is copied as it is; otherwise (or unknown: false) the
    /// record is written again with that end.
    pub(super) member_ends_well: bool,
    /// The block is an HTTP message (ARC conversions need to know).
    pub(super) http: bool,
    /// What the index says of it (only for `--format cdxj`).
    pub(super) entry: Option<Entry>,
}

impl Record {
    /// What the second pass needs of a record the scan read (`index`: with
    /// its index entry).
    pub(super) fn of(r: RawRecord, index: bool) -> Record {
        let http = r.block.starts_with(b"HTTP/");
        let entry = index.then(|| entry_of(&r, http));
        Record {
            offset: r.offset,
            extent: r.extent,
            record_type: r.record_type,
            record_id: r.record_id,
            target_uri: r.target_uri,
            concurrent_to: r.concurrent_to,
            refers_to: r.refers_to,
            block_len: r.block_len,
            // The scan checked that only blank bytes follow the block; the
            // members it found are copied as they are.
            member_ends_well: r.extent.own_member,
            http,
            entry,
        }
    }
}

/// The index entry of a record as it is in the input.
fn entry_of(r: &RawRecord, http: bool) -> Entry {
    let parsed = if http { crate::ingest::http::parse_response(&r.block).ok() } else { None };
    let digest = r.payload_digest.clone().or_else(|| {
        // A payload digest the record does not carry is computed, as pywb
        // does, when the whole block was read.
        if r.too_large || r.truncated {
            return None;
        }
        let payload = match &parsed {
            Some(p) => r.block.get(p.body_start..).unwrap_or_default(),
            None => &r.block[..],
        };
        Some(payload_digest(payload))
    });
    Entry {
        record_type: r.record_type.clone(),
        url: r.target_uri.clone().unwrap_or_default(),
        date: r.date.clone().unwrap_or_default(),
        content_type: r.content_type.clone(),
        http_mime: parsed.as_ref().and_then(|p| p.header("content-type").map(str::to_string)),
        status: parsed.map(|p| p.status),
        digest,
    }
}

/// Every record of an archive file, and the number of unreadable regions
/// and the format of its first record (see
/// [`crate::ingest::archive::ArchiveInfo::format`]):
/// read member by member ([`records_by_members`]) when ingest found the
/// file to be WARC/1.x gzipped per record (`per_record_warc`), else by a
/// scan of the whole file. `index`: with their index entries.
pub(super) fn records(
    source: &Source,
    decisions: &[Decision],
    per_record_warc: bool,
    max_block: u64,
    index: bool,
) -> Result<(Vec<Record>, u64, String)> {
    let by_members = if per_record_warc {
        records_by_members(source, decisions, max_block, index).context("cannot read the input file")?
    } else {
        None
    };
    Ok(match by_members {
        Some((records, unreadable)) => (records, unreadable, "WARC/1.0".to_string()),
        None => {
            let mut records = Vec::new();
            let mut unreadable = 0u64;
            let info = scan_archive_source(source, max_block, &mut |event| match event {
                ArchiveEvent::Record(r) => records.push(Record::of(r, index)),
                ArchiveEvent::Malformed { .. } => unreadable += 1,
            })
            .context("cannot read the input file")?;
            (records, unreadable, info.format)
        }
    })
}

/// Trailing blank bytes a record's own gzip member may hold after its
/// block (its record end, CR LF CR LF, with some leeway for odd writers).
const MAX_RECORD_END: u32 = 64;

/// The first pass over a WARC/1.x file gzipped per record, without
/// decompressing the documents' blocks: each document's record is the gzip
/// member `decisions` names (offset and length), whose header is all that
/// is read, and its trailer's size tells whether the record is intact; only
/// the bytes between documents (requests, metadata, warcinfo, records that
/// are no documents) are scanned. The same records as a scan of the whole
/// file, at a fraction of the cost: most of a crawl is its documents.
/// `None` when the decisions do not fit the file as such (a length in the
/// decompressed stream, a record sharing its member): then the whole file
/// is scanned.
fn records_by_members(
    source: &Source,
    decisions: &[Decision],
    max_block: u64,
    index: bool,
) -> io::Result<Option<(Vec<Record>, u64)>> {
    let size = source.size()?;
    // Unbuffered: a few bytes are read at each end of a member, and its
    // start decompressed through a small buffer of its own.
    let mut raw = source.open()?;
    let (mut records, mut unreadable, mut at) = (Vec::new(), 0u64, 0u64);
    let scan = |range: std::ops::Range<u64>, records: &mut Vec<Record>, unreadable: &mut u64| {
        let mut fits = true;
        scan_archive_range(source, range.clone(), max_block, &mut |event| match event {
            ArchiveEvent::Record(mut r) if r.extent.own_member && r.extent.length.is_some() => {
                r.offset += range.start;
                records.push(Record::of(r, index));
            }
            ArchiveEvent::Record(_) => fits = false,
            ArchiveEvent::Malformed { .. } => *unreadable += 1,
        })?;
        io::Result::Ok(fits)
    };
    for d in decisions {
        let Some(length) = d.length else { return Ok(None) };
        if d.offset < at || d.offset.saturating_add(length) > size || length < 18 {
            return Ok(None);
        }
        if d.offset > at && !scan(at..d.offset, &mut records, &mut unreadable)? {
            return Ok(None);
        }
        let Some(record) = member_record(&mut raw, d.offset, length, index)? else { return Ok(None) };
        records.push(record);
        at = d.offset + length;
    }
    if at < size && !scan(at..size, &mut records, &mut unreadable)? {
        return Ok(None);
    }
    Ok(Some((records, unreadable)))
}

/// The record that is the gzip member `[offset, offset + length)` of the
/// file, from the start of the member only (its WARC header and, for the
/// index, its HTTP header; the whole member for an index when the record
/// carries no payload digest). `None` when it is no WARC/1.x record.
fn member_record(raw: &mut Box<dyn ReadSeek>, offset: u64, length: u64, index: bool) -> io::Result<Option<Record>> {
    let Some(uncompressed) = member_size(raw.as_mut(), offset, length)? else { return Ok(None) };
    raw.seek(io::SeekFrom::Start(offset))?;
    let mut member = flate2::bufread::GzDecoder::new(BufReader::with_capacity(4096, raw.take(length)));
    let mut head = Vec::new();
    let mut chunk = [0u8; 4096];
    // The WARC header, and the HTTP header after it for the index.
    let (header, header_len, http_head) = loop {
        let n = match member.read(&mut chunk) {
            Ok(n) => n,
            // Not the member the decisions say: the whole file is scanned.
            Err(e) if matches!(e.kind(), io::ErrorKind::InvalidData | io::ErrorKind::InvalidInput) => return Ok(None),
            Err(e) => return Err(e),
        };
        head.extend_from_slice(&chunk[..n]);
        let Some((header, h)) = header_at(&head)? else {
            if n == 0 || head.len() > 1 << 20 {
                return Ok(None);
            }
            continue;
        };
        // Only an HTTP block has a header of its own to find (a resource's
        // block may be megabytes without one).
        let block = &head[h..];
        let may_be_http = b"HTTP/".starts_with(&block[..block.len().min(5)]);
        if !(index && may_be_http && n > 0) {
            break (header, h, h);
        }
        if let Some((_, http)) = header_at(block)? {
            break (header, h, h + http);
        }
        if head.len() > 1 << 20 {
            return Ok(None);
        }
    };
    if !header.first_line.starts_with("WARC/1.") {
        return Ok(None);
    }
    let field = |name: &str| header.field(name).map(str::to_string);
    let (Some(record_type), Some(block_len)) = (field("warc-type"), header.content_length()) else {
        return Ok(None);
    };
    let record_end = uncompressed.wrapping_sub((header_len as u64).wrapping_add(block_len) as u32);
    let block = &head[header_len..];
    let http = block.starts_with(b"HTTP/");
    let mut record = Record {
        offset,
        // The stream position is not known, and not needed: the record is
        // read back as its member.
        extent: Extent {
            length: Some(length),
            own_member: true,
            stream_offset: 0,
            stream_length: u64::from(uncompressed),
            intact: record_end <= MAX_RECORD_END,
        },
        record_type,
        record_id: field("warc-record-id"),
        target_uri: header.uri("warc-target-uri"),
        concurrent_to: header.all("warc-concurrent-to").map(str::to_string).collect(),
        refers_to: field("warc-refers-to").or_else(|| field("warc-refers-to-target-uri")),
        block_len,
        member_ends_well: record_end == 4,
        http,
        entry: None,
    };
    if index {
        let parsed =
            if http { crate::ingest::http::parse_response(&block[..http_head - header_len]).ok() } else { None };
        let body_start = parsed.as_ref().map_or(0, |p| p.body_start as u64);
        let digest = match field("warc-payload-digest") {
            Some(d) => Some(d),
            None if record.extent.intact => {
                // The payload hashed: the member decompressed again, whole.
                drop(member);
                raw.seek(io::SeekFrom::Start(offset))?;
                let mut whole = flate2::bufread::GzDecoder::new(BufReader::with_capacity(64 << 10, raw.take(length)));
                io::copy(&mut (&mut whole).take(header_len as u64 + body_start), &mut io::sink())?;
                Some(payload_digest_of(&mut whole.take(block_len.saturating_sub(body_start)))?)
            }
            None => None,
        };
        record.entry = Some(Entry {
            record_type: record.record_type.clone(),
            url: record.target_uri.clone().unwrap_or_default(),
            date: field("warc-date").unwrap_or_default(),
            content_type: field("content-type"),
            http_mime: parsed.as_ref().and_then(|p| p.header("content-type").map(str::to_string)),
            status: parsed.map(|p| p.status),
            digest,
        });
    }
    Ok(Some(record))
}

/// The header at the start of `bytes`, read as ingest reads it, and how
/// many bytes it takes; `None` until `bytes` hold all of it.
fn header_at(bytes: &[u8]) -> io::Result<Option<(Header, usize)>> {
    let mut nowhere = io::sink();
    let mut lines = CopiedLines::new(bytes, &mut nowhere);
    let header = Header::read(&mut lines)?;
    Ok((header.end == HeaderEnd::Complete).then_some((header, lines.read as usize)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `records` as one file, each record a gzip member of its own.
    fn per_record_gzip(name: &str, records: &[String]) -> Source {
        use std::io::Write;
        let dir = std::env::temp_dir().join(format!("neardup-export-warc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut file = Vec::new();
        for r in records {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            gz.write_all(r.as_bytes()).unwrap();
            file.extend(gz.finish().unwrap());
        }
        let path = dir.join(name);
        std::fs::write(&path, file).unwrap();
        Source::File(path)
    }

    fn warc(rtype: &str, id: &str, extra: &str, block: &str) -> String {
        format!(
            "WARC/1.0\r\nWARC-Type: {rtype}\r\nWARC-Record-ID: {id}\r\nWARC-Target-URI: http://e.com/\r\n\
             WARC-Date: 2020-01-01T00:00:00Z\r\n{extra}Content-Length: {}\r\n\r\n{block}\r\n\r\n",
            block.len()
        )
    }

    #[test]
    fn reading_documents_from_their_members_finds_what_a_whole_scan_finds() {
        let page = "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>page</p>";
        let records = [
            warc("warcinfo", "<w>", "Content-Type: application/warc-fields\r\n", "software: x"),
            warc("request", "<q>", "WARC-Concurrent-To: <r1>\r\n", "GET / HTTP/1.1\r\n\r\n"),
            warc("response", "<r1>", "WARC-Payload-Digest: sha1:ABC\r\n", page),
            warc("metadata", "<m>", "WARC-Concurrent-To: <r1>\r\n", "via: x"),
            warc("response", "<r2>", "Content-Type: application/http; msgtype=response\r\n", page),
            warc("revisit", "<v>", "WARC-Refers-To: <r2>\r\n", ""),
        ];
        let source = per_record_gzip("members.warc.gz", &records);
        let mut whole = Vec::new();
        scan_archive_source(&source, 1 << 20, &mut |e| {
            if let ArchiveEvent::Record(r) = e {
                whole.push(Record::of(r, true));
            }
        })
        .unwrap();
        let decision = |r: &Record| Decision {
            offset: r.offset,
            length: r.extent.length,
            doc_id: 0,
            url: String::new(),
            crawl_date: None,
            kept: true,
            reason: "unique".into(),
            similarity: None,
            payload_digest: None,
            kept_copy: None,
        };
        let documents = [decision(&whole[2]), decision(&whole[4])];
        let (fast, unreadable) = records_by_members(&source, &documents, 1 << 20, true).unwrap().expect("fits");
        assert_eq!(unreadable, 0);
        let view = |r: &Record| {
            let x = r.extent;
            format!(
                "{} {:?} {} {} {} {:?} {:?} {:?} {:?} {} {} {:?}",
                r.offset,
                x.length,
                x.own_member,
                x.intact,
                r.record_type,
                r.record_id,
                r.target_uri,
                r.concurrent_to,
                r.refers_to,
                r.block_len,
                r.http,
                r.entry
            )
        };
        assert_eq!(fast.iter().map(view).collect::<Vec<_>>(), whole.iter().map(view).collect::<Vec<_>>());
        assert!(fast[4].entry.as_ref().unwrap().digest.as_deref().is_some_and(|d| d.starts_with("sha1:")));
        // A length that is not its member's: the whole file is scanned instead.
        let wrong = [Decision { length: Some(documents[0].length.unwrap() + 3), ..decision(&whole[2]) }];
        assert!(records_by_members(&source, &wrong, 1 << 20, false).unwrap().is_none());
    }
}

//! The removed export (`--removed`): each removed document becomes one
//! record about its URL that names its kept copy, in one of two forms:
//!
//! - a standard `revisit` ([`legacy::revisit_record`]) when its payload is
//!   byte for byte its kept copy's (their `documents.payload_digest` are
//!   equal): replay tools serve the kept copy's payload under its URL,
//!   which is then what was captured there. Its block is the removed
//!   capture's own HTTP response header, read again from the input file;
//! - otherwise (a near-duplicate, or the same visible text in other bytes)
//!   a `metadata` note ([`legacy::removed_note`]): a revisit there would
//!   make pywb serve another page's bytes under the URL, so the note names
//!   the kept record in its block, where no replay tool follows it.

use anyhow::{Context, Result};
use std::collections::HashMap;
use std::io::{self, BufRead, Read};

use super::record_bytes::RecordBytes;
use super::scan::{records, Record};
use super::sink::{write_member, RecordSink};
use crate::export::cdxj::Entry;
use crate::export::job::{Decision, ExportSummary};
use crate::export::legacy::{self, Removed};
use crate::ingest::archive::header::{CopiedLines, Header, HeaderLines};
use crate::ingest::corpus;
use crate::ingest::source::Source;

/// How one input file is read again for its removed documents' HTTP
/// headers: the archive reader's block cap and whether the file is
/// WARC/1.x gzipped per record, as the run's ingest found them.
pub(super) struct InputReading {
    /// The archive reader's block cap.
    pub(super) max_block: u64,
    /// The file is WARC/1.x gzipped per record (see `scan::records`).
    pub(super) per_record_warc: bool,
}

/// The removed export of one input file: a record per removed document
/// (see the module doc), in offset order.
pub(super) fn revisits(
    source: &Source,
    decisions: &[Decision],
    reading: &InputReading,
    fallback_date: &str,
    sink: &mut dyn RecordSink,
    summary: &mut ExportSummary,
) -> Result<()> {
    let identical: Vec<Decision> = decisions.iter().filter(|d| identical_payload(d).is_some()).cloned().collect();
    let http_headers = if identical.is_empty() || corpus::is_corpus_file(&source.name_path()) {
        HashMap::new()
    } else {
        http_headers(source, &identical, reading)?
    };
    for d in decisions.iter().filter(|d| !d.kept) {
        let Some(kept) = &d.kept_copy else {
            summary.add("removed_without_kept_copy", 1);
            continue;
        };
        // A WARC record (any version) keeps its id, whatever its shape; an
        // ARC record (no id) or a corpus line gets the id its conversion
        // gets. A kept copy of an earlier crawl is named by its URL and
        // date only: the history keeps no record id.
        let kept_id = match &kept.record_id {
            _ if kept.crawl.is_some() => None,
            Some(id) if !corpus::is_corpus_file(std::path::Path::new(&kept.warc_file)) => Some(id.clone()),
            _ => Some(legacy::record_id(&kept.warc_file, kept.warc_offset)),
        };
        let date = d.crawl_date.as_deref().and_then(legacy::w3c_utc).unwrap_or_else(|| fallback_date.to_string());
        // A kept copy without a valid date was written with the fallback
        // date, as this record is.
        let kept_date =
            kept.crawl_date.as_deref().and_then(legacy::w3c_utc).unwrap_or_else(|| fallback_date.to_string());
        let removed = Removed {
            doc_id: d.doc_id,
            url: &d.url,
            date: &date,
            reason: &d.reason,
            similarity: d.similarity,
            payload_digest: d.payload_digest.as_deref(),
            kept_url: &kept.url,
            kept_date: &kept_date,
            kept_id: kept_id.as_deref(),
        };
        let url = legacy::clean_uri(&d.url);
        let (record, entry) = match identical_payload(d) {
            Some(digest) => {
                let header = http_headers.get(&d.offset).map_or(&[][..], Vec::as_slice);
                summary.add("revisit_records", 1);
                let entry = Entry {
                    record_type: "revisit".into(),
                    url,
                    date: date.clone(),
                    digest: Some(digest.into()),
                    ..Entry::default()
                };
                (legacy::revisit_record(&removed, digest, header), entry)
            }
            None => {
                summary.add("note_records", 1);
                let entry = Entry {
                    record_type: "metadata".into(),
                    url,
                    date: date.clone(),
                    content_type: Some(legacy::NOTE_TYPE.into()),
                    ..Entry::default()
                };
                (legacy::removed_note(&removed), entry)
            }
        };
        let (offset, length) = write_member(sink, |out| out.write_all(&record))?;
        sink.written(Some(&entry), offset, length)?;
    }
    Ok(())
}

/// The payload digest a removed document shares with its kept copy, if
/// their payloads are byte-identical.
fn identical_payload(d: &Decision) -> Option<&str> {
    let kept = d.kept_copy.as_ref()?.payload_digest.as_deref()?;
    d.payload_digest.as_deref().filter(|own| !d.kept && *own == kept)
}

/// The HTTP response header of each document of `wanted` (by offset),
/// read again from its record in the input file; documents whose block is
/// no HTTP response are left out.
fn http_headers(source: &Source, wanted: &[Decision], reading: &InputReading) -> Result<HashMap<u64, Vec<u8>>> {
    let (found, _, _) = records(source, wanted, reading.per_record_warc, reading.max_block, false)?;
    let at: HashMap<u64, &Record> = found.iter().map(|r| (r.offset, r)).collect();
    let mut bytes = RecordBytes::new(source);
    let mut headers = HashMap::new();
    for d in wanted {
        let Some(record) = at.get(&d.offset) else {
            anyhow::bail!(
                "no record at offset {} where the run found document {}: the file changed since the run",
                d.offset,
                d.doc_id
            );
        };
        let header = bytes
            .with_record(record, |r| http_header_of(r, record.block_len))
            .with_context(|| format!("cannot read the record at offset {}", d.offset))?;
        if !header.is_empty() {
            headers.insert(d.offset, header);
        }
    }
    Ok(headers)
}

/// The longest HTTP response header read back: longer ones (none a
/// server sends) are left out of the revisit.
const MAX_HTTP_HEADER: u64 = 64 << 10;

/// The HTTP response header at the start of the block of the record `r`
/// reads (a WARC record of any version, or an ARC record): its bytes as
/// captured, from the status line to the blank line after its fields;
/// empty when the block is no HTTP response or its header does not end
/// within [`MAX_HTTP_HEADER`] bytes.
fn http_header_of(r: &mut dyn BufRead, block_len: u64) -> io::Result<Vec<u8>> {
    let is_warc = r.fill_buf()?.starts_with(b"WARC/");
    let mut nowhere = io::sink();
    let mut lines = CopiedLines::new(&mut *r, &mut nowhere);
    if is_warc {
        Header::read(&mut lines)?;
    } else {
        // An ARC record's header is one line.
        lines.next_line()?;
    }
    let mut head = Vec::new();
    (&mut *r).take(block_len.min(MAX_HTTP_HEADER)).read_to_end(&mut head)?;
    if !head.starts_with(b"HTTP/") {
        return Ok(Vec::new());
    }
    let Ok(parsed) = crate::ingest::http::parse_response(&head) else { return Ok(Vec::new()) };
    head.truncate(parsed.body_start);
    // The header ends with an empty line; otherwise it was cut short here.
    let ended = head.ends_with(b"\n\n") || head.ends_with(b"\n\r\n");
    Ok(if ended { head } else { Vec::new() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_http_header_is_read_as_captured_after_a_warc_or_arc_header() {
        let block = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-A:  b \r\n\r\n<p>page</p>";
        let warc = format!("WARC/1.0\r\nWARC-Type: response\r\nContent-Length: {}\r\n\r\n{block}\r\n\r\n", block.len());
        let header = http_header_of(&mut warc.as_bytes(), block.len() as u64).unwrap();
        assert_eq!(header, b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-A:  b \r\n\r\n");
        let arc = format!("http://e.com/ 1.2.3.4 20080430204826 text/html {}\n{block}\n", block.len());
        assert_eq!(http_header_of(&mut arc.as_bytes(), block.len() as u64).unwrap(), header);
        // No HTTP response, or a header cut short: nothing.
        let resource = "WARC/1.0\r\nWARC-Type: resource\r\nContent-Length: 11\r\n\r\n<p>page</p>\r\n\r\n";
        assert!(http_header_of(&mut resource.as_bytes(), 11).unwrap().is_empty());
        let cut = "WARC/1.0\r\nContent-Length: 30\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: t";
        assert!(http_header_of(&mut cut.as_bytes(), 30).unwrap().is_empty());
    }
}

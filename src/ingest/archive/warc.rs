//! A WARC record (any version): its header read with [`Header::read`],
//! then its block.

use super::events::{ArchiveEvent, ArchiveFormat, RawRecord};
use super::header::{Header, HeaderEnd, MAX_HEADER_BYTES};
use super::parser::Parser;
use std::io;

impl Parser {
    /// Reads the WARC record whose header line starts at uncompressed
    /// offset `ustart` (the stream is there).
    pub(super) fn read_warc(&mut self, ustart: u64) -> io::Result<ArchiveEvent> {
        let (offset, member_start) = self.s.offset_of(ustart);
        let header = Header::read(&mut self.s)?;
        let record_type = header.field("warc-type").map(str::to_string);
        let target_uri = header.uri("warc-target-uri");
        let malformed = |record_type: Option<String>, reason: &str, detail: String| ArchiveEvent::Malformed {
            offset,
            record_type,
            target_uri: target_uri.clone(),
            reason: reason.into(),
            detail,
        };
        match header.end {
            HeaderEnd::Complete => {}
            HeaderEnd::DataEnds => {
                let reason = if self.s.brk.is_some() { "bad_gzip" } else { "truncated" };
                return Ok(malformed(record_type, reason, "data ends inside the WARC header".into()));
            }
            HeaderEnd::TooLong => {
                let skipped = self.skip_to_record_start()?;
                return Ok(malformed(
                    record_type,
                    "malformed_record",
                    format!("WARC header longer than {MAX_HEADER_BYTES} bytes (skipped {skipped} more bytes)"),
                ));
            }
        }
        let Some(len) = header.content_length() else {
            let skipped = self.skip_to_record_start_after_header()?;
            let detail = format!("missing or invalid Content-Length (skipped {skipped} bytes)");
            return Ok(malformed(Some(record_type.unwrap_or_else(|| "unknown".into())), "malformed_record", detail));
        };
        let (block, block_len, truncated, by_break) = self.read_checked_block(len)?;
        if by_break {
            let detail = format!("corrupt gzip data after {block_len} of {len} block bytes");
            return Ok(malformed(Some(record_type.unwrap_or_else(|| "unknown".into())), "bad_gzip", detail));
        }
        let Some(record_type) = record_type else {
            // WARC-Type is mandatory; what the block holds would be a guess.
            return Ok(malformed(
                None,
                "missing_warc_type",
                format!("no WARC-Type header (block of {block_len} bytes read past)"),
            ));
        };
        let extent = self.extent(ustart, offset, member_start, !truncated && block_len == len)?;
        let opt = |name: &str| header.field(name).map(str::to_string);
        Ok(ArchiveEvent::Record(RawRecord {
            offset,
            format: ArchiveFormat::Warc,
            record_type,
            record_id: opt("warc-record-id"),
            target_uri,
            date: opt("warc-date"),
            refers_to: opt("warc-refers-to").or_else(|| opt("warc-refers-to-target-uri")),
            payload_digest: opt("warc-payload-digest"),
            concurrent_to: header.all("warc-concurrent-to").map(str::to_string).collect(),
            content_type: opt("content-type"),
            warc_truncated: opt("warc-truncated"),
            too_large: (block.len() as u64) < block_len,
            block,
            block_len,
            truncated,
            extent,
        }))
    }
}

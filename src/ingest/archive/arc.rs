//! An ARC record (v1 or v2): its header line read with [`ArcLine`], then
//! its block.

use super::events::{ArchiveEvent, ArchiveFormat, RawRecord};
use super::header::{arc_date_to_iso, ArcLine, MAX_LINE};
use super::parser::Parser;
use std::io;

impl Parser {
    /// Reads the ARC record whose header line starts at uncompressed
    /// offset `ustart` (the stream is there, at a line [`ArcLine`] reads).
    pub(super) fn read_arc(&mut self, ustart: u64) -> io::Result<ArchiveEvent> {
        let (offset, member_start) = self.s.offset_of(ustart);
        let line = self.s.read_line(MAX_LINE)?;
        let Some(arc) = ArcLine::parse(&line, self.arc_version == 2) else {
            // The scan saw this line start a record: it cannot be otherwise.
            return Ok(ArchiveEvent::Malformed {
                offset,
                record_type: None,
                target_uri: None,
                reason: "malformed_record".into(),
                detail: "no ARC header line".into(),
            });
        };
        let date = arc_date_to_iso(&arc.date).or_else(|| Some(arc.date.clone()));
        let filedesc = arc.url.starts_with("filedesc:");
        let record_type = if filedesc { "filedesc" } else { "arc" }.to_string();
        let Ok(len) = arc.length.parse::<u64>() else {
            let skipped = self.skip_to_record_start_after_header()?;
            return Ok(ArchiveEvent::Malformed {
                offset,
                record_type: Some(record_type),
                target_uri: Some(arc.url),
                reason: "malformed_record".into(),
                detail: format!("invalid ARC record length {:?} (skipped {skipped} bytes)", arc.length),
            });
        };
        let (block, block_len, truncated, by_break) = self.read_checked_block(len)?;
        if by_break {
            return Ok(ArchiveEvent::Malformed {
                offset,
                record_type: Some(record_type),
                target_uri: Some(arc.url),
                reason: "bad_gzip".into(),
                detail: format!("corrupt gzip data after {block_len} of {len} block bytes"),
            });
        }
        if filedesc {
            // The second line of the file header names the ARC version.
            if block.starts_with(b"2 ") {
                self.arc_version = 2;
            }
        }
        let extent = self.extent(ustart, offset, member_start, !truncated && block_len == len)?;
        Ok(ArchiveEvent::Record(RawRecord {
            offset,
            format: ArchiveFormat::Arc,
            record_type,
            record_id: None,
            target_uri: Some(arc.url),
            date,
            refers_to: None,
            payload_digest: None,
            concurrent_to: Vec::new(),
            content_type: Some(arc.mime),
            warc_truncated: None,
            too_large: (block.len() as u64) < block_len,
            block,
            block_len,
            truncated,
            extent,
        }))
    }
}

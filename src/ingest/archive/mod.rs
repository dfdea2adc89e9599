//! Streaming reader of one WARC or ARC file.
//!
//! Reads WARC/1.0 and 1.1, the legacy WARC/0.17 and 0.18 drafts and ARC v1/v2
//! files, uncompressed, gzipped per record (Common Crawl style: one gzip member
//! per record) or gzipped as one whole file. The compression is detected by
//! the magic bytes, never by the file name. The reader yields one
//! [`ArchiveEvent`] per record, in file order, through a callback, so memory
//! stays bounded by one record block (capped at `max_block_bytes`) plus the
//! read buffers, whatever the size of the file.
//!
//! Real archives are often damaged, so the reader is forgiving and never
//! panics or loops forever (every loop consumes input):
//! - wrong `Content-Length` / ARC length: after a block the next bytes must
//!   start a record; if they do not and the block itself contains a record
//!   header at a line start, the block is cut there and reading resumes at
//!   that header; otherwise the unreadable bytes up to the next record header
//!   line are reported as one `malformed_record` event;
//! - a block cut short by the end of the file is returned with
//!   `truncated = true`;
//! - a corrupt gzip member is reported as `bad_gzip` and reading resumes at
//!   the next gzip member magic after it; a gzip stream cut short simply ends
//!   the data (the record in it is then `truncated`);
//! - LF-only or CR-CR-LF line ends, header continuation lines, `WARC-Date:
//!   null`, spaces in URIs and missing headers are accepted;
//! - LZ4, zstd, bzip2 and xz files are reported as one
//!   `unsupported_compression` event.
//!
//! This module does not interpret the block (HTTP, HTML, charsets): that is
//! [`super::record`]'s job, which is pure and can run in parallel.
//!
//! Its parts, each using only those before it: `events` (what the reader
//! yields), `gzip` (member recovery, [`StreamReader`]), [`header`] (a
//! record's header: where it ends and its fields, the one reader of
//! headers that ingest and the export share), `lines` (the line reader
//! with offsets), `parser` (record boundaries and extents), `warc` and
//! `arc` (a record of each kind); this file puts them together.

mod arc;
mod events;
mod gzip;
pub mod header;
mod lines;
mod parser;
mod warc;

pub use events::{ArchiveEvent, ArchiveFormat, ArchiveInfo, Cut, Extent, RawRecord};
pub use gzip::{member_size, StreamReader};
pub use header::arc_date_to_iso;

use super::source::{ReadSeek, Source as Input};
use gzip::{unsupported_compression, GzSource, RawReader, Source, GZIP_MAGIC};
use lines::Stream;
use parser::Parser;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

/// Reads one archive file and calls `sink` once per record or malformed
/// region, in file order. `max_block_bytes` caps the block kept in memory per
/// record (the rest is read and discarded, and the record is flagged
/// `too_large`). Returns `Err` only when the file cannot be opened or read at
/// all (I/O error); damaged content is reported through `Malformed` events.
pub fn scan_archive(path: &Path, max_block_bytes: u64, sink: &mut dyn FnMut(ArchiveEvent)) -> io::Result<ArchiveInfo> {
    scan_archive_source(&Input::File(path.to_path_buf()), max_block_bytes, sink)
}

/// [`scan_archive`] for a file or an object in a store.
pub fn scan_archive_source(
    source: &Input,
    max_block_bytes: u64,
    sink: &mut dyn FnMut(ArchiveEvent),
) -> io::Result<ArchiveInfo> {
    scan_reader(source.open()?, source.size()?, max_block_bytes, sink)
}

/// [`scan_archive_source`] over the bytes `range` of a file only, as if they
/// were a file of their own (offsets count from `range.start`): for a reader
/// that knows where some records are, from a scan before, and reads only
/// the bytes between them (the export, which knows every document's gzip
/// member). `range` must start where a record or a gzip member starts.
pub fn scan_archive_range(
    source: &Input,
    range: std::ops::Range<u64>,
    max_block_bytes: u64,
    sink: &mut dyn FnMut(ArchiveEvent),
) -> io::Result<ArchiveInfo> {
    let mut file = source.open()?;
    file.seek(SeekFrom::Start(range.start))?;
    let len = range.end.saturating_sub(range.start);
    scan_reader(Box::new(Window { inner: file, start: range.start, len, pos: 0 }), len, max_block_bytes, sink)
}

/// The bytes `[start, start + len)` of a reader, as a reader of their own.
struct Window {
    inner: Box<dyn ReadSeek>,
    start: u64,
    len: u64,
    /// Position inside the window.
    pos: u64,
}

impl Read for Window {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let room = usize::try_from(self.len.saturating_sub(self.pos)).unwrap_or(usize::MAX).min(out.len());
        let n = self.inner.read(&mut out[..room])?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for Window {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
        }
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start of the window"))?;
        self.inner.seek(SeekFrom::Start(self.start + target))?;
        self.pos = target;
        Ok(target)
    }
}

/// The scan of a reader of `file_len` bytes (see [`scan_archive_source`]).
fn scan_reader(
    file: Box<dyn ReadSeek>,
    file_len: u64,
    max_block_bytes: u64,
    sink: &mut dyn FnMut(ArchiveEvent),
) -> io::Result<ArchiveInfo> {
    let mut raw = RawReader::new(file);
    let head = raw.peek(6)?.to_vec();
    if let Some(name) = unsupported_compression(&head) {
        sink(ArchiveEvent::Malformed {
            offset: 0,
            record_type: None,
            target_uri: None,
            reason: "unsupported_compression".into(),
            detail: format!("{name} compressed archives are not supported"),
        });
        return Ok(ArchiveInfo {
            format: "unknown".into(),
            compression: name.into(),
            bytes: file_len,
            uncompressed_bytes: 0,
            cut: None,
        });
    }
    let gzip = head.starts_with(&GZIP_MAGIC);
    let source = if gzip { Source::Gzip(GzSource::new(raw)) } else { Source::Plain(raw) };
    let mut parser = Parser::new(Stream::new(source), usize::try_from(max_block_bytes).unwrap_or(usize::MAX));
    // Events counted, and the first the end of the data cut, for the cut's
    // place in the file.
    let (mut events, mut cut) = (0u64, None);
    parser.run(&mut |event| {
        if let (None, Some(offset)) = (cut, cut_at(&event)) {
            cut = Some(Cut { offset, records_before: events });
        }
        events += 1;
        sink(event);
    })?;
    // A gzip member cut after its last record's data: nothing is missing
    // but the member's end, and the file is cut all the same.
    if let (None, Source::Gzip(g)) = (cut, &parser.s.src) {
        cut = g.cut_member.map(|offset| Cut { offset, records_before: events });
    }
    let compression = match &parser.s.src {
        Source::Plain(_) => "none",
        Source::Gzip(g) if g.members > 1 => "gzip_per_record",
        Source::Gzip(_) => "gzip_whole_file",
    };
    Ok(ArchiveInfo {
        format: parser.format_name.unwrap_or_else(|| "unknown".into()),
        compression: compression.into(),
        bytes: parser.s.src.raw_pos(),
        uncompressed_bytes: parser.s.produced,
        cut,
    })
}

/// Where `event` starts when the end of the data cut it: a record whose
/// block is shorter than its declared length, or a header the data ended
/// inside.
fn cut_at(event: &ArchiveEvent) -> Option<u64> {
    match event {
        ArchiveEvent::Record(r) if r.truncated => Some(r.offset),
        ArchiveEvent::Malformed { offset, reason, .. } if reason == "truncated" => Some(*offset),
        _ => None,
    }
}

#[cfg(test)]
mod tests;

//! Record boundaries: the loop that finds each record's header line in
//! the stream, checks that a block ends where the next record starts
//! (cutting a block at a record header inside it, skipping bytes that
//! start no record), and measures each record's [`Extent`]. Reading a
//! record's header and fields is [`super::warc`]'s and [`super::arc`]'s.

use super::events::{ArchiveEvent, Extent};
use super::gzip::{is_blank, CHUNK};
use super::header::{arc_fields, is_warc_start, trim_eol, MAX_LINE};
use super::lines::Stream;
use std::io;

/// Which kind of record headers the file contains (decided by the first one).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Warc,
    Arc,
}

/// Is this line the start of a record in the file's mode (either kind while
/// the mode is not known yet)?
fn is_record_start(mode: Option<Mode>, line: &[u8]) -> bool {
    match mode {
        Some(Mode::Warc) => is_warc_start(line),
        Some(Mode::Arc) => arc_fields(line).is_some(),
        None => is_warc_start(line) || arc_fields(line).is_some(),
    }
}

/// The record reader state over one stream.
pub(super) struct Parser {
    /// The decompressed data.
    pub(super) s: Stream,
    /// The most block bytes kept per record.
    pub(super) max_block: usize,
    /// WARC or ARC, once the first record said which.
    mode: Option<Mode>,
    /// ARC version from the `filedesc://` header (1 unless it says 2).
    pub(super) arc_version: u8,
    /// The format of the first record (see [`super::ArchiveInfo::format`]).
    pub(super) format_name: Option<String>,
}

/// A malformed event without record type or URI.
fn malformed(offset: u64, reason: &str, detail: String) -> ArchiveEvent {
    ArchiveEvent::Malformed { offset, record_type: None, target_uri: None, reason: reason.into(), detail }
}

impl Parser {
    /// A parser at the start of `s`, keeping at most `max_block` bytes of a block.
    pub(super) fn new(s: Stream, max_block: usize) -> Parser {
        Parser { s, max_block, mode: None, arc_version: 1, format_name: None }
    }

    pub(super) fn run(&mut self, sink: &mut dyn FnMut(ArchiveEvent)) -> io::Result<()> {
        loop {
            self.s.skip_blank()?;
            if let Some((offset, detail)) = self.s.take_break() {
                sink(malformed(offset, "bad_gzip", detail));
                continue;
            }
            if self.s.ensure(1)? == 0 {
                return Ok(());
            }
            let ustart = self.s.upos;
            let line = self.s.peek_line(MAX_LINE)?.to_vec();
            if self.mode != Some(Mode::Arc) && is_warc_start(&line) {
                self.mode = Some(Mode::Warc);
                if self.format_name.is_none() {
                    self.format_name = Some(String::from_utf8_lossy(trim_eol(&line)).into_owned());
                }
                let ev = self.read_warc(ustart)?;
                sink(ev);
            } else if self.mode != Some(Mode::Warc) && arc_fields(&line).is_some() {
                self.mode = Some(Mode::Arc);
                let ev = self.read_arc(ustart)?;
                if self.format_name.is_none() {
                    self.format_name = Some(format!("ARC/{}", self.arc_version));
                }
                sink(ev);
            } else {
                let (offset, _) = self.s.offset_of(ustart);
                let skipped = self.skip_to_record_start()?;
                sink(malformed(offset, "malformed_record", format!("{skipped} bytes that do not start a record")));
            }
        }
    }

    /// Skips bytes up to the next line that starts a record (or the end of
    /// the data); returns how many bytes were skipped. Always skips at least
    /// the current line.
    pub(super) fn skip_to_record_start(&mut self) -> io::Result<u64> {
        let mut skipped = 0u64;
        let mut first = true;
        loop {
            let line = self.s.peek_line(MAX_LINE)?;
            if line.is_empty() {
                return Ok(skipped);
            }
            let complete = line.last() == Some(&b'\n');
            if !first && is_record_start(self.mode, line) {
                return Ok(skipped);
            }
            let n = line.len();
            self.s.consume(n);
            skipped += n as u64;
            // Inside an overlong line, the next chunk is not a line start.
            first = !complete;
        }
    }

    /// Finds a record header at a line start inside `block` (not at 0).
    fn embedded_record_start(&self, block: &[u8]) -> Option<usize> {
        let mut i = 0;
        while let Some(nl) = block[i..].iter().position(|b| *b == b'\n') {
            let start = i + nl + 1;
            if start >= block.len() {
                return None;
            }
            let end = block[start..].iter().position(|b| *b == b'\n').map_or(block.len(), |e| start + e + 1);
            if is_record_start(self.mode, &block[start..end]) {
                return Some(start);
            }
            i = start;
        }
        None
    }

    /// Whether the data after the blank bytes `from` bytes ahead starts a
    /// record (or ends), without consuming anything.
    fn next_is_record_start(&mut self, from: usize) -> io::Result<bool> {
        let mut k = from;
        loop {
            let have = self.s.ensure(k + 1)?;
            if have <= k || !is_blank(self.s.avail()[k]) {
                break;
            }
            k += 1;
            if k - from >= MAX_LINE {
                // Unreasonably many blank bytes: not a clean record boundary.
                return Ok(false);
            }
        }
        let mode = self.mode;
        let line = self.s.peek_line_at(k, MAX_LINE)?;
        Ok(line.is_empty() || is_record_start(mode, line))
    }

    /// Reads a block of `len` bytes and checks what follows it. Returns the
    /// block, the bytes of it present in the file, whether it is incomplete,
    /// and whether a gzip break cut it.
    ///
    /// A block within `max_block` (or cut short by the end of the data
    /// within it) is checked in the stream's buffer before it is consumed,
    /// so a block cut at an embedded record header costs only the bytes up
    /// to that header. (Reading the whole declared block and pushing the
    /// rest back made a file of headers with lying lengths cost quadratic
    /// time and memory, found by fuzzing: gigabytes for a 1 MB file.)
    pub(super) fn read_checked_block(&mut self, len: u64) -> io::Result<(Vec<u8>, u64, bool, bool)> {
        let want = usize::try_from(len).map_or(self.max_block, |l| l.min(self.max_block));
        let have = self.s.ensure(want)?.min(want);
        if have == want && (have as u64) < len {
            // Larger than the cap and the data goes on: read it past.
            let mut block = Vec::with_capacity(want.min(CHUNK * 16));
            let got = self.s.read_block(len, self.max_block, &mut block)?;
            let complete = got == len;
            return Ok((block, got, !complete, !complete && self.s.brk.is_some()));
        }
        let complete = have as u64 == len;
        let next_ok = complete && self.next_is_record_start(have)?;
        if !next_ok {
            if let Some(p) = self.embedded_record_start(&self.s.avail()[..have]) {
                let block = self.s.avail()[..p].to_vec();
                self.s.consume(p);
                return Ok((block, p as u64, false, false));
            }
        }
        let block = self.s.avail()[..have].to_vec();
        self.s.consume(have);
        Ok((block, have as u64, !complete, !complete && self.s.brk.is_some()))
    }

    /// The [`Extent`] of the record that started at uncompressed offset
    /// `ustart` (reported at `offset`) and whose block was just read: the
    /// blank bytes after the block (its trailing line ends) are consumed as
    /// part of it. A record that starts a gzip member and ends where that
    /// member ends is measured in the file; one cut short by the end of a
    /// gzip stream runs to the end of the file.
    pub(super) fn extent(&mut self, ustart: u64, offset: u64, member_start: bool, intact: bool) -> io::Result<Extent> {
        let block_end = self.s.upos;
        self.s.skip_blank()?;
        let end = self.s.upos;
        // Bytes after the block that start no record: the block is longer
        // than its header says.
        let intact = intact && self.next_is_record_start(0)?;
        let mut extent =
            Extent { length: None, own_member: false, stream_offset: ustart, stream_length: end - ustart, intact };
        if !member_start {
            extent.length = Some(end - ustart);
        } else if let Some(member_end) = self.s.member_end_between(block_end, end) {
            extent.length = Some(member_end - offset);
            extent.own_member = true;
        } else if offset == ustart {
            // The first record of a file: the same offset in both.
            extent.length = Some(end - ustart);
        } else if self.s.ensure(1)? == 0 && self.s.eof {
            extent.length = Some(self.s.src.raw_pos().saturating_sub(offset));
        }
        Ok(extent)
    }

    /// After a header without usable length: skip to the next record start
    /// (the current position is at a line start, so a header there counts).
    pub(super) fn skip_to_record_start_after_header(&mut self) -> io::Result<u64> {
        let line = self.s.peek_line(MAX_LINE)?.to_vec();
        if line.is_empty() || is_record_start(self.mode, &line) {
            return Ok(0);
        }
        self.skip_to_record_start()
    }
}

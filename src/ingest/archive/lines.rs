//! The line reader: the decompressed bytes of an archive with look-ahead,
//! lines, blocks and the offsets of every byte, both in the decompressed
//! stream and (where a gzip member starts) in the file.

use super::gzip::{is_blank, read_retry, Produced, Source, CHUNK};
use super::header::{HeaderLines, MAX_LINE};
use std::io;

/// The uncompressed byte stream with look-ahead, push-back and offsets.
pub(super) struct Stream {
    pub(super) src: Source,
    buf: Vec<u8>,
    pos: usize,
    /// Uncompressed offset of `buf[pos]`.
    pub(super) upos: u64,
    /// Uncompressed bytes produced by the source so far (offset of `buf` end).
    pub(super) produced: u64,
    pub(super) eof: bool,
    /// A pending gzip break: no data is returned until it is taken.
    pub(super) brk: Option<(u64, String)>,
    /// Gzip member starts not yet passed: (uncompressed start, compressed start).
    members: Vec<(u64, u64)>,
    /// Gzip member ends not yet passed: (uncompressed end, compressed end).
    member_ends: Vec<(u64, u64)>,
    /// What the source is read into (zeroed once, not per read: a read
    /// that ends at a gzip break produces nothing, and a file can hold a
    /// break every few bytes).
    chunk: Vec<u8>,
}

impl Stream {
    pub(super) fn new(src: Source) -> Stream {
        Stream {
            src,
            buf: Vec::new(),
            pos: 0,
            upos: 0,
            produced: 0,
            eof: false,
            brk: None,
            members: Vec::new(),
            member_ends: Vec::new(),
            chunk: vec![0; CHUNK],
        }
    }

    pub(super) fn avail(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    /// Makes at least `n` bytes available if the data allows; returns how
    /// many are available (fewer than `n` at end of data or at a gzip break).
    pub(super) fn ensure(&mut self, n: usize) -> io::Result<usize> {
        while self.buf.len() - self.pos < n && !self.eof && self.brk.is_none() {
            if self.pos > 0 && self.pos == self.buf.len() {
                self.buf.clear();
                self.pos = 0;
            } else if self.pos >= CHUNK && self.pos >= self.buf.len() - self.pos {
                // Moves no more bytes than were consumed since the last move.
                self.buf.drain(..self.pos);
                self.pos = 0;
            }
            let produced = match &mut self.src {
                Source::Plain(r) => match read_retry(r, &mut self.chunk)? {
                    0 => Produced::Eof,
                    k => Produced::Data(k),
                },
                Source::Gzip(g) => {
                    let p = g.read(&mut self.chunk)?;
                    // Both before the data this read produced, which is the new member's.
                    if let Some(c) = g.member_end.take() {
                        self.member_ends.push((self.produced, c));
                    }
                    if let Some(c) = g.new_member.take() {
                        self.members.push((self.produced, c));
                    }
                    p
                }
            };
            match produced {
                Produced::Data(k) => {
                    self.buf.extend_from_slice(&self.chunk[..k]);
                    self.produced += k as u64;
                }
                Produced::Eof => self.eof = true,
                Produced::Break { offset, detail } => self.brk = Some((offset, detail)),
            }
        }
        Ok(self.buf.len() - self.pos)
    }

    pub(super) fn consume(&mut self, n: usize) {
        let n = n.min(self.buf.len() - self.pos);
        self.pos += n;
        self.upos += n as u64;
    }

    /// Takes a pending gzip break once all data before it was consumed.
    pub(super) fn take_break(&mut self) -> Option<(u64, String)> {
        if self.pos == self.buf.len() {
            self.brk.take()
        } else {
            None
        }
    }

    /// Skips blank bytes (CR, LF, space, tab, NUL) between records.
    pub(super) fn skip_blank(&mut self) -> io::Result<()> {
        loop {
            if self.ensure(1)? == 0 {
                return Ok(());
            }
            let n = self.avail().iter().take_while(|b| is_blank(**b)).count();
            self.consume(n);
            if n == 0 {
                return Ok(());
            }
        }
    }

    /// Returns the line starting `skip` bytes ahead without consuming it (up
    /// to and including its LF, at most `max` bytes).
    pub(super) fn peek_line_at(&mut self, skip: usize, max: usize) -> io::Result<&[u8]> {
        let mut want = 256.min(max);
        loop {
            let got = self.ensure(skip + want)?.saturating_sub(skip);
            let start = self.pos + skip;
            let limit = got.min(max);
            if let Some(i) = self.buf[start..start + limit].iter().position(|b| *b == b'\n') {
                return Ok(&self.buf[start..start + i + 1]);
            }
            if got < want || got >= max {
                return Ok(&self.buf[start..start + limit]);
            }
            want = (want * 4).min(max);
        }
    }

    /// Returns the next line without consuming it.
    pub(super) fn peek_line(&mut self, max: usize) -> io::Result<&[u8]> {
        self.peek_line_at(0, max)
    }

    /// Reads the next line (with its LF); keeps at most `max` bytes of it and
    /// skips the rest of an overlong line. Empty only at end of data.
    pub(super) fn read_line(&mut self, max: usize) -> io::Result<Vec<u8>> {
        let line = self.peek_line(max)?.to_vec();
        self.consume(line.len());
        if line.len() == max && line.last() != Some(&b'\n') {
            loop {
                let got = self.ensure(1)?;
                if got == 0 {
                    break;
                }
                match self.avail().iter().position(|b| *b == b'\n') {
                    Some(i) => {
                        self.consume(i + 1);
                        break;
                    }
                    None => self.consume(got),
                }
            }
        }
        Ok(line)
    }

    /// Reads `len` bytes, appending at most `keep` of them to `out` and
    /// discarding the rest; returns how many were read (less than `len` at
    /// end of data or at a gzip break).
    pub(super) fn read_block(&mut self, len: u64, keep: usize, out: &mut Vec<u8>) -> io::Result<u64> {
        let mut done = 0u64;
        while done < len {
            let got = self.ensure(1)?;
            if got == 0 {
                break;
            }
            let n = (got as u64).min(len - done) as usize;
            let room = keep.saturating_sub(out.len()).min(n);
            out.extend_from_slice(&self.buf[self.pos..self.pos + room]);
            self.consume(n);
            done += n as u64;
        }
        Ok(done)
    }

    /// The offset to report for a record starting at uncompressed offset
    /// `ustart` (see [`RawRecord::offset`]) and whether a gzip member starts
    /// there; forgets older member starts.
    pub(super) fn offset_of(&mut self, ustart: u64) -> (u64, bool) {
        self.members.retain(|m| m.0 >= ustart);
        self.member_ends.retain(|m| m.0 >= ustart);
        // The last member starting here: earlier ones produced no data.
        match self.members.iter().rev().find(|m| m.0 == ustart) {
            Some(&(_, c)) => (c, true),
            None => (ustart, false),
        }
    }

    /// The compressed end of the first gzip member that ends between
    /// uncompressed offsets `from` and `to` (both included); forgets the
    /// member ends before `from`.
    pub(super) fn member_end_between(&mut self, from: u64, to: u64) -> Option<u64> {
        self.member_ends.retain(|m| m.0 >= from);
        self.member_ends.iter().find(|m| m.0 <= to).map(|m| m.1)
    }
}

/// Header lines as ingest reads them: at most [`MAX_LINE`] bytes kept of
/// each.
impl HeaderLines for Stream {
    fn next_line(&mut self) -> io::Result<Vec<u8>> {
        self.read_line(MAX_LINE)
    }
}

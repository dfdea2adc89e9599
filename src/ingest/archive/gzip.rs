//! Gzip member recovery: the decompressed bytes of an archive, member by
//! member, with the compressed offset where each member starts and ends,
//! and corrupt members or bytes that are no gzip data skipped up to the
//! next member (see the module doc of [`super`]). Also tells the
//! compressions the reader cannot decode.

use crate::ingest::source::{ReadSeek, Source as Input};
use flate2::bufread::GzDecoder;
use std::io::{self, BufRead, Read, Seek, SeekFrom};

/// The decompressed bytes of an archive exactly as [`super::scan_archive_source`]
/// counts them: gzip members one after the other, corrupt members and
/// bytes between members that are no gzip data skipped as the scanner
/// skips them, so that [`super::Extent::stream_offset`] and
/// [`super::Extent::stream_length`] cut a record out of it. An uncompressed file
/// is read as it is. (`flate2`'s multi-member decoder stops at the first
/// corrupt member, where the scanner goes on.)
pub struct StreamReader {
    src: Source,
    /// Decompressed bytes read ahead: the source is read in chunks of
    /// [`CHUNK`] bytes, as the scanner reads it, because where a corrupt
    /// member breaks off depends on the size of the reads.
    chunk: Vec<u8>,
    start: usize,
    end: usize,
}

impl StreamReader {
    /// Opens the decompressed stream of `source`; the compression is told
    /// by the magic bytes, as the scanner tells it.
    pub fn open(source: &Input) -> io::Result<StreamReader> {
        let mut raw = RawReader::new(source.open()?);
        let gzip = raw.peek(2)?.starts_with(&GZIP_MAGIC);
        let src = if gzip { Source::Gzip(GzSource::new(raw)) } else { Source::Plain(raw) };
        Ok(StreamReader { src, chunk: vec![0; CHUNK], start: 0, end: 0 })
    }
}

impl Read for StreamReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.start == self.end {
            let produced = match &mut self.src {
                Source::Plain(r) => return read_retry(r, out),
                Source::Gzip(g) => g.read(&mut self.chunk)?,
            };
            match produced {
                Produced::Data(n) => (self.start, self.end) = (0, n),
                Produced::Eof => return Ok(0),
                Produced::Break { .. } => {}
            }
        }
        let n = out.len().min(self.end - self.start);
        out[..n].copy_from_slice(&self.chunk[self.start..self.start + n]);
        self.start += n;
        Ok(n)
    }
}

/// The first bytes of a gzip member.
pub(super) const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// The first bytes of a gzip member compressed with deflate (the only
/// method gzip has).
const DEFLATE_MEMBER: [u8; 3] = [0x1f, 0x8b, 0x08];
/// Read size of the raw file and of decompressed chunks.
pub(super) const CHUNK: usize = 64 << 10;

/// Names the compression of a file whose first bytes are `head`, when it is
/// one this reader cannot decode.
pub(super) fn unsupported_compression(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(&[0x04, 0x22, 0x4d, 0x18]) {
        Some("lz4")
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Some("zstd")
    } else if head.starts_with(b"BZh") {
        Some("bzip2")
    } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        Some("xz")
    } else {
        None
    }
}

/// A buffered reader of the raw file that can peek a few bytes ahead across
/// buffer refills (to recognize gzip magic) and knows its file position.
pub(super) struct RawReader {
    file: Box<dyn ReadSeek>,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// File offset of `buf[start]`.
    pub(super) pos: u64,
}

impl RawReader {
    pub(super) fn new(file: Box<dyn ReadSeek>) -> RawReader {
        RawReader { file, buf: vec![0; CHUNK], start: 0, end: 0, pos: 0 }
    }

    /// Returns up to `n` buffered bytes, reading more if fewer are buffered;
    /// fewer than `n` only at the end of the file.
    pub(super) fn peek(&mut self, n: usize) -> io::Result<&[u8]> {
        if self.end - self.start < n {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.buf.len() < n {
                self.buf.resize(n, 0);
            }
            while self.end < n {
                let got = read_retry(&mut self.file, &mut self.buf[self.end..])?;
                if got == 0 {
                    break;
                }
                self.end += got;
            }
        }
        Ok(&self.buf[self.start..self.end.min(self.start + n)])
    }

    /// Moves to absolute file offset `pos`: within the buffer when it holds
    /// that offset (`buf[..start]` still holds the bytes before `self.pos`),
    /// else by seeking the file and dropping the buffer. Resynchronizing
    /// after a corrupt gzip member moves back a few bytes; refilling the
    /// whole buffer for that made a file of gzip magic bytes cost a buffer
    /// read per three bytes.
    fn seek_to(&mut self, pos: u64) -> io::Result<()> {
        let buffered_from = self.pos - self.start as u64;
        let buffered_to = self.pos + (self.end - self.start) as u64;
        if (buffered_from..=buffered_to).contains(&pos) {
            self.start = (pos - buffered_from) as usize;
            self.pos = pos;
            return Ok(());
        }
        self.file.seek(SeekFrom::Start(pos))?;
        self.start = 0;
        self.end = 0;
        self.pos = pos;
        Ok(())
    }

    /// The bytes to search for gzip magic: those buffered, when at least
    /// three, else up to [`CHUNK`] bytes read ahead. (Refilling the buffer
    /// on every call cost a buffer move and read per corrupt member, and a
    /// file can hold one every three bytes.)
    fn search_window(&mut self) -> io::Result<&[u8]> {
        if self.end - self.start >= 3 {
            Ok(&self.buf[self.start..self.end])
        } else {
            self.peek(CHUNK)
        }
    }

    /// Skips forward to the next gzip member magic (`1f 8b 08`) or to the end
    /// of the file.
    fn skip_to_gzip_magic(&mut self) -> io::Result<()> {
        loop {
            let window = self.search_window()?;
            if window.len() < 3 {
                let n = window.len();
                self.consume(n);
                return Ok(());
            }
            match window.windows(3).position(|w| w == DEFLATE_MEMBER) {
                Some(i) => {
                    self.consume(i);
                    return Ok(());
                }
                None => {
                    // Keep the last two bytes: the magic may straddle windows.
                    let n = window.len() - 2;
                    self.consume(n);
                }
            }
        }
    }
}

impl Read for RawReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let avail = self.fill_buf()?;
        let n = avail.len().min(out.len());
        out[..n].copy_from_slice(&avail[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for RawReader {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.start == self.end {
            self.start = 0;
            self.end = read_retry(&mut self.file, &mut self.buf)?;
        }
        Ok(&self.buf[self.start..self.end])
    }

    fn consume(&mut self, n: usize) {
        let n = n.min(self.end - self.start);
        self.start += n;
        self.pos += n as u64;
    }
}

/// `read` that retries on `Interrupted`.
pub(super) fn read_retry(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match r.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// What one read from a [`Source`] produced.
pub(super) enum Produced {
    Data(usize),
    Eof,
    /// The gzip stream is corrupt at compressed offset `offset`; data after
    /// this point comes from the next readable member.
    Break {
        offset: u64,
        detail: String,
    },
}

/// Longest gzip header extra field, file name and comment taken as a member.
const MAX_GZIP_HEADER_FIELD: usize = 1024;

/// Whether the gzip member header at the reader's position can be one:
/// deflate, no reserved flags, an extra field, file name and comment of at
/// most [`MAX_GZIP_HEADER_FIELD`] bytes. Header bytes cut by the end of the
/// file count as plausible (the decoder then reports the cut). Checked
/// before a decoder is made, because flate2 reads a file name or comment
/// up to 64 KB looking for its end: a file of gzip magic bytes (found by
/// fuzzing) cost that per three bytes, minutes per megabyte.
fn plausible_gzip_header(raw: &mut RawReader) -> io::Result<bool> {
    let h = raw.peek(10)?;
    if h.len() < 10 {
        return Ok(true);
    }
    let flags = h[3];
    if h[2] != 8 || flags & 0xe0 != 0 {
        return Ok(false);
    }
    let mut at = 10;
    if flags & 0x04 != 0 {
        let x = raw.peek(at + 2)?;
        if x.len() < at + 2 {
            return Ok(true);
        }
        let xlen = usize::from(u16::from_le_bytes([x[at], x[at + 1]]));
        if xlen > MAX_GZIP_HEADER_FIELD {
            return Ok(false);
        }
        at += 2 + xlen;
    }
    // FNAME, then FCOMMENT: zero-terminated.
    for flag in [0x08, 0x10] {
        if flags & flag != 0 {
            let w = raw.peek(at + MAX_GZIP_HEADER_FIELD)?;
            match w.get(at..).and_then(|f| f.iter().position(|b| *b == 0)) {
                Some(i) => at += i + 1,
                None if w.len() < at + MAX_GZIP_HEADER_FIELD => return Ok(true),
                None => return Ok(false),
            }
        }
    }
    Ok(true)
}

/// Gzip state: between members (holding the raw reader) or inside one.
enum GzState {
    Between(RawReader),
    Member(Box<GzDecoder<RawReader>>, u64),
    /// Only while switching states; never observed from outside.
    Gone,
}

/// A multi-member gzip stream decoded member by member, so that the
/// compressed start of every member is known and a corrupt member can be
/// skipped.
pub(super) struct GzSource {
    state: GzState,
    /// Gzip members met so far (corrupt ones too).
    pub(super) members: u64,
    /// Members started but not yet claimed by the stream: (compressed start).
    pub(super) new_member: Option<u64>,
    /// The compressed end of the member that just ended, not yet claimed
    /// by the stream.
    pub(super) member_end: Option<u64>,
    /// The compressed start of the member the end of the file cut short.
    pub(super) cut_member: Option<u64>,
}

impl GzSource {
    pub(super) fn new(raw: RawReader) -> GzSource {
        GzSource { state: GzState::Between(raw), members: 0, new_member: None, member_end: None, cut_member: None }
    }

    pub(super) fn read(&mut self, out: &mut [u8]) -> io::Result<Produced> {
        loop {
            match std::mem::replace(&mut self.state, GzState::Gone) {
                GzState::Between(mut raw) => {
                    let head = raw.peek(3)?;
                    if head.is_empty() {
                        self.state = GzState::Between(raw);
                        return Ok(Produced::Eof);
                    }
                    if head.starts_with(&GZIP_MAGIC) {
                        let cstart = raw.pos;
                        self.members += 1;
                        if !plausible_gzip_header(&mut raw)? {
                            raw.consume(1);
                            raw.skip_to_gzip_magic()?;
                            self.state = GzState::Between(raw);
                            let detail = "corrupt gzip member: invalid gzip header".to_string();
                            return Ok(Produced::Break { offset: cstart, detail });
                        }
                        self.new_member = Some(cstart);
                        self.state = GzState::Member(Box::new(GzDecoder::new(raw)), cstart);
                        continue;
                    }
                    // Not a member: trailing padding or garbage.
                    let offset = raw.pos;
                    let mut all_padding = true;
                    let mut skipped = 0u64;
                    loop {
                        let window = raw.search_window()?;
                        if window.is_empty() {
                            break;
                        }
                        if let Some(i) = window.windows(3).position(|w| w == DEFLATE_MEMBER) {
                            all_padding &= window[..i].iter().all(|b| is_blank(*b));
                            skipped += i as u64;
                            raw.consume(i);
                            break;
                        }
                        let n = if window.len() >= 3 { window.len() - 2 } else { window.len() };
                        all_padding &= window[..n].iter().all(|b| is_blank(*b));
                        skipped += n as u64;
                        raw.consume(n);
                    }
                    self.state = GzState::Between(raw);
                    if !all_padding {
                        return Ok(Produced::Break {
                            offset,
                            detail: format!("{skipped} bytes that are not gzip data"),
                        });
                    }
                }
                GzState::Member(mut dec, cstart) => match dec.read(out) {
                    Ok(0) => {
                        // The decoder has read the member's trailer and nothing after it.
                        let raw = dec.into_inner();
                        self.member_end = Some(raw.pos);
                        self.state = GzState::Between(raw);
                    }
                    Ok(n) => {
                        self.state = GzState::Member(dec, cstart);
                        return Ok(Produced::Data(n));
                    }
                    Err(e) => {
                        let mut raw = dec.into_inner();
                        if raw.peek(1)?.is_empty() {
                            // The gzip stream was cut short: the data simply ends.
                            self.cut_member = Some(cstart);
                            self.state = GzState::Between(raw);
                            return Ok(Produced::Eof);
                        }
                        raw.seek_to(cstart + 1)?;
                        raw.skip_to_gzip_magic()?;
                        self.state = GzState::Between(raw);
                        return Ok(Produced::Break { offset: cstart, detail: format!("corrupt gzip member: {e}") });
                    }
                },
                GzState::Gone => return Ok(Produced::Eof),
            }
        }
    }
}

/// The raw byte source: plain file or gzip.
pub(super) enum Source {
    Plain(RawReader),
    Gzip(GzSource),
}

impl Source {
    /// Compressed bytes consumed so far.
    pub(super) fn raw_pos(&self) -> u64 {
        match self {
            Source::Plain(r) => r.pos,
            Source::Gzip(g) => match &g.state {
                GzState::Between(r) => r.pos,
                GzState::Member(d, _) => d.get_ref().pos,
                GzState::Gone => 0,
            },
        }
    }
}

/// Blank bytes: what writers leave between records and between gzip
/// members (CR, LF, space, tab, NUL).
pub(super) fn is_blank(b: u8) -> bool {
    matches!(b, b'\r' | b'\n' | b' ' | b'\t' | 0)
}

/// The uncompressed size (modulo 2^32) that the trailer of the gzip member
/// `[offset, offset + length)` of `file` gives, when those bytes look like
/// one member: a member's magic at `offset`, and another's (or the end of
/// the file) at `offset + length`. For a reader that knows where a record's
/// member is (the export) and reads only its start.
pub fn member_size(file: &mut dyn ReadSeek, offset: u64, length: u64) -> io::Result<Option<u32>> {
    // The smallest member: a 10-byte header, an empty deflate block, the trailer.
    if length < 18 {
        return Ok(None);
    }
    let mut end = [0u8; 7];
    file.seek(SeekFrom::Start(offset + length - 4))?;
    let got = read_full(file, &mut end)?;
    if got < 4 || (got > 4 && !(got == 7 && end[4..] == DEFLATE_MEMBER[..])) {
        return Ok(None);
    }
    file.seek(SeekFrom::Start(offset))?;
    let mut magic = [0u8; 3];
    if read_full(file, &mut magic)? < 3 || magic != DEFLATE_MEMBER {
        return Ok(None);
    }
    Ok(Some(u32::from_le_bytes([end[0], end[1], end[2], end[3]])))
}

/// Reads until `buf` is full or the data ends; returns how many bytes.
fn read_full(mut r: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match read_retry(&mut r, &mut buf[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

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

use super::source::{ReadSeek, Source as Input};
use flate2::bufread::GzDecoder;
use std::io::{self, BufRead, Read, Seek, SeekFrom};
use std::path::Path;

/// The container format of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveFormat {
    /// A WARC record (any version: 0.17, 0.18, 1.0, 1.1).
    Warc,
    /// An ARC record (v1 or v2), including the `filedesc://` header record.
    Arc,
}

/// One record as stored in the archive, before any interpretation of its
/// block. Built by [`scan_archive`], consumed by [`super::record::process_record`].
#[derive(Debug, Clone, PartialEq)]
pub struct RawRecord {
    /// Where the record starts: the compressed offset of its gzip member when
    /// the record starts a member (per-record gzip, and the first record of a
    /// whole-file gzip), otherwise the offset in the uncompressed stream
    /// (uncompressed files, later records of a whole-file gzip).
    pub offset: u64,
    /// WARC or ARC.
    pub format: ArchiveFormat,
    /// The WARC-Type (`response`, `resource`, `revisit`, `request`,
    /// `warcinfo`, `metadata`, `conversion`, ...; a record without one is a
    /// `missing_warc_type` [`ArchiveEvent::Malformed`] instead), or
    /// `arc` for an ARC record and `filedesc` for the ARC file header record.
    pub record_type: String,
    /// WARC-Record-ID as written (with its angle brackets); `None` for ARC.
    pub record_id: Option<String>,
    /// WARC-Target-URI (angle brackets removed) or the ARC URL; may contain spaces.
    pub target_uri: Option<String>,
    /// WARC-Date as written, or the ARC date converted to ISO 8601
    /// (`2008-04-30T20:48:25Z`); not validated here (may be `null`).
    pub date: Option<String>,
    /// WARC-Refers-To, or WARC-Refers-To-Target-URI when the former is missing.
    pub refers_to: Option<String>,
    /// WARC-Payload-Digest.
    pub payload_digest: Option<String>,
    /// Every WARC-Concurrent-To (record ids with their angle brackets): the
    /// records of the same capture (a response and its request, metadata),
    /// which an export keeps or leaves out together.
    pub concurrent_to: Vec<String>,
    /// Content-Type of the block (e.g. `application/http; msgtype=response`);
    /// for ARC the MIME type of the header line (the type of the HTTP payload).
    pub content_type: Option<String>,
    /// The value of a WARC-Truncated header: the crawler cut the payload
    /// (`length`, `time`, `disconnect`, ...).
    pub warc_truncated: Option<String>,
    /// The block (at most `max_block_bytes` of it, see `too_large`).
    pub block: Vec<u8>,
    /// Number of block bytes present in the file (the declared length unless
    /// the record is truncated or was cut at an embedded record header).
    pub block_len: u64,
    /// The block was longer than `max_block_bytes`; `block` holds its start only.
    pub too_large: bool,
    /// The file (or its gzip stream) ended before the declared block length.
    pub truncated: bool,
    /// Where the record's bytes are: enough to cut it out of the file again.
    pub extent: Extent,
}

/// Where a record's bytes are in its file. A record's bytes run from its
/// header line to the end of the blank bytes after its block (its trailing
/// line ends), so the records of a file and the bytes between them that
/// are no record add up to the whole file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Extent {
    /// Bytes from [`RawRecord::offset`] to the end of the record, so that
    /// `[offset, offset + length)` cuts it out as a CDX index does: counted
    /// in the file when the record is a gzip member of its own
    /// (per-record gzip; then `own_member`), in the decompressed stream
    /// otherwise (uncompressed files, whole-file gzip). `None` for a record
    /// that starts a gzip member but ends inside it, before another record
    /// (its offset is in the file, its end only in the stream).
    pub length: Option<u64>,
    /// The record is one gzip member, and nothing else is in it:
    /// `[offset, offset + length)` of the file is that member.
    pub own_member: bool,
    /// Where the record starts in the decompressed stream ([`StreamReader`]
    /// reads it; the file itself when uncompressed).
    pub stream_offset: u64,
    /// The record's bytes in the decompressed stream.
    pub stream_length: u64,
    /// The block has the length its header declares and the next record
    /// (or the end of the data) follows it: not cut short by the end of
    /// the data, nor at a record header found inside it, nor followed by
    /// bytes that start no record (a wrong Content-Length). A record that
    /// is not intact cannot be copied as it is: its header would announce
    /// bytes that are not there, or leave out bytes that are.
    pub intact: bool,
}

/// What the reader found at one place in the file.
#[derive(Debug, Clone, PartialEq)]
pub enum ArchiveEvent {
    /// A record, possibly truncated or too large (see its flags).
    Record(RawRecord),
    /// Bytes that could not be read as a record. Each event stands for one
    /// record (or one run of unreadable bytes) of the file.
    Malformed {
        /// Where the bad record or the unreadable bytes start (same convention
        /// as [`RawRecord::offset`]; for `bad_gzip` between records, the
        /// compressed offset of the bad member).
        offset: u64,
        /// The record type when the header could be read that far.
        record_type: Option<String>,
        /// The target URI when the header could be read that far.
        target_uri: Option<String>,
        /// Short snake_case reason: `malformed_record`, `truncated`,
        /// `bad_gzip`, `unsupported_compression`, `missing_warc_type`.
        reason: String,
        /// Human-readable explanation.
        detail: String,
    },
}

/// Summary of one scanned file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveInfo {
    /// Format of the first record: `WARC/1.0`, `WARC/0.17`, ..., `ARC/1`,
    /// `ARC/2`, or `unknown` when no record header was found.
    pub format: String,
    /// `none`, `gzip_per_record` (several gzip members), `gzip_whole_file`
    /// (one member), or the name of an unsupported compression (`lz4`,
    /// `zstd`, `bzip2`, `xz`).
    pub compression: String,
    /// Size of the file in bytes, as read (compressed).
    pub bytes: u64,
    /// Number of bytes after decompression.
    pub uncompressed_bytes: u64,
}

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
        });
    }
    let gzip = head.starts_with(&GZIP_MAGIC);
    let source = if gzip { Source::Gzip(GzSource::new(raw)) } else { Source::Plain(raw) };
    let mut parser = Parser {
        s: Stream::new(source),
        max_block: usize::try_from(max_block_bytes).unwrap_or(usize::MAX),
        mode: None,
        arc_version: 1,
        format_name: None,
    };
    parser.run(sink)?;
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
    })
}

/// The decompressed bytes of an archive exactly as [`scan_archive_source`]
/// counts them: gzip members one after the other, corrupt members and
/// bytes between members that are no gzip data skipped as the scanner
/// skips them, so that [`Extent::stream_offset`] and
/// [`Extent::stream_length`] cut a record out of it. An uncompressed file
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

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// Longest header line kept; longer lines are cut (the rest is skipped).
const MAX_LINE: usize = 64 << 10;
/// Largest WARC header accepted before the record is declared malformed.
const MAX_HEADER_BYTES: usize = 1 << 20;
/// Read size of the raw file and of decompressed chunks.
const CHUNK: usize = 64 << 10;

/// Names the compression of a file whose first bytes are `head`, when it is
/// one this reader cannot decode.
fn unsupported_compression(head: &[u8]) -> Option<&'static str> {
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
struct RawReader {
    file: Box<dyn ReadSeek>,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// File offset of `buf[start]`.
    pos: u64,
}

impl RawReader {
    fn new(file: Box<dyn ReadSeek>) -> RawReader {
        RawReader { file, buf: vec![0; CHUNK], start: 0, end: 0, pos: 0 }
    }

    /// Returns up to `n` buffered bytes, reading more if fewer are buffered;
    /// fewer than `n` only at the end of the file.
    fn peek(&mut self, n: usize) -> io::Result<&[u8]> {
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
            match window.windows(3).position(|w| w == [0x1f, 0x8b, 0x08]) {
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
fn read_retry(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match r.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// What one read from a [`Source`] produced.
enum Produced {
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
struct GzSource {
    state: GzState,
    members: u64,
    /// Members started but not yet claimed by the stream: (compressed start).
    new_member: Option<u64>,
    /// The compressed end of the member that just ended, not yet claimed
    /// by the stream.
    member_end: Option<u64>,
}

impl GzSource {
    fn new(raw: RawReader) -> GzSource {
        GzSource { state: GzState::Between(raw), members: 0, new_member: None, member_end: None }
    }

    fn read(&mut self, out: &mut [u8]) -> io::Result<Produced> {
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
                        if let Some(i) = window.windows(3).position(|w| w == [0x1f, 0x8b, 0x08]) {
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
enum Source {
    Plain(RawReader),
    Gzip(GzSource),
}

impl Source {
    /// Compressed bytes consumed so far.
    fn raw_pos(&self) -> u64 {
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

/// The uncompressed byte stream with look-ahead, push-back and offsets.
struct Stream {
    src: Source,
    buf: Vec<u8>,
    pos: usize,
    /// Uncompressed offset of `buf[pos]`.
    upos: u64,
    /// Uncompressed bytes produced by the source so far (offset of `buf` end).
    produced: u64,
    eof: bool,
    /// A pending gzip break: no data is returned until it is taken.
    brk: Option<(u64, String)>,
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
    fn new(src: Source) -> Stream {
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

    fn avail(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    /// Makes at least `n` bytes available if the data allows; returns how
    /// many are available (fewer than `n` at end of data or at a gzip break).
    fn ensure(&mut self, n: usize) -> io::Result<usize> {
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

    fn consume(&mut self, n: usize) {
        let n = n.min(self.buf.len() - self.pos);
        self.pos += n;
        self.upos += n as u64;
    }

    /// Takes a pending gzip break once all data before it was consumed.
    fn take_break(&mut self) -> Option<(u64, String)> {
        if self.pos == self.buf.len() {
            self.brk.take()
        } else {
            None
        }
    }

    /// Skips blank bytes (CR, LF, space, tab, NUL) between records.
    fn skip_blank(&mut self) -> io::Result<()> {
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
    fn peek_line_at(&mut self, skip: usize, max: usize) -> io::Result<&[u8]> {
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
    fn peek_line(&mut self, max: usize) -> io::Result<&[u8]> {
        self.peek_line_at(0, max)
    }

    /// Reads the next line (with its LF); keeps at most `max` bytes of it and
    /// skips the rest of an overlong line. Empty only at end of data.
    fn read_line(&mut self, max: usize) -> io::Result<Vec<u8>> {
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
    fn read_block(&mut self, len: u64, keep: usize, out: &mut Vec<u8>) -> io::Result<u64> {
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
    fn offset_of(&mut self, ustart: u64) -> (u64, bool) {
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
    fn member_end_between(&mut self, from: u64, to: u64) -> Option<u64> {
        self.member_ends.retain(|m| m.0 >= from);
        self.member_ends.iter().find(|m| m.0 <= to).map(|m| m.1)
    }
}

fn is_blank(b: u8) -> bool {
    matches!(b, b'\r' | b'\n' | b' ' | b'\t' | 0)
}

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

/// Removes the line end (any number of CR and LF) from a line.
fn trim_eol(line: &[u8]) -> &[u8] {
    let mut end = line.len();
    while end > 0 && matches!(line[end - 1], b'\r' | b'\n') {
        end -= 1;
    }
    &line[..end]
}

/// A WARC record header's first line: `WARC/` and a version digit.
fn is_warc_start(line: &[u8]) -> bool {
    line.len() > 5 && line.starts_with(b"WARC/") && line[5].is_ascii_digit()
}

/// An ARC record header line split into fields, when it looks like one:
/// at least five space-separated fields, a URL-like first field (a scheme,
/// a colon and more, like `http://x`, `dns:x`, `filedesc://x`) and an IP
/// address (dots or colons, or `-`) in the v1 or v2 position. The length
/// field is not checked here, so that bad lengths are reported.
fn arc_fields(line: &[u8]) -> Option<Vec<&[u8]>> {
    let line = trim_eol(line);
    if line.is_empty() || line.len() > 16 << 10 || line.iter().any(|b| *b < 0x20 && *b != b'\t') {
        return None;
    }
    let fields: Vec<&[u8]> = line.split(|b| *b == b' ').filter(|f| !f.is_empty()).collect();
    if fields.len() < 5 {
        return None;
    }
    let url = fields[0];
    let colon = url.iter().position(|b| *b == b':')?;
    let scheme = &url[..colon];
    if scheme.is_empty()
        || !scheme[0].is_ascii_alphabetic()
        || !scheme.iter().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(b))
        || colon + 1 >= url.len()
    {
        return None;
    }
    let ip_like = |f: &[u8]| {
        f == b"-"
            || (f.iter().any(|b| *b == b'.' || *b == b':')
                && f.iter().any(u8::is_ascii_digit)
                && f.iter().all(|b| b.is_ascii_hexdigit() || *b == b'.' || *b == b':'))
    };
    let n = fields.len();
    if ip_like(fields[n - 4]) || (n >= 10 && ip_like(fields[n - 9])) {
        Some(fields)
    } else {
        None
    }
}

/// Converts an ARC date (`YYYYMMDDhhmmss`, possibly shorter) to ISO 8601
/// (`YYYY-MM-DDThh:mm:ssZ`); `None` when it is not such a date.
pub fn arc_date_to_iso(d: &str) -> Option<String> {
    let d = d.trim();
    if !(4..=14).contains(&d.len()) || !d.len().is_multiple_of(2) || !d.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let part = |i: usize, default: &'static str| d.get(i..i + 2).unwrap_or(default).to_string();
    Some(format!(
        "{}-{}-{}T{}:{}:{}Z",
        &d[..4],
        part(4, "01"),
        part(6, "01"),
        part(8, "00"),
        part(10, "00"),
        part(12, "00")
    ))
}

/// The record reader state over one stream.
struct Parser {
    s: Stream,
    max_block: usize,
    mode: Option<Mode>,
    /// ARC version from the `filedesc://` header (1 unless it says 2).
    arc_version: u8,
    format_name: Option<String>,
}

/// A malformed event without record type or URI.
fn malformed(offset: u64, reason: &str, detail: String) -> ArchiveEvent {
    ArchiveEvent::Malformed { offset, record_type: None, target_uri: None, reason: reason.into(), detail }
}

impl Parser {
    fn run(&mut self, sink: &mut dyn FnMut(ArchiveEvent)) -> io::Result<()> {
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
    fn skip_to_record_start(&mut self) -> io::Result<u64> {
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
    fn read_checked_block(&mut self, len: u64) -> io::Result<(Vec<u8>, u64, bool, bool)> {
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

    fn read_warc(&mut self, ustart: u64) -> io::Result<ArchiveEvent> {
        let (offset, member_start) = self.s.offset_of(ustart);
        let _version = self.s.read_line(MAX_LINE)?;
        let mut headers: Vec<(String, String)> = Vec::new();
        let mut header_bytes = 0usize;
        loop {
            let line = self.s.read_line(MAX_LINE)?;
            if line.is_empty() {
                let reason = if self.s.brk.is_some() { "bad_gzip" } else { "truncated" };
                return Ok(ArchiveEvent::Malformed {
                    offset,
                    record_type: header(&headers, "warc-type").map(str::to_string),
                    target_uri: header(&headers, "warc-target-uri").map(clean_uri),
                    reason: reason.into(),
                    detail: "data ends inside the WARC header".into(),
                });
            }
            header_bytes += line.len();
            let text = trim_eol(&line);
            if text.is_empty() {
                break;
            }
            if header_bytes > MAX_HEADER_BYTES {
                let skipped = self.skip_to_record_start()?;
                return Ok(ArchiveEvent::Malformed {
                    offset,
                    record_type: header(&headers, "warc-type").map(str::to_string),
                    target_uri: header(&headers, "warc-target-uri").map(clean_uri),
                    reason: "malformed_record".into(),
                    detail: format!("WARC header longer than {MAX_HEADER_BYTES} bytes (skipped {skipped} more bytes)"),
                });
            }
            let text = String::from_utf8_lossy(text);
            if text.starts_with([' ', '\t']) {
                if let Some(last) = headers.last_mut() {
                    last.1.push(' ');
                    last.1.push_str(text.trim());
                }
            } else if let Some((name, value)) = text.split_once(':') {
                headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
            }
        }
        let record_type = header(&headers, "warc-type").unwrap_or("unknown").to_string();
        let target_uri = header(&headers, "warc-target-uri").map(clean_uri);
        let Some(len) = header(&headers, "content-length").and_then(|v| v.parse::<u64>().ok()) else {
            let skipped = self.skip_to_record_start_after_header()?;
            return Ok(ArchiveEvent::Malformed {
                offset,
                record_type: Some(record_type),
                target_uri,
                reason: "malformed_record".into(),
                detail: format!("missing or invalid Content-Length (skipped {skipped} bytes)"),
            });
        };
        let (block, block_len, truncated, by_break) = self.read_checked_block(len)?;
        if by_break {
            return Ok(ArchiveEvent::Malformed {
                offset,
                record_type: Some(record_type),
                target_uri,
                reason: "bad_gzip".into(),
                detail: format!("corrupt gzip data after {block_len} of {len} block bytes"),
            });
        }
        if header(&headers, "warc-type").is_none() {
            // WARC-Type is mandatory; what the block holds would be a guess.
            return Ok(ArchiveEvent::Malformed {
                offset,
                record_type: None,
                target_uri,
                reason: "missing_warc_type".into(),
                detail: format!("no WARC-Type header (block of {block_len} bytes read past)"),
            });
        }
        let extent = self.extent(ustart, offset, member_start, !truncated && block_len == len)?;
        let opt = |name: &str| header(&headers, name).map(str::to_string);
        let concurrent_to = headers.iter().filter(|(n, _)| n == "warc-concurrent-to").map(|(_, v)| v.clone()).collect();
        Ok(ArchiveEvent::Record(RawRecord {
            offset,
            format: ArchiveFormat::Warc,
            record_type,
            record_id: opt("warc-record-id"),
            target_uri,
            date: opt("warc-date"),
            refers_to: opt("warc-refers-to").or_else(|| opt("warc-refers-to-target-uri")),
            payload_digest: opt("warc-payload-digest"),
            concurrent_to,
            content_type: opt("content-type"),
            warc_truncated: opt("warc-truncated"),
            too_large: (block.len() as u64) < block_len,
            block,
            block_len,
            truncated,
            extent,
        }))
    }

    /// The [`Extent`] of the record that started at uncompressed offset
    /// `ustart` (reported at `offset`) and whose block was just read: the
    /// blank bytes after the block (its trailing line ends) are consumed as
    /// part of it. A record that starts a gzip member and ends where that
    /// member ends is measured in the file; one cut short by the end of a
    /// gzip stream runs to the end of the file.
    fn extent(&mut self, ustart: u64, offset: u64, member_start: bool, intact: bool) -> io::Result<Extent> {
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
    fn skip_to_record_start_after_header(&mut self) -> io::Result<u64> {
        let line = self.s.peek_line(MAX_LINE)?.to_vec();
        if line.is_empty() || is_record_start(self.mode, &line) {
            return Ok(0);
        }
        self.skip_to_record_start()
    }

    fn read_arc(&mut self, ustart: u64) -> io::Result<ArchiveEvent> {
        let (offset, member_start) = self.s.offset_of(ustart);
        let line = self.s.read_line(MAX_LINE)?;
        let fields: Vec<String> =
            arc_fields(&line).unwrap_or_default().iter().map(|f| String::from_utf8_lossy(f).into_owned()).collect();
        let n = fields.len();
        // v2: URL IP date mime status checksum location offset filename length.
        let tail = if self.arc_version == 2 && n >= 10 { 9 } else { 4 };
        let url = fields[..n - tail].join(" ");
        let date = arc_date_to_iso(&fields[n - tail + 1]).or_else(|| Some(fields[n - tail + 1].clone()));
        let mime = fields[n - tail + 2].clone();
        let filedesc = url.starts_with("filedesc:");
        let record_type = if filedesc { "filedesc" } else { "arc" }.to_string();
        let Ok(len) = fields[n - 1].parse::<u64>() else {
            let skipped = self.skip_to_record_start_after_header()?;
            return Ok(ArchiveEvent::Malformed {
                offset,
                record_type: Some(record_type),
                target_uri: Some(url),
                reason: "malformed_record".into(),
                detail: format!("invalid ARC record length {:?} (skipped {skipped} bytes)", fields[n - 1]),
            });
        };
        let (block, block_len, truncated, by_break) = self.read_checked_block(len)?;
        if by_break {
            return Ok(ArchiveEvent::Malformed {
                offset,
                record_type: Some(record_type),
                target_uri: Some(url),
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
            target_uri: Some(url),
            date,
            refers_to: None,
            payload_digest: None,
            concurrent_to: Vec::new(),
            content_type: Some(mime),
            warc_truncated: None,
            too_large: (block.len() as u64) < block_len,
            block,
            block_len,
            truncated,
            extent,
        }))
    }
}

/// The value of header `name` (lowercase), first occurrence.
fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

/// A URI header value without surrounding angle brackets and whitespace.
fn clean_uri(v: &str) -> String {
    let v = v.trim();
    v.strip_prefix('<').and_then(|v| v.strip_suffix('>')).unwrap_or(v).trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// Writes `bytes` to a fresh temporary file and scans it.
    fn scan_bytes(name: &str, bytes: &[u8], max_block: u64) -> (ArchiveInfo, Vec<ArchiveEvent>) {
        let dir = std::env::temp_dir().join(format!("neardup-archive-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let mut events = Vec::new();
        let info = scan_archive(&path, max_block, &mut |e| events.push(e)).unwrap();
        std::fs::remove_file(&path).unwrap();
        (info, events)
    }

    fn warc(rtype: &str, uri: &str, block: &str) -> String {
        format!(
            "WARC/1.0\r\nWARC-Type: {rtype}\r\nWARC-Target-URI: {uri}\r\nWARC-Date: null\r\n\
             Content-Length: {}\r\n\r\n{block}\r\n\r\n",
            block.len()
        )
    }

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// (offset, record type or reason, block) of each event.
    fn summary(events: &[ArchiveEvent]) -> Vec<(u64, String, String)> {
        events
            .iter()
            .map(|e| match e {
                ArchiveEvent::Record(r) => {
                    let mut kind = r.record_type.clone();
                    if r.truncated {
                        kind.push_str("+truncated");
                    }
                    if r.too_large {
                        kind.push_str("+too_large");
                    }
                    (r.offset, kind, String::from_utf8_lossy(&r.block).into_owned())
                }
                ArchiveEvent::Malformed { offset, reason, .. } => (*offset, reason.clone(), String::new()),
            })
            .collect()
    }

    #[test]
    fn arc_dates() {
        assert_eq!(arc_date_to_iso("20080430204825").as_deref(), Some("2008-04-30T20:48:25Z"));
        assert_eq!(arc_date_to_iso("200804302048").as_deref(), Some("2008-04-30T20:48:00Z"));
        assert_eq!(arc_date_to_iso("2008").as_deref(), Some("2008-01-01T00:00:00Z"));
        assert_eq!(arc_date_to_iso("null"), None);
        assert_eq!(arc_date_to_iso("201404010000000000"), None);
        assert_eq!(arc_date_to_iso("2008043"), None);
    }

    #[test]
    fn plain_warc_records_and_offsets() {
        let a = warc("warcinfo", "x", "software: test");
        let b = warc("response", "<http://e.com/a b>", "HTTP/1.1 200 OK\r\n\r\nhi");
        let (info, ev) = scan_bytes("plain.warc", format!("{a}{b}").as_bytes(), 1 << 20);
        assert_eq!((info.format.as_str(), info.compression.as_str()), ("WARC/1.0", "none"));
        assert_eq!(
            summary(&ev),
            vec![
                (0, "warcinfo".into(), "software: test".into()),
                (a.len() as u64, "response".into(), "HTTP/1.1 200 OK\r\n\r\nhi".into())
            ]
        );
        let ArchiveEvent::Record(r) = &ev[1] else { panic!() };
        assert_eq!((r.target_uri.as_deref(), r.date.as_deref()), (Some("http://e.com/a b"), Some("null")));
    }

    #[test]
    fn per_record_gzip_offsets_are_member_starts() {
        let a = gz(warc("warcinfo", "x", "info").as_bytes());
        let b = gz(warc("resource", "y", "<p>page</p>").as_bytes());
        let (info, ev) = scan_bytes("members.warc.gz", &[a.clone(), b].concat(), 1 << 20);
        assert_eq!(info.compression, "gzip_per_record");
        assert_eq!(summary(&ev)[1].0, a.len() as u64);
        // Whole-file gzip: offsets in the uncompressed stream.
        let first = warc("warcinfo", "x", "info");
        let whole = gz(format!("{first}{}", warc("resource", "y", "z")).as_bytes());
        let (info, ev) = scan_bytes("whole.warc.gz", &whole, 1 << 20);
        assert_eq!(info.compression, "gzip_whole_file");
        assert_eq!(summary(&ev)[1].0, first.len() as u64);
    }

    /// The records of `events` as (offset, length).
    fn extents(events: &[ArchiveEvent]) -> Vec<(u64, u64)> {
        events
            .iter()
            .map(|e| match e {
                ArchiveEvent::Record(r) => (r.offset, r.extent.length.expect("every record here has a length")),
                ArchiveEvent::Malformed { reason, .. } => panic!("unexpected {reason}"),
            })
            .collect()
    }

    fn gunzip(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(data).read_to_end(&mut out).unwrap();
        out
    }

    #[test]
    fn offset_and_length_cut_out_exactly_one_record() {
        let arc_body = "HTTP/1.0 200 OK\nContent-Type: text/html\n\n<p>x</p>";
        let warcs = [
            warc("warcinfo", "x", "software: test"),
            warc("response", "http://e.com/a", "HTTP/1.1 200 OK\r\n\r\nhi"),
            // LF-only line ends and extra blank lines after the block count as the record's.
            "WARC/1.0\nWARC-Type: request\nContent-Length: 3\n\nGET\n\n\n\n".to_string(),
        ];
        let arcs = [
            "filedesc://t.arc 0.0.0.0 20080430204825 text/plain 10\n1 0 Test\n\n".to_string(),
            format!("http://e.com/a 1.2.3.4 20080430204826 text/html {}\n{arc_body}\n", arc_body.len()),
            "dns:e.com 1.2.3.4 20080430204827 text/dns 3\nabc\n".to_string(),
        ];
        for (kind, records) in [("warc", &warcs), ("arc", &arcs)] {
            let plain = records.concat();
            // Plain: the slice of the file is the record.
            let (_, ev) = scan_bytes(&format!("extent.{kind}"), plain.as_bytes(), 1 << 20);
            let cut: Vec<&[u8]> =
                extents(&ev).iter().map(|&(o, l)| &plain.as_bytes()[o as usize..(o + l) as usize]).collect();
            assert_eq!(cut, records.iter().map(|r| r.as_bytes()).collect::<Vec<_>>(), "{kind} plain");
            // Per-record gzip: the slice of the file is the record's member.
            let members: Vec<Vec<u8>> = records.iter().map(|r| gz(r.as_bytes())).collect();
            let file = members.concat();
            let (info, ev) = scan_bytes(&format!("extent.{kind}.gz"), &file, 1 << 20);
            assert_eq!(info.compression, "gzip_per_record");
            let cut: Vec<&[u8]> = extents(&ev).iter().map(|&(o, l)| &file[o as usize..(o + l) as usize]).collect();
            assert_eq!(cut, members.iter().map(Vec::as_slice).collect::<Vec<_>>(), "{kind} per-record gzip");
            // Whole-file gzip: the slice of the decompressed stream is the record.
            let (info, ev) = scan_bytes(&format!("extent-whole.{kind}.gz"), &gz(plain.as_bytes()), 1 << 20);
            assert_eq!(info.compression, "gzip_whole_file");
            let stream = gunzip(&gz(plain.as_bytes()));
            let cut: Vec<&[u8]> = extents(&ev).iter().map(|&(o, l)| &stream[o as usize..(o + l) as usize]).collect();
            assert_eq!(cut, records.iter().map(|r| r.as_bytes()).collect::<Vec<_>>(), "{kind} whole-file gzip");
        }
    }

    /// The bytes of `data`'s decompressed stream, as [`StreamReader`] gives them.
    fn stream_of(name: &str, data: &[u8]) -> Vec<u8> {
        let dir = std::env::temp_dir().join(format!("neardup-archive-stream-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, data).unwrap();
        let mut out = Vec::new();
        StreamReader::open(&Input::File(path.clone())).unwrap().read_to_end(&mut out).unwrap();
        std::fs::remove_file(&path).unwrap();
        out
    }

    #[test]
    fn stream_extents_cut_records_out_of_the_stream_reader_even_after_a_corrupt_member() {
        let records = [warc("resource", "a", "one"), warc("resource", "b", "two"), warc("resource", "c", "three")];
        let mut members: Vec<Vec<u8>> = records.iter().map(|r| gz(r.as_bytes())).collect();
        let n = members[1].len();
        members[1][n / 2..n - 8].iter_mut().for_each(|x| *x = 0xff);
        for (name, data) in [
            ("stream-plain.warc", records.concat().into_bytes()),
            ("stream-whole.warc.gz", gz(records.concat().as_bytes())),
            ("stream-corrupt.warc.gz", members.concat()),
        ] {
            let (_, ev) = scan_bytes(name, &data, 1 << 20);
            let stream = stream_of(name, &data);
            for e in &ev {
                let ArchiveEvent::Record(r) = e else { continue };
                let x = r.extent;
                let cut = &stream[x.stream_offset as usize..(x.stream_offset + x.stream_length) as usize];
                let i = ["a", "b", "c"].iter().position(|u| r.target_uri.as_deref() == Some(*u)).unwrap();
                let expected = &records[i];
                assert_eq!(cut, expected.as_bytes(), "{name}");
                assert!(x.intact, "{name}");
                assert_eq!(x.own_member, name == "stream-corrupt.warc.gz", "{name}");
            }
        }
    }

    #[test]
    fn a_record_sharing_its_member_has_no_length_and_a_cut_member_runs_to_the_end() {
        let (a, b, c) = (warc("resource", "a", "one"), warc("resource", "b", "two"), warc("resource", "c", "three"));
        // Member 1 holds a; member 2 holds b and c: b starts a member but ends inside it.
        let first = gz(a.as_bytes());
        let file = [first.clone(), gz(format!("{b}{c}").as_bytes())].concat();
        let (_, ev) = scan_bytes("extent-shared.warc.gz", &file, 1 << 20);
        let lengths: Vec<Option<u64>> = ev
            .iter()
            .map(|e| match e {
                ArchiveEvent::Record(r) => r.extent.length,
                ArchiveEvent::Malformed { .. } => panic!("malformed"),
            })
            .collect();
        // c starts inside the member: offset and length in the stream.
        assert_eq!(lengths, [Some(first.len() as u64), None, Some(c.len() as u64)]);
        // A last member cut short: the truncated record runs to the end of the file.
        let last = gz(c.as_bytes());
        let file = [first.clone(), last[..last.len() - 12].to_vec()].concat();
        let (_, ev) = scan_bytes("extent-cutmember.warc.gz", &file, 1 << 20);
        let ArchiveEvent::Record(r) = &ev[1] else { panic!() };
        assert!(r.truncated);
        assert_eq!((r.offset, r.extent.length), (first.len() as u64, Some((file.len() - first.len()) as u64)));
        assert!(!r.extent.intact && !r.extent.own_member);
    }

    #[test]
    fn concurrent_records_are_named() {
        let rec = "WARC/1.0\r\nWARC-Type: request\r\nWARC-Concurrent-To: <urn:uuid:a>\r\n\
                   WARC-Concurrent-To: <urn:uuid:b>\r\nContent-Length: 0\r\n\r\n\r\n\r\n";
        let (_, ev) = scan_bytes("extent-concurrent.warc", rec.as_bytes(), 100);
        let ArchiveEvent::Record(r) = &ev[0] else { panic!() };
        assert_eq!(r.concurrent_to, ["<urn:uuid:a>", "<urn:uuid:b>"]);
    }

    #[test]
    fn wrong_content_length_resyncs() {
        // Declared length too long: the block swallows the next record's header,
        // which is found inside it.
        let good = warc("response", "b", "second");
        let bad = "WARC/1.0\r\nWARC-Type: response\r\nContent-Length: 100\r\n\r\nfirst\r\n\r\n";
        let data = format!("{bad}{good}");
        let (_, ev) = scan_bytes("long.warc", data.as_bytes(), 1 << 20);
        let s = summary(&ev);
        assert_eq!(s.len(), 2, "{s:?}");
        assert_eq!((s[0].1.as_str(), s[1].0, s[1].2.as_str()), ("response", bad.len() as u64, "second"));
        // Declared length too short: the rest is reported, the next record is read.
        let bad = "WARC/1.0\r\nWARC-Type: request\r\nContent-Length: 3\r\n\r\nabcdef\r\n\r\n";
        let (_, ev) = scan_bytes("short.warc", format!("{bad}{good}").as_bytes(), 1 << 20);
        let kinds: Vec<String> = summary(&ev).into_iter().map(|s| s.1).collect();
        assert_eq!(kinds, ["request", "malformed_record", "response"]);
        // Followed by bytes that start no record: not intact (a copy would keep the lie).
        let intact: Vec<bool> = ev
            .iter()
            .filter_map(|e| if let ArchiveEvent::Record(r) = e { Some(r.extent.intact) } else { None })
            .collect();
        assert_eq!(intact, [false, true]);
        // Missing Content-Length: malformed, then resync.
        let bad = "WARC/1.0\r\nWARC-Type: response\r\n\r\nno length here\r\n";
        let (_, ev) = scan_bytes("nolen.warc", format!("{bad}{good}").as_bytes(), 1 << 20);
        let kinds: Vec<String> = summary(&ev).into_iter().map(|s| s.1).collect();
        assert_eq!(kinds, ["malformed_record", "response"]);
    }

    #[test]
    fn missing_warc_type_and_impossible_lengths() {
        let good = warc("response", "b", "second");
        // No WARC-Type: its own reject; the block is read past, the next
        // record read.
        let no_type = "WARC/1.0\r\nWARC-Target-URI: a\r\nContent-Length: 5\r\n\r\nfirst\r\n\r\n";
        let (_, ev) = scan_bytes("notype.warc", format!("{no_type}{good}").as_bytes(), 1 << 20);
        let s = summary(&ev);
        assert_eq!((s[0].1.as_str(), s[1].0, s[1].1.as_str()), ("missing_warc_type", no_type.len() as u64, "response"));
        let ArchiveEvent::Malformed { target_uri, record_type, .. } = &ev[0] else { panic!() };
        assert_eq!((target_uri.as_deref(), record_type), (Some("a"), &None));
        // A Content-Length beyond u64: malformed, reading resumes at the next record.
        let huge = "WARC/1.0\r\nWARC-Type: response\r\nContent-Length: 18446744073709551616\r\n\r\nbody\r\n\r\n";
        let (_, ev) = scan_bytes("huge.warc", format!("{huge}{good}").as_bytes(), 1 << 20);
        let kinds: Vec<String> = summary(&ev).into_iter().map(|s| s.1).collect();
        assert_eq!(kinds, ["malformed_record", "response"]);
        // The largest u64, beyond the end of the file: a truncated record.
        let max = "WARC/1.0\r\nWARC-Type: response\r\nContent-Length: 18446744073709551615\r\n\r\nbody";
        let (_, ev) = scan_bytes("max.warc", max.as_bytes(), 1 << 20);
        assert_eq!(summary(&ev), vec![(0, "response+truncated".into(), "body".into())]);
    }

    #[test]
    fn truncated_and_too_large_blocks() {
        let rec = warc("response", "a", "0123456789");
        let (_, ev) = scan_bytes("trunc.warc", &rec.as_bytes()[..rec.len() - 9], 1 << 20);
        assert_eq!(summary(&ev), vec![(0, "response+truncated".into(), "01234".into())]);
        let (_, ev) = scan_bytes("big.warc", format!("{rec}{rec}").as_bytes(), 4);
        let s = summary(&ev);
        assert_eq!(s[0], (0, "response+too_large".into(), "0123".into()));
        assert_eq!(s[1].0, rec.len() as u64);
        // Ends inside the header.
        let (_, ev) = scan_bytes("hdr.warc", b"WARC/1.0\r\nWARC-Type: response\r\n", 100);
        assert_eq!(summary(&ev)[0].1, "truncated");
    }

    #[test]
    fn bad_gzip_member_is_skipped() {
        let a = gz(warc("resource", "a", "one").as_bytes());
        let mut b = gz(warc("resource", "b", "two").as_bytes());
        let n = b.len();
        b[n / 2..n - 8].iter_mut().for_each(|x| *x = 0xff);
        let c = gz(warc("resource", "c", "three").as_bytes());
        let (_, ev) = scan_bytes("bad.warc.gz", &[a.clone(), b.clone(), c].concat(), 1 << 20);
        let s = summary(&ev);
        assert_eq!(s.len(), 3, "{s:?}");
        assert_eq!((s[0].2.as_str(), s[2].2.as_str()), ("one", "three"));
        assert_eq!((s[1].0, s[1].1.as_str()), (a.len() as u64, "bad_gzip"));
        assert_eq!(s[2].0, (a.len() + b.len()) as u64);
        // Garbage between members, and a gzip stream cut short.
        let tail = gz(warc("resource", "d", "four").as_bytes());
        let (_, ev) = scan_bytes("junk.warc.gz", &[a.clone(), b"junk".to_vec(), tail.clone()].concat(), 1 << 20);
        let kinds: Vec<String> = summary(&ev).into_iter().map(|s| s.1).collect();
        assert_eq!(kinds, ["resource", "bad_gzip", "resource"]);
        // Only the trailer cut: the data is complete. Data cut: truncated record.
        for (cut, last) in [(4, "resource"), (12, "resource+truncated")] {
            let data = [a.clone(), tail[..tail.len() - cut].to_vec()].concat();
            let (_, ev) = scan_bytes("cut.warc.gz", &data, 1 << 20);
            let kinds: Vec<String> = summary(&ev).into_iter().map(|s| s.1).collect();
            assert_eq!(kinds, ["resource", last], "cut {cut}");
        }
    }

    #[test]
    fn headers_with_lying_lengths_on_every_line_cost_linear_time_and_memory() {
        // Fuzzing: each record read the rest of the file as its block and
        // pushed it back, keeping the consumed bytes: a 1 MB file of such
        // headers took gigabytes. Each block still ends at the first record
        // header on a later line (the header at its start is its content).
        let head = "WARC/1.0\r\nWARC-Type: response\r\nContent-Length: 99999999\r\n\r\n";
        let (_, ev) = scan_bytes("lying.warc", head.repeat(4000).as_bytes(), 1 << 20);
        let s = summary(&ev);
        assert_eq!(s.len(), 2000);
        for (i, e) in s.iter().enumerate() {
            // The last block runs to the end of the file.
            let kind = if i == 1999 { "response+truncated" } else { "response" };
            assert_eq!((e.0, e.1.as_str(), e.2.as_str()), ((2 * i * head.len()) as u64, kind, head));
        }
    }

    #[test]
    fn gzip_magic_flood_is_one_bad_gzip_per_member_start() {
        // Fuzzing: a file of gzip magic bytes took minutes per megabyte (a
        // 64 KB header scan and a buffer refill per three bytes). Each magic
        // is a member start with an impossible header now; the record after
        // the flood (and junk skipped in resynchronizing) is still read.
        let flood = [0x1f, 0x8b, 0x08].repeat(20_000);
        let junk = vec![b'x'; 2048];
        let good = gz(warc("resource", "a", "after").as_bytes());
        let (info, ev) = scan_bytes("flood.warc.gz", &[flood.clone(), junk, good].concat(), 1 << 20);
        let s = summary(&ev);
        assert_eq!(s.len(), 20_001);
        assert!(s[..20_000].iter().enumerate().all(|(i, e)| e.0 == 3 * i as u64 && e.1 == "bad_gzip"));
        assert_eq!((s[20_000].0, s[20_000].2.as_str()), (flood.len() as u64 + 2048, "after"));
        assert_eq!(info.compression, "gzip_per_record");
        // A plausible header with a long file name is still a member.
        let mut named = vec![0x1f, 0x8b, 0x08, 0x08, 0, 0, 0, 0, 0, 0xff];
        named.extend_from_slice(&[b'n'; 1000]);
        named.push(0);
        let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        let rec = warc("resource", "b", "named");
        enc.write_all(rec.as_bytes()).unwrap();
        named.extend_from_slice(&enc.finish().unwrap());
        named.extend_from_slice(&crc32fast::hash(rec.as_bytes()).to_le_bytes());
        named.extend_from_slice(&(rec.len() as u32).to_le_bytes());
        let (_, ev) = scan_bytes("named.warc.gz", &named, 1 << 20);
        assert_eq!(summary(&ev), vec![(0, "resource".into(), "named".into())]);
    }

    #[test]
    fn arc_records_with_spaces_and_bad_lengths() {
        let body = "HTTP/1.0 200 OK\nContent-Type: text/html\n\n<p>x</p>";
        let data = format!(
            "filedesc://t.arc 0.0.0.0 20080430204825 text/plain 10\n1 0 Test\n\n\
             http://e.com/a b c 1.2.3.4 20080430204826 text/html {}\n{body}\n\
             http://e.com/bad 1.2.3.4 20080430204826 text/html abc\n\n\
             dns:e.com 1.2.3.4 20080430204827 text/dns 3\nabc\n",
            body.len()
        );
        let (info, ev) = scan_bytes("t.arc", data.as_bytes(), 1 << 20);
        assert_eq!(info.format, "ARC/1");
        let kinds: Vec<String> = summary(&ev).into_iter().map(|s| s.1).collect();
        assert_eq!(kinds, ["filedesc", "arc", "malformed_record", "arc"]);
        let ArchiveEvent::Record(r) = &ev[1] else { panic!() };
        assert_eq!(r.target_uri.as_deref(), Some("http://e.com/a b c"));
        assert_eq!(r.date.as_deref(), Some("2008-04-30T20:48:26Z"));
        assert_eq!(r.content_type.as_deref(), Some("text/html"));
        assert_eq!(r.block, body.as_bytes());
    }

    #[test]
    fn unsupported_and_garbage_files() {
        let (info, ev) = scan_bytes("x.lz4", &[0x04, 0x22, 0x4d, 0x18, 1, 2, 3], 100);
        assert_eq!(info.compression, "lz4");
        assert_eq!(summary(&ev), vec![(0, "unsupported_compression".into(), String::new())]);
        let (info, ev) = scan_bytes("junk.bin", b"hello\nworld\n", 100);
        assert_eq!(info.format, "unknown");
        assert_eq!(summary(&ev), vec![(0, "malformed_record".into(), String::new())]);
        let (_, ev) = scan_bytes("empty.warc", b"", 100);
        assert!(ev.is_empty());
    }
}

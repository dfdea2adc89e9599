//! The bytes of an input record, read again in the second pass: its own
//! gzip member as it is, or its range of the decompressed stream, and the
//! record copied from them.

use std::io::{self, BufRead, BufReader, Read, Write};

use super::scan::Record;
use crate::ingest::archive::header::{CopiedLines, Header, HeaderEnd};
use crate::ingest::archive::StreamReader;
use crate::ingest::source::{ReadSeek, Source};

/// Reads records' bytes out of an input file again: a gzip member as it
/// is in the file, or a record's bytes in the decompressed stream (the
/// stream read forward only; records come in file order). Both readers
/// are opened when first needed.
pub(super) struct RecordBytes<'a> {
    source: &'a Source,
    raw: Option<(BufReader<Box<dyn ReadSeek>>, u64)>,
    stream: Option<(BufReader<StreamReader>, u64)>,
}

impl<'a> RecordBytes<'a> {
    pub(super) fn new(source: &'a Source) -> RecordBytes<'a> {
        RecordBytes { source, raw: None, stream: None }
    }

    /// The file's reader at `offset`.
    fn raw_at(&mut self, offset: u64) -> io::Result<&mut (BufReader<Box<dyn ReadSeek>>, u64)> {
        if self.raw.is_none() {
            self.raw = Some((BufReader::with_capacity(1 << 20, self.source.open()?), 0));
        }
        let raw = self.raw.as_mut().expect("opened above");
        if raw.1 != offset {
            use std::io::Seek;
            raw.0.seek(io::SeekFrom::Start(offset))?;
            raw.1 = offset;
        }
        Ok(raw)
    }

    /// Copies `[offset, offset + length)` of the file.
    pub(super) fn copy_member(&mut self, offset: u64, length: u64, out: &mut dyn Write) -> io::Result<()> {
        let raw = self.raw_at(offset)?;
        let result = copy_exactly(&mut raw.0, out, length);
        raw.1 = offset + length;
        if result.is_err() {
            self.raw = None;
        }
        result
    }

    /// Calls `f` with a reader of the record's uncompressed bytes: its own
    /// gzip member decompressed, or its range of the decompressed stream.
    pub(super) fn with_record<T>(
        &mut self,
        record: &Record,
        f: impl FnOnce(&mut dyn BufRead) -> io::Result<T>,
    ) -> io::Result<T> {
        let x = record.extent;
        if let (true, Some(length)) = (x.own_member, x.length) {
            let raw = self.raw_at(record.offset)?;
            let mut member = BufReader::new(flate2::bufread::GzDecoder::new((&mut raw.0).take(length)));
            let result = f(&mut member);
            let left = member.into_inner().into_inner().limit();
            raw.1 = record.offset + length - left;
            return result;
        }
        let behind = self.stream.as_ref().is_some_and(|s| s.1 > x.stream_offset);
        if self.stream.is_none() || behind {
            self.stream = Some((BufReader::with_capacity(1 << 20, StreamReader::open(self.source)?), 0));
        }
        let stream = self.stream.as_mut().expect("opened above");
        let skip = x.stream_offset - stream.1;
        let skipped = io::copy(&mut (&mut stream.0).take(skip), &mut io::sink())?;
        stream.1 += skipped;
        if skipped < skip {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the input ends before the record: it changed"));
        }
        let mut bytes = (&mut stream.0).take(x.stream_length);
        let result = f(&mut bytes);
        io::copy(&mut bytes, &mut io::sink())?;
        stream.1 += x.stream_length - bytes.limit();
        result
    }
}

/// Copies a WARC record's header (read as ingest read it) and block as
/// they are and ends it with
/// CR LF CR LF, whatever bytes the input had there (some writers leave NUL
/// bytes or spaces, or nothing at the end of the file): a reader that
/// meets other bytes after the block takes them for a wrong Content-Length.
pub(super) fn copy_with_record_end(r: &mut dyn BufRead, block_len: u64, out: &mut dyn Write) -> io::Result<()> {
    let header = Header::read(&mut CopiedLines::new(&mut *r, &mut *out))?;
    if header.end != HeaderEnd::Complete {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the record header ends early: the input changed"));
    }
    copy_exactly(r, out, block_len)?;
    out.write_all(b"\r\n\r\n")
}

/// Copies exactly `n` bytes.
pub(super) fn copy_exactly(r: &mut dyn Read, out: &mut dyn Write, n: u64) -> io::Result<()> {
    let copied = io::copy(&mut r.take(n), out)?;
    if copied < n {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, format!("{copied} of {n} bytes: the input changed")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Header and block as they are, then exactly CR LF CR LF: NUL bytes
    /// after the block, or no end at all, are not copied.
    #[test]
    fn a_rewritten_record_ends_with_crlf_crlf() {
        for input in [
            &b"WARC/1.0\r\nContent-Length: 3\r\n\r\nabc\x00\x00\r\n\r\n"[..],
            b"WARC/1.0\r\nContent-Length: 3\r\n\r\nabc",
        ] {
            let mut out = Vec::new();
            copy_with_record_end(&mut &input[..], 3, &mut out).unwrap();
            assert_eq!(out, b"WARC/1.0\r\nContent-Length: 3\r\n\r\nabc\r\n\r\n");
        }
        let mut out = Vec::new();
        assert!(copy_with_record_end(&mut &b"WARC/1.0\r\nContent-Length: 3\r\n\r\nab"[..], 3, &mut out).is_err());
        // Header lines ending in CR CR LF, as ingest reads them (pywb's
        // missing-status-text.warc): copied as they are.
        let input = b"WARC/1.0\r\r\nContent-Length: 3\r\r\n\r\r\nabc\r\n\r\n";
        let mut out = Vec::new();
        copy_with_record_end(&mut &input[..], 3, &mut out).unwrap();
        assert_eq!(out, input);
    }
}

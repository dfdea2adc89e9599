//! Where the export's records go: the WARC file, or for `--format cdxj`
//! a count of the WARC's bytes and the index lines; each record written as
//! one gzip member.

use anyhow::Result;
use flate2::{Compression, GzBuilder};
use std::io::{self, Write};

use crate::export::cdxj::{Entry, Sorter};
use crate::export::output::{Destination, OutputFile};

/// A writer that counts the bytes written (the offset of the next gzip
/// member) and remembers whether a write failed, so that a failure of the
/// output is told from one of the input.
pub(super) struct Counting<W: Write> {
    /// Where the bytes go.
    pub(super) inner: W,
    /// Bytes written so far.
    pub(super) bytes: u64,
    /// A write failed.
    pub(super) failed: bool,
}

impl<W: Write> Counting<W> {
    /// Counts what goes to `inner`.
    pub(super) fn new(inner: W) -> Counting<W> {
        Counting { inner, bytes: 0, failed: false }
    }
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.inner.write(buf) {
            Ok(n) => {
                self.bytes += n as u64;
                Ok(n)
            }
            Err(e) => {
                self.failed = true;
                Err(e)
            }
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush().inspect_err(|_| self.failed = true)
    }
}

/// Where the WARC's records go: the WARC file ([`WarcFile`]) or, for
/// `--format cdxj`, a byte count and the index lines ([`Index`]).
pub(super) trait RecordSink {
    /// The bytes of the WARC.
    fn warc(&mut self) -> &mut dyn Write;
    /// Bytes of the WARC so far: where the next record starts.
    fn position(&self) -> u64;
    /// Whether a write to the output failed.
    fn failed(&self) -> bool;
    /// Whether [`RecordSink::written`] uses index entries (whose digest
    /// costs a hash of the payload when the record has none).
    fn indexes(&self) -> bool;
    /// The record `entry` describes is the gzip member at
    /// `[offset, offset + length)` of the WARC.
    fn written(&mut self, entry: Option<&Entry>, offset: u64, length: u64) -> Result<()>;
}

/// `--format warc`: the records go to the file.
pub(super) struct WarcFile(pub(super) Counting<OutputFile>);

impl RecordSink for WarcFile {
    fn warc(&mut self) -> &mut dyn Write {
        &mut self.0
    }
    fn position(&self) -> u64 {
        self.0.bytes
    }
    fn failed(&self) -> bool {
        self.0.failed
    }
    fn indexes(&self) -> bool {
        false
    }
    fn written(&mut self, _: Option<&Entry>, _: u64, _: u64) -> Result<()> {
        Ok(())
    }
}

/// `--format cdxj`: the records are counted, not kept, and indexed.
pub(super) struct Index<'a> {
    /// The WARC's bytes, counted.
    pub(super) warc: Counting<io::Sink>,
    /// The index lines, sorted.
    pub(super) lines: Sorter,
    /// The name of the WARC file `--format warc` writes.
    pub(super) warc_name: String,
    /// The date of records whose WARC-Date is none (see [`fallback_date`]).
    pub(super) fallback_date: String,
    pub(super) destination: &'a Destination,
    /// Writing a sorted run of index lines failed (a full disk): the
    /// export's fault, not the input's.
    pub(super) lines_failed: bool,
}

impl RecordSink for Index<'_> {
    fn warc(&mut self) -> &mut dyn Write {
        &mut self.warc
    }
    fn position(&self) -> u64 {
        self.warc.bytes
    }
    fn failed(&self) -> bool {
        self.warc.failed || self.lines_failed
    }
    fn indexes(&self) -> bool {
        true
    }
    fn written(&mut self, entry: Option<&Entry>, offset: u64, length: u64) -> Result<()> {
        if let Some(line) = entry.and_then(|e| e.line(offset, length, &self.warc_name, &self.fallback_date)) {
            let pushed = self.lines.push(line, self.destination);
            self.lines_failed |= pushed.is_err();
            pushed?;
        }
        Ok(())
    }
}

/// Writes one record as one gzip member of the WARC, its bytes (header
/// included) given by `write`; returns where the member is.
pub(super) fn write_member(
    sink: &mut dyn RecordSink,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<(u64, u64)> {
    let start = sink.position();
    let mut gz = GzBuilder::new().write(sink.warc(), Compression::default());
    write(&mut gz)?;
    gz.finish()?;
    Ok((start, sink.position() - start))
}

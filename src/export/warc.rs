//! `--format warc`, and the WARC that `--format cdxj` indexes.
//!
//! Kept export: every input file of the task is read again, in two passes.
//! The first scans it with the ingest's archive reader (same block cap,
//! hence the same records at the same offsets as `documents`) and keeps
//! each record's header fields and extent; the second writes, in file
//! order, every record except the removed documents and the `request` and
//! `metadata` records that belong to them ([`plan`]): linked by
//! WARC-Concurrent-To in either direction (or, for metadata, by
//! WARC-Refers-To), or a request for the same target URI right before a
//! removed response that nothing else links (wget and wpull write the
//! request first). Everything else is kept: non-content records,
//! revisits, warcinfo, resources, requests of kept pages.
//!
//! Each record is one gzip member of the output. A WARC/1.x record is
//! copied byte for byte (its uncompressed bytes; a record that is a gzip
//! member of its own in the input is copied as that member, without
//! decompressing it). ARC and WARC/0.x records, and corpus lines, are
//! rewritten as WARC/1.1 records that keep their original headers
//! ([`super::legacy`]). Records the input has damaged (cut short, or whose
//! block is not as long as its header says) and unreadable bytes are left
//! out and counted.
//!
//! Removed export (`--removed`): no input is read; each removed document
//! becomes a `revisit` record naming its kept copy under
//! [`super::legacy::NEAR_DUPLICATE_PROFILE`].
//!
//! Memory: one input file's decisions and record headers, and one record's
//! block (capped as ingest caps it) during the scan.

use anyhow::{Context, Result};
use flate2::{Compression, GzBuilder};
use std::collections::{HashMap, HashSet};
use std::io::{self, BufRead, BufReader, Read, Write};

use super::cdxj::{Entry, Sorter};
use super::legacy::{self, ArcRecord, CorpusRecord, Revisit};
use super::output::{Destination, OutputFile};
use super::{fallback_date, part_name, Decision, DecisionCursor, ExportSummary, Format, Job, RunFile};
use crate::ingest::archive::{scan_archive_range, scan_archive_source, ArchiveEvent, Extent, RawRecord, StreamReader};
use crate::ingest::corpus;
use crate::ingest::source::{RandomAccess, ReadSeek, Source};

/// A writer that counts the bytes written (the offset of the next gzip
/// member) and remembers whether a write failed, so that a failure of the
/// output is told from one of the input.
struct Counting<W: Write> {
    inner: W,
    bytes: u64,
    failed: bool,
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
trait RecordSink {
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
struct WarcFile(Counting<OutputFile>);

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
struct Index<'a> {
    warc: Counting<io::Sink>,
    lines: Sorter,
    /// The name of the WARC file `--format warc` writes.
    warc_name: String,
    /// The date of records whose WARC-Date is none (see [`fallback_date`]).
    fallback_date: String,
    destination: &'a Destination,
    /// Writing a sorted run of index lines failed (a full disk): the
    /// export's fault, not the input's.
    lines_failed: bool,
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

/// Writes this task's WARC (or its index) to file `name` of `destination`;
/// returns where it went.
pub(super) fn export(job: &Job, destination: &Destination, name: &str, summary: &mut ExportSummary) -> Result<String> {
    let file = destination.create(name)?;
    let ctx = Setup::of(job)?;
    match job.options.format {
        Format::Cdxj => {
            let warc_name = part_name(Format::Warc, job.options.removed, job.options.shard);
            let mut index = Index {
                warc: Counting { inner: io::sink(), bytes: 0, failed: false },
                lines: Sorter::new(name),
                warc_name,
                fallback_date: ctx.fallback_date.clone(),
                destination,
                lines_failed: false,
            };
            write_records(job, &ctx, &mut index, summary)?;
            summary.add("warc_bytes", index.warc.bytes);
            let mut file = file;
            let lines = index.lines.write_sorted(&mut file).with_context(|| format!("cannot write {name}"))?;
            summary.add("index_lines", lines);
            destination.publish(file)
        }
        _ => {
            let mut warc = WarcFile(Counting { inner: file, bytes: 0, failed: false });
            write_records(job, &ctx, &mut warc, summary)?;
            summary.add("warc_bytes", warc.0.bytes);
            destination.publish(warc.0.inner)
        }
    }
}

/// What every file's export needs besides its decisions.
struct Setup {
    /// The archive reader's block cap, as the run's ingest had it.
    max_block: u64,
    /// The date of converted records that have none (see [`fallback_date`]).
    fallback_date: String,
    /// The files (paths as the run read them) ingest found to be WARC/1.x
    /// gzipped per record (`ingest_files`): their documents' records are
    /// read from the gzip members the tables name ([`records_by_members`]).
    per_record_warc: HashSet<String>,
}

impl Setup {
    fn of(job: &Job) -> Result<Setup> {
        let manifest = crate::runner::finished_manifest(job.out, "ingest");
        let payload = manifest
            .as_ref()
            .and_then(|m| m.config["max_payload_bytes"].as_u64())
            .unwrap_or_else(|| crate::ingest::settings::IngestConfig::default().max_payload_bytes);
        let mut per_record_warc = HashSet::new();
        let sql = "SELECT warc_file FROM ingest_files \
                   WHERE compression = 'gzip_per_record' AND starts_with(format, 'WARC/1.')";
        for batch in job.runtime.block_on(async { job.session.sql(sql).await?.collect().await })? {
            let files = crate::tables::columns::ingest_files::warc_file(&batch)?;
            per_record_warc.extend((0..batch.num_rows()).map(|i| files.value(i).to_string()));
        }
        Ok(Setup {
            max_block: crate::ingest::max_block_bytes(payload),
            fallback_date: fallback_date(job.out),
            per_record_warc,
        })
    }
}

/// Writes the records of every file of the task, in order.
fn write_records(job: &Job, ctx: &Setup, sink: &mut dyn RecordSink, summary: &mut ExportSummary) -> Result<()> {
    let removed = job.options.removed;
    let mut cursor = DecisionCursor::open(job, removed)?;
    let sizes: Vec<u64> = job.files.iter().map(|f| f.source.as_ref().map_or(0, |s| s.size().unwrap_or(0))).collect();
    let total = if removed { 0 } else { sizes.iter().sum() };
    let progress = crate::process::progress::bar(job.options.progress, total, "export");
    for (file, size) in job.files.iter().zip(sizes) {
        let decisions = cursor.take(&file.name)?;
        let start = sink.position();
        let written = match &file.source {
            None if removed => revisits(&decisions, ctx, sink, summary),
            None => Err(anyhow::anyhow!("the input file was not located")),
            Some(source) if corpus::is_corpus_file(&source.name_path()) => {
                corpus_file(file, source, &decisions, ctx, sink, summary)
            }
            Some(source) => archive_file(file, source, &decisions, ctx, sink, summary),
        };
        if let Err(e) = written {
            if sink.failed() {
                return Err(e.context("cannot write the export"));
            }
            if sink.position() != start {
                // The file changed between the two passes, inside a record
                // already begun: what is written is no longer whole.
                return Err(e.context(format!("{} changed while it was exported", file.path)));
            }
            tracing::error!("{}: {e:#}", file.path);
            summary.unreadable.push(format!("{}: {e:#}", file.path));
        }
        tracing::debug!(file = %file.name, decisions = decisions.len(), "exported");
        progress.inc(if removed { 0 } else { size });
    }
    progress.finish_and_clear();
    if cursor.strays > 0 {
        tracing::warn!(
            rows = cursor.strays,
            "decisions of files the run's ingest manifest does not list were left out"
        );
    }
    Ok(())
}

/// Writes one record as one gzip member of the WARC, its bytes (header
/// included) given by `write`; returns where the member is.
fn write_member(
    sink: &mut dyn RecordSink,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<(u64, u64)> {
    let start = sink.position();
    let mut gz = GzBuilder::new().write(sink.warc(), Compression::default());
    write(&mut gz)?;
    gz.finish()?;
    Ok((start, sink.position() - start))
}

/// One record of an input archive, as the second pass needs it.
#[derive(Debug, Clone)]
struct Record {
    offset: u64,
    extent: Extent,
    record_type: String,
    record_id: Option<String>,
    target_uri: Option<String>,
    concurrent_to: Vec<String>,
    refers_to: Option<String>,
    /// Block bytes present in the file.
    block_len: u64,
    /// Its own gzip member ends the record with exactly CR LF CR LF, so
    /// the member is copied as it is; otherwise (or unknown: false) the
    /// record is written again with that end.
    member_ends_well: bool,
    /// The block is an HTTP message (ARC conversions need to know).
    http: bool,
    /// What the index says of it (only for `--format cdxj`).
    entry: Option<Entry>,
}

impl Record {
    fn of(r: RawRecord, index: bool) -> Record {
        let http = r.block.starts_with(b"HTTP/");
        let entry = index.then(|| entry_of(&r, http));
        Record {
            offset: r.offset,
            extent: r.extent,
            record_type: r.record_type,
            record_id: r.record_id,
            target_uri: r.target_uri,
            concurrent_to: r.concurrent_to,
            refers_to: r.refers_to,
            block_len: r.block_len,
            // The scan checked that only blank bytes follow the block; the
            // members it found are copied as they are.
            member_ends_well: r.extent.own_member,
            http,
            entry,
        }
    }
}

/// The index entry of a record as it is in the input.
fn entry_of(r: &RawRecord, http: bool) -> Entry {
    let parsed = if http { crate::ingest::http::parse_response(&r.block).ok() } else { None };
    let digest = r.payload_digest.clone().or_else(|| {
        // A payload digest the record does not carry is computed, as pywb
        // does, when the whole block was read.
        if r.too_large || r.truncated {
            return None;
        }
        let payload = match &parsed {
            Some(p) => r.block.get(p.body_start..).unwrap_or_default(),
            None => &r.block[..],
        };
        Some(format!("sha1:{}", base32(&sha1_digest(payload))))
    });
    Entry {
        record_type: r.record_type.clone(),
        url: r.target_uri.clone().unwrap_or_default(),
        date: r.date.clone().unwrap_or_default(),
        content_type: r.content_type.clone(),
        http_mime: parsed.as_ref().and_then(|p| p.header("content-type").map(str::to_string)),
        status: parsed.map(|p| p.status),
        digest,
    }
}

fn sha1_digest(data: &[u8]) -> [u8; 20] {
    use sha1::Digest;
    sha1::Sha1::digest(data).into()
}

/// RFC 4648 base32 (the alphabet WARC digests use), without padding.
fn base32(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut out = String::with_capacity(bytes.len() * 8 / 5 + 1);
    let (mut buffer, mut bits) = (0u32, 0u32);
    for &b in bytes {
        buffer = (buffer << 8) | u32::from(b);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(ALPHABET[((buffer >> bits) & 31) as usize] as char);
        }
    }
    if bits > 0 {
        out.push(ALPHABET[((buffer << (5 - bits)) & 31) as usize] as char);
    }
    out
}

/// What happens to a record of the kept export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    Copied,
    /// A removed document.
    Removed,
    /// A request or metadata record of a removed document.
    Linked,
}

/// The fate of each record of a file whose removed documents start at
/// `removed` offsets (see the module doc).
fn plan(records: &[Record], removed: &HashSet<u64>) -> Vec<Fate> {
    let mut fate: Vec<Fate> =
        records.iter().map(|r| if removed.contains(&r.offset) { Fate::Removed } else { Fate::Copied }).collect();
    let belongs = |r: &Record| matches!(r.record_type.as_str(), "request" | "metadata");
    let by_id: HashMap<&str, usize> =
        records.iter().enumerate().filter_map(|(i, r)| r.record_id.as_deref().map(|id| (id, i))).collect();
    let removed_ids: HashSet<&str> = records
        .iter()
        .zip(&fate)
        .filter(|(_, f)| **f == Fate::Removed)
        .filter_map(|(r, _)| r.record_id.as_deref())
        .collect();
    // What kept records name: never left out for a removed one.
    let named_by_kept: HashSet<&str> = records
        .iter()
        .zip(&fate)
        .filter(|(r, f)| **f == Fate::Copied && !belongs(r))
        .flat_map(|(r, _)| r.concurrent_to.iter().map(String::as_str))
        .collect();
    for i in 0..records.len() {
        if fate[i] != Fate::Removed {
            continue;
        }
        for id in &records[i].concurrent_to {
            if let Some(&j) = by_id.get(id.as_str()) {
                if belongs(&records[j]) && fate[j] == Fate::Copied && !named_by_kept.contains(id.as_str()) {
                    fate[j] = Fate::Linked;
                }
            }
        }
        if i > 0 {
            let before = &records[i - 1];
            let unlinked = before.concurrent_to.is_empty()
                && before.record_id.as_deref().is_none_or(|id| !named_by_kept.contains(id));
            if before.record_type == "request"
                && fate[i - 1] == Fate::Copied
                && unlinked
                && before.target_uri.is_some()
                && before.target_uri == records[i].target_uri
            {
                fate[i - 1] = Fate::Linked;
            }
        }
    }
    for (r, f) in records.iter().zip(fate.iter_mut()) {
        let links_removed = r.concurrent_to.iter().any(|id| removed_ids.contains(id.as_str()))
            || (r.record_type == "metadata" && r.refers_to.as_deref().is_some_and(|id| removed_ids.contains(id)));
        if *f == Fate::Copied && belongs(r) && links_removed {
            *f = Fate::Linked;
        }
    }
    fate
}

/// How the records of an input archive are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// WARC/1.0 or 1.1: byte for byte.
    Warc1,
    /// WARC/0.x: rewritten as WARC/1.1.
    Warc0,
    /// ARC: rewritten as WARC/1.1.
    Arc,
}

impl Kind {
    /// The kind of a file whose first record has `format` (`WARC/1.0`, `ARC/1`, ...).
    fn of(format: &str) -> Kind {
        if format.starts_with("ARC") {
            Kind::Arc
        } else if format.starts_with("WARC/0.") {
            Kind::Warc0
        } else {
            Kind::Warc1
        }
    }
}

/// The kept export of one archive file.
fn archive_file(
    file: &RunFile,
    source: &Source,
    decisions: &[Decision],
    ctx: &Setup,
    sink: &mut dyn RecordSink,
    summary: &mut ExportSummary,
) -> Result<()> {
    let index = sink.indexes();
    let by_members = if ctx.per_record_warc.contains(&file.name) {
        records_by_members(source, decisions, ctx.max_block, index).context("cannot read the input file")?
    } else {
        None
    };
    let (records, unreadable, format) = match by_members {
        Some((records, unreadable)) => (records, unreadable, "WARC/1.0".to_string()),
        None => {
            let mut records = Vec::new();
            let mut unreadable = 0u64;
            let info = scan_archive_source(source, ctx.max_block, &mut |event| match event {
                ArchiveEvent::Record(r) => records.push(Record::of(r, index)),
                ArchiveEvent::Malformed { .. } => unreadable += 1,
            })
            .context("cannot read the input file")?;
            (records, unreadable, info.format)
        }
    };
    // Every document the run found must be a record here, where the run
    // found it; otherwise the file is not the one the run read, and
    // copying it would bring removed documents back.
    let offsets: HashSet<u64> = records.iter().map(|r| r.offset).collect();
    let astray = decisions.iter().filter(|d| !offsets.contains(&d.offset)).count();
    if astray > 0 {
        anyhow::bail!(
            "{astray} of its {} documents are not at the offsets where the run found them: the file changed since the \
             run (run the pipeline on it again), so nothing of it was written",
            decisions.len()
        );
    }
    let kind = Kind::of(&format);
    let removed: HashSet<u64> = decisions.iter().filter(|d| !d.kept).map(|d| d.offset).collect();
    let fates = plan(&records, &removed);
    let mut bytes = RecordBytes::new(source);
    let (mut copied, mut converted, mut damaged) = (0u64, 0u64, 0u64);
    for (record, fate) in records.iter().zip(&fates) {
        match fate {
            Fate::Removed => summary.add("documents_removed", 1),
            Fate::Linked => summary.add("linked_records_left_out", 1),
            Fate::Copied if !record.extent.intact => damaged += 1,
            Fate::Copied => {
                let (offset, length, entry) = match kind {
                    Kind::Warc1 => {
                        copied += 1;
                        copy_record(record, &mut bytes, sink)?
                    }
                    Kind::Warc0 => {
                        converted += 1;
                        convert_warc0(record, &file.name, ctx, &mut bytes, sink)?
                    }
                    Kind::Arc => {
                        converted += 1;
                        convert_arc(record, &format, &file.name, ctx, &mut bytes, sink)?
                    }
                };
                sink.written(entry.as_ref(), offset, length)?;
            }
        }
    }
    if damaged + unreadable > 0 {
        tracing::warn!(
            file = %file.path,
            damaged,
            unreadable,
            "records the input has damaged (cut short, or a block shorter or longer than its header says) and unreadable \
             bytes are not written"
        );
    }
    summary.add("records_read", records.len() as u64);
    summary.add("records_copied", copied);
    summary.add("records_converted", converted);
    summary.add("damaged_records_left_out", damaged);
    summary.add("unreadable_regions", unreadable);
    if records.is_empty() && unreadable > 0 {
        // Nothing of the file could be read (a compression the reader does
        // not know, say): the export lacks it, which the exit code says.
        summary.unreadable.push(format!("{}: no record could be read", file.path));
    }
    Ok(())
}

/// Trailing blank bytes a record's own gzip member may hold after its
/// block (its record end, CR LF CR LF, with some leeway for odd writers).
const MAX_RECORD_END: u32 = 64;

/// The first pass over a WARC/1.x file gzipped per record, without
/// decompressing the documents' blocks: each document's record is the gzip
/// member `decisions` names (offset and length), whose header is all that
/// is read, and its trailer's size tells whether the record is intact; only
/// the bytes between documents (requests, metadata, warcinfo, records that
/// are no documents) are scanned. The same records as a scan of the whole
/// file, at a fraction of the cost: most of a crawl is its documents.
/// `None` when the decisions do not fit the file as such (a length in the
/// decompressed stream, a record sharing its member): then the whole file
/// is scanned.
fn records_by_members(
    source: &Source,
    decisions: &[Decision],
    max_block: u64,
    index: bool,
) -> io::Result<Option<(Vec<Record>, u64)>> {
    let size = source.size()?;
    // Unbuffered: a few bytes are read at each end of a member, and its
    // start decompressed through a small buffer of its own.
    let mut raw = source.open()?;
    let (mut records, mut unreadable, mut at) = (Vec::new(), 0u64, 0u64);
    let scan = |range: std::ops::Range<u64>, records: &mut Vec<Record>, unreadable: &mut u64| {
        let mut fits = true;
        scan_archive_range(source, range.clone(), max_block, &mut |event| match event {
            ArchiveEvent::Record(mut r) if r.extent.own_member && r.extent.length.is_some() => {
                r.offset += range.start;
                records.push(Record::of(r, index));
            }
            ArchiveEvent::Record(_) => fits = false,
            ArchiveEvent::Malformed { .. } => *unreadable += 1,
        })?;
        io::Result::Ok(fits)
    };
    for d in decisions {
        let Some(length) = d.length else { return Ok(None) };
        if d.offset < at || d.offset.saturating_add(length) > size || length < 18 {
            return Ok(None);
        }
        if d.offset > at && !scan(at..d.offset, &mut records, &mut unreadable)? {
            return Ok(None);
        }
        let Some(record) = member_record(&mut raw, d.offset, length, index)? else { return Ok(None) };
        records.push(record);
        at = d.offset + length;
    }
    if at < size && !scan(at..size, &mut records, &mut unreadable)? {
        return Ok(None);
    }
    Ok(Some((records, unreadable)))
}

/// The record that is the gzip member `[offset, offset + length)` of the
/// file, from the start of the member only (its WARC header and, for the
/// index, its HTTP header; the whole member for an index when the record
/// carries no payload digest). `None` when it is no WARC/1.x record.
fn member_record(raw: &mut Box<dyn ReadSeek>, offset: u64, length: u64, index: bool) -> io::Result<Option<Record>> {
    use std::io::Seek;
    // A gzip member starts at `offset`, and the next one (or the end of
    // the file) at `offset + length`; the member's last 4 bytes are its
    // uncompressed size.
    let mut bytes = [0u8; 7];
    raw.seek(io::SeekFrom::Start(offset + length - 4))?;
    let got = read_up_to(raw, &mut bytes)?;
    if got < 4 || (got > 4 && !(got == 7 && bytes[4..] == GZIP_MEMBER[..])) {
        return Ok(None);
    }
    let uncompressed = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    raw.seek(io::SeekFrom::Start(offset))?;
    let mut magic = [0u8; 3];
    if read_up_to(raw, &mut magic)? < 3 || magic != GZIP_MEMBER {
        return Ok(None);
    }
    raw.seek(io::SeekFrom::Start(offset))?;
    let mut member = flate2::bufread::GzDecoder::new(BufReader::with_capacity(4096, raw.take(length)));
    let mut head = Vec::new();
    let mut chunk = [0u8; 4096];
    // The WARC header, and the HTTP header after it for the index.
    let (header_len, http_head) = loop {
        let n = match member.read(&mut chunk) {
            Ok(n) => n,
            // Not the member the decisions say: the whole file is scanned.
            Err(e) if matches!(e.kind(), io::ErrorKind::InvalidData | io::ErrorKind::InvalidInput) => return Ok(None),
            Err(e) => return Err(e),
        };
        head.extend_from_slice(&chunk[..n]);
        let header_len = header_end(&head, 0);
        // Only an HTTP block has a header of its own to find (a resource's
        // block may be megabytes without one).
        let http_head = header_len.and_then(|h| {
            let block = &head[h..];
            let may_be_http = b"HTTP/".starts_with(&block[..block.len().min(5)]);
            if index && may_be_http && n > 0 {
                header_end(&head, h)
            } else {
                Some(h)
            }
        });
        match (header_len, http_head) {
            (Some(h), Some(e)) => break (h, e),
            _ if n == 0 || head.len() > 1 << 20 => return Ok(None),
            _ => {}
        }
    };
    let Some(fields) = warc_fields(&head[..header_len]) else { return Ok(None) };
    let field = |name: &str| fields.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    let (Some(record_type), Some(block_len)) =
        (field("warc-type"), field("content-length").and_then(|v| v.parse::<u64>().ok()))
    else {
        return Ok(None);
    };
    let record_end = uncompressed.wrapping_sub((header_len as u64).wrapping_add(block_len) as u32);
    let block = &head[header_len..];
    let http = block.starts_with(b"HTTP/");
    let uri = |v: String| {
        let v = v.trim();
        v.strip_prefix('<').and_then(|v| v.strip_suffix('>')).unwrap_or(v).trim().to_string()
    };
    let mut record = Record {
        offset,
        // The stream position is not known, and not needed: the record is
        // read back as its member.
        extent: Extent {
            length: Some(length),
            own_member: true,
            stream_offset: 0,
            stream_length: u64::from(uncompressed),
            intact: record_end <= MAX_RECORD_END,
        },
        record_type,
        record_id: field("warc-record-id"),
        target_uri: field("warc-target-uri").map(uri),
        concurrent_to: fields.iter().filter(|(n, _)| n == "warc-concurrent-to").map(|(_, v)| v.clone()).collect(),
        refers_to: field("warc-refers-to").or_else(|| field("warc-refers-to-target-uri")),
        block_len,
        member_ends_well: record_end == 4,
        http,
        entry: None,
    };
    if index {
        let parsed =
            if http { crate::ingest::http::parse_response(&block[..http_head - header_len]).ok() } else { None };
        let body_start = parsed.as_ref().map_or(0, |p| p.body_start as u64);
        let digest = match field("warc-payload-digest") {
            Some(d) => Some(d),
            None if record.extent.intact => {
                // The payload hashed: the member decompressed again, whole.
                use sha1::Digest;
                drop(member);
                raw.seek(io::SeekFrom::Start(offset))?;
                let mut whole = flate2::bufread::GzDecoder::new(BufReader::with_capacity(64 << 10, raw.take(length)));
                io::copy(&mut (&mut whole).take(header_len as u64 + body_start), &mut io::sink())?;
                let mut hasher = sha1::Sha1::new();
                io::copy(&mut whole.take(block_len.saturating_sub(body_start)), &mut hasher)?;
                Some(format!("sha1:{}", base32(&hasher.finalize())))
            }
            None => None,
        };
        record.entry = Some(Entry {
            record_type: record.record_type.clone(),
            url: record.target_uri.clone().unwrap_or_default(),
            date: field("warc-date").unwrap_or_default(),
            content_type: field("content-type"),
            http_mime: parsed.as_ref().and_then(|p| p.header("content-type").map(str::to_string)),
            status: parsed.map(|p| p.status),
            digest,
        });
    }
    Ok(Some(record))
}

/// The first bytes of a gzip member (deflate).
const GZIP_MEMBER: [u8; 3] = [0x1f, 0x8b, 0x08];

/// Reads until `buf` is full or the data ends; returns how many bytes.
fn read_up_to(r: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Where the header that starts at `from` ends: after its blank line (CR
/// LF or LF line ends); `None` when `bytes` do not hold all of it.
fn header_end(bytes: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    while at < bytes.len() {
        let line_end = at + bytes[at..].iter().position(|b| *b == b'\n')?;
        let line = &bytes[at..line_end];
        if line.iter().all(|b| *b == b'\r') {
            return Some(line_end + 1);
        }
        at = line_end + 1;
    }
    None
}

/// The fields of a WARC/1.x header (its version line first): names
/// lowercased, values trimmed, continuation lines joined, as the archive
/// reader reads them; `None` when it is no WARC/1.x header.
fn warc_fields(header: &[u8]) -> Option<Vec<(String, String)>> {
    let text = String::from_utf8_lossy(header);
    let mut lines = text.split('\n').map(|l| l.trim_end_matches('\r'));
    if !lines.next()?.starts_with("WARC/1.") {
        return None;
    }
    let mut fields: Vec<(String, String)> = Vec::new();
    for line in lines {
        if line.starts_with([' ', '\t']) {
            if let Some(last) = fields.last_mut() {
                last.1.push(' ');
                last.1.push_str(line.trim());
            }
        } else if let Some((name, value)) = line.split_once(':') {
            fields.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
    Some(fields)
}

/// A WARC/1.x record as it is: its own gzip member copied, or its bytes
/// gzipped.
fn copy_record(
    record: &Record,
    bytes: &mut RecordBytes,
    sink: &mut dyn RecordSink,
) -> Result<(u64, u64, Option<Entry>)> {
    let length = record.extent.length.filter(|_| record.extent.own_member && record.member_ends_well);
    let (offset, length) = match length {
        Some(length) => {
            let start = sink.position();
            bytes.copy_member(record.offset, length, sink.warc())?;
            (start, length)
        }
        None => {
            write_member(sink, |out| bytes.with_record(record, |r| copy_with_record_end(r, record.block_len, out)))?
        }
    };
    Ok((offset, length, record.entry.clone()))
}

/// A WARC/0.x record rewritten as WARC/1.1 (see [`legacy`]).
fn convert_warc0(
    record: &Record,
    file: &str,
    ctx: &Setup,
    bytes: &mut RecordBytes,
    sink: &mut dyn RecordSink,
) -> Result<(u64, u64, Option<Entry>)> {
    let id = legacy::record_id(file, record.offset);
    let mut date = None;
    let place = bytes.with_record(record, |r| {
        let version = read_line(r)?;
        let mut lines: Vec<String> = Vec::new();
        loop {
            let line = read_line(r)?;
            if line.is_empty() {
                break;
            }
            match lines.last_mut() {
                Some(last) if line.starts_with([' ', '\t']) => {
                    last.push(' ');
                    last.push_str(line.trim());
                }
                _ => lines.push(line),
            }
        }
        let header = legacy::warc0_header(&version, &lines, record.block_len, &id, &ctx.fallback_date);
        date = field_value(&header, "WARC-Date");
        write_member(sink, |out| {
            out.write_all(&header)?;
            copy_exactly(r, out, record.block_len)?;
            out.write_all(b"\r\n\r\n")
        })
    })?;
    let entry = record.entry.clone().map(|e| Entry { date: date.unwrap_or(e.date.clone()), ..e });
    Ok((place.0, place.1, entry))
}

/// An ARC record rewritten as WARC/1.1 (see [`legacy`]).
fn convert_arc(
    record: &Record,
    version: &str,
    file: &str,
    ctx: &Setup,
    bytes: &mut RecordBytes,
    sink: &mut dyn RecordSink,
) -> Result<(u64, u64, Option<Entry>)> {
    let id = legacy::record_id(file, record.offset);
    let mut header = Vec::new();
    let place = bytes.with_record(record, |r| {
        let line = read_line(r)?;
        let arc = ArcRecord { line: &line, version, http: record.http, id: &id, fallback_date: &ctx.fallback_date };
        header = legacy::arc_header(&arc, record.block_len);
        write_member(sink, |out| {
            out.write_all(&header)?;
            copy_exactly(r, out, record.block_len)?;
            out.write_all(b"\r\n\r\n")
        })
    })?;
    let entry = record.entry.clone().map(|e| Entry {
        record_type: field_value(&header, "WARC-Type").unwrap_or_default(),
        url: field_value(&header, "WARC-Target-URI").unwrap_or_default(),
        date: field_value(&header, "WARC-Date").unwrap_or_default(),
        content_type: field_value(&header, "Content-Type"),
        ..e
    });
    Ok((place.0, place.1, entry))
}

/// The value of field `name` in a header we wrote.
fn field_value(header: &[u8], name: &str) -> Option<String> {
    let text = String::from_utf8_lossy(header);
    text.split("\r\n").find_map(|line| line.strip_prefix(name)?.strip_prefix(": ").map(str::to_string))
}

/// One line without its line end (CR LF or LF); empty at the end of the data.
fn read_line(r: &mut dyn BufRead) -> io::Result<String> {
    let mut line = Vec::new();
    r.read_until(b'\n', &mut line)?;
    while line.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        line.pop();
    }
    Ok(String::from_utf8_lossy(&line).into_owned())
}

/// Copies a WARC record's header and block as they are and ends it with
/// CR LF CR LF, whatever bytes the input had there (some writers leave NUL
/// bytes or spaces, or nothing at the end of the file): a reader that
/// meets other bytes after the block takes them for a wrong Content-Length.
fn copy_with_record_end(r: &mut dyn BufRead, block_len: u64, out: &mut dyn Write) -> io::Result<()> {
    let mut line = Vec::new();
    loop {
        line.clear();
        if r.read_until(b'\n', &mut line)? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the record header ends early: the input changed",
            ));
        }
        out.write_all(&line)?;
        if line == b"\r\n" || line == b"\n" {
            break;
        }
    }
    copy_exactly(r, out, block_len)?;
    out.write_all(b"\r\n\r\n")
}

/// Copies exactly `n` bytes.
fn copy_exactly(r: &mut dyn Read, out: &mut dyn Write, n: u64) -> io::Result<()> {
    let copied = io::copy(&mut r.take(n), out)?;
    if copied < n {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, format!("{copied} of {n} bytes: the input changed")));
    }
    Ok(())
}

/// Reads records' bytes out of an input file again: a gzip member as it
/// is in the file, or a record's bytes in the decompressed stream (the
/// stream read forward only; records come in file order). Both readers
/// are opened when first needed.
struct RecordBytes<'a> {
    source: &'a Source,
    raw: Option<(BufReader<Box<dyn ReadSeek>>, u64)>,
    stream: Option<(BufReader<StreamReader>, u64)>,
}

impl<'a> RecordBytes<'a> {
    fn new(source: &'a Source) -> RecordBytes<'a> {
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
    fn copy_member(&mut self, offset: u64, length: u64, out: &mut dyn Write) -> io::Result<()> {
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
    fn with_record<T>(&mut self, record: &Record, f: impl FnOnce(&mut dyn BufRead) -> io::Result<T>) -> io::Result<T> {
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

/// The kept documents of a corpus file, each as a WARC/1.1 record (see
/// [`legacy::corpus_header`]); rejected lines are no records and stay out.
fn corpus_file(
    file: &RunFile,
    source: &Source,
    decisions: &[Decision],
    ctx: &Setup,
    sink: &mut dyn RecordSink,
    summary: &mut ExportSummary,
) -> Result<()> {
    let kept: Vec<&Decision> = decisions.iter().filter(|d| d.kept).collect();
    summary.add("documents_removed", (decisions.len() - kept.len()) as u64);
    let mut write = |d: &Decision, format: &str, text: &str, html: bool, fields: &str| -> Result<()> {
        let id = legacy::record_id(&file.name, d.offset);
        let date = d.crawl_date.as_deref().and_then(legacy::w3c_utc).unwrap_or_else(|| ctx.fallback_date.clone());
        let record = CorpusRecord { url: &d.url, id: &id, date: &date, format, html, fields };
        let header = legacy::corpus_header(&record, text.len() as u64);
        let (offset, length) = write_member(sink, |out| {
            out.write_all(&header)?;
            out.write_all(text.as_bytes())?;
            out.write_all(b"\r\n\r\n")
        })?;
        let entry = sink.indexes().then(|| Entry {
            record_type: if html { "resource" } else { "conversion" }.into(),
            url: legacy::clean_uri(&d.url),
            date: date.clone(),
            content_type: Some(if html { "text/html" } else { "text/plain" }.into()),
            digest: Some(format!("sha1:{}", base32(&sha1_digest(text.as_bytes())))),
            ..Entry::default()
        });
        sink.written(entry.as_ref(), offset, length)?;
        summary.add("records_converted", 1);
        Ok(())
    };
    match corpus::open_lines(source).context("cannot read the input file")? {
        Some(stream) => {
            let mut lines = BufReader::with_capacity(1 << 20, stream);
            let mut position = 0u64;
            let mut line = Vec::new();
            for d in kept {
                let Some(gap) = d.offset.checked_sub(position) else {
                    anyhow::bail!("two documents share the line at {}: the corpus changed since the run", d.offset);
                };
                let skipped = io::copy(&mut (&mut lines).take(gap), &mut io::sink())?;
                position += skipped;
                line.clear();
                position += lines.read_until(b'\n', &mut line)? as u64;
                let value: serde_json::Value =
                    serde_json::from_slice(&line).with_context(|| format!("line at {} is no longer JSON", d.offset))?;
                let serde_json::Value::Object(mut fields) = value else {
                    anyhow::bail!("line at {} is no longer a JSON object", d.offset);
                };
                let as_text = |v: Option<serde_json::Value>| match v {
                    Some(serde_json::Value::String(s)) => Some(s),
                    _ => None,
                };
                let (text, html) = (as_text(fields.remove("text")), as_text(fields.remove("html")));
                let rest = serde_json::to_string(&fields)?;
                let Some((body, html)) = body_of(text.as_deref(), html.as_deref()) else {
                    anyhow::bail!("line at {} has no text any more", d.offset);
                };
                write(d, "jsonl", body, html, &rest)?;
            }
        }
        None => parquet_rows(source, &kept, &mut |d, text, html, rest| write(d, "parquet", text, html, rest))?,
    }
    Ok(())
}

/// What a corpus record holds: its text when ingest read the text
/// ([`corpus::text_is_used`]), else its HTML (then `true`).
fn body_of<'a>(text: Option<&'a str>, html: Option<&'a str>) -> Option<(&'a str, bool)> {
    match (corpus::text_is_used(text), text, html) {
        (true, Some(text), _) => Some((text, false)),
        (_, _, Some(html)) => Some((html, true)),
        _ => None,
    }
}

/// Calls `write` for each row of a Parquet corpus that `kept` names (by
/// row number, in order) with its text (or HTML, then `true`) and its other
/// columns as one JSON object.
fn parquet_rows(
    source: &Source,
    kept: &[&Decision],
    write: &mut dyn FnMut(&Decision, &str, bool, &str) -> Result<()>,
) -> Result<()> {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let reader = match source.random_access().context("cannot read the input file")? {
        RandomAccess::File(f) => ParquetRecordBatchReaderBuilder::try_new(f)?.build()?,
        RandomAccess::Bytes(b) => ParquetRecordBatchReaderBuilder::try_new(b)?.build()?,
    };
    let mut wanted = kept.iter().peekable();
    let mut first_row = 0u64;
    for batch in reader {
        let batch = batch?;
        let rows = batch.num_rows() as u64;
        if wanted.peek().is_none_or(|d| d.offset >= first_row + rows) {
            first_row += rows;
            continue;
        }
        let text_of = |name: &str| -> Result<Option<arrow::array::ArrayRef>> {
            batch
                .column_by_name(name)
                .map(|c| arrow::compute::cast(c, &arrow::datatypes::DataType::Utf8))
                .transpose()
                .map_err(Into::into)
        };
        let (texts, htmls) = (text_of("text")?, text_of("html")?);
        let others: Vec<usize> = (0..batch.num_columns())
            .filter(|&i| !["text", "html"].contains(&batch.schema().field(i).name().as_str()))
            .collect();
        let mut json = Vec::new();
        let mut writer = arrow::json::LineDelimitedWriter::new(&mut json);
        writer.write(&batch.project(&others)?)?;
        writer.finish()?;
        let fields: Vec<&str> = std::str::from_utf8(&json)?.lines().collect();
        while let Some(d) = wanted.next_if(|d| d.offset < first_row + rows) {
            let i = (d.offset - first_row) as usize;
            let value = |column: &Option<arrow::array::ArrayRef>| {
                use arrow::array::{Array, AsArray};
                column.as_ref().filter(|c| c.is_valid(i)).map(|c| c.as_string::<i32>().value(i).to_string())
            };
            let (text, html) = (value(&texts), value(&htmls));
            let rest = fields.get(i).copied().unwrap_or("{}");
            let Some((body, html)) = body_of(text.as_deref(), html.as_deref()) else {
                anyhow::bail!("row {} has no text any more", d.offset);
            };
            write(d, body, html, rest)?;
        }
        first_row += rows;
    }
    Ok(())
}

/// The removed export of one file: a revisit record per removed document.
fn revisits(decisions: &[Decision], ctx: &Setup, sink: &mut dyn RecordSink, summary: &mut ExportSummary) -> Result<()> {
    for d in decisions.iter().filter(|d| !d.kept) {
        let Some(kept) = &d.kept_copy else {
            summary.add("removed_without_kept_copy", 1);
            continue;
        };
        // A WARC record (any version) keeps its id, whatever its shape; an
        // ARC record (no id) or a corpus line gets the id its conversion
        // gets.
        let kept_id = match &kept.record_id {
            Some(id) if !corpus::is_corpus_file(std::path::Path::new(&kept.warc_file)) => id.clone(),
            _ => legacy::record_id(&kept.warc_file, kept.warc_offset),
        };
        let date = d.crawl_date.as_deref().and_then(legacy::w3c_utc).unwrap_or_else(|| ctx.fallback_date.clone());
        // A kept copy without a valid date was written with the fallback
        // date, as this revisit is.
        let kept_date =
            kept.crawl_date.as_deref().and_then(legacy::w3c_utc).unwrap_or_else(|| ctx.fallback_date.clone());
        let record = legacy::revisit_record(&Revisit {
            doc_id: d.doc_id,
            url: &d.url,
            date: &date,
            reason: &d.reason,
            similarity: d.similarity,
            kept_url: &kept.url,
            kept_date: &kept_date,
            kept_id: Some(&kept_id),
        });
        let (offset, length) = write_member(sink, |out| out.write_all(&record))?;
        let entry = Entry { record_type: "revisit".into(), url: legacy::clean_uri(&d.url), date, ..Entry::default() };
        sink.written(Some(&entry), offset, length)?;
        summary.add("revisit_records", 1);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(offset: u64, record_type: &str, id: &str, uri: &str, concurrent: &[&str]) -> Record {
        Record {
            offset,
            extent: Extent::default(),
            record_type: record_type.into(),
            record_id: (!id.is_empty()).then(|| id.to_string()),
            target_uri: Some(uri.into()),
            concurrent_to: concurrent.iter().map(|s| s.to_string()).collect(),
            refers_to: None,
            block_len: 0,
            member_ends_well: false,
            http: false,
            entry: None,
        }
    }

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
    }

    #[test]
    fn requests_and_metadata_of_removed_documents_go_with_them() {
        use Fate::*;
        // Heritrix: response, then request and metadata naming it.
        let heritrix = [
            record(0, "warcinfo", "<w>", "", &[]),
            record(1, "response", "<r1>", "http://a/", &[]),
            record(2, "request", "<q1>", "http://a/", &["<r1>"]),
            record(3, "metadata", "<m1>", "http://a/", &["<r1>"]),
            record(4, "response", "<r2>", "http://b/", &[]),
            record(5, "request", "<q2>", "http://b/", &["<r2>"]),
        ];
        assert_eq!(plan(&heritrix, &HashSet::from([1])), [Copied, Removed, Linked, Linked, Copied, Copied]);
        // wget: the request first, named by the response.
        let wget = [
            record(0, "request", "<q1>", "http://a/", &[]),
            record(1, "response", "<r1>", "http://a/", &["<q1>"]),
            record(2, "request", "<q2>", "http://b/", &[]),
            record(3, "response", "<r2>", "http://b/", &["<q2>"]),
        ];
        assert_eq!(plan(&wget, &HashSet::from([3])), [Copied, Copied, Linked, Removed]);
        // No links at all: the request for the same URI right before.
        let bare = [
            record(0, "request", "", "http://a/", &[]),
            record(1, "response", "", "http://a/", &[]),
            record(2, "request", "", "http://b/", &[]),
            record(3, "response", "", "http://c/", &[]),
        ];
        assert_eq!(plan(&bare, &HashSet::from([1, 3])), [Linked, Removed, Copied, Removed]);
        // A request a kept record names stays, whatever is next to it.
        let shared = [
            record(0, "request", "<q>", "http://a/", &[]),
            record(1, "response", "<r1>", "http://a/", &["<q>"]),
            record(2, "response", "<r2>", "http://a/", &["<q>"]),
        ];
        assert_eq!(plan(&shared, &HashSet::from([2])), [Copied, Copied, Removed]);
    }

    /// `records` as one file, each record a gzip member of its own.
    fn per_record_gzip(name: &str, records: &[String]) -> Source {
        use std::io::Write;
        let dir = std::env::temp_dir().join(format!("neardup-export-warc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut file = Vec::new();
        for r in records {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            gz.write_all(r.as_bytes()).unwrap();
            file.extend(gz.finish().unwrap());
        }
        let path = dir.join(name);
        std::fs::write(&path, file).unwrap();
        Source::File(path)
    }

    fn warc(rtype: &str, id: &str, extra: &str, block: &str) -> String {
        format!(
            "WARC/1.0\r\nWARC-Type: {rtype}\r\nWARC-Record-ID: {id}\r\nWARC-Target-URI: http://e.com/\r\n\
             WARC-Date: 2020-01-01T00:00:00Z\r\n{extra}Content-Length: {}\r\n\r\n{block}\r\n\r\n",
            block.len()
        )
    }

    #[test]
    fn reading_documents_from_their_members_finds_what_a_whole_scan_finds() {
        let page = "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>page</p>";
        let records = [
            warc("warcinfo", "<w>", "Content-Type: application/warc-fields\r\n", "software: x"),
            warc("request", "<q>", "WARC-Concurrent-To: <r1>\r\n", "GET / HTTP/1.1\r\n\r\n"),
            warc("response", "<r1>", "WARC-Payload-Digest: sha1:ABC\r\n", page),
            warc("metadata", "<m>", "WARC-Concurrent-To: <r1>\r\n", "via: x"),
            warc("response", "<r2>", "Content-Type: application/http; msgtype=response\r\n", page),
            warc("revisit", "<v>", "WARC-Refers-To: <r2>\r\n", ""),
        ];
        let source = per_record_gzip("members.warc.gz", &records);
        let mut whole = Vec::new();
        scan_archive_source(&source, 1 << 20, &mut |e| {
            if let ArchiveEvent::Record(r) = e {
                whole.push(Record::of(r, true));
            }
        })
        .unwrap();
        let decision = |r: &Record| Decision {
            offset: r.offset,
            length: r.extent.length,
            doc_id: 0,
            url: String::new(),
            crawl_date: None,
            kept: true,
            reason: "unique".into(),
            similarity: None,
            kept_copy: None,
        };
        let documents = [decision(&whole[2]), decision(&whole[4])];
        let (fast, unreadable) = records_by_members(&source, &documents, 1 << 20, true).unwrap().expect("fits");
        assert_eq!(unreadable, 0);
        let view = |r: &Record| {
            let x = r.extent;
            format!(
                "{} {:?} {} {} {} {:?} {:?} {:?} {:?} {} {} {:?}",
                r.offset,
                x.length,
                x.own_member,
                x.intact,
                r.record_type,
                r.record_id,
                r.target_uri,
                r.concurrent_to,
                r.refers_to,
                r.block_len,
                r.http,
                r.entry
            )
        };
        assert_eq!(fast.iter().map(view).collect::<Vec<_>>(), whole.iter().map(view).collect::<Vec<_>>());
        assert!(fast[4].entry.as_ref().unwrap().digest.as_deref().is_some_and(|d| d.starts_with("sha1:")));
        // A length that is not its member's: the whole file is scanned instead.
        let wrong = [Decision { length: Some(documents[0].length.unwrap() + 3), ..decision(&whole[2]) }];
        assert!(records_by_members(&source, &wrong, 1 << 20, false).unwrap().is_none());
    }

    #[test]
    fn base32_as_warc_digests_write_it() {
        // SHA-1 of the empty string, as WARC digests spell it.
        assert_eq!(base32(&sha1_digest(b"")), "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
        assert_eq!(base32(b"f"), "MY");
        assert_eq!(base32(b"foobar"), "MZXW6YTBOI");
    }
}

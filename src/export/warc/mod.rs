//! `--format warc`, and the WARC that `--format cdxj` indexes.
//!
//! Kept export: every input file of the task is read again, in two passes.
//! The first scans it with the ingest's archive reader (same block cap,
//! hence the same records at the same offsets as `documents`) and keeps
//! each record's header fields and extent; the second writes, in file
//! order, every record except the removed documents and the `request` and
//! `metadata` records that belong to them ([`plan::plan`]): linked by
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
//! Removed export (`--removed`): each removed document becomes a record
//! naming its kept copy ([`revisits::revisits`]): a standard
//! `identical-payload-digest` revisit, with the removed capture's HTTP
//! header read again from the input, where its payload is byte for byte
//! the kept copy's; a `metadata` note, which replay tools do not resolve
//! to another page, for every other removed document.
//!
//! Memory: one input file's decisions and record headers, and one record's
//! block (capped as ingest caps it) during the scan.
//!
//! The parts: [`sink`] (where records go), [`scan`] (the first pass),
//! `plan` (which records are left out), [`record_bytes`] (a record's bytes
//! read again), [`corpus`] (corpus files), `revisits`; this file puts them
//! together and rewrites ARC and WARC/0.x records.

mod corpus;
mod plan;
mod record_bytes;
mod revisits;
mod scan;
mod sink;

use anyhow::{Context, Result};
use std::collections::HashSet;
use std::io;

use super::cdxj::{Entry, Sorter};
use super::legacy::{self, Converted};
use super::output::Destination;
use crate::export::job::{fallback_date, part_name, Decision, DecisionCursor, ExportSummary, Format, Job, RunFile};
use crate::ingest::corpus as corpus_files;
use crate::ingest::source::Source;
use corpus::corpus_file;
use plan::{plan, Fate};
use record_bytes::{copy_exactly, copy_with_record_end, RecordBytes};
use revisits::{revisits, InputReading};
use scan::Record;
use sink::{write_member, Counting, Index, RecordSink, WarcFile};

/// Writes this task's WARC (or its index) to file `name` of `destination`;
/// returns where it went.
pub(super) fn export(job: &Job, destination: &Destination, name: &str, summary: &mut ExportSummary) -> Result<String> {
    let file = destination.create(name)?;
    let ctx = Setup::of(job)?;
    match job.options.format {
        Format::Cdxj => {
            let warc_name = part_name(Format::Warc, job.options.removed, job.options.shard);
            let mut index = Index {
                warc: Counting::new(io::sink()),
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
            let mut warc = WarcFile(Counting::new(file));
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
        let manifest = crate::tables::manifest::finished_manifest(job.out, "ingest");
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
            None => Err(anyhow::anyhow!("the input file was not located")),
            Some(source) if removed => {
                let reading = InputReading {
                    max_block: ctx.max_block,
                    per_record_warc: ctx.per_record_warc.contains(&file.name),
                };
                revisits(source, &decisions, &reading, &ctx.fallback_date, sink, summary)
            }
            Some(source) if corpus_files::is_corpus_file(&source.name_path()) => {
                corpus_file(file, source, &decisions, &ctx.fallback_date, sink, summary)
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
    let per_record_warc = ctx.per_record_warc.contains(&file.name);
    let (records, unreadable, format) =
        scan::records(source, decisions, per_record_warc, ctx.max_block, sink.indexes())?;
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
                    Kind::Warc0 | Kind::Arc => {
                        converted += 1;
                        convert(record, kind, &format, &file.name, ctx, &mut bytes, sink)?
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

/// An ARC or WARC/0.x record rewritten as WARC/1.1 (see [`legacy`]), and
/// its index entry, which says what the new header says.
fn convert(
    record: &Record,
    kind: Kind,
    format: &str,
    file: &str,
    ctx: &Setup,
    bytes: &mut RecordBytes,
    sink: &mut dyn RecordSink,
) -> Result<(u64, u64, Option<Entry>)> {
    let id = legacy::record_id(file, record.offset);
    let converted = Converted { format, http: record.http, id: &id, fallback_date: &ctx.fallback_date };
    let mut header = Vec::new();
    let place = bytes.with_record(record, |r| {
        header = legacy::converted_header(r, &converted, record.block_len)?;
        write_member(sink, |out| {
            out.write_all(&header)?;
            copy_exactly(r, out, record.block_len)?;
            out.write_all(b"\r\n\r\n")
        })
    })?;
    let field = |name: &str| legacy::field_value(&header, name);
    let entry = record.entry.clone().map(|e| match kind {
        Kind::Arc => Entry {
            record_type: field("WARC-Type").unwrap_or_default(),
            url: field("WARC-Target-URI").unwrap_or_default(),
            date: field("WARC-Date").unwrap_or_default(),
            content_type: field("Content-Type"),
            ..e
        },
        _ => Entry { date: field("WARC-Date").unwrap_or(e.date.clone()), ..e },
    });
    Ok((place.0, place.1, entry))
}

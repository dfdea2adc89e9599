//! Ingest: WARC / ARC files and text corpora → `documents`, `revisits` and
//! `rejects`.
//!
//! Reading ([`archive`]) is sequential per file and streams records; turning
//! a record into a document ([`record`]: HTTP parsing ([`http`]), content
//! decoding, charset and HTML text extraction ([`html`])) is pure and runs in
//! parallel. [`ingest_file`] ties the two together for one file and hands
//! the outcomes to the caller in file order; it writes nothing itself.
//! Text corpora (JSON Lines, Parquet; [`corpus`]) take the same way out.

pub mod archive;
pub mod canonical;
pub mod corpus;
pub mod digest;
pub mod html;
mod html_scan;
pub mod http;
pub mod inputs;
mod markup;
mod page_tree;
pub mod record;
pub mod settings;
pub mod source;
pub mod summary;

use crate::ingest::settings::IngestConfig;
use archive::{scan_archive_source, ArchiveEvent};
use rayon::prelude::*;
use record::{process_record, Outcome, Reject};
use source::Source;
pub use summary::FileSummary;
use summary::{BATCH_BYTES, BATCH_RECORDS};

/// Room for the HTTP header on top of the payload limit when capping blocks.
const HEADER_ALLOWANCE: u64 = 1 << 20;

/// Reads one archive and calls `sink` with the outcome of every record, in
/// file order. Record processing runs on the rayon pool in batches; `sink`
/// is called on the calling thread. Returns `Err` only when the file cannot
/// be opened or read; damaged content becomes `Reject` outcomes. `file` is
/// the name the file goes by in ids and rows: its path relative to the input
/// folder it was found in (so ids do not depend on where the crawl lives).
/// Files named like text corpora ([`corpus::is_corpus_file`]) are read by
/// [`corpus::ingest_corpus`].
pub fn ingest_file(
    source: &Source,
    file: &str,
    cfg: &IngestConfig,
    sink: &mut dyn FnMut(Outcome),
) -> std::io::Result<FileSummary> {
    if corpus::is_corpus_file(&source.name_path()) {
        return corpus::ingest_corpus(source, file, cfg, sink);
    }
    let mut summary = FileSummary::new(file);
    let file = file.to_string();
    let mut batch: Vec<ArchiveEvent> = Vec::new();
    let mut batch_bytes = 0usize;
    let mut emit = |outcome: Outcome, summary: &mut FileSummary| {
        summary.count(&outcome);
        sink(outcome);
    };
    let mut flush = |batch: &mut Vec<ArchiveEvent>, summary: &mut FileSummary| {
        let outcomes: Vec<Outcome> = batch.par_iter().map(|ev| outcome_of(ev, &file, cfg)).collect();
        batch.clear();
        for o in outcomes {
            emit(o, summary);
        }
    };
    let max_block = max_block_bytes(cfg.max_payload_bytes);
    let info = scan_archive_source(source, max_block, &mut |ev| {
        if let ArchiveEvent::Record(r) = &ev {
            batch_bytes += r.block.len();
        }
        batch.push(ev);
        if batch.len() >= BATCH_RECORDS || batch_bytes >= BATCH_BYTES {
            flush(&mut batch, &mut summary);
            batch_bytes = 0;
        }
    })?;
    flush(&mut batch, &mut summary);
    summary.format = info.format;
    summary.compression = info.compression;
    summary.bytes = info.bytes;
    summary.cut = info.cut;
    Ok(summary)
}

/// The archive block cap ingest reads with (`max_block_bytes` of
/// [`scan_archive_source`]) under a payload limit: a reader that must find
/// the same records at the same offsets (the export) scans with it too, since
/// the cap decides how a block with a wrong length is resynchronized.
pub fn max_block_bytes(max_payload_bytes: u64) -> u64 {
    max_payload_bytes.saturating_add(HEADER_ALLOWANCE)
}

/// The outcome of one archive event.
fn outcome_of(ev: &ArchiveEvent, file: &str, cfg: &IngestConfig) -> Outcome {
    match ev {
        ArchiveEvent::Record(r) => process_record(r, file, cfg),
        ArchiveEvent::Malformed { offset, record_type, target_uri, reason, detail } => Outcome::Reject(Reject {
            warc_file: file.to_string(),
            warc_offset: *offset,
            record_type: record_type.clone().unwrap_or_else(|| "unknown".into()),
            url: target_uri.clone(),
            reason: reason.clone(),
            detail: detail.clone(),
        }),
    }
}

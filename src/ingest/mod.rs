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
pub mod http;
pub mod inputs;
mod page_tree;
pub mod record;
pub mod settings;
pub mod source;

use crate::ingest::settings::IngestConfig;
use archive::{scan_archive_source, ArchiveEvent};
use rayon::prelude::*;
use record::{process_record, Outcome, Reject};
use source::Source;

/// Counts for one ingested file. `records == documents + revisits + rejects
/// + skipped` always holds (a malformed region counts as one record).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSummary {
    /// File name (no directories), as used in the output rows.
    pub file: String,
    /// Archive format of the first record (`WARC/1.0`, `ARC/1`, ...).
    pub format: String,
    /// `none`, `gzip_per_record`, `gzip_whole_file`, or an unsupported one.
    pub compression: String,
    /// Size of the file in bytes.
    pub bytes: u64,
    /// Records and malformed regions read.
    pub records: u64,
    /// Outcomes that are documents.
    pub documents: u64,
    /// Outcomes that are revisits.
    pub revisits: u64,
    /// Outcomes that are rejects (including malformed regions).
    pub rejects: u64,
    /// Outcomes that are skipped record types.
    pub skipped: u64,
    /// Documents whose HTML was simplified to stay within the limits
    /// (nested deeper than `max_html_depth`, or a tag with more than
    /// `max_html_attributes` attributes); a subset of `documents`.
    pub flattened: u64,
    /// Documents whose text was cut to `max_text_bytes`; a subset of
    /// `documents`.
    pub text_truncated: u64,
    /// Documents that are not content ([`record::not_content`]); a subset
    /// of `documents`.
    pub not_content: u64,
    /// Where the end of the file cut it short (a crawl file only): what was
    /// read before is kept, the cut record is a `truncated` reject, and the
    /// run tells (exit code 3).
    pub cut: Option<archive::Cut>,
}

impl FileSummary {
    /// Empty counts for `file`.
    pub fn new(file: &str) -> FileSummary {
        FileSummary {
            file: file.to_string(),
            format: String::new(),
            compression: String::new(),
            bytes: 0,
            records: 0,
            documents: 0,
            revisits: 0,
            rejects: 0,
            skipped: 0,
            flattened: 0,
            text_truncated: 0,
            not_content: 0,
            cut: None,
        }
    }

    /// Counts one outcome as a record of its kind.
    pub fn count(&mut self, outcome: &Outcome) {
        self.records += 1;
        match outcome {
            Outcome::Document(d) => {
                self.documents += 1;
                self.flattened += u64::from(d.flattened);
                self.text_truncated += u64::from(d.text_truncated);
                self.not_content += u64::from(d.not_content.is_some());
            }
            Outcome::Revisit(_) => self.revisits += 1,
            Outcome::Reject(_) => self.rejects += 1,
            Outcome::Skipped { .. } => self.skipped += 1,
        }
    }
}

/// Records are processed in parallel batches of at most this many records ...
const BATCH_RECORDS: usize = 256;
/// ... or this many block bytes, which bounds the memory held per file.
const BATCH_BYTES: usize = 64 << 20;
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

//! What the export's formats share: the job (the run's folder, its input
//! files and its decisions), the decisions read in file order with the
//! kept copy each removed page points to, and the names of the parts. A
//! module of its own so that the formats ([`super::rows`], [`super::warc`])
//! and the command ([`super::export`]) import it, and none of them the
//! other.

use anyhow::Result;
use arrow::array::{Array, RecordBatch};
use futures::StreamExt;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::legacy;
use crate::ingest::source::Source;
use crate::tables::columns::decisions;
use crate::tables::shard::Shard;

/// What `pipeline export --format` writes: each format is one type (see
/// the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One row per document with its text, as Parquet (zstd).
    Parquet,
    /// One row per document with its text, as JSON Lines.
    Jsonl,
    /// The crawl minus the removed documents (with --removed: a revisit
    /// or a note per removed document), as WARC gzipped per record.
    Warc,
    /// pywb's CDXJ index of the WARC that `--format warc` writes.
    Cdxj,
}

impl Format {
    /// The file name ending of the format's output.
    pub(super) fn extension(self) -> &'static str {
        match self {
            Format::Parquet => "parquet",
            Format::Jsonl => "jsonl",
            Format::Warc => "warc.gz",
            Format::Cdxj => "cdxj",
        }
    }
}

/// What to export and where: the options of `pipeline export`.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// The run's output folder (the local cache of an object-store --out).
    pub out: PathBuf,
    /// The folder, or object-store URL, the export is written to.
    pub to: String,
    /// The format written.
    pub format: Format,
    /// Write the removed documents instead of the kept ones.
    pub removed: bool,
    /// Keep the host's boilerplate lines in the text (parquet and jsonl).
    pub keep_boilerplate: bool,
    /// The task: the input files whose index is I mod N.
    pub shard: Shard,
    /// Where the run's input files are now (files, folders, globs or URLs,
    /// as `run --input` takes them); empty: the paths the run read, from
    /// its ingest manifest.
    pub inputs: Vec<String>,
    /// The memory of the SQL session that streams the decisions.
    pub memory: Option<crate::process::memory::SqlMemory>,
    /// The folder the export's sorts spill to, and where the files of an
    /// object-store `to` are staged (`--spill`, else the system's temporary
    /// folder): never `out`, which an export only reads and which may be
    /// read-only.
    pub spill: PathBuf,
    /// Show a progress bar on stderr.
    pub progress: bool,
}

/// What an export wrote, for the line the command prints and its log.
#[derive(Debug, Clone, Default)]
pub struct ExportSummary {
    /// The file written (a path, or the object's URL).
    pub written: String,
    /// Counts by name (`documents`, `records_copied`, ...), in name order.
    pub counts: BTreeMap<&'static str, u64>,
    /// Input files that could not be read, each with the reason: the
    /// export finished without them (exit code 3, as a run's).
    pub unreadable: Vec<String>,
}

impl ExportSummary {
    /// Adds `n` to count `name`.
    pub(super) fn add(&mut self, name: &'static str, n: u64) {
        *self.counts.entry(name).or_default() += n;
    }
}

/// One input file of the run.
#[derive(Debug, Clone)]
pub(super) struct RunFile {
    /// The file as the tables name it (`documents.warc_file`).
    pub(super) name: String,
    /// The path (or URL) the run read it by.
    pub(super) path: String,
    /// Its path relative to the input folder.
    pub(super) label: String,
    /// Where to read it now; `None` until [`locate`] finds it (the
    /// formats that read no input file never do).
    pub(super) source: Option<Source>,
    /// What identified the file when the run read it
    /// ([`Source::version`]): size and modification time, or ETag.
    pub(super) version: serde_json::Value,
}

/// A SQL condition on `column` selecting `files` (TRUE for the whole run).
pub(super) fn files_predicate(column: &str, files: &[RunFile], shard: Shard) -> String {
    if shard.is_whole() {
        return "TRUE".into();
    }
    if files.is_empty() {
        return "FALSE".into();
    }
    let names: Vec<String> = files.iter().map(|f| format!("'{}'", f.name.replace('\'', "''"))).collect();
    format!("{column} IN ({})", names.join(", "))
}

/// The name of this task's output file: `kept.warc.gz`, or
/// `removed-2-of-4.jsonl` for task 2 of 4 of a `--removed` export.
pub(super) fn part_name(format: Format, removed: bool, shard: Shard) -> String {
    let kind = if removed { "removed" } else { "kept" };
    let task = if shard.is_whole() { String::new() } else { format!("-{}-of-{}", shard.index, shard.count) };
    format!("{kind}{task}.{}", format.extension())
}

/// Everything a format's export reads: the options, the run's tables
/// (through `session`) and the input files of this task.
pub(super) struct Job<'a> {
    pub(super) options: &'a ExportOptions,
    pub(super) runtime: &'a tokio::runtime::Runtime,
    pub(super) session: &'a datafusion::prelude::SessionContext,
    pub(super) files: &'a [RunFile],
    pub(super) out: &'a Path,
}

impl Job<'_> {
    /// Runs `sql` and returns its batches one by one, from synchronous
    /// code: the export reads input files (objects too, whose reads block
    /// on a runtime of their own) between batches.
    pub(super) fn stream(&self, sql: &str) -> Result<Batches<'_>> {
        let stream = self.runtime.block_on(async { self.session.sql(sql).await?.execute_stream().await })?;
        Ok(Batches { runtime: self.runtime, stream })
    }
}

/// A query's result, batch by batch (see [`Job::stream`]).
pub(super) struct Batches<'a> {
    pub(super) runtime: &'a tokio::runtime::Runtime,
    pub(super) stream: datafusion::physical_plan::SendableRecordBatchStream,
}

impl Batches<'_> {
    /// The next batch, `None` at the end.
    pub(super) fn next(&mut self) -> Result<Option<RecordBatch>> {
        Ok(self.runtime.block_on(self.stream.next()).transpose()?)
    }
}

/// The names the `decisions` table gives input files (one row per file).
pub(super) async fn decided_file_names(session: &datafusion::prelude::SessionContext) -> Result<Vec<String>> {
    let mut names = Vec::new();
    for batch in session.sql("SELECT DISTINCT warc_file FROM decisions").await?.collect().await? {
        let column = decisions::warc_file(&batch)?;
        names.extend((0..batch.num_rows()).map(|i| column.value(i).to_string()));
    }
    Ok(names)
}

/// The decision on one document, as the WARC formats read it.
#[derive(Debug, Clone)]
pub(super) struct Decision {
    /// The document's record offset in its file.
    pub(super) offset: u64,
    /// Its record's length (`decisions.warc_length`).
    pub(super) length: Option<u64>,
    /// Its id.
    pub(super) doc_id: u64,
    /// Its target URI.
    pub(super) url: String,
    /// Its capture date, as in `decisions`.
    pub(super) crawl_date: Option<String>,
    /// Kept (true) or removed.
    pub(super) kept: bool,
    /// `decisions.reason`.
    pub(super) reason: String,
    /// Similarity to its kept copy (removed documents).
    pub(super) similarity: Option<f64>,
    /// Its payload digest (`documents.payload_digest`; read for removed
    /// documents only).
    pub(super) payload_digest: Option<String>,
    /// The kept copy of a removed document, which its record names.
    pub(super) kept_copy: Option<KeptCopy>,
}

/// What the record of a removed document says of its kept copy.
#[derive(Debug, Clone)]
pub(super) struct KeptCopy {
    pub(super) url: String,
    pub(super) crawl_date: Option<String>,
    /// The earlier crawl of the history that holds it (`--history`: a
    /// night's repeat of a page kept in an earlier crawl); `None` for one
    /// of the run's own documents. Such a copy has no file, offset or
    /// record id in this run: the history keeps its URL and date only.
    pub(super) crawl: Option<String>,
    /// The file and offset of its record, which name a record converted
    /// to WARC/1.1 (see [`legacy::record_id`]).
    pub(super) warc_file: String,
    pub(super) warc_offset: u64,
    /// Its WARC-Record-ID (or corpus id), from `documents.record_id`.
    pub(super) record_id: Option<String>,
    /// Its payload digest: a removed document with the same one is a
    /// byte-identical copy.
    pub(super) payload_digest: Option<String>,
}

/// The decisions of the shard's files in file and offset order, handed out
/// one file at a time: only that file's decisions are in memory.
pub(super) struct DecisionCursor<'a> {
    pub(super) batches: Batches<'a>,
    pub(super) batch: Option<RecordBatch>,
    pub(super) row: usize,
    /// Rows of files the run's listing does not have (skipped, counted).
    pub(super) strays: u64,
}

impl<'a> DecisionCursor<'a> {
    /// The decisions of the shard's files; with `removed`, only the removed
    /// documents, each with its kept copy.
    pub(super) fn open(job: &'a Job, removed: bool) -> Result<DecisionCursor<'a>> {
        let own = files_predicate("d.warc_file", job.files, job.options.shard);
        let sql = if removed {
            let kept = KeptCopyLookup::of(job.out)?;
            format!(
                "SELECT d.warc_file, d.warc_offset, d.warc_length, d.doc_id, d.url, d.crawl_date, d.is_kept, \
                 d.reason, d.similarity, d.duplicate_of, t.payload_digest, {}, k.warc_file AS kept_file, \
                 k.warc_offset AS kept_offset, k.record_id AS kept_record_id, \
                 k.payload_digest AS kept_payload_digest \
                 FROM decisions d LEFT JOIN documents t ON t.doc_id = d.doc_id {} \
                 WHERE NOT d.is_kept AND {own} ORDER BY d.warc_file, d.warc_offset",
                kept.columns, kept.joins
            )
        } else {
            format!(
                "SELECT d.warc_file, d.warc_offset, d.warc_length, d.doc_id, d.url, d.crawl_date, d.is_kept, \
                 d.reason, d.similarity FROM decisions d WHERE {own} ORDER BY d.warc_file, d.warc_offset"
            )
        };
        Ok(DecisionCursor { batches: job.stream(&sql)?, batch: None, row: 0, strays: 0 })
    }

    /// The decisions of file `name`, by offset. Files must be asked for in
    /// name order; rows of names in between (files the run's listing does
    /// not have) are skipped.
    pub(super) fn take(&mut self, name: &str) -> Result<Vec<Decision>> {
        let mut taken = Vec::new();
        loop {
            if self.batch.as_ref().is_none_or(|b| self.row >= b.num_rows()) {
                self.batch = self.batches.next()?;
                self.row = 0;
                match &self.batch {
                    None => return Ok(taken),
                    Some(_) => continue,
                }
            }
            let batch = self.batch.as_ref().expect("checked above");
            let file = decisions::warc_file(batch)?.value(self.row);
            match file.cmp(name) {
                std::cmp::Ordering::Less => self.strays += 1,
                std::cmp::Ordering::Equal => taken.push(decision(batch, self.row)?),
                std::cmp::Ordering::Greater => return Ok(taken),
            }
            self.row += 1;
        }
    }
}

/// The SQL that finds a removed document's kept copy (`decisions d`):
/// the run's own document (`documents k`), or with `--history` the page of
/// an earlier crawl that `decisions.duplicate_of_crawl` names, found in
/// `crawl_clusters h`, which lists it with its crawl, URL and date (from
/// the history's `history_documents`). A run without the history's tables
/// reads `documents` only, as runs before them did.
pub(super) struct KeptCopyLookup {
    /// `kept_url`, `kept_date` and `kept_crawl`.
    pub(super) columns: &'static str,
    /// The joins they read (`documents k` always).
    pub(super) joins: &'static str,
}

impl KeptCopyLookup {
    pub(super) fn of(out: &Path) -> Result<KeptCopyLookup> {
        if !crate::tables::write::table_exists(out, crate::tables::columns::crawl_clusters::TABLE) {
            return Ok(KeptCopyLookup {
                columns: "k.url AS kept_url, k.crawl_date AS kept_date, arrow_cast(NULL, 'Utf8') AS kept_crawl",
                joins: "LEFT JOIN documents k ON k.doc_id = d.duplicate_of",
            });
        }
        for table in [decisions::TABLE, crate::tables::columns::crawl_clusters::TABLE] {
            crate::tables::write::check_table_schema(out, table)?;
        }
        Ok(KeptCopyLookup {
            columns: "COALESCE(k.url, h.url) AS kept_url, COALESCE(k.crawl_date, h.crawl_date) AS kept_date, \
                      d.duplicate_of_crawl AS kept_crawl",
            // A doc id names a document within one crawl only: an earlier
            // crawl's id may be one of the night's too.
            joins: "LEFT JOIN documents k ON k.doc_id = d.duplicate_of AND d.duplicate_of_crawl IS NULL \
                    LEFT JOIN crawl_clusters h ON h.doc_id = d.duplicate_of AND h.crawl = d.duplicate_of_crawl",
        })
    }
}

/// Row `i` of a decisions query (see [`DecisionCursor::open`]).
pub(super) fn decision(batch: &RecordBatch, i: usize) -> Result<Decision> {
    let optional_text = |name: &str| -> Result<Option<String>> {
        let column = crate::tables::column::<arrow::array::StringArray>(batch, name)?;
        Ok(column.is_valid(i).then(|| column.value(i).to_string()))
    };
    // Columns only the removed documents' query has.
    let text_if_queried = |name: &str| match batch.column_by_name(name) {
        Some(_) => optional_text(name),
        None => Ok(None),
    };
    let similarity = decisions::similarity(batch)?;
    let kept_copy = match batch.column_by_name("kept_url") {
        Some(urls) if urls.is_valid(i) => {
            let offsets = crate::tables::column::<arrow::array::UInt64Array>(batch, "kept_offset")?;
            Some(KeptCopy {
                url: optional_text("kept_url")?.unwrap_or_default(),
                crawl_date: optional_text("kept_date")?,
                crawl: optional_text("kept_crawl")?,
                warc_file: optional_text("kept_file")?.unwrap_or_default(),
                warc_offset: offsets.value(i),
                record_id: optional_text("kept_record_id")?,
                payload_digest: optional_text("kept_payload_digest")?,
            })
        }
        _ => None,
    };
    let length = batch
        .column_by_name("warc_length")
        .map(|_| decisions::warc_length(batch))
        .transpose()?
        .filter(|l| l.is_valid(i))
        .map(|l| l.value(i));
    Ok(Decision {
        offset: decisions::warc_offset(batch)?.value(i),
        length,
        doc_id: decisions::doc_id(batch)?.value(i),
        url: decisions::url(batch)?.value(i).to_string(),
        crawl_date: optional_text("crawl_date")?,
        kept: decisions::is_kept(batch)?.value(i),
        reason: decisions::reason(batch)?.value(i).to_string(),
        similarity: similarity.is_valid(i).then(|| similarity.value(i)),
        payload_digest: text_if_queried("payload_digest")?,
        kept_copy,
    })
}

/// The date a converted record without a valid date of its own gets: when
/// the run's ingest stage read the input (from its manifest), so exports
/// of one run are the same every time.
pub(super) fn fallback_date(out: &Path) -> String {
    let unix = crate::tables::manifest::finished_manifest(out, "ingest").map_or(0, |m| m.started_at_unix);
    legacy::unix_to_w3c(unix as i64)
}

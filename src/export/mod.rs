//! `pipeline export`: what a finished run decided, written out as a
//! deduplicated crawl or corpus.
//!
//! The `decisions` table says of every document whether it is kept or
//! removed as a duplicate of a named kept document. This module turns that
//! into files a user can take away, in one of four formats, each one type
//! behind [`Format`]:
//!
//! - `parquet` and `jsonl` ([`rows`]): one row per kept document (with
//!   `--removed`, per removed one) with its visible text in its original
//!   case, the host's boilerplate lines left out (`schemas/export_documents.json`);
//! - `warc` ([`warc`]): the input crawl minus the removed documents, read
//!   again from the input files record by record: WARC/1.x records copied
//!   byte for byte, each as a gzip member of its own; ARC, WARC/0.x and
//!   corpus records rewritten as WARC/1.1 ([`legacy`]). With `--removed`, a
//!   record per removed document naming its kept copy: a standard
//!   `revisit` where its payload is byte for byte the kept copy's, a
//!   `metadata` note that replay tools do not resolve otherwise;
//! - `cdxj` ([`cdxj`]): pywb's index of exactly what `warc` writes.
//!
//! The input files are those of the run's ingest manifest, in its order;
//! `--shard I/N` takes the files whose index is I mod N and writes one part
//! of each output, so N tasks export a crawl side by side. Memory stays
//! bounded whatever the crawl: the decisions stream out of one sorted query
//! (DataFusion spills it), and the WARC formats hold one input file's
//! decisions and record headers at a time. Outputs appear whole or not at
//! all ([`output`]).
//!
//! Not done here: deciding what is kept (stage `decide`), and reading
//! input files that are gone (an error naming them; `--input` says where
//! the crawl is now).

mod cdxj;
mod legacy;
mod output;
mod rows;
mod warc;

use anyhow::Result;
use arrow::array::{Array, RecordBatch};
use futures::StreamExt;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use crate::ingest::inputs::expand_inputs;
use crate::ingest::source::Source;
use crate::stages::stage::MissingInput;
use crate::tables::columns::{decisions, documents};
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
    fn extension(self) -> &'static str {
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
    fn add(&mut self, name: &'static str, n: u64) {
        *self.counts.entry(name).or_default() += n;
    }
}

/// One input file of the run.
#[derive(Debug, Clone)]
struct RunFile {
    /// The file as the tables name it (`documents.warc_file`).
    name: String,
    /// The path (or URL) the run read it by.
    path: String,
    /// Its path relative to the input folder.
    label: String,
    /// Where to read it now; `None` until [`locate`] finds it (the
    /// formats that read no input file never do).
    source: Option<Source>,
    /// What identified the file when the run read it
    /// ([`Source::version`]): size and modification time, or ETag.
    version: serde_json::Value,
}

/// The input files of the run in `out`, in its ingest manifest's order.
/// `decided_names` are the names the `decisions` table gives files: the
/// path the run read a file by or its label, whichever the tables use.
fn run_files(out: &Path, decided_names: &[String]) -> Result<Vec<RunFile>> {
    let manifest = crate::tables::manifest::finished_manifest(out, "ingest").ok_or_else(|| {
        MissingInput(format!(
            "{}: no finished ingest stage; run `pipeline run --out {}` first",
            out.display(),
            out.display()
        ))
    })?;
    let listed = manifest.external_inputs["files"].as_array().cloned().unwrap_or_default();
    let decided: HashSet<&str> = decided_names.iter().map(String::as_str).collect();
    let mut files = Vec::new();
    for entry in &listed {
        let (Some(path), Some(label)) = (entry["path"].as_str(), entry["label"].as_str()) else { continue };
        let name = if decided.contains(label) && !decided.contains(path) { label } else { path };
        // A relative path is relative to where the run ran.
        let at = match &manifest.working_dir {
            Some(dir) if !crate::storage::location::is_url(path) && Path::new(path).is_relative() => {
                Path::new(dir).join(path).display().to_string()
            }
            _ => path.to_string(),
        };
        files.push(RunFile {
            name: name.to_string(),
            path: at,
            label: label.to_string(),
            source: None,
            version: entry["version"].clone(),
        });
    }
    Ok(files)
}

/// Finds each of `files` where the run read it or, when `inputs` is given,
/// by its label under `inputs`. Files that cannot be found are a
/// [`MissingInput`] error naming them all.
fn locate(files: &mut [RunFile], inputs: &[String]) -> Result<()> {
    let moved: BTreeMap<String, Source> = if inputs.is_empty() {
        BTreeMap::new()
    } else {
        let (found, problems, _) = expand_inputs(inputs);
        for p in &problems {
            tracing::warn!("--input: {p}");
        }
        found.into_iter().map(|f| (f.label, f.source)).collect()
    };
    let mut gone = Vec::new();
    for file in files.iter_mut() {
        let found = if inputs.is_empty() {
            match source_at(&file.path) {
                Ok(Some(source)) => Some(source),
                Ok(None) => {
                    gone.push(format!("{} (gone)", absolute(&file.path)));
                    None
                }
                Err(e) => {
                    gone.push(format!("{} ({e:#})", absolute(&file.path)));
                    None
                }
            }
        } else {
            let found = moved.get(&file.label).cloned();
            if found.is_none() {
                gone.push(format!("{} (not under --input {})", file.label, inputs.join(" ")));
            }
            found
        };
        if let Some(source) = found {
            // Offsets into a file that changed since the run point at other
            // records: the removed documents would be written again.
            match changed_since_run(&file.version, &source.version(), inputs.is_empty()) {
                Some(why) => gone.push(format!("{} (changed since the run: {why})", absolute(&source.name()))),
                None => file.source = Some(source),
            }
        }
    }
    if !gone.is_empty() {
        let hint = if inputs.is_empty() { "; give --input where the crawl is now" } else { "" };
        return Err(MissingInput(format!(
            "{} input file(s) of the run cannot be read again: {}{hint}",
            gone.len(),
            gone.join(", ")
        ))
        .into());
    }
    Ok(())
}

/// `path` made absolute, for messages: a run's relative paths are
/// relative to where it ran, which may not be where the export runs.
fn absolute(path: &str) -> String {
    if crate::storage::location::is_url(path) {
        return path.to_string();
    }
    std::path::absolute(path).map_or_else(|_| path.to_string(), |p| p.display().to_string())
}

/// How the file a run read (`then`, its [`Source::version`]) differs from
/// the one found now, or `None` when it is the same: the size (and ETag of
/// an object) always, the modification time only where the run read it
/// (a copy elsewhere has a time of its own).
fn changed_since_run(then: &serde_json::Value, now: &serde_json::Value, same_place: bool) -> Option<String> {
    let differs = |key: &str| then.get(key).is_some_and(|a| !a.is_null() && now.get(key).is_some_and(|b| a != b));
    if differs("size") {
        return Some(format!("{} bytes then, {} now", then["size"], now["size"]));
    }
    if differs("e_tag") {
        return Some(format!("ETag {} then, {} now", then["e_tag"], now["e_tag"]));
    }
    if same_place && (differs("mtime_ns") || differs("last_modified")) {
        return Some("same size, modified since".into());
    }
    None
}

/// The input file at `path` as a run named it (a path relative to where it
/// ran, or an object URL); `None` when it is not there any more.
fn source_at(path: &str) -> Result<Option<Source>> {
    if crate::storage::location::is_url(path) {
        let location = crate::storage::location::Location::parse(path)?;
        return Ok(location.head()?.map(|meta| Source::Object {
            location,
            size: meta.size,
            e_tag: meta.e_tag.clone(),
            last_modified_unix: meta.last_modified.timestamp(),
        }));
    }
    let p = PathBuf::from(path);
    Ok(p.is_file().then_some(Source::File(p)))
}

/// The files task `shard` exports: those whose index in the run's listing
/// is I mod N, in the order of their names (the order of the decisions
/// query).
fn shard_files(files: Vec<RunFile>, shard: Shard) -> Vec<RunFile> {
    let mut mine: Vec<RunFile> = files
        .into_iter()
        .enumerate()
        .filter(|(i, _)| *i as u64 % shard.count as u64 == shard.index as u64)
        .map(|(_, f)| f)
        .collect();
    mine.sort_by(|a, b| a.name.cmp(&b.name));
    mine
}

/// A SQL condition on `column` selecting `files` (TRUE for the whole run).
fn files_predicate(column: &str, files: &[RunFile], shard: Shard) -> String {
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
fn part_name(format: Format, removed: bool, shard: Shard) -> String {
    let kind = if removed { "removed" } else { "kept" };
    let task = if shard.is_whole() { String::new() } else { format!("-{}-of-{}", shard.index, shard.count) };
    format!("{kind}{task}.{}", format.extension())
}

/// Exports what `options` say; see the module doc.
pub fn export(options: &ExportOptions, runtime: &tokio::runtime::Runtime) -> Result<ExportSummary> {
    let out = &options.out;
    let mut needed = vec![decisions::TABLE, documents::TABLE];
    let text_rows = matches!(options.format, Format::Parquet | Format::Jsonl);
    if text_rows && !options.keep_boilerplate {
        needed.push(crate::tables::columns::boilerplate::TABLE);
    }
    if !text_rows {
        needed.push(crate::tables::columns::ingest_files::TABLE);
    }
    for table in needed {
        if !crate::tables::write::table_exists(out, table) {
            return Err(MissingInput(format!(
                "table `{table}` is missing in {}: run the pipeline (`pipeline run --out {}`) first",
                out.display(),
                out.display()
            ))
            .into());
        }
    }
    let session = runtime.block_on(crate::tables::sql::session_spilling_to(out, options.memory, &options.spill))?;
    // Batches of a thousand rows: a sort of texts spills batch by batch,
    // and 8,192 texts make one batch larger than a small pool.
    let session = crate::tables::sql::one_stream(crate::tables::sql::with_batch_size(session, 1024)?)?;
    let decided = runtime.block_on(decided_file_names(&session))?;
    let mut files = shard_files(run_files(out, &decided)?, options.shard);
    // The WARC formats read the input files again: the kept export its
    // records, the removed one the HTTP headers of its revisits.
    if matches!(options.format, Format::Warc | Format::Cdxj) {
        locate(&mut files, &options.inputs)?;
    }
    let destination = output::Destination::open(&options.to, &options.spill)?;
    let name = part_name(options.format, options.removed, options.shard);
    tracing::info!(
        files = files.len(),
        shard = %options.shard,
        format = ?options.format,
        removed = options.removed,
        "exporting to {}",
        destination.describe(&name)
    );
    let started = std::time::Instant::now();
    let mut summary = ExportSummary::default();
    let job = Job { options, runtime, session: &session, files: &files, out };
    summary.written = match options.format {
        Format::Parquet | Format::Jsonl => rows::export(&job, &destination, &name, &mut summary)?,
        Format::Warc | Format::Cdxj => warc::export(&job, &destination, &name, &mut summary)?,
    };
    summary.add("input_files", files.len() as u64);
    let counts: Vec<String> = summary.counts.iter().map(|(k, v)| format!("{k}={v}")).collect();
    tracing::info!(seconds = format!("{:.2}", started.elapsed().as_secs_f64()), counts = %counts.join(" "), "export written to {}", summary.written);
    Ok(summary)
}

/// Everything a format's export reads: the options, the run's tables
/// (through `session`) and the input files of this task.
struct Job<'a> {
    options: &'a ExportOptions,
    runtime: &'a tokio::runtime::Runtime,
    session: &'a datafusion::prelude::SessionContext,
    files: &'a [RunFile],
    out: &'a Path,
}

impl Job<'_> {
    /// Runs `sql` and returns its batches one by one, from synchronous
    /// code: the export reads input files (objects too, whose reads block
    /// on a runtime of their own) between batches.
    fn stream(&self, sql: &str) -> Result<Batches<'_>> {
        let stream = self.runtime.block_on(async { self.session.sql(sql).await?.execute_stream().await })?;
        Ok(Batches { runtime: self.runtime, stream })
    }
}

/// A query's result, batch by batch (see [`Job::stream`]).
struct Batches<'a> {
    runtime: &'a tokio::runtime::Runtime,
    stream: datafusion::physical_plan::SendableRecordBatchStream,
}

impl Batches<'_> {
    /// The next batch, `None` at the end.
    fn next(&mut self) -> Result<Option<RecordBatch>> {
        Ok(self.runtime.block_on(self.stream.next()).transpose()?)
    }
}

/// The names the `decisions` table gives input files (one row per file).
async fn decided_file_names(session: &datafusion::prelude::SessionContext) -> Result<Vec<String>> {
    let mut names = Vec::new();
    for batch in session.sql("SELECT DISTINCT warc_file FROM decisions").await?.collect().await? {
        let column = decisions::warc_file(&batch)?;
        names.extend((0..batch.num_rows()).map(|i| column.value(i).to_string()));
    }
    Ok(names)
}

/// The decision on one document, as the WARC formats read it.
#[derive(Debug, Clone)]
struct Decision {
    /// The document's record offset in its file.
    offset: u64,
    /// Its record's length (`decisions.warc_length`).
    length: Option<u64>,
    /// Its id.
    doc_id: u64,
    /// Its target URI.
    url: String,
    /// Its capture date, as in `decisions`.
    crawl_date: Option<String>,
    /// Kept (true) or removed.
    kept: bool,
    /// `decisions.reason`.
    reason: String,
    /// Similarity to its kept copy (removed documents).
    similarity: Option<f64>,
    /// Its payload digest (`documents.payload_digest`; read for removed
    /// documents only).
    payload_digest: Option<String>,
    /// The kept copy of a removed document, which its record names.
    kept_copy: Option<KeptCopy>,
}

/// What the record of a removed document says of its kept copy.
#[derive(Debug, Clone)]
struct KeptCopy {
    url: String,
    crawl_date: Option<String>,
    /// The earlier crawl of the history that holds it (`--history`: a
    /// night's repeat of a page kept in an earlier crawl); `None` for one
    /// of the run's own documents. Such a copy has no file, offset or
    /// record id in this run: the history keeps its URL and date only.
    crawl: Option<String>,
    /// The file and offset of its record, which name a record converted
    /// to WARC/1.1 (see [`legacy::record_id`]).
    warc_file: String,
    warc_offset: u64,
    /// Its WARC-Record-ID (or corpus id), from `documents.record_id`.
    record_id: Option<String>,
    /// Its payload digest: a removed document with the same one is a
    /// byte-identical copy.
    payload_digest: Option<String>,
}

/// The decisions of the shard's files in file and offset order, handed out
/// one file at a time: only that file's decisions are in memory.
struct DecisionCursor<'a> {
    batches: Batches<'a>,
    batch: Option<RecordBatch>,
    row: usize,
    /// Rows of files the run's listing does not have (skipped, counted).
    strays: u64,
}

impl<'a> DecisionCursor<'a> {
    /// The decisions of the shard's files; with `removed`, only the removed
    /// documents, each with its kept copy.
    fn open(job: &'a Job, removed: bool) -> Result<DecisionCursor<'a>> {
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
    fn take(&mut self, name: &str) -> Result<Vec<Decision>> {
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
struct KeptCopyLookup {
    /// `kept_url`, `kept_date` and `kept_crawl`.
    columns: &'static str,
    /// The joins they read (`documents k` always).
    joins: &'static str,
}

impl KeptCopyLookup {
    fn of(out: &Path) -> Result<KeptCopyLookup> {
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
fn decision(batch: &RecordBatch, i: usize) -> Result<Decision> {
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
fn fallback_date(out: &Path) -> String {
    let unix = crate::tables::manifest::finished_manifest(out, "ingest").map_or(0, |m| m.started_at_unix);
    legacy::unix_to_w3c(unix as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Size and ETag must match wherever the file is found now; the
    /// modification time only where the run read it.
    #[test]
    fn what_counts_as_an_input_changed_since_the_run() {
        let then = serde_json::json!({"size": 10, "mtime_ns": 5});
        assert_eq!(changed_since_run(&then, &serde_json::json!({"size": 10, "mtime_ns": 5}), true), None);
        assert_eq!(changed_since_run(&then, &serde_json::json!({"size": 10, "mtime_ns": 6}), false), None);
        assert!(changed_since_run(&then, &serde_json::json!({"size": 10, "mtime_ns": 6}), true).is_some());
        let grown = changed_since_run(&then, &serde_json::json!({"size": 11, "mtime_ns": 5}), false);
        assert_eq!(grown.as_deref(), Some("10 bytes then, 11 now"));
        let object = serde_json::json!({"size": 10, "e_tag": "\"a\""});
        assert!(changed_since_run(&object, &serde_json::json!({"size": 10, "e_tag": "\"b\""}), false).is_some());
        // A manifest without versions (older runs) refuses nothing.
        assert_eq!(changed_since_run(&serde_json::Value::Null, &then, true), None);
    }

    #[test]
    fn parts_are_named_by_kind_task_and_format() {
        assert_eq!(part_name(Format::Warc, false, Shard::WHOLE), "kept.warc.gz");
        assert_eq!(part_name(Format::Jsonl, true, Shard { index: 2, count: 4 }), "removed-2-of-4.jsonl");
        assert_eq!(part_name(Format::Cdxj, false, Shard { index: 0, count: 2 }), "kept-0-of-2.cdxj");
    }

    #[test]
    fn a_shard_takes_every_nth_file_of_the_listing_in_name_order() {
        let files: Vec<RunFile> = ["c", "a", "d", "b", "e"]
            .iter()
            .map(|n| RunFile {
                name: n.to_string(),
                path: n.to_string(),
                label: n.to_string(),
                source: None,
                version: serde_json::Value::Null,
            })
            .collect();
        let names = |s: Shard| shard_files(files.clone(), s).into_iter().map(|f| f.name).collect::<Vec<_>>();
        assert_eq!(names(Shard { index: 0, count: 2 }), ["c", "d", "e"]);
        assert_eq!(names(Shard { index: 1, count: 2 }), ["a", "b"]);
        assert_eq!(names(Shard::WHOLE), ["a", "b", "c", "d", "e"]);
        let two = shard_files(files, Shard { index: 1, count: 2 });
        assert_eq!(files_predicate("f", &two, Shard { index: 1, count: 2 }), "f IN ('a', 'b')");
        assert_eq!(files_predicate("f", &two, Shard::WHOLE), "TRUE");
        let odd = [RunFile {
            name: "it's".into(),
            path: "x".into(),
            label: "x".into(),
            source: None,
            version: serde_json::Value::Null,
        }];
        assert_eq!(files_predicate("f", &odd, Shard { index: 0, count: 3 }), "f IN ('it''s')");
    }
}

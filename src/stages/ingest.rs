//! Stage `ingest`: archive files and text corpora → `documents`,
//! `revisits`, `rejects`, `ingest_files`.
//!
//! Files are processed in parallel (rayon), each into its own part file of
//! every table, so the output is deterministic whatever the thread count and
//! memory stays bounded by the records in flight. A file that cannot be read
//! is listed in `ingest_files` with its error and makes the run's exit code 3;
//! the other files still go through.
//!
//! A map stage: task I of N (`--shard I/N`) reads its share of the files,
//! balanced by size ([`Shard::assign_files`]); every task lists the same
//! inputs, so the shares never overlap and always cover every file.

use anyhow::{Context, Result};
use arrow::array::{StringBuilder, UInt16Builder, UInt64Builder};
use rayon::prelude::*;
use serde_json::{json, Value};
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::config::Config;
use crate::ingest::record::{Document, Outcome, Reject, Revisit};
use crate::ingest::source::Source;
use crate::ingest::{corpus, ingest_file, FileSummary};
use crate::runner::{RunContext, Stage, StageReport};
use crate::schema::arrow_schema;
use crate::shard::Shard;
use crate::store;
use crate::table::{BatchBuilder, PartWriter, TableDir};

/// The ingest stage.
pub struct Ingest;

const TABLES: [&str; 3] = ["documents", "revisits", "rejects"];

impl Stage for Ingest {
    fn name(&self) -> &'static str {
        "ingest"
    }
    fn inputs(&self) -> &'static [&'static str] {
        &[]
    }
    fn outputs(&self, _: &Config) -> Vec<&'static str> {
        vec!["documents", "revisits", "rejects", "ingest_files"]
    }
    fn config_section(&self, config: &Config) -> Value {
        serde_json::to_value(&config.ingest).unwrap_or(Value::Null)
    }
    fn shardable(&self) -> bool {
        true
    }
    fn external_fingerprint(&self, ctx: &RunContext) -> Result<Value> {
        let (files, problems, _) = expand_inputs(&ctx.inputs);
        let files: Vec<Value> = files
            .iter()
            .map(|InputFile { source, label }| json!({"path": source.name(), "label": label, "version": source.version()}))
            .collect();
        Ok(json!({"files": files, "problems": problems}))
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        let (all_files, mut problems, warnings) = expand_inputs(&ctx.inputs);
        for w in &warnings {
            tracing::warn!("{w}");
        }
        if all_files.is_empty() && problems.is_empty() {
            problems.push(format!("no archive or corpus files found in {:?}", ctx.inputs));
        }
        let sizes: Vec<u64> = all_files.iter().map(|f| f.source.size().unwrap_or(0)).collect();
        let owners = Shard::assign_files(&sizes, ctx.shard.count);
        // (index in the whole listing, which names the part files; the file)
        let files: Vec<(usize, &InputFile)> =
            all_files.iter().enumerate().filter(|(i, _)| owners[*i] == ctx.shard.index).collect();
        let dirs: Vec<TableDir> =
            TABLES.iter().map(|t| TableDir::create_for(&ctx.out, t, ctx.shard)).collect::<Result<_>>()?;
        let total_bytes: u64 = files.iter().map(|(i, _)| sizes[*i]).sum();
        let progress = crate::progress::bar(ctx.progress, total_bytes, "ingest");
        let done_bytes = AtomicU64::new(0);
        let summaries: Vec<Result<FileSummary, String>> = files
            .par_iter()
            .map(|&(i, input)| {
                let r = ingest_one(input, i, &dirs, &ctx.config);
                let size = sizes[i];
                progress.set_position(done_bytes.fetch_add(size, Ordering::Relaxed) + size);
                r.map_err(|e| format!("{}: {e:#}", input.source.name()))
            })
            .collect();
        progress.finish_and_clear();
        // Tables must exist even when no file could be read (or a task owns none).
        for (dir, table) in dirs.iter().zip(TABLES) {
            if files.is_empty() {
                dir.part("empty", arrow_schema(table))?.close()?;
            }
        }

        let mut report = StageReport::default();
        let mut list = BatchBuilder::new("ingest_files");
        let mut totals: BTreeMap<&str, u64> = BTreeMap::new();
        for ((_, input), summary) in files.iter().zip(&summaries) {
            list.col::<StringBuilder>(0).append_value(input.source.name());
            match summary {
                Ok(s) => {
                    list.col::<StringBuilder>(1).append_value(&s.format);
                    list.col::<StringBuilder>(2).append_value(&s.compression);
                    for (i, (name, v)) in [
                        ("bytes", s.bytes),
                        ("records", s.records),
                        ("documents", s.documents),
                        ("revisits", s.revisits),
                        ("rejects", s.rejects),
                        ("skipped", s.skipped),
                        ("flattened", s.flattened),
                        ("text_truncated", s.text_truncated),
                    ]
                    .into_iter()
                    .enumerate()
                    {
                        list.col::<UInt64Builder>(3 + i).append_value(v);
                        *totals.entry(name).or_default() += v;
                    }
                    list.col::<StringBuilder>(11).append_null();
                }
                Err(e) => {
                    list.col::<StringBuilder>(1).append_value("unknown");
                    list.col::<StringBuilder>(2).append_value("unknown");
                    for i in 3..11 {
                        list.col::<UInt64Builder>(i).append_value(0);
                    }
                    list.col::<StringBuilder>(11).append_value(e);
                    report.input_errors.push(e.clone());
                }
            }
        }
        let mut writer = crate::table::TableWriter::for_shard(&ctx.out, "ingest_files", ctx.shard)?;
        writer.write_rest(&mut list)?;
        report.rows.insert("ingest_files".into(), writer.commit()?);
        for dir in dirs {
            dir.commit()?;
        }
        for (table, key) in [("documents", "documents"), ("revisits", "revisits"), ("rejects", "rejects")] {
            report.rows.insert(table.into(), totals.get(key).copied().unwrap_or(0));
        }
        report.counters = totals.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        report.input_errors.extend(problems);
        Ok(report)
    }
}

/// Expands input arguments into a sorted list of input files. Folders are
/// read recursively and contribute files whose names look like archives
/// (`.warc`, `.arc`, `.wet`, `.wat`, optionally compressed) or text corpora
/// (`.jsonl`, `.parquet`, ...: see [`corpus::is_corpus_file`]); a path given
/// explicitly is always taken. An object-store URL (`s3://bucket/crawl/`,
/// `file:///data/crawl`) is an object or, like a folder, a prefix listed
/// recursively. Links are followed (see [`Walker`]), and a local file
/// reached by several paths (links, hard links, an input given twice) is
/// read once, under the first of its paths in sorted order. Two files with
/// the same name would give the same document ids, so the second one is
/// reported instead of read. Returns the files, the problems (inputs not
/// read: exit code 3) and warnings for the log (loops, odd names), which
/// the caller logs once.
pub fn expand_inputs(inputs: &[String]) -> (Vec<InputFile>, Vec<String>, Vec<String>) {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    let mut walker = Walker::default();
    for input in inputs {
        let path = Path::new(input);
        if store::is_url(input) {
            if let Err(e) = list_objects(input, &mut files) {
                problems.push(format!("{input}: {e:#}"));
            }
        } else if path.is_file() {
            files.push(InputFile { source: Source::File(path.to_path_buf()), label: file_name(path) });
        } else if path.is_dir() {
            walker.walk(path, &mut files, &mut problems);
        } else if input.contains(['*', '?', '[']) {
            match glob::glob(input) {
                Ok(paths) => {
                    let before = files.len();
                    for p in paths.flatten() {
                        if p.is_file() {
                            files.push(InputFile { label: file_name(&p), source: Source::File(p) });
                        } else if p.is_dir() {
                            walker.walk(&p, &mut files, &mut problems);
                        }
                    }
                    if files.len() == before {
                        problems.push(format!("{input}: the pattern matches no file"));
                    }
                }
                Err(e) => problems.push(format!("{input}: bad glob pattern: {e}")),
            }
        } else {
            problems.push(format!("{input}: no such file or folder"));
        }
    }
    files.sort_by_key(|f| f.source.name());
    files.dedup_by(|a, b| matches!(a.source, Source::Object { .. }) && a.source.name() == b.source.name());
    let mut read_as: HashMap<(u64, u64), String> = HashMap::new();
    files.retain(|f| {
        let Source::File(path) = &f.source else { return true };
        let Ok(meta) = std::fs::metadata(path) else { return true };
        match read_as.entry((meta.dev(), meta.ino())) {
            Entry::Occupied(first) => {
                tracing::debug!("{}: the same file as {}; read once, as the latter", path.display(), first.get());
                false
            }
            Entry::Vacant(slot) => {
                slot.insert(f.source.name());
                true
            }
        }
    });
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    files.retain(|f| {
        if let Some(first) = seen.get(&f.label) {
            problems.push(format!(
                "{}: goes by the same name `{}` as {}; skipped (its document ids would collide)",
                f.source.name(),
                f.label,
                first
            ));
            false
        } else {
            seen.insert(f.label.clone(), f.source.name());
            true
        }
    });
    let mut warnings = walker.loops;
    for f in &files {
        if let Source::File(path) = &f.source {
            if path.to_str().is_none() {
                warnings.push(format!(
                    "{}: the path is not UTF-8; the file goes by `{}` in document ids and tables",
                    path.display(),
                    f.label
                ));
            }
        }
    }
    (files, problems, warnings)
}

/// Reads input folders recursively, following links to files and folders
/// wherever they point: a crawl laid out with links to other disks is read
/// whole, each file labelled by its path under the input folder. Each
/// folder is read once, known by its device and inode: a link back to a
/// folder it is inside (`again -> .`) is a loop, noted once (a warning, not
/// a failure) and not followed, and a second way to a folder already read
/// is skipped.
/// Entries are read in name order, so the labels never depend on the order
/// the file system lists them in.
#[derive(Default)]
struct Walker {
    /// Folders read so far (device, inode) and the path they were read by.
    read: HashMap<(u64, u64), PathBuf>,
    /// One message per link that loops back.
    loops: Vec<String>,
}

impl Walker {
    /// Adds the archives and corpora under `root`, labelled by their path
    /// relative to it.
    fn walk(&mut self, root: &Path, files: &mut Vec<InputFile>, problems: &mut Vec<String>) {
        self.visit(root, root, &mut Vec::new(), files, problems);
    }

    fn visit(
        &mut self,
        root: &Path,
        dir: &Path,
        inside: &mut Vec<(u64, u64)>,
        files: &mut Vec<InputFile>,
        problems: &mut Vec<String>,
    ) {
        let listing = std::fs::metadata(dir).and_then(|meta| Ok((meta, std::fs::read_dir(dir)?)));
        let (meta, entries) = match listing {
            Ok(l) => l,
            Err(e) => {
                problems.push(format!("{}: cannot read the folder: {e}", dir.display()));
                return;
            }
        };
        let id = (meta.dev(), meta.ino());
        if inside.contains(&id) {
            self.loops.push(format!("{}: a link back to a folder it is inside (a loop); not followed", dir.display()));
            return;
        }
        if let Some(first) = self.read.get(&id) {
            tracing::debug!("{}: the same folder as {}; read once, as the latter", dir.display(), first.display());
            return;
        }
        self.read.insert(id, dir.to_path_buf());
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        inside.push(id);
        for p in paths {
            if p.is_dir() {
                self.visit(root, &p, inside, files, problems);
            } else if looks_like_archive(&p) {
                let label = p.strip_prefix(root).map_or_else(|_| file_name(&p), |r| r.to_string_lossy().into_owned());
                files.push(InputFile { source: Source::File(p), label });
            }
        }
        inside.pop();
    }
}

/// An archive to read and the name it goes by in document ids: its path
/// relative to the folder (or object prefix) given as input, or its file
/// name when given directly, so ids stay the same when the crawl is moved.
#[derive(Debug, Clone)]
pub struct InputFile {
    pub source: Source,
    pub label: String,
}

/// Adds the object `url` names or, when it names none, the archives and
/// corpora listed under it as a prefix.
fn list_objects(url: &str, files: &mut Vec<InputFile>) -> Result<()> {
    let root = store::Location::parse(url)?;
    let object = |location: store::Location, meta: &object_store::ObjectMeta| Source::Object {
        location,
        size: meta.size,
        e_tag: meta.e_tag.clone(),
        last_modified_unix: meta.last_modified.timestamp(),
    };
    if let Some(meta) = root.head()? {
        let source = object(root.clone(), &meta);
        files.push(InputFile { label: source.file_name(), source });
        return Ok(());
    }
    let before = files.len();
    for meta in root.list()? {
        let Some(label) = store::relative_path(&root.path, &meta.location) else { continue };
        if looks_like_archive(Path::new(&label)) {
            files.push(InputFile { source: object(root.at(meta.location.clone(), &label), &meta), label });
        }
    }
    anyhow::ensure!(files.len() > before, "no archive or corpus object found under this URL");
    Ok(())
}

fn looks_like_archive(p: &Path) -> bool {
    let name = file_name(p).to_ascii_lowercase();
    [".warc", ".arc", ".wet", ".wat"].iter().any(|ext| name.contains(ext)) || corpus::is_corpus_file(p)
}

fn file_name(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Reads one archive or corpus file into part `i` of each table.
fn ingest_one(input: &InputFile, i: usize, dirs: &[TableDir], config: &Config) -> Result<FileSummary> {
    let source = &input.source;
    let part = format!("{i:06}");
    let mut writers: Vec<PartWriter> =
        dirs.iter().zip(TABLES).map(|(d, t)| d.part(&part, arrow_schema(t))).collect::<Result<_>>()?;
    let mut builders: Vec<BatchBuilder> = TABLES.iter().map(|t| BatchBuilder::new(t)).collect();
    let file_label = source.name();
    let mut write_error: Option<anyhow::Error> = None;
    let name = source.name_path();
    let duplicate_type = if corpus::is_corpus_file(&name) { corpus::record_type(&name) } else { "response" };
    let mut seen_ids = std::collections::HashSet::new();
    let mut repeated_ids = 0u64;
    let (mut repeated_flattened, mut repeated_truncated) = (0u64, 0u64);
    let read = ingest_file(source, &input.label, &config.ingest, &mut |mut outcome| {
        if write_error.is_some() {
            return;
        }
        // A record id repeated inside one file would repeat a doc_id.
        if let Outcome::Document(d) = &outcome {
            if !seen_ids.insert(d.doc_id) {
                repeated_ids += 1;
                repeated_flattened += u64::from(d.flattened);
                repeated_truncated += u64::from(d.text_truncated);
                outcome = Outcome::Reject(Reject {
                    warc_file: d.warc_file.clone(),
                    warc_offset: d.warc_offset,
                    record_type: duplicate_type.into(),
                    url: Some(d.url.clone()),
                    reason: "duplicate_record_id".into(),
                    detail: "an earlier record of this file has the same WARC-Record-ID (corpus: id)".into(),
                });
            }
        }
        let which = match &outcome {
            Outcome::Document(d) => {
                push_document(&mut builders[0], d, &file_label);
                0
            }
            Outcome::Revisit(r) => {
                push_revisit(&mut builders[1], r, &file_label);
                1
            }
            Outcome::Reject(r) => {
                push_reject(&mut builders[2], r, &file_label);
                2
            }
            Outcome::Skipped { .. } => return,
        };
        if let Err(e) = writers[which].write_if_full(&mut builders[which]) {
            write_error = Some(e);
        }
    })
    .with_context(|| "cannot read input file");
    let mut summary = match (read, write_error) {
        (Ok(summary), None) => summary,
        (Err(e), _) | (Ok(_), Some(e)) => {
            // Close the parts so the tables stay readable Parquet; rows
            // still pending are dropped with the file's counts.
            for w in writers {
                w.close()?;
            }
            return Err(e);
        }
    };
    summary.documents -= repeated_ids;
    summary.rejects += repeated_ids;
    summary.flattened -= repeated_flattened;
    summary.text_truncated -= repeated_truncated;
    for (w, b) in writers.iter_mut().zip(builders.iter_mut()) {
        w.write_rest(b)?;
    }
    for w in writers {
        w.close()?;
    }
    Ok(summary)
}

fn push_document(b: &mut BatchBuilder, d: &Document, file: &str) {
    b.col::<UInt64Builder>(0).append_value(d.doc_id);
    b.col::<StringBuilder>(1).append_value(&d.url);
    b.col::<StringBuilder>(2).append_value(file);
    b.col::<UInt64Builder>(3).append_value(d.warc_offset);
    b.col::<StringBuilder>(4).append_option(d.crawl_date.as_deref());
    b.col::<UInt16Builder>(5).append_option(d.http_status);
    b.col::<StringBuilder>(6).append_option(d.content_type.as_deref());
    b.col::<StringBuilder>(7).append_value(&d.charset);
    b.col::<StringBuilder>(8).append_value(&d.title);
    b.col::<StringBuilder>(9).append_value(&d.lang);
    b.col::<StringBuilder>(10).append_value(&d.text);
    b.col::<UInt64Builder>(11).append_value(d.raw_bytes);
    b.col::<StringBuilder>(12).append_option(d.record_id.as_deref());
}

fn push_revisit(b: &mut BatchBuilder, r: &Revisit, file: &str) {
    b.col::<UInt64Builder>(0).append_value(r.doc_id);
    b.col::<StringBuilder>(1).append_value(&r.url);
    b.col::<StringBuilder>(2).append_value(file);
    b.col::<UInt64Builder>(3).append_value(r.warc_offset);
    b.col::<StringBuilder>(4).append_option(r.crawl_date.as_deref());
    b.col::<StringBuilder>(5).append_option(r.refers_to.as_deref());
    b.col::<StringBuilder>(6).append_option(r.payload_digest.as_deref());
}

fn push_reject(b: &mut BatchBuilder, r: &Reject, file: &str) {
    b.col::<StringBuilder>(0).append_value(file);
    b.col::<UInt64Builder>(1).append_value(r.warc_offset);
    b.col::<StringBuilder>(2).append_value(&r.record_type);
    b.col::<StringBuilder>(3).append_option(r.url.as_deref());
    b.col::<StringBuilder>(4).append_value(&r.reason);
    b.col::<StringBuilder>(5).append_value(&r.detail);
}

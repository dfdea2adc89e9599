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
use rayon::prelude::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::config::Config;
use crate::ingest::inputs::{expand_inputs, InputFile};
use crate::ingest::record::{Document, Outcome, Reject, Revisit};
use crate::ingest::{corpus, ingest_file, FileSummary};
use crate::stages::stage::{RunContext, Stage, AS_GIVEN};
use crate::tables::columns::{documents, ingest_files, rejects, revisits};
use crate::tables::manifest::StageReport;
use crate::tables::schema::arrow_schema;
use crate::tables::shard::Shard;
use crate::tables::write::{PartWriter, TableDir};
use crate::tables::Table;

/// The ingest stage.
pub struct Ingest;

/// The tables of the records read, in the order of each file's part writers.
const TABLES: [&str; 3] = [documents::TABLE, revisits::TABLE, rejects::TABLE];

impl Stage for Ingest {
    fn name(&self) -> &'static str {
        "ingest"
    }
    fn inputs(&self) -> Vec<Table> {
        vec![]
    }
    fn outputs(&self, _: &Config) -> Vec<Table> {
        vec![documents::NAME, revisits::NAME, rejects::NAME, ingest_files::NAME]
    }
    fn config_section(&self, config: &Config) -> Value {
        serde_json::to_value(&config.ingest).unwrap_or(Value::Null)
    }
    fn shardable(&self) -> bool {
        true
    }
    /// Each file by what it is (its canonical path or URL), its label and
    /// version; how the inputs were named (the arguments, and the path
    /// each file was read by, as `warc_file` shows it) goes under
    /// [`AS_GIVEN`], outside the fingerprint.
    fn external_fingerprint(&self, ctx: &RunContext) -> Result<Value> {
        let (listed, problems, _) = expand_inputs(&ctx.inputs);
        let files: Vec<Value> = listed
            .iter()
            .map(|InputFile { source, label }| {
                json!({"file": source.identity(), "label": label, "version": source.version()})
            })
            .collect();
        let paths: Vec<String> = listed.iter().map(|f| f.source.name()).collect();
        Ok(json!({"files": files, "problems": problems, AS_GIVEN: {"inputs": ctx.inputs, "paths": paths}}))
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
        let progress = crate::process::progress::bar(ctx.progress, total_bytes, "ingest");
        let done_bytes = AtomicU64::new(0);
        let summaries: Vec<Result<(FileSummary, BTreeMap<String, u64>), String>> = files
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
        let mut list = ingest_files::Rows::default();
        let mut totals: BTreeMap<&str, u64> = BTreeMap::new();
        for ((_, input), summary) in files.iter().zip(&summaries) {
            list.warc_file.append_value(input.source.name());
            match summary {
                Ok((s, rejected)) => {
                    if let Some(why) = nothing_read(s, rejected) {
                        report.input_errors.push(format!("{}: {why}", input.source.name()));
                    }
                    if let Some(cut) = s.cut {
                        let why = cut_short(cut);
                        tracing::warn!(file = %input.source.name(), offset = cut.offset, records_read = cut.records_before, "{why}");
                        report.input_errors.push(format!("{}: {why}", input.source.name()));
                    }
                    list.format.append_value(&s.format);
                    list.compression.append_value(&s.compression);
                    for (name, column, v) in [
                        ("bytes", &mut list.bytes, s.bytes),
                        ("records", &mut list.records, s.records),
                        ("documents", &mut list.documents, s.documents),
                        ("revisits", &mut list.revisits, s.revisits),
                        ("rejects", &mut list.rejects, s.rejects),
                        ("skipped", &mut list.skipped, s.skipped),
                        ("flattened", &mut list.flattened, s.flattened),
                        ("text_truncated", &mut list.text_truncated, s.text_truncated),
                        ("not_content", &mut list.not_content, s.not_content),
                        ("not_http_url", &mut list.not_http_url, s.not_http_url),
                    ] {
                        column.append_value(v);
                        *totals.entry(name).or_default() += v;
                    }
                    list.error.append_null();
                }
                Err(e) => {
                    list.format.append_value("unknown");
                    list.compression.append_value("unknown");
                    for column in [
                        &mut list.bytes,
                        &mut list.records,
                        &mut list.documents,
                        &mut list.revisits,
                        &mut list.rejects,
                        &mut list.skipped,
                        &mut list.flattened,
                        &mut list.text_truncated,
                        &mut list.not_content,
                        &mut list.not_http_url,
                    ] {
                        column.append_value(0);
                    }
                    list.error.append_value(e);
                    report.input_errors.push(e.clone());
                }
            }
        }
        let mut writer = crate::tables::write::TableWriter::for_shard(&ctx.out, ingest_files::TABLE, ctx.shard)?;
        writer.write_rest(&mut list)?;
        report.rows.insert(ingest_files::TABLE.into(), writer.commit()?);
        for dir in dirs {
            dir.commit()?;
        }
        for (table, key) in [("documents", "documents"), ("revisits", "revisits"), ("rejects", "rejects")] {
            report.rows.insert(table.into(), totals.get(key).copied().unwrap_or(0));
        }
        if let Some(&pages) = totals.get("not_http_url").filter(|&&n| n > 0) {
            tracing::warn!(
                documents = pages,
                "{pages} documents have a URL that is not http(s) (javascript:, a relative path, ...; \
                 ingest_files.not_http_url): they are deduplicated, but never kept over an http(s) copy"
            );
        }
        report.counters = totals.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        report.input_errors.extend(problems);
        Ok(report)
    }
}

/// Why no record of a file became a document, a revisit or a skipped
/// record, from its summary and its rejects by reason; `None` when some
/// did. Such a file is no crawl (or not the one meant), and a run that
/// reads it ends with exit code 3 rather than "0 documents" and a row in
/// `rejects` that nobody looks at.
fn nothing_read(summary: &FileSummary, rejected: &BTreeMap<String, u64>) -> Option<String> {
    if summary.documents + summary.revisits + summary.skipped > 0 {
        return None;
    }
    if summary.records == 0 {
        return Some("no record in it: not a crawl file".into());
    }
    let reasons: Vec<String> = rejected.iter().map(|(reason, n)| format!("{n} {reason}")).collect();
    Some(format!(
        "none of its {} records became a document, revisit or skipped record (rejected: {}; see table rejects)",
        summary.records,
        reasons.join(", ")
    ))
}

/// What a file the end of which cut a record short is told by: where, and
/// what was kept. Such a file is damaged (a copy or a download that
/// stopped part way), and a run that reads it ends with exit code 3, as
/// for a file that is no crawl: the records past the cut are gone, and a
/// `truncated` row in `rejects` is all that would say so.
fn cut_short(cut: crate::ingest::archive::Cut) -> String {
    format!(
        "damaged: the file ends inside the record or gzip member at offset {}, after {} whole records, which \
         are kept (the cut record is a `truncated` reject; what followed it is lost); was it copied or \
         downloaded whole?",
        cut.offset, cut.records_before
    )
}

/// Reads one archive or corpus file into part `i` of each table: its
/// summary, and its rejects counted by reason.
fn ingest_one(
    input: &InputFile,
    i: usize,
    dirs: &[TableDir],
    config: &Config,
) -> Result<(FileSummary, BTreeMap<String, u64>)> {
    let source = &input.source;
    let part = format!("{i:06}");
    let mut writers: Vec<PartWriter> =
        dirs.iter().zip(TABLES).map(|(d, t)| d.part(&part, arrow_schema(t))).collect::<Result<_>>()?;
    let mut document_rows = documents::Rows::default();
    let mut revisit_rows = revisits::Rows::default();
    let mut reject_rows = rejects::Rows::default();
    let file_label = source.name();
    let mut write_error: Option<anyhow::Error> = None;
    let name = source.name_path();
    let duplicate_type = if corpus::is_corpus_file(&name) { corpus::record_type(&name) } else { "response" };
    let mut seen_ids = std::collections::HashSet::new();
    let mut rejected: BTreeMap<String, u64> = BTreeMap::new();
    // The documents whose record id repeats, counted as documents by the
    // reader and moved to the rejects at the end.
    let mut repeated = FileSummary::new(&file_label);
    let read = ingest_file(source, &input.label, &config.ingest, &mut |mut outcome| {
        if write_error.is_some() {
            return;
        }
        // A record id repeated inside one file would repeat a doc_id.
        if let Outcome::Document(d) = &outcome {
            if !seen_ids.insert(d.doc_id) {
                repeated.count(&outcome);
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
        let written = match &outcome {
            Outcome::Document(d) => {
                push_document(&mut document_rows, d, &file_label);
                writers[0].write_if_full(&mut document_rows)
            }
            Outcome::Revisit(r) => {
                push_revisit(&mut revisit_rows, r, &file_label);
                writers[1].write_if_full(&mut revisit_rows)
            }
            Outcome::Reject(r) => {
                *rejected.entry(r.reason.clone()).or_default() += 1;
                push_reject(&mut reject_rows, r, &file_label);
                writers[2].write_if_full(&mut reject_rows)
            }
            Outcome::Skipped { .. } => return,
        };
        if let Err(e) = written {
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
    summary.reject_documents(&repeated);
    writers[0].write_rest(&mut document_rows)?;
    writers[1].write_rest(&mut revisit_rows)?;
    writers[2].write_rest(&mut reject_rows)?;
    for w in writers {
        w.close()?;
    }
    Ok((summary, rejected))
}

fn push_document(b: &mut documents::Rows, d: &Document, file: &str) {
    b.doc_id.append_value(d.doc_id);
    b.url.append_value(&d.url);
    b.warc_file.append_value(file);
    b.warc_offset.append_value(d.warc_offset);
    b.warc_length.append_option(d.warc_length);
    b.crawl_date.append_option(d.crawl_date.as_deref());
    b.http_status.append_option(d.http_status);
    b.content_type.append_option(d.content_type.as_deref());
    b.charset.append_value(&d.charset);
    b.title.append_value(&d.title);
    b.lang.append_value(&d.lang);
    b.text.append_value(&d.text);
    // i64 as `character_length` gives it in SQL (and history_documents stores it).
    b.text_chars.append_value(d.text.chars().count() as i64);
    b.raw_bytes.append_value(d.raw_bytes);
    b.payload_digest.append_value(&d.payload_digest);
    b.record_id.append_option(d.record_id.as_deref());
    b.canonical_url.append_value(&d.canonical_url);
    b.not_content.append_option(d.not_content.as_deref());
}

fn push_revisit(b: &mut revisits::Rows, r: &Revisit, file: &str) {
    b.doc_id.append_value(r.doc_id);
    b.url.append_value(&r.url);
    b.warc_file.append_value(file);
    b.warc_offset.append_value(r.warc_offset);
    b.crawl_date.append_option(r.crawl_date.as_deref());
    b.refers_to.append_option(r.refers_to.as_deref());
    b.payload_digest.append_option(r.payload_digest.as_deref());
}

fn push_reject(b: &mut rejects::Rows, r: &Reject, file: &str) {
    b.warc_file.append_value(file);
    b.warc_offset.append_value(r.warc_offset);
    b.record_type.append_value(&r.record_type);
    b.url.append_option(r.url.as_deref());
    b.reason.append_value(&r.reason);
    b.detail.append_value(&r.detail);
}

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
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::config::Config;
use crate::ingest::inputs::{expand_inputs, InputFile};
use crate::ingest::record::{Document, Outcome, Reject, Revisit};
use crate::ingest::{corpus, ingest_file, FileSummary};
use crate::runner::{RunContext, Stage, StageReport};
use crate::schema::arrow_schema;
use crate::shard::Shard;
use crate::table::{BatchBuilder, PartWriter, TableDir};

/// The ingest stage.
pub struct Ingest;

const TABLES: [&str; 3] = ["documents", "revisits", "rejects"];

impl Stage for Ingest {
    fn name(&self) -> &'static str {
        "ingest"
    }
    fn inputs(&self) -> Vec<&'static str> {
        vec![]
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

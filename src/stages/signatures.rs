//! Stage `signatures`: `tokens` + `df` + `corpus_stats` → `signatures`,
//! `method_state`, `sketches`, `shingles`, `a12_records`, `spotsigs`,
//! `method_pairs`.
//!
//! Every enabled method runs over every document in parallel (rayon); rows
//! are written method by method in doc_id order, so the tables are the same
//! on any number of threads. Every output table is always written (empty
//! when its method is off) so later SQL can rely on it.
//!
//! Known limit: the tokenized corpus is held in memory while signing
//! (a9's threshold search, SpotSigs and SL+ST need the whole corpus).

use anyhow::Result;
use arrow::array::{Array, AsArray, ListBuilder, StringBuilder, UInt16Builder, UInt32Builder, UInt64Builder, Float64Builder};
use arrow::datatypes::{Float64Type, Int64Type};
use futures::StreamExt;
use rayon::prelude::*;
use serde_json::{json, Value};
use std::collections::HashMap;

use crate::config::Config;
use crate::methods::{self, CorpusStats, DocView, PairMethod, Signature, TermStats};
use crate::runner::{RunContext, Stage, StageReport};
use crate::stages::tokens::load_tokens;
use crate::table::{BatchBuilder, TableWriter};

/// The signatures stage.
pub struct Signatures;

impl Stage for Signatures {
    fn name(&self) -> &'static str {
        "signatures"
    }
    fn inputs(&self) -> &'static [&'static str] {
        &["tokens", "df", "corpus_stats"]
    }
    fn outputs(&self, _: &Config) -> Vec<&'static str> {
        vec!["signatures", "method_state", "sketches", "shingles", "a12_records", "spotsigs", "method_pairs"]
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({"methods": config.methods})
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        ctx.runtime.block_on(run(ctx))
    }
}

fn enabled(config: &Config, id: &str) -> bool {
    config.methods.enabled.iter().any(|m| m == id)
}

/// Reads `df` and `corpus_stats` into memory.
pub async fn load_corpus_stats(session: &datafusion::prelude::SessionContext) -> Result<CorpusStats> {
    let mut stats = CorpusStats::default();
    for b in session.sql("SELECT n_docs, dl_avg FROM corpus_stats").await?.collect().await? {
        if b.num_rows() > 0 {
            stats.n_docs = b.column(0).as_primitive::<Int64Type>().value(0).max(0) as u64;
            let avg = b.column(1).as_primitive::<Float64Type>();
            stats.dl_avg = if avg.is_null(0) { 0.0 } else { avg.value(0) };
        }
    }
    let mut stream = session.sql("SELECT term, df, cf FROM df").await?.execute_stream().await?;
    while let Some(b) = stream.next().await {
        let b = b?;
        let terms = b.column(0).as_string::<i32>();
        let df = b.column(1).as_primitive::<Int64Type>();
        let cf = b.column(2).as_primitive::<Int64Type>();
        for i in 0..b.num_rows() {
            stats.terms.insert(
                terms.value(i).to_string(),
                TermStats { df: df.value(i) as u64, cf: cf.value(i) as u64 },
            );
        }
    }
    Ok(stats)
}

async fn run(ctx: &RunContext) -> Result<StageReport> {
    let config = &ctx.config;
    let session = crate::sql::session_over(&ctx.out).await?;
    let stats = load_corpus_stats(&session).await?;
    let rows = load_tokens(&session, "").await?;
    drop(session);
    let docs: Vec<DocView> = rows.iter().map(|r| r.view()).collect();
    let mut report = StageReport::default();

    // Exact-match signature methods.
    let sig_methods = methods::build_signature_methods(&config.methods.enabled, &config.methods, &stats, &docs);
    let mut sigs = TableWriter::for_table(&ctx.out, "signatures")?;
    let mut state = TableWriter::for_table(&ctx.out, "method_state")?;
    let mut sb = BatchBuilder::new("signatures");
    let mut stb = BatchBuilder::new("method_state");
    let progress = crate::progress::counter(ctx.progress, (docs.len() * sig_methods.len()) as u64, "signatures", "docs");
    for method in &sig_methods {
        let started = std::time::Instant::now();
        let per_doc: Vec<Vec<Signature>> = docs
            .par_iter()
            .map(|d| {
                let mut out = Vec::new();
                method.sign(d, &mut out);
                out
            })
            .collect();
        let signed = per_doc.iter().filter(|s| !s.is_empty()).count() as u64;
        report.counters.insert(format!("{}_documents_signed", method.id()), signed);
        report.counters.insert(format!("{}_sign_ms", method.id()), started.elapsed().as_millis() as u64);
        for (doc, doc_sigs) in docs.iter().zip(&per_doc) {
            for s in doc_sigs {
                sb.col::<StringBuilder>(0).append_value(method.id());
                sb.col::<UInt64Builder>(1).append_value(doc.doc_id);
                sb.col::<UInt16Builder>(2).append_value(s.slot);
                sb.col::<UInt64Builder>(3).append_value(s.sig);
                sigs.write_if_full(&mut sb)?;
            }
        }
        for row in method.state() {
            stb.col::<StringBuilder>(0).append_value(method.id());
            stb.col::<UInt16Builder>(1).append_value(row.slot);
            stb.col::<StringBuilder>(2).append_value(&row.term);
            stb.col::<Float64Builder>(3).append_value(row.value);
            state.write_if_full(&mut stb)?;
        }
        progress.inc(docs.len() as u64);
    }
    progress.finish_and_clear();
    sigs.write_rest(&mut sb)?;
    state.write_rest(&mut stb)?;
    report.rows.insert("signatures".into(), sigs.commit()?);
    report.rows.insert("method_state".into(), state.commit()?);

    report.rows.insert("sketches".into(), write_sketches(ctx, &docs)?);
    report.rows.insert("shingles".into(), write_shingles(ctx, &docs)?);
    report.rows.insert("a12_records".into(), write_a12(ctx, &docs)?);
    report.rows.insert("spotsigs".into(), write_spotsigs(ctx, &docs)?);
    let pair_rows = write_method_pairs(ctx, &docs, &mut report)?;
    report.rows.insert("method_pairs".into(), pair_rows);
    Ok(report)
}

/// Min-hash sketches, for scoring minhash candidates.
fn write_sketches(ctx: &RunContext, docs: &[DocView]) -> Result<u64> {
    let mut w = TableWriter::for_table(&ctx.out, "sketches")?;
    if enabled(&ctx.config, "minhash") {
        let hasher = methods::shingles::MinHash::new(&ctx.config.methods);
        let sketches: Vec<Option<Vec<u64>>> = docs.par_iter().map(|d| hasher.sketch(d.terms)).collect();
        let mut b = BatchBuilder::new("sketches");
        for (d, s) in docs.iter().zip(sketches) {
            if let Some(s) = s {
                b.col::<UInt64Builder>(0).append_value(d.doc_id);
                let list = b.col::<ListBuilder<UInt64Builder>>(1);
                list.values().append_slice(&s);
                list.append(true);
                w.write_if_full(&mut b)?;
            }
        }
        w.write_rest(&mut b)?;
    }
    w.commit()
}

/// Distinct shingles per document, the records of a11's chains.
fn write_shingles(ctx: &RunContext, docs: &[DocView]) -> Result<u64> {
    let mut w = TableWriter::for_table(&ctx.out, "shingles")?;
    if enabled(&ctx.config, "a11") {
        let width = ctx.config.methods.shingle_width;
        let per_doc: Vec<Vec<u64>> =
            docs.par_iter().map(|d| methods::shingles::distinct_shingles(d.terms, width)).collect();
        let mut b = BatchBuilder::new("shingles");
        for (d, shingles) in docs.iter().zip(per_doc) {
            for s in shingles {
                b.col::<UInt64Builder>(0).append_value(s);
                b.col::<UInt64Builder>(1).append_value(d.doc_id);
                b.col::<UInt32Builder>(2).append_value(d.terms.len() as u32);
                w.write_if_full(&mut b)?;
            }
        }
        w.write_rest(&mut b)?;
    }
    w.commit()
}

/// A12 records (up to 3 per document).
fn write_a12(ctx: &RunContext, docs: &[DocView]) -> Result<u64> {
    let mut w = TableWriter::for_table(&ctx.out, "a12_records")?;
    if enabled(&ctx.config, "a12") {
        let per_doc: Vec<Vec<methods::a12::A12Record>> = docs.par_iter().map(methods::a12::a12_records).collect();
        let mut b = BatchBuilder::new("a12_records");
        for r in per_doc.iter().flatten() {
            b.col::<UInt64Builder>(0).append_value(r.doc_id);
            b.col::<UInt32Builder>(1).append_value(r.key);
            b.col::<UInt32Builder>(2).append_value(r.len);
            b.col::<UInt32Builder>(3).append_value(r.num);
            for (i, ss) in r.ss.iter().enumerate() {
                b.col::<UInt32Builder>(4 + i).append_value(*ss);
            }
            let ws = b.col::<ListBuilder<UInt32Builder>>(7);
            ws.values().append_slice(&r.ws);
            ws.append(true);
            w.write_if_full(&mut b)?;
        }
        w.write_rest(&mut b)?;
    }
    w.commit()
}

/// SpotSigs multisets.
fn write_spotsigs(ctx: &RunContext, docs: &[DocView]) -> Result<u64> {
    let mut w = TableWriter::for_table(&ctx.out, "spotsigs")?;
    if enabled(&ctx.config, "spotsigs") {
        let spot = methods::spotsigs::SpotSigs::new(&ctx.config.methods);
        let per_doc: Vec<Vec<(String, u32)>> = docs.par_iter().map(|d| spot.spot_signatures(d.words)).collect();
        let mut b = BatchBuilder::new("spotsigs");
        for (d, multiset) in docs.iter().zip(per_doc) {
            for (sig, count) in multiset {
                b.col::<UInt64Builder>(0).append_value(d.doc_id);
                b.col::<StringBuilder>(1).append_value(&sig);
                b.col::<UInt32Builder>(2).append_value(count);
                w.write_if_full(&mut b)?;
            }
        }
        w.write_rest(&mut b)?;
    }
    w.commit()
}

/// Pairs of the methods with their own corpus-wide search.
fn write_method_pairs(ctx: &RunContext, docs: &[DocView], report: &mut StageReport) -> Result<u64> {
    let mut searches: Vec<Box<dyn PairMethod>> = Vec::new();
    if enabled(&ctx.config, "spotsigs") {
        searches.push(Box::new(methods::spotsigs::SpotSigs::new(&ctx.config.methods)));
    }
    if enabled(&ctx.config, "slst") {
        searches.push(Box::new(methods::slst::Slst::new(&ctx.config.methods)));
    }
    let mut w = TableWriter::for_table(&ctx.out, "method_pairs")?;
    let mut b = BatchBuilder::new("method_pairs");
    let mut per_method: HashMap<&str, u64> = HashMap::new();
    for search in &searches {
        let started = std::time::Instant::now();
        let pairs = search.find_pairs_counted(docs, &mut report.counters);
        report.counters.insert(format!("{}_search_ms", search.id()), started.elapsed().as_millis() as u64);
        per_method.insert(search.id(), pairs.len() as u64);
        for p in pairs {
            b.col::<StringBuilder>(0).append_value(search.id());
            b.col::<UInt64Builder>(1).append_value(p.doc_a);
            b.col::<UInt64Builder>(2).append_value(p.doc_b);
            b.col::<Float64Builder>(3).append_value(p.score);
            w.write_if_full(&mut b)?;
        }
    }
    for (id, n) in per_method {
        report.counters.insert(format!("{id}_pairs"), n);
    }
    w.write_rest(&mut b)?;
    w.commit()
}

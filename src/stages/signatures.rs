//! Stage `signatures`: `tokens` + `df` + `corpus_stats` + `method_state` →
//! `signatures`, `sketches`, `shingles`, `a12_records`, `spotsigs`.
//!
//! Every enabled method signs every document in parallel (rayon); rows are
//! written method by method in doc_id order, so the tables are the same on
//! any number of threads. Every output table is always written (empty when
//! its method is off) so later SQL can rely on it.
//!
//! A map stage: task I of N (`--shard I/N`) signs the documents with
//! `doc_id % N = I`. The corpus-wide state of the global methods was built
//! once by the `stats` stage; a9's descriptive words are read back from
//! `method_state`, the other lexicons are rebuilt from `df`. The task's
//! documents are held in memory while signing.

use anyhow::Result;
use arrow::array::{AsArray, ListBuilder, StringBuilder, UInt16Builder, UInt32Builder, UInt64Builder};
use arrow::datatypes::{Float64Type, UInt16Type};
use rayon::prelude::*;
use serde_json::{json, Value};

use crate::config::Config;
use crate::methods::{self, DescrSource, DocView, Signature, StateRow};
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
        &["tokens", "df", "corpus_stats", "method_state"]
    }
    fn outputs(&self, _: &Config) -> Vec<&'static str> {
        vec!["signatures", "sketches", "shingles", "a12_records", "spotsigs"]
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({"methods": config.methods})
    }
    fn shardable(&self) -> bool {
        true
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        ctx.runtime.block_on(run(ctx))
    }
}

async fn run(ctx: &RunContext) -> Result<StageReport> {
    let config = &ctx.config;
    let session = crate::sql::session_over(&ctx.out).await?;
    let stats = crate::stages::stats::load_corpus_stats(&session).await?;
    let a9_state = load_method_state(&session, "a9").await?;
    let rows = load_tokens(&session, &ctx.shard.doc_predicate("doc_id")).await?;
    drop(session);
    let docs: Vec<DocView> = rows.iter().map(|r| r.view()).collect();
    let mut report = StageReport::default();

    // Exact-match signature methods.
    let sig_methods = methods::build_signature_methods(
        &config.methods.enabled,
        &config.methods,
        &stats,
        DescrSource::State(&a9_state),
    );
    let mut sigs = TableWriter::for_shard(&ctx.out, "signatures", ctx.shard)?;
    let mut sb = BatchBuilder::new("signatures");
    let progress =
        crate::progress::counter(ctx.progress, (docs.len() * sig_methods.len()) as u64, "signatures", "docs");
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
                sb.col::<UInt32Builder>(4).append_value(doc.terms.len() as u32);
                sigs.write_if_full(&mut sb)?;
            }
        }
        progress.inc(docs.len() as u64);
    }
    progress.finish_and_clear();
    sigs.write_rest(&mut sb)?;
    report.rows.insert("signatures".into(), sigs.commit()?);

    report.rows.insert("sketches".into(), write_sketches(ctx, &docs)?);
    report.rows.insert("shingles".into(), write_shingles(ctx, &docs)?);
    report.rows.insert("a12_records".into(), write_a12(ctx, &docs)?);
    report.rows.insert("spotsigs".into(), write_spotsigs(ctx, &docs)?);
    Ok(report)
}

/// The `method_state` rows of `method`, by slot and term.
async fn load_method_state(session: &datafusion::prelude::SessionContext, method: &str) -> Result<Vec<StateRow>> {
    let sql = format!("SELECT slot, term, value FROM method_state WHERE method = '{method}' ORDER BY slot, term");
    let mut rows = Vec::new();
    for b in session.sql(&sql).await?.collect().await? {
        let slots = b.column(0).as_primitive::<UInt16Type>();
        let terms = b.column(1).as_string::<i32>();
        let values = b.column(2).as_primitive::<Float64Type>();
        for i in 0..b.num_rows() {
            rows.push(StateRow { slot: slots.value(i), term: terms.value(i).to_string(), value: values.value(i) });
        }
    }
    Ok(rows)
}

/// Min-hash sketches, for scoring minhash candidates.
fn write_sketches(ctx: &RunContext, docs: &[DocView]) -> Result<u64> {
    let mut w = TableWriter::for_shard(&ctx.out, "sketches", ctx.shard)?;
    if ctx.config.methods.is_enabled("minhash") {
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
    let mut w = TableWriter::for_shard(&ctx.out, "shingles", ctx.shard)?;
    if ctx.config.methods.is_enabled("a11") {
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
    let mut w = TableWriter::for_shard(&ctx.out, "a12_records", ctx.shard)?;
    if ctx.config.methods.is_enabled("a12") {
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
            for (i, ws) in r.ws.iter().enumerate() {
                b.col::<UInt32Builder>(7 + i).append_value(*ws);
            }
            w.write_if_full(&mut b)?;
        }
        w.write_rest(&mut b)?;
    }
    w.commit()
}

/// SpotSigs multisets.
fn write_spotsigs(ctx: &RunContext, docs: &[DocView]) -> Result<u64> {
    let mut w = TableWriter::for_shard(&ctx.out, "spotsigs", ctx.shard)?;
    if ctx.config.methods.is_enabled("spotsigs") {
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

//! Stage `signatures`: `tokens` + `df` + `corpus_stats` + `method_state` →
//! `signatures`, `sketches`, `shingles`, `a12_records`.
//!
//! Every enabled method signs every document in parallel (rayon); rows are
//! written chunk by chunk, method by method, in doc_id order, so the tables
//! are the same on any number of threads. Every output table is always written (empty when
//! its method is off) so later SQL can rely on it.
//!
//! A map stage: task I of N (`--shard I/N`) signs the documents with
//! `doc_id % N = I`. The corpus-wide state of the global methods was built
//! once by the `stats` stage; a9's descriptive words are read back from
//! `method_state`, the other lexicons are rebuilt from `df`. The task's
//! documents are read and signed in chunks of [`CHUNK_DOCS`], so memory is
//! bounded by a chunk whatever the corpus size.

use anyhow::Result;
use arrow::array::{AsArray, StringBuilder, UInt16Builder, UInt32Builder, UInt64Builder};
use arrow::datatypes::{Float64Type, UInt16Type};
use rayon::prelude::*;
use serde_json::{json, Value};

use crate::config::Config;
use crate::methods::{self, DescrSource, DocView, Signature, StateRow};
use crate::runner::{RunContext, Stage, StageReport};
use crate::stages::tokens::{TokenChunks, TokenParts};
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
        vec!["signatures", "sketches", "shingles", "a12_records"]
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

/// Documents signed at a time: the stage holds one chunk of the task's
/// tokens, so its memory does not grow with the corpus.
const CHUNK_DOCS: usize = 4_096;

async fn run(ctx: &RunContext) -> Result<StageReport> {
    let config = &ctx.config;
    let session = ctx.session().await?;
    let stats = crate::stages::stats::load_corpus_stats(&session).await?;
    let a9_state = load_method_state(&session, "a9").await?;
    let own = ctx.shard.doc_predicate("doc_id");
    let total: i64 = {
        let sql = format!("SELECT COUNT(*) FROM tokens WHERE {own}");
        let b = session.sql(&sql).await?.collect().await?;
        b.first().map_or(0, |b| b.column(0).as_primitive::<arrow::datatypes::Int64Type>().value(0))
    };
    let mut chunks = TokenChunks::open(&session, &own, TokenParts::All).await?;
    let mut report = StageReport::default();

    let sig_methods = methods::build_signature_methods(
        &config.methods.enabled,
        &config.methods,
        &stats,
        DescrSource::State(&a9_state),
    );
    let mut writers = Writers::new(ctx)?;
    let progress = crate::progress::counter(ctx.progress, total.max(0) as u64, "signatures", "docs");
    let mut sign_ms: Vec<u64> = vec![0; sig_methods.len()];
    let mut signed: Vec<u64> = vec![0; sig_methods.len()];
    while let Some(rows) = chunks.next_chunk(CHUNK_DOCS).await? {
        let docs: Vec<DocView> = rows.iter().map(|r| r.view()).collect();
        for (m, method) in sig_methods.iter().enumerate() {
            let started = std::time::Instant::now();
            let per_doc: Vec<Vec<Signature>> = docs
                .par_iter()
                .map(|d| {
                    let mut out = Vec::new();
                    method.sign(d, &mut out);
                    out
                })
                .collect();
            signed[m] += per_doc.iter().filter(|s| !s.is_empty()).count() as u64;
            sign_ms[m] += started.elapsed().as_millis() as u64;
            let b = &mut writers.signatures.1;
            for (doc, doc_sigs) in docs.iter().zip(&per_doc) {
                for s in doc_sigs {
                    b.col::<StringBuilder>(0).append_value(method.id());
                    b.col::<UInt64Builder>(1).append_value(doc.doc_id);
                    b.col::<UInt16Builder>(2).append_value(s.slot);
                    b.col::<UInt64Builder>(3).append_value(s.sig);
                    b.col::<UInt32Builder>(4).append_value(doc.terms.len() as u32);
                    writers.signatures.0.write_if_full(b)?;
                }
            }
        }
        write_sketches(ctx, &docs, &mut writers.sketches)?;
        write_shingles(ctx, &docs, &mut writers.shingles)?;
        write_a12(ctx, &docs, &mut writers.a12_records)?;
        progress.inc(docs.len() as u64);
    }
    progress.finish_and_clear();
    for (m, method) in sig_methods.iter().enumerate() {
        report.counters.insert(format!("{}_documents_signed", method.id()), signed[m]);
        report.counters.insert(format!("{}_sign_ms", method.id()), sign_ms[m]);
    }
    for (table, (mut writer, mut rest)) in [
        ("signatures", writers.signatures),
        ("sketches", writers.sketches),
        ("shingles", writers.shingles),
        ("a12_records", writers.a12_records),
    ] {
        writer.write_rest(&mut rest)?;
        report.rows.insert(table.into(), writer.commit()?);
    }
    Ok(report)
}

/// A table being written and its pending rows.
type Output = (TableWriter, BatchBuilder);

/// The stage's output tables, open for the whole run and fed chunk by
/// chunk (a method that is off leaves its table empty).
struct Writers {
    signatures: Output,
    sketches: Output,
    shingles: Output,
    a12_records: Output,
}

impl Writers {
    fn new(ctx: &RunContext) -> Result<Writers> {
        let open = |table: &str| -> Result<Output> {
            Ok((TableWriter::for_shard(&ctx.out, table, ctx.shard)?, BatchBuilder::new(table)))
        };
        Ok(Writers {
            signatures: open("signatures")?,
            sketches: open("sketches")?,
            shingles: open("shingles")?,
            a12_records: open("a12_records")?,
        })
    }
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

/// Min-hash sketches, one row per (document, function), for the SQL that
/// estimates the resemblance of minhash band pairs (`jobs/minhash_edges.sql`).
fn write_sketches(ctx: &RunContext, docs: &[DocView], (w, b): &mut Output) -> Result<()> {
    if ctx.config.methods.is_enabled("minhash") {
        let hasher = methods::shingles::MinHash::new(&ctx.config.methods);
        let sketches: Vec<Option<Vec<u64>>> = docs.par_iter().map(|d| hasher.sketch(d.terms)).collect();
        for (d, s) in docs.iter().zip(sketches) {
            for (position, minimum) in s.iter().flatten().enumerate() {
                b.col::<UInt64Builder>(0).append_value(d.doc_id);
                // A sketch of 2^32 minima would not fit in memory to begin with.
                b.col::<UInt32Builder>(1).append_value(position as u32);
                b.col::<UInt64Builder>(2).append_value(*minimum);
                w.write_if_full(b)?;
            }
        }
    }
    Ok(())
}

/// Distinct shingles per document, the records of a11's chains.
fn write_shingles(ctx: &RunContext, docs: &[DocView], (w, b): &mut Output) -> Result<()> {
    if ctx.config.methods.is_enabled("a11") {
        let width = ctx.config.methods.shingle_width;
        let per_doc: Vec<Vec<u64>> =
            docs.par_iter().map(|d| methods::shingles::distinct_shingles(d.terms, width)).collect();
        for (d, shingles) in docs.iter().zip(per_doc) {
            for s in shingles {
                b.col::<UInt64Builder>(0).append_value(s);
                b.col::<UInt64Builder>(1).append_value(d.doc_id);
                b.col::<UInt32Builder>(2).append_value(d.terms.len() as u32);
                w.write_if_full(b)?;
            }
        }
    }
    Ok(())
}

/// A12 records (up to 3 per document).
fn write_a12(ctx: &RunContext, docs: &[DocView], (w, b): &mut Output) -> Result<()> {
    if ctx.config.methods.is_enabled("a12") {
        let per_doc: Vec<Vec<methods::a12::A12Record>> = docs.par_iter().map(methods::a12::a12_records).collect();
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
            w.write_if_full(b)?;
        }
    }
    Ok(())
}

//! Stage `verify`: `candidates` → `duplicates`.
//!
//! Every distinct candidate pair is verified once, however many methods
//! proposed it, with the similarity of spec §9 (`2·LCS/(|a|+|b|)` over the
//! normalized texts, the value of Perl's String::Similarity), in parallel.
//! A map stage: task I of N (`--shard I/N`) verifies the pairs with
//! `(doc_a + doc_b) % N = I` and loads only their texts.

use anyhow::Result;
use arrow::array::{Array, AsArray, BooleanBuilder, Float64Builder, ListBuilder, StringBuilder, UInt64Builder};
use arrow::datatypes::UInt64Type;
use futures::StreamExt;
use rayon::prelude::*;
use serde_json::{json, Value};
use std::collections::HashMap;

use crate::config::Config;
use crate::runner::{RunContext, Stage, StageReport};
use crate::similarity::{similarity, similarity_at_least};
use crate::sql::substitute;
use crate::stages::tokens::load_tokens;
use crate::table::{BatchBuilder, TableWriter};

/// The verify stage.
pub struct Verify;

/// Pairs whose texts multiply to more characters than this are only
/// checked against the threshold (the exact value below it is not worth
/// the quadratic work); their similarity is null when below.
const EXACT_BELOW_THRESHOLD_MAX_CELLS: u64 = 400_000_000;

impl Stage for Verify {
    fn name(&self) -> &'static str {
        "verify"
    }
    fn inputs(&self) -> &'static [&'static str] {
        &["candidates", "documents", "tokens"]
    }
    fn outputs(&self, _: &Config) -> Vec<&'static str> {
        vec!["duplicates"]
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({"verify": config.verify})
    }
    fn shardable(&self) -> bool {
        true
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        ctx.runtime.block_on(run(ctx))
    }
}

/// The verification similarity of two normalized texts: exact when at or
/// above `threshold` or cheap enough, otherwise None (known to be below).
pub fn verify_pair(a: &str, b: &str, threshold: f64) -> Option<f64> {
    match similarity_at_least(a, b, threshold) {
        Some(s) => Some(s),
        None if (a.len() as u64) * (b.len() as u64) <= EXACT_BELOW_THRESHOLD_MAX_CELLS => Some(similarity(a, b)),
        None => None,
    }
}

async fn run(ctx: &RunContext) -> Result<StageReport> {
    let threshold = ctx.config.verify.threshold;
    let session = crate::sql::session_over(&ctx.out).await?;
    let own = ctx.shard.pair_predicate("doc_a", "doc_b");
    let texts: HashMap<u64, String> = load_tokens(
        &session,
        &format!("doc_id IN (SELECT doc_a FROM candidates WHERE {own} UNION SELECT doc_b FROM candidates WHERE {own})"),
    )
    .await?
    .into_iter()
    .map(|r| (r.doc_id, r.terms.join(" ")))
    .collect();
    let total: usize = session
        .sql(&format!("SELECT COUNT(*) FROM (SELECT DISTINCT doc_a, doc_b FROM candidates WHERE {own})"))
        .await?
        .collect()
        .await?
        .first()
        .map_or(0, |b| b.column(0).as_primitive::<arrow::datatypes::Int64Type>().value(0) as usize);
    let progress = crate::progress::counter(ctx.progress, total as u64, "verify", "pairs");
    let sql = substitute(include_str!("../../jobs/pairs_to_verify.sql"), &[("own_pairs", own.clone())]);
    let mut stream = session.sql(&sql).await?.execute_stream().await?;
    let mut writer = TableWriter::for_shard(&ctx.out, "duplicates", ctx.shard)?;
    let mut b = BatchBuilder::new("duplicates");
    let mut verified_count = 0u64;
    let empty = String::new();
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        let da = batch.column(0).as_primitive::<UInt64Type>();
        let db = batch.column(1).as_primitive::<UInt64Type>();
        let ua = batch.column(2).as_string::<i32>();
        let ub = batch.column(3).as_string::<i32>();
        let methods = batch.column(4).as_list::<i32>();
        let sims: Vec<Option<f64>> = (0..batch.num_rows())
            .into_par_iter()
            .map(|i| {
                let a = texts.get(&da.value(i)).unwrap_or(&empty);
                let b = texts.get(&db.value(i)).unwrap_or(&empty);
                verify_pair(a, b, threshold)
            })
            .collect();
        for (i, sim) in sims.into_iter().enumerate() {
            b.col::<UInt64Builder>(0).append_value(da.value(i));
            b.col::<UInt64Builder>(1).append_value(db.value(i));
            b.col::<StringBuilder>(2).append_value(ua.value(i));
            b.col::<StringBuilder>(3).append_value(ub.value(i));
            let list = b.col::<ListBuilder<StringBuilder>>(4);
            let m = methods.value(i);
            let m = m.as_string::<i32>();
            for j in 0..m.len() {
                list.values().append_value(m.value(j));
            }
            list.append(true);
            b.col::<Float64Builder>(5).append_option(sim);
            let verified = sim.is_some_and(|s| s >= threshold);
            verified_count += verified as u64;
            b.col::<BooleanBuilder>(6).append_value(verified);
            writer.write_if_full(&mut b)?;
        }
        progress.inc(batch.num_rows() as u64);
    }
    progress.finish_and_clear();
    writer.write_rest(&mut b)?;
    let mut report = StageReport::default();
    report.rows.insert("duplicates".into(), writer.commit()?);
    report.counters.insert("verified_pairs".into(), verified_count);
    Ok(report)
}

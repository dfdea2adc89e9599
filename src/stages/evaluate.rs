//! Stage `evaluate`: the study's evaluation tables on every run
//! (`method_quality`: Tables 2 and 3; `method_overlap`: Table 4), and the
//! scores against human labels when a gold file is given
//! (`jobs/evaluate_gold.sql`): the gold file is loaded into `gold_pairs` and
//! `gold_clusters` first, so the SQL (and an analyst) can join it with the
//! run's tables. Without a gold file these three tables are written empty,
//! so a run's table set does not depend on its options.
//!
//! The study's tables judge every pair a method proposes, but the `verify`
//! stage compares a document with cluster representatives only. So this
//! stage verifies the methods' candidate pairs itself, at a bounded cost:
//! a method with at most `evaluate.max_judged_pairs` pairs has them all
//! verified (exact figures); a larger one is judged on a uniform random
//! sample of that many (estimates, with a 95% Wilson interval for the
//! precision). The sample of a method is its pairs with the smallest hash
//! values (a bottom-k sample, [`pair_hash`]): the same hash for every
//! method, so the k smallest of a union of methods are among the judged
//! pairs of its members, and the pool (the union of the verified pairs of
//! the pool's methods, `evaluate.pool`, for recall) and the overlap of two
//! methods are estimated from the same judged pairs without verifying more.
//!
//! A method's found pairs are the pairs it proposes (`candidates`), except
//! for the methods whose comparison is part of the method
//! ([`crate::methods::registry::MethodSpec::includes_comparison`]: a11,
//! study §6.1), which found the candidate pairs that passed it: `verify`
//! compares all of those, and both `method_quality` and `gold_quality`
//! count only the passing ones.
//!
//! Only the first of each exact group was searched (spec §9, "Exact copies
//! first"); the pairs inside exact groups count as found and verified by
//! every method, in `method_quality`, `method_overlap` and `gold_quality`,
//! without being listed ([`Judged::exact_pairs`], `jobs/evaluate_gold.sql`).
//!
//! The pool's methods are configurable because the study's recall is
//! relative to the union of the duplicates of its experiment's methods
//! (A0–A10, preset `"study"`): only with that pool can this run's recall be
//! set beside the study's published figures (the report shows both).

use anyhow::Result;
use futures::StreamExt;
use rayon::prelude::*;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::config::Config;

use crate::evaluate::gold::{read_gold, GoldLabels};
use crate::evaluate::judge::{pair_hash, quality_rows, scale, Judged, JudgedPair, QualityRow};
use crate::evaluate::settings::{Pool, POOL_ALL};
use crate::runner::{RunContext, Stage, StageReport};
use crate::tables::columns::{duplicates, gold_clusters, gold_pairs, gold_quality, method_overlap, method_quality};
use crate::tables::sql::{run_into_table, substitute};
use crate::tables::write::{TableOutput, TableWriter};
use crate::verify::compare::{compare, Doc};
use crate::verify::inputs::{load_verification_texts, CandidateEdges};

/// The evaluate stage.
pub struct Evaluate;

impl Stage for Evaluate {
    fn name(&self) -> &'static str {
        "evaluate"
    }
    fn inputs(&self) -> Vec<&'static str> {
        vec![
            "documents",
            "tokens",
            "candidates",
            "duplicates",
            "failed_pairs",
            "clusters",
            "exact_copies",
            "exact_groups",
        ]
    }
    fn outputs(&self, _: &Config) -> Vec<&'static str> {
        vec!["method_quality", "method_overlap", "gold_pairs", "gold_clusters", "gold_quality"]
    }
    fn runs_sql_on_engine(&self) -> bool {
        true
    }
    /// The evaluation settings with the pool resolved to the methods run
    /// (the report names them next to the recall figures).
    fn config_section(&self, config: &Config) -> Value {
        json!({
            "enabled": config.methods.enabled,
            "evaluate": config.evaluate,
            "pool_methods": config.evaluate.pool_methods(&config.methods.enabled),
        })
    }
    /// The gold file's content, so that editing it reruns the stage.
    fn external_fingerprint(&self, ctx: &RunContext) -> Result<Value> {
        let path = &ctx.config.evaluate.gold_file;
        if path.is_empty() {
            return Ok(Value::Null);
        }
        let bytes = std::fs::read(path).map_err(|e| anyhow::anyhow!("cannot read gold file {path}: {e}"))?;
        Ok(json!({"gold_file": path, "xxh3": format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&bytes))}))
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        let cfg = &ctx.config.evaluate;
        let pool = cfg.pool_methods(&ctx.config.methods.enabled);
        // "all" means the methods run; a preset or list naming others is
        // not the pool it says.
        let every_method_run = matches!(&cfg.pool, Pool::Preset(name) if name == POOL_ALL);
        let not_run: Vec<&str> = cfg.configured_pool().into_iter().filter(|m| !pool.iter().any(|p| p == m)).collect();
        if !every_method_run && !not_run.is_empty() {
            tracing::warn!(
                "evaluate.pool names methods that were not run ({}): the pool is the union of {} only",
                not_run.join(", "),
                if pool.is_empty() { "no method (recall is not computed)".to_string() } else { pool.join(", ") }
            );
        }
        let gold = if cfg.gold_file.is_empty() { GoldLabels::default() } else { read_gold(Path::new(&cfg.gold_file))? };
        let mut report = StageReport::default();
        let (pairs, members) = write_gold_tables(&ctx.out, &gold)?;
        report.rows.insert("gold_pairs".into(), pairs);
        report.rows.insert("gold_clusters".into(), members);
        ctx.runtime.block_on(async {
            let judged = judge_method_pairs(ctx, &pool, &mut report).await?;
            let (pool_verified, rows) = quality_rows(&judged, &ctx.config.methods.enabled);
            report.counters.insert("pool_verified_pairs".into(), pool_verified);
            report.rows.insert("method_quality".into(), write_method_quality(&ctx.out, &rows)?);
            report
                .rows
                .insert("method_overlap".into(), write_method_overlap(&ctx.out, &judged, &ctx.config.methods.enabled)?);
            let session = ctx.sql_stage_session().await?;
            let params = [
                ("enabled_methods", sql_values(ctx.config.methods.enabled.iter().map(String::as_str))),
                ("comparing_methods", sql_values(crate::methods::registry::comparing_methods())),
                ("positive_min_label", cfg.gold_positive_min_label.to_string()),
                ("negative_max_label", cfg.gold_negative_max_label.to_string()),
            ];
            if gold.pairs.is_empty() && gold.members.is_empty() {
                // Without labels the result is empty, known without a query.
                // Not asking also sidesteps a Ballista 55 scheduler bug: joins
                // over the empty gold tables leave some operators of some
                // tasks unexecuted, those tasks report fewer metric sets than
                // their stage, and the scheduler rejects their status updates
                // ("task metrics array size 5 does not equal ... 6"), so the
                // job waits for them forever.
                report
                    .rows
                    .insert("gold_quality".into(), TableWriter::for_table(&ctx.out, gold_quality::TABLE)?.commit()?);
            } else {
                let sql = substitute(include_str!("../../jobs/evaluate_gold.sql"), &params);
                report
                    .rows
                    .insert("gold_quality".into(), run_into_table(&session, &ctx.out, "gold_quality", &sql).await?);
            }
            Ok(report)
        })
    }
}

/// Method ids as the rows of a SQL `VALUES` list: `('a0'), ('a11')`.
fn sql_values<'a>(methods: impl Iterator<Item = &'a str>) -> String {
    methods.map(|m| format!("('{}')", m.replace('\'', "''"))).collect::<Vec<_>>().join(", ")
}

/// Writes the gold labels as `gold_pairs` and `gold_clusters`; returns their
/// row counts.
fn write_gold_tables(out: &Path, gold: &GoldLabels) -> Result<(u64, u64)> {
    let mut pairs = TableOutput::<gold_pairs::Rows>::create(out)?;
    for p in &gold.pairs {
        pairs.push(|b| {
            b.key_kind.append_value(p.key_kind.as_str());
            b.key_a.append_value(&p.a);
            b.key_b.append_value(&p.b);
            b.label.append_option(p.label);
            b.dup.append_option(p.dup);
        })?;
    }
    let mut members = TableOutput::<gold_clusters::Rows>::create(out)?;
    for m in &gold.members {
        members.push(|b| {
            b.key_kind.append_value(m.key_kind.as_str());
            b.key.append_value(&m.key);
            b.cluster.append_value(&m.cluster);
        })?;
    }
    Ok((pairs.commit()?, members.commit()?))
}

/// Chooses and verifies the judged pairs: for each method its `k` found
/// pairs of smallest [`pair_hash`] (all when it has fewer). A method's
/// found pairs are its candidate pairs, or for a method that includes its
/// comparison (a11) those that passed it in `verify`
/// ([`CandidateEdges::keep_found`]). Pairs `verify` already compared keep
/// that verdict; the others are verified here. `pool` names the pool's
/// methods.
async fn judge_method_pairs(ctx: &RunContext, pool: &[String], report: &mut StageReport) -> Result<Judged> {
    let session = ctx.session().await?;
    let mut edges = CandidateEdges::load(&session).await?;
    // Verdicts `verify` already reached, sorted by pair: a sorted list
    // rather than a map, and the pair map dropped once the pairs are a
    // list, since both hold about one entry per candidate pair.
    let mut known: Vec<((u64, u64), bool)> = Vec::new();
    let mut stream = session
        .sql("SELECT doc_a, doc_b, verified FROM duplicates UNION ALL SELECT doc_a, doc_b, FALSE FROM failed_pairs")
        .await?
        .execute_stream()
        .await?;
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        let (a, b, v) = (duplicates::doc_a(&batch)?, duplicates::doc_b(&batch)?, duplicates::verified(&batch)?);
        for i in 0..batch.num_rows() {
            known.push(((a.value(i), b.value(i)), v.value(i)));
        }
    }
    known.sort_unstable_by_key(|&(pair, _)| pair);
    let verdict = |pair: &(u64, u64)| known.binary_search_by_key(pair, |&(p, _)| p).ok().map(|i| known[i].1);
    report.counters.insert("candidate_pairs".into(), edges.pairs.len() as u64);
    edges.keep_found(verdict)?;
    let k = usize::try_from(ctx.config.evaluate.max_judged_pairs).unwrap_or(usize::MAX).max(1);
    let found_pairs = edges.pairs.len() as u64;
    let mut all: Vec<(u64, u64, u64, u64)> =
        std::mem::take(&mut edges.pairs).into_iter().map(|((a, b), m)| (pair_hash(a, b), a, b, m)).collect();
    all.sort_unstable();
    let methods = edges.methods.len();
    let pool_mask = (0..methods).filter(|&i| pool.contains(&edges.methods[i])).fold(0u64, |mask, i| mask | 1 << i);
    let pool_found = all.iter().filter(|p| p.3 & pool_mask != 0).count() as u64;
    let mut both = vec![vec![0u64; methods]; methods];
    let mut taken = vec![0usize; methods];
    let mut chosen: Vec<(u64, u64, u64, u64)> = Vec::new();
    for &(h, a, b, m) in &all {
        let mut judge = false;
        let bits: Vec<usize> = (0..methods).filter(|i| m >> i & 1 == 1).collect();
        for &i in &bits {
            for &j in &bits {
                both[i][j] += 1;
            }
            if taken[i] < k {
                taken[i] += 1;
                judge = true;
            }
        }
        if judge {
            chosen.push((h, a, b, m));
        }
    }
    drop(all);

    let unknown: HashSet<u64> =
        chosen.iter().filter(|(_, a, b, _)| verdict(&(*a, *b)).is_none()).flat_map(|&(_, a, b, _)| [a, b]).collect();
    let rule = ctx.config.verify.rule();
    let texts: HashMap<u64, Doc> = load_verification_texts(&session, |id| unknown.contains(&id), rule.text)
        .await?
        .into_iter()
        .map(|(id, text)| (id, Doc::new(id, String::new(), text)))
        .collect();
    let empty = Doc::new(0, String::new(), String::new());
    let pairs: Vec<JudgedPair> = chosen
        .par_iter()
        .map(|&(_, a, b, methods)| {
            let verified = match verdict(&(a, b)) {
                Some(v) => v,
                None => {
                    let (doc_a, doc_b) = (texts.get(&a).unwrap_or(&empty), texts.get(&b).unwrap_or(&empty));
                    compare(doc_a, doc_b, rule).0.is_some()
                }
            };
            JudgedPair { methods, verified }
        })
        .collect();
    report.counters.insert("found_pairs".into(), found_pairs);
    report.counters.insert("judged_pairs".into(), pairs.len() as u64);
    let reused = chosen.iter().filter(|(_, a, b, _)| verdict(&(*a, *b)).is_some()).count();
    report.counters.insert("judged_pairs_verified_here".into(), (pairs.len() - reused) as u64);
    // The pairs inside exact groups, counted without listing them.
    let exact_pairs = crate::tables::sql::count(
        &session,
        "SELECT CAST(COALESCE(SUM(documents * (documents - 1) / 2), 0) AS BIGINT) AS n FROM exact_groups",
    )
    .await?;
    report.counters.insert("exact_group_pairs".into(), exact_pairs);
    Ok(Judged { methods: edges.methods, both, pool: pool_mask, pool_found, pairs, k, exact_pairs })
}

/// Writes `method_quality`.
fn write_method_quality(out: &Path, rows: &[QualityRow]) -> Result<u64> {
    let mut w = TableOutput::<method_quality::Rows>::create(out)?;
    for row in rows {
        w.push(|b| {
            b.method.append_value(&row.method);
            b.pairs_found.append_value(row.found as i64);
            b.pairs_judged.append_value(row.judged as i64);
            b.pairs_verified.append_value(row.verified as i64);
            b.precision.append_option(row.precision);
            b.precision_low.append_option(row.interval.map(|i| i.0));
            b.precision_high.append_option(row.interval.map(|i| i.1));
            b.recall.append_option(row.recall);
            b.f1.append_option(row.f1);
            b.exact.append_value(row.judged == row.found);
        })?;
    }
    w.commit()
}

/// `method_overlap`: the Dice coefficient 2|A∩B|/(|A|+|B|) between the
/// verified pair sets of every two methods with verified pairs, diagonal
/// included, from the bottom-k sample of the union of the two, and the
/// pairs inside exact groups, which both methods find and verify
/// ([`Judged::exact_pairs`]). With exact pairs every enabled method has
/// verified pairs, also one whose only pairs were exact copies and which
/// therefore proposed no candidate edge (a0 and I-Match on a crawl whose
/// only identical term lists are copies): it has rows too.
fn write_method_overlap(out: &Path, judged: &Judged, enabled: &[String]) -> Result<u64> {
    let exact = judged.exact_pairs;
    // Each method's name and its bit in the judged pairs (0: no candidate edge).
    let mut columns: Vec<(&str, Option<usize>)> = (0..judged.methods.len())
        .filter(|&i| exact > 0 || judged.sample_of(1 << i).any(|p| p.verified))
        .map(|i| (judged.methods[i].as_str(), Some(i)))
        .collect();
    if exact > 0 {
        let edgeless = enabled.iter().filter(|m| !judged.methods.contains(m));
        columns.extend(edgeless.map(|m| (m.as_str(), None)));
    }
    let bit = |i: Option<usize>| i.map_or(0u64, |i| 1u64 << i);
    let found_either = |x: Option<usize>, y: Option<usize>| match (x, y) {
        (Some(x), Some(y)) => judged.found_either(x, y),
        (Some(i), None) | (None, Some(i)) => judged.found(i),
        (None, None) => 0,
    };
    let mut w = TableOutput::<method_overlap::Rows>::create(out)?;
    for &(name_x, x) in &columns {
        for &(name_y, y) in &columns {
            let (mx, my) = (bit(x), bit(y));
            let (mut n, mut in_x, mut in_y, mut common) = (0u64, 0u64, 0u64, 0u64);
            for p in judged.sample_of(mx | my) {
                n += 1;
                if p.verified {
                    in_x += (p.methods & mx != 0) as u64;
                    in_y += (p.methods & my != 0) as u64;
                    common += (p.methods & mx != 0 && p.methods & my != 0) as u64;
                }
            }
            let union_found = found_either(x, y);
            // The sample's counts scaled to the union (times n), plus the
            // exact pairs (times n): exact integers, so without exact
            // pairs the ratio is 2·common / (in_x + in_y) to the last bit.
            let (scaled, per) = if n == 0 { (0u128, 1u128) } else { (union_found as u128, n as u128) };
            let common_n = common as u128 * scaled + exact as u128 * per;
            let verified_n = (in_x + in_y) as u128 * scaled + 2 * exact as u128 * per;
            w.push(|b| {
                b.method_a.append_value(name_x);
                b.method_b.append_value(name_y);
                b.common.append_value((scale(union_found, common, n) + exact) as i64);
                b.dice.append_option((verified_n > 0).then(|| 2.0 * common_n as f64 / verified_n as f64));
            })?;
        }
    }
    w.commit()
}

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

use crate::config::{Config, Pool, POOL_ALL};
use crate::gold::{read_gold, GoldLabels};
use crate::runner::{RunContext, Stage, StageReport};
use crate::sql::{run_into_table, substitute};
use crate::table::{TableOutput, TableWriter};
use crate::tables::columns::{duplicates, gold_clusters, gold_pairs, gold_quality, method_overlap, method_quality};
use crate::verification::{compare, load_verification_texts, CandidateEdges, Doc};

/// The evaluate stage.
pub struct Evaluate;

impl Stage for Evaluate {
    fn name(&self) -> &'static str {
        "evaluate"
    }
    fn inputs(&self) -> Vec<&'static str> {
        vec!["documents", "tokens", "candidates", "duplicates", "failed_pairs", "clusters"]
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
            report.rows.insert("method_overlap".into(), write_method_overlap(&ctx.out, &judged)?);
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

/// The sampling hash of a pair: uniform over pairs, the same for every
/// method (which is what makes the samples of methods nest), and fixed, so
/// a rerun judges the same pairs.
pub fn pair_hash(doc_a: u64, doc_b: u64) -> u64 {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&doc_a.to_le_bytes());
    bytes[8..].copy_from_slice(&doc_b.to_le_bytes());
    xxhash_rust::xxh3::xxh3_64(&bytes)
}

/// One judged pair: the methods that proposed it and whether it verified.
#[derive(Debug, Clone, Copy)]
struct JudgedPair {
    methods: u64,
    verified: bool,
}

/// The judged pairs (ascending hash) and what the estimates need besides.
struct Judged {
    /// Method ids; bit i of a mask is `methods[i]`.
    methods: Vec<String>,
    /// Distinct candidate pairs proposed by both methods i and j
    /// (`both[i][i]`: by method i).
    both: Vec<Vec<u64>>,
    /// Bit mask of the pool's methods.
    pool: u64,
    /// Distinct candidate pairs of the pool's methods together.
    pool_found: u64,
    /// Judged pairs in ascending hash order.
    pairs: Vec<JudgedPair>,
    /// Size of the judged sample of each method and of any union of
    /// methods: the bottom-k size.
    k: usize,
}

impl Judged {
    /// The first `k` judged pairs (by hash) that any method of `mask`
    /// proposed: the bottom-k sample of the union of those methods, exact
    /// when the union holds at most `k` pairs.
    fn sample_of(&self, mask: u64) -> impl Iterator<Item = &JudgedPair> {
        self.pairs.iter().filter(move |p| p.methods & mask != 0).take(self.k)
    }

    /// Distinct candidate pairs of method i.
    fn found(&self, i: usize) -> u64 {
        self.both[i][i]
    }

    /// Distinct candidate pairs of method i or method j.
    fn found_either(&self, i: usize, j: usize) -> u64 {
        if i == j {
            self.found(i)
        } else {
            self.found(i) + self.found(j) - self.both[i][j]
        }
    }
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
    let texts: HashMap<u64, Doc> =
        load_verification_texts(&session, |id| unknown.contains(&id), ctx.config.verify.text)
            .await?
            .into_iter()
            .map(|(id, text)| (id, Doc::new(id, String::new(), text)))
            .collect();
    let (threshold, algorithm) = (ctx.config.verify.threshold, ctx.config.verify.algorithm);
    let empty = Doc::new(0, String::new(), String::new());
    let pairs: Vec<JudgedPair> = chosen
        .par_iter()
        .map(|&(_, a, b, methods)| {
            let verified = match verdict(&(a, b)) {
                Some(v) => v,
                None => {
                    let (doc_a, doc_b) = (texts.get(&a).unwrap_or(&empty), texts.get(&b).unwrap_or(&empty));
                    compare(doc_a, doc_b, threshold, algorithm).0.is_some()
                }
            };
            JudgedPair { methods, verified }
        })
        .collect();
    report.counters.insert("found_pairs".into(), found_pairs);
    report.counters.insert("judged_pairs".into(), pairs.len() as u64);
    let reused = chosen.iter().filter(|(_, a, b, _)| verdict(&(*a, *b)).is_some()).count();
    report.counters.insert("judged_pairs_verified_here".into(), (pairs.len() - reused) as u64);
    Ok(Judged { methods: edges.methods, both, pool: pool_mask, pool_found, pairs, k })
}

/// The Wilson score interval of a proportion `hits / n` at 95%.
fn wilson_interval(hits: u64, n: u64) -> (f64, f64) {
    let z = 1.959_963_984_540_054_f64;
    let n = n as f64;
    let p = hits as f64 / n;
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z * ((p * (1.0 - p) + z * z / (4.0 * n)) / n).sqrt() / (1.0 + z * z / n);
    // At p = 0 or 1 one end is exactly 0 or 1; computed, it is off by an ulp.
    let low = if hits == 0 { 0.0 } else { (centre - half).max(0.0) };
    let high = if hits as f64 == n { 1.0 } else { (centre + half).min(1.0) };
    (low, high)
}

/// A count of `found` pairs estimated from `hits` of `judged` of them.
fn scale(found: u64, hits: u64, judged: u64) -> u64 {
    if judged == 0 {
        0
    } else if judged == found {
        hits
    } else {
        (found as f64 * hits as f64 / judged as f64).round() as u64
    }
}

/// One row of `method_quality`.
#[derive(Debug, Clone, PartialEq)]
struct QualityRow {
    method: String,
    found: u64,
    judged: u64,
    verified: u64,
    precision: Option<f64>,
    interval: Option<(f64, f64)>,
    recall: Option<f64>,
    f1: Option<f64>,
}

/// The verified pairs of the pool (the union of the pool's methods'
/// verified pairs), estimated from the bottom-k sample of the union of
/// those methods; and one row per enabled method (also when it found
/// nothing), in method-id order, its recall relative to that pool.
fn quality_rows(judged: &Judged, enabled: &[String]) -> (u64, Vec<QualityRow>) {
    let (pool_judged, pool_hits) =
        judged.sample_of(judged.pool).fold((0u64, 0u64), |(n, v), p| (n + 1, v + p.verified as u64));
    let pool = scale(judged.pool_found, pool_hits, pool_judged);
    let mut enabled: Vec<&String> = enabled.iter().collect();
    enabled.sort();
    enabled.dedup();
    let rows = enabled
        .into_iter()
        .map(|method| {
            let bit = judged.methods.iter().position(|m| m == method);
            let found = bit.map_or(0, |i| judged.found(i));
            let (n, hits) = bit.map_or((0, 0), |i| {
                judged.sample_of(1 << i).fold((0u64, 0u64), |(n, v), p| (n + 1, v + p.verified as u64))
            });
            let verified = scale(found, hits, n);
            let precision = (n > 0).then(|| hits as f64 / n as f64);
            let recall = (pool > 0).then(|| verified as f64 / pool as f64);
            let f1 = match (precision, recall) {
                (Some(p), Some(r)) if p + r > 0.0 => Some(2.0 * p * r / (p + r)),
                _ => None,
            };
            QualityRow {
                method: method.clone(),
                found,
                judged: n,
                verified,
                precision,
                interval: (n > 0).then(|| wilson_interval(hits, n)),
                recall,
                f1,
            }
        })
        .collect();
    (pool, rows)
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
/// included, from the bottom-k sample of the union of the two.
fn write_method_overlap(out: &Path, judged: &Judged) -> Result<u64> {
    let with_verified: Vec<usize> =
        (0..judged.methods.len()).filter(|&i| judged.sample_of(1 << i).any(|p| p.verified)).collect();
    let mut w = TableOutput::<method_overlap::Rows>::create(out)?;
    for &x in &with_verified {
        for &y in &with_verified {
            let (mx, my) = (1u64 << x, 1u64 << y);
            let (mut n, mut in_x, mut in_y, mut common) = (0u64, 0u64, 0u64, 0u64);
            for p in judged.sample_of(mx | my) {
                n += 1;
                if p.verified {
                    in_x += (p.methods & mx != 0) as u64;
                    in_y += (p.methods & my != 0) as u64;
                    common += (p.methods & mx != 0 && p.methods & my != 0) as u64;
                }
            }
            let union_found = judged.found_either(x, y);
            w.push(|b| {
                b.method_a.append_value(&judged.methods[x]);
                b.method_b.append_value(&judged.methods[y]);
                b.common.append_value(scale(union_found, common, n) as i64);
                b.dice.append_option((in_x + in_y > 0).then(|| 2.0 * common as f64 / (in_x + in_y) as f64));
            })?;
        }
    }
    w.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_interval_matches_known_values() {
        // 5 of 10: 0.2366 .. 0.7634 (Wilson 1927; e.g. R's prop.test without
        // continuity correction).
        let (low, high) = wilson_interval(5, 10);
        assert!((low - 0.236_593).abs() < 1e-6 && (high - 0.763_407).abs() < 1e-6, "{low} {high}");
        assert_eq!(wilson_interval(20, 20).1, 1.0);
        assert_eq!(wilson_interval(0, 20).0, 0.0);
    }

    #[test]
    fn bottom_k_samples_nest_and_scale() {
        // Pairs in hash order; method 0 proposes all 10, method 1 the odd
        // ones. With k = 3, method 1's sample is its own 3 smallest.
        let pairs: Vec<JudgedPair> =
            (0..10u64).map(|i| JudgedPair { methods: 1 | ((i % 2) << 1), verified: i < 4 }).collect();
        let judged = Judged {
            methods: vec!["x".into(), "y".into()],
            both: vec![vec![10, 5], vec![5, 5]],
            pool: 3,
            pool_found: 10,
            pairs,
            k: 3,
        };
        let sample: Vec<bool> = judged.sample_of(2).map(|p| p.verified).collect();
        assert_eq!(sample, [true, true, false]); // pairs 1, 3, 5
        assert_eq!(judged.found_either(0, 1), 10);
        assert_eq!(scale(judged.found(1), 2, 3), 3);
        assert_eq!(scale(4, 2, 4), 2);
    }

    #[test]
    fn the_pool_is_the_union_of_the_pool_methods_verified_pairs() {
        // Three methods x, y, z; 6 pairs in hash order, all judged (k = 10):
        //   pair  methods  verified
        //   0     x        yes
        //   1     x, y     yes
        //   2     y        yes
        //   3     z        yes   (only z finds it)
        //   4     y        no
        //   5     x, z     yes
        // Pool {x, y}: verified pairs 0, 1, 2, 5 = 4 (pair 3 is z's alone).
        let (x, y, z) = (1u64, 2u64, 4u64);
        let pairs = [(x, true), (x | y, true), (y, true), (z, true), (y, false), (x | z, true)]
            .map(|(methods, verified)| JudgedPair { methods, verified })
            .to_vec();
        let judged = Judged {
            methods: vec!["x".into(), "y".into(), "z".into()],
            // found: x 3, y 3, z 2; x∩y 1, x∩z 1, y∩z 0.
            both: vec![vec![3, 1, 1], vec![1, 3, 0], vec![1, 0, 2]],
            pool: x | y,
            pool_found: 5,
            pairs,
            k: 10,
        };
        let enabled: Vec<String> = ["z", "x", "y"].iter().map(|s| s.to_string()).collect();
        let (pool, rows) = quality_rows(&judged, &enabled);
        assert_eq!(pool, 4);
        let by_method: Vec<(&str, u64, u64, Option<f64>)> =
            rows.iter().map(|r| (r.method.as_str(), r.found, r.verified, r.recall)).collect();
        // x verified 3 (pairs 0, 1, 5): recall 3/4; y 2 of 3: 2/4; z 2 of 2:
        // 2/4 (outside the pool, its pairs still count for its recall).
        assert_eq!(by_method, [("x", 3, 3, Some(0.75)), ("y", 3, 2, Some(0.5)), ("z", 2, 2, Some(0.5))]);
        // With every method in the pool, pair 3 joins it: 5.
        let all = Judged { pool: x | y | z, pool_found: 6, ..judged };
        assert_eq!(quality_rows(&all, &enabled).0, 5);
        // A pool of methods that found nothing: no recall.
        let none = Judged { pool: 0, pool_found: 0, ..all };
        let (pool, rows) = quality_rows(&none, &enabled);
        assert_eq!(pool, 0);
        assert!(rows.iter().all(|r| r.recall.is_none() && r.f1.is_none()));
    }
}

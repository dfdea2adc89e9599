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
//! values (a bottom-k sample, `pair_hash` in `jobs/evaluate_found.sql`):
//! the same hash for every method, so the k smallest of a union of
//! methods are among the judged pairs of its members, and the pool (the
//! union of the verified pairs of the pool's methods, `evaluate.pool`, for
//! recall) and the overlap of two methods are estimated from the same
//! judged pairs without verifying more.
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
//! The engine chooses the judged pairs (`jobs/evaluate_found.sql`,
//! `jobs/evaluate_sample.sql`); this process receives only them, the
//! number of pairs of each combination of methods, and the texts of the
//! judged pairs `verify` did not compare: with `--engine ballista://…` it
//! drives the stage and reads no table whole.
//!
//! The pool's methods are configurable because the study's recall is
//! relative to the union of the duplicates of its experiment's methods
//! (A0–A10, preset `"study"`): only with that pool can this run's recall be
//! set beside the study's published figures (the report shows both).

use anyhow::{Context, Result};
use arrow::array::{Array, BooleanArray, Int64Array, UInt64Array};
use rayon::prelude::*;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::Path;

use crate::config::Config;

use crate::evaluate::gold::{read_gold, GoldLabels};
use crate::evaluate::judge::{quality_rows, scale, Judged, JudgedPair, QualityRow};
use crate::evaluate::settings::{Pool, POOL_ALL};
use crate::stages::stage::{RunContext, Stage};
use crate::stages::verify::inputs::{load_candidate_methods, load_verification_texts_of};
use crate::tables::column;
use crate::tables::columns::{
    candidates, clusters, documents, duplicates, exact_copies, exact_groups, failed_pairs, gold_clusters, gold_pairs,
    gold_quality, method_overlap, method_quality, tokens,
};
use crate::tables::manifest::StageReport;
use crate::tables::sql::{run_into_table, substitute};
use crate::tables::write::{TableOutput, TableWriter};
use crate::tables::Table;
use crate::verify::compare::{compare, Doc, Outcome, OutcomeCounts};

/// The evaluate stage.
pub struct Evaluate;

impl Stage for Evaluate {
    fn name(&self) -> &'static str {
        "evaluate"
    }
    fn inputs(&self) -> Vec<Table> {
        vec![
            documents::NAME,
            tokens::NAME,
            candidates::NAME,
            duplicates::NAME,
            failed_pairs::NAME,
            clusters::NAME,
            exact_copies::NAME,
            exact_groups::NAME,
        ]
    }
    fn outputs(&self, _: &Config) -> Vec<Table> {
        vec![method_quality::NAME, method_overlap::NAME, gold_pairs::NAME, gold_clusters::NAME, gold_quality::NAME]
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
/// pairs of smallest `pair_hash` (all when it has fewer). A method's
/// found pairs are its candidate pairs, or for a method that includes its
/// comparison (a11) those that passed it in `verify`. Pairs `verify`
/// already compared keep that verdict; the others are verified here.
/// `pool` names the pool's methods.
///
/// The engine does the work (`jobs/evaluate_found.sql`,
/// `jobs/evaluate_sample.sql`): this process receives the number of pairs
/// of each combination of methods, the judged pairs (at most `k` per
/// method) and the texts of those `verify` did not compare, never the
/// candidate edges, so that with `--engine ballista://…` it stays a driver.
async fn judge_method_pairs(ctx: &RunContext, pool: &[String], report: &mut StageReport) -> Result<Judged> {
    let session = ctx.sql_stage_session().await?;
    let (k, rule) = (ctx.config.evaluate.max_judged_pairs.max(1), ctx.config.verify.rule());
    judge(&session, pool, k, rule, report).await
}

/// [`judge_method_pairs`] over the tables of `session`.
async fn judge(
    session: &datafusion::prelude::SessionContext,
    pool: &[String],
    k: u64,
    rule: crate::verify::settings::PairRule,
    report: &mut StageReport,
) -> Result<Judged> {
    let candidate_methods = load_candidate_methods(session).await?;
    let methods_values = candidate_methods.sql_values();
    let methods = candidate_methods.methods;
    // The pairs inside exact groups, counted without listing them.
    let exact_pairs = crate::tables::sql::count(
        session,
        "SELECT CAST(COALESCE(SUM(documents * (documents - 1) / 2), 0) AS BIGINT) AS n FROM exact_groups",
    )
    .await?;
    report.counters.insert("exact_group_pairs".into(), exact_pairs);
    let k_pairs = usize::try_from(k).unwrap_or(usize::MAX);
    let Some(methods_values) = methods_values else {
        // No candidate pair (a crawl of one page): nothing to ask the
        // engine, and SQL has no empty VALUES list.
        for counter in ["candidate_pairs", "found_pairs", "judged_pairs", "judged_pairs_verified_here"] {
            report.counters.insert(counter.into(), 0);
        }
        return Ok(Judged {
            methods,
            both: Vec::new(),
            pool: 0,
            pool_found: 0,
            pairs: Vec::new(),
            k: k_pairs,
            exact_pairs,
        });
    };
    let bit = |i: usize| format!("CAST({} AS BIGINT UNSIGNED)", 1u64 << i);
    let found = substitute(include_str!("../../jobs/evaluate_found.sql"), &[("methods", methods_values)]);
    // The pairs of each combination of methods: what the overlaps and the
    // pool's size need, in as many rows as there are combinations.
    let mut both = vec![vec![0u64; methods.len()]; methods.len()];
    let (mut candidate_pairs, mut found_pairs, mut pool_found) = (0u64, 0u64, 0u64);
    let pool_mask = (0..methods.len()).filter(|&i| pool.contains(&methods[i])).fold(0u64, |mask, i| mask | 1 << i);
    let by_mask = format!(
        "SELECT mask, COUNT(*) AS pairs, bool_or(missing) AS missing FROM ({found}) found GROUP BY mask ORDER BY mask"
    );
    for batch in session.sql(&by_mask).await?.collect().await? {
        let (masks, pairs) = (column::<UInt64Array>(&batch, "mask")?, column::<Int64Array>(&batch, "pairs")?);
        let missing = column::<BooleanArray>(&batch, "missing")?;
        if missing.true_count() > 0 {
            let first = format!("SELECT doc_a, doc_b FROM ({found}) found WHERE missing ORDER BY doc_a, doc_b LIMIT 1");
            let batches = session.sql(&first).await?.collect().await?;
            let row = batches.iter().find(|b| b.num_rows() > 0).context("the unverified pair went away")?;
            let (a, b) = (column::<UInt64Array>(row, "doc_a")?.value(0), column::<UInt64Array>(row, "doc_b")?.value(0));
            anyhow::bail!("pair ({a}, {b}) of a method that includes its comparison was never compared: rerun verify");
        }
        for r in 0..batch.num_rows() {
            let (mask, n) = (masks.value(r), pairs.value(r).max(0) as u64);
            candidate_pairs += n;
            if mask == 0 {
                continue;
            }
            found_pairs += n;
            if mask & pool_mask != 0 {
                pool_found += n;
            }
            let bits: Vec<usize> = (0..methods.len()).filter(|i| mask >> i & 1 == 1).collect();
            for &i in &bits {
                for &j in &bits {
                    both[i][j] += n;
                }
            }
        }
    }
    report.counters.insert("candidate_pairs".into(), candidate_pairs);

    let sample = substitute(
        include_str!("../../jobs/evaluate_sample.sql"),
        &[
            ("found", found.clone()),
            ("bits", (0..methods.len()).map(|i| format!("({})", bit(i))).collect::<Vec<_>>().join(", ")),
            ("k", k.to_string()),
        ],
    );
    // (doc_a, doc_b, methods, verify's verdict), in hash order.
    let mut chosen: Vec<(u64, u64, u64, Option<bool>)> = Vec::new();
    for batch in session.sql(&sample).await?.collect().await? {
        let (a, b) = (column::<UInt64Array>(&batch, "doc_a")?, column::<UInt64Array>(&batch, "doc_b")?);
        let (m, verified) = (column::<UInt64Array>(&batch, "mask")?, column::<BooleanArray>(&batch, "verified")?);
        for r in 0..batch.num_rows() {
            chosen.push((a.value(r), b.value(r), m.value(r), verified.is_valid(r).then(|| verified.value(r))));
        }
    }
    let unknown: Vec<u64> = chosen.iter().filter(|p| p.3.is_none()).flat_map(|&(a, b, _, _)| [a, b]).collect();
    let texts: HashMap<u64, Doc> = load_verification_texts_of(session, &unknown, rule.text)
        .await?
        .into_iter()
        .map(|(id, text)| (id, Doc::new(id, String::new(), text)))
        .collect();
    let empty = Doc::new(0, String::new(), String::new());
    // Each judged pair with the outcome of the comparison made here, if
    // `verify` had not compared it.
    let judged: Vec<(JudgedPair, Option<Outcome>)> = chosen
        .par_iter()
        .map(|&(a, b, methods, verdict)| match verdict {
            Some(verified) => (JudgedPair { methods, verified }, None),
            None => {
                let (doc_a, doc_b) = (texts.get(&a).unwrap_or(&empty), texts.get(&b).unwrap_or(&empty));
                let c = compare(doc_a, doc_b, rule);
                (JudgedPair { methods, verified: c.similarity.is_some() }, Some(c.outcome))
            }
        })
        .collect();
    let mut outcomes = OutcomeCounts::default();
    judged.iter().filter_map(|j| j.1).for_each(|o| outcomes.add(o));
    outcomes.insert_into(&mut report.counters);
    let pairs: Vec<JudgedPair> = judged.into_iter().map(|j| j.0).collect();
    report.counters.insert("found_pairs".into(), found_pairs);
    report.counters.insert("judged_pairs".into(), pairs.len() as u64);
    report.counters.insert("judged_pairs_verified_here".into(), chosen.iter().filter(|p| p.3.is_none()).count() as u64);
    Ok(Judged { methods, both, pool: pool_mask, pool_found, pairs, k: k_pairs, exact_pairs })
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

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{ArrayRef, BooleanArray, Float64Array, Int64Array, StringArray, UInt64Array};
    use arrow::record_batch::RecordBatch;
    use std::sync::Arc;

    /// The reference sampling hash, written apart from the SQL that
    /// computes it: splitmix64's finalizer of `a XOR b * golden ratio`.
    fn reference_hash(a: u64, b: u64) -> u64 {
        let mut z = a ^ b.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Registers `name` with the columns `doc_a`, `doc_b` of `pairs`, then
    /// `more`.
    fn pair_table(
        session: &datafusion::prelude::SessionContext,
        name: &str,
        pairs: &[(u64, u64)],
        more: Vec<(&str, ArrayRef)>,
    ) {
        let mut columns: Vec<(&str, ArrayRef)> = vec![
            ("doc_a", Arc::new(UInt64Array::from_iter_values(pairs.iter().map(|p| p.0)))),
            ("doc_b", Arc::new(UInt64Array::from_iter_values(pairs.iter().map(|p| p.1)))),
        ];
        columns.extend(more);
        session.register_batch(name, RecordBatch::try_from_iter(columns).unwrap()).unwrap();
    }

    fn table(session: &datafusion::prelude::SessionContext, name: &str, columns: Vec<(&str, ArrayRef)>) {
        session.register_batch(name, RecordBatch::try_from_iter(columns).unwrap()).unwrap();
    }

    /// A small deterministic generator (xorshift), so the test needs no
    /// dependency and always sees the same tables.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    /// The engine's sample against the same choice made in Rust, pair by
    /// pair: 400 candidate pairs of three methods (a11 includes its
    /// comparison), verdicts from `duplicates` and `failed_pairs` for some,
    /// texts for the others (equal texts verify, different ones fail).
    #[test]
    fn the_engine_judges_the_pairs_a_reference_choice_judges() {
        let methods = ["a0", "a11", "minhash"];
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let docs: Vec<u64> = (0..120).map(|_| rng.next()).collect();
        let mut pairs: Vec<(u64, u64, u64, Option<bool>)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        while pairs.len() < 400 {
            let (x, y) = (docs[rng.next() as usize % docs.len()], docs[rng.next() as usize % docs.len()]);
            let (a, b) = (x.min(y), x.max(y));
            if a == b || !seen.insert((a, b)) {
                continue;
            }
            let mask = rng.next() % 7 + 1;
            // Every a11 pair was compared by verify; others sometimes.
            let verdict = (mask & 2 != 0 || rng.next() % 3 == 0).then(|| rng.next() % 2 == 0);
            pairs.push((a, b, mask, verdict));
        }
        let session = datafusion::prelude::SessionContext::new();
        let rows: Vec<(u64, u64, &str)> = pairs
            .iter()
            .flat_map(|&(a, b, mask, _)| (0..3).filter(move |i| mask >> i & 1 == 1).map(move |i| (a, b, methods[i])))
            .collect();
        let candidates = |rows: &[(u64, u64, &str)]| {
            let _ = session.deregister_table("candidates");
            let pairs: Vec<(u64, u64)> = rows.iter().map(|r| (r.0, r.1)).collect();
            pair_table(
                &session,
                "candidates",
                &pairs,
                vec![
                    ("method", Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.2))) as ArrayRef),
                    ("score", Arc::new(Float64Array::from(vec![None; rows.len()]))),
                ],
            );
        };
        candidates(&rows);
        let verdicts =
            |v: bool| -> Vec<(u64, u64)> { pairs.iter().filter(|p| p.3 == Some(v)).map(|p| (p.0, p.1)).collect() };
        let (passed, failed) = (verdicts(true), verdicts(false));
        let verified = Arc::new(BooleanArray::from(vec![true; passed.len()])) as ArrayRef;
        pair_table(&session, "duplicates", &passed, vec![("verified", verified)]);
        pair_table(&session, "failed_pairs", &failed, Vec::new());
        table(&session, "exact_groups", vec![("documents", Arc::new(Int64Array::from(vec![3i64, 2])) as ArrayRef)]);
        // Two texts: documents of the same parity of their id share one.
        let text = |id: u64| if id % 2 == 0 { "the quick brown fox jumps over the lazy dog" } else { "zq 1234 xw" };
        table(
            &session,
            "tokens",
            vec![
                ("doc_id", Arc::new(UInt64Array::from(docs.clone())) as ArrayRef),
                ("text", Arc::new(StringArray::from_iter_values(docs.iter().map(|&d| text(d))))),
            ],
        );

        let k = 25u64;
        let rule = crate::verify::settings::VerifyConfig::default().rule();
        let pool = vec!["a0".to_string(), "minhash".to_string()];
        let mut report = StageReport::default();
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let judged = runtime.block_on(judge(&session, &pool, k, rule, &mut report)).unwrap();

        // The reference: a11's failed pairs are no longer a11's; a pair
        // left without a method is gone; then per method its k smallest.
        let mut found: Vec<(u64, u64, u64, u64, bool)> = pairs
            .iter()
            .map(|&(a, b, mask, v)| {
                let mask = if v == Some(false) { mask & !2 } else { mask };
                let verified = v.unwrap_or(a % 2 == b % 2);
                (reference_hash(a, b), a, b, mask, verified)
            })
            .filter(|p| p.3 != 0)
            .collect();
        found.sort_unstable();
        let mut taken = [0u64; 3];
        let mut expected = Vec::new();
        let mut both = vec![vec![0u64; 3]; 3];
        for &(_, _, _, mask, verified) in &found {
            let mut judge = false;
            for i in (0..3).filter(|i| mask >> i & 1 == 1) {
                for j in (0..3).filter(|j| mask >> j & 1 == 1) {
                    both[i][j] += 1;
                }
                if taken[i] < k {
                    taken[i] += 1;
                    judge = true;
                }
            }
            if judge {
                expected.push((mask, verified));
            }
        }
        assert_eq!(judged.methods, methods);
        assert_eq!(judged.both, both);
        assert_eq!(judged.pool, 0b101);
        assert_eq!(judged.pool_found, found.iter().filter(|p| p.3 & 0b101 != 0).count() as u64);
        assert_eq!(judged.exact_pairs, 3 + 1);
        let got: Vec<(u64, bool)> = judged.pairs.iter().map(|p| (p.methods, p.verified)).collect();
        assert_eq!(got, expected);
        assert!(expected.len() < found.len(), "the sample must leave pairs out");
        assert_eq!(report.counters["candidate_pairs"], 400);
        assert!(report.counters["judged_pairs_verified_here"] > 0);

        // Without a candidate pair nothing is judged, and the exact pairs
        // still count.
        candidates(&[]);
        let none = runtime.block_on(judge(&session, &pool, k, rule, &mut StageReport::default())).unwrap();
        assert!(none.methods.is_empty() && none.pairs.is_empty());
        assert_eq!(none.exact_pairs, 4);
        candidates(&rows);

        // An a11 pair verify never compared stops the stage.
        let dropped = pairs.iter().find(|p| p.2 & 2 != 0 && p.3 == Some(false)).map(|p| (p.0, p.1)).unwrap();
        let kept: Vec<(u64, u64)> = failed.iter().copied().filter(|&p| p != dropped).collect();
        session.deregister_table("failed_pairs").unwrap();
        pair_table(&session, "failed_pairs", &kept, Vec::new());
        let result = runtime.block_on(judge(&session, &pool, k, rule, &mut StageReport::default()));
        let err = result.err().expect("a pair of a11 without a verdict").to_string();
        assert!(err.contains(&format!("({}, {})", dropped.0, dropped.1)) && err.contains("rerun verify"), "{err}");
    }
}

//! Stage `evaluate`: the study's evaluation tables on every run
//! (`jobs/evaluate_quality.sql`, `jobs/evaluate_overlap.sql`), and the
//! scores against human labels when a gold file is given
//! (`jobs/evaluate_gold.sql`): the gold file is loaded into `gold_pairs` and
//! `gold_clusters` first, so the SQL (and an analyst) can join it with the
//! run's tables. Without a gold file these three tables are written empty,
//! so a run's table set does not depend on its options.

use anyhow::{ensure, Result};
use arrow::array::{BooleanBuilder, Int64Builder, StringBuilder};
use serde_json::{json, Value};
use std::path::Path;

use crate::config::Config;
use crate::gold::{read_gold, GoldLabels};
use crate::runner::{RunContext, Stage, StageReport};
use crate::sql::{run_into_table, substitute};
use crate::table::{BatchBuilder, TableWriter};

/// The evaluate stage.
pub struct Evaluate;

impl Stage for Evaluate {
    fn name(&self) -> &'static str {
        "evaluate"
    }
    fn inputs(&self) -> &'static [&'static str] {
        &["documents", "candidates", "duplicates"]
    }
    fn outputs(&self, _: &Config) -> Vec<&'static str> {
        vec!["method_quality", "method_overlap", "gold_pairs", "gold_clusters", "gold_quality"]
    }
    fn runs_sql_on_engine(&self) -> bool {
        true
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({"enabled": config.methods.enabled, "evaluate": config.evaluate})
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
        ensure!(
            cfg.gold_positive_min_label > cfg.gold_negative_max_label,
            "evaluate.gold_positive_min_label ({}) must be above evaluate.gold_negative_max_label ({})",
            cfg.gold_positive_min_label,
            cfg.gold_negative_max_label
        );
        let gold = if cfg.gold_file.is_empty() { GoldLabels::default() } else { read_gold(Path::new(&cfg.gold_file))? };
        let mut report = StageReport::default();
        let (pairs, members) = write_gold_tables(&ctx.out, &gold)?;
        report.rows.insert("gold_pairs".into(), pairs);
        report.rows.insert("gold_clusters".into(), members);
        ctx.runtime.block_on(async {
            let session = crate::sql::sql_stage_session(&ctx.out).await?;
            let enabled = ctx
                .config
                .methods
                .enabled
                .iter()
                .map(|m| format!("('{}')", m.replace('\'', "''")))
                .collect::<Vec<_>>()
                .join(", ");
            let params = [
                ("enabled_methods", enabled),
                ("positive_min_label", cfg.gold_positive_min_label.to_string()),
                ("negative_max_label", cfg.gold_negative_max_label.to_string()),
            ];
            let mut jobs = vec![
                ("method_quality", include_str!("../../jobs/evaluate_quality.sql")),
                ("method_overlap", include_str!("../../jobs/evaluate_overlap.sql")),
            ];
            if gold.pairs.is_empty() && gold.members.is_empty() {
                // Without labels the result is empty, known without a query.
                // Not asking also sidesteps a Ballista 55 scheduler bug: joins
                // over the empty gold tables leave some operators of some
                // tasks unexecuted, those tasks report fewer metric sets than
                // their stage, and the scheduler rejects their status updates
                // ("task metrics array size 5 does not equal ... 6"), so the
                // job waits for them forever.
                report.rows.insert("gold_quality".into(), TableWriter::for_table(&ctx.out, "gold_quality")?.commit()?);
            } else {
                jobs.push(("gold_quality", include_str!("../../jobs/evaluate_gold.sql")));
            }
            for (table, sql) in jobs {
                let rows = run_into_table(&session, &ctx.out, table, &substitute(sql, &params)).await?;
                report.rows.insert(table.into(), rows);
            }
            Ok(report)
        })
    }
}

/// Writes the gold labels as `gold_pairs` and `gold_clusters`; returns their
/// row counts.
fn write_gold_tables(out: &Path, gold: &GoldLabels) -> Result<(u64, u64)> {
    let mut pairs = TableWriter::for_table(out, "gold_pairs")?;
    let mut b = BatchBuilder::new("gold_pairs");
    for p in &gold.pairs {
        b.col::<StringBuilder>(0).append_value(p.key_kind.as_str());
        b.col::<StringBuilder>(1).append_value(&p.a);
        b.col::<StringBuilder>(2).append_value(&p.b);
        b.col::<Int64Builder>(3).append_option(p.label);
        b.col::<BooleanBuilder>(4).append_option(p.dup);
        pairs.write_if_full(&mut b)?;
    }
    pairs.write_rest(&mut b)?;
    let mut members = TableWriter::for_table(out, "gold_clusters")?;
    let mut b = BatchBuilder::new("gold_clusters");
    for m in &gold.members {
        b.col::<StringBuilder>(0).append_value(m.key_kind.as_str());
        b.col::<StringBuilder>(1).append_value(&m.key);
        b.col::<StringBuilder>(2).append_value(&m.cluster);
        members.write_if_full(&mut b)?;
    }
    members.write_rest(&mut b)?;
    Ok((pairs.commit()?, members.commit()?))
}

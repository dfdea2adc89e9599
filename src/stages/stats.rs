//! Stage `stats`: `tokens`, `exact_copies` → `df`, `corpus_stats`.
//!
//! The corpus-wide statistics, in SQL on the engine (`jobs/df.sql`,
//! `jobs/corpus_stats.sql`), computed once over the tokens of all tasks of
//! a (possibly sharded) `tokens` stage, each verification text once (the
//! exact copies left out: spec §9, "Exact copies first"): document and
//! collection frequencies (`df`, only when an enabled method reads term
//! statistics) and the corpus size. Stage `method_state` builds the global
//! methods' state from them, and every task of `signatures` reads them.
//!
//! The pipeline process only drives the SQL here: it reads no table, so
//! with `--engine ballista://…` the executors do the work.

use anyhow::Result;
use serde_json::{json, Value};

use crate::config::Config;
use crate::methods::registry;
use crate::stages::stage::{RunContext, Stage};
use crate::tables::manifest::StageReport;

/// The stats stage.
pub struct Stats;

impl Stage for Stats {
    fn name(&self) -> &'static str {
        "stats"
    }
    fn inputs(&self) -> Vec<&'static str> {
        vec!["tokens", "exact_copies"]
    }
    fn outputs(&self, _: &Config) -> Vec<&'static str> {
        vec!["df", "corpus_stats"]
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({"methods": config.methods})
    }
    fn runs_sql_on_engine(&self) -> bool {
        true
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        ctx.runtime.block_on(async {
            let mut report = StageReport::default();
            let session = crate::tables::sql::broadcast_joins(ctx.sql_stage_session().await?)?;
            // `df` is counted only for methods that read term statistics
            // (lexicons, weights, a9's state); without one it is written
            // empty, its schema kept (a min-hash-only run on Javadoc: the
            // stage's 1.0 CPU-s).
            let terms = registry::doc_reads(&ctx.config.methods.enabled).term_ids;
            let df = include_str!("../../jobs/df.sql");
            let df = if terms { df.to_string() } else { format!("SELECT * FROM ({df}\n) WHERE false") };
            for (table, sql) in [("df", df.as_str()), ("corpus_stats", include_str!("../../jobs/corpus_stats.sql"))] {
                let rows = crate::tables::sql::run_into_table(&session, &ctx.out, table, sql).await?;
                report.rows.insert(table.into(), rows);
            }
            Ok(report)
        })
    }
}

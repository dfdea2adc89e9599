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
use arrow::array::Array;
use futures::StreamExt;
use serde_json::{json, Value};

use crate::config::Config;
use crate::methods::registry;
use crate::methods::{CorpusStats, TermStats};
use crate::stages::stage::{RunContext, Stage};
use crate::tables::columns::{corpus_stats, df, exact_copies, tokens};
use crate::tables::manifest::StageReport;
use crate::tables::Table;

/// The stats stage.
pub struct Stats;

impl Stage for Stats {
    fn name(&self) -> &'static str {
        "stats"
    }
    fn inputs(&self) -> Vec<Table> {
        vec![tokens::NAME, exact_copies::NAME]
    }
    fn outputs(&self, _: &Config) -> Vec<Table> {
        vec![df::NAME, corpus_stats::NAME]
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

/// The `df` and `corpus_stats` tables read back as [`CorpusStats`], what
/// the methods with corpus-wide state build it from (`descr_sample`,
/// `method_state`, `signatures`): reads `corpus_stats`, and `df` into memory when `terms` (else the
/// dictionary is left empty: the methods that read no term statistics).
pub async fn load_corpus_stats(session: &datafusion::prelude::SessionContext, terms: bool) -> Result<CorpusStats> {
    let mut stats = CorpusStats::default();
    let mut total_terms = 0i64;
    for b in session.sql("SELECT n_docs, dl_avg, total_terms FROM corpus_stats").await?.collect().await? {
        if b.num_rows() > 0 {
            stats.n_docs = corpus_stats::n_docs(&b)?.value(0).max(0) as u64;
            let avg = corpus_stats::dl_avg(&b)?;
            stats.dl_avg = if avg.is_null(0) { 0.0 } else { avg.value(0) };
            let total = corpus_stats::total_terms(&b)?;
            total_terms = if total.is_null(0) { 0 } else { total.value(0) };
        }
    }
    if !terms {
        return Ok(stats);
    }
    let mut rows = Vec::new();
    let mut stream = session.sql("SELECT term, df, cf FROM df").await?.execute_stream().await?;
    while let Some(b) = stream.next().await {
        let b = b?;
        let (terms, df, cf) = (df::term(&b)?, df::df(&b)?, df::cf(&b)?);
        for i in 0..b.num_rows() {
            rows.push((terms.value(i).to_string(), TermStats { df: df.value(i) as u64, cf: cf.value(i) as u64 }));
        }
    }
    // `stats` leaves `df` empty when no method enabled then reads term
    // statistics: a stage rerun alone with such a method must not sign
    // with an empty dictionary.
    if rows.is_empty() && total_terms > 0 {
        anyhow::bail!(
            "table df is empty: no method enabled when the `stats` stage ran reads term statistics; \
             rerun the pipeline from stage `stats` with this run's methods (`pipeline run --stage all`)"
        );
    }
    stats.terms = rows.into_iter().collect();
    Ok(stats)
}

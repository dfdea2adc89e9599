//! Stage `stats`: `tokens`, `exact_copies` → `df`, `corpus_stats`,
//! `method_state`.
//!
//! The corpus-wide statistics, computed once over the tokens of all tasks
//! of a (possibly sharded) `tokens` stage, each verification text once
//! (the exact copies left out: spec §9, "Exact copies first"), and read by
//! every task of `signatures`: document and collection frequencies and the corpus size in
//! SQL (`jobs/df.sql`, `jobs/corpus_stats.sql`; `df` only when an enabled
//! method reads term statistics), then the state of the
//! global methods built from them (lexicons of imatch and a7, a9's
//! descriptive words, which need one more pass over the documents).

use anyhow::Result;
use serde_json::{json, Value};

use crate::config::Config;
use crate::methods::inputs::tokens::{TokenParts, TokenPasses};
use crate::methods::registry::{self, StateSource};
use crate::methods::CorpusStats;
use crate::runner::{RunContext, Stage, StageReport};
use crate::tables::columns::method_state;
use crate::tables::shard::Shard;
use crate::tables::write::TableOutput;

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
        vec!["df", "corpus_stats", "method_state"]
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({"methods": config.methods})
    }
    fn runs_sql_on_engine(&self) -> bool {
        true
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        let mut report = StageReport::default();
        let (session, stats) = ctx.runtime.block_on(frequencies(ctx, &mut report))?;
        // Few methods build their state from the documents themselves (a9),
        // and they read only the terms, pass after pass, a chunk at a time.
        let passes = TokenPasses::new(&ctx.runtime, session, TokenParts::Terms, Shard::WHOLE);
        let config = &ctx.config.methods;
        let started = std::time::Instant::now();
        let built = registry::build_signers(&config.enabled, config, &stats, StateSource::Corpus(&passes));
        passes.finish()?;
        report.counters.insert("method_state_build_ms".into(), started.elapsed().as_millis() as u64);
        let mut writer = TableOutput::<method_state::Rows>::create(&ctx.out)?;
        for method in &built {
            for row in method.state() {
                writer.push(|b| {
                    b.method.append_value(method.id());
                    b.slot.append_value(row.slot);
                    b.term.append_value(&row.term);
                    b.value.append_value(row.value);
                })?;
            }
        }
        report.rows.insert(method_state::TABLE.into(), writer.commit()?);
        Ok(report)
    }
}

/// `df` and `corpus_stats` written; a session that sees them, and the
/// statistics read back.
async fn frequencies(
    ctx: &RunContext,
    report: &mut StageReport,
) -> Result<(datafusion::prelude::SessionContext, CorpusStats)> {
    let session = crate::tables::sql::broadcast_joins(ctx.sql_stage_session().await?)?;
    // `df` is counted only for methods that read term statistics (lexicons,
    // weights, a9's state); without one it is written empty, its schema
    // kept (a min-hash-only run on Javadoc: the stage's 1.0 CPU-s).
    let terms = registry::doc_reads(&ctx.config.methods.enabled).term_ids;
    let df = include_str!("../../jobs/df.sql");
    let df = if terms { df.to_string() } else { format!("SELECT * FROM ({df}\n) WHERE false") };
    for (table, sql) in [("df", df.as_str()), ("corpus_stats", include_str!("../../jobs/corpus_stats.sql"))] {
        let rows = crate::tables::sql::run_into_table(&session, &ctx.out, table, sql).await?;
        report.rows.insert(table.into(), rows);
    }
    // A new session sees the tables just written.
    let session = ctx.session().await?;
    let stats = crate::methods::inputs::corpus_stats::load_corpus_stats(&session, terms).await?;
    Ok((session, stats))
}

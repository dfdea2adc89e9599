//! Stage `decide`: `documents`, `clusters`, `tokens`, `exact_copies` →
//! `decisions`.
//!
//! What a deduplication tool is for: for every document, keep it or remove
//! it as a duplicate of a named kept document (`jobs/decisions.sql`). The
//! rule that picks the kept copy (`[dedup] keep`) already ordered
//! verification's placement, so this stage only reads the clusters: the
//! kept copy is each cluster's representative, and every removed document
//! verified against it, or is an exact copy of a member (same
//! `tokens.text_digest`) and follows it. Rows are ordered by input file and offset, the
//! order an export reads the crawl back in.

use anyhow::Result;
use serde_json::{json, Value};

use crate::config::Config;
use crate::runner::{RunContext, Stage, StageReport};
use crate::tables::columns::decisions;
use crate::tables::sql::run_into_table;

/// The decide stage.
pub struct Decide;

impl Stage for Decide {
    fn name(&self) -> &'static str {
        "decide"
    }
    fn inputs(&self) -> Vec<&'static str> {
        vec!["documents", "clusters", "tokens", "exact_copies"]
    }
    fn outputs(&self, _: &Config) -> Vec<&'static str> {
        vec![decisions::TABLE]
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({"dedup": config.dedup})
    }
    fn runs_sql_on_engine(&self) -> bool {
        true
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        ctx.runtime.block_on(run(ctx))
    }
}

async fn run(ctx: &RunContext) -> Result<StageReport> {
    let sql = include_str!("../../jobs/decisions.sql");
    let session = ctx.sql_stage_session().await?;
    let mut report = StageReport::default();
    report.rows.insert(decisions::TABLE.into(), run_into_table(&session, &ctx.out, decisions::TABLE, sql).await?);
    // The outcome by reason, for the run's summary line and the report.
    let written = ctx.session().await?;
    let counts = written.sql("SELECT reason, COUNT(*) AS n FROM decisions GROUP BY reason").await?.collect().await?;
    for batch in &counts {
        let reasons = decisions::reason(batch)?;
        let n: &arrow::array::Int64Array = crate::tables::column(batch, "n")?;
        for i in 0..batch.num_rows() {
            report.counters.insert(reasons.value(i).to_string(), n.value(i).max(0) as u64);
        }
    }
    Ok(report)
}

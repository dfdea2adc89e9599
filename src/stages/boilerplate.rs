//! Stage `boilerplate`: `blocks` → `boilerplate`.
//!
//! The global half of boilerplate detection (see [`crate::text::boilerplate`]):
//! `jobs/boilerplate.sql` counts on how many distinct page contents of its
//! host (digests of `documents.text`) each line is found and keeps the lines over `[boilerplate] min_pages` and
//! `min_share`. Like `df`, the result is a statistic over every task's
//! `blocks`, read whole by every task of `tokens`; it is one row per
//! template line of a host, so it stays small.

use anyhow::Result;
use futures::StreamExt;
use serde_json::{json, Value};

use crate::config::Config;
use crate::stages::stage::{RunContext, Stage};
use crate::tables::columns::{blocks, boilerplate};
use crate::tables::manifest::StageReport;
use crate::tables::sql::{run_into_table, substitute};
use crate::tables::Table;
use crate::text::boilerplate::Boilerplate as TemplateLines;

/// The boilerplate stage.
pub struct Boilerplate;

impl Stage for Boilerplate {
    fn name(&self) -> &'static str {
        "boilerplate"
    }
    fn inputs(&self) -> Vec<Table> {
        vec![blocks::NAME]
    }
    fn outputs(&self, _: &Config) -> Vec<Table> {
        vec![boilerplate::NAME]
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({"boilerplate": config.boilerplate})
    }
    fn runs_sql_on_engine(&self) -> bool {
        true
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        ctx.runtime.block_on(run(ctx))
    }
}

async fn run(ctx: &RunContext) -> Result<StageReport> {
    let config = &ctx.config.boilerplate;
    let sql = substitute(
        include_str!("../../jobs/boilerplate.sql"),
        &[("min_pages", config.min_pages.to_string()), ("min_share", format!("{:?}", config.min_share))],
    );
    // Its group-bys see a row per line of every page: bounded whatever the
    // crawl's size.
    let session = ctx.corpus_sql_stage_session("blocks").await?;
    let mut report = StageReport::default();
    report.rows.insert("boilerplate".into(), run_into_table(&session, &ctx.out, "boilerplate", &sql).await?);
    Ok(report)
}

/// Reads the `boilerplate` table into memory (one entry per template line
/// of a host: a small table), for the `tokens` stage and `pipeline export`,
/// which leave those lines out of a document's text.
pub async fn load_boilerplate(session: &datafusion::prelude::SessionContext) -> Result<TemplateLines> {
    let mut lines = TemplateLines::default();
    let mut stream = session.sql("SELECT host, block_hash FROM boilerplate").await?.execute_stream().await?;
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        let (hosts, keys) = (boilerplate::host(&batch)?, boilerplate::block_hash(&batch)?);
        for i in 0..batch.num_rows() {
            lines.insert(hosts.value(i), keys.value(i));
        }
    }
    Ok(lines)
}

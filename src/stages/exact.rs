//! Stage `exact`: `tokens`, `documents` → `exact_copies`, `exact_groups`.
//!
//! Exact copies first (spec §9): documents with the same verification text
//! (`tokens.text_digest`) form an exact group, found by one group-by over
//! the whole crawl (`jobs/exact_copies.sql`, plain SQL on the run's engine,
//! under its memory pool). Only each group's first in the keep order goes
//! on through `stats`, `signatures`, `search`, `candidates` and `verify`:
//! the others are listed in `exact_copies`, which those stages leave out
//! ([`crate::stages::tokens::read::TokenChunks`], `jobs/df.sql`,
//! `jobs/corpus_stats.sql`), so the corpus statistics count distinct texts
//! and no per-document bound is spent on a copy. `verify` puts each copy in
//! its first's cluster and `decide` gives it its first's outcome.
//! `exact_groups` (`jobs/exact_groups.sql`) summarizes the groups for
//! whoever runs the crawler.
//!
//! Not a map stage: a group's members may be in any task's documents.

use anyhow::Result;
use serde_json::{json, Value};

use crate::config::Config;
use crate::stages::stage::{RunContext, Stage};
use crate::tables::columns::{documents, exact_copies, exact_groups, tokens};
use crate::tables::manifest::StageReport;
use crate::tables::sql::{count, run_into_table, substitute};
use crate::tables::Table;

/// The exact stage.
pub struct Exact;

impl Stage for Exact {
    fn name(&self) -> &'static str {
        "exact"
    }
    fn inputs(&self) -> Vec<Table> {
        vec![tokens::NAME, documents::NAME]
    }
    fn outputs(&self, _: &Config) -> Vec<Table> {
        vec![exact_copies::NAME, exact_groups::NAME]
    }
    fn config_section(&self, config: &Config) -> Value {
        // The first of a group is the first in the keep order.
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
    let mut report = StageReport::default();
    let copies = substitute(
        include_str!("../../jobs/exact_copies.sql"),
        &crate::stages::verify::keep_order::keep_params(&ctx.config.dedup),
    );
    let session = ctx.sql_stage_session().await?;
    let rows = run_into_table(&session, &ctx.out, exact_copies::TABLE, &copies).await?;
    report.rows.insert(exact_copies::TABLE.into(), rows);
    // A new session sees the table just written.
    let session = ctx.sql_stage_session().await?;
    let groups = include_str!("../../jobs/exact_groups.sql");
    let rows = run_into_table(&session, &ctx.out, exact_groups::TABLE, groups).await?;
    report.rows.insert(exact_groups::TABLE.into(), rows);
    let written = ctx.session().await?;
    let largest = count(&written, "SELECT COALESCE(MAX(documents), 0) AS n FROM exact_groups").await?;
    report.counters.insert("largest_exact_group".into(), largest);
    Ok(report)
}

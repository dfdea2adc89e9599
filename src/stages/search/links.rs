//! Stage `search_links`: `search_key_links` → `search_links`.
//!
//! The candidate pairs of the searches by keys ([`super`]):
//! `jobs/search_links.sql` sums the keys linking each pair over the tasks
//! of `search_groups` and keeps each document's strongest partners. Plain
//! SQL on the run's engine (`--engine`: embedded, or a Ballista cluster),
//! one query per search, each written as its own part, so that each has
//! the whole memory pool.

use anyhow::Result;
use serde_json::{json, Value};

use crate::config::Config;
use crate::methods::{registry, EdgeBound};
use crate::stages::stage::{RunContext, Stage};
use crate::tables::columns::{search_key_links, search_links};
use crate::tables::manifest::StageReport;
use crate::tables::sql::{run_parts_into_table, substitute};
use crate::tables::Table;

/// The search_links stage.
pub struct SearchLinks;

impl Stage for SearchLinks {
    fn name(&self) -> &'static str {
        "search_links"
    }
    fn inputs(&self) -> Vec<Table> {
        vec![search_key_links::NAME]
    }
    fn outputs(&self, _: &Config) -> Vec<Table> {
        vec![search_links::NAME]
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({"methods": config.methods, "max_edges_per_document": config.candidates.max_edges_per_document})
    }
    fn runs_sql_on_engine(&self) -> bool {
        true
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        let bound = ctx.config.candidates.edge_bound();
        let searches = registry::searches(&ctx.config.methods);
        let parts: Vec<(&str, String)> = searches.iter().map(|s| (s.id(), links_sql(s.id(), bound))).collect();
        let mut report = StageReport::default();
        let rows = ctx.runtime.block_on(async {
            let session = ctx.sql_stage_session().await?;
            run_parts_into_table(&session, &ctx.out, search_links::TABLE, &parts).await
        })?;
        report.rows.insert(search_links::TABLE.into(), rows);
        Ok(report)
    }
}

/// Partners a document keeps among those its keys link it to, for each
/// edge it may keep in the end (`max_edges`): the pairs scored per document
/// stay a constant whatever the sizes of its groups.
const PARTNERS_PER_EDGE: usize = 4;

/// The query of `jobs/search_links.sql` for
/// method `id`, which keeps each document's strongest partners.
pub fn links_sql(id: &str, bound: EdgeBound) -> String {
    substitute(
        include_str!("../../../jobs/search_links.sql"),
        &[("method", format!("'{id}'")), ("max_candidates", (PARTNERS_PER_EDGE * bound.per_document()).to_string())],
    )
}

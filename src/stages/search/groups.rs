//! Stage `search_groups`: `search_keys` → `search_key_links`.
//!
//! The groups of documents sharing a key of a search by keys
//! ([`super`], SpotSigs and SL+ST), walked as chains in
//! size order (`jobs/search_groups.sql`): each pair linked, with the number
//! of keys linking it. Stage `search_links` sums those counts over the
//! tasks and keeps each document's strongest partners.
//!
//! A map stage by key: task I of N (`--shard I/N`) walks the groups of the
//! keys with `sig % N = I` (keys are hashes, so the shares are even), in
//! its own process, where DataFusion's array functions walk a group's
//! member list at once (Ballista's executors lack them).

use anyhow::Result;
use serde_json::{json, Value};

use crate::config::Config;
use crate::methods::{registry, EdgeBound, KeyedSearch};
use crate::stages::stage::{RunContext, Stage};
use crate::tables::columns::{search_key_links, search_keys};
use crate::tables::manifest::StageReport;
use crate::tables::shard::Shard;
use crate::tables::sql::{run_parts_into_shard, substitute};
use crate::tables::Table;

/// The search_groups stage.
pub struct SearchGroups;

impl Stage for SearchGroups {
    fn name(&self) -> &'static str {
        "search_groups"
    }
    fn inputs(&self) -> Vec<Table> {
        vec![search_keys::NAME]
    }
    fn outputs(&self, _: &Config) -> Vec<Table> {
        vec![search_key_links::NAME]
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({"methods": config.methods, "max_edges_per_document": config.candidates.max_edges_per_document})
    }
    fn shardable(&self) -> bool {
        true
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        let bound = ctx.config.candidates.edge_bound();
        let searches = registry::searches(&ctx.config.methods);
        let parts: Vec<(&str, String)> =
            searches.iter().map(|s| (s.id(), groups_sql(s.id(), s.keyed(), bound, ctx.shard))).collect();
        let rows = ctx.runtime.block_on(async {
            let session = ctx.session().await?;
            run_parts_into_shard(&session, &ctx.out, search_key_links::TABLE, ctx.shard, &parts).await
        })?;
        let mut report = StageReport::default();
        report.rows.insert(search_key_links::TABLE.into(), rows);
        Ok(report)
    }
}

/// Task `shard`'s query: the one of
/// `jobs/search_groups.sql` for method `id` over the task's share of the
/// keys: the groups of 2 to [`KeyedSearch::max_group_docs`] documents,
/// each member linked to its next [`EdgeBound::per_document`] members.
pub fn groups_sql(id: &str, search: &dyn KeyedSearch, bound: EdgeBound, shard: Shard) -> String {
    substitute(
        include_str!("../../../jobs/search_groups.sql"),
        &[
            ("method", format!("'{id}'")),
            ("own_keys", shard.doc_predicate("sig")),
            ("max_group_docs", search.max_group_docs().to_string()),
            ("max_edges", bound.per_document().to_string()),
            ("chain_steps", chain_steps(bound.per_document())),
        ],
    )
}

/// The `${chain_steps}` of `jobs/search_groups.sql`, which walks each
/// member list by zipping it with itself shifted by each step: the VALUES
/// list `(1), (2), ... (max_edges)`.
fn chain_steps(max_edges: usize) -> String {
    (1..=max_edges).map(|k| format!("({k})")).collect::<Vec<_>>().join(", ")
}

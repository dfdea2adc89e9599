//! The history's stages (`--history DIR --crawl-id ID`): a night matched
//! against the earlier crawls of the history, after `evaluate` and before
//! `decide` ([`FOLLOWING`]) and the night's append
//! ([`matching`] reads and writes their tables,
//! [`crate::history::matching`] has the steps over rows in memory).
//!
//! - `history_candidates`: `signatures`, the methods' records and the
//!   verification-text digests (`tokens`, less `exact_copies`) →
//!   `history_candidates`, the candidate repeats bounded per night page;
//! - `history_verify`: `history_candidates` + the texts → `repeats`, those
//!   that verify against the earlier pages' kept texts;
//! - `history_clusters`: `repeats` + `clusters` → `crawl_clusters`, the
//!   clusters across crawls with the copy each keeps.
//!
//! As stages of the runner they have manifests, so `pipeline status
//! --history DIR --crawl-id ID` sees them and a rerun skips what is up to
//! date. Their inputs outside the output folder are the earlier crawls
//! (their manifests, `history_fingerprint`): appending, replacing or dropping
//! one makes them run again.
//!
//! Besides: [`append`], a finished night appended to the history as a
//! crawl, and [`session`], the history's tables registered in a session.

use anyhow::{Context, Result};
use serde_json::{json, Value};

use crate::config::Config;
use crate::history::History;
use crate::methods::registry;
use crate::stages::history::matching::{cluster_night, find_candidates, night_walk_params, verify_night};
use crate::stages::stage::{HistoryRun, RunContext, Stage};
use crate::tables::columns::{
    clusters, crawl_clusters, documents, exact_copies, history_candidates, repeats, signatures, tokens,
};
use crate::tables::manifest::StageReport;
use crate::tables::Table;

pub mod append;
pub mod matching;
pub mod session;

/// The three stages, in run order.
pub fn stages() -> Vec<Box<dyn Stage>> {
    vec![Box::new(HistoryCandidates), Box::new(HistoryVerify), Box::new(HistoryClusters)]
}

/// The stages of [`crate::stages::all`] that follow the history's stages in
/// a run with `--history` (and in `pipeline history match`): `decide`, so
/// that a night's decisions remove its pages that repeat a page kept in an
/// earlier crawl. No stage before them reads `decisions`.
pub const FOLLOWING: [&str; 1] = [crate::stages::decide::NAME];

/// The history and night crawl of the run; an error naming the stage when
/// the run has none.
fn night<'a>(ctx: &'a RunContext, stage: &str) -> Result<(History, &'a HistoryRun)> {
    let night = ctx.history.as_ref().with_context(|| {
        format!("stage {stage} matches a night against a history: give --history DIR --crawl-id ID")
    })?;
    Ok((History::open(&night.root)?, night))
}

/// The external fingerprint of every history stage: the night's crawl id
/// and the manifests of the crawls before it (the complete crawls whose ids
/// sort before its own).
fn history_fingerprint(ctx: &RunContext, stage: &str) -> Result<Value> {
    let (history, night) = night(ctx, stage)?;
    Ok(json!({"crawl": night.crawl, "earlier_crawls": history.crawls_before(&night.crawl)?}))
}

/// Stage `history_candidates`.
pub struct HistoryCandidates;

impl Stage for HistoryCandidates {
    fn name(&self) -> &'static str {
        "history_candidates"
    }
    fn inputs(&self) -> Vec<Table> {
        [signatures::NAME, tokens::NAME, exact_copies::NAME].into_iter().chain(registry::record_tables()).collect()
    }
    fn outputs(&self, _: &Config) -> Vec<Table> {
        vec![history_candidates::NAME]
    }
    fn config_section(&self, config: &Config) -> Value {
        let params: serde_json::Map<String, Value> = night_walk_params(config)
            .into_iter()
            .map(|(name, value)| (name.to_string(), Value::String(value)))
            .collect();
        json!({"sql_params": params})
    }
    fn external_fingerprint(&self, ctx: &RunContext) -> Result<Value> {
        history_fingerprint(ctx, self.name())
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        let (history, night) = night(ctx, self.name())?;
        let earlier = history.crawls_before(&night.crawl)?;
        let rows = find_candidates(&history, &ctx.out, &earlier, &ctx.config, ctx.sql_pool(), &ctx.runtime)?;
        let mut report = StageReport::default();
        report.rows.insert("history_candidates".into(), rows);
        report.counters.insert("earlier_crawls".into(), earlier.len() as u64);
        Ok(report)
    }
}

/// Stage `history_verify`.
pub struct HistoryVerify;

impl Stage for HistoryVerify {
    fn name(&self) -> &'static str {
        "history_verify"
    }
    fn inputs(&self) -> Vec<Table> {
        vec![history_candidates::NAME, documents::NAME, tokens::NAME]
    }
    fn outputs(&self, _: &Config) -> Vec<Table> {
        vec![repeats::NAME]
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({"verify": config.verify})
    }
    fn external_fingerprint(&self, ctx: &RunContext) -> Result<Value> {
        history_fingerprint(ctx, self.name())
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        let (history, night) = night(ctx, self.name())?;
        let earlier = history.crawls_before(&night.crawl)?;
        let (rows, outcomes) =
            verify_night(&history, &ctx.out, &night.crawl, &earlier, &ctx.config, ctx.sql_pool(), &ctx.runtime)?;
        let mut report = StageReport::default();
        report.rows.insert("repeats".into(), rows);
        // The rejected repeats (the screen's too) are counted here only.
        outcomes.insert_into(&mut report.counters);
        Ok(report)
    }
}

/// Stage `history_clusters`.
pub struct HistoryClusters;

impl Stage for HistoryClusters {
    fn name(&self) -> &'static str {
        "history_clusters"
    }
    fn inputs(&self) -> Vec<Table> {
        vec![repeats::NAME, clusters::NAME, documents::NAME]
    }
    fn outputs(&self, _: &Config) -> Vec<Table> {
        vec![crawl_clusters::NAME]
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({"dedup": config.dedup, "mark": config.history.mark})
    }
    fn external_fingerprint(&self, ctx: &RunContext) -> Result<Value> {
        history_fingerprint(ctx, self.name())
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        let (history, night) = night(ctx, self.name())?;
        let rows = cluster_night(&history, &ctx.out, &night.crawl, &ctx.config, ctx.sql_pool(), &ctx.runtime)?;
        let mut report = StageReport::default();
        report.rows.insert("crawl_clusters".into(), rows);
        Ok(report)
    }
}

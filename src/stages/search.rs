//! Stage `search`: `search_links`, `search_forms` → `method_pairs`.
//!
//! The last step of the searches by keys ([`crate::methods::keyed`],
//! SpotSigs and SL+ST): every candidate pair `search_links` proposes is
//! scored by its method from the two documents' encoded forms, and the
//! pairs the method proposes are written with their scores. Each document
//! keeps its strongest of them in `candidates`, as it does every method's
//! edges (`candidates.max_edges_per_document`, `jobs/candidates.sql`).
//!
//! A map stage: task I of N (`--shard I/N`) scores the links whose doc_a
//! has `doc_a % N = I`, and reads only the forms those links name.

use anyhow::Result;
use serde_json::{json, Value};

use crate::config::Config;
use crate::methods::{keyed, registry, ScoredPair};
use crate::stages::stage::{RunContext, Stage};
use crate::tables::columns::{method_pairs, search_forms, search_links};
use crate::tables::manifest::StageReport;
use crate::tables::write::TableOutput;

/// The search stage.
pub struct Search;

impl Stage for Search {
    fn name(&self) -> &'static str {
        "search"
    }
    fn inputs(&self) -> Vec<&'static str> {
        vec![search_links::TABLE, search_forms::TABLE]
    }
    fn outputs(&self, _: &Config) -> Vec<&'static str> {
        vec![method_pairs::TABLE]
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({"methods": config.methods})
    }
    fn shardable(&self) -> bool {
        true
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        ctx.runtime.block_on(run(ctx))
    }
}

async fn run(ctx: &RunContext) -> Result<StageReport> {
    let session = ctx.session().await?;
    let mut report = StageReport::default();
    let mut w = TableOutput::<method_pairs::Rows>::for_shard(&ctx.out, ctx.shard)?;
    for search in registry::searches(&ctx.config.methods) {
        let id = search.id();
        let mut pairs = 0u64;
        let mut write = |found: &[ScoredPair]| {
            pairs += found.len() as u64;
            for p in found {
                w.push(|b| {
                    b.method.append_value(id);
                    b.doc_a.append_value(p.doc_a);
                    b.doc_b.append_value(p.doc_b);
                    b.score.append_value(p.score);
                })?;
            }
            Ok(())
        };
        let started = std::time::Instant::now();
        keyed::score_links(&session, &ctx.out, id, search.keyed(), ctx.shard, &mut write, &mut report.counters).await?;
        report.counters.insert(format!("{id}_search_ms"), started.elapsed().as_millis() as u64);
        report.counters.insert(format!("{id}_pairs"), pairs);
    }
    report.rows.insert(method_pairs::TABLE.into(), w.commit()?);
    Ok(report)
}

//! Stage `search_keys`: `tokens`, `exact_copies` → `search_keys`,
//! `search_forms`.
//!
//! The first step of the methods that find their pairs by a search of
//! their own rather than by equal signatures
//! ([`registry::MethodSpec::search`]: SpotSigs and SL+ST, searched by keys,
//! [`crate::methods::keyed`]): every document's keys, and the encoded form
//! its pairs are scored from. Stage `search_links` groups the keys, stage
//! `search` scores the pairs.
//!
//! A map stage: task I of N (`--shard I/N`) encodes the documents with
//! `doc_id % N = I`, one pass over their token lists per search, a chunk at
//! a time. Only the first of each exact group is searched: the passes leave
//! the exact copies out, so no bound is spent on them.

use anyhow::Result;
use serde_json::{json, Value};

use crate::config::Config;
use crate::methods::inputs::tokens::TokenPasses;
use crate::methods::keyed::KeyWriter;
use crate::methods::registry;
use crate::stages::stage::{RunContext, Stage};
use crate::tables::columns::{search_forms, search_keys};
use crate::tables::manifest::StageReport;

/// The search_keys stage.
pub struct SearchKeys;

impl Stage for SearchKeys {
    fn name(&self) -> &'static str {
        "search_keys"
    }
    fn inputs(&self) -> Vec<&'static str> {
        vec!["tokens", "exact_copies"]
    }
    fn outputs(&self, _: &Config) -> Vec<&'static str> {
        vec![search_keys::TABLE, search_forms::TABLE]
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({"methods": config.methods})
    }
    fn shardable(&self) -> bool {
        true
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        let session = ctx.runtime.block_on(ctx.session())?;
        let mut report = StageReport::default();
        let mut writer = KeyWriter::for_shard(&ctx.out, ctx.shard)?;
        for search in registry::searches(&ctx.config.methods) {
            let id = search.id();
            let started = std::time::Instant::now();
            let passes = TokenPasses::new(&ctx.runtime, session.clone(), search.reads(), ctx.shard);
            let written = writer.write(id, search.keyed(), &passes);
            // A pass that failed explains a failed write: its error first.
            passes.finish()?;
            let (keys, docs) = written?;
            report.counters.insert(format!("{id}_keys"), keys);
            report.counters.insert(format!("{id}_documents_encoded"), docs);
            report.counters.insert(format!("{id}_keys_ms"), started.elapsed().as_millis() as u64);
        }
        let (keys, forms) = writer.commit()?;
        report.rows.insert(search_keys::TABLE.into(), keys);
        report.rows.insert(search_forms::TABLE.into(), forms);
        Ok(report)
    }
}

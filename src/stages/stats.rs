//! Stage `stats`: `tokens` → `df`, `corpus_stats`, `method_state`.
//!
//! The corpus-wide statistics, computed once over the tokens of all tasks
//! of a (possibly sharded) `tokens` stage and read by every task of
//! `signatures`: document and collection frequencies and the corpus size in
//! SQL (`jobs/df.sql`, `jobs/corpus_stats.sql`), then the state of the
//! global methods built from them (lexicons of imatch and a7, a9's
//! descriptive words, which need one more pass over the documents).

use anyhow::Result;
use serde_json::{json, Value};
use std::cell::RefCell;

use crate::config::Config;
use crate::methods::registry::{self, DocPasses, StateSource};
use crate::methods::{CorpusStats, DocView};
use crate::runner::{RunContext, Stage, StageReport};
use crate::table::TableOutput;
use crate::tables::columns::method_state;
use crate::tables::tokens::{TokenChunks, TokenParts};

/// The stats stage.
pub struct Stats;

impl Stage for Stats {
    fn name(&self) -> &'static str {
        "stats"
    }
    fn inputs(&self) -> Vec<&'static str> {
        vec!["tokens"]
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
        let passes = TokenPasses { ctx, session, failed: RefCell::new(None) };
        let config = &ctx.config.methods;
        let started = std::time::Instant::now();
        let built = registry::build_signers(&config.enabled, config, &stats, StateSource::Corpus(&passes));
        if let Some(e) = passes.failed.into_inner() {
            return Err(e.context("cannot read the tokens table"));
        }
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

/// Documents per chunk of a pass over the terms: the chunks of the
/// `signatures` stage.
const PASS_CHUNK_DOCS: usize = 4096;

/// `df` and `corpus_stats` written; a session that sees them, and the
/// statistics read back.
async fn frequencies(
    ctx: &RunContext,
    report: &mut StageReport,
) -> Result<(datafusion::prelude::SessionContext, CorpusStats)> {
    let session = ctx.sql_stage_session().await?;
    for (table, sql) in
        [("df", include_str!("../../jobs/df.sql")), ("corpus_stats", include_str!("../../jobs/corpus_stats.sql"))]
    {
        let rows = crate::sql::run_into_table(&session, &ctx.out, table, sql).await?;
        report.rows.insert(table.into(), rows);
    }
    // A new session sees the tables just written.
    let session = ctx.session().await?;
    let stats = crate::tables::corpus_stats::load_corpus_stats(&session).await?;
    Ok((session, stats))
}

/// The corpus's terms read again from `tokens` for each pass, in chunks of
/// [`PASS_CHUNK_DOCS`] documents in doc_id order: a9's two passes hold one
/// chunk at a time, where they held every document's terms (most of this
/// stage's 3.1 GB at eight Javadoc copies).
struct TokenPasses<'a> {
    ctx: &'a RunContext,
    session: datafusion::prelude::SessionContext,
    /// The first error of a pass; the pass stops there.
    failed: RefCell<Option<anyhow::Error>>,
}

impl DocPasses for TokenPasses<'_> {
    fn each_chunk(&self, f: &mut dyn FnMut(&[DocView<'_>])) {
        if self.failed.borrow().is_some() {
            return;
        }
        let mut pass = || -> Result<()> {
            let runtime = &self.ctx.runtime;
            let mut chunks = runtime.block_on(TokenChunks::open(&self.session, "", TokenParts::Terms))?;
            while let Some(chunk) = runtime.block_on(chunks.next_chunk(PASS_CHUNK_DOCS))? {
                let lists = chunk.lists()?;
                f(&lists.views());
            }
            Ok(())
        };
        if let Err(e) = pass() {
            *self.failed.borrow_mut() = Some(e);
        }
    }
}

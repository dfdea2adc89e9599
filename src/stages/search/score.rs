//! Stage `search`: `search_links`, `search_forms` → `method_pairs`.
//!
//! The last step of the searches by keys ([`super`],
//! SpotSigs and SL+ST): every candidate pair `search_links` proposes is
//! scored by its method from the two documents' encoded forms, and the
//! pairs the method proposes are written with their scores. Each document
//! keeps its strongest of them in `candidates`, as it does every method's
//! edges (`candidates.max_edges_per_document`, `jobs/candidates.sql`).
//!
//! A map stage: task I of N (`--shard I/N`) scores the links whose doc_a
//! has `doc_a % N = I`, and reads only the forms those links name.

use anyhow::Result;
use futures::StreamExt;
use rayon::prelude::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;

use crate::config::Config;
use crate::methods::{keyed, registry, KeyedSearch, ScoredPair};
use crate::stages::stage::{RunContext, Stage};
use crate::storage::spilled_docs::{SpillWriter, SpilledDocs};
use crate::tables::columns::{method_pairs, search_forms, search_links};
use crate::tables::manifest::StageReport;
use crate::tables::shard::Shard;
use crate::tables::write::TableOutput;
use crate::tables::Table;

/// The search stage.
pub struct Search;

impl Stage for Search {
    fn name(&self) -> &'static str {
        "search"
    }
    fn inputs(&self) -> Vec<Table> {
        vec![search_links::NAME, search_forms::NAME]
    }
    fn outputs(&self, _: &Config) -> Vec<Table> {
        vec![method_pairs::NAME]
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
        score_links(&session, &ctx.out, id, search.keyed(), ctx.shard, &mut write, &mut report.counters).await?;
        report.counters.insert(format!("{id}_search_ms"), started.elapsed().as_millis() as u64);
        report.counters.insert(format!("{id}_pairs"), pairs);
    }
    report.rows.insert(method_pairs::TABLE.into(), w.commit()?);
    Ok(report)
}

/// Candidate pairs scored at once: about one batch of the links read.
const SCORE_BATCH_PAIRS: usize = 8192;

/// Scores `shard`'s links of method `id` (those
/// whose doc_a it owns) from `session`'s `search_links` and `search_forms`,
/// and hands the pairs the method proposes to `found`, in (doc_a, doc_b)
/// order. The forms of the task's documents and of their partners are
/// first copied from `search_forms` to a file on local disk under `out`,
/// and read back by id.
/// Counts `<id>_candidate_pairs`, `<id>_forms_read` and the milliseconds of
/// each step in `counters`. Called from inside the runtime.
pub async fn score_links(
    session: &datafusion::prelude::SessionContext,
    out: &Path,
    id: &str,
    search: &dyn KeyedSearch,
    shard: Shard,
    found: &mut dyn FnMut(&[ScoredPair]) -> Result<()>,
    counters: &mut BTreeMap<String, u64>,
) -> Result<()> {
    let own_links = format!("method = '{id}' AND {}", shard.doc_predicate("doc_a"));
    let started = std::time::Instant::now();
    let forms = read_forms(session, out, id, &own_links).await?;
    counters.insert(format!("{id}_forms_read"), forms.len() as u64);
    counters.insert(format!("{id}_forms_ms"), started.elapsed().as_millis() as u64);
    let sql = format!("SELECT doc_a, doc_b FROM search_links WHERE {own_links} ORDER BY doc_a, doc_b");
    let mut stream = session.sql(&sql).await?.execute_stream().await?;
    let mut pairs: Vec<(u64, u64)> = Vec::with_capacity(SCORE_BATCH_PAIRS);
    let (mut candidate_pairs, mut score_time) = (0u64, std::time::Duration::ZERO);
    loop {
        let batch = stream.next().await.transpose()?;
        if let Some(batch) = &batch {
            let (a, b) = (search_links::doc_a(batch)?, search_links::doc_b(batch)?);
            pairs.extend((0..batch.num_rows()).map(|i| (a.value(i), b.value(i))));
        }
        // A batch ends where doc_a changes, so each document's pairs are
        // scored together and its form is read once.
        let done = batch.is_none();
        let cut = if done { pairs.len() } else { last_document_start(&pairs) };
        if cut >= SCORE_BATCH_PAIRS || (done && cut > 0) {
            candidate_pairs += cut as u64;
            let started = std::time::Instant::now();
            let by_first: Vec<&[(u64, u64)]> = pairs[..cut].chunk_by(|x, y| x.0 == y.0).collect();
            let scored: Vec<Vec<ScoredPair>> =
                by_first.par_iter().map(|&pairs| keyed::score_pairs(search, &forms, pairs)).collect::<Result<_>>()?;
            score_time += started.elapsed();
            found(&scored.concat())?;
            pairs.drain(..cut);
        }
        if done {
            break;
        }
    }
    counters.insert(format!("{id}_candidate_pairs"), candidate_pairs);
    counters.insert(format!("{id}_score_ms"), score_time.as_millis() as u64);
    Ok(())
}

/// Where the pairs of the last document of `pairs` (sorted by doc_a)
/// begin: those before it are complete.
fn last_document_start(pairs: &[(u64, u64)]) -> usize {
    match pairs.last() {
        Some(&(last, _)) => pairs.partition_point(|p| p.0 < last),
        None => 0,
    }
}

/// The encoded forms of method `id` that the links selected by `own_links`
/// name (either end), copied to a spill file: a semi-join in SQL, so the
/// task holds the ids of its documents and partners, never the table.
async fn read_forms(
    session: &datafusion::prelude::SessionContext,
    out: &Path,
    id: &str,
    own_links: &str,
) -> Result<SpilledDocs> {
    let sql = format!(
        "SELECT doc_id, size, form FROM search_forms \
         WHERE method = '{id}' AND doc_id IN (SELECT doc_a FROM search_links WHERE {own_links} \
                                              UNION SELECT doc_b FROM search_links WHERE {own_links})"
    );
    let mut stream = session.sql(&sql).await?.execute_stream().await?;
    let mut spill = SpillWriter::create(out, &format!("{id}-forms"))?;
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        let (ids, sizes, forms) =
            (search_forms::doc_id(&batch)?, search_forms::size(&batch)?, search_forms::form(&batch)?);
        for i in 0..batch.num_rows() {
            spill.push_sized(ids.value(i), sizes.value(i), forms.value(i))?;
        }
    }
    spill.finish()
}

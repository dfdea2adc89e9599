//! The bounded search by keys ([`KeyedSearch`]) of the methods that find
//! their pairs by a search of their own (SpotSigs, SL+ST), in four steps,
//! each a stage that runs anywhere:
//!
//! 1. [`KeyWriter`] (stage `search_keys`, a map stage): one pass over a
//!    task's token lists writes every document's keys to `search_keys` and
//!    its encoded form to `search_forms`.
//! 2. [`groups_sql`] (stage `search_groups`, a map stage by key): task I of
//!    N chains the groups of documents sharing a key with `sig % N = I`
//!    (`jobs/search_groups.sql`) and counts the keys linking each pair, as
//!    `search_key_links`.
//! 3. [`links_sql`] (stage `search_links`, plain SQL on the run's engine):
//!    sums those counts and keeps each document's strongest partners, as
//!    `search_links`.
//! 4. [`score_links`] (stage `search`, a map stage): task I of N scores the
//!    links whose doc_a is its own, from the two encoded forms, and reads
//!    only the forms those links name.
//!
//! No step holds more than a chunk of documents, a batch of pairs and the
//! forms of one task's pairs (on local disk), whatever the size of a group
//! or of the crawl. Each document's strongest scored pairs are kept by
//! `candidates`, as every method's edges are (`jobs/candidates.sql`). The
//! methods' one-process searches (SpotSigs' pruned index, SL+ST's suffix
//! array, compiled for tests only) are the test references.

use anyhow::Result;
use futures::StreamExt;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

use super::{DocPasses, EdgeBound, Encoded, KeyedSearch, ScoredPair};
use crate::storage::spilled_docs::{SpillWriter, SpilledDocs};
#[cfg(test)]
use crate::tables::columns::search_key_links;
use crate::tables::columns::{search_forms, search_keys, search_links};
use crate::tables::shard::Shard;
use crate::tables::sql::substitute;
use crate::tables::write::TableOutput;

/// Partners a document keeps among those its keys link it to, for each
/// edge it may keep in the end (`max_edges`): the pairs scored per document
/// stay a constant whatever the sizes of its groups.
const PARTNERS_PER_EDGE: usize = 4;

/// Candidate pairs scored at once: about one batch of the links read.
const SCORE_BATCH_PAIRS: usize = 8192;

/// Step 1: the `search_keys` and `search_forms` parts of one task.
pub struct KeyWriter {
    keys: TableOutput<search_keys::Rows>,
    forms: TableOutput<search_forms::Rows>,
}

impl KeyWriter {
    /// Starts `shard`'s parts of both tables under `out`.
    pub fn for_shard(out: &Path, shard: Shard) -> Result<KeyWriter> {
        Ok(KeyWriter { keys: TableOutput::for_shard(out, shard)?, forms: TableOutput::for_shard(out, shard)? })
    }

    /// One pass over `docs`: method `id`'s keys and encoded form of every
    /// document it encodes. Returns the number of key rows and of
    /// documents encoded.
    pub fn write(&mut self, id: &str, search: &dyn KeyedSearch, docs: &dyn DocPasses) -> Result<(u64, u64)> {
        let (mut key_rows, mut encoded_docs) = (0u64, 0u64);
        let mut failed: Option<anyhow::Error> = None;
        docs.each_chunk(&mut |chunk| {
            if failed.is_some() {
                return;
            }
            let per_doc: Vec<Option<Encoded>> = chunk.par_iter().map(|d| search.encode(d)).collect();
            let mut write = || -> Result<()> {
                for (doc, e) in chunk.iter().zip(&per_doc).filter_map(|(d, e)| Some((d, e.as_ref()?))) {
                    self.forms.push(|b| {
                        b.method.append_value(id);
                        b.doc_id.append_value(doc.doc_id);
                        b.size.append_value(e.size);
                        b.form.append_value(&e.form);
                    })?;
                    for &key in &e.keys {
                        self.keys.push(|b| {
                            b.method.append_value(id);
                            b.sig.append_value(key);
                            b.doc_id.append_value(doc.doc_id);
                            b.size.append_value(e.size);
                        })?;
                    }
                    key_rows += e.keys.len() as u64;
                    encoded_docs += 1;
                }
                Ok(())
            };
            failed = write().err();
        });
        match failed {
            Some(e) => Err(e),
            None => Ok((key_rows, encoded_docs)),
        }
    }

    /// Publishes both parts; returns their rows (keys, forms).
    pub fn commit(self) -> Result<(u64, u64)> {
        Ok((self.keys.commit()?, self.forms.commit()?))
    }
}

/// Step 2 (stage `search_groups`, task `shard`): the query of
/// `jobs/search_groups.sql` for method `id` over the task's share of the
/// keys: the groups of 2 to [`KeyedSearch::max_group_docs`] documents,
/// each member linked to its next [`EdgeBound::per_document`] members.
pub fn groups_sql(id: &str, search: &dyn KeyedSearch, bound: EdgeBound, shard: Shard) -> String {
    substitute(
        include_str!("../../jobs/search_groups.sql"),
        &[
            ("method", format!("'{id}'")),
            ("own_keys", shard.doc_predicate("sig")),
            ("max_group_docs", search.max_group_docs().to_string()),
            ("max_edges", bound.per_document().to_string()),
            ("chain_steps", chain_steps(bound.per_document())),
        ],
    )
}

/// Step 3 (stage `search_links`): the query of `jobs/search_links.sql` for
/// method `id`, which keeps each document's strongest partners.
pub fn links_sql(id: &str, bound: EdgeBound) -> String {
    substitute(
        include_str!("../../jobs/search_links.sql"),
        &[("method", format!("'{id}'")), ("max_candidates", (PARTNERS_PER_EDGE * bound.per_document()).to_string())],
    )
}

/// The `${chain_steps}` of `jobs/search_groups.sql`, which walks each
/// member list by zipping it with itself shifted by each step: the VALUES
/// list `(1), (2), ... (max_edges)`.
fn chain_steps(max_edges: usize) -> String {
    (1..=max_edges).map(|k| format!("({k})")).collect::<Vec<_>>().join(", ")
}

/// Step 4 (stage `search`): scores `shard`'s links of method `id` (those
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
                by_first.par_iter().map(|&pairs| score_pairs(search, &forms, pairs)).collect::<Result<_>>()?;
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

/// The pairs of one document `a` (`pairs`, all (a, _)) that the method
/// proposes, with their scores; the size bound first, then `a`'s form read
/// once. A document without an encoded form pairs nothing.
fn score_pairs(search: &dyn KeyedSearch, encoded: &SpilledDocs, pairs: &[(u64, u64)]) -> Result<Vec<ScoredPair>> {
    let mut scored = Vec::new();
    let Some(size_a) = pairs.first().and_then(|&(a, _)| encoded.size(a)) else {
        return Ok(scored);
    };
    let mut a_form = None;
    for &(a, b) in pairs {
        if !encoded.size(b).is_some_and(|size_b| search.may_pair(size_a, size_b)) {
            continue;
        }
        if a_form.is_none() {
            a_form = encoded.get(a)?;
        }
        let (Some(x), Some(y)) = (&a_form, encoded.get(b)?) else { continue };
        if let Some(score) = search.score(x, &y)? {
            scored.push(ScoredPair { doc_a: a.min(b), doc_b: a.max(b), score });
        }
    }
    Ok(scored)
}

/// The pairs of `search` over `docs` as the four stages find them (read
/// 7 at a time, keys grouped and links scored as 2 tasks), for the methods' tests against their
/// one-process reference.
#[cfg(test)]
pub fn keyed_pairs(search: &dyn KeyedSearch, docs: &[super::DocView<'_>], max_edges: u32) -> Vec<ScoredPair> {
    static RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out = std::env::temp_dir().join(format!("neardup-keyed-{}-{n}", std::process::id()));
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
    let mut keys = KeyWriter::for_shard(&out, Shard::WHOLE).expect("the key tables open");
    keys.write("keyed", search, &super::Chunked(docs, 7)).expect("the keys are written");
    keys.commit().expect("the key tables are published");
    let session = || runtime.block_on(crate::tables::sql::session_with_memory_limit(&out, None)).expect("a session");
    let bound = EdgeBound::new(max_edges);
    for index in 0..2 {
        let (shard, sql) = (Shard { index, count: 2 }, groups_sql("keyed", search, bound, Shard { index, count: 2 }));
        let parts = [("keyed", sql)];
        runtime
            .block_on(crate::tables::sql::run_parts_into_shard(
                &session(),
                &out,
                search_key_links::TABLE,
                shard,
                &parts,
            ))
            .expect("the groups are walked");
    }
    runtime
        .block_on(crate::tables::sql::run_into_table(&session(), &out, search_links::TABLE, &links_sql("keyed", bound)))
        .expect("the links are written");
    let (session, mut pairs, mut counters) = (session(), Vec::new(), BTreeMap::new());
    for index in 0..2 {
        let shard = Shard { index, count: 2 };
        let mut keep = |found: &[ScoredPair]| {
            pairs.extend_from_slice(found);
            Ok(())
        };
        runtime
            .block_on(score_links(&session, &out, "keyed", search, shard, &mut keep, &mut counters))
            .expect("the links are scored");
    }
    let _ = std::fs::remove_dir_all(out);
    pairs.sort_by_key(|p| (p.doc_a, p.doc_b));
    pairs
}

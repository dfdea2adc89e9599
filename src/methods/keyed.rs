//! The bounded search by keys ([`KeyedSearch`]) of the methods that find
//! their pairs by a search of their own (SpotSigs, SL+ST), run by the
//! `search` stage: one pass over the token lists writes every document's
//! keys to a Parquet file and its encoded form to a spill file
//! ([`crate::storage::spilled_docs`]); `jobs/keyed_pairs.sql` chains the
//! groups of documents sharing a key and keeps each document's strongest
//! partners, and each candidate pair is scored from the two encoded forms
//! read back from disk. Memory stays bounded whatever the size of a group
//! or of the crawl; the methods' one-process searches (SpotSigs' pruned
//! index, SL+ST's suffix array, compiled for tests only) are the test
//! references.

use anyhow::{Context, Result};
use arrow::array::{RecordBatch, UInt32Array, UInt64Array};
use arrow::datatypes::{DataType, Field, Schema};
use futures::StreamExt;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use super::{DocPasses, EdgeBound, Encoded, KeyedSearch, ScoredPair};
use crate::storage::spilled_docs::{ScratchFile, SpillWriter, SpilledDocs};
use crate::tables::columns::candidates;
use crate::tables::sql::substitute;

/// One keyed search (see the module doc) over the tables of `session`,
/// its scratch files in `out`'s spill folder.
pub struct KeyedRun<'a> {
    pub runtime: &'a tokio::runtime::Runtime,
    pub session: &'a datafusion::prelude::SessionContext,
    pub out: &'a Path,
    /// The method id.
    pub id: &'static str,
    /// Each member of a key's group is linked to its next
    /// [`EdgeBound::per_document`] members.
    pub bound: EdgeBound,
}

/// Partners a document keeps among those its keys link it to, for each
/// edge it may keep in the end (`max_edges`): the pairs scored per document
/// stay a constant whatever the sizes of its groups.
const PARTNERS_PER_EDGE: usize = 4;

/// Candidate pairs scored at once: one batch of the SQL's pairs.
const SCORE_BATCH_PAIRS: usize = 8192;

impl KeyedRun<'_> {
    /// The pairs the method proposes, sorted by (doc_a, doc_b); counts
    /// `<id>_keys`, `<id>_candidate_pairs` and the milliseconds of each
    /// step in `counters`. Called from outside the runtime, like
    /// [`TokenPasses`].
    pub fn find_pairs(
        &self,
        search: &dyn KeyedSearch,
        docs: &dyn DocPasses,
        counters: &mut BTreeMap<String, u64>,
    ) -> Result<Vec<ScoredPair>> {
        let started = std::time::Instant::now();
        let (keys_file, encoded, key_rows) = self.write_keys(search, docs)?;
        counters.insert(format!("{}_keys", self.id), key_rows);
        counters.insert(format!("{}_keys_ms", self.id), started.elapsed().as_millis() as u64);
        let max_edges = self.bound.per_document();
        let pairs_sql = substitute(
            include_str!("../../jobs/keyed_pairs.sql"),
            &[
                ("max_group_docs", search.max_group_docs().to_string()),
                ("max_edges", max_edges.to_string()),
                ("max_candidates", (PARTNERS_PER_EDGE * max_edges).to_string()),
                ("chain_steps", chain_steps(max_edges)),
            ],
        );
        let session = self.session;
        let mut stream = self.runtime.block_on(async {
            session
                .register_parquet("search_keys", keys_file.path().to_string_lossy().as_ref(), Default::default())
                .await?;
            anyhow::Ok(session.sql(&pairs_sql).await?.execute_stream().await?)
        })?;
        let mut found = Vec::new();
        let mut pairs: Vec<(u64, u64)> = Vec::with_capacity(SCORE_BATCH_PAIRS);
        let mut candidate_pairs = 0u64;
        let (mut sql_time, mut score_time) = (std::time::Duration::ZERO, std::time::Duration::ZERO);
        loop {
            let started = std::time::Instant::now();
            let batch = self.runtime.block_on(stream.next()).transpose()?;
            sql_time += started.elapsed();
            if let Some(batch) = &batch {
                let (a, b) = (candidates::doc_a(batch)?, candidates::doc_b(batch)?);
                pairs.extend((0..batch.num_rows()).map(|i| (a.value(i), b.value(i))));
            }
            if pairs.len() >= SCORE_BATCH_PAIRS || batch.is_none() {
                candidate_pairs += pairs.len() as u64;
                let started = std::time::Instant::now();
                let by_first: Vec<&[(u64, u64)]> = pairs.chunk_by(|x, y| x.0 == y.0).collect();
                let scored: Vec<Vec<ScoredPair>> =
                    by_first.par_iter().map(|&pairs| score_pairs(search, &encoded, pairs)).collect::<Result<_>>()?;
                found.extend(scored.into_iter().flatten());
                pairs.clear();
                score_time += started.elapsed();
            }
            if batch.is_none() {
                break;
            }
        }
        drop(stream);
        session.deregister_table("search_keys")?;
        counters.insert(format!("{}_candidate_pairs", self.id), candidate_pairs);
        counters.insert(format!("{}_pairs_sql_ms", self.id), sql_time.as_millis() as u64);
        counters.insert(format!("{}_score_ms", self.id), score_time.as_millis() as u64);
        found.sort_by_key(|p| (p.doc_a, p.doc_b));
        Ok(found)
    }

    /// One pass over the documents: their keys as rows (sig, doc_id, size)
    /// of a Parquet file, their encoded forms in a spill file. Returns both and
    /// the number of key rows.
    fn write_keys(&self, search: &dyn KeyedSearch, docs: &dyn DocPasses) -> Result<(ScratchFile, SpilledDocs, u64)> {
        let keys_file = ScratchFile::new(self.out, &format!("{}-keys.parquet", self.id))?;
        let schema = Arc::new(Schema::new(vec![
            Field::new("sig", DataType::UInt64, false),
            Field::new("doc_id", DataType::UInt64, false),
            Field::new("size", DataType::UInt32, false),
        ]));
        let file = std::fs::File::create(keys_file.path())
            .with_context(|| format!("cannot create {}", keys_file.path().display()))?;
        let mut writer = parquet::arrow::ArrowWriter::try_new(
            file,
            Arc::clone(&schema),
            Some(crate::tables::write::writer_properties()?),
        )?;
        let mut encoded = SpillWriter::create(self.out, &format!("{}-encoded", self.id))?;
        let mut rows = 0u64;
        let mut failed: Option<anyhow::Error> = None;
        docs.each_chunk(&mut |chunk| {
            if failed.is_some() {
                return;
            }
            let per_doc: Vec<Option<Encoded>> = chunk.par_iter().map(|d| search.encode(d)).collect();
            let mut write = || -> Result<()> {
                let (mut sigs, mut ids, mut sizes) = (Vec::new(), Vec::new(), Vec::new());
                for (doc, e) in chunk.iter().zip(&per_doc).filter_map(|(d, e)| Some((d, e.as_ref()?))) {
                    encoded.push_sized(doc.doc_id, e.size, &e.form)?;
                    sigs.extend_from_slice(&e.keys);
                    ids.extend(std::iter::repeat_n(doc.doc_id, e.keys.len()));
                    sizes.extend(std::iter::repeat_n(e.size, e.keys.len()));
                }
                rows += sigs.len() as u64;
                let columns: Vec<arrow::array::ArrayRef> = vec![
                    Arc::new(UInt64Array::from(sigs)),
                    Arc::new(UInt64Array::from(ids)),
                    Arc::new(UInt32Array::from(sizes)),
                ];
                let batch = RecordBatch::try_new(Arc::clone(&schema), columns)?;
                writer.write(&batch)?;
                Ok(())
            };
            if let Err(e) = write() {
                failed = Some(e.context(format!("cannot write {}", keys_file.path().display())));
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
        writer.close()?;
        Ok((keys_file, encoded.finish()?, rows))
    }
}

/// The pairs of one document `a` (`pairs`, all (a, _)) that the method
/// proposes, with their scores; the size bound first, then `a`'s form read
/// once. A document without an encoded form (none written) pairs nothing.
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

/// The pairs of `search` over `docs` as the stage finds them (read 7 at a
/// time), for the methods' tests against their one-process reference.
#[cfg(test)]
pub fn keyed_pairs(search: &dyn KeyedSearch, docs: &[super::DocView<'_>], max_edges: u32) -> Vec<ScoredPair> {
    static RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out = std::env::temp_dir().join(format!("neardup-keyed-{}-{n}", std::process::id()));
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
    let session = datafusion::prelude::SessionContext::new();
    let run =
        KeyedRun { runtime: &runtime, session: &session, out: &out, id: "keyed", bound: EdgeBound::new(max_edges) };
    let mut counters = BTreeMap::new();
    let pairs = run.find_pairs(search, &super::Chunked(docs, 7), &mut counters).expect("the keyed search runs");
    assert!(counters["keyed_candidate_pairs"] >= pairs.len() as u64);
    let _ = std::fs::remove_dir_all(out);
    pairs
}

/// The `${chain_steps}` of `jobs/keyed_pairs.sql`, which walks each member
/// list by zipping it with itself shifted by each step: the VALUES list
/// `(1), (2), ... (max_edges)`.
fn chain_steps(max_edges: usize) -> String {
    (1..=max_edges).map(|k| format!("({k})")).collect::<Vec<_>>().join(", ")
}

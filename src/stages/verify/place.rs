//! Stage `place`: `candidates` with `verify`'s verdicts → `clusters`,
//! `placement_comparisons`.
//!
//! The clusters (spec §9): documents taken in the keep order, each joined
//! to the most similar representative, at or above the threshold, of the
//! clusters its candidate edges reach among the documents before it
//! ([`crate::verify::placement`]). So every member is verified against its
//! representative, the first document of a cluster in that order, the copy
//! kept.
//!
//! `verify` compared every candidate pair. This stage reads the pairs
//! (`verify_pairs`) in keep order with their verdicts
//! (`jobs/place_edges.sql`, sorted by the engine) into a file on local
//! disk, and passes over it. No number per page stays in memory (issue
//! 72): each document's id and, during a pass, its representative are
//! files of the spill folder read through a bounded cache
//! ([`DiskArray`]), and what a pass places or lacks is written to files
//! as it goes. A representative reached through a partner that is not
//! itself a partner is a comparison the pass lacks. Those are made
//! between passes, their texts read by id (one scan of `tokens` per
//! [`WANTED_PER_SCAN`] of them), and the pass runs again until it lacks
//! none (at most `verify.max_placement_rounds` rounds). That is the global
//! step of verification: its cost is a pass over the edges per round,
//! plus the few comparisons the rounds make. Those are
//! [`crate::verify::compare::compare`]'s, screen included (no round
//! compares a pair a method proposed, so none is a11's): every one,
//! verified or rejected, is a row of `placement_comparisons` with its
//! outcome and value, and counted by outcome in the manifest.
//!
//! The clusters are made by the engine from the last pass's joins
//! (`jobs/place_clusters.sql`), which also adds the exact copies
//! (`exact_copies`, stage `exact`; in no candidate edge): each joins its
//! first's cluster with similarity 1 to a first that is the
//! representative, else the first's own, and a first alone becomes the
//! representative of a cluster of its copies.

use anyhow::{Context, Result};
use arrow::array::Array;
use futures::StreamExt;
use rayon::prelude::*;
use serde_json::{json, Value};
use std::fs::File;

use crate::config::Config;
use crate::stages::stage::{RunContext, Stage};
use crate::stages::verify::inputs::{load_candidate_methods, spill_verification_texts};
use crate::storage::disk_array::{le_u32, le_u64, DiskArray, FixedRecord, RecordFile};
use crate::storage::spilled_docs::{ScratchFile, SpilledDocs};
use crate::tables::column;
use crate::tables::columns::{
    candidates, clusters, duplicates, exact_copies, failed_pairs, placement_comparisons, tokens, verify_pairs,
};
use crate::tables::manifest::StageReport;
use crate::tables::write::TableOutput;
use crate::tables::Table;
use crate::verify::compare::compare;
use crate::verify::placement::{Edge, EdgeVerdict, Placed, Representatives, RoundComparison, Rounds, Wanted};
use crate::verify::spilled_texts::spilled_docs;

/// The place stage.
pub struct Place;

impl Stage for Place {
    fn name(&self) -> &'static str {
        "place"
    }
    fn inputs(&self) -> Vec<Table> {
        vec![
            verify_pairs::NAME,
            candidates::NAME,
            tokens::NAME,
            duplicates::NAME,
            failed_pairs::NAME,
            exact_copies::NAME,
        ]
    }
    fn outputs(&self, _: &Config) -> Vec<Table> {
        vec![clusters::NAME, placement_comparisons::NAME]
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({"verify": config.verify, "dedup": config.dedup})
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        ctx.runtime.block_on(run(ctx))
    }
}

/// The wanted comparisons of one round compared at once: their texts are
/// held together.
const ROUND_CHUNK: usize = 4096;

/// The wanted comparisons whose texts one scan of `tokens` reads: a round
/// of more makes more scans, so that the ids it looks for stay bounded.
const WANTED_PER_SCAN: usize = 1 << 20;

/// The memory pool of the query that sorts the candidate pairs for the
/// passes (`jobs/place_edges.sql`): beyond it, the sort and the join spill.
const EDGES_POOL_BYTES: usize = crate::tables::sql::CORPUS_PASS_BYTES;

async fn run(ctx: &RunContext) -> Result<StageReport> {
    let session = ctx.session().await?;
    let methods = load_candidate_methods(&session).await?;
    let verify = &ctx.config.verify;
    // The edges are sorted, and joined with their verdicts, in a small
    // pool of their own with joins that spill: a pool as large as the run's
    // held them all in memory, and grew `place`'s peak with the crawl.
    let edges_pool = crate::process::memory::SqlMemory {
        pool_bytes: ctx.sql_pool().map_or(EDGES_POOL_BYTES, |m| m.pool_bytes.min(EDGES_POOL_BYTES)),
        sort_merge_joins: true,
    };
    let edges_session = crate::tables::sql::session_with_memory_limit(&ctx.out, Some(edges_pool)).await?;
    let (mut edges, mut ids, partners) = write_edges(&edges_session, &ctx.out).await?;
    drop(edges_session);

    // Each pass keeps the representatives in a file and writes what it
    // placed to another: no number per page stays in memory.
    let mut rounds = Rounds::new(&ctx.out)?;
    let mut every_text: Option<SpilledDocs> = None;
    let (mut joined, last_pass) =
        loop {
            let mut representatives = RepresentativeFile(DiskArray::create(&ctx.out, "placement-representatives")?);
            let mut joined = RecordFile::<Joined>::create(&ctx.out, "placement-joined")?;
            let mut wanted = RecordFile::<Wanted>::create(&ctx.out, "placement-wanted")?;
            let pass =
                rounds.pass(edges.read()?, &mut representatives, verify.max_comparisons_per_document, |placed| {
                    match placed {
                        Placed::Joined { doc, representative, similarity } => {
                            joined.push(&Joined { doc, representative, similarity })
                        }
                        Placed::Missing(w) => wanted.push(&w),
                    }
                })?;
            if pass.missing == 0 || rounds.round == verify.max_placement_rounds {
                break (joined, pass);
            }
            let round = rounds.round + 1;
            if round == 1 {
                if let Some(partners) = few_partners(&mut ids, partners, verify.placement_texts_read_once)? {
                    let wanted = |id| partners.binary_search(&id).is_ok();
                    every_text = Some(spill_verification_texts(&session, wanted, verify.text, &ctx.out).await?);
                }
            }
            let mut compared =
                compare_wanted(&session, every_text.as_ref(), &mut wanted, &mut ids, verify.rule(), &ctx.out, round)
                    .await?;
            tracing::info!(round, comparisons = compared.len(), "placement round");
            rounds.record(compared.read()?)?;
        };
    let candidate_pairs = edges.len();
    drop(edges);

    let mut report = StageReport::default();
    let c = &mut report.counters;
    // placement_comparisons: the rounds' comparisons, by (doc,
    // representative) in keep order.
    let mut writer = TableOutput::<placement_comparisons::Rows>::create(&ctx.out)?;
    let (mut outcomes, mut by_round, mut verified) =
        (crate::verify::compare::OutcomeCounts::default(), std::collections::BTreeMap::<u32, u64>::new(), 0u64);
    for made in rounds.made()? {
        let made = made?;
        let (doc, representative) = (ids.get(made.wanted.doc.into())?, ids.get(made.wanted.representative.into())?);
        writer.push(|row| {
            row.doc_id.append_value(doc);
            row.representative.append_value(representative);
            row.methods.append_value(methods.names(made.wanted.methods).map(Some));
            row.similarity.append_option(made.similarity);
            row.outcome.append_value(made.outcome.name());
            row.value.append_value(made.value);
            row.round.append_value(made.round);
        })?;
        outcomes.add(made.outcome);
        *by_round.entry(made.round).or_default() += 1;
        verified += u64::from(made.similarity.is_some());
    }
    report.rows.insert(placement_comparisons::TABLE.into(), writer.commit()?);

    // clusters: the last pass's joins by document id, with their
    // representatives and the exact copies added in SQL (sorted and
    // counted by the engine, which spills).
    let placed = ScratchFile::new(&ctx.out, "placement-placed.parquet")?;
    write_placed(placed.path(), &mut joined, &mut ids)?;
    drop((joined, ids));
    // A session of the SQL stages: under a user's limit, its joins are
    // sort-merge joins, which spill (both sides may be as large as the
    // crawl's clusters).
    let session = crate::tables::sql::session_with_memory_limit(&ctx.out, ctx.sql_pool()).await?;
    session.register_parquet("placed", placed.path().to_string_lossy().as_ref(), Default::default()).await?;
    let mut writer = TableOutput::<clusters::Rows>::create(&ctx.out)?;
    let (mut clusters_written, mut largest) = (0u64, 0u64);
    let mut stream = session.sql(include_str!("../../../jobs/place_clusters.sql")).await?.execute_stream().await?;
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        let (docs, cluster_ids) = (clusters::doc_id(&batch)?, clusters::cluster_id(&batch)?);
        let (sizes, is_rep) = (clusters::cluster_size(&batch)?, clusters::is_representative(&batch)?);
        let similarity = clusters::similarity_to_representative(&batch)?;
        for i in 0..batch.num_rows() {
            clusters_written += u64::from(is_rep.value(i));
            largest = largest.max(sizes.value(i));
            writer.push(|row| {
                row.doc_id.append_value(docs.value(i));
                row.cluster_id.append_value(cluster_ids.value(i));
                row.cluster_size.append_value(sizes.value(i));
                row.is_representative.append_value(is_rep.value(i));
                row.similarity_to_representative.append_option(similarity.is_valid(i).then(|| similarity.value(i)));
            })?;
        }
    }
    report.rows.insert(clusters::TABLE.into(), writer.commit()?);
    let copies_placed = crate::tables::sql::count(&session, "SELECT COUNT(*) AS n FROM exact_copies").await?;

    c.insert("candidate_pairs".into(), candidate_pairs);
    c.insert("rounds".into(), u64::from(rounds.round));
    for round in 1..=rounds.round {
        c.insert(format!("round_{round}_comparisons"), by_round.get(&round).copied().unwrap_or(0));
    }
    c.insert("placement_comparisons".into(), by_round.values().sum());
    // Of those, the ones the last pass used: the others were asked for by
    // an earlier pass, before a representative they depended on moved.
    c.insert("placement_comparisons_used".into(), last_pass.used);
    outcomes.insert_into(c);
    c.insert("placement_comparisons_verified".into(), verified);
    // Comparisons still lacking when the bound on rounds stopped them,
    // counted as failed.
    c.insert("comparisons_lacking_after_rounds".into(), last_pass.missing);
    c.insert("documents_at_representative_bound".into(), last_pass.capped);
    c.insert("clusters_with_duplicates".into(), clusters_written);
    c.insert("largest_cluster".into(), largest);
    c.insert("exact_copies_placed".into(), copies_placed);
    Ok(report)
}

/// The representatives of a pass, in a file: entry i is 0 for a document
/// that is its own, else its representative's keep index + 1 (so that the
/// file starts as every document its own, without writing it).
struct RepresentativeFile(DiskArray);

impl Representatives for RepresentativeFile {
    fn representative(&mut self, doc: u32) -> Result<u32> {
        Ok(match self.0.get(doc.into())? {
            0 => doc,
            r => u32::try_from(r - 1).context("a representative beyond 2^32 documents")?,
        })
    }
    fn join(&mut self, doc: u32, representative: u32) -> Result<()> {
        self.0.set(doc.into(), u64::from(representative) + 1)
    }
}

/// A document a pass joined to a representative (keep indices), with its
/// similarity.
struct Joined {
    doc: u32,
    representative: u32,
    similarity: f64,
}

impl FixedRecord for Joined {
    const SIZE: usize = 16;
    fn encode(&self, out: &mut [u8]) {
        out[0..4].copy_from_slice(&self.doc.to_le_bytes());
        out[4..8].copy_from_slice(&self.representative.to_le_bytes());
        out[8..16].copy_from_slice(&self.similarity.to_le_bytes());
    }
    fn decode(bytes: &[u8]) -> Self {
        let similarity = f64::from_bits(le_u64(bytes, 8));
        Joined { doc: le_u32(bytes, 0), representative: le_u32(bytes, 4), similarity }
    }
}

/// The candidate pairs in keep order with their verdicts (`jobs/place_edges.sql`,
/// sorted by the engine) in a file read again by every pass, and the
/// doc_id of each keep index that a pair names (0 for a document in no
/// pair), in another, with how many indices it names.
async fn write_edges(
    session: &datafusion::prelude::SessionContext,
    out: &std::path::Path,
) -> Result<(RecordFile<Edge>, DiskArray, Partners)> {
    let mut edges = RecordFile::create(out, "place-edges")?;
    let mut ids = DiskArray::create(out, "place-ids")?;
    let mut partners = Partners { count: 0, end: 0 };
    let mut stream = session.sql(include_str!("../../../jobs/place_edges.sql")).await?.execute_stream().await?;
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        let u64s = |name| column::<arrow::array::UInt64Array>(&batch, name);
        let (later, earlier, later_rank, earlier_rank, masks) =
            (u64s("later")?, u64s("earlier")?, u64s("later_rank")?, u64s("earlier_rank")?, u64s("methods")?);
        let similarity = column::<arrow::array::Float64Array>(&batch, "similarity")?;
        let failed = column::<arrow::array::BooleanArray>(&batch, "failed")?;
        for i in 0..batch.num_rows() {
            let index = |rank: u64| u32::try_from(rank - 1).context("more than 2^32 documents to place");
            let (l, e) = (index(later_rank.value(i))?, index(earlier_rank.value(i))?);
            for (index, id) in [(l, later.value(i)), (e, earlier.value(i))] {
                partners.count += u64::from(ids.get(index.into())? == 0);
                partners.end = partners.end.max(u64::from(index) + 1);
                ids.set(index.into(), id)?;
            }
            let verdict = if similarity.is_valid(i) {
                EdgeVerdict::Similar(similarity.value(i))
            } else if failed.value(i) {
                EdgeVerdict::Failed
            } else {
                EdgeVerdict::Uncompared
            };
            edges.push(&Edge { later: l, earlier: e, methods: masks.value(i), verdict })?;
        }
    }
    Ok((edges, ids, partners))
}

/// The documents of the candidate pairs: how many, and the end of their
/// keep indices in `place-ids`.
#[derive(Clone, Copy)]
struct Partners {
    count: u64,
    end: u64,
}

/// The partners (documents of the candidate pairs), sorted, when there
/// are at most `most` of them (`[verify] placement_texts_read_once`, 0:
/// never): read from `ids` (one pass over its file), counted while it was
/// written. On the Javadoc texts with min-hash only, 4 rounds of 152, 30,
/// 11 and 1 comparisons each scanned `tokens` for about a fifth of a
/// second.
fn few_partners(ids: &mut DiskArray, partners: Partners, most: u64) -> Result<Option<Vec<u64>>> {
    if partners.count > most {
        return Ok(None);
    }
    let mut found = Vec::with_capacity(partners.count as usize);
    for index in 0..partners.end {
        let id = ids.get(index)?;
        if id != 0 {
            found.push(id);
        }
    }
    found.sort_unstable();
    Ok(Some(found))
}

/// Makes the comparisons a pass lacked (`wanted`, sorted by document and
/// representative), as round `round`: each document with the
/// representative, the document as the Perl module's first string. Their
/// texts are read in one scan of `tokens` per [`WANTED_PER_SCAN`]
/// comparisons into a file on local disk (unless `every_text`, the file of
/// every partner's text that [`few_partners`] allowed, has them), then compared [`ROUND_CHUNK`]
/// pairs at a time (an `IN` list per few thousand ids scanned the table
/// again for each: 89 CPU-s of `place` at 8 Javadoc copies). The verdicts
/// come in the order wanted.
async fn compare_wanted(
    session: &datafusion::prelude::SessionContext,
    every_text: Option<&SpilledDocs>,
    wanted: &mut RecordFile<Wanted>,
    ids: &mut DiskArray,
    rule: crate::verify::settings::PairRule,
    out: &std::path::Path,
    round: u32,
) -> Result<RecordFile<RoundComparison>> {
    let mut compared = RecordFile::create(out, "placement-round")?;
    let mut wanted = wanted.read()?.peekable();
    while wanted.peek().is_some() {
        let scan: Vec<Wanted> = wanted.by_ref().take(WANTED_PER_SCAN).collect::<Result<_>>()?;
        let pairs: Vec<(u64, u64)> = scan
            .iter()
            .map(|w| Ok((ids.get(w.doc.into())?, ids.get(w.representative.into())?)))
            .collect::<Result<_>>()?;
        let scanned;
        let texts = match every_text {
            Some(every_text) => every_text,
            None => {
                let mut needed: Vec<u64> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
                needed.sort_unstable();
                needed.dedup();
                let wanted = |id| needed.binary_search(&id).is_ok();
                scanned = spill_verification_texts(session, wanted, rule.text, out).await?;
                &scanned
            }
        };
        for (chunk, chunk_pairs) in scan.chunks(ROUND_CHUNK).zip(pairs.chunks(ROUND_CHUNK)) {
            let docs = spilled_docs(texts, chunk_pairs.iter().flat_map(|&(a, b)| [a, b]))?;
            let verdicts: Vec<crate::verify::compare::Comparison> =
                chunk_pairs.par_iter().map(|(a, b)| compare(&docs[a], &docs[b], rule)).collect();
            for (&wanted, c) in chunk.iter().zip(verdicts) {
                let (similarity, outcome, value) = (c.similarity, c.outcome, c.value);
                compared.push(&RoundComparison { wanted, similarity, outcome, value, round })?;
            }
        }
    }
    Ok(compared)
}

/// Writes the last pass's joins by document id (`doc_id`, `cluster_id`:
/// the representative's, `similarity`) to a Parquet file, the `placed`
/// table of `jobs/place_clusters.sql`.
fn write_placed(path: &std::path::Path, joined: &mut RecordFile<Joined>, ids: &mut DiskArray) -> Result<()> {
    use arrow::array::{ArrayBuilder, Float64Builder, UInt64Builder};
    use arrow::datatypes::{DataType, Field, Schema};
    let schema = std::sync::Arc::new(Schema::new(vec![
        Field::new("doc_id", DataType::UInt64, false),
        Field::new("cluster_id", DataType::UInt64, false),
        Field::new("similarity", DataType::Float64, false),
    ]));
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, schema.clone(), None)?;
    let (mut docs, mut clusters, mut similarities) =
        (UInt64Builder::new(), UInt64Builder::new(), Float64Builder::new());
    let mut flush = |docs: &mut UInt64Builder, clusters: &mut UInt64Builder, similarities: &mut Float64Builder| {
        let columns: Vec<arrow::array::ArrayRef> = vec![
            std::sync::Arc::new(docs.finish()),
            std::sync::Arc::new(clusters.finish()),
            std::sync::Arc::new(similarities.finish()),
        ];
        writer.write(&arrow::record_batch::RecordBatch::try_new(schema.clone(), columns)?)
    };
    for j in joined.read()? {
        let j = j?;
        docs.append_value(ids.get(j.doc.into())?);
        clusters.append_value(ids.get(j.representative.into())?);
        similarities.append_value(j.similarity);
        if docs.len() == 65_536 {
            flush(&mut docs, &mut clusters, &mut similarities)?;
        }
    }
    flush(&mut docs, &mut clusters, &mut similarities)?;
    writer.close().with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{ArrayRef, BooleanArray, Float64Array, UInt64Array};
    use arrow::record_batch::RecordBatch;
    use std::sync::Arc;

    /// `jobs/place_clusters.sql`: copies follow their firsts, into the
    /// representative's cluster with similarity 1, into a member's cluster
    /// with the member's similarity, or into a new cluster of a first that
    /// was alone; every row carries its cluster's size.
    #[test]
    fn copies_join_their_firsts_clusters() {
        let u64s = |v: Vec<u64>| Arc::new(UInt64Array::from(v)) as ArrayRef;
        // 5 joined 1 at 0.9; 7 copies 1 (the representative), 8 copies 5,
        // 9 and 10 copy 3 (alone).
        let placed = RecordBatch::try_from_iter([
            ("doc_id", u64s(vec![5])),
            ("cluster_id", u64s(vec![1])),
            ("similarity", Arc::new(Float64Array::from(vec![0.9])) as ArrayRef),
        ])
        .unwrap();
        let copies =
            RecordBatch::try_from_iter([("doc_id", u64s(vec![7, 9, 10, 8])), ("first_doc_id", u64s(vec![1, 3, 3, 5]))])
                .unwrap();
        let session = datafusion::prelude::SessionContext::new();
        session.register_batch("placed", placed).unwrap();
        session.register_batch("exact_copies", copies).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let batches = runtime
            .block_on(async { session.sql(include_str!("../../../jobs/place_clusters.sql")).await?.collect().await })
            .unwrap();
        let mut rows = Vec::new();
        for b in &batches {
            let (docs, cluster_ids) = (clusters::doc_id(b).unwrap(), clusters::cluster_id(b).unwrap());
            let sizes = clusters::cluster_size(b).unwrap();
            let reps: &BooleanArray = clusters::is_representative(b).unwrap();
            let similarity = clusters::similarity_to_representative(b).unwrap();
            for i in 0..b.num_rows() {
                let s = similarity.is_valid(i).then(|| similarity.value(i));
                rows.push((cluster_ids.value(i), docs.value(i), sizes.value(i), reps.value(i), s));
            }
        }
        assert_eq!(
            rows,
            [
                (1, 1, 4, true, None),
                (1, 5, 4, false, Some(0.9)),
                (1, 7, 4, false, Some(1.0)),
                (1, 8, 4, false, Some(0.9)),
                (3, 3, 3, true, None),
                (3, 9, 3, false, Some(1.0)),
                (3, 10, 3, false, Some(1.0)),
            ]
        );
    }
}

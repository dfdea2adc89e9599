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
//! (`jobs/place_edges.sql`, sorted by the engine) into a file on local disk, and passes over it holding a few
//! numbers per document and no text: a representative reached through a
//! partner that is not itself a partner is a comparison the pass lacks.
//! Those are made between passes, their texts read by id, and the pass
//! runs again until it lacks none (at most `verify.max_placement_rounds`
//! rounds). That is the global step of verification: its cost is a pass
//! over the edges per round, plus the few comparisons the rounds make.
//! Those are [`crate::verify::compare::compare`]'s, screen included (no
//! round compares a pair a method proposed, so none is a11's): every one,
//! verified or rejected, is a row of `placement_comparisons` with its
//! outcome and value, and counted by outcome in the manifest.
//!
//! Exact copies (`exact_copies`, stage `exact`) were in no candidate edge:
//! each joins its first's cluster ([`with_copies`]) with similarity 1 to a
//! first that is the representative, else the first's own, and a first
//! alone becomes the representative of a cluster of its copies.

use anyhow::{Context, Result};
use arrow::array::Array;
use futures::StreamExt;
use rayon::prelude::*;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};

use crate::config::Config;
use crate::stages::stage::{RunContext, Stage};
use crate::stages::verify::inputs::{load_candidate_methods, spill_verification_texts};
use crate::storage::spilled_docs::ScratchFile;
use crate::tables::column;
use crate::tables::columns::{
    candidates, clusters, duplicates, exact_copies, failed_pairs, placement_comparisons, tokens, verify_pairs,
};
use crate::tables::manifest::StageReport;
use crate::tables::write::TableOutput;
use crate::tables::Table;
use crate::verify::compare::compare;
use crate::verify::placement::{Edge, EdgeVerdict, Rounds, Wanted};
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

async fn run(ctx: &RunContext) -> Result<StageReport> {
    let session = ctx.session().await?;
    let methods = load_candidate_methods(&session).await?;
    let verify = &ctx.config.verify;
    let edges = EdgeFile::write(&session, &ctx.out).await?;
    let n = edges.ids.len();

    let mut rounds = Rounds::default();
    let placement = loop {
        let placement = rounds.pass(n, edges.read()?, verify.max_comparisons_per_document)?;
        if placement.missing.is_empty() || rounds.round == verify.max_placement_rounds {
            break placement;
        }
        let verdicts = compare_wanted(&session, &placement.missing, &edges.ids, verify.rule(), &ctx.out).await?;
        tracing::info!(round = rounds.round + 1, comparisons = placement.missing.len(), "placement round");
        rounds.record(&placement.missing, verdicts)?;
    };
    drop(edges.file);

    let mut report = StageReport::default();
    // placement_comparisons: the rounds' comparisons, by (round, doc, representative).
    let mut made: Vec<&crate::verify::placement::RoundComparison> = rounds.made.iter().collect();
    made.sort_by_key(|c| (c.round, edges.ids[c.wanted.doc as usize], edges.ids[c.wanted.representative as usize]));
    let mut writer = TableOutput::<placement_comparisons::Rows>::create(&ctx.out)?;
    for c in &made {
        writer.push(|row| {
            row.doc_id.append_value(edges.ids[c.wanted.doc as usize]);
            row.representative.append_value(edges.ids[c.wanted.representative as usize]);
            row.methods.append_value(methods.names(c.wanted.methods).map(Some));
            row.similarity.append_option(c.similarity);
            row.outcome.append_value(c.outcome.name());
            row.value.append_value(c.value);
            row.round.append_value(c.round);
        })?;
    }
    report.rows.insert(placement_comparisons::TABLE.into(), writer.commit()?);

    // clusters: every member of a cluster of two or more, the exact copies
    // with their firsts, by (cluster, rep first, doc).
    let mut sizes = vec![0u32; n];
    for &r in &placement.representative {
        sizes[r as usize] += 1;
    }
    let placed: Vec<Member> = (0..n)
        .filter(|&i| sizes[placement.representative[i] as usize] > 1)
        .map(|i| Member {
            cluster: edges.ids[placement.representative[i] as usize],
            doc: edges.ids[i],
            similarity: placement.similarity[i],
        })
        .collect();
    drop(sizes);
    let copies = load_copies(&session).await?;
    let copies_placed = copies.len() as u64;
    let mut rows = with_copies(placed, copies);
    rows.sort_unstable_by_key(|r| (r.cluster, r.doc != r.cluster, r.doc));
    let mut writer = TableOutput::<clusters::Rows>::create(&ctx.out)?;
    let (mut clusters_written, mut largest) = (0u64, 0u64);
    for cluster in rows.chunk_by(|a, b| a.cluster == b.cluster) {
        clusters_written += 1;
        largest = largest.max(cluster.len() as u64);
        for r in cluster {
            writer.push(|row| {
                row.doc_id.append_value(r.doc);
                row.cluster_id.append_value(r.cluster);
                row.cluster_size.append_value(cluster.len() as u64);
                row.is_representative.append_value(r.doc == r.cluster);
                row.similarity_to_representative.append_option(r.similarity);
            })?;
        }
    }
    report.rows.insert(clusters::TABLE.into(), writer.commit()?);

    let c = &mut report.counters;
    c.insert("candidate_pairs".into(), edges.count);
    c.insert("rounds".into(), u64::from(rounds.round));
    for round in 1..=rounds.round {
        c.insert(format!("round_{round}_comparisons"), rounds.made.iter().filter(|m| m.round == round).count() as u64);
    }
    c.insert("placement_comparisons".into(), rounds.made.len() as u64);
    // Of those, the ones the last pass used: the others were asked for by
    // an earlier pass, before a representative they depended on moved.
    c.insert("placement_comparisons_used".into(), placement.used);
    let mut outcomes = crate::verify::compare::OutcomeCounts::default();
    rounds.made.iter().for_each(|m| outcomes.add(m.outcome));
    outcomes.insert_into(c);
    c.insert(
        "placement_comparisons_verified".into(),
        rounds.made.iter().filter(|m| m.similarity.is_some()).count() as u64,
    );
    // Comparisons still lacking when the bound on rounds stopped them,
    // counted as failed.
    c.insert("comparisons_lacking_after_rounds".into(), placement.missing.len() as u64);
    c.insert("documents_at_representative_bound".into(), placement.capped);
    c.insert("clusters_with_duplicates".into(), clusters_written);
    c.insert("largest_cluster".into(), largest);
    c.insert("exact_copies_placed".into(), copies_placed);
    Ok(report)
}

/// The candidate pairs in keep order with their verdicts, as fixed-size
/// records in a file of the spill folder (read again by every pass), and
/// the doc_id of each keep index that a pair names.
struct EdgeFile {
    file: ScratchFile,
    /// doc_id by keep index (rank - 1); 0 for a document in no pair.
    ids: Vec<u64>,
    count: u64,
}

/// One record: later, earlier (u32 each), methods (u64), verdict kind (u8:
/// 0 uncompared, 1 failed, 2 similar) and similarity (f64).
const RECORD: usize = 4 + 4 + 8 + 1 + 8;

impl EdgeFile {
    /// Streams `jobs/place_edges.sql` into the file.
    async fn write(session: &datafusion::prelude::SessionContext, out: &std::path::Path) -> Result<EdgeFile> {
        let mut edges = EdgeFile { file: ScratchFile::new(out, "place-edges")?, ids: Vec::new(), count: 0 };
        let path = edges.file.path().to_path_buf();
        let mut writer =
            BufWriter::new(File::create(&path).with_context(|| format!("cannot create {}", path.display()))?);
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
                if edges.ids.len() <= l as usize {
                    edges.ids.resize(l as usize + 1, 0);
                }
                edges.ids[l as usize] = later.value(i);
                edges.ids[e as usize] = earlier.value(i);
                let (kind, value) =
                    if similarity.is_valid(i) { (2u8, similarity.value(i)) } else { (u8::from(failed.value(i)), 0.0) };
                let mut record = [0u8; RECORD];
                record[0..4].copy_from_slice(&l.to_le_bytes());
                record[4..8].copy_from_slice(&e.to_le_bytes());
                record[8..16].copy_from_slice(&masks.value(i).to_le_bytes());
                record[16] = kind;
                record[17..25].copy_from_slice(&value.to_le_bytes());
                writer.write_all(&record).with_context(|| format!("cannot write {}", path.display()))?;
                edges.count += 1;
            }
        }
        writer.flush().with_context(|| format!("cannot write {}", path.display()))?;
        Ok(edges)
    }

    /// The edges, in the order written.
    fn read(&self) -> Result<impl Iterator<Item = Result<Edge>> + '_> {
        let path = self.file.path();
        let mut reader = BufReader::new(File::open(path).with_context(|| format!("cannot read {}", path.display()))?);
        Ok((0..self.count).map(move |_| {
            let mut r = [0u8; RECORD];
            reader.read_exact(&mut r).with_context(|| format!("cannot read {}", path.display()))?;
            let u32_at = |k: usize| u32::from_le_bytes(r[k..k + 4].try_into().expect("4 bytes"));
            let verdict = match r[16] {
                2 => EdgeVerdict::Similar(f64::from_le_bytes(r[17..25].try_into().expect("8 bytes"))),
                1 => EdgeVerdict::Failed,
                _ => EdgeVerdict::Uncompared,
            };
            let methods = u64::from_le_bytes(r[8..16].try_into().expect("8 bytes"));
            Ok(Edge { later: u32_at(0), earlier: u32_at(4), methods, verdict })
        }))
    }
}

/// Makes the comparisons a pass lacked: each document with the
/// representative, the document as the Perl module's first string. Their
/// texts are read in one scan of `tokens` into a file on local disk, then
/// compared [`ROUND_CHUNK`] pairs at a time: one scan per round, however
/// many comparisons (an `IN` list per few thousand ids scanned the table
/// again for each: 89 CPU-s of `place` at 8 Javadoc copies).
async fn compare_wanted(
    session: &datafusion::prelude::SessionContext,
    wanted: &[Wanted],
    ids: &[u64],
    rule: crate::verify::settings::PairRule,
    out: &std::path::Path,
) -> Result<Vec<crate::verify::compare::Comparison>> {
    let mut needed: Vec<u64> =
        wanted.iter().flat_map(|w| [ids[w.doc as usize], ids[w.representative as usize]]).collect();
    needed.sort_unstable();
    needed.dedup();
    let texts = spill_verification_texts(session, |id| needed.binary_search(&id).is_ok(), rule.text, out).await?;
    let mut verdicts = Vec::with_capacity(wanted.len());
    for chunk in wanted.chunks(ROUND_CHUNK) {
        let docs =
            spilled_docs(&texts, chunk.iter().flat_map(|w| [ids[w.doc as usize], ids[w.representative as usize]]))?;
        verdicts.par_extend(
            chunk
                .par_iter()
                .map(|w| compare(&docs[&ids[w.doc as usize]], &docs[&ids[w.representative as usize]], rule)),
        );
    }
    Ok(verdicts)
}

/// One row of `clusters` by document id: its cluster (the representative's
/// id), and its similarity to the representative (none for it).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Member {
    cluster: u64,
    doc: u64,
    similarity: Option<f64>,
}

/// The exact copies (`exact_copies`: copy, first) as (first, copy) sorted.
async fn load_copies(session: &datafusion::prelude::SessionContext) -> Result<Vec<(u64, u64)>> {
    let mut copies = Vec::new();
    let mut stream = session.sql("SELECT doc_id, first_doc_id FROM exact_copies").await?.execute_stream().await?;
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        let ids = crate::tables::columns::exact_copies::doc_id(&batch)?;
        let firsts = crate::tables::columns::exact_copies::first_doc_id(&batch)?;
        copies.extend((0..batch.num_rows()).map(|i| (firsts.value(i), ids.value(i))));
    }
    copies.sort_unstable();
    Ok(copies)
}

/// The clusters' rows with the exact copies (first, copy) added: a copy
/// joins its first's cluster, with similarity 1 to a first that is the
/// representative, else the first's own similarity (the texts are
/// identical); a first in no cluster becomes the representative of one
/// with its copies (spec §9, "Exact copies first").
fn with_copies(mut rows: Vec<Member>, copies: Vec<(u64, u64)>) -> Vec<Member> {
    let placed: HashMap<u64, Member> = rows.iter().map(|r| (r.doc, *r)).collect();
    for group in copies.chunk_by(|a, b| a.0 == b.0) {
        let first = group[0].0;
        let (cluster, similarity) = match placed.get(&first) {
            Some(m) if m.doc != m.cluster => (m.cluster, m.similarity),
            Some(m) => (m.cluster, Some(1.0)),
            None => {
                rows.push(Member { cluster: first, doc: first, similarity: None });
                (first, Some(1.0))
            }
        };
        rows.extend(group.iter().map(|&(_, copy)| Member { cluster, doc: copy, similarity }));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Copies follow their firsts: into the representative's cluster with
    /// similarity 1, into a member's cluster with the member's similarity,
    /// or into a new cluster of a first that was alone.
    #[test]
    fn copies_join_their_firsts_clusters() {
        let member = |cluster, doc, similarity| Member { cluster, doc, similarity };
        let placed = vec![member(1, 1, None), member(1, 5, Some(0.9))];
        // 7 copies 1 (the representative), 8 copies 5, 9 and 10 copy 3
        // (alone).
        let rows = with_copies(placed.clone(), vec![(1, 7), (3, 9), (3, 10), (5, 8)]);
        let mut rows = rows;
        rows.sort_unstable_by_key(|r| (r.cluster, r.doc));
        assert_eq!(
            rows,
            [
                member(1, 1, None),
                member(1, 5, Some(0.9)),
                member(1, 7, Some(1.0)),
                member(1, 8, Some(0.9)),
                member(3, 3, None),
                member(3, 9, Some(1.0)),
                member(3, 10, Some(1.0)),
            ]
        );
        assert_eq!(with_copies(placed.clone(), Vec::new()), placed);
    }
}

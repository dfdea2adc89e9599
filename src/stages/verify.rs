//! Stage `verify`: `candidates` → `duplicates`, `clusters`.
//!
//! Verification that builds the clusters, in one pass. Verifying every
//! candidate pair and then clustering costs the square of a group's size
//! (a template shared by thousands of pages); here the number of LCS
//! comparisons is the number of documents times a small constant:
//!
//! 1. The distinct candidate edges (at most `candidates.max_edges_per_document`
//!    per document and method) split the documents into connected
//!    components; a component is one unit of work.
//! 2. Inside a component, documents are taken in the keep order
//!    (`[dedup] keep`, `jobs/keep_order.sql`; by default the copy at its
//!    canonical URL, then the earliest crawl date, the longest text, the
//!    smallest doc_id). Each document is compared with the
//!    representatives of the clusters its edges reach among the documents
//!    already placed, and joins the one it is most similar to at or above
//!    `verify.threshold`; if none verifies, it starts a cluster of its own.
//!    So every member is verified against its representative (no chaining
//!    A~B~C without A~C), and the first document of a cluster in that order
//!    is its representative: the copy kept, the one every removed member
//!    is a duplicate of.
//! 3. Each comparison is [`crate::verify::compare::compare`]: cheap bounds
//!    first, then at most one LCS with an early exit (exact, or the Perl
//!    module's value with `verify.algorithm = "string-similarity"`; the
//!    document is the module's first string, the representative its second).
//! 4. The methods that include their comparison
//!    ([`crate::methods::registry::MethodSpec::includes_comparison`]: a11) found the pairs that pass
//!    it, so each of their candidate pairs is compared once: placing
//!    compares those that join a document and a representative, the others
//!    are compared besides (the later document first), without moving
//!    either document. Counted per method as `<method>_comparisons` and
//!    `<method>_found_pairs` (those that passed).
//!
//! `duplicates` gets one row per comparison that verified, `failed_pairs`
//! one per comparison that failed, `clusters` one row per member of a
//! cluster of two or more documents. Exact copies (`exact_copies`, stage
//! `exact`) were in no candidate edge: each joins its first's cluster
//! ([`with_copies`]) with similarity 1 to a first that is the
//! representative, else the first's own, and a first alone becomes the
//! representative of a cluster of its copies.
//!
//! A map stage: task I of N (`--shard I/N`) takes the components
//! [`own_components`] assigns it by their estimated cost (a document in no
//! edge is a component of its own, for its copies, taken by the task
//! I = doc_id mod N), and reads the texts of their documents only.
//!
//! Those texts are written to a file on local disk ([`crate::storage::spilled_docs`])
//! and read back when a document is placed or compared with, through a
//! cache of fixed size per component (the representatives come back for
//! every document they place): a template's component can hold most of
//! the crawl, and memory no longer grows with its texts, only with its
//! number of documents (an id, a url and a rank each).

use anyhow::Result;
use futures::StreamExt;
use rayon::prelude::*;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};

use crate::config::Config;
use crate::runner::{RunContext, Stage, StageReport};
use crate::tables::columns::{clusters, documents, duplicates, failed_pairs, tokens};
use crate::tables::sql::substitute;
use crate::tables::write::TableOutput;
use crate::verify::compare::Outcome;
use crate::verify::components::{place_component, Adjacency, ComponentResult, Members, ABSENT};
use crate::verify::inputs::{register_doc_ids, spill_verification_texts, spilled_verification_text, CandidateEdges};
use crate::verify::placement::Rule;
use crate::verify::union_find::UnionFind;

/// The verify stage.
pub struct Verify;

impl Stage for Verify {
    fn name(&self) -> &'static str {
        "verify"
    }
    fn inputs(&self) -> Vec<&'static str> {
        vec!["candidates", "documents", "tokens", "exact_copies"]
    }
    fn outputs(&self, _: &Config) -> Vec<&'static str> {
        vec!["duplicates", "failed_pairs", "clusters"]
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({"verify": config.verify, "dedup": config.dedup})
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
    let mut edges = CandidateEdges::load(&session).await?;
    let pairs = std::mem::take(&mut edges.pairs);
    let mut uf = UnionFind::new();
    for &(a, b) in pairs.keys() {
        uf.union(a, b);
    }
    let components = own_components(&session, ctx.shard, &pairs, uf.components()).await?;
    // The exact copies this task places: those whose first is in one of
    // its components, or alone (a component of one document) and its own.
    let own_components: HashSet<u64> = components.iter().flatten().copied().collect();
    let copies = load_own_copies(&session, |first| {
        own_components.contains(&first) || (uf.find(first).is_none() && ctx.shard.owns_doc(first))
    })
    .await?;
    drop(own_components);
    drop(uf);
    let mut ids: Vec<u64> = components.iter().flatten().copied().collect();
    ids.sort_unstable();
    anyhow::ensure!(u32::try_from(ids.len()).is_ok(), "more than 2^32 documents in one verify task: shard it");
    register_doc_ids(&session, "own_docs", ids.clone())?;
    let n = ids.len();
    let mut members = Members { ids, keep_rank: vec![ABSENT; n], urls: String::new(), url_span: vec![(0, 0); n] };
    // The task's pairs by dense index (a < b as doc_a < doc_b), before the
    // texts are read: the pair map takes two to three times as much.
    let edges_count = pairs.len() as u64;
    let mut own_pairs: Vec<(u32, u32, u64)> =
        pairs.iter().filter_map(|(&(a, b), &m)| Some((members.index(a)?, members.index(b)?, m))).collect();
    drop(pairs);

    let texts =
        spill_verification_texts(&session, |id| members.index(id).is_some(), ctx.config.verify.rule().text, &ctx.out)
            .await?;
    let sql = substitute(include_str!("../../jobs/keep_order.sql"), &ctx.config.dedup.sql_params());
    let mut stream = session.sql(&sql).await?.execute_stream().await?;
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        let (doc_ids, urls) = (documents::doc_id(&batch)?, documents::url(&batch)?);
        let ranks: &arrow::array::UInt64Array = crate::tables::column(&batch, "keep_rank")?;
        for r in 0..batch.num_rows() {
            let Some(i) = members.index(doc_ids.value(r)) else { continue };
            members.keep_rank[i as usize] = ranks.value(r);
            members.url_span[i as usize] = (members.urls.len(), urls.value(r).len());
            members.urls.push_str(urls.value(r));
        }
    }
    members.urls.shrink_to_fit();

    // A document with no `documents` row is in no component's placement.
    own_pairs.retain(|&(a, b, _)| members.is_present(a) && members.is_present(b));
    let adjacency = Adjacency::new(n, &own_pairs);

    let comparing = edges.comparing_mask();
    let rule = Rule {
        pair: ctx.config.verify.rule(),
        comparing,
        max_comparisons: ctx.config.verify.max_comparisons_per_document,
        failed_budget: ctx.config.verify.failed_comparison_budget,
    };
    let progress = crate::process::progress::counter(ctx.progress, n as u64, "verify", "docs");
    let results: Vec<ComponentResult> = components
        .par_iter()
        .map(|component| {
            let result =
                place_component(component, &members, &adjacency, |id| spilled_verification_text(&texts, id), rule)?;
            progress.inc(component.len() as u64);
            Ok(result)
        })
        .collect::<Result<_>>()?;
    progress.finish_and_clear();
    drop(texts);
    drop(adjacency);

    let mut report = StageReport::default();
    let mut outcome_counts = [0u64; Outcome::KINDS];
    let (mut capped, mut uncompared, mut over_budget) = (0u64, 0u64, 0u64);
    let (mut compared, mut clustered) = (Vec::new(), Vec::new());
    for r in results {
        outcome_counts.iter_mut().zip(r.outcomes).for_each(|(total, k)| *total += k);
        capped += r.capped;
        uncompared += r.uncompared;
        over_budget += r.over_budget;
        compared.extend(r.compared);
        clustered.extend(r.clustered);
    }
    // duplicates and failed_pairs: one row per comparison, by (doc_a, doc_b).
    compared.sort_unstable_by_key(|c| (c.a, c.b));
    let mut verified = TableOutput::<duplicates::Rows>::for_shard(&ctx.out, ctx.shard)?;
    let mut failed = TableOutput::<failed_pairs::Rows>::for_shard(&ctx.out, ctx.shard)?;
    for c in &compared {
        let names: Vec<&str> = edges.names(c.methods).collect();
        let (a, b) = (members.ids[c.a as usize], members.ids[c.b as usize]);
        match c.similarity {
            Some(sim) => verified.push(|row| {
                row.doc_a.append_value(a);
                row.doc_b.append_value(b);
                row.url_a.append_value(members.url(c.a));
                row.url_b.append_value(members.url(c.b));
                row.methods.append_value(names.iter().map(Some));
                row.similarity.append_value(sim);
                row.verified.append_value(true);
            })?,
            None => failed.push(|row| {
                row.doc_a.append_value(a);
                row.doc_b.append_value(b);
                row.url_a.append_value(members.url(c.a));
                row.url_b.append_value(members.url(c.b));
                row.methods.append_value(names.iter().map(Some));
            })?,
        }
    }
    report.rows.insert(duplicates::TABLE.into(), verified.commit()?);
    report.rows.insert(failed_pairs::TABLE.into(), failed.commit()?);

    // clusters: every member of a cluster of two or more, the exact copies
    // with their firsts, by (cluster, rep first, doc).
    let placed: Vec<Member> = clustered
        .iter()
        .map(|r| Member {
            cluster: members.ids[r.representative as usize],
            doc: members.ids[r.doc as usize],
            similarity: r.similarity,
        })
        .collect();
    let copies_placed = copies.len() as u64;
    let mut rows = with_copies(placed, copies);
    rows.sort_unstable_by_key(|r| (r.cluster, r.doc != r.cluster, r.doc));
    let mut writer = TableOutput::<clusters::Rows>::for_shard(&ctx.out, ctx.shard)?;
    let mut clusters_written = 0u64;
    for cluster in rows.chunk_by(|a, b| a.cluster == b.cluster) {
        clusters_written += 1;
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
    c.insert("candidate_edges".into(), edges_count);
    c.insert("components".into(), components.len() as u64);
    c.insert("largest_component".into(), components.iter().map(Vec::len).max().unwrap_or(0) as u64);
    c.insert("comparisons".into(), compared.len() as u64);
    c.insert("documents_at_comparison_bound".into(), capped);
    // Invariant (b) of the kept set holds among the pairs compared: those
    // the bound let through.
    c.insert("candidate_pairs_left_uncompared".into(), uncompared);
    c.insert("comparisons_over_budget".into(), over_budget);
    c.insert("rejected_by_length".into(), outcome_counts[Outcome::LengthBound as usize]);
    c.insert("rejected_by_characters".into(), outcome_counts[Outcome::CharBound as usize]);
    // LCS computations begun, and of those the ones a bound stopped
    // before the end.
    let stopped_early = outcome_counts[Outcome::LcsStoppedEarly as usize];
    c.insert("lcs_computed".into(), outcome_counts[Outcome::Lcs as usize] + stopped_early);
    c.insert("lcs_stopped_early".into(), stopped_early);
    c.insert("identical_texts".into(), outcome_counts[Outcome::Identical as usize]);
    c.insert("verified_pairs".into(), compared.iter().filter(|c| c.similarity.is_some()).count() as u64);
    c.insert("clusters_with_duplicates".into(), clusters_written);
    c.insert("exact_copies_placed".into(), copies_placed);
    // The own comparisons of the methods that include theirs: every
    // candidate pair of this task's documents, each compared once (a pair
    // of another task's documents is not among its rows).
    for (bit, method) in edges.methods.iter().enumerate().filter(|(i, _)| comparing >> i & 1 == 1) {
        let (mut compared_own, mut found) = (0u64, 0u64);
        for &(a, b, _) in own_pairs.iter().filter(|p| p.2 >> bit & 1 == 1) {
            let Ok(k) = compared.binary_search_by_key(&(a, b), |c| (c.a, c.b)) else { continue };
            compared_own += 1;
            found += compared[k].similarity.is_some() as u64;
        }
        c.insert(format!("{method}_comparisons"), compared_own);
        c.insert(format!("{method}_found_pairs"), found);
    }
    Ok(report)
}

/// The components task `shard` places: all of them for a whole run; for
/// task I of N, those [`assign_to_tasks`] gives it by their estimated cost,
/// so that N tasks get about equal work even when a few components (a
/// template's pages, or a handful of very long pages) hold most of it.
///
/// The estimate, from what every task can read cheaply and the same way
/// (the candidate edges and `tokens.len`, the kept terms of each page): a
/// comparison costs about the square of the shorter page's length (the LCS
/// scan, where the bounds let it run), so a component costs the sum over
/// its edges of min(len)², plus one per document. A pair of pages of 1.7
/// million characters then weighs what it costs, rather than counting as
/// one of thousands of pairs.
async fn own_components(
    session: &datafusion::prelude::SessionContext,
    shard: crate::tables::shard::Shard,
    pairs: &HashMap<(u64, u64), u64>,
    components: Vec<Vec<u64>>,
) -> Result<Vec<Vec<u64>>> {
    if shard.is_whole() {
        return Ok(components);
    }
    // Each document's component and kept terms (0 until read).
    let mut member: HashMap<u64, (usize, u64)> =
        components.iter().enumerate().flat_map(|(k, c)| c.iter().map(move |&id| (id, (k, 0)))).collect();
    let mut stream = session.sql("SELECT doc_id, len FROM tokens").await?.execute_stream().await?;
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        let (ids, lens) = (tokens::doc_id(&batch)?, tokens::len(&batch)?);
        for r in 0..batch.num_rows() {
            if let Some((_, terms)) = member.get_mut(&ids.value(r)) {
                *terms = u64::from(lens.value(r));
            }
        }
    }
    let mut costs: Vec<u64> = components.iter().map(|c| c.len() as u64).collect();
    for (a, b) in pairs.keys() {
        let ((component, terms_a), (_, terms_b)) = (member[a], member[b]);
        costs[component] += terms_a.min(terms_b).pow(2);
    }
    let owners = assign_to_tasks(&costs, shard.count as usize);
    Ok(components.into_iter().zip(owners).filter(|&(_, task)| task == shard.index as usize).map(|(c, _)| c).collect())
}

/// The task (0..tasks) of each unit of work by its cost: the costliest
/// first, each to the task with the least so far (the smaller index on a
/// tie; equal costs in their given order). Deterministic: every task
/// computes the same assignment from the same costs. The largest task then
/// holds at most the average plus the largest single cost.
fn assign_to_tasks(costs: &[u64], tasks: usize) -> Vec<usize> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut order: Vec<usize> = (0..costs.len()).collect();
    order.sort_by_key(|&k| (Reverse(costs[k]), k));
    let mut loads: BinaryHeap<Reverse<(u64, usize)>> = (0..tasks).map(|t| Reverse((0, t))).collect();
    let mut owner = vec![0; costs.len()];
    for k in order {
        let Reverse((load, task)) = loads.pop().expect("at least one task");
        owner[k] = task;
        loads.push(Reverse((load + costs[k], task)));
    }
    owner
}

/// One row of `clusters` by document id: its cluster (the representative's
/// id), and its similarity to the representative (none for it).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Member {
    cluster: u64,
    doc: u64,
    similarity: Option<f64>,
}

/// The exact copies (`exact_copies`: copy, first) whose first `owned`
/// accepts, as (first, copy) sorted.
async fn load_own_copies(
    session: &datafusion::prelude::SessionContext,
    mut owned: impl FnMut(u64) -> bool,
) -> Result<Vec<(u64, u64)>> {
    let mut copies = Vec::new();
    let mut stream = session.sql("SELECT doc_id, first_doc_id FROM exact_copies").await?.execute_stream().await?;
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        let ids = crate::tables::columns::exact_copies::doc_id(&batch)?;
        let firsts = crate::tables::columns::exact_copies::first_doc_id(&batch)?;
        copies
            .extend((0..batch.num_rows()).filter(|&i| owned(firsts.value(i))).map(|i| (firsts.value(i), ids.value(i))));
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
    use arrow::array::RecordBatch;

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

    /// The costliest units go first, each to the least loaded task: the
    /// loads stay within the largest unit of each other, ties go to the
    /// smaller task, and one task takes everything.
    #[test]
    fn units_go_to_the_least_loaded_task() {
        assert_eq!(assign_to_tasks(&[5, 9, 1, 9, 4], 2), [0, 0, 1, 1, 1]);
        assert_eq!(assign_to_tasks(&[3, 3, 3], 1), [0, 0, 0]);
        assert_eq!(assign_to_tasks(&[], 4), Vec::<usize>::new());
        // One huge unit: it has a task of its own, the rest share the others.
        let owners = assign_to_tasks(&[100, 1, 1, 1, 1, 1, 1], 3);
        assert_eq!(owners[0], 0);
        assert!(owners[1..].iter().all(|&t| t != 0));
        let mut state = 7u64;
        let costs: Vec<u64> = (0..500).map(|_| crate::methods::splitmix64(&mut state) % 1000).collect();
        let owners = assign_to_tasks(&costs, 4);
        let mut loads = [0u64; 4];
        costs.iter().zip(&owners).for_each(|(c, &t)| loads[t] += c);
        let (min, max) = (loads.iter().min().unwrap(), loads.iter().max().unwrap());
        assert!(max - min <= *costs.iter().max().unwrap(), "{loads:?}");
    }

    /// The keep order of `jobs/keep_order.sql` under two rules: the copy at
    /// its canonical URL first, or the earliest crawl date (unknown dates
    /// last), then the longest text, then the smallest doc_id.
    #[test]
    fn keep_order_follows_the_keep_rule() {
        use crate::verify::settings::{DedupConfig, KeepRule};
        use arrow::array::{ArrayRef, StringArray, UInt16Array, UInt64Array};
        use std::sync::Arc;
        let ids = [1u64, 2, 3, 4, 5];
        let urls = ["http://t/a?utm_source=x", "http://t/a", "http://t/b", "http://t/c", "http://t/d"];
        let canonical = ["http://t/a", "http://t/a", "http://t/b", "http://t/c", "http://t/d"];
        let dates = [Some("2024-01-01"), Some("2024-03-01"), Some("2024-01-01"), None, Some("2024-01-01")];
        let texts = ["longer one", "x", "longer two", "the longest text", "short"];
        let documents = RecordBatch::try_from_iter([
            ("doc_id", Arc::new(UInt64Array::from(ids.to_vec())) as ArrayRef),
            ("url", Arc::new(StringArray::from(urls.to_vec()))),
            ("canonical_url", Arc::new(StringArray::from(canonical.to_vec()))),
            ("crawl_date", Arc::new(StringArray::from(dates.to_vec()))),
            ("http_status", Arc::new(UInt16Array::from(vec![200u16; 5]))),
            ("text", Arc::new(StringArray::from(texts.to_vec()))),
        ])
        .unwrap();
        let order = |keep: KeepRule| -> Vec<u64> {
            let session = datafusion::prelude::SessionContext::new();
            session.register_batch("documents", documents.clone()).unwrap();
            register_doc_ids(&session, "own_docs", ids.to_vec()).unwrap();
            let dedup = DedupConfig { keep, ..DedupConfig::default() };
            let sql = substitute(include_str!("../../jobs/keep_order.sql"), &dedup.sql_params());
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let batches = runtime.block_on(async { session.sql(&sql).await.unwrap().collect().await.unwrap() });
            let mut ranked: Vec<(u64, u64)> = batches
                .iter()
                .flat_map(|b| {
                    let ids = documents::doc_id(b).unwrap().clone();
                    let ranks = crate::tables::column::<UInt64Array>(b, "keep_rank").unwrap().clone();
                    (0..b.num_rows()).map(move |i| (ranks.value(i), ids.value(i)))
                })
                .collect();
            ranked.sort_unstable();
            ranked.into_iter().map(|(_, id)| id).collect()
        };
        // 1 and 3 tie on date and length: the smaller id first.
        assert_eq!(order(KeepRule::EarliestCrawl), [1, 3, 5, 2, 4]);
        // The utm copy 1 goes last, behind its canonical copy 2, though
        // crawled earlier.
        assert_eq!(order(KeepRule::CanonicalUrl), [3, 5, 2, 4, 1]);
    }
}

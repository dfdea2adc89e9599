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
//! 3. Each comparison is [`crate::verification::compare`]: cheap bounds
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
//! cluster of two or more documents.
//!
//! A map stage: task I of N (`--shard I/N`) takes the components whose
//! smallest doc_id is I mod N, and reads the texts of their documents only.
//!
//! Those texts are written to a file on local disk ([`crate::spilled_docs`])
//! and read back when a document is placed or compared with, through a
//! cache of fixed size per component (the representatives come back for
//! every document they place): a template's component can hold most of
//! the crawl, and memory no longer grows with its texts, only with its
//! number of documents (an id, a url and a rank each).

use anyhow::Result;
use futures::StreamExt;
use rayon::prelude::*;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::config::{Config, SimilarityAlgorithm};
use crate::runner::{RunContext, Stage, StageReport};
use crate::sql::substitute;
use crate::table::TableOutput;
use crate::tables::columns::{clusters, documents, duplicates, failed_pairs};
use crate::union_find::UnionFind;
use crate::verification::{
    compare, register_doc_ids, spill_verification_texts, spilled_verification_text, CandidateEdges, Doc, Outcome,
};

/// The verify stage.
pub struct Verify;

impl Stage for Verify {
    fn name(&self) -> &'static str {
        "verify"
    }
    fn inputs(&self) -> Vec<&'static str> {
        vec!["candidates", "documents", "tokens"]
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

/// One comparison made: indices into the component's documents (the
/// document placed, and a representative or, for the own pair of a method
/// that includes its comparison, the other document), the methods whose
/// edges led to it, the similarity (None below threshold).
struct Comparison {
    doc: usize,
    other: usize,
    methods: u64,
    similarity: Option<f64>,
    outcome: Outcome,
}

/// What one component gives: its comparisons, and for every document the
/// index of its representative and its similarity to it.
struct Placed {
    comparisons: Vec<Comparison>,
    representative: Vec<usize>,
    similarity: Vec<Option<f64>>,
    /// Documents that had more to compare than the bound allowed.
    capped: u64,
}

/// How [`place`] compares: the verification rule and the bound on
/// comparisons per document.
#[derive(Clone, Copy)]
struct Rule {
    threshold: f64,
    algorithm: SimilarityAlgorithm,
    /// The methods that include their comparison (a11), as a mask.
    comparing: u64,
    /// `verify.max_comparisons_per_document`.
    max_comparisons: usize,
}

/// The task's documents as verify holds them in memory, by dense index:
/// their position in `ids`, ascending doc_id, so that ordering pairs of
/// indices orders them by doc_id. What the rows and the keep order need;
/// the texts stay on disk until compared.
///
/// Why arrays and not a map of structs: this is held for every document of
/// the task, and it is what grows with the crawl. At 8 copies of the
/// Javadoc crawl (199 k documents, 1.2 M candidate pairs, `--memory-limit
/// 2G`) `verify` peaked at 564 MB with maps of documents, edges, adjacency
/// lists and verdicts, and at 451 MB with these arrays (the million-page
/// run's `verify` peaked at 3.0 GB with the maps).
struct Members {
    /// The task's doc_ids, ascending.
    ids: Vec<u64>,
    /// Each one's place in the keep order (`[dedup] keep`), [`ABSENT`] for a
    /// document with no `documents` row (never placed).
    keep_rank: Vec<u64>,
    /// The urls, one after the other; `url_span[i]` is (start, length).
    urls: String,
    url_span: Vec<(usize, usize)>,
}

/// The keep rank of a document missing from `documents`.
const ABSENT: u64 = u64::MAX;

impl Members {
    /// The dense index of `doc_id`, if it is one of the task's.
    fn index(&self, doc_id: u64) -> Option<u32> {
        self.ids.binary_search(&doc_id).ok().map(|i| i as u32)
    }

    /// Whether document `i` has a `documents` row (a keep rank).
    fn is_present(&self, i: u32) -> bool {
        self.keep_rank[i as usize] != ABSENT
    }

    /// The url of document `i`.
    fn url(&self, i: u32) -> &str {
        let (start, len) = self.url_span[i as usize];
        &self.urls[start..start + len]
    }
}

/// The candidate edges between the task's documents, by dense index, in
/// compressed rows: document i's neighbours are `to[start[i]..start[i + 1]]`,
/// with the masks of the methods that proposed each in `mask`.
struct Adjacency {
    start: Vec<usize>,
    to: Vec<u32>,
    mask: Vec<u64>,
}

impl Adjacency {
    /// From the pairs (a, b, mask) between present documents, each once.
    fn new(n: usize, pairs: &[(u32, u32, u64)]) -> Adjacency {
        let mut start = vec![0usize; n + 1];
        for &(a, b, _) in pairs {
            start[a as usize + 1] += 1;
            start[b as usize + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut next = start.clone();
        let (mut to, mut mask) = (vec![0u32; start[n]], vec![0u64; start[n]]);
        for &(a, b, m) in pairs {
            for (from, other) in [(a, b), (b, a)] {
                let k = &mut next[from as usize];
                (to[*k], mask[*k]) = (other, m);
                *k += 1;
            }
        }
        Adjacency { start, to, mask }
    }

    /// Document i's neighbours and their masks.
    fn of(&self, i: u32) -> impl Iterator<Item = (u32, u64)> + '_ {
        let range = self.start[i as usize]..self.start[i as usize + 1];
        self.to[range.clone()].iter().copied().zip(self.mask[range].iter().copied())
    }
}

/// The most documents (text and histogram) one component's placement holds
/// loaded at once. A document is compared with at most
/// `max_comparisons_per_document` representatives and partners besides its
/// own pairs (at most `max_edges_per_document` per method); the
/// representatives of a template's big clusters are compared with every
/// document placed and stay, the documents met once go. Fixed bounds, not a
/// share of the component: memory stays the same whatever the size of the
/// component or of the crawl. On the Javadoc crawl, 1,024 documents read
/// 1.3 texts per document placed, 256 read 2.3.
const CACHED_DOCS: usize = 1024;

/// The most characters of text among the documents held: pages of several
/// megabytes are not rare (up to 3.6 MB on the Javadoc crawl, 5 kB on
/// average), and [`CACHED_DOCS`] of them would take gigabytes.
const CACHED_CHARS: usize = 16 << 20;

/// The loaded documents of one component, by index in keep order; `load`
/// reads one from disk. Beyond [`CACHED_DOCS`] documents or
/// [`CACHED_CHARS`] characters, the least recently used ones are dropped.
struct DocCache<L> {
    load: L,
    /// Index → the document and when it was last asked for.
    docs: HashMap<usize, (Arc<Doc>, u64)>,
    /// The characters of the documents held.
    chars: usize,
    clock: u64,
}

impl<L: Fn(usize) -> Result<Doc> + Sync> DocCache<L> {
    fn new(load: L) -> Self {
        DocCache { load, docs: HashMap::new(), chars: 0, clock: 0 }
    }

    /// Document `i`.
    fn one(&mut self, i: usize) -> Result<Arc<Doc>> {
        if let Some(doc) = self.held(i) {
            return Ok(doc);
        }
        let doc = Arc::new((self.load)(i)?);
        self.keep(i, doc.clone());
        Ok(doc)
    }

    /// The documents `wanted`, in its order; those not held are loaded in
    /// parallel (a giant component's partners are mostly met once).
    fn get(&mut self, wanted: &[usize]) -> Result<Vec<Arc<Doc>>> {
        let mut missing: Vec<usize> = wanted.iter().copied().filter(|&j| self.held(j).is_none()).collect();
        missing.sort_unstable();
        missing.dedup();
        let load = &self.load;
        let loaded: Vec<Arc<Doc>> = missing.par_iter().map(|&j| load(j).map(Arc::new)).collect::<Result<_>>()?;
        let docs = wanted
            .iter()
            .map(|j| match missing.binary_search(j) {
                Ok(k) => loaded[k].clone(),
                Err(_) => self.docs[j].0.clone(),
            })
            .collect();
        for (j, doc) in missing.into_iter().zip(loaded) {
            self.keep(j, doc);
        }
        Ok(docs)
    }

    /// Document `i` if held, now the most recently used.
    fn held(&mut self, i: usize) -> Option<Arc<Doc>> {
        self.clock += 1;
        let (doc, used) = self.docs.get_mut(&i)?;
        *used = self.clock;
        Some(doc.clone())
    }

    /// Holds document `i`, dropping the least recently used ones beyond
    /// the bounds (a document beyond them alone is not held).
    fn keep(&mut self, i: usize, doc: Arc<Doc>) {
        self.clock += 1;
        self.chars += doc.chars();
        self.docs.insert(i, (doc, self.clock));
        while self.docs.len() > CACHED_DOCS || self.chars > CACHED_CHARS {
            let Some(oldest) = self.docs.iter().min_by_key(|(_, (_, used))| *used).map(|(&k, _)| k) else {
                break;
            };
            if let Some((dropped, _)) = self.docs.remove(&oldest) {
                self.chars -= dropped.chars();
            }
        }
    }
}

/// What a document is compared with while it is placed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A representative its edges reach: the comparisons that place it.
    Representative,
    /// A pair of a method that includes its comparison (a11), compared in
    /// its own right; never moves a document.
    OwnPair,
    /// A proposed partner outside the cluster the document joins: compared
    /// directly, so that a proposed pair that verifies is in the result;
    /// never moves a document (a member must verify against its
    /// representative: no chaining).
    Partner,
}

/// Builds the clusters of one component. Its documents are in keep order;
/// `edges[i]` lists (j, methods) for every edge of document i, and
/// `load(i)` reads document i (each is read when it is placed or compared
/// with, unless [`DocCache`] still holds it).
///
/// Document i is compared with the documents placed before it that its
/// edges lead to, at most `rule.max_comparisons` of them besides the own
/// pairs of step 2, which are always compared:
/// 1. the representatives of those documents, most methods first (it joins
///    the most similar one at or above the threshold);
/// 2. the own pairs of the methods that include their comparison, not
///    already compared as representatives;
/// 3. every partner that is not in the cluster it joins (its
///    representative failed in step 1, or lost to a more similar one) and
///    was not compared above: compared directly.
///
/// Every pair is compared once (when its later document is placed), the
/// later document as the module's first string.
fn place(edges: &[Vec<(usize, u64)>], load: impl Fn(usize) -> Result<Doc> + Sync, rule: Rule) -> Result<Placed> {
    let n = edges.len();
    let mut cache = DocCache::new(load);
    let mut representative: Vec<usize> = (0..n).collect();
    let mut similarity: Vec<Option<f64>> = vec![None; n];
    let mut comparisons = Vec::new();
    let mut capped = 0u64;
    // Most methods first, then the earlier document: deterministic, and the
    // strongest proposals survive the bound.
    let by_strength = |list: &mut Vec<(usize, u64)>| list.sort_by_key(|&(j, m)| (std::cmp::Reverse(m.count_ones()), j));
    for i in 0..n {
        let doc = cache.one(i)?;
        let earlier: Vec<(usize, u64)> = edges[i].iter().filter(|&&(j, _)| j < i).copied().collect();
        let mut reached: BTreeMap<usize, u64> = BTreeMap::new();
        for &(j, methods) in &earlier {
            *reached.entry(representative[j]).or_default() |= methods;
        }
        let mut reps: Vec<(usize, u64)> = reached.iter().map(|(&r, &m)| (r, m)).collect();
        by_strength(&mut reps);
        // The bound cuts representatives and partners; a11's own pairs are
        // its result (the method includes its comparison), so they are all
        // compared (those not compared as representatives), and they are
        // bounded by the candidates stage's edges.
        let mut cut = reps.len() > rule.max_comparisons;
        reps.truncate(rule.max_comparisons);
        let mut own_pairs: Vec<(usize, u64)> = earlier
            .iter()
            .filter(|&&(j, methods)| methods & rule.comparing != 0 && !reps.iter().any(|&(r, _)| r == j))
            .copied()
            .collect();
        by_strength(&mut own_pairs);
        let mut planned: Vec<(usize, u64, Role)> = reps.iter().map(|&(r, m)| (r, m, Role::Representative)).collect();
        planned.extend(own_pairs.iter().map(|&(j, m)| (j, m, Role::OwnPair)));
        let mut results = compare_all(&doc, &mut cache, &planned, rule)?;

        // The representative it joins: the most similar at or above the
        // threshold; ties go to the earlier one.
        let mut best: Option<(usize, f64)> = None;
        for (&(other, _, role), (sim, _)) in planned.iter().zip(&results) {
            if let Some(s) = sim.filter(|_| role == Role::Representative) {
                if best.is_none_or(|(b, bs)| s > bs || (s == bs && other < b)) {
                    best = Some((other, s));
                }
            }
        }
        let joined = best.map_or(i, |(r, _)| r);

        // Partners in another cluster than the one it joins (their
        // representative failed, or lost to a more similar one), not
        // compared above: compared directly.
        let compared: Vec<usize> = planned.iter().map(|p| p.0).collect();
        let mut partners: Vec<(usize, u64)> =
            earlier.iter().filter(|&&(j, _)| representative[j] != joined && !compared.contains(&j)).copied().collect();
        by_strength(&mut partners);
        let room = rule.max_comparisons.saturating_sub(planned.len());
        cut |= partners.len() > room;
        capped += u64::from(cut);
        partners.truncate(room);
        let direct: Vec<(usize, u64, Role)> = partners.iter().map(|&(j, m)| (j, m, Role::Partner)).collect();
        results.extend(compare_all(&doc, &mut cache, &direct, rule)?);
        planned.extend(direct);

        for (&(other, methods, _), (sim, outcome)) in planned.iter().zip(results) {
            comparisons.push(Comparison { doc: i, other, methods, similarity: sim, outcome });
        }
        if let Some((r, s)) = best {
            representative[i] = r;
            similarity[i] = Some(s);
        }
    }
    Ok(Placed { comparisons, representative, similarity, capped })
}

/// Compares document `doc` with each planned document, read through
/// `cache`. The comparisons of one document are independent: in parallel,
/// so that one giant component (a site template) still uses every core.
fn compare_all<L: Fn(usize) -> Result<Doc> + Sync>(
    doc: &Doc,
    cache: &mut DocCache<L>,
    planned: &[(usize, u64, Role)],
    rule: Rule,
) -> Result<Vec<(Option<f64>, Outcome)>> {
    let others = cache.get(&planned.iter().map(|&(other, _, _)| other).collect::<Vec<_>>())?;
    Ok(others.par_iter().map(|other| compare(doc, other, rule.threshold, rule.algorithm)).collect())
}

/// One comparison made, by dense index ([`Members`]; a < b, so rows sort
/// by doc_id): a `duplicates` row when `similarity` is set, a
/// `failed_pairs` row otherwise.
struct Compared {
    a: u32,
    b: u32,
    /// The methods whose edges led to the comparison.
    methods: u64,
    similarity: Option<f64>,
}

/// One `clusters` row, by dense index.
struct ClusterRow {
    doc: u32,
    representative: u32,
    size: u64,
    similarity: Option<f64>,
}

/// What one component gives, by dense index: its comparisons, its
/// clusters' members, and counts for the manifest.
#[derive(Default)]
struct ComponentResult {
    compared: Vec<Compared>,
    clustered: Vec<ClusterRow>,
    outcomes: [u64; 3],
    capped: u64,
}

async fn run(ctx: &RunContext) -> Result<StageReport> {
    let session = ctx.session().await?;
    let mut edges = CandidateEdges::load(&session).await?;
    let pairs = std::mem::take(&mut edges.pairs);
    let mut uf = UnionFind::new();
    for &(a, b) in pairs.keys() {
        uf.union(a, b);
    }
    let components: Vec<Vec<u64>> = uf.components().into_iter().filter(|c| ctx.shard.owns_doc(c[0])).collect();
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
        spill_verification_texts(&session, |id| members.index(id).is_some(), ctx.config.verify.text, &ctx.out).await?;
    let sql = substitute(include_str!("../../jobs/keep_order.sql"), &[("keep_order", ctx.config.dedup.keep_order())]);
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
    let present = |id: u64| members.index(id).filter(|&i| members.is_present(i));
    own_pairs.retain(|&(a, b, _)| members.is_present(a) && members.is_present(b));
    let adjacency = Adjacency::new(n, &own_pairs);

    let comparing = edges.comparing_mask();
    let rule = Rule {
        threshold: ctx.config.verify.threshold,
        algorithm: ctx.config.verify.algorithm,
        comparing,
        max_comparisons: ctx.config.verify.max_comparisons_per_document,
    };
    let progress = crate::progress::counter(ctx.progress, n as u64, "verify", "docs");
    let results: Vec<ComponentResult> = components
        .par_iter()
        .map(|component| {
            let mut local: Vec<u32> = component.iter().filter_map(|&id| present(id)).collect();
            local.sort_by_key(|&i| members.keep_rank[i as usize]);
            let position: HashMap<u32, usize> = local.iter().enumerate().map(|(k, &i)| (i, k)).collect();
            let local_edges: Vec<Vec<(usize, u64)>> = local
                .iter()
                .map(|&i| {
                    let mut e: Vec<(usize, u64)> =
                        adjacency.of(i).filter_map(|(other, mask)| position.get(&other).map(|&j| (j, mask))).collect();
                    e.sort_unstable();
                    e
                })
                .collect();
            drop(position);
            // A missing text (no `tokens` row) is an empty one. The url
            // is not needed to compare.
            let load = |j: usize| {
                let id = members.ids[local[j] as usize];
                Ok(Doc::new(id, String::new(), spilled_verification_text(&texts, id)?))
            };
            let placed = place(&local_edges, load, rule)?;
            progress.inc(local.len() as u64);
            Ok(component_result(&local, placed))
        })
        .collect::<Result<_>>()?;
    progress.finish_and_clear();
    drop(texts);
    drop(adjacency);

    let mut report = StageReport::default();
    let mut outcome_counts = [0u64; 3];
    let mut capped = 0u64;
    let (mut compared, mut clustered) = (Vec::new(), Vec::new());
    for r in results {
        outcome_counts.iter_mut().zip(r.outcomes).for_each(|(total, k)| *total += k);
        capped += r.capped;
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

    // clusters: every member of a cluster of two or more, by (cluster, rep first, doc).
    clustered.sort_unstable_by_key(|r| (r.representative, r.doc != r.representative, r.doc));
    let mut writer = TableOutput::<clusters::Rows>::for_shard(&ctx.out, ctx.shard)?;
    for r in &clustered {
        writer.push(|row| {
            row.doc_id.append_value(members.ids[r.doc as usize]);
            row.cluster_id.append_value(members.ids[r.representative as usize]);
            row.cluster_size.append_value(r.size);
            row.is_representative.append_value(r.doc == r.representative);
            row.similarity_to_representative.append_option(r.similarity);
        })?;
    }
    report.rows.insert(clusters::TABLE.into(), writer.commit()?);

    let c = &mut report.counters;
    c.insert("candidate_edges".into(), edges_count);
    c.insert("components".into(), components.len() as u64);
    c.insert("largest_component".into(), components.iter().map(Vec::len).max().unwrap_or(0) as u64);
    c.insert("comparisons".into(), compared.len() as u64);
    c.insert("documents_at_comparison_bound".into(), capped);
    c.insert("rejected_by_length".into(), outcome_counts[Outcome::LengthBound as usize]);
    c.insert("rejected_by_characters".into(), outcome_counts[Outcome::CharBound as usize]);
    c.insert("lcs_computed".into(), outcome_counts[Outcome::Lcs as usize]);
    c.insert("verified_pairs".into(), compared.iter().filter(|c| c.similarity.is_some()).count() as u64);
    c.insert("clusters_with_duplicates".into(), clustered.iter().filter(|r| r.doc == r.representative).count() as u64);
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

/// A placed component's rows by dense index (`local[k]` is the index of
/// its k-th document in keep order).
fn component_result(local: &[u32], placed: Placed) -> ComponentResult {
    let mut result = ComponentResult { capped: placed.capped, ..ComponentResult::default() };
    for c in &placed.comparisons {
        let (x, y) = (local[c.doc], local[c.other]);
        let (a, b) = (x.min(y), x.max(y));
        result.compared.push(Compared { a, b, methods: c.methods, similarity: c.similarity });
        result.outcomes[c.outcome as usize] += 1;
    }
    let mut sizes = vec![0u64; local.len()];
    for &r in &placed.representative {
        sizes[r] += 1;
    }
    for (k, &i) in local.iter().enumerate() {
        let r = placed.representative[k];
        if sizes[r] > 1 {
            result.clustered.push(ClusterRow {
                doc: i,
                representative: local[r],
                size: sizes[r],
                similarity: placed.similarity[k],
            });
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::RecordBatch;

    fn rule(comparing: u64, threshold: f64, algorithm: SimilarityAlgorithm) -> Rule {
        Rule { threshold, algorithm, comparing, max_comparisons: 64 }
    }

    fn doc(id: u64, text: &str) -> Doc {
        Doc::new(id, format!("http://t/{id}"), text.into())
    }

    /// Reads document i of `texts` as doc_id i + 1.
    fn load<'a>(texts: &'a [&str]) -> impl Fn(usize) -> Result<Doc> + Sync + 'a {
        move |i| Ok(doc(i as u64 + 1, texts[i]))
    }

    /// The keep order of `jobs/keep_order.sql` under two rules: the copy at
    /// its canonical URL first, or the earliest crawl date (unknown dates
    /// last), then the longest text, then the smallest doc_id.
    #[test]
    fn keep_order_follows_the_keep_rule() {
        use crate::config::{DedupConfig, KeepRule};
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
            let sql = substitute(include_str!("../../jobs/keep_order.sql"), &[("keep_order", dedup.keep_order())]);
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

    /// A chain of documents each similar to its neighbours but not to
    /// documents two steps away: a union of verified pairs would make one
    /// cluster; members must verify against the representative, so the
    /// chain splits, and every comparison is one a document's edges led to.
    #[test]
    fn chained_similarity_does_not_chain_clusters() {
        let texts = ["aaaaaaaaaa", "aaaaaaaabb", "aaaaaabbbb", "aaaabbbbbb"];
        // Edges: 0-1, 1-2, 2-3 (all methods bit 0).
        let edges = vec![vec![(1, 1)], vec![(0, 1), (2, 1)], vec![(1, 1), (3, 1)], vec![(2, 1)]];
        let placed = place(&edges, load(&texts), rule(0, 0.8, SimilarityAlgorithm::Exact)).unwrap();
        // 1 joins 0 (0.8); 2 reaches rep 0 through 1: 0.6, so it starts its
        // own cluster; 3 reaches rep 2: 0.8, joins it.
        assert_eq!(placed.representative, [0, 0, 2, 2]);
        assert_eq!(placed.similarity, [None, Some(0.8), None, Some(0.8)]);
        // 2 failed against 1's representative, so it is compared with its
        // proposed partner 1 itself: that pair verifies (LCS "aaaaaabb",
        // 0.8) and is in the result, without moving 2 into 0's cluster.
        let compared: Vec<(usize, usize, Option<f64>)> =
            placed.comparisons.iter().map(|c| (c.doc, c.other, c.similarity)).collect();
        assert_eq!(compared, [(1, 0, Some(0.8)), (2, 0, None), (2, 1, Some(0.8)), (3, 2, Some(0.8))]);
    }

    /// A partner whose representative verifies but loses to a more similar
    /// representative is compared directly too; the bound on comparisons
    /// per document cuts the weakest proposals first and is counted.
    #[test]
    fn partners_outside_the_joined_cluster_are_compared_within_the_bound() {
        // 0 and 1 are representatives (their texts differ); 2 is in 0's
        // cluster; 3 is proposed with 2 (bit 0) and with 1 (bits 0 and 1).
        let texts = ["aaaaaaaaaa", "bbbbbbbbbb", "aaaaaaaaab", "bbbbbbbbab"];
        let edges = vec![vec![(2, 1)], vec![(3, 3)], vec![(0, 1), (3, 1)], vec![(1, 3), (2, 1)]];
        let placed = place(&edges, load(&texts), rule(0, 0.05, SimilarityAlgorithm::Exact)).unwrap();
        assert_eq!(placed.representative, [0, 1, 0, 1]);
        // 3 reaches 1 (0.9, two methods) and 0 through 2 (0.1, verified
        // too at 0.05): it joins 1, and its partner 2 is compared itself
        // (LCS "ab": 0.2, a verified pair across two clusters).
        let compared: Vec<(usize, usize)> = placed.comparisons.iter().map(|c| (c.doc, c.other)).collect();
        assert_eq!(compared, [(2, 0), (3, 1), (3, 0), (3, 2)]);
        assert_eq!(placed.comparisons[3].similarity, Some(0.2));
        assert_eq!(placed.capped, 0);
        // With room for two comparisons, the partner is left out.
        let bounded =
            place(&edges, load(&texts), Rule { max_comparisons: 2, ..rule(0, 0.05, SimilarityAlgorithm::Exact) })
                .unwrap();
        let compared: Vec<(usize, usize)> = bounded.comparisons.iter().map(|c| (c.doc, c.other)).collect();
        assert_eq!(compared, [(2, 0), (3, 1), (3, 0)]);
        assert_eq!(bounded.capped, 1);
        assert_eq!(bounded.representative, placed.representative);
    }

    /// The pairs of a method that includes its comparison (bit 1, a11) are
    /// all compared, each once, and do not move a document; the other
    /// method's (bit 0) only lead to representatives.
    #[test]
    fn a_comparing_methods_pairs_are_each_compared_once() {
        let texts = ["aaaaaaaaaa", "aaaaaaaabb", "aaaaaabbbb", "aaaabbbbbb"];
        // Edges: 0-1 (bit 0), 1-2 (both), 2-3 (bit 0), 0-3 (bit 1).
        let edges = vec![vec![(1, 1), (3, 2)], vec![(0, 1), (2, 3)], vec![(1, 3), (3, 1)], vec![(0, 2), (2, 1)]];
        let placed = place(&edges, load(&texts), rule(2, 0.8, SimilarityAlgorithm::Exact)).unwrap();
        // 1 reaches rep 0: 16/20 = 0.8, joins. 2 reaches rep 0 through 1:
        // LCS "aaaaaa" = 6, 12/20 = 0.6; its a11 pair 1-2 is not a
        // representative's, so it is compared besides: LCS "aaaaaabb" = 8,
        // 0.8, passes, but 2 still starts its own cluster. 3 reaches rep 0
        // (its a11 pair 0-3: LCS "aaaa", 0.4) and rep 2 (0.8), joins 2; its
        // a11 pair is the comparison with rep 0, not made twice.
        assert_eq!(placed.representative, [0, 0, 2, 2]);
        let compared: Vec<(usize, usize, u64, Option<f64>)> =
            placed.comparisons.iter().map(|c| (c.doc, c.other, c.methods, c.similarity)).collect();
        assert_eq!(
            compared,
            [(1, 0, 1, Some(0.8)), (2, 0, 3, None), (2, 1, 3, Some(0.8)), (3, 0, 2, None), (3, 2, 1, Some(0.8))]
        );
        // Without the comparing mask, 1-2 is compared all the same: 2
        // failed against 1's representative, so 1 is a partner to compare.
        // Under a bound of one comparison per document, a11's own pairs are
        // all compared still (evaluate counts on it); 3 keeps only its
        // strongest representative, 0, and cannot reach 2.
        let bounded =
            place(&edges, load(&texts), Rule { max_comparisons: 1, ..rule(2, 0.8, SimilarityAlgorithm::Exact) })
                .unwrap();
        let compared: Vec<(usize, usize)> = bounded.comparisons.iter().map(|c| (c.doc, c.other)).collect();
        assert_eq!(compared, [(1, 0), (2, 0), (2, 1), (3, 0)]);
        assert_eq!(bounded.capped, 1);
        let plain = place(&edges, load(&texts), rule(0, 0.8, SimilarityAlgorithm::Exact)).unwrap();
        let compared: Vec<(usize, usize)> = plain.comparisons.iter().map(|c| (c.doc, c.other)).collect();
        assert_eq!(compared, [(1, 0), (2, 0), (2, 1), (3, 0), (3, 2)]);
    }

    /// The cache holds at most [`CACHED_DOCS`] documents and
    /// [`CACHED_CHARS`] characters whatever the component's size, keeps the
    /// one asked for again and again (a big cluster's representative), and
    /// reads the others again once dropped.
    #[test]
    fn the_cache_is_bounded_and_keeps_the_documents_in_use() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let reads = AtomicUsize::new(0);
        let big = "x".repeat(CACHED_CHARS / 8);
        let mut cache = DocCache::new(|i: usize| {
            reads.fetch_add(1, Ordering::Relaxed);
            // One document in a hundred is big: the characters bind first.
            Ok(doc(i as u64, if i % 100 == 1 { &big } else { "text" }))
        });
        assert_eq!(cache.one(0).unwrap().doc_id, 0);
        let n = 3 * CACHED_DOCS;
        for k in 1..n {
            let got: Vec<u64> = cache.get(&[0, k, k]).unwrap().iter().map(|d| d.doc_id).collect();
            assert_eq!(got, [0, k as u64, k as u64]);
            assert!(cache.docs.len() <= CACHED_DOCS && cache.chars <= CACHED_CHARS);
            assert_eq!(cache.chars, cache.docs.values().map(|(d, _)| d.chars()).sum::<usize>());
        }
        assert_eq!(reads.load(Ordering::Relaxed), n);
        assert_eq!(cache.one(1).unwrap().doc_id, 1);
        assert_eq!(cache.one(0).unwrap().doc_id, 0);
        assert_eq!(reads.load(Ordering::Relaxed), n + 1);
    }

    /// A document that cannot be read fails the placement with the
    /// reader's error, naming what it read.
    #[test]
    fn a_read_error_fails_the_placement() {
        let edges = vec![vec![(1, 1)], vec![(0, 1)]];
        let load = |i: usize| {
            anyhow::ensure!(i == 0, "cannot read /spill/verify-texts-0");
            Ok(doc(1, "aaaa"))
        };
        let err = place(&edges, load, rule(0, 0.8, SimilarityAlgorithm::Exact)).err().unwrap();
        assert!(format!("{err:#}").contains("/spill/verify-texts-0"), "{err:#}");
    }

    /// A document reaching two clusters joins the one it is more similar to.
    #[test]
    fn joins_the_most_similar_representative() {
        let texts = ["aaaaaaaaaa", "bbbbbbbbbb", "bbbbbbbbba"];
        let edges = vec![vec![(2, 1)], vec![(2, 2)], vec![(0, 1), (1, 2)]];
        let placed = place(&edges, load(&texts), rule(0, 0.05, SimilarityAlgorithm::Exact)).unwrap();
        assert_eq!(placed.representative, [0, 1, 1]);
        assert_eq!(placed.comparisons.len(), 2);
        assert_eq!(placed.comparisons[1].methods, 2);
    }

    /// The algorithm decides: on a long pair with many edits (33,000
    /// chars each, exact similarity 0.809, the Perl module's 0.782) the
    /// document joins the representative's cluster with `exact` and starts
    /// its own with `string-similarity`.
    #[test]
    fn the_configured_algorithm_decides_the_clusters() {
        let (a, b) = crate::similarity::string_similarity::tests::long_pairs().swap_remove(0);
        // Placed second, `a` is compared with `b`: the module's (a, b) order.
        let texts = [b.as_str(), a.as_str()];
        let edges = vec![vec![(1, 1)], vec![(0, 1)]];
        let exact = place(&edges, load(&texts), rule(0, 0.8, SimilarityAlgorithm::Exact)).unwrap();
        assert_eq!(exact.representative, [0, 0]);
        assert!((exact.similarity[1].unwrap() - 0.808946).abs() < 1e-6);
        let module = place(&edges, load(&texts), rule(0, 0.8, SimilarityAlgorithm::StringSimilarity)).unwrap();
        assert_eq!(module.representative, [0, 1]);
        assert_eq!(module.similarity, [None, None]);
    }
}

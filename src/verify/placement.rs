//! Cluster placement: the documents of one connected component of the
//! candidate graph, taken in the keep order, each compared with the
//! representatives of the clusters its edges reach and joined to the most
//! similar one that verifies (spec §9; the `verify` stage's module docs
//! say why this costs a small constant per document rather than the pairs
//! of a group). A cluster's first document in that order is its
//! representative: the copy kept.
//!
//! Documents are dense indices in keep order; their texts come from a
//! loader (a spill file on disk in the stage) through a cache of fixed
//! size, so memory does not grow with the component.

use anyhow::Result;
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::verify::compare::{compare_by_lcs, lcs_chars, settled_without_lcs, Doc, Outcome};
use crate::verify::settings::PairRule;

/// One comparison made: indices into the component's documents (the
/// document placed, and a representative or, for the own pair of a method
/// that includes its comparison, the other document), the methods whose
/// edges led to it, the similarity (None below threshold).
pub struct Comparison {
    pub doc: usize,
    pub other: usize,
    pub methods: u64,
    pub similarity: Option<f64>,
    pub outcome: Outcome,
}

/// What one component gives: its comparisons, and for every document the
/// index of its representative and its similarity to it.
pub struct Placed {
    pub comparisons: Vec<Comparison>,
    pub representative: Vec<usize>,
    pub similarity: Vec<Option<f64>>,
    /// Documents that had more to compare than the bound allowed.
    pub capped: u64,
    /// Candidate pairs the bounds left uncompared: an earlier partner in
    /// another cluster than the document's, not compared, or a comparison
    /// beyond the budget of failing comparisons (spec §9, invariant (b)
    /// holds among the pairs the bounds let through).
    pub uncompared: u64,
    /// Of those, the comparisons the budget of failing comparisons left
    /// out (also counted in `uncompared`).
    pub over_budget: u64,
}

/// How [`place`] compares: the verification rule and the bound on
/// comparisons per document.
#[derive(Clone, Copy)]
pub struct Rule {
    /// The rule each comparison applies.
    pub pair: PairRule,
    /// The methods that include their comparison (a11), as a mask.
    pub comparing: u64,
    /// `verify.max_comparisons_per_document`.
    pub max_comparisons: usize,
    /// `verify.failed_comparison_budget`: the characters (|a| + |b| each)
    /// one document's failing LCS comparisons may cover, as a multiple of
    /// its own length; 0 for no such bound.
    pub failed_budget: f64,
}

impl Rule {
    /// The characters document `doc`'s failing LCS comparisons may cover.
    fn budget_of(&self, doc: &Doc) -> usize {
        if self.failed_budget == 0.0 {
            usize::MAX
        } else {
            (self.failed_budget * doc.chars() as f64) as usize
        }
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
    /// When each document held was last asked for → its index: the least
    /// recently used is the first, found without a scan of the cache (a
    /// giant component drops a document at most loads).
    by_use: BTreeMap<u64, usize>,
    /// The characters of the documents held.
    chars: usize,
    clock: u64,
}

impl<L: Fn(usize) -> Result<Doc> + Sync> DocCache<L> {
    fn new(load: L) -> Self {
        DocCache { load, docs: HashMap::new(), by_use: BTreeMap::new(), chars: 0, clock: 0 }
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
        self.by_use.remove(used);
        *used = self.clock;
        self.by_use.insert(self.clock, i);
        Some(doc.clone())
    }

    /// Holds document `i`, dropping the least recently used ones beyond
    /// the bounds (a document beyond them alone is not held).
    fn keep(&mut self, i: usize, doc: Arc<Doc>) {
        self.clock += 1;
        self.chars += doc.chars();
        if let Some((replaced, used)) = self.docs.insert(i, (doc, self.clock)) {
            self.chars -= replaced.chars();
            self.by_use.remove(&used);
        }
        self.by_use.insert(self.clock, i);
        while self.docs.len() > CACHED_DOCS || self.chars > CACHED_CHARS {
            let Some((_, oldest)) = self.by_use.pop_first() else {
                break;
            };
            if let Some((dropped, _)) = self.docs.remove(&oldest) {
                self.chars -= dropped.chars();
            }
        }
    }
}

/// What a document is compared with while it is placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
///
/// The comparisons of steps 1 and 3 that need an LCS also spend a budget:
/// in the order above, one is made only if its characters (|a| + |b|) fit
/// in what the document's failing LCS comparisons have left of
/// `rule.failed_budget` times its own length; a failing one spends them, a
/// passing one nothing. Why: on pages that share a template and a sentence
/// structure but not their words (generated pages, product pages), the
/// methods propose siblings that verification refuses, a long page has
/// more of them as the crawl grows, and each failing LCS of two long pages
/// costs the square of their length. The strongest proposals come first,
/// so a near-duplicate is compared before its page's template siblings.
pub fn place(edges: &[Vec<(usize, u64)>], load: impl Fn(usize) -> Result<Doc> + Sync, rule: Rule) -> Result<Placed> {
    let n = edges.len();
    let mut cache = DocCache::new(load);
    let mut representative: Vec<usize> = (0..n).collect();
    let mut similarity: Vec<Option<f64>> = vec![None; n];
    let mut comparisons = Vec::new();
    let (mut capped, mut uncompared, mut over_budget) = (0u64, 0u64, 0u64);
    // Most methods first, then the earlier document: deterministic, and the
    // strongest proposals survive the bound.
    let by_strength = |list: &mut Vec<(usize, u64)>| list.sort_by_key(|&(j, m)| (std::cmp::Reverse(m.count_ones()), j));
    for i in 0..n {
        let doc = cache.one(i)?;
        let mut budget = rule.budget_of(&doc);
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
        // a11's own pairs spend nothing, whatever role they are compared in
        // (a representative can be one).
        let own = |list: &[(usize, u64, Role)]| -> Vec<bool> {
            list.iter().map(|&(j, _, _)| earlier.iter().any(|&(e, m)| e == j && m & rule.comparing != 0)).collect()
        };
        let mut results = compare_all(&doc, &mut cache, &planned, &own(&planned), rule, &mut budget)?;

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
        uncompared += partners.len().saturating_sub(room) as u64;
        partners.truncate(room);
        let direct: Vec<(usize, u64, Role)> = partners.iter().map(|&(j, m)| (j, m, Role::Partner)).collect();
        results.extend(compare_all(&doc, &mut cache, &direct, &own(&direct), rule, &mut budget)?);
        planned.extend(direct);

        for (&(other, methods, _), (sim, outcome)) in planned.iter().zip(results) {
            if outcome == Outcome::OverBudget {
                over_budget += 1;
                uncompared += 1;
                cut = true;
                continue;
            }
            comparisons.push(Comparison { doc: i, other, methods, similarity: sim, outcome });
        }
        capped += u64::from(cut);
        if let Some((r, s)) = best {
            representative[i] = r;
            similarity[i] = Some(s);
        }
    }
    Ok(Placed { comparisons, representative, similarity, capped, uncompared, over_budget })
}

/// Compares document `doc` with each planned document, read through
/// `cache`, within `budget` (the characters its failing LCS comparisons
/// may still cover; see [`place`]); a comparison beyond it is
/// [`Outcome::OverBudget`]. Those marked in `own` (a11's pairs: its
/// result, which evaluate counts on) are always compared and spend
/// nothing.
///
/// The comparisons of one document run in parallel, so that one giant
/// component (a site template) still uses every core, in rounds that give
/// the budget's sequential rule exactly: a round is the longest run of the
/// next comparisons that all fit even if every one of them fails; after
/// it, the budget is what the ones that failed left.
fn compare_all<L: Fn(usize) -> Result<Doc> + Sync>(
    doc: &Doc,
    cache: &mut DocCache<L>,
    planned: &[(usize, u64, Role)],
    own: &[bool],
    rule: Rule,
    budget: &mut usize,
) -> Result<Vec<(Option<f64>, Outcome)>> {
    let others = cache.get(&planned.iter().map(|&(other, _, _)| other).collect::<Vec<_>>())?;
    let mut results: Vec<Option<(Option<f64>, Outcome)>> =
        others.par_iter().map(|other| settled_without_lcs(doc, other, rule.pair)).collect();
    let open: Vec<usize> = (0..planned.len()).filter(|&k| results[k].is_none()).collect();
    let spends = |k: usize| !own[k];
    let mut next = 0;
    while next < open.len() {
        let (mut end, mut worst) = (next, 0usize);
        while end < open.len() {
            let k = open[end];
            let cost = if spends(k) { lcs_chars(doc, &others[k]) } else { 0 };
            if worst.saturating_add(cost) > *budget {
                break;
            }
            worst += cost;
            end += 1;
        }
        if end == next {
            // Does not fit in what is left, whatever the others did.
            results[open[next]] = Some((None, Outcome::OverBudget));
            next += 1;
            continue;
        }
        let round: Vec<(Option<f64>, Outcome)> =
            open[next..end].par_iter().map(|&k| compare_by_lcs(doc, &others[k], rule.pair)).collect();
        for (&k, result) in open[next..end].iter().zip(round) {
            if result.0.is_none() && spends(k) {
                *budget -= lcs_chars(doc, &others[k]);
            }
            results[k] = Some(result);
        }
        next = end;
    }
    Ok(results.into_iter().map(|r| r.expect("every comparison is settled, made or over budget")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::settings::SimilarityAlgorithm;

    fn rule(comparing: u64, threshold: f64, algorithm: SimilarityAlgorithm) -> Rule {
        let pair = PairRule { threshold, algorithm, text: crate::verify::settings::VerificationText::Visible };
        Rule { pair, comparing, max_comparisons: 64, failed_budget: 0.0 }
    }

    fn doc(id: u64, text: &str) -> Doc {
        Doc::new(id, format!("http://t/{id}"), text.into())
    }

    /// Reads document i of `texts` as doc_id i + 1.
    fn load<'a>(texts: &'a [&str]) -> impl Fn(usize) -> Result<Doc> + Sync + 'a {
        move |i| Ok(doc(i as u64 + 1, texts[i]))
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
        assert_eq!((placed.uncompared, bounded.uncompared), (0, 1));
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

    /// The budget of failing comparisons: a document's failing LCS
    /// comparisons cover at most `failed_budget` times its length; a
    /// passing one costs nothing, and the strongest proposals come first.
    #[test]
    fn failing_comparisons_stop_at_the_document_s_budget() {
        // 3 reaches the representatives 0, 1, 2 (three clusters: no edge
        // between them). 0 and 1 have its characters but fail its LCS (5
        // and 7 of 10: 0.5 and 0.7), 2 passes (9: 0.9).
        let texts = ["bbbbbaaaaa", "bbbaaaaabb", "aaaaabbbba", "aaaaabbbbb"];
        let edges = |strong: usize| {
            let mask = |j: usize| if j == strong { 3 } else { 1 };
            vec![vec![(3, mask(0))], vec![(3, mask(1))], vec![(3, mask(2))], (0..3).map(|j| (j, mask(j))).collect()]
        };
        let with_budget = |budget: f64, strong: usize| {
            let rule = Rule { failed_budget: budget, ..rule(0, 0.8, SimilarityAlgorithm::Exact) };
            place(&edges(strong), load(&texts), rule).unwrap()
        };
        let compared = |p: &Placed| -> Vec<(usize, usize)> { p.comparisons.iter().map(|c| (c.doc, c.other)).collect() };
        // Each comparison covers 20 characters, 3's budget is 10 times its
        // length: at 6, all three; at 4, the two that fail spend it all and
        // 2, which would pass, is left out (3 stays alone).
        let all = with_budget(6.0, 99);
        assert_eq!(compared(&all), [(3, 0), (3, 1), (3, 2)]);
        assert_eq!((all.representative[3], all.over_budget), (2, 0));
        let cut = with_budget(4.0, 99);
        assert_eq!(compared(&cut), [(3, 0), (3, 1)]);
        assert_eq!((cut.representative[3], cut.over_budget, cut.uncompared, cut.capped), (3, 1, 1, 1));
        // Proposed by more methods, 2 comes first and passes, spending
        // nothing; then 0 and 1 fail within the budget.
        let strong = with_budget(4.0, 2);
        assert_eq!(compared(&strong), [(3, 2), (3, 0), (3, 1)]);
        assert_eq!((strong.representative[3], strong.over_budget), (2, 0));
        // A pair of a method that includes its comparison (bit 2: a11) is
        // compared whatever the budget, also as a representative.
        let a11 = Rule { failed_budget: 0.1, ..rule(2, 0.8, SimilarityAlgorithm::Exact) };
        let own = place(&edges(0), load(&texts), a11).unwrap();
        assert_eq!((compared(&own), own.over_budget), (vec![(3, 0)], 2));
        // A comparison settled by the cheap bounds costs nothing: 0 and 1
        // share no character with 3.
        let texts = ["aaaaaaaaaa", "bbbbbbbbbb", "cccccccccd", "cccccccccc"];
        let rule = Rule { failed_budget: 2.0, ..rule(0, 0.8, SimilarityAlgorithm::Exact) };
        let bounded = place(&edges(99), load(&texts), rule).unwrap();
        assert_eq!(compared(&bounded), [(3, 0), (3, 1), (3, 2)]);
        assert_eq!(bounded.representative[3], 2);
    }

    /// The rounds of [`compare_all`] give what comparing one after the
    /// other in order gives, on random plans, roles, texts and budgets.
    #[test]
    fn budget_rounds_give_the_sequential_rule() {
        let mut state = 11u64;
        let mut next = |n: u64| crate::methods::splitmix64(&mut state) % n;
        for _ in 0..300 {
            let n = 1 + next(12) as usize;
            let texts: Vec<String> =
                (0..=n).map(|_| (0..4 + next(12)).map(|_| if next(3) == 0 { 'b' } else { 'a' }).collect()).collect();
            let planned: Vec<(usize, u64, Role)> = (1..=n)
                .map(|j| (j, 1, [Role::Representative, Role::OwnPair, Role::Partner][next(3) as usize]))
                .collect();
            let own: Vec<bool> = planned.iter().map(|p| p.2 == Role::OwnPair || next(5) == 0).collect();
            let pair = PairRule {
                threshold: 0.5 + next(40) as f64 / 100.0,
                algorithm: SimilarityAlgorithm::Exact,
                text: crate::verify::settings::VerificationText::Visible,
            };
            let rule = Rule { pair, comparing: 0, max_comparisons: 64, failed_budget: 0.0 };
            let docs: Vec<Doc> = texts.iter().enumerate().map(|(i, t)| doc(i as u64, t)).collect();
            let start = next(8 * docs[0].chars() as u64 + 1) as usize;
            let mut left = start;
            let expected: Vec<(Option<f64>, Outcome)> = planned
                .iter()
                .zip(&own)
                .map(|(&(j, _, _), &own)| {
                    if let Some(settled) = settled_without_lcs(&docs[0], &docs[j], pair) {
                        return settled;
                    }
                    let cost = if own { 0 } else { lcs_chars(&docs[0], &docs[j]) };
                    if cost > left {
                        return (None, Outcome::OverBudget);
                    }
                    let result = compare_by_lcs(&docs[0], &docs[j], pair);
                    if result.0.is_none() {
                        left -= cost;
                    }
                    result
                })
                .collect();
            let mut cache = DocCache::new(|i: usize| Ok(doc(i as u64, &texts[i])));
            let mut budget = start;
            let got = compare_all(&docs[0], &mut cache, &planned, &own, rule, &mut budget).unwrap();
            assert_eq!(got, expected, "{texts:?} {planned:?}");
            assert_eq!(budget, left);
        }
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
        let (a, b) = crate::verify::similarity::string_similarity::tests::long_pairs().swap_remove(0);
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

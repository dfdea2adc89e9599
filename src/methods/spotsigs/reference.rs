//! The paper's search, the test reference of the keyed search the pipeline
//! runs: documents partitioned by size and a pruned inverted index per
//! partition, which finds every pair with Jaccard ≥ τ without comparing all
//! pairs, but holds every document's multiset in one process.

use super::{multiset_jaccard, Multiset, SpotSigs, EPS};
use crate::methods::{DocPasses, ScoredPair};
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use rayon::prelude::*;

/// Pairs of document indexes (i < j) with their Jaccard.
type IndexPairs = Vec<(usize, usize, f64)>;

/// The partition boundary after `p`: `max(p + 1, floor(p / τ))` (spec §5).
/// Rounding is absorbed by a 1e-9 slack so that, e.g., 20 / (2/3) gives 30.
pub fn next_boundary(p: usize, tau: f64) -> usize {
    (p + 1).max((p as f64 / tau + EPS).floor() as usize)
}

/// Partition boundaries p0 = 1 < p1 < ... covering multiset sizes up to
/// `max_size`: partition k is [p_k, p_{k+1}), and the last boundary is
/// greater than `max_size`. They depend on τ alone. Two multisets whose size
/// ratio is at least τ always fall in the same or adjacent partitions,
/// because `floor((p-1)/τ) < floor(p/τ)` for τ ≤ 1.
pub fn partition_bounds(tau: f64, max_size: usize) -> Vec<usize> {
    let mut bounds = vec![1];
    while *bounds.last().expect("non-empty") <= max_size {
        let p = *bounds.last().expect("non-empty");
        bounds.push(next_boundary(p, tau));
    }
    bounds
}

/// Counters of one SpotSigs search, for logging and for judging how much the
/// pruning saved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SearchStats {
    /// Documents that took part (at least `min_spots` signatures).
    pub docs: usize,
    /// Non-empty partitions.
    pub partitions: usize,
    /// Exact multiset-Jaccard computations (the comparisons made).
    pub comparisons: u64,
    /// Pairs found with Jaccard ≥ τ.
    pub pairs: usize,
}

/// One partition's inverted index: signature fingerprint → postings
/// (document index, count of the signature in it), sorted by count
/// descending, then document ascending.
struct PartitionIndex {
    postings: HashMap<u64, Vec<(u32, u32)>>,
}

impl PartitionIndex {
    fn build(members: &[u32], sets: &[Multiset]) -> PartitionIndex {
        let mut postings: HashMap<u64, Vec<(u32, u32)>> = HashMap::new();
        for &d in members {
            for &(sig, count) in &sets[d as usize] {
                postings.entry(sig).or_default().push((d, count));
            }
        }
        for list in postings.values_mut() {
            list.sort_unstable_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
        }
        PartitionIndex { postings }
    }
}

impl SpotSigs {
    /// All pairs with Jaccard ≥ τ over the whole corpus, each once, sorted
    /// by (`doc_a`, `doc_b`).
    pub fn find_pairs(&self, docs: &dyn DocPasses) -> Vec<ScoredPair> {
        self.find_pairs_with_stats(docs).0
    }

    /// [`SpotSigs::find_pairs`] with the search counters.
    pub fn find_pairs_with_stats(&self, docs: &dyn DocPasses) -> (Vec<ScoredPair>, SearchStats) {
        // One pass; only each document's spot multiset is kept.
        let (mut sets, mut ids): (Vec<Multiset>, Vec<u64>) = (Vec::new(), Vec::new());
        docs.each_chunk(&mut |chunk| {
            sets.par_extend(chunk.par_iter().map(|d| self.multiset(d.words)));
            ids.extend(chunk.iter().map(|d| d.doc_id));
        });
        let (found, stats) = self.search(&sets);
        let mut pairs: Vec<ScoredPair> = found
            .into_iter()
            .map(|(x, y, score)| {
                let (a, b) = (ids[x], ids[y]);
                ScoredPair { doc_a: a.min(b), doc_b: a.max(b), score }
            })
            .collect();
        pairs.sort_by_key(|p| (p.doc_a, p.doc_b));
        (pairs, stats)
    }

    /// All pairs (i, j), i < j, of multisets with Jaccard ≥ τ, with their
    /// Jaccard, sorted. Multisets smaller than `min_spots` (and empty ones)
    /// take no part.
    ///
    /// Each document is partitioned by its size; a document of partition k
    /// queries the index of partition k (only documents after it, so each
    /// pair is met once) and of partition k + 1. A query walks the
    /// document's signatures by ascending posting length, with W the mass
    /// (counts) of the signatures already walked. A document B first met at
    /// signature s lacks the walked signatures, so its intersection with A
    /// is at most `min(|A| - W - fA(s), |B| - fB(s)) + min(fA(s), fB(s))`;
    /// B becomes a candidate only if that bound allows Jaccard ≥ τ, and is
    /// never reconsidered otherwise. Once `|A| - W < τ|A|` no new document
    /// can qualify and the walk stops. Postings are sorted by descending
    /// count, so the walk of one posting list stops as soon as
    /// `|A| - W - fA(s) + fB(s) < τ|A|` with fB(s) < fA(s). Candidates then
    /// get their exact Jaccard.
    fn search(&self, sets: &[Multiset]) -> (IndexPairs, SearchStats) {
        let tau = self.tau;
        let sizes: Vec<u64> = sets.iter().map(|s| s.iter().map(|e| e.1 as u64).sum()).collect();
        let min = self.min_spots.max(1) as u64;
        let max_size = sizes.iter().copied().filter(|&s| s >= min).max().unwrap_or(0) as usize;
        let bounds = partition_bounds(tau, max_size);
        let partition_of = |size: u64| bounds.partition_point(|&p| p as u64 <= size) - 1;

        let mut members: Vec<Vec<u32>> = vec![Vec::new(); bounds.len()];
        for (d, &size) in sizes.iter().enumerate() {
            if size >= min {
                members[partition_of(size)].push(d as u32);
            }
        }
        let indexes: Vec<PartitionIndex> = members.par_iter().map(|m| PartitionIndex::build(m, sets)).collect();

        let queries: Vec<(u32, usize)> =
            members.iter().enumerate().flat_map(|(k, m)| m.iter().map(move |&d| (d, k))).collect();
        let results: Vec<(IndexPairs, u64)> = queries
            .par_iter()
            .map(|&(a, k)| {
                let mut found = Vec::new();
                let mut comparisons = 0;
                for (index, only_after) in [(indexes.get(k), true), (indexes.get(k + 1), false)] {
                    if let Some(index) = index {
                        for b in self.candidates(a, index, only_after, sets, &sizes) {
                            comparisons += 1;
                            let j = multiset_jaccard(&sets[a as usize], &sets[b as usize]);
                            if j >= tau {
                                let (x, y) = (a.min(b) as usize, a.max(b) as usize);
                                found.push((x, y, j));
                            }
                        }
                    }
                }
                (found, comparisons)
            })
            .collect();

        let mut stats = SearchStats {
            docs: members.iter().map(Vec::len).sum(),
            partitions: members.iter().filter(|m| !m.is_empty()).count(),
            ..SearchStats::default()
        };
        let mut pairs = Vec::new();
        for (found, comparisons) in results {
            stats.comparisons += comparisons;
            pairs.extend(found);
        }
        pairs.sort_by_key(|p| (p.0, p.1));
        stats.pairs = pairs.len();
        (pairs, stats)
    }

    /// Candidates for document `a` in one partition index (see
    /// [`SpotSigs::search`] for the bounds), in the order met.
    fn candidates(
        &self,
        a: u32,
        index: &PartitionIndex,
        only_after: bool,
        sets: &[Multiset],
        sizes: &[u64],
    ) -> Vec<u32> {
        let tau = self.tau;
        let size_a = sizes[a as usize] as f64;
        let mut order: Vec<(usize, u64, u32)> = sets[a as usize]
            .iter()
            .map(|&(sig, count)| (index.postings.get(&sig).map_or(0, Vec::len), sig, count))
            .collect();
        order.sort_unstable();

        let mut seen: HashSet<u32> = HashSet::new();
        let mut candidates = Vec::new();
        let mut walked = 0f64;
        for (_, sig, fa) in order {
            if size_a - walked < tau * size_a - EPS {
                break;
            }
            let fa_f = fa as f64;
            if let Some(list) = index.postings.get(&sig) {
                for &(b, fb) in list {
                    let fb_f = fb as f64;
                    if fb < fa && size_a - walked - fa_f + fb_f < tau * size_a - EPS {
                        break;
                    }
                    if b == a || (only_after && b < a) || !seen.insert(b) {
                        continue;
                    }
                    let size_b = sizes[b as usize] as f64;
                    let shared = fa.min(fb) as f64;
                    let inter_max = (size_a - walked - fa_f).min(size_b - fb_f) + shared;
                    if inter_max / (size_a + size_b - inter_max) >= tau - EPS {
                        candidates.push(b);
                    }
                }
            }
            walked += fa_f;
        }
        candidates
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{seed_config, words, SEED_SENTENCE};
    use super::super::SpotSigsSettings;
    use super::*;
    use crate::methods::{DocView, InMemory, PairMethod};
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[test]
    fn partition_boundaries() {
        let tau = 2.0 / 3.0;
        // The seed's example intervals: [20, 30) then [30, 45).
        assert_eq!(next_boundary(20, tau), 30);
        assert_eq!(next_boundary(30, tau), 45);
        // From p0 = 1 by hand: max(p+1, floor(1.5 p)): 1, 2, 3, 4, 6, 9, 13,
        // 19, 28, 42, 63, 94, 141 (the sequence from 1 never reaches 20).
        assert_eq!(partition_bounds(tau, 100), vec![1, 2, 3, 4, 6, 9, 13, 19, 28, 42, 63, 94, 141]);
        // Sizes whose ratio is at least τ land in the same or adjacent partitions.
        for tau in [0.44, 2.0 / 3.0, 0.8, 0.95] {
            let bounds = partition_bounds(tau, 2000);
            let part = |s: usize| bounds.partition_point(|&p| p <= s) - 1;
            for small in 1..=1000usize {
                let largest = (small as f64 / tau).floor() as usize;
                assert!(part(largest) - part(small) <= 1, "tau {tau}: {small} and {largest}");
            }
        }
    }

    /// All pairs i < j with Jaccard ≥ τ, the definition itself.
    fn all_pairs(sets: &[Multiset], tau: f64, min_spots: u64) -> Vec<(usize, usize, f64)> {
        let size = |s: &Multiset| s.iter().map(|e| e.1 as u64).sum::<u64>();
        let n = sets.len();
        let mut pairs: Vec<(usize, usize, f64)> = (0..n)
            .into_par_iter()
            .flat_map_iter(|i| {
                (i + 1..n).filter_map(move |j| {
                    if size(&sets[i]) < min_spots || size(&sets[j]) < min_spots {
                        return None;
                    }
                    let jac = multiset_jaccard(&sets[i], &sets[j]);
                    (jac >= tau).then_some((i, j, jac))
                })
            })
            .collect();
        pairs.sort_by_key(|p| (p.0, p.1));
        pairs
    }

    fn splitmix(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn to_multiset(elems: Vec<u64>) -> Multiset {
        let mut m: BTreeMap<u64, u32> = BTreeMap::new();
        for e in elems {
            *m.entry(e).or_insert(0) += 1;
        }
        m.into_iter().collect()
    }

    /// A corpus of near-duplicate families: base documents with skewed
    /// signature frequencies, and mutated copies at random edit rates, so
    /// Jaccard values spread on both sides of τ.
    fn generated_corpus(n: usize, seed: u64) -> Vec<Multiset> {
        let mut s = seed;
        let mut rnd = move |m: u64| splitmix(&mut s) % m;
        let vocab = 4000u64;
        let bases: Vec<Vec<u64>> = (0..n / 5)
            .map(|_| {
                let len = 1 + rnd(8) * rnd(12);
                (0..len).map(|_| rnd(vocab).min(rnd(vocab))).collect()
            })
            .collect();
        (0..n)
            .map(|_| {
                let base = &bases[rnd(bases.len() as u64) as usize];
                let rate = rnd(60);
                let mut doc: Vec<u64> =
                    base.iter().map(|&e| if rnd(100) < rate { rnd(vocab).min(rnd(vocab)) } else { e }).collect();
                for _ in 0..rnd(1 + base.len() as u64 * rate / 100 + 1) {
                    doc.push(rnd(vocab));
                }
                to_multiset(doc)
            })
            .collect()
    }

    #[test]
    fn pruned_search_equals_all_pairs_on_generated_corpus() {
        let sets = generated_corpus(3000, 11);
        // One all-pairs pass at the lowest τ; the stricter setting's expected
        // pairs are a filter of it.
        let loose = all_pairs(&sets, 0.44, 1);
        let size = |i: usize| sets[i].iter().map(|e| e.1 as u64).sum::<u64>();
        for (tau, min_spots) in [(0.44, 1usize), (0.7, 3)] {
            let cfg = SpotSigsSettings { tau, min_spots, ..SpotSigsSettings::default() };
            let s = SpotSigs::with_stop_words(&cfg, []);
            let (pairs, stats) = s.search(&sets);
            let expected: Vec<(usize, usize, f64)> = loose
                .iter()
                .copied()
                .filter(|&(i, j, jac)| jac >= tau && size(i) >= min_spots as u64 && size(j) >= min_spots as u64)
                .collect();
            assert_eq!(pairs, expected, "tau {tau}");
            let total = (stats.docs as u64) * (stats.docs as u64 - 1) / 2;
            eprintln!(
                "spotsigs tau={tau}: {} docs, {} partitions, {} pairs, {} comparisons vs {} all-pairs ({:.2}%)",
                stats.docs,
                stats.partitions,
                stats.pairs,
                stats.comparisons,
                total,
                100.0 * stats.comparisons as f64 / total as f64
            );
            assert!(!pairs.is_empty());
            assert!(stats.comparisons < total / 10);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn pruned_search_equals_all_pairs_on_small_corpora(
            docs in prop::collection::vec(prop::collection::vec(0u64..12, 0..25), 0..30),
            tau in 0.2f64..1.0,
        ) {
            let sets: Vec<Multiset> = docs.into_iter().map(to_multiset).collect();
            let cfg = SpotSigsSettings { tau, ..SpotSigsSettings::default() };
            let s = SpotSigs::with_stop_words(&cfg, []);
            prop_assert_eq!(s.search(&sets).0, all_pairs(&sets, tau, 1));
        }
    }

    #[test]
    fn find_pairs_maps_document_ids_and_drops_small_documents() {
        let cfg = SpotSigsSettings { tau: 0.5, min_spots: 2, ..seed_config() };
        let s = SpotSigs::with_stop_words(&cfg, ["at", "for"]);
        let texts = [
            SEED_SENTENCE.to_string(),
            "the cat".to_string(),
            format!("{SEED_SENTENCE} extra"),
            "the cat".to_string(),
            "nothing here".to_string(),
        ];
        let word_lists: Vec<&[&str]> = texts.iter().map(|t| words(t)).collect();
        let ids = [50u64, 7, 9, 8, 1];
        let views: Vec<DocView<'_>> = word_lists
            .iter()
            .zip(ids)
            .map(|(w, doc_id)| DocView { doc_id, terms: &[], sentence_ends: &[], words: w, ..Default::default() })
            .collect();
        // Docs 50 and 9 differ in one signature: in doc 9 "extra" (position
        // 14) completes the chain of the@10, the:carolina:extra instead of
        // the:carolina, so Jaccard = 3 / 5. "the cat" has one signature
        // (fewer than min_spots = 2); "nothing here" has none.
        let (pairs, stats) = s.find_pairs_with_stats(&InMemory(&views));
        // The same read a document at a time.
        assert_eq!(s.find_pairs_with_stats(&crate::methods::Chunked(&views, 1)).0, pairs);
        assert_eq!(pairs, vec![ScoredPair { doc_a: 9, doc_b: 50, score: 3.0 / 5.0 }]);
        assert_eq!(stats.docs, 2);
        assert_eq!(s.id(), "spotsigs");
    }

    /// The keyed search the pipeline runs finds the reference's pairs with
    /// the same Jaccard when no group is cut (every pair above τ shares a
    /// signature), on pages made of shared passages with edits; under the
    /// chain bound, a part of them.
    #[test]
    fn keyed_search_equals_the_pruned_search() {
        let mut state = 3u64;
        let mut rnd = move |n: u64| crate::methods::splitmix64(&mut state) % n;
        let vocabulary = ["the", "is", "a", "was", "cat", "dog", "runs", "far", "blue", "sky", "tree", "house", "red"];
        let passages: Vec<Vec<String>> = (0..5)
            .map(|p| {
                (0..30)
                    .map(|k| {
                        format!(
                            "{}{}",
                            vocabulary[rnd(13) as usize],
                            if k % 3 == 0 { String::new() } else { format!("{p}") }
                        )
                    })
                    .collect()
            })
            .collect();
        let texts: Vec<Vec<String>> = (0..60)
            .map(|d| {
                let mut words: Vec<String> = Vec::new();
                for _ in 0..1 + rnd(2) {
                    words.extend(passages[rnd(5) as usize].iter().cloned());
                }
                for _ in 0..rnd(8) {
                    let at = rnd(words.len() as u64) as usize;
                    words[at] = format!("edit{d}");
                }
                words
            })
            .collect();
        let word_lists: Vec<&[&str]> = texts.iter().map(|t| crate::methods::leaked(t)).collect();
        let views: Vec<DocView<'_>> = word_lists
            .iter()
            .zip(0u64..)
            .map(|(w, id)| DocView {
                doc_id: 7 + 2 * id,
                terms: &[],
                sentence_ends: &[],
                words: w,
                ..Default::default()
            })
            .collect();
        let s = SpotSigs::with_stop_words(&seed_config(), ["at", "for"]);
        let reference = s.find_pairs(&InMemory(&views));
        assert!(reference.len() > 50, "{} pairs", reference.len());
        assert_eq!(crate::stages::search::keyed_pairs(&s, &views, 100), reference);
        let bounded = crate::stages::search::keyed_pairs(&s, &views, 1);
        assert!(!bounded.is_empty() && bounded.len() < reference.len(), "{} pairs", bounded.len());
        assert!(bounded.iter().all(|p| reference.contains(p)));
    }
}

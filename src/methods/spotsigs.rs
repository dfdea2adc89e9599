//! SpotSigs (Theobald, Siddharth, Paepcke, SIGIR 2008; spec §5): spot
//! signatures from antecedent words, multiset Jaccard, and the partitioned,
//! pruned inverted-index search that finds every pair with Jaccard ≥ τ
//! without comparing all pairs. That search holds every document's
//! multiset in one process: the pipeline runs a search by keys instead
//! ([`KeyedSearch`]: spot signatures as keys, the pairs scored by the same
//! Jaccard), and the pruned search is its test reference.
//!
//! Inside the search a spot signature string is represented by its
//! `xxh3_64` fingerprint (like every other 64-bit signature of the
//! pipeline); two different strings colliding has probability 2^-64 per
//! pair of strings, far below anything a crawl can show.

use super::{DocPasses, DocView, Encoded, KeyedSearch, PairMethod, ScoredPair, TokenParts};
use crate::methods::settings::FamilySettings;
use crate::settings::Problems;
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use xxhash_rust::xxh3::xxh3_64;

/// Slack for floating-point comparisons in the pruning bounds: a bound is
/// only trusted to prune when it is below τ by more than this, so rounding
/// can never drop a qualifying pair (Jaccard values are ratios of integers
/// far apart compared with 1e-9).
const EPS: f64 = 1e-9;

/// A document's spot signatures as a multiset: (fingerprint, count), sorted
/// by fingerprint.
type Multiset = Vec<(u64, u32)>;

/// Pairs of document indexes (i < j) with their Jaccard.
type IndexPairs = Vec<(usize, usize, f64)>;

/// Multiset Jaccard `Σ min(fA, fB) / Σ max(fA, fB)` of two multisets given
/// as (element, count) lists sorted by element (spec §5); 0 when both are
/// empty.
pub fn multiset_jaccard<K: Ord>(a: &[(K, u32)], b: &[(K, u32)]) -> f64 {
    let (mut i, mut j) = (0, 0);
    let (mut inter, mut union) = (0u64, 0u64);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => {
                union += a[i].1 as u64;
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                union += b[j].1 as u64;
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                inter += a[i].1.min(b[j].1) as u64;
                union += a[i].1.max(b[j].1) as u64;
                i += 1;
                j += 1;
            }
        }
    }
    union += a[i..].iter().map(|e| e.1 as u64).sum::<u64>();
    union += b[j..].iter().map(|e| e.1 as u64).sum::<u64>();
    if union == 0 {
        0.0
    } else {
        inter as f64 / union as f64
    }
}

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

/// The SpotSigs method: extraction settings plus the search threshold.
#[derive(Debug, Clone)]
pub struct SpotSigs {
    antecedents: HashSet<String>,
    stop: HashSet<String>,
    chains: Vec<(usize, usize)>,
    include_antecedent: bool,
    tau: f64,
    min_spots: usize,
    max_group_docs: usize,
    /// At most this many candidates are compared per query document (see
    /// [`SpotSigs::with_max_edges`]); unbounded by default.
    max_candidates: usize,
}

/// Candidates compared per query document for each edge it may keep: the
/// candidates met first share the document's rarest spot signatures, the
/// best partners, so a few per edge find them.
const CANDIDATES_PER_EDGE: usize = 8;

impl SpotSigs {
    /// Bounds the one-process search: a query document compares at
    /// most `CANDIDATES_PER_EDGE × max_edges` candidates, met in the order of
    /// the walk (rarest signatures first). Without it a group of n
    /// near-identical pages costs n²/2 comparisons; with it, n × a constant,
    /// and the pairs are those the document's rarest spots lead to rather
    /// than all pairs above τ.
    pub fn with_max_edges(mut self, max_edges: usize) -> SpotSigs {
        self.max_candidates = max_edges.saturating_mul(CANDIDATES_PER_EDGE);
        self
    }

    /// Reads the `spotsigs_*` settings; the stop list is the English list of
    /// [`crate::text::stop_words`] united with the antecedents (the spec
    /// requires the stop list to contain them).
    pub fn new(cfg: &SpotSigsSettings) -> SpotSigs {
        SpotSigs::with_stop_words(cfg, crate::text::stop_words("en").iter().copied())
    }

    /// As [`SpotSigs::new`] with an explicit stop list (still united with
    /// the antecedents): for other languages and for tests.
    pub fn with_stop_words<'a>(cfg: &SpotSigsSettings, stop_words: impl IntoIterator<Item = &'a str>) -> SpotSigs {
        let antecedents: HashSet<String> = cfg.antecedents.iter().cloned().collect();
        let mut stop: HashSet<String> = stop_words.into_iter().map(str::to_string).collect();
        stop.extend(antecedents.iter().cloned());
        SpotSigs {
            antecedents,
            stop,
            chains: cfg.chains.clone(),
            include_antecedent: cfg.include_antecedent,
            tau: cfg.tau,
            min_spots: cfg.min_spots,
            max_group_docs: cfg.max_group_docs,
            max_candidates: usize::MAX,
        }
    }

    /// The document's spot signatures as (signature string, count), sorted
    /// by string. For every antecedent at position i and every (d, c) chain:
    /// the first chain word is the first non-stop word at or after i + d,
    /// each next one the first non-stop word at or after the previous chain
    /// word's position + d; a chain running past the end keeps the words it
    /// has, and an empty chain gives nothing. The string is `a:w1:…:wc`, or
    /// `w1:…:wc` when the antecedent is not included. Signatures of
    /// different (d, c) pairs are not told apart. A distance d of 0 counts
    /// as 1 (a chain must move forward).
    pub fn spot_signatures(&self, words: &[&str]) -> Vec<(String, u32)> {
        let n = words.len();
        // next_content[i]: first position >= i holding a non-stop word (n if none).
        let mut next_content = vec![n; n + 1];
        for i in (0..n).rev() {
            next_content[i] = if self.stop.contains(words[i]) { next_content[i + 1] } else { i };
        }
        let mut counts: BTreeMap<String, u32> = BTreeMap::new();
        let mut chain: Vec<&str> = Vec::new();
        for (i, word) in words.iter().enumerate() {
            if !self.antecedents.contains(*word) {
                continue;
            }
            for &(d, c) in &self.chains {
                let d = d.max(1);
                chain.clear();
                let mut pos = i + d;
                while chain.len() < c && pos < n {
                    let j = next_content[pos];
                    if j >= n {
                        break;
                    }
                    chain.push(words[j]);
                    pos = j + d;
                }
                if chain.is_empty() {
                    continue;
                }
                let mut sig = if self.include_antecedent { format!("{word}:") } else { String::new() };
                sig.push_str(&chain.join(":"));
                *counts.entry(sig).or_insert(0) += 1;
            }
        }
        counts.into_iter().collect()
    }

    /// The multiset of a document's spot signatures with fingerprinted
    /// elements, sorted by fingerprint.
    fn multiset(&self, words: &[&str]) -> Multiset {
        let mut set: Multiset =
            self.spot_signatures(words).into_iter().map(|(s, c)| (xxh3_64(s.as_bytes()), c)).collect();
        set.sort_unstable();
        set
    }

    /// [`PairMethod::find_pairs`] together with the search counters.
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
                        if candidates.len() >= self.max_candidates {
                            return candidates;
                        }
                    }
                }
            }
            walked += fa_f;
        }
        candidates
    }
}

impl PairMethod for SpotSigs {
    fn id(&self) -> &'static str {
        "spotsigs"
    }

    fn reads(&self) -> TokenParts {
        TokenParts::Words
    }

    fn keyed(&self) -> Option<&dyn KeyedSearch> {
        Some(self)
    }

    /// The partitioned, pruned search over the whole corpus in one process:
    /// the reference of the keyed search the pipeline runs.
    fn find_pairs(&self, docs: &dyn DocPasses) -> Vec<ScoredPair> {
        self.find_pairs_with_stats(docs).0
    }

    /// Adds `spotsigs_docs`, `spotsigs_comparisons` (exact Jaccards computed)
    /// and `spotsigs_all_pairs` (what an all-pairs search would compute), so
    /// the saving of the partition + inverted-index pruning is on record.
    fn find_pairs_counted(&self, docs: &dyn DocPasses, counters: &mut BTreeMap<String, u64>) -> Vec<ScoredPair> {
        let (pairs, stats) = self.find_pairs_with_stats(docs);
        let n = stats.docs as u64;
        counters.insert("spotsigs_docs".into(), n);
        counters.insert("spotsigs_partitions".into(), stats.partitions as u64);
        counters.insert("spotsigs_comparisons".into(), stats.comparisons);
        counters.insert("spotsigs_all_pairs".into(), n * n.saturating_sub(1) / 2);
        pairs
    }
}

/// The inverted index with spot signatures as keys, the search the
/// pipeline runs in bounded memory ([`crate::stages::search`]): documents
/// sharing a signature are candidates, each linked to its next `max_edges`
/// in size order (the multiset's size), a signature of more than
/// `spotsigs_max_group_docs` documents pairing none; the encoded form is
/// the multiset, (fingerprint, count) in 12 bytes each, and a candidate is
/// a pair when its multiset Jaccard reaches τ. Unlike the reference, whose
/// walk meets a document's rarest signatures first, the keys reach every
/// partner through any signature that is not too common.
impl KeyedSearch for SpotSigs {
    fn encode(&self, doc: &DocView<'_>) -> Option<Encoded> {
        let set = self.multiset(doc.words);
        let size: u64 = set.iter().map(|e| e.1 as u64).sum();
        if size < self.min_spots.max(1) as u64 {
            return None;
        }
        let keys = set.iter().map(|e| e.0).collect();
        let form =
            set.iter().flat_map(|&(sig, count)| sig.to_le_bytes().into_iter().chain(count.to_le_bytes())).collect();
        Some(Encoded { keys, size: u32::try_from(size).unwrap_or(u32::MAX), form })
    }

    fn max_group_docs(&self) -> usize {
        self.max_group_docs
    }

    /// Spec §5: `sim(A, B) <= min(|A|, |B|) / max(|A|, |B|)`.
    fn may_pair(&self, size_a: u32, size_b: u32) -> bool {
        size_a.min(size_b) as f64 >= self.tau * size_a.max(size_b) as f64 - EPS
    }

    fn score(&self, a: &[u8], b: &[u8]) -> anyhow::Result<Option<f64>> {
        let decode = |bytes: &[u8]| -> anyhow::Result<Multiset> {
            anyhow::ensure!(bytes.len().is_multiple_of(12), "a spot multiset of {} bytes", bytes.len());
            Ok(bytes
                .chunks_exact(12)
                .map(|e| {
                    let (sig, count) = e.split_at(8);
                    (
                        u64::from_le_bytes(sig.try_into().expect("8 bytes")),
                        u32::from_le_bytes(count.try_into().expect("4 bytes")),
                    )
                })
                .collect())
        };
        let j = multiset_jaccard(&decode(a)?, &decode(b)?);
        Ok((j >= self.tau).then_some(j))
    }
}

/// The settings of SpotSigs in `[methods]` (`spotsigs_*`, spec §5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SpotSigsSettings {
    /// Antecedent words.
    #[serde(rename = "spotsigs_antecedents")]
    pub antecedents: Vec<String>,
    /// (spot distance d, chain length c) pairs.
    #[serde(rename = "spotsigs_chains")]
    pub chains: Vec<(usize, usize)>,
    /// Include the antecedent in the signature string.
    #[serde(rename = "spotsigs_include_antecedent")]
    pub include_antecedent: bool,
    /// Jaccard threshold tau.
    #[serde(rename = "spotsigs_tau")]
    pub tau: f64,
    /// Documents with fewer spot signatures are left out.
    #[serde(rename = "spotsigs_min_spots")]
    pub min_spots: usize,
    /// A spot signature shared by more documents than this gives no pairs
    /// in the pipeline's keyed search (a template's phrases).
    #[serde(rename = "spotsigs_max_group_docs")]
    pub max_group_docs: usize,
}

impl Default for SpotSigsSettings {
    fn default() -> Self {
        SpotSigsSettings {
            antecedents: [
                "a", "an", "the", "is", "was", "are", "were", "be", "been", "can", "will", "would", "have", "has",
                "had", "do", "does", "did", "there", "said",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            chains: vec![(2, 2)],
            include_antecedent: true,
            tau: 0.44,
            min_spots: 1,
            max_group_docs: 1000,
        }
    }
}

impl FamilySettings for SpotSigsSettings {
    fn check(&self, p: &mut Problems) {
        const S: &str = "methods";
        p.require(!self.antecedents.is_empty(), || {
            "[methods] spotsigs_antecedents must name at least one word".to_string()
        });
        p.require(!self.chains.is_empty(), || {
            "[methods] spotsigs_chains must hold at least one (distance, length) pair".to_string()
        });
        for &(distance, length) in &self.chains {
            p.require(distance >= 1 && length >= 1, || {
                format!(
                    "[methods] spotsigs_chains: [{distance}, {length}] needs a spot distance and a chain length of at least 1"
                )
            });
        }
        p.above_up_to(S, "spotsigs_tau", self.tau, 0.0, 1.0);
        p.at_least(S, "spotsigs_min_spots", self.min_spots, 1);
        p.at_least(S, "spotsigs_max_group_docs", self.max_group_docs, 2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::{leaked, DocView, InMemory};
    use proptest::prelude::*;

    fn words(text: &str) -> &'static [&'static str] {
        leaked(&text.split_whitespace().map(|w| w.to_lowercase()).collect::<Vec<_>>())
    }

    fn seed_config() -> SpotSigsSettings {
        SpotSigsSettings {
            antecedents: ["a", "is", "the", "to"].iter().map(|s| s.to_string()).collect(),
            chains: vec![(2, 2)],
            ..SpotSigsSettings::default()
        }
    }

    const SEED_SENTENCE: &str = "At a rally to kick off a weeklong campaign for the South Carolina primary";

    #[test]
    fn seed_example_signatures() {
        // Positions: 0 at, 1 a, 2 rally, 3 to, 4 kick, 5 off, 6 a, 7 weeklong,
        // 8 campaign, 9 for, 10 the, 11 south, 12 carolina, 13 primary.
        // Stop list = antecedents {a, is, the, to} plus "at" and "for"; "off"
        // must NOT be a stop word (many English lists, e.g. NLTK's, have it):
        //   to@3: first content word at/after 5 = off(5); at/after 7 = weeklong.
        //   a@1: at/after 3: to is stop, kick(4); at/after 6: a is stop, weeklong(7).
        //   a@6: campaign(8); at/after 10: the is stop, south(11).
        //   the@10: carolina(12); at/after 14: past the end, chain keeps one word.
        let s = SpotSigs::with_stop_words(&seed_config(), ["at", "for"]);
        let sigs = s.spot_signatures(words(SEED_SENTENCE));
        let expected: Vec<(String, u32)> = ["a:campaign:south", "a:kick:weeklong", "the:carolina", "to:off:weeklong"]
            .iter()
            .map(|x| (x.to_string(), 1))
            .collect();
        assert_eq!(sigs, expected);

        // With "off" as a stop word `to` would skip it: to:weeklong:south.
        let with_off = SpotSigs::with_stop_words(&seed_config(), ["at", "for", "off"]);
        let sigs = with_off.spot_signatures(words(SEED_SENTENCE));
        assert!(sigs.contains(&("to:weeklong:south".to_string(), 1)));
        assert!(sigs.contains(&("a:kick:weeklong".to_string(), 1)));

        // Chain-only signatures (the authors' other option).
        let cfg = SpotSigsSettings { include_antecedent: false, ..seed_config() };
        let chain_only = SpotSigs::with_stop_words(&cfg, ["at", "for"]);
        let sigs = chain_only.spot_signatures(words(SEED_SENTENCE));
        let expected: Vec<(String, u32)> = ["campaign:south", "carolina", "kick:weeklong", "off:weeklong"]
            .iter()
            .map(|x| (x.to_string(), 1))
            .collect();
        assert_eq!(sigs, expected);
    }

    #[test]
    fn chains_skip_stop_words_and_repeated_signatures_are_counted() {
        let s = SpotSigs::with_stop_words(&seed_config(), []);
        // 0 the, 1 cat, 2 sat, 3 the, 4 cat, 5 sat, 6 the:
        // the@0: at/after 2 sat(2), at/after 4 cat(4) => the:sat:cat;
        // the@3: sat(5), at/after 7 is past the end => the:sat;
        // the@6: at/after 8 is past the end => nothing.
        let sigs = s.spot_signatures(words("the cat sat the cat sat the"));
        assert_eq!(sigs, vec![("the:sat".to_string(), 1), ("the:sat:cat".to_string(), 1)]);
        // 0 is, 1 p, 2 q, 3 r, 4 is, 5 p, 6 q, 7 r, 8 is, 9 p, 10 q, 11 r:
        // is@0: q(2), at/after 4 the antecedent is skipped => p(5): is:q:p;
        // is@4: q(6), at/after 8 => p(9): is:q:p again; is@8: q(10), then end: is:q.
        let sigs = s.spot_signatures(words("is p q r is p q r is p q r"));
        assert_eq!(sigs, vec![("is:q".to_string(), 1), ("is:q:p".to_string(), 2)]);
    }

    #[test]
    fn seed_multiset_jaccard() {
        // A = {1,1,2,2,2,3}, B = {2,2,3,3,4,4}: min-sum 2+1 = 3, max-sum 2+3+2+2 = 9.
        let a = [(1u32, 2), (2, 3), (3, 1)];
        let b = [(2u32, 2), (3, 2), (4, 2)];
        assert_eq!(multiset_jaccard(&a, &b), 3.0 / 9.0);
        assert_eq!(multiset_jaccard(&b, &a), 3.0 / 9.0);
        assert_eq!(multiset_jaccard::<u32>(&[], &[]), 0.0);
    }

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
        assert_eq!(crate::methods::keyed::keyed_pairs(&s, &views, 100), reference);
        let bounded = crate::methods::keyed::keyed_pairs(&s, &views, 1);
        assert!(!bounded.is_empty() && bounded.len() < reference.len(), "{} pairs", bounded.len());
        assert!(bounded.iter().all(|p| reference.contains(p)));
    }
}

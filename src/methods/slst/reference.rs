//! The test reference of the keyed search the pipeline runs: one suffix
//! array over every document's sentence-length string (Feng 2015), which
//! finds every pair sharing a run of m sentences but holds the whole
//! corpus's strings in one process.

use super::{SentenceString, Slst};
use crate::methods::{DocPasses, ScoredPair};
use rayon::prelude::*;
use suffix::SuffixTable;
use xxhash_rust::xxh3::xxh3_64;

/// Byte that ends every document's string in the suffix array text; it is no
/// base-36 symbol, so a shared substring never spans it (common prefixes are
/// also clipped at it, see [`shared_substring_pairs`]).
const SEPARATOR: u8 = b'$';

/// Index pairs (i, j), i < j, of strings sharing a substring of at least
/// `min_len` symbols, found with one suffix array over all strings, each
/// followed by a separator. Common prefixes of neighbouring suffixes (Kasai's
/// LCP) are clipped at the separator, so no shared substring crosses a
/// document boundary; every maximal rank interval with clipped LCP ≥
/// `min_len` is a group of suffixes sharing a prefix of that length, and
/// every two documents in a group are a pair.
///
/// `run_keys`, when given, holds for every string and every start position
/// i (with i + `min_len` ≤ its length) a fingerprint of whatever must also
/// agree along the run (SL+ST: the first-two-terms keys of the `min_len`
/// sentences from i). Inside a group only suffixes with equal fingerprints
/// are paired, so two documents are a pair only if they share a run of
/// `min_len` symbols whose fingerprints agree too. Without this, a corpus of
/// pages from a few sites pairs nearly everything: short runs of sentence
/// lengths such as `111` are everywhere (measured on the shared crawl files:
/// 814 documents, tens of millions of pairs before deduplication, 140 s).
///
/// A group is paired as a chain: each member (in document order) with the
/// next `max_links` members, so a group of n documents gives at most
/// n × `max_links` pairs (all pairs when `max_links` ≥ n).
///
/// Bound on the work: a (fingerprint) group with more than `max_group_docs`
/// distinct documents is not expanded; its interval is split into the
/// sub-intervals of longer common prefix (the LCP-interval children),
/// recursively, so documents sharing a *longer* run than the frequent one
/// are still found. Pairs whose only shared runs occur in more than
/// `max_group_docs` documents are not proposed (like the hot signatures of
/// the candidate stage).
///
/// # Panics
/// If a string contains the separator byte `$`, or the text exceeds 2^32-1
/// bytes (the suffix array's limit).
pub fn shared_substring_pairs(
    strings: &[&[u8]],
    min_len: usize,
    max_group_docs: usize,
    max_links: usize,
    run_keys: Option<&[Vec<u64>]>,
) -> Vec<(u32, u32)> {
    let min_len = min_len.max(1);
    let total: usize = strings.iter().map(|s| s.len() + 1).sum();
    let mut text = String::with_capacity(total);
    let mut doc_of = Vec::with_capacity(total);
    let mut doc_end = Vec::with_capacity(strings.len());
    for (d, s) in strings.iter().enumerate() {
        assert!(!s.contains(&SEPARATOR), "separator byte in a sentence-length string");
        text.push_str(std::str::from_utf8(s).expect("sentence-length strings are ASCII"));
        text.push(SEPARATOR as char);
        doc_of.extend(std::iter::repeat_n(d as u32, s.len() + 1));
        doc_end.push(text.len() - 1);
    }
    if text.is_empty() {
        return Vec::new();
    }
    let table = SuffixTable::new(text.as_str());
    let sa = table.table();
    let bytes = text.as_bytes();
    let to_sep = |p: usize| doc_end[doc_of[p] as usize] - p;

    // Kasai: lcp[r] = common prefix of suffixes sa[r-1] and sa[r], then
    // clipped to the distance of either suffix to its separator.
    let n = bytes.len();
    let mut rank = vec![0u32; n];
    for (r, &p) in sa.iter().enumerate() {
        rank[p as usize] = r as u32;
    }
    let mut lcp = vec![0u32; n];
    let mut h = 0usize;
    for p in 0..n {
        let r = rank[p] as usize;
        if r == 0 {
            h = 0;
            continue;
        }
        let q = sa[r - 1] as usize;
        while p + h < n && q + h < n && bytes[p + h] == bytes[q + h] {
            h += 1;
        }
        lcp[r] = h.min(to_sep(p)).min(to_sep(q)) as u32;
        h = h.saturating_sub(1);
    }

    // Maximal intervals [lo, hi] of ranks with lcp[lo+1..=hi] >= threshold,
    // expanded or split by the group bound.
    let doc_start: Vec<usize> = doc_end.iter().zip(strings).map(|(&end, s)| end - s.len()).collect();
    let run_key = |p: usize| -> u64 {
        let d = doc_of[p] as usize;
        run_keys.map_or(0, |keys| keys[d][p - doc_start[d]])
    };
    let mut pairs = Vec::new();
    let mut stack: Vec<(usize, usize)> = split_interval(&lcp, 0, n - 1, min_len);
    let mut members: Vec<(u64, u32)> = Vec::new();
    while let Some((lo, hi)) = stack.pop() {
        members.clear();
        members.extend(sa[lo..=hi].iter().map(|&p| (run_key(p as usize), doc_of[p as usize])));
        members.sort_unstable();
        members.dedup();
        let mut too_big = false;
        for group in members.chunk_by(|x, y| x.0 == y.0) {
            if group.len() > max_group_docs {
                too_big = true;
                continue;
            }
            for (k, &(_, x)) in group.iter().enumerate() {
                pairs.extend(group[k + 1..].iter().take(max_links).map(|&(_, y)| (x, y)));
            }
        }
        if too_big {
            let floor = lcp[lo + 1..=hi].iter().copied().min().expect("interval of 2+ ranks");
            stack.extend(split_interval(&lcp, lo, hi, floor as usize + 1));
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}

/// The maximal sub-intervals of ranks [lo, hi] (at least 2 ranks) whose
/// neighbouring LCPs are all at least `threshold`.
fn split_interval(lcp: &[u32], lo: usize, hi: usize, threshold: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = lo;
    for (r, &common) in lcp.iter().enumerate().take(hi + 1).skip(lo + 1) {
        if (common as usize) < threshold {
            if r - 1 > start {
                out.push((start, r - 1));
            }
            start = r;
        }
    }
    if hi > start {
        out.push((start, hi));
    }
    out
}

impl Slst {
    /// All pairs the method proposes over the whole corpus, each once,
    /// sorted by (`doc_a`, `doc_b`): the documents sharing a run of m
    /// sentences by one suffix array, every such pair scored.
    pub fn find_pairs(&self, docs: &dyn DocPasses) -> Vec<ScoredPair> {
        // One pass; only each document's sentence string is kept.
        let (mut strings, mut ids): (Vec<SentenceString>, Vec<u64>) = (Vec::new(), Vec::new());
        docs.each_chunk(&mut |chunk| {
            strings.par_extend(chunk.par_iter().map(|d| SentenceString::from_view(d, self.sentence_words)));
            ids.extend(chunk.iter().map(|d| d.doc_id));
        });
        let symbols: Vec<&[u8]> = strings.iter().map(|s| s.symbols.as_slice()).collect();
        let keys: Vec<Vec<u64>> = strings.par_iter().map(|s| self.window_keys(s)).collect();
        let candidates = shared_substring_pairs(&symbols, self.min_block, self.max_group_docs, usize::MAX, Some(&keys));
        let mut pairs: Vec<ScoredPair> = candidates
            .par_iter()
            .filter_map(|&(i, j)| {
                let score = self.score(&strings[i as usize], &strings[j as usize])?;
                let (a, b) = (ids[i as usize], ids[j as usize]);
                Some(ScoredPair { doc_a: a.min(b), doc_b: a.max(b), score })
            })
            .collect();
        pairs.sort_by_key(|p| (p.doc_a, p.doc_b));
        pairs
    }

    /// For every start position of `s` that has `min_block` sentences from
    /// it, the fingerprint of their first-two-terms keys: the `run_keys` of
    /// [`shared_substring_pairs`].
    fn window_keys(&self, s: &SentenceString) -> Vec<u64> {
        s.keys
            .windows(self.min_block)
            .map(|w| {
                let bytes: Vec<u8> = w.iter().flat_map(|k| k.to_le_bytes()).collect();
                xxh3_64(&bytes)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{sentence, Doc};
    use super::*;
    use crate::methods::settings::SlstSettings;
    use crate::methods::{DocView, InMemory, PairMethod};
    use crate::stages::search::keyed_pairs;
    use proptest::prelude::*;
    use std::collections::HashSet;

    /// Pairs sharing a substring of at least `m` bytes, by comparing every
    /// m-gram set (a shared run of ≥ m contains a shared m-gram).
    fn brute_force_pairs(strings: &[Vec<u8>], m: usize) -> Vec<(u32, u32)> {
        let grams: Vec<HashSet<&[u8]>> = strings.iter().map(|s| s.windows(m).collect()).collect();
        let mut pairs = Vec::new();
        for i in 0..strings.len() {
            for j in i + 1..strings.len() {
                if !grams[i].is_disjoint(&grams[j]) {
                    pairs.push((i as u32, j as u32));
                }
            }
        }
        pairs
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn suffix_array_candidates_equal_brute_force(
            strings in prop::collection::vec(prop::collection::vec(prop::sample::select(b"0123a".to_vec()), 0..30), 0..25),
            m in 1usize..6,
        ) {
            let refs: Vec<&[u8]> = strings.iter().map(Vec::as_slice).collect();
            prop_assert_eq!(shared_substring_pairs(&refs, m, usize::MAX, usize::MAX, None), brute_force_pairs(&strings, m));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// With run keys, a pair needs m consecutive positions agreeing on
        /// symbol *and* key: brute force over (symbol, key) m-grams.
        #[test]
        fn keyed_candidates_equal_brute_force(
            docs in prop::collection::vec(
                prop::collection::vec((prop::sample::select(b"012".to_vec()), 0u64..3), 0..20), 0..20),
            m in 1usize..4,
        ) {
            let strings: Vec<Vec<u8>> = docs.iter().map(|d| d.iter().map(|x| x.0).collect()).collect();
            let keys: Vec<Vec<u64>> = docs
                .iter()
                .map(|d| d.windows(m).map(|w| w.iter().fold(7u64, |h, x| h.wrapping_mul(31).wrapping_add(x.1))).collect())
                .collect();
            let grams: Vec<HashSet<&[(u8, u64)]>> = docs.iter().map(|d| d.windows(m).collect()).collect();
            let mut expected = Vec::new();
            for i in 0..docs.len() {
                for j in i + 1..docs.len() {
                    if !grams[i].is_disjoint(&grams[j]) {
                        expected.push((i as u32, j as u32));
                    }
                }
            }
            let refs: Vec<&[u8]> = strings.iter().map(Vec::as_slice).collect();
            prop_assert_eq!(shared_substring_pairs(&refs, m, usize::MAX, usize::MAX, Some(&keys)), expected);
        }
    }

    #[test]
    fn suffix_array_candidates_on_generated_corpus() {
        // 300 strings over 36 symbols with a skewed distribution, some
        // sharing copied runs, m = 3.
        let mut state = 5u64;
        let mut rnd = move |n: u64| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) % n
        };
        let alphabet = b"0123456789abcdefghijklmnopqrstuvwxyz";
        let mut strings: Vec<Vec<u8>> = Vec::new();
        for _ in 0..300 {
            let len = rnd(40) as usize;
            let mut s: Vec<u8> = (0..len).map(|_| alphabet[rnd(36).min(rnd(36)) as usize]).collect();
            if !strings.is_empty() && rnd(3) == 0 {
                let src = &strings[rnd(strings.len() as u64) as usize];
                if !src.is_empty() {
                    let from = rnd(src.len() as u64) as usize;
                    let to = (from + 1 + rnd(8) as usize).min(src.len());
                    let at = rnd(s.len() as u64 + 1) as usize;
                    s.splice(at..at, src[from..to].iter().copied());
                }
            }
            strings.push(s);
        }
        let refs: Vec<&[u8]> = strings.iter().map(Vec::as_slice).collect();
        let expected = brute_force_pairs(&strings, 3);
        assert!(expected.len() > 100);
        assert_eq!(shared_substring_pairs(&refs, 3, usize::MAX, usize::MAX, None), expected);
    }

    #[test]
    fn frequent_runs_are_split_by_the_group_bound() {
        // "123" is in 4 documents; "456789" in 2. With at most 3 documents per
        // group the "123" group splits into its longer runs (all distinct),
        // and only the pair sharing the longer run is left.
        let strings: Vec<&[u8]> = vec![b"a123b", b"c123d", b"e123f", b"g123h", b"i456789j", b"k456789l"];
        assert_eq!(shared_substring_pairs(&strings, 3, 3, usize::MAX, None), vec![(4, 5)]);
        // Documents 0 and 1 also share "123b9": a longer run in a small group.
        let strings: Vec<&[u8]> = vec![b"a123b9", b"c123b9", b"e123f", b"g123h", b"i456789j", b"k456789l"];
        assert_eq!(shared_substring_pairs(&strings, 3, 3, usize::MAX, None), vec![(0, 1), (4, 5)]);
        // Unbounded, every pair sharing "123" is a candidate.
        assert_eq!(shared_substring_pairs(&strings, 3, usize::MAX, usize::MAX, None).len(), 6 + 1);
    }

    #[test]
    fn find_pairs_scores_verified_blocks() {
        let cfg = SlstSettings::default();
        let slst = Slst::new(&cfg);
        let base: Vec<Vec<String>> = (0..8).map(|k| sentence(&format!("b{k}_"), 3 + k)).collect();
        // Y: sentence 3 has other first terms (same length): blocks of 3 and 4.
        let mut y = base.clone();
        y[3] = sentence("changed", 6);
        // Z: the same length string, all words different: no verified block.
        let z: Vec<Vec<String>> = (0..8).map(|k| sentence(&format!("z{k}_"), 3 + k)).collect();
        // W: only sentences 0 and 1 of the base, then others: block of 2 < m.
        let w = vec![base[0].clone(), base[1].clone(), sentence("w", 20), sentence("v", 21)];
        let docs: Vec<Doc> = [&base, &y, &z, &w].iter().map(|s| Doc::new(s)).collect();
        let ids = [40u64, 30, 20, 10];
        let views: Vec<DocView<'_>> = docs.iter().zip(ids).map(|(d, doc_id)| d.view(doc_id)).collect();
        // base~Y: matched 3 + 4 = 7, Jaccard 7 / (8 + 8 - 7) = 7/9.
        assert_eq!(slst.find_pairs(&InMemory(&views)), vec![ScoredPair { doc_a: 30, doc_b: 40, score: 7.0 / 9.0 }]);
        // The same read a document at a time.
        assert_eq!(slst.find_pairs(&crate::methods::Chunked(&views, 1)), slst.find_pairs(&InMemory(&views)));
        assert_eq!(slst.id(), "slst");
        // With m = 5 the pair has no block long enough.
        let strict = Slst::new(&SlstSettings { min_block: 5, ..cfg.clone() });
        assert!(strict.find_pairs(&InMemory(&views)).is_empty());
        // A score floor above 7/9 drops the pair; at exactly 7/9 it stays.
        let picky = Slst::new(&SlstSettings { min_jaccard: 0.78, ..cfg.clone() });
        assert!(picky.find_pairs(&InMemory(&views)).is_empty());
        let at_floor = Slst::new(&SlstSettings { min_jaccard: 7.0 / 9.0, ..cfg.clone() });
        assert_eq!(at_floor.find_pairs(&InMemory(&views)).len(), 1);
        assert!(slst.find_pairs(&InMemory(&[])).is_empty());
    }

    /// Spec §6: the keyed search finds the suffix array's pairs with the
    /// same scores, on a corpus of documents built from shared passages
    /// (templates) with edits, as long as no run is shared by more than
    /// `slst_max_group_docs` documents and the chain bound cuts no group.
    /// Under the bound, the two chain in different orders (size, doc_id):
    /// every keyed pair is still one of the reference's.
    #[test]
    fn keyed_search_equals_the_suffix_array_search() {
        let mut state = 11u64;
        let mut rnd = move |n: u64| crate::methods::splitmix64(&mut state) % n;
        let passages: Vec<Vec<Vec<String>>> =
            (0..6).map(|p| (0..6).map(|k| sentence(&format!("p{p}s{k}_"), 2 + (p + k) % 9)).collect()).collect();
        let mut docs = Vec::new();
        for d in 0..80 {
            let mut sentences: Vec<Vec<String>> = Vec::new();
            for _ in 0..1 + rnd(3) {
                let p = &passages[rnd(passages.len() as u64) as usize];
                sentences.extend(p.iter().skip(rnd(2) as usize).cloned());
                sentences.push(sentence(&format!("own{d}_{}_", sentences.len()), 1 + rnd(12) as usize));
            }
            if rnd(4) == 0 && sentences.len() > 3 {
                let at = rnd(sentences.len() as u64) as usize;
                sentences[at] = sentence(&format!("edit{d}_"), sentences[at].len());
            }
            docs.push(Doc::new(&sentences));
        }
        let views: Vec<DocView<'_>> = docs.iter().zip(0u64..).map(|(d, id)| d.view(1000 + 3 * id)).collect();
        let cfg = SlstSettings { min_jaccard: 0.2, ..SlstSettings::default() };
        let reference = Slst::new(&cfg).find_pairs(&InMemory(&views));
        assert!(reference.len() > 30, "{} pairs", reference.len());
        assert_eq!(keyed_pairs(&Slst::new(&cfg), &views, 100), reference);
        for links in [1, 2] {
            let keyed = keyed_pairs(&Slst::new(&cfg), &views, links);
            assert!(!keyed.is_empty() && keyed.len() < reference.len(), "{links} links: {}", keyed.len());
            assert!(keyed.iter().all(|p| reference.contains(p)), "{links} links");
        }
        // A run shared by more documents than the bound pairs nothing.
        let slst = Slst::new(&SlstSettings { max_group_docs: 2, ..cfg.clone() });
        let same: Vec<DocView<'_>> = (0..3).map(|id| docs[0].view(id)).collect();
        assert!(keyed_pairs(&slst, &same, 8).is_empty());
        assert_eq!(keyed_pairs(&slst, &same[..2], 8).len(), 1);
    }
}

//! SpotSigs (Theobald, Siddharth, Paepcke, SIGIR 2008; spec §5): spot
//! signatures from antecedent words and multiset Jaccard, searched by keys
//! ([`KeyedSearch`]: spot signatures as keys, the pairs scored by the
//! Jaccard). The paper's partitioned, pruned inverted-index search, which
//! finds every pair with Jaccard ≥ τ but holds every document's multiset
//! in one process, is the keyed search's test reference (`reference.rs`,
//! compiled for tests only).
//!
//! Inside the search a spot signature string is represented by its
//! `xxh3_64` fingerprint (like every other 64-bit signature of the
//! pipeline); two different strings colliding has probability 2^-64 per
//! pair of strings, far below anything a crawl can show.

use super::{DocView, Encoded, KeyedSearch, PairMethod, TokenParts};
use crate::methods::traits::FamilySettings;
use crate::settings::Problems;
use foldhash::HashSet;
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
}

impl SpotSigs {
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
}

impl PairMethod for SpotSigs {
    fn id(&self) -> &'static str {
        "spotsigs"
    }

    fn reads(&self) -> TokenParts {
        TokenParts::Words
    }

    fn keyed(&self) -> &dyn KeyedSearch {
        self
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
mod reference;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::leaked;

    pub(super) fn words(text: &str) -> &'static [&'static str] {
        leaked(&text.split_whitespace().map(|w| w.to_lowercase()).collect::<Vec<_>>())
    }

    pub(super) fn seed_config() -> SpotSigsSettings {
        SpotSigsSettings {
            antecedents: ["a", "is", "the", "to"].iter().map(|s| s.to_string()).collect(),
            chains: vec![(2, 2)],
            ..SpotSigsSettings::default()
        }
    }

    pub(super) const SEED_SENTENCE: &str = "At a rally to kick off a weeklong campaign for the South Carolina primary";

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
}

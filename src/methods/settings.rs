//! The methods' settings (`[methods]`, spec §1–§8) and the bound every
//! method's candidate edges keep (`[candidates]`). The registry
//! ([`super::registry`]) lists the methods these settings enable and checks
//! the ids a job names.

use serde::{Deserialize, Serialize};

use super::registry;
use crate::settings::Problems;

/// Parameters of the signature methods (spec §1–§8).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MethodsConfig {
    /// Methods run when `--methods` is not given.
    pub enabled: Vec<String>,
    /// a1, a2, a3, a10: how many top-weighted terms make the signature.
    pub top_words: usize,
    /// a2, a5: Okapi BM25 k.
    pub bm25_k: f64,
    /// a2, a5: Okapi BM25 b.
    pub bm25_b: f64,
    /// a4, a5: how many sentences make the signature.
    pub top_sentences: usize,
    /// imatch, a7: lower bound of the normalized IDF band ln(N/df)/ln(N).
    pub imatch_idf_low: f64,
    /// imatch, a7: upper bound of the normalized IDF band.
    pub imatch_idf_high: f64,
    /// imatch, a7: documents with fewer lexicon terms get no signature.
    pub imatch_min_features: usize,
    /// a7: number of extra lexicons K.
    pub lexrand_extra_lexicons: usize,
    /// a7: fraction p of the main lexicon removed in each extra lexicon.
    pub lexrand_drop_fraction: f64,
    /// a7: seed of the random lexicon reductions.
    pub lexrand_seed: u64,
    /// a9: number of descriptive words kept (at most).
    pub descr_max_words: usize,
    /// a9: candidate pool size (highest df first).
    pub descr_candidates: usize,
    /// a9: candidates need df <= N * this fraction.
    pub descr_max_df_fraction: f64,
    /// a9: threshold grid step.
    pub descr_grid_step: f64,
    /// a9: half-width of the band around a threshold counted as unstable.
    pub descr_band: f64,
    /// a9: greedy add/drop rounds.
    pub descr_rounds: usize,
    /// a9: a word's precision must stay above this floor.
    pub descr_precision_floor: f64,
    /// a9: a document with fewer set bits gets no signature, and the word
    /// selection counts a document as covered from this many bits on (one
    /// or two common words are shared by many unrelated pages).
    pub descr_min_bits: usize,
    /// minhash: shingle width w.
    pub minhash_shingle_width: usize,
    /// minhash: number of min-wise functions.
    pub minhash_functions: usize,
    /// minhash: rows per band of the LSH index that finds the pairs to
    /// estimate (functions / rows bands); must divide `minhash_functions`, so
    /// no minimum is left out. Chosen for `minhash_threshold` (docs/methods.md, "minhash").
    pub minhash_band_rows: usize,
    /// minhash: the method's rule. A pair found by the bands is a duplicate
    /// when its estimated resemblance (share of equal minima) is at least
    /// this; the study's 0.75 by default (docs/methods.md, "minhash").
    pub minhash_threshold: f64,
    /// minhash, a6: seed of the min-wise function coefficients.
    pub minhash_seed: u64,
    /// a6, a8, a11: shingle width.
    pub shingle_width: usize,
    /// a6: preset `36` (6 groups of 6, the study) or `84` (6 groups of 14,
    /// Fetterly); any positive multiple of 6.
    pub megashingle_functions: usize,
    /// a8: keep about this many shingles (k = floor(log2 n) - log2(this)); a
    /// power of two.
    pub logshingle_target: usize,
    /// spotsigs: antecedent words.
    pub spotsigs_antecedents: Vec<String>,
    /// spotsigs: (spot distance d, chain length c) pairs.
    pub spotsigs_chains: Vec<(usize, usize)>,
    /// spotsigs: include the antecedent in the signature string.
    pub spotsigs_include_antecedent: bool,
    /// spotsigs: Jaccard threshold tau.
    pub spotsigs_tau: f64,
    /// spotsigs: documents with fewer spot signatures are left out.
    pub spotsigs_min_spots: usize,
    /// spotsigs: a spot signature shared by more documents than this gives
    /// no pairs in the pipeline's keyed search (a template's phrases).
    pub spotsigs_max_group_docs: usize,
    /// slst: which words of a sentence make its length and its first-two-
    /// words key. Seed 003 removes stop words only, the default; `terms`
    /// (stop words and short words removed) is the rule of earlier runs.
    pub slst_sentence_words: SlstSentenceWords,
    /// slst: minimal verified block length m (sentences).
    pub slst_min_block: usize,
    /// slst: a run of m sentences shared by more documents than this gives
    /// no pairs (the reference's suffix array splits such a group into its
    /// longer shared runs instead).
    pub slst_max_group_docs: usize,
    /// SL+ST: pairs whose sentence Jaccard is below this are not proposed
    /// (choice; measured on the shared crawl files: no pair below 0.4 and
    /// 12 of ~9,500 below 0.5 verified, while ~35,000 template-sharing pairs
    /// scored below 0.5).
    pub slst_min_jaccard: f64,
    /// slst: sentences whose (length, first two words) occur more often than
    /// this in either document of a pair do not start a verified block
    /// (they can still lie inside one); bounds the pairwise work.
    pub slst_max_sentence_repeats: usize,
    /// a11, a12: split chains where neighbouring length ratio exceeds this.
    pub chain_ratio: f64,
    /// a11: a pair is compared only when the chain links between the two
    /// documents (shared shingles met within `max_edges_per_document` steps
    /// of a chain) number at least this share of the smaller document's
    /// distinct shingles; 0 compares every linked pair (the study's a11,
    /// bounded per document). On the full Javadoc crawl, 58% of a11's
    /// comparisons were pairs no other method proposed linked by under 5%
    /// of the shingles: 23,331 comparisons, 54 of them verified.
    pub a11_min_shared: f64,
    /// a11: the share of each document's distinct shingles its chains use,
    /// the rarest by global df first (ties by shingle value): the study's
    /// "не все, а выборочно" (not all, selectively), as a prefix filter
    /// that drops the common shingles, whose chains are the long ones, and
    /// keeps pages sharing most of their shingles linked. 1 uses all.
    /// Measured on the shared crawl files: docs/methods.md, "a11".
    pub a11_prefix_share: f64,
    /// a12: maximal ratio of sentence counts.
    pub a12_num_ratio: f64,
}

impl MethodsConfig {
    /// True when method `id` is switched on (`--methods`, `[methods] enabled`).
    pub fn is_enabled(&self, id: &str) -> bool {
        self.enabled.iter().any(|m| m == id)
    }
}

impl MethodsConfig {
    /// The rules the methods rely on (see each parameter's doc), so that no
    /// value is silently clamped or rounded and no method asserts on it.
    pub fn check(&self, p: &mut Problems) {
        const S: &str = "methods";
        p.known_ids(S, "enabled", &self.enabled, registry::ids());
        p.require(!self.enabled.is_empty(), || "[methods] enabled must name at least one method".to_string());
        p.at_least(S, "top_words", self.top_words, 1);
        p.at_least(S, "top_sentences", self.top_sentences, 1);
        p.require(self.bm25_k.is_finite() && self.bm25_k >= 0.0, || {
            format!("[methods] bm25_k = {} must be a number of at least 0", self.bm25_k)
        });
        p.within(S, "bm25_b", self.bm25_b, 0.0, 1.0);
        p.within(S, "imatch_idf_low", self.imatch_idf_low, 0.0, 1.0);
        p.within(S, "imatch_idf_high", self.imatch_idf_high, 0.0, 1.0);
        p.require(self.imatch_idf_low < self.imatch_idf_high || self.imatch_idf_low.is_nan(), || {
            format!(
                "[methods] imatch_idf_low = {} must be below imatch_idf_high = {} (the lexicon is the band between)",
                self.imatch_idf_low, self.imatch_idf_high
            )
        });
        p.at_least(S, "imatch_min_features", self.imatch_min_features, 1);
        // Slot K of a7 holds the last extra lexicon; slots are 16-bit.
        p.require(self.lexrand_extra_lexicons <= usize::from(u16::MAX), || {
            format!("[methods] lexrand_extra_lexicons = {} must be at most {}", self.lexrand_extra_lexicons, u16::MAX)
        });
        p.within(S, "lexrand_drop_fraction", self.lexrand_drop_fraction, 0.0, 1.0);
        p.at_least(S, "descr_max_words", self.descr_max_words, 1);
        p.at_least(S, "descr_candidates", self.descr_candidates, 1);
        p.above_up_to(S, "descr_max_df_fraction", self.descr_max_df_fraction, 0.0, 1.0);
        // The grid is step, 2·step, ... below 1: a step of 0 or at least 1
        // leaves no threshold at all.
        p.require(self.descr_grid_step > 0.0 && self.descr_grid_step < 1.0, || {
            format!("[methods] descr_grid_step = {} must be above 0 and below 1", self.descr_grid_step)
        });
        p.within(S, "descr_band", self.descr_band, 0.0, 0.5);
        p.at_least(S, "descr_rounds", self.descr_rounds, 1);
        p.within(S, "descr_precision_floor", self.descr_precision_floor, 0.0, 1.0);
        p.at_least(S, "descr_min_bits", self.descr_min_bits, 1);
        p.at_least(S, "minhash_shingle_width", self.minhash_shingle_width, 1);
        p.at_least(S, "minhash_functions", self.minhash_functions, 1);
        p.at_least(S, "minhash_band_rows", self.minhash_band_rows, 1);
        p.within(S, "minhash_threshold", self.minhash_threshold, 0.0, 1.0);
        if self.minhash_band_rows >= 1 {
            // Minima left over after the last full band would be in no band.
            p.require(self.minhash_functions.is_multiple_of(self.minhash_band_rows), || {
                format!(
                    "[methods] minhash_band_rows = {} must divide minhash_functions = {}",
                    self.minhash_band_rows, self.minhash_functions
                )
            });
            // Band j is signed in slot j; slots are 16-bit.
            p.require(self.minhash_functions / self.minhash_band_rows <= usize::from(u16::MAX) + 1, || {
                format!(
                    "[methods] minhash_functions / minhash_band_rows = {} bands must be at most {}",
                    self.minhash_functions / self.minhash_band_rows,
                    usize::from(u16::MAX) + 1
                )
            });
        }
        p.at_least(S, "shingle_width", self.shingle_width, 1);
        p.require(self.megashingle_functions > 0 && self.megashingle_functions.is_multiple_of(6), || {
            format!(
                "[methods] megashingle_functions = {} must be a positive multiple of 6 (6 equal groups; presets 36 and 84)",
                self.megashingle_functions
            )
        });
        p.require(self.logshingle_target.is_power_of_two(), || {
            format!(
                "[methods] logshingle_target = {} must be a power of two (k = floor(log2 n) - log2 of it)",
                self.logshingle_target
            )
        });
        p.require(!self.spotsigs_antecedents.is_empty(), || {
            "[methods] spotsigs_antecedents must name at least one word".to_string()
        });
        p.require(!self.spotsigs_chains.is_empty(), || {
            "[methods] spotsigs_chains must hold at least one (distance, length) pair".to_string()
        });
        for &(distance, length) in &self.spotsigs_chains {
            p.require(distance >= 1 && length >= 1, || {
                format!(
                    "[methods] spotsigs_chains: [{distance}, {length}] needs a spot distance and a chain length of at least 1"
                )
            });
        }
        p.above_up_to(S, "spotsigs_tau", self.spotsigs_tau, 0.0, 1.0);
        p.at_least(S, "spotsigs_min_spots", self.spotsigs_min_spots, 1);
        p.at_least(S, "spotsigs_max_group_docs", self.spotsigs_max_group_docs, 2);
        // Blocks shorter than 2 sentences are dropped by the method itself.
        p.at_least(S, "slst_min_block", self.slst_min_block, 2);
        p.at_least(S, "slst_max_group_docs", self.slst_max_group_docs, 2);
        p.within(S, "slst_min_jaccard", self.slst_min_jaccard, 0.0, 1.0);
        p.at_least(S, "slst_max_sentence_repeats", self.slst_max_sentence_repeats, 1);
        p.within(S, "a11_min_shared", self.a11_min_shared, 0.0, 1.0);
        p.above_up_to(S, "a11_prefix_share", self.a11_prefix_share, 0.0, 1.0);
        for (name, value) in [("chain_ratio", self.chain_ratio), ("a12_num_ratio", self.a12_num_ratio)] {
            p.require(value.is_finite() && value >= 1.0, || {
                format!("[methods] {name} = {value} must be a ratio of at least 1")
            });
        }
    }
}

impl Default for MethodsConfig {
    fn default() -> Self {
        MethodsConfig {
            enabled: registry::ids().iter().map(|s| s.to_string()).collect(),
            top_words: 6,
            bm25_k: 2.0,
            bm25_b: 0.75,
            top_sentences: 2,
            imatch_idf_low: 0.2,
            imatch_idf_high: 0.85,
            imatch_min_features: 5,
            lexrand_extra_lexicons: 10,
            lexrand_drop_fraction: 0.33,
            lexrand_seed: 42,
            descr_max_words: 5000,
            descr_candidates: 50_000,
            descr_max_df_fraction: 0.05,
            descr_grid_step: 0.05,
            descr_band: 0.025,
            descr_rounds: 3,
            descr_precision_floor: 0.5,
            descr_min_bits: 2,
            minhash_shingle_width: 10,
            minhash_functions: 84,
            minhash_band_rows: 7,
            minhash_threshold: 0.75,
            minhash_seed: 1,
            shingle_width: 5,
            megashingle_functions: 36,
            logshingle_target: 8,
            spotsigs_antecedents: [
                "a", "an", "the", "is", "was", "are", "were", "be", "been", "can", "will", "would", "have", "has",
                "had", "do", "does", "did", "there", "said",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            spotsigs_chains: vec![(2, 2)],
            spotsigs_include_antecedent: true,
            spotsigs_tau: 0.44,
            spotsigs_min_spots: 1,
            spotsigs_max_group_docs: 1000,
            slst_sentence_words: SlstSentenceWords::NoStopWords,
            slst_min_block: 3,
            slst_max_group_docs: 1000,
            slst_min_jaccard: 0.5,
            slst_max_sentence_repeats: 16,
            chain_ratio: 1.15,
            a11_min_shared: 0.05,
            a11_prefix_share: 1.0,
            a12_num_ratio: 1.20,
        }
    }
}

/// Which words SL+ST counts in a sentence (`[methods] slst_sentence_words`).
/// An enum so that a typo in the job file is a parse error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SlstSentenceWords {
    /// Every word but the stop words (short words count): seed 003's
    /// "remove the stop words of each sentence, count the remaining words".
    NoStopWords,
    /// The kept terms (stop words and words of at most
    /// `max_short_word_chars` removed), as the other methods see sentences.
    Terms,
}

/// Candidate generation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CandidatesConfig {
    /// Signature groups and chains with more documents than this are
    /// reported in `hot_signatures` (they are still walked as chains).
    pub max_group_size: u64,
    /// Each document keeps at most this many candidate edges per method,
    /// and a group's chain links each member to this many next members:
    /// the bound that keeps every later stage linear in the corpus.
    pub max_edges_per_document: u32,
}

impl CandidatesConfig {
    /// Both bounds must let at least one document or edge through.
    pub fn check(&self, p: &mut Problems) {
        p.at_least("candidates", "max_group_size", self.max_group_size, 1);
        p.at_least("candidates", "max_edges_per_document", self.max_edges_per_document, 1);
    }
}

impl Default for CandidatesConfig {
    fn default() -> Self {
        CandidatesConfig { max_group_size: 1000, max_edges_per_document: 8 }
    }
}

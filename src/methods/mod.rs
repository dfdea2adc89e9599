//! Near-duplicate detection methods, one file per method family.
//!
//! Most methods are *signature* methods: each document gets zero or more
//! 64-bit signatures, and documents sharing a signature (same method and
//! slot) are candidate pairs; the grouping itself happens in SQL
//! (`jobs/candidates.sql`). Methods that need corpus-wide state (lexicons,
//! IDF, descriptive words) build it once in their constructor from
//! [`CorpusStats`] and expose it through [`SignatureMethod::state`], so the
//! `method_state` table can explain a run afterwards.

use crate::config::MethodsConfig;
use std::collections::{BTreeMap, HashMap};

pub mod a12;
pub mod descr;
pub mod imatch;
pub mod minwise;
pub mod sentences;
pub mod shingles;
pub mod slst;
pub mod spotsigs;
pub mod topwords;
pub mod whole;

/// Which token lists a method reads of a document (see [`DocView`]). The lists are most of a document's
/// memory (`words` about twice `terms`), and the stages that hold the whole
/// corpus (`stats` for a9, `search`) need one of them only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenParts {
    /// `terms` and `sentence_ends`.
    Terms,
    /// `words`.
    Words,
    /// `terms`, `sentence_ends` and `words`: what signature methods read.
    All,
    /// `sentence_lengths` and `sentence_heads`: all SL+ST reads under the
    /// seed's rule, far smaller than `terms`.
    SentenceLengths,
}

/// The view of one tokenized document that methods read. `Default` (no
/// tokens at all) lets tests spell out only the lists a method reads.
#[derive(Debug, Clone, Copy, Default)]
pub struct DocView<'a> {
    pub doc_id: u64,
    /// Kept terms in order (see [`crate::text::Tokenized`]).
    pub terms: &'a [String],
    /// Exclusive end index of each sentence in `terms`.
    pub sentence_ends: &'a [u32],
    /// All lowercased words, stop words included.
    pub words: &'a [String],
    /// Per sentence, the number of words that are not stop words (see
    /// [`crate::text::Tokenized::sentence_lengths`]).
    pub sentence_lengths: &'a [u32],
    /// Per sentence, its first two non-stop words joined by a space (see
    /// [`crate::text::Tokenized::sentence_heads`]).
    pub sentence_heads: &'a [String],
}

impl<'a> DocView<'a> {
    /// The kept terms of each sentence, in document order.
    pub fn sentences(&self) -> impl Iterator<Item = &'a [String]> + 'a {
        let terms = self.terms;
        let mut start = 0usize;
        self.sentence_ends.iter().map(move |&end| {
            let s = &terms[start..end as usize];
            start = end as usize;
            s
        })
    }
}

/// Document frequency and collection frequency of one term.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TermStats {
    /// Number of documents containing the term.
    pub df: u64,
    /// Number of occurrences in the corpus.
    pub cf: u64,
}

/// Corpus statistics (the `df` and `corpus_stats` tables) that global methods read.
#[derive(Debug, Clone, Default)]
pub struct CorpusStats {
    /// Number of documents N.
    pub n_docs: u64,
    /// Mean number of kept terms per document.
    pub dl_avg: f64,
    /// Per-term statistics.
    pub terms: HashMap<String, TermStats>,
}

/// One signature of a document. `slot` tells apart a method's several
/// signatures (a7 has K+1, a6 has 15): only equal slots are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Signature {
    pub slot: u16,
    pub sig: u64,
}

/// One row of a method's explanatory state (e.g. a lexicon term, a
/// descriptive word with its threshold), written to `method_state`.
#[derive(Debug, Clone, PartialEq)]
pub struct StateRow {
    /// Which part of the state (lexicon index for a7, 0 otherwise).
    pub slot: u16,
    pub term: String,
    /// A number attached to the term (normalized IDF, threshold, ...).
    pub value: f64,
}

/// A method that signs documents independently of each other once its
/// corpus-wide state is built.
pub trait SignatureMethod: Send + Sync {
    /// The method id used everywhere (`a1`, `imatch`, ...).
    fn id(&self) -> &'static str;
    /// Appends the document's signatures to `out` (none if the document is
    /// too small for the method).
    fn sign(&self, doc: &DocView<'_>, out: &mut Vec<Signature>);
    /// Corpus-wide state worth keeping for explanation; empty by default.
    fn state(&self) -> Vec<StateRow> {
        Vec::new()
    }
}

/// The first 8 bytes of a digest as a big-endian u64: how SHA1/MD5 digests
/// are stored in the `sig` column (collisions at 2^-64 per pair are far below
/// any crawl's size).
pub fn digest_prefix_u64(digest: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(b)
}

/// A pair of documents proposed by a method, with the method's own score
/// (SpotSigs or SL+ST Jaccard). `doc_a < doc_b` always.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoredPair {
    pub doc_a: u64,
    pub doc_b: u64,
    pub score: f64,
}

/// A method that finds its pairs by a corpus-wide search of its own
/// (SpotSigs' partitioned inverted index, SL+ST's suffix array) instead of
/// by equal signatures.
pub trait PairMethod: Send + Sync {
    /// The method id used everywhere.
    fn id(&self) -> &'static str;
    /// All pairs the method proposes over the corpus, each once, sorted by
    /// (`doc_a`, `doc_b`) so output is deterministic.
    fn find_pairs(&self, docs: &[DocView<'_>]) -> Vec<ScoredPair>;
    /// The token lists the search reads: only those are loaded, since a
    /// search holds the whole corpus at once.
    fn reads(&self) -> TokenParts;
    /// [`PairMethod::find_pairs`], also adding the search's own counters
    /// (comparisons made, ...) to `counters` under keys prefixed with the
    /// method id, so a run's manifest shows what the search cost. By default
    /// a search has no counters beyond its pairs.
    fn find_pairs_counted(&self, docs: &[DocView<'_>], _counters: &mut BTreeMap<String, u64>) -> Vec<ScoredPair> {
        self.find_pairs(docs)
    }
}

/// The methods whose comparison is part of the method: their found pairs
/// are the candidate pairs that pass verification's similarity, not every
/// pair they propose. A11 (study §6.1): "Документы внутри цепочки
/// сравниваем попарно (например, путем использования функции Perl
/// Similarity ...)" — the documents of a chain are compared pairwise, and
/// the number of comparisons is the method's cost. The one list `verify`
/// (which compares every candidate pair of these methods, counted as
/// `<method>_comparisons`) and `evaluate` (which counts only the pairs that
/// passed, in `method_quality` and `gold_quality`) read.
pub const COMPARING_METHODS: &[&str] = &["a11"];

/// True when method `id` includes its comparison (see [`COMPARING_METHODS`]).
pub fn includes_comparison(id: &str) -> bool {
    COMPARING_METHODS.contains(&id)
}

/// Keeps, of `pairs`, the edges each document ranks among its `k`
/// strongest (highest score, then smallest partner id); an edge stays when
/// either end keeps it. The pair-search methods' form of the bound every
/// method obeys (`candidates.max_edges_per_document`): at most `k` edges
/// chosen per document. Returns the kept pairs sorted by (`doc_a`, `doc_b`).
pub fn keep_strongest(pairs: Vec<ScoredPair>, k: usize) -> Vec<ScoredPair> {
    let mut ends: Vec<(u64, f64, u64, usize)> = Vec::with_capacity(2 * pairs.len());
    for (i, p) in pairs.iter().enumerate() {
        ends.push((p.doc_a, p.score, p.doc_b, i));
        ends.push((p.doc_b, p.score, p.doc_a, i));
    }
    ends.sort_unstable_by(|x, y| x.0.cmp(&y.0).then(y.1.total_cmp(&x.1)).then(x.2.cmp(&y.2)));
    let mut keep = vec![false; pairs.len()];
    for group in ends.chunk_by(|x, y| x.0 == y.0) {
        for e in group.iter().take(k) {
            keep[e.3] = true;
        }
    }
    let mut kept: Vec<ScoredPair> = pairs.into_iter().zip(keep).filter(|(_, k)| *k).map(|(p, _)| p).collect();
    kept.sort_by_key(|p| (p.doc_a, p.doc_b));
    kept
}

/// The number of occurrences of each distinct term of a document: the `tf`
/// every frequency-weighted method (a1–a3, a5, a9, a10) starts from.
pub fn term_frequencies(terms: &[String]) -> HashMap<&str, u32> {
    let mut tf: HashMap<&str, u32> = HashMap::with_capacity(terms.len());
    for t in terms {
        *tf.entry(t.as_str()).or_insert(0) += 1;
    }
    tf
}

/// One step of the splitmix64 generator: advances `state` and returns the
/// next value. Methods that need seeded randomness use it instead of an
/// external crate so that a seed gives the same stream in every build.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Where a9 takes its descriptive words from: the one method whose state
/// needs a pass over the documents themselves, not only over `df`.
#[derive(Debug, Clone, Copy)]
pub enum DescrSource<'a> {
    /// Chosen now from the whole corpus (the `stats` stage).
    Corpus(&'a [DocView<'a>]),
    /// Read back from the a9 rows of `method_state`, so that every task of
    /// a sharded `signatures` stage signs with the words chosen once from
    /// the whole corpus.
    State(&'a [StateRow]),
}

/// Builds the signature methods named in `ids`, in that order, from the
/// configuration and the corpus statistics (a9 from `descr`). The lexicons
/// of imatch and a7 depend only on `stats` and the config, so every task
/// building them from the same `df` gets the same ones. Ids that are not
/// signature methods built here are skipped, so the caller can pass the
/// whole method list.
pub fn build_signature_methods(
    ids: &[String],
    cfg: &MethodsConfig,
    stats: &CorpusStats,
    descr: DescrSource<'_>,
) -> Vec<Box<dyn SignatureMethod>> {
    use topwords::{TopWords, Weighting};
    let mut methods: Vec<Box<dyn SignatureMethod>> = Vec::new();
    for id in ids {
        let method: Box<dyn SignatureMethod> = match id.as_str() {
            "a0" => Box::new(whole::WholeMd5),
            "a1" => Box::new(TopWords::new(Weighting::Tf, cfg, stats)),
            "a2" => Box::new(TopWords::new(Weighting::TfIdf, cfg, stats)),
            "a3" => Box::new(TopWords::new(Weighting::TfRidf, cfg, stats)),
            "a10" => Box::new(TopWords::new(Weighting::OptFreq, cfg, stats)),
            "a4" => Box::new(sentences::LongSent::new(cfg)),
            "a5" => Box::new(sentences::HeavySent::new(cfg, stats)),
            "imatch" => Box::new(imatch::IMatch::new(cfg, stats)),
            "a7" => Box::new(imatch::LexRand::new(cfg, stats)),
            "a9" => Box::new(match descr {
                DescrSource::Corpus(docs) => descr::DescrWords::build(cfg, stats, docs),
                DescrSource::State(rows) => descr::DescrWords::from_state(cfg, rows),
            }),
            "a6" => Box::new(shingles::Megashingles::new(cfg)),
            "a8" => Box::new(shingles::LogShingles::new(cfg)),
            "minhash" => Box::new(shingles::MinHash::new(cfg)),
            // a11, a12 (SQL chains), spotsigs, slst (own searches) are not
            // signature methods.
            _ => continue,
        };
        methods.push(method);
    }
    methods
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_builds_known_ids_in_order_and_skips_others() {
        let ids: Vec<String> = ["a10", "minhash", "a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7"]
            .iter()
            .chain(&["a9", "imatch", "slst", "a11", "spotsigs"])
            .map(|s| s.to_string())
            .collect();
        let methods =
            build_signature_methods(&ids, &MethodsConfig::default(), &CorpusStats::default(), DescrSource::Corpus(&[]));
        let built: Vec<&str> = methods.iter().map(|m| m.id()).collect();
        assert_eq!(built, ["a10", "minhash", "a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a9", "imatch"]);
    }

    #[test]
    fn keep_strongest_keeps_each_documents_best_edges() {
        let p = |doc_a, doc_b, score| ScoredPair { doc_a, doc_b, score };
        // Document 1 ranks 1-2 (0.9), 1-3 (0.8), 1-4 (0.7); with k = 2 it
        // drops 1-4, but 4's only edge is 1-4, which 4 keeps. 2-3 (0.5) is
        // the weakest of both 2 and 3, each of which has two stronger: gone.
        let pairs = vec![p(1, 2, 0.9), p(1, 3, 0.8), p(1, 4, 0.7), p(2, 3, 0.5), p(2, 5, 0.6), p(3, 6, 0.6)];
        let kept: Vec<(u64, u64)> = keep_strongest(pairs, 2).iter().map(|p| (p.doc_a, p.doc_b)).collect();
        assert_eq!(kept, [(1, 2), (1, 3), (1, 4), (2, 5), (3, 6)]);
    }

    #[test]
    fn term_frequencies_count_occurrences() {
        let t: Vec<String> = ["beta", "alpha", "beta"].map(String::from).to_vec();
        let tf = term_frequencies(&t);
        assert_eq!((tf.len(), tf["alpha"], tf["beta"]), (2, 1, 2));
    }

    #[test]
    fn splitmix64_reference_values() {
        // First outputs of splitmix64 seeded with 0 (Vigna's reference implementation).
        let mut s = 0u64;
        assert_eq!(splitmix64(&mut s), 0xe220_a839_7b1d_cdaf);
        assert_eq!(splitmix64(&mut s), 0x6e78_9e6a_a1b9_65f4);
    }
}

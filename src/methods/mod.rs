//! Near-duplicate detection methods, one file per method family.
//!
//! Most methods are *signature* methods: each document gets zero or more
//! 64-bit signatures, and documents sharing a signature (same method and
//! slot) are candidate pairs; the grouping itself happens in SQL
//! (`jobs/candidates.sql`). Methods that need corpus-wide state (lexicons,
//! IDF, descriptive words) build it once in their constructor from
//! [`CorpusStats`] and expose it through [`SignatureMethod::state`], so the
//! `method_state` table can explain a run afterwards.

pub mod shingles;
pub mod slst;
pub mod spotsigs;

use std::collections::HashMap;

/// The view of one tokenized document that methods read.
#[derive(Debug, Clone, Copy)]
pub struct DocView<'a> {
    pub doc_id: u64,
    /// Kept terms in order (see [`crate::text::Tokenized`]).
    pub terms: &'a [String],
    /// Exclusive end index of each sentence in `terms`.
    pub sentence_ends: &'a [u32],
    /// All lowercased words, stop words included.
    pub words: &'a [String],
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
}

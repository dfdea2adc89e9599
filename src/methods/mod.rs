//! Near-duplicate detection methods, one file per method family.
//!
//! Most methods are *signature* methods: each document gets zero or more
//! 64-bit signatures, and documents sharing a signature (same method and
//! slot) are candidate pairs; the grouping itself happens in SQL
//! (`jobs/candidates.sql`). Methods that need corpus-wide state (lexicons,
//! IDF, descriptive words) build it once in their constructor from
//! [`CorpusStats`] and expose it through [`SignatureMethod::state`], so the
//! `method_state` table can explain a run afterwards; what they look up
//! per term is an array by term id ([`terms`]). Which methods exist,
//! and what each one writes and reads, is [`registry`]'s to say.

use anyhow::Result;
#[cfg(test)]
use foldhash::{HashMap, HashMapExt};
pub use terms::{TermCount, TermDict, TermStats};

pub mod a11;
pub mod a12;
pub mod descr;
pub mod imatch;
pub mod keyed;
pub mod minwise;
pub mod registry;
pub mod sentences;
pub mod settings;
pub mod shingles;
pub mod slst;
pub mod spotsigs;
pub mod term_ids;
pub mod terms;
pub mod token_lists;
pub mod topwords;
pub mod traits;
pub mod whole;

/// Which token lists a method reads of a document (see [`DocView`]). The
/// lists are most of a document's memory (`words` about twice `terms`), and
/// the stages that read the whole corpus (`descr_sample` for a9,
/// `search_keys`) need one of them only.
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

/// The view of one tokenized document that methods read. The stages build
/// it over the Arrow buffers of the `tokens` table
/// ([`token_lists::TokenLists`]): a word is a `&str` into them,
/// never a `String` of its own. `Default` (no tokens at all) lets tests
/// spell out only the lists a method reads.
#[derive(Debug, Clone, Copy, Default)]
pub struct DocView<'a> {
    pub doc_id: u64,
    /// Kept terms in order (see [`crate::text::Tokenized`]).
    pub terms: &'a [&'a str],
    /// Exclusive end index of each sentence in `terms`.
    pub sentence_ends: &'a [u32],
    /// All lowercased words, stop words included.
    pub words: &'a [&'a str],
    /// Per sentence, the number of words that are not stop words (see
    /// [`crate::text::Tokenized::sentence_lengths`]).
    pub sentence_lengths: &'a [u32],
    /// Per sentence, its first two non-stop words joined by a space (see
    /// [`crate::text::Tokenized::sentence_heads`]).
    pub sentence_heads: &'a [&'a str],
    /// The id of each of `terms` in the corpus's [`TermDict`]
    /// ([`term_ids::TermIds`]; empty until the stage looks them up).
    pub term_ids: &'a [u32],
    /// The distinct terms with their counts, sorted by id: what the
    /// frequency-weighted methods read instead of hashing strings.
    pub term_counts: &'a [TermCount],
}

impl<'a> DocView<'a> {
    /// The kept terms of each sentence, in document order.
    pub fn sentences(&self) -> impl Iterator<Item = &'a [&'a str]> + 'a {
        let terms = self.terms;
        let mut start = 0usize;
        self.sentence_ends.iter().map(move |&end| {
            let s = &terms[start..end as usize];
            start = end as usize;
            s
        })
    }
}

/// Corpus statistics (the `df` and `corpus_stats` tables) that global methods read.
#[derive(Debug, Clone, Default)]
pub struct CorpusStats {
    /// Number of documents N.
    pub n_docs: u64,
    /// Mean number of kept terms per document.
    pub dl_avg: f64,
    /// Per-term statistics, terms numbered in byte order.
    pub terms: TermDict,
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

/// The corpus's documents as a method's state or a pair search reads them:
/// chunk by chunk, pass after pass, in the same order each time, so that
/// no pass needs the whole corpus's token lists in memory (SpotSigs and
/// SL+ST make one, writing their encoded form of each document to disk).
pub trait DocPasses {
    /// Calls `f` with every document, a chunk at a time. A pass that cannot
    /// read its documents stops early; its reader keeps the error for the
    /// stage, which checks it afterwards.
    fn each_chunk(&self, f: &mut dyn FnMut(&[DocView<'_>]));
}

/// Documents already in memory, as one chunk (tests, benchmarks).
pub struct InMemory<'a>(pub &'a [DocView<'a>]);

impl DocPasses for InMemory<'_> {
    fn each_chunk(&self, f: &mut dyn FnMut(&[DocView<'_>])) {
        f(self.0)
    }
}

/// Documents in memory handed out `.1` at a time: tests check that a
/// method reads its passes the same whatever the chunk size.
#[cfg(test)]
pub struct Chunked<'a>(pub &'a [DocView<'a>], pub usize);

#[cfg(test)]
impl DocPasses for Chunked<'_> {
    fn each_chunk(&self, f: &mut dyn FnMut(&[DocView<'_>])) {
        self.0.chunks(self.1).for_each(f);
    }
}

/// A method that finds its pairs by a search of its own instead of by
/// equal signatures: by keys, in bounded memory ([`PairMethod::keyed`], run
/// by the stages of [`keyed`]). (SpotSigs' partitioned inverted index and
/// SL+ST's suffix array, which hold the corpus in one process, are the
/// tests' references of those searches.)
pub trait PairMethod: Send + Sync {
    /// The method id used everywhere.
    fn id(&self) -> &'static str;
    /// The token lists the search reads: only those are read.
    fn reads(&self) -> TokenParts;
    /// The search by keys that the stages `search_keys`, `search_links`
    /// and `search` run.
    fn keyed(&self) -> &dyn KeyedSearch;
}

/// A pair search in bounded memory (spec §6's sharded form of SL+ST):
/// every document gives keys, documents sharing a key are candidate pairs,
/// found by a group-by in SQL that links each member of a group to its next
/// `candidates.max_edges_per_document` members (`jobs/search_links.sql`),
/// and each candidate pair is then scored by the method from the two
/// documents' encoded forms, read back from disk ([`keyed`]). No step holds
/// more than a chunk of documents, a batch of pairs and one task's forms
/// on disk.
pub trait KeyedSearch: Send + Sync {
    /// The document's keys, size and encoded form; `None` when the
    /// document cannot be part of a pair.
    fn encode(&self, doc: &DocView<'_>) -> Option<Encoded>;
    /// A key shared by more documents gives no pairs (a template's
    /// sentences shared by a whole site).
    fn max_group_docs(&self) -> usize;
    /// Whether two documents of these sizes can be a pair at all: a bound
    /// on the score checked before either encoded form is read.
    fn may_pair(&self, size_a: u32, size_b: u32) -> bool;
    /// The method's score of a candidate pair from the encoded forms of its
    /// two documents, `None` when the pair is not proposed.
    fn score(&self, a: &[u8], b: &[u8]) -> Result<Option<f64>>;
}

/// One document as a [`KeyedSearch`] gives it.
pub struct Encoded {
    /// Its keys, distinct.
    pub keys: Vec<u64>,
    /// Its size as the method measures it (sentences, spot signatures):
    /// a key's group is chained in size order, and [`KeyedSearch::may_pair`]
    /// reads it.
    pub size: u32,
    /// The bytes [`KeyedSearch::score`] reads.
    pub form: Vec<u8>,
}

/// The bound every method's candidate edges keep,
/// `candidates.max_edges_per_document`, as each step that applies it reads
/// it: the `${max_edges}` of the SQL jobs and the chains of the keyed
/// searches (stage `search_groups`, `crate::stages::search`). Made once, from the setting
/// ([`settings::CandidatesConfig::edge_bound`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EdgeBound {
    per_document: usize,
}

impl EdgeBound {
    /// At most `max_edges_per_document` edges per document (at least one:
    /// the configuration refuses 0).
    pub fn new(max_edges_per_document: u32) -> EdgeBound {
        EdgeBound { per_document: usize::try_from(max_edges_per_document.max(1)).unwrap_or(usize::MAX) }
    }

    /// The number of edges each document may keep (per method).
    pub fn per_document(self) -> usize {
        self.per_document
    }
}

/// The number of occurrences of each distinct term of a document, by
/// string: the tests' references count with it. The stages read the same
/// counts by term id ([`DocView::term_counts`]).
#[cfg(test)]
pub fn term_frequencies<'a>(terms: &[&'a str]) -> HashMap<&'a str, u32> {
    let mut tf: HashMap<&str, u32> = HashMap::with_capacity(terms.len());
    for t in terms {
        *tf.entry(*t).or_insert(0) += 1;
    }
    tf
}

/// One step of the splitmix64 generator (defined in [`minwise`], which
/// compiles alone): methods that need seeded randomness use it instead of
/// an external crate so that a seed gives the same stream in every build.
pub use minwise::splitmix64;

/// `strings` as the borrowed lists a [`DocView`] holds, leaked: tests
/// build documents from owned words, and a test process is short.
#[cfg(test)]
pub(crate) fn leaked(strings: &[String]) -> &'static [&'static str] {
    Vec::leak(strings.iter().map(|s| &*s.clone().leak()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn term_frequencies_count_occurrences() {
        let t = ["beta", "alpha", "beta"];
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

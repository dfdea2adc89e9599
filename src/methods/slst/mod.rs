//! SL+ST, sentence lengths and a suffix structure (Feng 2015; spec §6).
//!
//! Every document becomes a string with one symbol per sentence: the
//! sentence's length in base 36 (`0`–`9`, `a`–`z`); sentences longer than
//! 35 are dropped. One suffix array over all documents' strings (each
//! followed by a separator) finds the document pairs sharing a run of at
//! least m sentence lengths. For those pairs the shared blocks are verified
//! sentence by sentence on the first two words of each sentence; a failing
//! sentence splits a block and blocks shorter than 2 are dropped. A pair is
//! proposed if a verified block has at least m sentences, scored by the
//! sentence Jaccard `matched / (|A| + |B| - matched)`. The suffix array
//! needs the whole corpus in one process: the pipeline runs spec §6's
//! equivalent by keys instead ([`KeyedSearch`]: runs of m sentences as
//! keys, the pairs scored by the same verified blocks), and the suffix
//! array is its test reference (`reference.rs`, compiled for tests only).
//!
//! A sentence's length is the seed's (003, §2.1):
//!
//! > 去除每個句子中的停用詞(stop word)后,統(tǒng)計每個句子剩余的單詞個數(shù),即句子長度。
//! > ("After removing the stop words of each sentence, count the words left
//! > in it: that is the sentence length.")
//!
//! So only stop words go; short words count ("Bob ran far." has length 3),
//! and the first two words kept for verification are the first two
//! non-stop words. The stop list is the tokenizer's: the document
//! language's list of [`crate::text::stop_words`] (NLTK's where it has
//! one, English ∪ Russian when the language is unknown; none with `[text]
//! remove_stop_words = false`), the same words that leave `terms`. The tokens stage stores both per sentence
//! (`sentence_lengths`, `sentence_heads`), so SL+ST loads neither `terms`
//! nor `words`. `[methods] slst_sentence_words = "terms"` counts the kept
//! terms instead (short words removed too), the rule of earlier runs.

use super::{DocView, Encoded, KeyedSearch, PairMethod, TokenParts};
use crate::methods::traits::FamilySettings;
use crate::settings::Problems;
use serde::{Deserialize, Serialize};
use std::collections::BinaryHeap;
use xxhash_rust::xxh3::xxh3_64;

/// Longest sentence that still gets a symbol (`z`).
pub const MAX_SENTENCE_LEN: usize = 35;

/// The symbol of a sentence of `len` kept terms: `0`–`9` for 0–9, `a`–`z`
/// for 10–35, `None` (sentence dropped) above 35.
pub fn encode_length(len: usize) -> Option<u8> {
    match len {
        0..=9 => Some(b'0' + len as u8),
        10..=MAX_SENTENCE_LEN => Some(b'a' + (len - 10) as u8),
        _ => None,
    }
}

/// One document as SL+ST sees it: the sentence-length string and, for every
/// encoded sentence, the fingerprint of its first two words (`xxh3_64` of
/// them joined by a space; fewer words if the sentence is shorter, the empty
/// string for an empty sentence), used to verify matched blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentenceString {
    symbols: Vec<u8>,
    keys: Vec<u64>,
    /// The sentence positions ordered by class (symbol, key), then
    /// position, so each class's positions are one run: [`anchors`] merges
    /// two documents' orders. Built once per document: [`verified_blocks`]
    /// runs for every candidate pair and would otherwise sort both
    /// documents again each time. Four bytes per sentence, where a map of
    /// classes took tens (SL+ST holds every document's at once).
    by_class: Vec<u32>,
}

impl SentenceString {
    /// Builds the string from the document's sentences, counting the
    /// words `rule` names: the non-stop words ([`DocView::sentence_lengths`]
    /// and [`DocView::sentence_heads`]) or the kept terms
    /// ([`DocView::sentences`]).
    pub fn from_view(doc: &DocView<'_>, rule: SlstSentenceWords) -> SentenceString {
        let mut symbols = Vec::new();
        let mut keys = Vec::new();
        let mut push = |len: usize, head: &str| {
            if let Some(symbol) = encode_length(len) {
                symbols.push(symbol);
                keys.push(xxh3_64(head.as_bytes()));
            }
        };
        match rule {
            SlstSentenceWords::NoStopWords => {
                for (&len, head) in doc.sentence_lengths.iter().zip(doc.sentence_heads) {
                    push(len as usize, head);
                }
            }
            SlstSentenceWords::Terms => {
                for sentence in doc.sentences() {
                    push(sentence.len(), &sentence[..sentence.len().min(2)].join(" "));
                }
            }
        }
        let mut by_class: Vec<u32> = (0..symbols.len() as u32).collect();
        by_class.sort_unstable_by_key(|&i| (symbols[i as usize], keys[i as usize], i));
        SentenceString { symbols, keys, by_class }
    }

    /// The sentence-length string, e.g. `"3a07"`.
    pub fn symbols(&self) -> &str {
        std::str::from_utf8(&self.symbols).expect("base-36 symbols are ASCII")
    }

    /// Number of encoded sentences |A| (dropped sentences do not count).
    pub fn len(&self) -> usize {
        self.symbols.len()
    }

    /// True when no sentence was encoded.
    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }

    /// The string as bytes ([`SentenceString::decode`] reads them back):
    /// the sentence count (4 bytes), the symbols, the keys and the class
    /// order, little-endian; 13 bytes per sentence.
    fn encode(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(4 + 13 * self.len());
        bytes.extend((self.len() as u32).to_le_bytes());
        bytes.extend(&self.symbols);
        bytes.extend(self.keys.iter().flat_map(|k| k.to_le_bytes()));
        bytes.extend(self.by_class.iter().flat_map(|i| i.to_le_bytes()));
        bytes
    }

    /// The string [`SentenceString::encode`] wrote.
    fn decode(bytes: &[u8]) -> anyhow::Result<SentenceString> {
        let n = bytes.get(..4).map_or(0, |b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize);
        anyhow::ensure!(bytes.len() == 4 + 13 * n, "a sentence string of {} bytes for {n} sentences", bytes.len());
        let (symbols, rest) = bytes[4..].split_at(n);
        let (keys, by_class) = rest.split_at(8 * n);
        Ok(SentenceString {
            symbols: symbols.to_vec(),
            keys: keys.chunks_exact(8).map(|k| u64::from_le_bytes(k.try_into().expect("8 bytes"))).collect(),
            by_class: by_class.chunks_exact(4).map(|i| u32::from_le_bytes(i.try_into().expect("4 bytes"))).collect(),
        })
    }

    /// Sentence i of `self` and sentence j of `other` have the same length
    /// and the same first two terms.
    fn verifies(&self, i: usize, other: &SentenceString, j: usize) -> bool {
        self.symbols[i] == other.symbols[j] && self.keys[i] == other.keys[j]
    }
}

/// A verified block: `len` sentences starting at sentence `a` of the first
/// document and `b` of the second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Block {
    /// First sentence of the block in the first document.
    pub a: usize,
    /// First sentence of the block in the second document.
    pub b: usize,
    /// Number of sentences (at least 2).
    pub len: usize,
}

/// All verified blocks of two documents: the maximal runs of aligned
/// sentences (same offset in both strings) whose lengths *and* first two
/// terms agree, of at least 2 sentences, sorted by (a, b). Without a repeat
/// bound this equals taking every maximal common substring of the two length
/// strings, splitting it at each sentence failing the first-two-terms check
/// and dropping pieces shorter than 2.
///
/// Runs are found from *anchors*: aligned sentence pairs of the same class
/// (length, first-two-terms key) where the class occurs at most
/// `max_repeats` times in each document; a run is then extended both ways
/// through any agreeing sentences, frequent or not. A run made only of
/// frequent sentences (say 5,000 empty lines or table rows starting alike)
/// is not found: such runs say nothing about duplication, and enumerating
/// them costs |A|·|B| (measured: two copies of a 21,471-sentence page took
/// two minutes). The bound is `slst_max_sentence_repeats` (choice).
/// Anchors are visited in order of their position in `y`, and an anchor
/// inside the last run found on its diagonal is skipped, so every run is
/// walked once.
pub fn verified_blocks(x: &SentenceString, y: &SentenceString, max_repeats: usize) -> Vec<Block> {
    // Called for every candidate pair of documents: the class orders were
    // built once per document, and the per-diagonal ends are a plain array
    // rather than a map.
    // Per diagonal (j - i, offset by |x|), the end in y of the last run
    // found; 0 (no run) never exceeds a position.
    let mut run_end = vec![0usize; x.len() + y.len() + 1];
    let mut blocks = Vec::new();
    for (j, i) in anchors(x, y, max_repeats) {
        let (i, j) = (i as usize, j as usize);
        let diagonal = j + x.len() - i;
        if j < run_end[diagonal] {
            continue; // inside a run already found
        }
        let (mut a, mut b) = (i, j);
        while a > 0 && b > 0 && x.verifies(a - 1, y, b - 1) {
            a -= 1;
            b -= 1;
        }
        let mut len = 0;
        while a + len < x.len() && b + len < y.len() && x.verifies(a + len, y, b + len) {
            len += 1;
        }
        run_end[diagonal] = b + len;
        if len >= 2 {
            blocks.push(Block { a, b, len });
        }
    }
    blocks.sort_unstable();
    blocks
}

/// The anchors of [`verified_blocks`] as (position in y, position in x),
/// sorted: aligned sentences of one class that occurs at most
/// `max_repeats` times in each document. One merge of the two documents'
/// class orders ([`SentenceString::by_class`]), so a pair costs a walk
/// over both documents and not a lookup per sentence.
fn anchors(x: &SentenceString, y: &SentenceString, max_repeats: usize) -> Vec<(u32, u32)> {
    let class = |s: &SentenceString, k: usize| {
        let i = s.by_class[k] as usize;
        (s.symbols[i], s.keys[i])
    };
    // The end of the run of `s.by_class` that has the class at `start`.
    let run_end = |s: &SentenceString, start: usize| {
        let c = class(s, start);
        (start + 1..s.by_class.len()).find(|&k| class(s, k) != c).unwrap_or(s.by_class.len())
    };
    let mut found = Vec::new();
    let (mut p, mut q) = (0, 0);
    while p < x.by_class.len() && q < y.by_class.len() {
        match class(x, p).cmp(&class(y, q)) {
            std::cmp::Ordering::Less => p += 1,
            std::cmp::Ordering::Greater => q += 1,
            std::cmp::Ordering::Equal => {
                let (p_end, q_end) = (run_end(x, p), run_end(y, q));
                if p_end - p <= max_repeats && q_end - q <= max_repeats {
                    for &j in &y.by_class[q..q_end] {
                        found.extend(x.by_class[p..p_end].iter().map(|&i| (j, i)));
                    }
                }
                (p, q) = (p_end, q_end);
            }
        }
    }
    found.sort_unstable();
    found
}

/// Number of matched sentences of two documents, counting each sentence of
/// either document at most once: greedy tiling, longest block first (ties
/// by position); a block overlapping sentences already matched is cut to
/// its free pieces, which go back into the queue if at least 2 long. The
/// result is at most min(|A|, |B|), so the Jaccard stays in [0, 1].
pub fn matched_sentences(blocks: &[Block], len_a: usize, len_b: usize) -> usize {
    let mut used_a = vec![false; len_a];
    let mut used_b = vec![false; len_b];
    // Max-heap on length; smaller positions first among equal lengths.
    let mut heap: BinaryHeap<(usize, std::cmp::Reverse<(usize, usize)>)> =
        blocks.iter().map(|bl| (bl.len, std::cmp::Reverse((bl.a, bl.b)))).collect();
    let mut matched = 0;
    while let Some((len, std::cmp::Reverse((a, b)))) = heap.pop() {
        let free = |t: usize| !used_a[a + t] && !used_b[b + t];
        if (0..len).all(free) {
            for t in 0..len {
                used_a[a + t] = true;
                used_b[b + t] = true;
            }
            matched += len;
            continue;
        }
        let mut t = 0;
        while t < len {
            if !free(t) {
                t += 1;
                continue;
            }
            let start = t;
            while t < len && free(t) {
                t += 1;
            }
            if t - start >= 2 {
                heap.push((t - start, std::cmp::Reverse((a + start, b + start))));
            }
        }
    }
    matched
}

/// The SL+ST method.
#[derive(Debug, Clone)]
pub struct Slst {
    sentence_words: SlstSentenceWords,
    min_block: usize,
    max_group_docs: usize,
    min_jaccard: f64,
    max_sentence_repeats: usize,
}

impl Slst {
    /// Reads `slst_sentence_words` (which words make a sentence's length),
    /// `slst_min_block` (m, at least 2 since shorter blocks are
    /// dropped: [`crate::config::Config::validate`] refuses less in a job
    /// file, and less acts as 2 here), `slst_max_group_docs` (a key shared
    /// by more documents pairs none), `slst_min_jaccard` and
    /// `slst_max_sentence_repeats` (the anchor bound of [`verified_blocks`]).
    pub fn new(cfg: &SlstSettings) -> Slst {
        Slst {
            sentence_words: cfg.sentence_words,
            min_block: cfg.min_block.max(2),
            max_group_docs: cfg.max_group_docs,
            min_jaccard: cfg.min_jaccard,
            max_sentence_repeats: cfg.max_sentence_repeats,
        }
    }

    /// Verifies one candidate pair: `Some(Jaccard)` if a verified block has
    /// at least m sentences and the sentence Jaccard reaches
    /// `slst_min_jaccard`, else `None`. (The seed scores every pair with a
    /// verified block; proposing all of them would make pages that share a
    /// site template of a few sentences "near-duplicates", so a floor on the
    /// score is a documented choice: see `jobs/default.toml`.)
    pub fn score(&self, x: &SentenceString, y: &SentenceString) -> Option<f64> {
        let blocks = verified_blocks(x, y, self.max_sentence_repeats);
        if blocks.iter().all(|bl| bl.len < self.min_block) {
            return None;
        }
        let matched = matched_sentences(&blocks, x.len(), y.len());
        let jaccard = matched as f64 / (x.len() + y.len() - matched) as f64;
        (jaccard >= self.min_jaccard).then_some(jaccard)
    }
}

impl PairMethod for Slst {
    fn id(&self) -> &'static str {
        "slst"
    }

    fn reads(&self) -> TokenParts {
        match self.sentence_words {
            SlstSentenceWords::NoStopWords => TokenParts::SentenceLengths,
            SlstSentenceWords::Terms => TokenParts::Terms,
        }
    }

    fn keyed(&self) -> &dyn KeyedSearch {
        self
    }
}

/// Spec §6's sharded search: two documents share a run of at least m
/// sentences exactly when they share a run of exactly m, so a document's
/// keys are its runs of m sentences, each the fingerprint of the m symbols
/// and the m first-two-words keys (what the suffix array of the test
/// reference groups by); its size is its number of sentences, its encoded form its
/// [`SentenceString`]. A key's group is chained in size order where the
/// suffix array chains in doc_id order, so the two find the same pairs
/// when the chain bound cuts no group. A key shared by more
/// than `slst_max_group_docs` documents gives no pairs; the suffix array
/// would still pair those of them that share a longer run which is rarer,
/// the keys only if one of its m-runs is rare too.
impl KeyedSearch for Slst {
    fn encode(&self, doc: &DocView<'_>) -> Option<Encoded> {
        let s = SentenceString::from_view(doc, self.sentence_words);
        if s.len() < self.min_block {
            return None;
        }
        let m = self.min_block;
        let mut keys: Vec<u64> = (0..=s.len() - m)
            .map(|p| {
                let mut bytes = s.symbols[p..p + m].to_vec();
                bytes.extend(s.keys[p..p + m].iter().flat_map(|k| k.to_le_bytes()));
                xxh3_64(&bytes)
            })
            .collect();
        keys.sort_unstable();
        keys.dedup();
        Some(Encoded { keys, size: s.len() as u32, form: s.encode() })
    }

    fn max_group_docs(&self) -> usize {
        self.max_group_docs
    }

    /// The Jaccard `matched / (|A| + |B| - matched)` is at most
    /// `min(|A|, |B|) / max(|A|, |B|)`.
    fn may_pair(&self, size_a: u32, size_b: u32) -> bool {
        size_a.min(size_b) as f64 >= self.min_jaccard * size_a.max(size_b) as f64
    }

    fn score(&self, a: &[u8], b: &[u8]) -> anyhow::Result<Option<f64>> {
        Ok(Slst::score(self, &SentenceString::decode(a)?, &SentenceString::decode(b)?))
    }
}

/// The settings of SL+ST in `[methods]` (`slst_*`, spec §6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SlstSettings {
    /// Which words of a sentence make its length and its first-two-words
    /// key. Seed 003 removes stop words only, the default; `terms` (stop
    /// words and short words removed) is the rule of earlier runs.
    #[serde(rename = "slst_sentence_words")]
    pub sentence_words: SlstSentenceWords,
    /// Minimal verified block length m (sentences).
    #[serde(rename = "slst_min_block")]
    pub min_block: usize,
    /// A run of m sentences shared by more documents than this gives no
    /// pairs (the reference's suffix array splits such a group into its
    /// longer shared runs instead).
    #[serde(rename = "slst_max_group_docs")]
    pub max_group_docs: usize,
    /// Pairs whose sentence Jaccard is below this are not proposed
    /// (choice; measured on the shared crawl files: no pair below 0.4 and
    /// 12 of ~9,500 below 0.5 verified, while ~35,000 template-sharing
    /// pairs scored below 0.5).
    #[serde(rename = "slst_min_jaccard")]
    pub min_jaccard: f64,
    /// Sentences whose (length, first two words) occur more often than this
    /// in either document of a pair do not start a verified block (they can
    /// still lie inside one); bounds the pairwise work.
    #[serde(rename = "slst_max_sentence_repeats")]
    pub max_sentence_repeats: usize,
}

impl Default for SlstSettings {
    fn default() -> Self {
        SlstSettings {
            sentence_words: SlstSentenceWords::NoStopWords,
            min_block: 3,
            max_group_docs: 1000,
            min_jaccard: 0.5,
            max_sentence_repeats: 16,
        }
    }
}

impl FamilySettings for SlstSettings {
    fn check(&self, p: &mut Problems) {
        const S: &str = "methods";
        // Blocks shorter than 2 sentences are dropped by the method itself.
        p.at_least(S, "slst_min_block", self.min_block, 2);
        p.at_least(S, "slst_max_group_docs", self.max_group_docs, 2);
        p.within(S, "slst_min_jaccard", self.min_jaccard, 0.0, 1.0);
        p.at_least(S, "slst_max_sentence_repeats", self.max_sentence_repeats, 1);
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

#[cfg(test)]
mod reference;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::{leaked, InMemory, ScoredPair};

    /// A document given as sentences of words, none of them a stop word or
    /// a short word, so both rules see the same sentences: its terms and
    /// sentence ends, and the per-sentence lengths and heads the tokenizer
    /// stores.
    pub(super) struct Doc {
        terms: Vec<String>,
        ends: Vec<u32>,
        lengths: Vec<u32>,
        heads: Vec<String>,
    }

    impl Doc {
        pub(super) fn new(sentences: &[Vec<String>]) -> Doc {
            let mut doc = Doc { terms: Vec::new(), ends: Vec::new(), lengths: Vec::new(), heads: Vec::new() };
            for s in sentences {
                doc.terms.extend(s.iter().cloned());
                doc.ends.push(doc.terms.len() as u32);
                doc.lengths.push(s.len() as u32);
                doc.heads.push(s[..s.len().min(2)].join(" "));
            }
            doc
        }

        pub(super) fn view(&self, doc_id: u64) -> DocView<'_> {
            DocView {
                doc_id,
                terms: leaked(&self.terms),
                sentence_ends: &self.ends,
                words: leaked(&self.terms),
                sentence_lengths: &self.lengths,
                sentence_heads: leaked(&self.heads),
                ..DocView::default()
            }
        }
    }

    /// A sentence of `len` terms whose first two terms are `tag`-specific.
    pub(super) fn sentence(tag: &str, len: usize) -> Vec<String> {
        (0..len).map(|k| format!("{tag}{k}")).collect()
    }

    /// The string under the default rule, checked equal to the one of the
    /// `terms` rule (the same sentences here).
    fn string_of(sentences: &[Vec<String>]) -> SentenceString {
        let doc = Doc::new(sentences);
        let s = SentenceString::from_view(&doc.view(0), SlstSentenceWords::NoStopWords);
        assert_eq!(s, SentenceString::from_view(&doc.view(0), SlstSentenceWords::Terms));
        s
    }

    /// Tokenizes `text` as English with the default text settings.
    fn tokenize(text: &str) -> crate::text::Tokenized {
        crate::text::Normalizer::new(&crate::text::settings::TextConfig::default()).tokenize(text, "en")
    }

    fn view_of(t: &crate::text::Tokenized, doc_id: u64) -> DocView<'_> {
        DocView {
            doc_id,
            terms: leaked(&t.terms),
            sentence_ends: &t.sentence_ends,
            words: leaked(&t.words),
            sentence_lengths: &t.sentence_lengths,
            sentence_heads: leaked(&t.sentence_heads),
            ..DocView::default()
        }
    }

    #[test]
    fn sentence_length_counts_words_left_after_stop_word_removal() {
        // Seed 003: "Bob ran far." keeps bob, ran, far (no stop words,
        // though all have 3 letters): 3. "The cat sat on the mat." drops
        // the, on, the: 3. "It is." is all stop words: 0. "Seeds of the
        // big oak trees grow." drops of, the: 5.
        let t = tokenize("Bob ran far. The cat sat on the mat. It is. Seeds of the big oak trees grow.");
        let seed = SentenceString::from_view(&view_of(&t, 0), SlstSentenceWords::NoStopWords);
        assert_eq!(seed.symbols(), "3305");
        let heads = ["bob ran", "cat sat", "", "seeds big"];
        assert_eq!(seed.keys, heads.map(|h| xxh3_64(h.as_bytes())));
        // The `terms` rule also drops words of 3 letters or fewer: only
        // seeds, trees, grow are left, all in the last sentence.
        let terms = SentenceString::from_view(&view_of(&t, 0), SlstSentenceWords::Terms);
        assert_eq!(terms.symbols(), "0003");
        assert_eq!(terms.keys, ["", "", "", "seeds trees"].map(|h| xxh3_64(h.as_bytes())));
        // A 36-word sentence of short words is dropped under the seed's rule
        // and is a 0 under `terms`.
        let long = tokenize(&format!("{}. Bob ran.", vec!["Zed"; 36].join(" ")));
        assert_eq!(SentenceString::from_view(&view_of(&long, 0), SlstSentenceWords::NoStopWords).symbols(), "2");
        assert_eq!(SentenceString::from_view(&view_of(&long, 0), SlstSentenceWords::Terms).symbols(), "00");
    }

    #[test]
    fn short_words_tell_documents_apart_under_the_seed_rule() {
        // A and B differ only in their short first words; C is A plus one
        // sentence ("then", "it" are stop words: length 1).
        let a = tokenize("Bob ran far. Tom sat still. Ann ate figs. Sam got wet.");
        let b = tokenize("Jim ran far. Kim sat still. Liz ate figs. Ned got wet.");
        let c = tokenize("Bob ran far. Tom sat still. Ann ate figs. Sam got wet. Then it rained.");
        let views = [view_of(&a, 1), view_of(&b, 2), view_of(&c, 3)];
        // Seed rule: A = B = "3333", C = "33331"; the heads of A and B
        // ("bob ran" vs "jim ran", ...) all differ, so A~B has no verified
        // block; A~C matches 4 sentences: Jaccard 4 / (4 + 5 - 4) = 0.8.
        let seed = Slst::new(&SlstSettings::default());
        assert_eq!(seed.reads(), TokenParts::SentenceLengths);
        let s = |v: &DocView<'_>| SentenceString::from_view(v, SlstSentenceWords::NoStopWords);
        assert_eq!((s(&views[0]).symbols(), s(&views[1]).symbols()), ("3333", "3333"));
        assert_eq!(s(&views[2]).symbols(), "33331");
        assert_eq!(seed.find_pairs(&InMemory(&views)), vec![ScoredPair { doc_a: 1, doc_b: 3, score: 0.8 }]);
        // `terms` rule: far, sat, ran, ... are gone; A = B = "0110" with
        // keys "", "still", "figs", "": A~B is a duplicate (Jaccard 1), and
        // B~C scores 0.8 like A~C.
        let cfg = SlstSettings { sentence_words: SlstSentenceWords::Terms, ..SlstSettings::default() };
        let by_terms = Slst::new(&cfg);
        assert_eq!(by_terms.reads(), TokenParts::Terms);
        assert_eq!(SentenceString::from_view(&views[0], SlstSentenceWords::Terms).symbols(), "0110");
        assert_eq!(
            by_terms.find_pairs(&InMemory(&views)),
            vec![
                ScoredPair { doc_a: 1, doc_b: 2, score: 1.0 },
                ScoredPair { doc_a: 1, doc_b: 3, score: 0.8 },
                ScoredPair { doc_a: 2, doc_b: 3, score: 0.8 },
            ]
        );
    }

    #[test]
    fn base36_encoding() {
        assert_eq!(encode_length(0), Some(b'0'));
        assert_eq!(encode_length(9), Some(b'9'));
        assert_eq!(encode_length(10), Some(b'a'));
        assert_eq!(encode_length(17), Some(b'h'));
        assert_eq!(encode_length(35), Some(b'z'));
        assert_eq!(encode_length(36), None);
        // Lengths 0, 3, 12, 40 (dropped), 35.
        let s =
            string_of(&[sentence("a", 0), sentence("b", 3), sentence("c", 12), sentence("d", 40), sentence("e", 35)]);
        assert_eq!(s.symbols(), "03cz");
        assert_eq!(s.len(), 4);
        assert_eq!(s.keys[1], xxh3_64(b"b0 b1"));
        assert_eq!(s.keys[0], xxh3_64(b""));
        assert_eq!(string_of(&[sentence("x", 1)]).keys[0], xxh3_64(b"x0"));
    }

    #[test]
    fn failed_verification_splits_blocks() {
        let five: Vec<Vec<String>> = (0..5).map(|k| sentence(&format!("s{k}_"), 4)).collect();
        let a = string_of(&five);
        // Third sentence: same length, other first two terms => blocks 2 + 2.
        let mut third = five.clone();
        third[2] = sentence("other", 4);
        let b = string_of(&third);
        assert_eq!(a.symbols(), b.symbols());
        assert_eq!(
            verified_blocks(&a, &b, usize::MAX),
            vec![Block { a: 0, b: 0, len: 2 }, Block { a: 3, b: 3, len: 2 }]
        );
        assert_eq!(matched_sentences(&verified_blocks(&a, &b, usize::MAX), 5, 5), 4);
        // Four sentences, the 2nd and 3rd failing: pieces of 1 and 1, all dropped.
        let four = &five[..4];
        let mut broken = four.to_vec();
        broken[1] = sentence("x", 4);
        broken[2] = sentence("y", 4);
        assert!(verified_blocks(&string_of(four), &string_of(&broken), usize::MAX).is_empty());
        // A single shared sentence is no block either.
        let one = string_of(&[sentence("p", 3), sentence("q", 5)]);
        let other = string_of(&[sentence("p", 3), sentence("r", 5)]);
        assert!(verified_blocks(&one, &other, usize::MAX).is_empty());
    }

    #[test]
    fn frequent_sentences_extend_runs_but_do_not_start_them() {
        // Sentences 0..6 of class E (empty, repeated 6 times), then U1 U2
        // (unique), then E E. With at most 2 repeats, the run through U1 U2
        // is found from its unique anchors and extended over the E's on both
        // sides: one block covering all 10 sentences.
        let e = || sentence("", 0);
        let mut sents: Vec<Vec<String>> = (0..6).map(|_| e()).collect();
        sents.push(sentence("u1_", 3));
        sents.push(sentence("u2_", 4));
        sents.push(e());
        sents.push(e());
        let a = string_of(&sents);
        assert_eq!(verified_blocks(&a, &a, 2), vec![Block { a: 0, b: 0, len: 10 }]);
        // A document of E's only pairs with itself through no anchor at all.
        let only_e = string_of(&(0..6).map(|_| e()).collect::<Vec<_>>());
        assert!(verified_blocks(&only_e, &only_e, 2).is_empty());
        // Unbounded, every diagonal of E's is a run: 6 x 6 class pairs make
        // the main diagonal (len 6) and 5 + 5 shorter diagonals of len >= 2 (4 + 4 of them).
        assert_eq!(verified_blocks(&only_e, &only_e, usize::MAX).len(), 1 + 2 * 4);
        // Two copies of a long page: one block, every sentence matched.
        let long: Vec<Vec<String>> =
            (0..5000).map(|k| if k % 3 == 0 { e() } else { sentence(&format!("p{k}_"), 1 + k % 20) }).collect();
        let l = string_of(&long);
        let blocks = verified_blocks(&l, &l, 16);
        assert_eq!(blocks, vec![Block { a: 0, b: 0, len: 5000 }]);
        assert_eq!(matched_sentences(&blocks, 5000, 5000), 5000);
    }

    #[test]
    fn tiling_counts_each_sentence_once() {
        // A = X Y, B = X Y X Y: two blocks of 2 at a=0 (b=0 and b=2); only one
        // can be matched, so matched = 2 = |A|.
        let x = sentence("x", 3);
        let y = sentence("y", 4);
        let a = string_of(&[x.clone(), y.clone()]);
        let b = string_of(&[x.clone(), y.clone(), x.clone(), y.clone()]);
        let blocks = verified_blocks(&a, &b, usize::MAX);
        assert_eq!(blocks, vec![Block { a: 0, b: 0, len: 2 }, Block { a: 0, b: 2, len: 2 }]);
        assert_eq!(matched_sentences(&blocks, 2, 4), 2);
        // Overlapping blocks: the longest goes first, the other is cut to
        // its free pieces. Second block B 2..6: B 2, 3, 4 taken, B 5 free:
        // a piece of 1, dropped.
        let blocks = [Block { a: 0, b: 0, len: 5 }, Block { a: 5, b: 2, len: 4 }];
        assert_eq!(matched_sentences(&blocks, 9, 6), 5);
        let blocks = [Block { a: 0, b: 0, len: 5 }, Block { a: 5, b: 3, len: 5 }];
        // Second block B 3..8: B 3, 4 taken, B 5, 6, 7 free: a piece of 3
        // at (a 7, b 5) is matched too.
        assert_eq!(matched_sentences(&blocks, 10, 8), 8);
    }
}

//! Sentence signatures (spec §1): a4 LongSent and a5 HeavySent. A sentence
//! is represented by its kept terms joined by single spaces; the
//! `top_sentences` best sentences (ties: that string ascending) are joined in
//! alphabetical order and hashed with CRC32. Sentences without kept terms
//! never count; a document with none gets no signature.

use super::topwords::{crc32_of_sorted_join, top_by, TermWeigher, TopWordsSettings, Weighting};
use super::{CorpusStats, DocView, Signature, SignatureMethod};
use crate::methods::traits::FamilySettings;
use crate::settings::Problems;
use serde::{Deserialize, Serialize};

/// The bytes of a sentence's terms joined by single spaces, in order:
/// sentences are ranked by that string without building it.
fn joined_bytes<'a>(sentence: &'a [&'a str]) -> impl Iterator<Item = u8> + 'a {
    sentence.iter().enumerate().flat_map(|(i, t)| (i > 0).then_some(b' ').into_iter().chain(t.bytes()))
}

/// Picks the `top` best of the `scored` non-empty sentences (ties: the
/// joined string ascending) and appends the CRC32 signature (slot 0) of
/// their joined strings, or nothing when there is no sentence. A sentence
/// repeated in the document appears as often as it occurs (nothing in the
/// study merges them).
fn sign_top(scored: Vec<(&[&str], f64)>, top: usize, out: &mut Vec<Signature>) {
    if scored.is_empty() {
        return;
    }
    let best = top_by(scored, top, |a, b| b.1.total_cmp(&a.1).then_with(|| joined_bytes(a.0).cmp(joined_bytes(b.0))));
    let strings: Vec<String> = best.iter().map(|(s, _)| s.join(" ")).collect();
    out.push(Signature { slot: 0, sig: crc32_of_sorted_join(strings.iter().map(String::as_str).collect()) });
}

/// a4 LongSent: the `top_sentences` longest sentences (length = number of
/// kept terms). A "local" method: it needs no corpus statistics.
#[derive(Debug, Clone)]
pub struct LongSent {
    top_sentences: usize,
}

impl LongSent {
    /// a4 with `cfg.top_sentences` sentences.
    pub fn new(cfg: &SentenceSettings) -> Self {
        LongSent { top_sentences: cfg.top_sentences }
    }
}

impl SignatureMethod for LongSent {
    fn id(&self) -> &'static str {
        "a4"
    }

    fn sign(&self, doc: &DocView<'_>, out: &mut Vec<Signature>) {
        let scored = doc.sentences().filter(|s| !s.is_empty()).map(|s| (s, s.len() as f64)).collect();
        sign_top(scored, self.top_sentences, out);
    }
}

/// a5 HeavySent: the `top_sentences` heaviest sentences, a sentence's weight
/// being the sum of the a2 (BM25) weights `wt` of its terms, one per
/// occurrence; `wt` is the document-level weight of the term.
#[derive(Debug, Clone)]
pub struct HeavySent {
    weigher: TermWeigher,
    top_sentences: usize,
}

impl HeavySent {
    /// a5 with the a2 weights built from `stats` and `[methods] bm25_k`,
    /// `bm25_b`, and `top_sentences` sentences.
    pub fn new(weights: &TopWordsSettings, cfg: &SentenceSettings, stats: &CorpusStats) -> Self {
        HeavySent { weigher: TermWeigher::new(Weighting::TfIdf, weights, stats), top_sentences: cfg.top_sentences }
    }
}

impl SignatureMethod for HeavySent {
    fn id(&self) -> &'static str {
        "a5"
    }

    fn sign(&self, doc: &DocView<'_>, out: &mut Vec<Signature>) {
        let wt = self.weigher.weights(doc);
        // The weight of an occurrence: its term's, found among the
        // document's distinct terms (sorted by id).
        let weight = |id: &u32| doc.term_counts.binary_search_by_key(id, |c| c.id).map_or(0.0, |i| wt[i]);
        let mut start = 0usize;
        let scored = doc
            .sentence_ends
            .iter()
            .filter_map(|&end| {
                let ids = &doc.term_ids[start..end as usize];
                let terms = &doc.terms[start..end as usize];
                start = end as usize;
                (!terms.is_empty()).then(|| (terms, ids.iter().map(weight).sum()))
            })
            .collect();
        sign_top(scored, self.top_sentences, out);
    }
}

/// The setting of a4 and a5 in `[methods]` (spec §2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SentenceSettings {
    /// How many sentences make the signature.
    pub top_sentences: usize,
}

impl Default for SentenceSettings {
    fn default() -> Self {
        SentenceSettings { top_sentences: 2 }
    }
}

impl FamilySettings for SentenceSettings {
    fn check(&self, p: &mut Problems) {
        p.at_least("methods", "top_sentences", self.top_sentences, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::TermStats;

    /// Terms and sentence ends of a document given as sentences separated by '|'.
    fn doc(text: &str) -> (Vec<&str>, Vec<u32>) {
        let mut terms = Vec::new();
        let mut ends = Vec::new();
        for sentence in text.split('|') {
            terms.extend(sentence.split_whitespace());
            ends.push(terms.len() as u32);
        }
        (terms, ends)
    }

    fn sign(m: &dyn SignatureMethod, text: &str) -> Vec<Signature> {
        let (terms, ends) = doc(text);
        let view = DocView { doc_id: 3, terms: &terms, sentence_ends: &ends, words: &terms, ..Default::default() };
        let mut out = Vec::new();
        m.sign(&crate::methods::term_ids::with_ids(&[view], &stats().terms)[0], &mut out);
        out
    }

    fn expect(joined: &str) -> Vec<Signature> {
        vec![Signature { slot: 0, sig: crc32fast::hash(joined.as_bytes()) as u64 }]
    }

    /// Six sentences (one empty), 11 distinct terms each once.
    const DOC: &str = "zzzz yyyy xxxx | ffff gggg | cccc dddd eeee | | aaaa bbbb | hhhh";

    /// N = 100, dl_avg = 11 = dl, so BM25 TF = 1/(2*(0.25+0.75)+1) = 1/3 for every term.
    fn stats() -> CorpusStats {
        let mut terms = Vec::new();
        for (t, df) in [
            ("zzzz", 1),
            ("yyyy", 1),
            ("xxxx", 1),
            ("ffff", 1),
            ("gggg", 1),
            ("cccc", 50),
            ("dddd", 50),
            ("eeee", 50),
            ("aaaa", 1),
            ("bbbb", 1),
            ("hhhh", 1),
        ] {
            terms.push((t.to_string(), TermStats { df, cf: df }));
        }
        CorpusStats { n_docs: 100, dl_avg: 11.0, terms: terms.into_iter().collect() }
    }

    #[test]
    fn sentences_rank_as_their_joined_strings() {
        let sentences: [&[&str]; 6] = [&["ab", "c"], &["abc"], &["ab"], &["ab", "c", "d"], &["a", "bc"], &["b"]];
        for a in sentences {
            for b in sentences {
                assert_eq!(joined_bytes(a).cmp(joined_bytes(b)), a.join(" ").cmp(&b.join(" ")), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn a4_longest_with_ties_and_alphabetical_join() {
        // Lengths: "zzzz yyyy xxxx" 3, "cccc dddd eeee" 3, then three of 2, one of 1.
        let m = LongSent::new(&SentenceSettings::default());
        assert_eq!(sign(&m, DOC), expect("cccc dddd eeee zzzz yyyy xxxx"));
        // Three sentences of 3: the tie goes to the two alphabetically first.
        assert_eq!(
            sign(&m, "tttt uuuu vvvv | mmmm nnnn oooo | bbbb cccc dddd | pppp"),
            expect("bbbb cccc dddd mmmm nnnn oooo")
        );
    }

    #[test]
    fn a5_heaviest_with_ties_and_alphabetical_join() {
        // dl = 11 = dl_avg, every tf = 1: wt = (1/3) * ln((100 - df + 0.5)/(df + 0.5)).
        //   df 1:  ln(99.5/1.5)  = 4.19471 -> wt 1.39824
        //   df 50: ln(50.5/50.5) = 0       -> wt 0
        // Sentences: "zzzz yyyy xxxx" 3*1.39824 = 4.19471; "ffff gggg" and
        // "aaaa bbbb" 2.79647 each (tie); "cccc dddd eeee" 0; "hhhh" 1.39824.
        // Heaviest: "zzzz yyyy xxxx", then "aaaa bbbb" wins the tie by string.
        let m = HeavySent::new(&TopWordsSettings::default(), &SentenceSettings::default(), &stats());
        assert_eq!(sign(&m, DOC), expect("aaaa bbbb zzzz yyyy xxxx"));
    }

    #[test]
    fn one_sentence_is_used_and_empty_documents_have_none() {
        let long = LongSent::new(&SentenceSettings::default());
        let heavy = HeavySent::new(&TopWordsSettings::default(), &SentenceSettings::default(), &stats());
        for m in [&long as &dyn SignatureMethod, &heavy] {
            assert_eq!(sign(m, "hhhh aaaa"), expect("hhhh aaaa"), "{}", m.id());
            assert_eq!(sign(m, " | hhhh aaaa | "), expect("hhhh aaaa"), "{}", m.id());
            assert!(sign(m, "").is_empty(), "{}", m.id());
            assert!(sign(m, " | | ").is_empty(), "{}", m.id());
        }
    }
}

//! Text normalization (spec §0): sentences, words, lowercasing, stop words.
//!
//! Every method works on the output of [`Normalizer::tokenize`], so this is
//! the one place where "what is a word" and "what is a sentence" is decided.

pub mod blocks;
mod normalize;
mod stopwords;

pub use normalize::{normalize_word, Normalizer};
pub use stopwords::{stop_words, StopSet, FALLBACK_LANGUAGES};

/// One document after normalization.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tokenized {
    /// Kept terms (lowercased, stop words and short words removed), in order.
    pub terms: Vec<String>,
    /// For each sentence, the exclusive end index of its kept terms in
    /// `terms`; sentence i covers `terms[ends[i-1]..ends[i]]`. A sentence whose
    /// words were all removed is still present (empty range), because SL+ST
    /// counts it as a sentence of length 0. Sentences without any word at all
    /// (punctuation only) are not sentences.
    pub sentence_ends: Vec<u32>,
    /// Every lowercased word in order, stop words and short words included
    /// (SpotSigs needs the antecedents).
    pub words: Vec<String>,
}

impl Tokenized {
    /// The kept terms of each sentence.
    pub fn sentences(&self) -> impl Iterator<Item = &[String]> + '_ {
        let mut start = 0usize;
        self.sentence_ends.iter().map(move |&end| {
            let s = &self.terms[start..end as usize];
            start = end as usize;
            s
        })
    }

    /// The normalized text: kept terms joined by single spaces (a0 hashes it,
    /// verification compares it).
    pub fn normalized_text(&self) -> String {
        self.terms.join(" ")
    }
}

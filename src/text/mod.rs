//! Text normalization (spec §0): sentences, words, lowercasing, stop words.
//!
//! Every method works on the output of [`Normalizer::tokenize`], so this is
//! the one place where "what is a word" and "what is a sentence" is decided.

pub mod boilerplate;
mod normalize;
pub mod settings;
mod stopwords;

pub use normalize::{normalize_word, words_of_cell, Normalizer, TokenBuffers, WORD_SEPARATOR};
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
    /// For each sentence (as in `sentence_ends`), the number of its words
    /// that are not stop words, short words included: SL+ST's sentence
    /// length, which seed 003 counts after removing stop words only.
    pub sentence_lengths: Vec<u32>,
    /// For each sentence, its first two words that are not stop words,
    /// joined by a space (one word or the empty string if it has fewer):
    /// the key SL+ST verifies matched sentences with, from the same words
    /// as `sentence_lengths`.
    pub sentence_heads: Vec<String>,
}

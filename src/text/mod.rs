//! Text normalization (spec §0): sentences, words, lowercasing, stop words.
//!
//! Every method works on the output of [`Normalizer::tokenize`], so this is
//! the one place where "what is a word" and "what is a sentence" is decided.

pub mod boilerplate;
mod normalize;
pub mod settings;
mod stopwords;
mod word;

pub use normalize::{words_of_cell, Normalizer, TokenBuffers, Tokenized, WORD_SEPARATOR};
pub use stopwords::{stop_words, StopSet, FALLBACK_LANGUAGES};
pub use word::normalize_word;

//! The normalizer (spec §0 steps 2–4): text → sentences → words → terms.
//!
//! One pass over the UAX #29 word-boundary segments of the text
//! (`unicode-segmentation`): segments holding a letter or digit are words,
//! the others (spaces, punctuation) may end a sentence. Decisions, each
//! tested below:
//!
//! - **NFKC** (optional, on by default) runs before splitting: full-width
//!   `ＡＢＣ` → `abc`, `ﬁ` → `fi`, `x²` → `x2`, `…` → `...`.
//! - **Sentences** end at `.` `!` `?` `…` (a run of them counts once), at
//!   `。！？` and their half-/full-width forms, at `‼⁇⁈⁉`, at the Arabic,
//!   Urdu and Devanagari marks `؟ ۔ । ॥`, and at every line break (the HTML
//!   extractor puts each block element on its own line). `.` and `…` are
//!   *weak*: when the next word starts with a lowercase letter the sentence
//!   goes on, which keeps abbreviations ("e.g. the", "т. е. это", "approx.
//!   five") and mid-sentence ellipses together; there is no abbreviation
//!   list. Decimals never split: UAX #29 keeps `3.14`, `1,000` and
//!   `example.com` as one word. Text glued after a period (`end.Next`) is
//!   one word for the same reason. A sentence without any word
//!   (punctuation only) is not a sentence; one whose words were all removed
//!   is an empty sentence.
//! - **Words** are UAX #29 words: `don't` is one word (and `don’t`, since
//!   `’` folds to `'`), `e-mail` is `e` + `mail`, `foo_bar` is one word.
//!   **Numbers** are words like any other (`2024`, `3.14`), subject to the
//!   same length filter, because dates and prices tell documents apart.
//! - **Lowercasing** is full Unicode lowercasing (`Straße`, final sigma),
//!   plus two folds that make spelling variants equal: `’`/`ʼ` → `'` and
//!   `ё` → `е` (Russian text writes `е` for `ё` at will; the Russian stop
//!   list has `еще`, not `ещё`).
//! - **CJK** (`cjk_segmentation = "char"`): every Han, Hiragana, Katakana,
//!   Bopomofo and Hangul character is one word, with its combining marks.
//!   UAX #29 would keep a Katakana or Hangul run as one word. Short-word
//!   removal does not apply to these one-character words (it would delete
//!   all CJK text); stop-word removal does (`の`, `的`).
//! - **Removal**: stop words of `lang` (see [`crate::text::stop_words`] for
//!   the lists and the English ∪ Russian fallback of an empty or unknown
//!   code) and non-CJK words of at most `max_short_word_chars` characters
//!   (`0` keeps all) leave `terms` but stay in `words`.
//!
//! Not done: dictionary segmentation of CJK, word segmentation of Thai, Lao,
//! Khmer and Myanmar (UAX #29 cuts those per character cluster), stemming.

use crate::config::{CjkSegmentation, TextConfig};
use crate::text::stopwords::{canonical_lang, stop_words, StopSet, LANG_BUF};
use crate::text::Tokenized;
use std::collections::HashMap;
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::{is_nfkc_quick, IsNormalized, UnicodeNormalization};
use unicode_segmentation::UnicodeSegmentation;

/// Turns a document's text into [`Tokenized`] terms, sentences and words.
///
/// Built once per run from [`TextConfig`] (all stop sets are precomputed
/// there) and then shared read-only across threads: it is `Send + Sync` and
/// `tokenize` takes `&self`.
#[derive(Debug, Clone)]
pub struct Normalizer {
    remove_stop_words: bool,
    max_short_word_chars: usize,
    nfkc: bool,
    cjk: CjkSegmentation,
    /// Stop set of every language code the `stop-words` crate knows.
    stop_sets: HashMap<&'static str, StopSet>,
    /// Stop set of an empty or unknown language code.
    fallback: StopSet,
}

impl Normalizer {
    /// Builds the normalizer, precomputing the stop set of every language.
    pub fn new(cfg: &TextConfig) -> Normalizer {
        let stop_sets = ::stop_words::available_languages()
            .iter()
            .map(|&code| (code, StopSet::from_list(stop_words(code))))
            .collect();
        Normalizer {
            remove_stop_words: cfg.remove_stop_words,
            max_short_word_chars: cfg.max_short_word_chars,
            nfkc: cfg.nfkc,
            cjk: cfg.cjk_segmentation,
            stop_sets,
            // `stop_words("")` is the English ∪ Russian union.
            fallback: StopSet::from_list(stop_words("")),
        }
    }

    /// The stop words used for documents in `lang` (same code rules as
    /// [`crate::text::stop_words`]), for callers that scan
    /// [`Tokenized::words`] and need to skip stop words (SpotSigs).
    pub fn stop_set(&self, lang: &str) -> &StopSet {
        let mut buf = [0u8; LANG_BUF];
        canonical_lang(lang, &mut buf)
            .and_then(|code| self.stop_sets.get(code))
            .unwrap_or(&self.fallback)
    }

    /// Normalizes one document. `lang` is the detected ISO 639-1 code, empty
    /// when detection failed; it only selects the stop words.
    pub fn tokenize(&self, text: &str, lang: &str) -> Tokenized {
        let composed;
        let text = if self.nfkc && is_nfkc_quick(text.chars()) != IsNormalized::Yes {
            composed = text.nfkc().collect::<String>();
            composed.as_str()
        } else {
            text
        };
        let mut doc = DocBuilder {
            out: Tokenized::default(),
            in_sentence: false,
            pending: Break::None,
            stops: self.remove_stop_words.then(|| self.stop_set(lang)),
            max_short_word_chars: self.max_short_word_chars,
        };
        for segment in text.split_word_bounds() {
            if !has_alphanumeric(segment) {
                doc.pending = doc.pending.max(sentence_break(segment));
            } else if segment.is_ascii() || !segment.chars().any(is_cjk) {
                doc.word(segment, false);
            } else {
                match self.cjk {
                    CjkSegmentation::Char => doc.split_cjk_chars(segment),
                }
            }
        }
        doc.finish()
    }
}

/// Lowercases one word the way [`Normalizer::tokenize`] does: full Unicode
/// lowercase, then `’`/`ʼ` → `'` and `ё` → `е`. Public so that word lists
/// given by users (SpotSigs antecedents, say) can be matched against
/// [`Tokenized::words`].
pub fn normalize_word(word: &str) -> String {
    let lower = word.to_lowercase();
    if !lower.contains(['ё', '\u{2019}', '\u{2BC}']) {
        return lower;
    }
    lower
        .chars()
        .map(|c| match c {
            'ё' => 'е',
            '\u{2019}' | '\u{2BC}' => '\'',
            c => c,
        })
        .collect()
}

/// What the punctuation since the last word says about a sentence end.
/// Ordered: a run of marks counts as its strongest member.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Break {
    None,
    /// `.` or `…`: ends the sentence unless the next word starts lowercase.
    Weak,
    /// `!`, `?`, CJK marks, line breaks: always ends the sentence.
    Strong,
}

/// The strongest sentence break among the characters of a non-word segment.
fn sentence_break(segment: &str) -> Break {
    segment
        .chars()
        .map(|c| match c {
            '.' | '…' | '\u{FF0E}' => Break::Weak,
            '!' | '?' | '。' | '！' | '？' | '｡' | '‼' | '⁇' | '⁈' | '⁉' | '؟' | '۔' | '।'
            | '॥' => Break::Strong,
            '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}' => Break::Strong,
            _ => Break::None,
        })
        .max()
        .unwrap_or(Break::None)
}

/// Whether a UAX #29 segment is a word (the rule of `unicode_words`).
fn has_alphanumeric(s: &str) -> bool {
    s.chars().any(char::is_alphanumeric)
}

/// Characters that are one word each under `cjk_segmentation = "char"`:
/// Han (with its iteration and numeral marks), Hiragana, Katakana (with the
/// half-width forms), Bopomofo and Hangul.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x115F           // Hangul Jamo, leading consonants
        | 0x3005..=0x3007         // 々 〆 〇
        | 0x3021..=0x3029         // Hangzhou numerals
        | 0x3031..=0x3035         // kana repeat marks
        | 0x3038..=0x303C         // Han marks
        | 0x3040..=0x30FF         // Hiragana, Katakana
        | 0x3100..=0x318F         // Bopomofo, Hangul compatibility jamo
        | 0x31A0..=0x31BF         // Bopomofo extended
        | 0x31F0..=0x31FF         // Katakana phonetic extensions
        | 0x3400..=0x4DBF         // Han extension A
        | 0x4E00..=0x9FFF         // Han
        | 0xA960..=0xA97F         // Hangul Jamo extended A
        | 0xAC00..=0xD7AF         // Hangul syllables
        | 0xF900..=0xFAFF         // Han compatibility
        | 0xFF66..=0xFF9D         // half-width Katakana
        | 0xFFA0..=0xFFDC         // half-width Hangul
        | 0x1AFF0..=0x1B16F       // Kana supplements and extensions
        | 0x20000..=0x323AF       // Han extensions B–H, compatibility supplement
    )
}

/// Characters that belong to the CJK character before them: combining marks
/// (the voicing marks `゙゚`), their half-width forms, and Hangul vowel and
/// final-consonant jamo (a decomposed syllable stays one word).
fn extends_cjk(c: char) -> bool {
    is_combining_mark(c) || matches!(c as u32, 0xFF9E | 0xFF9F | 0x1160..=0x11FF | 0xD7B0..=0xD7FF)
}

/// Whether a word continues the sentence after a weak break.
fn starts_lowercase(word: &str) -> bool {
    word.chars().next().is_some_and(char::is_lowercase)
}

/// Whether `word` has at most `max` characters (without counting them all).
fn is_short(word: &str, max: usize) -> bool {
    max > 0 && word.chars().nth(max).is_none()
}

/// The state of one `tokenize` call.
struct DocBuilder<'a> {
    out: Tokenized,
    /// The current sentence has at least one word.
    in_sentence: bool,
    /// Break seen since the last word, applied when the next word comes.
    pending: Break,
    /// Stop words to remove, if removal is on.
    stops: Option<&'a StopSet>,
    max_short_word_chars: usize,
}

impl DocBuilder<'_> {
    /// Adds one word; `cjk` words are exempt from the length filter.
    fn word(&mut self, raw: &str, cjk: bool) {
        let ends = match self.pending {
            Break::None => false,
            Break::Weak => !starts_lowercase(raw),
            Break::Strong => true,
        };
        if ends {
            self.close_sentence();
        }
        self.pending = Break::None;
        self.in_sentence = true;
        let word = normalize_word(raw);
        let stop = self.stops.is_some_and(|s| s.contains(&word));
        let short = !cjk && is_short(&word, self.max_short_word_chars);
        if !stop && !short {
            self.out.terms.push(word.clone());
        }
        self.out.words.push(word);
    }

    /// Splits a word segment that contains CJK characters: each CJK character
    /// (with the marks that extend it) is a word, and each run of other
    /// characters between them is a word if it has a letter or digit.
    fn split_cjk_chars(&mut self, segment: &str) {
        let mut run_start = 0;
        let mut chars = segment.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if !is_cjk(c) {
                continue;
            }
            let run = &segment[run_start..i];
            if has_alphanumeric(run) {
                self.word(run, false);
            }
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if !extends_cjk(d) {
                    break;
                }
                end = j + d.len_utf8();
                chars.next();
            }
            if c.is_alphanumeric() {
                self.word(&segment[i..end], true);
            }
            run_start = end;
        }
        let run = &segment[run_start..];
        if has_alphanumeric(run) {
            self.word(run, false);
        }
    }

    /// Ends the current sentence if it has a word.
    fn close_sentence(&mut self) {
        if self.in_sentence {
            // A document with 2^32 terms would need well over 8 GB of text.
            self.out.sentence_ends.push(self.out.terms.len() as u32);
            self.in_sentence = false;
        }
    }

    /// Closes the last sentence and hands over the result.
    fn finish(mut self) -> Tokenized {
        self.close_sentence();
        self.out
    }
}

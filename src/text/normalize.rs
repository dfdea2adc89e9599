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
//!   (`0` keeps all) leave `terms` but stay in `words`. Each sentence also
//!   records its count of non-stop words and its first two of them
//!   (`sentence_lengths`, `sentence_heads`): SL+ST's sentence length is
//!   taken after stop-word removal only (seed 003), short words included.
//!
//! Not done: dictionary segmentation of CJK, word segmentation of Thai, Lao,
//! Khmer and Myanmar (UAX #29 cuts those per character cluster), stemming.

use crate::text::settings::{CjkSegmentation, TextConfig};
use crate::text::stopwords::{canonical_lang, stop_words, StopSet, LANG_BUF};
use crate::text::word::normalize_word;
use foldhash::HashMap;
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::{is_nfkc_quick, IsNormalized, UnicodeNormalization};
use unicode_segmentation::UnicodeSegmentation;

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
        canonical_lang(lang, &mut buf).and_then(|code| self.stop_sets.get(code)).unwrap_or(&self.fallback)
    }

    /// Normalizes one document. `lang` is the detected ISO 639-1 code, empty
    /// when detection failed; it only selects the stop words.
    pub fn tokenize(&self, text: &str, lang: &str) -> Tokenized {
        self.tokenize_compact(text, lang).to_tokenized()
    }

    /// [`Normalizer::tokenize`] in the compact form the tokens stage writes
    /// from: no `String` per word.
    pub fn tokenize_compact(&self, text: &str, lang: &str) -> TokenBuffers {
        let composed;
        let text = if self.nfkc && is_nfkc_quick(text.chars()) != IsNormalized::Yes {
            composed = text.nfkc().collect::<String>();
            composed.as_str()
        } else {
            text
        };
        let mut doc = DocBuilder::new(self, lang);
        // UAX #29 always breaks before and after a line feed (WB3a, WB3b),
        // so the text is segmented line by line, each line by the fastest
        // loop that gives its segments; the line feed itself is a strong
        // break, as its own segment would be.
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                doc.pending = Break::Strong;
            }
            if line.is_ascii() {
                doc.ascii_segments(line);
            } else {
                doc.general_segments(line, self.cjk);
            }
        }
        doc.finish()
    }
}

/// One document after normalization, in buffers: every word's text in one
/// string and lists of offsets, so that tokenizing allocates per document,
/// not per word (the allocations were the tokens stage's top cost). The
/// same content as [`Tokenized`] ([`TokenBuffers::to_tokenized`]).
#[derive(Debug, Clone, Default)]
pub struct TokenBuffers {
    /// Every lowercased word, one per line ([`WORD_SEPARATOR`] between
    /// two words): the `tokens.words` cell as it is written.
    text: String,
    /// End offset in `text` of each word.
    word_ends: Vec<u32>,
    /// Index (in the words) of each kept term.
    terms: Vec<u32>,
    /// As [`Tokenized::sentence_ends`].
    pub sentence_ends: Vec<u32>,
    /// As [`Tokenized::sentence_lengths`].
    pub sentence_lengths: Vec<u32>,
    /// Every sentence head, concatenated.
    heads: String,
    /// End offset in `heads` of each sentence's head.
    head_ends: Vec<u32>,
}

/// What separates two words in the `words` cell of `tokens`.
/// No word contains it: the text is segmented line by line, so a line feed
/// never reaches a word. (A space can: UAX #29 keeps a combining mark with
/// the space before it, and some marks are letters.)
pub const WORD_SEPARATOR: char = '\n';

/// The words of a `words` cell ([`TokenBuffers::words_text`]) in order; an
/// empty cell has none.
pub fn words_of_cell(cell: &str) -> impl Iterator<Item = &str> {
    cell.split(WORD_SEPARATOR).filter(move |_| !cell.is_empty())
}

impl TokenBuffers {
    /// Word `i`.
    fn word(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.word_ends[i - 1] as usize + WORD_SEPARATOR.len_utf8() };
        &self.text[start..self.word_ends[i] as usize]
    }

    /// Every word in order, one per line: the `words` cell.
    pub fn words_text(&self) -> &str {
        &self.text
    }

    /// Every lowercased word in order (as [`Tokenized::words`]).
    pub fn words(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        (0..self.word_ends.len()).map(|i| self.word(i))
    }

    /// The kept terms in order (as [`Tokenized::terms`]).
    pub fn terms(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.terms.iter().map(|&i| self.word(i as usize))
    }

    /// Each sentence's head (as [`Tokenized::sentence_heads`]).
    pub fn sentence_heads(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        let mut start = 0;
        self.head_ends.iter().map(move |&end| {
            let head = &self.heads[start..end as usize];
            start = end as usize;
            head
        })
    }

    /// The same document with one `String` per word.
    pub fn to_tokenized(&self) -> Tokenized {
        Tokenized {
            terms: self.terms().map(String::from).collect(),
            sentence_ends: self.sentence_ends.clone(),
            words: self.words().map(String::from).collect(),
            sentence_lengths: self.sentence_lengths.clone(),
            sentence_heads: self.sentence_heads().map(String::from).collect(),
        }
    }
}

/// Appends `word` lowercased the way [`normalize_word`] does to `out`.
fn push_normalized(out: &mut String, word: &str) {
    if word.is_ascii() {
        let start = out.len();
        out.push_str(word);
        out[start..].make_ascii_lowercase();
    } else {
        out.push_str(&normalize_word(word));
    }
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
            '!' | '?' | '。' | '！' | '？' | '｡' | '‼' | '⁇' | '⁈' | '⁉' | '؟' | '۔' | '।' | '॥' => {
                Break::Strong
            }
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
    out: TokenBuffers,
    /// The current sentence has at least one word.
    in_sentence: bool,
    /// Break seen since the last word, applied when the next word comes.
    pending: Break,
    /// Stop words to remove, if removal is on.
    stops: Option<&'a StopSet>,
    max_short_word_chars: usize,
    /// Non-stop words of the current sentence so far; its first two are
    /// appended to `out.heads` as they come.
    sentence_length: u32,
}

impl<'a> DocBuilder<'a> {
    /// The state at the start of a document in language `lang`.
    fn new(normalizer: &'a Normalizer, lang: &str) -> Self {
        DocBuilder {
            out: TokenBuffers::default(),
            in_sentence: false,
            pending: Break::None,
            stops: normalizer.remove_stop_words.then(|| normalizer.stop_set(lang)),
            max_short_word_chars: normalizer.max_short_word_chars,
            sentence_length: 0,
        }
    }

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
        if !self.out.word_ends.is_empty() {
            self.out.text.push(WORD_SEPARATOR);
        }
        let start = self.out.text.len();
        push_normalized(&mut self.out.text, raw);
        let word = &self.out.text[start..];
        let stop = self.stops.is_some_and(|s| s.contains(word));
        let short = !cjk && is_short(word, self.max_short_word_chars);
        if !stop {
            self.sentence_length += 1;
            if self.sentence_length <= 2 {
                if self.sentence_length == 2 {
                    self.out.heads.push(' ');
                }
                self.out.heads.push_str(word);
            }
        }
        if !stop && !short {
            self.out.terms.push(self.out.word_ends.len() as u32);
        }
        // A document's text is below 2 GB (an Arrow Utf8 value's limit).
        self.out.word_ends.push(self.out.text.len() as u32);
    }

    /// The loop of [`Normalizer::tokenize`] over the UAX #29 segments of
    /// `text`: a segment without a letter or digit can end a sentence, one
    /// with CJK characters is split per character, any other is a word.
    fn general_segments(&mut self, text: &str, cjk: CjkSegmentation) {
        for segment in text.split_word_bounds() {
            if !has_alphanumeric(segment) {
                self.pending = self.pending.max(sentence_break(segment));
            } else if segment.is_ascii() || !segment.chars().any(is_cjk) {
                self.word(segment, false);
            } else {
                match cjk {
                    CjkSegmentation::Char => self.split_cjk_chars(segment),
                }
            }
        }
    }

    /// [`DocBuilder::general_segments`] for ASCII text, through
    /// `unicode_word_indices`, which has an ASCII fast path that
    /// `split_word_bounds` lacks (its table lookups were the tokens stage's
    /// top cost). The UAX #29 segments between two words have no letter or
    /// digit, and the strongest break among their characters is the
    /// strongest among the segments, so the result is the same (checked
    /// against the general loop by `ascii_fast_path_equals_the_general_loop`).
    fn ascii_segments(&mut self, text: &str) {
        let mut last_end = 0;
        for (start, word) in text.unicode_word_indices() {
            self.pending = self.pending.max(sentence_break(&text[last_end..start]));
            self.word(word, false);
            last_end = start + word.len();
        }
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
            self.out.sentence_lengths.push(std::mem::take(&mut self.sentence_length));
            self.out.head_ends.push(self.out.heads.len() as u32);
            self.in_sentence = false;
        }
    }

    /// Closes the last sentence and hands over the result.
    fn finish(mut self) -> TokenBuffers {
        self.close_sentence();
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kept terms of each sentence (the stages read them through
    /// [`crate::methods::DocView::sentences`]).
    fn sentences(t: &Tokenized) -> Vec<&[String]> {
        let mut start = 0usize;
        t.sentence_ends
            .iter()
            .map(|&end| {
                let s = &t.terms[start..end as usize];
                start = end as usize;
                s
            })
            .collect()
    }

    /// The default configuration: stop words on, words of ≤ 3 chars off, NFKC.
    fn default_cfg() -> TextConfig {
        TextConfig::default()
    }

    /// Nothing removed, so `terms` shows the splitting alone.
    fn keep_all() -> TextConfig {
        TextConfig { remove_stop_words: false, max_short_word_chars: 0, ..TextConfig::default() }
    }

    fn tok(cfg: &TextConfig, text: &str, lang: &str) -> Tokenized {
        Normalizer::new(cfg).tokenize(text, lang)
    }

    /// Terms, sentence ends and words of a result, the parts most tests check
    /// (SL+ST's per-sentence counts have tests of their own).
    type Core = (Vec<String>, Vec<u32>, Vec<String>);

    fn core(t: &Tokenized) -> Core {
        (t.terms.clone(), t.sentence_ends.clone(), t.words.clone())
    }

    /// Builds the expected value from space-separated words.
    fn expect(terms: &str, ends: &[u32], words: &str) -> Core {
        let split = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        (split(terms), ends.to_vec(), split(words))
    }

    #[test]
    fn normalizer_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Normalizer>();
    }

    #[test]
    fn english_sentences() {
        let t = tok(&default_cfg(), "The quick brown fox jumps over the lazy dog. It was not amused!", "en");
        assert_eq!(
            core(&t),
            expect(
                "quick brown jumps lazy amused",
                &[4, 5],
                "the quick brown fox jumps over the lazy dog it was not amused",
            )
        );
        assert_eq!(t.terms.join(" "), "quick brown jumps lazy amused");
        let sentences = sentences(&t);
        assert_eq!(sentences, [&t.terms[0..4], &t.terms[4..5]]);
    }

    #[test]
    fn russian_sentences_with_yo_folding() {
        let t = tok(&default_cfg(), "Мама мыла раму. Кот спал на окне!\nЁлка стоит ещё здесь.", "ru");
        assert_eq!(
            core(&t),
            expect(
                "мама мыла раму спал окне елка стоит",
                &[3, 5, 7],
                "мама мыла раму кот спал на окне елка стоит еще здесь",
            )
        );
    }

    #[test]
    fn chinese_is_one_word_per_character() {
        let t = tok(&default_cfg(), "我爱北京天安门。天安门上太阳升！", "zh");
        // 我 is a Chinese stop word; single characters survive the length filter.
        assert_eq!(
            core(&t),
            expect("爱 北 京 天 安 门 天 安 门 上 太 阳 升", &[6, 13], "我 爱 北 京 天 安 门 天 安 门 上 太 阳 升",)
        );
    }

    #[test]
    fn japanese_is_not_one_giant_word() {
        let t = tok(&default_cfg(), "私は東京に住んでいます。カタカナも分割する", "ja");
        assert_eq!(
            core(&t),
            expect(
                "東 京 住 ま す カ タ カ ナ 分 割 す る",
                &[5, 13],
                "私 は 東 京 に 住 ん で い ま す カ タ カ ナ も 分 割 す る",
            )
        );
    }

    #[test]
    fn katakana_and_hangul_runs_split_per_character() {
        let t = tok(&keep_all(), "コーヒー 한국어", "");
        assert_eq!(core(&t), expect("コ ー ヒ ー 한 국 어", &[7], "コ ー ヒ ー 한 국 어"));
    }

    #[test]
    fn combining_voicing_mark_stays_with_its_kana() {
        let raw = TextConfig { nfkc: false, ..keep_all() };
        let t = tok(&raw, "カ\u{3099}キ", "ja");
        assert_eq!(t.words, ["カ\u{3099}", "キ"]);
        // NFKC composes it into one character.
        let t = tok(&keep_all(), "カ\u{3099}キ", "ja");
        assert_eq!(t.words, ["ガ", "キ"]);
    }

    #[test]
    fn latin_inside_russian_and_chinese() {
        let t = tok(&default_cfg(), "Купил новый iPhone вчера", "ru");
        assert_eq!(core(&t), expect("купил новый iphone вчера", &[4], "купил новый iphone вчера"));
        let t = tok(&default_cfg(), "我用iPhone拍照。", "zh");
        // 我, 用 and 照 are Chinese stop words.
        assert_eq!(core(&t), expect("iphone 拍", &[2], "我 用 iphone 拍 照"));
    }

    #[test]
    fn decimals_and_thousands_do_not_split() {
        let t = tok(&default_cfg(), "Pi is 3.14 approximately. Costs 1,000 rubles!", "en");
        assert_eq!(
            core(&t),
            expect("3.14 approximately costs 1,000 rubles", &[2, 5], "pi is 3.14 approximately costs 1,000 rubles",)
        );
    }

    #[test]
    fn numbers_are_words_filtered_by_length() {
        let t = tok(&default_cfg(), "In 2024 there were 42 cats and 7 dogs", "en");
        assert_eq!(core(&t), expect("2024 cats dogs", &[3], "in 2024 there were 42 cats and 7 dogs"));
    }

    #[test]
    fn lowercase_after_period_continues_the_sentence() {
        let t = tok(&keep_all(), "See e.g. the list. Next one", "en");
        assert_eq!(core(&t), expect("see e.g the list next one", &[4, 6], "see e.g the list next one"));
        let t = tok(&keep_all(), "Он пришёл в 5 ч. вечера. Потом ушёл", "ru");
        assert_eq!(
            core(&t),
            expect("он пришел в 5 ч вечера потом ушел", &[6, 8], "он пришел в 5 ч вечера потом ушел",)
        );
        // A digit is not lowercase: the sentence ends.
        let t = tok(&keep_all(), "Chapter one. 2 more", "en");
        assert_eq!(t.sentence_ends, [2, 4]);
    }

    #[test]
    fn runs_of_marks_and_ellipsis() {
        let t = tok(&keep_all(), "Wait... What?! Really…  Yes", "en");
        assert_eq!(core(&t), expect("wait what really yes", &[1, 2, 3, 4], "wait what really yes"));
        // NFKC turns … into ...; either way a lowercase word continues.
        for cfg in [keep_all(), TextConfig { nfkc: false, ..keep_all() }] {
            let t = tok(&cfg, "Well… maybe not", "en");
            assert_eq!(t.sentence_ends, [3]);
        }
        // ! and ? always end the sentence.
        let t = tok(&keep_all(), "What? no way", "en");
        assert_eq!(t.sentence_ends, [1, 3]);
    }

    #[test]
    fn line_breaks_end_sentences() {
        let t = tok(&keep_all(), "Title\n\n\nFirst line\r\nSecond line\n", "en");
        assert_eq!(core(&t), expect("title first line second line", &[1, 3, 5], "title first line second line"));
        // Even before a lowercase word.
        let t = tok(&keep_all(), "menu item\nother item", "en");
        assert_eq!(t.sentence_ends, [2, 4]);
    }

    #[test]
    fn punctuation_only_sentences_are_not_sentences() {
        let t = tok(&keep_all(), "!!! Hello!!! ... --- ?\n***\n\u{2014}\nWorld", "en");
        assert_eq!(core(&t), expect("hello world", &[1, 2], "hello world"));
    }

    #[test]
    fn sentences_with_all_words_removed_are_empty_ranges() {
        let t = tok(&default_cfg(), "The end. It is. Final words here.", "en");
        assert_eq!(core(&t), expect("final words", &[0, 0, 2], "the end it is final words here"));
        let sentences = sentences(&t);
        assert_eq!(sentences.len(), 3);
        assert!(sentences[0].is_empty() && sentences[1].is_empty());
    }

    #[test]
    fn sentence_lengths_drop_stop_words_only() {
        // Seed 003: a sentence's length is its word count after stop-word
        // removal, so short content words count. "Bob ran far.": bob, ran,
        // far are no English stop words but all of at most 3 letters: no
        // terms, length 3. "The cat sat on the mat.": the, on, the are stop
        // words; cat, sat, mat count: 3. "It is.": both stop words: 0.
        // "Seeds of the big oak trees grow.": of, the dropped: 5.
        let t =
            tok(&default_cfg(), "Bob ran far. The cat sat on the mat. It is. Seeds of the big oak trees grow.", "en");
        assert_eq!(
            core(&t),
            expect(
                "seeds trees grow",
                &[0, 0, 0, 3],
                "bob ran far the cat sat on the mat it is seeds of the big oak trees grow"
            )
        );
        assert_eq!(t.sentence_lengths, [3, 3, 0, 5]);
        assert_eq!(t.sentence_heads, ["bob ran", "cat sat", "", "seeds big"]);
        // One non-stop word: the head is that word.
        let t = tok(&default_cfg(), "Go to the shop!", "en");
        assert_eq!((t.sentence_lengths, t.sentence_heads), (vec![2], vec!["go shop".to_string()]));
        let t = tok(&default_cfg(), "Run!", "en");
        assert_eq!((t.sentence_lengths, t.sentence_heads), (vec![1], vec!["run".to_string()]));
        // Without stop-word removal every word counts.
        let off = TextConfig { remove_stop_words: false, ..default_cfg() };
        let t = tok(&off, "It is. The cat sat.", "en");
        assert_eq!(
            (t.sentence_lengths, t.sentence_heads),
            (vec![2, 3], vec!["it is".to_string(), "the cat".to_string()])
        );
        // Russian: "Кот спал на окне." has the stop word на: 3.
        let t = tok(&default_cfg(), "Кот спал на окне.", "ru");
        assert_eq!((t.sentence_lengths, t.sentence_heads), (vec![3], vec!["кот спал".to_string()]));
    }

    #[test]
    fn empty_and_whitespace_only_text() {
        for text in ["", " ", "  \n\t \r\n ", "\u{3000}\u{00A0}", "...!?"] {
            assert_eq!(tok(&default_cfg(), text, "en"), Tokenized::default(), "{text:?}");
            assert_eq!(tok(&keep_all(), text, ""), Tokenized::default(), "{text:?}");
        }
    }

    #[test]
    fn apostrophes_and_hyphens() {
        let text = "Don’t e-mail the well-known author's X-ray";
        let all = "don't e mail the well known author's x ray";
        assert_eq!(core(&tok(&keep_all(), text, "en")), expect(all, &[9], all));
        // don't (after folding ’) and the are stop words; e, x, ray are short.
        assert_eq!(core(&tok(&default_cfg(), text, "en")), expect("mail well known author's", &[4], all));
    }

    #[test]
    fn full_unicode_lowercase() {
        let t = tok(&keep_all(), "STRASSE Straße ÉCOLE ΟΔΟΣ ПРИВЕТ", "");
        assert_eq!(t.words, ["strasse", "straße", "école", "οδος", "привет"]);
    }

    #[test]
    fn stop_word_removal_can_be_turned_off() {
        let text = "These words remain here";
        let on = tok(&default_cfg(), text, "en");
        assert_eq!(core(&on), expect("words remain", &[2], "these words remain here"));
        let off_cfg = TextConfig { remove_stop_words: false, ..default_cfg() };
        let off = tok(&off_cfg, text, "en");
        assert_eq!(core(&off), expect("these words remain here", &[4], "these words remain here"));
    }

    #[test]
    fn short_word_filter_threshold() {
        let text = "a bb ccc dddd eeeee";
        let words = "a bb ccc dddd eeeee";
        let cfg = |n| TextConfig { remove_stop_words: false, max_short_word_chars: n, ..keep_all() };
        assert_eq!(core(&tok(&cfg(0), text, "en")), expect(words, &[5], words));
        assert_eq!(core(&tok(&cfg(3), text, "en")), expect("dddd eeeee", &[2], words));
        assert_eq!(core(&tok(&cfg(5), text, "en")), expect("", &[0], words));
        // Characters, not bytes: four Cyrillic letters are eight bytes.
        assert_eq!(tok(&cfg(3), "дом окно", "ru").terms, ["окно"]);
    }

    #[test]
    fn nfkc_folds_compatibility_forms() {
        let text = "ＡＢＣＤ ﬁnal ﬁle x² ＡＢＣ！ｎｅｘｔ";
        let t = tok(&keep_all(), text, "en");
        assert_eq!(core(&t), expect("abcd final file x2 abc next", &[5, 6], "abcd final file x2 abc next"));
        let raw = TextConfig { nfkc: false, ..keep_all() };
        let t = tok(&raw, text, "en");
        assert_eq!(
            core(&t),
            expect("ａｂｃｄ ﬁnal ﬁle x ² ａｂｃ ｎｅｘｔ", &[6, 7], "ａｂｃｄ ﬁnal ﬁle x ² ａｂｃ ｎｅｘｔ")
        );
    }

    #[test]
    fn empty_or_unknown_language_uses_english_and_russian_stop_words() {
        let text = "These кошки только sleep";
        for lang in ["", "xx", "eng"] {
            let t = tok(&default_cfg(), text, lang);
            assert_eq!(core(&t), expect("кошки sleep", &[2], "these кошки только sleep"), "{lang:?}");
        }
        // A known language uses its own list only.
        assert_eq!(tok(&default_cfg(), text, "en").terms, ["кошки", "только", "sleep"]);
        assert_eq!(tok(&default_cfg(), text, "ru").terms, ["these", "кошки", "sleep"]);
        assert_eq!(tok(&default_cfg(), text, "de").terms, ["these", "кошки", "только", "sleep"]);
        assert_eq!(tok(&default_cfg(), text, "RU-ru").terms, ["these", "кошки", "sleep"]);
    }

    #[test]
    fn stop_set_matches_tokenized_words() {
        let n = Normalizer::new(&default_cfg());
        assert!(n.stop_set("en").contains("the"));
        assert!(n.stop_set("en").contains("don't"));
        assert!(!n.stop_set("en").contains("только"));
        assert!(n.stop_set("").contains("только"));
        assert!(n.stop_set("ja").contains("の"));
    }

    #[test]
    fn cjk_segmentation_is_checked_when_the_config_is_read() {
        let c: TextConfig = toml::from_str("cjk_segmentation = \"char\"").unwrap();
        assert_eq!(c.cjk_segmentation, CjkSegmentation::Char);
        assert!(toml::from_str::<TextConfig>("cjk_segmentation = \"chars\"").is_err());
    }

    #[test]
    fn normalize_word_folds() {
        assert_eq!(normalize_word("Don’t"), "don't");
        assert_eq!(normalize_word("ЁЖИК"), "ежик");
        assert_eq!(normalize_word("Ещё"), "еще");
        assert_eq!(normalize_word("ΟΔΟΣ"), "οδος");
    }

    /// [`Normalizer::tokenize`] with its general UAX #29 loop over the whole
    /// text: the reference for the line-by-line loop and its ASCII fast path.
    fn tokenize_general(n: &Normalizer, text: &str, lang: &str) -> Tokenized {
        let composed: String = text.nfkc().collect();
        let mut doc = DocBuilder::new(n, lang);
        doc.general_segments(&composed, n.cjk);
        doc.finish().to_tokenized()
    }

    #[test]
    fn ascii_fast_path_equals_the_general_loop_on_tricky_text() {
        let n = Normalizer::new(&default_cfg());
        for text in [
            "3.14 and 1,000,000 e.g. U.S.A. can't won't... rock'n'roll _x_ a_b 12ab a1.b2 x:y",
            "End. next lower. Upper! ?? 'quoted' \"double\" \u{0b}vt\u{0c}ff\r\ncrlf ...",
            ". , ; : ' \" _ - -- --- a-b a--b 1-2 1.-2 .5 5. ,5 5,",
        ] {
            assert_eq!(n.tokenize(text, "en"), tokenize_general(&n, text, "en"), "{text:?}");
        }
    }

    proptest::proptest! {
        /// On any text, segmenting line by line (ASCII lines by the fast
        /// path) gives what the general loop over the whole text gives.
        #[test]
        fn ascii_fast_path_equals_the_general_loop(text in "[ -~\t\n\r\x0b\x0c]{0,120}|[a-c1.,:;'_ \n!?\"-]{0,80}|[a-c1. \r\n!?éÉ©\u{a0}\u{ad}\u{301}\u{2028}我カ한…。]{0,80}|\\PC{0,60}") {
            static N: std::sync::LazyLock<Normalizer> = std::sync::LazyLock::new(|| Normalizer::new(&default_cfg()));
            proptest::prop_assert_eq!(N.tokenize(&text, "en"), tokenize_general(&N, &text, "en"));
        }

        /// On any input: sentence ends are ordered and end at the last term,
        /// terms are a subsequence of words, and no word is empty.
        #[test]
        fn invariants_hold_on_any_text(text in "\\PC{0,80}|[a-zа-я我カ한 .!?…。\n-]{0,80}") {
            static N: std::sync::LazyLock<Normalizer> = std::sync::LazyLock::new(|| Normalizer::new(&default_cfg()));
            let t = N.tokenize(&text, "en");
            proptest::prop_assert!(t.sentence_ends.windows(2).all(|w| w[0] <= w[1]));
            proptest::prop_assert_eq!(t.sentence_ends.last().map_or(0, |&e| e as usize), t.terms.len());
            proptest::prop_assert!(t.words.iter().all(|w| !w.is_empty()));
            let mut words = t.words.iter();
            proptest::prop_assert!(t.terms.iter().all(|term| words.any(|w| w == term)));
            // One SL+ST length and head per sentence; a length never falls
            // below the sentence's kept terms, the lengths add up to the
            // non-stop words, and a head is empty exactly for length 0.
            proptest::prop_assert_eq!(t.sentence_lengths.len(), t.sentence_ends.len());
            proptest::prop_assert_eq!(t.sentence_heads.len(), t.sentence_ends.len());
            let terms_per_sentence = sentences(&t).into_iter().map(|s| s.len() as u32);
            proptest::prop_assert!(t.sentence_lengths.iter().zip(terms_per_sentence).all(|(&n, k)| n >= k));
            let non_stop = t.words.iter().filter(|w| !N.stop_set("en").contains(w)).count();
            proptest::prop_assert_eq!(t.sentence_lengths.iter().sum::<u32>() as usize, non_stop);
            for (&n, head) in t.sentence_lengths.iter().zip(&t.sentence_heads) {
                proptest::prop_assert_eq!(head.is_empty(), n == 0);
            }
        }

        /// The `words` cell holds the words one per line, which no word
        /// contains, so it splits back into them. The text mixes line ends
        /// with spaces that UAX #29 keeps inside a word (a space before the
        /// letter-like mark U+0903).
        #[test]
        fn words_cell_splits_back_into_the_words(text in "\\PC{0,80}|[a-z .\n\r\u{903}\u{301}\u{2028}\u{85}-]{0,80}") {
            static N: std::sync::LazyLock<Normalizer> = std::sync::LazyLock::new(|| Normalizer::new(&default_cfg()));
            let compact = N.tokenize_compact(&text, "en");
            let t = compact.to_tokenized();
            let split: Vec<String> = words_of_cell(compact.words_text()).map(String::from).collect();
            proptest::prop_assert_eq!(split, t.words);
        }
    }

    #[test]
    fn a_space_can_be_part_of_a_word_a_line_feed_cannot() {
        let t = Normalizer::new(&keep_all()).tokenize_compact("a \u{903}b\nc", "en");
        // U+0903 extends the space before it (UAX #29 WB4) and is a letter.
        assert_eq!(t.words().collect::<Vec<_>>(), ["a", " \u{903}", "b", "c"]);
        assert_eq!(t.words_text(), "a\n \u{903}\nb\nc");
    }
}

//! Stop words (spec §0 step 4): the function words of a language, which
//! carry no content and are removed from `terms`.
//!
//! The lists come from the `stop-words` crate with both of its sources
//! enabled; where both have a language, the NLTK (Snowball) list wins. The
//! Snowball lists hold function words only, whereas stopwords-iso also lists
//! content words (English "computer", "great", "home"; Russian "москва",
//! "война", "земля"), and removing those would hide real differences between
//! documents. Languages without an NLTK list (Japanese, Korean, Ukrainian, …)
//! use stopwords-iso.
//!
//! An empty or unknown language code (language detection failed, or the code
//! has no list) uses English ∪ Russian, the two lists the spec requires. The
//! scripts do not overlap, so the union removes English function words from
//! Latin text and Russian ones from Cyrillic text and touches nothing else.
//!
//! This module does not decide what a word is; [`StopSet`] matches words as
//! [`crate::text::Normalizer::tokenize`] produces them.

use crate::text::word::normalize_word;
use foldhash::HashSet;
use std::sync::LazyLock;

/// The languages whose lists make up the list of an empty or unknown
/// language code.
pub const FALLBACK_LANGUAGES: [&str; 2] = ["en", "ru"];

/// English ∪ Russian, built on first use.
static FALLBACK: LazyLock<Vec<&'static str>> =
    LazyLock::new(|| FALLBACK_LANGUAGES.iter().flat_map(|code| stop_words::get(code).iter().copied()).collect());

/// The stop list used for `lang`, as written in the source lists (not yet
/// lowercased or folded; [`StopSet`] does that).
///
/// `lang` is an ISO 639-1 code; case, surrounding spaces and a region suffix
/// (`en-US`, `ru_RU`) are ignored. An empty code, or one without a list
/// (including ISO 639-3 codes such as `eng`), gets [`FALLBACK_LANGUAGES`].
pub fn stop_words(lang: &str) -> &'static [&'static str] {
    let mut buf = [0u8; LANG_BUF];
    canonical_lang(lang, &mut buf).and_then(stop_words::lookup).unwrap_or(FALLBACK.as_slice())
}

/// Room for the longest code the crate knows (`hinglish`) and then some.
pub(crate) const LANG_BUF: usize = 16;

/// `lang` trimmed, cut at the first `-` or `_`, ASCII-lowercased into `buf`.
/// `None` when it is empty, too long or not ASCII (no list can match then).
pub(crate) fn canonical_lang<'b>(lang: &str, buf: &'b mut [u8; LANG_BUF]) -> Option<&'b str> {
    let code = lang.trim();
    let code = code.split(['-', '_']).next().unwrap_or(code);
    if code.is_empty() || code.len() > LANG_BUF || !code.is_ascii() {
        return None;
    }
    let out = &mut buf[..code.len()];
    out.copy_from_slice(code.as_bytes());
    out.make_ascii_lowercase();
    std::str::from_utf8(out).ok()
}

/// One language's stop words, normalized exactly like words are
/// ([`normalize_word`]: lowercase, `’` → `'`, `ё` → `е`), for O(1) lookups
/// of the words `tokenize` produces. Entries made of several words
/// (stopwords-iso has "может быть") can never match a single word and are
/// left out.
#[derive(Debug, Clone, Default)]
pub struct StopSet {
    words: HashSet<Box<str>>,
}

impl StopSet {
    /// Builds the set from a source list.
    pub fn from_list(list: &[&str]) -> StopSet {
        let words = list
            .iter()
            .map(|w| w.trim())
            .filter(|w| !w.is_empty() && !w.contains(char::is_whitespace))
            .map(|w| normalize_word(w).into_boxed_str())
            .collect();
        StopSet { words }
    }

    /// Whether `word` (a normalized word, as found in
    /// [`crate::text::Tokenized::words`]) is a stop word.
    pub fn contains(&self, word: &str) -> bool {
        self.words.contains(word)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_and_russian_lists_are_the_function_word_lists() {
        let en = stop_words("en");
        assert!(en.contains(&"the") && en.contains(&"don't") && en.contains(&"there"));
        // stopwords-iso would remove these content words; NLTK does not.
        assert!(!en.contains(&"computer") && !en.contains(&"great"));
        let ru = stop_words("ru");
        assert!(ru.contains(&"и") && ru.contains(&"только") && ru.contains(&"еще"));
        assert!(!ru.contains(&"москва") && !ru.contains(&"война"));
    }

    #[test]
    fn languages_without_nltk_list_use_stopwords_iso() {
        assert!(stop_words("ja").contains(&"の"));
        assert!(stop_words("zh").contains(&"的"));
    }

    #[test]
    fn empty_and_unknown_codes_fall_back_to_english_and_russian() {
        for code in ["", "  ", "xx", "eng", "not a language code at all"] {
            let list = stop_words(code);
            assert!(list.contains(&"the"), "{code:?}");
            assert!(list.contains(&"только"), "{code:?}");
            assert!(!list.contains(&"の"), "{code:?}");
        }
    }

    #[test]
    fn codes_ignore_case_spaces_and_region() {
        assert_eq!(stop_words("EN"), stop_words("en"));
        assert_eq!(stop_words(" en-US "), stop_words("en"));
        assert_eq!(stop_words("ru_RU"), stop_words("ru"));
        assert_ne!(stop_words("en"), stop_words("ru"));
    }

    #[test]
    fn stop_set_normalizes_entries_and_skips_phrases() {
        let set = StopSet::from_list(&["Ещё", "don’t", " ala ", "может быть", ""]);
        assert!(set.contains("еще"));
        assert!(set.contains("don't"));
        assert!(set.contains("ala"));
        assert!(!set.contains("может быть") && !set.contains("может"));
        assert!(!set.contains(""));
    }
}

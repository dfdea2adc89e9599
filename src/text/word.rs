//! The lowercasing of one word, shared by the normalizer (every word of a
//! document) and the stop lists (every word of a list), which must agree
//! on it for a stop word to be found.

/// Lowercases one word the way [`super::Normalizer::tokenize`] does: full Unicode
/// lowercase, then `’`/`ʼ` → `'` and `ё` → `е`. Public so that word lists
/// given by users (SpotSigs antecedents, say) can be matched against
/// [`super::Tokenized::words`].
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

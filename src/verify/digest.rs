//! The digest of a document's verification text (`tokens.text_digest`):
//! documents with equal digests have identical verification texts, so
//! every comparison between them would give similarity 1 and every method
//! the same signatures. The `exact` stage groups documents by it so that
//! only one document of each exact group goes on through the near-duplicate
//! search (spec §9, "Exact copies first").
//!
//! It is the lowercase hexadecimal MD5 of the text as [`compare`] reads it
//! for `[verify] text`, in UTF-8, so that under the default (`visible`) an
//! analyst can check it as `md5(text)` over `tokens` in SQL. MD5 is enough:
//! a collision would need a crafted page, and would only merge two groups.
//!
//! [`compare`]: crate::verify::compare

use md5::{Digest, Md5};

use crate::text::TokenBuffers;
use crate::verify::settings::VerificationText;

/// The digest of the verification text of one document, from its visible
/// text and its tokens: the text itself (`visible`), or its words or kept
/// terms joined by single spaces (`words`, `terms`), as verification
/// compares them.
pub fn verification_digest(kind: VerificationText, visible: &str, tokens: &TokenBuffers) -> String {
    let mut md5 = Md5::new();
    match kind {
        VerificationText::Visible => md5.update(visible.as_bytes()),
        VerificationText::Words => joined(&mut md5, tokens.words()),
        VerificationText::Terms => joined(&mut md5, tokens.terms()),
    }
    md5.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Feeds `items` joined by single spaces, without building the string.
fn joined<'a>(md5: &mut Md5, items: impl Iterator<Item = &'a str>) {
    for (i, item) in items.enumerate() {
        if i > 0 {
            md5.update(b" ");
        }
        md5.update(item.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::Normalizer;

    /// Values from `printf %s TEXT | md5sum`.
    #[test]
    fn digests_are_the_md5_of_the_compared_text() {
        let normalizer = Normalizer::new(&Default::default());
        let visible = "the mayor opened 12 new schools";
        let tokens = normalizer.tokenize_compact(visible, "en");
        // printf %s 'the mayor opened 12 new schools' | md5sum
        let text = verification_digest(VerificationText::Visible, visible, &tokens);
        assert_eq!(text, "4f29e25eda1880ef3a69951c7283823e");
        let words: Vec<&str> = tokens.words().collect();
        let terms: Vec<&str> = tokens.terms().collect();
        assert_eq!(words.join(" "), visible);
        assert_eq!(terms.join(" "), "mayor opened schools");
        assert_eq!(verification_digest(VerificationText::Words, visible, &tokens), text);
        // printf %s 'mayor opened schools' | md5sum
        assert_eq!(verification_digest(VerificationText::Terms, visible, &tokens), "6edcacc73f6e8dd1dbf0ed13f5eb950d");
    }
}

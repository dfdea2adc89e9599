//! a0 MD5 (spec §1): the whole normalized text hashed, so only documents
//! whose kept terms are identical share a signature. It is the exact-match
//! baseline the other methods are compared with (precision 1.0 in the study).

use super::{digest_prefix_u64, DocView, Signature, SignatureMethod};
use md5::{Digest, Md5};

/// a0: MD5 of the normalized text (kept terms joined by single spaces), one
/// signature in slot 0; a document without terms gets none. It needs no
/// corpus state.
#[derive(Debug, Clone, Copy, Default)]
pub struct WholeMd5;

impl SignatureMethod for WholeMd5 {
    fn id(&self) -> &'static str {
        "a0"
    }

    fn sign(&self, doc: &DocView<'_>, out: &mut Vec<Signature>) {
        if doc.terms.is_empty() {
            return;
        }
        let digest = Md5::digest(doc.terms.join(" ").as_bytes());
        out.push(Signature { slot: 0, sig: digest_prefix_u64(&digest) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(s: &str) -> Vec<&str> {
        s.split_whitespace().collect()
    }

    fn sign(t: &[&str]) -> Vec<Signature> {
        let ends = [t.len() as u32];
        let doc = DocView { doc_id: 1, terms: t, sentence_ends: &ends, words: t, ..Default::default() };
        let mut out = Vec::new();
        WholeMd5.sign(&doc, &mut out);
        out
    }

    #[test]
    fn known_md5_prefix() {
        // md5("hello world") = 5eb63bbbe01eeed093cb22bb8f5acdc3; the first 8 bytes big-endian.
        assert_eq!(sign(&terms("hello world")), vec![Signature { slot: 0, sig: 0x5eb6_3bbb_e01e_eed0 }]);
    }

    #[test]
    fn equal_only_for_identical_terms() {
        let a = sign(&terms("quick brown foxes jump"));
        assert_eq!(a, sign(&terms("quick brown foxes jump")));
        assert_ne!(a, sign(&terms("brown quick foxes jump")));
        assert_ne!(a, sign(&terms("quick brown foxes")));
        assert_eq!(a.len(), 1);
    }

    #[test]
    fn no_terms_no_signature() {
        assert!(sign(&[]).is_empty());
    }
}

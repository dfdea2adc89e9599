//! The scoring step of the bounded search by keys ([`KeyedSearch`]) of the
//! methods that find their pairs by a search of their own (SpotSigs,
//! SL+ST): one document's candidate pairs scored from the encoded forms.
//! The four stages that run the search, with its tables and its SQL, are
//! `crate::stages::search`; this is the pure code they hand the forms to.

use anyhow::Result;

use super::{KeyedSearch, ScoredPair};
use crate::storage::spilled_docs::SpilledDocs;

/// The pairs of one document `a` (`pairs`, all (a, _)) that the method
/// proposes, with their scores; the size bound first, then `a`'s form read
/// once. A document without an encoded form pairs nothing.
pub fn score_pairs(search: &dyn KeyedSearch, encoded: &SpilledDocs, pairs: &[(u64, u64)]) -> Result<Vec<ScoredPair>> {
    let mut scored = Vec::new();
    let Some(size_a) = pairs.first().and_then(|&(a, _)| encoded.size(a)) else {
        return Ok(scored);
    };
    let mut a_form = None;
    for &(a, b) in pairs {
        if !encoded.size(b).is_some_and(|size_b| search.may_pair(size_a, size_b)) {
            continue;
        }
        if a_form.is_none() {
            a_form = encoded.get(a)?;
        }
        let (Some(x), Some(y)) = (&a_form, encoded.get(b)?) else { continue };
        if let Some(score) = search.score(x, &y)? {
            scored.push(ScoredPair { doc_a: a.min(b), doc_b: a.max(b), score });
        }
    }
    Ok(scored)
}

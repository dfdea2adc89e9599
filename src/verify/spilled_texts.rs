//! Verification texts read back from the file a verify stage spilled them
//! to (`crate::stages::verify::inputs::spill_verification_texts`): a task
//! keeps an offset per document in memory instead of its text, and reads
//! each batch's texts once, in parallel, as the comparisons take them.

use anyhow::{Context, Result};
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

use crate::storage::spilled_docs::SpilledDocs;
use crate::verify::compare::Doc;

/// The verification text of `doc_id` from
/// [`crate::stages::verify::inputs::spill_verification_texts`];
/// empty when the document has none (no `tokens` row), as the users of
/// `crate::stages::verify::inputs::load_verification_texts` take a
/// missing text.
pub fn spilled_verification_text(texts: &SpilledDocs, doc_id: u64) -> Result<String> {
    match texts.get(doc_id)? {
        Some(bytes) => String::from_utf8(bytes)
            .with_context(|| format!("the spilled verification text of document {doc_id} is not UTF-8")),
        None => Ok(String::new()),
    }
}

/// The documents `ids` (in any order, repeats allowed) read from
/// [`crate::stages::verify::inputs::spill_verification_texts`]'s file in parallel, each once, as
/// verification compares them (a missing text is the empty one).
pub fn spilled_docs(texts: &SpilledDocs, ids: impl IntoIterator<Item = u64>) -> Result<HashMap<u64, Arc<Doc>>> {
    let mut ids: Vec<u64> = ids.into_iter().collect();
    ids.sort_unstable();
    ids.dedup();
    ids.par_iter()
        .map(|&id| Ok((id, Arc::new(Doc::new(id, String::new(), spilled_verification_text(texts, id)?)))))
        .collect()
}

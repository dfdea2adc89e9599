//! What verification reads from the tables, for `verify`, `place`,
//! `evaluate` and the history's match: the methods of the candidate edges
//! ([`CandidateMethods`]), and the verification text of a document, read
//! into memory or spilled to a file on disk (for `verify`, whose tasks read
//! the texts of their share of the pairs, back through
//! [`crate::verify::spilled_texts`]). The comparison itself is
//! [`crate::verify::compare`]'s.

use anyhow::Result;
use arrow::array::{Array, AsArray, RecordBatch, UInt64Array};
use arrow::datatypes::{DataType, Field, Schema};
use futures::StreamExt;
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use crate::storage::spilled_docs::{SpillWriter, SpilledDocs};
use crate::tables::columns::{candidates, tokens};
use crate::text::WORD_SEPARATOR;
use crate::verify::candidate_methods::CandidateMethods;
use crate::verify::settings::VerificationText;

/// The distinct methods of the `candidates` table (at most 64), as the
/// bits of [`CandidateMethods`].
pub async fn load_candidate_methods(session: &datafusion::prelude::SessionContext) -> Result<CandidateMethods> {
    let mut methods: Vec<String> = Vec::new();
    for b in session.sql("SELECT DISTINCT method FROM candidates ORDER BY method").await?.collect().await? {
        let m = candidates::method(&b)?;
        methods.extend((0..b.num_rows()).map(|i| m.value(i).to_string()));
    }
    CandidateMethods::new(methods)
}

/// Calls `row` with the verification text of each document of `tokens`
/// that `wanted` accepts: the visible text (`tokens.text`), or the words or
/// kept terms joined by single spaces. The one reading of the texts,
/// streamed batch by batch, so that a caller can keep them where it wants
/// (a map, or a file on disk) without ever holding them twice.
///
/// Why the ids are chosen here and not by a join in SQL: under a memory
/// limit DataFusion joins by sort-merge, and a join of `tokens` with the
/// wanted ids sorted the texts themselves. At 8 copies of the Javadoc crawl
/// under `--memory-limit 2G` that read peaked at 529 MB of RSS in `verify`;
/// a scan and a lookup per row hold one batch.
///
/// `predicate` (SQL over `tokens`, `TRUE` for every row) lets the engine
/// choose a few documents itself, so that only their texts reach this
/// process ([`load_verification_texts_of`]).
async fn for_each_verification_text(
    session: &datafusion::prelude::SessionContext,
    predicate: &str,
    wanted: impl Fn(u64) -> bool,
    kind: VerificationText,
    mut row: impl FnMut(u64, Cow<'_, str>) -> Result<()>,
) -> Result<()> {
    let column = match kind {
        VerificationText::Visible => "text",
        VerificationText::Words => "words",
        VerificationText::Terms => "terms",
    };
    let sql = format!("SELECT doc_id, {column} FROM tokens WHERE {predicate}");
    let mut stream = session.sql(&sql).await?.execute_stream().await?;
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        let ids = tokens::doc_id(&batch)?;
        let rows: Vec<usize> = (0..batch.num_rows()).filter(|&i| wanted(ids.value(i))).collect();
        match kind {
            VerificationText::Visible => {
                let text = tokens::text(&batch)?;
                for &i in &rows {
                    row(ids.value(i), Cow::Borrowed(text.value(i)))?;
                }
            }
            // One word per line in the table, one space between two here.
            VerificationText::Words => {
                crate::methods::token_lists::require_lists(&batch, &["words"])?;
                let words = tokens::words(&batch)?;
                for &i in &rows {
                    row(ids.value(i), Cow::Owned(words.value(i).replace(WORD_SEPARATOR, " ")))?;
                }
            }
            VerificationText::Terms => {
                let lists = tokens::terms(&batch)?;
                for &i in &rows {
                    let list = lists.value(i);
                    let terms = list.as_string::<i32>();
                    let joined: Vec<&str> = (0..terms.len()).map(|k| terms.value(k)).collect();
                    row(ids.value(i), Cow::Owned(joined.join(" ")))?;
                }
            }
        }
    }
    Ok(())
}

/// Reads the verification texts of the documents `wanted` accepts into
/// memory: the visible text (`tokens.text`), or the words or kept terms
/// joined by single spaces.
pub async fn load_verification_texts(
    session: &datafusion::prelude::SessionContext,
    wanted: impl Fn(u64) -> bool,
    kind: VerificationText,
) -> Result<HashMap<u64, String>> {
    let mut texts = HashMap::new();
    for_each_verification_text(session, "TRUE", wanted, kind, |id, text| {
        texts.insert(id, text.into_owned());
        Ok(())
    })
    .await?;
    Ok(texts)
}

/// Ids per query of [`load_verification_texts_of`]: the `IN` list stays a
/// small plan to send to the engine.
const IDS_PER_QUERY: usize = 8_192;

/// The verification texts of the documents `ids` (as
/// [`load_verification_texts`]), chosen by the engine: each query's `IN`
/// list goes to where `tokens` is scanned, and only these texts come back.
/// For a stage whose process only drives the engine (`evaluate` with
/// `--engine ballista://…`) and needs a bounded number of texts.
pub async fn load_verification_texts_of(
    session: &datafusion::prelude::SessionContext,
    ids: &[u64],
    kind: VerificationText,
) -> Result<HashMap<u64, String>> {
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let mut texts = HashMap::new();
    for chunk in ids.chunks(IDS_PER_QUERY) {
        let list: Vec<String> = chunk.iter().map(u64::to_string).collect();
        let predicate = format!("doc_id IN ({})", list.join(", "));
        for_each_verification_text(
            session,
            &predicate,
            |_| true,
            kind,
            |id, text| {
                texts.insert(id, text.into_owned());
                Ok(())
            },
        )
        .await?;
    }
    Ok(texts)
}

/// Writes the texts [`load_verification_texts`] reads to a file of the
/// spill folder under `out`, as UTF-8, for
/// [`crate::verify::spilled_texts::spilled_verification_text`]:
/// a `verify` task reads the documents of its share of the candidate
/// pairs in batches, and memory then keeps an offset per document instead
/// of their texts. Each record's size is its length in bytes
/// ([`SpilledDocs::size`]), so that a reader can batch by bytes before
/// reading.
pub async fn spill_verification_texts(
    session: &datafusion::prelude::SessionContext,
    wanted: impl Fn(u64) -> bool,
    kind: VerificationText,
    out: &Path,
) -> Result<SpilledDocs> {
    let mut writer = SpillWriter::create(out, "verify-texts")?;
    for_each_verification_text(session, "TRUE", wanted, kind, |id, text| {
        writer.push_sized(id, u32::try_from(text.len()).unwrap_or(u32::MAX), text.as_bytes())
    })
    .await?;
    writer.finish()
}

/// Registers `ids` as a one-column table `name(doc_id)`, so that SQL can
/// select a task's documents by a join instead of a giant IN list.
pub fn register_doc_ids(session: &datafusion::prelude::SessionContext, name: &str, ids: Vec<u64>) -> Result<()> {
    let schema = Arc::new(Schema::new(vec![Field::new("doc_id", DataType::UInt64, false)]));
    let batch = RecordBatch::try_new(schema, vec![Arc::new(UInt64Array::from(ids))])?;
    session.register_batch(name, batch)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::spilled_texts::spilled_verification_text;

    /// The map and the spilled file hold the same text of each kind, and a
    /// document without a `tokens` row has the empty text in both.
    #[test]
    fn spilled_texts_are_the_loaded_texts() {
        use arrow::array::{ArrayRef, ListBuilder, StringArray, StringBuilder};
        let mut terms = ListBuilder::new(StringBuilder::new());
        for list in [&["naïve", "term"][..], &[]] {
            for t in list {
                terms.values().append_value(t);
            }
            terms.append(true);
        }
        let batch = RecordBatch::try_from_iter([
            ("doc_id", Arc::new(UInt64Array::from(vec![1u64, 2])) as ArrayRef),
            ("text", Arc::new(StringArray::from(vec!["Naïve text.", ""]))),
            ("words", Arc::new(StringArray::from(vec!["naïve\ntext", "word"]))),
            ("terms", Arc::new(terms.finish())),
        ])
        .unwrap();
        let session = datafusion::prelude::SessionContext::new();
        session.register_batch("tokens", batch).unwrap();
        let out = std::env::temp_dir().join(format!("neardup-verification-{}", std::process::id()));
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let expected = [
            (VerificationText::Visible, ["Naïve text.", ""]),
            (VerificationText::Words, ["naïve text", "word"]),
            (VerificationText::Terms, ["naïve term", ""]),
        ];
        for (kind, texts) in expected {
            let (loaded, spilled) = runtime.block_on(async {
                let loaded = load_verification_texts(&session, |id| id < 3, kind).await.unwrap();
                let chosen = load_verification_texts_of(&session, &[2, 1, 2, 5], kind).await.unwrap();
                assert_eq!(chosen, loaded);
                (loaded, spill_verification_texts(&session, |id| id < 3, kind, &out).await.unwrap())
            });
            assert_eq!(loaded, HashMap::from([(1, texts[0].to_string()), (2, texts[1].to_string())]));
            for id in [1, 2] {
                assert_eq!(spilled_verification_text(&spilled, id).unwrap(), loaded[&id]);
            }
            assert_eq!(spilled_verification_text(&spilled, 3).unwrap(), "");
        }
        let _ = std::fs::remove_dir_all(out);
    }
}

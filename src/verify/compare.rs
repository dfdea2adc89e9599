//! Verification shared by the `verify` and `evaluate` stages: the
//! candidate edges as one map, the verification text of a document (read
//! into memory, or spilled to a file on disk for `verify`), and the
//! comparison with its cheap bounds.
//!
//! The similarity is spec §9's `2·LCS/(|a|+|b|)` over the verification
//! text (`[verify] text`: by default the visible text without the host's
//! boilerplate, see [`crate::text::boilerplate`]), computed exactly or as Perl's
//! `String::Similarity` computes it (`[verify] algorithm`). Before any LCS,
//! two bounds reject what cannot reach the threshold: the length bound
//! `2·min(|a|,|b|)/(|a|+|b|)` and the character-multiset bound (LCS ≤ Σ
//! over characters of the smaller of the two counts); they bound the Perl
//! module's value too, which is never above the exact one. Each similarity is
//! computed at most once, stopping as soon as it is certain to stay below
//! the threshold.

use anyhow::{Context, Result};
use arrow::array::{Array, AsArray, RecordBatch, UInt64Array};
use arrow::datatypes::{DataType, Field, Schema};
use futures::StreamExt;
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use crate::methods::registry::includes_comparison;
use crate::storage::spilled_docs::{SpillWriter, SpilledDocs};
use crate::tables::columns::{candidates, tokens};
use crate::text::WORD_SEPARATOR;
use crate::verify::settings::{SimilarityAlgorithm, VerificationText};

/// The distinct candidate edges: for each pair, the methods that proposed
/// it as a bit set over `methods` (sorted names).
pub struct CandidateEdges {
    /// Method ids, sorted; bit i of a mask stands for `methods[i]`.
    pub methods: Vec<String>,
    /// (doc_a, doc_b) with doc_a < doc_b → method mask.
    pub pairs: HashMap<(u64, u64), u64>,
}

impl CandidateEdges {
    /// Reads the `candidates` table. Its size is bounded by the number of
    /// documents times `max_edges_per_document` per method.
    pub async fn load(session: &datafusion::prelude::SessionContext) -> Result<CandidateEdges> {
        let mut methods: Vec<String> = Vec::new();
        for b in session.sql("SELECT DISTINCT method FROM candidates ORDER BY method").await?.collect().await? {
            let m = candidates::method(&b)?;
            methods.extend((0..b.num_rows()).map(|i| m.value(i).to_string()));
        }
        anyhow::ensure!(methods.len() <= 64, "more than 64 methods in candidates");
        let mut pairs: HashMap<(u64, u64), u64> = HashMap::new();
        let mut stream = session.sql("SELECT doc_a, doc_b, method FROM candidates").await?.execute_stream().await?;
        while let Some(batch) = stream.next().await {
            let batch = batch?;
            let (a, b, m) = (candidates::doc_a(&batch)?, candidates::doc_b(&batch)?, candidates::method(&batch)?);
            for i in 0..batch.num_rows() {
                let bit = methods.binary_search_by(|x| x.as_str().cmp(m.value(i))).unwrap_or(0);
                *pairs.entry((a.value(i), b.value(i))).or_default() |= 1u64 << bit;
            }
        }
        Ok(CandidateEdges { methods, pairs })
    }

    /// The sorted method names of a mask.
    pub fn names(&self, mask: u64) -> impl Iterator<Item = &str> {
        self.methods.iter().enumerate().filter(move |(i, _)| mask >> i & 1 == 1).map(|(_, m)| m.as_str())
    }

    /// The mask of the methods that include their comparison
    /// ([`crate::methods::registry::MethodSpec::includes_comparison`]): `verify` compares every
    /// pair these methods propose.
    pub fn comparing_mask(&self) -> u64 {
        self.methods.iter().enumerate().filter(|(_, m)| includes_comparison(m)).fold(0, |mask, (i, _)| mask | 1 << i)
    }

    /// Turns the candidate pairs into the methods' found pairs: a method
    /// that includes its comparison found only the pairs whose comparison
    /// passed (`passed`: `verify`'s verdict per pair, from `duplicates`);
    /// a pair no method found any more is dropped. Every pair of such a
    /// method must have a verdict: `verify` compares them all.
    pub fn keep_found(&mut self, passed: impl Fn(&(u64, u64)) -> Option<bool>) -> Result<()> {
        let comparing = self.comparing_mask();
        if comparing == 0 {
            return Ok(());
        }
        let mut missing = None;
        self.pairs.retain(|pair, mask| {
            if *mask & comparing != 0 {
                match passed(pair) {
                    Some(true) => {}
                    Some(false) => *mask &= !comparing,
                    None => missing = Some(*pair),
                }
            }
            *mask != 0
        });
        match missing {
            Some((a, b)) => anyhow::bail!(
                "pair ({a}, {b}) of a method that includes its comparison was never compared: rerun verify"
            ),
            None => Ok(()),
        }
    }
}

/// A document as verification sees it.
pub struct Doc {
    pub doc_id: u64,
    pub url: String,
    /// The verification text (see [`load_verification_texts`]).
    text: String,
    /// Characters of `text`, and its characters with their counts, sorted:
    /// the inputs of the two cheap bounds.
    chars: usize,
    histogram: Vec<(char, u32)>,
}

impl Doc {
    /// A document and the inputs of the bounds over its text.
    pub fn new(doc_id: u64, url: String, text: String) -> Doc {
        let (chars, histogram) = char_histogram(&text);
        Doc { doc_id, url, text, chars, histogram }
    }

    /// The characters of its text: what holding it in memory costs, for a
    /// cache's bound.
    pub fn chars(&self) -> usize {
        self.chars
    }
}

/// The number of characters of `text` and each character with its count,
/// sorted by character. ASCII characters are counted in a table and only
/// the others are sorted: a document is loaded again each time verification
/// meets it after the cache dropped it, and sorting every character of
/// every load took 5.8% of `verify` at 8 copies of the Javadoc crawl and
/// 2.7% at 1 (its giant component drops and loads more often at 8).
fn char_histogram(text: &str) -> (usize, Vec<(char, u32)>) {
    let mut ascii = [0u32; 128];
    let mut others: Vec<char> = Vec::new();
    for c in text.chars() {
        match ascii.get_mut(c as usize) {
            Some(n) => *n += 1,
            None => others.push(c),
        }
    }
    others.sort_unstable();
    let chars = ascii.iter().map(|&n| n as usize).sum::<usize>() + others.len();
    // Every ASCII character sorts before every other character.
    let mut histogram: Vec<(char, u32)> =
        (0u8..128).filter(|&c| ascii[c as usize] > 0).map(|c| (char::from(c), ascii[c as usize])).collect();
    for c in others {
        match histogram.last_mut() {
            Some((last, n)) if *last == c => *n += 1,
            _ => histogram.push((c, 1)),
        }
    }
    (chars, histogram)
}

/// Why a comparison ended where it did; counted in the stage's manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The length bound is below the threshold.
    LengthBound,
    /// The character-multiset bound is below the threshold.
    CharBound,
    /// The LCS was computed (possibly stopped early below the threshold).
    Lcs,
}

/// Σ over characters of min(count in a, count in b): an upper bound of the
/// LCS, from the two sorted histograms in one merge.
fn common_chars(a: &[(char, u32)], b: &[(char, u32)]) -> usize {
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += a[i].1.min(b[j].1) as usize;
                i += 1;
                j += 1;
            }
        }
    }
    common
}

/// The similarity of two documents by `algorithm` if at least `threshold`,
/// else None; the cheap bounds first, then at most one LCS computation.
/// `a` is the Perl module's first string (its value is not symmetric).
pub fn compare(a: &Doc, b: &Doc, threshold: f64, algorithm: SimilarityAlgorithm) -> (Option<f64>, Outcome) {
    let total = a.chars + b.chars;
    let reaches = |lcs_bound: usize| total == 0 || (2 * lcs_bound) as f64 / total as f64 >= threshold;
    if !reaches(a.chars.min(b.chars)) {
        return (None, Outcome::LengthBound);
    }
    if !reaches(common_chars(&a.histogram, &b.histogram)) {
        return (None, Outcome::CharBound);
    }
    (algorithm.similarity_at_least(&a.text, &b.text, threshold), Outcome::Lcs)
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
async fn for_each_verification_text(
    session: &datafusion::prelude::SessionContext,
    wanted: impl Fn(u64) -> bool,
    kind: VerificationText,
    mut row: impl FnMut(u64, Cow<'_, str>) -> Result<()>,
) -> Result<()> {
    let column = match kind {
        VerificationText::Visible => "text",
        VerificationText::Words => "words",
        VerificationText::Terms => "terms",
    };
    let sql = format!("SELECT doc_id, {column} FROM tokens");
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
                crate::methods::inputs::tokens::require_lists(&batch, &["words"])?;
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
    for_each_verification_text(session, wanted, kind, |id, text| {
        texts.insert(id, text.into_owned());
        Ok(())
    })
    .await?;
    Ok(texts)
}

/// Writes the texts [`load_verification_texts`] reads to a file of the
/// spill folder under `out`, as UTF-8, for [`spilled_verification_text`]:
/// `verify` must reach any document of a component that may hold most of
/// the crawl, and memory then keeps an offset per document instead of the
/// crawl's texts.
pub async fn spill_verification_texts(
    session: &datafusion::prelude::SessionContext,
    wanted: impl Fn(u64) -> bool,
    kind: VerificationText,
    out: &Path,
) -> Result<SpilledDocs> {
    let mut writer = SpillWriter::create(out, "verify-texts")?;
    for_each_verification_text(session, wanted, kind, |id, text| writer.push(id, text.as_bytes())).await?;
    writer.finish()
}

/// The verification text of `doc_id` from [`spill_verification_texts`];
/// empty when the document has none (no `tokens` row), as the users of
/// [`load_verification_texts`] take a missing text.
pub fn spilled_verification_text(texts: &SpilledDocs, doc_id: u64) -> Result<String> {
    match texts.get(doc_id)? {
        Some(bytes) => String::from_utf8(bytes)
            .with_context(|| format!("the spilled verification text of document {doc_id} is not UTF-8")),
        None => Ok(String::new()),
    }
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

    fn doc(id: u64, text: &str) -> Doc {
        Doc::new(id, format!("http://t/{id}"), text.into())
    }

    /// a11 includes its comparison, a0 does not: a11's failed pairs are no
    /// longer a11's, and a pair only a11 proposed and failed is gone.
    #[test]
    fn keep_found_drops_the_failed_pairs_of_comparing_methods() {
        let (a0, a11) = (1u64, 2u64);
        let pairs = HashMap::from([((1, 2), a0 | a11), ((0, 3), a11), ((0, 1), a0), ((2, 3), a0 | a11)]);
        let mut edges = CandidateEdges { methods: vec!["a0".into(), "a11".into()], pairs };
        assert_eq!(edges.comparing_mask(), a11);
        // 1-2 passed, 0-3 and 2-3 failed; a0's 0-1 was never compared.
        let passed = HashMap::from([((1, 2), true), ((0, 3), false), ((2, 3), false)]);
        edges.keep_found(|p| passed.get(p).copied()).unwrap();
        assert_eq!(edges.pairs, HashMap::from([((1, 2), a0 | a11), ((0, 1), a0), ((2, 3), a0)]));
        // A pair of a11 without a verdict: verify did not run on these edges.
        let mut stale = CandidateEdges { methods: vec!["a11".into()], pairs: HashMap::from([((4, 5), 1)]) };
        let err = stale.keep_found(|p| passed.get(p).copied()).unwrap_err().to_string();
        assert!(err.contains("(4, 5)"), "{err}");
    }

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

    /// Counted by hand, and by an ordered map of every character on text
    /// mixing ASCII, accents, Cyrillic and CJK.
    #[test]
    fn histograms_count_every_character_in_order() {
        assert_eq!(char_histogram("baäa"), (4, vec![('a', 2), ('b', 1), ('ä', 1)]));
        assert_eq!(char_histogram(""), (0, vec![]));
        let text = "Zoë's naïve café, Ёлка и ёж; 東京の東, tab\tand\u{7f}\u{80}.";
        let mut counts = std::collections::BTreeMap::new();
        for c in text.chars() {
            *counts.entry(c).or_insert(0u32) += 1;
        }
        assert_eq!(char_histogram(text), (text.chars().count(), counts.into_iter().collect::<Vec<_>>()));
    }

    #[test]
    fn common_chars_is_the_multiset_intersection() {
        let (a, b) = (doc(1, "aabbc"), doc(2, "abbbd"));
        // a: 1 (min 2,1) + b: 2 (min 2,3) = 3.
        assert_eq!(common_chars(&a.histogram, &b.histogram), 3);
        assert_eq!(common_chars(&a.histogram, &doc(3, "").histogram), 0);
    }

    #[test]
    fn bounds_reject_before_any_lcs() {
        let long = doc(1, "abcdefghijabcdefghij");
        let exact = SimilarityAlgorithm::Exact;
        assert_eq!(compare(&long, &doc(2, "abcde"), 0.8, exact), (None, Outcome::LengthBound));
        // Same length, disjoint letters: only the character bound sees it.
        assert_eq!(compare(&long, &doc(3, "klmnopqrstklmnopqrst"), 0.8, exact), (None, Outcome::CharBound));
        // kitten/sitting: 2*4/13 = 0.615..., exact above a low threshold.
        let (k, s) = (doc(4, "kitten"), doc(5, "sitting"));
        for algorithm in [exact, SimilarityAlgorithm::StringSimilarity] {
            assert_eq!(compare(&k, &s, 0.6, algorithm), (Some(8.0 / 13.0), Outcome::Lcs));
            assert_eq!(compare(&k, &s, 0.8, algorithm).0, None);
        }
    }
}

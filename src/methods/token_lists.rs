//! A chunk of `tokens` rows as the methods read them: the Arrow batches a
//! stage read ([`crate::stages::tokens::read`]), their token lists
//! borrowed as `&str` (no `String` per word), in the form [`DocView`]
//! gives methods. Pure code over the batches: no table is opened here.

use anyhow::{Context, Result};
use arrow::array::{Array, AsArray, ListArray, RecordBatch, StringArray};
use arrow::datatypes::UInt32Type;
use std::ops::Range;

use crate::methods::DocView;
use crate::tables::column;
use crate::tables::columns::tokens;
use crate::text::words_of_cell;

/// `tokens` rows as read back: the Arrow batches themselves. Their lists
/// are borrowed, not copied into one `String` per word:
/// [`TokenChunk::lists`] points into the batches' buffers, and
/// [`TokenLists::views`] gives the [`DocView`]s methods read.
#[derive(Default)]
pub struct TokenChunk {
    batches: Vec<RecordBatch>,
}

impl TokenChunk {
    /// The chunk of these batches of `tokens` rows, in doc_id order; a list
    /// column they lack gives empty views.
    pub fn new(batches: Vec<RecordBatch>) -> Self {
        TokenChunk { batches }
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }

    /// True when the chunk has no document.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The chunk's token lists, borrowed from its batches: one `&str` per
    /// word in flat vectors, and per document its ranges in them.
    pub fn lists(&self) -> Result<TokenLists<'_>> {
        let mut lists = TokenLists::default();
        for batch in &self.batches {
            require_lists(batch, &["words", "sentence_lengths", "sentence_heads"])?;
            let ids = tokens::doc_id(batch)?;
            // A list column the chunk did not read is absent: empty views.
            let list = |name: &str| batch.column_by_name(name).map(|_| column::<ListArray>(batch, name)).transpose();
            let strings = |name: &str| list(name)?.map(StringList::of).transpose();
            let numbers = |name: &str| list(name)?.map(NumberList::of).transpose();
            let lines = |name: &str| batch.column_by_name(name).map(|_| column::<StringArray>(batch, name)).transpose();
            let (terms, words, heads) = (strings("terms")?, lines("words")?, strings("sentence_heads")?);
            let (ends, lengths) = (numbers("sentence_ends")?, numbers("sentence_lengths")?);
            for i in 0..batch.num_rows() {
                lists.docs.push(DocLists {
                    doc_id: ids.value(i),
                    terms: terms.as_ref().map_or(0..0, |l| l.push_row(&mut lists.terms, i)),
                    sentence_ends: ends.as_ref().map_or(&[], |l| l.row(i)),
                    words: words.map_or(0..0, |l| push_words(&mut lists.words, l.value(i))),
                    sentence_lengths: lengths.as_ref().map_or(&[], |l| l.row(i)),
                    sentence_heads: heads.as_ref().map_or(0..0, |l| l.push_row(&mut lists.heads, i)),
                });
            }
        }
        Ok(lists)
    }
}

/// Fails when one of `columns` that `batch` holds has a null: the `tokens`
/// stage writes the lists only some methods read only when one of them is
/// enabled ([`crate::methods::registry::ListsRead`]), so a stage rerun
/// alone with other methods would read nothing where they expect a list.
pub fn require_lists(batch: &RecordBatch, columns: &[&str]) -> Result<()> {
    for name in columns {
        if batch.column_by_name(name).is_some_and(|c| c.null_count() > 0) {
            anyhow::bail!(
                "tokens.{name} was not written: no method enabled when the `tokens` stage ran reads it; \
                 rerun the pipeline from stage `tokens` with this run's methods (`pipeline run --stage all`)"
            );
        }
    }
    Ok(())
}

/// The token lists of a [`TokenChunk`], borrowed from its batches.
#[derive(Debug, Default)]
pub struct TokenLists<'a> {
    docs: Vec<DocLists<'a>>,
    terms: Vec<&'a str>,
    words: Vec<&'a str>,
    heads: Vec<&'a str>,
}

/// One document's lists: ranges in [`TokenLists`]' flat vectors, and the
/// number lists straight from the Arrow buffers.
#[derive(Debug)]
struct DocLists<'a> {
    doc_id: u64,
    terms: Range<usize>,
    sentence_ends: &'a [u32],
    words: Range<usize>,
    sentence_lengths: &'a [u32],
    sentence_heads: Range<usize>,
}

impl<'a> TokenLists<'a> {
    /// The views methods read, one per document in doc_id order (lists not
    /// read are empty).
    pub fn views(&self) -> Vec<DocView<'_>> {
        self.docs
            .iter()
            .map(|d| DocView {
                doc_id: d.doc_id,
                terms: &self.terms[d.terms.clone()],
                sentence_ends: d.sentence_ends,
                words: &self.words[d.words.clone()],
                sentence_lengths: d.sentence_lengths,
                sentence_heads: &self.heads[d.sentence_heads.clone()],
                ..DocView::default()
            })
            .collect()
    }
}

/// Appends the words of a `words` cell to `flat`; returns their range.
fn push_words<'a>(flat: &mut Vec<&'a str>, cell: &'a str) -> Range<usize> {
    let from = flat.len();
    flat.extend(words_of_cell(cell));
    from..flat.len()
}

/// A list-of-strings column of one batch, its child array cast once.
struct StringList<'a> {
    offsets: &'a [i32],
    values: &'a StringArray,
}

impl<'a> StringList<'a> {
    fn of(list: &'a ListArray) -> Result<Self> {
        let values = list.values().as_string_opt::<i32>().context("a token list whose items are not Utf8")?;
        Ok(StringList { offsets: list.value_offsets(), values })
    }

    /// Appends the strings of row `row` to `flat`; returns their range.
    fn push_row(&self, flat: &mut Vec<&'a str>, row: usize) -> Range<usize> {
        let (start, end) = (self.offsets[row] as usize, self.offsets[row + 1] as usize);
        let from = flat.len();
        flat.extend((start..end).map(|j| self.values.value(j)));
        from..flat.len()
    }
}

/// A list-of-u32 column of one batch, its child buffer cast once.
struct NumberList<'a> {
    offsets: &'a [i32],
    values: &'a [u32],
}

impl<'a> NumberList<'a> {
    fn of(list: &'a ListArray) -> Result<Self> {
        let values =
            list.values().as_primitive_opt::<UInt32Type>().context("a number list whose items are not UInt32")?;
        Ok(NumberList { offsets: list.value_offsets(), values: values.values() })
    }

    /// Row `row`, borrowed from the Arrow buffer.
    fn row(&self, row: usize) -> &'a [u32] {
        &self.values[self.offsets[row] as usize..self.offsets[row + 1] as usize]
    }
}

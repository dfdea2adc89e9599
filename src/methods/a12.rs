//! a12 "3+5" (spec §8, study §6.2): per document up to 3 records keyed by
//! the signatures of its 3 longest sentences, each carrying the document's
//! 5 longest-word signatures, plus the pair rule that decides duplicates.
//!
//! This file builds the records and states the pair rule as a plain
//! function; the chaining and windowing over all records happens in SQL,
//! and [`a12_pair_matches`] is the reference that SQL is tested against.
//! The table `a12_records` stores `ss` and `ws` as scalar columns
//! `ss1..ss3` and `ws1..ws5`, and `jobs/a12.sql` counts common signatures
//! with `IN` lists rather than array functions (which stock Ballista
//! executors lack); that count is right only because the non-zero values of
//! one record's `ss` and of its `ws` are distinct (`top_distinct`).
//!
//! Choices the spec leaves open, made here:
//! - Sentence and word signatures are CRC32 of UTF-8 bytes; a sentence is
//!   its kept terms joined by single spaces.
//! - Only sentences with at least one kept term compete for `ss1..ss3`
//!   (an empty sentence would hash to CRC32("") = 0, the "missing" value),
//!   and equal sentences count once: `ss1..ss3` are distinct, so a document
//!   never has two records with the same key.
//! - `ws1..ws5` come from distinct kept terms (not from all words: stop words
//!   and short words carry no content).
//! - `len` counts the words (`DocView::words`, stop words included) of 3 or
//!   more chars (Unicode scalar values); a CJK document segmented per
//!   character therefore has a small `len`.
//! - `num` counts every sentence of the tokenizer (`sentence_ends.len()`),
//!   including sentences whose words were all removed, as in spec §0.
//! - A signature that happens to be 0 is indistinguishable from "missing"
//!   and is ignored by the matching rule (probability 2^-32 per signature).

use super::traits::RecordMethod;
use super::DocView;
use crate::methods::traits::FamilySettings;
use crate::settings::Problems;
use crate::tables::columns::a12_records;
use serde::{Deserialize, Serialize};

/// One a12 record: a document keyed by one of its top sentence signatures.
/// A document yields one record per non-zero `ss` value, all identical but
/// for `key`, so documents sharing any top sentence meet under some key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct A12Record {
    pub doc_id: u64,
    /// The sentence signature this record is keyed by (one of `ss`).
    pub key: u32,
    /// Number of words of 3 or more chars.
    pub len: u32,
    /// Number of sentences.
    pub num: u32,
    /// CRC32 of the 3 longest distinct sentences (most kept terms first,
    /// ties by signature ascending); 0 where the document has fewer. The
    /// non-zero values are distinct. Columns `ss1..ss3`.
    pub ss: [u32; 3],
    /// CRC32 of the 5 longest distinct kept terms (most chars first, ties by
    /// signature ascending); 0 where the document has fewer. The non-zero
    /// values are distinct. Columns `ws1..ws5`.
    pub ws: [u32; 5],
}

impl A12Record {
    /// Appends the record as one row of `a12_records` (schema order: doc_id,
    /// key, len, num, ss1..ss3, ws1..ws5, the columns `jobs/a12.sql` reads).
    pub fn append_to(&self, b: &mut a12_records::Rows) {
        b.doc_id.append_value(self.doc_id);
        b.key.append_value(self.key);
        b.len.append_value(self.len);
        b.num.append_value(self.num);
        for (column, ss) in [&mut b.ss1, &mut b.ss2, &mut b.ss3].into_iter().zip(self.ss) {
            column.append_value(ss);
        }
        for (column, ws) in [&mut b.ws1, &mut b.ws2, &mut b.ws3, &mut b.ws4, &mut b.ws5].into_iter().zip(self.ws) {
            column.append_value(ws);
        }
    }
}

/// The rows of the `a12_records` table: each document's records, in document
/// order.
pub struct A12Records;

impl RecordMethod for A12Records {
    type Rows = a12_records::Rows;
    type Records = Vec<A12Record>;

    fn records(&self, doc: &DocView<'_>) -> Vec<A12Record> {
        a12_records(doc)
    }

    fn append(&self, _: &DocView<'_>, records: &Vec<A12Record>, rows: &mut a12_records::Rows) {
        for r in records {
            r.append_to(rows);
        }
    }
}

/// The a12 records of one document: one per existing sentence signature,
/// in `ss` order (so 0 to 3 records; none for a document without kept terms).
/// Reads the document's [`DocView::term_counts`].
pub fn a12_records(doc: &DocView) -> Vec<A12Record> {
    let mut sentences: Vec<(usize, u32)> =
        doc.sentences().filter(|s| !s.is_empty()).map(|s| (s.len(), crc32fast::hash(s.join(" ").as_bytes()))).collect();
    sentences.sort_unstable_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
    let ss = top_distinct::<3>(sentences.into_iter().map(|(_, sig)| sig));

    // Per distinct term: `top_distinct` keeps each signature once anyway.
    let mut terms: Vec<(usize, u32)> = doc
        .term_counts
        .iter()
        .map(|c| doc.term_of(c))
        .map(|t| (t.chars().count(), crc32fast::hash(t.as_bytes())))
        .collect();
    terms.sort_unstable_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
    let ws = top_distinct::<5>(terms.into_iter().map(|(_, sig)| sig));

    let len = doc.words.iter().filter(|w| w.chars().nth(2).is_some()).count() as u32;
    let num = doc.sentence_ends.len() as u32;
    ss.iter().filter(|&&key| key != 0).map(|&key| A12Record { doc_id: doc.doc_id, key, len, num, ss, ws }).collect()
}

/// The first `N` distinct non-zero values of `sigs` (already in rank
/// order), padded with 0. Distinct by signature, not by text, so two texts
/// with the same CRC32 take one place; `jobs/a12.sql` relies on it.
fn top_distinct<const N: usize>(sigs: impl Iterator<Item = u32>) -> [u32; N] {
    let mut out = [0u32; N];
    let mut n = 0;
    for sig in sigs {
        if n == N {
            break;
        }
        if sig != 0 && !out[..n].contains(&sig) {
            out[n] = sig;
            n += 1;
        }
    }
    out
}

/// Number of non-zero values present in both slices, each value counted
/// once ("coincide in any order").
fn common_nonzero(a: &[u32], b: &[u32]) -> usize {
    let mut seen: Vec<u32> = Vec::with_capacity(a.len());
    for &x in a {
        if x != 0 && !seen.contains(&x) && b.contains(&x) {
            seen.push(x);
        }
    }
    seen.len()
}

/// `max(x, y) / min(x, y) <= ratio`, with equal values always passing
/// (two zeros included) and a single zero always failing. The division is
/// kept, not turned into `max <= ratio * min`, so boundary cases read as
/// written: 115 / 100 = 1.15 passes at r = 1.15, while 1.15 * 100 rounds to
/// 114.99999999999999 and would not. SQL mirrors it as
/// `x = y OR (LEAST(x, y) > 0 AND CAST(GREATEST(x, y) AS DOUBLE) / LEAST(x, y) <= ratio)`.
fn within_ratio(x: u32, y: u32, ratio: f64) -> bool {
    let (lo, hi) = (x.min(y), x.max(y));
    lo == hi || (lo > 0 && hi as f64 / lo as f64 <= ratio)
}

/// The a12 rule for one pair of records: true if the documents are
/// duplicates by "3+5".
///
/// 1. Window: `len` ratio ≤ `ratio` (r = 1.15, `chain_ratio`);
/// 2. filter: `num` ratio ≤ `num_ratio` (1.20, `a12_num_ratio`) and at least
///    2 non-zero word signatures common to `ws` of both (any order);
/// 3. duplicate if `ss[0]` is equal and non-zero, or, when both documents
///    have more than 5 sentences, at least 2 non-zero sentence signatures
///    are common to `ss` of both (any order).
///
/// Ratios use [`within_ratio`]'s form. The keys of the two records are not
/// looked at: the rule is about documents, records only bring them together.
pub fn a12_pair_matches(a: &A12Record, b: &A12Record, ratio: f64, num_ratio: f64) -> bool {
    if !within_ratio(a.len, b.len, ratio) || !within_ratio(a.num, b.num, num_ratio) {
        return false;
    }
    if common_nonzero(&a.ws, &b.ws) < 2 {
        return false;
    }
    if a.ss[0] != 0 && a.ss[0] == b.ss[0] {
        return true;
    }
    a.num > 5 && b.num > 5 && common_nonzero(&a.ss, &b.ss) >= 2
}

/// The setting of a12 in `[methods]` (its chains split at the shared
/// `chain_ratio`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct A12Settings {
    /// Maximal ratio of sentence counts.
    #[serde(rename = "a12_num_ratio")]
    pub num_ratio: f64,
}

impl Default for A12Settings {
    fn default() -> Self {
        A12Settings { num_ratio: 1.20 }
    }
}

impl FamilySettings for A12Settings {
    fn check(&self, p: &mut Problems) {
        p.ratio("methods", "a12_num_ratio", self.num_ratio);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::term_ids::with_ids;
    use crate::methods::TermDict;

    fn strings(s: &str) -> Vec<&str> {
        s.split_whitespace().collect()
    }

    fn crc(s: &str) -> u32 {
        crc32fast::hash(s.as_bytes())
    }

    #[test]
    fn records_of_a_small_document() {
        // Sentences (kept terms): [alpha beta gamma] [delta] [] [epsilon zeta] [delta]
        let terms = strings("alpha beta gamma delta epsilon zeta delta");
        let ends = [3u32, 4, 4, 6, 7];
        let words = strings("the alpha beta gamma is delta ok epsilon zeta of delta");
        let doc = DocView { doc_id: 42, terms: &terms, sentence_ends: &ends, words: &words, ..Default::default() };
        let recs = a12_records(&with_ids(&[doc], &TermDict::default())[0]);

        let s1 = crc("alpha beta gamma");
        let s2 = crc("epsilon zeta");
        let s3 = crc("delta");
        assert_eq!(recs.len(), 3);
        assert_eq!(recs.iter().map(|r| r.key).collect::<Vec<_>>(), vec![s1, s2, s3]);
        let r = recs[0];
        assert_eq!(r.doc_id, 42);
        assert_eq!(r.ss, [s1, s2, s3]);
        // 3+ chars: the alpha beta gamma delta epsilon zeta delta (not is, ok, of).
        assert_eq!(r.len, 8);
        assert_eq!(r.num, 5);
        // Distinct terms by length: epsilon (7); alpha, gamma, delta (5);
        // beta, zeta (4), of which only the smaller signature fits.
        let mut five: Vec<(usize, u32)> =
            ["epsilon", "alpha", "gamma", "delta"].iter().map(|t| (t.len(), crc(t))).collect();
        five.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
        let mut four: Vec<u32> = vec![crc("beta"), crc("zeta")];
        four.sort();
        let expected: Vec<u32> = five.iter().map(|x| x.1).chain([four[0]]).collect();
        assert_eq!(r.ws.to_vec(), expected);
        assert!(recs.iter().all(|x| x.ss == r.ss && x.ws == r.ws));
    }

    #[test]
    fn short_documents_pad_with_zero() {
        let terms = strings("lonely sentence");
        let ends = [2u32];
        let doc = DocView { doc_id: 1, terms: &terms, sentence_ends: &ends, words: &terms, ..Default::default() };
        let recs = a12_records(&with_ids(&[doc], &TermDict::default())[0]);
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].ss, [crc("lonely sentence"), 0, 0]);
        assert_eq!(recs[0].ws[2..], [0, 0, 0]);

        let empty = DocView { doc_id: 2, terms: &[], sentence_ends: &[0], words: &[], ..Default::default() };
        assert!(a12_records(&empty).is_empty());
    }

    #[test]
    fn signatures_of_a_record_are_distinct() {
        // Repeated sentences and terms take one place each; what SQL's
        // spelled-out IN counts rely on.
        let terms = strings("longword longword longword longword longword longword other other other");
        let ends = [3u32, 6, 8, 9];
        let doc = DocView { doc_id: 4, terms: &terms, sentence_ends: &ends, words: &terms, ..Default::default() };
        let r = a12_records(&with_ids(&[doc], &TermDict::default())[0])[0];
        assert_eq!(r.ss, [crc("longword longword longword"), crc("other other"), crc("other")]);
        assert_eq!(r.ws, [crc("longword"), crc("other"), 0, 0, 0]);
        assert_eq!(top_distinct::<3>([0, 7, 7, 0, 9, 7, 4, 5].into_iter()), [7, 9, 4]);
    }

    #[test]
    fn sentence_ties_break_by_signature() {
        let terms = strings("aaaa bbbb cccc dddd eeee ffff gggg hhhh");
        let ends = [2u32, 4, 6, 8];
        let doc = DocView { doc_id: 3, terms: &terms, sentence_ends: &ends, words: &terms, ..Default::default() };
        let mut sigs = [crc("aaaa bbbb"), crc("cccc dddd"), crc("eeee ffff"), crc("gggg hhhh")];
        sigs.sort();
        assert_eq!(a12_records(&with_ids(&[doc], &TermDict::default())[0])[0].ss, [sigs[0], sigs[1], sigs[2]]);
    }

    fn rec(len: u32, num: u32, ss: [u32; 3], ws: [u32; 5]) -> A12Record {
        A12Record { doc_id: 0, key: ss[0], len, num, ss, ws }
    }

    const R: f64 = 1.15;
    const NR: f64 = 1.20;

    #[test]
    fn duplicate_by_first_sentence() {
        let a = rec(100, 5, [1, 2, 3], [10, 11, 12, 13, 14]);
        let b = rec(115, 6, [1, 7, 8], [14, 10, 20, 21, 22]);
        assert!(a12_pair_matches(&a, &b, R, NR));
        assert!(a12_pair_matches(&b, &a, R, NR), "symmetric");
    }

    #[test]
    fn length_and_sentence_count_windows() {
        let ws = [10, 11, 12, 13, 14];
        let a = rec(100, 10, [1, 2, 3], ws);
        assert!(!a12_pair_matches(&a, &rec(116, 10, [1, 2, 3], ws), R, NR), "len 1.16 > 1.15");
        assert!(a12_pair_matches(&a, &rec(115, 12, [1, 2, 3], ws), R, NR), "num 1.2 is allowed");
        assert!(!a12_pair_matches(&a, &rec(100, 13, [1, 2, 3], ws), R, NR), "num 1.3 > 1.2");
        let zero = rec(0, 1, [1, 0, 0], ws);
        assert!(a12_pair_matches(&zero, &zero, R, NR), "two zero lengths are equal");
        assert!(!a12_pair_matches(&zero, &rec(1, 1, [1, 0, 0], ws), R, NR));
    }

    #[test]
    fn needs_two_common_word_signatures() {
        let a = rec(100, 10, [1, 2, 3], [10, 11, 0, 0, 0]);
        assert!(!a12_pair_matches(&a, &rec(100, 10, [1, 2, 3], [10, 20, 0, 0, 0]), R, NR));
        assert!(a12_pair_matches(&a, &rec(100, 10, [1, 2, 3], [11, 10, 0, 0, 0]), R, NR));
        // Zeros never count as coinciding.
        let z = rec(100, 10, [1, 2, 3], [10, 0, 0, 0, 0]);
        assert!(!a12_pair_matches(&z, &z, R, NR));
    }

    #[test]
    fn two_of_three_sentences_only_for_long_documents() {
        let ws = [10, 11, 12, 13, 14];
        let a = rec(100, 6, [1, 2, 3], ws);
        let b = rec(100, 6, [9, 3, 2], ws);
        assert!(a12_pair_matches(&a, &b, R, NR), "ss2, ss3 coincide across positions");
        let a5 = rec(100, 5, [1, 2, 3], ws);
        let b5 = rec(100, 6, [9, 3, 2], ws);
        assert!(!a12_pair_matches(&a5, &b5, R, NR), "a has only 5 sentences");
        let c = rec(100, 6, [9, 3, 8], ws);
        assert!(!a12_pair_matches(&a, &c, R, NR), "one common sentence is not enough");
        let zeros_a = rec(100, 6, [0, 0, 0], ws);
        assert!(!a12_pair_matches(&zeros_a, &zeros_a, R, NR), "missing sentences never match");
    }
}

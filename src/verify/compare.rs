//! The comparison of two documents by the verification rule
//! ([`PairRule`]), shared by `verify`, `evaluate` and the history's match:
//! the documents as it sees them, and the cheap bounds before any LCS.
//! What the documents' texts and the candidate pairs are read from is
//! [`super::inputs`]'s.
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

use crate::verify::settings::PairRule;
use crate::verify::similarity::Verdict;

/// A document as verification sees it.
pub struct Doc {
    pub doc_id: u64,
    pub url: String,
    /// The verification text (see [`super::inputs::load_verification_texts`]).
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
    /// The LCS was computed to the end (at or below the threshold).
    Lcs,
    /// The LCS computation stopped early: during the scan an upper bound of
    /// the similarity fell below the threshold (for the Perl module's
    /// algorithm, its own stop once the edits pass the limit's budget).
    LcsStoppedEarly,
    /// The two texts are identical: similarity 1 without an LCS (the
    /// history's exact repeats; the night's copies never reach verify).
    Identical,
}

/// How many comparisons ended each way: the counters `verify` (round 0)
/// and `place` (its rounds) write in their manifests, under the same names;
/// one count per kind, `Identical` being the last.
#[derive(Debug, Default, Clone, Copy)]
pub struct OutcomeCounts([u64; Outcome::Identical as usize + 1]);

impl OutcomeCounts {
    /// Counts one comparison.
    pub fn add(&mut self, outcome: Outcome) {
        self.0[outcome as usize] += 1;
    }

    /// Writes the counts into a manifest's `counters`.
    pub fn insert_into(&self, counters: &mut std::collections::BTreeMap<String, u64>) {
        let count = |outcome: Outcome| self.0[outcome as usize];
        counters.insert("rejected_by_length".into(), count(Outcome::LengthBound));
        counters.insert("rejected_by_characters".into(), count(Outcome::CharBound));
        // LCS computations begun, and of those the ones a bound stopped
        // before the end.
        let stopped_early = count(Outcome::LcsStoppedEarly);
        counters.insert("lcs_computed".into(), count(Outcome::Lcs) + stopped_early);
        counters.insert("lcs_stopped_early".into(), stopped_early);
        counters.insert("identical_texts".into(), count(Outcome::Identical));
    }
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

/// The similarity of two documents by the rule's algorithm if at least its
/// threshold, else None; the cheap bounds first, then at most one LCS computation.
/// `a` is the Perl module's first string (its value is not symmetric).
pub fn compare(a: &Doc, b: &Doc, rule: PairRule) -> (Option<f64>, Outcome) {
    match settled_without_lcs(a, b, rule) {
        Some(settled) => settled,
        None => compare_by_lcs(a, b, rule),
    }
}

/// The verdict of [`compare`] when it needs no LCS: identical texts
/// (similarity 1), or one of the cheap bounds below the threshold. None
/// when only the LCS can tell: what a caller that budgets the LCS work
/// ([`crate::verify::partners`]) asks first.
pub fn settled_without_lcs(a: &Doc, b: &Doc, rule: PairRule) -> Option<(Option<f64>, Outcome)> {
    if a.text == b.text {
        return Some((Some(1.0), Outcome::Identical));
    }
    let total = a.chars + b.chars;
    let reaches = |lcs_bound: usize| total == 0 || (2 * lcs_bound) as f64 / total as f64 >= rule.threshold;
    if !reaches(a.chars.min(b.chars)) {
        return Some((None, Outcome::LengthBound));
    }
    if !reaches(common_chars(&a.histogram, &b.histogram)) {
        return Some((None, Outcome::CharBound));
    }
    None
}

/// The LCS step of [`compare`], for a pair [`settled_without_lcs`] left open.
pub fn compare_by_lcs(a: &Doc, b: &Doc, rule: PairRule) -> (Option<f64>, Outcome) {
    match rule.algorithm.verdict(&a.text, &b.text, rule.threshold) {
        Verdict::Similar(s) => (Some(s), Outcome::Lcs),
        Verdict::Below => (None, Outcome::Lcs),
        Verdict::StoppedEarly => (None, Outcome::LcsStoppedEarly),
    }
}

/// What an LCS comparison of `a` and `b` covers, in characters (|a| + |b|):
/// the unit of the per-document budget of failing comparisons.
pub fn lcs_chars(a: &Doc, b: &Doc) -> usize {
    a.chars + b.chars
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::settings::{SimilarityAlgorithm, VerificationText};

    fn doc(id: u64, text: &str) -> Doc {
        Doc::new(id, format!("http://t/{id}"), text.into())
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

    fn rule(threshold: f64, algorithm: SimilarityAlgorithm) -> PairRule {
        PairRule { threshold, algorithm, text: VerificationText::Visible }
    }

    #[test]
    fn bounds_reject_before_any_lcs() {
        let long = doc(1, "abcdefghijabcdefghij");
        let exact = SimilarityAlgorithm::Exact;
        assert_eq!(compare(&long, &doc(2, "abcde"), rule(0.8, exact)), (None, Outcome::LengthBound));
        // Same length, disjoint letters: only the character bound sees it.
        assert_eq!(compare(&long, &doc(3, "klmnopqrstklmnopqrst"), rule(0.8, exact)), (None, Outcome::CharBound));
        // kitten/sitting: 2*4/13 = 0.615..., exact above a low threshold.
        let (k, s) = (doc(4, "kitten"), doc(5, "sitting"));
        for algorithm in [exact, SimilarityAlgorithm::StringSimilarity] {
            assert_eq!(compare(&k, &s, rule(0.6, algorithm)), (Some(8.0 / 13.0), Outcome::Lcs));
            assert_eq!(compare(&k, &s, rule(0.8, algorithm)).0, None);
        }
    }

    /// An LCS that runs to the end below the threshold and one whose bound
    /// stops it early are told apart: the same letters, so the cheap
    /// bounds let both through. Reversed, a cycle of ten letters shares
    /// about a tenth of itself with its original: the bound checked every
    /// 64 rows stops the scan long before its end.
    #[test]
    fn an_lcs_stopped_early_is_counted_as_such() {
        let cycle: String = "abcdefghij".repeat(100);
        let reversed: String = cycle.chars().rev().collect();
        let exact = SimilarityAlgorithm::Exact;
        let (a, b) = (doc(1, &cycle), doc(2, &reversed));
        assert_eq!(compare(&a, &b, rule(0.8, exact)), (None, Outcome::LcsStoppedEarly));
        // Four rows: no check comes before the end (LCS 1, similarity 0.25).
        let (x, y) = (doc(4, "abcd"), doc(5, "dcba"));
        assert_eq!(compare(&x, &y, rule(0.8, exact)), (None, Outcome::Lcs));
        assert!(crate::verify::similarity::similarity(&cycle, &reversed) < 0.3);
    }
}

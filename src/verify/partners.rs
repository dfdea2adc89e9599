//! Round 0 of verification: a document compared with its earlier
//! partners, the documents its candidate edges lead to that come before it
//! in the keep order (spec §9; the `verify` stage's module docs say why
//! every pair is compared by its later document's task).
//!
//! A document's comparisons are bounded, whatever the size of its template
//! group or of the crawl: at most `max_comparisons` partners (the
//! strongest proposals first), and its failing LCS comparisons cover at
//! most `failed_budget` times its own length in characters. a11's own
//! pairs (a method that includes its comparison) are its result: they are
//! always compared and spend nothing.

use rayon::prelude::*;
use std::sync::Arc;

use crate::verify::compare::{compare_by_lcs, lcs_chars, settled_without_lcs, Doc, Outcome};
use crate::verify::settings::PairRule;

/// How a document's comparisons are bounded: the verification rule and
/// the bounds per document.
#[derive(Clone, Copy)]
pub struct Rule {
    /// The rule each comparison applies.
    pub pair: PairRule,
    /// The methods that include their comparison (a11), as a mask.
    pub comparing: u64,
    /// `verify.max_comparisons_per_document`.
    pub max_comparisons: usize,
    /// `verify.failed_comparison_budget`: the characters (|a| + |b| each)
    /// one document's failing LCS comparisons may cover, as a multiple of
    /// its own length; 0 for no such bound.
    pub failed_budget: f64,
}

impl Rule {
    /// The characters document `doc`'s failing LCS comparisons may cover.
    fn budget_of(&self, doc: &Doc) -> usize {
        if self.failed_budget == 0.0 {
            usize::MAX
        } else {
            (self.failed_budget * doc.chars() as f64) as usize
        }
    }
}

/// How the comparison of a document with one partner ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PartnerVerdict {
    /// Compared: the similarity (None below the threshold) and how the
    /// comparison ended.
    Compared(Option<f64>, Outcome),
    /// Not compared: beyond `max_comparisons` stronger partners.
    Cut,
    /// Not compared: its LCS would have gone beyond what the document's
    /// failing comparisons may still cover.
    OverBudget,
}

/// The order partners are compared in: most methods first, then the
/// earlier in the keep order (its keep rank). Deterministic, and the
/// strongest proposals survive the bounds.
pub fn strength_order(methods: u64, keep_rank: u64) -> (std::cmp::Reverse<u32>, u64) {
    (std::cmp::Reverse(methods.count_ones()), keep_rank)
}

/// Compares `doc` with each of its earlier partners (given in
/// [`strength_order`], each with the mask of the methods that proposed the
/// pair), `doc` as the Perl module's first string, within the document's
/// bounds:
/// - the partners beyond the first `rule.max_comparisons` that are not
///   a11's own pairs are [`PartnerVerdict::Cut`];
/// - the comparisons that need an LCS spend a budget, in that order: one
///   is made only if its characters (|a| + |b|) fit in what the failing
///   ones have left of `rule.failed_budget` times the document's length.
///   Why: on pages that share a template and a sentence structure but not
///   their words (generated pages, product pages) the methods propose
///   siblings that verification refuses, a long page has more of them as
///   the crawl grows, and a failing LCS of two long pages costs the square
///   of their length. The strongest proposals come first, so a
///   near-duplicate is compared before its page's template siblings.
pub fn compare_partners(doc: &Doc, partners: &[(Arc<Doc>, u64)], rule: Rule) -> Vec<PartnerVerdict> {
    let own: Vec<bool> = partners.iter().map(|(_, methods)| methods & rule.comparing != 0).collect();
    let mut kept = 0usize;
    let planned: Vec<usize> = (0..partners.len())
        .filter(|&k| {
            own[k] || {
                kept += 1;
                kept <= rule.max_comparisons
            }
        })
        .collect();
    let others: Vec<&Doc> = planned.iter().map(|&k| partners[k].0.as_ref()).collect();
    let planned_own: Vec<bool> = planned.iter().map(|&k| own[k]).collect();
    let mut budget = rule.budget_of(doc);
    let mut verdicts = vec![PartnerVerdict::Cut; partners.len()];
    for (k, verdict) in planned.into_iter().zip(compare_all(doc, &others, &planned_own, rule.pair, &mut budget)) {
        verdicts[k] = verdict;
    }
    verdicts
}

/// Compares `doc` with each of `others` in order within `budget` (the
/// characters its failing LCS comparisons may still cover; see
/// [`compare_partners`]); a comparison beyond it is
/// [`PartnerVerdict::OverBudget`]. Those marked in `own` (a11's pairs: its
/// result, which evaluate counts on) are always compared and spend
/// nothing.
///
/// The comparisons of one document run in parallel, so that a document
/// with many long partners still uses every core, in rounds that give the
/// budget's sequential rule exactly: a round is the longest run of the
/// next comparisons that all fit even if every one of them fails; after
/// it, the budget is what the ones that failed left.
fn compare_all(doc: &Doc, others: &[&Doc], own: &[bool], rule: PairRule, budget: &mut usize) -> Vec<PartnerVerdict> {
    let mut results: Vec<Option<PartnerVerdict>> = others
        .par_iter()
        .map(|other| settled_without_lcs(doc, other, rule).map(|(s, o)| PartnerVerdict::Compared(s, o)))
        .collect();
    let open: Vec<usize> = (0..others.len()).filter(|&k| results[k].is_none()).collect();
    let cost = |k: usize| if own[k] { 0 } else { lcs_chars(doc, others[k]) };
    let mut next = 0;
    while next < open.len() {
        let (mut end, mut worst) = (next, 0usize);
        while end < open.len() && worst.saturating_add(cost(open[end])) <= *budget {
            worst += cost(open[end]);
            end += 1;
        }
        if end == next {
            // Does not fit in what is left, whatever the others did.
            results[open[next]] = Some(PartnerVerdict::OverBudget);
            next += 1;
            continue;
        }
        let round: Vec<(Option<f64>, Outcome)> =
            open[next..end].par_iter().map(|&k| compare_by_lcs(doc, others[k], rule)).collect();
        for (&k, (similarity, outcome)) in open[next..end].iter().zip(round) {
            if similarity.is_none() {
                *budget -= cost(k);
            }
            results[k] = Some(PartnerVerdict::Compared(similarity, outcome));
        }
        next = end;
    }
    results.into_iter().map(|r| r.expect("every comparison is settled, made or over budget")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::settings::{SimilarityAlgorithm, VerificationText};

    fn doc(id: u64, text: &str) -> Arc<Doc> {
        Arc::new(Doc::new(id, String::new(), text.into()))
    }

    fn rule(comparing: u64, max_comparisons: usize, failed_budget: f64) -> Rule {
        let pair = PairRule { threshold: 0.8, algorithm: SimilarityAlgorithm::Exact, text: VerificationText::Visible };
        Rule { pair, comparing, max_comparisons, failed_budget }
    }

    fn similarities(verdicts: &[PartnerVerdict]) -> Vec<Option<Option<f64>>> {
        verdicts
            .iter()
            .map(|v| match v {
                PartnerVerdict::Compared(s, _) => Some(*s),
                _ => None,
            })
            .collect()
    }

    /// The budget of failing comparisons: a document's failing LCS
    /// comparisons cover at most `failed_budget` times its length; a
    /// passing one costs nothing, a11's own pairs are always compared, and
    /// a pair the cheap bounds settle costs nothing.
    #[test]
    fn failing_comparisons_stop_at_the_document_s_budget() {
        // 0 and 1 have the document's characters but fail its LCS (5 and
        // 7 of 10: 0.5 and 0.7), 2 passes (9 of 10: 0.9).
        let document = doc(9, "aaaaabbbbb");
        let partners = |order: [usize; 3], masks: [u64; 3]| -> Vec<(Arc<Doc>, u64)> {
            let texts = ["bbbbbaaaaa", "bbbaaaaabb", "aaaaabbbba"];
            order.iter().map(|&j| (doc(j as u64, texts[j]), masks[j])).collect()
        };
        let (fail, pass) =
            (PartnerVerdict::Compared(None, Outcome::Lcs), PartnerVerdict::Compared(Some(0.9), Outcome::Lcs));
        let stopped = PartnerVerdict::Compared(None, Outcome::LcsStoppedEarly);
        // Each comparison covers 20 characters, the budget is 10 times the
        // length: at 6, all three; at 4, the two that fail spend it all and
        // the one that would pass is over budget.
        let all = compare_partners(&document, &partners([0, 1, 2], [1; 3]), rule(0, 64, 6.0));
        assert_eq!(similarities(&all), [Some(None), Some(None), Some(Some(0.9))]);
        let cut = compare_partners(&document, &partners([0, 1, 2], [1; 3]), rule(0, 64, 4.0));
        assert_eq!(cut[2], PartnerVerdict::OverBudget);
        // First (the strongest), the one that passes spends nothing.
        let strong = compare_partners(&document, &partners([2, 0, 1], [1; 3]), rule(0, 64, 4.0));
        assert_eq!(strong[0], pass);
        assert!(strong[1..].iter().all(|v| matches!(v, PartnerVerdict::Compared(None, _))), "{strong:?}");
        // a11's pairs (bit 2) are compared whatever the budget.
        let own = compare_partners(&document, &partners([0, 1, 2], [2, 1, 1]), rule(2, 64, 0.1));
        assert!(matches!(own[0], PartnerVerdict::Compared(None, _)), "{own:?}");
        assert_eq!(&own[1..], [PartnerVerdict::OverBudget; 2]);
        // The bound on comparisons cuts the weakest, not a11's pairs.
        let bounded = compare_partners(&document, &partners([2, 0, 1], [1, 2, 1]), rule(2, 1, 0.0));
        // (2 then 0 by bit 0, 1 by bit 1: a11's.)
        assert_eq!(bounded[0], pass);
        assert_eq!(bounded[1], PartnerVerdict::Cut);
        assert!(matches!(bounded[2], PartnerVerdict::Compared(None, _)), "{bounded:?}");
        assert!([fail, stopped].contains(&all[0]));
        // Settled by the cheap bounds (no shared character): no cost.
        let far: Vec<(Arc<Doc>, u64)> =
            vec![(doc(1, "cccccccccc"), 1), (doc(2, "dddddddddd"), 1), (doc(3, "aaaaabbbba"), 1)];
        let settled = compare_partners(&document, &far, rule(0, 64, 2.0));
        assert_eq!(settled[0], PartnerVerdict::Compared(None, Outcome::CharBound));
        assert_eq!(settled[2], pass);
    }

    /// The rounds of [`compare_all`] give what comparing one after the
    /// other in order gives, on random partners, own pairs, texts and
    /// budgets.
    #[test]
    fn budget_rounds_give_the_sequential_rule() {
        let mut state = 11u64;
        let mut next = |n: u64| crate::methods::splitmix64(&mut state) % n;
        for _ in 0..300 {
            let n = 1 + next(12) as usize;
            let texts: Vec<String> =
                (0..=n).map(|_| (0..4 + next(12)).map(|_| if next(3) == 0 { 'b' } else { 'a' }).collect()).collect();
            let own: Vec<bool> = (0..n).map(|_| next(3) == 0).collect();
            let pair = PairRule {
                threshold: 0.5 + next(40) as f64 / 100.0,
                algorithm: SimilarityAlgorithm::Exact,
                text: VerificationText::Visible,
            };
            let docs: Vec<Arc<Doc>> = texts.iter().enumerate().map(|(i, t)| doc(i as u64, t)).collect();
            let start = next(8 * docs[0].chars() as u64 + 1) as usize;
            let mut left = start;
            let expected: Vec<PartnerVerdict> = (1..=n)
                .map(|j| {
                    if let Some((s, o)) = settled_without_lcs(&docs[0], &docs[j], pair) {
                        return PartnerVerdict::Compared(s, o);
                    }
                    let cost = if own[j - 1] { 0 } else { lcs_chars(&docs[0], &docs[j]) };
                    if cost > left {
                        return PartnerVerdict::OverBudget;
                    }
                    let (s, o) = compare_by_lcs(&docs[0], &docs[j], pair);
                    if s.is_none() {
                        left -= cost;
                    }
                    PartnerVerdict::Compared(s, o)
                })
                .collect();
            let others: Vec<&Doc> = docs[1..].iter().map(|d| d.as_ref()).collect();
            let mut budget = start;
            let got = compare_all(&docs[0], &others, &own, pair, &mut budget);
            assert_eq!(got, expected, "{texts:?} {own:?}");
            assert_eq!(budget, left);
        }
    }
}

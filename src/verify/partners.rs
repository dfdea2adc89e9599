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
//! always compared and spend nothing, and never screened (spec §9).

use rayon::prelude::*;
use std::sync::Arc;

use crate::verify::compare::{compare_by_lcs, lcs_chars, prescreen, Comparison, Doc, Prescreen};
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
    /// Compared: its similarity (None below the threshold), how the
    /// comparison ended and the value it ended at.
    Compared(Comparison),
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
/// result, which evaluate counts on) are always compared, spend nothing
/// and are never screened. A pair the screen rejects spends nothing
/// either: no LCS was made.
///
/// The comparisons of one document run in parallel, so that a document
/// with many long partners still uses every core, in rounds that give the
/// budget's sequential rule exactly: a round is the longest run of the
/// next comparisons that all fit even if every one of them fails; after
/// it, the budget is what the ones that failed left.
fn compare_all(doc: &Doc, others: &[&Doc], own: &[bool], rule: PairRule, budget: &mut usize) -> Vec<PartnerVerdict> {
    let rule_of = |k: usize| if own[k] { rule.without_screen() } else { rule };
    let prescreens: Vec<Prescreen> =
        others.par_iter().enumerate().map(|(k, other)| prescreen(doc, other, rule_of(k))).collect();
    let mut results: Vec<Option<PartnerVerdict>> = prescreens
        .iter()
        .map(|p| match *p {
            Prescreen::Settled(comparison) => Some(PartnerVerdict::Compared(comparison)),
            Prescreen::Open { .. } => None,
        })
        .collect();
    let open: Vec<usize> = (0..others.len()).filter(|&k| results[k].is_none()).collect();
    let resemblance = |k: usize| match prescreens[k] {
        Prescreen::Open { resemblance } => resemblance,
        Prescreen::Settled(_) => None,
    };
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
        let round: Vec<Comparison> =
            open[next..end].par_iter().map(|&k| compare_by_lcs(doc, others[k], rule_of(k), resemblance(k))).collect();
        for (&k, comparison) in open[next..end].iter().zip(round) {
            if comparison.similarity.is_none() {
                *budget -= cost(k);
            }
            results[k] = Some(PartnerVerdict::Compared(comparison));
        }
        next = end;
    }
    results.into_iter().map(|r| r.expect("every comparison is settled, made or over budget")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::compare::Outcome;
    use crate::verify::settings::{SimilarityAlgorithm, VerificationText};

    fn doc(id: u64, text: &str) -> Arc<Doc> {
        Arc::new(Doc::new(id, String::new(), text.into()))
    }

    fn rule(comparing: u64, max_comparisons: usize, failed_budget: f64) -> Rule {
        let pair = PairRule {
            threshold: 0.8,
            algorithm: SimilarityAlgorithm::Exact,
            text: VerificationText::Visible,
            screen: 0.2,
        };
        Rule { pair, comparing, max_comparisons, failed_budget }
    }

    fn similarities(verdicts: &[PartnerVerdict]) -> Vec<Option<Option<f64>>> {
        verdicts
            .iter()
            .map(|v| match v {
                PartnerVerdict::Compared(c) => Some(c.similarity),
                _ => None,
            })
            .collect()
    }

    /// A verdict compared, with this similarity and outcome (its value
    /// aside).
    fn compared(similarity: Option<f64>, outcome: Outcome) -> impl Fn(&PartnerVerdict) -> bool {
        move |v| matches!(v, PartnerVerdict::Compared(c) if c.similarity == similarity && c.outcome == outcome)
    }

    fn failed(v: &PartnerVerdict) -> bool {
        matches!(v, PartnerVerdict::Compared(c) if c.similarity.is_none())
    }

    /// The screen rejects a pair whose texts share their characters but
    /// not their 8-grams, spending nothing of the budget; the same pair
    /// proposed by a11 (its own result) is compared by LCS.
    #[test]
    fn a11_s_pairs_are_never_screened() {
        let mut state = 3u64;
        let text: String =
            (0..400).map(|_| char::from(b'a' + (crate::methods::splitmix64(&mut state) % 26) as u8)).collect();
        let reversed: String = text.chars().rev().collect();
        let document = doc(1, &text);
        let partners = vec![(doc(2, &reversed), 1), (doc(3, &reversed), 2)];
        let verdicts = compare_partners(&document, &partners, rule(2, 64, 1.0));
        let PartnerVerdict::Compared(screened) = verdicts[0] else { panic!("{verdicts:?}") };
        assert_eq!(screened.outcome, Outcome::Screen);
        assert!(screened.value < 0.05, "{screened:?}");
        assert!(compared(None, Outcome::LcsStoppedEarly)(&verdicts[1]), "{verdicts:?}");
        // Without the screen the first is an LCS too, and the budget of
        // one length (800 characters would pass it) leaves it uncompared.
        let unscreened = Rule { pair: rule(2, 64, 1.0).pair.without_screen(), ..rule(2, 64, 1.0) };
        assert_eq!(compare_partners(&document, &partners, unscreened)[0], PartnerVerdict::OverBudget);
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
        let pass = compared(Some(0.9), Outcome::Lcs);
        // Each comparison covers 20 characters, the budget is 10 times the
        // length: at 6, all three; at 4, the two that fail spend it all and
        // the one that would pass is over budget.
        let all = compare_partners(&document, &partners([0, 1, 2], [1; 3]), rule(0, 64, 6.0));
        assert_eq!(similarities(&all), [Some(None), Some(None), Some(Some(0.9))]);
        let cut = compare_partners(&document, &partners([0, 1, 2], [1; 3]), rule(0, 64, 4.0));
        assert_eq!(cut[2], PartnerVerdict::OverBudget);
        // First (the strongest), the one that passes spends nothing.
        let strong = compare_partners(&document, &partners([2, 0, 1], [1; 3]), rule(0, 64, 4.0));
        assert!(pass(&strong[0]));
        assert!(strong[1..].iter().all(failed), "{strong:?}");
        // a11's pairs (bit 2) are compared whatever the budget.
        let own = compare_partners(&document, &partners([0, 1, 2], [2, 1, 1]), rule(2, 64, 0.1));
        assert!(failed(&own[0]), "{own:?}");
        assert_eq!(&own[1..], [PartnerVerdict::OverBudget; 2]);
        // The bound on comparisons cuts the weakest, not a11's pairs.
        let bounded = compare_partners(&document, &partners([2, 0, 1], [1, 2, 1]), rule(2, 1, 0.0));
        // (2 then 0 by bit 0, 1 by bit 1: a11's.)
        assert!(pass(&bounded[0]));
        assert_eq!(bounded[1], PartnerVerdict::Cut);
        assert!(failed(&bounded[2]), "{bounded:?}");
        assert!(compared(None, Outcome::Lcs)(&all[0]) || compared(None, Outcome::LcsStoppedEarly)(&all[0]));
        // Settled by the cheap bounds (no shared character): no cost.
        let far: Vec<(Arc<Doc>, u64)> =
            vec![(doc(1, "cccccccccc"), 1), (doc(2, "dddddddddd"), 1), (doc(3, "aaaaabbbba"), 1)];
        let settled = compare_partners(&document, &far, rule(0, 64, 2.0));
        assert!(compared(None, Outcome::CharBound)(&settled[0]), "{settled:?}");
        assert!(pass(&settled[2]));
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
                screen: 0.2,
            };
            let docs: Vec<Arc<Doc>> = texts.iter().enumerate().map(|(i, t)| doc(i as u64, t)).collect();
            let start = next(8 * docs[0].chars() as u64 + 1) as usize;
            let mut left = start;
            let expected: Vec<PartnerVerdict> = (1..=n)
                .map(|j| {
                    let pair = if own[j - 1] { pair.without_screen() } else { pair };
                    let resemblance = match prescreen(&docs[0], &docs[j], pair) {
                        Prescreen::Settled(c) => return PartnerVerdict::Compared(c),
                        Prescreen::Open { resemblance } => resemblance,
                    };
                    let cost = if own[j - 1] { 0 } else { lcs_chars(&docs[0], &docs[j]) };
                    if cost > left {
                        return PartnerVerdict::OverBudget;
                    }
                    let c = compare_by_lcs(&docs[0], &docs[j], pair, resemblance);
                    if c.similarity.is_none() {
                        left -= cost;
                    }
                    PartnerVerdict::Compared(c)
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

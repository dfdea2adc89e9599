//! The value Perl's `String::Similarity` 1.04 returns, reproduced: verification
//! mode `[verify] algorithm = "string-similarity"`.
//!
//! Why it exists: spec §9 names the Perl module as the study's reference.
//! The module is GNU gettext's `fstrcmp` (itself GNU diff 2.7's `analyze.c`):
//! Myers' O(ND) difference algorithm (E. Myers, "An O(ND) Difference
//! Algorithm and its Variations", Algorithmica 1(2), 1986, §4.2: find the
//! middle snake by searching from both ends at once, then divide and
//! conquer), run *non-minimal*: a search that costs too much is cut short by
//! GNU diff's `too_expensive` heuristic, and the edit script it then builds
//! is longer than the shortest. On long texts with many edits the module
//! therefore returns a value *below* the exact `2·LCS/(|a|+|b|)` that
//! [`super::similarity_at_least`] computes (the `exact` mode). This mode
//! gives the module's number, so results can be set beside the study's.
//!
//! Behaviours reproduced, each checked against the module by the oracle
//! tests (see `tests` below and in `super`):
//! - the units: Unicode scalar values, as the module reads a character
//!   string (`SvUTF8`); a Rust `&str` is always one;
//! - 1 for two empty strings, 0 when exactly one is empty;
//! - the middle-snake search on diagonals, forward and backward in
//!   alternation, the odd/even overlap test, and ties broken in the same
//!   order (diagonals scanned from the highest down);
//! - the cut-off: with `total = |a| + |b|`, `too_expensive` is 2 to the
//!   power of the number of base-4 digits of `total` (between `√total`
//!   and `2·√total`), at least 256; once a search has run that many rounds without meeting,
//!   it stops and splits at the forward diagonal with the largest `x + y`
//!   or the backward one with the smallest, whichever went further, and
//!   the side the search came from is then solved minimally;
//! - a difference of one edit found in the first round is counted without
//!   recursing;
//! - the order of the arguments: the result is not symmetric once the
//!   heuristic fires (the first string is the module's `x`);
//! - the early stop: with a limit `L`, the module gives up once more than
//!   `1 + total·(1 − L)` (truncated) edits were counted.
//!
//! Not reproduced: GNU diff's `-H` heuristic (compiled out in the module)
//! and the module's byte strings (a Perl string without `SvUTF8` is
//! compared byte by byte; ours are always characters).
//!
//! The contract on the limit differs on purpose, like the exact mode's: on an
//! early stop the module returns an unspecified number below the limit;
//! here the answer is `None`. The counted edits only grow, so a stop proves
//! the module's full value is below the limit too, and when no stop happens
//! the count is the module's full one.

use super::verdict::Verdict;

/// The module's similarity of `a` and `b`, in `[0, 1]`: `1 − e/(|a|+|b|)`
/// with `e` the length of the edit script its heuristic search builds
/// (`e` ≥ the minimal one, so this is at most [`super::similarity`]).
pub fn similarity(a: &str, b: &str) -> f64 {
    // A limit of 0 is never crossed: the module's own default.
    similarity_at_least(a, b, 0.0).unwrap_or(0.0)
}

/// The module's similarity of `a` and `b` if it is at least `limit`, else
/// `None`, stopping where the module stops with that limit.
pub fn similarity_at_least(a: &str, b: &str, limit: f64) -> Option<f64> {
    verdict(a, b, limit).similarity()
}

/// [`similarity_at_least`], telling a value computed to the end below the
/// limit from the module's stop once the edits passed the limit's budget.
pub fn verdict(a: &str, b: &str, limit: f64) -> Verdict {
    let x: Vec<char> = a.chars().collect();
    let y: Vec<char> = b.chars().collect();
    let count = EditCount::new(&x, &y, limit);
    // A stop means more edits than the budget were counted: the module's
    // value is at most this.
    let total = (x.len() + y.len()) as f64;
    let at_most = ((total - count.max_edits as f64 - 1.0) / total).max(0.0);
    match count.similarity() {
        Some(value) => Verdict::of_value(value, limit),
        None => Verdict::StoppedEarly(at_most),
    }
}

/// The round count (`c` of GNU diff's `diag`) after which a middle-snake
/// search gives up: 2^(number of base-4 digits of `total`), at least 256.
fn too_expensive(total: usize) -> usize {
    let mut cost = 1;
    let mut rest = total;
    while rest != 0 {
        cost <<= 1;
        rest >>= 2;
    }
    cost.max(256)
}

/// Where a sub-problem is split, and whether each half must be solved
/// minimally (no heuristic) because the search that found the split came
/// from its side and so knows it is optimal there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Split {
    x: isize,
    y: isize,
    low_minimal: bool,
    high_minimal: bool,
}

/// A sub-problem: `x[x_start..x_end]` against `y[y_start..y_end]`.
struct Task {
    x_start: isize,
    x_end: isize,
    y_start: isize,
    y_end: isize,
    minimal: bool,
}

/// The edit count of one comparison, with the search vectors shared by all
/// its sub-problems (as the module keeps them between calls).
struct EditCount<'s> {
    x: &'s [char],
    y: &'s [char],
    /// Furthest x reached on each diagonal `d = x − y` by the forward
    /// search (index `d + diagonal_offset`), and the least x reached by the
    /// backward one; each search only reads what it wrote itself.
    forward: Vec<isize>,
    backward: Vec<isize>,
    diagonal_offset: isize,
    give_up_after: isize,
    /// The module stops once `edits > max_edits` at the start of a sub-problem.
    max_edits: i64,
}

impl<'s> EditCount<'s> {
    fn new(x: &'s [char], y: &'s [char], limit: f64) -> EditCount<'s> {
        let total = x.len() + y.len();
        // Diagonals run from −|y| to |x|, plus one sentinel on each side.
        let diagonals = total + 3;
        EditCount {
            x,
            y,
            forward: vec![0; diagonals],
            backward: vec![0; diagonals],
            diagonal_offset: y.len() as isize + 1,
            give_up_after: too_expensive(total) as isize,
            // The module's `1 + total * (1. - minimum)` truncated to an int.
            max_edits: (1.0 + total as f64 * (1.0 - limit)) as i64,
        }
    }

    /// `1 − edits/total`, or `None` when the edit count passed the limit's
    /// budget before the end (the value is then below the limit).
    fn similarity(mut self) -> Option<f64> {
        let total = self.x.len() + self.y.len();
        if total == 0 {
            return Some(1.0);
        }
        if self.x.is_empty() || self.y.is_empty() {
            return Some(0.0);
        }
        let edits = self.count_edits()?;
        Some((total as i64 - edits) as f64 / total as f64)
    }

    /// The module's `compareseq` over the whole strings, with an explicit
    /// stack (low half before high half, as its recursion goes).
    fn count_edits(&mut self) -> Option<i64> {
        let (x, y) = (self.x, self.y);
        let mut edits: i64 = 0;
        let mut tasks =
            vec![Task { x_start: 0, x_end: x.len() as isize, y_start: 0, y_end: y.len() as isize, minimal: false }];
        while let Some(Task { mut x_start, mut x_end, mut y_start, mut y_end, minimal }) = tasks.pop() {
            if edits > self.max_edits {
                return None;
            }
            while x_start < x_end && y_start < y_end && x[x_start as usize] == y[y_start as usize] {
                x_start += 1;
                y_start += 1;
            }
            while x_end > x_start && y_end > y_start && x[x_end as usize - 1] == y[y_end as usize - 1] {
                x_end -= 1;
                y_end -= 1;
            }
            if x_start == x_end {
                edits += (y_end - y_start) as i64;
            } else if y_start == y_end {
                edits += (x_end - x_start) as i64;
            } else {
                let (cost, split) = self.middle_snake(x_start, x_end, y_start, y_end, minimal);
                if cost == 1 {
                    edits += 1;
                } else {
                    tasks.push(Task { x_start: split.x, x_end, y_start: split.y, y_end, minimal: split.high_minimal });
                    tasks.push(Task { x_start, x_end: split.x, y_start, y_end: split.y, minimal: split.low_minimal });
                }
            }
        }
        Some(edits)
    }

    /// GNU diff's `diag`: the middle of an edit script of the sub-problem
    /// (whose first and last characters differ) and the script's
    /// approximate cost; exact unless the search gave up.
    fn middle_snake(
        &mut self,
        x_start: isize,
        x_end: isize,
        y_start: isize,
        y_end: isize,
        minimal: bool,
    ) -> (isize, Split) {
        let (x, y) = (self.x, self.y);
        let at = |d: isize| (d + self.diagonal_offset) as usize;
        let (lowest, highest) = (x_start - y_end, x_end - y_start);
        let (forward_centre, backward_centre) = (x_start - y_start, x_end - y_end);
        let (mut f_low, mut f_high) = (forward_centre, forward_centre);
        let (mut b_low, mut b_high) = (backward_centre, backward_centre);
        // The searches meet on the forward pass iff the centres' distance is odd.
        let odd = (forward_centre - backward_centre) & 1 == 1;
        let (fwd, bwd) = (&mut self.forward, &mut self.backward);
        fwd[at(forward_centre)] = x_start;
        bwd[at(backward_centre)] = x_end;
        let mut round: isize = 1;
        loop {
            // One more edit forward: the range widens by one diagonal on
            // each side, or narrows where it hit the border.
            if f_low > lowest {
                f_low -= 1;
                fwd[at(f_low - 1)] = -1;
            } else {
                f_low += 1;
            }
            if f_high < highest {
                f_high += 1;
                fwd[at(f_high + 1)] = -1;
            } else {
                f_high -= 1;
            }
            let mut d = f_high;
            while d >= f_low {
                let (below, above) = (fwd[at(d - 1)], fwd[at(d + 1)]);
                let mut xi = if below >= above { below + 1 } else { above };
                let mut yi = xi - d;
                while xi < x_end && yi < y_end && x[xi as usize] == y[yi as usize] {
                    xi += 1;
                    yi += 1;
                }
                fwd[at(d)] = xi;
                if odd && b_low <= d && d <= b_high && bwd[at(d)] <= xi {
                    return (2 * round - 1, Split { x: xi, y: yi, low_minimal: true, high_minimal: true });
                }
                d -= 2;
            }
            // One more edit backward.
            if b_low > lowest {
                b_low -= 1;
                bwd[at(b_low - 1)] = isize::MAX;
            } else {
                b_low += 1;
            }
            if b_high < highest {
                b_high += 1;
                bwd[at(b_high + 1)] = isize::MAX;
            } else {
                b_high -= 1;
            }
            let mut d = b_high;
            while d >= b_low {
                let (below, above) = (bwd[at(d - 1)], bwd[at(d + 1)]);
                let mut xi = if below < above { below } else { above - 1 };
                let mut yi = xi - d;
                while xi > x_start && yi > y_start && x[xi as usize - 1] == y[yi as usize - 1] {
                    xi -= 1;
                    yi -= 1;
                }
                bwd[at(d)] = xi;
                if !odd && f_low <= d && d <= f_high && xi <= fwd[at(d)] {
                    return (2 * round, Split { x: xi, y: yi, low_minimal: true, high_minimal: true });
                }
                d -= 2;
            }
            if !minimal && round >= self.give_up_after {
                // Give up: the forward point furthest from the start (max
                // x + y, clipped to the box) or the backward point furthest
                // from the end, whichever made more progress.
                let (mut f_best_sum, mut f_best_x) = (-1, 0);
                let mut d = f_high;
                while d >= f_low {
                    let mut xi = fwd[at(d)].min(x_end);
                    let mut yi = xi - d;
                    if y_end < yi {
                        xi = y_end + d;
                        yi = y_end;
                    }
                    if f_best_sum < xi + yi {
                        f_best_sum = xi + yi;
                        f_best_x = xi;
                    }
                    d -= 2;
                }
                let (mut b_best_sum, mut b_best_x) = (isize::MAX, 0);
                let mut d = b_high;
                while d >= b_low {
                    let mut xi = bwd[at(d)].max(x_start);
                    let mut yi = xi - d;
                    if yi < y_start {
                        xi = y_start + d;
                        yi = y_start;
                    }
                    if xi + yi < b_best_sum {
                        b_best_sum = xi + yi;
                        b_best_x = xi;
                    }
                    d -= 2;
                }
                let split = if (x_end + y_end) - b_best_sum < f_best_sum - (x_start + y_start) {
                    Split { x: f_best_x, y: f_best_sum - f_best_x, low_minimal: true, high_minimal: false }
                } else {
                    Split { x: b_best_x, y: b_best_sum - b_best_x, low_minimal: false, high_minimal: true }
                };
                return (2 * round - 1, split);
            }
            round += 1;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::verify::similarity::tests::{perl_similarities, Rng};
    use std::time::Instant;

    fn close(x: f64, y: f64) -> bool {
        (x - y).abs() <= 1e-12
    }

    /// Small cases worked by hand: no search reaches 256 rounds, so these
    /// are the exact values, and the module's conventions.
    #[test]
    fn small_cases_are_exact() {
        // kitten → sitting: delete k, insert s, delete e, insert i, insert g: 5 of 13.
        assert!(close(similarity("kitten", "sitting"), 8.0 / 13.0));
        assert!(close(similarity("abc", "abd"), 4.0 / 6.0));
        assert!(close(similarity("hello world", "hello"), 10.0 / 16.0));
        assert_eq!(similarity("", ""), 1.0);
        assert_eq!(similarity("a", ""), 0.0);
        assert_eq!(similarity("", "a"), 0.0);
        assert_eq!(similarity("same", "same"), 1.0);
        // "ab"/"ba": one common char, 2 edits of 4; characters, not bytes.
        assert_eq!(similarity("ab", "ba"), 0.5);
        assert_eq!(similarity("стол", "стул"), 0.75);
        // The limit: None below it, the value at or above it.
        assert_eq!(similarity_at_least("kitten", "sitting", 0.9), None);
        assert_eq!(similarity_at_least("kitten", "sitting", 0.6), Some(similarity("kitten", "sitting")));
        assert_eq!(similarity_at_least("abcd", "abcdxy", 0.8), Some(0.8));
        assert_eq!(similarity_at_least("abcd", "abcdxyz", 0.8), None);
        assert_eq!(similarity_at_least("", "", 0.8), Some(1.0));
        assert_eq!(similarity_at_least("a", "b", 1.5), None);
    }

    #[test]
    fn give_up_round_is_two_to_the_base_four_digits() {
        // 4^4 = 256 ≤ 300 < 4^5: 5 digits, 2^5 = 32, raised to 256.
        assert_eq!(too_expensive(300), 256);
        // 4^8 = 65,536 ≤ 100,000 < 4^9: 9 digits, 512.
        assert_eq!(too_expensive(100_000), 512);
        assert_eq!(too_expensive(65_535), 256);
        assert_eq!(too_expensive(65_536), 512);
        assert_eq!(too_expensive(20_000), 256);
    }

    /// `x = a³⁰⁰b³⁰⁰`, `y = b³⁰⁰a³⁰⁰` (1,200 chars: give up after 256
    /// rounds). The shortest script has 600 edits (keep the b's), so the
    /// searches would meet in round 300. Worked by hand: after 256 rounds
    /// no snake was met yet; every forward point has x + y = 256 (the first
    /// scanned, on the highest diagonal 256, is (256, 0)) and every
    /// backward point x + y = 944 (first: (600, 344)). Both made 256 steps
    /// of progress; on a tie the backward point wins, and the search
    /// reports cost 2·256 − 1 with the split at (600, 344), exact on the
    /// high side. A minimal search meets in round 300 on diagonal 300,
    /// where the b-snake runs from (300, 0) to (600, 300).
    #[test]
    fn middle_snake_gives_up_after_too_expensive_rounds() {
        let x: Vec<char> = "a".repeat(300).chars().chain("b".repeat(300).chars()).collect();
        let y: Vec<char> = "b".repeat(300).chars().chain("a".repeat(300).chars()).collect();
        let mut count = EditCount::new(&x, &y, 0.0);
        assert_eq!(count.give_up_after, 256);
        let heuristic = Split { x: 600, y: 344, low_minimal: false, high_minimal: true };
        assert_eq!(count.middle_snake(0, 600, 0, 600, false), (511, heuristic));
        let middle = Split { x: 300, y: 0, low_minimal: true, high_minimal: true };
        assert_eq!(count.middle_snake(0, 600, 0, 600, true), (600, middle));
        // The high half is 256 insertions; the low half, a³⁰⁰b³⁰⁰ against
        // b³⁰⁰a⁴⁴, meets in round 172 (344 edits): 600 in all, the minimum.
        assert_eq!(EditCount::new(&x, &y, 0.0).count_edits(), Some(600));
        assert_eq!(similarity(&x.iter().collect::<String>(), &y.iter().collect::<String>()), 0.5);
    }

    /// The early stop: with limit 0.8 on 10 chars the module's budget is
    /// `1 + 10·(1 − 0.8)` truncated, which in doubles is 2.9999999999999996,
    /// so 2 edits (not 3); a count passing it proves the value below the
    /// limit (by a whole edit), so the answer is `None` either way.
    #[test]
    fn early_stop_is_none_and_agrees_with_the_full_value() {
        let count = EditCount::new(&['a'; 5], &['b'; 5], 0.8);
        assert_eq!(count.max_edits, 2);
        assert_eq!(similarity_at_least("abcde", "vwxyz", 0.8), None);
        // abcdefghij/abXdefgYij: 4 edits of 20, exactly 0.8.
        assert_eq!(similarity_at_least("abcdefghij", "abXdefgYij", 0.8), Some(0.8));
        assert_eq!(similarity_at_least("abcdefghij", "abXdeZgYij", 0.8), None);
    }

    /// A vocabulary of `size` words of 1–9 chars over `alphabet`.
    fn vocabulary(rng: &mut Rng, alphabet: &[char], size: usize) -> Vec<String> {
        (0..size).map(|_| (0..1 + rng.below(9)).map(|_| alphabet[rng.below(alphabet.len())]).collect()).collect()
    }

    /// A word drawn with a skew towards the start of the vocabulary, so
    /// that frequent words recur as in prose.
    fn word<'v>(rng: &mut Rng, vocabulary: &'v [String]) -> &'v str {
        let head = 1 + rng.below(vocabulary.len());
        &vocabulary[rng.below(head)]
    }

    /// Long pairs (10,000–40,000 chars) whose second text rewrites, drops
    /// or inserts whole runs of words and edits single characters, dense
    /// enough that the module's searches give up, with exact similarities
    /// spread around the 0.8 threshold; both argument orders.
    pub(crate) fn long_pairs() -> Vec<(String, String)> {
        let mut rng = Rng(18_000_018);
        let alphabets = ["etaoinshrdlcumwfgypbvkjxqz", "оеаинтсрвлкмдпуяызьбгчйхжшюцщэфъё", "etaoinsh стол 中文"];
        let mut pairs = Vec::new();
        for i in 0..18 {
            let alphabet: Vec<char> = alphabets[i % alphabets.len()].chars().collect();
            let vocabulary = vocabulary(&mut rng, &alphabet, 300);
            let words = 1_800 + rng.below(4_500);
            let a: Vec<&str> = (0..words).map(|_| word(&mut rng, &vocabulary)).collect();
            // Per word: start a changed run with this chance (per 10,000).
            let run_rate = 60 + rng.below(110) as u64;
            let char_rate = rng.below(60) as u64;
            let mut b: Vec<String> = Vec::with_capacity(words);
            let mut k = 0;
            while k < a.len() {
                if rng.next() % 10_000 < run_rate {
                    let run = 5 + rng.below(60);
                    match rng.below(3) {
                        0 => b.extend((0..run).map(|_| word(&mut rng, &vocabulary).to_string())),
                        1 => {}
                        _ => {
                            b.extend((0..run).map(|_| word(&mut rng, &vocabulary).to_string()));
                            continue;
                        }
                    }
                    k += run;
                    continue;
                }
                let mut w: Vec<char> = a[k].chars().collect();
                if rng.next() % 1_000 < char_rate {
                    let at = rng.below(w.len());
                    w[at] = alphabet[rng.below(alphabet.len())];
                }
                b.push(w.into_iter().collect());
                k += 1;
            }
            let (a, b) = (a.join(" "), b.join(" "));
            pairs.push(if i % 2 == 0 { (a, b) } else { (b, a) });
        }
        pairs
    }

    /// The port against Perl's module on long texts with many edits: equal
    /// values (to 1e-12), never above the exact value, and on some pairs
    /// below it, a few of them on the other side of the 0.8 threshold.
    #[test]
    fn oracle_perl_long_texts_with_many_edits() {
        let pairs = long_pairs();
        let Some(perl) = perl_similarities("oracle_perl_long_texts_with_many_edits", &pairs) else { return };
        let (mut lower, mut flipped, mut near) = (0, 0, 0);
        for ((a, b), &want) in pairs.iter().zip(&perl) {
            let (chars_a, chars_b) = (a.chars().count(), b.chars().count());
            assert!(chars_a.min(chars_b) >= 10_000, "{chars_a} / {chars_b} chars");
            let started = Instant::now();
            let port = similarity(a, b);
            let port_time = started.elapsed();
            let exact = crate::verify::similarity::similarity(a, b);
            let exact_time = started.elapsed() - port_time;
            println!(
                "{chars_a:>6} / {chars_b:>6} chars: exact {exact:.6} ({exact_time:.1?}), \
                 module {want:.6}, port {port:.6} ({port_time:.1?})"
            );
            assert!(close(port, want), "{chars_a} / {chars_b} chars: port {port}, perl {want}");
            assert!(port <= exact + 1e-12);
            assert_eq!(similarity_at_least(a, b, 0.8), (want >= 0.8).then_some(port));
            lower += (exact - port > 1e-9) as usize;
            flipped += (exact >= 0.8 && port < 0.8) as usize;
            near += (0.7..0.9).contains(&exact) as usize;
        }
        println!(
            "{} long pairs equal to perl; exact above the module on {lower}, verdict flipped on {flipped}",
            pairs.len()
        );
        assert!(near >= 8, "only {near} pairs with an exact similarity in [0.7, 0.9)");
        assert!(lower >= 4, "the module's heuristic lowered only {lower} pairs");
        assert!(flipped >= 1, "no pair verified by exact and refused by the module");
    }

    /// Breadth: pairs of 600–6,000 chars over alphabets of 2 to 6 symbols
    /// (long snakes everywhere, many ties between diagonals) and unrelated
    /// texts, at edit rates from 0.1 to 1, where the give-up runs on
    /// sub-problems of every shape; the port equals the module on each,
    /// in both argument orders.
    #[test]
    fn oracle_perl_small_alphabets_past_the_give_up() {
        let mut rng = Rng(600_006);
        let alphabets = ["ab", "abcd", "аб中", "ab cd"];
        let mut pairs = Vec::new();
        for i in 0..24 {
            let alphabet: Vec<char> = alphabets[i % alphabets.len()].chars().collect();
            let len = 600 + rng.below(5_400);
            let a: String = (0..len).map(|_| alphabet[rng.below(alphabet.len())]).collect();
            let b: String = if i % 6 == 5 {
                (0..len + rng.below(500)).map(|_| alphabet[rng.below(alphabet.len())]).collect()
            } else {
                let rate = [100, 300, 600, 1_000][rng.below(4)];
                let mut b = String::with_capacity(a.len());
                for c in a.chars() {
                    if rng.next() % 1_000 >= rate {
                        b.push(c);
                    } else if rng.below(2) == 0 {
                        b.push(alphabet[rng.below(alphabet.len())]);
                        b.push(c);
                    }
                }
                b
            };
            pairs.push((b.clone(), a.clone()));
            pairs.push((a, b));
        }
        let Some(perl) = perl_similarities("oracle_perl_small_alphabets_past_the_give_up", &pairs) else { return };
        let mut lower = 0;
        for ((a, b), &want) in pairs.iter().zip(&perl) {
            let port = similarity(a, b);
            assert!(close(port, want), "{} / {} chars: port {port}, perl {want}", a.len(), b.len());
            lower += (crate::verify::similarity::similarity(a, b) - port > 1e-9) as usize;
        }
        println!("{} pairs over small alphabets equal to perl, {lower} below the exact value", pairs.len());
        assert!(lower >= 4, "the give-up lowered only {lower} pairs");
    }
}

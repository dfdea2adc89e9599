//! The comparison of two documents by the verification rule
//! ([`PairRule`]), shared by `verify`, `place`, `evaluate` and the
//! history's match: the documents as it sees them, the cheap bounds and
//! the screen before any LCS. What the documents' texts and the candidate
//! pairs are read from is [`crate::stages::verify::inputs`]'s.
//!
//! The similarity is spec §9's `2·LCS/(|a|+|b|)` over the verification
//! text (`[verify] text`: by default the visible text without the host's
//! boilerplate, see [`crate::text::boilerplate`]), computed exactly or as Perl's
//! `String::Similarity` computes it (`[verify] algorithm`). Before any LCS,
//! two bounds reject what cannot reach the threshold: the length bound
//! `2·min(|a|,|b|)/(|a|+|b|)` and the character-multiset bound (LCS ≤ Σ
//! over characters of the smaller of the two counts); they bound the Perl
//! module's value too, which is never above the exact one. Then the screen
//! (spec §9, "A screen before the LCS"; `[verify] screen`): the resemblance
//! of the two texts' sets of hashed character 8-grams, below which a pair
//! is rejected without an LCS. Unlike the bounds it is not a proof: it
//! rests on measurements (true near-duplicates resemble each other by 0.35
//! or more, template siblings by 0.05–0.15), which is why it can be turned
//! off. Each similarity is computed at most once, stopping as soon as it is
//! certain to stay below the threshold; the screen's resemblance also
//! estimates the edits a pair needs, where the LCS's band starts
//! ([`crate::verify::similarity::verdict_from`]).

use std::sync::OnceLock;

use crate::verify::settings::PairRule;
use crate::verify::similarity::Verdict;

/// A document as verification sees it.
pub struct Doc {
    pub doc_id: u64,
    pub url: String,
    /// The verification text (see [`crate::stages::verify::inputs::load_verification_texts`]).
    text: String,
    /// Characters of `text`, and its characters with their counts, sorted:
    /// the inputs of the two cheap bounds.
    chars: usize,
    histogram: Vec<(char, u32)>,
    /// The screen's set of the text's hashed character 8-grams, sorted:
    /// built the first time a pair of the document is screened, then kept
    /// with the document (once per document per batch of `verify`, not
    /// once per pair), and never for a document no pair screens.
    grams: OnceLock<Box<[u32]>>,
}

impl Doc {
    /// A document and the inputs of the bounds over its text.
    pub fn new(doc_id: u64, url: String, text: String) -> Doc {
        let (chars, histogram) = char_histogram(&text);
        Doc { doc_id, url, text, chars, histogram, grams: OnceLock::new() }
    }

    /// The characters of its text: what holding it in memory costs, for a
    /// cache's bound.
    pub fn chars(&self) -> usize {
        self.chars
    }

    /// The screen's 8-gram set, built on first use.
    fn grams(&self) -> &[u32] {
        self.grams.get_or_init(|| gram_set(&self.text))
    }
}

/// The most bytes a [`Doc`] of a text of `text_bytes` bytes holds under
/// `rule`: the text, and with the screen on its 8-gram set (4 bytes per
/// character, at most one character per byte). What a batch of documents
/// counts against its bound.
pub fn held_bytes(text_bytes: u64, rule: PairRule) -> u64 {
    if rule.screen > 0.0 {
        text_bytes * (1 + GRAM_BYTES)
    } else {
        text_bytes
    }
}

/// Bytes of one hashed 8-gram.
const GRAM_BYTES: u64 = std::mem::size_of::<u32>() as u64;

/// Characters in one gram of the screen (spec §9: 8).
const GRAM_CHARS: usize = 8;

/// Pairs whose shorter text has fewer characters than this are never
/// screened. Why: their LCS costs about as much as building and merging
/// their sets (a band of 0.4·n over n rows is under 700 words of 64 bits
/// at 256), and on a short text a few spread edits destroy every 8-gram (two edits in 20 characters can leave
/// none in common): the screen's measurements are of pages, not of
/// lines.
pub const SCREEN_MIN_CHARS: usize = 256;

/// The sorted, deduplicated hashes of every window of [`GRAM_CHARS`]
/// characters of `text` (none for a shorter text). A polynomial rolling
/// hash over the code points, mixed and cut to 32 bits: two different
/// grams sharing a hash can only raise a resemblance (spec §9: a
/// collision never rejects a pair), and 32 bits halve the set's memory.
fn gram_set(text: &str) -> Box<[u32]> {
    const BASE: u64 = 0x100_0000_01b3;
    let top = BASE.wrapping_pow(GRAM_CHARS as u32 - 1);
    let chars: Vec<u64> = text.chars().map(u64::from).collect();
    let mut grams: Vec<u32> = Vec::with_capacity(chars.len().saturating_sub(GRAM_CHARS - 1));
    let mut hash = 0u64;
    for (i, &c) in chars.iter().enumerate() {
        if i >= GRAM_CHARS {
            hash = hash.wrapping_sub(chars[i - GRAM_CHARS].wrapping_mul(top));
        }
        hash = hash.wrapping_mul(BASE).wrapping_add(c);
        if i + 1 >= GRAM_CHARS {
            grams.push((mix(hash) >> 32) as u32);
        }
    }
    grams.sort_unstable();
    grams.dedup();
    grams.into_boxed_slice()
}

/// The finalizer of splitmix64: every bit of the hash depends on every
/// bit of the rolling value.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// |A∩B| and |A∪B| of two sorted sets, in one merge.
fn intersection_and_union(a: &[u32], b: &[u32]) -> (usize, usize) {
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    (common, a.len() + b.len() - common)
}

/// The screen's resemblance of two documents: |A∩B|/|A∪B| of their
/// 8-gram sets (1 when both are empty: nothing tells them apart).
pub fn resemblance(a: &Doc, b: &Doc) -> f64 {
    let (common, union) = intersection_and_union(a.grams(), b.grams());
    if union == 0 {
        1.0
    } else {
        common as f64 / union as f64
    }
}

/// The edits (insertions plus deletions) a pair of 8-gram sets of
/// resemblance `r` needs, estimated: the grams in one set only, over the
/// grams one edit destroys when edits are spread. Edits bunched together
/// destroy fewer grams each, so the estimate is low for them: the LCS's
/// band then doubles from it, a few times at most.
fn estimated_edits(a: &Doc, b: &Doc, r: f64) -> usize {
    let sizes = (a.grams().len() + b.grams().len()) as f64;
    let common = r * sizes / (1.0 + r);
    ((sizes - 2.0 * common) / (2 * GRAM_CHARS - 1) as f64).ceil() as usize
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

/// Why a comparison ended where it did; counted in the stage's manifest
/// and written with each failed pair ([`Outcome::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The length bound is below the threshold.
    LengthBound,
    /// The character-multiset bound is below the threshold.
    CharBound,
    /// The 8-gram resemblance is below the screen (`[verify] screen`).
    Screen,
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

impl Outcome {
    /// Every outcome, at its own number (`outcome as usize`): how one
    /// stored as that number is read back.
    pub const ALL: [Outcome; 6] = [
        Outcome::LengthBound,
        Outcome::CharBound,
        Outcome::Screen,
        Outcome::Lcs,
        Outcome::LcsStoppedEarly,
        Outcome::Identical,
    ];

    /// The outcome's name in the tables (`failed_pairs.outcome`,
    /// `placement_comparisons.outcome`).
    pub fn name(self) -> &'static str {
        match self {
            Outcome::LengthBound => "rejected_by_length",
            Outcome::CharBound => "rejected_by_characters",
            Outcome::Screen => "rejected_by_screen",
            Outcome::Lcs => "lcs",
            Outcome::LcsStoppedEarly => "lcs_stopped_early",
            Outcome::Identical => "identical",
        }
    }
}

/// How many comparisons ended each way: the counters `verify` (round 0)
/// and `place` (its rounds) write in their manifests, under the same names;
/// one count per kind, in the order of [`Outcome::ALL`].
#[derive(Debug, Default, Clone, Copy)]
pub struct OutcomeCounts([u64; Outcome::ALL.len()]);

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
        counters.insert("rejected_by_screen".into(), count(Outcome::Screen));
        // LCS computations begun, and of those the ones a bound stopped
        // before the end.
        let stopped_early = count(Outcome::LcsStoppedEarly);
        counters.insert("lcs_computed".into(), count(Outcome::Lcs) + stopped_early);
        counters.insert("lcs_stopped_early".into(), stopped_early);
        counters.insert("identical_texts".into(), count(Outcome::Identical));
    }
}

/// How one comparison ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    /// The similarity by the rule's algorithm, when at least its threshold.
    pub similarity: Option<f64>,
    /// Why it ended where it did.
    pub outcome: Outcome,
    /// The value the outcome was decided by: the similarity of a pair that
    /// verified; for one that failed, the 8-gram resemblance when the
    /// screen rejected it, else the highest similarity it could still
    /// reach when it stopped (the length or character bound, the LCS's
    /// bound within the edits the threshold allows, or its value at the
    /// end), below the threshold.
    pub value: f64,
}

impl Comparison {
    /// A failed comparison.
    fn failed(outcome: Outcome, value: f64) -> Comparison {
        Comparison { similarity: None, outcome, value }
    }
}

/// What the steps before the LCS decided about a pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Prescreen {
    /// Identical texts, a bound or the screen settled it.
    Settled(Comparison),
    /// Only the LCS can tell; the screen's resemblance when it was
    /// screened (where the LCS's band starts).
    Open { resemblance: Option<f64> },
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

/// How the comparison of two documents by the rule ends: the cheap bounds
/// and the screen first, then at most one LCS computation. `a` is the Perl
/// module's first string (its value is not symmetric).
pub fn compare(a: &Doc, b: &Doc, rule: PairRule) -> Comparison {
    match prescreen(a, b, rule) {
        Prescreen::Settled(settled) => settled,
        Prescreen::Open { resemblance } => compare_by_lcs(a, b, rule, resemblance),
    }
}

/// The steps of [`compare`] before any LCS: identical texts (similarity
/// 1), one of the cheap bounds below the threshold, or the screen (when
/// the rule has one and the shorter text has at least
/// [`SCREEN_MIN_CHARS`]). What a caller that budgets the LCS work
/// ([`crate::verify::partners`]) asks first; a pair that must never be
/// screened is asked with [`PairRule::without_screen`].
pub fn prescreen(a: &Doc, b: &Doc, rule: PairRule) -> Prescreen {
    if a.text == b.text {
        return Prescreen::Settled(Comparison { similarity: Some(1.0), outcome: Outcome::Identical, value: 1.0 });
    }
    let total = a.chars + b.chars;
    let bound = |lcs_bound: usize| if total == 0 { 1.0 } else { (2 * lcs_bound) as f64 / total as f64 };
    let length_bound = bound(a.chars.min(b.chars));
    if length_bound < rule.threshold {
        return Prescreen::Settled(Comparison::failed(Outcome::LengthBound, length_bound));
    }
    let char_bound = bound(common_chars(&a.histogram, &b.histogram));
    if char_bound < rule.threshold {
        return Prescreen::Settled(Comparison::failed(Outcome::CharBound, char_bound));
    }
    if rule.screen == 0.0 || a.chars.min(b.chars) < SCREEN_MIN_CHARS {
        return Prescreen::Open { resemblance: None };
    }
    let r = resemblance(a, b);
    if r < rule.screen {
        return Prescreen::Settled(Comparison::failed(Outcome::Screen, r));
    }
    Prescreen::Open { resemblance: Some(r) }
}

/// The LCS step of [`compare`], for a pair [`prescreen`] left open, with
/// the screen's resemblance if it had one (the band then starts at the
/// edits it suggests).
pub fn compare_by_lcs(a: &Doc, b: &Doc, rule: PairRule, resemblance: Option<f64>) -> Comparison {
    let first_edits = resemblance.map(|r| estimated_edits(a, b, r));
    match rule.algorithm.verdict(&a.text, &b.text, rule.threshold, first_edits) {
        Verdict::Similar(s) => Comparison { similarity: Some(s), outcome: Outcome::Lcs, value: s },
        Verdict::Below(value) => Comparison::failed(Outcome::Lcs, value),
        Verdict::StoppedEarly(bound) => Comparison::failed(Outcome::LcsStoppedEarly, bound),
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
        PairRule { threshold, algorithm, text: VerificationText::Visible, screen: 0.2 }
    }

    /// The similarity and outcome of a comparison, its value aside.
    fn verdict(a: &Doc, b: &Doc, rule: PairRule) -> (Option<f64>, Outcome) {
        let c = compare(a, b, rule);
        (c.similarity, c.outcome)
    }

    #[test]
    fn bounds_reject_before_any_lcs() {
        let long = doc(1, "abcdefghijabcdefghij");
        let exact = SimilarityAlgorithm::Exact;
        // 2·5/25 = 0.4.
        let short = compare(&long, &doc(2, "abcde"), rule(0.8, exact));
        assert_eq!(short, Comparison { similarity: None, outcome: Outcome::LengthBound, value: 0.4 });
        // Same length, disjoint letters: only the character bound sees it.
        let disjoint = compare(&long, &doc(3, "klmnopqrstklmnopqrst"), rule(0.8, exact));
        assert_eq!(disjoint, Comparison { similarity: None, outcome: Outcome::CharBound, value: 0.0 });
        // kitten/sitting: 2*4/13 = 0.615..., exact above a low threshold.
        let (k, s) = (doc(4, "kitten"), doc(5, "sitting"));
        for algorithm in [exact, SimilarityAlgorithm::StringSimilarity] {
            assert_eq!(verdict(&k, &s, rule(0.6, algorithm)), (Some(8.0 / 13.0), Outcome::Lcs));
            assert_eq!(compare(&k, &s, rule(0.8, algorithm)).similarity, None);
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
        // Screened, it never reaches the LCS: the screen is what rejects it.
        assert_eq!(verdict(&a, &b, rule(0.8, exact)), (None, Outcome::Screen));
        let stopped = compare(&a, &b, rule(0.8, exact).without_screen());
        assert_eq!((stopped.similarity, stopped.outcome), (None, Outcome::LcsStoppedEarly));
        // The bound it stopped at is below the threshold and above the
        // exact value.
        let exact_value = crate::verify::similarity::similarity(&cycle, &reversed);
        assert!(stopped.value < 0.8 && stopped.value >= exact_value, "{stopped:?} {exact_value}");
        // Four rows: no check comes before the end (LCS 1, similarity 0.25).
        let (x, y) = (doc(4, "abcd"), doc(5, "dcba"));
        assert_eq!(
            compare(&x, &y, rule(0.8, exact)),
            Comparison { similarity: None, outcome: Outcome::Lcs, value: 0.25 }
        );
        assert!(crate::verify::similarity::similarity(&cycle, &reversed) < 0.3);
    }

    /// Each window of 8 characters once, whatever its repeats; none for a
    /// text of fewer characters; characters, not bytes.
    #[test]
    fn gram_sets_hold_each_window_once() {
        assert_eq!(gram_set("abcdefg").len(), 0);
        assert_eq!(gram_set("abcdefgh").len(), 1);
        assert_eq!(gram_set("abcdefghij").len(), 3);
        // "abababab…": two distinct windows.
        assert_eq!(gram_set(&"ab".repeat(50)).len(), 2);
        assert_eq!(gram_set("ёжик в тумане").len(), "ёжик в тумане".chars().count() - 7);
        assert_eq!(gram_set("abcdefghij"), gram_set("abcdefghij"));
        assert!(gram_set("abcdefgh") != gram_set("abcdefgi"));
    }

    /// Words of a made-up language with English's shape: 3,000 words of 1
    /// to 12 letters, drawn by Zipf's law (the first, like "the", in about
    /// one word of twelve).
    struct Words {
        vocabulary: Vec<String>,
        cumulative: Vec<f64>,
        state: u64,
    }

    impl Words {
        fn new(seed: u64) -> Words {
            let mut state = seed;
            let mut next = |n: u64| crate::methods::splitmix64(&mut state) % n;
            let vocabulary: Vec<String> = (0..3000)
                .map(|rank| {
                    let len = 1 + (rank as f64).log2() as u64 / 2 + next(6);
                    (0..len).map(|_| char::from(b'a' + next(26) as u8)).collect()
                })
                .collect();
            let mut total = 0.0;
            let cumulative = (1..=vocabulary.len())
                .map(|rank| {
                    total += 1.0 / rank as f64;
                    total
                })
                .collect();
            Words { vocabulary, cumulative, state }
        }

        fn word(&mut self) -> &str {
            let total = *self.cumulative.last().unwrap();
            let x = (crate::methods::splitmix64(&mut self.state) >> 11) as f64 / (1u64 << 53) as f64 * total;
            let k = self.cumulative.partition_point(|&c| c < x).min(self.vocabulary.len() - 1);
            &self.vocabulary[k]
        }

        fn text(&mut self, words: usize) -> Vec<String> {
            (0..words).map(|_| self.word().to_string()).collect()
        }

        /// `text` with each word replaced by a random one with probability
        /// `share`.
        fn replaced(&mut self, text: &[String], share: f64) -> Vec<String> {
            text.iter()
                .map(|w| {
                    let x = (crate::methods::splitmix64(&mut self.state) >> 11) as f64 / (1u64 << 53) as f64;
                    if x < share {
                        self.word().to_string()
                    } else {
                        w.clone()
                    }
                })
                .collect()
        }
    }

    fn page(id: u64, words: &[String]) -> Doc {
        doc(id, &words.join(" "))
    }

    /// The property of spec §9's screen: pairs made with 1–10% of their
    /// words replaced at random that are at or above the threshold by the
    /// exact LCS are never screened out (and keep their exact value),
    /// texts of 60 to 1,500 words. The least resemblance seen is printed.
    #[test]
    fn near_duplicates_with_words_replaced_are_never_screened_out() {
        let exact = rule(0.8, SimilarityAlgorithm::Exact);
        let mut words = Words::new(68);
        let (mut checked, mut least) = (0, f64::MAX);
        for i in 0..300u64 {
            let text = words.text(60 + (i as usize * 37) % 1440);
            let share = 0.01 + 0.09 * (i % 10) as f64 / 9.0;
            let edited = words.replaced(&text, share);
            let (a, b) = (page(2 * i, &text), page(2 * i + 1, &edited));
            let value = crate::verify::similarity::similarity(&a.text, &b.text);
            if value < 0.8 || a.text == b.text {
                continue;
            }
            checked += 1;
            least = least.min(resemblance(&a, &b));
            assert_eq!(compare(&a, &b, exact).similarity, Some(value), "pair {i}, {share:.2} replaced");
        }
        println!("{checked} near-duplicate pairs, least 8-gram resemblance {least:.3}");
        assert!(checked >= 250, "only {checked} pairs at or above 0.8");
        assert!(least >= 0.2);
    }

    /// Unrelated pages of similar length, and siblings with half their
    /// words replaced, are screened out (spec §9: ≤ 0.07 and 0.05–0.15
    /// measured): their LCS is never computed. Siblings as
    /// `scripts/bench_corpus.py --half-words` makes them: two copies of a
    /// page, each with its own half of the words replaced.
    #[test]
    fn unrelated_pages_and_half_words_siblings_are_screened_out() {
        // A low threshold, so that no cheap bound settles them first.
        let screened = rule(0.6, SimilarityAlgorithm::Exact);
        let mut words = Words::new(7);
        let mut most = 0.0f64;
        for i in 0..100u64 {
            let text = words.text(100 + (i as usize * 53) % 1400);
            let (first, second) = (words.replaced(&text, 0.5), words.replaced(&text, 0.5));
            let other = words.text(text.len());
            for (one, two) in [(&first, &second), (&text, &other)] {
                let (a, b) = (page(2 * i, one), page(2 * i + 1, two));
                most = most.max(resemblance(&a, &b));
                let c = compare(&a, &b, screened);
                assert_eq!((c.similarity, c.outcome), (None, Outcome::Screen), "pair {i}");
            }
        }
        println!("most 8-gram resemblance of unrelated and half-words pairs {most:.3}");
    }

    /// The screen leaves alone what it must: identical texts, texts
    /// shorter than [`SCREEN_MIN_CHARS`], a rule without a screen; and the
    /// value of a screened pair is its resemblance.
    #[test]
    fn the_screen_spares_identical_short_and_unscreened_pairs() {
        let mut state = 5u64;
        let text: String =
            (0..600).map(|_| char::from(b'a' + (crate::methods::splitmix64(&mut state) % 26) as u8)).collect();
        let reversed: String = text.chars().rev().collect();
        let exact = rule(0.8, SimilarityAlgorithm::Exact);
        let (a, b) = (doc(1, &text), doc(2, &reversed));
        let screened = compare(&a, &b, exact);
        assert_eq!((screened.outcome, screened.value), (Outcome::Screen, resemblance(&a, &b)));
        assert_eq!(compare(&a, &b, exact.without_screen()).outcome, Outcome::LcsStoppedEarly);
        assert_eq!(compare(&a, &doc(3, &text), exact).outcome, Outcome::Identical);
        let short: String = text.chars().take(SCREEN_MIN_CHARS - 1).collect();
        let short_reversed: String = short.chars().rev().collect();
        assert_ne!(compare(&doc(4, &short), &doc(5, &short_reversed), exact).outcome, Outcome::Screen);
        // The scaled screen: 0 at 0.5, the setting at 0.8.
        let config = crate::verify::settings::VerifyConfig { threshold: 0.5, ..Default::default() };
        assert_eq!(config.rule().screen, 0.0);
        let config = crate::verify::settings::VerifyConfig { threshold: 0.8, screen: 0.3, ..Default::default() };
        assert_eq!(config.rule().screen, 0.3);
        let config = crate::verify::settings::VerifyConfig { threshold: 0.65, ..Default::default() };
        assert!((config.rule().screen - 0.1).abs() < 1e-12);
    }

    /// A batch counts a screened document's 8-gram set (4 bytes a
    /// character) with its text; without the screen, the text alone.
    #[test]
    fn a_document_holds_its_gram_set_only_under_a_screen() {
        let screened = rule(0.8, SimilarityAlgorithm::Exact);
        assert_eq!(held_bytes(100, screened), 500);
        assert_eq!(held_bytes(100, screened.without_screen()), 100);
        let d = doc(1, &"abcdefghij".repeat(30));
        assert!(d.grams.get().is_none(), "built before any screen");
        assert_eq!(d.grams().len(), 10);
    }

    /// Starting the band at the screen's estimate gives the full
    /// computation's result bit for bit, on pairs from near-identical to
    /// below the threshold (spec §9: every verified pair has its exact
    /// value).
    #[test]
    fn the_band_started_from_the_estimate_gives_the_full_result() {
        let exact = rule(0.8, SimilarityAlgorithm::Exact);
        let mut words = Words::new(11);
        for i in 0..200u64 {
            let text = words.text(50 + (i as usize * 29) % 900);
            let edited = words.replaced(&text, [0.0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.3][i as usize % 7]);
            let (a, b) = (page(1, &text), page(2, &edited));
            let full = compare(&a, &b, exact.without_screen());
            let screened = compare(&a, &b, exact);
            if screened.outcome == Outcome::Screen {
                assert_eq!(full.similarity, None, "pair {i}");
                continue;
            }
            assert_eq!(screened.similarity.map(f64::to_bits), full.similarity.map(f64::to_bits), "pair {i}");
            for first in [1, 3, 17, 200, 5000] {
                let started = crate::verify::similarity::verdict_from(&a.text, &b.text, 0.8, Some(first));
                assert_eq!(started.similarity(), full.similarity, "pair {i} from {first} edits");
            }
        }
    }
}

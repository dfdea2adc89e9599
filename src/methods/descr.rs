//! a9 DescrWords (Ilyinsky et al., Yandex; spec §4). A set of descriptive
//! words, each with its own threshold on the relative frequency
//! `tf/tf_max`; a document's bit for a word is set when the word's relative
//! frequency is above the threshold, and the signature hashes the set bits.
//!
//! The study (Zelenkov & Segalovich, seed 004, §2) gives the idea:
//! «Проводим несколько итераций, каждая из которых состоит из двух фаз (1) и
//! (2). В (1) максимизируется покрытие документов в индексе при
//! фиксированной (ограниченной снизу) точности; в (2) максимизируется
//! точность при фиксированном покрытии.» (several rounds of two phases: (1)
//! maximise the coverage of documents at a fixed, bounded-below precision;
//! (2) maximise precision at fixed coverage), and «После каждой итерации
//! отбрасываем самые "плохие" слова. После последней итерации оставляем
//! достаточно слов для хорошего покрытия.» (after each round drop the worst
//! words; after the last keep enough words for good coverage). A word's
//! precision: «точность тем выше, чем меньше встречаемость слова в
//! дельте-окрестности данного значения относительной частоты» (the fewer
//! documents near the threshold, the higher).
//!
//! The fixed procedure of spec §4:
//! 1. candidates: `df >= 2`, `df <= N * descr_max_df_fraction`, the
//!    `descr_candidates` with the highest df (ties: term ascending);
//! 2. per candidate, the threshold θ on the grid `step, 2*step, ... < 1`
//!    whose band `θ ± descr_band` holds the fewest of its documents
//!    (precision = 1 - near/documents with the word); ties go to the θ covering
//!    more documents (`tf/tf_max > θ`), then to the lower θ;
//! 3. `descr_rounds` rounds of two phases:
//!    - (a) greedy cover over the candidates whose precision is at least
//!      `descr_precision_floor`, up to `descr_max_words` words: the word
//!      giving a bit to the most documents that still lack one is added
//!      first, until no word gives one;
//!    - (b) at the coverage (a) reached, held fixed, the chosen words in
//!      order of ascending precision (ties: term) are dropped when no
//!      covered document is lost without them, or else replaced by the most
//!      precise unchosen candidate of higher precision that covers every
//!      document that would be lost (ties: more documents, then the earlier
//!      candidate); otherwise kept. A dropped or replaced word never comes
//!      back.
//!
//! A document needs at least `descr_min_bits` set bits to get a signature
//! (spec §4, a choice like I-Match's minimum feature count: one or two
//! words are shared by many unrelated pages). "Covered" in step 3 means
//! exactly that, at least `descr_min_bits` bits (choice): (a) counts a
//! word's gain as the documents it gives a bit that still have fewer
//! than `descr_min_bits` (the greedy of set multicover), and (b) loses a
//! document when it would fall below `descr_min_bits`. With
//! `descr_min_bits = 1` this is the plain set cover of the spec.
//!
//! At web scale (spec §4, turn 5) steps 2–3 run on a sample: the documents
//! whose [`sample_hash`] falls under the rate `descr_sample_documents / N`,
//! narrowed to at most `descr_sample_documents` ([`SampleRule`]), so that
//! the cover's state is bounded by the sample, not the crawl. Step 1's
//! candidates and df stay the whole crawl's. The tasks of stage
//! `descr_sample` count their own documents ([`SampleCounter`]), and
//! [`DescrWords::choose`] reads those counts; every document is then
//! signed. A crawl no larger than the sample is its own sample, and its
//! words are what they were before.

use super::{CorpusStats, DocView, Signature, SignatureMethod, StateRow};
use crate::methods::traits::FamilySettings;
use crate::settings::Problems;
use foldhash::HashMap;
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use xxhash_rust::xxh3::xxh3_64;

/// Tolerance of the grid comparisons: relative frequencies are ratios of
/// small integers (3/40 = 0.075 exactly on a band edge) that floating point
/// may put a hair off the grid; the edges count as inside the band.
const EPS: f64 = 1e-9;

/// The threshold grid: `step, 2*step, ...` strictly below 1. θ = 0 would
/// reduce the bit to "the word occurs" and θ = 1 could never be exceeded, so
/// neither is a frequency threshold (choice). Empty for a non-positive step.
fn grid(step: f64) -> Vec<f64> {
    if step <= 0.0 || step.is_nan() {
        return Vec::new();
    }
    (1..).map(|j| j as f64 * step).take_while(|&t| t < 1.0 - EPS).collect()
}

/// Whether relative frequency `r` sets the bit of a word with threshold `theta`.
fn is_above(r: f64, theta: f64) -> bool {
    r > theta + EPS
}

/// A chosen threshold of one word.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Threshold {
    theta: f64,
    /// 1 - (documents within θ ± band) / (documents with the word).
    precision: f64,
    /// Documents with `tf/tf_max > θ`.
    covered: u32,
}

/// The distribution of one word's documents over the threshold grid.
#[derive(Debug, Clone)]
struct Histogram {
    /// Documents containing the word.
    docs: u32,
    /// Per grid threshold: documents with `|r - θ| <= band`.
    near: Vec<u32>,
    /// Per grid threshold: documents with `r > θ`.
    above: Vec<u32>,
}

impl Histogram {
    fn new(grid_len: usize) -> Self {
        Histogram { docs: 0, near: vec![0; grid_len], above: vec![0; grid_len] }
    }

    /// Counts one document where the word has relative frequency `r`.
    fn add(&mut self, r: f64, grid: &[f64], band: f64) {
        self.docs += 1;
        for (j, &theta) in grid.iter().enumerate() {
            if (r - theta).abs() <= band + EPS {
                self.near[j] += 1;
            }
            if is_above(r, theta) {
                self.above[j] += 1;
            }
        }
    }

    /// The threshold with the highest precision (fewest documents near it),
    /// ties to the one covering more documents, then to the lower θ. None
    /// without documents or grid.
    fn best(&self, grid: &[f64]) -> Option<Threshold> {
        if self.docs == 0 {
            return None;
        }
        let j = (0..grid.len()).min_by_key(|&j| (self.near[j], Reverse(self.above[j]), j))?;
        Some(Threshold {
            theta: grid[j],
            precision: 1.0 - self.near[j] as f64 / self.docs as f64,
            covered: self.above[j],
        })
    }
}

/// Calls `f(candidate, document index, tf/tf_max)` for every candidate word
/// of every sampled document, documents in order; `first` is the index of
/// the first. A position past the pool (a sample counted against another
/// `df`) is skipped, never indexed.
fn for_each_ratio(docs: &[SampledDoc], first: u32, pool_len: usize, mut f: impl FnMut(usize, u32, f64)) {
    for (d, doc) in (first..).zip(docs) {
        let tf_max = doc.tf_max.max(1) as f64;
        for &(c, n) in &doc.words {
            if (c as usize) < pool_len {
                f(c as usize, d, n as f64 / tf_max);
            }
        }
    }
}

/// Step 1: the candidate words with their df, in candidate order (highest
/// df first, ties: term ascending). A function of the whole crawl's `df`
/// and the settings alone, so every task computes the same positions: the
/// `descr_sample` table names candidates by them.
fn candidate_pool<'a>(cfg: &DescrSettings, stats: &'a CorpusStats) -> Vec<(&'a str, u64)> {
    let max_df = stats.n_docs as f64 * cfg.max_df_fraction;
    let mut pool: Vec<(&str, u64)> = stats
        .terms
        .iter()
        .filter(|(_, _, st)| st.df >= 2 && st.df as f64 <= max_df)
        .map(|(_, t, st)| (t, st.df))
        .collect();
    pool.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    pool.truncate(cfg.candidates);
    pool
}

/// The seed of [`sample_hash`]: its own, so that the sample has nothing to
/// do with the split of tasks by `doc_id % N` (doc ids are hashes too).
const SAMPLE_SEED: u64 = 0xa9a9_5a3b_1e5d_0c47;

/// The hash that decides whether a document is in a9's sample: splitmix64
/// of its id under [`SAMPLE_SEED`]. A function of the id alone (any engine,
/// any task split computes the same), and a bijection of `u64`, so two
/// documents never tie.
pub fn sample_hash(doc_id: u64) -> u64 {
    let mut state = doc_id ^ SAMPLE_SEED;
    super::splitmix64(&mut state)
}

/// Which documents steps 2–3 (thresholds, greedy cover) run on (spec §4,
/// "At web scale"): those whose [`sample_hash`] is below a bound, so each
/// task decides for its own documents without the others. Every document
/// when the crawl is no larger than the sample, which is then the crawl
/// itself and the choice is what it was before sampling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleRule {
    /// In the sample: `sample_hash(doc_id) < below`; None: every document.
    below: Option<u64>,
}

impl SampleRule {
    /// Every document (a crawl no larger than the sample).
    pub const EVERY: SampleRule = SampleRule { below: None };

    /// The rate `sample_documents / n_docs` (every document when the crawl
    /// has no more than `sample_documents`): about `sample_documents`
    /// documents, which [`SampleRule::at_most`] then trims to at most that.
    pub fn for_corpus(n_docs: u64, sample_documents: u64) -> Self {
        if n_docs <= sample_documents {
            return SampleRule::EVERY;
        }
        // sample_documents < n_docs, so the bound is below 2^64.
        let below = (u128::from(sample_documents) << 64) / u128::from(n_docs);
        SampleRule { below: Some(below as u64) }
    }

    /// True when `doc_id` is in the sample.
    pub fn includes(&self, doc_id: u64) -> bool {
        self.below.is_none_or(|below| sample_hash(doc_id) < below)
    }

    /// This rule narrowed to the `max_documents` smallest hashes when the
    /// documents it includes (`hashes`: their [`sample_hash`]es, in any
    /// order) are more: a rate gives about, not at most, its share. The
    /// narrowed rule is a bound on the hash too, the same whatever the
    /// order or the task that counted them. Returns the rule and its size.
    pub fn at_most(self, mut hashes: Vec<u64>, max_documents: usize) -> (SampleRule, usize) {
        if hashes.len() <= max_documents {
            return (self, hashes.len());
        }
        let Some(last) = max_documents.checked_sub(1) else {
            return (SampleRule { below: Some(0) }, 0);
        };
        let (_, &mut kth, _) = hashes.select_nth_unstable(last);
        // More hashes than max_documents, all distinct: the k-th smallest
        // is below the largest, so kth + 1 does not overflow.
        (SampleRule { below: Some(kth.saturating_add(1)) }, max_documents)
    }

    /// The share of all document ids the rule includes (1 for every
    /// document): the sample's rate, for the manifest.
    pub fn rate(&self) -> f64 {
        self.below.map_or(1.0, |below| below as f64 / 2f64.powi(64))
    }

    /// [`SampleRule::rate`] in parts per billion: a manifest's counters
    /// are integers.
    pub fn rate_ppb(&self) -> u64 {
        (self.rate() * 1e9).round() as u64
    }
}

/// One sampled document as steps 2–3 read it: its candidate words' counts
/// (a row of the `descr_sample` table).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SampledDoc {
    pub doc_id: u64,
    /// The highest count of any of its terms, candidate or not: `tf_max`.
    pub tf_max: u32,
    /// Its candidate words as (position in the candidate pool, count), by
    /// position.
    pub words: Vec<(u32, u32)>,
}

/// The counting of step 2's input, done by every task of stage
/// `descr_sample` for its own documents: the candidate pool (step 1, from
/// the whole crawl's `df`) by term id, and the sample rule.
pub struct SampleCounter {
    /// Per term id of the dictionary: its position in the pool, or
    /// `u32::MAX` for a term that is no candidate.
    position: Vec<u32>,
    rule: SampleRule,
}

impl SampleCounter {
    /// The pool of `stats` under `cfg`, and `rule`.
    pub fn new(cfg: &DescrSettings, stats: &CorpusStats, rule: SampleRule) -> Self {
        let mut position = vec![u32::MAX; stats.terms.len()];
        for (c, &(term, _)) in candidate_pool(cfg, stats).iter().enumerate() {
            if let Some(id) = stats.terms.id(term) {
                position[id as usize] = c as u32;
            }
        }
        SampleCounter { position, rule }
    }

    /// The counts of `doc` when the rule includes it. Reads its
    /// [`DocView::term_counts`] (looked up in the same dictionary).
    pub fn count(&self, doc: &DocView<'_>) -> Option<SampledDoc> {
        if !self.rule.includes(doc.doc_id) {
            return None;
        }
        let tf_max = doc.term_counts.iter().map(|c| c.tf).max().unwrap_or(0);
        let mut words: Vec<(u32, u32)> = doc
            .term_counts
            .iter()
            .filter_map(|c| self.position.get(c.id as usize).filter(|&&p| p != u32::MAX).map(|&p| (p, c.tf)))
            .collect();
        words.sort_unstable();
        Some(SampledDoc { doc_id: doc.doc_id, tf_max, words })
    }
}

/// The sample of documents already in memory, their term counts looked up
/// in `stats`' dictionary ([`DocView::term_counts`]): counted under the rule
/// of a crawl of `stats.n_docs` documents and narrowed to at most
/// `descr_sample_documents`, as stages `descr_sample` and `method_state`
/// make it from the tables. For benchmarks and tests, which hold their
/// documents.
pub fn sample_in_memory(cfg: &DescrSettings, stats: &CorpusStats, docs: &[DocView<'_>]) -> Vec<SampledDoc> {
    let rule = SampleRule::for_corpus(stats.n_docs, cfg.sample_documents as u64);
    let counter = SampleCounter::new(cfg, stats, rule);
    let counted: Vec<SampledDoc> = docs.iter().filter_map(|d| counter.count(d)).collect();
    let (rule, _) = rule.at_most(counted.iter().map(|d| sample_hash(d.doc_id)).collect(), cfg.sample_documents);
    counted.into_iter().filter(|d| rule.includes(d.doc_id)).collect()
}

/// The sample's documents as steps 2–3 read them: chunk by chunk, pass
/// after pass (the `descr_sample` table read back, or documents counted in
/// memory). The order need not be the same from pass to pass: the choice
/// depends on which documents a word covers, not on their order.
pub trait SamplePasses {
    /// Calls `f` with every sampled document, a chunk at a time. A pass
    /// that cannot read stops early; its reader keeps the error for the
    /// stage.
    fn each_chunk(&self, f: &mut dyn FnMut(&[SampledDoc]));
}

/// A sample already in memory, as one chunk.
impl SamplePasses for Vec<SampledDoc> {
    fn each_chunk(&self, f: &mut dyn FnMut(&[SampledDoc])) {
        f(self)
    }
}

/// A candidate word with its threshold and the documents whose bit it sets.
struct Candidate<'a> {
    term: &'a str,
    threshold: Threshold,
    /// Indices of the covered documents, ascending.
    docs: Vec<u32>,
}

/// Step 3: the indices of the chosen candidates (see the module doc).
fn select(cands: &[Candidate<'_>], n_docs: usize, cfg: &DescrSettings) -> Vec<usize> {
    let min_bits = u32::try_from(cfg.min_bits).unwrap_or(u32::MAX);
    let eligible = |c: &Candidate<'_>| c.threshold.precision >= cfg.precision_floor;
    let mut chosen = vec![false; cands.len()];
    let mut banned = vec![false; cands.len()];
    // How many chosen words set a bit in each document.
    let mut bits = vec![0u32; n_docs];
    let mut size = 0usize;
    // Document -> the candidates covering it, to find replacements.
    let mut covering: Vec<Vec<usize>> = vec![Vec::new(); n_docs];
    for (i, c) in cands.iter().enumerate() {
        for &d in &c.docs {
            covering[d as usize].push(i);
        }
    }
    // Chooses (on) or unchooses word i, with the bits it sets.
    let set = |i: usize, on: bool, bits: &mut [u32], chosen: &mut [bool]| {
        chosen[i] = on;
        for &d in &cands[i].docs {
            if on {
                bits[d as usize] += 1;
            } else {
                bits[d as usize] -= 1;
            }
        }
    };
    for _ in 0..cfg.rounds {
        // (a) Greedy cover, lazily re-evaluated: a word's gain only shrinks as
        // others are added, so a popped gain that is still exact is the best.
        // Ties go to the earlier candidate (higher df, then term). A word's
        // gain: its documents that still have fewer than min_bits bits.
        let mut heap: BinaryHeap<(usize, Reverse<usize>)> = cands
            .iter()
            .enumerate()
            .filter(|&(i, c)| !chosen[i] && !banned[i] && eligible(c))
            .map(|(i, c)| (c.docs.len(), Reverse(i)))
            .collect();
        while size < cfg.max_words {
            let Some((bound, Reverse(i))) = heap.pop() else {
                break;
            };
            if bound == 0 {
                break;
            }
            let gain = cands[i].docs.iter().filter(|&&d| bits[d as usize] < min_bits).count();
            if gain < bound {
                heap.push((gain, Reverse(i)));
                continue;
            }
            set(i, true, &mut bits, &mut chosen);
            size += 1;
        }
        // (b) Raise precision at fixed coverage, least precise word first.
        let mut order: Vec<usize> = (0..cands.len()).filter(|&i| chosen[i]).collect();
        order.sort_by(|&a, &b| {
            let (ca, cb) = (&cands[a], &cands[b]);
            ca.threshold.precision.total_cmp(&cb.threshold.precision).then(ca.term.cmp(cb.term))
        });
        for w in order {
            // Covered documents that would fall below min_bits without w.
            let lost: Vec<u32> = cands[w].docs.iter().copied().filter(|&d| bits[d as usize] == min_bits).collect();
            let precision = cands[w].threshold.precision;
            // A replacement must cover every lost document, so it is among
            // the candidates covering the first one.
            let replacement = lost.first().and_then(|&first| {
                covering[first as usize]
                    .iter()
                    .copied()
                    .filter(|&u| {
                        let c = &cands[u];
                        !chosen[u]
                            && !banned[u]
                            && eligible(c)
                            && c.threshold.precision > precision
                            && lost.iter().all(|d| c.docs.binary_search(d).is_ok())
                    })
                    .max_by(|&a, &b| {
                        let (ca, cb) = (&cands[a], &cands[b]);
                        ca.threshold
                            .precision
                            .total_cmp(&cb.threshold.precision)
                            .then(ca.docs.len().cmp(&cb.docs.len()))
                            .then(b.cmp(&a))
                    })
            });
            if !lost.is_empty() && replacement.is_none() {
                continue;
            }
            set(w, false, &mut bits, &mut chosen);
            banned[w] = true;
            match replacement {
                Some(u) => set(u, true, &mut bits, &mut chosen),
                None => size -= 1,
            }
        }
    }
    (0..cands.len()).filter(|&i| chosen[i]).collect()
}

/// a9: one signature (slot 0), the xxh3_64 of the words whose bit is set,
/// sorted and joined by single spaces; fewer than `descr_min_bits` bits set,
/// no signature.
#[derive(Debug, Clone)]
pub struct DescrWords {
    /// Descriptive word -> its threshold θ on `tf/tf_max`.
    thresholds: HashMap<String, f64>,
    /// The same by term id, `None` for the other terms: what signing reads.
    by_id: Vec<Option<f64>>,
    /// `descr_min_bits`: fewer set bits, no signature.
    min_bits: usize,
}

impl DescrWords {
    /// Chooses the words and thresholds (module doc): the candidates from
    /// `stats` (the whole crawl's N and df), their thresholds and the greedy
    /// cover from two passes over `sample` (the sampled documents' counts,
    /// made by [`SampleCounter`] against the same `stats`). The state is
    /// bounded by the sample: per candidate, the sampled documents it covers.
    pub fn choose(cfg: &DescrSettings, stats: &CorpusStats, sample: &dyn SamplePasses) -> Self {
        let grid = grid(cfg.grid_step);
        let pool = candidate_pool(cfg, stats);
        let mut hists = vec![Histogram::new(grid.len()); pool.len()];
        let mut n_docs = 0u32;
        sample.each_chunk(&mut |chunk| {
            for_each_ratio(chunk, n_docs, pool.len(), |c, _, r| hists[c].add(r, &grid, cfg.band));
            n_docs += chunk.len() as u32;
        });
        let thresholds: Vec<Option<Threshold>> = hists.iter().map(|h| h.best(&grid)).collect();
        let mut covers: Vec<Vec<u32>> = vec![Vec::new(); pool.len()];
        let mut first = 0u32;
        sample.each_chunk(&mut |chunk| {
            for_each_ratio(chunk, first, pool.len(), |c, d, r| {
                if thresholds[c].is_some_and(|th| is_above(r, th.theta)) {
                    covers[c].push(d);
                }
            });
            first += chunk.len() as u32;
        });
        let cands: Vec<Candidate<'_>> = pool
            .iter()
            .zip(thresholds)
            .zip(covers)
            .filter_map(|((&(term, _), th), docs)| th.map(|threshold| Candidate { term, threshold, docs }))
            .collect();
        let thresholds = select(&cands, n_docs as usize, cfg)
            .into_iter()
            .map(|i| (cands[i].term.to_string(), cands[i].threshold.theta))
            .collect();
        DescrWords::of(thresholds, stats, cfg)
    }

    /// The words and thresholds of an earlier [`DescrWords::choose`], from
    /// its [`SignatureMethod::state`] rows (a9's rows of `method_state`);
    /// `cfg` gives the minimum number of set bits, which is not in the state,
    /// and `stats` the term ids (every descriptive word is one of its terms).
    pub fn from_state(cfg: &DescrSettings, stats: &CorpusStats, rows: &[StateRow]) -> Self {
        DescrWords::of(rows.iter().map(|r| (r.term.clone(), r.value)).collect(), stats, cfg)
    }

    fn of(thresholds: HashMap<String, f64>, stats: &CorpusStats, cfg: &DescrSettings) -> Self {
        let by_id = stats.terms.map(|t, _| thresholds.get(t).copied());
        DescrWords { thresholds, by_id, min_bits: cfg.min_bits }
    }
}

impl SignatureMethod for DescrWords {
    fn id(&self) -> &'static str {
        "a9"
    }

    fn sign(&self, doc: &DocView<'_>, out: &mut Vec<Signature>) {
        let tf_max = doc.term_counts.iter().map(|c| c.tf).max().unwrap_or(1) as f64;
        // Sorted by id, which is byte order: every descriptive word is in
        // the dictionary.
        let set: Vec<&str> = doc
            .term_counts
            .iter()
            .filter(|c| {
                self.by_id.get(c.id as usize).copied().flatten().is_some_and(|th| is_above(c.tf as f64 / tf_max, th))
            })
            .map(|c| doc.term_of(c))
            .collect();
        // No bit set is never a signature, whatever min_bits says.
        if set.len() < self.min_bits.max(1) {
            return;
        }
        out.push(Signature { slot: 0, sig: xxh3_64(set.join(" ").as_bytes()) });
    }

    /// Each descriptive word (slot 0) with its threshold θ, by word.
    fn state(&self) -> Vec<StateRow> {
        let mut rows: Vec<StateRow> =
            self.thresholds.iter().map(|(t, &th)| StateRow { slot: 0, term: t.clone(), value: th }).collect();
        rows.sort_by(|a, b| a.term.cmp(&b.term));
        rows
    }
}

/// The settings of a9 in `[methods]` (`descr_*`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DescrSettings {
    /// Number of descriptive words kept (at most).
    #[serde(rename = "descr_max_words")]
    pub max_words: usize,
    /// Candidate pool size (highest df first).
    #[serde(rename = "descr_candidates")]
    pub candidates: usize,
    /// Candidates need df <= N * this fraction.
    #[serde(rename = "descr_max_df_fraction")]
    pub max_df_fraction: f64,
    /// Threshold grid step.
    #[serde(rename = "descr_grid_step")]
    pub grid_step: f64,
    /// Half-width of the band around a threshold counted as unstable.
    #[serde(rename = "descr_band")]
    pub band: f64,
    /// Greedy add/drop rounds.
    #[serde(rename = "descr_rounds")]
    pub rounds: usize,
    /// A word's precision must stay above this floor.
    #[serde(rename = "descr_precision_floor")]
    pub precision_floor: f64,
    /// A document with fewer set bits gets no signature, and the word
    /// selection counts a document as covered from this many bits on (one
    /// or two common words are shared by many unrelated pages).
    #[serde(rename = "descr_min_bits")]
    pub min_bits: usize,
    /// The thresholds and the greedy cover are chosen on a uniform sample
    /// of at most this many documents (spec §4, "At web scale"): the
    /// cover's state is per sampled document, so bounded whatever the
    /// crawl. A crawl no larger is its own sample, chosen from as before.
    #[serde(rename = "descr_sample_documents")]
    pub sample_documents: usize,
}

impl Default for DescrSettings {
    fn default() -> Self {
        DescrSettings {
            max_words: 5000,
            candidates: 50_000,
            max_df_fraction: 0.05,
            grid_step: 0.05,
            band: 0.025,
            rounds: 3,
            precision_floor: 0.5,
            min_bits: 2,
            sample_documents: 1_000_000,
        }
    }
}

impl FamilySettings for DescrSettings {
    fn check(&self, p: &mut Problems) {
        const S: &str = "methods";
        p.at_least(S, "descr_max_words", self.max_words, 1);
        p.at_least(S, "descr_candidates", self.candidates, 1);
        p.above_up_to(S, "descr_max_df_fraction", self.max_df_fraction, 0.0, 1.0);
        // The grid is step, 2·step, ... below 1: a step of 0 or at least 1
        // leaves no threshold at all.
        p.require(self.grid_step > 0.0 && self.grid_step < 1.0, || {
            format!("[methods] descr_grid_step = {} must be above 0 and below 1", self.grid_step)
        });
        p.within(S, "descr_band", self.band, 0.0, 0.5);
        p.at_least(S, "descr_rounds", self.rounds, 1);
        p.within(S, "descr_precision_floor", self.precision_floor, 0.0, 1.0);
        p.at_least(S, "descr_min_bits", self.min_bits, 1);
        p.at_least(S, "descr_sample_documents", self.sample_documents, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::term_frequencies;

    /// The choice as stages `descr_sample` and `method_state` make it:
    /// the documents' terms looked up, counted under the sample rule of
    /// `stats`, narrowed, then chosen from.
    fn build(cfg: &DescrSettings, stats: &CorpusStats, docs: &[DocView<'_>]) -> DescrWords {
        let docs = crate::methods::term_ids::with_ids(docs, &stats.terms);
        DescrWords::choose(cfg, stats, &sample_in_memory(cfg, stats, &docs))
    }

    /// A sample handed out `.1` documents at a time.
    struct ChunkedSample(Vec<SampledDoc>, usize);

    impl SamplePasses for ChunkedSample {
        fn each_chunk(&self, f: &mut dyn FnMut(&[SampledDoc])) {
            self.0.chunks(self.1).for_each(f);
        }
    }

    /// The one-process choice before the sample (spec §4 steps 1–3 over
    /// every document, strings hashed per document): the reference that a
    /// crawl no larger than the sample must still get.
    fn reference_build(cfg: &DescrSettings, stats: &CorpusStats, docs: &[DocView<'_>]) -> DescrWords {
        let grid = grid(cfg.grid_step);
        let pool = candidate_pool(cfg, stats);
        let index: HashMap<&str, usize> = pool.iter().enumerate().map(|(i, &(t, _))| (t, i)).collect();
        let ratios = |doc: &DocView<'_>| -> Vec<(usize, f64)> {
            let tf = term_frequencies(doc.terms);
            let tf_max = tf.values().copied().max().unwrap_or(1) as f64;
            tf.into_iter().filter_map(|(t, n)| index.get(t).map(|&c| (c, n as f64 / tf_max))).collect()
        };
        let mut hists = vec![Histogram::new(grid.len()); pool.len()];
        for doc in docs {
            for (c, r) in ratios(doc) {
                hists[c].add(r, &grid, cfg.band);
            }
        }
        let thresholds: Vec<Option<Threshold>> = hists.iter().map(|h| h.best(&grid)).collect();
        let mut covers: Vec<Vec<u32>> = vec![Vec::new(); pool.len()];
        for (d, doc) in docs.iter().enumerate() {
            for (c, r) in ratios(doc) {
                if thresholds[c].is_some_and(|th| is_above(r, th.theta)) {
                    covers[c].push(d as u32);
                }
            }
        }
        let cands: Vec<Candidate<'_>> = pool
            .iter()
            .zip(thresholds)
            .zip(covers)
            .filter_map(|((&(term, _), th), docs)| th.map(|threshold| Candidate { term, threshold, docs }))
            .collect();
        let thresholds = select(&cands, docs.len(), cfg)
            .into_iter()
            .map(|i| (cands[i].term.to_string(), cands[i].threshold.theta))
            .collect();
        DescrWords::of(thresholds, stats, cfg)
    }

    fn hist(ratios: &[f64]) -> Option<Threshold> {
        let g = grid(0.05);
        let mut h = Histogram::new(g.len());
        for &r in ratios {
            h.add(r, &g, 0.025);
        }
        h.best(&g)
    }

    #[test]
    fn default_grid() {
        let g = grid(0.05);
        assert_eq!(g.len(), 19);
        assert!((g[0] - 0.05).abs() < 1e-12 && (g[18] - 0.95).abs() < 1e-12);
    }

    #[test]
    fn threshold_choice() {
        // r = i/20 for i = 1..=19 except 6 and 14, plus 1.0 three times: 20 documents.
        // Every θ = j/20 has exactly its own r within ±0.025 (neighbours are
        // 0.05 away), except θ = 0.30 and θ = 0.70, which have none: both
        // have precision 1. Coverage: θ=0.30 -> r in {0.35..0.95 without 0.7} (12) + 3 = 15;
        // θ=0.70 -> {0.75..0.95} (5) + 3 = 8. The tie goes to θ = 0.30.
        let mut r: Vec<f64> = (1..=19).filter(|&i| i != 6 && i != 14).map(|i| i as f64 / 20.0).collect();
        r.extend([1.0; 3]);
        let th = hist(&r).unwrap();
        assert!((th.theta - 0.30).abs() < 1e-12);
        assert_eq!((th.precision, th.covered), (1.0, 15));

        // Add r = 13/40 = 0.325: on the band edge of both 0.30 and 0.35, so
        // θ = 0.30 now has one document near it and θ = 0.70 is the only clean one.
        r.push(13.0 / 40.0);
        let th = hist(&r).unwrap();
        assert!((th.theta - 0.70).abs() < 1e-12);
        assert_eq!((th.precision, th.covered), (1.0, 8));

        // r = j/20 for j = 1..=19: one document near every θ, precision
        // 1 - 1/19 = 0.947368 everywhere; θ = 0.05 covers most (18).
        let r: Vec<f64> = (1..=19).map(|i| i as f64 / 20.0).collect();
        let th = hist(&r).unwrap();
        assert!((th.theta - 0.05).abs() < 1e-12);
        assert!((th.precision - 18.0 / 19.0).abs() < 1e-12);
        assert_eq!(th.covered, 18);

        // All at 1.0: every θ clean and covering all; the lowest θ wins.
        let th = hist(&[1.0; 5]).unwrap();
        assert!((th.theta - 0.05).abs() < 1e-12);
        assert_eq!(hist(&[]), None);
    }

    /// Ten documents; every one has "common" twice, so tf_max = 2 and a word
    /// written twice has r = 1, once r = 0.5.
    const DOCS: [&str; 10] = [
        "common common alpha alpha delta delta",
        "common common alpha alpha delta delta",
        "common common alpha alpha",
        "common common alpha alpha",
        "common common alpha alpha",
        "common common bravo bravo",
        "common common bravo bravo",
        "common common bravo charlie",
        "common common charlie",
        "common common solo",
    ];

    fn corpus() -> (Vec<Vec<&'static str>>, CorpusStats) {
        let docs: Vec<Vec<&str>> = DOCS.iter().map(|d| d.split_whitespace().collect()).collect();
        let mut terms: HashMap<String, crate::methods::TermStats> = HashMap::default();
        for d in &docs {
            for (t, n) in term_frequencies(d) {
                let st = terms.entry(t.to_string()).or_default();
                st.df += 1;
                st.cf += n as u64;
            }
        }
        (docs, CorpusStats { n_docs: 10, dl_avg: 0.0, terms: terms.into_iter().collect() })
    }

    fn views<'a>(docs: &'a [Vec<&'a str>]) -> Vec<DocView<'a>> {
        docs.iter()
            .enumerate()
            .map(|(i, t)| DocView { doc_id: i as u64, terms: t, sentence_ends: &[], words: t, ..Default::default() })
            .collect()
    }

    /// Each document's signature, its terms looked up in `dict`.
    fn sigs(m: &DescrWords, dict: &crate::methods::TermDict, docs: &[DocView<'_>]) -> Vec<Option<u64>> {
        crate::methods::term_ids::with_ids(docs, dict)
            .iter()
            .map(|d| {
                let mut out = Vec::new();
                m.sign(d, &mut out);
                assert!(out.len() <= 1 && out.iter().all(|s| s.slot == 0));
                out.first().map(|s| s.sig)
            })
            .collect()
    }

    /// Grid {0.5} with band 0.25: r = 1 is clean and above, r = 0.5 is near and not above.
    fn cfg(min_bits: usize, max_words: usize) -> DescrSettings {
        DescrSettings {
            grid_step: 0.5,
            band: 0.25,
            max_df_fraction: 0.5,
            rounds: 2,
            min_bits,
            max_words,
            ..DescrSettings::default()
        }
    }

    #[test]
    fn build_and_sign() {
        // Candidates (2 <= df <= 10*0.5 = 5; common df 10 and solo df 1 are out),
        // in df order:
        //   0 alpha   df 5, r = 1 x5            -> θ 0.5, precision 1,   covers docs 0-4
        //   1 bravo   df 3, r = 1,1,0.5         -> θ 0.5, precision 2/3, covers docs 5,6
        //   2 charlie df 2, r = 0.5,0.5         -> precision 0: below the 0.5 floor
        //   3 delta   df 2, r = 1,1             -> θ 0.5, precision 1,   covers docs 0,1
        // min_bits 1. Round 1 (a): alpha (+5), bravo (+2), delta (+0: stop);
        // docs 0-6 covered. (b), bravo first (2/3): docs 5,6 have only its
        // bit and delta (unchosen, precision 1) does not cover them: kept.
        // alpha: docs 2-4 only have its bit, delta covers 0,1 only: kept.
        // Round 2 changes nothing. Result {alpha, bravo}, 7 documents signed.
        let (docs, stats) = corpus();
        let v = views(&docs);
        let m = build(&cfg(1, 5000), &stats, &v);
        let words: Vec<String> = m.state().into_iter().map(|r| r.term).collect();
        assert_eq!(words, ["alpha", "bravo"]);
        let a = Some(xxh3_64(b"alpha"));
        let b = Some(xxh3_64(b"bravo"));
        assert_eq!(sigs(&m, &stats.terms, &v), [a, a, a, a, a, b, b, None, None, None]);
        // Read back from its state rows (as a task of a sharded signatures
        // stage does), it signs the same.
        let back = DescrWords::from_state(&cfg(1, 5000), &stats, &m.state());
        assert_eq!(back.state(), m.state());
        assert_eq!(sigs(&back, &stats.terms, &v), [a, a, a, a, a, b, b, None, None, None]);

        // Read in chunks of any size, pass after pass, the same choice.
        let sample = sample_in_memory(&cfg(1, 5000), &stats, &crate::methods::term_ids::with_ids(&v, &stats.terms));
        assert_eq!(sample.len(), 10, "ten documents, a sample of a million: every one");
        for size in [1, 3, 7] {
            let chunked = DescrWords::choose(&cfg(1, 5000), &stats, &ChunkedSample(sample.clone(), size));
            assert_eq!(chunked.state(), m.state(), "{size}");
        }

        // At most one word: the greedy's first choice.
        let m = build(&cfg(1, 1), &stats, &v);
        assert_eq!(m.state(), vec![StateRow { slot: 0, term: "alpha".into(), value: 0.5 }]);
        assert_eq!(sigs(&m, &stats.terms, &v), [a, a, a, a, a, None, None, None, None, None]);

        // min_bits 2: a word's gain counts the documents with fewer than 2
        // bits. (a): alpha (+5: docs 0-4 one bit), bravo (+2: docs 5,6 one
        // bit), delta (+2: docs 0,1 reach two). Covered: docs 0,1. (b),
        // bravo first: its docs 5,6 have one bit, not covered, so none is
        // lost: dropped. alpha and delta each hold docs 0,1 at two bits and
        // nothing unchosen replaces them (bravo is out, charlie below the
        // floor): kept. Docs 2-4 have one bit (alpha): no signature.
        let m = build(&cfg(2, 5000), &stats, &v);
        let words: Vec<String> = m.state().into_iter().map(|r| r.term).collect();
        assert_eq!(words, ["alpha", "delta"]);
        let ad = Some(xxh3_64(b"alpha delta"));
        assert_eq!(sigs(&m, &stats.terms, &v), [ad, ad, None, None, None, None, None, None, None, None]);
        // The same words read back with min_bits 1 sign docs 2-4 by alpha alone.
        let back = DescrWords::from_state(&cfg(1, 5000), &stats, &m.state());
        assert_eq!(sigs(&back, &stats.terms, &v), [ad, ad, a, a, a, None, None, None, None, None]);
    }

    /// Candidates for step 3 alone, in candidate (df) order.
    fn cands() -> Vec<Candidate<'static>> {
        let c = |term, precision, docs: &[u32]| Candidate {
            term,
            threshold: Threshold { theta: 0.5, precision, covered: docs.len() as u32 },
            docs: docs.to_vec(),
        };
        vec![
            c("wide", 0.6, &[0, 1, 2, 3]),
            c("vee", 1.0, &[3, 4]),
            c("you", 0.9, &[0, 1, 2]),
            c("ex", 0.6, &[5, 6, 7, 8]),
            c("why", 1.0, &[5, 6, 9]),
            c("zed", 1.0, &[7, 8, 10]),
            c("low", 0.4, &[11, 12, 13, 14, 15]),
        ]
    }

    /// The chosen terms and the documents with at least `min_bits` of their bits.
    fn selected(cfg: &DescrSettings) -> (Vec<&'static str>, Vec<u32>) {
        let cs = cands();
        let chosen = select(&cs, 16, cfg);
        let mut bits = [0usize; 16];
        for &i in &chosen {
            for &d in &cs[i].docs {
                bits[d as usize] += 1;
            }
        }
        let covered = (0..16).filter(|&d| bits[d as usize] >= cfg.min_bits).collect();
        (chosen.iter().map(|&i| cs[i].term).collect(), covered)
    }

    #[test]
    fn phase_b_drops_and_replaces_at_fixed_coverage() {
        // Floor 0.5 keeps "low" (0.4) out; docs 11-15 are never covered.
        // min_bits 1, one round. (a), gains wide 4, vee 2, you 3, ex 4,
        // why 3, zed 3: wide (+4: 0-3) beats ex on the tie (earlier), then
        // ex (+4: 5-8); re-evaluated, you 0, vee 1 (doc 4), why 1 (doc 9),
        // zed 1 (doc 10): vee, why, zed (earlier first); you gains 0: stop.
        // Covered 0-10 (11 documents), by wide ex vee why zed.
        // (b), ascending precision, ties by term: ex, wide (0.6), vee, why, zed (1).
        // - ex: docs 5,6 also have why, 7,8 zed: no document lost, dropped.
        // - wide: docs 0,1,2 only have its bit (3 has vee): lost {0,1,2};
        //   you (0.9 > 0.6, unchosen) covers all three: wide -> you.
        // - vee: docs 3,4 now only have its bit; wide, the only other word
        //   covering doc 3, is out: kept. why, zed likewise keep 5,6,9 and 7,8,10.
        // Coverage stays 0-10.
        let mut c = DescrSettings { rounds: 1, min_bits: 1, ..DescrSettings::default() };
        let (words, covered) = selected(&c);
        assert_eq!(words, ["vee", "you", "why", "zed"]);
        assert_eq!(covered, (0..=10).collect::<Vec<u32>>());

        // At most 4 words, two rounds. Round 1 (a): wide, ex, vee (doc 4),
        // why (doc 9): 4 words, covered 0-9. (b): ex's docs 7,8 only have
        // its bit: lost {7,8}; zed (1.0, unchosen) covers both: ex -> zed,
        // which also covers doc 10 (coverage may rise, never fall). wide ->
        // you as above; vee, why kept. Round 2: (a) is full at 4 words, and
        // (b) has nothing left to replace you (wide is out). Covered 0-10.
        c.max_words = 4;
        c.rounds = 2;
        let (words, covered) = selected(&c);
        assert_eq!(words, ["vee", "you", "why", "zed"]);
        assert_eq!(covered, (0..=10).collect::<Vec<u32>>());

        // A precision floor of 0.95 leaves only vee, why, zed (1.0): (a)
        // takes why (3, earlier than zed), zed (3), vee (2); (b) changes
        // nothing (each holds its documents alone, no candidate above 1.0).
        // Covered 3-10: nothing eligible covers 0-2.
        c.precision_floor = 0.95;
        let (words, covered) = selected(&c);
        assert_eq!(words, ["vee", "why", "zed"]);
        assert_eq!(covered, [3, 4, 5, 6, 7, 8, 9, 10]);
    }

    #[test]
    fn min_bits_two_is_a_multicover() {
        // min_bits 2: a word gains the documents it covers that have fewer
        // than 2 bits. (a): wide 4 (0-3 at 1), ex 4 (5-8 at 1), you 3 (0-2
        // at 2), why 3 (5,6 at 2; 9 at 1), zed 3 (7,8 at 2; 10 at 1), vee 2
        // (3 at 2; 4 at 1). Covered (2 bits): 0-3 and 5-8. (b): every
        // chosen word holds covered documents at exactly 2 bits and no
        // unchosen eligible word is left: nothing changes.
        let c = DescrSettings { rounds: 1, min_bits: 2, ..DescrSettings::default() };
        let (words, covered) = selected(&c);
        assert_eq!(words, ["wide", "vee", "you", "ex", "why", "zed"]);
        assert_eq!(covered, [0, 1, 2, 3, 5, 6, 7, 8]);
    }

    #[test]
    fn several_bits_hash_the_sorted_words() {
        let stats = CorpusStats {
            terms: ["zeta", "alpha", "other"].map(|t| (t.into(), Default::default())).into_iter().collect(),
            ..Default::default()
        };
        let thresholds = [("zeta".to_string(), 0.5), ("alpha".to_string(), 0.05)].into_iter().collect();
        let m = DescrWords::of(thresholds, &stats, &DescrSettings { min_bits: 2, ..DescrSettings::default() });
        let t: Vec<&str> = "zeta zeta alpha other".split(' ').collect();
        let v = views(std::slice::from_ref(&t));
        // zeta r = 1 > 0.5, alpha r = 0.5 > 0.05: both bits set, 2 >= min_bits 2.
        assert_eq!(sigs(&m, &stats.terms, &v), [Some(xxh3_64(b"alpha zeta"))]);
    }

    #[test]
    fn fewer_bits_than_min_bits_no_signature() {
        let stats = CorpusStats {
            terms: ["zeta", "alpha", "other"].map(|t| (t.into(), Default::default())).into_iter().collect(),
            ..Default::default()
        };
        let thresholds = [("zeta".to_string(), 0.5), ("alpha".to_string(), 0.05)].into_iter().collect();
        let m = DescrWords::of(thresholds, &stats, &DescrSettings { min_bits: 2, ..DescrSettings::default() });
        // "zeta zeta alpha alpha alpha alpha": tf_max 4, zeta r = 0.5 is not
        // above 0.5, alpha r = 1: one bit < 2, no signature. With min_bits 1
        // the same document is signed by alpha alone.
        let t: Vec<&str> = "zeta zeta alpha alpha alpha alpha".split(' ').collect();
        let v = views(std::slice::from_ref(&t));
        assert_eq!(sigs(&m, &stats.terms, &v), [None]);
        let m = DescrWords { min_bits: 1, ..m };
        assert_eq!(sigs(&m, &stats.terms, &v), [Some(xxh3_64(b"alpha"))]);
        // No word at all: never a signature.
        let t: Vec<&str> = vec!["other"];
        assert_eq!(sigs(&m, &stats.terms, &views(std::slice::from_ref(&t))), [None]);
    }

    #[test]
    fn the_sample_is_decided_by_the_id_alone_whatever_the_task_split() {
        // Pinned: a changed hash would change every sampled crawl's words.
        assert_eq!((sample_hash(0), sample_hash(1)), (14304918569663382176, 11175176998812038510));
        let ids: Vec<u64> = (0..10_000u64).map(|i| xxh3_64(&i.to_le_bytes())).collect();
        let rule = SampleRule::for_corpus(10_000, 1_000);
        assert_eq!(rule.rate_ppb(), 100_000_000);
        let under_rate: Vec<u64> = ids.iter().copied().filter(|&id| rule.includes(id)).collect();
        // About a tenth (binomial sd 30), more than the thousand allowed or not.
        assert!((880..1120).contains(&under_rate.len()), "{}", under_rate.len());
        let (sample, size) = rule.at_most(under_rate.iter().map(|&id| sample_hash(id)).collect(), 1_000);
        assert_eq!(size, under_rate.len().min(1_000));
        assert_eq!(ids.iter().filter(|&&id| sample.includes(id)).count(), size);
        // Each task of N counts its own documents; the hashes reach the
        // choice in any order (tasks in reverse here): the same sample.
        for count in 1..=5u32 {
            let mut hashes = Vec::new();
            for index in (0..count).rev() {
                let task = crate::tables::shard::Shard { index, count };
                let own = ids.iter().filter(|&&id| task.owns_doc(id) && rule.includes(id));
                hashes.extend(own.map(|&id| sample_hash(id)));
            }
            assert_eq!(rule.at_most(hashes, 1_000), (sample, size), "{count} tasks");
        }
        // Narrowed to at most k: exactly the k smallest hashes.
        let (ten, size) = rule.at_most(under_rate.iter().map(|&id| sample_hash(id)).collect(), 10);
        assert_eq!((size, ids.iter().filter(|&&id| ten.includes(id)).count()), (10, 10));
        assert!(ten.rate() < sample.rate());
        // A crawl no larger than the sample is the sample.
        assert_eq!(SampleRule::for_corpus(1_000, 1_000), SampleRule::EVERY);
        assert!(ids.iter().all(|&id| SampleRule::EVERY.includes(id)));
        assert_eq!(SampleRule::EVERY.rate_ppb(), 1_000_000_000);
    }

    /// `n` documents of a made-up crawl: 50 topics of 6 words each, every
    /// document a mix of its topic's words, a few others' and common
    /// words, so that words have varied frequencies and covers overlap.
    /// Each document's id is a hash, as in a run.
    fn generated(n: u64) -> (Vec<(u64, Vec<String>)>, CorpusStats) {
        let mut rng = 7u64;
        let mut draw = |below: u64| crate::methods::splitmix64(&mut rng) % below;
        let docs: Vec<(u64, Vec<String>)> = (0..n)
            .map(|i| {
                let topic = i % 50;
                let len = 8 + draw(30);
                let terms = (0..len)
                    .map(|_| match draw(10) {
                        0..=4 => format!("topic{topic}w{}", draw(6)),
                        5..=6 => format!("topic{}w{}", draw(50), draw(6)),
                        _ => format!("common{}", draw(8)),
                    })
                    .collect();
                (xxh3_64(&i.to_le_bytes()), terms)
            })
            .collect();
        let mut terms: HashMap<String, crate::methods::TermStats> = HashMap::default();
        for (_, d) in &docs {
            let d: Vec<&str> = d.iter().map(String::as_str).collect();
            for (t, count) in term_frequencies(&d) {
                let st = terms.entry(t.to_string()).or_default();
                st.df += 1;
                st.cf += count as u64;
            }
        }
        (docs, CorpusStats { n_docs: n, dl_avg: 0.0, terms: terms.into_iter().collect() })
    }

    fn generated_views<'a>(docs: &'a [(u64, Vec<&'a str>)]) -> Vec<DocView<'a>> {
        docs.iter().map(|(id, t)| DocView { doc_id: *id, terms: t, words: t, ..Default::default() }).collect()
    }

    fn borrowed(docs: &[(u64, Vec<String>)]) -> Vec<(u64, Vec<&str>)> {
        docs.iter().map(|(id, t)| (*id, t.iter().map(String::as_str).collect())).collect()
    }

    #[test]
    fn below_the_sample_size_the_choice_is_the_one_process_reference() {
        let (docs, stats) = generated(400);
        let docs = borrowed(&docs);
        let v = generated_views(&docs);
        for (min_bits, max_words, rounds) in [(1, 5000, 3), (2, 5000, 3), (2, 12, 2), (3, 5000, 1)] {
            let c = DescrSettings { max_df_fraction: 0.3, min_bits, max_words, rounds, ..DescrSettings::default() };
            let reference = reference_build(&c, &stats, &v).state();
            assert!(reference.len() > 10, "{min_bits} bits: {} words", reference.len());
            assert_eq!(build(&c, &stats, &v).state(), reference, "{min_bits} bits, {max_words} words");
            // A sample of exactly the crawl's size is still the whole crawl.
            let at = DescrSettings { sample_documents: 400, ..c.clone() };
            assert_eq!(build(&at, &stats, &v).state(), reference);
            // The sample's documents in any order: the same choice (the
            // table is read back in no particular order).
            let mut sample = sample_in_memory(&c, &stats, &crate::methods::term_ids::with_ids(&v, &stats.terms));
            sample.reverse();
            sample.rotate_left(137);
            assert_eq!(DescrWords::choose(&c, &stats, &sample).state(), reference);
        }
    }

    #[test]
    fn a_small_sample_chooses_from_its_documents_and_every_document_is_signed() {
        let (docs, stats) = generated(400);
        let docs = borrowed(&docs);
        let v = crate::methods::term_ids::with_ids(&generated_views(&docs), &stats.terms);
        let c = DescrSettings { max_df_fraction: 0.3, min_bits: 1, sample_documents: 60, ..DescrSettings::default() };
        let sample = sample_in_memory(&c, &stats, &v);
        assert!((40..=60).contains(&sample.len()), "{} sampled", sample.len());
        let sampled: std::collections::HashSet<u64> = sample.iter().map(|d| d.doc_id).collect();
        let m = DescrWords::choose(&c, &stats, &sample);
        // The words are those of the sampled documents alone, candidates
        // and df still the whole crawl's...
        let alone: Vec<DocView<'_>> = v.iter().filter(|d| sampled.contains(&d.doc_id)).copied().collect();
        assert_eq!(m.state(), reference_build(&c, &stats, &alone).state());
        // ... not the whole crawl's choice ...
        let whole = reference_build(&DescrSettings { sample_documents: 400, ..c.clone() }, &stats, &v);
        assert_ne!(m.state(), whole.state());
        // ... and each sets its bit in a sampled document.
        for row in m.state() {
            let sets_bit = |d: &&DocView<'_>| {
                let tf = term_frequencies(d.terms);
                let tf_max = tf.values().copied().max().unwrap_or(1) as f64;
                tf.get(row.term.as_str()).is_some_and(|&n| is_above(n as f64 / tf_max, row.value))
            };
            assert!(alone.iter().any(|d| sets_bit(&d)), "{} sets no sampled document's bit", row.term);
        }
        // Every document is signed with them, in the sample or not.
        let signed = |d: &&DocView<'_>| {
            let mut out = Vec::new();
            m.sign(d, &mut out);
            !out.is_empty()
        };
        let outside = v.iter().filter(|d| !sampled.contains(&d.doc_id));
        assert!(outside.filter(signed).count() > 100, "documents outside the sample are signed too");
    }
}

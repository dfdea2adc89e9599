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

use super::{term_frequencies, CorpusStats, DocPasses, DocView, Signature, SignatureMethod, StateRow};
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

/// Calls `f(candidate, document index, tf/tf_max)` for every candidate term
/// of every document, documents in order.
fn for_each_ratio(docs: &[DocView<'_>], first: u32, index: &HashMap<&str, usize>, mut f: impl FnMut(usize, u32, f64)) {
    for (d, doc) in (first..).zip(docs) {
        let tf = term_frequencies(doc.terms);
        let tf_max = tf.values().copied().max().unwrap_or(1) as f64;
        for (term, n) in tf {
            if let Some(&c) = index.get(term) {
                f(c, d, n as f64 / tf_max);
            }
        }
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
    /// Chooses the words and thresholds (module doc) from `stats` (N, df)
    /// and two passes over `docs` (the relative frequencies); `docs` should
    /// be the corpus `stats` was computed from.
    pub fn build(cfg: &DescrSettings, stats: &CorpusStats, docs: &dyn DocPasses) -> Self {
        let grid = grid(cfg.grid_step);
        let max_df = stats.n_docs as f64 * cfg.max_df_fraction;
        let mut pool: Vec<(&str, u64)> = stats
            .terms
            .iter()
            .filter(|(_, _, st)| st.df >= 2 && st.df as f64 <= max_df)
            .map(|(_, t, st)| (t, st.df))
            .collect();
        pool.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        pool.truncate(cfg.candidates);
        let index: HashMap<&str, usize> = pool.iter().enumerate().map(|(i, &(t, _))| (t, i)).collect();

        let mut hists = vec![Histogram::new(grid.len()); pool.len()];
        let mut n_docs = 0u32;
        docs.each_chunk(&mut |chunk| {
            for_each_ratio(chunk, n_docs, &index, |c, _, r| hists[c].add(r, &grid, cfg.band));
            n_docs += chunk.len() as u32;
        });
        let thresholds: Vec<Option<Threshold>> = hists.iter().map(|h| h.best(&grid)).collect();
        let mut covers: Vec<Vec<u32>> = vec![Vec::new(); pool.len()];
        let mut first = 0u32;
        docs.each_chunk(&mut |chunk| {
            for_each_ratio(chunk, first, &index, |c, d, r| {
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

    /// The words and thresholds of an earlier [`DescrWords::build`], from
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::InMemory;

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
        let m = DescrWords::build(&cfg(1, 5000), &stats, &InMemory(&v));
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
        for size in [1, 3, 7] {
            let chunked = DescrWords::build(&cfg(1, 5000), &stats, &crate::methods::Chunked(&v, size));
            assert_eq!(chunked.state(), m.state(), "{size}");
        }

        // At most one word: the greedy's first choice.
        let m = DescrWords::build(&cfg(1, 1), &stats, &InMemory(&v));
        assert_eq!(m.state(), vec![StateRow { slot: 0, term: "alpha".into(), value: 0.5 }]);
        assert_eq!(sigs(&m, &stats.terms, &v), [a, a, a, a, a, None, None, None, None, None]);

        // min_bits 2: a word's gain counts the documents with fewer than 2
        // bits. (a): alpha (+5: docs 0-4 one bit), bravo (+2: docs 5,6 one
        // bit), delta (+2: docs 0,1 reach two). Covered: docs 0,1. (b),
        // bravo first: its docs 5,6 have one bit, not covered, so none is
        // lost: dropped. alpha and delta each hold docs 0,1 at two bits and
        // nothing unchosen replaces them (bravo is out, charlie below the
        // floor): kept. Docs 2-4 have one bit (alpha): no signature.
        let m = DescrWords::build(&cfg(2, 5000), &stats, &InMemory(&v));
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
}

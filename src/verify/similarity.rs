//! The verification similarity of spec §9: `sim(a, b) = 2·LCS(a, b) / (|a| + |b|)`.
//!
//! This is the value Perl's `String::Similarity` (the study's reference)
//! computes: `1 - e / (|a| + |b|)` where `e` is the number of insertions plus
//! deletions of the shortest edit script, and `e = |a| + |b| - 2·LCS`.
//! Lengths count Unicode scalar values (`char`s), like the Perl module on
//! character strings. Conventions copied from the module: two empty strings
//! are identical (1), an empty and a non-empty string share nothing (0).
//!
//! How: common prefix and suffix are stripped, then the LCS of the rest is
//! computed with the bit-parallel algorithm of Allison–Dix / Hyyrö
//! (`V' = (V + (V & M)) | (V & !M)`, one 64-bit word per 64 characters of the
//! longer string, one row per character of the shorter), restricted to the
//! band of diagonals the limit allows. It is exact and costs about
//! |short|·band/64 word operations, independently of how different the
//! strings are.
//!
//! Where it differs from Perl: the module runs GNU diff's `compareseq`
//! non-minimal, so a sub-problem whose middle-snake search exceeds
//! `max(256, ~sqrt(|a|+|b|))` steps (about 500+ edits) is split
//! heuristically and may count too many edits, i.e. return a *lower* value.
//! Below that edit count the two agree to the last bit (see the oracle test);
//! above it, on long documents, the gap can be large: measured on random
//! English-like texts, 33,423 vs 37,751 chars with 13,177 edits give exactly
//! 0.8153 here and 0.6586 in Perl; 22,400 vs 24,555 chars, 0.7942 vs 0.5463;
//! uniformly spread edits stay close (22,442 vs 22,502 chars, 3,456 edits:
//! equal). This module's functions return the exact value of the spec's
//! formula (`[verify] algorithm = "exact"`, the default); the module's value,
//! heuristics included, is [`string_similarity`]'s (`"string-similarity"`).
//!
//! What it does not do: normalization (callers pass the normalized texts)
//! and substitutions (an edit is an insertion or a deletion only).

pub mod string_similarity;
mod verdict;

pub use verdict::Verdict;

use std::collections::HashMap;

use crate::verify::settings::SimilarityAlgorithm;

impl SimilarityAlgorithm {
    /// The similarity of `a` and `b` by this algorithm if it is at least
    /// `limit`, else `None` (the contract of [`similarity_at_least`] for
    /// both).
    pub fn similarity_at_least(self, a: &str, b: &str, limit: f64) -> Option<f64> {
        self.verdict(a, b, limit, None).similarity()
    }

    /// How the comparison of `a` and `b` by this algorithm at `limit` ended:
    /// the entry point verification calls, which counts the early stops.
    /// `first_edits` is an estimate of the edits the pair needs, where one
    /// is known (from the screen's resemblance): the exact algorithm starts
    /// its band there ([`verdict_from`]); the Perl module's has no band.
    pub fn verdict(self, a: &str, b: &str, limit: f64, first_edits: Option<usize>) -> Verdict {
        match self {
            SimilarityAlgorithm::Exact => verdict_from(a, b, limit, first_edits),
            SimilarityAlgorithm::StringSimilarity => string_similarity::verdict(a, b, limit),
        }
    }
}

impl Verdict {
    /// The similarity if it reached the limit.
    pub fn similarity(self) -> Option<f64> {
        match self {
            Verdict::Similar(s) => Some(s),
            Verdict::Below(_) | Verdict::StoppedEarly(_) => None,
        }
    }

    /// The verdict of a value computed to the end.
    fn of_value(value: f64, limit: f64) -> Verdict {
        if value >= limit {
            Verdict::Similar(value)
        } else {
            Verdict::Below(value)
        }
    }
}

/// The similarity of `a` and `b`, in `[0, 1]`: `2·LCS / (|a| + |b|)` over
/// chars, 1 for two empty strings, 0 when exactly one is empty.
pub fn similarity(a: &str, b: &str) -> f64 {
    // A limit of 0 is always reached, so the early exits never fire.
    similarity_at_least(a, b, 0.0).unwrap_or(0.0)
}

/// The similarity of `a` and `b` if it is at least `limit`, else `None`.
///
/// `Some(s)` always carries the exact value `similarity(a, b)`, and `None` is
/// returned iff that value is below `limit`; the computation stops as soon
/// as that is certain (length bound first, then an upper bound on the LCS
/// checked while the bit-parallel scan runs). With `limit = 0.8` this is the
/// verification test of spec §9.
///
/// This deliberately differs from Perl's `similarity($a, $b, $limit)`, which
/// on an early stop returns an unspecified number below the limit, not 0
/// (the similarity of a partial edit script: 0.769… for kitten/sitting with
/// limit 0.9 where the true value is 0.615…, 0.5 for abc/xyz where it is 0):
/// a value that is not the similarity must not look like one.
pub fn similarity_at_least(a: &str, b: &str, limit: f64) -> Option<f64> {
    verdict(a, b, limit).similarity()
}

/// [`similarity_at_least`], telling a value computed to the end below the
/// limit from a computation stopped early by the length bound or the
/// bound checked during the scan.
pub fn verdict(a: &str, b: &str, limit: f64) -> Verdict {
    verdict_from(a, b, limit, None)
}

/// [`verdict`], the band starting at `first_edits` edits (when given); a
/// band that does not prove the result is followed by at most one more:
/// the band of the edits the first one's alignment needs, or the band the
/// limit allows when that is no narrower.
///
/// Why: the band the limit allows is about 0.4 of the shorter text at
/// 0.8, and a pair at 0.98 needs a tenth of it; a band of E edits costs
/// `|short|·E/64` words, so a pair costs by its own edits. Why the result
/// is the same bit for bit: the LCS a band of E edits gives is exact when
/// the pair needs at most E edits, and otherwise a value between the best
/// alignment inside the band and the true LCS ([`lcs_bit_parallel`]). So
/// a result that fits in E edits is the exact LCS; one that does not still
/// bounds the pair's edits by `middles - 2·value`, and a band that wide
/// holds the best alignment: its LCS is exact. Why not Ukkonen's doubling
/// (E, 2E, 4E, ... up to the limit's band): a pair that fails just below
/// the limit, the common case among template siblings, fits none of the
/// narrower bands and paid for all of them, about twice the limit's band
/// (stop 76, docs/benchmarks.md, "The screen in release builds"); now it
/// pays the first band and the limit's.
pub fn verdict_from(a: &str, b: &str, limit: f64, first_edits: Option<usize>) -> Verdict {
    if a == b {
        return Verdict::of_value(1.0, limit);
    }
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let total = a.len() + b.len();
    // Not both empty: equal strings were handled above.
    let ratio = |lcs: usize| (2 * lcs) as f64 / total as f64;
    let reaches = |lcs_upper_bound: usize| ratio(lcs_upper_bound) >= limit;
    let (short, long) = if a.len() <= b.len() { (&a, &b) } else { (&b, &a) };
    if !reaches(short.len()) {
        return Verdict::StoppedEarly(ratio(short.len()));
    }
    let prefix = short.iter().zip(long.iter()).take_while(|(x, y)| x == y).count();
    let (short_rest, long_rest) = (&short[prefix..], &long[prefix..]);
    let suffix = short_rest.iter().rev().zip(long_rest.iter().rev()).take_while(|(x, y)| x == y).count();
    let short_mid = &short_rest[..short_rest.len() - suffix];
    let long_mid = &long_rest[..long_rest.len() - suffix];
    let fixed = prefix + suffix;
    // The least LCS that reaches the limit, hence the most insertions plus
    // deletions the middles may need (`n + m - 2·LCS`): the band.
    // (No LCS below `guess` reaches it: 2·guess/total < limit.)
    let guess = ((limit * total as f64) / 2.0).floor() as usize;
    let needed =
        (guess.saturating_sub(1).min(short.len())..=short.len()).find(|&lcs| reaches(lcs)).unwrap_or(short.len());
    let middles = short_mid.len() + long_mid.len();
    let max_edits = middles.saturating_sub(2 * needed.saturating_sub(fixed));
    // Every alignment has at least the length difference in edits.
    let mut edits = first_edits.map_or(max_edits, |e| e.max(long_mid.len() - short_mid.len()).max(1).min(max_edits));
    for _ in 0..2 {
        if edits >= max_edits {
            break;
        }
        // The LCS of the middles that E edits leave, rounded up.
        let band_needed = (middles - edits).div_ceil(2);
        match lcs_bit_parallel(short_mid, long_mid, edits, band_needed) {
            Ok(mid) if middles - 2 * mid <= edits => return Verdict::of_value(ratio(fixed + mid), limit),
            // At most this many edits: the next band holds the best alignment.
            Ok(mid) => edits = middles - 2 * mid,
            Err(_) => break,
        }
    }
    match lcs_bit_parallel(short_mid, long_mid, max_edits, needed.saturating_sub(fixed)) {
        Ok(mid) => Verdict::of_value(ratio(fixed + mid), limit),
        Err(bound) => Verdict::StoppedEarly(ratio(fixed + bound)),
    }
}

/// Rows of the shorter string processed between two checks of the
/// early-exit bound (each check costs about as much as one row).
const CHECK_EVERY: usize = 64;

/// The LCS length of `short` and `long` (`short.len() <= long.len()`) if
/// it is at least `needed`, or a value below `needed` otherwise (then
/// `max_edits`, the insertions plus deletions an LCS of `needed` leaves, is
/// exceeded); `Err` with the bound as soon as an upper bound of the LCS
/// within the band falls below `needed`.
///
/// The bit vector runs along `long` and the rows along `short`: a row costs
/// the band's width either way, so the shorter string as rows is the
/// cheaper scan (by the length ratio, up to 1.5 at the 0.8 limit).
///
/// Why a band: an alignment with at most `max_edits` edits keeps to the
/// diagonals `column - row` in `[-(E-Δ)/2, Δ + (E-Δ)/2]` (E = `max_edits`,
/// Δ = the length difference: reaching a cell off those diagonals and
/// finishing from it takes more edits). Each row updates only the 64-column
/// words that meet that band; words left of it keep their last values and
/// words right of it their initial ones (the carry into the band is 0 and
/// the carry out of it is dropped). Every cell then holds a value between
/// the best alignment kept inside the band and the true LCS prefix, so:
/// when the true LCS needs at most `max_edits` edits its alignment lies in
/// the band and the result is exact; when it needs more, the result is
/// below what `max_edits` allows, as the true value is. The early-exit bound
/// stays safe for the same reason (the in-band alignment's prefix plus what
/// is left). At verification's threshold 0.8 the band is about 0.4 of the
/// shorter string: a 2.5 times smaller scan, on passing and failing pairs.
///
/// Why the band narrows as the scan goes ([`LiveColumns`]): the static band
/// allows every edit the limit allows at every row, but a pair that has
/// already spent edits has fewer left. Every `CHECK_EVERY` rows, the cells
/// that cannot be on an alignment of `needed` matches (their value plus the
/// most that the rest can add falls short) are found from the row's values,
/// and the band keeps to the cells an alignment through a live cell can
/// still reach. On a failing pair the band shrinks to nothing as the early
/// exit nears, instead of staying 0.4 of the string wide until it fires. The
/// same two properties of the cells keep it exact: a cell's value is at
/// least that of any alignment that stayed in the band, so a cell of an
/// alignment of `needed` matches is never found dead, and that alignment
/// stays in the narrowed band; words that leave the band on the right are
/// set back to their initial values, so that every value stays at most the
/// true LCS prefix when they come back into it.
fn lcs_bit_parallel(short: &[char], long: &[char], max_edits: usize, needed: usize) -> Result<usize, usize> {
    let n = long.len();
    if short.is_empty() {
        return Ok(0);
    }
    let words = n.div_ceil(64);
    let peq = MatchMasks::new(long, words);
    let mut v = vec![u64::MAX; words];
    // Cells (row r, column j) of the band: r - half <= j <= r + Δ + half,
    // with one word of margin on each side (harmless, and the left end
    // only moves right, which the frozen words rely on).
    let delta = n - short.len();
    let half = max_edits.saturating_sub(delta).div_ceil(2);
    let mut live = LiveColumns::new(short.len(), n, needed);
    let rows = RowKernel::for_this_cpu();
    // The end (exclusive) of the words the last row updated: those past
    // the band up to it are set back to their initial values when the
    // band's right end retreats.
    let mut touched_end = 0usize;
    for (row, c) in short.iter().enumerate() {
        if row % CHECK_EVERY == 0 && row > 0 {
            // The alignment crosses the split after row `row` at some prefix
            // k of `long`: LCS ≤ max over k of LCS(long[..k], short[..row])
            // + min(n - k, rest). The first term grows by at most 1 per k, so
            // the maximum is at k = n - rest: the prefixes aligned so far,
            // not the whole of `long` against them (a bound several times
            // tighter on pages that fail late).
            let rest = short.len() - row;
            let bound = live.value_at(&v, n - rest) + rest;
            if bound < needed {
                return Err(bound);
            }
            live.check(&v, row, touched_end);
        }
        let Some(pm) = peq.get(*c) else { continue };
        // DP row r = row + 1; column j is bit j - 1.
        let r = row + 1;
        let first = (r.saturating_sub(half + 1) / 64).saturating_sub(1);
        let last = ((r + delta + half).saturating_sub(1) / 64 + 1).min(words - 1);
        let (first, end) = live.clamp(&v, r, first, last + 1);
        if end < touched_end {
            v[end..touched_end].fill(u64::MAX);
        }
        touched_end = end;
        if first < end {
            rows.advance(&mut v[first..end], &pm[first..end]);
        }
    }
    Ok(lcs_of_prefix(&v, n))
}

/// The columns a banded scan still needs, from its last check: the cells
/// left of `first_column` or right of the diagonal through `right_column`
/// can no longer be on an alignment of `needed` matches (see
/// [`lcs_bit_parallel`]).
struct LiveColumns {
    rows: usize,
    columns: usize,
    needed: usize,
    /// Columns below this are dead for every later row: the value of a
    /// cell there is below `needed` minus the rows left, and an alignment
    /// never goes back to a smaller column.
    first_column: usize,
    /// (y, r): at the check after row r, no cell right of column y could
    /// still reach `needed`, so row r' > r needs no column right of
    /// y + (r' - r) (one match per row at most).
    right_column: (usize, usize),
    /// The first word a row updates, never decreasing, and the zero bits
    /// of the words before it (the value of the cell at its left end).
    first_word: usize,
    zeros_before: usize,
}

impl LiveColumns {
    fn new(rows: usize, columns: usize, needed: usize) -> LiveColumns {
        LiveColumns {
            rows,
            columns,
            needed,
            first_column: 0,
            right_column: (columns, 0),
            first_word: 0,
            zeros_before: 0,
        }
    }

    /// The value of cell (current row, `column`): the zero bits before it,
    /// counted from the frozen words' total when the column is past them.
    fn value_at(&self, v: &[u64], column: usize) -> usize {
        let frozen = 64 * self.first_word;
        if column < frozen {
            lcs_of_prefix(v, column)
        } else {
            self.zeros_before + lcs_of_prefix(&v[self.first_word..], column - frozen)
        }
    }

    /// Finds the live columns after `row` rows from the row's values `v`:
    /// the words from `first_word` to `end` (exclusive) hold them, the
    /// words after are flat (initial).
    fn check(&mut self, v: &[u64], row: usize, end: usize) {
        let rest = self.rows - row;
        let left_target = self.needed.saturating_sub(rest);
        // `value` is the cell (row, 64·w): the LCS of long[..64·w] and the
        // rows so far. A cell (row, y) is live only if value + min(columns
        // - y, rest) ≥ needed: left of the live ones value < needed - rest
        // (value never decreases along the row), right of them value +
        // columns - y < needed (it never increases along the row).
        let mut value = self.zeros_before;
        let mut right = None;
        for (w, &word) in v.iter().enumerate().take(end).skip(self.first_word) {
            let column = 64 * w;
            if value < left_target {
                // Columns up to this one are dead.
                self.first_column = self.first_column.max(column + 1);
            }
            if value + self.columns >= self.needed + column {
                right = Some(column);
            }
            value += zeros_within(word, self.columns - column);
        }
        let flat_from = (64 * end.max(self.first_word)).min(self.columns);
        let y = if value + self.columns >= self.needed + flat_from {
            // Live into the flat part, up to where value + columns - y
            // falls below needed.
            (value + self.columns - self.needed).min(self.columns)
        } else {
            // Dead from the word boundary after the last live one.
            right.map_or(64 * self.first_word, |c| c + 64).min(self.columns)
        };
        self.right_column = (y, row);
    }

    /// The band's words for DP row `r` (`first..end` from the static band)
    /// narrowed to the live columns; advances the frozen left end. An empty
    /// band is `first >= end`, with `end >= first_word`.
    fn clamp(&mut self, v: &[u64], r: usize, first: usize, end: usize) -> (usize, usize) {
        // Column j is bit j - 1, in word (j - 1) / 64.
        let first = first.max(self.first_column.saturating_sub(1) / 64).min(v.len());
        while self.first_word < first {
            self.zeros_before += zeros_within(v[self.first_word], self.columns - 64 * self.first_word);
            self.first_word += 1;
        }
        let (y, at) = self.right_column;
        let right = y + (r - at);
        let end = end.min(right.div_ceil(64)).max(first);
        (first, end)
    }
}

/// The zero bits among the first `columns` bits of `word` (all 64 when
/// `columns >= 64`): the LCS steps of a word whose last bits may lie past
/// the end of the row.
fn zeros_within(word: u64, columns: usize) -> usize {
    let bits = columns.min(64);
    let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
    bits - (word & mask).count_ones() as usize
}

/// How [`lcs_bit_parallel`] advances a row: eight words at a time with
/// AVX-512 when the CPU has it and the row is wide, else [`advance_row`].
///
/// Why both: the wide kernel adds eight words at once and settles their
/// carries in a mask, which costs a fixed latency per row; measured on
/// rows of random words (this machine, release build), it is 0.8–1.0 times
/// the `adc` loop's speed at 12–16 words, 1.2 at 20–24, 1.6–2.0 at 32 and
/// 2.8–3.1 at 100–1,000. A band's width is the edits the limit allows, so
/// the wide rows are the long pages' and the failing pairs', which are
/// most of verification's time.
#[derive(Clone, Copy)]
struct RowKernel {
    /// Only x86-64 has the kernel; elsewhere this is always false.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    avx512: bool,
}

impl RowKernel {
    /// Rows of at least this many words use the AVX-512 kernel.
    const WIDE_ROW_WORDS: usize = 20;

    fn for_this_cpu() -> RowKernel {
        #[cfg(target_arch = "x86_64")]
        let avx512 = std::arch::is_x86_feature_detected!("avx512f");
        #[cfg(not(target_arch = "x86_64"))]
        let avx512 = false;
        RowKernel { avx512 }
    }

    #[inline]
    fn advance(self, v: &mut [u64], pm: &[u64]) {
        #[cfg(target_arch = "x86_64")]
        if self.avx512 && v.len() >= Self::WIDE_ROW_WORDS {
            // SAFETY: `avx512` is set only where the CPU has AVX-512F.
            return unsafe { advance_row_avx512(v, pm) };
        }
        advance_row(v, pm)
    }
}

/// [`advance_row`] eight words at a time: each lane's sum `x + (x & m)`
/// without carries, then the carries between lanes from two masks, the
/// lanes whose sum overflowed (generate) and those at all ones, which pass
/// an incoming carry on (propagate; a lane never does both, since an
/// overflowed sum is at most 2^64 - 2). `((generate << 1) | carry_in) +
/// propagate` ripples through the propagating lanes as a binary addition
/// does, so its bits that differ from `propagate` are the lanes that take
/// a carry, and its ninth bit is the carry out of the block.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline(never)]
fn advance_row_avx512(v: &mut [u64], pm: &[u64]) {
    use std::arch::x86_64::*;
    let pm = &pm[..v.len()];
    let (v_eights, v_rest) = v.as_chunks_mut::<8>();
    let (pm_eights, pm_rest) = pm.as_chunks::<8>();
    let pm_eights = &pm_eights[..v_eights.len()];
    let all_ones = _mm512_set1_epi64(-1);
    let mut carry = 0u32;
    for k in 0..v_eights.len() {
        // SAFETY: unaligned loads and stores of eight words within the chunks.
        let (x, m) = unsafe {
            (_mm512_loadu_si512(v_eights[k].as_ptr().cast()), _mm512_loadu_si512(pm_eights[k].as_ptr().cast()))
        };
        let sum = _mm512_add_epi64(x, _mm512_and_si512(x, m));
        let generate = _mm512_cmplt_epu64_mask(sum, x) as u32;
        let propagate = _mm512_cmpeq_epi64_mask(sum, all_ones) as u32;
        let rippled = ((generate << 1) | carry) + propagate;
        carry = rippled >> 8;
        let carried_in = ((rippled ^ propagate) & 0xff) as __mmask8;
        // Adding 1 to the lanes that take a carry: subtracting all ones.
        let sum = _mm512_mask_sub_epi64(sum, carried_in, sum, all_ones);
        // sum | (x & !m), bit by bit (truth table 0xF4 over sum, x, m).
        let row = _mm512_ternarylogic_epi64::<0xF4>(sum, x, m);
        // SAFETY: as the loads.
        unsafe { _mm512_storeu_si512(v_eights[k].as_mut_ptr().cast(), row) };
    }
    advance_row_carrying(v_rest, pm_rest, carry != 0);
}

/// One row of the recurrence over the band's words: `V' = (V + (V & M)) |
/// (V & !M)`, the sum carried from word to word (carry into the first word
/// 0, out of the last dropped).
///
/// Why `_addcarry_u64`, four words an iteration: this loop is nearly all of
/// verification's time, and it is bound by the carry chain. Written with
/// `overflowing_add`, the carry goes through a register every word (`setb`,
/// `bt`, `adc`: 3–4 cycles); four `adc` in a row keep it in the flags.
/// Measured on pairs of 4k–30k random chars: 2.2 times faster; Javadoc's
/// verify stage went from 23 to 12.5 CPU-s with this function alone.
#[cfg(target_arch = "x86_64")]
#[inline(never)]
fn advance_row(v: &mut [u64], pm: &[u64]) {
    use std::arch::x86_64::_addcarry_u64;
    // Not inlined: in its caller the loop lost its registers to the
    // caller's values (reloads from the stack every iteration).
    let pm = &pm[..v.len()];
    let (v_fours, v_rest) = v.as_chunks_mut::<4>();
    let (pm_fours, pm_rest) = pm.as_chunks::<4>();
    let pm_fours = &pm_fours[..v_fours.len()];
    let mut carry = 0u8;
    // Indices rather than `zip`, whose length computation was a call per
    // row in the profile.
    for k in 0..v_fours.len() {
        let (x, m) = (&mut v_fours[k], pm_fours[k]);
        let mut s = [0u64; 4];
        carry = _addcarry_u64(carry, x[0], x[0] & m[0], &mut s[0]);
        carry = _addcarry_u64(carry, x[1], x[1] & m[1], &mut s[1]);
        carry = _addcarry_u64(carry, x[2], x[2] & m[2], &mut s[2]);
        carry = _addcarry_u64(carry, x[3], x[3] & m[3], &mut s[3]);
        *x = [s[0] | (x[0] & !m[0]), s[1] | (x[1] & !m[1]), s[2] | (x[2] & !m[2]), s[3] | (x[3] & !m[3])];
    }
    for k in 0..v_rest.len() {
        let (x, m) = (v_rest[k], pm_rest[k]);
        let mut sum = 0;
        carry = _addcarry_u64(carry, x, x & m, &mut sum);
        v_rest[k] = sum | (x & !m);
    }
}

/// [`advance_row`] without the x86-64 intrinsic (other targets; tests
/// check that both give the same rows).
#[cfg(any(test, not(target_arch = "x86_64")))]
fn advance_row_portable(v: &mut [u64], pm: &[u64]) {
    advance_row_carrying(v, pm, false)
}

/// The plain loop of [`advance_row`] with a carry into the first word: the
/// portable kernel, and the words after the AVX-512 kernel's last block.
fn advance_row_carrying(v: &mut [u64], pm: &[u64], mut carry: bool) {
    for (vw, &mw) in v.iter_mut().zip(pm) {
        let (sum, c1) = vw.overflowing_add(*vw & mw);
        let (sum, c2) = sum.overflowing_add(carry as u64);
        carry = c1 | c2;
        *vw = sum | (*vw & !mw);
    }
}

#[cfg(not(target_arch = "x86_64"))]
use advance_row_portable as advance_row;

/// LCS(short[..k], long[..row]) from the bit vector after `row` rows: the
/// number of zero bits among the first `k` (bit i is 0 where the DP row
/// steps up at column i).
fn lcs_of_prefix(v: &[u64], k: usize) -> usize {
    let full = k / 64;
    let ones: usize = v[..full].iter().map(|w| w.count_ones() as usize).sum();
    let partial = match k % 64 {
        0 => 0,
        bits => (v[full] & ((1u64 << bits) - 1)).count_ones() as usize,
    };
    k - ones - partial
}

/// For each distinct char of the shorter string, the bitmask of its
/// positions (bit i of the mask = char i equals it), `words` u64 per char.
struct MatchMasks {
    /// Row of each ASCII char in `masks`, `u32::MAX` when absent.
    ascii: [u32; 128],
    /// Row of every other char.
    other: HashMap<char, u32>,
    masks: Vec<u64>,
    words: usize,
}

impl MatchMasks {
    fn new(s: &[char], words: usize) -> MatchMasks {
        let mut mm = MatchMasks { ascii: [u32::MAX; 128], other: HashMap::new(), masks: Vec::new(), words };
        for (i, &c) in s.iter().enumerate() {
            let row = mm.row_or_insert(c);
            mm.masks[row * words + i / 64] |= 1u64 << (i % 64);
        }
        mm
    }

    fn row_or_insert(&mut self, c: char) -> usize {
        let slot = if c.is_ascii() { &mut self.ascii[c as usize] } else { self.other.entry(c).or_insert(u32::MAX) };
        if *slot == u32::MAX {
            // The row count is worked out only for a new char: a division
            // per char of the text was the hottest line of the masks.
            *slot = (self.masks.len() / self.words) as u32;
            self.masks.resize(self.masks.len() + self.words, 0);
        }
        *slot as usize
    }

    fn get(&self, c: char) -> Option<&[u64]> {
        let row = if c.is_ascii() { self.ascii[c as usize] } else { *self.other.get(&c)? };
        (row != u32::MAX).then(|| &self.masks[row as usize * self.words..][..self.words])
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;
    use std::process::{Command, Stdio};

    /// Plain O(n·m) dynamic programming, the definition itself.
    fn lcs_dp(a: &str, b: &str) -> usize {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        let mut prev = vec![0usize; b.len() + 1];
        for &x in &a {
            let mut cur = vec![0usize; b.len() + 1];
            for (j, &y) in b.iter().enumerate() {
                cur[j + 1] = if x == y { prev[j] + 1 } else { prev[j + 1].max(cur[j]) };
            }
            prev = cur;
        }
        prev[b.len()]
    }

    fn sim_dp(a: &str, b: &str) -> f64 {
        let total = a.chars().count() + b.chars().count();
        if total == 0 {
            1.0
        } else {
            (2 * lcs_dp(a, b)) as f64 / total as f64
        }
    }

    /// SplitMix64: a tiny seeded generator so the test pairs never change.
    pub(super) struct Rng(pub(super) u64);
    impl Rng {
        pub(super) fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        pub(super) fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    const ALPHABETS: [&str; 4] = [
        "abcdefghij klmnopqrstuvwxyz",
        "аб вгдеёжзийклмнопрстуфхцчшщъыьэюя",
        "的一是不了人我在有他这中大来上个国到说们",
        "aeiou стол 中文 xyz",
    ];

    /// A random string of `len` chars over `alphabet`, and a copy with
    /// random insertions, deletions and substitutions (`edit_rate` per char).
    fn random_pair(rng: &mut Rng, alphabet: &[char], len: usize, edit_rate: f64) -> (String, String) {
        let a: String = (0..len).map(|_| alphabet[rng.below(alphabet.len())]).collect();
        random_pair_from(rng, alphabet, &a, edit_rate)
    }

    /// `text` and a copy of it with random insertions, deletions and
    /// substitutions (`edit_rate` per char), as [`random_pair`] makes them.
    fn random_pair_from(rng: &mut Rng, alphabet: &[char], text: &str, edit_rate: f64) -> (String, String) {
        let mut b = String::with_capacity(text.len() + 8);
        for c in text.chars() {
            if (rng.next() % 10_000) as f64 >= edit_rate * 10_000.0 {
                b.push(c);
                continue;
            }
            match rng.below(3) {
                0 => {}
                1 => {
                    b.push(alphabet[rng.below(alphabet.len())]);
                    b.push(c);
                }
                _ => b.push(alphabet[rng.below(alphabet.len())]),
            }
        }
        (text.to_string(), b)
    }

    fn oracle_pairs() -> Vec<(String, String)> {
        let mut rng = Rng(20_261_112);
        let mut pairs: Vec<(String, String)> = Vec::new();
        for i in 0..400 {
            let alphabet: Vec<char> = ALPHABETS[i % ALPHABETS.len()].chars().collect();
            let len = match i % 10 {
                0 => rng.below(4),
                1 => 64 + rng.below(3) - 1,
                _ => rng.below(301),
            };
            let edit_rate = [0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 1.0][rng.below(7)];
            let (a, b) = random_pair(&mut rng, &alphabet, len, edit_rate);
            if i % 2 == 0 {
                pairs.push((a, b));
            } else {
                pairs.push((b, a));
            }
        }
        pairs.extend(visible_text_pairs(&mut rng));
        pairs
    }

    /// Lines of pages: mixed case, punctuation, digits, runs of spaces,
    /// Latin, Cyrillic and Han, and one template line of the host.
    const PAGE_LINES: [&str; 12] = [
        "Home | Download | Documentation | Community",
        "Example 3.2.1   Release Notes",
        "Released on 2024-05-01 (a SECURITY release).",
        "Fixes a buffer overflow in the parser of quoted strings.",
        "Größe der Straße: 12 MB, Übersicht.",
        "Москва, 1 мая: обновление   документации",
        "文档 更新 第三版 说明",
        "All users of 3.2.x should upgrade!",
        "Time zones are shown in the user's locale.",
        "A race between shutdown and flushing no longer loses data.",
        "  See also: CHANGES.txt, NEWS, README  ",
        "The command line accepts paths with spaces on Windows.",
    ];

    /// Pairs of visible texts (the default verification text, see
    /// `crate::text::boilerplate`) of pages built from [`PAGE_LINES`]: the
    /// second page differs by a dropped, replaced or edited line.
    fn visible_text_pairs(rng: &mut Rng) -> Vec<(String, String)> {
        let mut template = crate::text::boilerplate::Boilerplate::default();
        template.insert("docs.example.org", crate::text::boilerplate::block_key(PAGE_LINES[0]).unwrap());
        let url = "https://docs.example.org/releases/3.2.1.html";
        let letters: Vec<char> = ALPHABETS[3].chars().collect();
        (0..150)
            .map(|_| {
                let mut a: Vec<String> =
                    (0..3 + rng.below(5)).map(|_| PAGE_LINES[rng.below(PAGE_LINES.len())].to_string()).collect();
                if rng.below(2) == 0 {
                    a.insert(0, PAGE_LINES[0].to_uppercase());
                }
                let mut b = a.clone();
                let k = rng.below(b.len());
                match rng.below(3) {
                    0 if b.len() > 1 => drop(b.remove(k)),
                    1 => b[k] = PAGE_LINES[rng.below(PAGE_LINES.len())].to_string(),
                    _ => {
                        let len = 1 + rng.below(12);
                        b[k] = random_pair(rng, &letters, len, 0.0).0 + &b[k].replace('3', "4");
                    }
                }
                let visible = |lines: &[String]| template.strip(url, &lines.join("\n")).visible;
                (visible(&a), visible(&b))
            })
            .collect()
    }

    #[test]
    fn spec_examples() {
        let close = |x: f64, y: f64| (x - y).abs() < 1e-12;
        assert!(close(similarity("kitten", "sitting"), 0.615384615384615));
        assert!(close(similarity("abc", "abd"), 0.666666666666667));
        assert!(close(similarity("hello world", "hello"), 0.625));
        assert_eq!(similarity("", ""), 1.0);
        assert_eq!(similarity("a", ""), 0.0);
        assert_eq!(similarity("", "a"), 0.0);
        assert_eq!(similarity("same text", "same text"), 1.0);
        // Characters, not bytes: one Cyrillic letter differs out of four.
        assert_eq!(similarity("стол", "стул"), 0.75);
    }

    #[test]
    fn at_least_is_exact_or_none() {
        assert_eq!(similarity_at_least("kitten", "sitting", 0.9), None);
        assert_eq!(similarity_at_least("kitten", "sitting", 0.6), Some(similarity("kitten", "sitting")));
        assert_eq!(similarity_at_least("", "", 0.8), Some(1.0));
        assert_eq!(similarity_at_least("a", "", 0.8), None);
        assert_eq!(similarity_at_least("a", "", 0.0), Some(0.0));
        // Boundary: 2·4/10 = 0.8 exactly reaches the limit.
        assert_eq!(similarity_at_least("abcd", "abcdxy", 0.8), Some(0.8));
        assert_eq!(similarity_at_least("abcd", "abcdxyz", 0.8), None);
    }

    #[test]
    fn matches_dynamic_programming_across_word_boundaries() {
        let mut rng = Rng(7);
        for i in 0..300 {
            let alphabet: Vec<char> = ALPHABETS[i % ALPHABETS.len()].chars().collect();
            let len = [0, 1, 63, 64, 65, 127, 128, 129, 200][i % 9] + rng.below(2);
            let (a, b) = random_pair(&mut rng, &alphabet, len, [0.05, 0.2, 0.5][i % 3]);
            let exact = sim_dp(&a, &b);
            assert_eq!(similarity(&a, &b), exact, "{a:?} / {b:?}");
            for limit in [0.5, 0.8, 0.95] {
                let expected = (exact >= limit).then_some(exact);
                assert_eq!(similarity_at_least(&a, &b, limit), expected, "{a:?} / {b:?} @ {limit}");
            }
        }
    }

    #[test]
    fn long_documents_with_early_exit() {
        let mut rng = Rng(99);
        let alphabet: Vec<char> = ALPHABETS[1].chars().collect();
        let (a, b) = random_pair(&mut rng, &alphabet, 3000, 0.08);
        let exact = sim_dp(&a, &b);
        assert_eq!(similarity(&a, &b), exact);
        assert_eq!(similarity_at_least(&a, &b, 0.8), (exact >= 0.8).then_some(exact));
        let (c, _) = random_pair(&mut rng, &alphabet, 3000, 0.0);
        assert_eq!(similarity_at_least(&a, &c, 0.8), None);
    }

    /// The early exit stops only what cannot reach the limit: at the exact
    /// value itself (the tightest limit that must pass) and just above it,
    /// on pairs long enough for many checks, of unequal lengths (the split
    /// of the bound moves) and with edits bunched or spread.
    #[test]
    fn early_exit_keeps_every_pair_at_its_exact_value() {
        let mut rng = Rng(2024);
        for i in 0..60 {
            let alphabet: Vec<char> = ALPHABETS[i % ALPHABETS.len()].chars().collect();
            let len = 300 + rng.below(700);
            let (mut a, b) = random_pair(&mut rng, &alphabet, len, [0.03, 0.1, 0.25, 0.4][i % 4]);
            if i % 3 == 0 {
                a = a.chars().take(len * 2 / 3).collect();
            }
            let exact = sim_dp(&a, &b);
            assert_eq!(similarity_at_least(&a, &b, exact), Some(exact), "pair {i}");
            assert_eq!(similarity_at_least(&b, &a, exact), Some(exact), "pair {i}, swapped");
            assert_eq!(similarity_at_least(&a, &b, exact + 1e-9), None, "pair {i}");
        }
    }

    /// The band at its edges: one string is the other shifted by a block
    /// inserted at one end and cut at the other, so the best alignment
    /// runs along the outermost diagonal the limit allows; at the exact
    /// value as limit the band is as narrow as it can be and must still
    /// hold it, just above it nothing may pass.
    #[test]
    fn banded_scan_is_exact_at_the_band_edges() {
        let mut rng = Rng(31);
        for i in 0..40 {
            let alphabet: Vec<char> = ALPHABETS[i % ALPHABETS.len()].chars().collect();
            let len = 150 + rng.below(500);
            let (a, _) = random_pair(&mut rng, &alphabet, len, 0.0);
            let block_len = 1 + rng.below(len / 4);
            let (block, _) = random_pair(&mut rng, &alphabet, block_len, 0.0);
            let chars: Vec<char> = a.chars().collect();
            let cut = block.chars().count().min(len) / (1 + i % 2);
            let b: String = match i % 4 {
                0 => block.clone() + &chars[..len - cut].iter().collect::<String>(),
                1 => chars[cut..].iter().collect::<String>() + &block,
                2 => block.clone() + &a,
                _ => a.clone() + &block + &block,
            };
            assert_exact_both_ways(&a, &b, sim_dp(&a, &b), &[0.8], i);
        }
    }

    /// Both ways round, `a` and `b` (pair `pair` of a test) keep their
    /// exact similarity at that value as limit (the narrowest band that
    /// must hold it), nothing passes just above it, and each of `limits`
    /// gives the exact value or nothing.
    fn assert_exact_both_ways(a: &str, b: &str, exact: f64, limits: &[f64], pair: usize) {
        for (x, y) in [(a, b), (b, a)] {
            assert_eq!(similarity_at_least(x, y, exact), Some(exact), "pair {pair}");
            assert_eq!(similarity_at_least(x, y, exact + 1e-9), None, "pair {pair}");
            for &limit in limits {
                assert_eq!(
                    similarity_at_least(x, y, limit),
                    (exact >= limit).then_some(exact),
                    "pair {pair} @ {limit}"
                );
            }
        }
    }

    /// The band narrows as a pair spends its edits (`LiveColumns`): pairs
    /// long enough for dozens of checks whose edits are bunched at the
    /// start, the middle or the end, or drift the alignment off the main
    /// diagonal by a block inserted or dropped, keep their exact value at
    /// the tightest limit that must pass, and nothing passes just above it.
    #[test]
    fn narrowing_band_keeps_every_pair_at_its_exact_value() {
        let mut rng = Rng(5150);
        for i in 0..48 {
            let alphabet: Vec<char> = ALPHABETS[i % ALPHABETS.len()].chars().collect();
            let len = 1500 + rng.below(2500);
            let (a, _) = random_pair(&mut rng, &alphabet, len, 0.0);
            let chars: Vec<char> = a.chars().collect();
            // Edit a stretch (a quarter to all of the text) heavily, keep
            // the rest; or move a block.
            let (from, to) = match i % 4 {
                0 => (0, len / 4 + rng.below(len / 2)),
                1 => (len / 3, len / 3 + rng.below(len / 3)),
                2 => (len / 2 + rng.below(len / 4), len),
                _ => (0, len),
            };
            let middle: String = chars[from..to].iter().collect();
            let (_, edited) = random_pair_from(&mut rng, &alphabet, &middle, [0.1, 0.3, 0.6][i % 3]);
            let mut b: String = chars[..from].iter().collect();
            b.push_str(&edited);
            b.extend(&chars[to..]);
            if i % 5 == 0 {
                let block: String = chars[..len / 10].iter().collect();
                b = if i % 2 == 0 { block + &b } else { b.chars().skip(len / 10).collect() };
            }
            assert_exact_both_ways(&a, &b, sim_dp(&a, &b), &[0.5, 0.7, 0.8, 0.9], i);
        }
    }

    /// The unrolled `adc` row, the AVX-512 one (where the CPU has it) and
    /// the plain one agree on every band length (tails of 0–7 words), with
    /// carries running across many words and blocks.
    #[test]
    fn row_update_matches_the_portable_one() {
        let mut rng = Rng(64);
        for len in 0..40 {
            for _ in 0..20 {
                // Bits mostly set, so long carry chains happen, and a
                // quarter of the words all ones without a match, whose sum
                // passes a carry on to the next word.
                let (v, pm): (Vec<u64>, Vec<u64>) = (0..len)
                    .map(|_| match rng.next() % 4 {
                        0 => (u64::MAX, 0),
                        _ => (rng.next() | rng.next() | rng.next(), rng.next() & rng.next()),
                    })
                    .unzip();
                let (mut fast, mut plain) = (v.clone(), v.clone());
                advance_row(&mut fast, &pm);
                advance_row_portable(&mut plain, &pm);
                assert_eq!(fast, plain, "{len} words");
                #[cfg(target_arch = "x86_64")]
                if RowKernel::for_this_cpu().avx512 {
                    let mut wide = v.clone();
                    // SAFETY: the CPU has AVX-512F.
                    unsafe { advance_row_avx512(&mut wide, &pm) };
                    assert_eq!(wide, plain, "{len} words, AVX-512");
                }
            }
        }
    }

    /// Perl's `String::Similarity` of each pair (Debian
    /// `libstring-similarity-perl`, `similarity($a, $b)` on character
    /// strings), from one perl process for all; `None` (with a message
    /// naming `test`) when perl or the module is missing; `.ci/run`
    /// installs it.
    pub(super) fn perl_similarities(test: &str, pairs: &[(String, String)]) -> Option<Vec<f64>> {
        let available = Command::new("perl")
            .args(["-MString::Similarity", "-e", "1"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !available {
            let required = std::env::var_os("NEARDUP_REQUIRE_SHARED").is_some_and(|v| v == "1");
            assert!(!required, "NEARDUP_REQUIRE_SHARED=1 but perl with String::Similarity is not installed ({test})");
            println!("SKIPPED {test}: perl with String::Similarity not found");
            return None;
        }
        let script = r#"
            use strict; use warnings; use JSON::PP; use String::Similarity;
            binmode STDIN; binmode STDOUT;
            while (my $line = <STDIN>) {
                my $p = JSON::PP->new->utf8->decode($line);
                printf "%.17g\n", similarity($p->[0], $p->[1]);
            }
        "#;
        let mut child = Command::new("perl")
            .args(["-e", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn perl");
        let mut input = Vec::new();
        for (a, b) in pairs {
            serde_json::to_writer(&mut input, &[a, b]).unwrap();
            input.push(b'\n');
        }
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || stdin.write_all(&input));
        let output = child.wait_with_output().expect("perl output");
        writer.join().unwrap().expect("write to perl");
        assert!(output.status.success(), "perl failed");
        let perl: Vec<f64> = String::from_utf8(output.stdout).unwrap().lines().map(|l| l.parse().unwrap()).collect();
        assert_eq!(perl.len(), pairs.len());
        Some(perl)
    }

    /// Compares with Perl's `String::Similarity` on a few hundred seeded
    /// pairs of at most 301 characters, where no search runs long enough
    /// for the module's heuristic: the exact value and the port's both
    /// equal the module's (long texts: `string_similarity`'s oracle test).
    #[test]
    fn oracle_perl_string_similarity() {
        let pairs = oracle_pairs();
        let Some(perl) = perl_similarities("oracle_perl_string_similarity", &pairs) else { return };
        let mut near_threshold = 0;
        for ((a, b), want) in pairs.iter().zip(&perl) {
            let got = similarity(a, b);
            assert!((got - want).abs() <= 1e-12, "{a:?} / {b:?}: ours {got}, perl {want}");
            let port = string_similarity::similarity(a, b);
            assert!((port - want).abs() <= 1e-12, "{a:?} / {b:?}: port {port}, perl {want}");
            if (0.7..0.9).contains(&got) {
                near_threshold += 1;
            }
        }
        println!("oracle: {} pairs matched perl, {near_threshold} with similarity in [0.7, 0.9)", pairs.len());
        assert!(near_threshold >= 50, "too few pairs near the 0.8 threshold");
    }
}

//! Shingle methods (spec §3): `minhash` (min-wise sketches with LSH bands),
//! `a6` Megashingles and `a8` LogShingles, plus the shingle fingerprints that
//! `a11` Decomposition reuses. The min-wise hash family of `minhash` and
//! `a6` is [`MinHasher`] (`minwise.rs`): `h_i(x)` = the high 32 bits of
//! `(a_i x + b_i) mod 2^64`, a_i odd, coefficients from
//! splitmix64(`minhash_seed`).
//!
//! **Fingerprints.** A shingle is a run of `w` consecutive terms; its
//! fingerprint is `xxh3_64` of the terms joined by a single space (spec §0:
//! "join with a single space"). Terms come from Unicode word splitting and
//! never contain a space, so the join is unambiguous.
//!
//! **Short documents (choice).** A document with at least one term but fewer
//! than `w` terms has exactly one shingle: all its terms. Otherwise short
//! pages (titles, error pages) would get no signature at all, and identical
//! short pages would never be found. A document without terms has no shingle
//! and gets no signature.

pub use super::minwise::MinHasher;
use super::traits::RecordMethod;
use super::{DocView, Signature, SignatureMethod};
use crate::methods::traits::FamilySettings;
use crate::settings::Problems;
use crate::tables::columns::sketches;
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

/// Terms joined by single spaces, with where each term starts and ends: a
/// shingle's fingerprint is `xxh3_64` of its terms joined by single spaces,
/// which is a slice of this text, so no shingle copies its terms.
struct Joined {
    text: Vec<u8>,
    starts: Vec<usize>,
    ends: Vec<usize>,
}

impl Joined {
    fn new<'a>(terms: impl Iterator<Item = &'a str>) -> Joined {
        let mut joined = Joined { text: Vec::new(), starts: Vec::new(), ends: Vec::new() };
        for t in terms {
            if !joined.starts.is_empty() {
                joined.text.push(b' ');
            }
            joined.starts.push(joined.text.len());
            joined.text.extend_from_slice(t.as_bytes());
            joined.ends.push(joined.text.len());
        }
        joined
    }

    /// Fingerprint of the `w` terms from term `first` on.
    fn window(&self, first: usize, w: usize) -> u64 {
        xxh3_64(&self.text[self.starts[first]..self.ends[first + w - 1]])
    }
}

/// Fingerprints of the document's shingles of width `w`, in document order
/// (n - w + 1 of them, duplicates kept). A document with 1..w-1 terms gives
/// one fingerprint of all its terms; an empty document gives none.
pub fn shingle_fingerprints(terms: &[&str], w: usize) -> Vec<u64> {
    let w = w.max(1);
    if terms.is_empty() {
        return Vec::new();
    }
    let joined = Joined::new(terms.iter().copied());
    if terms.len() < w {
        vec![xxh3_64(&joined.text)]
    } else {
        (0..=terms.len() - w).map(|first| joined.window(first, w)).collect()
    }
}

/// Fingerprints of the wrap-around shingles used by a8: one shingle starting
/// at every term, the last ones continuing from the start of the document,
/// so a document of n >= w terms has n shingles and every term is in w of
/// them. Documents shorter than `w` follow the short-document rule of
/// [`shingle_fingerprints`].
pub fn wrapped_shingle_fingerprints(terms: &[&str], w: usize) -> Vec<u64> {
    let w = w.max(1);
    let n = terms.len();
    if n < w {
        return shingle_fingerprints(terms, w);
    }
    // The document followed by its first w - 1 terms again: the shingles
    // that wrap around are windows of it too.
    let joined = Joined::new(terms.iter().chain(&terms[..w - 1]).copied());
    (0..n).map(|first| joined.window(first, w)).collect()
}

/// The select list that turns a document's `sketches` rows into one row of
/// `functions` columns `m0`, `m1`, ... (its minimum at each position), for
/// `jobs/minhash_edges.sql`'s `sketch_columns`: a pair's resemblance is
/// then a sum over two rows ([`equal_positions_sql`]) instead of a join of
/// `functions` rows per pair.
pub fn sketch_columns_sql(functions: usize) -> String {
    (0..functions)
        .map(|i| format!("MAX(CASE WHEN position = {i} THEN minimum END) AS m{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The number of positions where the rows `a` and `b` of
/// [`sketch_columns_sql`] hold the same minimum (`equal_positions`).
pub fn equal_positions_sql(functions: usize) -> String {
    (0..functions).map(|i| format!("CAST(a.m{i} = b.m{i} AS INT)")).collect::<Vec<_>>().join(" + ")
}

/// The document's distinct shingle fingerprints of width `w`, sorted
/// ascending: the shingle *set* that resemblance is defined on, and the rows
/// a11 Decomposition groups by shingle.
pub fn distinct_shingles(terms: &[&str], w: usize) -> Vec<u64> {
    let mut fps = shingle_fingerprints(terms, w);
    fps.sort_unstable();
    fps.dedup();
    fps
}

/// Estimated resemblance of two sketches made by the same [`MinHasher`]: the
/// share of positions where the minima are equal (0 for empty or
/// different-length sketches, which cannot be compared).
pub fn resemblance(a: &[u64], b: &[u64]) -> f64 {
    if a.is_empty() || a.len() != b.len() {
        return 0.0;
    }
    let equal = a.iter().zip(b).filter(|(x, y)| x == y).count();
    equal as f64 / a.len() as f64
}

/// `xxh3_64` of a run of u64 values in little-endian order: how bands,
/// supershingles, megashingles and the a8 signature combine several
/// fingerprints into one.
fn hash_u64s(values: &[u64]) -> u64 {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    xxh3_64(&bytes)
}

/// `minhash`: w=10 shingles, 84 min-wise functions. The method's rule is
/// resemblance >= `minhash_threshold` (0.75); LSH bands of
/// `minhash_band_rows` rows (band j = hash of sketch rows j*r..(j+1)*r, slot
/// j) are only the index that finds the pairs to estimate: two documents
/// sharing a band are estimated from their full sketches
/// ([`MinHash::sketch`], the `sketches` table) by `jobs/minhash_edges.sql`,
/// which computes [`resemblance`] in SQL and keeps the pair at or above the
/// threshold. With resemblance p a pair shares a band with probability
/// 1-(1-p^r)^b; 7 rows x 12 bands put its 50% point at 0.66, a little below
/// the threshold (docs/methods.md, "minhash"). r divides k
/// ([`crate::config::Config::validate`] refuses a job file where it does
/// not), so every minimum is in exactly one band.
#[derive(Debug, Clone)]
pub struct MinHash {
    width: usize,
    rows: usize,
    hasher: MinHasher,
}

impl MinHash {
    /// Reads `minhash_shingle_width`, `minhash_functions`, `minhash_band_rows`
    /// and `minhash_seed`. A configuration that bypassed
    /// [`crate::config::Config::validate`] with 0 rows gets bands of 1 row
    /// rather than a panic.
    pub fn new(cfg: &MinHashSettings) -> MinHash {
        MinHash {
            width: cfg.shingle_width,
            rows: cfg.band_rows.max(1),
            hasher: MinHasher::new(cfg.functions, cfg.seed),
        }
    }

    /// The document's sketch (for the sketches table): k minima over its
    /// distinct w-shingles, or `None` for a document without terms.
    pub fn sketch(&self, terms: &[&str]) -> Option<Vec<u64>> {
        self.hasher.sketch(&distinct_shingles(terms, self.width))
    }

    /// The signatures of a sketch: band j (slot j) is the xxh3 of minima
    /// `j*r .. (j+1)*r`.
    pub fn bands(&self, sketch: &[u64]) -> Vec<Signature> {
        sketch
            .chunks_exact(self.rows)
            .enumerate()
            .map(|(j, band)| Signature { slot: j as u16, sig: hash_u64s(band) })
            .collect()
    }
}

/// Min-hash sketches, one row per (document, function): the `sketches`
/// table that `jobs/minhash_edges.sql` estimates band pairs from; and the
/// bands of each sketch, hashed, as the method's signatures.
impl RecordMethod for MinHash {
    type Rows = sketches::Rows;
    /// The document's sketch; none for a document without a shingle.
    type Records = Option<Vec<u64>>;
    const SIGNS: bool = true;

    fn records(&self, doc: &DocView<'_>) -> Option<Vec<u64>> {
        self.sketch(doc.terms)
    }

    fn append(&self, doc: &DocView<'_>, sketch: &Option<Vec<u64>>, rows: &mut sketches::Rows) {
        for (position, minimum) in sketch.iter().flatten().enumerate() {
            rows.doc_id.append_value(doc.doc_id);
            // A sketch of 2^32 minima would not fit in memory to begin with.
            rows.position.append_value(position as u32);
            rows.minimum.append_value(*minimum);
        }
    }

    fn signatures(&self, sketch: &Option<Vec<u64>>) -> Vec<Signature> {
        sketch.as_deref().map(|s| self.bands(s)).unwrap_or_default()
    }
}

/// Number of supershingles in a6 (fixed by the method: 6 groups, 15 pairs).
const SUPERSHINGLES: usize = 6;

/// `a6` Megashingles (Broder; Fetterly et al.): w=5 shingles, 6 groups of g
/// min-wise functions (g = `megashingle_functions` / 6: 6 for the study's
/// preset 36, 14 for Fetterly's 84). A group's minima hashed together is a
/// supershingle; each of the 15 unordered pairs {i, j}, i < j, of
/// supershingles hashed together is a megashingle, signed in slot
/// `pair index` (pairs in lexicographic order (0,1), (0,2), ..., (4,5)).
/// Two documents sharing a slot's value share both supershingles of that
/// pair; with resemblance p one supershingle matches with probability p^g.
#[derive(Debug, Clone)]
pub struct Megashingles {
    width: usize,
    group: usize,
    hasher: MinHasher,
}

impl Megashingles {
    /// Reads `shingle_width` and `megashingle_functions`; `seed` is
    /// `minhash_seed`.
    ///
    /// # Panics
    /// If `megashingle_functions` is not a positive multiple of 6 (the
    /// method needs 6 equal groups; the presets are 36 and 84): a
    /// programming error, since [`crate::config::Config::validate`] refuses
    /// such a job file.
    pub fn new(cfg: &ShingleSettings, seed: u64) -> Megashingles {
        let k = cfg.megashingle_functions;
        assert!(
            k > 0 && k.is_multiple_of(SUPERSHINGLES),
            "megashingle_functions must be a positive multiple of 6 (36 or 84), got {k}"
        );
        Megashingles { width: cfg.shingle_width, group: k / SUPERSHINGLES, hasher: MinHasher::new(k, seed) }
    }

    /// The 15 megashingles of a set of shingle fingerprints, in slot order,
    /// or `None` for an empty set.
    pub fn megashingles(&self, fingerprints: &[u64]) -> Option<Vec<u64>> {
        let sketch = self.hasher.sketch(fingerprints)?;
        let supers: Vec<u64> = sketch.chunks_exact(self.group).map(hash_u64s).collect();
        let mut megas = Vec::with_capacity(15);
        for i in 0..SUPERSHINGLES {
            for j in i + 1..SUPERSHINGLES {
                megas.push(hash_u64s(&[supers[i], supers[j]]));
            }
        }
        Some(megas)
    }
}

impl SignatureMethod for Megashingles {
    fn id(&self) -> &'static str {
        "a6"
    }

    fn sign(&self, doc: &DocView<'_>, out: &mut Vec<Signature>) {
        if let Some(megas) = self.megashingles(&distinct_shingles(doc.terms, self.width)) {
            out.extend(megas.into_iter().enumerate().map(|(slot, sig)| Signature { slot: slot as u16, sig }));
        }
    }
}

/// `a8` LogShingles: w=5 wrap-around shingles; of the n distinct
/// fingerprints keep those divisible by 2^k, where
/// k = max(0, floor(log2 n) − floor(log2 target)) with target =
/// `logshingle_target` (8, so k = floor(log2 n) − 3). That keeps about
/// 8–16 shingles whatever the length. The signature
/// (slot 0) is `xxh3_64` of the kept fingerprints sorted ascending, as
/// little-endian bytes. Exact match only.
///
/// Choices: n counts *distinct* fingerprints (a shingle set, like the other
/// shingle methods, so repeated boilerplate does not shift k). If no
/// fingerprint is divisible by 2^k (probability about e^-8 or less), k is
/// lowered one step at a time until one is (k = 0 keeps all), so every
/// document with terms is signed and two equal documents still agree.
#[derive(Debug, Clone)]
pub struct LogShingles {
    width: usize,
    target_log2: u32,
}

impl LogShingles {
    /// Reads `shingle_width` and `logshingle_target`, a power of two
    /// ([`crate::config::Config::validate`] refuses others in a job file;
    /// here another value is rounded down and 0 counts as 1).
    pub fn new(cfg: &ShingleSettings) -> LogShingles {
        LogShingles { width: cfg.shingle_width, target_log2: cfg.logshingle_target.max(1).ilog2() }
    }

    /// The kept fingerprints of a document's terms, sorted ascending (empty
    /// for a document without terms).
    pub fn kept(&self, terms: &[&str]) -> Vec<u64> {
        let mut fps = wrapped_shingle_fingerprints(terms, self.width);
        fps.sort_unstable();
        fps.dedup();
        keep_divisible(&fps, self.target_log2)
    }
}

/// The a8 selection on sorted distinct fingerprints: those divisible by 2^k,
/// k = max(0, floor(log2 n) - target_log2), lowering k while none is.
fn keep_divisible(fps: &[u64], target_log2: u32) -> Vec<u64> {
    if fps.is_empty() {
        return Vec::new();
    }
    let mut k = fps.len().ilog2().saturating_sub(target_log2);
    loop {
        let mask = (1u64 << k) - 1;
        let kept: Vec<u64> = fps.iter().copied().filter(|fp| fp & mask == 0).collect();
        if !kept.is_empty() {
            return kept;
        }
        k -= 1;
    }
}

impl SignatureMethod for LogShingles {
    fn id(&self) -> &'static str {
        "a8"
    }

    fn sign(&self, doc: &DocView<'_>, out: &mut Vec<Signature>) {
        let kept = self.kept(doc.terms);
        if !kept.is_empty() {
            out.push(Signature { slot: 0, sig: hash_u64s(&kept) });
        }
    }
}

/// The settings of minhash in `[methods]` (`minhash_*`; a6 uses its seed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MinHashSettings {
    /// Shingle width w.
    #[serde(rename = "minhash_shingle_width")]
    pub shingle_width: usize,
    /// Number of min-wise functions.
    #[serde(rename = "minhash_functions")]
    pub functions: usize,
    /// Rows per band of the LSH index that finds the pairs to estimate
    /// (functions / rows bands); must divide `functions`, so no minimum is
    /// left out. Chosen for `threshold` (docs/methods.md, "minhash").
    #[serde(rename = "minhash_band_rows")]
    pub band_rows: usize,
    /// The method's rule. A pair found by the bands is a duplicate when its
    /// estimated resemblance (share of equal minima) is at least this; the
    /// study's 0.75 by default (docs/methods.md, "minhash").
    #[serde(rename = "minhash_threshold")]
    pub threshold: f64,
    /// minhash, a6: seed of the min-wise function coefficients.
    #[serde(rename = "minhash_seed")]
    pub seed: u64,
}

impl Default for MinHashSettings {
    fn default() -> Self {
        MinHashSettings { shingle_width: 10, functions: 84, band_rows: 7, threshold: 0.75, seed: 1 }
    }
}

impl FamilySettings for MinHashSettings {
    fn check(&self, p: &mut Problems) {
        const S: &str = "methods";
        p.at_least(S, "minhash_shingle_width", self.shingle_width, 1);
        p.at_least(S, "minhash_functions", self.functions, 1);
        p.at_least(S, "minhash_band_rows", self.band_rows, 1);
        p.within(S, "minhash_threshold", self.threshold, 0.0, 1.0);
        if self.band_rows >= 1 {
            // Minima left over after the last full band would be in no band.
            p.require(self.functions.is_multiple_of(self.band_rows), || {
                format!(
                    "[methods] minhash_band_rows = {} must divide minhash_functions = {}",
                    self.band_rows, self.functions
                )
            });
            // Band j is signed in slot j; slots are 16-bit.
            p.require(self.functions / self.band_rows <= usize::from(u16::MAX) + 1, || {
                format!(
                    "[methods] minhash_functions / minhash_band_rows = {} bands must be at most {}",
                    self.functions / self.band_rows,
                    usize::from(u16::MAX) + 1
                )
            });
        }
    }
}

/// The settings of the word shingles of a6, a8 and a11 in `[methods]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ShingleSettings {
    /// a6, a8, a11: shingle width.
    pub shingle_width: usize,
    /// a6: preset `36` (6 groups of 6, the study) or `84` (6 groups of 14,
    /// Fetterly); any positive multiple of 6.
    pub megashingle_functions: usize,
    /// a8: keep about this many shingles (k = floor(log2 n) - log2(this)); a
    /// power of two.
    pub logshingle_target: usize,
}

impl Default for ShingleSettings {
    fn default() -> Self {
        ShingleSettings { shingle_width: 5, megashingle_functions: 36, logshingle_target: 8 }
    }
}

impl FamilySettings for ShingleSettings {
    fn check(&self, p: &mut Problems) {
        p.at_least("methods", "shingle_width", self.shingle_width, 1);
        p.require(self.megashingle_functions > 0 && self.megashingle_functions.is_multiple_of(6), || {
            format!(
                "[methods] megashingle_functions = {} must be a positive multiple of 6 (6 equal groups; presets 36 and 84)",
                self.megashingle_functions
            )
        });
        p.require(self.logshingle_target.is_power_of_two(), || {
            format!(
                "[methods] logshingle_target = {} must be a power of two (k = floor(log2 n) - log2 of it)",
                self.logshingle_target
            )
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::splitmix64;
    use std::collections::HashSet;

    /// Deterministic pseudo-random words for constructed documents. Leaked
    /// so they can be borrowed like the Arrow buffers methods read: a few
    /// hundred kilobytes per test process.
    fn words(n: usize, seed: u64) -> Vec<&'static str> {
        let mut s = seed;
        (0..n).map(|_| &*format!("w{}", splitmix64(&mut s) % 100_000).leak()).collect()
    }

    fn strings<'a>(v: &[&'a str]) -> Vec<&'a str> {
        v.to_vec()
    }

    /// Exact shingle-set Jaccard computed on the joined shingle strings,
    /// independently of the fingerprint code.
    fn exact_jaccard(a: &[&str], b: &[&str], w: usize) -> f64 {
        let set = |t: &[&str]| -> HashSet<String> { t.windows(w).map(|s| s.join(" ")).collect() };
        let (sa, sb) = (set(a), set(b));
        sa.intersection(&sb).count() as f64 / sa.union(&sb).count() as f64
    }

    #[test]
    fn fingerprints_hash_space_joined_terms() {
        let t = strings(&["alpha", "beta", "gamma", "delta"]);
        assert_eq!(shingle_fingerprints(&t, 3), vec![xxh3_64(b"alpha beta gamma"), xxh3_64(b"beta gamma delta")]);
        // Short document: one shingle of all its terms; empty: none.
        assert_eq!(shingle_fingerprints(&t[..2], 5), vec![xxh3_64(b"alpha beta")]);
        assert!(shingle_fingerprints(&[], 5).is_empty());
    }

    #[test]
    fn wrapped_shingles_continue_from_the_start() {
        let t = strings(&["a", "b", "c", "d"]);
        let expected: Vec<u64> = ["a b c", "b c d", "c d a", "d a b"].iter().map(|s| xxh3_64(s.as_bytes())).collect();
        assert_eq!(wrapped_shingle_fingerprints(&t, 3), expected);
    }

    #[test]
    fn distinct_shingles_are_sorted_and_unique() {
        let t = strings(&["x", "y", "x", "y", "x"]);
        let mut expected = vec![xxh3_64(b"x y"), xxh3_64(b"y x")];
        expected.sort_unstable();
        assert_eq!(distinct_shingles(&t, 2), expected);
    }

    /// The definition recomputed independently: coefficients drawn here
    /// from `methods::splitmix64`, each h_i in 128-bit arithmetic with an
    /// explicit mod 2^64 (not the signer's wrapping multiply).
    fn sketch_by_definition(k: usize, seed: u64, xs: &[u64]) -> Vec<u64> {
        let mut state = seed;
        (0..k)
            .map(|_| {
                let a = crate::methods::splitmix64(&mut state) | 1;
                let b = crate::methods::splitmix64(&mut state);
                xs.iter().map(|&x| ((a as u128 * x as u128 + b as u128) % (1u128 << 64)) >> 32).min().unwrap() as u64
            })
            .collect()
    }

    #[test]
    fn sketches_follow_the_documented_family() {
        // Hand-checked with an independent Python reimplementation
        // (scripts/minhash_bench.py, `sketch_by_definition`): seed 1, k = 3,
        // set {0, 1, 2^64 - 1}: a_0 = 0x910a2dec89025cc1 | 1 = 0x910a2dec89025cc1,
        // b_0 = 0xbeeb8da1658eec67; h_0(0) = b_0 >> 32 = 0xbeeb8da1,
        // h_0(1) = (a_0 + b_0) mod 2^64 >> 32 = 0x4ff5bb8d,
        // h_0(2^64-1) = (b_0 - a_0) >> 32 = 0x2de15fb4, so the minimum is 0x2de15fb4.
        let xs = [0u64, 1, u64::MAX];
        let got = MinHasher::new(3, 1).sketch(&xs).unwrap();
        assert_eq!(got[0], 0x2de1_5fb4);
        assert_eq!(got, sketch_by_definition(3, 1, &xs));
        // Odd k (remainder lanes), odd set sizes (remainder fingerprints),
        // larger sets, other seeds: the vector code equals the definition.
        for (k, seed, n) in [(1usize, 7u64, 1usize), (84, 1, 500), (36, 1, 37), (13, 99, 8), (2000, 5, 3)] {
            let mut s = seed;
            let xs: Vec<u64> = (0..n).map(|_| splitmix64(&mut s)).collect();
            assert_eq!(MinHasher::new(k, seed).sketch(&xs).unwrap(), sketch_by_definition(k, seed, &xs), "k={k} n={n}");
        }
        assert!(MinHasher::new(84, 1).sketch(&[]).is_none());
        assert!(MinHasher::new(0, 1).sketch(&[1]).is_none());
    }

    #[test]
    fn resemblance_counts_equal_positions() {
        assert_eq!(resemblance(&[1, 2, 3, 4], &[1, 9, 3, 9]), 0.5);
        assert_eq!(resemblance(&[], &[]), 0.0);
    }

    #[test]
    fn minhash_estimate_is_within_three_standard_errors() {
        let cfg = MinHashSettings::default();
        let mh = MinHash::new(&cfg);
        let w = cfg.shingle_width;
        let base = words(400, 1);
        // Replace every `step`-th word: fewer replacements, higher Jaccard.
        for (i, step) in [7usize, 13, 29, 61, 150].into_iter().enumerate() {
            let mut other = base.clone();
            let fresh = words(400, 100 + i as u64);
            for p in (0..other.len()).step_by(step) {
                other[p] = fresh[p];
            }
            let j = exact_jaccard(&base, &other, w);
            let est = resemblance(&mh.sketch(&base).unwrap(), &mh.sketch(&other).unwrap());
            let se = (j * (1.0 - j) / cfg.functions as f64).sqrt();
            assert!((est - j).abs() <= 3.0 * se, "step {step}: J={j} estimate={est} se={se}");
        }
        // Convergence: with 2000 functions the estimate stays within 3
        // standard errors, now sqrt(J(1-J)/2000), a bound 5 times tighter.
        let big = MinHasher::new(2000, 5);
        let mut other = base.clone();
        for p in (0..other.len()).step_by(20) {
            other[p] = format!("changed{p}").leak();
        }
        let j = exact_jaccard(&base, &other, w);
        let est = resemblance(
            &big.sketch(&distinct_shingles(&base, w)).unwrap(),
            &big.sketch(&distinct_shingles(&other, w)).unwrap(),
        );
        assert!((est - j).abs() <= 3.0 * (j * (1.0 - j) / 2000.0).sqrt(), "J={j} estimate={est}");
    }

    #[test]
    fn band_s_curve_of_the_default_suits_the_threshold() {
        // A pair of resemblance p shares at least one of b bands of r rows
        // with probability 1-(1-p^r)^b.
        let s_curve = |p: f64, bands: i32, rows: i32| 1.0 - (1.0 - p.powi(rows)).powi(bands);
        let cfg = MinHashSettings::default();
        let rows = cfg.band_rows as i32;
        let bands = (cfg.functions / cfg.band_rows) as i32;
        assert_eq!((bands, rows), (12, 7));
        // By hand: 0.75^7 = 0.13348, 0.86652^12 = 0.17916, so at the
        // threshold 0.8208 of the pairs are found by the index.
        assert!((s_curve(cfg.threshold, bands, rows) - 0.8208).abs() < 1e-4);
        // 50% point: (1 - 0.5^(1/12))^(1/7) = 0.056126^(1/7) = 0.6627, below
        // the threshold (tilted toward recall) by less than 0.1.
        let half = (1.0 - 0.5f64.powf(1.0 / bands as f64)).powf(1.0 / rows as f64);
        assert!((half - 0.6627).abs() < 1e-4);
        assert!((s_curve(half, bands, rows) - 0.5).abs() < 1e-9);
        assert!(half < cfg.threshold && cfg.threshold - half < 0.1);
        // Far from it: p=0.9 found 0.9996 of the time, p=0.5 only 0.0898.
        assert!((s_curve(0.9, bands, rows) - 0.9996).abs() < 1e-4);
        assert!((s_curve(0.5, bands, rows) - 0.0898).abs() < 1e-4);
    }

    #[test]
    fn minhash_signs_one_band_per_rows() {
        let cfg = MinHashSettings::default();
        let mh = MinHash::new(&cfg);
        let doc = words(50, 3);
        let sketch = mh.sketch(&doc).unwrap();
        let out = mh.bands(&sketch);
        assert_eq!(out.len(), 84 / 7);
        for (j, s) in out.iter().enumerate() {
            assert_eq!(s.slot as usize, j);
            let bytes: Vec<u8> = sketch[j * 7..(j + 1) * 7].iter().flat_map(|v| v.to_le_bytes()).collect();
            assert_eq!(s.sig, xxh3_64(&bytes));
        }
        assert!(mh.sketch(&[]).is_none());
    }

    /// Two fingerprint sets with resemblance exactly `inter / union`.
    fn sets_with_resemblance(inter: usize, union: usize, seed: u64) -> (Vec<u64>, Vec<u64>) {
        let mut s = seed;
        let all: Vec<u64> = (0..union).map(|_| splitmix64(&mut s)).collect();
        let only = union - inter;
        let a: Vec<u64> = all[..inter + only / 2].to_vec();
        let mut b: Vec<u64> = all[..inter].to_vec();
        b.extend_from_slice(&all[inter + only / 2..]);
        (a, b)
    }

    /// Share of `trials` min-wise families under which the two sets share
    /// at least one megashingle.
    fn simulated_match_rate(functions: usize, inter: usize, union: usize, trials: u64) -> f64 {
        let (a, b) = sets_with_resemblance(inter, union, 99);
        let hits = (0..trials)
            .filter(|&t| {
                let cfg = ShingleSettings { megashingle_functions: functions, ..Default::default() };
                let m = Megashingles::new(&cfg, 1000 + t);
                let (ma, mb) = (m.megashingles(&a).unwrap(), m.megashingles(&b).unwrap());
                ma.iter().zip(&mb).any(|(x, y)| x == y)
            })
            .count();
        hits as f64 / trials as f64
    }

    #[test]
    fn megashingle_match_probability_formula() {
        // P(at least 2 of 6 supershingles match) with one supershingle
        // matching with probability q = p^g (g functions per group).
        let formula = |p: f64, g: i32| {
            let q = p.powi(g);
            1.0 - (1.0 - q).powi(6) - 6.0 * q * (1.0 - q).powi(5)
        };
        // The spec's form, q = p^6 (preset 36 = 6 groups of 6), by hand:
        // p=0.95: q=0.7351, 1 - 0.2649^6 - 6*0.7351*0.2649^5 = 0.9939.
        assert!((formula(0.95, 6) - 0.9939).abs() < 1e-3);
        // p=0.80: q=0.2621, 1 - 0.7379^6 - 6*0.2621*0.7379^5 = 0.4950.
        assert!((formula(0.80, 6) - 0.4950).abs() < 1e-3);
        // Fetterly's numbers quoted by the study (seed 004) are for the 84
        // preset, q = p^14: p=0.95 gives 0.878 ("about 0.90" in the seed,
        // which rounds p^14 to 0.49), p=0.80 gives 0.0256 ("0.026").
        assert!((formula(0.95, 14) - 0.878).abs() < 2e-3);
        assert!((formula(0.95, 14) - 0.90).abs() < 0.025);
        assert!((formula(0.80, 14) - 0.026).abs() < 1e-3);

        // Seeded simulation over the real Megashingles code, sets of
        // resemblance 0.8 and 0.95, both presets; tolerance: 4 binomial
        // standard errors plus 0.02 for the hash family not being exactly
        // min-wise independent.
        let trials = 300;
        for (functions, g) in [(36usize, 6i32), (84, 14)] {
            for (inter, union, p) in [(80usize, 100usize, 0.80), (95, 100, 0.95)] {
                let expected = formula(p, g);
                let rate = simulated_match_rate(functions, inter, union, trials);
                eprintln!("megashingles k={functions} p={p}: simulated {rate:.3}, formula {expected:.4}");
                let tol = 4.0 * (expected * (1.0 - expected) / trials as f64).sqrt() + 0.02;
                assert!((rate - expected).abs() <= tol, "k={functions} p={p}: simulated {rate}, formula {expected}");
            }
        }
    }

    #[test]
    fn megashingles_have_fifteen_slots_and_equal_documents_agree() {
        for functions in [36, 84] {
            let cfg = ShingleSettings { megashingle_functions: functions, ..Default::default() };
            let m = Megashingles::new(&cfg, MinHashSettings::default().seed);
            let doc = words(200, 4);
            let view = DocView { doc_id: 1, terms: &doc, sentence_ends: &[], words: &doc, ..Default::default() };
            let (mut a, mut b) = (Vec::new(), Vec::new());
            m.sign(&view, &mut a);
            m.sign(&DocView { doc_id: 2, ..view }, &mut b);
            assert_eq!(a.len(), 15);
            assert_eq!(a, b);
            assert_eq!(a.iter().map(|s| s.slot).collect::<Vec<_>>(), (0..15).collect::<Vec<u16>>());
        }
    }

    #[test]
    #[should_panic(expected = "multiple of 6")]
    fn megashingles_reject_uneven_groups() {
        let cfg = ShingleSettings { megashingle_functions: 40, ..Default::default() };
        Megashingles::new(&cfg, 0);
    }

    #[test]
    fn logshingles_keep_fingerprints_divisible_by_two_to_the_k() {
        let cfg = ShingleSettings::default();
        let ls = LogShingles::new(&cfg);
        for (n, seed) in [(1000usize, 1u64), (64, 2), (9, 3), (3, 4)] {
            let doc = words(n, seed);
            let mut fps: Vec<u64> = wrapped_shingle_fingerprints(&doc, 5);
            fps.sort_unstable();
            fps.dedup();
            // k = floor(log2 n) - 3, by hand: 1000 -> 9-3 = 6; 64 -> 3; 9 -> 0; 3 -> 0.
            let k = match n {
                1000 => 6,
                64 => 3,
                _ => 0,
            };
            let expected: Vec<u64> = fps.iter().copied().filter(|f| f % (1u64 << k) == 0).collect();
            let kept = ls.kept(&doc);
            if expected.is_empty() {
                // Fallback: lower k until something is kept.
                assert!(!kept.is_empty());
            } else {
                assert_eq!(kept, expected, "n={n}");
            }
        }
        // The signature is the hash of the sorted kept fingerprints.
        let doc = words(300, 9);
        let view = DocView { doc_id: 1, terms: &doc, sentence_ends: &[], words: &doc, ..Default::default() };
        let mut out = Vec::new();
        ls.sign(&view, &mut out);
        let bytes: Vec<u8> = ls.kept(&doc).iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(out, vec![Signature { slot: 0, sig: xxh3_64(&bytes) }]);
    }

    #[test]
    fn logshingles_fallback_when_nothing_is_divisible() {
        // 32 distinct fingerprints: k = 5 - 3 = 2. None divisible by 4 but
        // some even: k drops to 1 and keeps the even ones.
        let fps: Vec<u64> = (0..32u64).map(|i| 4 * i + 2 + (i % 2)).collect();
        let even: Vec<u64> = fps.iter().copied().filter(|f| f % 2 == 0).collect();
        assert_eq!(keep_divisible(&fps, 3), even);
        // All odd: k drops to 0 and keeps everything.
        let odd: Vec<u64> = (0..32u64).map(|i| 2 * i + 1).collect();
        assert_eq!(keep_divisible(&odd, 3), odd);
        assert!(keep_divisible(&[], 3).is_empty());
    }
}

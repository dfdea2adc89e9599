//! The min-wise hash family of `minhash` and `a6` (spec §3), on its own
//! without dependencies, so that `scripts/minhash_bench.py` can compile it
//! alone (plain `rustc`, seconds) and time it beside rensa and datasketch.
//!
//! **Definition.** Function i of k is the multiply-shift hash
//!
//! ```text
//! h_i(x) = ((a_i * x + b_i) mod 2^64) >> 32        (a value below 2^32)
//! ```
//!
//! of a 64-bit shingle fingerprint x, with a_i odd. The coefficients come
//! from splitmix64 seeded with `minhash_seed`, two draws per function in
//! order: `a_i = draw | 1`, `b_i = draw`. The sketch of a set is the k
//! minima of h_i over the set. This is the family of rensa's `RMinHash`;
//! it replaced `(a_i x + b_i) mod (2^61 - 1)` (the spec's "e.g.") because
//! a wrapping 64-bit multiply and a shift vectorize, where a 128-bit
//! product and a Mersenne fold do not.

/// One step of the splitmix64 generator: advances `state` and returns the
/// next value. The fixed, portable PRNG that draws the coefficients, so
/// sketches are reproducible across runs, platforms and Rust versions;
/// other methods use it too (`methods::splitmix64`).
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Functions evaluated together in the inner loop: a block of contiguous
/// coefficients and minima the compiler turns into vector instructions.
const LANES: usize = 8;

/// A family of k min-wise hash functions, `h_i(x)` = the high 32 bits of
/// `(a_i x + b_i) mod 2^64` (module documentation), whose sketches estimate
/// the Jaccard resemblance of shingle sets by the share of equal minima.
#[derive(Debug, Clone)]
pub struct MinHasher {
    /// Number of functions k.
    functions: usize,
    /// The a_i (odd), padded with copies of the last block to a multiple of
    /// [`LANES`] so the inner loop has no remainder; padding is never read
    /// back into a sketch.
    a: Vec<u64>,
    /// The b_i, padded like `a`.
    b: Vec<u64>,
}

impl MinHasher {
    /// The k functions drawn from `seed`; the same (k, seed) always gives
    /// the same functions, and the first j functions of a larger k are the
    /// functions of k = j.
    pub fn new(k: usize, seed: u64) -> MinHasher {
        let mut state = seed;
        let padded = k.div_ceil(LANES) * LANES;
        let mut a = Vec::with_capacity(padded);
        let mut b = Vec::with_capacity(padded);
        for _ in 0..k {
            a.push(splitmix64(&mut state) | 1);
            b.push(splitmix64(&mut state));
        }
        // Padding lanes repeat function 0 (any valid function would do).
        a.resize(padded, a.first().copied().unwrap_or(1));
        b.resize(padded, b.first().copied().unwrap_or(0));
        MinHasher { functions: k, a, b }
    }

    /// The sketch of a set of shingle fingerprints: for every function, the
    /// minimum of `h_i(fp)` over the set (each below 2^32, widened to u64,
    /// the type of the `sketches` table). `None` for an empty set or k = 0.
    /// Duplicates in `fingerprints` do not change the result.
    pub fn sketch(&self, fingerprints: &[u64]) -> Option<Vec<u64>> {
        if fingerprints.is_empty() || self.functions == 0 {
            return None;
        }
        let mut mins = vec![u32::MAX; self.a.len()];
        for ((mins, a), b) in
            mins.chunks_exact_mut(LANES).zip(self.a.chunks_exact(LANES)).zip(self.b.chunks_exact(LANES))
        {
            min_block(mins, a, b, fingerprints);
        }
        Some(mins[..self.functions].iter().map(|&m| u64::from(m)).collect())
    }
}

/// Lowers `mins[j]` to the minimum of `h_j(x)` over `xs` for one block of
/// [`LANES`] functions, with the widest vector instructions this CPU has.
/// The three paths compute the same minima; only the instructions differ.
fn min_block(mins: &mut [u32], a: &[u64], b: &[u64], xs: &[u64]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx512vl")
        {
            // SAFETY: the CPU has the features `min_block_avx512` is
            // compiled for (checked just above).
            return unsafe { min_block_avx512(mins, a, b, xs) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { min_block_avx2(mins, a, b, xs) };
        }
    }
    min_block_portable(mins, a, b, xs)
}

/// [`min_block_wide`] compiled with AVX-512 (a native 64-bit vector
/// multiply, `vpmullq`, and 64-bit minimum, `vpminuq`): about 4 times the
/// baseline x86-64 speed.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl")]
fn min_block_avx512(mins: &mut [u32], a: &[u64], b: &[u64], xs: &[u64]) {
    min_block_wide(mins, a, b, xs)
}

/// [`min_block_portable`] with the minima kept as 64-bit lanes, so no value
/// is narrowed inside the loop: faster where the CPU has a 64-bit vector
/// minimum (AVX-512), slower where it has not. h_j < 2^32, so the minima
/// are the same.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn min_block_wide(mins: &mut [u32], a: &[u64], b: &[u64], xs: &[u64]) {
    let a: [u64; LANES] = a.try_into().expect("blocks are LANES long");
    let b: [u64; LANES] = b.try_into().expect("blocks are LANES long");
    let mut m = [u64::MAX; LANES];
    let mut pairs = xs.chunks_exact(2);
    for pair in pairs.by_ref() {
        let (x, y) = (pair[0], pair[1]);
        for j in 0..LANES {
            let hx = a[j].wrapping_mul(x).wrapping_add(b[j]) >> 32;
            let hy = a[j].wrapping_mul(y).wrapping_add(b[j]) >> 32;
            m[j] = m[j].min(hx.min(hy));
        }
    }
    for &x in pairs.remainder() {
        for j in 0..LANES {
            m[j] = m[j].min(a[j].wrapping_mul(x).wrapping_add(b[j]) >> 32);
        }
    }
    for (lane, &wide) in mins.iter_mut().zip(&m) {
        *lane = (*lane).min(wide as u32);
    }
}

/// [`min_block_portable`] compiled with AVX2 (256-bit lanes): about twice
/// the baseline x86-64 speed.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn min_block_avx2(mins: &mut [u32], a: &[u64], b: &[u64], xs: &[u64]) {
    min_block_portable(mins, a, b, xs)
}

/// The block's minima stay in a register-sized array across all
/// fingerprints (one pass over `xs` per block), two fingerprints per step;
/// the loops over the lanes have a constant length, so they compile to
/// vector code for whatever instruction set the caller is compiled with.
#[inline(always)]
fn min_block_portable(mins: &mut [u32], a: &[u64], b: &[u64], xs: &[u64]) {
    let a: [u64; LANES] = a.try_into().expect("blocks are LANES long");
    let b: [u64; LANES] = b.try_into().expect("blocks are LANES long");
    let mut m: [u32; LANES] = (&*mins).try_into().expect("blocks are LANES long");
    let mut pairs = xs.chunks_exact(2);
    for pair in pairs.by_ref() {
        let (x, y) = (pair[0], pair[1]);
        for j in 0..LANES {
            let hx = (a[j].wrapping_mul(x).wrapping_add(b[j]) >> 32) as u32;
            let hy = (a[j].wrapping_mul(y).wrapping_add(b[j]) >> 32) as u32;
            m[j] = m[j].min(hx.min(hy));
        }
    }
    for &x in pairs.remainder() {
        for j in 0..LANES {
            m[j] = m[j].min((a[j].wrapping_mul(x).wrapping_add(b[j]) >> 32) as u32);
        }
    }
    mins.copy_from_slice(&m);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every instruction-set path this CPU can run gives the portable
    /// path's minima (the dispatcher picks only one of them, so the others
    /// would otherwise go unchecked on this machine).
    #[test]
    fn every_path_gives_the_same_minima() {
        let mut state = 3;
        let coefficients: Vec<u64> = (0..2 * LANES).map(|_| splitmix64(&mut state)).collect();
        let (a, b) = coefficients.split_at(LANES);
        let a: Vec<u64> = a.iter().map(|v| v | 1).collect();
        for n in [1usize, 2, 7, 500] {
            let xs: Vec<u64> = (0..n).map(|_| splitmix64(&mut state)).collect();
            let mut expected = [u32::MAX; LANES];
            min_block_portable(&mut expected, &a, b, &xs);
            let by_definition: Vec<u32> = (0..LANES)
                .map(|j| xs.iter().map(|&x| (a[j].wrapping_mul(x).wrapping_add(b[j]) >> 32) as u32).min().unwrap())
                .collect();
            assert_eq!(expected.to_vec(), by_definition);
            let mut dispatched = [u32::MAX; LANES];
            min_block(&mut dispatched, &a, b, &xs);
            assert_eq!(dispatched, expected, "n={n}");
            #[cfg(target_arch = "x86_64")]
            {
                if std::arch::is_x86_feature_detected!("avx2") {
                    let mut got = [u32::MAX; LANES];
                    // SAFETY: AVX2 checked just above.
                    unsafe { min_block_avx2(&mut got, &a, b, &xs) };
                    assert_eq!(got, expected, "avx2 n={n}");
                }
                let mut got = [u32::MAX; LANES];
                min_block_wide(&mut got, &a, b, &xs);
                assert_eq!(got, expected, "wide n={n}");
            }
        }
    }
}

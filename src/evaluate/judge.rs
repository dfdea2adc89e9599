//! Judging the methods' pairs (the study's Tables 2–4): a bottom-k sample
//! of each method's found pairs by one hash shared by every method, so
//! that the samples of methods nest and a union of methods (the pool, an
//! overlap) is estimated from pairs already judged; precision with its 95%
//! Wilson interval, the verified pairs scaled to the method's, and recall
//! relative to the pool. The `evaluate` stage chooses and verifies the
//! pairs (in the order of a pair hash, `jobs/evaluate_found.sql`) and
//! writes the rows.

/// One judged pair: the methods that proposed it and whether it verified.
#[derive(Debug, Clone, Copy)]
pub struct JudgedPair {
    pub methods: u64,
    pub verified: bool,
}

/// The judged pairs (ascending hash) and what the estimates need besides.
pub struct Judged {
    /// Method ids; bit i of a mask is `methods[i]`.
    pub methods: Vec<String>,
    /// Distinct candidate pairs proposed by both methods i and j
    /// (`both[i][i]`: by method i).
    pub both: Vec<Vec<u64>>,
    /// Bit mask of the pool's methods.
    pub pool: u64,
    /// Distinct candidate pairs of the pool's methods together.
    pub pool_found: u64,
    /// Judged pairs in ascending hash order.
    pub pairs: Vec<JudgedPair>,
    /// Size of the judged sample of each method and of any union of
    /// methods: the bottom-k size.
    pub k: usize,
    /// The pairs inside exact groups (n·(n−1)/2 for a group of n
    /// documents with one verification text): no method was given them,
    /// since only a group's first is searched, but every method would find
    /// every one (identical texts give identical signatures) and every one
    /// verifies (similarity 1). They count as found, judged and verified
    /// by every method and in the pool, without being listed.
    pub exact_pairs: u64,
}

impl Judged {
    /// The first `k` judged pairs (by hash) that any method of `mask`
    /// proposed: the bottom-k sample of the union of those methods, exact
    /// when the union holds at most `k` pairs.
    pub fn sample_of(&self, mask: u64) -> impl Iterator<Item = &JudgedPair> {
        self.pairs.iter().filter(move |p| p.methods & mask != 0).take(self.k)
    }

    /// Distinct candidate pairs of method i.
    pub fn found(&self, i: usize) -> u64 {
        self.both[i][i]
    }

    /// Distinct candidate pairs of method i or method j.
    pub fn found_either(&self, i: usize, j: usize) -> u64 {
        if i == j {
            self.found(i)
        } else {
            self.found(i) + self.found(j) - self.both[i][j]
        }
    }
}

/// [`wilson_interval`], or none without a judged pair.
fn wilson_interval_of(hits: u64, n: u64) -> Option<(f64, f64)> {
    (n > 0).then(|| wilson_interval(hits, n))
}

/// The Wilson score interval of a proportion `hits / n` at 95%.
pub fn wilson_interval(hits: u64, n: u64) -> (f64, f64) {
    let z = 1.959_963_984_540_054_f64;
    let n = n as f64;
    let p = hits as f64 / n;
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z * ((p * (1.0 - p) + z * z / (4.0 * n)) / n).sqrt() / (1.0 + z * z / n);
    // At p = 0 or 1 one end is exactly 0 or 1; computed, it is off by an ulp.
    let low = if hits == 0 { 0.0 } else { (centre - half).max(0.0) };
    let high = if hits as f64 == n { 1.0 } else { (centre + half).min(1.0) };
    (low, high)
}

/// A count of `found` pairs estimated from `hits` of `judged` of them.
pub fn scale(found: u64, hits: u64, judged: u64) -> u64 {
    if judged == 0 {
        0
    } else if judged == found {
        hits
    } else {
        (found as f64 * hits as f64 / judged as f64).round() as u64
    }
}

/// One row of `method_quality`.
#[derive(Debug, Clone, PartialEq)]
pub struct QualityRow {
    pub method: String,
    pub found: u64,
    pub judged: u64,
    pub verified: u64,
    pub precision: Option<f64>,
    pub interval: Option<(f64, f64)>,
    pub recall: Option<f64>,
    pub f1: Option<f64>,
}

/// The verified pairs of the pool (the union of the pool's methods'
/// verified pairs), estimated from the bottom-k sample of the union of
/// those methods; and one row per enabled method (also when it found
/// nothing), in method-id order, its recall relative to that pool.
pub fn quality_rows(judged: &Judged, enabled: &[String]) -> (u64, Vec<QualityRow>) {
    let (pool_judged, pool_hits) =
        judged.sample_of(judged.pool).fold((0u64, 0u64), |(n, v), p| (n + 1, v + p.verified as u64));
    let exact = judged.exact_pairs;
    let pool = scale(judged.pool_found, pool_hits, pool_judged) + exact;
    let mut enabled: Vec<&String> = enabled.iter().collect();
    enabled.sort();
    enabled.dedup();
    let rows = enabled
        .into_iter()
        .map(|method| {
            let bit = judged.methods.iter().position(|m| m == method);
            let proposed = bit.map_or(0, |i| judged.found(i));
            let (n, hits) = bit.map_or((0, 0), |i| {
                judged.sample_of(1 << i).fold((0u64, 0u64), |(n, v), p| (n + 1, v + p.verified as u64))
            });
            // The sample's estimate for the proposed pairs, then the exact
            // pairs, known to verify, added to both.
            let (found, verified) = (proposed + exact, scale(proposed, hits, n) + exact);
            let with_exact = |share: f64| (share * proposed as f64 + exact as f64) / found as f64;
            let precision = (n > 0).then(|| with_exact(hits as f64 / n as f64)).or((exact > 0).then_some(1.0));
            let recall = (pool > 0).then(|| verified as f64 / pool as f64);
            let f1 = match (precision, recall) {
                (Some(p), Some(r)) if p + r > 0.0 => Some(2.0 * p * r / (p + r)),
                _ => None,
            };
            QualityRow {
                method: method.clone(),
                found,
                judged: n + exact,
                verified,
                precision,
                interval: match wilson_interval_of(hits, n) {
                    Some((low, high)) => Some((with_exact(low), with_exact(high))),
                    None => (exact > 0).then_some((1.0, 1.0)),
                },
                recall,
                f1,
            }
        })
        .collect();
    (pool, rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_interval_matches_known_values() {
        // 5 of 10: 0.2366 .. 0.7634 (Wilson 1927; e.g. R's prop.test without
        // continuity correction).
        let (low, high) = wilson_interval(5, 10);
        assert!((low - 0.236_593).abs() < 1e-6 && (high - 0.763_407).abs() < 1e-6, "{low} {high}");
        assert_eq!(wilson_interval(20, 20).1, 1.0);
        assert_eq!(wilson_interval(0, 20).0, 0.0);
    }

    #[test]
    fn bottom_k_samples_nest_and_scale() {
        // Pairs in hash order; method 0 proposes all 10, method 1 the odd
        // ones. With k = 3, method 1's sample is its own 3 smallest.
        let pairs: Vec<JudgedPair> =
            (0..10u64).map(|i| JudgedPair { methods: 1 | ((i % 2) << 1), verified: i < 4 }).collect();
        let judged = Judged {
            methods: vec!["x".into(), "y".into()],
            both: vec![vec![10, 5], vec![5, 5]],
            pool: 3,
            pool_found: 10,
            pairs,
            k: 3,
            exact_pairs: 0,
        };
        let sample: Vec<bool> = judged.sample_of(2).map(|p| p.verified).collect();
        assert_eq!(sample, [true, true, false]); // pairs 1, 3, 5
        assert_eq!(judged.found_either(0, 1), 10);
        assert_eq!(scale(judged.found(1), 2, 3), 3);
        assert_eq!(scale(4, 2, 4), 2);
    }

    #[test]
    fn the_pool_is_the_union_of_the_pool_methods_verified_pairs() {
        // Three methods x, y, z; 6 pairs in hash order, all judged (k = 10):
        //   pair  methods  verified
        //   0     x        yes
        //   1     x, y     yes
        //   2     y        yes
        //   3     z        yes   (only z finds it)
        //   4     y        no
        //   5     x, z     yes
        // Pool {x, y}: verified pairs 0, 1, 2, 5 = 4 (pair 3 is z's alone).
        let (x, y, z) = (1u64, 2u64, 4u64);
        let pairs = [(x, true), (x | y, true), (y, true), (z, true), (y, false), (x | z, true)]
            .map(|(methods, verified)| JudgedPair { methods, verified })
            .to_vec();
        let judged = Judged {
            methods: vec!["x".into(), "y".into(), "z".into()],
            // found: x 3, y 3, z 2; x∩y 1, x∩z 1, y∩z 0.
            both: vec![vec![3, 1, 1], vec![1, 3, 0], vec![1, 0, 2]],
            pool: x | y,
            pool_found: 5,
            pairs,
            k: 10,
            exact_pairs: 0,
        };
        let enabled: Vec<String> = ["z", "x", "y"].iter().map(|s| s.to_string()).collect();
        let (pool, rows) = quality_rows(&judged, &enabled);
        assert_eq!(pool, 4);
        let by_method: Vec<(&str, u64, u64, Option<f64>)> =
            rows.iter().map(|r| (r.method.as_str(), r.found, r.verified, r.recall)).collect();
        // x verified 3 (pairs 0, 1, 5): recall 3/4; y 2 of 3: 2/4; z 2 of 2:
        // 2/4 (outside the pool, its pairs still count for its recall).
        assert_eq!(by_method, [("x", 3, 3, Some(0.75)), ("y", 3, 2, Some(0.5)), ("z", 2, 2, Some(0.5))]);
        // With every method in the pool, pair 3 joins it: 5.
        let all = Judged { pool: x | y | z, pool_found: 6, ..judged };
        assert_eq!(quality_rows(&all, &enabled).0, 5);
        // A pool of methods that found nothing: no recall.
        let none = Judged { pool: 0, pool_found: 0, ..all };
        let (pool, rows) = quality_rows(&none, &enabled);
        assert_eq!(pool, 0);
        assert!(rows.iter().all(|r| r.recall.is_none() && r.f1.is_none()));
        // Two exact groups of 3 and 2 documents: 3 + 1 pairs that every
        // method finds and that verify. Pool {x, y}: 4 + 4 = 8; x found 3 + 4,
        // verified 3 + 4: precision 1, recall 7/8; y found 7, verified 6:
        // precision 6/7, recall 6/8.
        let copies = Judged { pool: x | y, pool_found: 5, exact_pairs: 4, ..none };
        let (pool, rows) = quality_rows(&copies, &enabled);
        assert_eq!(pool, 8);
        let by_method: Vec<(&str, u64, u64, u64, Option<f64>, Option<f64>)> =
            rows.iter().map(|r| (r.method.as_str(), r.found, r.judged, r.verified, r.precision, r.recall)).collect();
        assert_eq!(
            by_method,
            [
                ("x", 7, 7, 7, Some(1.0), Some(7.0 / 8.0)),
                ("y", 7, 7, 6, Some(6.0 / 7.0), Some(6.0 / 8.0)),
                ("z", 6, 6, 6, Some(1.0), Some(6.0 / 8.0)),
            ]
        );
    }
}

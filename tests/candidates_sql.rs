//! The candidate SQL jobs (`jobs/candidates_exact.sql`, `minhash_edges.sql`,
//! `a11.sql`, `a12.sql` and `candidates.sql`) compared with a straightforward
//! Rust reference of the bounded edges on generated tables: signature groups
//! (a big template group among them), A11 chains, A12 "3+5" with
//! `a12_pair_matches` as the pair rule, and min-hash's resemblance threshold
//! on hand-made sketches.

use neardup::config::Config;
use neardup::methods::a12::{a12_pair_matches, A12Record};
use neardup::methods::splitmix64;
use neardup::stages::candidates::{candidate_edges, scored_candidate_edges};
use neardup::tables::columns::{a12_records, shingles, signatures, sketches};
use neardup::tables::write::{TableOutput, TableWriter};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn temp_out(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("neardup-sql-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap()
}

/// The reference of the bounded edges (jobs/candidates_exact.sql, a11.sql,
/// a12.sql, candidates.sql), written the plain way: each group's members
/// sorted by (len, doc_id); each member linked to the next `k` members when
/// `link` accepts the two; per pair the number of links (strength) and the
/// length gap; pairs that `strong_enough(doc_a, doc_b, strength)` refuses
/// are dropped; each document keeps its `k` best edges by (strength desc, gap
/// asc, partner asc); an edge stays when either end keeps it.
fn bounded_edges<T>(
    groups: Vec<Vec<(u32, u64, T)>>,
    k: usize,
    method: &str,
    link: impl Fn(&(u32, u64, T), &(u32, u64, T)) -> bool,
    strong_enough: impl Fn(u64, u64, u64) -> bool,
) -> BTreeSet<(u64, u64, String)> {
    let mut strength: BTreeMap<(u64, u64), (u64, u32)> = BTreeMap::new();
    for mut chain in groups {
        chain.sort_by_key(|(len, id, _)| (*len, *id));
        for (i, x) in chain.iter().enumerate() {
            for y in chain.iter().skip(i + 1).take(k) {
                if link(x, y) {
                    let e = strength.entry((x.1.min(y.1), x.1.max(y.1))).or_insert((0, y.0.abs_diff(x.0)));
                    e.0 += 1;
                }
            }
        }
    }
    let mut by_doc: BTreeMap<u64, Vec<(std::cmp::Reverse<u64>, u32, u64)>> = BTreeMap::new();
    for (&(a, b), &(n, gap)) in strength.iter().filter(|(&(a, b), &(n, _))| strong_enough(a, b, n)) {
        by_doc.entry(a).or_default().push((std::cmp::Reverse(n), gap, b));
        by_doc.entry(b).or_default().push((std::cmp::Reverse(n), gap, a));
    }
    let mut kept = BTreeSet::new();
    for (doc, mut edges) in by_doc {
        edges.sort();
        for (_, _, other) in edges.into_iter().take(k) {
            kept.insert((doc.min(other), doc.max(other), method.to_string()));
        }
    }
    kept
}

/// Writes every input table of the candidates stage that `rows` does not
/// name, empty, so the whole candidates SQL runs over one method's table.
fn write_empty_inputs_except(out: &Path, table: &str) {
    for t in ["signatures", "shingles", "a12_records", "method_pairs", "sketches"] {
        if t != table {
            TableWriter::for_table(out, t).unwrap().commit().unwrap();
        }
    }
}

/// Fails with the pairs only one side has, which says more than two long lists.
fn assert_same_pairs(got: Vec<(u64, u64, String)>, expected: BTreeSet<(u64, u64, String)>) {
    let got: BTreeSet<_> = got.into_iter().collect();
    let missing: Vec<_> = expected.difference(&got).collect();
    let extra: Vec<_> = got.difference(&expected).collect();
    assert!(missing.is_empty() && extra.is_empty(), "missing from SQL: {missing:?}\nonly in SQL: {extra:?}");
}

fn within_ratio(x: u32, y: u32, r: f64) -> bool {
    let (lo, hi) = (x.min(y), x.max(y));
    lo == hi || (lo > 0 && hi as f64 / lo as f64 <= r)
}

#[test]
fn exact_signature_groups_are_chained_and_bounded() {
    let out = temp_out("exact");
    let mut config = Config::default();
    config.candidates.max_group_size = 4;
    config.candidates.max_edges_per_document = 3;
    let k = 3;
    // a1 slot 0 sig 7: docs 1..=3; a1 slot 1 sig 8: docs 1..=6 (hot: > 4,
    // chained all the same); a2 slot 1 sig 7: docs 2, 5; a singleton; and
    // a big group of 300 documents (a template) in 14 slots as a6
    // megashingles. (minhash band pairs also pass its resemblance rule:
    // `minhash_keeps_band_pairs_at_or_above_the_threshold`.)
    let len = |d: u64| (d * 37 % 11) as u32 + 10;
    let mut rows: Vec<(&str, u64, u16, u64)> = [(1, 7), (2, 7), (3, 7)]
        .iter()
        .map(|&(d, s)| ("a1", d, 0, s))
        .chain((1..=6).map(|d| ("a1", d, 1, 8)))
        .chain([("a2", 2, 1, 7), ("a2", 5, 1, 7), ("a2", 9, 0, 7)])
        .collect();
    for band in 0..14u16 {
        for d in 100..400u64 {
            // Bands split the template into a few sub-groups.
            rows.push(("a6", d, band, (d % (band as u64 % 3 + 1)) * 1000 + band as u64));
        }
    }
    let mut w = TableOutput::<signatures::Rows>::create(&out).unwrap();
    for (m, d, slot, sig) in &rows {
        w.push(|b| {
            b.method.append_value(m);
            b.doc_id.append_value(*d);
            b.slot.append_value(*slot);
            b.sig.append_value(*sig);
            b.doc_len.append_value(len(*d));
        })
        .unwrap();
    }
    w.commit().unwrap();
    write_empty_inputs_except(&out, "signatures");

    // (method, slot, signature) -> its members as (length, doc_id, ()).
    type Groups<'a> = BTreeMap<(&'a str, u16, u64), Vec<(u32, u64, ())>>;
    let mut groups: Groups = BTreeMap::new();
    for (m, d, slot, sig) in &rows {
        groups.entry((m, *slot, *sig)).or_default().push((len(*d), *d, ()));
    }
    let mut expected = BTreeSet::new();
    for method in ["a1", "a2", "a6"] {
        let of_method: Vec<_> =
            groups.iter().filter(|(g, _)| g.0 == method).map(|(_, members)| members.clone()).collect();
        expected.extend(bounded_edges(of_method, k, method, |_, _| true, |_, _, _| true));
    }
    let got = rt().block_on(candidate_edges(&out, &config)).unwrap();
    assert_same_pairs(got.clone(), expected);
    // The 300-document template gives a bounded number of edges: no
    // document chose more than k, so at most 300 * k edges.
    let template = got.iter().filter(|p| p.2 == "a6").count();
    assert!(template > 300 && template <= 300 * k, "{template} a6 edges");
    // The chains the walk read (the table signature_chains): every group of
    // two or more, its members numbered from 1 by length then doc_id; the
    // singleton (a2, 0, 7) is left out.
    let mut expected_chains = BTreeSet::new();
    for ((m, slot, sig), members) in &groups {
        let mut members = members.clone();
        members.sort();
        if members.len() >= 2 {
            for (place, (_, doc, ())) in members.iter().enumerate() {
                expected_chains.insert((m.to_string(), *slot, *sig, *doc, place as i64 + 1));
            }
        }
    }
    assert_eq!(signature_chains(&out), expected_chains);
    let _ = std::fs::remove_dir_all(&out);
}

/// The rows (method, slot, sig, doc_id, pos) of the table signature_chains
/// that the candidate SQL wrote under `out`.
fn signature_chains(out: &Path) -> BTreeSet<(String, u16, u64, u64, i64)> {
    use neardup::tables::columns::signature_chains as chains;
    let batches = rt().block_on(async {
        let session = neardup::tables::sql::session_over(out).await.unwrap();
        session.sql(&format!("SELECT * FROM {}", chains::TABLE)).await.unwrap().collect().await.unwrap()
    });
    let mut rows = BTreeSet::new();
    for b in &batches {
        let (m, slot, sig) = (chains::method(b).unwrap(), chains::slot(b).unwrap(), chains::sig(b).unwrap());
        let (doc, pos) = (chains::doc_id(b).unwrap(), chains::pos(b).unwrap());
        for i in 0..b.num_rows() {
            rows.insert((m.value(i).to_string(), slot.value(i), sig.value(i), doc.value(i), pos.value(i)));
        }
    }
    rows
}

fn write_shingles(out: &Path, rows: &[(u64, u64, u32)]) {
    let mut w = TableOutput::<shingles::Rows>::create(out).unwrap();
    for (shingle, doc, len) in rows {
        w.push(|b| {
            b.shingle.append_value(*shingle);
            b.doc_id.append_value(*doc);
            b.doc_len.append_value(*len);
        })
        .unwrap();
    }
    w.commit().unwrap();
}

/// a11 with the default `a11_min_shared` (every link counts with these few
/// shingles per page) and with a half share: a pair linked by fewer links
/// than half the smaller page's shingles is not compared; each with all the
/// shingles and with a prefix of the rarest (half, and about a third).
#[test]
fn a11_sql_equals_reference_chains() {
    let default = Config::default().methods;
    assert_eq!(default.a11.prefix_share, 1.0);
    for (min_shared, prefix_share) in
        [(default.a11.min_shared, 1.0), (0.5, 1.0), (default.a11.min_shared, 0.5), (0.5, 0.34)]
    {
        a11_sql_equals_reference_chains_at(min_shared, prefix_share);
    }
}

/// The reference of a11_shingles.sql: of each document's shingles, the first
/// ceil(share × count) by (global df, shingle).
fn rarest_prefix(rows: &[(u64, u64, u32)], share: f64) -> Vec<(u64, u64, u32)> {
    let mut df: BTreeMap<u64, u64> = BTreeMap::new();
    let mut by_doc: BTreeMap<u64, Vec<(u64, u32)>> = BTreeMap::new();
    for &(s, d, l) in rows {
        *df.entry(s).or_default() += 1;
        by_doc.entry(d).or_default().push((s, l));
    }
    let mut kept = Vec::new();
    for (d, mut shingles) in by_doc {
        shingles.sort_by_key(|&(s, _)| (df[&s], s));
        let keep = (share * shingles.len() as f64).ceil() as usize;
        kept.extend(shingles.into_iter().take(keep).map(|(s, l)| (s, d, l)));
    }
    kept
}

fn a11_sql_equals_reference_chains_at(min_shared: f64, prefix_share: f64) {
    let out = temp_out(&format!("a11-{min_shared}-{prefix_share}"));
    let mut config = Config::default();
    config.candidates.max_edges_per_document = 3;
    config.methods.a11.min_shared = min_shared;
    config.methods.a11.prefix_share = prefix_share;
    let ratio = config.methods.chain_ratio;
    let mut state = 11u64;
    let mut rows = Vec::new();
    for doc in 0..120u64 {
        // Lengths cluster so that many pairs are within the ratio; 100/115
        // style boundaries and zero lengths appear. Shingles 0..40 are
        // drawn unevenly (the low ones more often), so global df varies and
        // ties in df are broken by the shingle value.
        let len = [0, 100, 115, 116, 130, 150, 20, 23][(splitmix64(&mut state) % 8) as usize] as u32;
        let mut shingles = BTreeSet::new();
        for _ in 0..(splitmix64(&mut state) % 8) {
            let bound = [40, 40, 12][(splitmix64(&mut state) % 3) as usize];
            shingles.insert(splitmix64(&mut state) % bound);
        }
        // Shared passages: runs of shingles that the same documents have,
        // so that several shingles have one chain (a11_chains keeps it
        // once, and its links must still count once per shingle).
        if doc % 5 == 0 {
            shingles.extend(100..105);
        }
        if doc % 7 == 0 {
            shingles.extend(200..203);
        }
        rows.extend(shingles.into_iter().map(|s| (s, doc * 7919 + 3, len)));
    }
    write_shingles(&out, &rows);
    write_empty_inputs_except(&out, "shingles");
    let kept = rarest_prefix(&rows, prefix_share);
    let mut by_shingle: BTreeMap<u64, Vec<(u32, u64, ())>> = BTreeMap::new();
    for (s, d, l) in &kept {
        by_shingle.entry(*s).or_default().push((*l, *d, ()));
    }
    let k = config.candidates.max_edges_per_document as usize;
    let mut shingle_count: BTreeMap<u64, u64> = BTreeMap::new();
    for (_, d, _) in &kept {
        *shingle_count.entry(*d).or_default() += 1;
    }
    let strong_enough =
        |a: u64, b: u64, links: u64| links as f64 >= min_shared * shingle_count[&a].min(shingle_count[&b]) as f64;
    let expected = bounded_edges(
        by_shingle.into_values().collect(),
        k,
        "a11",
        |x, y| within_ratio(x.0, y.0, ratio),
        strong_enough,
    );
    let got = rt().block_on(candidate_edges(&out, &config)).unwrap();
    assert!(expected.len() > 30, "the generated case should have pairs, has {}", expected.len());
    assert_same_pairs(got, expected);
    let _ = std::fs::remove_dir_all(&out);
}

/// The prefix by hand: four documents of equal length, shingles with
/// global df 1 (10, 11, 12), 2 (20, 21) and 4 (40). At share 0.5 each
/// keeps its rarest half: doc 1 {10, 20, 21, 40} keeps 10, 20; doc 2 {20,
/// 21, 40} keeps ceil(1.5) = 2: 20, 21; doc 3 {11, 40} keeps 11; doc 4 {12,
/// 40} keeps 12. Only shingle 20 is chained twice: the one pair 1-2 (at
/// share 1, 40's chain also links 1-3, 1-4, 2-3, ...: all six pairs).
#[test]
fn a11_prefix_keeps_the_rarest_shingles() {
    let out = temp_out("a11-prefix");
    let rows: Vec<(u64, u64, u32)> =
        [(1, [10, 20, 21, 40].as_slice()), (2, &[20, 21, 40]), (3, &[11, 40]), (4, &[12, 40])]
            .iter()
            .flat_map(|&(doc, shingles)| shingles.iter().map(move |&s| (s, doc, 50)))
            .collect();
    write_shingles(&out, &rows);
    write_empty_inputs_except(&out, "shingles");
    let mut config = Config::default();
    config.methods.a11.prefix_share = 0.5;
    let a11 = |config: &Config| -> Vec<(u64, u64)> {
        let edges = rt().block_on(candidate_edges(&out, config)).unwrap();
        edges.into_iter().filter(|e| e.2 == "a11").map(|e| (e.0, e.1)).collect()
    };
    assert_eq!(a11(&config), [(1, 2)]);
    config.methods.a11.prefix_share = 1.0;
    assert_eq!(a11(&config), [(1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)]);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a12_sql_equals_reference_rule() {
    let out = temp_out("a12");
    let config = Config::default();
    let (ratio, num_ratio) = (config.methods.chain_ratio, config.methods.a12.num_ratio);
    let mut state = 5u64;
    let mut pick = |n: u64| splitmix64(&mut state) % n;
    let mut records = Vec::new();
    for doc in 0..150u64 {
        let len = [40, 45, 46, 60, 100, 115][pick(6) as usize];
        let num = [3, 5, 6, 7, 8][pick(5) as usize];
        let ss = [1 + pick(4) as u32, 1 + pick(4) as u32 + 4, if pick(3) == 0 { 0 } else { 9 + pick(3) as u32 }];
        let ws = [1 + pick(6) as u32, 7 + pick(3) as u32, 10 + pick(3) as u32, 0, 20 + pick(2) as u32];
        for key in ss.iter().filter(|&&k| k != 0) {
            records.push(A12Record { doc_id: doc + 1000, key: *key, len, num, ss, ws });
        }
    }
    // Signatures that coincide across positions ("any order"): distinct
    // non-zero values per record, as `a12_records` makes them, drawn from
    // small pools, with zeros anywhere.
    for doc in 0..150u64 {
        let len = [40, 45, 46, 60, 100, 115][pick(6) as usize];
        let num = [3, 5, 6, 7, 8][pick(5) as usize];
        let mut ss = [0u32; 3];
        let mut ws = [0u32; 5];
        for (sigs, pool) in [(&mut ss[..], 6), (&mut ws[..], 8)] {
            for i in 0..sigs.len() {
                let sig = loop {
                    let sig = 101 + pick(pool) as u32;
                    if !sigs[..i].contains(&sig) {
                        break sig;
                    }
                };
                sigs[i] = if i > 0 && pick(4) == 0 { 0 } else { sig };
            }
        }
        for key in ss.iter().filter(|&&k| k != 0) {
            records.push(A12Record { doc_id: doc + 2000, key: *key, len, num, ss, ws });
        }
    }
    let mut w = TableOutput::<a12_records::Rows>::create(&out).unwrap();
    for r in &records {
        w.push(|b| r.append_to(b)).unwrap();
    }
    w.commit().unwrap();
    write_empty_inputs_except(&out, "a12_records");

    let mut by_key: BTreeMap<u32, Vec<(u32, u64, A12Record)>> = BTreeMap::new();
    for r in &records {
        by_key.entry(r.key).or_default().push((r.len, r.doc_id, *r));
    }
    let k = config.candidates.max_edges_per_document as usize;
    let expected = bounded_edges(
        by_key.into_values().collect(),
        k,
        "a12",
        |x, y| a12_pair_matches(&x.2, &y.2, ratio, num_ratio),
        |_, _, _| true,
    );
    let got = rt().block_on(candidate_edges(&out, &config)).unwrap();
    assert!(expected.len() > 20, "the generated case should have pairs, has {}", expected.len());
    assert_same_pairs(got, expected);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn minhash_keeps_band_pairs_at_or_above_the_threshold() {
    let out = temp_out("minhash");
    let config = Config::default();
    let k = config.methods.minhash.functions;
    assert_eq!((k, config.methods.minhash.threshold), (84, 0.75));
    // Hand-made sketches of 84 minima. Doc 1: 0, 1, ..., 83.
    // Doc 2 equals doc 1 on positions 0..63 and holds 1000 + i after:
    // 63/84 = 0.75 exactly, at the threshold, kept.
    // Doc 3 equals doc 1 on positions 0..62 and holds 1000 + i after:
    // 62/84 = 0.738 with doc 1, dropped although band 0 (positions 0..7)
    // matches; with doc 2 it differs only at position 62: 83/84, kept.
    // Doc 4 has doc 1's sketch but shares no band row: the bands are the
    // index, so it is never estimated and never paired.
    let sketch =
        |equal: usize| -> Vec<u64> { (0..k as u64).map(|i| if (i as usize) < equal { i } else { 1000 + i }).collect() };
    let sketches = [(1u64, sketch(k)), (2, sketch(63)), (3, sketch(62)), (4, sketch(k))];
    let mut w = TableOutput::<sketches::Rows>::create(&out).unwrap();
    for (d, s) in &sketches {
        for (position, minimum) in s.iter().enumerate() {
            w.push(|b| {
                b.doc_id.append_value(*d);
                b.position.append_value(position as u32);
                b.minimum.append_value(*minimum);
            })
            .unwrap();
        }
    }
    w.commit().unwrap();
    // Docs 1, 2, 3 share band 0 (one group); doc 4 is alone in band 0.
    let mut w = TableOutput::<signatures::Rows>::create(&out).unwrap();
    for (d, sig) in [(1u64, 5u64), (2, 5), (3, 5), (4, 6)] {
        w.push(|b| {
            b.method.append_value("minhash");
            b.doc_id.append_value(d);
            b.slot.append_value(0);
            b.sig.append_value(sig);
            b.doc_len.append_value(100);
        })
        .unwrap();
    }
    w.commit().unwrap();
    for t in ["shingles", "a12_records", "method_pairs"] {
        TableWriter::for_table(&out, t).unwrap().commit().unwrap();
    }

    let got = rt().block_on(scored_candidate_edges(&out, &config)).unwrap();
    let expected =
        vec![(1, 2, "minhash".to_string(), Some(63.0 / 84.0)), (2, 3, "minhash".to_string(), Some(83.0 / 84.0))];
    assert_eq!(got, expected);

    // A lower threshold keeps the 62/84 pair too, with its resemblance.
    let mut lower = config.clone();
    lower.methods.minhash.threshold = 0.7;
    let got = rt().block_on(scored_candidate_edges(&out, &lower)).unwrap();
    assert!(got.contains(&(1, 3, "minhash".to_string(), Some(62.0 / 84.0))), "{got:?}");
    assert_eq!(got.len(), 3);
    let _ = std::fs::remove_dir_all(&out);
}

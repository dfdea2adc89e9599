//! Text corpora and gold labels end to end: the `pipeline` binary on a small
//! JSONL corpus built so that the pairs each method proposes are known by
//! construction, scored against pair labels and cluster labels whose
//! tp / fp / fn are worked out by hand below; and `scripts/eval_labeled.sh`
//! on the first pairs of the Webis human-labeled set.

use arrow::array::{Array, AsArray};
use arrow::datatypes::{Float64Type, Int64Type, UInt64Type};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

mod common;
use common::{pipeline, read_table, run_ok, shared_data, temp_dir};

/// One row of `gold_quality`.
#[derive(Debug, Clone, PartialEq)]
struct Score {
    positives: i64,
    negatives: i64,
    tp: i64,
    fp: i64,
    fn_: i64,
    precision: Option<f64>,
    recall: Option<f64>,
    f1: Option<f64>,
}

/// `gold_quality` by method.
fn gold_quality(out: &Path) -> BTreeMap<String, Score> {
    let mut scores = BTreeMap::new();
    for b in read_table(out, "gold_quality") {
        let int = |n: &str| b.column_by_name(n).unwrap().as_primitive::<Int64Type>().clone();
        let float = |n: &str| b.column_by_name(n).unwrap().as_primitive::<Float64Type>().clone();
        let (pos, neg, tp, fp, fn_) = (int("positives"), int("negatives"), int("tp"), int("fp"), int("fn"));
        let (p, r, f) = (float("precision"), float("recall"), float("f1"));
        let opt = |a: &arrow::array::Float64Array, i: usize| a.is_valid(i).then(|| a.value(i));
        let methods = b.column_by_name("method").unwrap().as_string::<i32>().clone();
        for i in 0..b.num_rows() {
            let score = Score {
                positives: pos.value(i),
                negatives: neg.value(i),
                tp: tp.value(i),
                fp: fp.value(i),
                fn_: fn_.value(i),
                precision: opt(&p, i),
                recall: opt(&r, i),
                f1: opt(&f, i),
            };
            scores.insert(methods.value(i).to_string(), score);
        }
    }
    scores
}

/// A score from counts, precision, recall and F1 written out as fractions.
fn score(counts: [i64; 5], precision: Option<f64>, recall: Option<f64>, f1: Option<f64>) -> Score {
    let [positives, negatives, tp, fp, fn_] = counts;
    Score { positives, negatives, tp, fp, fn_, precision, recall, f1 }
}

fn assert_scores(out: &Path, expected: &[(&str, Score)]) {
    let got = gold_quality(out);
    assert_eq!(got.len(), expected.len(), "{got:?}");
    for (method, want) in expected {
        let have = &got[*method];
        let close = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => (a - b).abs() < 1e-12,
            (a, b) => a == b,
        };
        let same = (have.positives, have.negatives, have.tp, have.fp, have.fn_)
            == (want.positives, want.negatives, want.tp, want.fp, want.fn_)
            && close(have.precision, want.precision)
            && close(have.recall, want.recall)
            && close(have.f1, want.f1);
        assert!(same, "{method}: got {have:?}, expected {want:?}");
    }
}

/// A made-up word per number (two-letter syllables, no stop word, longer
/// than 3 letters), so every block of text has its own vocabulary.
fn word(i: usize) -> String {
    const SYLLABLES: [&str; 8] = ["ka", "lo", "mi", "nu", "pe", "ri", "so", "tu"];
    (0..3).map(|k| SYLLABLES[(i >> (3 * k)) & 7]).collect()
}

/// A sentence of `len` words starting at word number `first`, capitalized
/// (a period before a lowercase word ends no sentence, UAX #29).
fn sentence(first: usize, len: usize) -> String {
    let words: Vec<String> = (first..first + len).map(word).collect();
    let text = words.join(" ");
    format!("{}{}.", text[..1].to_uppercase(), &text[1..])
}

/// The test corpus. A, B and C share their two longest sentences (20 and 15
/// words), so a4 (LongSent) proposes A-B, A-C and B-C; C's third, short
/// sentence differs, so a0 (MD5) proposes only the exact copy A-B. D and its
/// copy E (ids 4 and "5": numeric and string) are a0 and a4 pairs too; F
/// shares nothing. The A/C difference is 5 of 40 words, so their
/// similarity is far above 0.8: `final` (verified) = a4's pairs. One broken
/// line goes to `rejects`.
fn write_corpus(path: &Path) {
    let (l1, l2) = (sentence(0, 20), sentence(20, 15));
    let text = |tail: String| format!("{l1} {l2} {tail}");
    let (d1, d2, d3) = (sentence(100, 20), sentence(120, 15), sentence(135, 5));
    let lines = [
        serde_json::json!({"id": "A", "url": "http://t/a", "text": text(sentence(40, 5))}).to_string(),
        serde_json::json!({"id": "B", "url": "http://t/b", "text": text(sentence(40, 5))}).to_string(),
        serde_json::json!({"id": "C", "url": "http://t/c", "text": text(sentence(60, 5))}).to_string(),
        "{\"id\": \"broken".to_string(),
        serde_json::json!({"id": 4, "url": "http://t/d", "text": format!("{d1} {d2} {d3}")}).to_string(),
        serde_json::json!({"id": "5", "url": "http://t/e", "text": format!("{d1} {d2} {d3}")}).to_string(),
        serde_json::json!({"id": "F", "url": "http://t/f", "text": format!("{} {}", sentence(200, 18), sentence(220, 6))})
            .to_string(),
    ];
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

/// Pair labels: A-B 3 and B-C dup (positives), A-C 2 (judged only with
/// positives from 2), A-D 0 and D-E "0" (negatives; D and E named by number
/// and string the other way round than in the corpus), A-F 3 (a positive
/// nobody proposes), C-F 0 by URL (a negative).
const PAIR_GOLD: &str = r#"{"id_a": "A", "id_b": "B", "label": 3}
{"id_a": "B", "id_b": "C", "dup": true}
{"id_a": "A", "id_b": "C", "label": 2}
{"id_a": "A", "id_b": "4", "label": 0}
{"id_a": 4, "id_b": 5, "label": "0"}
{"id_a": "F", "id_b": "A", "label": 3}
{"url_a": "http://t/c", "url_b": "http://t/f", "label": 0}
"#;

/// Clusters: {A, B, C}, {D}, {E}; F unlabeled.
const CLUSTER_GOLD: &str = r#"{"id": "A", "cluster": 1}
{"id": "B", "cluster": 1}
{"id": "C", "cluster": "1"}
{"id": 4, "cluster": 2}
{"url": "http://t/e", "cluster": 3}
"#;

#[test]
fn gold_scores_by_hand_for_pairs_thresholds_and_clusters() {
    let dir = temp_dir("hand");
    let corpus = dir.join("corpus.jsonl");
    write_corpus(&corpus);
    let gold = dir.join("gold.jsonl");
    std::fs::write(&gold, PAIR_GOLD).unwrap();
    let out = dir.join("out");
    let (c, g, o) = (corpus.to_str().unwrap(), gold.to_str().unwrap(), out.to_str().unwrap());
    let base = ["--quiet", "run", "--methods", "a0,a4", "--input", c, "--out", o];

    // Without --gold the table exists and is empty.
    run_ok(&base);
    assert_eq!(read_table(&out, "gold_quality").iter().map(|b| b.num_rows()).sum::<usize>(), 0);
    let files = read_table(&out, "ingest_files");
    let count = |n: &str| files[0].column_by_name(n).unwrap().as_primitive::<UInt64Type>().value(0);
    assert_eq!((count("records"), count("documents"), count("rejects")), (7, 6, 1));

    // Label 3 positive, 0 negative. Positives A-B, B-C, A-F; negatives A-D,
    // D-E, C-F. a0 proposes A-B (tp), D-E (fp): fn = A-F, B-C. a4 proposes
    // A-B, B-C (tp), D-E (fp), A-C (label 2: not judged): fn = A-F.
    let mut args = base.to_vec();
    args.extend(["--gold", g]);
    run_ok(&args);
    let a4 = score([3, 3, 2, 1, 1], Some(2.0 / 3.0), Some(2.0 / 3.0), Some(4.0 / 6.0));
    assert_scores(
        &out,
        &[
            ("a0", score([3, 3, 1, 1, 2], Some(0.5), Some(1.0 / 3.0), Some(2.0 / 5.0))),
            ("a4", a4.clone()),
            ("final", a4),
        ],
    );

    // Labels 2-3 positive: A-C joins the positives and a4's tp.
    let config = dir.join("two.toml");
    std::fs::write(&config, "[evaluate]\ngold_positive_min_label = 2\n").unwrap();
    let mut two = args.clone();
    two.extend(["--config", config.to_str().unwrap()]);
    run_ok(&two);
    let a4 = score([4, 3, 3, 1, 1], Some(3.0 / 4.0), Some(3.0 / 4.0), Some(6.0 / 8.0));
    assert_scores(
        &out,
        &[
            ("a0", score([4, 3, 1, 1, 3], Some(0.5), Some(1.0 / 4.0), Some(2.0 / 6.0))),
            ("a4", a4.clone()),
            ("final", a4),
        ],
    );

    // Clusters, written over the same gold file: only evaluate reruns (the
    // file is part of its fingerprint). Positives A-B, A-C, B-C; D-E are in
    // different clusters, so proposing them is a false positive; no stated
    // negatives.
    let verify_manifest = std::fs::read_to_string(out.join("_manifests/verify.json")).unwrap();
    std::fs::write(&gold, CLUSTER_GOLD).unwrap();
    run_ok(&args);
    assert_eq!(verify_manifest, std::fs::read_to_string(out.join("_manifests/verify.json")).unwrap());
    let a4 = score([3, 0, 3, 1, 0], Some(3.0 / 4.0), Some(1.0), Some(6.0 / 7.0));
    assert_scores(
        &out,
        &[
            ("a0", score([3, 0, 1, 1, 2], Some(0.5), Some(1.0 / 3.0), Some(2.0 / 5.0))),
            ("a4", a4.clone()),
            ("final", a4),
        ],
    );

    // A broken gold file fails the run with its line number; a missing one is a usage error.
    std::fs::write(&gold, "{\"id_a\": \"A\", \"id_b\": \"B\"}\n").unwrap();
    let o = pipeline().args(&args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.code() == Some(1) && err.contains("line 1"), "{err}");
    let mut missing = base.to_vec();
    let nowhere = dir.join("nowhere.jsonl");
    missing.extend(["--gold", nowhere.to_str().unwrap()]);
    assert_eq!(pipeline().args(&missing).output().unwrap().status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn labeled_set_script_on_the_first_webis_pairs() {
    const PAIRS: usize = 40;
    let Some(labels) = shared_data("labeled/webis_s3_labeled_pairs.jsonl") else { return };
    assert!(Command::new("python3").arg("--version").output().is_ok(), "scripts/eval_labeled.sh needs python3");
    let dir = temp_dir("webis");
    let out = dir.join("out");
    let o = Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/eval_labeled.sh"))
        .args(["--out", out.to_str().unwrap(), "--limit", &PAIRS.to_string()])
        .env("PIPELINE", env!("CARGO_BIN_EXE_pipeline"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("label >= 3") && stdout.contains("label >= 2") && stdout.contains("final"), "{stdout}");

    // The last table printed counts labels 2 and 3 as positive, 0 as
    // negative; every labeled document is in the corpus, so the totals are
    // the label counts of the first pairs of the file.
    let text = std::fs::read_to_string(labels).unwrap();
    let (mut positives, mut negatives) = (0, 0);
    for line in text.lines().take(PAIRS) {
        let pair: serde_json::Value = serde_json::from_str(line).unwrap();
        match pair["label_raw"].as_str().unwrap() {
            "2" | "3" => positives += 1,
            "0" => negatives += 1,
            _ => {}
        }
    }
    let scores = gold_quality(&out);
    assert_eq!(scores.len(), neardup::methods::registry::ids().len() + 1);
    for (method, s) in &scores {
        assert_eq!((s.positives, s.negatives), (positives, negatives), "{method}");
        assert_eq!(s.tp + s.fn_, s.positives, "{method}");
        assert!(s.fp <= negatives && s.tp >= 0 && s.fn_ >= 0, "{method}: {s:?}");
        if let Some(p) = s.precision {
            assert!((p - s.tp as f64 / (s.tp + s.fp) as f64).abs() < 1e-12, "{method}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

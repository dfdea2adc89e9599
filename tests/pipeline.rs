//! End-to-end tests of the `pipeline` binary: the README's main command on
//! the bundled sample crawl, every table checked against its schema file,
//! the ingest accounting, determinism across thread counts, stage reruns,
//! the HTML report, and a run over all the real crawl files in
//! `../shared/data/warc`.

use arrow::array::{AsArray, RecordBatch};
use arrow::datatypes::UInt64Type;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::path::{Path, PathBuf};
use std::process::Command;

fn pipeline() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pipeline"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn temp_out(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("neardup-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Every batch of a table, part files in name order.
fn read_table(out: &Path, table: &str) -> Vec<RecordBatch> {
    let mut parts: Vec<PathBuf> = std::fs::read_dir(out.join(table))
        .unwrap_or_else(|e| panic!("table {table}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    parts.sort();
    let mut batches = Vec::new();
    for p in parts {
        let reader = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&p).unwrap())
            .unwrap()
            .build()
            .unwrap();
        batches.extend(reader.map(|b| b.unwrap()));
    }
    batches
}

fn rows(out: &Path, table: &str) -> usize {
    read_table(out, table).iter().map(|b| b.num_rows()).sum()
}

fn u64_column(out: &Path, table: &str, col: &str) -> Vec<u64> {
    read_table(out, table)
        .iter()
        .flat_map(|b| b.column_by_name(col).unwrap().as_primitive::<UInt64Type>().values().to_vec())
        .collect()
}

fn run_ok(args: &[&str]) {
    let status = pipeline().args(args).status().unwrap();
    assert!(status.success(), "pipeline {args:?} exited with {status}");
}

/// Checks every published table's Parquet schema against `schemas/`.
fn check_schemas(out: &Path) {
    for entry in std::fs::read_dir(out).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if !entry.path().is_dir() || name.starts_with('_') || name.starts_with('.') {
            continue;
        }
        let part = std::fs::read_dir(entry.path()).unwrap().next().expect("a part file").unwrap().path();
        let builder = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&part).unwrap()).unwrap();
        let diffs = neardup::schema::schema_differences(&name, builder.schema());
        assert!(diffs.is_empty(), "{diffs:?}");
    }
}

/// The page without its stage-timings section, whose wall and CPU seconds
/// differ from run to run.
fn without_timings(html: &str) -> String {
    let start = html.find("<section id=\"timings\">").expect("a timings section");
    let end = start + html[start..].find("</section>").expect("the end of the timings section");
    format!("{}{}", &html[..start], &html[end..])
}

/// What `run` must write as `report.html`: both charts, every method, the
/// document count, and nothing that runs code or loads from the network.
fn check_report(out: &Path) -> String {
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html after a run");
    assert!(html.contains("<svg") && html.contains(r#"aria-label="Precision, recall and F1 per method""#));
    assert!(html.contains(r#"aria-label="Dice overlap between methods""#));
    for method in neardup::config::ALL_METHODS {
        assert!(html.contains(&format!("<tr><td>{method}</td>")), "method {method} missing from the report");
    }
    let documents =
        format!(r#"<span class="value">{}</span><span class="label">documents</span>"#, rows(out, "documents"));
    assert!(html.contains(&documents), "{documents}");
    let lower = html.to_lowercase();
    assert!(!lower.contains("<script"));
    for attribute in ["src=", "href=", "url(http", "@import"] {
        assert!(!lower.contains(attribute), "report uses {attribute}");
    }
    html
}

/// The ingest accounting: per file, records = documents + revisits +
/// rejects + skipped, and the tables hold exactly those rows.
fn check_ingest_accounting(out: &Path) {
    let files = read_table(out, "ingest_files");
    let col = |name: &str| -> u64 {
        files.iter().map(|b| b.column_by_name(name).unwrap().as_primitive::<UInt64Type>().values().iter().sum::<u64>()).sum()
    };
    for b in &files {
        let get = |n: &str| b.column_by_name(n).unwrap().as_primitive::<UInt64Type>().clone();
        let (r, d, v, j, s) = (get("records"), get("documents"), get("revisits"), get("rejects"), get("skipped"));
        for i in 0..b.num_rows() {
            assert_eq!(r.value(i), d.value(i) + v.value(i) + j.value(i) + s.value(i), "row {i} of ingest_files");
        }
    }
    assert_eq!(col("documents") as usize, rows(out, "documents"));
    assert_eq!(col("revisits") as usize, rows(out, "revisits"));
    assert_eq!(col("rejects") as usize, rows(out, "rejects"));
    let mut ids = u64_column(out, "documents", "doc_id");
    let n = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), n, "doc_id must be unique in documents");
}

#[test]
fn sample_data_all_stages_deterministic_and_schema_conformant() {
    let out1 = temp_out("sample-1");
    let out2 = temp_out("sample-2");
    run_ok(&["--quiet", "run", "--out", out1.to_str().unwrap(), "--threads", "2"]);
    run_ok(&["--quiet", "run", "--out", out2.to_str().unwrap(), "--threads", "1"]);
    check_schemas(&out1);
    check_ingest_accounting(&out1);
    assert!(rows(&out1, "documents") > 100);
    for table in [
        "documents", "tokens", "df", "signatures", "method_state", "sketches", "shingles", "a12_records",
        "spotsigs", "method_pairs", "candidates", "hot_signatures", "duplicates", "clusters",
        "method_quality", "method_overlap",
    ] {
        assert_eq!(read_table(&out1, table), read_table(&out2, table), "table {table} differs between 2 and 1 threads");
    }
    // Every method has a quality row.
    assert_eq!(rows(&out1, "method_quality"), neardup::config::ALL_METHODS.len());
    // The report is written by `run` and, timings aside, the same for both runs.
    let report = check_report(&out1);
    assert_eq!(without_timings(&report), without_timings(&check_report(&out2)));
    // A second run skips every stage (manifests match) and changes nothing,
    // the report included (its timings come from the unchanged manifests).
    let before = std::fs::read_to_string(out1.join("_manifests/verify.json")).unwrap();
    run_ok(&["--quiet", "run", "--out", out1.to_str().unwrap()]);
    assert_eq!(before, std::fs::read_to_string(out1.join("_manifests/verify.json")).unwrap());
    assert_eq!(report, std::fs::read_to_string(out1.join("report.html")).unwrap());
    // `pipeline report` alone writes the same page.
    std::fs::remove_file(out1.join("report.html")).unwrap();
    run_ok(&["--quiet", "report", "--out", out1.to_str().unwrap()]);
    assert_eq!(report, std::fs::read_to_string(out1.join("report.html")).unwrap());
    // Analysts' entry point.
    let q = pipeline()
        .args(["query", "--out", out1.to_str().unwrap(), "--format", "csv", "SELECT COUNT(*) AS n FROM documents"])
        .output()
        .unwrap();
    assert!(q.status.success());
    assert_eq!(String::from_utf8_lossy(&q.stdout).trim(), format!("n\n{}", rows(&out1, "documents")));
    let _ = std::fs::remove_dir_all(&out1);
    let _ = std::fs::remove_dir_all(&out2);
}

#[test]
fn a_stage_alone_names_its_missing_input_table() {
    let out = temp_out("missing");
    let o = pipeline().args(["--quiet", "run", "--stage", "signatures", "--out", out.to_str().unwrap()]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("`tokens`") && err.contains("--stage tokens"), "{err}");
    let o = pipeline().args(["--quiet", "run", "--stage", "nonsense"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn report_of_a_folder_without_tables_says_not_run() {
    let out = temp_out("report-empty");
    std::fs::create_dir_all(&out).unwrap();
    run_ok(&["--quiet", "report", "--out", out.to_str().unwrap()]);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for table in ["method_quality", "method_overlap", "clusters", "rejects"] {
        assert!(html.contains(&format!("not run (no table <code>{table}</code> yet)")), "{table}");
    }
    let o = pipeline().args(["--quiet", "report", "--out", out.join("nowhere").to_str().unwrap()]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn real_crawl_files_all_stages() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/warc");
    if !Path::new(data).is_dir() {
        eprintln!("skipped: {data} is not there");
        return;
    }
    let out = temp_out("real");
    let status = pipeline().args(["--quiet", "run", "--input", data, "--out", out.to_str().unwrap()]).status().unwrap();
    // 0, or 3 when a file could not be read at all; never a crash.
    assert!(matches!(status.code(), Some(0) | Some(3)), "{status}");
    check_schemas(&out);
    check_ingest_accounting(&out);
    assert!(rows(&out, "documents") > 500);
    assert!(rows(&out, "revisits") > 100);
    assert!(rows(&out, "duplicates") > 0);
    check_report(&out);
    let _ = std::fs::remove_dir_all(&out);
}

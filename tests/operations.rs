//! What a scheduler and an operator see: `pipeline status` and its exit
//! code, log lines in a pipe (no colour; JSON lines with
//! `--log-format json`), the end-of-run summary, and `query` results saved
//! as files.

use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::Value;
use std::path::Path;

mod common;
use common::{pipeline, run_ok, temp_dir};

/// `pipeline status --format json` for `out` with `extra` options: the exit
/// code and one JSON object per stage.
fn status(out: &Path, extra: &[&str]) -> (Option<i32>, Vec<Value>) {
    let o =
        pipeline().args(["status", "--out", out.to_str().unwrap(), "--format", "json"]).args(extra).output().unwrap();
    let lines = String::from_utf8_lossy(&o.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    (o.status.code(), lines)
}

/// The line of `stage`.
fn line<'a>(lines: &'a [Value], stage: &str) -> &'a Value {
    lines.iter().find(|l| l["stage"] == stage).unwrap_or_else(|| panic!("no line for {stage}: {lines:?}"))
}

/// The reasons of a stale line, joined.
fn reasons(line: &Value) -> String {
    line["reasons"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect::<Vec<_>>().join("; ")
}

#[test]
fn status_tells_what_a_run_would_redo_and_why() {
    let scratch = temp_dir("status");
    let out = scratch.join("out");
    let crawl = scratch.join("crawl");
    std::fs::create_dir_all(&crawl).unwrap();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/sample-crawl.warc.gz");
    std::fs::copy(&sample, crawl.join("night.warc.gz")).unwrap();
    let input = crawl.to_str().unwrap();
    let o = out.to_str().unwrap();

    // Nothing yet: every stage missing, exit 1.
    let (code, lines) = status(&out, &["--input", input]);
    assert_eq!(code, Some(1));
    assert_eq!(lines.len(), neardup::stages::all().len());
    assert!(lines.iter().all(|l| l["state"] == "missing" && l["reason"] == "never ran"), "{lines:?}");

    // One task of two of ingest: tasks missing, named.
    run_ok(&["--quiet", "run", "--stage", "ingest", "--shard", "1/2", "--input", input, "--out", o]);
    let (code, lines) = status(&out, &["--input", input]);
    assert_eq!(code, Some(1));
    assert_eq!(line(&lines, "ingest")["state"], "tasks_missing");
    assert_eq!(line(&lines, "ingest")["missing"], serde_json::json!([0]));

    // A whole run: everything up to date, exit 0, rows and time recorded.
    run_ok(&["--quiet", "run", "--input", input, "--out", o]);
    let (code, lines) = status(&out, &["--input", input]);
    assert_eq!(code, Some(0), "{lines:?}");
    assert!(lines.iter().all(|l| l["state"] == "up_to_date"), "{lines:?}");
    let ingest = line(&lines, "ingest");
    assert!(ingest["rows"]["documents"].as_u64().unwrap() > 0, "{ingest}");
    assert!(ingest["ran_at_unix"].as_u64().unwrap() > 1_700_000_000);
    assert_eq!(ingest["tasks"], 1);

    // Another setting: verify is stale for it, evaluate because of verify;
    // nothing before verify.
    let config = scratch.join("job.toml");
    std::fs::write(&config, "[verify]\nthreshold = 0.9\n").unwrap();
    let (code, lines) = status(&out, &["--input", input, "--config", config.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert_eq!(reasons(line(&lines, "verify")), "config changed: verify.threshold");
    assert_eq!(reasons(line(&lines, "evaluate")), "stage verify is not up to date");
    assert_eq!(line(&lines, "candidates")["state"], "up_to_date");

    // A changed input file: ingest is stale and names it; every later stage
    // follows.
    let file = std::fs::OpenOptions::new().append(true).open(crawl.join("night.warc.gz")).unwrap();
    file.set_modified(std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000)).unwrap();
    drop(file);
    let (code, lines) = status(&out, &["--input", input]);
    assert_eq!(code, Some(1));
    let why = reasons(line(&lines, "ingest"));
    assert!(why.starts_with("input files changed: ") && why.ends_with("night.warc.gz changed"), "{why}");
    assert!(lines[1..].iter().all(|l| l["state"] == "stale"), "{lines:?}");

    // A table removed by hand: its stage is missing it.
    std::fs::remove_dir_all(out.join("duplicates")).unwrap();
    let (_, lines) = status(&out, &["--input", input]);
    assert_eq!(line(&lines, "verify")["state"], "missing");
    assert_eq!(line(&lines, "verify")["reason"], "table `duplicates` is gone");

    // The table form has one line per stage under a header.
    let o = pipeline().args(["status", "--out", o, "--input", input]).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.starts_with("stage "), "{text}");
    assert_eq!(text.lines().count(), neardup::stages::all().len() + 1, "{text}");
    assert!(text.lines().any(|l| l.starts_with("verify ") && l.contains("missing")), "{text}");

    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn logs_in_a_pipe_are_plain_or_json_lines_with_a_summary() {
    let scratch = temp_dir("logs");
    let out = scratch.join("out");
    let o = out.to_str().unwrap();

    // Text: stderr is a pipe here, so no ANSI escapes; a summary per stage.
    let run = pipeline().args(["run", "--stage", "ingest", "--out", o]).output().unwrap();
    assert!(run.status.success());
    let text = String::from_utf8_lossy(&run.stderr);
    assert!(!text.contains('\u{1b}'), "{text}");
    assert!(
        text.lines().any(|l| l.contains("summary") && l.contains("stage=\"ingest\"") && l.contains("rows=documents=")),
        "{text}"
    );

    // JSON: every line one object with the documented keys; the stage's own
    // lines name it; the summary carries numbers.
    let run = pipeline().args(["--log-format", "json", "run", "--stage", "blocks", "--out", o]).output().unwrap();
    assert!(run.status.success());
    let lines: Vec<Value> = String::from_utf8_lossy(&run.stderr)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(!lines.is_empty());
    for l in &lines {
        for key in ["time", "level", "stage", "message", "target", "fields"] {
            assert!(l.get(key).is_some(), "{key} missing: {l}");
        }
        assert!(l["time"].as_str().unwrap().ends_with('Z'), "{l}");
    }
    let summary = lines.iter().find(|l| l["message"] == "summary").unwrap();
    assert_eq!(summary["stage"], "blocks");
    assert_eq!(summary["level"], "info");
    assert_eq!(summary["fields"]["outcome"], "ran");
    assert!(summary["fields"]["cpu_seconds"].is_number(), "{summary}");
    assert!(lines.iter().any(|l| l["stage"] == "blocks" && l["message"] == "running"), "{lines:?}");

    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn query_saves_results_as_parquet_and_csv_files() {
    let scratch = temp_dir("query-output");
    let out = scratch.join("out");
    let o = out.to_str().unwrap();
    run_ok(&["--quiet", "run", "--stage", "ingest", "--out", o]);
    let sql = "SELECT doc_id, url FROM documents ORDER BY doc_id";

    let file = scratch.join("docs.parquet");
    run_ok(&["query", "--out", o, "--format", "parquet", "--output", file.to_str().unwrap(), sql]);
    let reader = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&file).unwrap()).unwrap();
    let names: Vec<String> = reader.schema().fields().iter().map(|f| f.name().clone()).collect();
    assert_eq!(names, ["doc_id", "url"]);
    let rows: usize = reader.build().unwrap().map(|b| b.unwrap().num_rows()).sum();

    let csv = scratch.join("docs.csv");
    run_ok(&["query", "--out", o, "--format", "csv", "--output", csv.to_str().unwrap(), sql]);
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("doc_id,url\n"));
    assert!(rows > 0);
    assert_eq!(text.lines().count(), rows + 1);

    // Parquet needs a file to go to.
    let q = pipeline().args(["query", "--out", o, "--format", "parquet", sql]).output().unwrap();
    assert_eq!(q.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&q.stderr).contains("--output"));

    let _ = std::fs::remove_dir_all(&scratch);
}

/// A missing input path, or inputs without a file to read, is a usage
/// error before any stage runs (nothing written); a run that could not
/// read an input ends with exit 3, and so does its rerun, though every
/// stage is then up to date.
#[test]
fn input_mistakes_stop_early_and_exit_3_sticks() {
    let scratch = temp_dir("inputs");
    let out = scratch.join("out");
    let o = out.to_str().unwrap();
    let missing = scratch.join("no-such-crawl");
    let run = pipeline().args(["run", "--input", missing.to_str().unwrap(), "--out", o]).output().unwrap();
    assert_eq!(run.status.code(), Some(2), "{}", String::from_utf8_lossy(&run.stderr));
    assert!(String::from_utf8_lossy(&run.stderr).contains("no such file or folder"));
    assert!(!out.exists(), "nothing may be written");
    let empty = scratch.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("notes.txt"), "not a crawl").unwrap();
    let run = pipeline().args(["run", "--input", empty.to_str().unwrap(), "--out", o]).output().unwrap();
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("no file to read"));

    // Two files that go by the same name: the second is not read (exit 3).
    let sample = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/sample-crawl.warc.gz");
    for dir in ["a", "b"] {
        std::fs::create_dir_all(scratch.join(dir)).unwrap();
        std::fs::copy(&sample, scratch.join(dir).join("crawl.warc.gz")).unwrap();
    }
    let (a, b) = (scratch.join("a"), scratch.join("b"));
    let args = ["--quiet", "run", "--methods", "a0", "--input", a.to_str().unwrap(), "--input", b.to_str().unwrap()];
    let first = pipeline().args(args).args(["--out", o]).output().unwrap();
    assert_eq!(first.status.code(), Some(3), "{}", String::from_utf8_lossy(&first.stderr));
    let again = pipeline().args(args).args(["--out", o]).output().unwrap();
    assert_eq!(again.status.code(), Some(3), "{}", String::from_utf8_lossy(&again.stderr));
    assert!(String::from_utf8_lossy(&again.stderr).contains("goes by the same name"));

    // The outcome on stdout, one line, the same both times; its numbers
    // add up to the documents.
    let line = String::from_utf8(first.stdout).unwrap();
    assert_eq!(line, String::from_utf8(again.stdout).unwrap());
    assert_eq!(line.lines().count(), 1, "{line}");
    let numbers: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|w| !w.is_empty())
        .take(6)
        .map(|w| w.parse().unwrap())
        .collect();
    let [documents, kept, removed, exact, near, _clusters] = numbers[..] else { panic!("{line}") };
    assert!(documents > 0 && removed > 0, "{line}");
    assert_eq!((kept + removed, exact + near), (documents, removed), "{line}");
    assert!(line.contains("report: "), "{line}");
    let _ = std::fs::remove_dir_all(&scratch);
}

/// A run of one method writes only the lists of `tokens` and the `df` it
/// reads; a stage rerun alone with a method that reads more stops with
/// what to rerun instead of signing with nothing, and `--stage all` with
/// the new methods reruns `tokens` and `stats` and fills them.
#[test]
fn a_one_method_run_writes_what_its_method_reads_and_says_what_to_rerun() {
    let out = common::temp_dir("one-method-lists");
    let out_arg = out.to_str().unwrap();
    common::run_ok(&["--quiet", "run", "--methods", "minhash", "--out", out_arg]);
    let nulls = |table: &str, column: &str| -> usize {
        common::read_table(&out, table).iter().map(|b| b.column_by_name(column).unwrap().null_count()).sum()
    };
    let rows = |table: &str| -> usize { common::read_table(&out, table).iter().map(|b| b.num_rows()).sum() };
    let docs = rows("tokens");
    assert!(docs > 0);
    assert_eq!(nulls("tokens", "words"), docs, "min-hash reads no words");
    assert_eq!(nulls("tokens", "sentence_lengths"), docs);
    assert_eq!(nulls("tokens", "terms"), 0);
    assert_eq!(rows("df"), 0, "min-hash reads no term statistics");

    for (methods, stage, says) in [
        ("minhash,spotsigs", "search", "tokens.words was not written"),
        ("minhash,slst", "search", "tokens.sentence_lengths was not written"),
        ("minhash,a1", "signatures", "table df is empty"),
    ] {
        let o = common::pipeline()
            .args(["--quiet", "run", "--stage", stage, "--methods", methods, "--out", out_arg])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{methods}: {stderr}");
        assert!(stderr.contains(says) && stderr.contains("--stage all"), "{methods}: {stderr}");
    }

    common::run_ok(&["--quiet", "run", "--methods", "minhash,spotsigs,slst,a1", "--out", out_arg]);
    assert_eq!(nulls("tokens", "words"), 0);
    assert_eq!(nulls("tokens", "sentence_lengths"), 0);
    assert!(rows("df") > 0);
    let _ = std::fs::remove_dir_all(&out);
}

/// A run killed by `kill -9` cannot remove its spill folder and unpublished
/// tables; the next run of the folder removes them once it holds a lock,
/// and only those of processes that no longer run (issue 56, item 7).
#[test]
fn the_next_run_removes_what_killed_runs_left() {
    let scratch = temp_dir("leftovers");
    let out = scratch.join("out");
    let crawl = scratch.join("crawl");
    std::fs::create_dir_all(&crawl).unwrap();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/sample-crawl.warc.gz");
    std::fs::copy(&sample, crawl.join("night.warc.gz")).unwrap();
    let run =
        ["--quiet", "run", "--stage", "ingest", "--input", crawl.to_str().unwrap(), "--out", out.to_str().unwrap()];
    run_ok(&run);
    // What a killed run leaves, for a process that has ended and for one
    // that runs (this test).
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let alive = std::process::id();
    let left = |pid: u32| {
        [
            out.join(format!("_spill/{pid}/0-texts.spill")),
            out.join(format!(".tmp-documents-0-of-1-{pid}/part-0-of-1-x.parquet")),
            out.join(format!("_manifests/.ingest.json.tmp-{pid}")),
        ]
    };
    for path in left(dead).iter().chain(&left(alive)) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }
    run_ok(&run);
    for path in left(dead) {
        assert!(!path.exists(), "{} is left", path.display());
    }
    assert!(
        !out.join(format!("_spill/{dead}")).exists() && !out.join(format!(".tmp-documents-0-of-1-{dead}")).exists()
    );
    for path in left(alive) {
        assert!(path.exists(), "{} of a live process was removed", path.display());
    }
}

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

    // A whole run, its input named relatively: for the same crawl named by
    // its absolute path everything is up to date, exit 0, rows and time
    // recorded (an input was known by its spelling: everything was stale).
    // Its log and summary are checked by the next function.
    let whole = pipeline()
        .current_dir(&scratch)
        .env(PROGRESS_SECONDS, "0")
        .args(["--log-format", "json", "run", "--input", "crawl", "--out", o])
        .output()
        .unwrap();
    assert!(whole.status.success(), "{}", stderr(&whole));
    a_json_run_says_where_it_is_and_what_it_removed(&out, &whole);
    let (code, lines) = status(&out, &["--input", input]);
    assert_eq!(code, Some(0), "{lines:?}");
    assert!(lines.iter().all(|l| l["state"] == "up_to_date"), "{lines:?}");
    let ingest = line(&lines, "ingest");
    assert!(ingest["rows"]["documents"].as_u64().unwrap() > 0, "{ingest}");
    assert!(ingest["ran_at_unix"].as_u64().unwrap() > 1_700_000_000);
    assert_eq!(ingest["tasks"], 1);

    // Without --input, status judges the run against its own inputs, not
    // the sample (it called everything stale, exit 1).
    let (code, lines) = status(&out, &[]);
    assert_eq!(code, Some(0), "{lines:?}");

    // Through a link, with `./`: a run reruns no stage (all of them reran).
    let link = scratch.join("link");
    std::os::unix::fs::symlink(&crawl, &link).unwrap();
    let linked = format!("{}/./", link.display());
    let again = pipeline().args(["--log-format", "json", "run", "--input", &linked, "--out", o]).output().unwrap();
    assert!(again.status.success(), "{}", stderr(&again));
    let outcomes: Vec<String> = String::from_utf8_lossy(&again.stderr)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["message"] == "summary")
        .map(|l| format!("{} {}", l["stage"], l["fields"]["outcome"]))
        .collect();
    assert_eq!(outcomes.len(), neardup::stages::all().len(), "{outcomes:?}");
    assert!(outcomes.iter().all(|o| o.ends_with("\"up to date\"")), "{outcomes:?}");

    // The export finds the run's files under the crawl named otherwise, and
    // in a list (`--input @FILE` said "no such file or folder").
    let list = scratch.join("inputs.txt");
    std::fs::write(&list, format!("# the crawl, through the link\n{linked}\n")).unwrap();
    let mut written = Vec::new();
    for (to, given) in [("by-link", linked.clone()), ("by-list", format!("@{}", list.display()))] {
        let to = scratch.join(to);
        let args = ["export", "--out", o, "--to", to.to_str().unwrap(), "--format", "warc", "--input", &given];
        let export = pipeline().args(args).output().unwrap();
        assert!(export.status.success(), "{given}: {}", stderr(&export));
        written.push(std::fs::read(to.join("kept.warc.gz")).unwrap());
    }
    assert!(!written[0].is_empty());
    assert_eq!(written[0], written[1]);

    // Another setting: verify and place are stale for it, evaluate because
    // of both; nothing before verify.
    let config = scratch.join("job.toml");
    std::fs::write(&config, "[verify]\nthreshold = 0.9\n").unwrap();
    let (code, lines) = status(&out, &["--input", input, "--config", config.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert_eq!(reasons(line(&lines, "verify")), "config changed: verify.threshold");
    assert_eq!(reasons(line(&lines, "place")), "stage verify is not up to date; config changed: verify.threshold");
    assert_eq!(reasons(line(&lines, "evaluate")), "stage place is not up to date; stage verify is not up to date");
    assert_eq!(line(&lines, "candidates")["state"], "up_to_date");

    // The keep rule: every stage that ranks by it names it alike (tokens
    // said `keep`, the others `dedup.keep`).
    std::fs::write(&config, "[dedup]\nkeep = \"longest-text\"\n").unwrap();
    let (_, lines) = status(&out, &["--input", input, "--config", config.to_str().unwrap()]);
    for stage in ["tokens", "exact", "verify_pairs"] {
        assert!(reasons(line(&lines, stage)).ends_with("config changed: dedup.keep"), "{stage}: {lines:?}");
    }

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

/// The variable that sets the seconds between two progress lines of a
/// stage whose stderr is no terminal (0: every step, for the tests).
const PROGRESS_SECONDS: &str = "NEARDUP_PROGRESS_SECONDS";

/// `pipeline query --format csv` of `sql` over `out`: the first row's
/// fields as numbers.
fn query_numbers(out: &Path, sql: &str) -> Vec<u64> {
    let o = pipeline().args(["query", "--out", out.to_str().unwrap(), "--format", "csv", sql]).output().unwrap();
    assert!(o.status.success(), "{sql}: {}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let row = text.lines().nth(1).unwrap_or_else(|| panic!("{sql}: no row in {text}"));
    row.split(',').map(|f| f.parse().unwrap_or_else(|e| panic!("{sql}: {f}: {e}"))).collect()
}

/// What a whole run under `--log-format json` (progress every step) said
/// (issue 71, items 1 and 4): each stage's lines carry its place in the
/// run, `[k/n]` and as numbers; a long stage without a terminal logs its
/// progress, verify's moving within its one batch of documents; the rows
/// are objects of numbers; and stdout's summary is one JSON object whose
/// counts are those of `decisions`, with the bytes of HTML and the
/// characters of text removed, which the report shows too.
fn a_json_run_says_where_it_is_and_what_it_removed(out: &Path, run: &std::process::Output) {
    let lines: Vec<Value> = String::from_utf8_lossy(&run.stderr)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let stages = neardup::stages::all();
    let running: Vec<&Value> = lines.iter().filter(|l| l["message"].as_str().unwrap().ends_with("] running")).collect();
    assert_eq!(running.len(), stages.len(), "{running:?}");
    for (k, (line, stage)) in running.iter().zip(&stages).enumerate() {
        let place = format!("[{}/{}] running", k + 1, stages.len());
        assert_eq!(line["message"], place.as_str(), "{line}");
        assert_eq!(line["stage"], stage.name());
        assert_eq!(line["fields"]["stage_number"], k + 1);
        assert_eq!(line["fields"]["stage_count"], stages.len());
    }
    let done = lines.iter().find(|l| l["stage"] == "decide" && l["message"].as_str().unwrap().ends_with("] done"));
    let done = done.unwrap_or_else(|| panic!("no done line of decide: {lines:?}"));
    assert!(done["fields"]["rows"]["decisions"].as_u64().unwrap() > 0, "{done}");
    assert!(done["fields"]["seconds"].is_number(), "{done}");

    // Verify counts each document as it is compared: its one batch (the
    // sample is far below 4,096 documents) logs more than one step.
    let progress: Vec<u64> = lines
        .iter()
        .filter(|l| l["stage"] == "verify" && l["message"].as_str().unwrap().starts_with("progress: "))
        .map(|l| l["fields"]["done"].as_u64().unwrap())
        .collect();
    assert!(progress.len() > 1 && progress.windows(2).any(|w| w[0] < w[1]), "{progress:?}");
    assert!(lines.iter().any(|l| l["stage"] == "ingest" && l["fields"]["unit"] == "bytes"), "{lines:?}");

    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let summary: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let counts = query_numbers(
        out,
        "SELECT COUNT(*), SUM(CASE WHEN is_kept THEN 1 ELSE 0 END), SUM(CASE WHEN is_kept THEN 0 ELSE 1 END), \
         SUM(CASE WHEN reason = 'exact_duplicate' THEN 1 ELSE 0 END), \
         SUM(CASE WHEN reason = 'near_duplicate' THEN 1 ELSE 0 END), SUM(CASE WHEN reason = 'kept' THEN 1 ELSE 0 END), \
         SUM(CASE WHEN reason = 'unique' THEN 1 ELSE 0 END), SUM(CASE WHEN reason = 'not_content' THEN 1 ELSE 0 END) \
         FROM decisions",
    );
    let names = ["documents", "kept", "removed", "exact", "near", "clusters", "unique", "not_content"];
    for (name, count) in names.iter().zip(&counts) {
        assert_eq!(summary[name].as_u64(), Some(*count), "{name}: {summary}");
    }
    assert!(counts[2] > 0, "the sample has duplicates: {summary}");
    assert_eq!(summary["repeats"], Value::Null);
    let ingest = query_numbers(
        out,
        "SELECT (SELECT COUNT(*) FROM rejects) AS rejects, (SELECT COUNT(*) FROM revisits) AS revisits",
    );
    assert_eq!((summary["rejects"].as_u64(), summary["revisits"].as_u64()), (Some(ingest[0]), Some(ingest[1])));
    // The bytes and characters removed, summed again another way.
    let removed = query_numbers(
        out,
        "SELECT SUM(raw_bytes), SUM(character_length(text)) FROM documents \
         WHERE doc_id IN (SELECT doc_id FROM decisions WHERE NOT is_kept)",
    );
    assert_eq!(
        (summary["bytes_removed"].as_u64(), summary["chars_removed"].as_u64()),
        (Some(removed[0]), Some(removed[1]))
    );
    assert!(removed[0] > 0 && removed[1] > 0, "{summary}");
    // The length ingest stores is the one SQL counts (the keep order and
    // the sum above read the stored one).
    let lengths = query_numbers(
        out,
        "SELECT COUNT(*), SUM(CASE WHEN text_chars = character_length(text) THEN 1 ELSE 0 END), \
         SUM(CASE WHEN text_chars > octet_length(text) THEN 1 ELSE 0 END) FROM documents",
    );
    assert_eq!(lengths[1], lengths[0], "documents.text_chars differs from character_length(text)");
    assert_eq!(lengths[2], 0);
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert_eq!(summary["report"], out.join("report.html").to_str().unwrap());
    let card = format!(
        "<span class=\"value\">{}</span><span class=\"label\">bytes of HTML removed",
        neardup::report::html::grouped(removed[0] as i64)
    );
    assert!(report.contains(&card), "{card}");
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
        text.lines()
            .any(|l| l.contains("summary") && l.contains("stage=\"ingest\"") && l.contains("rows={\"documents\":")),
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
    assert!(summary["fields"]["rows"]["blocks"].is_u64(), "{summary}");
    // One stage asked for: it is the run's only one.
    let running = lines.iter().find(|l| l["stage"] == "blocks" && l["message"] == "[1/1] running");
    assert_eq!(running.unwrap_or_else(|| panic!("{lines:?}"))["fields"]["stage_count"], 1);

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
        ("minhash,spotsigs", "search_keys", "tokens.words was not written"),
        ("minhash,slst", "search_keys", "tokens.sentence_lengths was not written"),
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

/// The stderr of a finished command.
fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Takes the run lock of the output folder `out` (`_locks/run`) as a
/// whole run takes it: an exclusive `flock(2)`, its holder (this process)
/// written in the file. Released when the file is dropped.
fn hold_the_run_lock(out: &Path) -> std::fs::File {
    use std::os::fd::AsRawFd;
    let path = out.join("_locks/run");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).unwrap();
    // SAFETY: flock(2) on a descriptor this function owns.
    assert_eq!(unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) }, 0);
    let me = neardup::tables::lock::Holder {
        host: neardup::tables::lock::host_name(),
        pid: std::process::id(),
        started_at_unix: 0,
        task: "a run".into(),
        heartbeat_unix: 0,
    };
    std::fs::write(&path, serde_json::to_string(&me).unwrap()).unwrap();
    file
}

/// A run queued with `--wait` behind a running one never makes it fail:
/// it waits on the output folder's run lock, taken before any stage's, so
/// it cannot take a stage's lock between two stages of the running run
/// (which then stopped with exit 4, "stage stats is running in another
/// run"). First with this test holding the folder as a run does, then with
/// two real runs.
#[test]
fn a_queued_run_waits_for_the_whole_running_run_and_never_fails_it() {
    let scratch = temp_dir("queued-run");
    let out = scratch.join("out");
    let o = out.to_str().unwrap();
    let args = ["run", "--methods", "a0,minhash", "--out", o];
    run_ok(&args);

    // This test holds the folder's run lock as a running run does (an
    // exclusive flock on `_locks/run`, naming its holder): a queued run
    // takes no stage lock meanwhile.
    let held = hold_the_run_lock(&out);
    let refused = pipeline().args(args).output().unwrap();
    assert_eq!(refused.status.code(), Some(i32::from(neardup::tables::lock::EXIT_BUSY)), "{}", stderr(&refused));
    assert!(stderr(&refused).contains(&format!("pid {}", std::process::id())), "{}", stderr(&refused));
    let mut queued = pipeline().args(args).arg("--wait").stderr(std::process::Stdio::piped()).spawn().unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_millis(1500);
    while std::time::Instant::now() < until {
        assert!(queued.try_wait().unwrap().is_none(), "the queued run went ahead while the folder was held");
        for entry in std::fs::read_dir(out.join("_locks")).unwrap().flatten() {
            let holder = neardup::tables::lock::read_holder(&entry.path());
            assert!(holder.is_none_or(|h| h.pid != queued.id()), "the queued run took {}", entry.path().display());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(held);
    let o2 = queued.wait_with_output().unwrap();
    assert!(o2.status.success(), "{}", stderr(&o2));
    assert!(stderr(&o2).contains("waiting for it"), "{}", stderr(&o2));

    // Two real runs, the second queued while the first runs its stages.
    let log = scratch.join("first.log");
    let mut first = pipeline().args(args).arg("--force").stderr(std::fs::File::create(&log).unwrap()).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let second = pipeline().args(args).arg("--wait").output().unwrap();
    let status = first.wait().unwrap();
    assert!(status.success(), "the running run failed: {}", std::fs::read_to_string(&log).unwrap());
    assert!(second.status.success(), "{}", stderr(&second));
    let _ = std::fs::remove_dir_all(&scratch);
}

/// A file none of whose records became a document, a revisit or a skipped
/// record is an input error: the run completes, exits 3, and names the file
/// and why on stderr (it exited 0 with "0 documents").
#[test]
fn a_file_that_is_no_crawl_is_an_input_error() {
    let scratch = temp_dir("no-crawl");
    let fake = scratch.join("fake.warc.gz");
    std::fs::write(&fake, "hi\n").unwrap();
    let out = scratch.join("out");
    let o =
        pipeline().args(["run", "--input", fake.to_str().unwrap(), "--out", out.to_str().unwrap()]).output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("fake.warc.gz: none of its 1 records became a document") && err.contains("malformed_record"),
        "{err}"
    );
    assert!(out.join("decisions").exists(), "the run completes");
    // Beside a real crawl, the real one is read and the run still says so.
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/sample-crawl.warc.gz");
    std::fs::copy(sample, scratch.join("sample.warc.gz")).unwrap();
    let o = pipeline()
        .args([
            "--quiet",
            "run",
            "--stage",
            "ingest",
            "--input",
            scratch.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("fake.warc.gz") && !stderr(&o).contains("sample.warc.gz"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&scratch);
}

/// `query` and `explain` with a mistyped `--out` are usage errors naming
/// the folder, as `report` and `export` are (they exited 1 with "table
/// 'datafusion.public.documents' not found").
#[test]
fn query_and_explain_name_a_mistyped_output_folder() {
    let scratch = temp_dir("mistyped-out");
    let typo = scratch.join("ouy");
    let t = typo.to_str().unwrap();
    for args in [vec!["query", "--out", t, "SELECT * FROM documents"], vec!["explain", "--out", t, "1"]] {
        let o = pipeline().args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(&format!("--out {t}: not an output folder")), "{args:?}: {}", stderr(&o));
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

/// JSON output keeps 64-bit ids whole: as strings, since JSON readers that
/// hold numbers as doubles (jq, JavaScript) round those above 2^53.
#[test]
fn json_output_writes_64_bit_ids_as_strings() {
    let scratch = temp_dir("json-ids");
    let sql = "SELECT arrow_cast(9007199254740993, 'UInt64') AS doc_id, \
               arrow_cast(18446744073709551615, 'UInt64') AS top, 3 AS n";
    let o = pipeline().args(["query", "--out", scratch.to_str().unwrap(), "--format", "json", sql]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "{\"doc_id\":\"9007199254740993\",\"top\":\"18446744073709551615\",\"n\":3}\n"
    );
    let _ = std::fs::remove_dir_all(&scratch);
}

/// `--help` shows `-v`, `-q` and `--log-format` under a heading of their
/// own, after the command's options, and `history match` names the keep
/// rule where it now is.
#[test]
fn help_keeps_global_options_apart_and_names_the_keep_rule_where_it_is() {
    let help = |args: &[&str]| String::from_utf8(pipeline().args(args).output().unwrap().stdout).unwrap();
    let run = help(&["run", "--help"]);
    let (own, global) = run.split_once("Global options:").unwrap_or_else(|| panic!("{run}"));
    assert!(own.contains("--stage") && !own.contains("--log-format") && !own.contains("--verbose"), "{run}");
    assert!(global.contains("--log-format") && global.contains("--verbose") && global.contains("--quiet"), "{run}");
    // Words only: the help wraps its lines.
    let matching = help(&["history", "match", "--help"]).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(matching.contains("[dedup] keep") && !matching.contains("[history] keep"), "{matching}");
}

/// `query --format csv` on a terminal escapes crawled control characters as
/// the table format does; into a pipe it writes them as they are.
#[test]
fn csv_on_a_terminal_escapes_control_characters() {
    use std::os::fd::FromRawFd;
    let scratch = temp_dir("csv-terminal");
    let sql = "SELECT concat('Rivers ', chr(27), '[31mRED') AS title";
    let args = ["query", "--out", scratch.to_str().unwrap(), "--format", "csv", sql];
    let piped = pipeline().args(args).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&piped.stdout), "title\nRivers \u{1b}[31mRED\n");

    let (mut leader, mut follower) = (0, 0);
    // SAFETY: openpty fills two descriptors of a new terminal pair.
    let opened =
        unsafe { libc::openpty(&mut leader, &mut follower, std::ptr::null_mut(), std::ptr::null(), std::ptr::null()) };
    assert_eq!(opened, 0);
    // SAFETY: both descriptors were just opened and are owned here alone.
    let (leader, follower) = unsafe { (std::fs::File::from_raw_fd(leader), std::fs::File::from_raw_fd(follower)) };
    let mut child = pipeline().args(args).stdout(follower).spawn().unwrap();
    assert!(child.wait().unwrap().success());
    // The terminal turns "\n" into "\r\n"; what matters is the escape.
    let mut text = Vec::new();
    let mut reader = leader;
    let mut buf = [0u8; 4096];
    loop {
        match std::io::Read::read(&mut reader, &mut buf) {
            Ok(n) if n > 0 => text.extend_from_slice(&buf[..n]),
            _ => break, // EIO once no process holds the other end
        }
    }
    let text = String::from_utf8_lossy(&text).replace("\r\n", "\n");
    assert_eq!(text, "title\nRivers \\x1b[31mRED\n");
    let _ = std::fs::remove_dir_all(&scratch);
}

/// `scripts/screenshot_report.sh` finds Debian's `chromium-headless-shell`
/// when there is no `chromium`, and says what to install when there is
/// neither (it exited 127 with no message).
#[test]
fn the_screenshot_script_finds_a_headless_chromium_or_says_what_to_install() {
    let scratch = temp_dir("screenshot");
    let out = scratch.join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("report.html"), "<p>report</p>").unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/screenshot_report.sh");
    let bin = scratch.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    // Only what the script needs besides a browser.
    for tool in ["bash", "realpath", "mktemp", "rm"] {
        let found = ["/usr/bin", "/bin"].iter().map(|d| Path::new(d).join(tool)).find(|p| p.exists()).unwrap();
        std::os::unix::fs::symlink(found, bin.join(tool)).unwrap();
    }
    let run =
        || std::process::Command::new(bin.join("bash")).arg(&script).arg(&out).env("PATH", &bin).output().unwrap();
    let o = run();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("chromium-headless-shell") && stderr(&o).contains("install"), "{}", stderr(&o));
    // A stand-in headless shell that writes the screenshot it is asked for.
    let fake = bin.join("chromium-headless-shell");
    std::fs::write(
        &fake,
        "#!/bin/bash\nfor a in \"$@\"; do case $a in --screenshot=*) echo png > \"${a#--screenshot=}\";; esac; done\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let o = run();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.join("report.png").is_file());
    let _ = std::fs::remove_dir_all(&scratch);
}

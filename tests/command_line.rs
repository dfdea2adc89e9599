//! What a new user meets first on the command line (issue 71): a reader
//! that closes the pipe, `pipeline` alone, and the query command's
//! messages and empty results.

mod common;

use common::*;
use std::path::Path;

/// `bash -c 'set -o pipefail; pipeline ARGS | READER'` from the crate root:
/// the exit code is `pipeline`'s unless the reader fails.
fn piped(args: &[&str], reader: &str) -> std::process::Output {
    let script = format!("set -o pipefail; \"$0\" \"$@\" {reader}");
    std::process::Command::new("bash")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_pipeline"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A reader that has what it wanted and closes the pipe (`| head`) ends
/// the command quietly, as it ends `cat`: a query stops with exit 0 and no
/// "Broken pipe" error; a run whose log goes to the pipe goes on to its
/// end without a panic (it exited 101), its tables written.
#[test]
fn a_closed_pipe_ends_commands_quietly() {
    let scratch = temp_dir("closed-pipe");
    let s = scratch.to_str().unwrap();
    // More than a pipe's buffer, so the write outlives `head`.
    let sql = "SELECT value, 'some text to fill the pipe' AS filler FROM generate_series(1, 20000)";
    let o = piped(&["query", "--out", s, "--format", "csv", sql], "| head -2");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "value,filler\n1,some text to fill the pipe\n");
    assert_eq!(text(&o.stderr), "");

    let out = scratch.join("out");
    let o = piped(&["run", "--stage", "ingest", "--out", out.to_str().unwrap()], "2>&1 | head -3");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    assert_eq!(text(&o.stdout).lines().count(), 3);
    assert!(table_names(&out).contains(&"documents".to_string()));
    let _ = std::fs::remove_dir_all(&scratch);
}

/// `pipeline` alone prints the help and exits 2 (it ran the whole pipeline
/// into `./out`, over an earlier result).
#[test]
fn pipeline_alone_prints_the_help_and_runs_nothing() {
    let scratch = temp_dir("bare");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_pipeline")).current_dir(&scratch).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let help = text(&o.stderr);
    assert!(help.contains("Usage: pipeline") && help.contains("Commands:") && help.contains("run"), "{help}");
    assert!(!scratch.join("out").exists());
    let _ = std::fs::remove_dir_all(&scratch);
}

fn query(out: &Path, args: &[&str]) -> std::process::Output {
    pipeline().args(["query", "--out", out.to_str().unwrap()]).args(args).output().unwrap()
}

/// An SQL error is said once; `SHOW TABLES` lists the tables; a wrong
/// table name gets the list of those there are; an empty result still
/// shows its header, as a table and as CSV.
#[test]
fn query_errors_once_shows_tables_and_prints_the_header_of_an_empty_result() {
    let scratch = temp_dir("query-messages");
    let out = scratch.join("out");
    run_ok(&["--quiet", "run", "--stage", "ingest", "--out", out.to_str().unwrap()]);

    let o = query(&out, &["SELECT nosuchcol FROM documents"]);
    assert_eq!(o.status.code(), Some(1));
    let error = text(&o.stderr);
    assert_eq!(error.matches("nosuchcol").count(), 1, "{error}");
    assert_eq!(error.lines().filter(|l| l.starts_with("error:")).count(), 1, "{error}");

    let o = query(&out, &["SHOW TABLES"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("documents"), "{}", text(&o.stdout));

    let o = query(&out, &["SELECT * FROM document"]);
    assert_eq!(o.status.code(), Some(1));
    let error = text(&o.stderr);
    assert!(error.contains("'datafusion.public.document' not found"), "{error}");
    assert!(error.contains("the tables of --out") && error.contains("documents, ingest_files"), "{error}");

    let empty = "SELECT doc_id, url FROM documents WHERE doc_id IS NULL";
    let o = query(&out, &[empty]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let table = text(&o.stdout);
    assert!(table.contains("| doc_id | url |"), "{table}");
    let o = query(&out, &["--format", "csv", empty]);
    assert_eq!(text(&o.stdout), "doc_id,url\n");
    let _ = std::fs::remove_dir_all(&scratch);
}

/// `--input @FILE` and `--input -` read the inputs from a list, one a line
/// (they said "no such file or folder"); without `--input`, away from the
/// sample, the error says the default is the sample and how to name a
/// crawl (it said "--input sample-data: no such file or folder").
#[test]
fn inputs_come_from_lists_and_a_missing_sample_says_how_to_name_a_crawl() {
    let scratch = temp_dir("input-lists");
    let list = scratch.join("nights.txt");
    std::fs::write(&list, "# the sample, relative to the current folder\n\nsample-data\n").unwrap();
    let from_file = scratch.join("from-file");
    let at = format!("@{}", list.display());
    run_ok(&["--quiet", "run", "--stage", "ingest", "--input", &at, "--out", from_file.to_str().unwrap()]);

    let from_stdin = scratch.join("from-stdin");
    let mut child = pipeline()
        .args(["--quiet", "run", "--stage", "ingest", "--input", "-", "--out", from_stdin.to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"sample-data\n").unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(canonical_rows(&from_file, "documents"), canonical_rows(&from_stdin, "documents"));
    assert!(!canonical_rows(&from_file, "documents").is_empty());

    std::fs::write(&list, "# nothing yet\n").unwrap();
    let o = pipeline().args(["run", "--input", &at, "--out", from_file.to_str().unwrap()]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("the list names no input"), "{}", text(&o.stderr));

    let elsewhere = std::process::Command::new(env!("CARGO_BIN_EXE_pipeline"))
        .args(["run", "--out", scratch.join("out").to_str().unwrap()])
        .current_dir(&scratch)
        .output()
        .unwrap();
    assert_eq!(elsewhere.status.code(), Some(2));
    let error = text(&elsewhere.stderr);
    assert!(error.contains("the sample crawl `sample-data/`") && error.contains("--input @list.txt"), "{error}");
    let _ = std::fs::remove_dir_all(&scratch);
}

/// A stage run alone on a folder without the tables it reads fails before
/// it makes anything (it left `X/_locks` behind), and the command it
/// suggests names the same `--out` (it said `pipeline run --stage
/// verify_pairs`, which would have written to `./out`). Run away from the
/// checkout, it does not ask for an `--input` it would not read.
#[test]
fn a_stage_alone_without_its_input_names_the_command_and_leaves_nothing() {
    let scratch = temp_dir("stage-alone");
    let out = scratch.join("fresh");
    let o = pipeline()
        .args(["run", "--stage", "verify", "--out", out.to_str().unwrap()])
        .current_dir(&scratch)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let message = text(&o.stderr);
    assert!(message.contains("pipeline run --stage verify_pairs --out"), "{message}");
    assert!(message.contains(&format!("--out {}`", out.display())), "{message}");
    assert!(!out.exists(), "{message}");
    let o = pipeline().args(["run", "--stage", "blocks", "--out", out.to_str().unwrap()]).output().unwrap();
    assert!(text(&o.stderr).contains("--stage ingest --input CRAWL --out"), "{}", text(&o.stderr));
    let _ = std::fs::remove_dir_all(&scratch);
}

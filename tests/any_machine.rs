//! Runs on any machine (issue 36): one thread or three give the same tables,
//! crawled control characters never reach a terminal raw, Ctrl-C stops a
//! run cleanly and `status` says so, and a stage's task runs once at a time
//! on one output folder while the tasks of a sharded stage run side by
//! side.

mod common;

use common::{canonical_rows, pipeline, table_names, temp_dir};
use neardup::tables::shard::Shard;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

fn run(out: &Path, args: &[&str]) -> Output {
    pipeline().args(["--quiet", "run", "--out", out.to_str().unwrap()]).args(args).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn one_thread_and_three_threads_give_the_same_tables() {
    // One thread is what a one-CPU machine gets: DataFusion then plans every
    // query with one partition, which no multi-core test run exercised.
    let one = temp_dir("threads-1");
    let three = temp_dir("threads-3");
    for (out, threads) in [(&one, "1"), (&three, "3")] {
        let o = run(out, &["--threads", threads]);
        assert!(o.status.success(), "--threads {threads}: {}", stderr(&o));
    }
    assert_eq!(table_names(&one), table_names(&three));
    for table in table_names(&one) {
        assert!(
            canonical_rows(&one, &table) == canonical_rows(&three, &table),
            "table {table} differs between --threads 1 and --threads 3"
        );
    }
    assert!(!canonical_rows(&one, "clusters").is_empty(), "the comparison must cover clusters");
    let o = run(&one, &["--threads", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&one);
    let _ = std::fs::remove_dir_all(&three);
}

#[test]
fn crawled_control_characters_are_escaped_on_the_terminal_only() {
    let dir = temp_dir("controls");
    let corpus = dir.join("hostile.jsonl");
    let page = |title: &str, body: &str| {
        let html = format!("<html><head><title>{title}</title></head><body><p>{body}</p></body></html>");
        serde_json::json!({"id": "rivers", "url": "http://example.org/rivers", "html": html}).to_string()
    };
    let body = "The rivers of the north run red in spring when the snow melts over the iron hills.";
    std::fs::write(&corpus, page("Rivers \x1b[31mRED\x1b[0m \x07", body) + "\n").unwrap();
    let out = dir.join("out");
    let o = run(&out, &["--input", corpus.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = out.to_str().unwrap();

    let explain = pipeline().args(["explain", "--out", out, "http://example.org/rivers"]).output().unwrap();
    assert!(explain.status.success(), "{}", stderr(&explain));
    let text = String::from_utf8(explain.stdout).unwrap();
    assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
    assert!(text.contains("Rivers \\x1b[31mRED\\x1b[0m \\x07"), "{text}");

    let sql = "SELECT title FROM documents";
    let table = pipeline().args(["query", "--out", out, sql]).output().unwrap();
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(!text.contains('\x1b') && text.contains("Rivers \\x1b[31mRED"), "{text:?}");
    // Machine formats keep the data as it is.
    let csv = pipeline().args(["query", "--out", out, "--format", "csv", sql]).output().unwrap();
    assert!(String::from_utf8(csv.stdout).unwrap().contains("Rivers \x1b[31mRED\x1b[0m"));

    // An error message quoting the crawl is escaped too.
    let missing = pipeline().args(["explain", "--out", out, "http://example.org/\x1b[2Jgone"]).output().unwrap();
    assert_eq!(missing.status.code(), Some(1));
    let err = stderr(&missing);
    assert!(!err.contains('\x1b') && err.contains("\\x1b[2Jgone"), "{err:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Sends `signal` to a child process.
fn signal(child: &std::process::Child, signal: i32) {
    // SAFETY: kill(2) with a pid of our own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
}

/// Waits until `out/_locks` holds a lock file of `child` running a stage
/// (other than ingest, which the sample gets through in a moment) and
/// returns its stage.
fn wait_for_a_running_stage(out: &Path, child: &mut std::process::Child) -> Option<String> {
    let deadline = Instant::now() + Duration::from_secs(300);
    while Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return None;
        }
        if let Ok(entries) = std::fs::read_dir(out.join("_locks")) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let Some(stage) = name.strip_suffix(".lock").filter(|s| *s != "ingest") else { continue };
                // Its own lock, not one an earlier try left behind.
                if neardup::tables::lock::read_holder(&e.path()).is_some_and(|h| h.pid == child.id()) {
                    return Some(stage.to_string());
                }
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    None
}

#[test]
fn ctrl_c_names_the_stage_cleans_up_and_status_says_interrupted() {
    let out = temp_dir("sigint");
    let out_arg = out.to_str().unwrap();
    // A stage may end between the moment its lock is seen and the signal;
    // then the run stops between stages. A few tries catch one inside.
    let mut caught = None;
    for _ in 0..5 {
        let mut child = pipeline()
            .args(["run", "--out", out_arg, "--force"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let Some(stage) = wait_for_a_running_stage(&out, &mut child) else { continue };
        signal(&child, libc::SIGINT);
        let o = child.wait_with_output().unwrap();
        if o.status.code() == Some(0) {
            continue;
        }
        assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains("interrupted by Ctrl-C (SIGINT)"), "{err}");
        let leftovers: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".tmp-") || n.starts_with(".old-"))
            .collect();
        assert!(leftovers.is_empty(), "temporary folders left: {leftovers:?}");
        if err.contains(&format!("during stage {stage}")) {
            caught = Some(stage);
            break;
        }
    }
    let stage = caught.expect("no try interrupted a running stage");
    let o = pipeline().args(["status", "--out", out_arg, "--format", "json"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let text = String::from_utf8(o.stdout).unwrap();
    let line: serde_json::Value = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|l| l["stage"] == stage.as_str())
        .unwrap();
    assert_eq!(line["state"], "interrupted", "{text}");
    // The next run takes the lock over and finishes the job.
    let o = run(&out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = pipeline().args(["status", "--out", out_arg]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_task_runs_once_at_a_time_and_the_tasks_of_a_stage_side_by_side() {
    let out = temp_dir("locks");
    let o = run(&out, &["--stage", "ingest"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&out, &["--stage", "blocks"]);
    assert!(o.status.success(), "{}", stderr(&o));

    // This test process holds the lock of stage boilerplate, as a run would.
    let path = neardup::tables::lock::stage_lock_path(&out, "boilerplate", Shard::WHOLE);
    let held = neardup::tables::lock::acquire(&path, "stage boilerplate", false).unwrap();
    let o = run(&out, &["--stage", "boilerplate"]);
    assert_eq!(o.status.code(), Some(i32::from(neardup::tables::lock::EXIT_BUSY)), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains(&format!("pid {}", std::process::id())) && err.contains("--wait"), "{err}");
    assert!(!out.join("boilerplate").exists(), "a refused run writes nothing");
    let o = pipeline().args(["status", "--out", out.to_str().unwrap()]).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("running"), "{}", String::from_utf8_lossy(&o.stdout));

    // With --wait it queues behind the holder and runs once it is gone.
    let mut waiting = pipeline()
        .args(["--quiet", "run", "--out", out.to_str().unwrap(), "--stage", "boilerplate", "--wait"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert!(waiting.try_wait().unwrap().is_none(), "--wait must wait while the lock is held");
    drop(held);
    let o = waiting.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.join("boilerplate").exists());

    // Task 0 of 2 of tokens is busy; task 1 of 2 runs beside it.
    let path = neardup::tables::lock::stage_lock_path(&out, "tokens", "0/2".parse().unwrap());
    let held = neardup::tables::lock::acquire(&path, "stage tokens task 0/2", false).unwrap();
    let o = run(&out, &["--stage", "tokens", "--shard", "1/2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&out, &["--stage", "tokens", "--shard", "0/2"]);
    assert_eq!(o.status.code(), Some(i32::from(neardup::tables::lock::EXIT_BUSY)), "{}", stderr(&o));
    drop(held);
    let o = run(&out, &["--stage", "tokens", "--shard", "0/2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&out);
}

//! No silent results: what a run cannot read, a crawl file cut short, an
//! export while a run writes, and an export of a read-only output each end
//! with an exit code that says so, never with a quiet 0 over the wrong
//! tables or over nothing.

use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Output;

mod common;
use common::{pipeline, read_table, run_ok, temp_dir};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The bundled sample crawl.
fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/sample-crawl.warc.gz")
}

/// A finished run of the sample (one cheap method) in `scratch/out`.
fn finished_run(scratch: &Path) -> PathBuf {
    let out = scratch.join("out");
    run_ok(&[
        "--quiet",
        "run",
        "--methods",
        "a0",
        "--input",
        sample().to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    out
}

/// `flock(2)` of the lock file `out/_locks/<name>`, exclusive or shared,
/// naming this process in it as a run or an export does; held until the
/// file is dropped.
fn hold(out: &Path, name: &str, exclusive: bool, task: &str) -> std::fs::File {
    let path = out.join("_locks").join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).unwrap();
    let kind = if exclusive { libc::LOCK_EX } else { libc::LOCK_SH };
    // SAFETY: flock(2) on a descriptor this function owns.
    assert_eq!(unsafe { libc::flock(file.as_raw_fd(), kind | libc::LOCK_NB) }, 0, "{}", path.display());
    let me = neardup::tables::lock::Holder {
        host: neardup::tables::lock::host_name(),
        pid: std::process::id(),
        started_at_unix: 0,
        task: task.into(),
        heartbeat_unix: 0,
    };
    std::fs::write(&path, serde_json::to_string(&me).unwrap()).unwrap();
    file
}

fn export_args<'a>(out: &'a str, to: &'a str) -> [&'a str; 8] {
    ["--quiet", "export", "--out", out, "--to", to, "--format", "jsonl"]
}

/// Inputs this binary cannot read are a usage error before any stage,
/// naming what would read them: nothing is written (they ran every stage
/// over nothing and ended with exit 3).
#[test]
fn inputs_this_binary_cannot_read_stop_before_any_stage() {
    let scratch = temp_dir("unreadable-inputs");
    let out = scratch.join("out");
    for input in ["gs://bucket/crawl/", "https://example.com/crawl.warc.gz", "s4://bucket/crawl/"] {
        let o = pipeline().args(["--quiet", "run", "--input", input, "--out", out.to_str().unwrap()]).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{input}: {}", stderr(&o));
        let scheme = input.split("://").next().unwrap();
        assert!(stderr(&o).contains(&format!("unsupported URL scheme `{scheme}`")), "{input}: {}", stderr(&o));
        assert!(stderr(&o).contains("file://"), "the schemes it reads are named: {}", stderr(&o));
        assert!(!out.exists(), "{input}: nothing may be written");
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

/// A `.warc.gz` cut in the middle (as `head -c` does): ingest keeps the
/// records before the cut, and the run names the file, the offset and the
/// records read, and exits 3 (it exited 0, the cut one `rejects` row).
#[test]
fn a_crawl_file_cut_short_is_read_up_to_the_cut_and_exits_3() {
    let scratch = temp_dir("cut-crawl");
    let input = scratch.join("input");
    std::fs::create_dir_all(&input).unwrap();
    let whole = std::fs::read(sample()).unwrap();
    let cut = input.join("cut.warc.gz");
    let head = std::process::Command::new("head")
        .args(["-c", &(whole.len() / 2).to_string(), sample().to_str().unwrap()])
        .output()
        .unwrap();
    std::fs::write(&cut, head.stdout).unwrap();
    let out = scratch.join("out");
    let args = ["run", "--methods", "a0", "--input", input.to_str().unwrap(), "--out", out.to_str().unwrap()];
    let o = pipeline().args(args).output().unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let log = stderr(&o);
    let told =
        log.lines().find(|l| l.contains("cut.warc.gz") && l.contains("damaged")).unwrap_or_else(|| panic!("{log}"));
    let offset = told.split("at offset ").nth(1).and_then(|t| t.split(|c: char| !c.is_ascii_digit()).next());
    let offset: u64 = offset.and_then(|o| o.parse().ok()).unwrap_or_else(|| panic!("{told}"));
    assert!(offset > 0 && offset < whole.len() as u64 / 2, "{told}");
    let records: u64 =
        told.split("after ").nth(1).and_then(|t| t.split(' ').next()?.parse().ok()).unwrap_or_else(|| panic!("{told}"));
    // What was read is kept: every record before the cut became a row.
    let documents: usize = read_table(&out, "documents").iter().map(|b| b.num_rows()).sum();
    assert!(documents > 0 && documents as u64 <= records, "{documents} documents, {records} records read: {told}");
    let rejects = read_table(&out, "rejects");
    let truncated = rejects.iter().any(|b| {
        let reason = neardup::tables::columns::rejects::reason(b).unwrap();
        (0..b.num_rows()).any(|i| reason.value(i) == "truncated")
    });
    assert!(truncated, "the cut record is a `truncated` reject");
    // The run's rerun says so again (every stage up to date).
    let again = pipeline().args(args).output().unwrap();
    assert_eq!(again.status.code(), Some(3), "{}", stderr(&again));
    assert!(stderr(&again).contains("damaged"), "{}", stderr(&again));
    let _ = std::fs::remove_dir_all(&scratch);
}

/// An export never reads the tables of a run in progress: with the output
/// folder held as a whole run holds it, and then as a task of a sharded
/// stage holds it (the run lock shared, its task's lock), it exits 4
/// naming the process, and with `--wait` it waits for it. A run meets an
/// export reading the same way. (It exited 0 with the previous run's
/// tables.)
#[test]
fn an_export_and_a_run_of_one_folder_never_overlap() {
    let scratch = temp_dir("export-lock");
    let out = finished_run(&scratch);
    let (o, to) = (out.to_str().unwrap().to_string(), scratch.join("exported"));
    let to = to.to_str().unwrap().to_string();
    let me = format!("pid {}", std::process::id());

    let whole = hold(&out, "run", true, "a run");
    let refused = pipeline().args(export_args(&o, &to)).output().unwrap();
    assert_eq!(refused.status.code(), Some(i32::from(neardup::tables::lock::EXIT_BUSY)), "{}", stderr(&refused));
    assert!(stderr(&refused).contains(&me), "the run is named: {}", stderr(&refused));
    assert!(!Path::new(&to).join("kept.jsonl").exists());
    drop(whole);

    // A task of a sharded stage: the run lock shared, named in its task's lock.
    let task = hold(&out, "run", false, "a run");
    std::fs::write(out.join("_locks/run"), "").unwrap();
    let stage = hold(&out, "tokens.shard-0-of-2.lock", true, "stage tokens task 0/2");
    let refused = pipeline().args(export_args(&o, &to)).output().unwrap();
    assert_eq!(refused.status.code(), Some(i32::from(neardup::tables::lock::EXIT_BUSY)), "{}", stderr(&refused));
    assert!(stderr(&refused).contains(&me), "the task is named: {}", stderr(&refused));
    let mut queued = pipeline().args(export_args(&o, &to)).arg("--wait").spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(queued.try_wait().unwrap().is_none(), "the export went ahead while a task held the folder");
    drop((task, stage));
    assert!(queued.wait().unwrap().success());
    assert!(Path::new(&to).join("kept.jsonl").exists());

    // A run meets an export reading the folder.
    let export = hold(&out, "export", false, "an export");
    let run = pipeline().args(["--quiet", "run", "--methods", "a0", "--out", &o, "--force"]).output().unwrap();
    assert_eq!(run.status.code(), Some(i32::from(neardup::tables::lock::EXIT_BUSY)), "{}", stderr(&run));
    assert!(stderr(&run).contains("an export of"), "{}", stderr(&run));
    drop(export);
    let _ = std::fs::remove_dir_all(&scratch);
}

/// Makes `out` read-only for the export `args` runs and runs it: as a user
/// other than root, by taking the write permission away; as root, for whom
/// permissions are not enforced, in a mount namespace of its own where
/// `out` is bind-mounted read-only (a read-only disk, as in the report).
/// `None` when neither can be done here.
fn run_on_read_only(out: &Path, args: &[&str]) -> Option<Output> {
    let binary = env!("CARGO_BIN_EXE_pipeline");
    // SAFETY: getuid(2) has no preconditions.
    if unsafe { libc::getuid() } != 0 {
        let chmod = std::process::Command::new("chmod").args(["-R", "a-w", out.to_str().unwrap()]).status().unwrap();
        assert!(chmod.success());
        let o = pipeline().args(args).output().unwrap();
        std::process::Command::new("chmod").args(["-R", "u+w", out.to_str().unwrap()]).status().unwrap();
        return Some(o);
    }
    let script = r#"mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && ! touch "$1/.probe" 2>/dev/null || exit 97; shift; exec "$@""#;
    let o = std::process::Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", script, "sh", out.to_str().unwrap(), binary])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    if o.status.code() == Some(97) || (o.status.code() == Some(1) && stderr(&o).contains("unshare")) {
        return None;
    }
    Some(o)
}

/// A finished run on a read-only disk can be exported: no run can be in
/// progress there, and the export spills to a folder of its own (it failed
/// with "cannot create spill folder OUT/_spill/PID: Read-only file
/// system").
#[test]
fn a_finished_run_on_a_read_only_disk_is_exported() {
    let scratch = temp_dir("read-only-export");
    let out = finished_run(&scratch);
    let to = scratch.join("exported");
    let spill = scratch.join("spill");
    let args = export_args(out.to_str().unwrap(), to.to_str().unwrap());
    let mut args: Vec<&str> = args.to_vec();
    args.extend(["--memory-limit", "256M", "--spill", spill.to_str().unwrap()]);
    let Some(o) = run_on_read_only(&out, &args) else {
        assert!(!common::required("NEARDUP_REQUIRE_READ_ONLY"), "cannot make a read-only folder here");
        eprintln!("skipped: neither a non-root user nor a read-only bind mount (unshare) is available here");
        return;
    };
    assert!(o.status.success(), "{}", stderr(&o));
    let kept = std::fs::read_to_string(to.join("kept.jsonl")).unwrap();
    assert!(kept.lines().count() > 0);
    assert!(!spill.join("_spill").exists(), "the spill folder is removed at the end");
    let _ = std::fs::remove_dir_all(&scratch);
}

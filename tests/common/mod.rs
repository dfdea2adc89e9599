//! Helpers shared by the end-to-end test binaries: running the `pipeline`
//! binary, scratch folders, and reading the Parquet tables a run wrote.

#![allow(dead_code)] // each test binary uses its own subset

use arrow::array::RecordBatch;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The `pipeline` binary of this build, run from the crate root (where the
/// default `sample-data/` input is).
pub fn pipeline() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pipeline"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// `../shared/data/<relative>` (the real crawl files and labeled pairs CI
/// has), or `None` with a message when it is not there. With
/// `NEARDUP_REQUIRE_SHARED=1` (set by `.ci/run`) a missing path fails the
/// test instead: a CI without the data must not pass while testing less.
pub fn shared_data(relative: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data").join(relative);
    if path.exists() {
        return Some(path.canonicalize().unwrap_or(path));
    }
    assert!(!required("NEARDUP_REQUIRE_SHARED"), "NEARDUP_REQUIRE_SHARED=1 but {} is not there", path.display());
    eprintln!("skipped: {} is not there", path.display());
    None
}

/// True when the environment says that what a test needs must be there:
/// `variable` or `NEARDUP_REQUIRE_SHARED` is set to `1` (`.ci/run` sets
/// both), so a missing server, file or module fails the test.
pub fn required(variable: &str) -> bool {
    [variable, "NEARDUP_REQUIRE_SHARED"].iter().any(|v| std::env::var_os(v).is_some_and(|v| v == "1"))
}

/// An empty scratch folder named after the test and this process.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("neardup-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the binary and fails with its stderr unless it exits 0.
pub fn run_ok(args: &[&str]) {
    let o = pipeline().args(args).output().unwrap();
    assert!(o.status.success(), "pipeline {args:?}: {}\n{}", o.status, String::from_utf8_lossy(&o.stderr));
}

/// Every batch of a table, part files in name order.
pub fn read_table(out: &Path, table: &str) -> Vec<RecordBatch> {
    let mut parts: Vec<PathBuf> = std::fs::read_dir(out.join(table))
        .unwrap_or_else(|e| panic!("table {table}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    parts.sort();
    let mut batches = Vec::new();
    for p in parts {
        let reader =
            ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&p).unwrap()).unwrap().build().unwrap();
        batches.extend(reader.map(|b| b.unwrap()));
    }
    batches
}

/// Every row of a table as one line of its formatted values, sorted: equal
/// for two tables with the same rows whatever their part files and order.
pub fn canonical_rows(out: &Path, table: &str) -> Vec<String> {
    use arrow::util::display::{ArrayFormatter, FormatOptions};
    let options = FormatOptions::default().with_null("NULL");
    let mut rows = Vec::new();
    for batch in read_table(out, table) {
        let columns: Vec<ArrayFormatter> =
            batch.columns().iter().map(|c| ArrayFormatter::try_new(c.as_ref(), &options).unwrap()).collect();
        for i in 0..batch.num_rows() {
            rows.push(columns.iter().map(|c| c.value(i).to_string()).collect::<Vec<_>>().join(" | "));
        }
    }
    rows.sort();
    rows
}

/// The tables of an output folder (its folders, hidden and `_` ones
/// skipped), sorted.
pub fn table_names(out: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(out)
        .unwrap_or_else(|e| panic!("{}: {e}", out.display()))
        .map(|e| e.unwrap())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('_') && !n.starts_with('.'))
        .collect();
    names.sort();
    names
}

/// A finished run of this build's `pipeline` with `args` and `--out`, made
/// once and shared by every test (in any test binary) that asks for the same
/// arguments, with the exit code it ended with (one of `codes`).
///
/// Why: a debug-build run over `../shared/data/warc` takes a minute, and
/// several test binaries check different things of the same default run;
/// CI pays for each repeat. The folder lives under cargo's
/// `CARGO_TARGET_TMPDIR`, named by the arguments and the binary's size and
/// modification time, so a rebuilt binary makes a new run. A file lock
/// keeps two test processes from making it at once (nextest runs test
/// binaries side by side). Callers only read the folder: a test that
/// reruns stages copies it first.
pub fn shared_run(name: &str, args: &[&str], codes: &[i32]) -> (PathBuf, i32) {
    use std::hash::{Hash, Hasher};
    let binary = std::fs::metadata(env!("CARGO_BIN_EXE_pipeline")).unwrap();
    // DefaultHasher::new() has fixed keys: the same name in every process.
    let mut hasher = std::hash::DefaultHasher::new();
    (args, binary.len(), binary.modified().unwrap()).hash(&mut hasher);
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("shared-runs");
    std::fs::create_dir_all(&root).unwrap();
    let lock = std::fs::File::create(root.join(format!("{name}.lock"))).unwrap();
    lock.lock().unwrap();
    let out = root.join(format!("{name}-{:016x}", hasher.finish()));
    let done = out.with_extension("exit-code");
    if let Ok(code) = std::fs::read_to_string(&done) {
        return (out, code.trim().parse().unwrap());
    }
    // Runs of earlier builds of the binary are of no further use.
    for entry in std::fs::read_dir(&root).unwrap() {
        let path = entry.unwrap().path();
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        if file.starts_with(&format!("{name}-")) {
            let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
        }
    }
    let o = pipeline().args(args).arg("--out").arg(&out).output().unwrap();
    let code = o.status.code().unwrap_or(-1);
    assert!(codes.contains(&code), "pipeline {args:?}: {}\n{}", o.status, String::from_utf8_lossy(&o.stderr));
    std::fs::write(&done, code.to_string()).unwrap();
    (out, code)
}

/// The run of the whole pipeline over `../shared/data/warc` with the
/// default settings (exit 0, or 3 where a file there yields no document),
/// shared as [`shared_run`] says; `None` when the data is not there.
pub fn shared_real_run() -> Option<(PathBuf, i32)> {
    let data = shared_data("warc")?;
    Some(shared_run("real", &["--quiet", "run", "--input", data.to_str().unwrap()], &[0, 3]))
}

/// The README's main command (the bundled sample, default settings),
/// shared as [`shared_run`] says.
pub fn shared_sample_run() -> PathBuf {
    shared_run("sample", &["--quiet", "run"], &[0]).0
}

/// Every HTML-looking body of the archives under `dir`, decoded as ingest
/// decodes it (dechunked, content-decoded, charset from the header, the
/// page or a guess).
pub fn html_pages(dir: &Path, out: &mut Vec<(String, String)>) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    for path in files {
        if path.is_dir() {
            html_pages(&path, out);
            continue;
        }
        let name = path.display().to_string();
        let _ = neardup::ingest::archive::scan_archive(&path, 64 << 20, &mut |event| {
            let neardup::ingest::archive::ArchiveEvent::Record(r) = event else { return };
            let Ok(resp) = neardup::ingest::http::parse_response(&r.block) else { return };
            let mut body = r.block[resp.body_start.min(r.block.len())..].to_vec();
            if resp.header("transfer-encoding").is_some_and(|t| t.to_ascii_lowercase().contains("chunked")) {
                if let Ok(Some(d)) = neardup::ingest::http::dechunk(&body) {
                    body = d;
                }
            }
            if let Some(enc) = resp.header("content-encoding") {
                match neardup::ingest::http::decode_content(enc, &body, 64 << 20) {
                    Ok(d) => body = d,
                    Err(_) => return,
                }
            }
            let ct = resp.header("content-type").unwrap_or("").to_ascii_lowercase();
            let charset = ct.split("charset=").nth(1).map(|c| c.trim_matches(|x| x == '"' || x == ' ').to_string());
            let (enc, _) = neardup::ingest::html::decide_charset(&body, charset.as_deref());
            out.push((
                format!("{name} {}", r.target_uri.clone().unwrap_or_default()),
                neardup::ingest::html::decode(&body, enc).into_owned(),
            ));
        });
    }
}

//! Bad input that is the user's, not the crawl's: a job file with a wrong
//! value stops `pipeline run` with exit code 2 and a message naming the
//! parameter, before any stage runs; a table on disk whose columns do not
//! match its schema file stops the stage that reads it with an error naming
//! the table and column (exit code 1), never a panic.

use arrow::array::{new_null_array, ArrayRef, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use std::sync::Arc;

mod common;
use common::{pipeline, temp_dir};

/// Runs `pipeline run` with `job` as its config file; returns the exit code
/// and stderr.
fn run_with_config(name: &str, job: &str) -> (Option<i32>, String) {
    let dir = temp_dir(&format!("bad-config-{name}"));
    let path = dir.join("job.toml");
    std::fs::write(&path, job).unwrap();
    let out = dir.join("out");
    let o = pipeline()
        .args(["--quiet", "run", "--config", path.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    let result = (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned());
    assert!(!out.join("documents").exists(), "{name}: a stage ran despite the bad config");
    let _ = std::fs::remove_dir_all(&dir);
    result
}

#[test]
fn bad_configs_exit_2_naming_the_parameter() {
    for (name, job, message) in [
        (
            "band-rows",
            "[methods]\nminhash_band_rows = 5\n",
            "[methods] minhash_band_rows = 5 must divide minhash_functions = 84",
        ),
        (
            "megashingles",
            "[methods]\nmegashingle_functions = 40\n",
            "[methods] megashingle_functions = 40 must be a positive multiple of 6",
        ),
        ("threshold", "[verify]\nthreshold = 1.5\n", "[verify] threshold = 1.5 must be between 0 and 1"),
        ("pool", "[evaluate]\npool = \"studdy\"\n", "[evaluate] pool = \"studdy\" must be \"all\", \"study\""),
        ("enabled", "[methods]\nenabled = [\"a0\", \"a99\"]\n", "[methods] enabled: unknown method `a99`"),
        ("labels", "[evaluate]\ngold_positive_min_label = 0\n", "[evaluate] gold_positive_min_label = 0 must be above"),
        ("typo", "[verify]\ntreshold = 0.9\n", "treshold"),
    ] {
        let (code, stderr) = run_with_config(name, job);
        assert_eq!(code, Some(2), "{name}: {stderr}");
        assert!(stderr.contains(message), "{name}: {stderr}");
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    }
}

/// A job file with several keys that do not read (a typo, a wrong type,
/// an unknown section) names them all at once, not only the first.
#[test]
fn every_key_that_does_not_read_is_named_at_once() {
    let job =
        "[verify]\ntreshold = 0.9\n[candidates]\nmax_edges_per_document = \"eight\"\n[ingets]\nmax_record_bytes = 1\n";
    let (code, stderr) = run_with_config("several", job);
    assert_eq!(code, Some(2), "{stderr}");
    for named in ["[verify] treshold: unknown field", "[candidates] max_edges_per_document: invalid type", "[ingets]"] {
        assert!(stderr.contains(named), "{named} not in: {stderr}");
    }
}

/// A memory limit below what a run needs is a usage error naming the
/// minimum, before any stage runs (it used to run, then fail with exit 1).
#[test]
fn a_memory_limit_too_small_for_a_run_exits_2_naming_the_minimum() {
    let dir = temp_dir("small-memory");
    let out = dir.join("out");
    for limit in ["1M", "8M"] {
        let o = pipeline()
            .args(["--quiet", "run", "--memory-limit", limit, "--out", out.to_str().unwrap()])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{limit}: {stderr}");
        assert!(stderr.contains("--memory-limit") && stderr.contains("at least 64.0 MiB"), "{limit}: {stderr}");
        assert!(!out.exists(), "{limit}: a stage ran");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_gold_file_on_the_command_line_exits_2() {
    let o = pipeline()
        .args(["--quiet", "run", "--gold", "/nonexistent/gold.jsonl", "--out", "/nonexistent"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--gold /nonexistent/gold.jsonl: no such file"));
}

#[test]
fn a_table_with_a_wrong_column_type_is_an_error_not_a_panic() {
    // A `documents` table whose doc_id is Int64 instead of UInt64 (one row,
    // the other columns null): the blocks stage reads it by position.
    let out = temp_dir("wrong-column-type");
    let expected = neardup::tables::schema::arrow_schema("documents");
    let fields: Vec<Field> = expected
        .fields()
        .iter()
        .map(|f| {
            if f.name() == "doc_id" {
                Field::new("doc_id", DataType::Int64, true)
            } else {
                f.as_ref().clone().with_nullable(true)
            }
        })
        .collect();
    assert_eq!(expected.field(0).name(), "doc_id");
    let schema = Arc::new(Schema::new(fields));
    let columns: Vec<ArrayRef> = schema
        .fields()
        .iter()
        .map(|f| {
            if f.name() == "doc_id" {
                Arc::new(Int64Array::from(vec![7])) as ArrayRef
            } else {
                new_null_array(f.data_type(), 1)
            }
        })
        .collect();
    std::fs::create_dir_all(out.join("documents")).unwrap();
    let file = std::fs::File::create(out.join("documents/part-0.parquet")).unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, Arc::clone(&schema), None).unwrap();
    writer.write(&RecordBatch::try_new(schema, columns).unwrap()).unwrap();
    writer.close().unwrap();

    let o = pipeline().args(["--quiet", "run", "--stage", "blocks", "--out", out.to_str().unwrap()]).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains(
            "table `documents` (part-0.parquet) does not match its schema: column doc_id is Int64, schemas/documents.json says UInt64"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("stage blocks cannot read its input"), "{stderr}");
    // explain reads the same table by position too.
    let o = pipeline().args(["--quiet", "explain", "--out", out.to_str().unwrap(), "7"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("column doc_id is Int64"), "{stderr}");
    let _ = std::fs::remove_dir_all(&out);
}

//! End-to-end tests of `pipeline export`: a run over the sample crawl, a
//! choice of real crawl files of `../shared/data/warc` (WARC/1.0 gzipped
//! per record, as a whole and plain, WARC/0.17 and 0.18, ARC plain and
//! gzipped, wget's and Heritrix's request and metadata records) and two
//! small corpora (JSON Lines, Parquet), exported in every format.
//!
//! The WARC exports are read record by record with Python's `warcio`, as
//! another tool would (`tests/check_warc_export.py`): warcio missing fails
//! the tests under `NEARDUP_REQUIRE_SHARED=1` (`.ci/run` installs it).

use arrow::array::{Array, AsArray, StringArray};
use arrow::datatypes::UInt64Type;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

mod common;
use common::{pipeline, read_table, required, run_ok, shared_data, temp_dir};

/// The real crawl files of the test crawl, under `../shared/data`: one of
/// each kind the export copies or rewrites.
const SHARED: &[&str] = &[
    // wget: each request before its response, which names it.
    "warc/pywb/warcs/example-wget-1-14.warc.gz",
    // Heritrix: request and metadata records after the response they name.
    "warc/ukwa/BL-20140325121225068-00000-32090~opera~8443.warc.gz",
    // Common Crawl, gzipped as one whole file.
    "warc/webis-ecir20/CC-MAIN-20150226074105-00336-ip-10-28-5-156.ec2.internal.warc.gz",
    // Plain WARC/1.0.
    "warc/resiliparse/warcfile.warc",
    // WARC/0.17 gzipped per record, and the same crawl as plain ARC.
    "warc/ukwa/IAH-20080430204825-00000-blackbook-truncated.warc.gz",
    "warc/ukwa/IAH-20080430204825-00000-blackbook-truncated.arc",
    // WARC/0.18 with impossible dates.
    "warc/webis-ecir20/clueweb-09-sample-en0000-sample-00.warc",
    // ARC gzipped per record.
    "warc/aut/example.arc.gz",
];

/// A finished run (its `decide` stage wrote the decisions).
struct Crawl {
    /// The output folder.
    out: PathBuf,
    /// The input files.
    files: Vec<PathBuf>,
}

/// The run of every test here, made once.
fn crawl() -> &'static Crawl {
    static CRAWL: OnceLock<Crawl> = OnceLock::new();
    CRAWL.get_or_init(|| {
        let root = temp_dir("export-crawl");
        let input = root.join("input");
        std::fs::create_dir_all(&input).unwrap();
        let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        std::fs::copy(manifest_dir.join("sample-data/sample-crawl.warc.gz"), input.join("sample-crawl.warc.gz"))
            .unwrap();
        if let Some(data) = shared_data("warc") {
            for relative in SHARED {
                let from = data.join(relative.trim_start_matches("warc/"));
                std::fs::copy(&from, input.join(from.file_name().unwrap())).unwrap();
            }
        }
        write_corpora(&input);
        let out = root.join("out");
        run_ok(&["--quiet", "run", "--input", input.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&input).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        Crawl { out, files }
    })
}

/// A JSON Lines and a Parquet corpus whose lines repeat each other and the
/// sample's pages, with fields beside `id`, `url` and `text`.
fn write_corpora(input: &Path) {
    let article = "Release 2.4 of the Example project fixes the Parquet reader, adds a JSON writer and \
                   speeds up the tokenizer by a third on long documents.";
    let other = "Minutes of the Tuesday meeting: the board approved the new budget and the Spring schedule.";
    let lines = [
        serde_json::json!({"id": "a1", "url": "https://corpus.example/a1", "text": article, "source": "news"}),
        serde_json::json!({"id": "a2", "url": "https://corpus.example/a2?utm_source=feed", "text": format!("{article} ")}),
        serde_json::json!({"id": 3, "text": other, "lang_hint": "en"}),
        serde_json::json!({"id": "h4", "url": "https://corpus.example/h4", "html": format!("<html><title>T</title><body><p>{other} Again.</p></body></html>")}),
        serde_json::json!({"id": "bad"}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(input.join("corpus.jsonl"), text).unwrap();
    let batch = arrow::array::RecordBatch::try_from_iter(vec![
        ("id", Arc::new(arrow::array::Int64Array::from(vec![10, 11])) as arrow::array::ArrayRef),
        ("url", Arc::new(StringArray::from(vec!["https://corpus.example/p10", "https://corpus.example/p11"]))),
        ("text", Arc::new(StringArray::from(vec![article, "Another Parquet row about Something Else entirely."]))),
        ("source", Arc::new(StringArray::from(vec!["mirror", "blog"]))),
    ])
    .unwrap();
    let file = std::fs::File::create(input.join("corpus.parquet")).unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

/// The decisions of a run: doc_id → (kept, warc_file).
fn decisions(out: &Path) -> BTreeMap<u64, (bool, String)> {
    use neardup::tables::columns::decisions as d;
    let mut all = BTreeMap::new();
    for b in read_table(out, d::TABLE) {
        let (ids, kept, files) = (d::doc_id(&b).unwrap(), d::is_kept(&b).unwrap(), d::warc_file(&b).unwrap());
        for i in 0..b.num_rows() {
            all.insert(ids.value(i), (kept.value(i), files.value(i).to_string()));
        }
    }
    all
}

/// Runs `pipeline export ARGS`: (exit code, stdout, stderr).
fn export(args: &[&str]) -> (i32, String, String) {
    let o = pipeline().arg("--quiet").arg("export").args(args).output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Exports and fails unless it exits 0; returns the counts of its stdout line.
fn export_ok(args: &[&str]) -> BTreeMap<String, u64> {
    let (code, stdout, stderr) = export(args);
    assert_eq!(code, 0, "export {args:?}: {stderr}");
    let line = stdout.lines().next().unwrap_or_default();
    let (_, counts) = line.split_once('\t').unwrap_or_else(|| panic!("no counts in {stdout:?}"));
    counts.split(' ').map(|kv| kv.split_once('=').unwrap()).map(|(k, v)| (k.to_string(), v.parse().unwrap())).collect()
}

/// `tests/check_warc_export.py ARGS` (see its doc): its counts, or `None`
/// (the test then checks no more) when warcio is not installed and
/// nothing requires it.
fn check_warc(args: &[&str]) -> Option<serde_json::Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/check_warc_export.py");
    let o = std::process::Command::new("python3").arg(script).args(args).output().expect("python3");
    if o.status.code() == Some(3) {
        assert!(!required("NEARDUP_REQUIRE_WARCIO"), "NEARDUP_REQUIRE_SHARED=1 but Python's warcio is not installed");
        eprintln!("skipped the warcio checks: {}", String::from_utf8_lossy(&o.stderr));
        return None;
    }
    assert!(o.status.success(), "check_warc_export.py {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    Some(serde_json::from_slice(&o.stdout).unwrap())
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn the_warc_is_the_input_minus_the_removed_documents_record_for_record() {
    let c = crawl();
    let to = temp_dir("export-warc");
    let counts = export_ok(&["--out", s(&c.out), "--to", s(&to), "--format", "warc"]);
    let all = decisions(&c.out);
    let removed = all.values().filter(|(kept, _)| !kept).count() as u64;
    assert!(removed > 0);
    assert_eq!(counts["documents_removed"], removed);
    // Every record read is written, removed or left out with a reason.
    let written = counts["records_copied"] + counts["records_converted"];
    let corpus_documents =
        all.values().filter(|(_, f)| f.ends_with(".jsonl") || f.ends_with(".parquet")).count() as u64;
    assert_eq!(
        counts["records_read"] + corpus_documents,
        written + removed + counts["linked_records_left_out"] + counts["damaged_records_left_out"],
        "every record read is written, removed or left out: {counts:?}"
    );
    assert!(counts["linked_records_left_out"] > 0, "requests and metadata of removed pages go with them");
    let kept_warc = to.join("kept.warc.gz");
    let mut args = vec![s(&kept_warc), "--inputs"];
    args.extend(c.files.iter().map(|f| s(f)));
    let Some(check) = check_warc(&args) else { return };
    assert_eq!(check["records"], written);
    assert_eq!(check["converted"], counts["records_converted"]);
    // Every WARC/1.x record is its input record, byte for byte: those of
    // the WARC/1.x inputs are all the records not converted.
    assert_eq!(check["identical"].as_u64().unwrap(), counts["records_copied"], "{check}");
    if shared_data("warc").is_some() {
        assert!(counts["records_converted"] > 100, "ARC, WARC/0.x and corpus records are rewritten: {counts:?}");
    }
    // The kept documents of WARC/1.x files are there, the removed ones are not.
    let ids: HashSet<&str> = check["ids"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    let record_ids = record_ids(&c.out);
    let (mut kept_found, mut removed_found) = (0, 0);
    for (doc, (kept, file)) in &all {
        let Some(id) = record_ids.get(doc) else { continue };
        if file.ends_with(".jsonl") || file.ends_with(".parquet") {
            continue;
        }
        match (kept, ids.contains(id.as_str())) {
            (true, true) => kept_found += 1,
            (false, true) => removed_found += 1,
            (true, false) => panic!("kept document {doc} ({id}) is not in the export"),
            (false, false) => {}
        }
    }
    assert!(kept_found > 100);
    assert_eq!(removed_found, 0);
}

/// documents.record_id by doc_id.
fn record_ids(out: &Path) -> HashMap<u64, String> {
    use neardup::tables::columns::documents as d;
    let mut ids = HashMap::new();
    for b in read_table(out, d::TABLE) {
        let (docs, record) = (d::doc_id(&b).unwrap(), d::record_id(&b).unwrap());
        for i in 0..b.num_rows() {
            if record.is_valid(i) {
                ids.insert(docs.value(i), record.value(i).to_string());
            }
        }
    }
    ids
}

#[test]
fn the_cdxj_index_points_at_every_indexed_record_of_the_warc() {
    let c = crawl();
    let to = temp_dir("export-cdxj");
    let warc = export_ok(&["--out", s(&c.out), "--to", s(&to), "--format", "warc"]);
    let index = export_ok(&["--out", s(&c.out), "--to", s(&to), "--format", "cdxj"]);
    assert_eq!(index["warc_bytes"], warc["warc_bytes"], "the index is of the same WARC");
    assert_eq!(std::fs::metadata(to.join("kept.warc.gz")).unwrap().len(), warc["warc_bytes"]);
    let Some(check) = check_warc(&[s(&to.join("kept.warc.gz")), "--cdxj", s(&to.join("kept.cdxj"))]) else { return };
    assert_eq!(check["index_lines"], index["index_lines"]);
    assert!(index["index_lines"] > 100);
}

/// Removed documents whose payload digest is their kept copy's
/// (`documents.payload_digest`), and those whose is not.
fn identical_and_other_removed(out: &Path) -> (u64, u64) {
    use neardup::tables::columns::{decisions as d, documents as t};
    let mut digests = HashMap::new();
    for b in read_table(out, t::TABLE) {
        let (ids, digest) = (t::doc_id(&b).unwrap(), t::payload_digest(&b).unwrap());
        for i in 0..b.num_rows() {
            digests.insert(ids.value(i), digest.value(i).to_string());
        }
    }
    let (mut identical, mut other) = (0, 0);
    for b in read_table(out, d::TABLE) {
        let (ids, kept, of) = (d::doc_id(&b).unwrap(), d::is_kept(&b).unwrap(), d::duplicate_of(&b).unwrap());
        for i in (0..b.num_rows()).filter(|&i| !kept.value(i)) {
            if digests.get(&of.value(i)) == digests.get(&ids.value(i)) {
                identical += 1;
            } else {
                other += 1;
            }
        }
    }
    (identical, other)
}

#[test]
fn the_removed_export_is_a_revisit_per_identical_payload_and_a_note_per_other_removed_document() {
    let c = crawl();
    let to = temp_dir("export-removed");
    let counts = export_ok(&["--out", s(&c.out), "--to", s(&to), "--format", "warc", "--removed"]);
    let (identical, other) = identical_and_other_removed(&c.out);
    assert!(identical > 0 && other > 0, "the crawl has both kinds: {identical} identical, {other} other");
    assert_eq!((counts["revisit_records"], counts["note_records"]), (identical, other), "{counts:?}");
    // Each record names a record of the kept export by id, URI and date; a
    // revisit's payload digest is that record's.
    export_ok(&["--out", s(&c.out), "--to", s(&to), "--format", "warc"]);
    let kept = to.join("kept.warc.gz");
    let Some(check) = check_warc(&[s(&to.join("removed.warc.gz")), "--removed", "--kept", s(&kept)]) else {
        return;
    };
    assert_eq!((check["revisits"].as_u64(), check["notes"].as_u64()), (Some(identical), Some(other)), "{check}");
    assert!(check["revisits_with_http_header"].as_u64() > Some(0), "revisits carry their HTTP header: {check}");
    // The index lists the revisits, not the notes (application/warc-fields,
    // as pywb's indexer leaves them out).
    let index = export_ok(&["--out", s(&c.out), "--to", s(&to), "--format", "cdxj", "--removed"]);
    check_warc(&[s(&to.join("removed.warc.gz")), "--cdxj", s(&to.join("removed.cdxj"))]);
    assert_eq!(index["index_lines"], identical);
}

#[test]
fn the_pipeline_on_the_exported_warc_finds_its_documents_and_removes_almost_none() {
    let c = crawl();
    let root = temp_dir("export-rerun");
    export_ok(&["--out", s(&c.out), "--to", s(&root), "--format", "warc"]);
    let out = root.join("out");
    run_ok(&["--quiet", "run", "--input", s(&root.join("kept.warc.gz")), "--out", s(&out)]);
    let kept = decisions(&c.out).values().filter(|(kept, _)| *kept).count();
    let again = decisions(&out);
    assert_eq!(again.len(), kept, "every kept document, converted ones too, is a document again");
    let removed = again.values().filter(|(kept, _)| !kept).count();
    assert!(removed * 100 <= again.len(), "{removed} of {} removed again", again.len());
}

/// The rows of a JSON Lines export, its UInt64 columns (written as strings,
/// see `tables::json`, and checked to be) read back as numbers.
fn jsonl(path: &Path) -> Vec<serde_json::Value> {
    let mut rows: Vec<serde_json::Value> =
        std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    for row in &mut rows {
        for key in ["doc_id", "cluster_id", "duplicates", "duplicate_of"] {
            if let Some(value) = row.get_mut(key) {
                let text = value.as_str().unwrap_or_else(|| panic!("{key} is not a string: {value}"));
                let number: u64 = text.parse().unwrap();
                *value = serde_json::Value::from(number);
            }
        }
    }
    rows
}

#[test]
fn jsonl_and_parquet_have_a_row_per_kept_document_with_its_text_in_original_case() {
    let c = crawl();
    let to = temp_dir("export-rows");
    let all = decisions(&c.out);
    let texts: HashMap<u64, String> = read_table(&c.out, "documents")
        .iter()
        .flat_map(|b| {
            let (ids, texts) = (
                b.column_by_name("doc_id").unwrap().as_primitive::<UInt64Type>(),
                b.column_by_name("text").unwrap().as_string::<i32>(),
            );
            (0..b.num_rows()).map(|i| (ids.value(i), texts.value(i).to_string())).collect::<Vec<_>>()
        })
        .collect();
    export_ok(&["--out", s(&c.out), "--to", s(&to), "--format", "jsonl"]);
    let rows = jsonl(&to.join("kept.jsonl"));
    assert_eq!(rows.len(), all.values().filter(|(kept, _)| *kept).count());
    let mut stripped = 0;
    for row in &rows {
        let id = row["doc_id"].as_u64().unwrap();
        assert!(all[&id].0, "{id} is kept");
        let text = row["text"].as_str().unwrap();
        let lines: Vec<&str> = texts[&id].lines().collect();
        // The document's lines, in order, some left out as boilerplate.
        let mut rest = lines.iter();
        for line in text.lines() {
            assert!(rest.any(|l| l == &line), "{id}: {line:?} is not a line of its text");
        }
        stripped += usize::from(text.lines().count() < lines.iter().filter(|l| !l.trim().is_empty()).count());
        assert!(row.get("duplicate_of").is_none(), "kept rows have no duplicate_of");
    }
    assert!(stripped > 0, "boilerplate lines are left out");
    assert!(rows.iter().any(|r| r["text"].as_str().unwrap().chars().any(char::is_uppercase)), "original case");
    let clustered = rows.iter().find(|r| r["reason"] == "kept").expect("a cluster's kept copy");
    assert!(clustered["duplicates"].as_u64().unwrap() >= 1 && clustered["cluster_id"] == clustered["doc_id"]);
    // --keep-boilerplate: documents.text as it is.
    let whole = temp_dir("export-rows-whole");
    export_ok(&["--out", s(&c.out), "--to", s(&whole), "--format", "jsonl", "--keep-boilerplate"]);
    for row in jsonl(&whole.join("kept.jsonl")) {
        assert_eq!(row["text"].as_str().unwrap(), texts[&row["doc_id"].as_u64().unwrap()]);
    }
    // Parquet: the same rows.
    export_ok(&["--out", s(&c.out), "--to", s(&to), "--format", "parquet"]);
    let file = std::fs::File::open(to.join("kept.parquet")).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap().build().unwrap();
    let ids: Vec<u64> = reader
        .flat_map(|b| b.unwrap().column_by_name("doc_id").unwrap().as_primitive::<UInt64Type>().values().to_vec())
        .collect();
    assert_eq!(ids, rows.iter().map(|r| r["doc_id"].as_u64().unwrap()).collect::<Vec<_>>());
    // --removed: the removed documents, each with the kept copy it duplicates.
    export_ok(&["--out", s(&c.out), "--to", s(&to), "--format", "jsonl", "--removed"]);
    let removed = jsonl(&to.join("removed.jsonl"));
    assert_eq!(removed.len(), all.values().filter(|(kept, _)| !kept).count());
    for row in &removed {
        let of = row["duplicate_of"].as_u64().expect("duplicate_of");
        assert!(all[&of].0, "duplicate_of {of} is kept");
        assert!(row["similarity"].as_f64().is_some(), "{row}");
        assert!(row["reason"] == "near_duplicate" || row["reason"] == "exact_duplicate", "{row}");
    }
}

#[test]
fn shards_split_the_files_and_together_write_the_whole_export() {
    let c = crawl();
    let to = temp_dir("export-shards");
    let whole = export_ok(&["--out", s(&c.out), "--to", s(&to), "--format", "warc"]);
    let parts: Vec<BTreeMap<String, u64>> = (0..2)
        .map(|i| export_ok(&["--out", s(&c.out), "--to", s(&to), "--format", "warc", "--shard", &format!("{i}/2")]))
        .collect();
    for key in ["records_copied", "records_converted", "documents_removed", "warc_bytes", "input_files"] {
        assert_eq!(parts[0][key] + parts[1][key], whole[key], "{key}");
    }
    assert!(parts.iter().all(|p| p["input_files"] > 0));
    for name in ["kept.warc.gz", "kept-0-of-2.warc.gz", "kept-1-of-2.warc.gz"] {
        assert!(to.join(name).is_file(), "{name}");
    }
}

/// A small run of the sample crawl only, for the tests that move or break
/// its input.
fn small_run(name: &str) -> (PathBuf, PathBuf) {
    let root = temp_dir(name);
    let input = root.join("input");
    std::fs::create_dir_all(&input).unwrap();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/sample-crawl.warc.gz");
    std::fs::copy(sample, input.join("sample-crawl.warc.gz")).unwrap();
    let out = root.join("out");
    run_ok(&["--quiet", "run", "--input", s(&input), "--out", s(&out)]);
    (root, out)
}

#[test]
fn usage_errors_exit_2_and_moved_inputs_are_found_with_input() {
    let (root, out) = small_run("export-usage");
    let to = root.join("to");
    // Without a decisions table.
    std::fs::rename(out.join("decisions"), root.join("decisions")).unwrap();
    let (code, _, stderr) = export(&["--out", s(&out), "--to", s(&to), "--format", "warc"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("decisions"), "{stderr}");
    std::fs::rename(root.join("decisions"), out.join("decisions")).unwrap();
    let (code, _, stderr) = export(&["--out", s(&out), "--to", s(&to), "--format", "warc", "--keep-boilerplate"]);
    assert_eq!(code, 2, "{stderr}");
    let (code, _, stderr) = export(&["--out", s(&out), "--to", s(&to), "--format", "zip"]);
    assert_eq!(code, 2, "{stderr}");
    // The input moved: an error naming it, then found with --input.
    let moved = root.join("moved");
    std::fs::rename(root.join("input"), &moved).unwrap();
    let (code, _, stderr) = export(&["--out", s(&out), "--to", s(&to), "--format", "warc"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("sample-crawl.warc.gz") && stderr.contains("--input"), "{stderr}");
    let counts = export_ok(&["--out", s(&out), "--to", s(&to), "--format", "warc", "--input", s(&moved)]);
    assert!(counts["records_copied"] > 0);
    // The text formats need no input file.
    export_ok(&["--out", s(&out), "--to", s(&to), "--format", "jsonl"]);
    // An object-store destination.
    let url = url::Url::from_directory_path(root.join("store")).unwrap().to_string();
    let (code, stdout, stderr) = export(&["--out", s(&out), "--to", &url, "--format", "jsonl"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with(&format!("{}kept.jsonl\t", url)), "{stdout}");
    assert_eq!(std::fs::read(root.join("store/kept.jsonl")).unwrap(), std::fs::read(to.join("kept.jsonl")).unwrap());
    // Nothing half-written is left behind.
    let hidden: Vec<String> = std::fs::read_dir(&to)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(hidden.is_empty(), "{hidden:?}");
    assert!(!out.join(format!(".tmp-export-{}", std::process::id())).exists());
}

/// The run's relative input paths are relative to where it ran, not to
/// where the export runs; an input changed since the run is refused (its
/// offsets would point at other records, and removed documents come back);
/// an object-store `--out` exports WARC as a local one does.
#[test]
fn relative_inputs_changed_inputs_and_an_object_store_out() {
    let root = temp_dir("export-places");
    std::fs::create_dir_all(root.join("input")).unwrap();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/sample-crawl.warc.gz");
    std::fs::copy(&sample, root.join("input/sample-crawl.warc.gz")).unwrap();
    let store = url::Url::from_directory_path(root.join("store")).unwrap().to_string();
    for out in ["out", store.as_str()] {
        let o =
            pipeline().current_dir(&root).args(["--quiet", "run", "--input", "input", "--out", out]).output().unwrap();
        assert!(o.status.success(), "{out}: {}", String::from_utf8_lossy(&o.stderr));
    }
    let out = root.join("out");
    let local = export_ok(&["--out", s(&out), "--to", s(&root.join("local")), "--format", "warc"]);
    assert!(local["records_copied"] > 0);
    let cache = root.join("cache");
    let (code, _, stderr) =
        export(&["--out", &store, "--cache", s(&cache), "--to", s(&root.join("remote")), "--format", "warc"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        std::fs::read(root.join("remote/kept.warc.gz")).unwrap(),
        std::fs::read(root.join("local/kept.warc.gz")).unwrap()
    );
    // The same records gzipped again: another size, other offsets.
    let mut changed = std::fs::read(&sample).unwrap();
    changed.extend_from_slice(&std::fs::read(&sample).unwrap());
    std::fs::write(root.join("input/sample-crawl.warc.gz"), changed).unwrap();
    let (code, _, stderr) = export(&["--out", s(&out), "--to", s(&root.join("after")), "--format", "warc"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("changed since the run") && stderr.contains("sample-crawl.warc.gz"), "{stderr}");
}

/// The files under `dir`, every level, in name order.
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// A run over every file of `../shared/data/warc` exports in every format,
/// and warcio reads the WARC back, its WARC/1.x records byte for byte
/// those of the input. The export finds records and their headers with
/// ingest's reader, so it reads what ingest read: pywb's
/// `missing-status-text.warc`, whose header lines end in CR CR LF, made
/// the WARC export exit 1 ("changed while it was exported") when it had a
/// header reader of its own (issue 56.1).
#[test]
fn every_shared_crawl_file_exports_in_every_format() {
    let Some(data) = shared_data("warc") else { return };
    // Exit 3: some files there yield no document, which is an input error.
    let Some((out, _)) = common::shared_real_run() else { return };
    let root = temp_dir("export-shared");
    let to = root.join("to");
    for format in ["parquet", "jsonl", "cdxj", "warc"] {
        for removed in [false, true] {
            let mut args = vec!["--out", s(&out), "--to", s(&to), "--format", format];
            if removed {
                args.push("--removed");
            }
            let (code, _, stderr) = export(&args);
            // 3: written, but records the input has damaged (cut short,
            // unreadable bytes: bad.arc, the lz4 file) were left out and
            // logged. 1, as for the CR CR LF file before, is a failure.
            assert!(matches!(code, 0 | 3), "export {args:?} exited {code}: {stderr}");
        }
    }
    let mut inputs = Vec::new();
    files_under(&data, &mut inputs);
    let (kept, index) = (to.join("kept.warc.gz"), to.join("kept.cdxj"));
    let mut args = vec![s(&kept), "--cdxj", s(&index), "--inputs"];
    args.extend(inputs.iter().map(|f| s(f)));
    let Some(check) = check_warc(&args) else { return };
    assert!(check["identical"].as_u64().unwrap() > 1000, "{check}");
    check_warc(&[s(&to.join("removed.warc.gz")), "--cdxj", s(&to.join("removed.cdxj"))]);
}

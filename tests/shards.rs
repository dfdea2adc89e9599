//! Sharded map stages (`--shard I/N`): a run cut into tasks writes the same
//! tables, row for row, as an unsharded run; a stage after a sharded one
//! waits for every task and names the missing ones; a rerun task replaces
//! only its own part files.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::SystemTime;

mod common;
use common::{canonical_rows, pipeline, shared_data, table_names, temp_dir};

/// Every stage in order, and whether it is a map stage.
/// Every stage in run order, and whether it runs as tasks (a map stage).
fn stages() -> Vec<(&'static str, bool)> {
    neardup::stages::all().iter().map(|s| (s.name(), s.shardable())).collect()
}

const TASKS: u32 = 3;

/// The bundled sample plus the UK Web Archive test files: many files of
/// different sizes (ingest shares), revisits, truncated records.
fn inputs() -> Vec<String> {
    let mut v = vec!["sample-data".to_string()];
    v.extend(shared_data("warc/ukwa").map(|p| p.display().to_string()));
    v
}

/// Runs `pipeline --quiet run ARGS --out OUT` (inputs added for ingest) and
/// returns its exit code and stderr.
fn run(out: &Path, args: &[&str]) -> (i32, String) {
    let mut cmd = pipeline();
    cmd.args(["--quiet", "run", "--out", out.to_str().unwrap()]).args(args);
    if args.windows(2).any(|w| w == ["--stage", "ingest"]) || !args.contains(&"--stage") {
        cmd.arg("--input").args(inputs());
    }
    let o = cmd.output().unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// Part files of a table with their modification times.
fn parts(out: &Path, table: &str) -> BTreeMap<String, SystemTime> {
    std::fs::read_dir(out.join(table))
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.metadata().unwrap().modified().unwrap()))
        .collect()
}

/// The column `name` of a batch, as `T`.
fn column<'a, T: arrow::array::Array + 'static>(b: &'a arrow::array::RecordBatch, name: &str) -> &'a T {
    b.column_by_name(name).unwrap().as_any().downcast_ref::<T>().unwrap()
}

/// The keys linking each pair in `search_key_links`, summed over the
/// tasks that counted them.
fn summed_key_links(out: &Path) -> BTreeMap<(String, u64, u64), i64> {
    use arrow::array::{Int64Array, StringArray, UInt64Array};
    let mut sums = BTreeMap::new();
    for b in common::read_table(out, "search_key_links") {
        let (method, doc_a, doc_b) = (
            column::<StringArray>(&b, "method"),
            column::<UInt64Array>(&b, "doc_a"),
            column::<UInt64Array>(&b, "doc_b"),
        );
        let keys = column::<Int64Array>(&b, "keys");
        for i in 0..b.num_rows() {
            let pair = (method.value(i).to_string(), doc_a.value(i), doc_b.value(i));
            *sums.entry(pair).or_insert(0) += keys.value(i);
        }
    }
    assert!(!sums.is_empty(), "the sample's SpotSigs and SL+ST keys link pairs");
    sums
}

#[test]
fn sharded_tasks_write_the_tables_of_an_unsharded_run() {
    let whole = temp_dir("shards-whole");
    let (whole_code, err) = run(&whole, &[]);
    // Exit 3 means some input file could not be read at all; the sharded
    // tasks must then say the same.
    assert!(whole_code == 0 || whole_code == 3, "{err}");

    let sharded = temp_dir("shards-tasks");
    for (stage, map) in stages() {
        if !map {
            let (code, err) = run(&sharded, &["--stage", stage]);
            assert_eq!(code, 0, "stage {stage}: {err}");
            continue;
        }
        // Tasks in reverse order: nothing may depend on task 0 going first.
        for index in (0..TASKS).rev() {
            if stage == "tokens" && index == 0 {
                // Two of three token tasks done: the next stage must refuse
                // and name the missing task and the command that makes it.
                let (code, err) = run(&sharded, &["--stage", "exact"]);
                assert_eq!(code, 2, "{err}");
                assert!(err.contains("0/3") && err.contains("--stage tokens --shard I/3"), "{err}");
            }
            let shard = format!("{index}/{TASKS}");
            let (code, err) = run(&sharded, &["--stage", stage, "--shard", &shard]);
            let expected = if stage == "ingest" && whole_code == 3 { [0, 3] } else { [0, 0] };
            assert!(expected.contains(&code), "stage {stage} task {shard} exited {code}: {err}");
        }
    }

    assert_eq!(table_names(&whole), table_names(&sharded));
    for table in table_names(&whole) {
        if table == "search_key_links" {
            // Each search_groups task counts the links of its share of the
            // keys: the rows depend on the split, their sums do not.
            assert_eq!(summed_key_links(&whole), summed_key_links(&sharded));
            continue;
        }
        let (a, b) = (canonical_rows(&whole, &table), canonical_rows(&sharded, &table));
        assert_eq!(a.len(), b.len(), "rows of table {table}");
        assert!(a == b, "table {table} differs between the unsharded and the sharded run");
    }
    assert!(!canonical_rows(&whole, "duplicates").is_empty(), "the comparison must cover verified pairs");
    // The clusters came out the same although a connected component of the
    // candidate edges holds more documents than a verify task's share:
    // no task needs a whole component.
    let mut components = neardup::history::union_find::UnionFind::new();
    let mut documents = std::collections::BTreeSet::new();
    for b in common::read_table(&whole, "candidates") {
        let (a, z) =
            (column::<arrow::array::UInt64Array>(&b, "doc_a"), column::<arrow::array::UInt64Array>(&b, "doc_b"));
        for i in 0..b.num_rows() {
            components.union(a.value(i), z.value(i));
            documents.extend([a.value(i), z.value(i)]);
        }
    }
    let largest = components.components().iter().map(Vec::len).max().unwrap_or(0);
    assert!(largest > documents.len() / TASKS as usize, "largest component {largest} of {} documents", documents.len());

    // Every map table holds parts of all three tasks and nothing else.
    for table in [
        "documents",
        "ingest_files",
        "blocks",
        "tokens",
        "descr_sample",
        "method_state",
        "signatures",
        "sketches",
        "search_keys",
        "search_forms",
        "search_key_links",
        "method_pairs",
        "duplicates",
    ] {
        let mut tasks: Vec<u32> = parts(&sharded, table)
            .keys()
            .map(|name| neardup::tables::write::part_shard(name).unwrap_or_else(|| panic!("{table}/{name}")))
            .inspect(|s| assert_eq!(s.count, TASKS))
            .map(|s| s.index)
            .collect();
        tasks.dedup();
        assert_eq!(tasks, [0, 1, 2], "tasks with parts in {table}");
    }
    // Task 1 of tokens again: its parts are new, the others untouched, the
    // table the same.
    let before = parts(&sharded, "tokens");
    std::thread::sleep(std::time::Duration::from_millis(20));
    let (code, err) = run(&sharded, &["--stage", "tokens", "--shard", "1/3", "--force"]);
    assert_eq!(code, 0, "{err}");
    let after = parts(&sharded, "tokens");
    assert_eq!(before.keys().collect::<Vec<_>>(), after.keys().collect::<Vec<_>>());
    for (name, modified) in &after {
        let own = name.starts_with("part-1-of-3-");
        assert_eq!(*modified != before[name], own, "{name}");
    }
    assert!(canonical_rows(&whole, "tokens") == canonical_rows(&sharded, "tokens"));

    // An unsharded rerun replaces every task's parts and manifests.
    let (code, err) = run(&sharded, &["--stage", "tokens"]);
    assert_eq!(code, 0, "{err}");
    assert!(parts(&sharded, "tokens").keys().all(|n| n.starts_with("part-0-of-1-")));
    let manifests: Vec<String> = std::fs::read_dir(sharded.join("_manifests"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("tokens."))
        .collect();
    assert_eq!(manifests, ["tokens.json"]);

    // Only map stages take --shard, and only a task that exists.
    let (code, err) = run(&sharded, &["--stage", "candidates", "--shard", "0/2"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("ingest, blocks, tokens, descr_sample, method_state, signatures, search_keys, search_groups, search, verify"),
        "{err}"
    );
    let (code, _) = run(&sharded, &["--stage", "tokens", "--shard", "3/3"]);
    assert_eq!(code, 2);

    // The sharded night matched against the history of an earlier night
    // finds the repeats and clusters across crawls of the unsharded one.
    let history = temp_dir("shards-history");
    let h = history.to_str().unwrap();
    let night = |out: &Path, action: &str, crawl: &str| {
        let o = pipeline()
            .args(["--quiet", "history", "--history", h, action, "--out", out.to_str().unwrap(), "--crawl-id", crawl])
            .output()
            .unwrap();
        assert!(o.status.success(), "history {action}: {}", String::from_utf8_lossy(&o.stderr));
    };
    night(&whole, "append", "night1");
    night(&whole, "match", "night2");
    night(&sharded, "match", "night2");
    for table in ["history_candidates", "repeats", "crawl_clusters"] {
        let (a, b) = (canonical_rows(&whole, table), canonical_rows(&sharded, table));
        assert!(!a.is_empty(), "{table}: the same pages repeat themselves");
        assert!(a == b, "table {table} differs between the unsharded and the sharded night");
    }

    let _ = std::fs::remove_dir_all(&whole);
    let _ = std::fs::remove_dir_all(&sharded);
    let _ = std::fs::remove_dir_all(&history);
}

/// a9 on a sample (spec §4, "At web scale"): with `descr_sample_documents`
/// below the crawl's size, the sample, the words chosen from it and every
/// document's signature are the same whether `descr_sample` and
/// `method_state` run whole or as 3 tasks; the sample is at most the
/// setting, its size and rate are in the manifest, and documents outside
/// it are signed too.
#[test]
fn a9_on_a_sample_is_the_same_for_any_task_split() {
    use arrow::array::{StringArray, UInt64Array};
    let dir = temp_dir("shards-a9-sample");
    let config = dir.join("a9.toml");
    std::fs::write(&config, "[methods]\nenabled = [\"a9\"]\ndescr_sample_documents = 60\ndescr_min_bits = 1\n")
        .unwrap();
    let stage = |out: &Path, stage: &str, shard: Option<String>| {
        let mut cmd = pipeline();
        cmd.args(["--quiet", "run", "--config", config.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        cmd.args(["--stage", stage]).args(shard.iter().flat_map(|s| ["--shard", s.as_str()]));
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "stage {stage} {shard:?}: {}", String::from_utf8_lossy(&o.stderr));
    };
    let (whole, sharded) = (dir.join("whole"), dir.join("sharded"));
    for stage_name in ["ingest", "blocks", "boilerplate", "tokens", "exact", "stats"] {
        stage(&whole, stage_name, None);
    }
    let _ = std::fs::remove_dir_all(&sharded);
    copy_dir(&whole, &sharded);
    for stage_name in ["descr_sample", "method_state", "signatures"] {
        stage(&whole, stage_name, None);
        for index in (0..TASKS).rev() {
            stage(&sharded, stage_name, Some(format!("{index}/{TASKS}")));
        }
    }
    for table in ["descr_sample", "method_state", "signatures"] {
        let (a, b) = (canonical_rows(&whole, table), canonical_rows(&sharded, table));
        assert!(!a.is_empty() && a == b, "table {table} differs between the unsharded and the sharded run");
    }
    // The sample's size and rate, in the manifest of the task that chose a9.
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(whole.join("_manifests/method_state.json")).unwrap()).unwrap();
    let counters = &manifest["report"]["counters"];
    let size = counters["a9_sample_documents"].as_u64().unwrap();
    let rate = counters["a9_sample_rate_ppb"].as_u64().unwrap();
    assert!((30..=60).contains(&size) && rate > 0 && rate < 500_000_000, "{counters}");
    // descr_sample holds the documents under the rate (about 60), the
    // choice at most 60 of them; every document but the exact copies is
    // signed from the words, in the sample or not.
    let sampled: std::collections::BTreeSet<u64> = common::read_table(&whole, "descr_sample")
        .iter()
        .flat_map(|b| column::<UInt64Array>(b, "doc_id").values().to_vec())
        .collect();
    assert!(sampled.len() as u64 >= size, "{} rows, a sample of {size}", sampled.len());
    let mut signed_outside = 0;
    for b in common::read_table(&whole, "signatures") {
        let (method, doc) = (column::<StringArray>(&b, "method"), column::<UInt64Array>(&b, "doc_id"));
        signed_outside +=
            (0..b.num_rows()).filter(|&i| method.value(i) == "a9" && !sampled.contains(&doc.value(i))).count();
    }
    assert!(signed_outside > 50, "{signed_outside} documents outside the sample signed");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Copies the folder `from` (tables and manifests) to `to`.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

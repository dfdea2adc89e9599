//! The history folder (`--history DIR`, `pipeline history`): a run is
//! appended as a crawl whole, rerunning a crawl replaces it, `compact`
//! keeps every row, `drop` removes a crawl, and what an interrupted append
//! leaves is never listed.

mod common;

use common::{canonical_rows, pipeline, run_ok, temp_dir};
use std::path::Path;

/// `pipeline history --history DIR list`, one line per crawl.
fn list(history: &Path) -> Vec<String> {
    let o = pipeline().args(["history", "--history", history.to_str().unwrap(), "list"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap().lines().map(String::from).collect()
}

fn partition(history: &Path, table: &str, crawl: &str) -> std::path::PathBuf {
    history.join(table).join(format!("crawl={crawl}"))
}

#[test]
fn crawls_are_appended_whole_replaced_on_rerun_compacted_and_dropped() {
    let dir = temp_dir("history");
    let (out, history) = (dir.join("out"), dir.join("history"));
    let (out_s, history_s) = (out.to_str().unwrap(), history.to_str().unwrap());
    run_ok(&[
        "run",
        "-q",
        "--methods",
        "a0,minhash,a11",
        "--out",
        out_s,
        "--history",
        history_s,
        "--crawl-id",
        "night1",
    ]);

    // The crawl holds the run's documents with their verification text, and
    // its signatures and record tables as written.
    let lines = list(&history);
    assert_eq!(lines.len(), 1, "{lines:?}");
    let documents = canonical_rows(&out, "documents").len();
    assert!(documents > 100, "{documents} documents in the sample crawl");
    assert!(lines[0].starts_with("night1\t\"visible\"\t"), "{}", lines[0]);
    assert!(lines[0].contains(&format!("history_documents={documents} ")), "{}", lines[0]);
    let kept = partition(&history, "history_documents", "night1");
    assert_eq!(canonical_rows(kept.parent().unwrap(), "crawl=night1").len(), documents);
    for table in ["signatures", "sketches", "shingles", "a12_records"] {
        let part = partition(&history, table, "night1");
        assert_eq!(canonical_rows(part.parent().unwrap(), "crawl=night1"), canonical_rows(&out, table), "{table}");
    }
    // The kept text is the visible text verification compares.
    let texts: Vec<String> = canonical_rows(kept.parent().unwrap(), "crawl=night1")
        .iter()
        .map(|row| row.rsplit(" | ").next().unwrap().to_string())
        .collect();
    let mut visible: Vec<String> = common::read_table(&out, "tokens")
        .iter()
        .flat_map(|b| {
            let text = b.column_by_name("text").unwrap().as_any().downcast_ref::<arrow::array::StringArray>().unwrap();
            (0..b.num_rows()).map(|i| text.value(i).to_string()).collect::<Vec<_>>()
        })
        .collect();
    let mut texts_sorted = texts.clone();
    texts_sorted.sort();
    visible.sort();
    assert_eq!(texts_sorted, visible);

    // Rerunning the night replaces its crawl: one crawl, the same rows.
    let before = canonical_rows(&history.join("signatures"), "crawl=night1");
    run_ok(&["history", "--history", history_s, "append", "--out", out_s, "--crawl-id", "night1"]);
    assert_eq!(list(&history), lines);
    assert_eq!(canonical_rows(&history.join("signatures"), "crawl=night1"), before);

    // A second night; then what an interrupted append would leave: a
    // partition without a manifest and a staging folder. Neither is listed.
    run_ok(&["history", "--history", history_s, "append", "--out", out_s, "--crawl-id", "night2"]);
    let ghost = partition(&history, "signatures", "ghost");
    std::fs::create_dir_all(&ghost).unwrap();
    std::fs::create_dir_all(history.join(".staging-ghost-1")).unwrap();
    let night2 = partition(&history, "signatures", "night2");
    let first_part = std::fs::read_dir(&night2).unwrap().next().unwrap().unwrap().path();
    std::fs::copy(&first_part, ghost.join("part-0.parquet")).unwrap();
    // A second part file in night2, so compaction has something to merge.
    std::fs::copy(&first_part, night2.join("part-9-extra.parquet")).unwrap();
    let doubled = canonical_rows(&history.join("signatures"), "crawl=night2");
    assert_eq!(doubled.len(), 2 * before.len());
    let names: Vec<String> = list(&history).iter().map(|l| l.split('\t').next().unwrap().to_string()).collect();
    assert_eq!(names, ["night1", "night2"]);

    // Analysts query the history with the crawl of each row.
    let o = pipeline()
        .args(["query", "--out", out_s, "--history", history_s, "--format", "csv"])
        .arg("SELECT crawl, COUNT(*) AS n FROM history_documents GROUP BY crawl ORDER BY crawl")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8(o.stdout).unwrap(), format!("crawl,n\nnight1,{documents}\nnight2,{documents}\n"));

    run_ok(&["history", "--history", history_s, "compact"]);
    assert!(!ghost.exists() && !history.join(".staging-ghost-1").exists());
    let files: Vec<_> = std::fs::read_dir(&night2).unwrap().collect();
    assert_eq!(files.len(), 1, "one part file after compaction");
    assert_eq!(canonical_rows(&history.join("signatures"), "crawl=night2"), doubled);

    // Drop: the crawl and its partitions go; dropping it again says so.
    run_ok(&["history", "--history", history_s, "drop", "night1"]);
    assert_eq!(list(&history).len(), 1);
    assert!(!partition(&history, "history_documents", "night1").exists());
    let again = pipeline().args(["history", "--history", history_s, "drop", "night1"]).output().unwrap();
    assert_eq!(again.status.code(), Some(1));

    // A crawl id names folders: a path is refused as bad usage.
    let bad = pipeline()
        .args(["history", "--history", history_s, "append", "--out", out_s, "--crawl-id", "../night3"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "{}", String::from_utf8_lossy(&bad.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

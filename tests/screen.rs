//! The screen before the LCS (spec §9, `[verify] screen`) on whole runs:
//! with it, the sample crawl and the real crawl files of `../shared/data/warc`
//! give the same `duplicates`, `clusters` and `decisions` as with `screen =
//! 0` (every proposed pair compared exactly, as before the screen), but
//! for one known kind of page (below); and every manifest that counts
//! comparisons counts the screen's rejects. And `place`'s rounds give the
//! same tables whether they read every partner's text at once or each
//! its own (`[verify] placement_texts_read_once`).

mod common;

use common::{canonical_rows, pipeline, shared_data, shared_real_run, shared_sample_run, temp_dir};
use std::path::Path;

/// The tables the screen must not change.
const RESULT_TABLES: [&str; 3] = ["duplicates", "clusters", "decisions"];

/// A counter of a stage's manifest.
fn counter(out: &Path, stage: &str, name: &str) -> u64 {
    let text = std::fs::read_to_string(out.join(format!("_manifests/{stage}.json"))).unwrap();
    let manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
    manifest["report"]["counters"][name].as_u64().unwrap_or_else(|| panic!("{stage} has no counter {name}"))
}

/// The rows of each result table found in one run only: (table, rows
/// with the screen only, rows with `screen = 0` only).
type Differences = Vec<(&'static str, Vec<String>, Vec<String>)>;

/// Copies the run `run` (made with `inputs`) to `dir/name` and runs it
/// again with the settings `config` (only the stages whose settings
/// changed rerun), and compares the result tables: (table, rows of `run`
/// only, rows of the new run only).
fn rerun_with(dir: &Path, run: &Path, inputs: &[&str], name: &str, config: &str) -> (std::path::PathBuf, Differences) {
    let again = dir.join(name);
    let copied = std::process::Command::new("cp").arg("-r").arg(run).arg(&again).status().unwrap();
    assert!(copied.success());
    let config_file = dir.join(format!("{name}.toml"));
    std::fs::write(&config_file, config).unwrap();
    // The copy's own inputs and settings but `config`: 3 where a real
    // crawl file could not be read at all, as in tests/pipeline.rs.
    let mut args = vec!["--quiet", "run", "--out", again.to_str().unwrap(), "--config", config_file.to_str().unwrap()];
    args.extend_from_slice(inputs);
    let status = pipeline().args(&args).status().unwrap();
    assert!(matches!(status.code(), Some(0) | Some(3)), "{status}");
    let mut differences = Vec::new();
    for table in RESULT_TABLES {
        let (before, after) = (canonical_rows(run, table), canonical_rows(&again, table));
        let only_before: Vec<String> = before.iter().filter(|r| !after.contains(r)).cloned().collect();
        let only_after: Vec<String> = after.iter().filter(|r| !before.contains(r)).cloned().collect();
        differences.push((table, only_before, only_after));
    }
    (again, differences)
}

/// Runs the run `screened` (default screen, run with `inputs`) again with
/// `screen = 0` in `dir/exact` and compares the result tables.
fn screened_and_exact(dir: &Path, screened: &Path, inputs: &[&str]) -> Differences {
    // The run with the screen is the shared default run; the one without
    // starts from a copy of it, so only verification and what follows rerun.
    let (exact, differences) = rerun_with(dir, screened, inputs, "exact", "[verify]\nscreen = 0.0\n");
    for stage in ["verify", "place"] {
        assert_eq!(counter(&exact, stage, "rejected_by_screen"), 0, "{stage} screened with screen = 0");
    }
    differences
}

/// The sample's placement rounds read every partner's text at once by
/// default; reading each round's own texts instead gives the same
/// clusters, comparisons and decisions.
#[test]
fn placement_rounds_give_the_same_tables_however_they_read_their_texts() {
    let dir = temp_dir("placement-texts");
    let run = shared_sample_run();
    let config = "[verify]\nplacement_texts_read_once = 0\n";
    let (again, differences) = rerun_with(&dir, &run, &[], "per-round", config);
    for (table, only_before, only_after) in differences {
        assert!(only_before.is_empty() && only_after.is_empty(), "{table}: {only_before:#?} {only_after:#?}");
    }
    let comparisons = canonical_rows(&run, "placement_comparisons");
    assert!(!comparisons.is_empty(), "the sample's placement makes rounds");
    assert_eq!(comparisons, canonical_rows(&again, "placement_comparisons"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The sample: the screen changes no result table, and rejects pairs
/// there (the sample's template siblings), which `failed_pairs` then
/// gives with their resemblance below the screen.
#[test]
fn the_sample_s_results_are_the_same_with_and_without_the_screen() {
    let dir = temp_dir("screen-sample");
    let screened = shared_sample_run();
    let differences = screened_and_exact(&dir, &screened, &[]);
    for (table, only_with, only_without) in differences {
        assert!(only_with.is_empty() && only_without.is_empty(), "{table}: {only_with:#?} {only_without:#?}");
    }
    let rejected = counter(&screened, "verify", "rejected_by_screen");
    println!("sample: {rejected} pairs rejected by the screen");
    for row in canonical_rows(&screened, "failed_pairs").iter().filter(|r| r.contains("rejected_by_screen")) {
        let value: f64 = row.rsplit(" | ").next().unwrap().parse().unwrap();
        assert!((0.0..0.2).contains(&value), "{row}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The real crawl files: the same result tables with and without the
/// screen, except for the Wayback Machine's CDX listings
/// (`web.archive.org/cdx/search/cdx?url=…`): lines of a URL key, a
/// timestamp and a random 32-character digest, where two listings of one
/// site share their URL prefixes in order (similarity 0.80–0.85) but the
/// digests and timestamps every hundred characters leave few 8-grams in
/// common (resemblance 0.08–0.16). 10 of the 78 pairs verified without the
/// screen are such listings, and nothing else changes: no verified pair is
/// gained, and every row lost is one of theirs.
#[test]
fn real_crawls_results_are_the_same_with_and_without_the_screen() {
    let Some(data) = shared_data("warc") else { return };
    let Some((screened, _)) = shared_real_run() else { return };
    let dir = temp_dir("screen-real");
    let differences = screened_and_exact(&dir, &screened, &["--input", data.to_str().unwrap()]);
    for (table, only_with, only_without) in &differences {
        println!("{table}: {} rows with the screen only, {} without it only", only_with.len(), only_without.len());
    }
    let listing = "/cdx/search/cdx";
    let (_, gained, lost) = &differences[0];
    assert!(gained.is_empty(), "duplicates gained with the screen: {gained:#?}");
    assert!(lost.iter().all(|r| r.matches(listing).count() == 2), "{lost:#?}");
    let (_, with, without) = &differences[2];
    assert!(with.iter().chain(without).all(|r| r.contains(listing)), "decisions: {with:#?} {without:#?}");
    println!("real crawls: {} pairs rejected by the screen", counter(&screened, "verify", "rejected_by_screen"));
    let _ = std::fs::remove_dir_all(&dir);
}

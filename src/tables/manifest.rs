//! The manifests: what a stage's task writes after its tables are
//! published, and what the next stage, `status` and the report read back.
//!
//! A manifest is the commit record of a stage's tables
//! (`DIR/_manifests/<stage>.json`, or `<stage>.shard-I-of-N.json` for a task
//! of a sharded stage): it holds the fingerprint of everything the tables
//! depend on, the rows written and the stage's counters. It sits with the
//! tables because every layer above reads it.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::tables::shard::{manifest_file_name, manifest_task, Shard};
use crate::tables::write::manifest_dir;

/// What a stage reports back: rows per written table, counters worth
/// keeping (documents dropped and why, pairs skipped, ...), and input
/// problems that did not stop it but make the run's exit code non-zero.
#[derive(Debug, Default, Clone, Serialize, Deserialize, PartialEq)]
pub struct StageReport {
    pub rows: BTreeMap<String, u64>,
    pub counters: BTreeMap<String, u64>,
    pub input_errors: Vec<String>,
}

/// The manifest written after a stage succeeds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub stage: String,
    /// The task (`I/N`) for a task of a sharded stage, `0/1` otherwise.
    #[serde(default = "whole_shard_text")]
    pub shard: String,
    pub program_version: String,
    /// Where the stage's SQL ran (`embedded`, `ballista://HOST:PORT`); not
    /// part of the fingerprint, since the engine never changes the result.
    #[serde(default = "embedded_engine_text")]
    pub engine: String,
    /// Hash of everything below except timings and report.
    pub fingerprint: String,
    /// Fingerprints of the manifests of the stages that made the inputs.
    pub inputs: BTreeMap<String, String>,
    pub external_inputs: Value,
    pub config: Value,
    /// The columns the stage wrote (see [`Plan::output_columns`]), so that
    /// `pipeline status` can say when they changed; empty in manifests
    /// written before they were recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_columns: Vec<String>,
    pub report: StageReport,
    pub started_at_unix: u64,
    pub wall_seconds: f64,
    pub cpu_seconds: f64,
    /// The stage's peak resident memory, in bytes
    /// ([`crate::process::memory::resident_peak_bytes`]): the figure to set
    /// `--memory-limit` against; absent where the system does not tell it,
    /// and in manifests written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_bytes: Option<u64>,
    /// For an output folder in an object store: the objects of each table
    /// this task committed (file names inside `<table>/`). Written with the
    /// manifest by [`crate::runner::mirror`], which makes the manifest the commit
    /// record: readers take these objects and no others.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub objects: BTreeMap<String, Vec<String>>,
    /// The folder the stage ran in: the input paths under `as_given` in
    /// `external_inputs` are as the user gave them, relative to it
    /// (`pipeline export` reads the inputs again, and `pipeline status`
    /// judges the run against them, from wherever it runs). Not part of
    /// the fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
}

fn embedded_engine_text() -> String {
    crate::tables::sql::Engine::Embedded.to_string()
}

fn whole_shard_text() -> String {
    Shard::WHOLE.to_string()
}

/// The manifest file of one task of `stage` (the only task when unsharded).
pub fn manifest_path(out: &Path, stage: &str, shard: Shard) -> PathBuf {
    manifest_dir(out).join(manifest_file_name(stage, shard))
}

/// True when a run of task `shard` of `stage` makes the manifest file
/// `file_name` stale: an unsharded run replaces every task's output; a task
/// replaces its own earlier output and every output of another layout.
pub fn manifest_replaced_by(file_name: &str, stage: &str, shard: Shard) -> bool {
    manifest_task(file_name, stage)
        .is_some_and(|task| shard.is_whole() || task.is_whole() || task.count != shard.count || task == shard)
}

/// Reads a manifest file; `None` when it is missing or unreadable.
pub fn read_manifest_file(path: &Path) -> Option<Manifest> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// Reads the manifest of `stage` run unsharded, if any.
pub fn read_manifest(out: &Path, stage: &str) -> Option<Manifest> {
    read_manifest_file(&manifest_path(out, stage, Shard::WHOLE))
}

/// The tasks' manifests of `stage` run sharded, by N, each list sorted by
/// task index.
fn shard_manifests(out: &Path, stage: &str) -> BTreeMap<u32, Vec<(Shard, PathBuf)>> {
    let mut by_count: BTreeMap<u32, Vec<(Shard, PathBuf)>> = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(manifest_dir(out)) else { return by_count };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(shard) = manifest_task(&name, stage).filter(|s| !s.is_whole()) {
            by_count.entry(shard.count).or_default().push((shard, entry.path()));
        }
    }
    for list in by_count.values_mut() {
        list.sort_by_key(|(s, _)| s.index);
    }
    by_count
}

/// How far the tasks of a stage got, from their manifests.
#[derive(Debug)]
pub enum Completion {
    /// No manifest: the stage never finished.
    NotRun,
    /// Every task finished (one manifest when unsharded, N otherwise).
    Complete(Vec<Manifest>),
    /// Some of the N tasks of a sharded run have not finished.
    Partial { count: u32, missing: Vec<u32> },
}

/// Reads the manifests of `stage` and tells whether its outputs are whole.
/// Tasks remove manifests of other layouts before they start, so at most
/// one layout is normally present; if several are, the fullest one counts.
pub fn completion(out: &Path, stage: &str) -> Completion {
    if let Some(m) = read_manifest(out, stage) {
        return Completion::Complete(vec![m]);
    }
    let by_count = shard_manifests(out, stage);
    let Some((&count, tasks)) = by_count.iter().max_by_key(|(count, tasks)| (tasks.len(), **count)) else {
        return Completion::NotRun;
    };
    let manifests: Vec<Manifest> = tasks.iter().filter_map(|(_, p)| read_manifest_file(p)).collect();
    let done: Vec<u32> = tasks.iter().map(|(s, _)| s.index).collect();
    let missing: Vec<u32> = (0..count).filter(|i| !done.contains(i)).collect();
    if missing.is_empty() && manifests.len() == count as usize {
        Completion::Complete(manifests)
    } else {
        Completion::Partial { count, missing }
    }
}

/// The manifests of a complete sharded stage as one: rows, counters and
/// CPU seconds added up, wall time the longest task's (tasks may run side
/// by side), input errors of all tasks.
pub fn merge_task_manifests(mut tasks: Vec<Manifest>) -> Option<Manifest> {
    let mut merged = tasks.pop()?;
    for m in tasks {
        for (k, v) in m.report.rows {
            *merged.report.rows.entry(k).or_default() += v;
        }
        for (k, v) in m.report.counters {
            *merged.report.counters.entry(k).or_default() += v;
        }
        merged.report.input_errors.extend(m.report.input_errors);
        merged.cpu_seconds += m.cpu_seconds;
        merged.wall_seconds = merged.wall_seconds.max(m.wall_seconds);
        merged.started_at_unix = merged.started_at_unix.min(m.started_at_unix);
    }
    let count = merged.shard.rsplit('/').next().unwrap_or("1").to_string();
    merged.shard = format!("*/{count}");
    Some(merged)
}

/// The manifest of a finished stage, its tasks' manifests merged when it
/// ran sharded; `None` when it did not finish.
pub fn finished_manifest(out: &Path, stage: &str) -> Option<Manifest> {
    match completion(out, stage) {
        Completion::Complete(tasks) => merge_task_manifests(tasks),
        Completion::NotRun | Completion::Partial { .. } => None,
    }
}

/// Removes manifests of `stage` that this task's run makes stale (see
/// [`manifest_replaced_by`]).
pub fn remove_stale_manifests(out: &Path, stage: &str, shard: Shard) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(manifest_dir(out)) else { return Ok(()) };
    for entry in entries.flatten() {
        if !manifest_replaced_by(&entry.file_name().to_string_lossy(), stage, shard) {
            continue;
        }
        match std::fs::remove_file(entry.path()) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("cannot remove {}", entry.path().display()))
            }
            _ => {}
        }
    }
    Ok(())
}

/// Rows per table as `table=N table=N`, for logs and status lines.
pub fn rows_text(rows: &BTreeMap<String, u64>) -> String {
    rows.iter().map(|(t, n)| format!("{t}={n}")).collect::<Vec<_>>().join(" ")
}

/// A manifest as its file holds it.
pub fn manifest_text(manifest: &Manifest) -> Result<String> {
    Ok(serde_json::to_string_pretty(manifest)? + "\n")
}

/// Writes a manifest atomically (temporary file, then rename).
pub fn write_manifest(path: &Path, manifest: &Manifest) -> Result<()> {
    let dir = path.parent().context("a manifest path has a folder")?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    crate::tables::write::write_file_atomically(path, manifest_text(manifest)?.as_bytes())
}

//! The stage runner: input checks, manifests, skipping of up-to-date stages.
//!
//! A stage reads named tables and writes named tables under one output
//! folder. After a stage succeeds, the runner writes
//! `DIR/_manifests/<stage>.json` with a fingerprint of everything the output
//! depends on (program version, the stage's config, the fingerprints of its
//! input tables' manifests, and for ingest the input files' sizes and mtimes).
//! `--stage all` skips a stage whose fingerprint is unchanged.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::config::Config;
use crate::table::table_exists;

/// Everything a stage may read while it runs.
pub struct RunContext {
    /// Output folder holding every table.
    pub out: PathBuf,
    /// Effective configuration (file + CLI overrides).
    pub config: Config,
    /// Input archive paths (files, folders or globs), for ingest.
    pub inputs: Vec<String>,
    /// Runtime for the DataFusion parts.
    pub runtime: tokio::runtime::Runtime,
    /// Show progress bars (stderr is a terminal and not `--quiet`).
    pub progress: bool,
}

/// What a stage reports back: rows per written table, counters worth
/// keeping (documents dropped and why, pairs skipped, ...), and input
/// problems that did not stop it but make the run's exit code non-zero.
#[derive(Debug, Default, Clone, Serialize, Deserialize, PartialEq)]
pub struct StageReport {
    pub rows: BTreeMap<String, u64>,
    pub counters: BTreeMap<String, u64>,
    pub input_errors: Vec<String>,
}

/// One step of the pipeline.
pub trait Stage {
    /// Name used by `--stage` and for the manifest file.
    fn name(&self) -> &'static str;
    /// Tables this stage reads (each made by an earlier stage).
    fn inputs(&self) -> &'static [&'static str];
    /// Tables this stage writes.
    fn outputs(&self, config: &Config) -> Vec<&'static str>;
    /// The part of the configuration the outputs depend on.
    fn config_section(&self, config: &Config) -> Value;
    /// Extra inputs outside the output folder (ingest: the archive files).
    fn external_fingerprint(&self, _ctx: &RunContext) -> Result<Value> {
        Ok(Value::Null)
    }
    /// Does the work.
    fn run(&self, ctx: &RunContext) -> Result<StageReport>;
}

/// The manifest written after a stage succeeds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub stage: String,
    pub program_version: String,
    /// Hash of everything below except timings and report.
    pub fingerprint: String,
    /// Fingerprints of the manifests of the stages that made the inputs.
    pub inputs: BTreeMap<String, String>,
    pub external_inputs: Value,
    pub config: Value,
    pub report: StageReport,
    pub started_at_unix: u64,
    pub wall_seconds: f64,
    pub cpu_seconds: f64,
}

/// Folder of the manifests.
pub fn manifest_dir(out: &Path) -> PathBuf {
    out.join("_manifests")
}

/// Reads the manifest of `stage`, if any.
pub fn read_manifest(out: &Path, stage: &str) -> Option<Manifest> {
    let text = std::fs::read_to_string(manifest_dir(out).join(format!("{stage}.json"))).ok()?;
    serde_json::from_str(&text).ok()
}

/// Outcome of asking the runner for one stage.
#[derive(Debug, Clone, PartialEq)]
pub enum StageOutcome {
    Ran(StageReport),
    UpToDate,
}

/// Runs `stage` unless it is up to date (and `force` is off).
pub fn run_stage(
    stage: &dyn Stage,
    all: &[Box<dyn Stage>],
    ctx: &RunContext,
    force: bool,
) -> Result<StageOutcome> {
    let mut inputs = BTreeMap::new();
    for table in stage.inputs() {
        let maker = all
            .iter()
            .find(|s| s.outputs(&ctx.config).contains(table))
            .map(|s| s.name())
            .unwrap_or("?");
        if !table_exists(&ctx.out, table) {
            bail!(
                "stage {} needs table `{table}`, which is missing under {}; run `pipeline run --stage {maker}` first (or `--stage all`)",
                stage.name(),
                ctx.out.display()
            );
        }
        let fp = read_manifest(&ctx.out, maker).map(|m| m.fingerprint).unwrap_or_default();
        inputs.insert(table.to_string(), fp);
    }
    let external = stage.external_fingerprint(ctx)?;
    let config = stage.config_section(&ctx.config);
    let fingerprint = fingerprint_of(&[
        &Value::String(stage.name().into()),
        &Value::String(env!("CARGO_PKG_VERSION").into()),
        &serde_json::to_value(&inputs)?,
        &external,
        &config,
    ]);
    if !force {
        if let Some(m) = read_manifest(&ctx.out, stage.name()) {
            let outputs_present = stage.outputs(&ctx.config).iter().all(|t| table_exists(&ctx.out, t));
            if m.fingerprint == fingerprint && outputs_present {
                tracing::info!(stage = stage.name(), "up to date, skipped (use --force to rerun)");
                return Ok(StageOutcome::UpToDate);
            }
        }
    }
    tracing::info!(stage = stage.name(), "running");
    let started_at_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let cpu_before = process_cpu_seconds();
    let t0 = Instant::now();
    let report = stage.run(ctx).with_context(|| format!("stage {} failed", stage.name()))?;
    let manifest = Manifest {
        stage: stage.name().into(),
        program_version: env!("CARGO_PKG_VERSION").into(),
        fingerprint,
        inputs,
        external_inputs: external,
        config,
        report: report.clone(),
        started_at_unix,
        wall_seconds: t0.elapsed().as_secs_f64(),
        cpu_seconds: process_cpu_seconds() - cpu_before,
    };
    write_manifest(&ctx.out, &manifest)?;
    tracing::info!(
        stage = stage.name(),
        seconds = format!("{:.2}", manifest.wall_seconds),
        rows = ?report.rows,
        "done"
    );
    Ok(StageOutcome::Ran(report))
}

/// Writes a manifest atomically (temporary file, then rename).
fn write_manifest(out: &Path, manifest: &Manifest) -> Result<()> {
    let dir = manifest_dir(out);
    std::fs::create_dir_all(&dir)?;
    let tmp = dir.join(format!(".{}.json.tmp", manifest.stage));
    std::fs::write(&tmp, serde_json::to_string_pretty(manifest)? + "\n")?;
    std::fs::rename(&tmp, dir.join(format!("{}.json", manifest.stage)))?;
    Ok(())
}

/// A stable hex fingerprint of JSON values (serde_json maps are sorted, so
/// the serialization is canonical).
pub fn fingerprint_of(parts: &[&Value]) -> String {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for p in parts {
        h.update(p.to_string().as_bytes());
        h.update(&[0]);
    }
    format!("{:032x}", h.digest128())
}

/// CPU seconds (user + system) this process used so far, from
/// `/proc/self/stat`; 0 where that is not available.
fn process_cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return 0.0 };
    let Some(after) = stat.rfind(')').map(|i| &stat[i + 2..]) else { return 0.0 };
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 of stat, 12 and 13 after the name.
    (ticks(11) + ticks(12)) / 100.0
}

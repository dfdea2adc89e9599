//! The stage runner: input checks, manifests, skipping of up-to-date stages.
//!
//! A stage reads named tables and writes named tables under one output
//! folder. After a stage succeeds, the runner writes
//! `DIR/_manifests/<stage>.json` with a fingerprint of everything the output
//! depends on (program version, the stage's config, the fingerprints of its
//! input tables' manifests, the columns it writes, and for ingest the input
//! files' sizes and mtimes).
//! `--stage all` skips a stage whose fingerprint is unchanged.
//!
//! A task of a sharded stage (`--shard I/N`) writes its own manifest,
//! `DIR/_manifests/<stage>.shard-I-of-N.json`; a stage that reads the
//! tables of a sharded stage starts only when all N manifests are there and
//! otherwise names the missing tasks.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub mod leftovers;
pub mod lock;
pub mod mirror;
pub mod run;
pub mod status;

use crate::config::Config;
pub use crate::process::logging::now_unix;
pub use crate::tables::shard::manifest_file_name;
use crate::tables::shard::manifest_task;
use crate::tables::shard::Shard;
use crate::tables::write::{manifest_dir, table_exists};

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
    /// Which task of a sharded stage this is ([`Shard::WHOLE`] unsharded).
    pub shard: Shard,
    /// Where the SQL stages run their SQL (`--engine`). It belongs to the
    /// machine or cluster running the job and changes how queries run,
    /// never what they return, so it is in no fingerprint (a manifest
    /// records it for the record).
    pub engine: crate::tables::sql::Engine,
    /// The run's memory limit (`--memory-limit`, or the default of
    /// [`crate::process::memory::run_limit`]); its SQL sessions get a pool of a share
    /// of it. Like the engine, how queries run, not what they return.
    pub memory_limit: Option<crate::process::memory::RunLimit>,
    /// When another run holds a task's lock: wait for it (`--wait`)
    /// rather than refuse ([`crate::runner::lock`]).
    pub wait_for_lock: bool,
    /// The history the run is matched against (`--history`, `--crawl-id`),
    /// for the history's stages; None for a run without one.
    pub history: Option<HistoryRun>,
}

/// The history a night is matched against: the local folder of the
/// history (the cache of one in an object store) and the night's crawl id.
#[derive(Debug, Clone)]
pub struct HistoryRun {
    pub root: PathBuf,
    pub crawl: String,
}

impl RunContext {
    /// A DataFusion session over the output folder's tables, in this
    /// process, under the run's memory limit, for the stages written in
    /// Rust (their joins stay hash joins).
    pub async fn session(&self) -> Result<datafusion::prelude::SessionContext> {
        // The Rust stages join big tables only with small id tables
        // (verify's own documents, evaluate's judged ones): hash joins
        // build those, where a sort-merge join would sort every text.
        let memory = self.sql_pool().map(|m| crate::process::memory::SqlMemory { sort_merge_joins: false, ..m });
        crate::tables::sql::session_with_memory_limit(&self.out, memory).await
    }

    /// A session for a stage that reads the whole corpus's texts in one
    /// sort (`tokens`: `documents` by doc_id): planned as one stream
    /// ([`crate::tables::sql::one_stream`]) under [`RunContext::corpus_pass_pool`]
    /// of `table`, so that the sort writes sorted runs to disk and merges
    /// them instead of holding every text of the crawl.
    pub async fn corpus_sort_session(&self, table: &str) -> Result<datafusion::prelude::SessionContext> {
        let memory = crate::process::memory::SqlMemory { sort_merge_joins: false, ..self.corpus_pass_pool(table) };
        crate::tables::sql::one_stream(crate::tables::sql::session_with_memory_limit(&self.out, Some(memory)).await?)
    }

    /// The session of a SQL stage whose group-bys see a row per line or
    /// word of the whole corpus (`boilerplate` over `table`): on the run's
    /// engine, under [`RunContext::corpus_pass_pool`], so that they spill.
    pub async fn corpus_sql_stage_session(&self, table: &str) -> Result<datafusion::prelude::SessionContext> {
        crate::tables::sql::sql_stage_session(&self.out, &self.engine, Some(self.corpus_pass_pool(table))).await
    }

    /// The pool of a pass over the whole corpus that reads `table`: in
    /// proportion to the table's bytes
    /// ([`crate::tables::sql::CORPUS_PASS_BYTES_PER_TABLE_BYTE`]), at least
    /// [`crate::tables::sql::CORPUS_PASS_BYTES`], and at most the run's pool
    /// whatever the crawl's size. Not the whole pool: such a pass would
    /// hold the corpus in memory up to it (half of 75% of the machine by
    /// default), where a small crawl spills for little CPU.
    fn corpus_pass_pool(&self, table: &str) -> crate::process::memory::SqlMemory {
        use crate::tables::sql::{table_bytes, CORPUS_PASS_BYTES, CORPUS_PASS_BYTES_PER_TABLE_BYTE};
        let wanted = table_bytes(&self.out, table) as usize * CORPUS_PASS_BYTES_PER_TABLE_BYTE;
        let budget = wanted.max(CORPUS_PASS_BYTES);
        let memory = match self.sql_pool() {
            Some(m) => crate::process::memory::SqlMemory { pool_bytes: m.pool_bytes.min(budget), ..m },
            None => crate::process::memory::SqlMemory { pool_bytes: budget, sort_merge_joins: false },
        };
        tracing::debug!(table, pool = %crate::process::memory::human_bytes(memory.pool_bytes), "corpus pass");
        memory
    }

    /// The session of a SQL stage: on the run's engine (see
    /// [`crate::tables::sql::sql_stage_session`]).
    pub async fn sql_stage_session(&self) -> Result<datafusion::prelude::SessionContext> {
        crate::tables::sql::sql_stage_session(&self.out, &self.engine, self.sql_pool()).await
    }

    /// What the SQL sessions get of the run's limit.
    pub fn sql_pool(&self) -> Option<crate::process::memory::SqlMemory> {
        self.memory_limit.map(|l| l.sql())
    }
}

/// A stage cannot start because a table it reads is missing or was written
/// by only some of the tasks of a sharded stage: a usage error (exit code 2),
/// not a failure of the stage.
#[derive(Debug)]
pub struct MissingInput(pub String);

impl std::fmt::Display for MissingInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MissingInput {}

/// An error in how the program was called: a bad option or combination
/// of options, found before any stage runs (exit code 2).
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

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
    fn inputs(&self) -> Vec<&'static str>;
    /// Tables this stage writes.
    fn outputs(&self, config: &Config) -> Vec<&'static str>;
    /// The part of the configuration the outputs depend on.
    fn config_section(&self, config: &Config) -> Value;
    /// Extra inputs outside the output folder (ingest: the archive files).
    fn external_fingerprint(&self, _ctx: &RunContext) -> Result<Value> {
        Ok(Value::Null)
    }
    /// True for map stages whose work splits into independent tasks
    /// (`--shard I/N`, see [`crate::tables::shard`]); they must then read only their
    /// share and write their tables through the shard's part files.
    fn shardable(&self) -> bool {
        false
    }
    /// True for the SQL stages whose queries go to the engine of
    /// `--engine` (embedded DataFusion or a Ballista cluster, see
    /// [`crate::tables::sql::sql_stage_session`]); their manifests record it.
    fn runs_sql_on_engine(&self) -> bool {
        false
    }
    /// Does the work.
    fn run(&self, ctx: &RunContext) -> Result<StageReport>;
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
    /// For an output folder in an object store: the objects of each table
    /// this task committed (file names inside `<table>/`). Written with the
    /// manifest by [`crate::runner::mirror`], which makes the manifest the commit
    /// record: readers take these objects and no others.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub objects: BTreeMap<String, Vec<String>>,
    /// The folder the stage ran in: the input paths of `external_inputs`
    /// are as the user gave them, relative to it (`pipeline export` reads
    /// the inputs again from wherever it runs). Not part of the fingerprint.
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
fn remove_stale_manifests(out: &Path, stage: &str, shard: Shard) -> Result<()> {
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

/// Outcome of asking the runner for one stage.
#[derive(Debug, Clone, PartialEq)]
pub enum StageOutcome {
    Ran(StageReport),
    UpToDate,
}

/// What the tables of one task of a stage would depend on if it ran now,
/// and the fingerprint of it all: compared with a manifest's, it tells
/// whether the stage is up to date, and part by part ([`Plan::changes`])
/// why not.
pub struct Plan {
    pub fingerprint: String,
    /// Fingerprints of the manifests of the stages that made the inputs.
    pub inputs: BTreeMap<String, String>,
    pub external: Value,
    pub config: Value,
    /// `table.column type` of every column the stage writes: a program whose
    /// tables gained or changed a column reruns the stage instead of leaving
    /// old tables that the next stage's schema check would refuse.
    pub output_columns: Vec<String>,
}

impl Plan {
    /// The plan of task `shard` of `stage`. Fails with [`MissingInput`] when
    /// an input comes from a sharded stage whose tasks have not all finished.
    pub fn of(stage: &dyn Stage, all: &[Box<dyn Stage>], ctx: &RunContext, shard: Shard) -> Result<Plan> {
        let mut inputs = BTreeMap::new();
        for table in stage.inputs() {
            let maker = maker_of(table, all, &ctx.config);
            let fp = match completion(&ctx.out, maker) {
                Completion::NotRun => String::new(),
                Completion::Complete(tasks) if tasks.len() == 1 => tasks[0].fingerprint.clone(),
                Completion::Complete(tasks) => {
                    let fps: Vec<Value> = tasks.iter().map(|m| Value::String(m.fingerprint.clone())).collect();
                    fingerprint_of(&[&Value::Array(fps)])
                }
                Completion::Partial { count, missing } => {
                    let list: Vec<String> = missing.iter().map(|i| format!("{i}/{count}")).collect();
                    return Err(MissingInput(format!(
                        "stage {} needs table `{table}` from all {count} tasks of stage {maker}, but tasks {} have not finished; run `pipeline run --stage {maker} --shard I/{count}` for each",
                        stage.name(),
                        list.join(", ")
                    ))
                    .into());
                }
            };
            inputs.insert(table.to_string(), fp);
        }
        let external = stage.external_fingerprint(ctx)?;
        let config = stage.config_section(&ctx.config);
        let output_columns: Vec<String> = stage
            .outputs(&ctx.config)
            .iter()
            .flat_map(|t| {
                crate::tables::schema::arrow_schema(t)
                    .fields()
                    .iter()
                    .map(|f| format!("{t}.{} {}", f.name(), f.data_type()))
                    .collect::<Vec<_>>()
            })
            .collect();
        let columns: Vec<Value> = output_columns.iter().cloned().map(Value::String).collect();
        let fingerprint = fingerprint_of(&[
            &Value::String(stage.name().into()),
            &Value::String(env!("CARGO_PKG_VERSION").into()),
            &Value::String(shard.to_string()),
            &serde_json::to_value(&inputs)?,
            &external,
            &config,
            &Value::Array(columns),
        ]);
        Ok(Plan { fingerprint, inputs, external, config, output_columns })
    }

    /// Why a run now would not give what `manifest` records, part by part
    /// (empty when the fingerprints agree).
    pub fn changes(&self, manifest: &Manifest) -> Vec<String> {
        if self.fingerprint == manifest.fingerprint {
            return Vec::new();
        }
        let mut why = Vec::new();
        if manifest.program_version != env!("CARGO_PKG_VERSION") {
            why.push(format!("written by version {} of the program", manifest.program_version));
        }
        for (table, fp) in &self.inputs {
            if manifest.inputs.get(table) != Some(fp) {
                why.push(format!("input table `{table}` was rewritten"));
            }
        }
        if self.external != manifest.external_inputs {
            why.push(changed_files(&manifest.external_inputs, &self.external));
        }
        if self.config != manifest.config {
            why.push(changed_settings(&manifest.config, &self.config));
        }
        if !manifest.output_columns.is_empty() && self.output_columns != manifest.output_columns {
            why.push("the columns of its tables changed".into());
        }
        if why.is_empty() {
            why.push("written by an earlier build of the program".into());
        }
        why
    }
}

/// The stage that writes `table` ("?" for a table no stage writes).
pub fn maker_of<'a>(table: &str, all: &'a [Box<dyn Stage>], config: &Config) -> &'a str {
    all.iter().find(|s| s.outputs(config).contains(&table)).map(|s| s.name()).unwrap_or("?")
}

/// "input files changed: ..." from two external fingerprints of ingest
/// (`{"files": [{"path", ...}]}`), naming up to three files; other stages
/// have none, so anything else is reported as a whole.
fn changed_files(before: &Value, now: &Value) -> String {
    let files = |v: &Value| -> BTreeMap<String, Value> {
        v.get("files")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|f| (f.get("path").and_then(Value::as_str).unwrap_or("?").to_string(), f.clone()))
            .collect()
    };
    let (old, new) = (files(before), files(now));
    let mut changes: Vec<String> = Vec::new();
    for (path, f) in &new {
        match old.get(path) {
            None => changes.push(format!("{path} added")),
            Some(g) if g != f => changes.push(format!("{path} changed")),
            Some(_) => {}
        }
    }
    changes.extend(old.keys().filter(|p| !new.contains_key(*p)).map(|p| format!("{p} removed")));
    if changes.is_empty() {
        return "its inputs outside the output folder changed".into();
    }
    let more = changes.len().saturating_sub(3);
    changes.truncate(3);
    let tail = if more > 0 { format!(" and {more} more") } else { String::new() };
    format!("input files changed: {}{tail}", changes.join(", "))
}

/// "config changed: a.b, c" naming the settings (dotted paths) that differ
/// between two config sections.
fn changed_settings(before: &Value, now: &Value) -> String {
    fn diff(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
                for k in keys {
                    let sub = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                    diff(&sub, x.get(k).unwrap_or(&Value::Null), y.get(k).unwrap_or(&Value::Null), out);
                }
            }
            _ if a != b => out.push(if path.is_empty() { "(all)".into() } else { path.to_string() }),
            _ => {}
        }
    }
    let mut keys = Vec::new();
    diff("", before, now, &mut keys);
    format!("config changed: {}", keys.join(", "))
}

/// Runs `stage` unless it is up to date (and `force` is off).
pub fn run_stage(stage: &dyn Stage, all: &[Box<dyn Stage>], ctx: &RunContext, force: bool) -> Result<StageOutcome> {
    let shard = ctx.shard;
    if !shard.is_whole() && !stage.shardable() {
        bail!("stage {} cannot be sharded; only map stages take --shard", stage.name());
    }
    // Held until the stage's tables and manifest are published: a second
    // run of this task waits or refuses before it even checks whether the
    // stage is up to date.
    let lock = crate::runner::lock::stage_lock_path(&ctx.out, stage.name(), shard);
    let _lock = crate::runner::lock::acquire(
        &lock,
        &crate::runner::lock::stage_task_name(stage.name(), shard),
        ctx.wait_for_lock,
    )?;
    crate::runner::leftovers::remove_left_by_dead_runs(&ctx.out);
    for table in stage.inputs() {
        let maker = maker_of(table, all, &ctx.config);
        if !table_exists(&ctx.out, table) {
            return Err(MissingInput(format!(
                "stage {} needs table `{table}`, which is missing under {}; run `pipeline run --stage {maker}` first (or `--stage all`)",
                stage.name(),
                ctx.out.display()
            ))
            .into());
        }
        crate::tables::write::check_table_schema(&ctx.out, table).with_context(|| {
            format!(
                "stage {} cannot read its input; rerun the stage that writes it: `pipeline run --stage {maker} --force`",
                stage.name()
            )
        })?;
    }
    let plan = Plan::of(stage, all, ctx, shard)?;
    if !force {
        if let Some(m) = read_manifest_file(&manifest_path(&ctx.out, stage.name(), shard)) {
            let outputs_present = stage.outputs(&ctx.config).iter().all(|t| table_exists(&ctx.out, t));
            if m.fingerprint == plan.fingerprint && outputs_present {
                tracing::info!(stage = stage.name(), "up to date, skipped (use --force to rerun)");
                return Ok(StageOutcome::UpToDate);
            }
        }
    }
    remove_stale_manifests(&ctx.out, stage.name(), shard)?;
    if shard.is_whole() {
        tracing::info!(stage = stage.name(), "running");
    } else {
        tracing::info!(stage = stage.name(), shard = %shard, "running");
    }
    let _stage = crate::process::logging::enter_stage(stage.name());
    let started_at_unix = now_unix();
    let cpu_before = process_cpu_seconds();
    let t0 = Instant::now();
    let report = stage
        .run(ctx)
        .map_err(|e| crate::tables::write::name_the_disk(e, &ctx.out))
        .with_context(|| format!("stage {} failed", stage.name()))?;
    crate::process::memory::release_free_memory();
    let manifest = Manifest {
        stage: stage.name().into(),
        shard: shard.to_string(),
        program_version: env!("CARGO_PKG_VERSION").into(),
        engine: if stage.runs_sql_on_engine() { &ctx.engine } else { &crate::tables::sql::Engine::Embedded }
            .to_string(),
        fingerprint: plan.fingerprint,
        inputs: plan.inputs,
        external_inputs: plan.external,
        config: plan.config,
        output_columns: plan.output_columns,
        report: report.clone(),
        started_at_unix,
        wall_seconds: t0.elapsed().as_secs_f64(),
        cpu_seconds: process_cpu_seconds() - cpu_before,
        objects: BTreeMap::new(),
        working_dir: std::env::current_dir().ok().map(|d| d.display().to_string()),
    };
    write_manifest(&manifest_path(&ctx.out, stage.name(), shard), &manifest)
        .map_err(|e| crate::tables::write::name_the_disk(e, &ctx.out))
        .with_context(|| format!("stage {} failed", stage.name()))?;
    tracing::info!(
        stage = stage.name(),
        seconds = format!("{:.2}", manifest.wall_seconds),
        rows = %rows_text(&report.rows),
        "done"
    );
    Ok(StageOutcome::Ran(report))
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

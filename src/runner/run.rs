//! `pipeline run` from its options to its end: which stages, the checks of
//! the shard, the inputs and the history, the object-store output pulled
//! and pushed around each stage, the history matched and appended, the
//! report, and the summary lines.
//!
//! The stages come in run order from [`crate::stages::in_run_order`]; the
//! runner only drives them.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::history::HistoryLocation;
use crate::process::logging::{Counts, LogFormat};
use crate::runner::mirror::RemoteOut;
use crate::runner::stage_run::{run_stage, Place, StageOutcome};
use crate::stages::stage::{HistoryRun, MissingInput, RunContext, Stage, UsageError};
use crate::tables::shard::Shard;

/// What `pipeline run` was asked to do.
pub struct RunRequest {
    /// `all`, or the name of one stage.
    pub stage: String,
    pub shard: Shard,
    /// The output folder or object-store URL, as given.
    pub out: String,
    /// The local cache of an object-store `out` (`--cache`).
    pub cache: Option<PathBuf>,
    pub force: bool,
    /// Queue behind another run instead of refusing (`--wait`).
    pub wait: bool,
    pub threads: Option<usize>,
    /// `--memory-limit` in bytes, if given.
    pub memory_limit: Option<usize>,
    pub engine: crate::tables::sql::Engine,
    pub history: Option<NightHistory>,
    pub config: Config,
    pub inputs: Vec<String>,
    /// Show progress bars.
    pub progress: bool,
    /// The log's format, which the run's summary on stdout follows: a line
    /// in words, or one JSON object for a scheduler to read.
    pub log_format: LogFormat,
}

/// The history a run is matched against and appended to (`--history`,
/// `--history-cache`, `--crawl-id`).
pub struct NightHistory {
    pub spec: String,
    pub cache: Option<PathBuf>,
    pub crawl: String,
}

/// How a run that did not fail ended: the input problems its stages met
/// (the exit code is 3 when there are any).
pub struct RunEnd {
    pub input_errors: Vec<String>,
}

/// The local folder holding the tables of `out`: the path itself, or the
/// cache of an object-store URL, with the store's handle.
pub fn local_out(out: &str, cache: Option<PathBuf>, shard: Shard) -> Result<(PathBuf, Option<RemoteOut>)> {
    if !crate::storage::location::is_url(out) {
        return Ok((PathBuf::from(out), None));
    }
    let remote = RemoteOut::open(out, cache, shard).map_err(|e| UsageError(format!("--out {out}: {e:#}")))?;
    Ok((remote.cache_dir().to_path_buf(), Some(remote)))
}

/// Runs the stages `request` selects, then the history's, then the report.
/// Mistakes in the request are [`UsageError`]s, found before any stage
/// runs.
pub fn run(request: RunRequest) -> Result<RunEnd> {
    let RunRequest {
        stage,
        shard,
        out,
        cache,
        force,
        wait,
        threads,
        memory_limit,
        engine,
        history,
        config,
        inputs,
        progress,
        log_format,
    } = request;
    if threads == Some(0) {
        return Err(UsageError("--threads must be at least 1".into()).into());
    }
    if let Some(message) = memory_limit.and_then(crate::process::memory::too_small) {
        return Err(UsageError(message).into());
    }
    let threads = crate::process::parallelism::configure(threads)?;
    tracing::debug!(threads, "threads for rayon, tokio and DataFusion's partitions");
    let memory_limit = crate::process::memory::run_limit(memory_limit);
    match memory_limit {
        Some(limit) => tracing::info!(threads, "{limit}"),
        None => tracing::warn!("no memory limit: this system tells neither its memory nor a container limit"),
    }
    // The history's stages, and the stages that read their tables, form
    // the history phase of a run with --history.
    let all = crate::stages::in_run_order(history.is_some());
    let history_names = crate::stages::history_phase(history.is_some());
    let is_history_stage = |name: &str| history_names.contains(&name);
    let selected = select_stages(&stage, &all, &history_names)?;
    let history = match &history {
        Some(night) => {
            crate::history::check_crawl_id(&night.crawl).map_err(|e| UsageError(format!("--crawl-id: {e:#}")))?;
            if stage != "all" && !is_history_stage(&stage) {
                return Err(UsageError(
                    "--history matches and appends a whole run: use it with --stage all or one of the \
                     history's stages (history_candidates, history_verify, history_clusters) or decide, \
                     or run `pipeline history append` after running the stages one by one"
                        .into(),
                )
                .into());
            }
            if crate::storage::location::is_url(&out) {
                return Err(UsageError("--history works with a local --out".into()).into());
            }
            let location = HistoryLocation::open(&night.spec, night.cache.clone())
                .map_err(|e| UsageError(format!("--history {}: {e:#}", night.spec)))?;
            Some((location, night.crawl.clone()))
        }
        None => None,
    };
    if selected.iter().any(|s| s.name() == "ingest") {
        check_inputs(&inputs)?;
    }
    if !shard.is_whole() && !(selected.len() == 1 && selected[0].shardable()) {
        let map_stages: Vec<&str> = all.iter().filter(|s| s.shardable()).map(|s| s.name()).collect();
        return Err(UsageError(format!(
            "--shard runs one task of one map stage; use --stage with one of: {}",
            map_stages.join(", ")
        ))
        .into());
    }
    if !crate::storage::location::is_url(&out) {
        check_earlier_tables(&selected, &all, &out, &config)?;
    }
    let (out_dir, remote) = local_out(&out, cache, shard)?;
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| crate::tables::write::name_the_disk(e.into(), &out_dir))
        .with_context(|| format!("cannot create the output folder {}", out_dir.display()))?;
    // Held to the run's end, taken before any stage's lock: a run queued
    // with --wait waits here, never between two of this run's stages.
    let _run_lock = crate::tables::lock::acquire_run(&out_dir, shard, wait)?;
    let _store_run_lock = match &remote {
        Some(r) if shard.is_whole() => Some(r.lock_run(wait)?),
        _ => None,
    };
    crate::process::interrupt::watch_output(&out_dir);
    let _spill = crate::tables::sql::SpillFolder(out_dir.clone());
    if remote.is_some() && engine != crate::tables::sql::Engine::Embedded {
        tracing::warn!(
            cache = %out_dir.display(),
            "the Ballista executors read the tables from the local cache folder, which they must see at the same path"
        );
    }
    let ctx = RunContext {
        shard,
        inputs,
        progress,
        engine,
        memory_limit,
        wait_for_lock: wait,
        history: history
            .as_ref()
            .map(|(location, crawl)| HistoryRun { root: location.local_root().to_path_buf(), crawl: crawl.clone() }),
        ..RunContext::new(out_dir, config)?
    };
    let mut input_errors = Vec::new();
    let mut outcomes = Vec::new();
    // Numbered in the order they run: the history's stages come last.
    let stage_count = selected.len();
    // The history's stages are run in the history phase below, under its lock.
    let (history_selected, selected): (Vec<_>, Vec<_>) = selected.into_iter().partition(|s| is_history_stage(s.name()));
    for (index, stage) in selected.iter().enumerate() {
        let writes = stage.outputs(&ctx.config);
        // The store's lock, beside the cache folder's that run_stage takes.
        let _store_lock = match &remote {
            Some(r) => Some(r.lock(stage.name(), shard, wait)?),
            None => None,
        };
        if let Some(r) = &remote {
            let reads = stage.task_inputs(&ctx.config, shard);
            let n = r.pull(&reads, &stage.own_document_inputs(), stage.name(), &writes, shard)?;
            tracing::info!(stage = stage.name(), objects = n, "pulled from {}", r.url());
        }
        let outcome = run_stage(*stage, &all, &ctx, force, Place { number: index + 1, count: stage_count })?;
        outcomes.push((stage.name(), matches!(outcome, StageOutcome::Ran(_))));
        match outcome {
            // A rerun of a run that could not read some input says so
            // again (exit 3): an up-to-date stage is no fix.
            StageOutcome::UpToDate => {
                let manifest = crate::tables::manifest::manifest_path(&ctx.out, stage.name(), shard);
                if let Some(m) = crate::tables::manifest::read_manifest_file(&manifest) {
                    input_errors.extend(m.report.input_errors);
                }
            }
            StageOutcome::Ran(report) => {
                input_errors.extend(report.input_errors);
                if let Some(r) = &remote {
                    let n = r.push(stage.name(), &writes, shard)?;
                    tracing::info!(stage = stage.name(), objects = n, "committed to {}", r.url());
                }
            }
        }
    }
    // Matched against the earlier crawls, and the night decided with its
    // repeats, before the report, which has a section on them; appended
    // once matched.
    if let Some((location, crawl)) = &history {
        let _lock = location.lock(wait)?;
        let local = location.local()?;
        let first = Place { number: selected.len() + 1, count: stage_count };
        outcomes.extend(run_in_order(&history_selected, &all, &ctx, force, first)?);
        if stage == "all" {
            let kept = crate::stages::history::append::append(local, &ctx.out, crawl, &ctx.config, &ctx.runtime)?;
            location.commit(crawl)?;
            let documents = kept.rows.get("history_documents").copied().unwrap_or(0);
            tracing::info!(history = %local.root().display(), crawl = %crawl, documents, "crawl appended to the history");
        }
    }
    // The report sums up the whole run, so it follows the last stage.
    let mut report_path = None;
    if stage == "all" || stage == "evaluate" {
        if let Some(r) = &remote {
            r.pull_all()?;
        }
        let path = crate::report::write_report(&ctx.out, &ctx.runtime)?;
        if let Some(r) = &remote {
            r.push_file(crate::report::REPORT_FILE)?;
        }
        tracing::info!(path = %path.display(), "report written");
        report_path = Some(match &remote {
            Some(r) => format!("{}/{}", r.url(), crate::report::REPORT_FILE),
            None => path.display().to_string(),
        });
    }
    let peak = log_summary(&ctx, shard, &outcomes);
    if let (Some((stage, bytes)), Some(limit)) = (peak, ctx.memory_limit) {
        warn_above_the_limit(stage, bytes, limit);
    }
    if let Some(line) = outcome_line(&ctx, shard, &outcomes, report_path.as_deref(), log_format) {
        crate::process::output::print(&format!("{line}\n"))?;
    }
    for e in &input_errors {
        tracing::error!("{e}");
    }
    Ok(RunEnd { input_errors })
}

/// Runs `stages` one after the other in a local output folder, each
/// skipped when up to date, the first at place `first` of the run and the
/// others after it: the history phase of `pipeline run --history` and of
/// `pipeline history match`. Returns each stage's name and whether it ran.
pub fn run_in_order(
    stages: &[&dyn Stage],
    all: &[Box<dyn Stage>],
    ctx: &RunContext,
    force: bool,
    first: Place,
) -> Result<Vec<(&'static str, bool)>> {
    let mut outcomes = Vec::new();
    for (index, stage) in stages.iter().enumerate() {
        let place = Place { number: first.number + index, count: first.count };
        let outcome = run_stage(*stage, all, ctx, force, place)?;
        outcomes.push((stage.name(), matches!(outcome, StageOutcome::Ran(_))));
    }
    Ok(outcomes)
}

/// The tables the selected stages read that no selected stage writes must
/// be in the local output folder `out` already: a stage run alone on a
/// folder without them is a [`MissingInput`] found before the folder or
/// its locks are made (which would otherwise be left behind), with the
/// command that makes the table, `--out` included.
fn check_earlier_tables(selected: &[&dyn Stage], all: &[Box<dyn Stage>], out: &str, config: &Config) -> Result<()> {
    let out_dir = Path::new(out);
    let written: Vec<crate::tables::Table> = selected.iter().flat_map(|s| s.outputs(config)).collect();
    for stage in selected {
        for table in stage.inputs() {
            if written.contains(&table) || crate::tables::write::table_exists(out_dir, table.name()) {
                continue;
            }
            let maker = crate::runner::plan::maker_of(table, all, config);
            let input = if maker == "ingest" { " --input CRAWL" } else { "" };
            return Err(MissingInput(format!(
                "stage {} needs table `{table}`, which is missing under {out}; run `pipeline run --stage {maker}{input} \
                 --out {out}` first (or `--stage all`)",
                stage.name()
            ))
            .into());
        }
    }
    Ok(())
}

/// The stages `--stage` names: all of them in run order, or one. A
/// history stage without `--history`, or an unknown name, is a usage error.
fn select_stages<'a>(stage: &str, all: &'a [Box<dyn Stage>], history_names: &[&str]) -> Result<Vec<&'a dyn Stage>> {
    if stage == "all" {
        return Ok(all.iter().map(|s| s.as_ref()).collect());
    }
    match all.iter().find(|s| s.name() == stage) {
        Some(s) => Ok(vec![s.as_ref()]),
        None if history_names.contains(&stage) => Err(UsageError(format!(
            "stage {stage} matches a night against a history: give --history DIR --crawl-id ID"
        ))
        .into()),
        None => {
            let mut names: Vec<&str> = all.iter().map(|s| s.name()).collect();
            names.extend(history_names.iter().filter(|h| !names.contains(h)).collect::<Vec<_>>());
            Err(UsageError(format!("unknown stage `{stage}`; stages: all, {}", names.join(", "))).into())
        }
    }
}

/// An input path that is not there, a URL this binary cannot read (`gs://`,
/// a typo such as `s4://`, `s3://` without the `s3` feature), or inputs
/// without one file to read, is a mistake in the command (exit 2) before
/// any stage runs: ingest would otherwise run on nothing and the next run
/// would call it up to date.
fn check_inputs(inputs: &[String]) -> Result<()> {
    for input in inputs.iter().filter(|i| crate::storage::location::is_url(i)) {
        crate::storage::location::Location::parse(input).map_err(|e| UsageError(format!("--input {e:#}")))?;
    }
    for input in inputs {
        let looks_like_glob = input.contains(['*', '?', '[']);
        if !crate::storage::location::is_url(input) && !looks_like_glob && !Path::new(input).exists() {
            return Err(UsageError(format!("--input {input}: no such file or folder")).into());
        }
    }
    // Object stores are listed by ingest itself (a listing costs requests).
    if inputs.iter().all(|i| !crate::storage::location::is_url(i)) {
        let (files, problems, _) = crate::ingest::inputs::expand_inputs(inputs);
        if files.is_empty() {
            let why = if problems.is_empty() { String::new() } else { format!(" ({})", problems.join("; ")) };
            return Err(UsageError(format!(
                "--input {}: no file to read{why}; folders are searched for crawl files (.warc, .arc, .wet, \
                 optionally .gz) and text corpora (.jsonl, .parquet)",
                inputs.join(" ")
            ))
            .into());
        }
    }
    Ok(())
}

/// The run's outcome for stdout, from the `decide` stage's counters:
/// what a user runs a dedup tool for. A line in words, or under `--log-format
/// json` one JSON object ([`summary_json`]). `None` when that stage was not
/// part of the run.
fn outcome_line(
    ctx: &RunContext,
    shard: Shard,
    outcomes: &[(&'static str, bool)],
    report: Option<&str>,
    format: LogFormat,
) -> Option<String> {
    outcomes.iter().find(|(stage, _)| *stage == "decide")?;
    let m = crate::tables::manifest::read_manifest_file(&crate::tables::manifest::manifest_path(
        &ctx.out, "decide", shard,
    ))?;
    let decisions = ctx.out.join("decisions").display().to_string();
    if format == LogFormat::Json {
        let ingest = crate::tables::manifest::finished_manifest(&ctx.out, "ingest").map(|m| m.report.rows);
        return Some(summary_json(&m.report.counters, ingest.as_ref(), report, &decisions).to_string());
    }
    let mut line = decisions_line(&m.report.counters);
    match report {
        Some(path) => line.push_str(&format!("; report: {path}")),
        None => line.push_str(&format!("; decisions: {decisions}")),
    }
    Some(line)
}

/// The decisions by reason, and what the removed documents weighed, from
/// the decide stage's counters.
struct Decided {
    /// Clusters' kept copies (one per cluster).
    kept: u64,
    unique: u64,
    exact: u64,
    near: u64,
    not_content: u64,
    /// Removed as repeats of earlier crawls: `None` when the decisions did
    /// not follow a history.
    repeats: Option<u64>,
    /// Bytes of HTML (record payloads) of the removed documents; `None` in a
    /// manifest written before they were counted.
    bytes_removed: Option<u64>,
    /// Characters of text of the removed documents, as `bytes_removed`.
    chars_removed: Option<u64>,
}

impl Decided {
    fn of(counters: &std::collections::BTreeMap<String, u64>) -> Decided {
        let n = |reason: &str| counters.get(reason).copied().unwrap_or(0);
        Decided {
            kept: n("kept"),
            unique: n("unique"),
            exact: n("exact_duplicate"),
            near: n("near_duplicate"),
            not_content: n("not_content"),
            repeats: counters.get(crate::stages::decide::REPEAT).copied(),
            bytes_removed: counters.get(crate::stages::decide::BYTES_REMOVED).copied(),
            chars_removed: counters.get(crate::stages::decide::CHARS_REMOVED).copied(),
        }
    }

    fn documents(&self) -> u64 {
        self.kept + self.unique + self.exact + self.near + self.not_content + self.repeats.unwrap_or(0)
    }

    /// Documents that stay: unique, clusters' kept copies, not content.
    fn staying(&self) -> u64 {
        self.kept + self.unique + self.not_content
    }
}

/// The decisions by reason in words. The night's repeats of earlier crawls
/// are named when the decisions followed the history (their counter is
/// there, zero or not): they are removed, but are not this night's
/// duplicates of its own pages. Then what the removed documents weighed.
fn decisions_line(counters: &std::collections::BTreeMap<String, u64>) -> String {
    let d = Decided::of(counters);
    let repeats = d.repeats.map(|r| format!("{r} repeat earlier crawls, ")).unwrap_or_default();
    let mut line = format!(
        "{} documents: {} kept, {repeats}{} removed ({} exact and {} near-duplicates) from {} \
         clusters, {} not content (kept, not deduplicated)",
        d.documents(),
        d.staying(),
        d.exact + d.near,
        d.exact,
        d.near,
        d.kept,
        d.not_content,
    );
    if let (Some(bytes), Some(chars)) = (d.bytes_removed, d.chars_removed) {
        line.push_str(&format!(
            "; removed {bytes} bytes of HTML ({}) and {chars} characters of text",
            indicatif::HumanBytes(bytes)
        ));
    }
    line
}

/// The run's outcome as one JSON object, named numbers a scheduler reads
/// without parsing words: `documents` = `kept` + `removed`; `removed` =
/// `exact` + `near` + `repeats` (the documents with `is_kept` false);
/// `clusters` (each with one kept copy), `unique` and `not_content` are
/// among `kept`. `repeats` is null without a history; `bytes_removed`
/// (HTML, the removed records' payloads) and `chars_removed` (their text)
/// are null for a decide stage of an older version; `rejects` and
/// `revisits` are ingest's records that became no document. `report` is
/// null when the run wrote none.
fn summary_json(
    counters: &std::collections::BTreeMap<String, u64>,
    ingest_rows: Option<&std::collections::BTreeMap<String, u64>>,
    report: Option<&str>,
    decisions: &str,
) -> serde_json::Value {
    let d = Decided::of(counters);
    let ingest = |table: &str| ingest_rows.and_then(|rows| rows.get(table).copied());
    serde_json::json!({
        "documents": d.documents(),
        "kept": d.staying(),
        "removed": d.exact + d.near + d.repeats.unwrap_or(0),
        "exact": d.exact,
        "near": d.near,
        "repeats": d.repeats,
        "clusters": d.kept,
        "unique": d.unique,
        "not_content": d.not_content,
        "bytes_removed": d.bytes_removed,
        "chars_removed": d.chars_removed,
        "rejects": ingest("rejects"),
        "revisits": ingest("revisits"),
        "report": report,
        "decisions": decisions,
    })
}

/// One log line per stage of the run: whether it ran or was up to date,
/// its rows, wall and CPU time and peak resident memory (from its
/// manifest). Returns the stage that ran with the highest peak, and that
/// peak.
fn log_summary(ctx: &RunContext, shard: Shard, outcomes: &[(&'static str, bool)]) -> Option<(&'static str, u64)> {
    let mut peak: Option<(&'static str, u64)> = None;
    for &(stage, ran) in outcomes {
        let Some(m) = crate::tables::manifest::read_manifest_file(&crate::tables::manifest::manifest_path(
            &ctx.out, stage, shard,
        )) else {
            continue;
        };
        let outcome = if ran { "ran" } else { "up to date" };
        tracing::info!(
            stage,
            outcome,
            wall_seconds = (m.wall_seconds * 100.0).round() / 100.0,
            cpu_seconds = (m.cpu_seconds * 100.0).round() / 100.0,
            peak_rss_mib = m.peak_rss_bytes.map(|b| b >> 20),
            rows = %Counts(&m.report.rows),
            "summary"
        );
        if let Some(bytes) = m.peak_rss_bytes.filter(|_| ran) {
            if peak.is_none_or(|(_, most)| bytes > most) {
                peak = Some((stage, bytes));
            }
        }
    }
    peak
}

/// Says so when a stage's peak resident memory went above the run's
/// memory limit: the limit bounds the data a stage holds (the SQL
/// engine's pool, the batches and buffers sized from it), not the program
/// itself (its code, the engine's sessions, the thread pools' stacks and
/// the allocator's arenas), which a small limit leaves outside.
fn warn_above_the_limit(stage: &str, peak: u64, limit: crate::process::memory::RunLimit) {
    use crate::process::memory::human_bytes;
    if peak <= limit.bytes as u64 {
        return;
    }
    tracing::warn!(
        stage,
        peak_rss_bytes = peak,
        limit_bytes = limit.bytes,
        "stage {stage} peaked at {} resident, above the memory limit of {}: the limit bounds the data a stage \
         holds, not the program itself (see --memory-limit in docs/usage.md); give a larger limit, or keep the \
         process's limit (a container's) above that peak",
        human_bytes(peak as usize),
        human_bytes(limit.bytes)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_line_names_the_repeats_when_the_decisions_followed_the_history() {
        let counters = |pairs: &[(&str, u64)]| pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let night = [("kept", 2), ("unique", 20), ("exact_duplicate", 3), ("near_duplicate", 1), ("not_content", 1)];
        assert_eq!(
            decisions_line(&counters(&night)),
            "27 documents: 23 kept, 4 removed (3 exact and 1 near-duplicates) from 2 clusters, \
             1 not content (kept, not deduplicated)"
        );
        let with_history: Vec<(&str, u64)> = night.iter().copied().chain([("repeat", 1754)]).collect();
        assert_eq!(
            decisions_line(&counters(&with_history)),
            "1781 documents: 23 kept, 1754 repeat earlier crawls, 4 removed (3 exact and 1 near-duplicates) \
             from 2 clusters, 1 not content (kept, not deduplicated)"
        );
        let none: Vec<(&str, u64)> = night.iter().copied().chain([("repeat", 0)]).collect();
        assert!(
            decisions_line(&counters(&none)).starts_with("27 documents: 23 kept, 0 repeat earlier crawls, 4 removed")
        );
    }

    #[test]
    fn the_summary_says_what_the_removed_documents_weighed_in_words_and_as_json() {
        let counters: std::collections::BTreeMap<String, u64> = [
            ("kept", 2),
            ("unique", 20),
            ("exact_duplicate", 3),
            ("near_duplicate", 1),
            ("not_content", 1),
            ("bytes_removed", 1_572_864),
            ("chars_removed", 4_321),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        assert!(
            decisions_line(&counters)
                .ends_with("; removed 1572864 bytes of HTML (1.50 MiB) and 4321 characters of text"),
            "{}",
            decisions_line(&counters)
        );
        let ingest = [("documents".to_string(), 27), ("rejects".to_string(), 5)].into();
        let json = summary_json(&counters, Some(&ingest), None, "out/decisions");
        assert_eq!(
            json,
            serde_json::json!({
                "documents": 27, "kept": 23, "removed": 4, "exact": 3, "near": 1, "repeats": null,
                "clusters": 2, "unique": 20, "not_content": 1, "bytes_removed": 1_572_864,
                "chars_removed": 4_321, "rejects": 5, "revisits": null, "report": null,
                "decisions": "out/decisions",
            })
        );
    }
}

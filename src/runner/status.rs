//! `pipeline status`: what state each stage's tables in an output folder are
//! in, read from the manifests alone.
//!
//! The question it answers is the one a scheduler asks before or after a
//! night's run: would `pipeline run` with these options do anything? So it
//! computes each stage's [`Plan`] from the same options as `run` and
//! compares it with the stage's manifests, without reading a table.

use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

use crate::runner::plan::{maker_of, Plan};
use crate::stages::stage::{RunContext, Stage, AS_GIVEN};
use crate::tables::manifest::{completion, Completion, Manifest};
use crate::tables::shard::Shard;

/// The state of one stage's tables.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum State {
    /// A run would skip it.
    UpToDate,
    /// Its tables exist but a run would rewrite them, for these reasons.
    Stale { reasons: Vec<String> },
    /// It never finished (or its tables are gone).
    Missing { reason: String },
    /// It ran sharded and some of its N tasks have not finished.
    TasksMissing { count: u32, missing: Vec<u32> },
    /// A run of it was stopped (Ctrl-C, `kill -9`, a crash) before it
    /// finished: its lock file names a process that is gone.
    Interrupted { run: String },
    /// A run of it holds its lock now.
    Running { run: String },
}

impl State {
    /// The state's name as printed (`up to date`, `stale`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            State::UpToDate => "up to date",
            State::Stale { .. } => "stale",
            State::Missing { .. } => "missing",
            State::TasksMissing { .. } => "tasks missing",
            State::Interrupted { .. } => "interrupted",
            State::Running { .. } => "running",
        }
    }

    /// Why a stage is in this state, in one line ("" when up to date).
    pub fn why(&self) -> String {
        match self {
            State::UpToDate => String::new(),
            State::Stale { reasons } => reasons.join("; "),
            State::Missing { reason } => reason.clone(),
            State::TasksMissing { count, missing } => {
                let list: Vec<String> = missing.iter().map(|i| format!("{i}/{count}")).collect();
                format!("tasks {} have not finished", list.join(", "))
            }
            State::Interrupted { run } => format!("the run of {run} was interrupted; run again to resume"),
            State::Running { run } => format!("being run by {run}"),
        }
    }
}

/// One line of `pipeline status`.
#[derive(Debug, Clone, Serialize)]
pub struct StageStatus {
    pub stage: &'static str,
    #[serde(flatten)]
    pub state: State,
    /// Rows per table written by its last finished run (all tasks).
    pub rows: BTreeMap<String, u64>,
    /// When its last finished run started (Unix seconds; the earliest task).
    pub ran_at_unix: Option<u64>,
    /// The number of tasks it ran as (1 unsharded).
    pub tasks: Option<u32>,
}

/// Where the tables of an output folder are: present locally, or, for an
/// object-store output whose manifests alone were pulled, committed as the
/// manifest lists them.
pub enum Tables {
    Local,
    Committed,
}

impl Tables {
    fn present(&self, out: &std::path::Path, manifest: &Manifest, table: &str) -> bool {
        match self {
            Tables::Local => crate::tables::write::table_exists(out, table),
            Tables::Committed => manifest.objects.contains_key(table),
        }
    }
}

/// The status of every stage of `stages` (in pipeline order) under
/// `ctx.out`, for a run with `ctx`'s config and inputs.
pub fn status(stages: &[Box<dyn Stage>], ctx: &RunContext, tables: &Tables) -> Vec<StageStatus> {
    let mut not_up_to_date: BTreeSet<&str> = BTreeSet::new();
    let mut lines = Vec::new();
    for stage in stages {
        let line = stage_status(stage.as_ref(), stages, ctx, tables, &not_up_to_date);
        if line.state != State::UpToDate {
            not_up_to_date.insert(stage.name());
        }
        lines.push(line);
    }
    lines
}

fn stage_status(
    stage: &dyn Stage,
    all: &[Box<dyn Stage>],
    ctx: &RunContext,
    tables: &Tables,
    not_up_to_date: &BTreeSet<&str>,
) -> StageStatus {
    let mut line = StageStatus {
        stage: stage.name(),
        state: State::UpToDate,
        rows: BTreeMap::new(),
        ran_at_unix: None,
        tasks: None,
    };
    let (running, interrupted) = lock_holders(&ctx.out, stage.name());
    if let Some(run) = running {
        line.state = State::Running { run };
        return line;
    }
    let tasks = match completion(&ctx.out, stage.name()) {
        Completion::NotRun => {
            line.state = match interrupted {
                Some(run) => State::Interrupted { run },
                None => State::Missing { reason: "never ran".into() },
            };
            return line;
        }
        Completion::Partial { count, missing } => {
            line.state = match interrupted {
                Some(run) => State::Interrupted { run },
                None => State::TasksMissing { count, missing },
            };
            return line;
        }
        Completion::Complete(tasks) => tasks,
    };
    line.tasks = Some(tasks.len() as u32);
    if let Some(merged) = crate::tables::manifest::merge_task_manifests(tasks.clone()) {
        line.rows = merged.report.rows;
        line.ran_at_unix = Some(merged.started_at_unix);
    }
    let outputs = stage.outputs(&ctx.config);
    if let Some(table) = outputs.iter().find(|t| !tasks.iter().all(|m| tables.present(&ctx.out, m, t.name()))) {
        line.state = State::Missing { reason: format!("table `{table}` is gone") };
        return line;
    }
    let mut reasons: Vec<String> = Vec::new();
    // An input whose maker will rerun changes under this stage, whatever
    // its manifest says today.
    let upstream: BTreeSet<&str> = stage
        .inputs()
        .into_iter()
        .map(|t| maker_of(t, all, &ctx.config))
        .filter(|m| not_up_to_date.contains(m))
        .collect();
    reasons.extend(upstream.iter().map(|m| format!("stage {m} is not up to date")));
    for task in &tasks {
        let shard: Shard = task.shard.parse().unwrap_or(Shard::WHOLE);
        match Plan::of(stage, all, ctx, shard) {
            Ok(plan) => {
                for why in plan.changes(task) {
                    if !reasons.contains(&why) {
                        reasons.push(why);
                    }
                }
            }
            Err(e) => reasons.push(format!("{e:#}")),
        }
    }
    if !reasons.is_empty() {
        line.state = State::Stale { reasons };
    }
    line
}

/// The runs named by the lock files of `stage`'s tasks under `out`: one
/// that is running, and one whose process is gone (interrupted), each as
/// "<task> (pid P on HOST, started T)".
fn lock_holders(out: &std::path::Path, stage: &str) -> (Option<String>, Option<String>) {
    let (mut running, mut interrupted) = (None, None);
    let Ok(entries) = std::fs::read_dir(out.join(crate::tables::lock::LOCK_DIR)) else { return (None, None) };
    let mut paths: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().is_some_and(|n| crate::tables::lock::stage_lock_task(&n.to_string_lossy(), stage).is_some())
        })
        .collect();
    paths.sort();
    for path in paths {
        let Some(holder) = crate::tables::lock::read_holder(&path) else { continue };
        let text = format!("{} ({holder})", holder.task);
        if holder.is_gone() {
            interrupted.get_or_insert(text);
        } else {
            running.get_or_insert(text);
        }
    }
    (running, interrupted)
}

/// The inputs the run in `out` was given (`--input`, its lists read), from
/// its ingest manifest, relative paths made absolute against the folder it
/// ran in: what `pipeline status` without `--input` judges the run
/// against, so that it answers for the run's own crawl wherever it is
/// asked from. `None` when ingest has not finished there, or ran before
/// manifests recorded its inputs.
pub fn recorded_inputs(out: &std::path::Path) -> Option<Vec<String>> {
    let manifest = crate::tables::manifest::finished_manifest(out, "ingest")?;
    let given = manifest.external_inputs[AS_GIVEN]["inputs"].as_array()?;
    let inputs = given
        .iter()
        .filter_map(serde_json::Value::as_str)
        .map(|input| match &manifest.working_dir {
            Some(dir) if !crate::storage::location::is_url(input) && std::path::Path::new(input).is_relative() => {
                std::path::Path::new(dir).join(input).display().to_string()
            }
            _ => input.to_string(),
        })
        .collect();
    Some(inputs)
}

/// True when a run would do nothing: every stage is up to date.
pub fn all_up_to_date(lines: &[StageStatus]) -> bool {
    lines.iter().all(|l| l.state == State::UpToDate)
}

/// The status as an aligned table for people.
pub fn table_text(lines: &[StageStatus]) -> String {
    let rows: Vec<[String; 5]> = lines
        .iter()
        .map(|l| {
            let tasks = match l.tasks {
                Some(n) if n > 1 => format!(" ({n} tasks)"),
                _ => String::new(),
            };
            [
                l.stage.to_string(),
                format!("{}{tasks}", l.state.name()),
                l.ran_at_unix.map(crate::process::logging::utc_text).unwrap_or_default(),
                crate::tables::manifest::rows_text(&l.rows),
                l.state.why(),
            ]
        })
        .collect();
    let header = ["stage", "state", "ran at (UTC)", "rows", "why"].map(String::from);
    let widths: Vec<usize> = (0..4)
        .map(|i| std::iter::once(&header).chain(&rows).map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut text = String::new();
    for r in std::iter::once(&header).chain(&rows) {
        let mut cells: Vec<String> = (0..4).map(|i| format!("{:<w$}", r[i], w = widths[i])).collect();
        cells.push(r[4].clone());
        text.push_str(cells.join("  ").trim_end());
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_aligns_columns_and_says_why() {
        let lines = vec![
            StageStatus {
                stage: "ingest",
                state: State::UpToDate,
                rows: BTreeMap::from([("documents".into(), 818)]),
                ran_at_unix: Some(1_795_578_634),
                tasks: Some(1),
            },
            StageStatus {
                stage: "tokens",
                state: State::TasksMissing { count: 4, missing: vec![1, 3] },
                rows: BTreeMap::new(),
                ran_at_unix: None,
                tasks: None,
            },
        ];
        assert_eq!(
            table_text(&lines),
            "stage   state          ran at (UTC)         rows           why\n\
             ingest  up to date     2026-11-25 03:50:34  documents=818\n\
             tokens  tasks missing                                      tasks 1/4, 3/4 have not finished\n"
        );
        assert!(!all_up_to_date(&lines));
        assert!(all_up_to_date(&lines[..1]));
    }

    #[test]
    fn json_lines_name_the_state_and_its_details() {
        let line = StageStatus {
            stage: "verify",
            state: State::Stale { reasons: vec!["config changed: threshold".into()] },
            rows: BTreeMap::new(),
            ran_at_unix: Some(5),
            tasks: Some(1),
        };
        let v = serde_json::to_value(&line).unwrap();
        assert_eq!(v["state"], "stale");
        assert_eq!(v["reasons"][0], "config changed: threshold");
        assert_eq!(v["stage"], "verify");
    }
}

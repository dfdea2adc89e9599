//! Running one stage: its lock, its inputs checked, skipped when up to
//! date, its manifest written after its tables are published.

use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::time::Instant;

use crate::process::logging::{now_unix, Counts};
use crate::runner::plan::{maker_of, Plan};
use crate::stages::stage::{MissingInput, RunContext, Stage, StageReport};
use crate::tables::manifest::{manifest_path, read_manifest_file, remove_stale_manifests, write_manifest, Manifest};
use crate::tables::write::table_exists;

/// Outcome of asking the runner for one stage.
#[derive(Debug, Clone, PartialEq)]
pub enum StageOutcome {
    Ran(StageReport),
    UpToDate,
}

/// A stage's place in its run: the `number`th of `count` stages, which
/// its lines say as `[number/count]` (and in the fields `stage_number`
/// and `stage_count`), so a long run tells how far it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// From 1, in the order the run runs its stages.
    pub number: usize,
    /// The stages the run was asked for (its history's included).
    pub count: usize,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}/{}]", self.number, self.count)
    }
}

/// Runs `stage`, at `place` in its run, unless it is up to date (and
/// `force` is off).
pub fn run_stage(
    stage: &dyn Stage,
    all: &[Box<dyn Stage>],
    ctx: &RunContext,
    force: bool,
    place: Place,
) -> Result<StageOutcome> {
    let shard = ctx.shard;
    if !shard.is_whole() && !stage.shardable() {
        bail!("stage {} cannot be sharded; only map stages take --shard", stage.name());
    }
    // Held until the stage's tables and manifest are published: a second
    // run of this task waits or refuses before it even checks whether the
    // stage is up to date.
    let lock = crate::tables::lock::stage_lock_path(&ctx.out, stage.name(), shard);
    let _lock = crate::tables::lock::acquire(
        &lock,
        &crate::tables::lock::stage_task_name(stage.name(), shard),
        ctx.wait_for_lock,
    )?;
    crate::runner::leftovers::remove_left_by_dead_runs(&ctx.out);
    for table in stage.task_inputs(&ctx.config, shard) {
        let maker = maker_of(table, all, &ctx.config);
        if !table_exists(&ctx.out, table.name()) {
            return Err(MissingInput(format!(
                "stage {} needs table `{table}`, which is missing under {}; run `pipeline run --stage {maker}` first (or `--stage all`)",
                stage.name(),
                ctx.out.display()
            ))
            .into());
        }
        crate::tables::write::check_table_schema(&ctx.out, table.name()).with_context(|| {
            format!(
                "stage {} cannot read its input; rerun the stage that writes it: `pipeline run --stage {maker} --force`",
                stage.name()
            )
        })?;
    }
    let plan = Plan::of(stage, all, ctx, shard)?;
    if !force {
        if let Some(m) = read_manifest_file(&manifest_path(&ctx.out, stage.name(), shard)) {
            let outputs_present = stage.outputs(&ctx.config).iter().all(|t| table_exists(&ctx.out, t.name()));
            if m.fingerprint == plan.fingerprint && outputs_present {
                tracing::info!(
                    stage = stage.name(),
                    stage_number = place.number,
                    stage_count = place.count,
                    "{place} up to date, skipped (use --force to rerun)"
                );
                return Ok(StageOutcome::UpToDate);
            }
        }
    }
    remove_stale_manifests(&ctx.out, stage.name(), shard)?;
    let (number, count) = (place.number, place.count);
    if shard.is_whole() {
        tracing::info!(stage = stage.name(), stage_number = number, stage_count = count, "{place} running");
    } else {
        tracing::info!(stage = stage.name(), stage_number = number, stage_count = count, shard = %shard, "{place} running");
    }
    let _stage = crate::process::logging::enter_stage(stage.name());
    let started_at_unix = now_unix();
    let cpu_before = process_cpu_seconds();
    crate::process::memory::start_resident_peak();
    let t0 = Instant::now();
    let report = stage
        .run(ctx)
        .map_err(|e| match crate::process::memory::exhausted_hint(&e, ctx.memory_limit) {
            Some(hint) => e.context(hint),
            None => crate::tables::write::name_the_disk(e, &ctx.out),
        })
        .with_context(|| format!("stage {} failed", stage.name()))?;
    let peak_rss_bytes = crate::process::memory::resident_peak_bytes();
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
        peak_rss_bytes,
        objects: BTreeMap::new(),
        working_dir: std::env::current_dir().ok().map(|d| d.display().to_string()),
    };
    write_manifest(&manifest_path(&ctx.out, stage.name(), shard), &manifest)
        .map_err(|e| crate::tables::write::name_the_disk(e, &ctx.out))
        .with_context(|| format!("stage {} failed", stage.name()))?;
    tracing::info!(
        stage = stage.name(),
        stage_number = number,
        stage_count = count,
        seconds = (manifest.wall_seconds * 100.0).round() / 100.0,
        peak_rss_mib = manifest.peak_rss_bytes.map(|b| b >> 20),
        rows = %Counts(&report.rows),
        "{place} done"
    );
    Ok(StageOutcome::Ran(report))
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

//! The command line of `pipeline` (`src/main.rs` only calls [`main`]): it
//! parses the command line ([`args`]), hands each command to the library
//! (`pipeline run` to [`crate::runner::run`]) and maps how it ended to an
//! exit code.
//!
//! Why in the library and not in the binary: built in the binary, this
//! module compiled every generic it uses (DataFusion's sessions and
//! streams, arrow's writers) a second time, alone and last, after the
//! library: on 2 cores the release build of the library and the binary
//! took 127 s, against 87 s with this module in the library.
//!
//! Exit codes: 0 success; 1 a stage failed (`status`: some stage is not up
//! to date); 2 bad usage (unknown stage, missing input table or unfinished
//! tasks of a sharded stage, bad config, a memory limit too small, a
//! mistyped --out, an input URL this build cannot read: `gs://`, a typo,
//! `s3://` without feature `s3`); 3 the run finished but some input files could not be
//! read or gave nothing but rejects (their paths are logged, and listed in
//! `ingest_files`, or were cut short: a damaged crawl file); 4 another run
//! holds the output folder, the lock of a stage's task or the history, an
//! export reads the folder a run would write, or a run writes the folder
//! an export would read, and `--wait` was not given; 130
//! interrupted (Ctrl-C, SIGTERM).

mod args;

use anyhow::{Context, Result};
use clap::Parser;
use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use crate::history::HistoryLocation;
use crate::process::logging::LogFormat;
use crate::process::output::{eprint_line, print};
use crate::runner::run::local_out;
use crate::stages;
use crate::stages::stage::{HistoryRun, MissingInput, RunContext, UsageError};
use crate::tables::shard::Shard;
use args::*;

/// Runs `pipeline` with the process's arguments; its exit code.
pub fn main() -> ExitCode {
    // Before any thread starts: every thread inherits the blocked signals.
    crate::process::interrupt::install();
    let cli = Cli::parse();
    init_logging(cli.verbose, cli.quiet, cli.log_format);
    let quiet = cli.quiet;
    let result = match cli.command {
        Command::Run(args) => run(args, quiet, cli.log_format),
        Command::Query(args) => query(args).map(|_| ExitCode::SUCCESS),
        Command::Explain(args) => explain(args).map(|_| ExitCode::SUCCESS),
        Command::Report(args) => report(args).map(|_| ExitCode::SUCCESS),
        Command::Status(args) => status(args),
        Command::History(args) => history(args),
        Command::Export(args) => export(args, quiet),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            let usage = e.downcast_ref::<UsageError>().is_some() || e.downcast_ref::<MissingInput>().is_some();
            let busy = e.downcast_ref::<crate::tables::lock::Busy>().is_some();
            let message = crate::process::terminal::escape_controls(&format!("{e:#}")).into_owned();
            crate::process::output::eprint_line(&format!("error: {message}"));
            ExitCode::from(if busy {
                crate::tables::lock::EXIT_BUSY
            } else if usage {
                2
            } else {
                1
            })
        }
    }
}

fn init_logging(verbose: u8, quiet: bool, format: LogFormat) {
    let level = match (quiet, verbose) {
        (true, _) => "error",
        (false, 0) => "info",
        (false, 1) => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("NEARDUP_LOG").unwrap_or_else(|_| {
        // Other crates speak at warn and above; html5ever's tree-builder
        // notes ("foster parenting not implemented") are about the
        // parser, not the data, and would flood the log on real crawls.
        let others = if quiet { "error" } else { "warn" };
        tracing_subscriber::EnvFilter::new(format!("neardup={level},pipeline={level},html5ever=error,{others}"))
    });
    crate::process::logging::init(format, filter);
}

/// `pipeline run`: the runner runs the stages and the report, handed to
/// it from the layers above it.
fn run(args: RunArgs, quiet: bool, log_format: LogFormat) -> Result<ExitCode> {
    let config = job_config(&args.job)?;
    // Only ingest reads the inputs: a later stage run alone needs neither
    // --input nor the bundled sample.
    let inputs = match args.job.input.is_empty() && !matches!(args.stage.as_str(), "all" | "ingest") {
        true => Vec::new(),
        false => job_inputs(&args.job)?,
    };
    let history = match (args.night.history, args.night.crawl_id) {
        (Some(spec), Some(crawl)) => {
            Some(crate::runner::run::NightHistory { spec, cache: args.night.history_cache.history_cache, crawl })
        }
        _ => None,
    };
    let request = crate::runner::run::RunRequest {
        stage: args.stage,
        shard: args.shard.unwrap_or(Shard::WHOLE),
        out: args.out,
        cache: args.cache.cache,
        force: args.force,
        wait: args.wait,
        threads: args.threads,
        memory_limit: args.memory_limit,
        engine: args.engine,
        history,
        config,
        inputs,
        progress: !quiet && std::io::stderr().is_terminal(),
        log_format,
    };
    let end = crate::runner::run::run(request)?;
    Ok(if end.input_errors.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(3) })
}

fn query(args: QueryArgs) -> Result<()> {
    if matches!(args.format, Format::Parquet) && args.output.is_none() {
        return Err(UsageError("--format parquet writes a file: give it with --output FILE".into()).into());
    }
    let rt = crate::process::parallelism::runtime()?;
    let out = finished_run(&args.out, &args.cache)?;
    let history = match &args.history {
        Some(spec) if !crate::storage::location::is_url(spec) && !Path::new(spec).is_dir() => {
            return Err(UsageError(format!("--history {spec}: no such folder")).into())
        }
        Some(spec) => Some(HistoryLocation::open(spec, args.history_cache.history_cache.clone())?),
        None => None,
    };
    let text = rt.block_on(async {
        let ctx = crate::tables::sql::session_over(&out).await?;
        if let Some(spec) = &history {
            stages::history::session::register(spec.local()?, &ctx).await?;
        }
        // `SHOW TABLES`, `SHOW COLUMNS FROM t` and the information_schema
        // views: what a new user tries first in a folder of tables.
        ctx.sql("SET datafusion.catalog.information_schema = true").await?.collect().await?;
        let frame = ctx.sql(&args.sql).await.map_err(|e| sql_error(e, &ctx, &args.out))?;
        let schema = std::sync::Arc::new(frame.schema().as_arrow().clone());
        let batches = frame.collect().await.map_err(|e| sql_error(e, &ctx, &args.out))?;
        let mut bytes = Vec::new();
        match args.format {
            Format::Table => {
                // For people, so crawled text is escaped (the other formats keep it).
                // With the schema, an empty result still shows its header.
                let table = arrow::util::pretty::pretty_format_batches_with_schema(schema, &batches)?.to_string();
                bytes = format!("{}\n", crate::process::terminal::escape_controls(&table)).into_bytes();
            }
            Format::Csv => {
                let mut w = arrow::csv::Writer::new(&mut bytes);
                // The header is written with the first batch: an empty
                // result gets one with no rows.
                if batches.is_empty() {
                    w.write(&arrow::array::RecordBatch::new_empty(schema))?;
                }
                for b in &batches {
                    w.write(b)?;
                }
                drop(w);
                // On a terminal it is read by people too: crawled control
                // characters escaped as the table's are; a file or a pipe
                // gets the data as it is.
                if args.output.is_none() && std::io::stdout().is_terminal() {
                    let escaped =
                        crate::process::terminal::escape_controls(&String::from_utf8_lossy(&bytes)).into_owned();
                    bytes = escaped.into_bytes();
                }
            }
            Format::Json => {
                let mut w = arrow::json::LineDelimitedWriter::new(&mut bytes);
                for b in &batches {
                    w.write(&crate::tables::json::lossless(b)?)?;
                }
                w.finish()?;
            }
            Format::Parquet => {
                let mut w = parquet::arrow::ArrowWriter::try_new(&mut bytes, schema, None)?;
                for b in &batches {
                    w.write(b)?;
                }
                w.close()?;
            }
        }
        anyhow::Ok(bytes)
    })?;
    match &args.output {
        Some(path) => crate::tables::write::write_file_atomically(path, &text)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => print(&text)?,
    }
    Ok(())
}

/// A query's SQL error, said once: DataFusion's errors repeat their
/// message in their sources (a diagnostic wraps the error it describes),
/// which `{:#}` would print two or three times. A table that does not
/// exist gets the list of those that do.
fn sql_error(
    e: datafusion::error::DataFusionError,
    ctx: &datafusion::prelude::SessionContext,
    out: &str,
) -> anyhow::Error {
    let message = e.to_string();
    if !(message.contains("table '") && message.contains("' not found")) {
        return anyhow::Error::msg(message);
    }
    let options = ctx.copied_config().options().catalog.clone();
    let schema = ctx.catalog(&options.default_catalog).and_then(|c| c.schema(&options.default_schema));
    let mut tables = schema.map(|s| s.table_names()).unwrap_or_default();
    tables.sort();
    match tables.is_empty() {
        true => anyhow::anyhow!("{message}; --out {out} has no tables"),
        false => anyhow::anyhow!("{message}; the tables of --out {out}: {}", tables.join(", ")),
    }
}

fn status(args: StatusArgs) -> Result<ExitCode> {
    let config = job_config(&args.job)?;
    let (out, remote) = local_out(&args.out, args.cache.cache.clone(), Shard::WHOLE)?;
    if let Some(r) = &remote {
        r.pull_manifests()?;
    }
    // Without --input, the run is judged against its own inputs, not the
    // sample: unchanged inputs are not "stale".
    let recorded = if args.job.input.is_empty() { crate::runner::status::recorded_inputs(&out) } else { None };
    let inputs = match recorded {
        Some(inputs) => inputs,
        None => job_inputs(&args.job)?,
    };
    // With --history, the history's stages too, judged against its crawls
    // (an object-store history is pulled into its cache first, as a run
    // pulls it before matching).
    let history = match (&args.night.history, &args.night.crawl_id) {
        (Some(dir), Some(crawl)) => {
            crate::history::check_crawl_id(crawl).map_err(|e| UsageError(format!("--crawl-id: {e:#}")))?;
            let location = HistoryLocation::open(dir, args.night.history_cache.history_cache.clone())
                .map_err(|e| UsageError(format!("--history {dir}: {e:#}")))?;
            Some(HistoryRun { root: location.local()?.root().to_path_buf(), crawl: crawl.clone() })
        }
        _ => None,
    };
    let all = stages::in_run_order(history.is_some());
    let ctx = RunContext { inputs, history, ..RunContext::new(out, config)? };
    let tables = match remote {
        Some(_) => crate::runner::status::Tables::Committed,
        None => crate::runner::status::Tables::Local,
    };
    let lines = crate::runner::status::status(&all, &ctx, &tables);
    let mut text = String::new();
    match args.format {
        StatusFormat::Table => text = crate::runner::status::table_text(&lines),
        StatusFormat::Json => {
            for line in &lines {
                text.push_str(&serde_json::to_string(line)?);
                text.push('\n');
            }
        }
    }
    print(&text)?;
    Ok(if crate::runner::status::all_up_to_date(&lines) { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn report(args: ReportArgs) -> Result<()> {
    let (out, remote) = finished_out(&args.out, &args.cache)?;
    check_output_folder(&out, &args.out)?;
    let rt = crate::process::parallelism::runtime()?;
    let path = crate::report::write_report(&out, &rt)?;
    match remote {
        Some(r) => {
            r.push_file(crate::report::REPORT_FILE)?;
            print(&format!("{}/{}\n", r.url(), crate::report::REPORT_FILE))?;
        }
        None => print(&format!("{}\n", path.display()))?,
    }
    Ok(())
}

fn history(args: HistoryArgs) -> Result<ExitCode> {
    let location = HistoryLocation::open(&args.history, args.cache.history_cache.clone())
        .map_err(|e| UsageError(format!("--history {}: {e:#}", args.history)))?;
    let _lock = match args.action {
        HistoryAction::List => None,
        _ => Some(location.lock(args.wait)?),
    };
    match args.action {
        HistoryAction::List => {
            for crawl in location.crawls()? {
                let rows: Vec<String> = crawl.rows.iter().map(|(t, n)| format!("{t}={n}")).collect();
                let text = serde_json::to_string(&crawl.verification_text)?;
                print(&format!("{}\t{text}\t{}\n", crawl.crawl, rows.join(" ")))?;
            }
        }
        HistoryAction::Match(night) => {
            let config = night_settings(&night)?;
            // The history's stages, as `pipeline run --history` runs them:
            // with manifests, skipped when up to date.
            let ctx = RunContext {
                memory_limit: crate::process::memory::run_limit(night.memory_limit),
                wait_for_lock: args.wait,
                history: Some(HistoryRun {
                    root: location.local()?.root().to_path_buf(),
                    crawl: night.crawl_id.clone(),
                }),
                ..RunContext::new(night.out.clone(), config)?
            };
            // Then the stages that follow them (decide: the night's
            // decisions remove its repeats).
            let all = stages::in_run_order(true);
            let phase = stages::history_phase(true);
            let matching: Vec<&dyn crate::stages::stage::Stage> =
                all.iter().filter(|s| phase.contains(&s.name())).map(|s| s.as_ref()).collect();
            let mut rows = std::collections::BTreeMap::new();
            let first = crate::runner::stage_run::Place { number: 1, count: matching.len() };
            for (stage, _) in crate::runner::run::run_in_order(&matching, &all, &ctx, false, first)? {
                let manifest = crate::tables::manifest::manifest_path(&ctx.out, stage, Shard::WHOLE);
                rows.extend(
                    crate::tables::manifest::read_manifest_file(&manifest).map(|m| m.report.rows).unwrap_or_default(),
                );
            }
            let count = |table: &str| rows.get(table).copied().unwrap_or(0);
            let decide = crate::tables::manifest::read_manifest(&ctx.out, stages::decide::NAME);
            let removed = decide.and_then(|m| m.report.counters.get(stages::decide::REPEAT).copied()).unwrap_or(0);
            print(&format!(
                "{}: {} candidate repeats of earlier crawls, {} verified, {} pages in clusters across crawls, \
                 {removed} documents removed from the night's decisions as repeats\n",
                night.crawl_id,
                count("history_candidates"),
                count("repeats"),
                count("crawl_clusters")
            ))?;
            // The report has a section on the night's repeats.
            if night.out.join(crate::report::REPORT_FILE).is_file() {
                crate::report::write_report(&night.out, &ctx.runtime)?;
            }
        }
        HistoryAction::Append(night) => {
            let config = night_settings(&night)?;
            let rt = crate::process::parallelism::runtime()?;
            let kept = stages::history::append::append(location.local()?, &night.out, &night.crawl_id, &config, &rt)?;
            location.commit(&night.crawl_id)?;
            let documents = kept.rows.get("history_documents").copied().unwrap_or(0);
            print(&format!("{}: {documents} documents\n", night.crawl_id))?;
        }
        HistoryAction::Drop { crawl_id } => {
            crate::history::check_crawl_id(&crawl_id).map_err(|e| UsageError(format!("{e:#}")))?;
            if !location.drop_crawl(&crawl_id)? {
                eprint_line(&format!("no crawl `{crawl_id}` in {}", args.history));
                return Ok(ExitCode::from(1));
            }
        }
        HistoryAction::Compact => {
            let changed = location.compact()?;
            print(&format!("{} crawls compacted\n", changed.len()))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn export(args: ExportArgs, quiet: bool) -> Result<ExitCode> {
    use crate::export::Format;
    if args.keep_boilerplate && matches!(args.format, Format::Warc | Format::Cdxj) {
        return Err(UsageError(
            "--keep-boilerplate is for --format parquet and jsonl (a WARC keeps whole pages)".into(),
        )
        .into());
    }
    crate::process::parallelism::configure(None)?;
    let (out, remote) = local_out(&args.out, args.cache.cache.clone(), Shard::WHOLE)?;
    if !out.is_dir() {
        return Err(UsageError(format!("--out {}: no such output folder", args.out)).into());
    }
    // Held to the end: no run starts writing the tables meanwhile, and
    // none is writing them now (the cache's, for an object-store --out).
    let _lock = crate::tables::lock::acquire_export(&out, args.wait)?;
    if let Some(r) = &remote {
        loop {
            r.wait_for_runs(args.wait)?;
            // ingest_files tells the WARC formats which inputs are gzipped per record.
            use crate::tables::columns::{boilerplate, decisions, documents, ingest_files};
            let reads = [decisions::NAME, documents::NAME, boilerplate::NAME, ingest_files::NAME];
            let n = r.pull(&reads, &[], "export", &[], Shard::WHOLE)?;
            tracing::info!(objects = n, cache = %out.display(), "pulled {}", r.url());
            // A run that started during the pull may have mixed its tables
            // with the last run's: pulled again once it ends.
            match r.wait_for_runs(false) {
                Err(e) if args.wait && e.is::<crate::tables::lock::Busy>() => continue,
                done => break done?,
            }
        }
    }
    let spill = args.spill.unwrap_or_else(std::env::temp_dir);
    let _spill = crate::tables::sql::SpillFolder(spill.clone());
    let options = crate::export::ExportOptions {
        out,
        to: args.to,
        format: args.format,
        removed: args.removed,
        keep_boilerplate: args.keep_boilerplate,
        shard: args.shard.unwrap_or(Shard::WHOLE),
        inputs: read_input_lists(&args.input)?,
        memory: crate::process::memory::run_limit(args.memory_limit).map(|l| l.sql()),
        spill,
        progress: !quiet && std::io::stderr().is_terminal(),
    };
    let summary = crate::export::export(&options, &crate::process::parallelism::runtime()?)?;
    let counts: Vec<String> = summary.counts.iter().map(|(k, v)| format!("{k}={v}")).collect();
    print(&format!("{}\t{}\n", summary.written, counts.join(" ")))?;
    if !summary.unreadable.is_empty() {
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}

fn explain(args: ExplainArgs) -> Result<()> {
    let rt = crate::process::parallelism::runtime()?;
    let out = finished_run(&args.out, &args.cache)?;
    let text = rt.block_on(crate::report::explain::explain(&out, &args.document))?;
    print(crate::process::terminal::escape_controls(&text).as_bytes())?;
    Ok(())
}

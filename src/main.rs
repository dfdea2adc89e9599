//! `pipeline`: the command-line entry point of neardup.
//!
//! Exit codes: 0 success; 1 a stage failed (`status`: some stage is not up
//! to date); 2 bad usage (unknown stage, missing input table or unfinished
//! tasks of a sharded stage, bad config); 3 the run finished but some input
//! files could not be read (their paths are logged and listed in
//! `ingest_files`); 4 another run holds the lock of a stage's task (or of
//! the history) and `--wait` was not given; 130 interrupted (Ctrl-C,
//! SIGTERM).

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use neardup::config::Config;
use neardup::history::HistoryLocation;
use neardup::methods::registry;
use neardup::process::logging::LogFormat;
use neardup::runner::mirror::RemoteOut;
use neardup::runner::{run_stage, HistoryRun, MissingInput, RunContext, StageOutcome};
use neardup::stages;
use neardup::tables::shard::Shard;

#[derive(Parser)]
#[command(
    name = "pipeline",
    version,
    about = "Find near-duplicate documents in web crawls (WARC/ARC → Parquet tables)"
)]
struct Cli {
    /// More log output (-v: debug, -vv: trace).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    /// Only errors on stderr, no progress bars.
    #[arg(short, long, global = true)]
    quiet: bool,
    /// Log lines for people (`text`, coloured only on a terminal) or one
    /// JSON object per line for log collectors (`json`: time, level, stage,
    /// message, target, fields).
    #[arg(long, value_enum, default_value_t = LogFormat::Text, global = true)]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run one stage or all of them (default: all stages on sample-data/ into ./out).
    Run(RunArgs),
    /// Run SQL over the tables of an output folder.
    Query(QueryArgs),
    /// Explain why a document is (or is not) a duplicate: its cluster, representative and links.
    Explain(ExplainArgs),
    /// Write DIR/report.html: one self-contained page with the run's counts, charts and timings.
    Report(ReportArgs),
    /// Tell, per stage, whether `pipeline run` with the same options would
    /// redo it: up to date, stale (and why), missing, or sharded with tasks
    /// missing. Exit code 0 when everything is up to date, 1 otherwise.
    Status(StatusArgs),
    /// Keep a history of earlier crawls (`--history DIR|URL`): match a
    /// finished run against it, append the run as a crawl, list, drop or
    /// compact crawls.
    History(HistoryArgs),
    /// Write what a finished run decided: the deduplicated crawl (WARC) or
    /// corpus (Parquet, JSON Lines) of the kept documents, a CDXJ index of
    /// the WARC, or with --removed what was removed.
    #[command(after_help = EXPORT_HELP)]
    Export(ExportArgs),
}

/// The formats of `pipeline export`, shown after its options.
const EXPORT_HELP: &str = "\
Formats (one file per task in --to: kept.<ext>, removed.<ext>, or kept-I-of-N.<ext> with --shard):
  parquet, jsonl  one row per kept document (--removed: per removed one): doc_id, url,
                  crawl_date, cluster_id, duplicates, reason, duplicate_of and similarity
                  (removed ones), and the visible text in its original case without the
                  host's boilerplate lines (--keep-boilerplate keeps them)
  warc            the input crawl minus the removed documents and their request and
                  metadata records, read again from the input files: WARC/1.x records
                  byte for byte, ARC, WARC/0.x and corpus records as WARC/1.1 with their
                  original headers kept; each record one gzip member (kept.warc.gz).
                  --removed: a revisit record per removed document naming its kept copy,
                  WARC-Profile https://github.com/neardup/neardup/warc-profile/near-duplicate/1.0
  cdxj            pywb's CDXJ index of the WARC that --format warc writes with the same
                  options (SURT key, timestamp, url, mime, status, digest, length,
                  offset, filename), sorted

Exit codes: 0 written; 1 failed; 2 bad usage (missing table, an input file gone: give
--input); 3 written, but some input files could not be read (logged).";

#[derive(clap::Args)]
struct ExportArgs {
    /// Output folder (or object-store URL) of a finished run: its
    /// decisions, documents and boilerplate tables are read.
    #[arg(long, default_value = "out")]
    out: String,
    #[command(flatten)]
    cache: CacheArg,
    /// Folder (or object-store URL: `s3://bucket/export`, `file:///path`)
    /// the export is written to; created if missing. Each file appears
    /// whole or not at all.
    #[arg(long, value_name = "DIR|URL")]
    to: String,
    /// What to write.
    #[arg(long, value_enum)]
    format: neardup::export::Format,
    /// Write the removed documents instead of the kept ones.
    #[arg(long)]
    removed: bool,
    /// parquet and jsonl: keep the host's boilerplate lines in the text.
    #[arg(long)]
    keep_boilerplate: bool,
    /// Export task I of N: the run's input files whose index is I mod N,
    /// into a part of its own (`kept-I-of-N.warc.gz`).
    #[arg(long, value_name = "I/N")]
    shard: Option<Shard>,
    /// Where the run's input files are now, when they moved since the run
    /// (files, folders, globs, URLs as `run --input` takes them): each file
    /// is found by its path relative to the input folder. Default: the
    /// paths the run read, from its ingest manifest.
    #[arg(long, num_args = 1..)]
    input: Vec<String>,
    /// Memory of the query that streams the decisions, e.g. 2G, as `run
    /// --memory-limit` (default: 75% of the container's or machine's
    /// memory); its sorts spill to --out's _spill folder beyond half of it.
    #[arg(long, value_parser = neardup::tables::sql::parse_memory_size)]
    memory_limit: Option<usize>,
}

#[derive(clap::Args)]
struct HistoryArgs {
    /// The history: a folder, or an object-store URL (`s3://bucket/history`,
    /// `file:///path`) worked on through a local cache.
    #[arg(long, value_name = "DIR|URL")]
    history: String,
    #[command(flatten)]
    cache: HistoryCacheArg,
    /// When another run uses the same history: wait for it to end (default:
    /// refuse with exit code 4, naming the other run).
    #[arg(long)]
    wait: bool,
    #[command(subcommand)]
    action: HistoryAction,
}

/// The local copy of an object-store history.
#[derive(clap::Args, Clone)]
struct HistoryCacheArg {
    /// Local cache folder of an object-store --history (default: under
    /// $XDG_CACHE_HOME or ~/.cache, named after the URL).
    #[arg(long, value_name = "DIR")]
    history_cache: Option<PathBuf>,
}

/// A finished run and its crawl id, for `history match` and `history append`.
#[derive(clap::Args)]
struct NightArgs {
    /// Output folder of a finished run (a local path).
    #[arg(long, default_value = "out")]
    out: PathBuf,
    /// The run's crawl id: letters, digits, `.`, `_`, `-` (e.g. the night's
    /// date). Crawl ids sort in crawl order: a night is matched against the
    /// crawls whose ids sort before its own.
    #[arg(long, value_name = "ID")]
    crawl_id: String,
    /// The run's job config (`[candidates] max_edges_per_document`, the
    /// verification text kept: `[verify] text`, and `[history]`).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Memory for matching, e.g. 2G, as `pipeline run --memory-limit`
    /// (default: 75% of the container's or machine's memory): half of it
    /// is the SQL engine's pool, beyond which sorts and aggregations spill
    /// to --out's _spill folder.
    #[arg(long, value_parser = neardup::tables::sql::parse_memory_size)]
    memory_limit: Option<usize>,
}

#[derive(Subcommand)]
enum HistoryAction {
    /// One line per crawl: its id and the rows of each of its tables.
    List,
    /// Match the finished run in --out (crawl ID) against the crawls whose
    /// ids sort before ID: writes --out's tables history_candidates, repeats
    /// (those that verify) and crawl_clusters (the copy [history] keep keeps)
    /// (what `pipeline run --history` does after its last stage, before it
    /// appends the run).
    Match(NightArgs),
    /// Append the finished run in --out as crawl ID, replacing an earlier
    /// append of that crawl (what `pipeline run --history` does after its
    /// last stage).
    Append(NightArgs),
    /// Remove crawl ID and its partitions.
    Drop {
        /// The crawl id.
        crawl_id: String,
    },
    /// Merge each partition's part files into one (rows unchanged) and remove
    /// what no crawl owns (partitions and staging folders of interrupted
    /// appends, files a crawl's manifest does not list).
    Compact,
}

#[derive(clap::Args)]
struct RunArgs {
    /// Stage to run: all, ingest, blocks, boilerplate, tokens, exact, stats, signatures, search, candidates, verify,
    /// decide, evaluate.
    #[arg(long, default_value = "all")]
    stage: String,
    /// Run task I of N of a map stage (ingest, blocks, tokens, signatures, verify),
    /// e.g. 0/4: it reads its share of the input and writes its own part
    /// files; the next stage starts once all N tasks are done.
    #[arg(long, value_name = "I/N")]
    shard: Option<Shard>,
    #[command(flatten)]
    job: JobArgs,
    /// Output folder for the tables: a local path, or an object-store URL
    /// (`s3://bucket/run`, `file:///path`) mirrored by a local --cache folder.
    #[arg(long, default_value = "out")]
    out: String,
    #[command(flatten)]
    cache: CacheArg,
    /// Rerun stages even when their manifest says they are up to date.
    #[arg(long)]
    force: bool,
    /// When another run is running the same stage (and shard) on the same
    /// --out, or uses the same --history: wait for it to end, then go on
    /// (default: refuse with exit code 4, naming the other run).
    #[arg(long)]
    wait: bool,
    /// Worker threads of every pool: rayon's, tokio's and DataFusion's
    /// partitions per query (default: the CPUs this process may use, which
    /// honours `taskset` and container CPU limits).
    #[arg(long)]
    threads: Option<usize>,
    /// The run's memory, e.g. 512M or 2G (default: 75% of the container's
    /// cgroup limit, or of the machine's memory): half of it is the SQL
    /// engine's pool, beyond which sorts and aggregations spill to
    /// DIR/_spill. Given, it also makes joins sort-merge joins, which spill
    /// too but cost more CPU.
    #[arg(long, value_parser = neardup::tables::sql::parse_memory_size)]
    memory_limit: Option<usize>,
    /// Where the SQL stages (boilerplate, stats, candidates, decide, evaluate) run: `embedded`
    /// (DataFusion in this process) or `ballista://HOST:PORT` (an Apache
    /// Ballista 55 scheduler whose executors see the same --out folder, or
    /// the same --cache folder for an object-store output).
    #[arg(long, default_value = "embedded")]
    engine: neardup::tables::sql::Engine,
    #[command(flatten)]
    night: NightHistoryArgs,
}

/// The history a run is matched against and appended to: the same for
/// `run` and `status`, which answers for a run with these options.
#[derive(clap::Args)]
struct NightHistoryArgs {
    /// History folder of earlier crawls: after the last stage of `--stage
    /// all`, the run is matched against the crawls before it (stages
    /// history_candidates, history_verify, history_clusters writing tables
    /// history_candidates, repeats, crawl_clusters; see [history] in the job
    /// config) and appended to it as crawl --crawl-id (see `pipeline
    /// history`). A folder, or an object-store URL (`s3://bucket/history`)
    /// worked on through a local cache (--history-cache).
    #[arg(long, value_name = "DIR|URL", requires = "crawl_id")]
    history: Option<String>,
    #[command(flatten)]
    history_cache: HistoryCacheArg,
    /// The crawl id this run is kept under in --history: letters, digits,
    /// `.`, `_`, `-` (e.g. the night's date); ids sort in crawl order.
    /// Rerunning a crawl id replaces it.
    #[arg(long, value_name = "ID", requires = "history")]
    crawl_id: Option<String>,
}

/// What a run's tables depend on besides the program: the same for `run`
/// and `status`, which answers for a run with these options.
#[derive(clap::Args)]
struct JobArgs {
    /// Input archives or text corpora (.jsonl[.gz], .parquet): files, folders
    /// (read recursively), globs, or object-store URLs of objects or prefixes
    /// (`s3://bucket/crawl/`, `file:///data/crawl`). Default: sample-data/.
    #[arg(long, num_args = 1..)]
    input: Vec<String>,
    /// Job config (TOML); defaults are those of jobs/default.toml.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Comma-separated method ids to run (default: all): a0..a12, imatch, minhash, spotsigs, slst.
    #[arg(long, value_delimiter = ',', long_help = methods_help())]
    methods: Vec<String>,
    /// Gold labels (JSONL: labeled pairs or clusters) to score every method
    /// against; the scores go to table `gold_quality`.
    #[arg(long)]
    gold: Option<PathBuf>,
}

#[derive(clap::Args)]
struct StatusArgs {
    /// Output folder (or object-store URL; only its manifests are read).
    #[arg(long, default_value = "out")]
    out: String,
    #[command(flatten)]
    cache: CacheArg,
    // The options of the `pipeline run` to answer for.
    #[command(flatten)]
    job: JobArgs,
    #[command(flatten)]
    night: NightHistoryArgs,
    /// Output format: an aligned table, or one JSON object per stage and line.
    #[arg(long, value_enum, default_value_t = StatusFormat::Table)]
    format: StatusFormat,
}

#[derive(Clone, Copy, ValueEnum)]
enum StatusFormat {
    Table,
    Json,
}

#[derive(clap::Args)]
struct QueryArgs {
    /// Output folder (or object-store URL) whose tables are registered by name.
    #[arg(long, default_value = "out")]
    out: String,
    #[command(flatten)]
    cache: CacheArg,
    /// Also register the tables of this history (a folder or an
    /// object-store URL), as `history_<table>` with a `crawl` column (see
    /// `pipeline history`).
    #[arg(long, value_name = "DIR|URL")]
    history: Option<String>,
    #[command(flatten)]
    history_cache: HistoryCacheArg,
    /// Result format (`parquet` needs --output).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Write the result to FILE instead of standard output (written whole or
    /// not at all).
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// The SQL statement.
    sql: String,
}

#[derive(clap::Args)]
struct ExplainArgs {
    /// Output folder (or object-store URL) of a finished run.
    #[arg(long, default_value = "out")]
    out: String,
    #[command(flatten)]
    cache: CacheArg,
    /// A doc_id or a URL.
    document: String,
}

#[derive(clap::Args)]
struct ReportArgs {
    /// Output folder (or object-store URL) of a run; the report is written
    /// into it as report.html.
    #[arg(long, default_value = "out")]
    out: String,
    #[command(flatten)]
    cache: CacheArg,
}

#[derive(clap::Args)]
struct CacheArg {
    /// Local folder mirroring an object-store --out (default: one per URL and
    /// task under $XDG_CACHE_HOME/neardup or ~/.cache/neardup). Stages read
    /// and write here; each stage's tables are committed to the store when it
    /// ends. Tasks running at the same time need caches of their own.
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,
}

/// The local folder holding the tables of `out`: the path itself, or the
/// cache of an object-store URL, with the store's handle.
fn local_out(out: &str, cache: &CacheArg, shard: Shard) -> Result<(PathBuf, Option<RemoteOut>)> {
    if !neardup::storage::location::is_url(out) {
        return Ok((PathBuf::from(out), None));
    }
    let remote =
        RemoteOut::open(out, cache.cache.clone(), shard).map_err(|e| UsageError(format!("--out {out}: {e:#}")))?;
    Ok((remote.cache_dir().to_path_buf(), Some(remote)))
}

/// [`local_out`] for a command that reads a finished run: every committed
/// table is pulled into the cache first.
fn finished_out(out: &str, cache: &CacheArg) -> Result<(PathBuf, Option<RemoteOut>)> {
    let (dir, remote) = local_out(out, cache, Shard::WHOLE)?;
    if let Some(r) = &remote {
        let n = r.pull_all()?;
        tracing::info!(objects = n, cache = %dir.display(), "pulled {}", r.url());
    }
    Ok((dir, remote))
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Table,
    Csv,
    Json,
    /// A Parquet file with the result's schema, for other tools.
    Parquet,
}

fn main() -> ExitCode {
    // Before any thread starts: every thread inherits the blocked signals.
    neardup::process::interrupt::install();
    let cli = Cli::parse();
    init_logging(cli.verbose, cli.quiet, cli.log_format);
    let quiet = cli.quiet;
    let command = cli.command.unwrap_or_else(|| Command::Run(default_run_args()));
    let result = match command {
        Command::Run(args) => run(args, quiet),
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
            let busy = e.downcast_ref::<neardup::runner::lock::Busy>().is_some();
            eprintln!("error: {}", neardup::process::terminal::escape_controls(&format!("{e:#}")));
            ExitCode::from(if busy {
                neardup::runner::lock::EXIT_BUSY
            } else if usage {
                2
            } else {
                1
            })
        }
    }
}

/// `pipeline` with no subcommand means `pipeline run` with its defaults.
fn default_run_args() -> RunArgs {
    use clap::{Args, FromArgMatches};
    let matches = RunArgs::augment_args(clap::Command::new("run")).get_matches_from(["run"]);
    RunArgs::from_arg_matches(&matches).expect("run's defaults parse")
}

/// An error in how the program was called (exit code 2).
#[derive(Debug)]
struct UsageError(String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

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
    neardup::process::logging::init(format, filter);
}

/// `--methods`' long help (`--help`): every method by id and name, from
/// the registry, so the list cannot fall behind it.
fn methods_help() -> String {
    let width = registry::ids().iter().map(|id| id.len()).max().unwrap_or(0);
    let lines: Vec<String> = registry::METHODS.iter().map(|m| format!("  {:width$}  {}", m.id, m.name)).collect();
    format!("Comma-separated method ids to run (default: all):\n{}", lines.join("\n"))
}

/// The config and inputs of a job: the config file (or the defaults) with
/// the command line's changes, validated.
fn job_settings(job: &JobArgs) -> Result<(Config, Vec<String>)> {
    let mut config = match &job.config {
        Some(path) => Config::from_file(path).map_err(|e| UsageError(format!("{e:#}")))?,
        None => Config::default(),
    };
    if !job.methods.is_empty() {
        for m in &job.methods {
            if !registry::ids().contains(&m.as_str()) {
                return Err(UsageError(format!("unknown method `{m}`; known: {}", registry::ids().join(", "))).into());
            }
        }
        config.methods.enabled = job.methods.clone();
    }
    if let Some(gold) = &job.gold {
        if !gold.is_file() {
            return Err(UsageError(format!("--gold {}: no such file", gold.display())).into());
        }
        config.evaluate.gold_file = gold.display().to_string();
    }
    // The command line may have changed the file's values (--methods, --gold).
    config.validate().map_err(|e| UsageError(format!("bad configuration: {e:#}")))?;
    let inputs = if job.input.is_empty() { vec!["sample-data".to_string()] } else { job.input.clone() };
    Ok((config, inputs))
}

fn run(args: RunArgs, quiet: bool) -> Result<ExitCode> {
    let (config, inputs) = job_settings(&args.job)?;
    if args.threads == Some(0) {
        return Err(UsageError("--threads must be at least 1".into()).into());
    }
    let threads = neardup::process::parallelism::configure(args.threads)?;
    tracing::debug!(threads, "threads for rayon, tokio and DataFusion's partitions");
    let memory_limit = neardup::process::memory::run_limit(args.memory_limit);
    match memory_limit {
        Some(limit) => tracing::info!(threads, "{limit}"),
        None => tracing::warn!("no memory limit: this system tells neither its memory nor a container limit"),
    }
    // The history's stages follow the pipeline's in a run with --history.
    let mut all = stages::all();
    let is_history_stage = |name: &str| stages::history_match::stages().iter().any(|s| s.name() == name);
    if args.night.history.is_some() {
        all.extend(stages::history_match::stages());
    }
    let selected: Vec<&dyn neardup::runner::Stage> = if args.stage == "all" {
        all.iter().map(|s| s.as_ref()).collect()
    } else {
        match all.iter().find(|s| s.name() == args.stage) {
            Some(s) => vec![s.as_ref()],
            None if is_history_stage(&args.stage) => {
                return Err(UsageError(format!(
                    "stage {} matches a night against a history: give --history DIR --crawl-id ID",
                    args.stage
                ))
                .into())
            }
            None => {
                let names: Vec<&str> = all
                    .iter()
                    .map(|s| s.name())
                    .chain(stages::history_match::stages().iter().map(|s| s.name()))
                    .collect();
                return Err(
                    UsageError(format!("unknown stage `{}`; stages: all, {}", args.stage, names.join(", "))).into()
                );
            }
        }
    };
    let history = match (&args.night.history, &args.night.crawl_id) {
        (Some(dir), Some(crawl)) => {
            neardup::history::check_crawl_id(crawl).map_err(|e| UsageError(format!("--crawl-id: {e:#}")))?;
            if args.stage != "all" && !is_history_stage(&args.stage) {
                return Err(UsageError(
                    "--history matches and appends a whole run: use it with --stage all or one of the \
                     history's stages (history_candidates, history_verify, history_clusters), or run \
                     `pipeline history append` after running the stages one by one"
                        .into(),
                )
                .into());
            }
            if neardup::storage::location::is_url(&args.out) {
                return Err(UsageError("--history works with a local --out".into()).into());
            }
            let history = HistoryLocation::open(dir, args.night.history_cache.history_cache.clone())
                .map_err(|e| UsageError(format!("--history {dir}: {e:#}")))?;
            Some((history, crawl.clone()))
        }
        _ => None,
    };
    if selected.iter().any(|s| s.name() == "ingest") {
        check_inputs(&inputs)?;
    }
    let shard = args.shard.unwrap_or(Shard::WHOLE);
    if !shard.is_whole() {
        let map_stages: Vec<&str> = all.iter().filter(|s| s.shardable()).map(|s| s.name()).collect();
        if !(selected.len() == 1 && selected[0].shardable()) {
            return Err(UsageError(format!(
                "--shard runs one task of one map stage; use --stage with one of: {}",
                map_stages.join(", ")
            ))
            .into());
        }
    }
    let (out, remote) = local_out(&args.out, &args.cache, shard)?;
    std::fs::create_dir_all(&out)
        .map_err(|e| neardup::tables::write::name_the_disk(e.into(), &out))
        .with_context(|| format!("cannot create the output folder {}", out.display()))?;
    neardup::process::interrupt::watch_output(&out);
    let _spill = neardup::tables::sql::SpillFolder(out.clone());
    if remote.is_some() && args.engine != neardup::tables::sql::Engine::Embedded {
        tracing::warn!(
            cache = %out.display(),
            "the Ballista executors read the tables from the local cache folder, which they must see at the same path"
        );
    }
    let ctx = RunContext {
        shard,
        out,
        config,
        inputs,
        runtime: neardup::process::parallelism::runtime()?,
        progress: !quiet && std::io::stderr().is_terminal(),
        engine: args.engine.clone(),
        memory_limit,
        wait_for_lock: args.wait,
        history: history
            .as_ref()
            .map(|(location, crawl)| HistoryRun { root: location.local_root().to_path_buf(), crawl: crawl.clone() }),
    };
    let mut input_errors = Vec::new();
    let mut outcomes = Vec::new();
    // The history's stages are run in the history phase below, under its lock.
    let (history_selected, selected): (Vec<_>, Vec<_>) = selected.into_iter().partition(|s| is_history_stage(s.name()));
    for stage in &selected {
        let writes = stage.outputs(&ctx.config);
        // The store's lock, beside the cache folder's that run_stage takes.
        let _store_lock = match &remote {
            Some(r) => Some(r.lock(stage.name(), shard, args.wait)?),
            None => None,
        };
        if let Some(r) = &remote {
            let n = r.pull(&stage.inputs(), stage.name(), &writes, shard)?;
            tracing::info!(stage = stage.name(), objects = n, "pulled from {}", r.url());
        }
        let outcome = run_stage(*stage, &all, &ctx, args.force)?;
        outcomes.push((stage.name(), matches!(outcome, StageOutcome::Ran(_))));
        if let StageOutcome::UpToDate = outcome {
            // A rerun of a run that could not read some input says so
            // again (exit 3): an up-to-date stage is no fix.
            let manifest = neardup::runner::manifest_path(&ctx.out, stage.name(), shard);
            if let Some(m) = neardup::runner::read_manifest_file(&manifest) {
                input_errors.extend(m.report.input_errors);
            }
        }
        if let StageOutcome::Ran(report) = outcome {
            input_errors.extend(report.input_errors);
            if let Some(r) = &remote {
                let n = r.push(stage.name(), &writes, shard)?;
                tracing::info!(stage = stage.name(), objects = n, "committed to {}", r.url());
            }
        }
    }
    // Matched against the earlier crawls before the report, which has a
    // section on the night's repeats; appended after it, once matched.
    if let Some((location, crawl)) = &history {
        let _lock = location.lock(args.wait)?;
        let local = location.local()?;
        for stage in history_selected {
            let outcome = run_stage(stage, &all, &ctx, args.force)?;
            outcomes.push((stage.name(), matches!(outcome, StageOutcome::Ran(_))));
        }
        if args.stage == "all" {
            let kept = local.append(&ctx.out, crawl, &ctx.config, &ctx.runtime)?;
            location.commit(crawl)?;
            let documents = kept.rows.get("history_documents").copied().unwrap_or(0);
            tracing::info!(history = %local.root().display(), crawl = %crawl, documents, "crawl appended to the history");
        }
    }
    // The report sums up the whole run, so it follows the last stage.
    let mut report_path = None;
    if args.stage == "all" || args.stage == "evaluate" {
        if let Some(r) = &remote {
            r.pull_all()?;
        }
        let path = neardup::report::write_report(&ctx.out, &ctx.runtime)?;
        if let Some(r) = &remote {
            r.push_file(neardup::report::REPORT_FILE)?;
        }
        tracing::info!(path = %path.display(), "report written");
        report_path = Some(match &remote {
            Some(r) => format!("{}/{}", r.url(), neardup::report::REPORT_FILE),
            None => path.display().to_string(),
        });
    }
    log_summary(&ctx, shard, &outcomes);
    if let Some(line) = outcome_line(&ctx, shard, &outcomes, report_path.as_deref()) {
        println!("{line}");
    }
    if !input_errors.is_empty() {
        for e in &input_errors {
            tracing::error!("{e}");
        }
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}

fn query(args: QueryArgs) -> Result<()> {
    if matches!(args.format, Format::Parquet) && args.output.is_none() {
        return Err(UsageError("--format parquet writes a file: give it with --output FILE".into()).into());
    }
    let rt = neardup::process::parallelism::runtime()?;
    let (out, _) = finished_out(&args.out, &args.cache)?;
    let history = match &args.history {
        Some(spec) if !neardup::storage::location::is_url(spec) && !Path::new(spec).is_dir() => {
            return Err(UsageError(format!("--history {spec}: no such folder")).into())
        }
        Some(spec) => Some(HistoryLocation::open(spec, args.history_cache.history_cache.clone())?),
        None => None,
    };
    let text = rt.block_on(async {
        let ctx = neardup::tables::sql::session_over(&out).await?;
        if let Some(spec) = &history {
            spec.local()?.register(&ctx).await?;
        }
        let frame = ctx.sql(&args.sql).await?;
        let schema = std::sync::Arc::new(frame.schema().as_arrow().clone());
        let batches = frame.collect().await?;
        let mut bytes = Vec::new();
        match args.format {
            Format::Table => {
                // For people, so crawled text is escaped (the other formats keep it).
                let table = arrow::util::pretty::pretty_format_batches(&batches)?.to_string();
                bytes = format!("{}\n", neardup::process::terminal::escape_controls(&table)).into_bytes();
            }
            Format::Csv => {
                let mut w = arrow::csv::Writer::new(&mut bytes);
                for b in &batches {
                    w.write(b)?;
                }
            }
            Format::Json => {
                let mut w = arrow::json::LineDelimitedWriter::new(&mut bytes);
                for b in &batches {
                    w.write(b)?;
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
        Some(path) => neardup::tables::write::write_file_atomically(path, &text)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => std::io::Write::write_all(&mut std::io::stdout().lock(), &text)?,
    }
    Ok(())
}

fn status(args: StatusArgs) -> Result<ExitCode> {
    let (config, inputs) = job_settings(&args.job)?;
    let (out, remote) = local_out(&args.out, &args.cache, Shard::WHOLE)?;
    if let Some(r) = &remote {
        r.pull_manifests()?;
    }
    // With --history, the history's stages too, judged against its crawls
    // (an object-store history is pulled into its cache first, as a run
    // pulls it before matching).
    let mut all = stages::all();
    let history = match (&args.night.history, &args.night.crawl_id) {
        (Some(dir), Some(crawl)) => {
            neardup::history::check_crawl_id(crawl).map_err(|e| UsageError(format!("--crawl-id: {e:#}")))?;
            let location = HistoryLocation::open(dir, args.night.history_cache.history_cache.clone())
                .map_err(|e| UsageError(format!("--history {dir}: {e:#}")))?;
            all.extend(stages::history_match::stages());
            Some(HistoryRun { root: location.local()?.root().to_path_buf(), crawl: crawl.clone() })
        }
        _ => None,
    };
    let ctx = RunContext {
        shard: Shard::WHOLE,
        out,
        config,
        inputs,
        runtime: tokio::runtime::Builder::new_current_thread().enable_all().build()?,
        progress: false,
        engine: neardup::tables::sql::Engine::Embedded,
        memory_limit: None,
        wait_for_lock: false,
        history,
    };
    let tables = match remote {
        Some(_) => neardup::runner::status::Tables::Committed,
        None => neardup::runner::status::Tables::Local,
    };
    let lines = neardup::runner::status::status(&all, &ctx, &tables);
    let mut text = String::new();
    match args.format {
        StatusFormat::Table => text = neardup::runner::status::table_text(&lines),
        StatusFormat::Json => {
            for line in &lines {
                text.push_str(&serde_json::to_string(line)?);
                text.push('\n');
            }
        }
    }
    print!("{text}");
    Ok(if neardup::runner::status::all_up_to_date(&lines) { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// An input path that is not there, or inputs without one file to read,
/// is a mistake in the command (exit 2) before any stage runs: ingest would
/// otherwise run on nothing and the next run would call it up to date.
fn check_inputs(inputs: &[String]) -> Result<()> {
    for input in inputs {
        let looks_like_glob = input.contains(['*', '?', '[']);
        if !neardup::storage::location::is_url(input) && !looks_like_glob && !Path::new(input).exists() {
            return Err(UsageError(format!("--input {input}: no such file or folder")).into());
        }
    }
    // Object stores are listed by ingest itself (a listing costs requests).
    if inputs.iter().all(|i| !neardup::storage::location::is_url(i)) {
        let (files, problems, _) = neardup::ingest::inputs::expand_inputs(inputs);
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

/// The run's outcome in one line for stdout, from the `decide` stage's
/// counts: what a user runs a dedup tool for. `None` when that stage was
/// not part of the run.
fn outcome_line(
    ctx: &RunContext,
    shard: Shard,
    outcomes: &[(&'static str, bool)],
    report: Option<&str>,
) -> Option<String> {
    outcomes.iter().find(|(stage, _)| *stage == "decide")?;
    let m = neardup::runner::read_manifest_file(&neardup::runner::manifest_path(&ctx.out, "decide", shard))?;
    let n = |reason: &str| m.report.counters.get(reason).copied().unwrap_or(0);
    let (kept, unique, exact, near, not_content) =
        (n("kept"), n("unique"), n("exact_duplicate"), n("near_duplicate"), n("not_content"));
    let documents = kept + unique + exact + near + not_content;
    let mut line = format!(
        "{documents} documents: {} kept, {} removed ({exact} exact and {near} near-duplicates) from {kept} clusters, \
         {not_content} not content (kept, not deduplicated)",
        kept + unique + not_content,
        exact + near,
    );
    match report {
        Some(path) => line.push_str(&format!("; report: {path}")),
        None => line.push_str(&format!("; decisions: {}", ctx.out.join("decisions").display())),
    }
    Some(line)
}

/// One log line per stage of the run: whether it ran or was up to date,
/// its rows, wall and CPU time (from its manifest).
fn log_summary(ctx: &RunContext, shard: Shard, outcomes: &[(&'static str, bool)]) {
    for &(stage, ran) in outcomes {
        let Some(m) = neardup::runner::read_manifest_file(&neardup::runner::manifest_path(&ctx.out, stage, shard))
        else {
            continue;
        };
        let outcome = if ran { "ran" } else { "up to date" };
        let rows = neardup::runner::rows_text(&m.report.rows);
        tracing::info!(
            stage,
            outcome,
            wall_seconds = (m.wall_seconds * 100.0).round() / 100.0,
            cpu_seconds = (m.cpu_seconds * 100.0).round() / 100.0,
            rows = %rows,
            "summary"
        );
    }
}

fn report(args: ReportArgs) -> Result<()> {
    let (out, remote) = finished_out(&args.out, &args.cache)?;
    if !out.is_dir() {
        return Err(UsageError(format!(
            "{} is not an output folder; run `pipeline run --out {}` first",
            args.out, args.out
        ))
        .into());
    }
    let rt = neardup::process::parallelism::runtime()?;
    let path = neardup::report::write_report(&out, &rt)?;
    match remote {
        Some(r) => {
            r.push_file(neardup::report::REPORT_FILE)?;
            println!("{}/{}", r.url(), neardup::report::REPORT_FILE);
        }
        None => println!("{}", path.display()),
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
                println!("{}\t{}\t{}", crawl.crawl, serde_json::to_string(&crawl.verification_text)?, rows.join(" "));
            }
        }
        HistoryAction::Match(night) => {
            let config = night_settings(&night)?;
            // The history's stages, as `pipeline run --history` runs them:
            // with manifests, skipped when up to date.
            let ctx = RunContext {
                shard: Shard::WHOLE,
                out: night.out.clone(),
                config,
                inputs: Vec::new(),
                runtime: neardup::process::parallelism::runtime()?,
                progress: false,
                engine: neardup::tables::sql::Engine::Embedded,
                memory_limit: neardup::process::memory::run_limit(night.memory_limit),
                wait_for_lock: args.wait,
                history: Some(HistoryRun {
                    root: location.local()?.root().to_path_buf(),
                    crawl: night.crawl_id.clone(),
                }),
            };
            let matching = stages::history_match::stages();
            let all: Vec<Box<dyn neardup::runner::Stage>> =
                stages::all().into_iter().chain(stages::history_match::stages()).collect();
            let mut rows = std::collections::BTreeMap::new();
            for stage in &matching {
                run_stage(stage.as_ref(), &all, &ctx, false)?;
                let manifest = neardup::runner::manifest_path(&ctx.out, stage.name(), Shard::WHOLE);
                rows.extend(neardup::runner::read_manifest_file(&manifest).map(|m| m.report.rows).unwrap_or_default());
            }
            let count = |table: &str| rows.get(table).copied().unwrap_or(0);
            println!(
                "{}: {} candidate repeats of earlier crawls, {} verified, {} pages in clusters across crawls",
                night.crawl_id,
                count("history_candidates"),
                count("repeats"),
                count("crawl_clusters")
            );
            // The report has a section on the night's repeats.
            if night.out.join(neardup::report::REPORT_FILE).is_file() {
                neardup::report::write_report(&night.out, &ctx.runtime)?;
            }
        }
        HistoryAction::Append(night) => {
            let config = night_settings(&night)?;
            let rt = neardup::process::parallelism::runtime()?;
            let kept = location.local()?.append(&night.out, &night.crawl_id, &config, &rt)?;
            location.commit(&night.crawl_id)?;
            let documents = kept.rows.get("history_documents").copied().unwrap_or(0);
            println!("{}: {documents} documents", night.crawl_id);
        }
        HistoryAction::Drop { crawl_id } => {
            neardup::history::check_crawl_id(&crawl_id).map_err(|e| UsageError(format!("{e:#}")))?;
            if !location.drop_crawl(&crawl_id)? {
                eprintln!("no crawl `{crawl_id}` in {}", args.history);
                return Ok(ExitCode::from(1));
            }
        }
        HistoryAction::Compact => {
            let changed = location.compact()?;
            println!("{} crawls compacted", changed.len());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Checks the arguments of `history match` and `history append` (bad ones
/// are usage errors) and reads the run's config.
fn night_settings(night: &NightArgs) -> Result<Config> {
    neardup::history::check_crawl_id(&night.crawl_id).map_err(|e| UsageError(format!("{e:#}")))?;
    if !night.out.is_dir() {
        return Err(UsageError(format!("--out {}: no such output folder", night.out.display())).into());
    }
    match &night.config {
        Some(path) => Ok(Config::from_file(path).map_err(|e| UsageError(format!("{e:#}")))?),
        None => Ok(Config::default()),
    }
}

fn export(args: ExportArgs, quiet: bool) -> Result<ExitCode> {
    use neardup::export::Format;
    if args.keep_boilerplate && matches!(args.format, Format::Warc | Format::Cdxj) {
        return Err(UsageError(
            "--keep-boilerplate is for --format parquet and jsonl (a WARC keeps whole pages)".into(),
        )
        .into());
    }
    neardup::process::parallelism::configure(None)?;
    let (out, remote) = local_out(&args.out, &args.cache, Shard::WHOLE)?;
    if let Some(r) = &remote {
        // ingest_files tells the WARC formats which inputs are gzipped per record.
        let n = r.pull(&["decisions", "documents", "boilerplate", "ingest_files"], "export", &[], Shard::WHOLE)?;
        tracing::info!(objects = n, cache = %out.display(), "pulled {}", r.url());
    }
    if !out.is_dir() {
        return Err(UsageError(format!("--out {}: no such output folder", args.out)).into());
    }
    let _spill = neardup::tables::sql::SpillFolder(out.clone());
    let options = neardup::export::ExportOptions {
        out,
        to: args.to,
        format: args.format,
        removed: args.removed,
        keep_boilerplate: args.keep_boilerplate,
        shard: args.shard.unwrap_or(Shard::WHOLE),
        inputs: args.input,
        memory: neardup::process::memory::run_limit(args.memory_limit).map(|l| l.sql()),
        progress: !quiet && std::io::stderr().is_terminal(),
    };
    let summary = neardup::export::export(&options, &neardup::process::parallelism::runtime()?)?;
    let counts: Vec<String> = summary.counts.iter().map(|(k, v)| format!("{k}={v}")).collect();
    println!("{}\t{}", summary.written, counts.join(" "));
    if !summary.unreadable.is_empty() {
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}

fn explain(args: ExplainArgs) -> Result<()> {
    let rt = neardup::process::parallelism::runtime()?;
    let (out, _) = finished_out(&args.out, &args.cache)?;
    let text = rt.block_on(neardup::report::explain::explain(&out, &args.document))?;
    print!("{}", neardup::process::terminal::escape_controls(&text));
    Ok(())
}

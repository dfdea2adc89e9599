//! The command line of `pipeline`: its commands and options (clap), their
//! help texts, and what the options mean (the job's settings, the output
//! folder to read), checked, with mistakes as usage errors. What the
//! commands do is in [`super`] and the library.

use anyhow::Result;
use clap::{Parser, Subcommand, ValueEnum};
use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::methods::registry;
use crate::process::logging::LogFormat;
use crate::runner::mirror::RemoteOut;
use crate::runner::run::local_out;
use crate::stages::stage::UsageError;
use crate::tables::shard::Shard;

/// The help heading of the options every command takes, apart from each
/// command's own.
const GLOBAL_OPTIONS: &str = "Global options";

/// `pipeline` alone prints the help and exits 2, as any usage mistake:
/// it once ran the whole pipeline into `./out`, overwriting an earlier
/// result there, for a user who only wanted to see what it does.
#[derive(Parser)]
#[command(
    name = "pipeline",
    version,
    about = "Find near-duplicate documents in web crawls (WARC/ARC → Parquet tables)",
    subcommand_required = true,
    arg_required_else_help = true
)]
pub(crate) struct Cli {
    /// More log output (-v: debug, -vv: trace).
    #[arg(short, long, action = clap::ArgAction::Count, global = true, help_heading = GLOBAL_OPTIONS)]
    pub(crate) verbose: u8,
    /// Only errors on stderr, no progress bars.
    #[arg(short, long, global = true, help_heading = GLOBAL_OPTIONS)]
    pub(crate) quiet: bool,
    /// Log lines for people (`text`, coloured only on a terminal) or one
    /// JSON object per line for log collectors (`json`: time, level, stage,
    /// message, target, fields).
    #[arg(long, value_enum, default_value_t = LogFormat::Text, global = true, help_heading = GLOBAL_OPTIONS)]
    pub(crate) log_format: LogFormat,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
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
    /// missing. Without --input, for the inputs the run was given. Exit
    /// code 0 when everything is up to date, 1 otherwise.
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
pub(crate) const EXPORT_HELP: &str = "\
Formats (one file per task in --to: kept.<ext>, removed.<ext>, or kept-I-of-N.<ext> with --shard):
  parquet, jsonl  one row per kept document (--removed: per removed one): doc_id, url,
                  crawl_date, cluster_id, duplicates, reason, duplicate_of and similarity
                  (removed ones), and the visible text in its original case without the
                  host's boilerplate lines (--keep-boilerplate keeps them)
  warc            the input crawl minus the removed documents and their request and
                  metadata records, read again from the input files: WARC/1.x records
                  byte for byte, ARC, WARC/0.x and corpus records as WARC/1.1 with their
                  original headers kept; each record one gzip member (kept.warc.gz).
                  --removed: per removed document a record naming its kept copy: an
                  identical-payload-digest revisit (with its own HTTP header) where its
                  payload is byte for byte the kept copy's, else a metadata note
                  (application/warc-fields) that replay tools do not serve
  cdxj            pywb's CDXJ index of the WARC that --format warc writes with the same
                  options (SURT key, timestamp, url, mime, status, digest, length,
                  offset, filename), sorted

Exit codes: 0 written; 1 failed; 2 bad usage (missing table, an input file gone: give
--input); 3 written, but some input files could not be read (logged); 4 a run (or a task
of a sharded stage) is writing --out, and --wait was not given.";

#[derive(clap::Args)]
pub(crate) struct ExportArgs {
    /// Output folder (or object-store URL) of a finished run: its
    /// decisions, documents and boilerplate tables are read.
    #[arg(long, default_value = "out")]
    pub(crate) out: String,
    #[command(flatten)]
    pub(crate) cache: CacheArg,
    /// Folder (or object-store URL: `s3://bucket/export`, `file:///path`)
    /// the export is written to; created if missing. Each file appears
    /// whole or not at all.
    #[arg(long, value_name = "DIR|URL")]
    pub(crate) to: String,
    /// What to write.
    #[arg(long, value_enum)]
    pub(crate) format: crate::export::Format,
    /// Write the removed documents instead of the kept ones.
    #[arg(long)]
    pub(crate) removed: bool,
    /// parquet and jsonl: keep the host's boilerplate lines in the text.
    #[arg(long)]
    pub(crate) keep_boilerplate: bool,
    /// Export task I of N: the run's input files whose index is I mod N,
    /// into a part of its own (`kept-I-of-N.warc.gz`).
    #[arg(long, value_name = "I/N")]
    pub(crate) shard: Option<Shard>,
    /// Where the run's input files are now, when they moved since the run
    /// (files, folders, globs, URLs, `@FILE` lists and `-` as `run --input`
    /// takes them): each file is found by its path relative to the input
    /// folder. Default: the paths the run read, from its ingest manifest.
    #[arg(long, num_args = 1..)]
    pub(crate) input: Vec<String>,
    /// Memory of the query that streams the decisions, e.g. 2G, as `run
    /// --memory-limit` (default: 75% of the container's or machine's
    /// memory); its sorts spill to --spill beyond half of it.
    #[arg(long, value_parser = crate::tables::sql::parse_memory_size)]
    pub(crate) memory_limit: Option<usize>,
    /// Folder the sorts spill to (in `_spill/<pid>`, removed at the end),
    /// and where files for an object-store --to are staged (default: the
    /// system's temporary folder, $TMPDIR or /tmp). Never --out, which the
    /// export only reads: it may be read-only.
    #[arg(long, value_name = "DIR")]
    pub(crate) spill: Option<PathBuf>,
    /// When a run (or a task of a sharded stage) is writing --out: wait for
    /// it to end (default: refuse with exit code 4, naming it). An export
    /// never reads the tables of a run in progress.
    #[arg(long)]
    pub(crate) wait: bool,
}

#[derive(clap::Args)]
pub(crate) struct HistoryArgs {
    /// The history: a folder, or an object-store URL (`s3://bucket/history`,
    /// `file:///path`) worked on through a local cache.
    #[arg(long, value_name = "DIR|URL")]
    pub(crate) history: String,
    #[command(flatten)]
    pub(crate) cache: HistoryCacheArg,
    /// When another run uses the same history: wait for it to end (default:
    /// refuse with exit code 4, naming the other run).
    #[arg(long)]
    pub(crate) wait: bool,
    #[command(subcommand)]
    pub(crate) action: HistoryAction,
}

/// The local copy of an object-store history.
#[derive(clap::Args, Clone)]
pub(crate) struct HistoryCacheArg {
    /// Local cache folder of an object-store --history (default: under
    /// $XDG_CACHE_HOME or ~/.cache, named after the URL).
    #[arg(long, value_name = "DIR")]
    pub(crate) history_cache: Option<PathBuf>,
}

/// A finished run and its crawl id, for `history match` and `history append`.
#[derive(clap::Args)]
pub(crate) struct NightArgs {
    /// Output folder of a finished run (a local path).
    #[arg(long, default_value = "out")]
    pub(crate) out: PathBuf,
    /// The run's crawl id: letters, digits, `.`, `_`, `-` (e.g. the night's
    /// date). Crawl ids sort in crawl order: a night is matched against the
    /// crawls whose ids sort before its own.
    #[arg(long, value_name = "ID")]
    pub(crate) crawl_id: String,
    /// The run's job config (`[candidates] max_edges_per_document`, the
    /// verification text kept: `[verify] text`, and `[history]`).
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    /// Memory for matching, e.g. 2G, as `pipeline run --memory-limit`
    /// (default: 75% of the container's or machine's memory): half of it
    /// is the SQL engine's pool, beyond which sorts and aggregations spill
    /// to --out's _spill folder.
    #[arg(long, value_parser = crate::tables::sql::parse_memory_size)]
    pub(crate) memory_limit: Option<usize>,
}

#[derive(Subcommand)]
pub(crate) enum HistoryAction {
    /// One line per crawl: its id and the rows of each of its tables.
    List,
    /// Match the finished run in --out (crawl ID) against the crawls whose
    /// ids sort before ID: writes --out's tables history_candidates, repeats
    /// (those that verify) and crawl_clusters (the copy [dedup] keep keeps)
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
pub(crate) struct RunArgs {
    /// Stage to run: all, ingest, blocks, boilerplate, tokens, exact, stats, descr_sample, method_state, signatures,
    /// search_keys, search_groups, search_links, search, candidates, verify_pairs, verify, place, decide, evaluate.
    #[arg(long, default_value = "all")]
    pub(crate) stage: String,
    /// Run task I of N of a map stage (ingest, blocks, tokens, descr_sample, method_state,
    /// signatures, search_keys, search_groups, search, verify), e.g. 0/4: it reads its
    /// share of the input and writes its own part files; the next stage
    /// starts once all N tasks are done.
    #[arg(long, value_name = "I/N")]
    pub(crate) shard: Option<Shard>,
    #[command(flatten)]
    pub(crate) job: JobArgs,
    /// Output folder for the tables: a local path, or an object-store URL
    /// (`s3://bucket/run`, `file:///path`) mirrored by a local --cache folder.
    #[arg(long, default_value = "out")]
    pub(crate) out: String,
    #[command(flatten)]
    pub(crate) cache: CacheArg,
    /// Rerun stages even when their manifest says they are up to date.
    #[arg(long)]
    pub(crate) force: bool,
    /// When another run is running the same stage (and shard) on the same
    /// --out, or uses the same --history: wait for it to end, then go on
    /// (default: refuse with exit code 4, naming the other run).
    #[arg(long)]
    pub(crate) wait: bool,
    /// Worker threads of every pool: rayon's, tokio's and DataFusion's
    /// partitions per query (default: the CPUs this process may use, which
    /// honours `taskset` and container CPU limits).
    #[arg(long)]
    pub(crate) threads: Option<usize>,
    /// The run's memory, e.g. 512M or 2G (default: 75% of the container's
    /// cgroup limit, or of the machine's memory): half of it is the SQL
    /// engine's pool, beyond which sorts and aggregations spill to
    /// DIR/_spill. Given, it also makes joins sort-merge joins, which spill
    /// too but cost more CPU.
    #[arg(long, value_parser = crate::tables::sql::parse_memory_size)]
    pub(crate) memory_limit: Option<usize>,
    /// Where the SQL stages (boilerplate, stats, candidates, decide, evaluate) run: `embedded`
    /// (DataFusion in this process) or `ballista://HOST:PORT` (an Apache
    /// Ballista 55 scheduler whose executors see the same --out folder, or
    /// the same --cache folder for an object-store output).
    #[arg(long, default_value = "embedded")]
    pub(crate) engine: crate::tables::sql::Engine,
    #[command(flatten)]
    pub(crate) night: NightHistoryArgs,
}

/// The history a run is matched against and appended to: the same for
/// `run` and `status`, which answers for a run with these options.
#[derive(clap::Args)]
pub(crate) struct NightHistoryArgs {
    /// History folder of earlier crawls: after the last stage of `--stage
    /// all`, the run is matched against the crawls before it (stages
    /// history_candidates, history_verify, history_clusters writing tables
    /// history_candidates, repeats, crawl_clusters; see [history] in the job
    /// config) and appended to it as crawl --crawl-id (see `pipeline
    /// history`). A folder, or an object-store URL (`s3://bucket/history`)
    /// worked on through a local cache (--history-cache).
    #[arg(long, value_name = "DIR|URL", requires = "crawl_id")]
    pub(crate) history: Option<String>,
    #[command(flatten)]
    pub(crate) history_cache: HistoryCacheArg,
    /// The crawl id this run is kept under in --history: letters, digits,
    /// `.`, `_`, `-` (e.g. the night's date); ids sort in crawl order.
    /// Rerunning a crawl id replaces it.
    #[arg(long, value_name = "ID", requires = "history")]
    pub(crate) crawl_id: Option<String>,
}

/// What a run's tables depend on besides the program: the same for `run`
/// and `status`, which answers for a run with these options.
#[derive(clap::Args)]
pub(crate) struct JobArgs {
    /// Input archives or text corpora (.jsonl[.gz], .parquet): files, folders
    /// (read recursively), globs, or object-store URLs of objects or prefixes
    /// (`s3://bucket/crawl/`, `file:///data/crawl`); `@FILE` reads a list of
    /// them from FILE, one a line, and `-` from stdin. Default: sample-data/,
    /// the sample crawl of the source checkout (`status`: the inputs the run
    /// in --out was given).
    #[arg(long, num_args = 1..)]
    pub(crate) input: Vec<String>,
    /// Job config (TOML); defaults are those of jobs/default.toml.
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    /// Comma-separated method ids to run (default: all): a0..a12, imatch, minhash, spotsigs, slst.
    #[arg(long, value_delimiter = ',', long_help = methods_help())]
    pub(crate) methods: Vec<String>,
    /// Gold labels (JSONL: labeled pairs or clusters) to score every method
    /// against; the scores go to table `gold_quality`.
    #[arg(long)]
    pub(crate) gold: Option<PathBuf>,
}

#[derive(clap::Args)]
pub(crate) struct StatusArgs {
    /// Output folder (or object-store URL; only its manifests are read).
    #[arg(long, default_value = "out")]
    pub(crate) out: String,
    #[command(flatten)]
    pub(crate) cache: CacheArg,
    // The options of the `pipeline run` to answer for.
    #[command(flatten)]
    pub(crate) job: JobArgs,
    #[command(flatten)]
    pub(crate) night: NightHistoryArgs,
    /// Output format: an aligned table, or one JSON object per stage and line.
    #[arg(long, value_enum, default_value_t = StatusFormat::Table)]
    pub(crate) format: StatusFormat,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum StatusFormat {
    Table,
    Json,
}

#[derive(clap::Args)]
pub(crate) struct QueryArgs {
    /// Output folder (or object-store URL) whose tables are registered by name.
    #[arg(long, default_value = "out")]
    pub(crate) out: String,
    #[command(flatten)]
    pub(crate) cache: CacheArg,
    /// Also register the tables of this history (a folder or an
    /// object-store URL), as `history_<table>` with a `crawl` column (see
    /// `pipeline history`).
    #[arg(long, value_name = "DIR|URL")]
    pub(crate) history: Option<String>,
    #[command(flatten)]
    pub(crate) history_cache: HistoryCacheArg,
    /// Result format (`parquet` needs --output).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub(crate) format: Format,
    /// Write the result to FILE instead of standard output (written whole or
    /// not at all).
    #[arg(long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    /// The SQL statement.
    pub(crate) sql: String,
}

#[derive(clap::Args)]
pub(crate) struct ExplainArgs {
    /// Output folder (or object-store URL) of a finished run.
    #[arg(long, default_value = "out")]
    pub(crate) out: String,
    #[command(flatten)]
    pub(crate) cache: CacheArg,
    /// A doc_id or a URL.
    pub(crate) document: String,
}

#[derive(clap::Args)]
pub(crate) struct ReportArgs {
    /// Output folder (or object-store URL) of a run; the report is written
    /// into it as report.html.
    #[arg(long, default_value = "out")]
    pub(crate) out: String,
    #[command(flatten)]
    pub(crate) cache: CacheArg,
}

#[derive(clap::Args)]
pub(crate) struct CacheArg {
    /// Local folder mirroring an object-store --out (default: one per URL and
    /// task under $XDG_CACHE_HOME/neardup or ~/.cache/neardup). Stages read
    /// and write here; each stage's tables are committed to the store when it
    /// ends. Tasks running at the same time need caches of their own.
    #[arg(long, value_name = "DIR")]
    pub(crate) cache: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Format {
    Table,
    Csv,
    Json,
    /// A Parquet file with the result's schema, for other tools.
    Parquet,
}

/// `--methods`' long help (`--help`): every method by id and name, from
/// the registry, so the list cannot fall behind it.
pub(crate) fn methods_help() -> String {
    let width = registry::ids().iter().map(|id| id.len()).max().unwrap_or(0);
    let lines: Vec<String> = registry::METHODS.iter().map(|m| format!("  {:width$}  {}", m.id, m.name)).collect();
    format!("Comma-separated method ids to run (default: all):\n{}", lines.join("\n"))
}

/// [`local_out`] for a command that reads a finished run: every committed
/// table is pulled into the cache first.
pub(crate) fn finished_out(out: &str, cache: &CacheArg) -> Result<(PathBuf, Option<RemoteOut>)> {
    let (dir, remote) = local_out(out, cache.cache.clone(), Shard::WHOLE)?;
    if let Some(r) = &remote {
        let n = r.pull_all()?;
        tracing::info!(objects = n, cache = %dir.display(), "pulled {}", r.url());
    }
    Ok((dir, remote))
}

/// The local folder of a finished run that a command reads, checked
/// ([`check_output_folder`]).
pub(crate) fn finished_run(out: &str, cache: &CacheArg) -> Result<PathBuf> {
    let (dir, _) = finished_out(out, cache)?;
    check_output_folder(&dir, out)?;
    Ok(dir)
}

/// A mistyped `--out` is a usage error naming the folder, not a missing
/// table deep in a query.
pub(crate) fn check_output_folder(dir: &Path, out: &str) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    Err(UsageError(format!("--out {out}: not an output folder; run `pipeline run --out {out}` first")).into())
}

/// The config of a job: the config file (or the defaults) with the command
/// line's changes, validated.
pub(crate) fn job_config(job: &JobArgs) -> Result<Config> {
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
    Ok(config)
}

/// The input when `--input` is not given: the sample crawl bundled with
/// the source, found only from the checkout's root folder.
const SAMPLE_INPUT: &str = "sample-data";

/// The inputs of a job: `--input`'s, each list (`@FILE`, or `-` for
/// stdin) read into the inputs it names, as crawl operators keep them: one
/// path, glob or URL a line, relative paths relative to the current
/// folder as on the command line; blank lines and lines starting with `#`
/// are skipped. Without `--input`, the bundled sample, or a usage error
/// that says so where the sample is not.
pub(crate) fn job_inputs(job: &JobArgs) -> Result<Vec<String>> {
    if job.input.is_empty() {
        if Path::new(SAMPLE_INPUT).exists() {
            return Ok(vec![SAMPLE_INPUT.to_string()]);
        }
        let here = std::env::current_dir().map(|d| format!(" ({})", d.display())).unwrap_or_default();
        return Err(UsageError(format!(
            "no --input given, and the default, the sample crawl `{SAMPLE_INPUT}/` of the source checkout, is \
             not in this folder{here}; name a crawl with --input: files, folders, globs or URLs \
             (`--input /crawls/2026-12-01 s3://bucket/crawl/`), `--input @list.txt` (one a line) or `--input -` \
             (the list on stdin)"
        ))
        .into());
    }
    read_input_lists(&job.input)
}

/// `--input`'s arguments with each list (`@FILE`, or `-` for stdin) read
/// into the inputs it names (see [`job_inputs`]): the same for `run`,
/// `status` and `export`. A list that cannot be read or names nothing is a
/// usage error.
pub(crate) fn read_input_lists(given: &[String]) -> Result<Vec<String>> {
    let mut inputs = Vec::new();
    for input in given {
        let list = if input == "-" {
            std::io::read_to_string(std::io::stdin()).map_err(|e| UsageError(format!("--input -: {e}")))?
        } else if let Some(file) = input.strip_prefix('@') {
            std::fs::read_to_string(file).map_err(|e| UsageError(format!("--input {input}: {e}")))?
        } else {
            inputs.push(input.clone());
            continue;
        };
        let named = list_lines(&list);
        if named.is_empty() {
            return Err(UsageError(format!("--input {input}: the list names no input")).into());
        }
        inputs.extend(named);
    }
    Ok(inputs)
}

/// The inputs a list names: its lines, trimmed, but blank ones and
/// `#` comments.
fn list_lines(list: &str) -> Vec<String> {
    let lines = list.lines().map(str::trim);
    lines.filter(|l| !l.is_empty() && !l.starts_with('#')).map(String::from).collect()
}

/// Checks the arguments of `history match` and `history append` (bad ones
/// are usage errors) and reads the run's config.
pub(crate) fn night_settings(night: &NightArgs) -> Result<Config> {
    crate::history::check_crawl_id(&night.crawl_id).map_err(|e| UsageError(format!("{e:#}")))?;
    if !night.out.is_dir() {
        return Err(UsageError(format!("--out {}: no such output folder", night.out.display())).into());
    }
    match &night.config {
        Some(path) => Ok(Config::from_file(path).map_err(|e| UsageError(format!("{e:#}")))?),
        None => Ok(Config::default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_names_its_lines_but_blank_ones_and_comments() {
        let list = "# the night of 2026-12-01\n/crawls/a.warc.gz\n\n  s3://bucket/crawl/  \r\nb/*.warc.gz\n";
        assert_eq!(list_lines(list), ["/crawls/a.warc.gz", "s3://bucket/crawl/", "b/*.warc.gz"]);
        assert!(list_lines("\n# nothing\n").is_empty());
    }
}

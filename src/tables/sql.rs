//! DataFusion glue: a session over the output folder's tables, and the SQL
//! jobs of `jobs/`.
//!
//! Query logic stays in the `.sql` files so analysts can read and rerun it
//! with `pipeline query`; this module only registers tables, substitutes
//! `${name}` parameters from the job config, and streams results.

use crate::process::interrupt::Leftovers;
use anyhow::{Context, Result};
use datafusion::execution::memory_pool::{FairSpillPool, TrackConsumersPool};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};
use std::num::NonZeroUsize;
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

use crate::tables::shard::Shard;

/// Folder under the output folder where DataFusion spills sorts,
/// aggregations and joins that exceed the memory limit. It sits next to the
/// tables rather than in the system temp folder because that is often a
/// RAM-backed tmpfs, where spilling would not free any memory, and because
/// the output disk is the one sized for the crawl.
pub const SPILL_DIR: &str = "_spill";

/// The spill folder of process `pid` under `out` (`_spill/<pid>`): runs
/// side by side (the tasks of a sharded stage) spill apart, and an
/// interrupted run removes its own spill files and no other's.
pub fn spill_dir_of(out: &Path, pid: u32) -> std::path::PathBuf {
    out.join(SPILL_DIR).join(pid.to_string())
}

/// The spill folders under an output folder: every session or scratch
/// file that spills registers this cleanup with the interruption handler
/// ([`crate::process::interrupt::unpublished_write`]).
pub static SPILLS: Leftovers = Leftovers { pids: spilling_pids, remove: remove_spill_of };

/// The processes that have a spill folder under `out`.
fn spilling_pids(out: &Path) -> Vec<u32> {
    let names = std::fs::read_dir(out.join(SPILL_DIR)).into_iter().flatten().flatten();
    let mut pids: Vec<u32> = names.filter_map(|e| e.file_name().to_str()?.parse().ok()).collect();
    pids.sort_unstable();
    pids
}

/// Removes the spill folder of process `pid` under `out`, and the folder
/// of spill folders when no other run uses it.
fn remove_spill_of(out: &Path, pid: u32) {
    let _ = std::fs::remove_dir_all(spill_dir_of(out, pid));
    let _ = std::fs::remove_dir(out.join(SPILL_DIR));
}

/// Removes this process's spill folder under an output folder when
/// dropped, however the run ends (its sessions are gone by then), and the
/// spill folder itself when no other run uses it.
pub struct SpillFolder(pub std::path::PathBuf);

impl Drop for SpillFolder {
    fn drop(&mut self) {
        remove_spill_of(&self.0, std::process::id());
    }
}

/// Parses a memory size as given on the command line: a number of bytes,
/// optionally with a binary unit `K`, `M`, `G` or `T` (powers of 1024; `KB`,
/// `KiB` and lowercase are accepted too) and a fractional part (`1.5G`).
/// Zero, negative, unknown units and sizes beyond the address space are
/// errors, so a typo never silently means "unlimited".
pub fn parse_memory_size(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let shift = match unit.trim().to_ascii_lowercase().trim_end_matches("ib").trim_end_matches('b') {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return Err(format!("`{text}`: unknown unit `{unit}` (use K, M, G or T)")),
    };
    let value: f64 = number.parse().map_err(|_| format!("`{text}` is not a size like 512M or 2G"))?;
    let bytes = (value * (1u64 << shift) as f64).floor();
    if bytes < 1.0 {
        return Err(format!("`{text}`: the memory limit must be at least one byte"));
    }
    if bytes >= usize::MAX as f64 {
        return Err(format!("`{text}` is larger than this machine can address"));
    }
    Ok(bytes as usize)
}

/// Where the SQL stages (`boilerplate`, `stats`, `search_links`,
/// `candidates`, `decide`, `evaluate`: `Stage::runs_sql_on_engine`) run
/// their SQL.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Engine {
    /// DataFusion inside this process.
    #[default]
    Embedded,
    /// An Apache Ballista cluster, through its scheduler at `host:port`.
    /// Its executors read the tables' Parquet files by the same absolute
    /// paths as this process (a shared file system) and run stock
    /// DataFusion: the jobs are plain SQL, without functions of our own.
    Ballista { host: String, port: u16 },
}

impl FromStr for Engine {
    type Err = String;

    /// `embedded`, or `ballista://HOST:PORT`.
    fn from_str(text: &str) -> Result<Engine, String> {
        if text == "embedded" {
            return Ok(Engine::Embedded);
        }
        let bad = || format!("`{text}`: the engine is `embedded` or `ballista://HOST:PORT`");
        let address = text.strip_prefix("ballista://").ok_or_else(bad)?.trim_end_matches('/');
        let (host, port) = address.rsplit_once(':').ok_or_else(bad)?;
        let port: u16 = port.parse().map_err(|_| bad())?;
        if host.is_empty() {
            return Err(bad());
        }
        if cfg!(not(feature = "ballista")) {
            return Err(format!("`{text}`: {NO_BALLISTA}"));
        }
        Ok(Engine::Ballista { host: host.to_string(), port })
    }
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Engine::Embedded => f.write_str("embedded"),
            Engine::Ballista { host, port } => write!(f, "ballista://{host}:{port}"),
        }
    }
}

/// A session for the SQL stages: [`session_with_memory_limit`] when the
/// engine is embedded; otherwise a client of the Ballista scheduler with the
/// same tables registered by absolute path, whose queries run on the
/// cluster's executors (the memory limit is then the executors' own).
pub async fn sql_stage_session(
    out: &Path,
    engine: &Engine,
    memory: Option<crate::process::memory::SqlMemory>,
) -> Result<SessionContext> {
    match engine {
        Engine::Embedded => session_with_memory_limit(out, memory).await,
        Engine::Ballista { host, port } => ballista_session(out, host, *port).await,
    }
}

/// A client session of the Ballista scheduler at `host:port` (see
/// [`sql_stage_session`]).
#[cfg(feature = "ballista")]
async fn ballista_session(out: &Path, host: &str, port: u16) -> Result<SessionContext> {
    use ballista::prelude::{SessionConfigExt, SessionContextExt};
    use datafusion::execution::session_state::SessionStateBuilder;
    let config = SessionConfig::new_with_ballista()
        .set_bool("datafusion.execution.parquet.schema_force_view_types", false)
        // Dynamic filters (TopK, join) lose their wiring when the
        // scheduler ships plan fragments to executors: seen as a
        // failed assertion in DataFusion 55's TopK on the executors.
        .set_bool("datafusion.optimizer.enable_dynamic_filter_pushdown", false)
        // Ballista 55's adaptive planner resubmitted the stages of
        // one evaluate job without end ("stages to be cancelled but
        // its not implemented"); the static planner runs them once.
        .set_bool("ballista.planner.adaptive.enabled", false);
    let state = SessionStateBuilder::new().with_config(config).with_default_features().build();
    let url = format!("df://{host}:{port}");
    let ctx = SessionContext::remote_with_state(&url, state)
        .await
        .with_context(|| format!("cannot reach the Ballista scheduler at {host}:{port}"))?;
    let out = out.canonicalize().with_context(|| format!("output folder {}", out.display()))?;
    register_tables(&ctx, &out).await?;
    Ok(ctx)
}

/// Without feature `ballista` no engine but the embedded one parses, so
/// this is never reached; it keeps [`sql_stage_session`] one function.
#[cfg(not(feature = "ballista"))]
async fn ballista_session(_out: &Path, _host: &str, _port: u16) -> Result<SessionContext> {
    anyhow::bail!("{NO_BALLISTA}")
}

/// Why `ballista://` is refused by a build without feature `ballista`.
const NO_BALLISTA: &str =
    "this pipeline was built without Ballista support; build it with `cargo build --release --features ballista`";

/// A SessionContext with every published table under `out` registered by
/// its folder name (hidden and `_` folders skipped), without a memory limit
/// (`query`, `explain`, `report`; the stages take theirs from the run,
/// [`crate::stages::stage::RunContext::session`]).
pub async fn session_over(out: &Path) -> Result<SessionContext> {
    session_with_memory_limit(out, None).await
}

/// [`session_over`] under a memory pool, if any (a share of the run's
/// limit: [`crate::process::memory::RunLimit::sql`]). With a pool, DataFusion runs
/// under it (a fair spill pool): sorts,
/// aggregations and sort-merge joins spill to `out/_spill` when they reach
/// it, and operators that cannot spill (final merges, the build side of a
/// hash join) fail with a "resources exhausted" error instead of growing
/// past it. Under a small limit an aggregation can fail too when other
/// spilling operators of the same query hold the pool (seen at 8 MB with a
/// group-by feeding a sort), so limits should leave room: tens of MB per
/// core.
pub async fn session_with_memory_limit(
    out: &Path,
    memory: Option<crate::process::memory::SqlMemory>,
) -> Result<SessionContext> {
    session_on_threads(out, memory, crate::process::parallelism::threads(), out).await
}

/// [`session_with_memory_limit`] spilling under `spill` (into its
/// `_spill/<pid>`) instead of under `out`: for `export`, which only reads
/// a finished run, whose folder may be read-only.
pub async fn session_spilling_to(
    out: &Path,
    memory: Option<crate::process::memory::SqlMemory>,
    spill: &Path,
) -> Result<SessionContext> {
    session_on_threads(out, memory, crate::process::parallelism::threads(), spill).await
}

/// [`session_with_memory_limit`] for a process of `threads` threads,
/// spilling under `spill_root`.
async fn session_on_threads(
    out: &Path,
    memory: Option<crate::process::memory::SqlMemory>,
    threads: usize,
    spill_root: &Path,
) -> Result<SessionContext> {
    let partitions = plan_partitions(threads, memory);
    let mut config = SessionConfig::new()
        .with_target_partitions(partitions)
        .set_bool("datafusion.execution.parquet.schema_force_view_types", false)
        // With one partition, DataFusion 55's sort enforcement pushes the
        // window sort of candidates.sql (over a UNION ALL whose branches
        // have a constant `method`) below the union and then finds the
        // merge above it unsatisfied: "SanityCheckPlan ... does not
        // satisfy order requirements", seen on every one-CPU machine.
        // `repartition_sorts` only splits sorts across partitions, which
        // one partition has no use for; off, the plan is sound.
        .set_bool("datafusion.optimizer.repartition_sorts", partitions > 1);
    let mut runtime = RuntimeEnvBuilder::new();
    if let Some(crate::process::memory::SqlMemory { pool_bytes: bytes, sort_merge_joins }) = memory {
        let spill = spill_dir_of(spill_root, std::process::id());
        let _creating = crate::process::interrupt::unpublished_write(&SPILLS)?;
        std::fs::create_dir_all(&spill).with_context(|| format!("cannot create spill folder {}", spill.display()))?;
        // A fair pool: each spillable operator (sort, aggregation,
        // sort-merge join) gets an equal share and spills at it, where the
        // greedy pool let the first sort take everything and the final
        // merge beside it fail ("Resources exhausted ... ExternalSorterMerge").
        let pool = TrackConsumersPool::new(FairSpillPool::new(bytes), NonZeroUsize::new(5).expect("5 > 0"));
        // A sort that spilled merges its spill files with as many at once
        // as the pool lets it reserve, and that reservation cannot spill: two
        // such merges took 550 and 473 MB of a 1 GB pool at 8 Javadoc copies
        // and starved every other operator. At most SPILL_MERGE_FAN_IN files
        // at a time, merged in more passes when there are more, bounds each
        // merge to that many batches.
        runtime = runtime
            .with_memory_pool(Arc::new(pool))
            .with_temp_file_path(spill)
            .with_max_spill_merge_fan_in(SPILL_MERGE_FAN_IN);
        // Hash joins cannot spill their build side; sort-merge joins can.
        // Every sort partition reserves memory for its final merge up front
        // (10 MB by default), so the reservation must shrink with the pool
        // or a small pool is used up before any data arrives. The candidates
        // query runs about ten sorts at once (the window of each method
        // family's chains, the per-document ranking, the final order), so a
        // 32nd of the pool per partition; but a merge needs room to merge
        // its spill files, so never below 1 MB unless the pool is tiny (a
        // quarter of the pool per partition at most). Measured: 64 MB runs
        // the sample's candidates (8 MB reservations did not), and an 8 MB
        // pool sorts 19 MB (128 KB reservations did not).
        let reservation = (bytes / (32 * partitions)).max(1 << 20).min(bytes / (4 * partitions)).min(10 << 20);
        config = config
            .set_bool("datafusion.optimizer.prefer_hash_join", !sort_merge_joins)
            .set_usize("datafusion.execution.sort_spill_reservation_bytes", reservation);
    }
    let runtime = runtime.build_arc()?;
    let ctx = SessionContext::new_with_config_rt(config, Arc::clone(&runtime));
    register_tables(&ctx, out).await?;
    Ok(ctx)
}

/// The partitions a session plans its queries for: the process's
/// `threads`, but at least 2 when the joins must be sort-merge joins (a
/// limit the user gave). Why: DataFusion 55's planner makes a sort-merge
/// join only for more than one target partition; with one it builds a
/// hash table of a whole side, which cannot spill. A min-hash-only run of
/// the Javadoc texts with `--threads 1 --memory-limit 256M` failed in
/// `candidates` ("Failed to allocate additional 68.0 MB for
/// HashJoinInput": the build side was all of `sketches`), where with two
/// partitions it took 156 MB. Two partitions on one thread run one after
/// the other: the plan changes (to a two-core machine's), not the threads.
/// Its cost is the sort-merge joins' (the Javadoc texts, every method, one
/// thread, `--memory-limit 2G`: 115.9 → 128.5 CPU-s, `candidates` 10.9 →
/// 21.2, the run's peak 606 → 455 MB).
fn plan_partitions(threads: usize, memory: Option<crate::process::memory::SqlMemory>) -> usize {
    if memory.is_some_and(|m| m.sort_merge_joins) {
        threads.max(2)
    } else {
        threads
    }
}

/// Spill files a sort or a spilled aggregation merges at once under a
/// memory limit (see [`session_with_memory_limit`]): each holds one batch
/// (or a few) in the merge, so 128 of a11's narrow rows are tens of MB,
/// and a merge takes no more than the pool lets it reserve; with more
/// files it merges in passes. Each pass reads and writes every row again,
/// so the bound sets how the cost grows with the crawl: at 16, 8 copies of
/// the Javadoc crawl gave a11's sort of 64 M shingle rows 56 files and its
/// group-by 69, merged in two passes where 1 copy (8 files) took one. At
/// 128 both are one pass: `candidates` at 8 copies wrote 9.3 GB of spill
/// files instead of 13.3 and took 132.7-135.9 CPU-s against 138.8 on the
/// same tables (docs/benchmarks.md), its peak RSS 595 MB → 1.24 GB of the
/// 2 GB limit.
const SPILL_MERGE_FAN_IN: usize = 128;

/// The least memory a pass of the map side over the whole corpus takes
/// before it spills to disk ([`crate::stages::stage::RunContext::corpus_sort_session`]
/// for `tokens`' sort of the texts, `corpus_sql_stage_session` for
/// `boilerplate`'s group-bys of lines): such passes hold the crawl's bulk,
/// and on a small crawl spilling them costs little CPU (the min-hash-only
/// run on Javadoc, 169 MB of text: `tokens` 3.7 → 3.9 CPU-s, peak RSS
/// 431 → 255 MB; `boilerplate` 0.65 → 1.4 CPU-s, 289 → 130 MB).
pub const CORPUS_PASS_BYTES: usize = 64 << 20;

/// A pass over the whole corpus may hold this many bytes of memory per
/// byte of the table it reads (its Parquet files on disk), between
/// [`CORPUS_PASS_BYTES`] and the run's pool. A fixed budget spills a
/// growing share of a growing crawl, and merging more spilled runs costs
/// more per row: at 8 copies of the Javadoc crawl under 64 MB `tokens`
/// took 46.0 CPU-s (9.4 times 1 copy) and `boilerplate` 29.6 (10.0 times).
/// Twice the table gives 1 copy its 64 MB (`documents` is 28 MB there) and
/// 8 copies 464 MB for `tokens` and 304 MB for `boilerplate`.
pub const CORPUS_PASS_BYTES_PER_TABLE_BYTE: usize = 2;

/// The bytes of the Parquet files of `table` under `out` (0 when it has
/// none).
pub fn table_bytes(out: &Path, table: &str) -> u64 {
    let files = crate::tables::write::parquet_files(&out.join(table)).unwrap_or_default();
    files.iter().filter_map(|f| f.metadata().ok()).map(|m| m.len()).sum()
}

/// `session` planning its queries as one partition: for a stage that reads
/// the whole corpus as one stream, in the order of its files (`blocks`) or
/// in one sort (`tokens` and the export read `documents` by doc_id, texts
/// included), so that the sort takes the memory pool's share. With a
/// partition per core, each sort that fits in its share is merged in
/// memory, where it cannot spill, and the merge of the partitions needs
/// memory beside them: under `--memory-limit 2G` that failed at 100,000
/// Javadoc pages. One sort either fits or spills, and its output streams.
/// The stage's own work stays parallel (rayon).
pub fn one_stream(session: SessionContext) -> Result<SessionContext> {
    let mut state = session.state();
    state.config_mut().options_mut().set("datafusion.execution.target_partitions", "1")?;
    // One partition has no sorts to split (see session_with_memory_limit).
    state.config_mut().options_mut().set("datafusion.optimizer.repartition_sorts", "false")?;
    Ok(SessionContext::new_with_state(state))
}

/// `session` reading `rows` rows per batch instead of DataFusion's 8,192:
/// for the stages that read texts, where one batch of long pages is what
/// they hold in memory (and what a sort spills at a time).
pub fn with_batch_size(session: SessionContext, rows: usize) -> Result<SessionContext> {
    let mut state = session.state();
    state.config_mut().options_mut().set("datafusion.execution.batch_size", &rows.to_string())?;
    Ok(SessionContext::new_with_state(state))
}

/// `session` with joins that are not repartitioned: a join of a wide
/// table with a narrow one (`jobs/df.sql`: `tokens`' term lists less the
/// documents of `exact_copies`) then builds a hash table of the narrow
/// side and streams the wide one past it in the file order. Under a memory
/// limit the planner otherwise repartitions both sides and sort-merges
/// them, sorting the wide rows: on 10,139 Javadoc pages under
/// `--memory-limit 2G` one batch of term lists (63 MB) was more than a
/// sort's fair share of the pool (60 MB), and `stats` failed. The narrow
/// side held is one doc_id per exact copy.
pub fn broadcast_joins(session: SessionContext) -> Result<SessionContext> {
    let mut state = session.state();
    state.config_mut().options_mut().set("datafusion.optimizer.repartition_joins", "false")?;
    Ok(SessionContext::new_with_state(state))
}

/// Tables whose every part file is written in doc_id order (`tokens`: its
/// stage reads and writes documents in that order; `exact_copies`: its job
/// ends with `ORDER BY doc_id`). Declared to DataFusion,
/// so `ORDER BY doc_id` over them is a streaming merge of the files instead
/// of a sort that holds the whole table: the stages that read the corpus in
/// doc_id order (`signatures` chunk by chunk, leaving the copies out as
/// they stream past) stay bounded in memory.
const SORTED_BY_DOC_ID: [&str; 2] = ["tokens", "exact_copies"];

/// Registers every published table under `out` by its folder name (hidden
/// and `_` folders skipped, and folders without a Parquet file, which are
/// no tables: a user's stray folder must not break every query).
async fn register_tables(ctx: &SessionContext, out: &Path) -> Result<()> {
    let holds_parquet = |dir: &Path| {
        std::fs::read_dir(dir).is_ok_and(|mut files| {
            files.any(|f| f.is_ok_and(|f| f.file_name().to_string_lossy().ends_with(".parquet")))
        })
    };
    if let Ok(entries) = std::fs::read_dir(out) {
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_dir() && holds_parquet(&e.path()))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.') && !n.starts_with('_'))
            .collect();
        names.sort();
        for name in names {
            register_table(ctx, out, &name).await?;
        }
    }
    Ok(())
}

/// Registers table `name` of `out` (its folder of Parquet part files), in
/// place of any table registered under that name: how a session opened over
/// `out` sees each table, and how a stage sees a table it has just written.
pub async fn register_table(ctx: &SessionContext, out: &Path, name: &str) -> Result<()> {
    let path = out.join(name);
    let mut options = ParquetReadOptions::default();
    if SORTED_BY_DOC_ID.contains(&name) {
        let doc_id = datafusion::prelude::col("doc_id").sort(true, false);
        options = options.file_sort_order(vec![vec![doc_id]]);
    }
    ctx.deregister_table(name)?;
    ctx.register_parquet(name, path.to_string_lossy().as_ref(), options)
        .await
        .with_context(|| format!("cannot register table {name} at {}", path.display()))?;
    Ok(())
}

/// The number a `SELECT COUNT(*) AS n ...` query gives (0 for no row).
pub async fn count(session: &SessionContext, sql: &str) -> Result<u64> {
    let batches = session.sql(sql).await?.collect().await?;
    match batches.iter().find(|b| b.num_rows() > 0) {
        Some(b) => Ok(crate::tables::column::<arrow::array::Int64Array>(b, "n")?.value(0).max(0) as u64),
        None => Ok(0),
    }
}

/// Replaces `${name}` placeholders in a SQL job with values.
pub fn substitute(sql: &str, params: &[(&str, String)]) -> String {
    let mut s = sql.to_string();
    for (name, value) in params {
        s = s.replace(&format!("${{{name}}}"), value);
    }
    debug_assert!(!s.contains("${"), "unsubstituted parameter in SQL job: {s}");
    s
}

/// Runs one SQL statement and writes its result as `table` under `out`.
pub async fn run_into_table(ctx: &SessionContext, out: &Path, table: &str, sql: &str) -> Result<u64> {
    run_parts_into_table(ctx, out, table, &[("0", sql.to_string())]).await
}

/// Runs SQL statements one after the other, each written as its own part
/// of `table` under `out`, and publishes the table once every part is
/// written. One statement at a time, because the inputs of one plan (a
/// `UNION ALL`) run at once and share the memory pool: each big sort or
/// group-by gets a slice of it and spills where it alone would fit.
pub async fn run_parts_into_table(
    ctx: &SessionContext,
    out: &Path,
    table: &str,
    parts: &[(&str, String)],
) -> Result<u64> {
    run_parts_into_shard(ctx, out, table, Shard::WHOLE, parts).await
}

/// [`run_parts_into_table`] for one task of a map stage: the parts are
/// `shard`'s, and replace only its own.
pub async fn run_parts_into_shard(
    ctx: &SessionContext,
    out: &Path,
    table: &str,
    shard: Shard,
    parts: &[(&str, String)],
) -> Result<u64> {
    let dir = crate::tables::write::TableDir::create_for(out, table, shard)?;
    let mut rows = 0;
    for (part, sql) in parts {
        let started = std::time::Instant::now();
        let df = ctx.sql(sql).await.with_context(|| format!("SQL for table {table}"))?;
        let written = crate::tables::write::write_stream_part(&dir, part, df.execute_stream().await?).await?;
        // A stage's SQL tables are its steps: which one the time goes to.
        tracing::debug!(
            table,
            part,
            rows = written,
            seconds = format!("{:.2}", started.elapsed().as_secs_f64()),
            "wrote"
        );
        rows += written;
    }
    dir.commit()?;
    Ok(rows)
}

/// Splits a job file into statements on `;` at line ends, dropping
/// comment-only pieces, so one file can define several outputs in order.
pub fn statements(sql: &str) -> Vec<String> {
    sql.split(";\n")
        .map(|s| s.trim().trim_end_matches(';').trim().to_string())
        .filter(|s| s.lines().any(|l| !l.trim().is_empty() && !l.trim_start().starts_with("--")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{RecordBatch, StringArray, UInt64Array};
    use arrow::datatypes::{DataType, Field, Schema};
    use datafusion::physical_plan::{collect, ExecutionPlan};

    #[test]
    fn engines_parse() {
        assert_eq!("embedded".parse::<Engine>(), Ok(Engine::Embedded));
        let ballista = Engine::Ballista { host: "10.0.0.5".into(), port: 50050 };
        if cfg!(feature = "ballista") {
            assert_eq!("ballista://10.0.0.5:50050".parse::<Engine>(), Ok(ballista.clone()));
        } else {
            let refused = "ballista://10.0.0.5:50050".parse::<Engine>().unwrap_err();
            assert!(refused.contains("--features ballista"), "{refused}");
        }
        assert_eq!(ballista.to_string(), "ballista://10.0.0.5:50050");
        for bad in ["", "ballista://", "ballista://host", "ballista://:1", "ballista://h:99999", "df://h:1", "spark"] {
            assert!(bad.parse::<Engine>().is_err(), "`{bad}` must be rejected");
        }
    }

    #[test]
    fn memory_sizes_parse_with_binary_units() {
        assert_eq!(parse_memory_size("1000"), Ok(1000));
        assert_eq!(parse_memory_size("2K"), Ok(2048));
        assert_eq!(parse_memory_size("512m"), Ok(512 * 1024 * 1024));
        assert_eq!(parse_memory_size("2G"), Ok(2 * 1024 * 1024 * 1024));
        assert_eq!(parse_memory_size("2GiB"), Ok(2 * 1024 * 1024 * 1024));
        assert_eq!(parse_memory_size("3 MB"), Ok(3 * 1024 * 1024));
        assert_eq!(parse_memory_size("1.5K"), Ok(1536));
        for bad in ["", "0", "0.1", "G", "2X", "-1G", "1.2.3M", "99999999999T"] {
            assert!(parse_memory_size(bad).is_err(), "`{bad}` must be rejected");
        }
    }

    /// Sum of the spill counts of every operator of an executed plan.
    fn spills(plan: &Arc<dyn ExecutionPlan>) -> usize {
        let own = plan.metrics().and_then(|m| m.spill_count()).unwrap_or(0);
        own + plan.children().into_iter().map(spills).sum::<usize>()
    }

    /// Writes table `t` (key, payload) under `out`: `n` rows, about 60 bytes
    /// each, keys from a hash of the row number so no order is given for
    /// free.
    fn write_table(out: &Path, n: usize) -> Vec<(u64, String)> {
        let hash = |x: u64| xxhash_rust::xxh3::xxh3_64(&x.to_le_bytes());
        let rows: Vec<(u64, String)> = (0..n as u64)
            .map(|i| {
                let key = hash(2 * i) % 1_000_000;
                (key, format!("row {i:08} payload {:032x}", hash(2 * i + 1)))
            })
            .collect();
        let schema = Arc::new(Schema::new(vec![
            Field::new("key", DataType::UInt64, false),
            Field::new("payload", DataType::Utf8, false),
        ]));
        std::fs::create_dir_all(out.join("t")).unwrap();
        let file = std::fs::File::create(out.join("t/part-0.parquet")).unwrap();
        let mut w = parquet::arrow::ArrowWriter::try_new(file, Arc::clone(&schema), None).unwrap();
        for chunk in rows.chunks(8192) {
            let keys = UInt64Array::from_iter_values(chunk.iter().map(|r| r.0));
            let payloads = StringArray::from_iter_values(chunk.iter().map(|r| r.1.as_str()));
            w.write(&RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(keys), Arc::new(payloads)]).unwrap())
                .unwrap();
        }
        w.close().unwrap();
        rows
    }

    /// Runs `sql` and returns its batches and how often it spilled.
    async fn run(ctx: &SessionContext, sql: &str) -> Result<(Vec<RecordBatch>, usize)> {
        let plan = ctx.sql(sql).await?.create_physical_plan().await?;
        let batches = collect(Arc::clone(&plan), ctx.task_ctx()).await?;
        Ok((batches, spills(&plan)))
    }

    #[test]
    fn folders_without_parquet_files_are_no_tables() {
        let out = std::env::temp_dir().join(format!("neardup-stray-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        write_table(&out, 10);
        std::fs::create_dir_all(out.join("stray")).unwrap();
        std::fs::write(out.join("stray/notes.txt"), "not a table").unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let names = rt.block_on(async {
            let ctx = session_over(&out).await.unwrap();
            ctx.catalog("datafusion").unwrap().schema("public").unwrap().table_names()
        });
        assert_eq!(names, ["t"]);
        std::fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn a_sort_spills_under_a_small_memory_limit() {
        let out = std::env::temp_dir().join(format!("neardup-spill-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        // About 19 MB of rows in memory, more than twice the limit. (Much
        // smaller limits fail: the final merge of the sorted partitions
        // cannot spill and needs a batch per spill file.)
        let rows = write_table(&out, 300_000);
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(async {
            let pool = crate::process::memory::SqlMemory { pool_bytes: 8 << 20, sort_merge_joins: true };
            let limited = session_with_memory_limit(&out, Some(pool)).await.unwrap();
            // The sort: every row back, in key then payload order.
            let (batches, spilled) = run(&limited, "SELECT key, payload FROM t ORDER BY key, payload").await.unwrap();
            assert!(spilled > 0, "a 19 MB sort under an 8 MB limit must spill");
            let got: Vec<(u64, String)> = batches
                .iter()
                .flat_map(|b| {
                    let k = b.column(0).as_any().downcast_ref::<UInt64Array>().unwrap().clone();
                    let p = b.column(1).as_any().downcast_ref::<StringArray>().unwrap().clone();
                    (0..b.num_rows()).map(move |i| (k.value(i), p.value(i).to_string()))
                })
                .collect();
            let mut expected = rows.clone();
            expected.sort();
            assert_eq!(got, expected);
            // Without a limit nothing spills, and no spill folder is made.
            let _ = std::fs::remove_dir_all(out.join(SPILL_DIR));
            let unlimited = session_with_memory_limit(&out, None).await.unwrap();
            let (_, spilled) = run(&unlimited, "SELECT key, payload FROM t ORDER BY key, payload").await.unwrap();
            assert_eq!(spilled, 0);
            assert!(!out.join(SPILL_DIR).exists());
        });
        let _ = std::fs::remove_dir_all(&out);
    }

    #[test]
    fn a_given_limit_plans_spilling_joins_on_one_thread_too() {
        let out = std::env::temp_dir().join(format!("neardup-join-plan-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        write_table(&out, 10);
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let join = "EXPLAIN SELECT a.key FROM t a JOIN t b ON a.key = b.key";
        let plan_of = |memory, threads| {
            rt.block_on(async {
                let ctx = session_on_threads(&out, memory, threads, &out).await.unwrap();
                let batches = ctx.sql(join).await.unwrap().collect().await.unwrap();
                arrow::util::pretty::pretty_format_batches(&batches).unwrap().to_string()
            })
        };
        let given = crate::process::memory::SqlMemory { pool_bytes: 64 << 20, sort_merge_joins: true };
        for threads in [1, 2] {
            let plan = plan_of(Some(given), threads);
            assert!(plan.contains("SortMergeJoin"), "{threads} thread(s) under a given limit:\n{plan}");
        }
        // Under the default limit, and without one, the join is a hash join.
        let default = crate::process::memory::SqlMemory { sort_merge_joins: false, ..given };
        for memory in [Some(default), None] {
            assert!(plan_of(memory, 1).contains("HashJoinExec"));
        }
        let _ = std::fs::remove_dir_all(&out);
    }
}

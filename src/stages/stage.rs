//! What every stage is: the [`Stage`] trait, the [`RunContext`] it runs
//! in, and the errors that stop a stage before it starts. They live with
//! the stages (the runner above only orders and runs them), so that a
//! stage's file needs nothing from the layers above it.

use anyhow::Result;
use serde_json::Value;
use std::path::PathBuf;

use crate::config::Config;
pub use crate::tables::manifest::StageReport;
use crate::tables::shard::Shard;
use crate::tables::Table;

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
    /// rather than refuse ([`crate::tables::lock`]).
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
    /// The context of the stages over the output folder `out` under
    /// `config`: the whole crawl (unsharded), no input files, the embedded
    /// engine, no progress bars, no memory limit, no history, and a busy
    /// lock refused rather than waited for. `pipeline run`, `pipeline
    /// status` and `pipeline history match` all start from it and set what
    /// their options change, so a new field gets its default here once.
    pub fn new(out: PathBuf, config: Config) -> Result<RunContext> {
        Ok(RunContext {
            out,
            config,
            inputs: Vec::new(),
            runtime: crate::process::parallelism::runtime()?,
            progress: false,
            shard: Shard::WHOLE,
            engine: crate::tables::sql::Engine::Embedded,
            memory_limit: None,
            wait_for_lock: false,
            history: None,
        })
    }

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

/// The member of a stage's external inputs ([`Stage::external_fingerprint`])
/// that says how they were named on the command line (ingest: the
/// `--input` arguments and the path each file was read by). It is what
/// `documents.warc_file` and the messages show, what `pipeline status`
/// without `--input` reads the inputs again from, and what the export
/// matches the tables' file names with; but another spelling of the same
/// files (relative, absolute, through a link) is the same input, so it is
/// left out of the fingerprint.
pub const AS_GIVEN: &str = "as_given";

/// `external` without its [`AS_GIVEN`] member: what identifies a stage's
/// external inputs, whichever way they were named.
pub fn spelling_free(external: &Value) -> Value {
    let mut identity = external.clone();
    if let Some(members) = identity.as_object_mut() {
        members.remove(AS_GIVEN);
    }
    identity
}

/// One step of the pipeline.
pub trait Stage {
    /// Name used by `--stage` and for the manifest file.
    fn name(&self) -> &'static str;
    /// Tables this stage reads (each made by an earlier stage), typed: a
    /// name without a schema file does not compile.
    fn inputs(&self) -> Vec<Table>;
    /// The tables of [`Stage::inputs`] that task `shard` reads, which the
    /// run pulls from an object store and checks before the task starts:
    /// all of them, unless a task's share of the work never opens one
    /// (`method_state`). Every input stage's manifests count for the
    /// fingerprint whatever the task reads.
    fn task_inputs(&self, _config: &Config, _shard: Shard) -> Vec<Table> {
        self.inputs()
    }
    /// The inputs of which task I of N reads only the part files that can
    /// hold its documents ([`Shard::may_hold_docs_of`]: parts written by
    /// the tasks of a stage sharded by document): a run pulls only those
    /// from an object store. Pulled whole, a table of N parts read so by
    /// N tasks was N² GETs where machines do not keep their task's cache.
    fn own_document_inputs(&self) -> Vec<Table> {
        Vec::new()
    }
    /// Tables this stage writes.
    fn outputs(&self, config: &Config) -> Vec<Table>;
    /// The part of the configuration the outputs depend on.
    fn config_section(&self, config: &Config) -> Value;
    /// Extra inputs outside the output folder (ingest: the archive files).
    /// A top-level member [`AS_GIVEN`] records how the user named them; it
    /// is kept in the manifest but is no part of the fingerprint (see
    /// [`spelling_free`]).
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

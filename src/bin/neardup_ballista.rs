//! `neardup-ballista`: starts a stock Apache Ballista scheduler or executor
//! on this machine, for `pipeline run --engine ballista://HOST:PORT`.
//!
//! The SQL stages are plain SQL over Parquet, so any Ballista 55 cluster
//! runs them (the stock `ballista-scheduler` and `ballista-executor`
//! binaries included); this binary only spares a separate install of those,
//! and the tests use it to start a cluster of processes on loopback. It adds
//! no functions, codecs or table providers of ours to the nodes.
//! (Ballista 55's executors know DataFusion's core scalar functions but not
//! its array functions, `datafusion::functions_nested`; the SQL stage jobs
//! use none of them, so the executors need nothing added.)
//!
//! One change to the executors, for a Ballista 55 bug that stalls jobs: a
//! task reports one metric set per operator that has metrics, and an
//! operator a task never started (the probe side of a join whose build side
//! came out empty in that partition) has none, so tasks of one stage can
//! report different numbers of sets. The scheduler then rejects the task's
//! status update ("task metrics array size 5 does not equal with the stage
//! metrics array size 6") and waits for that task forever. Our executors
//! report no operator metrics, which the scheduler accepts as "not
//! collected" ([`WithoutOperatorMetrics`]); only the per-operator numbers in
//! Ballista's job view are lost. Stock executors can stall on such jobs
//! (seen in `evaluate`'s gold scoring).

use anyhow::{Context, Result};
use ballista_core::config::TaskSchedulingPolicy;
use ballista_core::serde::protobuf::{RuntimeStatsReport, ShuffleWritePartition, TaskColumnStats, WindowStateReport};
use ballista_core::JobId;
use ballista_executor::execution_engine::{DefaultExecutionEngine, ExecutionEngine, QueryStageExecutor};
use ballista_executor::executor_process::{start_executor_process, ExecutorProcessConfig};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::start_server;
use clap::{Parser, Subcommand};
use datafusion::execution::TaskContext;
use datafusion::physical_plan::metrics::MetricsSet;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionConfig;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Parser)]
#[command(
    name = "neardup-ballista",
    version,
    about = "Start a Ballista scheduler or executor for the pipeline's SQL stages"
)]
struct Cli {
    #[command(subcommand)]
    role: Role,
}

#[derive(Subcommand)]
enum Role {
    /// A scheduler: accepts the SQL stages' jobs and hands their tasks to
    /// executors. Health at http://HOST:PORT/healthz, readiness (enough
    /// executors registered) at /readyz.
    Scheduler {
        /// Address to listen on and advertise.
        #[arg(long, default_value = "127.0.0.1")]
        host: String,
        #[arg(long, default_value_t = 50050)]
        port: u16,
        /// Executors that must be registered before /readyz answers 200.
        #[arg(long, default_value_t = 1)]
        min_executors: usize,
    },
    /// An executor: registers with the scheduler and runs its tasks. It
    /// reads the tables' Parquet files by the paths the client registered,
    /// so it needs the same file system as the pipeline.
    Executor {
        /// Address to listen on and advertise.
        #[arg(long, default_value = "127.0.0.1")]
        host: String,
        /// Arrow Flight port (results and shuffle data are fetched here).
        #[arg(long, default_value_t = 50051)]
        port: u16,
        /// gRPC port (the scheduler pushes tasks here).
        #[arg(long, default_value_t = 50052)]
        grpc_port: u16,
        #[arg(long, default_value = "127.0.0.1")]
        scheduler_host: String,
        #[arg(long, default_value_t = 50050)]
        scheduler_port: u16,
        /// Tasks run at once (default: the cores of this machine).
        #[arg(long)]
        concurrent_tasks: Option<usize>,
        /// Memory for the tasks, e.g. 8G (default: Ballista's, 70% of the
        /// machine's memory per executor; set it when several executors
        /// share a machine).
        #[arg(long, value_parser = neardup::tables::sql::parse_memory_size)]
        memory: Option<usize>,
        /// Folder for shuffle files.
        #[arg(long)]
        work_dir: PathBuf,
    },
}

fn main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("NEARDUP_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    // Ballista's own binaries run their planners on 32 MiB stacks: deep
    // plans recurse.
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().thread_stack_size(32 << 20).build()?;
    runtime.block_on(async move {
        match cli.role {
            Role::Scheduler { host, port, min_executors } => {
                let mut config = SchedulerConfig::default()
                    .with_hostname(host.clone())
                    .with_port(port)
                    .with_scheduler_policy(TaskSchedulingPolicy::PushStaged);
                config.min_ready_executors = min_executors;
                let address = format!("{host}:{port}").parse().with_context(|| format!("address {host}:{port}"))?;
                let cluster = BallistaCluster::new_from_config(&config).await?;
                start_server(cluster, address, Arc::new(config)).await?;
            }
            Role::Executor {
                host,
                port,
                grpc_port,
                scheduler_host,
                scheduler_port,
                concurrent_tasks,
                memory,
                work_dir,
            } => {
                std::fs::create_dir_all(&work_dir)
                    .with_context(|| format!("cannot create work folder {}", work_dir.display()))?;
                let vcores =
                    concurrent_tasks.unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
                let config = ExecutorProcessConfig {
                    bind_host: host.clone(),
                    external_host: Some(host),
                    port,
                    grpc_port,
                    scheduler_host,
                    scheduler_port,
                    // Keep retrying while the scheduler starts.
                    scheduler_connect_timeout_seconds: 60,
                    vcores,
                    memory_pool_size: memory.map(|bytes| bytes as u64),
                    work_dir: Some(work_dir.to_string_lossy().into_owned()),
                    task_scheduling_policy: TaskSchedulingPolicy::PushStaged,
                    print_thread_info: false,
                    override_execution_engine: Some(Arc::new(WithoutOperatorMetrics(DefaultExecutionEngine::new()))),
                    ..Default::default()
                };
                start_executor_process(Arc::new(config)).await?;
            }
        }
        Ok(())
    })
}

/// Ballista's default execution engine, whose query stages report no
/// operator metrics (see the module doc for the stall this avoids).
struct WithoutOperatorMetrics(DefaultExecutionEngine);

impl ExecutionEngine for WithoutOperatorMetrics {
    fn create_query_stage_exec(
        &self,
        job_id: JobId,
        stage_id: usize,
        task_id: usize,
        global_output_partition_ids: Vec<usize>,
        plan: Arc<dyn ExecutionPlan>,
        work_dir: &str,
        config: &SessionConfig,
    ) -> datafusion::error::Result<Arc<dyn QueryStageExecutor>> {
        let stage = self.0.create_query_stage_exec(
            job_id,
            stage_id,
            task_id,
            global_output_partition_ids,
            plan,
            work_dir,
            config,
        )?;
        Ok(Arc::new(StageWithoutMetrics(stage)))
    }
}

/// A query stage that runs as Ballista's and reports no operator metrics;
/// everything else it reports (shuffle output, runtime and column
/// statistics, window state) is the stage's own.
#[derive(Debug)]
struct StageWithoutMetrics(Arc<dyn QueryStageExecutor>);

impl std::fmt::Display for StageWithoutMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

#[async_trait::async_trait]
impl QueryStageExecutor for StageWithoutMetrics {
    async fn execute_query_stage(
        &self,
        task_id: usize,
        context: Arc<TaskContext>,
    ) -> datafusion::error::Result<Vec<ShuffleWritePartition>> {
        self.0.execute_query_stage(task_id, context).await
    }
    fn collect_plan_metrics(&self) -> Vec<MetricsSet> {
        Vec::new()
    }
    fn collect_runtime_stats_reports(&self) -> Vec<RuntimeStatsReport> {
        self.0.collect_runtime_stats_reports()
    }
    fn collect_window_state_reports(&self) -> datafusion::error::Result<Vec<WindowStateReport>> {
        self.0.collect_window_state_reports()
    }
    fn collect_column_stats(&self) -> Vec<TaskColumnStats> {
        self.0.collect_column_stats()
    }
}

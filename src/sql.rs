//! DataFusion glue: a session over the output folder's tables, and the SQL
//! jobs of `jobs/`.
//!
//! Query logic stays in the `.sql` files so analysts can read and rerun it
//! with `pipeline query`; this module only registers tables, substitutes
//! `${name}` parameters from the job config, and streams results.

use anyhow::{Context, Result};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};
use std::path::Path;
use std::sync::Arc;

/// A SessionContext with every published table under `out` registered by
/// its folder name (hidden and `_` folders skipped).
pub async fn session_over(out: &Path) -> Result<SessionContext> {
    let config = SessionConfig::new()
        .with_target_partitions(std::thread::available_parallelism().map_or(2, |n| n.get()))
        .set_bool("datafusion.execution.parquet.schema_force_view_types", false);
    let runtime = RuntimeEnvBuilder::new().build_arc()?;
    let ctx = SessionContext::new_with_config_rt(config, Arc::clone(&runtime));
    if let Ok(entries) = std::fs::read_dir(out) {
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.') && !n.starts_with('_'))
            .collect();
        names.sort();
        for name in names {
            let path = out.join(&name);
            ctx.register_parquet(&name, path.to_string_lossy().as_ref(), ParquetReadOptions::default())
                .await
                .with_context(|| format!("cannot register table {name} at {}", path.display()))?;
        }
    }
    Ok(ctx)
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
    let df = ctx.sql(sql).await.with_context(|| format!("SQL for table {table}"))?;
    let stream = df.execute_stream().await?;
    crate::table::write_stream(out, table, stream).await
}

/// Splits a job file into statements on `;` at line ends, dropping
/// comment-only pieces, so one file can define several outputs in order.
pub fn statements(sql: &str) -> Vec<String> {
    sql.split(";\n")
        .map(|s| s.trim().trim_end_matches(';').trim().to_string())
        .filter(|s| s.lines().any(|l| !l.trim().is_empty() && !l.trim_start().starts_with("--")))
        .collect()
}

//! The history's tables in a DataFusion session: registered for the
//! match stages and for `pipeline query --history`, beside a night's.

use anyhow::{Context, Result};
use std::path::Path;

use crate::history::folder::tables;
use crate::history::History;

/// A session over the night's tables in `out` (under `memory_limit`)
/// with the history's registered ([`register`]).
pub async fn session_over(
    history: &History,
    out: &Path,
    memory_limit: Option<crate::process::memory::SqlMemory>,
) -> Result<datafusion::prelude::SessionContext> {
    let session = crate::tables::sql::session_with_memory_limit(out, memory_limit).await?;
    register(history, &session).await?;
    Ok(session)
}

/// Registers every table of `history` in `session` as `history_<table>`
/// (`history_documents` as it is), with a `crawl` column read from the
/// partition folders, empty while no crawl holds it; returns the names.
/// For analysts' queries: an append under way may show a crawl's
/// partitions before its manifest.
pub async fn register(history: &History, session: &datafusion::prelude::SessionContext) -> Result<Vec<String>> {
    let mut names = Vec::new();
    for table in tables() {
        let dir = history.root().join(table);
        let name = if table.starts_with("history_") { table.to_string() } else { format!("history_{table}") };
        if !dir.is_dir() || std::fs::read_dir(&dir)?.next().is_none() {
            let mut fields: Vec<arrow::datatypes::FieldRef> =
                crate::tables::schema::arrow_schema(table).fields().iter().cloned().collect();
            fields.push(std::sync::Arc::new(arrow::datatypes::Field::new(
                "crawl",
                arrow::datatypes::DataType::Utf8,
                false,
            )));
            let empty =
                arrow::record_batch::RecordBatch::new_empty(std::sync::Arc::new(arrow::datatypes::Schema::new(fields)));
            session.register_batch(&name, empty)?;
            names.push(name);
            continue;
        }
        let options = datafusion::prelude::ParquetReadOptions::default()
            .table_partition_cols(vec![("crawl".to_string(), arrow::datatypes::DataType::Utf8)]);
        session
            .register_parquet(&name, format!("{}/", dir.display()), options)
            .await
            .with_context(|| format!("cannot register {name} at {}", dir.display()))?;
        names.push(name);
    }
    Ok(names)
}

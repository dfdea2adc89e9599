//! Writing tables: Parquet (zstd) under `DIR/<table>/`, atomically.
//!
//! A table is written into a hidden temporary folder next to its final
//! place and renamed over the old one only when every row is on disk, so a
//! crashed or failed stage leaves the previous table intact and a later stage
//! never reads half a table.

use anyhow::{Context, Result};
use arrow::array::{ArrayBuilder, ArrayRef, RecordBatch};
use arrow::datatypes::{DataType, SchemaRef};
use datafusion::physical_plan::SendableRecordBatchStream;
use futures::StreamExt;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use std::fs::File;
use std::path::{Path, PathBuf};

use crate::schema;

/// Rows per record batch and per Parquet row group flush.
pub const BATCH_ROWS: usize = 8192;

/// Builds record batches of one table row by row, with column builders made
/// from the table's schema file.
pub struct BatchBuilder {
    schema: SchemaRef,
    builders: Vec<Box<dyn ArrayBuilder>>,
}

impl BatchBuilder {
    /// A builder for `table` (its schema from `schemas/`).
    pub fn new(table: &str) -> BatchBuilder {
        let schema = schema::arrow_schema(table);
        let builders = schema
            .fields()
            .iter()
            .map(|f| typed_builder(f.data_type()))
            .collect();
        BatchBuilder { schema, builders }
    }

    /// The builder of column `i`, as its concrete type. A wrong type is a
    /// programming error (the schema tests catch it), hence the panic.
    pub fn col<B: ArrayBuilder>(&mut self, i: usize) -> &mut B {
        self.builders[i]
            .as_any_mut()
            .downcast_mut::<B>()
            .unwrap_or_else(|| panic!("column {i} has another builder type"))
    }

    /// Rows appended since the last [`BatchBuilder::finish`].
    pub fn len(&self) -> usize {
        self.builders.first().map_or(0, |b| b.len())
    }

    /// True when no row is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Takes the pending rows as one record batch.
    pub fn finish(&mut self) -> Result<RecordBatch> {
        let columns: Vec<ArrayRef> = self.builders.iter_mut().map(|b| b.finish()).collect();
        Ok(RecordBatch::try_new(self.schema.clone(), columns)?)
    }
}

/// A builder whose concrete type [`BatchBuilder::col`] can name: arrow's
/// `make_builder` gives lists a `ListBuilder<Box<dyn ArrayBuilder>>`, so the
/// list types our schemas use get their typed builders here.
fn typed_builder(data_type: &DataType) -> Box<dyn ArrayBuilder> {
    use arrow::array::{ListBuilder, StringBuilder, UInt32Builder, UInt64Builder};
    match data_type {
        DataType::List(item) => {
            let field = item.clone();
            match item.data_type() {
                DataType::Utf8 => Box::new(ListBuilder::new(StringBuilder::new()).with_field(field)),
                DataType::UInt32 => Box::new(ListBuilder::new(UInt32Builder::new()).with_field(field)),
                DataType::UInt64 => Box::new(ListBuilder::new(UInt64Builder::new()).with_field(field)),
                other => panic!("no typed list builder for {other:?}"),
            }
        }
        other => arrow::array::make_builder(other, BATCH_ROWS),
    }
}

/// A table being written: a hidden temporary folder that receives part
/// files and is renamed over the published table on [`TableDir::commit`].
/// Dropped without commit, it removes its files.
pub struct TableDir {
    table: String,
    final_dir: PathBuf,
    tmp_dir: PathBuf,
    committed: bool,
}

impl TableDir {
    /// Starts a new version of `table` under `out_dir`.
    pub fn create(out_dir: &Path, table: &str) -> Result<TableDir> {
        let final_dir = out_dir.join(table);
        let tmp_dir = out_dir.join(format!(".tmp-{table}-{}", std::process::id()));
        if tmp_dir.exists() {
            std::fs::remove_dir_all(&tmp_dir)?;
        }
        std::fs::create_dir_all(&tmp_dir)
            .with_context(|| format!("cannot create {}", tmp_dir.display()))?;
        Ok(TableDir { table: table.to_string(), final_dir, tmp_dir, committed: false })
    }

    /// A writer for one part file (`part-<name>.parquet`); parts are written
    /// independently (e.g. one per input file, from several threads).
    pub fn part(&self, name: &str, schema: SchemaRef) -> Result<PartWriter> {
        let file = File::create(self.tmp_dir.join(format!("part-{name}.parquet")))?;
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::try_new(3)?))
            .set_max_row_group_row_count(Some(64 * 1024))
            .build();
        Ok(PartWriter { writer: ArrowWriter::try_new(file, schema, Some(props))?, rows: 0 })
    }

    /// Replaces the previous version of the table by this one.
    pub fn commit(mut self) -> Result<()> {
        let old = self.final_dir.with_file_name(format!(".old-{}-{}", self.table, std::process::id()));
        if self.final_dir.exists() {
            std::fs::rename(&self.final_dir, &old)?;
        }
        std::fs::rename(&self.tmp_dir, &self.final_dir).with_context(|| {
            format!("cannot publish table {} at {}", self.table, self.final_dir.display())
        })?;
        if old.exists() {
            std::fs::remove_dir_all(&old)?;
        }
        self.committed = true;
        Ok(())
    }
}

impl Drop for TableDir {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.tmp_dir);
        }
    }
}

/// Writes one Parquet part file (zstd).
pub struct PartWriter {
    writer: ArrowWriter<File>,
    rows: u64,
}

impl PartWriter {
    /// Appends a batch.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_rows() > 0 {
            self.rows += batch.num_rows() as u64;
            self.writer.write(batch)?;
        }
        Ok(())
    }

    /// Flushes the builder's pending rows when it holds a full batch.
    pub fn write_if_full(&mut self, builder: &mut BatchBuilder) -> Result<()> {
        if builder.len() >= BATCH_ROWS {
            self.write(&builder.finish()?)?;
        }
        Ok(())
    }

    /// Writes whatever rows the builder still holds.
    pub fn write_rest(&mut self, builder: &mut BatchBuilder) -> Result<()> {
        if !builder.is_empty() {
            self.write(&builder.finish()?)?;
        }
        Ok(())
    }

    /// Closes the file; returns the rows written.
    pub fn close(self) -> Result<u64> {
        self.writer.close()?;
        Ok(self.rows)
    }
}

/// A table written as one part file, the common case.
pub struct TableWriter {
    dir: TableDir,
    part: PartWriter,
}

impl TableWriter {
    /// Starts writing `table` under `out_dir` with the given schema.
    pub fn create(out_dir: &Path, table: &str, schema: SchemaRef) -> Result<TableWriter> {
        let dir = TableDir::create(out_dir, table)?;
        let part = dir.part("0", schema)?;
        Ok(TableWriter { dir, part })
    }

    /// Starts writing `table` with the schema from its schema file.
    pub fn for_table(out_dir: &Path, table: &str) -> Result<TableWriter> {
        TableWriter::create(out_dir, table, schema::arrow_schema(table))
    }

    /// Appends a batch.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.part.write(batch)
    }

    /// Flushes the builder's pending rows when it holds a full batch.
    pub fn write_if_full(&mut self, builder: &mut BatchBuilder) -> Result<()> {
        self.part.write_if_full(builder)
    }

    /// Writes whatever rows the builder still holds.
    pub fn write_rest(&mut self, builder: &mut BatchBuilder) -> Result<()> {
        self.part.write_rest(builder)
    }

    /// Finishes the file and publishes the table; returns the rows written.
    pub fn commit(self) -> Result<u64> {
        let rows = self.part.close()?;
        self.dir.commit()?;
        Ok(rows)
    }
}

/// Writes a DataFusion result stream as table `table`, checking its schema
/// against the schema file first. Returns the number of rows.
pub async fn write_stream(
    out_dir: &Path,
    table: &str,
    mut stream: SendableRecordBatchStream,
) -> Result<u64> {
    let schema = stream.schema();
    let diffs = schema::schema_differences(table, &schema);
    anyhow::ensure!(diffs.is_empty(), "SQL result does not match its schema file: {}", diffs.join("; "));
    let mut writer = TableWriter::create(out_dir, table, schema)?;
    while let Some(batch) = stream.next().await {
        writer.write(&batch?)?;
    }
    writer.commit()
}

/// True when `DIR/<table>/` holds a published table.
pub fn table_exists(out_dir: &Path, table: &str) -> bool {
    out_dir.join(table).is_dir()
}

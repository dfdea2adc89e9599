//! Writing tables: Parquet (zstd) under `DIR/<table>/`, atomically.
//!
//! A table is written into a hidden temporary folder next to its final
//! place and renamed over the old one only when every row is on disk, so a
//! crashed or failed stage leaves the previous table intact and a later stage
//! never reads half a table.
//!
//! A task of a sharded stage (`--shard I/N`, see [`crate::tables::shard`]) owns only
//! its part files, `part-I-of-N-*.parquet`: it moves them in one by one
//! when done, after removing its own earlier parts and any part of another
//! layout (an unsharded run, another N). The other tasks' parts stay. The
//! runner's manifests, not the files, tell when all N tasks are done.

use anyhow::{Context, Result};
use arrow::array::{ArrayRef, RecordBatch};
use arrow::datatypes::SchemaRef;
use datafusion::physical_plan::SendableRecordBatchStream;
use futures::StreamExt;
use parquet::arrow::{ArrowSchemaConverter, ArrowWriter};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterPropertiesBuilder};
use std::fs::File;
use std::path::{Path, PathBuf};

use crate::process::interrupt::Leftovers;
use crate::tables::schema;
use crate::tables::shard::Shard;

/// Rows per record batch and per Parquet row group flush.
pub const BATCH_ROWS: usize = 8192;

/// The most bytes a part file's row group takes in memory before it is
/// written out (besides the 64 Ki rows of [`properties_builder`]).
pub const ROW_GROUP_BYTES: usize = 32 << 20;

/// Rows of one table being built, column by column: the generated
/// `crate::tables::columns::<table>::Rows`, whose fields are the table's
/// columns as typed builders, named as in its schema file.
pub trait Rows: Default {
    /// The table the rows belong to.
    const TABLE: crate::tables::Table;

    /// Rows appended since the last [`Rows::finish`].
    fn len(&self) -> usize;

    /// True when no row is pending.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Takes every column's pending values, in the schema file's order.
    fn finish_columns(&mut self) -> Vec<ArrayRef>;

    /// Takes the pending rows as one record batch of the table's schema. A
    /// row that left out a column gives columns of unequal length: an
    /// error here, not a shifted table.
    fn finish(&mut self) -> Result<RecordBatch> {
        let columns = self.finish_columns();
        RecordBatch::try_new(schema::arrow_schema(Self::TABLE.name()), columns)
            .with_context(|| format!("rows of table {}", Self::TABLE))
    }
}

/// A table being written: a hidden temporary folder that receives part
/// files and is renamed over the published table on [`TableDir::commit`]
/// (a task of a sharded stage moves its parts in instead). Dropped without
/// commit, it removes its files.
pub struct TableDir {
    table: String,
    final_dir: PathBuf,
    tmp_dir: PathBuf,
    shard: Shard,
    committed: bool,
}

impl TableDir {
    /// Starts a new version of the whole of `table` under `out_dir`.
    pub fn create(out_dir: &Path, table: &str) -> Result<TableDir> {
        TableDir::create_for(out_dir, table, Shard::WHOLE)
    }

    /// Starts a new version of `shard`'s parts of `table` under `out_dir`.
    pub fn create_for(out_dir: &Path, table: &str, shard: Shard) -> Result<TableDir> {
        let final_dir = out_dir.join(table);
        let tmp_dir = out_dir.join(format!(".tmp-{table}-{}-of-{}-{}", shard.index, shard.count, std::process::id()));
        let _creating = crate::process::interrupt::unpublished_write(&UNPUBLISHED)?;
        if tmp_dir.exists() {
            std::fs::remove_dir_all(&tmp_dir)?;
        }
        std::fs::create_dir_all(&tmp_dir).with_context(|| format!("cannot create {}", tmp_dir.display()))?;
        Ok(TableDir { table: table.to_string(), final_dir, tmp_dir, shard, committed: false })
    }

    /// A writer for one part file (`part-I-of-N-<name>.parquet`); parts are
    /// written independently (e.g. one per input file, from several threads).
    pub fn part(&self, name: &str, schema: SchemaRef) -> Result<PartWriter> {
        let path = self.tmp_dir.join(format!("{}{name}.parquet", self.shard.part_prefix()));
        let file = File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
        Ok(PartWriter {
            writer: ArrowWriter::try_new(file, schema, Some(table_writer_properties(&self.table)?))?,
            rows: 0,
            path,
        })
    }

    /// Replaces the previous version of the table (of this task's parts,
    /// for a task of a sharded stage) by this one.
    pub fn commit(mut self) -> Result<()> {
        let _publishing = crate::process::interrupt::unpublished_write(&UNPUBLISHED)?;
        if !self.shard.is_whole() {
            self.publish_shard_parts()?;
            self.committed = true;
            return Ok(());
        }
        let old = self.final_dir.with_file_name(format!(".old-{}-{}", self.table, std::process::id()));
        if self.final_dir.exists() {
            std::fs::rename(&self.final_dir, &old)?;
        }
        std::fs::rename(&self.tmp_dir, &self.final_dir)
            .with_context(|| format!("cannot publish table {} at {}", self.table, self.final_dir.display()))?;
        if old.exists() {
            std::fs::remove_dir_all(&old)?;
        }
        self.committed = true;
        Ok(())
    }
}

impl TableDir {
    /// Moves this task's parts into the table folder, after removing its
    /// earlier parts and every part of another layout. Parts of the other
    /// tasks of the same N stay.
    fn publish_shard_parts(&self) -> Result<()> {
        std::fs::create_dir_all(&self.final_dir)
            .with_context(|| format!("cannot create {}", self.final_dir.display()))?;
        for entry in std::fs::read_dir(&self.final_dir)? {
            let entry = entry?;
            if part_replaced_by(&entry.file_name().to_string_lossy(), self.shard) {
                match std::fs::remove_file(entry.path()) {
                    // Another task of the new layout may have removed it first.
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(e).with_context(|| format!("cannot remove {}", entry.path().display()))
                    }
                    _ => {}
                }
            }
        }
        for entry in std::fs::read_dir(&self.tmp_dir)? {
            let entry = entry?;
            std::fs::rename(entry.path(), self.final_dir.join(entry.file_name())).with_context(|| {
                format!("cannot publish {} of table {}", entry.file_name().to_string_lossy(), self.table)
            })?;
        }
        std::fs::remove_dir(&self.tmp_dir)?;
        Ok(())
    }
}

/// True when task `shard`'s new version of a table replaces the part file
/// `file_name`: its own earlier parts and every part of another layout (all
/// parts, for an unsharded run); the other tasks' parts of the same N stay.
pub fn part_replaced_by(file_name: &str, shard: Shard) -> bool {
    !part_shard(file_name).is_some_and(|s| s.count == shard.count && s.index != shard.index)
}

/// The task a part file belongs to, from its name `part-I-of-N-*`.
pub fn part_shard(file_name: &str) -> Option<Shard> {
    let rest = file_name.strip_prefix("part-")?;
    let (index, rest) = rest.split_once("-of-")?;
    let (count, _) = rest.split_once('-')?;
    format!("{index}/{count}").parse().ok()
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
    /// Named by every write error: a full disk or a lost permission must
    /// say which file it stopped.
    path: PathBuf,
}

impl PartWriter {
    /// Appends a batch.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_rows() > 0 {
            self.rows += batch.num_rows() as u64;
            self.writer.write(batch).with_context(|| format!("cannot write {}", self.path.display()))?;
            // A row group is held in memory until it is written: cut it by
            // size too, or 64 Ki rows of a wide table (tokens' texts and
            // word lists) fill hundreds of MB per writer.
            if self.writer.in_progress_size() >= ROW_GROUP_BYTES {
                self.writer.flush().with_context(|| format!("cannot write {}", self.path.display()))?;
            }
        }
        Ok(())
    }

    /// Flushes the pending rows when they make a full batch.
    pub fn write_if_full(&mut self, rows: &mut impl Rows) -> Result<()> {
        if rows.len() >= BATCH_ROWS {
            self.write(&rows.finish()?)?;
        }
        Ok(())
    }

    /// Writes whatever rows are still pending.
    pub fn write_rest(&mut self, rows: &mut impl Rows) -> Result<()> {
        if !rows.is_empty() {
            self.write(&rows.finish()?)?;
        }
        Ok(())
    }

    /// Closes the file; returns the rows written.
    pub fn close(self) -> Result<u64> {
        self.writer.close().with_context(|| format!("cannot write {}", self.path.display()))?;
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

    /// Starts writing `shard`'s part of `table`, schema from its schema file.
    pub fn for_shard(out_dir: &Path, table: &str, shard: Shard) -> Result<TableWriter> {
        let dir = TableDir::create_for(out_dir, table, shard)?;
        let part = dir.part("0", schema::arrow_schema(table))?;
        Ok(TableWriter { dir, part })
    }

    /// Appends a batch.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.part.write(batch)
    }

    /// Flushes the pending rows when they make a full batch.
    pub fn write_if_full(&mut self, rows: &mut impl Rows) -> Result<()> {
        self.part.write_if_full(rows)
    }

    /// Writes whatever rows are still pending.
    pub fn write_rest(&mut self, rows: &mut impl Rows) -> Result<()> {
        self.part.write_rest(rows)
    }

    /// Finishes the file and publishes the table; returns the rows written.
    pub fn commit(self) -> Result<u64> {
        let rows = self.part.close()?;
        self.dir.commit()?;
        Ok(rows)
    }
}

/// A table fed row by row over a whole stage: its writer and its pending
/// rows, so that code adding rows (a method writing its own records) needs
/// neither to know batch sizes nor to flush.
pub struct TableOutput<R: Rows> {
    writer: TableWriter,
    rows: R,
}

impl<R: Rows> TableOutput<R> {
    /// Starts writing `shard`'s part of the table (the whole table for
    /// [`Shard::WHOLE`]), schema from its schema file.
    pub fn for_shard(out_dir: &Path, shard: Shard) -> Result<TableOutput<R>> {
        Ok(TableOutput { writer: TableWriter::for_shard(out_dir, R::TABLE.name(), shard)?, rows: R::default() })
    }

    /// Starts writing the whole table (a stage that is not sharded).
    pub fn create(out_dir: &Path) -> Result<TableOutput<R>> {
        TableOutput::for_shard(out_dir, Shard::WHOLE)
    }

    /// Appends one row, whose columns `fill` sets, and writes a batch once
    /// enough rows are pending.
    pub fn push(&mut self, fill: impl FnOnce(&mut R)) -> Result<()> {
        fill(&mut self.rows);
        self.writer.write_if_full(&mut self.rows)
    }

    /// Writes the pending rows and publishes the table; returns the rows
    /// written.
    pub fn commit(mut self) -> Result<u64> {
        self.writer.write_rest(&mut self.rows)?;
        self.writer.commit()
    }
}

/// Writes a DataFusion result stream as table `table`, checking its schema
/// against the schema file first. Returns the number of rows.
pub async fn write_stream(out_dir: &Path, table: &str, stream: SendableRecordBatchStream) -> Result<u64> {
    let dir = TableDir::create(out_dir, table)?;
    let rows = write_stream_part(&dir, "0", stream).await?;
    dir.commit()?;
    Ok(rows)
}

/// Writes a DataFusion result stream as part `name` of the table `dir`
/// will publish, checking its schema against the table's schema file
/// first. Returns the number of rows.
pub async fn write_stream_part(dir: &TableDir, name: &str, mut stream: SendableRecordBatchStream) -> Result<u64> {
    let schema = stream.schema();
    let diffs = schema::schema_differences(&dir.table, &schema);
    anyhow::ensure!(diffs.is_empty(), "SQL result does not match its schema file: {}", diffs.join("; "));
    let mut part = dir.part(name, schema)?;
    while let Some(batch) = stream.next().await {
        part.write(&batch?)?;
    }
    part.close()
}

/// `error` with what went wrong on the disk said first when the file
/// system refused a write (full, over quota, read-only, no permission),
/// and the output folder named when no path in the message already is
/// under it: a DataFusion spill or a library's write often names no file.
pub fn name_the_disk(error: anyhow::Error, out: &Path) -> anyhow::Error {
    const PROBLEMS: [(i32, &str); 4] = [
        (28, "the disk is full"),
        (122, "the disk quota is exceeded"),
        (30, "the file system is read-only"),
        (13, "permission denied"),
    ];
    let text = format!("{error:#}");
    let Some((_, problem)) = PROBLEMS.iter().find(|(code, _)| text.contains(&format!("(os error {code})"))) else {
        return error;
    };
    let folder = out.display().to_string();
    if text.contains(&folder) {
        error.context(*problem)
    } else {
        error.context(format!("{problem}: cannot write under {folder}"))
    }
}

/// What a run leaves under an output folder until it publishes it, by the
/// names this module gives: temporary table folders, temporary files (here
/// and among the manifests) and tables moved aside to be replaced. Every
/// write of one registers this cleanup with the interruption handler
/// ([`crate::process::interrupt::unpublished_write`]).
pub static UNPUBLISHED: Leftovers = Leftovers { pids: unpublished_pids, remove: remove_unpublished_of };

/// What an entry of a folder is, when a process left it unpublished.
enum Unpublished<'a> {
    /// `.tmp-<table>-…-<pid>`: a table being written (or another temporary
    /// folder named the same way, like the export's staging folder).
    Folder,
    /// `.<name>.tmp-<pid>`: a file being written.
    File,
    /// `.old-<table>-<pid>`: a table moved aside to be replaced.
    MovedAside(&'a str),
}

/// The kind of `name`, and the process that left it, if it is unpublished.
fn unpublished(name: &str) -> Option<(Unpublished<'_>, u32)> {
    let (rest, pid) = name.rsplit_once('-')?;
    let pid: u32 = pid.parse().ok()?;
    if name.starts_with(".tmp-") {
        Some((Unpublished::Folder, pid))
    } else if name.starts_with('.') && rest.ends_with(".tmp") {
        Some((Unpublished::File, pid))
    } else {
        Some((Unpublished::MovedAside(rest.strip_prefix(".old-")?), pid))
    }
}

/// The processes that left unpublished tables or files under `out` (or
/// among its manifests).
fn unpublished_pids(out: &Path) -> Vec<u32> {
    let mut pids = Vec::new();
    for dir in [out.to_path_buf(), manifest_dir(out)] {
        let names = std::fs::read_dir(&dir).into_iter().flatten().flatten();
        pids.extend(names.filter_map(|e| Some(unpublished(e.file_name().to_str()?)?.1)));
    }
    pids.sort_unstable();
    pids.dedup();
    pids
}

/// [`remove_unpublished`] of an output folder and of its manifests.
fn remove_unpublished_of(out: &Path, pid: u32) {
    remove_unpublished(out, pid);
    remove_unpublished(&manifest_dir(out), pid);
}

/// Removes from `dir` what process `pid` was writing there and had not
/// published, by the names this module gives them: temporary table folders
/// (`.tmp-<table>-…-<pid>`) and files (`.<name>.tmp-<pid>`); a table it had
/// moved aside to replace (`.old-<table>-<pid>`) is put back when the new
/// one is not in place. For a process that cannot unwind (an interruption,
/// a run that died).
pub fn remove_unpublished(dir: &Path, pid: u32) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        match unpublished(&name) {
            Some((Unpublished::Folder, p)) if p == pid => {
                let _ = std::fs::remove_dir_all(&path);
            }
            Some((Unpublished::File, p)) if p == pid => {
                let _ = std::fs::remove_file(&path);
            }
            Some((Unpublished::MovedAside(table), p)) if p == pid => {
                let published = dir.join(table);
                if published.exists() {
                    let _ = std::fs::remove_dir_all(&path);
                } else {
                    let _ = std::fs::rename(&path, &published);
                }
            }
            _ => {}
        }
    }
}

/// Writes a whole file by a rename: the content goes to a hidden temporary
/// file next to `path` first, so a reader or a crash never sees half a file
/// under the final name (manifests, the report, files pulled from a store).
pub fn write_file_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let _writing = crate::process::interrupt::unpublished_write(&UNPUBLISHED)?;
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot publish {}", path.display()))?;
    Ok(())
}

/// Checks every Parquet file of `table` under `out_dir` against the
/// table's schema file ([`schema::stored_schema_difference`]), reading
/// only the files' footers. The stages read columns as the schema file's
/// types, so a table damaged, edited or written by another program stops a
/// stage before it reads anything, with an error naming the table, file and
/// column.
pub fn check_table_schema(out_dir: &Path, table: &str) -> Result<()> {
    let dir = out_dir.join(table);
    let files = parquet_files(&dir).with_context(|| format!("cannot list table {table}"))?;
    for path in files {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let file = File::open(&path).with_context(|| format!("cannot open {}", path.display()))?;
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
            .with_context(|| format!("table `{table}`: {name} is not a readable Parquet file"))?;
        if let Some(difference) = schema::stored_schema_difference(table, reader.schema()) {
            anyhow::bail!("table `{table}` ({name}) does not match its schema: {difference}");
        }
    }
    Ok(())
}

/// How every part file is written: zstd level 3, row groups of 64 Ki rows.
pub fn writer_properties() -> Result<WriterProperties> {
    Ok(properties_builder()?.build())
}

fn properties_builder() -> Result<WriterPropertiesBuilder> {
    Ok(WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(3)?))
        .set_max_row_group_row_count(Some(64 * 1024)))
}

/// [`writer_properties`] for a table with a schema file: its columns
/// marked `"dictionary": false` are written without a dictionary, those
/// marked `"statistics": false` without min/max statistics. A flag holds
/// for every Parquet leaf of its column (a list's values).
fn table_writer_properties(table: &str) -> Result<WriterProperties> {
    let mut builder = properties_builder()?;
    if schema::table_names().any(|t| t == table) {
        let def = schema::table_def(table);
        let leaves = ArrowSchemaConverter::new().convert(&schema::arrow_schema(table))?;
        for leaf in leaves.columns() {
            let Some(column) = def.columns.iter().find(|c| c.name == leaf.path().parts()[0]) else { continue };
            if !column.dictionary {
                builder = builder.set_column_dictionary_enabled(leaf.path().clone(), false);
            }
            if !column.statistics {
                builder = builder.set_column_statistics_enabled(leaf.path().clone(), EnabledStatistics::None);
            }
        }
    }
    Ok(builder.build())
}

/// The Parquet files of a folder, by name.
pub fn parquet_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    files.sort();
    Ok(files)
}

/// Name of the folder of the stages' manifests inside an output folder (or
/// store). The runner writes them; it is named here, beside the tables'
/// own folders, because cleaning up after an interrupted process
/// ([`UNPUBLISHED`]) must find its temporary manifests too.
pub const MANIFEST_DIR: &str = "_manifests";

/// Folder of the manifests.
pub fn manifest_dir(out: &Path) -> PathBuf {
    out.join(MANIFEST_DIR)
}

/// True when `DIR/<table>/` holds a published table.
pub fn table_exists(out_dir: &Path, table: &str) -> bool {
    out_dir.join(table).is_dir()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_processs_unpublished_files_are_removed() {
        let out = std::env::temp_dir().join(format!("neardup-unpublished-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        for dir in [".tmp-tokens-0-of-1-4242", ".tmp-tokens-0-of-1-77", "tokens", ".old-stats-4242", "_manifests"] {
            std::fs::create_dir_all(out.join(dir)).unwrap();
        }
        std::fs::write(out.join("_manifests/.tokens.json.tmp-4242"), "{").unwrap();
        std::fs::write(out.join("_manifests/.stats.json.tmp-5"), "{").unwrap();
        std::fs::write(out.join("_manifests/ingest.json"), "{}").unwrap();
        assert_eq!((UNPUBLISHED.pids)(&out), [5, 77, 4242]);
        (UNPUBLISHED.remove)(&out, 4242);
        let mut left: Vec<String> =
            std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        left.sort();
        // Another process's folder stays; the table moved aside is back.
        assert_eq!(left, [".tmp-tokens-0-of-1-77", "_manifests", "stats", "tokens"]);
        assert!(!out.join("_manifests/.tokens.json.tmp-4242").exists());
        assert!(out.join("_manifests/ingest.json").exists());
        assert_eq!((UNPUBLISHED.pids)(&out), [5, 77]);
        std::fs::remove_dir_all(&out).unwrap();
    }

    /// The schema files' column flags reach the Parquet leaves of their
    /// columns, a list's values included.
    #[test]
    fn schema_flags_reach_every_leaf() {
        let leaf_of = |table: &str, column: &str| {
            let leaves = ArrowSchemaConverter::new().convert(&schema::arrow_schema(table)).unwrap();
            leaves.columns().iter().find(|c| c.path().parts()[0] == column).unwrap().path().clone()
        };
        let tokens = table_writer_properties("tokens").unwrap();
        let terms = leaf_of("tokens", "terms");
        assert_eq!(terms.parts().len(), 3, "{terms}");
        assert_eq!(tokens.statistics_enabled(&terms), EnabledStatistics::None);
        assert_ne!(tokens.statistics_enabled(&leaf_of("tokens", "doc_id")), EnabledStatistics::None);
        let signatures = table_writer_properties("signatures").unwrap();
        let sig = leaf_of("signatures", "sig");
        assert!(!signatures.dictionary_enabled(&sig));
        assert_ne!(signatures.statistics_enabled(&sig), EnabledStatistics::None);
        assert!(signatures.dictionary_enabled(&leaf_of("signatures", "method")));
    }
}

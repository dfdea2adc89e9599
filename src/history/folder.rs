//! A history folder on local disk ([`History`]) and what it keeps of a
//! crawl ([`CrawlManifest`]): the layout and its commit protocol (see
//! [`crate::history`]), with plain file operations on the Parquet part
//! files (copy, install, drop, compact). No SQL: what reads a crawl's
//! tables through DataFusion is `crate::stages::history`'s.

use anyhow::{bail, Context, Result};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use crate::methods::registry;
use crate::tables::columns::{history_documents, signatures};
use crate::tables::write::{parquet_files, write_file_atomically, writer_properties};
use crate::verify::settings::VerificationText;

/// Folder of the crawl manifests (`DIR/_crawls/<crawl>.json`), in the
/// folder and in an object store alike.
pub const MANIFESTS: &str = "_crawls";

/// What the history keeps of a crawl: one manifest per crawl.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrawlManifest {
    /// The crawl id (`--crawl-id`).
    pub crawl: String,
    /// Rows of each table's partition.
    pub rows: BTreeMap<String, u64>,
    /// The kind of `history_documents.verification_text`.
    pub verification_text: VerificationText,
    /// The output folder the crawl was appended from (for people).
    pub appended_from: String,
    /// The part files of each table's partition: the crawl's data. Files
    /// of a partition that its manifest does not list are leftovers of an
    /// interrupted compaction and are removed ([`History::tidy`]); an
    /// object-store history copies exactly these
    /// ([`crate::history::mirror`]).
    pub objects: BTreeMap<String, Vec<String>>,
}

/// A history folder.
pub struct History {
    root: PathBuf,
}

/// The tables a crawl's partition holds: its documents and every table a
/// night's methods write per document (the signatures and the methods'
/// own record tables), which a later night joins against.
pub fn tables() -> Vec<&'static str> {
    let mut tables = vec![history_documents::TABLE];
    tables.extend(copied_tables());
    tables
}

/// The night's tables a crawl keeps as written: `signatures` and every
/// method's records table.
pub fn copied_tables() -> impl Iterator<Item = &'static str> {
    std::iter::once(signatures::NAME).chain(registry::record_tables()).map(crate::tables::Table::name)
}

/// Checks a crawl id: it names folders and files, so letters, digits, `.`,
/// `_` and `-` only, not starting with a dot.
pub fn check_crawl_id(crawl: &str) -> Result<()> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if crawl.is_empty() || crawl.starts_with('.') || !crawl.chars().all(allowed) {
        bail!(
            "crawl id `{crawl}`: use letters, digits, `.`, `_` and `-` only (e.g. 2026-11-25), not starting with `.`"
        );
    }
    Ok(())
}

impl History {
    /// The history in folder `root`, created when missing.
    pub fn open(root: &Path) -> Result<History> {
        std::fs::create_dir_all(root.join(MANIFESTS))
            .with_context(|| format!("cannot create history folder {}", root.display()))?;
        Ok(History { root: root.to_path_buf() })
    }

    /// The folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Every complete crawl, by id.
    pub fn crawls(&self) -> Result<Vec<CrawlManifest>> {
        let dir = self.root.join(MANIFESTS);
        let mut crawls = Vec::new();
        for entry in std::fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))? {
            let path = entry?.path();
            if path.extension().is_some_and(|x| x == "json") && !is_hidden(&path) {
                let text = std::fs::read_to_string(&path)?;
                let manifest: CrawlManifest =
                    serde_json::from_str(&text).with_context(|| format!("bad crawl manifest {}", path.display()))?;
                crawls.push(manifest);
            }
        }
        crawls.sort_by(|a, b| a.crawl.cmp(&b.crawl));
        Ok(crawls)
    }

    /// True when the `history_documents` files of crawl `manifest` have
    /// column `column` (read from their footers): crawls appended by an
    /// older version lack the columns added since.
    pub fn documents_have_column(&self, manifest: &CrawlManifest, column: &str) -> Result<bool> {
        let dir = self.partition(history_documents::TABLE, &manifest.crawl);
        let files = manifest.objects.get(history_documents::TABLE).map(Vec::as_slice).unwrap_or_default();
        for name in files {
            let path = dir.join(name);
            let file = std::fs::File::open(&path).with_context(|| format!("cannot open {}", path.display()))?;
            let reader = ParquetRecordBatchReaderBuilder::try_new(file)
                .with_context(|| format!("cannot read {}", path.display()))?;
            if reader.schema().field_with_name(column).is_err() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The partition folder of `table` for `crawl`.
    pub fn partition(&self, table: &str, crawl: &str) -> PathBuf {
        self.root.join(table).join(format!("crawl={crawl}"))
    }

    fn manifest_path(&self, crawl: &str) -> PathBuf {
        self.root.join(MANIFESTS).join(format!("{crawl}.json"))
    }

    /// Publishes crawl `manifest.crawl` from `staging/<table>/` (every table
    /// of [`tables`]), replacing the crawl if it was there: hides it by
    /// removing its manifest, swaps every partition, then writes the
    /// manifest. `staging` is removed.
    pub fn install(&self, manifest: &CrawlManifest, staging: &Path) -> Result<()> {
        let crawl = &manifest.crawl;
        let manifest_path = self.manifest_path(crawl);
        if manifest_path.exists() {
            std::fs::remove_file(&manifest_path)?;
        }
        for table in tables() {
            let partition = self.partition(table, crawl);
            std::fs::create_dir_all(partition.parent().expect("a partition has a table folder"))?;
            if partition.exists() {
                std::fs::remove_dir_all(&partition)
                    .with_context(|| format!("cannot remove the old {}", partition.display()))?;
            }
            std::fs::create_dir_all(staging.join(table))?;
            std::fs::rename(staging.join(table), &partition)
                .with_context(|| format!("cannot publish {}", partition.display()))?;
        }
        std::fs::remove_dir_all(staging)?;
        self.write_manifest(manifest)
    }

    /// Writes the manifest of `manifest.crawl` (atomically: the commit).
    pub fn write_manifest(&self, manifest: &CrawlManifest) -> Result<()> {
        write_file_atomically(&self.manifest_path(&manifest.crawl), &serde_json::to_vec_pretty(manifest)?)
    }

    /// A new folder for staging a crawl (removed by [`History::install`]).
    pub fn staging(&self, crawl: &str) -> Result<PathBuf> {
        let staging = self.root.join(format!(".staging-{crawl}-{}", std::process::id()));
        if staging.exists() {
            std::fs::remove_dir_all(&staging)?;
        }
        std::fs::create_dir_all(&staging)?;
        Ok(staging)
    }

    /// The complete crawls before `crawl`: crawl ids sort in crawl order
    /// (dates, `2026-11-25`), so a night is matched against the nights
    /// before it whatever the order they were appended in, and rerunning a
    /// night never matches it against the nights after it.
    pub fn crawls_before(&self, crawl: &str) -> Result<Vec<CrawlManifest>> {
        Ok(self.crawls()?.into_iter().filter(|c| c.crawl.as_str() < crawl).collect())
    }

    /// Removes crawl `crawl`; false when there was none.
    pub fn drop_crawl(&self, crawl: &str) -> Result<bool> {
        check_crawl_id(crawl)?;
        let manifest = self.manifest_path(crawl);
        let existed = manifest.exists();
        if existed {
            std::fs::remove_file(&manifest)?;
        }
        for table in tables() {
            let partition = self.partition(table, crawl);
            if partition.exists() {
                std::fs::remove_dir_all(&partition)?;
            }
        }
        Ok(existed)
    }

    /// Merges the part files of every partition holding more than one into
    /// one file, rows and their order unchanged, and removes what no
    /// manifest owns: partitions and staging folders of interrupted
    /// appends (or of one under way, so never run it beside `append`), and
    /// files a manifest does not list. Returns the crawls whose files
    /// changed.
    pub fn compact(&self) -> Result<Vec<String>> {
        let crawls = self.crawls()?;
        for entry in std::fs::read_dir(&self.root)? {
            let path = entry?.path();
            if is_hidden(&path) && path.is_dir() {
                std::fs::remove_dir_all(&path)?;
            }
        }
        for table in tables() {
            let dir = self.root.join(table);
            if !dir.is_dir() {
                continue;
            }
            for entry in std::fs::read_dir(&dir)? {
                let path = entry?.path();
                let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                if !name.strip_prefix("crawl=").is_some_and(|c| crawls.iter().any(|k| k.crawl == c)) {
                    std::fs::remove_dir_all(&path)?;
                }
            }
        }
        let mut changed = Vec::new();
        for mut manifest in crawls {
            self.tidy(&manifest)?;
            let mut merged = Vec::new();
            for (table, files) in manifest.objects.iter_mut().filter(|(_, f)| f.len() > 1) {
                let dir = self.partition(table, &manifest.crawl);
                let paths: Vec<PathBuf> = files.iter().map(|f| dir.join(f)).collect();
                merge_parts(&dir, &paths, COMPACTED)?;
                merged.extend(paths.into_iter().filter(|p| !p.ends_with(COMPACTED)));
                *files = vec![COMPACTED.to_string()];
            }
            if !merged.is_empty() {
                // The new manifest is the commit; the merged parts go after it.
                self.write_manifest(&manifest)?;
                for file in merged {
                    std::fs::remove_file(file)?;
                }
                changed.push(manifest.crawl);
            }
        }
        Ok(changed)
    }

    /// Removes the files of the crawl's partitions that its manifest does
    /// not list (what a compaction or a pull cut off midway leaves).
    pub fn tidy(&self, manifest: &CrawlManifest) -> Result<()> {
        for table in tables() {
            let dir = self.partition(table, &manifest.crawl);
            if !dir.is_dir() {
                continue;
            }
            let listed = manifest.objects.get(table).map(Vec::as_slice).unwrap_or_default();
            for entry in std::fs::read_dir(&dir)? {
                let path = entry?.path();
                let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                if !listed.contains(&name) {
                    std::fs::remove_file(&path)?;
                }
            }
        }
        Ok(())
    }
}

/// The name of a partition's one file after `compact`.
const COMPACTED: &str = "part-compacted.parquet";

/// Rewrites the part files `files` of partition `dir` as one file `name`,
/// in the given order: written under a hidden name, then renamed. No reader
/// ever sees a partial file; the caller commits the new file in the crawl's
/// manifest before it removes the old ones.
fn merge_parts(dir: &Path, files: &[PathBuf], name: &str) -> Result<()> {
    let first = std::fs::File::open(&files[0])?;
    let schema = ParquetRecordBatchReaderBuilder::try_new(first)?.schema().clone();
    let tmp = dir.join(format!(".{name}.tmp"));
    let mut writer = ArrowWriter::try_new(std::fs::File::create(&tmp)?, schema, Some(writer_properties()?))?;
    for file in files {
        let reader = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(file)?)?.build()?;
        for batch in reader {
            writer.write(&batch?)?;
        }
    }
    writer.close()?;
    std::fs::rename(&tmp, dir.join(name))?;
    Ok(())
}

/// Copies the night's tables that a crawl keeps as written
/// ([`copied_tables`]) from the output folder `out` under
/// `staging/<table>/`, less the rows of the documents `unindexed`; returns
/// their rows by table.
pub fn stage_copied_tables(out: &Path, staging: &Path, unindexed: &HashSet<u64>) -> Result<BTreeMap<String, u64>> {
    let mut rows = BTreeMap::new();
    for table in copied_tables() {
        crate::tables::write::check_table_schema(out, table)?;
        let target = staging.join(table);
        std::fs::create_dir_all(&target)?;
        let mut n = 0;
        for file in parquet_files(&out.join(table))? {
            let name = file.file_name().expect("a listed file has a name");
            if !unindexed.is_empty() {
                n += copy_without(&file, &target.join(name), unindexed)?;
                continue;
            }
            n += parquet_rows(&file)?;
            // Published part files are never written again (a new
            // version of a table is a new folder), so a hard link is a
            // copy; across file systems it is a real one.
            if std::fs::hard_link(&file, target.join(name)).is_err() {
                std::fs::copy(&file, target.join(name))
                    .with_context(|| format!("cannot copy {} into the history", file.display()))?;
            }
        }
        rows.insert(table.to_string(), n);
    }
    Ok(rows)
}

/// The Parquet files of every table folder under `staging`, by table.
pub fn listed_objects(staging: &Path) -> Result<BTreeMap<String, Vec<String>>> {
    let mut objects = BTreeMap::new();
    for table in tables() {
        let dir = staging.join(table);
        let files = if dir.is_dir() { parquet_files(&dir)? } else { Vec::new() };
        let names = files.iter().filter_map(|f| f.file_name()).map(|n| n.to_string_lossy().into_owned()).collect();
        objects.insert(table.to_string(), names);
    }
    Ok(objects)
}

/// Copies Parquet file `from` to `to` without the rows whose `doc_id` is in
/// `left_out`, in order; returns the rows written.
fn copy_without(from: &Path, to: &Path, left_out: &HashSet<u64>) -> Result<u64> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(from)?)?;
    let schema = reader.schema().clone();
    let mut writer = ArrowWriter::try_new(std::fs::File::create(to)?, schema, Some(writer_properties()?))?;
    let mut rows = 0;
    for batch in reader.build()? {
        let batch = batch?;
        let ids: &arrow::array::UInt64Array = crate::tables::column(&batch, "doc_id")?;
        let keep: arrow::array::BooleanArray =
            ids.iter().map(|id| Some(!id.is_some_and(|id| left_out.contains(&id)))).collect();
        let kept = arrow::compute::filter_record_batch(&batch, &keep)?;
        rows += kept.num_rows() as u64;
        writer.write(&kept)?;
    }
    writer.close()?;
    Ok(rows)
}

/// Rows of a Parquet file, from its footer.
fn parquet_rows(file: &Path) -> Result<u64> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(file)?)?;
    Ok(reader.metadata().file_metadata().num_rows().max(0) as u64)
}

fn is_hidden(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'))
}

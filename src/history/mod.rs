//! The history folder (`--history DIR`): the crawls of earlier nights, kept
//! so that a later night can be matched against them.
//!
//! Layout, one Hive-style partition per crawl, so SQL engines read the crawl
//! id from the path:
//!
//! ```text
//! DIR/_crawls/<crawl>.json                      the crawl's manifest
//! DIR/history_documents/crawl=<crawl>/*.parquet  id, url, date, length, verification text
//! DIR/signatures/crawl=<crawl>/*.parquet         the night's tables, as written
//! DIR/sketches/crawl=<crawl>/ ...                (every method's records table)
//! ```
//!
//! **A crawl is there whole or not at all.** Its manifest is written last,
//! and only crawls with a manifest exist for [`History::crawls`] and the
//! readers; partitions without one (an append that was interrupted) are
//! ignored and removed by the next append of that crawl or by `compact`.
//! Appending a crawl again (rerunning a night) hides it first by removing
//! its manifest, swaps every partition, then writes the manifest again.

use anyhow::{bail, Context, Result};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::config::{Config, MarkRule};

use crate::methods::registry;
use crate::tables::columns::{
    clusters, crawl_clusters, documents, history_candidates, history_documents, repeats, signatures,
};
use crate::tables::sql::substitute;
use crate::tables::write::{parquet_files, write_file_atomically, writer_properties, TableOutput, TableWriter};
use crate::verify::compare::{compare, load_verification_texts, Doc};
use crate::verify::settings::VerificationText;
use arrow::array::StringArray;
use futures::StreamExt;
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};

pub mod mirror;

/// Folder of the crawl manifests.
const MANIFESTS: &str = "_crawls";

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
    /// object-store history copies exactly these ([`remote`]).
    pub objects: BTreeMap<String, Vec<String>>,
}

/// What matching a night against the history wrote: rows of
/// `history_candidates`, `repeats` and `crawl_clusters`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NightMatch {
    pub candidates: u64,
    pub repeats: u64,
    pub clustered: u64,
}

/// Where `--history` points: a local folder, or an object-store URL
/// (`s3://bucket/history`, `file:///path`) worked on through a local cache.
pub enum HistoryLocation {
    Local(History),
    Remote(mirror::RemoteHistory),
}

impl HistoryLocation {
    /// Opens `spec`: a URL is an object-store history cached in `cache`
    /// (default: under the user's cache folder), anything else a folder,
    /// created when missing.
    pub fn open(spec: &str, cache: Option<PathBuf>) -> Result<HistoryLocation> {
        if crate::storage::location::is_url(spec) {
            Ok(HistoryLocation::Remote(mirror::RemoteHistory::open(spec, cache)?))
        } else {
            Ok(HistoryLocation::Local(History::open(Path::new(spec))?))
        }
    }

    /// The history to read and append to: the folder, or the cache made a
    /// copy of the store's complete crawls first.
    pub fn local(&self) -> Result<&History> {
        match self {
            HistoryLocation::Local(history) => Ok(history),
            HistoryLocation::Remote(remote) => {
                let n = remote.pull()?;
                tracing::info!(history = remote.url(), objects = n, cache = %remote.cache().root().display(), "history pulled");
                Ok(remote.cache())
            }
        }
    }

    /// Takes the history's lock ([`crate::runner::lock`]), held while a run
    /// matches against it, appends to it, drops or compacts crawls: two
    /// such runs at once would match a night against a half-written crawl
    /// or replace each other's partitions. For an object store the lock is
    /// the local cache's, so runs sharing a cache folder are kept apart.
    pub fn lock(&self, wait: bool) -> Result<crate::runner::lock::TaskLock> {
        let root = match self {
            HistoryLocation::Local(history) => history.root(),
            HistoryLocation::Remote(remote) => remote.cache().root(),
        };
        crate::runner::lock::acquire(
            &root.join(crate::runner::lock::LOCK_DIR).join("history.lock"),
            "the history",
            wait,
        )
    }

    /// Makes crawl `crawl`, appended to [`HistoryLocation::local`], the
    /// store's (nothing to do for a folder).
    pub fn commit(&self, crawl: &str) -> Result<()> {
        if let HistoryLocation::Remote(remote) = self {
            let n = remote.push(crawl)?;
            tracing::info!(history = remote.url(), crawl, objects = n, "crawl committed");
        }
        Ok(())
    }

    /// The complete crawls, by id (read from the store's manifests for an
    /// object store, without pulling their tables).
    pub fn crawls(&self) -> Result<Vec<CrawlManifest>> {
        match self {
            HistoryLocation::Local(history) => history.crawls(),
            HistoryLocation::Remote(remote) => Ok(remote.manifests()?.into_values().collect()),
        }
    }

    /// Removes crawl `crawl`; false when there was none.
    pub fn drop_crawl(&self, crawl: &str) -> Result<bool> {
        match self {
            HistoryLocation::Local(history) => history.drop_crawl(crawl),
            HistoryLocation::Remote(remote) => remote.drop_crawl(crawl),
        }
    }

    /// [`History::compact`]; for an object store on the cache, then every
    /// crawl whose files changed is committed again. Returns those crawls.
    pub fn compact(&self) -> Result<Vec<String>> {
        let changed = self.local()?.compact()?;
        for crawl in &changed {
            self.commit(crawl)?;
        }
        Ok(changed)
    }
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
fn copied_tables() -> impl Iterator<Item = &'static str> {
    std::iter::once(signatures::TABLE).chain(registry::record_tables())
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

    /// The partition folder of `table` for `crawl`.
    pub fn partition(&self, table: &str, crawl: &str) -> PathBuf {
        self.root.join(table).join(format!("crawl={crawl}"))
    }

    fn manifest_path(&self, crawl: &str) -> PathBuf {
        self.root.join(MANIFESTS).join(format!("{crawl}.json"))
    }

    /// Appends the finished run in `out` as crawl `crawl`, replacing an
    /// earlier append of the same crawl: its documents with the verification
    /// text of `[verify] text`, and its signature and record tables, less the
    /// rows of the pages that repeat an earlier crawl (`out/repeats`) unless
    /// `[history] index_repeats`.
    pub fn append(
        &self,
        out: &Path,
        crawl: &str,
        config: &Config,
        runtime: &tokio::runtime::Runtime,
    ) -> Result<CrawlManifest> {
        let text = config.verify.text;
        check_crawl_id(crawl)?;
        for table in ["documents", "tokens"].into_iter().chain(copied_tables()) {
            anyhow::ensure!(
                crate::tables::write::table_exists(out, table),
                "{} has no table `{table}`: run the pipeline there first",
                out.display()
            );
        }
        let staging = self.staging(crawl)?;
        let unindexed = if config.history.index_repeats { HashSet::new() } else { night_repeats(out, crawl, runtime)? };
        let staged = self.stage(out, &staging, text, &unindexed, runtime);
        let rows = match staged {
            Ok(rows) => rows,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&staging);
                return Err(e);
            }
        };
        let manifest = CrawlManifest {
            crawl: crawl.to_string(),
            rows,
            verification_text: text,
            appended_from: out.display().to_string(),
            objects: listed_objects(&staging)?,
        };
        self.install(&manifest, &staging)?;
        Ok(manifest)
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
    fn write_manifest(&self, manifest: &CrawlManifest) -> Result<()> {
        write_file_atomically(&self.manifest_path(&manifest.crawl), &serde_json::to_vec_pretty(manifest)?)
    }

    /// A new folder for staging a crawl (removed by [`History::install`]).
    fn staging(&self, crawl: &str) -> Result<PathBuf> {
        let staging = self.root.join(format!(".staging-{crawl}-{}", std::process::id()));
        if staging.exists() {
            std::fs::remove_dir_all(&staging)?;
        }
        std::fs::create_dir_all(&staging)?;
        Ok(staging)
    }

    /// Writes every table of the crawl under `staging/<table>/`, the
    /// documents `unindexed` left out of the signature and record tables;
    /// returns their rows.
    fn stage(
        &self,
        out: &Path,
        staging: &Path,
        text: VerificationText,
        unindexed: &HashSet<u64>,
        runtime: &tokio::runtime::Runtime,
    ) -> Result<BTreeMap<String, u64>> {
        let mut rows = BTreeMap::new();
        let text_sql = match text {
            VerificationText::Visible => "t.text",
            // One word per line in `tokens`, one space between two here.
            VerificationText::Words => "replace(t.words, chr(10), ' ')",
            VerificationText::Terms => "array_to_string(t.terms, ' ')",
        };
        let sql = format!(
            "SELECT d.doc_id, d.url, d.crawl_date, d.http_status, \
             CAST(character_length(d.text) AS BIGINT) AS text_chars, {text_sql} AS verification_text \
             FROM documents d JOIN tokens t ON t.doc_id = d.doc_id ORDER BY d.doc_id"
        );
        let documents = runtime.block_on(async {
            let session = crate::tables::sql::session_over(out).await?;
            let stream = session.sql(&sql).await?.execute_stream().await?;
            crate::tables::write::write_stream(staging, history_documents::TABLE, stream).await
        })?;
        rows.insert(history_documents::TABLE.to_string(), documents);
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

    /// A session over the night's tables in `out` (under `memory_limit`)
    /// with the history's registered ([`History::register`]).
    async fn session_over(
        &self,
        out: &Path,
        memory_limit: Option<crate::process::memory::SqlMemory>,
    ) -> Result<datafusion::prelude::SessionContext> {
        let session = crate::tables::sql::session_with_memory_limit(out, memory_limit).await?;
        self.register(&session).await?;
        Ok(session)
    }

    /// Registers every history table in `session` as `history_<table>`
    /// (`history_documents` as it is), with a `crawl` column read from the
    /// partition folders, empty while no crawl holds it; returns the names.
    /// For analysts' queries: an append under way may show a crawl's
    /// partitions before its manifest.
    pub async fn register(&self, session: &datafusion::prelude::SessionContext) -> Result<Vec<String>> {
        let mut names = Vec::new();
        for table in tables() {
            let dir = self.root.join(table);
            let name = if table.starts_with("history_") { table.to_string() } else { format!("history_{table}") };
            if !dir.is_dir() || std::fs::read_dir(&dir)?.next().is_none() {
                let mut fields: Vec<arrow::datatypes::FieldRef> =
                    crate::tables::schema::arrow_schema(table).fields().iter().cloned().collect();
                fields.push(std::sync::Arc::new(arrow::datatypes::Field::new(
                    "crawl",
                    arrow::datatypes::DataType::Utf8,
                    false,
                )));
                let empty = arrow::record_batch::RecordBatch::new_empty(std::sync::Arc::new(
                    arrow::datatypes::Schema::new(fields),
                ));
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

    /// The complete crawls before `crawl`: crawl ids sort in crawl order
    /// (dates, `2026-11-25`), so a night is matched against the nights
    /// before it whatever the order they were appended in, and rerunning a
    /// night never matches it against the nights after it.
    pub fn crawls_before(&self, crawl: &str) -> Result<Vec<CrawlManifest>> {
        Ok(self.crawls()?.into_iter().filter(|c| c.crawl.as_str() < crawl).collect())
    }

    /// Matches the night in `out` (crawl `crawl`) against the complete
    /// crawls before it ([`History::crawls_before`]): writes
    /// `out/history_candidates`, the candidate repeats bounded per night
    /// document (`jobs/history_edges.sql`), then `out/repeats`, those that
    /// verify ([`History::verify_night`]), then `out/crawl_clusters`, the
    /// night's clusters joined through its repeats with the copy each keeps
    /// ([`History::cluster_night`]). All are empty when the history holds no
    /// earlier crawl.
    pub fn match_night(
        &self,
        out: &Path,
        crawl: &str,
        config: &Config,
        memory_limit: Option<crate::process::memory::SqlMemory>,
        runtime: &tokio::runtime::Runtime,
    ) -> Result<NightMatch> {
        check_crawl_id(crawl)?;
        let earlier = self.crawls_before(crawl)?;
        let started = std::time::Instant::now();
        let candidates = self.find_candidates(out, &earlier, config, memory_limit, runtime)?;
        tracing::info!(
            crawl,
            earlier = earlier.len(),
            candidates,
            seconds = started.elapsed().as_secs_f64(),
            "history_candidates written"
        );
        let started = std::time::Instant::now();
        let repeats = self.verify_night(out, crawl, &earlier, config, memory_limit, runtime)?;
        tracing::info!(crawl, repeats, seconds = started.elapsed().as_secs_f64(), "repeats verified");
        let started = std::time::Instant::now();
        let clustered = self.cluster_night(out, crawl, config, memory_limit, runtime)?;
        tracing::info!(crawl, clustered, seconds = started.elapsed().as_secs_f64(), "crawl_clusters written");
        Ok(NightMatch { candidates, repeats, clustered })
    }

    /// Writes `out/history_candidates` (see [`History::match_night`]).
    fn find_candidates(
        &self,
        out: &Path,
        earlier: &[CrawlManifest],
        config: &Config,
        memory_limit: Option<crate::process::memory::SqlMemory>,
        runtime: &tokio::runtime::Runtime,
    ) -> Result<u64> {
        if earlier.is_empty() {
            return TableWriter::for_table(out, history_candidates::TABLE)?.commit();
        }
        crate::tables::write::check_table_schema(out, signatures::TABLE)?;
        let mut params = crate::stages::candidates::sql_params(config);
        params.push(("earlier_crawls", sql_list(earlier.iter().map(|c| c.crawl.as_str()))));
        let sql = substitute(include_str!("../../jobs/history_edges.sql"), &params);
        runtime.block_on(async {
            let session = self.session_over(out, memory_limit).await?;
            register_keys(&session, out, &params).await?;
            crate::tables::sql::run_into_table(&session, out, history_candidates::TABLE, &sql).await
        })
    }

    /// Verifies `out/history_candidates` against the kept texts of the
    /// earlier pages, with the night's `[verify]` threshold and algorithm,
    /// and writes `out/repeats`: the pairs that verify, with the methods
    /// that proposed them. Only the matched earlier documents' texts are
    /// read; crawls kept with another verification text kind than
    /// `[verify] text` are skipped with a warning. Returns its rows.
    fn verify_night(
        &self,
        out: &Path,
        crawl: &str,
        earlier: &[CrawlManifest],
        config: &Config,
        memory_limit: Option<crate::process::memory::SqlMemory>,
        runtime: &tokio::runtime::Runtime,
    ) -> Result<u64> {
        let kind = config.verify.text;
        let comparable = sql_list(
            earlier
                .iter()
                .filter(|c| {
                    let same = c.verification_text == kind;
                    if !same {
                        tracing::warn!(crawl = %c.crawl, "kept with another verification text: its candidate repeats are not verified");
                    }
                    same
                })
                .map(|c| c.crawl.as_str()),
        );
        let (pairs, night, earlier) = runtime.block_on(async {
            let session = self.session_over(out, memory_limit).await?;
            // (doc, earlier doc, crawl) -> the methods that proposed it.
            let mut pairs: BTreeMap<(u64, u64, String), Vec<String>> = BTreeMap::new();
            let sql = format!(
                "SELECT doc_id, earlier_doc_id, earlier_crawl, method FROM history_candidates \
                 WHERE earlier_crawl IN ({comparable})"
            );
            let mut stream = session.sql(&sql).await?.execute_stream().await?;
            while let Some(batch) = stream.next().await {
                let batch = batch?;
                let (doc, other) = (history_candidates::doc_id(&batch)?, history_candidates::earlier_doc_id(&batch)?);
                let (crawl, method) = (history_candidates::earlier_crawl(&batch)?, history_candidates::method(&batch)?);
                for i in 0..batch.num_rows() {
                    let key = (doc.value(i), other.value(i), crawl.value(i).to_string());
                    pairs.entry(key).or_default().push(method.value(i).to_string());
                }
            }
            let night_ids: HashSet<u64> = pairs.keys().map(|(doc, _, _)| *doc).collect();
            let night = load_verification_texts(&session, |id| night_ids.contains(&id), kind).await?;
            let mut urls: HashMap<u64, String> = HashMap::new();
            let sql = "SELECT doc_id, url FROM documents WHERE doc_id IN (SELECT doc_id FROM history_candidates)";
            let mut stream = session.sql(sql).await?.execute_stream().await?;
            while let Some(batch) = stream.next().await {
                let batch = batch?;
                let (ids, url) = (documents::doc_id(&batch)?, documents::url(&batch)?);
                urls.extend((0..batch.num_rows()).map(|i| (ids.value(i), url.value(i).to_string())));
            }
            let night: HashMap<u64, Doc> = night
                .into_iter()
                .map(|(id, text)| {
                    let url = urls.remove(&id).unwrap_or_default();
                    (id, Doc::new(id, url, text))
                })
                .collect();
            let mut earlier: HashMap<(u64, String), Doc> = HashMap::new();
            if !pairs.is_empty() {
                // Only the partitions of the crawls that hold a match are
                // read (the literal list prunes the others by folder).
                let matched: BTreeSet<&str> = pairs.keys().map(|(_, _, c)| c.as_str()).collect();
                let matched = sql_list(matched.into_iter());
                // The matched pages are picked here, not by a join in SQL:
                // under a memory limit that join is a sort-merge join, which
                // sorted the earlier crawls' texts (as `verify`'s did).
                let wanted: HashSet<(u64, &str)> =
                    pairs.keys().map(|(_, other, crawl)| (*other, crawl.as_str())).collect();
                let sql = format!(
                    "SELECT doc_id, crawl, url, verification_text FROM history_documents WHERE crawl IN ({matched})"
                );
                let mut stream = session.sql(&sql).await?.execute_stream().await?;
                while let Some(batch) = stream.next().await {
                    let batch = batch?;
                    let (ids, url) = (history_documents::doc_id(&batch)?, history_documents::url(&batch)?);
                    let text = history_documents::verification_text(&batch)?;
                    let crawl: &StringArray = crate::tables::column(&batch, "crawl")?;
                    for i in (0..batch.num_rows()).filter(|&i| wanted.contains(&(ids.value(i), crawl.value(i)))) {
                        let doc = Doc::new(ids.value(i), url.value(i).to_string(), text.value(i).to_string());
                        earlier.insert((ids.value(i), crawl.value(i).to_string()), doc);
                    }
                }
            }
            anyhow::Ok((pairs, night, earlier))
        })?;
        let (threshold, algorithm) = (config.verify.threshold, config.verify.algorithm);
        let pairs: Vec<_> = pairs.into_iter().collect();
        let verified: Vec<Option<f64>> = pairs
            .par_iter()
            .map(|((doc, other, crawl), _)| match (night.get(doc), earlier.get(&(*other, crawl.clone()))) {
                (Some(a), Some(b)) => compare(a, b, threshold, algorithm).0,
                _ => None,
            })
            .collect();
        let mut table = TableOutput::<repeats::Rows>::create(out)?;
        for (((doc, other, earlier_crawl), mut methods), similarity) in pairs.into_iter().zip(verified) {
            let Some(similarity) = similarity else { continue };
            methods.sort();
            methods.dedup();
            table.push(|b| {
                b.doc_id.append_value(doc);
                b.url.append_value(night.get(&doc).map_or("", |d| d.url.as_str()));
                b.crawl.append_value(crawl);
                b.earlier_doc_id.append_value(other);
                b.earlier_crawl.append_value(&earlier_crawl);
                b.earlier_url.append_value(earlier.get(&(other, earlier_crawl.clone())).map_or("", |d| d.url.as_str()));
                b.similarity.append_value(similarity);
                for m in &methods {
                    b.methods.values().append_value(m);
                }
                b.methods.append(true);
            })?;
        }
        table.commit()
    }

    /// Writes `out/crawl_clusters`: the night's clusters (`clusters`)
    /// joined through its verified repeats (`repeats`) into clusters that
    /// span crawls, each member with its crawl, the copy `[history] keep`
    /// keeps and the copies `[history] mark` marks
    /// (`jobs/crawl_clusters.sql`). Bounded by the night: its clustered
    /// pages and the earlier pages they repeat. Returns its rows.
    fn cluster_night(
        &self,
        out: &Path,
        crawl: &str,
        config: &Config,
        memory_limit: Option<crate::process::memory::SqlMemory>,
        runtime: &tokio::runtime::Runtime,
    ) -> Result<u64> {
        runtime.block_on(async {
            let session = self.session_over(out, memory_limit).await?;
            // Every member once, in (crawl, doc) order, so the groups'
            // numbers depend on the members only.
            let mut edges: Vec<((String, u64), (String, u64))> = Vec::new();
            if crate::tables::write::table_exists(out, clusters::TABLE) {
                let mut stream = session.sql("SELECT doc_id, cluster_id FROM clusters").await?.execute_stream().await?;
                while let Some(batch) = stream.next().await {
                    let batch = batch?;
                    let (doc, cluster) = (clusters::doc_id(&batch)?, clusters::cluster_id(&batch)?);
                    edges.extend(
                        (0..batch.num_rows())
                            .map(|i| ((crawl.to_string(), doc.value(i)), (crawl.to_string(), cluster.value(i)))),
                    );
                }
            }
            let mut stream = session
                .sql("SELECT doc_id, earlier_doc_id, earlier_crawl FROM repeats")
                .await?
                .execute_stream()
                .await?;
            while let Some(batch) = stream.next().await {
                let batch = batch?;
                let (doc, other) = (repeats::doc_id(&batch)?, repeats::earlier_doc_id(&batch)?);
                let earlier_crawl = repeats::earlier_crawl(&batch)?;
                edges.extend((0..batch.num_rows()).map(|i| {
                    ((crawl.to_string(), doc.value(i)), (earlier_crawl.value(i).to_string(), other.value(i)))
                }));
            }
            let members: Vec<(String, u64)> =
                edges.iter().flat_map(|(a, b)| [a, b]).cloned().collect::<BTreeSet<_>>().into_iter().collect();
            let number = |m: &(String, u64)| members.binary_search(m).expect("every member is listed") as u64;
            let mut sets = crate::verify::union_find::UnionFind::new();
            for (a, b) in &edges {
                sets.union(number(a), number(b));
            }
            let (mut group_no, mut member_crawl, mut doc_id) = (Vec::new(), Vec::new(), Vec::new());
            for (group, component) in sets.components().into_iter().filter(|c| c.len() > 1).enumerate() {
                for i in component {
                    let (c, d) = &members[i as usize];
                    group_no.push(group as u64);
                    member_crawl.push(c.clone());
                    doc_id.push(*d);
                }
            }
            let member_crawls: BTreeSet<&str> = member_crawl.iter().map(String::as_str).collect();
            let params = [
                ("night", format!("'{crawl}'")),
                ("member_crawls", sql_list(member_crawls.into_iter())),
                ("keep_order", config.dedup.keep_order()),
                ("new_only", (config.history.mark == MarkRule::NewOnly).to_string()),
            ];
            let batch = arrow::record_batch::RecordBatch::try_from_iter([
                ("group_no", std::sync::Arc::new(arrow::array::UInt64Array::from(group_no)) as arrow::array::ArrayRef),
                ("crawl", std::sync::Arc::new(StringArray::from(member_crawl))),
                ("doc_id", std::sync::Arc::new(arrow::array::UInt64Array::from(doc_id))),
            ])?;
            session.register_batch("members", batch)?;
            let sql = substitute(include_str!("../../jobs/crawl_clusters.sql"), &params);
            crate::tables::sql::run_into_table(&session, out, crawl_clusters::TABLE, &sql).await
        })
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

/// The Parquet files of every table folder under `staging`, by table.
fn listed_objects(staging: &Path) -> Result<BTreeMap<String, Vec<String>>> {
    let mut objects = BTreeMap::new();
    for table in tables() {
        let dir = staging.join(table);
        let files = if dir.is_dir() { parquet_files(&dir)? } else { Vec::new() };
        let names = files.iter().filter_map(|f| f.file_name()).map(|n| n.to_string_lossy().into_owned()).collect();
        objects.insert(table.to_string(), names);
    }
    Ok(objects)
}

/// Registers the views `night_keys` and `past_keys` that
/// `jobs/history_edges.sql` groups: the signatures of the night and of the
/// history, and the keys of every method whose records are matched too
/// ([`registry::HistoryKeys`]) and whose table the night has. `params` are
/// the candidate SQL's (the night's views read them).
async fn register_keys(
    session: &datafusion::prelude::SessionContext,
    out: &Path,
    params: &[(&str, String)],
) -> Result<()> {
    let mut night =
        vec!["SELECT method, slot, sig, doc_id, doc_len, arrow_cast('', 'Utf8') AS crawl FROM signatures".to_string()];
    let mut past = vec!["SELECT method, slot, sig, doc_id, doc_len, crawl FROM history_signatures".to_string()];
    for m in registry::METHODS {
        let Some(keys) = &m.history_keys else { continue };
        if !crate::tables::write::table_exists(out, keys.kept) {
            continue;
        }
        crate::tables::write::check_table_schema(out, keys.kept)?;
        let records = match keys.night {
            Some(sql) => {
                let name = format!("night_{}", keys.kept);
                let df = session.sql(&substitute(sql, params)).await?;
                session.register_table(name.as_str(), df.into_view())?;
                name
            }
            None => keys.kept.to_string(),
        };
        let kept = format!("history_{}", keys.kept);
        night.push(substitute(keys.sql, &[("records", records), ("crawl", "arrow_cast('', 'Utf8')".into())]));
        past.push(substitute(keys.sql, &[("records", kept), ("crawl", "crawl".into())]));
    }
    for (name, parts) in [("night_keys", night), ("past_keys", past)] {
        let union: Vec<String> = parts.iter().map(|p| format!("SELECT * FROM (\n{p}\n)")).collect();
        let df = session.sql(&union.join("\nUNION ALL\n")).await?;
        session.register_table(name, df.into_view())?;
    }
    Ok(())
}

/// The night's documents that repeat a page of an earlier crawl
/// (`out/repeats` of crawl `crawl`; none when the table is missing).
fn night_repeats(out: &Path, crawl: &str, runtime: &tokio::runtime::Runtime) -> Result<HashSet<u64>> {
    if !crate::tables::write::table_exists(out, repeats::TABLE) {
        return Ok(HashSet::new());
    }
    crate::tables::write::check_table_schema(out, repeats::TABLE)?;
    runtime.block_on(async {
        let session = crate::tables::sql::session_over(out).await?;
        let sql = format!("SELECT DISTINCT doc_id FROM repeats WHERE crawl = '{crawl}'");
        let mut stream = session.sql(&sql).await?.execute_stream().await?;
        let mut ids = HashSet::new();
        while let Some(batch) = stream.next().await {
            let batch = batch?;
            ids.extend(repeats::doc_id(&batch)?.iter().flatten());
        }
        anyhow::Ok(ids)
    })
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

/// `'a', 'b'` for an SQL `IN (...)` list of crawl ids (checked by
/// [`check_crawl_id`], so never quoted), `''` (no crawl) when empty.
fn sql_list<'a>(crawls: impl Iterator<Item = &'a str>) -> String {
    let quoted: Vec<String> = crawls.map(|c| format!("'{c}'")).collect();
    if quoted.is_empty() {
        "''".to_string()
    } else {
        quoted.join(", ")
    }
}

fn is_hidden(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'))
}

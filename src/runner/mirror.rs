//! An output folder in an object store (`--out s3://bucket/run`), mirrored
//! by a local cache folder.
//!
//! The stages write their tables as local files: atomic renames, part files
//! written by many threads at once, DataFusion spilling next to them. An
//! object store has none of that, so a run against `s3://bucket/run` works in
//! a local cache folder (`--cache`) and keeps it in step with the store:
//!
//! - before a stage, [`RemoteOut::pull`] copies the manifests and the
//!   committed objects of the tables the stage reads (and of the tables this
//!   task wrote before, so an up-to-date stage is skipped as it is locally);
//! - after a stage, [`RemoteOut::push`] commits what it wrote.
//!
//! The commit protocol: a task uploads its part files under names no
//! earlier version used (`<part>.<token>.parquet`), then writes its
//! manifest listing those objects (`Manifest::objects`); a single PUT is
//! atomic, so that write is the commit. Only then are the objects and
//! manifests it replaced removed (the same rules as for a local folder:
//! [`write::part_replaced_by`], [`runner::manifest_replaced_by`]). Readers
//! take exactly the objects the manifests list, so a task that dies midway
//! leaves the previous version readable and at worst some unlisted objects,
//! which the next commit of that task removes. Tasks on other machines
//! share nothing but the store.
//!
//! Every task pulls the manifests of the stages before it, so with N tasks
//! per stage each of the next stage's N tasks would GET each of its N task
//! manifests: N² GETs per stage, the most of a run's requests (663 of
//! 1,195 object reads on the sample at 8 tasks, `scripts/count_requests.py`).
//! So the task whose commit completes a stage's N manifests also writes a
//! bundle of them ([`Bundle`], `_manifests/<stage>.bundle`), and a pull
//! takes from it every manifest whose ETag in the listing is the one the
//! bundle holds: one GET where there were N. A bundle is only a copy:
//! a task rerun later changes its manifest's ETag, and that manifest is
//! read on its own until a commit bundles the stage again.

use anyhow::{Context, Result};
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::storage::location::{self, Location};
use crate::tables::manifest::{self as manifests, Manifest};
use crate::tables::shard::Shard;
use crate::tables::write;
use crate::tables::write::MANIFEST_DIR;
use crate::tables::Table;

/// The file of the cache's manifest folder that records, for each manifest
/// pulled, the store's ETag and the CRC-32 of the bytes downloaded (not a
/// `.json` file: the manifest folder's readers skip it).
const STORE_ETAGS: &str = ".store-etags";

/// The end of a bundle's name in the store's manifest folder: not `.json`,
/// so that nothing reading the manifests takes it for one.
const BUNDLE_SUFFIX: &str = ".bundle";

/// The task manifests of one stage as they were when the last of them was
/// committed: each manifest's text, verbatim, under its file name, with
/// the ETag of that version (see the module doc).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Bundle {
    manifests: BTreeMap<String, BundledManifest>,
}

/// One manifest of a [`Bundle`].
#[derive(Debug, Serialize, Deserialize)]
struct BundledManifest {
    etag: String,
    text: String,
}

/// The stage whose task manifest is the file `name` (`<stage>.shard-I-of-N.json`).
fn bundled_stage(name: &str) -> Option<&str> {
    name.split_once(".shard-").map(|(stage, _)| stage)
}

/// The texts of the manifests of `wanted` (file name → ETag listed)
/// that a bundle of `listed` holds in the listed version: a bundle is
/// read only when it can spare at least two GETs. One that cannot be
/// read as a bundle is left alone (the manifests are read one by one).
fn manifests_from_bundles(
    folder: &Location,
    listed: &BTreeSet<String>,
    wanted: &BTreeMap<String, String>,
) -> BTreeMap<String, Bytes> {
    let mut by_stage: BTreeMap<&str, usize> = BTreeMap::new();
    for name in wanted.keys() {
        if let Some(stage) = bundled_stage(name) {
            *by_stage.entry(stage).or_default() += 1;
        }
    }
    let mut texts = BTreeMap::new();
    for (stage, wanted_here) in by_stage {
        let bundle_name = format!("{stage}{BUNDLE_SUFFIX}");
        if wanted_here < 2 || !listed.contains(&bundle_name) {
            continue;
        }
        let Some(bundle) =
            folder.child(&bundle_name).get().ok().and_then(|bytes| serde_json::from_slice::<Bundle>(&bytes).ok())
        else {
            continue;
        };
        for (name, bundled) in bundle.manifests {
            if wanted.get(&name) == Some(&bundled.etag) {
                texts.insert(name, Bytes::from(bundled.text));
            }
        }
    }
    texts
}

/// An output folder in an object store and its local cache.
pub struct RemoteOut {
    root: Location,
    cache: PathBuf,
}

impl RemoteOut {
    /// Opens the output `url` for task `shard`, cached in `cache` (default:
    /// a folder for this URL and task under the user's cache folder, see
    /// [`crate::storage::location::default_cache`]).
    pub fn open(url: &str, cache: Option<PathBuf>, shard: Shard) -> Result<RemoteOut> {
        let root = Location::parse(url)?;
        let cache = cache.unwrap_or_else(|| crate::storage::location::default_cache(&root.url, shard));
        std::fs::create_dir_all(&cache).with_context(|| format!("cannot create cache folder {}", cache.display()))?;
        Ok(RemoteOut { root, cache })
    }

    /// The local folder the stages read and write.
    pub fn cache_dir(&self) -> &Path {
        &self.cache
    }

    /// The URL of the output folder.
    pub fn url(&self) -> &str {
        &self.root.url
    }

    /// Brings the cache up to date for one task of a stage: every manifest,
    /// the tables in `reads` as committed by all tasks, and the tables in
    /// `writes` as committed by task `shard` of `stage` (its own earlier
    /// output). Returns the number of objects downloaded.
    ///
    /// The other tasks of the same stage and layout are not pulled: no task
    /// reads its siblings' manifests, and with N tasks each pulling those
    /// committed before it they were N²/2 GETs per stage.
    ///
    /// Of the tables in `own_parts`, a task of a sharded stage gets only the
    /// part files that can hold its documents ([`Shard::may_hold_docs_of`]):
    /// it reads no other (see [`crate::stages::stage::Stage::own_document_inputs`]).
    pub fn pull(
        &self,
        reads: &[Table],
        own_parts: &[Table],
        stage: &str,
        writes: &[Table],
        shard: Shard,
    ) -> Result<usize> {
        let sibling = |name: &str| {
            !shard.is_whole()
                && crate::tables::shard::manifest_task(name, stage)
                    .is_some_and(|task| task.count == shard.count && task != shard)
        };
        let manifests = self.pull_manifests_but(sibling)?;
        let own = crate::tables::shard::manifest_file_name(stage, shard);
        let mut downloaded = 0;
        for table in reads {
            let narrowed = !shard.is_whole() && own_parts.contains(table);
            let fetch =
                |name: &str| !narrowed || write::part_shard(name).is_none_or(|part| shard.may_hold_docs_of(part));
            downloaded += self.pull_table(table.name(), &manifests, None, &fetch)?;
        }
        for table in writes.iter().filter(|t| !reads.contains(t)) {
            downloaded += self.pull_table(table.name(), &manifests, Some((&own, shard)), &|_| true)?;
        }
        Ok(downloaded)
    }

    /// Pulls every manifest and every table they list (for `query`,
    /// `explain` and `report` over an object-store output).
    pub fn pull_all(&self) -> Result<usize> {
        let manifests = self.pull_manifests()?;
        let tables: BTreeSet<&String> = manifests.values().flat_map(|m| m.objects.keys()).collect();
        let mut downloaded = 0;
        for table in tables {
            downloaded += self.pull_table(table, &manifests, None, &|_| true)?;
        }
        Ok(downloaded)
    }

    /// Commits what task `shard` of `stage` just wrote into the cache: the
    /// files of its parts of `tables`, then its manifest, then removes what
    /// that replaced (see the module doc). Returns the objects uploaded.
    pub fn push(&self, stage: &str, tables: &[Table], shard: Shard) -> Result<usize> {
        let manifest_path = manifests::manifest_path(&self.cache, stage, shard);
        let mut manifest = manifests::read_manifest_file(&manifest_path)
            .with_context(|| format!("stage {stage} left no manifest at {}", manifest_path.display()))?;
        let token = commit_token(&manifest);
        manifest.objects.clear();
        let mut uploaded = 0;
        for table in tables {
            let dir = self.cache.join(table.name());
            let mut names = Vec::new();
            for file in own_files(&dir, shard)? {
                if is_committed_name(&file) {
                    names.push(file);
                    continue;
                }
                let object = committed_name(&file, &token);
                self.root.child(&format!("{table}/{object}")).upload(&dir.join(&file))?;
                std::fs::rename(dir.join(&file), dir.join(&object))?;
                uploaded += 1;
                names.push(object);
            }
            names.sort();
            manifest.objects.insert(table.to_string(), names);
        }
        let text = manifests::manifest_text(&manifest)?;
        self.root
            .child(&format!("{MANIFEST_DIR}/{}", crate::tables::shard::manifest_file_name(stage, shard)))
            .put(Bytes::from(text.clone()))?;
        write::write_file_atomically(&manifest_path, text.as_bytes())?;
        self.remove_replaced(stage, &manifest, shard)?;
        if !shard.is_whole() {
            // Only a copy: readers do without it.
            if let Err(e) = self.bundle_if_complete(stage, shard.count) {
                tracing::warn!("cannot bundle the manifests of stage {stage}: {e:#}");
            }
        }
        Ok(uploaded)
    }

    /// Writes the bundle of `stage` run as `count` tasks when the store
    /// holds all their manifests: one listing for every task, and N GETs
    /// and a PUT for the one that completes the stage (two when two end
    /// together: they write the same bundle). The ETags are those of the
    /// versions read.
    fn bundle_if_complete(&self, stage: &str, count: u32) -> Result<()> {
        let folder = self.root.child(MANIFEST_DIR);
        let names: Vec<String> =
            (0..count).map(|index| crate::tables::shard::manifest_file_name(stage, Shard { index, count })).collect();
        let listed: BTreeSet<String> =
            folder.list()?.iter().filter_map(|meta| location::relative_path(&folder.path, &meta.location)).collect();
        if !names.iter().all(|name| listed.contains(name)) {
            return Ok(());
        }
        let mut bundle = Bundle::default();
        for name in names {
            let (bytes, etag) = folder.child(&name).get_with_etag()?;
            let Some(etag) = etag else { return Ok(()) };
            let text = String::from_utf8(bytes.to_vec()).with_context(|| format!("{name} is not text"))?;
            bundle.manifests.insert(name, BundledManifest { etag, text });
        }
        folder.child(&format!("{stage}{BUNDLE_SUFFIX}")).put(Bytes::from(serde_json::to_vec(&bundle)?))
    }

    /// Takes the store's lock of task `shard` of `stage`
    /// (`_locks/<stage>[.shard-I-of-N].lock`, see [`crate::tables::lock`]): runs of
    /// one task with different cache folders, or on different machines,
    /// share only the store.
    pub fn lock(&self, stage: &str, shard: Shard, wait: bool) -> Result<crate::tables::lock::StoreLock> {
        let location = self.root.child(&crate::tables::lock::stage_lock_name(stage, shard));
        crate::tables::lock::acquire_in_store(location, &crate::tables::lock::stage_task_name(stage, shard), wait)
    }

    /// Takes the store's run lock (`_locks/run`, see
    /// [`crate::tables::lock::acquire_run`]) for an unsharded run, held to
    /// its end so that a queued run never takes a stage's lock between two
    /// of its stages. A store has no shared locks, so the tasks of a sharded
    /// stage take none (each has its task's lock).
    pub fn lock_run(&self, wait: bool) -> Result<crate::tables::lock::StoreLock> {
        let location =
            self.root.child(&format!("{}/{}", crate::tables::lock::LOCK_DIR, crate::tables::lock::RUN_LOCK_FILE));
        crate::tables::lock::acquire_in_store(location, &format!("a run on {}", self.url()), wait)
    }

    /// For an export: waits (`wait`) until no run or task holds a lock
    /// object of the store, or is a [`crate::tables::lock::Busy`] error
    /// naming the one that does ([`crate::tables::lock::wait_for_store_runs`]).
    pub fn wait_for_runs(&self, wait: bool) -> Result<()> {
        let locks = self.root.child(crate::tables::lock::LOCK_DIR);
        crate::tables::lock::wait_for_store_runs(&locks, &format!("a run on {}", self.url()), wait)
    }

    /// Uploads one file of the cache folder (`report.html`) as it is.
    pub fn push_file(&self, name: &str) -> Result<()> {
        self.root.child(name).upload(&self.cache.join(name))
    }

    /// Removes the objects and manifests that the commit of `manifest`
    /// replaced.
    fn remove_replaced(&self, stage: &str, manifest: &Manifest, shard: Shard) -> Result<()> {
        for (table, kept) in &manifest.objects {
            let folder = self.root.child(table);
            for meta in folder.list()? {
                let Some(name) = location::relative_path(&folder.path, &meta.location) else { continue };
                if !kept.contains(&name) && write::part_replaced_by(&name, shard) {
                    folder.child(&name).delete()?;
                }
            }
        }
        let own = crate::tables::shard::manifest_file_name(stage, shard);
        let folder = self.root.child(MANIFEST_DIR);
        // A whole stage's commit leaves its tasks' bundle nothing to stand for.
        let bundle = format!("{stage}{BUNDLE_SUFFIX}");
        for meta in folder.list()? {
            let Some(name) = location::relative_path(&folder.path, &meta.location) else { continue };
            let replaced = manifests::manifest_replaced_by(&name, stage, shard) || (shard.is_whole() && name == bundle);
            if name != own && replaced {
                folder.child(&name).delete()?;
            }
        }
        Ok(())
    }

    /// Makes the cache's manifest folder a copy of the store's; returns the
    /// manifests by file name (`pipeline status` needs nothing more).
    ///
    /// One listing, then a GET only of the manifests that are new or
    /// changed since this cache last pulled them: the listing's ETag is
    /// the one recorded then ([`STORE_ETAGS`]), and the cached file is
    /// still the one downloaded (its CRC-32 recorded with it; a task that
    /// wrote its manifest here and failed before committing it changed
    /// it). Every task of every stage pulls the manifests, so getting them
    /// all made each task's GETs grow with the stages and tasks before it:
    /// 1,225 of the 1,561 GETs of the sample run as 4 tasks per map stage
    /// (`scripts/count_requests.py`). The manifests still to get come from
    /// the stages' bundles where they hold the listed version.
    pub fn pull_manifests(&self) -> Result<BTreeMap<String, Manifest>> {
        self.pull_manifests_but(|_| false)
    }

    /// [`Self::pull_manifests`] but for the manifests `left_out` names,
    /// which are neither pulled nor kept in the cache.
    fn pull_manifests_but(&self, left_out: impl Fn(&str) -> bool) -> Result<BTreeMap<String, Manifest>> {
        let local = self.cache.join(MANIFEST_DIR);
        std::fs::create_dir_all(&local)?;
        let etags_path = local.join(STORE_ETAGS);
        let known: BTreeMap<String, (String, u32)> =
            std::fs::read(&etags_path).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok()).unwrap_or_default();
        let mut pulled: BTreeMap<String, (String, u32)> = BTreeMap::new();
        let folder = self.root.child(MANIFEST_DIR);
        let mut manifests = BTreeMap::new();
        let listing = folder.list()?;
        let listed: BTreeSet<String> =
            listing.iter().filter_map(|meta| location::relative_path(&folder.path, &meta.location)).collect();
        let mut entries = Vec::new();
        let mut wanted: BTreeMap<String, String> = BTreeMap::new();
        for meta in listing {
            let Some(name) = location::relative_path(&folder.path, &meta.location) else { continue };
            if !name.ends_with(".json") || name.contains('/') || left_out(&name) {
                continue;
            }
            let cached = match (&meta.e_tag, known.get(&name)) {
                (Some(tag), Some((known_tag, crc))) if tag == known_tag => std::fs::read(local.join(&name))
                    .ok()
                    .filter(|bytes| crc32fast::hash(bytes) == *crc)
                    .map(Bytes::from),
                _ => None,
            };
            if let (None, Some(tag)) = (&cached, &meta.e_tag) {
                wanted.insert(name.clone(), tag.clone());
            }
            entries.push((name, meta.e_tag, cached));
        }
        let mut bundled = manifests_from_bundles(&folder, &listed, &wanted);
        for (name, e_tag, cached) in entries {
            let bytes = match cached {
                Some(bytes) => bytes,
                None => {
                    let bytes = match bundled.remove(&name) {
                        Some(bytes) => bytes,
                        None => folder.child(&name).get()?,
                    };
                    write::write_file_atomically(&local.join(&name), &bytes)?;
                    bytes
                }
            };
            if let Some(tag) = e_tag {
                pulled.insert(name.clone(), (tag, crc32fast::hash(&bytes)));
            }
            let manifest: Manifest =
                serde_json::from_slice(&bytes).with_context(|| format!("{}/{name} is not a manifest", folder.url))?;
            manifests.insert(name, manifest);
        }
        for entry in std::fs::read_dir(&local)?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".json") && !manifests.contains_key(&name) {
                std::fs::remove_file(entry.path())?;
            }
        }
        write::write_file_atomically(&etags_path, &serde_json::to_vec(&pulled)?)?;
        Ok(manifests)
    }

    /// Makes the cache's folder of `table` hold exactly the objects the
    /// manifests list for it; with `task` (a manifest file name and its
    /// task), only the objects of that one manifest, leaving the parts of
    /// the other tasks alone. A table no manifest lists is removed from the
    /// cache (the store has no committed version of it), unless narrowed to
    /// a task. Of the objects listed, only those `fetch` accepts are
    /// downloaded. Returns the objects downloaded.
    fn pull_table(
        &self,
        table: &str,
        manifests: &BTreeMap<String, Manifest>,
        task: Option<(&str, Shard)>,
        fetch: &dyn Fn(&str) -> bool,
    ) -> Result<usize> {
        let listing: Vec<&Vec<String>> = manifests
            .iter()
            .filter(|(name, _)| task.is_none_or(|(own, _)| name.as_str() == own))
            .filter_map(|(_, m)| m.objects.get(table))
            .collect();
        let dir = self.cache.join(table);
        if listing.is_empty() {
            if task.is_none() && dir.exists() {
                std::fs::remove_dir_all(&dir)?;
            }
            return Ok(0);
        }
        let objects: BTreeSet<&String> = listing.into_iter().flatten().collect();
        std::fs::create_dir_all(&dir)?;
        for entry in std::fs::read_dir(&dir)?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let ours = task.is_none_or(|(_, shard)| write::part_replaced_by(&name, shard));
            if ours && !objects.contains(&name) {
                std::fs::remove_file(entry.path())?;
            }
        }
        let mut downloaded = 0;
        for name in objects {
            let path = dir.join(name);
            if path.exists() || !fetch(name) {
                continue;
            }
            let bytes = self.root.child(&format!("{table}/{name}")).get().with_context(|| {
                format!("table {table} changed in the store while it was read (a task committed meanwhile); run again")
            })?;
            write::write_file_atomically(&path, &bytes)?;
            downloaded += 1;
        }
        Ok(downloaded)
    }
}

/// The files of task `shard`'s parts in a table folder of the cache (all
/// part files for an unsharded run), sorted.
fn own_files(dir: &Path, shard: Shard) -> Result<Vec<String>> {
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("stage output {} is missing", dir.display()))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        // Hidden files are a crashed pull's leftovers, never table data.
        .filter(|name| !name.starts_with('.'))
        .filter(|name| shard.is_whole() || write::part_shard(name) == Some(shard))
        .collect();
    files.sort();
    Ok(files)
}

/// Object name of a new part file: `part-0-of-1-0.parquet` committed with
/// token `t` is `part-0-of-1-0.t.parquet`.
fn committed_name(file: &str, token: &str) -> String {
    match file.strip_suffix(".parquet") {
        Some(stem) => format!("{stem}.{token}.parquet"),
        None => format!("{file}.{token}"),
    }
}

/// True for a file that came from the store (its name carries a token).
fn is_committed_name(file: &str) -> bool {
    let stem = file.strip_suffix(".parquet").unwrap_or(file);
    stem.rsplit_once('.')
        .is_some_and(|(_, token)| token.len() == TOKEN_HEX && token.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Hex digits of a commit token.
const TOKEN_HEX: usize = 16;

/// A token no earlier commit used: from the manifest's fingerprint, start
/// time and this process, so two runs never upload over each other's
/// objects (an object being read is never overwritten).
fn commit_token(manifest: &Manifest) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let seed = format!("{}\n{}\n{}\n{nanos}", manifest.fingerprint, manifest.started_at_unix, std::process::id());
    format!("{:0width$x}", xxhash_rust::xxh3::xxh3_64(seed.as_bytes()), width = TOKEN_HEX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::manifest::StageReport;

    #[test]
    fn committed_names_carry_a_token_and_keep_the_task() {
        let name = committed_name("part-1-of-3-000002.parquet", "0123456789abcdef");
        assert_eq!(name, "part-1-of-3-000002.0123456789abcdef.parquet");
        assert!(is_committed_name(&name));
        assert!(!is_committed_name("part-1-of-3-000002.parquet"));
        assert_eq!(write::part_shard(&name), Some("1/3".parse().unwrap()));
    }

    /// A manifest of stage `stage` whose fingerprint is `fingerprint`.
    fn manifest_json(stage: &str, fingerprint: &str) -> String {
        serde_json::json!({
            "stage": stage, "program_version": "test", "fingerprint": fingerprint, "inputs": {},
            "external_inputs": null, "config": null, "report": StageReport::default(),
            "started_at_unix": 0, "wall_seconds": 0.0, "cpu_seconds": 0.0,
        })
        .to_string()
    }

    /// The manifests pulled are the store's whatever the cache held: a new
    /// one comes, a changed one comes again, a cached copy changed here
    /// (a task that failed before its commit) is replaced, and one the
    /// store no longer has goes; an unchanged one is read from the cache.
    #[test]
    fn pulled_manifests_are_the_store_s() {
        let root = std::env::temp_dir().join(format!("neardup-mirror-pull-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let (store, cache) = (root.join("store"), root.join("cache"));
        std::fs::create_dir_all(store.join(MANIFEST_DIR)).unwrap();
        let url = url::Url::from_directory_path(&store).unwrap().to_string();
        let out = RemoteOut::open(&url, Some(cache.clone()), Shard::WHOLE).unwrap();
        let put = |name: &str, text: String| std::fs::write(store.join(MANIFEST_DIR).join(name), text).unwrap();
        let fingerprints = |out: &RemoteOut| -> Vec<(String, String)> {
            out.pull_manifests().unwrap().into_iter().map(|(name, m)| (name, m.fingerprint)).collect()
        };
        put("ingest.json", manifest_json("ingest", "a"));
        put("blocks.json", manifest_json("blocks", "b"));
        assert_eq!(fingerprints(&out), [("blocks.json".into(), "b".into()), ("ingest.json".into(), "a".into())]);
        let cached = cache.join(MANIFEST_DIR).join("ingest.json");
        assert!(cached.exists() && cache.join(MANIFEST_DIR).join(STORE_ETAGS).exists());
        // Changed in the store (a longer text: the local store's ETag
        // follows size and time), and changed in the cache.
        put("blocks.json", manifest_json("blocks", "b-changed"));
        std::fs::write(&cached, manifest_json("ingest", "local")).unwrap();
        assert_eq!(
            fingerprints(&out),
            [("blocks.json".into(), "b-changed".into()), ("ingest.json".into(), "a".into())]
        );
        std::fs::remove_file(store.join(MANIFEST_DIR).join("blocks.json")).unwrap();
        assert_eq!(fingerprints(&out), [("ingest.json".into(), "a".into())]);
        assert!(!cache.join(MANIFEST_DIR).join("blocks.json").exists());
        let _ = std::fs::remove_dir_all(&root);
    }

    /// The task that completes a stage bundles its manifests, and a pull
    /// takes from the bundle exactly the manifests whose listed version it
    /// holds. To tell where a manifest came from, the bundle is edited to
    /// say other fingerprints under the same ETags.
    #[test]
    fn a_stage_s_bundle_stands_for_the_manifests_it_holds_in_their_version() {
        let root = std::env::temp_dir().join(format!("neardup-mirror-bundle-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let store = root.join("store");
        let folder = store.join(MANIFEST_DIR);
        std::fs::create_dir_all(&folder).unwrap();
        let url = url::Url::from_directory_path(&store).unwrap().to_string();
        let task = |index: u32| Shard { index, count: 3 };
        let names: Vec<String> = (0..3).map(|i| crate::tables::shard::manifest_file_name("tokens", task(i))).collect();
        let writer = RemoteOut::open(&url, Some(root.join("cache-writer")), task(0)).unwrap();
        let bundle_path = folder.join("tokens.bundle");
        for (i, name) in names.iter().enumerate() {
            std::fs::write(folder.join(name), manifest_json("tokens", &format!("t{i}"))).unwrap();
            writer.bundle_if_complete("tokens", 3).unwrap();
            // Only the commit that completes the stage writes the bundle.
            assert_eq!(bundle_path.exists(), i == 2, "after task {i}");
        }
        let mut bundle: Bundle = serde_json::from_slice(&std::fs::read(&bundle_path).unwrap()).unwrap();
        assert_eq!(bundle.manifests.keys().collect::<Vec<_>>(), names.iter().collect::<Vec<_>>());
        for (i, name) in names.iter().enumerate() {
            assert_eq!(bundle.manifests[name].text, manifest_json("tokens", &format!("t{i}")));
            bundle.manifests.get_mut(name).unwrap().text = manifest_json("tokens", &format!("bundled{i}"));
        }
        std::fs::write(&bundle_path, serde_json::to_vec(&bundle).unwrap()).unwrap();
        // Task 1 rerun: its manifest is a new version, which the bundle
        // does not hold.
        std::fs::write(folder.join(&names[1]), manifest_json("tokens", "t1-rerun")).unwrap();
        let reader = RemoteOut::open(&url, Some(root.join("cache-reader")), Shard::WHOLE).unwrap();
        let pulled: Vec<String> = reader.pull_manifests().unwrap().into_values().map(|m| m.fingerprint).collect();
        assert_eq!(pulled, ["bundled0", "t1-rerun", "bundled2"]);
        // The cache holds what was pulled, and a second pull reads it there.
        let cached = std::fs::read_to_string(root.join("cache-reader").join(MANIFEST_DIR).join(&names[0])).unwrap();
        assert_eq!(cached, manifest_json("tokens", "bundled0"));
        std::fs::remove_file(&bundle_path).unwrap();
        let pulled: Vec<String> = reader.pull_manifests().unwrap().into_values().map(|m| m.fingerprint).collect();
        assert_eq!(pulled, ["bundled0", "t1-rerun", "bundled2"]);
        // A bundle that is not one is left alone.
        std::fs::write(&bundle_path, "not a bundle").unwrap();
        let fresh = RemoteOut::open(&url, Some(root.join("cache-fresh")), Shard::WHOLE).unwrap();
        let pulled: Vec<String> = fresh.pull_manifests().unwrap().into_values().map(|m| m.fingerprint).collect();
        assert_eq!(pulled, ["t0", "t1-rerun", "t2"]);
        // The stage committed whole replaces its tasks and their bundle.
        let whole: Manifest = serde_json::from_str(&manifest_json("tokens", "whole")).unwrap();
        std::fs::write(folder.join("tokens.json"), manifest_json("tokens", "whole")).unwrap();
        writer.remove_replaced("tokens", &whole, Shard::WHOLE).unwrap();
        let left: Vec<String> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left, ["tokens.json"]);
        let _ = std::fs::remove_dir_all(&root);
    }
}

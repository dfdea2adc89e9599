//! A history folder in an object store (`--history s3://bucket/history`),
//! mirrored by a local cache folder, as an object-store output folder is
//! ([`crate::runner::mirror`]).
//!
//! Matching and appending work on the cache (a local [`History`]): a night
//! reads its earlier crawls' partitions through DataFusion from local
//! files. Before, [`RemoteHistory::pull`] makes the cache a copy of the
//! store's complete crawls; after, [`RemoteHistory::push`] commits the
//! crawl the night appended.
//!
//! The commit protocol is the local one with objects: a crawl's part files
//! are uploaded under names no earlier version used
//! (`<part>.<token>.parquet`), then its manifest (`_crawls/<crawl>.json`,
//! which lists them) is written in one PUT, which is atomic: that write is
//! the commit. Only then are the objects of the version it replaced
//! removed. Readers take exactly the objects a manifest lists, so a push
//! that dies midway leaves the previous version of the crawl readable and
//! at worst some unlisted objects, which the next push of that crawl
//! removes.

use anyhow::{Context, Result};
use bytes::Bytes;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::history::folder::{check_crawl_id, tables, CrawlManifest, History, MANIFESTS};
use crate::storage::location::{self, Location};

/// A history in an object store and its local cache.
pub struct RemoteHistory {
    root: Location,
    cache: History,
}

impl RemoteHistory {
    /// The history at `url`, cached in `cache` (default: a folder named
    /// after the URL under the user's cache folder, see
    /// [`crate::storage::location::default_cache`]).
    pub fn open(url: &str, cache: Option<PathBuf>) -> Result<RemoteHistory> {
        let root = Location::parse(url)?;
        let cache =
            cache.unwrap_or_else(|| crate::storage::location::default_cache(url, crate::tables::shard::Shard::WHOLE));
        Ok(RemoteHistory { root, cache: History::open(&cache)? })
    }

    /// The local copy, to match, append, list and query.
    pub fn cache(&self) -> &History {
        &self.cache
    }

    /// The history's URL.
    pub fn url(&self) -> &str {
        &self.root.url
    }

    /// The manifests of the store's complete crawls, by crawl id.
    pub fn manifests(&self) -> Result<BTreeMap<String, CrawlManifest>> {
        let folder = self.root.child(MANIFESTS);
        let mut manifests = BTreeMap::new();
        for meta in folder.list()? {
            let Some(name) = location::relative_path(&folder.path, &meta.location) else { continue };
            if !name.ends_with(".json") || name.starts_with('.') {
                continue;
            }
            let object = folder.at(meta.location, &name);
            let manifest: CrawlManifest =
                serde_json::from_slice(&object.get()?).with_context(|| format!("bad crawl manifest {}", object.url))?;
            manifests.insert(manifest.crawl.clone(), manifest);
        }
        Ok(manifests)
    }

    /// Makes the cache a copy of the store's complete crawls: a crawl whose
    /// manifest differs from the cache's is downloaded whole and installed
    /// as an append is; crawls the store no longer has are dropped. Returns
    /// the objects downloaded.
    pub fn pull(&self) -> Result<usize> {
        let remote = self.manifests()?;
        for local in self.cache.crawls()? {
            if !remote.contains_key(&local.crawl) {
                self.cache.drop_crawl(&local.crawl)?;
            }
        }
        let local: BTreeMap<String, CrawlManifest> =
            self.cache.crawls()?.into_iter().map(|m| (m.crawl.clone(), m)).collect();
        let mut downloaded = 0;
        for (crawl, manifest) in &remote {
            if local.get(crawl) == Some(manifest) {
                self.cache.tidy(manifest)?;
                continue;
            }
            let staging = self.cache.staging(crawl)?;
            for (table, files) in &manifest.objects {
                std::fs::create_dir_all(staging.join(table))?;
                for file in files {
                    let object = self.root.child(&format!("{table}/crawl={crawl}/{file}"));
                    download(&object, &staging.join(table).join(file))?;
                    downloaded += 1;
                }
            }
            self.cache.install(manifest, &staging)?;
        }
        Ok(downloaded)
    }

    /// Commits crawl `crawl` of the cache to the store: uploads its part
    /// files under new names (renamed so in the cache too), writes its
    /// manifest, then removes the objects of the version it replaced.
    /// Returns the objects uploaded.
    pub fn push(&self, crawl: &str) -> Result<usize> {
        let mut manifest = self
            .cache
            .crawls()?
            .into_iter()
            .find(|m| m.crawl == crawl)
            .with_context(|| format!("no crawl `{crawl}` in the cache {}", self.cache.root().display()))?;
        let token = format!("{:x}", std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_nanos());
        let mut uploaded = 0;
        for (table, files) in manifest.objects.iter_mut() {
            let dir = self.cache.partition(table, crawl);
            for file in files.iter_mut() {
                let stem = file.trim_end_matches(".parquet");
                let stem = stem.rsplit_once('.').map_or(stem, |(s, _)| s);
                let name = format!("{stem}.{token}.parquet");
                self.root.child(&format!("{table}/crawl={crawl}/{name}")).upload(&dir.join(&*file))?;
                std::fs::rename(dir.join(&*file), dir.join(&name))?;
                *file = name;
                uploaded += 1;
            }
        }
        self.cache.write_manifest(&manifest)?;
        self.root
            .child(&format!("{MANIFESTS}/{crawl}.json"))
            .put(Bytes::from(serde_json::to_vec_pretty(&manifest)?))?;
        self.remove_unlisted(&manifest)?;
        Ok(uploaded)
    }

    /// Removes crawl `crawl` from the store (its manifest first, so it is
    /// gone for readers at once) and from the cache; false when the store
    /// had none.
    pub fn drop_crawl(&self, crawl: &str) -> Result<bool> {
        check_crawl_id(crawl)?;
        let manifest = self.root.child(&format!("{MANIFESTS}/{crawl}.json"));
        let existed = manifest.head()?.is_some();
        if existed {
            manifest.delete()?;
        }
        for table in tables() {
            let folder = self.root.child(&format!("{table}/crawl={crawl}"));
            for meta in folder.list()? {
                let name = location::relative_path(&folder.path, &meta.location).unwrap_or_default();
                folder.at(meta.location, &name).delete()?;
            }
        }
        self.cache.drop_crawl(crawl)?;
        Ok(existed)
    }

    /// The objects of the crawl's partitions that `manifest` does not list.
    fn remove_unlisted(&self, manifest: &CrawlManifest) -> Result<()> {
        for table in tables() {
            let folder = self.root.child(&format!("{table}/crawl={}", manifest.crawl));
            let listed = manifest.objects.get(table).map(Vec::as_slice).unwrap_or_default();
            for meta in folder.list()? {
                let Some(name) = location::relative_path(&folder.path, &meta.location) else { continue };
                if !listed.contains(&name) {
                    folder.at(meta.location, &name).delete()?;
                }
            }
        }
        Ok(())
    }
}

/// Downloads `object` to `path` through a hidden temporary file, so a
/// partial download never has the file's name.
fn download(object: &Location, path: &Path) -> Result<()> {
    let tmp = path.with_file_name(format!(".{}.tmp", path.file_name().unwrap_or_default().to_string_lossy()));
    std::fs::write(&tmp, object.get()?).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

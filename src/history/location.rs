//! Where `--history` points ([`HistoryLocation`]): a local history folder,
//! or one in an object store worked on through a local cache; the
//! commands and the runner go through it, whatever the kind.

use anyhow::Result;
use std::path::{Path, PathBuf};

use crate::history::folder::{CrawlManifest, History};
use crate::history::mirror::RemoteHistory;

/// Where `--history` points: a local folder, or an object-store URL
/// (`s3://bucket/history`, `file:///path`) worked on through a local cache.
pub enum HistoryLocation {
    Local(History),
    Remote(RemoteHistory),
}

impl HistoryLocation {
    /// Opens `spec`: a URL is an object-store history cached in `cache`
    /// (default: under the user's cache folder), anything else a folder,
    /// created when missing.
    pub fn open(spec: &str, cache: Option<PathBuf>) -> Result<HistoryLocation> {
        if crate::storage::location::is_url(spec) {
            Ok(HistoryLocation::Remote(RemoteHistory::open(spec, cache)?))
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

    /// The folder the history's stages read: the history's, or the cache
    /// of an object-store history (complete once [`HistoryLocation::local`]
    /// has pulled it).
    pub fn local_root(&self) -> &Path {
        match self {
            HistoryLocation::Local(history) => history.root(),
            HistoryLocation::Remote(remote) => remote.cache().root(),
        }
    }

    /// Takes the history's lock ([`crate::tables::lock`]), held while a run
    /// matches against it, appends to it, drops or compacts crawls: two
    /// such runs at once would match a night against a half-written crawl
    /// or replace each other's partitions. For an object store the lock is
    /// the local cache's, so runs sharing a cache folder are kept apart.
    pub fn lock(&self, wait: bool) -> Result<crate::tables::lock::TaskLock> {
        crate::tables::lock::acquire(
            &self.local_root().join(crate::tables::lock::LOCK_DIR).join("history.lock"),
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

//! The history folder (`--history DIR`): the crawls of earlier nights, kept
//! so that a later night can be matched against them.
//!
//! Layout, one Hive-style partition per crawl, so SQL engines read the crawl
//! id from the path:
//!
//! ```text
//! DIR/_crawls/<crawl>.json                      the crawl's manifest
//! DIR/history_documents/crawl=<crawl>/*.parquet  id, URLs, date, length, verification text
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
//!
//! - [`folder`]: a history folder, its crawls' manifests and their part
//!   files (append's copies, install, drop, compact);
//! - [`location`]: where `--history` points, a folder or an object store;
//! - [`mirror`]: a history in an object store, through a local cache;
//! - [`matching`]: the steps of matching a night against the earlier
//!   crawls, over rows in memory;
//! - [`union_find`]: disjoint sets, for the clusters across crawls.
//!
//! Plain files and in-memory data only: what reads the history's tables
//! through DataFusion (the night's append, the three match stages, the
//! tables registered for `pipeline query`) is `crate::stages::history`'s.

pub mod folder;
pub mod location;
pub mod matching;
pub mod mirror;
pub mod union_find;

pub use folder::{check_crawl_id, CrawlManifest, History};
pub use location::HistoryLocation;

//! neardup: find near-duplicate documents in web crawls.
//!
//! The pipeline is a chain of stages (`ingest` → `tokens` → `stats` →
//! `signatures` → `search` → `candidates` → `verify` → `evaluate`), each
//! reading and writing Parquet tables under one output folder; see
//! `README.md`. The map stages (`ingest`, `tokens`,
//! `signatures`, `verify`) can run as N independent tasks (`shard`). `report`
//! renders a finished run as one HTML page; `status` tells which stages a
//! run would redo; `export` writes what a run decided as a deduplicated
//! crawl or corpus. Inputs and the output folder
//! may live in an object store (`store`, `remote`).

pub mod config;
pub mod explain;
pub mod export;
pub mod gold;
pub mod history;
pub mod ingest;
pub mod interrupt;
pub mod lock;
pub mod logging;
pub mod memory;
pub mod methods;
pub mod parallelism;
pub mod progress;
pub mod remote;
pub mod report;
pub mod runner;
pub mod schema;
pub mod shard;
pub mod similarity;
pub mod spilled_docs;
pub mod sql;
pub mod stages;
pub mod status;
pub mod store;
pub mod table;
pub mod tables;
pub mod terminal;
pub mod text;
pub mod union_find;
pub mod verification;

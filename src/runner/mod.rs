//! The stage runner: orders the stages of [`crate::stages`] and runs them,
//! skipping the up-to-date ones; the run's locks, status and object-store
//! outputs.
//!
//! A stage reads named tables and writes named tables under one output
//! folder. After a stage succeeds, the runner writes
//! `DIR/_manifests/<stage>.json` ([`crate::tables::manifest`]) with a
//! fingerprint of everything the output depends on (program version, the
//! stage's config, the fingerprints of its input tables' manifests, the
//! columns it writes, and for ingest the input files' sizes and mtimes).
//! `--stage all` skips a stage whose fingerprint is unchanged.
//!
//! A task of a sharded stage (`--shard I/N`) writes its own manifest,
//! `DIR/_manifests/<stage>.shard-I-of-N.json`; a stage that reads the
//! tables of a sharded stage starts only when all N manifests are there and
//! otherwise names the missing tasks.

pub mod leftovers;
pub mod mirror;
pub mod plan;
pub mod run;
pub mod stage_run;
pub mod status;

//! neardup: find near-duplicate documents in web crawls.
//!
//! The pipeline is a chain of stages (`ingest` → `blocks` →
//! `boilerplate` → `tokens` → `exact` → `stats` → `descr_sample` →
//! `method_state` → `signatures` → `search_keys` → `search_groups` →
//! `search_links` → `search` → `candidates` → `verify_pairs` → `verify` →
//! `place` → `decide` → `evaluate`, with the history's three before
//! `decide` in a run with `--history`: [`stages::in_run_order`]), each
//! reading and writing Parquet tables under one output folder; see
//! `README.md`. The map stages can run
//! as N independent tasks ([`tables::shard`]). Inputs and the output folder
//! may live in an object store ([`storage`]).
//!
//! # Layers
//!
//! Each module imports only from its own layer and the layers before it
//! (`tests/layers.rs` reads this list and checks every `crate::` path of
//! `src/` against it):
//!
//! 1. foundations: [`process`] (threads, memory, logs, Ctrl-C),
//!    [`storage`] (object-store locations, spill files), [`tables`]
//!    (schemas, writing, SQL sessions, shards, manifests, locks),
//!    [`settings`] (what every step's settings share);
//! 2. [`text`] (normalization, boilerplate) and [`ingest`] (archives and
//!    corpora → documents), each with its settings;
//! 3. [`methods`], with their settings and the
//!    [`methods::registry`];
//! 4. [`verify`] (similarity, comparisons, cluster placement, the keep
//!    rule) and [`evaluate`] (gold labels, judging the methods);
//! 5. [`config`]: a job file read into every step's settings, checked;
//! 6. [`history`] (the folder of earlier crawls, and the steps that match
//!    a night against it);
//! 7. [`stages`]: the [`stages::stage::Stage`] trait, the run context,
//!    and one module per stage, from tables to a step and back (the
//!    history's three among them);
//! 8. [`report`] (the HTML report, `explain`);
//! 9. [`runner`]: orders the stages and runs them (plans, status,
//!    object-store outputs), the report last;
//! 10. [`export`] (the deduplicated crawl);
//! 11. [`cli`] (the command line of `pipeline`: commands, options, exit
//!    codes) and the binaries (`main.rs`, which only calls it, and `bin/`),
//!    which may use any of them.

pub mod process;
pub mod settings;
pub mod storage;
pub mod tables;

pub mod ingest;
pub mod text;

pub mod methods;

pub mod evaluate;
pub mod verify;

pub mod config;

pub mod history;

pub mod stages;

pub mod report;

pub mod runner;

pub mod export;

pub mod cli;

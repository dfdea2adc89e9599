//! The process and its machine: how many threads it works with
//! ([`parallelism`]), how much memory it may use ([`memory`]), what it
//! says while it works ([`logging`], [`progress`], [`terminal`], and
//! [`output`], which a reader that went away does not fail) and how it
//! stops on Ctrl-C ([`interrupt`]). Decided once per process, read by every
//! layer above.

pub mod interrupt;
pub mod logging;
pub mod memory;
pub mod output;
pub mod parallelism;
pub mod progress;
pub mod terminal;

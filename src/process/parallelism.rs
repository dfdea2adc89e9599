//! How many threads the process works with, decided once.
//!
//! Three pools share the machine: rayon's (the map stages and
//! verification), tokio's (the DataFusion sessions and their I/O) and
//! DataFusion's target partitions (how many streams each query plan runs).
//! `--threads N` must size all three, or a run with `--threads 1` still
//! plans its SQL for every core and a one-CPU machine meets plans that no
//! test ran; the default is the CPUs this process may use (its affinity
//! mask and cgroup quota, as `std::thread::available_parallelism` reads
//! them), so `taskset -c 0` and a `cpu: 1` container get one thread.
//! (Under a `--memory-limit` given, a SQL plan has at least two partitions
//! even on one thread, so that its joins can spill:
//! `tables::sql::plan_partitions`.)

use anyhow::Result;
use std::sync::OnceLock;

static THREADS: OnceLock<usize> = OnceLock::new();

/// Sets the process's thread count (`None`: the CPUs it may use), sizes
/// rayon's global pool with it and caps malloc's arenas at it
/// ([`crate::process::memory::cap_malloc_arenas`]). Call once, before any parallel work; a
/// second call keeps the first count.
pub fn configure(threads: Option<usize>) -> Result<usize> {
    let n = threads.unwrap_or_else(available).max(1);
    let n = *THREADS.get_or_init(|| {
        crate::process::memory::cap_malloc_arenas(n);
        n
    });
    // Fails only when the pool was already built (a second call): the
    // pool then has the size of the first.
    let _ = rayon::ThreadPoolBuilder::new().num_threads(n).build_global();
    Ok(n)
}

/// The thread count set by [`configure`], or the CPUs this process may use
/// when nothing was set (library use, tests).
pub fn threads() -> usize {
    THREADS.get().copied().unwrap_or_else(available)
}

/// The CPUs this process may use (at least 1).
fn available() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A tokio runtime with [`threads`] workers, for the DataFusion sessions.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread().worker_threads(threads()).enable_all().build()?)
}

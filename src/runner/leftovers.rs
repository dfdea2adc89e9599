//! What runs that died left in an output folder, removed by the next run.
//!
//! A run stopped by Ctrl-C removes its own temporary files
//! ([`crate::process::interrupt`]); one killed by `kill -9`, the
//! out-of-memory killer or a power cut cannot, and its spill folder and
//! unpublished tables would stay for good: a rerun writes under its own
//! process id and never looks at them. So each run, once it holds a task's
//! lock, removes what processes that no longer run left, by the cleanups
//! of the modules that name those files ([`TEMPORARY_FILES`]).
//!
//! Only a dead process's files are touched: a process of this host that
//! still runs is alive, and one named by a lock file of another host
//! (tasks of a sharded stage sharing the folder over a network file
//! system) is taken to be alive too, since its host cannot be asked.

use std::collections::BTreeSet;
use std::path::Path;

use crate::process::interrupt::Leftovers;
use crate::tables::lock::{host_name, is_running_here, read_holder, LOCK_DIR};

/// Every kind of temporary file a run leaves under an output folder.
pub const TEMPORARY_FILES: [&Leftovers; 2] = [&crate::tables::write::UNPUBLISHED, &crate::tables::sql::SPILLS];

/// Removes from `out` what processes that no longer run left there
/// (see the module documentation for which count as dead). Returns their
/// ids, for the log.
pub fn remove_left_by_dead_runs(out: &Path) -> BTreeSet<u32> {
    let elsewhere = held_on_other_hosts(out);
    let mut dead = BTreeSet::new();
    for kind in TEMPORARY_FILES {
        for pid in (kind.pids)(out) {
            if pid != std::process::id() && !is_running_here(pid) && !elsewhere.contains(&pid) {
                (kind.remove)(out, pid);
                dead.insert(pid);
            }
        }
    }
    if !dead.is_empty() {
        tracing::info!(out = %out.display(), ?dead, "removed what runs that died left (spill and temporary folders)");
    }
    dead
}

/// The processes that lock files under `out` name on other hosts.
fn held_on_other_hosts(out: &Path) -> BTreeSet<u32> {
    let here = host_name();
    let locks = std::fs::read_dir(out.join(LOCK_DIR)).into_iter().flatten().flatten();
    locks.filter_map(|e| read_holder(&e.path())).filter(|h| h.host != here).map(|h| h.pid).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The id of a process that has ended (its parent has reaped it).
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn only_dead_runs_leftovers_are_removed() {
        let out = std::env::temp_dir().join(format!("neardup-leftovers-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        let (dead, elsewhere, alive) = (dead_pid(), dead_pid(), std::process::id());
        for pid in [dead, elsewhere, alive] {
            std::fs::create_dir_all(out.join(format!("_spill/{pid}"))).unwrap();
            std::fs::create_dir_all(out.join(format!(".tmp-tokens-0-of-1-{pid}"))).unwrap();
        }
        std::fs::create_dir_all(out.join("_locks")).unwrap();
        let holder = format!(
            r#"{{"host":"{}-other","pid":{elsewhere},"started_at_unix":0,"task":"stage tokens"}}"#,
            host_name()
        );
        std::fs::write(out.join("_locks/tokens.shard-1-of-2.lock"), holder).unwrap();
        assert_eq!(remove_left_by_dead_runs(&out), BTreeSet::from([dead]));
        for pid in [elsewhere, alive] {
            assert!(out.join(format!("_spill/{pid}")).exists(), "{pid}");
            assert!(out.join(format!(".tmp-tokens-0-of-1-{pid}")).exists(), "{pid}");
        }
        assert!(!out.join(format!("_spill/{dead}")).exists());
        assert!(!out.join(format!(".tmp-tokens-0-of-1-{dead}")).exists());
        std::fs::remove_dir_all(&out).unwrap();
    }
}

//! Ctrl-C and SIGTERM: a clear message, no temporary files left behind,
//! exit code 130.
//!
//! A stage writes its tables into hidden temporary folders and publishes
//! them by renames (`crate::tables::write`), so an interrupted run never leaves half
//! a table that a later stage would read; but without a handler the
//! temporary folders of the interrupted stage stay in the output folder,
//! and nothing says where the run stopped. Both signals are blocked in every
//! thread (the mask is set before the first thread starts, and threads
//! inherit it) and taken by one thread that waits for them with
//! `sigwait(2)`: it runs ordinary code, not a signal handler, so it may log,
//! remove files and exit.
//!
//! The interrupted task's lock file stays (`crate::runner::lock`): naming a process
//! that is gone, it tells `pipeline status` that the stage was interrupted,
//! and the next run takes it over and resumes.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock, RwLockReadGuard};

/// Exit code of an interrupted run (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: u8 = 130;

/// The output folder of the run, whose temporary files an interruption
/// removes.
static OUTPUT: Mutex<Option<PathBuf>> = Mutex::new(None);

/// True once an interruption has begun its cleanup. Creating or publishing
/// a temporary file holds this for reading, and the cleanup holds it for
/// writing: without it a worker thread could create a `.tmp-…` folder
/// between the cleanup's listing of the output folder and the exit, and
/// leave it behind.
static INTERRUPTED: RwLock<bool> = RwLock::new(false);

/// Permission to create or publish a temporary file: held while doing so,
/// it keeps an interruption's cleanup waiting until the step is done; once
/// the cleanup has begun, it is refused.
pub fn unpublished_write() -> anyhow::Result<RwLockReadGuard<'static, bool>> {
    let guard = INTERRUPTED.read().unwrap_or_else(|e| e.into_inner());
    anyhow::ensure!(!*guard, "the run is being interrupted");
    Ok(guard)
}

/// Blocks SIGINT and SIGTERM in this thread and every thread started after
/// it, and starts the thread that waits for them. Call first in `main`,
/// before any other thread exists.
pub fn install() {
    let set = signal_set();
    // SAFETY: `set` is an initialized signal set; no other thread exists
    // yet, so the mask is every later thread's.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    let spawned = std::thread::Builder::new().name("neardup-signals".into()).spawn(move || loop {
        let mut signal = 0;
        // SAFETY: both pointers are valid for the call.
        if unsafe { libc::sigwait(&set, &mut signal) } == 0 {
            on_interrupt(signal);
        }
    });
    if let Err(e) = spawned {
        // Without the thread, the signals would stay blocked for good.
        unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &signal_set(), std::ptr::null_mut()) };
        tracing::warn!("cannot watch for Ctrl-C ({e}); an interrupted run leaves its temporary folders");
    }
}

fn signal_set() -> libc::sigset_t {
    // SAFETY: sigemptyset initializes the set before sigaddset reads it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        set
    }
}

/// Records the output folder a run writes, for the cleanup of an
/// interruption.
pub fn watch_output(out: &Path) {
    *OUTPUT.lock().unwrap_or_else(|e| e.into_inner()) = Some(out.to_path_buf());
}

fn on_interrupt(signal: i32) {
    let name = if signal == libc::SIGTERM { "SIGTERM" } else { "Ctrl-C (SIGINT)" };
    let stage = crate::process::logging::running_stage();
    let out = OUTPUT.lock().unwrap_or_else(|e| e.into_inner()).clone();
    // Held until the exit: no temporary file is created after the cleanup.
    let mut interrupted = INTERRUPTED.write().unwrap_or_else(|e| e.into_inner());
    *interrupted = true;
    if let Some(out) = &out {
        remove_temporary_files(out, std::process::id());
    }
    let message = match (stage, &out) {
        (Some(stage), Some(out)) => format!(
            "interrupted by {name} during stage {stage}: its unfinished tables were removed from {}; \
             run the same command again to resume from stage {stage}",
            out.display()
        ),
        (Some(stage), None) => format!("interrupted by {name} during stage {stage}"),
        (None, _) => format!("interrupted by {name}"),
    };
    eprintln!("error: {message}");
    std::process::exit(EXIT_INTERRUPTED.into());
}

/// Removes what process `pid` was writing under `out` and had not
/// published: its temporary table folders (`.tmp-<table>-…-<pid>`), its
/// temporary files (`.<name>.tmp-<pid>`, here and among the manifests) and
/// its spill folder; a table it had moved aside to replace
/// (`.old-<table>-<pid>`) is put back when the new one is not in place.
pub fn remove_temporary_files(out: &Path, pid: u32) {
    crate::tables::write::remove_unpublished(out, pid);
    crate::tables::write::remove_unpublished(&crate::tables::write::manifest_dir(out), pid);
    let _ = std::fs::remove_dir_all(crate::tables::sql::spill_dir_of(out, pid));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_processs_unpublished_files_are_removed() {
        let out = std::env::temp_dir().join(format!("neardup-interrupt-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        let pid = 4242;
        for dir in [".tmp-tokens-0-of-1-4242", ".tmp-tokens-0-of-1-77", "tokens", ".old-stats-4242", "_manifests"] {
            std::fs::create_dir_all(out.join(dir)).unwrap();
        }
        std::fs::write(out.join("_manifests/.tokens.json.tmp-4242"), "{").unwrap();
        std::fs::write(out.join("_manifests/ingest.json"), "{}").unwrap();
        std::fs::create_dir_all(crate::tables::sql::spill_dir_of(&out, pid)).unwrap();
        remove_temporary_files(&out, pid);
        let mut left: Vec<String> =
            std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        left.sort();
        // Another process's folder stays; the table moved aside is back.
        assert_eq!(left, [".tmp-tokens-0-of-1-77", "_manifests", "_spill", "stats", "tokens"]);
        assert!(!out.join("_manifests/.tokens.json.tmp-4242").exists());
        assert!(out.join("_manifests/ingest.json").exists());
        assert!(!crate::tables::sql::spill_dir_of(&out, pid).exists());
        std::fs::remove_dir_all(&out).unwrap();
    }
}

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
//! This module knows no file names: each kind of temporary file registers
//! its own cleanup ([`Leftovers`]) when it asks to create one
//! ([`unpublished_write`]), and the handler runs the cleanups registered.
//!
//! The interrupted task's lock file stays (`crate::tables::lock`): naming a process
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

/// A kind of temporary file a run leaves in a folder until it publishes
/// it, described by the module that names such files: which processes
/// left some (by the process id in their names) and how to remove what one
/// of them left. The interruption's cleanup runs `remove` for this process;
/// the next run of an output folder runs it for the processes that died
/// (`crate::runner::leftovers`).
pub struct Leftovers {
    /// The ids of the processes that left files of this kind in a folder.
    pub pids: fn(&Path) -> Vec<u32>,
    /// Removes what process `pid` left in a folder (or puts back what it
    /// had moved aside).
    pub remove: fn(&Path, u32),
}

/// The kinds of temporary file this process has created, whose cleanups an
/// interruption runs.
static REGISTERED: Mutex<Vec<&'static Leftovers>> = Mutex::new(Vec::new());

/// Permission to create or publish a temporary file of kind `kind`: held
/// while doing so, it keeps an interruption's cleanup waiting until the
/// step is done; once the cleanup has begun, it is refused. The kind's
/// cleanup is registered first, so an interruption removes the file.
pub fn unpublished_write(kind: &'static Leftovers) -> anyhow::Result<RwLockReadGuard<'static, bool>> {
    let mut registered = REGISTERED.lock().unwrap_or_else(|e| e.into_inner());
    if !registered.iter().any(|k| std::ptr::eq(*k, kind)) {
        registered.push(kind);
    }
    drop(registered);
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
    crate::process::output::eprint_line(&format!("error: {message}"));
    std::process::exit(EXIT_INTERRUPTED.into());
}

/// Removes what process `pid` was writing under `out` and had not
/// published, by every cleanup registered ([`unpublished_write`]).
fn remove_temporary_files(out: &Path, pid: u32) {
    let registered = REGISTERED.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for kind in registered {
        (kind.remove)(out, pid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A made-up kind of temporary file: `<pid>.part` files.
    fn parts_of(dir: &Path) -> Vec<u32> {
        let names = std::fs::read_dir(dir).into_iter().flatten().flatten();
        names.filter_map(|e| e.file_name().to_str()?.strip_suffix(".part")?.parse().ok()).collect()
    }

    fn remove_part(dir: &Path, pid: u32) {
        let _ = std::fs::remove_file(dir.join(format!("{pid}.part")));
    }

    static PARTS: Leftovers = Leftovers { pids: parts_of, remove: remove_part };

    #[test]
    fn the_cleanup_runs_what_the_writes_registered_once_each() {
        let out = std::env::temp_dir().join(format!("neardup-interrupt-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out).unwrap();
        for pid in [4242, 77] {
            std::fs::write(out.join(format!("{pid}.part")), "").unwrap();
        }
        let mut pids = parts_of(&out);
        pids.sort();
        assert_eq!(pids, [77, 4242]);
        remove_temporary_files(&out, 4242);
        // Not registered yet: nothing is removed.
        assert!(out.join("4242.part").exists());
        for _ in 0..2 {
            drop(unpublished_write(&PARTS).unwrap());
        }
        let registered = REGISTERED.lock().unwrap().iter().filter(|k| std::ptr::eq(**k, &PARTS)).count();
        assert_eq!(registered, 1);
        remove_temporary_files(&out, 4242);
        assert_eq!(parts_of(&out), [77]);
        std::fs::remove_dir_all(&out).unwrap();
    }
}

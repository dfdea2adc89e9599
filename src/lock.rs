//! One run per task: a lock file for each task of a stage (and for the
//! history), so two runs never write the same tables at once.
//!
//! Two runs of one stage on one output folder would both do all the work
//! and race their renames; a nightly scheduler that starts a run while the
//! last one still runs must be told, not served by luck. Each task of a
//! stage (`--shard I/N`, or the whole stage) has its own lock file,
//! `DIR/_locks/<stage>[.shard-I-of-N].lock`, so the tasks of a sharded
//! stage still run side by side.
//!
//! The lock is an advisory `flock(2)` on that file: the kernel releases it
//! when its process ends, however it ends (Ctrl-C, `kill -9`, a crash), so
//! a stale lock is taken over by the next run without any timeout. The
//! file holds who took it (host, pid, start time) for the message of a run
//! that finds it taken; it is removed when its task ends normally, so a
//! file left behind by a process that is gone tells `pipeline status` that
//! the task was interrupted ([`interrupted_holder`]).

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use crate::shard::Shard;

/// Folder of the lock files inside an output folder.
pub const LOCK_DIR: &str = "_locks";

/// Exit code of a run that found its task locked by another run (and was
/// not told to `--wait`).
pub const EXIT_BUSY: u8 = 4;

/// Who holds a lock, as its file records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Holder {
    pub host: String,
    pub pid: u32,
    pub started_at_unix: u64,
    /// What it locked (`stage candidates`, `history`).
    pub task: String,
}

impl Holder {
    fn this_process(task: &str) -> Holder {
        Holder {
            host: host_name(),
            pid: std::process::id(),
            started_at_unix: crate::runner::now_unix(),
            task: task.to_string(),
        }
    }

    /// True when the holder is a process of this host that no longer runs.
    /// (A holder on another host sharing the folder cannot be checked.)
    pub fn is_gone(&self) -> bool {
        self.host == host_name() && !Path::new(&format!("/proc/{}", self.pid)).exists()
    }
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pid {} on {}, started {} UTC", self.pid, self.host, crate::logging::utc_text(self.started_at_unix))
    }
}

/// Another run holds the lock of a task: exit code [`EXIT_BUSY`].
#[derive(Debug)]
pub struct Busy {
    pub task: String,
    pub path: PathBuf,
    pub holder: Option<Holder>,
}

impl std::fmt::Display for Busy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let who = match &self.holder {
            Some(h) => format!("another run ({h})"),
            None => "another run".to_string(),
        };
        write!(
            f,
            "{} is running in {who}: lock {}; wait for it, or rerun with --wait to queue behind it",
            self.task,
            self.path.display()
        )
    }
}

impl std::error::Error for Busy {}

/// A held lock; released (and its file removed) when dropped.
#[derive(Debug)]
pub struct TaskLock {
    file: File,
    path: PathBuf,
}

impl Drop for TaskLock {
    fn drop(&mut self) {
        // Removed while still locked, so that no run can lock the old file
        // after it is gone (see `acquire`'s check of the inode).
        let _ = std::fs::remove_file(&self.path);
        unsafe { libc::flock(self.file.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// The lock file of task `shard` of `stage` under `out`.
pub fn stage_lock_path(out: &Path, stage: &str, shard: Shard) -> PathBuf {
    let name = crate::runner::manifest_file_name(stage, shard);
    out.join(LOCK_DIR).join(format!("{}.lock", name.trim_end_matches(".json")))
}

/// Takes the lock file `path` for `task`: at once, or, with `wait`, after
/// the run holding it ends. Without `wait`, a held lock is a [`Busy`] error.
pub fn acquire(path: &Path, task: &str, wait: bool) -> Result<TaskLock> {
    let dir = path.parent().context("a lock file has a folder")?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut waited = false;
    loop {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .with_context(|| format!("cannot open lock file {}", path.display()))?;
        if !try_flock(&file, false)? {
            if !wait {
                return Err(Busy { task: task.to_string(), path: path.to_path_buf(), holder: read_holder(path) }.into());
            }
            if !waited {
                let holder = read_holder(path).map(|h| h.to_string()).unwrap_or_else(|| "another run".into());
                tracing::info!(lock = %path.display(), "{task} is running in {holder}; waiting for it");
                waited = true;
            }
            try_flock(&file, true)?;
        }
        // The holder before us may have removed the file between our open
        // and our lock: then we hold a lock on a file no one else sees, and
        // must start again on the path's current file.
        let same = std::fs::metadata(path).ok().is_some_and(|m| m.ino() == file.metadata().map_or(0, |f| f.ino()));
        if !same {
            continue;
        }
        let mut lock = TaskLock { file, path: path.to_path_buf() };
        let holder = serde_json::to_string(&Holder::this_process(task))?;
        lock.file.set_len(0)?;
        lock.file.write_all(holder.as_bytes()).with_context(|| format!("cannot write lock file {}", path.display()))?;
        return Ok(lock);
    }
}

/// `flock(2)` on `file`, exclusive: blocking or not. False when it would
/// block.
fn try_flock(file: &File, block: bool) -> Result<bool> {
    let mode = if block { libc::LOCK_EX } else { libc::LOCK_EX | libc::LOCK_NB };
    loop {
        if unsafe { libc::flock(file.as_raw_fd(), mode) } == 0 {
            return Ok(true);
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EWOULDBLOCK) if !block => return Ok(false),
            Some(libc::EINTR) => continue,
            _ => return Err(e).context("cannot lock"),
        }
    }
}

/// Who the lock file `path` says holds it, if it says.
pub fn read_holder(path: &Path) -> Option<Holder> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// The holder of a lock file left behind by a process that is gone: its
/// task was interrupted (Ctrl-C, `kill -9`, a crash) and never finished.
pub fn interrupted_holder(path: &Path) -> Option<Holder> {
    read_holder(path).filter(Holder::is_gone)
}

/// The host's name (`/proc/sys/kernel/hostname`, else `$HOSTNAME`).
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("neardup-lock-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_held_lock_refuses_a_second_taker_and_names_its_holder() {
        let dir = scratch("busy");
        let path = stage_lock_path(&dir, "candidates", Shard::WHOLE);
        let first = acquire(&path, "stage candidates", false).unwrap();
        let refused = acquire(&path, "stage candidates", false).unwrap_err();
        let busy = refused.downcast_ref::<Busy>().expect("a Busy error");
        let holder = busy.holder.as_ref().expect("the holder is named");
        assert_eq!((holder.pid, holder.task.as_str()), (std::process::id(), "stage candidates"));
        assert!(refused.to_string().contains(&format!("pid {}", std::process::id())), "{refused}");
        // Other tasks of the stage have locks of their own.
        let shard = stage_lock_path(&dir, "candidates", "1/3".parse().unwrap());
        assert_ne!(shard, path);
        drop(acquire(&shard, "stage candidates 1/3", false).unwrap());
        drop(first);
        assert!(!path.exists(), "a released lock leaves no file");
        drop(acquire(&path, "stage candidates", false).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_waiting_taker_gets_the_lock_when_it_is_released() {
        let dir = scratch("wait");
        let path = dir.join("_locks/verify.lock");
        let first = acquire(&path, "stage verify", false).unwrap();
        let waiter = {
            let path = path.clone();
            std::thread::spawn(move || acquire(&path, "stage verify", true).map(|_| ()))
        };
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(!waiter.is_finished(), "the waiter waits while the lock is held");
        drop(first);
        waiter.join().unwrap().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_lock_file_of_a_process_that_is_gone_is_stale() {
        let dir = scratch("stale");
        let path = dir.join("_locks/tokens.lock");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let gone = Holder { host: host_name(), pid: u32::MAX - 1, started_at_unix: 0, task: "stage tokens".into() };
        std::fs::write(&path, serde_json::to_string(&gone).unwrap()).unwrap();
        assert_eq!(interrupted_holder(&path), Some(gone));
        // Nobody holds its flock: the next run takes it over.
        let taken = acquire(&path, "stage tokens", false).unwrap();
        assert_eq!(read_holder(&path).unwrap().pid, std::process::id());
        assert_eq!(interrupted_holder(&path), None);
        drop(taken);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

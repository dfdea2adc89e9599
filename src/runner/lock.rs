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
//!
//! Stage locks alone would let a queued run (`--wait`) slip in between
//! two stages of the run it waits for, take the next stage's lock, and
//! make that run fail. So a run first takes the output folder's run lock,
//! `DIR/_locks/run` ([`acquire_run`]), and holds it to its end: exclusive
//! for an unsharded run, shared for a task of a sharded stage (the tasks of
//! a stage run side by side; a whole run waits for all of them, and they
//! for it). `--wait` queues on this lock, before any stage lock.
//!
//! An output folder in an object store has no flock: its tasks lock an
//! object, `_locks/<task>.lock`, created by a conditional PUT (atomic in the
//! store) and refreshed by a heartbeat every minute ([`acquire_in_store`]).
//! A lock object whose heartbeat is older than
//! [`STORE_LOCK_TIMEOUT_SECONDS`] (its process died without removing it)
//! is stale and taken over.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use crate::tables::shard::Shard;

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
    /// The last heartbeat of a lock object in a store (Unix seconds; 0 for
    /// a lock file, which needs none).
    #[serde(default)]
    pub heartbeat_unix: u64,
}

impl Holder {
    fn this_process(task: &str) -> Holder {
        Holder {
            host: host_name(),
            pid: std::process::id(),
            started_at_unix: crate::process::logging::now_unix(),
            task: task.to_string(),
            heartbeat_unix: 0,
        }
    }

    /// True when the holder is a process of this host that no longer runs.
    /// (A holder on another host sharing the folder cannot be checked.)
    pub fn is_gone(&self) -> bool {
        self.host == host_name() && !is_running_here(self.pid)
    }
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "pid {} on {}, started {} UTC",
            self.pid,
            self.host,
            crate::process::logging::utc_text(self.started_at_unix)
        )
    }
}

/// Another run holds the lock of a task: exit code [`EXIT_BUSY`].
#[derive(Debug)]
pub struct Busy {
    pub task: String,
    /// The lock file or object.
    pub lock: String,
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
            self.task, self.lock
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

/// The run lock's file in an output folder's lock folder: no `.lock`
/// suffix, since it is no stage's.
pub const RUN_LOCK_FILE: &str = "run";

/// A run's hold on its output folder ([`acquire_run`]); released when
/// dropped. Its file stays (a shared holder cannot know whether others
/// still hold it), emptied by the exclusive holder that wrote it.
#[derive(Debug)]
pub struct RunLock {
    file: File,
    exclusive: bool,
}

impl Drop for RunLock {
    fn drop(&mut self) {
        if self.exclusive {
            let _ = self.file.set_len(0);
        }
        unsafe { libc::flock(self.file.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// Takes the run lock of the output folder `out` for the whole of a run:
/// exclusive for an unsharded run, shared for task `shard` of a sharded
/// stage. With `wait`, queues until it is free; without, a held lock is a
/// [`Busy`] error naming the exclusive holder, if one holds it.
pub fn acquire_run(out: &Path, shard: Shard, wait: bool) -> Result<RunLock> {
    let dir = out.join(LOCK_DIR);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join(RUN_LOCK_FILE);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .with_context(|| format!("cannot open lock file {}", path.display()))?;
    let exclusive = shard.is_whole();
    let task = format!("a run on {}", out.display());
    if !flock(&file, exclusive, false)? {
        // Only an exclusive holder writes its name; what a gone one wrote is
        // no one's.
        let holder = read_holder(&path).filter(|h| !h.is_gone());
        if !wait {
            return Err(Busy { task, lock: path.display().to_string(), holder }.into());
        }
        let who = holder.map(|h| h.to_string()).unwrap_or_else(|| "another run".into());
        tracing::info!(lock = %path.display(), "{task} is running in {who}; waiting for it");
        flock(&file, exclusive, true)?;
    }
    let mut lock = RunLock { file, exclusive };
    if exclusive {
        let holder = serde_json::to_string(&Holder::this_process(&task))?;
        lock.file.set_len(0)?;
        lock.file.write_all(holder.as_bytes()).with_context(|| format!("cannot write lock file {}", path.display()))?;
    }
    Ok(lock)
}

/// The lock of task `shard` of `stage`, relative to its output folder or
/// store: `_locks/<stage>[.shard-I-of-N].lock`, named like its manifest.
pub fn stage_lock_name(stage: &str, shard: Shard) -> String {
    let name = crate::tables::shard::manifest_file_name(stage, shard);
    format!("{LOCK_DIR}/{}.lock", name.trim_end_matches(".json"))
}

/// The lock file of task `shard` of `stage` under `out`.
pub fn stage_lock_path(out: &Path, stage: &str, shard: Shard) -> PathBuf {
    out.join(stage_lock_name(stage, shard))
}

/// The task of `stage` whose lock file is `file_name`, if it is one.
pub fn stage_lock_task(file_name: &str, stage: &str) -> Option<Shard> {
    crate::tables::shard::manifest_task(&format!("{}.json", file_name.strip_suffix(".lock")?), stage)
}

/// What a lock of task `shard` of `stage` names in messages: `stage
/// verify`, `stage verify task 1/4`.
pub fn stage_task_name(stage: &str, shard: Shard) -> String {
    if shard.is_whole() {
        format!("stage {stage}")
    } else {
        format!("stage {stage} task {shard}")
    }
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
        if !flock(&file, true, false)? {
            if !wait {
                let lock = path.display().to_string();
                return Err(Busy { task: task.to_string(), lock, holder: read_holder(path) }.into());
            }
            if !waited {
                let holder = read_holder(path).map(|h| h.to_string()).unwrap_or_else(|| "another run".into());
                tracing::info!(lock = %path.display(), "{task} is running in {holder}; waiting for it");
                waited = true;
            }
            flock(&file, true, true)?;
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

/// How long a lock object in a store stays valid after its last heartbeat:
/// ten heartbeats. A run whose process died leaves its lock object behind;
/// the next run takes it over once it is this old.
pub const STORE_LOCK_TIMEOUT_SECONDS: u64 = 600;

/// How often a held lock object's heartbeat is written.
const STORE_HEARTBEAT_SECONDS: u64 = 60;

/// A held lock object in a store: its heartbeat runs until it is dropped,
/// which removes the object.
#[derive(Debug)]
pub struct StoreLock {
    location: crate::storage::location::Location,
    stop: std::sync::mpsc::Sender<()>,
    heartbeat: Option<std::thread::JoinHandle<()>>,
}

impl Drop for StoreLock {
    fn drop(&mut self) {
        let _ = self.stop.send(());
        if let Some(h) = self.heartbeat.take() {
            let _ = h.join();
        }
        if let Err(e) = self.location.delete() {
            tracing::warn!("cannot remove the lock {}: {e:#}", self.location.url);
        }
    }
}

/// Takes the lock object `location` for `task`: at once, or, with `wait`,
/// once the run holding it ends (polled every 5 seconds). A lock object
/// whose heartbeat is older than [`STORE_LOCK_TIMEOUT_SECONDS`], or whose
/// holder is a process of this host that is gone, is stale: it is removed
/// and taken. (Two runs taking over one stale lock in the same instant may
/// both succeed; that takes a crash and two restarts within a second.)
pub fn acquire_in_store(location: crate::storage::location::Location, task: &str, wait: bool) -> Result<StoreLock> {
    let mut waited = false;
    loop {
        let mut holder = Holder::this_process(task);
        holder.heartbeat_unix = crate::process::logging::now_unix();
        if location.create(bytes::Bytes::from(serde_json::to_vec(&holder)?))? {
            let (stop, stopped) = std::sync::mpsc::channel::<()>();
            let beat = location.clone();
            let heartbeat = std::thread::Builder::new().name("neardup-lock".into()).spawn(move || {
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(std::time::Duration::from_secs(STORE_HEARTBEAT_SECONDS))
                {
                    holder.heartbeat_unix = crate::process::logging::now_unix();
                    if let Err(e) =
                        serde_json::to_vec(&holder).map_err(anyhow::Error::from).and_then(|b| beat.put(b.into()))
                    {
                        tracing::warn!("cannot refresh the lock {}: {e:#}", beat.url);
                    }
                }
            })?;
            return Ok(StoreLock { location, stop, heartbeat: Some(heartbeat) });
        }
        let current: Option<Holder> = location.get().ok().and_then(|b| serde_json::from_slice(&b).ok());
        let age = current.as_ref().map(|h| crate::process::logging::now_unix().saturating_sub(h.heartbeat_unix));
        let stale = age.is_none_or(|a| a > STORE_LOCK_TIMEOUT_SECONDS) || current.as_ref().is_some_and(Holder::is_gone);
        if stale {
            tracing::warn!(lock = %location.url, "taking over a stale lock ({})", current.map_or("unreadable".into(), |h| h.to_string()));
            location.delete()?;
            continue;
        }
        if !wait {
            return Err(Busy { task: task.to_string(), lock: location.url.clone(), holder: current }.into());
        }
        if !waited {
            let who = current.map_or("another run".into(), |h| h.to_string());
            tracing::info!(lock = %location.url, "{task} is running in {who}; waiting for it");
            waited = true;
        }
        std::thread::sleep(std::time::Duration::from_secs(5));
    }
}

/// `flock(2)` on `file`, exclusive or shared, blocking or not. False when
/// it would block.
fn flock(file: &File, exclusive: bool, block: bool) -> Result<bool> {
    let kind = if exclusive { libc::LOCK_EX } else { libc::LOCK_SH };
    let mode = if block { kind } else { kind | libc::LOCK_NB };
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

/// True when process `pid` of this host runs (its `/proc` entry exists).
pub fn is_running_here(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
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
    fn the_run_lock_is_one_whole_run_or_any_number_of_tasks() {
        let dir = scratch("run");
        let (whole, task0, task1) = (Shard::WHOLE, "0/2".parse().unwrap(), "1/2".parse().unwrap());
        let first = acquire_run(&dir, whole, false).unwrap();
        let busy = acquire_run(&dir, whole, false).unwrap_err();
        let busy = busy.downcast_ref::<Busy>().expect("a Busy error");
        assert_eq!(busy.holder.as_ref().map(|h| h.pid), Some(std::process::id()));
        assert!(acquire_run(&dir, task0, false).is_err(), "a task waits for a whole run");
        drop(first);
        let a = acquire_run(&dir, task0, false).unwrap();
        let b = acquire_run(&dir, task1, false).unwrap();
        assert!(acquire_run(&dir, whole, false).is_err(), "a whole run waits for the tasks");
        drop(a);
        assert!(acquire_run(&dir, whole, false).is_err(), "and for the last of them");
        let waiter = {
            let dir = dir.clone();
            std::thread::spawn(move || acquire_run(&dir, Shard::WHOLE, true).map(drop))
        };
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(!waiter.is_finished(), "a queued run waits while a task holds the folder");
        drop(b);
        waiter.join().unwrap().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_lock_object_refuses_a_second_taker_until_released_or_stale() {
        let dir = scratch("store");
        let url = format!("file://{}", dir.display());
        let location = crate::storage::location::Location::parse(&url).unwrap().child("_locks/verify.lock");
        let held = acquire_in_store(location.clone(), "stage verify", false).unwrap();
        let refused = acquire_in_store(location.clone(), "stage verify", false).unwrap_err();
        let busy = refused.downcast_ref::<Busy>().expect("a Busy error");
        assert_eq!(busy.holder.as_ref().map(|h| h.pid), Some(std::process::id()));
        drop(held);
        assert!(location.head().unwrap().is_none(), "a released lock leaves no object");
        // A lock object whose heartbeat is too old is taken over.
        let old = Holder {
            host: "elsewhere".into(),
            pid: 1,
            started_at_unix: 0,
            task: "stage verify".into(),
            heartbeat_unix: crate::process::logging::now_unix() - STORE_LOCK_TIMEOUT_SECONDS - 1,
        };
        location.put(serde_json::to_vec(&old).unwrap().into()).unwrap();
        drop(acquire_in_store(location.clone(), "stage verify", false).unwrap());
        // A fresh one of another host is not.
        let fresh = Holder { heartbeat_unix: crate::process::logging::now_unix(), ..old };
        location.put(serde_json::to_vec(&fresh).unwrap().into()).unwrap();
        assert!(acquire_in_store(location, "stage verify", false).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_lock_file_of_a_process_that_is_gone_is_stale() {
        let dir = scratch("stale");
        let path = dir.join("_locks/tokens.lock");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let gone = Holder {
            host: host_name(),
            pid: u32::MAX - 1,
            started_at_unix: 0,
            task: "stage tokens".into(),
            heartbeat_unix: 0,
        };
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

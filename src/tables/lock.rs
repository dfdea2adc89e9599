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
//! `pipeline export` must never read the tables of a run in progress, and
//! the shared run lock of a sharded stage's tasks cannot keep it out: a
//! shared lock taken by an export would go with them. So an export holds
//! another file, `DIR/_locks/export`, shared ([`acquire_export`]), and
//! each side, once it holds its own file, checks that no one holds the
//! other's: a run that finds an export reading waits for it (`--wait`) or
//! stops with exit 4, and so does an export that finds a run or a task
//! holding `_locks/run`. Whichever of two comes second sees the first, as
//! each takes its own file before it looks. The look is an exclusive
//! `flock` of the other file, let go at once, taken under a third file,
//! `DIR/_locks/check`, held exclusively for that moment only, so that two
//! looks at one file never see each other as holders (a run tries the run
//! lock under it too, so that a look never passes for a run). Exports run side by
//! side, with each other and with `query`, `explain` and `status`, which
//! take no lock. An export in a folder it cannot write (a read-only disk,
//! another user's run) uses the lock files that are there, read-only
//! (`flock` needs no write access), and goes on without those that are
//! not: no run of its user can write there either.
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

    /// True when the holder is a process of this host that is ending: a
    /// run killed (`kill -9`, the OOM killer) keeps its locks until the
    /// kernel has closed its files, which takes a moment for a large one.
    pub fn is_ending(&self) -> bool {
        self.host == host_name() && is_ending_here(self.pid)
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

/// Another run (or an export) holds the lock of a task: exit code
/// [`EXIT_BUSY`].
#[derive(Debug)]
pub struct Busy {
    pub task: String,
    /// The lock file or object.
    pub lock: String,
    pub holder: Option<Holder>,
    /// What holds it: `run` or `export`.
    pub by: &'static str,
}

impl std::fmt::Display for Busy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let by = self.by;
        let who = match &self.holder {
            Some(h) if h.is_ending() => format!("another {by} ({h}), which is ending but did not let go of it"),
            Some(h) => format!("another {by} ({h})"),
            None => format!("another {by}"),
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
    // Under the check lock: an export's look at the run lock holds it for
    // a moment, and must not pass for a run.
    let take = || -> Result<bool> {
        let _check = hold_check(&dir)?;
        flock(&file, exclusive, false)
    };
    let taken = take()? || (!wait && taken_once_ending(read_holder(&path).as_ref(), take)?);
    if !taken {
        // Only an exclusive holder writes its name; what a gone one wrote is
        // no one's.
        let holder = read_holder(&path).filter(|h| !h.is_gone());
        if !wait {
            return Err(Busy { task, lock: path.display().to_string(), holder, by: "run" }.into());
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
    // Held, the run lock keeps exports out from now on; one already
    // reading is waited for, with the run lock held, so that no other
    // export slips in meanwhile.
    let exports = dir.join(EXPORT_LOCK_FILE);
    while others_hold(&dir, EXPORT_LOCK_FILE)? {
        let export = format!("an export of {}", out.display());
        let holder = read_holder(&exports).filter(|h| !h.is_gone());
        if !wait {
            return Err(Busy { task: export, lock: exports.display().to_string(), holder, by: "export" }.into());
        }
        tracing::info!(lock = %exports.display(), "{export} is reading it; waiting for it");
        let file = open_lock_file(&exports)?.with_context(|| format!("cannot open lock file {}", exports.display()))?;
        flock(&file, true, true)?;
    }
    Ok(lock)
}

/// The lock file exports hold shared while they read an output folder
/// ([`acquire_export`]); a run looks at it once it holds the run lock.
pub const EXPORT_LOCK_FILE: &str = "export";

/// The lock file held exclusively while a run or an export looks whether
/// the other kind holds the folder (see the module doc).
const CHECK_LOCK_FILE: &str = "check";

/// An export's hold on an output folder ([`acquire_export`]); released
/// when dropped. Empty where the export could not open a lock file of its
/// own (a folder it cannot write).
#[derive(Debug)]
pub struct ExportLock {
    _file: Option<File>,
}

/// Takes the output folder `out` for an export, which must not read the
/// tables of a run in progress, whole or sharded (see the module doc):
/// with `wait`, waits for the runs holding it to end; without, a run
/// holding it is a [`Busy`] error naming it (the whole run, or a task of a
/// sharded stage).
pub fn acquire_export(out: &Path, wait: bool) -> Result<ExportLock> {
    let dir = out.join(LOCK_DIR);
    match std::fs::create_dir_all(&dir) {
        Err(e) if !cannot_write(&e) => return Err(e).with_context(|| format!("cannot create {}", dir.display())),
        _ => {}
    }
    let runs = dir.join(RUN_LOCK_FILE);
    let export = dir.join(EXPORT_LOCK_FILE);
    loop {
        let file = open_lock_file(&export)?;
        if let Some(file) = &file {
            flock(file, false, true)?;
        }
        if !others_hold(&dir, RUN_LOCK_FILE)? {
            match &file {
                // Who reads, for the message of a run it keeps waiting: the
                // last export to start (a file opened read-only takes none).
                Some(named) => {
                    let holder =
                        serde_json::to_string(&Holder::this_process(&format!("an export of {}", out.display())))?;
                    let mut writer: &File = named;
                    let _ = named.set_len(0).and_then(|()| writer.write_all(holder.as_bytes()));
                }
                None => tracing::info!(
                    lock = %export.display(),
                    "cannot write the lock folder: reading without a lock of its own"
                ),
            }
            return Ok(ExportLock { _file: file });
        }
        drop(file);
        let task = format!("a run on {}", out.display());
        if !wait {
            let lock = runs.display().to_string();
            return Err(Busy { task, lock, holder: running_holder(&dir), by: "run" }.into());
        }
        let who = running_holder(&dir).map_or("another run".into(), |h| format!("another run ({h})"));
        tracing::info!(lock = %runs.display(), "{task} is running in {who}; waiting for it");
        if let Some(file) = open_lock_file(&runs)? {
            flock(&file, true, true)?;
        }
    }
}

/// True when a process other than this look holds the lock file `name` of
/// the lock folder `dir`, shared or exclusive: an exclusive `flock` of it
/// is refused (and let go at once when taken). Looked at under
/// [`CHECK_LOCK_FILE`]; a file that is not there, and cannot be made, is
/// held by no one.
fn others_hold(dir: &Path, name: &str) -> Result<bool> {
    let _check = hold_check(dir)?;
    let Some(file) = open_lock_file(&dir.join(name))? else { return Ok(false) };
    // Dropping `file` lets the look's lock go, and `_check` the check's.
    Ok(!flock(&file, true, false)?)
}

/// Holds [`CHECK_LOCK_FILE`] of the lock folder `dir` until dropped (not
/// at all where it cannot be opened: a folder no run can write).
fn hold_check(dir: &Path) -> Result<Option<File>> {
    let check = open_lock_file(&dir.join(CHECK_LOCK_FILE))?;
    if let Some(check) = &check {
        flock(check, true, true)?;
    }
    Ok(check)
}

/// Opens the lock file `path`, made if missing; in a folder this process
/// cannot write (a read-only disk, another user's folder), the file as it
/// is, read-only (`flock(2)` needs no more), or `None` when there is none.
fn open_lock_file(path: &Path) -> Result<Option<File>> {
    let open = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path);
    match open {
        Ok(file) => Ok(Some(file)),
        Err(e) if cannot_write(&e) => match File::open(path) {
            Ok(file) => Ok(Some(file)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot open lock file {}", path.display())),
        },
        Err(e) => Err(e).with_context(|| format!("cannot open lock file {}", path.display())),
    }
}

/// True for the errors of writing where this process may not: a read-only
/// disk, or a folder or file without write permission for it.
fn cannot_write(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EROFS | libc::EACCES | libc::EPERM))
}

/// Who runs in the output folder whose lock folder is `dir`, as far as
/// the lock files say: the whole run's holder, else the first live holder
/// of a stage's task lock (the tasks of a sharded stage hold the run lock
/// shared and write no name into it).
fn running_holder(dir: &Path) -> Option<Holder> {
    let alive = |path: &Path| read_holder(path).filter(|h| !h.is_gone());
    alive(&dir.join(RUN_LOCK_FILE)).or_else(|| {
        let mut stage_locks: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "lock"))
            .collect();
        stage_locks.sort();
        stage_locks.iter().find_map(|p| alive(p))
    })
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
        let take = || flock(&file, true, false);
        let taken = take()? || (!wait && taken_once_ending(read_holder(path).as_ref(), take)?);
        if !taken {
            if !wait {
                let lock = path.display().to_string();
                return Err(Busy { task: task.to_string(), lock, holder: read_holder(path), by: "run" }.into());
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
        if is_stale(current.as_ref()) {
            tracing::warn!(lock = %location.url, "taking over a stale lock ({})", current.map_or("unreadable".into(), |h| h.to_string()));
            location.delete()?;
            continue;
        }
        if !wait {
            return Err(Busy { task: task.to_string(), lock: location.url.clone(), holder: current, by: "run" }.into());
        }
        if !waited {
            let who = current.map_or("another run".into(), |h| h.to_string());
            tracing::info!(lock = %location.url, "{task} is running in {who}; waiting for it");
            waited = true;
        }
        std::thread::sleep(std::time::Duration::from_secs(5));
    }
}

/// True when a lock object whose holder is `holder` (`None`: unreadable)
/// holds nothing: its heartbeat is older than
/// [`STORE_LOCK_TIMEOUT_SECONDS`], or its holder is a process of this host
/// that is gone.
fn is_stale(holder: Option<&Holder>) -> bool {
    let age = holder.map(|h| crate::process::logging::now_unix().saturating_sub(h.heartbeat_unix));
    age.is_none_or(|a| a > STORE_LOCK_TIMEOUT_SECONDS) || holder.is_some_and(Holder::is_gone)
}

/// For an export of an output folder in an object store: until no run
/// holds a lock object under `locks` (the folder's `_locks/`: a whole
/// run's, or a task's of a sharded stage; stale ones count as none), waits
/// with `wait` (polled every 5 seconds), or is a [`Busy`] error naming it.
/// A store has no shared locks, so nothing keeps a run from starting after
/// this look: the export looks again once it has pulled the tables into
/// its cache, which it then reads, whatever the store holds next.
pub fn wait_for_store_runs(locks: &crate::storage::location::Location, task: &str, wait: bool) -> Result<()> {
    let mut waited = false;
    loop {
        let mut held = None;
        for meta in locks.list()? {
            let Some(name) = crate::storage::location::relative_path(&locks.path, &meta.location) else { continue };
            let lock = locks.child(&name);
            let holder: Option<Holder> = lock.get().ok().and_then(|b| serde_json::from_slice(&b).ok());
            if !is_stale(holder.as_ref()) {
                held = Some((lock.url, holder));
                break;
            }
        }
        let Some((lock, holder)) = held else { return Ok(()) };
        if !wait {
            return Err(Busy { task: task.to_string(), lock, holder, by: "run" }.into());
        }
        if !waited {
            let who = holder.map_or("another run".into(), |h| format!("another run ({h})"));
            tracing::info!(lock = %lock, "{task} is running in {who}; waiting for it");
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

/// How long a run that finds its lock held by an ending process
/// ([`Holder::is_ending`]) waits for the kernel to free it, without
/// `--wait`: a killed run's rerun then goes ahead instead of exiting 4
/// ("running in another run") for a run that is already over.
const ENDING_HOLDER_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// Tries `take` again and again for [`ENDING_HOLDER_GRACE`] when `holder`
/// is ending; true once it took the lock. False at once for a holder that
/// is alive (or unknown): that one is [`Busy`].
fn taken_once_ending(holder: Option<&Holder>, mut take: impl FnMut() -> Result<bool>) -> Result<bool> {
    let Some(holder) = holder.filter(|h| h.is_ending()) else { return Ok(false) };
    tracing::info!("the lock's holder ({holder}) is ending; waiting for it to let go");
    let start = std::time::Instant::now();
    while start.elapsed() < ENDING_HOLDER_GRACE {
        if take()? {
            return Ok(true);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Ok(false)
}

/// True when process `pid` of this host is ending: gone, a zombie, or
/// flagged as exiting (`PF_EXITING` in `/proc/<pid>/stat`, set from the
/// moment a killed process starts closing its files).
fn is_ending_here(pid: u32) -> bool {
    const PF_EXITING: u64 = 0x4;
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return true };
    // The command name (field 2) is in parentheses and may hold spaces.
    let Some((_, rest)) = stat.rsplit_once(')') else { return false };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first().copied().unwrap_or_default();
    let flags: u64 = fields.get(6).and_then(|f| f.parse().ok()).unwrap_or(0);
    matches!(state, "Z" | "X" | "x") || flags & PF_EXITING != 0
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

    /// A child that has exited and is not reaped yet: a process that is
    /// ending, as a killed run is while the kernel closes its files.
    fn zombie() -> std::process::Child {
        let child = std::process::Command::new("true").spawn().unwrap();
        let stat = format!("/proc/{}/stat", child.id());
        let start = std::time::Instant::now();
        while !std::fs::read_to_string(&stat).unwrap_or_default().contains(") Z") {
            assert!(start.elapsed().as_secs() < 10, "the child did not exit");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        child
    }

    /// Right after a `kill -9`, the killed run's lock may still be held
    /// for a moment: a rerun waits for it instead of exiting 4 (`running in
    /// another run`), and a holder that does not let go is named as ending.
    #[test]
    fn a_rerun_waits_for_a_holder_that_is_ending() {
        let mut ending = zombie();
        let mut alive = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        assert!(!is_ending_here(alive.id()) && is_ending_here(ending.id()) && is_ending_here(u32::MAX));
        let holder = |pid: u32| Holder { pid, ..Holder::this_process("a run") };
        assert!(holder(ending.id()).is_ending() && !holder(alive.id()).is_ending());

        let dir = scratch("ending");
        let held = acquire_run(&dir, Shard::WHOLE, false).unwrap();
        let path = dir.join(LOCK_DIR).join(RUN_LOCK_FILE);
        // The held lock names a holder that is alive: refused at once.
        std::fs::write(&path, serde_json::to_string(&holder(alive.id())).unwrap()).unwrap();
        let start = std::time::Instant::now();
        let refused = acquire_run(&dir, Shard::WHOLE, false).unwrap_err();
        assert!(refused.downcast_ref::<Busy>().is_some() && start.elapsed().as_secs() < 2, "{refused}");
        // It names one that is ending, which lets go a moment later: taken.
        std::fs::write(&path, serde_json::to_string(&holder(ending.id())).unwrap()).unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            drop(held);
        });
        acquire_run(&dir, Shard::WHOLE, false).expect("taken once the ending holder let go");
        release.join().unwrap();
        let busy = Busy { task: "a run".into(), lock: "l".into(), holder: Some(holder(ending.id())), by: "run" };
        assert!(busy.to_string().contains("which is ending"), "{busy}");
        alive.kill().unwrap();
        alive.wait().unwrap();
        ending.wait().unwrap();
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
    fn exports_run_side_by_side_but_never_beside_a_run_whole_or_sharded() {
        let dir = scratch("export");
        let (whole, task0) = (Shard::WHOLE, "0/2".parse().unwrap());
        let first = acquire_export(&dir, false).unwrap();
        let second = acquire_export(&dir, false).unwrap();
        for shard in [whole, task0] {
            let refused = acquire_run(&dir, shard, false).unwrap_err();
            let busy = refused.downcast_ref::<Busy>().expect("a Busy error");
            assert_eq!((busy.by, busy.holder.as_ref().map(|h| h.pid)), ("export", Some(std::process::id())));
        }
        let waiter = {
            let dir = dir.clone();
            std::thread::spawn(move || acquire_run(&dir, Shard::WHOLE, true).map(drop))
        };
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(!waiter.is_finished(), "a queued run waits while an export reads");
        drop(first);
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(!waiter.is_finished(), "and for the last of them");
        drop(second);
        waiter.join().unwrap().unwrap();

        // A task of a sharded stage keeps exports out as a whole run does,
        // named by its task's lock.
        let task = acquire_run(&dir, task0, false).unwrap();
        let stage = acquire(&stage_lock_path(&dir, "tokens", task0), "stage tokens task 0/2", false).unwrap();
        let refused = acquire_export(&dir, false).unwrap_err();
        let busy = refused.downcast_ref::<Busy>().expect("a Busy error");
        assert_eq!((busy.by, busy.holder.as_ref().map(|h| h.task.as_str())), ("run", Some("stage tokens task 0/2")));
        let waiter = {
            let dir = dir.clone();
            std::thread::spawn(move || acquire_export(&dir, true).map(drop))
        };
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(!waiter.is_finished(), "a waiting export waits while a task runs");
        drop((stage, task));
        waiter.join().unwrap().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_lock_object_refuses_a_second_taker_until_released_or_stale() {
        let dir = scratch("store");
        let url = format!("file://{}", dir.display());
        let location = crate::storage::location::Location::parse(&url).unwrap().child("_locks/verify.lock");
        let locks = crate::storage::location::Location::parse(&url).unwrap().child(LOCK_DIR);
        wait_for_store_runs(&locks, "a run", false).expect("no run holds the store");
        let held = acquire_in_store(location.clone(), "stage verify", false).unwrap();
        let refused = acquire_in_store(location.clone(), "stage verify", false).unwrap_err();
        let busy = refused.downcast_ref::<Busy>().expect("a Busy error");
        assert_eq!(busy.holder.as_ref().map(|h| h.pid), Some(std::process::id()));
        // An export finds the task running, and names it.
        let refused = wait_for_store_runs(&locks, "a run", false).unwrap_err();
        let busy = refused.downcast_ref::<Busy>().expect("a Busy error");
        assert_eq!(busy.holder.as_ref().map(|h| h.task.as_str()), Some("stage verify"));
        drop(held);
        wait_for_store_runs(&locks, "a run", false).expect("the task ended");
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

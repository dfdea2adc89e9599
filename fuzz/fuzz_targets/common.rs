//! Shared by the targets: the readers take a file (a `Source`), so each
//! input is written to one scratch file per process, in /dev/shm when there
//! is one (no disk I/O per execution).

#![allow(dead_code)]

use std::path::PathBuf;

/// Writes `data` to this process's scratch file named `*{suffix}` (the
/// suffix decides how the ingest reads it: `.warc`, `.jsonl.gz`, ...).
pub fn scratch(suffix: &str, data: &[u8]) -> PathBuf {
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() { shm.to_path_buf() } else { std::env::temp_dir() };
    let path = dir.join(format!("neardup-fuzz-{}{suffix}", std::process::id()));
    std::fs::write(&path, data).expect("write scratch file");
    path
}

/// Ingest limits small enough that a bomb stays far below the RSS limit.
pub fn config() -> neardup::config::IngestConfig {
    neardup::config::IngestConfig { max_payload_bytes: 1 << 20, ..Default::default() }
}

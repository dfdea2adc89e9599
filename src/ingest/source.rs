//! Where an input file lives: a local path or an object in a store
//! (`s3://…`, `file://…`, see [`crate::storage::location`]). The readers of archives and
//! corpora take a [`Source`] and never care which.

use bytes::Bytes;
use serde_json::{json, Value};
use std::io::{self, Read, Seek};
use std::path::PathBuf;

use crate::storage::location::Location;

/// A reader that can also seek (the archive reader resynchronizes on
/// damaged gzip members by seeking back).
pub trait ReadSeek: Read + Seek + Send {}
impl<T: Read + Seek + Send> ReadSeek for T {}

/// One input file.
#[derive(Debug, Clone)]
pub enum Source {
    /// A file on a local disk.
    File(PathBuf),
    /// An object, with its size and version as listed.
    Object { location: Location, size: u64, e_tag: Option<String>, last_modified_unix: i64 },
}

impl Source {
    /// The path or URL, as it appears in `ingest_files`, rejects and messages.
    pub fn name(&self) -> String {
        match self {
            Source::File(p) => p.display().to_string(),
            Source::Object { location, .. } => location.url.clone(),
        }
    }

    /// What the input is, whatever way it was named: a local file's
    /// canonical path (absolute, links resolved, no `.` or `..`), an
    /// object's URL as given. `sample-data`, `./sample-data/`, its
    /// absolute path and a link to it name the same files, and the ingest
    /// stage's fingerprint keys them by this, so another spelling reruns
    /// nothing; [`Source::name`] stays as spelled, for the tables and
    /// messages. A file that cannot be resolved (gone since it was
    /// listed) goes by its absolute path.
    pub fn identity(&self) -> String {
        match self {
            Source::File(p) => std::fs::canonicalize(p)
                .or_else(|_| std::path::absolute(p))
                .map_or_else(|_| p.display().to_string(), |c| c.display().to_string()),
            Source::Object { location, .. } => location.url.clone(),
        }
    }

    /// The last part of the name, which tells archives from corpora
    /// (`.warc.gz`, `.jsonl`, ...).
    pub fn file_name(&self) -> String {
        let name = self.name();
        let base = name.rsplit('/').next().unwrap_or(&name);
        base.to_string()
    }

    /// [`Source::file_name`] as a path, for the name-based checks of
    /// [`super::corpus`].
    pub fn name_path(&self) -> PathBuf {
        PathBuf::from(self.file_name())
    }

    /// The size in bytes.
    pub fn size(&self) -> io::Result<u64> {
        match self {
            Source::File(p) => Ok(std::fs::metadata(p)?.len()),
            Source::Object { size, .. } => Ok(*size),
        }
    }

    /// Opens a streaming reader from the first byte.
    pub fn open(&self) -> io::Result<Box<dyn ReadSeek>> {
        match self {
            Source::File(p) => Ok(Box::new(std::fs::File::open(p)?)),
            Source::Object { location, size, .. } => Ok(Box::new(location.reader(*size))),
        }
    }

    /// The whole content in memory, for formats read by random access
    /// (Parquet corpora); a local file is opened, not read.
    pub fn random_access(&self) -> io::Result<RandomAccess> {
        match self {
            Source::File(p) => Ok(RandomAccess::File(std::fs::File::open(p)?)),
            Source::Object { location, .. } => {
                Ok(RandomAccess::Bytes(location.get().map_err(|e| io::Error::other(format!("{e:#}")))?))
            }
        }
    }

    /// What identifies this version of the input (size and modification
    /// time, or the object's ETag), for the ingest stage's fingerprint.
    pub fn version(&self) -> Value {
        match self {
            Source::File(p) => {
                let meta = std::fs::metadata(p).ok();
                let mtime = meta
                    .as_ref()
                    .and_then(|m| m.modified().ok())
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map(|d| d.as_nanos() as u64);
                json!({"size": meta.map(|m| m.len()), "mtime_ns": mtime})
            }
            Source::Object { size, e_tag, last_modified_unix, .. } => {
                json!({"size": size, "e_tag": e_tag, "last_modified": last_modified_unix})
            }
        }
    }
}

/// Random access to an input for the Parquet reader: the open file, or the
/// bytes of an object.
pub enum RandomAccess {
    File(std::fs::File),
    Bytes(Bytes),
}

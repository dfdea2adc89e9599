//! Where an export goes, written whole or not at all: a local folder, where
//! each file is written under a hidden temporary name and renamed into
//! place, or an object-store prefix (`s3://…`, `file://…`, as `--out`
//! takes them), where each file is staged on the local disk of the
//! export's spill folder (`--spill`) and uploaded in one PUT or one
//! multipart upload, which the store completes only after its last part.
//!
//! Temporary names follow [`crate::tables::write`]'s (`.<name>.tmp-<pid>` files,
//! `.tmp-export-<pid>` folders), so an interruption's cleanup removes them.

use anyhow::{Context, Result};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::storage::location::{is_url, Location};

/// The folder or object prefix of `--to`.
pub(super) enum Destination {
    /// A local folder.
    Folder(PathBuf),
    /// An object-store prefix and the local folder files are staged in.
    Store { prefix: Location, staging: PathBuf },
}

impl Destination {
    /// Opens `to`: creates a local folder, or parses a URL (a staging
    /// folder is made under `scratch`, the export's spill folder: the
    /// run's output folder may be read-only).
    pub(super) fn open(to: &str, scratch: &Path) -> Result<Destination> {
        if is_url(to) {
            let prefix =
                Location::parse(to).map_err(|e| crate::stages::stage::MissingInput(format!("--to {to}: {e:#}")))?;
            let staging = scratch.join(format!(".tmp-export-{}", std::process::id()));
            let _creating = crate::process::interrupt::unpublished_write(&crate::tables::write::UNPUBLISHED)?;
            std::fs::create_dir_all(&staging).with_context(|| format!("cannot create {}", staging.display()))?;
            crate::process::interrupt::watch_output(scratch);
            return Ok(Destination::Store { prefix, staging });
        }
        let folder = PathBuf::from(to);
        std::fs::create_dir_all(&folder)
            .map_err(|e| crate::tables::write::name_the_disk(e.into(), &folder))
            .with_context(|| format!("cannot create the export folder {}", folder.display()))?;
        crate::process::interrupt::watch_output(&folder);
        Ok(Destination::Folder(folder))
    }

    /// Where a file `name` ends up, for messages.
    pub(super) fn describe(&self, name: &str) -> String {
        match self {
            Destination::Folder(folder) => folder.join(name).display().to_string(),
            Destination::Store { prefix, .. } => prefix.child(name).url,
        }
    }

    /// A local path for a scratch file beside the outputs (the runs of an
    /// external sort), removed by the interruption's cleanup.
    pub(super) fn scratch_path(&self, name: &str) -> PathBuf {
        let folder = match self {
            Destination::Folder(folder) => folder,
            Destination::Store { staging, .. } => staging,
        };
        folder.join(format!(".{name}.tmp-{}", std::process::id()))
    }

    /// Starts writing file `name`.
    pub(super) fn create(&self, name: &str) -> Result<OutputFile> {
        let tmp = self.scratch_path(name);
        let _creating = crate::process::interrupt::unpublished_write(&crate::tables::write::UNPUBLISHED)?;
        let file = File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
        Ok(OutputFile {
            writer: BufWriter::with_capacity(1 << 20, file),
            tmp,
            name: name.to_string(),
            published: false,
        })
    }

    /// Publishes a finished file: renamed into place, or uploaded (and
    /// its staged copy removed). Returns where it is.
    pub(super) fn publish(&self, mut file: OutputFile) -> Result<String> {
        file.writer.flush().with_context(|| format!("cannot write {}", file.tmp.display()))?;
        file.writer.get_ref().sync_all().with_context(|| format!("cannot write {}", file.tmp.display()))?;
        let _publishing = crate::process::interrupt::unpublished_write(&crate::tables::write::UNPUBLISHED)?;
        let place = match self {
            Destination::Folder(folder) => {
                let path = folder.join(&file.name);
                std::fs::rename(&file.tmp, &path).with_context(|| format!("cannot publish {}", path.display()))?;
                path.display().to_string()
            }
            Destination::Store { prefix, .. } => {
                let object = prefix.child(&file.name);
                object.upload(&file.tmp)?;
                std::fs::remove_file(&file.tmp).with_context(|| format!("cannot remove {}", file.tmp.display()))?;
                object.url
            }
        };
        file.published = true;
        Ok(place)
    }
}

impl Drop for Destination {
    fn drop(&mut self) {
        if let Destination::Store { staging, .. } = self {
            let _ = std::fs::remove_dir_all(staging);
        }
    }
}

/// A file being written under its temporary name; dropped unpublished, it
/// is removed.
pub(super) struct OutputFile {
    writer: BufWriter<File>,
    tmp: PathBuf,
    name: String,
    published: bool,
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.writer.write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.writer.write_all(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.writer.flush()
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if !self.published {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_appears_only_when_published_and_an_unpublished_one_leaves_nothing() {
        let dir = std::env::temp_dir().join(format!("neardup-export-output-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let to = dir.join("to");
        let destination = Destination::open(to.to_str().unwrap(), &dir).unwrap();
        let mut file = destination.create("kept.jsonl").unwrap();
        file.write_all(b"{}\n").unwrap();
        assert!(!to.join("kept.jsonl").exists());
        assert_eq!(destination.publish(file).unwrap(), to.join("kept.jsonl").display().to_string());
        assert_eq!(std::fs::read(to.join("kept.jsonl")).unwrap(), b"{}\n");
        drop(destination.create("other.jsonl").unwrap());
        let names: Vec<String> =
            std::fs::read_dir(&to).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["kept.jsonl"]);
        // An object-store prefix: staged, uploaded, and the staging folder removed.
        let url = url::Url::from_directory_path(dir.join("store")).unwrap().to_string();
        let store = Destination::open(&url, &dir).unwrap();
        let mut file = store.create("kept.cdxj").unwrap();
        file.write_all(b"line\n").unwrap();
        assert!(store.publish(file).unwrap().ends_with("/kept.cdxj"));
        drop(store);
        assert_eq!(std::fs::read(dir.join("store/kept.cdxj")).unwrap(), b"line\n");
        assert!(!dir.join(format!(".tmp-export-{}", std::process::id())).exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

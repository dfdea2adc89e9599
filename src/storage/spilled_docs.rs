//! Per-document records kept in a file on local disk rather than in
//! memory, for the stages that must reach any document of the crawl by id
//! while working on a few: `verify` (the texts of the documents its
//! placement compares) and `search` (SL+ST's sentence strings of the pairs
//! it scores). Held in memory, those grew with the crawl (1.7 GB of texts
//! at 8 copies of the Javadoc crawl); on disk, memory keeps only an offset
//! and a length per document, and each record is read back (`pread`, from
//! the page cache when the machine has room) when it is needed.
//!
//! The file sits in the process's spill folder under the output folder
//! ([`crate::tables::sql::spill_dir_of`]), on the disk sized for the crawl and
//! removed with the folder however the run ends; [`SpilledDocs`] also
//! removes its file when dropped.

use anyhow::{Context, Result};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Where a record is, and the size kept in memory with it.
#[derive(Clone, Copy)]
struct Entry {
    offset: u64,
    len: u32,
    size: u32,
}

/// A file of this process's spill folder under an output folder, removed
/// when dropped.
pub struct ScratchFile(PathBuf);

impl ScratchFile {
    /// The path `<n>-<name>` in the spill folder under `out` (the folder
    /// is made if missing; `n` tells apart two files of one name in one
    /// process, and `name` keeps its extension). The file itself is the
    /// caller's to create.
    pub fn new(out: &Path, name: &str) -> Result<ScratchFile> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let dir = crate::tables::sql::spill_dir_of(out, std::process::id());
        let _creating = crate::process::interrupt::unpublished_write(&crate::tables::sql::SPILLS)?;
        std::fs::create_dir_all(&dir).with_context(|| format!("cannot create spill folder {}", dir.display()))?;
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(ScratchFile(dir.join(format!("{n}-{name}"))))
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Creates its file, empty, open for reading and writing.
    pub fn create_read_write(&self) -> Result<File> {
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&self.0)
            .with_context(|| format!("cannot create {}", self.0.display()))
    }
}

impl Drop for ScratchFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Writes the records, one per document, in any order.
pub struct SpillWriter {
    out: BufWriter<File>,
    file: File,
    index: HashMap<u64, Entry>,
    offset: u64,
    guard: ScratchFile,
}

impl SpillWriter {
    /// A new empty file `<name>-<n>` in this process's spill folder under
    /// `out` (the folder is made if missing; `n` tells apart two writers of
    /// one name in one process).
    pub fn create(out: &Path, name: &str) -> Result<SpillWriter> {
        let guard = ScratchFile::new(out, name)?;
        let file = guard.create_read_write()?;
        let out = BufWriter::with_capacity(1 << 20, file.try_clone()?);
        Ok(SpillWriter { out, file, index: HashMap::new(), offset: 0, guard })
    }

    /// Appends the record of `doc_id`; a second record of the same id
    /// replaces the first.
    pub fn push(&mut self, doc_id: u64, record: &[u8]) -> Result<()> {
        self.push_sized(doc_id, 0, record)
    }

    /// [`SpillWriter::push`] with a number kept in memory beside the record
    /// ([`SpilledDocs::size`]: what a reader checks before reading it).
    pub fn push_sized(&mut self, doc_id: u64, size: u32, record: &[u8]) -> Result<()> {
        let len = u32::try_from(record.len()).context("a spilled record of 4 GiB or more")?;
        self.out.write_all(record).with_context(|| format!("cannot write {}", self.guard.0.display()))?;
        self.index.insert(doc_id, Entry { offset: self.offset, len, size });
        self.offset += u64::from(len);
        Ok(())
    }

    /// Flushes the file and opens it for reading.
    pub fn finish(mut self) -> Result<SpilledDocs> {
        self.out.flush().with_context(|| format!("cannot write {}", self.guard.0.display()))?;
        drop(self.out);
        Ok(SpilledDocs { file: self.file, index: self.index, _guard: self.guard })
    }
}

/// The written records, read by document id from any thread.
pub struct SpilledDocs {
    file: File,
    index: HashMap<u64, Entry>,
    _guard: ScratchFile,
}

impl SpilledDocs {
    /// The record of `doc_id`, if one was written.
    pub fn get(&self, doc_id: u64) -> Result<Option<Vec<u8>>> {
        let Some(&Entry { offset, len, .. }) = self.index.get(&doc_id) else {
            return Ok(None);
        };
        let mut record = vec![0u8; len as usize];
        self.file
            .read_exact_at(&mut record, offset)
            .with_context(|| format!("cannot read {}", self._guard.0.display()))?;
        Ok(Some(record))
    }

    /// Whether a record of `doc_id` was written.
    pub fn contains(&self, doc_id: u64) -> bool {
        self.index.contains_key(&doc_id)
    }

    /// The size pushed with the record of `doc_id`, if one was written.
    pub fn size(&self, doc_id: u64) -> Option<u32> {
        self.index.get(&doc_id).map(|e| e.size)
    }

    /// The number of documents with a record.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether no record was written.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_come_back_by_id_and_the_file_goes_with_the_reader() {
        let out = std::env::temp_dir().join(format!("neardup-spilled-docs-{}", std::process::id()));
        let mut w = SpillWriter::create(&out, "test").unwrap();
        w.push(7, b"seven").unwrap();
        w.push(3, b"").unwrap();
        w.push_sized(9, 3, "néuf".as_bytes()).unwrap();
        w.push_sized(7, 4, b"SEVEN!").unwrap();
        let path = w.guard.0.clone();
        let docs = w.finish().unwrap();
        assert_eq!(docs.len(), 3);
        assert_eq!(docs.get(7).unwrap().as_deref(), Some(&b"SEVEN!"[..]));
        assert_eq!(docs.get(3).unwrap().as_deref(), Some(&b""[..]));
        assert_eq!(docs.get(9).unwrap().as_deref(), Some("néuf".as_bytes()));
        assert_eq!(docs.get(4).unwrap(), None);
        assert!(docs.contains(3) && !docs.contains(4));
        assert_eq!((docs.size(7), docs.size(9), docs.size(3), docs.size(4)), (Some(4), Some(3), Some(0), None));
        assert!(path.exists());
        drop(docs);
        assert!(!path.exists());
        let _ = std::fs::remove_dir_all(out);
    }
}

//! Per-document numbers kept in files on local disk: an array indexed by
//! document ([`DiskArray`]) and a stream of fixed-size records
//! ([`RecordFile`]).
//!
//! Why: `place` reaches any earlier document's representative while it
//! walks the keep order, and needs each document's id to name it in its
//! tables. Held in memory those arrays grow with the crawl (12 bytes per
//! page: 30 GB for 2.5 billion pages, issue 72). On disk, memory keeps a
//! bounded cache of blocks whatever the crawl; the rest is in the page
//! cache when the machine has room, and read back (`pread`) when not.
//! The files sit in the process's spill folder ([`ScratchFile`]) and go
//! with their owner.

use anyhow::{Context, Result};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::marker::PhantomData;
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::spilled_docs::ScratchFile;

/// Entries per block: 64 KiB of `u64`s, read and written whole.
const BLOCK_ENTRIES: usize = 8192;

/// Bytes of blocks a [`DiskArray`] keeps in memory at most.
const CACHE_BYTES: usize = 16 << 20;

/// A cached block, and whether it differs from the file.
struct Block {
    values: Box<[u64]>,
    dirty: bool,
    last_used: u64,
}

/// An array of `u64` by index, of any length, in a file, every entry 0
/// until set. At most [`CACHE_BYTES`] of it is in memory: the least
/// recently used block is written back when another is needed. Reads and
/// writes near the last ones (`place`'s pattern: it writes in index order
/// and reads partners close behind) are served from memory.
pub struct DiskArray {
    file: File,
    guard: ScratchFile,
    cache: HashMap<u64, Block>,
    max_blocks: usize,
    clock: u64,
}

impl DiskArray {
    /// A new array, all zeros, in the spill folder under `out`.
    pub fn create(out: &Path, name: &str) -> Result<DiskArray> {
        DiskArray::with_cache(out, name, CACHE_BYTES)
    }

    /// [`DiskArray::create`] keeping at most `cache_bytes` of blocks in
    /// memory (at least one block).
    fn with_cache(out: &Path, name: &str, cache_bytes: usize) -> Result<DiskArray> {
        let guard = ScratchFile::new(out, name)?;
        let file = guard.create_read_write()?;
        let max_blocks = (cache_bytes / (BLOCK_ENTRIES * 8)).max(1);
        Ok(DiskArray { file, guard, cache: HashMap::new(), max_blocks, clock: 0 })
    }

    /// The entry at `index` (0 if never set).
    pub fn get(&mut self, index: u64) -> Result<u64> {
        let block = self.block(index / BLOCK_ENTRIES as u64)?;
        Ok(block.values[(index % BLOCK_ENTRIES as u64) as usize])
    }

    /// Sets the entry at `index`.
    pub fn set(&mut self, index: u64, value: u64) -> Result<()> {
        let block = self.block(index / BLOCK_ENTRIES as u64)?;
        block.values[(index % BLOCK_ENTRIES as u64) as usize] = value;
        block.dirty = true;
        Ok(())
    }

    /// Block `number`, read in (or all zeros past the file's end) after
    /// writing back the least recently used one if the cache is full.
    fn block(&mut self, number: u64) -> Result<&mut Block> {
        self.clock += 1;
        if !self.cache.contains_key(&number) {
            if self.cache.len() >= self.max_blocks {
                self.evict()?;
            }
            let mut bytes = vec![0u8; BLOCK_ENTRIES * 8];
            let offset = number * (BLOCK_ENTRIES * 8) as u64;
            let mut read = 0;
            while read < bytes.len() {
                let n = self
                    .file
                    .read_at(&mut bytes[read..], offset + read as u64)
                    .with_context(|| format!("cannot read {}", self.guard.path().display()))?;
                if n == 0 {
                    break; // past the end: zeros
                }
                read += n;
            }
            let values = bytes.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes"))).collect();
            self.cache.insert(number, Block { values, dirty: false, last_used: 0 });
        }
        let block = self.cache.get_mut(&number).expect("just cached");
        block.last_used = self.clock;
        Ok(block)
    }

    /// Drops the least recently used block, written back if changed.
    fn evict(&mut self) -> Result<()> {
        let Some((&number, _)) = self.cache.iter().min_by_key(|(_, b)| b.last_used) else {
            return Ok(());
        };
        let block = self.cache.remove(&number).expect("present");
        if block.dirty {
            let bytes: Vec<u8> = block.values.iter().flat_map(|v| v.to_le_bytes()).collect();
            self.file
                .write_all_at(&bytes, number * (BLOCK_ENTRIES * 8) as u64)
                .with_context(|| format!("cannot write {}", self.guard.path().display()))?;
        }
        Ok(())
    }
}

/// A record of fixed size, as a [`RecordFile`] stores it.
pub trait FixedRecord: Sized {
    /// Its size in bytes.
    const SIZE: usize;
    /// Writes it into `out` (`SIZE` bytes).
    fn encode(&self, out: &mut [u8]);
    /// Reads it back from `bytes` (`SIZE` bytes).
    fn decode(bytes: &[u8]) -> Self;
}

/// The little-endian `u32` at `at` of a record's bytes.
pub fn le_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

/// The little-endian `u64` at `at` of a record's bytes.
pub fn le_u64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

/// Records written in order to a file of the spill folder and read back
/// in that order, as often as wanted: a pass's input or output that may
/// be as long as the crawl.
pub struct RecordFile<T> {
    guard: ScratchFile,
    writer: Option<BufWriter<File>>,
    count: u64,
    record: PhantomData<T>,
}

impl<T: FixedRecord> RecordFile<T> {
    /// A new empty file in the spill folder under `out`.
    pub fn create(out: &Path, name: &str) -> Result<RecordFile<T>> {
        let guard = ScratchFile::new(out, name)?;
        let file = File::create(guard.path()).with_context(|| format!("cannot create {}", guard.path().display()))?;
        Ok(RecordFile { guard, writer: Some(BufWriter::with_capacity(1 << 20, file)), count: 0, record: PhantomData })
    }

    /// Appends `record` (before the first [`RecordFile::read`]).
    pub fn push(&mut self, record: &T) -> Result<()> {
        let mut bytes = vec![0u8; T::SIZE];
        record.encode(&mut bytes);
        let writer = self.writer.as_mut().context("a record file is written before it is read")?;
        writer.write_all(&bytes).with_context(|| format!("cannot write {}", self.guard.path().display()))?;
        self.count += 1;
        Ok(())
    }

    /// The number of records.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// Whether no record was written.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The records in the order written (the writing ends).
    pub fn read(&mut self) -> Result<impl Iterator<Item = Result<T>> + '_> {
        if let Some(mut writer) = self.writer.take() {
            writer.flush().with_context(|| format!("cannot write {}", self.guard.path().display()))?;
        }
        let path = self.guard.path();
        let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
        let mut reader = BufReader::with_capacity(1 << 20, file);
        let mut bytes = vec![0u8; T::SIZE];
        Ok((0..self.count).map(move |_| {
            reader.read_exact(&mut bytes).with_context(|| format!("cannot read {}", path.display()))?;
            Ok(T::decode(&bytes))
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("neardup-disk-array-{name}-{}", std::process::id()))
    }

    /// Entries far apart, set and read back through a cache of one block,
    /// are what a `Vec` would hold; unset ones are 0; the file goes with
    /// the array.
    #[test]
    fn entries_survive_eviction_and_unset_ones_are_zero() {
        let out = out("evict");
        let mut array = DiskArray::with_cache(&out, "test", 1).unwrap();
        let mut reference = vec![0u64; 100_000];
        let mut state = 11u64;
        for _ in 0..20_000 {
            let i = crate::methods::splitmix64(&mut state) % reference.len() as u64;
            let v = crate::methods::splitmix64(&mut state);
            array.set(i, v).unwrap();
            reference[i as usize] = v;
            let j = crate::methods::splitmix64(&mut state) % reference.len() as u64;
            assert_eq!(array.get(j).unwrap(), reference[j as usize]);
        }
        for (i, &v) in reference.iter().enumerate() {
            assert_eq!(array.get(i as u64).unwrap(), v, "entry {i}");
        }
        assert_eq!(array.get(10_000_000).unwrap(), 0);
        let path = array.guard.path().to_path_buf();
        assert!(path.exists());
        drop(array);
        assert!(!path.exists());
        let _ = std::fs::remove_dir_all(out);
    }

    impl FixedRecord for (u32, u64) {
        const SIZE: usize = 12;
        fn encode(&self, out: &mut [u8]) {
            out[..4].copy_from_slice(&self.0.to_le_bytes());
            out[4..].copy_from_slice(&self.1.to_le_bytes());
        }
        fn decode(bytes: &[u8]) -> Self {
            (u32::from_le_bytes(bytes[..4].try_into().unwrap()), u64::from_le_bytes(bytes[4..].try_into().unwrap()))
        }
    }

    /// Records come back in the order written, every time they are read.
    #[test]
    fn records_come_back_in_order() {
        let out = out("records");
        let mut file = RecordFile::<(u32, u64)>::create(&out, "test").unwrap();
        let records: Vec<(u32, u64)> = (0..50_000u32).map(|i| (i * 7, u64::from(i) << 33)).collect();
        records.iter().for_each(|r| file.push(r).unwrap());
        assert_eq!(file.len(), 50_000);
        for _ in 0..2 {
            assert_eq!(file.read().unwrap().collect::<Result<Vec<_>>>().unwrap(), records);
        }
        assert!(file.push(&(1, 1)).is_err(), "written after read");
        let _ = std::fs::remove_dir_all(out);
    }
}

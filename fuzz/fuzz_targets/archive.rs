//! The archive reader: WARC/ARC record framing, per-record and whole-file
//! gzip, resynchronization after lying lengths and bad members. Every event
//! is then turned into its outcome as the ingest stage does (a small block
//! cap, so `too_large` and cut blocks are reached with small inputs).
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use neardup::ingest::archive::{scan_archive, ArchiveEvent};
use neardup::ingest::record::process_record;

fuzz_target!(|data: &[u8]| {
    let path = common::scratch(".warc", data);
    let cfg = common::config();
    let mut records = 0usize;
    let _info = scan_archive(&path, 64 << 10, &mut |ev| {
        records += 1;
        if let ArchiveEvent::Record(r) = &ev {
            assert!(r.block.len() as u64 <= r.block_len);
            if records <= 16 {
                let _ = process_record(r, "fuzz.warc", &cfg);
            }
        }
    })
    .expect("a readable file is never an I/O error");
});

//! The archive reader: WARC/ARC record framing, per-record and whole-file
//! gzip, resynchronization after lying lengths and bad members. Every event
//! is then turned into its outcome as the ingest stage does. The block cap
//! is the ingest stage's (payload limit plus 1 MiB) for inputs of even
//! length and 4 KiB for odd ones, so that `too_large` blocks are reached
//! with small inputs too.
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
    let max_block = if data.len() % 2 == 0 { cfg.max_payload_bytes + (1 << 20) } else { 4 << 10 };
    let _info = scan_archive(&path, max_block, &mut |ev| {
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

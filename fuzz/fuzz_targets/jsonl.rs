//! The JSON Lines corpus reader, plain, gzip and zstd. The first byte picks
//! the compression (bits 0-1) and whether the rest is compressed here first
//! (bit 2: the fuzzer then mutates the JSON, not the compressed stream).
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use neardup::ingest::corpus::ingest_corpus;
use neardup::ingest::source::Source;
use std::io::Write;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else { return };
    let wrap = sel & 4 == 4;
    let (suffix, bytes) = match sel & 3 {
        1 if wrap => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(rest).unwrap();
            (".jsonl.gz", e.finish().unwrap())
        }
        1 => (".jsonl.gz", rest.to_vec()),
        2 if wrap => (".jsonl.zst", zstd::encode_all(rest, 1).unwrap()),
        2 => (".jsonl.zst", rest.to_vec()),
        _ => (".jsonl", rest.to_vec()),
    };
    let path = common::scratch(suffix, &bytes);
    let mut cfg = common::config();
    // Small enough that long lines are cut within a short input.
    cfg.max_payload_bytes = 1 << 10;
    let mut n = 0u64;
    let summary = ingest_corpus(&Source::File(path), "fuzz.jsonl", &cfg, &mut |_| n += 1)
        .expect("a JSONL file is never a file error once opened");
    assert_eq!(summary.records, n);
    assert_eq!(summary.records, summary.documents + summary.rejects);
});

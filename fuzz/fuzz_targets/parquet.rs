//! The Parquet corpus reader: footer and schema, the `id`/`url`/`text`/
//! `html` columns of any type, pages and their compression. A file that
//! cannot be read is an error of the file, never a panic.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use neardup::ingest::corpus::ingest_corpus;
use neardup::ingest::source::Source;

fuzz_target!(|data: &[u8]| {
    let path = common::scratch(".parquet", data);
    let mut n = 0u64;
    if let Ok(summary) = ingest_corpus(&Source::File(path), "fuzz.parquet", &common::config(), &mut |_| n += 1) {
        assert_eq!(summary.records, n);
    }
});

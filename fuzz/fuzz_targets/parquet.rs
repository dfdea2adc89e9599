//! The Parquet corpus reader: footer and schema, the `id`/`url`/`text`/
//! `html` columns of any type, pages and their compression. A file that
//! cannot be read is an error of the file, never a panic. The reader turns
//! panics of arrow-rs into file errors and rejects (`catch_unwind`), so the
//! default panic hook is put back here: libfuzzer-sys's hook would abort on
//! a panic before it is caught. A panic that escapes still aborts.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use neardup::ingest::corpus::ingest_corpus;
use neardup::ingest::source::Source;

static DEFAULT_HOOK: std::sync::Once = std::sync::Once::new();

fuzz_target!(|data: &[u8]| {
    DEFAULT_HOOK.call_once(|| drop(std::panic::take_hook()));
    let path = common::scratch(".parquet", data);
    let mut n = 0u64;
    if let Ok(summary) = ingest_corpus(&Source::File(path), "fuzz.parquet", &common::config(), &mut |_| n += 1) {
        assert_eq!(summary.records, n);
    }
});

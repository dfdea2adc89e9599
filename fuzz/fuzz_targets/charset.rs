//! Charset detection and decoding: BOM, the HTTP charset parameter, `<meta>`
//! declarations, chardetng's guess, and decoding with the chosen encoding.
//! The first byte gives the length of the header charset label taken from
//! the input's start (0: no header charset).
#![no_main]

use libfuzzer_sys::fuzz_target;
use neardup::ingest::html::{decide_charset, decode, meta_charset};

fuzz_target!(|data: &[u8]| {
    let Some((&n, rest)) = data.split_first() else { return };
    let n = (n as usize % 32).min(rest.len());
    let (label, payload) = rest.split_at(n);
    let label = (n > 0).then(|| String::from_utf8_lossy(label).into_owned());
    let (enc, _) = decide_charset(payload, label.as_deref());
    let text = decode(payload, enc);
    assert!(payload.is_empty() || !text.is_empty());
    let _ = meta_charset(payload);
});

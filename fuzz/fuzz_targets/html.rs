//! The HTML text extractor (html5ever tree, iterative walk), HTML sniffing
//! and language detection of the extracted text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use neardup::ingest::html::{detect_lang, extract};
use neardup::ingest::record::sniff_html;

fuzz_target!(|data: &[u8]| {
    let _ = sniff_html(data);
    let html = String::from_utf8_lossy(data);
    let config = neardup::config::IngestConfig::default();
    if let Ok(ex) = extract(&html, &config) {
        assert!(!ex.text.contains("\n\n"), "no empty lines");
        let _ = detect_lang(&ex.text);
    }
});

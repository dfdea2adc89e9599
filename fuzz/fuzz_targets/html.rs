//! The HTML text extractor (the scanner of the fast path, held to the
//! tree's result; attribute cut, depth-bounded html5ever parse, flattening,
//! iterative walk), HTML sniffing and language detection of the
//! extracted text. Inputs of odd length run with tiny limits (depth 8, 4
//! attributes), so that the flattening and `TooDeep` paths are reached by
//! small inputs too; even lengths with the defaults.
#![no_main]

use libfuzzer_sys::fuzz_target;
use neardup::config::IngestConfig;
use neardup::ingest::html::{detect_lang, extract, extract_with_tree, scan};
use neardup::ingest::record::sniff_html;

fuzz_target!(|data: &[u8]| {
    let _ = sniff_html(data);
    let html = String::from_utf8_lossy(data);
    let mut config = IngestConfig::default();
    if data.len() % 2 == 1 {
        config.max_html_depth = 8;
        config.max_html_attributes = 4;
    }
    // The scanner, when it claims a page, gives the tree's result.
    if let Ok(fast) = scan(&html, &config) {
        assert_eq!(Ok(fast), extract_with_tree(&html, &config), "scanner and tree differ");
    }
    if let Ok(ex) = extract(&html, &config) {
        assert!(!ex.text.contains("\n\n"), "no empty lines");
        let _ = detect_lang(&ex.text);
    }
});

//! The HTTP layer of a record: status line and headers, chunked transfer
//! coding, Content-Encoding (gzip, deflate, br) with a size limit, and the
//! whole record → document path (`process_record`) on the same block.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use neardup::ingest::archive::{ArchiveFormat, RawRecord};
use neardup::ingest::http::{dechunk, decode_content, parse_response};
use neardup::ingest::record::{process_record, valid_date};

const ENCODINGS: [&str; 8] = ["gzip", "deflate", "br", "identity", "gzip, br", "deflate,gzip", "x-gzip", "br, br"];

fuzz_target!(|data: &[u8]| {
    let Some((&sel, block)) = data.split_first() else { return };
    if let Ok(resp) = parse_response(block) {
        assert!(resp.body_start <= block.len());
        let body = &block[resp.body_start..];
        let body = match dechunk(body) {
            Ok(Some(plain)) => plain,
            Ok(None) | Err(_) => body.to_vec(),
        };
        let enc = resp.header("content-encoding").unwrap_or(ENCODINGS[(sel & 7) as usize]);
        if let Ok(out) = decode_content(enc, &body, 1 << 20) {
            assert!(out.len() <= 1 << 20 || out == body);
        }
    }
    let _ = dechunk(block);
    let _ = valid_date(Some(&String::from_utf8_lossy(&block[..block.len().min(40)])));
    let (format, record_type, content_type) = match sel >> 4 {
        0..=9 => (ArchiveFormat::Warc, "response", "application/http; msgtype=response"),
        10 | 11 => (ArchiveFormat::Arc, "arc", "text/html"),
        12 | 13 => (ArchiveFormat::Warc, "resource", "text/html"),
        _ => (ArchiveFormat::Warc, "conversion", "text/plain"),
    };
    let raw = RawRecord {
        offset: 0,
        format,
        record_type: record_type.into(),
        record_id: Some("<urn:uuid:fuzz>".into()),
        target_uri: Some("http://example.com/".into()),
        date: Some("2020-01-01T00:00:00Z".into()),
        refers_to: None,
        payload_digest: None,
        concurrent_to: Vec::new(),
        content_type: Some(content_type.into()),
        warc_truncated: None,
        block: block.to_vec(),
        block_len: block.len() as u64,
        too_large: sel & 1 == 1 && sel & 2 == 2,
        truncated: sel & 8 == 8,
        extent: Default::default(),
    };
    let _ = process_record(&raw, "fuzz.warc", &common::config());
});

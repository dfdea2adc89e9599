//! Ingest: WARC / ARC files → `documents`, `revisits` and `rejects`.
//!
//! Reading ([`archive`]) is sequential per file and streams records; turning
//! a record into a document ([`record`]: HTTP parsing, content decoding,
//! charset, HTML text extraction) is pure and runs in parallel.

pub mod archive;
pub mod record;

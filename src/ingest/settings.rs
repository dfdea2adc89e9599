//! Ingest's settings (`[ingest]`): the limits that keep the work spent on
//! one record linear in its size, and what counts as content.

use serde::{Deserialize, Serialize};

use crate::settings::Problems;

/// WARC/ARC and corpus ingest limits. Together they keep the work spent on
/// one record roughly linear in its size, whatever an adversary or a damaged
/// file puts in it (see docs/bad-input.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IngestConfig {
    /// Records whose HTTP payload is larger than this, before or after
    /// undoing its Content-Encoding, are rejected as `too_large`; archive
    /// blocks are held in memory up to this (plus 1 MB of HTTP header) and
    /// the rest is read past.
    pub max_payload_bytes: u64,
    /// Documents whose extracted text is shorter (in characters) are rejected as `empty_text`.
    pub min_text_chars: u64,
    /// HTML elements nested deeper than this are flattened: the page is
    /// parsed again with the elements beyond this depth dropped (block
    /// elements become line breaks, text is kept), as browsers flatten such
    /// pages. A page whose tree still nests deeper than twice this is
    /// rejected as `too_deep`. The HTML tree builder's work per element grows
    /// with the depth, so this bounds a page's parse to O(size × depth).
    pub max_html_depth: u32,
    /// HTML tags are cut after this many attributes (the rest dropped; the
    /// document counts as flattened): the tokenizer compares each attribute
    /// with the earlier ones of its tag, so a tag's cost is this squared.
    pub max_html_attributes: u32,
    /// A document's text is cut to at most this many bytes (at a character
    /// boundary) and counted in `ingest_files.text_truncated`: every later
    /// stage, verification's LCS above all, pays for text length.
    pub max_text_bytes: u64,
    /// Only HTTP responses with one of these statuses are content, the
    /// pages deduplicated; the others (404 pages, redirects, errors) stay in
    /// `documents` with `not_content` set and are never clustered (their
    /// bodies are templates: a site's 404 pages are all alike). Empty: every
    /// status. Records without a status (resource, conversion, corpus
    /// lines) are content.
    pub content_statuses: Vec<u16>,
    /// Only HTTP responses and resource records whose declared MIME type
    /// is one of these are documents; others (images, PDFs, scripts) are
    /// rejected as `not_html`. HTML and XHTML are parsed as HTML, every
    /// other listed type is read as plain text (lines kept, charset from
    /// the header, a BOM or detection). A record without a type, or with a
    /// generic one (`application/octet-stream`), is a document when its
    /// body looks like HTML.
    pub content_types: Vec<String>,
    /// A page with `<meta http-equiv="refresh">` and at most this many
    /// words of text is a redirect stub ("Redirecting to …"), not content.
    pub refresh_stub_max_words: u64,
}

impl Default for IngestConfig {
    fn default() -> Self {
        IngestConfig {
            max_payload_bytes: 20 << 20,
            min_text_chars: 1,
            max_html_depth: 512,
            max_html_attributes: 256,
            max_text_bytes: 4 << 20,
            content_statuses: vec![200],
            content_types: ["text/html", "application/xhtml+xml", "text/plain"].map(String::from).to_vec(),
            refresh_stub_max_words: 50,
        }
    }
}

impl IngestConfig {
    /// Refuses limits that would reject every record or lift a bound
    /// altogether: a zero limit is always a mistake in the job file.
    pub fn check(&self, problems: &mut Problems) {
        for (name, value) in [
            ("max_payload_bytes", self.max_payload_bytes),
            ("max_html_depth", u64::from(self.max_html_depth)),
            ("max_html_attributes", u64::from(self.max_html_attributes)),
            ("max_text_bytes", self.max_text_bytes),
        ] {
            problems.at_least("ingest", name, value, 1);
        }
        for (name, value) in
            [("max_html_depth", self.max_html_depth), ("max_html_attributes", self.max_html_attributes)]
        {
            problems.require(value <= MAX_HTML_LIMIT, || {
                format!("[ingest] {name} = {value} must be at most {MAX_HTML_LIMIT} (the parse costs size × this)")
            });
        }
        problems.require(!self.content_types.is_empty(), || {
            "[ingest] content_types is empty: no record would be a document (list text/html at least)".to_string()
        });
        for t in &self.content_types {
            problems.require(t.contains('/') && !t.contains(';') && t.trim() == t, || {
                format!("[ingest] content_types entry {t:?} is not a bare MIME type such as \"text/html\"")
            });
        }
    }
}

/// The largest `max_html_depth` and `max_html_attributes` accepted: beyond
/// it a hostile page could cost minutes again (a 1 MB page is 200,000
/// elements; at depth 10,000 each costs ~10,000 steps of the tree builder).
pub const MAX_HTML_LIMIT: u32 = 10_000;

//! What reading one input file gives back: its counts by outcome, and the
//! batch bounds both readers (crawl archives in [`super`], text corpora in
//! [`super::corpus`]) process records in. A module of its own so that both
//! readers import it and neither the other.

use super::archive::Cut;
use super::record::Outcome;

/// Counts for one ingested file. `records == documents + revisits + rejects
/// + skipped` always holds (a malformed region counts as one record).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSummary {
    /// File name (no directories), as used in the output rows.
    pub file: String,
    /// Archive format of the first record (`WARC/1.0`, `ARC/1`, ...).
    pub format: String,
    /// `none`, `gzip_per_record`, `gzip_whole_file`, or an unsupported one.
    pub compression: String,
    /// Size of the file in bytes.
    pub bytes: u64,
    /// Records and malformed regions read.
    pub records: u64,
    /// Outcomes that are documents.
    pub documents: u64,
    /// Outcomes that are revisits.
    pub revisits: u64,
    /// Outcomes that are rejects (including malformed regions).
    pub rejects: u64,
    /// Outcomes that are skipped record types.
    pub skipped: u64,
    /// Documents whose HTML was simplified to stay within the limits
    /// (nested deeper than `max_html_depth`, or a tag with more than
    /// `max_html_attributes` attributes); a subset of `documents`.
    pub flattened: u64,
    /// Documents whose text was cut to `max_text_bytes`; a subset of
    /// `documents`.
    pub text_truncated: u64,
    /// Documents that are not content ([`super::record::not_content`]); a subset
    /// of `documents`.
    pub not_content: u64,
    /// Documents whose URL is not http(s) ([`super::canonical::is_http_url`]);
    /// a subset of `documents`.
    pub not_http_url: u64,
    /// Where the end of the file cut it short (a crawl file only): what was
    /// read before is kept, the cut record is a `truncated` reject, and the
    /// run tells (exit code 3).
    pub cut: Option<Cut>,
}

impl FileSummary {
    /// Empty counts for `file`.
    pub fn new(file: &str) -> FileSummary {
        FileSummary {
            file: file.to_string(),
            format: String::new(),
            compression: String::new(),
            bytes: 0,
            records: 0,
            documents: 0,
            revisits: 0,
            rejects: 0,
            skipped: 0,
            flattened: 0,
            text_truncated: 0,
            not_content: 0,
            not_http_url: 0,
            cut: None,
        }
    }

    /// Counts one outcome as a record of its kind.
    pub fn count(&mut self, outcome: &Outcome) {
        self.records += 1;
        match outcome {
            Outcome::Document(d) => {
                self.documents += 1;
                self.flattened += u64::from(d.flattened);
                self.text_truncated += u64::from(d.text_truncated);
                self.not_content += u64::from(d.not_content.is_some());
                self.not_http_url += u64::from(!super::canonical::is_http_url(&d.url));
            }
            Outcome::Revisit(_) => self.revisits += 1,
            Outcome::Reject(_) => self.rejects += 1,
            Outcome::Skipped { .. } => self.skipped += 1,
        }
    }

    /// Moves the documents counted in `documents` (a summary of documents
    /// only, counted by [`FileSummary::count`]) to the rejects: documents
    /// found to be rejects after they were read (a repeated record id).
    pub fn reject_documents(&mut self, documents: &FileSummary) {
        self.documents -= documents.documents;
        self.rejects += documents.documents;
        self.flattened -= documents.flattened;
        self.text_truncated -= documents.text_truncated;
        self.not_content -= documents.not_content;
        self.not_http_url -= documents.not_http_url;
    }
}

/// Records are processed in parallel batches of at most this many records ...
pub const BATCH_RECORDS: usize = 256;
/// ... or this many block bytes, which bounds the memory held per file.
pub const BATCH_BYTES: usize = 64 << 20;

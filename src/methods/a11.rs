//! a11 Decomposition (spec §7, study §6.1): the records of its chains.
//!
//! Each document's distinct shingles go to the `shingles` table; the
//! chains, their split by length ratio and the pair rule are SQL
//! (`jobs/a11_shingles.sql`, `jobs/a11_chains.sql`, `jobs/a11_pairs.sql`,
//! `jobs/a11.sql`), and every pair a chain links is
//! compared by `verify` (the comparison is part of the method, see
//! [`super::registry::MethodSpec::includes_comparison`]).

use super::shingles::distinct_shingles;
use super::traits::RecordMethod;
use super::DocView;
use crate::methods::traits::FamilySettings;
use crate::settings::Problems;
use crate::tables::columns::shingles;
use serde::{Deserialize, Serialize};

/// The rows of the `shingles` table: per document its distinct shingles of
/// `shingle_width` terms, with the document's length in kept terms.
pub struct ShingleRecords {
    width: usize,
}

impl ShingleRecords {
    /// Shingles of `width` terms (`[methods] shingle_width`).
    pub fn new(width: usize) -> ShingleRecords {
        ShingleRecords { width }
    }
}

impl RecordMethod for ShingleRecords {
    type Rows = shingles::Rows;
    type Records = Vec<u64>;

    fn records(&self, doc: &DocView<'_>) -> Vec<u64> {
        distinct_shingles(doc.terms, self.width)
    }

    fn append(&self, doc: &DocView<'_>, shingles: &Vec<u64>, rows: &mut shingles::Rows) {
        for &s in shingles {
            rows.shingle.append_value(s);
            rows.doc_id.append_value(doc.doc_id);
            rows.doc_len.append_value(doc.terms.len() as u32);
        }
    }
}

/// The settings of a11 in `[methods]` (`a11_*`; its chains split at the
/// shared `chain_ratio`, its shingles are `shingle_width` wide).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct A11Settings {
    /// A pair is compared only when the chain links between the two
    /// documents (shared shingles met within `max_edges_per_document` steps
    /// of a chain) number at least this share of the smaller document's
    /// distinct shingles; 0 compares every linked pair (the study's a11,
    /// bounded per document). On the full Javadoc crawl, 58% of a11's
    /// comparisons were pairs no other method proposed linked by under 5%
    /// of the shingles: 23,331 comparisons, 54 of them verified.
    #[serde(rename = "a11_min_shared")]
    pub min_shared: f64,
    /// The share of each document's distinct shingles its chains use, the
    /// rarest by global df first (ties by shingle value): the study's "не
    /// все, а выборочно" (not all, selectively), as a prefix filter that
    /// drops the common shingles, whose chains are the long ones, and keeps
    /// pages sharing most of their shingles linked. 1 uses all. Measured on
    /// the shared crawl files: docs/methods.md, "a11".
    #[serde(rename = "a11_prefix_share")]
    pub prefix_share: f64,
}

impl Default for A11Settings {
    fn default() -> Self {
        A11Settings { min_shared: 0.05, prefix_share: 1.0 }
    }
}

impl FamilySettings for A11Settings {
    fn check(&self, p: &mut Problems) {
        p.within("methods", "a11_min_shared", self.min_shared, 0.0, 1.0);
        p.above_up_to("methods", "a11_prefix_share", self.prefix_share, 0.0, 1.0);
    }
}

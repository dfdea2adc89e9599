//! a11 Decomposition (spec §7, study §6.1): the records of its chains.
//!
//! Each document's distinct shingles go to the `shingles` table; the
//! chains, their split by length ratio and the pair rule are SQL
//! (`jobs/a11_shingles.sql`, `jobs/a11.sql`), and every pair a chain links is
//! compared by `verify` (the comparison is part of the method, see
//! [`super::registry::MethodSpec::includes_comparison`]).

use super::registry::RecordMethod;
use super::shingles::distinct_shingles;
use super::{DocView, Signature};
use crate::methods::settings::MethodsConfig;
use crate::tables::columns::shingles;
use crate::tables::write::TableOutput;
use anyhow::Result;
use rayon::prelude::*;

/// Writes the `shingles` table: per document its distinct shingles of
/// `shingle_width` terms, with the document's length in kept terms.
pub struct ShingleRecords {
    width: usize,
}

impl RecordMethod for ShingleRecords {
    type Rows = shingles::Rows;

    /// Reads `shingle_width`.
    fn from_config(cfg: &MethodsConfig) -> ShingleRecords {
        ShingleRecords { width: cfg.shingle_width }
    }

    fn write_records(
        &self,
        docs: &[DocView<'_>],
        out: &mut TableOutput<shingles::Rows>,
    ) -> Result<Vec<Vec<Signature>>> {
        let per_doc: Vec<Vec<u64>> = docs.par_iter().map(|d| distinct_shingles(d.terms, self.width)).collect();
        for (d, shingles) in docs.iter().zip(per_doc) {
            for s in shingles {
                out.push(|b| {
                    b.shingle.append_value(s);
                    b.doc_id.append_value(d.doc_id);
                    b.doc_len.append_value(d.terms.len() as u32);
                })?;
            }
        }
        Ok(Vec::new())
    }
}

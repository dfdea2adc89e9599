//! The `df` and `corpus_stats` tables read back as [`CorpusStats`]: what
//! the methods with corpus-wide state build it from (`stats`, `signatures`).

use anyhow::Result;
use arrow::array::Array;
use futures::StreamExt;

use crate::methods::{CorpusStats, TermStats};
use crate::tables::columns::{corpus_stats, df};

/// Reads `corpus_stats`, and `df` into memory when `terms` (else the
/// dictionary is left empty: the methods that read no term statistics).
pub async fn load_corpus_stats(session: &datafusion::prelude::SessionContext, terms: bool) -> Result<CorpusStats> {
    let mut stats = CorpusStats::default();
    for b in session.sql("SELECT n_docs, dl_avg FROM corpus_stats").await?.collect().await? {
        if b.num_rows() > 0 {
            stats.n_docs = corpus_stats::n_docs(&b)?.value(0).max(0) as u64;
            let avg = corpus_stats::dl_avg(&b)?;
            stats.dl_avg = if avg.is_null(0) { 0.0 } else { avg.value(0) };
        }
    }
    if !terms {
        return Ok(stats);
    }
    let mut rows = Vec::new();
    let mut stream = session.sql("SELECT term, df, cf FROM df").await?.execute_stream().await?;
    while let Some(b) = stream.next().await {
        let b = b?;
        let (terms, df, cf) = (df::term(&b)?, df::df(&b)?, df::cf(&b)?);
        for i in 0..b.num_rows() {
            rows.push((terms.value(i).to_string(), TermStats { df: df.value(i) as u64, cf: cf.value(i) as u64 }));
        }
    }
    stats.terms = rows.into_iter().collect();
    Ok(stats)
}

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
    let mut total_terms = 0i64;
    for b in session.sql("SELECT n_docs, dl_avg, total_terms FROM corpus_stats").await?.collect().await? {
        if b.num_rows() > 0 {
            stats.n_docs = corpus_stats::n_docs(&b)?.value(0).max(0) as u64;
            let avg = corpus_stats::dl_avg(&b)?;
            stats.dl_avg = if avg.is_null(0) { 0.0 } else { avg.value(0) };
            let total = corpus_stats::total_terms(&b)?;
            total_terms = if total.is_null(0) { 0 } else { total.value(0) };
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
    // `stats` leaves `df` empty when no method enabled then reads term
    // statistics: a stage rerun alone with such a method must not sign
    // with an empty dictionary.
    if rows.is_empty() && total_terms > 0 {
        anyhow::bail!(
            "table df is empty: no method enabled when the `stats` stage ran reads term statistics; \
             rerun the pipeline from stage `stats` with this run's methods (`pipeline run --stage all`)"
        );
    }
    stats.terms = rows.into_iter().collect();
    Ok(stats)
}

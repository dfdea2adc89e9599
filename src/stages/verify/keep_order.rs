//! The keep order (`[dedup] keep`) in SQL: the one owner of
//! `jobs/keep_columns.sql` (the columns a night's documents are ranked by)
//! and `jobs/keep_order.sql` (their keep ranks), which the jobs that rank
//! documents splice in: `verify_pairs`' ranked pairs, `exact`'s and
//! `tokens`' copies, the history's clusters across crawls. One owner, so
//! every stage ranks by the same columns and the same order.

use crate::verify::settings::DedupConfig;

/// The SQL of the columns [`DedupConfig::keep_order`] ranks a night's
/// documents by (`jobs/keep_columns.sql`).
const KEEP_COLUMNS: &str = include_str!("../../../jobs/keep_columns.sql");

/// The keep rank of every document of `documents`
/// (`jobs/keep_order.sql`), with [`keep_params`] substituted: the
/// `${keep_ranks}` of `jobs/ranked_pairs.sql`.
pub const KEEP_ORDER: &str = include_str!("../../../jobs/keep_order.sql");

/// The parameters of every job that ranks documents by the keep rule
/// (`keep_order.sql`, `crawl_clusters.sql`, the copies' jobs):
/// `${keep_order}`, the order, and `${keep_columns}`, the columns it ranks
/// by.
pub fn keep_params(dedup: &DedupConfig) -> [(&'static str, String); 2] {
    [("keep_order", dedup.keep_order()), ("keep_columns", KEEP_COLUMNS.to_string())]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::sql::substitute;

    /// The keep order of `jobs/keep_order.sql` under two rules: the copy at
    /// its canonical URL first, or the earliest crawl date (unknown dates
    /// last), then the longest text, then the smallest doc_id; under both,
    /// a page at a URL that is not http(s) after every http(s) page.
    #[test]
    fn keep_order_follows_the_keep_rule() {
        use crate::tables::columns::documents;
        use crate::verify::settings::KeepRule;
        use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray, UInt16Array, UInt64Array};
        use std::sync::Arc;
        let ids = [1u64, 2, 3, 4, 5, 6];
        let urls = ["http://t/a?utm_source=x", "http://t/a", "http://t/b", "http://t/c", "HTTPS://t/d", "javascript:x"];
        let canonical = ["http://t/a", "http://t/a", "http://t/b", "http://t/c", "HTTPS://t/d", "javascript:x"];
        let dates =
            [Some("2024-01-01"), Some("2024-03-01"), Some("2024-01-01"), None, Some("2024-01-01"), Some("2023-01-01")];
        let texts = ["longer one", "x", "longer two", "the longest text", "short", "the very longest text"];
        let documents = RecordBatch::try_from_iter([
            ("doc_id", Arc::new(UInt64Array::from(ids.to_vec())) as ArrayRef),
            ("url", Arc::new(StringArray::from(urls.to_vec()))),
            ("canonical_url", Arc::new(StringArray::from(canonical.to_vec()))),
            ("crawl_date", Arc::new(StringArray::from(dates.to_vec()))),
            ("http_status", Arc::new(UInt16Array::from(vec![200u16; 6]))),
            (
                "text_chars",
                Arc::new(Int64Array::from(texts.iter().map(|t| t.chars().count() as i64).collect::<Vec<_>>())),
            ),
        ])
        .unwrap();
        let order = |keep: KeepRule| -> Vec<u64> {
            let session = datafusion::prelude::SessionContext::new();
            session.register_batch("documents", documents.clone()).unwrap();
            let dedup = DedupConfig { keep, ..DedupConfig::default() };
            let sql = substitute(KEEP_ORDER, &keep_params(&dedup));
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let batches = runtime.block_on(async { session.sql(&sql).await.unwrap().collect().await.unwrap() });
            let mut ranked: Vec<(u64, u64)> = batches
                .iter()
                .flat_map(|b| {
                    let ids = documents::doc_id(b).unwrap().clone();
                    let ranks = crate::tables::column::<UInt64Array>(b, "keep_rank").unwrap().clone();
                    (0..b.num_rows()).map(move |i| (ranks.value(i), ids.value(i)))
                })
                .collect();
            ranked.sort_unstable();
            ranked.into_iter().map(|(_, id)| id).collect()
        };
        // 1 and 3 tie on date and length: the smaller id first. 6, crawled
        // first with the longest text, is at no web URL: last.
        assert_eq!(order(KeepRule::EarliestCrawl), [1, 3, 5, 2, 4, 6]);
        // The utm copy 1 goes behind its canonical copy 2, though crawled
        // earlier; 6 is at its canonical URL, but no web page.
        assert_eq!(order(KeepRule::CanonicalUrl), [3, 5, 2, 4, 1, 6]);
        assert_eq!(order(KeepRule::LongestText), [4, 1, 3, 5, 2, 6]);
    }
}

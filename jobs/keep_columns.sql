-- The columns the keep order ranks a night's documents by ([dedup] keep,
-- src/verify/settings.rs `keep_order`), one row per document of
-- `documents`: its URL, canonical URL, crawl date, HTTP status and the
-- length of its text. Substituted into the jobs that
-- rank (keep_order.sql for verify, crawl_clusters.sql for the history),
-- so both rank by the same columns.
-- The text's length is documents.text_chars, counted at ingest: never the
-- text itself, which every ranking job would otherwise decompress whole
-- to measure it (on the Javadoc texts, most of `exact`, `verify_pairs`,
-- `place` and `decide`), and which a join under a memory limit would sort
-- with the ids (at 8 copies of the Javadoc crawl under `--memory-limit
-- 2G`, `verify` peaked at 835 MB when it did).
SELECT doc_id, url, canonical_url, crawl_date, http_status, text_chars
FROM documents

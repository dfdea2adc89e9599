-- The columns the keep order ranks a night's documents by ([dedup] keep,
-- src/verify/settings.rs `keep_order`), one row per document of
-- `documents`: its URL, canonical URL, crawl date, HTTP status and the
-- length of its text. Substituted into the jobs that
-- rank (keep_order.sql for verify, crawl_clusters.sql for the history),
-- so both rank by the same columns.
-- The text's length is taken here, before any join: under a memory limit
-- a join is a sort-merge join, which otherwise sorted the texts with
-- their ids (at 8 copies of the Javadoc crawl under `--memory-limit 2G`,
-- `verify` peaked at 835 MB; at 2 copies matched against 1, the history's
-- clusters failed with "Not enough memory to continue external sort").
SELECT doc_id, url, canonical_url, crawl_date, http_status,
       CAST(character_length(text) AS BIGINT) AS text_chars
FROM documents

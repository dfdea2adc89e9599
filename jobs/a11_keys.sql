-- a11's records as group keys for matching a night against the history
-- (jobs/history_edges.sql): each shingle of ${records} (the night's
-- rarest shingles of each page, jobs/a11_rare_shingles.sql, or every
-- shingle the history keeps of an earlier crawl) with its document.
-- Gives (method, slot, sig, doc_id, doc_len, crawl).
SELECT 'a11' AS method, CAST(0 AS SMALLINT UNSIGNED) AS slot, shingle AS sig, doc_id, doc_len, ${crawl} AS crawl
FROM ${records}

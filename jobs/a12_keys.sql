-- a12's records as group keys for matching a night against the history
-- (jobs/history_edges.sql): each record's key sentence signature, as in
-- a12_groups.sql, with its document and length.
-- Gives (method, slot, sig, doc_id, doc_len, crawl).
SELECT 'a12' AS method, CAST(0 AS SMALLINT UNSIGNED) AS slot, CAST(key AS BIGINT UNSIGNED) AS sig,
       doc_id, len AS doc_len, ${crawl} AS crawl
FROM ${records}

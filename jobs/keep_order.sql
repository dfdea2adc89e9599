-- The keep order of a night's documents ([dedup] keep): placement takes
-- documents in this order, so the first document of a cluster is the copy
-- kept and every other member verified against it. keep_rank numbers
-- every document of `documents` from 1. `${keep_order}` ranks over crawl
-- (the same for every document of a single run), doc_id, url,
-- canonical_url, crawl_date, http_status and text_chars, and always ends
-- with doc_id: a total order, the same whatever the sharding. text_chars
-- comes along for what a pair's comparison costs.
-- Reads `documents` (its columns as keep_columns.sql gives them).
SELECT doc_id, text_chars, ROW_NUMBER() OVER (ORDER BY ${keep_order}) AS keep_rank
FROM (
    SELECT d.doc_id, d.url, d.canonical_url, d.crawl_date, d.http_status, d.text_chars, '' AS crawl
    FROM (${keep_columns}) d
) members

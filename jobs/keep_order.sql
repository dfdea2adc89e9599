-- The keep order of one verify task's documents ([dedup] keep): placement
-- takes a component's documents in this order, so the first document of a
-- cluster is the copy kept and every other member verified against it.
-- `${keep_order}` ranks over crawl (the same for every document of a single
-- run), doc_id, url, canonical_url, crawl_date, http_status and text_chars,
-- and always ends with doc_id: a total order, so a component's documents
-- keep their relative order whatever else the task holds (any sharding).
-- Reads `documents` (its columns as keep_columns.sql gives them) and
-- `own_docs(doc_id)`, the task's documents.
SELECT doc_id, url,
       ROW_NUMBER() OVER (ORDER BY ${keep_order}) AS keep_rank
FROM (
    SELECT d.doc_id, d.url, d.canonical_url, d.crawl_date, d.http_status, d.text_chars, '' AS crawl
    FROM (${keep_columns}) d
    JOIN own_docs o ON o.doc_id = d.doc_id
) members

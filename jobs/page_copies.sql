-- The content documents whose page text (documents.text) an earlier
-- document of the same host has, in the keep order ([dedup] keep): stage
-- `tokens` gives them their visible text and its digest but not the lists
-- the methods read (terms, words, sentences), since they go no further
-- than the `exact` stage.
--
-- Why that is safe: the same host and page text give the same visible
-- text (the host's template lines are removed alike), so such a group lies
-- inside one exact group (the same tokens.text_digest). The keep order is
-- a total order, so the first of an exact group is the first of its own
-- host-and-text group: it is never listed here, and it is the document
-- the later stages read (exact_copies.sql leaves out every other member).
--
-- One bounded group-by: the documents' (host, page text) digests from
-- `blocks` (a document of a URL without a host has no blocks and is never
-- listed), the groups of two or more first, then the keep order over
-- their members only. `${own}` restricts the result to the task's
-- documents. Reads `blocks` and `documents`.
WITH pages AS (
    SELECT DISTINCT b.doc_id, b.host_hash, b.text_hash
    FROM blocks b
    JOIN (SELECT doc_id FROM documents WHERE not_content IS NULL) c ON c.doc_id = b.doc_id
),
grouped AS (
    SELECT host_hash, text_hash
    FROM pages
    GROUP BY host_hash, text_hash
    HAVING COUNT(*) > 1
),
members AS (
    SELECT p.doc_id, p.host_hash, p.text_hash, d.url, d.canonical_url, d.crawl_date, d.http_status, d.text_chars,
           '' AS crawl
    FROM pages p
    JOIN grouped g ON g.host_hash = p.host_hash AND g.text_hash = p.text_hash
    JOIN (${keep_columns}) d ON d.doc_id = p.doc_id
),
ranked AS (
    SELECT doc_id,
           ROW_NUMBER() OVER (PARTITION BY host_hash, text_hash ORDER BY ${keep_order}) AS nth
    FROM members
)
SELECT doc_id
FROM ranked
WHERE nth > 1 AND ${own}
ORDER BY doc_id

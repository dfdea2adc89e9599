-- Exact copies (stage exact, table exact_copies): documents whose
-- verification text is identical (the same tokens.text_digest) form an
-- exact group; its first document in the keep order ([dedup] keep, the
-- order verify places documents in: keep_order.sql over keep_columns.sql)
-- goes on through the near-duplicate search, and every other member is
-- listed here with that first one. Later stages leave these documents out
-- and decide follows each one's first (spec section 9, "Exact copies
-- first").
--
-- One bounded group-by over the whole crawl: the digests of two or more
-- documents first, then the keep order over those groups' members only
-- (most documents are in no group). Reads `tokens` and `documents`.
WITH grouped AS (
    SELECT text_digest
    FROM tokens
    GROUP BY text_digest
    HAVING COUNT(*) > 1
),
members AS (
    SELECT t.doc_id, t.text_digest, d.url, d.canonical_url, d.crawl_date, d.http_status, d.text_chars,
           '' AS crawl
    FROM (SELECT doc_id, text_digest FROM tokens) t
    JOIN grouped g ON g.text_digest = t.text_digest
    JOIN (${keep_columns}) d ON d.doc_id = t.doc_id
),
ranked AS (
    SELECT doc_id, text_digest,
           ROW_NUMBER() OVER (PARTITION BY text_digest ORDER BY ${keep_order}) AS nth
    FROM members
)
SELECT c.doc_id, f.doc_id AS first_doc_id, c.text_digest
FROM ranked c
JOIN ranked f ON f.text_digest = c.text_digest AND f.nth = 1
WHERE c.nth > 1
ORDER BY c.doc_id

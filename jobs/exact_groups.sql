-- The exact groups for the people who run the crawler (table
-- exact_groups): one row per group of two or more documents with the same
-- verification text, the largest first. Reads `exact_copies` (the members
-- that are not first, exact_copies.sql) and `documents`.
WITH members AS (
    SELECT doc_id, first_doc_id, text_digest FROM exact_copies
    UNION ALL
    SELECT DISTINCT first_doc_id AS doc_id, first_doc_id, text_digest FROM exact_copies
)
SELECT m.text_digest,
       COUNT(*) AS documents,
       m.first_doc_id,
       MAX(CASE WHEN d.doc_id = m.first_doc_id THEN d.url END) AS first_url,
       COUNT(DISTINCT d.url) AS distinct_urls
FROM members m
JOIN (SELECT doc_id, url FROM documents) d ON d.doc_id = m.doc_id
GROUP BY m.text_digest, m.first_doc_id
ORDER BY documents DESC, m.first_doc_id

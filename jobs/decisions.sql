-- One decision per document (table decisions): kept, or removed as a
-- duplicate of its cluster's kept copy, or not content. Reads `documents`,
-- `clusters`, `tokens` and `exact_copies`.
--
-- The kept copy of a cluster is its representative: verification placed
-- the documents in the keep order ([dedup] keep), so the representative is
-- the first member in that order and every other member verified against
-- it. An exact copy (exact_copies) was placed in its first's cluster: the
-- first's outcome is its own (spec section 9, "Exact copies first"). A
-- removed member is an exact duplicate when its verification text has the
-- same digest as the kept copy's (tokens.text_digest), else a
-- near-duplicate. Documents that are not content (documents.not_content)
-- were never clustered. With --history, decisions_history.sql applies the
-- clusters across crawls to these rows (duplicate_of_crawl is set there).
WITH members AS (
    SELECT c.doc_id, c.cluster_id, c.cluster_size, c.is_representative,
           c.similarity_to_representative, t.text_digest
    FROM clusters c
    JOIN (SELECT doc_id, text_digest FROM tokens) t ON t.doc_id = c.doc_id
),
placed AS (
    SELECT m.doc_id, m.cluster_id, m.cluster_size, m.is_representative,
           m.similarity_to_representative, m.text_digest = k.text_digest AS same_text
    FROM members m
    JOIN members k ON k.doc_id = m.cluster_id
)
SELECT d.doc_id, d.url, d.warc_file, d.warc_offset, d.warc_length,
       d.crawl_date, d.http_status,
       COALESCE(p.is_representative, TRUE) AS is_kept,
       CASE WHEN NOT p.is_representative THEN p.cluster_id END AS duplicate_of,
       CAST(NULL AS VARCHAR) AS duplicate_of_crawl,
       CASE WHEN NOT p.is_representative THEN p.similarity_to_representative END AS similarity,
       p.cluster_id, p.cluster_size,
       CASE WHEN d.not_content IS NOT NULL THEN 'not_content'
            WHEN p.cluster_id IS NULL THEN 'unique'
            WHEN p.is_representative THEN 'kept'
            WHEN p.same_text THEN 'exact_duplicate'
            ELSE 'near_duplicate'
       END AS reason,
       d.not_content AS detail,
       e.first_doc_id AS exact_copy_of
FROM documents d
LEFT JOIN placed p ON p.doc_id = d.doc_id
LEFT JOIN exact_copies e ON e.doc_id = d.doc_id
ORDER BY d.warc_file, d.warc_offset, d.doc_id

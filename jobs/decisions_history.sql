-- The night's decisions with --history DIR (stage decide, after the
-- history's stages; [history] mark "any" or "new-only"): the night's own
-- decisions (jobs/decisions.sql, `night` below) changed for its pages in a
-- cluster across crawls (crawl_clusters) that holds a page of an earlier
-- crawl. Such a page is kept when crawl_clusters does not mark it, else
-- removed as a duplicate of the cluster's kept copy:
--   - a page of an earlier crawl: reason `repeat`, duplicate_of_crawl names
--     the crawl, the similarity is the verified one of `repeats` (an exact
--     copy takes its first's, exact_copy_of, which alone was matched);
--   - one of the night's pages: exact or near-duplicate by the texts'
--     digests (tokens.text_digest), as in the night's own decisions.
-- A removed page that reached its kept copy only through other members
-- (never compared with it) has no similarity. The cluster's id and size
-- are those across crawls. Clusters of the night's pages alone keep the
-- night's decisions. ${night} is the night's crawl id.
WITH night AS (
${night_decisions}
),
earlier_clusters AS (
    SELECT DISTINCT cluster_id, cluster_crawl FROM crawl_clusters WHERE crawl <> ${night}
),
across AS (
    SELECT m.doc_id, m.cluster_id, m.cluster_crawl, m.cluster_size, m.is_duplicate
    FROM crawl_clusters m
    JOIN earlier_clusters e ON e.cluster_id = m.cluster_id AND e.cluster_crawl = m.cluster_crawl
    WHERE m.crawl = ${night}
),
digests AS (
    SELECT doc_id, text_digest FROM tokens
)
SELECT n.doc_id, n.url, n.warc_file, n.warc_offset, n.warc_length, n.crawl_date, n.http_status,
       CASE WHEN a.doc_id IS NULL THEN n.is_kept ELSE NOT a.is_duplicate END AS is_kept,
       CASE WHEN a.doc_id IS NULL THEN n.duplicate_of WHEN a.is_duplicate THEN a.cluster_id END AS duplicate_of,
       CASE WHEN a.is_duplicate AND a.cluster_crawl <> ${night} THEN a.cluster_crawl END AS duplicate_of_crawl,
       CASE WHEN a.doc_id IS NULL THEN n.similarity
            WHEN NOT a.is_duplicate THEN CAST(NULL AS DOUBLE)
            WHEN a.cluster_crawl <> ${night} THEN r.similarity
            WHEN a.cluster_id = n.duplicate_of THEN n.similarity
            WHEN t.text_digest = k.text_digest THEN 1.0
       END AS similarity,
       COALESCE(a.cluster_id, n.cluster_id) AS cluster_id,
       COALESCE(a.cluster_size, n.cluster_size) AS cluster_size,
       CASE WHEN a.doc_id IS NULL THEN n.reason
            WHEN NOT a.is_duplicate THEN 'kept'
            WHEN a.cluster_crawl <> ${night} THEN 'repeat'
            WHEN t.text_digest = k.text_digest THEN 'exact_duplicate'
            ELSE 'near_duplicate'
       END AS reason,
       n.detail,
       n.exact_copy_of
FROM night n
LEFT JOIN across a ON a.doc_id = n.doc_id
LEFT JOIN repeats r
       ON r.doc_id = COALESCE(n.exact_copy_of, n.doc_id)
      AND r.earlier_doc_id = a.cluster_id AND r.earlier_crawl = a.cluster_crawl
LEFT JOIN digests t ON t.doc_id = n.doc_id
LEFT JOIN digests k ON k.doc_id = a.cluster_id AND a.cluster_crawl = ${night}
ORDER BY n.warc_file, n.warc_offset, n.doc_id

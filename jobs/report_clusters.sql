-- The largest clusters of near-duplicates, for `pipeline report`: the
-- ${clusters} biggest clusters (ties: smaller cluster id first), each with up
-- to ${urls_per_cluster} member URLs, the representative (the kept document)
-- first, then by doc_id.
-- Reads `clusters`, `documents`.
WITH largest AS (
    SELECT DISTINCT cluster_id, cluster_size
    FROM clusters
    WHERE cluster_size > 1
    ORDER BY cluster_size DESC, cluster_id
    LIMIT ${clusters}
),
members AS (
    SELECT l.cluster_id, l.cluster_size, c.is_representative, c.similarity_to_representative,
           d.url, d.title,
           ROW_NUMBER() OVER (
               PARTITION BY l.cluster_id
               ORDER BY c.is_representative DESC, c.doc_id
           ) AS member_rank
    FROM largest l
    JOIN clusters c ON c.cluster_id = l.cluster_id
    JOIN documents d ON d.doc_id = c.doc_id
)
SELECT cluster_id, cluster_size, is_representative, similarity_to_representative, url, title
FROM members
WHERE member_rank <= ${urls_per_cluster}
ORDER BY cluster_size DESC, cluster_id, member_rank

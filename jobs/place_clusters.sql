-- The rows of `clusters`: every member of a cluster of two or more by
-- document id, with its cluster (the representative's id), the cluster's
-- size and the member's similarity to the representative (none for it).
-- `placed` is what the place stage's last pass joined (doc_id,
-- cluster_id, similarity); the exact copies (`exact_copies`, stage
-- `exact`) were in no candidate pair: each joins its first's cluster,
-- with similarity 1 to a first that is the representative, else the
-- first's own (the texts are identical), and a first in no cluster
-- becomes the representative of a cluster of its copies (spec §9,
-- "Exact copies first").
-- Reads `placed` (registered by the stage), `exact_copies`.
WITH members AS (
    SELECT doc_id, cluster_id, similarity FROM placed
    UNION ALL
    SELECT DISTINCT cluster_id AS doc_id, cluster_id, CAST(NULL AS DOUBLE) AS similarity FROM placed
),
copies AS (
    SELECT e.doc_id,
           COALESCE(m.cluster_id, e.first_doc_id) AS cluster_id,
           CASE WHEN m.doc_id IS NOT NULL AND m.doc_id <> m.cluster_id THEN m.similarity ELSE 1.0 END AS similarity
    FROM exact_copies e
    LEFT JOIN members m ON m.doc_id = e.first_doc_id
),
lone_firsts AS (
    SELECT DISTINCT e.first_doc_id AS doc_id, e.first_doc_id AS cluster_id, CAST(NULL AS DOUBLE) AS similarity
    FROM exact_copies e
    LEFT JOIN members m ON m.doc_id = e.first_doc_id
    WHERE m.doc_id IS NULL
),
rows AS (
    SELECT * FROM members
    UNION ALL
    SELECT * FROM copies
    UNION ALL
    SELECT * FROM lone_firsts
)
SELECT doc_id,
       cluster_id,
       CAST(COUNT(*) OVER (PARTITION BY cluster_id) AS BIGINT UNSIGNED) AS cluster_size,
       doc_id = cluster_id AS is_representative,
       similarity AS similarity_to_representative
FROM rows
ORDER BY cluster_id, doc_id <> cluster_id, doc_id

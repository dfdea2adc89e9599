-- Per method (its found pairs, see `proposed`) and for `final` (the
-- verified comparisons of `duplicates` and the pairs of one cluster of
-- `clusters`): the proposed pairs judged against human labels (`pipeline
-- run --gold FILE`, loaded into `gold_pairs` and `gold_clusters`): tp, fp,
-- fn, precision, recall and F1 = 2PR/(P+R) = 2tp/(2tp+fp+fn).
--
-- Keys: `id` keys match documents.record_id (corpus id, WARC-Record-ID),
-- `url` keys match documents.url. A key naming several documents (the same
-- id in two files, a URL crawled twice) stands for each of them.
-- Labels: a stated pair is positive when label >= ${positive_min_label},
-- negative when label <= ${negative_max_label}, not judged in between; a
-- line with `dup` instead of a label says it directly. A pair stated several
-- times is positive when any of its judged statements is. Clusters: every
-- two documents of one cluster are a positive pair; two labeled documents of
-- different clusters are a negative pair, counted only when proposed (they
-- are never enumerated). Stated pairs take precedence over clusters.
--
-- Judged over labeled pairs only: a proposed pair that no label covers is
-- neither a tp nor an fp. Gold sets label a sample of pairs; counting every
-- unlabeled proposal as false would charge a method for pairs nobody looked
-- at. fn counts every positive pair the method did not propose.
-- Without gold labels the table is empty.
-- Only the first of an exact group was searched (exact_copies lists the
-- others): every method would find every pair inside a group (identical
-- verification texts give identical signatures), so those pairs count as
-- found by every method, among the labeled documents only.
-- Reads `documents`, `candidates`, `duplicates`, `clusters`, `exact_copies`,
-- `gold_pairs`, `gold_clusters`; writes `gold_quality`.
WITH enabled(method) AS (VALUES ${enabled_methods}),
comparing(method) AS (VALUES ${comparing_methods}),
doc_keys AS (
    SELECT doc_id, 'id' AS key_kind, record_id AS key FROM documents WHERE record_id IS NOT NULL
    UNION ALL
    SELECT doc_id, 'url' AS key_kind, url AS key FROM documents
),
stated AS (
    SELECT LEAST(a.doc_id, b.doc_id) AS doc_a,
           GREATEST(a.doc_id, b.doc_id) AS doc_b,
           CASE WHEN g.label IS NULL THEN g.dup
                WHEN g.label >= ${positive_min_label} THEN TRUE
                WHEN g.label <= ${negative_max_label} THEN FALSE
           END AS positive
    FROM gold_pairs g
    JOIN doc_keys a ON a.key_kind = g.key_kind AND a.key = g.key_a
    JOIN doc_keys b ON b.key_kind = g.key_kind AND b.key = g.key_b
    WHERE a.doc_id <> b.doc_id
),
stated_pairs AS (
    SELECT doc_a, doc_b, bool_or(positive) AS positive
    FROM stated
    WHERE positive IS NOT NULL
    GROUP BY doc_a, doc_b
),
members AS (
    SELECT k.doc_id, MIN(g.cluster) AS cluster
    FROM gold_clusters g
    JOIN doc_keys k ON k.key_kind = g.key_kind AND k.key = g.key
    GROUP BY k.doc_id
),
cluster_pairs AS (
    SELECT x.doc_id AS doc_a, y.doc_id AS doc_b
    FROM members x
    JOIN members y ON x.cluster = y.cluster AND x.doc_id < y.doc_id
),
labeled AS (
    SELECT doc_a, doc_b, positive FROM stated_pairs
    UNION ALL
    SELECT c.doc_a, c.doc_b, TRUE AS positive
    FROM cluster_pairs c
    LEFT JOIN stated_pairs s ON s.doc_a = c.doc_a AND s.doc_b = c.doc_b
    WHERE s.doc_a IS NULL
),
totals AS (
    SELECT COALESCE(SUM(CASE WHEN positive THEN 1 ELSE 0 END), 0) AS positives,
           COALESCE(SUM(CASE WHEN positive THEN 0 ELSE 1 END), 0) AS negatives
    FROM labeled
),
gold_keys AS (
    SELECT key_kind, key_a AS key FROM gold_pairs
    UNION ALL
    SELECT key_kind, key_b AS key FROM gold_pairs
    UNION ALL
    SELECT key_kind, key FROM gold_clusters
),
clustered AS (
    -- The labeled documents that ended in a cluster. (Found from the gold
    -- keys directly, not through `labeled`: a shallower plan, which
    -- Ballista must decode within protobuf's nesting limit.)
    SELECT DISTINCT c.doc_id, c.cluster_id
    FROM clusters c
    JOIN doc_keys k ON k.doc_id = c.doc_id
    JOIN gold_keys g ON g.key_kind = k.key_kind AND g.key = k.key
),
exact_members AS (
    -- The labeled documents of exact groups, with their group's first.
    SELECT DISTINCT m.doc_id, m.first_doc_id
    FROM (SELECT doc_id, first_doc_id FROM exact_copies
          UNION ALL
          SELECT first_doc_id AS doc_id, first_doc_id FROM exact_copies) m
    JOIN doc_keys k ON k.doc_id = m.doc_id
    JOIN gold_keys g ON g.key_kind = k.key_kind AND g.key = k.key
),
final_pairs AS (
    -- The final result finds a pair when it is a verified comparison or both
    -- documents ended in one cluster (only labeled documents are paired up,
    -- so this never enumerates a big cluster's pairs).
    SELECT doc_a, doc_b FROM duplicates WHERE verified
    UNION
    SELECT x.doc_id AS doc_a, y.doc_id AS doc_b
    FROM clustered x
    JOIN clustered y ON x.cluster_id = y.cluster_id AND x.doc_id < y.doc_id
),
labeled_firsts AS (
    -- Every labeled document with the first of its exact group (itself
    -- when it is a first or in no group).
    SELECT k.doc_id, COALESCE(MIN(e.first_doc_id), k.doc_id) AS first_doc_id
    FROM doc_keys k
    JOIN gold_keys g ON g.key_kind = k.key_kind AND g.key = k.key
    LEFT JOIN exact_copies e ON e.doc_id = k.doc_id
    GROUP BY k.doc_id
),
found AS (
    -- A method's found pairs among the groups' firsts: its candidate pairs,
    -- or for the methods whose comparison is part of the method (a11) the
    -- ones that passed it in verify, which compares each of them.
    SELECT DISTINCT c.method, c.doc_a, c.doc_b
    FROM candidates c
    LEFT JOIN duplicates d ON d.doc_a = c.doc_a AND d.doc_b = c.doc_b
    WHERE c.method NOT IN (SELECT method FROM comparing) OR d.verified
),
proposed AS (
    -- Each found pair stands for the pairs of the copies of its two ends
    -- (identical texts, identical signatures: the method would have found
    -- them all), among the labeled documents, the only ones judged.
    SELECT f.method, LEAST(x.doc_id, y.doc_id) AS doc_a, GREATEST(x.doc_id, y.doc_id) AS doc_b
    FROM found f
    JOIN labeled_firsts x ON x.first_doc_id = f.doc_a
    JOIN labeled_firsts y ON y.first_doc_id = f.doc_b
    UNION ALL
    SELECT e.method, x.doc_id AS doc_a, y.doc_id AS doc_b
    FROM enabled e
    CROSS JOIN exact_members x
    JOIN exact_members y ON x.first_doc_id = y.first_doc_id AND x.doc_id < y.doc_id
    UNION ALL
    SELECT 'final' AS method, doc_a, doc_b FROM final_pairs
),
judged AS (
    SELECT p.method,
           CASE WHEN l.positive IS NOT NULL THEN l.positive
                WHEN ma.cluster <> mb.cluster THEN FALSE
           END AS positive
    FROM proposed p
    LEFT JOIN labeled l ON l.doc_a = p.doc_a AND l.doc_b = p.doc_b
    LEFT JOIN members ma ON ma.doc_id = p.doc_a
    LEFT JOIN members mb ON mb.doc_id = p.doc_b
),
per_method AS (
    SELECT method,
           SUM(CASE WHEN positive THEN 1 ELSE 0 END) AS tp,
           SUM(CASE WHEN positive THEN 0 ELSE 1 END) AS fp
    FROM judged
    WHERE positive IS NOT NULL
    GROUP BY method
),
systems AS (
    SELECT method FROM enabled
    UNION ALL
    SELECT 'final' AS method
),
gold_lines AS (
    SELECT (SELECT COUNT(*) FROM gold_pairs) + (SELECT COUNT(*) FROM gold_clusters) AS n
),
counted AS (
    SELECT s.method, t.positives, t.negatives,
           COALESCE(p.tp, 0) AS tp,
           COALESCE(p.fp, 0) AS fp,
           t.positives - COALESCE(p.tp, 0) AS fn
    FROM systems s
    LEFT JOIN per_method p ON p.method = s.method
    CROSS JOIN totals t
    CROSS JOIN gold_lines g
    WHERE g.n > 0
)
SELECT method, positives, negatives, tp, fp, fn,
       CASE WHEN tp + fp > 0 THEN CAST(tp AS DOUBLE) / CAST(tp + fp AS DOUBLE) END AS precision,
       CASE WHEN positives > 0 THEN CAST(tp AS DOUBLE) / CAST(positives AS DOUBLE) END AS recall,
       CASE WHEN tp > 0 THEN 2.0 * CAST(tp AS DOUBLE) / CAST(2 * tp + fp + fn AS DOUBLE) END AS f1
FROM counted
ORDER BY method = 'final', method

-- Per method (the study's Tables 2 and 3): pairs found, pairs verified,
-- precision = verified / found, recall = verified / pool where the pool is
-- the union of verified pairs of all methods, and F1 = 2PR / (P + R).
-- Every enabled method gets a row, also when it found nothing.
-- Reads `candidates`, `duplicates`; writes `method_quality`.
WITH enabled(method) AS (VALUES ${enabled_methods}),
found AS (
    SELECT DISTINCT method, doc_a, doc_b FROM candidates
),
judged AS (
    SELECT f.method, d.verified
    FROM found f
    JOIN duplicates d ON d.doc_a = f.doc_a AND d.doc_b = f.doc_b
),
per_method AS (
    SELECT method,
           COUNT(*) AS pairs_found,
           SUM(CASE WHEN verified THEN 1 ELSE 0 END) AS pairs_verified
    FROM judged
    GROUP BY method
),
pool AS (
    SELECT COUNT(*) AS n FROM duplicates WHERE verified
),
scored AS (
    SELECT e.method,
           COALESCE(p.pairs_found, 0) AS pairs_found,
           COALESCE(p.pairs_verified, 0) AS pairs_verified,
           CASE WHEN COALESCE(p.pairs_found, 0) = 0 THEN NULL
                ELSE CAST(p.pairs_verified AS DOUBLE) / CAST(p.pairs_found AS DOUBLE) END AS precision,
           CASE WHEN pool.n = 0 THEN NULL
                ELSE CAST(COALESCE(p.pairs_verified, 0) AS DOUBLE) / CAST(pool.n AS DOUBLE) END AS recall
    FROM enabled e
    LEFT JOIN per_method p ON p.method = e.method
    CROSS JOIN pool
)
SELECT method, pairs_found, pairs_verified, precision, recall,
       CASE WHEN precision + recall > 0 THEN 2.0 * precision * recall / (precision + recall) END AS f1
FROM scored
ORDER BY method

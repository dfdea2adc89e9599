-- Dice coefficient 2|A∩B| / (|A| + |B|) between the verified pair sets A and
-- B of every two methods (the study's Table 4), diagonal included so the
-- report can draw the full heat map.
-- Reads `candidates`, `duplicates`; writes `method_overlap`.
WITH verified AS (
    SELECT DISTINCT c.method, c.doc_a, c.doc_b
    FROM candidates c
    JOIN duplicates d ON d.doc_a = c.doc_a AND d.doc_b = c.doc_b
    WHERE d.verified
),
sizes AS (
    SELECT method, COUNT(*) AS n FROM verified GROUP BY method
),
common AS (
    SELECT x.method AS method_a, y.method AS method_b, COUNT(*) AS n
    FROM verified x
    JOIN verified y ON x.doc_a = y.doc_a AND x.doc_b = y.doc_b
    GROUP BY x.method, y.method
)
SELECT sa.method AS method_a, sb.method AS method_b,
       COALESCE(c.n, 0) AS common,
       2.0 * CAST(COALESCE(c.n, 0) AS DOUBLE) / CAST(sa.n + sb.n AS DOUBLE) AS dice
FROM sizes sa
CROSS JOIN sizes sb
LEFT JOIN common c ON c.method_a = sa.method AND c.method_b = sb.method
ORDER BY method_a, method_b

-- All candidate pairs, one row per (pair, method), from the exact-match
-- methods (exact_pairs = candidates_exact.sql), the chain methods
-- (a11_pairs = a11.sql, a12_pairs = a12.sql) and the methods with their own
-- search (method_pairs: spotsigs, slst, with their Jaccard as score).
-- minhash rows get their resemblance from `sketches` afterwards.
SELECT doc_a, doc_b, method, CAST(NULL AS DOUBLE) AS score FROM exact_pairs
UNION ALL
SELECT doc_a, doc_b, method, CAST(NULL AS DOUBLE) AS score FROM a11_pairs
UNION ALL
SELECT doc_a, doc_b, method, CAST(NULL AS DOUBLE) AS score FROM a12_pairs
UNION ALL
SELECT doc_a, doc_b, method, score FROM method_pairs
ORDER BY method, doc_a, doc_b

-- The candidate edges every later stage works from: one row per (pair,
-- method), at most ${max_edges} chosen by each document per method.
--
-- Inputs, each (method, doc_a, doc_b, strength, len_gap) with doc_a < doc_b:
-- the signature groups (exact_edges = candidates_exact.sql) except minhash,
-- whose band pairs count only once minhash_edges.sql has estimated their
-- resemblance and kept those at or above the threshold (strength = the
-- resemblance, also kept as the score), the chain methods (a11_edges =
-- a11.sql, a12_edges = a12.sql), and the methods with their own search
-- (method_pairs: spotsigs and slst, strength = their Jaccard, also kept as
-- the score). Each document ranks its edges of one
-- method by strength (descending), then by length gap, then by partner id,
-- and keeps the first ${max_edges}; an edge stays when either end keeps it.
-- So a method proposes at most ${max_edges} edges per document and the
-- table grows linearly with the corpus, however large a group of similar
-- pages is.
WITH edges AS (
    SELECT method, doc_a, doc_b, strength, len_gap, CAST(NULL AS DOUBLE) AS score FROM exact_edges
    WHERE method <> 'minhash'
    UNION ALL
    SELECT method, doc_a, doc_b, strength, len_gap, strength AS score FROM minhash_edges
    UNION ALL
    SELECT method, doc_a, doc_b, strength, len_gap, CAST(NULL AS DOUBLE) AS score FROM a11_edges
    UNION ALL
    SELECT method, doc_a, doc_b, strength, len_gap, CAST(NULL AS DOUBLE) AS score FROM a12_edges
    UNION ALL
    SELECT method, doc_a, doc_b, score AS strength, CAST(0 AS BIGINT) AS len_gap, score FROM method_pairs
),
ends AS (
    SELECT method, doc_a, doc_b, score, doc_a AS doc, doc_b AS partner, strength, len_gap FROM edges
    UNION ALL
    SELECT method, doc_a, doc_b, score, doc_b AS doc, doc_a AS partner, strength, len_gap FROM edges
),
ranked AS (
    SELECT method, doc_a, doc_b, score,
           ROW_NUMBER() OVER (PARTITION BY method, doc ORDER BY strength DESC, len_gap, partner) AS nth
    FROM ends
)
SELECT doc_a, doc_b, method, MIN(score) AS score
FROM ranked
WHERE nth <= ${max_edges}
GROUP BY doc_a, doc_b, method
ORDER BY method, doc_a, doc_b

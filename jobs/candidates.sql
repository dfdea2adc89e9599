-- The candidate edges every later stage works from: one row per (pair,
-- method), at most ${max_edges} chosen by each document per method.
--
-- Input: method_edges, every method's edges as (method, doc_a, doc_b,
-- strength, len_gap, score) with doc_a < doc_b. The candidates stage
-- writes it as a table, one part per edge view the method registry names
-- (src/methods/registry.rs, `Edges`), each view run alone so that its
-- sorts and group-bys have the whole memory pool: the signature groups
-- (signature_edges.sql over candidates_exact.sql), the methods with SQL of
-- their own (minhash_edges.sql: band pairs kept when their estimated
-- resemblance reaches the threshold, strength = score = the resemblance;
-- the chains of a11.sql and a12.sql) and the methods with their own search
-- (search_edges.sql: spotsigs and slst, strength = score = their Jaccard).
-- Each document ranks its edges of one
-- method by strength (descending), then by length gap, then by partner id,
-- and keeps the first ${max_edges}; an edge stays when either end keeps it.
-- So a method proposes at most ${max_edges} edges per document and the
-- table grows linearly with the corpus, however large a group of similar
-- pages is.
--
-- Both ends of an edge come from one read of method_edges, crossed with
-- the two sides: a UNION ALL of two reads would compute every method's
-- edge SQL twice (views are inlined), which was half of this stage's cost.
WITH sides(side) AS (VALUES (0), (1)),
ends AS (
    SELECT e.method, e.doc_a, e.doc_b, e.score, e.strength, e.len_gap,
           CASE WHEN s.side = 0 THEN e.doc_a ELSE e.doc_b END AS doc,
           CASE WHEN s.side = 0 THEN e.doc_b ELSE e.doc_a END AS partner
    FROM method_edges e
    CROSS JOIN sides s
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

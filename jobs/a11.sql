-- A11 Decomposition (spec section 7) over `a11_shingles` (shingle, doc_id,
-- doc_len: each document's distinct shingles, or the rarest
-- ${a11_prefix_share} of them, a11_shingles.sql) and the pairs its chains
-- link (the table a11_pairs, a11_pairs.sql: the chains, the length ratio
-- ${ratio}, the walk of ${max_edges} places, each pair's count of links).
-- A pair is kept only when its links number at least ${a11_min_shared}
-- of the smaller document's chained shingles (all its distinct ones at
-- a prefix share of 1; 0 keeps every linked pair): pages that share a
-- few template phrases, and nothing else, are not compared (on the
-- Javadoc crawl 98.6% of the pairs only a11 proposed failed
-- verification, most of them linked by < 5%). `strength` is the count of
-- links; candidates.sql keeps each document's ${max_edges} strongest
-- edges.
-- The pairs kept are a11's comparisons: verify compares each of them, and
-- a11's found pairs are those that pass (src/methods/registry.rs,
-- includes_comparison).
-- A pair's length gap is its documents' difference in length, taken from
-- `sizes` with the shingle counts.
-- Chains longer than ${max_group_size} are walked like any other and
-- listed in hot_signatures.
-- Gives (method = 'a11', doc_a, doc_b, strength, len_gap, score = NULL).
WITH sizes AS (
    SELECT doc_id, MAX(doc_len) AS doc_len, COUNT(*) AS shingle_count
    FROM a11_shingles
    GROUP BY doc_id
)
SELECT 'a11' AS method, e.doc_a, e.doc_b, CAST(e.links AS DOUBLE) AS strength,
       ABS(CAST(sb.doc_len AS BIGINT) - CAST(sa.doc_len AS BIGINT)) AS len_gap,
       CAST(NULL AS DOUBLE) AS score
FROM a11_pairs e
JOIN sizes sa ON sa.doc_id = e.doc_a
JOIN sizes sb ON sb.doc_id = e.doc_b
WHERE CAST(e.links AS DOUBLE) >= ${a11_min_shared} * CAST(LEAST(sa.shingle_count, sb.shingle_count) AS DOUBLE)

-- The minhash edges: the method's rule is resemblance >= ${minhash_threshold}
-- (spec §3, seed 001: "the share of equal values"). The LSH bands are only
-- the index: exact_edges (candidates_exact.sql) links documents sharing a
-- band, chained and bounded like every signature group; here each such pair
-- is estimated from the two full sketches and kept only at or above the
-- threshold. strength = score = the resemblance, so candidates.sql ranks a
-- document's minhash edges by it and keeps the ${max_edges} most similar.
--
-- Resemblance = (number of positions i with equal minima) / ${minhash_functions}.
-- `sketches` holds one row per (doc_id, position, minimum), so the equal
-- positions of a pair are a three-column equi-join and a COUNT: plain SQL
-- that stock Ballista executors run (they have no list functions). A band
-- pair shares at least one band, so it has at least one equal position and
-- is never lost by the inner join.
-- Reads exact_edges and `sketches`; gives (method, doc_a, doc_b, strength,
-- len_gap, score), strength = score = the resemblance.
WITH band_pairs AS (
    SELECT doc_a, doc_b, len_gap FROM exact_edges WHERE method = 'minhash'
),
estimated AS (
    SELECT p.doc_a, p.doc_b, p.len_gap,
           CAST(COUNT(*) AS DOUBLE) / ${minhash_functions} AS resemblance
    FROM band_pairs p
    JOIN sketches a ON a.doc_id = p.doc_a
    JOIN sketches b ON b.doc_id = p.doc_b AND b.position = a.position AND b.minimum = a.minimum
    GROUP BY p.doc_a, p.doc_b, p.len_gap
)
SELECT 'minhash' AS method, doc_a, doc_b, resemblance AS strength, len_gap, resemblance AS score
FROM estimated
WHERE resemblance >= ${minhash_threshold}

-- The minhash edges: the method's rule is resemblance >= ${minhash_threshold}
-- (spec §3, seed 001: "the share of equal values"). The LSH bands are only
-- the index: exact_edges (candidates_exact.sql) links documents sharing a
-- band, chained and bounded like every signature group; here each such pair
-- is estimated from the two full sketches and kept only at or above the
-- threshold. strength = score = the resemblance, so candidates.sql ranks a
-- document's minhash edges by it and keeps the ${max_edges} most similar.
--
-- Resemblance = (number of positions i with equal minima) / ${minhash_functions}.
-- ${sketch_equal_positions} is that count written out as one
-- `CASE WHEN a.sketch[i] = b.sketch[i] THEN 1 ELSE 0 END` per position
-- (plain SQL, no user-defined function, so stock Ballista executors run it).
-- A document without a sketch has no terms and no bands, so the inner joins
-- drop nothing that could match.
-- Reads exact_edges and `sketches`; gives (method, doc_a, doc_b, strength, len_gap).
WITH band_pairs AS (
    SELECT doc_a, doc_b, len_gap FROM exact_edges WHERE method = 'minhash'
),
estimated AS (
    SELECT p.doc_a, p.doc_b, p.len_gap,
           CAST(${sketch_equal_positions} AS DOUBLE) / ${minhash_functions} AS resemblance
    FROM band_pairs p
    JOIN sketches a ON a.doc_id = p.doc_a
    JOIN sketches b ON b.doc_id = p.doc_b
)
SELECT 'minhash' AS method, doc_a, doc_b, resemblance AS strength, len_gap
FROM estimated
WHERE resemblance >= ${minhash_threshold}

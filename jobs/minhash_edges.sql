-- The minhash edges: the method's rule is resemblance >= ${minhash_threshold}
-- (spec §3, seed 001: "the share of equal values"). The LSH bands are only
-- the index: exact_edges (candidates_exact.sql) links documents sharing a
-- band, chained and bounded like every signature group; here each such pair
-- is estimated from the two full sketches and kept only at or above the
-- threshold. strength = score = the resemblance, so candidates.sql ranks a
-- document's minhash edges by it and keeps the ${max_edges} most similar.
--
-- Resemblance = (number of positions i with equal minima) / ${minhash_functions}.
-- `sketches` holds one row per (doc_id, position, minimum) (plain SQL that
-- stock Ballista executors run: they have no list functions). Each
-- document's rows become one row of ${minhash_functions} columns (`sketch_rows`,
-- the parameter `sketch_columns`, src/methods/shingles.rs), and a pair's equal
-- positions are a sum over its two rows (`equal_positions`). Why not a
-- three-column equi-join of the two documents' rows: it held ${minhash_functions}
-- rows per band pair, or every row of `sketches`, in a hash table whose
-- build side cannot spill (the Javadoc texts, min-hash only, one thread:
-- `candidates` 316-323 MB; with the rows, 138-139 MB at the same CPU).
-- A band pair shares at least one band, so it has equal positions.
-- Reads exact_edges and `sketches`; gives (method, doc_a, doc_b, strength,
-- len_gap, score), strength = score = the resemblance.
WITH band_pairs AS (
    SELECT doc_a, doc_b, len_gap FROM exact_edges WHERE method = 'minhash'
),
-- Only the documents of a band pair are pivoted, chosen by a semi-join
-- on their distinct ids: few documents have one (on the Javadoc texts 891
-- of 24,891 end in a min-hash edge), and the pivot's ${minhash_functions} CASEs
-- per row of every document cost more than the join (`candidates`'
-- min-hash query 1.1-1.2 -> 0.7 s there).
sketch_rows AS (
    SELECT doc_id, ${sketch_columns} FROM sketches
    WHERE doc_id IN (SELECT doc_a FROM band_pairs UNION SELECT doc_b FROM band_pairs)
    GROUP BY doc_id
),
estimated AS (
    SELECT p.doc_a, p.doc_b, p.len_gap,
           CAST(${equal_positions} AS DOUBLE) / ${minhash_functions} AS resemblance
    FROM band_pairs p
    JOIN sketch_rows a ON a.doc_id = p.doc_a
    JOIN sketch_rows b ON b.doc_id = p.doc_b
)
SELECT 'minhash' AS method, doc_a, doc_b, resemblance AS strength, len_gap, resemblance AS score
FROM estimated
WHERE resemblance >= ${minhash_threshold}

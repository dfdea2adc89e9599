-- A11 Decomposition (spec section 7) over `a11_shingles` (shingle, doc_id,
-- doc_len: each document's distinct shingles, or the rarest
-- ${a11_prefix_share} of them, a11_shingles.sql).
-- 1. A shingle's records ordered by document length (then doc_id) form a
--    chain: the table a11_chains (a11_chains.sql), with each record's place;
--    a chain that several shingles have is there once, with their number.
-- 2. The spec splits the chain wherever a length exceeds ${ratio} times the
--    previous one and pairs documents of a piece whose length ratio is
--    <= ${ratio}. Two documents within that ratio are always in the same
--    piece (lengths only grow along the chain), so the ratio test alone
--    gives the same pairs and the pieces need no numbering.
-- 3. As for the signature groups (candidates_exact.sql), a chain is never
--    expanded into all its pairs: each record is linked to the next
--    ${max_edges} records of its chain when their length ratio is
--    <= ${ratio}. The walk joins each record with two blocks of
--    ${max_edges} places (its own and the next) rather than with each of
--    the ${max_edges} places: under a memory limit the join is a
--    sort-merge join, and its sorted side is then 2 copies of the chains
--    rather than ${max_edges} (at 41 copies of the Javadoc crawl, 8 copies
--    of the chains filled 27 GB of spill files and the disk). `strength`
--    counts the shingles two documents are linked by; candidates.sql
--    keeps each document's ${max_edges} strongest edges.
-- 4. A pair is kept only when its links number at least ${a11_min_shared}
--    of the smaller document's chained shingles (all its distinct ones at
--    a prefix share of 1; 0 keeps every linked pair): pages that share a
--    few template phrases, and nothing else, are not compared (on the
--    Javadoc crawl 98.6% of the pairs only a11 proposed failed
--    verification, most of them linked by < 5%).
-- The pairs kept are a11's comparisons: verify compares each of them, and
-- a11's found pairs are those that pass (src/methods/registry.rs,
-- includes_comparison).
-- Chains longer than ${max_group_size} are walked like any other and
-- listed in hot_signatures.
-- Gives (method = 'a11', doc_a, doc_b, strength, len_gap, score = NULL).
WITH sides(ahead) AS (VALUES (0), (1)),
blocks AS (
    -- Each chain cut into blocks of ${max_edges} places: the next
    -- ${max_edges} records of a record are in its block or the next one.
    SELECT shingle, doc_id, doc_len, shingles, pos, (pos - 1) / ${max_edges} AS block
    FROM a11_chains
),
targets AS (
    -- The block and the next, as a column of its own: an equi-join key
    -- (see candidates_exact.sql for why it is not an expression in ON).
    SELECT a.shingle, a.doc_id, a.doc_len, a.shingles, a.pos, a.block + s.ahead AS target_block
    FROM blocks a
    CROSS JOIN sides s
),
links AS (
    SELECT LEAST(a.doc_id, b.doc_id) AS doc_a,
           GREATEST(a.doc_id, b.doc_id) AS doc_b,
           CAST(b.doc_len AS BIGINT) - CAST(a.doc_len AS BIGINT) AS len_gap,
           a.shingles
    FROM targets a
    JOIN blocks b ON b.shingle = a.shingle AND b.block = a.target_block
    WHERE b.pos > a.pos AND b.pos <= a.pos + ${max_edges}
      AND (a.doc_len = b.doc_len
           OR (a.doc_len > 0 AND CAST(b.doc_len AS DOUBLE) / CAST(a.doc_len AS DOUBLE) <= ${ratio}))
),
sizes AS (
    SELECT doc_id, COUNT(*) AS shingle_count
    FROM a11_shingles
    GROUP BY doc_id
),
edges AS (
    SELECT doc_a, doc_b, SUM(shingles) AS links, MIN(len_gap) AS len_gap
    FROM links
    GROUP BY doc_a, doc_b
)
SELECT 'a11' AS method, e.doc_a, e.doc_b, CAST(e.links AS DOUBLE) AS strength, e.len_gap,
       CAST(NULL AS DOUBLE) AS score
FROM edges e
JOIN sizes sa ON sa.doc_id = e.doc_a
JOIN sizes sb ON sb.doc_id = e.doc_b
WHERE CAST(e.links AS DOUBLE) >= ${a11_min_shared} * CAST(LEAST(sa.shingle_count, sb.shingle_count) AS DOUBLE)

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
--    expanded into all its pairs: the chain walk (chain_links.sql) links
--    each record to the next ${max_edges} records of its chain, and those
--    within the length ratio ${ratio} are kept. `strength` counts the
--    shingles two documents are linked by; candidates.sql keeps each
--    document's ${max_edges} strongest edges.
-- 4. A pair is kept only when its links number at least ${a11_min_shared}
--    of the smaller document's chained shingles (all its distinct ones at
--    a prefix share of 1; 0 keeps every linked pair): pages that share a
--    few template phrases, and nothing else, are not compared (on the
--    Javadoc crawl 98.6% of the pairs only a11 proposed failed
--    verification, most of them linked by < 5%).
-- The pairs kept are a11's comparisons: verify compares each of them, and
-- a11's found pairs are those that pass (src/methods/registry.rs,
-- includes_comparison).
-- A pair's length gap is its documents' difference in length, the same
-- for every link, so it is taken from `sizes` after the count rather than
-- carried through the count of links as a MIN: at 8 copies of the Javadoc
-- crawl that count sums 39 M links and spills, and without the column it
-- took 46.0 → 42.9 CPU-s (1 copy: 4.1 → 3.8), with the same edges.
-- Chains longer than ${max_group_size} are walked like any other and
-- listed in hot_signatures.
-- Gives (method = 'a11', doc_a, doc_b, strength, len_gap, score = NULL).
WITH chain AS (
    SELECT 'a11' AS method, 0 AS slot, shingle AS sig, doc_id, doc_len, pos, shingles AS tag
    FROM a11_chains
),
${chain_links},
links AS (
    SELECT LEAST(doc_id, next_id) AS doc_a,
           GREATEST(doc_id, next_id) AS doc_b,
           tag AS shingles
    FROM chain_links
    WHERE doc_len = next_len
       OR (doc_len > 0 AND CAST(next_len AS DOUBLE) / CAST(doc_len AS DOUBLE) <= ${ratio})
),
sizes AS (
    SELECT doc_id, MAX(doc_len) AS doc_len, COUNT(*) AS shingle_count
    FROM a11_shingles
    GROUP BY doc_id
),
edges AS (
    SELECT doc_a, doc_b, SUM(shingles) AS links
    FROM links
    GROUP BY doc_a, doc_b
)
SELECT 'a11' AS method, e.doc_a, e.doc_b, CAST(e.links AS DOUBLE) AS strength,
       ABS(CAST(sb.doc_len AS BIGINT) - CAST(sa.doc_len AS BIGINT)) AS len_gap,
       CAST(NULL AS DOUBLE) AS score
FROM edges e
JOIN sizes sa ON sa.doc_id = e.doc_a
JOIN sizes sb ON sb.doc_id = e.doc_b
WHERE CAST(e.links AS DOUBLE) >= ${a11_min_shared} * CAST(LEAST(sa.shingle_count, sb.shingle_count) AS DOUBLE)

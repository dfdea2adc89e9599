-- A11 Decomposition (spec section 7) over `shingles` (shingle, doc_id, doc_len).
-- 1. A shingle's records ordered by document length form a chain.
-- 2. The chain is split wherever a length exceeds ${ratio} times the previous
--    one (LAG + a running sum of split flags numbers the pieces).
-- 3. Duplicate chains (same members) are kept once. Contained chains are
--    not removed here: their pairs are a subset of their container's and the
--    final DISTINCT drops them, so only the cost differs.
-- 4. Inside a chain, documents are paired when their length ratio is <= ${ratio}.
-- Chains longer than ${max_group_size} are skipped and listed in hot_signatures.
-- Gives (doc_a, doc_b, method = 'a11').
WITH shared AS (
    SELECT shingle
    FROM shingles
    GROUP BY shingle
    HAVING COUNT(*) >= 2
),
ordered AS (
    SELECT s.shingle, s.doc_id, s.doc_len,
           LAG(s.doc_len) OVER (PARTITION BY s.shingle ORDER BY s.doc_len, s.doc_id) AS prev_len
    FROM shingles s
    JOIN shared USING (shingle)
),
pieces AS (
    SELECT shingle, doc_id, doc_len,
           SUM(CASE WHEN prev_len IS NULL
                      OR (doc_len <> prev_len
                          AND (prev_len = 0 OR CAST(doc_len AS DOUBLE) / CAST(prev_len AS DOUBLE) > ${ratio}))
                    THEN 1 ELSE 0 END)
               OVER (PARTITION BY shingle ORDER BY doc_len, doc_id
                     ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS piece
    FROM ordered
),
chains AS (
    SELECT shingle, piece,
           string_agg(CAST(doc_id AS VARCHAR), ',' ORDER BY doc_id) AS members,
           COUNT(*) AS size
    FROM pieces
    GROUP BY shingle, piece
    HAVING COUNT(*) BETWEEN 2 AND ${max_group_size}
),
distinct_chains AS (
    -- One chain per member list: the first by (shingle, piece). (Taking MIN of
    -- each column separately could combine two different chains.)
    SELECT shingle, piece
    FROM (
        SELECT shingle, piece,
               ROW_NUMBER() OVER (PARTITION BY members ORDER BY shingle, piece) AS nth
        FROM chains
    ) numbered
    WHERE nth = 1
),
chain_members AS (
    SELECT p.shingle, p.piece, p.doc_id, p.doc_len
    FROM pieces p
    JOIN distinct_chains c ON p.shingle = c.shingle AND p.piece = c.piece
)
SELECT DISTINCT a.doc_id AS doc_a, b.doc_id AS doc_b, 'a11' AS method
FROM chain_members a
JOIN chain_members b
  ON a.shingle = b.shingle AND a.piece = b.piece AND a.doc_id < b.doc_id
WHERE a.doc_len = b.doc_len
   OR (LEAST(a.doc_len, b.doc_len) > 0
       AND CAST(GREATEST(a.doc_len, b.doc_len) AS DOUBLE) / CAST(LEAST(a.doc_len, b.doc_len) AS DOUBLE) <= ${ratio})

-- A12 "3+5" (spec section 8) over `a12_records`
-- (doc_id, key, len, num, ss1..ss3 = 3 longest-sentence CRCs,
-- ws1..ws5 = 5 longest-word CRCs; 0 where missing).
-- Chains: records of one key ordered by len (ties by doc_id), split where
-- the neighbouring len ratio exceeds ${ratio}; duplicate chains kept once.
-- Inside a chain a pair is compared only if len ratio <= ${ratio}, sentence
-- count ratio <= ${num_ratio} and at least 2 of the 5 word signatures
-- coincide (any order, zeros ignored); it is a duplicate if ss1 coincide or,
-- when both documents have more than 5 sentences, at least 2 of ss1..ss3
-- coincide (any order, zeros ignored).
-- Chains longer than ${max_group_size} are skipped and listed in hot_signatures.
-- Gives (doc_a, doc_b, method = 'a12').
--
-- The "coincide in any order" counts are spelled out with IN instead of
-- array functions (array_intersect, cardinality, ...): stock Ballista 55
-- executors do not register DataFusion's array functions, and plain scalar
-- SQL runs everywhere. Counting each non-zero a.wsN found among b.ws1..ws5
-- counts common values once because the non-zero values of ws1..ws5 (and of
-- ss1..ss3) of one record are distinct (src/methods/a12.rs, top_distinct).
WITH ordered AS (
    SELECT r.*,
           LAG(len) OVER (PARTITION BY key ORDER BY len, doc_id) AS prev_len
    FROM a12_records r
),
pieces AS (
    SELECT doc_id, key, len, num, ss1, ss2, ss3, ws1, ws2, ws3, ws4, ws5,
           SUM(CASE WHEN prev_len IS NULL
                      OR (len <> prev_len
                          AND (prev_len = 0 OR CAST(len AS DOUBLE) / CAST(prev_len AS DOUBLE) > ${ratio}))
                    THEN 1 ELSE 0 END)
               OVER (PARTITION BY key ORDER BY len, doc_id
                     ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS piece
    FROM ordered
),
chains AS (
    SELECT key, piece, string_agg(CAST(doc_id AS VARCHAR), ',' ORDER BY doc_id) AS members
    FROM pieces
    GROUP BY key, piece
    HAVING COUNT(*) BETWEEN 2 AND ${max_group_size}
),
distinct_chains AS (
    -- One chain per member list: the first by (key, piece). (Taking MIN of
    -- each column separately could combine two different chains.)
    SELECT key, piece
    FROM (
        SELECT key, piece,
               ROW_NUMBER() OVER (PARTITION BY members ORDER BY key, piece) AS nth
        FROM chains
    ) numbered
    WHERE nth = 1
),
chain_members AS (
    SELECT p.*
    FROM pieces p
    JOIN distinct_chains c ON p.key = c.key AND p.piece = c.piece
)
SELECT DISTINCT a.doc_id AS doc_a, b.doc_id AS doc_b, 'a12' AS method
FROM chain_members a
JOIN chain_members b
  ON a.key = b.key AND a.piece = b.piece AND a.doc_id < b.doc_id
WHERE (a.len = b.len
       OR (LEAST(a.len, b.len) > 0
           AND CAST(GREATEST(a.len, b.len) AS DOUBLE) / CAST(LEAST(a.len, b.len) AS DOUBLE) <= ${ratio}))
  AND (a.num = b.num
       OR (LEAST(a.num, b.num) > 0
           AND CAST(GREATEST(a.num, b.num) AS DOUBLE) / CAST(LEAST(a.num, b.num) AS DOUBLE) <= ${num_ratio}))
  AND (CASE WHEN a.ws1 <> 0 AND a.ws1 IN (b.ws1, b.ws2, b.ws3, b.ws4, b.ws5) THEN 1 ELSE 0 END
     + CASE WHEN a.ws2 <> 0 AND a.ws2 IN (b.ws1, b.ws2, b.ws3, b.ws4, b.ws5) THEN 1 ELSE 0 END
     + CASE WHEN a.ws3 <> 0 AND a.ws3 IN (b.ws1, b.ws2, b.ws3, b.ws4, b.ws5) THEN 1 ELSE 0 END
     + CASE WHEN a.ws4 <> 0 AND a.ws4 IN (b.ws1, b.ws2, b.ws3, b.ws4, b.ws5) THEN 1 ELSE 0 END
     + CASE WHEN a.ws5 <> 0 AND a.ws5 IN (b.ws1, b.ws2, b.ws3, b.ws4, b.ws5) THEN 1 ELSE 0 END) >= 2
  AND (
        (a.ss1 <> 0 AND a.ss1 = b.ss1)
     OR (a.num > 5 AND b.num > 5
         AND (CASE WHEN a.ss1 <> 0 AND a.ss1 IN (b.ss1, b.ss2, b.ss3) THEN 1 ELSE 0 END
            + CASE WHEN a.ss2 <> 0 AND a.ss2 IN (b.ss1, b.ss2, b.ss3) THEN 1 ELSE 0 END
            + CASE WHEN a.ss3 <> 0 AND a.ss3 IN (b.ss1, b.ss2, b.ss3) THEN 1 ELSE 0 END) >= 2)
  )

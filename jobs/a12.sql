-- A12 "3+5" (spec section 8) over `a12_records`
-- (doc_id, key, len, num, ss1..ss3 = 3 longest-sentence CRCs,
-- ws1..ws5 = 5 longest-word CRCs; 0 where missing).
-- Chains: records of one key ordered by len (ties by doc_id). The spec
-- splits a chain where the neighbouring len ratio exceeds ${ratio} and
-- compares only pairs of one piece within that ratio; two records within
-- the ratio are always in one piece (len only grows along the chain), so
-- the ratio test alone gives the same pairs. As for the signature groups
-- (candidates_exact.sql) a chain is never expanded into all its pairs:
-- the chain walk (chain_links.sql) links each record to the next
-- ${max_edges} records of its chain, and the pair test reads both records.
-- A pair is compared only if len ratio <= ${ratio}, sentence count ratio
-- <= ${num_ratio} and at least 2 of the 5 word signatures coincide (any
-- order, zeros ignored); it is a duplicate if ss1 coincide or, when both
-- documents have more than 5 sentences, at least 2 of ss1..ss3 coincide
-- (any order, zeros ignored). `strength` counts the keys (up to 3 records
-- per document) a pair matched under; candidates.sql keeps each document's
-- ${max_edges} strongest edges.
-- Chains longer than ${max_group_size} are walked like any other and listed
-- in hot_signatures.
-- Gives (method = 'a12', doc_a, doc_b, strength, len_gap, score = NULL).
--
-- The "coincide in any order" counts are spelled out with IN instead of
-- array functions (array_intersect, cardinality, ...): stock Ballista 55
-- executors do not register DataFusion's array functions, and plain scalar
-- SQL runs everywhere. Counting each non-zero a.wsN found among b.ws1..ws5
-- counts common values once because the non-zero values of ws1..ws5 (and of
-- ss1..ss3) of one record are distinct (src/methods/a12.rs, top_distinct).
WITH chain AS (
    SELECT 'a12' AS method, 0 AS slot, key AS sig, doc_id, len AS doc_len,
           CAST(ROW_NUMBER() OVER (PARTITION BY key ORDER BY len, doc_id) AS BIGINT) AS pos,
           CAST(0 AS BIGINT) AS tag
    FROM a12_records
),
${chain_links},
matches AS (
    -- A record is one document's under one key: the two records linked.
    SELECT LEAST(a.doc_id, b.doc_id) AS doc_a,
           GREATEST(a.doc_id, b.doc_id) AS doc_b,
           CAST(b.len AS BIGINT) - CAST(a.len AS BIGINT) AS len_gap
    FROM chain_links l
    JOIN a12_records a ON a.key = l.sig AND a.doc_id = l.doc_id
    JOIN a12_records b ON b.key = l.sig AND b.doc_id = l.next_id
    WHERE a.doc_id <> b.doc_id
      AND (a.len = b.len
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
)
SELECT 'a12' AS method, doc_a, doc_b, CAST(COUNT(*) AS DOUBLE) AS strength, MIN(len_gap) AS len_gap,
       CAST(NULL AS DOUBLE) AS score
FROM matches
GROUP BY doc_a, doc_b

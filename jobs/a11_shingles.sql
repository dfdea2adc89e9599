-- The records of A11's chains (spec section 7 step 1). The study (§6.1)
-- takes each document's distinct shingles, "можно не все, а выборочно"
-- (not necessarily all, selectively); here the selection is a prefix:
-- of each document's distinct shingles (`shingles`), the rarest by global
-- df, ties by shingle value, the first CEIL(${a11_prefix_share} × their
-- count) (1.0 keeps them all). Two pages that share most of their
-- shingles share some of their rarest too (prefix filtering), so the
-- chains of rare shingles still link them, while the common shingles
-- (site templates, boilerplate phrases), whose chains are the long ones,
-- drop out first.
-- Gives (shingle, doc_id, doc_len): the rows a11.sql chains and
-- hot_signatures.sql counts. At a share of 1 the first branch is every
-- row and the second is constant-false (the planner drops it, so the
-- ranking costs nothing); below 1 it is the other way round.
SELECT shingle, doc_id, doc_len
FROM shingles
WHERE ${a11_prefix_share} >= 1.0
UNION ALL
SELECT shingle, doc_id, doc_len
FROM (
    SELECT s.shingle, s.doc_id, s.doc_len,
           ROW_NUMBER() OVER (PARTITION BY s.doc_id ORDER BY d.df, s.shingle) AS nth,
           COUNT(*) OVER (PARTITION BY s.doc_id) AS distinct_shingles
    FROM shingles s
    JOIN (SELECT shingle, COUNT(*) AS df FROM shingles GROUP BY shingle) d USING (shingle)
    WHERE ${a11_prefix_share} < 1.0
) ranked
WHERE CAST(nth AS DOUBLE) <= CEIL(${a11_prefix_share} * CAST(distinct_shingles AS DOUBLE))

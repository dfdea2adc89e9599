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
-- Each document's count of shingles is a GROUP BY joined back, not a
-- `COUNT(*) OVER (PARTITION BY doc_id)`: a window without an order is
-- DataFusion's WindowAggExec, which holds its whole input in memory and
-- cannot spill (6.9 GB of RSS under `--memory-limit 2G` at 8 copies of
-- the Javadoc crawl, then "Not enough memory to continue external
-- sort"). ROW_NUMBER over an order streams on sorted input, and
-- the aggregate and the join spill.
SELECT shingle, doc_id, doc_len
FROM shingles
WHERE ${a11_prefix_share} >= 1.0
UNION ALL
SELECT shingle, doc_id, doc_len
FROM (
    SELECT s.shingle, s.doc_id, s.doc_len,
           ROW_NUMBER() OVER (PARTITION BY s.doc_id ORDER BY d.df, s.shingle) AS nth
    FROM shingles s
    JOIN (SELECT shingle, COUNT(*) AS df FROM shingles GROUP BY shingle) d USING (shingle)
    WHERE ${a11_prefix_share} < 1.0
) ranked
JOIN (
    SELECT doc_id, COUNT(*) AS distinct_shingles
    FROM shingles
    WHERE ${a11_prefix_share} < 1.0
    GROUP BY doc_id
) counted USING (doc_id)
WHERE CAST(nth AS DOUBLE) <= CEIL(${a11_prefix_share} * CAST(distinct_shingles AS DOUBLE))

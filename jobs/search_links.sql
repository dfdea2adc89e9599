-- The candidate pairs of one keyed search (stage search_links; SpotSigs'
-- spot signatures and SL+ST's runs of m sentences), to be scored by the
-- `search` tasks. Reads the rows of method ${method} in `search_key_links`
-- (method, doc_a, doc_b, keys): the pairs each share of the keys linked
-- (search_groups.sql), with the number of keys they were linked through.
--
-- A document in many groups (one per key) would still meet a partner
-- count that grows with the groups' sizes; so each pair's strength is the
-- number of keys it was linked through, summed over the shares, and every
-- document keeps its ${max_candidates} strongest partners (then the
-- smaller doc_id), a pair staying when either end keeps it, as
-- candidates.sql bounds every method's edges: the pairs scored stay within
-- a constant per document.
--
-- Plain SQL (a group-by and windows), so stock Ballista executors run it.
-- Gives (method, doc_a, doc_b), doc_a < doc_b, in that order.
WITH pairs AS (
    SELECT doc_a, doc_b, SUM(keys) AS strength
    FROM search_key_links
    WHERE method = ${method}
    GROUP BY doc_a, doc_b
),
ranked AS (
    SELECT doc_a, doc_b,
           ROW_NUMBER() OVER (PARTITION BY doc_a ORDER BY strength DESC, doc_b) AS rank_a,
           ROW_NUMBER() OVER (PARTITION BY doc_b ORDER BY strength DESC, doc_a) AS rank_b
    FROM pairs
)
SELECT ${method} AS method, doc_a, doc_b
FROM ranked
WHERE rank_a <= ${max_candidates} OR rank_b <= ${max_candidates}
ORDER BY doc_a, doc_b

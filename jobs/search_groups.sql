-- The pairs one share of a keyed search's keys links (stage search_groups,
-- task I of N: the keys with sig % N = I; SpotSigs' spot signatures,
-- src/methods/spotsigs, and SL+ST's runs of m sentences, src/methods/slst).
-- Reads the rows of method ${method} in `search_keys` (method, sig,
-- doc_id, size), one per distinct key of a document, that ${own_keys}.
--
-- Only keys shared by 2 to ${max_group_docs} documents count: a key of one
-- document pairs nothing, and a key of more (a site template's sentences
-- or phrases) is no evidence of a near-duplicate. A group is never
-- expanded into all its pairs: its members, ordered by size (the method's
-- measure of a document, which bounds its score: a pair of very different
-- sizes cannot reach it) then doc_id, form a chain, and each is linked to
-- the next ${max_edges} members, so a group of n documents gives at most
-- n × ${max_edges} links. Consecutive runs of a shared passage have the
-- same members: each distinct member list is walked once.
--
-- The walk pairs the list with itself shifted by each step (two unnests
-- of one row zip their lists): on the Javadoc crawl this took 0.6 s where
-- a window of ${max_edges} LEADs took 4.8 s and a ROW_NUMBER self-join
-- by steps 4.3 s (array_agg with ORDER BY, 4.4 s, is also slower than
-- array_sort of the aggregated list). At 8 copies of the Javadoc crawl
-- (sites layout, 14.4 M keys), the chain walk every signature group takes
-- (chain_links.sql, plain SQL) with the ranking took 60 CPU-s under a 2 GB
-- limit for both searches, where this and search_links.sql take 28. The
-- array functions it needs are not in Ballista's executors, so this runs
-- in the tasks, each on its share of the keys; the global step
-- (search_links.sql, plain SQL) sums their counts.
--
-- Gives (method, doc_a, doc_b, keys), doc_a < doc_b: the number of keys
-- of this share through which the pair was linked.
WITH chains AS (
    SELECT members, COUNT(*) AS keys
    FROM (SELECT array_sort(array_agg(named_struct('size', size, 'doc', doc_id))) AS members
          FROM search_keys
          WHERE method = ${method} AND ${own_keys}
          GROUP BY sig
          HAVING COUNT(*) BETWEEN 2 AND ${max_group_docs})
    GROUP BY members
),
sized AS (SELECT members, keys, CAST(array_length(members) AS BIGINT) AS n FROM chains),
steps(step) AS (VALUES ${chain_steps}),
links AS (
    SELECT unnest(array_slice(members, CAST(1 AS BIGINT), n - s.step)) AS a,
           unnest(array_slice(members, 1 + s.step, n)) AS b,
           keys
    FROM sized CROSS JOIN steps s
    WHERE n > s.step
)
SELECT ${method} AS method,
       LEAST(a['doc'], b['doc']) AS doc_a,
       GREATEST(a['doc'], b['doc']) AS doc_b,
       CAST(SUM(keys) AS BIGINT) AS keys
FROM links
GROUP BY LEAST(a['doc'], b['doc']), GREATEST(a['doc'], b['doc'])

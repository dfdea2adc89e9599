-- The candidate pairs of a keyed search (the search stage; SL+ST's runs
-- of m sentences, src/methods/slst.rs, and SpotSigs' spot signatures,
-- src/methods/spotsigs.rs). `search_keys` holds (sig, doc_id, size), one
-- row per distinct key of a document.
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
-- array_sort of the aggregated list). The member lists are distinct
-- (consecutive runs of a passage share theirs), so this walk is not the
-- row walk of the signature groups' chains (chain_links.sql). `steps` is
-- a VALUES list (1), (2), ...: plain SQL that stock Ballista executors run.
-- A document in many groups (one per key) would still meet a partner
-- count that grows with the groups' sizes; so each pair's strength is the
-- number of keys it was linked through, and every document keeps its
-- ${max_candidates} strongest partners (then the smaller doc_id), a pair
-- staying when either end keeps it, as candidates.sql bounds every
-- method's edges: the pairs scored stay within a constant per document.
-- Gives each (doc_a, doc_b), doc_a < doc_b, in that order: the scoring
-- reads each doc_a once.
WITH chains AS (
    SELECT members, COUNT(*) AS keys
    FROM (SELECT array_sort(array_agg(named_struct('size', size, 'doc', doc_id))) AS members
          FROM search_keys
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
),
pairs AS (
    SELECT LEAST(a['doc'], b['doc']) AS doc_a, GREATEST(a['doc'], b['doc']) AS doc_b, SUM(keys) AS strength
    FROM links
    GROUP BY LEAST(a['doc'], b['doc']), GREATEST(a['doc'], b['doc'])
),
ranked AS (
    SELECT doc_a, doc_b,
           ROW_NUMBER() OVER (PARTITION BY doc_a ORDER BY strength DESC, doc_b) AS rank_a,
           ROW_NUMBER() OVER (PARTITION BY doc_b ORDER BY strength DESC, doc_a) AS rank_b
    FROM pairs
)
SELECT doc_a, doc_b
FROM ranked
WHERE rank_a <= ${max_candidates} OR rank_b <= ${max_candidates}
ORDER BY doc_a, doc_b

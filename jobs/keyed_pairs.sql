-- The candidate pairs of a keyed search (the search stage; SL+ST's runs
-- of m sentences, src/methods/slst.rs). `search_keys` holds (sig, doc_id),
-- one row per distinct key of a document.
--
-- Only keys shared by 2 to ${max_group_docs} documents count: a key of one
-- document pairs nothing, and a key of more (a site template's sentences)
-- is no evidence of a near-duplicate. A group is never expanded into all
-- its pairs: its members, ordered by doc_id (the order of the suffix-array
-- search that is the reference), form a chain, and each is linked to the
-- next ${max_edges} members, so a group of n documents gives at most
-- n × ${max_edges} links. Consecutive runs of a shared passage have the
-- same members: each distinct member list is walked once.
--
-- The walk pairs the list with itself shifted by each step (two unnests
-- of one row zip their lists): on the Javadoc crawl this took 0.6 s where
-- a window of ${max_edges} LEADs took 4.8 s and the ROW_NUMBER self-join
-- of candidates_exact.sql 4.3 s. `steps` is a VALUES list, as there.
-- Gives each distinct (doc_a, doc_b), doc_a < doc_b, in that order: the
-- scoring reads each doc_a once.
WITH chains AS (
    SELECT DISTINCT docs
    FROM (SELECT array_sort(array_agg(doc_id)) AS docs
          FROM search_keys
          GROUP BY sig
          HAVING COUNT(*) BETWEEN 2 AND ${max_group_docs})
),
sized AS (SELECT docs, CAST(array_length(docs) AS BIGINT) AS n FROM chains),
steps(step) AS (VALUES ${chain_steps})
SELECT DISTINCT doc_a, doc_b
FROM (SELECT unnest(array_slice(docs, CAST(1 AS BIGINT), n - s.step)) AS doc_a,
             unnest(array_slice(docs, 1 + s.step, n)) AS doc_b
      FROM sized CROSS JOIN steps s
      WHERE n > s.step)
ORDER BY doc_a, doc_b

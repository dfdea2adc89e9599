-- The pairs A11's chains link (spec section 7 steps 1-2), each with its
-- count of links, before a11.sql keeps the pairs linked by enough of
-- their shingles.
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
--    within the length ratio ${ratio} are kept. `links` counts the
--    shingles two documents are linked by (a chain counts once for each
--    shingle that has it).
-- Written as the table a11_pairs by the candidates stage, not a view of
-- a11.sql: in one plan with a11.sql's joins to the documents' sizes, the
-- count's hash table shared the memory pool with those joins' sorts, and
-- at 8 copies of the Javadoc crawl it spilled its 3.4 M pairs 37 times
-- (the fair pool gives each sort and aggregation alive a share); alone
-- beside the walk it does not spill.
-- Gives (doc_a, doc_b, links), doc_a < doc_b.
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
)
SELECT doc_a, doc_b, CAST(SUM(shingles) AS BIGINT) AS links
FROM links
GROUP BY doc_a, doc_b

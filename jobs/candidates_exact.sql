-- Candidate edges of the signature methods (a0-a5, a10, imatch, a7, a9,
-- minhash bands, a6 megashingles, a8 log-shingles): documents sharing
-- (method, slot, sig) form a group.
--
-- A group is never expanded into all its pairs: its members, ordered by
-- length then doc_id, form a chain, and each member is linked to the next
-- ${max_edges} members (the chain walk, chain_links.sql, which A11 and A12
-- walk too). A document sharing several groups with another (min-hash
-- bands, a7 lexicons, megashingles) is linked to it once per group;
-- `strength` counts those groups, and candidates.sql keeps each document's
-- ${max_edges} strongest edges. Big groups are chained like any other;
-- those over ${max_group_size} members are reported in hot_signatures.
--
-- Reads `signature_chains` (signature_chains.sql: the groups of two or
-- more, numbered); gives (method, doc_a, doc_b, strength, len_gap), doc_a < doc_b,
-- len_gap = difference of the two lengths.
WITH chain AS (
    SELECT method, slot, sig, doc_id, doc_len, pos, CAST(0 AS BIGINT) AS tag
    FROM signature_chains
),
${chain_links}
-- The links and their count in one aggregation (no further CTE levels:
-- Ballista's scheduler decodes plans with a bounded nesting depth, and the
-- candidates query nests this view deep inside its own).
SELECT method,
       LEAST(doc_id, next_id) AS doc_a,
       GREATEST(doc_id, next_id) AS doc_b,
       CAST(COUNT(*) AS DOUBLE) AS strength,
       MIN(CAST(next_len AS BIGINT) - CAST(doc_len AS BIGINT)) AS len_gap
FROM chain_links
GROUP BY method, LEAST(doc_id, next_id), GREATEST(doc_id, next_id)

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
-- Reads `signatures`; gives (method, doc_a, doc_b, strength, len_gap), doc_a < doc_b,
-- len_gap = difference of the two lengths.
WITH chain AS (
    -- Most signatures belong to one document (on the Javadoc crawl 1.08 M
    -- of 1.13 M rows): chaining only the groups of two or more keeps the
    -- window's sort and the walk small (5.1 to 0.6 CPU-s).
    SELECT s.method, s.slot, s.sig, s.doc_id, s.doc_len,
           CAST(ROW_NUMBER() OVER (PARTITION BY s.method, s.slot, s.sig ORDER BY s.doc_len, s.doc_id) AS BIGINT) AS pos,
           CAST(0 AS BIGINT) AS tag
    FROM signatures s
    JOIN (SELECT method, slot, sig FROM signatures GROUP BY method, slot, sig HAVING COUNT(*) >= 2) shared
      ON shared.method = s.method AND shared.slot = s.slot AND shared.sig = s.sig
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

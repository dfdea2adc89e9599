-- Candidate edges of the signature methods (a0-a5, a10, imatch, a7, a9,
-- minhash bands, a6 megashingles, a8 log-shingles): documents sharing
-- (method, slot, sig) form a group.
--
-- A group is never expanded into all its pairs (a template shared by 30,000
-- pages would be 450 M pairs): its members, ordered by length then doc_id,
-- form a chain, and each member is linked to the next ${max_edges} members
-- (the way A11 and A12 walk their length-ordered chains). A document sharing
-- several groups with another (min-hash bands, a7 lexicons, megashingles) is
-- linked to it once per group; `strength` counts those groups, and
-- candidates.sql keeps each document's ${max_edges} strongest edges. Big
-- groups are chained like any other; those over ${max_group_size} members
-- are reported in hot_signatures.
--
-- `steps` is a VALUES list (1), (2), ... (${max_edges}) rather than a
-- generate_series call: plain SQL that stock Ballista executors run. The
-- join on `b.pos = t.next_pos` is an equi-join, so no group is ever
-- expanded quadratically. (`next_pos` is a column of its own: written as
-- `JOIN members b ON ... AND b.pos = a.pos + s.step` after the CROSS JOIN,
-- DataFusion 55's optimizer drops that condition and joins whole groups.)
-- Reads `signatures`; gives (method, doc_a, doc_b, strength, len_gap), doc_a < doc_b,
-- len_gap = difference of the two lengths.
WITH members AS (
    -- Most signatures belong to one document (on the Javadoc crawl 1.08 M
    -- of 1.13 M rows): chaining only the groups of two or more keeps the
    -- window's sort, the steps and the self-join small (5.1 to 0.6 CPU-s).
    SELECT s.method, s.slot, s.sig, s.doc_id, s.doc_len,
           CAST(ROW_NUMBER() OVER (PARTITION BY s.method, s.slot, s.sig ORDER BY s.doc_len, s.doc_id) AS BIGINT) AS pos
    FROM signatures s
    JOIN (SELECT method, slot, sig FROM signatures GROUP BY method, slot, sig HAVING COUNT(*) >= 2) shared
      ON shared.method = s.method AND shared.slot = s.slot AND shared.sig = s.sig
),
steps(step) AS (VALUES ${chain_steps}),
targets AS (
    SELECT a.method, a.slot, a.sig, a.doc_id, a.doc_len, a.pos + s.step AS next_pos
    FROM members a
    CROSS JOIN steps s
)
-- The links and their count in one aggregation (no further CTE levels:
-- Ballista's scheduler decodes plans with a bounded nesting depth, and the
-- candidates query nests this view deep inside its own).
SELECT t.method,
       LEAST(t.doc_id, b.doc_id) AS doc_a,
       GREATEST(t.doc_id, b.doc_id) AS doc_b,
       CAST(COUNT(*) AS DOUBLE) AS strength,
       MIN(CAST(b.doc_len AS BIGINT) - CAST(t.doc_len AS BIGINT)) AS len_gap
FROM targets t
JOIN members b
  ON b.method = t.method AND b.slot = t.slot AND b.sig = t.sig AND b.pos = t.next_pos
GROUP BY t.method, LEAST(t.doc_id, b.doc_id), GREATEST(t.doc_id, b.doc_id)

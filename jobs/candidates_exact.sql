-- Candidate pairs of the exact-match signature methods (a0-a10, imatch,
-- minhash bands): documents sharing (method, slot, sig) are candidates.
-- Groups larger than ${max_group_size} documents are not expanded (they are
-- listed in hot_signatures instead), so a boilerplate signature shared by
-- millions of pages cannot explode quadratically.
-- Reads `signatures`; gives (doc_a, doc_b, method), doc_a < doc_b.
WITH groups AS (
    SELECT method, slot, sig
    FROM signatures
    GROUP BY method, slot, sig
    HAVING COUNT(*) BETWEEN 2 AND ${max_group_size}
),
members AS (
    SELECT s.method, s.slot, s.sig, s.doc_id
    FROM signatures s
    JOIN groups g ON s.method = g.method AND s.slot = g.slot AND s.sig = g.sig
)
SELECT DISTINCT a.doc_id AS doc_a, b.doc_id AS doc_b, a.method
FROM members a
JOIN members b
  ON a.method = b.method AND a.slot = b.slot AND a.sig = b.sig AND a.doc_id < b.doc_id

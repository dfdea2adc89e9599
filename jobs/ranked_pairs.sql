-- Every distinct candidate pair as (later, earlier) in the keep order
-- ([dedup] keep), with both documents' keep ranks and text lengths and
-- the methods that proposed it as a bit mask (`methods`: the bit of each
-- method of `candidates`). verify_pairs.sql orders them by what their
-- comparisons cost.
--
-- `ranked` is keep_order.sql: every document's rank from 1. A pair
-- with a document missing from `documents` is left out (never placed).
-- Reads `candidates`, `documents`.
WITH methods(method, bit, comparing) AS (VALUES ${methods}),
ranked AS (${keep_ranks}),
pairs AS (
    SELECT c.doc_a, c.doc_b, bit_or(m.bit) AS methods
    FROM candidates c JOIN methods m ON c.method = m.method
    GROUP BY c.doc_a, c.doc_b
)
SELECT CASE WHEN ra.keep_rank > rb.keep_rank THEN p.doc_a ELSE p.doc_b END AS later,
       CASE WHEN ra.keep_rank > rb.keep_rank THEN p.doc_b ELSE p.doc_a END AS earlier,
       CAST(CASE WHEN ra.keep_rank > rb.keep_rank THEN ra.keep_rank ELSE rb.keep_rank END AS BIGINT UNSIGNED) AS later_rank,
       CAST(CASE WHEN ra.keep_rank > rb.keep_rank THEN rb.keep_rank ELSE ra.keep_rank END AS BIGINT UNSIGNED) AS earlier_rank,
       CASE WHEN ra.keep_rank > rb.keep_rank THEN ra.text_chars ELSE rb.text_chars END AS later_chars,
       CASE WHEN ra.keep_rank > rb.keep_rank THEN rb.text_chars ELSE ra.text_chars END AS earlier_chars,
       p.methods
FROM pairs p
JOIN ranked ra ON ra.doc_id = p.doc_a
JOIN ranked rb ON rb.doc_id = p.doc_b

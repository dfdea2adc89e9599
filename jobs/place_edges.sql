-- The placement pass's input: every candidate pair of `verify_pairs` by
-- its later document's rank, with round 0's verdict from `verify`
-- (`similarity` when it verified, `failed` when it did not, neither when
-- the document's bounds left it uncompared).
-- Reads `verify_pairs`, `duplicates`, `failed_pairs`.
WITH verdicts AS (
    SELECT doc_a, doc_b, similarity, FALSE AS failed FROM duplicates
    UNION ALL
    SELECT doc_a, doc_b, CAST(NULL AS DOUBLE) AS similarity, TRUE AS failed FROM failed_pairs
)
SELECT p.later, p.earlier, p.later_rank, p.earlier_rank, p.methods, v.similarity, COALESCE(v.failed, FALSE) AS failed
FROM verify_pairs p
LEFT JOIN verdicts v
  ON v.doc_a = CASE WHEN p.later < p.earlier THEN p.later ELSE p.earlier END
 AND v.doc_b = CASE WHEN p.later < p.earlier THEN p.earlier ELSE p.later END
ORDER BY p.later_rank, p.earlier_rank

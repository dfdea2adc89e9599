-- evaluate's judged pairs: for each method, its ${k} found pairs of
-- smallest pair_hash (all when it has fewer), ties by pair, in hash order;
-- a pair in several methods' samples is listed once. Over
-- `evaluate_found.sql` (the parameter `found`), `bits` the bit of each
-- method.
-- The bottom-k sample of a union of methods is among these pairs: the k
-- smallest of the union are each among the k smallest of a member.
-- Gives (doc_a, doc_b, mask, verified), verified null where verify did not
-- compare the pair (evaluate compares it).
WITH found AS (${found}),
bits(bit) AS (VALUES ${bits}),
ranked AS (
    SELECT f.doc_a, f.doc_b, f.mask, f.verified, f.pair_hash,
           ROW_NUMBER() OVER (PARTITION BY b.bit ORDER BY f.pair_hash, f.doc_a, f.doc_b) AS rank
    FROM found f CROSS JOIN bits b
    WHERE (f.mask & b.bit) <> CAST(0 AS BIGINT UNSIGNED)
)
SELECT DISTINCT doc_a, doc_b, mask, verified, pair_hash
FROM ranked
WHERE rank <= ${k}
ORDER BY pair_hash, doc_a, doc_b

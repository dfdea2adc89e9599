-- The edges of the methods with a search of their own (spotsigs, slst:
-- the `search` stage's `method_pairs`): strength = score = their Jaccard.
-- Gives (method, doc_a, doc_b, strength, len_gap = 0, score).
SELECT method, doc_a, doc_b, score AS strength, CAST(0 AS BIGINT) AS len_gap, score
FROM method_pairs

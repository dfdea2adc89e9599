-- The edges of the signature methods whose groups of equal signatures are
-- their edges (src/methods/registry.rs, Edges::SharedSignatures): their
-- rows of exact_edges (candidates_exact.sql). The signatures of
-- ${index_only_methods} are only the index their own SQL reads (minhash's
-- bands: minhash_edges.sql), so their rows are left out.
-- Gives (method, doc_a, doc_b, strength, len_gap, score = NULL).
SELECT method, doc_a, doc_b, strength, len_gap, CAST(NULL AS DOUBLE) AS score
FROM exact_edges
WHERE method NOT IN (${index_only_methods})

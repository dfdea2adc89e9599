-- Every distinct candidate pair once, with the URLs and the sorted list of
-- methods that proposed it. Reads `candidates`, `documents`. The verify stage
-- adds the similarity and the verdict to each row. `${own_pairs}` selects
-- the pairs of one task of a sharded verify stage (TRUE when unsharded).
SELECT c.doc_a, c.doc_b, da.url AS url_a, db.url AS url_b,
       array_sort(array_agg(DISTINCT c.method)) AS methods
FROM candidates c
JOIN documents da ON da.doc_id = c.doc_a
JOIN documents db ON db.doc_id = c.doc_b
WHERE ${own_pairs}
GROUP BY c.doc_a, c.doc_b, da.url, db.url
ORDER BY c.doc_a, c.doc_b

-- Document frequency (df: documents containing the term) and collection
-- frequency (cf: occurrences in the corpus) of every kept term.
-- Reads `tokens` and `exact_copies`, writes `df`: a copy of an earlier
-- document's verification text (exact_copies) is not counted, so the
-- frequencies count distinct texts (spec section 9, "Exact copies first").
WITH occurrences AS (
    SELECT doc_id, unnest(terms) AS term
    FROM tokens t
    WHERE NOT EXISTS (SELECT 1 FROM exact_copies c WHERE c.doc_id = t.doc_id)
),
-- One row per (term, document) first, then per term: both group-bys spill
-- under a memory limit, where one group-by with COUNT(DISTINCT doc_id)
-- kept a set of documents per term in a partial aggregation that could not
-- (it failed under --memory-limit 2G at 100,000 Javadoc pages; at 24,891
-- pages both cost about 1.3 CPU-s).
per_document AS (
    SELECT term, doc_id, COUNT(*) AS n
    FROM occurrences
    GROUP BY term, doc_id
)
SELECT term, COUNT(*) AS df, SUM(n) AS cf
FROM per_document
GROUP BY term
ORDER BY term

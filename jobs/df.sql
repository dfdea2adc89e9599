-- Document frequency (df: documents containing the term) and collection
-- frequency (cf: occurrences in the corpus) of every kept term.
-- Reads `tokens`, writes `df`.
WITH occurrences AS (
    SELECT doc_id, unnest(terms) AS term
    FROM tokens
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

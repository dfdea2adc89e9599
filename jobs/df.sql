-- Document frequency (df: documents containing the term) and collection
-- frequency (cf: occurrences in the corpus) of every kept term.
-- Reads `tokens`, writes `df`.
WITH occurrences AS (
    SELECT doc_id, unnest(terms) AS term
    FROM tokens
),
per_document AS (
    SELECT term, doc_id, COUNT(*) AS tf
    FROM occurrences
    GROUP BY term, doc_id
)
SELECT term, COUNT(*) AS df, SUM(tf) AS cf
FROM per_document
GROUP BY term
ORDER BY term

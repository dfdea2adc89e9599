-- Global statistics the methods need: N (documents) and dl_avg (mean number
-- of kept terms). Reads `tokens` and `exact_copies`, writes `corpus_stats`
-- (one row): the documents of distinct verification texts, copies left out
-- as in df.sql.
SELECT
    COUNT(*) AS n_docs,
    AVG(CAST(len AS DOUBLE)) AS dl_avg,
    CAST(SUM(len) AS BIGINT) AS total_terms
FROM tokens t
WHERE NOT EXISTS (SELECT 1 FROM exact_copies c WHERE c.doc_id = t.doc_id)

-- Global statistics the methods need: N (documents) and dl_avg (mean number
-- of kept terms). Reads `tokens`, writes `corpus_stats` (one row).
SELECT
    COUNT(*) AS n_docs,
    AVG(CAST(len AS DOUBLE)) AS dl_avg,
    CAST(SUM(len) AS BIGINT) AS total_terms
FROM tokens

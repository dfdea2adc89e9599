-- A11's chains (spec section 7 step 1) over `a11_shingles` (shingle,
-- doc_id, doc_len: each document's distinct shingles, or the rarest
-- ${a11_prefix_share} of them, a11_shingles.sql): a shingle's records
-- ordered by document length, then doc_id, numbered from 1 (`pos`).
-- Only shingles of two or more documents form chains: most shingles belong
-- to one document, and leaving them out keeps the window's sort small.
-- Written as the table a11_chains by the candidates stage: a11.sql joins
-- the chains with themselves, and as a view this sort and window would run
-- once for each side of the join (half of a11's cost on the Javadoc crawl).
-- Gives (shingle, doc_id, doc_len, pos).
WITH shared AS (
    SELECT shingle
    FROM a11_shingles
    GROUP BY shingle
    HAVING COUNT(*) >= 2
)
SELECT s.shingle, s.doc_id, s.doc_len,
       CAST(ROW_NUMBER() OVER (PARTITION BY s.shingle ORDER BY s.doc_len, s.doc_id) AS BIGINT) AS pos
FROM a11_shingles s
JOIN shared USING (shingle)

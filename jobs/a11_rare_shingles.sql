-- The night's side of a11's keys against the history
-- (jobs/history_edges.sql): each document's ${max_edges} rarest shingles,
-- by df among the night's pages, ties by shingle value. A page's rarest
-- shingles are its own text, not its site's template, and two pages that
-- share most of their shingles share their rarest ones too (prefix
-- filtering), so they link a page to its earlier copies without walking
-- the template's long chains, at a few keys per page instead of its
-- hundreds of shingles. The history's side keeps every shingle.
-- Gives (shingle, doc_id, doc_len).
SELECT shingle, doc_id, doc_len
FROM (
    SELECT s.shingle, s.doc_id, s.doc_len,
           ROW_NUMBER() OVER (PARTITION BY s.doc_id ORDER BY d.df, s.shingle) AS nth
    FROM shingles s
    JOIN (SELECT shingle, COUNT(*) AS df FROM shingles GROUP BY shingle) d USING (shingle)
) ranked
WHERE nth <= ${max_edges}

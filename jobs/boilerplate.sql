-- Site boilerplate: the lines (blocks) of a host found on many of its pages.
-- A line is template when it is found on at least ${min_pages} distinct page
-- contents of its host (digests of `documents.text`) and on at least
-- ${min_share} of the host's distinct contents. Pages are counted by content,
-- not by URL or capture: a page served under many URLs (`?sid=`, `utm_*`,
-- print views) or captured on many nights with the same text is one page,
-- so how many copies a crawl happened to hold never turns a page's own lines
-- into its host's template. Reads `blocks`, writes `boilerplate`.
--
-- The big group-bys key on numbers only (host_hash, not the host's name):
-- their hash tables are most of the stage's memory, and they spill under the
-- stage's pool. Host names come back from the per-host counts, a row per host.
WITH line_contents AS (
    -- One row per line of a page content, however many copies have it.
    SELECT host_hash, block_hash, text_hash, MIN(doc_id) AS doc_id
    FROM blocks
    GROUP BY host_hash, block_hash, text_hash
),
line_pages AS (
    SELECT host_hash, block_hash, COUNT(*) AS pages, MIN(doc_id) AS example_doc_id
    FROM line_contents
    GROUP BY host_hash, block_hash
    HAVING COUNT(*) >= ${min_pages}
),
host_pages AS (
    SELECT host_hash, MIN(host) AS host, COUNT(DISTINCT text_hash) AS host_pages
    FROM blocks
    GROUP BY host_hash
    HAVING COUNT(DISTINCT text_hash) >= ${min_pages}
)
SELECT h.host, l.block_hash, l.pages, h.host_pages, l.example_doc_id
FROM line_pages l
JOIN host_pages h ON h.host_hash = l.host_hash
WHERE CAST(l.pages AS DOUBLE) >= ${min_share} * CAST(h.host_pages AS DOUBLE)
ORDER BY h.host, l.block_hash

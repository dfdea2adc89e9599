-- Site boilerplate: the lines (blocks) of a host found on many of its pages.
-- A line is template when it is found on at least ${min_pages} distinct URLs
-- of its host and on at least ${min_share} of the host's distinct URLs.
-- Pages are counted by URL, not by capture: an article crawled on many nights
-- is still one page. Reads `blocks`, writes `boilerplate`.
WITH line_pages AS (
    SELECT host, block_hash, COUNT(DISTINCT url_hash) AS pages, MIN(doc_id) AS example_doc_id
    FROM blocks
    GROUP BY host, block_hash
    HAVING COUNT(DISTINCT url_hash) >= ${min_pages}
),
host_pages AS (
    SELECT host, COUNT(DISTINCT url_hash) AS host_pages
    FROM blocks
    GROUP BY host
    HAVING COUNT(DISTINCT url_hash) >= ${min_pages}
)
SELECT l.host, l.block_hash, l.pages, h.host_pages, l.example_doc_id
FROM line_pages l
JOIN host_pages h ON h.host = l.host
WHERE CAST(l.pages AS DOUBLE) >= ${min_share} * CAST(h.host_pages AS DOUBLE)
ORDER BY l.host, l.block_hash

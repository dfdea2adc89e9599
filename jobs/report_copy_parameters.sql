-- The URL query parameters that make exact copies (the report's "Exact
-- copies" section): for every exact copy (exact_copies), the parameters
-- (name=value) of its URL that its group's first URL does not have, by
-- name, with the number of copies that have one; the ${parameters} most
-- frequent. What a crawl operator looks for: session ids (sid, PHPSESSID,
-- jsessionid), tracking parameters (utm_*), calendar and sort traps.
-- Reads `exact_copies` and `documents`.
WITH copy_parameters AS (
    SELECT e.doc_id, e.first_doc_id, unnest(string_to_array(split_part(d.url, '?', 2), '&')) AS parameter
    FROM exact_copies e
    JOIN documents d ON d.doc_id = e.doc_id
),
first_parameters AS (
    SELECT DISTINCT e.first_doc_id, unnest(string_to_array(split_part(f.url, '?', 2), '&')) AS parameter
    FROM (SELECT DISTINCT first_doc_id FROM exact_copies) e
    JOIN documents f ON f.doc_id = e.first_doc_id
)
SELECT lower(split_part(c.parameter, '=', 1)) AS name, COUNT(DISTINCT c.doc_id) AS copies
FROM copy_parameters c
LEFT JOIN first_parameters f ON f.first_doc_id = c.first_doc_id AND f.parameter = c.parameter
WHERE f.parameter IS NULL AND c.parameter <> ''
GROUP BY lower(split_part(c.parameter, '=', 1))
ORDER BY copies DESC, name
LIMIT ${parameters}

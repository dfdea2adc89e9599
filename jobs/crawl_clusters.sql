-- The copy that survives each cluster of the night's pages and the earlier
-- pages they repeat (`--history DIR`, table crawl_clusters).
--
-- `members` (group_no, crawl, doc_id) is registered by the history code:
-- the night's clusters joined through its verified repeats (a union-find in
-- Rust, bounded by the night's pages and their repeats). Each member's
-- columns come from the night's `documents` or from `history_documents`
-- (with the canonical URL stored at append, so [dedup] keep ranks an earlier
-- crawl's copies as it ranks the night's: ${history_canonical_url}), read
-- only for the crawls ${member_crawls} that hold a member. The first
-- member in the order `${keep_order}` ([dedup] keep, which always ends
-- with crawl, doc_id) is kept; the others are duplicates, but for
-- [history] mark = "new-only" (${new_only}), where only the night's pages
-- (crawl ${night}) are ever marked, and "within-night" (${within_night}),
-- where none is. Each member's capture date is listed, so an export can
-- name an earlier crawl's kept copy by its crawl, URL and date.
-- The night's columns are those verify ranks by (the columns of
-- keep_columns.sql).
WITH attributes AS (
    SELECT m.group_no, m.crawl, m.doc_id, d.url, d.canonical_url, d.crawl_date, d.http_status, d.text_chars
    FROM members m
    JOIN (${keep_columns}) d ON d.doc_id = m.doc_id
    WHERE m.crawl = ${night}
    UNION ALL
    SELECT m.group_no, m.crawl, m.doc_id, h.url, ${history_canonical_url} AS canonical_url, h.crawl_date, h.http_status, h.text_chars
    FROM members m JOIN history_documents h ON h.doc_id = m.doc_id AND h.crawl = m.crawl
    WHERE m.crawl <> ${night} AND h.crawl IN (${member_crawls})
),
ranked AS (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY group_no ORDER BY ${keep_order}) AS nth
    FROM attributes
),
-- A GROUP BY, not `COUNT(*) OVER (PARTITION BY group_no)`: a window
-- without an order is DataFusion's WindowAggExec, which holds its whole
-- input in memory and cannot spill (see a11_shingles.sql).
sizes AS (
    SELECT group_no, COUNT(*) AS members
    FROM attributes
    GROUP BY group_no
)
SELECT k.doc_id AS cluster_id,
       k.crawl AS cluster_crawl,
       r.doc_id,
       r.crawl,
       r.url,
       r.crawl_date,
       CAST(s.members AS BIGINT UNSIGNED) AS cluster_size,
       r.nth = 1 AS is_kept,
       r.nth > 1 AND NOT ${within_night} AND (NOT ${new_only} OR r.crawl = ${night}) AS is_duplicate
FROM ranked r
JOIN ranked k ON k.group_no = r.group_no AND k.nth = 1
JOIN sizes s ON s.group_no = r.group_no
ORDER BY cluster_crawl, cluster_id, r.crawl, r.doc_id

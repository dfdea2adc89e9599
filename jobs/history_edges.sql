-- Candidate edges between the night's documents and the documents of
-- earlier crawls kept in the history (`--history DIR`): for each night
-- document, at most ${max_edges} earlier documents per method.
--
-- Groups are documents sharing (method, slot, sig): the night's keys
-- (`night_keys`: its `signatures`, and the keys of the methods whose own
-- records are matched, src/methods/registry.rs `history_keys`, such as
-- a11's shingles) against the same keys of the earlier crawls
-- (`past_keys`: the crawls ${earlier_crawls}, the complete crawls whose
-- ids sort before the night's). Only groups with a night member are read,
-- and pairs within the history are never formed: they were the earlier
-- nights' own work. A page that repeated an earlier page was not indexed
-- again ([history] index_repeats), so copies of the same pages night after
-- night do not grow these groups. Min-hash's bands are keys here too (its
-- resemblance join is for the night alone); verification follows.
--
-- Bounded like the night's chains, never expanded into a group's pairs: a
-- group's members, night and earlier together, are ordered by length, then
-- night before earlier, then doc_id; `h_rank` counts the earlier members up
-- to each row. The earlier members, at their rank, are the chain of the
-- chain walk (chain_links.sql); a night member with count r probes it twice:
-- at r, for the earlier members ranked r+1 .. r+${max_edges} (the next
-- ones), and at r-${max_edges}, for those ranked r-${max_edges}+1 .. r (the
-- previous ones). A template group of 8,000 night and 8,000 earlier pages
-- costs 8,000 * 2 * k links.
-- A pair linked in several groups (bands, lexicons, megashingles) counts
-- each (`strength`); each night document keeps its ${max_edges} strongest
-- earlier documents per method (then smallest length gap, then doc id and
-- crawl).
--
-- Exact repeats (method `exact`): a night document whose verification text
-- has the digest of an earlier document's (`tokens.text_digest` against
-- `past_digests`: history_documents.text_digest of the comparable crawls,
-- those kept with the night's [verify] text) is linked to at most
-- ${max_edges} such documents, the latest crawls first. Only the firsts of
-- the night's exact groups are matched (the documents not in
-- `exact_copies`): the other members follow their first's cluster, as in
-- the night.
--
-- Gives (method, doc_id, earlier_doc_id, earlier_crawl, strength, len_gap).
WITH night AS (
    SELECT method, slot, sig, doc_id, doc_len, crawl, CAST(0 AS BIGINT) AS earlier
    FROM night_keys
),
night_groups AS (
    SELECT DISTINCT method, slot, sig FROM night
),
past AS (
    SELECT h.method, h.slot, h.sig, h.doc_id, h.doc_len, h.crawl, CAST(1 AS BIGINT) AS earlier
    FROM past_keys h
    JOIN night_groups g ON g.method = h.method AND g.slot = h.slot AND g.sig = h.sig
    WHERE h.crawl IN (${earlier_crawls})
),
members AS (
    SELECT method, slot, sig, doc_id, doc_len, crawl, earlier,
           SUM(earlier) OVER (PARTITION BY method, slot, sig ORDER BY doc_len, earlier, doc_id, crawl
                              ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS h_rank
    FROM (SELECT * FROM night UNION ALL SELECT * FROM past)
),
chain AS (
    SELECT method, slot, sig, doc_id, doc_len, h_rank AS pos, crawl AS tag
    FROM members
    WHERE earlier = 1
),
probe_offsets(back) AS (VALUES (0), (${max_edges})),
night_probes AS (
    SELECT m.method, m.slot, m.sig, m.doc_id, m.doc_len, m.h_rank - o.back AS pos, m.crawl AS tag
    FROM members m
    CROSS JOIN probe_offsets o
    WHERE m.earlier = 0
),
${chain_links},
links AS (
    SELECT method, doc_id, next_id AS earlier_doc_id, next_tag AS earlier_crawl,
           ABS(CAST(next_len AS BIGINT) - CAST(doc_len AS BIGINT)) AS len_gap
    FROM chain_links
),
edges AS (
    SELECT method, doc_id, earlier_doc_id, earlier_crawl, COUNT(*) AS strength, MIN(len_gap) AS len_gap
    FROM links
    GROUP BY method, doc_id, earlier_doc_id, earlier_crawl
),
ranked AS (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY method, doc_id
                                 ORDER BY strength DESC, len_gap, earlier_doc_id, earlier_crawl) AS nth
    FROM edges
),
night_digests AS (
    SELECT doc_id, text_digest
    FROM tokens
    WHERE doc_id NOT IN (SELECT doc_id FROM exact_copies)
),
exact_repeats AS (
    SELECT 'exact' AS method, n.doc_id, p.doc_id AS earlier_doc_id, p.crawl AS earlier_crawl,
           CAST(1 AS BIGINT) AS strength, CAST(0 AS BIGINT) AS len_gap,
           ROW_NUMBER() OVER (PARTITION BY n.doc_id ORDER BY p.crawl DESC, p.doc_id) AS nth
    FROM night_digests n
    JOIN (${past_digests}) p ON p.text_digest = n.text_digest
)
SELECT method, doc_id, earlier_doc_id, earlier_crawl, strength, len_gap
FROM (
    SELECT method, doc_id, earlier_doc_id, earlier_crawl, strength, len_gap, nth FROM ranked
    UNION ALL
    SELECT method, doc_id, earlier_doc_id, earlier_crawl, strength, len_gap, nth FROM exact_repeats
)
WHERE nth <= ${max_edges}
ORDER BY method, doc_id, nth

-- The chain walk, written once: candidates_exact.sql, a11_pairs.sql, a12.sql and
-- history_edges.sql include it (the `chain_links` parameter,
-- src/tables/sql.rs). A group's members ordered by length form a chain,
-- and a group is never expanded into all its pairs (a template shared by
-- 30,000 pages would be 450 M pairs): each probe is linked to the members
-- at the next max_edges places of its chain, so a group of n members costs
-- n × max_edges links.
--
-- Reads two relations that the including query defines before it, with
-- the same columns:
--   chain (method, slot, sig, doc_id, doc_len, pos, tag): the members, pos
--     = 1, 2, ... within each group (method, slot, sig);
--   the probes, named by the chain_probes parameter: a probe at place p is
--     linked to the members at places p+1 .. p+max_edges of its group (p
--     may be 0 or below). A chain walked through itself probes with its
--     own members (the parameter is `chain`); the history probes with the
--     night's pages placed among the earlier crawls' ones. A parameter, not
--     a view of the chain: each view is a level of the plan, and Ballista's
--     scheduler decodes plans with a bounded nesting depth.
-- `tag` is carried along for the including query (a11's count of shingles
-- with that chain, the history's crawl of an earlier page).
-- Gives chain_links (method, slot, sig, doc_id, doc_len, tag, next_id,
-- next_len, next_tag): one row per probe and member linked.
--
-- How: each chain is cut into blocks of max_edges places, and a probe is
-- joined with two blocks (the one holding place p+1, and the next), then
-- kept to its max_edges places, rather than with each of those places one
-- by one: under a memory limit the join is a sort-merge join, and its
-- sorted side is then 2 copies of the probes rather than max_edges (at 41
-- copies of the Javadoc crawl, 8 copies of a11's chains filled 27 GB of
-- spill files and the disk). The target block is a column of its own, an
-- equi-join key: written as an expression in ON, DataFusion 55's optimizer
-- drops that condition and joins whole groups.
chain_blocks AS (
    SELECT method, slot, sig, doc_id, doc_len, pos, tag, (pos - 1) / ${max_edges} AS block
    FROM chain
),
chain_sides(ahead) AS (VALUES (0), (1)),
chain_targets AS (
    SELECT p.method, p.slot, p.sig, p.doc_id, p.doc_len, p.pos, p.tag,
           GREATEST(p.pos, 0) / ${max_edges} + s.ahead AS target_block
    FROM ${chain_probes} p
    CROSS JOIN chain_sides s
),
chain_links AS (
    SELECT t.method, t.slot, t.sig, t.doc_id, t.doc_len, t.tag,
           b.doc_id AS next_id, b.doc_len AS next_len, b.tag AS next_tag
    FROM chain_targets t
    JOIN chain_blocks b
      ON b.method = t.method AND b.slot = t.slot AND b.sig = t.sig AND b.block = t.target_block
    WHERE b.pos > t.pos AND b.pos <= t.pos + ${max_edges}
)

-- The candidate pairs one verify task compares in round 0: those of the
-- later documents dealt to it (the `owned` predicate over cost_rank: task
-- I of N takes the ranks r with (r - 1) mod 2N = I or 2N - 1 - I, the
-- costliest documents spread over the tasks), by the later document's
-- keep rank, then the earlier's. A document's pairs are bounded
-- (candidates.max_edges_per_document per method), so N tasks get equal
-- shares whatever the clusters.
-- Reads `verify_pairs`.
SELECT later, earlier, later_rank, earlier_rank, methods
FROM verify_pairs
WHERE ${owned}
ORDER BY later_rank, earlier_rank

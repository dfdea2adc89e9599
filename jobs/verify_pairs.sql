-- The candidate pairs one verify task compares in round 0: those whose
-- later document in the keep order it owns (the `owned` predicate over `later`: task I
-- of N owns later % N = I), by that document's rank, then the earlier's.
-- A document's pairs are bounded (candidates.max_edges_per_document per
-- method), so N tasks get equal shares whatever the clusters.
-- Reads what ranked_pairs.sql reads.
SELECT later, earlier, later_rank, earlier_rank, methods
FROM (${ranked_pairs}) pairs
WHERE ${owned}
ORDER BY later_rank, earlier_rank

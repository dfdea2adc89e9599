-- Signature groups and chains with more than ${max_group_size} documents,
-- per method: a report of the big groups (site templates, boilerplate,
-- mirrors). They are not skipped: candidates_exact.sql, a11.sql and a12.sql
-- walk them as length-ordered chains like any other group, so each member
-- still gets its bounded number of edges.
-- Reads method_groups: the (method, slot, sig) of every row of
-- `signatures` and of every record of the chain methods (a11_groups.sql,
-- a12_groups.sql; a11's chains are those of the shingles it keeps, each
-- distinct chain once), the
-- union the candidates stage registers from the method registry.
SELECT method, slot, sig, COUNT(*) AS size
FROM method_groups
GROUP BY method, slot, sig
HAVING COUNT(*) > ${max_group_size}
ORDER BY method, slot, sig

-- Signature groups and chains with more than ${max_group_size} documents,
-- per method: a report of the big groups (site templates, boilerplate,
-- mirrors). They are not skipped: candidates_exact.sql, a11_pairs.sql and a12.sql
-- walk them as length-ordered chains like any other group, so each member
-- still gets its bounded number of edges.
-- Reads method_hot_groups: the union of the long groups of the signature
-- methods (signature_groups.sql) and of the methods with chains of their
-- own (a11_groups.sql, a12_groups.sql), which the candidates stage
-- registers from the method registry; each gives (method, slot, sig,
-- size) from its chains' last places or its own count.
SELECT method, slot, sig, size
FROM method_hot_groups
ORDER BY method, slot, sig

-- The signature groups of more than ${max_group_size} documents, for the
-- report of long groups (hot_signatures.sql): a group's size is the last
-- place of its chain (signature_chains.sql), so only the members past
-- ${max_group_size} are read into the group-by. Counting every row of
-- `signatures` instead took a group-by over all of them, which spills
-- slowly under a memory limit (at 8 copies of the Javadoc crawl, 9.3 M
-- rows: 8 CPU-s, against 0.3 at one copy).
-- Gives (method, slot, sig, size).
SELECT method, slot, sig, MAX(pos) AS size
FROM signature_chains
WHERE pos > ${max_group_size}
GROUP BY method, slot, sig

-- a11's chains over ${max_group_size} records (the table a11_chains,
-- a11_chains.sql), for the report of long groups (hot_signatures.sql):
-- a chain's size is its last place, so only the records past
-- ${max_group_size} are read into the group-by. A chain that several
-- shingles have (a template's passage) is there once, under its smallest
-- shingle, so it is reported once.
-- Gives (method, slot, sig, size).
SELECT 'a11' AS method, CAST(0 AS SMALLINT UNSIGNED) AS slot, shingle AS sig, MAX(pos) AS size
FROM a11_chains
WHERE pos > ${max_group_size}
GROUP BY shingle

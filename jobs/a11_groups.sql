-- The group key of each record of a11's chains (a11_shingles.sql): its
-- shingle. hot_signatures.sql counts the records per key to report the
-- long chains.
-- Gives (method, slot, sig).
SELECT 'a11' AS method, CAST(0 AS SMALLINT UNSIGNED) AS slot, shingle AS sig
FROM a11_shingles

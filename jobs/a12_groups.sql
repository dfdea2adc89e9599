-- a12's keys of more than ${max_group_size} records, for the report of
-- long groups (hot_signatures.sql). A record is one document's under one
-- key sentence signature; a12.sql chains the records of a key.
-- Gives (method, slot, sig, size).
SELECT 'a12' AS method, CAST(0 AS SMALLINT UNSIGNED) AS slot, CAST(key AS BIGINT UNSIGNED) AS sig, COUNT(*) AS size
FROM a12_records
GROUP BY key
HAVING COUNT(*) > ${max_group_size}

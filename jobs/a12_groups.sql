-- The group key of each a12 record: its key sentence signature.
-- hot_signatures.sql counts the records per key to report the long chains.
-- Gives (method, slot, sig).
SELECT 'a12' AS method, CAST(0 AS SMALLINT UNSIGNED) AS slot, CAST(key AS BIGINT UNSIGNED) AS sig
FROM a12_records

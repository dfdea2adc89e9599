-- Signature groups and chains with more than ${max_group_size} documents,
-- per method: a report of the big groups (site templates, boilerplate,
-- mirrors). They are not skipped: candidates_exact.sql, a11.sql and a12.sql
-- walk them as length-ordered chains like any other group, so each member
-- still gets its bounded number of edges. a11's chains are those of the
-- shingles it keeps (a11_shingles.sql).
SELECT method, slot, sig, size FROM (
    SELECT method, slot, sig, COUNT(*) AS size
    FROM signatures
    GROUP BY method, slot, sig
    HAVING COUNT(*) > ${max_group_size}
  UNION ALL
    SELECT 'a11' AS method, CAST(0 AS SMALLINT UNSIGNED) AS slot, shingle AS sig, COUNT(*) AS size
    FROM a11_shingles
    GROUP BY shingle
    HAVING COUNT(*) > ${max_group_size}
  UNION ALL
    SELECT 'a12' AS method, CAST(0 AS SMALLINT UNSIGNED) AS slot, CAST(key AS BIGINT UNSIGNED) AS sig, COUNT(*) AS size
    FROM a12_records
    GROUP BY key
    HAVING COUNT(*) > ${max_group_size}
)
ORDER BY method, slot, sig

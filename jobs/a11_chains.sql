-- A11's chains (spec section 7 step 1) over `a11_shingles` (shingle,
-- doc_id, doc_len: each document's distinct shingles, or the rarest
-- ${a11_prefix_share} of them, a11_shingles.sql): a shingle's records
-- ordered by document length, then doc_id, numbered from 1 (`pos`).
-- Only shingles of two or more documents form chains: most shingles belong
-- to one document, and leaving them out keeps the window's sort small.
--
-- Each distinct chain is kept once. The consecutive shingles of a passage
-- that several documents share have the same documents, hence the same
-- chain, and walking it once per shingle links the same pairs again and
-- again: on the Javadoc crawl, 4.1 M records of 905 k chains come from
-- 138 k distinct chains of 0.9 M records (at 8 copies, 42.5 M records
-- from 16.9 M). A chain is kept under its smallest shingle, and
-- `shingles` says how many shingles have it: a11.sql counts a link that
-- many times, so each pair's strength is still the number of shingles
-- linking it.
-- Chains are told apart by their size and two 64-bit fingerprints of their
-- members: the XOR of the doc_ids and the XOR of their splitmix64 hashes
-- (the wrapping products are DataFusion's unsigned arithmetic). Two
-- different chains of equal size agree on the second with odds of 2^-64,
-- whatever the ids, and on the first too (the ids are xxh3 hashes,
-- src/ingest/record.rs) with about 2^-128; SQL has no exact test of list
-- equality that every engine runs (stock Ballista executors lack the
-- array functions, see a12.sql).
--
-- The window partitions by (shingle, shingles), the same groups as by
-- shingle alone, so that its order names a column of the chains' side:
-- partitioned by the join key, DataFusion 55 pushes the window's sort
-- below the join, onto every row of a11_shingles, and sorts them twice
-- (by shingle for the join, then by shingle, length and id), where the
-- window needs only the chains' records sorted (at 8 copies of the Javadoc
-- crawl 64 M rows against 11.6 M: 56.5 → 43.9 CPU-s for this job).
--
-- Written as the table a11_chains by the candidates stage: a11.sql joins
-- the chains with themselves, and as a view this sort and window would run
-- once for each side of the join (half of a11's cost on the Javadoc crawl).
-- Gives (shingle, doc_id, doc_len, pos, shingles).
WITH chains AS (
    SELECT shingle,
           COUNT(*) AS members,
           bit_xor(doc_id) AS xor_ids,
           bit_xor(mixed ^ (mixed >> 31)) AS xor_mixed
    FROM (
        SELECT shingle, doc_id,
               (mixing ^ (mixing >> 27)) * CAST(10723151780598845931 AS BIGINT UNSIGNED) AS mixed
        FROM (
            SELECT shingle, doc_id,
                   (doc_id ^ (doc_id >> 30)) * CAST(13787848793156543929 AS BIGINT UNSIGNED) AS mixing
            FROM a11_shingles
        ) first_round
    ) hashed
    GROUP BY shingle
    HAVING COUNT(*) >= 2
),
distinct_chains AS (
    SELECT MIN(shingle) AS shingle, COUNT(*) AS shingles
    FROM chains
    GROUP BY members, xor_ids, xor_mixed
)
SELECT c.shingle, s.doc_id, s.doc_len,
       CAST(ROW_NUMBER() OVER (PARTITION BY c.shingle, c.shingles ORDER BY s.doc_len, s.doc_id) AS BIGINT) AS pos,
       CAST(c.shingles AS BIGINT) AS shingles
FROM a11_shingles s
JOIN distinct_chains c ON c.shingle = s.shingle

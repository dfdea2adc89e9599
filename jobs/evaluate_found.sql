-- The methods' found pairs, for evaluate's bottom-k samples (Tables 2-4
-- of the study): every distinct candidate pair with the methods that
-- proposed it as a bit mask (`methods`: the bit of each method of
-- `candidates`), `verify`'s verdict when it compared the pair, and its
-- sampling hash.
--
-- A method that includes its comparison (a11, `comparing`) found only the
-- pairs that passed it: its bit is cleared where the verdict is a failure,
-- and `missing` marks a pair of such a method that verify never compared
-- (the stage refuses to go on: rerun verify). `mask` is 0 for a pair no
-- method found any more.
--
-- pair_hash = splitmix64's finalizer of doc_a XOR doc_b * 0x9E3779B97F4A7C15
-- (wrapping unsigned arithmetic; `evaluate::judge::pair_hash` is the same
-- in Rust): uniform over pairs and the same for every method, so the
-- samples of methods nest. In SQL so that the engine, not the pipeline
-- process, orders the pairs.
-- Reads `candidates`, `duplicates`, `failed_pairs`. Gives (doc_a, doc_b,
-- mask, verified, missing, pair_hash).
WITH methods(method, bit, comparing) AS (VALUES ${methods}),
proposed AS (
    SELECT c.doc_a, c.doc_b,
           bit_or(m.bit) AS proposed,
           bit_or(CASE WHEN m.comparing THEN m.bit ELSE CAST(0 AS BIGINT UNSIGNED) END) AS comparing
    FROM candidates c JOIN methods m ON c.method = m.method
    GROUP BY c.doc_a, c.doc_b
),
verdicts AS (
    SELECT doc_a, doc_b, verified FROM duplicates
    UNION ALL
    SELECT doc_a, doc_b, FALSE AS verified FROM failed_pairs
),
judged AS (
    SELECT p.doc_a, p.doc_b,
           CASE WHEN v.verified = FALSE THEN p.proposed - p.comparing ELSE p.proposed END AS mask,
           v.verified,
           p.comparing <> CAST(0 AS BIGINT UNSIGNED) AND v.verified IS NULL AS missing,
           p.doc_a ^ (p.doc_b * CAST(11400714819323198485 AS BIGINT UNSIGNED)) AS seed
    FROM proposed p LEFT JOIN verdicts v ON p.doc_a = v.doc_a AND p.doc_b = v.doc_b
),
first_round AS (
    SELECT doc_a, doc_b, mask, verified, missing,
           (seed ^ (seed >> 30)) * CAST(13787848793156543929 AS BIGINT UNSIGNED) AS z
    FROM judged
),
second_round AS (
    SELECT doc_a, doc_b, mask, verified, missing,
           (z ^ (z >> 27)) * CAST(10723151780598845931 AS BIGINT UNSIGNED) AS z
    FROM first_round
)
SELECT doc_a, doc_b, mask, verified, missing, z ^ (z >> 31) AS pair_hash
FROM second_round

-- Table verify_pairs: every distinct candidate pair as (later, earlier)
-- in the keep order (ranked_pairs.sql), and its later document's place in
-- the order of cost (`cost_rank`, 1 = the costliest). A pair's comparison
-- costs about the square of the shorter text (an LCS scan, where the
-- bounds let it run), a later document the sum over its pairs.
-- Task I of N of `verify` takes the later documents dealt to it by
-- cost_rank back and forth (verify_task_pairs.sql): the costliest N go
-- to N different tasks, so that a few pairs of megabyte pages do not
-- load one task.
-- Reads what ranked_pairs.sql reads.
WITH pairs AS (${ranked_pairs}),
costed AS (
    SELECT later, earlier, later_rank, earlier_rank, methods,
           SUM(CAST(LEAST(later_chars, earlier_chars) AS DOUBLE) * CAST(LEAST(later_chars, earlier_chars) AS DOUBLE))
               OVER (PARTITION BY later) AS cost
    FROM pairs
)
SELECT later, earlier, later_rank, earlier_rank, methods,
       CAST(DENSE_RANK() OVER (ORDER BY cost DESC, later) AS BIGINT UNSIGNED) AS cost_rank
FROM costed

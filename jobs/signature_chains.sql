-- The chains of the signature groups (a0-a5, a10, imatch, a7, a9, minhash
-- bands, a6 megashingles, a8 log-shingles): documents sharing (method,
-- slot, sig) form a group, its members ordered by length then doc_id and
-- numbered from 1 (`pos`).
--
-- Only groups of two or more documents are chained: most signatures belong
-- to one document (at 8 copies of the Javadoc crawl, 0.23 M of 9.3 M rows
-- are in shared groups), and a group of one links nothing. A member is in
-- a shared group when the row before or after it, in the order of the
-- group keys, has its key: one sort of every row and a window without
-- partitions, then numbered within the few groups left. At 8 copies this
-- took 10.8 CPU-s, where counting the groups (GROUP BY ... HAVING
-- COUNT(*) >= 2, a hash aggregation that spills slowly) and joining the
-- counts back took 16.4; a window partitioned by group (ROW_NUMBER and
-- LEAD over every row) took 40, since DataFusion's streaming window pays
-- for each partition and most are one row.
--
-- Written as the table signature_chains by the candidates stage: the chain
-- walk of candidates_exact.sql reads the chains twice (as members and as
-- probes) and its two users (the signature methods' edges and minhash's
-- band pairs) read it once each, and a view is computed at each use;
-- signature_groups.sql takes the long groups' sizes from their last place.
-- Gives (method, slot, sig, doc_id, doc_len, pos).
SELECT method, slot, sig, doc_id, doc_len,
       CAST(ROW_NUMBER() OVER (PARTITION BY method, slot, sig ORDER BY doc_len, doc_id) AS BIGINT) AS pos
FROM (
    SELECT method, slot, sig, doc_id, doc_len,
           LAG(method) OVER keys AS before_method, LAG(slot) OVER keys AS before_slot, LAG(sig) OVER keys AS before_sig,
           LEAD(method) OVER keys AS after_method, LEAD(slot) OVER keys AS after_slot, LEAD(sig) OVER keys AS after_sig
    FROM signatures
    WINDOW keys AS (ORDER BY method, slot, sig)
) neighbours
WHERE (before_method = method AND before_slot = slot AND before_sig = sig)
   OR (after_method = method AND after_slot = slot AND after_sig = sig)

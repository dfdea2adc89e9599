-- The chains of the signature groups (a0-a5, a10, imatch, a7, a9, minhash
-- bands, a6 megashingles, a8 log-shingles): documents sharing (method,
-- slot, sig) form a group, its members ordered by length then doc_id and
-- numbered from 1 (`pos`).
--
-- Only groups of two or more documents are chained: most signatures belong
-- to one document (at 8 copies of the Javadoc crawl, 0.23 M of 9.3 M rows
-- are in shared groups), and a group of one links nothing. They are found
-- by a count and a join rather than by a window over every row (a LEAD
-- telling whether a member has a successor): DataFusion's streaming window
-- pays for each partition, and 9.3 M groups of one took 40 CPU-s.
--
-- Written as the table signature_chains by the candidates stage: the chain
-- walk of candidates_exact.sql reads the chains twice (as members and as
-- probes) and its two users (the signature methods' edges and minhash's
-- band pairs) read it once each, and a view is computed at each use;
-- signature_groups.sql takes the long groups' sizes from their last place.
-- Gives (method, slot, sig, doc_id, doc_len, pos).
SELECT s.method, s.slot, s.sig, s.doc_id, s.doc_len,
       CAST(ROW_NUMBER() OVER (PARTITION BY s.method, s.slot, s.sig ORDER BY s.doc_len, s.doc_id) AS BIGINT) AS pos
FROM signatures s
JOIN (SELECT method, slot, sig FROM signatures GROUP BY method, slot, sig HAVING COUNT(*) >= 2) shared
  ON shared.method = s.method AND shared.slot = s.slot AND shared.sig = s.sig

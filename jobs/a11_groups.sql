-- The group key of each record of a11's chains (the table a11_chains,
-- a11_chains.sql): its shingle. hot_signatures.sql counts the records per
-- key to report the long chains. A chain that several shingles have (a
-- template's passage) is there once, under its smallest shingle, so it is
-- reported once; and the count runs over the chains' records rather than
-- over every shingle of every document, most of which are one document's
-- own (on 8 copies of the Javadoc crawl 16.9 M records against 73.5 M).
-- Gives (method, slot, sig).
SELECT 'a11' AS method, CAST(0 AS SMALLINT UNSIGNED) AS slot, shingle AS sig
FROM a11_chains

//! The bounded search by keys ([`crate::methods::KeyedSearch`]) of the methods that find
//! their pairs by a search of their own (SpotSigs, SL+ST), in four steps,
//! each a stage that runs anywhere:
//!
//! 1. [`keys::KeyWriter`] (stage `search_keys`, a map stage): one pass over a
//!    task's token lists writes every document's keys to `search_keys` and
//!    its encoded form to `search_forms`.
//! 2. [`groups::groups_sql`] (stage `search_groups`, a map stage by key): task I of
//!    N chains the groups of documents sharing a key with `sig % N = I`
//!    (`jobs/search_groups.sql`) and counts the keys linking each pair, as
//!    `search_key_links`.
//! 3. [`links::links_sql`] (stage `search_links`, plain SQL on the run's engine):
//!    sums those counts and keeps each document's strongest partners, as
//!    `search_links`.
//! 4. [`score::score_links`] (stage `search`, a map stage): task I of N scores the
//!    links whose doc_a is its own, from the two encoded forms, and reads
//!    only the forms those links name.
//!
//! No step holds more than a chunk of documents, a batch of pairs and the
//! forms of one task's pairs (on local disk), whatever the size of a group
//! or of the crawl. Each document's strongest scored pairs are kept by
//! `candidates`, as every method's edges are (`jobs/candidates.sql`). The
//! methods' one-process searches (SpotSigs' pruned index, SL+ST's suffix
//! array, compiled for tests only) are the test references.
//!
//! Each stage is a module here, holding its tables and its SQL; the methods
//! give the keys, the forms and the scores ([`crate::methods::keyed`]).

pub mod groups;
pub mod keys;
pub mod links;
pub mod score;

/// The pairs of `search` over `docs` as the four stages find them (read
/// 7 at a time, keys grouped and links scored as 2 tasks), for the methods' tests against their
/// one-process reference (the tests of `crate::methods::spotsigs` and
/// `slst`).
#[cfg(test)]
pub fn keyed_pairs(
    search: &dyn crate::methods::KeyedSearch,
    docs: &[crate::methods::DocView<'_>],
    max_edges: u32,
) -> Vec<crate::methods::ScoredPair> {
    use crate::methods::{EdgeBound, ScoredPair};
    use crate::tables::columns::{search_key_links, search_links};
    use crate::tables::shard::Shard;
    use std::collections::BTreeMap;

    static RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out = std::env::temp_dir().join(format!("neardup-keyed-{}-{n}", std::process::id()));
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
    let mut keys = keys::KeyWriter::for_shard(&out, Shard::WHOLE).expect("the key tables open");
    keys.write("keyed", search, &crate::methods::Chunked(docs, 7)).expect("the keys are written");
    keys.commit().expect("the key tables are published");
    let session = || runtime.block_on(crate::tables::sql::session_with_memory_limit(&out, None)).expect("a session");
    let bound = EdgeBound::new(max_edges);
    for index in 0..2 {
        let (shard, sql) =
            (Shard { index, count: 2 }, groups::groups_sql("keyed", search, bound, Shard { index, count: 2 }));
        let parts = [("keyed", sql)];
        runtime
            .block_on(crate::tables::sql::run_parts_into_shard(
                &session(),
                &out,
                search_key_links::TABLE,
                shard,
                &parts,
            ))
            .expect("the groups are walked");
    }
    runtime
        .block_on(crate::tables::sql::run_into_table(
            &session(),
            &out,
            search_links::TABLE,
            &links::links_sql("keyed", bound),
        ))
        .expect("the links are written");
    let (session, mut pairs, mut counters) = (session(), Vec::new(), BTreeMap::new());
    for index in 0..2 {
        let shard = Shard { index, count: 2 };
        let mut keep = |found: &[ScoredPair]| {
            pairs.extend_from_slice(found);
            Ok(())
        };
        runtime
            .block_on(score::score_links(&session, &out, "keyed", search, shard, &mut keep, &mut counters))
            .expect("the links are scored");
    }
    let _ = std::fs::remove_dir_all(out);
    pairs.sort_by_key(|p| (p.doc_a, p.doc_b));
    pairs
}

//! Stage `verify`: `verify_pairs` → `duplicates`, `failed_pairs`: round 0
//! of verification, every candidate pair compared once.
//!
//! Verification in bounded units (spec §9; design C of `docs/design.md`):
//! the clusters depend on the order documents are placed in, but the
//! comparisons that build them do not need that order. So the work is
//! split in two:
//!
//! 1. This stage compares every distinct candidate pair once, by the task
//!    that owns its later document in the keep order (`[dedup] keep`;
//!    `verify_pairs` oriented the pairs and ranked the later documents by
//!    the estimated cost of their comparisons, and task I of N takes the
//!    ranks dealt to it back and forth, so the costliest go to different
//!    tasks), the later document as the Perl module's first string. A
//!    document's pairs are bounded (at most
//!    `candidates.max_edges_per_document` per method, then
//!    `verify.max_comparisons_per_document` and the budget of failing
//!    comparisons, [`crate::verify::partners`]), so N tasks get equal work
//!    whatever the size of a template group: no task holds a connected
//!    component, or the whole `candidates` table.
//! 2. `place` ([`crate::stages::verify::place`]) takes the documents in keep order
//!    and places each with the representatives its edges reach, from these
//!    verdicts, making the few comparisons it lacks in rounds.
//!
//! Each comparison is [`crate::verify::compare::compare`]'s: cheap bounds
//! and the screen (`verify.screen`) first, then at most one LCS with an
//! early exit (exact, or the Perl module's value with `verify.algorithm =
//! "string-similarity"`). A failed pair's row in `failed_pairs` says which
//! of these rejected it, and at what value. The
//! methods that include their comparison (a11) found the pairs that pass
//! it: all their pairs are compared, whatever the bounds, never screened,
//! and counted per method as `<method>_comparisons` and `<method>_found_pairs`.
//!
//! A task reads its pairs (its share of `verify_pairs`), writes the texts of
//! their documents to a file on local disk ([`crate::storage::spilled_docs`]),
//! and compares its later documents in batches of bounded bytes (each
//! text counted with the screen's 8-gram set it may build), each batch's
//! texts read once.

use anyhow::Result;
use futures::StreamExt;
use rayon::prelude::*;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;

use crate::config::Config;
use crate::stages::stage::{RunContext, Stage};
use crate::stages::verify::inputs::{load_candidate_methods, register_doc_ids, spill_verification_texts};
use crate::tables::column;
use crate::tables::columns::{candidates, documents, duplicates, failed_pairs, tokens, verify_pairs};
use crate::tables::manifest::StageReport;
use crate::tables::sql::substitute;
use crate::tables::write::TableOutput;
use crate::tables::Table;
use crate::verify::compare::{held_bytes, Doc, Outcome, OutcomeCounts};
use crate::verify::partners::{compare_partners, strength_order, PartnerVerdict, Rule};
use crate::verify::spilled_texts::spilled_docs;

pub mod inputs;
pub mod keep_order;
pub mod pairs;
pub mod place;

/// The verify stage.
pub struct Verify;

impl Stage for Verify {
    fn name(&self) -> &'static str {
        "verify"
    }
    fn inputs(&self) -> Vec<Table> {
        vec![verify_pairs::NAME, candidates::NAME, documents::NAME, tokens::NAME]
    }
    fn outputs(&self, _: &Config) -> Vec<Table> {
        vec![duplicates::NAME, failed_pairs::NAME]
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({"verify": config.verify, "dedup": config.dedup})
    }
    fn shardable(&self) -> bool {
        true
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        ctx.runtime.block_on(run(ctx))
    }
}

/// One candidate pair of the task: its later and earlier document in the
/// keep order, the earlier's keep rank, and the methods' mask.
struct TaskPair {
    later: u64,
    earlier: u64,
    earlier_rank: u64,
    methods: u64,
}

/// The most bytes one batch of later documents holds (their own and their
/// partners' texts, and with the screen on their 8-gram sets, counted by
/// [`held_bytes`]): pages of megabytes are not rare, and memory must not
/// grow with them. 64 MB of text before the screen; its sets take 4 bytes
/// per character, so the bound doubled and a batch holds about 26 MB of
/// text with them.
const BATCH_BYTES: u64 = 128 << 20;

/// The most documents one batch reads.
const BATCH_DOCS: usize = 4096;

async fn run(ctx: &RunContext) -> Result<StageReport> {
    let session = ctx.session().await?;
    let methods = load_candidate_methods(&session).await?;
    let rule = Rule {
        pair: ctx.config.verify.rule(),
        comparing: methods.comparing_mask(),
        max_comparisons: ctx.config.verify.max_comparisons_per_document,
        failed_budget: ctx.config.verify.failed_comparison_budget,
    };
    let pairs = task_pairs(&session, ctx.shard).await?;
    let mut ids: Vec<u64> = pairs.iter().flat_map(|p| [p.later, p.earlier]).collect();
    ids.sort_unstable();
    ids.dedup();
    let urls = load_urls(&session, &ids).await?;
    let texts =
        spill_verification_texts(&session, |id| ids.binary_search(&id).is_ok(), rule.pair.text, &ctx.out).await?;
    drop(ids);

    // The later documents' groups of pairs, strongest partner first.
    let mut pairs = pairs;
    let mut groups: Vec<(usize, usize)> = Vec::new();
    for (k, p) in pairs.iter().enumerate() {
        match groups.last_mut() {
            Some(g) if pairs[g.0].later == p.later => g.1 = k + 1,
            _ => groups.push((k, k + 1)),
        }
    }
    for &(start, end) in &groups {
        pairs[start..end].sort_by_key(|p| strength_order(p.methods, p.earlier_rank));
    }

    let progress = crate::process::progress::counter(ctx.progress, groups.len() as u64, "verify", "docs");
    let mut compared: Vec<Compared> = Vec::new();
    let mut counts = Counts::default();
    let bytes = |id| held_bytes(u64::from(texts.size(id).unwrap_or(0)), rule.pair);
    for batch in batches(&groups, &pairs, bytes) {
        let needed = batch.iter().flat_map(|&(start, end)| pairs[start..end].iter().flat_map(|p| [p.later, p.earlier]));
        let docs = spilled_docs(&texts, needed)?;
        let verdicts: Vec<Vec<PartnerVerdict>> = batch
            .par_iter()
            .map(|&(start, end)| {
                let group = &pairs[start..end];
                let partners: Vec<(Arc<Doc>, u64)> =
                    group.iter().map(|p| (docs[&p.earlier].clone(), p.methods)).collect();
                let verdicts = compare_partners(&docs[&group[0].later], &partners, rule);
                // Counted per document, not per batch: a batch is often
                // the whole task, and its bar would sit at 0 until the end.
                progress.inc(1);
                verdicts
            })
            .collect();
        for (&(start, end), verdicts) in batch.iter().zip(verdicts) {
            counts.add(&pairs[start..end], &verdicts, &mut compared);
        }
    }
    progress.finish_and_clear();
    drop(texts);

    let mut report = StageReport::default();
    // duplicates and failed_pairs: one row per comparison, by (doc_a, doc_b).
    compared.sort_unstable_by_key(|c| (c.a, c.b));
    let mut verified = TableOutput::<duplicates::Rows>::for_shard(&ctx.out, ctx.shard)?;
    let mut failed = TableOutput::<failed_pairs::Rows>::for_shard(&ctx.out, ctx.shard)?;
    for c in &compared {
        let names: Vec<&str> = methods.names(c.methods).collect();
        let (url_a, url_b) = (urls.get(&c.a).map_or("", String::as_str), urls.get(&c.b).map_or("", String::as_str));
        match c.similarity {
            Some(sim) => verified.push(|row| {
                row.doc_a.append_value(c.a);
                row.doc_b.append_value(c.b);
                row.url_a.append_value(url_a);
                row.url_b.append_value(url_b);
                row.methods.append_value(names.iter().map(Some));
                row.similarity.append_value(sim);
                row.verified.append_value(true);
            })?,
            None => failed.push(|row| {
                row.doc_a.append_value(c.a);
                row.doc_b.append_value(c.b);
                row.url_a.append_value(url_a);
                row.url_b.append_value(url_b);
                row.methods.append_value(names.iter().map(Some));
                row.outcome.append_value(c.outcome.name());
                row.value.append_value(c.value);
            })?,
        }
    }
    report.rows.insert(duplicates::TABLE.into(), verified.commit()?);
    report.rows.insert(failed_pairs::TABLE.into(), failed.commit()?);

    let c = &mut report.counters;
    c.insert("candidate_pairs".into(), pairs.len() as u64);
    c.insert("documents_compared".into(), groups.len() as u64);
    c.insert("comparisons".into(), compared.len() as u64);
    c.insert("documents_at_comparison_bound".into(), counts.capped);
    // Invariant (b) of the kept set holds among the pairs compared: those
    // the bounds let through.
    c.insert("candidate_pairs_left_uncompared".into(), counts.cut + counts.over_budget);
    c.insert("comparisons_over_budget".into(), counts.over_budget);
    counts.outcomes.insert_into(c);
    c.insert("verified_pairs".into(), compared.iter().filter(|c| c.similarity.is_some()).count() as u64);
    // The own comparisons of the methods that include theirs: every
    // candidate pair of this task's later documents, each compared once.
    for (bit, method) in methods.methods.iter().enumerate().filter(|(i, _)| rule.comparing >> i & 1 == 1) {
        let of_method = compared.iter().filter(|c| c.methods >> bit & 1 == 1);
        let (compared_own, found) =
            of_method.fold((0u64, 0u64), |(n, f), c| (n + 1, f + c.similarity.is_some() as u64));
        c.insert(format!("{method}_comparisons"), compared_own);
        c.insert(format!("{method}_found_pairs"), found);
    }
    Ok(report)
}

/// One comparison made, as a row: the pair (doc_a < doc_b), the methods
/// that proposed it, the similarity (None below the threshold), and for a
/// failed one how it ended and the value it ended at.
struct Compared {
    a: u64,
    b: u64,
    methods: u64,
    similarity: Option<f64>,
    outcome: Outcome,
    value: f64,
}

/// The task's counts for the manifest.
#[derive(Default)]
struct Counts {
    outcomes: OutcomeCounts,
    /// Later documents with a pair the bounds left uncompared.
    capped: u64,
    /// Pairs beyond `max_comparisons_per_document`.
    cut: u64,
    /// Pairs beyond the budget of failing comparisons.
    over_budget: u64,
}

impl Counts {
    /// Counts one later document's verdicts and adds its comparisons.
    fn add(&mut self, group: &[TaskPair], verdicts: &[PartnerVerdict], compared: &mut Vec<Compared>) {
        let mut capped = false;
        for (p, verdict) in group.iter().zip(verdicts) {
            match *verdict {
                PartnerVerdict::Compared(c) => {
                    self.outcomes.add(c.outcome);
                    let (a, b) = (p.later.min(p.earlier), p.later.max(p.earlier));
                    let (similarity, outcome, value) = (c.similarity, c.outcome, c.value);
                    compared.push(Compared { a, b, methods: p.methods, similarity, outcome, value });
                }
                PartnerVerdict::Cut => (self.cut, capped) = (self.cut + 1, true),
                PartnerVerdict::OverBudget => (self.over_budget, capped) = (self.over_budget + 1, true),
            }
        }
        self.capped += u64::from(capped);
    }
}

/// The task's candidate pairs: those of the later documents dealt to it
/// by their cost rank (all of them for a whole run), by the later
/// document's keep rank, then the earlier's (`jobs/verify_task_pairs.sql`).
async fn task_pairs(
    session: &datafusion::prelude::SessionContext,
    shard: crate::tables::shard::Shard,
) -> Result<Vec<TaskPair>> {
    let owned = if shard.is_whole() {
        "TRUE".to_string()
    } else {
        // Back and forth: ranks 1..N to tasks 0..N-1, N+1..2N to N-1..0.
        let (n, i) = (shard.count, shard.index);
        format!(
            "(CASE WHEN (cost_rank - 1) % {two_n} < {n} THEN (cost_rank - 1) % {n} \
             ELSE {last} - (cost_rank - 1) % {two_n} END) = {i}",
            two_n = 2 * n,
            last = 2 * n - 1
        )
    };
    let sql = substitute(include_str!("../../../jobs/verify_task_pairs.sql"), &[("owned", owned)]);
    let mut pairs = Vec::new();
    let mut stream = session.sql(&sql).await?.execute_stream().await?;
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        let later = column::<arrow::array::UInt64Array>(&batch, "later")?;
        let earlier = column::<arrow::array::UInt64Array>(&batch, "earlier")?;
        let earlier_rank = column::<arrow::array::UInt64Array>(&batch, "earlier_rank")?;
        let methods = column::<arrow::array::UInt64Array>(&batch, "methods")?;
        pairs.extend((0..batch.num_rows()).map(|i| TaskPair {
            later: later.value(i),
            earlier: earlier.value(i),
            earlier_rank: earlier_rank.value(i),
            methods: methods.value(i),
        }));
    }
    Ok(pairs)
}

/// The urls of the documents `ids` (sorted), for the rows.
async fn load_urls(session: &datafusion::prelude::SessionContext, ids: &[u64]) -> Result<HashMap<u64, String>> {
    register_doc_ids(session, "own_docs", ids.to_vec())?;
    let sql = "SELECT d.doc_id, d.url FROM documents d JOIN own_docs o ON o.doc_id = d.doc_id";
    let mut urls = HashMap::with_capacity(ids.len());
    let mut stream = session.sql(sql).await?.execute_stream().await?;
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        let (doc_ids, url) = (documents::doc_id(&batch)?, documents::url(&batch)?);
        urls.extend((0..batch.num_rows()).map(|i| (doc_ids.value(i), url.value(i).to_string())));
    }
    Ok(urls)
}

/// The groups (ranges of `pairs`, one per later document) in batches in
/// their order: each batch's documents, the later ones and their
/// partners, count at most [`BATCH_BYTES`] (by `bytes(doc_id)`) and
/// [`BATCH_DOCS`] documents, or are one group's. A document shared by two
/// groups of a batch counts once.
fn batches<'a>(
    groups: &'a [(usize, usize)],
    pairs: &[TaskPair],
    bytes: impl Fn(u64) -> u64,
) -> impl Iterator<Item = &'a [(usize, usize)]> {
    let mut cuts = vec![0];
    let (mut held, mut size) = (std::collections::HashSet::new(), 0u64);
    for (k, &(start, end)) in groups.iter().enumerate() {
        let docs: Vec<u64> =
            std::iter::once(pairs[start].later).chain(pairs[start..end].iter().map(|p| p.earlier)).collect();
        let added: u64 = docs.iter().filter(|id| !held.contains(*id)).map(|&id| bytes(id)).sum();
        let new_docs = docs.iter().filter(|id| !held.contains(*id)).count();
        if k > *cuts.last().expect("a first cut") && (size + added > BATCH_BYTES || held.len() + new_docs > BATCH_DOCS)
        {
            cuts.push(k);
            held.clear();
            size = 0;
        }
        size += docs.iter().filter(|&&id| held.insert(id)).map(|&id| bytes(id)).sum::<u64>();
    }
    cuts.push(groups.len());
    let cuts: Vec<(usize, usize)> = cuts.windows(2).map(|w| (w[0], w[1])).filter(|(a, b)| a < b).collect();
    cuts.into_iter().map(move |(a, b)| &groups[a..b])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Batches cut where the next group's new documents would pass the
    /// bytes or the count, count a shared document once, and hold at
    /// least one group.
    #[test]
    fn batches_are_bounded_by_bytes_and_documents() {
        let pair = |later, earlier| TaskPair { later, earlier, earlier_rank: earlier, methods: 1 };
        // Later documents 10, 11, 12 share partner 1; 13 pairs with 2.
        let pairs = vec![pair(10, 1), pair(11, 1), pair(12, 1), pair(13, 2)];
        let groups = vec![(0, 1), (1, 2), (2, 3), (3, 4)];
        let sizes = |limit: u64| -> Vec<usize> {
            batches(&groups, &pairs, |id| if id == 1 { limit / 2 } else { limit / 5 }).map(<[_]>::len).collect()
        };
        // Partner 1 half the bound, each other a fifth: 1 + 10 + 11 fit
        // (0.9), 12 would pass it; then 12 and 1 (0.7), and 13 with 2
        // would pass it again.
        assert_eq!(sizes(BATCH_BYTES), [2, 1, 1]);
        // One document bigger than the bound is a batch of its own.
        let big: Vec<usize> = batches(&groups, &pairs, |_| 2 * BATCH_BYTES).map(<[_]>::len).collect();
        assert_eq!(big, [1, 1, 1, 1]);
        assert_eq!(batches(&[], &pairs, |_| 0).count(), 0);
    }
}

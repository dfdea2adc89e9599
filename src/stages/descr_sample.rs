//! Stage `descr_sample`: `tokens`, `exact_copies`, `df`, `corpus_stats` →
//! `descr_sample`.
//!
//! The counting that a9's choice of descriptive words starts from (spec
//! §4, "At web scale"), divided by document: task I of N (`--shard I/N`)
//! reads its own documents of `tokens` (`doc_id % N = I`, the exact copies
//! left out) and writes, for each one in the sample
//! ([`SampleRule`]: a hash of its id under the rate
//! `descr_sample_documents / N`, every document of a crawl no larger), the
//! counts of its candidate words (step 1's pool, from the whole crawl's
//! `df`) and its `tf_max`. Stage `method_state` then chooses the words from
//! this table alone: its state grows with the sample, not the crawl, and
//! the passes over every document's terms are spread over the tasks.
//!
//! Each document is decided on its own, so the table is the same for any
//! number of tasks. Without a9 among the enabled methods it is written
//! empty.

use anyhow::Result;
use arrow::array::{AsArray, ListArray, RecordBatch};
use arrow::datatypes::UInt32Type;
use futures::StreamExt;
use serde_json::{json, Value};

use crate::config::Config;
use crate::methods::descr::{sample_hash, SampleCounter, SamplePasses, SampleRule, SampledDoc};
use crate::methods::term_ids::TermIds;
use crate::methods::TokenParts;
use crate::stages::stage::{RunContext, Stage};
use crate::stages::tokens::read::{TokenChunks, CHUNK_DOCS};
use crate::tables::columns::{corpus_stats, descr_sample, df, exact_copies, tokens};
use crate::tables::manifest::StageReport;
use crate::tables::write::TableOutput;
use crate::tables::Table;

/// The descr_sample stage.
pub struct DescrSample;

impl Stage for DescrSample {
    fn name(&self) -> &'static str {
        "descr_sample"
    }
    fn inputs(&self) -> Vec<Table> {
        vec![tokens::NAME, exact_copies::NAME, df::NAME, corpus_stats::NAME]
    }
    /// Its documents' lists come from its own parts of `tokens` alone
    /// ([`crate::stages::tokens::read::TokenChunks`]).
    fn own_document_inputs(&self) -> Vec<Table> {
        vec![tokens::NAME]
    }
    fn outputs(&self, _: &Config) -> Vec<Table> {
        vec![descr_sample::NAME]
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({"methods": config.methods})
    }
    fn shardable(&self) -> bool {
        true
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        ctx.runtime.block_on(run(ctx))
    }
}

async fn run(ctx: &RunContext) -> Result<StageReport> {
    let config = &ctx.config.methods;
    let mut report = StageReport::default();
    let mut writer = TableOutput::<descr_sample::Rows>::for_shard(&ctx.out, ctx.shard)?;
    if config.is_enabled("a9") {
        let session = ctx.session().await?;
        let stats = crate::stages::stats::load_corpus_stats(&session, true).await?;
        let rule = SampleRule::for_corpus(stats.n_docs, config.descr.sample_documents as u64);
        let counter = SampleCounter::new(&config.descr, &stats, rule);
        let mut chunks = TokenChunks::open(&session, ctx.shard, TokenParts::Terms).await?;
        let (mut read, mut sampled) = (0u64, 0u64);
        while let Some(chunk) = chunks.next_chunk(CHUNK_DOCS).await? {
            let lists = chunk.lists()?;
            let mut docs = lists.views();
            let ids = TermIds::of(&docs, &stats.terms);
            ids.attach(&mut docs);
            read += docs.len() as u64;
            for doc in docs.iter().filter_map(|d| counter.count(d)) {
                sampled += 1;
                writer.push(|b| {
                    b.doc_id.append_value(doc.doc_id);
                    b.tf_max.append_value(doc.tf_max);
                    for &(candidate, tf) in &doc.words {
                        b.candidates.values().append_value(candidate);
                        b.tf.values().append_value(tf);
                    }
                    b.candidates.append(true);
                    b.tf.append(true);
                })?;
            }
        }
        report.counters.insert("documents_read".into(), read);
        report.counters.insert("a9_sampled_documents".into(), sampled);
        report.counters.insert("a9_sample_rate_ppb".into(), rule.rate_ppb());
    }
    report.rows.insert(descr_sample::TABLE.into(), writer.commit()?);
    Ok(report)
}

/// Passes over the sampled documents of `descr_sample`, for a9's choice of
/// words in stage `method_state`
/// ([`DescrWords::choose`](crate::methods::descr::DescrWords::choose)), a
/// batch at a time. Called from outside the runtime: each batch is read
/// with `runtime.block_on`.
///
/// The table holds the documents under the sample's rate, about
/// `descr_sample_documents` of them; [`SampleReader::open`] narrows the
/// rule to at most that many ([`SampleRule::at_most`]) and hands out only
/// those. The files are read in no particular order: the choice does not
/// depend on the order of the documents (a test of `descr` checks it), so
/// the sample is never sorted.
pub struct SampleReader<'a> {
    runtime: &'a tokio::runtime::Runtime,
    session: datafusion::prelude::SessionContext,
    /// The sample: the table's documents that this rule includes.
    rule: SampleRule,
    /// The first error of a pass; that pass stops there, later ones do not
    /// start.
    failed: std::cell::RefCell<Option<anyhow::Error>>,
}

impl<'a> SampleReader<'a> {
    /// The sample of `session`'s `descr_sample` table, written under
    /// `written` (the rate of stage `descr_sample`), narrowed to at most
    /// `max_documents`; with the sample's rule and size. Reads the table's
    /// doc ids once (8 bytes per sampled document).
    pub fn open(
        runtime: &'a tokio::runtime::Runtime,
        session: datafusion::prelude::SessionContext,
        written: SampleRule,
        max_documents: usize,
    ) -> Result<(Self, usize)> {
        let hashes = runtime.block_on(async {
            let mut hashes = Vec::new();
            let sql = format!("SELECT doc_id FROM {}", descr_sample::TABLE);
            let mut stream = session.sql(&sql).await?.execute_stream().await?;
            while let Some(batch) = stream.next().await {
                hashes.extend(descr_sample::doc_id(&batch?)?.values().iter().map(|&id| sample_hash(id)));
            }
            anyhow::Ok(hashes)
        })?;
        let (rule, size) = written.at_most(hashes, max_documents);
        Ok((SampleReader { runtime, session, rule, failed: std::cell::RefCell::new(None) }, size))
    }

    /// The sample's rule, narrowed by [`SampleReader::open`].
    pub fn rule(&self) -> SampleRule {
        self.rule
    }

    /// The error that stopped a pass, if one did: what was chosen from the
    /// passes is then incomplete.
    pub fn finish(self) -> Result<()> {
        match self.failed.into_inner() {
            Some(e) => Err(e.context("cannot read the descr_sample table")),
            None => Ok(()),
        }
    }
}

impl SamplePasses for SampleReader<'_> {
    fn each_chunk(&self, f: &mut dyn FnMut(&[SampledDoc])) {
        if self.failed.borrow().is_some() {
            return;
        }
        let mut pass = || -> Result<()> {
            let sql = format!("SELECT doc_id, tf_max, candidates, tf FROM {}", descr_sample::TABLE);
            let mut stream = self.runtime.block_on(async { self.session.sql(&sql).await?.execute_stream().await })?;
            while let Some(batch) = self.runtime.block_on(stream.next()) {
                f(&self.sampled(&batch?)?);
            }
            Ok(())
        };
        if let Err(e) = pass() {
            *self.failed.borrow_mut() = Some(e);
        }
    }
}

impl SampleReader<'_> {
    /// The rows of `batch` in the sample.
    fn sampled(&self, batch: &RecordBatch) -> Result<Vec<SampledDoc>> {
        let (ids, tf_max) = (descr_sample::doc_id(batch)?, descr_sample::tf_max(batch)?);
        let (candidates, tf) = (u32_lists(descr_sample::candidates(batch)?)?, u32_lists(descr_sample::tf(batch)?)?);
        let mut docs = Vec::new();
        for i in 0..batch.num_rows() {
            if !self.rule.includes(ids.value(i)) {
                continue;
            }
            let (c, t) = (candidates.row(i), tf.row(i));
            anyhow::ensure!(c.len() == t.len(), "descr_sample: a row whose candidates and tf differ in length");
            let words = c.iter().copied().zip(t.iter().copied()).collect();
            docs.push(SampledDoc { doc_id: ids.value(i), tf_max: tf_max.value(i), words });
        }
        Ok(docs)
    }
}

/// A list-of-u32 column, its child buffer cast once.
struct U32Lists<'a> {
    offsets: &'a [i32],
    values: &'a [u32],
}

fn u32_lists(list: &ListArray) -> Result<U32Lists<'_>> {
    let values = list
        .values()
        .as_primitive_opt::<UInt32Type>()
        .ok_or_else(|| anyhow::anyhow!("descr_sample: a list whose items are not UInt32"))?;
    Ok(U32Lists { offsets: list.value_offsets(), values: values.values() })
}

impl<'a> U32Lists<'a> {
    /// Row `row`, borrowed from the Arrow buffer.
    fn row(&self, row: usize) -> &'a [u32] {
        &self.values[self.offsets[row] as usize..self.offsets[row + 1] as usize]
    }
}

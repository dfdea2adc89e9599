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
use serde_json::{json, Value};

use crate::config::Config;
use crate::methods::descr::{SampleCounter, SampleRule};
use crate::methods::inputs::tokens::{TokenChunks, TokenParts, CHUNK_DOCS};
use crate::methods::term_ids::TermIds;
use crate::stages::stage::{RunContext, Stage};
use crate::tables::columns::descr_sample;
use crate::tables::manifest::StageReport;
use crate::tables::write::TableOutput;

/// The descr_sample stage.
pub struct DescrSample;

impl Stage for DescrSample {
    fn name(&self) -> &'static str {
        "descr_sample"
    }
    fn inputs(&self) -> Vec<&'static str> {
        vec!["tokens", "exact_copies", "df", "corpus_stats"]
    }
    fn outputs(&self, _: &Config) -> Vec<&'static str> {
        vec![descr_sample::TABLE]
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
        let stats = crate::methods::inputs::corpus_stats::load_corpus_stats(&session, true).await?;
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

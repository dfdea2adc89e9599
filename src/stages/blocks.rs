//! Stage `blocks`: `documents` → `blocks`.
//!
//! The map half of boilerplate detection (see [`crate::text::boilerplate`]):
//! one row per distinct line of every document that has a host, keyed by
//! the hash of the folded line, with the digest of the page's text. The
//! next stage, `boilerplate`, counts on how many distinct page contents of
//! its host each line is found; that count is a corpus statistic like `df`,
//! so this stage only lists and never decides.
//!
//! A map stage: task I of N (`--shard I/N`) reads the documents with
//! `doc_id % N = I`. Documents stream batch by batch in the order of the
//! `documents` files (the same on every run), unsorted: `boilerplate`
//! counts the rows whatever their order, so memory is bounded by one batch
//! whatever the corpus size.

use anyhow::Result;
use futures::StreamExt;
use rayon::prelude::*;
use serde_json::Value;

use crate::config::Config;
use crate::stages::stage::{RunContext, Stage};
use crate::tables::columns::{blocks, documents};
use crate::tables::manifest::StageReport;
use crate::tables::write::TableOutput;
use crate::tables::Table;
use crate::text::boilerplate::{distinct_block_keys, host_of};

/// The blocks stage.
pub struct Blocks;

impl Stage for Blocks {
    fn name(&self) -> &'static str {
        "blocks"
    }
    fn inputs(&self) -> Vec<Table> {
        vec![documents::NAME]
    }
    fn outputs(&self, _: &Config) -> Vec<Table> {
        vec![blocks::NAME]
    }
    fn config_section(&self, _: &Config) -> Value {
        // What a block is (a folded line) is fixed; which blocks are
        // boilerplate is decided by the next stage.
        Value::Null
    }
    fn shardable(&self) -> bool {
        true
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        ctx.runtime.block_on(run(ctx))
    }
}

/// Documents read and split into blocks at a time.
const DOCUMENTS_PER_BATCH: usize = 1024;

/// The block rows of one document: its host, the digest of its text and
/// its distinct line keys.
struct DocBlocks {
    doc_id: u64,
    host: String,
    host_hash: u64,
    text_hash: u64,
    keys: Vec<u64>,
}

async fn run(ctx: &RunContext) -> Result<StageReport> {
    // Batches of 1,024 documents rather than DataFusion's 8,192: a batch of
    // texts is what this stage holds, and 8,192 long pages (30,417 Javadoc
    // pages of 7.4 kB, one thread) peaked at 311 MB.
    let session = crate::tables::sql::with_batch_size(ctx.session().await?, DOCUMENTS_PER_BATCH)?;
    let session = crate::tables::sql::one_stream(session)?;
    // Only content is deduplicated: records that are not (error pages,
    // redirects, stubs) stay out of every later stage.
    let own = format!("{} AND not_content IS NULL", ctx.shard.doc_predicate("doc_id"));
    let mut stream =
        session.sql(&format!("SELECT doc_id, url, text FROM documents WHERE {own}")).await?.execute_stream().await?;
    let mut writer = TableOutput::<blocks::Rows>::for_shard(&ctx.out, ctx.shard)?;
    let mut hostless = 0u64;
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        let (ids, urls, texts) = (documents::doc_id(&batch)?, documents::url(&batch)?, documents::text(&batch)?);
        let docs: Vec<Option<DocBlocks>> = (0..batch.num_rows())
            .into_par_iter()
            .map(|i| {
                let url = urls.value(i);
                host_of(url).map(|host| DocBlocks {
                    doc_id: ids.value(i),
                    host_hash: xxhash_rust::xxh3::xxh3_64(host.as_bytes()),
                    host,
                    text_hash: xxhash_rust::xxh3::xxh3_64(texts.value(i).as_bytes()),
                    keys: distinct_block_keys(texts.value(i)),
                })
            })
            .collect();
        for doc in &docs {
            let Some(doc) = doc else {
                hostless += 1;
                continue;
            };
            for &key in &doc.keys {
                writer.push(|b| {
                    b.host.append_value(&doc.host);
                    b.host_hash.append_value(doc.host_hash);
                    b.block_hash.append_value(key);
                    b.doc_id.append_value(doc.doc_id);
                    b.text_hash.append_value(doc.text_hash);
                })?;
            }
        }
    }
    let mut report = StageReport::default();
    report.rows.insert("blocks".into(), writer.commit()?);
    report.counters.insert("documents_without_host".into(), hostless);
    Ok(report)
}

//! Stage `search_keys`: `tokens`, `exact_copies` → `search_keys`,
//! `search_forms`.
//!
//! The first step of the methods that find their pairs by a search of
//! their own rather than by equal signatures
//! ([`registry::MethodSpec::search`]: SpotSigs and SL+ST, searched by keys,
//! [`super`]): every document's keys, and the encoded form
//! its pairs are scored from. Stage `search_links` groups the keys, stage
//! `search` scores the pairs.
//!
//! A map stage: task I of N (`--shard I/N`) encodes the documents with
//! `doc_id % N = I`, one pass over their token lists per search, a chunk at
//! a time. Only the first of each exact group is searched: the passes leave
//! the exact copies out, so no bound is spent on them.

use anyhow::Result;
use rayon::prelude::*;
use serde_json::{json, Value};
use std::path::Path;

use crate::config::Config;
use crate::methods::{registry, DocPasses, Encoded, KeyedSearch};
use crate::stages::stage::{RunContext, Stage};
use crate::stages::tokens::read::TokenPasses;
use crate::tables::columns::{exact_copies, search_forms, search_keys, tokens};
use crate::tables::manifest::StageReport;
use crate::tables::shard::Shard;
use crate::tables::write::TableOutput;
use crate::tables::Table;

/// The search_keys stage.
pub struct SearchKeys;

impl Stage for SearchKeys {
    fn name(&self) -> &'static str {
        "search_keys"
    }
    fn inputs(&self) -> Vec<Table> {
        vec![tokens::NAME, exact_copies::NAME]
    }
    /// Its documents' lists come from its own parts of `tokens` alone
    /// ([`crate::stages::tokens::read::TokenChunks`]).
    fn own_document_inputs(&self) -> Vec<Table> {
        vec![tokens::NAME]
    }
    fn outputs(&self, _: &Config) -> Vec<Table> {
        vec![search_keys::NAME, search_forms::NAME]
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({"methods": config.methods})
    }
    fn shardable(&self) -> bool {
        true
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        let session = ctx.runtime.block_on(ctx.session())?;
        let mut report = StageReport::default();
        let mut writer = KeyWriter::for_shard(&ctx.out, ctx.shard)?;
        for search in registry::searches(&ctx.config.methods) {
            let id = search.id();
            let started = std::time::Instant::now();
            let passes = TokenPasses::new(&ctx.runtime, session.clone(), search.reads(), ctx.shard);
            let written = writer.write(id, search.keyed(), &passes);
            // A pass that failed explains a failed write: its error first.
            passes.finish()?;
            let (keys, docs) = written?;
            report.counters.insert(format!("{id}_keys"), keys);
            report.counters.insert(format!("{id}_documents_encoded"), docs);
            report.counters.insert(format!("{id}_keys_ms"), started.elapsed().as_millis() as u64);
        }
        let (keys, forms) = writer.commit()?;
        report.rows.insert(search_keys::TABLE.into(), keys);
        report.rows.insert(search_forms::TABLE.into(), forms);
        Ok(report)
    }
}

/// The `search_keys` and `search_forms` parts of one task.
pub struct KeyWriter {
    keys: TableOutput<search_keys::Rows>,
    forms: TableOutput<search_forms::Rows>,
}

impl KeyWriter {
    /// Starts `shard`'s parts of both tables under `out`.
    pub fn for_shard(out: &Path, shard: Shard) -> Result<KeyWriter> {
        Ok(KeyWriter { keys: TableOutput::for_shard(out, shard)?, forms: TableOutput::for_shard(out, shard)? })
    }

    /// One pass over `docs`: method `id`'s keys and encoded form of every
    /// document it encodes. Returns the number of key rows and of
    /// documents encoded.
    pub fn write(&mut self, id: &str, search: &dyn KeyedSearch, docs: &dyn DocPasses) -> Result<(u64, u64)> {
        let (mut key_rows, mut encoded_docs) = (0u64, 0u64);
        let mut failed: Option<anyhow::Error> = None;
        docs.each_chunk(&mut |chunk| {
            if failed.is_some() {
                return;
            }
            let per_doc: Vec<Option<Encoded>> = chunk.par_iter().map(|d| search.encode(d)).collect();
            let mut write = || -> Result<()> {
                for (doc, e) in chunk.iter().zip(&per_doc).filter_map(|(d, e)| Some((d, e.as_ref()?))) {
                    self.forms.push(|b| {
                        b.method.append_value(id);
                        b.doc_id.append_value(doc.doc_id);
                        b.size.append_value(e.size);
                        b.form.append_value(&e.form);
                    })?;
                    for &key in &e.keys {
                        self.keys.push(|b| {
                            b.method.append_value(id);
                            b.sig.append_value(key);
                            b.doc_id.append_value(doc.doc_id);
                            b.size.append_value(e.size);
                        })?;
                    }
                    key_rows += e.keys.len() as u64;
                    encoded_docs += 1;
                }
                Ok(())
            };
            failed = write().err();
        });
        match failed {
            Some(e) => Err(e),
            None => Ok((key_rows, encoded_docs)),
        }
    }

    /// Publishes both parts; returns their rows (keys, forms).
    pub fn commit(self) -> Result<(u64, u64)> {
        Ok((self.keys.commit()?, self.forms.commit()?))
    }
}

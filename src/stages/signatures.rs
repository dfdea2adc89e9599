//! Stage `signatures`: `tokens` + `df` + `corpus_stats` + `method_state` →
//! `signatures` and the methods' tables of per-document records
//! (`sketches`, `shingles`, `a12_records`: [`registry::Records`]).
//!
//! Each chunk's terms are first looked up in the `df` dictionary
//! ([`crate::methods::terms`]): the methods read term ids and counts, not
//! strings to hash. What no enabled method reads ([`registry::DocReads`]:
//! the `words` lists, the term ids) is neither read nor computed. Every enabled method signs every document in parallel
//! (rayon); rows are written chunk by chunk, method by method, in doc_id
//! order, so the tables are the same on any number of threads. Every
//! output table is always written (empty when its method is off) so later
//! SQL can rely on it.
//!
//! A map stage: task I of N (`--shard I/N`) signs the documents with
//! `doc_id % N = I`, but the exact copies (table `exact_copies`, stage
//! `exact`): only the first of an exact group is signed. The corpus-wide
//! state of the global methods was built once by the `method_state` stage; a state chosen from the documents (a9's
//! descriptive words) is read back from `method_state`, the others
//! (lexicons) are rebuilt from `df`. The task's
//! documents are read and signed in chunks of [`CHUNK_DOCS`], so memory is
//! bounded by a chunk whatever the corpus size.

use anyhow::Result;
use rayon::prelude::*;
use serde_json::{json, Value};

use crate::config::Config;
use crate::methods::registry::{self, StateSource};
use crate::methods::term_ids::TermIds;
use crate::methods::TokenParts;
use crate::methods::{DocView, Signature};
use crate::stages::stage::{RunContext, Stage};
use crate::stages::tokens::read::{TokenChunks, CHUNK_DOCS};
use crate::tables::columns::{corpus_stats, df, exact_copies, method_state, signatures, tokens};
use crate::tables::manifest::StageReport;
use crate::tables::write::{TableOutput, TableWriter, BATCH_ROWS};
use crate::tables::Table;
use std::collections::BTreeMap;

/// The signatures stage.
pub struct Signatures;

impl Stage for Signatures {
    fn name(&self) -> &'static str {
        "signatures"
    }
    fn inputs(&self) -> Vec<Table> {
        vec![tokens::NAME, exact_copies::NAME, df::NAME, corpus_stats::NAME, method_state::NAME]
    }
    /// Its documents' lists come from its own parts of `tokens` alone
    /// ([`crate::stages::tokens::read::TokenChunks`]).
    fn own_document_inputs(&self) -> Vec<Table> {
        vec![tokens::NAME]
    }
    fn outputs(&self, _: &Config) -> Vec<Table> {
        std::iter::once(signatures::NAME).chain(registry::record_tables()).collect()
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
    let config = &ctx.config;
    let session = ctx.session().await?;
    // Only what an enabled method reads: minhash alone needs neither the
    // `words` lists nor the dictionary.
    let reads = registry::doc_reads(&config.methods.enabled);
    let stats = crate::stages::stats::load_corpus_stats(&session, reads.term_ids).await?;
    let mut saved_state = BTreeMap::new();
    for m in registry::specs_of(&config.methods.enabled).filter(|m| m.state_reads_documents) {
        saved_state.insert(m.id.to_string(), crate::stages::method_state::load_method_state(&session, m.id).await?);
    }
    let own = ctx.shard.doc_predicate("doc_id");
    // The task's documents but the exact copies, which the chunks leave out.
    let count = |table: &str| format!("SELECT COUNT(*) AS n FROM {table} WHERE {own}");
    let total = crate::tables::sql::count(&session, &count("tokens"))
        .await?
        .saturating_sub(crate::tables::sql::count(&session, &count("exact_copies")).await?);
    let parts = if reads.words { TokenParts::All } else { TokenParts::Terms };
    let mut chunks = TokenChunks::open(&session, ctx.shard, parts).await?;
    let mut report = StageReport::default();

    let signers =
        registry::build_signers(&config.methods.enabled, &config.methods, &stats, StateSource::Saved(&saved_state));
    let mut signature_table = TableOutput::<signatures::Rows>::for_shard(&ctx.out, ctx.shard)?;
    // Every method's records table is written, empty when the method is off.
    let mut records = Vec::new();
    let mut empty_records = Vec::new();
    for m in registry::METHODS {
        if let Some(r) = &m.records {
            let writer = TableWriter::for_shard(&ctx.out, r.table.name(), ctx.shard)?;
            if config.methods.is_enabled(m.id) {
                records.push(RecordTable { id: m.id, table: r.table, rows: (r.build)(&config.methods), writer });
            } else {
                empty_records.push((r.table, writer));
            }
        }
    }
    // A chunk is often the whole crawl: the progress counts each document
    // once per method that signs it or writes its records, as they finish.
    let steps = (signers.len() + records.len()) as u64;
    let progress =
        crate::process::progress::counter(ctx.progress, total * steps.max(1), "signatures", "document-methods");
    // Per method id: documents given a signature, and milliseconds spent.
    let mut signed: BTreeMap<String, u64> = BTreeMap::new();
    let mut spent_ms: BTreeMap<String, u64> = BTreeMap::new();
    let mut term_ids_ms = 0u64;
    while let Some(rows) = chunks.next_chunk(CHUNK_DOCS).await? {
        let lists = rows.lists()?;
        let mut docs: Vec<DocView> = lists.views();
        // Each document's terms looked up in the dictionary once, for every
        // method to read as ids.
        let started = std::time::Instant::now();
        let ids = if reads.term_ids { TermIds::of(&docs, &stats.terms) } else { TermIds::default() };
        ids.attach(&mut docs);
        term_ids_ms += started.elapsed().as_millis() as u64;
        for method in &signers {
            let started = std::time::Instant::now();
            let per_doc: Vec<Vec<Signature>> = docs
                .par_iter()
                .map(|d| {
                    let mut out = Vec::new();
                    method.sign(d, &mut out);
                    progress.inc(1);
                    out
                })
                .collect();
            *spent_ms.entry(format!("{}_sign_ms", method.id())).or_default() += started.elapsed().as_millis() as u64;
            write_signatures(&mut signature_table, method.id(), &docs, &per_doc, &mut signed)?;
        }
        for table in &mut records {
            let started = std::time::Instant::now();
            let per_doc = table.append(&docs)?;
            progress.inc(docs.len() as u64);
            *spent_ms.entry(format!("{}_records_ms", table.id)).or_default() += started.elapsed().as_millis() as u64;
            if !per_doc.is_empty() {
                write_signatures(&mut signature_table, table.id, &docs, &per_doc, &mut signed)?;
            }
        }
    }
    progress.finish_and_clear();
    report.counters.insert("term_ids_ms".into(), term_ids_ms);
    for (id, n) in signed {
        report.counters.insert(format!("{id}_documents_signed"), n);
    }
    report.counters.extend(spent_ms);
    report.rows.insert(signatures::TABLE.into(), signature_table.commit()?);
    for table in records {
        report.rows.insert(table.table.to_string(), table.commit()?);
    }
    for (table, writer) in empty_records {
        report.rows.insert(table.to_string(), writer.commit()?);
    }
    Ok(report)
}

/// An enabled method's records table being written by this task: the
/// method making its rows in memory ([`registry::RecordRows`]) and the
/// writer of the task's part of its table. The method only computes; the
/// table is written here.
struct RecordTable {
    id: &'static str,
    table: Table,
    rows: Box<dyn registry::RecordRows>,
    writer: TableWriter,
}

impl RecordTable {
    /// Appends the records of `docs`, writing a batch whenever
    /// [`BATCH_ROWS`] rows are pending; returns the documents' signatures
    /// if the records give them.
    fn append(&mut self, docs: &[DocView<'_>]) -> Result<Vec<Vec<Signature>>> {
        let writer = &mut self.writer;
        self.rows.append(docs, BATCH_ROWS, &mut |batch: arrow::array::RecordBatch| writer.write(&batch))
    }

    /// Writes the pending rows and publishes the table; returns its rows.
    fn commit(mut self) -> Result<u64> {
        self.writer.write(&self.rows.rest()?)?;
        self.writer.commit()
    }
}

/// Appends method `id`'s signatures of `docs` (one list per document) to
/// the `signatures` table, and counts the documents it signed.
fn write_signatures(
    table: &mut TableOutput<signatures::Rows>,
    id: &str,
    docs: &[DocView<'_>],
    per_doc: &[Vec<Signature>],
    signed: &mut BTreeMap<String, u64>,
) -> Result<()> {
    *signed.entry(id.to_string()).or_default() += per_doc.iter().filter(|s| !s.is_empty()).count() as u64;
    for (doc, doc_sigs) in docs.iter().zip(per_doc) {
        for s in doc_sigs {
            table.push(|b| {
                b.method.append_value(id);
                b.doc_id.append_value(doc.doc_id);
                b.slot.append_value(s.slot);
                b.sig.append_value(s.sig);
                b.doc_len.append_value(doc.terms.len() as u32);
            })?;
        }
    }
    Ok(())
}

//! The `tokens` table read back for the stages that hand documents to the
//! methods (`descr_sample`, `signatures`, `search_keys`): chunks of Arrow
//! batches in doc_id order ([`TokenChunks`]), without the exact copies, and
//! passes over a task's documents ([`TokenPasses`]). The chunks' lists are
//! borrowed as the methods read them by [`crate::methods::token_lists`].
//! Written by the `tokens` stage ([`super`]).

use anyhow::Result;
use arrow::array::RecordBatch;
use futures::StreamExt;

use crate::methods::token_lists::TokenChunk;
use crate::methods::{DocPasses, DocView, TokenParts};
use crate::tables::columns::{exact_copies, tokens};
use crate::tables::shard::Shard;

/// The list columns of `tokens` read for each [`TokenParts`]; a list not
/// read is absent from the batches, so its views are empty.
fn list_columns(parts: TokenParts) -> &'static [&'static str] {
    match parts {
        TokenParts::Terms => &["terms", "sentence_ends"],
        TokenParts::Words => &["words"],
        TokenParts::All => &["terms", "sentence_ends", "words"],
        TokenParts::SentenceLengths => &["sentence_lengths", "sentence_heads"],
    }
}

/// The `tokens` rows selected by `filter` (a SQL WHERE clause, or empty)
/// in doc_id order, read in chunks of a bounded number of documents, with
/// only the lists `parts` names (the others are left empty).
///
/// Exact copies are left out: when the session has the `exact_copies`
/// table (stage `exact`), the documents it lists are not handed out, so
/// every method, statistic and bound sees each verification text once
/// (spec §9, "Exact copies first"). Both tables are read in doc_id order
/// and merged as they stream, so the copies cost no memory beyond a batch.
pub struct TokenChunks {
    stream: datafusion::physical_plan::SendableRecordBatchStream,
    copies: CopyCursor,
    /// Batches read and not yet handed out, and their number of rows.
    pending: Vec<RecordBatch>,
    pending_rows: usize,
}

/// The doc_ids of `exact_copies` in increasing order, read a batch at a
/// time while `tokens` streams past them.
struct CopyCursor {
    stream: Option<datafusion::physical_plan::SendableRecordBatchStream>,
    ids: Option<arrow::array::UInt64Array>,
    at: usize,
}

impl CopyCursor {
    /// The copies `filter` selects, or none when `session` has no
    /// `exact_copies` table (a session over `tokens` alone, in tests).
    async fn open(session: &datafusion::prelude::SessionContext, filter: &str) -> Result<Self> {
        let stream = if session.table_exist(exact_copies::TABLE)? {
            let sql = format!("SELECT doc_id FROM {} {filter} ORDER BY doc_id", exact_copies::TABLE);
            Some(session.sql(&sql).await?.execute_stream().await?)
        } else {
            None
        };
        Ok(CopyCursor { stream, ids: None, at: 0 })
    }

    /// True when `doc_id` is a copy; ids must come in increasing order.
    async fn is_copy(&mut self, doc_id: u64) -> Result<bool> {
        loop {
            if let Some(ids) = &self.ids {
                while self.at < ids.len() && ids.value(self.at) < doc_id {
                    self.at += 1;
                }
                if self.at < ids.len() {
                    return Ok(ids.value(self.at) == doc_id);
                }
            }
            let Some(stream) = self.stream.as_mut() else { return Ok(false) };
            match stream.next().await {
                Some(batch) => {
                    self.ids = Some(exact_copies::doc_id(&batch?)?.clone());
                    self.at = 0;
                }
                None => {
                    self.stream = None;
                    return Ok(false);
                }
            }
        }
    }

    /// `batch` (in doc_id order) without its copies.
    async fn without_copies(&mut self, batch: RecordBatch) -> Result<RecordBatch> {
        if self.stream.is_none() && self.ids.as_ref().is_none_or(|ids| self.at >= ids.len()) {
            return Ok(batch);
        }
        let ids = tokens::doc_id(&batch)?;
        let mut keep = Vec::with_capacity(batch.num_rows());
        for i in 0..batch.num_rows() {
            keep.push(!self.is_copy(ids.value(i)).await?);
        }
        if keep.iter().all(|&k| k) {
            return Ok(batch);
        }
        Ok(arrow::compute::filter_record_batch(&batch, &arrow::array::BooleanArray::from(keep))?)
    }
}

impl TokenChunks {
    /// Starts reading the documents of `shard` (all for [`Shard::WHOLE`]).
    pub async fn open(session: &datafusion::prelude::SessionContext, shard: Shard, parts: TokenParts) -> Result<Self> {
        let columns = list_columns(parts).join(", ");
        let filter = if shard.is_whole() { String::new() } else { format!("WHERE {}", shard.doc_predicate("doc_id")) };
        let (session_of_scans, table) = whole_file_scans(session, shard).await?;
        let sql = format!("SELECT doc_id, {columns} FROM {table} {filter} ORDER BY doc_id");
        let stream = session_of_scans.sql(&sql).await?.execute_stream().await?;
        let copies = CopyCursor::open(session, &filter).await?;
        Ok(TokenChunks { stream, copies, pending: Vec::new(), pending_rows: 0 })
    }

    /// The next at most `max_docs` rows; None at the end.
    pub async fn next_chunk(&mut self, max_docs: usize) -> Result<Option<TokenChunk>> {
        while self.pending_rows < max_docs {
            let Some(batch) = self.stream.next().await else { break };
            let batch = self.copies.without_copies(batch?).await?;
            self.pending_rows += batch.num_rows();
            self.pending.push(batch);
        }
        if self.pending_rows == 0 {
            return Ok(None);
        }
        let (mut taken, mut rest, mut n) = (Vec::new(), Vec::new(), 0usize);
        for batch in self.pending.drain(..) {
            let k = max_docs.saturating_sub(n).min(batch.num_rows());
            if k > 0 {
                taken.push(batch.slice(0, k));
                n += k;
            }
            if k < batch.num_rows() {
                rest.push(batch.slice(k, batch.num_rows() - k));
            }
        }
        self.pending = rest;
        self.pending_rows -= n;
        Ok(Some(TokenChunk::new(taken)))
    }
}

/// Documents per chunk for a stage that reads `tokens` a chunk at a time
/// (`signatures`, `descr_sample`, and every pass of [`TokenPasses`]): what such a stage
/// holds of the token lists, whatever the corpus size.
pub const CHUNK_DOCS: usize = 4_096;

/// The token lists (`parts`) of a shard's documents read again from
/// `tokens` for each pass ([`DocPasses`]), in chunks of [`CHUNK_DOCS`]
/// documents in doc_id order: a stage that writes a form of every
/// document (the pair searches' keys) holds one chunk of token lists at a
/// time. Called from outside the runtime: each chunk is read with
/// `runtime.block_on`.
pub struct TokenPasses<'a> {
    runtime: &'a tokio::runtime::Runtime,
    session: datafusion::prelude::SessionContext,
    parts: TokenParts,
    /// The documents read: those of one task ([`Shard::WHOLE`]: all).
    shard: Shard,
    /// The first error of a pass; that pass stops there, later ones do not
    /// start.
    failed: std::cell::RefCell<Option<anyhow::Error>>,
}

impl<'a> TokenPasses<'a> {
    /// Passes over `shard`'s documents in the `tokens` table of `session`.
    pub fn new(
        runtime: &'a tokio::runtime::Runtime,
        session: datafusion::prelude::SessionContext,
        parts: TokenParts,
        shard: Shard,
    ) -> Self {
        TokenPasses { runtime, session, parts, shard, failed: std::cell::RefCell::new(None) }
    }

    /// The error that stopped a pass, if one did: what was built from the
    /// passes is then incomplete.
    pub fn finish(self) -> Result<()> {
        match self.failed.into_inner() {
            Some(e) => Err(e.context("cannot read the tokens table")),
            None => Ok(()),
        }
    }
}

impl DocPasses for TokenPasses<'_> {
    fn each_chunk(&self, f: &mut dyn FnMut(&[DocView<'_>])) {
        if self.failed.borrow().is_some() {
            return;
        }
        let mut pass = || -> Result<()> {
            let mut chunks = self.runtime.block_on(TokenChunks::open(&self.session, self.shard, self.parts))?;
            while let Some(chunk) = self.runtime.block_on(chunks.next_chunk(CHUNK_DOCS))? {
                let lists = chunk.lists()?;
                f(&lists.views());
            }
            Ok(())
        };
        if let Err(e) = pass() {
            *self.failed.borrow_mut() = Some(e);
        }
    }
}

/// `session` with each part file of `tokens` scanned whole, as a partition
/// of its own, in batches of [`READ_BATCH_DOCS`], and the name of the table
/// to read. Every part file is in doc_id order (the table is registered
/// so): split into byte ranges, a file was scanned by several partitions
/// and merged back, which copies every list; scanned whole, a single file
/// needs no merge and no sort, and the files of a sharded stage are merged
/// as they stream. Two files in one partition would lose their order and
/// be sorted in memory, hence one partition per file.
///
/// A task of a sharded stage reads only the part files that can hold its
/// documents ([`Shard::may_hold_docs_of`]), registered as [`OWN_TOKENS`]:
/// read whole, N tasks would read the table N times (at thousands of tasks,
/// the largest cost of a run; docs/scale.md). When the table's files cannot
/// be listed (not a local folder), every task reads them all and only the
/// batch size changes.
async fn whole_file_scans(
    session: &datafusion::prelude::SessionContext,
    shard: Shard,
) -> Result<(datafusion::prelude::SessionContext, &'static str)> {
    let provider = session.table_provider("tokens").await?;
    let folder: Option<std::path::PathBuf> = provider
        .downcast_ref::<datafusion::datasource::listing::ListingTable>()
        .and_then(|t| t.table_paths().first().and_then(|url| url.as_str().parse::<url::Url>().ok()))
        .and_then(|url| url.to_file_path().ok());
    let mut state = session.state();
    let options = state.config_mut().options_mut();
    options.set("datafusion.execution.batch_size", &READ_BATCH_DOCS.to_string())?;
    let Some(files) = folder.and_then(|dir| crate::tables::write::parquet_files(&dir).ok()) else {
        return Ok((datafusion::prelude::SessionContext::new_with_state(state), "tokens"));
    };
    let own: Vec<String> = files
        .iter()
        .filter(|f| {
            let name = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            crate::tables::write::part_shard(name).is_none_or(|part| shard.may_hold_docs_of(part))
        })
        .map(|f| f.to_string_lossy().into_owned())
        .collect();
    options.optimizer.repartition_file_scans = false;
    options.execution.target_partitions = own.len().max(1);
    let scans = datafusion::prelude::SessionContext::new_with_state(state);
    if own.len() == files.len() || own.is_empty() {
        return Ok((scans, "tokens"));
    }
    let sorted = datafusion::prelude::ParquetReadOptions::default()
        .file_sort_order(vec![vec![datafusion::prelude::col("doc_id").sort(true, false)]]);
    let view = scans.read_parquet(own, sorted).await?.into_view();
    scans.deregister_table(OWN_TOKENS)?;
    scans.register_table(OWN_TOKENS, view)?;
    Ok((scans, OWN_TOKENS))
}

/// The part files of `tokens` that a task reads ([`whole_file_scans`]).
const OWN_TOKENS: &str = "own_tokens";

/// Documents per batch read from `tokens`, where DataFusion's default is
/// 8,192: a chunk is a few thousand documents, and batches of 8,192
/// documents' lists decoded ahead of it were most of `signatures`' peak
/// (heaptrack, min-hash only on Javadoc: 197 MB of a 390 MB heap in the
/// Parquet string decoder under `TokenChunks::next_chunk`).
const READ_BATCH_DOCS: usize = 1024;

//! The `descr_sample` table read back for a9's choice of words
//! ([`DescrWords::choose`](crate::methods::descr::DescrWords::choose)):
//! the sampled documents' counts, pass after pass, a batch at a time.
//! Written by stage `descr_sample` ([`crate::stages::descr_sample`]).
//!
//! The table holds the documents under the sample's rate, about
//! `descr_sample_documents` of them; [`SampleReader::open`] narrows the
//! rule to at most that many ([`SampleRule::at_most`]) and hands out only
//! those. The files are read in no particular order: the choice does not
//! depend on the order of the documents (a test of `descr` checks it), so
//! the sample is never sorted.

use anyhow::Result;
use arrow::array::{AsArray, ListArray, RecordBatch};
use arrow::datatypes::UInt32Type;
use futures::StreamExt;

use crate::methods::descr::{sample_hash, SamplePasses, SampleRule, SampledDoc};
use crate::tables::columns::descr_sample;

/// Passes over the sampled documents of `descr_sample`. Called from
/// outside the runtime: each batch is read with `runtime.block_on`.
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

//! Stage `tokens`: `documents`, `blocks`, `boilerplate` → `tokens`.
//!
//! Each document's text first loses its host's template lines (the
//! `boilerplate` table, see [`crate::text::boilerplate`]); what is left is
//! tokenized for the signatures and, folded, kept as the visible text that
//! verification compares, with the digest of the text verification
//! compares (`text_digest`, which the `exact` stage groups by). A copy of
//! an earlier page of its host (`jobs/page_copies.sql`) gets its visible
//! text and digest only, its lists empty: it goes no further than `exact`,
//! so a crawl's copies cost their ingest and their text, not their tokens. Documents
//! stream in doc_id order, batch by batch; each batch is normalized in parallel (rayon) and written at once,
//! so the stage's own memory is bounded by one batch whatever the corpus
//! size. (`documents` is in input order, so DataFusion sorts it first,
//! under a pool of its own that bounds it whatever the crawl's size:
//! [`RunContext::corpus_sort_session`].) A map stage: task I of N
//! (`--shard I/N`) normalizes the documents with `doc_id % N = I`. The corpus
//! statistics over all tasks' tokens are the next stage, `stats`.

pub mod read;

use anyhow::Result;
use arrow::array::{ListBuilder, StringBuilder, UInt32Builder};
use futures::StreamExt;
use rayon::prelude::*;
use serde_json::{json, Value};

use crate::config::Config;

use crate::methods::registry::{self, ListsRead};
use crate::stages::stage::{RunContext, Stage};
use crate::tables::columns::{blocks, boilerplate, documents, tokens};
use crate::tables::manifest::StageReport;
use crate::tables::write::TableWriter;
use crate::tables::Table;
use crate::text::boilerplate::Stripped;
use crate::text::{Normalizer, TokenBuffers};
use crate::verify::digest::verification_digest;
use crate::verify::settings::VerificationText;

/// The tokens stage.
pub struct Tokens;

impl Stage for Tokens {
    fn name(&self) -> &'static str {
        "tokens"
    }
    fn inputs(&self) -> Vec<Table> {
        vec![documents::NAME, blocks::NAME, boilerplate::NAME]
    }
    fn outputs(&self, _: &Config) -> Vec<Table> {
        vec![tokens::NAME]
    }
    fn config_section(&self, config: &Config) -> Value {
        // The lists written depend on the methods: enabling one that reads
        // a list not written reruns this stage.
        // The digest is of the text verify compares.
        // Which copies skip their lists depends on the keep order.
        json!({
            "text": config.text,
            "lists": lists_written(config),
            "verify_text": config.verify.text,
            "dedup": config.dedup,
        })
    }
    fn shardable(&self) -> bool {
        true
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        ctx.runtime.block_on(run(ctx))
    }
}

/// The lists only some methods read that this run writes: those the
/// enabled methods read, and the words when verification compares them.
fn lists_written(config: &Config) -> ListsRead {
    let mut lists = registry::lists_read(&config.methods.enabled, &config.methods);
    lists.words |= config.verify.text == VerificationText::Words;
    lists
}

async fn run(ctx: &RunContext) -> Result<StageReport> {
    let normalizer = Normalizer::new(&ctx.config.text);
    let lists = lists_written(&ctx.config);
    let verify_text = ctx.config.verify.text;
    let session = ctx.corpus_sort_session("documents").await?;
    // Batches of 256 documents rather than DataFusion's 8,192: a batch's
    // text, its tokens and their Arrow builders stay below glibc's mmap
    // threshold, so their memory is reused from batch to batch instead of
    // being mapped fresh and faulted in page by page (on Javadoc, 1,024
    // rather than 8,192: half the page faults, 8% less CPU, peak RSS 913 →
    // 616 MB). The sort spills and merges runs in batches of this size too:
    // its merge holds a batch per run, 102 MB of the stage's heap at 1,024
    // (min-hash only on Javadoc: the stage's peak 360 → 260 MB at 256, same
    // CPU).
    let session = crate::tables::sql::with_batch_size(session, DOCUMENTS_PER_BATCH)?;
    let boilerplate = crate::stages::boilerplate::load_boilerplate(&session).await?;
    let page_copies = page_copies(ctx, &session).await?;
    // Only content is deduplicated: records that are not (error pages,
    // redirects, stubs) stay out of every later stage.
    let own = format!("{} AND not_content IS NULL", ctx.shard.doc_predicate("doc_id"));
    let total =
        crate::tables::sql::count(&session, &format!("SELECT COUNT(*) AS n FROM documents WHERE {own}")).await?;
    let progress = crate::process::progress::counter(ctx.progress, total, "tokens", "docs");
    let mut stream = session
        .sql(&format!("SELECT doc_id, url, text, lang FROM documents WHERE {own} ORDER BY doc_id"))
        .await?
        .execute_stream()
        .await?;
    let mut writer = TableWriter::for_shard(&ctx.out, tokens::TABLE, ctx.shard)?;
    let mut out = tokens::Rows::default();
    let (mut stripped_docs, mut removed_lines, mut all_template) = (0u64, 0u64, 0u64);
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        let (ids, urls) = (documents::doc_id(&batch)?, documents::url(&batch)?);
        let (texts, langs) = (documents::text(&batch)?, documents::lang(&batch)?);
        let tokenized: Vec<(Stripped, TokenBuffers)> = (0..batch.num_rows())
            .into_par_iter()
            .map(|i| {
                let stripped = boilerplate.strip(urls.value(i), texts.value(i));
                let tokens = if page_copies.contains(&ids.value(i)) {
                    TokenBuffers::default()
                } else {
                    normalizer.tokenize_compact(&stripped.text, langs.value(i))
                };
                // Per document: a batch holds thousands of them.
                progress.inc(1);
                (stripped, tokens)
            })
            .collect();
        for (i, (stripped, t)) in tokenized.iter().enumerate() {
            let digest = verification_digest(verify_text, &stripped.visible, t);
            push_tokens(&mut out, ids.value(i), t, langs.value(i), stripped, &digest, lists);
            stripped_docs += (stripped.removed_lines > 0) as u64;
            removed_lines += stripped.removed_lines as u64;
            all_template += stripped.all_template as u64;
        }
        writer.write_rest(&mut out)?;
    }
    progress.finish_and_clear();
    let mut report = StageReport::default();
    report.rows.insert(tokens::TABLE.into(), writer.commit()?);
    report.counters.insert("boilerplate_lines_known".into(), boilerplate.len() as u64);
    report.counters.insert("documents_with_boilerplate_removed".into(), stripped_docs);
    report.counters.insert("boilerplate_lines_removed".into(), removed_lines);
    report.counters.insert("documents_of_template_only".into(), all_template);
    report.counters.insert("page_copies_without_lists".into(), page_copies.len() as u64);
    Ok(report)
}

/// The task's documents whose lists are not written (`jobs/page_copies.sql`:
/// a copy of an earlier page of its host, which goes no further than the
/// `exact` stage). None when verification compares the words or the terms:
/// their digest needs the lists. Held as a set of ids: one per such copy.
async fn page_copies(
    ctx: &RunContext,
    session: &datafusion::prelude::SessionContext,
) -> Result<std::collections::HashSet<u64>> {
    let mut copies = std::collections::HashSet::new();
    if ctx.config.verify.text != VerificationText::Visible {
        return Ok(copies);
    }
    let mut params = crate::stages::verify::keep_order::keep_params(&ctx.config.dedup).to_vec();
    params.push(("own", ctx.shard.doc_predicate("doc_id")));
    let sql = crate::tables::sql::substitute(include_str!("../../../jobs/page_copies.sql"), &params);
    let mut stream = session.sql(&sql).await?.execute_stream().await?;
    while let Some(batch) = stream.next().await {
        copies.extend(documents::doc_id(&batch?)?.values().iter().copied());
    }
    Ok(copies)
}

/// Documents read, tokenized in parallel and written at a time.
const DOCUMENTS_PER_BATCH: usize = 256;

/// Appends one document's row; the lists no enabled method reads are null
/// (about 15% of the stage's CPU in a min-hash-only run, and their disk).
fn push_tokens(
    b: &mut tokens::Rows,
    doc_id: u64,
    t: &TokenBuffers,
    lang: &str,
    stripped: &Stripped,
    digest: &str,
    lists: ListsRead,
) {
    b.doc_id.append_value(doc_id);
    push_strings(&mut b.terms, t.terms());
    push_numbers(&mut b.sentence_ends, &t.sentence_ends);
    if lists.words {
        b.words.append_value(t.words_text());
    } else {
        b.words.append_null();
    }
    if lists.sentence_lengths {
        push_numbers(&mut b.sentence_lengths, &t.sentence_lengths);
        push_strings(&mut b.sentence_heads, t.sentence_heads());
    } else {
        b.sentence_lengths.append_null();
        b.sentence_heads.append_null();
    }
    b.len.append_value(t.terms().len() as u32);
    b.num.append_value(t.sentence_ends.len() as u32);
    b.lang.append_value(lang);
    b.text.append_value(&stripped.visible);
    b.text_digest.append_value(digest);
    b.boilerplate_lines.append_value(stripped.removed_lines);
    b.boilerplate_chars.append_value(stripped.removed_chars);
}

/// Appends one list cell of strings.
fn push_strings<'a>(list: &mut ListBuilder<StringBuilder>, items: impl Iterator<Item = &'a str>) {
    for item in items {
        list.values().append_value(item);
    }
    list.append(true);
}

/// Appends one list cell of numbers.
fn push_numbers(list: &mut ListBuilder<UInt32Builder>, items: &[u32]) {
    list.values().append_slice(items);
    list.append(true);
}

//! A finished night appended to the history as a crawl (`pipeline history
//! append`, and a run with `--history`): its documents with their
//! verification texts, read through SQL from the output folder, and its
//! signature and record tables copied as written
//! ([`crate::history::folder`]), less the pages that repeat an earlier
//! crawl.

use anyhow::Result;
use futures::StreamExt;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use crate::config::Config;
use crate::history::folder::{check_crawl_id, copied_tables, listed_objects, stage_copied_tables};
use crate::history::{CrawlManifest, History};
use crate::tables::columns::{history_documents, repeats};
use crate::verify::settings::VerificationText;

/// Appends the finished run in `out` to `history` as crawl `crawl`,
/// replacing an earlier append of the same crawl: its documents with the
/// verification text of `[verify] text`, and its signature and record
/// tables, less the rows of the pages that repeat an earlier crawl
/// (`out/repeats`) unless `[history] index_repeats`.
pub fn append(
    history: &History,
    out: &Path,
    crawl: &str,
    config: &Config,
    runtime: &tokio::runtime::Runtime,
) -> Result<CrawlManifest> {
    let text = config.verify.text;
    check_crawl_id(crawl)?;
    for table in ["documents", "tokens"].into_iter().chain(copied_tables()) {
        anyhow::ensure!(
            crate::tables::write::table_exists(out, table),
            "{} has no table `{table}`: run the pipeline there first",
            out.display()
        );
    }
    let staging = history.staging(crawl)?;
    let unindexed = if config.history.index_repeats { HashSet::new() } else { night_repeats(out, crawl, runtime)? };
    let staged = stage_crawl(out, &staging, text, &unindexed, runtime);
    let rows = match staged {
        Ok(rows) => rows,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(e);
        }
    };
    let manifest = CrawlManifest {
        crawl: crawl.to_string(),
        rows,
        verification_text: text,
        appended_from: out.display().to_string(),
        objects: listed_objects(&staging)?,
    };
    history.install(&manifest, &staging)?;
    warn_of_later_crawls(history, crawl)?;
    Ok(manifest)
}

/// Warns when the history already holds crawls later than `crawl`: each
/// night is matched against the crawls before it, so those were matched
/// without this one, and their repeats and kept copies may change when
/// they are matched again (`pipeline history match`, which `status` then
/// shows as stale).
fn warn_of_later_crawls(history: &History, crawl: &str) -> Result<()> {
    let later: Vec<CrawlManifest> = history.crawls()?.into_iter().filter(|c| c.crawl.as_str() > crawl).collect();
    if later.is_empty() {
        return Ok(());
    }
    let rerun: Vec<String> = later
        .iter()
        .map(|c| format!("`pipeline history match --out {} --crawl-id {}`", c.appended_from, c.crawl))
        .collect();
    let names: Vec<&str> = later.iter().map(|c| c.crawl.as_str()).collect();
    tracing::warn!(
        crawl,
        later = %names.join(","),
        "crawl {crawl} comes before {} already in the history, which were matched without it: their repeats \
         and kept copies are out of date; match them again: {}",
        names.join(", "),
        rerun.join(", ")
    );
    Ok(())
}

/// Writes every table of the crawl under `staging/<table>/`, the
/// documents `unindexed` left out of the signature and record tables;
/// returns their rows.
fn stage_crawl(
    out: &Path,
    staging: &Path,
    text: VerificationText,
    unindexed: &HashSet<u64>,
    runtime: &tokio::runtime::Runtime,
) -> Result<BTreeMap<String, u64>> {
    let mut rows = BTreeMap::new();
    let text_sql = match text {
        VerificationText::Visible => "t.text",
        // One word per line in `tokens`, one space between two here.
        VerificationText::Words => "replace(t.words, chr(10), ' ')",
        VerificationText::Terms => "array_to_string(t.terms, ' ')",
    };
    let sql = format!(
        "SELECT d.doc_id, d.url, d.canonical_url, d.crawl_date, d.http_status, \
         d.text_chars, md5({text_sql}) AS text_digest, \
         {text_sql} AS verification_text \
         FROM documents d JOIN tokens t ON t.doc_id = d.doc_id ORDER BY d.doc_id"
    );
    let documents = runtime.block_on(async {
        let session = crate::tables::sql::session_over(out).await?;
        let stream = session.sql(&sql).await?.execute_stream().await?;
        crate::tables::write::write_stream(staging, history_documents::TABLE, stream).await
    })?;
    rows.insert(history_documents::TABLE.to_string(), documents);
    rows.extend(stage_copied_tables(out, staging, unindexed)?);
    Ok(rows)
}

/// The night's documents that repeat a page of an earlier crawl
/// (`out/repeats` of crawl `crawl`; none when the table is missing).
fn night_repeats(out: &Path, crawl: &str, runtime: &tokio::runtime::Runtime) -> Result<HashSet<u64>> {
    if !crate::tables::write::table_exists(out, repeats::TABLE) {
        return Ok(HashSet::new());
    }
    crate::tables::write::check_table_schema(out, repeats::TABLE)?;
    runtime.block_on(async {
        let session = crate::tables::sql::session_over(out).await?;
        let sql = format!("SELECT DISTINCT doc_id FROM repeats WHERE crawl = '{crawl}'");
        let mut stream = session.sql(&sql).await?.execute_stream().await?;
        let mut ids = HashSet::new();
        while let Some(batch) = stream.next().await {
            let batch = batch?;
            ids.extend(repeats::doc_id(&batch)?.iter().flatten());
        }
        anyhow::Ok(ids)
    })
}

//! Stage `decide`: `documents`, `clusters`, `tokens`, `exact_copies` →
//! `decisions`.
//!
//! What a deduplication tool is for: for every document, keep it or remove
//! it as a duplicate of a named kept document (`jobs/decisions.sql`). The
//! rule that picks the kept copy (`[dedup] keep`) already ordered
//! verification's placement, so this stage only reads the clusters: the
//! kept copy is each cluster's representative, and every removed document
//! verified against it, or is an exact copy of a member (same
//! `tokens.text_digest`) and follows it. Rows are ordered by input file and offset, the
//! order an export reads the crawl back in.
//!
//! With `--history` this stage follows the history's stages
//! ([`crate::stages::history::FOLLOWING`]): a night's page that
//! `crawl_clusters` marks as a duplicate of a page kept in an earlier crawl
//! is removed (reason `repeat`, with that crawl), so the night's decisions,
//! its export and its summary line hold what is new
//! (`jobs/decisions_history.sql`). Those tables are its inputs then: they
//! are in its external fingerprint, since without `--history` (or with
//! `[history] mark = "within-night"`) the night's own decisions are
//! written and the history's tables are not read.

use anyhow::Result;
use serde_json::{json, Value};

use crate::config::{Config, MarkRule};
use crate::stages::stage::{MissingInput, RunContext, Stage};
use crate::tables::columns::{clusters, crawl_clusters, decisions, documents, exact_copies, repeats, tokens};
use crate::tables::manifest::StageReport;
use crate::tables::sql::{run_into_table, substitute};
use crate::tables::Table;

/// The decisions counter of the night's pages removed as repeats of an
/// earlier crawl (reason `repeat`), for the summary line.
pub const REPEAT: &str = "repeat";

/// The night's crawl id when its decisions follow the history: a run with
/// `--history` whose `[history] mark` marks copies.
fn history_night(ctx: &RunContext) -> Option<&str> {
    let night = ctx.history.as_ref()?;
    (ctx.config.history.mark != MarkRule::WithinNight).then_some(night.crawl.as_str())
}

/// The decisions counter of the bytes of HTML the removed documents held
/// (their records' payloads, `documents.raw_bytes`): what a dedup saves
/// in the archive, for the summary.
pub const BYTES_REMOVED: &str = "bytes_removed";

/// The decisions counter of the characters of text the removed documents
/// held (`documents.text`): what a dedup saves in a text corpus.
pub const CHARS_REMOVED: &str = "chars_removed";

/// The decide stage.
pub struct Decide;

/// The stage's name.
pub const NAME: &str = "decide";

impl Stage for Decide {
    fn name(&self) -> &'static str {
        NAME
    }
    fn inputs(&self) -> Vec<Table> {
        vec![documents::NAME, clusters::NAME, tokens::NAME, exact_copies::NAME]
    }
    fn outputs(&self, _: &Config) -> Vec<Table> {
        vec![decisions::NAME]
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({"dedup": config.dedup})
    }
    /// With the history: the night and the manifests of the two history
    /// stages whose tables it reads (their settings and earlier crawls are
    /// in their fingerprints). Null otherwise, as before the history
    /// counted, so a run without it keeps its decisions up to date.
    fn external_fingerprint(&self, ctx: &RunContext) -> Result<Value> {
        let Some(crawl) = history_night(ctx) else { return Ok(Value::Null) };
        let fingerprint = |stage: &str| crate::tables::manifest::read_manifest(&ctx.out, stage).map(|m| m.fingerprint);
        Ok(json!({
            "crawl": crawl,
            "history_verify": fingerprint("history_verify"),
            "history_clusters": fingerprint("history_clusters"),
        }))
    }
    fn runs_sql_on_engine(&self) -> bool {
        true
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        ctx.runtime.block_on(run(ctx))
    }
}

async fn run(ctx: &RunContext) -> Result<StageReport> {
    let night_decisions = include_str!("../../jobs/decisions.sql");
    let sql = match history_night(ctx) {
        None => night_decisions.to_string(),
        Some(crawl) => {
            for table in [crawl_clusters::TABLE, repeats::TABLE] {
                if !crate::tables::write::table_exists(&ctx.out, table) {
                    return Err(MissingInput(format!(
                        "stage decide with --history reads table `{table}`, which is missing under {}; run `pipeline history match` or `pipeline run --history` first",
                        ctx.out.display()
                    ))
                    .into());
                }
                crate::tables::write::check_table_schema(&ctx.out, table)?;
            }
            // A checked crawl id: letters, digits, `.`, `_` and `-` only.
            let params = [("night_decisions", night_decisions.to_string()), ("night", format!("'{crawl}'"))];
            substitute(include_str!("../../jobs/decisions_history.sql"), &params)
        }
    };
    let session = ctx.sql_stage_session().await?;
    let mut report = StageReport::default();
    report.rows.insert(decisions::TABLE.into(), run_into_table(&session, &ctx.out, decisions::TABLE, &sql).await?);
    if history_night(ctx).is_some() {
        // Counted even when none: the summary line then says so.
        report.counters.insert(REPEAT.into(), 0);
    }
    // The outcome by reason, for the run's summary line and the report.
    let written = ctx.session().await?;
    let counts = written.sql("SELECT reason, COUNT(*) AS n FROM decisions GROUP BY reason").await?.collect().await?;
    for batch in &counts {
        let reasons = decisions::reason(batch)?;
        let n: &arrow::array::Int64Array = crate::tables::column(batch, "n")?;
        for i in 0..batch.num_rows() {
            report.counters.insert(reasons.value(i).to_string(), n.value(i).max(0) as u64);
        }
    }
    // What the removed documents weighed: summed here, once, so the
    // summary reads it from the manifest.
    let removed = written
        .sql(
            "SELECT CAST(COALESCE(SUM(d.raw_bytes), 0) AS BIGINT) AS bytes, \
                    CAST(COALESCE(SUM(d.text_chars), 0) AS BIGINT) AS chars \
             FROM decisions x JOIN documents d ON d.doc_id = x.doc_id WHERE NOT x.is_kept",
        )
        .await?
        .collect()
        .await?;
    for batch in &removed {
        let bytes: &arrow::array::Int64Array = crate::tables::column(batch, "bytes")?;
        let chars: &arrow::array::Int64Array = crate::tables::column(batch, "chars")?;
        for i in 0..batch.num_rows() {
            report.counters.insert(BYTES_REMOVED.into(), bytes.value(i).max(0) as u64);
            report.counters.insert(CHARS_REMOVED.into(), chars.value(i).max(0) as u64);
        }
    }
    Ok(report)
}

//! Stage `verify_pairs`: `candidates`, `documents` → `verify_pairs`.
//!
//! The candidate pairs as verification takes them, computed once on the
//! run's engine (`--engine`: embedded, or a Ballista cluster) rather than
//! by every `verify` task: each distinct pair oriented by the keep order
//! (`[dedup] keep`), with both keep ranks and the methods' bit mask
//! (`jobs/ranked_pairs.sql`), and its later document's rank by the
//! estimated cost of its comparisons (`jobs/verify_pairs.sql`), by which
//! `verify`'s tasks deal the later documents among themselves.

use anyhow::Result;
use serde_json::{json, Value};

use crate::config::Config;
use crate::stages::stage::{RunContext, Stage};
use crate::stages::verify::inputs::load_candidate_methods;
use crate::stages::verify::keep_order::{keep_params, KEEP_ORDER};
use crate::tables::columns::{candidates, documents, verify_pairs};
use crate::tables::manifest::StageReport;
use crate::tables::sql::{run_into_table, substitute};
use crate::tables::write::TableOutput;
use crate::tables::Table;
use crate::verify::candidate_methods::CandidateMethods;
use crate::verify::settings::DedupConfig;

/// The verify_pairs stage.
pub struct VerifyPairs;

impl Stage for VerifyPairs {
    fn name(&self) -> &'static str {
        "verify_pairs"
    }
    fn inputs(&self) -> Vec<Table> {
        vec![candidates::NAME, documents::NAME]
    }
    fn outputs(&self, _: &Config) -> Vec<Table> {
        vec![verify_pairs::NAME]
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({"dedup": config.dedup})
    }
    fn runs_sql_on_engine(&self) -> bool {
        true
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        let mut report = StageReport::default();
        let rows = ctx.runtime.block_on(async {
            let session = ctx.sql_stage_session().await?;
            let methods = load_candidate_methods(&session).await?;
            match ranked_pairs_sql(&methods, &ctx.config.dedup) {
                Some(ranked) => {
                    let sql = substitute(include_str!("../../../jobs/verify_pairs.sql"), &[("ranked_pairs", ranked)]);
                    run_into_table(&session, &ctx.out, verify_pairs::TABLE, &sql).await
                }
                // No candidate pair: an empty table (SQL has no empty
                // VALUES list for the methods).
                None => TableOutput::<verify_pairs::Rows>::create(&ctx.out)?.commit(),
            }
        })?;
        report.rows.insert(verify_pairs::TABLE.into(), rows);
        Ok(report)
    }
}

/// The distinct candidate pairs as (later, earlier) in the keep order,
/// with both keep ranks and text lengths and the methods' mask by
/// [`CandidateMethods`]'s bits (`jobs/ranked_pairs.sql`). None without a
/// candidate pair.
fn ranked_pairs_sql(methods: &CandidateMethods, dedup: &DedupConfig) -> Option<String> {
    let values = methods.sql_values()?;
    let mut params = vec![("keep_ranks", KEEP_ORDER.to_string())];
    params.extend(keep_params(dedup));
    params.push(("methods", values));
    Some(substitute(include_str!("../../../jobs/ranked_pairs.sql"), &params))
}

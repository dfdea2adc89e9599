//! Stage `evaluate`: the study's evaluation tables on every run
//! (`jobs/evaluate_quality.sql`, `jobs/evaluate_overlap.sql`).

use anyhow::Result;
use serde_json::{json, Value};

use crate::config::Config;
use crate::runner::{RunContext, Stage, StageReport};
use crate::sql::{run_into_table, substitute};

/// The evaluate stage.
pub struct Evaluate;

impl Stage for Evaluate {
    fn name(&self) -> &'static str {
        "evaluate"
    }
    fn inputs(&self) -> &'static [&'static str] {
        &["candidates", "duplicates"]
    }
    fn outputs(&self, _: &Config) -> Vec<&'static str> {
        vec!["method_quality", "method_overlap"]
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({"enabled": config.methods.enabled})
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        ctx.runtime.block_on(async {
            let session = crate::sql::session_over(&ctx.out).await?;
            let enabled = ctx
                .config
                .methods
                .enabled
                .iter()
                .map(|m| format!("('{}')", m.replace('\'', "''")))
                .collect::<Vec<_>>()
                .join(", ");
            let params = [("enabled_methods", enabled)];
            let mut report = StageReport::default();
            for (table, sql) in [
                ("method_quality", include_str!("../../jobs/evaluate_quality.sql")),
                ("method_overlap", include_str!("../../jobs/evaluate_overlap.sql")),
            ] {
                let rows = run_into_table(&session, &ctx.out, table, &substitute(sql, &params)).await?;
                report.rows.insert(table.into(), rows);
            }
            Ok(report)
        })
    }
}

//! Stage `candidates`: signatures, chains and method pairs → `candidates`,
//! `hot_signatures`, the chains it walks (`signature_chains`, and the
//! tables of the methods' own jobs) and every method's edges before the
//! bound per document (`method_edges`).
//!
//! All edge generation is SQL (`jobs/signature_chains.sql`,
//! `candidates_exact.sql`, the methods' own jobs that [`registry::Edges`]
//! names, `hot_signatures.sql`, `candidates.sql`): groups and chains are
//! walked in length order and every document keeps at most
//! `candidates.max_edges_per_document` edges per method, so the table is
//! linear in the corpus. minhash band pairs are
//! estimated from the full sketches and kept when their resemblance reaches
//! `methods.minhash_threshold`, before that bound is applied. Rust only
//! registers the intermediate results as views or writes them as tables
//! (`method_edges`: every method's edges, a method at a time), and writes
//! `candidates`.

pub mod jobs;

use anyhow::{Context, Result};
use arrow::array::Array;
use futures::StreamExt;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;

use crate::config::Config;
use crate::methods::registry::{self, Edges, SqlJob};

use crate::stages::stage::{RunContext, Stage};
use crate::tables::columns::{candidates, hot_signatures, method_edges, method_pairs, signature_chains, signatures};
use crate::tables::manifest::StageReport;
use crate::tables::sql::{register_table, run_into_table, run_parts_into_table, substitute};
use crate::tables::write::TableOutput;
use crate::tables::Table;

/// The candidates stage.
pub struct Candidates;

impl Stage for Candidates {
    fn name(&self) -> &'static str {
        "candidates"
    }
    fn inputs(&self) -> Vec<Table> {
        let mut tables = vec![signatures::NAME, method_pairs::NAME];
        tables.extend(registry::record_tables());
        tables
    }
    fn outputs(&self, _: &Config) -> Vec<Table> {
        let mut tables = vec![candidates::NAME, hot_signatures::NAME, SIGNATURE_CHAINS, METHOD_EDGES];
        tables.extend(registry::sql_tables());
        tables
    }
    fn config_section(&self, config: &Config) -> Value {
        let methods_sql: serde_json::Map<String, Value> = registry::METHODS
            .iter()
            .flat_map(|m| (m.sql_params)(&config.methods))
            .map(|(name, value)| (name.to_string(), Value::String(value)))
            .collect();
        json!({"candidates": config.candidates, "methods_sql": methods_sql})
    }
    fn runs_sql_on_engine(&self) -> bool {
        true
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        ctx.runtime.block_on(run(ctx))
    }
}

/// The chains of the signature groups (`jobs/signature_chains.sql`),
/// written as a table: the chain walk reads them twice, and
/// `signature_groups.sql` takes the long groups' sizes from them.
const SIGNATURE_CHAINS: Table = signature_chains::NAME;

/// The table `candidates.sql` reads every method's edges from, a part per
/// edge view, each written by its own query (see [`run_parts_into_table`]:
/// a union of the views in one plan ran a11's, minhash's and the signature
/// groups' sorts and group-bys at once, each with a slice of the pool; at 8
/// copies of the Javadoc crawl the stage's SQL took 67.5 CPU-s that way and
/// 58.4 a view at a time, at 1 copy 5.8 and 5.7).
const METHOD_EDGES: Table = method_edges::NAME;
/// The columns of [`METHOD_EDGES`], as every edge view gives them.
const EDGE_COLUMNS: &str = "method, doc_a, doc_b, strength, len_gap, score";
/// The view of every method's groups over `max_group_size` (method, slot,
/// sig, size) that `hot_signatures.sql` reports.
const METHOD_HOT_GROUPS: &str = "method_hot_groups";

/// Runs the SQL jobs the candidate SQL reads, over the tables of
/// `session`: the table [`SIGNATURE_CHAINS`] and its `exact_edges` (the
/// signature groups), every method's own SQL jobs in registry order, and
/// the table [`METHOD_EDGES`] and the view [`METHOD_HOT_GROUPS`]. Every method's
/// jobs run, enabled or not: the stage's result depends only on its input
/// tables, which are empty for a method that is off. A job that is a table
/// ([`EdgeJob::Table`]) is written to `out` here; returns the rows of each.
async fn run_edge_jobs(
    session: &datafusion::prelude::SessionContext,
    out: &Path,
    params: &[(&str, String)],
) -> Result<BTreeMap<String, u64>> {
    let mut jobs: Vec<EdgeJob> = vec![
        EdgeJob::Table(SIGNATURE_CHAINS, include_str!("../../../jobs/signature_chains.sql")),
        EdgeJob::View("signature_groups", include_str!("../../../jobs/signature_groups.sql")),
        EdgeJob::View("exact_edges", include_str!("../../../jobs/candidates_exact.sql")),
        EdgeJob::View("signature_edges", include_str!("../../../jobs/signature_edges.sql")),
        EdgeJob::View("search_edges", include_str!("../../../jobs/search_edges.sql")),
    ];
    let mut edge_views = vec!["signature_edges"];
    let mut group_views = vec!["signature_groups"];
    for m in registry::METHODS {
        if let Edges::Sql { jobs: own, edges, groups } = &m.edges {
            jobs.extend(own.iter().copied().map(EdgeJob::from));
            edge_views.push(edges);
            group_views.extend(groups);
        }
    }
    edge_views.push("search_edges");
    let mut written = BTreeMap::new();
    // Absolute, as the Ballista session registers its tables (its
    // executors resolve the path, not this process).
    let folder = out.canonicalize().with_context(|| format!("output folder {}", out.display()))?;
    for job in jobs {
        match job {
            EdgeJob::View(view, sql) => {
                let df = session.sql(&substitute(sql, params)).await?;
                session.register_table(view, df.into_view())?;
            }
            EdgeJob::Table(table, sql) => {
                let rows = run_into_table(session, out, table.name(), &substitute(sql, params)).await?;
                register_table(session, &folder, table.name()).await?;
                written.insert(table.to_string(), rows);
            }
        }
    }
    let parts: Vec<(&str, String)> =
        edge_views.iter().map(|v| (*v, format!("SELECT {EDGE_COLUMNS} FROM {v}"))).collect();
    written.insert(METHOD_EDGES.to_string(), run_parts_into_table(session, out, METHOD_EDGES.name(), &parts).await?);
    register_table(session, &folder, METHOD_EDGES.name()).await?;
    let union: Vec<String> = group_views.iter().map(|v| format!("SELECT method, slot, sig, size FROM {v}")).collect();
    let df = session.sql(&union.join("\nUNION ALL\n")).await?;
    session.register_table(METHOD_HOT_GROUPS, df.into_view())?;
    Ok(written)
}

/// One SQL job the stage runs, by the name of its result and its text: the
/// stage's own jobs, and the methods' ([`SqlJob`]) with their texts from
/// [`jobs::method_job_sql`].
#[derive(Clone, Copy)]
enum EdgeJob {
    /// Registered as a view ([`SqlJob::View`]).
    View(&'static str, &'static str),
    /// Written as a table and read back ([`SqlJob::Table`]).
    Table(Table, &'static str),
}

impl From<SqlJob> for EdgeJob {
    fn from(job: SqlJob) -> Self {
        match job {
            SqlJob::View(view, job) => EdgeJob::View(view, jobs::method_job_sql(job)),
            SqlJob::Table(table, job) => EdgeJob::Table(table, jobs::method_job_sql(job)),
        }
    }
}

/// The parameters of the candidate SQL jobs: every chain is walked through
/// itself.
fn candidate_params(config: &Config) -> Vec<(&'static str, String)> {
    jobs::chain_walk_params(&config.methods, &config.candidates, registry::WALK_THROUGH_ITSELF)
}

/// `jobs/candidates.sql`: the pairs of every method's edges, in both of
/// the stage's passes.
const CANDIDATES_SQL: &str = include_str!("../../../jobs/candidates.sql");

async fn run(ctx: &RunContext) -> Result<StageReport> {
    let params = candidate_params(&ctx.config);
    let session = ctx.sql_stage_session().await?;
    let mut report = StageReport::default();
    report.rows.extend(run_edge_jobs(&session, &ctx.out, &params).await?);
    let hot = substitute(include_str!("../../../jobs/hot_signatures.sql"), &params);
    report.rows.insert("hot_signatures".into(), run_into_table(&session, &ctx.out, "hot_signatures", &hot).await?);

    let sql = substitute(CANDIDATES_SQL, &params);
    let mut stream = session.sql(&sql).await?.execute_stream().await?;
    let mut writer = TableOutput::<candidates::Rows>::create(&ctx.out)?;
    let mut per_method: BTreeMap<String, u64> = BTreeMap::new();
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        let (a, bb) = (candidates::doc_a(&batch)?, candidates::doc_b(&batch)?);
        let (m, s) = (candidates::method(&batch)?, candidates::score(&batch)?);
        for i in 0..batch.num_rows() {
            let method = m.value(i);
            *per_method.entry(method.to_string()).or_default() += 1;
            writer.push(|b| {
                b.doc_a.append_value(a.value(i));
                b.doc_b.append_value(bb.value(i));
                b.method.append_value(method);
                b.score.append_option((!s.is_null(i)).then(|| s.value(i)));
            })?;
        }
    }
    report.rows.insert(candidates::TABLE.into(), writer.commit()?);
    for (m, n) in per_method {
        report.counters.insert(format!("{m}_pairs"), n);
    }
    Ok(report)
}

/// Runs the candidate SQL over the tables in `out` and returns the
/// candidate edges (`doc_a`, `doc_b`, method) sorted, without scores; used
/// by tests that compare the SQL with reference implementations.
pub async fn candidate_edges(out: &Path, config: &Config) -> Result<Vec<(u64, u64, String)>> {
    let scored = scored_candidate_edges(out, config).await?;
    Ok(scored.into_iter().map(|(a, b, method, _)| (a, b, method)).collect())
}

/// [`candidate_edges`] with each edge's score (the resemblance or Jaccard
/// of the methods that estimate one, `None` for the others); used by tests
/// that check a method's rule on hand-made tables.
pub async fn scored_candidate_edges(out: &Path, config: &Config) -> Result<Vec<(u64, u64, String, Option<f64>)>> {
    let session = crate::tables::sql::session_over(out).await?;
    let params = candidate_params(config);
    run_edge_jobs(&session, out, &params).await?;
    let sql = substitute(CANDIDATES_SQL, &params);
    let batches = session.sql(&sql).await?.collect().await?;
    let mut pairs = Vec::new();
    for batch in batches {
        let (a, b) = (candidates::doc_a(&batch)?, candidates::doc_b(&batch)?);
        let (m, s) = (candidates::method(&batch)?, candidates::score(&batch)?);
        for i in 0..batch.num_rows() {
            pairs.push((a.value(i), b.value(i), m.value(i).to_string(), (!s.is_null(i)).then(|| s.value(i))));
        }
    }
    pairs.sort_by(|x, y| (x.0, x.1, &x.2).cmp(&(y.0, y.1, &y.2)));
    Ok(pairs)
}

//! Stage `candidates`: signatures, chains and method pairs → `candidates`,
//! `hot_signatures`.
//!
//! All edge generation is SQL (`jobs/candidates_exact.sql`, `a11.sql`,
//! `a12.sql`, `hot_signatures.sql`, `candidates.sql`): groups and chains are
//! walked in length order and every document keeps at most
//! `candidates.max_edges_per_document` edges per method, so the table is
//! linear in the corpus. Rust registers the intermediate results as views
//! and adds one thing SQL cannot express portably: the min-hash resemblance
//! of minhash edges (share of equal positions of two sketches).

use anyhow::Result;
use arrow::array::{Array, AsArray, Float64Builder, StringBuilder, UInt64Builder};
use arrow::datatypes::{Float64Type, UInt64Type};
use futures::StreamExt;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use crate::config::Config;
use crate::runner::{RunContext, Stage, StageReport};
use crate::sql::{run_into_table, substitute};
use crate::table::{BatchBuilder, TableWriter};

/// The candidates stage.
pub struct Candidates;

impl Stage for Candidates {
    fn name(&self) -> &'static str {
        "candidates"
    }
    fn inputs(&self) -> &'static [&'static str] {
        &["signatures", "shingles", "a12_records", "method_pairs", "sketches"]
    }
    fn outputs(&self, _: &Config) -> Vec<&'static str> {
        vec!["candidates", "hot_signatures"]
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({
            "candidates": config.candidates,
            "chain_ratio": config.methods.chain_ratio,
            "a11_min_shared": config.methods.a11_min_shared,
            "a12_num_ratio": config.methods.a12_num_ratio,
        })
    }
    fn runs_sql_on_engine(&self) -> bool {
        true
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        ctx.runtime.block_on(run(ctx))
    }
}

/// The `${name}` parameters of the candidate SQL jobs.
pub fn sql_params(config: &Config) -> Vec<(&'static str, String)> {
    let max_edges = config.candidates.max_edges_per_document;
    vec![
        ("max_group_size", config.candidates.max_group_size.to_string()),
        ("max_edges", max_edges.to_string()),
        ("chain_steps", (1..=max_edges).map(|k| format!("({k})")).collect::<Vec<_>>().join(", ")),
        ("ratio", format!("{:?}", config.methods.chain_ratio)),
        ("num_ratio", format!("{:?}", config.methods.a12_num_ratio)),
        ("a11_min_shared", format!("{:?}", config.methods.a11_min_shared)),
    ]
}

/// The SQL jobs giving each method family's scored edges, by the view name
/// `candidates.sql` reads them under.
const EDGE_VIEWS: [(&str, &str); 3] = [
    ("exact_edges", include_str!("../../jobs/candidates_exact.sql")),
    ("a11_edges", include_str!("../../jobs/a11.sql")),
    ("a12_edges", include_str!("../../jobs/a12.sql")),
];

/// Registers the edge views over the tables of `session`.
async fn register_edge_views(session: &datafusion::prelude::SessionContext, config: &Config) -> Result<()> {
    let params = sql_params(config);
    for (view, sql) in EDGE_VIEWS {
        let df = session.sql(&substitute(sql, &params)).await?;
        session.register_table(view, df.into_view())?;
    }
    Ok(())
}

async fn run(ctx: &RunContext) -> Result<StageReport> {
    let params = sql_params(&ctx.config);
    let session = crate::sql::sql_stage_session(&ctx.out).await?;
    register_edge_views(&session, &ctx.config).await?;
    let mut report = StageReport::default();
    let hot = substitute(include_str!("../../jobs/hot_signatures.sql"), &params);
    report.rows.insert("hot_signatures".into(), run_into_table(&session, &ctx.out, "hot_signatures", &hot).await?);

    let sql = substitute(include_str!("../../jobs/candidates.sql"), &params);
    let mut stream = session.sql(&sql).await?.execute_stream().await?;
    let mut writer = TableWriter::for_table(&ctx.out, "candidates")?;
    let mut b = BatchBuilder::new("candidates");
    let mut per_method: BTreeMap<String, u64> = BTreeMap::new();
    // minhash edges wait for their resemblance (below), so that the
    // sketches are read once, for their documents only.
    let mut minhash: Vec<(u64, u64)> = Vec::new();
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        let a = batch.column(0).as_primitive::<UInt64Type>();
        let bb = batch.column(1).as_primitive::<UInt64Type>();
        let m = batch.column(2).as_string::<i32>();
        let s = batch.column(3).as_primitive::<Float64Type>();
        for i in 0..batch.num_rows() {
            let method = m.value(i);
            *per_method.entry(method.to_string()).or_default() += 1;
            if method == "minhash" {
                minhash.push((a.value(i), bb.value(i)));
                continue;
            }
            b.col::<UInt64Builder>(0).append_value(a.value(i));
            b.col::<UInt64Builder>(1).append_value(bb.value(i));
            b.col::<StringBuilder>(2).append_value(method);
            b.col::<Float64Builder>(3).append_option((!s.is_null(i)).then(|| s.value(i)));
            writer.write_if_full(&mut b)?;
        }
    }
    let sketches = load_sketches(&ctx.out, &minhash).await?;
    for (a, bb) in minhash {
        let score = match (sketches.get(&a), sketches.get(&bb)) {
            (Some(x), Some(y)) => Some(crate::methods::shingles::resemblance(x, y)),
            _ => None,
        };
        b.col::<UInt64Builder>(0).append_value(a);
        b.col::<UInt64Builder>(1).append_value(bb);
        b.col::<StringBuilder>(2).append_value("minhash");
        b.col::<Float64Builder>(3).append_option(score);
        writer.write_if_full(&mut b)?;
    }
    writer.write_rest(&mut b)?;
    report.rows.insert("candidates".into(), writer.commit()?);
    for (m, n) in per_method {
        report.counters.insert(format!("{m}_pairs"), n);
    }
    Ok(report)
}

/// The min-hash sketches of the documents of `edges`, read locally (the
/// edges are in memory, not in a table an engine could join with).
async fn load_sketches(out: &Path, edges: &[(u64, u64)]) -> Result<HashMap<u64, Vec<u64>>> {
    let mut map = HashMap::new();
    if edges.is_empty() {
        return Ok(map);
    }
    let mut ids: Vec<u64> = edges.iter().flat_map(|&(a, b)| [a, b]).collect();
    ids.sort_unstable();
    ids.dedup();
    let session = crate::sql::session_over(out).await?;
    crate::verification::register_doc_ids(&session, "minhash_docs", ids)?;
    let sql = "SELECT s.doc_id, s.sketch FROM sketches s JOIN minhash_docs m ON m.doc_id = s.doc_id";
    let mut stream = session.sql(sql).await?.execute_stream().await?;
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        let ids = batch.column(0).as_primitive::<UInt64Type>();
        let lists = batch.column(1).as_list::<i32>();
        for i in 0..batch.num_rows() {
            let values = lists.value(i);
            map.insert(ids.value(i), values.as_primitive::<UInt64Type>().values().to_vec());
        }
    }
    Ok(map)
}

/// Runs the candidate SQL over the tables in `out` and returns the
/// candidate edges (`doc_a`, `doc_b`, method) sorted, without scores; used
/// by tests that compare the SQL with reference implementations.
pub async fn candidate_edges(out: &Path, config: &Config) -> Result<Vec<(u64, u64, String)>> {
    let session = crate::sql::session_over(out).await?;
    register_edge_views(&session, config).await?;
    let sql = substitute(include_str!("../../jobs/candidates.sql"), &sql_params(config));
    let batches = session.sql(&sql).await?.collect().await?;
    let mut pairs = Vec::new();
    for batch in batches {
        let a = batch.column(0).as_primitive::<UInt64Type>();
        let b = batch.column(1).as_primitive::<UInt64Type>();
        let m = batch.column(2).as_string::<i32>();
        for i in 0..batch.num_rows() {
            pairs.push((a.value(i), b.value(i), m.value(i).to_string()));
        }
    }
    pairs.sort();
    Ok(pairs)
}

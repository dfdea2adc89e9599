//! Stage `cluster`: verified pairs → `clusters`, and `pipeline explain`.
//!
//! Connected components of the verified pairs (union-find). The
//! representative (the document to keep) is the one crawled first, then the
//! one with the longest text, then the smallest doc_id. Because similarity is
//! not transitive (A~B and B~C without A~C), members can optionally be
//! required to be verified-similar to the representative themselves; those
//! that are not are detached into clusters of their own and counted.

use anyhow::{Context, Result};
use arrow::array::{Array, AsArray, BooleanBuilder, Float64Builder, UInt64Builder};
use arrow::datatypes::{Float64Type, Int64Type, UInt64Type};
use rayon::prelude::*;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::fmt::Write;
use std::path::Path;

use crate::config::Config;
use crate::runner::{RunContext, Stage, StageReport};
use crate::stages::tokens::load_tokens;
use crate::stages::verify::verify_pair;
use crate::table::{BatchBuilder, TableWriter};
use crate::union_find::UnionFind;

/// The cluster stage.
pub struct Cluster;

impl Stage for Cluster {
    fn name(&self) -> &'static str {
        "cluster"
    }
    fn inputs(&self) -> &'static [&'static str] {
        &["duplicates", "documents", "tokens"]
    }
    fn outputs(&self, _: &Config) -> Vec<&'static str> {
        vec!["clusters"]
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({"cluster": config.cluster, "verify": config.verify})
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        ctx.runtime.block_on(run(ctx))
    }
}

/// What decides the representative of a cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub doc_id: u64,
    /// ISO 8601 capture date; None sorts last.
    pub crawl_date: Option<String>,
    pub text_chars: i64,
}

/// The representative rule: earliest crawl date (unknown dates last), then
/// the longest text, then the smallest doc_id.
pub fn representative(members: &[Member]) -> u64 {
    members
        .iter()
        .min_by(|a, b| {
            let date = |m: &Member| (m.crawl_date.is_none(), m.crawl_date.clone());
            date(a).cmp(&date(b)).then(b.text_chars.cmp(&a.text_chars)).then(a.doc_id.cmp(&b.doc_id))
        })
        .map_or(0, |m| m.doc_id)
}

async fn run(ctx: &RunContext) -> Result<StageReport> {
    let session = crate::sql::session_over(&ctx.out).await?;
    let mut uf = UnionFind::new();
    let mut pair_sim: HashMap<(u64, u64), f64> = HashMap::new();
    for b in session
        .sql("SELECT doc_a, doc_b, similarity FROM duplicates WHERE verified ORDER BY doc_a, doc_b")
        .await?
        .collect()
        .await?
    {
        let a = b.column(0).as_primitive::<UInt64Type>();
        let bb = b.column(1).as_primitive::<UInt64Type>();
        let s = b.column(2).as_primitive::<Float64Type>();
        for i in 0..b.num_rows() {
            uf.union(a.value(i), bb.value(i));
            pair_sim.insert((a.value(i), bb.value(i)), s.value(i));
        }
    }
    let mut info: HashMap<u64, Member> = HashMap::new();
    for b in session
        .sql(
            "SELECT doc_id, crawl_date, CAST(character_length(text) AS BIGINT) FROM documents WHERE doc_id IN \
             (SELECT doc_a FROM duplicates WHERE verified UNION SELECT doc_b FROM duplicates WHERE verified)",
        )
        .await?
        .collect()
        .await?
    {
        let ids = b.column(0).as_primitive::<UInt64Type>();
        let dates = b.column(1).as_string::<i32>();
        let lens = b.column(2).as_primitive::<Int64Type>();
        for i in 0..b.num_rows() {
            let crawl_date = (!dates.is_null(i)).then(|| dates.value(i).to_string());
            info.insert(ids.value(i), Member { doc_id: ids.value(i), crawl_date, text_chars: lens.value(i) });
        }
    }
    let threshold = ctx.config.verify.threshold;
    let texts: HashMap<u64, String> = if ctx.config.cluster.require_similar_to_representative {
        load_tokens(
            &session,
            "doc_id IN (SELECT doc_a FROM duplicates WHERE verified UNION SELECT doc_b FROM duplicates WHERE verified)",
        )
        .await?
        .into_iter()
        .map(|r| (r.doc_id, r.terms.join(" ")))
        .collect()
    } else {
        HashMap::new()
    };

    // (doc_id, cluster_id, size, is_rep, sim to rep)
    let mut rows: Vec<(u64, u64, u64, bool, Option<f64>)> = Vec::new();
    let mut detached = 0u64;
    for component in uf.components() {
        let members: Vec<Member> = component
            .iter()
            .map(|id| info.get(id).cloned().unwrap_or(Member { doc_id: *id, crawl_date: None, text_chars: 0 }))
            .collect();
        let rep = representative(&members);
        let sims: Vec<(u64, Option<f64>)> = component
            .par_iter()
            .filter(|&&d| d != rep)
            .map(|&d| {
                let key = (d.min(rep), d.max(rep));
                let sim = match pair_sim.get(&key) {
                    Some(s) => Some(*s),
                    None if ctx.config.cluster.require_similar_to_representative => {
                        let empty = String::new();
                        verify_pair(texts.get(&d).unwrap_or(&empty), texts.get(&rep).unwrap_or(&empty), threshold)
                    }
                    None => None,
                };
                (d, sim)
            })
            .collect();
        let (kept, cut): (Vec<_>, Vec<_>) = sims.into_iter().partition(|(_, s)| {
            !ctx.config.cluster.require_similar_to_representative || s.is_some_and(|s| s >= threshold)
        });
        let size = kept.len() as u64 + 1;
        rows.push((rep, rep, size, true, None));
        rows.extend(kept.into_iter().map(|(d, s)| (d, rep, size, false, s)));
        detached += cut.len() as u64;
        rows.extend(cut.into_iter().map(|(d, _)| (d, d, 1, true, None)));
    }
    rows.sort_by_key(|r| (r.1, !r.3, r.0));
    let mut writer = TableWriter::for_table(&ctx.out, "clusters")?;
    let mut b = BatchBuilder::new("clusters");
    for (doc, cluster, size, is_rep, sim) in &rows {
        b.col::<UInt64Builder>(0).append_value(*doc);
        b.col::<UInt64Builder>(1).append_value(*cluster);
        b.col::<UInt64Builder>(2).append_value(*size);
        b.col::<BooleanBuilder>(3).append_value(*is_rep);
        b.col::<Float64Builder>(4).append_option(*sim);
        writer.write_if_full(&mut b)?;
    }
    writer.write_rest(&mut b)?;
    let mut report = StageReport::default();
    report.rows.insert("clusters".into(), writer.commit()?);
    report.counters.insert("detached_from_representative".into(), detached);
    report.counters.insert("clusters_with_duplicates".into(), rows.iter().filter(|r| r.3 && r.2 > 1).count() as u64);
    Ok(report)
}

/// Text for `pipeline explain`: the document, its cluster and
/// representative, and every pair that involves it with the methods that
/// proposed it and the verified similarity.
pub async fn explain(out: &Path, document: &str) -> Result<String> {
    let session = crate::sql::session_over(out).await?;
    let filter = match document.parse::<u64>() {
        Ok(id) => format!("doc_id = {id}"),
        Err(_) => format!("url = '{}'", document.replace('\'', "''")),
    };
    let docs = session
        .sql(&format!("SELECT doc_id, url, crawl_date, title FROM documents WHERE {filter} ORDER BY doc_id"))
        .await
        .context("reading documents")?
        .collect()
        .await?;
    let mut text = String::new();
    let mut ids = Vec::new();
    for b in &docs {
        let id = b.column(0).as_primitive::<UInt64Type>();
        let url = b.column(1).as_string::<i32>();
        let title = b.column(3).as_string::<i32>();
        for i in 0..b.num_rows() {
            ids.push(id.value(i));
            writeln!(text, "document {} {} ({})", id.value(i), url.value(i), title.value(i))?;
        }
    }
    anyhow::ensure!(!ids.is_empty(), "no document with {filter} in {}", out.display());
    for id in ids {
        let cl = session
            .sql(&format!(
                "SELECT c.cluster_id, c.cluster_size, c.is_representative, c.similarity_to_representative, d.url \
                 FROM clusters c JOIN documents d ON d.doc_id = c.cluster_id WHERE c.doc_id = {id}"
            ))
            .await?
            .collect()
            .await?;
        match cl.iter().find(|b| b.num_rows() > 0) {
            None => writeln!(text, "  not in any cluster: no verified near-duplicate")?,
            Some(b) => {
                let rep = b.column(0).as_primitive::<UInt64Type>().value(0);
                let size = b.column(1).as_primitive::<UInt64Type>().value(0);
                let is_rep = b.column(2).as_boolean().value(0);
                let sim = b.column(3).as_primitive::<Float64Type>();
                let url = b.column(4).as_string::<i32>().value(0);
                if is_rep {
                    writeln!(text, "  representative (kept) of cluster {rep} with {size} documents")?;
                } else {
                    let s = if sim.is_null(0) { "?".to_string() } else { format!("{:.4}", sim.value(0)) };
                    writeln!(
                        text,
                        "  removed: cluster {rep} of {size} documents, representative {url} (similarity {s})"
                    )?;
                }
            }
        }
        let pairs = session
            .sql(&format!(
                "SELECT doc_a, doc_b, url_a, url_b, array_to_string(methods, ','), similarity, verified \
                 FROM duplicates WHERE doc_a = {id} OR doc_b = {id} ORDER BY verified DESC, similarity DESC"
            ))
            .await?
            .collect()
            .await?;
        for b in &pairs {
            let a = b.column(0).as_primitive::<UInt64Type>();
            let ua = b.column(2).as_string::<i32>();
            let ub = b.column(3).as_string::<i32>();
            let m = b.column(4).as_string::<i32>();
            let s = b.column(5).as_primitive::<Float64Type>();
            let v = b.column(6).as_boolean();
            for i in 0..b.num_rows() {
                let other = if a.value(i) == id { ub.value(i) } else { ua.value(i) };
                let s = if s.is_null(i) { "below threshold".to_string() } else { format!("{:.4}", s.value(i)) };
                let verdict = if v.value(i) { "verified" } else { "rejected" };
                writeln!(text, "  {verdict} pair with {other}: similarity {s}, proposed by {}", m.value(i))?;
            }
        }
    }
    Ok(text)
}

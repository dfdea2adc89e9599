//! The tables of matching a night against the earlier crawls of the
//! history, one function per stage of [`crate::stages::history`]: the
//! sessions over the night and the history, the SQL
//! (`jobs/history_edges.sql`, `jobs/crawl_clusters.sql`), the reads that
//! hand [`crate::history::matching`]'s steps their rows in memory, and the
//! tables written. Bounded by the night: its pages and the earlier pages
//! they meet.

use anyhow::Result;
use arrow::array::StringArray;
use futures::StreamExt;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;

use crate::config::{Config, MarkRule};
use crate::history::matching::{cross_crawl_groups, verify_repeats, CrossCrawlGroups};
use crate::history::{CrawlManifest, History};
use crate::methods::registry;
use crate::stages::candidates::jobs;
use crate::stages::history::session::session_over;
use crate::stages::verify::inputs::load_verification_texts;
use crate::stages::verify::keep_order::keep_params;
use crate::tables::columns::{
    clusters, crawl_clusters, documents, history_candidates, history_documents, repeats, signatures,
};
use crate::tables::sql::substitute;
use crate::tables::write::{TableOutput, TableWriter};
use crate::verify::compare::{Doc, OutcomeCounts};
use crate::verify::settings::VerificationText;

/// The relation of `jobs/history_edges.sql` whose rows probe the earlier
/// crawls' chains in the chain walk: the night's pages, placed among them.
pub const NIGHT_PROBES: &str = "night_probes";

/// Writes `out/history_candidates`: the candidate repeats of the
/// night's pages among the earlier crawls' (`jobs/history_edges.sql`),
/// bounded per night document; empty when there is no earlier crawl.
/// Returns its rows.
pub fn find_candidates(
    history: &History,
    out: &Path,
    earlier: &[CrawlManifest],
    config: &Config,
    memory_limit: Option<crate::process::memory::SqlMemory>,
    runtime: &tokio::runtime::Runtime,
) -> Result<u64> {
    if earlier.is_empty() {
        return TableWriter::for_table(out, history_candidates::TABLE)?.commit();
    }
    crate::tables::write::check_table_schema(out, signatures::TABLE)?;
    let mut params = night_walk_params(config);
    params.push(("earlier_crawls", sql_list(earlier.iter().map(|c| c.crawl.as_str()))));
    params.push(("past_digests", past_digests_sql(history, earlier, config.verify.text)?));
    let sql = substitute(include_str!("../../../jobs/history_edges.sql"), &params);
    runtime.block_on(async {
        let session = session_over(history, out, memory_limit).await?;
        register_keys(&session, out, &params).await?;
        crate::tables::sql::run_into_table(&session, out, history_candidates::TABLE, &sql).await
    })
}

/// The parameters of `jobs/history_edges.sql`: the candidate SQL's, with
/// the chain walk's text, its chains probed by the night's pages
/// ([`NIGHT_PROBES`]); also the history's candidates' fingerprint.
pub fn night_walk_params(config: &Config) -> Vec<(&'static str, String)> {
    jobs::chain_walk_params(&config.methods, &config.candidates, NIGHT_PROBES)
}

/// The SQL of the earlier documents' verification-text digests that
/// `jobs/history_edges.sql` matches the night's against (doc_id, crawl,
/// text_digest): of the crawls of `earlier` kept with verification
/// text `kind` only, since another kind's digest never equals the
/// night's. A crawl appended before the history stored digests has them
/// computed from its kept texts, with a warning to append it again: its
/// exact copies are found all the same, at the cost of reading its texts.
fn past_digests_sql(history: &History, earlier: &[CrawlManifest], kind: VerificationText) -> Result<String> {
    let (mut stored, mut computed) = (Vec::new(), Vec::new());
    for manifest in earlier.iter().filter(|c| c.verification_text == kind) {
        if history.documents_have_column(manifest, "text_digest")? {
            stored.push(manifest.crawl.as_str());
        } else {
            tracing::warn!(
                "crawl {} of the history {} was appended before the history stored text digests: they are computed from its kept texts every night; append it again to store them (pipeline history --history {} append --out {} --crawl-id {})",
                manifest.crawl,
                history.root().display(),
                history.root().display(),
                manifest.appended_from,
                manifest.crawl
            );
            computed.push(manifest.crawl.as_str());
        }
    }
    let mut parts = vec![format!(
        "SELECT doc_id, crawl, md5(verification_text) AS text_digest FROM history_documents WHERE crawl IN ({})",
        sql_list(computed.into_iter())
    )];
    // Only named when a crawl has it: a history whose crawls all predate
    // the column has no such column to plan against.
    if !stored.is_empty() {
        parts.push(format!(
            "SELECT doc_id, crawl, text_digest FROM history_documents WHERE crawl IN ({})",
            sql_list(stored.into_iter())
        ));
    }
    Ok(parts.join("\nUNION ALL\n"))
}

/// Verifies `out/history_candidates` against the kept texts of the
/// earlier pages, with the night's `[verify]` threshold and algorithm,
/// and writes `out/repeats`: the pairs that verify, with the methods
/// that proposed them. Only the matched earlier documents' texts are
/// read; crawls kept with another verification text kind than
/// `[verify] text` are skipped with a warning. Returns its rows and the
/// comparisons by outcome (the rejected ones, by the screen too, are
/// counted there only: `repeats` holds the pairs that verify). A pair
/// a11 proposed is never screened (spec §9).
pub fn verify_night(
    history: &History,
    out: &Path,
    crawl: &str,
    earlier: &[CrawlManifest],
    config: &Config,
    memory_limit: Option<crate::process::memory::SqlMemory>,
    runtime: &tokio::runtime::Runtime,
) -> Result<(u64, OutcomeCounts)> {
    let rule = config.verify.rule();
    let kind = rule.text;
    let comparable = sql_list(
        earlier
            .iter()
            .filter(|c| {
                let same = c.verification_text == kind;
                if !same {
                    tracing::warn!(crawl = %c.crawl, "kept with another verification text: its candidate repeats are not verified");
                }
                same
            })
            .map(|c| c.crawl.as_str()),
    );
    let (pairs, night, earlier) = runtime.block_on(async {
        let session = session_over(history, out, memory_limit).await?;
        // (doc, earlier doc, crawl) -> the methods that proposed it.
        let mut pairs: BTreeMap<(u64, u64, String), Vec<String>> = BTreeMap::new();
        let sql = format!(
            "SELECT doc_id, earlier_doc_id, earlier_crawl, method FROM history_candidates \
             WHERE earlier_crawl IN ({comparable})"
        );
        let mut stream = session.sql(&sql).await?.execute_stream().await?;
        while let Some(batch) = stream.next().await {
            let batch = batch?;
            let (doc, other) = (history_candidates::doc_id(&batch)?, history_candidates::earlier_doc_id(&batch)?);
            let (crawl, method) = (history_candidates::earlier_crawl(&batch)?, history_candidates::method(&batch)?);
            for i in 0..batch.num_rows() {
                let key = (doc.value(i), other.value(i), crawl.value(i).to_string());
                pairs.entry(key).or_default().push(method.value(i).to_string());
            }
        }
        let night_ids: HashSet<u64> = pairs.keys().map(|(doc, _, _)| *doc).collect();
        let night = load_verification_texts(&session, |id| night_ids.contains(&id), kind).await?;
        let mut urls: HashMap<u64, String> = HashMap::new();
        let sql = "SELECT doc_id, url FROM documents WHERE doc_id IN (SELECT doc_id FROM history_candidates)";
        let mut stream = session.sql(sql).await?.execute_stream().await?;
        while let Some(batch) = stream.next().await {
            let batch = batch?;
            let (ids, url) = (documents::doc_id(&batch)?, documents::url(&batch)?);
            urls.extend((0..batch.num_rows()).map(|i| (ids.value(i), url.value(i).to_string())));
        }
        let night: HashMap<u64, Doc> = night
            .into_iter()
            .map(|(id, text)| {
                let url = urls.remove(&id).unwrap_or_default();
                (id, Doc::new(id, url, text))
            })
            .collect();
        let mut earlier: HashMap<(u64, String), Doc> = HashMap::new();
        if !pairs.is_empty() {
            // Only the partitions of the crawls that hold a match are
            // read (the literal list prunes the others by folder).
            let matched: BTreeSet<&str> = pairs.keys().map(|(_, _, c)| c.as_str()).collect();
            let matched = sql_list(matched.into_iter());
            // The matched pages are picked here, not by a join in SQL:
            // under a memory limit that join is a sort-merge join, which
            // sorted the earlier crawls' texts (as `verify`'s did).
            let wanted: HashSet<(u64, &str)> = pairs.keys().map(|(_, other, crawl)| (*other, crawl.as_str())).collect();
            let sql = format!(
                "SELECT doc_id, crawl, url, verification_text FROM history_documents WHERE crawl IN ({matched})"
            );
            let mut stream = session.sql(&sql).await?.execute_stream().await?;
            while let Some(batch) = stream.next().await {
                let batch = batch?;
                let (ids, url) = (history_documents::doc_id(&batch)?, history_documents::url(&batch)?);
                let text = history_documents::verification_text(&batch)?;
                let crawl: &StringArray = crate::tables::column(&batch, "crawl")?;
                for i in (0..batch.num_rows()).filter(|&i| wanted.contains(&(ids.value(i), crawl.value(i)))) {
                    let doc = Doc::new(ids.value(i), url.value(i).to_string(), text.value(i).to_string());
                    earlier.insert((ids.value(i), crawl.value(i).to_string()), doc);
                }
            }
        }
        anyhow::Ok((pairs, night, earlier))
    })?;
    let pairs: Vec<_> = pairs.into_iter().collect();
    let (verified, outcomes) = verify_repeats(&pairs, &night, &earlier, rule);
    let mut table = TableOutput::<repeats::Rows>::create(out)?;
    for (((doc, other, earlier_crawl), mut methods), similarity) in pairs.into_iter().zip(verified) {
        let Some(similarity) = similarity else { continue };
        methods.sort();
        methods.dedup();
        table.push(|b| {
            b.doc_id.append_value(doc);
            b.url.append_value(night.get(&doc).map_or("", |d| d.url.as_str()));
            b.crawl.append_value(crawl);
            b.earlier_doc_id.append_value(other);
            b.earlier_crawl.append_value(&earlier_crawl);
            b.earlier_url.append_value(earlier.get(&(other, earlier_crawl.clone())).map_or("", |d| d.url.as_str()));
            b.similarity.append_value(similarity);
            for m in &methods {
                b.methods.values().append_value(m);
            }
            b.methods.append(true);
        })?;
    }
    Ok((table.commit()?, outcomes))
}

/// The SQL of an earlier page's canonical URL in `crawl_clusters.sql`,
/// over `history_documents h`: `h.canonical_url`. A crawl appended
/// before the history stored it has no such column; if one holds a
/// member of the night's clusters and the keep rule ranks by it, the
/// run stops with what to do rather than rank that crawl's copies as if
/// each were at its canonical URL (which kept tracking-URL copies).
/// Under another keep rule the column is not read, and the URL stands
/// in for it.
fn canonical_url_sql(history: &History, member_crawls: &BTreeSet<&str>, config: &Config) -> Result<String> {
    let manifests = history.crawls()?;
    let mut without = Vec::new();
    for manifest in manifests.iter().filter(|m| member_crawls.contains(m.crawl.as_str())) {
        if !history.documents_have_column(manifest, "canonical_url")? {
            without.push(manifest);
        }
    }
    if without.is_empty() {
        return Ok("h.canonical_url".into());
    }
    if !config.dedup.ranks_by_canonical_url() {
        return Ok("h.url".into());
    }
    let appends: Vec<String> = without
        .iter()
        .map(|m| {
            format!(
                "pipeline history --history {} append --out {} --crawl-id {}",
                history.root().display(),
                m.appended_from,
                m.crawl
            )
        })
        .collect();
    anyhow::bail!(
        "crawl{} {} of the history {} appended before the history stored canonical URLs, which [dedup] keep ranks copies by: append {} again ({}), or drop {}",
        if without.len() > 1 { "s" } else { "" },
        without.iter().map(|m| m.crawl.as_str()).collect::<Vec<_>>().join(", "),
        if without.len() > 1 { "were" } else { "was" },
        if without.len() > 1 { "them" } else { "it" },
        appends.join("; "),
        if without.len() > 1 { "them" } else { "it" },
    )
}

/// Writes `out/crawl_clusters`: the night's clusters (`clusters`)
/// joined through its verified repeats (`repeats`) into clusters that
/// span crawls, each member with its crawl, the copy `[history] keep`
/// keeps and the copies `[history] mark` marks
/// (`jobs/crawl_clusters.sql`). Bounded by the night: its clustered
/// pages and the earlier pages they repeat. Returns its rows.
pub fn cluster_night(
    history: &History,
    out: &Path,
    crawl: &str,
    config: &Config,
    memory_limit: Option<crate::process::memory::SqlMemory>,
    runtime: &tokio::runtime::Runtime,
) -> Result<u64> {
    runtime.block_on(async {
        let session = session_over(history, out, memory_limit).await?;
        // Every member once, in (crawl, doc) order, so the groups'
        // numbers depend on the members only.
        let mut edges: Vec<((String, u64), (String, u64))> = Vec::new();
        if crate::tables::write::table_exists(out, clusters::TABLE) {
            let mut stream = session.sql("SELECT doc_id, cluster_id FROM clusters").await?.execute_stream().await?;
            while let Some(batch) = stream.next().await {
                let batch = batch?;
                let (doc, cluster) = (clusters::doc_id(&batch)?, clusters::cluster_id(&batch)?);
                edges.extend(
                    (0..batch.num_rows())
                        .map(|i| ((crawl.to_string(), doc.value(i)), (crawl.to_string(), cluster.value(i)))),
                );
            }
        }
        let mut stream =
            session.sql("SELECT doc_id, earlier_doc_id, earlier_crawl FROM repeats").await?.execute_stream().await?;
        while let Some(batch) = stream.next().await {
            let batch = batch?;
            let (doc, other) = (repeats::doc_id(&batch)?, repeats::earlier_doc_id(&batch)?);
            let earlier_crawl = repeats::earlier_crawl(&batch)?;
            edges
                .extend((0..batch.num_rows()).map(|i| {
                    ((crawl.to_string(), doc.value(i)), (earlier_crawl.value(i).to_string(), other.value(i)))
                }));
        }
        let CrossCrawlGroups { group_no, crawl: member_crawl, doc_id } = cross_crawl_groups(&edges);
        let member_crawls: BTreeSet<&str> = member_crawl.iter().map(String::as_str).collect();
        let mut params = vec![
            ("night", format!("'{crawl}'")),
            ("member_crawls", sql_list(member_crawls.iter().copied())),
            ("new_only", (config.history.mark == MarkRule::NewOnly).to_string()),
            ("within_night", (config.history.mark == MarkRule::WithinNight).to_string()),
        ];
        params.push(("history_canonical_url", canonical_url_sql(history, &member_crawls, config)?));
        params.extend(keep_params(&config.dedup));
        let batch = arrow::record_batch::RecordBatch::try_from_iter([
            ("group_no", std::sync::Arc::new(arrow::array::UInt64Array::from(group_no)) as arrow::array::ArrayRef),
            ("crawl", std::sync::Arc::new(StringArray::from(member_crawl))),
            ("doc_id", std::sync::Arc::new(arrow::array::UInt64Array::from(doc_id))),
        ])?;
        session.register_batch("members", batch)?;
        let sql = substitute(include_str!("../../../jobs/crawl_clusters.sql"), &params);
        crate::tables::sql::run_into_table(&session, out, crawl_clusters::TABLE, &sql).await
    })
}

/// Registers the views `night_keys` and `past_keys` that
/// `jobs/history_edges.sql` groups: the signatures of the night and of the
/// history, and the keys of every method whose records are matched too
/// ([`registry::HistoryKeys`]) and whose table the night has. `params` are
/// the candidate SQL's (the night's views read them).
async fn register_keys(
    session: &datafusion::prelude::SessionContext,
    out: &Path,
    params: &[(&str, String)],
) -> Result<()> {
    let mut night =
        vec!["SELECT method, slot, sig, doc_id, doc_len, arrow_cast('', 'Utf8') AS crawl FROM signatures".to_string()];
    let mut past = vec!["SELECT method, slot, sig, doc_id, doc_len, crawl FROM history_signatures".to_string()];
    for m in registry::METHODS {
        let Some(keys) = &m.history_keys else { continue };
        if !crate::tables::write::table_exists(out, keys.kept.name()) {
            continue;
        }
        crate::tables::write::check_table_schema(out, keys.kept.name())?;
        let records = match keys.night {
            Some(job) => {
                let name = format!("night_{}", keys.kept);
                let df = session.sql(&substitute(jobs::method_job_sql(job), params)).await?;
                session.register_table(name.as_str(), df.into_view())?;
                name
            }
            None => keys.kept.to_string(),
        };
        let kept = format!("history_{}", keys.kept);
        let sql = jobs::method_job_sql(keys.sql);
        night.push(substitute(sql, &[("records", records), ("crawl", "arrow_cast('', 'Utf8')".into())]));
        past.push(substitute(sql, &[("records", kept), ("crawl", "crawl".into())]));
    }
    for (name, parts) in [("night_keys", night), ("past_keys", past)] {
        let union: Vec<String> = parts.iter().map(|p| format!("SELECT * FROM (\n{p}\n)")).collect();
        let df = session.sql(&union.join("\nUNION ALL\n")).await?;
        session.register_table(name, df.into_view())?;
    }
    Ok(())
}

/// `'a', 'b'` for an SQL `IN (...)` list of crawl ids (checked by
/// [`check_crawl_id`], so never quoted), `''` (no crawl) when empty.
pub(crate) fn sql_list<'a>(crawls: impl Iterator<Item = &'a str>) -> String {
    let quoted: Vec<String> = crawls.map(|c| format!("'{c}'")).collect();
    if quoted.is_empty() {
        "''".to_string()
    } else {
        quoted.join(", ")
    }
}

//! `pipeline explain`: what became of one document, from the tables of a
//! finished run: the template lines of its host left out of its text, its
//! cluster and representative, and every comparison verification made with
//! it, with the methods whose edges led there.

use anyhow::{Context, Result};
use arrow::array::{Array, StringArray};
use std::fmt::Write;
use std::path::Path;

use crate::tables::columns::{boilerplate, clusters, crawl_clusters, decisions, documents, duplicates, repeats};

/// Text for `pipeline explain`: the document, its cluster and
/// representative, and every pair that involves it with the methods that
/// proposed it and the verified similarity.
pub async fn explain(out: &Path, document: &str) -> Result<String> {
    for table in [
        "documents",
        "clusters",
        "duplicates",
        "failed_pairs",
        "placement_comparisons",
        "boilerplate",
        "exact_copies",
        repeats::TABLE,
    ] {
        if crate::tables::write::table_exists(out, table) {
            crate::tables::write::check_table_schema(out, table)?;
        }
    }
    let session = crate::tables::sql::session_over(out).await?;
    let filter = match document.parse::<u64>() {
        Ok(id) => format!("doc_id = {id}"),
        Err(_) => format!("url = '{}'", document.replace('\'', "''")),
    };
    let docs = session
        .sql(&format!(
            "SELECT doc_id, url, crawl_date, title, text, not_content FROM documents WHERE {filter} ORDER BY doc_id"
        ))
        .await
        .context("reading documents")?
        .collect()
        .await?;
    let mut text = String::new();
    let mut ids = Vec::new();
    for b in &docs {
        let (id, url) = (documents::doc_id(b)?, documents::url(b)?);
        let (title, body, not_content) = (documents::title(b)?, documents::text(b)?, documents::not_content(b)?);
        for i in 0..b.num_rows() {
            writeln!(text, "document {} {} ({})", id.value(i), url.value(i), title.value(i))?;
            if !not_content.is_null(i) {
                // Never tokenized, compared or clustered: nothing more to say.
                writeln!(text, "  not content ({}): kept as it is, never deduplicated", not_content.value(i))?;
                continue;
            }
            ids.push(id.value(i));
            text.push_str(&boilerplate_lines(&session, url.value(i), body.value(i)).await?);
        }
    }
    anyhow::ensure!(!text.is_empty(), "no document with {filter} in {}", out.display());
    // The methods named in the comparisons, told by name at the end.
    let mut named: Vec<String> = Vec::new();
    // The rule the run's verify compared by, from its manifest.
    let rule = crate::tables::manifest::finished_manifest(out, "verify")
        .and_then(|m| serde_json::from_value::<crate::verify::settings::VerifyConfig>(m.config["verify"].clone()).ok())
        .map(|verify| verify.rule());
    for id in ids {
        text.push_str(&earlier_repeats(&session, out, id, &mut named).await?);
        text.push_str(&exact_copy(&session, out, id).await?);
        let cl = session
            .sql(&format!(
                "SELECT c.cluster_id, c.cluster_size, c.is_representative, c.similarity_to_representative, \
                 d.url AS representative_url \
                 FROM clusters c JOIN documents d ON d.doc_id = c.cluster_id WHERE c.doc_id = {id}"
            ))
            .await?
            .collect()
            .await?;
        match cl.iter().find(|b| b.num_rows() > 0) {
            None => writeln!(text, "  not in any cluster: no verified near-duplicate among the documents compared")?,
            Some(b) => {
                let rep = clusters::cluster_id(b)?.value(0);
                let size = clusters::cluster_size(b)?.value(0);
                let is_rep = clusters::is_representative(b)?.value(0);
                let sim = clusters::similarity_to_representative(b)?;
                let url = crate::tables::column::<StringArray>(b, "representative_url")?.value(0);
                if is_rep {
                    // Kept or not is the decision's, below: with --history
                    // a representative may repeat a page of an earlier crawl.
                    writeln!(text, "  representative of cluster {rep} with {size} documents")?;
                } else {
                    let s = if sim.is_null(0) { "?".to_string() } else { format!("{:.4}", sim.value(0)) };
                    writeln!(
                        text,
                        "  removed: cluster {rep} of {size} documents, representative {url} (similarity {s})"
                    )?;
                }
            }
        }
        text.push_str(&decision(&session, out, id).await?);
        // Placement's own comparisons (a representative reached through a
        // partner), in runs that have them.
        let placement = if crate::tables::write::table_exists(out, "placement_comparisons") {
            format!(
                " UNION ALL SELECT p.doc_id, p.representative, da.url, db.url, array_to_string(p.methods, ','), \
                 p.similarity, p.similarity IS NOT NULL, p.outcome, p.value \
                 FROM placement_comparisons p JOIN documents da ON da.doc_id = p.doc_id \
                 JOIN documents db ON db.doc_id = p.representative \
                 WHERE p.doc_id = {id} OR p.representative = {id}"
            )
        } else {
            String::new()
        };
        let pairs = session
            .sql(&format!(
                "SELECT * FROM (\
                 SELECT doc_a, doc_b, url_a, url_b, array_to_string(methods, ',') AS method_list, similarity, verified, \
                 CAST(NULL AS VARCHAR) AS outcome, similarity AS value \
                 FROM duplicates WHERE doc_a = {id} OR doc_b = {id} \
                 UNION ALL SELECT doc_a, doc_b, url_a, url_b, array_to_string(methods, ','), CAST(NULL AS DOUBLE), FALSE, \
                 outcome, value \
                 FROM failed_pairs WHERE doc_a = {id} OR doc_b = {id}{placement}) \
                 ORDER BY verified DESC, similarity DESC, doc_a, doc_b"
            ))
            .await?
            .collect()
            .await?;
        for b in &pairs {
            let (a, ua, ub) = (duplicates::doc_a(b)?, duplicates::url_a(b)?, duplicates::url_b(b)?);
            let m = crate::tables::column::<StringArray>(b, "method_list")?;
            let (s, v) = (duplicates::similarity(b)?, duplicates::verified(b)?);
            // Utf8 or Utf8View, as the union's types came out: read as Utf8.
            let outcome = b.column_by_name("outcome").context("the comparisons have no outcome")?;
            let outcome = arrow::compute::cast(outcome, &arrow::datatypes::DataType::Utf8)?;
            let outcome = outcome.as_any().downcast_ref::<StringArray>().context("outcome is not text")?;
            let value = crate::tables::column::<arrow::array::Float64Array>(b, "value")?;
            for i in 0..b.num_rows() {
                let other = if a.value(i) == id { ub.value(i) } else { ua.value(i) };
                let why = if s.is_null(i) {
                    rejection(outcome.value(i), value.value(i), rule)
                } else {
                    format!("similarity {:.4}", s.value(i))
                };
                let verdict = if v.value(i) { "verified" } else { "rejected" };
                writeln!(text, "  {verdict} comparison with {other}: {why}, reached through {}", m.value(i))?;
                named.extend(m.value(i).split(',').map(str::to_string));
            }
        }
    }
    text.push_str(&method_legend(named));
    Ok(text)
}

/// Why a comparison was rejected, from its `outcome` and `value`
/// (`failed_pairs`, `placement_comparisons`) and the run's rule when its
/// manifest gives it: "rejected by the screen: 8-gram resemblance 0.07 <
/// 0.2", "similarity below 0.8: at most 0.62 (LCS stopped early)".
fn rejection(outcome: &str, value: f64, rule: Option<crate::verify::settings::PairRule>) -> String {
    use crate::verify::compare::Outcome;
    if outcome == Outcome::Screen.name() {
        let screen = rule.map_or(String::new(), |r| format!(" < {}", (r.screen * 1000.0).round() / 1000.0));
        return format!("rejected by the screen: 8-gram resemblance {value:.2}{screen}");
    }
    let below =
        rule.map_or("similarity below the threshold".to_string(), |r| format!("similarity below {}", r.threshold));
    let how = match outcome {
        o if o == Outcome::LengthBound.name() => format!("at most {value:.2} by the lengths"),
        o if o == Outcome::CharBound.name() => format!("at most {value:.2} by the characters shared"),
        o if o == Outcome::LcsStoppedEarly.name() => format!("at most {value:.2} (LCS stopped early)"),
        _ => format!("{value:.2} (LCS)"),
    };
    format!("{below}: {how}")
}

/// A line for an exact copy (table `exact_copies`): the first of its exact
/// group, whose outcome it follows and which alone was searched and
/// compared; empty for any other document or a run without the table.
async fn exact_copy(session: &datafusion::prelude::SessionContext, out: &Path, id: u64) -> Result<String> {
    if !crate::tables::write::table_exists(out, "exact_copies") {
        return Ok(String::new());
    }
    let sql = format!(
        "SELECT e.first_doc_id, d.url FROM exact_copies e JOIN documents d ON d.doc_id = e.first_doc_id \
         WHERE e.doc_id = {id}"
    );
    let batches = session.sql(&sql).await?.collect().await?;
    let Some(b) = batches.iter().find(|b| b.num_rows() > 0) else { return Ok(String::new()) };
    let first = crate::tables::columns::exact_copies::first_doc_id(b)?.value(0);
    let url = documents::url(b)?.value(0);
    Ok(format!(
        "  exact copy of document {first} {url}: the same verification text, so only that one was searched and \
         compared; this one follows it\n"
    ))
}

/// One line per method named in the text, in registry order: its id with
/// what it is ("a4 (LongSent: the 2 longest sentences)").
fn method_legend(mut ids: Vec<String>) -> String {
    let rank = |id: &str| crate::methods::registry::ids().iter().position(|x| *x == id).unwrap_or(usize::MAX);
    ids.sort_by(|a, b| (rank(a), a).cmp(&(rank(b), b)));
    ids.dedup();
    ids.retain(|id| !id.is_empty());
    if ids.is_empty() {
        return String::new();
    }
    let lines: Vec<String> = ids.iter().map(|id| format!("  {}", crate::methods::registry::title(id))).collect();
    format!("methods:\n{}\n", lines.join("\n"))
}

/// The pages of earlier crawls the document repeats (`repeats`, written
/// by a run with `--history`), most similar first; nothing without it.
async fn earlier_repeats(
    session: &datafusion::prelude::SessionContext,
    out: &Path,
    id: u64,
    named: &mut Vec<String>,
) -> Result<String> {
    let mut text = String::new();
    if !crate::tables::write::table_exists(out, repeats::TABLE) {
        return Ok(text);
    }
    let sql = format!(
        "SELECT earlier_url, earlier_crawl, earlier_doc_id, similarity, array_to_string(methods, ',') AS method_list \
         FROM repeats WHERE doc_id = {id} ORDER BY similarity DESC, earlier_crawl, earlier_doc_id"
    );
    for b in session.sql(&sql).await.context("reading repeats")?.collect().await? {
        let (url, crawl, earlier) =
            (repeats::earlier_url(&b)?, repeats::earlier_crawl(&b)?, repeats::earlier_doc_id(&b)?);
        let (similarity, methods) =
            (repeats::similarity(&b)?, crate::tables::column::<StringArray>(&b, "method_list")?);
        for i in 0..b.num_rows() {
            writeln!(
                text,
                "  repeats {} (document {}) of crawl {}: similarity {:.4}, reached through {}",
                url.value(i),
                earlier.value(i),
                crawl.value(i),
                similarity.value(i),
                methods.value(i)
            )?;
            named.extend(methods.value(i).split(',').map(str::to_string));
        }
    }
    if crate::tables::write::table_exists(out, crawl_clusters::TABLE) {
        text.push_str(&surviving_copy(session, id).await?);
    }
    Ok(text)
}

/// The run's decision on the document (`decisions`), as the export follows
/// it: kept, or removed with its kept copy, which with `--history` may be a
/// page of an earlier crawl (named by `crawl_clusters`). Nothing when the
/// run has no decisions.
async fn decision(session: &datafusion::prelude::SessionContext, out: &Path, id: u64) -> Result<String> {
    if !crate::tables::write::table_exists(out, decisions::TABLE) {
        return Ok(String::new());
    }
    let (kept_crawl, kept_url, joins) = if crate::tables::write::table_exists(out, crawl_clusters::TABLE) {
        (
            "d.duplicate_of_crawl",
            "COALESCE(k.url, h.url)",
            "LEFT JOIN documents k ON k.doc_id = d.duplicate_of AND d.duplicate_of_crawl IS NULL \
             LEFT JOIN crawl_clusters h ON h.doc_id = d.duplicate_of AND h.crawl = d.duplicate_of_crawl",
        )
    } else {
        ("arrow_cast(NULL, 'Utf8')", "k.url", "LEFT JOIN documents k ON k.doc_id = d.duplicate_of")
    };
    let sql = format!(
        "SELECT d.is_kept, d.reason, d.duplicate_of, d.similarity, {kept_crawl} AS kept_crawl, \
         {kept_url} AS kept_url FROM decisions d {joins} WHERE d.doc_id = {id}"
    );
    let mut text = String::new();
    for b in session.sql(&sql).await.context("reading decisions")?.collect().await? {
        let (kept, reason, of) = (decisions::is_kept(&b)?, decisions::reason(&b)?, decisions::duplicate_of(&b)?);
        let similarity = decisions::similarity(&b)?;
        let (crawl, url) = (
            crate::tables::column::<StringArray>(&b, "kept_crawl")?,
            crate::tables::column::<StringArray>(&b, "kept_url")?,
        );
        for i in 0..b.num_rows() {
            if kept.value(i) {
                writeln!(text, "  decision: kept ({})", reason.value(i))?;
                continue;
            }
            let s =
                if similarity.is_null(i) { "not compared".to_string() } else { format!("{:.4}", similarity.value(i)) };
            let of_crawl = if crawl.is_null(i) { String::new() } else { format!(" of crawl {}", crawl.value(i)) };
            writeln!(
                text,
                "  decision: removed ({}), its kept copy {} (document {}){of_crawl}, similarity {s}",
                reason.value(i),
                if url.is_null(i) { "?" } else { url.value(i) },
                of.value(i)
            )?;
        }
    }
    Ok(text)
}

/// Which copy of the document's cluster across crawls (`crawl_clusters`)
/// survives, and whether the document is marked; nothing when it is in none.
async fn surviving_copy(session: &datafusion::prelude::SessionContext, id: u64) -> Result<String> {
    let mut text = String::new();
    let sql = format!(
        "SELECT m.is_kept, m.is_duplicate, m.cluster_size, k.url, k.crawl, k.doc_id \
         FROM crawl_clusters m JOIN crawl_clusters k \
           ON k.cluster_id = m.cluster_id AND k.cluster_crawl = m.cluster_crawl AND k.is_kept \
         WHERE m.doc_id = {id} AND m.crawl = (SELECT MAX(crawl) FROM crawl_clusters)"
    );
    for b in session.sql(&sql).await.context("reading crawl_clusters")?.collect().await? {
        let (kept, marked, size) =
            (crawl_clusters::is_kept(&b)?, crawl_clusters::is_duplicate(&b)?, crawl_clusters::cluster_size(&b)?);
        let (url, crawl, doc) = (crawl_clusters::url(&b)?, crawl_clusters::crawl(&b)?, crawl_clusters::doc_id(&b)?);
        for i in 0..b.num_rows() {
            let verdict = if kept.value(i) {
                "it is the copy kept".to_string()
            } else {
                format!(
                    "the copy kept is {} (document {}) of crawl {}; this one is {}",
                    url.value(i),
                    doc.value(i),
                    crawl.value(i),
                    if marked.value(i) { "marked duplicate" } else { "not marked ([history] mark)" }
                )
            };
            writeln!(text, "  in a cluster of {} pages across crawls: {verdict}", size.value(i))?;
        }
    }
    Ok(text)
}

/// How many lines of a page's text are its host's boilerplate, and the
/// first few of them: what signatures and verification did not see.
async fn boilerplate_lines(session: &datafusion::prelude::SessionContext, url: &str, body: &str) -> Result<String> {
    const SHOWN: usize = 12;
    let Some(host) = crate::text::boilerplate::host_of(url) else { return Ok(String::new()) };
    let mut template = crate::text::boilerplate::Boilerplate::default();
    let sql = format!("SELECT block_hash FROM boilerplate WHERE host = '{}'", host.replace('\'', "''"));
    for b in session.sql(&sql).await.context("reading boilerplate")?.collect().await? {
        let keys = boilerplate::block_hash(&b)?;
        for i in 0..b.num_rows() {
            template.insert(&host, keys.value(i));
        }
    }
    let removed: Vec<&str> = body.lines().filter(|l| template.is_template(Some(&host), l)).collect();
    let lines = body.lines().filter(|l| !l.trim().is_empty()).count();
    let mut text = String::new();
    if removed.len() == lines && lines > 0 {
        writeln!(text, "  every line is a template line of {host}: the page is compared whole")?;
    } else if !removed.is_empty() {
        writeln!(
            text,
            "  {} of {lines} lines are template lines of {host}, left out of its tokens and visible text:",
            removed.len()
        )?;
        for line in removed.iter().take(SHOWN) {
            writeln!(text, "    - {}", line.trim())?;
        }
        if removed.len() > SHOWN {
            writeln!(text, "    ... and {} more", removed.len() - SHOWN)?;
        }
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_legend_names_each_method_once_in_registry_order() {
        let named = ["a11", "a2", "a11", "a10", "retired"].map(String::from).to_vec();
        assert_eq!(
            method_legend(named),
            "methods:\n  a2 (TF*IDF: the 6 heaviest terms by BM25)\n  a10 (OptFreq: the 6 terms of optimal frequency)\n  \
             a11 (Decomposition: chains of shared shingles)\n  retired\n"
        );
        assert_eq!(method_legend(Vec::new()), "");
    }
}

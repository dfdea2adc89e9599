//! `pipeline report`: one self-contained HTML page about a run.
//!
//! The page (`DIR/report.html`) holds the run's counts, a bar chart of
//! precision, recall and F1 per method with the study's published figures
//! beside this run's, the Dice heat map between methods,
//! the per-method pair counts, the largest clusters with sample URLs, the
//! largest groups of exact copies with the URL parameters that made them, the
//! reject reasons and the stage timings from the manifests. Charts are
//! inline SVG and styles inline CSS: no JavaScript and no external resource,
//! so the file can be mailed, archived or opened offline. A section whose
//! table a stage has not made yet says "not run" instead of failing.
//!
//! Apart from the timings section (wall and CPU seconds differ between
//! runs), the page depends only on the tables, so two runs over the same
//! input give the same page.

pub mod data;
pub mod explain;
pub mod html;
pub mod svg;

use anyhow::Result;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use data::{ClusterSample, Count, ExactCopies, MethodQuality, Overlap, RejectReason, Repeats, ReportData, Section};
use html::{escape, grouped, ratio, seconds, truncate_chars};
use svg::{BarGroup, Series};

use crate::evaluate::settings::STUDY_POOL_METHODS;
use crate::methods::registry;
use crate::tables::manifest::Manifest;

/// File name of the report inside the output folder.
pub const REPORT_FILE: &str = "report.html";

/// Characters of a page title shown next to a cluster member's URL.
const TITLE_CHARS: usize = 90;
/// Characters of a reject's example detail.
const DETAIL_CHARS: usize = 120;

/// The bar series of the quality chart, with colours that stay apart for
/// colour-blind readers (Tableau 10 blue, orange, green).
const QUALITY_SERIES: [Series<'static>; 3] = [
    Series { name: "precision", colour: "#4e79a7" },
    Series { name: "recall", colour: "#f28e2b" },
    Series { name: "F1", colour: "#59a14f" },
];

/// Renders the report of the output folder `out` and writes it to
/// `out/report.html` atomically (temporary file, then rename), so a reader
/// never sees half a page. Returns the path written.
pub fn write_report(out: &Path, runtime: &tokio::runtime::Runtime) -> Result<PathBuf> {
    let page = runtime.block_on(render(out))?;
    let path = out.join(REPORT_FILE);
    crate::tables::write::write_file_atomically(&path, page.as_bytes())?;
    Ok(path)
}

/// The report page of the output folder `out`.
pub async fn render(out: &Path) -> Result<String> {
    Ok(page(&data::load(out).await?))
}

/// The whole HTML page for `data`.
pub fn page(data: &ReportData) -> String {
    let mut body = String::new();
    body.push_str(&section("outcome", "Deduplication outcome", &outcome_html(&data.outcome)));
    body.push_str(&section("clusters", "Largest clusters", &body_of(&data.clusters, |c| clusters_html(c))));
    body.push_str(&section("copies", "Exact copies", &body_of(&data.exact_copies, exact_copies_html)));
    body.push_str(&section("summary", "Run summary", &summary_html(&data.summary)));
    let pool = pool_methods(&data.stages);
    body.push_str(&section(
        "quality",
        "Quality per method",
        &body_of(&data.quality, |q| quality_html(q, pool.as_deref())),
    ));
    body.push_str(&section(
        "overlap",
        "Overlap between methods",
        &body_of(&data.overlap, |o| overlap_html(o, &data.quality)),
    ));
    body.push_str(&section("rejects", "Reject reasons", &body_of(&data.rejects, |r| rejects_html(r))));
    body.push_str(&section("repeats", "Repeats of earlier crawls", &body_of(&data.repeats, repeats_html)));
    body.push_str(&section("timings", "Stage timings", &timings_html(&data.stages)));
    format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>neardup report</title>
<style>{STYLE}</style>
</head>
<body>
<header><h1>neardup report</h1><p>Near-duplicate detection run, pipeline version {version}. Every number comes from the tables and manifests of the output folder; rerun <code>pipeline query</code> for details.</p></header>
{body}</body>
</html>
"#,
        version = escape(env!("CARGO_PKG_VERSION")),
    )
}

/// The page's style sheet: plain, printable, wide tables scroll.
const STYLE: &str = "
body { font-family: system-ui, sans-serif; margin: 24px auto; max-width: 1320px; padding: 0 16px; color: #1d1d1d; }
h1 { margin-bottom: 4px; } header p { color: #555; margin-top: 0; }
section { margin: 28px 0; } h2 { border-bottom: 2px solid #4e79a7; padding-bottom: 4px; }
.note { color: #555; max-width: 900px; } .missing { color: #9c3d00; font-style: italic; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; }
.card { border: 1px solid #ccd; border-radius: 6px; padding: 10px 16px; min-width: 130px; background: #f7f9fc; }
.card .value { display: block; font-size: 26px; font-weight: 600; } .card .label { color: #555; font-size: 13px; }
table { border-collapse: collapse; margin: 12px 0; font-size: 14px; }
th, td { border: 1px solid #ccd; padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: #eef2f8; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.total td { font-weight: 600; background: #f7f9fc; }
.chart { overflow-x: auto; }
ul.members { margin: 0; padding-left: 18px; } ul.members li { margin: 2px 0; }
.url { font-family: ui-monospace, monospace; font-size: 13px; word-break: break-all; }
.title { color: #555; } .kept { background: #59a14f; color: #fff; border-radius: 3px; padding: 0 4px; font-size: 12px; }
.timebar { background: #4e79a7; height: 8px; margin-top: 3px; } td.wall { min-width: 140px; }
td.listing { max-width: 520px; font-size: 13px; } .kv { white-space: nowrap; }
";

/// One section of the page.
fn section(id: &str, heading: &str, body: &str) -> String {
    format!("<section id=\"{id}\"><h2>{}</h2>\n{body}</section>\n", escape(heading))
}

/// The body of a section: `ready` for its data, or the reason it has none.
fn body_of<T>(section: &Section<T>, ready: impl FnOnce(&T) -> String) -> String {
    match section {
        Section::Ready(data) => ready(data),
        Section::NotRun { table } => not_run(table),
        Section::Unreadable(error) => {
            format!("<p class=\"missing\">could not be read: {}</p>\n", escape(error))
        }
    }
}

/// The text of a section whose table is missing.
fn not_run(table: &str) -> String {
    format!("<p class=\"missing\">not run (no table <code>{}</code> yet)</p>\n", escape(table))
}

/// The run's counts as cards.
/// The outcome cards and where the full list of decisions is.
fn outcome_html(counts: &[Count]) -> String {
    let mut out = summary_html(counts);
    out.push_str(
        "<p class=\"note\">One decision per document in table <a href=\"decisions/\">decisions</a> \
         (kept, or removed as a duplicate of a named kept copy, with the similarity to it). \
         The deduplicated crawl: <code>pipeline export --format warc</code>; the removed documents: \
         <code>pipeline query \"SELECT * FROM decisions WHERE NOT is_kept\"</code>.</p>\n",
    );
    out
}

fn summary_html(counts: &[Count]) -> String {
    let mut out = String::from("<div class=\"cards\">\n");
    for count in counts {
        let value = match &count.value {
            Section::Ready(n) => grouped(*n),
            Section::NotRun { .. } => "not run".to_string(),
            Section::Unreadable(_) => "unreadable".to_string(),
        };
        let _ = writeln!(
            out,
            "<div class=\"card\"><span class=\"value\">{}</span><span class=\"label\">{}</span></div>",
            escape(&value),
            escape(count.label)
        );
    }
    out.push_str("</div>\n");
    out
}

/// One method's figures as the study published them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StudyFigure {
    pub method: &'static str,
    pub recall: f64,
    pub precision: f64,
    pub f: f64,
    /// Where the study gives them.
    pub table: &'static str,
}

/// The study's published figures (Zelenkov & Segalovich, ROMIP web
/// collection, about 500,000 documents; spec, "Reference figures from the
/// study"): Table 2 for A0–A10, in its order (F descending), whose recall
/// is relative to the union of the duplicates of those eleven methods, and
/// Table 7 for A12. A11's are only described ("nearly 1.0", §6.1).
pub const STUDY_FIGURES: [StudyFigure; 12] = [
    StudyFigure { method: "a4", recall: 0.84, precision: 0.80, f: 0.82, table: "Table 2" },
    StudyFigure { method: "a1", recall: 0.60, precision: 0.94, f: 0.73, table: "Table 2" },
    StudyFigure { method: "a10", recall: 0.59, precision: 0.94, f: 0.73, table: "Table 2" },
    StudyFigure { method: "a3", recall: 0.59, precision: 0.95, f: 0.73, table: "Table 2" },
    StudyFigure { method: "a5", recall: 0.62, precision: 0.86, f: 0.72, table: "Table 2" },
    StudyFigure { method: "a2", recall: 0.54, precision: 0.96, f: 0.69, table: "Table 2" },
    StudyFigure { method: "a7", recall: 0.50, precision: 0.97, f: 0.66, table: "Table 2" },
    StudyFigure { method: "a9", recall: 0.44, precision: 0.77, f: 0.56, table: "Table 2" },
    StudyFigure { method: "a8", recall: 0.39, precision: 0.97, f: 0.56, table: "Table 2" },
    StudyFigure { method: "a6", recall: 0.36, precision: 0.91, f: 0.51, table: "Table 2" },
    StudyFigure { method: "a0", recall: 0.23, precision: 1.00, f: 0.38, table: "Table 2" },
    StudyFigure { method: "a12", recall: 0.96, precision: 0.95, f: 0.95, table: "Table 7" },
];

/// The pool's methods the evaluate stage recorded in its manifest, if it
/// ran (and recorded them).
fn pool_methods(stages: &[(&'static str, Option<Manifest>)]) -> Option<Vec<String>> {
    let (_, manifest) = stages.iter().find(|(name, _)| *name == "evaluate")?;
    let methods = manifest.as_ref()?.config.get("pool_methods")?.as_array()?;
    methods.iter().map(|m| m.as_str().map(str::to_string)).collect()
}

/// A sentence naming the recall pool and whether it is the study's.
fn pool_sentence(pool: Option<&[String]>) -> String {
    match pool {
        None => {
            "The pool's methods are not recorded (an evaluate stage of an older version: every method run).".to_string()
        }
        Some(methods) if methods.iter().map(String::as_str).eq(STUDY_POOL_METHODS.iter().copied()) => format!(
            "Recall is relative to the pool of {} (<code>evaluate.pool = \"study\"</code>): the study's definition, \
             so the recall figures compare with the study's.",
            methods.join(", ")
        ),
        Some(methods) => format!(
            "Recall is relative to the pool of {}: not the study's pool (a0–a10), so the recall and F figures do \
             not compare with the study's; set <code>evaluate.pool = \"study\"</code> for that.",
            if methods.is_empty() { "no method".to_string() } else { escape(&methods.join(", ")) }
        ),
    }
}

/// The study's figures beside this run's, for the methods the study
/// reports, in the study's order.
fn study_comparison_html(quality: &[MethodQuality], pool: Option<&[String]>) -> String {
    let mut out = format!(
        "<h3>Beside the study</h3>\n<p class=\"note\">The study's figures (Zelenkov &amp; Segalovich: ROMIP web \
         collection, about 500,000 documents; Table 2 for A0–A10, whose recall is relative to the union of their \
         duplicates, Table 7 for A12; A11 is described as \"nearly 1.0\" in recall and precision) and this run's. \
         {}</p>\n<table>\n<tr><th>method</th><th>source</th><th>study recall</th><th>study precision</th><th>study F</th>\
         <th>recall</th><th>precision</th><th>F1</th></tr>\n",
        pool_sentence(pool)
    );
    for figure in STUDY_FIGURES {
        let run = quality.iter().find(|q| q.method == figure.method);
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{:.2}</td><td class=\"num\">{:.2}</td><td class=\"num\">{:.2}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            escape(&registry::title(figure.method)),
            figure.table,
            figure.recall,
            figure.precision,
            figure.f,
            run.map_or_else(|| "not run".to_string(), |q| ratio(q.recall)),
            run.map_or_else(|| "not run".to_string(), |q| ratio(q.precision)),
            run.map_or_else(|| "not run".to_string(), |q| ratio(q.f1)),
        );
    }
    out.push_str("</table>\n");
    out
}

/// The quality bar chart, the pair-count table (`method_quality`) and the
/// study's figures beside this run's; `pool` names the recall pool's
/// methods when the evaluate stage recorded them.
fn quality_html(quality: &[MethodQuality], pool: Option<&[String]>) -> String {
    if quality.is_empty() {
        return "<p class=\"missing\">no method was evaluated</p>\n".to_string();
    }
    let groups: Vec<BarGroup> = quality
        .iter()
        .map(|q| BarGroup { label: q.method.clone(), values: vec![q.precision, q.recall, q.f1] })
        .collect();
    let mut out = String::from(
        "<p class=\"note\">Precision = verified / found; recall = verified / the pool's verified pairs (the \
         union of the verified pairs of the pool's methods, <code>evaluate.pool</code>); F1 = 2PR / (P + R). A dash: no value (the method found no pair). A method with more pairs than \
         <code>evaluate.max_judged_pairs</code> is judged on a uniform random sample of them (\"judged\"): \
         its verified count, recall and F1 are estimates, and the precision has its 95% interval.</p>\n<div class=\"chart\">",
    );
    out.push_str(&svg::grouped_bar_chart("Precision, recall and F1 per method", &QUALITY_SERIES, &groups));
    out.push_str("</div>\n<table>\n<tr><th>method</th><th>pairs found</th><th>judged</th><th>pairs verified</th><th>precision</th><th>95% interval</th><th>recall</th><th>F1</th></tr>\n");
    for q in quality {
        let interval = match q.precision_interval {
            Some((low, high)) if q.pairs_judged < q.pairs_found => {
                format!("{} – {}", ratio(Some(low)), ratio(Some(high)))
            }
            _ => "exact".to_string(),
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            escape(&registry::title(&q.method)),
            grouped(q.pairs_found),
            grouped(q.pairs_judged),
            grouped(q.pairs_verified),
            ratio(q.precision),
            interval,
            ratio(q.recall),
            ratio(q.f1)
        );
    }
    out.push_str("</table>\n");
    out.push_str(&study_comparison_html(quality, pool));
    out
}

/// The Dice heat map (`method_overlap`), naming the evaluated methods that
/// verified no pair and therefore have no row in it.
fn overlap_html(overlap: &Overlap, quality: &Section<Vec<MethodQuality>>) -> String {
    if overlap.methods.is_empty() {
        return "<p class=\"missing\">no verified pairs, so no overlap to show</p>\n".to_string();
    }
    let mut out = String::from(
        "<p class=\"note\">Dice coefficient 2|A∩B| / (|A| + |B|) between the sets of verified pairs of two methods.</p>\n<div class=\"chart\">",
    );
    out.push_str(&svg::heat_map("Dice overlap between methods", "Dice", &overlap.methods, &overlap.dice));
    out.push_str("</div>\n");
    if let Section::Ready(quality) = quality {
        let absent: Vec<String> =
            quality.iter().filter(|q| !overlap.methods.contains(&q.method)).map(|q| escape(&q.method)).collect();
        if !absent.is_empty() {
            let _ =
                writeln!(out, "<p class=\"note\">Without verified pairs (not in the map): {}.</p>", absent.join(", "));
        }
    }
    out
}

/// The largest clusters with their sample members.
fn clusters_html(clusters: &[ClusterSample]) -> String {
    if clusters.is_empty() {
        return "<p class=\"missing\">no clusters: no verified near-duplicate pair</p>\n".to_string();
    }
    let mut out = format!(
        "<p class=\"note\">The {} largest clusters of verified near-duplicates, with up to {} members each; \
         <span class=\"kept\">kept</span> marks the representative a dedup keeps.</p>\n\
         <table>\n<tr><th>cluster</th><th>size</th><th>members (similarity to the representative)</th></tr>\n",
        data::LARGEST_CLUSTERS,
        data::URLS_PER_CLUSTER
    );
    for cluster in clusters {
        let _ = write!(
            out,
            "<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td><ul class=\"members\">",
            cluster.cluster_id,
            grouped(cluster.size as i64)
        );
        for member in &cluster.members {
            let mark = if member.is_representative {
                "<span class=\"kept\">kept</span> ".to_string()
            } else {
                format!("({}) ", ratio(member.similarity_to_representative))
            };
            let _ = write!(
                out,
                "<li>{mark}<span class=\"url\">{}</span> <span class=\"title\">{}</span></li>",
                escape(&member.url),
                escape(&truncate_chars(&member.title, TITLE_CHARS))
            );
        }
        out.push_str("</ul></td></tr>\n");
    }
    out.push_str("</table>\n");
    out
}

/// The largest exact groups (documents with one verification text) and the
/// URL parameters that made the copies: what a crawl operator can fix.
fn exact_copies_html(copies: &ExactCopies) -> String {
    if copies.groups.is_empty() {
        return "<p class=\"missing\">no exact copies: every document's verification text is its own</p>\n".to_string();
    }
    let mut out = format!(
        "<p class=\"note\">The {} largest groups of documents with the same verification text: only the first \
         (in the keep order) was searched and compared, the others follow it.</p>\n\
         <table>\n<tr><th>documents</th><th>distinct URLs</th><th>first</th></tr>\n",
        data::LARGEST_EXACT_GROUPS
    );
    for group in &copies.groups {
        let _ = writeln!(
            out,
            "<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td><span class=\"url\">{}</span></td></tr>",
            grouped(group.documents),
            grouped(group.distinct_urls),
            escape(&group.first_url)
        );
    }
    out.push_str("</table>\n");
    if !copies.parameters.is_empty() {
        let listed: Vec<String> = copies
            .parameters
            .iter()
            .map(|(name, n)| format!("<code>{}</code> ({})", escape(name), grouped(*n)))
            .collect();
        let _ = writeln!(
            out,
            "<p class=\"note\">URL parameters of copies that their first's URL lacks (copies with one): {}.</p>",
            listed.join(", ")
        );
    }
    out
}

/// The night's repeats of earlier crawls, per crawl, and the closest ones.
fn repeats_html(repeats: &Repeats) -> String {
    let mut out = format!(
        "<p class=\"note\">{} of the night's documents repeat a page of an earlier crawl of the history \
         (<code>repeats</code>: verified against the earlier page's kept text). Per crawl: the night's documents \
         that repeat its pages, its pages repeated, and, in the clusters across crawls \
         (<code>crawl_clusters</code>), its members kept and marked as duplicates. The night's pages marked \
         are removed in its decisions (the outcome's repeats, unless <code>[history] mark = \"within-night\"</code>).</p>\n\
         <table>\n<tr><th>crawl</th><th>night documents repeating it</th><th>its pages repeated</th>\
         <th>mean similarity</th><th>kept</th><th>marked duplicate</th></tr>\n",
        grouped(repeats.documents)
    );
    for c in &repeats.crawls {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            escape(&c.crawl),
            grouped(c.repeating_documents),
            grouped(c.repeated_pages),
            ratio(c.mean_similarity),
            grouped(c.kept),
            grouped(c.marked)
        );
    }
    out.push_str("</table>\n");
    if !repeats.examples.is_empty() {
        out.push_str("<table>\n<tr><th>night page</th><th>repeats</th><th>of crawl</th><th>similarity</th></tr>\n");
        for e in &repeats.examples {
            let _ = writeln!(
                out,
                "<tr><td class=\"url\">{}</td><td class=\"url\">{}</td><td>{}</td><td class=\"num\">{}</td></tr>",
                escape(&e.url),
                escape(&e.earlier_url),
                escape(&e.earlier_crawl),
                ratio(Some(e.similarity))
            );
        }
        out.push_str("</table>\n");
    }
    out
}

/// Rejected records per reason.
fn rejects_html(rejects: &[RejectReason]) -> String {
    if rejects.is_empty() {
        return "<p class=\"note\">No record was rejected.</p>\n".to_string();
    }
    let mut out = String::from("<table>\n<tr><th>reason</th><th>records</th><th>example</th></tr>\n");
    for r in rejects {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            escape(&r.reason),
            grouped(r.records),
            escape(&truncate_chars(&r.example, DETAIL_CHARS))
        );
    }
    out.push_str("</table>\n");
    out
}

/// Wall and CPU seconds, rows written and counters per stage, from the
/// manifests; a bar under the wall time shows its share of the slowest stage.
fn timings_html(stages: &[(&'static str, Option<Manifest>)]) -> String {
    let slowest = stages.iter().filter_map(|(_, m)| m.as_ref()).map(|m| m.wall_seconds).fold(0.0, f64::max);
    let mut out = String::from(
        "<p class=\"note\">From <code>_manifests/&lt;stage&gt;.json</code>: the last time each stage ran \
         (a stage skipped as up to date keeps its earlier numbers).</p>\n\
         <table>\n<tr><th>stage</th><th>wall s</th><th>CPU s</th><th>rows written</th><th>counters</th></tr>\n",
    );
    let (mut wall, mut cpu) = (0.0, 0.0);
    for (stage, manifest) in stages {
        let Some(m) = manifest else {
            let _ = writeln!(out, "<tr><td>{stage}</td><td colspan=\"4\" class=\"missing\">not run</td></tr>");
            continue;
        };
        wall += m.wall_seconds;
        cpu += m.cpu_seconds;
        let share = if slowest > 0.0 { 100.0 * m.wall_seconds / slowest } else { 0.0 };
        let listed = |map: &std::collections::BTreeMap<String, u64>| {
            map.iter()
                .map(|(k, v)| format!("<span class=\"kv\">{}: {}</span>", escape(k), grouped(*v as i64)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(
            out,
            "<tr><td>{stage}</td><td class=\"num wall\">{}<div class=\"timebar\" style=\"width:{share:.0}%\"></div></td><td class=\"num\">{}</td><td class=\"listing\">{}</td><td class=\"listing\">{}</td></tr>",
            seconds(m.wall_seconds),
            seconds(m.cpu_seconds),
            listed(&m.report.rows),
            listed(&m.report.counters)
        );
    }
    let _ = writeln!(
        out,
        "<tr class=\"total\"><td>total</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td></td><td></td></tr>\n</table>",
        seconds(wall),
        seconds(cpu)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use data::ClusterMember;

    fn sample_data() -> ReportData {
        ReportData {
            outcome: vec![Count { label: "kept", value: Section::Ready(7) }],
            summary: vec![
                Count { label: "documents", value: Section::Ready(1234) },
                Count { label: "revisits", value: Section::NotRun { table: "revisits" } },
            ],
            quality: Section::Ready(vec![
                MethodQuality {
                    method: "a0".into(),
                    pairs_found: 10,
                    pairs_judged: 10,
                    pairs_verified: 5,
                    precision: Some(0.5),
                    precision_interval: Some((0.237, 0.763)),
                    recall: Some(1.0),
                    f1: Some(2.0 / 3.0),
                },
                MethodQuality {
                    method: "a7".into(),
                    pairs_found: 0,
                    pairs_judged: 0,
                    pairs_verified: 0,
                    precision: None,
                    precision_interval: None,
                    recall: Some(0.0),
                    f1: None,
                },
            ]),
            overlap: Section::Ready(Overlap { methods: vec!["a0".into()], dice: vec![vec![Some(1.0)]] }),
            clusters: Section::Ready(vec![ClusterSample {
                cluster_id: 42,
                size: 2,
                members: vec![
                    ClusterMember {
                        url: "http://e.example/?a=1&b=<2>".into(),
                        title: "Tom & \"Jerry\" <script>alert('x')</script>".into(),
                        is_representative: true,
                        similarity_to_representative: None,
                    },
                    ClusterMember {
                        url: "http://e.example/copy".into(),
                        title: String::new(),
                        is_representative: false,
                        similarity_to_representative: Some(0.912),
                    },
                ],
            }]),
            exact_copies: Section::Ready(ExactCopies {
                groups: vec![data::ExactGroup {
                    documents: 1200,
                    distinct_urls: 1199,
                    first_url: "http://e.example/a?x=<1>".into(),
                }],
                parameters: vec![("sid".into(), 1150), ("utm_source".into(), 49)],
            }),
            rejects: Section::Unreadable("broken <file>".into()),
            repeats: Section::Ready(Repeats {
                crawls: vec![
                    data::CrawlRepeats {
                        crawl: "2026-11-01".into(),
                        repeating_documents: 3,
                        repeated_pages: 2,
                        mean_similarity: Some(0.95),
                        kept: 2,
                        marked: 0,
                    },
                    data::CrawlRepeats { crawl: "2026-11-02".into(), kept: 0, marked: 3, ..Default::default() },
                ],
                documents: 3,
                examples: vec![data::RepeatExample {
                    url: "http://e.example/new".into(),
                    earlier_url: "http://e.example/old".into(),
                    earlier_crawl: "2026-11-01".into(),
                    similarity: 0.97,
                }],
            }),
            stages: vec![("ingest", None)],
        }
    }

    #[test]
    fn data_text_is_escaped_and_no_script_gets_in() {
        let html = page(&sample_data());
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("http://e.example/?a=1&amp;b=&lt;2&gt;"));
        assert!(html.contains("Tom &amp; &quot;Jerry&quot; &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"));
        assert!(html.contains("could not be read: broken &lt;file&gt;"));
        // The one link is the page's own, to the decisions table.
        assert!(!html.contains("src=") && html.matches("href=").count() == 1);
        assert!(html.contains("href=\"decisions/\""));
    }

    #[test]
    fn every_section_is_there_with_its_numbers() {
        let html = page(&sample_data());
        for id in ["outcome", "clusters", "copies", "summary", "quality", "overlap", "rejects", "repeats", "timings"] {
            assert_eq!(html.matches(&format!("<section id=\"{id}\">")).count(), 1, "section {id}");
        }
        assert!(html.contains("<span class=\"value\">1,234</span><span class=\"label\">documents</span>"));
        // The largest exact group, escaped, and the parameters that made its copies.
        assert!(html.contains(
            "<tr><td class=\"num\">1,200</td><td class=\"num\">1,199</td><td><span class=\"url\">http://e.example/a?x=&lt;1&gt;</span></td></tr>"
        ));
        assert!(html.contains("<code>sid</code> (1,150), <code>utm_source</code> (49)."));
        assert!(html.contains("<span class=\"value\">not run</span><span class=\"label\">revisits</span>"));
        // Pair-count row of a0: 10 found, all 10 judged, 5 verified, P 0.5
        // (exact), R 1, F1 2/3.
        assert!(html.contains(
            "<tr><td>a0 (MD5 of the whole text)</td><td class=\"num\">10</td><td class=\"num\">10</td><td class=\"num\">5</td><td class=\"num\">0.500</td><td class=\"num\">exact</td><td class=\"num\">1.000</td><td class=\"num\">0.667</td></tr>"
        ));
        // One bar per present value: a0's three and a7's recall of 0.
        assert_eq!(html.matches("<rect class=\"bar\"").count(), 4);
        assert_eq!(html.matches("<rect class=\"cell\"").count(), 1);
        assert!(html.contains("Without verified pairs (not in the map): a7."));
        assert!(html.contains("(0.912) <span class=\"url\">http://e.example/copy</span>"));
        assert!(html.contains("<tr><td>ingest</td><td colspan=\"4\" class=\"missing\">not run</td></tr>"));
        // Repeats: the night marks its 3 copies, the earlier crawl keeps 2.
        assert!(html.contains(
            "<tr><td>2026-11-01</td><td class=\"num\">3</td><td class=\"num\">2</td><td class=\"num\">0.950</td><td class=\"num\">2</td><td class=\"num\">0</td></tr>"
        ), "{html}");
        assert!(html.contains("<tr><td>2026-11-02</td><td class=\"num\">0</td><td class=\"num\">0</td><td class=\"num\">–</td><td class=\"num\">0</td><td class=\"num\">3</td></tr>"));
    }

    /// The evaluate stage's manifest recording `pool` as its pool.
    fn evaluate_manifest(pool: &[&str]) -> Manifest {
        serde_json::from_value(serde_json::json!({
            "stage": "evaluate", "program_version": "0", "fingerprint": "f", "inputs": {},
            "external_inputs": null, "config": {"pool_methods": pool}, "report": {"rows": {}, "counters": {},
            "input_errors": []}, "started_at_unix": 0, "wall_seconds": 1.0, "cpu_seconds": 1.0
        }))
        .unwrap()
    }

    #[test]
    fn the_study_figures_stand_beside_this_runs() {
        let mut data = sample_data();
        data.stages = vec![("evaluate", Some(evaluate_manifest(STUDY_POOL_METHODS)))];
        let html = page(&data);
        // a0: the study's 0.23 / 1.00 / 0.38 beside this run's 1 / 0.5 / 2/3.
        assert!(html.contains(
            "<tr><td>a0 (MD5 of the whole text)</td><td>Table 2</td><td class=\"num\">0.23</td><td class=\"num\">1.00</td><td class=\"num\">0.38</td><td class=\"num\">1.000</td><td class=\"num\">0.500</td><td class=\"num\">0.667</td></tr>"
        ), "{html}");
        // a4 leads the study's table; this run did not evaluate it.
        assert!(html.contains(
            "<tr><td>a4 (LongSent: the 2 longest sentences)</td><td>Table 2</td><td class=\"num\">0.84</td><td class=\"num\">0.80</td><td class=\"num\">0.82</td><td class=\"num\">not run</td>"
        ));
        assert!(html.contains("<tr><td>a12 (3+5: the 3 longest sentences and 5 longest words)</td><td>Table 7</td><td class=\"num\">0.96</td><td class=\"num\">0.95</td><td class=\"num\">0.95</td>"));
        // a7 ran but found nothing: no precision, recall 0.
        assert!(html.contains("<tr><td>a7 (LexRand: I-Match with extra random lexicons)</td><td>Table 2</td><td class=\"num\">0.50</td><td class=\"num\">0.97</td><td class=\"num\">0.66</td><td class=\"num\">0.000</td><td class=\"num\">–</td><td class=\"num\">–</td></tr>"));
        assert_eq!(html.matches("<td>Table 2</td>").count(), 11);
        assert!(html.contains(
            "pool of a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10 (<code>evaluate.pool = \"study\"</code>): the study's definition"
        ));
        data.stages = vec![("evaluate", Some(evaluate_manifest(&["a0", "a7", "slst"])))];
        assert!(page(&data).contains("Recall is relative to the pool of a0, a7, slst: not the study's pool"));
        data.stages = vec![("evaluate", None)];
        assert!(page(&data).contains("The pool's methods are not recorded"));
    }
}

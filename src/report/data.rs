//! What the report reads: the run's tables through SQL (DataFusion over the
//! output folder) and the stage manifests.
//!
//! Each part of the page is loaded on its own into a [`Section`]: a table
//! that a stage has not made yet gives [`Section::NotRun`] and a table that
//! cannot be read gives [`Section::Unreadable`], so a half-finished run still
//! gets a report of what is there. The SQL is short enough to read inline,
//! except the cluster sample (`jobs/report_clusters.sql`).

use anyhow::{Context, Result};
use arrow::array::{AsArray, RecordBatch};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Float64Type, Int64Type, UInt64Type};
use datafusion::prelude::SessionContext;
use std::future::Future;
use std::path::Path;

use crate::methods::registry;
use crate::tables::manifest::{finished_manifest, Manifest};
use crate::tables::sql::{session_over, substitute};
use crate::tables::write::table_exists;

/// Clusters listed in the report, largest first.
pub const LARGEST_CLUSTERS: usize = 10;
/// Member URLs shown per listed cluster.
pub const URLS_PER_CLUSTER: usize = 3;
/// Exact groups shown in the report, the largest first.
pub const LARGEST_EXACT_GROUPS: usize = 10;
/// URL parameters shown that make exact copies, the most frequent first.
pub const COPY_PARAMETERS: usize = 10;

/// One part of the report: its data, or why there is none.
#[derive(Debug)]
pub enum Section<T> {
    Ready(T),
    /// The table a stage makes is not in the output folder.
    NotRun {
        table: &'static str,
    },
    /// The table is there but the query failed (the message says why).
    Unreadable(String),
}

/// One number of the run summary.
#[derive(Debug)]
pub struct Count {
    pub label: &'static str,
    pub value: Section<i64>,
}

/// One row of `method_quality`.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodQuality {
    pub method: String,
    pub pairs_found: i64,
    /// Pairs verified to judge the method: all found, or a sample.
    pub pairs_judged: i64,
    pub pairs_verified: i64,
    pub precision: Option<f64>,
    /// The 95% interval of the precision.
    pub precision_interval: Option<(f64, f64)>,
    pub recall: Option<f64>,
    pub f1: Option<f64>,
}

/// `method_overlap` as a square matrix: `dice[row][column]` for `methods`
/// on both axes, `None` where the table has no row for the pair.
#[derive(Debug, Clone, PartialEq)]
pub struct Overlap {
    pub methods: Vec<String>,
    pub dice: Vec<Vec<Option<f64>>>,
}

/// One of the largest clusters with a few of its members.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterSample {
    pub cluster_id: u64,
    pub size: u64,
    pub members: Vec<ClusterMember>,
}

/// A listed member of a cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterMember {
    pub url: String,
    pub title: String,
    pub is_representative: bool,
    pub similarity_to_representative: Option<f64>,
}

/// Rejected records of one reason.
#[derive(Debug, Clone, PartialEq)]
pub struct RejectReason {
    pub reason: String,
    pub records: i64,
    /// The alphabetically first detail message, as an example.
    pub example: String,
}

/// The night's repeats of earlier crawls (`--history DIR`): per crawl of
/// `repeats` and `crawl_clusters`, and the closest repeats as examples.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Repeats {
    /// One row per crawl, earliest first.
    pub crawls: Vec<CrawlRepeats>,
    /// The night's documents that repeat a page of an earlier crawl.
    pub documents: i64,
    pub examples: Vec<RepeatExample>,
}

/// What one crawl has in the night's repeats and clusters across crawls.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CrawlRepeats {
    pub crawl: String,
    /// Night documents that repeat one of its pages (0 for the night).
    pub repeating_documents: i64,
    /// Its pages that a night document repeats.
    pub repeated_pages: i64,
    pub mean_similarity: Option<f64>,
    /// Its members of `crawl_clusters` that are kept, and marked.
    pub kept: i64,
    pub marked: i64,
}

/// One night document and the earlier page it repeats.
#[derive(Debug, Clone, PartialEq)]
pub struct RepeatExample {
    pub url: String,
    pub earlier_url: String,
    pub earlier_crawl: String,
    pub similarity: f64,
}

/// Examples of repeats listed in the report.
pub const REPEAT_EXAMPLES: usize = 10;

/// Where a crawl's exact copies come from (tables `exact_groups`,
/// `exact_copies`), for whoever runs the crawler.
#[derive(Debug, Clone, PartialEq)]
pub struct ExactCopies {
    /// The largest groups.
    pub groups: Vec<ExactGroup>,
    /// URL parameter names that a copy's URL has and its first's has not,
    /// with the number of copies that have one.
    pub parameters: Vec<(String, i64)>,
}

/// One exact group (a row of `exact_groups`).
#[derive(Debug, Clone, PartialEq)]
pub struct ExactGroup {
    pub documents: i64,
    pub distinct_urls: i64,
    pub first_url: String,
}

/// Everything the page shows.
#[derive(Debug)]
pub struct ReportData {
    /// The deduplication outcome, from `decisions`: what the run decided.
    pub outcome: Vec<Count>,
    pub summary: Vec<Count>,
    pub quality: Section<Vec<MethodQuality>>,
    pub overlap: Section<Overlap>,
    pub clusters: Section<Vec<ClusterSample>>,
    pub exact_copies: Section<ExactCopies>,
    pub rejects: Section<Vec<RejectReason>>,
    pub repeats: Section<Repeats>,
    /// Every stage in run order with its manifest (a sharded stage's tasks
    /// merged), `None` when it never finished.
    pub stages: Vec<(&'static str, Option<Manifest>)>,
}

/// The deduplication outcome: label, table, counting query.
const OUTCOME: &[(&str, &str, &str)] = &[
    ("documents", "decisions", "SELECT COUNT(*) FROM decisions"),
    ("kept", "decisions", "SELECT COUNT(*) FROM decisions WHERE is_kept"),
    ("removed as exact duplicates", "decisions", "SELECT COUNT(*) FROM decisions WHERE reason = 'exact_duplicate'"),
    ("removed as near-duplicates", "decisions", "SELECT COUNT(*) FROM decisions WHERE reason = 'near_duplicate'"),
    (
        "removed as repeats of pages kept in earlier crawls (--history)",
        "decisions",
        "SELECT COUNT(*) FROM decisions WHERE reason = 'repeat'",
    ),
    ("clusters (one copy kept each)", "decisions", "SELECT COUNT(*) FROM decisions WHERE reason = 'kept'"),
    // What the dedup saves: the removed documents' HTML (their records'
    // payloads) and their text.
    (
        "bytes of HTML removed (the removed records' payloads)",
        "decisions",
        "SELECT CAST(COALESCE(SUM(d.raw_bytes), 0) AS BIGINT) FROM decisions x \
         JOIN documents d ON d.doc_id = x.doc_id WHERE NOT x.is_kept",
    ),
    (
        "characters of text removed",
        "decisions",
        "SELECT CAST(COALESCE(SUM(d.text_chars), 0) AS BIGINT) FROM decisions x \
         JOIN documents d ON d.doc_id = x.doc_id WHERE NOT x.is_kept",
    ),
    (
        "not content (kept, never deduplicated)",
        "decisions",
        "SELECT COUNT(*) FROM decisions WHERE reason = 'not_content'",
    ),
];

/// The run summary: label, the table it counts, and the counting query.
const SUMMARY: &[(&str, &str, &str)] = &[
    ("archive files", "ingest_files", "SELECT COUNT(*) FROM ingest_files"),
    ("documents", "documents", "SELECT COUNT(*) FROM documents"),
    ("revisits", "revisits", "SELECT COUNT(*) FROM revisits"),
    ("rejected records", "rejects", "SELECT COUNT(*) FROM rejects"),
    ("candidate edges", "candidates", "SELECT COUNT(*) FROM (SELECT DISTINCT doc_a, doc_b FROM candidates)"),
    ("verified comparisons", "duplicates", "SELECT COUNT(*) FROM duplicates WHERE verified"),
    ("clusters", "clusters", "SELECT COUNT(DISTINCT cluster_id) FROM clusters WHERE cluster_size > 1"),
    (
        "documents a dedup drops",
        "clusters",
        "SELECT COUNT(*) FROM clusters WHERE cluster_size > 1 AND NOT is_representative",
    ),
];

/// The cards of `list` (label, table, counting query), each "not run"
/// while its table is missing.
async fn counts(
    out: &Path,
    session: &SessionContext,
    list: &'static [(&'static str, &'static str, &'static str)],
) -> Vec<Count> {
    let mut counted = Vec::new();
    for (label, table, sql) in list {
        let value = section(out, &[*table], async move {
            integers(&rows(session, sql).await?, 0)?.first().copied().flatten().context("a count without a value")
        })
        .await;
        counted.push(Count { label, value });
    }
    counted
}

/// Reads everything the report shows from the output folder `out`.
pub async fn load(out: &Path) -> Result<ReportData> {
    let session = session_over(out).await?;
    let s = &session;
    let outcome = counts(out, s, OUTCOME).await;
    let summary = counts(out, s, SUMMARY).await;
    Ok(ReportData {
        outcome,
        summary,
        quality: section(out, &["method_quality"], method_quality(s)).await,
        overlap: section(out, &["method_overlap"], method_overlap(s)).await,
        clusters: section(out, &["clusters", "documents"], largest_clusters(s)).await,
        exact_copies: section(out, &["exact_groups", "exact_copies", "documents"], exact_copies(s)).await,
        rejects: section(out, &["rejects"], reject_reasons(s)).await,
        repeats: section(out, &["repeats", "crawl_clusters"], repeats(s)).await,
        stages: crate::stages::all().iter().map(|stage| (stage.name(), finished_manifest(out, stage.name()))).collect(),
    })
}

/// Runs `load` when every table in `needs` exists; a failure becomes
/// [`Section::Unreadable`] (and a warning), never an error of the report.
async fn section<T>(out: &Path, needs: &[&'static str], load: impl Future<Output = Result<T>>) -> Section<T> {
    if let Some(table) = needs.iter().find(|t| !table_exists(out, t)) {
        return Section::NotRun { table };
    }
    match load.await {
        Ok(data) => Section::Ready(data),
        Err(e) => {
            tracing::warn!("report: cannot read {}: {e:#}", needs.join(", "));
            Section::Unreadable(format!("{e:#}"))
        }
    }
}

/// `method_quality` in report order (see [`method_order`]).
async fn method_quality(session: &SessionContext) -> Result<Vec<MethodQuality>> {
    let sql = "SELECT method, pairs_found, pairs_judged, pairs_verified, precision, precision_low, precision_high, \
               recall, f1 FROM method_quality";
    let batches = rows(session, sql).await?;
    let methods = texts(&batches, 0)?;
    let (found, judged, verified) = (integers(&batches, 1)?, integers(&batches, 2)?, integers(&batches, 3)?);
    let (precision, low, high) = (floats(&batches, 4)?, floats(&batches, 5)?, floats(&batches, 6)?);
    let (recall, f1) = (floats(&batches, 7)?, floats(&batches, 8)?);
    let mut quality: Vec<MethodQuality> = (0..methods.len())
        .map(|i| MethodQuality {
            method: methods[i].clone().unwrap_or_default(),
            pairs_found: found[i].unwrap_or(0),
            pairs_judged: judged[i].unwrap_or(0),
            pairs_verified: verified[i].unwrap_or(0),
            precision: precision[i],
            precision_interval: low[i].zip(high[i]),
            recall: recall[i],
            f1: f1[i],
        })
        .collect();
    quality.sort_by(|a, b| method_order(&a.method, &b.method));
    Ok(quality)
}

/// `method_overlap` as a matrix over the methods it names, in report order.
async fn method_overlap(session: &SessionContext) -> Result<Overlap> {
    let batches = rows(session, "SELECT method_a, method_b, dice FROM method_overlap").await?;
    let (a, b, dice) = (texts(&batches, 0)?, texts(&batches, 1)?, floats(&batches, 2)?);
    let mut methods: Vec<String> = a.iter().chain(&b).flatten().cloned().collect();
    methods.sort_by(|x, y| method_order(x, y));
    methods.dedup();
    let index = |m: &Option<String>| m.as_ref().and_then(|m| methods.iter().position(|x| x == m));
    let mut matrix = vec![vec![None; methods.len()]; methods.len()];
    for i in 0..dice.len() {
        if let (Some(row), Some(column)) = (index(&a[i]), index(&b[i])) {
            matrix[row][column] = dice[i];
        }
    }
    Ok(Overlap { methods, dice: matrix })
}

/// The largest clusters with sample members (`jobs/report_clusters.sql`).
async fn largest_clusters(session: &SessionContext) -> Result<Vec<ClusterSample>> {
    let sql = substitute(
        include_str!("../../jobs/report_clusters.sql"),
        &[("clusters", LARGEST_CLUSTERS.to_string()), ("urls_per_cluster", URLS_PER_CLUSTER.to_string())],
    );
    let batches = rows(session, &sql).await?;
    let (ids, sizes, kept) = (unsigned(&batches, 0)?, unsigned(&batches, 1)?, integers(&batches, 2)?);
    let (similarity, urls, titles) = (floats(&batches, 3)?, texts(&batches, 4)?, texts(&batches, 5)?);
    let mut clusters: Vec<ClusterSample> = Vec::new();
    for i in 0..ids.len() {
        let cluster_id = ids[i].context("a cluster without an id")?;
        let member = ClusterMember {
            url: urls[i].clone().unwrap_or_default(),
            title: titles[i].clone().unwrap_or_default(),
            is_representative: kept[i] == Some(1),
            similarity_to_representative: similarity[i],
        };
        match clusters.last_mut() {
            Some(last) if last.cluster_id == cluster_id => last.members.push(member),
            _ => clusters.push(ClusterSample { cluster_id, size: sizes[i].unwrap_or(0), members: vec![member] }),
        }
    }
    Ok(clusters)
}

/// The largest exact groups and the URL parameters that make copies
/// (`jobs/report_copy_parameters.sql`).
async fn exact_copies(session: &SessionContext) -> Result<ExactCopies> {
    let sql = format!(
        "SELECT documents, distinct_urls, first_url FROM exact_groups \
         ORDER BY documents DESC, first_doc_id LIMIT {LARGEST_EXACT_GROUPS}"
    );
    let batches = rows(session, &sql).await?;
    let (documents, urls, first) = (integers(&batches, 0)?, integers(&batches, 1)?, texts(&batches, 2)?);
    let groups = (0..documents.len())
        .map(|i| ExactGroup {
            documents: documents[i].unwrap_or(0),
            distinct_urls: urls[i].unwrap_or(0),
            first_url: first[i].clone().unwrap_or_default(),
        })
        .collect();
    let sql = substitute(
        include_str!("../../jobs/report_copy_parameters.sql"),
        &[("parameters", COPY_PARAMETERS.to_string())],
    );
    let batches = rows(session, &sql).await?;
    let (names, copies) = (texts(&batches, 0)?, integers(&batches, 1)?);
    let parameters =
        names.into_iter().zip(copies).map(|(name, n)| (name.unwrap_or_default(), n.unwrap_or(0))).collect();
    Ok(ExactCopies { groups, parameters })
}

/// Rejected records per reason, most frequent first.
async fn reject_reasons(session: &SessionContext) -> Result<Vec<RejectReason>> {
    let batches = rows(
        session,
        "SELECT reason, COUNT(*) AS records, MIN(detail) AS example FROM rejects GROUP BY reason ORDER BY records DESC, reason",
    )
    .await?;
    let (reasons, records, examples) = (texts(&batches, 0)?, integers(&batches, 1)?, texts(&batches, 2)?);
    Ok((0..reasons.len())
        .map(|i| RejectReason {
            reason: reasons[i].clone().unwrap_or_default(),
            records: records[i].unwrap_or(0),
            example: examples[i].clone().unwrap_or_default(),
        })
        .collect())
}

/// The night's repeats per crawl and the closest ones.
async fn repeats(session: &SessionContext) -> Result<Repeats> {
    let sql = "SELECT crawl, SUM(repeating), SUM(repeated), AVG(similarity), SUM(kept), SUM(marked) FROM ( \
                 SELECT earlier_crawl AS crawl, COUNT(DISTINCT doc_id) AS repeating, \
                        COUNT(DISTINCT earlier_doc_id) AS repeated, AVG(similarity) AS similarity, \
                        0 AS kept, 0 AS marked \
                 FROM repeats GROUP BY earlier_crawl \
                 UNION ALL \
                 SELECT crawl, 0, 0, CAST(NULL AS DOUBLE), \
                        SUM(CASE WHEN is_kept THEN 1 ELSE 0 END), SUM(CASE WHEN is_duplicate THEN 1 ELSE 0 END) \
                 FROM crawl_clusters GROUP BY crawl) \
               GROUP BY crawl ORDER BY crawl";
    let batches = rows(session, sql).await?;
    let (crawl, repeating, repeated) = (texts(&batches, 0)?, integers(&batches, 1)?, integers(&batches, 2)?);
    let (similarity, kept, marked) = (floats(&batches, 3)?, integers(&batches, 4)?, integers(&batches, 5)?);
    let crawls = (0..crawl.len())
        .map(|i| CrawlRepeats {
            crawl: crawl[i].clone().unwrap_or_default(),
            repeating_documents: repeating[i].unwrap_or(0),
            repeated_pages: repeated[i].unwrap_or(0),
            mean_similarity: similarity[i],
            kept: kept[i].unwrap_or(0),
            marked: marked[i].unwrap_or(0),
        })
        .collect();
    let documents = integers(&rows(session, "SELECT COUNT(DISTINCT doc_id) FROM repeats").await?, 0)?
        .first()
        .copied()
        .flatten()
        .unwrap_or(0);
    let sql = format!(
        "SELECT url, earlier_url, earlier_crawl, similarity FROM repeats \
         ORDER BY similarity DESC, doc_id, earlier_crawl, earlier_doc_id LIMIT {REPEAT_EXAMPLES}"
    );
    let batches = rows(session, &sql).await?;
    let (url, earlier_url, earlier_crawl) = (texts(&batches, 0)?, texts(&batches, 1)?, texts(&batches, 2)?);
    let similarity = floats(&batches, 3)?;
    let examples = (0..url.len())
        .map(|i| RepeatExample {
            url: url[i].clone().unwrap_or_default(),
            earlier_url: earlier_url[i].clone().unwrap_or_default(),
            earlier_crawl: earlier_crawl[i].clone().unwrap_or_default(),
            similarity: similarity[i].unwrap_or(0.0),
        })
        .collect();
    Ok(Repeats { crawls, documents, examples })
}

/// Report order of method ids: the order of [`registry::ids`] (the study's
/// tables), unknown ids after them by name.
pub fn method_order(a: &str, b: &str) -> std::cmp::Ordering {
    let rank = |m: &str| registry::ids().iter().position(|x| *x == m).unwrap_or(registry::ids().len());
    rank(a).cmp(&rank(b)).then_with(|| a.cmp(b))
}

/// Every batch of a query's result.
async fn rows(session: &SessionContext, sql: &str) -> Result<Vec<RecordBatch>> {
    session.sql(sql).await.with_context(|| format!("report query: {sql}"))?.collect().await.map_err(Into::into)
}

/// Column `index` of every batch, cast to `to` (so the report does not
/// depend on whether a count is Int64 or UInt64).
fn column_as(batches: &[RecordBatch], index: usize, to: &DataType) -> Result<Vec<arrow::array::ArrayRef>> {
    batches.iter().map(|b| cast(b.column(index), to).context("report column of an unexpected type")).collect()
}

/// Column `index` as text.
fn texts(batches: &[RecordBatch], index: usize) -> Result<Vec<Option<String>>> {
    Ok(column_as(batches, index, &DataType::Utf8)?
        .iter()
        .flat_map(|a| a.as_string::<i32>().iter().map(|v| v.map(str::to_string)).collect::<Vec<_>>())
        .collect())
}

/// Column `index` as 64-bit integers (booleans become 0 and 1).
fn integers(batches: &[RecordBatch], index: usize) -> Result<Vec<Option<i64>>> {
    Ok(column_as(batches, index, &DataType::Int64)?
        .iter()
        .flat_map(|a| a.as_primitive::<Int64Type>().iter().collect::<Vec<_>>())
        .collect())
}

/// Column `index` as unsigned 64-bit integers: document and cluster ids
/// are hashes that use all 64 bits (a cast to Int64 would lose half of them).
fn unsigned(batches: &[RecordBatch], index: usize) -> Result<Vec<Option<u64>>> {
    Ok(column_as(batches, index, &DataType::UInt64)?
        .iter()
        .flat_map(|a| a.as_primitive::<UInt64Type>().iter().collect::<Vec<_>>())
        .collect())
}

/// Column `index` as floats.
fn floats(batches: &[RecordBatch], index: usize) -> Result<Vec<Option<f64>>> {
    Ok(column_as(batches, index, &DataType::Float64)?
        .iter()
        .flat_map(|a| a.as_primitive::<Float64Type>().iter().collect::<Vec<_>>())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{ArrayRef, BooleanArray, Float64Array, Int64Array, StringArray, UInt16Array, UInt64Array};
    use std::sync::Arc;

    use crate::tables::write::TableWriter;

    fn temp_out(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("neardup-report-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn write(out: &Path, table: &str, columns: Vec<ArrayRef>) {
        let schema = crate::tables::schema::arrow_schema(table);
        let mut writer = TableWriter::create(out, table, schema.clone()).unwrap();
        writer.write(&RecordBatch::try_new(schema, columns).unwrap()).unwrap();
        writer.commit().unwrap();
    }

    fn strings(values: &[&str]) -> ArrayRef {
        Arc::new(StringArray::from(values.to_vec()))
    }

    fn load_blocking(out: &Path) -> ReportData {
        tokio::runtime::Runtime::new().unwrap().block_on(load(out)).unwrap()
    }

    #[test]
    fn an_empty_folder_gives_not_run_everywhere() {
        let out = temp_out("empty");
        let data = load_blocking(&out);
        assert_eq!(data.summary.len(), SUMMARY.len());
        assert!(data.summary.iter().all(|c| matches!(c.value, Section::NotRun { .. })));
        assert!(matches!(data.quality, Section::NotRun { table: "method_quality" }));
        assert!(matches!(data.overlap, Section::NotRun { table: "method_overlap" }));
        assert!(matches!(data.clusters, Section::NotRun { table: "clusters" }));
        assert!(matches!(data.rejects, Section::NotRun { table: "rejects" }));
        assert_eq!(data.stages.len(), crate::stages::all().len());
        assert!(data.stages.iter().all(|(_, m)| m.is_none()));
        let _ = std::fs::remove_dir_all(&out);
    }

    #[test]
    fn tables_are_read_grouped_and_ordered() {
        let out = temp_out("tables");
        // Cluster BIG: documents BIG (kept), 7, 9, 11; cluster 2: 2 (kept),
        // 3; document 20 alone. Listed: cluster BIG first (bigger) with its
        // representative and the two smallest other ids, then cluster 2. BIG
        // uses the top bit, as hashed ids do.
        const BIG: u64 = (1 << 63) + 5;
        write(
            &out,
            "clusters",
            vec![
                Arc::new(UInt64Array::from(vec![2, 3, BIG, 7, 9, 11, 20])),
                Arc::new(UInt64Array::from(vec![2, 2, BIG, BIG, BIG, BIG, 20])),
                Arc::new(UInt64Array::from(vec![2, 2, 4, 4, 4, 4, 1])),
                Arc::new(BooleanArray::from(vec![true, false, true, false, false, false, true])),
                Arc::new(Float64Array::from(vec![None, Some(0.9), None, Some(0.85), Some(1.0), Some(0.95), None])),
            ],
        );
        let ids = [2, 3, BIG, 7, 9, 11, 20];
        let n = ids.len();
        let urls: Vec<String> = ids.iter().map(|i| format!("http://x.example/{i}")).collect();
        write(
            &out,
            "documents",
            vec![
                Arc::new(UInt64Array::from(ids.to_vec())),
                Arc::new(StringArray::from(urls.clone())),
                strings(&vec!["a.warc.gz"; n]),
                Arc::new(UInt64Array::from(vec![0; n])),
                Arc::new(UInt64Array::from(vec![None::<u64>; n])),
                Arc::new(StringArray::from(vec![None::<&str>; n])),
                Arc::new(UInt16Array::from(vec![Some(200); n])),
                Arc::new(StringArray::from(vec![Some("text/html"); n])),
                strings(&vec!["utf-8"; n]),
                strings(&["two", "three", "<b>five</b>", "seven", "nine", "eleven", "twenty"]),
                strings(&vec!["en"; n]),
                strings(&vec!["some text"; n]),
                Arc::new(Int64Array::from(vec![9; n])),
                Arc::new(UInt64Array::from(vec![100; n])),
                strings(&vec!["sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"; n]),
                Arc::new(StringArray::from(vec![None::<&str>; n])),
                Arc::new(StringArray::from(urls.clone())),
                Arc::new(StringArray::from(vec![None::<&str>; n])),
            ],
        );
        write(
            &out,
            "rejects",
            vec![
                strings(&["a.warc.gz"; 3]),
                Arc::new(UInt64Array::from(vec![10, 20, 30])),
                strings(&["response"; 3]),
                Arc::new(StringArray::from(vec![None::<&str>; 3])),
                strings(&["truncated", "not_html", "not_html"]),
                strings(&["cut at 10", "image/png", "application/pdf"]),
            ],
        );
        write(
            &out,
            "method_quality",
            vec![
                strings(&["zz", "a10", "a2"]),
                Arc::new(Int64Array::from(vec![0, 4, 8])),
                Arc::new(Int64Array::from(vec![0, 4, 2])),
                Arc::new(Int64Array::from(vec![0, 3, 8])),
                Arc::new(Float64Array::from(vec![None, Some(0.75), Some(1.0)])),
                Arc::new(Float64Array::from(vec![None, Some(0.3), Some(0.34)])),
                Arc::new(Float64Array::from(vec![None, Some(0.95), Some(1.0)])),
                Arc::new(Float64Array::from(vec![Some(0.0), Some(0.375), Some(1.0)])),
                Arc::new(Float64Array::from(vec![None, Some(0.5), Some(1.0)])),
                Arc::new(BooleanArray::from(vec![true, true, false])),
            ],
        );
        write(
            &out,
            "method_overlap",
            vec![
                strings(&["a10", "a10", "a2", "a2"]),
                strings(&["a10", "a2", "a10", "a2"]),
                Arc::new(Int64Array::from(vec![3, 3, 3, 8])),
                Arc::new(Float64Array::from(vec![1.0, 6.0 / 11.0, 6.0 / 11.0, 1.0])),
            ],
        );
        let data = load_blocking(&out);
        let count = |label: &str| match &data.summary.iter().find(|c| c.label == label).unwrap().value {
            Section::Ready(n) => Some(*n),
            _ => None,
        };
        assert_eq!(count("documents"), Some(7));
        assert_eq!(count("rejected records"), Some(3));
        assert_eq!(count("clusters"), Some(2));
        assert_eq!(count("documents a dedup drops"), Some(4));
        assert_eq!(count("revisits"), None);

        let Section::Ready(clusters) = &data.clusters else { panic!("{:?}", data.clusters) };
        let listed: Vec<(u64, u64, Vec<&str>)> = clusters
            .iter()
            .map(|c| (c.cluster_id, c.size, c.members.iter().map(|m| m.url.as_str()).collect()))
            .collect();
        assert_eq!(
            listed,
            vec![
                (BIG, 4, vec!["http://x.example/9223372036854775813", "http://x.example/7", "http://x.example/9"]),
                (2, 2, vec!["http://x.example/2", "http://x.example/3"]),
            ]
        );
        let five = &clusters[0].members;
        assert!(five[0].is_representative && !five[1].is_representative);
        assert_eq!(five[0].title, "<b>five</b>");
        assert_eq!(five[1].similarity_to_representative, Some(0.85));

        let Section::Ready(rejects) = &data.rejects else { panic!("{:?}", data.rejects) };
        assert_eq!(
            rejects,
            &vec![
                RejectReason { reason: "not_html".into(), records: 2, example: "application/pdf".into() },
                RejectReason { reason: "truncated".into(), records: 1, example: "cut at 10".into() },
            ]
        );

        let Section::Ready(quality) = &data.quality else { panic!("{:?}", data.quality) };
        let order: Vec<&str> = quality.iter().map(|q| q.method.as_str()).collect();
        assert_eq!(order, vec!["a2", "a10", "zz"]);
        assert_eq!(quality[1].pairs_found, 4);
        assert_eq!((quality[0].pairs_judged, quality[0].precision_interval), (2, Some((0.34, 1.0))));
        assert_eq!(quality[1].f1, Some(0.5));
        assert_eq!(quality[2].precision, None);

        let Section::Ready(overlap) = &data.overlap else { panic!("{:?}", data.overlap) };
        assert_eq!(overlap.methods, vec!["a2", "a10"]);
        assert_eq!(overlap.dice, vec![vec![Some(1.0), Some(6.0 / 11.0)], vec![Some(6.0 / 11.0), Some(1.0)]]);
        let _ = std::fs::remove_dir_all(&out);
    }

    #[test]
    fn methods_follow_the_study_order_then_names() {
        let mut methods = vec!["slst", "b", "a10", "a1", "minhash", "a"];
        methods.sort_by(|a, b| method_order(a, b));
        assert_eq!(methods, vec!["a1", "a10", "minhash", "slst", "a", "b"]);
    }
}

//! End-to-end tests of the `pipeline` binary: the README's main command on
//! the bundled sample crawl, every table checked against its schema file,
//! the ingest accounting, determinism across thread counts, stage reruns,
//! the HTML report, and a run over all the real crawl files in
//! `../shared/data/warc`.

use arrow::array::{Array, AsArray};
use arrow::datatypes::UInt64Type;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::path::Path;

mod common;
use common::{canonical_rows, pipeline, read_table, run_ok, temp_dir};

fn rows(out: &Path, table: &str) -> usize {
    read_table(out, table).iter().map(|b| b.num_rows()).sum()
}

fn u64_column(out: &Path, table: &str, col: &str) -> Vec<u64> {
    read_table(out, table)
        .iter()
        .flat_map(|b| b.column_by_name(col).unwrap().as_primitive::<UInt64Type>().values().to_vec())
        .collect()
}

/// Checks every published table's Parquet schema against `schemas/`.
fn check_schemas(out: &Path) {
    for entry in std::fs::read_dir(out).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if !entry.path().is_dir() || name.starts_with('_') || name.starts_with('.') {
            continue;
        }
        let part = std::fs::read_dir(entry.path()).unwrap().next().expect("a part file").unwrap().path();
        let builder = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&part).unwrap()).unwrap();
        let diffs = neardup::tables::schema::schema_differences(&name, builder.schema());
        assert!(diffs.is_empty(), "{diffs:?}");
        // A column the schema writes without a dictionary has no dictionary
        // page, one without statistics has none (a list's values included).
        let def = neardup::tables::schema::table_def(&name);
        for chunk in builder.metadata().row_groups().iter().flat_map(|g| g.columns()) {
            let column = &chunk.column_path().parts()[0];
            let column_def = def.columns.iter().find(|c| &c.name == column).unwrap();
            assert!(
                column_def.dictionary || chunk.dictionary_page_offset().is_none(),
                "{name}.{column} has a dictionary page"
            );
            assert!(column_def.statistics || chunk.statistics().is_none(), "{name}.{column} has statistics");
        }
    }
}

/// The planted pairs of `sample-data/expected.json` (written by
/// `scripts/make_sample_data.py`) as the run found them: every two pages of
/// one article (mirrors, syndicated copies, edited versions) must end in
/// one cluster or as a verified comparison, and none of the unrelated pairs
/// may. Returns (planted pairs found, planted pairs).
fn check_planted_pairs(out: &Path) -> (usize, usize) {
    let expected: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/expected.json")).unwrap(),
    )
    .unwrap();
    let mut doc_of_url = std::collections::HashMap::new();
    for b in read_table(out, "documents") {
        let ids = b.column_by_name("doc_id").unwrap().as_primitive::<UInt64Type>();
        let urls = b.column_by_name("url").unwrap().as_string::<i32>();
        for i in 0..b.num_rows() {
            doc_of_url.insert(urls.value(i).to_string(), ids.value(i));
        }
    }
    let mut cluster_of = std::collections::HashMap::new();
    for b in read_table(out, "clusters") {
        let ids = b.column_by_name("doc_id").unwrap().as_primitive::<UInt64Type>();
        let clusters = b.column_by_name("cluster_id").unwrap().as_primitive::<UInt64Type>();
        for i in 0..b.num_rows() {
            cluster_of.insert(ids.value(i), clusters.value(i));
        }
    }
    let mut verified = std::collections::HashSet::new();
    for b in read_table(out, "duplicates") {
        let a = b.column_by_name("doc_a").unwrap().as_primitive::<UInt64Type>();
        let bb = b.column_by_name("doc_b").unwrap().as_primitive::<UInt64Type>();
        let v = b.column_by_name("verified").unwrap().as_boolean();
        for i in 0..b.num_rows() {
            if v.value(i) {
                verified.insert((a.value(i), bb.value(i)));
            }
        }
    }
    let (mut planted, mut found, mut missed) = (0, 0, Vec::new());
    for pair in expected["pairs"].as_array().unwrap() {
        let doc = |key: &str| doc_of_url[pair[key].as_str().unwrap()];
        let (a, b) = (doc("url_a").min(doc("url_b")), doc("url_a").max(doc("url_b")));
        let same_cluster = cluster_of.get(&a).is_some_and(|c| cluster_of.get(&b) == Some(c));
        let is_found = same_cluster || verified.contains(&(a, b));
        if pair["relation"] == "unrelated" {
            assert!(!is_found, "unrelated pair found: {pair}");
        } else {
            planted += 1;
            if is_found {
                found += 1;
            } else {
                missed.push(pair.clone());
            }
        }
    }
    assert!(missed.is_empty(), "{} of {planted} planted pairs missed: {missed:#?}", missed.len());
    (found, planted)
}

/// The page without its stage-timings section, whose wall and CPU seconds
/// differ from run to run.
fn without_timings(html: &str) -> String {
    let start = html.find("<section id=\"timings\">").expect("a timings section");
    let end = start + html[start..].find("</section>").expect("the end of the timings section");
    format!("{}{}", &html[..start], &html[end..])
}

/// What `run` must write as `report.html`: both charts, every method, the
/// document count, and nothing that runs code or loads from the network.
fn check_report(out: &Path) -> String {
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html after a run");
    assert!(html.contains("<svg") && html.contains(r#"aria-label="Precision, recall and F1 per method""#));
    assert!(html.contains(r#"aria-label="Dice overlap between methods""#));
    for method in neardup::methods::registry::ids() {
        let title = neardup::methods::registry::title(method);
        assert!(html.contains(&format!("<tr><td>{title}</td>")), "method {title} missing from the report");
    }
    let documents = format!(
        r#"<span class="value">{}</span><span class="label">documents</span>"#,
        grouped(rows(out, "documents"))
    );
    assert!(html.contains(&documents), "{documents}");
    // The one link is to the decisions table beside the page; nothing is
    // loaded.
    let lower = html.to_lowercase().replacen("href=\"decisions/\"", "", 1);
    assert!(!lower.contains("<script"));
    for attribute in ["src=", "href=", "url(http", "@import"] {
        assert!(!lower.contains(attribute), "report uses {attribute}");
    }
    html
}

/// `n` as the report shows it: 1153 → `1,153`.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The ingest accounting: per file, records = documents + revisits +
/// rejects + skipped, and the tables hold exactly those rows.
fn check_ingest_accounting(out: &Path) {
    let files = read_table(out, "ingest_files");
    let col = |name: &str| -> u64 {
        files
            .iter()
            .map(|b| b.column_by_name(name).unwrap().as_primitive::<UInt64Type>().values().iter().sum::<u64>())
            .sum()
    };
    for b in &files {
        let get = |n: &str| b.column_by_name(n).unwrap().as_primitive::<UInt64Type>().clone();
        let (r, d, v, j, s) = (get("records"), get("documents"), get("revisits"), get("rejects"), get("skipped"));
        for i in 0..b.num_rows() {
            assert_eq!(r.value(i), d.value(i) + v.value(i) + j.value(i) + s.value(i), "row {i} of ingest_files");
        }
    }
    assert_eq!(col("documents") as usize, rows(out, "documents"));
    assert_eq!(col("revisits") as usize, rows(out, "revisits"));
    assert_eq!(col("rejects") as usize, rows(out, "rejects"));
    let mut ids = u64_column(out, "documents", "doc_id");
    let n = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), n, "doc_id must be unique in documents");
}

/// One number from a SQL query over the run's tables (`pipeline query`).
fn query_number(out: &Path, sql: &str) -> u64 {
    let o = pipeline().args(["query", "--out", out.to_str().unwrap(), "--format", "csv", sql]).output().unwrap();
    assert!(o.status.success(), "{sql}: {}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let value = text.lines().nth(1).unwrap_or_else(|| panic!("{sql}: no row in {text:?}"));
    value.trim().parse().unwrap_or_else(|e| panic!("{sql}: {value:?}: {e}"))
}

/// The decisions: one per document; a removed document's `duplicate_of`
/// is a kept document it verified against (a `duplicates` row with its
/// similarity); nothing that is not content is clustered or removed, and
/// the reasons add up to the documents. Returns (kept, removed).
fn check_decisions(out: &Path) -> (u64, u64) {
    let n = |sql: &str| query_number(out, sql);
    assert_eq!(n("SELECT COUNT(*) FROM decisions"), n("SELECT COUNT(*) FROM documents"));
    assert_eq!(n("SELECT COUNT(DISTINCT doc_id) FROM decisions"), n("SELECT COUNT(*) FROM documents"));
    let removed = n("SELECT COUNT(*) FROM decisions WHERE NOT is_kept");
    assert_eq!(removed, n("SELECT COUNT(*) FROM decisions WHERE reason IN ('exact_duplicate', 'near_duplicate')"));
    // Every removed document names a kept one and verified against it,
    // or is an exact copy of a document that did (similarity 1 when that
    // document is the kept one).
    assert_eq!(
        n("SELECT COUNT(*) FROM decisions r JOIN decisions k ON k.doc_id = r.duplicate_of \
           LEFT JOIN duplicates d ON d.doc_a = LEAST(COALESCE(r.exact_copy_of, r.doc_id), k.doc_id) \
                                 AND d.doc_b = GREATEST(COALESCE(r.exact_copy_of, r.doc_id), k.doc_id) \
           WHERE NOT r.is_kept AND k.is_kept AND k.reason = 'kept' \
             AND (d.similarity = r.similarity OR (r.exact_copy_of = k.doc_id AND r.similarity = 1))"),
        removed
    );
    // Not content: never clustered, counted per file as it is in documents.
    assert_eq!(
        n("SELECT COUNT(*) FROM clusters c JOIN documents d ON d.doc_id = c.doc_id \
           WHERE d.not_content IS NOT NULL OR d.http_status <> 200"),
        0
    );
    assert_eq!(
        n("SELECT COUNT(*) FROM decisions WHERE reason = 'not_content'"),
        n("SELECT COALESCE(SUM(not_content), 0) FROM ingest_files")
    );
    assert_eq!(
        n("SELECT COUNT(*) FROM decisions WHERE reason = 'not_content'"),
        n("SELECT COUNT(*) FROM documents WHERE not_content IS NOT NULL")
    );
    (n("SELECT COUNT(*) FROM decisions WHERE is_kept"), removed)
}

/// `df` (written by `jobs/df.sql`) against document and collection
/// frequencies counted here directly from the `tokens` lists of the
/// documents that are no exact copy, for every term; and `corpus_stats`
/// against the same lists.
fn check_df_against_tokens(out: &Path) {
    use std::collections::{BTreeMap, BTreeSet};
    let copies: BTreeSet<u64> = u64_column(out, "exact_copies", "doc_id").into_iter().collect();
    assert!(!copies.is_empty(), "the sample's mirrors are exact copies");
    let mut expected: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    let (mut docs, mut terms_total) = (0i64, 0i64);
    for b in read_table(out, "tokens") {
        let lists = b.column_by_name("terms").unwrap().as_list::<i32>();
        let ids = b.column_by_name("doc_id").unwrap().as_primitive::<arrow::datatypes::UInt64Type>();
        for i in (0..b.num_rows()).filter(|&i| !copies.contains(&ids.value(i))) {
            let list = lists.value(i);
            let terms = list.as_string::<i32>();
            docs += 1;
            terms_total += terms.len() as i64;
            let mut seen = BTreeSet::new();
            for t in terms.iter().flatten() {
                let e = expected.entry(t.to_string()).or_default();
                e.1 += 1;
                if seen.insert(t) {
                    e.0 += 1;
                }
            }
        }
    }
    let mut got: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for b in read_table(out, "df") {
        let t = b.column_by_name("term").unwrap().as_string::<i32>();
        let df = b.column_by_name("df").unwrap().as_primitive::<arrow::datatypes::Int64Type>();
        let cf = b.column_by_name("cf").unwrap().as_primitive::<arrow::datatypes::Int64Type>();
        for i in 0..b.num_rows() {
            got.insert(t.value(i).to_string(), (df.value(i), cf.value(i)));
        }
    }
    assert!(expected.len() > 500, "the sample should have a real vocabulary");
    assert_eq!(got, expected, "df/cf differ from counts over the tokens table");
    let stats = &read_table(out, "corpus_stats")[0];
    let n = stats.column_by_name("n_docs").unwrap().as_primitive::<arrow::datatypes::Int64Type>().value(0);
    let avg = stats.column_by_name("dl_avg").unwrap().as_primitive::<arrow::datatypes::Float64Type>().value(0);
    assert_eq!(n, docs);
    assert!((avg - terms_total as f64 / docs as f64).abs() < 1e-9);
}

#[test]
fn sample_data_all_stages_deterministic_and_schema_conformant() {
    let out1 = temp_dir("sample-1");
    let out2 = temp_dir("sample-2");
    run_ok(&["--quiet", "run", "--out", out1.to_str().unwrap(), "--threads", "2"]);
    // The second run also caps DataFusion's memory (sort-merge joins,
    // spilling): a memory limit may change how, never what.
    let limited = pipeline()
        .args(["run", "--out", out2.to_str().unwrap(), "--threads", "1", "--memory-limit", "64M"])
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&limited.stderr);
    assert!(limited.status.success(), "{log}");
    // Each stage's manifest has its peak resident memory, and a run whose
    // peak went above the limit says what the limit bounds.
    for stage in ["ingest", "tokens", "candidates", "verify", "decide"] {
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out2.join(format!("_manifests/{stage}.json"))).unwrap()).unwrap();
        let peak = manifest["peak_rss_bytes"].as_u64().unwrap_or_else(|| panic!("{stage}: {manifest}"));
        assert!(peak > 8 << 20 && peak < 8 << 30, "{stage}: {peak}");
    }
    assert!(log.contains("above the memory limit of 64.0 MiB: the limit bounds the data a stage holds"), "{log}");
    check_schemas(&out1);
    check_ingest_accounting(&out1);
    assert!(rows(&out1, "documents") > 100);
    for table in [
        "documents",
        "tokens",
        "exact_copies",
        "exact_groups",
        "df",
        "signatures",
        "descr_sample",
        "method_state",
        "sketches",
        "shingles",
        "a12_records",
        "search_keys",
        "search_forms",
        "search_links",
        "method_pairs",
        "candidates",
        "hot_signatures",
        "duplicates",
        "failed_pairs",
        "clusters",
        "decisions",
        "method_quality",
        "method_overlap",
    ] {
        assert_eq!(
            read_table(&out1, table),
            read_table(&out2, table),
            "table {table} differs between 2 threads and 1 thread with a memory limit"
        );
    }
    // The SQL steps' own tables (candidates', and the SpotSigs and SL+ST
    // pairs each search_groups task links) hold the same rows, in the
    // order the engine's partitions wrote them.
    for table in ["signature_chains", "a11_chains", "a11_pairs", "method_edges", "search_key_links"] {
        assert_eq!(
            canonical_rows(&out1, table),
            canonical_rows(&out2, table),
            "table {table} has other rows with 2 threads than with 1 thread and a memory limit"
        );
    }
    check_df_against_tokens(&out1);
    check_planted_pairs(&out1);
    let (kept, removed) = check_decisions(&out1);
    assert!(kept > 0 && removed > 0, "kept {kept}, removed {removed}");
    // The canonical copy is kept, never its newsletter link.
    assert_eq!(
        query_number(
            &out1,
            "SELECT COUNT(*) FROM decisions WHERE is_kept AND reason = 'kept' AND url LIKE '%utm_source%'"
        ),
        0
    );
    // Every method has a quality row.
    assert_eq!(rows(&out1, "method_quality"), neardup::methods::registry::ids().len());
    // The report is written by `run` and, timings aside, the same for both runs.
    let report = check_report(&out1);
    assert_eq!(without_timings(&report), without_timings(&check_report(&out2)));
    // A second run skips every stage (manifests match) and changes nothing,
    // the report included (its timings come from the unchanged manifests).
    let before = std::fs::read_to_string(out1.join("_manifests/verify.json")).unwrap();
    run_ok(&["--quiet", "run", "--out", out1.to_str().unwrap()]);
    assert_eq!(before, std::fs::read_to_string(out1.join("_manifests/verify.json")).unwrap());
    assert_eq!(report, std::fs::read_to_string(out1.join("report.html")).unwrap());
    // `pipeline report` alone writes the same page.
    std::fs::remove_file(out1.join("report.html")).unwrap();
    run_ok(&["--quiet", "report", "--out", out1.to_str().unwrap()]);
    assert_eq!(report, std::fs::read_to_string(out1.join("report.html")).unwrap());
    // Analysts' entry point.
    let q = pipeline()
        .args(["query", "--out", out1.to_str().unwrap(), "--format", "csv", "SELECT COUNT(*) AS n FROM documents"])
        .output()
        .unwrap();
    assert!(q.status.success());
    assert_eq!(String::from_utf8_lossy(&q.stdout).trim(), format!("n\n{}", rows(&out1, "documents")));
    let _ = std::fs::remove_dir_all(&out1);
    let _ = std::fs::remove_dir_all(&out2);
}

#[test]
fn a_stage_alone_names_its_missing_input_table() {
    let out = temp_dir("missing");
    let o =
        pipeline().args(["--quiet", "run", "--stage", "signatures", "--out", out.to_str().unwrap()]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("`tokens`") && err.contains("--stage tokens"), "{err}");
    let o = pipeline().args(["--quiet", "run", "--stage", "nonsense"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_bad_memory_limit_is_a_usage_error() {
    for bad in ["0", "2X", "lots"] {
        let o = pipeline().args(["--quiet", "run", "--memory-limit", bad, "--out", "/nonexistent"]).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "--memory-limit {bad}");
    }
}

#[test]
fn report_of_a_folder_without_tables_says_not_run() {
    let out = temp_dir("report-empty");
    std::fs::create_dir_all(&out).unwrap();
    run_ok(&["--quiet", "report", "--out", out.to_str().unwrap()]);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for table in ["method_quality", "method_overlap", "clusters", "rejects"] {
        assert!(html.contains(&format!("not run (no table <code>{table}</code> yet)")), "{table}");
    }
    let o = pipeline().args(["--quiet", "report", "--out", out.join("nowhere").to_str().unwrap()]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn real_crawl_files_all_stages() {
    // Exit 0, or 3 when a file could not be read at all; never a crash.
    let Some((out, _)) = common::shared_real_run() else { return };
    check_schemas(&out);
    check_ingest_accounting(&out);
    assert!(rows(&out, "documents") > 500);
    assert!(rows(&out, "revisits") > 100);
    assert!(rows(&out, "duplicates") > 0);
    let (_, removed) = check_decisions(&out);
    assert!(removed > 0);
    // The crawl's error pages and redirects are not content.
    assert!(query_number(&out, "SELECT COUNT(*) FROM documents WHERE not_content LIKE 'http status 404'") > 50);
    check_report(&out);
}

//! The history folder (`--history DIR`, `pipeline history`): a run is
//! appended as a crawl whole, rerunning a crawl replaces it, `compact`
//! keeps every row, `drop` removes a crawl, and what an interrupted append
//! leaves is never listed.

mod common;

use common::{canonical_rows, pipeline, run_ok, temp_dir};
use neardup::config::Config;
use neardup::history::{CrawlManifest, History};
use neardup::methods::splitmix64;
use neardup::tables::columns::{history_candidates, signatures};
use neardup::tables::write::{TableOutput, TableWriter};
use neardup::verify::settings::VerificationText;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// `pipeline history --history DIR list`, one line per crawl.
fn list(history: &Path) -> Vec<String> {
    let o = pipeline().args(["history", "--history", history.to_str().unwrap(), "list"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap().lines().map(String::from).collect()
}

fn partition(history: &Path, table: &str, crawl: &str) -> std::path::PathBuf {
    history.join(table).join(format!("crawl={crawl}"))
}

#[test]
fn crawls_are_appended_whole_replaced_on_rerun_compacted_and_dropped() {
    let dir = temp_dir("history");
    let (out, history) = (dir.join("out"), dir.join("history"));
    let (out_s, history_s) = (out.to_str().unwrap(), history.to_str().unwrap());
    run_ok(&[
        "run",
        "-q",
        "--methods",
        "a0,minhash,a11",
        "--out",
        out_s,
        "--history",
        history_s,
        "--crawl-id",
        "night1",
    ]);

    // The crawl holds the run's documents with their verification text, and
    // its signatures and record tables as written.
    let lines = list(&history);
    assert_eq!(lines.len(), 1, "{lines:?}");
    let documents = canonical_rows(&out, "documents").len();
    assert!(documents > 100, "{documents} documents in the sample crawl");
    assert!(lines[0].starts_with("night1\t\"visible\"\t"), "{}", lines[0]);
    assert!(lines[0].contains(&format!("history_documents={documents} ")), "{}", lines[0]);
    let kept = partition(&history, "history_documents", "night1");
    assert_eq!(canonical_rows(kept.parent().unwrap(), "crawl=night1").len(), documents);
    for table in ["signatures", "sketches", "shingles", "a12_records"] {
        let part = partition(&history, table, "night1");
        assert_eq!(canonical_rows(part.parent().unwrap(), "crawl=night1"), canonical_rows(&out, table), "{table}");
    }
    // The kept text is the visible text verification compares.
    let texts: Vec<String> = canonical_rows(kept.parent().unwrap(), "crawl=night1")
        .iter()
        .map(|row| row.rsplit(" | ").next().unwrap().to_string())
        .collect();
    let mut visible: Vec<String> = common::read_table(&out, "tokens")
        .iter()
        .flat_map(|b| {
            let text = b.column_by_name("text").unwrap().as_any().downcast_ref::<arrow::array::StringArray>().unwrap();
            (0..b.num_rows()).map(|i| text.value(i).to_string()).collect::<Vec<_>>()
        })
        .collect();
    let mut texts_sorted = texts.clone();
    texts_sorted.sort();
    visible.sort();
    assert_eq!(texts_sorted, visible);

    // Rerunning the night replaces its crawl: one crawl, the same rows.
    let before = canonical_rows(&history.join("signatures"), "crawl=night1");
    run_ok(&["history", "--history", history_s, "append", "--out", out_s, "--crawl-id", "night1"]);
    assert_eq!(list(&history), lines);
    assert_eq!(canonical_rows(&history.join("signatures"), "crawl=night1"), before);

    // A second night; then what an interrupted append would leave: a
    // partition without a manifest and a staging folder. Neither is listed.
    run_ok(&["history", "--history", history_s, "append", "--out", out_s, "--crawl-id", "night2"]);
    let ghost = partition(&history, "signatures", "ghost");
    std::fs::create_dir_all(&ghost).unwrap();
    std::fs::create_dir_all(history.join(".staging-ghost-1")).unwrap();
    let night2 = partition(&history, "signatures", "night2");
    let first_part = std::fs::read_dir(&night2).unwrap().next().unwrap().unwrap().path();
    std::fs::copy(&first_part, ghost.join("part-0.parquet")).unwrap();
    // A second part file in night2, listed in its manifest, so compaction
    // has something to merge ...
    std::fs::copy(&first_part, night2.join("part-9-extra.parquet")).unwrap();
    let manifest_path = history.join("_crawls/night2.json");
    let mut manifest: CrawlManifest = serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    manifest.objects.get_mut("signatures").unwrap().push("part-9-extra.parquet".into());
    std::fs::write(&manifest_path, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let doubled = canonical_rows(&history.join("signatures"), "crawl=night2");
    assert_eq!(doubled.len(), 2 * before.len());
    // ... and one it does not list, the leftover of an interrupted
    // compaction, which goes.
    let leftover = night2.join("part-compacted.parquet");
    std::fs::copy(&first_part, &leftover).unwrap();
    let names: Vec<String> = list(&history).iter().map(|l| l.split('\t').next().unwrap().to_string()).collect();
    assert_eq!(names, ["night1", "night2"]);

    // The same pages as a third night: each finds itself in both earlier
    // crawls (a0, the exact text hash), and only there.
    run_ok(&["history", "--history", history_s, "match", "--out", out_s, "--crawl-id", "night3"]);
    // The match ran as the history's three stages: `status` with the
    // run's history sees them up to date, and a second match skips them.
    let history_states = || -> BTreeMap<String, String> {
        let o = pipeline()
            .args(["status", "--out", out_s, "--methods", "a0,minhash,a11", "--format", "json"])
            .args(["--history", history_s, "--crawl-id", "night3"])
            .output()
            .unwrap();
        String::from_utf8(o.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|l| l["stage"].as_str().unwrap().starts_with("history_"))
            .map(|l| (l["stage"].as_str().unwrap().to_string(), l["state"].as_str().unwrap().to_string()))
            .collect()
    };
    let up_to_date: BTreeMap<String, String> = ["history_candidates", "history_clusters", "history_verify"]
        .iter()
        .map(|s| (s.to_string(), "up_to_date".to_string()))
        .collect();
    assert_eq!(history_states(), up_to_date);
    let manifest = out.join("_manifests/history_verify.json");
    let written = std::fs::read(&manifest).unwrap();
    run_ok(&["history", "--history", history_s, "match", "--out", out_s, "--crawl-id", "night3"]);
    assert_eq!(std::fs::read(&manifest).unwrap(), written, "an up-to-date match runs again");
    // Verified: each page repeats itself in both crawls, identical.
    let o = pipeline()
        .args(["query", "--out", out_s, "--format", "csv"])
        .arg(
            "SELECT earlier_crawl, COUNT(*) AS pairs, SUM(CASE WHEN doc_id = earlier_doc_id AND url = earlier_url \
             AND similarity = 1.0 THEN 1 ELSE 0 END) AS itself, MIN(similarity) >= 0.8 AS above \
             FROM repeats GROUP BY earlier_crawl ORDER BY earlier_crawl",
        )
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let verified = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = verified.lines().collect();
    assert_eq!(lines.len(), 3, "{verified}");
    for (line, crawl) in lines[1..].iter().zip(["night1", "night2"]) {
        let fields: Vec<&str> = line.split(',').collect();
        assert_eq!(fields[0], crawl);
        let (pairs, itself): (usize, usize) = (fields[1].parse().unwrap(), fields[2].parse().unwrap());
        assert!(itself >= documents * 9 / 10 && pairs >= itself, "{verified}");
        assert_eq!(fields[3], "true", "{verified}");
    }
    let o = pipeline()
        .args(["query", "--out", out_s, "--format", "csv"])
        .arg(
            "SELECT earlier_crawl, COUNT(DISTINCT doc_id) AS docs, \
             SUM(CASE WHEN doc_id = earlier_doc_id THEN 1 ELSE 0 END) AS itself \
             FROM history_candidates WHERE method = 'a0' GROUP BY earlier_crawl ORDER BY earlier_crawl",
        )
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let a0_documents = canonical_rows(&out, "signatures").iter().filter(|r| r.starts_with("a0 |")).count();
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        format!(
            "earlier_crawl,docs,itself\nnight1,{a0_documents},{a0_documents}\nnight2,{a0_documents},{a0_documents}\n"
        )
    );

    // `explain` names the earlier pages a document repeats, and their crawl.
    let url = canonical_rows(&out, "documents")[0].split(" | ").nth(1).unwrap().to_string();
    let o = pipeline().args(["explain", "--out", out_s, &url]).output().unwrap();
    let explained = String::from_utf8(o.stdout).unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for crawl in ["night1", "night2"] {
        let line = format!("  repeats {url} (document ");
        assert!(
            explained
                .lines()
                .any(|l| l.starts_with(&line) && l.contains(&format!("of crawl {crawl}: similarity 1.0000"))),
            "{explained}"
        );
    }
    // ... and that the copy of the earliest crawl is kept, this one marked.
    assert!(
        explained.lines().any(|l| l.contains("pages across crawls: the copy kept is")
            && l.ends_with("of crawl night1; this one is marked duplicate")),
        "{explained}"
    );

    // Analysts query the history with the crawl of each row.
    let o = pipeline()
        .args(["query", "--out", out_s, "--history", history_s, "--format", "csv"])
        .arg("SELECT crawl, COUNT(*) AS n FROM history_documents GROUP BY crawl ORDER BY crawl")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8(o.stdout).unwrap(), format!("crawl,n\nnight1,{documents}\nnight2,{documents}\n"));

    run_ok(&["history", "--history", history_s, "compact"]);
    assert!(!ghost.exists() && !history.join(".staging-ghost-1").exists());
    let manifest: CrawlManifest = serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    assert_eq!(manifest.objects["signatures"], ["part-compacted.parquet"]);
    let files: Vec<_> = std::fs::read_dir(&night2).unwrap().collect();
    assert_eq!(files.len(), 1, "one part file after compaction");
    assert_eq!(canonical_rows(&history.join("signatures"), "crawl=night2"), doubled);

    // Drop: the crawl and its partitions go; dropping it again says so.
    run_ok(&["history", "--history", history_s, "drop", "night1"]);
    // Night 3's match was against night 1 too: its stages are stale now.
    let states = history_states();
    assert!(states.len() == 3 && states.values().all(|state| state == "stale"), "{states:?}");
    assert_eq!(list(&history).len(), 1);
    assert!(!partition(&history, "history_documents", "night1").exists());
    let again = pipeline().args(["history", "--history", history_s, "drop", "night1"]).output().unwrap();
    assert_eq!(again.status.code(), Some(1));

    // A crawl earlier than one already there: night 2 was matched without
    // it, and the append says so, with the command that matches it again.
    let earlier = pipeline()
        .args(["history", "--history", history_s, "append", "--out", out_s, "--crawl-id", "night0"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&earlier.stderr);
    assert!(earlier.status.success(), "{stderr}");
    assert!(
        stderr.contains("crawl night0 comes before night2 already in the history")
            && stderr.contains(&format!("pipeline history match --out {out_s} --crawl-id night2")),
        "{stderr}"
    );

    // A crawl id names folders: a path is refused as bad usage.
    let bad = pipeline()
        .args(["history", "--history", history_s, "append", "--out", out_s, "--crawl-id", "../night3"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "{}", String::from_utf8_lossy(&bad.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

/// One signature row: (method, slot, sig, doc_id, doc_len).
type Sig = (&'static str, u16, u64, u64, u32);

/// Writes `rows` as a `signatures` table under `dir/signatures/`.
fn write_signatures(dir: &Path, rows: &[Sig]) {
    let mut w = TableOutput::<signatures::Rows>::create(dir).unwrap();
    for &(method, slot, sig, doc, len) in rows {
        w.push(|b| {
            b.method.append_value(method);
            b.doc_id.append_value(doc);
            b.slot.append_value(slot);
            b.sig.append_value(sig);
            b.doc_len.append_value(len);
        })
        .unwrap();
    }
    w.commit().unwrap();
}

/// Puts `rows` in the history as crawl `crawl`'s signatures, with a manifest
/// when `complete` (without one, an interrupted append).
fn put_crawl(history: &Path, crawl: &str, rows: &[Sig], complete: bool) {
    let scratch = history.join(format!(".scratch-{crawl}"));
    write_signatures(&scratch, rows);
    // No kept texts: these candidates are not verified.
    TableWriter::for_table(&scratch, "history_documents").unwrap().commit().unwrap();
    let mut objects = BTreeMap::new();
    for table in ["signatures", "history_documents"] {
        let partition = history.join(table).join(format!("crawl={crawl}"));
        std::fs::create_dir_all(partition.parent().unwrap()).unwrap();
        std::fs::rename(scratch.join(table), &partition).unwrap();
        let files = std::fs::read_dir(&partition).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap());
        objects.insert(table.to_string(), files.collect());
    }
    std::fs::remove_dir_all(&scratch).unwrap();
    if complete {
        let manifest = CrawlManifest {
            crawl: crawl.into(),
            rows: [("signatures".to_string(), rows.len() as u64)].into(),
            verification_text: VerificationText::Visible,
            appended_from: "test".into(),
            objects,
        };
        std::fs::create_dir_all(history.join("_crawls")).unwrap();
        std::fs::write(history.join("_crawls").join(format!("{crawl}.json")), serde_json::to_vec(&manifest).unwrap())
            .unwrap();
    }
}

/// The reference of jobs/history_edges.sql written the plain way: per group
/// with a night member, members sorted by (length, night first, doc_id,
/// crawl); each night member linked to the `k` earlier members after it and
/// the `k` before it; per (method, night doc) the `k` strongest earlier
/// documents by (links desc, length gap, doc_id, crawl).
fn reference(night: &[Sig], past: &[(&str, Sig)], k: usize) -> BTreeSet<(String, u64, u64, String)> {
    type Member = (u32, u8, u64, String);
    let mut groups: BTreeMap<(&str, u16, u64), Vec<Member>> = BTreeMap::new();
    for &(m, slot, sig, doc, len) in night.iter() {
        groups.entry((m, slot, sig)).or_default().push((len, 0, doc, String::new()));
    }
    for (crawl, (m, slot, sig, doc, len)) in past.iter() {
        if let Some(g) = groups.get_mut(&(*m, *slot, *sig)) {
            g.push((*len, 1, *doc, crawl.to_string()));
        }
    }
    let mut links: BTreeMap<(String, u64, u64, String), (u64, u32)> = BTreeMap::new();
    for ((m, _, _), mut members) in groups {
        members.sort();
        for (i, a) in members.iter().enumerate().filter(|(_, a)| a.1 == 0) {
            let after = members[i + 1..].iter().filter(|b| b.1 == 1).take(k);
            let before = members[..i].iter().rev().filter(|b| b.1 == 1).take(k);
            for b in after.chain(before) {
                let e = links.entry((m.to_string(), a.2, b.2, b.3.clone())).or_insert((0, u32::MAX));
                e.0 += 1;
                e.1 = e.1.min(a.0.abs_diff(b.0));
            }
        }
    }
    // Per (method, night doc): (links, reversed so the most sort first; gap; earlier doc; crawl).
    type Ranked = (std::cmp::Reverse<u64>, u32, u64, String);
    let mut by_doc: BTreeMap<(String, u64), Vec<Ranked>> = BTreeMap::new();
    for ((m, doc, other, crawl), (n, gap)) in links {
        by_doc.entry((m, doc)).or_default().push((std::cmp::Reverse(n), gap, other, crawl));
    }
    let mut kept = BTreeSet::new();
    for ((m, doc), mut edges) in by_doc {
        edges.sort();
        for (_, _, other, crawl) in edges.into_iter().take(k) {
            kept.insert((m.clone(), doc, other, crawl));
        }
    }
    kept
}

#[test]
fn history_edges_are_bounded_per_night_document_and_match_the_reference() {
    let dir = temp_dir("history-edges");
    let (out, history) = (dir.join("out"), dir.join("history"));
    let mut state = 7u64;
    let mut next = |n: u64| splitmix64(&mut state) % n;
    // Night documents 1..=80; earlier crawls c1, c2 (which reuses c1's ids:
    // the crawl tells them apart) and c3. A template group (a0, sig 42)
    // holds every night document and 300 documents of each earlier crawl.
    let mut night: Vec<Sig> = Vec::new();
    for doc in 1..=80u64 {
        let len = 50 + next(40) as u32;
        night.push(("a0", 0, 42, doc, len));
        night.push(("a1", 0, doc % 7, doc, len));
        for slot in 0..4u16 {
            night.push(("a6", slot, doc % (slot as u64 + 2), doc, len));
        }
        night.push(("minhash", 0, doc % 3, doc, len));
    }
    let mut past: Vec<(&str, Sig)> = Vec::new();
    for (crawl, first) in [("c1", 1000u64), ("c2", 1000), ("c3", 5000)] {
        for doc in first..first + 300 {
            let len = 40 + next(60) as u32;
            past.push((crawl, ("a0", 0, 42, doc, len)));
            if doc % 5 == 0 {
                past.push((crawl, ("a1", 0, doc % 11, doc, len)));
            }
            for slot in 0..4u16 {
                if next(3) == 0 {
                    past.push((crawl, ("a6", slot, doc % (slot as u64 + 2), doc, len)));
                }
            }
            past.push((crawl, ("minhash", 0, doc % 3, doc, len)));
        }
    }
    write_signatures(&out, &night);
    for table in ["documents", "tokens", "exact_copies"] {
        TableWriter::for_table(&out, table).unwrap().commit().unwrap();
    }
    for crawl in ["c1", "c2", "c3"] {
        let rows: Vec<Sig> = past.iter().filter(|p| p.0 == crawl).map(|p| p.1).collect();
        put_crawl(&history, crawl, &rows, true);
    }
    // The night itself, appended before, and an interrupted append: neither
    // is matched.
    put_crawl(&history, "night", &night, true);
    put_crawl(&history, "ghost", &night, false);

    let config = Config::default();
    let k = config.candidates.max_edges_per_document as usize;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let history = History::open(&history).unwrap();
    let earlier = history.crawls_before("night").unwrap();
    let rows =
        neardup::stages::history::matching::find_candidates(&history, &out, &earlier, &config, None, &rt).unwrap();
    let mut got = BTreeSet::new();
    let mut per_doc: BTreeMap<(String, u64), usize> = BTreeMap::new();
    for batch in common::read_table(&out, "history_candidates") {
        let method = history_candidates::method(&batch).unwrap();
        let doc = history_candidates::doc_id(&batch).unwrap();
        let other = history_candidates::earlier_doc_id(&batch).unwrap();
        let crawl = history_candidates::earlier_crawl(&batch).unwrap();
        for i in 0..batch.num_rows() {
            got.insert((method.value(i).to_string(), doc.value(i), other.value(i), crawl.value(i).to_string()));
            *per_doc.entry((method.value(i).to_string(), doc.value(i))).or_default() += 1;
        }
    }
    assert_eq!(rows as usize, got.len());
    let expected = reference(&night, &past, k);
    let only_sql: Vec<_> = got.difference(&expected).take(5).collect();
    let only_reference: Vec<_> = expected.difference(&got).take(5).collect();
    assert!(
        only_sql.is_empty() && only_reference.is_empty(),
        "SQL only {only_sql:?}, reference only {only_reference:?}"
    );
    // Bounded: the template group of 80 x 900 gives k edges per night
    // document, not 72,000 pairs.
    assert!(per_doc.values().all(|&n| n <= k));
    assert_eq!(got.iter().filter(|e| e.0 == "a0").count(), 80 * k);
    assert!(got.iter().all(|e| e.3 != "night" && e.3 != "ghost"));
    // Min-hash's bands are keys across crawls too.
    assert!(got.iter().any(|e| e.0 == "minhash"));
    assert!(got.iter().any(|e| e.3 == "c2") && got.iter().any(|e| e.0 == "a6"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The sample crawl split in `count` nights by date (its records are in
/// date order; a request stays with its response): `dir/all/` holds
/// `night1.warc.gz` .. `nightN.warc.gz`, and `dir/nightN/` only its own
/// file under the same name, so a page has the same doc id (file name and
/// record id) in the run over all nights and in its night's run.
fn split_sample_in_nights(dir: &Path, count: usize) {
    use std::io::{Read, Write};
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/sample-crawl.warc.gz");
    let mut data = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(sample).unwrap()).read_to_end(&mut data).unwrap();
    let mut records: Vec<&[u8]> = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        let head_end = pos + data[pos..].windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let head = String::from_utf8_lossy(&data[pos..head_end]);
        let length: usize =
            head.lines().find_map(|l| l.strip_prefix("Content-Length: ")).map(|v| v.trim().parse().unwrap()).unwrap();
        let end = head_end + 4 + length + 4;
        records.push(&data[pos..end]);
        pos = end;
    }
    let is_request = |r: &[u8]| r.windows(18).any(|w| w == b"WARC-Type: request");
    let (info, rest) = records.split_first().unwrap();
    let mut nights: Vec<Vec<&[u8]>> = vec![Vec::new(); count];
    for (i, record) in rest.iter().enumerate() {
        // A request goes with the record after it.
        let at = if is_request(record) { i + 1 } else { i };
        nights[(at * count / rest.len()).min(count - 1)].push(record);
    }
    std::fs::create_dir_all(dir.join("all")).unwrap();
    for (n, night) in nights.iter().enumerate() {
        let name = format!("night{}.warc.gz", n + 1);
        let mut file = Vec::new();
        for record in std::iter::once(info).chain(night.iter()) {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            gz.write_all(record).unwrap();
            file.extend(gz.finish().unwrap());
        }
        std::fs::write(dir.join("all").join(&name), &file).unwrap();
        std::fs::create_dir_all(dir.join(format!("night{}", n + 1))).unwrap();
        std::fs::write(dir.join(format!("night{}", n + 1)).join(&name), &file).unwrap();
    }
}

/// Rows of a table as maps from column name to its formatted value.
fn rows_by_name(out: &Path, table: &str) -> Vec<BTreeMap<String, String>> {
    use arrow::util::display::{ArrayFormatter, FormatOptions};
    let options = FormatOptions::default().with_null("NULL");
    let mut rows = Vec::new();
    for batch in common::read_table(out, table) {
        let schema = batch.schema();
        let columns: Vec<ArrayFormatter> =
            batch.columns().iter().map(|c| ArrayFormatter::try_new(c.as_ref(), &options).unwrap()).collect();
        for i in 0..batch.num_rows() {
            rows.push(
                schema.fields().iter().zip(&columns).map(|(f, c)| (f.name().clone(), c.value(i).to_string())).collect(),
            );
        }
    }
    rows
}

#[test]
fn three_nights_report_every_repeat_one_run_over_all_nights_clusters() {
    let dir = temp_dir("three-nights");
    split_sample_in_nights(&dir, 3);
    let history = dir.join("history");
    let history_s = history.to_str().unwrap();
    let all = dir.join("out-all");
    run_ok(&["run", "-q", "--input", dir.join("all").to_str().unwrap(), "--out", all.to_str().unwrap()]);
    let night_run = |n: usize, out: &Path| {
        let input = dir.join(format!("night{n}"));
        let crawl = format!("night{n}");
        run_ok(&[
            "run",
            "-q",
            "--input",
            input.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--history",
            history_s,
            "--crawl-id",
            &crawl,
        ]);
    };
    let outs: Vec<_> = (1..=3).map(|n| dir.join(format!("out-night{n}"))).collect();
    for (n, out) in outs.iter().enumerate() {
        night_run(n + 1, out);
    }

    // The night of each page, from its file.
    let night_of: BTreeMap<String, usize> = rows_by_name(&all, "documents")
        .into_iter()
        .map(|r| (r["doc_id"].clone(), r["warc_file"].rsplit("night").next().unwrap()[..1].parse().unwrap()))
        .collect();
    assert_eq!(night_of.values().collect::<BTreeSet<_>>().len(), 3);

    // Every page that the run over all nights clusters with a page of an
    // earlier night ...
    let mut members: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in rows_by_name(&all, "clusters") {
        members.entry(r["cluster_id"].clone()).or_default().push(r["doc_id"].clone());
    }
    let mut expected: BTreeSet<(usize, String)> = BTreeSet::new();
    for docs in members.values() {
        let first = docs.iter().map(|d| night_of[d]).min().unwrap();
        expected.extend(docs.iter().filter(|d| night_of[*d] > first).map(|d| (night_of[d], d.clone())));
    }
    assert!(expected.len() >= 5, "the split leaves repeats across nights: {expected:?}");
    // ... is in its night's clusters across crawls with a page of an
    // earlier crawl.
    let mut reported = BTreeSet::new();
    for (n, out) in outs.iter().enumerate().skip(1) {
        let night = format!("night{}", n + 1);
        let rows = rows_by_name(out, "crawl_clusters");
        let mut earliest: BTreeMap<(String, String), String> = BTreeMap::new();
        for r in &rows {
            let key = (r["cluster_crawl"].clone(), r["cluster_id"].clone());
            let e = earliest.entry(key).or_insert_with(|| r["crawl"].clone());
            if r["crawl"] < *e {
                *e = r["crawl"].clone();
            }
        }
        for r in rows.iter().filter(|r| r["crawl"] == night) {
            if earliest[&(r["cluster_crawl"].clone(), r["cluster_id"].clone())] < night {
                reported.insert((n + 1, r["doc_id"].clone()));
            }
        }
        // Kept: one page per cluster, by the default rule (canonical-url:
        // a page at its canonical URL before tracking-URL copies, then the
        // earliest crawl); every other member is marked. The history keeps
        // each page's canonical URL, so a member of an earlier crawl than
        // the kept page is such a copy (issue 56, item 4).
        for r in &rows {
            let kept = r["is_kept"] == "true";
            assert_eq!(kept, r["cluster_id"] == r["doc_id"] && r["cluster_crawl"] == r["crawl"], "{r:?}");
            assert_eq!(r["is_duplicate"] == "true", !kept, "{r:?}");
            if r["cluster_crawl"] > r["crawl"] {
                let url = &r["url"];
                assert!(url.contains("utm_") || url.contains("sid="), "{r:?}");
            }
        }
    }
    let missed: Vec<_> = expected.difference(&reported).collect();
    assert!(missed.is_empty(), "not reported by the nightly runs: {missed:?} of {}", expected.len());

    // Everything the nights report verifies: recomputed from the night's
    // visible text and the earlier page's kept text (each night's own:
    // boilerplate is learnt per crawl).
    let mut kept: BTreeMap<(String, String), String> = BTreeMap::new();
    for n in 1..=3 {
        let crawl = format!("night{n}");
        for r in rows_by_name(&history.join("history_documents"), &format!("crawl={crawl}")) {
            kept.insert((crawl.clone(), r["doc_id"].clone()), r["verification_text"].clone());
        }
    }
    let mut repeats = 0;
    for (n, out) in outs.iter().enumerate() {
        let texts: BTreeMap<String, String> =
            rows_by_name(out, "tokens").into_iter().map(|r| (r["doc_id"].clone(), r["text"].clone())).collect();
        for r in rows_by_name(out, "repeats") {
            assert_eq!(r["crawl"], format!("night{}", n + 1));
            assert!(r["earlier_crawl"] < r["crawl"], "{r:?}");
            let earlier = &kept[&(r["earlier_crawl"].clone(), r["earlier_doc_id"].clone())];
            let similarity = neardup::verify::similarity::similarity(&texts[&r["doc_id"]], earlier);
            assert!(similarity >= 0.8, "{r:?}: {similarity}");
            assert!((similarity - r["similarity"].parse::<f64>().unwrap()).abs() < 1e-9, "{r:?}: {similarity}");
            repeats += 1;
        }
    }
    assert!(repeats >= 5, "{repeats} repeats");
    // A page that repeats an earlier one is not indexed again.
    let repeating: BTreeSet<String> =
        rows_by_name(&outs[2], "repeats").into_iter().map(|r| r["doc_id"].clone()).collect();
    assert!(!repeating.is_empty());
    let indexed: BTreeSet<String> =
        rows_by_name(&history.join("signatures"), "crawl=night3").into_iter().map(|r| r["doc_id"].clone()).collect();
    assert!(indexed.is_disjoint(&repeating) && !indexed.is_empty());
    // The report has the night's repeats.
    let report = std::fs::read_to_string(outs[2].join("report.html")).unwrap();
    assert!(report.contains("<section id=\"repeats\"><h2>Repeats of earlier crawls</h2>"), "{report}");
    assert!(report.contains(&format!("{} of the night's documents repeat", repeating.len())), "{report}");

    // Another rule: the longest text is kept, and only the night's pages
    // are ever marked (the history is never edited).
    let config = dir.join("keep.toml");
    std::fs::write(&config, "[history]\nkeep = \"longest-text\"\nmark = \"new-only\"\n").unwrap();
    let night3 = outs[2].to_str().unwrap();
    let args = ["history", "--history", history_s, "match", "--out", night3, "--crawl-id", "night3"];
    run_ok(&[&args[..], &["--config", config.to_str().unwrap()]].concat());
    let mut chars: BTreeMap<(String, String), u64> = BTreeMap::new();
    for n in 1..=2 {
        for r in rows_by_name(&history.join("history_documents"), &format!("crawl=night{n}")) {
            chars.insert((format!("night{n}"), r["doc_id"].clone()), r["text_chars"].parse().unwrap());
        }
    }
    for r in rows_by_name(&outs[2], "documents") {
        chars.insert(("night3".into(), r["doc_id"].clone()), r["text"].chars().count() as u64);
    }
    let rows = rows_by_name(&outs[2], "crawl_clusters");
    let mut longest: BTreeMap<String, u64> = BTreeMap::new();
    for r in &rows {
        let n = chars[&(r["crawl"].clone(), r["doc_id"].clone())];
        let e = longest.entry(r["cluster_id"].clone()).or_default();
        *e = (*e).max(n);
    }
    assert!(rows.iter().any(|r| r["crawl"] != "night3"));
    for r in &rows {
        let n = chars[&(r["crawl"].clone(), r["doc_id"].clone())];
        if r["is_kept"] == "true" {
            assert_eq!(n, longest[&r["cluster_id"]], "{r:?}");
        }
        let marked = r["is_kept"] == "false" && r["crawl"] == "night3";
        assert_eq!(r["is_duplicate"] == "true", marked, "{r:?}");
    }

    // Rerunning night 2 (into a new output folder) changes nothing: not in
    // what it reports, not in the history.
    let history_tables = |h: &Path| -> Vec<Vec<String>> {
        neardup::history::folder::tables()
            .into_iter()
            .flat_map(|t| (1..=3).map(move |n| (t, n)))
            .map(|(t, n)| canonical_rows(&h.join(t), &format!("crawl=night{n}")))
            .collect()
    };
    let before = history_tables(&history);
    let rerun = dir.join("out-night2-again");
    night_run(2, &rerun);
    for table in ["history_candidates", "repeats", "crawl_clusters"] {
        assert_eq!(canonical_rows(&rerun, table), canonical_rows(&outs[1], table), "{table}");
    }
    assert_eq!(history_tables(&history), before);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Article `n` of a news site: two paragraphs of words drawn by a seeded
/// generator, long enough for every method to propose its copies.
fn article(n: u64) -> String {
    const WORDS: [&str; 24] = [
        "council", "budget", "harbour", "bridge", "library", "election", "museum", "railway", "school", "festival",
        "market", "river", "tunnel", "stadium", "hospital", "airport", "garden", "theatre", "station", "factory",
        "village", "mayor", "district", "weather",
    ];
    let mut state = n + 1;
    let mut sentence = |len: usize| {
        let words: Vec<&str> = (0..len)
            .map(|_| {
                let draw = splitmix64(&mut state);
                WORDS[(draw % WORDS.len() as u64) as usize]
            })
            .collect();
        format!("The {}.", words.join(" "))
    };
    let paragraphs: Vec<String> = (0..6).map(|_| format!("<p>{} {}</p>", sentence(12), sentence(9))).collect();
    format!("<html><head><title>News {n}</title></head><body><h1>News {n}</h1>{}</body></html>", paragraphs.join(""))
}

/// The run of night `crawl` of corpus `pages` ((URL, HTML) lines) into
/// `dir/out-<name>`, matched against and appended to `history`.
fn night(dir: &Path, history: &Path, crawl: &str, name: &str, pages: &[(String, String)]) -> std::process::Command {
    let input = dir.join(format!("{crawl}.jsonl"));
    let lines: String = pages
        .iter()
        .map(|(url, html)| format!("{}\n", serde_json::json!({"id": url, "url": url, "html": html})))
        .collect();
    std::fs::write(&input, lines).unwrap();
    let out = dir.join(format!("out-{name}"));
    let mut command = pipeline();
    command.args(["run", "-q", "--input", input.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    command.args(["--history", history.to_str().unwrap(), "--crawl-id", crawl]);
    command
}

/// Runs [`night`] and checks that it succeeds; returns its output folder.
fn run_night(dir: &Path, history: &Path, crawl: &str, name: &str, pages: &[(String, String)]) -> std::path::PathBuf {
    let o = night(dir, history, crawl, name, pages).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    dir.join(format!("out-{name}"))
}

#[test]
fn the_history_keeps_the_canonical_copy_of_an_earlier_night_s_tracking_urls() {
    let dir = temp_dir("history-canonical");
    let history = dir.join("history");
    let url = |n: u64| format!("https://news.example.com/2026/story-{n}.html");
    // Night 1 fetched three articles only through newsletter links, night
    // 2 at their own URLs.
    let tracked: Vec<(String, String)> =
        (0..3).map(|n| (format!("{}?utm_source=newsletter&utm_medium=email", url(n)), article(n))).collect();
    let canonical: Vec<(String, String)> = (0..3).map(|n| (url(n), article(n))).collect();
    run_night(&dir, &history, "night1", "night1", &tracked);
    let out = run_night(&dir, &history, "night2", "night2", &canonical);

    // Kept: each article at its canonical URL, night 2's, as a single run
    // over both nights would; the tracking-URL copies are duplicates.
    let kept = |out: &Path| -> BTreeMap<String, (String, bool)> {
        rows_by_name(out, "crawl_clusters")
            .into_iter()
            .map(|r| (r["url"].clone(), (r["crawl"].clone(), r["is_kept"] == "true")))
            .collect()
    };
    let expected: BTreeMap<String, (String, bool)> = (0..3)
        .flat_map(|n| {
            [(url(n), ("night2".to_string(), true)), (tracked[n as usize].0.clone(), ("night1".to_string(), false))]
        })
        .collect();
    assert_eq!(kept(&out), expected);
    let stored: BTreeSet<(String, String)> = rows_by_name(&history.join("history_documents"), "crawl=night1")
        .into_iter()
        .map(|r| (r["url"].clone(), r["canonical_url"].clone()))
        .collect();
    assert_eq!(stored, (0..3).map(|n| (tracked[n as usize].0.clone(), url(n))).collect());

    // A history appended before it stored canonical URLs: night 1 without
    // the column. Running night 2 again says what to do rather than keep
    // the tracking-URL copies.
    drop_history_column(&history, "history_documents", "night1", "canonical_url");
    let refused = night(&dir, &history, "night2", "night2-again", &canonical).output().unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(
        stderr.contains("crawl night1 of the history was appended before the history stored canonical URLs")
            && stderr.contains("--crawl-id night1"),
        "{stderr}"
    );
    // A keep rule that does not rank by it reads the old crawl as it is.
    let config = dir.join("earliest.toml");
    std::fs::write(&config, "[dedup]\nkeep = \"earliest-crawl\"\n").unwrap();
    let o = night(&dir, &history, "night2", "night2-earliest", &canonical)
        .args(["--config", config.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = dir.join("out-night2-earliest");
    let earliest: BTreeMap<String, (String, bool)> = (0..3)
        .flat_map(|n| {
            [(url(n), ("night2".to_string(), false)), (tracked[n as usize].0.clone(), ("night1".to_string(), true))]
        })
        .collect();
    assert_eq!(kept(&out), earliest);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Rewrites the `table` files of crawl `crawl` in the history without
/// `column`: a crawl as an older version appended it.
fn drop_history_column(history: &Path, table: &str, crawl: &str, column: &str) {
    for entry in std::fs::read_dir(partition(history, table, crawl)).unwrap() {
        let path = entry.unwrap().path();
        let reader =
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&path).unwrap())
                .unwrap();
        let schema = reader.schema().clone();
        let keep: Vec<usize> = (0..schema.fields().len()).filter(|&i| schema.field(i).name() != column).collect();
        let batches: Vec<_> = reader.build().unwrap().map(|b| b.unwrap().project(&keep).unwrap()).collect();
        let mut writer = parquet::arrow::ArrowWriter::try_new(
            std::fs::File::create(&path).unwrap(),
            std::sync::Arc::new(schema.project(&keep).unwrap()),
            None,
        )
        .unwrap();
        for b in &batches {
            writer.write(b).unwrap();
        }
        writer.close().unwrap();
    }
}

#[test]
fn exact_repeats_of_earlier_nights_are_found_by_the_stored_digest() {
    let dir = temp_dir("history-digest");
    let history = dir.join("history");
    let url = |n: u64| format!("https://news.example.com/2026/story-{n}.html");
    let night1: Vec<(String, String)> = (0..3).map(|n| (url(n), article(n))).collect();
    // Night 2 serves article 0 again under two session-id URLs: an exact
    // group of three, whose first alone is matched against the history.
    let mut night2 = night1.clone();
    night2.extend((1..3).map(|s| (format!("{}?sid={s}", url(0)), article(0))));
    run_night(&dir, &history, "night1", "night1", &night1);
    let stored: BTreeSet<String> = rows_by_name(&history.join("history_documents"), "crawl=night1")
        .into_iter()
        .map(|r| r["text_digest"].clone())
        .collect();
    let out = run_night(&dir, &history, "night2", "night2", &night2);
    let night_digests: BTreeSet<String> =
        rows_by_name(&out, "tokens").into_iter().map(|r| r["text_digest"].clone()).collect();
    assert_eq!(stored, night_digests, "the history stores the night's digests");

    // One exact candidate per article, from the group's first, to the
    // earlier page at the same URL; each verifies with similarity 1.
    let url_of: BTreeMap<String, String> = rows_by_name(&out, "documents")
        .into_iter()
        .map(|r| (r["doc_id"].clone(), r["canonical_url"].clone()))
        .collect();
    let exact = |out: &Path| -> BTreeSet<String> {
        rows_by_name(out, "history_candidates")
            .into_iter()
            .filter(|r| r["method"] == "exact")
            .map(|r| url_of[&r["doc_id"]].clone())
            .collect()
    };
    assert_eq!(exact(&out), (0..3).map(url).collect());
    let repeats = rows_by_name(&out, "repeats");
    let exact_repeats: Vec<_> = repeats.iter().filter(|r| r["methods"].contains("exact")).collect();
    assert_eq!(exact_repeats.len(), 3, "{repeats:?}");
    let earlier: BTreeSet<String> = exact_repeats.iter().map(|r| r["earlier_url"].clone()).collect();
    assert_eq!(earlier, (0..3).map(url).collect());
    assert!(exact_repeats.iter().all(|r| r["similarity"].parse::<f64>().unwrap() == 1.0), "{repeats:?}");
    // The copies follow their first into the cluster across crawls: the
    // five pages of night 2 and the three of night 1.
    assert_eq!(rows_by_name(&out, "crawl_clusters").len(), 8);

    // A crawl appended before the history stored digests: they are
    // computed from its kept texts, with a warning, and match the same.
    drop_history_column(&history, "history_documents", "night1", "text_digest");
    let o = night(&dir, &history, "night2", "night2-old", &night2).env("NEARDUP_LOG", "neardup=warn").output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("crawl night1 of the history") && stderr.contains("before the history stored text digests"),
        "{stderr}"
    );
    let old = dir.join("out-night2-old");
    assert_eq!(exact(&old), (0..3).map(url).collect());
    assert_eq!(canonical_rows(&old, "repeats"), canonical_rows(&out, "repeats"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `pipeline` with `args`, which must succeed; its stdout.
fn stdout_of(args: &[&str]) -> String {
    let o = pipeline().args(args).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// The JSON lines of an export file, each as an object.
fn export_lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn a_night_s_decisions_and_export_leave_out_its_repeats_of_pages_kept_in_an_earlier_crawl() {
    let dir = temp_dir("two-nights");
    split_sample_in_nights(&dir, 2);
    let history = dir.join("history");
    let history_s = history.to_str().unwrap();
    let night = |n: usize, out: &Path, extra: &[&str]| -> String {
        let (input, crawl) = (dir.join(format!("night{n}")), format!("night{n}"));
        let args = ["run", "--input", input.to_str().unwrap(), "--out", out.to_str().unwrap()];
        let history_args = ["--history", history_s, "--crawl-id", crawl.as_str()];
        stdout_of(&[&args[..], &history_args[..], extra].concat())
    };
    let (out1, out2) = (dir.join("out-night1"), dir.join("out-night2"));
    night(1, &out1, &[]);
    let line = night(2, &out2, &[]);
    let out2_s = out2.to_str().unwrap();

    // The pages of night 2 in a cluster whose kept copy is a page of
    // night 1, and night 1's pages by id.
    let clusters = rows_by_name(&out2, "crawl_clusters");
    let kept_earlier: BTreeMap<String, (String, String)> = clusters
        .iter()
        .filter(|r| r["crawl"] == "night2" && r["cluster_crawl"] == "night1")
        .map(|r| (r["doc_id"].clone(), (r["cluster_id"].clone(), r["cluster_crawl"].clone())))
        .collect();
    assert!(kept_earlier.len() >= 5, "the split leaves repeats of night 1 in night 2: {kept_earlier:?}");
    let earlier: BTreeMap<String, BTreeMap<String, String>> =
        rows_by_name(&history.join("history_documents"), "crawl=night1")
            .into_iter()
            .map(|r| (r["doc_id"].clone(), r))
            .collect();
    let similarity: BTreeMap<(String, String), String> = rows_by_name(&out2, "repeats")
        .into_iter()
        .map(|r| ((r["doc_id"].clone(), r["earlier_doc_id"].clone()), r["similarity"].clone()))
        .collect();

    // Night 2's decisions remove each as a repeat of that page, named with
    // its crawl, and with the verified similarity where the pair was
    // compared; every other page keeps the night's own decision.
    let decisions = rows_by_name(&out2, "decisions");
    let mut repeats = 0;
    for d in &decisions {
        match kept_earlier.get(&d["doc_id"]) {
            Some((kept, crawl)) => {
                assert_eq!(
                    (d["is_kept"].as_str(), d["reason"].as_str(), &d["duplicate_of"], &d["duplicate_of_crawl"]),
                    ("false", "repeat", kept, crawl),
                    "{d:?}"
                );
                let first = if d["exact_copy_of"] == "NULL" { &d["doc_id"] } else { &d["exact_copy_of"] };
                let verified = similarity.get(&(first.clone(), kept.clone())).map_or("NULL", String::as_str);
                assert_eq!(d["similarity"], verified, "{d:?}");
                repeats += 1;
            }
            None => assert!(d["reason"] != "repeat" && d["duplicate_of_crawl"] == "NULL", "{d:?}"),
        }
    }
    assert!(decisions.iter().filter(|d| d["similarity"] != "NULL" && d["reason"] == "repeat").count() * 2 >= repeats);

    // The summary line counts them.
    let count = |reason: &str| decisions.iter().filter(|d| d["reason"] == reason).count();
    let kept = decisions.iter().filter(|d| d["is_kept"] == "true").count();
    let expected = format!(
        "{} documents: {kept} kept, {repeats} repeat earlier crawls, {} removed ({} exact and {} near-duplicates) from {} clusters",
        decisions.len(),
        count("exact_duplicate") + count("near_duplicate"),
        count("exact_duplicate"),
        count("near_duplicate"),
        count("kept")
    );
    assert!(line.starts_with(&expected), "{line}\nwant {expected}");

    // The night's export holds what is new: none of them.
    let to = dir.join("export");
    let to_s = to.to_str().unwrap();
    let printed = stdout_of(&["export", "--out", out2_s, "--to", to_s, "--format", "jsonl"]);
    let exported: BTreeSet<String> =
        export_lines(&to.join("kept.jsonl")).iter().map(|r| r["doc_id"].as_str().unwrap().to_string()).collect();
    assert_eq!(exported.len(), kept, "{printed}");
    let present: Vec<_> = kept_earlier.keys().filter(|d| exported.contains(*d)).collect();
    assert!(present.is_empty(), "repeats of night 1 in night 2's export: {present:?}");
    // The removed export names each one's kept copy by crawl, URL and date.
    stdout_of(&["export", "--out", out2_s, "--to", to_s, "--format", "jsonl", "--removed"]);
    let removed = export_lines(&to.join("removed.jsonl"));
    let named: Vec<&serde_json::Value> = removed.iter().filter(|r| r["reason"] == "repeat").collect();
    assert_eq!(named.len(), repeats);
    for r in named {
        let page = &earlier[r["duplicate_of"].as_str().unwrap()];
        assert_eq!(r["duplicate_of_crawl"], "night1", "{r}");
        assert_eq!(r["duplicate_of_url"].as_str(), Some(page["url"].as_str()), "{r}");
        assert_eq!(r["duplicate_of_date"].as_str(), Some(page["crawl_date"].as_str()), "{r}");
    }
    // ... and so does the removed WARC: none is left without a kept copy.
    let printed = stdout_of(&["export", "--out", out2_s, "--to", to_s, "--format", "warc", "--removed"]);
    assert!(!printed.contains("removed_without_kept_copy"), "{printed}");

    // `explain` agrees with the decision.
    let (doc, (kept_id, _)) = kept_earlier.iter().next().unwrap();
    let explained = stdout_of(&["explain", "--out", out2_s, doc]);
    let want = format!(
        "  decision: removed (repeat), its kept copy {} (document {kept_id}) of crawl night1",
        earlier[kept_id]["url"]
    );
    assert!(explained.lines().any(|l| l.starts_with(&want)), "{explained}\nwant {want}");

    // `[history] mark = "within-night"` deduplicates the night against
    // itself only: `history match` decides again, as a run without the
    // history does.
    let config = dir.join("within-night.toml");
    std::fs::write(&config, "[history]\nmark = \"within-night\"\n").unwrap();
    let config_s = config.to_str().unwrap();
    let matched = stdout_of(&[
        "history",
        "--history",
        history_s,
        "match",
        "--out",
        out2_s,
        "--crawl-id",
        "night2",
        "--config",
        config_s,
    ]);
    assert!(matched.contains(", 0 documents removed from the night's decisions as repeats"), "{matched}");
    let alone = dir.join("out-night2-alone");
    run_ok(&["run", "-q", "--input", dir.join("night2").to_str().unwrap(), "--out", alone.to_str().unwrap()]);
    assert_eq!(canonical_rows(&out2, "decisions"), canonical_rows(&alone, "decisions"));
    assert!(rows_by_name(&out2, "crawl_clusters").iter().all(|r| r["is_duplicate"] == "false"));
    // ... and the default again removes the repeats.
    let matched = stdout_of(&["history", "--history", history_s, "match", "--out", out2_s, "--crawl-id", "night2"]);
    assert!(
        matched.contains(&format!(", {repeats} documents removed from the night's decisions as repeats")),
        "{matched}"
    );
    assert_eq!(rows_by_name(&out2, "decisions"), decisions);
    let _ = std::fs::remove_dir_all(&dir);
}

//! Hostile and damaged input (issue 19): generated pages of each hostile
//! kind (deep nesting, a tag with many attributes, a huge page, gzip bombs
//! at the HTTP and the WARC level) end within the configured limits, and input discovery reads each
//! file once whatever the links. The limits are checked by their effects
//! (reasons, counters, text sizes), never by timing.

mod common;

use common::{pipeline, read_table, temp_dir};
use neardup::ingest::record::Outcome;
use neardup::ingest::settings::IngestConfig;
use neardup::ingest::source::Source;
use neardup::ingest::{ingest_file, FileSummary};
use std::io::Write;
use std::path::Path;

/// A WARC response record holding an HTML page (`extra` adds HTTP headers).
fn warc_record(id: &str, extra: &str, body: &[u8]) -> Vec<u8> {
    let mut http = format!("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n{extra}\r\n").into_bytes();
    http.extend_from_slice(body);
    let mut record = warc_header(id, http.len() as u64).into_bytes();
    record.extend_from_slice(&http);
    record.extend_from_slice(b"\r\n\r\n");
    record
}

fn warc_header(id: &str, content_length: u64) -> String {
    format!(
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:{id}>\r\n\
         WARC-Target-URI: http://example.com/{id}\r\nWARC-Date: 2024-01-01T00:00:00Z\r\n\
         Content-Type: application/http; msgtype=response\r\nContent-Length: {content_length}\r\n\r\n"
    )
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// `copies` gzip members of 1 MiB of spaces each: a few KB that decode to
/// `copies` MiB (gzip readers read concatenated members as one stream).
fn spaces_bomb(copies: usize) -> Vec<u8> {
    gzip(&vec![b' '; 1 << 20]).repeat(copies)
}

/// Writes `bytes` as `dir/name` and ingests it; checks that the counts add up.
fn ingest(dir: &Path, name: &str, bytes: &[u8], cfg: &IngestConfig) -> (FileSummary, Vec<Outcome>) {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let mut outcomes = Vec::new();
    let summary = ingest_file(&Source::File(path), name, cfg, &mut |o| outcomes.push(o)).unwrap();
    assert_eq!(summary.records, summary.documents + summary.revisits + summary.rejects + summary.skipped);
    assert_eq!(summary.records as usize, outcomes.len());
    (summary, outcomes)
}

/// What each record became: a document or the reason of a reject.
fn kinds(outcomes: &[Outcome]) -> Vec<String> {
    outcomes
        .iter()
        .map(|o| match o {
            Outcome::Document(_) => "document".to_string(),
            Outcome::Reject(r) => format!("reject: {}", r.reason),
            other => format!("{other:?}"),
        })
        .collect()
}

/// The page of issue 19: 200,000 nested `<div>`s (1 MB), which took minutes
/// in the HTML tree builder. It is parsed flattened: one document, its text
/// kept.
#[test]
fn the_200000_div_page_becomes_a_flattened_document() {
    let dir = temp_dir("deep-divs");
    let page = format!(
        "<html><head><title>Deep</title></head><body>{}<p>The text at the bottom of the well.</p></body></html>",
        "<div>".repeat(200_000)
    );
    assert!(page.len() > 1_000_000);
    let (summary, out) = ingest(&dir, "deep.warc", &warc_record("deep", "", page.as_bytes()), &IngestConfig::default());
    assert_eq!((summary.documents, summary.flattened, summary.text_truncated), (1, 1, 0));
    let Outcome::Document(d) = &out[0] else { panic!("{:?}", out[0]) };
    assert_eq!((d.title.as_str(), d.text.as_str()), ("Deep", "The text at the bottom of the well."));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// One file with a page of each hostile kind, read with small limits: each
/// ends as the limits say, the records after them are read, and no
/// document's text is longer than `max_text_bytes`.
#[test]
fn hostile_pages_stay_within_the_configured_limits() {
    let dir = temp_dir("hostile-pages");
    let cfg = IngestConfig {
        max_payload_bytes: 1 << 20,
        max_html_depth: 64,
        max_text_bytes: 64 << 10,
        ..IngestConfig::default()
    };
    let paragraph = "<p>Words of a long page that goes on and on.</p>\n";
    let mut file = Vec::new();
    // Deep nesting with closing tags and text at every level: flattened.
    let nested = format!("{}{}", "<div>level".repeat(10_000), "</div>".repeat(10_000));
    file.extend(warc_record("nested", "", nested.as_bytes()));
    // Deep nesting that the flattening's model cannot see (stray end tags
    // html5ever ignores): rejected.
    file.extend(warc_record("evasive", "", format!("{}x", "<span><div></span>".repeat(50_000)).as_bytes()));
    // A huge page within the payload limit: its text is cut.
    file.extend(warc_record("huge", "", paragraph.repeat(20_000).as_bytes()));
    // A page over the payload limit.
    file.extend(warc_record("over", "", paragraph.repeat(30_000).as_bytes()));
    // One tag with 100,000 attributes (the tokenizer's cost is their square):
    // cut after max_html_attributes.
    let attributes: String = (0..100_000).map(|i| format!(" a{i}")).collect();
    file.extend(warc_record("attributes", "", format!("<p{attributes}>Many attributes.</p>").as_bytes()));
    // A gzip bomb in the HTTP Content-Encoding: 4 KB that decode to 64 MB.
    file.extend(warc_record("bomb", "Content-Encoding: gzip\r\n", &spaces_bomb(64)));
    file.extend(warc_record("after", "", b"<p>Still read.</p>"));
    let (summary, out) = ingest(&dir, "hostile.warc", &file, &cfg);
    assert_eq!(
        kinds(&out),
        ["document", "reject: too_deep", "document", "reject: too_large", "document", "reject: too_large", "document"]
    );
    assert_eq!((summary.documents, summary.rejects, summary.flattened, summary.text_truncated), (4, 3, 2, 1));
    let docs: Vec<_> = out.iter().filter_map(|o| if let Outcome::Document(d) = o { Some(d) } else { None }).collect();
    assert_eq!(docs[0].text.lines().count(), 10_000);
    assert!(docs[0].text.lines().all(|l| l == "level"));
    assert!(docs.iter().all(|d| d.text.len() as u64 <= cfg.max_text_bytes));
    assert!(docs[1].text.len() as u64 > cfg.max_text_bytes - 100 && docs[1].text_truncated);
    assert_eq!((docs[2].text.as_str(), docs[2].flattened), ("Many attributes.", true));
    assert_eq!(docs[3].text, "Still read.");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A gzip bomb at the WARC level: a per-record gzip file whose record block
/// inflates to 32 MB. The block is held up to the payload limit (plus the
/// HTTP header allowance) and read past; the next record is read.
#[test]
fn a_record_that_inflates_past_the_limit_is_too_large() {
    let dir = temp_dir("warc-bomb");
    let cfg = IngestConfig { max_payload_bytes: 1 << 20, ..IngestConfig::default() };
    let http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n";
    let inflated = (http.len() + (32 << 20)) as u64;
    let mut file = gzip(format!("{}{}", warc_header("bomb", inflated), String::from_utf8_lossy(http)).as_bytes());
    file.extend(spaces_bomb(32));
    file.extend(gzip(b"\r\n\r\n"));
    file.extend(gzip(&warc_record("after", "", b"<p>Next record.</p>")));
    let (summary, out) = ingest(&dir, "bomb.warc.gz", &file, &cfg);
    assert_eq!(kinds(&out), ["reject: too_large", "document"]);
    assert_eq!(summary.compression, "gzip_per_record");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Input discovery follows links but reads every file once: a link back to
/// the input folder (`again -> .`) and one from a subfolder to its parent
/// are loops, each reported once in the log; a file symlink is the file it
/// points to; a link leaving the input folder is followed and its files are
/// labelled by their path under the input folder; a file name that is not
/// UTF-8 is read under its lossy name.
#[test]
fn each_file_is_read_once_whatever_the_links() {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::symlink;
    let dir = temp_dir("links");
    let crawl = dir.join("crawl");
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(crawl.join("sub")).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    let page = |id: &str| warc_record(id, "", format!("<p>Page {id}.</p>").as_bytes());
    std::fs::write(crawl.join("a.warc"), [page("a1"), page("a2")].concat()).unwrap();
    std::fs::write(elsewhere.join("b.warc"), page("b")).unwrap();
    std::fs::write(crawl.join(std::ffi::OsStr::from_bytes(b"odd-\xff.warc")), page("odd")).unwrap();
    symlink(".", crawl.join("again")).unwrap();
    symlink("..", crawl.join("sub").join("up")).unwrap();
    symlink("a.warc", crawl.join("link.warc")).unwrap();
    symlink(&elsewhere, crawl.join("far")).unwrap();
    let out = dir.join("out");
    let o = pipeline()
        .args(["run", "--stage", "ingest", "--input", crawl.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{}\n{log}", o.status);
    assert_eq!(log.matches("a link back to a folder it is inside").count(), 2, "{log}");
    assert_eq!(log.matches("the path is not UTF-8").count(), 1, "{log}");

    let column = |table: &str, name: &str| -> Vec<String> {
        let mut values: Vec<String> = read_table(&out, table)
            .iter()
            .flat_map(|b| {
                let c = b.column_by_name(name).unwrap();
                let c = arrow::array::AsArray::as_string::<i32>(c);
                c.iter().map(|v| v.unwrap().to_string()).collect::<Vec<_>>()
            })
            .collect();
        values.sort();
        values
    };
    let urls = column("documents", "url");
    assert_eq!(urls, ["a1", "a2", "b", "odd"].map(|id| format!("http://example.com/{id}")));
    let files: Vec<String> = column("ingest_files", "warc_file")
        .iter()
        .map(|f| Path::new(f).strip_prefix(&crawl).unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files, ["a.warc", "far/b.warc", "odd-\u{fffd}.warc"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Odd URLs do not decide what is kept (issue 71): four captures of one
/// page, the earliest at `javascript:alert(1)` and one at a relative path,
/// as malformed records give. The keep rule (the copy at its canonical
/// URL, then the earliest capture) kept the `javascript:` one; now the
/// http(s) copies go first, and ingest counts the two others.
#[test]
fn a_page_at_no_http_url_is_never_kept_over_an_http_copy() {
    let dir = temp_dir("odd-urls");
    let crawl = dir.join("crawl");
    std::fs::create_dir_all(&crawl).unwrap();
    let body = format!(
        "<html><head><title>Bracketed</title></head><body><p>{}</p></body></html>",
        "The same article, captured four times under four addresses. ".repeat(8)
    );
    let mut warc = Vec::new();
    for (n, (url, date)) in [
        ("javascript:alert(1)", "2024-01-01"),
        ("/just/a/path", "2024-01-02"),
        ("https://example.com/bracketed", "2024-01-03"),
        ("http://example.com/later", "2024-01-04"),
    ]
    .into_iter()
    .enumerate()
    {
        let record = warc_record(&format!("odd-{n}"), "", body.as_bytes());
        let record = String::from_utf8(record).unwrap();
        let record = record
            .replace(&format!("WARC-Target-URI: http://example.com/odd-{n}"), &format!("WARC-Target-URI: {url}"))
            .replace("WARC-Date: 2024-01-01T00:00:00Z", &format!("WARC-Date: {date}T00:00:00Z"));
        warc.extend(gzip(record.as_bytes()));
    }
    std::fs::write(crawl.join("odd.warc.gz"), warc).unwrap();
    let out = dir.join("out");
    let (crawl_s, out_s) = (crawl.to_str().unwrap(), out.to_str().unwrap());
    let run = pipeline().args(["run", "-q", "--methods", "a0", "--input", crawl_s, "--out", out_s]).output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let query = |sql: &str| {
        let o = pipeline().args(["query", "--out", out_s, "--format", "csv", sql]).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    assert_eq!(
        query("SELECT d.url, k.reason FROM decisions k JOIN documents d USING (doc_id) WHERE k.is_kept"),
        "url,reason\nhttps://example.com/bracketed,kept\n"
    );
    assert_eq!(query("SELECT SUM(not_http_url) AS n FROM ingest_files"), "n\n2\n");
    let _ = std::fs::remove_dir_all(&dir);
}

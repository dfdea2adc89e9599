//! Reads every archive of the shared real-data folder (`../shared/data/warc`)
//! through `ingest_file` and checks counts worked out independently of this
//! code (with `zcat | grep`, Python's `gzip`/`zlib` modules and by reading
//! the files; see the comments at each assertion).

use neardup::ingest::record::{Document, Outcome, Reject};
use neardup::ingest::settings::IngestConfig;
use neardup::ingest::source::Source;
use neardup::ingest::{ingest_file, FileSummary};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/warc");

fn all_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            all_files(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// One ingested file: its summary and outcomes in file order.
struct Ingested {
    summary: FileSummary,
    outcomes: Vec<Outcome>,
}

impl Ingested {
    fn docs(&self) -> Vec<&Document> {
        self.outcomes
            .iter()
            .filter_map(|o| match o {
                Outcome::Document(d) => Some(d),
                _ => None,
            })
            .collect()
    }

    fn rejects(&self) -> Vec<&Reject> {
        self.outcomes
            .iter()
            .filter_map(|o| match o {
                Outcome::Reject(r) => Some(r),
                _ => None,
            })
            .collect()
    }

    /// Reject counts by reason.
    fn reasons(&self) -> BTreeMap<&str, u64> {
        let mut m = BTreeMap::new();
        for r in self.rejects() {
            *m.entry(r.reason.as_str()).or_default() += 1;
        }
        m
    }

    /// Skipped counts by record type.
    fn skipped(&self) -> BTreeMap<&str, u64> {
        let mut m = BTreeMap::new();
        for o in &self.outcomes {
            if let Outcome::Skipped { record_type } = o {
                *m.entry(record_type.as_str()).or_default() += 1;
            }
        }
        m
    }
}

fn map(pairs: &[(&'static str, u64)]) -> BTreeMap<&'static str, u64> {
    pairs.iter().copied().collect()
}

/// Ingests every file once (files in parallel), keyed by path relative to DATA.
fn ingest_all() -> BTreeMap<String, Ingested> {
    let mut files = Vec::new();
    all_files(Path::new(DATA), &mut files);
    assert!(files.len() >= 80, "data folder missing? found {} files", files.len());
    files
        .par_iter()
        .map(|f| {
            let mut outcomes = Vec::new();
            let label = f.file_name().unwrap().to_string_lossy().into_owned();
            let summary =
                ingest_file(&Source::File(f.clone()), &label, &IngestConfig::default(), &mut |o| outcomes.push(o))
                    .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let rel = f.strip_prefix(DATA).unwrap().to_string_lossy().into_owned();
            (rel, Ingested { summary, outcomes })
        })
        .collect()
}

#[test]
fn every_file_reads_and_counts_match() {
    let all = ingest_all();
    let get = |name: &str| all.get(name).unwrap_or_else(|| panic!("no file {name}"));

    // Every file: the count identity, outcomes in file order, offsets within the file.
    for (name, f) in &all {
        let s = &f.summary;
        assert_eq!(s.records, s.documents + s.revisits + s.rejects + s.skipped, "{name}");
        assert_eq!(s.records as usize, f.outcomes.len(), "{name}");
        assert!(s.records > 0, "{name}: nothing read");
        let file_len = std::fs::metadata(Path::new(DATA).join(name)).unwrap().len();
        assert_eq!(s.bytes, file_len, "{name}: not read to the end");
        for d in f.docs() {
            assert!(!d.text.is_empty(), "{name}: empty document text");
            assert!(!d.url.is_empty(), "{name}: document without URL");
        }
    }

    // aut/example.warc.gz, WARC/0.17, one gzip member per record. `zcat |
    // grep -c '^WARC-Type: <t>'`: 822 records = 1 warcinfo + 299 response +
    // 261 request + 261 metadata. Python over the HTTP headers of the 299
    // responses: 140 are text/html, 37 text/plain, the other 122 are
    // text/dns, images, text/xml, javascript, ... Of the 140 HTML responses,
    // 5 are `302 Found` with a 0-byte body and one (http://www.hideout.com.br/)
    // is a meta refresh whose <body> is empty; 2 of the text/plain bodies are
    // blank (warcio over the 37): 8 empty_text, 134 + 35 documents (32 of the
    // 35 are robots.txt, not content).
    let f = get("aut/example.warc.gz");
    assert_eq!((f.summary.format.as_str(), f.summary.compression.as_str()), ("WARC/0.17", "gzip_per_record"));
    assert_eq!(f.summary.records, 822);
    assert_eq!(f.skipped(), map(&[("metadata", 261), ("request", 261), ("warcinfo", 1)]));
    assert_eq!(f.summary.documents + f.summary.rejects, 299);
    assert_eq!(f.summary.documents, 169);
    assert_eq!(f.reasons(), map(&[("empty_text", 8), ("not_html", 122)]));
    assert_eq!(f.docs().iter().filter(|d| d.not_content.as_deref() == Some("robots.txt")).count(), 32);
    // The hideout record is the gzip member starting at byte 520116 (Python zlib walk).
    let hideout = f.rejects().into_iter().find(|r| r.url.as_deref() == Some("http://www.hideout.com.br/")).unwrap();
    assert_eq!((hideout.warc_offset, hideout.reason.as_str()), (520116, "empty_text"));

    // The same crawl as ARC: 300 gzip members, 1 filedesc + 299 records; 140
    // have ARC MIME type text/html (Python over the header lines), 37 text/plain.
    let f = get("aut/example.arc.gz");
    assert_eq!((f.summary.format.as_str(), f.summary.records), ("ARC/1", 300));
    assert_eq!(f.skipped(), map(&[("filedesc", 1)]));
    assert_eq!(f.summary.documents, 169);
    assert_eq!(f.reasons(), map(&[("empty_text", 8), ("not_html", 122)]));
    let d = f.docs()[0];
    assert!(d.crawl_date.as_deref().unwrap().starts_with("2008-04-30T"), "{:?}", d.crawl_date);

    // aut/badexample.arc.gz (one gzip member, 3151 bytes decompressed): filedesc,
    // dns (text/dns), robots.txt (text/plain, a document that is not content), then three http://www.archive.org/
    // records that each declare 680 bytes but hold ~200-280: the first two are
    // cut at the next header line (at 2606 and 2882) and have `Content-Length:
    // 0` bodies; the last one runs past the end of the file.
    let f = get("aut/badexample.arc.gz");
    assert_eq!(f.summary.records, 6);
    assert_eq!(f.skipped(), map(&[("filedesc", 1)]));
    assert_eq!(f.reasons(), map(&[("empty_text", 2), ("not_html", 1), ("truncated", 1)]));
    assert_eq!(f.docs().iter().map(|d| d.not_content.as_deref()).collect::<Vec<_>>(), [Some("robots.txt")]);
    let offsets: Vec<(u64, &str)> = f.rejects().iter().map(|r| (r.warc_offset, r.reason.as_str())).collect();
    assert!(offsets.contains(&(2606, "empty_text")) && offsets.contains(&(2882, "truncated")), "{offsets:?}");

    // ukwa: two crawls of gov.uk. First: 190 records = 65 responses (36 text/html,
    // all with text; 3 text/plain: two robots.txt and a blank one, warcio) + 62
    // requests + 62 metadata + warcinfo. Second: 55 revisits
    // (`grep -c '^WARC-Type: revisit'`) and 10 responses (7 text/html, 3 text/dns).
    let f = get("ukwa/BL-20140325121225068-00000-32090~opera~8443.warc.gz");
    assert_eq!((f.summary.records, f.summary.documents, f.summary.revisits), (190, 38, 0));
    assert_eq!(f.reasons(), map(&[("empty_text", 1), ("not_html", 26)]));
    let f = get("ukwa/BL-20140325122341434-00000-32090~opera~8443.warc.gz");
    assert_eq!((f.summary.records, f.summary.documents, f.summary.revisits), (190, 7, 55));
    assert_eq!(f.reasons(), map(&[("not_html", 3)]));
    for o in &f.outcomes {
        if let Outcome::Revisit(r) = o {
            assert!(r.payload_digest.as_deref().is_some_and(|p| p.starts_with("sha1:")));
            assert!(r.url.starts_with("http"));
        }
    }

    // The "truncated" blackbook files are cut at record boundaries: every
    // declared length fits (Python walk), so nothing is rejected as truncated.
    // ARC: filedesc, dns, robots.txt, 2 text/html, jpeg, gif, png, text/xml
    // (documents: robots.txt, not content, and the 2 HTML pages).
    // WARC/0.17: warcinfo + 8 responses (same 8 payloads) + 7 requests + 7 metadata.
    for name in [
        "ukwa/IAH-20080430204825-00000-blackbook-truncated.arc",
        "ukwa/IAH-20080430204825-00000-blackbook-truncated.arc.gz",
    ] {
        let f = get(name);
        assert_eq!((f.summary.records, f.summary.documents, f.summary.skipped), (9, 3, 1), "{name}");
        assert_eq!(f.reasons(), map(&[("not_html", 5)]), "{name}");
    }
    for name in [
        "ukwa/IAH-20080430204825-00000-blackbook-truncated.warc",
        "ukwa/IAH-20080430204825-00000-blackbook-truncated.warc.gz",
    ] {
        let f = get(name);
        assert_eq!((f.summary.records, f.summary.documents, f.summary.skipped), (23, 3, 15), "{name}");
        assert_eq!(f.reasons(), map(&[("not_html", 5)]), "{name}");
    }

    // Brotli, gzip and no transfer compression: the same simple page.
    for enc in ["none", "gzip", "brotli"] {
        for ext in ["warc", "warc.gz"] {
            let name = format!("ukwa/transfer_compression_{enc}.{ext}");
            let f = get(&name);
            // wget's arguments, a text/plain resource record, are the other document.
            let docs: Vec<_> = f.docs().into_iter().filter(|d| d.not_content.is_none()).collect();
            assert_eq!(docs.len(), 1, "{name}");
            assert_eq!(f.docs().len(), 2, "{name}");
            assert_eq!(docs[0].title, "Simple page", "{name}");
            assert_eq!(
                docs[0].text,
                "Simple page\nExtremely simple webpage used for testing GZip and Brotli transmission compression.",
                "{name}"
            );
        }
    }
    // A date cut to minutes is still ISO 8601.
    assert_eq!(get("ukwa/truncated_datetime.warc").docs()[0].crawl_date.as_deref(), Some("2019-08-15T01:02"));

    // pywb iana.warc.gz: 343 records = 1 warcinfo + 48 responses + 171
    // requests + 123 revisits. Responses: 20 text/html (2 are `302 FOUND` with
    // empty bodies), 5 application/octet-stream (not HTML when sniffed), 23
    // javascript/css/svg/png.
    let f = get("pywb/warcs/iana.warc.gz");
    assert_eq!((f.summary.records, f.summary.revisits, f.summary.documents), (343, 123, 18));
    assert_eq!(f.skipped(), map(&[("request", 171), ("warcinfo", 1)]));
    assert_eq!(f.reasons(), map(&[("empty_text", 2), ("not_html", 28)]));

    // resiliparse/clipped.warc.gz: one gzip member cut short, one response record.
    let f = get("resiliparse/clipped.warc.gz");
    assert_eq!(f.summary.records, 1);
    assert_eq!((f.rejects()[0].reason.as_str(), f.rejects()[0].warc_offset), ("truncated", 0));

    // LZ4 (magic 04 22 4D 18): one event for the whole file.
    for name in ["resiliparse/warcfile.warc.lz4", "resiliparse/block-sized-records.warc.lz4"] {
        let f = get(name);
        assert_eq!(f.summary.compression, "lz4");
        assert_eq!(f.reasons(), map(&[("unsupported_compression", 1)]), "{name}");
    }
    // The same records uncompressed and per-record gzipped agree.
    for name in ["resiliparse/warcfile.warc", "resiliparse/warcfile.warc.gz"] {
        let f = get(name);
        assert_eq!((f.summary.records, f.summary.documents), (50, 16), "{name}");
    }

    // bad.arc: filedesc with length -1, a record with length -1, a good
    // 1-byte text/plain record (a line feed: empty_text), a record with length "abc".
    for name in ["pywb/warcs/bad.arc", "warcio/bad.arc"] {
        let f = get(name);
        assert_eq!(f.summary.records, 4, "{name}");
        assert_eq!(f.reasons(), map(&[("empty_text", 1), ("malformed_record", 3)]), "{name}");
    }

    // copycat: Wayback snapshots without HTTP headers (block Content-Type
    // text/html, 128 responses) and `WARC-Date: null`.
    let f = get("copycat/snapshot-wayback-topic-02.warc.gz");
    assert_eq!((f.summary.records, f.summary.documents), (129, 128));
    assert!(f.docs().iter().all(|d| d.crawl_date.is_none() && d.http_status.is_none()));
    // 238 responses: 232 CDX listings (`grep -c 'Content-Type: text/plain'`),
    // documents read as plain text, and 6 without a Content-Type whose body
    // does not look like HTML.
    let f = get("copycat/topic-1--20201003083220753-00000.warc.gz");
    assert_eq!(f.summary.documents, 232);
    assert_eq!(f.reasons(), map(&[("not_html", 6)]));
    assert!(f.docs()[0].text.starts_with("com,tnr,blogs)/tnr/blogs/the_plank/archive/2009/01/07/"));
    assert_eq!(f.docs()[0].text.lines().count(), 3);
    // Common Crawl 2008 ARCs: 146 and 9 records (Python walk of the header lines).
    assert_eq!(get("copycat/small-sample-1213893279526_0.arc").summary.records, 146);
    assert_eq!(get("copycat/small-sample-1262850551027_8.arc").summary.documents, 8);

    // ClueWeb09 WARC/0.18 (LF-only headers, invalid dates like 2009-03-65):
    // 23 text/html responses, plain and whole-file gzip alike.
    for name in
        ["webis-ecir20/clueweb-09-sample-en0000-sample-00.warc", "webis-ecir20/clueweb09-sample-en0000-00.warc.gz"]
    {
        let f = get(name);
        assert_eq!((f.summary.records, f.summary.documents), (24, 23), "{name}");
        assert!(f.docs().iter().all(|d| d.crawl_date.is_none()), "{name}");
    }
    assert_eq!(get("webis-ecir20/clueweb09-sample-en0000-00.warc.gz").summary.compression, "gzip_whole_file");
    // ClueWeb09 Japanese sample: EUC-JP pages whose header says gzip but whose
    // body is stored decoded.
    let f = get("resiliparse/clueweb-quirk.warc.gz");
    assert_eq!(f.summary.documents, 29);
    assert!(f.docs().iter().filter(|d| d.lang == "ja").count() >= 20);
    assert!(f.docs().iter().all(|d| d.charset == "euc-jp"));
    // Common Crawl 2015: `grep -c '^WARC-Truncated'` = 3 and 5, all on responses.
    assert_eq!(
        get("webis-ecir20/CC-MAIN-20150226074059-00000-ip-10-28-5-156.ec2.internal.warc.gz").reasons()["truncated"],
        3
    );
    assert_eq!(
        get("webis-ecir20/CC-MAIN-20150226074105-00336-ip-10-28-5-156.ec2.internal.warc.gz").reasons()["truncated"],
        5
    );

    // Odd WARCs.
    let f = get("warcio/example-space-in-target-uri.warc.gz");
    assert_eq!(f.rejects()[0].url.as_deref(), Some("file:///example with spaces.png"));
    // example-space-in-url.arc: the URL has spaces; the file lost its CRs, so
    // only 1579 of the declared 1591 block bytes are there (Python): truncated.
    let f = get("warcio/example-space-in-url.arc");
    let r = f.rejects()[0];
    assert_eq!(
        r.url.as_deref(),
        Some("http://example.com/index.cfm?FuseAction=Email&EmailTitle=Examples From The Live Web&IsPopUp=False")
    );
    assert_eq!((r.warc_offset, r.reason.as_str()), (151, "truncated"));
    let f = get("pywb/warcs/example-extra.warc");
    assert_eq!(f.reasons(), map(&[("bad_http_header", 1)])); // status line "HTTPX/1.1 200 OK"
    let f = get("pywb/warcs/missing-status-text.warc"); // "HTTP/1.0 302 " and CR CR LF line ends
    assert_eq!(f.summary.records, 1);
    assert_eq!(f.reasons(), map(&[("not_html", 1)]));
    // example-trunc.warc: the gzip Content-Encoding payload is cut short.
    assert_eq!(get("warcio/example-trunc.warc").reasons(), map(&[("decode_error", 1)]));
    // pywb example.warc: a request whose Content-Length is 3 bytes short
    // leaves 7 unreadable bytes before the next record.
    let f = get("pywb/warcs/example.warc");
    assert_eq!((f.summary.documents, f.summary.revisits), (2, 1));
    assert_eq!(f.reasons(), map(&[("malformed_record", 1)]));
    // WARC-Type "unknown" records are skipped.
    assert_eq!(get("resiliparse/block-sized-records.warc").skipped(), map(&[("unknown", 3)]));
    // WET files: every `conversion` record of Content-Type text/plain is a
    // document (`zcat | grep -c 'WARC-Type: conversion'` = 1 and 3, all
    // text/plain, Content-Length 4456, and 629, 626, 1283), the warcinfo
    // record is skipped.
    let f = get("whirlwind/whirlwind.warc.wet.gz");
    assert_eq!(f.skipped(), map(&[("warcinfo", 1)]));
    assert_eq!((f.summary.records, f.summary.documents), (2, 1));
    let d = f.docs()[0];
    assert_eq!(d.url, "https://an.wikipedia.org/wiki/Escopete");
    assert_eq!((d.content_type.as_deref(), d.http_status, d.raw_bytes), (Some("text/plain"), None, 4456));
    let f = get("npm-warc/CC-MAIN-20140820021334-00006-ip-10-180-136-8.ec2.internal.warc.wet");
    assert_eq!((f.summary.documents, f.summary.rejects), (3, 0));
    assert_eq!(f.docs().iter().map(|d| d.raw_bytes).collect::<Vec<_>>(), vec![629, 626, 1283]);
    // WAT files carry no page content.
    let f = get("whirlwind/whirlwind.warc.wat.gz");
    assert_eq!(f.summary.documents + f.summary.rejects, 0);
}

//! Reads every archive of the shared real-data folder through `ingest_file`.

use neardup::config::IngestConfig;
use neardup::ingest::ingest_file;
use neardup::ingest::record::Outcome;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/warc");

fn all_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            all_files(&p, out);
        } else {
            out.push(p);
        }
    }
}

#[test]
fn dump() {
    let mut files = Vec::new();
    all_files(Path::new(DATA), &mut files);
    for f in files {
        let mut reasons: BTreeMap<String, u64> = BTreeMap::new();
        let s = ingest_file(&f, &IngestConfig::default(), &mut |o| {
            let k = match o {
                Outcome::Document(_) => "doc".to_string(),
                Outcome::Revisit(_) => "revisit".to_string(),
                Outcome::Reject(r) => {
                    if r.reason != "not_html" {
                        println!(
                            "   REJ {} {} {:?} {} {}",
                            r.warc_offset, r.record_type, r.url, r.reason, r.detail
                        );
                    }
                    format!("rej:{}", r.reason)
                }
                Outcome::Skipped { record_type } => format!("skip:{record_type}"),
            };
            *reasons.entry(k).or_default() += 1;
        })
        .unwrap();
        println!(
            "{} {} {} rec={} {:?}",
            f.strip_prefix(DATA).unwrap().display(),
            s.format,
            s.compression,
            s.records,
            reasons
        );
    }
}

#[test]
fn timing() {
    let mut files = Vec::new();
    all_files(Path::new(DATA), &mut files);
    for f in files {
        let t = std::time::Instant::now();
        ingest_file(&f, &IngestConfig::default(), &mut |_| {}).unwrap();
        let el = t.elapsed().as_millis();
        if el > 200 {
            println!("TIME {} {el}ms", f.display());
        }
    }
}

#[test]
fn timing_scan() {
    for f in [
        "aut/example.warc.gz",
        "aut/example.arc.gz",
        "copycat/small-sample-1213893279526_0.arc",
    ] {
        let p = Path::new(DATA).join(f);
        let t = std::time::Instant::now();
        let mut recs = vec![];
        neardup::ingest::archive::scan_archive(&p, 1 << 30, &mut |e| recs.push(e)).unwrap();
        let t1 = t.elapsed().as_millis();
        let t = std::time::Instant::now();
        let mut parse = 0u128;
        let mut extract = 0u128;
        let mut lang = 0u128;
        let mut chars = 0u128;
        for e in &recs {
            if let neardup::ingest::archive::ArchiveEvent::Record(r) = e {
                if let Some(i) = r.block.windows(4).position(|w| w == b"\r\n\r\n") {
                    let body = &r.block[i + 4..];
                    if !neardup::ingest::record::sniff_html(body) {
                        continue;
                    }
                    let t0 = std::time::Instant::now();
                    let (enc, _) = neardup::ingest::html::decide_charset(body, None);
                    let s = neardup::ingest::html::decode(body, enc);
                    chars += t0.elapsed().as_micros();
                    let t0 = std::time::Instant::now();
                    let _d = scraper::Html::parse_document(&s);
                    parse += t0.elapsed().as_micros();
                    let t0 = std::time::Instant::now();
                    let ex = neardup::ingest::html::extract(&s);
                    extract += t0.elapsed().as_micros();
                    let t0 = std::time::Instant::now();
                    neardup::ingest::html::detect_lang(&ex.text);
                    lang += t0.elapsed().as_micros();
                }
            }
        }
        println!(
            "TIME {f} scan {t1}ms total {}ms charset {}ms parse {}ms extract {}ms lang {}ms",
            t.elapsed().as_millis(),
            chars / 1000,
            parse / 1000,
            extract / 1000,
            lang / 1000
        );
    }
}

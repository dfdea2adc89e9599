//! The WARC export replayed by pywb itself, as a user loads it: a small
//! crawl with a kept page, a byte-identical copy of it under another URL,
//! a near-duplicate and a copy of its visible text in other HTML is run and
//! exported (`kept.warc.gz` and `removed.warc.gz`); a pywb collection of
//! both files (`wb-manager init`, `wb-manager add`: pywb's own index) is
//! served on a free loopback port and asked for each URL (`id_`: the
//! payload as archived). pywb and `warcio check` are Python tools (PyPI
//! `pywb`, which brings warcio): missing, the test is skipped with a
//! message, except under `NEARDUP_REQUIRE_SHARED=1` (`.ci/run` installs
//! them), where it fails.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{pipeline, read_table, required, run_ok, temp_dir};

/// A page of the test crawl: its URL, capture date and HTTP payload.
struct Page {
    url: &'static str,
    date: &'static str,
    html: String,
}

/// A release guide of `words` sentences, `version` naming the release.
fn guide(version: &str, changed: &str) -> String {
    let topics = [
        "installing the command line tools on a fresh machine",
        "reading crawl files from a local folder or a bucket",
        "choosing the similarity threshold for near duplicates",
        "exporting the kept pages as a compressed archive",
        "checking the exported archive with a replay tool",
        "splitting a large crawl into shards for several machines",
        "reading the report that explains every removed page",
        "keeping the history of earlier crawls between nights",
        "measuring the memory a run needs on a small server",
        "writing the configuration file for a nightly job",
    ];
    let mut body = format!("<h1>Guide to release {version}</h1>\n");
    for (i, topic) in topics.iter().enumerate() {
        body.push_str(&format!(
            "<h2>Chapter {i}</h2>\n<p>This chapter is about {topic}. It walks through every step with an example \
             taken from a real documentation crawl, says what can go wrong and how to notice it early, and ends \
             with a short list of the settings that matter most for {topic}.</p>\n"
        ));
    }
    body.push_str(&format!("<p>{changed}</p>\n"));
    format!("<html><head><title>Guide {version}</title></head><body>\n{body}</body></html>\n")
}

/// Two pages unrelated to the guide and to each other, kept.
fn others() -> [String; 2] {
    let page = |title: &str, text: &str| {
        format!("<html><head><title>{title}</title></head><body><p>{text}</p></body></html>\n")
    };
    [
        page(
            "Chess club",
            "The chess club meets on Tuesdays to plan the next quarter, review the budget of the spring \
             festival and elect a new treasurer. Minutes are sent to every member by post within a week.",
        ),
        page(
            "Garden",
            "Tomatoes want a sunny wall, deep watering twice a week and a stake before the first flowers; \
             pinch out the side shoots and feed them every fortnight once the fruit has set.",
        ),
    ]
}

/// The crawl: what each URL was when it was captured.
fn pages() -> Vec<Page> {
    let kept = guide("2.4", "Last changed in March.");
    // The same visible text in other bytes: attributes, a comment and
    // other line breaks change the HTML, not the text.
    let reformatted = kept
        .replace("<p>", "<p class=\"text\">")
        .replace("<body>\n", "<body><!-- printable version -->\n")
        .replace("</h2>\n", "</h2>\n\n");
    let [chess, garden] = others();
    vec![
        Page {
            url: "http://docs.example.org/release/2.4/guide.html",
            date: "2024-01-01T00:00:00Z",
            html: kept.clone(),
        },
        Page { url: "http://mirror.example.net/guide.html", date: "2024-01-02T00:00:00Z", html: kept.clone() },
        Page {
            url: "http://docs.example.org/release/2.5/guide.html",
            date: "2024-01-03T00:00:00Z",
            html: guide("2.5", "Last changed in April, for the spring release."),
        },
        Page { url: "http://print.example.com/guide.html", date: "2024-01-04T00:00:00Z", html: reformatted },
        Page { url: "http://club.example.org/minutes.html", date: "2024-01-05T00:00:00Z", html: chess },
        Page { url: "http://garden.example.org/tomatoes.html", date: "2024-01-06T00:00:00Z", html: garden },
    ]
}

/// The pages as one WARC/1.0 file, a gzip member per record; the
/// mirror's record carries its WARC-Payload-Digest, the others do not
/// (ingest computes theirs).
fn write_crawl(path: &Path, pages: &[Page]) {
    let mut file = Vec::new();
    for (i, p) in pages.iter().enumerate() {
        let http = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nX-Served-By: server-{i}\r\n\
             Content-Length: {}\r\n\r\n{}",
            p.html.len(),
            p.html
        );
        let digest = if i == 1 {
            format!("WARC-Payload-Digest: {}\r\n", neardup::ingest::digest::payload_digest(p.html.as_bytes()))
        } else {
            String::new()
        };
        let record = format!(
            "WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-00000000000{i}>\r\n\
             WARC-Target-URI: {}\r\nWARC-Date: {}\r\n{digest}Content-Type: application/http; msgtype=response\r\n\
             Content-Length: {}\r\n\r\n{http}\r\n\r\n",
            p.url,
            p.date,
            http.len()
        );
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(record.as_bytes()).unwrap();
        file.extend(gz.finish().unwrap());
    }
    std::fs::write(path, file).unwrap();
}

/// `url` → (kept, reason, the URL of its kept copy) from the run's decisions.
fn decisions(out: &Path) -> BTreeMap<String, (bool, String, Option<String>)> {
    use neardup::tables::columns::decisions as d;
    let mut by_id = BTreeMap::new();
    for b in read_table(out, d::TABLE) {
        let (ids, urls, kept, reasons, of) = (
            d::doc_id(&b).unwrap(),
            d::url(&b).unwrap(),
            d::is_kept(&b).unwrap(),
            d::reason(&b).unwrap(),
            d::duplicate_of(&b).unwrap(),
        );
        for i in 0..b.num_rows() {
            use arrow::array::Array;
            let of = of.is_valid(i).then(|| of.value(i));
            by_id.insert(ids.value(i), (urls.value(i).to_string(), kept.value(i), reasons.value(i).to_string(), of));
        }
    }
    let url_of: BTreeMap<u64, String> = by_id.iter().map(|(id, (url, ..))| (*id, url.clone())).collect();
    by_id.into_values().map(|(url, kept, reason, of)| (url, (kept, reason, of.map(|id| url_of[&id].clone())))).collect()
}

/// A pywb server on a loopback port, stopped when dropped.
struct Wayback {
    child: Child,
    port: u16,
}

impl Drop for Wayback {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free loopback port (the listener is closed before pywb binds it).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Runs a Python tool of pywb's in `dir`; fails with its output unless it
/// exits 0.
fn tool(dir: &Path, program: &str, args: &[&str]) {
    let o = Command::new(program).args(args).current_dir(dir).output().unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(
        o.status.success(),
        "{program} {args:?}: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Serves collection `coll` of `dir` with pywb's `wayback`, and waits
/// until it answers (at most a minute).
fn serve(dir: &Path) -> Wayback {
    let port = free_port();
    let child = Command::new("wayback")
        .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("wayback");
    let mut server = Wayback { child, port };
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(60) {
        if let Some(status) = server.child.try_wait().unwrap() {
            panic!("wayback exited early: {status}");
        }
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return server;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("wayback did not answer on port {port} within a minute");
}

/// pywb's answer to `GET /coll/<timestamp>id_/<url>`: status, header and
/// body.
fn replay(server: &Wayback, timestamp: &str, url: &str) -> (u16, String, Vec<u8>) {
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(stream, "GET /coll/{timestamp}id_/{url} HTTP/1.0\r\nHost: 127.0.0.1:{}\r\n\r\n", server.port).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let end = answer.windows(4).position(|w| w == b"\r\n\r\n").expect("an HTTP answer");
    let header = String::from_utf8_lossy(&answer[..end]).into_owned();
    let status = header.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("a status");
    (status, header, answer[end + 4..].to_vec())
}

/// Whether pywb's command line tools are here; when not, `false` with a
/// message, or a failure where they are required.
fn pywb_installed() -> bool {
    let found = Command::new("python3").args(["-c", "import pywb, warcio"]).output().is_ok_and(|o| o.status.success())
        && Command::new("wayback").arg("--help").output().is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            !required("NEARDUP_REQUIRE_PYWB"),
            "NEARDUP_REQUIRE_SHARED=1 but pywb is not installed (pip install pywb)"
        );
        eprintln!("skipped the pywb replay test: pywb is not installed (pip install pywb)");
    }
    found
}

#[test]
fn pywb_replays_kept_pages_and_identical_copies_and_never_another_page_for_a_near_duplicate() {
    if !pywb_installed() {
        return;
    }
    let root = temp_dir("replay");
    let input = root.join("input");
    std::fs::create_dir_all(&input).unwrap();
    let pages = pages();
    write_crawl(&input.join("crawl.warc.gz"), &pages);
    let out = root.join("out");
    run_ok(&["--quiet", "run", "--input", input.to_str().unwrap(), "--out", out.to_str().unwrap()]);

    // The crawl is what the test is about: the guide kept, its mirror a
    // byte-identical copy, 2.5 a near-duplicate, the printable version the
    // same text in other bytes.
    let decided = decisions(&out);
    let (kept, mirror, near, print) = (pages[0].url, pages[1].url, pages[2].url, pages[3].url);
    assert!(decided[kept].0, "{decided:?}");
    for (url, reason) in [(mirror, "exact_duplicate"), (near, "near_duplicate"), (print, "exact_duplicate")] {
        assert_eq!(decided[url], (false, reason.to_string(), Some(kept.to_string())), "{url}: {decided:?}");
    }

    let export = root.join("export");
    for removed in [false, true] {
        let mut args = vec!["--quiet", "export", "--out", out.to_str().unwrap(), "--to", export.to_str().unwrap()];
        args.extend(["--format", "warc"]);
        if removed {
            args.push("--removed");
        }
        let o = pipeline().args(&args).output().unwrap();
        assert!(o.status.success(), "export {args:?}: {}", String::from_utf8_lossy(&o.stderr));
        if removed {
            let line = String::from_utf8_lossy(&o.stdout);
            assert!(line.contains("note_records=2") && line.contains("revisit_records=1"), "{line}");
        }
    }
    let (kept_warc, removed_warc) = (export.join("kept.warc.gz"), export.join("removed.warc.gz"));

    // warcio checks every record's digests in both files.
    let check = Command::new("python3")
        .args(["-m", "warcio.cli", "check", "-v"])
        .args([&kept_warc, &removed_warc])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&check.stdout);
    assert!(check.status.success(), "warcio check: {report}{}", String::from_utf8_lossy(&check.stderr));
    assert!(report.matches("digest pass").count() >= 2, "the notes' block digests are checked: {report}");

    // A pywb collection of both files, indexed by pywb itself.
    let web = root.join("pywb");
    std::fs::create_dir_all(&web).unwrap();
    tool(&web, "wb-manager", &["init", "coll"]);
    tool(&web, "wb-manager", &["add", "coll", kept_warc.to_str().unwrap(), removed_warc.to_str().unwrap()]);
    let server = serve(&web);
    let timestamp = |p: &Page| p.date.chars().filter(char::is_ascii_digit).collect::<String>();
    let answers: Vec<(u16, String, Vec<u8>)> = pages.iter().map(|p| replay(&server, &timestamp(p), p.url)).collect();
    let shown =
        |a: &(u16, String, Vec<u8>)| format!("{}\n{:?}", a.1, String::from_utf8_lossy(&a.2[..a.2.len().min(80)]));

    // The kept page: its own bytes.
    assert_eq!(answers[0].0, 200, "{}", shown(&answers[0]));
    assert_eq!(answers[0].2, pages[0].html.as_bytes(), "the kept page answers its original bytes");
    // The byte-identical copy: those same bytes, which are its own.
    assert_eq!(answers[1].0, 200, "{}", shown(&answers[1]));
    assert_eq!(answers[1].2, pages[1].html.as_bytes(), "the identical copy answers its (the kept page's) bytes");
    // with its own HTTP header, which its revisit carries.
    assert!(answers[1].1.contains("X-Served-By: server-1"), "{}", answers[1].1);
    // The near-duplicate and the other bytes of the same text: not
    // archived (404, as docs/export-formats.md says), never another page.
    for i in [2, 3] {
        assert_eq!(answers[i].0, 404, "{}: {}", pages[i].url, shown(&answers[i]));
        for (j, other) in pages.iter().enumerate() {
            assert!(
                !answers[i].2.windows(other.html.len().min(200)).any(|w| other.html.as_bytes().starts_with(w)),
                "{} answers bytes of {}",
                pages[i].url,
                pages[j].url
            );
        }
    }
    // Unrelated pages are kept and answer their bytes.
    for i in [4, 5] {
        assert_eq!((answers[i].0, answers[i].2.as_slice()), (200, pages[i].html.as_bytes()), "{}", pages[i].url);
    }
}

//! Site boilerplate and the visible verification text, end to end: a
//! generated documentation site whose short release-notes pages share a
//! navigation and a footer and differ only in their article (versions,
//! dates, the component fixed). Verifying the kept terms of the whole page,
//! as the pipeline did before, calls them near-duplicates; verifying the
//! visible text without the template must not, and a real copy of one
//! article under a second URL must still be found.

use arrow::array::{Array, AsArray};
use arrow::datatypes::UInt64Type;
use std::collections::BTreeSet;
use std::path::Path;

mod common;
use common::{read_table, run_ok, temp_dir};

const HOST: &str = "https://docs.example.org";

/// The site's template: a navigation and a footer on every page.
fn page(title: &str, article: &str) -> String {
    format!(
        "<html><head><title>{title}</title></head><body>\
         <div class=nav><p>Example Project documentation</p><p>Home | Download | Documentation | Community | Security advisories | Mailing lists</p>\
         <p>Search the documentation</p></div>\
         <h1>{title}</h1>{article}\
         <div class=footer><p>Copyright 2024 The Example Project developers. All rights reserved.</p>\
         <p>Documentation licensed under the Creative Commons Attribution license; source available on the project site.</p></div>\
         </body></html>"
    )
}

/// Words the fixes of a release are written with.
const WORDS: [&str; 48] = [
    "parser",
    "network",
    "session",
    "cache",
    "config",
    "scheduler",
    "logger",
    "upload",
    "certificate",
    "plugin",
    "report",
    "command",
    "shutdown",
    "search",
    "index",
    "query",
    "timeout",
    "memory",
    "thread",
    "socket",
    "buffer",
    "crash",
    "leak",
    "error",
    "warning",
    "permission",
    "locale",
    "encoding",
    "header",
    "cookie",
    "redirect",
    "proxy",
    "fixed",
    "handles",
    "rejects",
    "accepts",
    "restores",
    "reads",
    "writes",
    "keeps",
    "drops",
    "empty",
    "large",
    "nested",
    "quoted",
    "invalid",
    "concurrent",
    "expired",
];

/// Three fixes of release `n`, each of eight words drawn by a seeded
/// generator: every release fixes different things.
fn fixes(n: usize) -> String {
    let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ (n as u64 + 1).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        WORDS[(state % WORDS.len() as u64) as usize]
    };
    (0..3).map(|_| format!("<p>The {}.</p>", (0..8).map(|_| next()).collect::<Vec<_>>().join(" "))).collect()
}

/// The release notes of version 3.N.P: one short article each, worded
/// alike as real release notes are, differing in versions, dates and fixes.
fn release_notes(minor: usize, patch: usize) -> (String, String) {
    let n = minor * 5 + patch;
    let title = format!("Example 3.{minor}.{patch} release notes");
    let article = format!(
        "<p>Released on 2024-{:02}-{:02}.</p><p>Example 3.{minor}.{patch} is a maintenance release of the 3.{minor} series.</p>\
         {}<p>All users of 3.{minor}.x should upgrade.</p>",
        1 + n % 12,
        1 + (n * 7) % 28,
        fixes(n),
    );
    (format!("{HOST}/releases/3.{minor}.{patch}.html"), page(&title, &article))
}

/// The corpus: 30 release notes, and one of them again under a print URL.
fn write_site(dir: &Path) -> (String, String) {
    let mut lines = String::new();
    let mut copy = (String::new(), String::new());
    for minor in 0..6 {
        for patch in 0..5 {
            let (url, html) = release_notes(minor, patch);
            if (minor, patch) == (2, 3) {
                copy = (url.clone(), format!("{url}?print=1"));
                let line = serde_json::json!({"id": copy.1, "url": copy.1, "html": html});
                lines.push_str(&format!("{line}\n"));
            }
            lines.push_str(&format!("{}\n", serde_json::json!({"id": url, "url": url, "html": html})));
        }
    }
    std::fs::write(dir.join("site.jsonl"), lines).unwrap();
    copy
}

/// The URL pairs the run calls near-duplicates: verified comparisons and
/// pairs of one cluster (`gold_quality`'s `final`).
fn found(out: &Path) -> BTreeSet<(String, String)> {
    let mut urls = std::collections::HashMap::new();
    for b in read_table(out, "documents") {
        let ids = b.column_by_name("doc_id").unwrap().as_primitive::<UInt64Type>();
        let u = b.column_by_name("url").unwrap().as_string::<i32>();
        for i in 0..b.num_rows() {
            urls.insert(ids.value(i), u.value(i).to_string());
        }
    }
    let mut pairs = BTreeSet::new();
    let mut add = |x: u64, y: u64| {
        let (x, y) = (urls[&x].clone(), urls[&y].clone());
        pairs.insert(if x < y { (x, y) } else { (y, x) });
    };
    for b in read_table(out, "duplicates") {
        let a = b.column_by_name("doc_a").unwrap().as_primitive::<UInt64Type>();
        let c = b.column_by_name("doc_b").unwrap().as_primitive::<UInt64Type>();
        let v = b.column_by_name("verified").unwrap().as_boolean();
        for i in (0..b.num_rows()).filter(|&i| v.value(i)) {
            add(a.value(i), c.value(i));
        }
    }
    let mut clusters: std::collections::BTreeMap<u64, Vec<u64>> = Default::default();
    for b in read_table(out, "clusters") {
        let d = b.column_by_name("doc_id").unwrap().as_primitive::<UInt64Type>();
        let c = b.column_by_name("cluster_id").unwrap().as_primitive::<UInt64Type>();
        for i in 0..b.num_rows() {
            clusters.entry(c.value(i)).or_default().push(d.value(i));
        }
    }
    for members in clusters.values() {
        for (i, &x) in members.iter().enumerate() {
            for &y in &members[i + 1..] {
                add(x, y);
            }
        }
    }
    pairs
}

fn run(dir: &Path, name: &str, config: &str) -> std::path::PathBuf {
    let out = dir.join(name);
    let config_path = dir.join(format!("{name}.toml"));
    std::fs::write(&config_path, config).unwrap();
    run_ok(&[
        "--quiet",
        "run",
        "--input",
        dir.join("site.jsonl").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--config",
        config_path.to_str().unwrap(),
    ]);
    out
}

#[test]
fn release_notes_sharing_a_template_are_not_near_duplicates() {
    let dir = temp_dir("boilerplate");
    let (original, print_copy) = write_site(&dir);
    let copy = if original < print_copy { (original, print_copy) } else { (print_copy, original) };

    // Before: the kept terms of the whole page (template included).
    let before = run(&dir, "terms", "[boilerplate]\nmin_pages = 1000000\n[verify]\ntext = \"terms\"\n");
    let before = found(&before);
    assert!(
        before.len() > 10,
        "the template alone must make distinct release notes look alike with the old text ({} pairs)",
        before.len()
    );

    // Now (defaults): the template lines are found and left out.
    let out = run(&dir, "visible", "");
    let boilerplate = read_table(&out, "boilerplate");
    let hosts: BTreeSet<String> = boilerplate
        .iter()
        .flat_map(|b| {
            let h = b.column_by_name("host").unwrap().as_string::<i32>().clone();
            (0..h.len()).map(move |i| h.value(i).to_string())
        })
        .collect();
    let template_lines: usize = boilerplate.iter().map(|b| b.num_rows()).sum();
    assert_eq!(hosts, BTreeSet::from(["docs.example.org".to_string()]));
    // Three navigation lines, two footer lines; "All users of 3.N.x should
    // upgrade." is on 5 of 31 pages (under 10 pages): content, kept.
    assert_eq!(template_lines, 5);
    let mut removed = Vec::new();
    for b in read_table(&out, "tokens") {
        let lines = b.column_by_name("boilerplate_lines").unwrap().as_primitive::<arrow::datatypes::UInt32Type>();
        removed.extend(lines.values().iter().copied());
    }
    assert!(removed.iter().all(|&n| n == 5), "every page loses its 5 template lines: {removed:?}");

    let after = found(&out);
    assert_eq!(after, BTreeSet::from([copy.clone()]), "only the real copy is a near-duplicate");
    // The words of the same text (no punctuation) tell the pages apart too.
    let words = found(&run(&dir, "words", "[verify]\ntext = \"words\"\n"));
    assert_eq!(words, after);
    println!("pairs found: kept terms with the template {}, visible text {}", before.len(), after.len());

    // explain names the lines left out.
    let doc_id =
        read_table(&out, "documents")[0].column_by_name("doc_id").unwrap().as_primitive::<UInt64Type>().value(0);
    let explained =
        common::pipeline().args(["explain", "--out", out.to_str().unwrap(), &doc_id.to_string()]).output().unwrap();
    let text = String::from_utf8_lossy(&explained.stdout);
    assert!(text.contains("5 of ") && text.contains("- Search the documentation"), "{text}");
}

/// A shop of 52 product pages sharing the site's template, written as a
/// corpus file; with `copies`, page 7 again under 12 `?sid=` URLs and page
/// 30 under 12 `utm_*` URLs, as a crawler caught in session ids and
/// newsletter links fetches them.
fn write_shop(dir: &Path, name: &str, copies: bool) -> std::path::PathBuf {
    let mut lines = String::new();
    let mut push = |url: &str, html: &str| {
        lines.push_str(&format!("{}\n", serde_json::json!({"id": url, "url": url, "html": html})));
    };
    for n in 0..52 {
        let url = format!("https://shop.example.net/products/{n}.html");
        let html = page(&format!("Product {n}"), &fixes(100 + n));
        push(&url, &html);
        for copy in 0..12 {
            match n {
                7 if copies => push(&format!("{url}?sid={:08x}", 0x5eed_0000 + copy * 7919), &html),
                30 if copies => push(&format!("{url}?utm_source=newsletter&utm_campaign=week{copy}"), &html),
                _ => {}
            }
        }
    }
    let path = dir.join(format!("{name}.jsonl"));
    std::fs::write(&path, lines).unwrap();
    path
}

/// The visible text (`tokens.text`) of every document of a run, by URL.
fn visible_texts(out: &Path) -> std::collections::BTreeMap<String, String> {
    let mut urls = std::collections::HashMap::new();
    for b in read_table(out, "documents") {
        let ids = b.column_by_name("doc_id").unwrap().as_primitive::<UInt64Type>();
        let u = b.column_by_name("url").unwrap().as_string::<i32>();
        for i in 0..b.num_rows() {
            urls.insert(ids.value(i), u.value(i).to_string());
        }
    }
    let mut texts = std::collections::BTreeMap::new();
    for b in read_table(out, "tokens") {
        let ids = b.column_by_name("doc_id").unwrap().as_primitive::<UInt64Type>();
        let t = b.column_by_name("text").unwrap().as_string::<i32>();
        for i in 0..b.num_rows() {
            texts.insert(urls[&ids.value(i)].clone(), t.value(i).to_string());
        }
    }
    texts
}

#[test]
fn copies_under_url_variants_leave_every_visible_text_unchanged() {
    let dir = temp_dir("boilerplate_copies");
    let config = dir.join("minhash.toml");
    std::fs::write(&config, "[methods]\nenabled = [\"minhash\"]\n").unwrap();
    let run = |name: &str, copies: bool| {
        let input = write_shop(&dir, name, copies);
        let out = dir.join(name);
        let args = ["--quiet", "run", "--input", input.to_str().unwrap(), "--out", out.to_str().unwrap()];
        run_ok(&[&args[..], &["--config", config.to_str().unwrap()]].concat());
        visible_texts(&out)
    };
    let pages = run("pages", false);
    let with_copies = run("copies", true);
    assert_eq!((pages.len(), with_copies.len()), (52, 52 + 24));

    // Without copies: the template lines are left out and each product's
    // own three lines stay.
    for n in 0..52 {
        let text = &pages[&format!("https://shop.example.net/products/{n}.html")];
        for line in fixes(100 + n).split("</p>").filter(|l| !l.is_empty()) {
            assert!(text.contains(&line.trim_start_matches("<p>").to_lowercase()), "{n}: {text}");
        }
        assert!(!text.contains("search the documentation") && !text.contains("copyright"), "{n}: {text}");
    }

    // With copies: every document's visible text is its page's, however
    // many URLs the page was fetched under (12 of 76 URLs of the host were
    // enough to make page 7's and page 30's own lines template when pages
    // were counted by URL).
    for (url, text) in &with_copies {
        let page_url = url.split('?').next().unwrap();
        assert_eq!(text, &pages[page_url], "{url}");
    }
}

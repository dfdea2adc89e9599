//! The fast path of `html::extract` (the scanner) against html5ever's tree
//! (`html::extract_with_tree`): whenever the scanner claims a page, title,
//! text, `flattened` and links are the tree's. Checked on generated pages
//! (markup fragments of every kind the scanner handles or gives up on,
//! nested and misnested at random) and on every record of the real crawls
//! of `../shared/data/warc` and the sample crawl; `NEARDUP_SCAN_CRAWL=DIR`
//! adds the archives of another folder (the Javadoc crawl) and prints the
//! share of pages claimed and why the others were not.

mod common;

use neardup::ingest::html::{extract_with_tree, scan};
use neardup::ingest::settings::IngestConfig;
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Asserts that the scanner, when it claims `page`, gives the tree's result;
/// returns whether it claimed it (or why not).
fn check(page: &str, cfg: &IngestConfig) -> Result<(), &'static str> {
    let fast = scan(page, cfg)?;
    let tree = extract_with_tree(page, cfg).expect("a page the scanner claims is within the depth limit");
    assert_eq!(fast, tree, "scanner and tree differ on {page:?}");
    Ok(())
}

/// Markup pieces of every kind: what the scanner follows and what it leaves
/// to the tree builder.
const PIECES: &[&str] = &[
    "<div>",
    "</div>",
    "<p>",
    "</p>",
    "<b>",
    "</b>",
    "<i>",
    "</i>",
    "<a href=x>",
    "</a>",
    "<span>",
    "</span>",
    "<ul>",
    "</ul>",
    "<li>",
    "</li>",
    "<dl>",
    "<dt>",
    "<dd>",
    "</dl>",
    "<h1>",
    "</h1>",
    "<h2>",
    "</h3>",
    "<pre>",
    "</pre>",
    "<pre>\n",
    "<table>",
    "</table>",
    "<tr>",
    "</tr>",
    "<td>",
    "</td>",
    "<th>",
    "<tbody>",
    "</tbody>",
    "<caption>",
    "</caption>",
    "<thead>",
    "<col>",
    "<br>",
    "</br>",
    "<hr>",
    "<img src=a>",
    "<form>",
    "</form>",
    "<title>T &amp; t</title>",
    "<script>if (a<b) x()</script>",
    "<style>p{}</style>",
    "<noscript>n</noscript>",
    "<head>",
    "</head>",
    "<body>",
    "</body>",
    "</html>",
    "<html>",
    "<!-- c -->",
    "<!---->",
    "<!-->",
    "<!DOCTYPE html>",
    "<?pi?>",
    "</x>",
    "<custom-el>",
    "</custom-el>",
    "<FONT size=2>",
    "</FONT>",
    "<select>",
    "<svg>",
    "<textarea>",
    "<template>",
    "<button>",
    "<nobr>",
    "<link rel=canonical href='/c&amp;d'>",
    "<meta http-equiv=Refresh content=0>",
    "<iframe>i</iframe>",
    "<em>",
    "</em>",
    "<center>",
    "<blockquote>",
    "<legend>",
    "<section>",
    "</section>",
    "x",
    "y z",
    " ",
    "\n",
    "\r\n",
    "\t",
    "&amp;",
    "&lt;",
    "&nbsp;",
    "&copy",
    "&notit;",
    "&#65;",
    "&#x41",
    "&#128;",
    "&#0;",
    "&#13;",
    "&#",
    "&",
    "<",
    "a<b",
    "\u{a0}",
    "é",
    "&AMP;",
    "<p/>",
    "<div class='a>b'>",
    "</td >",
    "<TD>",
    "<Tr>",
];

fn page() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(PIECES), 0..40).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn scanner_agrees_with_the_tree_on_generated_pages(page in page()) {
        let _ = check(&page, &IngestConfig::default());
        // Tight limits: depth and attributes are left to the tree path.
        let tight = IngestConfig { max_html_depth: 6, max_html_attributes: 1, ..IngestConfig::default() };
        let _ = check(&page, &tight);
    }
}

/// Checks every page of `dirs`; returns (pages, claimed, reasons).
fn check_crawls(dirs: &[PathBuf]) -> (usize, usize, BTreeMap<&'static str, usize>) {
    let mut all = Vec::new();
    for dir in dirs {
        common::html_pages(dir, &mut all);
    }
    let cfg = IngestConfig::default();
    let mut why = BTreeMap::new();
    let mut claimed = 0;
    for (name, page) in &all {
        let result = std::panic::catch_unwind(|| check(page, &cfg));
        match result {
            Ok(Ok(())) => claimed += 1,
            Ok(Err(reason)) => *why.entry(reason).or_default() += 1,
            Err(_) => panic!("scanner and tree differ on {name}"),
        }
    }
    (all.len(), claimed, why)
}

#[test]
fn scanner_agrees_with_the_tree_on_real_crawls() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![root.join("sample-data")];
    let shared = root.join("../shared/data/warc");
    if shared.is_dir() {
        dirs.push(shared);
    } else {
        eprintln!("skipped: {} not found", shared.display());
    }
    let (total, claimed, why) = check_crawls(&dirs);
    eprintln!("scanner claimed {claimed} of {total} pages; left to the tree: {why:?}");
    assert!(claimed * 2 > total, "the scanner claims most real pages ({claimed} of {total})");
    if let Some(extra) = std::env::var_os("NEARDUP_SCAN_CRAWL") {
        let (total, claimed, why) = check_crawls(&[PathBuf::from(extra)]);
        eprintln!("NEARDUP_SCAN_CRAWL: scanner claimed {claimed} of {total} pages; left to the tree: {why:?}");
    }
}

//! Exact copies first (spec §9): a crawl that holds each page k times keeps
//! the same pages and removes the same near-duplicates as the crawl that
//! holds it once, whichever copy the keep rule picks; every further copy
//! of a page is an exact duplicate. And the invariants of the kept set
//! hold: no two kept documents share a verification text, no verified pair
//! joins two kept documents, every removed document names a kept one with
//! its similarity.
//!
//! k = 1, 2 and 10 here (debug build); scripts/copies.sh runs 20 and 50 too.

use std::path::{Path, PathBuf};

mod common;
use common::{pipeline, run_ok, temp_dir};

/// The rows of a query as CSV lines (header left out), sorted.
fn query(out: &Path, sql: &str) -> Vec<String> {
    let o = pipeline().args(["query", "--out", out.to_str().unwrap(), "--format", "csv", sql]).output().unwrap();
    assert!(o.status.success(), "{sql}: {}", String::from_utf8_lossy(&o.stderr));
    let mut rows: Vec<String> = String::from_utf8(o.stdout).unwrap().lines().skip(1).map(str::to_string).collect();
    rows.sort();
    rows
}

/// The one number a query gives.
fn number(out: &Path, sql: &str) -> u64 {
    let rows = query(out, sql);
    assert_eq!(rows.len(), 1, "{sql}: {rows:?}");
    rows[0].trim().parse().unwrap_or_else(|e| panic!("{sql}: {:?}: {e}", rows[0]))
}

/// A folder holding the bundled sample `k` times, as `k` files.
fn copied_sample(k: usize) -> PathBuf {
    let dir = temp_dir(&format!("copies-input-{k}"));
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/sample-crawl.warc.gz");
    for i in 0..k {
        std::fs::copy(&sample, dir.join(format!("copy-{i:02}.warc.gz"))).unwrap();
    }
    dir
}

/// What a run decided, by URL, whichever copy of a page it was: the kept
/// URLs, and the near-duplicates removed as (URL, kept URL, similarity),
/// an exact copy by the URL of its group's first.
#[derive(Debug, PartialEq)]
struct Outcome {
    kept: Vec<String>,
    near: Vec<String>,
}

fn outcome(out: &Path) -> Outcome {
    // A URL without the variant `url_variant` appended: the keep rule may
    // pick any copy of a page (a session id is its URL's canonical form).
    let page =
        |url: &str| format!("regexp_replace({url}, '[?&](sid=[0-9a-f]+|PHPSESSID=a[0-9]+b|utm_source=.*)$', '')");
    Outcome {
        kept: query(
            out,
            &format!("SELECT DISTINCT {} FROM decisions WHERE is_kept AND reason <> 'not_content'", page("url")),
        ),
        near: query(
            out,
            &format!(
                "SELECT DISTINCT {}, {}, ROUND(r.similarity, 9) FROM decisions r \
                 JOIN decisions k ON k.doc_id = r.duplicate_of LEFT JOIN decisions f ON f.doc_id = r.exact_copy_of \
                 WHERE r.reason = 'near_duplicate'",
                page("COALESCE(f.url, r.url)"),
                page("k.url")
            ),
        ),
    }
}

/// Documents with `reason`.
fn with_reason(out: &Path, reason: &str) -> u64 {
    number(out, &format!("SELECT COUNT(*) FROM decisions WHERE reason = '{reason}'"))
}

/// The invariants of the kept set (spec §9).
fn check_invariants(out: &Path) {
    // (a) No two kept documents share a verification text.
    assert_eq!(
        number(
            out,
            "SELECT COUNT(*) FROM (SELECT t.text_digest FROM decisions d JOIN tokens t ON t.doc_id = d.doc_id \
             WHERE d.is_kept GROUP BY t.text_digest HAVING COUNT(*) > 1)"
        ),
        0
    );
    // (b) No compared pair of two kept documents verified.
    assert_eq!(
        number(
            out,
            "SELECT COUNT(*) FROM duplicates p JOIN decisions a ON a.doc_id = p.doc_a \
             JOIN decisions b ON b.doc_id = p.doc_b WHERE a.is_kept AND b.is_kept"
        ),
        0
    );
    // (c) Every removed document names a kept one, with the similarity
    // verified: its own comparison, or its first's for an exact copy (1
    // when the first is the kept one).
    let removed = number(out, "SELECT COUNT(*) FROM decisions WHERE NOT is_kept");
    assert!(removed > 0);
    assert_eq!(
        number(
            out,
            "SELECT COUNT(*) FROM decisions r JOIN decisions k ON k.doc_id = r.duplicate_of \
             LEFT JOIN duplicates p ON p.doc_a = LEAST(COALESCE(r.exact_copy_of, r.doc_id), k.doc_id) \
                                   AND p.doc_b = GREATEST(COALESCE(r.exact_copy_of, r.doc_id), k.doc_id) \
             WHERE NOT r.is_kept AND k.is_kept AND k.reason = 'kept' \
               AND (p.similarity = r.similarity OR (r.exact_copy_of = k.doc_id AND r.similarity = 1))"
        ),
        removed
    );
    // An exact duplicate has the text of its kept copy, a near-duplicate not.
    assert_eq!(
        number(
            out,
            "SELECT COUNT(*) FROM decisions r JOIN tokens a ON a.doc_id = r.doc_id \
             JOIN tokens b ON b.doc_id = r.duplicate_of \
             WHERE (r.reason = 'exact_duplicate') <> (a.text_digest = b.text_digest)"
        ),
        0
    );
    // The copies were left out of the search: no candidate names one.
    assert_eq!(
        number(
            out,
            "SELECT COUNT(*) FROM candidates c JOIN exact_copies e ON e.doc_id = c.doc_a OR e.doc_id = c.doc_b"
        ),
        0
    );
}

#[test]
fn copies_of_the_sample_change_nothing_but_the_exact_duplicates() {
    let once = temp_dir("copies-1");
    run_ok(&["--quiet", "run", "--input", copied_sample(1).to_str().unwrap(), "--out", once.to_str().unwrap()]);
    check_invariants(&once);
    let expected = outcome(&once);
    assert_eq!(expected.kept.len(), 220, "the sample keeps its 220 originals");
    let (near, exact) = (with_reason(&once, "near_duplicate"), with_reason(&once, "exact_duplicate"));
    let kept_content = "SELECT COUNT(*) FROM decisions WHERE reason IN ('kept', 'unique')";
    let kept = number(&once, kept_content);
    assert_eq!(kept, 220);
    for k in [2u64, 10] {
        let out = temp_dir(&format!("copies-{k}"));
        let input = copied_sample(k as usize);
        run_ok(&["--quiet", "run", "--input", input.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        check_invariants(&out);
        assert_eq!(outcome(&out), expected, "{k} copies");
        assert_eq!(number(&out, kept_content), kept, "{k} copies");
        // Each copy of a near-duplicate is one; every other copy of a page
        // is an exact duplicate.
        assert_eq!(with_reason(&out, "near_duplicate"), k * near, "{k} copies");
        assert_eq!(with_reason(&out, "exact_duplicate"), k * exact + (k - 1) * kept, "{k} copies");
        // The largest group: a page and its copies.
        assert!(number(&out, "SELECT MAX(documents) FROM exact_groups") >= k);
        let _ = std::fs::remove_dir_all(&out);
        let _ = std::fs::remove_dir_all(&input);
    }
    let _ = std::fs::remove_dir_all(&once);
}

/// The sample with each record's URL given a variant a crawler makes up
/// (a session id, tracking parameters), as a plain (uncompressed) WARC:
/// only the `WARC-Target-URI` lines change (the record lengths count the
/// blocks after the headers).
fn url_variant(variant: usize) -> Vec<u8> {
    use std::io::Read;
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/sample-crawl.warc.gz");
    let mut warc = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(sample).unwrap()).read_to_end(&mut warc).unwrap();
    let parameter = match variant % 3 {
        0 => format!("sid={variant:08x}"),
        1 => format!("PHPSESSID=a{variant}b"),
        _ => format!("utm_source=feed{variant}&utm_medium=rss"),
    };
    let header = b"WARC-Target-URI: ";
    let mut out = Vec::with_capacity(warc.len() + 64 * 1024);
    let mut rest = &warc[..];
    while let Some(at) = rest.windows(header.len()).position(|w| w == header) {
        let end = at + rest[at..].iter().position(|&b| b == b'\r').unwrap();
        out.extend_from_slice(&rest[..end]);
        let url = &rest[at + header.len()..end];
        out.extend_from_slice(if url.contains(&b'?') { b"&" } else { b"?" });
        out.extend_from_slice(parameter.as_bytes());
        rest = &rest[end..];
    }
    out.extend_from_slice(rest);
    out
}

/// Copies under URL variants on the same host (`?sid=`, `PHPSESSID=`,
/// `utm_*`): the same pages kept (at one of their URLs) and the same
/// near-duplicates removed. Boilerplate is off in both runs: whether a
/// host's template depends on its number of copies is the boilerplate
/// stage's question, not this one's.
#[test]
fn copies_under_url_variants_change_nothing_but_the_exact_duplicates() {
    let dir = temp_dir("copies-variants");
    let config = dir.join("job.toml");
    std::fs::write(&config, "[boilerplate]\nmin_pages = 1000000\n").unwrap();
    let (once, input, variants) = (dir.join("once"), dir.join("input"), dir.join("variants"));
    std::fs::create_dir_all(&input).unwrap();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/sample-crawl.warc.gz");
    let config = config.to_str().unwrap();
    run_ok(&[
        "--quiet",
        "run",
        "--config",
        config,
        "--input",
        sample.to_str().unwrap(),
        "--out",
        once.to_str().unwrap(),
    ]);
    let expected = outcome(&once);
    let (near, exact) = (with_reason(&once, "near_duplicate"), with_reason(&once, "exact_duplicate"));
    let kept = number(&once, "SELECT COUNT(*) FROM decisions WHERE reason IN ('kept', 'unique')");
    std::fs::copy(&sample, input.join("copy-0.warc.gz")).unwrap();
    let k = 4u64;
    for variant in 1..k as usize {
        std::fs::write(input.join(format!("copy-{variant}.warc")), url_variant(variant)).unwrap();
    }
    let args = ["--quiet", "run", "--config", config, "--input", input.to_str().unwrap()];
    run_ok(&[&args[..], &["--out", variants.to_str().unwrap()]].concat());
    check_invariants(&variants);
    assert_eq!(outcome(&variants), expected);
    let urls = "SELECT COUNT(DISTINCT url) FROM decisions";
    assert_eq!(number(&variants, urls), k * number(&once, urls));
    assert_eq!(with_reason(&variants, "near_duplicate"), k * near);
    assert_eq!(with_reason(&variants, "exact_duplicate"), k * exact + (k - 1) * kept);
    let _ = std::fs::remove_dir_all(&dir);
}

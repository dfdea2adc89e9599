//! Micro-benchmarks of the pipeline's hot paths (divan).
//!
//! Why: the end-to-end numbers of `scripts/bench.sh` say which stage is
//! slow; these say which function inside it is, and catch regressions of one
//! function without a whole-pipeline run.
//!
//! Inputs are deterministic: the bundled sample crawl (`sample-data/`, always
//! in the repository), the real Archives Unleashed crawl of
//! `../shared/data/warc/aut/` when it is present (skipped with a note when
//! not), and texts and id sets generated here from a fixed seed.
//!
//! `cargo bench` runs them on the optimized `bench` profile (it inherits
//! `release`); `cargo test --benches` runs every benchmark once, unmeasured,
//! as a smoke test in the fast debug build.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use divan::counter::{BytesCount, ItemsCount};
use divan::{black_box, Bencher};

use neardup::config::Config;

use neardup::ingest::settings::IngestConfig;

use neardup::history::union_find::UnionFind;
use neardup::ingest::archive::{scan_archive, ArchiveEvent, RawRecord};
use neardup::ingest::record::{process_record, sniff_html};
use neardup::ingest::{html, http};
use neardup::methods::registry::{build_signers, StateSource};
use neardup::methods::settings::{MethodsConfig, MinHashSettings, SlstSettings, SpotSigsSettings};
use neardup::methods::shingles::{shingle_fingerprints, MinHasher};
use neardup::methods::slst::{SentenceString, Slst};
use neardup::methods::spotsigs::{multiset_jaccard, SpotSigs};
use neardup::methods::term_ids::TermIds;
use neardup::methods::{splitmix64, CorpusStats, DocView, PairMethod, TermStats};
use neardup::text::{Normalizer, Tokenized};
use neardup::verify::similarity::{similarity_at_least, string_similarity};

fn main() {
    divan::main();
}

/// The bundled synthetic crawl (295 HTML documents, near-duplicates included).
const SAMPLE_CRAWL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/sample-data/sample-crawl.warc.gz");
/// A real 2008 archive.org crawl (WARC/0.17, 299 responses), shared test data.
const AUT_CRAWL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/warc/aut/example.warc.gz");

/// The crawls the archive benchmarks read, by display name.
fn crawl_path(name: &str) -> Option<PathBuf> {
    let path = PathBuf::from(match name {
        "sample" => SAMPLE_CRAWL,
        "aut" => AUT_CRAWL,
        _ => return None,
    });
    if path.is_file() {
        Some(path)
    } else {
        eprintln!("skipped: {} not found", path.display());
        None
    }
}

/// Every record of a crawl, as the archive reader yields them.
fn raw_records(path: &Path) -> Vec<RawRecord> {
    let mut records = Vec::new();
    let max_block = IngestConfig::default().max_payload_bytes;
    scan_archive(path, max_block, &mut |event| {
        if let ArchiveEvent::Record(r) = event {
            records.push(r);
        }
    })
    .expect("bench crawl is readable");
    records
}

/// The sample crawl's records, read once.
static SAMPLE_RECORDS: LazyLock<Vec<RawRecord>> = LazyLock::new(|| raw_records(&PathBuf::from(SAMPLE_CRAWL)));

/// The sample crawl's documents: (text, lang) of each HTML page.
static SAMPLE_TEXTS: LazyLock<Vec<(String, String)>> = LazyLock::new(|| {
    let cfg = IngestConfig::default();
    SAMPLE_RECORDS
        .iter()
        .filter_map(|r| match process_record(r, "sample-crawl.warc.gz", &cfg) {
            neardup::ingest::record::Outcome::Document(d) => Some((d.text, d.lang)),
            _ => None,
        })
        .collect()
});

/// The sample crawl's documents after normalization, with made-up ids.
static SAMPLE_TOKENS: LazyLock<Vec<Tokenized>> = LazyLock::new(|| {
    let normalizer = Normalizer::new(&Config::default().text);
    SAMPLE_TEXTS.iter().map(|(text, lang)| normalizer.tokenize(text, lang)).collect()
});

/// The string lists of [`SAMPLE_TOKENS`] (terms, words, sentence heads) as
/// the borrowed lists methods read, like the stages' views of the tokens table.
static SAMPLE_LISTS: LazyLock<Vec<[Vec<&'static str>; 3]>> = LazyLock::new(|| {
    let strs = |v: &'static [String]| v.iter().map(String::as_str).collect();
    SAMPLE_TOKENS.iter().map(|t| [strs(&t.terms), strs(&t.words), strs(&t.sentence_heads)]).collect()
});

fn sample_views() -> Vec<DocView<'static>> {
    SAMPLE_TOKENS
        .iter()
        .zip(SAMPLE_LISTS.iter())
        .enumerate()
        .map(|(i, (t, [terms, words, heads]))| DocView {
            doc_id: i as u64,
            terms,
            sentence_ends: &t.sentence_ends,
            words,
            sentence_lengths: &t.sentence_lengths,
            sentence_heads: heads,
            ..DocView::default()
        })
        .collect()
}

/// df, cf, N and the mean length of the sample documents, as the `df` and
/// `corpus_stats` tables would hold them.
static SAMPLE_STATS: LazyLock<CorpusStats> = LazyLock::new(|| {
    let mut terms: std::collections::HashMap<String, TermStats> = Default::default();
    let mut total_terms = 0usize;
    for t in SAMPLE_TOKENS.iter() {
        total_terms += t.terms.len();
        let mut seen = std::collections::HashSet::new();
        for term in &t.terms {
            let entry = terms.entry(term.clone()).or_default();
            entry.cf += 1;
            if seen.insert(term.as_str()) {
                entry.df += 1;
            }
        }
    }
    let n = SAMPLE_TOKENS.len();
    CorpusStats { n_docs: n as u64, dl_avg: total_terms as f64 / n.max(1) as f64, terms: terms.into_iter().collect() }
});

/// The HTML payloads of the sample crawl that are stored without transfer
/// or content encoding (almost all of them), decoded with their charset.
static SAMPLE_HTML: LazyLock<Vec<String>> = LazyLock::new(|| {
    SAMPLE_RECORDS
        .iter()
        .filter(|r| r.record_type == "response")
        .filter_map(|r| {
            let resp = http::parse_response(&r.block).ok()?;
            let plain = resp.header("transfer-encoding").is_none() && resp.header("content-encoding").is_none();
            let body = &r.block[resp.body_start.min(r.block.len())..];
            (plain && sniff_html(body)).then(|| html::decode(body, html::decide_charset(body, None).0).into_owned())
        })
        .collect()
});

/// Archive scanning (gzip members, WARC headers, blocks) of a whole file.
#[divan::bench(args = ["sample", "aut"])]
fn archive_scan(bencher: Bencher, crawl: &str) {
    let Some(path) = crawl_path(crawl) else { return };
    let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
    let max_block = IngestConfig::default().max_payload_bytes;
    bencher.counter(BytesCount::new(bytes)).bench(|| {
        let mut records = 0usize;
        scan_archive(&path, max_block, &mut |_| records += 1).expect("bench crawl is readable");
        records
    });
}

/// `process_record` (HTTP, charset, HTML extraction, language) on every
/// record of a crawl.
#[divan::bench(args = ["sample", "aut"])]
fn process_records(bencher: Bencher, crawl: &str) {
    let Some(path) = crawl_path(crawl) else { return };
    let records = if crawl == "sample" { SAMPLE_RECORDS.clone() } else { raw_records(&path) };
    let bytes: u64 = records.iter().map(|r| r.block.len() as u64).sum();
    let cfg = IngestConfig::default();
    bencher.counter(BytesCount::new(bytes)).bench(|| {
        for r in &records {
            black_box(process_record(r, "bench.warc.gz", &cfg));
        }
    });
}

/// HTML → title and visible text, alone: the scanner for the pages it
/// claims, the html5ever parse for the others.
#[divan::bench]
fn html_extract(bencher: Bencher) {
    let pages = &*SAMPLE_HTML;
    let bytes: usize = pages.iter().map(String::len).sum();
    bencher.counter(BytesCount::new(bytes)).bench(|| {
        for page in pages {
            black_box(html::extract(page, &neardup::ingest::settings::IngestConfig::default()).ok());
        }
    });
}

/// [`html_extract`] with html5ever's tree for every page (the path before
/// the scanner, and still the one for the pages it leaves): the two side by
/// side tell what the scanner saves.
#[divan::bench]
fn html_extract_tree(bencher: Bencher) {
    let pages = &*SAMPLE_HTML;
    let bytes: usize = pages.iter().map(String::len).sum();
    bencher.counter(BytesCount::new(bytes)).bench(|| {
        for page in pages {
            black_box(html::extract_with_tree(page, &neardup::ingest::settings::IngestConfig::default()).ok());
        }
    });
}

/// Normalization: NFKC, sentences, words, stop words, in the buffers the
/// tokens stage writes from.
#[divan::bench]
fn tokenize(bencher: Bencher) {
    let normalizer = Normalizer::new(&Config::default().text);
    let texts = &*SAMPLE_TEXTS;
    let bytes: usize = texts.iter().map(|(t, _)| t.len()).sum();
    bencher.counter(BytesCount::new(bytes)).bench(|| {
        for (text, lang) in texts {
            black_box(normalizer.tokenize_compact(text, lang));
        }
    });
}

/// Shingle fingerprints (width 10) and the 84 min-wise hashes of each document.
#[divan::bench]
fn minhash_sketch(bencher: Bencher) {
    let cfg = MinHashSettings::default();
    let hasher = MinHasher::new(cfg.functions, cfg.seed);
    let docs = &*SAMPLE_LISTS;
    bencher.counter(ItemsCount::new(docs.len())).bench(|| {
        for [terms, ..] in docs {
            let fps = shingle_fingerprints(terms, cfg.shingle_width);
            black_box(hasher.sketch(&fps));
        }
    });
}

/// Every signature method of the registry signing every sample document
/// (the corpus-wide state is built once, outside the measurement).
#[divan::bench(args = ["a0", "a1", "a2", "a3", "a10", "a4", "a5", "imatch", "a7", "a9", "a6", "a8"])]
fn signature_method(bencher: Bencher, id: &str) {
    let mut docs = sample_views();
    // The stage looks the terms up once per chunk, outside the methods.
    let ids = TermIds::of(&docs, &SAMPLE_STATS.terms);
    ids.attach(&mut docs);
    let config = MethodsConfig::default();
    let sample = neardup::methods::descr::sample_in_memory(&config.descr, &SAMPLE_STATS, &docs);
    let methods = build_signers(&[id.to_string()], &config, &SAMPLE_STATS, StateSource::Corpus(&sample));
    let method = methods.first().expect("every benchmarked id is a signature method");
    bencher.counter(ItemsCount::new(docs.len())).bench(|| {
        let mut out = Vec::new();
        for d in &docs {
            method.sign(d, &mut out);
        }
        out
    });
}

/// SpotSigs multisets of every sample document, then the multiset Jaccard of
/// every pair among the first 100 documents (4,950 comparisons).
#[divan::bench]
fn spotsigs_jaccard(bencher: Bencher) {
    let spot = SpotSigs::new(&SpotSigsSettings::default());
    let sets: Vec<Vec<(String, u32)>> =
        SAMPLE_LISTS.iter().take(100).map(|[_, words, _]| spot.spot_signatures(words)).collect();
    let pairs = sets.len() * sets.len().saturating_sub(1) / 2;
    bencher.counter(ItemsCount::new(pairs)).bench(|| {
        let mut sum = 0.0;
        for (i, a) in sets.iter().enumerate() {
            for b in &sets[i + 1..] {
                sum += multiset_jaccard(a, b);
            }
        }
        sum
    });
}

/// SpotSigs' keys and encoded form of every document (spot signatures,
/// their multiset, its bytes): the per-document part of the search the
/// `search` stage runs.
#[divan::bench]
fn spotsigs_encode(bencher: Bencher) {
    let spot = SpotSigs::new(&SpotSigsSettings::default());
    let docs = sample_views();
    bencher.counter(ItemsCount::new(docs.len())).bench(|| docs.iter().filter_map(|d| spot.keyed().encode(d)).count());
}

/// SL+ST's keys and encoded form of every document (sentence-length
/// string, runs of m sentences): the per-document part of its search.
#[divan::bench]
fn slst_encode(bencher: Bencher) {
    let slst = Slst::new(&SlstSettings::default());
    let docs = sample_views();
    bencher.counter(ItemsCount::new(docs.len())).bench(|| docs.iter().filter_map(|d| slst.keyed().encode(d)).count());
}

/// SL+ST verification of one pair: a document against itself with its
/// sentence order rotated by one (so blocks must be found, not just equal).
#[divan::bench]
fn slst_score_pair(bencher: Bencher) {
    let slst = Slst::new(&SlstSettings::default());
    let docs = sample_views();
    let rule = SlstSettings::default().sentence_words;
    let longest = docs.iter().max_by_key(|d| d.sentence_ends.len()).expect("sample has documents");
    let x = SentenceString::from_view(longest, rule);
    let (mut lengths, mut heads) = (longest.sentence_lengths.to_vec(), longest.sentence_heads.to_vec());
    lengths.rotate_left(1);
    heads.rotate_left(1);
    let rotated = DocView { doc_id: 1, sentence_lengths: &lengths, sentence_heads: &heads, ..*longest };
    let y = SentenceString::from_view(&rotated, rule);
    bencher.bench(|| slst.score(&x, &y));
}

/// A deterministic English-like text of about `chars` characters.
fn generated_text(chars: usize, seed: u64) -> String {
    const SYLLABLES: [&str; 16] =
        ["ka", "lo", "mer", "tin", "sa", "vor", "el", "du", "pra", "nis", "ot", "qua", "ri", "ben", "ful", "zo"];
    let mut state = seed;
    let mut text = String::with_capacity(chars + 16);
    while text.len() < chars {
        let syllables = 1 + splitmix64(&mut state) % 3;
        for _ in 0..syllables {
            text.push_str(SYLLABLES[(splitmix64(&mut state) % 16) as usize]);
        }
        text.push(' ');
    }
    text.truncate(chars);
    text
}

/// `text` with about one word in 20 replaced, so the two are near-duplicates
/// (similarity about 0.9).
fn lightly_edited(text: &str, seed: u64) -> String {
    let mut state = seed;
    text.split(' ')
        .map(|w| if splitmix64(&mut state).is_multiple_of(20) { "edit" } else { w })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Verification at the 0.8 limit on a near-duplicate pair (runs the full
/// bit-parallel LCS), by text length in characters.
#[divan::bench(args = [1_000, 10_000, 50_000])]
fn similarity_near_duplicate(bencher: Bencher, chars: usize) {
    let a = generated_text(chars, 7);
    let b = lightly_edited(&a, 8);
    assert!(similarity_at_least(&a, &b, 0.8).is_some(), "the edited text must stay a near-duplicate");
    bencher.counter(BytesCount::new(a.len() + b.len())).bench(|| similarity_at_least(&a, &b, 0.8));
}

/// Verification at the 0.8 limit on two unrelated texts of equal length
/// (the LCS upper bound stops the scan early).
#[divan::bench(args = [1_000, 10_000, 50_000])]
fn similarity_unrelated(bencher: Bencher, chars: usize) {
    let a = generated_text(chars, 7);
    let b = generated_text(chars, 9);
    bencher.counter(BytesCount::new(a.len() + b.len())).bench(|| similarity_at_least(&a, &b, 0.8));
}

/// `text` with runs of 12 words (a run starts at one word in 25) replaced
/// by other words: edits dense and clustered, where the Perl module's
/// searches give up (exact similarity 0.81–0.82 at 1,000–50,000 chars, the
/// module's up to 0.0023 lower).
fn rewritten_in_runs(text: &str, seed: u64) -> String {
    let mut state = seed;
    let other = generated_text(text.len(), seed);
    let mut replacements = other.split(' ');
    let mut words = Vec::new();
    let mut run = 0;
    for word in text.split(' ') {
        if run == 0 && splitmix64(&mut state).is_multiple_of(25) {
            run = 12;
        }
        if run > 0 {
            run -= 1;
            words.push(replacements.next().unwrap_or("edit"));
        } else {
            words.push(word);
        }
    }
    words.join(" ")
}

/// `[verify] algorithm = "string-similarity"` at the 0.8 limit on the pair
/// of `similarity_near_duplicate` (the searches meet before giving up).
#[divan::bench(args = [1_000, 10_000, 50_000])]
fn string_similarity_near_duplicate(bencher: Bencher, chars: usize) {
    let a = generated_text(chars, 7);
    let b = lightly_edited(&a, 8);
    bencher.counter(BytesCount::new(a.len() + b.len())).bench(|| string_similarity::similarity_at_least(&a, &b, 0.8));
}

/// The exact similarity at the 0.8 limit on a pair with clustered edits.
#[divan::bench(args = [1_000, 10_000, 50_000])]
fn similarity_rewritten_runs(bencher: Bencher, chars: usize) {
    let a = generated_text(chars, 7);
    let b = rewritten_in_runs(&a, 10);
    bencher.counter(BytesCount::new(a.len() + b.len())).bench(|| similarity_at_least(&a, &b, 0.8));
}

/// The Perl module's similarity at the 0.8 limit on the same pair (its
/// searches give up on the long ones).
#[divan::bench(args = [1_000, 10_000, 50_000])]
fn string_similarity_rewritten_runs(bencher: Bencher, chars: usize) {
    let a = generated_text(chars, 7);
    let b = rewritten_in_runs(&a, 10);
    bencher.counter(BytesCount::new(a.len() + b.len())).bench(|| string_similarity::similarity_at_least(&a, &b, 0.8));
}

/// Union-find over `n` sparse ids with n/2 random unions, then the
/// canonical components, as the cluster stage does.
#[divan::bench(args = [10_000, 100_000, 1_000_000])]
fn union_find(bencher: Bencher, n: usize) {
    let mut state = 3;
    let ids: Vec<u64> = (0..n).map(|_| splitmix64(&mut state)).collect();
    let unions: Vec<(u64, u64)> = (0..n / 2)
        .map(|_| (ids[splitmix64(&mut state) as usize % n], ids[splitmix64(&mut state) as usize % n]))
        .collect();
    bencher.counter(ItemsCount::new(n)).bench(|| {
        let mut uf = UnionFind::new();
        for &id in &ids {
            uf.insert(id);
        }
        for &(a, b) in &unions {
            uf.union(a, b);
        }
        uf.components().len()
    });
}

//! Language detection: the vendored whatlang (`vendor/whatlang`, faster
//! profile distances and alphabet counts) against the upstream crate
//! (`whatlang-upstream`, the same version from crates.io). `documents.lang`
//! picks each page's stop words, so the two must agree exactly: language,
//! script and confidence to the bit, on every page of the sample and the
//! shared crawls (markup and extracted text) and on generated texts mixing
//! words of many languages and scripts.

mod common;

use neardup::ingest::html::extract;
use neardup::ingest::settings::IngestConfig;
use proptest::prelude::*;
use std::path::Path;

/// What `detect` says, in a form both crates' types map to.
type Verdict = Option<(String, String, u64)>;

fn ours(text: &str) -> Verdict {
    whatlang::detect(text).map(|i| (format!("{:?}", i.lang()), format!("{:?}", i.script()), i.confidence().to_bits()))
}

fn upstream(text: &str) -> Verdict {
    whatlang_upstream::detect(text)
        .map(|i| (format!("{:?}", i.lang()), format!("{:?}", i.script()), i.confidence().to_bits()))
}

/// The first `chars` characters of `text`.
fn head(text: &str, chars: usize) -> &str {
    text.char_indices().nth(chars).map_or(text, |(i, _)| &text[..i])
}

#[test]
fn vendored_detection_is_the_upstreams_on_real_pages() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = Vec::new();
    common::html_pages(&root.join("sample-data"), &mut pages);
    if let Some(shared) = common::shared_data("warc") {
        common::html_pages(&shared, &mut pages);
    }
    let cfg = IngestConfig::default();
    let mut languages = std::collections::BTreeSet::new();
    for (name, page) in &pages {
        let text = extract(page, &cfg).map(|e| e.text).unwrap_or_default();
        // What ingest looks at (the text's first 10,000 characters), more
        // of the text, and the markup itself (other scripts, odd trigrams).
        for sample in [head(&text, 10_000), head(&text, 40_000), head(page, 20_000)] {
            let verdict = ours(sample);
            assert_eq!(verdict, upstream(sample), "{name}: {:?}", head(sample, 200));
            if let Some((lang, _, _)) = verdict {
                languages.insert(lang);
            }
        }
    }
    assert!(pages.len() > 100, "the crawls give pages ({})", pages.len());
    eprintln!("{} pages, languages seen: {languages:?}", pages.len());
}

/// Words of many languages and scripts, with the accents and letters that
/// set alphabets apart.
const WORDS: &[&str] = &[
    "the",
    "and",
    "which",
    "nothing",
    "documentation",
    "über",
    "straße",
    "Mädchen",
    "früh",
    "déjà",
    "très",
    "garçon",
    "où",
    "niño",
    "años",
    "¿qué",
    "señor",
    "ação",
    "não",
    "coração",
    "żółć",
    "gęś",
    "łódź",
    "český",
    "příliš",
    "dobře",
    "ünlü",
    "ağaç",
    "kış",
    "İstanbul",
    "været",
    "blåbær",
    "øl",
    "färg",
    "översätt",
    "hyvää",
    "päivää",
    "ĉiu",
    "ŝanĝo",
    "Việt",
    "nước",
    "привет",
    "мир",
    "говорить",
    "їжак",
    "ґанок",
    "шчасце",
    "здраво",
    "ђак",
    "мајка",
    "العربية",
    "مرحبا",
    "کتاب",
    "شکریہ",
    "שלום",
    "עברית",
    "ייִדיש",
    "नमस्ते",
    "हिन्दी",
    "मराठी",
    "नेपाल",
    "中文",
    "你好",
    "世界",
    "日本語",
    "ひらがな",
    "カタカナ",
    "한국어",
    "ελληνικά",
    "γεια",
    "ქართული",
    "বাংলা",
    "ಕನ್ನಡ",
    "தமிழ்",
    "ไทย",
    "ગુજરાતી",
    "ਪੰਜਾਬੀ",
    "తెలుగు",
    "മലയാളം",
    "ଓଡ଼ିଆ",
    "မြန်မာ",
    "සිංහල",
    "ខ្មែរ",
    "Հայերեն",
    "አማርኛ",
    "42",
    "3.14",
    "—",
    "(x)",
    "foo_bar",
    "a",
    "I",
    "de",
    "la",
    "и",
    "в",
];

fn generated_text() -> impl Strategy<Value = String> {
    (prop::collection::vec((0..WORDS.len(), 0u8..8), 0..400), 0..WORDS.len()).prop_map(|(words, lean)| {
        let mut text = String::new();
        for (word, punctuation) in words {
            // Lean on one word's neighbourhood so that texts have a main
            // language, not only an even mix.
            let word = if punctuation < 4 { (lean + word % 6) % WORDS.len() } else { word };
            text.push_str(WORDS[word]);
            text.push_str(match punctuation {
                0 => ". ",
                1 => ", ",
                2 => "\n",
                _ => " ",
            });
        }
        text
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn vendored_detection_is_the_upstreams_on_generated_texts(text in generated_text()) {
        prop_assert_eq!(ours(&text), upstream(&text));
    }
}

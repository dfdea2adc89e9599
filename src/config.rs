//! The job configuration: every tunable parameter of every stage, with its
//! default. `jobs/default.toml` mirrors these defaults one to one (a test
//! checks that), CLI flags override them, and each stage records the part it
//! used in its manifest so a run can be explained and reproduced later.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// The whole job configuration, one section per stage or method family.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub ingest: IngestConfig,
    pub text: TextConfig,
    pub boilerplate: BoilerplateConfig,
    pub methods: MethodsConfig,
    pub candidates: CandidatesConfig,
    pub verify: VerifyConfig,
    pub evaluate: EvaluateConfig,
}

impl Config {
    /// Reads a TOML job file; missing keys keep their defaults, unknown keys
    /// are an error (a typo must not silently fall back to a default).
    pub fn from_file(path: &Path) -> anyhow::Result<Config> {
        let text =
            std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("cannot read config {}: {e}", path.display()))?;
        let config: Config =
            toml::from_str(&text).map_err(|e| anyhow::anyhow!("bad config {}: {e}", path.display()))?;
        let valid = config.ingest.validate().and_then(|()| config.boilerplate.validate());
        valid.map_err(|e| anyhow::anyhow!("bad config {}: {e}", path.display()))?;
        Ok(config)
    }
}

/// WARC/ARC and corpus ingest limits. Together they keep the work spent on
/// one record roughly linear in its size, whatever an adversary or a damaged
/// file puts in it (see the README, "Bad input").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IngestConfig {
    /// Records whose HTTP payload is larger than this, before or after
    /// undoing its Content-Encoding, are rejected as `too_large`; archive
    /// blocks are held in memory up to this (plus 1 MB of HTTP header) and
    /// the rest is read past.
    pub max_payload_bytes: u64,
    /// Documents whose extracted text is shorter (in characters) are rejected as `empty_text`.
    pub min_text_chars: u64,
    /// HTML elements nested deeper than this are flattened: the page is
    /// parsed again with the elements beyond this depth dropped (block
    /// elements become line breaks, text is kept), as browsers flatten such
    /// pages. A page whose tree still nests deeper than twice this is
    /// rejected as `too_deep`. The HTML tree builder's work per element grows
    /// with the depth, so this bounds a page's parse to O(size × depth).
    pub max_html_depth: u32,
    /// HTML tags are cut after this many attributes (the rest dropped; the
    /// document counts as flattened): the tokenizer compares each attribute
    /// with the earlier ones of its tag, so a tag's cost is this squared.
    pub max_html_attributes: u32,
    /// A document's text is cut to at most this many bytes (at a character
    /// boundary) and counted in `ingest_files.text_truncated`: every later
    /// stage, verification's LCS above all, pays for text length.
    pub max_text_bytes: u64,
}

impl Default for IngestConfig {
    fn default() -> Self {
        IngestConfig {
            max_payload_bytes: 20 << 20,
            min_text_chars: 1,
            max_html_depth: 512,
            max_html_attributes: 256,
            max_text_bytes: 4 << 20,
        }
    }
}

/// Site boilerplate (`jobs/boilerplate.sql`): which lines of a host are
/// template, left out of the text signatures and verification see.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BoilerplateConfig {
    /// A line is template only when found on at least this many distinct
    /// URLs of its host (and hosts with fewer pages have no template).
    pub min_pages: u64,
    /// ... and on at least this share of the host's distinct URLs.
    pub min_share: f64,
}

impl BoilerplateConfig {
    /// Refuses thresholds that would call a page's own content template.
    pub fn validate(&self) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.min_pages >= 2,
            "[boilerplate] min_pages must be at least 2 (a line of one page is its content), not {}",
            self.min_pages
        );
        anyhow::ensure!(
            (0.0..=1.0).contains(&self.min_share),
            "[boilerplate] min_share must be between 0 and 1, not {}",
            self.min_share
        );
        Ok(())
    }
}

impl Default for BoilerplateConfig {
    fn default() -> Self {
        BoilerplateConfig { min_pages: 10, min_share: 0.05 }
    }
}

impl IngestConfig {
    /// Refuses limits that would reject every record or lift a bound
    /// altogether: a zero limit is always a mistake in the job file.
    pub fn validate(&self) -> anyhow::Result<()> {
        for (name, value) in [
            ("max_payload_bytes", self.max_payload_bytes),
            ("max_html_depth", u64::from(self.max_html_depth)),
            ("max_html_attributes", u64::from(self.max_html_attributes)),
            ("max_text_bytes", self.max_text_bytes),
        ] {
            anyhow::ensure!(value > 0, "[ingest] {name} must be at least 1, not {value}");
        }
        for (name, value) in
            [("max_html_depth", self.max_html_depth), ("max_html_attributes", self.max_html_attributes)]
        {
            anyhow::ensure!(
                value <= MAX_HTML_LIMIT,
                "[ingest] {name} must be at most {MAX_HTML_LIMIT} (the parse costs size × this), not {value}"
            );
        }
        Ok(())
    }
}

/// The largest `max_html_depth` and `max_html_attributes` accepted: beyond
/// it a hostile page could cost minutes again (a 1 MB page is 200,000
/// elements; at depth 10,000 each costs ~10,000 steps of the tree builder).
pub const MAX_HTML_LIMIT: u32 = 10_000;

/// Text normalization (spec §0).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TextConfig {
    /// Remove the stop words of the document's language.
    pub remove_stop_words: bool,
    /// Words of this many characters or fewer are removed (study §5: 3).
    pub max_short_word_chars: usize,
    /// Apply Unicode NFKC before splitting.
    pub nfkc: bool,
    /// How CJK runs become words: `char` (one word per character).
    pub cjk_segmentation: CjkSegmentation,
}

/// How runs of Han, kana and Hangul become words (spec §0 step 3). An enum
/// rather than a string so that a typo in the job file is a parse error, not
/// a silent fallback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CjkSegmentation {
    /// Every Han, Hiragana, Katakana and Hangul character is one word. Needs
    /// no dictionary and never glues a sentence into one giant word.
    Char,
}

impl Default for TextConfig {
    fn default() -> Self {
        TextConfig {
            remove_stop_words: true,
            max_short_word_chars: 3,
            nfkc: true,
            cjk_segmentation: CjkSegmentation::Char,
        }
    }
}

/// Parameters of the signature methods (spec §1–§8).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MethodsConfig {
    /// Methods run when `--methods` is not given.
    pub enabled: Vec<String>,
    /// a1, a2, a3, a10: how many top-weighted terms make the signature.
    pub top_words: usize,
    /// a2, a5: Okapi BM25 k.
    pub bm25_k: f64,
    /// a2, a5: Okapi BM25 b.
    pub bm25_b: f64,
    /// a4, a5: how many sentences make the signature.
    pub top_sentences: usize,
    /// imatch, a7: lower bound of the normalized IDF band ln(N/df)/ln(N).
    pub imatch_idf_low: f64,
    /// imatch, a7: upper bound of the normalized IDF band.
    pub imatch_idf_high: f64,
    /// imatch, a7: documents with fewer lexicon terms get no signature.
    pub imatch_min_features: usize,
    /// a7: number of extra lexicons K.
    pub lexrand_extra_lexicons: usize,
    /// a7: fraction p of the main lexicon removed in each extra lexicon.
    pub lexrand_drop_fraction: f64,
    /// a7: seed of the random lexicon reductions.
    pub lexrand_seed: u64,
    /// a9: number of descriptive words kept (at most).
    pub descr_max_words: usize,
    /// a9: candidate pool size (highest df first).
    pub descr_candidates: usize,
    /// a9: candidates need df <= N * this fraction.
    pub descr_max_df_fraction: f64,
    /// a9: threshold grid step.
    pub descr_grid_step: f64,
    /// a9: half-width of the band around a threshold counted as unstable.
    pub descr_band: f64,
    /// a9: greedy add/drop rounds.
    pub descr_rounds: usize,
    /// a9: a word's precision must stay above this floor.
    pub descr_precision_floor: f64,
    /// a9: share of documents that must stay covered while dropping words.
    pub descr_coverage_floor: f64,
    /// minhash: shingle width w.
    pub minhash_shingle_width: usize,
    /// minhash: number of min-wise functions.
    pub minhash_functions: usize,
    /// minhash: rows per band for candidate generation (functions / rows bands).
    pub minhash_band_rows: usize,
    /// minhash, a6: seed of the min-wise function coefficients.
    pub minhash_seed: u64,
    /// a6, a8, a11: shingle width.
    pub shingle_width: usize,
    /// a6: preset `36` (6 groups of 6, the study) or `84` (6 groups of 14, Fetterly).
    pub megashingle_functions: usize,
    /// a8: keep about this many shingles (k = floor(log2 n) - log2(this)).
    pub logshingle_target: usize,
    /// spotsigs: antecedent words.
    pub spotsigs_antecedents: Vec<String>,
    /// spotsigs: (spot distance d, chain length c) pairs.
    pub spotsigs_chains: Vec<(usize, usize)>,
    /// spotsigs: include the antecedent in the signature string.
    pub spotsigs_include_antecedent: bool,
    /// spotsigs: Jaccard threshold tau.
    pub spotsigs_tau: f64,
    /// spotsigs: documents with fewer spot signatures are left out.
    pub spotsigs_min_spots: usize,
    /// slst: minimal verified block length m (sentences).
    pub slst_min_block: usize,
    /// slst: suffix-array groups with more documents than this are not
    /// expanded into pairs but split into their longer shared runs.
    pub slst_max_group_docs: usize,
    /// SL+ST: pairs whose sentence Jaccard is below this are not proposed
    /// (choice; measured on the shared crawl files: no pair below 0.4 and
    /// 12 of ~9,500 below 0.5 verified, while ~35,000 template-sharing pairs
    /// scored below 0.5).
    pub slst_min_jaccard: f64,
    /// slst: sentences whose (length, first two terms) occur more often than
    /// this in either document of a pair do not start a verified block
    /// (they can still lie inside one); bounds the pairwise work.
    pub slst_max_sentence_repeats: usize,
    /// a11, a12: split chains where neighbouring length ratio exceeds this.
    pub chain_ratio: f64,
    /// a12: maximal ratio of sentence counts.
    pub a12_num_ratio: f64,
}

/// Every method id the pipeline knows, in report order.
pub const ALL_METHODS: &[&str] = &[
    "a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "a10", "a11", "a12", "imatch", "minhash", "spotsigs",
    "slst",
];

impl MethodsConfig {
    /// True when method `id` is switched on (`--methods`, `[methods] enabled`).
    pub fn is_enabled(&self, id: &str) -> bool {
        self.enabled.iter().any(|m| m == id)
    }
}

impl Default for MethodsConfig {
    fn default() -> Self {
        MethodsConfig {
            enabled: ALL_METHODS.iter().map(|s| s.to_string()).collect(),
            top_words: 6,
            bm25_k: 2.0,
            bm25_b: 0.75,
            top_sentences: 2,
            imatch_idf_low: 0.2,
            imatch_idf_high: 0.85,
            imatch_min_features: 5,
            lexrand_extra_lexicons: 10,
            lexrand_drop_fraction: 0.33,
            lexrand_seed: 42,
            descr_max_words: 5000,
            descr_candidates: 50_000,
            descr_max_df_fraction: 0.05,
            descr_grid_step: 0.05,
            descr_band: 0.025,
            descr_rounds: 3,
            descr_precision_floor: 0.5,
            descr_coverage_floor: 0.5,
            minhash_shingle_width: 10,
            minhash_functions: 84,
            minhash_band_rows: 6,
            minhash_seed: 1,
            shingle_width: 5,
            megashingle_functions: 36,
            logshingle_target: 8,
            spotsigs_antecedents: [
                "a", "an", "the", "is", "was", "are", "were", "be", "been", "can", "will", "would", "have", "has",
                "had", "do", "does", "did", "there", "said",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            spotsigs_chains: vec![(2, 2)],
            spotsigs_include_antecedent: true,
            spotsigs_tau: 0.44,
            spotsigs_min_spots: 1,
            slst_min_block: 3,
            slst_max_group_docs: 1000,
            slst_min_jaccard: 0.5,
            slst_max_sentence_repeats: 16,
            chain_ratio: 1.15,
            a12_num_ratio: 1.20,
        }
    }
}

/// Candidate generation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CandidatesConfig {
    /// Signature groups and chains with more documents than this are
    /// reported in `hot_signatures` (they are still walked as chains).
    pub max_group_size: u64,
    /// Each document keeps at most this many candidate edges per method,
    /// and a group's chain links each member to this many next members:
    /// the bound that keeps every later stage linear in the corpus.
    pub max_edges_per_document: u32,
}

impl Default for CandidatesConfig {
    fn default() -> Self {
        CandidatesConfig { max_group_size: 1000, max_edges_per_document: 8 }
    }
}

/// Verification (spec §9).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VerifyConfig {
    /// A pair is a verified near-duplicate when its similarity is at least this.
    pub threshold: f64,
    /// Which text of a document the similarity compares.
    pub text: VerificationText,
    /// How the similarity is computed: the exact formula or the Perl
    /// module's heuristic value.
    pub algorithm: SimilarityAlgorithm,
}

/// The text of a document that verification compares (spec §9's
/// similarity is computed over it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VerificationText {
    /// What a reader sees: the page text without its host's boilerplate
    /// lines, whitespace collapsed, case folded (`tokens.text`). Numbers,
    /// dates and short words stay: they are what tells two release notes
    /// of one project apart.
    Visible,
    /// Every word of the text (boilerplate left out), lowercased, joined by
    /// single spaces: the visible text without punctuation.
    Words,
    /// The kept terms (no stop words, no short words) joined by single
    /// spaces: the study's normalization.
    Terms,
}

/// How verification computes spec §9's similarity. The two agree except on
/// long texts with many edits, where the Perl module's search gives up early
/// and counts too many edits (its value is then lower).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SimilarityAlgorithm {
    /// `2·LCS/(|a|+|b|)` exactly ([`crate::similarity::similarity_at_least`]):
    /// the definition, and the default.
    #[default]
    Exact,
    /// The value Perl's `String::Similarity` returns, heuristics included
    /// ([`crate::similarity::string_similarity`]): to compare with results
    /// obtained with the module, like the study's.
    StringSimilarity,
}

impl Default for VerifyConfig {
    fn default() -> Self {
        VerifyConfig { threshold: 0.8, text: VerificationText::Visible, algorithm: SimilarityAlgorithm::Exact }
    }
}

/// Evaluation against human labels (`gold_quality`, `jobs/evaluate_gold.sql`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EvaluateConfig {
    /// Gold labels: a JSONL file of labeled pairs or of clusters (see
    /// `crate::gold`); empty for none. `pipeline run --gold FILE` sets it.
    pub gold_file: String,
    /// A labeled pair is a near-duplicate (positive) when its label is at
    /// least this (Webis scale 0..3: 3 = content-equivalent).
    pub gold_positive_min_label: i64,
    /// A labeled pair is a negative when its label is at most this; labels in
    /// between are not judged.
    pub gold_negative_max_label: i64,
    /// A method with at most this many candidate pairs has every pair
    /// verified for `method_quality`; a method with more is judged on a
    /// uniform random sample of this many, with a 95% interval.
    pub max_judged_pairs: u64,
}

impl Default for EvaluateConfig {
    fn default() -> Self {
        EvaluateConfig {
            gold_file: String::new(),
            gold_positive_min_label: 3,
            gold_negative_max_label: 0,
            max_judged_pairs: 5_000,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_toml_states_exactly_the_built_in_defaults() {
        let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/jobs/default.toml"));
        assert_eq!(Config::from_file(path).unwrap(), Config::default());
    }

    #[test]
    fn unknown_keys_are_errors() {
        let err = toml::from_str::<Config>("[verify]\ntreshold = 0.9\n").unwrap_err();
        assert!(err.to_string().contains("treshold"), "{err}");
    }

    #[test]
    fn ingest_limits_are_validated() {
        let dir = std::env::temp_dir().join(format!("neardup-config-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (line, word) in [
            ("max_html_depth = 0", "max_html_depth"),
            ("max_text_bytes = 0", "max_text_bytes"),
            ("max_payload_bytes = 0", "max_payload_bytes"),
            ("max_html_depth = 10001", "at most 10000"),
            ("max_html_attributes = 0", "max_html_attributes"),
            ("max_html_attributes = 20000", "at most 10000"),
        ] {
            let path = dir.join("job.toml");
            std::fs::write(&path, format!("[ingest]\n{line}\n")).unwrap();
            let err = Config::from_file(&path).unwrap_err().to_string();
            assert!(err.contains(word), "{line}: {err}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(IngestConfig::default().validate().is_ok());
        assert!(BoilerplateConfig::default().validate().is_ok());
        let one_page = BoilerplateConfig { min_pages: 1, ..BoilerplateConfig::default() };
        assert!(one_page.validate().unwrap_err().to_string().contains("min_pages"));
        let share = BoilerplateConfig { min_share: 5.0, ..BoilerplateConfig::default() };
        assert!(share.validate().unwrap_err().to_string().contains("min_share"));
    }

    #[test]
    fn similarity_algorithm_names() {
        let c: Config = toml::from_str("[verify]\nalgorithm = \"string-similarity\"\n").unwrap();
        assert_eq!(c.verify.algorithm, SimilarityAlgorithm::StringSimilarity);
        let c: Config = toml::from_str("[verify]\nalgorithm = \"exact\"\n").unwrap();
        assert_eq!(c.verify.algorithm, SimilarityAlgorithm::Exact);
        assert!(toml::from_str::<Config>("[verify]\nalgorithm = \"perl\"\n").is_err());
    }

    #[test]
    fn missing_keys_keep_defaults() {
        let c: Config = toml::from_str("[verify]\nthreshold = 0.9\n").unwrap();
        assert_eq!(c.verify.threshold, 0.9);
        assert_eq!(c.methods, MethodsConfig::default());
    }
}

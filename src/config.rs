//! The job configuration: every tunable parameter of every stage, with its
//! default. `jobs/default.toml` mirrors these defaults one to one (a test
//! checks that), CLI flags override them, and each stage records the part it
//! used in its manifest so a run can be explained and reproduced later.

use crate::methods::registry;
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
    pub dedup: DedupConfig,
    pub history: HistoryConfig,
}

impl Config {
    /// Reads a TOML job file; missing keys keep their defaults, unknown keys
    /// are an error (a typo must not silently fall back to a default).
    pub fn from_file(path: &Path) -> anyhow::Result<Config> {
        let text =
            std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("cannot read config {}: {e}", path.display()))?;
        let mut config: Config =
            toml::from_str(&text).map_err(|e| anyhow::anyhow!("bad config {}: {e}", path.display()))?;
        config.move_history_keep().map_err(|e| anyhow::anyhow!("bad config {}: {e}", path.display()))?;
        config.validate().map_err(|e| anyhow::anyhow!("bad config {}: {e}", path.display()))?;
        Ok(config)
    }

    /// Checks every value of every section, so that a wrong one stops the
    /// run before any stage starts (`pipeline run` exits 2) instead of
    /// panicking, looping or being silently clamped deep inside a stage.
    /// Every problem is reported at once, each naming its section and
    /// parameter. `pipeline run` calls it again after the command line has
    /// overridden the file.
    /// `[history] keep` and `keep_order_by` moved to `[dedup]` (one keep
    /// rule for single runs and the history): an old file's values are
    /// taken there, with a warning; both sections with different rules are
    /// an error.
    fn move_history_keep(&mut self) -> anyhow::Result<()> {
        let defaults = DedupConfig::default();
        if let Some(keep) = self.history.keep.take() {
            anyhow::ensure!(
                self.dedup.keep == defaults.keep || self.dedup.keep == keep,
                "[history] keep moved to [dedup] keep; give it there only"
            );
            tracing::warn!("[history] keep is now [dedup] keep (used by single runs too); taken from [history]");
            self.dedup.keep = keep;
        }
        if let Some(order) = self.history.keep_order_by.take() {
            anyhow::ensure!(
                self.dedup.keep_order_by.is_empty() || self.dedup.keep_order_by == order,
                "[history] keep_order_by moved to [dedup] keep_order_by; give it there only"
            );
            tracing::warn!("[history] keep_order_by is now [dedup] keep_order_by; taken from [history]");
            self.dedup.keep_order_by = order;
        }
        Ok(())
    }

    pub fn validate(&self) -> anyhow::Result<()> {
        let mut problems = Problems::default();
        self.ingest.check(&mut problems);
        self.boilerplate.check(&mut problems);
        self.methods.check(&mut problems);
        self.candidates.check(&mut problems);
        self.verify.check(&mut problems);
        self.evaluate.check(&mut problems);
        self.dedup.check(&mut problems);
        anyhow::ensure!(problems.0.is_empty(), "{}", problems.0.join("; "));
        Ok(())
    }
}

/// The problems found by [`Config::validate`], one message each.
#[derive(Debug, Default)]
struct Problems(Vec<String>);

impl Problems {
    /// Records `problem` unless `holds`.
    fn require(&mut self, holds: bool, problem: impl FnOnce() -> String) {
        if !holds {
            self.0.push(problem());
        }
    }

    /// `[section] name` must be at least `min`.
    fn at_least<T: PartialOrd + std::fmt::Display>(&mut self, section: &str, name: &str, value: T, min: T) {
        self.require(value >= min, || format!("[{section}] {name} = {value} must be at least {min}"));
    }

    /// `[section] name` must lie in `[low, high]` (a NaN never does).
    fn within(&mut self, section: &str, name: &str, value: f64, low: f64, high: f64) {
        self.require((low..=high).contains(&value), || {
            format!("[{section}] {name} = {value} must be between {low} and {high}")
        });
    }

    /// `[section] name` must lie in `(low, high]`: a share or step of which
    /// zero means "nothing".
    fn above_up_to(&mut self, section: &str, name: &str, value: f64, low: f64, high: f64) {
        self.require(value > low && value <= high, || {
            format!("[{section}] {name} = {value} must be above {low} and at most {high}")
        });
    }

    /// Every id of `[section] name` must be a method the pipeline knows.
    fn known_methods(&mut self, section: &str, name: &str, ids: &[String]) {
        for id in ids.iter().filter(|id| !registry::ids().contains(&id.as_str())) {
            self.0.push(format!("[{section}] {name}: unknown method `{id}`; known: {}", registry::ids().join(", ")));
        }
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
    /// Only HTTP responses with one of these statuses are content, the
    /// pages deduplicated; the others (404 pages, redirects, errors) stay in
    /// `documents` with `not_content` set and are never clustered (their
    /// bodies are templates: a site's 404 pages are all alike). Empty: every
    /// status. Records without a status (resource, conversion, corpus
    /// lines) are content.
    pub content_statuses: Vec<u16>,
    /// Only HTTP responses and resource records whose declared MIME type
    /// is one of these are documents; others (images, PDFs, scripts) are
    /// rejected as `not_html`. HTML and XHTML are parsed as HTML, every
    /// other listed type is read as plain text (lines kept, charset from
    /// the header, a BOM or detection). A record without a type, or with a
    /// generic one (`application/octet-stream`), is a document when its
    /// body looks like HTML.
    pub content_types: Vec<String>,
    /// A page with `<meta http-equiv="refresh">` and at most this many
    /// words of text is a redirect stub ("Redirecting to …"), not content.
    pub refresh_stub_max_words: u64,
}

impl Default for IngestConfig {
    fn default() -> Self {
        IngestConfig {
            max_payload_bytes: 20 << 20,
            min_text_chars: 1,
            max_html_depth: 512,
            max_html_attributes: 256,
            max_text_bytes: 4 << 20,
            content_statuses: vec![200],
            content_types: ["text/html", "application/xhtml+xml", "text/plain"].map(String::from).to_vec(),
            refresh_stub_max_words: 50,
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
    fn check(&self, problems: &mut Problems) {
        problems.require(self.min_pages >= 2, || {
            format!(
                "[boilerplate] min_pages = {} must be at least 2 (a line of one page is its content)",
                self.min_pages
            )
        });
        problems.within("boilerplate", "min_share", self.min_share, 0.0, 1.0);
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
    fn check(&self, problems: &mut Problems) {
        for (name, value) in [
            ("max_payload_bytes", self.max_payload_bytes),
            ("max_html_depth", u64::from(self.max_html_depth)),
            ("max_html_attributes", u64::from(self.max_html_attributes)),
            ("max_text_bytes", self.max_text_bytes),
        ] {
            problems.at_least("ingest", name, value, 1);
        }
        for (name, value) in
            [("max_html_depth", self.max_html_depth), ("max_html_attributes", self.max_html_attributes)]
        {
            problems.require(value <= MAX_HTML_LIMIT, || {
                format!("[ingest] {name} = {value} must be at most {MAX_HTML_LIMIT} (the parse costs size × this)")
            });
        }
        problems.require(!self.content_types.is_empty(), || {
            "[ingest] content_types is empty: no record would be a document (list text/html at least)".to_string()
        });
        for t in &self.content_types {
            problems.require(t.contains('/') && !t.contains(';') && t.trim() == t, || {
                format!("[ingest] content_types entry {t:?} is not a bare MIME type such as \"text/html\"")
            });
        }
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
    /// a9: a document with fewer set bits gets no signature, and the word
    /// selection counts a document as covered from this many bits on (one
    /// or two common words are shared by many unrelated pages).
    pub descr_min_bits: usize,
    /// minhash: shingle width w.
    pub minhash_shingle_width: usize,
    /// minhash: number of min-wise functions.
    pub minhash_functions: usize,
    /// minhash: rows per band of the LSH index that finds the pairs to
    /// estimate (functions / rows bands); must divide `minhash_functions`, so
    /// no minimum is left out. Chosen for `minhash_threshold` (README).
    pub minhash_band_rows: usize,
    /// minhash: the method's rule. A pair found by the bands is a duplicate
    /// when its estimated resemblance (share of equal minima) is at least
    /// this; the study's 0.75 by default (README, "minhash").
    pub minhash_threshold: f64,
    /// minhash, a6: seed of the min-wise function coefficients.
    pub minhash_seed: u64,
    /// a6, a8, a11: shingle width.
    pub shingle_width: usize,
    /// a6: preset `36` (6 groups of 6, the study) or `84` (6 groups of 14,
    /// Fetterly); any positive multiple of 6.
    pub megashingle_functions: usize,
    /// a8: keep about this many shingles (k = floor(log2 n) - log2(this)); a
    /// power of two.
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
    /// spotsigs: a spot signature shared by more documents than this gives
    /// no pairs in the pipeline's keyed search (a template's phrases).
    pub spotsigs_max_group_docs: usize,
    /// slst: which words of a sentence make its length and its first-two-
    /// words key. Seed 003 removes stop words only, the default; `terms`
    /// (stop words and short words removed) is the rule of earlier runs.
    pub slst_sentence_words: SlstSentenceWords,
    /// slst: minimal verified block length m (sentences).
    pub slst_min_block: usize,
    /// slst: a run of m sentences shared by more documents than this gives
    /// no pairs (the reference's suffix array splits such a group into its
    /// longer shared runs instead).
    pub slst_max_group_docs: usize,
    /// SL+ST: pairs whose sentence Jaccard is below this are not proposed
    /// (choice; measured on the shared crawl files: no pair below 0.4 and
    /// 12 of ~9,500 below 0.5 verified, while ~35,000 template-sharing pairs
    /// scored below 0.5).
    pub slst_min_jaccard: f64,
    /// slst: sentences whose (length, first two words) occur more often than
    /// this in either document of a pair do not start a verified block
    /// (they can still lie inside one); bounds the pairwise work.
    pub slst_max_sentence_repeats: usize,
    /// a11, a12: split chains where neighbouring length ratio exceeds this.
    pub chain_ratio: f64,
    /// a11: a pair is compared only when the chain links between the two
    /// documents (shared shingles met within `max_edges_per_document` steps
    /// of a chain) number at least this share of the smaller document's
    /// distinct shingles; 0 compares every linked pair (the study's a11,
    /// bounded per document). On the full Javadoc crawl, 58% of a11's
    /// comparisons were pairs no other method proposed linked by under 5%
    /// of the shingles: 23,331 comparisons, 54 of them verified.
    pub a11_min_shared: f64,
    /// a11: the share of each document's distinct shingles its chains use,
    /// the rarest by global df first (ties by shingle value): the study's
    /// "не все, а выборочно" (not all, selectively), as a prefix filter
    /// that drops the common shingles, whose chains are the long ones, and
    /// keeps pages sharing most of their shingles linked. 1 uses all.
    /// Measured on the shared crawl files: README, "a11".
    pub a11_prefix_share: f64,
    /// a12: maximal ratio of sentence counts.
    pub a12_num_ratio: f64,
}

impl MethodsConfig {
    /// True when method `id` is switched on (`--methods`, `[methods] enabled`).
    pub fn is_enabled(&self, id: &str) -> bool {
        self.enabled.iter().any(|m| m == id)
    }
}

impl MethodsConfig {
    /// The rules the methods rely on (see each parameter's doc), so that no
    /// value is silently clamped or rounded and no method asserts on it.
    fn check(&self, p: &mut Problems) {
        const S: &str = "methods";
        p.known_methods(S, "enabled", &self.enabled);
        p.require(!self.enabled.is_empty(), || "[methods] enabled must name at least one method".to_string());
        p.at_least(S, "top_words", self.top_words, 1);
        p.at_least(S, "top_sentences", self.top_sentences, 1);
        p.require(self.bm25_k.is_finite() && self.bm25_k >= 0.0, || {
            format!("[methods] bm25_k = {} must be a number of at least 0", self.bm25_k)
        });
        p.within(S, "bm25_b", self.bm25_b, 0.0, 1.0);
        p.within(S, "imatch_idf_low", self.imatch_idf_low, 0.0, 1.0);
        p.within(S, "imatch_idf_high", self.imatch_idf_high, 0.0, 1.0);
        p.require(self.imatch_idf_low < self.imatch_idf_high || self.imatch_idf_low.is_nan(), || {
            format!(
                "[methods] imatch_idf_low = {} must be below imatch_idf_high = {} (the lexicon is the band between)",
                self.imatch_idf_low, self.imatch_idf_high
            )
        });
        p.at_least(S, "imatch_min_features", self.imatch_min_features, 1);
        // Slot K of a7 holds the last extra lexicon; slots are 16-bit.
        p.require(self.lexrand_extra_lexicons <= usize::from(u16::MAX), || {
            format!("[methods] lexrand_extra_lexicons = {} must be at most {}", self.lexrand_extra_lexicons, u16::MAX)
        });
        p.within(S, "lexrand_drop_fraction", self.lexrand_drop_fraction, 0.0, 1.0);
        p.at_least(S, "descr_max_words", self.descr_max_words, 1);
        p.at_least(S, "descr_candidates", self.descr_candidates, 1);
        p.above_up_to(S, "descr_max_df_fraction", self.descr_max_df_fraction, 0.0, 1.0);
        // The grid is step, 2·step, ... below 1: a step of 0 or at least 1
        // leaves no threshold at all.
        p.require(self.descr_grid_step > 0.0 && self.descr_grid_step < 1.0, || {
            format!("[methods] descr_grid_step = {} must be above 0 and below 1", self.descr_grid_step)
        });
        p.within(S, "descr_band", self.descr_band, 0.0, 0.5);
        p.at_least(S, "descr_rounds", self.descr_rounds, 1);
        p.within(S, "descr_precision_floor", self.descr_precision_floor, 0.0, 1.0);
        p.at_least(S, "descr_min_bits", self.descr_min_bits, 1);
        p.at_least(S, "minhash_shingle_width", self.minhash_shingle_width, 1);
        p.at_least(S, "minhash_functions", self.minhash_functions, 1);
        p.at_least(S, "minhash_band_rows", self.minhash_band_rows, 1);
        p.within(S, "minhash_threshold", self.minhash_threshold, 0.0, 1.0);
        if self.minhash_band_rows >= 1 {
            // Minima left over after the last full band would be in no band.
            p.require(self.minhash_functions.is_multiple_of(self.minhash_band_rows), || {
                format!(
                    "[methods] minhash_band_rows = {} must divide minhash_functions = {}",
                    self.minhash_band_rows, self.minhash_functions
                )
            });
            // Band j is signed in slot j; slots are 16-bit.
            p.require(self.minhash_functions / self.minhash_band_rows <= usize::from(u16::MAX) + 1, || {
                format!(
                    "[methods] minhash_functions / minhash_band_rows = {} bands must be at most {}",
                    self.minhash_functions / self.minhash_band_rows,
                    usize::from(u16::MAX) + 1
                )
            });
        }
        p.at_least(S, "shingle_width", self.shingle_width, 1);
        p.require(self.megashingle_functions > 0 && self.megashingle_functions.is_multiple_of(6), || {
            format!(
                "[methods] megashingle_functions = {} must be a positive multiple of 6 (6 equal groups; presets 36 and 84)",
                self.megashingle_functions
            )
        });
        p.require(self.logshingle_target.is_power_of_two(), || {
            format!(
                "[methods] logshingle_target = {} must be a power of two (k = floor(log2 n) - log2 of it)",
                self.logshingle_target
            )
        });
        p.require(!self.spotsigs_antecedents.is_empty(), || {
            "[methods] spotsigs_antecedents must name at least one word".to_string()
        });
        p.require(!self.spotsigs_chains.is_empty(), || {
            "[methods] spotsigs_chains must hold at least one (distance, length) pair".to_string()
        });
        for &(distance, length) in &self.spotsigs_chains {
            p.require(distance >= 1 && length >= 1, || {
                format!(
                    "[methods] spotsigs_chains: [{distance}, {length}] needs a spot distance and a chain length of at least 1"
                )
            });
        }
        p.above_up_to(S, "spotsigs_tau", self.spotsigs_tau, 0.0, 1.0);
        p.at_least(S, "spotsigs_min_spots", self.spotsigs_min_spots, 1);
        p.at_least(S, "spotsigs_max_group_docs", self.spotsigs_max_group_docs, 2);
        // Blocks shorter than 2 sentences are dropped by the method itself.
        p.at_least(S, "slst_min_block", self.slst_min_block, 2);
        p.at_least(S, "slst_max_group_docs", self.slst_max_group_docs, 2);
        p.within(S, "slst_min_jaccard", self.slst_min_jaccard, 0.0, 1.0);
        p.at_least(S, "slst_max_sentence_repeats", self.slst_max_sentence_repeats, 1);
        p.within(S, "a11_min_shared", self.a11_min_shared, 0.0, 1.0);
        p.above_up_to(S, "a11_prefix_share", self.a11_prefix_share, 0.0, 1.0);
        for (name, value) in [("chain_ratio", self.chain_ratio), ("a12_num_ratio", self.a12_num_ratio)] {
            p.require(value.is_finite() && value >= 1.0, || {
                format!("[methods] {name} = {value} must be a ratio of at least 1")
            });
        }
    }
}

impl Default for MethodsConfig {
    fn default() -> Self {
        MethodsConfig {
            enabled: registry::ids().iter().map(|s| s.to_string()).collect(),
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
            descr_min_bits: 2,
            minhash_shingle_width: 10,
            minhash_functions: 84,
            minhash_band_rows: 7,
            minhash_threshold: 0.75,
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
            spotsigs_max_group_docs: 1000,
            slst_sentence_words: SlstSentenceWords::NoStopWords,
            slst_min_block: 3,
            slst_max_group_docs: 1000,
            slst_min_jaccard: 0.5,
            slst_max_sentence_repeats: 16,
            chain_ratio: 1.15,
            a11_min_shared: 0.05,
            a11_prefix_share: 1.0,
            a12_num_ratio: 1.20,
        }
    }
}

/// Which words SL+ST counts in a sentence (`[methods] slst_sentence_words`).
/// An enum so that a typo in the job file is a parse error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SlstSentenceWords {
    /// Every word but the stop words (short words count): seed 003's
    /// "remove the stop words of each sentence, count the remaining words".
    NoStopWords,
    /// The kept terms (stop words and words of at most
    /// `max_short_word_chars` removed), as the other methods see sentences.
    Terms,
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

impl CandidatesConfig {
    /// Both bounds must let at least one document or edge through.
    fn check(&self, p: &mut Problems) {
        p.at_least("candidates", "max_group_size", self.max_group_size, 1);
        p.at_least("candidates", "max_edges_per_document", self.max_edges_per_document, 1);
    }
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
    /// The most comparisons one document makes when it is placed (with the
    /// representatives its edges reach and its partners outside the
    /// cluster it joins; a11's own pairs come on top, as they are a11's
    /// result): the constant that bounds verification's work per
    /// document, however large a template group.
    pub max_comparisons_per_document: usize,
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

impl VerifyConfig {
    /// The threshold is a similarity, in [0, 1].
    fn check(&self, p: &mut Problems) {
        p.within("verify", "threshold", self.threshold, 0.0, 1.0);
        p.at_least("verify", "max_comparisons_per_document", self.max_comparisons_per_document, 1);
    }
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
        VerifyConfig {
            threshold: 0.8,
            text: VerificationText::Visible,
            algorithm: SimilarityAlgorithm::Exact,
            max_comparisons_per_document: 64,
        }
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
    /// The methods whose verified pairs make the pool, the reference for
    /// 100% recall in `method_quality`: `"all"` (every method run),
    /// `"study"` (A0–A10, the study's Table 2 experiment, so recall can be
    /// set beside its figures) or a list of method ids.
    pub pool: Pool,
}

/// Which methods' verified pairs make the recall pool. The study measured
/// recall against the union of the duplicates found by the algorithms of
/// its experiment (A0–A10); a pool of every method run (17 here) holds
/// pairs only the later methods find, so its recall figures are lower and
/// cannot be compared with the study's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Pool {
    /// A named preset: [`POOL_ALL`] or [`POOL_STUDY`] (checked by
    /// [`Config::validate`], so a typo is an error naming `[evaluate] pool`).
    Preset(String),
    /// Explicit method ids.
    Methods(Vec<String>),
}

/// The pool preset of every method run.
pub const POOL_ALL: &str = "all";
/// The pool preset of the study's Table 2 experiment.
pub const POOL_STUDY: &str = "study";
/// The methods of the study's Table 2 experiment (A0–A10): its recall
/// reference is the union of their duplicates.
pub const STUDY_POOL_METHODS: &[&str] = &["a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "a10"];

impl EvaluateConfig {
    /// The pool's methods among `enabled` (the methods run), in
    /// [`registry::ids`] order: a configured method that did not run has no
    /// pairs to add (the evaluate stage warns about it).
    pub fn pool_methods(&self, enabled: &[String]) -> Vec<String> {
        let configured = self.configured_pool();
        registry::ids()
            .iter()
            .filter(|m| configured.contains(m) && enabled.iter().any(|e| e == *m))
            .map(|m| m.to_string())
            .collect()
    }

    /// The pool's methods as configured, whether they run or not: every
    /// method for `"all"`, A0–A10 for `"study"`, else the list.
    pub fn configured_pool(&self) -> Vec<&str> {
        match &self.pool {
            Pool::Preset(name) if name == POOL_STUDY => STUDY_POOL_METHODS.to_vec(),
            Pool::Preset(_) => registry::ids().to_vec(),
            Pool::Methods(ids) => ids.iter().map(String::as_str).collect(),
        }
    }

    /// The label bounds must leave positives above negatives, the sample
    /// must judge at least one pair, and the pool must name known methods.
    fn check(&self, p: &mut Problems) {
        p.require(self.gold_positive_min_label > self.gold_negative_max_label, || {
            format!(
                "[evaluate] gold_positive_min_label = {} must be above gold_negative_max_label = {}",
                self.gold_positive_min_label, self.gold_negative_max_label
            )
        });
        p.require(self.gold_file.is_empty() || Path::new(&self.gold_file).is_file(), || {
            format!("[evaluate] gold_file = \"{}\": no such file", self.gold_file)
        });
        p.at_least("evaluate", "max_judged_pairs", self.max_judged_pairs, 1);
        match &self.pool {
            Pool::Preset(name) => p.require(name == POOL_ALL || name == POOL_STUDY, || {
                format!("[evaluate] pool = \"{name}\" must be \"{POOL_ALL}\", \"{POOL_STUDY}\" or a list of method ids")
            }),
            Pool::Methods(ids) => {
                p.known_methods("evaluate", "pool", ids);
                p.require(!ids.is_empty(), || "[evaluate] pool must name at least one method".to_string());
            }
        }
    }
}

impl Default for EvaluateConfig {
    fn default() -> Self {
        EvaluateConfig {
            gold_file: String::new(),
            gold_positive_min_label: 3,
            gold_negative_max_label: 0,
            max_judged_pairs: 5_000,
            pool: Pool::Preset(POOL_ALL.to_string()),
        }
    }
}

/// Nightly runs against the history of earlier crawls (`--history DIR`):
/// which copy of a page survives a cluster that spans crawls, which copies
/// may be marked, and what a night adds to the history's index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HistoryConfig {
    /// Moved to `[dedup] keep`; an old file's value is taken there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep: Option<KeepRule>,
    /// Moved to `[dedup] keep_order_by`; an old file's value is taken there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_order_by: Option<String>,
    /// Which members of such a cluster may be marked as duplicates.
    pub mark: MarkRule,
    /// Whether a night page that repeats an earlier page is indexed again:
    /// false keeps one indexed member per set of repeats, so copies of the
    /// same pages night after night do not grow the groups a later night is
    /// matched against (its texts are kept either way).
    pub index_repeats: bool,
}

/// Which copy of a page is kept: the rule that orders verification's
/// placement in a single run (the first document of a cluster in this order
/// is its representative, the kept copy, and every other member verified
/// against it) and picks the kept member of a cluster spanning crawls in
/// the history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DedupConfig {
    /// The priority that picks the kept copy.
    pub keep: KeepRule,
    /// For `keep = "sql"`: an SQL `ORDER BY` list over the members'
    /// columns `crawl` (the crawl id in the history, the same for every
    /// document of a single run), `doc_id`, `url`, `canonical_url`,
    /// `crawl_date`, `http_status` and `text_chars`; the first member in
    /// that order is kept.
    pub keep_order_by: String,
}

impl Default for DedupConfig {
    fn default() -> Self {
        DedupConfig { keep: KeepRule::CanonicalUrl, keep_order_by: String::new() }
    }
}

/// The priority that picks the kept copy. Every rule ends with the crawl
/// id, then the doc id, so the choice never depends on sharding or on the
/// order pages were read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeepRule {
    /// The page of the earliest crawl (crawl ids sort in crawl order), then
    /// the earliest crawl date, then the longest text: the page that was
    /// there first.
    EarliestCrawl,
    /// The longest text, then the earliest crawl.
    LongestText,
    /// An HTTP 200 response before any other status, then the earliest crawl.
    #[serde(rename = "http-200")]
    Http200,
    /// The shortest URL (the canonical one, usually), then the earliest crawl.
    ShortestUrl,
    /// The copy at its canonical URL (`documents.canonical_url`: declared
    /// by `<link rel="canonical">`, else the URL without tracking
    /// parameters and fragment), then as `earliest-crawl`. Pages of earlier
    /// crawls count as at their canonical URL: the history does not keep
    /// the declared one.
    CanonicalUrl,
    /// `[dedup] keep_order_by`.
    Sql,
}

/// Which members of a cluster spanning crawls are marked as duplicates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MarkRule {
    /// Every member but the kept one, whatever its crawl.
    Any,
    /// Only the night's own pages: the history is never edited, so an
    /// earlier page stays even when a night's page is kept.
    NewOnly,
}

impl DedupConfig {
    /// The `ORDER BY` list that ranks a cluster's members, first = kept,
    /// over the columns named at [`DedupConfig::keep_order_by`]; the crawl
    /// id and doc id close every rule.
    pub fn keep_order(&self) -> String {
        let rule = match self.keep {
            KeepRule::EarliestCrawl => "crawl, crawl_date, text_chars DESC",
            KeepRule::LongestText => "text_chars DESC, crawl",
            KeepRule::Http200 => "CASE WHEN http_status = 200 THEN 0 ELSE 1 END, crawl",
            KeepRule::ShortestUrl => "character_length(url), url, crawl",
            KeepRule::CanonicalUrl => {
                "CASE WHEN url = canonical_url THEN 0 ELSE 1 END, crawl, crawl_date, text_chars DESC"
            }
            KeepRule::Sql => self.keep_order_by.as_str(),
        };
        format!("{rule}, crawl, doc_id")
    }

    /// `keep = "sql"` needs its order; the order is one SQL expression list,
    /// so it may not close the window it is placed in.
    fn check(&self, p: &mut Problems) {
        p.require(self.keep != KeepRule::Sql || !self.keep_order_by.trim().is_empty(), || {
            "[dedup] keep = \"sql\" needs keep_order_by, e.g. \"http_status, text_chars DESC\"".to_string()
        });
        p.require(is_one_order_list(&self.keep_order_by), || {
            format!(
                "[dedup] keep_order_by = \"{}\": one ORDER BY list, balanced parentheses, no `;`",
                self.keep_order_by
            )
        });
    }
}

/// True when `order` can stand inside `OVER (... ORDER BY order)`: its
/// parentheses balance and it holds no statement separator.
fn is_one_order_list(order: &str) -> bool {
    let mut depth = 0i64;
    for c in order.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ';' => return false,
            _ => {}
        }
        if depth < 0 {
            return false;
        }
    }
    depth == 0
}

impl Default for HistoryConfig {
    fn default() -> Self {
        HistoryConfig { keep: None, keep_order_by: None, mark: MarkRule::Any, index_repeats: false }
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
    fn slst_sentence_words_is_one_of_two_names() {
        assert_eq!(Config::default().methods.slst_sentence_words, SlstSentenceWords::NoStopWords);
        for (name, rule) in [("no-stop-words", SlstSentenceWords::NoStopWords), ("terms", SlstSentenceWords::Terms)] {
            let c: Config = toml::from_str(&format!("[methods]\nslst_sentence_words = \"{name}\"\n")).unwrap();
            assert_eq!(c.methods.slst_sentence_words, rule);
        }
        let err = toml::from_str::<Config>("[methods]\nslst_sentence_words = \"stop-words\"\n").unwrap_err();
        assert!(err.to_string().contains("no-stop-words"), "{err}");
    }

    /// The problems `Config::validate` finds in a job file's text.
    fn problems_of(job: &str) -> String {
        let config: Config = toml::from_str(job).unwrap_or_else(|e| panic!("{job}: {e}"));
        config.validate().err().map(|e| e.to_string()).unwrap_or_default()
    }

    #[test]
    fn defaults_and_the_study_pool_are_valid() {
        assert_eq!(problems_of(""), "");
        assert_eq!(problems_of("[evaluate]\npool = \"study\"\n"), "");
        assert_eq!(problems_of("[evaluate]\npool = [\"a4\", \"slst\"]\n"), "");
        assert_eq!(problems_of("[methods]\nminhash_functions = 100\nminhash_band_rows = 5\n"), "");
        assert_eq!(problems_of("[methods]\nmegashingle_functions = 84\n"), "");
    }

    #[test]
    fn every_rule_names_its_section_and_parameter() {
        for (job, message) in [
            ("[ingest]\nmax_html_depth = 0", "[ingest] max_html_depth = 0 must be at least 1"),
            ("[ingest]\nmax_text_bytes = 0", "[ingest] max_text_bytes = 0 must be at least 1"),
            ("[ingest]\nmax_payload_bytes = 0", "[ingest] max_payload_bytes = 0 must be at least 1"),
            ("[ingest]\nmax_html_depth = 10001", "[ingest] max_html_depth = 10001 must be at most 10000"),
            ("[ingest]\nmax_html_attributes = 0", "[ingest] max_html_attributes = 0 must be at least 1"),
            ("[ingest]\ncontent_types = []", "[ingest] content_types is empty"),
            (
                "[ingest]\ncontent_types = [\"text/html; charset=utf-8\"]",
                "[ingest] content_types entry \"text/html; charset=utf-8\" is not a bare MIME type",
            ),
            ("[ingest]\nmax_html_attributes = 20000", "[ingest] max_html_attributes = 20000 must be at most 10000"),
            ("[boilerplate]\nmin_pages = 1", "[boilerplate] min_pages = 1 must be at least 2"),
            ("[boilerplate]\nmin_share = 5.0", "[boilerplate] min_share = 5 must be between 0 and 1"),
            ("[boilerplate]\nmin_share = nan", "[boilerplate] min_share = NaN must be between 0 and 1"),
            ("[methods]\nenabled = [\"a1\", \"a13\"]", "[methods] enabled: unknown method `a13`"),
            ("[methods]\nenabled = []", "[methods] enabled must name at least one method"),
            ("[methods]\ntop_words = 0", "[methods] top_words = 0 must be at least 1"),
            ("[methods]\ntop_sentences = 0", "[methods] top_sentences = 0 must be at least 1"),
            ("[methods]\nbm25_k = -1.0", "[methods] bm25_k = -1 must be a number of at least 0"),
            ("[methods]\nbm25_k = inf", "[methods] bm25_k = inf must be a number of at least 0"),
            ("[methods]\nbm25_b = 1.5", "[methods] bm25_b = 1.5 must be between 0 and 1"),
            ("[methods]\nimatch_idf_low = -0.1", "[methods] imatch_idf_low = -0.1 must be between 0 and 1"),
            ("[methods]\nimatch_idf_high = 2.0", "[methods] imatch_idf_high = 2 must be between 0 and 1"),
            ("[methods]\nimatch_idf_low = 0.9", "[methods] imatch_idf_low = 0.9 must be below imatch_idf_high = 0.85"),
            ("[methods]\nimatch_min_features = 0", "[methods] imatch_min_features = 0 must be at least 1"),
            (
                "[methods]\nlexrand_extra_lexicons = 70000",
                "[methods] lexrand_extra_lexicons = 70000 must be at most 65535",
            ),
            ("[methods]\nlexrand_drop_fraction = 1.2", "[methods] lexrand_drop_fraction = 1.2 must be between 0 and 1"),
            ("[methods]\ndescr_max_words = 0", "[methods] descr_max_words = 0 must be at least 1"),
            ("[methods]\ndescr_candidates = 0", "[methods] descr_candidates = 0 must be at least 1"),
            (
                "[methods]\ndescr_max_df_fraction = 0.0",
                "[methods] descr_max_df_fraction = 0 must be above 0 and at most 1",
            ),
            ("[methods]\ndescr_grid_step = 0.0", "[methods] descr_grid_step = 0 must be above 0 and below 1"),
            ("[methods]\ndescr_grid_step = 1.0", "[methods] descr_grid_step = 1 must be above 0 and below 1"),
            ("[methods]\ndescr_band = 0.6", "[methods] descr_band = 0.6 must be between 0 and 0.5"),
            ("[methods]\ndescr_rounds = 0", "[methods] descr_rounds = 0 must be at least 1"),
            ("[methods]\ndescr_precision_floor = 2.0", "[methods] descr_precision_floor = 2 must be between 0 and 1"),
            ("[methods]\ndescr_min_bits = 0", "[methods] descr_min_bits = 0 must be at least 1"),
            ("[methods]\nminhash_shingle_width = 0", "[methods] minhash_shingle_width = 0 must be at least 1"),
            ("[methods]\nminhash_functions = 0", "[methods] minhash_functions = 0 must be at least 1"),
            ("[methods]\nminhash_band_rows = 0", "[methods] minhash_band_rows = 0 must be at least 1"),
            ("[methods]\nminhash_threshold = 1.5", "[methods] minhash_threshold = 1.5 must be between 0 and 1"),
            ("[methods]\nminhash_band_rows = 5", "[methods] minhash_band_rows = 5 must divide minhash_functions = 84"),
            (
                "[methods]\nminhash_functions = 70000\nminhash_band_rows = 1",
                "[methods] minhash_functions / minhash_band_rows = 70000 bands must be at most 65536",
            ),
            ("[methods]\nshingle_width = 0", "[methods] shingle_width = 0 must be at least 1"),
            (
                "[methods]\nmegashingle_functions = 40",
                "[methods] megashingle_functions = 40 must be a positive multiple of 6",
            ),
            (
                "[methods]\nmegashingle_functions = 0",
                "[methods] megashingle_functions = 0 must be a positive multiple of 6",
            ),
            ("[methods]\nlogshingle_target = 10", "[methods] logshingle_target = 10 must be a power of two"),
            ("[methods]\nlogshingle_target = 0", "[methods] logshingle_target = 0 must be a power of two"),
            ("[methods]\nspotsigs_antecedents = []", "[methods] spotsigs_antecedents must name at least one word"),
            ("[methods]\nspotsigs_chains = []", "[methods] spotsigs_chains must hold at least one"),
            ("[methods]\nspotsigs_chains = [[0, 2]]", "[methods] spotsigs_chains: [0, 2] needs a spot distance"),
            ("[methods]\nspotsigs_chains = [[2, 0]]", "[methods] spotsigs_chains: [2, 0] needs"),
            ("[methods]\nspotsigs_tau = 0.0", "[methods] spotsigs_tau = 0 must be above 0 and at most 1"),
            ("[methods]\nspotsigs_tau = 1.1", "[methods] spotsigs_tau = 1.1 must be above 0 and at most 1"),
            ("[methods]\nspotsigs_min_spots = 0", "[methods] spotsigs_min_spots = 0 must be at least 1"),
            ("[methods]\nslst_min_block = 1", "[methods] slst_min_block = 1 must be at least 2"),
            ("[methods]\nslst_max_group_docs = 1", "[methods] slst_max_group_docs = 1 must be at least 2"),
            ("[methods]\nslst_min_jaccard = 1.5", "[methods] slst_min_jaccard = 1.5 must be between 0 and 1"),
            ("[methods]\nslst_max_sentence_repeats = 0", "[methods] slst_max_sentence_repeats = 0 must be at least 1"),
            ("[methods]\na11_min_shared = -0.1", "[methods] a11_min_shared = -0.1 must be between 0 and 1"),
            ("[methods]\na11_prefix_share = 0.0", "[methods] a11_prefix_share = 0 must be above 0 and at most 1"),
            ("[methods]\na11_prefix_share = 1.5", "[methods] a11_prefix_share = 1.5 must be above 0 and at most 1"),
            ("[methods]\nchain_ratio = 0.9", "[methods] chain_ratio = 0.9 must be a ratio of at least 1"),
            ("[methods]\na12_num_ratio = nan", "[methods] a12_num_ratio = NaN must be a ratio of at least 1"),
            ("[candidates]\nmax_group_size = 0", "[candidates] max_group_size = 0 must be at least 1"),
            ("[candidates]\nmax_edges_per_document = 0", "[candidates] max_edges_per_document = 0 must be at least 1"),
            ("[verify]\nthreshold = 1.01", "[verify] threshold = 1.01 must be between 0 and 1"),
            (
                "[evaluate]\ngold_positive_min_label = 0",
                "[evaluate] gold_positive_min_label = 0 must be above gold_negative_max_label = 0",
            ),
            (
                "[evaluate]\ngold_file = \"/nonexistent/gold.jsonl\"",
                "[evaluate] gold_file = \"/nonexistent/gold.jsonl\": no such file",
            ),
            ("[evaluate]\nmax_judged_pairs = 0", "[evaluate] max_judged_pairs = 0 must be at least 1"),
            ("[evaluate]\npool = \"studdy\"", "[evaluate] pool = \"studdy\" must be \"all\", \"study\" or a list"),
            ("[evaluate]\npool = [\"a0\", \"md5\"]", "[evaluate] pool: unknown method `md5`"),
            ("[evaluate]\npool = []", "[evaluate] pool must name at least one method"),
        ] {
            let problems = problems_of(job);
            assert!(problems.starts_with(message), "{job}:\n  got {problems}\n  want {message}");
        }
    }

    #[test]
    fn every_problem_is_reported_at_once_and_from_file_names_the_file() {
        let job = "[methods]\ntop_words = 0\nminhash_band_rows = 5\n[verify]\nthreshold = 2.0\n";
        assert_eq!(
            problems_of(job),
            "[methods] top_words = 0 must be at least 1; \
             [methods] minhash_band_rows = 5 must divide minhash_functions = 84; \
             [verify] threshold = 2 must be between 0 and 1"
        );
        let dir = std::env::temp_dir().join(format!("neardup-config-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("job.toml");
        std::fs::write(&path, job).unwrap();
        let err = Config::from_file(&path).unwrap_err().to_string();
        assert!(err.starts_with(&format!("bad config {}: [methods] top_words", path.display())), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_pool_resolves_to_the_configured_methods_that_ran() {
        let enabled: Vec<String> = ["a0", "a4", "a11", "minhash"].iter().map(|s| s.to_string()).collect();
        let pool = |pool: Pool| EvaluateConfig { pool, ..EvaluateConfig::default() }.pool_methods(&enabled);
        assert_eq!(pool(Pool::Preset(POOL_ALL.into())), enabled);
        assert_eq!(pool(Pool::Preset(POOL_STUDY.into())), ["a0", "a4"]);
        assert_eq!(pool(Pool::Methods(vec!["minhash".into(), "a0".into(), "a9".into()])), ["a0", "minhash"]);
        let all: Vec<String> = registry::ids().iter().map(|s| s.to_string()).collect();
        let study = EvaluateConfig { pool: Pool::Preset(POOL_STUDY.into()), ..EvaluateConfig::default() };
        assert_eq!(study.pool_methods(&all), STUDY_POOL_METHODS);
    }

    #[test]
    fn similarity_algorithm_names() {
        let c: Config = toml::from_str("[verify]\nalgorithm = \"string-similarity\"\n").unwrap();
        assert_eq!(c.verify.algorithm, SimilarityAlgorithm::StringSimilarity);
        let c: Config = toml::from_str("[verify]\nalgorithm = \"exact\"\n").unwrap();
        assert_eq!(c.verify.algorithm, SimilarityAlgorithm::Exact);
        assert!(toml::from_str::<Config>("[verify]\nalgorithm = \"perl\"\n").is_err());
    }

    /// An old file's `[history] keep` still works (taken into `[dedup]`);
    /// two different rules are refused.
    #[test]
    fn history_keep_moved_to_dedup() {
        let dir = std::env::temp_dir().join(format!("neardup-keep-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("old.toml");
        std::fs::write(&file, "[history]\nkeep = \"sql\"\nkeep_order_by = \"text_chars DESC\"\n").unwrap();
        let config = Config::from_file(&file).unwrap();
        assert_eq!((config.dedup.keep, config.dedup.keep_order_by.as_str()), (KeepRule::Sql, "text_chars DESC"));
        assert_eq!((config.history.keep, config.history.keep_order_by), (None, None));
        std::fs::write(&file, "[history]\nkeep = \"longest-text\"\n[dedup]\nkeep = \"shortest-url\"\n").unwrap();
        let err = Config::from_file(&file).unwrap_err().to_string();
        assert!(err.contains("[history] keep moved to [dedup] keep"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn missing_keys_keep_defaults() {
        let c: Config = toml::from_str("[verify]\nthreshold = 0.9\n").unwrap();
        assert_eq!(c.verify.threshold, 0.9);
        assert_eq!(c.methods, MethodsConfig::default());
    }
}

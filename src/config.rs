//! The job configuration: the sections of every step, gathered. Each step
//! owns its settings and their defaults (`ingest::settings`,
//! `text::settings`, `methods::settings`, `verify::settings`,
//! `evaluate::settings`; the history's are here until the history runs as
//! stages); this module reads a job file into them, takes the keys that
//! moved, and reports every problem their checks find at once.
//! `jobs/default.toml` mirrors the defaults one to one (a test checks
//! that), CLI flags override them, and each stage records the part it used
//! in its manifest so a run can be explained and reproduced later.

use serde::{Deserialize, Serialize};
use std::path::Path;

use crate::evaluate::settings::EvaluateConfig;
use crate::ingest::settings::IngestConfig;
use crate::methods::settings::{CandidatesConfig, MethodsConfig};
use crate::settings::Problems;
use crate::text::settings::{BoilerplateConfig, TextConfig};
use crate::verify::settings::{DedupConfig, KeepRule, VerifyConfig};

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
        let bad = |e: &dyn std::fmt::Display| anyhow::anyhow!("bad config {}: {e}", path.display());
        let mut table: toml::Table = toml::from_str(&text).map_err(|e| bad(&e))?;
        // The keys that read are checked too, so that a typo does not hide
        // a value out of range: every problem of the file at once.
        let mut problems = key_problems(&mut table);
        let mut config: Config = toml::Value::Table(table).try_into().map_err(|e| bad(&e))?;
        if let Err(e) = config.move_history_keep() {
            problems.push(e.to_string());
        }
        problems.extend(config.problems());
        if !problems.is_empty() {
            return Err(bad(&problems.join("; ")));
        }
        Ok(config)
    }

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

    /// Checks every value of every section, so that a wrong one stops the
    /// run before any stage starts (`pipeline run` exits 2) instead of
    /// panicking, looping or being silently clamped deep inside a stage.
    /// Every problem is reported at once, each naming its section and
    /// parameter. `pipeline run` calls it again after the command line has
    /// overridden the file.
    pub fn validate(&self) -> anyhow::Result<()> {
        let problems = self.problems();
        anyhow::ensure!(problems.is_empty(), "{}", problems.join("; "));
        Ok(())
    }

    /// Every problem [`Config::validate`] reports, one message each.
    fn problems(&self) -> Vec<String> {
        let mut problems = Problems::default();
        self.ingest.check(&mut problems);
        self.boilerplate.check(&mut problems);
        self.methods.check(&mut problems);
        self.candidates.check(&mut problems);
        self.verify.check(&mut problems);
        self.evaluate.check(&mut problems);
        self.dedup.check(&mut problems);
        problems.into_messages()
    }
}

/// The sections of a job file, each with a reader of its keys.
type SectionReader = fn(toml::Value) -> Result<(), toml::de::Error>;

const SECTIONS: [(&str, SectionReader); 9] = [
    ("ingest", |v| v.try_into::<IngestConfig>().map(drop)),
    ("text", |v| v.try_into::<TextConfig>().map(drop)),
    ("boilerplate", |v| v.try_into::<BoilerplateConfig>().map(drop)),
    ("methods", |v| v.try_into::<MethodsConfig>().map(drop)),
    ("candidates", |v| v.try_into::<CandidatesConfig>().map(drop)),
    ("verify", |v| v.try_into::<VerifyConfig>().map(drop)),
    ("evaluate", |v| v.try_into::<EvaluateConfig>().map(drop)),
    ("dedup", |v| v.try_into::<DedupConfig>().map(drop)),
    ("history", |v| v.try_into::<HistoryConfig>().map(drop)),
];

/// Every key of a job file that does not read: unknown sections and keys
/// (typos), values of the wrong type, each taken out of `table`. Reading
/// the file whole stops at the first; here each key is read alone into its
/// section (every key has a default), so one bad key does not hide the
/// next, and what is left of `table` reads, for the range checks of
/// [`Config::validate`]: the user fixes them all in one go.
fn key_problems(table: &mut toml::Table) -> Vec<String> {
    let mut problems = Vec::new();
    table.retain(|section, value| {
        let Some((_, read)) = SECTIONS.iter().find(|(name, _)| *name == section) else {
            let known: Vec<&str> = SECTIONS.iter().map(|(name, _)| *name).collect();
            problems.push(format!("unknown section [{section}] (sections: {})", known.join(", ")));
            return false;
        };
        let Some(keys) = value.as_table_mut() else {
            problems.push(format!("`{section}` must be a section ([{section}]), not a value"));
            return false;
        };
        keys.retain(|key, value| {
            let alone = toml::Table::from_iter([(key.to_string(), value.clone())]);
            let read = read(toml::Value::Table(alone));
            if let Err(e) = &read {
                problems.push(format!("[{section}] {key}: {}", e.message().trim()));
            }
            read.is_ok()
        });
        true
    });
    problems
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
    /// Which members of such a cluster are marked as duplicates, and so
    /// whether the night's `decisions` remove its repeats of earlier crawls.
    pub mark: MarkRule,
    /// Whether a night page that repeats an earlier page is indexed again:
    /// false keeps one indexed member per set of repeats, so copies of the
    /// same pages night after night do not grow the groups a later night is
    /// matched against (its texts are kept either way).
    pub index_repeats: bool,
}

impl Default for HistoryConfig {
    fn default() -> Self {
        HistoryConfig { keep: None, keep_order_by: None, mark: MarkRule::Any, index_repeats: false }
    }
}

/// Which members of a cluster spanning crawls are marked as duplicates
/// (`crawl_clusters.is_duplicate`). A night's page that is marked is
/// removed in the night's `decisions` (stage `decide` follows the history's
/// stages), so the night's export holds what is new; `WithinNight` keeps
/// the decisions of the night alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MarkRule {
    /// Every member but the kept one, whatever its crawl.
    Any,
    /// Only the night's own pages: the history is never edited, so an
    /// earlier page stays even when a night's page is kept.
    NewOnly,
    /// None: each night is deduplicated against itself only. The history
    /// is matched and `crawl_clusters` says which copy the keep rule would
    /// keep, but no member is marked and `decisions` ignore the history.
    WithinNight,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::settings::STUDY_POOL_METHODS;
    use crate::evaluate::settings::{Pool, POOL_ALL, POOL_STUDY};
    use crate::methods::registry;
    use crate::methods::settings::SlstSentenceWords;
    use crate::verify::settings::SimilarityAlgorithm;

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
    fn every_key_that_does_not_read_is_listed() {
        let dir = std::env::temp_dir().join(format!("neardup-config-keys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("job.toml");
        let job = "[verify]\ntreshold = 0.9\nthreshold = \"high\"\n[candidates]\nmax_edges_per_document = 8\n[ingets]\nx = 1\n";
        std::fs::write(&path, job).unwrap();
        let err = format!("{:#}", Config::from_file(&path).unwrap_err());
        let problems: Vec<&str> = err.split("; ").collect();
        assert_eq!(problems.len(), 3, "{err}");
        assert!(problems[0].ends_with("job.toml: unknown section [ingets] (sections: ingest, text, boilerplate, methods, candidates, verify, evaluate, dedup, history)"), "{err}");
        assert!(problems.iter().any(|p| p.starts_with("[verify] treshold: unknown field `treshold`")), "{err}");
        assert!(problems.iter().any(|p| p.starts_with("[verify] threshold: invalid type: string \"high\"")), "{err}");
        // A file that reads has none.
        assert!(key_problems(&mut toml::from_str("[verify]\nthreshold = 0.9\n[dedup]\n").unwrap()).is_empty());
        // A misspelt key does not hide a value out of range.
        std::fs::write(&path, "[verify]\ntreshold = 0.9\nthreshold = 1.5\n").unwrap();
        let err = format!("{:#}", Config::from_file(&path).unwrap_err());
        assert!(err.contains("[verify] treshold: unknown field `treshold`"), "{err}");
        assert!(err.contains("[verify] threshold = 1.5 must be between 0 and 1"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn slst_sentence_words_is_one_of_two_names() {
        assert_eq!(Config::default().methods.slst.sentence_words, SlstSentenceWords::NoStopWords);
        for (name, rule) in [("no-stop-words", SlstSentenceWords::NoStopWords), ("terms", SlstSentenceWords::Terms)] {
            let c: Config = toml::from_str(&format!("[methods]\nslst_sentence_words = \"{name}\"\n")).unwrap();
            assert_eq!(c.methods.slst.sentence_words, rule);
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
        // Every column the docs name, in expressions, quoted or not.
        let order = "CASE WHEN http_status = 200 THEN 0 ELSE 1 END, character_length(url), \\\"text_chars\\\" DESC, \
                     CRAWL, canonical_url = url, crawl_date NULLS LAST, doc_id";
        assert_eq!(problems_of(&format!("[dedup]\nkeep = \"sql\"\nkeep_order_by = \"{order}\"\n")), "");
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
            ("[methods]\ndescr_sample_documents = 0", "[methods] descr_sample_documents = 0 must be at least 1"),
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
                "[dedup]\nkeep = \"sql\"\nkeep_order_by = \"nosuch DESC\"",
                "[dedup] keep_order_by = \"nosuch DESC\": no column `nosuch`; it may name crawl, doc_id, url,",
            ),
            (
                "[dedup]\nkeep = \"sql\"\nkeep_order_by = \"CASE WHEN members.host_hash = 1 THEN 0 END\"",
                "[dedup] keep_order_by = \"CASE WHEN members.host_hash = 1 THEN 0 END\": no column `members.host_hash`",
            ),
            (
                "[dedup]\nkeep = \"sql\"\nkeep_order_by = \"text_chars) AS x; DROP TABLE documents; --\"",
                "[dedup] keep_order_by = \"text_chars) AS x; DROP TABLE documents; --\" is not one SQL ORDER BY list",
            ),
            ("[dedup]\nkeep = \"sql\"", "[dedup] keep = \"sql\" needs keep_order_by"),
            ("[verify]\nscreen = 1.0", "[verify] screen = 1 must be at least 0 and below 1"),
            ("[verify]\nscreen = -0.1", "[verify] screen = -0.1 must be at least 0 and below 1"),
            ("[verify]\nscreen = nan", "[verify] screen = NaN must be at least 0 and below 1"),
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

    /// `[history] mark` has a value for nights deduplicated only against
    /// themselves; a misspelt one names the three.
    #[test]
    fn history_mark_names() {
        for (name, rule) in
            [("any", MarkRule::Any), ("new-only", MarkRule::NewOnly), ("within-night", MarkRule::WithinNight)]
        {
            let c: Config = toml::from_str(&format!("[history]\nmark = \"{name}\"\n")).unwrap();
            assert_eq!(c.history.mark, rule);
        }
        let err = toml::from_str::<Config>("[history]\nmark = \"night-only\"\n").unwrap_err().to_string();
        assert!(err.contains("within-night") && err.contains("new-only"), "{err}");
    }

    #[test]
    fn missing_keys_keep_defaults() {
        let c: Config = toml::from_str("[verify]\nthreshold = 0.9\n").unwrap();
        assert_eq!(c.verify.threshold, 0.9);
        assert_eq!(c.methods, MethodsConfig::default());
    }
}

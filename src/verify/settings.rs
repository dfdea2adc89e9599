//! Verification's settings (`[verify]`, spec §9) and the keep rule
//! (`[dedup]`) that orders placement: the first document of a cluster in
//! that order is the copy kept.

use serde::{Deserialize, Serialize};

use crate::settings::Problems;

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
    /// The characters (|a| + |b| of each) one document's failing LCS
    /// comparisons may cover, as a multiple of its own length; a
    /// comparison beyond it is not made. 0: no such bound. Why in
    /// characters and not in pairs: a failing LCS costs the product of the
    /// lengths, and the siblings of a long templated page are long too
    /// ([`crate::verify::partners::compare_partners`] says when it binds).
    pub failed_comparison_budget: f64,
    /// The most rounds of comparisons placement makes between its passes
    /// (a representative reached through a partner that is not itself a
    /// partner); a comparison still lacking after them counts as failed.
    /// The rounds end by themselves (the comparisons made only grow); on
    /// the crawls measured they took 1 to 4.
    pub max_placement_rounds: u32,
    /// When the documents of `verify_pairs` are at most this many, place's
    /// first round reads all their texts at once into a local file, and
    /// every round compares from it; beyond it (and at 0) each round scans
    /// `tokens` for its own. Why: a night's rounds otherwise each scanned
    /// the whole table for a few texts; the bound keeps the file that of
    /// one round's share.
    pub placement_texts_read_once: u64,
    /// The screen before the LCS (spec §9, "A screen before the LCS"): a
    /// pair whose two verification texts' sets of character 8-grams
    /// resemble each other less than this (|A∩B|/|A∪B|) is rejected
    /// without an LCS. Given at a `threshold` of 0.8 and scaled with it
    /// ([`screen_at`]); 0 turns it off (every pair exact, as before it).
    /// Why: on templated crawls most proposed pairs are siblings far below
    /// the threshold, and each cost a whole LCS.
    pub screen: f64,
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

/// The rule a pair of documents passes verification by: which text of
/// each is compared, how the similarity is computed, and the similarity it
/// must reach. One value, made from `[verify]` ([`VerifyConfig::rule`]),
/// that `verify`, `evaluate` and the history's match all compare by
/// ([`crate::verify::compare::compare`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairRule {
    /// A pair passes when its similarity is at least this.
    pub threshold: f64,
    /// How the similarity is computed.
    pub algorithm: SimilarityAlgorithm,
    /// Which text of the two documents it is computed over.
    pub text: VerificationText,
    /// The 8-gram resemblance a pair must reach to be compared by LCS
    /// ([`crate::verify::compare`]'s screen), already scaled to
    /// `threshold`; 0: no screen.
    pub screen: f64,
}

impl PairRule {
    /// The same rule without the screen: for the pairs that are never
    /// screened (a11's own, which are its result).
    pub fn without_screen(self) -> PairRule {
        PairRule { screen: 0.0, ..self }
    }
}

/// The threshold at which `[verify] screen` is given (spec §9's default:
/// 0.2 at 0.8).
pub const SCREEN_GIVEN_AT: f64 = 0.8;

/// The threshold at and below which the screen is off: at a similarity of
/// 0.5 two texts share half their characters, and siblings with half their
/// words replaced (8-gram resemblance 0.05–0.15) are what such a threshold
/// is asked to find.
pub const SCREEN_OFF_AT: f64 = 0.5;

/// The resemblance a pair must reach at `threshold` for a `[verify] screen`
/// of `screen`: `screen · (threshold − 0.5) / (0.8 − 0.5)`, 0 at a
/// threshold of 0.5 or less. Why linear in the threshold: the edits a
/// pair may have shrink linearly as the threshold rises, and the 8-grams
/// they destroy with them; at 0.5 the measured near-duplicates and
/// siblings overlap, so no screen can tell them apart.
pub fn screen_at(screen: f64, threshold: f64) -> f64 {
    if threshold <= SCREEN_OFF_AT {
        0.0
    } else {
        screen * (threshold - SCREEN_OFF_AT) / (SCREEN_GIVEN_AT - SCREEN_OFF_AT)
    }
}

impl VerifyConfig {
    /// The rule of `[verify]`'s `threshold`, `algorithm` and `text`.
    pub fn rule(&self) -> PairRule {
        PairRule {
            threshold: self.threshold,
            algorithm: self.algorithm,
            text: self.text,
            screen: screen_at(self.screen, self.threshold),
        }
    }

    /// The threshold is a similarity, in [0, 1]; the screen a resemblance
    /// in [0, 1) (1 would reject every pair whose texts differ).
    pub fn check(&self, p: &mut Problems) {
        p.within("verify", "threshold", self.threshold, 0.0, 1.0);
        p.at_least("verify", "max_comparisons_per_document", self.max_comparisons_per_document, 1);
        p.at_least("verify", "failed_comparison_budget", self.failed_comparison_budget, 0.0);
        p.require((0.0..1.0).contains(&self.screen), || {
            format!("[verify] screen = {} must be at least 0 and below 1", self.screen)
        });
    }
}

/// How verification computes spec §9's similarity. The two agree except on
/// long texts with many edits, where the Perl module's search gives up early
/// and counts too many edits (its value is then lower).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SimilarityAlgorithm {
    /// `2·LCS/(|a|+|b|)` exactly ([`crate::verify::similarity::similarity_at_least`]):
    /// the definition, and the default.
    #[default]
    Exact,
    /// The value Perl's `String::Similarity` returns, heuristics included
    /// ([`crate::verify::similarity::string_similarity`]): to compare with results
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
            failed_comparison_budget: 32.0,
            max_placement_rounds: 32,
            placement_texts_read_once: 65_536,
            screen: 0.2,
        }
    }
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
    /// parameters, session ids and fragment), then as `earliest-crawl`. The
    /// history stores each page's canonical URL, so earlier crawls' copies
    /// are ranked alike.
    CanonicalUrl,
    /// `[dedup] keep_order_by`.
    Sql,
}

impl DedupConfig {
    /// True when the keep rule ranks by `canonical_url`: only then do the
    /// earlier crawls of the history need it stored.
    pub fn ranks_by_canonical_url(&self) -> bool {
        self.keep_order().contains("canonical_url")
    }

    /// The `ORDER BY` list that ranks a cluster's members, first = kept,
    /// over the columns named at [`DedupConfig::keep_order_by`]; the crawl
    /// id and doc id close every rule. Whatever the rule, a page at an
    /// http(s) URL goes before one at any other (`javascript:`, `about:`, a
    /// relative path from a malformed record): such a URL is no page a
    /// reader could be sent to, so it must never be the copy kept while an
    /// http(s) copy is removed. The SQL that ranks by it is
    /// `crate::stages::verify::keep_order`'s.
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
        format!("{WEB_URL_FIRST}, {rule}, crawl, doc_id")
    }

    /// `keep = "sql"` needs its order; the order is one SQL `ORDER BY`
    /// list over the columns [`KEEP_COLUMNS`] only. Checked here, before
    /// any stage: a wrong column otherwise fails the first stage that ranks
    /// (`tokens`, three stages in) with an error listing the SQL's internal
    /// columns, which the user cannot name.
    pub fn check(&self, p: &mut Problems) {
        p.require(self.keep != KeepRule::Sql || !self.keep_order_by.trim().is_empty(), || {
            "[dedup] keep = \"sql\" needs keep_order_by, e.g. \"http_status, text_chars DESC\"".to_string()
        });
        if self.keep_order_by.trim().is_empty() {
            return;
        }
        match order_list_columns(&self.keep_order_by) {
            Err(why) => p.require(false, || {
                format!("[dedup] keep_order_by = \"{}\" is not one SQL ORDER BY list: {why}", self.keep_order_by)
            }),
            Ok(columns) => {
                for column in columns.iter().filter(|c| !KEEP_COLUMNS.contains(&c.as_str())) {
                    p.require(false, || {
                        format!(
                            "[dedup] keep_order_by = \"{}\": no column `{column}`; it may name {}",
                            self.keep_order_by,
                            KEEP_COLUMNS.join(", ")
                        )
                    });
                }
            }
        }
    }
}

/// The columns `[dedup] keep_order_by` may name: those of
/// `jobs/keep_columns.sql`, plus the crawl id, as every job that ranks
/// gives them.
pub const KEEP_COLUMNS: [&str; 7] =
    ["crawl", "doc_id", "url", "canonical_url", "crawl_date", "http_status", "text_chars"];

/// The first key of every keep order: pages at an http(s) URL before any
/// other (see [`DedupConfig::keep_order`]); the same rule, the URL's scheme,
/// as ingest's count of them (`crate::ingest::canonical::is_http_url`).
const WEB_URL_FIRST: &str = "CASE WHEN lower(split_part(url, ':', 1)) IN ('http', 'https') THEN 0 ELSE 1 END";

/// The columns an `ORDER BY` list names (lowercased unless quoted, as
/// DataFusion reads them), or why it is not one list: parsed whole, so
/// that it cannot close the window it is placed in (`) ...`, `;`).
fn order_list_columns(order: &str) -> Result<Vec<String>, String> {
    use datafusion::sql::sqlparser::ast::{visit_expressions, Expr};
    use datafusion::sql::sqlparser::dialect::GenericDialect;
    use datafusion::sql::sqlparser::parser::Parser;
    use datafusion::sql::sqlparser::tokenizer::Token;
    use std::ops::ControlFlow;
    let dialect = GenericDialect {};
    let mut parser = Parser::new(&dialect).try_with_sql(order).map_err(|e| e.to_string())?;
    let keys = parser.parse_comma_separated(Parser::parse_order_by_expr).map_err(|e| e.to_string())?;
    if parser.peek_token().token != Token::EOF {
        return Err(format!("unexpected `{}` after the list", parser.peek_token().token));
    }
    let name = |ident: &datafusion::sql::sqlparser::ast::Ident| match ident.quote_style {
        Some(_) => ident.value.clone(),
        None => ident.value.to_lowercase(),
    };
    let mut columns = Vec::new();
    for key in &keys {
        let _ = visit_expressions(&key.expr, |expr| {
            match expr {
                Expr::Identifier(ident) => columns.push(name(ident)),
                Expr::CompoundIdentifier(parts) => columns.push(parts.iter().map(&name).collect::<Vec<_>>().join(".")),
                _ => {}
            }
            ControlFlow::<()>::Continue(())
        });
    }
    Ok(columns)
}

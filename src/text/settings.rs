//! The text's settings: normalization (`[text]`, spec §0) and site
//! boilerplate (`[boilerplate]`).

use serde::{Deserialize, Serialize};

use crate::settings::Problems;

/// Site boilerplate (`jobs/boilerplate.sql`): which lines of a host are
/// template, left out of the text signatures and verification see.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BoilerplateConfig {
    /// A line is template only when found on at least this many distinct
    /// page contents of its host (and hosts with fewer have no template):
    /// contents, not URLs, so copies of a page under URL variants count once.
    pub min_pages: u64,
    /// ... and on at least this share of the host's distinct contents.
    pub min_share: f64,
}

impl BoilerplateConfig {
    /// Refuses thresholds that would call a page's own content template.
    pub fn check(&self, problems: &mut Problems) {
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

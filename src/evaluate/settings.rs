//! Evaluation's settings (`[evaluate]`): the judged sample, the recall pool
//! and the gold labels.

use serde::{Deserialize, Serialize};
use std::path::Path;

use crate::methods::registry;
use crate::settings::Problems;

/// Evaluation against human labels (`gold_quality`, `jobs/evaluate_gold.sql`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EvaluateConfig {
    /// Gold labels: a JSONL file of labeled pairs or of clusters (see
    /// `crate::evaluate::gold`); empty for none. `pipeline run --gold FILE` sets it.
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
    pub fn check(&self, p: &mut Problems) {
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
                p.known_ids("evaluate", "pool", ids, registry::ids());
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

//! What every step's settings share: the list of problems their checks
//! fill. Each step owns its settings (`ingest::settings`,
//! `text::settings`, `methods::settings`, `verify::settings`,
//! `evaluate::settings`) and checks them; [`crate::config`] gathers the
//! sections of a job file and reports every problem at once.

/// The problems found by the checks of a job's settings, one message each,
/// naming its section and parameter.
#[derive(Debug, Default)]
pub struct Problems(Vec<String>);

impl Problems {
    /// Records `problem` unless `holds`.
    pub fn require(&mut self, holds: bool, problem: impl FnOnce() -> String) {
        if !holds {
            self.0.push(problem());
        }
    }

    /// `[section] name` must be at least `min`.
    pub fn at_least<T: PartialOrd + std::fmt::Display>(&mut self, section: &str, name: &str, value: T, min: T) {
        self.require(value >= min, || format!("[{section}] {name} = {value} must be at least {min}"));
    }

    /// `[section] name` must lie in `[low, high]` (a NaN never does).
    pub fn within(&mut self, section: &str, name: &str, value: f64, low: f64, high: f64) {
        self.require((low..=high).contains(&value), || {
            format!("[{section}] {name} = {value} must be between {low} and {high}")
        });
    }

    /// `[section] name` must lie in `(low, high]`: a share or step of which
    /// zero means "nothing".
    pub fn above_up_to(&mut self, section: &str, name: &str, value: f64, low: f64, high: f64) {
        self.require(value > low && value <= high, || {
            format!("[{section}] {name} = {value} must be above {low} and at most {high}")
        });
    }

    /// `[section] name` must be a ratio of at least 1 (a NaN or an infinity
    /// is none).
    pub fn ratio(&mut self, section: &str, name: &str, value: f64) {
        self.require(value.is_finite() && value >= 1.0, || {
            format!("[{section}] {name} = {value} must be a ratio of at least 1")
        });
    }

    /// Every id of `[section] name` must be one of `known` (the method
    /// registry's ids).
    pub fn known_ids(&mut self, section: &str, name: &str, ids: &[String], known: &[&str]) {
        for id in ids.iter().filter(|id| !known.contains(&id.as_str())) {
            self.0.push(format!("[{section}] {name}: unknown method `{id}`; known: {}", known.join(", ")));
        }
    }

    /// The messages, in the order found.
    pub fn into_messages(self) -> Vec<String> {
        self.0
    }
}

//! The methods' settings (`[methods]`, spec §1–§8) and the bound every
//! method's candidate edges keep (`[candidates]`). Each method family
//! defines its settings in its own file (`descr.rs` has a9's); this file
//! gathers them into the one `[methods]` section. The registry
//! ([`super::registry`]) lists the methods these settings enable: the
//! default of `enabled` and the check of the ids a job names are there, so
//! that this file, which every method family's settings meet in, imports
//! no method list.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use toml::Table;

use super::traits::FamilySettings;
use crate::settings::Problems;

pub use super::a11::A11Settings;
pub use super::a12::A12Settings;
pub use super::descr::DescrSettings;
pub use super::imatch::IMatchSettings;
pub use super::sentences::SentenceSettings;
pub use super::shingles::{MinHashSettings, ShingleSettings};
pub use super::slst::{SlstSentenceWords, SlstSettings};
pub use super::spotsigs::SpotSigsSettings;
pub use super::topwords::TopWordsSettings;

/// Declares [`MethodsConfig`], the shared keys and one field per family,
/// and goes through the families in that order wherever all of them count:
/// the keys, the checks, the flat section both ways. The families are
/// listed once, in the invocation below.
macro_rules! method_families {
    ($($(#[$doc:meta])* $field:ident: $family:ty,)*) => {
        /// The methods' settings: which run, and each family's own
        /// settings, defined, defaulted and checked in the family's file.
        /// In a job file they are one flat `[methods]` section whose keys
        /// carry their family's prefix (`descr_rounds`, `spotsigs_tau`):
        /// the keys of every earlier job file. [`MethodsConfig`]'s
        /// (de)serializer routes each key to its family, and a key no
        /// family knows is an error, as `deny_unknown_fields` makes it in
        /// the other sections.
        #[derive(Debug, Clone, PartialEq)]
        pub struct MethodsConfig {
            /// Methods run when `--methods` is not given.
            pub enabled: Vec<String>,
            /// a11, a12: split chains where neighbouring length ratio
            /// exceeds this.
            pub chain_ratio: f64,
            $($(#[$doc])* pub $field: $family,)*
        }

        impl MethodsConfig {
            /// Every key of `[methods]`, the shared ones first, then family
            /// by family.
            pub fn keys() -> Vec<String> {
                [keys_of::<Shared>(), $(keys_of::<$family>(),)*].concat()
            }

            fn check_families(&self, p: &mut Problems) {
                $(self.$field.check(p);)*
            }
        }

        impl Default for MethodsConfig {
            fn default() -> Self {
                let shared = Shared::default();
                MethodsConfig {
                    enabled: shared.enabled,
                    chain_ratio: shared.chain_ratio,
                    $($field: <$family>::default(),)*
                }
            }
        }

        impl Serialize for MethodsConfig {
            /// One flat table, as a job file writes it (and the manifests
            /// record it).
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut out = Table::new();
                put(&Shared { enabled: self.enabled.clone(), chain_ratio: self.chain_ratio }, &mut out)?;
                $(put(&self.$field, &mut out)?;)*
                out.serialize(serializer)
            }
        }

        impl<'de> Deserialize<'de> for MethodsConfig {
            /// Each key to its family; a key left over is unknown.
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let mut keys = Table::deserialize(deserializer)?;
                let shared: Shared = take(&mut keys)?;
                let config = MethodsConfig {
                    enabled: shared.enabled,
                    chain_ratio: shared.chain_ratio,
                    $($field: take(&mut keys)?,)*
                };
                match keys.keys().next() {
                    None => Ok(config),
                    Some(unknown) => Err(serde::de::Error::custom(format_args!(
                        "unknown field `{unknown}` in [methods], expected one of {}",
                        MethodsConfig::keys().join(", ")
                    ))),
                }
            }
        }
    };
}

method_families! {
    /// a1, a2, a3, a10 (and a5's term weights).
    top_words: TopWordsSettings,
    /// a4, a5.
    sentences: SentenceSettings,
    /// imatch, a7.
    imatch: IMatchSettings,
    /// a9.
    descr: DescrSettings,
    /// minhash (and a6's seed).
    minhash: MinHashSettings,
    /// a6, a8, a11: the word shingles.
    shingles: ShingleSettings,
    /// spotsigs.
    spotsigs: SpotSigsSettings,
    /// slst.
    slst: SlstSettings,
    /// a11.
    a11: A11Settings,
    /// a12.
    a12: A12Settings,
}

/// The keys of `[methods]` that belong to no family. Their default, every
/// method enabled, and the check that `enabled` names known methods are
/// the registry's ([`super::registry`]), the one place that knows the ids.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(super) struct Shared {
    pub(super) enabled: Vec<String>,
    pub(super) chain_ratio: f64,
}

/// `[methods] chain_ratio` when a job file does not set it.
pub(super) const DEFAULT_CHAIN_RATIO: f64 = 1.15;

/// The keys of a family: those its defaults serialize to.
fn keys_of<T: Serialize + Default>() -> Vec<String> {
    match toml::Value::try_from(T::default()) {
        Ok(toml::Value::Table(table)) => table.into_iter().map(|(k, _)| k).collect(),
        _ => unreachable!("a family's settings serialize to a table of keys"),
    }
}

/// Takes a family's keys out of `keys` and reads them (defaults for the
/// missing ones). A wrong value is reported with its key. (A TOML table in
/// between, not JSON: TOML's `inf` and `nan` must reach the checks.)
fn take<T: Serialize + DeserializeOwned + Default, E: serde::de::Error>(keys: &mut Table) -> Result<T, E> {
    let own: Table = keys_of::<T>().into_iter().filter_map(|k| keys.remove(&k).map(|v| (k, v))).collect();
    toml::Value::Table(own.clone()).try_into().map_err(|e| {
        // The error may not name the key: find the one that fails alone.
        let wrong = own.iter().find(|&(k, v)| {
            let one: Table = [(k.clone(), v.clone())].into_iter().collect();
            toml::Value::Table(one).try_into::<T>().is_err()
        });
        match wrong {
            Some((k, v)) => E::custom(format_args!("[methods] {k} = {v}: {e}")),
            None => E::custom(format_args!("[methods]: {e}")),
        }
    })
}

/// Adds a family's keys to the flat table `out`.
fn put<T: Serialize, E: serde::ser::Error>(family: &T, out: &mut Table) -> Result<(), E> {
    match toml::Value::try_from(family).map_err(E::custom)? {
        toml::Value::Table(table) => {
            out.extend(table);
            Ok(())
        }
        _ => Err(E::custom("a family's settings serialize to a table of keys")),
    }
}

impl MethodsConfig {
    /// True when method `id` is switched on (`--methods`, `[methods] enabled`).
    pub fn is_enabled(&self, id: &str) -> bool {
        self.enabled.iter().any(|m| m == id)
    }

    /// The shared rules (at least one method, the chain ratio), then each
    /// family's; the registry's [`MethodsConfig::check`] adds the known ids.
    pub(super) fn check_settings(&self, p: &mut Problems) {
        p.require(!self.enabled.is_empty(), || "[methods] enabled must name at least one method".to_string());
        p.ratio("methods", "chain_ratio", self.chain_ratio);
        self.check_families(p);
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

impl CandidatesConfig {
    /// `max_edges_per_document` as every step that bounds edges reads it.
    pub fn edge_bound(&self) -> super::EdgeBound {
        super::EdgeBound::new(self.max_edges_per_document)
    }

    /// Both bounds must let at least one document or edge through.
    pub fn check(&self, p: &mut Problems) {
        p.at_least("candidates", "max_group_size", self.max_group_size, 1);
        p.at_least("candidates", "max_edges_per_document", self.max_edges_per_document, 1);
    }
}

impl Default for CandidatesConfig {
    fn default() -> Self {
        CandidatesConfig { max_group_size: 1000, max_edges_per_document: 8 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys of `[methods]` in `jobs/default.toml`.
    fn default_toml_keys() -> Vec<String> {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/jobs/default.toml")).unwrap();
        let job: toml::Table = toml::from_str(&text).unwrap();
        let mut keys: Vec<String> = job["methods"].as_table().unwrap().keys().cloned().collect();
        keys.sort();
        keys
    }

    /// Every key belongs to one family, and `jobs/default.toml` states each
    /// of them: a key a family adds and the file lacks, or two families
    /// claiming one key, fails here.
    #[test]
    fn each_key_has_one_family_and_a_line_in_the_default_job() {
        let mut keys = MethodsConfig::keys();
        let count = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), count, "a key claimed by two families");
        assert_eq!(keys, default_toml_keys());
    }

    /// Written out and read back, the settings are the same, as one flat
    /// section.
    #[test]
    fn the_flat_section_reads_back() {
        let mut config = MethodsConfig::default();
        config.descr.rounds = 7;
        config.spotsigs.chains = vec![(1, 3), (2, 2)];
        config.slst.sentence_words = SlstSentenceWords::Terms;
        config.chain_ratio = 1.3;
        let text = toml::to_string(&config).unwrap();
        assert!(text.contains("descr_rounds = 7") && text.contains("slst_sentence_words = \"terms\""), "{text}");
        assert_eq!(toml::from_str::<MethodsConfig>(&text).unwrap(), config);
        let json = serde_json::to_string(&config).unwrap();
        assert_eq!(serde_json::from_str::<MethodsConfig>(&json).unwrap(), config);
    }

    /// A key no family knows is refused and named; a wrong value is
    /// reported with its key; missing keys keep their defaults.
    #[test]
    fn unknown_keys_and_wrong_values_are_named() {
        let err = toml::from_str::<MethodsConfig>("descr_roundz = 2\n").unwrap_err().to_string();
        assert!(err.contains("unknown field `descr_roundz`") && err.contains("descr_rounds"), "{err}");
        let err = toml::from_str::<MethodsConfig>("spotsigs_tau = \"high\"\n").unwrap_err().to_string();
        assert!(err.contains("[methods] spotsigs_tau = \"high\""), "{err}");
        let partial: MethodsConfig = toml::from_str("a12_num_ratio = 1.5\n").unwrap();
        assert_eq!(partial.a12.num_ratio, 1.5);
        assert_eq!(MethodsConfig { a12: A12Settings::default(), ..partial }, MethodsConfig::default());
    }
}

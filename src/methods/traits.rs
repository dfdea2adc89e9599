//! The traits a method family implements for the [`super::registry`] and
//! [`super::settings`] to gather it by. They sit apart from both, which
//! import every method file, so that a method file implementing them
//! imports neither and no import goes round in a circle.

use super::{DocView, Signature};
use crate::settings::Problems;
use crate::tables::write::{Rows, TableOutput};
use anyhow::Result;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Writes a method's per-document records to a table of its own (minhash's
/// sketches, a11's shingles, a12's records); the registry's
/// [`super::registry::Records`] opens its table and builds it from the
/// settings.
pub trait RecordMethod: Send + Sync + Sized + 'static {
    /// The rows of the method's table (`crate::tables::columns::<table>::Rows`).
    type Rows: Rows;

    /// Whether the records also give the method's signatures: minhash's
    /// bands are made from the sketch it records, so the sketch is computed
    /// once. Such a method has no signer of its own.
    const SIGNS: bool = false;

    /// Appends the records of `docs` to `out`, in document order, so the
    /// table is the same on any number of threads. Returns each document's
    /// signatures if the method [`RecordMethod::SIGNS`], else nothing.
    fn write_records(&self, docs: &[DocView<'_>], out: &mut TableOutput<Self::Rows>) -> Result<Vec<Vec<Signature>>>;
}

/// One family's part of `[methods]`: a struct whose serde names are the
/// flat keys, with a default for every key and its checks.
pub trait FamilySettings: Serialize + DeserializeOwned + Default {
    /// Reports every value the family cannot run with (see each key's doc),
    /// so that no value is silently clamped or rounded and no method
    /// asserts on it.
    fn check(&self, p: &mut Problems);
}

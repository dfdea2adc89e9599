//! The traits a method family implements for the [`super::registry`] and
//! [`super::settings`] to gather it by. They sit apart from both, which
//! import every method file, so that a method file implementing them
//! imports neither and no import goes round in a circle.

use super::{DocView, Signature};
use crate::settings::Problems;
use crate::tables::write::Rows;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Makes a method's per-document records, the rows of a table of its own
/// (minhash's sketches, a11's shingles, a12's records): pure code over a
/// document, whose rows the `signatures` stage writes to the table. The
/// registry's [`super::registry::Records`] builds it from the settings.
pub trait RecordMethod: Send + Sync + Sized + 'static {
    /// The rows of the method's table (`crate::tables::columns::<table>::Rows`).
    type Rows: Rows;

    /// One document's records as the method computes them, before they
    /// become rows.
    type Records: Send;

    /// Whether the records also give the method's signatures: minhash's
    /// bands are made from the sketch it records, so the sketch is computed
    /// once. Such a method has no signer of its own.
    const SIGNS: bool = false;

    /// The records of `doc` (documents are computed in parallel, then
    /// appended in document order, so the table is the same on any number
    /// of threads).
    fn records(&self, doc: &DocView<'_>) -> Self::Records;

    /// Appends `doc`'s `records` to `rows`, one row per record.
    fn append(&self, doc: &DocView<'_>, records: &Self::Records, rows: &mut Self::Rows);

    /// `doc`'s signatures from its records if the method
    /// [`RecordMethod::SIGNS`] (else never called).
    fn signatures(&self, _records: &Self::Records) -> Vec<Signature> {
        Vec::new()
    }
}

/// One family's part of `[methods]`: a struct whose serde names are the
/// flat keys, with a default for every key and its checks.
pub trait FamilySettings: Serialize + DeserializeOwned + Default {
    /// Reports every value the family cannot run with (see each key's doc),
    /// so that no value is silently clamped or rounded and no method
    /// asserts on it.
    fn check(&self, p: &mut Problems);
}

//! Evaluation: how good each method is, against verification and against
//! human labels.
//!
//! - [`gold`]: the human labels (`pipeline run --gold FILE`), pairs or
//!   clusters;
//! - [`judge`]: every method's pairs judged by verification, pooled across
//!   methods as the study does, giving precision with its interval, recall
//!   and F1 (Tables 2 and 3 of the study).
//!
//! The `evaluate` stage ([`crate::stages::evaluate`]) reads the tables and
//! writes `method_quality`, `method_overlap` and the gold tables.

pub mod gold;
pub mod judge;
pub mod settings;

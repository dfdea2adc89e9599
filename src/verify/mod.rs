//! Verification: whether two documents a method proposed are near-
//! duplicates (spec §9), and the clusters the verified pairs make.
//!
//! - [`similarity`]: `2·LCS / (|a| + |b|)`, exact or as Perl's
//!   `String::Similarity` computes it;
//! - [`compare`]: the candidate edges, the verification texts (in memory
//!   or spilled to disk) and one comparison with its cheap bounds first;
//! - [`partners`]: round 0, a document compared with its earlier
//!   partners within its bounds;
//! - [`placement`]: the pass along the keep order that places each
//!   document with the representatives its edges reach, from the
//!   verdicts, and the rounds of the comparisons it lacks, so a cluster's
//!   first document is the copy kept;
//! - [`digest`]: the digest of a verification text, which groups exact
//!   copies before any search;
//! - [`union_find`]: disjoint sets, for the history's clusters.
//!
//! The `verify` and `place` stages ([`crate::stages::verify`],
//! [`crate::stages::place`]) read the tables and write the results; `evaluate` and the history's match reuse the same
//! comparison.

pub mod compare;
pub mod digest;
pub mod inputs;
pub mod partners;
pub mod placement;
pub mod settings;
pub mod similarity;
pub mod union_find;

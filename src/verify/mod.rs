//! Verification: whether two documents a method proposed are near-
//! duplicates (spec §9), and the clusters the verified pairs make.
//!
//! - [`similarity`]: `2·LCS / (|a| + |b|)`, exact or as Perl's
//!   `String::Similarity` computes it;
//! - [`compare`]: the candidate edges, the verification texts (in memory
//!   or spilled to disk) and one comparison with its cheap bounds first;
//! - [`placement`]: a component's documents placed in the keep order, each
//!   compared with the representatives its edges reach, so a cluster's
//!   first document is the copy kept;
//! - [`components`]: a verify task's documents, edges and rows as dense
//!   arrays, and one component placed into rows;
//! - [`digest`]: the digest of a verification text, which groups exact
//!   copies before any search;
//! - [`union_find`]: disjoint sets, for the components and the history's
//!   clusters.
//!
//! The `verify` stage ([`crate::stages::verify`]) reads the tables and
//! writes the results; `evaluate` and the history's match reuse the same
//! comparison.

pub mod compare;
pub mod components;
pub mod digest;
pub mod inputs;
pub mod placement;
pub mod settings;
pub mod similarity;
pub mod union_find;

//! Verification: whether two documents a method proposed are near-
//! duplicates (spec §9), and the clusters the verified pairs make.
//!
//! - [`similarity`]: `2·LCS / (|a| + |b|)`, exact or as Perl's
//!   `String::Similarity` computes it;
//! - [`compare`]: a document as compared and one comparison with its
//!   cheap bounds first;
//! - [`candidate_methods`]: the methods of the candidate edges as the bits
//!   of a mask;
//! - [`spilled_texts`]: verification texts read back from the file a
//!   stage spilled them to;
//! - [`partners`]: round 0, a document compared with its earlier
//!   partners within its bounds;
//! - [`placement`]: the pass along the keep order that places each
//!   document with the representatives its edges reach, from the
//!   verdicts, and the rounds of the comparisons it lacks, so a cluster's
//!   first document is the copy kept;
//! - [`digest`]: the digest of a verification text, which groups exact
//!   copies before any search.
//!
//! Pure code over rows and texts in memory: the stages of
//! [`crate::stages::verify`] (`verify_pairs`, `verify`, `place`) read the
//! tables, hand these steps what they need, and write the results;
//! `evaluate` and the history's match reuse the same comparison.

pub mod candidate_methods;
pub mod compare;
pub mod digest;
pub mod partners;
pub mod placement;
pub mod settings;
pub mod similarity;
pub mod spilled_texts;

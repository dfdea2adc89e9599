//! What the methods read, from the tables earlier stages wrote: each
//! document's tokens ([`tokens`], the form [`super::DocView`] gives a
//! method), the corpus statistics ([`corpus_stats`]), a9's sample
//! ([`descr_sample`]) and the state a method chose in stage
//! `method_state` ([`method_state`]). Kept beside the methods so that a
//! stage hands a method its inputs without knowing their tables.

pub mod corpus_stats;
pub mod descr_sample;
pub mod method_state;
pub mod tokens;

//! Placeholder until the normalizer lands.
pub struct Normalizer;

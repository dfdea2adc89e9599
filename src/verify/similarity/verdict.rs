//! How a comparison at a limit ends: a module of its own because both
//! similarity modes return it ([`super`]'s exact one and the Perl port of
//! [`super::string_similarity`]), and neither may import the other.

/// How a comparison at a limit ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// The similarity, at least the limit.
    Similar(f64),
    /// Computed to the end, below the limit: the similarity of the best
    /// alignment within the edits the limit allows (the exact value when
    /// that alignment is the best of all, which a value this close to the
    /// limit usually is; never above the exact value).
    Below(f64),
    /// Stopped before the end: a bound showed the limit out of reach. The
    /// bound it stopped at: the most an alignment within the edits the
    /// limit allows could still reach (the exact value is below the limit,
    /// and below this bound unless its alignment needs more edits).
    StoppedEarly(f64),
}

//! Terms as integer ids: the corpus's term dictionary (the `df` table) and
//! each document's terms looked up in it once per stage.
//!
//! Every frequency-weighted method (a1–a3, a5, a9, a10) starts from a
//! document's term frequencies and looks each distinct term up in a
//! corpus-wide table (IDF, lexicon, threshold). With strings, that is one
//! hash map per method per document and one string hash per term per
//! method. Here a document's terms are turned into ids of the [`TermDict`]
//! once ([`super::term_ids::TermIds::of`]), with their counts, and a method's corpus-wide
//! table is an array indexed by id, built once in its constructor.
//!
//! Ids follow the terms' byte order, so for two terms of the dictionary
//! comparing ids is comparing the strings: a method that orders terms (ties
//! broken by the term, joins in alphabetical order) orders ids. A term
//! missing from the dictionary (the statistics and the documents come from
//! different runs) gets an id past the dictionary's end, numbered within its
//! document; [`DocView::term_order`](super::DocView::term_order) compares such ids through their
//! strings.

use foldhash::{HashMap, HashMapExt};

/// Document frequency and collection frequency of one term.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TermStats {
    /// Number of documents containing the term.
    pub df: u64,
    /// Number of occurrences in the corpus.
    pub cf: u64,
}

/// The corpus's terms with their statistics, numbered in byte order.
#[derive(Debug, Clone, Default)]
pub struct TermDict {
    /// Term of each id, in byte order.
    terms: Vec<Box<str>>,
    /// Statistics of each id.
    stats: Vec<TermStats>,
    /// Id of each term.
    index: HashMap<Box<str>, u32>,
}

impl FromIterator<(String, TermStats)> for TermDict {
    /// Numbers the terms in byte order. `df` has one row per term; of a
    /// term given twice, one is kept.
    fn from_iter<I: IntoIterator<Item = (String, TermStats)>>(rows: I) -> Self {
        let mut rows: Vec<(String, TermStats)> = rows.into_iter().collect();
        rows.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        rows.dedup_by(|a, b| a.0 == b.0);
        let mut dict = TermDict { index: HashMap::with_capacity(rows.len()), ..TermDict::default() };
        for (id, (term, st)) in rows.into_iter().enumerate() {
            let term: Box<str> = term.into();
            dict.index.insert(term.clone(), id as u32);
            dict.terms.push(term);
            dict.stats.push(st);
        }
        dict
    }
}

impl TermDict {
    /// Number of terms; every id of the dictionary is below it.
    pub fn len(&self) -> usize {
        self.terms.len()
    }

    /// True when the dictionary has no term.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The id of `term`, if the dictionary has it.
    pub fn id(&self, term: &str) -> Option<u32> {
        self.index.get(term).copied()
    }

    /// The statistics of `term`, if the dictionary has it.
    pub fn get(&self, term: &str) -> Option<TermStats> {
        self.id(term).map(|id| self.stats[id as usize])
    }

    /// Every term with its id and statistics, in byte order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &str, TermStats)> + '_ {
        self.terms.iter().zip(&self.stats).enumerate().map(|(id, (t, &st))| (id as u32, &**t, st))
    }

    /// One value per id, `f` of the term and its statistics: the array a
    /// method looks its corpus-wide numbers up in.
    pub fn map<T>(&self, f: impl Fn(&str, TermStats) -> T) -> Vec<T> {
        self.iter().map(|(_, t, st)| f(t, st)).collect()
    }
}

/// One distinct term of a document: its id, its number of occurrences,
/// and where it first occurs (`DocView::terms[first]` is its string).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TermCount {
    pub id: u32,
    pub tf: u32,
    pub first: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dict(terms: &[&str]) -> TermDict {
        terms.iter().map(|t| (t.to_string(), TermStats { df: 1, cf: 1 })).collect()
    }

    #[test]
    fn ids_follow_byte_order() {
        let d = dict(&["mike", "alpha", "Zulu", "zulu"]);
        let order: Vec<&str> = d.iter().map(|(_, t, _)| t).collect();
        assert_eq!(order, ["Zulu", "alpha", "mike", "zulu"]);
        assert_eq!((d.id("alpha"), d.id("zulu"), d.id("none")), (Some(1), Some(3), None));
    }
}

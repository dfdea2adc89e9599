//! Each document's terms looked up in the corpus's [`TermDict`] once per
//! stage ([`TermIds`]), and a document's distinct terms compared through
//! them. Apart from [`super::terms`], which the [`DocView`] it fills in
//! refers to, so that neither file imports the other's.

use super::terms::{TermCount, TermDict};
use super::DocView;
use foldhash::{HashMap, HashMapExt};
use rayon::prelude::*;
use std::cmp::Ordering;
use std::ops::Range;

/// The term ids of a chunk of documents, in two flat buffers: every
/// occurrence's id (parallel to [`DocView::terms`]) and each document's
/// distinct terms sorted by id ([`DocView::term_counts`]).
#[derive(Debug, Default)]
pub struct TermIds {
    ids: Vec<u32>,
    counts: Vec<TermCount>,
    /// Per document, its ranges in `ids` and `counts`.
    docs: Vec<(Range<usize>, Range<usize>)>,
}

impl TermIds {
    /// Looks the terms of `docs` up in `dict`, documents in parallel.
    pub fn of(docs: &[DocView<'_>], dict: &TermDict) -> TermIds {
        // Each worker counts in a slot array over the dictionary's ids.
        let per_doc: Vec<(Vec<u32>, Vec<TermCount>)> =
            docs.par_iter().map_init(|| vec![0u32; dict.len()], |slots, d| doc_ids(d.terms, dict, slots)).collect();
        let mut out = TermIds {
            ids: Vec::with_capacity(per_doc.iter().map(|d| d.0.len()).sum()),
            counts: Vec::with_capacity(per_doc.iter().map(|d| d.1.len()).sum()),
            docs: Vec::with_capacity(per_doc.len()),
        };
        for (ids, counts) in per_doc {
            let (i, c) = (out.ids.len(), out.counts.len());
            out.ids.extend(ids);
            out.counts.extend(counts);
            out.docs.push((i..out.ids.len(), c..out.counts.len()));
        }
        out
    }

    /// Gives each of `docs` (the documents [`TermIds::of`] was given, in
    /// the same order) its ids and counts.
    pub fn attach<'a>(&'a self, docs: &mut [DocView<'a>]) {
        for (d, (ids, counts)) in docs.iter_mut().zip(&self.docs) {
            d.term_ids = &self.ids[ids.clone()];
            d.term_counts = &self.counts[counts.clone()];
        }
    }
}

/// One document's ids (terms missing from `dict` numbered from its end, by
/// first occurrence) and distinct terms with their counts, sorted by id.
/// `slots` has one zero per dictionary id and is left all zeros: while a
/// document is counted, a known id's slot is 1 + its place in the counts.
fn doc_ids(terms: &[&str], dict: &TermDict, slots: &mut [u32]) -> (Vec<u32>, Vec<TermCount>) {
    let mut unknown: HashMap<&str, u32> = HashMap::new();
    let ids: Vec<u32> = terms
        .iter()
        .map(|t| {
            dict.id(t).unwrap_or_else(|| {
                let next = (dict.len() + unknown.len()) as u32;
                *unknown.entry(t).or_insert(next)
            })
        })
        .collect();
    let mut unknown_slots: HashMap<u32, u32> = HashMap::new();
    let mut counts: Vec<TermCount> = Vec::new();
    for (pos, &id) in ids.iter().enumerate() {
        let slot = match slots.get_mut(id as usize) {
            Some(slot) => slot,
            None => unknown_slots.entry(id).or_insert(0),
        };
        if *slot == 0 {
            counts.push(TermCount { id, tf: 0, first: pos as u32 });
            *slot = counts.len() as u32;
        }
        counts[*slot as usize - 1].tf += 1;
    }
    for c in &counts {
        if let Some(slot) = slots.get_mut(c.id as usize) {
            *slot = 0;
        }
    }
    counts.sort_unstable_by_key(|c| c.id);
    (ids, counts)
}

impl<'a> DocView<'a> {
    /// The string of a distinct term of this document.
    pub fn term_of(&self, c: &TermCount) -> &'a str {
        self.terms[c.first as usize]
    }

    /// Byte order of two distinct terms of this document: by id when both
    /// are in a dictionary of `dict_len` terms, else by their strings.
    pub fn term_order(&self, a: &TermCount, b: &TermCount, dict_len: usize) -> Ordering {
        if (a.id as usize) < dict_len && (b.id as usize) < dict_len {
            a.id.cmp(&b.id)
        } else {
            self.term_of(a).cmp(self.term_of(b))
        }
    }
}

/// Test documents with their ids: each of `docs` looked up in `dict`.
#[cfg(test)]
pub(crate) fn with_ids<'a>(docs: &[DocView<'a>], dict: &TermDict) -> Vec<DocView<'a>> {
    let ids: &'a TermIds = Box::leak(Box::new(TermIds::of(docs, dict)));
    let mut docs = docs.to_vec();
    ids.attach(&mut docs);
    docs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::TermStats;

    fn dict(terms: &[&str]) -> TermDict {
        terms.iter().map(|t| (t.to_string(), TermStats { df: 1, cf: 1 })).collect()
    }

    #[test]
    fn each_document_counts_its_own_terms() {
        // Documents counted one after the other share a worker's slots.
        let d = dict(&["a", "b", "c"]);
        let texts = ["a b a c", "b b", "c x a", "", "a a a"];
        let terms: Vec<Vec<&str>> = texts.iter().map(|t| t.split_whitespace().collect()).collect();
        let mut slots = vec![0u32; d.len()];
        for t in &terms {
            let (ids, counts) = doc_ids(t, &d, &mut slots);
            assert!(slots.iter().all(|&s| s == 0), "slots left set after {t:?}");
            let mut naive: Vec<(u32, u32)> = Vec::new();
            for id in &ids {
                match naive.iter_mut().find(|(i, _)| i == id) {
                    Some(entry) => entry.1 += 1,
                    None => naive.push((*id, 1)),
                }
            }
            naive.sort();
            let counted: Vec<(u32, u32)> = counts.iter().map(|c| (c.id, c.tf)).collect();
            assert_eq!(counted, naive, "{t:?}");
            assert!(counts
                .iter()
                .all(|c| ids[c.first as usize] == c.id && ids[..c.first as usize].iter().all(|&i| i != c.id)));
        }
    }

    #[test]
    fn counts_sorted_by_id_with_first_occurrence_and_unknown_terms_past_the_end() {
        let d = dict(&["alpha", "beta", "gamma"]);
        let terms = ["gamma", "xray", "alpha", "gamma", "xray", "omega", "alpha", "gamma"];
        let docs = with_ids(&[DocView { terms: &terms, ..Default::default() }], &d);
        // Unknown terms numbered from 3 by first occurrence: xray 3, omega 4.
        assert_eq!(docs[0].term_ids, [2, 3, 0, 2, 3, 4, 0, 2]);
        let c = |id, tf, first| TermCount { id, tf, first };
        assert_eq!(docs[0].term_counts, [c(0, 2, 2), c(2, 3, 0), c(3, 2, 1), c(4, 1, 5)]);
        let strings: Vec<&str> = docs[0].term_counts.iter().map(|c| docs[0].term_of(c)).collect();
        assert_eq!(strings, ["alpha", "gamma", "xray", "omega"]);
        // "xray" (3) sorts after "omega" (4) by string, and after "gamma" by id.
        let (gamma, xray, omega) = (&docs[0].term_counts[1], &docs[0].term_counts[2], &docs[0].term_counts[3]);
        assert_eq!(docs[0].term_order(xray, omega, d.len()), Ordering::Greater);
        assert_eq!(docs[0].term_order(gamma, xray, d.len()), Ordering::Less);
    }
}

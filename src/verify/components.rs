//! A verify task's documents, edges and results held as dense arrays
//! (index = position among the task's doc_ids, ascending, so that pairs of
//! indices sort as pairs of doc_ids), and one connected component placed
//! through [`place`] into rows by index.

use anyhow::Result;
use std::collections::HashMap;

use crate::verify::compare::{Doc, Outcome};
use crate::verify::placement::{place, Placed, Rule};

/// The task's documents as verify holds them in memory, by dense index:
/// their position in `ids`, ascending doc_id, so that ordering pairs of
/// indices orders them by doc_id. What the rows and the keep order need;
/// the texts stay on disk until compared.
///
/// Why arrays and not a map of structs: this is held for every document of
/// the task, and it is what grows with the crawl. At 8 copies of the
/// Javadoc crawl (199 k documents, 1.2 M candidate pairs, `--memory-limit
/// 2G`) `verify` peaked at 564 MB with maps of documents, edges, adjacency
/// lists and verdicts, and at 451 MB with these arrays (the million-page
/// run's `verify` peaked at 3.0 GB with the maps).
pub struct Members {
    /// The task's doc_ids, ascending.
    pub ids: Vec<u64>,
    /// Each one's place in the keep order (`[dedup] keep`), [`ABSENT`] for a
    /// document with no `documents` row (never placed).
    pub keep_rank: Vec<u64>,
    /// The urls, one after the other; `url_span[i]` is (start, length).
    pub urls: String,
    pub url_span: Vec<(usize, usize)>,
}

/// The keep rank of a document missing from `documents`.
pub const ABSENT: u64 = u64::MAX;

impl Members {
    /// The dense index of `doc_id`, if it is one of the task's.
    pub fn index(&self, doc_id: u64) -> Option<u32> {
        self.ids.binary_search(&doc_id).ok().map(|i| i as u32)
    }

    /// Whether document `i` has a `documents` row (a keep rank).
    pub fn is_present(&self, i: u32) -> bool {
        self.keep_rank[i as usize] != ABSENT
    }

    /// The url of document `i`.
    pub fn url(&self, i: u32) -> &str {
        let (start, len) = self.url_span[i as usize];
        &self.urls[start..start + len]
    }
}

/// The candidate edges between the task's documents, by dense index, in
/// compressed rows: document i's neighbours are `to[start[i]..start[i + 1]]`,
/// with the masks of the methods that proposed each in `mask`.
pub struct Adjacency {
    pub start: Vec<usize>,
    pub to: Vec<u32>,
    pub mask: Vec<u64>,
}

impl Adjacency {
    /// From the pairs (a, b, mask) between present documents, each once.
    pub fn new(n: usize, pairs: &[(u32, u32, u64)]) -> Adjacency {
        let mut start = vec![0usize; n + 1];
        for &(a, b, _) in pairs {
            start[a as usize + 1] += 1;
            start[b as usize + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut next = start.clone();
        let (mut to, mut mask) = (vec![0u32; start[n]], vec![0u64; start[n]]);
        for &(a, b, m) in pairs {
            for (from, other) in [(a, b), (b, a)] {
                let k = &mut next[from as usize];
                (to[*k], mask[*k]) = (other, m);
                *k += 1;
            }
        }
        Adjacency { start, to, mask }
    }

    /// Document i's neighbours and their masks.
    pub fn of(&self, i: u32) -> impl Iterator<Item = (u32, u64)> + '_ {
        let range = self.start[i as usize]..self.start[i as usize + 1];
        self.to[range.clone()].iter().copied().zip(self.mask[range].iter().copied())
    }
}

/// One comparison made, by dense index ([`Members`]; a < b, so rows sort
/// by doc_id): a `duplicates` row when `similarity` is set, a
/// `failed_pairs` row otherwise.
pub struct Compared {
    pub a: u32,
    pub b: u32,
    /// The methods whose edges led to the comparison.
    pub methods: u64,
    pub similarity: Option<f64>,
}

/// One member of a cluster of two or more, by dense index (its size is
/// counted when the rows are written, with the exact copies added).
pub struct ClusterRow {
    pub doc: u32,
    pub representative: u32,
    pub similarity: Option<f64>,
}

/// What one component gives, by dense index: its comparisons, its
/// clusters' members, and counts for the manifest.
#[derive(Default)]
pub struct ComponentResult {
    pub compared: Vec<Compared>,
    pub clustered: Vec<ClusterRow>,
    pub outcomes: [u64; Outcome::KINDS],
    pub capped: u64,
    /// Candidate pairs the comparison bounds left uncompared.
    pub uncompared: u64,
    /// Of those, the comparisons the budget of failing comparisons left out.
    pub over_budget: u64,
}

/// Places one component (its doc_ids, as the union of the candidate edges
/// gave them): its documents with a `documents` row, in the keep order,
/// through [`place`], each text read by `text(doc_id)` when it is compared
/// (a missing text is an empty one; the url is not needed to compare).
pub fn place_component(
    component: &[u64],
    members: &Members,
    adjacency: &Adjacency,
    text: impl Fn(u64) -> Result<String> + Sync,
    rule: Rule,
) -> Result<ComponentResult> {
    let mut local: Vec<u32> =
        component.iter().filter_map(|&id| members.index(id).filter(|&i| members.is_present(i))).collect();
    local.sort_by_key(|&i| members.keep_rank[i as usize]);
    let position: HashMap<u32, usize> = local.iter().enumerate().map(|(k, &i)| (i, k)).collect();
    let local_edges: Vec<Vec<(usize, u64)>> = local
        .iter()
        .map(|&i| {
            let mut e: Vec<(usize, u64)> =
                adjacency.of(i).filter_map(|(other, mask)| position.get(&other).map(|&j| (j, mask))).collect();
            e.sort_unstable();
            e
        })
        .collect();
    drop(position);
    let load = |j: usize| {
        let id = members.ids[local[j] as usize];
        Ok(Doc::new(id, String::new(), text(id)?))
    };
    let placed = place(&local_edges, load, rule)?;
    Ok(component_result(&local, placed))
}

/// A placed component's rows by dense index (`local[k]` is the index of
/// its k-th document in keep order).
fn component_result(local: &[u32], placed: Placed) -> ComponentResult {
    let mut result = ComponentResult {
        capped: placed.capped,
        uncompared: placed.uncompared,
        over_budget: placed.over_budget,
        ..ComponentResult::default()
    };
    for c in &placed.comparisons {
        let (x, y) = (local[c.doc], local[c.other]);
        let (a, b) = (x.min(y), x.max(y));
        result.compared.push(Compared { a, b, methods: c.methods, similarity: c.similarity });
        result.outcomes[c.outcome as usize] += 1;
    }
    let mut sizes = vec![0u64; local.len()];
    for &r in &placed.representative {
        sizes[r] += 1;
    }
    for (k, &i) in local.iter().enumerate() {
        let r = placed.representative[k];
        if sizes[r] > 1 {
            result.clustered.push(ClusterRow { doc: i, representative: local[r], similarity: placed.similarity[k] });
        }
    }
    result
}

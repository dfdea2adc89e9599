//! Cluster placement from the verified candidate edges, closed by rounds
//! (design C of `docs/design.md`; spec §9, "Bounded units of work").
//!
//! Documents are taken in the keep order; each joins the most similar
//! representative, at or above the threshold, of the clusters its edges
//! reach among the documents placed before it, or starts a cluster of its
//! own. So every member is verified against its representative (no
//! chaining A~B~C without A~C), and a cluster's first document in that
//! order is its representative: the copy kept.
//!
//! Where a document goes depends on where its earlier partners went, so
//! placement is a sequential pass along the keep order; but it needs no
//! text. Round 0 (`verify`'s tasks, [`crate::verify::partners`]) compares
//! every candidate pair once, by its later document. The pass
//! ([`pass`]) then reads the edges in keep order with their verdicts,
//! holding one representative per document, and lists the comparisons it
//! lacks: a representative reached through a partner that is not itself a
//! partner. Those are made and the pass runs again ([`Rounds`]),
//! until none is missing. Given the same comparisons, the result is the
//! placement that compares each document with its representatives as it
//! goes (the test below checks it against that rule written out).

use anyhow::Result;
use std::collections::{BTreeMap, HashMap};

use crate::verify::compare::{Comparison, Outcome};
use crate::verify::partners::strength_order;

/// One candidate pair as the pass reads it: the keep indices (0 = first
/// in the keep order) of its later and earlier document, the methods that
/// proposed it, and round 0's verdict.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Edge {
    pub later: u32,
    pub earlier: u32,
    pub methods: u64,
    pub verdict: EdgeVerdict,
}

/// Round 0's verdict on a candidate pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EdgeVerdict {
    /// Verified, with this similarity.
    Similar(f64),
    /// Compared, below the threshold.
    Failed,
    /// Left uncompared by the document's bounds: counts as failed here,
    /// so that the bounds hold in the rounds too.
    Uncompared,
}

/// A comparison the pass lacks: document `doc` with the representative
/// `representative`, reached through partners that `methods` proposed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Wanted {
    pub doc: u32,
    pub representative: u32,
    pub methods: u64,
}

/// What one pass gives.
pub struct Placement {
    /// The representative of each document, by keep index (its own index
    /// for a representative).
    pub representative: Vec<u32>,
    /// Each document's similarity to its representative (None for one).
    pub similarity: Vec<Option<f64>>,
    /// The comparisons this pass lacked (counted as failed in it).
    pub missing: Vec<Wanted>,
    /// Documents whose reached representatives were more than the bound.
    pub capped: u64,
    /// The rounds' comparisons this pass used (the others were asked for by
    /// an earlier pass, before a representative moved).
    pub used: u64,
}

/// One pass over the candidate edges of `n` documents, given grouped by
/// their later document in keep order (each group's edges in any order).
/// Document i is compared with the representatives of its earlier
/// partners, at most `max_comparisons` of them, most methods first: a
/// representative that is itself a partner by round 0's verdict, another
/// by `made` (the rounds' comparisons by (doc, representative)), and one
/// in neither is listed in [`Placement::missing`]. It joins the most
/// similar that verified; ties go to the earlier one.
pub fn pass(
    n: usize,
    edges: impl Iterator<Item = Result<Edge>>,
    made: &HashMap<(u32, u32), Option<f64>>,
    max_comparisons: usize,
) -> Result<Placement> {
    let mut placement = Placement {
        representative: (0..n as u32).collect(),
        similarity: vec![None; n],
        missing: Vec::new(),
        capped: 0,
        used: 0,
    };
    let mut group: Vec<Edge> = Vec::new();
    let mut last: Option<u32> = None;
    for edge in edges {
        let edge = edge?;
        anyhow::ensure!(
            edge.earlier < edge.later && (edge.later as usize) < n && last.is_none_or(|l| l <= edge.later),
            "placement's edges out of keep order at ({}, {})",
            edge.later,
            edge.earlier
        );
        if last.is_some_and(|l| l != edge.later) {
            place_one(&group, &mut placement, made, max_comparisons);
            group.clear();
        }
        last = Some(edge.later);
        group.push(edge);
    }
    if !group.is_empty() {
        place_one(&group, &mut placement, made, max_comparisons);
    }
    Ok(placement)
}

/// Places the later document of `partners` (its edges to earlier
/// documents, all placed).
fn place_one(partners: &[Edge], placement: &mut Placement, made: &HashMap<(u32, u32), Option<f64>>, max: usize) {
    let doc = partners[0].later;
    let mut reached: BTreeMap<u32, u64> = BTreeMap::new();
    for e in partners {
        *reached.entry(placement.representative[e.earlier as usize]).or_default() |= e.methods;
    }
    let mut reps: Vec<(u32, u64)> = reached.into_iter().collect();
    reps.sort_by_key(|&(r, methods)| strength_order(methods, u64::from(r)));
    placement.capped += u64::from(reps.len() > max);
    reps.truncate(max);
    let mut best: Option<(u32, f64)> = None;
    for (r, methods) in reps {
        let similarity = match partners.iter().find(|e| e.earlier == r) {
            Some(e) => match e.verdict {
                EdgeVerdict::Similar(s) => Some(s),
                EdgeVerdict::Failed | EdgeVerdict::Uncompared => None,
            },
            None => match made.get(&(doc, r)) {
                Some(&s) => {
                    placement.used += 1;
                    s
                }
                None => {
                    placement.missing.push(Wanted { doc, representative: r, methods });
                    None
                }
            },
        };
        if let Some(s) = similarity {
            if best.is_none_or(|(b, bs)| s > bs || (s == bs && r < b)) {
                best = Some((r, s));
            }
        }
    }
    if let Some((r, s)) = best {
        placement.representative[doc as usize] = r;
        placement.similarity[doc as usize] = Some(s);
    }
}

/// A comparison a round made: what was wanted, its similarity (None below
/// the threshold), how it ended and the value it ended at, and the round
/// (1 = the first).
pub struct RoundComparison {
    pub wanted: Wanted,
    pub similarity: Option<f64>,
    pub outcome: Outcome,
    pub value: f64,
    pub round: u32,
}

/// The comparisons the rounds made. The caller runs [`Rounds::pass`] until
/// it lacks none (or a bound on the rounds), and between passes makes what
/// it lacked ([`Rounds::record`]). The set of comparisons made only grows,
/// so the rounds end; given the comparisons, each pass is the sequential
/// rule, and the last one has every comparison it asks for.
#[derive(Default)]
pub struct Rounds {
    known: HashMap<(u32, u32), Option<f64>>,
    pub made: Vec<RoundComparison>,
    /// The rounds of comparisons made so far.
    pub round: u32,
}

impl Rounds {
    /// A [`pass`] with the comparisons made so far.
    pub fn pass(
        &self,
        n: usize,
        edges: impl Iterator<Item = Result<Edge>>,
        max_comparisons: usize,
    ) -> Result<Placement> {
        pass(n, edges, &self.known, max_comparisons)
    }

    /// Records a round: the comparisons a pass lacked and their verdicts.
    pub fn record(&mut self, wanted: &[Wanted], verdicts: Vec<Comparison>) -> Result<()> {
        anyhow::ensure!(
            verdicts.len() == wanted.len(),
            "a round compared {} of {} pairs",
            verdicts.len(),
            wanted.len()
        );
        self.round += 1;
        for (&wanted, c) in wanted.iter().zip(verdicts) {
            self.known.insert((wanted.doc, wanted.representative), c.similarity);
            let (similarity, outcome, value) = (c.similarity, c.outcome, c.value);
            self.made.push(RoundComparison { wanted, similarity, outcome, value, round: self.round });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::similarity::similarity;

    /// Round 0 and the rounds over `texts` (in keep order) and the
    /// `pairs` (i, j, methods), every pair compared, at threshold `t`.
    fn by_rounds(texts: &[&str], pairs: &[(u32, u32, u64)], t: f64, max: usize) -> (Placement, Rounds) {
        let sim = |i: u32, j: u32| Some(similarity(texts[i as usize], texts[j as usize])).filter(|&s| s >= t);
        let mut edges: Vec<Edge> = pairs
            .iter()
            .map(|&(i, j, methods)| {
                let (later, earlier) = (i.max(j), i.min(j));
                let verdict = sim(later, earlier).map_or(EdgeVerdict::Failed, EdgeVerdict::Similar);
                Edge { later, earlier, methods, verdict }
            })
            .collect();
        edges.sort_by_key(|e| (e.later, e.earlier));
        let mut rounds = Rounds::default();
        loop {
            let placement = rounds.pass(texts.len(), edges.iter().copied().map(Ok), max).unwrap();
            if placement.missing.is_empty() {
                return (placement, rounds);
            }
            let verdicts = placement
                .missing
                .iter()
                .map(|w| {
                    let similarity = sim(w.doc, w.representative);
                    Comparison { similarity, outcome: Outcome::Lcs, value: similarity.unwrap_or(0.0) }
                })
                .collect();
            rounds.record(&placement.missing, verdicts).unwrap();
        }
    }

    /// A chain of documents each similar to its neighbours but not to
    /// documents two steps away: members must verify against the
    /// representative, so the chain splits.
    #[test]
    fn chained_similarity_does_not_chain_clusters() {
        let texts = ["aaaaaaaaaa", "aaaaaaaabb", "aaaaaabbbb", "aaaabbbbbb"];
        let (placement, rounds) = by_rounds(&texts, &[(0, 1, 1), (1, 2, 1), (2, 3, 1)], 0.8, 64);
        // 1 joins 0 (0.8); 2 reaches rep 0 through 1, a comparison of
        // round 1: 0.6, so it starts its own cluster; 3 reaches rep 2: 0.8.
        assert_eq!(placement.representative, [0, 0, 2, 2]);
        assert_eq!(placement.similarity, [None, Some(0.8), None, Some(0.8)]);
        let made: Vec<(u32, u32, u32)> =
            rounds.made.iter().map(|c| (c.wanted.doc, c.wanted.representative, c.round)).collect();
        assert_eq!((made, rounds.round), (vec![(2, 0, 1)], 1));
    }

    /// A document reaching a representative only through a partner joins
    /// it once a round has compared them; one reaching two clusters joins
    /// the more similar.
    #[test]
    fn a_round_brings_a_document_to_its_partner_s_representative() {
        let texts = ["aaaaaaaaaa", "aaaaaaaaab", "aaaaaaaaac", "bbbbbbbbbb", "bbbbbbbbba"];
        let (placement, rounds) = by_rounds(&texts, &[(0, 1, 1), (1, 2, 1), (3, 4, 2), (2, 4, 1)], 0.05, 64);
        // 2 reaches 0 through 1 (0.9 in round 1); 4 reaches 3 (0.9) and,
        // once 2 is in 0's cluster, 0 through 2 (0.1, round 2): it joins 3.
        assert_eq!(placement.representative, [0, 0, 0, 3, 3]);
        assert_eq!(rounds.round, 2);
        // With room for one representative, 4 keeps the strongest (bit 1:
        // 3 and bit 0: 0 tie on one method; the earlier, 0, first).
        let (bounded, _) = by_rounds(&texts, &[(0, 1, 1), (1, 2, 1), (3, 4, 2), (2, 4, 1)], 0.05, 1);
        assert_eq!(bounded.representative, [0, 0, 0, 3, 0]);
        assert_eq!(bounded.capped, 1);
    }

    /// The rule the rounds must give: each document in keep order compared
    /// with the representatives of its earlier partners, joining the most
    /// similar that verifies (the earlier on a tie). Written out, and
    /// compared with the rounds on random graphs and texts.
    #[test]
    fn the_rounds_give_the_sequential_placement() {
        let mut state = 5u64;
        let mut next = |n: u64| crate::methods::splitmix64(&mut state) % n;
        for _ in 0..200 {
            let n = 2 + next(14) as usize;
            let texts: Vec<String> =
                (0..n).map(|_| (0..6 + next(6)).map(|_| if next(4) == 0 { 'b' } else { 'a' }).collect()).collect();
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            let mut pairs: Vec<(u32, u32, u64)> = Vec::new();
            for i in 0..n as u32 {
                for j in 0..i {
                    if next(3) == 0 {
                        pairs.push((j, i, 1 + next(3)));
                    }
                }
            }
            let t = 0.6 + next(30) as f64 / 100.0;
            let max = 1 + next(4) as usize;
            let (placement, _) = by_rounds(&texts, &pairs, t, max);
            let (mut rep, mut sim): (Vec<usize>, Vec<Option<f64>>) = ((0..n).collect(), vec![None; n]);
            for i in 0..n {
                let mut reached: BTreeMap<usize, u64> = BTreeMap::new();
                for &(j, _, m) in pairs.iter().filter(|p| p.1 as usize == i) {
                    *reached.entry(rep[j as usize]).or_default() |= m;
                }
                let mut reps: Vec<(usize, u64)> = reached.into_iter().collect();
                reps.sort_by_key(|&(r, m)| (std::cmp::Reverse(m.count_ones()), r));
                reps.truncate(max);
                let mut best: Option<(usize, f64)> = None;
                for (r, _) in reps {
                    let s = similarity(texts[i], texts[r]);
                    if s >= t && best.is_none_or(|(b, bs)| s > bs || (s == bs && r < b)) {
                        best = Some((r, s));
                    }
                }
                if let Some((r, s)) = best {
                    (rep[i], sim[i]) = (r, Some(s));
                }
            }
            let got: Vec<usize> = placement.representative.iter().map(|&r| r as usize).collect();
            assert_eq!((got, &placement.similarity), (rep, &sim), "{texts:?} {pairs:?} {t} {max}");
        }
    }

    /// Edges out of keep order are refused, not placed wrongly.
    #[test]
    fn edges_out_of_order_are_an_error() {
        let edge = |later, earlier| Ok(Edge { later, earlier, methods: 1, verdict: EdgeVerdict::Failed });
        let err = pass(4, [edge(3, 1), edge(2, 0)].into_iter(), &HashMap::new(), 8).err().unwrap();
        assert!(err.to_string().contains("out of keep order"), "{err}");
        assert!(pass(4, [edge(1, 2)].into_iter(), &HashMap::new(), 8).is_err());
    }
}

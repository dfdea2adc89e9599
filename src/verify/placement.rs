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
//! one document's at a time, with the rounds' comparisons sorted the same
//! way beside them; the representatives are kept by the caller
//! ([`Representatives`]: `place` keeps them in a file), and what the pass
//! places or lacks goes out as it goes ([`Placed`]). It lists the
//! comparisons it lacks: a representative reached through a partner that is not itself a
//! partner. Those are made and the pass runs again ([`Rounds`]),
//! until none is missing. Given the same comparisons, the result is the
//! placement that compares each document with its representatives as it
//! goes (the test below checks it against that rule written out).

use anyhow::Result;
use std::collections::BTreeMap;
use std::iter::Peekable;
use std::path::{Path, PathBuf};

use crate::storage::disk_array::{le_u32, le_u64, FixedRecord, RecordFile};
use crate::verify::compare::Outcome;
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

/// Where a pass keeps each document's representative while it walks the
/// keep order: a document not joined to another is its own. `place` keeps
/// them in a file ([`crate::storage::disk_array::DiskArray`]), so that no
/// process holds a number per page of the crawl.
pub trait Representatives {
    /// The representative of `doc` (placed earlier in this pass).
    fn representative(&mut self, doc: u32) -> Result<u32>;
    /// Joins `doc` to the cluster of `representative` (an earlier
    /// document).
    fn join(&mut self, doc: u32, representative: u32) -> Result<()>;
}

/// What one pass counted.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PassCounts {
    /// The comparisons this pass lacked (counted as failed in it).
    pub missing: u64,
    /// Documents whose reached representatives were more than the bound.
    pub capped: u64,
    /// The rounds' comparisons this pass used (the others were asked for by
    /// an earlier pass, before a representative moved).
    pub used: u64,
}

/// What one pass says of one document, in keep order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Placed {
    /// The document joined the cluster of `representative`, at this
    /// similarity.
    Joined { doc: u32, representative: u32, similarity: f64 },
    /// A comparison the pass lacked (pushed for each document in the order
    /// of its representatives).
    Missing(Wanted),
}

/// One pass over the candidate edges, given grouped by their later
/// document in keep order (each group's edges in any order), with the
/// rounds' comparisons `made` sorted by (doc, representative).
/// Document i is compared with the representatives of its earlier
/// partners, at most `max_comparisons` of them, most methods first: a
/// representative that is itself a partner by round 0's verdict, another
/// by `made`, and one in neither is [`Placed::Missing`]. It joins the most
/// similar that verified ([`Placed::Joined`]); ties go to the earlier one.
/// Memory holds one document's edges at a time; the representatives are
/// `representatives`' to keep.
pub fn pass(
    edges: impl Iterator<Item = Result<Edge>>,
    made: impl Iterator<Item = Result<RoundComparison>>,
    representatives: &mut impl Representatives,
    max_comparisons: usize,
    mut placed: impl FnMut(Placed) -> Result<()>,
) -> Result<PassCounts> {
    let mut counts = PassCounts::default();
    let mut made = MadeCursor { made: made.peekable(), of_doc: Vec::new() };
    let mut group: Vec<Edge> = Vec::new();
    let mut last: Option<u32> = None;
    for edge in edges {
        let edge = edge?;
        anyhow::ensure!(
            edge.earlier < edge.later && last.is_none_or(|l| l <= edge.later),
            "placement's edges out of keep order at ({}, {})",
            edge.later,
            edge.earlier
        );
        if last.is_some_and(|l| l != edge.later) {
            place_one(&group, representatives, &mut made, max_comparisons, &mut counts, &mut placed)?;
            group.clear();
        }
        last = Some(edge.later);
        group.push(edge);
    }
    if !group.is_empty() {
        place_one(&group, representatives, &mut made, max_comparisons, &mut counts, &mut placed)?;
    }
    Ok(counts)
}

/// The rounds' comparisons read alongside the edges, one document at a
/// time.
struct MadeCursor<I: Iterator<Item = Result<RoundComparison>>> {
    made: Peekable<I>,
    /// The current document's: (representative, similarity).
    of_doc: Vec<(u32, Option<f64>)>,
}

impl<I: Iterator<Item = Result<RoundComparison>>> MadeCursor<I> {
    /// Moves to `doc` (at or after the last one asked for).
    fn seek(&mut self, doc: u32) -> Result<()> {
        self.of_doc.clear();
        while let Some(next) = self.made.peek() {
            match next {
                Ok(c) if c.wanted.doc > doc => break,
                Ok(c) => {
                    if c.wanted.doc == doc {
                        self.of_doc.push((c.wanted.representative, c.similarity));
                    }
                    self.made.next();
                }
                Err(_) => return Err(self.made.next().expect("peeked").expect_err("an error")),
            }
        }
        Ok(())
    }

    /// The comparison of the current document with `representative`.
    fn get(&self, representative: u32) -> Option<Option<f64>> {
        self.of_doc.iter().find(|(r, _)| *r == representative).map(|&(_, s)| s)
    }
}

/// Places the later document of `partners` (its edges to earlier
/// documents, all placed).
fn place_one<I: Iterator<Item = Result<RoundComparison>>>(
    partners: &[Edge],
    representatives: &mut impl Representatives,
    made: &mut MadeCursor<I>,
    max: usize,
    counts: &mut PassCounts,
    placed: &mut impl FnMut(Placed) -> Result<()>,
) -> Result<()> {
    let doc = partners[0].later;
    made.seek(doc)?;
    let mut reached: BTreeMap<u32, u64> = BTreeMap::new();
    for e in partners {
        *reached.entry(representatives.representative(e.earlier)?).or_default() |= e.methods;
    }
    let mut reps: Vec<(u32, u64)> = reached.into_iter().collect();
    reps.sort_by_key(|&(r, methods)| strength_order(methods, u64::from(r)));
    counts.capped += u64::from(reps.len() > max);
    reps.truncate(max);
    let mut best: Option<(u32, f64)> = None;
    let mut missing: Vec<Wanted> = Vec::new();
    for (r, methods) in reps {
        let similarity = match partners.iter().find(|e| e.earlier == r) {
            Some(e) => match e.verdict {
                EdgeVerdict::Similar(s) => Some(s),
                EdgeVerdict::Failed | EdgeVerdict::Uncompared => None,
            },
            None => match made.get(r) {
                Some(s) => {
                    counts.used += 1;
                    s
                }
                None => {
                    missing.push(Wanted { doc, representative: r, methods });
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
    // By representative, so that a round's comparisons come sorted as the
    // made ones are.
    missing.sort_unstable();
    counts.missing += missing.len() as u64;
    for wanted in missing {
        placed(Placed::Missing(wanted))?;
    }
    if let Some((representative, similarity)) = best {
        representatives.join(doc, representative)?;
        placed(Placed::Joined { doc, representative, similarity })?;
    }
    Ok(())
}

/// A comparison a round made: what was wanted, its similarity (None below
/// the threshold), how it ended and the value it ended at, and the round
/// (1 = the first).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundComparison {
    pub wanted: Wanted,
    pub similarity: Option<f64>,
    pub outcome: Outcome,
    pub value: f64,
    pub round: u32,
}

impl FixedRecord for Wanted {
    const SIZE: usize = 16;
    fn encode(&self, out: &mut [u8]) {
        out[0..4].copy_from_slice(&self.doc.to_le_bytes());
        out[4..8].copy_from_slice(&self.representative.to_le_bytes());
        out[8..16].copy_from_slice(&self.methods.to_le_bytes());
    }
    fn decode(bytes: &[u8]) -> Self {
        Wanted { doc: le_u32(bytes, 0), representative: le_u32(bytes, 4), methods: le_u64(bytes, 8) }
    }
}

impl FixedRecord for RoundComparison {
    /// The wanted pair, then a flag and the similarity, the outcome, the
    /// value and the round.
    const SIZE: usize = Wanted::SIZE + 1 + 8 + 1 + 8 + 4;
    fn encode(&self, out: &mut [u8]) {
        self.wanted.encode(&mut out[0..16]);
        out[16] = u8::from(self.similarity.is_some());
        out[17..25].copy_from_slice(&self.similarity.unwrap_or(0.0).to_le_bytes());
        out[25] = self.outcome as u8;
        out[26..34].copy_from_slice(&self.value.to_le_bytes());
        out[34..38].copy_from_slice(&self.round.to_le_bytes());
    }
    fn decode(bytes: &[u8]) -> Self {
        RoundComparison {
            wanted: Wanted::decode(&bytes[0..16]),
            similarity: (bytes[16] == 1).then(|| f64::from_bits(le_u64(bytes, 17))),
            outcome: Outcome::ALL[usize::from(bytes[25]).min(Outcome::ALL.len() - 1)],
            value: f64::from_bits(le_u64(bytes, 26)),
            round: le_u32(bytes, 34),
        }
    }
}

impl FixedRecord for Edge {
    /// later, earlier, methods, the verdict's kind (0 uncompared, 1
    /// failed, 2 similar) and its similarity.
    const SIZE: usize = 4 + 4 + 8 + 1 + 8;
    fn encode(&self, out: &mut [u8]) {
        out[0..4].copy_from_slice(&self.later.to_le_bytes());
        out[4..8].copy_from_slice(&self.earlier.to_le_bytes());
        out[8..16].copy_from_slice(&self.methods.to_le_bytes());
        let (kind, value) = match self.verdict {
            EdgeVerdict::Uncompared => (0, 0.0),
            EdgeVerdict::Failed => (1, 0.0),
            EdgeVerdict::Similar(s) => (2, s),
        };
        out[16] = kind;
        out[17..25].copy_from_slice(&f64::to_le_bytes(value));
    }
    fn decode(bytes: &[u8]) -> Self {
        let verdict = match bytes[16] {
            2 => EdgeVerdict::Similar(f64::from_bits(le_u64(bytes, 17))),
            1 => EdgeVerdict::Failed,
            _ => EdgeVerdict::Uncompared,
        };
        Edge { later: le_u32(bytes, 0), earlier: le_u32(bytes, 4), methods: le_u64(bytes, 8), verdict }
    }
}

/// The comparisons the rounds made, in a file of the spill folder sorted
/// by (doc, representative), as [`pass`] reads them. The caller runs
/// [`Rounds::pass`] until it lacks none (or a bound on the rounds), and
/// between passes makes what it lacked and hands them over
/// ([`Rounds::record`]). The set of comparisons made only grows, so the
/// rounds end; given the comparisons, each pass is the sequential rule,
/// and the last one has every comparison it asks for.
pub struct Rounds {
    out: PathBuf,
    made: RecordFile<RoundComparison>,
    /// The rounds of comparisons made so far.
    pub round: u32,
}

impl Rounds {
    /// No comparison made yet; files go to the spill folder under `out`.
    pub fn new(out: &Path) -> Result<Rounds> {
        Ok(Rounds { out: out.to_path_buf(), made: RecordFile::create(out, "placement-made")?, round: 0 })
    }

    /// A [`pass`] with the comparisons made so far.
    pub fn pass(
        &mut self,
        edges: impl Iterator<Item = Result<Edge>>,
        representatives: &mut impl Representatives,
        max_comparisons: usize,
        placed: impl FnMut(Placed) -> Result<()>,
    ) -> Result<PassCounts> {
        pass(edges, self.made.read()?, representatives, max_comparisons, placed)
    }

    /// Records round `self.round + 1`: the comparisons a pass lacked, in
    /// the order it listed them, with their verdicts (each of that round).
    pub fn record(&mut self, compared: impl Iterator<Item = Result<RoundComparison>>) -> Result<()> {
        self.round += 1;
        let round = self.round;
        let mut merged = RecordFile::create(&self.out, "placement-made")?;
        let mut earlier = self.made.read()?.peekable();
        let mut previous: Option<Wanted> = None;
        for c in compared {
            let c = c?;
            anyhow::ensure!(c.round == round, "a comparison of round {} recorded in round {round}", c.round);
            let key = (c.wanted.doc, c.wanted.representative);
            anyhow::ensure!(
                previous.is_none_or(|p| (p.doc, p.representative) < key),
                "a round's comparisons out of order at ({}, {})",
                key.0,
                key.1
            );
            previous = Some(c.wanted);
            while let Some(e) =
                earlier.next_if(|e| e.as_ref().map_or(true, |e| (e.wanted.doc, e.wanted.representative) < key))
            {
                merged.push(&e?)?;
            }
            merged.push(&c)?;
        }
        for e in earlier {
            merged.push(&e?)?;
        }
        self.made = merged;
        Ok(())
    }

    /// Every comparison made, by (doc, representative).
    pub fn made(&mut self) -> Result<impl Iterator<Item = Result<RoundComparison>> + '_> {
        self.made.read()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::similarity::similarity;
    use std::collections::HashMap;

    impl Representatives for HashMap<u32, u32> {
        fn representative(&mut self, doc: u32) -> Result<u32> {
            Ok(self.get(&doc).copied().unwrap_or(doc))
        }
        fn join(&mut self, doc: u32, representative: u32) -> Result<()> {
            self.insert(doc, representative);
            Ok(())
        }
    }

    /// What the last pass placed: each document's representative and
    /// similarity to it, and the rounds' comparisons as (doc,
    /// representative, round).
    struct ByRounds {
        representative: Vec<u32>,
        similarity: Vec<Option<f64>>,
        capped: u64,
        made: Vec<(u32, u32, u32)>,
        rounds: u32,
    }

    /// Round 0 and the rounds over `texts` (in keep order) and the
    /// `pairs` (i, j, methods), every pair compared, at threshold `t`.
    fn by_rounds(texts: &[&str], pairs: &[(u32, u32, u64)], t: f64, max: usize) -> ByRounds {
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
        let out = std::env::temp_dir().join(format!("neardup-placement-{}", std::process::id()));
        let mut rounds = Rounds::new(&out).unwrap();
        loop {
            let n = texts.len();
            let mut placed = ByRounds {
                representative: (0..n as u32).collect(),
                similarity: vec![None; n],
                capped: 0,
                made: Vec::new(),
                rounds: rounds.round,
            };
            let mut missing = Vec::new();
            let mut representatives = HashMap::new();
            let counts = rounds
                .pass(edges.iter().copied().map(Ok), &mut representatives, max, |p| {
                    match p {
                        Placed::Joined { doc, representative, similarity } => {
                            placed.representative[doc as usize] = representative;
                            placed.similarity[doc as usize] = Some(similarity);
                        }
                        Placed::Missing(w) => missing.push(w),
                    }
                    Ok(())
                })
                .unwrap();
            assert_eq!(counts.missing, missing.len() as u64);
            if missing.is_empty() {
                placed.capped = counts.capped;
                placed.made = rounds
                    .made()
                    .unwrap()
                    .map(|c| c.map(|c| (c.wanted.doc, c.wanted.representative, c.round)))
                    .collect::<Result<_>>()
                    .unwrap();
                return placed;
            }
            let round = rounds.round + 1;
            let compared = missing.into_iter().map(|w| {
                let similarity = sim(w.doc, w.representative);
                Ok(RoundComparison {
                    wanted: w,
                    similarity,
                    outcome: Outcome::Lcs,
                    value: similarity.unwrap_or(0.0),
                    round,
                })
            });
            rounds.record(compared).unwrap();
        }
    }

    /// A chain of documents each similar to its neighbours but not to
    /// documents two steps away: members must verify against the
    /// representative, so the chain splits.
    #[test]
    fn chained_similarity_does_not_chain_clusters() {
        let texts = ["aaaaaaaaaa", "aaaaaaaabb", "aaaaaabbbb", "aaaabbbbbb"];
        let placed = by_rounds(&texts, &[(0, 1, 1), (1, 2, 1), (2, 3, 1)], 0.8, 64);
        // 1 joins 0 (0.8); 2 reaches rep 0 through 1, a comparison of
        // round 1: 0.6, so it starts its own cluster; 3 reaches rep 2: 0.8.
        assert_eq!(placed.representative, [0, 0, 2, 2]);
        assert_eq!(placed.similarity, [None, Some(0.8), None, Some(0.8)]);
        assert_eq!((placed.made, placed.rounds), (vec![(2, 0, 1)], 1));
    }

    /// A document reaching a representative only through a partner joins
    /// it once a round has compared them; one reaching two clusters joins
    /// the more similar.
    #[test]
    fn a_round_brings_a_document_to_its_partner_s_representative() {
        let texts = ["aaaaaaaaaa", "aaaaaaaaab", "aaaaaaaaac", "bbbbbbbbbb", "bbbbbbbbba"];
        let placed = by_rounds(&texts, &[(0, 1, 1), (1, 2, 1), (3, 4, 2), (2, 4, 1)], 0.05, 64);
        // 2 reaches 0 through 1 (0.9 in round 1); 4 reaches 3 (0.9) and,
        // once 2 is in 0's cluster, 0 through 2 (0.1, round 2): it joins 3.
        assert_eq!(placed.representative, [0, 0, 0, 3, 3]);
        assert_eq!(placed.rounds, 2);
        assert_eq!(placed.made, [(2, 0, 1), (4, 0, 2)], "the made file stays sorted across rounds");
        // With room for one representative, 4 keeps the strongest (bit 1:
        // 3 and bit 0: 0 tie on one method; the earlier, 0, first).
        let bounded = by_rounds(&texts, &[(0, 1, 1), (1, 2, 1), (3, 4, 2), (2, 4, 1)], 0.05, 1);
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
            let placed = by_rounds(&texts, &pairs, t, max);
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
            let got: Vec<usize> = placed.representative.iter().map(|&r| r as usize).collect();
            assert_eq!((got, &placed.similarity), (rep, &sim), "{texts:?} {pairs:?} {t} {max}");
        }
    }

    /// Edges out of keep order are refused, not placed wrongly.
    #[test]
    fn edges_out_of_order_are_an_error() {
        let edge = |later, earlier| Ok(Edge { later, earlier, methods: 1, verdict: EdgeVerdict::Failed });
        let place = |edges: Vec<Result<Edge>>| {
            pass(edges.into_iter(), std::iter::empty(), &mut HashMap::new(), 8, |_| Ok(())).map(|_| ())
        };
        let err = place(vec![edge(3, 1), edge(2, 0)]).err().unwrap();
        assert!(err.to_string().contains("out of keep order"), "{err}");
        assert!(place(vec![edge(1, 2)]).is_err());
    }

    /// Each record comes back from its bytes as it was.
    #[test]
    fn records_read_back_as_written() {
        let wanted = Wanted { doc: 7, representative: 3, methods: 1 << 40 | 5 };
        for (similarity, outcome) in [(Some(0.875), Outcome::Lcs), (None, Outcome::Screen), (None, Outcome::Identical)]
        {
            let c = RoundComparison { wanted, similarity, outcome, value: 0.125, round: 9 };
            let mut bytes = vec![0u8; RoundComparison::SIZE];
            c.encode(&mut bytes);
            assert_eq!(RoundComparison::decode(&bytes), c);
        }
        for verdict in [EdgeVerdict::Similar(0.9), EdgeVerdict::Failed, EdgeVerdict::Uncompared] {
            let e = Edge { later: 9, earlier: 2, methods: 6, verdict };
            let mut bytes = vec![0u8; Edge::SIZE];
            e.encode(&mut bytes);
            assert_eq!(Edge::decode(&bytes), e);
        }
        for (i, outcome) in Outcome::ALL.iter().enumerate() {
            assert_eq!(*outcome as usize, i, "Outcome::ALL is in the order of the outcomes' numbers");
        }
    }
}

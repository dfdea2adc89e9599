//! The steps of matching a night against the earlier crawls of the
//! history, over rows in memory: the candidate repeats compared
//! ([`verify_repeats`]), and the night's clusters and verified repeats
//! joined into groups that span crawls ([`cross_crawl_groups`]). The three
//! stages of `crate::stages::history` read their tables, call these and
//! write the results.

use rayon::prelude::*;
use std::collections::{BTreeSet, HashMap};

use crate::history::union_find::UnionFind;
use crate::methods::registry;
use crate::verify::compare::{compare, Comparison, Doc, OutcomeCounts};
use crate::verify::settings::PairRule;

/// A candidate repeat of a night's page: (night doc, earlier doc, earlier
/// crawl), and the methods that proposed it (repeats allowed).
pub type CandidateRepeat = ((u64, u64, String), Vec<String>);

/// Compares each candidate repeat `pairs` of a night page in `night` with
/// its earlier page in `earlier` (by doc id and crawl) by `rule`, in
/// parallel; a pair a method that includes its comparison (a11) proposed
/// is never screened (spec §9). Returns each pair's similarity (None when
/// it fails, or when either text is missing) and the comparisons by
/// outcome.
pub fn verify_repeats(
    pairs: &[CandidateRepeat],
    night: &HashMap<u64, Doc>,
    earlier: &HashMap<(u64, String), Doc>,
    rule: PairRule,
) -> (Vec<Option<f64>>, OutcomeCounts) {
    let compared: Vec<Option<Comparison>> = pairs
        .par_iter()
        .map(|((doc, other, crawl), methods)| {
            let own = methods.iter().any(|m| registry::includes_comparison(m));
            let rule = if own { rule.without_screen() } else { rule };
            match (night.get(doc), earlier.get(&(*other, crawl.clone()))) {
                (Some(a), Some(b)) => Some(compare(a, b, rule)),
                _ => None,
            }
        })
        .collect();
    let mut outcomes = OutcomeCounts::default();
    compared.iter().flatten().for_each(|c| outcomes.add(c.outcome));
    (compared.into_iter().map(|c| c.and_then(|c| c.similarity)).collect(), outcomes)
}

/// The members of the groups of two or more that span crawls, as the
/// columns of the `members` relation of `jobs/crawl_clusters.sql`: one
/// row per member, its group's number, its crawl and its doc id.
#[derive(Debug, Default, PartialEq)]
pub struct CrossCrawlGroups {
    /// The member's group, numbered from 0.
    pub group_no: Vec<u64>,
    /// The member's crawl id.
    pub crawl: Vec<String>,
    /// The member's doc id in its crawl.
    pub doc_id: Vec<u64>,
}

/// The connected groups of `edges` between (crawl, doc) pages (the
/// night's clusters and its verified repeats), those of two or more
/// members. Every member is numbered once, in (crawl, doc) order, so the
/// groups' numbers depend on the members only, not on the edges' order.
pub fn cross_crawl_groups(edges: &[((String, u64), (String, u64))]) -> CrossCrawlGroups {
    let members: Vec<(String, u64)> =
        edges.iter().flat_map(|(a, b)| [a, b]).cloned().collect::<BTreeSet<_>>().into_iter().collect();
    let number = |m: &(String, u64)| members.binary_search(m).expect("every member is listed") as u64;
    let mut sets = UnionFind::new();
    for (a, b) in edges {
        sets.union(number(a), number(b));
    }
    let mut groups = CrossCrawlGroups::default();
    for (group, component) in sets.components().into_iter().filter(|c| c.len() > 1).enumerate() {
        for i in component {
            let (c, d) = &members[i as usize];
            groups.group_no.push(group as u64);
            groups.crawl.push(c.clone());
            groups.doc_id.push(*d);
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A night cluster {1, 2} with a repeat of 2 in an earlier crawl, and a
    /// repeat of 3 alone: two groups, numbered by their members' (crawl,
    /// doc) order whatever the order of the edges.
    #[test]
    fn groups_join_clusters_through_repeats() {
        let page = |crawl: &str, doc| (crawl.to_string(), doc);
        let mut edges = vec![(page("n", 2), page("n", 1)), (page("n", 2), page("e", 7)), (page("n", 3), page("e", 9))];
        let groups = cross_crawl_groups(&edges);
        assert_eq!(groups.group_no, [0, 0, 0, 1, 1]);
        assert_eq!(groups.crawl, ["e", "n", "n", "e", "n"]);
        assert_eq!(groups.doc_id, [7, 1, 2, 9, 3]);
        edges.reverse();
        assert_eq!(cross_crawl_groups(&edges), groups);
        assert_eq!(cross_crawl_groups(&[]), CrossCrawlGroups::default());
    }

    /// A repeat whose texts are equal verifies with similarity 1; one
    /// whose earlier page is missing is not compared, nor counted.
    #[test]
    fn repeats_verify_against_the_earlier_texts() {
        let rule = crate::verify::settings::VerifyConfig::default().rule();
        let text = "the same page text, crawled on two nights";
        let night = HashMap::from([(1, Doc::new(1, "http://t/a".into(), text.into()))]);
        let earlier = HashMap::from([((5, "e".to_string()), Doc::new(5, "http://t/a".into(), text.into()))]);
        let pairs: Vec<CandidateRepeat> =
            vec![((1, 5, "e".into()), vec!["minhash".into()]), ((1, 6, "e".into()), vec!["minhash".into()])];
        let (similarities, _) = verify_repeats(&pairs, &night, &earlier, rule);
        assert_eq!(similarities, [Some(1.0), None]);
    }
}

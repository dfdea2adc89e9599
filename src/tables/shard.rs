//! Sharding of the map stages, MapReduce style.
//!
//! `ingest`, `blocks`, `tokens`, `descr_sample`, `method_state`, `signatures`,
//! `search_keys`, `search_groups`, `search` and `verify` do the same work
//! for every file, method, document, key or component of candidate edges
//! independently of the
//! others, so they can be cut into N tasks that run anywhere (a shell loop,
//! a Slurm array, a Kubernetes indexed Job) with `--shard I/N`. Every task decides on its own, without
//! talking to the others, what it owns:
//!
//! - ingest: a share of the input files, balanced by size (every task lists
//!   the same files and computes the same assignment);
//! - blocks, tokens, descr_sample, signatures, search_keys: the documents with
//!   `doc_id % N = I` (doc ids are xxh3 hashes, so the shares are even);
//! - method_state: the global methods whose position in the registry's
//!   order has `j % N = I`, each built from `df` (a9 from its sample,
//!   `descr_sample`);
//! - search_groups: the SpotSigs and SL+ST keys with `sig % N = I` (hashes
//!   too), each key's whole group;
//! - search: the candidate pairs whose first document has `doc_a % N = I`;
//! - verify: a share of the connected components of the candidate edges,
//!   balanced by their estimated comparison cost (every task computes the
//!   same assignment; a cluster is built by one task, so a component
//!   cannot be split).
//!
//! A task writes its own part files, `DIR/<table>/part-I-of-N-*.parquet`,
//! and its own manifest; the stages that read its tables wait until all N
//! manifests are there (`runner`). Without `--shard` a stage is simply task
//! 0 of 1.

use std::fmt;
use std::str::FromStr;

/// Task `index` of `count` (0-based, `index < count`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Default for Shard {
    fn default() -> Self {
        Shard::WHOLE
    }
}

impl Shard {
    /// The whole input as one task: what a run without `--shard` is.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// True for the single task of an unsharded run.
    pub fn is_whole(&self) -> bool {
        self.count == 1
    }

    /// True when this task owns the document `doc_id`.
    pub fn owns_doc(&self, doc_id: u64) -> bool {
        doc_id % self.count as u64 == self.index as u64
    }

    /// True when a part file written by task `part` of a stage that shards
    /// by document (`doc_id % M = J`) can hold documents of this task
    /// (`doc_id % N = I`): when J = I modulo gcd(M, N). A task then reads
    /// only those parts, its own alone when M = N, every part of a table
    /// written whole.
    pub fn may_hold_docs_of(&self, part: Shard) -> bool {
        let g = gcd(self.count, part.count);
        part.index % g == self.index % g
    }

    /// A SQL condition selecting this task's documents by the column `col`.
    pub fn doc_predicate(&self, col: &str) -> String {
        if self.is_whole() {
            "TRUE".into()
        } else {
            format!("{col} % {} = {}", self.count, self.index)
        }
    }

    /// The prefix of this task's part files inside a table folder.
    pub fn part_prefix(&self) -> String {
        format!("part-{}-of-{}-", self.index, self.count)
    }

    /// Which task owns each input file, given the files' sizes in their
    /// (sorted, agreed) order: largest first, each to the task with the
    /// fewest bytes so far, ties to the lower task. Every task computes the
    /// same answer from the same listing, and a crawl of a few huge files
    /// still spreads over the tasks.
    pub fn assign_files(sizes: &[u64], count: u32) -> Vec<u32> {
        let mut order: Vec<usize> = (0..sizes.len()).collect();
        order.sort_by(|&a, &b| sizes[b].cmp(&sizes[a]).then(a.cmp(&b)));
        let mut load = vec![0u64; count as usize];
        let mut owner = vec![0u32; sizes.len()];
        for i in order {
            let task = (0..count as usize).min_by_key(|&t| (load[t], t)).unwrap_or(0);
            load[task] += sizes[i];
            owner[i] = task as u32;
        }
        owner
    }
}

/// The greatest common divisor (of two shard counts, at least 1).
fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a.max(1)
    } else {
        gcd(b, a % b)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    /// Parses `I/N` with `0 <= I < N`.
    fn from_str(text: &str) -> Result<Shard, String> {
        let bad = || format!("`{text}` is not a shard like 0/4 (task I of N, 0 <= I < N)");
        let (i, n) = text.trim().split_once('/').ok_or_else(bad)?;
        let index: u32 = i.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// The manifest file name of one task of `stage` (the only task when
/// unsharded).
pub fn manifest_file_name(stage: &str, shard: Shard) -> String {
    if shard.is_whole() {
        format!("{stage}.json")
    } else {
        format!("{stage}.shard-{}-of-{}.json", shard.index, shard.count)
    }
}

/// The task of `stage` whose manifest file is `file_name`, if it is one.
pub fn manifest_task(file_name: &str, stage: &str) -> Option<Shard> {
    let rest = file_name.strip_prefix(stage)?;
    if rest == ".json" {
        return Some(Shard::WHOLE);
    }
    rest.strip_prefix(".shard-")?.strip_suffix(".json")?.replacen("-of-", "/", 1).parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_reads_exactly_the_parts_that_can_hold_its_documents() {
        // Against every document id of one period of both counts.
        for m in 1..=6u32 {
            for n in 1..=6u32 {
                for j in 0..m {
                    for i in 0..n {
                        let (part, task) = (Shard { index: j, count: m }, Shard { index: i, count: n });
                        let shared = (0..m * n).any(|d| d % m == j && d % n == i);
                        assert_eq!(task.may_hold_docs_of(part), shared, "task {task}, part {part}");
                    }
                }
            }
        }
        let own = Shard { index: 1, count: 3 };
        assert!(own.may_hold_docs_of(own) && own.may_hold_docs_of(Shard::WHOLE));
        assert!(!own.may_hold_docs_of(Shard { index: 2, count: 3 }));
    }

    #[test]
    fn shards_parse_and_print() {
        assert_eq!("2/5".parse::<Shard>(), Ok(Shard { index: 2, count: 5 }));
        assert_eq!(" 0 / 1 ".parse::<Shard>(), Ok(Shard::WHOLE));
        for bad in ["", "1", "5/5", "1/0", "-1/3", "a/b", "1/2/3"] {
            assert!(bad.parse::<Shard>().is_err(), "`{bad}` must be rejected");
        }
        assert_eq!(Shard { index: 3, count: 8 }.to_string(), "3/8");
        assert_eq!(Shard { index: 3, count: 8 }.part_prefix(), "part-3-of-8-");
    }

    #[test]
    fn every_document_has_exactly_one_owner() {
        let ids: Vec<u64> = (0..2000u64).map(|i| xxhash_rust::xxh3::xxh3_64(&i.to_le_bytes())).collect();
        let shards: Vec<Shard> = (0..5).map(|index| Shard { index, count: 5 }).collect();
        let mut per_shard = [0usize; 5];
        for &id in &ids {
            let owners: Vec<u32> = shards.iter().filter(|s| s.owns_doc(id)).map(|s| s.index).collect();
            assert_eq!(owners.len(), 1);
            per_shard[owners[0] as usize] += 1;
        }
        // Even shares: 400 expected each, binomial sd about 18.
        assert!(per_shard.iter().all(|&n| (300..500).contains(&n)), "{per_shard:?}");
        assert!(Shard::WHOLE.owns_doc(ids[0]));
        assert_eq!(Shard::WHOLE.doc_predicate("doc_id"), "TRUE");
        assert_eq!(Shard { index: 1, count: 3 }.doc_predicate("doc_id"), "doc_id % 3 = 1");
    }

    #[test]
    fn files_are_balanced_by_size() {
        // Worked by hand: 100 -> task 0, 60 -> 1, 50 -> 1 (60 < 100),
        // 40 -> 0 (100 < 110), 10 -> 1 (110 < 140): loads 140 and 120.
        assert_eq!(Shard::assign_files(&[10, 100, 40, 60, 50], 2), vec![1, 0, 0, 1, 1]);
        // Equal sizes go round in listing order.
        assert_eq!(Shard::assign_files(&[5, 5, 5, 5], 3), vec![0, 1, 2, 0]);
        assert_eq!(Shard::assign_files(&[3, 1], 1), vec![0, 0]);
        assert!(Shard::assign_files(&[], 4).is_empty());
    }
}

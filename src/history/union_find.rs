//! Union-find (disjoint sets) over document ids, for clustering verified
//! pairs into groups of near-duplicates.
//!
//! Document ids are sparse `u64`s; they are mapped to dense `u32` indices on
//! first sight so the parent and size arrays stay compact (4 bytes each per
//! document). `find` uses path halving and `union` joins by size, so a
//! sequence of operations runs in near-linear time.
//!
//! The root of a set depends on the order of the unions; what callers see
//! must not, so [`UnionFind::components`] returns the groups in a canonical
//! order (members ascending, groups by their smallest member).

use std::collections::HashMap;

/// Disjoint sets of `u64` document ids.
#[derive(Debug, Clone, Default)]
pub struct UnionFind {
    /// Dense index of every id seen.
    index: HashMap<u64, u32>,
    /// The id of each dense index.
    ids: Vec<u64>,
    /// Parent index; a root is its own parent.
    parent: Vec<u32>,
    /// Number of members of the set rooted here (meaningful for roots only).
    size: Vec<u32>,
}

impl UnionFind {
    /// An empty structure.
    pub fn new() -> UnionFind {
        UnionFind::default()
    }

    /// Adds `id` as a singleton set if it is new; returns its dense index.
    /// Singletons matter: a document with no verified pair is still a
    /// component of its own.
    pub fn insert(&mut self, id: u64) -> u32 {
        if let Some(&i) = self.index.get(&id) {
            return i;
        }
        let i = u32::try_from(self.ids.len()).expect("more than 2^32 documents in one union-find");
        self.index.insert(id, i);
        self.ids.push(id);
        self.parent.push(i);
        self.size.push(1);
        i
    }

    /// Number of distinct ids inserted.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether no id was inserted.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Root index of the set of dense index `i`, halving the path on the way.
    fn root(&mut self, mut i: u32) -> u32 {
        while self.parent[i as usize] != i {
            let grandparent = self.parent[self.parent[i as usize] as usize];
            self.parent[i as usize] = grandparent;
            i = grandparent;
        }
        i
    }

    /// The representative id of `id`'s set, or `None` if `id` was never
    /// inserted. Stable only until the next `union`.
    pub fn find(&mut self, id: u64) -> Option<u64> {
        let i = *self.index.get(&id)?;
        let r = self.root(i);
        Some(self.ids[r as usize])
    }

    /// Whether `a` and `b` are in the same set (false if either is unknown).
    pub fn same(&mut self, a: u64, b: u64) -> bool {
        match (self.find(a), self.find(b)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        }
    }

    /// Merges the sets of `a` and `b`, inserting them if new; returns whether
    /// two different sets were merged.
    pub fn union(&mut self, a: u64, b: u64) -> bool {
        let ia = self.insert(a);
        let ib = self.insert(b);
        let (ra, rb) = (self.root(ia), self.root(ib));
        if ra == rb {
            return false;
        }
        let (big, small) = if self.size[ra as usize] >= self.size[rb as usize] { (ra, rb) } else { (rb, ra) };
        self.parent[small as usize] = big;
        self.size[big as usize] += self.size[small as usize];
        true
    }

    /// All sets, singletons included: each sorted ascending, the list sorted
    /// by smallest member, so the result depends only on the partition, not
    /// on insertion or union order.
    pub fn components(&mut self) -> Vec<Vec<u64>> {
        let mut by_root: HashMap<u32, Vec<u64>> = HashMap::new();
        for i in 0..self.ids.len() as u32 {
            let r = self.root(i);
            by_root.entry(r).or_default().push(self.ids[i as usize]);
        }
        let mut groups: Vec<Vec<u64>> = by_root
            .into_values()
            .map(|mut g| {
                g.sort_unstable();
                g
            })
            .collect();
        groups.sort_unstable_by_key(|g| g[0]);
        groups
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unions_form_components_with_singletons() {
        let mut uf = UnionFind::new();
        assert!(uf.is_empty());
        assert!(uf.union(30, 10));
        assert!(uf.union(10, 20));
        assert!(!uf.union(20, 30), "already joined");
        uf.insert(5);
        assert!(uf.union(1_000_000_000_000, 7));
        assert_eq!(uf.len(), 6);
        assert!(uf.same(30, 20));
        assert!(!uf.same(5, 10));
        assert!(!uf.same(5, 999), "unknown id");
        assert_eq!(uf.find(999), None);
        assert_eq!(uf.find(5), Some(5));
        assert_eq!(uf.components(), vec![vec![5], vec![7, 1_000_000_000_000], vec![10, 20, 30]]);
    }

    #[test]
    fn components_do_not_depend_on_order() {
        let pairs: Vec<(u64, u64)> = (0..200u64).map(|i| (i * 7 % 101, (i * 13 + 5) % 97 + 300)).collect();
        let mut forward = UnionFind::new();
        for &(a, b) in &pairs {
            forward.union(a, b);
        }
        let mut backward = UnionFind::new();
        for &(a, b) in pairs.iter().rev() {
            backward.union(b, a);
        }
        let components = forward.components();
        assert_eq!(components, backward.components());
        let members: usize = components.iter().map(Vec::len).sum();
        assert_eq!(members, forward.len());
        for g in &components {
            for &x in g {
                assert_eq!(forward.find(x), forward.find(g[0]));
            }
        }
    }

    #[test]
    fn long_chain_stays_consistent() {
        let mut uf = UnionFind::new();
        for i in 0..10_000u64 {
            uf.union(i, i + 1);
        }
        assert!(uf.same(0, 10_000));
        assert_eq!(uf.components().len(), 1);
    }
}

//! The SQL engine's memory pool under a run's limit ([`ActiveSharePool`]).
//!
//! Why not DataFusion's `FairSpillPool`: it gives each spilling operator
//! (sort, aggregation, sort-merge join) the pool divided by every such
//! operator the plan has registered, and DataFusion registers all of a
//! plan's operators when the query starts. The candidates query has about
//! forty of them for two partitions, so each sort or aggregation spilled at
//! about 25 MB of a 1 GB pool while the stage's RSS stayed under 650 MB;
//! a spilled aggregation costs about five times its in-memory run (the
//! count of 9.3 M signatures: 8 CPU-s, against 1.5 in memory), and the
//! spill files to merge grow with the crawl.

use datafusion::common::{resources_datafusion_err, Result};
use datafusion::execution::memory_pool::{MemoryLimit, MemoryPool, MemoryReservation};
use std::collections::HashMap;
use std::sync::Mutex;

/// A pool of `pool_size` bytes shared fairly among the spilling operators
/// that hold memory at the moment, not among all those registered: each
/// may grow to the memory spilling operators may use, divided by the
/// number of them holding some (counting the one asking). An operator
/// holding more than its share keeps it until it asks for more, is
/// refused, and spills.
///
/// Operators that cannot spill (a merge's buffers, a hash join's build
/// side) take what is left of the pool, and spilling operators together
/// hold at most 1 / [`SPILLING_SHARE`] of it: a sort that spills first
/// sorts what it holds into memory that cannot spill, as much again, so a
/// spilling operator alone with more than half the pool would make its own
/// spill fail (and taking the whole pool, the next merge beside it, as
/// DataFusion's greedy pool did).
#[derive(Debug)]
pub struct ActiveSharePool {
    pool_size: usize,
    state: Mutex<State>,
}

/// The part of the pool (1 / SPILLING_SHARE) that spilling operators may
/// hold together; the rest is for the operators that cannot spill.
pub const SPILLING_SHARE: usize = 2;

#[derive(Debug, Default)]
struct State {
    /// Bytes held by operators that cannot spill.
    unspillable: usize,
    /// Bytes held by spilling operators.
    spillable: usize,
    /// Bytes held by each spilling operator (by consumer id) holding any:
    /// by consumer rather than by reservation, since a reservation can be
    /// split into several of one consumer.
    holding: HashMap<usize, usize>,
}

impl ActiveSharePool {
    /// A pool of `pool_size` bytes.
    pub fn new(pool_size: usize) -> Self {
        ActiveSharePool { pool_size, state: Mutex::new(State::default()) }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while the lock was held cannot leave the counts half
        // updated (each update is one statement), so a poisoned lock is
        // still sound.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl std::fmt::Display for ActiveSharePool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}(pool_size: {})", self.name(), self.pool_size)
    }
}

impl MemoryPool for ActiveSharePool {
    fn name(&self) -> &str {
        "active-share"
    }

    fn grow(&self, reservation: &MemoryReservation, additional: usize) {
        let mut state = self.state();
        if reservation.consumer().can_spill() {
            state.spillable += additional;
            *state.holding.entry(reservation.consumer().id()).or_default() += additional;
        } else {
            state.unspillable += additional;
        }
    }

    fn shrink(&self, reservation: &MemoryReservation, shrink: usize) {
        let mut state = self.state();
        if reservation.consumer().can_spill() {
            state.spillable = state.spillable.saturating_sub(shrink);
            let id = reservation.consumer().id();
            if let Some(held) = state.holding.get_mut(&id) {
                *held = held.saturating_sub(shrink);
                if *held == 0 {
                    state.holding.remove(&id);
                }
            }
        } else {
            state.unspillable = state.unspillable.saturating_sub(shrink);
        }
    }

    fn try_grow(&self, reservation: &MemoryReservation, additional: usize) -> Result<()> {
        let mut state = self.state();
        let consumer = reservation.consumer();
        if consumer.can_spill() {
            let for_spilling = (self.pool_size / SPILLING_SHARE).min(self.pool_size.saturating_sub(state.unspillable));
            let held = state.holding.get(&consumer.id()).copied().unwrap_or(0);
            let sharing = state.holding.len() + usize::from(held == 0);
            let share = for_spilling / sharing.max(1);
            if held + additional > share || state.spillable + additional > for_spilling {
                return Err(resources_datafusion_err!(
                    "Failed to allocate additional {additional} bytes for {} with {held} bytes already allocated \
                     - its share of the pool is {share} bytes ({} operators holding memory, {} of {} bytes in use)",
                    consumer.name(),
                    sharing,
                    state.spillable + state.unspillable,
                    self.pool_size
                ));
            }
            state.spillable += additional;
            *state.holding.entry(consumer.id()).or_default() += additional;
        } else {
            let available = self.pool_size.saturating_sub(state.unspillable + state.spillable);
            if additional > available {
                return Err(resources_datafusion_err!(
                    "Failed to allocate additional {additional} bytes for {} with {} bytes already allocated \
                     - {available} of the pool's {} bytes are free",
                    consumer.name(),
                    reservation.size(),
                    self.pool_size
                ));
            }
            state.unspillable += additional;
        }
        Ok(())
    }

    fn reserved(&self) -> usize {
        let state = self.state();
        state.spillable + state.unspillable
    }

    fn memory_limit(&self) -> MemoryLimit {
        MemoryLimit::Finite(self.pool_size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::execution::memory_pool::MemoryConsumer;
    use std::sync::Arc;

    fn pool(bytes: usize) -> Arc<dyn MemoryPool> {
        Arc::new(ActiveSharePool::new(bytes))
    }

    #[test]
    fn a_spilling_operator_alone_takes_the_spilling_share() {
        let pool = pool(1000);
        let sort = MemoryConsumer::new("sort").with_can_spill(true).register(&pool);
        // Registered but holding nothing: no share of the pool.
        let _idle = MemoryConsumer::new("idle").with_can_spill(true).register(&pool);
        sort.try_grow(500).expect("half the pool is for spilling");
        assert!(sort.try_grow(1).is_err(), "the rest is left to operators that cannot spill");
        assert_eq!(pool.reserved(), 500);
    }

    #[test]
    fn operators_holding_memory_share_it() {
        let pool = pool(1000);
        let a = MemoryConsumer::new("a").with_can_spill(true).register(&pool);
        let b = MemoryConsumer::new("b").with_can_spill(true).register(&pool);
        a.try_grow(200).unwrap();
        // b asking makes two sharers: 250 each.
        b.try_grow(250).unwrap();
        assert!(b.try_grow(1).is_err());
        assert!(a.try_grow(100).is_err(), "a is refused past its share and spills");
        a.try_grow(50).unwrap();
        // Once a has spilled everything, b is alone again.
        a.free();
        b.try_grow(250).unwrap();
        assert_eq!(pool.reserved(), 500);
    }

    #[test]
    fn split_reservations_count_as_their_consumer() {
        let pool = pool(1000);
        let a = MemoryConsumer::new("a").with_can_spill(true).register(&pool);
        a.try_grow(400).unwrap();
        let part = a.split(100);
        drop(part);
        assert_eq!(pool.reserved(), 300);
        a.free();
        assert_eq!(pool.reserved(), 0);
        let b = MemoryConsumer::new("b").with_can_spill(true).register(&pool);
        b.try_grow(500).expect("a holds nothing any more");
    }

    #[test]
    fn operators_that_cannot_spill_take_what_is_left() {
        let pool = pool(1000);
        let sort = MemoryConsumer::new("sort").with_can_spill(true).register(&pool);
        let merge = MemoryConsumer::new("merge").register(&pool);
        sort.try_grow(500).unwrap();
        merge.try_grow(500).expect("the rest of the pool");
        assert!(merge.try_grow(1).is_err());
        // The sort's share shrinks with what cannot spill.
        sort.free();
        assert!(sort.try_grow(501).is_err());
        sort.try_grow(500).unwrap();
    }
}

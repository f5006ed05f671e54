//! The sender's outstanding chunks by TSN (issue 14: per-packet cost).
//!
//! TSNs are assigned one by one as DATA chunks are first sent (RFC 9260 §3.3.1) and a
//! chunk leaves the sender's list only when the cumulative TSN ack passes it (§6.2.1 D
//! iii; gap-acknowledged chunks stay, §6.2.1 D iv). So the outstanding TSNs are always one
//! contiguous run `[first, first + len)`: [`TsnQueue`] keeps them in a ring buffer indexed by
//! `tsn - first`, which replaces a `BTreeMap<u64, _>` with O(1) lookups and walks in the
//! same (ascending) order.

use std::collections::VecDeque;

/// Values keyed by a contiguous run of TSNs, lowest first.
#[derive(Clone, Debug)]
pub(crate) struct TsnQueue<T> {
    /// TSN of `items[0]` (meaningless while empty).
    first: u64,
    items: VecDeque<T>,
}

impl<T> Default for TsnQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> TsnQueue<T> {
    /// An empty queue.
    pub(crate) fn new() -> Self {
        TsnQueue {
            first: 0,
            items: VecDeque::new(),
        }
    }

    /// Appends the value of `tsn`, which must be one past the highest TSN held (any TSN
    /// when empty).
    pub(crate) fn push(&mut self, tsn: u64, v: T) {
        if self.items.is_empty() {
            self.first = tsn;
        }
        assert_eq!(
            tsn,
            self.first + self.items.len() as u64,
            "TSNs are contiguous"
        );
        self.items.push_back(v);
    }

    /// Nothing held.
    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    fn index(&self, tsn: u64) -> Option<usize> {
        let i = tsn.checked_sub(self.first)?;
        (i < self.items.len() as u64).then_some(i as usize)
    }

    /// The value of `tsn`, if held.
    pub(crate) fn get(&self, tsn: u64) -> Option<&T> {
        self.index(tsn).map(|i| &self.items[i])
    }

    /// The value of `tsn`, if held, mutably.
    pub(crate) fn get_mut(&mut self, tsn: u64) -> Option<&mut T> {
        self.index(tsn).map(|i| &mut self.items[i])
    }

    /// Removes and returns the lowest TSN's value if that TSN is at most `upto`.
    pub(crate) fn pop_upto(&mut self, upto: u64) -> Option<(u64, T)> {
        if self.items.is_empty() || self.first > upto {
            return None;
        }
        let tsn = self.first;
        let v = self.items.pop_front().expect("not empty");
        self.first += 1;
        Some((tsn, v))
    }

    /// The index range of the TSNs held in `[lo, hi)`.
    fn span(&self, lo: u64, hi: u64) -> std::ops::Range<usize> {
        let n = self.items.len() as u64;
        let a = lo.saturating_sub(self.first).min(n);
        let b = hi.saturating_sub(self.first).min(n).max(a);
        a as usize..b as usize
    }

    /// The TSNs held in `[lo, hi)`, ascending.
    pub(crate) fn tsns_in(&self, lo: u64, hi: u64) -> std::ops::Range<u64> {
        let r = self.span(lo, hi);
        self.first + r.start as u64..self.first + r.end as u64
    }

    /// `(tsn, value)` for the TSNs held in `[lo, hi)`, ascending, mutably.
    pub(crate) fn range_mut(&mut self, lo: u64, hi: u64) -> impl Iterator<Item = (u64, &mut T)> {
        let r = self.span(lo, hi);
        let first = self.first + r.start as u64;
        self.items
            .range_mut(r)
            .enumerate()
            .map(move |(i, v)| (first + i as u64, v))
    }

    /// `(tsn, value)` for every TSN held, ascending.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, &T)> {
        let first = self.first;
        self.items
            .iter()
            .enumerate()
            .map(move |(i, v)| (first + i as u64, v))
    }

    /// Every value, by ascending TSN.
    pub(crate) fn values(&self) -> impl Iterator<Item = &T> {
        self.items.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[derive(Clone, Debug)]
    enum Op {
        Push(u8),
        PopUpto(u8),
        Get(u8),
        Range(u8, u8),
        Bump(u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => any::<u8>().prop_map(Op::Push),
            1 => any::<u8>().prop_map(Op::PopUpto),
            1 => any::<u8>().prop_map(Op::Get),
            1 => (any::<u8>(), any::<u8>()).prop_map(|(a, b)| Op::Range(a, b)),
            1 => any::<u8>().prop_map(Op::Bump),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        /// The queue behaves as the `BTreeMap<u64, _>` it replaces for the sender's use:
        /// pushes at the next TSN, removal from the front up to a cumulative point, lookups
        /// and ascending range walks.
        #[test]
        fn tsn_queue_matches_btree_map(start in 0u64..1000, ops in proptest::collection::vec(op(), 0..200)) {
            let mut q: TsnQueue<u64> = TsnQueue::new();
            let mut m: BTreeMap<u64, u64> = BTreeMap::new();
            let mut next = start;
            for o in ops {
                match o {
                    Op::Push(v) => {
                        q.push(next, v as u64);
                        m.insert(next, v as u64);
                        next += 1;
                    }
                    Op::PopUpto(d) => {
                        let upto = (start + d as u64 / 2).min(next);
                        loop {
                            let want = m.first_key_value().filter(|(&k, _)| k <= upto).map(|(&k, &v)| (k, v));
                            if let Some((k, _)) = want {
                                m.remove(&k);
                            }
                            let got = q.pop_upto(upto);
                            prop_assert_eq!(got, want);
                            if want.is_none() {
                                break;
                            }
                        }
                    }
                    Op::Get(d) => {
                        let k = start + d as u64;
                        prop_assert_eq!(q.get(k), m.get(&k));
                    }
                    Op::Range(a, b) => {
                        let (lo, hi) = (start + a as u64, start + b as u64);
                        let want: Vec<u64> = if lo < hi { m.range(lo..hi).map(|(&k, _)| k).collect() } else { Vec::new() };
                        let got: Vec<u64> = q.tsns_in(lo, hi).collect();
                        prop_assert_eq!(&got, &want);
                        let got: Vec<u64> = q.range_mut(lo, hi).map(|(k, _)| k).collect();
                        prop_assert_eq!(got, want);
                    }
                    Op::Bump(d) => {
                        let k = start + d as u64;
                        if let Some(v) = q.get_mut(k) {
                            *v += 1;
                        }
                        if let Some(v) = m.get_mut(&k) {
                            *v += 1;
                        }
                    }
                }
                prop_assert_eq!(q.is_empty(), m.is_empty());
                let a: Vec<(u64, u64)> = q.iter().map(|(k, &v)| (k, v)).collect();
                let b: Vec<(u64, u64)> = m.iter().map(|(&k, &v)| (k, v)).collect();
                prop_assert_eq!(a, b);
                prop_assert!(q.values().copied().eq(m.values().copied()));
            }
        }
    }
}

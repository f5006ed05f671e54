//! An ordered set of disjoint half-open ranges `[start, end)` of `u64`, kept merged.
//! Used for stream reassembly, acknowledged / to-retransmit byte ranges and received
//! packet numbers.

use std::collections::BTreeMap;

/// Disjoint, non-adjacent half-open ranges keyed by start.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeSet {
    map: BTreeMap<u64, u64>,
}

impl RangeSet {
    /// The empty set.
    pub fn new() -> Self {
        RangeSet::default()
    }

    /// `true` if empty.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Number of disjoint ranges.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Inserts `[start, end)`; returns the number of values that were not yet present.
    pub fn insert(&mut self, start: u64, end: u64) -> u64 {
        if start >= end {
            return 0;
        }
        // Fast path (in-order data, packet numbers): `start` at or after the start of the
        // last range, so only that range can overlap or touch; same result as below.
        if let Some(mut last) = self.map.last_entry() {
            if start >= *last.key() {
                let le = *last.get();
                if start <= le {
                    if end > le {
                        *last.get_mut() = end;
                        return end - le;
                    }
                    return 0;
                }
                self.map.insert(start, end);
                return end - start;
            }
        } else {
            self.map.insert(start, end);
            return end - start;
        }
        let covered_before = self.covered(start, end);
        let mut s = start;
        let mut e = end;
        // Merge with a range starting at or before `s` that reaches `s`.
        if let Some((&ps, &pe)) = self.map.range(..=s).next_back() {
            if pe >= s {
                s = ps;
                e = e.max(pe);
                self.map.remove(&ps);
            }
        }
        // Merge with ranges starting in (s, e].
        let later: Vec<(u64, u64)> = self.map.range(s..=e).map(|(&a, &b)| (a, b)).collect();
        for (a, b) in later {
            e = e.max(b);
            self.map.remove(&a);
        }
        self.map.insert(s, e);
        (end - start) - covered_before
    }

    /// Removes `[start, end)`.
    pub fn remove(&mut self, start: u64, end: u64) {
        if start >= end {
            return;
        }
        // Ranges overlapping [start, end), from the last one back (no scratch vector).
        while let Some((&a, &b)) = self.map.range(..end).next_back() {
            if b <= start {
                break;
            }
            self.map.remove(&a);
            if b > end {
                self.map.insert(end, b);
            }
            if a < start {
                self.map.insert(a, start);
                break;
            }
        }
    }

    /// Number of values of `[start, end)` present in the set.
    pub fn covered(&self, start: u64, end: u64) -> u64 {
        if start >= end {
            return 0;
        }
        let mut n = 0;
        if let Some((_, &pe)) = self.map.range(..start).next_back() {
            if pe > start {
                n += pe.min(end) - start;
            }
        }
        for (&a, &b) in self.map.range(start..end) {
            n += b.min(end) - a;
        }
        n
    }

    /// `true` if `v` is in the set.
    pub fn contains(&self, v: u64) -> bool {
        self.covered(v, v + 1) == 1
    }

    /// The end of the contiguous run of values starting at `from` (`from` itself if
    /// `from` is absent).
    pub fn contiguous_end(&self, from: u64) -> u64 {
        match self.map.range(..=from).next_back() {
            Some((_, &e)) if e > from => e,
            _ => from,
        }
    }

    /// The first range (lowest start), if any.
    pub fn first(&self) -> Option<(u64, u64)> {
        self.map.iter().next().map(|(&a, &b)| (a, b))
    }

    /// The last range (highest start), if any.
    pub fn last(&self) -> Option<(u64, u64)> {
        self.map.iter().next_back().map(|(&a, &b)| (a, b))
    }

    /// Iterates ranges in increasing order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (u64, u64)> + '_ {
        self.map.iter().map(|(&a, &b)| (a, b))
    }

    /// Sum of range lengths.
    pub fn total(&self) -> u64 {
        self.map.iter().map(|(a, b)| b - a).sum()
    }

    /// The first sub-range of `[start, end)` that is NOT in the set, if any.
    pub fn first_gap_in(&self, start: u64, end: u64) -> Option<(u64, u64)> {
        let mut s = start;
        while s < end {
            let ce = self.contiguous_end(s);
            if ce > s {
                s = ce;
                continue;
            }
            let next = self
                .map
                .range(s..end)
                .next()
                .map(|(&a, _)| a)
                .unwrap_or(end);
            return Some((s, next.min(end)));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_merge_remove() {
        let mut r = RangeSet::new();
        assert_eq!(r.insert(10, 20), 10);
        assert_eq!(r.insert(30, 40), 10);
        assert_eq!(r.insert(15, 35), 10);
        assert_eq!(r.len(), 1);
        assert_eq!(r.first(), Some((10, 40)));
        assert_eq!(r.insert(40, 41), 1);
        assert_eq!(r.first(), Some((10, 41)));
        r.remove(20, 25);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(10, 20), (25, 41)]);
        assert_eq!(r.covered(0, 100), 26);
        assert_eq!(r.contiguous_end(10), 20);
        assert_eq!(r.contiguous_end(20), 20);
        assert_eq!(r.first_gap_in(10, 41), Some((20, 25)));
        assert_eq!(r.first_gap_in(25, 41), None);
        assert_eq!(r.first_gap_in(0, 12), Some((0, 10)));
        r.remove(0, 100);
        assert!(r.is_empty());
    }

    proptest::proptest! {
        /// Against a bitmap model: contents (kept merged) and the count of newly covered
        /// values `insert` returns, whichever path it takes.
        #[test]
        fn insert_remove_match_bitmap(ops in proptest::collection::vec((0u8..3, 0u64..120, 0u64..12), 1..200)) {
            let mut r = RangeSet::new();
            let mut m = [false; 140];
            for (op, a, w) in ops {
                let b = a + w;
                if op < 2 {
                    let added = (a..b).filter(|&i| !m[i as usize]).count() as u64;
                    proptest::prop_assert_eq!(r.insert(a, b), added);
                    (a..b).for_each(|i| m[i as usize] = true);
                } else {
                    r.remove(a, b);
                    (a..b).for_each(|i| m[i as usize] = false);
                }
                let mut want = Vec::new();
                let mut i = 0;
                while i < m.len() {
                    if m[i] {
                        let st = i;
                        while i < m.len() && m[i] { i += 1; }
                        want.push((st as u64, i as u64));
                    } else {
                        i += 1;
                    }
                }
                proptest::prop_assert_eq!(r.iter().collect::<Vec<_>>(), want);
            }
        }
    }
}

//! An ordered set of disjoint half-open ranges `[start, end)` of `u64`, kept merged.
//! Used for stream reassembly, acknowledged / to-retransmit byte ranges and received
//! packet numbers.
//!
//! Stored as a sorted deque of ranges: the sets grow at their end (in-order data, packet
//! numbers) and shrink or fill their gaps mostly at their front (retransmissions, the
//! oldest ranges acknowledged first), so both are O(1); lookups are binary searches, a
//! change in the middle shifts the shorter side, and there is no node allocation per
//! range as with a tree.

use std::collections::VecDeque;

/// Disjoint, non-adjacent half-open ranges in ascending order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeSet {
    /// Sorted by start; `start < end`; a range's end is below the next one's start.
    ranges: VecDeque<(u64, u64)>,
}

impl RangeSet {
    /// The empty set.
    pub fn new() -> Self {
        RangeSet::default()
    }

    /// `true` if empty.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Number of disjoint ranges.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// Index of the first range ending after `v` (the one holding `v`, or the next).
    fn first_ending_after(&self, v: u64) -> usize {
        self.ranges.partition_point(|&(_, e)| e <= v)
    }

    /// Index of the first range starting at or after `v`.
    fn first_starting_at(&self, v: u64) -> usize {
        self.ranges.partition_point(|&(s, _)| s < v)
    }

    /// From index `i`, the index of the first range starting after `v` (`inclusive`) or
    /// at or after `v`: a forward walk, as the ranges it passes are usually few (the
    /// ones a change touches).
    fn walk_to(&self, i: usize, v: u64, inclusive: bool) -> usize {
        i + self
            .ranges
            .range(i..)
            .take_while(|&&(s, _)| s < v || (inclusive && s == v))
            .count()
    }

    /// Inserts `[start, end)`; returns the number of values that were not yet present.
    #[inline]
    pub fn insert(&mut self, start: u64, end: u64) -> u64 {
        // Fast path (in-order data, packet numbers), inlined at the callers: `start` at
        // or after the start of the last range and touching it, so only that range
        // changes.
        if let Some(last) = self.ranges.back_mut() {
            if start >= last.0 && start <= last.1 && start < end {
                if end > last.1 {
                    let n = end - last.1;
                    last.1 = end;
                    return n;
                }
                return 0;
            }
        }
        self.insert_slow(start, end)
    }

    /// [`RangeSet::insert`] past its fast path.
    #[inline(never)]
    fn insert_slow(&mut self, start: u64, end: u64) -> u64 {
        if start >= end {
            return 0;
        }
        // `start` at or after the start of the last range (and past its end): a new
        // last range.
        match self.ranges.back() {
            Some(&(s, _)) if start >= s => {
                self.ranges.push_back((start, end));
                return end - start;
            }
            None => {
                self.ranges.push_back((start, end));
                return end - start;
            }
            Some(_) => {}
        }
        // Ranges i..j overlap or touch [start, end): they end at or after `start` and
        // start at or before `end`.
        let i = self.ranges.partition_point(|&(_, e)| e < start);
        let j = self.walk_to(i, end, true);
        if i == j {
            self.ranges.insert(i, (start, end));
            return end - start;
        }
        let covered: u64 = self
            .ranges
            .range(i..j)
            .map(|&(a, b)| b.min(end) - a.max(start))
            .sum();
        let merged = (start.min(self.ranges[i].0), end.max(self.ranges[j - 1].1));
        self.ranges[i] = merged;
        self.remove_slots(i + 1, j);
        (end - start) - covered
    }

    /// Removes `[start, end)`.
    pub fn remove(&mut self, start: u64, end: u64) {
        if start >= end {
            return;
        }
        // Nothing there (often: ranges already removed).
        match (self.ranges.front(), self.ranges.back()) {
            (Some(&(f, fe)), Some(&(_, l))) if end > f && start < l => {
                // Fast path (acknowledged packet numbers pruned, data acknowledged in
                // order): the front of the first range goes, the rest of it stays.
                if start <= f && end < fe {
                    if let Some(first) = self.ranges.front_mut() {
                        first.0 = end;
                    }
                    return;
                }
                // Fast path (a filled gap taken out of reassembly): exactly the first
                // range goes.
                if start <= f && end >= fe && self.ranges.get(1).is_none_or(|&(s, _)| end <= s) {
                    self.ranges.pop_front();
                    return;
                }
            }
            _ => return,
        }
        // Ranges i..j overlap [start, end).
        let i = self.first_ending_after(start);
        let j = self.walk_to(i, end, false);
        if i >= j {
            return;
        }
        let (first, last) = (self.ranges[i], self.ranges[j - 1]);
        let head = (first.0 < start).then_some((first.0, start));
        let tail = (last.1 > end).then_some((end, last.1));
        // Slots i..j become the pieces left outside [start, end).
        let mut k = i;
        for piece in head.into_iter().chain(tail) {
            if k < j {
                self.ranges[k] = piece;
            } else {
                self.ranges.insert(k, piece);
            }
            k += 1;
        }
        self.remove_slots(k, j);
    }

    /// Removes slots `from..to` (no-op when empty), shifting the shorter side.
    fn remove_slots(&mut self, from: usize, to: usize) {
        match to.saturating_sub(from) {
            0 => {}
            1 => {
                self.ranges.remove(from);
            }
            _ => {
                self.ranges.drain(from..to);
            }
        }
    }

    /// Number of values of `[start, end)` present in the set.
    pub fn covered(&self, start: u64, end: u64) -> u64 {
        if start >= end {
            return 0;
        }
        let i = self.first_ending_after(start);
        let j = self.walk_to(i, end, false);
        if i >= j {
            return 0;
        }
        self.ranges
            .range(i..j)
            .map(|&(a, b)| b.min(end) - a.max(start))
            .sum()
    }

    /// `true` if `v` is in the set.
    pub fn contains(&self, v: u64) -> bool {
        // Fast path: at or after the start of the last range.
        match self.ranges.back() {
            Some(&(s, e)) if v >= s => v < e,
            _ => self
                .ranges
                .get(self.first_ending_after(v))
                .is_some_and(|&(s, _)| s <= v),
        }
    }

    /// The end of the contiguous run of values starting at `from` (`from` itself if
    /// `from` is absent).
    #[inline]
    pub fn contiguous_end(&self, from: u64) -> u64 {
        // Fast path (reading from the front): `from` below or in the first range.
        match self.ranges.front() {
            None => return from,
            Some(&(s, _)) if from < s => return from,
            Some(&(_, e)) if from < e => return e,
            Some(_) => {}
        }
        match self.ranges.get(self.first_ending_after(from)) {
            Some(&(s, e)) if s <= from => e,
            _ => from,
        }
    }

    /// The first range (lowest start), if any.
    pub fn first(&self) -> Option<(u64, u64)> {
        self.ranges.front().copied()
    }

    /// The last range (highest start), if any.
    pub fn last(&self) -> Option<(u64, u64)> {
        self.ranges.back().copied()
    }

    /// Iterates ranges in increasing order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (u64, u64)> + '_ {
        self.ranges.iter().copied()
    }

    /// Sum of range lengths.
    pub fn total(&self) -> u64 {
        self.ranges.iter().map(|(a, b)| b - a).sum()
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
                .ranges
                .get(self.first_starting_at(s))
                .map_or(end, |&(a, _)| a);
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
        /// Against a bitmap model: contents (kept merged), the count of newly covered
        /// values `insert` returns, whichever path it takes, and every query.
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
                // The queries agree with the bitmap too.
                let has = |v: u64| (v as usize) < m.len() && m[v as usize];
                for v in 0..m.len() as u64 {
                    proptest::prop_assert_eq!(r.contains(v), has(v));
                    let run = (v..).take_while(|&u| has(u)).count() as u64;
                    proptest::prop_assert_eq!(r.contiguous_end(v), v + run);
                }
                let (lo, hi) = (a.min(b / 2), b + w);
                let count = (lo..hi).filter(|&u| has(u)).count() as u64;
                proptest::prop_assert_eq!(r.covered(lo, hi), count);
                let gap_start = (lo..hi).find(|&u| !has(u));
                let gap = gap_start.map(|g| (g, (g..hi).find(|&u| has(u)).unwrap_or(hi)));
                proptest::prop_assert_eq!(r.first_gap_in(lo, hi), gap);
                proptest::prop_assert_eq!(r.total(), m.iter().filter(|&&x| x).count() as u64);
            }
        }
    }
}

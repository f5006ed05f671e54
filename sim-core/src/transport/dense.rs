//! [`DenseMap`]: an ordered map from `u64` keys that are dense in practice (packet numbers,
//! send-order numbers) to values, as a deque of slots indexed by `key - base`.
//!
//! It replaces a `BTreeMap` where keys arrive (mostly) in increasing order and are removed
//! near the front: insertion at the back and removal are O(1) (amortised), and iteration
//! is in ascending key order, exactly as the `BTreeMap`'s. Any key may be inserted (a key
//! below the current range grows the deque at the front), so the behaviour is that of an
//! ordered map; only the memory use assumes density (one slot per key between the
//! smallest and the largest present).

use std::collections::VecDeque;

/// An ordered map over dense `u64` keys. Empty slots at either end are trimmed, so when
/// the map is not empty the first and last slots are occupied.
#[derive(Debug)]
pub(crate) struct DenseMap<V> {
    /// Key of `slots[0]`.
    base: u64,
    slots: VecDeque<Option<V>>,
    len: usize,
}

impl<V> Default for DenseMap<V> {
    fn default() -> Self {
        DenseMap {
            base: 0,
            slots: VecDeque::new(),
            len: 0,
        }
    }
}

impl<V> DenseMap<V> {
    /// Number of keys present.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Inserts `key`, returning the previous value.
    pub(crate) fn insert(&mut self, key: u64, value: V) -> Option<V> {
        if self.slots.is_empty() {
            self.base = key;
        } else if key < self.base {
            for _ in 0..self.base - key {
                self.slots.push_front(None);
            }
            self.base = key;
        }
        let idx = (key - self.base) as usize;
        if idx == self.slots.len() {
            // The usual insert (packet numbers, send-order numbers): the next key, moved
            // once into a new last slot.
            self.slots.push_back(Some(value));
            self.len += 1;
            return None;
        }
        while self.slots.len() <= idx {
            self.slots.push_back(None);
        }
        let old = self.slots[idx].replace(value);
        if old.is_none() {
            self.len += 1;
        }
        old
    }

    /// Removes `key`, returning its value.
    pub(crate) fn remove(&mut self, key: u64) -> Option<V> {
        let idx = key.checked_sub(self.base)?;
        if idx >= self.slots.len() as u64 {
            return None;
        }
        let old = self.slots[idx as usize].take();
        if old.is_some() {
            self.len -= 1;
            self.trim();
        }
        old
    }

    /// Removes the smallest key, returning it with its value.
    #[cfg(test)]
    pub(crate) fn pop_first(&mut self) -> Option<(u64, V)> {
        let key = self.first_key()?;
        let v = self.remove(key)?;
        Some((key, v))
    }

    /// The smallest key present.
    #[inline]
    pub(crate) fn first_key(&self) -> Option<u64> {
        // Trimmed: the first slot is occupied whenever the map is not empty.
        (self.len > 0).then_some(self.base)
    }

    /// The value of the smallest key present.
    #[inline]
    pub(crate) fn first_value(&self) -> Option<&V> {
        // Trimmed: the first slot is occupied whenever the map is not empty.
        self.slots.front().and_then(Option::as_ref)
    }

    /// Drops empty slots at both ends.
    fn trim(&mut self) {
        while let Some(None) = self.slots.front() {
            self.slots.pop_front();
            self.base += 1;
        }
        while let Some(None) = self.slots.back() {
            self.slots.pop_back();
        }
    }

    /// Slot indices covering keys `lo..=hi` (clipped to the occupied range).
    fn index_range(&self, lo: u64, hi: u64) -> std::ops::Range<usize> {
        let n = self.slots.len() as u64;
        if n == 0 || hi < lo || hi < self.base {
            return 0..0;
        }
        let start = lo.saturating_sub(self.base).min(n);
        let end = (hi - self.base).saturating_add(1).min(n);
        start as usize..end as usize
    }

    /// Entries with keys in `lo..=hi`, in ascending key order.
    pub(crate) fn range(&self, lo: u64, hi: u64) -> impl Iterator<Item = (u64, &V)> + '_ {
        let base = self.base;
        self.index_range(lo, hi)
            .filter_map(move |i| self.slots[i].as_ref().map(|v| (base + i as u64, v)))
    }

    /// Removes every key in `lo..=hi`, handing the values to `out` in ascending key order.
    #[inline]
    pub(crate) fn remove_range_with(&mut self, lo: u64, hi: u64, mut out: impl FnMut(V)) {
        let r = self.index_range(lo, hi);
        let mut removed = 0;
        for i in r {
            if let Some(v) = self.slots[i].take() {
                out(v);
                removed += 1;
            }
        }
        if removed > 0 {
            self.len -= removed;
            self.trim();
        }
    }

    /// Values in ascending key order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &V> + '_ {
        self.slots.iter().filter_map(Option::as_ref)
    }

    /// Keys in ascending order.
    #[cfg(test)]
    pub(crate) fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        let base = self.base;
        self.slots
            .iter()
            .enumerate()
            .filter_map(move |(i, v)| v.as_ref().map(|_| base + i as u64))
    }

    /// Consumes the map: values in ascending key order.
    pub(crate) fn into_values(self) -> impl Iterator<Item = V> {
        self.slots.into_iter().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::DenseMap;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    proptest! {
        #[test]
        fn behaves_like_btreemap(ops in proptest::collection::vec((0u8..7, 0u64..64, 0u64..8), 1..300)) {
            let mut d: DenseMap<u64> = DenseMap::default();
            let mut b: BTreeMap<u64, u64> = BTreeMap::new();
            for (op, k, w) in ops {
                match op {
                    0 | 1 => prop_assert_eq!(d.insert(k, w), b.insert(k, w)),
                    2 => prop_assert_eq!(d.remove(k), b.remove(&k)),
                    3 => {
                        let hi = k + w;
                        let mut got = Vec::new();
                        d.remove_range_with(k, hi, |v| got.push(v));
                        let keys: Vec<u64> = b.range(k..=hi).map(|(&x, _)| x).collect();
                        let want: Vec<u64> = keys.iter().map(|x| b.remove(x).unwrap()).collect();
                        prop_assert_eq!(got, want);
                    }
                    4 => prop_assert_eq!(d.pop_first(), b.pop_first()),
                    _ => {
                        let hi = k + w;
                        let got: Vec<(u64, u64)> = d.range(k, hi).map(|(x, &v)| (x, v)).collect();
                        let want: Vec<(u64, u64)> = b.range(k..=hi).map(|(&x, &v)| (x, v)).collect();
                        prop_assert_eq!(got, want);
                    }
                }
                prop_assert_eq!(d.len(), b.len());
                prop_assert_eq!(d.first_key(), b.first_key_value().map(|(&x, _)| x));
                prop_assert_eq!(d.first_value(), b.first_key_value().map(|(_, v)| v));
                prop_assert!(d.values().eq(b.values()));
                prop_assert!(d.keys().eq(b.keys().copied()));
            }
        }
    }
}

//! [`InlineVec`]: a vector that keeps its first `N` items in place and moves to the heap
//! only beyond, so the frames of a packet, the ranges of an ACK frame and the packets of a
//! datagram need no allocation of their own in the common case (issue 14: a data packet
//! carries 1-3 frames, an ACK frame a range or two, a datagram one packet once the
//! handshake is over).
//!
//! The storage is `smallvec`'s `SmallVec<[T; N]>` (no placeholder items in the free
//! slots: a push writes one item, a clear drops only the items there). Equality, ordering
//! of items, `Debug` and iteration are those of the slice of items, as for a `Vec` (a
//! `Debug` print reads the same as the `Vec` it replaces).

use smallvec::SmallVec;
use std::fmt;
use std::ops::{Deref, DerefMut};

/// A vector keeping up to `N` items in place (see the module documentation).
#[derive(Clone)]
pub struct InlineVec<T, const N: usize> {
    v: SmallVec<[T; N]>,
}

impl<T, const N: usize> InlineVec<T, N> {
    /// An empty vector (no allocation).
    #[inline]
    pub fn new() -> Self {
        InlineVec { v: SmallVec::new() }
    }

    /// Appends `item` (on the heap once more than `N` items are held).
    #[inline]
    pub fn push(&mut self, item: T) {
        self.v.push(item);
    }

    /// Removes and returns the last item.
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        self.v.pop()
    }

    /// Drops every item (a heap buffer, if any, is kept).
    #[inline]
    pub fn clear(&mut self) {
        self.v.clear();
    }

    /// Keeps the items for which `keep` is true, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        self.v.retain(|x| keep(x));
    }

    /// The items are on the heap (more than `N` were held at some time).
    pub fn spilled(&self) -> bool {
        self.v.spilled()
    }

    /// The items.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        self.v.as_slice()
    }

    /// The items, mutable.
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        self.v.as_mut_slice()
    }
}

impl<T, const N: usize> Default for InlineVec<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, const N: usize> Deref for InlineVec<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T, const N: usize> DerefMut for InlineVec<T, N> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

impl<T: PartialEq, const N: usize> PartialEq for InlineVec<T, N> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Eq, const N: usize> Eq for InlineVec<T, N> {}

impl<T: fmt::Debug, const N: usize> fmt::Debug for InlineVec<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_slice().fmt(f)
    }
}

impl<T, const N: usize> Extend<T> for InlineVec<T, N> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        for item in iter {
            self.push(item);
        }
    }
}

impl<T, const N: usize> FromIterator<T> for InlineVec<T, N> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut v = Self::new();
        v.extend(iter);
        v
    }
}

impl<T, const N: usize> From<Vec<T>> for InlineVec<T, N> {
    fn from(items: Vec<T>) -> Self {
        items.into_iter().collect()
    }
}

impl<'a, T, const N: usize> IntoIterator for &'a InlineVec<T, N> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl<'a, T, const N: usize> IntoIterator for &'a mut InlineVec<T, N> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_mut_slice().iter_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// One operation of the model test.
    #[derive(Clone, Debug)]
    enum Op {
        Push(u32),
        Pop,
        Clear,
        SetLast(u32),
        RetainOdd,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => any::<u32>().prop_map(Op::Push),
            2 => Just(Op::Pop),
            1 => Just(Op::Clear),
            1 => any::<u32>().prop_map(Op::SetLast),
            1 => Just(Op::RetainOdd),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Any sequence of operations leaves the same items as on a `Vec`, across the move
        /// to the heap and back to empty.
        #[test]
        fn inline_vec_matches_vec(ops in proptest::collection::vec(op(), 0..40)) {
            let mut v: InlineVec<u32, 3> = InlineVec::new();
            let mut m: Vec<u32> = Vec::new();
            for o in ops {
                match o {
                    Op::Push(x) => { v.push(x); m.push(x); }
                    Op::Pop => prop_assert_eq!(v.pop(), m.pop()),
                    Op::Clear => { v.clear(); m.clear(); }
                    Op::SetLast(x) => {
                        if let Some(l) = v.last_mut() { *l = x; }
                        if let Some(l) = m.last_mut() { *l = x; }
                    }
                    Op::RetainOdd => { v.retain(|x| x % 2 == 1); m.retain(|x| x % 2 == 1); }
                }
                prop_assert_eq!(v.as_slice(), m.as_slice());
                prop_assert_eq!(v.len(), m.len());
                prop_assert_eq!(format!("{v:?}"), format!("{m:?}"));
                let w: InlineVec<u32, 3> = m.clone().into();
                prop_assert_eq!(&w, &v);
                prop_assert_eq!(v.clone(), w);
            }
        }
    }

    #[test]
    fn stays_inline_up_to_n() {
        let mut v: InlineVec<u64, 2> = InlineVec::new();
        v.push(1);
        v.push(2);
        assert!(!v.spilled());
        v.push(3);
        assert!(v.spilled());
        assert_eq!(v.iter().copied().collect::<Vec<_>>(), vec![1, 2, 3]);
        while v.pop().is_some() {}
        assert!(v.is_empty());
        v.push(4);
        assert_eq!(&*v, &[4]);
        assert!(!InlineVec::<u64, 2>::from(vec![1, 2]).spilled());
    }
}

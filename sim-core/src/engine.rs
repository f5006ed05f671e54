//! The scheduler: one priority queue of events ordered by `(time, seq)`.
//!
//! **Ordering rule.** Events run in increasing time; events scheduled for the *same* time
//! run in the order they were scheduled (FIFO), because every event gets a strictly
//! increasing insertion sequence number `seq` and the queue orders by `(time, seq)`. This
//! makes runs independent of the heap's internal layout.
//!
//! Time only moves forward: popping an event sets `now` to its time, which never
//! decreases. Cancelled events are skipped lazily when they reach the front.

use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::{BTreeSet, BinaryHeap};

/// Handle of a scheduled event, for [`Scheduler::cancel`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventId(pub u64);

struct Entry<E> {
    time: SimTime,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap, we want the earliest (time, seq) on top.
    fn cmp(&self, o: &Self) -> Ordering {
        o.time.cmp(&self.time).then_with(|| o.seq.cmp(&self.seq))
    }
}

/// A discrete-event scheduler over events of type `E`.
pub struct Scheduler<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
    now: SimTime,
    cancelled: BTreeSet<u64>,
}

impl<E> Default for Scheduler<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> Scheduler<E> {
    /// An empty scheduler at time zero.
    pub fn new() -> Self {
        Scheduler {
            heap: BinaryHeap::new(),
            next_seq: 0,
            now: SimTime::ZERO,
            cancelled: BTreeSet::new(),
        }
    }

    /// The current simulated time (the time of the last popped event).
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Schedules `event` at `at`. An instant in the past is treated as `now` (time never
    /// runs backwards).
    pub fn schedule(&mut self, at: SimTime, event: E) -> EventId {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry {
            time: at.max(self.now),
            seq,
            event,
        });
        EventId(seq)
    }

    /// Cancels a scheduled event; cancelling one that already ran or was cancelled is a
    /// no-op.
    pub fn cancel(&mut self, id: EventId) {
        if id.0 < self.next_seq {
            self.cancelled.insert(id.0);
        }
    }

    /// Removes and returns the earliest live event, advancing `now` to its time.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        while let Some(e) = self.heap.pop() {
            if !self.cancelled.is_empty() && self.cancelled.remove(&e.seq) {
                continue;
            }
            self.now = e.time;
            return Some((e.time, e.event));
        }
        None
    }

    /// Time of the earliest event still queued (cancelled ones included).
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time)
    }

    /// Number of queued entries (cancelled ones included until they are skipped).
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// `true` if nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn same_time_events_run_fifo() {
        let mut s = Scheduler::new();
        for i in 0..100 {
            s.schedule(SimTime(5), i);
        }
        s.schedule(SimTime(1), 1000);
        assert_eq!(s.pop(), Some((SimTime(1), 1000)));
        for i in 0..100 {
            assert_eq!(s.pop(), Some((SimTime(5), i)));
        }
        assert_eq!(s.pop(), None);
    }

    #[test]
    fn cancel_skips_and_past_is_clamped() {
        let mut s = Scheduler::new();
        let a = s.schedule(SimTime(10), 'a');
        s.schedule(SimTime(20), 'b');
        s.cancel(a);
        assert_eq!(s.pop(), Some((SimTime(20), 'b')));
        s.schedule(SimTime(3), 'c');
        assert_eq!(s.pop(), Some((SimTime(20), 'c')));
        assert_eq!(s.now(), SimTime(20));
    }

    proptest! {
        #[test]
        fn pops_in_time_then_insertion_order(times in proptest::collection::vec(0u64..50, 0..200)) {
            let mut s = Scheduler::new();
            for (i, t) in times.iter().enumerate() {
                s.schedule(SimTime(*t), i);
            }
            let mut expected: Vec<(u64, usize)> = times.iter().copied().zip(0..).collect();
            expected.sort();
            let got: Vec<(u64, usize)> = std::iter::from_fn(|| s.pop()).map(|(t, i)| (t.0, i)).collect();
            prop_assert_eq!(got, expected);
        }
    }
}

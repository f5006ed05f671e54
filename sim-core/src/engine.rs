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
use std::collections::binary_heap::PeekMut;
use std::collections::{BTreeSet, BinaryHeap, VecDeque};

/// Handle of a scheduled event, for [`Scheduler::cancel`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventId(pub u64);

/// The order of an event, `(time, seq)` packed into one integer (time in the high 64 bits,
/// the insertion sequence number in the low 64): one `u128` comparison, never equal for
/// two events.
fn key(time: SimTime, seq: u64) -> u128 {
    ((time.0 as u128) << 64) | seq as u128
}

/// What a heap entry stands for: an event, or the front event of a lane.
enum Item<E> {
    Event(E),
    Lane(u32),
}

struct Entry<E> {
    key: u128,
    item: Item<E>,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
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
        o.key.cmp(&self.key)
    }
}

/// A discrete-event scheduler over events of type `E`.
///
/// **Lanes.** Most events of a packet simulation are arrivals at the far end of a link,
/// and a link (without reordering) delivers in the order it sends: its arrival events are
/// scheduled in increasing `(time, seq)` already. [`Scheduler::schedule_in_lane`] keeps
/// such a run of events in a FIFO of its own and only the lane's front filed (in the heap
/// or the front slot), so the heap holds a few entries per link and endpoint instead of
/// one per packet in flight (hundreds on a long fat link). An event that would not be last
/// in its lane's order is filed as an ordinary event. Either way every event is popped in
/// `(time, seq)` order: lanes change the cost, never the order.
///
/// **The front slot.** The earliest entry waits outside the heap when it was filed
/// earlier than everything in it (see `front`): popping a plain event from there needs no
/// sift; a lane whose front leaves the slot files its next event like a new one.
pub struct Scheduler<E> {
    /// The earliest entry, when it was filed earlier than every entry of `heap` (so it is
    /// the next to run): kept outside the heap, a plain event leaves without a sift. In a packet
    /// simulation the event just scheduled is often the next one (a link's next
    /// serializer completion, a lane's next arrival), so many events never enter the
    /// heap. Invariant: when `Some`, its key is below every key in `heap`.
    front: Option<Entry<E>>,
    heap: BinaryHeap<Entry<E>>,
    /// Per lane: its events in increasing key order; the front one is filed (in the heap
    /// or in `front`) as `Item::Lane`.
    lanes: Vec<VecDeque<(u128, E)>>,
    /// Events queued (the front slot's, the heap's and the lanes', cancelled ones included
    /// until they are skipped).
    queued: usize,
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
            front: None,
            heap: BinaryHeap::new(),
            lanes: Vec::new(),
            queued: 0,
            next_seq: 0,
            now: SimTime::ZERO,
            cancelled: BTreeSet::new(),
        }
    }

    /// The current simulated time (the time of the last popped event).
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// The key of a new event at `at` (clamped to `now`), taking the next sequence number.
    fn next_key(&mut self, at: SimTime) -> (u128, u64) {
        let seq = self.next_seq;
        self.next_seq += 1;
        (key(at.max(self.now), seq), seq)
    }

    /// Schedules `event` at `at`. An instant in the past is treated as `now` (time never
    /// runs backwards).
    pub fn schedule(&mut self, at: SimTime, event: E) -> EventId {
        let (key, seq) = self.next_key(at);
        self.file(Entry {
            key,
            item: Item::Event(event),
        });
        self.queued += 1;
        EventId(seq)
    }

    /// Files an entry: in `front` when it is earlier than everything queued (the entry
    /// there, if any, moves to the heap), in the heap otherwise. Keys are unique, so
    /// where an entry is filed never changes the order.
    #[inline]
    fn file(&mut self, e: Entry<E>) {
        match &mut self.front {
            Some(f) if e.key < f.key => {
                let old = std::mem::replace(f, e);
                self.heap.push(old);
            }
            Some(_) => self.heap.push(e),
            None => {
                if self.heap.peek().is_none_or(|top| e.key < top.key) {
                    self.front = Some(e);
                } else {
                    self.heap.push(e);
                }
            }
        }
    }

    /// Schedules `event` at `at` exactly as [`Scheduler::schedule`] does (same sequence
    /// number, same place in the order), filed in lane `lane` (any small index, e.g. a
    /// link's): cheaper when the events of a lane are mostly scheduled in the order they
    /// will run (see the type's documentation).
    pub fn schedule_in_lane(&mut self, lane: usize, at: SimTime, event: E) -> EventId {
        let (key, seq) = self.next_key(at);
        if lane >= self.lanes.len() {
            self.lanes.resize_with(lane + 1, VecDeque::new);
        }
        let q = &mut self.lanes[lane];
        match q.back() {
            None => {
                q.push_back((key, event));
                self.file(Entry {
                    key,
                    item: Item::Lane(lane as u32),
                });
            }
            Some(&(back, _)) if back < key => q.push_back((key, event)),
            // Out of the lane's order: an ordinary event.
            Some(_) => self.file(Entry {
                key,
                item: Item::Event(event),
            }),
        }
        self.queued += 1;
        EventId(seq)
    }

    /// Cancels a scheduled event; cancelling one that already ran or was cancelled is a
    /// no-op.
    pub fn cancel(&mut self, id: EventId) {
        if id.0 < self.next_seq {
            self.cancelled.insert(id.0);
        }
    }

    /// Removes the event with the smallest key: the front slot's if it holds one (a lane's
    /// next event is then filed like a new one), else the heap's top (a lane with more
    /// events keeps its heap entry, re-keyed to its next event in place: one sift instead
    /// of a pop and a push). Keys are unique, so where an entry waits never decides the
    /// order.
    fn pop_event(&mut self) -> Option<(u128, E)> {
        if let Some(f) = self.front.take() {
            self.queued -= 1;
            return Some(match f.item {
                Item::Event(e) => (f.key, e),
                Item::Lane(l) => {
                    let q = &mut self.lanes[l as usize];
                    let (k, e) = q.pop_front().expect("a filed lane is not empty");
                    debug_assert_eq!(k, f.key);
                    if let Some(&(next, _)) = q.front() {
                        self.file(Entry {
                            key: next,
                            item: Item::Lane(l),
                        });
                    }
                    (k, e)
                }
            });
        }
        let mut top = self.heap.peek_mut()?;
        self.queued -= 1;
        if let Item::Lane(l) = top.item {
            let q = &mut self.lanes[l as usize];
            let (k, e) = q.pop_front().expect("a lane in the heap is not empty");
            debug_assert_eq!(k, top.key);
            match q.front() {
                Some(&(next, _)) => top.key = next,
                None => {
                    PeekMut::pop(top);
                }
            }
            return Some((k, e));
        }
        match PeekMut::pop(top) {
            Entry {
                key,
                item: Item::Event(e),
            } => Some((key, e)),
            Entry {
                item: Item::Lane(_),
                ..
            } => unreachable!("lane entries are handled above"),
        }
    }

    /// Removes and returns the earliest live event, advancing `now` to its time.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        while let Some((k, e)) = self.pop_event() {
            if !self.cancelled.is_empty() && self.cancelled.remove(&(k as u64)) {
                continue;
            }
            let t = SimTime((k >> 64) as u64);
            self.now = t;
            return Some((t, e));
        }
        None
    }

    /// Time of the earliest event still queued (cancelled ones included).
    pub fn peek_time(&self) -> Option<SimTime> {
        self.front
            .as_ref()
            .or_else(|| self.heap.peek())
            .map(|e| SimTime((e.key >> 64) as u64))
    }

    /// Number of queued entries (cancelled ones included until they are skipped).
    pub fn len(&self) -> usize {
        self.queued
    }

    /// `true` if nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.queued == 0
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

        /// Neither lanes nor the front slot change the order: events scheduled in lanes
        /// (in or out of their lane's order) and plain events, some in the past (clamped
        /// to now), interleaved with pops and cancellations of any earlier event, pop
        /// exactly as a sorted map of `(time, seq)` gives them; after every step `len` and
        /// `peek_time` are exact (cancelled events count until they are skipped).
        #[test]
        fn pops_as_a_sorted_reference(
            ops in proptest::collection::vec((0u64..40, 0usize..4, 0u8..5), 0..300)
        ) {
            use std::collections::{BTreeMap, BTreeSet};
            let mut s = Scheduler::new();
            // The reference: live events by (time, seq), cancelled ones not yet skipped.
            let mut live: BTreeMap<(u64, u64), usize> = BTreeMap::new();
            let mut dead: BTreeSet<(u64, u64)> = BTreeSet::new();
            let mut ids = Vec::new();
            let mut now = 0u64;
            let mut seq = 0u64;
            for (i, &(dt, lane, op)) in ops.iter().enumerate() {
                match op {
                    // Pop: the first live event; the cancelled ones before it are skipped.
                    0 => {
                        let want = live.pop_first();
                        match want {
                            Some((k, _)) => {
                                dead = dead.split_off(&k);
                                now = k.0;
                            }
                            None => dead.clear(),
                        }
                        prop_assert_eq!(s.pop(), want.map(|((t, _), v)| (SimTime(t), v)));
                    }
                    // A plain event (sometimes in the past: clamped to now).
                    1 => {
                        let at = (now + dt).saturating_sub(5);
                        let k = (at.max(now), seq);
                        ids.push((s.schedule(SimTime(at), i), k));
                        live.insert(k, i);
                        seq += 1;
                    }
                    // Cancel any earlier event (a no-op if it ran or was cancelled).
                    2 => {
                        if !ids.is_empty() {
                            let (id, k) = ids[(dt as usize * 7 + i) % ids.len()];
                            s.cancel(id);
                            if live.remove(&k).is_some() {
                                dead.insert(k);
                            }
                        }
                    }
                    // A lane event (lane 3: times anywhere, often out of the lane's order,
                    // sometimes in the past).
                    _ => {
                        let at = if lane == 3 { (now + dt).saturating_sub(5) } else { now + dt / 8 };
                        let k = (at.max(now), seq);
                        ids.push((s.schedule_in_lane(lane, SimTime(at), i), k));
                        live.insert(k, i);
                        seq += 1;
                    }
                }
                prop_assert_eq!(s.len(), live.len() + dead.len());
                let first = match (live.keys().next(), dead.first()) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                prop_assert_eq!(s.peek_time(), first.map(|k| SimTime(k.0)));
            }
            let rest: Vec<_> = std::iter::from_fn(|| s.pop()).collect();
            let expected: Vec<_> = live.into_iter().map(|((t, _), v)| (SimTime(t), v)).collect();
            prop_assert_eq!(rest, expected);
            prop_assert!(s.is_empty());
        }
    }

    #[test]
    fn cancel_works_in_lanes() {
        let mut s = Scheduler::new();
        s.schedule_in_lane(0, SimTime(1), 'a');
        let b = s.schedule_in_lane(0, SimTime(2), 'b');
        s.schedule_in_lane(0, SimTime(3), 'c');
        s.cancel(b);
        assert_eq!(s.pop(), Some((SimTime(1), 'a')));
        assert_eq!(s.pop(), Some((SimTime(3), 'c')));
        assert_eq!(s.pop(), None);
    }
}

//! Stream and crypto-stream buffers as byte-range bookkeeping (no payload bytes).
//!
//! [`SendBuf`] tracks what the application wrote, what was sent, what must be resent
//! and what was acknowledged; [`RecvBuf`] reassembles received ranges and delivers in
//! order. Both serve STREAM frames (RFC 9000 §2-3) and CRYPTO frames (§19.6).

use super::flow_control::{RecvFlow, SendFlow};
use crate::transport::ranges::RangeSet;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::{Bound, Deref, DerefMut};

use crate::time::SimTime;

/// Largest data length a frame with `fixed` header bytes (type, id, offset) can carry in
/// `budget` bytes, accounting for the length field's own varint size.
pub fn max_data_len(fixed: u64, budget: u64) -> Option<u64> {
    let mut best: Option<u64> = None;
    for (lv, max_v) in [
        (1u64, 63u64),
        (2, 16_383),
        (4, (1 << 30) - 1),
        (8, (1 << 62) - 1),
    ] {
        if let Some(cap) = budget.checked_sub(fixed + lv) {
            let n = cap.min(max_v);
            best = Some(best.map_or(n, |b| b.max(n)));
        }
    }
    best
}

/// Send side of a stream (or crypto stream).
#[derive(Clone, Debug, Default)]
pub struct SendBuf {
    /// Bytes written by the application (the final size once `fin`).
    pub written: u64,
    /// Next new offset to send: everything below was sent at least once.
    pub sent: u64,
    /// Ranges to retransmit (declared lost or queued for a probe), not yet acknowledged.
    pub retx: RangeSet,
    /// Acknowledged ranges.
    pub acked: RangeSet,
    /// The application finished the stream.
    pub fin: bool,
    /// The FIN was sent at least once.
    pub fin_sent: bool,
    /// The FIN was acknowledged.
    pub fin_acked: bool,
    /// The FIN must be resent.
    pub fin_retx: bool,
}

/// A chunk chosen for a frame: offset, length, FIN, and whether it is a retransmission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// Offset.
    pub offset: u64,
    /// Length.
    pub len: u64,
    /// FIN bit.
    pub fin: bool,
    /// Retransmission of data sent before.
    pub retx: bool,
}

impl SendBuf {
    /// The application writes `len` more bytes, and finishes the stream if `fin`.
    pub fn write(&mut self, len: u64, fin: bool) {
        debug_assert!(!self.fin, "write after FIN");
        self.written += len;
        self.fin |= fin;
    }

    /// Something must be retransmitted.
    pub fn has_retx(&self) -> bool {
        !self.retx.is_empty() || self.fin_retx
    }

    /// New bytes not yet sent.
    pub fn unsent(&self) -> u64 {
        self.written - self.sent
    }

    /// New data or a first FIN waits.
    pub fn has_new(&self) -> bool {
        self.sent < self.written || (self.fin && !self.fin_sent)
    }

    /// The next retransmission chunk of at most `max_len` bytes.
    pub fn next_retx(&mut self, max_len: u64) -> Option<Chunk> {
        if let Some((s, e)) = self.retx.first() {
            let len = (e - s).min(max_len);
            if len == 0 {
                return None;
            }
            self.retx.remove(s, s + len);
            let fin = self.fin && s + len == self.written && (self.fin_retx || !self.fin_acked);
            if fin {
                self.fin_retx = false;
            }
            return Some(Chunk {
                offset: s,
                len,
                fin,
                retx: true,
            });
        }
        if self.fin_retx {
            self.fin_retx = false;
            return Some(Chunk {
                offset: self.written,
                len: 0,
                fin: true,
                retx: true,
            });
        }
        None
    }

    /// The next new chunk of at most `max_len` bytes and at most `credit` new bytes.
    pub fn next_new(&mut self, max_len: u64, credit: u64) -> Option<Chunk> {
        let len = self.unsent().min(max_len).min(credit);
        let end = self.sent + len;
        let fin = self.fin && end == self.written && !self.fin_sent;
        if len == 0 && !fin {
            return None;
        }
        let c = Chunk {
            offset: self.sent,
            len,
            fin,
            retx: false,
        };
        self.sent = end;
        if fin {
            self.fin_sent = true;
        }
        Some(c)
    }

    /// A frame `[offset, offset+len)` (+FIN) was acknowledged.
    pub fn on_ack(&mut self, offset: u64, len: u64, fin: bool) {
        self.acked.insert(offset, offset + len);
        self.retx.remove(offset, offset + len);
        if fin {
            self.fin_acked = true;
            self.fin_retx = false;
        }
    }

    /// A frame was declared lost (or is queued again for a probe): resend what is not
    /// acknowledged.
    pub fn on_lost(&mut self, offset: u64, len: u64, fin: bool) {
        let mut s = offset;
        let end = offset + len;
        while let Some((gs, ge)) = self.acked.first_gap_in(s, end) {
            self.retx.insert(gs, ge);
            s = ge;
        }
        if fin && !self.fin_acked {
            self.fin_retx = true;
        }
    }

    /// Everything written, including the FIN, was acknowledged.
    pub fn is_complete(&self) -> bool {
        // `[0, written)` wholly acknowledged: the ranges are kept merged, so that is the
        // first range starting at 0 and reaching `written` (no walk over later ranges).
        self.fin
            && self.fin_acked
            && (self.written == 0
                || self
                    .acked
                    .first()
                    .is_some_and(|(s, e)| s == 0 && e >= self.written))
    }
}

/// Receive side of a stream (or crypto stream).
#[derive(Clone, Debug, Default)]
pub struct RecvBuf {
    /// Ranges received.
    pub received: RangeSet,
    /// In-order end: all bytes below were received (readable by the application).
    pub delivered: u64,
    /// Bytes read by the application (≤ `delivered`).
    pub consumed: u64,
    /// Highest offset received.
    pub highest: u64,
    /// Final size, once a FIN arrived.
    pub final_size: Option<u64>,
    /// Bytes received more than once.
    pub duplicate_bytes: u64,
}

impl RecvBuf {
    /// Records a frame. Returns (newly received bytes, bytes newly delivered in order).
    pub fn on_data(&mut self, offset: u64, len: u64, fin: bool) -> (u64, u64) {
        let new = self.received.insert(offset, offset + len);
        self.duplicate_bytes += len - new;
        self.highest = self.highest.max(offset + len);
        if fin {
            self.final_size = Some(offset + len);
        }
        let before = self.delivered;
        self.delivered = self
            .received
            .contiguous_end(self.delivered)
            .max(self.delivered);
        (new, self.delivered - before)
    }

    /// All bytes up to the final size were received.
    pub fn is_fully_received(&self) -> bool {
        self.final_size.is_some_and(|f| self.delivered >= f)
    }

    /// All bytes up to the final size were read by the application.
    pub fn is_fully_read(&self) -> bool {
        self.final_size.is_some_and(|f| self.consumed >= f)
    }

    /// Bytes readable now (delivered, not yet consumed).
    pub fn readable(&self) -> u64 {
        self.delivered - self.consumed
    }
}

/// A bidirectional stream.
#[derive(Debug)]
pub struct Stream {
    /// Stream ID.
    pub id: u64,
    /// Send half.
    pub send: SendBuf,
    /// Send flow control: the peer's limit on our sending (MAX_STREAM_DATA) and the
    /// STREAM_DATA_BLOCKED bookkeeping.
    pub send_fc: SendFlow,
    /// Receive half.
    pub recv: RecvBuf,
    /// Receive flow control (our MAX_STREAM_DATA).
    pub recv_fc: RecvFlow,
    /// When the first byte was delivered in order.
    pub first_byte_at: Option<SimTime>,
    /// When the last byte was read by the application.
    pub recv_complete_at: Option<SimTime>,
    /// When the send half was fully acknowledged.
    pub send_complete_at: Option<SimTime>,
    /// The indexes of its [`StreamTable`] this stream is filed in (`IN_*` bits), so that
    /// re-filing touches an index only when the stream's membership changes.
    filed: u8,
}

impl Stream {
    /// A new stream with the peer's initial limit `send_limit` and our receive flow.
    pub fn new(id: u64, send_limit: u64, recv_fc: RecvFlow) -> Self {
        Stream {
            id,
            send: SendBuf::default(),
            send_fc: SendFlow::new(send_limit),
            recv: RecvBuf::default(),
            recv_fc,
            first_byte_at: None,
            recv_complete_at: None,
            send_complete_at: None,
            filed: 0,
        }
    }

    /// Flow-control credit for new bytes on this stream.
    pub fn send_credit(&self) -> u64 {
        self.send_fc.limit().saturating_sub(self.send.sent)
    }
}

/// The streams of a connection, by ID, with indexes of the streams that have work so that
/// per-packet work never walks finished or idle streams (issue 15 item 3).
///
/// Every mutable access goes through [`StreamTable::get_mut`], whose guard re-files the
/// stream in the indexes when it is dropped, so each index holds exactly the streams whose
/// predicate is true:
/// - `retx`: something to retransmit ([`SendBuf::has_retx`]);
/// - `new_data`: new data or a first FIN waits ([`SendBuf::has_new`]);
/// - `ctrl`: a STREAM_DATA_BLOCKED or MAX_STREAM_DATA frame may be owed (the blocked
///   frame is pending or the receive window's update is);
/// - `readable`: bytes delivered and not yet read.
///
/// `unchecked` holds the streams changed since the last look for newly blocked streams
/// ([`StreamTable::check_blocked`]): a stream's blocked state can only change when the
/// stream changes. Iterating an index in ascending ID order visits the same streams, in
/// the same order, as walking the whole map and filtering by the predicate did, so the
/// output is unchanged.
#[derive(Debug, Default)]
pub struct StreamTable {
    map: BTreeMap<u64, Stream>,
    idx: StreamIndex,
}

/// The indexes of a [`StreamTable`].
#[derive(Debug, Default)]
struct StreamIndex {
    retx: IdSet,
    new_data: IdSet,
    ctrl: IdSet,
    readable: IdSet,
    /// Streams changed since the last [`StreamTable::check_blocked`], each once (the
    /// stream's `IN_UNCHECKED` bit), in no particular order; the buffer is kept.
    unchecked: Vec<u64>,
    /// Streams looked at by the per-packet scans (a work counter for tests and benches).
    visits: std::cell::Cell<u64>,
}

/// Largest [`IdSet`] kept as a sorted vector; a larger one moves to a `BTreeSet` (a
/// stream joins or leaves an index about once per packet: a short vector does that
/// without walking tree nodes, a long one would shift too many entries).
const ID_SET_VEC_MAX: usize = 64;

/// A set of stream IDs iterated in ascending order: a sorted vector while it is small,
/// a `BTreeSet` once it has grown past [`ID_SET_VEC_MAX`] (until it empties again).
#[derive(Debug, Default)]
struct IdSet {
    /// The members, ascending (when `big` is empty).
    vec: Vec<u64>,
    /// The members, once there were too many for `vec` (then `vec` is empty).
    big: BTreeSet<u64>,
}

impl IdSet {
    fn insert(&mut self, id: u64) {
        if !self.big.is_empty() {
            self.big.insert(id);
            return;
        }
        match self.vec.last() {
            None => self.vec.push(id),
            Some(&last) if id > last => self.vec.push(id),
            _ => {
                if let Err(at) = self.vec.binary_search(&id) {
                    self.vec.insert(at, id);
                }
            }
        }
        if self.vec.len() > ID_SET_VEC_MAX {
            self.big.extend(self.vec.drain(..));
        }
    }

    fn remove(&mut self, id: u64) {
        if !self.big.is_empty() {
            self.big.remove(&id);
        } else if let Ok(at) = self.vec.binary_search(&id) {
            self.vec.remove(at);
        }
    }

    fn is_empty(&self) -> bool {
        self.vec.is_empty() && self.big.is_empty()
    }

    fn first(&self) -> Option<u64> {
        match self.vec.first() {
            Some(&id) => Some(id),
            None => self.big.first().copied(),
        }
    }

    /// The smallest member above `after` (the smallest of all when `None`).
    fn next_after(&self, after: Option<u64>) -> Option<u64> {
        let Some(a) = after else {
            return self.first();
        };
        if self.big.is_empty() {
            let at = self.vec.partition_point(|&id| id <= a);
            self.vec.get(at).copied()
        } else {
            self.big
                .range((Bound::Excluded(a), Bound::Unbounded))
                .next()
                .copied()
        }
    }
}

/// `Stream::filed` bit: in `StreamIndex::retx`.
const IN_RETX: u8 = 1;
/// `Stream::filed` bit: in `StreamIndex::new_data`.
const IN_NEW: u8 = 2;
/// `Stream::filed` bit: in `StreamIndex::ctrl`.
const IN_CTRL: u8 = 4;
/// `Stream::filed` bit: in `StreamIndex::readable`.
const IN_READABLE: u8 = 8;
/// `Stream::filed` bit: in `StreamIndex::unchecked`.
const IN_UNCHECKED: u8 = 16;

/// Files stream `id` in `set` (membership bit `bit` of `filed`) or takes it out; the set
/// is touched only when the membership changes.
fn file(set: &mut IdSet, filed: &mut u8, bit: u8, id: u64, member: bool) {
    if member == (*filed & bit != 0) {
        return;
    }
    if member {
        set.insert(id);
        *filed |= bit;
    } else {
        set.remove(id);
        *filed &= !bit;
    }
}

impl StreamIndex {
    fn visit(&self, n: u64) {
        self.visits.set(self.visits.get() + n);
    }

    /// Re-files stream `s` in every index (only the indexes whose membership changed
    /// are touched).
    #[inline]
    fn refile(&mut self, s: &mut Stream) {
        let id = s.id;
        let mut want = 0u8;
        if s.send.has_retx() {
            want |= IN_RETX;
        }
        if s.send.has_new() {
            want |= IN_NEW;
        }
        if s.send_fc.blocked_pending() || s.recv_fc.update_pending {
            want |= IN_CTRL;
        }
        if s.recv.readable() > 0 {
            want |= IN_READABLE;
        }
        let mut filed = s.filed;
        if (filed ^ want) & !IN_UNCHECKED != 0 {
            let wants = |bit: u8| want & bit != 0;
            file(&mut self.retx, &mut filed, IN_RETX, id, wants(IN_RETX));
            file(&mut self.new_data, &mut filed, IN_NEW, id, wants(IN_NEW));
            file(&mut self.ctrl, &mut filed, IN_CTRL, id, wants(IN_CTRL));
            file(
                &mut self.readable,
                &mut filed,
                IN_READABLE,
                id,
                wants(IN_READABLE),
            );
        }
        if filed & IN_UNCHECKED == 0 {
            filed |= IN_UNCHECKED;
            self.unchecked.push(id);
        }
        s.filed = filed;
    }
}

/// Mutable access to one stream of a [`StreamTable`]; re-files it in the indexes when
/// dropped.
#[derive(Debug)]
pub struct StreamMut<'a> {
    s: &'a mut Stream,
    idx: &'a mut StreamIndex,
}

impl Deref for StreamMut<'_> {
    type Target = Stream;
    fn deref(&self) -> &Stream {
        self.s
    }
}

impl DerefMut for StreamMut<'_> {
    fn deref_mut(&mut self) -> &mut Stream {
        self.s
    }
}

impl Drop for StreamMut<'_> {
    fn drop(&mut self) {
        self.idx.refile(self.s);
    }
}

impl StreamTable {
    /// All streams, by ID (read-only).
    pub fn map(&self) -> &BTreeMap<u64, Stream> {
        &self.map
    }

    /// Stream `id`.
    pub fn get(&self, id: &u64) -> Option<&Stream> {
        self.map.get(id)
    }

    /// Stream `id` exists.
    pub fn contains_key(&self, id: &u64) -> bool {
        self.map.contains_key(id)
    }

    /// Every stream, in ID order (read-only).
    pub fn values(&self) -> impl Iterator<Item = &Stream> {
        self.map.values()
    }

    /// Adds stream `s` (under `s.id`).
    pub fn insert(&mut self, mut s: Stream) {
        let id = s.id;
        self.idx.refile(&mut s);
        self.map.insert(id, s);
    }

    /// Mutable access to stream `id`; the stream is re-filed in the indexes afterwards.
    pub fn get_mut(&mut self, id: &u64) -> Option<StreamMut<'_>> {
        let s = self.map.get_mut(id)?;
        Some(StreamMut {
            s,
            idx: &mut self.idx,
        })
    }

    /// Streams looked at by the per-packet scans so far (a work counter).
    pub fn visits(&self) -> u64 {
        self.idx.visits.get()
    }

    /// The first stream, in ID order, with something to retransmit.
    pub fn first_retx(&self) -> Option<u64> {
        self.idx.retx.first()
    }

    /// Some stream has something to retransmit.
    pub fn any_retx(&self) -> bool {
        !self.idx.retx.is_empty()
    }

    /// Some stream has new data or a first FIN waiting.
    pub fn any_new(&self) -> bool {
        !self.idx.new_data.is_empty()
    }

    /// The first stream with ID above `after` (any when `None`; ascending) with new data or a FIN waiting
    /// for which `pred` holds.
    pub fn find_new(
        &self,
        after: Option<u64>,
        mut pred: impl FnMut(&Stream) -> bool,
    ) -> Option<u64> {
        let mut cur = after;
        while let Some(id) = self.idx.new_data.next_after(cur) {
            self.idx.visit(1);
            if pred(&self.map[&id]) {
                return Some(id);
            }
            cur = Some(id);
        }
        None
    }

    /// Some stream with new data or a FIN waiting satisfies `pred`.
    pub fn any_new_where(&self, pred: impl FnMut(&Stream) -> bool) -> bool {
        self.find_new(None, pred).is_some()
    }

    /// The streams that may owe a STREAM_DATA_BLOCKED or MAX_STREAM_DATA frame, in ID
    /// order, into `out` (cleared first).
    pub fn ctrl_ids(&mut self, out: &mut Vec<u64>) {
        out.clear();
        let mut cur = None;
        while let Some(id) = self.idx.ctrl.next_after(cur) {
            out.push(id);
            cur = Some(id);
        }
        self.idx.visit(out.len() as u64);
    }

    /// Some stream satisfying `pred` may owe a control frame.
    pub fn any_ctrl_where(&self, mut pred: impl FnMut(&Stream) -> bool) -> bool {
        let mut cur = None;
        while let Some(id) = self.idx.ctrl.next_after(cur) {
            self.idx.visit(1);
            if pred(&self.map[&id]) {
                return true;
            }
            cur = Some(id);
        }
        false
    }

    /// Calls `on_blocked` for every stream changed since the last call with unsent data
    /// and no stream credit (RFC 9000 §4.1; at most once per limit, so a stream that did
    /// not change since needs no second look).
    pub fn check_blocked(&mut self) {
        let StreamTable { map, idx } = self;
        let mut unchecked = std::mem::take(&mut idx.unchecked);
        // Ascending ID order, as the walk over the whole map had.
        unchecked.sort_unstable();
        for &id in &unchecked {
            idx.visit(1);
            if let Some(s) = map.get_mut(&id) {
                s.filed &= !IN_UNCHECKED;
                if s.send.unsent() > 0 && s.send_credit() == 0 {
                    s.send_fc.on_blocked();
                    let ctrl = s.send_fc.blocked_pending() || s.recv_fc.update_pending;
                    file(&mut idx.ctrl, &mut s.filed, IN_CTRL, id, ctrl);
                }
            }
        }
        unchecked.clear();
        idx.unchecked = unchecked;
    }

    /// The lowest-numbered stream above `after` (any when `None`) with readable bytes,
    /// and how many.
    pub fn next_readable(&self, after: Option<u64>) -> Option<(u64, u64)> {
        let mut cur = after;
        while let Some(id) = self.idx.readable.next_after(cur) {
            self.idx.visit(1);
            let n = self.map[&id].recv.readable();
            if n > 0 {
                return Some((id, n));
            }
            cur = Some(id);
        }
        None
    }
}

impl std::ops::Index<&u64> for StreamTable {
    type Output = Stream;
    fn index(&self, id: &u64) -> &Stream {
        &self.map[id]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::quic::varint_len;

    #[test]
    fn data_len_fits_budget() {
        for budget in 3..3000u64 {
            if let Some(n) = max_data_len(2, budget) {
                assert!(2 + varint_len(n) + n <= budget, "budget {budget} n {n}");
                // Tight: one more byte would not fit.
                assert!(
                    2 + varint_len(n + 1) + n + 1 > budget,
                    "budget {budget} n {n}"
                );
            }
        }
    }

    #[test]
    fn send_buf_retransmits_unacked_only() {
        let mut b = SendBuf::default();
        b.write(3000, true);
        let c1 = b.next_new(1000, u64::MAX).unwrap();
        let c2 = b.next_new(1000, u64::MAX).unwrap();
        let c3 = b.next_new(1000, u64::MAX).unwrap();
        assert!(c3.fin && !c1.fin && !c2.fin);
        assert!(b.next_new(1000, u64::MAX).is_none());
        b.on_ack(500, 1000, false);
        b.on_lost(0, 1000, false);
        b.on_lost(2000, 1000, true);
        let r1 = b.next_retx(5000).unwrap();
        assert_eq!((r1.offset, r1.len, r1.fin), (0, 500, false));
        let r2 = b.next_retx(5000).unwrap();
        assert_eq!((r2.offset, r2.len, r2.fin), (2000, 1000, true));
        assert!(b.next_retx(5000).is_none());
        b.on_ack(0, 500, false);
        b.on_ack(1500, 1500, true);
        assert!(b.is_complete());
    }

    #[test]
    fn recv_buf_counts_duplicates() {
        let mut r = RecvBuf::default();
        assert_eq!(r.on_data(100, 100, false), (100, 0));
        assert_eq!(r.on_data(0, 150, false), (100, 200));
        assert_eq!(r.duplicate_bytes, 50);
        assert_eq!(r.on_data(200, 0, true), (0, 0));
        assert!(r.is_fully_received());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]

        /// `SendBuf::is_complete`'s first-range test says what counting the acknowledged
        /// bytes of `[0, written)` says, whatever was acknowledged in whichever order.
        #[test]
        fn is_complete_matches_covered_count(
            written in 0u64..60,
            acks in proptest::collection::vec((0u64..70, 0u64..20), 0..12),
        ) {
            let mut b = SendBuf::default();
            b.write(written, true);
            b.fin_acked = true;
            for (offset, len) in acks {
                b.on_ack(offset, len, false);
                let want = b.acked.covered(0, b.written) == b.written;
                proptest::prop_assert_eq!(b.is_complete(), want);
            }
        }

        /// `IdSet` (vector or tree, across the switch both ways) answers every query as a
        /// `BTreeSet` does.
        #[test]
        fn id_set_matches_btree_set(ops in proptest::collection::vec((0u8..2, 0u64..200), 1..600)) {
            let mut set = IdSet::default();
            let mut model = BTreeSet::new();
            for (op, id) in ops {
                if op == 0 {
                    set.insert(id);
                    model.insert(id);
                } else {
                    set.remove(id);
                    model.remove(&id);
                }
                proptest::prop_assert_eq!(set.is_empty(), model.is_empty());
                proptest::prop_assert_eq!(set.first(), model.first().copied());
                let after = Some(id);
                let want = model.range((Bound::Excluded(id), Bound::Unbounded)).next().copied();
                proptest::prop_assert_eq!(set.next_after(after), want);
                let mut all = Vec::new();
                let mut cur = None;
                while let Some(x) = set.next_after(cur) {
                    all.push(x);
                    cur = Some(x);
                }
                proptest::prop_assert_eq!(all, model.iter().copied().collect::<Vec<_>>());
            }
        }
    }
}

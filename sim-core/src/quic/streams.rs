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
        self.fin && self.fin_acked && self.acked.covered(0, self.written) == self.written
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
    retx: BTreeSet<u64>,
    new_data: BTreeSet<u64>,
    ctrl: BTreeSet<u64>,
    readable: BTreeSet<u64>,
    unchecked: BTreeSet<u64>,
    /// Streams looked at by the per-packet scans (a work counter for tests and benches).
    visits: std::cell::Cell<u64>,
}

fn file(set: &mut BTreeSet<u64>, id: u64, member: bool) {
    if member {
        set.insert(id);
    } else {
        set.remove(&id);
    }
}

impl StreamIndex {
    fn visit(&self, n: u64) {
        self.visits.set(self.visits.get() + n);
    }

    /// Re-files stream `s` in every index.
    fn refile(&mut self, s: &Stream) {
        let id = s.id;
        file(&mut self.retx, id, s.send.has_retx());
        file(&mut self.new_data, id, s.send.has_new());
        file(
            &mut self.ctrl,
            id,
            s.send_fc.blocked_pending() || s.recv_fc.update_pending,
        );
        file(&mut self.readable, id, s.recv.readable() > 0);
        self.unchecked.insert(id);
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
    pub fn insert(&mut self, s: Stream) {
        let id = s.id;
        self.idx.refile(&s);
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
        self.idx.retx.first().copied()
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
        let from = after.map_or(Bound::Unbounded, Bound::Excluded);
        for &id in self.idx.new_data.range((from, Bound::Unbounded)) {
            self.idx.visit(1);
            if pred(&self.map[&id]) {
                return Some(id);
            }
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
        out.extend(self.idx.ctrl.iter().copied());
        self.idx.visit(out.len() as u64);
    }

    /// Some stream satisfying `pred` may owe a control frame.
    pub fn any_ctrl_where(&self, mut pred: impl FnMut(&Stream) -> bool) -> bool {
        self.idx.ctrl.iter().any(|id| {
            self.idx.visit(1);
            pred(&self.map[id])
        })
    }

    /// Calls `on_blocked` for every stream changed since the last call with unsent data
    /// and no stream credit (RFC 9000 §4.1; at most once per limit, so a stream that did
    /// not change since needs no second look).
    pub fn check_blocked(&mut self) {
        let StreamTable { map, idx } = self;
        let unchecked = std::mem::take(&mut idx.unchecked);
        for id in unchecked {
            idx.visit(1);
            if let Some(s) = map.get_mut(&id) {
                if s.send.unsent() > 0 && s.send_credit() == 0 {
                    s.send_fc.on_blocked();
                    file(
                        &mut idx.ctrl,
                        id,
                        s.send_fc.blocked_pending() || s.recv_fc.update_pending,
                    );
                }
            }
        }
    }

    /// The lowest-numbered stream above `after` (any when `None`) with readable bytes,
    /// and how many.
    pub fn next_readable(&self, after: Option<u64>) -> Option<(u64, u64)> {
        let from = after.map_or(Bound::Unbounded, Bound::Excluded);
        self.idx
            .readable
            .range((from, Bound::Unbounded))
            .inspect(|_| self.idx.visit(1))
            .map(|id| (*id, self.map[id].recv.readable()))
            .find(|&(_, n)| n > 0)
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
}

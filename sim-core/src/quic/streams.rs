//! Stream and crypto-stream buffers as byte-range bookkeeping (no payload bytes).
//!
//! [`SendBuf`] tracks what the application wrote, what was sent, what must be resent
//! and what was acknowledged; [`RecvBuf`] reassembles received ranges and delivers in
//! order. Both serve STREAM frames (RFC 9000 §2-3) and CRYPTO frames (§19.6).

use super::flow_control::{RecvFlow, SendFlow};
use crate::transport::ranges::RangeSet;
use std::ops::{Deref, DerefMut};

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
        // `[0, delivered)` is all received, so the range holding byte `delivered - 1` is
        // the first one and starts at 0: the contiguous end from `delivered` is that
        // range's end (or `delivered` itself when no range starts at 0), without a search.
        if let Some((0, end)) = self.received.first() {
            self.delivered = self.delivered.max(end);
        }
        debug_assert_eq!(
            self.delivered,
            self.received.contiguous_end(before).max(before)
        );
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
/// Storage: a stream ID is `4·n + type` (RFC 9000 §2.1: the two low bits are the
/// initiator and the direction), and the streams of one type open in order (a local one
/// per [`crate::quic::Connection::open_stream`], a remote one with every lower-numbered one
/// of its type, §3.2), so each type keeps its streams in a vector indexed by `n`: a lookup
/// is an index, not a tree walk.
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
/// `unchecked` holds the streams that were, when last changed since the last look for
/// newly blocked streams ([`StreamTable::check_blocked`]), blocked by their stream credit
/// (unsent data, no credit: `StreamIndex::may_block`): a stream's blocked state can only
/// change when the stream changes, and the look does nothing for a stream that is not so
/// blocked (checked in debug builds). The indexes are bit sets keyed by the stream ID (`IdSet`), so
/// iterating one in ascending ID order visits the same streams, in the same order, as
/// walking the whole table and filtering by the predicate did, and the output is
/// unchanged. With few streams (IDs below 64) every index operation touches one word.
#[derive(Debug, Default)]
pub struct StreamTable {
    /// The streams of each type (ID `& 3`), by ordinal (ID `>> 2`).
    by_type: [Vec<Option<Stream>>; 4],
    /// Streams in the table.
    len: usize,
    idx: StreamIndex,
}

/// The indexes of a [`StreamTable`].
#[derive(Debug, Default)]
struct StreamIndex {
    retx: IdSet,
    new_data: IdSet,
    ctrl: IdSet,
    readable: IdSet,
    /// Streams changed since the last [`StreamTable::check_blocked`] while blocked by
    /// their stream credit ([`StreamIndex::may_block`]; the stream's `IN_UNCHECKED` bit
    /// mirrors membership).
    unchecked: IdSet,
    /// Streams looked at by the per-packet scans (a work counter for tests and benches).
    visits: std::cell::Cell<u64>,
}

/// A set of stream IDs iterated in ascending order: a bit per ID (`words`), and a bit per
/// non-zero word (`summary`), so that finding the next member skips 4 096 absent IDs per
/// summary word. Insert and remove are a few bit operations; with IDs below 64 (a
/// connection with up to 16 streams of a type) every operation touches one word of each.
#[derive(Clone, Default)]
struct IdSet {
    /// Bit `id % 64` of word `id / 64`: `id` is a member.
    words: Vec<u64>,
    /// Bit `w % 64` of word `w / 64`: `words[w]` is not zero.
    summary: Vec<u64>,
    /// Members.
    count: usize,
}

/// The members (not the words: a set grown and emptied again is the same set).
impl std::fmt::Debug for IdSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut members = f.debug_set();
        let mut cur = None;
        while let Some(id) = self.next_after(cur) {
            members.entry(&id);
            cur = Some(id);
        }
        members.finish()
    }
}

/// Bit `i % 64` of a word, as a mask.
fn bit(i: usize) -> u64 {
    1u64 << (i % 64)
}

impl IdSet {
    #[inline]
    fn insert(&mut self, id: u64) {
        let i = usize::try_from(id).expect("stream ID fits usize");
        let w = i / 64;
        let Some(word) = self.words.get_mut(w) else {
            return self.insert_growing(i);
        };
        if *word & bit(i) == 0 {
            *word |= bit(i);
            self.count += 1;
            self.summary[w / 64] |= bit(w);
        }
    }

    /// [`IdSet::insert`] of an ID beyond the words: grows them first.
    #[cold]
    fn insert_growing(&mut self, i: usize) {
        let w = i / 64;
        self.words.resize(w + 1, 0);
        self.summary.resize(w / 64 + 1, 0);
        self.words[w] |= bit(i);
        self.count += 1;
        self.summary[w / 64] |= bit(w);
    }

    #[inline]
    fn remove(&mut self, id: u64) {
        let Ok(i) = usize::try_from(id) else { return };
        let w = i / 64;
        let Some(word) = self.words.get_mut(w) else {
            return;
        };
        if *word & bit(i) != 0 {
            *word &= !bit(i);
            self.count -= 1;
            if *word == 0 {
                self.summary[w / 64] &= !bit(w);
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Takes the smallest member out and returns it.
    #[inline]
    fn pop_first(&mut self) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let sw = self.summary.iter().position(|&m| m != 0)?;
        let w = sw * 64 + self.summary[sw].trailing_zeros() as usize;
        let word = &mut self.words[w];
        let i = w * 64 + word.trailing_zeros() as usize;
        *word &= *word - 1; // the lowest set bit cleared
        self.count -= 1;
        if *word == 0 {
            self.summary[sw] &= !bit(w);
        }
        Some(i as u64)
    }

    #[inline]
    fn first(&self) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        self.first_from(0)
    }

    /// The smallest member `>= from`.
    #[inline]
    fn first_from(&self, from: usize) -> Option<u64> {
        let w = from / 64;
        let m = *self.words.get(w)? & (!0u64 << (from % 64));
        if m != 0 {
            return Some((w * 64 + m.trailing_zeros() as usize) as u64);
        }
        // The next non-zero word after `w`, from the summary.
        let w1 = w + 1;
        let mut sw = w1 / 64;
        let mut sm = *self.summary.get(sw)? & (!0u64 << (w1 % 64));
        loop {
            if sm != 0 {
                let w = sw * 64 + sm.trailing_zeros() as usize;
                let m = self.words[w];
                debug_assert!(m != 0, "summary bit of an empty word");
                return Some((w * 64 + m.trailing_zeros() as usize) as u64);
            }
            sw += 1;
            sm = *self.summary.get(sw)?;
        }
    }

    /// The smallest member above `after` (the smallest of all when `None`).
    #[inline]
    fn next_after(&self, after: Option<u64>) -> Option<u64> {
        match after {
            None => self.first(),
            Some(a) => {
                if self.count == 0 {
                    return None;
                }
                let from = usize::try_from(a).ok()?.checked_add(1)?;
                self.first_from(from)
            }
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
#[inline]
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

    /// The indexes stream `s` belongs in (`IN_*` bits, without `IN_UNCHECKED`).
    #[inline]
    fn wanted(s: &Stream) -> u8 {
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
        want
    }

    /// Re-files stream `s` in every index (only the indexes whose membership changed
    /// are touched).
    #[inline]
    fn refile(&mut self, s: &mut Stream) {
        let id = s.id;
        let want = Self::wanted(s);
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
        // Only a stream blocked as it is now can need the look of `check_blocked` (which
        // does nothing for any other): a receive-side change (data in, data read) or a
        // send with credit left marks nothing.
        if filed & IN_UNCHECKED == 0 && Self::may_block(s) {
            filed |= IN_UNCHECKED;
            self.unchecked.insert(id);
        }
        s.filed = filed;
    }

    /// [`StreamIndex::refile`] after a change of the receive half only (`recv`,
    /// `recv_fc`, the receive times): of the four indexes only `readable` and `ctrl` (a
    /// MAX_STREAM_DATA owed) can change; `retx` and `new_data` are the send half's
    /// (checked against a full re-filing in debug builds).
    #[inline]
    fn refile_recv(&mut self, s: &mut Stream) {
        let id = s.id;
        let ctrl = s.send_fc.blocked_pending() || s.recv_fc.update_pending;
        file(&mut self.ctrl, &mut s.filed, IN_CTRL, id, ctrl);
        let readable = s.recv.readable() > 0;
        file(&mut self.readable, &mut s.filed, IN_READABLE, id, readable);
        if s.filed & IN_UNCHECKED == 0 && Self::may_block(s) {
            s.filed |= IN_UNCHECKED;
            self.unchecked.insert(id);
        }
        debug_assert_eq!(
            s.filed & !IN_UNCHECKED,
            Self::wanted(s),
            "a receive-side change of stream {} changed its send half",
            s.id
        );
    }

    /// The condition under which [`StreamTable::check_blocked`] acts on a stream: data
    /// waits and the stream credit is spent (RFC 9000 §4.1, §19.13).
    #[inline]
    fn may_block(s: &Stream) -> bool {
        s.send.unsent() > 0 && s.send_credit() == 0
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

/// Mutable access to one stream of a [`StreamTable`] for a change of its receive half
/// only (`recv`, `recv_fc`, `first_byte_at`, `recv_complete_at`); re-files it in the
/// indexes such a change can move it in when dropped.
#[derive(Debug)]
pub struct RecvMut<'a> {
    s: &'a mut Stream,
    idx: &'a mut StreamIndex,
}

impl Deref for RecvMut<'_> {
    type Target = Stream;
    fn deref(&self) -> &Stream {
        self.s
    }
}

impl DerefMut for RecvMut<'_> {
    fn deref_mut(&mut self) -> &mut Stream {
        self.s
    }
}

impl Drop for RecvMut<'_> {
    fn drop(&mut self) {
        self.idx.refile_recv(self.s);
    }
}

/// The slot of stream `id`: its type (RFC 9000 §2.1: the two low bits) and its ordinal.
#[inline]
fn slot(id: u64) -> (usize, usize) {
    (
        (id & 3) as usize,
        usize::try_from(id >> 2).unwrap_or(usize::MAX),
    )
}

impl StreamTable {
    /// Stream `id`.
    #[inline]
    pub fn get(&self, id: &u64) -> Option<&Stream> {
        let (t, n) = slot(*id);
        self.by_type[t].get(n)?.as_ref()
    }

    /// Stream `id` exists.
    pub fn contains_key(&self, id: &u64) -> bool {
        self.get(id).is_some()
    }

    /// Streams in the table.
    pub fn len(&self) -> usize {
        self.len
    }

    /// No stream yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every stream, in ID order (read-only).
    pub fn values(&self) -> impl Iterator<Item = &Stream> {
        let rows = self.by_type.iter().map(Vec::len).max().unwrap_or(0);
        (0..rows).flat_map(move |n| {
            self.by_type
                .iter()
                .filter_map(move |v| v.get(n).and_then(Option::as_ref))
        })
    }

    /// Every stream with its ID, in ID order (read-only).
    pub fn iter(&self) -> impl Iterator<Item = (&u64, &Stream)> {
        self.values().map(|s| (&s.id, s))
    }

    /// Every stream ID, in ID order.
    pub fn keys(&self) -> impl Iterator<Item = &u64> {
        self.values().map(|s| &s.id)
    }

    /// Adds stream `s` (under `s.id`; the ID must be new).
    pub fn insert(&mut self, mut s: Stream) {
        let (t, n) = slot(s.id);
        let v = &mut self.by_type[t];
        if n >= v.len() {
            v.resize_with(n + 1, || None);
        }
        debug_assert!(v[n].is_none(), "stream {} inserted twice", s.id);
        self.idx.refile(&mut s);
        if v[n].replace(s).is_none() {
            self.len += 1;
        }
    }

    /// Mutable access to stream `id`; the stream is re-filed in the indexes afterwards.
    #[inline]
    pub fn get_mut(&mut self, id: &u64) -> Option<StreamMut<'_>> {
        let (t, n) = slot(*id);
        let s = self.by_type[t].get_mut(n)?.as_mut()?;
        Some(StreamMut {
            s,
            idx: &mut self.idx,
        })
    }

    /// Mutable access to stream `id` for a change of its receive half only
    /// ([`RecvMut`]; cheaper re-filing than [`StreamTable::get_mut`]).
    #[inline]
    pub fn get_recv_mut(&mut self, id: &u64) -> Option<RecvMut<'_>> {
        let (t, n) = slot(*id);
        let s = self.by_type[t].get_mut(n)?.as_mut()?;
        Some(RecvMut {
            s,
            idx: &mut self.idx,
        })
    }

    /// STREAM frame data `[offset, offset + len)` (and the FIN when `fin`) of stream `id`
    /// was acknowledged ([`SendBuf::on_ack`]); returns `true` when that completed the
    /// stream's send half (its `send_complete_at` is then set to `now`). An
    /// acknowledgement changes only the acknowledged and to-retransmit ranges and the FIN
    /// flags: of the indexes only `retx` can change (not `written` or `sent`, so not
    /// new data nor the blocked check; not the limits; not the receive half), so only
    /// that one is re-filed (checked against a full re-file in debug builds).
    pub fn on_send_acked(
        &mut self,
        id: u64,
        offset: u64,
        len: u64,
        fin: bool,
        now: SimTime,
    ) -> bool {
        let (t, n) = slot(id);
        let Some(s) = self.by_type[t].get_mut(n).and_then(Option::as_mut) else {
            return false;
        };
        s.send.on_ack(offset, len, fin);
        let done = s.send_complete_at.is_none() && s.send.is_complete();
        if done {
            s.send_complete_at = Some(now);
        }
        let retx = s.send.has_retx();
        file(&mut self.idx.retx, &mut s.filed, IN_RETX, id, retx);
        debug_assert_eq!(
            s.filed & !IN_UNCHECKED,
            StreamIndex::wanted(s),
            "an acknowledgement changed more than the retransmission index"
        );
        done
    }

    /// Stream `id`, indexed (the caller found it in an index).
    fn indexed(&self, id: u64) -> &Stream {
        self.get(&id).expect("an indexed stream exists")
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

    /// Some stream may owe a STREAM_DATA_BLOCKED or MAX_STREAM_DATA frame.
    pub fn any_ctrl(&self) -> bool {
        !self.idx.ctrl.is_empty()
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
            if pred(self.indexed(id)) {
                return Some(id);
            }
            cur = Some(id);
        }
        None
    }

    /// [`StreamTable::find_new`] round robin: the first stream after `after` for which
    /// `pred` holds, else the first from the start up to `after`. The same answer as
    /// `find_new(after, pred).or_else(|| find_new(None, pred))` for a `pred` without
    /// side effects (the streams above `after` failed it in the first scan), without
    /// looking at them twice.
    pub fn find_new_round_robin(
        &self,
        after: Option<u64>,
        mut pred: impl FnMut(&Stream) -> bool,
    ) -> Option<u64> {
        if let Some(id) = self.find_new(after, &mut pred) {
            return Some(id);
        }
        let a = after?; // `None`: the first scan looked at every stream
        let mut cur = None;
        while let Some(id) = self.idx.new_data.next_after(cur) {
            if id > a {
                break;
            }
            self.idx.visit(1);
            if pred(self.indexed(id)) {
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
            if pred(self.indexed(id)) {
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
        // Every stream left out is one the look would change nothing for: not blocked by
        // its credit, or blocked at a limit already signalled (`SendFlow::on_blocked`).
        // (Only streams with unsent data can be blocked: those of the `new_data` index.)
        #[cfg(debug_assertions)]
        let mut cur = None;
        #[cfg(debug_assertions)]
        while let Some(id) = self.idx.new_data.next_after(cur) {
            cur = Some(id);
            let s = self.indexed(id);
            debug_assert!(
                s.filed & IN_UNCHECKED != 0
                    || !StreamIndex::may_block(s)
                    || s.send_fc.blocked_at() == Some(s.send_fc.limit()),
                "stream {} blocked but not marked for check_blocked",
                s.id
            );
        }
        let StreamTable { by_type, idx, .. } = self;
        // Ascending ID order, as the walk over the whole table had.
        while let Some(id) = idx.unchecked.pop_first() {
            idx.visit(1);
            let (t, n) = slot(id);
            if let Some(s) = by_type[t].get_mut(n).and_then(Option::as_mut) {
                s.filed &= !IN_UNCHECKED;
                if StreamIndex::may_block(s) {
                    s.send_fc.on_blocked();
                    let ctrl = s.send_fc.blocked_pending() || s.recv_fc.update_pending;
                    file(&mut idx.ctrl, &mut s.filed, IN_CTRL, id, ctrl);
                }
            }
        }
    }

    /// The lowest-numbered stream above `after` (any when `None`) with readable bytes,
    /// and how many.
    pub fn next_readable(&self, after: Option<u64>) -> Option<(u64, u64)> {
        let mut cur = after;
        while let Some(id) = self.idx.readable.next_after(cur) {
            self.idx.visit(1);
            let n = self.indexed(id).recv.readable();
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
        self.get(id).expect("no stream with this ID")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::quic::varint_len;
    use std::collections::BTreeSet;
    use std::ops::Bound;

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

        /// `IdSet` (bit words and summary words, IDs within one word and spread over
        /// several summary words) answers every query as a `BTreeSet` does.
        #[test]
        fn id_set_matches_btree_set(
            ops in proptest::collection::vec((0u8..2, proptest::bool::ANY, 0u64..20_000), 1..600),
        ) {
            let mut set = IdSet::default();
            let mut model = BTreeSet::new();
            for (op, small, x) in ops {
                let id = if small { x % 200 } else { x };
                if op == 0 {
                    set.insert(id);
                    model.insert(id);
                } else {
                    set.remove(id);
                    model.remove(&id);
                }
                proptest::prop_assert_eq!(set.is_empty(), model.is_empty());
                proptest::prop_assert_eq!(set.first(), model.first().copied());
                for a in [id, id.saturating_sub(1), id + 63, id + 64, id + 4096, u64::MAX] {
                    let want = model.range((Bound::Excluded(a), Bound::Unbounded)).next().copied();
                    proptest::prop_assert_eq!(set.next_after(Some(a)), want, "after {}", a);
                }
                let mut all = Vec::new();
                let mut cur = None;
                while let Some(x) = set.next_after(cur) {
                    all.push(x);
                    cur = Some(x);
                }
                proptest::prop_assert_eq!(&all, &model.iter().copied().collect::<Vec<_>>());
                let mut drained = set.clone();
                let mut popped = Vec::new();
                while let Some(x) = drained.pop_first() {
                    popped.push(x);
                }
                proptest::prop_assert!(drained.is_empty());
                proptest::prop_assert_eq!(popped, all);
            }
        }

        /// The table (streams in per-type vectors, bit-set indexes) answers every scan as
        /// the table it replaced did: a `BTreeMap` by ID walked in ID order and filtered by
        /// each index's predicate, through any mix of streams of the four types opened in
        /// order and mutated through `get_mut`.
        #[test]
        fn table_matches_walking_a_btree_map(
            ops in proptest::collection::vec((0u8..9, 0u64..4, 0u64..40, 0u64..3000), 1..200),
        ) {
            let mut table = StreamTable::default();
            let mut opened = [0u64; 4];
            for (op, ty, pick, v) in ops {
                if op == 0 || table.is_empty() {
                    let id = 4 * opened[ty as usize] + ty;
                    opened[ty as usize] += 1;
                    let fc = RecvFlow::new(crate::transport::allowance::AllowanceKind::Static, 1000);
                    table.insert(Stream::new(id, v, fc));
                } else if op == 8 {
                    // An acknowledgement through the table's own path (re-files `retx` only).
                    let ids: Vec<u64> = table.keys().copied().collect();
                    let id = ids[(pick as usize) % ids.len()];
                    let sent = table[&id].send.sent;
                    let o = v % (sent + 1);
                    let fin = table[&id].send.fin_sent && v % 2 == 0;
                    table.on_send_acked(id, o, sent - o, fin, SimTime::ZERO);
                } else {
                    let ids: Vec<u64> = table.keys().copied().collect();
                    let id = ids[(pick as usize) % ids.len()];
                    let mut s = table.get_mut(&id).expect("listed");
                    match op {
                        1 => {
                            if !s.send.fin {
                                s.send.write(v, v % 7 == 0);
                            }
                        }
                        2 => {
                            let credit = s.send_credit();
                            if let Some(c) = s.send.next_new(v, credit) {
                                s.send_fc.on_sent(c.len);
                            }
                        }
                        3 => {
                            let sent = s.send.sent;
                            let o = v % (sent + 1);
                            s.send.on_lost(o, (sent - o).min(pick * 10), false);
                        }
                        4 => {
                            let sent = s.send.sent;
                            let o = v % (sent + 1);
                            s.send.on_ack(o, (sent - o).min(pick * 10), false);
                            let _ = s.send.next_retx(pick * 5);
                        }
                        5 => {
                            let o = s.recv.delivered;
                            s.recv.on_data(o, v % 500, false);
                        }
                        6 => {
                            let n = s.recv.readable().min(v);
                            s.recv.consumed += n;
                        }
                        _ => {
                            s.recv_fc.update_pending = v % 2 == 0;
                            let limit = s.send_fc.limit() + v % 3;
                            s.send_fc.raise(limit);
                            if v % 5 == 0 {
                                s.send_fc.on_blocked_sent();
                            }
                        }
                    }
                }
                // A check for blocked streams now and then, as `poll_transmit` does.
                if v % 3 == 0 {
                    table.check_blocked();
                }
                let mut ctrl = Vec::new();
                table.ctrl_ids(&mut ctrl);
                // The model: every stream in ID order, filtered by each predicate.
                let model: std::collections::BTreeMap<u64, &Stream> =
                    table.values().map(|s| (s.id, s)).collect();
                proptest::prop_assert_eq!(model.len(), table.len());
                let ids: Vec<u64> = model.keys().copied().collect();
                let order: Vec<u64> = table.keys().copied().collect();
                proptest::prop_assert_eq!(&order, &ids, "values in ID order");
                let walk = |p: &dyn Fn(&Stream) -> bool| -> Vec<u64> {
                    model.values().filter(|s| p(s)).map(|s| s.id).collect()
                };
                let scan = |next: &dyn Fn(Option<u64>) -> Option<u64>| -> Vec<u64> {
                    let mut out = Vec::new();
                    let mut cur = None;
                    while let Some(id) = next(cur) {
                        out.push(id);
                        cur = Some(id);
                    }
                    out
                };
                proptest::prop_assert_eq!(
                    scan(&|a| table.find_new(a, |_| true)),
                    walk(&|s| s.send.has_new())
                );
                proptest::prop_assert_eq!(
                    table.first_retx(),
                    walk(&|s| s.send.has_retx()).first().copied()
                );
                proptest::prop_assert_eq!(table.any_retx(), !walk(&|s| s.send.has_retx()).is_empty());
                proptest::prop_assert_eq!(
                    scan(&|a| table.next_readable(a).map(|r| r.0)),
                    walk(&|s| s.recv.readable() > 0)
                );
                let ctrl_want: Vec<u64> = table
                    .values()
                    .filter(|s| s.send_fc.blocked_pending() || s.recv_fc.update_pending)
                    .map(|s| s.id)
                    .collect();
                proptest::prop_assert_eq!(ctrl, ctrl_want);
                for &id in &ids {
                    proptest::prop_assert_eq!(table.get(&id).map(|s| s.id), Some(id));
                }
                let absent = 4 * opened[(pick % 4) as usize] + pick % 4;
                proptest::prop_assert!(table.get(&absent).is_none());
            }
        }
    }
}

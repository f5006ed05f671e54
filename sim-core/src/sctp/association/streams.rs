//! The association's workload streams (RFC 9260 §6.5-6.6): each one's sending half
//! (messages cut lazily into DATA chunks, what was acknowledged) and receiving half
//! (what arrived, what was delivered in order), the stream numbers they ride on (§5.1.1)
//! and the round robin over the streams with data queued. [`Streams`] owns them.

use super::*;

/// A message queued on a stream, fragmented lazily into DATA chunks.
#[derive(Clone, Debug)]
pub(super) struct Msg {
    /// Stream offset of its first byte.
    pub(super) start: u64,
    pub(super) len: u64,
    pub(super) fin: bool,
    pub(super) ssn: u64,
    /// Bytes already cut into chunks.
    pub(super) cut: u64,
}

/// The sending half of one stream.
#[derive(Clone, Debug, Default)]
pub(super) struct SendStream {
    /// The SCTP stream number carrying it.
    pub(super) sid: u64,
    pub(super) written: u64,
    pub(super) msgs: VecDeque<Msg>,
    pub(super) fin_written: bool,
    pub(super) acked: RangeSet,
    pub(super) fin_acked: bool,
    pub(super) complete_at: Option<SimTime>,
    /// Whether this side opened it ([`SctpAssociation::open_stream`]).
    pub(super) local: bool,
}

/// The receiving half of one stream.
#[derive(Clone, Debug, Default)]
pub(super) struct RecvStream {
    /// The SCTP stream number it arrived on.
    pub(super) sid: u64,
    pub(super) received: RangeSet,
    /// Bytes delivered to (read by) the application, in order.
    pub(super) delivered: u64,
    pub(super) fin_at: Option<u64>,
    pub(super) read_complete: bool,
    pub(super) first_byte_at: Option<SimTime>,
    pub(super) complete_at: Option<SimTime>,
}

/// The stream tables.
#[derive(Debug, Default)]
pub(super) struct Streams {
    /// Negotiated outbound streams `min(our OS, peer MIS)` (§5.1.1).
    pub(super) out_streams: u64,
    /// Client: the next workload stream (its [`StreamId`]: 0, 1, 2, ...).
    pub(super) next_local_stream: u64,
    /// Client: stream numbers given out so far (fresh numbers go in order: 0, 1, ...).
    pub(super) sids_used: u64,
    /// Client: given-out stream numbers whose exchange ended, free for the next stream.
    pub(super) sids_free: BTreeSet<u64>,
    /// Client: an open was refused because every stream number was busy; the next one
    /// freed is announced with [`StreamEvent::StreamsAvailable`].
    pub(super) open_refused: bool,
    /// The next SSN of each stream number (§6.5: per stream, across the workload streams
    /// it carried).
    pub(super) next_ssn: BTreeMap<u64, u64>,
    pub(super) send_streams: BTreeMap<StreamId, SendStream>,
    /// The send streams with a queued message, in stream order: the round robin and
    /// "anything to send" walk this index instead of every stream, so the cost per DATA
    /// chunk does not grow with idle or finished streams (issue 15 item 3).
    pub(super) sendable: BTreeSet<StreamId>,
    pub(super) rr_cursor: Option<StreamId>,
    pub(super) recv_streams: BTreeMap<StreamId, RecvStream>,
}

impl Streams {
    pub(super) fn mark_acked(&mut self, d: &DataChunk) {
        if let Some(s) = self.send_streams.get_mut(&d.stream) {
            s.acked.insert(d.offset, d.offset + d.len);
            if d.fin && d.end {
                s.fin_acked = true;
            }
        }
    }

    /// The stream the round robin serves next: the first stream with a queued message
    /// after the last one served, else the first one (the order of a walk over every
    /// stream in ID order, over the index of the sendable ones only).
    #[inline]
    pub(super) fn next_sendable(&self) -> Option<StreamId> {
        // One stream (or none) with a queued message: it, wherever the cursor is.
        if self.sendable.len() <= 1 {
            return self.sendable.first().copied();
        }
        self.next_sendable_rr()
    }

    /// [`Streams::next_sendable`] with several streams to choose from.
    #[inline(never)]
    fn next_sendable_rr(&self) -> Option<StreamId> {
        let after = self.rr_cursor;
        after
            .and_then(|c| {
                self.sendable
                    .range((std::ops::Bound::Excluded(c), std::ops::Bound::Unbounded))
                    .next()
            })
            .or_else(|| self.sendable.iter().next())
            .copied()
    }
}

impl SctpAssociation {
    /// Opens the next locally initiated workload stream (client: 0, 1, 2, ..., below
    /// 32768), once the peer's stream limits are known (INIT-ACK), on a
    /// stream number both directions have ([`SctpAssociation::usable_streams`]): a fresh
    /// one while any is left (stream `i` on number `i`), else the lowest one whose
    /// exchange ended. `None` while every number is busy; the next one freed is announced
    /// with [`StreamEvent::StreamsAvailable`].
    pub fn open_stream(&mut self) -> Option<StreamId> {
        if self.side != Side::Client
            || !matches!(
                self.state,
                AssocState::CookieEchoed | AssocState::Established
            )
            || self.streams.next_local_stream >= CLIENT_STREAMS
        {
            return None;
        }
        let sid = if self.streams.sids_used < self.usable_streams() {
            self.streams.sids_used += 1;
            self.streams.sids_used - 1
        } else if let Some(sid) = self.streams.sids_free.pop_first() {
            sid
        } else {
            self.streams.open_refused = true;
            return None;
        };
        let id = self.streams.next_local_stream;
        self.streams.next_local_stream += 1;
        self.streams.send_streams.insert(
            id,
            SendStream {
                sid,
                local: true,
                ..SendStream::default()
            },
        );
        Some(id)
    }

    /// Queues one message of `len` bytes on workload stream `id` (`fin`: it ends the
    /// stream), on its stream number: the one it was opened on (client) or the request's
    /// (server). Nothing happens on a stream without one, or after the stream's end.
    pub fn write(&mut self, id: StreamId, len: u64, fin: bool) {
        if self.is_closed() {
            return;
        }
        let sid = match (
            self.streams.send_streams.get(&id),
            self.streams.recv_streams.get(&id),
        ) {
            (Some(s), _) => s.sid,
            (None, Some(r)) => r.sid,
            (None, None) => return,
        };
        if sid >= self.streams.out_streams {
            return;
        }
        let s = self
            .streams
            .send_streams
            .entry(id)
            .or_insert_with(|| SendStream {
                sid,
                ..SendStream::default()
            });
        if s.fin_written || (len == 0 && !fin) {
            return;
        }
        let next = self.streams.next_ssn.entry(sid).or_insert(0);
        let ssn = *next;
        *next += 1;
        s.msgs.push_back(Msg {
            start: s.written,
            len,
            fin,
            ssn,
            cut: 0,
        });
        s.written += len;
        s.fin_written = fin;
        self.streams.sendable.insert(id);
        // A write is a transmission opportunity (§6.1 D Max.Burst counts per one).
        self.burst_left = self.cfg.max_burst;
    }

    /// Client: frees the stream number of workload stream `id` once its exchange ended
    /// (request acknowledged, response read), announcing it if an open waited for one.
    pub(super) fn check_exchange_done(&mut self, id: StreamId) {
        let Some(s) = self.streams.send_streams.get(&id) else {
            return;
        };
        if !s.local
            || s.complete_at.is_none()
            || !self
                .streams
                .recv_streams
                .get(&id)
                .is_some_and(|r| r.read_complete)
        {
            return;
        }
        self.streams.sids_free.insert(s.sid);
        if std::mem::take(&mut self.streams.open_refused) {
            self.events.push(StreamEvent::StreamsAvailable);
        }
    }

    pub(super) fn check_send_complete(&mut self, now: SimTime, id: StreamId) {
        if let Some(s) = self.streams.send_streams.get_mut(&id) {
            if s.complete_at.is_none()
                && s.fin_written
                && s.fin_acked
                && s.acked.covered(0, s.written) == s.written
            {
                s.complete_at = Some(now);
                self.events.push(StreamEvent::SendComplete(id));
                self.check_exchange_done(id);
            }
        }
    }

    pub(super) fn has_data_to_send(&self) -> bool {
        !self.rec.rtx.is_empty() || !self.streams.sendable.is_empty()
    }
}

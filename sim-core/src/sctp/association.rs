//! The sans-IO SCTP association ([`SctpAssociation`], RFC 9260): one end (client or
//! server) of one association over one path. Input: packets ([`SctpAssociation::handle_packet`])
//! and timeouts ([`SctpAssociation::handle_timeout`]); output: packets
//! ([`SctpAssociation::poll_transmit`]) and the next deadline
//! ([`SctpAssociation::poll_timeout`]). No I/O, no clock: time is passed in.
//!
//! What it models (rules cited where they are applied; `docs/sctp.md` lists them and
//! every deviation):
//! - the four-way handshake (§5.1): INIT, INIT-ACK with a State Cookie, COOKIE-ECHO with
//!   DATA bundled after it (the one packet allowed until COOKIE-ACK), COOKIE-ACK; T1-init
//!   and T1-cookie retransmissions with RTO backoff (Max.Init.Retransmits);
//! - multi-streaming (§6.5, §6.6): one TSN per DATA chunk association-wide, one SSN per
//!   message per stream; each `write` is a message, fragmented into DATA chunks of at most
//!   PMDCS bytes (B/E bits, §6.9), several chunks bundled in a packet up to the MTU
//!   (§6.10); the receiver delivers each stream in order and independently (a missing TSN
//!   holds back only later data of its own stream), partially as fragments arrive (§6.9
//!   partial delivery);
//! - stream numbers (§5.1.1): the client's workload streams (one request and its
//!   response each) take the stream numbers both directions have, min(OS, peer's MIS)
//!   each way, fresh ones first (stream `i` on number `i`), then the lowest number whose
//!   exchange ended (request acknowledged, response read): an SCTP stream is never
//!   closed, so an application with more requests than streams reuses them, and one with
//!   every number busy waits for one to free ([`StreamEvent::StreamsAvailable`]);
//! - SACK (§6.2, §6.7): cumulative TSN, gap ack blocks, duplicate TSNs, a_rwnd; one SACK
//!   per `sack_freq` packets with DATA or `sack_delay` after the first unacknowledged one,
//!   at once when TSNs are missing or duplicated; bundled with any packet sent;
//! - the sender (§6.1): new DATA while the flight size is below cwnd and the peer's rwnd
//!   allows it (one chunk when nothing is in flight, §6.1 A), at most Max.Burst packets
//!   per transmission opportunity; retransmissions first;
//! - RTO (§6.3): RFC 6298 smoothing through the shared [`RttEstimator`], one measurement
//!   per round trip, never from a retransmitted chunk (Karn); T3-rtx rules R1-R3; on
//!   expiry (§6.3.3) the RTO doubles (up to RTO.Max), cwnd drops to 1 MTU, every
//!   outstanding chunk is marked for retransmission;
//! - fast retransmit (§7.2.4): miss indications per the HTNA rule, a chunk marked at the
//!   third, sent at once in one packet regardless of cwnd, each chunk fast-retransmitted
//!   at most once; Fast Recovery;
//! - congestion control (§7.2): [`SctpReno`] by default, or a shared controller.

use super::sent::TsnQueue;

/// Client workload streams are numbered below this (0, 1, 2, ...); the numbers from it up
/// are the server-initiated ones of [`StreamTransport::stream_id`](crate::transport::stream::StreamTransport::stream_id)
/// (`65535 - index`, never opened).
pub(crate) const CLIENT_STREAMS: u64 = crate::config::sctp::MAX_CLIENT_STREAMS;
use crate::breakdown::{BreakdownClock, TimePart};
use crate::cc::sctp::{SackInput, SctpReno};
use crate::cc::{CcParams, CongestionController};
use crate::config::sctp::{SctpCc, SctpConfig};
use crate::time::{SimDuration, SimTime};
use crate::trace::{
    ConnectionState, LossTrigger, ProtocolPacket, RecoveryMetrics, SendTrigger, SenderProbe,
    TraceBuffer, TraceEvent,
};
use crate::transport::ranges::RangeSet;
use crate::transport::rtt::RttEstimator;
use crate::transport::stream::{CloseKind, Side, StreamEvent, StreamId};
use crate::wire::sctp::{
    data_chunk_size, sack_size, Chunk, DataChunk, InitParams, SackChunk, SctpPacket, COMMON_HEADER,
    DATA_HEADER,
};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

mod time_split;

/// The first TSN each side sends (§5.1 says random; the model starts at 1 so that a
/// cumulative ack of 0 means "nothing yet", and numbers without wrapping).
pub const INITIAL_TSN: u64 = 1;

/// Clock granularity G of RFC 9260 §6.3.1 C3 (the floor of the variance term).
pub const GRANULARITY: SimDuration = SimDuration::from_millis(1);

/// Fast retransmit threshold: the third miss indication (RFC 9260 §7.2.4).
pub const MISS_THRESHOLD: u32 = 3;

/// The association's state (RFC 9260 §4, the states the model has).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssocState {
    /// Nothing sent or received yet (a server stays here until a valid COOKIE-ECHO: it
    /// answers INIT statelessly, §5.1.3).
    Closed,
    /// Client: INIT sent.
    CookieWait,
    /// Client: COOKIE-ECHO sent.
    CookieEchoed,
    /// Established: data flows both ways.
    Established,
    /// Closed after a SHUTDOWN exchange, an association failure or by the peer.
    Ended,
}

/// Counters of one association.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SctpStats {
    /// SCTP packets sent.
    pub packets_sent: u64,
    /// Bytes sent (SCTP packets: common header + chunks).
    pub bytes_sent: u64,
    /// DATA chunks sent (first transmissions and retransmissions).
    pub data_chunks_sent: u64,
    /// DATA chunks declared lost (marked for fast retransmit or by a T3-rtx expiry).
    pub chunks_lost: u64,
    /// DATA chunks sent again.
    pub chunks_retransmitted: u64,
    /// Packets that carried at least one retransmitted DATA chunk.
    pub packets_retransmitted: u64,
    /// Stream bytes sent again.
    pub stream_bytes_retransmitted: u64,
    /// Chunks declared lost and acknowledged afterwards by a SACK covering their first
    /// transmission's TSN before the retransmission could have arrived (counted when a
    /// marked chunk is acked before it was resent).
    pub spurious_losses: u64,
    /// Fast retransmit events (entries into the marking, §7.2.4).
    pub fast_retransmits: u64,
    /// Fast Recoveries entered (§7.2.4; each one a window reduction).
    pub fast_recoveries: u64,
    /// T3-rtx expirations (§6.3.3).
    pub t3_expirations: u64,
    /// Window reductions: Fast Recoveries entered and T3-rtx expirations.
    pub congestion_events: u64,
    /// SACK chunks sent.
    pub sacks_sent: u64,
    /// Gap ack blocks sent, over all SACKs.
    pub gap_blocks_sent: u64,
    /// Duplicate TSNs received.
    pub duplicate_tsns: u64,
    /// Stream bytes received more than once.
    pub duplicate_stream_bytes: u64,
    /// Stream bytes delivered to (read by) the application.
    pub stream_bytes_read: u64,
    /// INIT / COOKIE-ECHO retransmissions.
    pub handshake_retransmits: u64,
}

/// A message queued on a stream, fragmented lazily into DATA chunks.
#[derive(Clone, Debug)]
struct Msg {
    /// Stream offset of its first byte.
    start: u64,
    len: u64,
    fin: bool,
    ssn: u64,
    /// Bytes already cut into chunks.
    cut: u64,
}

/// The sending half of one stream.
#[derive(Clone, Debug, Default)]
struct SendStream {
    /// The SCTP stream number carrying it.
    sid: u64,
    written: u64,
    msgs: VecDeque<Msg>,
    fin_written: bool,
    acked: RangeSet,
    fin_acked: bool,
    complete_at: Option<SimTime>,
    /// Whether this side opened it ([`SctpAssociation::open_stream`]).
    local: bool,
}

/// The receiving half of one stream.
#[derive(Clone, Debug, Default)]
struct RecvStream {
    /// The SCTP stream number it arrived on.
    sid: u64,
    received: RangeSet,
    /// Bytes delivered to (read by) the application, in order.
    delivered: u64,
    fin_at: Option<u64>,
    read_complete: bool,
    first_byte_at: Option<SimTime>,
    complete_at: Option<SimTime>,
}

/// A DATA chunk sent and not yet cumulatively acknowledged.
#[derive(Clone, Debug)]
struct SentChunk {
    chunk: DataChunk,
    /// Wire size (counted in the flight size and cwnd).
    size: u64,
    /// Sent (last) at.
    sent_at: SimTime,
    /// Sent more than once (Karn: no RTT sample).
    retransmitted: bool,
    /// Acknowledged by a gap ack block.
    gap_acked: bool,
    /// Counted in the flight size.
    in_flight: bool,
    /// Miss indications (§7.2.4).
    misses: u32,
    /// Fast-retransmitted once already.
    fast_retransmitted: bool,
    /// Marked for retransmission (lost) and not yet resent.
    marked: bool,
}

/// The congestion controller an association runs.
#[derive(Debug)]
enum Controller {
    Rfc(SctpReno),
    Shared(Box<dyn CongestionController>),
}

impl Controller {
    fn window(&self) -> u64 {
        match self {
            Controller::Rfc(c) => c.window(),
            Controller::Shared(c) => c.window(),
        }
    }
    fn ssthresh(&self) -> Option<u64> {
        match self {
            Controller::Rfc(c) => Some(c.ssthresh()),
            Controller::Shared(c) => c.ssthresh(),
        }
    }
    fn state_name(&self) -> &'static str {
        match self {
            Controller::Rfc(c) => c.state_name(),
            Controller::Shared(c) => c.state_name(),
        }
    }
}

/// One end of an SCTP association.
#[derive(Debug)]
pub struct SctpAssociation {
    side: Side,
    cfg: SctpConfig,
    state: AssocState,
    /// Verification tag / connection number put in the packets sent.
    vtag: u64,
    started_at: SimTime,
    handshake_at: Option<SimTime>,
    closed: Option<(SimTime, CloseKind)>,
    events: Vec<StreamEvent>,
    /// Counters.
    pub stats: SctpStats,
    /// Trace buffer (drained by the driver).
    pub trace: TraceBuffer,
    trace_state: Option<ConnectionState>,
    trace_cc_state: Option<&'static str>,
    trace_metrics: Option<RecoveryMetrics>,

    // ---- handshake -----------------------------------------------------------------------
    peer: Option<InitParams>,
    /// Negotiated outbound streams `min(our OS, peer MIS)` (§5.1.1).
    out_streams: u64,
    /// Client: the next workload stream (its [`StreamId`]: 0, 1, 2, ...).
    next_local_stream: u64,
    /// Client: stream numbers given out so far (fresh numbers go in order: 0, 1, ...).
    sids_used: u64,
    /// Client: given-out stream numbers whose exchange ended, free for the next stream.
    sids_free: BTreeSet<u64>,
    /// Client: an open was refused because every stream number was busy; the next one
    /// freed is announced with [`StreamEvent::StreamsAvailable`].
    open_refused: bool,
    /// The next SSN of each stream number (§6.5: per stream, across the workload streams
    /// it carried).
    next_ssn: BTreeMap<u64, u64>,
    send_init: bool,
    init_acks_to_send: u64,
    send_cookie_echo: bool,
    cookie_echo_resend: bool,
    cookie_echo_tsns: Vec<u64>,
    send_cookie_ack: bool,
    peer_cookie: u64,
    t1: Option<SimTime>,
    init_retransmits: u64,
    send_shutdown: bool,
    send_shutdown_ack: bool,
    send_shutdown_complete: bool,

    // ---- sender --------------------------------------------------------------------------
    next_tsn: u64,
    send_streams: BTreeMap<StreamId, SendStream>,
    /// The send streams with a queued message, in stream order: the round robin and
    /// "anything to send" walk this index instead of every stream, so the cost per DATA
    /// chunk does not grow with idle or finished streams (issue 15 item 3).
    sendable: BTreeSet<StreamId>,
    rr_cursor: Option<StreamId>,
    sent: TsnQueue<SentChunk>,
    /// TSNs marked for retransmission (lost, not yet resent), lowest first.
    rtx: BTreeSet<u64>,
    /// One packet of marked chunks may go regardless of cwnd (§7.2.4 step 3).
    fast_rtx_packet: bool,
    /// After a T3-rtx expiry: one packet of the earliest chunks goes (§6.3.3 E3), then
    /// nothing until a SACK acknowledges new data.
    t3_hold: Option<bool>,
    flight: u64,
    /// User data bytes outstanding (sent, not acknowledged): rwnd accounting (§6.2.1).
    outstanding_user: u64,
    cum_ack: u64,
    peer_rwnd: u64,
    cc: Controller,
    rtt: RttEstimator,
    rto: SimDuration,
    timed: Option<(u64, SimTime)>,
    t3: Option<SimTime>,
    error_count: u64,
    burst_left: u64,

    // ---- receiver ------------------------------------------------------------------------
    recv_cum: u64,
    recv_above: RangeSet,
    dups: Vec<u64>,
    recv_streams: BTreeMap<StreamId, RecvStream>,
    /// Bytes received and not yet delivered (occupying the receive buffer).
    held: u64,
    sack_pending: bool,
    sack_now: bool,
    packets_unacked: u64,
    sack_timer: Option<SimTime>,
    next_packet_number: u64,
    /// An emptied chunk vector for the next packet ([`SctpAssociation::recycle_packet`]).
    spare_chunks: Vec<Chunk>,
    /// Reused by every SACK (no allocation per SACK): the newly acknowledged chunks'
    /// `(sent_at, size)` and the streams they belong to.
    sack_acked: Vec<(SimTime, u64)>,
    sack_touched: Vec<StreamId>,
    /// "Where the time went" ([`crate::breakdown`]): never read by the protocol.
    breakdown: BreakdownClock,
    /// Every delivery to the application, `(stream, start, end)`, in order (tests).
    #[cfg(test)]
    pub(crate) delivery_log: Vec<(StreamId, u64, u64)>,
}

impl SctpAssociation {
    /// A new association end (not started) with `cfg`.
    pub fn new(side: Side, cfg: SctpConfig) -> Self {
        let cc = match &cfg.cc {
            SctpCc::Rfc9260 => Controller::Rfc(SctpReno::new(
                cfg.mtu,
                cfg.pmdcs(),
                cfg.initial_cwnd(),
                // §7.2.1: the initial ssthresh MAY be arbitrarily high; the peer's a_rwnd
                // replaces this when INIT / INIT-ACK arrives.
                cfg.a_rwnd,
            )),
            SctpCc::Shared(algorithm) => {
                let params = CcParams {
                    algorithm: algorithm.clone(),
                    pacing: false,
                    initial_cwnd_bytes: Some(cfg.initial_cwnd()),
                    cc_segment_size: Some(cfg.pmdcs()),
                    stream: cfg.cc_stream,
                    ..CcParams::default()
                };
                Controller::Shared(crate::cc::build(&params, cfg.pmdcs()))
            }
        };
        let rto = cfg.rto_initial;
        SctpAssociation {
            side,
            state: AssocState::Closed,
            vtag: 0,
            started_at: SimTime::ZERO,
            handshake_at: None,
            closed: None,
            events: Vec::new(),
            stats: SctpStats::default(),
            trace: TraceBuffer::default(),
            trace_state: None,
            trace_cc_state: None,
            trace_metrics: None,
            peer: None,
            out_streams: 0,
            next_local_stream: 0,
            sids_used: 0,
            sids_free: BTreeSet::new(),
            open_refused: false,
            next_ssn: BTreeMap::new(),
            send_init: false,
            init_acks_to_send: 0,
            send_cookie_echo: false,
            cookie_echo_resend: false,
            cookie_echo_tsns: Vec::new(),
            send_cookie_ack: false,
            peer_cookie: 0,
            t1: None,
            init_retransmits: 0,
            send_shutdown: false,
            send_shutdown_ack: false,
            send_shutdown_complete: false,
            next_tsn: INITIAL_TSN,
            send_streams: BTreeMap::new(),
            sendable: BTreeSet::new(),
            rr_cursor: None,
            sent: TsnQueue::new(),
            rtx: BTreeSet::new(),
            fast_rtx_packet: false,
            t3_hold: None,
            flight: 0,
            outstanding_user: 0,
            cum_ack: INITIAL_TSN - 1,
            peer_rwnd: 0,
            cc,
            rtt: RttEstimator::new(rto),
            rto,
            timed: None,
            t3: None,
            error_count: 0,
            burst_left: cfg.max_burst,
            recv_cum: INITIAL_TSN - 1,
            recv_above: RangeSet::new(),
            dups: Vec::new(),
            recv_streams: BTreeMap::new(),
            held: 0,
            sack_pending: false,
            sack_now: false,
            packets_unacked: 0,
            sack_timer: None,
            next_packet_number: 0,
            spare_chunks: Vec::new(),
            sack_acked: Vec::new(),
            sack_touched: Vec::new(),
            breakdown: BreakdownClock::new(SimTime::ZERO, TimePart::Handshake),
            #[cfg(test)]
            delivery_log: Vec::new(),
            cfg,
        }
    }

    // ----- accessors ------------------------------------------------------------------------

    /// Client or server.
    pub fn side(&self) -> Side {
        self.side
    }
    /// The configuration.
    pub fn config(&self) -> &SctpConfig {
        &self.cfg
    }
    /// The state.
    pub fn state(&self) -> AssocState {
        self.state
    }
    /// When [`SctpAssociation::start`] ran (client) or the first packet arrived (server).
    pub fn started_at(&self) -> SimTime {
        self.started_at
    }
    /// When the handshake completed (client: COOKIE-ACK; server: COOKIE-ECHO).
    pub fn handshake_at(&self) -> Option<SimTime> {
        self.handshake_at
    }
    /// When and how it closed.
    pub fn closed(&self) -> Option<(SimTime, CloseKind)> {
        self.closed
    }
    /// Sets the verification tag (the connection number of a sequence).
    pub fn set_vtag(&mut self, vtag: u64) {
        self.vtag = vtag;
    }
    /// The congestion window (bytes).
    pub fn cwnd(&self) -> u64 {
        self.cc.window()
    }
    /// The slow-start threshold (bytes; `None` while infinite for a shared controller).
    pub fn ssthresh(&self) -> Option<u64> {
        self.cc.ssthresh()
    }
    /// The flight size: bytes of DATA chunks outstanding and not marked lost.
    pub fn flight_size(&self) -> u64 {
        self.flight
    }
    /// The RTT estimator.
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    /// The current RTO (with backoff).
    pub fn rto(&self) -> SimDuration {
        self.rto
    }
    /// The T3-rtx deadline, if running.
    pub fn t3(&self) -> Option<SimTime> {
        self.t3
    }
    /// The Cumulative TSN Ack Point: every TSN up to it is acknowledged (§6.2.1).
    pub fn cumulative_tsn_ack(&self) -> u64 {
        self.cum_ack
    }
    /// In Fast Recovery (§7.2.4; RFC 9260 controller only, else `false`).
    pub fn in_fast_recovery(&self) -> bool {
        matches!(&self.cc, Controller::Rfc(c) if c.in_fast_recovery())
    }
    /// The peer's receive window as this sender tracks it (§6.2.1).
    pub fn peer_rwnd(&self) -> u64 {
        self.peer_rwnd
    }
    /// User data bytes sent and not yet acknowledged (cumulatively or by a gap block),
    /// the sender's side of the §6.2.1 rwnd accounting.
    pub fn outstanding_bytes(&self) -> u64 {
        self.outstanding_user
    }
    /// The a_rwnd this end would advertise now.
    pub fn a_rwnd(&self) -> u64 {
        self.cfg.a_rwnd.saturating_sub(self.held)
    }
    /// Negotiated outbound streams (0 before INIT / INIT-ACK).
    pub fn outbound_streams(&self) -> u64 {
        self.out_streams
    }
    /// Client: the stream numbers its workload streams may use, those both directions
    /// have: our outbound streams and the peer's, min(peer's OS, our MIS) (§5.1.1), for
    /// the server answers on the request's number (0 before the INIT-ACK).
    pub fn usable_streams(&self) -> u64 {
        let peer_out = self
            .peer
            .map_or(0, |p| p.outbound_streams.min(self.cfg.inbound_streams));
        self.out_streams.min(peer_out)
    }
    /// Bytes of stream `id` read by the application, if it exists.
    pub fn stream_read(&self, id: StreamId) -> Option<u64> {
        self.recv_streams.get(&id).map(|s| s.delivered)
    }
    /// The receive streams' first-byte and read-completion times, by stream.
    pub fn recv_stream_times(
        &self,
    ) -> impl Iterator<Item = (StreamId, Option<SimTime>, Option<SimTime>)> + '_ {
        self.recv_streams
            .iter()
            .map(|(&id, s)| (id, s.first_byte_at, s.complete_at))
    }
    /// The send streams and when each was completely acknowledged, by stream.
    pub fn send_completions(&self) -> impl Iterator<Item = (StreamId, Option<SimTime>)> + '_ {
        self.send_streams.iter().map(|(&id, s)| (id, s.complete_at))
    }
    /// Whether the association ended.
    pub fn is_closed(&self) -> bool {
        self.closed.is_some()
    }
    /// Whether events are pending.
    pub fn has_events(&self) -> bool {
        !self.events.is_empty()
    }

    /// Takes the pending events.
    pub fn take_events(&mut self) -> Vec<StreamEvent> {
        std::mem::take(&mut self.events)
    }

    // ----- the workload's API ---------------------------------------------------------------

    /// Client: sends INIT (§5.1 A).
    pub fn start(&mut self, now: SimTime) {
        self.started_at = now;
        if self.side == Side::Client && self.state == AssocState::Closed {
            self.state = AssocState::CookieWait;
            self.send_init = true;
            self.trace_connection_state(now, ConnectionState::Attempted);
        }
    }

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
            || self.next_local_stream >= CLIENT_STREAMS
        {
            return None;
        }
        let sid = if self.sids_used < self.usable_streams() {
            self.sids_used += 1;
            self.sids_used - 1
        } else if let Some(sid) = self.sids_free.pop_first() {
            sid
        } else {
            self.open_refused = true;
            return None;
        };
        let id = self.next_local_stream;
        self.next_local_stream += 1;
        self.send_streams.insert(
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
        let sid = match (self.send_streams.get(&id), self.recv_streams.get(&id)) {
            (Some(s), _) => s.sid,
            (None, Some(r)) => r.sid,
            (None, None) => return,
        };
        if sid >= self.out_streams {
            return;
        }
        let s = self.send_streams.entry(id).or_insert_with(|| SendStream {
            sid,
            ..SendStream::default()
        });
        if s.fin_written || (len == 0 && !fin) {
            return;
        }
        let next = self.next_ssn.entry(sid).or_insert(0);
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
        self.sendable.insert(id);
        // A write is a transmission opportunity (§6.1 D Max.Burst counts per one).
        self.burst_left = self.cfg.max_burst;
    }

    /// Closes gracefully: SHUTDOWN (§9.2; the model does not wait for outstanding data
    /// and does not retransmit the SHUTDOWN).
    pub fn close(&mut self, now: SimTime) {
        if self.is_closed() {
            return;
        }
        if self.state == AssocState::Established {
            self.send_shutdown = true;
        }
        self.end(now, CloseKind::LocalClose);
    }

    fn end(&mut self, now: SimTime, kind: CloseKind) {
        if self.closed.is_none() {
            self.closed = Some((now, kind));
            self.state = AssocState::Ended;
            self.events.push(StreamEvent::Closed(kind));
            self.t1 = None;
            self.t3 = None;
            self.sack_timer = None;
            self.trace_connection_state(now, ConnectionState::Closed);
        }
    }

    fn init_params(&self) -> InitParams {
        InitParams {
            initiate_tag: self.vtag,
            a_rwnd: self.a_rwnd(),
            outbound_streams: self.cfg.outbound_streams,
            inbound_streams: self.cfg.inbound_streams,
            initial_tsn: INITIAL_TSN,
            other_params: self.cfg.init_params_size,
        }
    }

    fn learn_peer(&mut self, p: InitParams) {
        self.peer = Some(p);
        // §5.1.1: the outbound streams are at most the peer's MIS.
        self.out_streams = self.cfg.outbound_streams.min(p.inbound_streams);
        self.peer_rwnd = p.a_rwnd;
        if let Controller::Rfc(c) = &mut self.cc {
            // §7.2.1: initial ssthresh = the peer's a_rwnd.
            *c = SctpReno::new(self.cfg.mtu, self.cfg.pmdcs(), c.window(), p.a_rwnd);
        }
    }

    // ----- input ----------------------------------------------------------------------------

    /// Handles one received packet of `size` bytes.
    pub fn handle_packet(&mut self, now: SimTime, pkt: &SctpPacket) {
        if self.state == AssocState::Ended {
            return;
        }
        if self.side == Side::Server && self.state == AssocState::Closed && self.peer.is_none() {
            self.started_at = now;
        }
        self.trace.push_with(now, || TraceEvent::PacketReceived {
            packet: ProtocolPacket::Sctp(pkt.clone()),
            datagram_id: pkt.number,
        });
        self.burst_left = self.cfg.max_burst;
        let had_gaps = !self.recv_above.is_empty();
        let mut data_in_packet = false;
        let mut dup_in_packet = false;
        for c in &pkt.chunks {
            match c {
                Chunk::Init(p) => {
                    // A late duplicate INIT after the handshake is ignored (the model has
                    // no association restart, §5.2).
                    if self.side == Side::Server && self.state == AssocState::Closed {
                        self.learn_peer(*p);
                        self.init_acks_to_send += 1;
                    }
                }
                Chunk::InitAck { params, cookie } => {
                    if self.state == AssocState::CookieWait {
                        self.learn_peer(*params);
                        self.peer_cookie = *cookie;
                        self.state = AssocState::CookieEchoed;
                        self.send_cookie_echo = true;
                        self.t1 = None;
                        self.init_retransmits = 0;
                        self.trace_connection_state(now, ConnectionState::HandshakeStarted);
                        // Data may now be queued: it rides in the COOKIE-ECHO packet.
                        self.events.push(StreamEvent::EarlyDataReady);
                    }
                }
                Chunk::CookieEcho { .. } => {
                    if self.side == Side::Server {
                        self.send_cookie_ack = true;
                        if self.state == AssocState::Closed {
                            self.state = AssocState::Established;
                            self.handshake_at = Some(now);
                            self.trace_connection_state(now, ConnectionState::HandshakeComplete);
                            self.events.push(StreamEvent::Connected);
                        }
                    }
                }
                Chunk::CookieAck => {
                    if self.state == AssocState::CookieEchoed {
                        self.state = AssocState::Established;
                        self.handshake_at = Some(now);
                        self.t1 = None;
                        self.cookie_echo_tsns.clear();
                        self.trace_connection_state(now, ConnectionState::HandshakeComplete);
                        self.events.push(StreamEvent::Connected);
                        // The DATA bundled with COOKIE-ECHO was covered by T1-cookie; T3
                        // takes over (§6.3.2 R1).
                        if self.sent.values().any(|s| !s.gap_acked) {
                            self.t3 = Some(now + self.rto);
                        }
                    }
                }
                Chunk::Data(d) => {
                    if self.state == AssocState::Established {
                        data_in_packet = true;
                        dup_in_packet |= self.receive_data(now, d);
                    }
                }
                Chunk::Sack(s) => {
                    if self.state == AssocState::Established {
                        self.receive_sack(now, s);
                    }
                }
                Chunk::Shutdown { cum_tsn } => {
                    // RFC 9260 §9.2: the SHUTDOWN's Cumulative TSN Ack acknowledges the
                    // data it covers, processed as a SACK without gap blocks whose a_rwnd
                    // leaves the peer's window as it is (as Linux does,
                    // SCTP_CMD_PROCESS_CTSN). Without it a client that closes as soon as
                    // it read everything left the server's last chunks unacknowledged
                    // and its streams never completed (issue 28 item 15).
                    if self.state == AssocState::Established {
                        let sack = SackChunk {
                            cum_tsn: *cum_tsn,
                            a_rwnd: self.peer_rwnd + self.outstanding_user,
                            gaps: Vec::new(),
                            dups: Vec::new(),
                        };
                        self.receive_sack(now, &sack);
                    }
                    self.send_shutdown_ack = true;
                    self.end(now, CloseKind::PeerClose);
                    return;
                }
                Chunk::ShutdownAck => {
                    self.send_shutdown_complete = true;
                }
                Chunk::ShutdownComplete => {}
            }
        }
        if data_in_packet {
            // §6.2: a SACK every `sack_freq` packets with DATA, within `sack_delay`;
            // §6.7: at once on a gap or duplicates (and while gaps are being filled).
            self.sack_pending = true;
            self.packets_unacked += 1;
            let gaps = !self.recv_above.is_empty();
            if dup_in_packet || gaps || had_gaps || self.packets_unacked >= self.cfg.sack_freq {
                self.sack_now = true;
            } else if self.sack_timer.is_none() {
                self.sack_timer = Some(now + self.cfg.sack_delay);
            }
        }
        self.trace_metrics(now);
    }

    /// One DATA chunk; returns whether it was a duplicate.
    fn receive_data(&mut self, now: SimTime, d: &DataChunk) -> bool {
        if d.tsn <= self.recv_cum || self.recv_above.contains(d.tsn) {
            self.dups.push(d.tsn);
            self.stats.duplicate_tsns += 1;
            self.stats.duplicate_stream_bytes += d.len;
            return true;
        }
        self.recv_above.insert(d.tsn, d.tsn + 1);
        if let Some((s, e)) = self.recv_above.first() {
            if s == self.recv_cum + 1 {
                self.recv_cum = e - 1;
                self.recv_above.remove(s, e);
            }
        }
        let is_new = !self.recv_streams.contains_key(&d.stream);
        let rs = self
            .recv_streams
            .entry(d.stream)
            .or_insert_with(|| RecvStream {
                sid: d.sid,
                ..RecvStream::default()
            });
        if is_new && !self.send_streams.get(&d.stream).is_some_and(|s| s.local) {
            self.events.push(StreamEvent::StreamOpened(d.stream));
        }
        let new = rs.received.insert(d.offset, d.offset + d.len);
        self.stats.duplicate_stream_bytes += d.len - new;
        self.held += new;
        if d.fin && d.end {
            rs.fin_at = Some(d.offset + d.len);
        }
        // Deliver the stream's in-order prefix (immediate reader).
        let end = if rs.received.is_empty() {
            rs.delivered
        } else {
            rs.received.contiguous_end(rs.delivered).max(rs.delivered)
        };
        if end > rs.delivered {
            if rs.first_byte_at.is_none() {
                rs.first_byte_at = Some(now);
            }
            let n = end - rs.delivered;
            #[cfg(test)]
            self.delivery_log.push((d.stream, rs.delivered, end));
            let (stream, offset) = (d.stream, rs.delivered);
            self.trace.push_with(now, || {
                TraceEvent::SenderProbe(SenderProbe::StreamDelivered {
                    stream,
                    offset,
                    len: n,
                })
            });
            rs.delivered = end;
            self.held -= n;
            self.stats.stream_bytes_read += n;
        }
        if !rs.read_complete && rs.fin_at == Some(rs.delivered) {
            rs.read_complete = true;
            rs.complete_at = Some(now);
            self.events.push(StreamEvent::ReadComplete(d.stream));
            self.check_exchange_done(d.stream);
        }
        false
    }

    /// Client: frees the stream number of workload stream `id` once its exchange ended
    /// (request acknowledged, response read), announcing it if an open waited for one.
    fn check_exchange_done(&mut self, id: StreamId) {
        let Some(s) = self.send_streams.get(&id) else {
            return;
        };
        if !s.local
            || s.complete_at.is_none()
            || !self.recv_streams.get(&id).is_some_and(|r| r.read_complete)
        {
            return;
        }
        self.sids_free.insert(s.sid);
        if std::mem::take(&mut self.open_refused) {
            self.events.push(StreamEvent::StreamsAvailable);
        }
    }

    fn receive_sack(&mut self, now: SimTime, s: &SackChunk) {
        // §6.2.1 D i: a SACK older than the cumulative point is dropped.
        if s.cum_tsn < self.cum_ack || s.cum_tsn >= self.next_tsn {
            return;
        }
        let flight_before = self.flight;
        let cum_advanced = s.cum_tsn > self.cum_ack;
        let mut bytes_acked = 0;
        let mut highest_newly_acked = None;
        let mut newly_acked = std::mem::take(&mut self.sack_acked);
        newly_acked.clear();
        let mut rtt_sample = None;
        let mut touched = std::mem::take(&mut self.sack_touched);
        touched.clear();
        // Cumulatively acknowledged chunks leave the sent map.
        while let Some((tsn, c)) = self.sent.pop_upto(s.cum_tsn) {
            self.trace.push_with(now, || {
                TraceEvent::SenderProbe(SenderProbe::ChunkAcked {
                    tsn,
                    cumulative: true,
                })
            });
            if !c.gap_acked {
                self.outstanding_user -= c.chunk.len;
                self.newly_acked(now, &c, tsn, &mut bytes_acked, &mut rtt_sample);
                highest_newly_acked = Some(tsn);
                newly_acked.push((c.sent_at, c.size));
            }
            if c.in_flight {
                self.flight -= c.size;
            }
            if c.marked {
                self.rtx.remove(&tsn);
                self.stats.spurious_losses += 1;
            }
            self.mark_stream_acked(&c.chunk);
            touched.push(c.chunk.stream);
        }
        self.cum_ack = s.cum_tsn;
        // Gap ack blocks.
        for &(gs, ge) in &s.gaps {
            for tsn in self.sent.tsns_in(gs, ge.saturating_add(1)) {
                let c = self.sent.get(tsn).expect("listed");
                if c.gap_acked {
                    continue;
                }
                let c = c.clone();
                self.trace.push_with(now, || {
                    TraceEvent::SenderProbe(SenderProbe::ChunkAcked {
                        tsn,
                        cumulative: false,
                    })
                });
                self.newly_acked(now, &c, tsn, &mut bytes_acked, &mut rtt_sample);
                highest_newly_acked = Some(highest_newly_acked.map_or(tsn, |h: u64| h.max(tsn)));
                newly_acked.push((c.sent_at, c.size));
                self.outstanding_user -= c.chunk.len;
                let e = self.sent.get_mut(tsn).expect("listed");
                e.gap_acked = true;
                if e.in_flight {
                    e.in_flight = false;
                    self.flight -= e.size;
                }
                if e.marked {
                    e.marked = false;
                    self.rtx.remove(&tsn);
                    self.stats.spurious_losses += 1;
                }
                self.mark_stream_acked(&c.chunk);
                touched.push(c.chunk.stream);
            }
        }
        if let Some(r) = rtt_sample {
            self.rtt.update(now, r, SimDuration::ZERO, None);
            self.rto = self.computed_rto();
        }
        if bytes_acked > 0 {
            self.error_count = 0;
            self.t3_hold = None;
        }
        // §7.2.4 miss indications (HTNA): TSNs missing below the highest newly acked one;
        // in Fast Recovery, when the cumulative point advanced, every missing TSN below
        // the highest TSN the SACK reports.
        let in_fr = matches!(&self.cc, Controller::Rfc(c) if c.in_fast_recovery());
        let highest_reported = s.gaps.last().map_or(s.cum_tsn, |g| g.1);
        let limit = if in_fr && cum_advanced {
            Some(highest_reported)
        } else {
            highest_newly_acked.filter(|&h| h > s.cum_tsn)
        };
        let mut newly_marked = Vec::new();
        if let Some(limit) = limit {
            for (tsn, c) in self.sent.range_mut(0, limit) {
                if c.gap_acked || c.marked {
                    continue;
                }
                c.misses += 1;
                if c.misses >= MISS_THRESHOLD && !c.fast_retransmitted {
                    c.fast_retransmitted = true;
                    c.marked = true;
                    newly_marked.push(tsn);
                }
            }
        }
        if !newly_marked.is_empty() {
            let mut newest_sent = SimTime::ZERO;
            for &tsn in &newly_marked {
                let c = self.sent.get_mut(tsn).expect("listed");
                if c.in_flight {
                    c.in_flight = false;
                    self.flight -= c.size;
                }
                newest_sent = newest_sent.max(c.sent_at);
                self.rtx.insert(tsn);
                self.stats.chunks_lost += 1;
                if self.timed.is_some_and(|(t, _)| t == tsn) {
                    self.timed = None;
                }
                let pkt = self.lost_packet(tsn);
                self.trace.push_with(now, || TraceEvent::PacketLost {
                    packet: pkt,
                    trigger: LossTrigger::ReorderingThreshold,
                });
                self.trace.push_with(now, || {
                    TraceEvent::SenderProbe(SenderProbe::ChunkLost { tsn })
                });
            }
            self.stats.fast_retransmits += 1;
            let highest_marked = *newly_marked.last().expect("not empty");
            let was_in_fr = match &self.cc {
                Controller::Rfc(c) => c.in_fast_recovery(),
                Controller::Shared(c) => c.recovering(),
            };
            let reduced = match &mut self.cc {
                // §7.2.4 step 2; a TSN above the exit point marked in Fast Recovery
                // reduces when it ends (`SctpReno::on_fast_retransmit`).
                Controller::Rfc(c) => c.on_fast_retransmit(self.next_tsn - 1, highest_marked),
                Controller::Shared(c) => {
                    let was = c.window();
                    c.on_congestion_event(now, newest_sent, self.flight);
                    c.window() != was || c.recovering()
                }
            };
            if reduced {
                self.stats.congestion_events += 1;
                self.stats.fast_recoveries += 1;
            }
            // §7.2.4 step 3: "If not in Fast Recovery", one packet of the earliest marked
            // chunks goes regardless of cwnd; chunks marked in Fast Recovery go when cwnd
            // allows (step 5).
            if !was_in_fr {
                self.fast_rtx_packet = true;
            }
        }
        if self.rtx.is_empty() {
            self.fast_rtx_packet = false;
        }
        // §6.2.1: rwnd = a_rwnd - bytes still outstanding.
        self.peer_rwnd = s.a_rwnd.saturating_sub(self.outstanding_user);
        let fully_utilized = flight_before >= self.cc.window();
        match &mut self.cc {
            Controller::Rfc(c) => {
                let reduced = c.on_sack(SackInput {
                    bytes_acked,
                    cum_advanced,
                    cum_tsn: s.cum_tsn,
                    flight_before,
                    flight_after: self.flight,
                    highest_outstanding: self.next_tsn - 1,
                });
                if reduced {
                    // The next window's loss, due since it was marked in the Fast
                    // Recovery that just ended: a new one begins.
                    self.stats.congestion_events += 1;
                    self.stats.fast_recoveries += 1;
                }
            }
            Controller::Shared(c) => {
                let snap = self.rtt.snapshot();
                for &(sent_at, size) in &newly_acked {
                    c.on_packet_acked(now, sent_at, size, !fully_utilized, &snap);
                }
            }
        }
        // §6.3.2 R2 / R3.
        if self.sent.values().all(|c| c.gap_acked) {
            self.t3 = None;
        } else if cum_advanced {
            self.t3 = Some(now + self.rto);
        }
        // Each stream once, in ascending order (as the set it replaces visited them).
        touched.sort_unstable();
        touched.dedup();
        for &id in &touched {
            self.check_send_complete(now, id);
        }
        self.sack_acked = newly_acked;
        self.sack_touched = touched;
    }

    /// Counts a newly acknowledged chunk; takes the RTT sample if it was the timed one
    /// and was never retransmitted (§6.3.1 C4, C5: Karn).
    fn newly_acked(
        &mut self,
        now: SimTime,
        c: &SentChunk,
        tsn: u64,
        bytes: &mut u64,
        sample: &mut Option<SimDuration>,
    ) {
        *bytes += c.size;
        if let Some((t, at)) = self.timed {
            if t == tsn {
                self.timed = None;
                if !c.retransmitted {
                    *sample = Some(now.saturating_since(at));
                }
            }
        }
    }

    fn mark_stream_acked(&mut self, d: &DataChunk) {
        if let Some(s) = self.send_streams.get_mut(&d.stream) {
            s.acked.insert(d.offset, d.offset + d.len);
            if d.fin && d.end {
                s.fin_acked = true;
            }
        }
    }

    fn check_send_complete(&mut self, now: SimTime, id: StreamId) {
        if let Some(s) = self.send_streams.get_mut(&id) {
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

    /// RFC 9260 §6.3.1 C2/C3: `RTO = SRTT + max(4 RTTVAR, G)`, clamped to
    /// `[RTO.Min, RTO.Max]`.
    fn computed_rto(&self) -> SimDuration {
        self.rtt
            .pto_base(GRANULARITY)
            .max(self.cfg.rto_min)
            .min(self.cfg.rto_max)
    }

    // ----- timers ---------------------------------------------------------------------------

    /// The earliest deadline.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        if self.is_closed() {
            return None;
        }
        [self.t1, self.t3, self.sack_timer]
            .into_iter()
            .flatten()
            .min()
    }

    /// A deadline came.
    pub fn handle_timeout(&mut self, now: SimTime) {
        self.burst_left = self.cfg.max_burst;
        if self.sack_timer.is_some_and(|t| t <= now) {
            self.sack_timer = None;
            if self.sack_pending {
                self.sack_now = true;
            }
        }
        if self.t1.is_some_and(|t| t <= now) {
            self.t1 = None;
            self.init_retransmits += 1;
            if self.init_retransmits > self.cfg.max_init_retransmits {
                self.end(now, CloseKind::IdleTimeout);
                return;
            }
            // §5.1 C / §6.3.3: the T1 timer backs off like the RTO.
            self.rto = (self.rto.saturating_mul(2)).min(self.cfg.rto_max);
            self.stats.handshake_retransmits += 1;
            match self.state {
                AssocState::CookieWait => self.send_init = true,
                AssocState::CookieEchoed => {
                    self.send_cookie_echo = true;
                    self.cookie_echo_resend = true;
                }
                _ => {}
            }
        }
        if self.t3.is_some_and(|t| t <= now) {
            self.t3 = None;
            self.on_t3_expiry(now);
        }
        self.trace_metrics(now);
    }

    /// §6.3.3: E1 window, E2 backoff, E3 everything outstanding marked for
    /// retransmission (sent as cwnd allows: one packet at 1 MTU).
    fn on_t3_expiry(&mut self, now: SimTime) {
        self.stats.t3_expirations += 1;
        self.error_count += 1;
        if self.error_count > self.cfg.association_max_retrans {
            self.end(now, CloseKind::IdleTimeout);
            return;
        }
        match &mut self.cc {
            Controller::Rfc(c) => c.on_timeout(),
            Controller::Shared(c) => {
                c.on_congestion_event(now, now, 0);
                c.on_persistent_congestion(now);
            }
        }
        self.stats.congestion_events += 1;
        self.rto = (self.rto.saturating_mul(2)).min(self.cfg.rto_max);
        self.timed = None;
        self.t3_hold = Some(true);
        let tsns: Vec<u64> = self
            .sent
            .iter()
            .filter(|(_, c)| !c.gap_acked && !c.marked)
            .map(|(t, _)| t)
            .collect();
        for tsn in tsns {
            let c = self.sent.get_mut(tsn).expect("listed");
            c.marked = true;
            c.misses = 0;
            if c.in_flight {
                c.in_flight = false;
                self.flight -= c.size;
            }
            self.rtx.insert(tsn);
            self.stats.chunks_lost += 1;
            let pkt = self.lost_packet(tsn);
            self.trace.push_with(now, || TraceEvent::PacketLost {
                packet: pkt,
                trigger: LossTrigger::PtoExpired,
            });
            self.trace.push_with(now, || {
                TraceEvent::SenderProbe(SenderProbe::ChunkLost { tsn })
            });
        }
    }

    // ----- output ---------------------------------------------------------------------------

    /// The next packet to send now, if any.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<SctpPacket> {
        // The spare vector (issue 14: no allocation per packet); every path that sends
        // nothing puts it back.
        let mut chunks: Vec<Chunk> = std::mem::take(&mut self.spare_chunks);
        chunks.clear();
        let mut room = self.cfg.max_packet() - COMMON_HEADER;
        let mut trigger = None;
        // Shutdown chunks end the association's traffic.
        if self.send_shutdown {
            self.send_shutdown = false;
            chunks.push(Chunk::Shutdown {
                cum_tsn: self.recv_cum,
            });
            return Some(self.finish_packet(now, chunks, None));
        }
        if self.send_shutdown_ack {
            self.send_shutdown_ack = false;
            return Some(self.finish_packet(now, vec![Chunk::ShutdownAck], None));
        }
        if self.send_shutdown_complete {
            self.send_shutdown_complete = false;
            return Some(self.finish_packet(now, vec![Chunk::ShutdownComplete], None));
        }
        if self.is_closed() {
            self.spare_chunks = chunks;
            return None;
        }
        // Handshake.
        if self.send_init {
            self.send_init = false;
            self.t1 = Some(now + self.rto);
            let c = Chunk::Init(self.init_params());
            return Some(self.finish_packet(now, vec![c], None));
        }
        if self.init_acks_to_send > 0 {
            self.init_acks_to_send -= 1;
            let c = Chunk::InitAck {
                params: self.init_params(),
                cookie: self.cfg.cookie_size,
            };
            return Some(self.finish_packet(now, vec![c], None));
        }
        if self.state == AssocState::CookieEchoed {
            if !self.send_cookie_echo {
                self.spare_chunks = chunks;
                return None; // §5.1: nothing else until COOKIE-ACK
            }
            self.send_cookie_echo = false;
            self.t1 = Some(now + self.rto);
            let echo = Chunk::CookieEcho {
                cookie: self.peer_cookie,
            };
            room -= echo.wire_size();
            chunks.push(echo);
            if self.cookie_echo_resend {
                self.cookie_echo_resend = false;
                for tsn in self.cookie_echo_tsns.clone() {
                    if let Some(c) = self.sent.get_mut(tsn) {
                        c.retransmitted = true;
                        c.sent_at = now;
                        self.stats.chunks_retransmitted += 1;
                        self.stats.stream_bytes_retransmitted += c.chunk.len;
                        chunks.push(Chunk::Data(c.chunk));
                    }
                }
                if self
                    .timed
                    .is_some_and(|(t, _)| self.cookie_echo_tsns.contains(&t))
                {
                    self.timed = None;
                }
                trigger = Some(SendTrigger::RetransmitCrypto);
            } else {
                // §5.1 D: DATA bundled after the COOKIE-ECHO, as the window allows.
                while self.flight < self.cc.window() {
                    let Some(d) = self.next_new_chunk(room, now) else {
                        break;
                    };
                    room -= data_chunk_size(d.wire_len());
                    self.cookie_echo_tsns.push(d.tsn);
                    chunks.push(Chunk::Data(d));
                }
            }
            return Some(self.finish_packet(now, chunks, trigger));
        }
        if self.send_cookie_ack {
            self.send_cookie_ack = false;
            chunks.push(Chunk::CookieAck);
            room -= 4;
        }
        if self.state != AssocState::Established {
            if chunks.is_empty() {
                self.spare_chunks = chunks;
                return None;
            }
            return Some(self.finish_packet(now, chunks, None));
        }
        // A SACK goes first when due, and rides along with anything else sent.
        let data_possible = self.has_data_to_send();
        if self.sack_now || (self.sack_pending && (data_possible || !chunks.is_empty())) {
            let sack = self.build_sack(room);
            room -= sack.wire_size();
            chunks.push(sack);
        }
        // Retransmissions first (§6.1 C, §7.2.4 step 3), then new data (§6.1 B).
        let mut any_rtx = false;
        let mut first_outstanding_resent = false;
        let t3_packet = self.t3_hold == Some(true);
        let ignore_cwnd = (self.fast_rtx_packet || t3_packet) && !self.rtx.is_empty();
        if self.t3_hold == Some(false) {
            // §6.3.3 E3: the one packet is out; wait for a SACK.
        } else if ignore_cwnd || self.flight < self.cc.window() {
            let tsns: Vec<u64> = self.rtx.iter().copied().collect();
            for tsn in tsns {
                let c = self.sent.get(tsn).expect("marked chunk is outstanding");
                if c.size > room || (!ignore_cwnd && self.flight >= self.cc.window()) {
                    break;
                }
                room -= c.size;
                // The first outstanding TSN is the one after the cumulative point.
                first_outstanding_resent |= tsn == self.cum_ack + 1;
                let c = self.sent.get_mut(tsn).expect("listed");
                c.marked = false;
                c.retransmitted = true;
                c.in_flight = true;
                c.misses = 0;
                c.sent_at = now;
                self.flight += c.size;
                self.rtx.remove(&tsn);
                self.stats.chunks_retransmitted += 1;
                self.stats.stream_bytes_retransmitted += c.chunk.len;
                // §6.3.1 C5 (Karn) and its implementation note: no measurement from a
                // TSN r once a TSN <= r was retransmitted after r was sent.
                if self.timed.is_some_and(|(t, _)| tsn <= t) {
                    self.timed = None;
                }
                let size = c.size;
                chunks.push(Chunk::Data(c.chunk));
                any_rtx = true;
                if let Controller::Shared(cc) = &mut self.cc {
                    cc.on_packet_sent(now, size, self.flight);
                }
            }
            if any_rtx {
                self.fast_rtx_packet = false;
                if t3_packet {
                    self.t3_hold = Some(false);
                }
                trigger = Some(if self.t3_hold.is_none() {
                    SendTrigger::RetransmitReordered
                } else {
                    SendTrigger::RetransmitTimeout
                });
            }
        }
        if self.rtx.is_empty() && self.burst_left > 0 && self.t3_hold.is_none() {
            let mut new_data = false;
            while self.flight < self.cc.window() {
                let Some(d) = self.next_new_chunk(room, now) else {
                    break;
                };
                room -= data_chunk_size(d.wire_len());
                chunks.push(Chunk::Data(d));
                new_data = true;
            }
            if new_data {
                self.burst_left -= 1;
            }
        }
        if chunks.is_empty() {
            self.spare_chunks = chunks;
            return None;
        }
        if any_rtx {
            self.stats.packets_retransmitted += 1;
        }
        // §6.3.2 R1: started if not running; §7.2.4 step 4: restarted when the first
        // outstanding DATA chunk is retransmitted.
        let has_data = chunks.iter().any(|c| matches!(c, Chunk::Data(_)));
        if (has_data && self.t3.is_none()) || first_outstanding_resent {
            self.t3 = Some(now + self.rto);
        }
        let pkt = self.finish_packet(now, chunks, trigger);
        self.probe_window(now);
        Some(pkt)
    }

    fn has_data_to_send(&self) -> bool {
        !self.rtx.is_empty() || !self.sendable.is_empty()
    }

    /// The stream the round robin serves next: the first stream with a queued message
    /// after the last one served, else the first one (the order of a walk over every
    /// stream in ID order, over the index of the sendable ones only).
    fn next_sendable(&self) -> Option<StreamId> {
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

    /// Cuts the next new DATA chunk (round robin over the streams with queued messages)
    /// if it fits `room` and the peer's rwnd (§6.1 A), and records it as sent.
    fn next_new_chunk(&mut self, room: u64, now: SimTime) -> Option<DataChunk> {
        let pmdcs = self.cfg.pmdcs();
        let id = self.next_sendable()?;
        let s = self.send_streams.get(&id).expect("found");
        let m = s.msgs.front().expect("ready");
        let len = (m.len - m.cut).min(pmdcs);
        let wire_len = len.max(1);
        if DATA_HEADER + wire_len > room {
            return None;
        }
        // §6.1 A: within the peer's rwnd, or one chunk when nothing is outstanding (the
        // zero window probe).
        if len > self.peer_rwnd && !self.sent.is_empty() {
            return None;
        }
        let s = self.send_streams.get_mut(&id).expect("found");
        let m = s.msgs.front_mut().expect("ready");
        let d = DataChunk {
            tsn: self.next_tsn,
            stream: id,
            sid: s.sid,
            ssn: m.ssn,
            offset: m.start + m.cut,
            len,
            begin: m.cut == 0,
            end: m.cut + len == m.len,
            fin: m.fin,
        };
        m.cut += len;
        if m.cut == m.len {
            s.msgs.pop_front();
            if s.msgs.is_empty() {
                self.sendable.remove(&id);
            }
        }
        self.rr_cursor = Some(id);
        self.next_tsn += 1;
        let size = data_chunk_size(wire_len);
        self.flight += size;
        self.outstanding_user += len;
        self.peer_rwnd = self.peer_rwnd.saturating_sub(len);
        if self.timed.is_none() {
            self.timed = Some((d.tsn, now));
        }
        self.sent.push(
            d.tsn,
            SentChunk {
                chunk: d,
                size,
                sent_at: now,
                retransmitted: false,
                gap_acked: false,
                in_flight: true,
                misses: 0,
                fast_retransmitted: false,
                marked: false,
            },
        );
        if let Controller::Shared(cc) = &mut self.cc {
            cc.on_packet_sent(now, size, self.flight);
        }
        Some(d)
    }

    /// The SACK describing what was received (gap blocks as fit `room`, lowest first).
    fn build_sack(&mut self, room: u64) -> Chunk {
        let dups = std::mem::take(&mut self.dups);
        let max_gaps = room.saturating_sub(sack_size(0, dups.len() as u64)) / 4;
        let gaps: Vec<(u64, u64)> = self
            .recv_above
            .iter()
            .take(max_gaps as usize)
            .map(|(s, e)| (s, e - 1))
            .collect();
        self.stats.sacks_sent += 1;
        self.stats.gap_blocks_sent += gaps.len() as u64;
        self.sack_pending = false;
        self.sack_now = false;
        self.packets_unacked = 0;
        self.sack_timer = None;
        Chunk::Sack(SackChunk {
            cum_tsn: self.recv_cum,
            a_rwnd: self.a_rwnd(),
            gaps,
            dups,
        })
    }

    /// `pkt` was just put in a recycled box whose old content was `old`: keeps `old`'s
    /// chunk vector (emptied) for the next packet, so that steady state allocates none.
    /// Only capacity moves: `pkt` keeps its chunks.
    pub fn recycle_packet(&mut self, pkt: &mut SctpPacket, old: SctpPacket) {
        let mut chunks = old.chunks;
        chunks.clear();
        if self.spare_chunks.capacity() < chunks.capacity() {
            self.spare_chunks = chunks;
        }
        let _ = pkt;
    }

    fn finish_packet(
        &mut self,
        now: SimTime,
        chunks: Vec<Chunk>,
        trigger: Option<SendTrigger>,
    ) -> SctpPacket {
        let pkt = SctpPacket {
            vtag: self.vtag,
            number: self.next_packet_number,
            chunks,
        };
        self.next_packet_number += 1;
        self.stats.packets_sent += 1;
        self.stats.bytes_sent += pkt.size();
        self.stats.data_chunks_sent += pkt.data().count() as u64;
        self.trace.push_with(now, || TraceEvent::PacketSent {
            packet: ProtocolPacket::Sctp(pkt.clone()),
            datagram_id: pkt.number,
            trigger,
        });
        if self.trace.is_on() {
            let packet_size = pkt.size();
            for d in pkt.data() {
                let c = self.sent.get(d.tsn).expect("a sent chunk is outstanding");
                let p = SenderProbe::ChunkSent {
                    tsn: d.tsn,
                    stream: d.stream,
                    len: d.len,
                    size: c.size,
                    packet_size,
                    retransmission: c.retransmitted,
                };
                self.trace.push(now, TraceEvent::SenderProbe(p));
            }
        }
        pkt
    }

    /// The checkers' window probe: cwnd, the floor the controller keeps (RFC 9260 §7.2.3
    /// and §6.3.3: 1 MTU after a T3-rtx expiry; a shared controller's own minimum), the
    /// flight size and the path MTU.
    fn probe_window(&mut self, now: SimTime) {
        if !self.trace.is_on() {
            return;
        }
        let minimum = match &self.cc {
            Controller::Rfc(_) => self.cfg.mtu,
            Controller::Shared(c) => c.minimum_window(),
        };
        let p = SenderProbe::Window {
            cwnd: self.cc.window(),
            minimum,
            bytes_in_flight: self.flight,
            smss: self.cfg.mtu,
        };
        self.trace.push(now, TraceEvent::SenderProbe(p));
    }

    // ----- tracing --------------------------------------------------------------------------

    fn lost_packet(&self, tsn: u64) -> ProtocolPacket {
        let c = self.sent.get(tsn).expect("outstanding");
        ProtocolPacket::Sctp(SctpPacket {
            vtag: self.vtag,
            number: tsn,
            chunks: vec![Chunk::Data(c.chunk)],
        })
    }

    fn trace_connection_state(&mut self, now: SimTime, new: ConnectionState) {
        if self.trace.is_on() && self.trace_state != Some(new) {
            let old = self.trace_state;
            self.trace
                .push(now, TraceEvent::ConnectionStateUpdated { old, new });
        }
        self.trace_state = Some(new);
    }

    fn trace_metrics(&mut self, now: SimTime) {
        if !self.trace.is_on() {
            return;
        }
        self.probe_window(now);
        let m = RecoveryMetrics {
            min_rtt: self.rtt.has_sample().then(|| self.rtt.min_rtt()),
            smoothed_rtt: Some(self.rtt.smoothed_rtt()),
            latest_rtt: self.rtt.has_sample().then(|| self.rtt.latest_rtt()),
            rtt_variance: Some(self.rtt.rttvar()),
            pto_count: Some(self.error_count as u32),
            congestion_window: Some(self.cc.window()),
            bytes_in_flight: Some(self.flight),
            ssthresh: self.cc.ssthresh(),
            packets_in_flight: Some(self.sent.values().filter(|c| c.in_flight).count() as u64),
            pacing_rate: None,
        };
        let d = RecoveryMetrics::changes(self.trace_metrics.as_ref(), &m);
        if !d.is_empty() {
            self.trace.push(now, TraceEvent::MetricsUpdated(d));
        }
        self.trace_metrics = Some(m);
        let st = self.cc.state_name();
        if self.trace_cc_state != Some(st) {
            let old = self.trace_cc_state;
            self.trace.push(
                now,
                TraceEvent::CongestionStateUpdated {
                    old,
                    new: st,
                    trigger: None,
                },
            );
            self.trace_cc_state = Some(st);
        }
    }
}

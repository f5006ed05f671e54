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
//!
//! The state is split by owner, one file each under `sctp/association/`
//! (`docs/architecture.md`): `state.rs` ([`AssocState`], the T3-rtx hold), `handshake.rs`
//! (the handshake and shutdown chunks, T1), `streams.rs` (the workload streams and stream
//! numbers), `receiver.rs` (TSNs received, the SACK), `recovery.rs` (what is outstanding,
//! SACK processing, fast retransmit, T3-rtx, the RTO), `sender.rs` (the next packet),
//! `timers.rs` (the timer table), `time_split.rs` ("where the time went").

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

mod handshake;
mod receiver;
mod recovery;
mod sender;
mod state;
mod streams;
mod time_split;
mod timers;

use recovery::{Controller, Recovery, SentChunk};

use handshake::Handshake;
use receiver::Receiver;
pub use state::AssocState;
use state::T3Hold;
use streams::{RecvStream, Streams};

/// The first TSN each side sends (§5.1 says random; the model starts at 1 so that a
/// cumulative ack of 0 means "nothing yet", and numbers without wrapping).
pub const INITIAL_TSN: u64 = 1;

/// Clock granularity G of RFC 9260 §6.3.1 C3 (the floor of the variance term).
pub const GRANULARITY: SimDuration = SimDuration::from_millis(1);

/// Fast retransmit threshold: the third miss indication (RFC 9260 §7.2.4).
pub const MISS_THRESHOLD: u32 = 3;

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
    /// The RTO last traced ([`TraceEvent::RtoUpdated`]).
    trace_rto: Option<SimDuration>,

    /// The handshake and shutdown chunks owed, T1 (`association/handshake.rs`).
    hs: Handshake,
    /// The workload streams and their stream numbers (`association/streams.rs`).
    streams: Streams,

    // ---- sender --------------------------------------------------------------------------
    /// What is outstanding, T3-rtx and the RTO (`association/recovery.rs`).
    rec: Recovery,
    next_tsn: u64,
    peer_rwnd: u64,
    cc: Controller,
    rtt: RttEstimator,
    burst_left: u64,

    // ---- receiver ------------------------------------------------------------------------
    /// TSNs received, SACK generation (`association/receiver.rs`).
    rx: Receiver,
    next_packet_number: u64,
    /// An emptied chunk vector for the next packet ([`SctpAssociation::recycle_packet`]).
    spare_chunks: Vec<Chunk>,
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
            trace_rto: None,
            hs: Handshake::default(),
            streams: Streams::default(),
            next_tsn: INITIAL_TSN,
            rec: Recovery::new(rto),
            peer_rwnd: 0,
            cc,
            rtt: RttEstimator::new(rto),
            burst_left: cfg.max_burst,
            rx: Receiver::new(),
            next_packet_number: 0,
            spare_chunks: Vec::new(),
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
        self.rec.flight
    }
    /// The RTT estimator.
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    /// The current RTO (with backoff).
    pub fn rto(&self) -> SimDuration {
        self.rec.rto
    }
    /// The T3-rtx deadline, if running.
    pub fn t3(&self) -> Option<SimTime> {
        self.rec.t3
    }
    /// The Cumulative TSN Ack Point: every TSN up to it is acknowledged (§6.2.1).
    pub fn cumulative_tsn_ack(&self) -> u64 {
        self.rec.cum_ack
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
        self.rec.outstanding_user
    }
    /// The a_rwnd this end would advertise now.
    pub fn a_rwnd(&self) -> u64 {
        self.cfg.a_rwnd.saturating_sub(self.rx.held)
    }
    /// Negotiated outbound streams (0 before INIT / INIT-ACK).
    pub fn outbound_streams(&self) -> u64 {
        self.streams.out_streams
    }
    /// Client: the stream numbers its workload streams may use, those both directions
    /// have: our outbound streams and the peer's, min(peer's OS, our MIS) (§5.1.1), for
    /// the server answers on the request's number (0 before the INIT-ACK).
    pub fn usable_streams(&self) -> u64 {
        let peer_out = self
            .hs
            .peer
            .map_or(0, |p| p.outbound_streams.min(self.cfg.inbound_streams));
        self.streams.out_streams.min(peer_out)
    }
    /// Bytes of stream `id` read by the application, if it exists.
    pub fn stream_read(&self, id: StreamId) -> Option<u64> {
        self.streams.recv_streams.get(&id).map(|s| s.delivered)
    }
    /// The receive streams' first-byte and read-completion times, by stream.
    pub fn recv_stream_times(
        &self,
    ) -> impl Iterator<Item = (StreamId, Option<SimTime>, Option<SimTime>)> + '_ {
        self.streams
            .recv_streams
            .iter()
            .map(|(&id, s)| (id, s.first_byte_at, s.complete_at))
    }
    /// The send streams and when each was completely acknowledged, by stream.
    pub fn send_completions(&self) -> impl Iterator<Item = (StreamId, Option<SimTime>)> + '_ {
        self.streams
            .send_streams
            .iter()
            .map(|(&id, s)| (id, s.complete_at))
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

    /// Closes gracefully: SHUTDOWN (§9.2; the model does not wait for outstanding data
    /// and does not retransmit the SHUTDOWN).
    pub fn close(&mut self, now: SimTime) {
        if self.is_closed() {
            return;
        }
        if self.state == AssocState::Established {
            self.hs.send_shutdown = true;
        }
        self.end(now, CloseKind::LocalClose);
    }

    fn end(&mut self, now: SimTime, kind: CloseKind) {
        if self.closed.is_none() {
            self.closed = Some((now, kind));
            self.state = AssocState::Ended;
            self.events.push(StreamEvent::Closed(kind));
            self.hs.t1 = None;
            self.rec.t3 = None;
            self.rx.sack_timer = None;
            self.trace_connection_state(now, ConnectionState::Closed);
        }
    }

    // ----- input ----------------------------------------------------------------------------

    /// Handles one received packet of `size` bytes.
    pub fn handle_packet(&mut self, now: SimTime, pkt: &SctpPacket) {
        if self.state == AssocState::Ended {
            return;
        }
        if self.side == Side::Server && self.state == AssocState::Closed && self.hs.peer.is_none() {
            self.started_at = now;
        }
        self.trace.push_with(now, || TraceEvent::PacketReceived {
            packet: ProtocolPacket::Sctp(pkt.clone()),
            datagram_id: pkt.number,
        });
        self.burst_left = self.cfg.max_burst;
        let had_gaps = !self.rx.recv_above.is_empty();
        let mut data_in_packet = false;
        let mut dup_in_packet = false;
        for c in &pkt.chunks {
            match c {
                Chunk::Init(p) => self.on_init(*p),
                Chunk::InitAck { params, cookie } => self.on_init_ack(now, *params, *cookie),
                Chunk::CookieEcho { .. } => self.on_cookie_echo(now),
                Chunk::CookieAck => self.on_cookie_ack(now),
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
                            a_rwnd: self.peer_rwnd + self.rec.outstanding_user,
                            gaps: Vec::new(),
                            dups: Vec::new(),
                        };
                        self.receive_sack(now, &sack);
                    }
                    self.hs.send_shutdown_ack = true;
                    self.end(now, CloseKind::PeerClose);
                    return;
                }
                Chunk::ShutdownAck => {
                    self.hs.send_shutdown_complete = true;
                }
                Chunk::ShutdownComplete => {}
            }
        }
        if data_in_packet {
            self.rx
                .on_data_packet(now, &self.cfg, had_gaps, dup_in_packet);
        }
        self.trace_metrics(now);
    }

    // ----- timers ---------------------------------------------------------------------------

    // ----- output ---------------------------------------------------------------------------

    // ----- tracing --------------------------------------------------------------------------

    fn trace_connection_state(&mut self, now: SimTime, new: ConnectionState) {
        if self.trace.is_on() && self.trace_state != Some(new) {
            let old = self.trace_state;
            self.trace
                .push(now, TraceEvent::ConnectionStateUpdated { old, new });
        }
        self.trace_state = Some(new);
    }

    /// The qlog metrics and the checkers' probes after a packet, while tracing (the test
    /// inlined: the call cost ~16 instructions per packet with tracing off).
    #[inline(always)]
    fn trace_metrics(&mut self, now: SimTime) {
        if self.trace.is_on() {
            self.push_trace_metrics(now);
        }
    }

    #[inline(never)]
    fn push_trace_metrics(&mut self, now: SimTime) {
        self.probe_window(now);
        let m = RecoveryMetrics {
            min_rtt: self.rtt.has_sample().then(|| self.rtt.min_rtt()),
            smoothed_rtt: Some(self.rtt.smoothed_rtt()),
            latest_rtt: self.rtt.has_sample().then(|| self.rtt.latest_rtt()),
            rtt_variance: Some(self.rtt.rttvar()),
            pto_count: Some(self.rec.error_count as u32),
            congestion_window: Some(self.cc.window()),
            bytes_in_flight: Some(self.rec.flight),
            ssthresh: self.cc.ssthresh(),
            packets_in_flight: Some(self.rec.sent.values().filter(|c| c.in_flight).count() as u64),
            pacing_rate: None,
            // SCTP has no model-based controller (`cc = "bbr1"` is refused).
            model_bandwidth: None,
            model_min_rtt: None,
        };
        let d = RecoveryMetrics::changes(self.trace_metrics.as_ref(), &m);
        if !d.is_empty() {
            self.trace.push(now, TraceEvent::MetricsUpdated(d));
        }
        self.trace_metrics = Some(m);
        if self.trace_rto != Some(self.rec.rto) {
            self.trace_rto = Some(self.rec.rto);
            self.trace
                .push(now, TraceEvent::RtoUpdated { rto: self.rec.rto });
        }
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

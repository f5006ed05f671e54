//! Streaming event tracing: the [`Tracer`] trait and the events it receives.
//!
//! A tracer observes a run as it happens, one [`TraceRecord`] at a time, in simulated-time
//! order. Nothing here keeps the trace: a tracer writes each record out (see
//! [`crate::qlog::QlogWriter`]) or aggregates it, so a trace of an arbitrarily long run
//! costs constant memory.
//!
//! Where the records come from:
//! - the runner emits the protocol-neutral network events itself: scheduled link changes
//!   ([`TraceEvent::LinkChanged`]), handovers ([`TraceEvent::Handover`]) and every packet
//!   the network drops ([`TraceEvent::LinkDrop`]);
//! - endpoints emit protocol events (packets sent, received and lost, recovery metrics,
//!   congestion state, blocking, parameters). An endpoint buffers them only while tracing is
//!   on ([`crate::endpoint::Endpoint::set_tracing`]) and the runner drains the buffer after
//!   every call into the endpoint ([`crate::endpoint::Endpoint::drain_trace`]), so the
//!   buffer never holds more than one input's worth of events.
//!
//! Tracing observes and never changes a run: it adds no scheduler events and touches no
//! random stream, so the digest is the same with tracing on or off. With [`NoopTracer`]
//! (what [`crate::run`] uses) tracing is never switched on and costs one branch per
//! endpoint call.
//!
//! The events are protocol-neutral: what every transport has (packets sent, received and
//! lost, recovery metrics, congestion state, blocking, connection state) is a variant of
//! [`TraceEvent`], and the protocol-specific detail travels in a per-protocol payload —
//! [`ProtocolPacket`], [`ProtocolParameters`], [`DatagramContent`] — an enum with one
//! variant per protocol whose payload types are the descriptors of the low
//! [`crate::wire`] layer (so a trace shows exactly what was sent). This module imports
//! no protocol module; the qlog writer ([`crate::qlog`]) understands every payload.

use crate::config::{AddressChange, LinkChange};
use crate::metrics::DropReason;
use crate::packet::{Datagram, Payload};
use crate::time::{SimDuration, SimTime};
use crate::wire::quic::{PacketRef, QuicPacket, TransportParameters};
use crate::wire::sctp::{SctpPacket, SctpParameters};

/// Which side of a client/server pair an endpoint runs on. For QUIC it is the connection
/// role; for the CBR apps it is the host (the pair's client or server host).
///
/// The derived order (client first) orders the traces of a qlog output ([`crate::qlog`]
/// sorts its trace keys); the explicit discriminants freeze it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Vantage {
    /// The client host (the connection initiator).
    Client = 0,
    /// The server host.
    Server = 1,
}

impl Vantage {
    /// `"client"` or `"server"` (the qlog vantage point type).
    pub fn as_str(self) -> &'static str {
        match self {
            Vantage::Client => "client",
            Vantage::Server => "server",
        }
    }
}

/// Identifies the endpoint a record comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EndpointId {
    /// Flow index in the scenario (`flows[i]`).
    pub flow: u32,
    /// Endpoint index in the run (the runner's slot; stable for a config).
    pub endpoint: u32,
    /// Client or server side.
    pub vantage: Vantage,
    /// Connection index within the endpoint, as the endpoint tags its events
    /// ([`crate::endpoint::Endpoint::drain_trace_tagged`]); 0 for a single connection and
    /// in [`RunInfo`].
    pub connection: u32,
}

/// Where a record comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceSource {
    /// An endpoint's protocol event.
    Endpoint(EndpointId),
    /// The network (runner). `flow` is set for events about one flow's packet (drops) and
    /// `None` for events that concern everyone (link changes, handovers).
    Network {
        /// The flow concerned, if one.
        flow: Option<u32>,
    },
}

/// One traced event with its time and source.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceRecord {
    /// Simulated time of the event.
    pub time: SimTime,
    /// Who emitted it.
    pub source: TraceSource,
    /// What happened.
    pub event: TraceEvent,
}

/// What the run looks like, given to [`Tracer::begin`] before the first record.
#[derive(Clone, Debug, PartialEq)]
pub struct RunInfo {
    /// Scenario name (`name` in the scenario file).
    pub scenario: String,
    /// The run's seed.
    pub seed: u64,
    /// Every endpoint of the run, in endpoint-index order.
    pub endpoints: Vec<EndpointInfo>,
    /// Names of the links at the start (handovers add links later).
    pub links: Vec<String>,
}

/// One endpoint of the run.
#[derive(Clone, Debug, PartialEq)]
pub struct EndpointInfo {
    /// Its identity (flow, index, vantage, connection).
    pub id: EndpointId,
    /// The application / protocol: `"quic"`, `"cbr_source"`, `"cbr_sink"`.
    pub kind: &'static str,
    /// Its local address at the start, e.g. `"10.0.0.1:10000"`.
    pub local: String,
    /// The address it talks to, if it knows (a CBR sink does not).
    pub remote: Option<String>,
}

/// Receives a run's events as they happen.
///
/// Records arrive in non-decreasing [`TraceRecord::time`]; records of the same instant
/// arrive in the order they happened. Implementations must not assume they can see a
/// record again: whatever they keep, they keep themselves.
pub trait Tracer {
    /// Whether this tracer wants records at all. When `false` the runner switches tracing
    /// off in every endpoint and never builds a record. Default: `true`.
    fn enabled(&self) -> bool {
        true
    }
    /// Called once before the first record.
    fn begin(&mut self, _info: &RunInfo) {}
    /// One event.
    fn record(&mut self, record: &TraceRecord);
    /// Called once after the last record, with the run's end time.
    fn finish(&mut self, _end: SimTime) {}
}

/// A tracer that wants nothing: tracing stays off and costs nothing measurable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoopTracer;

impl Tracer for NoopTracer {
    fn enabled(&self) -> bool {
        false
    }
    fn record(&mut self, _record: &TraceRecord) {}
}

/// Any `FnMut(&TraceRecord)` is a tracer (handy in tests and scripts).
impl<F: FnMut(&TraceRecord)> Tracer for F {
    fn record(&mut self, record: &TraceRecord) {
        self(record)
    }
}

/// What a dropped datagram carried.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DatagramContent {
    /// QUIC packets (coalesced ones in order).
    Quic(Vec<PacketRef>),
    /// A TCP segment, without its records ([`crate::wire::tcp::SegmentRef`]).
    Tcp(crate::wire::tcp::SegmentRef),
    /// An SCTP packet: its number and the names of its chunks.
    Sctp {
        /// The sender's packet number (not a wire field).
        number: u64,
        /// Chunk names in order (`"DATA"`, `"SACK"`, ...).
        chunks: Vec<&'static str>,
    },
    /// A CBR probe with its sequence number.
    Cbr {
        /// Sequence number.
        seq: u64,
    },
    /// Anything else.
    Other,
}

impl DatagramContent {
    /// Describes a datagram's payload.
    pub fn of(d: &Datagram) -> Self {
        match &d.payload {
            Payload::Quic(q) => DatagramContent::Quic(q.packet_refs()),
            Payload::Tcp(t) => DatagramContent::Tcp(t.summary()),
            Payload::Sctp(p) => DatagramContent::Sctp {
                number: p.number,
                chunks: p.chunks.iter().map(|c| c.name()).collect(),
            },
            Payload::Cbr { seq } => DatagramContent::Cbr { seq: *seq },
            Payload::Raw { .. } => DatagramContent::Other,
        }
    }
}

/// A transport packet as an endpoint sent, received or lost it: the protocol's own
/// descriptor, one variant per protocol (types from [`crate::wire`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProtocolPacket {
    /// A QUIC packet: type, number, size and frames ([`crate::wire::quic::QuicPacket`]).
    /// A lost packet's frames are empty when the sender did not keep them.
    Quic(QuicPacket),
    /// An SCTP packet ([`crate::wire::sctp::SctpPacket`]); a lost one is reported per
    /// DATA chunk (SCTP detects loss per TSN): number = the TSN, one DATA chunk.
    Sctp(SctpPacket),
}

impl ProtocolPacket {
    /// Size in bytes as the protocol counts it (QUIC: header + packet number + frames +
    /// AEAD tag).
    pub fn size(&self) -> u64 {
        match self {
            ProtocolPacket::Quic(p) => p.size,
            ProtocolPacket::Sctp(p) => p.size(),
        }
    }

    /// The packet (or segment) number.
    pub fn number(&self) -> u64 {
        match self {
            ProtocolPacket::Quic(p) => p.pn,
            ProtocolPacket::Sctp(p) => p.number,
        }
    }
}

/// The transport parameters an endpoint announces or learns, one variant per protocol
/// (types from [`crate::wire`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProtocolParameters {
    /// QUIC transport parameters (RFC 9000 §18.2,
    /// [`crate::wire::quic::TransportParameters`]).
    Quic(TransportParameters),
    /// SCTP INIT / INIT-ACK parameters and the path MTU
    /// ([`crate::wire::sctp::SctpParameters`]).
    Sctp(SctpParameters),
}

/// Why a packet was declared lost (RFC 9002 §6.1, §6.2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossTrigger {
    /// Packet threshold: `kPacketThreshold` later packets were acknowledged (§6.1.1).
    ReorderingThreshold,
    /// Time threshold: sent long enough before an acknowledged packet (§6.1.2).
    TimeThreshold,
    /// Declared lost when a PTO expired (§6.2.4, optional).
    PtoExpired,
}

/// Why a packet was sent (qlog `packet_sent` trigger), when not "new data".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendTrigger {
    /// A probe sent because the PTO expired (RFC 9002 §6.2.4).
    PtoProbe,
    /// Carries data of a packet declared lost by the packet threshold.
    RetransmitReordered,
    /// Carries data of a packet declared lost by the time threshold.
    RetransmitTimeout,
    /// Retransmitted CRYPTO data during the handshake (RFC 9002 §6.2.3).
    RetransmitCrypto,
}

/// Why sending is (or is no longer) blocked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockedReason {
    /// The congestion window is full.
    CongestionControl,
    /// Pacing holds the next packet back.
    Pacing,
    /// A server at its anti-amplification limit (RFC 9000 §8.1).
    AmplificationProtection,
    /// The peer's connection-level limit (MAX_DATA) is reached.
    ConnectionFlowControl,
    /// The peer's stream-level limit (MAX_STREAM_DATA) is reached.
    StreamFlowControl,
    /// No stream can be opened (MAX_STREAMS).
    StreamId,
    /// The application has nothing to send.
    Application,
}

/// QUIC connection states (the qlog base and granular states the model has).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnectionState {
    /// Initial packet sent (client) or received (server).
    Attempted,
    /// Handshake packets sent or received.
    HandshakeStarted,
    /// Handshake complete: 1-RTT data can be sent (RFC 9001 §4.1.1).
    HandshakeComplete,
    /// Handshake confirmed (RFC 9001 §4.1.2).
    HandshakeConfirmed,
    /// Closed (idle timeout or CONNECTION_CLOSE).
    Closed,
}

/// Recovery metrics; only the fields that changed are set (qlog `recovery_metrics_updated`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecoveryMetrics {
    /// Minimum RTT.
    pub min_rtt: Option<SimDuration>,
    /// Smoothed RTT.
    pub smoothed_rtt: Option<SimDuration>,
    /// Latest RTT sample.
    pub latest_rtt: Option<SimDuration>,
    /// RTT variation.
    pub rtt_variance: Option<SimDuration>,
    /// Consecutive PTO expirations.
    pub pto_count: Option<u32>,
    /// Congestion window, bytes.
    pub congestion_window: Option<u64>,
    /// Bytes in flight.
    pub bytes_in_flight: Option<u64>,
    /// Slow-start threshold, bytes (only once finite).
    pub ssthresh: Option<u64>,
    /// Packets in flight over all number spaces.
    pub packets_in_flight: Option<u64>,
    /// Pacing rate, bit/s.
    pub pacing_rate: Option<u64>,
    /// A model-based controller's (BBR's) bottleneck bandwidth estimate, bit/s
    /// ([`crate::cc::ModelEstimate::bandwidth`]); `None` for window-based controllers.
    pub model_bandwidth: Option<u64>,
    /// A model-based controller's own minimum-RTT estimate (BBR's RTprop / min_rtt
    /// filter, which ProbeRTT refreshes), distinct from the path's `min_rtt`.
    pub model_min_rtt: Option<SimDuration>,
}

impl RecoveryMetrics {
    /// `true` if no field is set.
    pub fn is_empty(&self) -> bool {
        *self == RecoveryMetrics::default()
    }

    /// The fields of `now` that differ from `prev` (all of `now` if `prev` is `None`).
    pub fn changes(prev: Option<&RecoveryMetrics>, now: &RecoveryMetrics) -> RecoveryMetrics {
        let Some(p) = prev else { return *now };
        fn d<T: PartialEq + Copy>(a: Option<T>, b: Option<T>) -> Option<T> {
            if a == b {
                None
            } else {
                b
            }
        }
        RecoveryMetrics {
            min_rtt: d(p.min_rtt, now.min_rtt),
            smoothed_rtt: d(p.smoothed_rtt, now.smoothed_rtt),
            latest_rtt: d(p.latest_rtt, now.latest_rtt),
            rtt_variance: d(p.rtt_variance, now.rtt_variance),
            pto_count: d(p.pto_count, now.pto_count),
            congestion_window: d(p.congestion_window, now.congestion_window),
            bytes_in_flight: d(p.bytes_in_flight, now.bytes_in_flight),
            ssthresh: d(p.ssthresh, now.ssthresh),
            packets_in_flight: d(p.packets_in_flight, now.packets_in_flight),
            pacing_rate: d(p.pacing_rate, now.pacing_rate),
            model_bandwidth: d(p.model_bandwidth, now.model_bandwidth),
            model_min_rtt: d(p.model_min_rtt, now.model_min_rtt),
        }
    }
}

/// Which side set transport parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Initiator {
    /// This endpoint's own parameters.
    Local,
    /// The peer's parameters, as received.
    Remote,
}

/// Loss-detection and congestion-control constants (qlog `recovery_parameters_set`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RecoveryParameters {
    /// kPacketThreshold.
    pub reordering_threshold: u64,
    /// kTimeThreshold as an RTT multiplier.
    pub time_threshold: f64,
    /// kGranularity.
    pub timer_granularity: SimDuration,
    /// kInitialRtt.
    pub initial_rtt: SimDuration,
    /// max_datagram_size, bytes.
    pub max_datagram_size: u64,
    /// Initial congestion window, bytes.
    pub initial_congestion_window: u64,
    /// Minimum congestion window, bytes (the controller's
    /// [`crate::cc::CongestionController::minimum_window`]).
    pub minimum_congestion_window: u64,
    /// Multiplicative decrease factor (the controller's
    /// [`crate::cc::CongestionController::loss_reduction_factor`]).
    pub loss_reduction_factor: f64,
    /// kPersistentCongestionThreshold (PTO multiplier).
    pub persistent_congestion_threshold: u64,
    /// The controller's name (`"new_reno"`, `"cubic"`), logged as an extension field.
    pub congestion_controller: &'static str,
}

/// One traced event.
#[derive(Clone, Debug, PartialEq)]
pub enum TraceEvent {
    // --- network, emitted by the runner -------------------------------------------------
    /// A scheduled link change took effect.
    LinkChanged {
        /// Link name.
        link: String,
        /// What changed (fields left `None` did not).
        change: LinkChange,
    },
    /// A handover: the client of `pair` moved to new access links.
    Handover {
        /// Index in the scenario's handover list.
        index: u32,
        /// Client/server pair.
        pair: u32,
        /// Address effect.
        address: AddressChange,
        /// Names of the new forward and reverse links.
        new_links: [String; 2],
        /// Packets flushed from the old links (each also has a [`TraceEvent::LinkDrop`]).
        flushed: u64,
    },
    /// The network dropped a datagram.
    LinkDrop {
        /// The link where it happened, or `None` when a node dropped it (no route, no
        /// endpoint, corruption detected at the receiving host has the link that corrupted).
        link: Option<String>,
        /// Why.
        reason: DropReason,
        /// UDP payload size in bytes.
        size: u32,
        /// What it carried.
        content: DatagramContent,
    },
    /// A free-form simulation marker.
    Marker {
        /// Marker type, e.g. `"run_end"`.
        kind: &'static str,
        /// Human-readable message.
        message: String,
    },

    // --- transports, emitted by endpoints -----------------------------------------------
    /// Transport parameters set (local ones at start, the peer's when received).
    ParametersSet {
        /// Whose parameters.
        initiator: Initiator,
        /// The values, in the protocol's terms.
        params: ProtocolParameters,
    },
    /// Loss-detection and congestion-control constants, once at start.
    RecoveryParametersSet(RecoveryParameters),
    /// Connection state change.
    ConnectionStateUpdated {
        /// Previous state, if any.
        old: Option<ConnectionState>,
        /// New state.
        new: ConnectionState,
    },
    /// A packet was sent.
    PacketSent {
        /// The packet, in the protocol's terms (QUIC: type, number, size, frames).
        packet: ProtocolPacket,
        /// Index of the UDP datagram that carries it (coalesced packets share it).
        datagram_id: u64,
        /// Why it was sent, if it was not plain new data.
        trigger: Option<SendTrigger>,
    },
    /// A packet was received and processed.
    PacketReceived {
        /// The packet, in the protocol's terms (QUIC: type, number, size, frames).
        packet: ProtocolPacket,
        /// Index of the received UDP datagram at this endpoint.
        datagram_id: u64,
    },
    /// Loss detection declared a packet lost.
    PacketLost {
        /// The packet, in the protocol's terms (QUIC: type, number, size, and its frames
        /// if the sender kept them).
        packet: ProtocolPacket,
        /// Why.
        trigger: LossTrigger,
    },
    /// One or more recovery metrics changed; the set fields are the new values.
    MetricsUpdated(RecoveryMetrics),
    /// The congestion controller changed state (`"slow_start"`, `"congestion_avoidance"`,
    /// `"recovery"`, `"application_limited"`, ...).
    CongestionStateUpdated {
        /// Previous state, if known.
        old: Option<&'static str>,
        /// New state.
        new: &'static str,
        /// What caused it (`"loss"`, `"persistent_congestion"`, `"ack"`, ...).
        trigger: Option<&'static str>,
    },
    /// The connection (`stream == None`) or one stream became blocked or unblocked.
    DataBlockedUpdated {
        /// The stream, or `None` for the whole connection.
        stream: Option<u64>,
        /// `true`: now blocked; `false`: now unblocked.
        blocked: bool,
        /// Why (for an unblock: why it had been blocked).
        reason: BlockedReason,
    },
    /// Connection migration progressed (qlog `migration_state_updated`): `new` is one of
    /// the draft's states (`"migration_started"`, `"migration_complete"`,
    /// `"migration_abandoned"`).
    MigrationStateUpdated {
        /// Previous state, if any.
        old: Option<&'static str>,
        /// New state.
        new: &'static str,
        /// Only the port changed (NAT rebinding).
        port_only: bool,
        /// At `migration_complete`: the new path's round trip measured by path validation.
        rtt_new: Option<SimDuration>,
        /// At `migration_complete`: the congestion window the window policy set.
        cwnd: Option<u64>,
    },
    /// A transport's own accounting for invariant checkers ([`SenderProbe`]); never
    /// written to qlog.
    SenderProbe(SenderProbe),
    /// TCP's segment-level events ([`TcpEvent`]) for the packet timeline; never written
    /// to qlog (TCP has no qlog schema), so a run's qlog files stay what they were.
    Tcp(TcpEvent),
    /// The retransmission timeout changed (with its backoff): SCTP's RTO (RFC 9260
    /// §6.3.1, doubled by each T3-rtx expiry, §6.3.3). For the packet timeline; never
    /// written to qlog (its metrics have no such field), so the qlog files stay what they
    /// were.
    RtoUpdated {
        /// The new retransmission timeout.
        rto: SimDuration,
    },
}

/// A TCP segment as a trace shows it: its header fields, without its records.
/// Sequence numbers are the sender's stream offsets (from 0, the SYN not counted), as in
/// [`SenderProbe`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpSegment {
    /// First payload byte.
    pub seq: u64,
    /// Payload bytes.
    pub len: u64,
    /// Cumulative acknowledgement (the next byte expected), when the ACK flag is set.
    pub ack: Option<u64>,
    /// SYN flag.
    pub syn: bool,
    /// FIN flag.
    pub fin: bool,
    /// Receive window, bytes.
    pub window: u64,
    /// SACK blocks `[start, end)` (RFC 2018 §3), most recent first.
    pub sack: Vec<(u64, u64)>,
    /// Sent before (a retransmission).
    pub retransmission: bool,
}

/// The rule by which a TCP sender declared a segment lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpLossRule {
    /// RFC 6675 §4 IsLost: `DupThresh` SACKed segments (or more than
    /// `(DupThresh - 1) * SMSS` SACKed bytes) above it.
    SackIsLost,
    /// RACK (RFC 8985 §6.2): sent before a delivered segment and outstanding longer than
    /// the RACK RTT plus the reordering window.
    Rack,
    /// Fast retransmit without SACK: `DupThresh` duplicate ACKs (RFC 5681 §3.2).
    DupAcks,
    /// NewReno: a partial ACK in fast recovery (RFC 6582 §3.2 step 5).
    PartialAck,
    /// The retransmission timer expired (RFC 6298 §5.4; every un-SACKed segment).
    Timeout,
    /// The SYN-ACK did not acknowledge the SYN's data (RFC 7413 §4.2.1).
    SynData,
}

/// A TCP timer that expired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpTimer {
    /// The retransmission timer (RFC 6298 §5.4-5.6).
    Rto,
    /// The tail loss probe timer (RFC 8985 §7.3).
    Tlp,
    /// RACK's reordering timer (RFC 8985 §6.3).
    Reordering,
}

/// A TCP sender's state after an input, for the packet timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpSenderState {
    /// Loss-recovery state: `"open"`, `"recovery"` (fast recovery) or `"loss"` (after a
    /// timeout).
    pub recovery: &'static str,
    /// The congestion controller's state name
    /// ([`crate::cc::CongestionController::state_name`]).
    pub cc: &'static str,
    /// The send window (congestion window, or PRR's during fast recovery), bytes.
    pub cwnd: u64,
    /// Slow-start threshold, bytes, once finite.
    pub ssthresh: Option<u64>,
    /// RFC 6675 `pipe`, bytes.
    pub pipe: u64,
    /// Smoothed RTT.
    pub srtt: SimDuration,
    /// The retransmission timeout with its backoff (RFC 6298 §2, §5.5).
    pub rto: SimDuration,
    /// Consecutive backoffs of the retransmission timer.
    pub backoff: u32,
}

/// TCP's segment-level trace events (issue 29 item 12: the packet timeline). Emitted only
/// while tracing is on; [`crate::qlog::QlogWriter`] skips them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TcpEvent {
    /// A segment went out (data, pure ACK, SYN or FIN).
    SegmentSent(TcpSegment),
    /// A segment arrived and was processed.
    SegmentReceived(TcpSegment),
    /// The segment at `seq` (`len` bytes) was declared lost by `rule`.
    Lost {
        /// First byte.
        seq: u64,
        /// Payload bytes.
        len: u64,
        /// Which rule.
        rule: TcpLossRule,
    },
    /// A timer expired (the RTO also while only the SYN is outstanding; the tail loss
    /// probe timer only when it sends a probe).
    TimerExpired(TcpTimer),
    /// The sender's state after an input.
    State(TcpSenderState),
}

/// A stream sender's (and receiver's) own accounting, one step at a time, for invariant
/// checkers (issue 16: `sim_core::testing::Watch` mirrors it). TCP emits these: it has no
/// qlog events, and [`crate::qlog::QlogWriter`] skips every probe, so a run's qlog files
/// stay what they were (they are in the golden manifest). Sequence numbers are the
/// sender's byte offsets (TCP: the stream's sequence space from 0, the SYN not counted).
/// SCTP associations emit the `Chunk*` and `StreamDelivered` variants and `Window`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderProbe {
    /// `[seq, seq + len)` went out in a packet of `ip_size` bytes (IP header included);
    /// `retransmission`: it had been sent before.
    Sent {
        /// First byte.
        seq: u64,
        /// Payload bytes.
        len: u64,
        /// The IP packet's size.
        ip_size: u64,
        /// A retransmission.
        retransmission: bool,
    },
    /// The segment at `seq` (`len` bytes) left the flight acknowledged (cumulatively or
    /// selectively): neither it nor a retransmission of it counts in flight any more.
    Acked {
        /// First byte.
        seq: u64,
        /// Payload bytes.
        len: u64,
    },
    /// The segment at `seq` was declared lost: neither it nor a retransmission of it
    /// counts in flight until it is retransmitted.
    Lost {
        /// First byte.
        seq: u64,
        /// Payload bytes.
        len: u64,
    },
    /// The segment at `seq`, declared lost before, counts in flight again: the loss was
    /// spurious (an undone timeout, RFC 5682).
    Restored {
        /// First byte.
        seq: u64,
        /// Payload bytes.
        len: u64,
    },
    /// The sender's window after an input: the congestion window, the controller's
    /// minimum ([`crate::cc::CongestionController::minimum_window`]), the bytes in flight
    /// as the sender counts them (TCP: RFC 6675 `pipe`; SCTP: the flight size) and the
    /// sender's maximum segment payload (TCP: the effective SMSS; SCTP: the path MTU).
    Window {
        /// Congestion window, bytes.
        cwnd: u64,
        /// The controller's minimum window, bytes.
        minimum: u64,
        /// Bytes in flight.
        bytes_in_flight: u64,
        /// Largest segment payload, bytes.
        smss: u64,
    },
    /// The receiver handed `[offset, offset + len)` of the byte stream to the layer above
    /// (TLS or the stream multiplexer).
    Delivered {
        /// First byte.
        offset: u64,
        /// Bytes.
        len: u64,
    },
    /// SCTP: the DATA chunk `tsn` (stream `stream`, `len` user bytes, `size` bytes on the
    /// wire as the flight size counts it) went out in a packet of `packet_size` bytes
    /// (SCTP common header included, IP header not: RFC 9260 §7.3's `mtu - 20` bound).
    ChunkSent {
        /// Transmission sequence number.
        tsn: u64,
        /// Stream identifier.
        stream: u64,
        /// User data bytes.
        len: u64,
        /// Chunk bytes counted in the flight size (header and padding included).
        size: u64,
        /// The SCTP packet's size.
        packet_size: u64,
        /// A retransmission (RFC 9260 §6.3.3 / §7.2.4).
        retransmission: bool,
    },
    /// SCTP: the chunk `tsn` was acknowledged, by the cumulative TSN ack (it leaves the
    /// outstanding chunks) or by a gap ack block (it leaves the flight size, RFC 9260
    /// §6.2.1, but stays outstanding until the cumulative ack passes it).
    ChunkAcked {
        /// Transmission sequence number.
        tsn: u64,
        /// Cumulatively acknowledged.
        cumulative: bool,
    },
    /// SCTP: the chunk `tsn` was marked for retransmission (fast retransmit, RFC 9260
    /// §7.2.4, or a T3-rtx expiry, §6.3.3): it leaves the flight size until resent.
    ChunkLost {
        /// Transmission sequence number.
        tsn: u64,
    },
    /// SCTP receiver: stream `stream`'s bytes `[offset, offset + len)` went up in order.
    StreamDelivered {
        /// Stream identifier.
        stream: u64,
        /// First byte of the stream.
        offset: u64,
        /// Bytes.
        len: u64,
    },
}

impl TraceEvent {
    /// A short stable name of the variant (`"packet_sent"`, `"link_drop"`, ...), for
    /// filtering and counting.
    pub fn kind(&self) -> &'static str {
        match self {
            TraceEvent::LinkChanged { .. } => "link_changed",
            TraceEvent::Handover { .. } => "handover",
            TraceEvent::LinkDrop { .. } => "link_drop",
            TraceEvent::Marker { .. } => "marker",
            TraceEvent::ParametersSet { .. } => "parameters_set",
            TraceEvent::RecoveryParametersSet(_) => "recovery_parameters_set",
            TraceEvent::ConnectionStateUpdated { .. } => "connection_state_updated",
            TraceEvent::PacketSent { .. } => "packet_sent",
            TraceEvent::PacketReceived { .. } => "packet_received",
            TraceEvent::PacketLost { .. } => "packet_lost",
            TraceEvent::MetricsUpdated(_) => "metrics_updated",
            TraceEvent::CongestionStateUpdated { .. } => "congestion_state_updated",
            TraceEvent::DataBlockedUpdated { .. } => "data_blocked_updated",
            TraceEvent::MigrationStateUpdated { .. } => "migration_state_updated",
            TraceEvent::SenderProbe(_) => "sender_probe",
            TraceEvent::Tcp(_) => "tcp",
            TraceEvent::RtoUpdated { .. } => "rto_updated",
        }
    }
}

/// A buffer an endpoint keeps its events in while tracing is on; drained by the runner
/// after every call into the endpoint. Off by default: [`TraceBuffer::push`] then does
/// nothing, so instrumented code costs one branch.
#[derive(Clone, Debug, Default)]
pub struct TraceBuffer {
    on: bool,
    events: Vec<(SimTime, TraceEvent)>,
}

impl TraceBuffer {
    /// Switches buffering on or off (off clears the buffer).
    pub fn set_on(&mut self, on: bool) {
        self.on = on;
        if !on {
            self.events.clear();
        }
    }
    /// Whether events are being collected; check it before building a costly event.
    #[inline]
    pub fn is_on(&self) -> bool {
        self.on
    }
    /// Adds an event (ignored when off).
    #[inline]
    pub fn push(&mut self, time: SimTime, event: TraceEvent) {
        if self.on {
            self.events.push((time, event));
        }
    }
    /// Adds the event built by `f`, calling it only when on.
    #[inline]
    pub fn push_with(&mut self, time: SimTime, f: impl FnOnce() -> TraceEvent) {
        if self.on {
            self.events.push((time, f()));
        }
    }
    /// Hands every buffered event to `sink`, oldest first, and empties the buffer.
    pub fn drain(&mut self, sink: &mut dyn FnMut(SimTime, TraceEvent)) {
        for (t, e) in self.events.drain(..) {
            sink(t, e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vantage_codes_are_pinned() {
        let (pinned, all) = pinned_codes!(Vantage as u8;
            Client => 0,
            Server => 1,
        );
        for v in all {
            assert_eq!(
                v as u8,
                pinned(v),
                "{v:?}: its code (the qlog trace order) changed"
            );
        }
        assert!(Vantage::Client < Vantage::Server);
    }

    #[test]
    fn buffer_is_inert_when_off() {
        let mut b = TraceBuffer::default();
        b.push(
            SimTime(1),
            TraceEvent::MetricsUpdated(RecoveryMetrics::default()),
        );
        b.push_with(SimTime(1), || unreachable!("not built when off"));
        let mut n = 0;
        b.drain(&mut |_, _| n += 1);
        assert_eq!(n, 0);
        b.set_on(true);
        b.push(
            SimTime(2),
            TraceEvent::MetricsUpdated(RecoveryMetrics::default()),
        );
        b.drain(&mut |t, _| {
            assert_eq!(t, SimTime(2));
            n += 1
        });
        assert_eq!(n, 1);
    }

    #[test]
    fn metric_changes() {
        let a = RecoveryMetrics {
            congestion_window: Some(10),
            bytes_in_flight: Some(5),
            ..Default::default()
        };
        let b = RecoveryMetrics {
            congestion_window: Some(10),
            bytes_in_flight: Some(6),
            ..Default::default()
        };
        let d = RecoveryMetrics::changes(Some(&a), &b);
        assert_eq!(d.congestion_window, None);
        assert_eq!(d.bytes_in_flight, Some(6));
        assert!(RecoveryMetrics::changes(Some(&a), &a).is_empty());
        assert_eq!(RecoveryMetrics::changes(None, &a), a);
    }
}

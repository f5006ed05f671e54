//! The QUIC connection state machine: 1-RTT handshake with anti-amplification, three
//! packet number spaces, ACK generation, frames, streams, flow control, and the glue to
//! RFC 9002 loss recovery ([`Recovery`]).
//!
//! Sans-IO like every endpoint: [`Connection::handle_datagram`] and
//! [`Connection::handle_timeout`] feed it, [`Connection::poll_transmit`] and
//! [`Connection::poll_timeout`] drain it. It knows nothing of the workload: the
//! application opens streams, writes lengths and reacts to [`ConnEvent`]s; its reader
//! (an [`AppReader`], passed to the calls that can make data readable or fire its
//! deadline) is called per STREAM frame that made bytes readable and reads with
//! [`Connection::read`].
//!
//! Handshake model (RFC 9000 §7, RFC 9001 §4): the TLS messages are byte counts from
//! [`QuicConfig`]. The client sends its ClientHello in Initial CRYPTO frames (datagram
//! padded to 1200 B). The server, once it has the whole ClientHello, has Handshake and
//! 1-RTT send keys and queues its ServerHello (Initial) and its Handshake flight. The
//! client gets Handshake keys with the whole ServerHello, and completes the handshake with
//! the whole server flight: it then queues its Finished (Handshake) and may send 1-RTT
//! data. The server completes (and confirms, RFC 9001 §4.1.2) on the client's Finished,
//! then sends HANDSHAKE_DONE, which confirms the handshake for the client. Keys are
//! discarded per RFC 9001 §4.9. Packets that cannot be decrypted yet are buffered (at most
//! [`MAX_UNDECRYPTABLE`]) and processed when the keys arrive.

use super::config::QuicConfig;
use super::ecn::EcnValidation;
use super::flow_control::{RecvFlow, SendFlow};
use super::migration::Migration;
use super::packetizer::{self, is_retransmittable, StreamSource};
use super::path::Path;
pub use super::path::AMPLIFICATION_FACTOR;
use super::recovery::{Recovery, RecoveryConfig, SentPacket, Space};
use super::sent_frames::{FrameSlab, SentFrames};
use super::spaces::PnSpace;
pub use super::state::{CloseInfo, CloseReason};
use super::state::{ConnState, Handshake};
use super::streams::{SendBuf, Stream, StreamTable};
use super::timers::{Timer, TimerTable};
use crate::breakdown::{BreakdownClock, TimeBreakdown, TimePart};
use crate::packet::Ecn;
use crate::time::{SimDuration, SimTime};
use crate::trace::{
    BlockedReason, ConnectionState, Initiator, LossTrigger, ProtocolPacket, ProtocolParameters,
    RecoveryMetrics, RecoveryParameters, SendTrigger, TraceBuffer, TraceEvent,
};
use crate::transport::pacer::Pacer;
use crate::transport::stream::AppReader;
use crate::wire::quic::EcnCounts;
use crate::wire::quic::{
    header_len_without_pn, packet_size, pn_len, AckRanges, ClientHelloInfo, Frame, FrameVec,
    PacketType, PacketVec, QuicDatagram, QuicPacket, ServerHelloInfo, TransportParameters,
    AEAD_TAG_LEN, MIN_PN_PLUS_PAYLOAD,
};

/// Smallest datagram carrying an ack-eliciting Initial packet (RFC 9000 §14.1: clients
/// pad every Initial-carrying datagram, servers every ack-eliciting one).
pub const MIN_INITIAL_DATAGRAM: u64 = 1200;

/// Packets buffered while their keys are not yet available (RFC 9001 §5.7 allows
/// buffering; quinn and quiche buffer a bounded number).
pub const MAX_UNDECRYPTABLE: usize = 16;

/// Bytes the pre_shared_key extension adds to a ServerHello that accepts a ticket
/// (RFC 8446 §4.2.11: type 2 + length 2 + selected_identity 2).
pub const PSK_SERVER_HELLO_EXTENSION: u64 = 6;

/// Default ack_delay_exponent when the peer sends none (RFC 9000 §18.2).
pub const DEFAULT_ACK_DELAY_EXPONENT: u64 = 3;

/// Default max_ack_delay when the peer sends none (RFC 9000 §18.2).
pub const DEFAULT_MAX_ACK_DELAY: SimDuration = SimDuration::from_millis(25);

/// Closing and draining periods last three PTOs (RFC 9000 §10.2).
pub const CLOSE_PERIOD_PTOS: u64 = 3;

/// What a client keeps from a completed connection to resume the next one with the same
/// server: the session ticket (RFC 8446 §4.6.1), the address-validation token issued with
/// it (NEW_TOKEN, RFC 9000 §8.1.3) and the server's transport parameters remembered for
/// 0-RTT (RFC 9000 §7.4.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionTicket {
    /// Ticket identity; the server's store knows the tickets it issued.
    pub id: u64,
    /// Address-validation token issued with the ticket, if any.
    pub token: Option<u64>,
    /// Remembered initial_max_data.
    pub initial_max_data: u64,
    /// Remembered initial_max_stream_data_bidi_remote.
    pub initial_max_stream_data: u64,
    /// Remembered initial_max_streams_bidi.
    pub initial_max_streams_bidi: u64,
}

/// Which side of the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// Opens the connection and the streams.
    Client,
    /// Accepts the connection.
    Server,
}

/// Something the application should know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnEvent {
    /// The handshake completed: streams may be opened and written.
    Connected,
    /// The peer raised the stream limit: more streams may be opened.
    StreamsAvailable,
    /// The peer opened stream `id`.
    StreamOpened(u64),
    /// Every byte of stream `id` up to its FIN was read by the application.
    StreamReadComplete(u64),
    /// Everything written on stream `id`, FIN included, was acknowledged.
    StreamSendComplete(u64),
    /// Client resuming with 0-RTT: streams may be opened and written now, before the
    /// handshake completes (RFC 9001 §4.6.1).
    EarlyDataReady,
    /// The connection closed (idle timeout, CONNECTION_CLOSE sent or received).
    Closed(CloseReason),
}

/// Why the sender was not sending while it had stream data (time accounting).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockState {
    /// Nothing to send, or sending.
    None,
    /// Data waits but the congestion window is full.
    Cwnd,
    /// Data waits but stream or connection flow control forbids it.
    FlowControl,
    /// Data waits but the server is at its anti-amplification limit.
    Amplification,
}

/// What the connection remembers about each sent packet (the `F` of [`Recovery`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SentInfo {
    /// Retransmittable frames (ACK and PADDING are never retransmitted), in the order the
    /// packet carried them: a handle into the connection's [`FrameSlab`].
    pub frames: SentFrames,
    /// Ranges of the ACK frame the packet carried, if any (to stop acknowledging what the
    /// peer knows, RFC 9000 §13.2.4): the frame's own buffer, shared ([`AckRanges`]).
    pub ack_ranges: Option<AckRanges>,
    /// The packet carried retransmitted data.
    pub retransmission: bool,
    /// Packet number space index (0 Initial, 1 Handshake, 2 application data).
    pub space: usize,
    /// A 0-RTT packet (application data space, long header).
    pub zero_rtt: bool,
}

/// Counters reported in the endpoint metrics.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConnStats {
    /// Datagrams sent.
    pub datagrams_sent: u64,
    /// UDP payload bytes sent.
    pub bytes_sent: u64,
    /// QUIC packets sent (coalesced packets counted separately).
    pub packets_sent: u64,
    /// Packets that carried retransmitted data (STREAM or CRYPTO).
    pub packets_retransmitted: u64,
    /// Packets declared lost by loss detection.
    pub packets_lost: u64,
    /// Ack-eliciting packets declared lost.
    pub ack_eliciting_lost: u64,
    /// Stream bytes retransmitted.
    pub stream_bytes_retransmitted: u64,
    /// Datagrams received.
    pub datagrams_received: u64,
    /// Packets received twice (dropped).
    pub duplicate_packets: u64,
    /// Packets dropped because their keys were discarded or the buffer was full.
    pub undecryptable_dropped: u64,
    /// Stream bytes received more than once.
    pub duplicate_stream_bytes: u64,
    /// Stream bytes read by the application.
    pub stream_bytes_read: u64,
    /// Sent datagrams that were in flight beyond the congestion window without being a
    /// PTO probe (must stay 0).
    pub cwnd_violations: u64,
    /// Flow-control limits exceeded by the peer (must stay 0).
    pub flow_control_violations: u64,
    /// Stream-count limit exceeded by the peer (must stay 0).
    pub stream_limit_violations: u64,
    /// DATA_BLOCKED frames sent.
    pub data_blocked_sent: u64,
    /// STREAM_DATA_BLOCKED frames sent.
    pub stream_data_blocked_sent: u64,
    /// MAX_DATA frames sent.
    pub max_data_sent: u64,
    /// MAX_STREAM_DATA frames sent.
    pub max_stream_data_sent: u64,
    /// Time the sender had data but a full congestion window.
    pub cwnd_blocked: SimDuration,
    /// Time the sender had data but no flow-control credit.
    pub flow_control_blocked: SimDuration,
    /// Time the server had data but was at its anti-amplification limit.
    pub amplification_blocked: SimDuration,
    /// Datagrams the anti-amplification limit held back (count of blocked polls).
    pub amplification_blocked_events: u64,
    /// 0-RTT packets sent (client).
    pub zero_rtt_packets_sent: u64,
    /// Stream bytes sent in 0-RTT packets (client).
    pub zero_rtt_stream_bytes: u64,
    /// 0-RTT packets received and dropped because 0-RTT was rejected (server).
    pub zero_rtt_packets_rejected: u64,
    /// CONNECTION_CLOSE frames sent.
    pub connection_close_sent: u64,
}

/// One QUIC connection.
#[derive(Debug)]
pub struct Connection {
    cfg: QuicConfig,
    role: Role,
    spaces: [PnSpace; 3],
    /// The network path: recovery, pacer, anti-amplification, validation.
    path: Path,
    /// Handshake and close state machine.
    state: ConnState,
    handshake_done_pending: bool,
    /// Packets that could not be decrypted yet, with the ECN codepoint of their datagram.
    undecryptable: Vec<(QuicPacket, Ecn)>,
    /// The sending side of ECN (RFC 9000 §13.4.2).
    ecn: EcnValidation,
    // streams
    streams: StreamTable,
    /// Scratch list of stream IDs for the control-frame pass (kept for its allocation).
    ctrl_scratch: Vec<u64>,
    /// Remote-initiated streams opened so far (they open in order: RFC 9000 §3.2).
    remote_opened: u64,
    local_opened: u64,
    peer_max_streams: u64,
    local_max_streams: u64,
    remote_closed: u64,
    max_streams_pending: bool,
    rr_cursor: Option<u64>,
    // connection flow control, send side
    send_fc: SendFlow,
    /// The peer's initial_max_stream_data_bidi_remote: our limit on streams we open.
    peer_window_local_streams: u64,
    /// The peer's initial_max_stream_data_bidi_local: our limit on streams it opens.
    peer_window_remote_streams: u64,
    /// The peer's max_idle_timeout, once its transport parameters applied.
    peer_idle_timeout: Option<SimDuration>,
    // connection flow control, receive side
    recv_fc: RecvFlow,
    // timing
    started_at: SimTime,
    last_activity: SimTime,
    eliciting_sent_since_recv: bool,
    block_state: BlockState,
    block_since: SimTime,
    /// "Where the time went" ([`crate::breakdown`]): never read by the protocol.
    breakdown: BreakdownClock,
    /// When the handshake completed locally.
    pub handshake_complete_at: Option<SimTime>,
    /// When the handshake was confirmed locally.
    pub handshake_confirmed_at: Option<SimTime>,
    events: Vec<ConnEvent>,
    /// Counters.
    pub stats: ConnStats,
    /// Protocol events for [`crate::trace`] (buffered only while tracing is on; never
    /// changes behaviour).
    pub trace: TraceBuffer,
    trace_state: Option<ConnectionState>,
    trace_metrics: Option<RecoveryMetrics>,
    trace_cc_state: Option<&'static str>,
    trace_last_cwnd: u64,
    last_loss_trigger: LossTrigger,
    // resumption, 0-RTT, close (docs/lifecycle.md)
    /// Client: the ticket this connection resumes with.
    ticket: Option<SessionTicket>,
    /// Client: it may send 0-RTT packets (until 1-RTT keys).
    zero_rtt_send: bool,
    /// Server: it accepts and processes 0-RTT packets (after the ClientHello).
    zero_rtt_recv: bool,
    /// Server: the ticket was accepted; client: the server said so.
    resumed: bool,
    /// Server: it accepts 0-RTT (decided when the connection is accepted).
    early_data_accepted: bool,
    /// Server: what the client's ClientHello says.
    peer_client_hello: Option<ClientHelloInfo>,
    /// Client: what the server's handshake says.
    peer_server_hello: Option<ServerHelloInfo>,
    /// Client: bytes of address-validation token in each Initial header.
    initial_token_len: u64,
    /// Connection migration (RFC 9000 §9), when the config enables it.
    migration: Option<Migration>,
    /// The sent-packet records of the datagram being assembled (empty between polls;
    /// kept for its allocation). The packets themselves are built in the datagram.
    scratch_infos: Vec<SentInfo>,
    /// Buffers of sent-packet records kept for reuse (no allocation per packet).
    buf_pool: packetizer::BufPool,
    /// The retransmittable frames of the outstanding sent packets ([`SentInfo::frames`]).
    sent_frames: FrameSlab,
}

mod input;
mod migrate;
mod output;
mod tracing;

fn space_of(i: usize) -> Space {
    Space::ALL[i]
}

impl Connection {
    /// A connection with `cfg` (not started).
    pub fn new(role: Role, cfg: QuicConfig) -> Self {
        let mut rc = RecoveryConfig::with_max_datagram_size(cfg.max_udp_payload);
        rc.initial_rtt = cfg.initial_rtt;
        rc.max_ack_delay = cfg.max_ack_delay;
        rc.packet_threshold = cfg.packet_threshold;
        rc.initial_window = cfg.initial_cwnd();
        let cc = crate::cc::build(&cfg.cc, cfg.max_udp_payload);
        let recovery = Recovery::with_controller(rc, role == Role::Client, cc);
        // Pacing (RFC 9002 §7.7).
        let pacer = Pacer::new(
            cfg.cc.pacing,
            cfg.pacing_burst_bytes(),
            cfg.max_udp_payload,
            cfg.cc.pacing_gain,
            cfg.cc.pacing_gain_slow_start,
        );
        // A client's peer (the server) needs no address validation (RFC 9000 §8.1).
        let path = Path::new(recovery, pacer, role == Role::Client);
        let recv_fc = RecvFlow::with_params(cfg.connection_allowance_params());
        let local_max_streams = cfg.max_streams_bidi;
        Connection {
            role,
            spaces: Default::default(),
            path,
            state: ConnState::default(),
            handshake_done_pending: false,
            undecryptable: Vec::new(),
            ecn: EcnValidation::new(cfg.ecn),
            streams: StreamTable::default(),
            ctrl_scratch: Vec::new(),
            remote_opened: 0,
            local_opened: 0,
            peer_max_streams: 0,
            local_max_streams,
            remote_closed: 0,
            max_streams_pending: false,
            rr_cursor: None,
            send_fc: SendFlow::new(0),
            peer_window_local_streams: 0,
            peer_window_remote_streams: 0,
            peer_idle_timeout: None,
            recv_fc,
            started_at: SimTime::ZERO,
            last_activity: SimTime::ZERO,
            eliciting_sent_since_recv: false,
            block_state: BlockState::None,
            block_since: SimTime::ZERO,
            breakdown: BreakdownClock::new(SimTime::ZERO, TimePart::Handshake),
            handshake_complete_at: None,
            handshake_confirmed_at: None,
            events: Vec::new(),
            stats: ConnStats::default(),
            trace: TraceBuffer::default(),
            trace_state: None,
            trace_metrics: None,
            trace_cc_state: None,
            trace_last_cwnd: 0,
            last_loss_trigger: LossTrigger::ReorderingThreshold,
            ticket: None,
            zero_rtt_send: false,
            zero_rtt_recv: false,
            resumed: false,
            early_data_accepted: false,
            peer_client_hello: None,
            peer_server_hello: None,
            initial_token_len: 0,
            migration: cfg.migration.map(Migration::new),
            scratch_infos: Vec::new(),
            buf_pool: packetizer::BufPool::default(),
            sent_frames: FrameSlab::default(),
            cfg,
        }
    }

    // ----- accessors -------------------------------------------------------------------

    /// The role.
    pub fn role(&self) -> Role {
        self.role
    }
    /// The configuration.
    pub fn config(&self) -> &QuicConfig {
        &self.cfg
    }
    /// The sender's ECN state (RFC 9000 §13.4.2).
    pub fn ecn(&self) -> &EcnValidation {
        &self.ecn
    }

    /// The ECN codepoints of the packets received, all packet number spaces together
    /// (RFC 9000 §13.4.1).
    pub fn ecn_received(&self) -> EcnCounts {
        let mut t = EcnCounts::default();
        for sp in &self.spaces {
            t.ect0 += sp.ecn_received.ect0;
            t.ect1 += sp.ecn_received.ect1;
            t.ce += sp.ecn_received.ce;
        }
        t
    }

    /// The ECN codepoint of the datagrams this connection sends now: ECT(0) while ECN is
    /// in use (`ecn = true` and validation has not failed), else Not-ECT.
    pub fn ecn_codepoint(&self) -> Ecn {
        if self.ecn.marking {
            Ecn::Ect0
        } else {
            Ecn::NotEct
        }
    }

    /// Loss recovery (RTT, congestion controller, bytes in flight).
    pub fn recovery(&self) -> &Recovery<SentInfo> {
        &self.path.recovery
    }
    /// The network path (recovery, pacer, anti-amplification, validation).
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// Streams looked at by the per-packet scans so far (scheduler, retransmissions,
    /// blocked and window-update frames, readable streams): a work counter for tests and
    /// benchmarks, not part of any output. It grows with the streams that have work, never
    /// with finished or idle ones (issue 15 item 3).
    pub fn stream_visits(&self) -> u64 {
        self.streams.visits()
    }

    /// The streams, by ID (`get`, `values` and `iter` in ID order, `len`, indexing).
    pub fn streams(&self) -> &StreamTable {
        &self.streams
    }
    /// The handshake completed.
    pub fn is_handshake_complete(&self) -> bool {
        self.state.is_handshake_complete()
    }
    /// The handshake is confirmed.
    pub fn is_handshake_confirmed(&self) -> bool {
        self.state.is_handshake_confirmed()
    }
    /// The connection was closed (idle timeout or CONNECTION_CLOSE).
    pub fn is_closed(&self) -> bool {
        self.state.is_closed()
    }
    /// When the connection started.
    pub fn started_at(&self) -> SimTime {
        self.started_at
    }
    /// Connection-level receive flow control.
    pub fn recv_flow(&self) -> &RecvFlow {
        &self.recv_fc
    }
    /// Connection-level send credit state: (bytes sent, peer's MAX_DATA).
    pub fn send_flow(&self) -> (u64, u64) {
        (self.send_fc.sent(), self.send_fc.limit())
    }
    /// Client: resume with `ticket` (call before [`Connection::start`]). The ClientHello
    /// carries the ticket (`resumption_client_hello_size`), the Initial packets the
    /// ticket's address-validation token, and with `zero_rtt` on the client sends its
    /// requests in 0-RTT packets within the remembered transport parameters (RFC 9000
    /// §7.4.1).
    pub fn set_resumption(&mut self, ticket: SessionTicket) {
        if self.role != Role::Client {
            return;
        }
        if ticket.token.is_some() {
            self.initial_token_len = self.cfg.address_token_size;
        }
        self.zero_rtt_send = self.cfg.zero_rtt;
        self.ticket = Some(ticket);
    }

    /// Server: accept a connection whose ClientHello says `hello` (call before the first
    /// datagram). `ticket_valid`: the server issued the ticket presented (abbreviated
    /// handshake); `token_valid`: the Initial's address-validation token is valid for the
    /// client's address, which counts as validated (RFC 9000 §8.1.3). 0-RTT is accepted
    /// when the ticket is valid, the client sends early data and `reject_zero_rtt` is off.
    pub fn accept_client(&mut self, hello: ClientHelloInfo, ticket_valid: bool, token_valid: bool) {
        if self.role != Role::Server {
            return;
        }
        self.peer_client_hello = Some(hello);
        self.resumed = ticket_valid;
        self.early_data_accepted = ticket_valid && hello.early_data && !self.cfg.reject_zero_rtt;
        if token_valid {
            self.path.amplification.validate(); // RFC 9000 §8.1.3
        }
    }

    /// The connection resumed a session (server: accepted a ticket; client: the server
    /// accepted its ticket).
    pub fn is_resumed(&self) -> bool {
        self.resumed
    }
    /// Client: bytes of address-validation token in each of its Initial headers (0: none).
    pub fn initial_token_len(&self) -> u64 {
        self.initial_token_len
    }
    /// Client: it presented a ticket.
    pub fn has_ticket(&self) -> bool {
        self.ticket.is_some()
    }
    /// 0-RTT outcome: `None` if not attempted (client) or not offered (server), else
    /// whether the server accepted it. A client knows once its handshake completed.
    pub fn early_data_accepted(&self) -> Option<bool> {
        match self.role {
            Role::Client => {
                if !self.ticket.as_ref().is_some_and(|_| self.cfg.zero_rtt) {
                    None
                } else {
                    self.peer_server_hello.map(|h| h.early_data_accepted)
                }
            }
            Role::Server => self
                .peer_client_hello
                .filter(|h| h.early_data)
                .map(|_| self.early_data_accepted),
        }
    }
    /// The server's address-validation state (RFC 9000 §8.1).
    pub fn is_address_validated(&self) -> bool {
        self.path.amplification.is_validated()
    }
    /// When and why the connection closed.
    pub fn close_info(&self) -> Option<CloseInfo> {
        self.state.close_info()
    }
    /// The connection's state is gone: idle timeout, or the end of the closing or
    /// draining period.
    pub fn is_terminated(&self) -> bool {
        self.state.is_terminated()
    }
    /// The effective idle timeout: `max(idle_timeout, 3 PTO)` (RFC 9000 §10.1).
    pub fn idle_timeout(&self) -> SimDuration {
        let pto = self.path.recovery.pto_period(Space::Initial);
        self.negotiated_idle_timeout().max(pto.saturating_mul(3))
    }
    /// RFC 9000 §10.1: the minimum of both advertised max_idle_timeout values (or the sole
    /// non-zero one); ours until the peer's are known.
    fn negotiated_idle_timeout(&self) -> SimDuration {
        let own = self.cfg.idle_timeout;
        match self.peer_idle_timeout {
            Some(p) if p > SimDuration::ZERO && (own == SimDuration::ZERO || p < own) => p,
            _ => own,
        }
    }
    /// When the last activity restarted the idle timer.
    pub fn last_activity(&self) -> SimTime {
        self.last_activity
    }

    /// Closes the connection with CONNECTION_CLOSE (NO_ERROR, RFC 9000 §10.2): the frame is
    /// sent at once (with an ACK of what was received), then the closing period lasts
    /// three PTOs, during which every datagram received is answered with another
    /// CONNECTION_CLOSE (§10.2.1) and nothing else is sent.
    pub fn close(&mut self, now: SimTime) {
        if self.state.is_closed() {
            return;
        }
        let pto = self.path.recovery.pto_duration(Space::ApplicationData);
        let until = now.saturating_add(pto.saturating_mul(CLOSE_PERIOD_PTOS));
        self.state.close_local(now, until);
        self.events.push(ConnEvent::Closed(CloseReason::LocalClose));
        self.trace_connection_state(now, ConnectionState::Closed);
    }

    /// Whether events are pending.
    pub fn has_events(&self) -> bool {
        !self.events.is_empty()
    }

    /// Takes the pending events.
    pub fn take_events(&mut self) -> Vec<ConnEvent> {
        std::mem::take(&mut self.events)
    }

    // ----- application API -------------------------------------------------------------

    /// Opens a new locally initiated bidirectional stream, if the peer's limit allows.
    pub fn open_stream(&mut self) -> Option<u64> {
        if !self.state.is_handshake_complete() && self.role == Role::Client && !self.zero_rtt_send {
            return None;
        }
        if self.local_opened >= self.peer_max_streams {
            return None;
        }
        let initiator_bit = match self.role {
            Role::Client => 0,
            Role::Server => 1,
        };
        let id = self.local_opened * 4 + initiator_bit; // RFC 9000 §2.1
        self.local_opened += 1;
        let fc = RecvFlow::with_params(self.cfg.stream_allowance());
        self.streams
            .insert(Stream::new(id, self.peer_window_local_streams, fc));
        Some(id)
    }

    /// Writes `len` bytes (and the FIN if `fin`) on stream `id`.
    pub fn write(&mut self, id: u64, len: u64, fin: bool) {
        if let Some(mut s) = self.streams.get_mut(&id) {
            s.send.write(len, fin);
        }
    }

    // ----- input -------------------------------------------------------------------------

    /// Starts the connection (the client queues its ClientHello).
    pub fn start(&mut self, now: SimTime) {
        self.started_at = now;
        self.last_activity = now;
        self.block_since = now;
        self.breakdown = BreakdownClock::new(now, TimePart::Handshake);
        if self.trace.is_on() {
            let params = self.transport_parameters();
            self.trace.push(
                now,
                TraceEvent::ParametersSet {
                    initiator: Initiator::Local,
                    params: ProtocolParameters::Quic(params),
                },
            );
            let rp = self.recovery_parameters();
            self.trace.push(now, TraceEvent::RecoveryParametersSet(rp));
            self.trace_cwnd_state(now, None);
            self.trace_metrics_update(now);
        }
        if self.role == Role::Client {
            let n = self.client_hello_size();
            self.spaces[0].crypto_send.write(n, false);
            self.trace_connection_state(now, ConnectionState::Attempted);
            if self.zero_rtt_send {
                // RFC 9000 §7.4.1: 0-RTT within the remembered transport parameters.
                if let Some(t) = &self.ticket {
                    self.send_fc.raise(t.initial_max_data);
                    self.peer_max_streams = t.initial_max_streams_bidi;
                    self.peer_window_local_streams = t.initial_max_stream_data;
                    self.peer_window_remote_streams = t.initial_max_stream_data;
                }
                self.events.push(ConnEvent::EarlyDataReady);
            }
        }
    }

    /// Size of this connection's ClientHello.
    fn client_hello_size(&self) -> u64 {
        match self.role {
            Role::Client if self.ticket.is_some() => self.cfg.resumption_client_hello_size,
            Role::Client => self.cfg.client_hello_size,
            Role::Server => self
                .peer_client_hello
                .map_or(self.cfg.client_hello_size, |h| h.hello_size),
        }
    }

    /// What this server's handshake says about resumption.
    fn own_server_hello(&self) -> ServerHelloInfo {
        ServerHelloInfo {
            resumed: self.resumed,
            early_data_accepted: self.early_data_accepted,
            handshake_size: if self.resumed {
                self.cfg.resumption_server_handshake_size
            } else {
                self.cfg.server_handshake_size
            },
            params: self.transport_parameters(),
        }
    }

    /// Sizes of the server's ServerHello and Handshake flight on this connection.
    fn server_flight_sizes(&self) -> (u64, u64) {
        let info = match self.role {
            Role::Server => Some(self.own_server_hello()),
            Role::Client => self.peer_server_hello,
        };
        match info {
            Some(h) if h.resumed => (
                self.cfg.server_hello_size + PSK_SERVER_HELLO_EXTENSION,
                h.handshake_size,
            ),
            Some(h) => (self.cfg.server_hello_size, h.handshake_size),
            None => (self.cfg.server_hello_size, self.cfg.server_handshake_size),
        }
    }

    /// Bytes of token in the header of packets of type `ty` (client Initials carry the
    /// address-validation token, RFC 9000 §17.2.2).
    fn token_len(&self, ty: PacketType) -> u64 {
        if ty == PacketType::Initial && self.role == Role::Client {
            self.initial_token_len
        } else {
            0
        }
    }

    /// Our transport parameters (RFC 9000 §18.2), from our own config: sent in our
    /// ClientHello / EncryptedExtensions descriptor, traced as `parameters_set` (local).
    fn transport_parameters(&self) -> TransportParameters {
        let c = &self.cfg;
        TransportParameters {
            max_idle_timeout: Some(c.idle_timeout),
            max_udp_payload_size: Some(c.max_udp_payload),
            ack_delay_exponent: Some(u64::from(c.ack_delay_exponent)),
            max_ack_delay: Some(c.max_ack_delay),
            active_connection_id_limit: Some(2),
            initial_max_data: Some(c.connection_window),
            initial_max_stream_data_bidi_local: Some(c.stream_window),
            initial_max_stream_data_bidi_remote: Some(c.stream_window),
            initial_max_stream_data_uni: Some(0),
            initial_max_streams_bidi: Some(c.max_streams_bidi),
            initial_max_streams_uni: Some(0),
            disable_active_migration: None,
        }
    }

    /// The peer's transport parameters, from its handshake descriptor (ClientHello at the
    /// server, EncryptedExtensions at the client).
    fn peer_transport_parameters(&self) -> Option<TransportParameters> {
        match self.role {
            Role::Client => self.peer_server_hello.map(|h| h.params),
            Role::Server => self.peer_client_hello.map(|h| h.params),
        }
    }

    /// Attaches the handshake descriptors every datagram carries until the peer has
    /// certainly read ours: a peer keeps the first descriptor it receives and never reads
    /// another. The client knows at confirmation (HANDSHAKE_DONE), the server at
    /// completion (the client's Finished, sent after it processed the server's flight).
    /// Leaving them off later datagrams changes nothing the peer does and spares copying
    /// the transport parameters with every datagram.
    fn stamp_datagram(&self, d: &mut QuicDatagram) {
        let peer_has_ours = match self.role {
            Role::Client => self.state.is_handshake_confirmed(),
            Role::Server => self.state.is_handshake_complete(),
        };
        if peer_has_ours {
            return;
        }
        match self.role {
            Role::Client => {
                d.client_hello = Some(Box::new(ClientHelloInfo {
                    hello_size: self.client_hello_size(),
                    ticket: self.ticket.as_ref().map(|t| t.id),
                    token: self.ticket.as_ref().and_then(|t| t.token),
                    early_data: self.ticket.is_some() && self.cfg.zero_rtt,
                    params: self.transport_parameters(),
                }))
            }
            Role::Server => d.server_hello = Some(Box::new(self.own_server_hello())),
        }
    }

    // ----- checks ----------------------------------------------------------------------

    /// Model invariants (used by tests): bytes in flight equal the sum of outstanding
    /// in-flight packets; the sender never exceeded a flow-control limit or the congestion
    /// window outside probes; the peer never exceeded ours.
    pub fn check_invariants(&self) -> Result<(), String> {
        let sum: u64 = Space::ALL
            .iter()
            .flat_map(|&s| self.path.recovery.outstanding(s))
            .filter(|p| p.in_flight)
            .map(|p| p.size)
            .sum();
        if sum != self.path.recovery.bytes_in_flight() {
            return Err(format!(
                "bytes_in_flight {} != outstanding {sum}",
                self.path.recovery.bytes_in_flight()
            ));
        }
        self.send_fc
            .check_invariants()
            .map_err(|e| format!("connection send flow: {e}"))?;
        for s in self.streams.values() {
            if s.send.sent > s.send_fc.limit() || s.send_fc.sent() != s.send.sent {
                return Err(format!(
                    "stream {} sent {} (flow {}) > limit {}",
                    s.id,
                    s.send.sent,
                    s.send_fc.sent(),
                    s.send_fc.limit()
                ));
            }
            if s.recv.consumed > s.recv.delivered {
                return Err(format!("stream {} consumed beyond delivered", s.id));
            }
        }
        if self.stats.cwnd_violations > 0 {
            return Err(format!("{} cwnd violations", self.stats.cwnd_violations));
        }
        if self.stats.flow_control_violations > 0 || self.stats.stream_limit_violations > 0 {
            return Err("peer exceeded a limit".into());
        }
        Ok(())
    }
}

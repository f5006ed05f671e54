//! The QUIC connection state machine: 1-RTT handshake with anti-amplification, three
//! packet number spaces, ACK generation, frames, streams, flow control, and the glue to
//! RFC 9002 loss recovery ([`Recovery`]).
//!
//! Sans-IO like every endpoint: [`Connection::handle_datagram`] and
//! [`Connection::handle_timeout`] feed it, [`Connection::poll_transmit`] and
//! [`Connection::poll_timeout`] drain it. It knows nothing of the workload: the
//! application opens streams, writes lengths and reacts to [`ConnEvent`]s.
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
use super::flow_control::{RecvFlow, SendFlow};
use super::packetizer::{self, is_retransmittable, StreamSource};
use super::path::Path;
pub use super::path::AMPLIFICATION_FACTOR;
use super::recovery::{Recovery, RecoveryConfig, SentPacket, Space};
use super::spaces::PnSpace;
pub use super::state::{CloseInfo, CloseReason};
use super::state::{ConnState, Handshake};
use super::streams::{SendBuf, Stream};
use super::timers::{Timer, TimerTable};
use crate::time::{SimDuration, SimTime};
use crate::trace::{
    BlockedReason, ConnectionState, Initiator, LossTrigger, ProtocolPacket, ProtocolParameters,
    RecoveryMetrics, RecoveryParameters, SendTrigger, TraceBuffer, TraceEvent,
};
use crate::transport::pacer::Pacer;
use crate::units::Rate;
use crate::wire::quic::{
    header_len_without_pn, packet_size, pn_len, ClientHelloInfo, Frame, PacketType, QuicDatagram,
    QuicPacket, ServerHelloInfo, TransportParameters, AEAD_TAG_LEN, MIN_PN_PLUS_PAYLOAD,
};
use std::collections::BTreeMap;

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
    /// Retransmittable frames (ACK and PADDING are never retransmitted).
    pub frames: Vec<Frame>,
    /// Ranges of the ACK frame the packet carried, if any (to stop acknowledging what the
    /// peer knows, RFC 9000 §13.2.4).
    pub ack_ranges: Option<Vec<(u64, u64)>>,
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
    undecryptable: Vec<QuicPacket>,
    // streams
    streams: BTreeMap<u64, Stream>,
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
    // application reader
    read_rate: Option<Rate>,
    reader: Option<(SimTime, u64, u64)>,
    reader_cursor: Option<u64>,
    // timing
    started_at: SimTime,
    last_activity: SimTime,
    eliciting_sent_since_recv: bool,
    block_state: BlockState,
    block_since: SimTime,
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
}

fn space_of(i: usize) -> Space {
    Space::ALL[i]
}

impl Connection {
    /// A connection with `cfg`. `read_rate` limits how fast this side's application
    /// reads received stream data (`None`: instantly).
    pub fn new(role: Role, cfg: QuicConfig, read_rate: Option<Rate>) -> Self {
        let mut rc = RecoveryConfig::with_max_datagram_size(cfg.max_udp_payload);
        rc.initial_rtt = cfg.initial_rtt;
        rc.max_ack_delay = cfg.max_ack_delay;
        rc.packet_threshold = cfg.packet_threshold;
        rc.initial_window = cfg.initial_cwnd();
        rc.cc = cfg.cc;
        let cc = crate::cc::build_from(&cfg.cc_config());
        let recovery = Recovery::with_controller(rc, role == Role::Client, cc);
        // Pacing (RFC 9002 §7.7).
        let pacer = Pacer::new(
            cfg.pacing,
            cfg.pacing_burst_bytes(),
            cfg.max_udp_payload,
            cfg.pacing_gain,
            cfg.pacing_gain_slow_start,
        );
        // A client's peer (the server) needs no address validation (RFC 9000 §8.1).
        let path = Path::new(recovery, pacer, role == Role::Client);
        let recv_fc = RecvFlow::new(cfg.allowance, cfg.connection_window);
        let local_max_streams = cfg.max_streams_bidi;
        Connection {
            role,
            spaces: Default::default(),
            path,
            state: ConnState::default(),
            handshake_done_pending: false,
            undecryptable: Vec::new(),
            streams: BTreeMap::new(),
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
            read_rate,
            reader: None,
            reader_cursor: None,
            started_at: SimTime::ZERO,
            last_activity: SimTime::ZERO,
            eliciting_sent_since_recv: false,
            block_state: BlockState::None,
            block_since: SimTime::ZERO,
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
    /// Loss recovery (RTT, congestion controller, bytes in flight).
    pub fn recovery(&self) -> &Recovery<SentInfo> {
        &self.path.recovery
    }
    /// The network path (recovery, pacer, anti-amplification, validation).
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// The streams, by ID.
    pub fn streams(&self) -> &BTreeMap<u64, Stream> {
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
        let pto = self.path.recovery.pto_duration(Space::Initial);
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

    /// Takes the pending application events.
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
        let fc = RecvFlow::new(self.cfg.allowance, self.cfg.stream_window);
        self.streams
            .insert(id, Stream::new(id, self.peer_window_local_streams, fc));
        Some(id)
    }

    /// Writes `len` bytes (and the FIN if `fin`) on stream `id`.
    pub fn write(&mut self, id: u64, len: u64, fin: bool) {
        if let Some(s) = self.streams.get_mut(&id) {
            s.send.write(len, fin);
        }
    }

    // ----- input -------------------------------------------------------------------------

    /// Starts the connection (the client queues its ClientHello).
    pub fn start(&mut self, now: SimTime) {
        self.started_at = now;
        self.last_activity = now;
        self.block_since = now;
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

    /// The CONNECTION_CLOSE datagram owed in the closing period, if any.
    fn poll_close(&mut self, now: SimTime) -> Option<(QuicDatagram, u64)> {
        if !self.state.take_close_reply() {
            return None;
        }
        // RFC 9000 §10.2.3: before confirmation the peer may lack the keys of our
        // highest space, so the frame goes in every space it may be able to read,
        // coalesced: a client in Handshake and (once it has 1-RTT keys) 1-RTT packets, a
        // server in Initial and Handshake packets. Once confirmed, 1-RTT only.
        let hs = self.state.has_handshake_keys() && !self.spaces[1].discarded;
        let spaces: Vec<usize> = if self.state.is_handshake_confirmed() {
            vec![2]
        } else {
            match self.role {
                Role::Client => {
                    let mut v = Vec::new();
                    if hs {
                        v.push(1);
                    }
                    if self.state.is_handshake_complete() {
                        v.push(2);
                    }
                    if v.is_empty() {
                        v.push(0);
                    }
                    v
                }
                Role::Server => {
                    let mut v = Vec::new();
                    if !self.spaces[0].discarded {
                        v.push(0);
                    }
                    if hs {
                        v.push(1);
                    }
                    v
                }
            }
        };
        let cid = self.cfg.cid_len;
        let mut packets = Vec::new();
        let mut size = 0;
        for &i in &spaces {
            let ty = PacketType::of_space(i);
            let hdr = header_len_without_pn(ty, cid, cid, self.token_len(ty));
            let pn = self.spaces[i].next_pn;
            let pnl = pn_len(pn, self.spaces[i].largest_acked_by_peer);
            let mut frames = Vec::new();
            if !self.spaces[i].to_ack.is_empty() {
                let (ranges, exp) = (self.cfg.max_ack_ranges, self.cfg.ack_delay_exponent);
                if let Some(f) = packetizer::build_ack(&self.spaces[i], now, 1000, ranges, exp) {
                    frames.push(f);
                }
            }
            frames.push(Frame::ConnectionClose {
                error_code: 0, // NO_ERROR (RFC 9000 §20.1)
                reason_len: 0,
            });
            let mut frames_len: u64 = frames.iter().map(Frame::wire_size).sum();
            if pnl + frames_len < MIN_PN_PLUS_PAYLOAD {
                let pad = MIN_PN_PLUS_PAYLOAD - pnl - frames_len;
                frames.push(Frame::Padding { len: pad });
                frames_len += pad;
            }
            let mut psize = packet_size(hdr, ty, pnl, frames_len);
            let last = i == *spaces.last().expect("non-empty");
            if last && self.role == Role::Client && spaces.contains(&0) {
                // RFC 9000 §14.1: a client pads datagrams carrying Initial packets.
                let target = MIN_INITIAL_DATAGRAM.saturating_sub(size);
                let mut pad = target.saturating_sub(psize);
                while pad > 0 && packet_size(hdr, ty, pnl, frames_len + pad) > target {
                    pad -= 1;
                }
                if pad > 0 {
                    frames.push(Frame::Padding { len: pad });
                    psize = packet_size(hdr, ty, pnl, frames_len + pad);
                }
            }
            self.spaces[i].next_pn += 1;
            self.stats.packets_sent += 1;
            size += psize;
            packets.push(QuicPacket {
                ty,
                pn,
                size: psize,
                frames,
            });
        }
        self.stats.datagrams_sent += 1;
        self.stats.bytes_sent += size;
        self.stats.connection_close_sent += 1;
        let mut out = QuicDatagram {
            packets,
            ..QuicDatagram::default()
        };
        self.stamp_datagram(&mut out);
        Some((out, size))
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

    /// Attaches the handshake descriptors every datagram carries.
    fn stamp_datagram(&self, d: &mut QuicDatagram) {
        match self.role {
            Role::Client => {
                d.client_hello = Some(ClientHelloInfo {
                    hello_size: self.client_hello_size(),
                    ticket: self.ticket.as_ref().map(|t| t.id),
                    token: self.ticket.as_ref().and_then(|t| t.token),
                    early_data: self.ticket.is_some() && self.cfg.zero_rtt,
                    params: self.transport_parameters(),
                })
            }
            Role::Server => d.server_hello = Some(self.own_server_hello()),
        }
    }

    // ----- tracing (observes only) ------------------------------------------------------

    fn recovery_parameters(&self) -> RecoveryParameters {
        let rc = self.path.recovery.config();
        RecoveryParameters {
            reordering_threshold: rc.packet_threshold,
            time_threshold: rc.time_threshold_num as f64 / rc.time_threshold_den as f64,
            timer_granularity: rc.granularity,
            initial_rtt: rc.initial_rtt,
            max_datagram_size: rc.max_datagram_size,
            initial_congestion_window: rc.initial_window,
            minimum_congestion_window: crate::cc::minimum_window(rc.max_datagram_size),
            loss_reduction_factor: 0.5,
            persistent_congestion_threshold: rc.persistent_congestion_threshold,
            congestion_controller: self.path.recovery.cc().name(),
        }
    }

    fn trace_connection_state(&mut self, now: SimTime, new: ConnectionState) {
        if self.trace.is_on() && self.trace_state != Some(new) {
            let old = self.trace_state;
            self.trace
                .push(now, TraceEvent::ConnectionStateUpdated { old, new });
        }
        self.trace_state = Some(new);
    }

    /// Emits the recovery metrics that changed since the last emission, and the
    /// congestion state when the window moved.
    fn trace_metrics_update(&mut self, now: SimTime) {
        if !self.trace.is_on() {
            return;
        }
        let r = &self.path.recovery;
        let rtt = r.rtt();
        let srtt = rtt.smoothed_rtt();
        let packets_in_flight = Space::ALL
            .iter()
            .flat_map(|&sp| r.outstanding(sp))
            .filter(|p| p.in_flight)
            .count() as u64;
        let pacing_rate = if self.cfg.pacing && srtt.as_nanos() > 0 {
            let bits = self.pacing_gain() as u128 * r.cwnd() as u128 * 8 * 1_000_000;
            Some((bits / srtt.as_nanos() as u128).min(u64::MAX as u128) as u64)
        } else {
            None
        };
        let now_m = RecoveryMetrics {
            min_rtt: rtt.has_sample().then(|| rtt.min_rtt()),
            smoothed_rtt: Some(srtt),
            latest_rtt: rtt.has_sample().then(|| rtt.latest_rtt()),
            rtt_variance: Some(rtt.rttvar()),
            pto_count: Some(r.pto_count()),
            congestion_window: Some(r.cwnd()),
            bytes_in_flight: Some(r.bytes_in_flight()),
            ssthresh: r.cc().ssthresh(),
            packets_in_flight: Some(packets_in_flight),
            pacing_rate,
        };
        let d = RecoveryMetrics::changes(self.trace_metrics.as_ref(), &now_m);
        if !d.is_empty() {
            self.trace.push(now, TraceEvent::MetricsUpdated(d));
        }
        self.trace_metrics = Some(now_m);
        self.trace_cwnd_state(now, None);
    }

    /// Congestion state from the window: `recovery` after a reduction, then
    /// `slow_start` / `congestion_avoidance` once it grows again.
    fn trace_cwnd_state(&mut self, now: SimTime, trigger: Option<&'static str>) {
        let cwnd = self.path.recovery.cwnd();
        let ss = self.path.recovery.cc().ssthresh();
        let grown_state = if ss.is_none_or(|s| cwnd < s) {
            "slow_start"
        } else {
            "congestion_avoidance"
        };
        let new = if self.trace_cc_state.is_none() {
            grown_state
        } else if cwnd < self.trace_last_cwnd {
            "recovery"
        } else if cwnd > self.trace_last_cwnd {
            grown_state
        } else {
            self.trace_cc_state.unwrap_or(grown_state)
        };
        self.trace_last_cwnd = cwnd;
        if self.trace_cc_state != Some(new) {
            let old = self.trace_cc_state;
            let trigger = trigger.or(match new {
                "recovery" => Some("loss"),
                _ => None,
            });
            self.trace.push(
                now,
                TraceEvent::CongestionStateUpdated { old, new, trigger },
            );
            self.trace_cc_state = Some(new);
        }
    }

    fn blocked_reason(&self, st: BlockState) -> Option<(Option<u64>, BlockedReason)> {
        match st {
            BlockState::None => None,
            BlockState::Cwnd => Some((None, BlockedReason::CongestionControl)),
            BlockState::Amplification => Some((None, BlockedReason::AmplificationProtection)),
            BlockState::FlowControl => {
                if self.send_fc.credit() == 0 {
                    Some((None, BlockedReason::ConnectionFlowControl))
                } else {
                    let id = self
                        .streams
                        .values()
                        .find(|s| s.send.unsent() > 0 && s.send_credit() == 0)
                        .map(|s| s.id);
                    Some((id, BlockedReason::StreamFlowControl))
                }
            }
        }
    }

    /// A datagram of `size` UDP payload bytes arrived.
    pub fn handle_datagram(&mut self, now: SimTime, dgram: &QuicDatagram, size: u64) {
        if self.state.is_closed() {
            if self.state.on_datagram_while_closed() {
                // Closing (RFC 9000 §10.2.1): answer with CONNECTION_CLOSE.
                self.stats.datagrams_received += 1;
            }
            return;
        }
        if self.role == Role::Client && self.peer_server_hello.is_none() {
            if let Some(h) = dgram.server_hello {
                self.peer_server_hello = Some(h);
                self.resumed = h.resumed;
            }
        }
        if self.role == Role::Server && self.peer_client_hello.is_none() {
            // Without `accept_client` (a lone connection): only the ClientHello length.
            if let Some(h) = dgram.client_hello {
                self.peer_client_hello = Some(ClientHelloInfo {
                    ticket: None,
                    token: None,
                    early_data: false,
                    ..h
                });
            }
        }
        self.stats.datagrams_received += 1;
        self.last_activity = now;
        self.eliciting_sent_since_recv = false;
        if self.role == Role::Server {
            // RFC 9000 §8.1: all bytes received count, even of discarded packets.
            self.path.amplification.on_received(size);
        }
        if self.role == Role::Server && self.trace_state.is_none() {
            self.trace_connection_state(now, ConnectionState::Attempted);
        }
        for pkt in &dgram.packets {
            self.on_packet(now, pkt.clone());
        }
        self.update_amplification_state();
        self.trace_metrics_update(now);
    }

    fn can_decrypt(&self, i: usize) -> bool {
        match i {
            0 => true,
            1 => self.state.has_handshake_keys(),
            _ => self.state.can_recv_1rtt(),
        }
    }

    fn on_packet(&mut self, now: SimTime, pkt: QuicPacket) {
        let i = pkt.ty.space_index();
        if self.spaces[i].discarded {
            self.stats.undecryptable_dropped += 1;
            return;
        }
        let zero_rtt = pkt.ty == PacketType::ZeroRtt;
        if zero_rtt
            && (self.role == Role::Client
                || (self.state.has_handshake_keys() && !self.zero_rtt_recv))
        {
            // RFC 9001 §4.6.2: a server that rejected 0-RTT MUST NOT process 0-RTT packets.
            self.stats.zero_rtt_packets_rejected += 1;
            return;
        }
        let readable = (zero_rtt && self.zero_rtt_recv) || self.can_decrypt(i);
        if !readable {
            if self.undecryptable.len() < MAX_UNDECRYPTABLE {
                self.undecryptable.push(pkt);
            } else {
                self.stats.undecryptable_dropped += 1;
            }
            return;
        }
        let pn = pkt.pn;
        let eliciting = pkt.is_ack_eliciting();
        {
            let threshold = self.cfg.ack_eliciting_threshold;
            let max_ack_delay = self.cfg.max_ack_delay;
            let sp = &mut self.spaces[i];
            if sp.received.contains(pn) {
                self.stats.duplicate_packets += 1;
                return;
            }
            sp.received.insert(pn, pn + 1);
            sp.to_ack.insert(pn, pn + 1);
            let prev_largest = sp.largest_recv;
            if prev_largest.is_none_or(|l| pn > l) {
                sp.largest_recv = Some(pn);
                sp.largest_recv_time = now;
            }
            sp.new_since_ack = true;
            if eliciting {
                // RFC 9000 §13.2.1: immediately on out-of-order (a lower number than one
                // received, or missing packets before this one).
                let out_of_order = match prev_largest {
                    Some(l) => pn < l || pn > l + 1,
                    None => pn > 0,
                };
                sp.eliciting_since_ack += 1;
                // Initial and Handshake are not delayed (RFC 9000 §13.2.1); otherwise
                // every `threshold` ack-eliciting packets (§13.2.2) or max_ack_delay.
                if i < 2 || out_of_order || sp.eliciting_since_ack >= threshold {
                    sp.ack_immediate = true;
                } else if sp.ack_deadline.is_none() {
                    sp.ack_deadline = Some(now + max_ack_delay);
                }
            }
        }
        if self.trace.is_on() {
            let datagram_id = self.stats.datagrams_received.saturating_sub(1);
            let packet = ProtocolPacket::Quic(pkt.clone());
            self.trace.push(
                now,
                TraceEvent::PacketReceived {
                    packet,
                    datagram_id,
                },
            );
        }
        for f in pkt.frames {
            self.on_frame(now, i, f);
            if self.state.is_closed() {
                self.trace_connection_state(now, ConnectionState::Closed);
                return;
            }
        }
        if self.role == Role::Server && i == 1 && !self.path.amplification.is_validated() {
            // RFC 9000 §8.1: a Handshake packet from the client validates its address.
            self.path.amplification.validate();
        }
        if self.role == Role::Server && i == 1 && !self.spaces[0].discarded {
            // RFC 9001 §4.9.1: the server discards Initial keys when it first
            // successfully processes a Handshake packet.
            self.discard_space(0);
        }
    }

    fn on_frame(&mut self, now: SimTime, i: usize, f: Frame) {
        match f {
            Frame::Padding { .. } | Frame::Ping => {}
            Frame::Ack {
                ranges,
                ack_delay_encoded,
            } => {
                // RFC 9000 §19.3: scaled by the PEER's ack_delay_exponent (default 3,
                // §18.2); its descriptor arrives with its first datagram.
                let exponent = self
                    .peer_transport_parameters()
                    .and_then(|p| p.ack_delay_exponent)
                    .unwrap_or(DEFAULT_ACK_DELAY_EXPONENT);
                let us = ack_delay_encoded << exponent;
                self.on_ack_frame(now, i, &ranges, SimDuration::from_micros(us));
            }
            Frame::Crypto { offset, len } => {
                self.spaces[i].crypto_recv.on_data(offset, len, false);
                self.check_handshake_progress(now);
            }
            Frame::Stream {
                id,
                offset,
                len,
                fin,
            } => self.on_stream_frame(now, id, offset, len, fin),
            Frame::MaxData(v) => {
                self.send_fc.raise(v);
            }
            Frame::MaxStreamData { id, max } => {
                if let Some(s) = self.streams.get_mut(&id) {
                    s.send_fc.raise(max);
                }
            }
            Frame::MaxStreams { bidi, max } => {
                if bidi && max > self.peer_max_streams {
                    self.peer_max_streams = max;
                    self.events.push(ConnEvent::StreamsAvailable);
                }
            }
            Frame::DataBlocked(_) | Frame::StreamDataBlocked { .. } => {}
            Frame::NewConnectionId { .. } | Frame::PathResponse(_) => {}
            Frame::PathChallenge(x) => self.path.validation.responses_pending.push(x),
            Frame::ConnectionClose { .. } => {
                // Draining (RFC 9000 §10.2.2): send nothing more for three PTOs.
                let pto = self.path.recovery.pto_duration(Space::ApplicationData);
                let until = now.saturating_add(pto.saturating_mul(CLOSE_PERIOD_PTOS));
                self.state.close_peer(now, until);
                self.events.push(ConnEvent::Closed(CloseReason::PeerClose));
            }
            Frame::HandshakeDone => {
                if self.role == Role::Client && !self.state.is_handshake_confirmed() {
                    self.confirm_handshake(now);
                }
            }
        }
    }

    fn check_handshake_progress(&mut self, now: SimTime) {
        match self.role {
            Role::Client => {
                let (server_hello, server_flight) = self.server_flight_sizes();
                if !self.state.has_handshake_keys()
                    && self.spaces[0].crypto_recv.delivered >= server_hello
                {
                    self.state.advance(Handshake::KeysAvailable);
                    self.path.recovery.set_has_handshake_keys();
                    self.trace_connection_state(now, ConnectionState::HandshakeStarted);
                    self.process_undecryptable(now);
                }
                if self.state.has_handshake_keys()
                    && !self.state.is_handshake_complete()
                    && self.spaces[1].crypto_recv.delivered >= server_flight
                {
                    // Complete: 1-RTT keys both ways (RFC 9001 §4.1.1).
                    self.state.advance(Handshake::Complete);
                    self.handshake_complete_at = Some(now);
                    let n = self.cfg.client_finished_size;
                    self.spaces[1].crypto_send.write(n, false);
                    if self.zero_rtt_send
                        && !self
                            .peer_server_hello
                            .is_some_and(|h| h.early_data_accepted)
                    {
                        // RFC 9001 §4.6.2: 0-RTT rejected; its packets leave recovery and
                        // their data goes again in 1-RTT packets.
                        let lost = self
                            .path
                            .recovery
                            .remove_all_packets(Space::ApplicationData);
                        for p in lost {
                            self.requeue_frames(2, &p.info.frames);
                        }
                    }
                    self.zero_rtt_send = false; // 1-RTT from now on (RFC 9001 §4.9.3)
                    self.apply_peer_transport_parameters(now);
                    self.trace_connection_state(now, ConnectionState::HandshakeComplete);
                    self.events.push(ConnEvent::Connected);
                    self.process_undecryptable(now);
                }
            }
            Role::Server => {
                if !self.state.has_handshake_keys()
                    && self.spaces[0].crypto_recv.delivered >= self.client_hello_size()
                {
                    // Handshake keys and 1-RTT send keys (RFC 9001 §4.1.4).
                    self.state.advance(Handshake::KeysAvailable);
                    self.zero_rtt_recv = self.early_data_accepted;
                    self.path.recovery.set_has_handshake_keys();
                    let (sh, flight) = self.server_flight_sizes();
                    self.spaces[0].crypto_send.write(sh, false);
                    self.spaces[1].crypto_send.write(flight, false);
                    self.apply_peer_transport_parameters(now);
                    self.trace_connection_state(now, ConnectionState::HandshakeStarted);
                    self.process_undecryptable(now);
                }
                if self.state.has_handshake_keys()
                    && !self.state.is_handshake_complete()
                    && self.spaces[1].crypto_recv.delivered >= self.cfg.client_finished_size
                {
                    self.state.advance(Handshake::Complete);
                    self.handshake_complete_at = Some(now);
                    self.handshake_done_pending = true; // RFC 9000 §19.20
                    self.trace_connection_state(now, ConnectionState::HandshakeComplete);
                    self.confirm_handshake(now); // RFC 9001 §4.1.2: server confirms at completion
                    self.events.push(ConnEvent::Connected);
                    self.process_undecryptable(now);
                }
            }
        }
    }

    /// The peer's transport parameters (from its handshake descriptor, never our config)
    /// take effect: with the ClientHello (server) or EncryptedExtensions (client, at
    /// handshake completion).
    fn apply_peer_transport_parameters(&mut self, now: SimTime) {
        let params = self
            .peer_transport_parameters()
            .expect("the peer's handshake descriptor arrived with its handshake");
        if self.trace.is_on() {
            self.trace.push(
                now,
                TraceEvent::ParametersSet {
                    initiator: Initiator::Remote,
                    params: ProtocolParameters::Quic(params),
                },
            );
        }
        // RFC 9000 §18.2: absent limits are 0; an absent max_ack_delay is 25 ms.
        self.send_fc.raise(params.initial_max_data.unwrap_or(0));
        self.peer_max_streams = self
            .peer_max_streams
            .max(params.initial_max_streams_bidi.unwrap_or(0));
        self.peer_window_local_streams = params.initial_max_stream_data_bidi_remote.unwrap_or(0);
        self.peer_window_remote_streams = params.initial_max_stream_data_bidi_local.unwrap_or(0);
        self.peer_idle_timeout = params.max_idle_timeout;
        let max_ack_delay = params.max_ack_delay.unwrap_or(DEFAULT_MAX_ACK_DELAY);
        self.path.recovery.set_peer_max_ack_delay(max_ack_delay);
    }

    fn confirm_handshake(&mut self, now: SimTime) {
        self.state.advance(Handshake::Confirmed);
        self.trace_connection_state(now, ConnectionState::HandshakeConfirmed);
        self.handshake_confirmed_at = Some(now);
        self.path.recovery.set_handshake_confirmed();
        if self.role == Role::Client {
            self.path.recovery.set_peer_completed_address_validation();
        }
        // RFC 9001 §4.9.2: discard Handshake keys once the handshake is confirmed.
        self.discard_space(1);
        if !self.spaces[0].discarded {
            self.discard_space(0);
        }
    }

    fn discard_space(&mut self, i: usize) {
        if self.spaces[i].discarded {
            return;
        }
        let sp = &mut self.spaces[i];
        sp.discarded = true;
        sp.probes = 0;
        sp.ack_immediate = false;
        sp.ack_deadline = None;
        sp.new_since_ack = false;
        sp.crypto_send = SendBuf::default();
        self.path.recovery.discard_space(space_of(i));
        self.undecryptable.retain(|p| p.ty.space_index() != i);
    }

    fn process_undecryptable(&mut self, now: SimTime) {
        let pending = std::mem::take(&mut self.undecryptable);
        for p in pending {
            self.on_packet(now, p);
        }
    }

    fn on_ack_frame(&mut self, now: SimTime, i: usize, ranges: &[(u64, u64)], delay: SimDuration) {
        // Acknowledgements of packets never sent are a PROTOCOL_VIOLATION (RFC 9000
        // §13.1); the model never produces them.
        let out = self
            .path
            .recovery
            .on_ack_received(now, space_of(i), ranges, delay);
        for p in out.acked {
            let sp = &mut self.spaces[i];
            sp.largest_acked_by_peer = Some(sp.largest_acked_by_peer.map_or(p.pn, |l| l.max(p.pn)));
            self.on_packet_acked(now, i, p.info);
        }
        let largest = self.spaces[i].largest_acked_by_peer.unwrap_or(0);
        let threshold = self.cfg.packet_threshold;
        for p in out.lost {
            // RFC 9002 §6.1: which threshold fired (packet threshold takes precedence).
            let trigger = if largest >= p.pn.saturating_add(threshold) {
                LossTrigger::ReorderingThreshold
            } else {
                LossTrigger::TimeThreshold
            };
            self.on_packet_lost(now, i, p, trigger);
        }
        if out.persistent_congestion {
            self.trace_cwnd_state(now, Some("persistent_congestion"));
        }
    }

    fn on_packet_acked(&mut self, now: SimTime, i: usize, info: SentInfo) {
        if let Some(ranges) = info.ack_ranges {
            // RFC 9000 §13.2.4: stop acknowledging what the peer has seen acknowledged
            // (exactly the ranges that ACK carried, so a late packet below its Largest
            // Acknowledged is still reported).
            for (lo, hi) in ranges {
                self.spaces[i].to_ack.remove(lo, hi + 1);
            }
        }
        for f in info.frames {
            match f {
                Frame::Stream {
                    id,
                    offset,
                    len,
                    fin,
                } => {
                    if let Some(s) = self.streams.get_mut(&id) {
                        s.send.on_ack(offset, len, fin);
                        if s.send_complete_at.is_none() && s.send.is_complete() {
                            s.send_complete_at = Some(now);
                            self.events.push(ConnEvent::StreamSendComplete(id));
                            self.maybe_close_stream(id);
                        }
                    }
                }
                Frame::Crypto { offset, len } => {
                    self.spaces[i].crypto_send.on_ack(offset, len, false);
                }
                _ => {}
            }
        }
    }

    fn on_packet_lost(
        &mut self,
        now: SimTime,
        i: usize,
        p: SentPacket<SentInfo>,
        trigger: LossTrigger,
    ) {
        self.stats.packets_lost += 1;
        self.last_loss_trigger = trigger;
        if self.trace.is_on() {
            self.trace.push(
                now,
                TraceEvent::PacketLost {
                    packet: ProtocolPacket::Quic(QuicPacket {
                        ty: if p.info.zero_rtt {
                            PacketType::ZeroRtt
                        } else {
                            PacketType::of_space(i)
                        },
                        pn: p.pn,
                        size: p.size,
                        frames: p.info.frames.clone(),
                    }),
                    trigger,
                },
            );
        }
        if p.ack_eliciting {
            self.stats.ack_eliciting_lost += 1;
        }
        self.requeue_frames(i, &p.info.frames);
    }

    /// Queues the frames of a lost (or probed) packet again, by frame type (RFC 9000
    /// §13.3): data ranges not yet acknowledged, flow-control limits at their current
    /// value, HANDSHAKE_DONE; never ACK, PADDING, PING or PATH_*.
    fn requeue_frames(&mut self, i: usize, frames: &[Frame]) {
        for f in frames {
            match *f {
                Frame::Stream {
                    id,
                    offset,
                    len,
                    fin,
                } => {
                    if let Some(s) = self.streams.get_mut(&id) {
                        s.send.on_lost(offset, len, fin);
                    }
                }
                Frame::Crypto { offset, len } if !self.spaces[i].discarded => {
                    self.spaces[i].crypto_send.on_lost(offset, len, false);
                }
                Frame::MaxData(v) if v == self.recv_fc.limit => {
                    self.recv_fc.update_pending = true;
                }
                Frame::MaxStreamData { id, max } => {
                    if let Some(s) = self.streams.get_mut(&id) {
                        if max == s.recv_fc.limit && !s.recv.is_fully_received() {
                            s.recv_fc.update_pending = true;
                        }
                    }
                }
                Frame::MaxStreams { max, .. } if max == self.local_max_streams => {
                    self.max_streams_pending = true;
                }
                Frame::DataBlocked(v) => self.send_fc.on_blocked_lost(v, true),
                Frame::StreamDataBlocked { id, limit } => {
                    if let Some(s) = self.streams.get_mut(&id) {
                        let waiting = s.send.unsent() > 0;
                        s.send_fc.on_blocked_lost(limit, waiting);
                    }
                }
                Frame::HandshakeDone => self.handshake_done_pending = true,
                _ => {}
            }
        }
    }

    fn on_stream_frame(&mut self, now: SimTime, id: u64, offset: u64, len: u64, fin: bool) {
        let remote_bit = match self.role {
            Role::Client => 1,
            Role::Server => 0,
        };
        if !self.streams.contains_key(&id) {
            if id & 1 != remote_bit || id & 2 != 0 {
                return; // not a remote bidirectional stream we know: ignore
            }
            let index = id / 4;
            if index >= self.local_max_streams {
                self.stats.stream_limit_violations += 1; // STREAM_LIMIT_ERROR
                return;
            }
            // RFC 9000 §3.2: opening a stream opens all lower-numbered ones of its type.
            for k in 0..=index {
                let sid = k * 4 + remote_bit;
                if !self.streams.contains_key(&sid) {
                    let fc = RecvFlow::new(self.cfg.allowance, self.cfg.stream_window);
                    self.streams
                        .insert(sid, Stream::new(sid, self.peer_window_remote_streams, fc));
                    self.events.push(ConnEvent::StreamOpened(sid));
                }
            }
        }
        let s = self.streams.get_mut(&id).expect("stream exists");
        if offset + len > s.recv_fc.limit {
            self.stats.flow_control_violations += 1; // FLOW_CONTROL_ERROR
        }
        let prev_high = s.recv.highest;
        let (new, delivered) = s.recv.on_data(offset, len, fin);
        self.stats.duplicate_stream_bytes += len - new;
        let grew = s.recv.highest - prev_high;
        s.recv_fc.received = s.recv.highest;
        if delivered > 0 && s.first_byte_at.is_none() {
            s.first_byte_at = Some(now);
        }
        self.recv_fc.received += grew;
        if self.recv_fc.received > self.recv_fc.limit {
            self.stats.flow_control_violations += 1;
        }
        self.on_readable(now);
        self.check_read_complete(now, id);
    }

    // ----- the application reader ---------------------------------------------------------

    fn on_readable(&mut self, now: SimTime) {
        match self.read_rate {
            None => {
                let ids: Vec<u64> = self
                    .streams
                    .iter()
                    .filter(|(_, s)| s.recv.readable() > 0)
                    .map(|(&id, _)| id)
                    .collect();
                for id in ids {
                    let n = self.streams[&id].recv.readable();
                    self.consume(now, id, n);
                }
            }
            Some(_) => {
                if self.reader.is_none() {
                    self.start_read(now);
                }
            }
        }
    }

    /// The reader takes the next chunk (round robin over readable streams, at most one
    /// datagram's worth) and finishes reading it after `len / read_rate`.
    fn start_read(&mut self, now: SimTime) {
        let Some(rate) = self.read_rate else { return };
        let after = self.reader_cursor;
        let pick = self
            .streams
            .iter()
            .filter(|(&id, s)| s.recv.readable() > 0 && after.is_none_or(|c| id > c))
            .map(|(&id, _)| id)
            .next()
            .or_else(|| {
                self.streams
                    .iter()
                    .find(|(_, s)| s.recv.readable() > 0)
                    .map(|(&id, _)| id)
            });
        if let Some(id) = pick {
            let len = self.streams[&id]
                .recv
                .readable()
                .min(self.cfg.max_udp_payload);
            let d = rate.tx_time(len).unwrap_or(SimDuration::ZERO);
            self.reader = Some((now + d, id, len));
            self.reader_cursor = Some(id);
        }
    }

    fn consume(&mut self, now: SimTime, id: u64, n: u64) {
        let srtt = self.path.recovery.rtt().smoothed_rtt();
        let Some(s) = self.streams.get_mut(&id) else {
            return;
        };
        s.recv.consumed += n;
        s.recv_fc.consumed = s.recv.consumed;
        if !s.recv.is_fully_received() {
            s.recv_fc.maybe_update(now, srtt);
        }
        let stream_window = s.recv_fc.allowance.window();
        self.recv_fc.allowance.on_stream_window(stream_window);
        self.recv_fc.consumed += n;
        self.recv_fc.maybe_update(now, srtt);
        self.stats.stream_bytes_read += n;
        self.check_read_complete(now, id);
    }

    fn check_read_complete(&mut self, now: SimTime, id: u64) {
        let Some(s) = self.streams.get_mut(&id) else {
            return;
        };
        if s.recv_complete_at.is_none() && s.recv.is_fully_read() {
            s.recv_complete_at = Some(now);
            s.recv_fc.update_pending = false;
            self.events.push(ConnEvent::StreamReadComplete(id));
            self.maybe_close_stream(id);
        }
    }

    /// A remote-initiated stream finished in both directions frees a stream credit:
    /// raise MAX_STREAMS (RFC 9000 §4.6).
    fn maybe_close_stream(&mut self, id: u64) {
        let remote_bit = match self.role {
            Role::Client => 1,
            Role::Server => 0,
        };
        if id & 1 != remote_bit {
            return;
        }
        let s = &self.streams[&id];
        if s.recv_complete_at.is_some() && s.send_complete_at.is_some() {
            self.remote_closed += 1;
            self.local_max_streams = self.cfg.max_streams_bidi + self.remote_closed;
            self.max_streams_pending = true;
        }
    }

    // ----- timers --------------------------------------------------------------------------

    fn idle_deadline(&self) -> SimTime {
        // RFC 9000 §10.1: at least three times the current PTO.
        let pto = self.path.recovery.pto_duration(Space::Initial);
        let d = self.negotiated_idle_timeout().max(pto.saturating_mul(3));
        self.last_activity.saturating_add(d)
    }

    /// The connection's deadlines, read from their owners: the close state, the idle
    /// timer, the spaces' delayed ACKs, recovery's loss-detection timer, the reader and
    /// the pacer (only when it alone holds data back).
    fn timers(&self) -> TimerTable {
        let mut t = TimerTable::default();
        if self.state.is_closed() {
            // The end of the closing or draining period.
            t.set(Timer::Close, self.state.close_deadline());
            return t;
        }
        t.set(Timer::Idle, Some(self.idle_deadline()));
        for (i, sp) in self.spaces.iter().enumerate() {
            if !sp.discarded {
                t.set(Timer::ack(i), sp.ack_deadline);
            }
        }
        t.set(
            Timer::LossDetection,
            self.path.recovery.loss_detection_timer(),
        );
        t.set(Timer::Reader, self.reader.map(|r| r.0));
        if self.has_paced_work() {
            t.set(Timer::Pacing, self.path.pacer_release_time());
        }
        t
    }

    /// The earliest instant the connection needs [`Connection::handle_timeout`].
    pub fn poll_timeout(&self) -> Option<SimTime> {
        self.timers().next()
    }

    /// Ack-eliciting data waits and only the pacer holds it back.
    fn has_paced_work(&self) -> bool {
        self.cfg.pacing
            && self.path.recovery.can_send(self.cfg.max_udp_payload)
            && (0..3).any(|i| self.can_send_space(i) && self.has_new_data(i))
    }

    /// Timers that are due fire.
    pub fn handle_timeout(&mut self, now: SimTime) {
        if self.state.is_closed() {
            self.state.on_timeout(now);
            return;
        }
        let timers = self.timers();
        if timers.expired(Timer::Idle, now) {
            self.state.idle_timeout(now); // RFC 9000 §10.1: silently closed
            self.events
                .push(ConnEvent::Closed(CloseReason::IdleTimeout));
            self.trace_connection_state(now, ConnectionState::Closed);
            return;
        }
        for (i, sp) in self.spaces.iter_mut().enumerate() {
            if timers.expired(Timer::ack(i), now) {
                sp.ack_immediate = true;
            }
        }
        if timers.expired(Timer::Reader, now) {
            if let Some((_, id, len)) = self.reader.take() {
                self.consume(now, id, len);
                self.start_read(now);
            }
        }
        if timers.expired(Timer::LossDetection, now) {
            let out = self.path.recovery.on_loss_detection_timeout(now);
            for p in out.lost {
                let si = p.info.space;
                self.on_packet_lost(now, si, p, LossTrigger::TimeThreshold);
            }
            if let Some(space) = out.pto_probe {
                let i = Space::ALL.iter().position(|s| *s == space).unwrap_or(2);
                self.arm_probe(i);
            }
        }
        self.trace_metrics_update(now);
    }

    /// A PTO fired for space `i`: the next `pto_probes` ack-eliciting packets of that
    /// space may ignore the congestion window (RFC 9002 §6.2.4). With no new data to
    /// send, the oldest outstanding packet's data is queued again; with nothing at all,
    /// the probe is a PING.
    fn arm_probe(&mut self, i: usize) {
        if self.spaces[i].discarded {
            return;
        }
        self.spaces[i].probes = self.cfg.pto_probes;
        // RFC 9002 §6.2.4: "in addition to sending data in the packet number space for
        // which the timer expired, the sender SHOULD send ack-eliciting packets from other
        // packet number spaces with in-flight data, coalescing packets if possible". The
        // model extends this to handshake spaces holding lost CRYPTO data waiting for the
        // congestion window (else a lost ServerHello can wait forever behind Handshake
        // packets the client cannot decrypt, hence never acknowledges).
        for j in 0..2 {
            if j != i
                && !self.spaces[j].discarded
                && self.can_send_space(j)
                && (self.path.recovery.ack_eliciting_in_flight(space_of(j)) > 0
                    || self.spaces[j].crypto_send.has_retx())
            {
                self.spaces[j].probes = self.spaces[j].probes.max(1);
                if !self.has_new_data(j) {
                    self.requeue_oldest_outstanding(j);
                }
            }
        }
        // Model extension of the same SHOULD: a resuming client probing a handshake space
        // also probes its 0-RTT data in flight (else a lost first flight leaves the
        // request waiting for the application-data PTO, armed only after confirmation).
        if i < 2
            && self.zero_rtt_send
            && self
                .path
                .recovery
                .ack_eliciting_in_flight(Space::ApplicationData)
                > 0
        {
            self.spaces[2].probes = self.spaces[2].probes.max(1);
            if !self.has_new_data(2) {
                self.requeue_oldest_outstanding(2);
            }
        }
        if self.has_new_data(i) {
            return;
        }
        self.requeue_oldest_outstanding(i);
    }

    /// Queues the data of the oldest outstanding ack-eliciting packet of space `i` again
    /// (a probe's "retransmission", RFC 9002 §6.2.4), without declaring it lost.
    fn requeue_oldest_outstanding(&mut self, i: usize) {
        let frames: Vec<Frame> = self
            .path
            .recovery
            .outstanding(space_of(i))
            .find(|p| p.ack_eliciting && p.info.frames.iter().any(is_retransmittable))
            .map(|p| p.info.frames.clone())
            .unwrap_or_default();
        self.requeue_frames(i, &frames);
    }

    fn has_new_data(&self, i: usize) -> bool {
        let sp = &self.spaces[i];
        if sp.crypto_send.has_new() || sp.crypto_send.has_retx() {
            return true;
        }
        i == 2 && (self.has_control_frames() || self.has_sendable_stream_data())
    }

    fn has_control_frames(&self) -> bool {
        self.handshake_done_pending
            || self.recv_fc.update_pending
            || self.max_streams_pending
            || self.send_fc.blocked_pending()
            || !self.path.validation.responses_pending.is_empty()
            || self.streams.values().any(|s| {
                s.send_fc.blocked_pending()
                    || (s.recv_fc.update_pending && !s.recv.is_fully_received())
            })
    }

    /// Stream data that flow control lets us send now (retransmissions always can).
    fn has_sendable_stream_data(&self) -> bool {
        let conn_credit = self.send_fc.credit();
        self.streams.values().any(|s| {
            s.send.has_retx()
                || (s.send.has_new()
                    && (s.send.unsent() == 0 || (s.send_credit() > 0 && conn_credit > 0)))
        })
    }

    fn has_unsent_stream_data(&self) -> bool {
        self.streams
            .values()
            .any(|s| s.send.has_retx() || s.send.has_new())
    }

    // ----- output --------------------------------------------------------------------------

    fn can_send_space(&self, i: usize) -> bool {
        if self.spaces[i].discarded {
            return false;
        }
        match i {
            0 => true,
            1 => self.state.has_handshake_keys(),
            _ => self.state.can_send_1rtt(self.role) || self.zero_rtt_send,
        }
    }

    fn amplification_budget(&self) -> u64 {
        self.path.amplification.budget()
    }

    fn update_amplification_state(&mut self) {
        if self.role == Role::Server {
            // At the limit when not even a minimal packet fits (RFC 9002 §6.2.2.1: no PTO
            // is armed then).
            let at_limit = self.path.amplification.at_limit();
            self.path.recovery.set_at_anti_amplification_limit(at_limit);
        }
    }

    /// The pacing gain in permille: `pacing_gain_slow_start` while the controller is in
    /// slow start, `pacing_gain` otherwise (Chromium: 2 and 1.25; RFC 9002 §7.7: one gain).
    fn pacing_gain(&self) -> u64 {
        self.path.pacing_gain()
    }

    /// The next datagram to send now, with its UDP payload size.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<(QuicDatagram, u64)> {
        if self.state.is_closed() {
            return self.poll_close(now);
        }
        let mds = self.cfg.max_udp_payload;
        let amp = self.amplification_budget();
        let budget = mds.min(amp);
        self.path.pacer_refill(now);
        let cc_ok = self.path.recovery.can_send(mds);
        let paced_ok = self.path.pacer.can_send();
        let send_ok = cc_ok && paced_ok;
        let mut packets: Vec<(QuicPacket, SentInfo)> = Vec::new();
        let mut size = 0u64;
        for i in 0..3 {
            if !self.can_send_space(i) {
                continue;
            }
            let remaining = budget - size;
            // An ack-eliciting Initial needs a datagram of at least 1200 bytes
            // (RFC 9000 §14.1); the server may not be able to afford it.
            let initial_ok =
                i != 0 || remaining >= MIN_INITIAL_DATAGRAM || self.role == Role::Client;
            if let Some((pkt, info)) = self.build_packet(now, i, remaining, send_ok, initial_ok) {
                size += pkt.size;
                let short = pkt.ty == PacketType::OneRtt;
                packets.push((pkt, info));
                if short {
                    break; // a short-header packet must be last (RFC 9000 §12.2)
                }
            }
        }
        if packets.is_empty() {
            if self.role == Role::Server && amp < mds && self.has_unsent_anything() {
                self.stats.amplification_blocked_events += 1;
            }
            self.update_block_state(now, cc_ok);
            self.update_amplification_state();
            return None;
        }
        // Padding (RFC 9000 §14.1): a client pads every datagram carrying an Initial
        // packet; a server every datagram carrying an ack-eliciting Initial packet.
        let has_initial = packets.iter().any(|(p, _)| p.ty == PacketType::Initial);
        let eliciting_initial = packets
            .iter()
            .any(|(p, _)| p.ty == PacketType::Initial && p.is_ack_eliciting());
        let must_pad = match self.role {
            Role::Client => has_initial,
            Role::Server => eliciting_initial,
        };
        if must_pad && size < MIN_INITIAL_DATAGRAM {
            // PADDING in the last packet. A long header's Length varint can grow by a byte
            // with the padding, so the size is recomputed, not just added.
            let want = (MIN_INITIAL_DATAGRAM - size).min(budget - size);
            let cid = self.cfg.cid_len;
            let last = &mut packets.last_mut().expect("non-empty").0;
            let token = if last.ty == PacketType::Initial && self.role == Role::Client {
                self.initial_token_len
            } else {
                0
            };
            let hdr = header_len_without_pn(last.ty, cid, cid, token);
            let largest_acked = self.spaces[last.ty.space_index()].largest_acked_by_peer;
            let pnl = pn_len(last.pn, largest_acked);
            let frames_len: u64 = last.frames.iter().map(Frame::wire_size).sum();
            debug_assert_eq!(packet_size(hdr, last.ty, pnl, frames_len), last.size);
            let mut pad = want;
            while pad > 0 && packet_size(hdr, last.ty, pnl, frames_len + pad) > last.size + want {
                pad -= 1;
            }
            if pad > 0 {
                last.frames.push(Frame::Padding { len: pad });
                let new_size = packet_size(hdr, last.ty, pnl, frames_len + pad);
                size += new_size - last.size;
                last.size = new_size;
            }
        }
        // Register with loss recovery.
        let bif_before = self.path.recovery.bytes_in_flight();
        let cwnd = self.path.recovery.cwnd();
        let mut any_in_flight = false;
        let mut any_eliciting = false;
        let mut probe = false;
        let mut probe_flags = Vec::with_capacity(packets.len());
        for (pkt, _) in &packets {
            let i = pkt.ty.space_index();
            let is_probe = pkt.is_ack_eliciting() && self.spaces[i].probes > 0;
            if is_probe {
                self.spaces[i].probes -= 1;
                probe = true;
            }
            probe_flags.push(is_probe);
        }
        let datagram_id = self.stats.datagrams_sent;
        let app_limited = !self.has_sendable_stream_data();
        let mut out = QuicDatagram::default();
        self.stamp_datagram(&mut out);
        for ((pkt, info), is_probe) in packets.into_iter().zip(probe_flags) {
            let i = pkt.ty.space_index();
            if pkt.ty == PacketType::ZeroRtt {
                self.stats.zero_rtt_packets_sent += 1;
                for f in &pkt.frames {
                    if let Frame::Stream { len, .. } = f {
                        self.stats.zero_rtt_stream_bytes += len;
                    }
                }
            }
            if self.trace.is_on() {
                let trigger = if is_probe {
                    Some(SendTrigger::PtoProbe)
                } else if info.retransmission && i < 2 {
                    Some(SendTrigger::RetransmitCrypto)
                } else if info.retransmission {
                    Some(match self.last_loss_trigger {
                        LossTrigger::ReorderingThreshold => SendTrigger::RetransmitReordered,
                        _ => SendTrigger::RetransmitTimeout,
                    })
                } else {
                    None
                };
                self.trace.push(
                    now,
                    TraceEvent::PacketSent {
                        packet: ProtocolPacket::Quic(pkt.clone()),
                        datagram_id,
                        trigger,
                    },
                );
            }
            let eliciting = pkt.is_ack_eliciting();
            let padded = pkt
                .frames
                .iter()
                .any(|f| matches!(f, Frame::Padding { .. }));
            let in_flight = eliciting || padded; // RFC 9002 §2: PADDING counts in flight
            any_in_flight |= in_flight;
            any_eliciting |= eliciting;
            self.stats.packets_sent += 1;
            if info.retransmission {
                self.stats.packets_retransmitted += 1;
            }
            let sent = SentPacket {
                pn: pkt.pn,
                time_sent: now,
                size: pkt.size,
                ack_eliciting: eliciting,
                in_flight,
                app_limited,
                info,
            };
            self.path.recovery.on_packet_sent(now, space_of(i), sent);
            if self.role == Role::Client && i == 1 && !self.spaces[0].discarded {
                // RFC 9001 §4.9.1: the client discards Initial keys when it first sends a
                // Handshake packet.
                out.packets.push(pkt);
                self.discard_space(0);
                continue;
            }
            out.packets.push(pkt);
        }
        // Only ack-eliciting datagrams are congestion controlled: an ACK-only Initial that
        // a client must pad to 1200 B (RFC 9000 §14.1) is in flight (PADDING, RFC 9002 §2)
        // but is not held back by the window.
        if any_eliciting && !probe && bif_before + size > cwnd {
            self.stats.cwnd_violations += 1;
        }
        if any_in_flight {
            self.path.pacer.on_sent(size);
        }
        if any_eliciting && !self.eliciting_sent_since_recv {
            // RFC 9000 §10.1: the idle timer also restarts on the first ack-eliciting
            // packet sent since the last reception.
            self.eliciting_sent_since_recv = true;
            self.last_activity = now;
        }
        self.stats.datagrams_sent += 1;
        self.stats.bytes_sent += size;
        self.path.amplification.on_sent(size);
        self.update_amplification_state();
        self.set_block_state(now, BlockState::None);
        self.trace_metrics_update(now);
        debug_assert_eq!(out.size(), size);
        Some((out, size))
    }

    fn has_unsent_anything(&self) -> bool {
        (0..3).any(|i| !self.spaces[i].discarded && self.spaces[i].crypto_send.has_new())
            || self.has_unsent_stream_data()
    }

    fn update_block_state(&mut self, now: SimTime, cc_ok: bool) {
        let st = if !self.has_unsent_stream_data() {
            BlockState::None
        } else if self.has_sendable_stream_data() {
            if self.amplification_budget() < self.cfg.max_udp_payload {
                BlockState::Amplification
            } else if !cc_ok {
                BlockState::Cwnd
            } else {
                BlockState::None
            }
        } else {
            BlockState::FlowControl
        };
        self.set_block_state(now, st);
    }

    fn set_block_state(&mut self, now: SimTime, st: BlockState) {
        if st == self.block_state {
            return;
        }
        if self.trace.is_on() {
            if let Some((stream, reason)) = self.blocked_reason(self.block_state) {
                self.trace.push(
                    now,
                    TraceEvent::DataBlockedUpdated {
                        stream,
                        blocked: false,
                        reason,
                    },
                );
            }
            if let Some((stream, reason)) = self.blocked_reason(st) {
                self.trace.push(
                    now,
                    TraceEvent::DataBlockedUpdated {
                        stream,
                        blocked: true,
                        reason,
                    },
                );
            }
        }
        let d = now.saturating_since(self.block_since);
        match self.block_state {
            BlockState::None => {}
            BlockState::Cwnd => self.stats.cwnd_blocked += d,
            BlockState::FlowControl => self.stats.flow_control_blocked += d,
            BlockState::Amplification => self.stats.amplification_blocked += d,
        }
        self.block_state = st;
        self.block_since = now;
    }

    /// Closes the time accounting at `now` (for end-of-run metrics).
    pub fn blocked_times(&self, now: SimTime) -> (SimDuration, SimDuration, SimDuration) {
        let d = now.saturating_since(self.block_since);
        let (mut c, mut f, mut a) = (
            self.stats.cwnd_blocked,
            self.stats.flow_control_blocked,
            self.stats.amplification_blocked,
        );
        match self.block_state {
            BlockState::None => {}
            BlockState::Cwnd => c += d,
            BlockState::FlowControl => f += d,
            BlockState::Amplification => a += d,
        }
        (c, f, a)
    }

    fn build_packet(
        &mut self,
        now: SimTime,
        i: usize,
        remaining: u64,
        cc_ok: bool,
        initial_ok: bool,
    ) -> Option<(QuicPacket, SentInfo)> {
        let ty = if i == 2 && !self.state.can_send_1rtt(self.role) {
            PacketType::ZeroRtt // client before 1-RTT keys (RFC 9000 §17.2.3)
        } else {
            PacketType::of_space(i)
        };
        let cid = self.cfg.cid_len;
        let hdr = header_len_without_pn(ty, cid, cid, self.token_len(ty));
        let pn = self.spaces[i].next_pn;
        let pnl = pn_len(pn, self.spaces[i].largest_acked_by_peer);
        // Long headers carry a Length varint: 2 bytes for any packet up to 16383 bytes.
        let length_field = if ty == PacketType::OneRtt { 0 } else { 2 };
        let fixed = hdr + length_field + pnl + AEAD_TAG_LEN;
        if remaining < fixed + MIN_PN_PLUS_PAYLOAD {
            return None;
        }
        let mut room = remaining - fixed;
        let mut frames: Vec<Frame> = Vec::new();
        let mut info = SentInfo {
            space: i,
            zero_rtt: ty == PacketType::ZeroRtt,
            ..SentInfo::default()
        };

        // No ACK frames in 0-RTT packets (RFC 9000 §12.4).
        let ack_wanted = self.spaces[i].new_since_ack
            && !self.spaces[i].to_ack.is_empty()
            && ty != PacketType::ZeroRtt;
        let ack_due = self.spaces[i].ack_due(now);
        if ack_wanted {
            let (ranges, exp) = (self.cfg.max_ack_ranges, self.cfg.ack_delay_exponent);
            if let Some(f) = packetizer::build_ack(&self.spaces[i], now, room, ranges, exp) {
                if let Frame::Ack { ref ranges, .. } = f {
                    info.ack_ranges = Some(ranges.clone());
                }
                room -= f.wire_size();
                frames.push(f);
            }
        }
        let probe = self.spaces[i].probes > 0;
        let mut eliciting = false;
        if (cc_ok || probe) && initial_ok {
            if i == 2 {
                eliciting |= self.write_control_frames(&mut frames, &mut room);
            }
            if i < 2 {
                let cs = &mut self.spaces[i].crypto_send;
                eliciting |= packetizer::write_crypto_frames(cs, &mut frames, &mut room, &mut info);
            } else {
                let src = StreamSource {
                    streams: &mut self.streams,
                    send_fc: &mut self.send_fc,
                    scheduler: self.cfg.scheduler,
                    rr_cursor: &mut self.rr_cursor,
                    bytes_retransmitted: &mut self.stats.stream_bytes_retransmitted,
                };
                eliciting |=
                    packetizer::write_stream_frames(src, &mut frames, &mut room, &mut info);
            }
            if probe && !eliciting && room >= 1 {
                frames.push(Frame::Ping);
                room -= 1;
                eliciting = true;
            }
        }
        if frames.is_empty() || (!eliciting && !ack_due) {
            return None;
        }
        let _ = room;
        let mut frames_len: u64 = frames.iter().map(Frame::wire_size).sum();
        if pnl + frames_len < MIN_PN_PLUS_PAYLOAD {
            // RFC 9001 §5.4.2: enough bytes for the header-protection sample.
            let pad = MIN_PN_PLUS_PAYLOAD - pnl - frames_len;
            frames.push(Frame::Padding { len: pad });
            frames_len += pad;
        }
        let size = packet_size(hdr, ty, pnl, frames_len);
        debug_assert!(size <= remaining, "packet {size} > room {remaining}");
        let sp = &mut self.spaces[i];
        sp.next_pn += 1;
        if info.ack_ranges.is_some() {
            sp.on_ack_sent();
        }
        info.frames = frames
            .iter()
            .filter(|f| is_retransmittable(f))
            .cloned()
            .collect();
        Some((
            QuicPacket {
                ty,
                pn,
                size,
                frames,
            },
            info,
        ))
    }

    fn write_control_frames(&mut self, frames: &mut Vec<Frame>, room: &mut u64) -> bool {
        let mut wrote = false;
        let push = packetizer::push_frame;
        if self.handshake_done_pending && push(Frame::HandshakeDone, frames, room) {
            self.handshake_done_pending = false;
            wrote = true;
        }
        while let Some(&x) = self.path.validation.responses_pending.first() {
            if !push(Frame::PathResponse(x), frames, room) {
                break;
            }
            self.path.validation.responses_pending.remove(0);
            wrote = true;
        }
        if self.recv_fc.update_pending && push(Frame::MaxData(self.recv_fc.limit), frames, room) {
            self.recv_fc.update_pending = false;
            self.stats.max_data_sent += 1;
            wrote = true;
        }
        if self.max_streams_pending
            && push(
                Frame::MaxStreams {
                    bidi: true,
                    max: self.local_max_streams,
                },
                frames,
                room,
            )
        {
            self.max_streams_pending = false;
            wrote = true;
        }
        // Blocked signals (RFC 9000 §4.1): once per limit.
        let conn_credit = self.send_fc.credit();
        let mut conn_blocked = false;
        for s in self.streams.values_mut() {
            if s.send.unsent() > 0 && s.send_credit() == 0 {
                s.send_fc.on_blocked();
            }
            if s.send.unsent() > 0 && s.send_credit() > 0 && conn_credit == 0 {
                conn_blocked = true;
            }
        }
        if conn_blocked {
            self.send_fc.on_blocked();
        }
        if self.send_fc.blocked_pending()
            && push(Frame::DataBlocked(self.send_fc.limit()), frames, room)
        {
            self.send_fc.on_blocked_sent();
            self.stats.data_blocked_sent += 1;
            wrote = true;
        }
        let mut n_msd = 0;
        let mut n_sdb = 0;
        for s in self.streams.values_mut() {
            if s.recv_fc.update_pending && !s.recv.is_fully_received() {
                let f = Frame::MaxStreamData {
                    id: s.id,
                    max: s.recv_fc.limit,
                };
                if push(f, frames, room) {
                    s.recv_fc.update_pending = false;
                    n_msd += 1;
                    wrote = true;
                }
            } else if s.recv.is_fully_received() {
                s.recv_fc.update_pending = false;
            }
            if s.send_fc.blocked_pending() {
                let f = Frame::StreamDataBlocked {
                    id: s.id,
                    limit: s.send_fc.limit(),
                };
                if push(f, frames, room) {
                    s.send_fc.on_blocked_sent();
                    n_sdb += 1;
                    wrote = true;
                }
            }
        }
        self.stats.max_stream_data_sent += n_msd;
        self.stats.stream_data_blocked_sent += n_sdb;
        wrote
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

//! Connection lifecycle: a sequence of QUIC connections between one client and one
//! server (workload `quic_connections`), with session tickets, 0-RTT, address-validation
//! tokens, idle timeout and explicit close. See `docs/lifecycle.md`.
//!
//! - [`ConnectionsClient`] owns the sequence: it creates a fresh [`Connection`] for each
//!   [`ConnectionSpec`] at its start time (absolute, or a gap after the previous one
//!   ended), keeps the [`SessionTicket`] the last confirmed connection left, and resumes
//!   with it when the spec says `resume = true`.
//! - [`ConnectionsServer`] accepts a new [`Connection`] per connection number (the
//!   Destination Connection ID, [`QuicDatagram::conn`]) and keeps the per-server
//!   [`ServerStore`]: the tickets and tokens it issued, and the [`HistoryPolicy`] hook that
//!   samples the congestion window when a 0-RTT resumption completes and when a
//!   connection closes (paper 000) and may choose a new connection's initial window.
//!
//! Both run the `bulk` workload on every connection (requests on `streams` streams, the
//! server answers each with its share of `bytes`). The server knows each connection's
//! workload from the same list of specs: the request names the object, as a URL would.

use super::config::QuicConfig;
// The connection-sequence spec is configuration data; it lives in the config layer.
use super::connection::{CloseReason, ConnEvent, Connection, Role, SessionTicket};
use super::endpoint::{connection_metrics, QuicMetrics};
pub use crate::config::workload::{CloseMode, ConnectionSpec};
use crate::endpoint::Endpoint;
use crate::metrics::EndpointMetrics;
use crate::packet::{Addr, Datagram, FlowId, Payload};
use crate::time::{SimDuration, SimTime};
use crate::wire::quic::QuicDatagram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a connection's report says happened to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConnectionStatus {
    /// The workload completed (client: every response read; server: every response
    /// acknowledged).
    Completed,
    /// The connection closed before its workload completed.
    Failed,
    /// Still running at the end of the run.
    Open,
    /// Never started (client: the run ended first).
    NotStarted,
}

/// One connection of a sequence, in the endpoint's metrics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConnectionReport {
    /// Position in the sequence (the connection number).
    pub index: u64,
    /// This side's address for the connection.
    pub local: String,
    /// Start (client: connection opened; server: first datagram), seconds from the run
    /// start.
    pub start_secs: Option<f64>,
    /// When the connection closed at this side, seconds from the run start.
    pub close_secs: Option<f64>,
    /// `idle_timeout`, `local_close` (CONNECTION_CLOSE sent) or `peer_close` (received).
    pub close_reason: Option<String>,
    /// The last activity that restarted the idle timer (a datagram received, or the
    /// first ack-eliciting packet sent after one; RFC 9000 §10.1), seconds from the run
    /// start.
    pub last_activity_secs: f64,
    /// The effective idle timeout, `max(idle_timeout, 3 PTO)` (RFC 9000 §10.1), at the
    /// end (or at the close), seconds.
    pub idle_timeout_secs: f64,
    /// Outcome.
    pub status: ConnectionStatus,
    /// The client presented a session ticket (client) / the server accepted one (server).
    pub ticket: bool,
    /// The abbreviated (resumed) handshake was used.
    pub resumed: bool,
    /// 0-RTT: `None` if not attempted, else whether the server accepted it.
    pub zero_rtt_accepted: Option<bool>,
    /// Client: its Initials carried an address-validation token. Server: the token
    /// validated the client's address at the first Initial.
    pub token: bool,
    /// 0-RTT packets sent (client).
    pub zero_rtt_packets: u64,
    /// Stream bytes sent in 0-RTT packets (client).
    pub zero_rtt_stream_bytes: u64,
    /// 0-RTT packets dropped because 0-RTT was rejected (server).
    pub zero_rtt_packets_rejected: u64,
    /// The connection's own metrics; times relative to its start.
    pub metrics: QuicMetrics,
}

/// The event at which the server samples a connection for its history.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HistoryEvent {
    /// A resumed connection (ticket accepted) completed its handshake at the server.
    ResumptionComplete,
    /// The connection closed by idle timeout.
    IdleClose,
    /// The connection closed by CONNECTION_CLOSE (either side).
    ExplicitClose,
}

/// One sample for the server's history (paper 000: the congestion window at 0-RTT
/// resumptions and connection closes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistorySample {
    /// When, seconds from the run start.
    pub time_secs: f64,
    /// Which event.
    pub event: HistoryEvent,
    /// Connection number.
    pub connection: u64,
    /// Client address.
    pub client: String,
    /// Congestion window at the event, bytes.
    pub cwnd: u64,
    /// Smoothed RTT at the event, seconds.
    pub srtt_secs: f64,
}

/// The hook a history-based policy implements (paper 000). The server calls
/// [`HistoryPolicy::on_sample`] at every [`HistoryEvent`] and asks
/// [`HistoryPolicy::initial_cwnd`] when it accepts a new connection.
pub trait HistoryPolicy: std::fmt::Debug {
    /// A sample was taken.
    fn on_sample(&mut self, sample: &HistorySample);
    /// The initial congestion window (bytes) for a new connection from the client at IP
    /// `client` (big-endian, as [`Addr::ip`])
    /// (`resumed`: it presented a valid ticket), or `None` to keep the configured one.
    fn initial_cwnd(&self, _client: u32, _resumed: bool, _default: u64) -> Option<u64> {
        None
    }
}

/// The default policy: samples are recorded (in the server's metrics) and change nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoHistory;

impl HistoryPolicy for NoHistory {
    fn on_sample(&mut self, _sample: &HistorySample) {}
}

/// Server-side state that outlives connections: tickets and tokens issued, the history
/// samples and the policy. One per server endpoint (the run owns the endpoints; nothing
/// is global).
#[derive(Debug)]
pub struct ServerStore {
    /// Ticket id -> when it was issued (the server issues ticket `k` when connection `k`
    /// completes its handshake, with the NewSessionTicket it sends after HANDSHAKE_DONE).
    tickets: BTreeMap<u64, SimTime>,
    /// Token id -> the client address it was issued to (RFC 9000 §8.1.3: a token is valid
    /// only from that address).
    tokens: BTreeMap<u64, u32>,
    /// Samples taken, oldest first.
    pub samples: Vec<HistorySample>,
    /// The policy.
    pub policy: Box<dyn HistoryPolicy>,
}

impl Default for ServerStore {
    fn default() -> Self {
        ServerStore {
            tickets: BTreeMap::new(),
            tokens: BTreeMap::new(),
            samples: Vec::new(),
            policy: Box::new(NoHistory),
        }
    }
}

impl ServerStore {
    /// Tickets issued.
    pub fn tickets_issued(&self) -> usize {
        self.tickets.len()
    }

    fn sample(&mut self, now: SimTime, event: HistoryEvent, k: u64, client: Addr, c: &Connection) {
        let s = HistorySample {
            time_secs: now.as_secs_f64(),
            event,
            connection: k,
            client: client.to_string(),
            cwnd: c.recovery().cwnd(),
            srtt_secs: c.recovery().rtt().smoothed_rtt().as_secs_f64(),
        };
        self.policy.on_sample(&s);
        self.samples.push(s);
    }
}

/// The `bulk` workload state of one connection.
#[derive(Clone, Debug)]
struct BulkApp {
    streams: u64,
    bytes: u64,
    request_size: u64,
    requests_opened: u64,
    finished_streams: u64,
    completed_at: Option<SimTime>,
}

impl BulkApp {
    fn new(spec: &ConnectionSpec) -> Self {
        BulkApp {
            streams: spec.streams,
            bytes: spec.bytes,
            request_size: spec.request_size,
            requests_opened: 0,
            finished_streams: 0,
            completed_at: None,
        }
    }

    fn response_size(&self, id: u64) -> u64 {
        let k = id / 4;
        self.bytes / self.streams + u64::from(k < self.bytes % self.streams)
    }

    /// Handles one event; returns `true` when the workload just completed.
    fn on_event(&mut self, now: SimTime, conn: &mut Connection, ev: ConnEvent) -> bool {
        match (conn.role(), ev) {
            (
                Role::Client,
                ConnEvent::Connected | ConnEvent::StreamsAvailable | ConnEvent::EarlyDataReady,
            ) => {
                while self.requests_opened < self.streams {
                    let Some(id) = conn.open_stream() else {
                        break;
                    };
                    conn.write(id, self.request_size, true);
                    self.requests_opened += 1;
                }
                false
            }
            (Role::Server, ConnEvent::StreamReadComplete(id)) if id / 4 < self.streams => {
                let n = self.response_size(id);
                conn.write(id, n, true);
                false
            }
            (Role::Client, ConnEvent::StreamReadComplete(_))
            | (Role::Server, ConnEvent::StreamSendComplete(_)) => {
                self.finished_streams += 1;
                if self.finished_streams == self.streams && self.completed_at.is_none() {
                    self.completed_at = Some(now);
                    return true;
                }
                false
            }
            _ => false,
        }
    }
}

fn reason_name(r: CloseReason) -> &'static str {
    match r {
        CloseReason::IdleTimeout => "idle_timeout",
        CloseReason::LocalClose => "local_close",
        CloseReason::PeerClose => "peer_close",
    }
}

fn status_of(conn: &Connection, app: &BulkApp) -> ConnectionStatus {
    if app.completed_at.is_some() {
        ConnectionStatus::Completed
    } else if conn.is_closed() {
        ConnectionStatus::Failed
    } else {
        ConnectionStatus::Open
    }
}

fn report(
    index: u64,
    local: Addr,
    conn: &Connection,
    app: &BulkApp,
    token: bool,
    now: SimTime,
) -> ConnectionReport {
    let ci = conn.close_info();
    ConnectionReport {
        index,
        local: local.to_string(),
        start_secs: Some(conn.started_at().as_secs_f64()),
        close_secs: ci.map(|c| c.at.as_secs_f64()),
        close_reason: ci.map(|c| reason_name(c.reason).to_string()),
        last_activity_secs: conn.last_activity().as_secs_f64(),
        idle_timeout_secs: conn.idle_timeout().as_secs_f64(),
        status: status_of(conn, app),
        ticket: match conn.role() {
            Role::Client => conn.has_ticket(),
            Role::Server => conn.is_resumed(),
        },
        resumed: conn.is_resumed(),
        zero_rtt_accepted: conn.early_data_accepted(),
        token,
        zero_rtt_packets: conn.stats.zero_rtt_packets_sent,
        zero_rtt_stream_bytes: conn.stats.zero_rtt_stream_bytes,
        zero_rtt_packets_rejected: conn.stats.zero_rtt_packets_rejected,
        metrics: connection_metrics(conn, app.completed_at, now),
    }
}

/// The sequence's totals (see `docs/lifecycle.md`): counters summed over the connections;
/// handshake and first byte of the first connection; completion from the first
/// connection's start to the last one's completion (when every connection completed);
/// end-of-run state (cwnd, RTT, bytes in flight) of the last connection.
fn totals(role: Role, reports: Vec<ConnectionReport>, all_completed: bool) -> QuicMetrics {
    let mut t = match reports.last() {
        Some(r) => r.metrics.clone(),
        None => {
            let c = Connection::new(role, QuicConfig::default(), None);
            connection_metrics(&c, None, SimTime::ZERO)
        }
    };
    if let Some(first) = reports.first() {
        t.handshake_secs = first.metrics.handshake_secs;
        t.handshake_confirmed_secs = first.metrics.handshake_confirmed_secs;
        t.time_to_first_byte_secs = first.metrics.time_to_first_byte_secs;
    }
    let sum = |f: fn(&QuicMetrics) -> u64| reports.iter().map(|r| f(&r.metrics)).sum::<u64>();
    let sumf = |f: fn(&QuicMetrics) -> f64| reports.iter().map(|r| f(&r.metrics)).sum::<f64>();
    t.stream_bytes_read = sum(|m| m.stream_bytes_read);
    t.datagrams_sent = sum(|m| m.datagrams_sent);
    t.bytes_sent = sum(|m| m.bytes_sent);
    t.packets_sent = sum(|m| m.packets_sent);
    t.packets_lost = sum(|m| m.packets_lost);
    t.packets_retransmitted = sum(|m| m.packets_retransmitted);
    t.stream_bytes_retransmitted = sum(|m| m.stream_bytes_retransmitted);
    t.spurious_losses = sum(|m| m.spurious_losses);
    t.duplicate_stream_bytes = sum(|m| m.duplicate_stream_bytes);
    t.pto_count = sum(|m| m.pto_count);
    t.congestion_events = sum(|m| m.congestion_events);
    t.persistent_congestion = sum(|m| m.persistent_congestion);
    t.data_blocked_sent = sum(|m| m.data_blocked_sent);
    t.stream_data_blocked_sent = sum(|m| m.stream_data_blocked_sent);
    t.max_data_sent = sum(|m| m.max_data_sent);
    t.max_stream_data_sent = sum(|m| m.max_stream_data_sent);
    t.cwnd_blocked_secs = sumf(|m| m.cwnd_blocked_secs);
    t.flow_control_blocked_secs = sumf(|m| m.flow_control_blocked_secs);
    t.amplification_blocked_secs = sumf(|m| m.amplification_blocked_secs);
    t.loss_ratio = if t.packets_sent > 0 {
        t.packets_lost as f64 / t.packets_sent as f64
    } else {
        0.0
    };
    t.stream_completion_secs = Vec::new();
    t.completion_secs = None;
    t.goodput_bps = None;
    if all_completed && !reports.is_empty() {
        let start = reports[0].start_secs.unwrap_or(0.0);
        let end = reports
            .iter()
            .filter_map(|r| Some(r.start_secs? + r.metrics.completion_secs?))
            .fold(start, f64::max);
        let total = end - start;
        t.completion_secs = Some(total);
        if role == Role::Client && total > 0.0 {
            t.goodput_bps = Some(t.stream_bytes_read as f64 * 8.0 / total);
        }
    }
    t.closed = reports.iter().all(|r| r.close_secs.is_some());
    t.connections = reports;
    t
}

fn quic_datagram(local: Addr, remote: Addr, flow: FlowId, d: QuicDatagram, size: u64) -> Datagram {
    let size = u32::try_from(size).expect("datagram size fits u32");
    Datagram::new(local, remote, size, flow, Payload::Quic(Box::new(d)))
}

/// One connection of the client's sequence.
#[derive(Debug)]
struct ClientConn {
    conn: Connection,
    app: BulkApp,
    local: Addr,
    close: CloseMode,
    /// The workload completed and the close mode is explicit: close once the stack has
    /// sent what it had queued.
    close_wanted: bool,
    ticket_taken: bool,
}

/// The client of a `quic_connections` flow: runs the connections of its sequence one
/// after another (or overlapping, with absolute start times), carrying the session ticket
/// from one to the next.
#[derive(Debug)]
pub struct ConnectionsClient {
    base: QuicConfig,
    specs: Vec<ConnectionSpec>,
    local: Addr,
    remote: Addr,
    flow: FlowId,
    conns: Vec<ClientConn>,
    /// When the next connection (`conns.len()`) starts, once known.
    next_start: Option<SimTime>,
    ticket: Option<SessionTicket>,
    tracing: bool,
    /// Datagrams for a connection that is gone or unknown (dropped).
    pub stray_datagrams: u64,
}

impl ConnectionsClient {
    /// A client at `local` talking to the server at `remote`, accounted to `flow`.
    pub fn new(
        base: QuicConfig,
        specs: Vec<ConnectionSpec>,
        local: Addr,
        remote: Addr,
        flow: FlowId,
    ) -> Self {
        ConnectionsClient {
            base,
            specs,
            local,
            remote,
            flow,
            conns: Vec::new(),
            next_start: None,
            ticket: None,
            tracing: false,
            stray_datagrams: 0,
        }
    }

    /// The connections started so far, in order.
    pub fn connections(&self) -> impl Iterator<Item = &Connection> {
        self.conns.iter().map(|c| &c.conn)
    }

    /// The ticket the next resumption would use.
    pub fn ticket(&self) -> Option<&SessionTicket> {
        self.ticket.as_ref()
    }

    fn open_due(&mut self, now: SimTime) {
        while self.next_start.is_some_and(|t| t <= now) && self.conns.len() < self.specs.len() {
            let k = self.conns.len();
            let spec = self.specs[k].clone();
            let mut conn = Connection::new(Role::Client, spec.config(&self.base), None);
            conn.trace.set_on(self.tracing);
            if spec.resume {
                if let Some(t) = &self.ticket {
                    conn.set_resumption(t.clone());
                }
            }
            conn.start(now);
            self.conns.push(ClientConn {
                conn,
                app: BulkApp::new(&spec),
                local: self.local,
                close: spec.close,
                close_wanted: false,
                ticket_taken: false,
            });
            // The next one: at its absolute start, or after this one ends.
            self.next_start = self
                .specs
                .get(k + 1)
                .and_then(|s| s.start)
                .map(|t| t.max(now));
            self.drive(now, k);
        }
    }

    fn drive(&mut self, now: SimTime, k: usize) {
        loop {
            let c = &mut self.conns[k];
            let events = c.conn.take_events();
            if events.is_empty() {
                break;
            }
            for ev in events {
                let c = &mut self.conns[k];
                if c.app.on_event(now, &mut c.conn, ev) && c.close == CloseMode::Explicit {
                    c.close_wanted = true;
                }
                if let ConnEvent::Closed(_) = ev {
                    let next = k + 1;
                    if next == self.conns.len() && next < self.specs.len() {
                        let s = &self.specs[next];
                        if s.start.is_none() {
                            self.next_start = Some(now + s.gap.unwrap_or(SimDuration::ZERO));
                        }
                    }
                }
            }
        }
        let c = &mut self.conns[k];
        if !c.ticket_taken && c.conn.is_handshake_confirmed() {
            // The NewSessionTicket (and NEW_TOKEN) the server sends with HANDSHAKE_DONE.
            c.ticket_taken = true;
            let q = &self.base;
            self.ticket = Some(SessionTicket {
                id: k as u64,
                token: (q.address_token_size > 0).then_some(k as u64),
                initial_max_data: q.connection_window,
                initial_max_stream_data: q.stream_window,
                initial_max_streams_bidi: q.max_streams_bidi,
            });
        }
    }

    fn drive_all(&mut self, now: SimTime) {
        for k in 0..self.conns.len() {
            self.drive(now, k);
        }
        self.open_due(now);
    }
}

impl Endpoint for ConnectionsClient {
    fn start(&mut self, now: SimTime) {
        if let Some(s) = self.specs.first() {
            self.next_start = Some(
                s.start
                    .unwrap_or(now + s.gap.unwrap_or(SimDuration::ZERO))
                    .max(now),
            );
        }
        self.open_due(now);
    }

    fn handle_datagram(&mut self, now: SimTime, datagram: Datagram) {
        let Payload::Quic(d) = &datagram.payload else {
            return;
        };
        let k = d.conn as usize;
        match self.conns.get_mut(k) {
            Some(c) if !c.conn.is_terminated() => {
                c.conn.handle_datagram(now, d, u64::from(datagram.size));
                self.drive(now, k);
                self.open_due(now);
            }
            _ => self.stray_datagrams += 1,
        }
    }

    fn handle_timeout(&mut self, now: SimTime) {
        for c in &mut self.conns {
            if c.conn.poll_timeout().is_some_and(|t| t <= now) {
                c.conn.handle_timeout(now);
            }
        }
        self.drive_all(now);
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram> {
        let mut k = 0;
        while k < self.conns.len() {
            let c = &mut self.conns[k];
            if let Some((mut d, size)) = c.conn.poll_transmit(now) {
                d.conn = k as u64;
                return Some(quic_datagram(c.local, self.remote, self.flow, d, size));
            }
            if c.close_wanted && !c.conn.is_closed() {
                // The application closes once the stack has sent what it had queued
                // (e.g. the client's Finished when a 0-RTT response completes at the
                // handshake): then CONNECTION_CLOSE, polled next.
                c.conn.close(now);
                self.drive(now, k);
                self.open_due(now);
                continue;
            }
            k += 1;
        }
        None
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        let next = if self.conns.len() < self.specs.len() {
            self.next_start
        } else {
            None
        };
        self.conns
            .iter()
            .filter_map(|c| c.conn.poll_timeout())
            .chain(next)
            .min()
    }

    /// A new network: connections started from now on use `new`. Live connections keep
    /// their old address (migration is not modelled yet): after an IP change the
    /// server's answers to it are dropped and such a connection fails at its idle
    /// timeout.
    fn handle_local_address_change(&mut self, _now: SimTime, new: Addr) {
        self.local = new;
    }

    fn local_addr(&self) -> Addr {
        self.local
    }

    fn is_done(&self) -> bool {
        self.conns.len() == self.specs.len() && self.conns.iter().all(|c| c.conn.is_closed())
    }

    fn metrics(&self, now: SimTime) -> EndpointMetrics {
        let mut reports: Vec<ConnectionReport> = self
            .conns
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let token = c.conn.initial_token_len() > 0;
                report(k as u64, c.local, &c.conn, &c.app, token, now)
            })
            .collect();
        let all = reports.len() == self.specs.len()
            && reports
                .iter()
                .all(|r| r.status == ConnectionStatus::Completed);
        for k in self.conns.len()..self.specs.len() {
            let c = Connection::new(Role::Client, self.specs[k].config(&self.base), None);
            reports.push(ConnectionReport {
                index: k as u64,
                local: self.local.to_string(),
                start_secs: None,
                close_secs: None,
                close_reason: None,
                last_activity_secs: 0.0,
                idle_timeout_secs: 0.0,
                status: ConnectionStatus::NotStarted,
                ticket: false,
                resumed: false,
                zero_rtt_accepted: None,
                token: false,
                zero_rtt_packets: 0,
                zero_rtt_stream_bytes: 0,
                zero_rtt_packets_rejected: 0,
                metrics: connection_metrics(&c, None, SimTime::ZERO),
            });
        }
        EndpointMetrics::Quic(Box::new(totals(Role::Client, reports, all)))
    }

    fn set_tracing(&mut self, on: bool) {
        self.tracing = on;
        for c in &mut self.conns {
            c.conn.trace.set_on(on);
        }
    }

    fn drain_trace(&mut self, sink: &mut dyn FnMut(SimTime, crate::trace::TraceEvent)) {
        for c in &mut self.conns {
            c.conn.trace.drain(sink);
        }
    }

    /// Events tagged with the connection number (qlog writes one trace per connection).
    fn drain_trace_tagged(&mut self, sink: &mut dyn FnMut(u32, SimTime, crate::trace::TraceEvent)) {
        for (k, c) in self.conns.iter_mut().enumerate() {
            let k = k as u32;
            c.conn.trace.drain(&mut |t, e| sink(k, t, e));
        }
    }
}

/// One connection at the server.
#[derive(Debug)]
struct ServerConn {
    conn: Connection,
    app: BulkApp,
    remote: Addr,
    token_valid: bool,
    sampled_resumption: bool,
    issued: bool,
}

/// The server of a `quic_connections` flow: one [`Connection`] per client connection
/// number, and the [`ServerStore`].
#[derive(Debug)]
pub struct ConnectionsServer {
    base: QuicConfig,
    specs: Vec<ConnectionSpec>,
    local: Addr,
    flow: FlowId,
    conns: BTreeMap<u64, ServerConn>,
    /// Tickets, tokens, history.
    pub store: ServerStore,
    tracing: bool,
    /// Datagrams for an unknown connection without a ClientHello descriptor, or for one
    /// whose state is gone (dropped).
    pub stray_datagrams: u64,
}

impl ConnectionsServer {
    /// A server at `local` for the client's sequence `specs`, accounted to `flow`.
    pub fn new(base: QuicConfig, specs: Vec<ConnectionSpec>, local: Addr, flow: FlowId) -> Self {
        ConnectionsServer {
            base,
            specs,
            local,
            flow,
            conns: BTreeMap::new(),
            store: ServerStore::default(),
            tracing: false,
            stray_datagrams: 0,
        }
    }

    /// The connections accepted so far, by connection number.
    pub fn connections(&self) -> impl Iterator<Item = (u64, &Connection)> {
        self.conns.iter().map(|(&k, c)| (k, &c.conn))
    }

    fn drive(&mut self, now: SimTime, k: u64) {
        let Some(c) = self.conns.get_mut(&k) else {
            return;
        };
        loop {
            let events = c.conn.take_events();
            if events.is_empty() {
                break;
            }
            for ev in events {
                c.app.on_event(now, &mut c.conn, ev);
                match ev {
                    ConnEvent::Connected => {
                        if !c.issued {
                            // NewSessionTicket (+ NEW_TOKEN) after the handshake.
                            c.issued = true;
                            self.store.tickets.insert(k, now);
                            if self.base.address_token_size > 0 {
                                self.store.tokens.insert(k, c.remote.ip);
                            }
                        }
                        if c.conn.is_resumed() && !c.sampled_resumption {
                            c.sampled_resumption = true;
                            self.store.sample(
                                now,
                                HistoryEvent::ResumptionComplete,
                                k,
                                c.remote,
                                &c.conn,
                            );
                        }
                    }
                    ConnEvent::Closed(r) => {
                        let e = match r {
                            CloseReason::IdleTimeout => HistoryEvent::IdleClose,
                            _ => HistoryEvent::ExplicitClose,
                        };
                        self.store.sample(now, e, k, c.remote, &c.conn);
                    }
                    _ => {}
                }
            }
        }
    }
}

impl Endpoint for ConnectionsServer {
    fn start(&mut self, _now: SimTime) {}

    fn handle_datagram(&mut self, now: SimTime, datagram: Datagram) {
        let Payload::Quic(d) = &datagram.payload else {
            return;
        };
        let k = d.conn;
        if !self.conns.contains_key(&k) {
            let (Some(hello), Some(spec)) = (d.client_hello, self.specs.get(k as usize)) else {
                self.stray_datagrams += 1;
                return;
            };
            let src = datagram.src;
            let ticket_valid = hello
                .ticket
                .is_some_and(|t| self.store.tickets.contains_key(&t));
            // RFC 9000 §8.1.3: a token is valid only from the address it was issued to.
            let token_valid = hello
                .token
                .is_some_and(|t| self.store.tokens.get(&t) == Some(&src.ip));
            let mut cfg = spec.config(&self.base);
            if let Some(w) =
                self.store
                    .policy
                    .initial_cwnd(src.ip, ticket_valid, cfg.initial_cwnd())
            {
                cfg.initial_cwnd_bytes = Some(w);
            }
            let mut conn = Connection::new(Role::Server, cfg, None);
            conn.trace.set_on(self.tracing);
            conn.accept_client(hello, ticket_valid, token_valid);
            conn.start(now);
            self.conns.insert(
                k,
                ServerConn {
                    conn,
                    app: BulkApp::new(spec),
                    remote: src,
                    token_valid,
                    sampled_resumption: false,
                    issued: false,
                },
            );
        }
        let c = self.conns.get_mut(&k).expect("inserted");
        if c.conn.is_terminated() {
            self.stray_datagrams += 1;
            return;
        }
        // Answer from where the client sends.
        c.remote = datagram.src;
        c.conn.handle_datagram(now, d, u64::from(datagram.size));
        self.drive(now, k);
    }

    fn handle_timeout(&mut self, now: SimTime) {
        let due: Vec<u64> = self
            .conns
            .iter()
            .filter(|(_, c)| c.conn.poll_timeout().is_some_and(|t| t <= now))
            .map(|(&k, _)| k)
            .collect();
        for k in due {
            if let Some(c) = self.conns.get_mut(&k) {
                c.conn.handle_timeout(now);
            }
            self.drive(now, k);
        }
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram> {
        for (&k, c) in self.conns.iter_mut() {
            if let Some((mut d, size)) = c.conn.poll_transmit(now) {
                d.conn = k;
                return Some(quic_datagram(self.local, c.remote, self.flow, d, size));
            }
        }
        None
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        self.conns
            .values()
            .filter_map(|c| c.conn.poll_timeout())
            .min()
    }

    fn local_addr(&self) -> Addr {
        self.local
    }

    fn is_done(&self) -> bool {
        self.conns.values().all(|c| c.conn.is_closed())
    }

    fn metrics(&self, now: SimTime) -> EndpointMetrics {
        let reports: Vec<ConnectionReport> = self
            .conns
            .iter()
            .map(|(&k, c)| report(k, self.local, &c.conn, &c.app, c.token_valid, now))
            .collect();
        let all = !reports.is_empty()
            && reports
                .iter()
                .all(|r| r.status == ConnectionStatus::Completed);
        let mut m = totals(Role::Server, reports, all);
        m.history = self.store.samples.clone();
        EndpointMetrics::Quic(Box::new(m))
    }

    fn set_tracing(&mut self, on: bool) {
        self.tracing = on;
        for c in self.conns.values_mut() {
            c.conn.trace.set_on(on);
        }
    }

    fn drain_trace(&mut self, sink: &mut dyn FnMut(SimTime, crate::trace::TraceEvent)) {
        for c in self.conns.values_mut() {
            c.conn.trace.drain(sink);
        }
    }

    /// Events tagged with the connection number (qlog writes one trace per connection).
    fn drain_trace_tagged(&mut self, sink: &mut dyn FnMut(u32, SimTime, crate::trace::TraceEvent)) {
        for (&k, c) in self.conns.iter_mut() {
            let k = k as u32;
            c.conn.trace.drain(&mut |t, e| sink(k, t, e));
        }
    }
}

#[cfg(test)]
mod tests {
    //! A two-endpoint harness (fixed delay and rate per direction, Bernoulli loss) that
    //! checks every connection's model invariants (`Connection::check_invariants`: bytes
    //! in flight, flow control within the remembered 0-RTT limits, no congestion-window
    //! violation) after every event of random connection sequences.

    use super::*;
    use crate::rng::RngStream;
    use crate::units::Rate;
    use proptest::prelude::*;

    enum Ev {
        Deliver(usize, Datagram),
        Timer(usize),
    }

    struct Harness {
        client: ConnectionsClient,
        server: ConnectionsServer,
        queue: BTreeMap<(SimTime, u64), Ev>,
        armed: [Option<(SimTime, u64)>; 2],
        busy: [SimTime; 2],
        seq: u64,
        rng: RngStream,
        loss: f64,
        rate: Rate,
        delay: SimDuration,
    }

    impl Harness {
        fn ep(&mut self, side: usize) -> &mut dyn Endpoint {
            if side == 0 {
                &mut self.client
            } else {
                &mut self.server
            }
        }

        fn push(&mut self, t: SimTime, ev: Ev) -> (SimTime, u64) {
            self.seq += 1;
            self.queue.insert((t, self.seq), ev);
            (t, self.seq)
        }

        fn service(&mut self, now: SimTime, side: usize) {
            while let Some(d) = self.ep(side).poll_transmit(now) {
                if self.rng.chance(self.loss) {
                    continue;
                }
                let start = self.busy[side].max(now);
                let done = start + self.rate.tx_time(u64::from(d.size) + 28).unwrap();
                self.busy[side] = done;
                self.push(done + self.delay, Ev::Deliver(1 - side, d));
            }
            let want = self.ep(side).poll_timeout();
            if want != self.armed[side].map(|a| a.0) {
                if let Some(old) = self.armed[side].take() {
                    self.queue.remove(&old);
                }
                if let Some(t) = want {
                    self.armed[side] = Some(self.push(t.max(now), Ev::Timer(side)));
                }
            }
        }

        fn check(&self) {
            for c in self.client.connections() {
                c.check_invariants().expect("client invariants");
            }
            for (_, c) in self.server.connections() {
                c.check_invariants().expect("server invariants");
            }
        }

        fn run(&mut self) -> SimTime {
            self.client.start(SimTime::ZERO);
            self.server.start(SimTime::ZERO);
            self.service(SimTime::ZERO, 0);
            let mut events = 0;
            while let Some(((now, seq), ev)) = self.queue.pop_first() {
                events += 1;
                assert!(events < 2_000_000, "runaway");
                let side = match ev {
                    Ev::Deliver(side, d) => {
                        self.ep(side).handle_datagram(now, d);
                        side
                    }
                    Ev::Timer(side) => {
                        if self.armed[side] == Some((now, seq)) {
                            self.armed[side] = None;
                        }
                        self.ep(side).handle_timeout(now);
                        side
                    }
                };
                self.service(now, side);
                self.check();
                if self.client.is_done() && self.server.is_done() {
                    return now;
                }
            }
            panic!("stalled");
        }
    }

    fn harness(q: QuicConfig, specs: Vec<ConnectionSpec>, loss: f64, seed: u64) -> Harness {
        let ca = Addr::new(0x0a00_0001, 10_000);
        let sa = Addr::new(0x0a01_0001, 10_000);
        Harness {
            client: ConnectionsClient::new(q.clone(), specs.clone(), ca, sa, 0),
            server: ConnectionsServer::new(q, specs, sa, 0),
            queue: BTreeMap::new(),
            armed: [None; 2],
            busy: [SimTime::ZERO; 2],
            seq: 0,
            rng: RngStream::derive(seed, "test/lifecycle"),
            loss,
            rate: Rate(20_000_000),
            delay: SimDuration::from_millis(15),
        }
    }

    #[test]
    fn zero_rtt_within_remembered_limits_and_the_window() {
        // Small remembered windows: the 0-RTT requests must respect them.
        let q = QuicConfig {
            stream_window: 2_000,
            max_streams_bidi: 2,
            ..QuicConfig::default()
        };
        let mut a = ConnectionSpec::new(&q, 5_000);
        a.streams = 1;
        let mut b = ConnectionSpec::new(&q, 30_000);
        b.streams = 4;
        b.request_size = 3_000;
        let mut h = harness(q, vec![a, b], 0.0, 1);
        h.run();
        let c: Vec<&Connection> = h.client.connections().collect();
        assert!(c[1].is_resumed());
        assert!(c[1].stats.zero_rtt_packets_sent > 0);
        // Two streams at most in 0-RTT, each at most 2000 bytes.
        assert!(c[1].stats.zero_rtt_stream_bytes <= 2 * 2_000);
        assert_eq!(c[1].stats.stream_bytes_read, 30_000);
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(16),
            ..ProptestConfig::default()
        })]

        #[test]
        fn invariants_hold_over_random_sequences(
            conns in prop::collection::vec(
                (any::<bool>(), 0u64..200, 0u64..60_000, 1u64..4, any::<bool>()),
                1..4,
            ),
            loss in prop_oneof![Just(0.0), 0.0f64..0.05],
            reject in any::<bool>(),
            token in any::<bool>(),
            seed in 0u64..1000,
        ) {
            let q = QuicConfig {
                idle_timeout: SimDuration::from_secs(1),
                reject_zero_rtt: reject,
                address_token_size: if token { 64 } else { 0 },
                stream_window: 20_000,
                ..QuicConfig::default()
            };
            let specs: Vec<ConnectionSpec> = conns
                .iter()
                .map(|&(resume, gap, bytes, streams, idle)| {
                    let mut s = ConnectionSpec::new(&q, bytes);
                    s.resume = resume;
                    s.gap = Some(SimDuration::from_millis(gap));
                    s.streams = streams;
                    s.request_size = 1_500;
                    s.close = if idle { CloseMode::Idle } else { CloseMode::Explicit };
                    s
                })
                .collect();
            let mut h = harness(q, specs.clone(), loss, seed);
            h.run();
            for (c, s) in h.client.connections().zip(&specs) {
                prop_assert_eq!(c.stats.stream_bytes_read, s.bytes);
                prop_assert!(c.is_closed());
            }
        }
    }
}

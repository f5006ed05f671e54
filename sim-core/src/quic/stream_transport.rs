//! QUIC as a stream transport: [`StreamTransport`] and [`TransportDriver`] for
//! [`Connection`], written only against the connection's public methods. The mapping
//! (RFC 9000 streams, MAX_STREAMS, 0-RTT, CONNECTION_CLOSE) is described in
//! [`crate::transport::stream`].

use super::config::QuicConfig;
use super::connection::{CloseReason, ConnEvent, Connection, Role, SessionTicket};
use super::metrics::{connection_metrics, totals};
use crate::breakdown::TimeBreakdown;
use crate::config::workload::ConnectionSpec;
use crate::driver::{Hello, TransportDriver};
use crate::metrics::workload::{ConnectionReport, ConnectionStatus, HistorySample};
use crate::metrics::EndpointMetrics;
use crate::packet::{Addr, Datagram, FlowId, Payload, PayloadPool};
use crate::time::{SimDuration, SimTime};
use crate::trace::TraceEvent;
use crate::transport::initial_window::{self, InitialWindowPolicy};
use crate::transport::stream::{
    AppReader, CloseKind, Side, StreamEvent, StreamId, StreamReadState, StreamTransport,
};

fn side_of(role: Role) -> Side {
    match role {
        Role::Client => Side::Client,
        Role::Server => Side::Server,
    }
}

fn role_of(side: Side) -> Role {
    match side {
        Side::Client => Role::Client,
        Side::Server => Role::Server,
    }
}

fn close_kind(r: CloseReason) -> CloseKind {
    match r {
        CloseReason::IdleTimeout => CloseKind::IdleTimeout,
        CloseReason::LocalClose => CloseKind::LocalClose,
        CloseReason::PeerClose => CloseKind::PeerClose,
        CloseReason::PathValidationFailed => CloseKind::NoPath,
    }
}

fn event(ev: ConnEvent) -> StreamEvent {
    match ev {
        ConnEvent::Connected => StreamEvent::Connected,
        ConnEvent::StreamsAvailable => StreamEvent::StreamsAvailable,
        ConnEvent::StreamOpened(id) => StreamEvent::StreamOpened(id),
        ConnEvent::StreamReadComplete(id) => StreamEvent::ReadComplete(id),
        ConnEvent::StreamSendComplete(id) => StreamEvent::SendComplete(id),
        ConnEvent::EarlyDataReady => StreamEvent::EarlyDataReady,
        ConnEvent::Closed(r) => StreamEvent::Closed(close_kind(r)),
    }
}

fn reason_name(r: CloseReason) -> &'static str {
    match r {
        CloseReason::IdleTimeout => "idle_timeout",
        CloseReason::LocalClose => "local_close",
        CloseReason::PeerClose => "peer_close",
        CloseReason::PathValidationFailed => "path_validation_failed",
    }
}

impl StreamTransport for Connection {
    fn side(&self) -> Side {
        side_of(self.role())
    }

    fn take_events(&mut self) -> Vec<StreamEvent> {
        Connection::take_events(self)
            .into_iter()
            .map(event)
            .collect()
    }

    fn has_events(&self) -> bool {
        Connection::has_events(self)
    }

    fn open_stream(&mut self) -> Option<StreamId> {
        Connection::open_stream(self)
    }

    fn write(&mut self, id: StreamId, len: u64, fin: bool) {
        Connection::write(self, id, len, fin);
    }

    /// RFC 9000 §2.1: the two low bits of a stream ID are its type.
    fn stream_index(&self, id: StreamId) -> u64 {
        id / 4
    }

    /// RFC 9000 §2.1: bidirectional, bit 0 the initiator.
    fn stream_id(&self, side: Side, index: u64) -> StreamId {
        4 * index + u64::from(side == Side::Server)
    }

    fn stream_read_state(&self, id: StreamId) -> Option<StreamReadState> {
        self.streams().get(&id).map(|s| StreamReadState {
            read: s.recv.consumed,
            window: s.recv_fc.limit.saturating_sub(s.recv.consumed),
            window_size: s.recv_fc.allowance.window(),
        })
    }

    fn read(&mut self, now: SimTime, id: StreamId, max: u64) -> u64 {
        Connection::read(self, now, id, max)
    }

    fn next_readable(&self, after: Option<StreamId>) -> Option<(StreamId, u64)> {
        Connection::next_readable(self, after)
    }

    fn close(&mut self, now: SimTime) {
        Connection::close(self, now);
    }

    fn is_closed(&self) -> bool {
        Connection::is_closed(self)
    }

    fn is_terminated(&self) -> bool {
        Connection::is_terminated(self)
    }

    fn is_handshake_confirmed(&self) -> bool {
        Connection::is_handshake_confirmed(self)
    }

    fn is_resumed(&self) -> bool {
        Connection::is_resumed(self)
    }

    fn cwnd(&self) -> u64 {
        self.recovery().cwnd()
    }

    fn smoothed_rtt(&self) -> SimDuration {
        self.recovery().rtt().smoothed_rtt()
    }
}

impl TransportDriver for Connection {
    type Config = QuicConfig;
    type Ticket = SessionTicket;

    fn start(&mut self, now: SimTime) {
        Connection::start(self, now);
    }

    fn handle_datagram(
        &mut self,
        now: SimTime,
        datagram: &Datagram,
        reader: &mut dyn AppReader,
    ) -> bool {
        let Payload::Quic(d) = &datagram.payload else {
            return false;
        };
        // A server with migration on follows a client that migrated (RFC 9000 §9.3).
        self.on_peer_address(now, datagram.src, d);
        Connection::handle_datagram_ecn(
            self,
            now,
            d,
            u64::from(datagram.size),
            datagram.ecn,
            reader,
        );
        true
    }

    fn handle_local_address_change(&mut self, now: SimTime, port_only: bool) -> bool {
        self.on_local_address_change(now, port_only)
    }

    fn poll_datagram_pooled(
        &mut self,
        now: SimTime,
        local: Addr,
        remote: Addr,
        flow: FlowId,
        number: Option<u64>,
        pool: &mut PayloadPool,
    ) -> Option<Datagram> {
        // Built in place in a pooled box (no move of the datagram into a box afterwards).
        let mut d = pool.quic_box();
        let Some(size) = self.poll_transmit_into(now, &mut d) else {
            pool.return_unused_quic_box(d);
            return None;
        };
        // With migration on, a server sends to its active path's peer address (the one it
        // validated, or the one it fell back to), whatever the workload last saw.
        let remote = self.peer_address().unwrap_or(remote);
        if let Some(k) = number {
            d.conn = k;
        }
        let size = u32::try_from(size).expect("datagram size fits u32");
        let mut dgram = Datagram::new(local, remote, size, flow, Payload::Quic(d));
        // RFC 9000 §13.4.2: ECT(0) while ECN is in use.
        dgram.ecn = self.ecn_codepoint();
        Some(dgram)
    }

    fn poll_timeout(&self, reader: &dyn AppReader) -> Option<SimTime> {
        Connection::poll_timeout(self, reader)
    }

    fn handle_timeout(&mut self, now: SimTime, reader: &mut dyn AppReader) {
        Connection::handle_timeout(self, now, reader);
    }

    fn set_tracing(&mut self, on: bool) {
        self.trace.set_on(on);
    }

    fn drain_trace(&mut self, sink: &mut dyn FnMut(SimTime, TraceEvent)) {
        self.trace.drain(sink);
    }

    fn metrics(&self, completed_at: Option<SimTime>, now: SimTime) -> EndpointMetrics {
        EndpointMetrics::Quic(Box::new(connection_metrics(self, completed_at, now)))
    }

    fn time_breakdown(&self, now: SimTime) -> Option<TimeBreakdown> {
        Some(Connection::time_breakdown(self, now))
    }

    fn freeze_breakdown(&mut self, at: SimTime) {
        Connection::freeze_breakdown(self, at);
    }

    /// Congestion state (`ssthresh` is infinite until the first loss), RTT and the
    /// connection's receive window (credit advertised beyond what was consumed); with a
    /// model-based controller its estimates ([`crate::cc::ModelEstimate::series`]).
    fn series_sample(&self) -> Vec<(String, f64)> {
        let r = self.recovery();
        let mut v = vec![
            ("cwnd".to_string(), r.cwnd() as f64),
            (
                "ssthresh".to_string(),
                r.cc().ssthresh().map_or(f64::INFINITY, |s| s as f64),
            ),
            ("bytes_in_flight".to_string(), r.bytes_in_flight() as f64),
            ("srtt_s".to_string(), r.rtt().smoothed_rtt().as_secs_f64()),
            (
                "recv_window".to_string(),
                self.recv_flow()
                    .limit
                    .saturating_sub(self.recv_flow().consumed) as f64,
            ),
            (
                "connection_window".to_string(),
                self.recv_flow().allowance.window() as f64,
            ),
        ];
        // A model-based controller's estimates (BBR): bandwidth, min RTT, state.
        if let Some(m) = r.cc().model() {
            v.extend(m.series());
        }
        v
    }

    /// The Destination Connection ID ([`crate::wire::quic::QuicDatagram::conn`]).
    fn connection_number(datagram: &Datagram) -> Option<u64> {
        match &datagram.payload {
            Payload::Quic(d) => Some(d.conn),
            _ => None,
        }
    }

    fn hello(datagram: &Datagram) -> Option<Hello> {
        match &datagram.payload {
            Payload::Quic(d) => d.client_hello.as_deref().map(|h| Hello {
                ticket: h.ticket,
                token: h.token,
            }),
            _ => None,
        }
    }

    fn cc_stream(cfg: &mut QuicConfig) -> &mut crate::cc::CcStreamId {
        &mut cfg.cc.stream
    }

    /// Every connection of a sequence reads at once (no `read_rate`).
    fn connect(base: &QuicConfig, _spec: &ConnectionSpec) -> Self {
        Connection::new(Role::Client, base.clone())
    }

    fn resume(&mut self, ticket: SessionTicket) {
        self.set_resumption(ticket);
    }

    /// The NewSessionTicket (and NEW_TOKEN) the server sends with HANDSHAKE_DONE, with
    /// the server's transport parameters remembered for 0-RTT (RFC 9000 §7.4.1).
    fn ticket(&self, id: u64) -> SessionTicket {
        let q = self.config();
        SessionTicket {
            id,
            token: (q.address_token_size > 0).then_some(id),
            initial_max_data: q.connection_window,
            initial_max_stream_data: q.stream_window,
            initial_max_streams_bidi: q.max_streams_bidi,
        }
    }

    fn issues_tokens(base: &QuicConfig) -> bool {
        base.address_token_size > 0
    }

    fn default_initial_cwnd(base: &QuicConfig, _spec: &ConnectionSpec) -> u64 {
        base.initial_cwnd()
    }

    fn initial_window_policy(base: &QuicConfig) -> Box<dyn InitialWindowPolicy> {
        initial_window::build(&base.initial_window, base.cc_segment())
    }

    fn accept(
        base: &QuicConfig,
        _spec: &ConnectionSpec,
        first: &Datagram,
        ticket_valid: bool,
        token_valid: bool,
        initial_cwnd: Option<u64>,
    ) -> Self {
        let mut cfg = base.clone();
        if let Some(w) = initial_cwnd {
            cfg.cc.initial_cwnd_bytes = Some(w);
        }
        let mut conn = Connection::new(Role::Server, cfg);
        if let Payload::Quic(d) = &first.payload {
            if let Some(&hello) = d.client_hello.as_deref() {
                conn.accept_client(hello, ticket_valid, token_valid);
            }
        }
        conn
    }

    fn presented_token(&self) -> bool {
        self.initial_token_len() > 0
    }

    fn report(
        &self,
        index: u64,
        local: Addr,
        completed_at: Option<SimTime>,
        token: bool,
        now: SimTime,
    ) -> ConnectionReport {
        let ci = self.close_info();
        let status = if completed_at.is_some() {
            ConnectionStatus::Completed
        } else if self.is_closed() {
            ConnectionStatus::Failed
        } else {
            ConnectionStatus::Open
        };
        ConnectionReport {
            index,
            local: local.to_string(),
            start_secs: Some(self.started_at().as_secs_f64()),
            close_secs: ci.map(|c| c.at.as_secs_f64()),
            close_reason: ci.map(|c| reason_name(c.reason).to_string()),
            last_activity_secs: self.last_activity().as_secs_f64(),
            idle_timeout_secs: self.idle_timeout().as_secs_f64(),
            status,
            ticket: match self.role() {
                Role::Client => self.has_ticket(),
                Role::Server => Connection::is_resumed(self),
            },
            resumed: Connection::is_resumed(self),
            zero_rtt_accepted: self.early_data_accepted(),
            token,
            zero_rtt_packets: self.stats.zero_rtt_packets_sent,
            zero_rtt_stream_bytes: self.stats.zero_rtt_stream_bytes,
            zero_rtt_packets_rejected: self.stats.zero_rtt_packets_rejected,
            metrics: connection_metrics(self, completed_at, now).into(),
        }
    }

    fn not_started_report(
        base: &QuicConfig,
        _spec: &ConnectionSpec,
        index: u64,
        local: Addr,
    ) -> ConnectionReport {
        let c = Connection::new(Role::Client, base.clone());
        ConnectionReport::not_started(
            index,
            local.to_string(),
            connection_metrics(&c, None, SimTime::ZERO).into(),
        )
    }

    fn sequence_metrics(
        side: Side,
        reports: Vec<ConnectionReport>,
        all_completed: bool,
        history: Vec<HistorySample>,
    ) -> EndpointMetrics {
        let mut m = totals(role_of(side), reports, all_completed);
        m.workload.history = history;
        EndpointMetrics::Quic(Box::new(m))
    }
}

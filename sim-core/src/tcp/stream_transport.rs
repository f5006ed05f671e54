//! TCP as a stream transport: [`StreamTransport`] and [`TransportDriver`] for
//! [`TcpConnection`], through its public methods only. The mapping (one byte stream,
//! HTTP/2-style streams on it, `Connected` after TCP + TLS) is described in
//! [`crate::transport::stream`].
//!
//! Connection sequences run (each connection a fresh three-way handshake); with
//! `fast_open` / `early_data` a later connection presents the Fast Open cookie and the
//! session ticket an earlier one left ([`TcpTicket`], `docs/tcp.md`).

use super::connection::TcpConnection;
use super::metrics::connection_metrics;
use crate::breakdown::TimeBreakdown;
use crate::config::tcp::TcpConfig;
use crate::config::workload::ConnectionSpec;
use crate::driver::{Hello, TransportDriver};
use crate::metrics::tcp::TcpMetrics;
use crate::metrics::transport::TransportMetrics;
use crate::metrics::workload::{ConnectionReport, ConnectionStatus, HistorySample};
use crate::metrics::EndpointMetrics;
use crate::packet::{Addr, Datagram, Ecn, FlowId, Payload, PayloadPool};
use crate::time::{SimDuration, SimTime};
use crate::trace::TraceEvent;
use crate::transport::stream::{
    AppReader, Side, StreamEvent, StreamId, StreamReadState, StreamTransport,
};

/// What a TCP client keeps from a connection for the next one to the same server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpTicket {
    /// A TCP Fast Open cookie (RFC 7413 §4.1).
    pub cookie: bool,
    /// A TLS 1.3 session ticket (RFC 8446 §4.6.1).
    pub session: bool,
}

impl StreamTransport for TcpConnection {
    fn side(&self) -> Side {
        TcpConnection::side(self)
    }

    fn take_events(&mut self) -> Vec<StreamEvent> {
        TcpConnection::take_events(self)
    }

    fn has_events(&self) -> bool {
        TcpConnection::has_events(self)
    }

    fn open_stream(&mut self) -> Option<StreamId> {
        TcpConnection::open_stream(self)
    }

    fn write(&mut self, id: StreamId, len: u64, fin: bool) {
        TcpConnection::write(self, id, len, fin);
    }

    /// RFC 9113 §5.1.1: client streams odd, server streams even, numbered in order.
    fn stream_index(&self, id: StreamId) -> u64 {
        id.saturating_sub(1) / 2
    }

    fn stream_id(&self, side: Side, index: u64) -> StreamId {
        TcpConnection::stream_id_of(side, index)
    }

    fn stream_read_state(&self, id: StreamId) -> Option<StreamReadState> {
        TcpConnection::stream_read_state(self, id)
    }

    /// Not yet modelled for TCP: the application consumes every in-order byte the
    /// multiplexer delivers at once (the connection does it while handling the segment),
    /// so nothing is ever left to read and the workload's reader is not consulted; a read
    /// rate is not supported over TCP yet (docs/tcp.md).
    fn read(&mut self, _now: SimTime, _id: StreamId, _max: u64) -> u64 {
        0
    }

    /// Always `None`: see [`StreamTransport::read`] above.
    fn next_readable(&self, _after: Option<StreamId>) -> Option<(StreamId, u64)> {
        None
    }

    fn close(&mut self, now: SimTime) {
        TcpConnection::close(self, now);
    }

    fn is_closed(&self) -> bool {
        self.closed().is_some()
    }

    fn is_terminated(&self) -> bool {
        self.closed().is_some()
    }

    fn is_handshake_confirmed(&self) -> bool {
        self.connected_at().is_some()
    }

    fn is_resumed(&self) -> bool {
        self.resumed_with_early_data()
    }

    fn cwnd(&self) -> u64 {
        self.cc().window()
    }

    fn smoothed_rtt(&self) -> SimDuration {
        self.rtt().smoothed_rtt()
    }
}

impl TransportDriver for TcpConnection {
    type Config = TcpConfig;
    type Ticket = TcpTicket;

    fn start(&mut self, now: SimTime) {
        TcpConnection::start(self, now);
        self.start_breakdown(now);
    }

    /// The reader is not consulted: TCP's application consumes at once (see
    /// [`StreamTransport::read`] above).
    fn handle_datagram(
        &mut self,
        now: SimTime,
        datagram: &Datagram,
        _reader: &mut dyn AppReader,
    ) -> bool {
        let Payload::Tcp(s) = &datagram.payload else {
            return false;
        };
        self.handle_segment_ecn(now, s, datagram.ecn);
        true
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
        let Some(plan) = self.poll_plan(now) else {
            self.note_send_opportunity(now);
            return None;
        };
        // The segment is written over a recycled box's old one, in place (its vectors
        // keep their capacity).
        let mut b = pool
            .tcp_box()
            .unwrap_or_else(|| Box::new(super::connection::blank_segment()));
        self.write_segment(now, plan, &mut b);
        let size = self.on_segment_sent(now, &b);
        if let Some(k) = number {
            b.conn = k;
        }
        let size = u32::try_from(size).expect("segment size fits u32");
        let ect = self.ect(&b);
        let mut d = Datagram::new(local, remote, size, flow, Payload::Tcp(b));
        if ect {
            self.on_ect_sent();
            d.ecn = Ecn::Ect0;
        }
        Some(d)
    }

    fn poll_timeout(&self, _reader: &dyn AppReader) -> Option<SimTime> {
        TcpConnection::poll_timeout(self)
    }

    fn handle_timeout(&mut self, now: SimTime, _reader: &mut dyn AppReader) {
        TcpConnection::handle_timeout(self, now);
    }

    fn set_tracing(&mut self, on: bool) {
        self.trace.set_on(on);
    }

    fn drain_trace(&mut self, sink: &mut dyn FnMut(SimTime, TraceEvent)) {
        self.trace.drain(sink);
    }

    fn metrics(&self, completed_at: Option<SimTime>, now: SimTime) -> EndpointMetrics {
        EndpointMetrics::Tcp(Box::new(connection_metrics(self, completed_at, now)))
    }

    fn time_breakdown(&self, now: SimTime) -> Option<TimeBreakdown> {
        Some(TcpConnection::time_breakdown(self, now))
    }

    fn freeze_breakdown(&mut self, at: SimTime) {
        TcpConnection::freeze_breakdown(self, at);
    }

    /// Congestion window, ssthresh (infinite until the first reduction), pipe, SRTT and
    /// the advertised receive window; with a model-based controller its estimates
    /// ([`crate::cc::ModelEstimate::series`]).
    fn series_sample(&self) -> Vec<(String, f64)> {
        let mut v = vec![
            ("cwnd".to_string(), self.cc().window() as f64),
            (
                "ssthresh".to_string(),
                self.cc().ssthresh().map_or(f64::INFINITY, |s| s as f64),
            ),
            ("bytes_in_flight".to_string(), self.bytes_in_flight() as f64),
            (
                "srtt_s".to_string(),
                self.rtt().smoothed_rtt().as_secs_f64(),
            ),
            ("recv_window".to_string(), self.recv_window() as f64),
        ];
        // A model-based controller's estimates (BBR): bandwidth, min RTT, state.
        if let Some(m) = self.cc().model() {
            v.extend(m.series());
        }
        v
    }

    fn connection_number(datagram: &Datagram) -> Option<u64> {
        match &datagram.payload {
            Payload::Tcp(s) => Some(s.conn),
            _ => None,
        }
    }

    /// A SYN opens a connection; it presents no ticket or token.
    fn hello(datagram: &Datagram) -> Option<Hello> {
        match &datagram.payload {
            Payload::Tcp(s) if s.flags.syn && !s.flags.ack => Some(Hello::default()),
            _ => None,
        }
    }

    fn cc_stream(cfg: &mut TcpConfig) -> &mut crate::cc::CcStreamId {
        &mut cfg.cc.stream
    }

    fn connect(base: &TcpConfig, _spec: &ConnectionSpec) -> Self {
        TcpConnection::new(Side::Client, base.clone())
    }

    fn resume(&mut self, ticket: TcpTicket) {
        TcpConnection::resume(self, ticket.cookie, ticket.session);
    }

    /// The cookie the SYN-ACK carried (or the one held) and, with `early_data`, the
    /// session ticket: the server's NewSessionTicket follows the client's Finished and
    /// precedes every response byte on the stream, so a connection that read anything
    /// holds it; the sequence asks at confirmation, before it arrives, hence the
    /// configuration decides (`docs/tcp.md`).
    fn ticket(&self, _id: u64) -> TcpTicket {
        let (cookie, session) = self.holds();
        TcpTicket {
            cookie,
            session: session
                || (self.config().early_data
                    && self.config().tls == crate::config::tcp::TlsVersion::Tls13),
        }
    }

    fn issues_tokens(_base: &TcpConfig) -> bool {
        false
    }

    fn default_initial_cwnd(base: &TcpConfig, _spec: &ConnectionSpec) -> u64 {
        base.cc_params().initial_window(base.effective_mss())
    }

    fn accept(
        base: &TcpConfig,
        _spec: &ConnectionSpec,
        _first: &Datagram,
        _ticket_valid: bool,
        _token_valid: bool,
        initial_cwnd: Option<u64>,
    ) -> Self {
        let mut cfg = base.clone();
        if let Some(w) = initial_cwnd {
            cfg.cc.initial_cwnd_bytes = Some(w);
        }
        TcpConnection::new(Side::Server, cfg)
    }

    fn presented_token(&self) -> bool {
        false
    }

    fn report(
        &self,
        index: u64,
        local: Addr,
        completed_at: Option<SimTime>,
        token: bool,
        now: SimTime,
    ) -> ConnectionReport {
        let status = if completed_at.is_some() {
            ConnectionStatus::Completed
        } else if self.closed().is_some() {
            ConnectionStatus::Failed
        } else {
            ConnectionStatus::Open
        };
        ConnectionReport {
            index,
            local: local.to_string(),
            start_secs: Some(self.started_at().as_secs_f64()),
            close_secs: self.closed().map(|(_, t)| t.as_secs_f64()),
            close_reason: self.closed().map(|(k, _)| k.name().to_string()),
            last_activity_secs: self.last_activity().as_secs_f64(),
            idle_timeout_secs: 0.0,
            status,
            ticket: self.resumed_with_early_data(),
            resumed: self.resumed_with_early_data(),
            zero_rtt_accepted: self.resumed_with_early_data().then_some(true),
            token,
            zero_rtt_packets: 0,
            zero_rtt_stream_bytes: 0,
            zero_rtt_packets_rejected: 0,
            metrics: connection_metrics(self, completed_at, now).into(),
        }
    }

    fn not_started_report(
        base: &TcpConfig,
        _spec: &ConnectionSpec,
        index: u64,
        local: Addr,
    ) -> ConnectionReport {
        let c = TcpConnection::new(Side::Client, base.clone());
        ConnectionReport::not_started(
            index,
            local.to_string(),
            connection_metrics(&c, None, SimTime::ZERO).into(),
        )
    }

    /// Counters summed over the connections; times are those of the last connection.
    fn sequence_metrics(
        side: Side,
        reports: Vec<ConnectionReport>,
        all_completed: bool,
        history: Vec<HistorySample>,
    ) -> EndpointMetrics {
        let mut t = TransportMetrics {
            role: match side {
                Side::Client => "client".into(),
                Side::Server => "server".into(),
            },
            handshake_secs: None,
            completion_secs: None,
            time_to_first_byte_secs: None,
            goodput_bps: None,
            stream_bytes_read: 0,
            bytes_sent: 0,
            packets_sent: 0,
            packets_lost: 0,
            packets_retransmitted: 0,
            stream_bytes_retransmitted: 0,
            spurious_losses: 0,
            duplicate_stream_bytes: 0,
            loss_ratio: 0.0,
            pto_count: 0,
            congestion_events: 0,
            cwnd_blocked_secs: 0.0,
            flow_control_blocked_secs: 0.0,
            bytes_in_flight_end: 0,
            cwnd_end: 0,
            ssthresh_end: None,
            srtt_end_secs: 0.0,
            min_rtt_secs: 0.0,
            closed: false,
        };
        for r in &reports {
            let m = r.metrics.transport();
            t.stream_bytes_read += m.stream_bytes_read;
            t.bytes_sent += m.bytes_sent;
            t.packets_sent += m.packets_sent;
            t.packets_lost += m.packets_lost;
            t.packets_retransmitted += m.packets_retransmitted;
            t.stream_bytes_retransmitted += m.stream_bytes_retransmitted;
            t.duplicate_stream_bytes += m.duplicate_stream_bytes;
            t.pto_count += m.pto_count;
            t.congestion_events += m.congestion_events;
            t.cwnd_blocked_secs += m.cwnd_blocked_secs;
            t.flow_control_blocked_secs += m.flow_control_blocked_secs;
            t.handshake_secs = m.handshake_secs;
            t.cwnd_end = m.cwnd_end;
            t.ssthresh_end = m.ssthresh_end;
            t.srtt_end_secs = m.srtt_end_secs;
            t.min_rtt_secs = m.min_rtt_secs;
            t.closed = m.closed;
        }
        if t.packets_sent > 0 {
            t.loss_ratio = t.packets_lost as f64 / t.packets_sent as f64;
        }
        if all_completed {
            t.completion_secs = reports
                .last()
                .and_then(|r| r.metrics.transport().completion_secs);
        }
        let workload = crate::metrics::workload::WorkloadMetrics {
            stream_completion_secs: Vec::new(),
            connections: reports,
            history,
            ..Default::default()
        };
        EndpointMetrics::Tcp(Box::new(TcpMetrics {
            transport: t,
            tcp: crate::metrics::tcp::TcpExtras::default(),
            workload,
        }))
    }
}

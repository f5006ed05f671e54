//! SCTP as a stream transport: [`StreamTransport`] and [`TransportDriver`] for
//! [`SctpAssociation`]. The mapping (RFC 9260): the streams a client opens (IDs 0, 1, 2,
//! ..., one request and its response each) go on SCTP stream numbers the two directions
//! have (min(OS, peer's MIS) each way, §5.1.1; 10 by default): stream `i` on number `i`
//! while fresh numbers are left, then the lowest number whose exchange ended (SCTP streams
//! are never closed: an application with more requests than streams reuses them; with
//! every number busy, `open_stream` waits for `StreamsAvailable`; RFC 6525 stream
//! reconfiguration is not modelled); the server answers on the request's number in its
//! own direction. A stream's FIN is the
//! workload's end-of-stream mark on its last message. `EarlyDataReady` is the INIT-ACK
//! (data may be queued: it rides in the COOKIE-ECHO packet, §5.1), `Connected` the
//! COOKIE-ACK (client) / a valid COOKIE-ECHO (server); a stream is acknowledged when every
//! DATA chunk of it is; `close` is SHUTDOWN. SCTP has no session resumption: `resume` is
//! a no-op and a ticket carries nothing.

use super::association::SctpAssociation;
use crate::breakdown::TimeBreakdown;
use crate::config::sctp::SctpConfig;
use crate::config::workload::ConnectionSpec;
use crate::driver::{Hello, TransportDriver};
use crate::metrics::sctp::{SctpExtras, SctpMetrics};
use crate::metrics::transport::TransportMetrics;
use crate::metrics::workload::{
    ConnectionReport, ConnectionStatus, HistorySample, WorkloadMetrics,
};
use crate::metrics::EndpointMetrics;
use crate::packet::{Addr, Datagram, FlowId, Payload, PayloadPool};
use crate::time::{SimDuration, SimTime};
use crate::trace::TraceEvent;
use crate::transport::stream::{
    AppReader, Side, StreamEvent, StreamId, StreamReadState, StreamTransport,
};
use crate::wire::sctp::Chunk;

/// Stream IDs at and above this are the (never opened) server-initiated ones of
/// [`StreamTransport::stream_id`]: `65535 - index`.
const SERVER_STREAMS_FROM: u64 = super::association::CLIENT_STREAMS;

impl StreamTransport for SctpAssociation {
    fn side(&self) -> Side {
        SctpAssociation::side(self)
    }

    fn take_events(&mut self) -> Vec<StreamEvent> {
        SctpAssociation::take_events(self)
    }

    fn has_events(&self) -> bool {
        SctpAssociation::has_events(self)
    }

    fn open_stream(&mut self) -> Option<StreamId> {
        SctpAssociation::open_stream(self)
    }

    fn write(&mut self, id: StreamId, len: u64, fin: bool) {
        SctpAssociation::write(self, id, len, fin);
    }

    /// Client streams are numbered from 0; server-initiated ones (never opened by the
    /// model) from 65535 down.
    fn stream_index(&self, id: StreamId) -> u64 {
        if id < SERVER_STREAMS_FROM {
            id
        } else {
            65_535 - id
        }
    }

    fn stream_id(&self, side: Side, index: u64) -> StreamId {
        match side {
            Side::Client => index,
            Side::Server => 65_535 - index,
        }
    }

    fn stream_read_state(&self, id: StreamId) -> Option<StreamReadState> {
        self.stream_read(id).map(|read| StreamReadState {
            read,
            window: self.a_rwnd(),
            window_size: self.a_rwnd(),
        })
    }

    /// Not yet modelled for SCTP: the application consumes every message the association
    /// delivers at once (while handling the packet), so nothing is ever left to read and
    /// the workload's reader is not consulted; a read rate is not supported over SCTP yet
    /// (docs/sctp.md).
    fn read(&mut self, _now: SimTime, _id: StreamId, _max: u64) -> u64 {
        0
    }

    /// Always `None`: see [`StreamTransport::read`] above.
    fn next_readable(&self, _after: Option<StreamId>) -> Option<(StreamId, u64)> {
        None
    }

    fn close(&mut self, now: SimTime) {
        SctpAssociation::close(self, now);
    }

    fn is_closed(&self) -> bool {
        SctpAssociation::is_closed(self)
    }

    fn is_terminated(&self) -> bool {
        SctpAssociation::is_closed(self)
    }

    fn is_handshake_confirmed(&self) -> bool {
        self.handshake_at().is_some()
    }

    fn is_resumed(&self) -> bool {
        false
    }

    fn cwnd(&self) -> u64 {
        SctpAssociation::cwnd(self)
    }

    fn smoothed_rtt(&self) -> SimDuration {
        self.rtt().smoothed_rtt()
    }
}

/// The [`SctpMetrics`] of association `a` at `now`, its workload having completed at
/// `completed_at` (times relative to the association's start).
pub fn association_metrics(
    a: &SctpAssociation,
    completed_at: Option<SimTime>,
    _now: SimTime,
) -> SctpMetrics {
    let since = |t: Option<SimTime>| t.map(|t| t.saturating_since(a.started_at()).as_secs_f64());
    let st = &a.stats;
    let client = a.side() == Side::Client;
    let stream_completion_secs: Vec<Option<f64>> = if client {
        a.recv_stream_times()
            .filter(|(id, _, _)| *id < SERVER_STREAMS_FROM)
            .map(|(_, _, done)| since(done))
            .collect()
    } else {
        a.send_completions().map(|(_, t)| since(t)).collect()
    };
    let first_byte = if client {
        a.recv_stream_times().filter_map(|(_, f, _)| f).min()
    } else {
        None
    };
    let completion_secs = since(completed_at);
    let goodput_bps = match (client, completion_secs) {
        (true, Some(t)) if t > 0.0 => Some(st.stream_bytes_read as f64 * 8.0 / t),
        _ => None,
    };
    let rtt = a.rtt();
    SctpMetrics {
        transport: TransportMetrics {
            role: if client { "client" } else { "server" }.into(),
            handshake_secs: since(a.handshake_at()),
            completion_secs,
            time_to_first_byte_secs: since(first_byte),
            goodput_bps,
            stream_bytes_read: st.stream_bytes_read,
            bytes_sent: st.bytes_sent,
            packets_sent: st.packets_sent,
            packets_lost: st.chunks_lost,
            packets_retransmitted: st.packets_retransmitted,
            stream_bytes_retransmitted: st.stream_bytes_retransmitted,
            spurious_losses: st.spurious_losses,
            duplicate_stream_bytes: st.duplicate_stream_bytes,
            loss_ratio: if st.data_chunks_sent > 0 {
                st.chunks_lost as f64 / st.data_chunks_sent as f64
            } else {
                0.0
            },
            pto_count: st.t3_expirations,
            congestion_events: st.congestion_events,
            cwnd_blocked_secs: 0.0,
            flow_control_blocked_secs: 0.0,
            bytes_in_flight_end: a.flight_size(),
            cwnd_end: a.cwnd(),
            ssthresh_end: a.ssthresh(),
            srtt_end_secs: rtt.smoothed_rtt().as_secs_f64(),
            min_rtt_secs: rtt.min_rtt().as_secs_f64(),
            closed: a.is_closed(),
        },
        sctp: SctpExtras {
            data_chunks_sent: st.data_chunks_sent,
            chunks_retransmitted: st.chunks_retransmitted,
            fast_retransmits: st.fast_retransmits,
            sacks_sent: st.sacks_sent,
            gap_blocks_sent: st.gap_blocks_sent,
            duplicate_tsns: st.duplicate_tsns,
            handshake_retransmits: st.handshake_retransmits,
            rto_end_secs: a.rto().as_secs_f64(),
        },
        workload: WorkloadMetrics {
            stream_completion_secs,
            connections: Vec::new(),
            history: Vec::new(),
            ..WorkloadMetrics::default()
        },
    }
}

impl TransportDriver for SctpAssociation {
    type Config = SctpConfig;
    /// SCTP has no session resumption.
    type Ticket = ();

    fn start(&mut self, now: SimTime) {
        SctpAssociation::start(self, now);
        self.start_breakdown(now);
    }

    /// The reader is not consulted: SCTP's application consumes at once (see
    /// [`StreamTransport::read`] above).
    fn handle_datagram(
        &mut self,
        now: SimTime,
        datagram: &Datagram,
        _reader: &mut dyn AppReader,
    ) -> bool {
        let Payload::Sctp(p) = &datagram.payload else {
            return false;
        };
        self.handle_packet(now, p);
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
        if let Some(k) = number {
            self.set_vtag(k);
        }
        let Some(p) = self.poll_transmit(now) else {
            self.note_send_opportunity(now);
            return None;
        };
        let size = u32::try_from(p.size()).expect("packet size fits u32");
        let (mut b, old) = pool.boxed_sctp(p);
        if let Some(old) = old {
            self.recycle_packet(&mut b, old);
        }
        Some(Datagram::new(local, remote, size, flow, Payload::Sctp(b)))
    }

    fn poll_timeout(&self, _reader: &dyn AppReader) -> Option<SimTime> {
        SctpAssociation::poll_timeout(self)
    }

    fn handle_timeout(&mut self, now: SimTime, _reader: &mut dyn AppReader) {
        SctpAssociation::handle_timeout(self, now);
    }

    fn set_tracing(&mut self, on: bool) {
        self.trace.set_on(on);
    }

    fn drain_trace(&mut self, sink: &mut dyn FnMut(SimTime, TraceEvent)) {
        self.trace.drain(sink);
    }

    fn time_breakdown(&self, now: SimTime) -> Option<TimeBreakdown> {
        Some(SctpAssociation::time_breakdown(self, now))
    }

    fn freeze_breakdown(&mut self, at: SimTime) {
        SctpAssociation::freeze_breakdown(self, at);
    }

    fn metrics(&self, completed_at: Option<SimTime>, now: SimTime) -> EndpointMetrics {
        EndpointMetrics::Sctp(Box::new(association_metrics(self, completed_at, now)))
    }

    /// Congestion window, ssthresh, flight size, smoothed RTT, RTO and the advertised
    /// receive window.
    fn series_sample(&self) -> Vec<(String, f64)> {
        vec![
            ("cwnd".to_string(), self.cwnd() as f64),
            (
                "ssthresh".to_string(),
                self.ssthresh().map_or(f64::INFINITY, |s| s as f64),
            ),
            ("bytes_in_flight".to_string(), self.flight_size() as f64),
            (
                "srtt_s".to_string(),
                self.rtt().smoothed_rtt().as_secs_f64(),
            ),
            ("rto_s".to_string(), self.rto().as_secs_f64()),
            ("recv_window".to_string(), self.a_rwnd() as f64),
        ]
    }

    /// The verification tag.
    fn connection_number(datagram: &Datagram) -> Option<u64> {
        match &datagram.payload {
            Payload::Sctp(p) => Some(p.vtag),
            _ => None,
        }
    }

    /// A packet with an INIT opens an association (no ticket, no token).
    fn hello(datagram: &Datagram) -> Option<Hello> {
        match &datagram.payload {
            Payload::Sctp(p) if p.chunks.iter().any(|c| matches!(c, Chunk::Init(_))) => {
                Some(Hello::default())
            }
            _ => None,
        }
    }

    fn cc_stream(cfg: &mut SctpConfig) -> &mut crate::cc::CcStreamId {
        &mut cfg.cc_stream
    }

    fn connect(base: &SctpConfig, _spec: &ConnectionSpec) -> Self {
        SctpAssociation::new(Side::Client, base.clone())
    }

    fn resume(&mut self, _ticket: ()) {}

    fn ticket(&self, _id: u64) {}

    fn issues_tokens(_base: &SctpConfig) -> bool {
        false
    }

    fn default_initial_cwnd(base: &SctpConfig, _spec: &ConnectionSpec) -> u64 {
        base.initial_cwnd()
    }

    fn accept(
        base: &SctpConfig,
        _spec: &ConnectionSpec,
        _first: &Datagram,
        _ticket_valid: bool,
        _token_valid: bool,
        initial_cwnd: Option<u64>,
    ) -> Self {
        let mut cfg = base.clone();
        if let Some(w) = initial_cwnd {
            cfg.initial_cwnd_bytes = Some(w);
        }
        SctpAssociation::new(Side::Server, cfg)
    }

    fn presented_token(&self) -> bool {
        false
    }

    fn report(
        &self,
        index: u64,
        local: Addr,
        completed_at: Option<SimTime>,
        _token: bool,
        now: SimTime,
    ) -> ConnectionReport {
        let m = association_metrics(self, completed_at, now);
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
            close_secs: self.closed().map(|(t, _)| t.as_secs_f64()),
            close_reason: self.closed().map(|(_, k)| k.name().to_string()),
            last_activity_secs: 0.0,
            idle_timeout_secs: 0.0,
            status,
            ticket: false,
            resumed: false,
            zero_rtt_accepted: None,
            token: false,
            zero_rtt_packets: 0,
            zero_rtt_stream_bytes: 0,
            zero_rtt_packets_rejected: 0,
            metrics: m.into(),
        }
    }

    fn not_started_report(
        base: &SctpConfig,
        _spec: &ConnectionSpec,
        index: u64,
        local: Addr,
    ) -> ConnectionReport {
        let a = SctpAssociation::new(Side::Client, base.clone());
        let mut r = a.report(index, local, None, false, SimTime::ZERO);
        r.start_secs = None;
        r.status = ConnectionStatus::NotStarted;
        r
    }

    /// The last connection's metrics with the byte and packet counters summed.
    fn sequence_metrics(
        side: Side,
        reports: Vec<ConnectionReport>,
        all_completed: bool,
        history: Vec<HistorySample>,
    ) -> EndpointMetrics {
        let mut m = match reports.last() {
            Some(r) => SctpMetrics {
                transport: r.metrics.transport().clone(),
                sctp: SctpExtras::default(),
                workload: WorkloadMetrics::default(),
            },
            None => association_metrics(
                &SctpAssociation::new(side, SctpConfig::default()),
                None,
                SimTime::ZERO,
            ),
        };
        let sum = |f: fn(&TransportMetrics) -> u64| {
            reports
                .iter()
                .map(|r| f(r.metrics.transport()))
                .sum::<u64>()
        };
        m.transport.stream_bytes_read = sum(|t| t.stream_bytes_read);
        m.transport.bytes_sent = sum(|t| t.bytes_sent);
        m.transport.packets_sent = sum(|t| t.packets_sent);
        m.transport.packets_lost = sum(|t| t.packets_lost);
        if !all_completed {
            m.transport.completion_secs = None;
        }
        m.workload.connections = reports;
        m.workload.history = history;
        EndpointMetrics::Sctp(Box::new(m))
    }
}

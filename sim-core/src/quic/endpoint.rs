//! [`QuicEndpoint`]: a QUIC [`Connection`] plus the `bulk` workload, driven by the engine
//! through [`crate::endpoint::Endpoint`].
//!
//! Workload `bulk`: once the handshake completes, the client opens `streams`
//! bidirectional streams (as many as the server's MAX_STREAMS allows, more as it raises
//! it) and writes a `request_size`-byte request with FIN on each. When the server has read
//! a whole request it answers on the same stream with that stream's share of `bytes` and
//! a FIN. The client is done when it has read every response; the server when every
//! response is acknowledged.

use super::config::QuicConfig;
pub use super::connection::Role;
use super::connection::{ConnEvent, Connection};
use super::recovery::Space;
use crate::endpoint::Endpoint;
use crate::metrics::EndpointMetrics;
use crate::packet::{Addr, Datagram, FlowId, Payload};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// What a QUIC endpoint reports (in [`EndpointMetrics::Quic`]). Times are seconds from the
/// connection start; `None` when the event did not happen.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuicMetrics {
    /// `"client"` or `"server"`.
    pub role: String,
    /// Handshake completion (client: the server's flight was received and 1-RTT keys are
    /// available; server: the client's Finished arrived).
    pub handshake_secs: Option<f64>,
    /// Handshake confirmation (client: HANDSHAKE_DONE; server: same as completion).
    pub handshake_confirmed_secs: Option<f64>,
    /// Client: the last response byte was read by the application. Server: the last
    /// response byte was acknowledged.
    pub completion_secs: Option<f64>,
    /// Client: the first response byte was delivered in order.
    pub time_to_first_byte_secs: Option<f64>,
    /// Client: response bytes read × 8 / completion time.
    pub goodput_bps: Option<f64>,
    /// Stream bytes read by this side's application.
    pub stream_bytes_read: u64,
    /// Per request stream (in stream order): client read completion, server
    /// acknowledgement completion.
    pub stream_completion_secs: Vec<Option<f64>>,
    /// UDP datagrams sent.
    pub datagrams_sent: u64,
    /// UDP payload bytes sent.
    pub bytes_sent: u64,
    /// QUIC packets sent (coalesced packets count separately).
    pub packets_sent: u64,
    /// Packets declared lost by the sender's loss detection.
    pub packets_lost: u64,
    /// Packets that carried retransmitted STREAM or CRYPTO data.
    pub packets_retransmitted: u64,
    /// Stream bytes sent again.
    pub stream_bytes_retransmitted: u64,
    /// Packets declared lost and acknowledged afterwards.
    pub spurious_losses: u64,
    /// Stream bytes received more than once (spurious or duplicate receptions).
    pub duplicate_stream_bytes: u64,
    /// Sender-declared loss ratio: packets declared lost / packets sent. (Link drops per
    /// flow are in the flow report: link drops / datagrams sent.)
    pub loss_ratio: f64,
    /// PTO expirations.
    pub pto_count: u64,
    /// Congestion events (window reductions).
    pub congestion_events: u64,
    /// Persistent congestion declarations.
    pub persistent_congestion: u64,
    /// Time the sender had stream data but a full congestion window.
    pub cwnd_blocked_secs: f64,
    /// Time the sender had stream data but no flow-control credit.
    pub flow_control_blocked_secs: f64,
    /// Time the server had stream data but was at its anti-amplification limit.
    pub amplification_blocked_secs: f64,
    /// Bytes in flight at the end.
    pub bytes_in_flight_end: u64,
    /// Congestion window at the end, bytes.
    pub cwnd_end: u64,
    /// Slow-start threshold at the end, bytes (`None`: still infinite).
    pub ssthresh_end: Option<u64>,
    /// Smoothed RTT at the end.
    pub srtt_end_secs: f64,
    /// Minimum RTT seen.
    pub min_rtt_secs: f64,
    /// DATA_BLOCKED frames sent.
    pub data_blocked_sent: u64,
    /// STREAM_DATA_BLOCKED frames sent.
    pub stream_data_blocked_sent: u64,
    /// MAX_DATA frames sent.
    pub max_data_sent: u64,
    /// MAX_STREAM_DATA frames sent.
    pub max_stream_data_sent: u64,
    /// The connection closed before finishing (idle timeout).
    pub closed: bool,
    /// `quic_connections` flows: one report per connection of the sequence (the fields
    /// above are then the sequence's totals, see `docs/lifecycle.md`). Empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connections: Vec<super::lifecycle::ConnectionReport>,
    /// `quic_connections` servers: the congestion-window samples taken at 0-RTT
    /// resumptions and connection closes (the history hook's input, paper 000).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<super::lifecycle::HistorySample>,
}

/// A QUIC endpoint running the `bulk` workload.
#[derive(Debug)]
pub struct QuicEndpoint {
    conn: Connection,
    local: Addr,
    remote: Addr,
    flow: FlowId,
    streams: u64,
    bytes: u64,
    request_size: u64,
    requests_opened: u64,
    finished_streams: u64,
    completed_at: Option<SimTime>,
}

impl QuicEndpoint {
    /// An endpoint of `role` at `local`, talking to `remote`, accounted to `flow`. The
    /// client's application reads at `cfg.read_rate`; the server reads requests at once.
    pub fn new(role: Role, cfg: QuicConfig, local: Addr, remote: Addr, flow: FlowId) -> Self {
        let read_rate = match role {
            Role::Client => cfg.read_rate,
            Role::Server => None,
        };
        QuicEndpoint {
            streams: cfg.streams,
            bytes: cfg.bytes,
            request_size: cfg.request_size,
            conn: Connection::new(role, cfg, read_rate),
            local,
            remote,
            flow,
            requests_opened: 0,
            finished_streams: 0,
            completed_at: None,
        }
    }

    /// The connection (read-only).
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Response size of request stream `id` (client-initiated bidirectional: index
    /// `id / 4`): `bytes / streams`, plus one for the first `bytes mod streams` streams.
    pub fn response_size(&self, id: u64) -> u64 {
        let k = id / 4;
        self.bytes / self.streams + u64::from(k < self.bytes % self.streams)
    }

    fn drive_app(&mut self, now: SimTime) {
        loop {
            let events = self.conn.take_events();
            if events.is_empty() {
                break;
            }
            for ev in events {
                match (self.conn.role(), ev) {
                    (Role::Client, ConnEvent::Connected | ConnEvent::StreamsAvailable) => {
                        while self.requests_opened < self.streams {
                            let Some(id) = self.conn.open_stream() else {
                                break;
                            };
                            self.conn.write(id, self.request_size, true);
                            self.requests_opened += 1;
                        }
                    }
                    (Role::Client, ConnEvent::StreamReadComplete(_)) => {
                        self.finished_streams += 1;
                        if self.finished_streams == self.streams {
                            self.completed_at = Some(now);
                        }
                    }
                    (Role::Server, ConnEvent::StreamReadComplete(id)) if id / 4 < self.streams => {
                        let n = self.response_size(id);
                        self.conn.write(id, n, true);
                    }
                    (Role::Server, ConnEvent::StreamSendComplete(_)) => {
                        self.finished_streams += 1;
                        if self.finished_streams == self.streams {
                            self.completed_at = Some(now);
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    /// The endpoint's [`QuicMetrics`] at `now`.
    pub fn quic_metrics(&self, now: SimTime) -> QuicMetrics {
        connection_metrics(&self.conn, self.completed_at, now)
    }

    /// One time-series sample: congestion state (`ssthresh` is infinite until the first
    /// loss), RTT, bytes read per request stream and receive windows (credit advertised
    /// beyond what was consumed). The column set is fixed for the run.
    pub fn series_sample(&self) -> Vec<(String, f64)> {
        let c = &self.conn;
        let r = c.recovery();
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
                c.recv_flow().limit.saturating_sub(c.recv_flow().consumed) as f64,
            ),
        ];
        // Fixed columns for the whole run: one pair per request stream (client-initiated
        // IDs 0, 4, 8, ...), zero until the stream exists.
        for k in 0..self.streams {
            let id = 4 * k;
            let (read, window) = c.streams().get(&id).map_or((0, 0), |s| {
                (
                    s.recv.consumed,
                    s.recv_fc.limit.saturating_sub(s.recv.consumed),
                )
            });
            v.push((format!("stream{id}_read"), read as f64));
            v.push((format!("stream{id}_recv_window"), window as f64));
        }
        v
    }

    /// PTO duration of the application space (for tests and reports).
    pub fn pto(&self) -> crate::time::SimDuration {
        self.conn.recovery().pto_duration(Space::ApplicationData)
    }
}

impl Endpoint for QuicEndpoint {
    fn start(&mut self, now: SimTime) {
        self.conn.start(now);
        self.drive_app(now);
    }

    fn handle_datagram(&mut self, now: SimTime, datagram: Datagram) {
        if let Payload::Quic(d) = &datagram.payload {
            // Answer from where the peer sends (a server learns the client's address).
            self.remote = datagram.src;
            self.conn.handle_datagram(now, d, u64::from(datagram.size));
            self.drive_app(now);
        }
    }

    fn handle_timeout(&mut self, now: SimTime) {
        self.conn.handle_timeout(now);
        self.drive_app(now);
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram> {
        let (d, size) = self.conn.poll_transmit(now)?;
        let size = u32::try_from(size).expect("datagram size fits u32");
        Some(Datagram::new(
            self.local,
            self.remote,
            size,
            self.flow,
            Payload::Quic(Box::new(d)),
        ))
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        self.conn.poll_timeout()
    }

    fn local_addr(&self) -> Addr {
        self.local
    }

    fn is_done(&self) -> bool {
        self.completed_at.is_some()
    }

    fn metrics(&self, now: SimTime) -> EndpointMetrics {
        EndpointMetrics::Quic(Box::new(self.quic_metrics(now)))
    }

    fn set_tracing(&mut self, on: bool) {
        self.conn.trace.set_on(on);
    }

    fn drain_trace(&mut self, sink: &mut dyn FnMut(SimTime, crate::trace::TraceEvent)) {
        self.conn.trace.drain(sink);
    }

    fn series_columns(&self) -> Vec<String> {
        self.series_sample().into_iter().map(|(k, _)| k).collect()
    }

    fn series_values(&self, out: &mut Vec<f64>) {
        out.extend(self.series_sample().into_iter().map(|(_, v)| v));
    }
}

/// The [`QuicMetrics`] of connection `c` at `now`, its workload having completed at
/// `completed_at` (times are relative to the connection's start).
pub fn connection_metrics(
    c: &Connection,
    completed_at: Option<SimTime>,
    now: SimTime,
) -> QuicMetrics {
    let secs_since_start =
        |t: Option<SimTime>| t.map(|t| t.saturating_since(c.started_at()).as_secs_f64());
    let st = &c.stats;
    let rs = c.recovery().stats();
    let rtt = c.recovery().rtt();
    let (cw, fc, amp) = c.blocked_times(now);
    let role = c.role();
    let mut ids: Vec<u64> = c
        .streams()
        .keys()
        .copied()
        .filter(|id| id % 4 == 0)
        .collect();
    ids.sort_unstable();
    let stream_completion_secs = ids
        .iter()
        .map(|id| {
            let s = &c.streams()[id];
            let t = match role {
                Role::Client => s.recv_complete_at,
                Role::Server => s.send_complete_at,
            };
            secs_since_start(t)
        })
        .collect();
    let first_byte = match role {
        Role::Client => c.streams().values().filter_map(|s| s.first_byte_at).min(),
        Role::Server => None,
    };
    let completion_secs = secs_since_start(completed_at);
    let goodput_bps = match (role, completion_secs) {
        (Role::Client, Some(t)) if t > 0.0 => Some(st.stream_bytes_read as f64 * 8.0 / t),
        _ => None,
    };
    QuicMetrics {
        role: match role {
            Role::Client => "client".into(),
            Role::Server => "server".into(),
        },
        handshake_secs: secs_since_start(c.handshake_complete_at),
        handshake_confirmed_secs: secs_since_start(c.handshake_confirmed_at),
        completion_secs,
        time_to_first_byte_secs: secs_since_start(first_byte),
        goodput_bps,
        stream_bytes_read: st.stream_bytes_read,
        stream_completion_secs,
        datagrams_sent: st.datagrams_sent,
        bytes_sent: st.bytes_sent,
        packets_sent: st.packets_sent,
        packets_lost: st.packets_lost,
        packets_retransmitted: st.packets_retransmitted,
        stream_bytes_retransmitted: st.stream_bytes_retransmitted,
        spurious_losses: rs.spurious_losses,
        duplicate_stream_bytes: st.duplicate_stream_bytes,
        loss_ratio: if st.packets_sent > 0 {
            st.packets_lost as f64 / st.packets_sent as f64
        } else {
            0.0
        },
        pto_count: rs.ptos,
        congestion_events: rs.congestion_events,
        persistent_congestion: rs.persistent_congestion,
        cwnd_blocked_secs: cw.as_secs_f64(),
        flow_control_blocked_secs: fc.as_secs_f64(),
        amplification_blocked_secs: amp.as_secs_f64(),
        bytes_in_flight_end: c.recovery().bytes_in_flight(),
        cwnd_end: c.recovery().cwnd(),
        ssthresh_end: c.recovery().cc().ssthresh(),
        srtt_end_secs: rtt.smoothed_rtt().as_secs_f64(),
        min_rtt_secs: rtt.min_rtt().as_secs_f64(),
        data_blocked_sent: st.data_blocked_sent,
        stream_data_blocked_sent: st.stream_data_blocked_sent,
        max_data_sent: st.max_data_sent,
        max_stream_data_sent: st.max_stream_data_sent,
        closed: c.is_closed(),
        connections: Vec::new(),
        history: Vec::new(),
    }
}

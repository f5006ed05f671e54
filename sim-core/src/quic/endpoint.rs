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
use super::metrics::{connection_metrics, QuicMetrics};
use super::recovery::Space;
use crate::endpoint::Endpoint;
use crate::metrics::EndpointMetrics;
use crate::packet::{Addr, Datagram, FlowId, Payload};
use crate::time::SimTime;

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

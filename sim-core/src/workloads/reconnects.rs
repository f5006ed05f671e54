//! Workload `reconnects` (paper 003's "number of reconnections" axis): one transfer of
//! `bytes` cut into `reconnections + 1` parts, each carried by its own connection; between
//! parts the connection ends (`on = "idle"`: both ends close at the idle timeout, RFC 9000
//! §10.1; `on = "close"`: the client closes as soon as its part is read) and a new one,
//! resuming the previous session when the transport can (QUIC: session ticket, 0-RTT when
//! `zero_rtt`; TCP: TFO / TLS resumption when configured; SCTP: a new four-way handshake),
//! carries on with the rest.
//!
//! The connector seam is [`TransportDriver`]'s `connect` / `resume` / `accept`, which the
//! connection sequence ([`super::sequence`]) drives: a reconnecting transfer is a sequence
//! of parts ([`parts`]), so a transport's arm in [`crate::flows`] is one call of
//! [`endpoints`] with its connection type. [`Reconnecting`] adds the workload's report
//! (total transfer time, each reconnection's handshake time) to the sequence's metrics.

use crate::config::workload::{CloseMode, ConnectionSpec, ReconnectOn, ReconnectsSpec};
use crate::driver::TransportDriver;
use crate::endpoint::Endpoint;
use crate::metrics::workload::{ConnectionStatus, ReconnectsReport};
use crate::metrics::EndpointMetrics;
use crate::packet::{Addr, Datagram, FlowId};
use crate::time::SimTime;
use crate::trace::TraceEvent;
use crate::workloads::sequence::{all_completed, RangeRequests, SequenceClient, SequenceServer};

/// The connections of a reconnecting transfer: `reconnections + 1` parts of `bytes` (the
/// first `bytes mod parts` parts one byte more), each resuming, started when the previous
/// one ended, closed as `on` says. With `on = "address_change"`: one part of `bytes`,
/// closed by the client when read; the client adds a part for the rest at each address
/// change it reconnects at ([`SequenceClient::reconnect_on_address_change`]).
pub fn parts(spec: &ReconnectsSpec) -> Vec<ConnectionSpec> {
    if spec.on == ReconnectOn::AddressChange {
        return vec![ConnectionSpec {
            streams: spec.streams,
            request_size: spec.request_size,
            close: CloseMode::Explicit,
            ..ConnectionSpec::new(spec.bytes)
        }];
    }
    let n = spec.reconnections + 1;
    (0..n)
        .map(|k| ConnectionSpec {
            streams: spec.streams,
            request_size: spec.request_size,
            close: match spec.on {
                ReconnectOn::Idle => CloseMode::Idle,
                ReconnectOn::Close | ReconnectOn::AddressChange => CloseMode::Explicit,
            },
            ..ConnectionSpec::new(spec.bytes / n + u64::from(k < spec.bytes % n))
        })
        .collect()
}

/// The client and server endpoints of a `reconnects` flow over transport `T`, each side
/// from its own base configuration. Every transport's arm in [`crate::flows`] is this call.
pub fn endpoints<T: TransportDriver>(
    client_base: T::Config,
    server_base: T::Config,
    spec: &ReconnectsSpec,
    client: Addr,
    server: Addr,
    flow: FlowId,
) -> (
    Reconnecting<SequenceClient<T>>,
    Reconnecting<SequenceServer<T>>,
) {
    let p = parts(spec);
    let mut c = SequenceClient::new(client_base, p.clone(), client, server, flow);
    let mut s = SequenceServer::new(server_base, p, server, flow);
    if spec.on == ReconnectOn::AddressChange {
        let ranges = RangeRequests::default();
        c = c.reconnect_on_address_change(ranges.clone(), spec.reconnections);
        s = s.reconnect_on_address_change(ranges);
    }
    (Reconnecting(c), Reconnecting(s))
}

/// A connection-sequence endpoint reporting as a reconnecting transfer.
#[derive(Debug)]
pub struct Reconnecting<E>(pub E);

impl<E: Endpoint> Endpoint for Reconnecting<E> {
    fn start(&mut self, now: SimTime) {
        self.0.start(now)
    }
    fn handle_datagram(&mut self, now: SimTime, datagram: Datagram) {
        self.0.handle_datagram(now, datagram)
    }
    fn handle_timeout(&mut self, now: SimTime) {
        self.0.handle_timeout(now)
    }
    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram> {
        self.0.poll_transmit(now)
    }
    fn poll_timeout(&self) -> Option<SimTime> {
        self.0.poll_timeout()
    }
    fn handle_local_address_change(&mut self, now: SimTime, new: Addr) {
        self.0.handle_local_address_change(now, new)
    }
    fn local_addr(&self) -> Addr {
        self.0.local_addr()
    }
    fn is_done(&self) -> bool {
        self.0.is_done()
    }
    /// The sequence's metrics plus `reconnects`: transfer time from the first connection's
    /// start to the last one's completion, and each connection's handshake time.
    fn metrics(&self, now: SimTime) -> EndpointMetrics {
        let mut m = self.0.metrics(now);
        if let Some(w) = m.workload_mut() {
            let c = &w.connections;
            let first = c.first().and_then(|r| r.start_secs);
            // The transfer completed when every part did (a part abandoned at an address
            // change had its rest carried by a later connection), not merely the last.
            let last = c
                .last()
                .filter(|r| r.status == ConnectionStatus::Completed)
                .filter(|_| all_completed(c));
            let end =
                last.and_then(|r| Some(r.start_secs? + r.metrics.transport().completion_secs?));
            let address_changes = w
                .reconnects
                .take()
                .map(|r| r.address_changes)
                .unwrap_or_default();
            w.reconnects = Some(ReconnectsReport {
                transfer_secs: first.zip(end).map(|(a, b)| b - a),
                handshake_secs: c
                    .iter()
                    .map(|r| r.metrics.transport().handshake_secs)
                    .collect(),
                resumed: c.iter().map(|r| r.resumed).collect(),
                address_changes,
            });
        }
        m
    }
    fn series_columns(&self) -> Vec<String> {
        self.0.series_columns()
    }
    fn series_values(&self, out: &mut Vec<f64>) {
        self.0.series_values(out)
    }
    fn set_tracing(&mut self, on: bool) {
        self.0.set_tracing(on)
    }
    fn drain_trace(&mut self, sink: &mut dyn FnMut(SimTime, TraceEvent)) {
        self.0.drain_trace(sink)
    }
    fn drain_trace_tagged(&mut self, sink: &mut dyn FnMut(u32, SimTime, TraceEvent)) {
        self.0.drain_trace_tagged(sink)
    }
}

//! The flow factory: turns a [`FlowConfig`] into its endpoints, so the runner names no
//! protocol.
//!
//! [`build`] is the one place that maps a flow ([`AppConfig`]: CBR, or a transport ×
//! workload pair) to the endpoint types that run it: a new transport or workload adds its
//! arm here (one per pair it runs, and its endpoints' trace kind), and nothing in
//! [`crate::runner`] changes. Each side's transport connection is built from that side's
//! config ([`crate::config::Sides`]). The runner places
//! each [`FlowEndpoint`] on the host of the pair side it names, starts it at its start
//! time and keeps the endpoints in the order returned (the order is part of the digest and
//! of the run result: the flow's first endpoint is reported first).

use crate::apps::cbr::{CbrSink, CbrSource};
use crate::config::{
    AppConfig, Direction, FlowConfig, TransportConfig, TransportFlow, WorkloadConfig,
};
use crate::endpoint::Endpoint;
use crate::packet::{Addr, FlowId};
use crate::quic::{Connection, Role};
use crate::time::SimTime;
use crate::trace::Vantage;
use crate::workloads::bulk::{Bulk, BulkEndpoint};
use crate::workloads::reader::Reader;
use crate::workloads::sequence::{SequenceClient, SequenceServer};
use crate::workloads::{reconnects, video, web_page};

/// One endpoint of a flow, as [`build`] makes it.
pub struct FlowEndpoint {
    /// The host it runs on: the pair's client host or its server host.
    pub side: Vantage,
    /// When the runner starts it ([`Endpoint::start`]).
    pub start: SimTime,
    /// The application / protocol name in trace metadata
    /// ([`crate::trace::EndpointInfo::kind`]): `"quic"`, `"cbr_source"`, `"cbr_sink"`.
    pub kind: &'static str,
    /// The endpoint itself.
    pub endpoint: Box<dyn Endpoint>,
}

impl std::fmt::Debug for FlowEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlowEndpoint")
            .field("side", &self.side)
            .field("start", &self.start)
            .field("kind", &self.kind)
            .field("local", &self.endpoint.local_addr())
            .finish()
    }
}

/// The endpoints of flow `id` (config `flow`) whose client host has address `client` and
/// server host `server` (both with the flow's port), in the order the runner adds them:
/// the source (CBR) or client (transports) first.
pub fn build(flow: &FlowConfig, id: FlowId, client: Addr, server: Addr) -> Vec<FlowEndpoint> {
    let at = |side, start, kind, endpoint: Box<dyn Endpoint>| FlowEndpoint {
        side,
        start,
        kind,
        endpoint,
    };
    match &flow.app {
        AppConfig::Cbr {
            direction,
            rate,
            size,
            start,
            count,
        } => {
            let (src_side, src, dst_side, dst) = match direction {
                Direction::Up => (Vantage::Client, client, Vantage::Server, server),
                Direction::Down => (Vantage::Server, server, Vantage::Client, client),
            };
            let source = CbrSource::new(src, dst, id, *rate, size.0 as u32, *start, *count);
            vec![
                at(src_side, *start, "cbr_source", Box::new(source)),
                at(
                    dst_side,
                    SimTime::ZERO,
                    "cbr_sink",
                    Box::new(CbrSink::new(dst)),
                ),
            ]
        }
        AppConfig::Transport(TransportFlow {
            transport,
            workload,
        }) => match (transport, workload) {
            (TransportConfig::Quic(q), WorkloadConfig::Bulk(w)) => {
                // Transport QUIC x workload bulk, each side with its own config. The
                // client's application reads at `read_rate` (chunks of at most one datagram's
                // payload); the server reads requests at once.
                let bulk =
                    || Bulk::new(w.streams, w.bytes, w.request_size).with_duration(w.duration);
                let reader = Reader::new(w.read_rate, q.client.max_udp_payload);
                let cc = Connection::new(Role::Client, q.client.clone());
                let sc = Connection::new(Role::Server, q.server.clone());
                let c = BulkEndpoint::new(cc, bulk().with_reader(reader), client, server, id);
                let s = BulkEndpoint::new(sc, bulk(), server, client, id);
                vec![
                    at(Vantage::Client, SimTime::ZERO, "quic", Box::new(c)),
                    at(Vantage::Server, SimTime::ZERO, "quic", Box::new(s)),
                ]
            }
            (TransportConfig::Quic(q), WorkloadConfig::WebPage(w)) => {
                // Transport QUIC x workload web_page: one HTTP/3 request stream per object.
                let cc = Connection::new(Role::Client, q.client.clone());
                let sc = Connection::new(Role::Server, q.server.clone());
                let (c, s) = web_page::endpoints(cc, sc, w, client, server, id);
                vec![
                    at(Vantage::Client, SimTime::ZERO, "quic", Box::new(c)),
                    at(Vantage::Server, SimTime::ZERO, "quic", Box::new(s)),
                ]
            }
            (TransportConfig::Quic(q), WorkloadConfig::Video(v)) => {
                // Transport QUIC x workload video: one request stream per segment.
                let cc = Connection::new(Role::Client, q.client.clone());
                let sc = Connection::new(Role::Server, q.server.clone());
                let (c, s) = video::endpoints(cc, sc, v, client, server, id);
                vec![
                    at(Vantage::Client, SimTime::ZERO, "quic", Box::new(c)),
                    at(Vantage::Server, SimTime::ZERO, "quic", Box::new(s)),
                ]
            }
            (TransportConfig::Quic(q), WorkloadConfig::Reconnects(r)) => {
                // Transport QUIC x workload reconnects: resumption (0-RTT with `zero_rtt`).
                let (c, s) = reconnects::endpoints::<Connection>(
                    q.client.clone(),
                    q.server.clone(),
                    r,
                    client,
                    server,
                    id,
                );
                vec![
                    at(Vantage::Client, SimTime::ZERO, "quic", Box::new(c)),
                    at(Vantage::Server, SimTime::ZERO, "quic", Box::new(s)),
                ]
            }
            (TransportConfig::Quic(q), WorkloadConfig::Sequence(seq)) => {
                // Transport QUIC x workload sequence, each side with its own config.
                let c = SequenceClient::<Connection>::new(
                    q.client.clone(),
                    seq.connections.clone(),
                    client,
                    server,
                    id,
                );
                let s = SequenceServer::<Connection>::new(
                    q.server.clone(),
                    seq.connections.clone(),
                    server,
                    id,
                );
                vec![
                    at(Vantage::Client, SimTime::ZERO, "quic", Box::new(c)),
                    at(Vantage::Server, SimTime::ZERO, "quic", Box::new(s)),
                ]
            }
        },
    }
}

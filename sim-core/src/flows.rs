//! The flow factory: turns a [`FlowConfig`] into its endpoints, so the runner names no
//! protocol.
//!
//! [`build`] is the one place that maps a flow ([`AppConfig`]: CBR, or a transport ×
//! workload pair) to the endpoint types that run it: a new transport or workload adds its
//! arm here (one per pair it runs, and its endpoints' trace kind), and nothing in
//! [`crate::runner`] changes. Each workload's two endpoints are made by one function
//! generic over the transport's connection type ([`TransportDriver`]: `bulk_endpoints`,
//! `sequence_endpoints`), so a new workload adds one generic builder and a one-line arm
//! per transport. Each side's transport connection is built from that side's
//! config ([`crate::config::Sides`]). The runner places
//! each [`FlowEndpoint`] on the host of the pair side it names, starts it at its start
//! time and keeps the endpoints in the order returned (the order is part of the digest and
//! of the run result: the flow's first endpoint is reported first).

use crate::apps::cbr::{CbrSink, CbrSource};
use crate::config::{
    AppConfig, BulkSpec, Direction, FlowConfig, SequenceSpec, Sides, TransportConfig,
    TransportFlow, WorkloadConfig,
};
use crate::driver::TransportDriver;
use crate::endpoint::Endpoint;
use crate::packet::{Addr, FlowId};
use crate::quic::{Connection, Role};
use crate::sctp::SctpAssociation;
use crate::tcp::TcpConnection;
use crate::time::SimTime;
use crate::trace::Vantage;
use crate::transport::stream::Side;
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
    /// ([`crate::trace::EndpointInfo::kind`]): `"quic"`, `"tcp"`, `"sctp"`, `"cbr_source"`,
    /// `"cbr_sink"`.
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
/// the source (CBR) or client (transports) first. `seed`: the run's seed, from which
/// each side's congestion controller derives its random stream ([`crate::cc::CcStreamId`]).
pub fn build(
    flow: &FlowConfig,
    id: FlowId,
    client: Addr,
    server: Addr,
    seed: u64,
) -> Vec<FlowEndpoint> {
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
            start,
        }) => {
            let ends = Ends {
                client,
                server,
                id,
                start: *start,
                seed,
            };
            // One arm per transport: each side's connection is built from its own config;
            // `workload_endpoints` maps the workload to its generic builder.
            match transport {
                TransportConfig::Quic(q) => {
                    let q = &streams::<Connection>(&q.client, &q.server, seed, id);
                    let conns = || {
                        (
                            Connection::new(Role::Client, q.client.clone()),
                            Connection::new(Role::Server, q.server.clone()),
                        )
                    };
                    let chunk = q.client.max_udp_payload;
                    workload_endpoints(conns, &q.client, &q.server, workload, chunk, "quic", ends)
                }
                TransportConfig::Tcp(t) => {
                    let t = &streams::<TcpConnection>(&t.client, &t.server, seed, id);
                    let conns = || {
                        (
                            TcpConnection::new(Side::Client, t.client.clone()),
                            TcpConnection::new(Side::Server, t.server.clone()),
                        )
                    };
                    let chunk = t.client.effective_mss();
                    workload_endpoints(conns, &t.client, &t.server, workload, chunk, "tcp", ends)
                }
                TransportConfig::Sctp(t) => {
                    let t = &streams::<SctpAssociation>(&t.client, &t.server, seed, id);
                    let conns = || {
                        (
                            SctpAssociation::new(Side::Client, t.client.clone()),
                            SctpAssociation::new(Side::Server, t.server.clone()),
                        )
                    };
                    let chunk = t.client.pmdcs();
                    workload_endpoints(conns, &t.client, &t.server, workload, chunk, "sctp", ends)
                }
            }
        }
    }
}

/// The two sides' configurations with their controllers' random streams set: the run's
/// `seed`, flow `id`, client or server (connection 0, path 0; a sequence numbers its
/// connections, a migration its paths).
fn streams<T: TransportDriver>(
    client: &T::Config,
    server: &T::Config,
    seed: u64,
    id: FlowId,
) -> Sides<T::Config> {
    let mut sides = Sides {
        client: client.clone(),
        server: server.clone(),
    };
    for (cfg, is_server) in [(&mut sides.client, false), (&mut sides.server, true)] {
        *T::cc_stream(cfg) = crate::cc::CcStreamId {
            seed,
            flow: id,
            server: is_server,
            connection: 0,
            path: 0,
        };
    }
    sides
}

/// The endpoints of `workload` over the transport whose fresh client and server
/// connections `conns` makes (the per-connection workloads `sequence` and `reconnects`
/// build theirs from the sides' base configs instead). `read_chunk`: the most the bulk
/// client reads at once (one datagram's payload).
fn workload_endpoints<T: TransportDriver + 'static>(
    conns: impl FnOnce() -> (T, T),
    client_cfg: &T::Config,
    server_cfg: &T::Config,
    workload: &WorkloadConfig,
    read_chunk: u64,
    kind: &'static str,
    ends: Ends,
) -> Vec<FlowEndpoint> {
    // A workload written in terms of one that runs already (`WorkloadDef::lower`).
    if let Some(lowered) = workload.lower() {
        return workload_endpoints(
            conns, client_cfg, server_cfg, &lowered, read_chunk, kind, ends,
        );
    }
    match workload {
        WorkloadConfig::Bulk(w) => {
            let (c, s) = conns();
            bulk_endpoints(c, s, w, read_chunk, kind, ends)
        }
        WorkloadConfig::Sequence(seq) => {
            sequence_endpoints::<T>(client_cfg, server_cfg, seq, kind, ends)
        }
        WorkloadConfig::WebPage(w) => {
            // One request stream per object (HTTP/3 on QUIC, HTTP/2 streams on TCP, one
            // SCTP stream each).
            let (c, s) = conns();
            let (c, s) = web_page::endpoints(c, s, w, ends.client, ends.server, ends.id);
            ends.pair(kind, Box::new(c), Box::new(s))
        }
        WorkloadConfig::Video(v) => {
            // One request stream per segment.
            let (c, s) = conns();
            let (c, s) = video::endpoints(c, s, v, ends.client, ends.server, ends.id, ends.seed);
            if v.reconnections > 0 {
                // Reconnects at address changes: new connections from each side's base.
                let c = c.reconnecting(client_cfg.clone(), v.reconnections);
                let s = s.reconnecting(server_cfg.clone(), 0);
                return ends.pair(kind, Box::new(c), Box::new(s));
            }
            ends.pair(kind, Box::new(c), Box::new(s))
        }
        WorkloadConfig::Reconnects(r) => {
            // A connection per part: QUIC resumes (0-RTT with `zero_rtt`), TCP and SCTP
            // handshake again.
            let (c, s) = reconnects::endpoints::<T>(
                client_cfg.clone(),
                server_cfg.clone(),
                r,
                ends.client,
                ends.server,
                ends.id,
            );
            ends.pair(kind, Box::new(c), Box::new(s))
        }
        // A workload with a runner of its own has its arm above; the others lower to one
        // (`tests/tests/workloads_table.rs` runs every workload over every transport).
        #[allow(unreachable_patterns)]
        other => unreachable!("workload {} neither lowers nor has a runner", other.kind()),
    }
}

/// Where and when a transport flow's two endpoints run: the client and server host
/// addresses, the flow, its start time and the run's seed (for a workload's own random
/// stream).
#[derive(Clone, Copy, Debug)]
struct Ends {
    client: Addr,
    server: Addr,
    id: FlowId,
    start: SimTime,
    seed: u64,
}

impl Ends {
    /// The client's and the server's endpoint, both started at the flow's start, with
    /// trace kind `kind`.
    fn pair(
        self,
        kind: &'static str,
        c: Box<dyn Endpoint>,
        s: Box<dyn Endpoint>,
    ) -> Vec<FlowEndpoint> {
        let at = |side, endpoint| FlowEndpoint {
            side,
            start: self.start,
            kind,
            endpoint,
        };
        vec![at(Vantage::Client, c), at(Vantage::Server, s)]
    }
}

/// The `bulk` workload over any stream transport: connection `client` and `server` (not
/// started), each running [`Bulk`]. The client's application reads at `read_rate` in
/// chunks of at most `read_chunk` bytes (one datagram's payload); the server reads the
/// requests at once.
fn bulk_endpoints<T: TransportDriver + 'static>(
    client: T,
    server: T,
    w: &BulkSpec,
    read_chunk: u64,
    kind: &'static str,
    ends: Ends,
) -> Vec<FlowEndpoint> {
    let bulk = || Bulk::new(w.streams, w.bytes, w.request_size).with_duration(w.duration);
    let reader = Reader::new(w.read_rate, read_chunk);
    let c = BulkEndpoint::new(
        client,
        bulk().with_reader(reader),
        ends.client,
        ends.server,
        ends.id,
    );
    let s = BulkEndpoint::new(server, bulk(), ends.server, ends.client, ends.id);
    ends.pair(kind, Box::new(c), Box::new(s))
}

/// The connection `sequence` workload over any stream transport, each side on its base
/// config.
fn sequence_endpoints<T: TransportDriver + 'static>(
    client: &T::Config,
    server: &T::Config,
    seq: &SequenceSpec,
    kind: &'static str,
    ends: Ends,
) -> Vec<FlowEndpoint> {
    let c = SequenceClient::<T>::new(
        client.clone(),
        seq.connections.clone(),
        ends.client,
        ends.server,
        ends.id,
    );
    let s = SequenceServer::<T>::new(
        server.clone(),
        seq.connections.clone(),
        ends.server,
        ends.id,
    );
    ends.pair(kind, Box::new(c), Box::new(s))
}

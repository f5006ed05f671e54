//! The engine-facing half of a stream transport: what the generic endpoint adapters of
//! [`crate::workloads`] need from one connection besides the workload-facing
//! [`StreamTransport`] — datagrams in and out, timers, tracing, metrics, and creating,
//! resuming and accepting connections for a connection sequence.
//!
//! A transport implements [`TransportDriver`] for its connection type (QUIC:
//! `quic/stream_transport.rs`); the workloads' endpoints ([`crate::workloads::bulk`],
//! [`crate::workloads::sequence`]) are generic over it, so a new transport adds its
//! implementation and one arm in [`crate::flows`], and no workload changes. This module
//! names no protocol.

use crate::breakdown::TimeBreakdown;
use crate::config::workload::ConnectionSpec;
use crate::metrics::workload::{ConnectionReport, HistorySample};
use crate::metrics::EndpointMetrics;
use crate::packet::{Addr, Datagram, FlowId, PayloadPool};
use crate::time::SimTime;
use crate::trace::TraceEvent;
use crate::transport::initial_window::{DefaultWindow, InitialWindowPolicy};
use crate::transport::stream::{AppReader, Side, StreamTransport};

/// What a client's first datagram of a connection says about resumption: the session
/// ticket and the address-validation token it presents (their identities as issued by
/// the server).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hello {
    /// The session ticket presented, if any.
    pub ticket: Option<u64>,
    /// The address-validation token presented, if any.
    pub token: Option<u64>,
}

/// One connection of a transport, as the engine-facing endpoint adapters drive it.
///
/// Datagram-level methods follow [`crate::endpoint::Endpoint`]'s contract; the sequence
/// methods (`connect`, `accept`, tickets, reports) serve
/// [`crate::workloads::sequence`].
pub trait TransportDriver: StreamTransport + std::fmt::Debug + Sized {
    /// The transport's flow configuration (the sequence's base configuration).
    type Config: Clone + std::fmt::Debug;
    /// What a client keeps from a confirmed connection to resume the next one.
    type Ticket: Clone + std::fmt::Debug;

    /// Starts the connection (a client sends its first flight).
    fn start(&mut self, now: SimTime);

    /// Handles `datagram` if it carries this transport's payload; `false` (and nothing
    /// done) otherwise. Bytes it makes readable are reported to the workload's `reader`
    /// at once ([`AppReader::on_readable`]).
    fn handle_datagram(
        &mut self,
        now: SimTime,
        datagram: &Datagram,
        reader: &mut dyn AppReader,
    ) -> bool;

    /// The next datagram to send now, from `local` to `remote` on `flow`; `number`, when
    /// set, tags it with the connection's number in a sequence (the transport's connection
    /// identifier on the wire). The payload goes in a box from `pool` when it has one (the
    /// run's pool: no allocation per packet in steady state).
    fn poll_datagram_pooled(
        &mut self,
        now: SimTime,
        local: Addr,
        remote: Addr,
        flow: FlowId,
        number: Option<u64>,
        pool: &mut PayloadPool,
    ) -> Option<Datagram>;

    /// [`TransportDriver::poll_datagram_pooled`] without a pool: the payload gets a new
    /// box.
    fn poll_datagram(
        &mut self,
        now: SimTime,
        local: Addr,
        remote: Addr,
        flow: FlowId,
        number: Option<u64>,
    ) -> Option<Datagram> {
        let pool = &mut PayloadPool::default();
        self.poll_datagram_pooled(now, local, remote, flow, number, pool)
    }

    /// The client's host changed address (`port_only`: only the port, NAT rebinding).
    /// Returns whether the connection follows it to the new address (connection
    /// migration, RFC 9000 §9); if not (the default), it keeps sending from its old
    /// address.
    fn handle_local_address_change(&mut self, _now: SimTime, _port_only: bool) -> bool {
        false
    }

    /// The earliest instant the connection wants [`TransportDriver::handle_timeout`]:
    /// its own timers and, while it is open, `reader`'s deadline.
    fn poll_timeout(&self, reader: &dyn AppReader) -> Option<SimTime>;

    /// A timer instant came: the connection's due timers fire, `reader`'s deadline among
    /// them ([`AppReader::on_deadline`]) in the transport's timer order.
    fn handle_timeout(&mut self, now: SimTime, reader: &mut dyn AppReader);

    /// Switches tracing on or off ([`crate::endpoint::Endpoint::set_tracing`]).
    fn set_tracing(&mut self, on: bool);

    /// Hands the buffered trace events to `sink` and forgets them.
    fn drain_trace(&mut self, sink: &mut dyn FnMut(SimTime, TraceEvent));

    /// The connection's metrics at `now`, its workload having completed at `completed_at`.
    fn metrics(&self, completed_at: Option<SimTime>, now: SimTime) -> EndpointMetrics;

    /// The transport's time-series columns and their current values (congestion window,
    /// RTT, receive window, ...), in a fixed order.
    fn series_sample(&self) -> Vec<(String, f64)>;

    /// "Where the time went" ([`crate::breakdown`]) up to `now`, or up to the instant
    /// given to [`TransportDriver::freeze_breakdown`]. Default: `None` (not available).
    fn time_breakdown(&self, _now: SimTime) -> Option<TimeBreakdown> {
        None
    }

    /// The workload completed at `at`: closes the [`crate::breakdown`] accounting.
    /// Default: nothing.
    fn freeze_breakdown(&mut self, _at: SimTime) {}

    // ----- connection sequences --------------------------------------------------------

    /// The connection number a datagram of this transport is addressed to (`None`: not
    /// this transport's payload).
    fn connection_number(datagram: &Datagram) -> Option<u64>;

    /// What the datagram says about resumption when it opens a connection (`None`: it
    /// cannot open one, e.g. not a client's first flight).
    fn hello(datagram: &Datagram) -> Option<Hello>;

    /// A new client connection for `spec` on the base configuration `base` (not started).
    fn connect(base: &Self::Config, spec: &ConnectionSpec) -> Self;

    /// Where the controllers built from `cfg` draw their random stream
    /// ([`crate::cc::CcContext::rng`]): the runner sets the seed, flow and side, a sequence
    /// the connection's index.
    fn cc_stream(cfg: &mut Self::Config) -> &mut crate::cc::CcStreamId;

    /// Client: resume with `ticket` (before [`TransportDriver::start`]).
    fn resume(&mut self, ticket: Self::Ticket);

    /// Client: the ticket (identity `id`, address-validation token with the same
    /// identity when the transport issues tokens) the server issued with this confirmed
    /// connection.
    fn ticket(&self, id: u64) -> Self::Ticket;

    /// Server: whether it issues address-validation tokens with its tickets.
    fn issues_tokens(base: &Self::Config) -> bool;

    /// Server: the initial congestion window a connection for `spec` would use.
    fn default_initial_cwnd(base: &Self::Config, spec: &ConnectionSpec) -> u64;

    /// Server: the initial-window policy its configuration names (paper 000). Default:
    /// [`DefaultWindow`], the controller's window.
    fn initial_window_policy(_base: &Self::Config) -> Box<dyn InitialWindowPolicy> {
        Box::new(DefaultWindow)
    }

    /// Server: accepts the connection `first` opens, for `spec` on `base`, with the
    /// presented ticket valid or not and the token valid or not, and an initial congestion
    /// window override (not started).
    fn accept(
        base: &Self::Config,
        spec: &ConnectionSpec,
        first: &Datagram,
        ticket_valid: bool,
        token_valid: bool,
        initial_cwnd: Option<u64>,
    ) -> Self;

    /// Client: it presented an address-validation token.
    fn presented_token(&self) -> bool;

    /// The report of this connection, number `index` at address `local`, its workload
    /// having completed at `completed_at`; `token`: a valid token was presented.
    fn report(
        &self,
        index: u64,
        local: Addr,
        completed_at: Option<SimTime>,
        token: bool,
        now: SimTime,
    ) -> ConnectionReport;

    /// The report of connection `index` of a sequence that never started.
    fn not_started_report(
        base: &Self::Config,
        spec: &ConnectionSpec,
        index: u64,
        local: Addr,
    ) -> ConnectionReport;

    /// The metrics of a whole sequence at `side`: totals over `reports`
    /// (`all_completed`: every connection completed) and the server's history samples.
    fn sequence_metrics(
        side: Side,
        reports: Vec<ConnectionReport>,
        all_completed: bool,
        history: Vec<HistorySample>,
    ) -> EndpointMetrics;
}

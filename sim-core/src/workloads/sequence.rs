//! Workload `sequence` (flow kind `quic_connections`): a sequence of connections between
//! one client and one server, with session tickets, 0-RTT, address-validation tokens,
//! idle timeout and explicit close. See `docs/lifecycle.md`.
//!
//! - [`SequenceClient`] owns the sequence: it creates a fresh connection for each
//!   [`ConnectionSpec`] at its start time (absolute, or a gap after the previous one
//!   ended), keeps the ticket the last confirmed connection left, and resumes with it
//!   when the spec says `resume = true`.
//! - [`SequenceServer`] accepts a new connection per connection number (the transport's
//!   connection identifier, [`TransportDriver::connection_number`]) and keeps the
//!   per-server [`ServerStore`]: the tickets and tokens it issued, the congestion-window
//!   samples it takes when a resumption completes and when a connection closes, and the
//!   [`InitialWindowPolicy`] that sees them and chooses each new connection's initial
//!   window (paper 000; `transport::initial_window`).
//!
//! Both run [`Bulk`] on every connection (requests on `streams` streams, the server
//! answers each with its share of `bytes`). The server knows each connection's workload
//! from the same list of specs: the request names the object, as a URL would.

use super::bulk::Bulk;
pub use crate::config::workload::{CloseMode, ConnectionSpec};
use crate::driver::TransportDriver;
use crate::endpoint::Endpoint;
pub use crate::metrics::workload::{
    ConnectionReport, ConnectionStatus, HistoryEvent, HistorySample, HistoryStoreEntry,
    InitialWindowGrant, InitialWindowReport,
};
use crate::metrics::EndpointMetrics;
use crate::packet::{Addr, Datagram, FlowId};
use crate::time::{SimDuration, SimTime};
use crate::trace::TraceEvent;
use crate::transport::stream::{CloseKind, Side, StreamEvent, StreamTransport};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

pub use crate::metrics::workload::AddressChangeReport;

/// The connection specs of a transfer that reconnects at address changes, shared by its
/// client and server: the client appends the spec of each replacement connection (the
/// rest of the transfer) before it opens it, and the server reads spec `k` when
/// connection `k` opens. This stands for the replacement's request naming the object and
/// the range still missing (an HTTP `Range: bytes=N-` request; RFC 9110 §14.2): the
/// simulator carries request sizes, not contents.
#[derive(Clone, Debug, Default)]
pub struct RangeRequests(Rc<RefCell<Vec<ConnectionSpec>>>);

impl RangeRequests {
    fn get(&self, k: usize) -> Option<ConnectionSpec> {
        self.0.borrow().get(k).cloned()
    }
}

/// A client that reconnects at address changes: the shared specs, how many more
/// address changes may reconnect, and what happened at each change.
#[derive(Debug)]
struct Reconnect {
    ranges: RangeRequests,
    left: u64,
    changes: Vec<AddressChangeReport>,
    /// Bytes read when the newest change without a read after it happened.
    pending: Option<u64>,
}

/// The server's initial-window policy (paper 000), behind
/// [`crate::transport::initial_window`]: re-exported here, where the store drives it.
pub use crate::transport::initial_window::{DefaultWindow, InitialWindowPolicy};

/// Server-side state that outlives connections: tickets and tokens issued, the history
/// samples, the initial-window policy and what it granted. One per server endpoint (the
/// run owns the endpoints; nothing is global).
#[derive(Debug)]
pub struct ServerStore {
    /// Ticket id -> when it was issued (the server issues ticket `k` when connection `k`
    /// completes its handshake, with the session ticket it sends after the handshake).
    tickets: BTreeMap<u64, SimTime>,
    /// Token id -> the client address it was issued to (RFC 9000 §8.1.3: a token is valid
    /// only from that address).
    tokens: BTreeMap<u64, u32>,
    /// Samples taken, oldest first.
    pub samples: Vec<HistorySample>,
    /// The initial window each accepted connection got, in acceptance order.
    pub grants: Vec<InitialWindowGrant>,
    /// The policy: it sees every sample and chooses each new connection's window.
    pub policy: Box<dyn InitialWindowPolicy>,
}

impl Default for ServerStore {
    fn default() -> Self {
        ServerStore::new(Box::new(DefaultWindow))
    }
}

impl ServerStore {
    /// An empty store with `policy`.
    pub fn new(policy: Box<dyn InitialWindowPolicy>) -> Self {
        ServerStore {
            tickets: BTreeMap::new(),
            tokens: BTreeMap::new(),
            samples: Vec::new(),
            grants: Vec::new(),
            policy,
        }
    }

    /// Tickets issued.
    pub fn tickets_issued(&self) -> usize {
        self.tickets.len()
    }

    fn sample<T: StreamTransport>(
        &mut self,
        now: SimTime,
        event: HistoryEvent,
        k: u64,
        client: Addr,
        c: &T,
    ) {
        let s = HistorySample {
            time_secs: now.as_secs_f64(),
            event,
            connection: k,
            client: client.to_string(),
            cwnd: c.cwnd(),
            srtt_secs: c.smoothed_rtt().as_secs_f64(),
        };
        self.policy.on_sample(client.ip, s.cwnd);
        self.samples.push(s);
    }

    /// The initial window for connection `k` from `client` (`resumed`: valid ticket),
    /// whose configured window is `default`: the policy's choice, recorded. `None`: keep
    /// the configured window.
    fn initial_window(
        &mut self,
        now: SimTime,
        k: u64,
        client: Addr,
        resumed: bool,
        default: u64,
    ) -> Option<u64> {
        let chosen = self.policy.initial_window(client.ip, resumed, default);
        self.grants.push(InitialWindowGrant {
            connection: k,
            time_secs: now.as_secs_f64(),
            client: ip_string(client.ip),
            resumed,
            default_cwnd: default,
            average: self.policy.average(client.ip),
            initial_cwnd: chosen.unwrap_or(default),
        });
        chosen
    }

    /// What the policy did, for the metrics: `None` for the `default` policy (whose
    /// outputs stay as they were before policies existed).
    pub fn report(&self) -> Option<InitialWindowReport> {
        let policy = self.policy.name();
        (policy != DefaultWindow.name()).then(|| InitialWindowReport {
            policy: policy.to_string(),
            connections: self.grants.clone(),
            store: self
                .policy
                .store()
                .into_iter()
                .map(|e| HistoryStoreEntry {
                    client: ip_string(e.client),
                    samples: e.samples,
                    average: e.average,
                })
                .collect(),
        })
    }
}

/// A client IP address (the store's key) as dotted quad.
fn ip_string(ip: u32) -> String {
    let b = ip.to_be_bytes();
    format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3])
}

/// One connection of the client's sequence.
#[derive(Debug)]
struct ClientConn<T> {
    conn: T,
    app: Bulk,
    local: Addr,
    close: CloseMode,
    /// The workload completed and the close mode is explicit: close once the stack has
    /// sent what it had queued.
    close_wanted: bool,
    ticket_taken: bool,
    /// Abandoned at this instant: the client's address changed under it and it could not
    /// follow (`reconnects` with `on = "address_change"`); nothing more is sent or
    /// handled.
    abandoned_at: Option<SimTime>,
}

/// A connection abandoned at `at` (address change): it failed there, unless its
/// workload had completed.
fn abandoned(r: &mut ConnectionReport, at: SimTime) {
    if r.status != ConnectionStatus::Completed {
        r.status = ConnectionStatus::Failed;
    }
    r.close_secs = Some(at.as_secs_f64());
    r.close_reason = Some("address_change".into());
}

/// Every connection completed, except those abandoned at an address change (whose rest
/// a later one carried), and the last one completed.
pub(crate) fn all_completed(reports: &[ConnectionReport]) -> bool {
    let done = |r: &ConnectionReport| r.status == ConnectionStatus::Completed;
    reports.iter().all(|r| {
        done(r)
            || r.status == ConnectionStatus::Failed
                && r.close_reason.as_deref() == Some("address_change")
    }) && reports.last().is_some_and(done)
}

/// Response bytes the client read on `conn` (the first `streams` streams it opened).
fn bytes_read<T: StreamTransport>(conn: &T, streams: u64) -> u64 {
    (0..streams)
        .filter_map(|i| conn.stream_read_state(conn.stream_id(Side::Client, i)))
        .map(|s| s.read)
        .sum()
}

/// Whether a connection can no longer do anything (issue 28 item 11: the endpoints
/// polled every connection of a sequence on every event, quadratic in their number): its
/// state is gone, it has no timer and no pending event, its last poll for a datagram gave
/// none, and no input reaches it (a datagram for a terminated connection is stray). Its
/// endpoint stops polling it; nothing it would have done is lost.
fn inert<T: TransportDriver>(conn: &T, app: &Bulk) -> bool {
    conn.is_terminated() && !conn.has_events() && conn.poll_timeout(app).is_none()
}

/// The ascending indices of `live` from `from` on, one at a time (the set may change
/// between steps).
fn next_live<K: Ord + Copy>(live: &BTreeSet<K>, from: K) -> Option<K> {
    live.range(from..).next().copied()
}

fn bulk_of(spec: &ConnectionSpec) -> Bulk {
    Bulk::new(spec.streams, spec.bytes, spec.request_size)
}

/// The client of a connection sequence over transport `T`: runs the connections of its
/// sequence one after another (or overlapping, with absolute start times), carrying the
/// session ticket from one to the next.
#[derive(Debug)]
pub struct SequenceClient<T: TransportDriver> {
    base: T::Config,
    specs: Vec<ConnectionSpec>,
    local: Addr,
    remote: Addr,
    flow: FlowId,
    conns: Vec<ClientConn<T>>,
    /// When the next connection (`conns.len()`) starts, once known.
    next_start: Option<SimTime>,
    ticket: Option<T::Ticket>,
    tracing: bool,
    /// Datagrams for a connection that is gone or unknown (dropped).
    pub stray_datagrams: u64,
    /// Reconnecting at address changes (`None`: a live connection stays on its old
    /// address unless its transport migrates it).
    reconnect: Option<Reconnect>,
    /// The connections that are not [`inert`], the only ones polled.
    live: BTreeSet<usize>,
    /// Connections found inert whose trace events were not drained since.
    undrained: Vec<usize>,
}

impl<T: TransportDriver> SequenceClient<T> {
    /// A client at `local` talking to the server at `remote`, accounted to `flow`.
    pub fn new(
        base: T::Config,
        specs: Vec<ConnectionSpec>,
        local: Addr,
        remote: Addr,
        flow: FlowId,
    ) -> Self {
        SequenceClient {
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
            reconnect: None,
            live: BTreeSet::new(),
            undrained: Vec::new(),
        }
    }

    /// Reconnects at address changes (`reconnects` with `on = "address_change"`): at each
    /// of the first `limit` changes of the client's address that the live connection
    /// cannot follow (its transport does not migrate it), the client abandons it — the
    /// application learns that its network went away, as a mobile OS tells it (Android
    /// `ConnectivityManager.NetworkCallback.onLost`, iOS `NWPathMonitor`), instead of
    /// waiting out a timeout on a dead path — and opens a connection from the new address
    /// at once for the bytes still missing, their spec appended to `ranges`. The server
    /// must share `ranges` ([`SequenceServer::reconnect_on_address_change`]).
    pub fn reconnect_on_address_change(mut self, ranges: RangeRequests, limit: u64) -> Self {
        *ranges.0.borrow_mut() = self.specs.clone();
        self.reconnect = Some(Reconnect {
            ranges,
            left: limit,
            changes: Vec::new(),
            pending: None,
        });
        self
    }

    /// What happened at each address change (`reconnects` with `on = "address_change"`).
    pub fn address_changes(&self) -> &[AddressChangeReport] {
        self.reconnect.as_ref().map_or(&[], |r| &r.changes)
    }

    /// Response bytes read so far over every connection.
    fn read_total(&self) -> u64 {
        self.conns
            .iter()
            .map(|c| bytes_read(&c.conn, c.app.streams()))
            .sum()
    }

    /// After input: the first read after an address change ends its lost time.
    fn note_reads(&mut self, now: SimTime) {
        let Some(before) = self.reconnect.as_ref().and_then(|r| r.pending) else {
            return;
        };
        if self.read_total() > before {
            let r = self.reconnect.as_mut().expect("pending");
            r.pending = None;
            if let Some(c) = r.changes.last_mut() {
                c.resumed_secs = Some(now.as_secs_f64());
                c.lost_secs = Some(now.as_secs_f64() - c.at_secs);
            }
        }
    }

    /// The connections started so far, in order.
    pub fn connections(&self) -> impl Iterator<Item = &T> {
        self.conns.iter().map(|c| &c.conn)
    }

    /// The ticket the next resumption would use.
    pub fn ticket(&self) -> Option<&T::Ticket> {
        self.ticket.as_ref()
    }

    fn open_due(&mut self, now: SimTime) {
        while self.next_start.is_some_and(|t| t <= now) && self.conns.len() < self.specs.len() {
            let k = self.conns.len();
            let spec = self.specs[k].clone();
            T::cc_stream(&mut self.base).connection = k as u64;
            let mut conn = T::connect(&self.base, &spec);
            conn.set_tracing(self.tracing);
            if spec.resume {
                if let Some(t) = &self.ticket {
                    conn.resume(t.clone());
                }
            }
            conn.start(now);
            self.live.insert(k);
            self.conns.push(ClientConn {
                conn,
                app: bulk_of(&spec),
                local: self.local,
                close: spec.close,
                close_wanted: false,
                ticket_taken: false,
                abandoned_at: None,
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
                if let StreamEvent::Closed(_) = ev {
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
            // The session ticket (and address-validation token) the server sends once the
            // handshake is confirmed.
            c.ticket_taken = true;
            self.ticket = Some(c.conn.ticket(k as u64));
        }
    }

    fn drive_all(&mut self, now: SimTime) {
        let mut at = 0;
        while let Some(k) = next_live(&self.live, at) {
            self.drive(now, k);
            at = k + 1;
        }
        self.open_due(now);
    }
}

impl<T: TransportDriver> Endpoint for SequenceClient<T> {
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
        let Some(k) = T::connection_number(&datagram) else {
            return;
        };
        let k = k as usize;
        match self.conns.get_mut(k) {
            Some(c) if !c.conn.is_terminated() && c.abandoned_at.is_none() => {
                c.conn.handle_datagram(now, &datagram, &mut c.app);
                self.drive(now, k);
                self.open_due(now);
                self.note_reads(now);
            }
            _ => self.stray_datagrams += 1,
        }
    }

    fn handle_timeout(&mut self, now: SimTime) {
        for &k in &self.live {
            let c = &mut self.conns[k];
            if c.abandoned_at.is_none() && c.conn.poll_timeout(&c.app).is_some_and(|t| t <= now) {
                c.conn.handle_timeout(now, &mut c.app);
            }
        }
        self.drive_all(now);
        self.note_reads(now);
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram> {
        let mut at = 0;
        while let Some(k) = next_live(&self.live, at) {
            let c = &mut self.conns[k];
            if c.abandoned_at.is_some() {
                at = k + 1;
                continue;
            }
            let d = c
                .conn
                .poll_datagram(now, c.local, self.remote, self.flow, Some(k as u64));
            if d.is_some() {
                return d;
            }
            if c.close_wanted && !c.conn.is_closed() {
                // The application closes once the stack has sent what it had queued
                // (e.g. the client's Finished when a 0-RTT response completes at the
                // handshake): then the close, polled next.
                c.conn.close(now);
                self.drive(now, k);
                self.open_due(now);
                continue;
            }
            let c = &self.conns[k];
            if (c.ticket_taken || !c.conn.is_handshake_confirmed()) && inert(&c.conn, &c.app) {
                self.live.remove(&k);
                self.undrained.push(k);
            }
            at = k + 1;
        }
        None
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        let next = if self.conns.len() < self.specs.len() {
            self.next_start
        } else {
            None
        };
        self.live
            .iter()
            .map(|&k| &self.conns[k])
            .filter(|c| c.abandoned_at.is_none())
            .filter_map(|c| c.conn.poll_timeout(&c.app))
            .chain(next)
            .min()
    }

    /// A new network: connections started from now on use `new`. A live connection
    /// follows if its transport migrates it (QUIC with `migration`); otherwise it keeps
    /// its old address: after an IP change the server's answers to it are dropped and
    /// such a connection fails at its idle timeout — unless the client reconnects at
    /// address changes ([`SequenceClient::reconnect_on_address_change`]): then it
    /// abandons that connection and fetches the rest over a new one from `new`.
    fn handle_local_address_change(&mut self, now: SimTime, new: Addr) {
        let port_only = new.ip == self.local.ip;
        let read_bytes = self.read_total();
        let mut migrated = false;
        let mut rest = None;
        let may_reconnect = self.reconnect.as_ref().is_some_and(|r| r.left > 0);
        for (k, c) in self.conns.iter_mut().enumerate() {
            // (Without reconnecting, every connection is told, as before.)
            if c.abandoned_at.is_some() || (may_reconnect && c.conn.is_closed()) {
                continue;
            }
            if c.conn.handle_local_address_change(now, port_only) {
                c.local = new;
                migrated |= c.app.completed_at().is_none();
            } else if may_reconnect && rest.is_none() && c.app.completed_at().is_none() {
                // The live transfer cannot follow: abandon it, re-request what is missing.
                c.abandoned_at = Some(now);
                let read = bytes_read(&c.conn, c.app.streams());
                rest = Some(self.specs[k].bytes.saturating_sub(read));
            }
        }
        self.local = new;
        // Every connection was told: each is polled again until found inert anew.
        self.live = (0..self.conns.len()).collect();
        let Some(r) = self.reconnect.as_mut() else {
            return;
        };
        let action = if let Some(bytes) = rest {
            r.left -= 1;
            let spec = ConnectionSpec {
                start: None,
                gap: None,
                resume: true,
                bytes,
                ..self.specs[0].clone()
            };
            self.specs.push(spec.clone());
            r.ranges.0.borrow_mut().push(spec);
            "reconnected"
        } else if migrated {
            "migrated"
        } else {
            "none"
        };
        r.changes.push(AddressChangeReport {
            at_secs: now.as_secs_f64(),
            action: action.into(),
            read_bytes,
            resumed_secs: None,
            lost_secs: None,
        });
        r.pending = (action != "none").then_some(read_bytes);
        if rest.is_some() {
            self.next_start = Some(now);
            self.open_due(now);
        }
    }

    fn local_addr(&self) -> Addr {
        self.local
    }

    fn is_done(&self) -> bool {
        // An inert connection is closed.
        self.conns.len() == self.specs.len()
            && self
                .live
                .iter()
                .map(|&k| &self.conns[k])
                .all(|c| c.conn.is_closed() || c.abandoned_at.is_some())
    }

    fn metrics(&self, now: SimTime) -> EndpointMetrics {
        let mut reports: Vec<ConnectionReport> = self
            .conns
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let token = c.conn.presented_token();
                let mut r = c
                    .conn
                    .report(k as u64, c.local, c.app.completed_at(), token, now);
                if let Some(at) = c.abandoned_at {
                    abandoned(&mut r, at);
                }
                r
            })
            .collect();
        let all = reports.len() == self.specs.len() && all_completed(&reports);
        for k in self.conns.len()..self.specs.len() {
            reports.push(T::not_started_report(
                &self.base,
                &self.specs[k],
                k as u64,
                self.local,
            ));
        }
        let mut m = T::sequence_metrics(Side::Client, reports, all, Vec::new());
        if let (Some(r), Some(w)) = (&self.reconnect, m.workload_mut()) {
            w.reconnects = Some(crate::metrics::workload::ReconnectsReport {
                transfer_secs: None,
                handshake_secs: Vec::new(),
                resumed: Vec::new(),
                address_changes: r.changes.clone(),
            });
        }
        m
    }

    fn set_tracing(&mut self, on: bool) {
        self.tracing = on;
        for c in &mut self.conns {
            c.conn.set_tracing(on);
        }
    }

    fn drain_trace(&mut self, sink: &mut dyn FnMut(SimTime, TraceEvent)) {
        for k in traced(&self.live, &mut self.undrained) {
            self.conns[k].conn.drain_trace(sink);
        }
    }

    /// Events tagged with the connection number (qlog writes one trace per connection).
    fn drain_trace_tagged(&mut self, sink: &mut dyn FnMut(u32, SimTime, TraceEvent)) {
        for k in traced(&self.live, &mut self.undrained) {
            let n = k as u32;
            self.conns[k].conn.drain_trace(&mut |t, e| sink(n, t, e));
        }
    }
}

/// The connections whose trace events may be pending, in ascending order: the live ones
/// and those found inert since the last drain (`undrained`, emptied). An inert
/// connection records nothing more.
fn traced<K: Ord + Copy>(live: &BTreeSet<K>, undrained: &mut Vec<K>) -> Vec<K> {
    let mut ks: Vec<K> = live.iter().copied().chain(undrained.drain(..)).collect();
    ks.sort_unstable();
    ks.dedup();
    ks
}

/// One connection at the server.
#[derive(Debug)]
struct ServerConn<T> {
    conn: T,
    app: Bulk,
    remote: Addr,
    token_valid: bool,
    sampled_resumption: bool,
    issued: bool,
    /// Abandoned at this instant: a later connection of the client replaced it.
    abandoned_at: Option<SimTime>,
}

/// The server of a connection sequence over transport `T`: one connection per client
/// connection number, and the [`ServerStore`].
#[derive(Debug)]
pub struct SequenceServer<T: TransportDriver> {
    base: T::Config,
    specs: Vec<ConnectionSpec>,
    local: Addr,
    flow: FlowId,
    conns: BTreeMap<u64, ServerConn<T>>,
    /// Tickets, tokens, history.
    pub store: ServerStore,
    tracing: bool,
    /// Datagrams for an unknown connection that cannot open one, or for one whose state
    /// is gone (dropped).
    pub stray_datagrams: u64,
    /// The client reconnects at address changes: the specs it requests, shared.
    ranges: Option<RangeRequests>,
    /// The connections that are not [`inert`], the only ones polled.
    live: BTreeSet<u64>,
    /// Connections found inert whose trace events were not drained since.
    undrained: Vec<u64>,
}

impl<T: TransportDriver> SequenceServer<T> {
    /// A server at `local` for the client's sequence `specs`, accounted to `flow`.
    pub fn new(base: T::Config, specs: Vec<ConnectionSpec>, local: Addr, flow: FlowId) -> Self {
        let policy = T::initial_window_policy(&base);
        SequenceServer {
            base,
            specs,
            local,
            flow,
            conns: BTreeMap::new(),
            store: ServerStore::new(policy),
            tracing: false,
            stray_datagrams: 0,
            ranges: None,
            live: BTreeSet::new(),
            undrained: Vec::new(),
        }
    }

    /// The client reconnects at address changes
    /// ([`SequenceClient::reconnect_on_address_change`], sharing `ranges`): connection
    /// `k` serves spec `k` of `ranges` (the rest of the transfer), and when it opens, the
    /// connections before it that are still open are abandoned — their client is gone
    /// from the address they answer to. (A real server keeps such a connection until a
    /// timeout: TCP's R2 retransmission limit, RFC 9293 §3.8.3, about 15 minutes with
    /// Linux's `tcp_retries2`; SCTP's `Association.Max.Retrans`; QUIC's idle timeout.
    /// Its packets all go to the dead address; ending it here keeps the run short.)
    pub fn reconnect_on_address_change(mut self, ranges: RangeRequests) -> Self {
        self.ranges = Some(ranges);
        self
    }

    /// The connections accepted so far, by connection number.
    pub fn connections(&self) -> impl Iterator<Item = (u64, &T)> {
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
                    StreamEvent::Connected => {
                        if !c.issued {
                            // A session ticket (+ address-validation token) after the
                            // handshake.
                            c.issued = true;
                            self.store.tickets.insert(k, now);
                            if T::issues_tokens(&self.base) {
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
                    StreamEvent::Closed(r) => {
                        let e = match r {
                            CloseKind::IdleTimeout => HistoryEvent::IdleClose,
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

impl<T: TransportDriver> Endpoint for SequenceServer<T> {
    fn start(&mut self, _now: SimTime) {}

    fn handle_datagram(&mut self, now: SimTime, datagram: Datagram) {
        let Some(k) = T::connection_number(&datagram) else {
            return;
        };
        if !self.conns.contains_key(&k) {
            let spec = match &self.ranges {
                Some(r) => r.get(k as usize),
                None => self.specs.get(k as usize).cloned(),
            };
            let (Some(hello), Some(spec)) = (T::hello(&datagram), spec) else {
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
            let default_cwnd = T::default_initial_cwnd(&self.base, &spec);
            let cwnd = self
                .store
                .initial_window(now, k, src, ticket_valid, default_cwnd);
            T::cc_stream(&mut self.base).connection = k;
            let mut conn = T::accept(
                &self.base,
                &spec,
                &datagram,
                ticket_valid,
                token_valid,
                cwnd,
            );
            conn.set_tracing(self.tracing);
            conn.start(now);
            self.live.insert(k);
            self.conns.insert(
                k,
                ServerConn {
                    conn,
                    app: bulk_of(&spec),
                    remote: src,
                    token_valid,
                    sampled_resumption: false,
                    issued: false,
                    abandoned_at: None,
                },
            );
            if self.ranges.is_some() {
                for (_, old) in self.conns.range_mut(..k) {
                    if old.abandoned_at.is_none() && !old.conn.is_closed() {
                        old.abandoned_at = Some(now);
                    }
                }
            }
        }
        let c = self.conns.get_mut(&k).expect("inserted");
        if c.conn.is_terminated() || c.abandoned_at.is_some() {
            self.stray_datagrams += 1;
            return;
        }
        // Answer from where the client sends.
        c.remote = datagram.src;
        c.conn.handle_datagram(now, &datagram, &mut c.app);
        self.drive(now, k);
    }

    fn handle_timeout(&mut self, now: SimTime) {
        let due: Vec<u64> = self
            .live
            .iter()
            .map(|k| (k, &self.conns[k]))
            .filter(|(_, c)| {
                c.abandoned_at.is_none() && c.conn.poll_timeout(&c.app).is_some_and(|t| t <= now)
            })
            .map(|(&k, _)| k)
            .collect();
        for k in due {
            if let Some(c) = self.conns.get_mut(&k) {
                c.conn.handle_timeout(now, &mut c.app);
            }
            self.drive(now, k);
        }
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram> {
        let mut at = 0;
        while let Some(k) = next_live(&self.live, at) {
            at = k + 1;
            let c = self.conns.get_mut(&k).expect("a live connection");
            if c.abandoned_at.is_some() {
                continue;
            }
            let d = c
                .conn
                .poll_datagram(now, self.local, c.remote, self.flow, Some(k));
            if d.is_some() {
                return d;
            }
            if inert(&c.conn, &c.app) {
                self.live.remove(&k);
                self.undrained.push(k);
            }
        }
        None
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        self.live
            .iter()
            .map(|k| &self.conns[k])
            .filter(|c| c.abandoned_at.is_none())
            .filter_map(|c| c.conn.poll_timeout(&c.app))
            .min()
    }

    fn local_addr(&self) -> Addr {
        self.local
    }

    fn is_done(&self) -> bool {
        // An inert connection is closed.
        self.live
            .iter()
            .map(|k| &self.conns[k])
            .all(|c| c.conn.is_closed() || c.abandoned_at.is_some())
    }

    /// `cwnd`: the congestion window of the newest connection accepted (0 before the
    /// first), so a plot shows each connection's window from the one it started with;
    /// `connection`: its number (-1 before the first).
    fn series_columns(&self) -> Vec<String> {
        vec!["cwnd".into(), "connection".into()]
    }

    fn series_values(&self, out: &mut Vec<f64>) {
        match self.conns.last_key_value() {
            Some((&k, c)) => out.extend([c.conn.cwnd() as f64, k as f64]),
            None => out.extend([0.0, -1.0]),
        }
    }

    fn metrics(&self, now: SimTime) -> EndpointMetrics {
        let reports: Vec<ConnectionReport> = self
            .conns
            .iter()
            .map(|(&k, c)| {
                let mut r = c
                    .conn
                    .report(k, self.local, c.app.completed_at(), c.token_valid, now);
                if let Some(at) = c.abandoned_at {
                    abandoned(&mut r, at);
                }
                r
            })
            .collect();
        let all = !reports.is_empty() && all_completed(&reports);
        let mut m = T::sequence_metrics(Side::Server, reports, all, self.store.samples.clone());
        if let Some(w) = m.workload_mut() {
            w.initial_window = self.store.report();
        }
        m
    }

    fn set_tracing(&mut self, on: bool) {
        self.tracing = on;
        for c in self.conns.values_mut() {
            c.conn.set_tracing(on);
        }
    }

    fn drain_trace(&mut self, sink: &mut dyn FnMut(SimTime, TraceEvent)) {
        for k in traced(&self.live, &mut self.undrained) {
            if let Some(c) = self.conns.get_mut(&k) {
                c.conn.drain_trace(sink);
            }
        }
    }

    /// Events tagged with the connection number (qlog writes one trace per connection).
    fn drain_trace_tagged(&mut self, sink: &mut dyn FnMut(u32, SimTime, TraceEvent)) {
        for k in traced(&self.live, &mut self.undrained) {
            if let Some(c) = self.conns.get_mut(&k) {
                let n = k as u32;
                c.conn.drain_trace(&mut |t, e| sink(n, t, e));
            }
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
    use crate::quic::connection::Connection;
    use crate::quic::QuicConfig;
    use crate::rng::RngStream;
    use crate::units::Rate;
    use proptest::prelude::*;

    enum Ev {
        Deliver(usize, Datagram),
        Timer(usize),
    }

    struct Harness {
        client: SequenceClient<Connection>,
        server: SequenceServer<Connection>,
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
            client: SequenceClient::new(q.clone(), specs.clone(), ca, sa, 0),
            server: SequenceServer::new(q, specs, sa, 0),
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
        let mut a = ConnectionSpec::new(5_000);
        a.streams = 1;
        let mut b = ConnectionSpec::new(30_000);
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
                    let mut s = ConnectionSpec::new(bytes);
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

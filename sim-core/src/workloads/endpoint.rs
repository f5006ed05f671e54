//! The generic endpoint of the single-connection workloads besides `bulk`
//! ([`AppEndpoint`]): one connection of any [`TransportDriver`] running a [`Workload`],
//! with the workload's own timer (a video's next request, its seek) kept here, beside
//! the connection's timers, so a workload never acts in the middle of the transport's
//! input processing.
//!
//! With [`AppEndpoint::reconnecting`] the workload outlives its connection: at an address
//! change of the client that the connection cannot follow, the client abandons it and opens
//! a new one from the new address (resuming the session where the transport can), and the
//! server accepts the new connection in place of the old one — the mechanism of
//! `reconnects` with `on = "address_change"` ([`super::sequence::SequenceClient`]), for a
//! workload whose state spans the connections (a video player's buffer).

use crate::breakdown::TimeBreakdown;
use crate::config::workload::ConnectionSpec;
use crate::driver::TransportDriver;
use crate::endpoint::Endpoint;
use crate::metrics::workload::{AddressChangeReport, ReconnectsReport, WorkloadMetrics};
use crate::metrics::EndpointMetrics;
use crate::packet::{Addr, Datagram, FlowId, PayloadPool};
use crate::time::SimTime;
use crate::trace::TraceEvent;
use crate::transport::stream::{AppReader, Side, StreamEvent, StreamTransport};
use std::collections::{BTreeMap, BTreeSet};

/// A workload of one connection, as [`AppEndpoint`] drives it. It reads through its
/// [`AppReader`] impl (called synchronously by the transport).
pub trait Workload: AppReader + std::fmt::Debug {
    /// The endpoint started at `now` (the connection start).
    fn on_start(&mut self, _now: SimTime) {}

    /// Handles one event of `t`.
    fn on_event<T: StreamTransport + ?Sized>(&mut self, now: SimTime, t: &mut T, ev: StreamEvent);

    /// When the workload wants [`Workload::on_wake`] (`None`: never).
    fn wake_at(&self) -> Option<SimTime> {
        None
    }

    /// Its wake-up time came.
    fn on_wake<T: StreamTransport + ?Sized>(&mut self, _now: SimTime, _t: &mut T) {}

    /// When this side's part completed (the endpoint is then done).
    fn completed_at(&self) -> Option<SimTime>;

    /// Adds what only the workload knows to `m`; times relative to `start`.
    fn report(&self, _start: SimTime, _now: SimTime, _m: &mut WorkloadMetrics) {}

    /// (Client of a reconnecting endpoint.) The connection `old` was abandoned at an
    /// address change and connection number `k` (not started yet) replaces it: what was
    /// in flight on `old` must be asked for again on the new one.
    fn on_reconnect<T: StreamTransport + ?Sized>(&mut self, _now: SimTime, _k: u64, _old: &T) {}

    /// (Server of a reconnecting endpoint.) Connection number `k` replaced the previous
    /// one.
    fn on_accept(&mut self, _k: u64) {}

    /// A datagram of `t` was handled at `now`, before its events are: a workload may
    /// look at its streams' read progress here (the first bytes of a response), which
    /// TCP and SCTP, whose application reads at once, announce to no reader.
    fn on_datagram<T: StreamTransport + ?Sized>(&mut self, _now: SimTime, _t: &T) {}

    /// Response bytes read so far on `t` and on earlier connections (monotone while `t`
    /// lives): the first read after an address change ends its lost time.
    fn read_progress<T: StreamTransport + ?Sized>(&self, _t: &T) -> u64 {
        0
    }
}

/// The state of a reconnecting endpoint ([`AppEndpoint::reconnecting`]).
#[derive(Debug)]
struct Redial<T: TransportDriver> {
    /// The side's base configuration, for the new connections.
    base: T::Config,
    /// Address changes that may still reconnect (client).
    left: u64,
    /// The current connection's number (the datagrams carry it).
    current: u64,
    /// The abandoned connections and when they were abandoned.
    old: Vec<(T, SimTime)>,
    /// The session ticket of the newest connection whose handshake was confirmed (client).
    ticket: Option<T::Ticket>,
    ticket_taken: bool,
    /// Tickets (by connection number) and tokens (number -> client IP) issued (server).
    tickets: BTreeSet<u64>,
    tokens: BTreeMap<u64, u32>,
    issued: bool,
    tracing: bool,
    /// What happened at each address change (client).
    changes: Vec<AddressChangeReport>,
    /// Read progress when the newest change without a read after it happened.
    pending: Option<u64>,
}

/// One connection of transport `T` running the workload `W`, driven by the engine.
#[derive(Debug)]
pub struct AppEndpoint<T: TransportDriver, W> {
    conn: T,
    app: W,
    local: Addr,
    remote: Addr,
    flow: FlowId,
    started: SimTime,
    redial: Option<Redial<T>>,
}

impl<T: TransportDriver, W: Workload> AppEndpoint<T, W> {
    /// Connection `conn` (not started) running `app`, at `local`, talking to `remote`,
    /// accounted to `flow`.
    pub fn new(conn: T, app: W, local: Addr, remote: Addr, flow: FlowId) -> Self {
        AppEndpoint {
            conn,
            app,
            local,
            remote,
            flow,
            started: SimTime::ZERO,
            redial: None,
        }
    }

    /// Reconnects at address changes: a client abandons, at each of the first `limit`
    /// changes of its address that the connection cannot follow (its transport does not
    /// migrate it), the connection and opens a new one from the new address with `base`,
    /// resuming the session when it holds a ticket — told by its OS that the network went
    /// away, as `reconnects` with `on = "address_change"` (docs/workloads.md); a server
    /// accepts a client's new connection (a higher connection number with a hello) in
    /// place of its current one. The datagrams then carry the connection number.
    pub fn reconnecting(mut self, base: T::Config, limit: u64) -> Self {
        self.redial = Some(Redial {
            base,
            left: limit,
            current: 0,
            old: Vec::new(),
            ticket: None,
            ticket_taken: false,
            tickets: BTreeSet::new(),
            tokens: BTreeMap::new(),
            issued: false,
            tracing: false,
            changes: Vec::new(),
            pending: None,
        });
        self
    }

    /// The connection (read-only).
    pub fn connection(&self) -> &T {
        &self.conn
    }

    /// The workload state.
    pub fn workload(&self) -> &W {
        &self.app
    }

    fn drive(&mut self, now: SimTime) {
        loop {
            let events = self.conn.take_events();
            if events.is_empty() {
                break;
            }
            for ev in events {
                self.app.on_event(now, &mut self.conn, ev);
                if let (StreamEvent::Connected, Some(r)) = (ev, self.redial.as_mut()) {
                    if self.conn.side() == Side::Server && !r.issued {
                        // A session ticket (+ address-validation token) after the handshake.
                        r.issued = true;
                        r.tickets.insert(r.current);
                        if T::issues_tokens(&r.base) {
                            r.tokens.insert(r.current, self.remote.ip);
                        }
                    }
                }
            }
        }
        if let Some(r) = self.redial.as_mut() {
            if self.conn.side() == Side::Client
                && !r.ticket_taken
                && self.conn.is_handshake_confirmed()
            {
                // The session ticket the server sends once the handshake is confirmed.
                r.ticket_taken = true;
                r.ticket = Some(self.conn.ticket(r.current));
            }
        }
        if let Some(t) = self.app.completed_at() {
            self.conn.freeze_breakdown(t);
        }
    }

    /// After input: the first read after an address change ends its lost time.
    fn note_reads(&mut self, now: SimTime) {
        let Some(r) = self.redial.as_mut() else {
            return;
        };
        let Some(before) = r.pending else {
            return;
        };
        if self.app.read_progress(&self.conn) > before {
            r.pending = None;
            if let Some(c) = r.changes.last_mut() {
                c.resumed_secs = Some(now.as_secs_f64());
                c.lost_secs = Some(now.as_secs_f64() - c.at_secs);
            }
        }
    }

    /// A server's datagram for connection number `k`: `false` when it is for an older
    /// connection or cannot open a new one (dropped). A hello for a newer connection
    /// replaces the current one.
    fn accept_newer(&mut self, now: SimTime, k: u64, datagram: &Datagram) -> bool {
        let Some(r) = self.redial.as_mut() else {
            return true;
        };
        if k == r.current {
            return true;
        }
        let Some(hello) = (k > r.current).then(|| T::hello(datagram)).flatten() else {
            return false;
        };
        let src = datagram.src;
        let ticket_valid = hello.ticket.is_some_and(|t| r.tickets.contains(&t));
        // RFC 9000 §8.1.3: a token is valid only from the address it was issued to.
        let token_valid = hello
            .token
            .is_some_and(|t| r.tokens.get(&t) == Some(&src.ip));
        let mut conn = T::accept(
            &r.base,
            &ConnectionSpec::new(0),
            datagram,
            ticket_valid,
            token_valid,
            None,
        );
        conn.set_tracing(r.tracing);
        conn.start(now);
        let old = std::mem::replace(&mut self.conn, conn);
        r.old.push((old, now));
        r.current = k;
        r.issued = false;
        self.remote = src;
        self.app.on_accept(k);
        true
    }
}

impl<T: TransportDriver, W: Workload> Endpoint for AppEndpoint<T, W> {
    fn start(&mut self, now: SimTime) {
        self.started = now;
        self.app.on_start(now);
        self.conn.start(now);
        self.drive(now);
    }

    fn handle_datagram(&mut self, now: SimTime, datagram: Datagram) {
        self.handle_datagram_pooled(now, datagram, &mut PayloadPool::default());
    }

    fn handle_datagram_pooled(&mut self, now: SimTime, datagram: Datagram, pool: &mut PayloadPool) {
        if self.redial.is_some() {
            let Some(k) = T::connection_number(&datagram) else {
                return;
            };
            if !self.accept_newer(now, k, &datagram) {
                return;
            }
        }
        if self.conn.handle_datagram(now, &datagram, &mut self.app) {
            // Answer from where the peer sends (a server learns the client's address).
            self.remote = datagram.src;
            self.app.on_datagram(now, &self.conn);
            self.drive(now);
        }
        self.note_reads(now);
        pool.recycle(datagram.payload);
    }

    fn handle_timeout(&mut self, now: SimTime) {
        if self.app.wake_at().is_some_and(|w| w <= now) {
            self.app.on_wake(now, &mut self.conn);
            self.drive(now);
        }
        if self.conn.poll_timeout(&self.app).is_some_and(|t| t <= now) {
            self.conn.handle_timeout(now, &mut self.app);
            self.drive(now);
        }
        self.note_reads(now);
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram> {
        self.poll_transmit_pooled(now, &mut PayloadPool::default())
    }

    fn poll_transmit_pooled(&mut self, now: SimTime, pool: &mut PayloadPool) -> Option<Datagram> {
        let number = self.redial.as_ref().map(|r| r.current);
        self.conn
            .poll_datagram_pooled(now, self.local, self.remote, self.flow, number, pool)
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        let conn = self.conn.poll_timeout(&self.app);
        // The workload's timer only matters while the connection is open.
        let app = self.app.wake_at().filter(|_| !self.conn.is_closed());
        match (conn, app) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The connection follows the client to `new` if it migrates; otherwise a
    /// reconnecting client abandons it and opens a new one from `new`
    /// ([`AppEndpoint::reconnecting`]).
    fn handle_local_address_change(&mut self, now: SimTime, new: Addr) {
        let port_only = new.ip == self.local.ip;
        let progress = self.app.read_progress(&self.conn);
        let migrated = self.conn.handle_local_address_change(now, port_only);
        if migrated {
            self.local = new;
        }
        let Some(r) = self.redial.as_mut() else {
            return;
        };
        let reconnect = !migrated && r.left > 0 && self.app.completed_at().is_none();
        let action = match (migrated, reconnect) {
            (true, _) => "migrated",
            (false, true) => "reconnected",
            (false, false) => "none",
        };
        r.changes.push(AddressChangeReport {
            at_secs: now.as_secs_f64(),
            action: action.into(),
            read_bytes: progress,
            resumed_secs: None,
            lost_secs: None,
        });
        r.pending = (action != "none").then_some(progress);
        if !reconnect {
            return;
        }
        r.left -= 1;
        r.current += 1;
        let mut conn = T::connect(&r.base, &ConnectionSpec::new(0));
        conn.set_tracing(r.tracing);
        if let Some(t) = &r.ticket {
            conn.resume(t.clone());
        }
        r.ticket_taken = false;
        let old = std::mem::replace(&mut self.conn, conn);
        self.app.on_reconnect(now, r.current, &old);
        r.old.push((old, now));
        // The new connection's reads count from what the workload kept.
        r.pending = Some(self.app.read_progress(&self.conn));
        self.local = new;
        self.conn.start(now);
        self.drive(now);
    }

    fn local_addr(&self) -> Addr {
        self.local
    }

    fn is_done(&self) -> bool {
        self.app.completed_at().is_some()
    }

    /// The current connection's metrics (a reconnecting endpoint's earlier connections
    /// are not in them), the workload's report and, when reconnecting, the address
    /// changes (`reconnects.address_changes`, each connection's handshake time).
    fn metrics(&self, now: SimTime) -> EndpointMetrics {
        let mut m = self.conn.metrics(self.app.completed_at(), now);
        if let Some(w) = m.workload_mut() {
            self.app.report(self.started, now, w);
            if let Some(r) = &self.redial {
                let conns = r.old.iter().map(|(c, _)| c).chain([&self.conn]);
                let handshakes = conns
                    .map(|c| {
                        c.metrics(None, now)
                            .transport()
                            .and_then(|t| t.handshake_secs)
                    })
                    .collect();
                w.reconnects = Some(ReconnectsReport {
                    transfer_secs: None,
                    handshake_secs: handshakes,
                    resumed: Vec::new(),
                    address_changes: r.changes.clone(),
                });
            }
        }
        m
    }

    fn set_tracing(&mut self, on: bool) {
        self.conn.set_tracing(on);
        if let Some(r) = self.redial.as_mut() {
            r.tracing = on;
        }
    }

    fn drain_trace(&mut self, sink: &mut dyn FnMut(SimTime, TraceEvent)) {
        self.conn.drain_trace(sink);
    }

    fn series_columns(&self) -> Vec<String> {
        self.conn
            .series_sample()
            .into_iter()
            .map(|(k, _)| k)
            .collect()
    }

    fn series_values(&self, out: &mut Vec<f64>) {
        out.extend(self.conn.series_sample().into_iter().map(|(_, v)| v));
    }

    /// The connection's split ([`crate::breakdown`]); `None` for a reconnecting endpoint,
    /// whose workload spans several connections.
    fn time_breakdown(&self, now: SimTime) -> Option<TimeBreakdown> {
        if self.redial.is_some() {
            return None;
        }
        self.conn.time_breakdown(now)
    }
}

//! The generic endpoint of the single-connection workloads besides `bulk`
//! ([`AppEndpoint`]): one connection of any [`TransportDriver`] running a [`Workload`],
//! with the workload's own timer (a video's next request, its seek) kept here, beside
//! the connection's timers, so a workload never acts in the middle of the transport's
//! input processing.

use crate::driver::TransportDriver;
use crate::endpoint::Endpoint;
use crate::metrics::workload::WorkloadMetrics;
use crate::metrics::EndpointMetrics;
use crate::packet::{Addr, Datagram, FlowId};
use crate::time::SimTime;
use crate::trace::TraceEvent;
use crate::transport::stream::{AppReader, StreamEvent, StreamTransport};

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
}

/// One connection of transport `T` running the workload `W`, driven by the engine.
#[derive(Debug)]
pub struct AppEndpoint<T, W> {
    conn: T,
    app: W,
    local: Addr,
    remote: Addr,
    flow: FlowId,
    started: SimTime,
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
        }
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
            }
        }
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
        if self.conn.handle_datagram(now, &datagram, &mut self.app) {
            // Answer from where the peer sends (a server learns the client's address).
            self.remote = datagram.src;
            self.drive(now);
        }
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
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram> {
        self.conn
            .poll_datagram(now, self.local, self.remote, self.flow, None)
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

    /// The connection follows the client to `new` if it migrates.
    fn handle_local_address_change(&mut self, now: SimTime, new: Addr) {
        let port_only = new.ip == self.local.ip;
        if self.conn.handle_local_address_change(now, port_only) {
            self.local = new;
        }
    }

    fn local_addr(&self) -> Addr {
        self.local
    }

    fn is_done(&self) -> bool {
        self.app.completed_at().is_some()
    }

    fn metrics(&self, now: SimTime) -> EndpointMetrics {
        let mut m = self.conn.metrics(self.app.completed_at(), now);
        if let Some(w) = m.workload_mut() {
            self.app.report(self.started, now, w);
        }
        m
    }

    fn set_tracing(&mut self, on: bool) {
        self.conn.set_tracing(on);
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
}

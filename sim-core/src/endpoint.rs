//! The driver interface between the engine and protocol endpoints.
//!
//! An endpoint is a sans-IO state machine: the engine feeds it input with
//! `handle_*(now, ..)` and drains output with `poll_*(now)`. It never sees the scheduler,
//! the links or other endpoints; the engine never reaches into its state. QUIC, TCP, SCTP
//! and the UDP constant-bit-rate apps all implement this one trait.
//!
//! The engine's contract, after any input it gave an endpoint:
//! 1. it calls [`Endpoint::poll_transmit`] until it returns `None`, and sends each datagram
//!    on the host's outgoing link at `now`;
//! 2. it calls [`Endpoint::poll_timeout`] and (re)arms one timer for the returned instant;
//!    a previously armed instant is forgotten. When that instant comes it calls
//!    [`Endpoint::handle_timeout`] (never earlier than the instant asked for).
//!
//! An endpoint that wants to send later (pacing) returns `None` from `poll_transmit` and
//! asks for a timeout at the release time.

use crate::breakdown::TimeBreakdown;
use crate::metrics::EndpointMetrics;
use crate::packet::{Addr, Datagram, PayloadPool};
use crate::time::SimTime;
use crate::trace::TraceEvent;

/// A sans-IO protocol or application endpoint bound to one local address.
pub trait Endpoint {
    /// Called once when the run starts (time zero or the endpoint's start time).
    fn start(&mut self, now: SimTime);

    /// A datagram addressed to this endpoint arrived intact.
    fn handle_datagram(&mut self, now: SimTime, datagram: Datagram);

    /// The instant returned by the last [`Endpoint::poll_timeout`] has come.
    fn handle_timeout(&mut self, now: SimTime);

    /// The next datagram to send now, if any.
    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram>;

    /// [`Endpoint::handle_datagram`], handing the datagram's payload box back to the run's
    /// `pool` when done with it (the engine calls this one). Default: the box is dropped.
    fn handle_datagram_pooled(&mut self, now: SimTime, datagram: Datagram, pool: &mut PayloadPool) {
        let _ = pool;
        self.handle_datagram(now, datagram);
    }

    /// [`Endpoint::poll_transmit`], building the datagram in a box from the run's `pool`
    /// when it can (the engine calls this one). Default: a new box.
    fn poll_transmit_pooled(&mut self, now: SimTime, pool: &mut PayloadPool) -> Option<Datagram> {
        let _ = pool;
        self.poll_transmit(now)
    }

    /// The earliest instant at which the endpoint wants [`Endpoint::handle_timeout`].
    fn poll_timeout(&self) -> Option<SimTime>;

    /// The host's address changed (handover to a new network, or NAT rebinding). The
    /// endpoint sends from `new` from now on. Default: ignore.
    fn handle_local_address_change(&mut self, _now: SimTime, _new: Addr) {}

    /// The endpoint's local address. It may change only in
    /// [`Endpoint::handle_local_address_change`]: the runner reads it once at the start and
    /// again after each such call, and delivers datagrams by the address it read.
    fn local_addr(&self) -> Addr;

    /// `true` once the endpoint's work is finished (a source sent everything, a transfer
    /// completed). A run is `completed` when every foreground endpoint is done and the
    /// network holds none of their packets.
    fn is_done(&self) -> bool;

    /// The endpoint's metrics for the run result.
    fn metrics(&self, now: SimTime) -> EndpointMetrics;

    /// Names of the time-series columns this endpoint records when `output.series` is on
    /// (e.g. `cwnd`, `bytes_in_flight`); fixed for the whole run. Default: none.
    fn series_columns(&self) -> Vec<String> {
        Vec::new()
    }

    /// Appends the current value of each column named by [`Endpoint::series_columns`], in
    /// the same order. Called at every sampling instant.
    fn series_values(&self, _out: &mut Vec<f64>) {}

    /// "Where the time went" ([`crate::breakdown`]): the endpoint's connection time split
    /// by sender state, up to `now` or to its completion. Default: `None` (not available).
    fn time_breakdown(&self, _now: SimTime) -> Option<TimeBreakdown> {
        None
    }

    /// Switches event tracing on or off ([`crate::trace`]). While on, the endpoint buffers
    /// the protocol events it produces (packets sent, received, lost, metrics, ...) until
    /// [`Endpoint::drain_trace`]; while off (the default) it buffers nothing. Tracing must
    /// never change what the endpoint does. The runner switches it on before
    /// [`Endpoint::start`] only when the run's tracer wants records. Default: ignore (an
    /// endpoint without events).
    fn set_tracing(&mut self, _on: bool) {}

    /// Hands the buffered trace events to `sink`, oldest first, with the simulated time
    /// each happened, and forgets them. The runner calls it after every call into the
    /// endpoint (`start`, `handle_*`, `poll_transmit`), so records reach the tracer in
    /// time order — provided each event is stamped with the `now` of the call that produced
    /// it (never an earlier instant such as the start of a blocked period: tracers may
    /// rely on non-decreasing times). Default: nothing buffered.
    fn drain_trace(&mut self, _sink: &mut dyn FnMut(SimTime, TraceEvent)) {}

    /// [`Endpoint::drain_trace`] with the index of the connection each event belongs to,
    /// for endpoints that run several connections (one after another or at once); qlog
    /// writes one trace per connection. The runner calls this one. Default: every event
    /// belongs to connection 0.
    fn drain_trace_tagged(&mut self, sink: &mut dyn FnMut(u32, SimTime, TraceEvent)) {
        self.drain_trace(&mut |time, event| sink(0, time, event));
    }
}

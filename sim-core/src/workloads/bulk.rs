//! Workload `bulk`: once the connection can carry data (handshake complete, or 0-RTT
//! when resuming), the client opens `streams` bidirectional streams (as many as the
//! server's stream limit allows, more as it raises it) and writes a `request_size`-byte
//! request with FIN on each. When the server has read a whole request it answers on the
//! same stream with that stream's share of `bytes` and a FIN. The client is done when it
//! has read every response; the server when every response is acknowledged.
//!
//! Each side reads what it receives with its application reader
//! ([`super::reader::Reader`]: at once unless given a read rate), which the transport calls
//! synchronously ([`AppReader`]).
//!
//! [`Bulk`] is the per-connection state (used by every connection of a
//! [`super::sequence`] too); [`BulkEndpoint`] runs it on one connection of any
//! [`TransportDriver`].

use crate::breakdown::TimeBreakdown;
use crate::driver::TransportDriver;
use crate::endpoint::Endpoint;
use crate::metrics::EndpointMetrics;
use crate::packet::{Addr, Datagram, FlowId, PayloadPool};
use crate::time::{SimDuration, SimTime};
use crate::trace::TraceEvent;
use crate::transport::stream::{AppReader, Side, StreamEvent, StreamId, StreamTransport};
use crate::workloads::reader::Reader;

/// The `bulk` workload state of one connection (either side).
#[derive(Clone, Debug)]
pub struct Bulk {
    streams: u64,
    bytes: u64,
    request_size: u64,
    requests_opened: u64,
    finished_streams: u64,
    completed_at: Option<SimTime>,
    reader: Reader,
    /// iperf3-like time limit (server): send without limit for this long.
    duration: Option<SimDuration>,
    /// Server with a time limit: when it closes (set at the first request).
    stop_at: Option<SimTime>,
}

/// What a time-limited server writes per request: more than any run can send (2^50 B,
/// a petabyte), so the limit is the time, as with `iperf3 -t`.
pub const UNLIMITED: u64 = 1 << 50;

impl Bulk {
    /// `streams` request streams of `request_size` bytes each, answered with `bytes` in
    /// total; everything received is read at once.
    pub fn new(streams: u64, bytes: u64, request_size: u64) -> Self {
        Bulk {
            streams,
            bytes,
            request_size,
            requests_opened: 0,
            finished_streams: 0,
            completed_at: None,
            reader: Reader::immediate(),
            duration: None,
            stop_at: None,
        }
    }

    /// The same workload limited in time (iperf3 `-t`): the server answers every request
    /// with an unlimited response (`bytes` unused) and closes the connection `duration`
    /// after it read the first request; the client completes when the connection closes.
    /// `None`: no limit.
    pub fn with_duration(mut self, duration: Option<SimDuration>) -> Self {
        self.duration = duration;
        self
    }

    /// Server with a time limit: when it will close (`None`: no limit, or no request yet).
    pub fn stop_at(&self) -> Option<SimTime> {
        self.stop_at
    }

    /// The time limit came: this side is done (the caller closes the connection).
    pub fn stop(&mut self, now: SimTime) {
        self.completed_at.get_or_insert(now);
    }

    /// The same workload reading with `reader` (e.g. paced at a read rate).
    pub fn with_reader(mut self, reader: Reader) -> Self {
        self.reader = reader;
        self
    }

    /// The application reader.
    pub fn reader(&self) -> &Reader {
        &self.reader
    }

    /// Request streams.
    pub fn streams(&self) -> u64 {
        self.streams
    }

    /// When this side's part completed (client: every response read; server: every
    /// response acknowledged).
    pub fn completed_at(&self) -> Option<SimTime> {
        self.completed_at
    }

    /// Response size of the request stream with ordinal `index` (the `index`-th stream
    /// the client opened): `bytes / streams`, plus one for the first `bytes mod streams`
    /// streams.
    pub fn response_size(&self, index: u64) -> u64 {
        self.bytes / self.streams + u64::from(index < self.bytes % self.streams)
    }

    /// Handles one event of `t`; returns `true` when the workload just completed.
    pub fn on_event<T: StreamTransport + ?Sized>(
        &mut self,
        now: SimTime,
        t: &mut T,
        ev: StreamEvent,
    ) -> bool {
        match (t.side(), ev) {
            (
                Side::Client,
                StreamEvent::Connected
                | StreamEvent::StreamsAvailable
                | StreamEvent::EarlyDataReady,
            ) => {
                while self.requests_opened < self.streams {
                    let Some(id) = t.open_stream() else {
                        break;
                    };
                    t.write(id, self.request_size, true);
                    self.requests_opened += 1;
                }
                false
            }
            (Side::Server, StreamEvent::ReadComplete(id))
                if t.stream_index(id) < self.streams && self.duration.is_some() =>
            {
                let d = self.duration.unwrap_or_default();
                self.stop_at.get_or_insert(now.saturating_add(d));
                t.write(id, UNLIMITED, false);
                false
            }
            (_, StreamEvent::Closed(_)) if self.duration.is_some() => {
                if self.completed_at.is_none() {
                    self.completed_at = Some(now);
                    return true;
                }
                false
            }
            (Side::Server, StreamEvent::ReadComplete(id)) if t.stream_index(id) < self.streams => {
                let n = self.response_size(t.stream_index(id));
                t.write(id, n, true);
                false
            }
            (Side::Client, StreamEvent::ReadComplete(_))
            | (Side::Server, StreamEvent::SendComplete(_)) => {
                self.finished_streams += 1;
                if self.finished_streams == self.streams && self.completed_at.is_none() {
                    self.completed_at = Some(now);
                    return true;
                }
                false
            }
            _ => false,
        }
    }
}

/// The workload reads through its [`Reader`].
impl AppReader for Bulk {
    fn on_readable(&mut self, now: SimTime, t: &mut dyn StreamTransport, id: StreamId) {
        self.reader.on_readable(now, t, id);
    }

    fn deadline(&self) -> Option<SimTime> {
        self.reader.deadline()
    }

    fn on_deadline(&mut self, now: SimTime, t: &mut dyn StreamTransport) {
        self.reader.on_deadline(now, t);
    }

    fn reads_at_once(&self) -> bool {
        self.reader.reads_at_once()
    }
}

/// One connection of transport `T` running [`Bulk`], driven by the engine.
#[derive(Debug)]
pub struct BulkEndpoint<T> {
    conn: T,
    app: Bulk,
    local: Addr,
    remote: Addr,
    flow: FlowId,
}

impl<T: TransportDriver> BulkEndpoint<T> {
    /// Connection `conn` (not started) running `app`, at `local`, talking to `remote`,
    /// accounted to `flow`.
    pub fn new(conn: T, app: Bulk, local: Addr, remote: Addr, flow: FlowId) -> Self {
        BulkEndpoint {
            conn,
            app,
            local,
            remote,
            flow,
        }
    }

    /// The connection (read-only).
    pub fn connection(&self) -> &T {
        &self.conn
    }

    /// The workload state.
    pub fn workload(&self) -> &Bulk {
        &self.app
    }

    /// A time limit not yet acted on, while the connection is open.
    fn pending_stop(&self) -> Option<SimTime> {
        let s = self.app.stop_at?;
        (self.app.completed_at.is_none() && !self.conn.is_closed()).then_some(s)
    }

    fn stop_due(&self, now: SimTime) -> bool {
        self.pending_stop().is_some_and(|s| s <= now)
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
        if let Some(t) = self.app.completed_at {
            self.conn.freeze_breakdown(t);
        }
    }

    /// One time-series sample: the transport's columns, then per request stream bytes
    /// read, receive-window credit and receive-window size (zero until the stream
    /// exists). The column set is fixed for the run.
    pub fn series_sample(&self) -> Vec<(String, f64)> {
        let mut v = self.conn.series_sample();
        for k in 0..self.app.streams() {
            let id = self.conn.stream_id(Side::Client, k);
            let s = self.conn.stream_read_state(id).unwrap_or_default();
            v.push((format!("stream{id}_read"), s.read as f64));
            v.push((format!("stream{id}_recv_window"), s.window as f64));
            v.push((format!("stream{id}_window"), s.window_size as f64));
        }
        v
    }
}

impl<T: TransportDriver> Endpoint for BulkEndpoint<T> {
    fn start(&mut self, now: SimTime) {
        self.conn.start(now);
        self.drive(now);
    }

    fn handle_datagram(&mut self, now: SimTime, datagram: Datagram) {
        self.handle_datagram_pooled(now, datagram, &mut PayloadPool::default());
    }

    fn handle_datagram_pooled(&mut self, now: SimTime, datagram: Datagram, pool: &mut PayloadPool) {
        if self.conn.handle_datagram(now, &datagram, &mut self.app) {
            // Answer from where the peer sends (a server learns the client's address).
            self.remote = datagram.src;
            self.drive(now);
        }
        pool.recycle(datagram.payload);
    }

    fn handle_timeout(&mut self, now: SimTime) {
        if self.stop_due(now) {
            // The time limit (iperf3 `-t`): the server closes the connection.
            self.conn.close(now);
            self.app.stop(now);
            self.drive(now);
            if self.conn.poll_timeout(&self.app).is_none_or(|t| t > now) {
                return;
            }
        }
        self.conn.handle_timeout(now, &mut self.app);
        self.drive(now);
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram> {
        self.conn
            .poll_datagram(now, self.local, self.remote, self.flow, None)
    }

    fn poll_transmit_pooled(&mut self, now: SimTime, pool: &mut PayloadPool) -> Option<Datagram> {
        self.conn
            .poll_datagram_pooled(now, self.local, self.remote, self.flow, None, pool)
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        let conn = self.conn.poll_timeout(&self.app);
        match self.pending_stop() {
            Some(s) => Some(conn.map_or(s, |c| c.min(s))),
            None => conn,
        }
    }

    /// The connection follows the client to `new` if it migrates; else it keeps the old
    /// address (its packets then find no route or no endpoint after an IP change).
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
        self.app.completed_at.is_some()
    }

    fn metrics(&self, now: SimTime) -> EndpointMetrics {
        self.conn.metrics(self.app.completed_at, now)
    }

    fn set_tracing(&mut self, on: bool) {
        self.conn.set_tracing(on);
    }

    fn drain_trace(&mut self, sink: &mut dyn FnMut(SimTime, TraceEvent)) {
        self.conn.drain_trace(sink);
    }

    fn series_columns(&self) -> Vec<String> {
        self.series_sample().into_iter().map(|(k, _)| k).collect()
    }

    fn time_breakdown(&self, now: SimTime) -> Option<TimeBreakdown> {
        self.conn.time_breakdown(now)
    }

    fn series_values(&self, out: &mut Vec<f64>) {
        out.extend(self.series_sample().into_iter().map(|(_, v)| v));
    }
}

#[cfg(test)]
mod tests {
    //! `Bulk` against a scripted transport: the workload needs nothing but the
    //! stream-transport interface.

    use super::*;
    use crate::workloads::script::script;

    #[test]
    fn client_opens_as_the_limit_allows_and_completes_on_the_last_read() {
        let t0 = SimTime::ZERO;
        let mut app = Bulk::new(3, 10, 7);
        let mut t = script(Side::Client, 2);
        assert!(!app.on_event(t0, &mut t, StreamEvent::Connected));
        assert_eq!(t.writes, vec![(0, 7, true), (2, 7, true)]);
        t.limit = 5;
        app.on_event(t0, &mut t, StreamEvent::StreamsAvailable);
        assert_eq!(t.writes.len(), 3, "three requests, no more");
        let t1 = t0 + SimDuration::from_millis(1);
        assert!(!app.on_event(t1, &mut t, StreamEvent::ReadComplete(0)));
        assert!(!app.on_event(t1, &mut t, StreamEvent::ReadComplete(2)));
        assert!(app.on_event(t1, &mut t, StreamEvent::ReadComplete(4)));
        assert_eq!(app.completed_at(), Some(t1));
    }

    #[test]
    fn server_answers_each_request_with_its_share() {
        let t0 = SimTime::ZERO;
        let mut app = Bulk::new(3, 10, 7);
        let mut t = script(Side::Server, 0);
        for id in [0, 2, 4, 6] {
            app.on_event(t0, &mut t, StreamEvent::ReadComplete(id));
        }
        // 10 over 3 streams: 4, 3, 3; a fourth stream is not a request.
        assert_eq!(t.writes, vec![(0, 4, true), (2, 3, true), (4, 3, true)]);
        for id in [0, 2] {
            assert!(!app.on_event(t0, &mut t, StreamEvent::SendComplete(id)));
        }
        assert!(app.on_event(t0, &mut t, StreamEvent::SendComplete(4)));
    }

    #[test]
    fn a_time_limited_server_sends_without_limit_and_stops_at_the_limit() {
        let t0 = SimTime::ZERO + SimDuration::from_millis(7);
        let mut app = Bulk::new(2, 10, 7).with_duration(Some(SimDuration::from_secs(30)));
        let mut t = script(Side::Server, 0);
        assert!(!app.on_event(t0, &mut t, StreamEvent::ReadComplete(0)));
        let t1 = t0 + SimDuration::from_millis(1);
        app.on_event(t1, &mut t, StreamEvent::ReadComplete(2));
        assert_eq!(t.writes, vec![(0, UNLIMITED, false), (2, UNLIMITED, false)]);
        // The clock starts at the first request.
        assert_eq!(app.stop_at(), Some(t0 + SimDuration::from_secs(30)));
        assert_eq!(app.completed_at(), None);
        // The client completes when the connection closes.
        let mut c = Bulk::new(2, 10, 7).with_duration(Some(SimDuration::from_secs(30)));
        let mut ct = script(Side::Client, 2);
        c.on_event(t0, &mut ct, StreamEvent::Connected);
        assert!(c.on_event(
            t1,
            &mut ct,
            StreamEvent::Closed(crate::transport::stream::CloseKind::PeerClose)
        ));
        assert_eq!(c.completed_at(), Some(t1));
        // Without a limit a close completes nothing.
        let mut plain = Bulk::new(2, 10, 7);
        assert!(!plain.on_event(
            t1,
            &mut ct,
            StreamEvent::Closed(crate::transport::stream::CloseKind::PeerClose)
        ));
    }
}

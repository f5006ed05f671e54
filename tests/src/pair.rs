//! A two-host harness for any sans-IO transport: a client and a server
//! `BulkEndpoint<T>` (`T` = TCP, SCTP or QUIC) joined by one link per direction (a rate,
//! a propagation delay, a FIFO serializer without a queue limit, the 28-byte default
//! per-datagram overhead of the real links), with scripted or random drops and extra
//! per-datagram delays (reordering). It calls the same `Endpoint` methods the runner
//! calls, so the TCP, SCTP and QUIC validations (`tests/tests/tcp_sctp_validation.rs`)
//! drive the three transports through one piece of code, on identical links and loss
//! scripts, before (and independently of) their scenario wiring.

use sim_core::driver::TransportDriver;
use sim_core::endpoint::Endpoint;
use sim_core::packet::{Addr, Datagram, Payload};
use sim_core::time::{SimDuration, SimTime};
use sim_core::transport::stream::Side;
use sim_core::wire::quic::Frame;
use sim_core::wire::sctp::Chunk;
use sim_core::wire::tcp::RecordKind;
use sim_core::workloads::bulk::{Bulk, BulkEndpoint};
use std::collections::BTreeMap;

/// Direction index: client to server.
pub const UP: usize = 0;
/// Direction index: server to client.
pub const DOWN: usize = 1;
/// Per-datagram link overhead (IPv4 + UDP), as the simulator's links default to.
pub const OVERHEAD: u64 = 28;

/// Serialization time of `bytes` at `rate` bit/s, rounded up to the nanosecond (as the
/// simulator's links do).
pub fn ser(bytes: u64, rate: u64) -> SimDuration {
    SimDuration((bytes as u128 * 8 * 1_000_000_000).div_ceil(rate as u128) as u64)
}

/// One datagram handed to a link.
#[derive(Clone, Copy, Debug)]
pub struct Sent {
    /// When it was handed to the link.
    pub at: SimTime,
    /// [`UP`] or [`DOWN`].
    pub dir: usize,
    /// Index on its link (0-based, every datagram counted).
    pub idx: u64,
    /// Datagram size (without the link overhead).
    pub size: u64,
    /// Dropped by the script.
    pub dropped: bool,
    /// When it arrives (or would have arrived).
    pub arrive: SimTime,
    /// New payload bytes sent on this link before this datagram (TCP: stream bytes
    /// beyond the highest sequence sent; SCTP: user bytes of DATA chunks with a TSN
    /// above every earlier one; retransmissions add nothing; 0 for QUIC).
    pub new_before: u64,
}

/// `(direction, index on that link, datagram, now)` -> drop it.
pub type DropFn = Box<dyn FnMut(usize, u64, &Datagram, SimTime) -> bool>;
/// `(direction, index on that link)` -> extra one-way delay.
pub type DelayFn = Box<dyn FnMut(usize, u64) -> SimDuration>;

/// The two hosts and their links.
pub struct Pair<T: TransportDriver> {
    /// Current time.
    pub now: SimTime,
    /// Client (0) and server (1).
    pub ep: [BulkEndpoint<T>; 2],
    rate: u64,
    delay: SimDuration,
    busy: [SimTime; 2],
    count: [u64; 2],
    queue: BTreeMap<(SimTime, u64), (usize, Datagram)>,
    seq: u64,
    started: bool,
    /// Per link: the highest TCP sequence end / SCTP TSN + 1 sent, and new payload bytes.
    high: [u64; 2],
    new_bytes: [u64; 2],
    /// Drop rule (default: none).
    pub drop: DropFn,
    /// Extra delay rule (default: none).
    pub extra: DelayFn,
    /// Keep every datagram in [`Pair::log`] (off for long runs).
    pub keep_log: bool,
    /// Every datagram sent, when `keep_log`.
    pub log: Vec<Sent>,
    /// Every dropped datagram (always kept).
    pub drops: Vec<Sent>,
    /// Track per-stream completion at the client ([`Pair::read_done`]).
    pub track_streams: bool,
    /// When the client had read each request stream's whole response, by stream index.
    pub read_done: BTreeMap<u64, SimTime>,
}

impl<T: TransportDriver> Pair<T> {
    /// `client` and `server` (not started) running `bulk` with `streams` request streams
    /// of `bytes` response bytes each (requests of `request` bytes), over links of `rate`
    /// bit/s and one-way `delay` in each direction.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        client: T,
        server: T,
        streams: u64,
        bytes: u64,
        request: u64,
        rate: u64,
        delay: SimDuration,
    ) -> Self {
        let ca = Addr::new(1, 1);
        let sa = Addr::new(2, 1);
        let c = BulkEndpoint::new(client, Bulk::new(streams, bytes, request), ca, sa, 0);
        let s = BulkEndpoint::new(server, Bulk::new(streams, bytes, request), sa, ca, 0);
        Pair {
            now: SimTime::ZERO,
            ep: [c, s],
            rate,
            delay,
            busy: [SimTime::ZERO; 2],
            count: [0; 2],
            queue: BTreeMap::new(),
            seq: 0,
            started: false,
            high: [0; 2],
            new_bytes: [0; 2],
            drop: Box::new(|_, _, _, _| false),
            extra: Box::new(|_, _| SimDuration::ZERO),
            keep_log: false,
            log: Vec::new(),
            drops: Vec::new(),
            track_streams: false,
            read_done: BTreeMap::new(),
        }
    }

    /// The client's connection.
    pub fn client(&self) -> &T {
        self.ep[0].connection()
    }

    /// The server's connection.
    pub fn server(&self) -> &T {
        self.ep[1].connection()
    }

    /// Datagrams handed to link `dir` so far.
    pub fn sent(&self, dir: usize) -> u64 {
        self.count[dir]
    }

    /// The workload's completion at the client (every response read).
    pub fn completed_at(&self) -> Option<SimTime> {
        self.ep[0].workload().completed_at()
    }

    fn send(&mut self, dir: usize, d: Datagram) {
        let idx = self.count[dir];
        self.count[dir] += 1;
        let size = u64::from(d.size);
        let start = self.now.max(self.busy[dir]);
        let done = start + ser(size + OVERHEAD, self.rate);
        self.busy[dir] = done;
        let dropped = (self.drop)(dir, idx, &d, self.now);
        let arrive = done + self.delay + (self.extra)(dir, idx);
        let new_before = self.new_bytes[dir];
        match &d.payload {
            Payload::Tcp(s) => {
                let end = s.seq + s.len;
                if s.len > 0 && end > self.high[dir] {
                    self.new_bytes[dir] += end - self.high[dir].max(s.seq);
                    self.high[dir] = end;
                }
            }
            Payload::Sctp(p) => {
                for c in &p.chunks {
                    if let Chunk::Data(dc) = c {
                        if dc.tsn + 1 > self.high[dir] {
                            self.high[dir] = dc.tsn + 1;
                            self.new_bytes[dir] += dc.len;
                        }
                    }
                }
            }
            _ => {}
        }
        let s = Sent {
            at: self.now,
            dir,
            idx,
            size,
            dropped,
            arrive,
            new_before,
        };
        if self.keep_log {
            self.log.push(s);
        }
        if dropped {
            self.drops.push(s);
            return;
        }
        self.seq += 1;
        self.queue.insert((arrive, self.seq), (1 - dir, d));
    }

    fn flush(&mut self, i: usize) {
        while let Some(d) = self.ep[i].poll_transmit(self.now) {
            self.send(i, d);
        }
    }

    fn track(&mut self) {
        if !self.track_streams {
            return;
        }
        let app = self.ep[0].workload();
        let conn = self.ep[0].connection();
        for k in 0..app.streams() {
            if self.read_done.contains_key(&k) {
                continue;
            }
            let id = conn.stream_id(Side::Client, k);
            if conn
                .stream_read_state(id)
                .is_some_and(|s| s.read >= app.response_size(k))
            {
                self.read_done.insert(k, self.now);
            }
        }
    }

    /// Nothing left to happen: no datagram in flight and no timer armed on either side
    /// (a run that is not done then never will be).
    pub fn stalled(&self) -> bool {
        self.queue.is_empty()
            && self.ep[0].poll_timeout().is_none()
            && self.ep[1].poll_timeout().is_none()
    }

    /// Runs until both sides are done or the next event is after `until` (the clock then
    /// stands at `until`); returns whether both are done. May be called again with a
    /// later `until` to continue.
    pub fn run(&mut self, until: SimTime) -> bool {
        if !self.started {
            self.started = true;
            self.ep[1].start(self.now);
            self.ep[0].start(self.now);
            self.flush(1);
            self.flush(0);
        }
        loop {
            if self.ep[0].is_done() && self.ep[1].is_done() {
                return true;
            }
            let q = self.queue.keys().next().map(|k| k.0);
            let t0 = self.ep[0].poll_timeout();
            let t1 = self.ep[1].poll_timeout();
            let Some(next) = [q, t0, t1].into_iter().flatten().min() else {
                return false;
            };
            if next > until {
                // Nothing happens before `until`: the clock moves there.
                self.now = self.now.max(until);
                return false;
            }
            self.now = self.now.max(next);
            if q == Some(next) {
                let (_, (to, d)) = self.queue.pop_first().expect("queued");
                self.ep[to].handle_datagram(self.now, d);
                self.flush(to);
                self.track();
                continue;
            }
            for i in 0..2 {
                if self.ep[i].poll_timeout().is_some_and(|t| t <= self.now) {
                    self.ep[i].handle_timeout(self.now);
                    self.flush(i);
                }
            }
            self.track();
        }
    }
}

/// Whether datagram `d` carries response bytes of stream `id` (the transport's stream
/// ID, `StreamTransport::stream_id`): an HTTP/2-style DATA record of it overlapping a
/// TCP segment's payload, an SCTP DATA chunk of it, or a QUIC STREAM frame of it.
pub fn carries_stream(d: &Datagram, id: u64) -> bool {
    match &d.payload {
        Payload::Tcp(s) => {
            s.len > 0
                && s.records.iter().any(|r| {
                    matches!(r.kind, RecordKind::Data { stream, payload, .. }
                        if stream == id && payload > 0)
                        && r.offset < s.seq + s.len
                        && r.end() > s.seq
                })
        }
        Payload::Sctp(p) => p
            .chunks
            .iter()
            .any(|c| matches!(c, Chunk::Data(dc) if dc.stream == id && dc.len > 0)),
        Payload::Quic(q) => q.packets.iter().any(|p| {
            p.frames
                .iter()
                .any(|f| matches!(f, Frame::Stream { id: i, len, .. } if *i == id && *len > 0))
        }),
        _ => false,
    }
}

//! Constant-bit-rate UDP source and sink (like `iperf -u`).
//!
//! The source sends `count` datagrams of `size` bytes of UDP payload. Its rate counts whole
//! IPv4 packets: each datagram is `(size + 28) * 8` bits (28 B = IPv4 + UDP headers), so a
//! source at a link's rate exactly fills a link with the default 28 B overhead. Datagram
//! `i` leaves at `start + ceil(i * (size + 28) * 8 * 10^9 / rate)` ns — computed from `i`
//! each time, so the spacing never drifts.

use crate::endpoint::Endpoint;
use crate::metrics::EndpointMetrics;
use crate::packet::{Addr, Datagram, FlowId, Payload};
use crate::time::SimTime;
use crate::units::Rate;

/// IPv4 (20 B) + UDP (8 B) headers, counted in the CBR rate.
pub const IP_UDP_HEADER: u64 = 28;

/// The sending side.
#[derive(Debug)]
pub struct CbrSource {
    local: Addr,
    peer: Addr,
    flow: FlowId,
    rate: Rate,
    size: u32,
    start: SimTime,
    count: u64,
    next: u64,
    first_sent: Option<SimTime>,
    last_sent: Option<SimTime>,
}

impl CbrSource {
    /// A source from `local` to `peer`.
    pub fn new(
        local: Addr,
        peer: Addr,
        flow: FlowId,
        rate: Rate,
        size: u32,
        start: SimTime,
        count: u64,
    ) -> Self {
        assert!(
            rate.0 > 0,
            "CBR rate must be positive (validated by the config)"
        );
        CbrSource {
            local,
            peer,
            flow,
            rate,
            size,
            start,
            count,
            next: 0,
            first_sent: None,
            last_sent: None,
        }
    }

    /// Send time of datagram `i`.
    pub fn send_time(&self, i: u64) -> SimTime {
        let bits = (self.size as u128 + IP_UDP_HEADER as u128) * 8;
        let ns = (i as u128 * bits * 1_000_000_000).div_ceil(self.rate.0 as u128);
        SimTime(self.start.0 + ns as u64)
    }
}

impl Endpoint for CbrSource {
    fn start(&mut self, _now: SimTime) {}

    fn handle_datagram(&mut self, _now: SimTime, _d: Datagram) {}

    fn handle_timeout(&mut self, _now: SimTime) {}

    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram> {
        if self.next >= self.count || self.send_time(self.next) > now {
            return None;
        }
        let d = Datagram::new(
            self.local,
            self.peer,
            self.size,
            self.flow,
            Payload::Cbr { seq: self.next },
        );
        self.next += 1;
        self.first_sent.get_or_insert(now);
        self.last_sent = Some(now);
        Some(d)
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        (self.next < self.count).then(|| self.send_time(self.next))
    }

    fn handle_local_address_change(&mut self, _now: SimTime, new: Addr) {
        self.local = new;
    }

    fn local_addr(&self) -> Addr {
        self.local
    }

    fn is_done(&self) -> bool {
        self.next >= self.count
    }

    fn metrics(&self, _now: SimTime) -> EndpointMetrics {
        EndpointMetrics::CbrSource {
            packets_sent: self.next,
            bytes_sent: self.next * self.size as u64,
            first_sent_secs: self.first_sent.map(|t| t.as_secs_f64()),
            last_sent_secs: self.last_sent.map(|t| t.as_secs_f64()),
        }
    }
}

/// The receiving side: counts, detects reordering and duplicates, measures one-way delay.
#[derive(Debug)]
pub struct CbrSink {
    local: Addr,
    seen: Vec<u64>,
    received: u64,
    bytes: u64,
    highest: Option<u64>,
    reordered: u64,
    duplicates: u64,
    delay_min: u64,
    delay_max: u64,
    delay_sum: u128,
    first_arrival: Option<SimTime>,
    last_arrival: Option<SimTime>,
}

impl CbrSink {
    /// A sink listening on `local`.
    pub fn new(local: Addr) -> Self {
        CbrSink {
            local,
            seen: Vec::new(),
            received: 0,
            bytes: 0,
            highest: None,
            reordered: 0,
            duplicates: 0,
            delay_min: u64::MAX,
            delay_max: 0,
            delay_sum: 0,
            first_arrival: None,
            last_arrival: None,
        }
    }
}

impl Endpoint for CbrSink {
    fn start(&mut self, _now: SimTime) {}

    fn handle_datagram(&mut self, now: SimTime, d: Datagram) {
        let Payload::Cbr { seq } = d.payload else {
            return;
        };
        let (w, b) = ((seq / 64) as usize, seq % 64);
        if self.seen.len() <= w {
            self.seen.resize(w + 1, 0);
        }
        if self.seen[w] & (1 << b) != 0 {
            self.duplicates += 1;
            return;
        }
        self.seen[w] |= 1 << b;
        if self.highest.is_some_and(|h| seq < h) {
            self.reordered += 1;
        }
        self.highest = Some(self.highest.map_or(seq, |h| h.max(seq)));
        self.received += 1;
        self.bytes += d.size as u64;
        let delay = now.saturating_since(d.sent_at).as_nanos();
        self.delay_min = self.delay_min.min(delay);
        self.delay_max = self.delay_max.max(delay);
        self.delay_sum += delay as u128;
        self.first_arrival.get_or_insert(now);
        self.last_arrival = Some(now);
    }

    fn handle_timeout(&mut self, _now: SimTime) {}

    fn poll_transmit(&mut self, _now: SimTime) -> Option<Datagram> {
        None
    }

    fn poll_timeout(&self) -> Option<SimTime> {
        None
    }

    fn handle_local_address_change(&mut self, _now: SimTime, new: Addr) {
        self.local = new;
    }

    fn local_addr(&self) -> Addr {
        self.local
    }

    /// A sink has no work of its own: the flow is finished when its source is and the
    /// network holds none of its packets.
    fn is_done(&self) -> bool {
        true
    }

    fn metrics(&self, _now: SimTime) -> EndpointMetrics {
        let n = self.received;
        let goodput = match (self.first_arrival, self.last_arrival) {
            (Some(a), Some(b)) if b > a && n > 1 => {
                // Bytes after the first arrival over the span between first and last.
                let per = self.bytes as f64 / n as f64;
                Some(per * (n - 1) as f64 * 8.0 / (b - a).as_secs_f64())
            }
            _ => None,
        };
        EndpointMetrics::CbrSink {
            packets_received: n,
            bytes_received: self.bytes,
            reordered: self.reordered,
            duplicates: self.duplicates,
            missing: self.highest.map_or(0, |h| h + 1 - n),
            delay_min_secs: (n > 0).then(|| self.delay_min as f64 / 1e9),
            delay_mean_secs: (n > 0).then(|| (self.delay_sum / n as u128) as f64 / 1e9),
            delay_max_secs: (n > 0).then(|| self.delay_max as f64 / 1e9),
            goodput_bps: goodput,
        }
    }
}

//! TCP endpoint tests over the two-host harness (`harness.rs`).

use super::mux::MuxSend;
use crate::cc::CcAlgorithm;
use crate::config::tcp::{TcpConfig, TlsVersion};
use crate::time::{SimDuration, SimTime};
use harness::{ser, Net, DOWN, UP};

/// A tiny two-host network for the TCP tests: a client and a server
/// `BulkEndpoint<TcpConnection>` joined by one link per direction (rate, propagation
/// delay, FIFO serializer without a queue limit, the 28-byte default overhead of the real
/// links), with scripted or random drops and extra delays (reordering). Isolated from the
/// runner and the scenario format on purpose: it tests the sans-IO connection through
/// the same `Endpoint` / `TransportDriver` calls the runner makes.
mod harness {

    use crate::config::tcp::TcpConfig;
    use crate::endpoint::Endpoint;
    use crate::packet::{Addr, Datagram, Payload};
    use crate::tcp::connection::TcpConnection;
    use crate::time::{SimDuration, SimTime};
    use crate::transport::stream::Side;
    use crate::wire::tcp::LINK_DEFAULT_OVERHEAD;
    use crate::workloads::bulk::{Bulk, BulkEndpoint};
    use std::collections::BTreeMap;

    /// Direction index: client to server.
    pub const UP: usize = 0;
    /// Direction index: server to client.
    pub const DOWN: usize = 1;

    /// Serialization time of `bytes` (datagram size + overhead) at `rate` bit/s, rounded up.
    pub fn ser(bytes: u64, rate: u64) -> SimDuration {
        SimDuration((bytes as u128 * 8 * 1_000_000_000).div_ceil(rate as u128) as u64)
    }

    /// One datagram sent, as the harness saw it.
    #[derive(Clone, Debug)]
    pub struct Sent {
        /// When it was handed to the link.
        pub at: SimTime,
        /// [`UP`] or [`DOWN`].
        pub dir: usize,
        /// Segment fields.
        pub seq: u64,
        /// Payload bytes.
        pub len: u64,
        /// SYN flag.
        pub syn: bool,
        /// Sent again.
        pub retransmission: bool,
        /// Dropped by the script.
        pub dropped: bool,
        /// Datagram size.
        pub size: u64,
    }

    type DropFn = Box<dyn FnMut(usize, u64, &Datagram, SimTime) -> bool>;
    /// A drop rule.
    pub type DropFnPub = DropFn;
    type DelayFn = Box<dyn FnMut(usize, u64) -> SimDuration>;

    /// The network.
    pub struct Net {
        /// Current time.
        pub now: SimTime,
        /// Client (0) and server (1).
        pub ep: [BulkEndpoint<TcpConnection>; 2],
        rate: u64,
        delay: SimDuration,
        busy: [SimTime; 2],
        count: [u64; 2],
        queue: BTreeMap<(SimTime, u64), (usize, Datagram)>,
        seq: u64,
        /// `(direction, index on that link, datagram, now)` -> drop it.
        pub drop: DropFn,
        /// Extra one-way delay per datagram (reordering when it varies).
        pub extra: DelayFn,
        /// Every datagram sent.
        pub log: Vec<Sent>,
    }

    impl Net {
        /// Client and server with configs `c`, `s`, running `bulk` (`streams`, `bytes`,
        /// `request`), over links of `rate` bit/s and one-way `delay`.
        pub fn new(
            c: TcpConfig,
            s: TcpConfig,
            streams: u64,
            bytes: u64,
            request: u64,
            rate: u64,
            delay: SimDuration,
        ) -> Self {
            let ca = Addr::new(1, 1);
            let sa = Addr::new(2, 1);
            let client = BulkEndpoint::new(
                TcpConnection::new(Side::Client, c),
                Bulk::new(streams, bytes, request),
                ca,
                sa,
                0,
            );
            let server = BulkEndpoint::new(
                TcpConnection::new(Side::Server, s),
                Bulk::new(streams, bytes, request),
                sa,
                ca,
                0,
            );
            Net {
                now: SimTime::ZERO,
                ep: [client, server],
                rate,
                delay,
                busy: [SimTime::ZERO; 2],
                count: [0; 2],
                queue: BTreeMap::new(),
                seq: 0,
                drop: Box::new(|_, _, _, _| false),
                extra: Box::new(|_, _| SimDuration::ZERO),
                log: Vec::new(),
            }
        }

        /// The client connection.
        pub fn client(&self) -> &TcpConnection {
            self.ep[0].connection()
        }

        /// The server connection.
        pub fn server(&self) -> &TcpConnection {
            self.ep[1].connection()
        }

        fn send(&mut self, dir: usize, d: Datagram) {
            let idx = self.count[dir];
            self.count[dir] += 1;
            let size = u64::from(d.size);
            let start = self.now.max(self.busy[dir]);
            let done = start + ser(size + LINK_DEFAULT_OVERHEAD, self.rate);
            self.busy[dir] = done;
            let dropped = (self.drop)(dir, idx, &d, self.now);
            if let Payload::Tcp(s) = &d.payload {
                self.log.push(Sent {
                    at: self.now,
                    dir,
                    seq: s.seq,
                    len: s.len,
                    syn: s.flags.syn,
                    retransmission: s.retransmission,
                    dropped,
                    size,
                });
            }
            if dropped {
                return;
            }
            let arrive = done + self.delay + (self.extra)(dir, idx);
            self.seq += 1;
            self.queue.insert((arrive, self.seq), (1 - dir, d));
        }

        fn flush(&mut self, i: usize) {
            while let Some(d) = self.ep[i].poll_transmit(self.now) {
                self.send(i, d);
            }
        }

        /// Runs until both sides are done or `until`; returns whether both are done.
        pub fn run(&mut self, until: SimTime) -> bool {
            if self.now == SimTime::ZERO && self.log.is_empty() {
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
                    return false;
                }
                self.now = self.now.max(next);
                if q == Some(next) {
                    let (_, (to, d)) = self.queue.pop_first().expect("queued");
                    self.ep[to].handle_datagram(self.now, d);
                    self.flush(to);
                    continue;
                }
                for i in 0..2 {
                    if self.ep[i].poll_timeout().is_some_and(|t| t <= self.now) {
                        self.ep[i].handle_timeout(self.now);
                        self.flush(i);
                    }
                }
            }
        }
    }
}

fn secs(s: u64) -> SimTime {
    SimTime(s * 1_000_000_000)
}

/// NewReno without HyStart and without quick ACKs (the analytic model's delayed ACKs from
/// the first segment); the other defaults (Linux loss recovery).
fn cfg(tls: TlsVersion) -> TcpConfig {
    let mut c = TcpConfig {
        tls,
        quickack: 0,
        ..TcpConfig::default()
    };
    c.cc.algorithm = CcAlgorithm::NewReno;
    c.cc.hystart = false;
    c
}

/// Wire bytes of a segment with `payload` bytes and 12 option bytes (timestamps).
fn wire(payload: u64) -> u64 {
    20 + 20 + 12 + payload
}

/// The analytic model (`docs/tcp.md`): every message is a flight of back-to-back
/// segments that arrives `sum of serialization times + d` after it leaves; the SYN and
/// SYN-ACK (20 option bytes) take one flight each; TLS adds 1 (1.3) or 2 (1.2) round
/// trips of flights; the request (with TLS 1.3's client Finished) is one flight; the
/// response then goes in slow-start rounds from the initial window (10 segments), each
/// round doubling it and lasting `a·ser(full) + d + ser(ack) + d` (its first ACK comes
/// after `a` = ack_every segments), until the remaining segments fit in the window or the
/// window covers a round (the link is then busy to the end).
fn model(c: &TcpConfig, rate: u64, d: SimDuration, bytes: u64, request: u64) -> SimDuration {
    let smss = c.effective_mss();
    let s = |b: u64| ser(b, rate);
    let flight = |mut b: u64| {
        let mut t = SimDuration::ZERO;
        while b > 0 {
            let n = b.min(smss);
            t += s(wire(n));
            b -= n;
        }
        t + d
    };
    let mux = MuxSend::new(c.frame_size, c.record_overhead());
    let syn = 20 + 20 + 20;
    let mut t = (s(syn) + d) + (s(syn) + d);
    let mut req = mux.framed_len(request);
    match c.tls {
        TlsVersion::None => {}
        TlsVersion::Tls13 => {
            t = t + flight(c.client_hello_size) + flight(c.server_flight_size);
            req += c.client_finished_size;
        }
        TlsVersion::Tls12 => {
            t = t
                + flight(c.client_hello_size)
                + flight(c.server_flight_size)
                + flight(c.client_finished_size)
                + flight(c.server_finished_size);
        }
    }
    t += flight(req);
    // Response segments.
    let total = mux.framed_len(bytes);
    let mut segs: Vec<u64> = Vec::new();
    let mut b = total;
    while b > 0 {
        let n = b.min(smss);
        segs.push(n);
        b -= n;
    }
    let full = s(wire(smss));
    let round = full.saturating_mul(c.ack_every) + d + s(wire(0)) + d;
    let mut w = (TcpConfig::rfc6928_initial_window(smss) / smss) as usize;
    let mut i = 0;
    loop {
        let rest = &segs[i..];
        if rest.len() <= w || full.saturating_mul(w as u64) >= round {
            let mut burst = SimDuration::ZERO;
            for &n in rest {
                burst += s(wire(n));
            }
            return t + burst + d;
        }
        t += round;
        i += w;
        w *= 2;
    }
}

/// Checks one lossless point (each TLS mode) against [`model`]: NewReno without HyStart
/// within 1 %, CUBIC (RFC 9438) + HyStart++ within [-1 %, `hystart_hi`), the default
/// Linux CUBIC + Linux HyStart within [-1 %, `linux_hi`); returns the largest relative
/// deviation of the first and the largest of the last.
fn check_lossless(
    rate: u64,
    rtt_ms: u64,
    bytes: u64,
    hystart_hi: f64,
    linux_hi: f64,
) -> (f64, f64) {
    use crate::cc::CubicFlavor;
    let (mut worst, mut linux_worst) = (0.0f64, 0.0f64);
    for tls in [TlsVersion::None, TlsVersion::Tls12, TlsVersion::Tls13] {
        // NewReno without HyStart (the model's pure slow start); RFC 9438 CUBIC with
        // HyStart++, whose conservative slow start may begin a little before the pipe is
        // full (measured: < 0.3 % slower); the default, Linux's CUBIC with Linux HyStart.
        // All without quick ACKs: the model acknowledges every second segment from the
        // first (`quick_ack_acknowledges_every_segment_at_the_start` checks the mode).
        let rfc = TcpConfig {
            tls,
            cubic: CubicFlavor::Rfc9438,
            quickack: 0,
            ..TcpConfig::default()
        };
        let linux = TcpConfig {
            tls,
            quickack: 0,
            ..TcpConfig::default()
        };
        for c in [cfg(tls), rfc, linux] {
            let d = SimDuration::from_millis(rtt_ms / 2);
            let mut net = Net::new(c.clone(), c.clone(), 1, bytes, 100, rate, d);
            assert!(net.run(secs(600)), "finishes");
            let got = net.ep[0].workload().completed_at();
            let got = got.expect("client completed").as_nanos() as f64;
            let want = model(&c, rate, d, bytes, 100).as_nanos() as f64;
            let rel = got / want - 1.0;
            // The model is pure slow start: 1 % for NewReno without HyStart. HyStart++
            // (RFC 9406) can only slow slow start down: its CSS starts when a round's
            // minimum RTT rises, which ACK-clocked slow start causes once a round's
            // burst outlasts the idle gap (window above ~BDP/2; `docs/validation.md`
            // §5.7 measured up to +2.2 % for QUIC): [-1 %, +3 %] on the full grid; the
            // lean grid keeps 1 %. Linux HyStart leaves slow start at once, on an ACK
            // train past half the minimum RTT or a 4-16 ms rise of a round's minimum
            // RTT, and then grows 5 % per RTT: later on long paths (`docs/validation.md`
            // §6.1).
            let hystart = c.cc.hystart;
            let linux = hystart && c.cubic == CubicFlavor::Linux;
            let hi = match (hystart, linux) {
                (false, _) => 0.01,
                (true, false) => hystart_hi,
                (true, true) => linux_hi,
            };
            let ok = (-0.01..hi).contains(&rel);
            if !hystart {
                worst = worst.max(rel.abs());
            }
            if linux {
                linux_worst = linux_worst.max(rel);
            }
            assert!(
                ok,
                "{tls:?} hystart {hystart} {:?} {rate} b/s {rtt_ms} ms {bytes} B: got {:.6} s, model {:.6} s ({:+.3} %)",
                c.cubic,
                got / 1e9,
                want / 1e9,
                rel * 100.0
            );
            assert_eq!(net.client().stats.app_bytes_read, bytes);
            // Lossless: nothing is resent but a tail loss probe (RFC 8985 §7; on the
            // shortest paths the probe timer, 2·SRTT + 2 ms, can beat a delayed ACK, as
            // in Linux), and no reduction follows.
            let st = &net.server().stats;
            assert!(st.segments_retransmitted <= st.tlp_probes, "{st:?}");
            assert_eq!(st.congestion_events, 0, "{st:?}");
        }
    }
    (worst, linux_worst)
}

#[test]
fn lossless_transfer_matches_the_analytic_model() {
    for rate in [10_000_000u64, 100_000_000] {
        for rtt_ms in [20u64, 100] {
            for bytes in [20_000u64, 1_000_000] {
                check_lossless(rate, rtt_ms, bytes, 0.01, 0.01);
            }
        }
    }
}

/// The full lossless grid (`docs/validation.md` §6.1): rates 1, 10, 100, 1000 Mbit/s ×
/// RTT 2, 20, 100, 300 ms × 10 kB - 10 MB (10 MB at 1 Mbit/s omitted), each TLS mode:
/// NewReno within 1 %, RFC 9438 CUBIC + HyStart++ within [-1 %, +3 %], the default Linux
/// CUBIC + Linux HyStart within [-1 %, LINUX_HI). Heavy: `--ignored`.
#[test]
#[ignore = "full grid: run in release"]
fn lossless_transfer_matches_the_analytic_model_full_grid() {
    let (mut worst, mut linux_worst) = (0.0f64, 0.0f64);
    for rate in [1_000_000u64, 10_000_000, 100_000_000, 1_000_000_000] {
        for rtt_ms in [2u64, 20, 100, 300] {
            for bytes in [10_000u64, 100_000, 1_000_000, 10_000_000] {
                if rate == 1_000_000 && bytes == 10_000_000 {
                    continue;
                }
                let (w, l) = check_lossless(rate, rtt_ms, bytes, 0.03, LINUX_HI);
                println!(
                    "| {} | {rtt_ms} | {bytes} | {:.3} % | {:+.3} % |",
                    rate / 1_000_000,
                    w * 100.0,
                    l * 100.0
                );
                worst = worst.max(w);
                linux_worst = linux_worst.max(l);
            }
        }
    }
    println!(
        "largest deviation {:.3} % (NewReno), {:+.3} % (Linux CUBIC + HyStart)",
        worst * 100.0,
        linux_worst * 100.0
    );
}

/// Upper bound of the Linux CUBIC + Linux HyStart deviation on the full lossless grid
/// (measured: 0 on 52 of the 60 points, at most +151 %: 1 Gbit/s, 2 ms, 1 MB, where the ACK
/// train ends slow start at 20 segments — the 1.8 ms gaps between a round's ACK bursts are
/// within `hystart_ack_delta` (2 ms), so the train outlasts (delay_min + 1 ms)/2 within a
/// round; `docs/validation.md` §6.1).
const LINUX_HI: f64 = 1.6;

/// TCP's default controller is Linux's CUBIC (`cubic = "linux"`, `tcp_cubic.c`) with
/// Linux HyStart; `cubic = "rfc9438"` gives RFC 9438's (QUIC's). On a lossless 100 Mbit/s,
/// 20 ms path Linux HyStart's ACK train leaves slow start before the first loss, at once
/// (`ssthresh = cwnd`, no conservative phase).
#[test]
fn tcp_reports_the_linux_cubic_flavour_by_default() {
    use crate::cc::CubicFlavor;
    let c = TcpConfig::default();
    assert_eq!(c.cubic, CubicFlavor::Linux);
    let mut n = net(c.clone(), 1, 2_000_000, 100_000_000, 20);
    assert_eq!(n.server().cc().name(), "cubic");
    assert_eq!(n.server().cc().flavor(), Some("linux"));
    assert!(n.run(secs(60)), "finishes");
    let ss = n.server().cc().ssthresh().expect("slow start ended");
    assert_eq!(n.server().stats.congestion_events, 0, "HyStart, not a loss");
    // BDP = 250 kB. The ACK train must outlast (delay_min + 1 ms) / 2 = 10.5 ms within a
    // round (88 segments at 100 Mbit/s): first in the round starting at 160 segments,
    // which has grown by ~88 by then (measured 272 segments), between BDP/2 and 2 BDP.
    assert!((125_000..=500_000).contains(&ss), "ssthresh {ss}");
    let rfc = TcpConfig {
        cubic: CubicFlavor::Rfc9438,
        ..c
    };
    let n = net(rfc, 1, 2_000_000, 100_000_000, 20);
    assert_eq!(n.server().cc().flavor(), Some("rfc9438"));
}

/// The sends of `dir` with payload, in order: (time, seq, retransmission, dropped).
fn data_sends(net: &Net, dir: usize) -> Vec<(SimTime, u64, bool, bool)> {
    net.log
        .iter()
        .filter(|s| s.dir == dir && s.len > 0)
        .map(|s| (s.at, s.seq, s.retransmission, s.dropped))
        .collect()
}

fn net(c: TcpConfig, streams: u64, bytes: u64, rate: u64, rtt_ms: u64) -> Net {
    Net::new(
        c.clone(),
        c,
        streams,
        bytes,
        100,
        rate,
        SimDuration::from_millis(rtt_ms / 2),
    )
}

#[test]
fn sack_recovery_retransmits_only_the_holes() {
    for sack in [true, false] {
        let mut c = cfg(TlsVersion::None);
        c.sack = sack;
        let mut n = net(c, 1, 1_000_000, 20_000_000, 50);
        // Drop three response segments of the third round (data segments 30, 33, 36 of
        // the downlink).
        let mut k = 0u64;
        n.drop = Box::new(move |dir, _, d, _| {
            let crate::packet::Payload::Tcp(s) = &d.payload else {
                return false;
            };
            if dir != DOWN || s.len == 0 || s.retransmission {
                return false;
            }
            k += 1;
            [31, 34, 37].contains(&k)
        });
        assert!(n.run(secs(60)));
        let sends = data_sends(&n, DOWN);
        let mut dropped: Vec<u64> = sends.iter().filter(|s| s.3).map(|s| s.1).collect();
        let mut again: Vec<u64> = sends.iter().filter(|s| s.2).map(|s| s.1).collect();
        dropped.sort_unstable();
        again.sort_unstable();
        assert_eq!(dropped.len(), 3);
        assert_eq!(
            again, dropped,
            "sack = {sack}: only the holes are sent again"
        );
        let st = &n.server().stats;
        assert_eq!(
            st.rto_count, 0,
            "sack = {sack}: recovered without a timeout"
        );
        assert_eq!(st.fast_recoveries, 1, "one recovery episode, one reduction");
        assert_eq!(st.congestion_events, 1);
        if sack {
            assert!(n.client().stats.sack_blocks_sent > 0);
        }
        assert_eq!(n.client().stats.app_bytes_read, 1_000_000);
        assert_eq!(n.client().stats.records_out_of_order, 0);
    }
}

#[test]
fn syn_retransmissions_back_off_from_the_initial_rto() {
    // RFC 6298 §2.1 / §5.5 (`syn_linear_timeouts = 0`): the SYN is repeated after 1 s,
    // then 2 s, 4 s, 8 s, 16 s. Linux 6.x (`tcp_syn_linear_timeouts` = 4, the default):
    // the first four retries 1 s apart, then doubling.
    for (linear, want, backoff) in [
        (0u32, [0u64, 1, 3, 7, 15, 31], 5u32),
        (4, [0, 1, 2, 3, 4, 6], 2),
    ] {
        let mut c = cfg(TlsVersion::Tls13);
        c.syn_linear_timeouts = linear;
        let mut n = net(c, 1, 10_000, 10_000_000, 40);
        n.drop = Box::new(|dir, idx, _, _| dir == UP && idx < 5);
        assert!(n.run(secs(60)));
        let syns: Vec<SimTime> = n
            .log
            .iter()
            .filter(|s| s.dir == UP && s.syn)
            .map(|s| s.at)
            .collect();
        assert_eq!(syns, want.map(secs).to_vec(), "linear {linear}");
        assert_eq!(n.client().stats.syn_retransmissions, 5);
        assert_eq!(n.client().stats.max_backoff, backoff);
    }
}

#[test]
fn data_rto_doubles_and_respects_the_minimum() {
    for (rto_min_ms, first_ms) in [(1000u64, Some(1000u64)), (200, None)] {
        // The RFC preset: no tail loss probe before the first timeout, Karn's rule only.
        let mut c = preset(RFC6675);
        c.rto_min = SimDuration::from_millis(rto_min_ms);
        // RFC 6298 §2.4's rule (the minimum bounds the whole RTO).
        c.rto_formula = crate::config::tcp::RtoFormula::Rfc6298;
        let mut n = net(c, 1, 500, 10_000_000, 100);
        // The one response segment is lost three times.
        let mut k = 0;
        n.drop = Box::new(move |dir, _, d, _| {
            let crate::packet::Payload::Tcp(s) = &d.payload else {
                return false;
            };
            if dir == DOWN && s.len > 0 {
                k += 1;
                return k <= 3;
            }
            false
        });
        assert!(n.run(secs(60)));
        let sends = data_sends(&n, DOWN);
        assert_eq!(sends.len(), 4, "{sends:?}");
        let gaps: Vec<u64> = sends
            .windows(2)
            .map(|w| w[1].0.saturating_since(w[0].0).as_nanos())
            .collect();
        // §5.5: each backoff doubles the timer.
        assert_eq!(gaps[1], 2 * gaps[0]);
        assert_eq!(gaps[2], 2 * gaps[1]);
        // §2.4 (rto_min), §2.3: SRTT + 4 RTTVAR after the handshake sample is below it.
        assert!(gaps[0] >= rto_min_ms * 1_000_000);
        if let Some(f) = first_ms {
            assert_eq!(gaps[0], f * 1_000_000);
        }
        assert_eq!(n.server().stats.rto_count, 3);
        assert_eq!(n.server().stats.max_backoff, 3);
        // Karn (RFC 6298 §3, §5.7): the ACK of a retransmitted segment gives no RTT
        // sample, so the backed-off RTO stays until one does.
        assert_eq!(n.server().backoff(), 3);
    }
    // The Linux preset with timestamps (RFC 7323 §4, Linux tcp_ack_update_rtt): the ACK
    // of the retransmission is a valid RTT sample and resets the backoff; without
    // timestamps Karn's rule keeps it. The first retransmission is the tail loss probe.
    for (ts, backoff) in [(true, 0u32), (false, 2)] {
        let mut c = preset(LINUX);
        c.timestamps = ts;
        let mut n = net(c, 1, 500, 10_000_000, 100);
        let mut k = 0;
        n.drop = Box::new(move |dir, _, d, _| {
            let crate::packet::Payload::Tcp(s) = &d.payload else {
                return false;
            };
            if dir == DOWN && s.len > 0 {
                k += 1;
                return k <= 3;
            }
            false
        });
        assert!(n.run(secs(60)));
        assert_eq!(n.server().stats.tlp_probes, 1);
        assert_eq!(n.server().stats.rto_count, 2);
        assert_eq!(n.server().backoff(), backoff, "timestamps {ts}");
    }
}

#[test]
fn delayed_ack_waits_for_the_timer_or_a_second_segment() {
    let rate = 10_000_000;
    for delack_ms in [40u64, 200] {
        let mut c = cfg(TlsVersion::None);
        c.delayed_ack = SimDuration::from_millis(delack_ms);
        // The RFC pair (RFC 1122's 200 ms delayed ACK with RFC 6298's 1 s minimum RTO):
        // with a 200 ms minimum RTO the sender would time out before the 200 ms ACK.
        c.rto_min = SimDuration::from_secs(1);
        // One small response segment: the client holds its ACK for the timer.
        let mut n = net(c.clone(), 1, 500, rate, 40);
        assert!(n.run(secs(60)));
        let read = n.ep[0].workload().completed_at().unwrap();
        let acked = n.ep[1].workload().completed_at().unwrap();
        let want = read
            + SimDuration::from_millis(delack_ms)
            + ser(wire(0), rate)
            + SimDuration::from_millis(20);
        assert_eq!(acked, want);
        assert_eq!(n.client().stats.delayed_ack_timeouts, 1);
    }
    // A long transfer: one ACK per two full segments (RFC 5681 §4.2).
    let mut n = net(cfg(TlsVersion::None), 1, 1_000_000, rate, 40);
    assert!(n.run(secs(60)));
    let segs = data_sends(&n, DOWN).len() as u64;
    let acks = n.client().stats.pure_acks_sent;
    assert!(
        acks.abs_diff(segs / 2) <= 3,
        "{acks} ACKs for {segs} segments"
    );
    // ACK every segment when asked.
    let mut c = cfg(TlsVersion::None);
    c.ack_every = 1;
    let mut n = net(c, 1, 1_000_000, rate, 40);
    assert!(n.run(secs(60)));
    let segs = data_sends(&n, DOWN).len() as u64;
    assert!(n.client().stats.pure_acks_sent.abs_diff(segs) <= 3);
}

#[test]
fn out_of_order_segments_are_acknowledged_at_once_with_sack() {
    let mut n = net(cfg(TlsVersion::None), 1, 200_000, 10_000_000, 40);
    let mut k = 0u64;
    n.drop = Box::new(move |dir, _, d, _| {
        let crate::packet::Payload::Tcp(s) = &d.payload else {
            return false;
        };
        if dir == DOWN && s.len > 0 && !s.retransmission {
            k += 1;
            return k == 5;
        }
        false
    });
    assert!(n.run(secs(60)));
    // Segments 6.. arrive above a hole: each is acknowledged at once with a SACK block
    // (RFC 5681 §4.2, RFC 2018 §4), so the sender sees three duplicate ACKs within one
    // round and retransmits without a timeout.
    assert!(n.client().stats.sack_blocks_sent >= 3);
    assert_eq!(n.server().stats.rto_count, 0);
    assert_eq!(n.server().stats.segments_retransmitted, 1);
}

#[test]
fn header_bytes_are_counted_on_the_wire() {
    let mut n = net(cfg(TlsVersion::None), 1, 100_000, 10_000_000, 40);
    assert!(n.run(secs(60)));
    let st = &n.server().stats;
    let sent: Vec<_> = n.log.iter().filter(|s| s.dir == DOWN).collect();
    assert_eq!(st.segments_sent, sent.len() as u64);
    // SYN-ACK: 20 + 20 + 20 option bytes; every other segment 20 + 20 + 12 (timestamps,
    // no SACK on a lossless path).
    assert_eq!(st.header_bytes_sent, 60 + 52 * (sent.len() as u64 - 1));
    let payload: u64 = sent.iter().map(|s| s.len).sum();
    let datagrams: u64 = sent.iter().map(|s| s.size).sum();
    assert_eq!(st.bytes_sent, datagrams);
    assert_eq!(
        datagrams,
        payload + st.header_bytes_sent - 28 * sent.len() as u64
    );
    // The response on the stream: 100 kB in 7 frames of 9-byte headers.
    assert_eq!(payload, 100_000 + 7 * 9);
}

#[test]
fn a_lost_segment_stalls_every_stream_behind_it() {
    // Three streams interleaved frame by frame; one lost segment early in the response
    // holds back all three (head-of-line blocking on the one byte stream).
    let mut c = cfg(TlsVersion::None);
    c.frame_size = 16_384;
    let mut n = net(c, 3, 150_000, 10_000_000, 100);
    let mut k = 0u64;
    let mut lost_at = None;
    n.drop = Box::new(move |dir, _, d, now| {
        let crate::packet::Payload::Tcp(s) = &d.payload else {
            return false;
        };
        if dir == DOWN && s.len > 0 && !s.retransmission {
            k += 1;
            if k == 2 {
                lost_at.get_or_insert(now);
                return true;
            }
        }
        false
    });
    assert!(n.run(secs(60)));
    let times: Vec<SimTime> = n.client().read_complete_times().values().copied().collect();
    assert_eq!(times.len(), 3);
    let resent = data_sends(&n, DOWN)
        .into_iter()
        .find(|s| s.2)
        .expect("one retransmission")
        .0;
    for t in times {
        assert!(
            t > resent,
            "every stream completes after the retransmission"
        );
    }
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// xorshift64*, seeded by proptest (test-only randomness).
    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed | 1;
        move || {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Every byte of every stream is delivered exactly once and in order, under
        /// random loss in both directions and reordering, with and without SACK, for
        /// each TLS mode.
        #[test]
        fn every_byte_once_in_order(
            seed in any::<u64>(),
            loss_permille in 0u64..120,
            jitter_ms in 0u64..30,
            streams in 1u64..4,
            bytes in 1u64..400_000,
            sack in any::<bool>(),
            tls in 0u8..3,
        ) {
            let c = TcpConfig {
                sack,
                tls: [TlsVersion::None, TlsVersion::Tls12, TlsVersion::Tls13][tls as usize],
                ..TcpConfig::default()
            };
            let mut n = net(c, streams, bytes, 20_000_000, 40);
            let mut r = rng(seed);
            n.drop = Box::new(move |_, _, _, _| r() % 1000 < loss_permille);
            let mut r2 = rng(seed ^ 0x9e37_79b9_7f4a_7c15);
            n.extra = Box::new(move |_, _| {
                if jitter_ms == 0 {
                    SimDuration::ZERO
                } else {
                    SimDuration(r2() % (jitter_ms * 1_000_000))
                }
            });
            prop_assert!(n.run(secs(3600)), "completes");
            let cl = n.client();
            prop_assert_eq!(cl.stats.app_bytes_read, bytes);
            prop_assert_eq!(cl.stats.records_out_of_order, 0);
            prop_assert_eq!(n.server().stats.records_out_of_order, 0);
            let app = n.ep[0].workload();
            for k in 0..streams {
                let id = crate::tcp::TcpConnection::stream_id_of(crate::transport::stream::Side::Client, k);
                let st = cl.stream_read_state(id).expect("stream read");
                prop_assert_eq!(st.read, app.response_size(k));
            }
            // Everything the server wrote was delivered, nothing beyond.
            prop_assert_eq!(cl.delivered_end(), n.server().snd_una());
            prop_assert_eq!(cl.rcv_nxt(), n.server().snd_nxt());
        }
    }
}

#[test]
fn the_sender_respects_the_receive_window() {
    // A 64 KiB window on a 100 Mb/s, 100 ms path: the window, not the link or cwnd,
    // limits the rate to about window / RTT (RFC 9293 §3.8.6).
    let mut c = cfg(TlsVersion::None);
    c.window_scale = false;
    c.recv_window = 65_535;
    let mut n = net(c, 1, 2_000_000, 100_000_000, 100);
    assert!(n.run(secs(60)));
    let cl = n.client();
    assert_eq!(cl.stats.beyond_window_bytes, 0);
    let t = n.ep[0]
        .workload()
        .completed_at()
        .unwrap()
        .saturating_since(cl.first_byte_at().unwrap())
        .as_secs_f64();
    let rate = n.server().snd_una() as f64 / t;
    let bound = 65_535.0 / 0.1;
    assert!(
        rate <= bound * 1.01 && rate >= bound * 0.9,
        "{rate} B/s against window / RTT = {bound} B/s"
    );
    assert!(n.server().stats.rwnd_blocked > SimDuration::ZERO);
}

#[test]
fn pacing_spreads_the_segments() {
    let distinct = |pacing: bool| {
        let mut c = TcpConfig::default();
        c.cc.pacing = pacing;
        let mut n = net(c, 1, 1_000_000, 50_000_000, 60);
        assert!(n.run(secs(60)));
        assert_eq!(n.client().stats.app_bytes_read, 1_000_000);
        let mut at: Vec<SimTime> = data_sends(&n, DOWN).iter().map(|s| s.0).collect();
        at.dedup();
        at.len()
    };
    // Unpaced, segments leave in clumps at ACK arrivals (2 or more per ACK); paced,
    // the token bucket releases them one at a time.
    let (off, on) = (distinct(false), distinct(true));
    assert!(
        on > off * 3 / 2,
        "distinct send instants: paced {on}, unpaced {off}"
    );
}

#[test]
fn metrics_serialise_flat_with_kind_tcp_and_round_trip() {
    use crate::driver::TransportDriver;
    let mut n = net(TcpConfig::default(), 2, 50_000, 10_000_000, 40);
    assert!(n.run(secs(60)));
    let m = n.ep[0]
        .connection()
        .metrics(n.ep[0].workload().completed_at(), n.now);
    let j = serde_json::to_value(&m).unwrap();
    assert_eq!(j["kind"], "tcp");
    assert_eq!(j["role"], "client");
    assert_eq!(j["tls"], "1.3");
    assert_eq!(j["stream_bytes_read"], 50_000);
    assert_eq!(j["stream_completion_secs"].as_array().unwrap().len(), 2);
    let back: crate::metrics::EndpointMetrics = serde_json::from_value(j).unwrap();
    assert_eq!(back, m);
    assert_eq!(m.transport().unwrap().stream_bytes_read, 50_000);
}

/// NewReno under periodic loss against Mathis et al. (1997): with one loss every `1/p`
/// packets and an ACK per segment, the rate is `MSS / RTT · sqrt(3 / (2p))`. Issue 11's
/// criterion: within 10 % where the formula's window is at least 35 segments
/// (p <= ~1.2e-3). Measured over 60 s after a 10 s warm-up, on a 1 Gb/s path (never
/// link-limited) with a 100 ms RTT.
#[test]
fn newreno_under_periodic_loss_matches_mathis() {
    for p_inv in [1000u64, 2000] {
        let mut c = cfg(TlsVersion::None);
        c.ack_every = 1;
        let mut n = net(c, 1, 200_000_000, 1_000_000_000, 100);
        n.drop = Box::new(move |dir, idx, _, _| dir == DOWN && idx % p_inv == p_inv - 1);
        n.run(secs(10));
        let b1 = n.client().stats.app_bytes_read;
        n.run(secs(70));
        let b2 = n.client().stats.app_bytes_read;
        let rate = (b2 - b1) as f64 / 60.0;
        let p = 1.0 / p_inv as f64;
        let mathis = 1448.0 / 0.1 * libm::sqrt(1.5 / p);
        let ratio = rate / mathis;
        assert!(
            (0.9..=1.1).contains(&ratio),
            "p = 1/{p_inv}: {rate:.0} B/s, Mathis {mathis:.0} B/s, ratio {ratio:.3}"
        );
        assert_eq!(
            n.server().stats.rto_count,
            0,
            "no timeouts under single losses"
        );
    }
}

/// CUBIC under periodic loss against the RFC 9438 §5 response function: the average
/// window in segments is `max((C(3+β)/(4(1−β)))^(1/4) · RTT^(3/4) / p^(3/4),
/// sqrt(α(1+β)/(2(1−β)p)))`, α = 3(1−β)/(1+β) (the Reno-friendly estimate); same path
/// as the NewReno test, fast convergence off (one flow, RFC 9438 §4.7), ACK per segment.
/// p = 1e-3 (Reno-friendly region): within 10 % (measured 1.071). p = 1e-4 (cubic
/// region): the window converges algebraically slowly from above after slow start
/// (`docs/validation.md` §5: QUIC measured 1.086 after 60-140 cycles); this run covers
/// cycles ~4-16 and measured 1.139, so the band is [0.9, 1.2]. Linux's CUBIC (`cubic =
/// "linux"`) sits above the function: 1.216 and 1.135 (band [1.0, 1.3]). Its window is
/// whole segments and its target `origin − ⌊C·(K − t)³⌋`, so the window reaches W_max
/// once `C·(K − t)³ < 1` segment, about 1.4 s before K here; with fast convergence off the
/// plateau then holds with losses that much earlier in the cycle (at p = 1e-3, 10 min
/// runs: mean window 47 segments against RFC 9438's 38, the function's 38.8; with an
/// exact target 44). Heavy: `--ignored`.
#[test]
#[ignore]
fn cubic_under_periodic_loss_matches_the_rfc9438_response_function() {
    use crate::cc::CubicFlavor;
    for (flavor, p_inv, lo, hi) in [
        (CubicFlavor::Rfc9438, 1000u64, 0.9, 1.1),
        (CubicFlavor::Rfc9438, 10_000, 0.9, 1.2),
        (CubicFlavor::Linux, 1000, 1.0, 1.3),
        (CubicFlavor::Linux, 10_000, 1.0, 1.3),
    ] {
        let mut c = cfg(TlsVersion::None);
        c.cubic = flavor;
        c.cc.algorithm = CcAlgorithm::Cubic;
        c.cc.fast_convergence = false;
        c.ack_every = 1;
        let mut n = net(c, 1, 400_000_000, 1_000_000_000, 100);
        n.drop = Box::new(move |dir, idx, _, _| dir == DOWN && idx % p_inv == p_inv - 1);
        n.run(secs(20));
        let b1 = n.client().stats.app_bytes_read;
        n.run(secs(80));
        let b2 = n.client().stats.app_bytes_read;
        let rate = (b2 - b1) as f64 / 60.0;
        let (p, rtt, beta, cc) = (1.0 / p_inv as f64, 0.1, 0.7, 0.4);
        let cubic = libm::pow(cc * (3.0 + beta) / (4.0 * (1.0 - beta)), 0.25)
            * libm::pow(rtt, 0.75)
            / libm::pow(p, 0.75);
        let alpha = 3.0 * (1.0 - beta) / (1.0 + beta);
        let reno = libm::sqrt(alpha * (1.0 + beta) / (2.0 * (1.0 - beta) * p));
        let model = cubic.max(reno) * 1448.0 / rtt;
        let ratio = rate / model;
        println!("{flavor:?} p = 1/{p_inv}: ratio {ratio:.3}");
        assert!(
            (lo..=hi).contains(&ratio),
            "{flavor:?} p = 1/{p_inv}: {rate:.0} B/s, RFC 9438 {model:.0} B/s, ratio {ratio:.3}"
        );
    }
}

// ----- TCP Fast Open (RFC 7413) and TLS 1.3 0-RTT (RFC 8446 §2.3) ------------------------

/// One lossless run of a `bytes` response to a 100-byte request at 1 Gbit/s, 100 ms RTT
/// (serialization ~0.1 % of an RTT) with `c` on both sides (`resumed` on the client):
/// (time to the first response byte, client completion), in seconds. The first byte is
/// delivered with its whole DATA frame (a TLS record is decrypted whole): a response
/// within one frame and the initial window makes it the response's first arrival.
fn handshake_run(c: &TcpConfig, bytes: u64) -> (f64, f64, Net) {
    let mut s = c.clone();
    s.resumed = false;
    let mut net = Net::new(
        c.clone(),
        s,
        1,
        bytes,
        100,
        1_000_000_000,
        SimDuration::from_millis(50),
    );
    assert!(net.run(secs(60)), "finishes");
    let first = net.client().first_byte_at().expect("a response byte");
    let done = net.ep[0].workload().completed_at().expect("completed");
    assert_eq!(net.client().stats.app_bytes_read, bytes);
    assert_eq!(net.server().stats.segments_retransmitted, 0);
    assert_eq!(net.client().stats.segments_retransmitted, 0);
    (first.as_secs_f64(), done.as_secs_f64(), net)
}

/// NOTES-rfc §5's handshake arithmetic on a lossless path, every combination: the first
/// response byte (a 10 kB response) arrives after 2 RTT (no TLS), 4 (TLS 1.2), 3 (TLS
/// 1.3); TCP Fast Open with a cookie saves one RTT (the request, or the ClientHello, rides
/// in the SYN: 1, 3, 2); TLS 1.3 0-RTT saves TLS's round trip (2), both together leave
/// one RTT (1). A 300 kB transfer's completion moves by the same whole RTTs: within 1 %
/// of the full handshake's completion minus the saved RTTs (the rest is the same slow
/// start; 0-RTT's smaller server flight shifts it by a few segment times).
#[test]
fn fast_open_and_early_data_save_the_handshake_round_trips() {
    let rtt = 0.1;
    for (tls, base_rtts) in [
        (TlsVersion::None, 2u32),
        (TlsVersion::Tls12, 4),
        (TlsVersion::Tls13, 3),
    ] {
        let plain = cfg(tls);
        let (first0, _, _) = handshake_run(&plain, 10_000);
        let (_, done0, _) = handshake_run(&plain, 300_000);
        let tls13 = tls == TlsVersion::Tls13;
        for (fast_open, early_data) in [(false, false), (true, false), (false, true), (true, true)]
        {
            if early_data && !tls13 {
                continue; // rejected by validation (RFC 8446 §2.3)
            }
            let c = TcpConfig {
                fast_open,
                early_data,
                resumed: fast_open || early_data,
                ..plain.clone()
            };
            assert!(c.validate().is_ok());
            let saved = u32::from(fast_open) + u32::from(early_data);
            let rtts = f64::from(base_rtts - saved);
            let (first, _, net) = handshake_run(&c, 10_000);
            let (_, done, _) = handshake_run(&c, 300_000);
            let what = format!("{tls:?} fast_open {fast_open} early_data {early_data}");
            // Whole RTTs plus the serialization of the flights (< 1 ms at 1 Gbit/s).
            assert!(
                first >= rtts * rtt && first < rtts * rtt + 0.001,
                "{what}: first byte at {first:.6} s, want {rtts} RTT"
            );
            if saved == 0 {
                assert!((first - first0).abs() < 1e-9, "{what}: unchanged");
            }
            let want = done0 - f64::from(saved) * rtt;
            assert!(
                (done / want - 1.0).abs() < 0.01,
                "{what}: completion {done:.6} s, want {want:.6} s"
            );
            assert_eq!(net.client().resumed_with_early_data(), early_data, "{what}");
            assert_eq!(net.server().resumed_with_early_data(), early_data, "{what}");
            if fast_open {
                // The SYN carried the ClientHello (with TLS) or the request (without).
                let syn = &net.log[0];
                assert!(syn.syn && syn.len > 0, "{what}: {syn:?}");
                let want_len = match (tls, early_data) {
                    (TlsVersion::None, _) => net.client().syn_data(),
                    (_, false) => plain.client_hello_size,
                    (_, true) => net.client().syn_data(),
                };
                assert_eq!(syn.len, want_len, "{what}");
                if tls != TlsVersion::None {
                    assert!(syn.len >= plain.client_hello_size.min(1428));
                }
            } else {
                assert_eq!(net.log[0].len, 0, "{what}: a bare SYN");
            }
        }
    }
}

/// RFC 7413 §4.1.1-4.1.2: without a cookie the SYN requests one (an empty Fast Open
/// option: 24 option bytes instead of 20) and carries no data, the SYN-ACK returns an
/// 8-byte cookie (32 option bytes); the connection takes the full handshake's time and
/// leaves the cookie to the next one. With the cookie the SYN's option is 12 bytes.
#[test]
fn the_first_fast_open_connection_requests_a_cookie() {
    let c = TcpConfig {
        fast_open: true,
        ..cfg(TlsVersion::Tls13)
    };
    let (first, _, net) = handshake_run(&c, 10_000);
    let (first0, _, plain) = handshake_run(&cfg(TlsVersion::Tls13), 10_000);
    assert!((first - first0).abs() < 20e-6, "{first} vs {first0}");
    let (syn, synack) = (&net.log[0], &net.log[1]);
    assert!(syn.syn && synack.syn && synack.dir == DOWN);
    assert_eq!(syn.len, 0);
    // Datagram sizes: IP 20 + TCP 20 + options - 28.
    assert_eq!(syn.size, 20 + 20 + 24 - 28);
    assert_eq!(synack.size, 20 + 20 + 32 - 28);
    assert_eq!(plain.log[0].size, 20 + 20 + 20 - 28);
    assert_eq!(net.client().holds(), (true, false));
    let with_cookie = TcpConfig { resumed: true, ..c };
    let (_, _, n) = handshake_run(&with_cookie, 10_000);
    assert_eq!(
        n.log[0].size,
        20 + 20 + 32 - 28 + 300,
        "cookie + ClientHello"
    );
    assert_eq!(n.log[1].size, 20 + 20 + 20 - 28, "no cookie in the SYN-ACK");
}

/// RFC 7413 §4.2: the SYN carries at most `mss` minus its options (1460 − 32 = 1428 B);
/// the rest of a large request follows the SYN-ACK.
#[test]
fn syn_data_is_bounded_by_the_mss() {
    let c = TcpConfig {
        fast_open: true,
        resumed: true,
        ..cfg(TlsVersion::None)
    };
    let mut net = Net::new(
        c.clone(),
        c,
        1,
        5_000,
        5_000,
        100_000_000,
        SimDuration::from_millis(10),
    );
    assert!(net.run(secs(10)));
    assert_eq!(net.log[0].len, 1428);
    assert_eq!(net.client().syn_data(), 1428);
    assert_eq!(net.client().stats.app_bytes_read, 5_000);
    assert_eq!(net.server().stats.app_bytes_read, 5_000);
    assert_eq!(net.server().stats.records_out_of_order, 0);
}

/// A lost SYN with data: the retransmitted SYN carries none (as Linux), the SYN-ACK
/// acknowledges only the SYN and the client sends the data again at once (RFC 7413
/// §4.2.1); a lost SYN-ACK: the server answers the retransmitted SYN with a SYN-ACK that
/// acknowledges the data it already delivered. Lost server data sent before the
/// handshake completed is retransmitted. Every byte arrives once, in order.
#[test]
fn fast_open_recovers_from_lost_syn_and_syn_ack() {
    for tls in [TlsVersion::None, TlsVersion::Tls13] {
        for (dir, idx) in [(UP, 0u64), (DOWN, 0), (DOWN, 1), (UP, 1)] {
            let c = TcpConfig {
                fast_open: true,
                early_data: tls == TlsVersion::Tls13,
                resumed: true,
                ..cfg(tls)
            };
            let mut net = Net::new(
                c.clone(),
                c,
                2,
                30_000,
                100,
                100_000_000,
                SimDuration::from_millis(10),
            );
            net.drop = Box::new(move |d, i, _, _| d == dir && i == idx);
            assert!(net.run(secs(30)), "{tls:?} drop {dir}/{idx} finishes");
            assert_eq!(net.client().stats.app_bytes_read, 30_000);
            assert_eq!(net.server().stats.app_bytes_read, 200);
            assert_eq!(net.client().stats.records_out_of_order, 0);
            assert_eq!(net.server().stats.records_out_of_order, 0);
            if (dir, idx) == (UP, 0) {
                let resent = net
                    .log
                    .iter()
                    .find(|s| s.syn && s.dir == UP && s.retransmission);
                assert_eq!(resent.map(|s| s.len), Some(0), "a bare SYN the second time");
            }
        }
    }
}

/// RFC 5681 §3.2 (steps 4-6) and RFC 6675 §5: the congestion window is not increased
/// during fast recovery; it stays at ssthresh (plus dupack inflation without SACK) until
/// the cumulative ACK passes the recovery point. A recovery kept open for many round trips
/// (the retransmission of the one lost segment delayed by 6 RTTs, under the 200 ms minimum
/// RTO, while new data is
/// SACKed) must therefore end with the window it started with. The shared controllers end
/// *their* recovery period one round trip after the reduction (RFC 9002 §7.3.2, QUIC's
/// rule), so the TCP connection must not feed them ACKs while its own recovery lasts.
#[test]
fn cwnd_does_not_grow_during_a_long_fast_recovery() {
    use std::cell::Cell;
    use std::rc::Rc;
    for cc in [CcAlgorithm::NewReno, CcAlgorithm::Cubic] {
        for sack in [true, false] {
            let mut c = cfg(TlsVersion::None);
            c.sack = sack;
            c.cc.algorithm = cc.clone();
            // The RFC preset: RACK would find the delayed retransmission lost and end
            // the recovery early (`rack_finds_a_lost_retransmission_without_a_timeout`).
            c.recovery = crate::config::tcp::TcpRecovery::Rfc6675;
            let mut n = net(c, 1, 4_000_000, 20_000_000, 20);
            let retx_idx: Rc<Cell<Option<u64>>> = Rc::new(Cell::new(None));
            let (seen, mark) = (retx_idx.clone(), retx_idx.clone());
            let mut k = 0u64;
            let mut lost_seq: Option<u64> = None;
            n.drop = Box::new(move |dir, idx, d, _| {
                let crate::packet::Payload::Tcp(s) = &d.payload else {
                    return false;
                };
                if dir != DOWN || s.len == 0 {
                    return false;
                }
                if s.retransmission {
                    if Some(s.seq) == lost_seq && mark.get().is_none() {
                        mark.set(Some(idx));
                    }
                    return false;
                }
                k += 1;
                if k == 40 {
                    lost_seq = Some(s.seq);
                    return true;
                }
                false
            });
            n.extra = Box::new(move |dir, idx| {
                if dir == DOWN && seen.get() == Some(idx) {
                    SimDuration::from_millis(120)
                } else {
                    SimDuration::ZERO
                }
            });
            let (mut start, mut max_in, mut rounds) = (None, 0u64, 0u64);
            let mut t = SimTime::ZERO;
            while !n.run(t) && t < secs(30) {
                t += SimDuration::from_micros(500);
                let s = n.server();
                match (s.recovery_point(), start) {
                    (Some(_), None) if s.stats.fast_recoveries == 1 => {
                        start = Some(s.cc().window());
                    }
                    (Some(_), Some(_)) => {
                        max_in = max_in.max(s.cc().window());
                        rounds += 1;
                    }
                    _ => {}
                }
                if start.is_some() && s.recovery_point().is_none() {
                    break;
                }
            }
            let start = start.expect("a fast recovery");
            assert_eq!(n.server().stats.rto_count, 0, "no timeout in the recovery");
            assert!(rounds > 100, "the recovery lasted {rounds} samples");
            assert!(
                max_in <= start,
                "{cc:?} sack = {sack}: cwnd grew from {start} to {max_in} during fast recovery"
            );
        }
    }
}

/// `(time, bytes delivered to the client, client's advertised window)` every 10 ms of a
/// 24 MB download over a 100 Mb/s, 100 ms path with a 64 KiB initial receive window.
fn receive_window_run(autotune: bool) -> Vec<(SimTime, u64, u64)> {
    let mut c = cfg(TlsVersion::None);
    c.recv_window = 65_536;
    c.recv_window_autotune = autotune;
    let mut n = net(c, 1, 24_000_000, 100_000_000, 100);
    let mut samples = Vec::new();
    let mut t = SimTime::ZERO;
    loop {
        t += SimDuration::from_millis(10);
        let done = n.run(t);
        let cl = n.client();
        samples.push((t, cl.delivered_end(), cl.recv_window()));
        assert_eq!(cl.stats.beyond_window_bytes, 0);
        if done {
            return samples;
        }
        assert!(t < secs(120), "not done in 120 s");
    }
}

/// Delivery rate (B/s) over the last second before completion.
fn final_rate(s: &[(SimTime, u64, u64)]) -> f64 {
    let (t_end, b_end, _) = *s.last().unwrap();
    let (t0, b0, _) = *s
        .iter()
        .rev()
        .find(|x| t_end.saturating_since(x.0) >= SimDuration::from_secs(1))
        .unwrap();
    (b_end - b0) as f64 / t_end.saturating_since(t0).as_secs_f64()
}

#[test]
fn a_fixed_receive_window_caps_the_rate_and_autotuning_reaches_the_link() {
    // Fixed: the window limits the rate to window / RTT (RFC 9293 §3.8.6).
    let fixed = receive_window_run(false);
    assert!(fixed.iter().all(|x| x.2 == 65_536));
    let bound = 65_536.0 / 0.1;
    let r = final_rate(&fixed);
    assert!(
        r <= bound * 1.01 && r >= bound * 0.9,
        "fixed: {r} B/s against {bound}"
    );

    // Auto-tuned (Linux dynamic right-sizing): the window grows to at least the BDP
    // (100 Mb/s x 100 ms = 1.25 MB), never shrinks (RFC 9293 §3.8.6), stays within
    // recv_window_max, and the transfer reaches the link rate (payload share of a
    // 1448-byte segment's wire bytes).
    let auto = receive_window_run(true);
    assert!(
        auto.windows(2).all(|w| w[1].2 >= w[0].2),
        "the window shrank"
    );
    let last = auto.last().unwrap().2;
    assert!(
        (1_250_000..=6_291_456).contains(&last),
        "final window {last}"
    );
    let link = 100e6 / 8.0 * 1448.0 / (wire(1448) + crate::wire::tcp::LINK_DEFAULT_OVERHEAD) as f64;
    let r = final_rate(&auto);
    eprintln!("auto: final window {last}, rate {r} B/s, link {link} B/s");
    assert!(
        r >= 0.9 * link && r <= 1.01 * link,
        "auto: {r} B/s against link {link}"
    );
}

#[test]
fn send_records_are_bounded_by_what_is_in_flight() {
    // A 20 MB download cut into many HTTP/2-style records: once acknowledged, a record
    // is never needed again (no segment starts below snd_una), so the sender keeps only
    // those of the unacknowledged window; before, every record of the transfer stayed.
    let c = cfg(TlsVersion::None);
    let mut n = net(c, 4, 20_000_000, 100_000_000, 20);
    assert!(n.run(secs(60)));
    let s = n.server();
    assert_eq!(s.snd_una(), s.snd_nxt());
    assert!(
        s.send_records_kept() <= 4,
        "{} records kept after the whole transfer was acknowledged",
        s.send_records_kept()
    );
}

// ----- Linux loss recovery (issue 25; `docs/tcp.md`, "Loss recovery") ----------------------

fn preset(recovery: crate::config::tcp::TcpRecovery) -> TcpConfig {
    let mut c = cfg(TlsVersion::None);
    c.recovery = recovery;
    c
}

const LINUX: crate::config::tcp::TcpRecovery = crate::config::tcp::TcpRecovery::Linux;
const RFC6675: crate::config::tcp::TcpRecovery = crate::config::tcp::TcpRecovery::Rfc6675;

/// Drops the downlink's original data segments whose 1-based index is in `orig` and the
/// retransmissions whose 1-based index (over all retransmissions) is in `rexmit`.
fn drop_data(orig: &'static [u64], rexmit: &'static [u64]) -> harness::DropFnPub {
    let (mut k, mut r) = (0u64, 0u64);
    Box::new(move |dir, _, d, _| {
        let crate::packet::Payload::Tcp(s) = &d.payload else {
            return false;
        };
        if dir != DOWN || s.len == 0 {
            return false;
        }
        if s.retransmission {
            r += 1;
            rexmit.contains(&r)
        } else {
            k += 1;
            orig.contains(&k)
        }
    })
}

#[test]
fn rack_finds_a_lost_retransmission_without_a_timeout() {
    // RFC 8985 §6.2: a retransmission is lost like any segment once a segment sent after
    // it is delivered and RACK.rtt + reo_wnd has passed. RFC 6675 alone waits for the RTO.
    for (recovery, rtos) in [(LINUX, 0), (RFC6675, 1)] {
        let mut n = net(preset(recovery), 1, 1_000_000, 20_000_000, 50);
        n.drop = drop_data(&[40], &[1]);
        assert!(n.run(secs(60)));
        let st = &n.server().stats;
        assert_eq!(st.rto_count, rtos, "{recovery:?}");
        if recovery == LINUX {
            assert_eq!(st.lost_retransmissions, 1);
            let sends = data_sends(&n, DOWN);
            let lost_seq = sends.iter().find(|s| s.3).unwrap().1;
            assert_eq!(sends.iter().filter(|s| s.1 == lost_seq).count(), 3);
        }
        assert_eq!(n.client().stats.app_bytes_read, 1_000_000);
    }
}

#[test]
fn pipe_matches_the_scoreboard_under_heavy_random_loss() {
    // The debug check after every ACK (`debug_check_pipe`) and at every RTO, under 20 %
    // loss and delay spikes (spurious timeouts, undone): a probe that sends again a segment
    // whose retransmission is still in flight must not count it twice (it once did, and the
    // pipe leaked until an RTO found it non-zero: Linux preset, seed 167).
    for recovery in [LINUX, RFC6675] {
        for seed in 1..=600u64 {
            let bytes = [20_000, 60_000, 200_000][seed as usize % 3];
            let mut n = net(preset(recovery), 1, bytes, 10_000_000, 60);
            let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let mut y = x.rotate_left(17) | 1;
            n.drop = Box::new(move |_, _, _, _| {
                // xorshift64: 20 % of packets lost in each direction.
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % 5 == 0
            });
            n.extra = Box::new(move |_, _| {
                y ^= y << 13;
                y ^= y >> 7;
                y ^= y << 17;
                SimDuration::from_millis(if y % 10 == 0 { 200 + y % 800 } else { 0 })
            });
            assert!(n.run(secs(3600)), "{recovery:?} seed {seed}");
            assert_eq!(n.client().stats.app_bytes_read, bytes);
        }
    }
}

#[test]
fn a_tail_loss_probe_repairs_a_tail_loss_before_the_rto() {
    // RFC 8985 §7: the last three segments of the response are lost; the probe (2·SRTT
    // after the last ACK) retransmits the last one, its SACK lets RACK find the other two:
    // no timeout. RFC 6675 alone waits for the RTO.
    let mut done = Vec::new();
    for recovery in [LINUX, RFC6675] {
        let bytes = 300_000u64;
        let total = bytes.div_ceil(1448) + 1;
        let mut n = net(preset(recovery), 1, bytes, 20_000_000, 50);
        let tail: &'static [u64] = Box::leak(vec![total - 2, total - 1, total].into_boxed_slice());
        n.drop = drop_data(tail, &[]);
        assert!(n.run(secs(60)));
        let st = &n.server().stats;
        if recovery == LINUX {
            assert_eq!(st.tlp_probes, 1);
            assert_eq!(st.rto_count, 0);
        } else {
            assert_eq!(st.tlp_probes, 0);
            assert_eq!(st.rto_count, 1);
        }
        assert_eq!(n.client().stats.app_bytes_read, bytes);
        done.push(n.ep[0].workload().completed_at().unwrap());
    }
    assert!(done[0] < done[1], "the probe finishes first: {done:?}");
}

#[test]
fn prr_spreads_the_retransmissions_and_new_data_over_the_recovery() {
    // RFC 6937: with PRR the sender keeps sending through the recovery, about β of what
    // is delivered (NewReno: one segment per two delivered), from the first ACKs on;
    // RFC 6675's pipe rule is silent until pipe falls below ssthresh (half a window).
    let mut first_new = Vec::new();
    for recovery in [LINUX, RFC6675] {
        let mut n = net(preset(recovery), 1, 4_000_000, 20_000_000, 40);
        n.drop = drop_data(&[300], &[]);
        let mut entered = None;
        let mut t = SimTime::ZERO;
        while !n.run(t) && t < secs(30) {
            t += SimDuration::from_micros(200);
            let s = n.server();
            if entered.is_none() && s.stats.fast_recoveries == 1 {
                entered = Some((t, s.snd_nxt()));
            }
            if entered.is_some() && s.recovery_point().is_none() {
                break;
            }
        }
        let (at, nxt) = entered.expect("a recovery");
        let after: Vec<_> = data_sends(&n, DOWN)
            .into_iter()
            .filter(|s| s.0 >= at && !s.2 && s.1 >= nxt)
            .collect();
        let first = after.first().expect("new data during the recovery").0;
        first_new.push(first.saturating_since(at));
        assert_eq!(n.server().stats.congestion_events, 1);
    }
    assert!(
        first_new[0].as_nanos() * 4 < first_new[1].as_nanos(),
        "PRR sends new data early in the recovery: {first_new:?}"
    );
}

#[test]
fn a_loss_in_the_next_round_is_a_second_reduction() {
    // RFC 6675 §5 / RFC 5681 §3.2 / RFC 9002 §7.3.2 (Linux: the recovery ends at high_seq,
    // a loss found then starts a new one): a segment sent after the first reduction is
    // lost: two reductions. Several losses of one round make one
    // (`sack_recovery_retransmits_only_the_holes`).
    for recovery in [LINUX, RFC6675] {
        let mut n = net(preset(recovery), 1, 2_000_000, 20_000_000, 40);
        // The 40th segment, then one sent well after the reduction (the window then
        // holds ~40 segments).
        n.drop = drop_data(&[40, 100], &[]);
        assert!(n.run(secs(60)));
        let st = &n.server().stats;
        assert_eq!(st.congestion_events, 2, "{recovery:?}");
        assert_eq!(st.fast_recoveries, 2, "{recovery:?}");
        assert_eq!(st.rto_count, 0, "{recovery:?}");
    }
}

#[test]
fn the_window_is_one_segment_after_a_timeout() {
    // RFC 5681 §3.1: after an RTO, cwnd = LW = 1 SMSS (the old model kept 2 segments).
    for recovery in [LINUX, RFC6675] {
        let mut n = net(preset(recovery), 1, 500, 10_000_000, 100);
        // The response and its first retransmission (the Linux preset's probe).
        n.drop = drop_data(&[1], &[1]);
        let mut t = SimTime::ZERO;
        while n.server().stats.rto_count == 0 {
            t += SimDuration::from_millis(1);
            assert!(!n.run(t), "finished before a timeout");
        }
        assert_eq!(n.server().cc().window(), n.server().smss(), "{recovery:?}");
        assert!(n.run(secs(60)));
    }
}

#[test]
fn frto_undoes_a_spurious_timeout() {
    // From the 60th ACK on the ACK path is 1 s longer (a delay spike that stays): the RTO
    // fires and resends the first segment; the late ACKs then acknowledge data sent
    // before it. With timestamps the echoed timestamp shows it (RFC 3522, Linux
    // tcp_try_undo_loss), without them F-RTO does (RFC 5682 §3.1 step 3.b: data never
    // retransmitted was acknowledged): the window is restored and the segments marked
    // lost are not all sent again.
    for ts in [true, false] {
        let mut c = preset(LINUX);
        c.timestamps = ts;
        let mut n = net(c, 1, 2_000_000, 20_000_000, 40);
        n.extra = Box::new(|dir, idx| {
            if dir == UP && idx >= 60 {
                SimDuration::from_secs(1)
            } else {
                SimDuration::ZERO
            }
        });
        let mut before = 0;
        let mut t = SimTime::ZERO;
        while n.server().stats.rto_count == 0 {
            before = n.server().cc().window();
            t += SimDuration::from_millis(1);
            assert!(!n.run(t));
        }
        let at_rto = n.server().snd_nxt() - n.server().snd_una();
        assert!(n.run(secs(60)));
        let st = &n.server().stats;
        assert!(st.rto_count >= 1);
        // The first timeout is undone (a later one may come while the estimator catches
        // up with the longer path).
        assert!(st.spurious_rtos >= 1, "timestamps {ts}");
        assert!(
            st.bytes_retransmitted < at_rto / 2,
            "timestamps {ts}: {} B sent again of {at_rto} B outstanding at the timeout",
            st.bytes_retransmitted
        );
        assert!(n.server().cc().window() >= before.min(n.server().smss() * 4));
        assert_eq!(n.client().stats.app_bytes_read, 2_000_000);
    }
}

#[test]
fn quick_ack_acknowledges_every_segment_at_the_start() {
    // Linux tcp_incr_quickack: the first data puts the receiver in quick-ACK mode, one
    // ACK per segment for 16 ACKs; then every second full segment (RFC 5681 §4.2).
    let acks = |quick: u64| {
        let mut c = cfg(TlsVersion::None);
        c.quickack = quick;
        let mut n = net(c, 1, 40 * 1448, 20_000_000, 40);
        assert!(n.run(secs(60)));
        n.log
            .iter()
            .filter(|s| s.dir == UP && s.len == 0 && !s.syn)
            .count()
    };
    let (on, off) = (acks(16), acks(0));
    assert!(on >= off + 7, "quick ACKs {on}, delayed {off}");
}

#[test]
fn duplicates_are_reported_as_dsack() {
    // RFC 2883 §4: a duplicate segment is reported in the first SACK block. A spurious
    // retransmission (the original delayed past the RTO) is DSACKed.
    let mut n = net(preset(LINUX), 1, 2_000_000, 20_000_000, 40);
    n.extra = Box::new(|dir, idx| {
        if dir == DOWN && idx == 20 {
            SimDuration::from_millis(100)
        } else {
            SimDuration::ZERO
        }
    });
    assert!(n.run(secs(60)));
    assert!(n.server().stats.dsacks_received >= 1);
    assert!(n.client().stats.duplicate_bytes > 0);
}

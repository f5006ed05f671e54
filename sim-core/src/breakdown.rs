//! "Where the time went": a data sender's connection time split into exclusive parts.
//!
//! The sender classifies its own state at every send opportunity — after each input it
//! handled, when [`crate::endpoint::Endpoint::poll_transmit`] finds nothing more to send
//! now — and the time until the next send opportunity goes to that part. The parts
//! therefore cover the connection without gaps or overlap, from the sender's connection
//! start to its completion (the last response byte acknowledged, the sender's
//! `completion_secs`), and sum to that completion time exactly (integer nanoseconds).
//!
//! QUIC's rules, first match wins (`quic/connection/output.rs`):
//! 1. **handshake**: the handshake is not complete at the sender (RFC 9001 §4.1.1; a
//!    server completes it when the client's Finished arrives, about one RTT after its
//!    start; 0.5-RTT data sent before counts here), or the sender has data but is at the
//!    anti-amplification limit (address validation, RFC 9000 §8.1).
//! 2. **loss recovery**: the congestion controller is in a recovery period (RFC 9002
//!    §7.3.2: from a congestion event until a packet sent after it is acknowledged), or a
//!    PTO fired and no acknowledgement reset the count yet (RFC 9002 §6.2), or data
//!    declared lost waits for retransmission.
//! 3. **idle**: no stream data waits to be sent and nothing is in flight (the application
//!    has nothing queued). With nothing waiting but bytes in flight (the tail of a
//!    transfer: the last flight on its way) the time goes to rule 5 or 6.
//! 4. **flow control**: stream data waits, but none may be sent for lack of stream or
//!    connection credit (RFC 9000 §4.1).
//! 5. **slow start**: stream data waits with credit (or the last flight is in flight), and
//!    the controller is in slow start (RFC 9002 §7.3.1): the sender sends as fast as the
//!    growing window allows.
//! 6. **congestion window**: the same in congestion avoidance (RFC 9002 §7.3.3): the rate
//!    is the window's (the sender is window-limited between acknowledgements, or paced
//!    within the window).
//!
//! TCP's rules (`tcp/connection/time_split.rs`), the same parts in the same order:
//! 1. **handshake**: not yet connected: the three-way handshake (RFC 9293 §3.5) and the
//!    TLS rounds the model charges on the byte stream (TLS 1.3: 1 round trip, TLS 1.2: 2;
//!    a server is connected when the client's Finished arrives).
//! 2. **loss recovery**: fast recovery (RFC 6675 §5, NewReno RFC 6582 §3.2) or the
//!    recovery after an RTO until the recovery point is acknowledged (RFC 6298 §5.4-5.7),
//!    an RTO backoff not yet reset by a new RTT sample, or segments marked lost waiting
//!    for retransmission.
//! 3. **idle**: no byte waits to be sent and `pipe` is 0.
//! 4. **flow control**: bytes wait but the peer's receive window has no room for them
//!    (RFC 9293 §3.8.6; the sender waits rather than send less than half a segment, its
//!    silly-window avoidance, §3.8.6.2.1).
//! 5. / 6. **slow start** / **congestion window**: otherwise, by `cwnd < ssthresh`
//!    (RFC 5681 §3.1).
//!
//! SCTP's rules (`sctp/association/time_split.rs`):
//! 1. **handshake**: before the association is established (RFC 9260 §5.1: INIT,
//!    INIT-ACK, COOKIE-ECHO with DATA bundled, COOKIE-ACK). A server's association, and
//!    its split, start when the INIT arrives.
//! 2. **loss recovery**: Fast Recovery (RFC 9260 §7.2.4; a shared controller's recovery
//!    period), a T3-rtx expiry not yet followed by a SACK of new data (§6.3.3), or chunks
//!    marked for retransmission waiting.
//! 3. **idle**: no message waits and nothing is in flight.
//! 4. **flow control**: the next chunk does not fit the peer's rwnd (a_rwnd less the
//!    bytes outstanding, §6.1 A, §6.2.1) while data is outstanding.
//! 5. / 6. **slow start** / **congestion window**: otherwise, by `cwnd <= ssthresh`
//!    (§7.2.1) or congestion avoidance (§7.2.2).
//!
//! Availability: the bulk workload over QUIC, TCP and SCTP (and the flat QUIC flow), and
//! the web_page and video workloads over all three (one connection, the split frozen at
//! the workload's completion). A reconnecting workload (`reconnects`, and web_page /
//! video with `reconnections`) reports `None`: its time spans several connections and the
//! gaps between them (think time, the wait for a new address), which no single sender's
//! state covers; CBR flows have no transport sender.
//!
//! It is an accessor, not an output: computing it changes neither the run, its digest
//! nor its JSON ([`crate::sim::Simulation::breakdown`], [`crate::runner::run_with_breakdown`]).

use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

/// One part of the time split; see the [module documentation](self) for the rules.
///
/// The explicit discriminants are the parts' **frozen slots** ([`TimePart::index`]: the
/// index of the part in [`TimeBreakdown::parts_ns`], which serialises as an array, and in
/// [`TimePart::ALL`]). Never change or reuse one; a new part takes the next slot
/// (`breakdown::tests::time_part_slots_are_pinned`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum TimePart {
    /// Before the handshake completed at the sender, or at the anti-amplification limit.
    Handshake = 0,
    /// Data waiting, with credit, in slow start.
    SlowStart = 1,
    /// Data waiting without stream or connection credit.
    FlowControl = 2,
    /// Data waiting, with credit, in congestion avoidance (window-limited).
    Cwnd = 3,
    /// Recovery period, PTO outstanding, or lost data waiting for retransmission.
    LossRecovery = 4,
    /// No data waiting to be sent.
    Idle = 5,
}

impl TimePart {
    /// The part's frozen slot in [`TimeBreakdown::parts_ns`] and [`TimePart::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The part of a sender that is limited only by its congestion window: slow start
    /// while its controller is in slow start (rule 5), the window otherwise (rule 6).
    /// Every transport's classifier ends in it.
    pub fn window_phase(slow_start: bool) -> TimePart {
        if slow_start {
            TimePart::SlowStart
        } else {
            TimePart::Cwnd
        }
    }

    /// Every part, in display order (`ALL[p.index()] == p`).
    pub const ALL: [TimePart; 6] = [
        TimePart::Handshake,
        TimePart::SlowStart,
        TimePart::FlowControl,
        TimePart::Cwnd,
        TimePart::LossRecovery,
        TimePart::Idle,
    ];

    /// The part's name as the outputs spell it (`handshake`, `slow_start`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            TimePart::Handshake => "handshake",
            TimePart::SlowStart => "slow_start",
            TimePart::FlowControl => "flow_control",
            TimePart::Cwnd => "cwnd",
            TimePart::LossRecovery => "loss_recovery",
            TimePart::Idle => "idle",
        }
    }

    /// A short human label (`blocked by flow control`, ...).
    pub fn label(self) -> &'static str {
        match self {
            TimePart::Handshake => "handshake",
            TimePart::SlowStart => "slow start",
            TimePart::FlowControl => "blocked by flow control",
            TimePart::Cwnd => "blocked by cwnd",
            TimePart::LossRecovery => "loss recovery",
            TimePart::Idle => "idle / app-limited",
        }
    }
}

/// A connection's time split into the [`TimePart`]s; the parts sum to
/// [`TimeBreakdown::total`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeBreakdown {
    /// Nanoseconds per part, indexed by [`TimePart::index`] (like [`TimePart::ALL`]).
    pub parts_ns: [u64; 6],
}

impl TimeBreakdown {
    /// The time spent in `part`.
    pub fn get(&self, part: TimePart) -> SimDuration {
        SimDuration::from_nanos(self.parts_ns[part.index()])
    }

    /// The sum of the parts: the time the breakdown covers.
    pub fn total(&self) -> SimDuration {
        SimDuration::from_nanos(self.parts_ns.iter().fold(0u64, |a, &d| a.saturating_add(d)))
    }

    /// `(part, seconds)` for every part, in display order.
    pub fn secs(&self) -> Vec<(TimePart, f64)> {
        TimePart::ALL
            .iter()
            .map(|&p| (p, self.get(p).as_secs_f64()))
            .collect()
    }

    fn add(&mut self, part: TimePart, d: SimDuration) {
        let slot = &mut self.parts_ns[part.index()];
        *slot = slot.saturating_add(d.as_nanos());
    }
}

/// The breakdown of one flow: its data sender's connection ([`crate::sim::Simulation::breakdown`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowBreakdown {
    /// The flow's index (as in the run result's `flows`).
    pub flow: u32,
    /// The endpoint's index within the flow's `endpoints` (0 client, 1 server).
    pub endpoint: u32,
    /// The time split; it sums to the sender's completion time (or to the time the run
    /// reached, if the transfer did not complete).
    pub breakdown: TimeBreakdown,
}

/// Accumulates time per [`TimePart`] as a sender's state changes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BreakdownClock {
    acc: TimeBreakdown,
    part: TimePart,
    since: SimTime,
    /// Where the accounting began.
    origin: SimTime,
    /// Closed at completion: later changes are not counted.
    frozen: bool,
}

impl BreakdownClock {
    /// A clock in `part` from `now`.
    pub(crate) fn new(now: SimTime, part: TimePart) -> Self {
        BreakdownClock {
            acc: TimeBreakdown::default(),
            part,
            since: now,
            origin: now,
            frozen: false,
        }
    }

    /// Where the accounting began (the `now` given to [`BreakdownClock::new`]).
    pub(crate) fn origin(&self) -> SimTime {
        self.origin
    }

    /// From `now` on the time goes to `part`.
    pub(crate) fn set(&mut self, now: SimTime, part: TimePart) {
        if self.frozen || part == self.part {
            return;
        }
        self.acc.add(self.part, now.saturating_since(self.since));
        self.part = part;
        self.since = now;
    }

    /// Closes the accounting at `now` (the transfer completed): nothing later counts.
    pub(crate) fn freeze(&mut self, now: SimTime) {
        if self.frozen {
            return;
        }
        self.acc.add(self.part, now.saturating_since(self.since));
        self.since = now;
        self.frozen = true;
    }

    /// The breakdown up to `now` (or up to the freeze).
    pub(crate) fn at(&self, now: SimTime) -> TimeBreakdown {
        let mut b = self.acc;
        if !self.frozen {
            b.add(self.part, now.saturating_since(self.since));
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_part_slots_are_pinned() {
        let (pinned, all) = pinned_codes!(TimePart as usize;
            Handshake => 0,
            SlowStart => 1,
            FlowControl => 2,
            Cwnd => 3,
            LossRecovery => 4,
            Idle => 5,
        );
        for p in all {
            assert_eq!(p.index(), pinned(p), "{p:?}: its slot in parts_ns changed");
            assert_eq!(TimePart::ALL[p.index()], p);
        }
        // Dense slots, one per part: `parts_ns` and `ALL` have exactly one per part.
        assert_eq!(TimePart::ALL.len(), all.len());
        assert_eq!(TimeBreakdown::default().parts_ns.len(), all.len());
        let mut slots = all.map(TimePart::index);
        slots.sort_unstable();
        assert_eq!(slots.to_vec(), (0..all.len()).collect::<Vec<_>>());
    }

    #[test]
    fn parts_sum_to_the_covered_time() {
        let t = |ms: u64| SimTime::ZERO.saturating_add(SimDuration::from_millis(ms));
        let mut c = BreakdownClock::new(t(10), TimePart::Handshake);
        c.set(t(30), TimePart::SlowStart);
        c.set(t(30), TimePart::SlowStart);
        c.set(t(50), TimePart::Idle);
        c.set(t(55), TimePart::SlowStart);
        let b = c.at(t(60));
        assert_eq!(b.get(TimePart::Handshake), SimDuration::from_millis(20));
        assert_eq!(b.get(TimePart::SlowStart), SimDuration::from_millis(25));
        assert_eq!(b.get(TimePart::Idle), SimDuration::from_millis(5));
        assert_eq!(b.total(), SimDuration::from_millis(50));
        c.freeze(t(70));
        c.set(t(80), TimePart::Cwnd);
        assert_eq!(c.at(t(100)).total(), SimDuration::from_millis(60));
        assert_eq!(c.at(t(100)).get(TimePart::Cwnd), SimDuration::ZERO);
    }

    /// Runs a one-flow scenario; returns the flow's breakdown, the sender's completion
    /// time (its `completion_secs`) and the whole result.
    fn run_one(toml: &str) -> (FlowBreakdown, f64, crate::RunResult) {
        let sc = crate::scenario::parse_str(toml).unwrap();
        let (res, b) = crate::runner::run_with_breakdown(&sc.base, 1).unwrap();
        assert_eq!(
            res,
            crate::run(&sc.base, 1).unwrap(),
            "the accessor changes the run"
        );
        assert_eq!(b.len(), 1);
        let fb = b[0].clone();
        let t = res.flows[0].endpoints[fb.endpoint as usize]
            .transport()
            .unwrap()
            .completion_secs
            .expect("completed");
        (fb, t, res)
    }

    fn share(b: &TimeBreakdown, p: TimePart) -> f64 {
        b.get(p).as_nanos() as f64 / b.total().as_nanos() as f64
    }

    fn sums_to_completion(fb: &FlowBreakdown, completion_secs: f64) {
        let total = fb.breakdown.total().as_secs_f64();
        assert!(
            (total - completion_secs).abs() < 1e-9,
            "parts sum to {total} s, completion {completion_secs} s: {:?}",
            fb.breakdown.secs()
        );
    }

    /// Paper 001's static allowance (Table 1: 4 KB stream / 8 KB connection windows, no
    /// growth) on a 10 Mbit/s, 100 ms RTT path: the sender waits for credit most of the
    /// time.
    #[test]
    fn a_static_small_window_transfer_is_mostly_blocked_by_flow_control() {
        let (fb, t, _) = run_one(
            r#"
            [topology]
            kind = "two_hosts"
            link = { rate = "10Mbps", delay = "50ms", queue = "unlimited" }
            [[flows]]
            transport = "quic"
            workload = { kind = "bulk", bytes = "200KB", streams = 2 }
            allowance = "static"
            stream_window = 4096
            connection_window = 8192
            "#,
        );
        assert_eq!(fb.endpoint, 1, "the server sends the response");
        sums_to_completion(&fb, t);
        let fc = share(&fb.breakdown, TimePart::FlowControl);
        assert!(fc > 0.8, "flow control {fc}: {:?}", fb.breakdown.secs());
        assert_eq!(fb.breakdown.get(TimePart::LossRecovery), SimDuration::ZERO);
    }

    /// A lossless transfer with large windows and a queue that never overflows: handshake,
    /// then slow start and window-limited sending (the tail, the last flight on its way,
    /// included); no flow-control, recovery or idle time.
    #[test]
    fn a_lossless_large_window_transfer_is_handshake_slow_start_and_cwnd() {
        let (fb, t, res) = run_one(
            r#"
            [topology]
            kind = "two_hosts"
            link = { rate = "20Mbps", delay = "20ms", queue = "unlimited" }
            [[flows]]
            transport = "quic"
            workload = { kind = "bulk", bytes = "4MB", streams = 1 }
            stream_window = 16777216
            connection_window = 16777216
            "#,
        );
        assert_eq!(res.drops.total(), 0);
        sums_to_completion(&fb, t);
        let b = &fb.breakdown;
        assert_eq!(
            b.get(TimePart::FlowControl),
            SimDuration::ZERO,
            "{:?}",
            b.secs()
        );
        assert_eq!(
            b.get(TimePart::LossRecovery),
            SimDuration::ZERO,
            "{:?}",
            b.secs()
        );
        // The handshake: the server completes it when the client's Finished arrives,
        // 1.5 RTT (60 ms) after the flow start plus transmission times.
        let hs = b.get(TimePart::Handshake).as_secs_f64();
        assert!((0.06..0.08).contains(&hs), "handshake {hs}");
        assert!(b.get(TimePart::SlowStart) > SimDuration::ZERO);
        let main = share(b, TimePart::Handshake)
            + share(b, TimePart::SlowStart)
            + share(b, TimePart::Cwnd);
        assert!(
            main > 0.999,
            "handshake + slow start + cwnd {main}: {:?}",
            b.secs()
        );
    }

    /// Random loss: time in recovery periods and retransmissions appears.
    #[test]
    fn a_lossy_transfer_spends_time_in_loss_recovery() {
        let (fb, t, res) = run_one(
            r#"
            [topology]
            kind = "two_hosts"
            link = { rate = "20Mbps", delay = "20ms", loss = "2%" }
            [[flows]]
            transport = "quic"
            workload = { kind = "bulk", bytes = "2MB", streams = 1 }
            "#,
        );
        assert!(res.drops.total() > 0);
        sums_to_completion(&fb, t);
        let lr = share(&fb.breakdown, TimePart::LossRecovery);
        assert!(lr > 0.1, "loss recovery {lr}: {:?}", fb.breakdown.secs());
    }

    /// The other transports' senders: one bulk flow over `transport` with the given link
    /// and extra flow keys; the parts sum to the sender's completion time.
    fn run_transport(transport: &str, link: &str, bytes: &str, extra: &str) -> FlowBreakdown {
        let toml = format!(
            r#"
            [topology]
            kind = "two_hosts"
            link = {link}
            [[flows]]
            transport = "{transport}"
            workload = {{ kind = "bulk", bytes = "{bytes}", streams = 1 }}
            {extra}
            "#
        );
        let (fb, t, _) = run_one(&toml);
        assert_eq!(fb.endpoint, 1, "the server sends the response");
        sums_to_completion(&fb, t);
        fb
    }

    /// A small receive window on a 10 Mbit/s, 100 ms RTT path bounds the sender by the
    /// peer's window, not by cwnd: a TCP client advertising 16 KB (RFC 9293 §3.8.6), an
    /// SCTP receiver with an a_rwnd of 3 chunks (RFC 9260 §6.2.1).
    #[test]
    fn a_small_receive_window_tcp_or_sctp_transfer_is_mostly_blocked_by_flow_control() {
        for (transport, bytes, keys) in [
            ("tcp", "400KB", "[flows.tcp.client]\nrecv_window = \"16KB\""),
            ("sctp", "200KB", "[flows.sctp]\na_rwnd = 4000"),
        ] {
            let fb = run_transport(
                transport,
                r#"{ rate = "10Mbps", delay = "50ms", queue = "unlimited" }"#,
                bytes,
                keys,
            );
            let fc = share(&fb.breakdown, TimePart::FlowControl);
            assert!(
                fc > 0.7,
                "{transport}: flow control {fc}: {:?}",
                fb.breakdown.secs()
            );
            assert_eq!(fb.breakdown.get(TimePart::LossRecovery), SimDuration::ZERO);
        }
    }

    /// Lossless, large windows, an unlimited queue: the TCP and SCTP senders spend their
    /// time in the handshake, slow start and the window; the handshake lasts until the
    /// sender can send data: TCP with TLS 1.3 (3-way handshake + 1 TLS round trip, the
    /// server connected when the client's Finished arrives: 2.5 RTT = 100 ms after the
    /// flow start), SCTP from the INIT's arrival (where the server's association starts)
    /// until the COOKIE-ECHO arrives (1 RTT = 40 ms), plus transmission times.
    #[test]
    fn lossless_large_window_tcp_and_sctp_transfers_are_handshake_slow_start_and_cwnd() {
        for (transport, hs_range) in [("tcp", 0.1..0.12), ("sctp", 0.04..0.06)] {
            let fb = run_transport(
                transport,
                r#"{ rate = "20Mbps", delay = "20ms", queue = "unlimited" }"#,
                "4MB",
                "",
            );
            let b = &fb.breakdown;
            let hs = b.get(TimePart::Handshake).as_secs_f64();
            assert!(hs_range.contains(&hs), "{transport}: handshake {hs}");
            assert!(
                b.get(TimePart::SlowStart) > SimDuration::ZERO,
                "{transport}"
            );
            let main = share(b, TimePart::Handshake)
                + share(b, TimePart::SlowStart)
                + share(b, TimePart::Cwnd);
            assert!(
                main > 0.999,
                "{transport}: handshake + slow start + cwnd {main}: {:?}",
                b.secs()
            );
        }
    }

    /// Random loss: both spend time in fast recovery / retransmission.
    #[test]
    fn lossy_tcp_and_sctp_transfers_spend_time_in_loss_recovery() {
        for transport in ["tcp", "sctp"] {
            let fb = run_transport(
                transport,
                r#"{ rate = "20Mbps", delay = "20ms", loss = "2%" }"#,
                "2MB",
                "",
            );
            let lr = share(&fb.breakdown, TimePart::LossRecovery);
            assert!(
                lr > 0.1,
                "{transport}: loss recovery {lr}: {:?}",
                fb.breakdown.secs()
            );
        }
    }

    /// The web_page and video workloads over every transport: the server's split sums to
    /// its completion time; a video server waits for the player's next request (idle).
    #[test]
    fn web_page_and_video_splits_sum_to_completion_over_every_transport() {
        for transport in ["quic", "tcp", "sctp"] {
            for (workload, idle) in [
                (r#"{ kind = "web_page", preset = "paper003" }"#, false),
                (r#"{ kind = "video", length = "8s" }"#, true),
            ] {
                let toml = format!(
                    r#"
                    [topology]
                    kind = "two_hosts"
                    link = {{ rate = "20Mbps", delay = "20ms" }}
                    [[flows]]
                    transport = "{transport}"
                    workload = {workload}
                    "#
                );
                let (fb, t, _) = run_one(&toml);
                sums_to_completion(&fb, t);
                let b = &fb.breakdown;
                assert!(b.get(TimePart::Handshake) > SimDuration::ZERO);
                if idle {
                    // The player stops asking while its buffer is full.
                    assert!(
                        b.get(TimePart::Idle) > SimDuration::from_secs(1),
                        "{transport} video: {:?}",
                        b.secs()
                    );
                }
            }
        }
    }
}

//! HyStart++ (RFC 9406): leave slow start on a sustained RTT increase, through a
//! Conservative Slow Start (CSS) phase, before the first loss.
//!
//! Rounds are tracked by send time rather than packet number: a round starts with the
//! packet sent most recently at that moment (`window_end`), and ends when a packet sent at
//! or after `window_end` is acknowledged (RFC 9406 §4.2 uses `SND.NXT` / the largest packet
//! number in the same way).
//!
//! Constants (RFC 9406 §4.3): MIN_RTT_THRESH 4 ms, MAX_RTT_THRESH 16 ms,
//! MIN_RTT_DIVISOR 8, N_RTT_SAMPLE 8, CSS_GROWTH_DIVISOR 4, CSS_ROUNDS 5, and
//! L = infinity when paced, 8 otherwise.

use crate::time::{SimDuration, SimTime};

/// RFC 9406 §4.3.
pub const MIN_RTT_THRESH: SimDuration = SimDuration::from_millis(4);
/// RFC 9406 §4.3.
pub const MAX_RTT_THRESH: SimDuration = SimDuration::from_millis(16);
/// RFC 9406 §4.3.
pub const MIN_RTT_DIVISOR: u64 = 8;
/// RFC 9406 §4.3.
pub const N_RTT_SAMPLE: u32 = 8;
/// RFC 9406 §4.3.
pub const CSS_GROWTH_DIVISOR: u64 = 4;
/// RFC 9406 §4.3.
pub const CSS_ROUNDS: u32 = 5;
/// RFC 9406 §4.3: L, the per-ACK growth cap in segments when not paced.
pub const UNPACED_ACK_LIMIT_SEGMENTS: u64 = 8;

/// Where HyStart++ stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Standard slow start, watching the RTT.
    SlowStart,
    /// Conservative slow start (growth divided by CSS_GROWTH_DIVISOR).
    Css,
    /// Done: the controller is in congestion avoidance (or a loss ended slow start).
    Done,
}

/// What an acknowledgement did to the slow-start state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Grow the window by this many bytes.
    Grow(u64),
    /// CSS lasted CSS_ROUNDS rounds: set ssthresh = cwnd and enter congestion avoidance.
    ExitToCongestionAvoidance,
}

/// HyStart++ state for one connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HyStart {
    mss: u64,
    paced: bool,
    phase: Phase,
    window_end: Option<SimTime>,
    last_sent: SimTime,
    last_round_min_rtt: Option<SimDuration>,
    current_round_min_rtt: Option<SimDuration>,
    rtt_sample_count: u32,
    css_baseline_min_rtt: Option<SimDuration>,
    css_rounds: u32,
    /// Number of times CSS was entered (for tests and traces).
    pub css_entries: u32,
}

impl HyStart {
    /// HyStart++ for datagrams of `mss` bytes; `paced` lifts the per-ACK cap L.
    pub fn new(mss: u64, paced: bool) -> Self {
        HyStart {
            mss,
            paced,
            phase: Phase::SlowStart,
            window_end: None,
            last_sent: SimTime::ZERO,
            last_round_min_rtt: None,
            current_round_min_rtt: None,
            rtt_sample_count: 0,
            css_baseline_min_rtt: None,
            css_rounds: 0,
            css_entries: 0,
        }
    }

    /// Current phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// A packet was sent at `now`.
    pub fn on_packet_sent(&mut self, now: SimTime) {
        self.last_sent = now;
        if self.window_end.is_none() && self.phase != Phase::Done {
            self.start_round();
        }
    }

    fn start_round(&mut self) {
        // RFC 9406 §4.2: at the start of each round.
        self.last_round_min_rtt = self.current_round_min_rtt;
        self.current_round_min_rtt = None;
        self.rtt_sample_count = 0;
        self.window_end = Some(self.last_sent);
    }

    /// Loss or persistent congestion ends slow start (RFC 9406 §4.2: a loss in slow start
    /// or CSS is handled by the congestion controller, which then enters congestion
    /// avoidance).
    pub fn on_congestion(&mut self) {
        self.phase = Phase::Done;
    }

    /// Re-enters slow start (after persistent congestion the sender slow-starts again;
    /// RFC 9406 §4.2 applies HyStart++ to slow start only once per connection by default,
    /// so this is only used when the embedding controller asks for it).
    pub fn restart(&mut self) {
        *self = HyStart::new(self.mss, self.paced);
    }

    /// A packet sent at `sent_time` of `bytes` bytes was acknowledged while the controller
    /// is in slow start; `latest_rtt` is the newest RTT sample.
    pub fn on_ack(&mut self, sent_time: SimTime, bytes: u64, latest_rtt: SimDuration) -> Verdict {
        let cap = if self.paced {
            u64::MAX
        } else {
            UNPACED_ACK_LIMIT_SEGMENTS * self.mss
        };
        if self.phase == Phase::Done {
            return Verdict::Grow(bytes.min(cap));
        }
        // Per-round RTT statistics.
        self.current_round_min_rtt = Some(
            self.current_round_min_rtt
                .map_or(latest_rtt, |m| m.min(latest_rtt)),
        );
        self.rtt_sample_count += 1;
        match self.phase {
            Phase::SlowStart => {
                if self.rtt_sample_count >= N_RTT_SAMPLE {
                    if let (Some(cur), Some(last)) =
                        (self.current_round_min_rtt, self.last_round_min_rtt)
                    {
                        let thresh = SimDuration(last.0 / MIN_RTT_DIVISOR)
                            .max(MIN_RTT_THRESH)
                            .min(MAX_RTT_THRESH);
                        if cur >= last + thresh {
                            self.phase = Phase::Css;
                            self.css_entries += 1;
                            self.css_baseline_min_rtt = Some(cur);
                            self.css_rounds = 0;
                        }
                    }
                }
            }
            Phase::Css => {
                if self.rtt_sample_count >= N_RTT_SAMPLE {
                    if let (Some(cur), Some(base)) =
                        (self.current_round_min_rtt, self.css_baseline_min_rtt)
                    {
                        if cur < base {
                            // The RTT increase was spurious: back to slow start.
                            self.phase = Phase::SlowStart;
                            self.css_baseline_min_rtt = None;
                        }
                    }
                }
            }
            Phase::Done => unreachable!(),
        }
        let grow = match self.phase {
            Phase::Css => bytes.min(cap) / CSS_GROWTH_DIVISOR,
            _ => bytes.min(cap),
        };
        // End of round?
        if self.window_end.is_some_and(|end| sent_time >= end) {
            if self.phase == Phase::Css {
                self.css_rounds += 1;
                if self.css_rounds >= CSS_ROUNDS {
                    self.phase = Phase::Done;
                    return Verdict::ExitToCongestionAvoidance;
                }
            }
            self.start_round();
        }
        Verdict::Grow(grow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }

    /// An ack-clocked sender with a constant flight of `n` packets: each acknowledgement
    /// releases one new packet. Drives `rounds` flights with RTT `rtt`; returns the verdicts.
    struct Flow {
        t: u64,
        flight: Vec<u64>,
    }
    impl Flow {
        fn new(h: &mut HyStart, n: u64) -> Self {
            let flight: Vec<u64> = (0..n).collect();
            for &p in &flight {
                h.on_packet_sent(SimTime(p));
            }
            Flow { t: n, flight }
        }
        fn round(&mut self, h: &mut HyStart, rtt: SimDuration) -> Vec<Verdict> {
            let mut next = Vec::new();
            let mut out = Vec::new();
            for &p in &self.flight {
                out.push(h.on_ack(SimTime(p), 1200, rtt));
                h.on_packet_sent(SimTime(self.t));
                next.push(self.t);
                self.t += 1;
            }
            self.flight = next;
            out
        }
    }

    fn round(h: &mut HyStart, f: &mut Flow, rtt: SimDuration) -> Vec<Verdict> {
        f.round(h, rtt)
    }

    #[test]
    fn steady_rtt_stays_in_slow_start_with_full_growth() {
        let mut h = HyStart::new(1200, true);
        let mut t = Flow::new(&mut h, 10);
        for _ in 0..10 {
            let v = round(&mut h, &mut t, ms(50));
            assert!(v.iter().all(|v| *v == Verdict::Grow(1200)));
        }
        assert_eq!(h.phase(), Phase::SlowStart);
    }

    #[test]
    fn rtt_increase_enters_css_then_exits_after_css_rounds() {
        let mut h = HyStart::new(1200, true);
        let mut t = Flow::new(&mut h, 20);
        round(&mut h, &mut t, ms(50));
        round(&mut h, &mut t, ms(50));
        // Threshold: clamp(50/8 = 6.25 ms, 4, 16) => an increase to 56 ms does not trigger.
        round(&mut h, &mut t, ms(56));
        round(&mut h, &mut t, ms(56));
        assert_eq!(h.phase(), Phase::SlowStart);
        // 56 ms is the last round's minimum; 63 >= 56 + 7 triggers CSS once 8 samples of a
        // round are in (rounds end on the acknowledgement of the packet sent last when the
        // round started, so they straddle this helper's flights: allow two flights).
        let mut v = round(&mut h, &mut t, ms(63));
        v.extend(round(&mut h, &mut t, ms(63)));
        assert_eq!(h.phase(), Phase::Css);
        let first_css = v.iter().position(|v| *v == Verdict::Grow(300)).unwrap();
        assert!(first_css >= 7, "{v:?}");
        assert!(v[..first_css].iter().all(|v| *v == Verdict::Grow(1200)));
        assert_eq!(h.css_entries, 1);
        // CSS_ROUNDS rounds of CSS end slow start, exactly once; every ACK in CSS grows by
        // a quarter, and CSS lasts about CSS_ROUNDS flights.
        let mut exits = 0;
        let mut css_acks = v[first_css..].len();
        for _ in 0..8 {
            let v = round(&mut h, &mut t, ms(63));
            css_acks += v.iter().filter(|v| **v == Verdict::Grow(300)).count();
            exits += v
                .iter()
                .filter(|v| **v == Verdict::ExitToCongestionAvoidance)
                .count();
        }
        assert_eq!(exits, 1);
        assert_eq!(h.phase(), Phase::Done);
        let flight = 20;
        assert!(
            css_acks >= (CSS_ROUNDS as usize - 1) * flight
                && css_acks <= (CSS_ROUNDS as usize + 1) * flight,
            "{css_acks}"
        );
    }

    #[test]
    fn css_returns_to_slow_start_when_rtt_falls_back() {
        let mut h = HyStart::new(1200, true);
        let mut t = Flow::new(&mut h, 20);
        round(&mut h, &mut t, ms(20));
        round(&mut h, &mut t, ms(20));
        round(&mut h, &mut t, ms(30));
        round(&mut h, &mut t, ms(30)); // 30 >= 20 + 4: CSS
        assert_eq!(h.phase(), Phase::Css);
        round(&mut h, &mut t, ms(25));
        round(&mut h, &mut t, ms(25)); // a full round below the 30 ms baseline
        assert_eq!(h.phase(), Phase::SlowStart);
    }

    #[test]
    fn unpaced_growth_is_capped_at_l_segments_per_ack() {
        let mut h = HyStart::new(1000, false);
        h.on_packet_sent(SimTime(0));
        assert_eq!(
            h.on_ack(SimTime(0), 20_000, ms(10)),
            Verdict::Grow(8 * 1000)
        );
        let mut p = HyStart::new(1000, true);
        p.on_packet_sent(SimTime(0));
        assert_eq!(p.on_ack(SimTime(0), 20_000, ms(10)), Verdict::Grow(20_000));
    }

    #[test]
    fn fewer_than_n_rtt_samples_never_trigger() {
        let mut h = HyStart::new(1200, true);
        let mut t = Flow::new(&mut h, 6);
        for i in 0..20u64 {
            round(&mut h, &mut t, ms(20 + 10 * i));
        }
        assert_eq!(h.phase(), Phase::SlowStart);
    }
}

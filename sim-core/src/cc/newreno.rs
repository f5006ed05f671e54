//! NewReno exactly as RFC 9002 Appendix B describes it (byte counting).
//!
//! - Slow start (B.5): while `cwnd < ssthresh`, `cwnd += acked_bytes` per acknowledged
//!   packet (the window may overshoot ssthresh by the last packet, as in the RFC).
//! - Congestion avoidance (B.5): `cwnd += mds·acked_bytes / cwnd`. The division is done in
//!   integers and its remainder (in byte² units) is carried to the next acknowledgement,
//!   so the sum of increments over a window of acknowledgements is exact to one byte and
//!   does not drift downwards as truncating each term would.
//! - Congestion event (B.6): once per recovery period, `ssthresh = cwnd/2`
//!   (kLossReductionFactor = 1/2, truncating), `cwnd = max(ssthresh, kMinimumWindow)`,
//!   `recovery_start_time = now`. Packets sent at or before `recovery_start_time` neither
//!   grow the window nor start a new reduction (B.4).
//! - Persistent congestion (B.8, §7.6.2): `cwnd = kMinimumWindow`, recovery period ended;
//!   ssthresh is unchanged, so the sender re-enters slow start.
//! - App-limited packets (§7.8) do not grow the window.
//! - Optional HyStart++ (RFC 9406, [`super::hystart`]) in slow start
//!   ([`NewReno::with_hystart`]): growth per ACK as HyStart++ decides, and when
//!   Conservative Slow Start ends, `ssthresh = cwnd` (RFC 9406 §4.2).

use super::hystart::{HyStart, Verdict};
use super::{minimum_window, CongestionController, RttSnapshot};
use crate::time::SimTime;

/// The name [`NewReno`] reports.
pub const NAME: &str = "newreno";
/// The scenario spelling of NewReno (`cc = "new_reno"`; `"newreno"` is an alias).
pub const SCENARIO_NAME: &str = "new_reno";

/// NewReno's row of [`super::CONTROLLERS`]; with `hystart`, HyStart++ paced as the
/// sender is.
pub const CONTROLLER: super::ControllerDef = super::ControllerDef {
    name: SCENARIO_NAME,
    aliases: &[NAME],
    trace_name: NAME,
    build: |ctx| {
        let mut cc = NewReno::new(ctx.segment_size, ctx.initial_window);
        if ctx.params.hystart {
            cc = cc.with_hystart(ctx.params.pacing);
        }
        Box::new(cc)
    },
    sctp: true,
};

/// RFC 9002 §7.3.2 / Appendix B.2 kLossReductionFactor.
pub const LOSS_REDUCTION_FACTOR: f64 = 0.5;

/// RFC 9002 Appendix B NewReno state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewReno {
    max_datagram_size: u64,
    min_window: u64,
    cwnd: u64,
    /// `None` = infinite.
    ssthresh: Option<u64>,
    /// `None` = no recovery period yet (the RFC's 0).
    recovery_start_time: Option<SimTime>,
    /// Congestion-avoidance remainder, in byte² (numerator of the pending fraction of a
    /// byte, over the window at the time it is applied).
    ca_remainder: u64,
    /// HyStart++ in slow start, if enabled.
    hystart: Option<HyStart>,
    /// A recovery period is under way: no packet sent after its start has been
    /// acknowledged yet (RFC 9002 §7.3.2).
    recovering: bool,
}

impl NewReno {
    /// A controller with `initial_window` bytes of window and datagrams of
    /// `max_datagram_size` bytes (kMinimumWindow = 2·mds).
    pub fn new(max_datagram_size: u64, initial_window: u64) -> Self {
        assert!(max_datagram_size > 0, "max_datagram_size must be positive");
        let min_window = minimum_window(max_datagram_size);
        NewReno {
            max_datagram_size,
            min_window,
            cwnd: initial_window.max(1),
            ssthresh: None,
            recovery_start_time: None,
            ca_remainder: 0,
            hystart: None,
            recovering: false,
        }
    }

    /// The same controller with HyStart++ (RFC 9406) in slow start; `paced` lifts the
    /// per-ACK growth cap L (RFC 9406 §4.3).
    pub fn with_hystart(mut self, paced: bool) -> Self {
        self.hystart = Some(HyStart::new(self.max_datagram_size, paced));
        self
    }

    /// HyStart++ state, if enabled.
    pub fn hystart(&self) -> Option<&HyStart> {
        self.hystart.as_ref()
    }

    /// Start of the current (or last) recovery period, `None` if none yet.
    pub fn recovery_start_time(&self) -> Option<SimTime> {
        self.recovery_start_time
    }

    fn in_slow_start(&self) -> bool {
        self.ssthresh.is_none_or(|s| self.cwnd < s)
    }
}

impl CongestionController for NewReno {
    fn on_packet_sent(&mut self, now: SimTime, _bytes: u64, _bytes_in_flight_after: u64) {
        if let Some(h) = self.hystart.as_mut() {
            h.on_packet_sent(now);
        }
    }

    fn on_packet_acked(
        &mut self,
        _now: SimTime,
        sent_time: SimTime,
        bytes: u64,
        app_limited: bool,
        rtt: &RttSnapshot,
    ) {
        // B.5: no growth for packets sent before the recovery period started...
        if self.in_recovery(sent_time) {
            return;
        }
        // §7.3.2: a packet sent after the recovery start ends the recovery period.
        self.recovering = false;
        // ... nor while application or flow-control limited (§7.8).
        if app_limited {
            return;
        }
        if self.in_slow_start() {
            match self.hystart.as_mut() {
                // Slow start: one byte of window per acknowledged byte.
                None => self.cwnd = self.cwnd.saturating_add(bytes),
                Some(h) => match h.on_ack(sent_time, bytes, rtt.latest_rtt) {
                    Verdict::Grow(b) => self.cwnd = self.cwnd.saturating_add(b),
                    // RFC 9406 §4.2: CSS_ROUNDS rounds of CSS: ssthresh = cwnd.
                    Verdict::ExitToCongestionAvoidance => self.ssthresh = Some(self.cwnd),
                },
            }
        } else {
            // Congestion avoidance: cwnd += mds·bytes/cwnd with the remainder carried.
            let num =
                (self.max_datagram_size as u128) * (bytes as u128) + self.ca_remainder as u128;
            let cwnd = self.cwnd as u128;
            let inc = num / cwnd;
            self.ca_remainder = (num - inc * cwnd) as u64;
            self.cwnd = self.cwnd.saturating_add(inc as u64);
        }
    }

    fn on_congestion_event(
        &mut self,
        now: SimTime,
        newest_lost_sent_time: SimTime,
        _bytes_in_flight: u64,
    ) {
        // B.6: at most one reduction per round trip.
        if self.in_recovery(newest_lost_sent_time) {
            return;
        }
        self.recovery_start_time = Some(now);
        self.recovering = true;
        if let Some(h) = self.hystart.as_mut() {
            h.on_congestion(); // RFC 9406 §4.2: a loss ends slow start
        }
        let ssthresh = self.cwnd / 2; // kLossReductionFactor = 0.5, in integers
        self.ssthresh = Some(ssthresh);
        self.cwnd = ssthresh.max(self.min_window);
        self.ca_remainder = 0;
    }

    fn on_persistent_congestion(&mut self, _now: SimTime) {
        // B.8: collapse to the minimum window; congestion_recovery_start_time = 0.
        self.cwnd = self.min_window;
        self.recovery_start_time = None;
        self.recovering = false;
        self.ca_remainder = 0;
    }

    fn on_retransmission_timeout(&mut self, _now: SimTime, reduce: bool) {
        if reduce {
            // RFC 5681 §3.1 Eq. 4 with the window for FlightSize (Linux
            // `tcp_reno_ssthresh`: max(cwnd / 2, 2 segments)).
            self.ssthresh = Some((self.cwnd / 2).max(self.min_window));
        }
        // RFC 5681 §3.1: the loss window, one segment.
        self.cwnd = self.max_datagram_size;
        self.recovery_start_time = None;
        self.recovering = false;
        self.ca_remainder = 0;
        if let Some(h) = self.hystart.as_mut() {
            h.on_congestion();
        }
    }

    fn undo_reduction(&mut self, _now: SimTime, prior_cwnd: u64, prior_ssthresh: Option<u64>) {
        // Linux tcp_undo_cwnd_reduction with tcp_reno_undo_cwnd.
        super::reno_undo(
            &mut self.cwnd,
            &mut self.ssthresh,
            prior_cwnd,
            prior_ssthresh,
        );
        self.recovery_start_time = None;
        self.recovering = false;
    }

    fn window(&self) -> u64 {
        self.cwnd
    }

    fn ssthresh(&self) -> Option<u64> {
        self.ssthresh
    }

    fn in_recovery(&self, sent_time: SimTime) -> bool {
        self.recovery_start_time.is_some_and(|r| sent_time <= r)
    }

    fn name(&self) -> &'static str {
        NAME
    }

    fn minimum_window(&self) -> u64 {
        self.min_window
    }

    fn loss_reduction_factor(&self) -> f64 {
        LOSS_REDUCTION_FACTOR
    }

    fn recovering(&self) -> bool {
        self.recovering
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimDuration;

    const MDS: u64 = 1200;

    fn t(ms: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(ms)
    }

    fn ack(cc: &mut NewReno, now: u64, sent: u64, bytes: u64) {
        cc.on_packet_acked(t(now), t(sent), bytes, false, &RttSnapshot::default());
    }

    #[test]
    fn slow_start_doubles_per_round() {
        let mut cc = NewReno::new(MDS, 10 * MDS);
        // Round 1: 10 packets acked -> 20 MDS; round 2: 20 acked -> 40 MDS.
        for _ in 0..10 {
            ack(&mut cc, 100, 1, MDS);
        }
        assert_eq!(cc.window(), 20 * MDS);
        for _ in 0..20 {
            ack(&mut cc, 200, 101, MDS);
        }
        assert_eq!(cc.window(), 40 * MDS);
        assert_eq!(cc.ssthresh(), None);
    }

    #[test]
    fn hystart_exit_sets_ssthresh_to_cwnd() {
        let mut cc = NewReno::new(MDS, 10 * MDS).with_hystart(true);
        let mut next = 0u64;
        let mut sent = std::collections::VecDeque::new();
        for _ in 0..10 {
            cc.on_packet_sent(SimTime(next), MDS, 0);
            sent.push_back(next);
            next += 1;
        }
        // RTT grows 1 ms per 10 acks: a sustained increase (RFC 9406 §4.2).
        let mut acks = 0u64;
        while cc.ssthresh().is_none() && acks < 100_000 {
            let s = sent.pop_front().unwrap();
            let rtt = SimDuration::from_millis(20 + acks / 10);
            let snap = RttSnapshot {
                min_rtt: rtt,
                smoothed_rtt: rtt,
                latest_rtt: rtt,
                rttvar: SimDuration::ZERO,
            };
            cc.on_packet_acked(SimTime(s), SimTime(s), MDS, false, &snap);
            acks += 1;
            while (sent.len() as u64) * MDS < cc.window() {
                cc.on_packet_sent(SimTime(next), MDS, 0);
                sent.push_back(next);
                next += 1;
            }
        }
        assert_eq!(cc.ssthresh(), Some(cc.window()));
        assert_eq!(cc.hystart().unwrap().css_entries, 1);
        assert!(!cc.in_slow_start());
    }

    #[test]
    fn app_limited_packets_do_not_grow() {
        let mut cc = NewReno::new(MDS, 10 * MDS);
        cc.on_packet_acked(t(10), t(1), MDS, true, &RttSnapshot::default());
        assert_eq!(cc.window(), 10 * MDS);
    }

    #[test]
    fn loss_halves_once_per_recovery_period_then_congestion_avoidance() {
        let mut cc = NewReno::new(MDS, 10 * MDS);
        for _ in 0..10 {
            ack(&mut cc, 100, 1, MDS);
        }
        assert_eq!(cc.window(), 24_000);
        // Loss of a packet sent at 150 ms, detected at 300 ms.
        cc.on_congestion_event(t(300), t(150), 0);
        assert_eq!(cc.ssthresh(), Some(12_000));
        assert_eq!(cc.window(), 12_000);
        assert!(cc.in_recovery(t(300)));
        assert!(!cc.in_recovery(t(301)));
        // Another loss of a packet sent before the recovery started: no second reduction.
        cc.on_congestion_event(t(350), t(299), 0);
        assert_eq!(cc.window(), 12_000);
        // Acks of packets sent during or before recovery start do not grow the window.
        ack(&mut cc, 360, 300, MDS);
        assert_eq!(cc.window(), 12_000);
        // A packet sent after recovery start: congestion avoidance (cwnd == ssthresh).
        // 1200·1200/12000 = 120 exactly.
        ack(&mut cc, 400, 301, MDS);
        assert_eq!(cc.window(), 12_120);
        // 1200·1200/12120 = 118.81..: 118, remainder 1_440_000 - 118·12120 = 9840.
        ack(&mut cc, 401, 302, MDS);
        assert_eq!(cc.window(), 12_238);
        assert_eq!(cc.ca_remainder, 9_840);
        // (1_440_000 + 9840)/12238 = 118.47..: 118, remainder 1_449_840 - 1_444_084 = 5756.
        ack(&mut cc, 402, 303, MDS);
        assert_eq!(cc.window(), 12_356);
        assert_eq!(cc.ca_remainder, 5_756);
        // A loss of a packet sent after the recovery start starts a new period.
        cc.on_congestion_event(t(500), t(402), 0);
        assert_eq!(cc.ssthresh(), Some(6_178));
        assert_eq!(cc.window(), 6_178);
        assert_eq!(cc.ca_remainder, 0);
    }

    #[test]
    fn hooks_state_names_factor_and_minimum_window() {
        let mut cc = NewReno::new(MDS, 10 * MDS);
        assert_eq!(cc.loss_reduction_factor(), 0.5);
        assert_eq!(cc.minimum_window(), 2 * MDS);
        assert_eq!(cc.state_name(), "slow_start");
        cc.on_congestion_event(t(100), t(50), 0);
        assert_eq!(cc.state_name(), "recovery");
        // Acks of packets sent before the recovery start keep the period going...
        ack(&mut cc, 110, 100, MDS);
        assert_eq!(cc.state_name(), "recovery");
        // ... one sent after it ends it (RFC 9002 §7.3.2), even when app-limited.
        cc.on_packet_acked(t(120), t(101), MDS, true, &RttSnapshot::default());
        assert_eq!(cc.state_name(), "congestion_avoidance");
        cc.on_congestion_event(t(200), t(150), 0);
        assert_eq!(cc.state_name(), "recovery");
        cc.on_persistent_congestion(t(200));
        assert_eq!(cc.state_name(), "slow_start");
        assert_eq!(cc.window(), cc.minimum_window());
    }

    #[test]
    fn congestion_avoidance_does_not_drift() {
        // cwnd = ssthresh = 12 000 after a loss; 1000 acks of 100 B each, where truncating
        // every term would lose up to 1 byte per ack. Compare with the exact recurrence.
        let mut cc = NewReno::new(MDS, 24_000);
        cc.on_congestion_event(t(1), t(0), 0);
        assert_eq!(cc.window(), 12_000);
        let mut exact = 12_000f64;
        for i in 0..1000 {
            cc.on_packet_acked(t(2 + i), t(2 + i), 100, false, &RttSnapshot::default());
            exact += 1200.0 * 100.0 / exact;
        }
        let got = cc.window() as f64;
        assert!((got - exact).abs() <= 2.0, "got {got}, exact {exact}");
    }

    #[test]
    fn floor_at_minimum_window_and_persistent_congestion() {
        let mut cc = NewReno::new(MDS, 3 * MDS);
        cc.on_congestion_event(t(10), t(5), 0);
        // ssthresh = 1800, cwnd = max(1800, 2400) = 2400.
        assert_eq!(cc.ssthresh(), Some(1_800));
        assert_eq!(cc.window(), 2_400);
        // cwnd >= ssthresh: congestion avoidance from here: 1200·1200/2400 = 600.
        ack(&mut cc, 20, 11, MDS);
        assert_eq!(cc.window(), 2_400 + 600);

        let mut cc = NewReno::new(MDS, 10 * MDS);
        for _ in 0..30 {
            ack(&mut cc, 100, 1, MDS);
        }
        cc.on_congestion_event(t(200), t(150), 0);
        assert_eq!(cc.window(), 24_000);
        cc.on_persistent_congestion(t(200));
        assert_eq!(cc.window(), 2_400);
        assert_eq!(cc.ssthresh(), Some(24_000));
        assert_eq!(cc.recovery_start_time(), None);
        // Back in slow start, and packets sent before 200 ms now grow the window.
        ack(&mut cc, 210, 150, MDS);
        assert_eq!(cc.window(), 3_600);
    }
}

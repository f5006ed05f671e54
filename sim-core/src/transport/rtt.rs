//! The RTT estimator of RFC 9002 §5 (pseudo-code in Appendix A.7 `UpdateRtt`), used by
//! QUIC and meant for every transport: its smoothing is the EWMA of RFC 6298 §2 (gains
//! 1/8 and 1/4); a transport without acknowledgement-delay reporting passes
//! `ack_delay = 0` and `max_ack_delay = None`.
//!
//! All arithmetic is on integer nanoseconds. Rounding: the EWMAs are computed as
//! `srtt = (7·srtt + adjusted) / 8` and `rttvar = (3·rttvar + |srtt − adjusted|) / 4`
//! with the exact integer numerator and one truncating division (error < 1 ns per
//! update, always towards zero); the first `rttvar = latest_rtt / 2` truncates too.

use crate::cc::RttSnapshot;
use crate::time::{SimDuration, SimTime};

/// RFC 9002 §6.2.2 kInitialRtt.
pub const DEFAULT_INITIAL_RTT: SimDuration = SimDuration::from_millis(333);

/// RFC 9002 §5 RTT estimator for one path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RttEstimator {
    initial_rtt: SimDuration,
    latest_rtt: SimDuration,
    smoothed_rtt: SimDuration,
    rttvar: SimDuration,
    min_rtt: SimDuration,
    first_sample_time: Option<SimTime>,
    samples: u64,
}

impl Default for RttEstimator {
    fn default() -> Self {
        RttEstimator::new(DEFAULT_INITIAL_RTT)
    }
}

impl RttEstimator {
    /// An estimator before any sample (A.4): `smoothed_rtt = initial_rtt`,
    /// `rttvar = initial_rtt / 2`, `min_rtt = latest_rtt = 0`.
    pub fn new(initial_rtt: SimDuration) -> Self {
        RttEstimator {
            initial_rtt,
            latest_rtt: SimDuration::ZERO,
            smoothed_rtt: initial_rtt,
            rttvar: SimDuration(initial_rtt.0 / 2),
            min_rtt: SimDuration::ZERO,
            first_sample_time: None,
            samples: 0,
        }
    }

    /// Back to the state of [`RttEstimator::new`] with the same initial RTT (after a
    /// migration to a new path, RFC 9000 §9.4).
    pub fn reset(&mut self) {
        *self = RttEstimator::new(self.initial_rtt);
    }

    /// Feeds one RTT sample (A.7 `UpdateRtt`).
    ///
    /// `latest_rtt` is `now − time_sent(largest newly acked)`; `ack_delay` the delay the
    /// peer reports it held the acknowledgement (0 if the transport has none).
    /// `max_ack_delay` is `Some(peer's maximum)` once it may be trusted (QUIC: once the
    /// handshake is confirmed; the delay is then clamped to it, RFC 9002 §5.3) and `None`
    /// before (no clamping).
    pub fn update(
        &mut self,
        now: SimTime,
        latest_rtt: SimDuration,
        ack_delay: SimDuration,
        max_ack_delay: Option<SimDuration>,
    ) {
        self.latest_rtt = latest_rtt;
        self.samples += 1;
        if self.first_sample_time.is_none() {
            // §5.3: first sample.
            self.min_rtt = latest_rtt;
            self.smoothed_rtt = latest_rtt;
            self.rttvar = SimDuration(latest_rtt.0 / 2);
            self.first_sample_time = Some(now);
            return;
        }
        // §5.2: min_rtt ignores the ack delay.
        self.min_rtt = self.min_rtt.min(latest_rtt);
        // §5.3: clamp to max_ack_delay once the handshake is confirmed.
        let ack_delay = match max_ack_delay {
            Some(m) => ack_delay.min(m),
            None => ack_delay,
        };
        // Subtract the ack delay only if that does not go below min_rtt.
        let adjusted = if latest_rtt >= self.min_rtt.saturating_add(ack_delay) {
            latest_rtt - ack_delay
        } else {
            latest_rtt
        };
        // rttvar uses the OLD smoothed_rtt.
        let s = self.smoothed_rtt.0 as u128;
        let a = adjusted.0 as u128;
        let dev = s.abs_diff(a);
        self.rttvar = SimDuration(((3 * self.rttvar.0 as u128 + dev) / 4) as u64);
        self.smoothed_rtt = SimDuration(((7 * s + a) / 8) as u64);
    }

    /// §5.2: after persistent congestion, min_rtt SHOULD be set to the newest sample.
    pub fn on_persistent_congestion(&mut self) {
        if self.first_sample_time.is_some() {
            self.min_rtt = self.latest_rtt;
        }
    }

    /// The configured initial RTT (kInitialRtt).
    pub fn initial_rtt(&self) -> SimDuration {
        self.initial_rtt
    }
    /// The most recent sample (0 before any).
    pub fn latest_rtt(&self) -> SimDuration {
        self.latest_rtt
    }
    /// smoothed_rtt (initial_rtt before any sample).
    pub fn smoothed_rtt(&self) -> SimDuration {
        self.smoothed_rtt
    }
    /// rttvar (initial_rtt/2 before any sample).
    pub fn rttvar(&self) -> SimDuration {
        self.rttvar
    }
    /// min_rtt (0 before any sample).
    pub fn min_rtt(&self) -> SimDuration {
        self.min_rtt
    }
    /// When the first sample was taken (the RFC's `first_rtt_sample`), if any.
    pub fn first_sample_time(&self) -> Option<SimTime> {
        self.first_sample_time
    }
    /// Whether at least one sample has been taken.
    pub fn has_sample(&self) -> bool {
        self.first_sample_time.is_some()
    }
    /// How many samples have been taken.
    pub fn samples(&self) -> u64 {
        self.samples
    }
    /// `smoothed_rtt + max(4·rttvar, granularity)`: the PTO base without max_ack_delay
    /// and without backoff (§6.2.1).
    pub fn pto_base(&self, granularity: SimDuration) -> SimDuration {
        self.smoothed_rtt
            .saturating_add(self.rttvar.saturating_mul(4).max(granularity))
    }
    /// Test hook: overwrite the whole state.
    #[cfg(test)]
    pub(crate) fn force_state(
        &mut self,
        smoothed_rtt: SimDuration,
        rttvar: SimDuration,
        min_rtt: SimDuration,
        latest_rtt: SimDuration,
        first_sample_time: Option<SimTime>,
    ) {
        self.smoothed_rtt = smoothed_rtt;
        self.rttvar = rttvar;
        self.min_rtt = min_rtt;
        self.latest_rtt = latest_rtt;
        self.first_sample_time = first_sample_time;
    }
    /// The estimate as a [`RttSnapshot`] for congestion controllers.
    pub fn snapshot(&self) -> RttSnapshot {
        RttSnapshot {
            min_rtt: self.min_rtt,
            smoothed_rtt: self.smoothed_rtt,
            latest_rtt: self.latest_rtt,
            rttvar: self.rttvar,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }
    fn at(x: u64) -> SimTime {
        SimTime::ZERO + ms(x)
    }

    #[test]
    fn initial_state_gives_999ms_pto() {
        let r = RttEstimator::default();
        assert_eq!(r.smoothed_rtt(), ms(333));
        assert_eq!(r.rttvar(), SimDuration::from_micros(166_500));
        assert_eq!(r.pto_base(ms(1)), ms(999));
        assert!(!r.has_sample());
    }

    #[test]
    fn hand_computed_sequence_with_ack_delay_clamping() {
        let mut r = RttEstimator::new(ms(333));
        // 1) first sample 100 ms: srtt 100, rttvar 50, min 100 (ack delay ignored).
        r.update(at(100), ms(100), ms(30), None);
        assert_eq!(
            (r.smoothed_rtt(), r.rttvar(), r.min_rtt()),
            (ms(100), ms(50), ms(100))
        );
        assert_eq!(r.first_sample_time(), Some(at(100)));
        // 2) 120 ms, ack_delay 10, not confirmed: 120 >= 100 + 10 -> adjusted 110.
        //    rttvar = (3·50 + |100 − 110|)/4 = 40; srtt = (7·100 + 110)/8 = 101.25.
        r.update(at(200), ms(120), ms(10), None);
        assert_eq!(r.rttvar(), ms(40));
        assert_eq!(r.smoothed_rtt(), SimDuration::from_micros(101_250));
        assert_eq!(r.min_rtt(), ms(100));
        // 3) 150 ms, ack_delay 100 but confirmed with max_ack_delay 25: clamp to 25,
        //    150 >= 100 + 25 -> adjusted 125. rttvar = (120 + 23.75)/4 = 35.9375,
        //    srtt = (708.75 + 125)/8 = 104.21875.
        r.update(at(300), ms(150), ms(100), Some(ms(25)));
        assert_eq!(r.rttvar(), SimDuration::from_nanos(35_937_500));
        assert_eq!(r.smoothed_rtt(), SimDuration::from_nanos(104_218_750));
        // 4) 105 ms with ack delay 10: 105 < 100 + 10 -> not adjusted (105).
        //    rttvar = (3·35.9375 + 0.78125)/4 = 27.1484375 -> 27 148 437 ns (truncated),
        //    srtt = (7·104.21875 + 105)/8 = 104.31640625 -> 104 316 406 ns.
        r.update(at(400), ms(105), ms(10), Some(ms(25)));
        assert_eq!(r.rttvar(), SimDuration::from_nanos(27_148_437));
        assert_eq!(r.smoothed_rtt(), SimDuration::from_nanos(104_316_406));
        // 5) 90 ms: new min_rtt, whatever the ack delay (5 ms): 90 < 90 + 5 -> 90.
        r.update(at(500), ms(90), ms(5), Some(ms(25)));
        assert_eq!(r.min_rtt(), ms(90));
        assert_eq!(r.latest_rtt(), ms(90));
        assert_eq!(r.samples(), 5);
        // Persistent congestion resets min_rtt to the latest sample.
        r.update(at(600), ms(200), ms(0), Some(ms(25)));
        assert_eq!(r.min_rtt(), ms(90));
        r.on_persistent_congestion();
        assert_eq!(r.min_rtt(), ms(200));
        r.reset();
        assert_eq!(r, RttEstimator::new(ms(333)));
    }

    #[test]
    fn unclamped_ack_delay_before_confirmation() {
        let mut r = RttEstimator::new(ms(333));
        r.update(at(10), ms(10), ms(0), None);
        // 100 ms sample, 60 ms ack delay (> max_ack_delay 25): not clamped before
        // confirmation -> adjusted 40; clamped after -> 75.
        let mut a = r.clone();
        a.update(at(200), ms(100), ms(60), None);
        let mut b = r.clone();
        b.update(at(200), ms(100), ms(60), Some(ms(25)));
        // srtt a = (70 + 40)/8 = 13.75; b = (70 + 75)/8 = 18.125.
        assert_eq!(a.smoothed_rtt(), SimDuration::from_micros(13_750));
        assert_eq!(b.smoothed_rtt(), SimDuration::from_micros(18_125));
    }
}

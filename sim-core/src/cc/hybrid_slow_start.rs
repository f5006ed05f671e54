//! Hybrid slow start as Chromium's QUIC and quic-go run it (`HybridSlowStart`: Google
//! quiche `quic/core/congestion_control/hybrid_slow_start.cc`, ported to quic-go as
//! `internal/congestion/hybrid_slow_start.go`; checked against quic-go v0.19.3). The delay
//! half of Ha & Rhee's HyStart, without Linux's ACK-train test
//! ([`super::hystart_linux`]) and without RFC 9406's conservative slow start
//! ([`super::hystart`]): slow start ends at once (`ssthresh = cwnd`).
//!
//! Once per acknowledgement (quic-go `MaybeExitSlowStart`, called for an ACK frame that
//! newly acknowledges its largest packet, while in slow start):
//! - a round starts at the first sample after the previous round ended: it ends once a
//!   packet sent after the newest packet sent at its start is acknowledged (quic-go counts
//!   packet numbers; this model send times, as [`super::hystart`] does);
//! - the round's minimum RTT is taken over its first [`MIN_SAMPLES`] samples (the latest
//!   RTT of each acknowledgement); at the [`MIN_SAMPLES`]-th, the exit is found when it
//!   exceeds the connection's minimum RTT by more than `clamp(min_rtt / 8, 4 ms, 16 ms)`;
//! - once found, slow start ends as soon as the window is at least [`LOW_WINDOW`]
//!   segments.

use crate::time::{SimDuration, SimTime};

/// `hybridStartLowWindow`: no exit below 16 segments.
pub const LOW_WINDOW: u64 = 16;
/// `hybridStartMinSamples`: samples of a round before the delay test.
pub const MIN_SAMPLES: u32 = 8;
/// `hybridStartDelayMinThresholdUs` (4 ms).
pub const DELAY_THRESH_MIN: SimDuration = SimDuration::from_millis(4);
/// `hybridStartDelayMaxThresholdUs` (16 ms).
pub const DELAY_THRESH_MAX: SimDuration = SimDuration::from_millis(16);
/// `hybridStartDelayFactorExp`: the threshold is min RTT / 2^3.
pub const DELAY_FACTOR_EXP: u32 = 3;

/// Hybrid slow start state of one connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HybridSlowStart {
    mss: u64,
    started: bool,
    /// The newest send time when the round started (`endPacketNumber`).
    end: SimTime,
    /// The newest send time (`lastSentPacketNumber`).
    last_sent: SimTime,
    current_min_rtt: Option<SimDuration>,
    sample_count: u32,
    found: bool,
    /// The acknowledgement the last sample came from (the controller is called once per
    /// packet; quic-go samples once per ACK frame).
    last_sample_at: Option<SimTime>,
}

impl HybridSlowStart {
    /// For a controller counting segments of `mss` bytes.
    pub fn new(mss: u64) -> Self {
        HybridSlowStart {
            mss: mss.max(1),
            started: false,
            end: SimTime::ZERO,
            last_sent: SimTime::ZERO,
            current_min_rtt: None,
            sample_count: 0,
            found: false,
            last_sample_at: None,
        }
    }

    /// Whether the delay increase was found.
    pub fn found(&self) -> bool {
        self.found
    }

    /// A packet was sent at `now` (`OnPacketSent`).
    pub fn on_packet_sent(&mut self, now: SimTime) {
        self.last_sent = now;
    }

    /// `Restart`, after a retransmission timeout: a new search.
    pub fn restart(&mut self) {
        self.started = false;
        self.found = false;
    }

    /// A packet sent at `sent_time` was acknowledged at `now` while the controller is in
    /// slow start with a window of `cwnd` bytes; `latest_rtt` is the newest RTT sample,
    /// `min_rtt` the connection's minimum. Returns `true` when slow start ends.
    pub fn on_ack(
        &mut self,
        now: SimTime,
        sent_time: SimTime,
        latest_rtt: SimDuration,
        min_rtt: SimDuration,
        cwnd: u64,
    ) -> bool {
        let mut exit = false;
        if self.last_sample_at != Some(now) {
            self.last_sample_at = Some(now);
            exit = self.should_exit(latest_rtt, min_rtt, cwnd / self.mss);
        }
        // `OnPacketAcked`, after the sample: the round ends with the first packet sent
        // after its start.
        if self.started && sent_time > self.end {
            self.started = false;
        }
        exit
    }

    /// `ShouldExitSlowStart`.
    fn should_exit(
        &mut self,
        latest_rtt: SimDuration,
        min_rtt: SimDuration,
        segments: u64,
    ) -> bool {
        if !self.started {
            // `StartReceiveRound`.
            self.end = self.last_sent;
            self.current_min_rtt = None;
            self.sample_count = 0;
            self.started = true;
        }
        if self.found {
            return segments >= LOW_WINDOW;
        }
        self.sample_count += 1;
        if self.sample_count <= MIN_SAMPLES {
            self.current_min_rtt = Some(
                self.current_min_rtt
                    .map_or(latest_rtt, |m| m.min(latest_rtt)),
            );
        }
        if self.sample_count == MIN_SAMPLES {
            // quic-go divides in whole microseconds.
            let us = (min_rtt.0 / 1000) >> DELAY_FACTOR_EXP;
            let thresh = SimDuration(us * 1000).clamp(DELAY_THRESH_MIN, DELAY_THRESH_MAX);
            if self.current_min_rtt.is_some_and(|c| c > min_rtt + thresh) {
                self.found = true;
            }
        }
        segments >= LOW_WINDOW && self.found
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
    fn exits_after_eight_samples_above_the_threshold_once_the_window_is_16() {
        let mut h = HybridSlowStart::new(1000);
        h.on_packet_sent(at(0));
        // min RTT 100 ms: threshold clamp(12.5 ms, 4, 16) = 12.5 ms. Eight ACKs at 113 ms.
        for k in 1..=7 {
            assert!(!h.on_ack(at(100 + k), at(0), ms(113), ms(100), 40_000));
        }
        assert!(
            h.on_ack(at(108), at(0), ms(113), ms(100), 40_000),
            "the 8th sample"
        );
        assert!(h.found());
    }

    #[test]
    fn below_the_threshold_or_the_low_window_it_stays() {
        let mut h = HybridSlowStart::new(1000);
        h.on_packet_sent(at(0));
        for k in 1..=8 {
            assert!(!h.on_ack(at(100 + k), at(0), ms(112), ms(100), 40_000));
        }
        assert!(!h.found(), "112 ms is not above 100 + 12.5 ms");
        // Found, but the window is 15 segments: no exit until it is 16.
        let mut h = HybridSlowStart::new(1000);
        h.on_packet_sent(at(0));
        for k in 1..=8 {
            assert!(!h.on_ack(at(100 + k), at(0), ms(120), ms(100), 15_000));
        }
        assert!(h.found());
        assert!(h.on_ack(at(200), at(0), ms(120), ms(100), 16_000));
    }

    #[test]
    fn one_sample_per_acknowledgement_and_rounds_by_send_time() {
        let mut h = HybridSlowStart::new(1000);
        h.on_packet_sent(at(0));
        // Eight packets acknowledged by the same ACK: one sample.
        for _ in 0..8 {
            assert!(!h.on_ack(at(100), at(0), ms(200), ms(100), 40_000));
        }
        assert!(!h.found());
        // A packet sent after the round's start ends the round: the next ACK starts a new
        // one with a fresh minimum.
        h.on_packet_sent(at(50));
        assert!(!h.on_ack(at(150), at(50), ms(100), ms(100), 40_000));
        assert!(!h.started);
        for k in 1..=8 {
            h.on_ack(at(150 + k), at(0), ms(100), ms(100), 40_000);
        }
        assert!(!h.found(), "the new round's minimum is the minimum RTT");
    }
}

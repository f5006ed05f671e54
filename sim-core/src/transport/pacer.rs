//! A token-bucket pacer (RFC 9002 §7.7): the bucket refills at `gain * cwnd / srtt` bytes
//! per unit time, capped at a burst size, and a datagram may leave when the bucket holds a
//! whole one. Protocol-neutral: the transport passes the congestion window, the smoothed
//! RTT and whether its controller is in slow start.
//!
//! Two gains, in permille: one while in slow start, one otherwise (Chromium paces at 2 and
//! 1.25; RFC 9002 §7.7 names a single gain, the default 1.25).
//!
//! A controller that sets its own pacing rate (BBR,
//! [`crate::cc::CongestionController::pacing_rate`]) overrides both: the transport hands
//! the rate in with [`Pacer::set_rate`], the bucket then refills at that many bytes per
//! second, and pacing is on whatever the flow's `pacing` says.

use crate::time::{SimDuration, SimTime};

/// Pacing token bucket.
#[derive(Clone, Debug)]
pub struct Pacer {
    /// Pacing is on (when off the bucket is still kept, never consulted).
    enabled: bool,
    /// Bytes the bucket holds.
    tokens: u64,
    /// When the bucket was last refilled.
    last: SimTime,
    /// Gain outside slow start, permille.
    gain_permille: u64,
    /// Gain in slow start, permille.
    gain_ss_permille: u64,
    /// Bucket capacity in bytes (the burst allowed after idle).
    burst: u64,
    /// Bytes one datagram needs.
    datagram: u64,
    /// The controller's pacing rate in bytes per second, when it sets one.
    rate: Option<u64>,
}

impl Pacer {
    /// A full bucket of `burst` bytes; `datagram` is the largest datagram size.
    pub fn new(enabled: bool, burst: u64, datagram: u64, gain: f64, gain_slow_start: f64) -> Self {
        Pacer {
            enabled,
            tokens: burst,
            last: SimTime::ZERO,
            gain_permille: (gain * 1000.0).round() as u64,
            gain_ss_permille: (gain_slow_start * 1000.0).round() as u64,
            burst,
            datagram,
            rate: None,
        }
    }

    /// Pacing is on (the flow's `pacing`, or a controller's rate).
    pub fn is_enabled(&self) -> bool {
        self.enabled || self.rate.is_some()
    }

    /// The controller's pacing rate in bytes per second (`None`: the bucket refills at
    /// `gain · cwnd / srtt`, and only when the flow paces). Takes effect from the next
    /// refill.
    pub fn set_rate(&mut self, rate: Option<u64>) {
        self.rate = rate;
    }

    /// The controller's pacing rate in force, bytes per second.
    pub fn rate(&self) -> Option<u64> {
        self.rate
    }

    /// Bytes in the bucket.
    pub fn tokens(&self) -> u64 {
        self.tokens
    }

    /// The gain in permille for a controller `in_slow_start` or not.
    pub fn gain(&self, in_slow_start: bool) -> u64 {
        if in_slow_start {
            self.gain_ss_permille
        } else {
            self.gain_permille
        }
    }

    /// Refills the bucket up to `now`: `gain * cwnd / srtt` bytes per unit time, capped at
    /// the burst size. Sub-byte remainders are dropped at each refill.
    pub fn refill(&mut self, now: SimTime, srtt: SimDuration, cwnd: u64, in_slow_start: bool) {
        let elapsed = now.saturating_since(self.last).as_nanos();
        self.last = now;
        let cap = self.burst;
        if elapsed == 0 {
            // Nothing accrues (another poll at the same instant): the bucket as it is.
            self.tokens = self.tokens.min(cap);
            return;
        }
        // The same quotients in 64 bits while the products fit (a 128-bit division is a
        // library call), in 128 bits otherwise.
        let add = match self.rate {
            Some(rate) => match elapsed.checked_mul(rate) {
                Some(p) => u128::from(p / 1_000_000_000),
                None => elapsed as u128 * rate as u128 / 1_000_000_000,
            },
            None => {
                let srtt = srtt.as_nanos().max(1);
                let gain = self.gain(in_slow_start);
                let fast = gain
                    .checked_mul(cwnd)
                    .and_then(|num| elapsed.checked_mul(num))
                    .zip(srtt.checked_mul(1000));
                match fast {
                    Some((p, d)) => u128::from(p / d),
                    None => {
                        let num = gain as u128 * cwnd as u128;
                        elapsed as u128 * num / (1000 * srtt as u128)
                    }
                }
            }
        };
        self.tokens = (self.tokens as u128 + add).min(cap as u128) as u64;
    }

    /// A datagram may leave now (always when pacing is off).
    pub fn can_send(&self) -> bool {
        !self.is_enabled() || self.tokens >= self.datagram
    }

    /// When the bucket will hold a full datagram again (`None` if it does now or pacing is
    /// off).
    pub fn release_time(
        &self,
        srtt: SimDuration,
        cwnd: u64,
        in_slow_start: bool,
    ) -> Option<SimTime> {
        if !self.is_enabled() {
            return None;
        }
        let mds = self.datagram;
        if self.tokens >= mds {
            return None;
        }
        let missing = (mds - self.tokens) as u128;
        if let Some(rate) = self.rate {
            let wait = (missing * 1_000_000_000).div_ceil(rate.max(1) as u128);
            return Some(self.last + SimDuration(wait.min(u64::MAX as u128) as u64));
        }
        let srtt = srtt.as_nanos().max(1) as u128;
        let num = (self.gain(in_slow_start) as u128 * cwnd as u128).max(1);
        let wait = (missing * 1000 * srtt).div_ceil(num);
        Some(self.last + SimDuration(wait.min(u64::MAX as u128) as u64))
    }

    /// `bytes` left in a datagram that counts in flight.
    pub fn on_sent(&mut self, bytes: u64) {
        self.tokens = self.tokens.saturating_sub(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `refill`'s 64-bit shortcuts give the 128-bit formula's tokens, also where the
        /// products do not fit 64 bits, and at zero elapsed time.
        #[test]
        fn refill_is_the_128_bit_formula(
            tokens in 0u64..200_000,
            // Up to 13 days, 2^40-byte windows and rates: past 64 bits, within 128.
            elapsed in prop_oneof![Just(0u64), 0u64..2_000_000_000, 0u64..1 << 50],
            srtt in prop_oneof![0u64..1_000_000_000, 0u64..1 << 50],
            cwnd in prop_oneof![0u64..100_000_000, 0u64..1 << 40],
            rate in prop_oneof![Just(None), (1u64..10_000_000_000).prop_map(Some), (1u64..1 << 40).prop_map(Some)],
            ss in any::<bool>(),
        ) {
            let mut p = Pacer::new(true, 200_000, 1200, 1.25, 2.0);
            p.tokens = tokens;
            p.set_rate(rate);
            let now = SimTime::ZERO + SimDuration(elapsed);
            let e = elapsed as u128;
            let add = match rate {
                Some(r) => e * r as u128 / 1_000_000_000,
                None => {
                    let num = p.gain(ss) as u128 * cwnd as u128;
                    e * num / (1000 * srtt.max(1) as u128)
                }
            };
            let want = (tokens as u128 + add).min(200_000) as u64;
            p.refill(now, SimDuration(srtt), cwnd, ss);
            prop_assert_eq!(p.tokens(), want);
        }
    }

    #[test]
    fn refill_caps_and_release_time_is_when_a_datagram_fits() {
        let mut p = Pacer::new(true, 3000, 1200, 1.0, 2.0);
        assert!(p.can_send());
        p.on_sent(2500);
        assert!(!p.can_send());
        let srtt = SimDuration::from_millis(100);
        // 1.0 * 12000 B per 100 ms: 700 missing bytes take 700/12000 * 100 ms.
        let t = p.release_time(srtt, 12_000, false).unwrap();
        assert_eq!(
            t.as_nanos(),
            (700u64 * 1000 * 100_000_000).div_ceil(12_000_000)
        );
        p.refill(t, srtt, 12_000, false);
        assert!(p.can_send());
        p.refill(t + SimDuration::from_secs(10), srtt, 12_000, true);
        assert_eq!(p.tokens(), 3000);
        assert_eq!(p.gain(true), 2000);
    }

    #[test]
    fn a_controller_rate_overrides_the_window_rate_and_turns_pacing_on() {
        let mut p = Pacer::new(false, 3000, 1200, 1.25, 2.0);
        assert!(!p.is_enabled());
        p.set_rate(Some(1_200_000)); // 1.2 MB/s: a 1200-byte datagram per ms
        assert!(p.is_enabled());
        p.on_sent(3000);
        assert!(!p.can_send());
        let srtt = SimDuration::from_millis(100);
        let t = p.release_time(srtt, 12_000, false).unwrap();
        assert_eq!(t.as_nanos(), 1_000_000);
        p.refill(t, srtt, 12_000, false);
        assert_eq!(p.tokens(), 1200);
        assert!(p.can_send());
    }
}

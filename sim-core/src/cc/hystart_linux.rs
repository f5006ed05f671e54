//! Linux HyStart: the hybrid slow start of Linux's CUBIC (`net/ipv4/tcp_cubic.c`,
//! `hystart_update` called from `cubictcp_acked`; Ha & Rhee, "Taming the elephants: new
//! TCP slow start", 2011). Not RFC 9406's HyStart++ ([`super::hystart`]): it compares a
//! round's minimum RTT with the connection's minimum (not the previous round's), adds an
//! ACK-train test, and on either signal leaves slow start at once (`ssthresh = cwnd`), with
//! no conservative slow start.
//!
//! Per acknowledgement (one sample per ACK, while in slow start, before any exit was found
//! and only once the window is at least [`LOW_WINDOW_SEGMENTS`]):
//! - a new round starts when a packet sent after the previous round started is
//!   acknowledged (`after(snd_una, end_seq)`; rounds tracked by send time here, as
//!   [`super::hystart`] does): round start and last-ACK time = now, minimum RTT of the
//!   round and sample count cleared (`bictcp_hystart_reset`);
//! - ACK train: an ACK at most [`ACK_DELTA`] after the previous close one extends the
//!   train; once the train has lasted more than `delay_min + ack_delay` since the round
//!   started (half of that when the sender does not pace, `SK_PACING_NONE`), exit;
//! - delay: the round's minimum RTT over its ACKs; from the ACK after the first
//!   [`MIN_SAMPLES`] of the round on, exit when it exceeds `delay_min +
//!   clamp(delay_min / 8, DELAY_THRESH_MIN, DELAY_THRESH_MAX)`.
//!
//! `delay_min` is the controller's minimum RTT ([`super::cubic_linux`]); `ack_delay` the
//! TSO/GRO cushion of `hystart_ack_delay` ([`ack_delay`]).

use crate::time::{SimDuration, SimTime};

/// tcp_cubic.c `hystart_low_window`: HyStart runs only once cwnd ≥ 16 segments.
pub const LOW_WINDOW_SEGMENTS: u64 = 16;
/// tcp_cubic.c `HYSTART_MIN_SAMPLES`: ACKs of a round before the delay test runs.
pub const MIN_SAMPLES: u32 = 8;
/// tcp_cubic.c `HYSTART_DELAY_MIN` (4 ms): the smallest delay threshold.
pub const DELAY_THRESH_MIN: SimDuration = SimDuration::from_millis(4);
/// tcp_cubic.c `HYSTART_DELAY_MAX` (16 ms): the largest delay threshold.
pub const DELAY_THRESH_MAX: SimDuration = SimDuration::from_millis(16);
/// tcp_cubic.c `hystart_ack_delta_us` (2000 µs): ACKs at most this far apart form a train.
pub const ACK_DELTA: SimDuration = SimDuration::from_millis(2);
/// tcp_cubic.c `hystart_ack_delay`: the TSO/GRO cushion is capped at 1 ms (USEC_PER_MSEC).
pub const ACK_DELAY_CAP: SimDuration = SimDuration::from_millis(1);
/// `sk_gso_max_size` in `hystart_ack_delay`: GSO_LEGACY_MAX_SIZE, 65536 bytes (the
/// default of a device without BIG TCP).
pub const GSO_MAX_SIZE: u64 = 65_536;

/// Which test ended slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// The ACK train of a round outlasted (half) the minimum RTT (`HYSTART_ACK_TRAIN`).
    AckTrain,
    /// A round's minimum RTT rose above the threshold (`HYSTART_DELAY`).
    Delay,
}

/// tcp_cubic.c `hystart_ack_delay`: `min(1 ms, 4 · GSO_MAX_SIZE / pacing_rate)`, 0 with no
/// pacing rate. `pacing_rate` in bytes per second: Linux computes `sk_pacing_rate` for
/// every connection (`tcp_update_pacing_rate`), paced or not.
pub fn ack_delay(pacing_rate: u64) -> SimDuration {
    if pacing_rate == 0 {
        return SimDuration::ZERO;
    }
    let ns = (GSO_MAX_SIZE as u128 * 4 * 1_000_000_000) / pacing_rate as u128;
    SimDuration(ns.min(ACK_DELAY_CAP.0 as u128) as u64)
}

/// Linux HyStart state for one connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinuxHyStart {
    paced: bool,
    found: Option<Exit>,
    /// `round_start`.
    round_start: SimTime,
    /// `last_ack`: the last ACK of the current train.
    last_ack: SimTime,
    /// The newest send time when the round started (`end_seq` = SND.NXT then); `None`:
    /// no round yet, the next sample starts one.
    end: Option<SimTime>,
    last_sent: SimTime,
    /// `curr_rtt`: the round's minimum RTT (`None` = `~0U`).
    curr_rtt: Option<SimDuration>,
    /// `sample_cnt`.
    sample_cnt: u32,
    /// The ACK the last sample came from (the controller is called once per packet; Linux
    /// samples once per ACK).
    last_sample_at: Option<SimTime>,
}

impl LinuxHyStart {
    /// HyStart for a sender that paces (`paced`: Linux's `sk_pacing_status` is not
    /// `SK_PACING_NONE`) or not.
    pub fn new(paced: bool) -> Self {
        LinuxHyStart {
            paced,
            found: None,
            round_start: SimTime::ZERO,
            last_ack: SimTime::ZERO,
            end: None,
            last_sent: SimTime::ZERO,
            curr_rtt: None,
            sample_cnt: 0,
            last_sample_at: None,
        }
    }

    /// The test that ended slow start, if one did.
    pub fn found(&self) -> Option<Exit> {
        self.found
    }

    /// A packet was sent at `now`.
    pub fn on_packet_sent(&mut self, now: SimTime) {
        self.last_sent = now;
    }

    /// tcp_cubic.c `cubictcp_state(TCP_CA_Loss)`: after a timeout HyStart runs again (found
    /// cleared) from a new round starting now.
    pub fn reset(&mut self, now: SimTime) {
        self.found = None;
        self.start_round(now);
    }

    /// `bictcp_hystart_reset`.
    fn start_round(&mut self, now: SimTime) {
        self.round_start = now;
        self.last_ack = now;
        self.end = Some(self.last_sent);
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// A packet sent at `sent_time` was acknowledged at `now` while the controller is in
    /// slow start with `cwnd_segments` segments; `delay` is the ACK's RTT sample,
    /// `delay_min` the controller's minimum RTT and `ack_delay` the cushion of
    /// [`ack_delay`]. Returns the exit when this ACK finds one (the controller then sets
    /// `ssthresh = cwnd`).
    pub fn on_ack(
        &mut self,
        now: SimTime,
        sent_time: SimTime,
        cwnd_segments: u64,
        delay: SimDuration,
        delay_min: SimDuration,
        ack_delay: SimDuration,
    ) -> Option<Exit> {
        // cubictcp_acked: only until an exit was found, and from hystart_low_window on.
        if self.found.is_some() || cwnd_segments < LOW_WINDOW_SEGMENTS {
            return None;
        }
        let mut new_ack = self.last_sample_at != Some(now);
        self.last_sample_at = Some(now);
        // hystart_update: a new round once a packet sent after the round began is acked.
        if self.end.is_none_or(|end| sent_time > end) {
            self.start_round(now);
            new_ack = true;
        }
        // HYSTART_ACK_TRAIN.
        if now.saturating_since(self.last_ack) <= ACK_DELTA {
            self.last_ack = now;
            let mut threshold = delay_min + ack_delay;
            if !self.paced {
                // Unpaced (SK_PACING_NONE): the train only has to pass delay_min / 2.
                threshold = SimDuration(threshold.0 / 2);
            }
            if now.saturating_since(self.round_start) > threshold {
                self.found = Some(Exit::AckTrain);
                return self.found;
            }
        }
        // HYSTART_DELAY.
        if !new_ack {
            // The same ACK as the previous call: its sample is in already.
            return None;
        }
        self.curr_rtt = Some(self.curr_rtt.map_or(delay, |c| c.min(delay)));
        if self.sample_cnt < MIN_SAMPLES {
            self.sample_cnt += 1;
        } else {
            let thresh = SimDuration(delay_min.0 / 8)
                .max(DELAY_THRESH_MIN)
                .min(DELAY_THRESH_MAX);
            if self.curr_rtt.is_some_and(|c| c > delay_min + thresh) {
                self.found = Some(Exit::Delay);
                return self.found;
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }
    fn at(us: u64) -> SimTime {
        SimTime(us * 1000)
    }

    /// Delay test: a 40 ms minimum RTT gives the threshold clamp(40/8 = 5 ms, 4, 16) =
    /// 5 ms. ACKs 10 ms apart (no train). A round at 45 ms never exits (not above
    /// 40 + 5); a round at 46 ms exits on its ninth ACK (the first eight only count), not
    /// before.
    #[test]
    fn delay_increase_exits_on_the_ninth_ack_of_a_round_above_the_threshold() {
        let mut h = LinuxHyStart::new(false);
        let ack_delay = ms(1);
        h.on_packet_sent(at(0));
        let mut t = 100_000; // µs
        let mut sent = 1;
        // One round at 45 ms: 20 ACKs, none exits.
        for _ in 0..20 {
            h.on_packet_sent(at(sent));
            assert_eq!(h.on_ack(at(t), at(0), 20, ms(45), ms(40), ack_delay), None);
            t += 10_000;
        }
        // A new round (a packet sent after the round began is acked), at 46 ms.
        let round_end = sent;
        sent += 1;
        h.on_packet_sent(at(sent));
        for i in 1..=9 {
            let v = h.on_ack(at(t), at(round_end + 1), 20, ms(46), ms(40), ack_delay);
            if i < 9 {
                assert_eq!(v, None, "ACK {i} of the round");
            } else {
                assert_eq!(v, Some(Exit::Delay));
            }
            t += 10_000;
        }
        assert_eq!(h.found(), Some(Exit::Delay));
        // Found: nothing more.
        assert_eq!(
            h.on_ack(at(t), at(sent), 20, ms(100), ms(40), ack_delay),
            None
        );
        // The threshold is clamped: 200 ms minimum RTT -> 16 ms (not 25); 8 ms -> 4 ms.
        for (min, above, at_thresh) in [(200, 217, 216), (8, 13, 12)] {
            for (rtt, exits) in [(at_thresh, false), (above, true)] {
                let mut h = LinuxHyStart::new(false);
                let mut v = None;
                for k in 0..9u64 {
                    v = h.on_ack(at(k * 10_000), at(0), 16, ms(rtt), ms(min), ack_delay);
                }
                assert_eq!(v.is_some(), exits, "min {min} ms, rtt {rtt} ms");
            }
        }
    }

    /// Several packets of one ACK count as one sample (Linux samples per ACK).
    #[test]
    fn packets_of_one_ack_are_one_sample() {
        let mut h = LinuxHyStart::new(false);
        for k in 0..8u64 {
            for _ in 0..2 {
                let v = h.on_ack(at(k * 10_000), at(0), 16, ms(60), ms(40), ms(1));
                assert_eq!(v, None);
            }
        }
        // The ninth ACK exits.
        assert_eq!(
            h.on_ack(at(80_000), at(0), 16, ms(60), ms(40), ms(1)),
            Some(Exit::Delay)
        );
    }

    /// ACK train: ACKs 1.2 ms apart (≤ 2 ms) at the minimum RTT. Unpaced, the threshold
    /// is (delay_min + ack_delay) / 2 = (40 + 1) / 2 = 20.5 ms after the round start:
    /// the ACK at 20.4 ms does not exit, the one at 21.6 ms does. Paced, the full 41 ms.
    /// A gap of more than 2 ms breaks the train for the rest of the round.
    #[test]
    fn ack_train_exits_after_half_the_minimum_rtt_unpaced() {
        for (paced, exit_after_us) in [(false, 20_500u64), (true, 41_000)] {
            let mut h = LinuxHyStart::new(paced);
            let start = 1_000_000u64;
            let mut exited_at = None;
            for k in 0..100u64 {
                let t = start + k * 1_200;
                if let Some(e) = h.on_ack(at(t), at(0), 16, ms(40), ms(40), ms(1)) {
                    assert_eq!(e, Exit::AckTrain);
                    exited_at = Some(t - start);
                    break;
                }
            }
            let got = exited_at.expect("the train exits");
            assert!(
                got > exit_after_us && got <= exit_after_us + 1_200,
                "paced {paced}: exit {got} µs after the round start"
            );
        }
        // ACKs 2.5 ms apart never form a train.
        let mut h = LinuxHyStart::new(false);
        for k in 0..100u64 {
            let v = h.on_ack(at(k * 2_500), at(0), 16, ms(40), ms(40), ms(1));
            assert_eq!(v, None, "ACK {k}");
        }
        // A train broken by a 3 ms gap does not resume in the same round.
        let mut h = LinuxHyStart::new(false);
        let mut t = 0;
        for _ in 0..10 {
            assert_eq!(h.on_ack(at(t), at(0), 16, ms(40), ms(40), ms(1)), None);
            t += 1_000;
        }
        t += 3_000;
        for _ in 0..40 {
            assert_eq!(h.on_ack(at(t), at(0), 16, ms(40), ms(40), ms(1)), None);
            t += 1_000;
        }
    }

    /// Below hystart_low_window (16 segments) nothing happens, whatever the samples.
    #[test]
    fn nothing_below_sixteen_segments() {
        let mut h = LinuxHyStart::new(false);
        for k in 0..200u64 {
            let v = h.on_ack(at(k * 500), at(0), 15, ms(200), ms(40), ms(1));
            assert_eq!(v, None);
        }
        assert_eq!(h.found(), None);
        // At 16 the same samples exit.
        assert!(h
            .on_ack(at(200_000), at(0), 16, ms(200), ms(40), ms(1))
            .is_none());
        let mut v = None;
        for k in 1..20u64 {
            v = v.or(h.on_ack(at(200_000 + k * 500), at(0), 16, ms(200), ms(40), ms(1)));
        }
        assert!(v.is_some());
    }

    /// `hystart_ack_delay`: 4 × 64 KiB at the pacing rate, capped at 1 ms.
    #[test]
    fn ack_delay_is_the_gso_cushion_capped_at_one_millisecond() {
        assert_eq!(ack_delay(0), SimDuration::ZERO);
        // 5 MB/s: 52 ms -> capped.
        assert_eq!(ack_delay(5_000_000), ms(1));
        // 1 GB/s: 262 144 B / 1e9 B/s = 262.144 µs.
        assert_eq!(ack_delay(1_000_000_000), SimDuration(262_144));
    }
}

//! Delivery-rate sampling (draft-cheng-iccrg-delivery-rate-estimation-02, the rate
//! sample of draft-cardwell-iccrg-bbr-congestion-control-00 §4.1.1), shared by every
//! transport whose controller asks for it ([`super::CongestionController::wants_rate_samples`]).
//!
//! The transport keys each sent packet by an identifier of its own (QUIC: the send-order
//! number of loss recovery; TCP: the segment's sequence number, a retransmission
//! overwriting the earlier transmission's state) and reports sends, acknowledgements and
//! losses; after each ACK [`RateSampler::generate`] gives one [`RateSample`]:
//!
//! - on send (draft §3.2 "Transmitting or retransmitting a data packet"): with nothing in
//!   flight, `C.first_sent_time = C.delivered_time = now`; the packet records
//!   `P.delivered = C.delivered`, `P.delivered_time = C.delivered_time`,
//!   `P.first_sent_time = C.first_sent_time`, `P.is_app_limited = (C.app_limited != 0)`;
//! - per acknowledged packet (§3.3 `UpdateRateSample`): `C.delivered += P.size`,
//!   `C.delivered_time = now`; the packet with the largest `P.delivered` (ties: the later
//!   sent, the one processed last) gives the sample's `prior_delivered`, `prior_time`,
//!   `is_app_limited`, `send_elapsed = P.sent_time − P.first_sent_time`,
//!   `ack_elapsed = C.delivered_time − P.delivered_time`, `rtt = now − P.sent_time`, and
//!   `C.first_sent_time = P.sent_time`;
//! - per ACK (§3.3 `GenerateRateSample`): the app-limited bubble ends once
//!   `C.delivered > C.app_limited`; `interval = max(send_elapsed, ack_elapsed)`,
//!   `delivered = C.delivered − prior_delivered`; no rate when nothing was acknowledged or
//!   when `interval < min_rtt` (§3.3: an interval shorter than the minimum RTT comes from
//!   ACK compression or stretch ACKs and would overestimate); else
//!   `delivery_rate = delivered / interval`;
//! - app-limited (§3.4): when a packet is sent with nothing more to send,
//!   `C.app_limited = max(C.delivered + inflight, 1)`: every sample taken until that many
//!   bytes are delivered is marked app-limited.
//!
//! Integer arithmetic only: bytes, nanoseconds, rates in bytes per second (rounded down).

use crate::time::{SimDuration, SimTime};
use std::collections::BTreeMap;

/// What the sampler remembers of one sent packet (draft §3.1 per-packet state).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PacketState {
    size: u64,
    sent_time: SimTime,
    delivered: u64,
    delivered_time: SimTime,
    first_sent_time: SimTime,
    is_app_limited: bool,
    /// Sent again under the same identifier (a TCP retransmission): its acknowledgement
    /// may be for either transmission, so it gives no RTT sample (Karn's rule).
    retransmitted: bool,
    /// `P.tx_in_flight`: bytes in flight just after this packet was sent (draft-ietf-ccwg-bbr
    /// §4.1.2.2).
    tx_in_flight: u64,
    /// `P.lost`: `C.lost` when this packet was sent (draft-ietf-ccwg-bbr §4.1.2.2).
    lost: u64,
}

/// One rate sample, produced per ACK (draft §3.3 `rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateSample {
    /// Bytes per second delivered over [`RateSample::interval`]; `None` when the ACK gives
    /// no valid sample (nothing newly acknowledged, or an interval shorter than the
    /// minimum RTT).
    pub delivery_rate: Option<u64>,
    /// Bytes delivered over the interval (`C.delivered − rs.prior_delivered`).
    pub delivered: u64,
    /// `max(send_elapsed, ack_elapsed)`.
    pub interval: SimDuration,
    /// Send-side part of the interval.
    pub send_elapsed: SimDuration,
    /// ACK-side part of the interval.
    pub ack_elapsed: SimDuration,
    /// `C.delivered` when the sample's packet was sent.
    pub prior_delivered: u64,
    /// The sample's packet was sent while the sender was application-limited.
    pub is_app_limited: bool,
    /// `now − P.sent_time` of the sample's packet (`None` when nothing was acknowledged).
    pub rtt: Option<SimDuration>,
    /// The RTT of the newest acknowledged packet that was never sent twice under its
    /// identifier: Karn's rule (RFC 6298 §3; Linux takes the `ca_rtt_us` it hands to a
    /// controller only from segments without `TCPCB_RETRANS`). An acknowledgement of a
    /// retransmitted TCP segment may be for the original, sent an RTO or a RACK window
    /// earlier, so `now −` the retransmission's time can be far below the path's RTT.
    /// What a minimum-RTT filter may use; `None` when every acknowledged packet was
    /// retransmitted. QUIC never reuses a packet number: there it equals `rtt`.
    pub karn_rtt: Option<SimDuration>,
    /// Bytes this ACK newly acknowledged.
    pub newly_acked: u64,
    /// Bytes declared lost since the previous sample.
    pub newly_lost: u64,
    /// The connection's total delivered bytes after this ACK (`C.delivered`).
    pub total_delivered: u64,
    /// Bytes in flight after the ACK was processed (reported by the transport).
    pub bytes_in_flight: u64,
    /// `RS.tx_in_flight` (draft-ietf-ccwg-bbr §2.3): bytes in flight just after the
    /// sample's packet was sent (0 when nothing was acknowledged).
    pub tx_in_flight: u64,
    /// `RS.lost` (draft-ietf-ccwg-bbr §2.3): bytes declared lost between the sending of
    /// the sample's packet and this ACK (`C.lost − P.lost`; 0 when nothing was
    /// acknowledged).
    pub lost: u64,
}

/// The connection-wide state of the rate sampler (draft §3.1 `C`) and each outstanding
/// packet's state, keyed by the transport's packet identifier (a `BTreeMap`: ordered,
/// deterministic).
#[derive(Clone, Debug, Default)]
pub struct RateSampler {
    delivered: u64,
    delivered_time: SimTime,
    first_sent_time: SimTime,
    /// `C.app_limited`: 0 when not app-limited, else the delivered count that ends it.
    app_limited: u64,
    /// `C.lost`: bytes declared lost so far.
    lost: u64,
    packets: BTreeMap<u64, PacketState>,
    // The sample being built for the current ACK.
    rs: RateSample,
    has_packet: bool,
    /// `P.delivered` of the packet that gave the sample's `karn_rtt`.
    karn_delivered: u64,
    lost_pending: u64,
}

impl RateSampler {
    /// A sampler with nothing sent.
    pub fn new() -> Self {
        RateSampler::default()
    }

    /// Bytes delivered so far (`C.delivered`).
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// The app-limited mark (`C.app_limited`; 0: not app-limited).
    pub fn app_limited(&self) -> u64 {
        self.app_limited
    }

    /// Packets currently remembered.
    pub fn tracked(&self) -> usize {
        self.packets.len()
    }

    /// Packet `id` of `size` bytes was sent (or retransmitted) at `now` with
    /// `bytes_in_flight_before` bytes in flight before it; `app_limited_after`: the
    /// sender has nothing more to send after it (draft §3.4).
    pub fn on_packet_sent(
        &mut self,
        id: u64,
        now: SimTime,
        size: u64,
        bytes_in_flight_before: u64,
        app_limited_after: bool,
    ) {
        if bytes_in_flight_before == 0 {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        // Sent again under the same identifier: a retransmission (Karn, `karn_rtt`).
        let retransmitted = self.packets.contains_key(&id);
        self.packets.insert(
            id,
            PacketState {
                size,
                sent_time: now,
                delivered: self.delivered,
                delivered_time: self.delivered_time,
                first_sent_time: self.first_sent_time,
                is_app_limited: self.app_limited != 0,
                retransmitted,
                tx_in_flight: bytes_in_flight_before.saturating_add(size),
                lost: self.lost,
            },
        );
        if app_limited_after {
            let inflight = bytes_in_flight_before.saturating_add(size);
            self.app_limited = self.delivered.saturating_add(inflight).max(1);
        }
    }

    /// Packet `id` was newly acknowledged at `now` (draft §3.3 `UpdateRateSample`).
    /// Unknown identifiers (already acknowledged, forgotten) are ignored.
    pub fn on_packet_acked(&mut self, id: u64, now: SimTime) {
        let Some(p) = self.packets.remove(&id) else {
            return;
        };
        self.delivered = self.delivered.saturating_add(p.size);
        self.delivered_time = now;
        self.rs.newly_acked = self.rs.newly_acked.saturating_add(p.size);
        if !self.has_packet || p.delivered >= self.rs.prior_delivered {
            self.has_packet = true;
            self.rs.prior_delivered = p.delivered;
            self.rs.is_app_limited = p.is_app_limited;
            self.rs.send_elapsed = p.sent_time.saturating_since(p.first_sent_time);
            self.rs.ack_elapsed = self.delivered_time.saturating_since(p.delivered_time);
            self.rs.rtt = Some(now.saturating_since(p.sent_time));
            self.rs.tx_in_flight = p.tx_in_flight;
            self.rs.lost = p.lost;
            self.first_sent_time = p.sent_time;
        }
        if !p.retransmitted && p.delivered >= self.karn_delivered {
            self.karn_delivered = p.delivered;
            self.rs.karn_rtt = Some(now.saturating_since(p.sent_time));
        }
    }

    /// Packet `id` was declared lost: its bytes count in the next sample's
    /// [`RateSample::newly_lost`] and it is forgotten.
    pub fn on_packet_lost(&mut self, id: u64) {
        if let Some(p) = self.packets.remove(&id) {
            self.lost_pending = self.lost_pending.saturating_add(p.size);
            self.lost = self.lost.saturating_add(p.size);
        }
    }

    /// `bytes` were declared lost while their packet stays remembered (a TCP segment
    /// marked lost may still be acknowledged, or is retransmitted under the same key).
    pub fn count_lost(&mut self, bytes: u64) {
        self.lost_pending = self.lost_pending.saturating_add(bytes);
        self.lost = self.lost.saturating_add(bytes);
    }

    /// Packet `id` left without acknowledgement or loss (a discarded packet number space,
    /// a migration): forgotten.
    pub fn forget(&mut self, id: u64) {
        self.packets.remove(&id);
    }

    /// The sample of the ACK just processed (draft §3.3 `GenerateRateSample`), with
    /// `min_rtt` the path's minimum RTT (zero: unknown, no filtering) and
    /// `bytes_in_flight` after the ACK. Starts the next ACK's sample.
    pub fn generate(&mut self, min_rtt: SimDuration, bytes_in_flight: u64) -> RateSample {
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let mut rs = std::mem::take(&mut self.rs);
        rs.newly_lost = std::mem::take(&mut self.lost_pending);
        rs.total_delivered = self.delivered;
        rs.bytes_in_flight = bytes_in_flight;
        let has_packet = std::mem::take(&mut self.has_packet);
        self.karn_delivered = 0;
        if !has_packet {
            return rs;
        }
        // RS.lost: the field held P.lost until now.
        rs.lost = self.lost.saturating_sub(rs.lost);
        rs.interval = rs.send_elapsed.max(rs.ack_elapsed);
        rs.delivered = self.delivered - rs.prior_delivered;
        if rs.interval.as_nanos() == 0 || rs.interval < min_rtt {
            return rs;
        }
        rs.delivery_rate =
            Some((rs.delivered as u128 * 1_000_000_000 / rs.interval.as_nanos() as u128) as u64);
        rs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Karn's rule (RFC 6298 §3): an acknowledgement of a packet sent twice under one
    /// identifier gives no `karn_rtt` (it may answer the first transmission); a packet sent
    /// once still does, and `rtt` keeps describing the sample's packet.
    #[test]
    fn a_retransmitted_packet_gives_no_karn_rtt() {
        let mut r = RateSampler::new();
        r.on_packet_sent(1, ms(0), 1000, 0, false);
        r.on_packet_sent(2, ms(10), 1000, 1000, false);
        // 1 is sent again at 100 ms; the ACK at 105 ms may be for its first copy.
        r.on_packet_sent(1, ms(100), 1000, 1000, false);
        r.on_packet_acked(1, ms(105));
        let rs = r.generate(SimDuration::ZERO, 1000);
        assert_eq!(rs.rtt, Some(SimDuration::from_millis(5)));
        assert_eq!(rs.karn_rtt, None);
        // Packet 2, sent once: its RTT counts.
        r.on_packet_acked(2, ms(150));
        let rs = r.generate(SimDuration::ZERO, 0);
        assert_eq!(rs.karn_rtt, Some(SimDuration::from_millis(140)));
        assert_eq!(rs.rtt, rs.karn_rtt);
    }

    fn ms(x: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(x)
    }

    /// A hand-worked example in the draft's terms: 1000-byte packets, a 100 ms RTT path
    /// that delivers one packet per 10 ms (100 kB/s).
    #[test]
    fn hand_worked_example() {
        let mut s = RateSampler::new();
        let d = |x| SimDuration::from_millis(x);
        // t = 0..40 ms: packets 0..4 sent 10 ms apart (paced); inflight before packet k is
        // k·1000. Packet 0 starts the flight: first_sent_time = delivered_time = 0.
        for k in 0..5u64 {
            s.on_packet_sent(k, ms(10 * k), 1000, 1000 * k, false);
        }
        // t = 100 ms: packet 0 acknowledged. Its P.delivered = 0, P.delivered_time = 0,
        // send_elapsed = 0 − 0 = 0, ack_elapsed = 100 − 0 = 100 ms: 1000 B / 100 ms.
        s.on_packet_acked(0, ms(100));
        let rs = s.generate(d(100), 4000);
        assert_eq!(rs.delivered, 1000);
        assert_eq!(rs.interval, d(100));
        assert_eq!(rs.rtt, Some(d(100)));
        assert_eq!(rs.delivery_rate, Some(10_000));
        assert_eq!(rs.total_delivered, 1000);
        // t = 100 ms: packet 5 is sent: it records delivered = 1000, delivered_time = 100,
        // first_sent_time = 0 (packet 0's send time, set by its ACK).
        s.on_packet_sent(5, ms(100), 1000, 4000, false);
        // t = 110..140 ms: packets 1..4 acknowledged one per 10 ms; each recorded
        // P.delivered = 0 at delivered_time 0, so packet k's sample covers (k+1)·1000 B
        // over ack_elapsed = 100 + 10·k ms (> send_elapsed = 10·k ms).
        for k in 1..5u64 {
            s.on_packet_acked(k, ms(100 + 10 * k));
            let rs = s.generate(d(100), 0);
            assert_eq!(rs.delivered, 1000 * (k + 1));
            assert_eq!(rs.interval, d(100 + 10 * k));
        }
        // t = 200 ms: packet 5 acknowledged (P.delivered = 1000 at delivered_time 100 ms,
        // P.first_sent_time = 0: packet 0's send time, which its ACK made the flight's
        // start): send_elapsed = 100 − 0 = 100 ms, ack_elapsed = 200 − 100 = 100 ms,
        // delivered = 6000 − 1000 = 5000 B: 5000 B / 100 ms = 50 kB/s.
        s.on_packet_acked(5, ms(200));
        let rs = s.generate(d(100), 0);
        assert_eq!(rs.send_elapsed, d(100));
        assert_eq!(rs.ack_elapsed, d(100));
        assert_eq!(rs.prior_delivered, 1000);
        assert_eq!(rs.delivered, 5000);
        assert_eq!(rs.delivery_rate, Some(50_000));
        assert_eq!(rs.rtt, Some(d(100)));
        assert_eq!(s.tracked(), 0);
    }

    #[test]
    fn send_elapsed_dominates_for_a_slow_sender() {
        // Packets sent 50 ms apart, ACKed in a burst: the send interval bounds the rate.
        let mut s = RateSampler::new();
        s.on_packet_sent(0, ms(0), 1000, 0, false);
        s.on_packet_sent(1, ms(50), 1000, 1000, false);
        s.on_packet_acked(0, ms(60));
        let _ = s.generate(SimDuration::ZERO, 1000);
        s.on_packet_sent(2, ms(100), 1000, 1000, false);
        s.on_packet_acked(1, ms(101));
        s.on_packet_acked(2, ms(102));
        let rs = s.generate(SimDuration::ZERO, 0);
        // Packet 2: P.delivered = 1000 (time 60 ms), first_sent_time = 0 ms.
        // send_elapsed = 100 ms, ack_elapsed = 102 − 60 = 42 ms, delivered = 2000 B.
        assert_eq!(rs.send_elapsed, SimDuration::from_millis(100));
        assert_eq!(rs.ack_elapsed, SimDuration::from_millis(42));
        assert_eq!(rs.delivery_rate, Some(20_000));
        assert_eq!(rs.newly_acked, 2000);
    }

    #[test]
    fn app_limited_bubble_and_min_rtt_filter_and_losses() {
        let mut s = RateSampler::new();
        // Packet 0 sent with nothing more to send: C.app_limited = 0 + 1000.
        s.on_packet_sent(0, ms(0), 1000, 0, true);
        assert_eq!(s.app_limited(), 1000);
        // Packet 1 is sent inside the bubble: app-limited.
        s.on_packet_sent(1, ms(5), 1000, 1000, false);
        s.on_packet_acked(0, ms(100));
        let rs = s.generate(SimDuration::from_millis(100), 1000);
        assert!(!rs.is_app_limited);
        // Delivered (1000) is not above the mark (1000): still app-limited.
        assert_eq!(s.app_limited(), 1000);
        s.on_packet_lost(1);
        s.on_packet_sent(2, ms(100), 1000, 0, false);
        assert!(s.packets[&2].is_app_limited);
        s.on_packet_acked(2, ms(150));
        // Interval 50 ms < min RTT 100 ms: no rate; the loss is reported once.
        let rs = s.generate(SimDuration::from_millis(100), 0);
        assert_eq!(rs.delivery_rate, None);
        assert_eq!(rs.newly_lost, 1000);
        assert!(rs.is_app_limited);
        assert_eq!(
            s.app_limited(),
            0,
            "2000 delivered > 1000: the bubble ended"
        );
        assert_eq!(s.generate(SimDuration::ZERO, 0).newly_lost, 0);
    }
}

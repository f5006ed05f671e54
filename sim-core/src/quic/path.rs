//! A network path's state (quinn-proto keeps the same split): loss recovery with its RTT
//! estimator and congestion controller (RFC 9002), the pacer (RFC 9002 §7.7), the
//! anti-amplification accounting (RFC 9000 §8.1) and path validation (RFC 9000 §8.2).
//!
//! A connection has one active [`Path`]. At a migration (RFC 9000 §9, `quic::migration`)
//! the path's anti-amplification accounting restarts (server) and its validation starts;
//! loss recovery stays one context (RFC 9000 §9.4 allows it) whose controller and RTT
//! estimator the window policy replaces once the new path is validated. The
//! connection-wide state (packet number spaces, streams, flow control) stays in the
//! connection.

use super::connection::SentInfo;
use super::recovery::Recovery;
use crate::transport::pacer::Pacer;

/// Anti-amplification factor (RFC 9000 §8.1).
pub const AMPLIFICATION_FACTOR: u64 = 3;

/// A budget smaller than this does not fit even a minimal packet: the sender is at the
/// limit (RFC 9002 §6.2.2.1: no PTO is armed then).
pub const AMPLIFICATION_MIN_PACKET: u64 = 64;

/// Anti-amplification accounting of an unvalidated peer address (RFC 9000 §8.1): at most
/// three times the bytes received may be sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AntiAmplification {
    /// Bytes received on the path (all of them, even of discarded packets).
    received: u64,
    /// Bytes sent while the address was not validated.
    sent: u64,
    /// The peer's address is validated: no limit.
    validated: bool,
}

impl AntiAmplification {
    /// A path whose address is `validated` already (a client's view of the server) or not.
    pub fn new(validated: bool) -> Self {
        AntiAmplification {
            validated,
            ..Self::default()
        }
    }

    /// The address is validated.
    pub fn is_validated(&self) -> bool {
        self.validated
    }

    /// The address is validated from now on (RFC 9000 §8.1: a Handshake packet, or a
    /// valid token, §8.1.3).
    pub fn validate(&mut self) {
        self.validated = true;
    }

    /// Bytes received on the path.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Bytes sent while the address was not validated.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// `bytes` arrived from the peer.
    pub fn on_received(&mut self, bytes: u64) {
        self.received += bytes;
    }

    /// `bytes` were sent to the peer (counted while unvalidated).
    pub fn on_sent(&mut self, bytes: u64) {
        if !self.validated {
            self.sent += bytes;
        }
        debug_assert!(
            self.validated || self.sent <= AMPLIFICATION_FACTOR * self.received,
            "amplification limit exceeded"
        );
    }

    /// Bytes that may still be sent (`u64::MAX` once validated).
    pub fn budget(&self) -> u64 {
        if self.validated {
            u64::MAX
        } else {
            (AMPLIFICATION_FACTOR * self.received).saturating_sub(self.sent)
        }
    }

    /// Not even a minimal packet fits.
    pub fn at_limit(&self) -> bool {
        !self.validated && self.budget() < AMPLIFICATION_MIN_PACKET
    }
}

/// Path validation state (RFC 9000 §8.2): the responder's side (PATH_CHALLENGE data to
/// echo in PATH_RESPONSE frames, §8.2.2) and the challenger's (challenges sent and not
/// yet answered, §8.2.1, and the deadline after which validation is abandoned, §8.2.4).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathValidation {
    /// PATH_CHALLENGE data received and not yet answered, oldest first.
    pub responses_pending: Vec<u64>,
    /// A new PATH_CHALLENGE is owed (validation started, or a PTO fired while validating:
    /// PATH_CHALLENGE is never retransmitted, a new one with new data is sent, §13.3).
    pub challenge_pending: bool,
    /// PATH_CHALLENGE data sent and not answered, with when each was sent.
    pub challenges: Vec<(u64, crate::time::SimTime)>,
    /// Validation is abandoned at this instant (`None`: not validating).
    pub deadline: Option<crate::time::SimTime>,
    /// Challenges sent so far (makes each challenge's data distinct).
    pub challenges_sent: u64,
    /// A new PATH_CHALLENGE is owed at this instant if no PATH_RESPONSE came by then
    /// (`None`: none sent yet, or validation over). Either frame can be lost, and an
    /// acknowledged challenge does not mean its response arrived, so the challenger
    /// probes again: never more often than an Initial packet would be sent (RFC 9000
    /// §8.2.1), i.e. a PTO after the first challenge, doubling for each further one
    /// (RFC 9002 §6.2.1 backoff); PATH_CHALLENGE is never retransmitted, a new one with
    /// new data is sent (§13.3).
    pub retry_at: Option<crate::time::SimTime>,
}

impl PathValidation {
    /// The path is being validated.
    pub fn is_validating(&self) -> bool {
        self.deadline.is_some()
    }

    /// Starts validating until `deadline`: a PATH_CHALLENGE is owed.
    pub fn start(&mut self, deadline: crate::time::SimTime) {
        self.challenge_pending = true;
        self.challenges.clear();
        self.retry_at = None;
        self.deadline = Some(deadline);
    }

    /// After a challenge was sent at `now` (the `n`-th of this validation, counting
    /// from 1), the next one is owed at `now + pto · 2^(n-1)` unless a response comes
    /// first (RFC 9000 §8.2.1: no more often than Initial packets, whose PTO backs off
    /// exponentially, RFC 9002 §6.2.1).
    pub fn arm_retry(&mut self, now: crate::time::SimTime, pto: crate::time::SimDuration) {
        let n = self.challenges.len().max(1) as u32;
        let factor = 1u64.checked_shl(n - 1).unwrap_or(u64::MAX);
        self.retry_at = Some(now.saturating_add(pto.saturating_mul(factor)));
    }

    /// The retry instant passed without a response: a new challenge is owed.
    pub fn on_retry(&mut self) {
        self.retry_at = None;
        self.challenge_pending = true;
    }

    /// The data of the next PATH_CHALLENGE, recorded as sent at `now`. RFC 9000 §8.2.1
    /// asks for unpredictable data; distinct values per connection side are all a
    /// simulation needs (`salt` separates client and server).
    pub fn next_challenge(&mut self, now: crate::time::SimTime, salt: u64) -> u64 {
        self.challenges_sent += 1;
        let data = (salt << 32) | self.challenges_sent;
        self.challenges.push((data, now));
        self.challenge_pending = false;
        data
    }

    /// A PATH_RESPONSE echoed `data`: when the matching challenge was sent, if it is one
    /// of ours (validation then succeeded and stops).
    pub fn on_response(&mut self, data: u64) -> Option<crate::time::SimTime> {
        let sent = self.challenges.iter().find(|(d, _)| *d == data)?.1;
        self.stop();
        Some(sent)
    }

    /// Stops validating (succeeded or abandoned).
    pub fn stop(&mut self) {
        self.challenges.clear();
        self.challenge_pending = false;
        self.retry_at = None;
        self.deadline = None;
    }
}

/// One network path of a connection.
#[derive(Debug)]
pub struct Path {
    /// Loss detection, RTT and congestion control (RFC 9002).
    pub recovery: Recovery<SentInfo>,
    /// The pacer.
    pub pacer: Pacer,
    /// Anti-amplification accounting.
    pub amplification: AntiAmplification,
    /// Path validation.
    pub validation: PathValidation,
}

impl Path {
    /// A path with its recovery state and pacer; `validated`: the peer's address needs no
    /// anti-amplification limit.
    pub fn new(recovery: Recovery<SentInfo>, mut pacer: Pacer, validated: bool) -> Self {
        pacer.set_rate(recovery.cc().pacing_rate());
        Path {
            recovery,
            pacer,
            amplification: AntiAmplification::new(validated),
            validation: PathValidation::default(),
        }
    }

    /// The pacing gain in permille for the controller's current phase.
    pub fn pacing_gain(&self) -> u64 {
        self.pacer.gain(self.recovery.cc().in_slow_start())
    }

    /// Refills the pacer from the current window and smoothed RTT (or at the
    /// controller's own pacing rate, which is taken up first).
    pub fn pacer_refill(&mut self, now: crate::time::SimTime) {
        self.pacer.set_rate(self.recovery.cc().pacing_rate());
        let srtt = self.recovery.rtt().smoothed_rtt();
        let in_ss = self.recovery.cc().in_slow_start();
        self.pacer.refill(now, srtt, self.recovery.cwnd(), in_ss);
    }

    /// When the pacer will release a full datagram (`None`: now, or pacing off).
    pub fn pacer_release_time(&self) -> Option<crate::time::SimTime> {
        let srtt = self.recovery.rtt().smoothed_rtt();
        let in_ss = self.recovery.cc().in_slow_start();
        self.pacer.release_time(srtt, self.recovery.cwnd(), in_ss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amplification_budget_is_three_times_received_until_validated() {
        let mut a = AntiAmplification::new(false);
        assert!(a.at_limit());
        a.on_received(1200);
        assert_eq!(a.budget(), 3600);
        a.on_sent(3580);
        assert!(a.at_limit());
        a.validate();
        assert_eq!(a.budget(), u64::MAX);
        assert!(!a.at_limit());
    }
}

//! A network path's state (quinn-proto keeps the same split): loss recovery with its RTT
//! estimator and congestion controller (RFC 9002), the pacer (RFC 9002 §7.7), the
//! anti-amplification accounting (RFC 9000 §8.1) and path validation (RFC 9000 §8.2).
//!
//! A connection has one [`Path`] today. Connection migration (RFC 9000 §9) will add a
//! second one: everything that must restart on a new path lives here, so a migrating
//! connection holds `Path`s and switches the active one; the connection-wide state (packet
//! number spaces, streams, flow control) stays in the connection.

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

/// Path validation state (RFC 9000 §8.2). Today only the responder's side: PATH_CHALLENGE
/// data to echo in PATH_RESPONSE frames (§8.2.2). Migration adds the challenger's side.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathValidation {
    /// PATH_CHALLENGE data received and not yet answered, oldest first.
    pub responses_pending: Vec<u64>,
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
    pub fn new(recovery: Recovery<SentInfo>, pacer: Pacer, validated: bool) -> Self {
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

    /// Refills the pacer from the current window and smoothed RTT.
    pub fn pacer_refill(&mut self, now: crate::time::SimTime) {
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

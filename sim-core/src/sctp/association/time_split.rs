//! "Where the time went" ([`crate::breakdown`]) for an SCTP sender: its state at every send
//! opportunity, classified by the rules the module documentation lists for SCTP.

use super::{Controller, SctpAssociation};
use crate::breakdown::{BreakdownClock, TimeBreakdown, TimePart};
use crate::time::SimTime;

impl SctpAssociation {
    /// The part the sender is in now; first match wins (see [`crate::breakdown`]).
    fn breakdown_part(&self) -> TimePart {
        if self.handshake_at.is_none() {
            // INIT, INIT-ACK, COOKIE-ECHO, COOKIE-ACK (RFC 9260 §5.1); DATA bundled with
            // the COOKIE-ECHO counts here.
            return TimePart::Handshake;
        }
        let recovering = match &self.cc {
            // RFC 9260 §7.2.4: Fast Recovery until the recorded highest TSN is acked.
            Controller::Rfc(c) => c.in_fast_recovery(),
            Controller::Shared(c) => c.recovering(),
        };
        // Fast Recovery, a T3-rtx expiry not yet followed by a SACK of new data (§6.3.3),
        // or chunks marked for retransmission waiting (§6.3.3 E3, §7.2.4).
        if recovering || self.rec.t3_hold != super::T3Hold::Off || !self.rec.rtx.is_empty() {
            return TimePart::LossRecovery;
        }
        let Some(id) = self.streams.next_sendable() else {
            return if self.rec.flight == 0 {
                TimePart::Idle
            } else {
                self.window_phase() // the last flight on its way
            };
        };
        // RFC 9260 §6.1 A: new DATA only within the peer's rwnd (a_rwnd less the bytes
        // outstanding, §6.2.1), except one chunk when nothing is outstanding.
        let next = self
            .streams
            .send_streams
            .get(&id)
            .and_then(|s| s.msgs.front())
            .map_or(0, |m| (m.len - m.cut).min(self.cfg.pmdcs()));
        if next > self.peer_rwnd && !self.rec.sent.is_empty() {
            TimePart::FlowControl
        } else {
            self.window_phase()
        }
    }

    /// Slow start (`cwnd <= ssthresh`, RFC 9260 §7.2.1) or congestion avoidance (§7.2.2).
    fn window_phase(&self) -> TimePart {
        TimePart::window_phase(match &self.cc {
            Controller::Rfc(c) => c.in_slow_start(),
            Controller::Shared(c) => c.in_slow_start(),
        })
    }

    /// A send opportunity found nothing to send at `now`: the time from now on goes to
    /// the part the sender is in.
    pub(crate) fn note_send_opportunity(&mut self, now: SimTime) {
        if self.breakdown.origin() != self.started_at {
            // A server's association starts when the INIT arrives (its metrics count
            // from there): so does its split.
            self.start_breakdown(self.started_at);
        }
        let part = self.breakdown_part();
        self.breakdown.set(now, part);
    }

    /// Restarts the accounting at the association start `now`.
    pub(crate) fn start_breakdown(&mut self, now: SimTime) {
        self.breakdown = BreakdownClock::new(now, TimePart::Handshake);
    }

    /// Closes the accounting at `now` (the transfer completed).
    pub(crate) fn freeze_breakdown(&mut self, now: SimTime) {
        self.breakdown.freeze(now);
    }

    /// The split from the association start up to `now` (or up to the freeze).
    pub(crate) fn time_breakdown(&self, now: SimTime) -> TimeBreakdown {
        self.breakdown.at(now)
    }
}

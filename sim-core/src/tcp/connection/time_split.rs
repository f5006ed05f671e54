//! "Where the time went" ([`crate::breakdown`]) for a TCP sender: its state at every send
//! opportunity, classified by the rules the module documentation lists for TCP.

use super::TcpConnection;
use crate::breakdown::{BreakdownClock, TimeBreakdown, TimePart};
use crate::time::SimTime;

impl TcpConnection {
    /// The part the sender is in now; first match wins (see [`crate::breakdown`]).
    fn breakdown_part(&self) -> TimePart {
        if self.connected_at.is_none() {
            // The three-way handshake (RFC 9293 §3.5) and the TLS rounds on the stream.
            return TimePart::Handshake;
        }
        // Fast recovery (RFC 6675 §5 / RFC 6582 §3.2) or the recovery after an RTO (the
        // recovery point is set on both, RFC 6298 §5.4-5.7), an RTO backed off and not yet
        // reset by a new RTT sample, or segments marked lost waiting for retransmission.
        if self.rec.ca != super::CaState::Open
            || self.rtx_timer.backoff > 0
            || !self.sb.retx.is_empty()
        {
            return TimePart::LossRecovery;
        }
        let waiting = self.send.stream_end > self.snd_nxt || self.send.mux.has_pending();
        if !waiting {
            return if self.sb.pipe == 0 {
                TimePart::Idle
            } else {
                self.window_phase() // the last flight on its way
            };
        }
        // RFC 9293 §3.8.6: never beyond the peer's window; the sender waits rather than
        // send a sliver of it (sender-side SWS avoidance, §3.8.6.2.1), as `next_data_segment`.
        let room = self.peer_right_edge.saturating_sub(self.snd_nxt);
        let want = (self.send.stream_end - self.snd_nxt).clamp(1, self.smss);
        if room == 0 || room < want / 2 {
            TimePart::FlowControl
        } else {
            self.window_phase()
        }
    }

    /// Slow start (`cwnd < ssthresh`, RFC 5681 §3.1) or congestion avoidance.
    fn window_phase(&self) -> TimePart {
        TimePart::window_phase(self.cc.in_slow_start())
    }

    /// A send opportunity found nothing to send at `now`: the time from now on goes to
    /// the part the sender is in.
    pub(crate) fn note_send_opportunity(&mut self, now: SimTime) {
        let part = self.breakdown_part();
        self.breakdown.set(now, part);
    }

    /// Restarts the accounting at the connection start `now`.
    pub(crate) fn start_breakdown(&mut self, now: SimTime) {
        self.breakdown = BreakdownClock::new(now, TimePart::Handshake);
    }

    /// Closes the accounting at `now` (the transfer completed).
    pub(crate) fn freeze_breakdown(&mut self, now: SimTime) {
        self.breakdown.freeze(now);
    }

    /// The split from the connection start up to `now` (or up to the freeze).
    pub(crate) fn time_breakdown(&self, now: SimTime) -> TimeBreakdown {
        self.breakdown.at(now)
    }
}

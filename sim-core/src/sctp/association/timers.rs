//! The association's timers in one table (as QUIC's `quic/timers.rs` and TCP's): each
//! deadline stays with its owner (T1 with the handshake, T3-rtx with the sender, the
//! delayed SACK with the receiver) and [`SctpAssociation::timer`] reads the table.

use super::*;

/// One of the association's timers, in the order they are served when due together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Timer {
    /// The delayed SACK (RFC 9260 §6.2).
    Sack,
    /// T1-init / T1-cookie (§5.1).
    T1,
    /// T3-rtx (§6.3.2).
    T3,
}

impl Timer {
    /// Every timer, in table order.
    pub(super) const ALL: [Timer; 3] = [Timer::Sack, Timer::T1, Timer::T3];
}

impl SctpAssociation {
    /// The deadline of timer `t`, if armed (read from the state that owns it).
    pub(super) fn timer(&self, t: Timer) -> Option<SimTime> {
        match t {
            Timer::Sack => self.rx.sack_timer,
            Timer::T1 => self.hs.t1,
            Timer::T3 => self.rec.t3,
        }
    }

    /// The earliest deadline.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        if self.is_closed() {
            return None;
        }
        Timer::ALL.into_iter().filter_map(|t| self.timer(t)).min()
    }

    /// A deadline came.
    pub fn handle_timeout(&mut self, now: SimTime) {
        self.burst_left = self.cfg.max_burst;
        if self.rx.sack_timer.is_some_and(|t| t <= now) {
            self.rx.sack_timer = None;
            if self.rx.sack_pending {
                self.rx.sack_now = true;
            }
        }
        if self.hs.t1.is_some_and(|t| t <= now) {
            self.hs.t1 = None;
            self.hs.init_retransmits += 1;
            if self.hs.init_retransmits > self.cfg.max_init_retransmits {
                self.end(now, CloseKind::IdleTimeout);
                return;
            }
            // §5.1 C / §6.3.3: the T1 timer backs off like the RTO.
            self.rec.rto = (self.rec.rto.saturating_mul(2)).min(self.cfg.rto_max);
            self.stats.handshake_retransmits += 1;
            match self.state {
                AssocState::CookieWait => self.hs.send_init = true,
                AssocState::CookieEchoed => {
                    self.hs.send_cookie_echo = true;
                    self.hs.cookie_echo_resend = true;
                }
                _ => {}
            }
        }
        if self.rec.t3.is_some_and(|t| t <= now) {
            self.rec.t3 = None;
            self.on_t3_expiry(now);
        }
        self.trace_metrics(now);
    }
}

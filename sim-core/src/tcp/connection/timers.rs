//! The connection's timers in one table (as quinn-proto's `TimerTable`, and QUIC's
//! `quic/timers.rs`): [`Timer`] names them in the order
//! [`TcpConnection::handle_timeout`] serves them; each deadline stays with the state
//! that owns it (the delayed ACK with the receiver, the probe with [`Tlp`], the
//! reordering timer with RACK, the retransmission timer in [`RetransmissionTimer`]), and
//! [`TcpConnection::timer`] reads the table from them.
//!
//! [`Tlp`]: crate::tcp::recovery::Tlp

use super::{TcpConnection, TcpState, CLOCK_GRANULARITY};
use crate::config::tcp::RtoFormula;
use crate::time::{SimDuration, SimTime};

/// One of the connection's timers, in the order they are served when due together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Timer {
    /// The delayed ACK (RFC 5681 §4.2, RFC 1122 §4.2.3.2).
    DelayedAck,
    /// The tail loss probe (RFC 8985 §7).
    LossProbe,
    /// RACK's reordering timer (RFC 8985 §6.3).
    Reordering,
    /// The retransmission timer (RFC 6298).
    Retransmission,
}

impl Timer {
    /// Every timer, in table order.
    pub(super) const ALL: [Timer; 4] = [
        Timer::DelayedAck,
        Timer::LossProbe,
        Timer::Reordering,
        Timer::Retransmission,
    ];
}

/// The retransmission timer (RFC 6298 §5) and its exponential backoff (§5.5).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct RetransmissionTimer {
    /// When it expires, if armed.
    pub(super) deadline: Option<SimTime>,
    /// The backoff exponent (RFC 6298 §5.5; reset by an RTT sample, §5.7).
    pub(super) backoff: u32,
    /// Timeouts since the cumulative ACK last advanced (Linux `icsk_retransmits`).
    pub(super) timeouts: u32,
}

impl TcpConnection {
    /// The deadline of timer `t`, if armed (read from the state that owns it).
    pub(super) fn timer(&self, t: Timer) -> Option<SimTime> {
        match t {
            Timer::DelayedAck => self.rx.delack_deadline,
            Timer::LossProbe => self.rec.tlp.deadline,
            Timer::Reordering => self.rec.reo_deadline,
            Timer::Retransmission => self.rtx_timer.deadline,
        }
    }

    /// The current RTO (RFC 6298 §2, §5.5): `max(rto_min, SRTT + max(G, 4 RTTVAR))`
    /// (`initial_rto` before the first sample), doubled per backoff, at most `rto_max`.
    pub fn rto(&self) -> SimDuration {
        let base = if !self.rtt.has_sample() {
            self.cfg.initial_rto.max(self.cfg.rto_min)
        } else {
            match self.cfg.rto_formula {
                // RFC 6298 §2.3-2.4.
                RtoFormula::Rfc6298 => self.rtt.pto_base(CLOCK_GRANULARITY).max(self.cfg.rto_min),
                // Linux tcp_set_rto: srtt + rttvar, rttvar floored at tcp_rto_min.
                RtoFormula::Linux => self
                    .rtt
                    .smoothed_rtt()
                    .saturating_add(self.rtt.rttvar().saturating_mul(4).max(self.cfg.rto_min)),
            }
        };
        let factor = 1u64 << self.rtx_timer.backoff.min(32);
        base.saturating_mul(factor).min(self.cfg.rto_max)
    }

    /// The earliest timer.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        if self.close.is_closed() {
            return None;
        }
        // The earliest armed timer of the table, without an iterator chain.
        let earliest = |a: Option<SimTime>, b: Option<SimTime>| match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, None) => x,
            (None, y) => y,
        };
        let [a, b, c, d] = Timer::ALL.map(|k| self.timer(k));
        let mut t = earliest(earliest(a, b), earliest(c, d));
        if self.pacer.is_enabled() && self.state == TcpState::Established && self.has_sendable() {
            if let Some(r) = self.pacer.release_time(
                self.rtt.smoothed_rtt(),
                self.send_window(),
                self.cc.in_slow_start(),
            ) {
                t = Some(t.map_or(r, |x| x.min(r)));
            }
        }
        t
    }

    /// A timer instant came.
    pub fn handle_timeout(&mut self, now: SimTime) {
        if self.close.is_closed() {
            return;
        }
        if self.rx.delack_deadline.is_some_and(|d| d <= now) {
            self.rx.delack_deadline = None;
            if self.rx.unacked_bytes > 0 {
                self.rx.ack_now = true;
                self.stats.delayed_ack_timeouts += 1;
            }
        }
        // Linux keeps one transmission timer: the probe and reordering timers replace the
        // RTO while armed (they are never later than it), so they win a tie.
        if self.rec.tlp.deadline.is_some_and(|d| d <= now) {
            self.rec.tlp.deadline = None;
            self.on_tlp_timeout(now);
        }
        if self.rec.reo_deadline.is_some_and(|d| d <= now) {
            self.rec.reo_deadline = None;
            self.on_reo_timeout(now);
            self.probe_window(now);
        }
        if self.rtx_timer.deadline.is_some_and(|d| d <= now) {
            self.rec.reo_deadline = None;
            self.rec.tlp.deadline = None;
            self.on_rto(now);
            self.probe_window(now);
        }
    }
}

//! SCTP congestion control exactly as RFC 9260 §7.2 states it: [`SctpReno`].
//!
//! Why a controller of its own rather than the shared [`super::NewReno`] (RFC 9002
//! Appendix B): the two are Reno-family byte counters but differ in every rule that moves
//! the window, so expressing SCTP through NewReno would change SCTP's behaviour:
//! - slow start (§7.2.1) grows per SACK, not per packet, by at most `L · PMDCS`
//!   (L = 1) whatever the SACK acknowledges, and only when the window was fully used, the
//!   SACK advanced the cumulative TSN and the sender is not in Fast Recovery (with a SACK
//!   every second packet the window grows 1.5x per round trip, not 2x);
//! - congestion avoidance (§7.2.2) counts `partial_bytes_acked` and adds one PMDCS when
//!   it reaches cwnd (NewReno adds `mds · acked / cwnd` per packet), capped at cwnd when
//!   the window was not full (RFC 9260 errata fix) and reset when nothing is outstanding;
//! - a loss (§7.2.3) sets `ssthresh = max(cwnd / 2, 4 MTU)` (NewReno's floor is 2 MDS);
//! - a T3-rtx timeout (§7.2.3) sets `cwnd = 1 MTU` (NewReno's persistent congestion: 2
//!   MDS, ssthresh unchanged);
//! - Fast Recovery (§7.2.4) ends when the cumulative TSN reaches the highest TSN
//!   outstanding at its start, not when a packet sent after it is acknowledged.
//!
//! Its input is SACK-level (bytes newly acknowledged by one SACK, whether it advanced the
//! cumulative TSN, the flight size before it), which the per-packet
//! [`super::CongestionController`] hooks do not carry; so it is not registered in
//! [`super::CcAlgorithm`] (which QUIC would then offer, meaninglessly) and SCTP owns it
//! directly. SCTP may run the shared controllers instead
//! ([`crate::config::sctp::SctpCc::Shared`]), with no second copy of them.

/// RFC 9260 §7.2.1: the positive integer L of the slow-start cap (`L · PMDCS` per SACK);
/// "SHOULD be 1".
pub const SLOW_START_L: u64 = 1;

/// What one SACK tells the controller (RFC 9260 §7.2.1, §7.2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SackInput {
    /// Bytes of DATA chunks newly acknowledged by the SACK (by the cumulative TSN ack
    /// and by gap ack blocks).
    pub bytes_acked: u64,
    /// The SACK advanced the Cumulative TSN Ack Point.
    pub cum_advanced: bool,
    /// The cumulative TSN ack it carries.
    pub cum_tsn: u64,
    /// Flight size (bytes of DATA chunks outstanding) before the SACK.
    pub flight_before: u64,
    /// Flight size after it.
    pub flight_after: u64,
    /// The highest TSN sent so far (the exit point of a Fast Recovery entered on this
    /// SACK, §7.2.4 step 2).
    pub highest_outstanding: u64,
}

/// RFC 9260 §7.2 congestion control of one destination.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SctpReno {
    mtu: u64,
    pmdcs: u64,
    cwnd: u64,
    ssthresh: u64,
    partial_bytes_acked: u64,
    /// Fast Recovery: the highest TSN outstanding when it started (§7.2.4 step 2).
    fast_recovery_exit: Option<u64>,
    /// A TSN above the exit point (sent after the reduction) was marked for fast
    /// retransmit during this Fast Recovery: a loss of the next window, whose reduction
    /// is due when the Fast Recovery ends ([`SctpReno::on_fast_retransmit`]).
    reduction_due: bool,
}

impl SctpReno {
    /// A controller for a path of `mtu` bytes (PMDCS `pmdcs`) with `initial_cwnd` bytes of
    /// window and an initial ssthresh (§7.2.1: "MAY be arbitrarily high", e.g. the peer's
    /// a_rwnd).
    pub fn new(mtu: u64, pmdcs: u64, initial_cwnd: u64, initial_ssthresh: u64) -> Self {
        SctpReno {
            mtu,
            pmdcs,
            cwnd: initial_cwnd,
            ssthresh: initial_ssthresh,
            partial_bytes_acked: 0,
            fast_recovery_exit: None,
            reduction_due: false,
        }
    }

    /// The congestion window (bytes).
    pub fn window(&self) -> u64 {
        self.cwnd
    }

    /// The slow-start threshold (bytes).
    pub fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    /// partial_bytes_acked (§7.2.2).
    pub fn partial_bytes_acked(&self) -> u64 {
        self.partial_bytes_acked
    }

    /// In Fast Recovery (§7.2.4).
    pub fn in_fast_recovery(&self) -> bool {
        self.fast_recovery_exit.is_some()
    }

    /// Slow start while `cwnd <= ssthresh` (§7.2.1).
    pub fn in_slow_start(&self) -> bool {
        self.cwnd <= self.ssthresh
    }

    /// qlog congestion state name.
    pub fn state_name(&self) -> &'static str {
        if self.in_fast_recovery() {
            super::STATE_RECOVERY
        } else if self.in_slow_start() {
            super::STATE_SLOW_START
        } else {
            super::STATE_CONGESTION_AVOIDANCE
        }
    }

    /// One SACK was processed (after the flight size was updated). Returns whether the
    /// window was reduced (a Fast Recovery ended with a loss of the next window due, which
    /// enters the next one at once: see [`SctpReno::on_fast_retransmit`]).
    pub fn on_sack(&mut self, s: SackInput) -> bool {
        // §7.2.4: Fast Recovery ends when the cumulative TSN reaches the exit point.
        if let Some(exit) = self.fast_recovery_exit {
            if s.cum_tsn >= exit {
                self.fast_recovery_exit = None;
                if std::mem::take(&mut self.reduction_due) {
                    // A chunk sent after the last reduction was lost: that window's
                    // reduction, now that the previous Fast Recovery is over.
                    self.enter_fast_recovery(s.highest_outstanding);
                    return true;
                }
            }
        }
        // The sender could not send more: flight >= cwnd (§6.1 B lets it send while
        // flight < cwnd, so a window-limited sender always ends there).
        let fully_utilized = s.flight_before >= self.cwnd;
        if self.in_slow_start() {
            // §7.2.1: all three conditions, then at most min(acked, L·PMDCS).
            if s.cum_advanced && fully_utilized && !self.in_fast_recovery() {
                self.cwnd += s.bytes_acked.min(SLOW_START_L * self.pmdcs);
            }
        } else if !self.in_fast_recovery() {
            // §7.2.2: count every newly acknowledged byte...
            self.partial_bytes_acked += s.bytes_acked;
            if self.partial_bytes_acked >= self.cwnd && fully_utilized && s.cum_advanced {
                // ... and add one PMDCS per cwnd acknowledged.
                self.partial_bytes_acked -= self.cwnd;
                self.cwnd += self.pmdcs;
            } else if !fully_utilized {
                // Errata (RFC 9260 §7.2.2): never more than cwnd when not using it.
                self.partial_bytes_acked = self.partial_bytes_acked.min(self.cwnd);
            }
        }
        // §7.2.2: reset when all data sent has been acknowledged.
        if s.flight_after == 0 {
            self.partial_bytes_acked = 0;
        }
        false
    }

    /// Fast retransmit of chunks reported missing three times (§7.2.4 steps 1-2), the
    /// highest of them `highest_marked`: enters Fast Recovery unless already in it,
    /// `highest_outstanding` being its exit point. Returns whether the window was reduced
    /// (a congestion event).
    ///
    /// In Fast Recovery the window is not reduced again (§7.2.4: "SHOULD NOT change ...
    /// due to a subsequent Fast Recovery event"). But a marked TSN above the exit point
    /// was first sent after the reduction: its loss belongs to the next window, which
    /// the reduction did not answer (the once-per-window rule of RFC 5681 §3.2 and RFC
    /// 6582 §3.2 step 5: a loss above `recover` is a new congestion event once recovery
    /// ends). Its reduction is kept due and applied by [`SctpReno::on_sack`] when this
    /// Fast Recovery ends, entering the next one (a T3-rtx expiry before that reduces
    /// instead). Without it, a sender losing a packet every window while in Fast Recovery
    /// would never reduce again.
    pub fn on_fast_retransmit(&mut self, highest_outstanding: u64, highest_marked: u64) -> bool {
        if let Some(exit) = self.fast_recovery_exit {
            if highest_marked > exit {
                self.reduction_due = true;
            }
            return false;
        }
        self.enter_fast_recovery(highest_outstanding);
        true
    }

    /// §7.2.3 and §7.2.4 step 2: `ssthresh = max(cwnd/2, 4 MTU)`, `cwnd = ssthresh`, exit
    /// point = the highest outstanding TSN.
    fn enter_fast_recovery(&mut self, highest_outstanding: u64) {
        self.ssthresh = (self.cwnd / 2).max(4 * self.mtu);
        self.cwnd = self.ssthresh;
        self.partial_bytes_acked = 0;
        self.fast_recovery_exit = Some(highest_outstanding);
    }

    /// The T3-rtx timer expired (§6.3.3 E1, §7.2.3): `ssthresh = max(cwnd/2, 4 MTU)`,
    /// `cwnd = 1 MTU`; Fast Recovery ends (a reduction it kept due is this one).
    pub fn on_timeout(&mut self) {
        self.ssthresh = (self.cwnd / 2).max(4 * self.mtu);
        self.cwnd = self.mtu;
        self.partial_bytes_acked = 0;
        self.fast_recovery_exit = None;
        self.reduction_due = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MTU: u64 = 1500;
    const PMDCS: u64 = 1452;
    const CHUNK: u64 = 1468;

    fn sack(bytes: u64, cum: u64, before: u64, after: u64) -> SackInput {
        SackInput {
            bytes_acked: bytes,
            cum_advanced: true,
            cum_tsn: cum,
            flight_before: before,
            flight_after: after,
            highest_outstanding: 1000,
        }
    }

    #[test]
    fn slow_start_grows_at_most_one_pmdcs_per_sack_when_the_window_is_full() {
        let mut cc = SctpReno::new(MTU, PMDCS, 4404, 1_000_000);
        // Window full (3 chunks = 4404): a SACK of two chunks adds one PMDCS only.
        cc.on_sack(sack(2 * CHUNK, 2, 4404, CHUNK));
        assert_eq!(cc.window(), 4404 + PMDCS);
        // A SACK of one small chunk adds its size.
        let w = cc.window();
        cc.on_sack(sack(100, 3, w, w - 100));
        assert_eq!(cc.window(), w + 100);
        // Window not full: no growth.
        let w = cc.window();
        cc.on_sack(sack(CHUNK, 4, w - 2000, 0));
        assert_eq!(cc.window(), w);
        // No cumulative advance (gap blocks only): no growth.
        let mut s = sack(CHUNK, 4, w + 10, w);
        s.cum_advanced = false;
        cc.on_sack(s);
        assert_eq!(cc.window(), w);
    }

    #[test]
    fn congestion_avoidance_adds_one_pmdcs_per_window_acknowledged() {
        let mut cc = SctpReno::new(MTU, PMDCS, 6000, 5000);
        assert!(!cc.in_slow_start());
        cc.on_sack(sack(3000, 2, 6000, 3000));
        assert_eq!((cc.window(), cc.partial_bytes_acked()), (6000, 3000));
        cc.on_sack(sack(3000, 4, 6000, 3000));
        assert_eq!((cc.window(), cc.partial_bytes_acked()), (6000 + PMDCS, 0));
        // Not fully used: pba capped at cwnd, no growth.
        cc.on_sack(sack(9000, 6, 100, 50));
        assert_eq!(cc.partial_bytes_acked(), cc.window());
        assert_eq!(cc.window(), 6000 + PMDCS);
        // Everything acknowledged: pba reset.
        cc.on_sack(sack(50, 7, 50, 0));
        assert_eq!(cc.partial_bytes_acked(), 0);
    }

    #[test]
    fn fast_recovery_reduces_once_and_ends_at_the_exit_tsn() {
        let mut cc = SctpReno::new(MTU, PMDCS, 20_000, 1_000_000);
        assert!(cc.on_fast_retransmit(40, 20));
        assert_eq!((cc.ssthresh(), cc.window()), (10_000, 10_000));
        assert_eq!(cc.state_name(), "recovery");
        assert!(
            !cc.on_fast_retransmit(50, 40),
            "one reduction per Fast Recovery"
        );
        // No growth in Fast Recovery.
        cc.on_sack(sack(CHUNK, 30, 20_000, 10_000));
        assert_eq!(cc.window(), 10_000);
        cc.on_sack(sack(CHUNK, 40, 20_000, 10_000));
        assert!(!cc.in_fast_recovery());
        // Floor 4 MTU.
        let mut cc = SctpReno::new(MTU, PMDCS, 7000, 1_000_000);
        cc.on_fast_retransmit(3, 1);
        assert_eq!(cc.window(), 6000);
    }

    #[test]
    fn timeout_collapses_to_one_mtu() {
        let mut cc = SctpReno::new(MTU, PMDCS, 30_000, 1_000_000);
        cc.on_fast_retransmit(9, 2);
        cc.on_fast_retransmit(20, 12);
        cc.on_timeout();
        assert_eq!((cc.window(), cc.ssthresh()), (1500, 7500));
        assert!(!cc.in_fast_recovery());
        assert_eq!(cc.state_name(), "slow_start");
        // The reduction the Fast Recovery kept due was this one.
        let w = cc.window();
        assert!(!cc.on_sack(sack(CHUNK, 30, w, 0)));
    }

    /// A TSN above the exit point marked during Fast Recovery (a loss of the next window):
    /// no reduction inside it, one when it ends, entering the next Fast Recovery with the
    /// highest outstanding TSN as its exit point. A TSN at or below the exit point (the
    /// same window) leaves nothing due.
    #[test]
    fn a_loss_above_the_exit_point_reduces_when_fast_recovery_ends() {
        let mut cc = SctpReno::new(MTU, PMDCS, 40_000, 1_000_000);
        assert!(cc.on_fast_retransmit(40, 20));
        assert!(!cc.on_fast_retransmit(45, 40), "same window");
        // (Not fully used: no slow-start growth on this SACK.)
        let mut s = sack(CHUNK, 40, 10_000, 5_000);
        s.highest_outstanding = 50;
        assert!(!cc.on_sack(s), "nothing due");
        assert!(!cc.in_fast_recovery());
        assert_eq!(cc.window(), 20_000);
        assert!(cc.on_fast_retransmit(60, 52));
        assert_eq!(cc.window(), 10_000);
        assert!(!cc.on_fast_retransmit(64, 61), "above the exit point: due");
        assert_eq!(cc.window(), 10_000, "not inside Fast Recovery");
        let mut s = sack(CHUNK, 59, 10_000, 8_000);
        s.highest_outstanding = 66;
        assert!(!cc.on_sack(s));
        assert!(cc.in_fast_recovery());
        let mut s = sack(CHUNK, 60, 10_000, 8_000);
        s.highest_outstanding = 66;
        assert!(
            cc.on_sack(s),
            "the exit point reached: the next window's reduction"
        );
        assert_eq!((cc.ssthresh(), cc.window()), (6000, 6000));
        assert!(cc.in_fast_recovery());
        let mut s = sack(CHUNK, 66, 6000, 0);
        s.highest_outstanding = 66;
        assert!(!cc.on_sack(s));
        assert!(!cc.in_fast_recovery());
    }
}

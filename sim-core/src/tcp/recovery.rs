//! The TCP sender's loss-recovery state, split from [`super::connection`] by the state it
//! owns: the congestion state ([`CaState`], Linux `icsk_ca_state`), Proportional Rate
//! Reduction ([`Prr`], RFC 6937), RACK ([`Rack`], RFC 8985), the tail loss probe
//! ([`Tlp`], RFC 8985 §7) and the undo bookkeeping ([`Undo`], RFC 2883 / RFC 3708 /
//! RFC 5682; Linux `tcp_try_undo_*`). The connection holds them in its loss-recovery
//! owner (`tcp/connection/loss_recovery.rs`), whose per-ACK steps `TcpConnection::on_ack`
//! calls in order (`docs/tcp.md`, "Loss recovery").

use crate::time::{SimDuration, SimTime};

/// The sender's congestion state (Linux `enum tcp_ca_state`, `include/net/tcp.h`; the
/// Disorder and CWR states are folded into `Open`: no reduction is pending in either).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    /// No loss recovery under way.
    Open,
    /// Fast recovery after a loss found by ACKs (RFC 6675 §5; Linux `TCP_CA_Recovery`):
    /// one reduction, the window shaped by PRR, until the cumulative ACK reaches
    /// `high_seq`.
    Recovery,
    /// After a retransmission timeout (RFC 5681 §3.1; Linux `TCP_CA_Loss`): the window
    /// restarts from the loss window and slow-starts; until the cumulative ACK reaches
    /// `high_seq`.
    Loss,
}

/// Proportional Rate Reduction (RFC 6937 §3; Linux `tcp_cwnd_reduction`), in bytes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Prr {
    /// RecoverFS: the window when the reduction started (Linux `prior_cwnd`).
    pub prior_cwnd: u64,
    /// Bytes delivered to the receiver since the reduction started.
    pub delivered: u64,
    /// Bytes sent since the reduction started.
    pub out: u64,
    /// The window PRR allows now: `pipe + sndcnt` after the last ACK.
    pub cwnd: u64,
}

impl Prr {
    /// A reduction starts from a window of `prior_cwnd` bytes (RFC 6937 §3 "on entering
    /// recovery"; Linux `tcp_init_cwnd_reduction`).
    pub fn start(prior_cwnd: u64) -> Self {
        Prr {
            prior_cwnd: prior_cwnd.max(1),
            delivered: 0,
            out: 0,
            cwnd: 0,
        }
    }

    /// One ACK during the reduction (RFC 6937 §3 "on every ACK"; Linux
    /// `tcp_cwnd_reduction`): `newly` bytes newly delivered (cumulatively acknowledged or
    /// SACKed), `pipe` after the ACK, the target `ssthresh`; `una_advanced` and
    /// `newly_lost` select Linux's extra segment (PRR-SSRB's "+1 MSS" when the cumulative
    /// ACK advanced and nothing new was found lost). Returns the window: `pipe + sndcnt`,
    /// at least one segment's room for the first retransmission (Linux: "force a fast
    /// retransmit upon entering fast recovery").
    pub fn on_ack(
        &mut self,
        newly: u64,
        pipe: u64,
        ssthresh: u64,
        smss: u64,
        una_advanced: bool,
        newly_lost: bool,
    ) -> u64 {
        if newly == 0 {
            return self.cwnd.max(pipe);
        }
        self.delivered += newly;
        let sndcnt = if pipe > ssthresh {
            // Proportional part: sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) -
            // prr_out.
            let want =
                (self.delivered as u128 * ssthresh as u128).div_ceil(self.prior_cwnd as u128);
            (want as u64).saturating_sub(self.out)
        } else {
            // Slow-start reduction bound (PRR-SSRB): at most ssthresh - pipe, at least
            // what was delivered.
            let mut s = self.delivered.saturating_sub(self.out).max(newly);
            if una_advanced && !newly_lost {
                s += smss;
            }
            s.min(ssthresh - pipe)
        };
        let sndcnt = if self.out == 0 {
            sndcnt.max(smss)
        } else {
            sndcnt
        };
        self.cwnd = pipe + sndcnt;
        self.cwnd
    }
}

/// RACK state (RFC 8985 §6; Linux `struct tcp_rack`, `net/ipv4/tcp_recovery.c`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Rack {
    /// RACK.xmit_ts: send time of the most recently sent segment delivered.
    pub xmit: SimTime,
    /// RACK.end_seq: its end.
    pub end_seq: u64,
    /// RACK.rtt: its RTT.
    pub rtt: SimDuration,
    /// A delivered segment has set the fields above.
    pub valid: bool,
    /// Reordering was seen (RFC 8985 §6.2 step 3; Linux `tp->reord_seen`).
    pub reord_seen: bool,
}

impl Rack {
    /// RFC 8985 §6.2 step 2 (Linux `tcp_rack_advance`): a segment `[.., end)` sent at
    /// `sent` was delivered at `now`. A retransmitted segment whose RTT is below `min_rtt`
    /// is ambiguous (the original may have been delivered) and is skipped.
    pub fn advance(
        &mut self,
        now: SimTime,
        sent: SimTime,
        end: u64,
        retransmitted: bool,
        min_rtt: SimDuration,
    ) {
        let rtt = now.saturating_since(sent);
        if retransmitted && rtt < min_rtt {
            return;
        }
        self.rtt = rtt;
        if !self.valid || Self::sent_after(sent, end, self.xmit, self.end_seq) {
            self.xmit = sent;
            self.end_seq = end;
        }
        self.valid = true;
    }

    /// RFC 8985 §6.2 `RACK_sent_after`: (t1, seq1) was sent after (t2, seq2).
    pub fn sent_after(t1: SimTime, seq1: u64, t2: SimTime, seq2: u64) -> bool {
        t1 > t2 || (t1 == t2 && seq1 > seq2)
    }

    /// RFC 8985 §6.2 step 4 (Linux `tcp_rack_reo_wnd`): with no reordering seen the
    /// window is 0 in recovery (or once `sacked_segs` reach DupThresh); otherwise
    /// `min_rtt / 4`, at most SRTT.
    pub fn reo_wnd(
        &self,
        state: CaState,
        sacked_segs: u64,
        dup_thresh: u64,
        min_rtt: SimDuration,
        srtt: SimDuration,
    ) -> SimDuration {
        if !self.reord_seen && (state != CaState::Open || sacked_segs >= dup_thresh) {
            return SimDuration::ZERO;
        }
        SimDuration(min_rtt.0 / 4).min(srtt)
    }
}

/// The tail loss probe (RFC 8985 §7; Linux `tcp_schedule_loss_probe`,
/// `tcp_send_loss_probe`, `tcp_process_tlp_ack`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Tlp {
    /// The probe timer, when armed.
    pub deadline: Option<SimTime>,
    /// TLPRxtOut / Linux `tlp_high_seq`: `snd_nxt` when the outstanding probe was sent.
    pub high_seq: Option<u64>,
    /// The outstanding probe was a retransmission (not new data).
    pub retrans: bool,
    /// Sequence number of the segment a retransmitted probe carried.
    pub seq: u64,
}

/// Undo of a spurious reduction (RFC 2883 §4 with RFC 3708 DSACK detection, RFC 3522
/// Eifel detection with timestamps, RFC 5682 F-RTO; Linux `tcp_may_undo`,
/// `tcp_undo_cwnd_reduction`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Undo {
    /// Linux `undo_marker`: `snd_una` when the reduction started; `None` when nothing can
    /// be undone.
    pub marker: Option<u64>,
    /// Linux `undo_retrans`: retransmissions of the episode not yet shown spurious by a
    /// DSACK; -1 before the first (then nothing is shown spurious yet).
    pub retrans: i64,
    /// The window and threshold before the reduction.
    pub prior_cwnd: u64,
    /// `None` = infinite.
    pub prior_ssthresh: Option<u64>,
    /// Linux `retrans_stamp`: the first retransmission's send time, in timestamp ticks
    /// (ms), for Eifel detection (an ACK echoing an older timestamp was caused by an
    /// original transmission).
    pub first_retrans_ts: Option<u64>,
}

/// F-RTO (RFC 5682 §3.1, SACK-enhanced; Linux `tp->frto`, `tcp_process_loss`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Frto {
    /// Not running.
    #[default]
    Off,
    /// Step 1 done: the first unacknowledged segment was retransmitted after the RTO.
    Armed,
    /// Step 2.b: the first ACK after the timeout advanced the window; new data was sent
    /// instead of retransmissions, waiting for the next ACK.
    NewDataSent,
}

/// Timestamp ticks of the model's TCP clock: 1 ms (Linux `TCP_TS_HZ` = 1000).
pub fn ts_ticks(t: SimTime) -> u64 {
    t.as_nanos() / 1_000_000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prr_spreads_the_reduction_over_one_round() {
        // RFC 6937 §6's example shape: RecoverFS 20 segments, ssthresh 10, every ACK
        // delivers one segment and pipe stays above ssthresh: one segment sent per two
        // delivered.
        let mss = 1000;
        let mut p = Prr::start(20 * mss);
        let mut sent = 0;
        for k in 1..=10u64 {
            let pipe = 19 * mss - k * mss + sent;
            let w = p.on_ack(mss, pipe, 10 * mss, mss, false, false);
            let room = w.saturating_sub(pipe);
            p.out += room;
            sent += room;
        }
        assert_eq!(sent, 5 * mss, "half of the delivered bytes go out again");
    }

    #[test]
    fn prr_forces_the_first_retransmission_and_bounds_slow_start() {
        let mss = 1000;
        let mut p = Prr::start(10 * mss);
        // pipe far below ssthresh: sndcnt = min(ssthresh - pipe, delivered + 1 MSS).
        let w = p.on_ack(mss, 0, 5 * mss, mss, true, false);
        assert_eq!(w, 2 * mss);
        let mut q = Prr::start(10 * mss);
        // Nothing allowed proportionally yet: still one segment for the fast retransmit.
        let w = q.on_ack(1, 9 * mss, 5 * mss, mss, false, true);
        assert_eq!(w, 10 * mss);
    }

    #[test]
    fn rack_reordering_window() {
        let r = Rack::default();
        let ms = SimDuration::from_millis;
        assert_eq!(r.reo_wnd(CaState::Open, 1, 3, ms(40), ms(50)), ms(10));
        assert_eq!(
            r.reo_wnd(CaState::Open, 3, 3, ms(40), ms(50)),
            SimDuration::ZERO
        );
        assert_eq!(
            r.reo_wnd(CaState::Recovery, 0, 3, ms(40), ms(50)),
            SimDuration::ZERO
        );
        let seen = Rack {
            reord_seen: true,
            ..r
        };
        assert_eq!(seen.reo_wnd(CaState::Recovery, 9, 3, ms(40), ms(5)), ms(5));
    }
}

//! Loss recovery of the TCP sender: which rule finds losses when (RFC 6675 IsLost, RACK
//! (RFC 8985 §6), NewReno's duplicate ACKs (RFC 6582)), the tail loss probe (RFC 8985 §7),
//! fast recovery with PRR (RFC 6937), the retransmission timeout (RFC 6298 §5, Linux
//! `tcp_enter_loss`) with F-RTO (RFC 5682), and undoing spurious reductions (RFC 2883,
//! RFC 3522, RFC 3708; Linux `tcp_try_undo_*`). [`Recovery`] owns the state (its parts
//! are declared in `tcp/recovery.rs`); the scoreboard it works on is
//! [`Scoreboard`](super::scoreboard::Scoreboard). The per-ACK steps are called in order
//! by `TcpConnection::on_ack`.

use super::scoreboard::Newly;
use super::{TcpConnection, TcpState};
use crate::cc::RttSnapshot;
use crate::config::tcp::TcpRecovery;
use crate::tcp::recovery::{ts_ticks, CaState, Frto, Prr, Rack, Tlp, Undo};
use crate::time::{SimDuration, SimTime};
use crate::trace::{TcpEvent, TcpLossRule, TcpTimer, TraceEvent};
use crate::transport::stream::Side;
use crate::wire::tcp::Segment;

/// The loss-recovery state.
#[derive(Debug)]
pub(super) struct Recovery {
    /// The congestion state (`tcp/recovery.rs`).
    pub(super) ca: CaState,
    /// Linux `high_seq` (RFC 6675 RecoveryPoint): the recovery or loss state ends when
    /// the cumulative ACK reaches it.
    pub(super) high_seq: u64,
    /// Proportional Rate Reduction during fast recovery (Linux preset).
    pub(super) prr: Prr,
    /// RACK (Linux preset).
    pub(super) rack: Rack,
    /// RACK's reordering timer (RFC 8985 §6.3).
    pub(super) reo_deadline: Option<SimTime>,
    /// The tail loss probe (Linux preset).
    pub(super) tlp: Tlp,
    /// A probe is due: send one segment now whatever the window.
    pub(super) tlp_pending: bool,
    /// Undo bookkeeping.
    pub(super) undo: Undo,
    /// F-RTO (Linux preset).
    pub(super) frto: Frto,
    /// The first hole goes out next whatever the window (RFC 6675 §5 (4.2), RFC 6298
    /// §5.4, RFC 6582 §3.2).
    pub(super) force_retransmit: bool,
    /// Duplicate ACKs in a row (without SACK; RFC 5681 §3.2).
    pub(super) dupacks: u64,
    /// Window inflation of NewReno's fast recovery: bytes taken out of `pipe` for the
    /// duplicate ACKs (RFC 6582 §3.2 steps 2-4).
    pub(super) dupack_credit: u64,
}

impl Recovery {
    pub(super) fn new() -> Self {
        Recovery {
            ca: CaState::Open,
            high_seq: 0,
            prr: Prr::default(),
            rack: Rack::default(),
            reo_deadline: None,
            tlp: Tlp::default(),
            tlp_pending: false,
            undo: Undo::default(),
            frto: Frto::Off,
            force_retransmit: false,
            dupacks: 0,
            dupack_credit: 0,
        }
    }
}

/// What an ACK did to the scoreboard ([`TcpConnection::ack_scoreboard`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct AckSummary {
    /// The cumulative ACK (at most `snd_nxt`).
    pub(super) ack: u64,
    /// The cumulative ACK advanced.
    pub(super) new_data: bool,
    /// A segment was newly SACKed.
    pub(super) new_sack: bool,
    /// The D-SACK block, if the first block is one.
    pub(super) dsack: Option<(u64, u64)>,
    /// The first `cum_count` entries of `newly` were cumulatively acknowledged, the
    /// others SACKed.
    pub(super) cum_count: usize,
    /// One of those cumulatively acknowledged was retransmitted.
    pub(super) cum_retrans: bool,
    /// The highest SACKed byte before the ACK.
    pub(super) hs_before: u64,
}

impl TcpConnection {
    /// The ACK's cumulative ACK and SACK blocks on the scoreboard (and NewReno's duplicate
    /// ACK count); the segments they newly cover go to `newly`.
    pub(super) fn ack_scoreboard(
        &mut self,
        now: SimTime,
        seg: &Segment,
        ack: u64,
        newly: &mut Vec<Newly>,
    ) -> AckSummary {
        // RFC 2883 §4 / RFC 3708 §3: the first block is a D-SACK when it lies below the
        // cumulative ACK or inside the second block.
        let dsack = if self.cfg.sack {
            seg.sack.first().copied().filter(|&(a, b)| {
                b <= ack || seg.sack.get(1).is_some_and(|&(c, d)| c <= a && b <= d)
            })
        } else {
            None
        };
        if let Some(d) = dsack {
            self.on_dsack(d);
        }
        let mut new_data = false;
        let mut cum_retrans = false;
        let mut cum_count = 0usize;
        if ack > self.snd_una {
            new_data = true;
            cum_retrans = self.sb.cumulative_ack(now, ack, newly, &mut self.trace);
            cum_count = newly.len();
            self.snd_una = ack;
            self.send.release_acked(ack);
            self.rec.dupacks = 0;
            self.rec.dupack_credit = 0;
            self.rtx_timer.timeouts = 0;
        } else if !self.cfg.sack
            && ack == self.snd_una
            && seg.len == 0
            && !seg.flags.fin
            && self.snd_nxt > self.snd_una
        {
            self.rec.dupacks += 1;
        }
        let hs_before = self.sb.highest_sacked;
        let new_sack = self.cfg.sack
            && self
                .sb
                .sack_blocks(now, &seg.sack, self.snd_una, newly, &mut self.trace);
        self.sb.debug_check_holes();
        self.sb.debug_check_pipe();
        AckSummary {
            ack,
            new_data,
            new_sack,
            dsack,
            cum_count,
            cum_retrans,
            hs_before,
        }
    }

    /// RTT samples and RACK's delivered segment from what the ACK newly covered.
    pub(super) fn ack_rtt(&mut self, now: SimTime, seg: &Segment, newly: &[Newly], a: &AckSummary) {
        let linux = self.linux();
        if linux {
            // RFC 8985 §6.2 step 3 (Linux tcp_check_sack_reordering): a never
            // retransmitted segment delivered below what was SACKed before arrived out of
            // order.
            if newly
                .iter()
                .any(|n| !n.retransmitted && n.seq + n.len <= a.hs_before)
            {
                self.rec.rack.reord_seen = true;
            }
            self.update_rtt_linux(now, seg, newly, a.cum_count, a.cum_retrans, a.new_data);
            let min_rtt = self.rtt.min_rtt();
            for n in newly {
                self.rec
                    .rack
                    .advance(now, n.sent, n.seq + n.len, n.retransmitted, min_rtt);
            }
        } else if let Some(sent) = newly
            .iter()
            .filter(|n| !n.retransmitted)
            .max_by_key(|n| n.seq)
            .map(|n| n.sent)
        {
            // RTT (RFC 6298 §3, Karn): the newest newly covered, never retransmitted
            // segment.
            self.rtt
                .update(now, now.saturating_since(sent), SimDuration::ZERO, None);
            self.rtx_timer.backoff = 0;
        }
    }

    /// The ACK in the congestion state machine (Linux `tcp_fastretrans_alert`): the
    /// probe's outcome, the end of an episode, undo, loss detection, entering recovery.
    /// Returns whether a retransmission was found lost.
    pub(super) fn ack_loss_recovery(
        &mut self,
        now: SimTime,
        seg: &Segment,
        newly: &[Newly],
        a: &AckSummary,
    ) -> bool {
        let linux = self.linux();
        let AckSummary {
            ack,
            new_data,
            new_sack,
            dsack,
            ..
        } = *a;
        // Data never retransmitted was delivered (Linux FLAG_ORIG_SACK_ACKED).
        let orig_delivered = newly.iter().any(|n| !n.retransmitted);
        if linux && self.rec.tlp.high_seq.is_some() {
            self.process_tlp_ack(now, ack, new_data, new_sack, seg.len > 0, dsack);
        }
        let partial = self.rec.ca != CaState::Open && new_data && ack < self.rec.high_seq;
        // The end of a recovery or loss episode (RFC 6675 §5, RFC 6582 §3.2; Linux
        // tcp_fastretrans_alert "E. Process state").
        if self.rec.ca == CaState::Recovery && self.snd_una >= self.rec.high_seq {
            self.try_undo(now, seg, false);
            // Linux tcp_end_cwnd_reduction: the window is ssthresh (the controller's,
            // which saw no ACK during the recovery).
            self.rec.ca = CaState::Open;
        }
        let mut lost_retrans = false;
        let mut enter = false;
        match self.rec.ca {
            CaState::Recovery => {
                if linux
                    && dsack.is_some()
                    && self.rec.undo.marker.is_some()
                    && self.rec.undo.retrans == 0
                {
                    // Linux tcp_try_undo_dsack: every retransmission was a duplicate.
                    self.undo_reduction(now, false);
                    self.rec.ca = CaState::Open;
                } else if linux && new_data && self.eifel(seg) && !self.sb.any_rexmit_in_flight() {
                    // Linux tcp_try_undo_partial: the original was delivered.
                    self.undo_reduction(now, true);
                    self.rec.ca = CaState::Open;
                }
                if self.rec.ca == CaState::Recovery {
                    lost_retrans = self.detect_losses(now, new_sack, partial);
                }
            }
            CaState::Loss => {
                if self.process_loss(now, seg, new_data, new_sack, orig_delivered) {
                    lost_retrans = self.detect_losses(now, new_sack, partial);
                    // Linux: a lost retransmission in the loss state starts a fast
                    // recovery (a new reduction, from the loss state's window).
                    enter = lost_retrans && self.rec.ca == CaState::Loss;
                }
            }
            CaState::Open => {}
        }
        if self.rec.ca == CaState::Open {
            self.detect_losses(now, new_sack, partial);
            // Linux tcp_time_to_recover: any segment marked lost.
            enter = self.sb.lost_out > 0 || (!self.cfg.sack && !self.sb.retx.is_empty());
        }
        if enter {
            self.enter_recovery(now);
        }
        lost_retrans
    }

    /// The window after the ACK: PRR during a fast recovery, else the controller's growth.
    pub(super) fn ack_window(
        &mut self,
        now: SimTime,
        newly: &[Newly],
        new_data: bool,
        prior_pipe: u64,
        newly_lost: bool,
    ) {
        let linux = self.linux();
        let newly_bytes: u64 = newly.iter().map(|n| n.len).sum();
        let snap = RttSnapshot {
            min_rtt: self.rtt.min_rtt(),
            smoothed_rtt: self.rtt.smoothed_rtt(),
            latest_rtt: self.rtt.latest_rtt(),
            rttvar: self.rtt.rttvar(),
        };
        let limited = self.cwnd_limited(prior_pipe);
        if self.rec.ca == CaState::Recovery {
            // RFC 5681 §3.2 steps 4-6, RFC 6675 §5: no window growth during fast
            // recovery. The Linux preset shapes the sending by PRR (RFC 6937).
            if linux {
                let ssthresh = self.cc.ssthresh().unwrap_or(self.cc.window());
                self.rec.prr.on_ack(
                    newly_bytes,
                    self.sb.pipe,
                    ssthresh,
                    self.smss,
                    new_data,
                    newly_lost,
                );
            }
        } else if !linux || new_data {
            // Linux tcp_may_raise_cwnd: the window grows on ACKs that advance the
            // cumulative ACK, by everything they newly delivered.
            for n in newly.iter() {
                self.cc
                    .on_packet_acked(now, n.sent, n.len, n.app_limited || !limited, &snap);
            }
        }
    }
}

impl TcpConnection {
    pub(super) fn mark_lost(&mut self, i: usize, rule: TcpLossRule) -> Option<SimTime> {
        self.sb.mark_lost(
            i,
            self.last_activity,
            rule,
            &mut self.stats,
            &mut self.trace,
        )
    }

    /// RFC 9002 §7.8-style test: the window was (nearly) full before this ACK.
    pub(super) fn cwnd_limited(&self, prior_pipe: u64) -> bool {
        let cwnd = self.cc.window();
        prior_pipe >= cwnd
            || cwnd - prior_pipe <= 3 * self.smss
            || (self.cc.in_slow_start() && prior_pipe > cwnd / 2)
    }

    pub(super) fn linux(&self) -> bool {
        self.cfg.recovery == TcpRecovery::Linux
    }

    /// Linux `tcp_ack_update_rtt` (RFC 6298 §3 with RFC 7323 §4): the oldest newly
    /// cumulatively acknowledged segment when none of them was retransmitted (Karn), else
    /// the oldest newly SACKed one never retransmitted, else, with timestamps and an
    /// advancing cumulative ACK, the echoed timestamp (valid for retransmitted data,
    /// RFC 7323 §4). A sample resets the backoff (RFC 6298 §5.7).
    pub(super) fn update_rtt_linux(
        &mut self,
        now: SimTime,
        seg: &Segment,
        newly: &[Newly],
        cum_count: usize,
        cum_retrans: bool,
        new_data: bool,
    ) {
        let cum = &newly[..cum_count];
        let sacked = &newly[cum_count..];
        let oldest = |v: &[Newly]| v.iter().filter(|n| !n.retransmitted).map(|n| n.sent).min();
        let sample = if !cum.is_empty() && !cum_retrans {
            oldest(cum).map(|t| now.saturating_since(t))
        } else {
            None
        };
        let sample = sample.or_else(|| oldest(sacked).map(|t| now.saturating_since(t)));
        let sample = sample.or_else(|| {
            (self.cfg.timestamps && seg.timestamps && new_data && seg.ts_ecr > 0).then(|| {
                // Linux: at least one tick.
                let ticks = (ts_ticks(now) + 1).saturating_sub(seg.ts_ecr).max(1);
                SimDuration::from_millis(ticks)
            })
        });
        if let Some(r) = sample {
            self.rtt.update(now, r, SimDuration::ZERO, None);
            self.rtx_timer.backoff = 0;
        }
    }

    /// A D-SACK `(a, b)` arrived (RFC 2883, RFC 3708 §3; Linux `tcp_check_dsack`): one
    /// retransmission of the current episode was a duplicate.
    pub(super) fn on_dsack(&mut self, (a, b): (u64, u64)) {
        self.stats.dsacks_received += 1;
        if let Some(marker) = self.rec.undo.marker {
            if b > marker && self.rec.undo.retrans > 0 {
                self.rec.undo.retrans -= 1;
            }
        }
        let _ = a;
    }

    /// RFC 3522 Eifel detection (Linux `tcp_packet_delayed`): the ACK echoes a timestamp
    /// older than the episode's first retransmission, so an original transmission caused
    /// it.
    pub(super) fn eifel(&self, seg: &Segment) -> bool {
        self.cfg.timestamps
            && seg.timestamps
            && seg.ts_ecr > 0
            && self
                .rec
                .undo
                .first_retrans_ts
                .is_some_and(|t| seg.ts_ecr < t)
    }

    /// Linux `tcp_may_undo`: every retransmission shown a duplicate by D-SACKs, or the
    /// timestamps show the original arrived.
    pub(super) fn may_undo(&self, seg: &Segment) -> bool {
        self.linux()
            && self.rec.undo.marker.is_some()
            && (self.rec.undo.retrans == 0 || self.eifel(seg))
    }

    /// Linux `tcp_try_undo_recovery` / `tcp_try_undo_loss`: undoes the reduction if it
    /// was spurious. Returns whether it did.
    pub(super) fn try_undo(&mut self, now: SimTime, seg: &Segment, unmark: bool) -> bool {
        if self.may_undo(seg) {
            self.undo_reduction(now, unmark);
            true
        } else {
            false
        }
    }

    /// Linux `tcp_undo_cwnd_reduction`: the window and ssthresh back to their values
    /// before the reduction; with `unmark`, segments marked lost count in flight again
    /// (they were not lost).
    pub(super) fn undo_reduction(&mut self, now: SimTime, unmark: bool) {
        self.cc
            .undo_reduction(now, self.rec.undo.prior_cwnd, self.rec.undo.prior_ssthresh);
        self.rec.undo.marker = None;
        self.stats.spurious_losses += 1;
        if unmark {
            self.sb.unmark_lost(now, &mut self.trace);
        }
        self.rec.frto = Frto::Off;
    }

    /// Linux `tcp_process_loss` (RFC 5682 §3.1 with SACK). Returns whether loss
    /// detection and retransmission go on as usual.
    pub(super) fn process_loss(
        &mut self,
        now: SimTime,
        seg: &Segment,
        new_data: bool,
        new_sack: bool,
        orig_delivered: bool,
    ) -> bool {
        let recovered = self.snd_una >= self.rec.high_seq;
        if new_data && self.try_undo(now, seg, true) {
            // Eifel (timestamps) or D-SACKs showed the timeout spurious.
            self.stats.spurious_rtos += 1;
            self.rec.ca = CaState::Open;
            return false;
        }
        if self.rec.frto != Frto::Off {
            // Step 3.b: data never retransmitted was delivered: the timeout was spurious.
            if orig_delivered {
                self.undo_reduction(now, true);
                self.stats.spurious_rtos += 1;
                self.rec.ca = CaState::Open;
                return false;
            }
            if self.snd_nxt > self.rec.high_seq {
                if new_sack || !new_data {
                    // Step 3.a: the loss was real.
                    self.rec.frto = Frto::Off;
                }
            } else if new_data && !recovered {
                // Step 2.b: send new data rather than retransmissions, if there is any
                // and the peer's window allows.
                self.rec.high_seq = self.snd_nxt;
                self.fill_stream(self.snd_nxt + self.smss);
                if self.send.stream_end > self.snd_nxt && self.peer_right_edge > self.snd_nxt {
                    self.rec.frto = Frto::NewDataSent;
                    return false;
                }
                self.rec.frto = Frto::Off;
            }
        }
        if recovered {
            // Step 2.a and the first part of 3.a: the episode is over.
            self.try_undo(now, seg, false);
            self.rec.ca = CaState::Open;
            self.rec.frto = Frto::Off;
            return false;
        }
        true
    }

    /// Enters fast recovery (RFC 6675 §5 (4.1-4.2); Linux `tcp_enter_recovery`): one
    /// window reduction, PRR from the current window, the first hole at once.
    pub(super) fn enter_recovery(&mut self, now: SimTime) {
        let prior_cwnd = self.cc.window();
        self.rec.undo = Undo {
            marker: Some(self.snd_una),
            retrans: -1,
            prior_cwnd,
            prior_ssthresh: self.cc.ssthresh(),
            first_retrans_ts: None,
        };
        // `now` as the newest loss's send time: the controller reduces whatever its own
        // recovery period says (the transport decides, once per round).
        self.cc.on_congestion_event(now, now, self.sb.pipe);
        self.stats.congestion_events += 1;
        self.stats.fast_recoveries += 1;
        self.rec.prr = Prr::start(prior_cwnd);
        self.rec.ca = CaState::Recovery;
        self.rec.high_seq = self.snd_nxt;
        self.rec.frto = Frto::Off;
        self.rec.tlp.deadline = None;
        if !self.linux() {
            self.rec.force_retransmit = true;
        }
        if !self.cfg.sack {
            // RFC 6582 §3.2 step 2: cwnd = ssthresh + 3 SMSS, as credit.
            self.rec.dupack_credit = self.cfg.dup_thresh * self.smss;
            self.rec.force_retransmit = true;
        }
    }

    /// Marks lost what the preset's rule finds. Returns whether a retransmission was
    /// found lost (RACK).
    #[inline]
    pub(super) fn detect_losses(&mut self, now: SimTime, new_sack: bool, partial: bool) -> bool {
        if !self.cfg.sack {
            self.detect_losses_dupack(partial);
            false
        } else if self.linux() {
            self.rack_detect(now)
        } else {
            if new_sack {
                self.sb.detect_losses_sack(
                    self.cfg.dup_thresh,
                    self.smss,
                    self.last_activity,
                    &mut self.stats,
                    &mut self.trace,
                );
            }
            false
        }
    }

    /// RFC 8985 §6.2 step 5 (Linux `tcp_rack_detect_loss`): every segment sent before
    /// the most recently sent delivered one (RACK.xmit_ts) and outstanding longer than
    /// `RACK.rtt + reo_wnd` is lost (a retransmission too); those not yet due arm the
    /// reordering timer (§6.3) for the first of them, plus Linux's 2 ms slack
    /// (`TCP_TIMEOUT_MIN_US`). Returns whether a retransmission was found lost.
    #[inline]
    pub(super) fn rack_detect(&mut self, now: SimTime) -> bool {
        self.rec.reo_deadline = None;
        if !self.rec.rack.valid {
            return false;
        }
        if self
            .sb
            .rack_no_candidates((self.rec.rack.xmit, self.rec.rack.end_seq))
        {
            return false;
        }
        self.rack_detect_candidates(now)
    }

    /// [`TcpConnection::rack_detect`] over its candidates (out of line: the usual ACK has
    /// none).
    #[inline(never)]
    fn rack_detect_candidates(&mut self, now: SimTime) -> bool {
        let reo = self.rec.rack.reo_wnd(
            self.rec.ca,
            self.sb.sacked_out,
            self.cfg.dup_thresh,
            self.rtt.min_rtt(),
            self.rtt.smoothed_rtt(),
        );
        let limit = self.rec.rack.rtt.saturating_add(reo);
        let (lost_retrans, wait) = self.sb.rack_detect(
            now,
            self.last_activity,
            (self.rec.rack.xmit, self.rec.rack.end_seq),
            limit,
            &mut self.stats,
            &mut self.trace,
        );
        if let Some(w) = wait {
            self.rec.reo_deadline = Some(now + w + SimDuration::from_millis(2));
        }
        lost_retrans
    }

    /// RACK's reordering timer expired (RFC 8985 §6.3; Linux `tcp_rack_reo_timeout`).
    pub(super) fn on_reo_timeout(&mut self, now: SimTime) {
        self.last_activity = self.last_activity.max(now);
        let prior_pipe = self.sb.pipe;
        let prior_lost = self.sb.lost_out;
        self.trace.push_with(now, || {
            TraceEvent::Tcp(TcpEvent::TimerExpired(TcpTimer::Reordering))
        });
        self.rack_detect(now);
        if self.sb.pipe != prior_pipe || self.sb.lost_out != prior_lost {
            if self.rec.ca == CaState::Open {
                self.enter_recovery(now);
            }
            if self.rec.ca == CaState::Recovery {
                let ssthresh = self.cc.ssthresh().unwrap_or(self.cc.window());
                self.rec
                    .prr
                    .on_ack(self.smss, self.sb.pipe, ssthresh, self.smss, false, true);
            }
        }
    }

    /// RFC 8985 §7.2 (Linux `tcp_schedule_loss_probe`): in the open state with data
    /// outstanding and no probe outstanding, a probe after `2·SRTT` (+ the 200 ms
    /// minimum RTO for a lone segment, the delayed ACK it may wait for; + 2 ms
    /// otherwise; 1 s before an RTT sample), no later than the RTO.
    pub(super) fn schedule_tlp(&mut self, now: SimTime) {
        self.rec.tlp.deadline = None;
        if !self.linux()
            || !self.cfg.sack
            || self.rec.ca != CaState::Open
            || self.sb.segs.is_empty()
            || self.rec.tlp.high_seq.is_some()
            || self.state != TcpState::Established
        {
            return;
        }
        let pto = if self.rtt.has_sample() {
            let extra = if self.sb.segs.len() == 1 {
                self.cfg.rto_min
            } else {
                SimDuration::from_millis(2)
            };
            self.rtt
                .smoothed_rtt()
                .saturating_mul(2)
                .saturating_add(extra)
        } else {
            self.cfg.initial_rto
        };
        let at = now + pto;
        self.rec.tlp.deadline = Some(match self.rtx_timer.deadline {
            Some(r) => at.min(r),
            None => at,
        });
    }

    /// The probe timer expired (RFC 8985 §7.3; Linux `tcp_send_loss_probe`).
    pub(super) fn on_tlp_timeout(&mut self, now: SimTime) {
        if self.rec.ca != CaState::Open
            || self.sb.segs.is_empty()
            || self.rec.tlp.high_seq.is_some()
        {
            return;
        }
        self.rec.tlp_pending = true;
        self.stats.tlp_probes += 1;
        self.trace.push_with(now, || {
            TraceEvent::Tcp(TcpEvent::TimerExpired(TcpTimer::Tlp))
        });
        // Linux rearms the RTO after the probe.
        self.rtx_timer.deadline = Some(now + self.rto());
    }

    /// RFC 8985 §7.4 (Linux `tcp_process_tlp_ack`): a probe that repaired a loss (its
    /// retransmission acknowledged beyond it, no D-SACK) costs one reduction.
    pub(super) fn process_tlp_ack(
        &mut self,
        now: SimTime,
        ack: u64,
        new_data: bool,
        new_sack: bool,
        has_data: bool,
        dsack: Option<(u64, u64)>,
    ) {
        let Some(h) = self.rec.tlp.high_seq else {
            return;
        };
        if ack < h {
            return;
        }
        if !self.rec.tlp.retrans
            || dsack.is_some_and(|(a, b)| a <= self.rec.tlp.seq && self.rec.tlp.seq < b)
        {
            self.rec.tlp.high_seq = None;
        } else if ack > h {
            self.cc.on_congestion_event(now, now, self.sb.pipe);
            self.stats.congestion_events += 1;
            self.stats.tlp_recoveries += 1;
            self.rec.tlp.high_seq = None;
        } else if !(new_data || new_sack || has_data) {
            // A pure duplicate ACK: the original and the probe both arrived.
            self.rec.tlp.high_seq = None;
        }
    }

    /// RFC 5681 §3.2 / RFC 6582 without SACK: fast retransmit at `dup_thresh` duplicate
    /// ACKs; in recovery each further duplicate ACK lets one more segment out, a partial
    /// ACK retransmits the next hole.
    pub(super) fn detect_losses_dupack(&mut self, partial: bool) -> Option<SimTime> {
        if self.sb.segs.is_empty() {
            return None;
        }
        if self.rec.ca != CaState::Open {
            if partial {
                // RFC 6582 §3.2 step 5: retransmit the first unacknowledged segment; no
                // second reduction.
                self.rec.force_retransmit = true;
                self.mark_lost(0, TcpLossRule::PartialAck);
                return None;
            }
            if self.rec.ca == CaState::Recovery && self.rec.dupacks > self.cfg.dup_thresh {
                self.rec.dupack_credit += self.smss;
            }
            return None;
        }
        if self.rec.dupacks == self.cfg.dup_thresh {
            return self.mark_lost(0, TcpLossRule::DupAcks);
        }
        None
    }

    /// RFC 6298 §5.4-5.6: the retransmission timer expired.
    pub(super) fn on_rto(&mut self, now: SimTime) {
        self.stats.rto_count += 1;
        self.trace.push_with(now, || {
            TraceEvent::Tcp(TcpEvent::TimerExpired(TcpTimer::Rto))
        });
        self.last_activity = self.last_activity.max(now);
        if self.state != TcpState::Established {
            // SYN or SYN-ACK lost: send it again, back off; a client's first
            // `syn_linear_timeouts` retries keep the initial RTO (Linux
            // tcp_syn_linear_timeouts), the later ones double (RFC 6298 §5.5).
            self.hs.syn_pending = true;
            self.hs.syn_retransmitted = true;
            self.stats.syn_retransmissions += 1;
            // Linux tcp_retransmit_timer: after the k-th retransmission the timer doubles
            // unless k < tcp_syn_linear_timeouts.
            let linear = match self.side {
                Side::Client => u64::from(self.cfg.syn_linear_timeouts),
                Side::Server => 0,
            };
            let k = self.stats.syn_retransmissions;
            self.rtx_timer.backoff = (k + 1).saturating_sub(linear.max(1)) as u32;
            self.stats.max_backoff = self.stats.max_backoff.max(self.rtx_timer.backoff);
            self.rtx_timer.deadline = Some(now + self.rto());
            return;
        }
        if self.snd_una == self.snd_nxt {
            self.rtx_timer.deadline = None;
            return;
        }
        // Linux tcp_enter_loss: ssthresh is reduced unless this window already was (a
        // timeout during a fast recovery, or a repeated timeout).
        let new_recovery = self.rec.ca == CaState::Open;
        let reduce = new_recovery
            || self.rec.high_seq <= self.snd_una
            || (self.rec.ca == CaState::Loss && self.rtx_timer.timeouts == 0);
        if reduce {
            self.rec.undo = Undo {
                marker: Some(self.snd_una),
                retrans: -1,
                prior_cwnd: self.send_window(),
                prior_ssthresh: self.cc.ssthresh(),
                first_retrans_ts: None,
            };
            self.stats.congestion_events += 1;
        }
        // RFC 5681 §3.1: ssthresh = max(FlightSize / 2, 2 SMSS) (the controller's
        // reduction), then the loss window, one segment.
        self.cc.on_retransmission_timeout(now, reduce);
        // Linux tcp_timeout_mark_lost: every un-SACKed segment is lost, retransmissions
        // too.
        self.sb.mark_all_lost(now, &mut self.stats, &mut self.trace);
        self.rec.ca = CaState::Loss;
        self.rec.high_seq = self.snd_nxt;
        self.rec.tlp = Tlp::default();
        self.rec.tlp_pending = false;
        self.rec.reo_deadline = None;
        // RFC 5682 §3.1 step 1 (Linux: not after a timeout during a fast recovery, except
        // for a repeated timeout on the same SND.UNA, §3.2).
        self.rec.frto = if self.linux() && (new_recovery || self.rtx_timer.timeouts > 0) {
            Frto::Armed
        } else {
            Frto::Off
        };
        self.rtx_timer.timeouts += 1;
        self.rec.dupacks = 0;
        self.rec.dupack_credit = 0;
        self.rtx_timer.backoff += 1;
        self.stats.max_backoff = self.stats.max_backoff.max(self.rtx_timer.backoff);
        self.rec.force_retransmit = true;
        self.rtx_timer.deadline = Some(now + self.rto());
    }
}

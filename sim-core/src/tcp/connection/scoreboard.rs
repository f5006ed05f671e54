//! The sender's scoreboard (RFC 6675 §3-4): the sent segments not yet cumulatively
//! acknowledged, what SACK (RFC 2018) says of them, the holes below the highest SACKed
//! byte, the segments waiting for retransmission and `pipe`. [`Scoreboard`] owns that
//! state and the walks over it (the cumulative ACK, the SACK blocks, RFC 6675 IsLost,
//! RACK's candidates, the timeout's marking, an undo's unmarking); which rule runs when
//! is decided by the connection's loss recovery (`loss_recovery.rs`).

use super::TcpStats;
use crate::tcp::recovery::Rack;
use crate::time::{SimDuration, SimTime};
use crate::trace::{SenderProbe, TcpEvent, TcpLossRule, TraceBuffer, TraceEvent};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// One sent segment on the scoreboard.
#[derive(Clone, Debug)]
pub(super) struct SentSeg {
    pub(super) seq: u64,
    pub(super) len: u64,
    /// Last (re)transmission.
    pub(super) sent: SimTime,
    /// Ever retransmitted (Karn: no RTT sample).
    pub(super) retransmitted: bool,
    pub(super) sacked: bool,
    pub(super) lost: bool,
    /// A retransmission of it counts in `pipe`.
    pub(super) rexmit_in_flight: bool,
    /// Sent with nothing more to send (RFC 9002 §7.8 / RFC 7661: no growth).
    pub(super) app_limited: bool,
}

/// A segment an ACK newly covered (cumulatively or by SACK).
#[derive(Clone, Copy, Debug)]
pub(super) struct Newly {
    pub(super) sent: SimTime,
    pub(super) len: u64,
    pub(super) app_limited: bool,
    pub(super) retransmitted: bool,
    pub(super) seq: u64,
}

impl Newly {
    fn of(s: &SentSeg) -> Self {
        Newly {
            sent: s.sent,
            len: s.len,
            app_limited: s.app_limited,
            retransmitted: s.retransmitted,
            seq: s.seq,
        }
    }
}

/// The sent segments and their accounting.
#[derive(Debug, Default)]
pub(super) struct Scoreboard {
    pub(super) segs: VecDeque<SentSeg>,
    /// Segments marked lost, waiting for retransmission.
    pub(super) retx: BTreeSet<u64>,
    /// RFC 6675 `pipe`: payload bytes believed in the network.
    pub(super) pipe: u64,
    pub(super) highest_sacked: u64,
    /// The holes of the scoreboard: the sequence numbers of the un-SACKed segments below
    /// `highest_sacked` (still in `segs`). SACK processing and loss detection visit these
    /// instead of walking every SACKed segment on each ACK (issue 14: the walk was ~40 %
    /// of a TCP bulk transfer with drop-tail losses). Checked against the scoreboard by
    /// `debug_check_holes`. Each with the segment's position counted from the first
    /// segment ever sent (`popped` plus its index): segments leave `segs` only at the
    /// front, so its index is that position less `popped`, without a search.
    pub(super) holes: BTreeMap<u64, u64>,
    /// Segments removed from the front of `segs` so far.
    popped: u64,
    /// Segments marked lost and not yet acknowledged (Linux `lost_out`).
    pub(super) lost_out: u64,
    /// SACKed segments above `snd_una` (Linux `sacked_out`).
    pub(super) sacked_out: u64,
    /// Scratch list of RACK's candidate segments (kept to reuse its allocation).
    rack_cand: Vec<usize>,
    /// Bytes ever marked lost (for the delivery-rate sampler's loss count).
    pub(super) lost_bytes: u64,
}

impl Scoreboard {
    pub(super) fn index(&self, seq: u64) -> usize {
        let i = self.segs.partition_point(|s| s.seq < seq);
        debug_assert!(self.segs.get(i).is_some_and(|s| s.seq == seq));
        i
    }

    /// The index of the first segment at or above `seq` (`partition_point`, with the
    /// common answer 0 (nothing SACKed above `snd_una`) found without a search).
    /// The index in `segs` of the hole at `seq` recorded at position `at` (see `holes`).
    #[inline]
    fn hole_index(&self, seq: u64, at: u64) -> usize {
        let i = (at - self.popped) as usize;
        debug_assert_eq!(i, self.index(seq), "hole position");
        i
    }

    #[inline]
    fn first_from(&self, seq: u64) -> usize {
        if self.segs.front().is_none_or(|f| f.seq >= seq) {
            0
        } else {
            self.segs.partition_point(|s| s.seq < seq)
        }
    }

    pub(super) fn at(&self, seq: u64) -> &SentSeg {
        &self.segs[self.index(seq)]
    }

    /// A segment of new data was sent.
    pub(super) fn push(&mut self, seg: SentSeg) {
        self.pipe += seg.len;
        self.segs.push_back(seg);
    }

    /// Segment `seq` is sent again at `now`; returns its length.
    pub(super) fn retransmitted(&mut self, now: SimTime, seq: u64) -> u64 {
        self.retx.remove(&seq);
        let i = self.index(seq);
        let s = &mut self.segs[i];
        let len = s.len;
        // RFC 6675 §4 SetPipe counts a retransmission in flight once: a probe that sends
        // again a segment whose retransmission is still out (possible after an undo) adds
        // nothing.
        if !s.rexmit_in_flight {
            self.pipe += len;
        }
        s.rexmit_in_flight = true;
        s.retransmitted = true;
        s.sent = now;
        len
    }

    fn remove_from_pipe(pipe: &mut u64, s: &mut SentSeg) {
        if !s.lost {
            *pipe -= s.len;
        }
        if s.rexmit_in_flight {
            *pipe -= s.len;
            s.rexmit_in_flight = false;
        }
    }

    /// Marks segment `i` lost by `rule` (unless it is SACKed or marked already); the
    /// probe is stamped `at`. Returns its send time.
    pub(super) fn mark_lost(
        &mut self,
        i: usize,
        at: SimTime,
        rule: TcpLossRule,
        stats: &mut TcpStats,
        trace: &mut TraceBuffer,
    ) -> Option<SimTime> {
        let s = &mut self.segs[i];
        if s.lost || s.sacked {
            return None;
        }
        s.lost = true;
        self.pipe -= s.len;
        self.lost_bytes += s.len;
        self.retx.insert(s.seq);
        self.lost_out += 1;
        stats.segments_lost += 1;
        let (seq, len, sent) = (s.seq, s.len, s.sent);
        // Called on input only (an ACK, a SYN-ACK, a timer): `last_activity` or the
        // timer's time.
        trace.push_with(at, || {
            TraceEvent::SenderProbe(SenderProbe::Lost { seq, len })
        });
        trace.push_with(at, || TraceEvent::Tcp(TcpEvent::Lost { seq, len, rule }));
        Some(sent)
    }

    /// The cumulative ACK reached `ack`: the segments wholly below it leave the
    /// scoreboard; those not SACKed before are noted in `newly`. Returns whether one of
    /// them was ever retransmitted.
    pub(super) fn cumulative_ack(
        &mut self,
        now: SimTime,
        ack: u64,
        newly: &mut Vec<Newly>,
        trace: &mut TraceBuffer,
    ) -> bool {
        let mut cum_retrans = false;
        while let Some(front) = self.segs.front() {
            if front.seq + front.len > ack {
                break;
            }
            let mut s = self.segs.pop_front().expect("front");
            self.popped += 1;
            self.retx.remove(&s.seq);
            if s.lost && !s.sacked {
                self.lost_out -= 1;
            }
            if s.sacked {
                self.sacked_out -= 1;
            } else {
                if s.seq < self.highest_sacked {
                    self.holes.remove(&s.seq);
                }
                Self::remove_from_pipe(&mut self.pipe, &mut s);
                let (seq, len) = (s.seq, s.len);
                trace.push_with(now, || {
                    TraceEvent::SenderProbe(SenderProbe::Acked { seq, len })
                });
                cum_retrans |= s.retransmitted;
                newly.push(Newly::of(&s));
            }
        }
        cum_retrans
    }

    /// The SACK blocks of an ACK (RFC 2018 §3), nothing below `snd_una`: marks the
    /// segments wholly inside them SACKed, noting them in `newly`. Returns whether any
    /// segment was newly SACKed.
    pub(super) fn sack_blocks(
        &mut self,
        now: SimTime,
        blocks: &[(u64, u64)],
        snd_una: u64,
        newly: &mut Vec<Newly>,
        trace: &mut TraceBuffer,
    ) -> bool {
        let mut new_sack = false;
        for &(a, b) in blocks {
            let a = a.max(snd_una);
            if a >= b {
                continue;
            }
            // The segments wholly inside [a, b) not SACKed before, in sequence order:
            // first the holes below `highest_sacked`, then the segments above it
            // (none of which is SACKed).
            let hs = self.highest_sacked;
            let (mut cursor, below) = (a, b.min(hs));
            while cursor < below {
                let Some((&seq, &at)) = self.holes.range(cursor..below).next() else {
                    break;
                };
                cursor = seq + 1;
                let i = self.hole_index(seq, at);
                if self.segs[i].seq + self.segs[i].len > b {
                    break;
                }
                self.holes.remove(&seq);
                self.sack_segment(now, i, newly, trace);
                new_sack = true;
            }
            let first = self.first_from(a.max(hs));
            let mut i = first;
            while i < self.segs.len() && self.segs[i].seq + self.segs[i].len <= b {
                self.sack_segment(now, i, newly, trace);
                new_sack = true;
                i += 1;
            }
            if self.highest_sacked > hs {
                // The un-SACKed segments between the old and the new highest SACKed
                // byte are holes now.
                let mut j = self.first_from(hs);
                while j < self.segs.len() && self.segs[j].seq < self.highest_sacked {
                    if !self.segs[j].sacked {
                        self.holes.insert(self.segs[j].seq, self.popped + j as u64);
                    }
                    j += 1;
                }
            }
        }
        new_sack
    }

    /// Marks segment `i` (not SACKed before) SACKed and notes it in `newly`.
    fn sack_segment(
        &mut self,
        now: SimTime,
        i: usize,
        newly: &mut Vec<Newly>,
        trace: &mut TraceBuffer,
    ) {
        let s = &mut self.segs[i];
        debug_assert!(!s.sacked);
        s.sacked = true;
        self.sacked_out += 1;
        if s.lost {
            self.lost_out -= 1;
        }
        self.retx.remove(&s.seq);
        Self::remove_from_pipe(&mut self.pipe, s);
        let (seq, len) = (s.seq, s.len);
        trace.push_with(now, || {
            TraceEvent::SenderProbe(SenderProbe::Acked { seq, len })
        });
        newly.push(Newly::of(s));
        self.highest_sacked = self.highest_sacked.max(s.seq + s.len);
    }

    /// RFC 6675 §4 IsLost over the scoreboard: walking down from the highest SACKed
    /// segment, every un-SACKed segment with `dup_thresh` SACKed segments or more than
    /// `(dup_thresh - 1) * SMSS` SACKed bytes above it is lost. Returns the send time of
    /// the newest segment newly marked.
    pub(super) fn detect_losses_sack(
        &mut self,
        thresh: u64,
        smss: u64,
        at: SimTime,
        stats: &mut TcpStats,
        trace: &mut TraceBuffer,
    ) -> Option<SimTime> {
        let top = self.first_from(self.highest_sacked);
        let (mut count, mut bytes) = (0u64, 0u64);
        let byte_thresh = (thresh - 1) * smss;
        // Walking down from the top: the SACKed segments count until the threshold is
        // met (it can only become met at a SACKed segment); below that point every
        // un-SACKed segment (a hole) is lost, down to the first one already marked
        // (everything below was marked with it). Past the threshold the SACKed segments
        // change nothing, so only the holes below it are visited.
        let mut below = None;
        for i in (0..top).rev() {
            let s = &self.segs[i];
            if s.sacked {
                count += 1;
                bytes += s.len;
                if count >= thresh || bytes > byte_thresh {
                    below = Some(s.seq);
                    break;
                }
            }
        }
        let mut newest: Option<SimTime> = None;
        let Some(mut cursor) = below else {
            return newest;
        };
        while let Some((&seq, &pos)) = self.holes.range(..cursor).next_back() {
            cursor = seq;
            let i = self.hole_index(seq, pos);
            if self.segs[i].lost {
                break;
            }
            if let Some(t) = self.mark_lost(i, at, TcpLossRule::SackIsLost, stats, trace) {
                newest = Some(newest.map_or(t, |n: SimTime| n.max(t)));
            }
        }
        newest
    }

    /// RFC 8985 §6.2 step 5 over the scoreboard: every candidate sent before RACK.xmit_ts
    /// (`rx`, `rend`) and outstanding for `limit` or longer is lost (a retransmission
    /// too). Returns whether a retransmission was found lost, and how long the first
    /// candidate not yet due still has to wait.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn rack_detect(
        &mut self,
        now: SimTime,
        at: SimTime,
        (rx, rend): (SimTime, u64),
        limit: SimDuration,
        stats: &mut TcpStats,
        trace: &mut TraceBuffer,
    ) -> (bool, Option<SimDuration>) {
        let mut lost_retrans = false;
        let mut wait: Option<SimDuration> = None;
        // Candidates: the holes below the highest SACKed byte, then the segments from
        // there up to the first never-retransmitted one sent after RACK.xmit_ts (new
        // data goes out in sequence order, so later ones are later still).
        let mut cand = std::mem::take(&mut self.rack_cand);
        cand.clear();
        for (&seq, &at) in self.holes.iter() {
            cand.push(self.hole_index(seq, at));
        }
        let start = self.first_from(self.highest_sacked);
        for i in start..self.segs.len() {
            let s = &self.segs[i];
            if !s.retransmitted && !Rack::sent_after(rx, rend, s.sent, s.seq + s.len) {
                break;
            }
            cand.push(i);
        }
        for &i in &cand {
            let s = &self.segs[i];
            if s.sacked || (s.lost && !s.rexmit_in_flight) {
                continue;
            }
            if !Rack::sent_after(rx, rend, s.sent, s.seq + s.len) {
                continue;
            }
            let elapsed = now.saturating_since(s.sent);
            if elapsed >= limit {
                stats.rack_losses += 1;
                if s.lost {
                    // A lost retransmission (RFC 8985 §6.2: RACK applies to them too).
                    let s = &mut self.segs[i];
                    s.rexmit_in_flight = false;
                    self.pipe -= s.len;
                    self.retx.insert(s.seq);
                    stats.lost_retransmissions += 1;
                    stats.segments_lost += 1;
                    let (seq, len) = (s.seq, s.len);
                    trace.push_with(now, || {
                        TraceEvent::SenderProbe(SenderProbe::Lost { seq, len })
                    });
                    trace.push_with(now, || {
                        TraceEvent::Tcp(TcpEvent::Lost {
                            seq,
                            len,
                            rule: TcpLossRule::Rack,
                        })
                    });
                    lost_retrans = true;
                } else {
                    self.mark_lost(i, at, TcpLossRule::Rack, stats, trace);
                }
            } else {
                let left = limit - elapsed;
                wait = Some(wait.map_or(left, |w| w.max(left)));
            }
        }
        self.rack_cand = cand;
        (lost_retrans, wait)
    }

    /// RACK has no candidate (see [`Scoreboard::rack_detect`]): no hole, and the first
    /// segment above the highest SACKed byte, if any, is an original sent after
    /// RACK.xmit_ts (the usual ACK of in-order data).
    #[inline]
    pub(super) fn rack_no_candidates(&self, (rx, rend): (SimTime, u64)) -> bool {
        self.holes.is_empty()
            && self
                .segs
                .get(self.first_from(self.highest_sacked))
                .is_none_or(|s| {
                    !s.retransmitted && !Rack::sent_after(rx, rend, s.sent, s.seq + s.len)
                })
    }

    /// Linux `tcp_timeout_mark_lost`: every un-SACKed segment is lost, retransmissions
    /// too.
    pub(super) fn mark_all_lost(
        &mut self,
        now: SimTime,
        stats: &mut TcpStats,
        trace: &mut TraceBuffer,
    ) {
        for i in 0..self.segs.len() {
            let s = &mut self.segs[i];
            if s.sacked {
                continue;
            }
            if s.rexmit_in_flight {
                s.rexmit_in_flight = false;
                self.pipe -= s.len;
            }
            if !s.lost {
                s.lost = true;
                self.pipe -= s.len;
                self.lost_out += 1;
                stats.segments_lost += 1;
            }
            self.retx.insert(s.seq);
            let (seq, len) = (s.seq, s.len);
            trace.push_with(now, || {
                TraceEvent::SenderProbe(SenderProbe::Lost { seq, len })
            });
            trace.push_with(now, || {
                TraceEvent::Tcp(TcpEvent::Lost {
                    seq,
                    len,
                    rule: TcpLossRule::Timeout,
                })
            });
        }
        debug_assert_eq!(self.pipe, 0);
    }

    /// An undo (Linux `tcp_undo_cwnd_reduction` with `unmark_loss`): the segments marked
    /// lost count in flight again (they were not lost).
    pub(super) fn unmark_lost(&mut self, now: SimTime, trace: &mut TraceBuffer) {
        for i in 0..self.segs.len() {
            let s = &mut self.segs[i];
            if s.lost && !s.sacked {
                s.lost = false;
                self.pipe += s.len;
                self.retx.remove(&s.seq);
                let (seq, len) = (s.seq, s.len);
                trace.push_with(now, || {
                    TraceEvent::SenderProbe(SenderProbe::Restored { seq, len })
                });
            }
        }
        self.lost_out = 0;
    }

    pub(super) fn any_rexmit_in_flight(&self) -> bool {
        self.segs.iter().any(|s| s.rexmit_in_flight)
    }

    /// Debug builds: `holes` is exactly the un-SACKed segments below `highest_sacked`.
    pub(super) fn debug_check_holes(&self) {
        if cfg!(debug_assertions) {
            let want = self
                .segs
                .iter()
                .filter(|s| !s.sacked && s.seq < self.highest_sacked)
                .map(|s| s.seq);
            debug_assert!(self.holes.keys().copied().eq(want), "scoreboard holes");
            for (&seq, &at) in &self.holes {
                debug_assert_eq!(at - self.popped, self.index(seq) as u64, "hole position");
            }
        }
    }

    /// Debug builds: `pipe` is exactly what the scoreboard holds in flight (RFC 6675 §4
    /// SetPipe: an original not lost or SACKed, plus a retransmission in flight).
    pub(super) fn debug_check_pipe(&self) {
        if cfg!(debug_assertions) {
            let want: u64 = self
                .segs
                .iter()
                .filter(|s| !s.sacked)
                .map(|s| {
                    let orig = if s.lost { 0 } else { s.len };
                    orig + if s.rexmit_in_flight { s.len } else { 0 }
                })
                .sum();
            debug_assert_eq!(self.pipe, want, "pipe against the scoreboard");
        }
    }
}

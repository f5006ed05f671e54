//! The connection's output: which segment goes next (a FIN, the SYN, a forced or probe
//! retransmission, retransmissions before new data (RFC 6675 NextSeg), new data within
//! the window, the peer's window and the pacer, else a pure ACK), how a segment is built
//! and the sender's blocked-time accounting.

use super::scoreboard::SentSeg;
use super::state::Close;
use super::{Blocked, TcpConnection, TcpState};
use crate::tcp::recovery::{ts_ticks, CaState, Frto};
use crate::time::SimTime;
use crate::trace::{SenderProbe, TcpEvent, TcpSegment, TcpSenderState, TraceEvent};
use crate::transport::stream::CloseKind;
use crate::wire::tcp::{Flags, Segment, LINK_DEFAULT_OVERHEAD};

/// What the next segment is, decided before it is built ([`TcpConnection::poll_plan`]):
/// the segment is then built once, where it goes ([`TcpConnection::build_segment`]),
/// instead of being moved up through every decision.
#[derive(Clone, Copy, Debug)]
pub(in crate::tcp) enum SegPlan {
    /// The SYN or SYN-ACK.
    Syn,
    /// A segment carrying the current ACK: payload `[seq, seq + len)` (none for a pure
    /// ACK or the FIN), the FIN flag, CWR, and whether it is a retransmission.
    Ack {
        seq: u64,
        len: u64,
        fin: bool,
        cwr: bool,
        retransmission: bool,
    },
}

impl SegPlan {
    fn ack(seq: u64) -> Self {
        SegPlan::Ack {
            seq,
            len: 0,
            fin: false,
            cwr: false,
            retransmission: false,
        }
    }

    fn data(seq: u64, len: u64, retransmission: bool) -> Self {
        SegPlan::Ack {
            seq,
            len,
            fin: false,
            cwr: false,
            retransmission,
        }
    }
}

impl TcpConnection {
    /// The next segment to send now, if any.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Segment> {
        let plan = self.poll_plan(now)?;
        let mut seg = blank_segment();
        self.write_segment(now, plan, &mut seg);
        self.on_segment_sent(now, &seg);
        Some(seg)
    }

    /// What the next segment to send now is, if any: every change of state its sending
    /// makes but the receiver's ACK bookkeeping ([`TcpConnection::build_segment`]), which
    /// must follow at once.
    #[inline]
    pub(in crate::tcp) fn poll_plan(&mut self, now: SimTime) -> Option<SegPlan> {
        // RFC 7323 §3.2: TSval from a clock ticking in ms (Linux TCP_TS_HZ), offset by one
        // so that no timestamp is 0 (Linux never echoes 0).
        self.ts_now = ts_ticks(now) + 1;
        self.next_segment(now)
    }

    /// The counters, the trace and the window probe of a segment just built. Returns its
    /// datagram size ([`Segment::datagram_size`], computed once here).
    #[inline]
    pub(in crate::tcp) fn on_segment_sent(&mut self, now: SimTime, seg: &Segment) -> u64 {
        self.trace.push_with(now, || {
            TraceEvent::Tcp(TcpEvent::SegmentSent(trace_segment(seg)))
        });
        let ip_len = seg.ip_len();
        let size = ip_len - LINK_DEFAULT_OVERHEAD;
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += size;
        self.stats.header_bytes_sent += ip_len - seg.len;
        self.stats.sack_blocks_sent += seg.sack.len() as u64;
        if seg.len == 0 {
            self.stats.pure_acks_sent += 1;
        } else {
            self.trace.push_with(now, || {
                TraceEvent::SenderProbe(SenderProbe::Sent {
                    seq: seg.seq,
                    len: seg.len,
                    ip_size: ip_len,
                    retransmission: seg.retransmission,
                })
            });
            self.probe_window(now);
        }
        size
    }

    /// Writes the segment `plan` says (a SYN, or one carrying the current ACK and SACK
    /// blocks, which it notes as sent) over `seg`, in place: a recycled box's segment is
    /// neither built aside and copied in nor dropped, and its vectors keep their capacity
    /// for the new content (issue 14: no allocation per packet; issue 31: no copy).
    #[inline]
    pub(in crate::tcp) fn write_segment(&mut self, now: SimTime, plan: SegPlan, seg: &mut Segment) {
        let SegPlan::Ack {
            seq,
            len,
            fin,
            cwr,
            retransmission,
        } = plan
        else {
            *seg = self.syn_segment(now);
            return;
        };
        seg.records.clear();
        if len > 0 {
            self.send.records_in(seq, seq + len, &mut seg.records);
        }
        self.rx.sack_blocks(&self.cfg, &mut seg.sack);
        self.rx.ack_sent();
        // Every field written (destructured, so a new field cannot be forgotten here).
        let Segment {
            conn,
            flags,
            seq: s_seq,
            len: s_len,
            ack,
            window,
            sack: _,
            syn_options,
            timestamps,
            ts_val,
            ts_ecr,
            records: _,
            retransmission: s_retransmission,
        } = seg;
        *conn = 0;
        *flags = Flags {
            syn: false,
            ack: true,
            fin,
            // RFC 3168 §6.1.3: ECE on every ACK until a CWR arrives.
            ece: self.ecn.ece_pending,
            cwr,
        };
        *s_seq = seq;
        *s_len = len;
        *ack = self.rx.rcv_nxt;
        *window = self.rx.rcv_wnd;
        *syn_options = None;
        *timestamps = self.cfg.timestamps;
        *ts_val = self.ts_now;
        *ts_ecr = self.rx.ts_recent;
        *s_retransmission = retransmission;
    }

    /// The checkers' window probe (issue 16; only while tracing).
    #[inline]
    pub(super) fn probe_window(&mut self, now: SimTime) {
        if self.trace.is_on() {
            self.push_window_probe(now);
        }
    }

    #[inline(never)]
    fn push_window_probe(&mut self, now: SimTime) {
        {
            let w = SenderProbe::Window {
                cwnd: self.send_window(),
                // RFC 5681 §3.1: TCP's floor is the loss window, one segment.
                minimum: self.cc.minimum_window().min(self.smss),
                bytes_in_flight: self.sb.pipe,
                smss: self.smss,
            };
            self.trace.push(now, TraceEvent::SenderProbe(w));
            let recovery = match self.rec.ca {
                CaState::Open => "open",
                CaState::Recovery => "recovery",
                CaState::Loss => "loss",
            };
            let st = TcpSenderState {
                recovery,
                cc: self.cc.state_name(),
                cwnd: self.send_window(),
                ssthresh: self.cc.ssthresh(),
                pipe: self.sb.pipe,
                srtt: self.rtt.smoothed_rtt(),
                rto: self.rto(),
                backoff: self.rtx_timer.backoff,
            };
            self.trace.push(now, TraceEvent::Tcp(TcpEvent::State(st)));
        }
    }

    pub(super) fn next_segment(&mut self, now: SimTime) -> Option<SegPlan> {
        match self.close {
            Close::FinOwed(at) => {
                self.close = Close::Closed(CloseKind::LocalClose, at);
                return Some(SegPlan::Ack {
                    seq: self.snd_nxt,
                    len: 0,
                    fin: true,
                    cwr: false,
                    retransmission: false,
                });
            }
            Close::Closed(..) => return None,
            Close::Open => {}
        }
        if self.hs.syn_pending {
            self.hs.syn_pending = false;
            return Some(SegPlan::Syn);
        }
        // RFC 7413 §4.2.2: a server that accepted SYN data may send before the handshake
        // completes.
        if self.state != TcpState::Established && !self.hs.fast_open_accepted {
            return None;
        }
        if let Some(s) = self.next_data_segment(now) {
            return Some(s);
        }
        if self.rx.ack_now {
            return Some(SegPlan::ack(self.snd_nxt));
        }
        None
    }

    /// Cuts multiplexer frames until the stream holds `target` bytes (or nothing waits).
    pub(super) fn fill_stream(&mut self, target: u64) {
        if self.connected_at.is_none() {
            return;
        }
        self.send.fill(target);
    }

    pub(super) fn set_blocked(&mut self, now: SimTime, b: Option<Blocked>) {
        if let Some((old, since)) = self.blocked {
            if Some(old) == b {
                return;
            }
            let d = now.saturating_since(since);
            match old {
                Blocked::Cwnd => {
                    self.stats.cwnd_blocked = self.stats.cwnd_blocked.saturating_add(d)
                }
                Blocked::Rwnd => {
                    self.stats.rwnd_blocked = self.stats.rwnd_blocked.saturating_add(d)
                }
            }
        }
        self.blocked = b.map(|b| (b, now));
    }

    pub(super) fn has_sendable(&self) -> bool {
        self.rec.tlp_pending
            || !self.sb.retx.is_empty()
            || (self.connected_at.is_some()
                && (self.send.stream_end > self.snd_nxt || self.send.mux.has_pending()))
    }

    pub(super) fn next_data_segment(&mut self, now: SimTime) -> Option<SegPlan> {
        if !self.rec.force_retransmit
            && !self.rec.tlp_pending
            && self.sb.retx.is_empty()
            && !self.pacer.is_enabled()
            && self.send.stream_end == self.snd_nxt
            && !self.send.mux.has_pending()
        {
            // Nothing to send or resend (the receiver of a transfer): what the steps below
            // find, without them (no hole, no probe, no byte or frame waiting).
            self.set_blocked(now, None);
            return None;
        }
        let cwnd = self.send_window();
        let pipe = self.sb.pipe.saturating_sub(self.rec.dupack_credit);
        // RFC 6675 §5 (4.2) / RFC 6298 §5.4: the first hole goes out whatever the window.
        if self.rec.force_retransmit {
            self.rec.force_retransmit = false;
            if let Some(&seq) = self.sb.retx.first() {
                return Some(self.retransmit(now, seq));
            }
        }
        if self.rec.tlp_pending {
            // RFC 8985 §7.3 (Linux tcp_send_loss_probe): one segment whatever the window:
            // new data if the peer's window allows, else the last segment again.
            self.rec.tlp_pending = false;
            if let Some(s) = self.new_data_segment(now, u64::MAX, pipe) {
                self.rec.tlp.retrans = false;
                self.rec.tlp.high_seq = Some(self.snd_nxt);
                return Some(s);
            }
            if let Some(last) = self.sb.segs.back().filter(|s| !s.sacked).map(|s| s.seq) {
                self.rec.tlp.retrans = true;
                self.rec.tlp.seq = last;
                self.rec.tlp.high_seq = Some(self.snd_nxt);
                return Some(self.retransmit(now, last));
            }
        }
        if self.pacer.is_enabled() {
            self.pacer
                .refill(now, self.rtt.smoothed_rtt(), cwnd, self.cc.in_slow_start());
            if !self.pacer.can_send() && self.has_sendable() {
                return None;
            }
        }
        // RFC 6675 NextSeg (1): retransmissions before new data; F-RTO's step 2.b sends
        // new data instead (RFC 5682 §3.1; Linux REXMIT_NEW).
        if self.rec.frto != Frto::NewDataSent {
            if let Some(&seq) = self.sb.retx.first() {
                let len = self.sb.at(seq).len;
                if pipe + len <= cwnd {
                    return Some(self.retransmit(now, seq));
                }
                self.set_blocked(now, Some(Blocked::Cwnd));
                return None;
            }
        }
        self.new_data_segment(now, cwnd, pipe)
    }

    /// The next segment of new data if `pipe` leaves room in `cwnd` and the peer's window
    /// allows it. Always inlined: as a call it cost ~17 instructions per packet on
    /// `tcp-bulk` (its frame, for every data segment and every cwnd-limited poll).
    #[inline(always)]
    pub(super) fn new_data_segment(
        &mut self,
        now: SimTime,
        cwnd: u64,
        pipe: u64,
    ) -> Option<SegPlan> {
        self.fill_stream(self.snd_nxt + self.smss);
        let avail = self.send.stream_end - self.snd_nxt;
        if avail == 0 {
            self.set_blocked(now, None);
            return None;
        }
        let mut len = avail.min(self.smss);
        // RFC 9293 §3.8.6: never beyond the peer's window.
        let room = self.peer_right_edge.saturating_sub(self.snd_nxt);
        if room < len {
            if room == 0 || room < avail.min(self.smss) / 2 {
                self.set_blocked(now, Some(Blocked::Rwnd));
                return None;
            }
            len = room;
        }
        if pipe.saturating_add(len) > cwnd {
            self.set_blocked(now, Some(Blocked::Cwnd));
            return None;
        }
        self.set_blocked(now, None);
        let seq = self.snd_nxt;
        self.snd_nxt += len;
        if self.rec.ca == CaState::Recovery {
            self.rec.prr.out += len;
        }
        self.fill_stream(self.snd_nxt + 1);
        let app_limited = self.send.stream_end == self.snd_nxt && !self.send.mux.has_pending();
        if let Some(r) = self.rate.as_mut() {
            r.on_packet_sent(seq, now, len, self.sb.pipe, app_limited);
        }
        self.sb.push(SentSeg {
            seq,
            len,
            sent: now,
            retransmitted: false,
            sacked: false,
            lost: false,
            rexmit_in_flight: false,
            app_limited,
        });
        self.cc.on_packet_sent(now, len, self.sb.pipe);
        self.pacer.on_sent(len);
        if self.rtx_timer.deadline.is_none() {
            self.rtx_timer.deadline = Some(now + self.rto());
        }
        self.schedule_tlp(now);
        // RFC 3168 §6.1.2: CWR on the first new data segment after the reduction.
        let cwr = std::mem::take(&mut self.ecn.cwr_pending);
        Some(SegPlan::Ack {
            seq,
            len,
            fin: false,
            cwr,
            retransmission: false,
        })
    }

    pub(super) fn retransmit(&mut self, now: SimTime, seq: u64) -> SegPlan {
        let prior_pipe = self.sb.pipe;
        let len = self.sb.retransmitted(now, seq);
        if let Some(r) = self.rate.as_mut() {
            r.on_packet_sent(seq, now, len, prior_pipe, false);
        }
        if self.rec.ca == CaState::Recovery {
            self.rec.prr.out += len;
        }
        // Linux tcp_retransmit_skb: the episode's first retransmission time (for Eifel
        // detection) and the count a DSACK may show spurious.
        if self.rec.undo.first_retrans_ts.is_none() {
            self.rec.undo.first_retrans_ts = Some(self.ts_now);
        }
        self.rec.undo.retrans = self.rec.undo.retrans.max(0) + 1;
        self.stats.segments_retransmitted += 1;
        self.stats.bytes_retransmitted += len;
        self.cc.on_packet_sent(now, len, self.sb.pipe);
        self.pacer.on_sent(len);
        if self.rtx_timer.deadline.is_none() {
            self.rtx_timer.deadline = Some(now + self.rto());
        }
        SegPlan::data(seq, len, true)
    }
}

/// A segment as the trace shows it (its header, without its records).
/// An empty segment for [`TcpConnection::write_segment`] to write over (when no recycled
/// box is at hand).
pub(in crate::tcp) fn blank_segment() -> Segment {
    Segment {
        conn: 0,
        flags: Flags::default(),
        seq: 0,
        len: 0,
        ack: 0,
        window: 0,
        sack: Vec::new(),
        syn_options: None,
        timestamps: false,
        ts_val: 0,
        ts_ecr: 0,
        records: Vec::new(),
        retransmission: false,
    }
}

pub(super) fn trace_segment(seg: &Segment) -> TcpSegment {
    TcpSegment {
        seq: seg.seq,
        len: seg.len,
        ack: seg.flags.ack.then_some(seg.ack),
        syn: seg.flags.syn,
        fin: seg.flags.fin,
        window: seg.window,
        sack: seg.sack.clone(),
        retransmission: seg.retransmission,
    }
}

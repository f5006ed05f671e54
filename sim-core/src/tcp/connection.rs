//! [`TcpConnection`]: one sans-IO TCP endpoint (RFC 9293) with a TLS handshake and the
//! HTTP/2-style multiplexer ([`super::mux`]) on top.
//!
//! - Three-way handshake (RFC 9293 §3.5), then the TLS handshake as records on the byte
//!   stream (TLS 1.3: 1 round trip, TLS 1.2: 2, or none; [`TlsVersion`](crate::config::tcp::TlsVersion)).
//! - Sender: segments of at most the effective MSS; a scoreboard of sent segments with
//!   SACK (RFC 2018) and RFC 6675 loss recovery (IsLost: `dup_thresh` SACKed segments or
//!   more than `(dup_thresh - 1) * SMSS` SACKed bytes above a hole; `pipe`; send while
//!   `pipe + len <= cwnd`, retransmissions first; one forced retransmission on entering
//!   recovery; recovery ends when the cumulative ACK reaches the recovery point). Without
//!   SACK: NewReno (RFC 6582), fast retransmit on `dup_thresh` duplicate ACKs, each further
//!   duplicate ACK counted as one segment out of `pipe` (window inflation), a partial ACK
//!   retransmits the next hole.
//! - Congestion control: the shared controllers ([`crate::cc::build`]), counting payload
//!   bytes; the shared pacer, off by default.
//! - RTO (RFC 6298): `max(rto_min, SRTT + max(G, 4 RTTVAR))`, the shared RTT estimator
//!   ([`RttEstimator`], RFC 6298 §2's EWMA with no ACK delay) fed with Karn's rule (§3:
//!   no samples from retransmitted segments); restarted on an ACK of new data (§5.3);
//!   on expiry the first hole is retransmitted, the RTO doubled up to `rto_max` (§5.5),
//!   every un-SACKed segment marked lost (as Linux does) and the window collapsed.
//! - Receiver: cumulative ACK with up to 3 (4 without timestamps) SACK blocks, the block
//!   of the segment that triggered the ACK first (RFC 2018 §4); delayed ACK every
//!   `ack_every` full-sized segments or at the `delayed_ack` timer (RFC 5681 §4.2, RFC
//!   1122 §4.2.3.2); an immediate ACK for an out-of-order segment, a segment that fills a
//!   hole and a duplicate (RFC 5681 §4.2).
//!
//! Deviations are listed in `docs/tcp.md`.
//!
//! The state is split by owner, one file each under `tcp/connection/` (`docs/architecture.md`):
//! `state.rs` (the handshake state and the close as enums), `handshake.rs` (SYN, Fast Open,
//! TLS), `send_buffer.rs` (the byte stream's records, the multiplexer), `scoreboard.rs`
//! (sent segments, SACK holes, `pipe`), `loss_recovery.rs` (RFC 6675 / RACK-TLP / PRR /
//! undo / F-RTO / NewReno, the RTO), `receiver.rs` (reassembly, ACKs, TS.Recent, the
//! receive window), `timers.rs` (the timer table), `output.rs` (the next segment),
//! `streams.rs` (the workload's streams), `time_split.rs` ("where the time went"). This
//! file keeps the struct, the accessors and the input path.

use super::mux::MuxSend;
use super::recovery::CaState;
use crate::breakdown::{BreakdownClock, TimePart};
use crate::cc::{self, CongestionController};
use crate::config::tcp::{TcpConfig, TcpRecovery};
use crate::packet::Ecn;
use crate::time::{SimDuration, SimTime};
use crate::trace::TraceBuffer;
use crate::transport::pacer::Pacer;
use crate::transport::rtt::RttEstimator;
use crate::transport::stream::{CloseKind, Side, StreamEvent};
use crate::wire::tcp::Segment;

mod handshake;
mod loss_recovery;
mod output;
pub(in crate::tcp) use output::blank_segment;
mod receiver;
mod scoreboard;
mod send_buffer;
mod state;
mod streams;
mod time_split;
mod timers;

use handshake::Handshake;
use loss_recovery::Recovery;
use receiver::{DataArrival, Receiver};
use scoreboard::{Newly, Scoreboard};
use send_buffer::SendBuffer;
use state::Close;
pub use state::TcpState;
use streams::Streams;
use timers::RetransmissionTimer;

/// RFC 6298 §2 clock granularity G: 1 ms (Linux with HZ = 1000).
pub const CLOCK_GRANULARITY: SimDuration = SimDuration::from_millis(1);

/// Counters.
#[derive(Clone, Debug, Default)]
pub struct TcpStats {
    /// Datagram bytes sent (IP packet minus 28, `wire::tcp`).
    pub bytes_sent: u64,
    /// Segments sent.
    pub segments_sent: u64,
    /// Header and option bytes sent (IP + TCP).
    pub header_bytes_sent: u64,
    /// Segments without payload.
    pub pure_acks_sent: u64,
    /// Data segments retransmitted.
    pub segments_retransmitted: u64,
    /// Payload bytes retransmitted.
    pub bytes_retransmitted: u64,
    /// Segments marked lost.
    pub segments_lost: u64,
    /// RTO expirations (data and handshake).
    pub rto_count: u64,
    /// Window reductions.
    pub congestion_events: u64,
    /// Fast-recovery episodes.
    pub fast_recoveries: u64,
    /// SYN / SYN-ACK retransmissions.
    pub syn_retransmissions: u64,
    /// ACKs sent by the delayed-ACK timer.
    pub delayed_ack_timeouts: u64,
    /// SACK blocks sent.
    pub sack_blocks_sent: u64,
    /// Largest backoff exponent.
    pub max_backoff: u32,
    /// Payload bytes received again (already held).
    pub duplicate_bytes: u64,
    /// Application bytes delivered to this side.
    pub app_bytes_read: u64,
    /// Reductions undone as spurious (DSACK, timestamps or F-RTO; RFC 3708, RFC 3522,
    /// RFC 5682).
    pub spurious_losses: u64,
    /// Of those, retransmission timeouts found spurious by F-RTO (RFC 5682; Linux
    /// `TCPSpuriousRTOs`).
    pub spurious_rtos: u64,
    /// Segments found lost by RACK's time rule (RFC 8985 §6.2).
    pub rack_losses: u64,
    /// Lost retransmissions found without a timeout (RFC 8985 §6.2; Linux
    /// `TCPLostRetransmit`).
    pub lost_retransmissions: u64,
    /// Tail loss probes sent (RFC 8985 §7).
    pub tlp_probes: u64,
    /// Losses repaired by a retransmitted probe, each with a reduction (RFC 8985 §7.4.2;
    /// Linux `TCPLossProbeRecovery`).
    pub tlp_recoveries: u64,
    /// DSACK blocks received (RFC 2883).
    pub dsacks_received: u64,
    /// Records delivered with a gap or overlap before them (a bug if ever non-zero:
    /// every byte is delivered exactly once, in order).
    pub records_out_of_order: u64,
    /// Payload bytes received beyond the advertised window (a sender bug if non-zero).
    pub beyond_window_bytes: u64,
    /// Time with data to send and a full congestion window.
    pub cwnd_blocked: SimDuration,
    /// Time with data to send and no receive-window room.
    pub rwnd_blocked: SimDuration,
}

/// A connection's ECN state (RFC 3168 §6.1).
#[derive(Debug, Default)]
struct TcpEcn {
    /// Both sides asked for ECN in the handshake (§6.1.1).
    negotiated: bool,
    /// Receiver: a CE-marked segment arrived and no CWR since: ECE on every ACK (§6.1.3).
    ece_pending: bool,
    /// Sender: the window was reduced for an ECE; CWR goes on the next new data (§6.1.2).
    cwr_pending: bool,
    /// Sender: `snd_nxt` at the last ECE reduction; none before `snd_una` passes it
    /// (§6.1.2: at most once per window of data; Linux's CWR state ends at `high_seq`).
    cwr_high: Option<u64>,
    report: crate::metrics::transport::EcnReport,
}

/// One TCP endpoint.
#[derive(Debug)]
pub struct TcpConnection {
    side: Side,
    cfg: TcpConfig,
    smss: u64,
    state: TcpState,
    started_at: SimTime,
    established_at: Option<SimTime>,
    connected_at: Option<SimTime>,
    first_byte_at: Option<SimTime>,
    /// Closed, and whether the FIN is still owed (`connection/state.rs`).
    close: Close,
    last_activity: SimTime,

    /// The three-way handshake, TCP Fast Open and TLS resumption
    /// (`connection/handshake.rs`).
    hs: Handshake,

    // send side
    /// The byte stream's records and the multiplexer (`connection/send_buffer.rs`).
    send: SendBuffer,
    snd_una: u64,
    snd_nxt: u64,
    /// The sent segments, SACK holes and `pipe` (`connection/scoreboard.rs`).
    sb: Scoreboard,
    /// Scratch list of the segments an ACK newly covers (kept to reuse its allocation).
    newly: Vec<Newly>,
    /// ECN (RFC 3168 §6.1).
    ecn: TcpEcn,
    peer_right_edge: u64,
    cc: Box<dyn CongestionController>,
    /// Delivery-rate sampling ([`cc::rate_sample`]), keyed by sequence number, kept only
    /// when the controller asks for it ([`CongestionController::wants_rate_samples`]).
    rate: Option<cc::RateSampler>,
    rtt: RttEstimator,
    pacer: Pacer,
    /// Loss recovery: the congestion state, RACK, TLP, PRR, undo, F-RTO, NewReno's
    /// duplicate ACKs (`connection/loss_recovery.rs`).
    rec: Recovery,
    /// The retransmission timer and its backoff (`connection/timers.rs`).
    rtx_timer: RetransmissionTimer,
    blocked: Option<(Blocked, SimTime)>,

    // receive side
    /// Reassembly, ACKs, TS.Recent, the receive window (`connection/receiver.rs`).
    rx: Receiver,
    /// The clock of the segment being built, in timestamp ticks.
    ts_now: u64,

    // streams
    /// The workload's streams (`connection/streams.rs`).
    streams: Streams,
    events: Vec<StreamEvent>,

    /// Counters.
    pub stats: TcpStats,
    /// Trace events: the checkers' [`SenderProbe`](crate::trace::SenderProbe)s and the
    /// packet timeline's [`TcpEvent`](crate::trace::TcpEvent)s (no qlog events yet; see
    /// `docs/tcp.md`).
    pub trace: TraceBuffer,
    /// "Where the time went" ([`crate::breakdown`]): never read by the protocol.
    breakdown: BreakdownClock,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Blocked {
    Cwnd,
    Rwnd,
}

impl TcpConnection {
    /// A connection for `side` (not started).
    pub fn new(side: Side, cfg: TcpConfig) -> Self {
        let smss = cfg.effective_mss();
        let params = cfg.cc_params();
        let cc = cc::build(&params, smss);
        let iw = params.initial_window(smss);
        let burst = params.pacing_burst_packets.map_or(iw, |p| p * smss);
        let mut pacer = Pacer::new(
            params.pacing,
            burst,
            smss,
            params.pacing_gain,
            params.pacing_gain_slow_start,
        );
        pacer.set_rate(cc.pacing_rate());
        let rate = cc.wants_rate_samples().then(cc::RateSampler::new);
        let mux = MuxSend::new(cfg.frame_size, cfg.record_overhead());
        TcpConnection {
            side,
            smss,
            state: TcpState::Idle,
            started_at: SimTime::ZERO,
            established_at: None,
            connected_at: None,
            first_byte_at: None,
            close: Close::Open,
            last_activity: SimTime::ZERO,
            hs: Handshake::new(side, &cfg),
            send: SendBuffer::new(mux),
            snd_una: 0,
            snd_nxt: 0,
            sb: Scoreboard::default(),
            newly: Vec::new(),
            ecn: TcpEcn::default(),
            peer_right_edge: 0,
            cc,
            rate,
            rtt: RttEstimator::new(cfg.initial_rto),
            pacer,
            rec: Recovery::new(),
            rtx_timer: RetransmissionTimer::default(),
            blocked: None,
            rx: Receiver::new(&cfg, smss),
            ts_now: 1,
            streams: Streams::default(),
            events: Vec::new(),
            stats: TcpStats::default(),
            trace: TraceBuffer::default(),
            breakdown: BreakdownClock::new(SimTime::ZERO, TimePart::Handshake),
            cfg,
        }
    }

    // ----- accessors -----------------------------------------------------------------------

    /// This end.
    pub fn side(&self) -> Side {
        self.side
    }
    /// The configuration.
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }
    /// Handshake state.
    pub fn state(&self) -> TcpState {
        self.state
    }
    /// Payload bytes of a full segment.
    pub fn smss(&self) -> u64 {
        self.smss
    }
    /// When [`TcpConnection::start`] was called.
    pub fn started_at(&self) -> SimTime {
        self.started_at
    }
    /// Three-way handshake completion.
    pub fn established_at(&self) -> Option<SimTime> {
        self.established_at
    }
    /// TCP and TLS handshakes complete: application data may flow.
    pub fn connected_at(&self) -> Option<SimTime> {
        self.connected_at
    }
    /// Client: the first application byte delivered.
    pub fn first_byte_at(&self) -> Option<SimTime> {
        self.first_byte_at
    }
    /// Client: whether it holds a Fast Open cookie and a session ticket for the server
    /// (from before the run, [`TcpConnection::resume`], or received on this connection:
    /// the SYN-ACK's cookie, a NewSessionTicket).
    pub fn holds(&self) -> (bool, bool) {
        (
            self.hs.cookie || self.hs.cookie_received,
            self.hs.session_ticket || self.hs.ticket_received,
        )
    }
    /// Client: takes a cookie and a session ticket an earlier connection left (before
    /// [`TcpConnection::start`]); each is used only when `fast_open` / `early_data` is on.
    pub fn resume(&mut self, cookie: bool, session_ticket: bool) {
        self.hs.cookie |= cookie && self.cfg.fast_open;
        self.hs.session_ticket |= session_ticket && self.cfg.early_data;
    }
    /// This connection resumed a TLS 1.3 session with 0-RTT data (RFC 8446 §2.3).
    pub fn resumed_with_early_data(&self) -> bool {
        self.hs.psk
    }
    /// Client: payload bytes its SYN carried (TCP Fast Open, RFC 7413 §4.2).
    pub fn syn_data(&self) -> u64 {
        self.hs.syn_data
    }
    /// How and when the connection closed.
    pub fn closed(&self) -> Option<(CloseKind, SimTime)> {
        self.close.kind_and_time()
    }
    /// The last segment received.
    pub fn last_activity(&self) -> SimTime {
        self.last_activity
    }
    /// The congestion controller.
    pub fn cc(&self) -> &dyn CongestionController {
        self.cc.as_ref()
    }
    /// The RTT estimator.
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    /// RFC 6675 `pipe`: payload bytes believed in the network.
    pub fn pipe(&self) -> u64 {
        self.sb.pipe
    }
    /// Stream records kept for segments yet to be (re)built: those not wholly
    /// acknowledged (bounded by what is in flight, not by what was transferred).
    pub fn send_records_kept(&self) -> usize {
        self.send.kept()
    }
    /// Oldest unacknowledged byte.
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    /// Next new byte to send.
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    /// Next byte expected from the peer.
    pub fn rcv_nxt(&self) -> u64 {
        self.rx.rcv_nxt
    }
    /// End of the last record delivered to TLS or the multiplexer.
    pub fn delivered_end(&self) -> u64 {
        self.rx.delivered_end
    }
    /// Current RTO backoff exponent.
    pub fn backoff(&self) -> u32 {
        self.rtx_timer.backoff
    }
    /// When the retransmission timer expires, if armed.
    pub fn rto_deadline(&self) -> Option<SimTime> {
        self.rtx_timer.deadline
    }
    /// When the delayed-ACK timer expires, if armed.
    pub fn delack_deadline(&self) -> Option<SimTime> {
        self.rx.delack_deadline
    }
    /// In fast recovery (or loss recovery after an RTO) until the cumulative ACK reaches
    /// this point.
    pub fn recovery_point(&self) -> Option<u64> {
        (self.rec.ca != CaState::Open).then_some(self.rec.high_seq)
    }
    /// The congestion state.
    pub fn ca_state(&self) -> CaState {
        self.rec.ca
    }
    /// The window the sender uses now: the controller's, or PRR's during a fast recovery
    /// of the Linux preset (at least one segment) unless the controller takes rate
    /// samples (BBR sets its own window in recovery, as Linux's `cong_control` hook
    /// bypasses PRR).
    pub fn send_window(&self) -> u64 {
        if self.rec.ca == CaState::Recovery
            && self.cfg.recovery == TcpRecovery::Linux
            && self.rate.is_none()
        {
            self.rec.prr.cwnd.max(self.smss)
        } else {
            self.cc.window()
        }
    }
    /// Payload bytes in flight (RFC 6675 pipe).
    pub fn bytes_in_flight(&self) -> u64 {
        self.sb.pipe
    }

    // ----- workload-facing -----------------------------------------------------------------

    /// Closes: a FIN (sent once; see `docs/tcp.md`).
    pub fn close(&mut self, now: SimTime) {
        if !self.close.is_closed() {
            self.close = Close::FinOwed(now);
            self.rtx_timer.deadline = None;
            self.rx.delack_deadline = None;
            self.events.push(StreamEvent::Closed(CloseKind::LocalClose));
        }
    }

    // ----- engine-facing -------------------------------------------------------------------

    // ----- output --------------------------------------------------------------------------

    // ----- input ---------------------------------------------------------------------------

    /// Handles one received segment.
    pub fn handle_segment(&mut self, now: SimTime, seg: &Segment) {
        self.handle_segment_ecn(now, seg, Ecn::NotEct);
    }

    /// Handles one received segment whose IP header carried `ecn`.
    pub fn handle_segment_ecn(&mut self, now: SimTime, seg: &Segment, ecn: Ecn) {
        if self.close.is_closed() {
            return;
        }
        if self.ecn.negotiated && !seg.flags.syn {
            // RFC 3168 §6.1.3: CWR stops the echo; a CE mark (after it, in the same
            // segment) starts it again, acknowledged at once.
            if seg.flags.cwr {
                self.ecn.ece_pending = false;
            }
            if ecn == Ecn::Ce {
                self.ecn.report.ce_received += 1;
                self.ecn.ece_pending = true;
                self.rx.ack_now = true;
            }
        }
        self.last_activity = now;
        self.trace.push_with(now, || {
            crate::trace::TraceEvent::Tcp(crate::trace::TcpEvent::SegmentReceived(
                output::trace_segment(seg),
            ))
        });
        if self.cfg.timestamps {
            self.rx.update_ts_recent(seg);
        }
        if seg.flags.syn {
            self.on_syn(now, seg);
            return;
        }
        if self.state == TcpState::SynReceived && seg.flags.ack {
            // RFC 9293 §3.5: the ACK of our SYN-ACK completes the handshake.
            self.establish(now);
        }
        if self.state != TcpState::Established {
            return;
        }
        if seg.flags.ack {
            self.on_ack(now, seg);
        }
        if seg.len > 0 {
            self.on_data(now, seg);
        }
        if seg.flags.fin && !self.close.is_closed() {
            self.close = Close::Closed(CloseKind::PeerClose, now);
            self.rtx_timer.deadline = None;
            self.rx.delack_deadline = None;
            self.events.push(StreamEvent::Closed(CloseKind::PeerClose));
        }
    }

    /// An ACK arrived (RFC 9293 §3.10.7.4): the scoreboard, the RTT and RACK, loss
    /// recovery, the window, the timers and the streams' completions, in that order. With
    /// nothing owed ([`TcpConnection::ack_owes_nothing`]) the steps up to the timers are
    /// skipped, as they would change nothing, and the timers are disarmed (RFC 6298 §5.2:
    /// nothing outstanding; so neither RACK's nor the probe's): debug builds run the
    /// general path's steps and timers there too and check that they leave the state as
    /// the shortcut does.
    fn on_ack(&mut self, now: SimTime, seg: &Segment) {
        let ack = seg.ack.min(self.snd_nxt);
        self.peer_right_edge = self.peer_right_edge.max(ack + seg.window);
        if self.ack_owes_nothing(seg) {
            #[cfg(debug_assertions)]
            {
                // The steps with their ECE reaction, checked around it.
                let new_data = self.ack_steps::<true>(now, seg, ack);
                debug_assert!(!new_data);
            }
            #[cfg(not(debug_assertions))]
            if self.ecn.negotiated && seg.flags.ece && !seg.flags.syn {
                self.on_ece(now);
            }
            self.rtx_timer.deadline = None;
            self.rec.reo_deadline = None;
            self.rec.tlp.deadline = None;
            #[cfg(debug_assertions)]
            {
                let before = self.ack_steps_state();
                self.ack_timers(now, false);
                debug_assert_eq!(before, self.ack_steps_state(), "idle ACK: timers");
            }
            self.ack_completions(now);
            return;
        }
        let new_data = self.ack_steps::<false>(now, seg, ack);
        self.ack_timers(now, new_data);
        self.ack_completions(now);
    }

    /// The timers after an ACK (`new_data`: the cumulative ACK advanced): RFC 6298 §5.2 /
    /// §5.3, RACK's reordering timer with nothing outstanding, the probe (RFC 8985 §7.2).
    #[inline(always)]
    fn ack_timers(&mut self, now: SimTime, new_data: bool) {
        if self.snd_una == self.snd_nxt {
            self.rtx_timer.deadline = None;
            self.rec.reo_deadline = None;
        } else if new_data {
            self.rtx_timer.deadline = Some(now + self.rto());
        }
        self.schedule_tlp(now);
    }

    /// Whether an ACK finds nothing owed: nothing outstanding (every byte sent
    /// acknowledged, nothing lost or to retransmit), no SACK block, no rate sampler, no
    /// probe outstanding, the open state. The ACK's steps up to the timers (scoreboard,
    /// RTT, loss recovery, window, rate sample) then change nothing
    /// ([`TcpConnection::on_ack`]; a receiver's ACK field on data, the usual case).
    #[inline]
    fn ack_owes_nothing(&self, seg: &Segment) -> bool {
        self.sb.segs.is_empty()
            && self.sb.lost_out == 0
            && self.sb.retx.is_empty()
            && self.snd_una == self.snd_nxt
            && seg.sack.is_empty()
            && self.rate.is_none()
            && self.rec.ca == CaState::Open
            && self.rec.tlp.high_seq.is_none()
    }

    /// The ACK's steps up to the timers: the scoreboard, the RTT and RACK, loss recovery,
    /// the ECE reaction, the window, the rate sample. Returns whether the cumulative ACK
    /// advanced. `IDLE_CHECK` (debug builds, [`TcpConnection::on_ack`]'s nothing-owed
    /// path): assert that the steps before and after the ECE reaction change nothing.
    #[inline(always)]
    fn ack_steps<const IDLE_CHECK: bool>(&mut self, now: SimTime, seg: &Segment, ack: u64) -> bool {
        #[cfg(debug_assertions)]
        let before = IDLE_CHECK.then(|| self.ack_steps_state());
        let prior_pipe = self.sb.pipe.saturating_sub(self.rec.dupack_credit);
        let prior_lost = self.stats.segments_lost;
        let prior_lost_bytes = self.sb.lost_bytes;
        let mut newly = std::mem::take(&mut self.newly);
        newly.clear();
        let a = self.ack_scoreboard(now, seg, ack, &mut newly);
        self.ack_rtt(now, seg, &newly, &a);
        let lost_retrans = self.ack_loss_recovery(now, seg, &newly, &a);
        #[cfg(debug_assertions)]
        if let Some(before) = before {
            debug_assert_eq!(before, self.ack_steps_state(), "idle ACK: steps to ECE");
        }
        if self.ecn.negotiated && seg.flags.ece && !seg.flags.syn {
            self.on_ece(now);
        }
        #[cfg(debug_assertions)]
        let before = IDLE_CHECK.then(|| self.ack_steps_state());
        let newly_lost = self.stats.segments_lost > prior_lost || lost_retrans;
        self.ack_window(now, &newly, a.new_data, prior_pipe, newly_lost);
        if let Some(r) = self.rate.as_mut() {
            // One rate sample per ACK, after its losses and acknowledgements.
            for n in newly.iter() {
                r.on_packet_acked(n.seq, now);
            }
            r.count_lost(self.sb.lost_bytes - prior_lost_bytes);
            let rs = r.generate(self.rtt.min_rtt(), self.sb.pipe);
            let snap = cc::RttSnapshot {
                min_rtt: self.rtt.min_rtt(),
                smoothed_rtt: self.rtt.smoothed_rtt(),
                latest_rtt: self.rtt.latest_rtt(),
                rttvar: self.rtt.rttvar(),
            };
            self.cc.on_rate_sample(now, &rs, &snap);
            self.pacer.set_rate(self.cc.pacing_rate());
        }
        self.newly = newly;
        #[cfg(debug_assertions)]
        if let Some(before) = before {
            debug_assert_eq!(before, self.ack_steps_state(), "idle ACK: steps after ECE");
        }
        a.new_data
    }

    /// Debug builds: a digest of the state an ACK's steps could change, of its `Debug`
    /// text (every field but the configuration, the scratch list `newly` and the time
    /// breakdown; destructured, so a new field must be placed here), for the check of
    /// [`TcpConnection::on_ack`]'s nothing-owed path.
    #[cfg(debug_assertions)]
    fn ack_steps_state(&self) -> u64 {
        let TcpConnection {
            side,
            cfg: _,
            smss,
            state,
            started_at,
            established_at,
            connected_at,
            first_byte_at,
            close,
            last_activity,
            hs,
            send,
            snd_una,
            snd_nxt,
            sb,
            newly: _,
            ecn,
            peer_right_edge,
            cc,
            rate,
            rtt,
            pacer,
            rec,
            rtx_timer,
            blocked,
            rx,
            ts_now,
            streams,
            events,
            stats,
            trace,
            breakdown: _,
        } = self;
        crate::hash::fmt_digest(format_args!(
            "{side:?} {smss:?} {state:?} {started_at:?} {established_at:?} {connected_at:?} \
             {first_byte_at:?} {close:?} {last_activity:?} {hs:?} {send:?} {snd_una:?} \
             {snd_nxt:?} {sb:?} {ecn:?} {peer_right_edge:?} {cc:?} {rate:?} {rtt:?} \
             {pacer:?} {rec:?} {rtx_timer:?} {blocked:?} {rx:?} {ts_now:?} {streams:?} \
             {events:?} {stats:?} {trace:?}"
        ))
    }

    /// The end of an ACK's processing: the streams whose data the cumulative ACK now covers
    /// entirely are complete; then the checkers' window probe. Always inlined: as a call it
    /// cost ~20 instructions per packet on `tcp-bulk`.
    #[inline(always)]
    fn ack_completions(&mut self, now: SimTime) {
        if self.send.mux.completion_due(self.snd_una) {
            for id in self.send.mux.completed(self.snd_una) {
                self.streams.send_done.insert(id, now);
                self.events.push(StreamEvent::SendComplete(id));
                self.maybe_release(id);
            }
        }
        self.probe_window(now);
    }

    /// An ACK with ECE (RFC 3168 §6.1.2): the window is reduced as for a loss
    /// ([`CongestionController::on_ecn_ce`]), at most once per window of data, and not
    /// during loss recovery (which reduced already); CWR goes on the next new data.
    fn on_ece(&mut self, now: SimTime) {
        self.ecn.report.ce_signals += 1;
        let window_done = self.ecn.cwr_high.is_none_or(|h| self.snd_una >= h);
        if self.rec.ca != CaState::Open || !window_done {
            return;
        }
        // `now` as the send time, as for a loss: the transport decides once per window.
        let was = self.cc.in_recovery(now);
        self.cc.on_ecn_ce(now, now, 1, self.sb.pipe);
        if !was && self.cc.in_recovery(now) {
            // Counted when the controller reduced (BBRv1 does not react to CE).
            self.stats.congestion_events += 1;
            self.ecn.report.congestion_events += 1;
        }
        self.ecn.cwr_high = Some(self.snd_nxt);
        self.ecn.cwr_pending = true;
    }

    /// ECN use so far (`ecn = true`).
    pub fn ecn_report(&self) -> crate::metrics::transport::EcnReport {
        crate::metrics::transport::EcnReport {
            disabled: self.cfg.ecn && !self.ecn.negotiated,
            ..self.ecn.report.clone()
        }
    }

    /// Whether `seg`, about to be sent, goes ECT(0): new data once ECN was negotiated,
    /// never a SYN, a pure ACK or a retransmission (RFC 3168 §6.1.1, §6.1.4, §6.1.5).
    pub fn ect(&self, seg: &Segment) -> bool {
        self.ecn.negotiated && seg.len > 0 && !seg.flags.syn && !seg.retransmission
    }

    /// Counts one segment sent ECT(0).
    pub fn on_ect_sent(&mut self) {
        self.ecn.report.ect_sent += 1;
    }

    fn on_data(&mut self, now: SimTime, seg: &Segment) {
        let arrival = self
            .rx
            .on_data(now, seg, &self.cfg, self.smss, &mut self.stats);
        if arrival == DataArrival::InOrder {
            self.deliver(now);
            if self.cfg.recv_window_autotune {
                self.rx
                    .rcv_space_adjust(now, &self.rtt, &self.cfg, self.smss);
            }
        }
    }

    /// The receive window currently advertised beyond the next expected byte.
    pub fn recv_window(&self) -> u64 {
        self.rx.rcv_wnd
    }

    /// Closes the accounting of blocked time at `now` (for metrics).
    pub fn blocked_until(&self, now: SimTime) -> (SimDuration, SimDuration) {
        let (mut c, mut r) = (self.stats.cwnd_blocked, self.stats.rwnd_blocked);
        if let Some((b, since)) = self.blocked {
            let d = now.saturating_since(since);
            match b {
                Blocked::Cwnd => c = c.saturating_add(d),
                Blocked::Rwnd => r = r.saturating_add(d),
            }
        }
        (c, r)
    }
}

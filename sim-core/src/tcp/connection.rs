//! [`TcpConnection`]: one sans-IO TCP endpoint (RFC 9293) with a TLS handshake and the
//! HTTP/2-style multiplexer ([`super::mux`]) on top.
//!
//! - Three-way handshake (RFC 9293 §3.5), then the TLS handshake as records on the byte
//!   stream (TLS 1.3: 1 round trip, TLS 1.2: 2, or none; [`TlsVersion`]).
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

use super::mux::MuxSend;
use super::recovery::{ts_ticks, CaState, Frto};
use crate::breakdown::{BreakdownClock, TimePart};
use crate::cc::{self, CongestionController};
use crate::config::tcp::{TcpConfig, TcpRecovery};
use crate::time::{SimDuration, SimTime};
use crate::trace::{SenderProbe, TraceBuffer, TraceEvent};
use crate::transport::pacer::Pacer;
use crate::transport::rtt::RttEstimator;
use crate::transport::stream::{CloseKind, Side, StreamEvent, StreamId, StreamReadState};
use crate::wire::tcp::{Flags, Record, RecordKind, Segment};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

mod handshake;
mod loss_recovery;
mod receiver;
mod scoreboard;
mod state;
mod time_split;
mod timers;

use handshake::Handshake;
use loss_recovery::Recovery;
use receiver::{DataArrival, Receiver};
use scoreboard::{Newly, Scoreboard, SentSeg};
use state::Close;
pub use state::TcpState;
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
    /// Records of the byte stream not yet wholly acknowledged: records ending at or below
    /// `snd_una` are dropped (no segment is built below `snd_una` again), so memory is
    /// bounded by what is in flight, not by what was transferred (issue 14).
    records: VecDeque<Record>,
    stream_end: u64,
    mux: MuxSend,
    snd_una: u64,
    snd_nxt: u64,
    /// The sent segments, SACK holes and `pipe` (`connection/scoreboard.rs`).
    sb: Scoreboard,
    /// Scratch list of the segments an ACK newly covers (kept to reuse its allocation).
    newly: Vec<Newly>,
    /// Emptied vectors of recycled segments, for the next segment's records and SACK
    /// blocks ([`TcpConnection::recycle_segment`]).
    spare_records: Vec<Record>,
    peer_right_edge: u64,
    cc: Box<dyn CongestionController>,
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
    next_local: u64,
    open_local: BTreeSet<StreamId>,
    read_done: BTreeMap<StreamId, SimTime>,
    send_done: BTreeMap<StreamId, SimTime>,
    streams_blocked: bool,
    events: Vec<StreamEvent>,

    /// Counters.
    pub stats: TcpStats,
    /// Trace events: only the checkers' [`SenderProbe`]s (no qlog events yet; see
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
        let pacer = Pacer::new(
            params.pacing,
            burst,
            smss,
            params.pacing_gain,
            params.pacing_gain_slow_start,
        );
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
            records: VecDeque::new(),
            stream_end: 0,
            mux,
            snd_una: 0,
            snd_nxt: 0,
            sb: Scoreboard::default(),
            newly: Vec::new(),
            spare_records: Vec::new(),
            peer_right_edge: 0,
            cc,
            rtt: RttEstimator::new(cfg.initial_rto),
            pacer,
            rec: Recovery::new(),
            rtx_timer: RetransmissionTimer::default(),
            blocked: None,
            rx: Receiver::new(&cfg, smss),
            ts_now: 1,
            next_local: 0,
            open_local: BTreeSet::new(),
            read_done: BTreeMap::new(),
            send_done: BTreeMap::new(),
            streams_blocked: false,
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
        self.records.len()
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
    /// of the Linux preset (at least one segment).
    pub fn send_window(&self) -> u64 {
        if self.rec.ca == CaState::Recovery && self.cfg.recovery == TcpRecovery::Linux {
            self.rec.prr.cwnd.max(self.smss)
        } else {
            self.cc.window()
        }
    }
    /// Payload bytes in flight (RFC 6675 pipe).
    pub fn bytes_in_flight(&self) -> u64 {
        self.sb.pipe
    }

    /// When each stream was read up to its FIN.
    pub fn read_complete_times(&self) -> &BTreeMap<StreamId, SimTime> {
        &self.read_done
    }
    /// When each stream's FIN was cumulatively acknowledged.
    pub fn send_complete_times(&self) -> &BTreeMap<StreamId, SimTime> {
        &self.send_done
    }

    /// Read progress of stream `id`.
    pub fn stream_read_state(&self, id: StreamId) -> Option<StreamReadState> {
        self.rx.mux_recv.get(id).map(|s| StreamReadState {
            read: s.read,
            window: self.rx.rcv_wnd,
            window_size: self.rx.rcv_wnd,
        })
    }

    // ----- workload-facing -----------------------------------------------------------------

    /// Takes the pending events.
    pub fn take_events(&mut self) -> Vec<StreamEvent> {
        std::mem::take(&mut self.events)
    }

    /// HTTP/2 stream ID of the `index`-th stream `side` opens (RFC 9113 §5.1.1: odd for
    /// the client; the server's pushed streams are even).
    pub fn stream_id_of(side: Side, index: u64) -> StreamId {
        match side {
            Side::Client => 2 * index + 1,
            Side::Server => 2 * index + 2,
        }
    }

    /// Opens a stream once connected and below `max_concurrent_streams`.
    pub fn open_stream(&mut self) -> Option<StreamId> {
        if self.connected_at.is_none() || self.close.is_closed() {
            return None;
        }
        if self.open_local.len() as u64 >= self.cfg.max_concurrent_streams {
            self.streams_blocked = true;
            return None;
        }
        let id = Self::stream_id_of(self.side, self.next_local);
        self.next_local += 1;
        self.open_local.insert(id);
        Some(id)
    }

    /// Queues `len` bytes (and a FIN) on stream `id`.
    pub fn write(&mut self, id: StreamId, len: u64, fin: bool) {
        if self.close.is_closed() {
            return;
        }
        self.mux.write(id, len, fin);
    }

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

    fn has_sendable(&self) -> bool {
        self.rec.tlp_pending
            || !self.sb.retx.is_empty()
            || (self.connected_at.is_some()
                && (self.stream_end > self.snd_nxt || self.mux.has_pending()))
    }

    // ----- output --------------------------------------------------------------------------

    /// The next segment to send now, if any.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Segment> {
        // RFC 7323 §3.2: TSval from a clock ticking in ms (Linux TCP_TS_HZ), offset by one
        // so that no timestamp is 0 (Linux never echoes 0).
        self.ts_now = ts_ticks(now) + 1;
        let seg = self.next_segment(now)?;
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += seg.datagram_size();
        self.stats.header_bytes_sent += seg.ip_len() - seg.len;
        self.stats.sack_blocks_sent += seg.sack.len() as u64;
        if seg.len == 0 {
            self.stats.pure_acks_sent += 1;
        } else {
            self.trace.push_with(now, || {
                TraceEvent::SenderProbe(SenderProbe::Sent {
                    seq: seg.seq,
                    len: seg.len,
                    ip_size: seg.ip_len(),
                    retransmission: seg.retransmission,
                })
            });
            self.probe_window(now);
        }
        Some(seg)
    }

    /// The checkers' window probe (issue 16; only while tracing).
    fn probe_window(&mut self, now: SimTime) {
        if self.trace.is_on() {
            let w = SenderProbe::Window {
                cwnd: self.send_window(),
                // RFC 5681 §3.1: TCP's floor is the loss window, one segment.
                minimum: self.cc.minimum_window().min(self.smss),
                bytes_in_flight: self.sb.pipe,
                smss: self.smss,
            };
            self.trace.push(now, TraceEvent::SenderProbe(w));
        }
    }

    fn next_segment(&mut self, now: SimTime) -> Option<Segment> {
        match self.close {
            Close::FinOwed(at) => {
                self.close = Close::Closed(CloseKind::LocalClose, at);
                let mut s = self.bare_segment();
                s.flags.fin = true;
                s.seq = self.snd_nxt;
                return Some(s);
            }
            Close::Closed(..) => return None,
            Close::Open => {}
        }
        if self.hs.syn_pending {
            self.hs.syn_pending = false;
            return Some(self.syn_segment(now));
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
            return Some(self.bare_segment());
        }
        None
    }

    /// A segment without payload carrying the current ACK (and SACK blocks).
    fn bare_segment(&mut self) -> Segment {
        let sack = self.rx.sack_blocks(&self.cfg);
        self.rx.ack_sent();
        Segment {
            conn: 0,
            flags: Flags {
                syn: false,
                ack: true,
                fin: false,
            },
            seq: self.snd_nxt,
            len: 0,
            ack: self.rx.rcv_nxt,
            window: self.rx.rcv_wnd,
            sack,
            syn_options: None,
            timestamps: self.cfg.timestamps,
            ts_val: self.ts_now,
            ts_ecr: self.rx.ts_recent,
            records: Vec::new(),
            retransmission: false,
        }
    }

    fn records_in(&mut self, start: u64, end: u64) -> Vec<Record> {
        let i = self.records.partition_point(|r| r.end() <= start);
        let mut out = std::mem::take(&mut self.spare_records);
        out.clear();
        out.extend(
            self.records
                .range(i..)
                .take_while(|r| r.offset < end)
                .copied(),
        );
        out
    }

    /// `seg` was just put in a recycled box whose old content was `old`: keeps `old`'s
    /// vectors (emptied) for later segments, so that steady state allocates none. A
    /// vector `seg` has not allocated (a pure ACK's records) takes `old`'s, to travel with
    /// the box; otherwise the connection keeps it for its next segment. Only capacity
    /// moves: every vector keeps its content.
    pub fn recycle_segment(&mut self, seg: &mut Segment, old: Segment) {
        let Segment {
            mut records,
            mut sack,
            ..
        } = old;
        records.clear();
        sack.clear();
        if seg.records.capacity() == 0 && seg.records.is_empty() {
            seg.records = records;
        } else if self.spare_records.capacity() < records.capacity() {
            self.spare_records = records;
        }
        if seg.sack.capacity() == 0 && seg.sack.is_empty() {
            seg.sack = sack;
        } else if self.rx.spare_sack.capacity() < sack.capacity() {
            self.rx.spare_sack = sack;
        }
    }

    fn data_segment(&mut self, seq: u64, len: u64, retransmission: bool) -> Segment {
        let records = self.records_in(seq, seq + len);
        let mut s = self.bare_segment();
        s.seq = seq;
        s.len = len;
        s.records = records;
        s.retransmission = retransmission;
        s
    }

    fn push_record(&mut self, kind: RecordKind, len: u64) {
        self.records.push_back(Record {
            offset: self.stream_end,
            len,
            kind,
        });
        self.stream_end += len;
    }

    /// Cuts multiplexer frames until the stream holds `target` bytes (or nothing waits).
    fn fill_stream(&mut self, target: u64) {
        if self.connected_at.is_none() {
            return;
        }
        while self.stream_end < target {
            let Some(r) = self.mux.next_frame(self.stream_end) else {
                break;
            };
            self.records.push_back(r);
            self.stream_end = r.end();
        }
    }

    fn set_blocked(&mut self, now: SimTime, b: Option<Blocked>) {
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

    fn next_data_segment(&mut self, now: SimTime) -> Option<Segment> {
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
    /// allows it.
    fn new_data_segment(&mut self, now: SimTime, cwnd: u64, pipe: u64) -> Option<Segment> {
        self.fill_stream(self.snd_nxt + self.smss);
        let avail = self.stream_end - self.snd_nxt;
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
        let app_limited = self.stream_end == self.snd_nxt && !self.mux.has_pending();
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
        Some(self.data_segment(seq, len, false))
    }

    fn retransmit(&mut self, now: SimTime, seq: u64) -> Segment {
        let len = self.sb.retransmitted(now, seq);
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
        self.data_segment(seq, len, true)
    }

    // ----- input ---------------------------------------------------------------------------

    /// Handles one received segment.
    pub fn handle_segment(&mut self, now: SimTime, seg: &Segment) {
        if self.close.is_closed() {
            return;
        }
        self.last_activity = now;
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
    /// recovery, the window, the timers and the streams' completions, in that order.
    fn on_ack(&mut self, now: SimTime, seg: &Segment) {
        let ack = seg.ack.min(self.snd_nxt);
        self.peer_right_edge = self.peer_right_edge.max(ack + seg.window);
        let prior_pipe = self.sb.pipe.saturating_sub(self.rec.dupack_credit);
        let prior_lost = self.stats.segments_lost;
        let mut newly = std::mem::take(&mut self.newly);
        newly.clear();
        let a = self.ack_scoreboard(now, seg, ack, &mut newly);
        self.ack_rtt(now, seg, &newly, &a);
        let lost_retrans = self.ack_loss_recovery(now, seg, &newly, &a);
        let newly_lost = self.stats.segments_lost > prior_lost || lost_retrans;
        self.ack_window(now, &newly, a.new_data, prior_pipe, newly_lost);
        self.newly = newly;
        // RFC 6298 §5.2 / §5.3.
        if self.snd_una == self.snd_nxt {
            self.rtx_timer.deadline = None;
            self.rec.reo_deadline = None;
        } else if a.new_data {
            self.rtx_timer.deadline = Some(now + self.rto());
        }
        self.schedule_tlp(now);
        for id in self.mux.completed(self.snd_una) {
            self.send_done.insert(id, now);
            self.events.push(StreamEvent::SendComplete(id));
            self.maybe_release(id);
        }
        self.probe_window(now);
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

    /// Hands every record now in order to TLS or the multiplexer.
    fn deliver(&mut self, now: SimTime) {
        while let Some(r) = self.rx.next_record() {
            if r.offset != self.rx.delivered_end {
                self.stats.records_out_of_order += 1;
            }
            self.trace.push_with(now, || {
                TraceEvent::SenderProbe(SenderProbe::Delivered {
                    offset: r.offset,
                    len: r.len,
                })
            });
            self.rx.delivered_end = r.end();
            match r.kind {
                RecordKind::Tls(m) => self.on_tls(now, m),
                RecordKind::Data {
                    stream,
                    payload,
                    fin,
                } => {
                    if self.first_byte_at.is_none() && payload > 0 {
                        self.first_byte_at = Some(now);
                    }
                    self.stats.app_bytes_read += payload;
                    let d = self.rx.mux_recv.on_frame(stream, payload, fin);
                    let peer_opened = Self::initiator(stream) != self.side;
                    if d.new_stream && peer_opened {
                        self.events.push(StreamEvent::StreamOpened(stream));
                    }
                    if d.complete {
                        self.read_done.insert(stream, now);
                        self.events.push(StreamEvent::ReadComplete(stream));
                        self.maybe_release(stream);
                    }
                }
            }
        }
    }

    fn initiator(id: StreamId) -> Side {
        if id % 2 == 1 {
            Side::Client
        } else {
            Side::Server
        }
    }

    /// A locally opened stream is closed once read and acknowledged: it no longer counts
    /// against the concurrency limit.
    fn maybe_release(&mut self, id: StreamId) {
        if self.read_done.contains_key(&id)
            && self.send_done.contains_key(&id)
            && self.open_local.remove(&id)
            && self.streams_blocked
        {
            self.streams_blocked = false;
            self.events.push(StreamEvent::StreamsAvailable);
        }
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

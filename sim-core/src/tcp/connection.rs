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

use super::mux::{MuxRecv, MuxSend};
use super::recovery::{ts_ticks, CaState, Frto, Prr, Rack, Tlp, Undo};
use crate::breakdown::{BreakdownClock, TimePart};
use crate::cc::{self, CongestionController, RttSnapshot};
use crate::config::tcp::{RtoFormula, TcpConfig, TcpRecovery, TlsVersion};
use crate::time::{SimDuration, SimTime};
use crate::trace::{SenderProbe, TraceBuffer, TraceEvent};
use crate::transport::pacer::Pacer;
use crate::transport::ranges::RangeSet;
use crate::transport::rtt::RttEstimator;
use crate::transport::stream::{CloseKind, Side, StreamEvent, StreamId, StreamReadState};
use crate::wire::tcp::{
    max_sack_blocks, syn_options_len, Flags, Record, RecordKind, Segment, SynOptions, TlsMessage,
    FAST_OPEN_COOKIE_LEN,
};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

mod time_split;

/// RFC 6298 §2 clock granularity G: 1 ms (Linux with HZ = 1000).
pub const CLOCK_GRANULARITY: SimDuration = SimDuration::from_millis(1);

/// Where the connection is in its handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpState {
    /// Client not started, or server waiting for a SYN (LISTEN).
    Idle,
    /// Client: SYN sent (SYN-SENT).
    SynSent,
    /// Server: SYN-ACK sent (SYN-RECEIVED).
    SynReceived,
    /// ESTABLISHED.
    Established,
}

/// One sent segment on the scoreboard.
#[derive(Clone, Debug)]
struct SentSeg {
    seq: u64,
    len: u64,
    /// Last (re)transmission.
    sent: SimTime,
    /// Ever retransmitted (Karn: no RTT sample).
    retransmitted: bool,
    sacked: bool,
    lost: bool,
    /// A retransmission of it counts in `pipe`.
    rexmit_in_flight: bool,
    /// Sent with nothing more to send (RFC 9002 §7.8 / RFC 7661: no growth).
    app_limited: bool,
}

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
    closed: Option<(CloseKind, SimTime)>,
    fin_pending: bool,
    last_activity: SimTime,

    // handshake
    syn_pending: bool,
    syn_sent_at: Option<SimTime>,
    syn_retransmitted: bool,

    // TCP Fast Open (RFC 7413) and TLS 1.3 resumption (RFC 8446 §2.2-2.3)
    /// Client: holds a Fast Open cookie for the server.
    cookie: bool,
    /// Client: holds a session ticket.
    session_ticket: bool,
    /// Client: the SYN-ACK carried a cookie (RFC 7413 §4.1.2).
    cookie_received: bool,
    /// Client: a NewSessionTicket arrived (RFC 8446 §4.6.1).
    ticket_received: bool,
    /// This connection resumes with a PSK and 0-RTT data (client: decided at start;
    /// server: the ClientHello offered it).
    psk: bool,
    /// Client: the ClientHello is on the stream.
    hello_sent: bool,
    /// Client: payload bytes its first SYN carried (RFC 7413 §4.2).
    syn_data: u64,
    /// Server: the client's SYN asked for a cookie (an empty Fast Open option, §4.1.1).
    cookie_requested: bool,
    /// Server: it accepted the data of a SYN with a cookie and may send before the
    /// handshake completes (RFC 7413 §4.2.2).
    fast_open_accepted: bool,

    // send side
    /// Records of the byte stream not yet wholly acknowledged: records ending at or below
    /// `snd_una` are dropped (no segment is built below `snd_una` again), so memory is
    /// bounded by what is in flight, not by what was transferred (issue 14).
    records: VecDeque<Record>,
    stream_end: u64,
    mux: MuxSend,
    snd_una: u64,
    snd_nxt: u64,
    segs: VecDeque<SentSeg>,
    retx: BTreeSet<u64>,
    pipe: u64,
    highest_sacked: u64,
    /// The holes of the scoreboard: the sequence numbers of the un-SACKed segments below
    /// `highest_sacked` (still in `segs`). SACK processing and loss detection visit these
    /// instead of walking every SACKed segment on each ACK (issue 14: the walk was ~40 %
    /// of a TCP bulk transfer with drop-tail losses). Checked against the scoreboard by
    /// `debug_check_holes`.
    holes: BTreeSet<u64>,
    /// Scratch list of the segments an ACK newly covers (kept to reuse its allocation):
    /// (sent, len, app_limited, retransmitted, seq).
    newly: Vec<(SimTime, u64, bool, bool, u64)>,
    /// Emptied vectors of recycled segments, for the next segment's records and SACK
    /// blocks ([`TcpConnection::recycle_segment`]).
    spare_records: Vec<Record>,
    spare_sack: Vec<(u64, u64)>,
    peer_right_edge: u64,
    cc: Box<dyn CongestionController>,
    rtt: RttEstimator,
    pacer: Pacer,
    /// The congestion state (`tcp/recovery.rs`).
    ca: CaState,
    /// Linux `high_seq` (RFC 6675 RecoveryPoint): the recovery or loss state ends when
    /// the cumulative ACK reaches it.
    high_seq: u64,
    /// Proportional Rate Reduction during fast recovery (Linux preset).
    prr: Prr,
    /// RACK (Linux preset).
    rack: Rack,
    /// RACK's reordering timer (RFC 8985 §6.3).
    reo_deadline: Option<SimTime>,
    /// The tail loss probe (Linux preset).
    tlp: Tlp,
    /// A probe is due: send one segment now whatever the window.
    tlp_pending: bool,
    /// Undo bookkeeping.
    undo: Undo,
    /// F-RTO (Linux preset).
    frto: Frto,
    /// Timeouts since the cumulative ACK last advanced (Linux `icsk_retransmits`).
    rto_retransmits: u32,
    /// Segments marked lost and not yet acknowledged (Linux `lost_out`).
    lost_out: u64,
    /// Scratch list of RACK's candidate segments (kept to reuse its allocation).
    rack_cand: Vec<usize>,
    /// SACKed segments above `snd_una` (Linux `sacked_out`).
    sacked_out: u64,
    force_retransmit: bool,
    dupacks: u64,
    dupack_credit: u64,
    rto_deadline: Option<SimTime>,
    backoff: u32,
    blocked: Option<(Blocked, SimTime)>,

    // receive side
    rcv_nxt: u64,
    ooo: RangeSet,
    rx_records: BTreeMap<u64, Record>,
    last_rx: Option<u64>,
    unacked_bytes: u64,
    ack_now: bool,
    delack_deadline: Option<SimTime>,
    /// TS.Recent (RFC 7323 §4.3): the timestamp this end echoes.
    ts_recent: u64,
    /// Last.ACK.sent (RFC 7323 §4.3; Linux `rcv_wup`): the cumulative ACK last sent.
    rcv_wup: u64,
    /// The clock of the segment being built, in timestamp ticks.
    ts_now: u64,
    /// ACKs still to send at once in quick-ACK mode (Linux `icsk_ack.quick`).
    quick: u64,
    /// The first data segment arrived (quick-ACK mode entered).
    quick_started: bool,
    /// A duplicate to report in the next ACK's first SACK block (RFC 2883 §4).
    dsack: Option<(u64, u64)>,
    mux_recv: MuxRecv,
    delivered_end: u64,
    /// Receive window advertised beyond `rcv_nxt`: `recv_window`, grown by auto-tuning.
    rcv_wnd: u64,
    /// Dynamic right-sizing (Linux `tcp_rcv_space_adjust`): the start of the current
    /// measurement, the bytes read by then, and the last measured per-RTT reading.
    drs_time: Option<SimTime>,
    drs_seq: u64,
    drs_space: u64,

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
            closed: None,
            fin_pending: false,
            last_activity: SimTime::ZERO,
            syn_pending: false,
            syn_sent_at: None,
            syn_retransmitted: false,
            // `resumed`: held from before the run (client only).
            cookie: side == Side::Client && cfg.resumed && cfg.fast_open,
            session_ticket: side == Side::Client && cfg.resumed && cfg.early_data,
            cookie_received: false,
            ticket_received: false,
            psk: false,
            hello_sent: false,
            syn_data: 0,
            cookie_requested: false,
            fast_open_accepted: false,
            records: VecDeque::new(),
            stream_end: 0,
            mux,
            snd_una: 0,
            snd_nxt: 0,
            segs: VecDeque::new(),
            retx: BTreeSet::new(),
            pipe: 0,
            highest_sacked: 0,
            holes: BTreeSet::new(),
            newly: Vec::new(),
            spare_records: Vec::new(),
            spare_sack: Vec::new(),
            peer_right_edge: 0,
            cc,
            rtt: RttEstimator::new(cfg.initial_rto),
            pacer,
            ca: CaState::Open,
            high_seq: 0,
            prr: Prr::default(),
            rack: Rack::default(),
            reo_deadline: None,
            tlp: Tlp::default(),
            tlp_pending: false,
            undo: Undo::default(),
            frto: Frto::Off,
            rto_retransmits: 0,
            lost_out: 0,
            rack_cand: Vec::new(),
            sacked_out: 0,
            force_retransmit: false,
            dupacks: 0,
            dupack_credit: 0,
            rto_deadline: None,
            backoff: 0,
            blocked: None,
            rcv_nxt: 0,
            ooo: RangeSet::new(),
            rx_records: BTreeMap::new(),
            last_rx: None,
            unacked_bytes: 0,
            ack_now: false,
            delack_deadline: None,
            ts_recent: 0,
            rcv_wup: 0,
            ts_now: 1,
            quick: 0,
            quick_started: false,
            dsack: None,
            mux_recv: MuxRecv::default(),
            delivered_end: 0,
            rcv_wnd: cfg.recv_window,
            drs_time: None,
            drs_seq: 0,
            // Linux tcp_init_buffer_space: rcvq_space.space = min(rcv_wnd, 10 * advmss).
            drs_space: cfg.recv_window.min(10 * smss),
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
            self.cookie || self.cookie_received,
            self.session_ticket || self.ticket_received,
        )
    }
    /// Client: takes a cookie and a session ticket an earlier connection left (before
    /// [`TcpConnection::start`]); each is used only when `fast_open` / `early_data` is on.
    pub fn resume(&mut self, cookie: bool, session_ticket: bool) {
        self.cookie |= cookie && self.cfg.fast_open;
        self.session_ticket |= session_ticket && self.cfg.early_data;
    }
    /// This connection resumed a TLS 1.3 session with 0-RTT data (RFC 8446 §2.3).
    pub fn resumed_with_early_data(&self) -> bool {
        self.psk
    }
    /// Client: payload bytes its SYN carried (TCP Fast Open, RFC 7413 §4.2).
    pub fn syn_data(&self) -> u64 {
        self.syn_data
    }
    /// How and when the connection closed.
    pub fn closed(&self) -> Option<(CloseKind, SimTime)> {
        self.closed
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
        self.pipe
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
        self.rcv_nxt
    }
    /// End of the last record delivered to TLS or the multiplexer.
    pub fn delivered_end(&self) -> u64 {
        self.delivered_end
    }
    /// Current RTO backoff exponent.
    pub fn backoff(&self) -> u32 {
        self.backoff
    }
    /// When the retransmission timer expires, if armed.
    pub fn rto_deadline(&self) -> Option<SimTime> {
        self.rto_deadline
    }
    /// When the delayed-ACK timer expires, if armed.
    pub fn delack_deadline(&self) -> Option<SimTime> {
        self.delack_deadline
    }
    /// In fast recovery (or loss recovery after an RTO) until the cumulative ACK reaches
    /// this point.
    pub fn recovery_point(&self) -> Option<u64> {
        (self.ca != CaState::Open).then_some(self.high_seq)
    }
    /// The congestion state.
    pub fn ca_state(&self) -> CaState {
        self.ca
    }
    /// The window the sender uses now: the controller's, or PRR's during a fast recovery
    /// of the Linux preset (at least one segment).
    pub fn send_window(&self) -> u64 {
        if self.ca == CaState::Recovery && self.cfg.recovery == TcpRecovery::Linux {
            self.prr.cwnd.max(self.smss)
        } else {
            self.cc.window()
        }
    }
    /// Payload bytes in flight (RFC 6675 pipe).
    pub fn bytes_in_flight(&self) -> u64 {
        self.pipe
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
        let factor = 1u64 << self.backoff.min(32);
        base.saturating_mul(factor).min(self.cfg.rto_max)
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
        self.mux_recv.get(id).map(|s| StreamReadState {
            read: s.read,
            window: self.rcv_wnd,
            window_size: self.rcv_wnd,
        })
    }

    // ----- workload-facing -----------------------------------------------------------------

    /// Whether events are pending.
    pub fn has_events(&self) -> bool {
        !self.events.is_empty()
    }

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
        if self.connected_at.is_none() || self.closed.is_some() {
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
        if self.closed.is_some() {
            return;
        }
        self.mux.write(id, len, fin);
    }

    /// Closes: a FIN (sent once; see `docs/tcp.md`).
    pub fn close(&mut self, now: SimTime) {
        if self.closed.is_none() {
            self.closed = Some((CloseKind::LocalClose, now));
            self.fin_pending = true;
            self.rto_deadline = None;
            self.delack_deadline = None;
            self.events.push(StreamEvent::Closed(CloseKind::LocalClose));
        }
    }

    // ----- engine-facing -------------------------------------------------------------------

    /// Starts: a client sends its SYN; a server listens.
    pub fn start(&mut self, now: SimTime) {
        self.started_at = now;
        self.last_activity = now;
        if self.side == Side::Client && self.state == TcpState::Idle {
            self.state = TcpState::SynSent;
            self.syn_pending = true;
            // RFC 8446 §2.3: a ticket lets the client send early data behind its
            // ClientHello.
            self.psk = self.cfg.early_data && self.session_ticket;
            if self.cfg.fast_open && self.cookie {
                // RFC 7413 §4.2: with a cookie the SYN carries data: the ClientHello (and
                // the 0-RTT requests behind it), or the requests without TLS.
                match self.cfg.tls {
                    TlsVersion::None => self.connect(now),
                    _ => self.send_client_hello(now),
                }
            }
        }
    }

    /// Client: puts the ClientHello on the stream (the resumption ClientHello with a
    /// ticket; then 0-RTT data may follow at once, RFC 8446 §2.3).
    fn send_client_hello(&mut self, now: SimTime) {
        if self.hello_sent {
            return;
        }
        self.hello_sent = true;
        if self.psk {
            self.push_record(
                RecordKind::Tls(TlsMessage::ClientHelloPsk),
                self.cfg.resumption_client_hello_size,
            );
            self.connect(now);
        } else {
            self.push_record(
                RecordKind::Tls(TlsMessage::ClientHello),
                self.cfg.client_hello_size,
            );
        }
    }

    /// The earliest timer.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        if self.closed.is_some() {
            return None;
        }
        let mut t = [
            self.rto_deadline,
            self.delack_deadline,
            self.reo_deadline,
            self.tlp.deadline,
        ]
        .into_iter()
        .flatten()
        .min();
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
        if self.closed.is_some() {
            return;
        }
        if self.delack_deadline.is_some_and(|d| d <= now) {
            self.delack_deadline = None;
            if self.unacked_bytes > 0 {
                self.ack_now = true;
                self.stats.delayed_ack_timeouts += 1;
            }
        }
        // Linux keeps one transmission timer: the probe and reordering timers replace the
        // RTO while armed (they are never later than it), so they win a tie.
        if self.tlp.deadline.is_some_and(|d| d <= now) {
            self.tlp.deadline = None;
            self.on_tlp_timeout(now);
        }
        if self.reo_deadline.is_some_and(|d| d <= now) {
            self.reo_deadline = None;
            self.on_reo_timeout(now);
            self.probe_window(now);
        }
        if self.rto_deadline.is_some_and(|d| d <= now) {
            self.reo_deadline = None;
            self.tlp.deadline = None;
            self.on_rto(now);
            self.probe_window(now);
        }
    }

    fn has_sendable(&self) -> bool {
        self.tlp_pending
            || !self.retx.is_empty()
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
                bytes_in_flight: self.pipe,
                smss: self.smss,
            };
            self.trace.push(now, TraceEvent::SenderProbe(w));
        }
    }

    fn next_segment(&mut self, now: SimTime) -> Option<Segment> {
        if let Some((_, _)) = self.closed {
            if self.fin_pending {
                self.fin_pending = false;
                let mut s = self.bare_segment();
                s.flags.fin = true;
                s.seq = self.snd_nxt;
                return Some(s);
            }
            return None;
        }
        if self.syn_pending {
            self.syn_pending = false;
            return Some(self.syn_segment(now));
        }
        // RFC 7413 §4.2.2: a server that accepted SYN data may send before the handshake
        // completes.
        if self.state != TcpState::Established && !self.fast_open_accepted {
            return None;
        }
        if let Some(s) = self.next_data_segment(now) {
            return Some(s);
        }
        if self.ack_now {
            return Some(self.bare_segment());
        }
        None
    }

    fn syn_options(&self) -> SynOptions {
        SynOptions {
            mss: self.cfg.mss,
            // RFC 7323 §2.3: the smallest shift that covers the receive window.
            window_scale: self.cfg.window_scale.then(|| {
                let mut s = 0u8;
                while (65_535u64 << s) < self.cfg.max_recv_window() && s < 14 {
                    s += 1;
                }
                s
            }),
            sack_permitted: self.cfg.sack,
            timestamps: self.cfg.timestamps,
            fast_open: match self.side {
                // RFC 7413 §4.1.1: the cookie, or an empty option requesting one.
                Side::Client => {
                    self.cfg
                        .fast_open
                        .then_some(if self.cookie { FAST_OPEN_COOKIE_LEN } else { 0 })
                }
                // §4.1.2: the SYN-ACK answers a request with a cookie.
                Side::Server => {
                    (self.cfg.fast_open && self.cookie_requested).then_some(FAST_OPEN_COOKIE_LEN)
                }
            },
        }
    }

    fn syn_segment(&mut self, now: SimTime) -> Segment {
        if self.syn_sent_at.is_none() {
            self.syn_sent_at = Some(now);
        }
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rto());
        }
        let server = self.side == Side::Server;
        let options = self.syn_options();
        let mut len = 0;
        if !server && !self.syn_retransmitted && self.cookie && self.cfg.fast_open {
            // RFC 7413 §4.2: the first SYN carries data, as much as fits in one segment
            // beside its options (RFC 6691 §2). A retransmitted SYN carries none (as
            // Linux): the data then goes after the handshake.
            let room = self.cfg.mss.saturating_sub(syn_options_len(&options));
            self.fill_stream(room);
            len = self.stream_end.min(room);
            if len > 0 {
                self.syn_data = len;
                self.snd_nxt = len;
                self.pipe += len;
                self.segs.push_back(SentSeg {
                    seq: 0,
                    len,
                    sent: now,
                    // The SYN's RTT sample is taken at establishment (Karn, RFC 6298 §3).
                    retransmitted: true,
                    sacked: false,
                    lost: false,
                    rexmit_in_flight: false,
                    app_limited: self.stream_end == len && !self.mux.has_pending(),
                });
                self.cc.on_packet_sent(now, len, self.pipe);
            }
        }
        let ack = if server {
            // The SYN-ACK acknowledges accepted SYN data (RFC 7413 §4.2.2).
            self.ack_sent();
            self.rcv_nxt
        } else {
            0
        };
        Segment {
            conn: 0,
            flags: Flags {
                syn: true,
                ack: server,
                fin: false,
            },
            seq: 0,
            len,
            ack,
            // RFC 7323 §2.2: the window of a SYN is never scaled.
            window: self.cfg.recv_window.min(65_535),
            sack: Vec::new(),
            syn_options: Some(options),
            timestamps: false,
            ts_val: self.ts_now,
            ts_ecr: self.ts_recent,
            records: self.records_in(0, len),
            retransmission: self.syn_retransmitted,
        }
    }

    /// A segment without payload carrying the current ACK (and SACK blocks).
    fn bare_segment(&mut self) -> Segment {
        let sack = self.sack_blocks();
        self.ack_sent();
        Segment {
            conn: 0,
            flags: Flags {
                syn: false,
                ack: true,
                fin: false,
            },
            seq: self.snd_nxt,
            len: 0,
            ack: self.rcv_nxt,
            window: self.rcv_wnd,
            sack,
            syn_options: None,
            timestamps: self.cfg.timestamps,
            ts_val: self.ts_now,
            ts_ecr: self.ts_recent,
            records: Vec::new(),
            retransmission: false,
        }
    }

    fn ack_sent(&mut self) {
        // Linux tcp_event_ack_sent / tcp_dec_quickack_mode: an ACK of new data uses one
        // quick ACK.
        if self.rcv_nxt > self.rcv_wup && self.quick > 0 {
            self.quick -= 1;
        }
        self.ack_now = false;
        self.unacked_bytes = 0;
        self.delack_deadline = None;
        // RFC 7323 §4.3 Last.ACK.sent (Linux rcv_wup).
        self.rcv_wup = self.rcv_nxt;
    }

    /// RFC 2018 §4: the block holding the most recent segment first, then the others,
    /// highest first, as many as fit.
    fn sack_blocks(&mut self) -> Vec<(u64, u64)> {
        let dsack = self.dsack.take();
        if !self.cfg.sack || (self.ooo.is_empty() && dsack.is_none()) {
            return Vec::new();
        }
        let max = max_sack_blocks(self.cfg.timestamps);
        let mut out = std::mem::take(&mut self.spare_sack);
        out.clear();
        out.reserve(max);
        // RFC 2883 §4: a duplicate is reported in the first block (a D-SACK), the
        // ordinary blocks follow.
        if let Some(d) = dsack {
            out.push(d);
        }
        let first = self
            .last_rx
            .and_then(|v| self.ooo.iter().find(|&(a, b)| a <= v && v < b));
        if let Some(b) = first {
            out.push(b);
        }
        for b in self.ooo.iter().rev() {
            if out.len() >= max {
                break;
            }
            if Some(b) != first {
                out.push(b);
            }
        }
        out
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
        } else if self.spare_sack.capacity() < sack.capacity() {
            self.spare_sack = sack;
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
        let pipe = self.pipe.saturating_sub(self.dupack_credit);
        // RFC 6675 §5 (4.2) / RFC 6298 §5.4: the first hole goes out whatever the window.
        if self.force_retransmit {
            self.force_retransmit = false;
            if let Some(&seq) = self.retx.first() {
                return Some(self.retransmit(now, seq));
            }
        }
        if self.tlp_pending {
            // RFC 8985 §7.3 (Linux tcp_send_loss_probe): one segment whatever the window:
            // new data if the peer's window allows, else the last segment again.
            self.tlp_pending = false;
            if let Some(s) = self.new_data_segment(now, u64::MAX, pipe) {
                self.tlp.retrans = false;
                self.tlp.high_seq = Some(self.snd_nxt);
                return Some(s);
            }
            if let Some(last) = self.segs.back().filter(|s| !s.sacked).map(|s| s.seq) {
                self.tlp.retrans = true;
                self.tlp.seq = last;
                self.tlp.high_seq = Some(self.snd_nxt);
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
        if self.frto != Frto::NewDataSent {
            if let Some(&seq) = self.retx.first() {
                let len = self.seg_at(seq).len;
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
        self.pipe += len;
        if self.ca == CaState::Recovery {
            self.prr.out += len;
        }
        self.fill_stream(self.snd_nxt + 1);
        let app_limited = self.stream_end == self.snd_nxt && !self.mux.has_pending();
        self.segs.push_back(SentSeg {
            seq,
            len,
            sent: now,
            retransmitted: false,
            sacked: false,
            lost: false,
            rexmit_in_flight: false,
            app_limited,
        });
        self.cc.on_packet_sent(now, len, self.pipe);
        self.pacer.on_sent(len);
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rto());
        }
        self.schedule_tlp(now);
        Some(self.data_segment(seq, len, false))
    }

    fn seg_index(&self, seq: u64) -> usize {
        let i = self.segs.partition_point(|s| s.seq < seq);
        debug_assert!(self.segs.get(i).is_some_and(|s| s.seq == seq));
        i
    }

    fn seg_at(&self, seq: u64) -> &SentSeg {
        &self.segs[self.seg_index(seq)]
    }

    fn retransmit(&mut self, now: SimTime, seq: u64) -> Segment {
        self.retx.remove(&seq);
        let i = self.seg_index(seq);
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
        if self.ca == CaState::Recovery {
            self.prr.out += len;
        }
        // Linux tcp_retransmit_skb: the episode's first retransmission time (for Eifel
        // detection) and the count a DSACK may show spurious.
        if self.undo.first_retrans_ts.is_none() {
            self.undo.first_retrans_ts = Some(self.ts_now);
        }
        self.undo.retrans = self.undo.retrans.max(0) + 1;
        self.stats.segments_retransmitted += 1;
        self.stats.bytes_retransmitted += len;
        self.cc.on_packet_sent(now, len, self.pipe);
        self.pacer.on_sent(len);
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rto());
        }
        self.data_segment(seq, len, true)
    }

    // ----- input ---------------------------------------------------------------------------

    /// Handles one received segment.
    pub fn handle_segment(&mut self, now: SimTime, seg: &Segment) {
        if self.closed.is_some() {
            return;
        }
        self.last_activity = now;
        if self.cfg.timestamps {
            // RFC 7323 §4.3 (2) and §5.3 R3 (Linux tcp_replace_ts_recent): TS.Recent
            // follows the acceptable segments at or below Last.ACK.sent, so an ACK echoes
            // the segment that last advanced the left window edge; a SYN sets it. A
            // wholly old duplicate is not acceptable (RFC 9293 §3.10.7.4; Linux
            // tcp_sequence: its end before rcv_wup): its ACK echoes the older value, which
            // is how a retransmission's RTT sample grows under heavy loss.
            let acceptable = seg.seq + seg.len >= self.rcv_wup;
            let in_window =
                seg.flags.syn || (seg.timestamps && seg.seq <= self.rcv_wup && acceptable);
            if in_window && seg.ts_val >= self.ts_recent {
                self.ts_recent = seg.ts_val;
            }
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
        if seg.flags.fin && self.closed.is_none() {
            self.closed = Some((CloseKind::PeerClose, now));
            self.rto_deadline = None;
            self.delack_deadline = None;
            self.events.push(StreamEvent::Closed(CloseKind::PeerClose));
        }
    }

    fn on_syn(&mut self, now: SimTime, seg: &Segment) {
        match (self.side, seg.flags.ack) {
            (Side::Server, false) => match self.state {
                TcpState::Idle => {
                    self.state = TcpState::SynReceived;
                    self.syn_pending = true;
                    let fo = seg.syn_options.and_then(|o| o.fast_open);
                    self.cookie_requested = fo == Some(0);
                    if self.cfg.fast_open && fo.is_some_and(|c| c > 0) && seg.len > 0 {
                        // RFC 7413 §4.2.2: a valid cookie (the model's cookies always
                        // are): the data is delivered now, the server may answer at once.
                        self.fast_open_accepted = true;
                        self.peer_right_edge = seg.window;
                        if self.cfg.tls == TlsVersion::None {
                            self.connect(now);
                        }
                        self.on_data(now, seg);
                    }
                }
                TcpState::SynReceived => {
                    // The client retransmitted its SYN: our SYN-ACK was lost (or is
                    // late); answer again.
                    self.syn_pending = true;
                    self.syn_retransmitted = true;
                    self.stats.syn_retransmissions += 1;
                }
                _ => self.ack_now = true,
            },
            (Side::Client, true) => {
                if self.state == TcpState::SynSent {
                    self.peer_right_edge = seg.window;
                    if seg
                        .syn_options
                        .and_then(|o| o.fast_open)
                        .is_some_and(|c| c > 0)
                    {
                        self.cookie_received = true;
                    }
                    self.establish(now);
                    if self.syn_data > 0 {
                        self.on_ack(now, seg);
                        if self.snd_una < self.snd_nxt {
                            // RFC 7413 §4.2.1: the SYN-ACK did not acknowledge the SYN's
                            // data (lost with a retransmitted SYN, or refused): send it
                            // again now.
                            for i in 0..self.segs.len() {
                                self.mark_lost(i);
                            }
                            self.force_retransmit = true;
                        }
                    }
                }
                // RFC 9293 §3.5: acknowledge the SYN-ACK (again if it was repeated).
                self.ack_now = true;
            }
            _ => {}
        }
    }

    fn establish(&mut self, now: SimTime) {
        self.state = TcpState::Established;
        self.established_at = Some(now);
        self.rto_deadline = None;
        // RFC 6298 §3 (Karn): a retransmitted SYN gives no sample.
        if let (Some(t), false) = (self.syn_sent_at, self.syn_retransmitted) {
            self.rtt
                .update(now, now.saturating_since(t), SimDuration::ZERO, None);
        }
        self.backoff = 0;
        if self.snd_nxt > self.snd_una {
            // Fast Open data sent before the handshake completed is still outstanding.
            self.rto_deadline = Some(now + self.rto());
        }
        match (self.cfg.tls, self.side) {
            (TlsVersion::None, _) => self.connect(now),
            (_, Side::Client) => self.send_client_hello(now),
            (_, Side::Server) => {}
        }
    }

    fn connect(&mut self, now: SimTime) {
        if self.connected_at.is_none() {
            self.connected_at = Some(now);
            self.events.push(StreamEvent::Connected);
        }
    }

    fn on_data(&mut self, now: SimTime, seg: &Segment) {
        let end = seg.seq + seg.len;
        if !self.quick_started {
            // Linux tcp_event_data_recv: the first data enters quick-ACK mode
            // (tcp_incr_quickack: min(rcv_wnd / (2 MSS), TCP_MAX_QUICKACKS)).
            self.quick_started = true;
            self.quick = match self.rcv_wnd / (2 * self.smss) {
                _ if self.cfg.quickack == 0 => 0,
                0 => 2.min(self.cfg.quickack),
                q => q.min(self.cfg.quickack),
            };
        }
        if end <= self.rcv_nxt {
            // RFC 5681 §4.2 / RFC 2883: acknowledge a duplicate at once, reporting it in
            // a D-SACK block.
            self.stats.duplicate_bytes += seg.len;
            self.ack_now = true;
            if self.cfg.sack {
                self.dsack = Some((seg.seq, end));
            }
            return;
        }
        if end > self.rcv_nxt + self.rcv_wnd {
            self.stats.beyond_window_bytes += end - (self.rcv_nxt + self.rcv_wnd);
        }
        let start = seg.seq.max(self.rcv_nxt);
        let had_gap = !self.ooo.is_empty();
        let fresh = self.ooo.insert(start, end);
        self.stats.duplicate_bytes += seg.len - fresh;
        if fresh == 0 && self.cfg.sack {
            // RFC 2883 §4.2: a duplicate of out-of-order data is a D-SACK too.
            self.dsack = Some((start, end));
        }
        for r in &seg.records {
            if r.end() > self.rcv_nxt {
                self.rx_records.entry(r.offset).or_insert(*r);
            }
        }
        if seg.seq > self.rcv_nxt {
            // Out of order: immediate ACK with SACK (RFC 5681 §4.2, RFC 2018 §4).
            self.last_rx = Some(seg.seq);
            self.ack_now = true;
            return;
        }
        let new_nxt = self.ooo.contiguous_end(self.rcv_nxt);
        self.ooo.remove(self.rcv_nxt, new_nxt);
        self.rcv_nxt = new_nxt;
        self.last_rx = None;
        if had_gap {
            // It filled (part of) a hole: immediate ACK (RFC 5681 §4.2).
            self.ack_now = true;
        } else {
            self.unacked_bytes += seg.len;
            if self.quick > 0 || self.unacked_bytes >= self.cfg.ack_every * self.smss {
                self.ack_now = true;
            } else if self.delack_deadline.is_none() {
                self.delack_deadline = Some(now + self.cfg.delayed_ack);
            }
        }
        self.deliver(now);
        if self.cfg.recv_window_autotune {
            self.rcv_space_adjust(now);
        }
    }

    /// Receive-window auto-tuning after Linux's dynamic right-sizing
    /// (`tcp_rcv_space_adjust`): once at least one RTT has passed since the measurement
    /// began, if the application read more than in the previous measurement, the window
    /// becomes `2 x read + 16 segments` (never less than before: RFC 9293 §3.8.6, no
    /// shrinking), capped at `recv_window_max` (`tcp_rmem[2]`). The application reads at
    /// once, so "read" is `rcv_nxt`. Linux's receiver RTT estimate (`rcv_rtt_est`) is this
    /// endpoint's smoothed RTT here (`docs/tcp.md`).
    fn rcv_space_adjust(&mut self, now: SimTime) {
        let Some(start) = self.drs_time else {
            self.drs_time = Some(now);
            self.drs_seq = self.rcv_nxt;
            return;
        };
        if self.rtt.first_sample_time().is_none()
            || now.saturating_since(start) < self.rtt.smoothed_rtt()
        {
            return;
        }
        let copied = self.rcv_nxt - self.drs_seq;
        if copied > self.drs_space {
            // Linux: rcvwin = (copied << 1) + 16 * advmss.
            let want = (2 * copied + 16 * self.smss).min(self.cfg.recv_window_max);
            self.rcv_wnd = self.rcv_wnd.max(want);
        }
        self.drs_space = copied;
        self.drs_seq = self.rcv_nxt;
        self.drs_time = Some(now);
    }

    /// The receive window currently advertised beyond the next expected byte.
    pub fn recv_window(&self) -> u64 {
        self.rcv_wnd
    }

    /// Hands every record now in order to TLS or the multiplexer.
    fn deliver(&mut self, now: SimTime) {
        while let Some((_, r)) = self.rx_records.first_key_value() {
            if r.end() > self.rcv_nxt {
                break;
            }
            let (_, r) = self.rx_records.pop_first().expect("non-empty");
            if r.offset != self.delivered_end {
                self.stats.records_out_of_order += 1;
            }
            self.trace.push_with(now, || {
                TraceEvent::SenderProbe(SenderProbe::Delivered {
                    offset: r.offset,
                    len: r.len,
                })
            });
            self.delivered_end = r.end();
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
                    let d = self.mux_recv.on_frame(stream, payload, fin);
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

    /// The TLS handshake, message by message (RFC 8446 §2, RFC 5246 §7.3).
    fn on_tls(&mut self, now: SimTime, m: TlsMessage) {
        let tls = self.cfg.tls;
        match (self.side, m) {
            (Side::Server, TlsMessage::ClientHello) => {
                self.push_record(
                    RecordKind::Tls(TlsMessage::ServerFlight),
                    self.cfg.server_flight_size,
                );
            }
            (Side::Server, TlsMessage::ClientHelloPsk) => {
                // RFC 8446 §2.2-2.3: the abbreviated flight; the early data behind the
                // ClientHello is read at once and the server may answer right after its
                // Finished (0.5-RTT data).
                self.psk = true;
                self.push_record(
                    RecordKind::Tls(TlsMessage::ResumedServerFlight),
                    self.cfg.resumption_server_flight_size,
                );
                self.connect(now);
            }
            (Side::Client, TlsMessage::ResumedServerFlight) => {
                // RFC 8446 §4.5: EndOfEarlyData (a 4-byte handshake header) before the
                // Finished.
                self.push_record(
                    RecordKind::Tls(TlsMessage::ClientFinished),
                    self.cfg.client_finished_size + 4,
                );
            }
            (Side::Client, TlsMessage::NewSessionTicket) => self.ticket_received = true,
            (Side::Client, TlsMessage::ServerFlight) => {
                self.push_record(
                    RecordKind::Tls(TlsMessage::ClientFinished),
                    self.cfg.client_finished_size,
                );
                if tls == TlsVersion::Tls13 {
                    self.connect(now);
                }
            }
            (Side::Server, TlsMessage::ClientFinished) => {
                if tls == TlsVersion::Tls12 {
                    self.push_record(
                        RecordKind::Tls(TlsMessage::ServerFinished),
                        self.cfg.server_finished_size,
                    );
                }
                if tls == TlsVersion::Tls13 && self.cfg.early_data {
                    // RFC 8446 §4.6.1: a ticket for the next connection, after the
                    // client's Finished.
                    self.push_record(
                        RecordKind::Tls(TlsMessage::NewSessionTicket),
                        self.cfg.new_session_ticket_size,
                    );
                }
                self.connect(now);
            }
            (Side::Client, TlsMessage::ServerFinished) => self.connect(now),
            _ => {}
        }
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

    fn mark_lost(&mut self, i: usize) -> Option<SimTime> {
        let s = &mut self.segs[i];
        if s.lost || s.sacked {
            return None;
        }
        s.lost = true;
        self.pipe -= s.len;
        self.retx.insert(s.seq);
        self.lost_out += 1;
        self.stats.segments_lost += 1;
        let (seq, len, sent) = (s.seq, s.len, s.sent);
        // Called on input only (an ACK, a SYN-ACK, a timer): `last_activity` or the
        // timer's time.
        self.trace.push_with(self.last_activity, || {
            TraceEvent::SenderProbe(SenderProbe::Lost { seq, len })
        });
        Some(sent)
    }

    /// RFC 9002 §7.8-style test: the window was (nearly) full before this ACK.
    fn cwnd_limited(&self, prior_pipe: u64) -> bool {
        let cwnd = self.cc.window();
        prior_pipe >= cwnd
            || cwnd - prior_pipe <= 3 * self.smss
            || (self.cc.in_slow_start() && prior_pipe > cwnd / 2)
    }

    fn linux(&self) -> bool {
        self.cfg.recovery == TcpRecovery::Linux
    }

    fn on_ack(&mut self, now: SimTime, seg: &Segment) {
        let ack = seg.ack.min(self.snd_nxt);
        self.peer_right_edge = self.peer_right_edge.max(ack + seg.window);
        let linux = self.linux();
        let prior_pipe = self.pipe.saturating_sub(self.dupack_credit);
        let prior_lost = self.stats.segments_lost;
        // (sent, len, app_limited, retransmitted, seq)
        let mut newly = std::mem::take(&mut self.newly);
        newly.clear();
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
            while let Some(front) = self.segs.front() {
                if front.seq + front.len > ack {
                    break;
                }
                let mut s = self.segs.pop_front().expect("front");
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
                    self.trace.push_with(now, || {
                        TraceEvent::SenderProbe(SenderProbe::Acked { seq, len })
                    });
                    cum_retrans |= s.retransmitted;
                    newly.push((s.sent, s.len, s.app_limited, s.retransmitted, s.seq));
                }
            }
            cum_count = newly.len();
            self.snd_una = ack;
            while self.records.front().is_some_and(|r| r.end() <= ack) {
                self.records.pop_front();
            }
            self.dupacks = 0;
            self.dupack_credit = 0;
            self.rto_retransmits = 0;
        } else if !self.cfg.sack
            && ack == self.snd_una
            && seg.len == 0
            && !seg.flags.fin
            && self.snd_nxt > self.snd_una
        {
            self.dupacks += 1;
        }
        let hs_before = self.highest_sacked;
        let mut new_sack = false;
        if self.cfg.sack {
            for &(a, b) in &seg.sack {
                let a = a.max(self.snd_una);
                if a >= b {
                    continue;
                }
                // The segments wholly inside [a, b) not SACKed before, in sequence order:
                // first the holes below `highest_sacked`, then the segments above it
                // (none of which is SACKed).
                let hs = self.highest_sacked;
                let (mut cursor, below) = (a, b.min(hs));
                while cursor < below {
                    let Some(&seq) = self.holes.range(cursor..below).next() else {
                        break;
                    };
                    cursor = seq + 1;
                    let i = self.seg_index(seq);
                    if self.segs[i].seq + self.segs[i].len > b {
                        break;
                    }
                    self.holes.remove(&seq);
                    self.sack_segment(now, i, &mut newly);
                    new_sack = true;
                }
                let first = self.segs.partition_point(|s| s.seq < a.max(hs));
                let mut i = first;
                while i < self.segs.len() && self.segs[i].seq + self.segs[i].len <= b {
                    self.sack_segment(now, i, &mut newly);
                    new_sack = true;
                    i += 1;
                }
                if self.highest_sacked > hs {
                    // The un-SACKed segments between the old and the new highest SACKed
                    // byte are holes now.
                    let mut j = self.segs.partition_point(|s| s.seq < hs);
                    while j < self.segs.len() && self.segs[j].seq < self.highest_sacked {
                        if !self.segs[j].sacked {
                            self.holes.insert(self.segs[j].seq);
                        }
                        j += 1;
                    }
                }
            }
        }
        self.debug_check_holes();
        self.debug_check_pipe();
        let newly_bytes: u64 = newly.iter().map(|n| n.1).sum();
        // Data never retransmitted was delivered (Linux FLAG_ORIG_SACK_ACKED).
        let orig_delivered = newly.iter().any(|n| !n.3);
        if linux {
            // RFC 8985 §6.2 step 3 (Linux tcp_check_sack_reordering): a never
            // retransmitted segment delivered below what was SACKed before arrived out of
            // order.
            if newly.iter().any(|n| !n.3 && n.4 + n.1 <= hs_before) {
                self.rack.reord_seen = true;
            }
            self.update_rtt_linux(now, seg, &newly, cum_count, cum_retrans, new_data);
            let min_rtt = self.rtt.min_rtt();
            for &(sent, len, _, retransmitted, seq) in &newly {
                self.rack
                    .advance(now, sent, seq + len, retransmitted, min_rtt);
            }
        } else if let Some(&(sent, ..)) = newly.iter().filter(|n| !n.3).max_by_key(|n| n.4) {
            // RTT (RFC 6298 §3, Karn): the newest newly covered, never retransmitted
            // segment.
            self.rtt
                .update(now, now.saturating_since(sent), SimDuration::ZERO, None);
            self.backoff = 0;
        }
        if linux && self.tlp.high_seq.is_some() {
            self.process_tlp_ack(now, ack, new_data, new_sack, seg.len > 0, dsack);
        }
        let partial = self.ca != CaState::Open && new_data && ack < self.high_seq;
        // The end of a recovery or loss episode (RFC 6675 §5, RFC 6582 §3.2; Linux
        // tcp_fastretrans_alert "E. Process state").
        if self.ca == CaState::Recovery && self.snd_una >= self.high_seq {
            self.try_undo(now, seg, false);
            // Linux tcp_end_cwnd_reduction: the window is ssthresh (the controller's,
            // which saw no ACK during the recovery).
            self.ca = CaState::Open;
        }
        let mut lost_retrans = false;
        let mut enter = false;
        match self.ca {
            CaState::Recovery => {
                if linux && dsack.is_some() && self.undo.marker.is_some() && self.undo.retrans == 0
                {
                    // Linux tcp_try_undo_dsack: every retransmission was a duplicate.
                    self.undo_reduction(now, false);
                    self.ca = CaState::Open;
                } else if linux && new_data && self.eifel(seg) && !self.any_rexmit_in_flight() {
                    // Linux tcp_try_undo_partial: the original was delivered.
                    self.undo_reduction(now, true);
                    self.ca = CaState::Open;
                }
                if self.ca == CaState::Recovery {
                    lost_retrans = self.detect_losses(now, new_sack, partial);
                }
            }
            CaState::Loss => {
                if self.process_loss(now, seg, new_data, new_sack, orig_delivered) {
                    lost_retrans = self.detect_losses(now, new_sack, partial);
                    // Linux: a lost retransmission in the loss state starts a fast
                    // recovery (a new reduction, from the loss state's window).
                    enter = lost_retrans && self.ca == CaState::Loss;
                }
            }
            CaState::Open => {}
        }
        if self.ca == CaState::Open {
            self.detect_losses(now, new_sack, partial);
            // Linux tcp_time_to_recover: any segment marked lost.
            enter = self.lost_out > 0 || (!self.cfg.sack && !self.retx.is_empty());
        }
        if enter {
            self.enter_recovery(now);
        }
        let newly_lost = self.stats.segments_lost > prior_lost || lost_retrans;
        let snap = RttSnapshot {
            min_rtt: self.rtt.min_rtt(),
            smoothed_rtt: self.rtt.smoothed_rtt(),
            latest_rtt: self.rtt.latest_rtt(),
            rttvar: self.rtt.rttvar(),
        };
        let limited = self.cwnd_limited(prior_pipe);
        if self.ca == CaState::Recovery {
            // RFC 5681 §3.2 steps 4-6, RFC 6675 §5: no window growth during fast
            // recovery. The Linux preset shapes the sending by PRR (RFC 6937).
            if linux {
                let ssthresh = self.cc.ssthresh().unwrap_or(self.cc.window());
                self.prr.on_ack(
                    newly_bytes,
                    self.pipe,
                    ssthresh,
                    self.smss,
                    new_data,
                    newly_lost,
                );
            }
        } else if !linux || new_data {
            // Linux tcp_may_raise_cwnd: the window grows on ACKs that advance the
            // cumulative ACK, by everything they newly delivered.
            for &(sent, len, app_limited, _, _) in newly.iter() {
                self.cc
                    .on_packet_acked(now, sent, len, app_limited || !limited, &snap);
            }
        }
        self.newly = newly;
        // RFC 6298 §5.2 / §5.3.
        if self.snd_una == self.snd_nxt {
            self.rto_deadline = None;
            self.reo_deadline = None;
        } else if new_data {
            self.rto_deadline = Some(now + self.rto());
        }
        self.schedule_tlp(now);
        for id in self.mux.completed(self.snd_una) {
            self.send_done.insert(id, now);
            self.events.push(StreamEvent::SendComplete(id));
            self.maybe_release(id);
        }
        self.probe_window(now);
    }

    /// Linux `tcp_ack_update_rtt` (RFC 6298 §3 with RFC 7323 §4): the oldest newly
    /// cumulatively acknowledged segment when none of them was retransmitted (Karn), else
    /// the oldest newly SACKed one never retransmitted, else, with timestamps and an
    /// advancing cumulative ACK, the echoed timestamp (valid for retransmitted data,
    /// RFC 7323 §4). A sample resets the backoff (RFC 6298 §5.7).
    fn update_rtt_linux(
        &mut self,
        now: SimTime,
        seg: &Segment,
        newly: &[(SimTime, u64, bool, bool, u64)],
        cum_count: usize,
        cum_retrans: bool,
        new_data: bool,
    ) {
        let cum = &newly[..cum_count];
        let sacked = &newly[cum_count..];
        let oldest =
            |v: &[(SimTime, u64, bool, bool, u64)]| v.iter().filter(|n| !n.3).map(|n| n.0).min();
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
            self.backoff = 0;
        }
    }

    /// A D-SACK `(a, b)` arrived (RFC 2883, RFC 3708 §3; Linux `tcp_check_dsack`): one
    /// retransmission of the current episode was a duplicate.
    fn on_dsack(&mut self, (a, b): (u64, u64)) {
        self.stats.dsacks_received += 1;
        if let Some(marker) = self.undo.marker {
            if b > marker && self.undo.retrans > 0 {
                self.undo.retrans -= 1;
            }
        }
        let _ = a;
    }

    /// RFC 3522 Eifel detection (Linux `tcp_packet_delayed`): the ACK echoes a timestamp
    /// older than the episode's first retransmission, so an original transmission caused
    /// it.
    fn eifel(&self, seg: &Segment) -> bool {
        self.cfg.timestamps
            && seg.timestamps
            && seg.ts_ecr > 0
            && self.undo.first_retrans_ts.is_some_and(|t| seg.ts_ecr < t)
    }

    fn any_rexmit_in_flight(&self) -> bool {
        self.segs.iter().any(|s| s.rexmit_in_flight)
    }

    /// Linux `tcp_may_undo`: every retransmission shown a duplicate by D-SACKs, or the
    /// timestamps show the original arrived.
    fn may_undo(&self, seg: &Segment) -> bool {
        self.linux() && self.undo.marker.is_some() && (self.undo.retrans == 0 || self.eifel(seg))
    }

    /// Linux `tcp_try_undo_recovery` / `tcp_try_undo_loss`: undoes the reduction if it
    /// was spurious. Returns whether it did.
    fn try_undo(&mut self, now: SimTime, seg: &Segment, unmark: bool) -> bool {
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
    fn undo_reduction(&mut self, now: SimTime, unmark: bool) {
        self.cc
            .undo_reduction(now, self.undo.prior_cwnd, self.undo.prior_ssthresh);
        self.undo.marker = None;
        self.stats.spurious_losses += 1;
        if unmark {
            for i in 0..self.segs.len() {
                let s = &mut self.segs[i];
                if s.lost && !s.sacked {
                    s.lost = false;
                    self.pipe += s.len;
                    self.retx.remove(&s.seq);
                    let (seq, len) = (s.seq, s.len);
                    self.trace.push_with(now, || {
                        TraceEvent::SenderProbe(SenderProbe::Restored { seq, len })
                    });
                }
            }
            self.lost_out = 0;
        }
        self.frto = Frto::Off;
    }

    /// Linux `tcp_process_loss` (RFC 5682 §3.1 with SACK). Returns whether loss
    /// detection and retransmission go on as usual.
    fn process_loss(
        &mut self,
        now: SimTime,
        seg: &Segment,
        new_data: bool,
        new_sack: bool,
        orig_delivered: bool,
    ) -> bool {
        let recovered = self.snd_una >= self.high_seq;
        if new_data && self.try_undo(now, seg, true) {
            // Eifel (timestamps) or D-SACKs showed the timeout spurious.
            self.stats.spurious_rtos += 1;
            self.ca = CaState::Open;
            return false;
        }
        if self.frto != Frto::Off {
            // Step 3.b: data never retransmitted was delivered: the timeout was spurious.
            if orig_delivered {
                self.undo_reduction(now, true);
                self.stats.spurious_rtos += 1;
                self.ca = CaState::Open;
                return false;
            }
            if self.snd_nxt > self.high_seq {
                if new_sack || !new_data {
                    // Step 3.a: the loss was real.
                    self.frto = Frto::Off;
                }
            } else if new_data && !recovered {
                // Step 2.b: send new data rather than retransmissions, if there is any
                // and the peer's window allows.
                self.high_seq = self.snd_nxt;
                self.fill_stream(self.snd_nxt + self.smss);
                if self.stream_end > self.snd_nxt && self.peer_right_edge > self.snd_nxt {
                    self.frto = Frto::NewDataSent;
                    return false;
                }
                self.frto = Frto::Off;
            }
        }
        if recovered {
            // Step 2.a and the first part of 3.a: the episode is over.
            self.try_undo(now, seg, false);
            self.ca = CaState::Open;
            self.frto = Frto::Off;
            return false;
        }
        true
    }

    /// Enters fast recovery (RFC 6675 §5 (4.1-4.2); Linux `tcp_enter_recovery`): one
    /// window reduction, PRR from the current window, the first hole at once.
    fn enter_recovery(&mut self, now: SimTime) {
        let prior_cwnd = self.cc.window();
        self.undo = Undo {
            marker: Some(self.snd_una),
            retrans: -1,
            prior_cwnd,
            prior_ssthresh: self.cc.ssthresh(),
            first_retrans_ts: None,
        };
        // `now` as the newest loss's send time: the controller reduces whatever its own
        // recovery period says (the transport decides, once per round).
        self.cc.on_congestion_event(now, now, self.pipe);
        self.stats.congestion_events += 1;
        self.stats.fast_recoveries += 1;
        self.prr = Prr::start(prior_cwnd);
        self.ca = CaState::Recovery;
        self.high_seq = self.snd_nxt;
        self.frto = Frto::Off;
        self.tlp.deadline = None;
        if !self.linux() {
            self.force_retransmit = true;
        }
        if !self.cfg.sack {
            // RFC 6582 §3.2 step 2: cwnd = ssthresh + 3 SMSS, as credit.
            self.dupack_credit = self.cfg.dup_thresh * self.smss;
            self.force_retransmit = true;
        }
    }

    /// Marks lost what the preset's rule finds. Returns whether a retransmission was
    /// found lost (RACK).
    fn detect_losses(&mut self, now: SimTime, new_sack: bool, partial: bool) -> bool {
        if !self.cfg.sack {
            self.detect_losses_dupack(partial);
            false
        } else if self.linux() {
            self.rack_detect(now)
        } else {
            if new_sack {
                self.detect_losses_sack();
            }
            false
        }
    }

    /// RFC 8985 §6.2 step 5 (Linux `tcp_rack_detect_loss`): every segment sent before
    /// the most recently sent delivered one (RACK.xmit_ts) and outstanding longer than
    /// `RACK.rtt + reo_wnd` is lost (a retransmission too); those not yet due arm the
    /// reordering timer (§6.3) for the first of them, plus Linux's 2 ms slack
    /// (`TCP_TIMEOUT_MIN_US`). Returns whether a retransmission was found lost.
    fn rack_detect(&mut self, now: SimTime) -> bool {
        self.reo_deadline = None;
        if !self.rack.valid {
            return false;
        }
        let reo = self.rack.reo_wnd(
            self.ca,
            self.sacked_out,
            self.cfg.dup_thresh,
            self.rtt.min_rtt(),
            self.rtt.smoothed_rtt(),
        );
        let limit = self.rack.rtt.saturating_add(reo);
        let (rx, rend) = (self.rack.xmit, self.rack.end_seq);
        let mut lost_retrans = false;
        let mut wait: Option<SimDuration> = None;
        // Candidates: the holes below the highest SACKed byte, then the segments from
        // there up to the first never-retransmitted one sent after RACK.xmit_ts (new
        // data goes out in sequence order, so later ones are later still).
        let mut cand = std::mem::take(&mut self.rack_cand);
        cand.clear();
        for &seq in self.holes.iter() {
            cand.push(self.seg_index(seq));
        }
        let start = self.segs.partition_point(|s| s.seq < self.highest_sacked);
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
                self.stats.rack_losses += 1;
                if s.lost {
                    // A lost retransmission (RFC 8985 §6.2: RACK applies to them too).
                    let s = &mut self.segs[i];
                    s.rexmit_in_flight = false;
                    self.pipe -= s.len;
                    self.retx.insert(s.seq);
                    self.stats.lost_retransmissions += 1;
                    self.stats.segments_lost += 1;
                    let (seq, len) = (s.seq, s.len);
                    self.trace.push_with(now, || {
                        TraceEvent::SenderProbe(SenderProbe::Lost { seq, len })
                    });
                    lost_retrans = true;
                } else {
                    self.mark_lost(i);
                }
            } else {
                let left = limit - elapsed;
                wait = Some(wait.map_or(left, |w| w.max(left)));
            }
        }
        self.rack_cand = cand;
        if let Some(w) = wait {
            self.reo_deadline = Some(now + w + SimDuration::from_millis(2));
        }
        lost_retrans
    }

    /// RACK's reordering timer expired (RFC 8985 §6.3; Linux `tcp_rack_reo_timeout`).
    fn on_reo_timeout(&mut self, now: SimTime) {
        self.last_activity = self.last_activity.max(now);
        let prior_pipe = self.pipe;
        let prior_lost = self.lost_out;
        self.rack_detect(now);
        if self.pipe != prior_pipe || self.lost_out != prior_lost {
            if self.ca == CaState::Open {
                self.enter_recovery(now);
            }
            if self.ca == CaState::Recovery {
                let ssthresh = self.cc.ssthresh().unwrap_or(self.cc.window());
                self.prr
                    .on_ack(self.smss, self.pipe, ssthresh, self.smss, false, true);
            }
        }
    }

    /// RFC 8985 §7.2 (Linux `tcp_schedule_loss_probe`): in the open state with data
    /// outstanding and no probe outstanding, a probe after `2·SRTT` (+ the 200 ms
    /// minimum RTO for a lone segment, the delayed ACK it may wait for; + 2 ms
    /// otherwise; 1 s before an RTT sample), no later than the RTO.
    fn schedule_tlp(&mut self, now: SimTime) {
        self.tlp.deadline = None;
        if !self.linux()
            || !self.cfg.sack
            || self.ca != CaState::Open
            || self.segs.is_empty()
            || self.tlp.high_seq.is_some()
            || self.state != TcpState::Established
        {
            return;
        }
        let pto = if self.rtt.has_sample() {
            let extra = if self.segs.len() == 1 {
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
        self.tlp.deadline = Some(match self.rto_deadline {
            Some(r) => at.min(r),
            None => at,
        });
    }

    /// The probe timer expired (RFC 8985 §7.3; Linux `tcp_send_loss_probe`).
    fn on_tlp_timeout(&mut self, now: SimTime) {
        if self.ca != CaState::Open || self.segs.is_empty() || self.tlp.high_seq.is_some() {
            return;
        }
        self.tlp_pending = true;
        self.stats.tlp_probes += 1;
        // Linux rearms the RTO after the probe.
        self.rto_deadline = Some(now + self.rto());
    }

    /// RFC 8985 §7.4 (Linux `tcp_process_tlp_ack`): a probe that repaired a loss (its
    /// retransmission acknowledged beyond it, no D-SACK) costs one reduction.
    fn process_tlp_ack(
        &mut self,
        now: SimTime,
        ack: u64,
        new_data: bool,
        new_sack: bool,
        has_data: bool,
        dsack: Option<(u64, u64)>,
    ) {
        let Some(h) = self.tlp.high_seq else {
            return;
        };
        if ack < h {
            return;
        }
        if !self.tlp.retrans || dsack.is_some_and(|(a, b)| a <= self.tlp.seq && self.tlp.seq < b) {
            self.tlp.high_seq = None;
        } else if ack > h {
            self.cc.on_congestion_event(now, now, self.pipe);
            self.stats.congestion_events += 1;
            self.stats.tlp_recoveries += 1;
            self.tlp.high_seq = None;
        } else if !(new_data || new_sack || has_data) {
            // A pure duplicate ACK: the original and the probe both arrived.
            self.tlp.high_seq = None;
        }
    }

    /// Marks segment `i` (not SACKed before) SACKed and notes it in `newly`.
    fn sack_segment(
        &mut self,
        now: SimTime,
        i: usize,
        newly: &mut Vec<(SimTime, u64, bool, bool, u64)>,
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
        self.trace.push_with(now, || {
            TraceEvent::SenderProbe(SenderProbe::Acked { seq, len })
        });
        newly.push((s.sent, s.len, s.app_limited, s.retransmitted, s.seq));
        self.highest_sacked = self.highest_sacked.max(s.seq + s.len);
    }

    /// RFC 6675 §4 IsLost over the scoreboard: walking down from the highest SACKed
    /// segment, every un-SACKed segment with `dup_thresh` SACKed segments or more than
    /// `(dup_thresh - 1) * SMSS` SACKed bytes above it is lost. Returns the send time of
    /// the newest segment newly marked.
    fn detect_losses_sack(&mut self) -> Option<SimTime> {
        let top = self.segs.partition_point(|s| s.seq < self.highest_sacked);
        let (mut count, mut bytes) = (0u64, 0u64);
        let thresh = self.cfg.dup_thresh;
        let byte_thresh = (thresh - 1) * self.smss;
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
        while let Some(&seq) = self.holes.range(..cursor).next_back() {
            cursor = seq;
            let i = self.seg_index(seq);
            if self.segs[i].lost {
                break;
            }
            if let Some(t) = self.mark_lost(i) {
                newest = Some(newest.map_or(t, |n: SimTime| n.max(t)));
            }
        }
        newest
    }

    /// Debug builds: `holes` is exactly the un-SACKed segments below `highest_sacked`.
    fn debug_check_holes(&self) {
        if cfg!(debug_assertions) {
            let want = self
                .segs
                .iter()
                .filter(|s| !s.sacked && s.seq < self.highest_sacked)
                .map(|s| s.seq);
            debug_assert!(self.holes.iter().copied().eq(want), "scoreboard holes");
        }
    }

    /// Debug builds: `pipe` is exactly what the scoreboard holds in flight (RFC 6675 §4
    /// SetPipe: an original not lost or SACKed, plus a retransmission in flight).
    fn debug_check_pipe(&self) {
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

    /// RFC 5681 §3.2 / RFC 6582 without SACK: fast retransmit at `dup_thresh` duplicate
    /// ACKs; in recovery each further duplicate ACK lets one more segment out, a partial
    /// ACK retransmits the next hole.
    fn detect_losses_dupack(&mut self, partial: bool) -> Option<SimTime> {
        if self.segs.is_empty() {
            return None;
        }
        if self.ca != CaState::Open {
            if partial {
                // RFC 6582 §3.2 step 5: retransmit the first unacknowledged segment; no
                // second reduction.
                self.force_retransmit = true;
                self.mark_lost(0);
                return None;
            }
            if self.ca == CaState::Recovery && self.dupacks > self.cfg.dup_thresh {
                self.dupack_credit += self.smss;
            }
            return None;
        }
        if self.dupacks == self.cfg.dup_thresh {
            return self.mark_lost(0);
        }
        None
    }

    /// RFC 6298 §5.4-5.6: the retransmission timer expired.
    fn on_rto(&mut self, now: SimTime) {
        self.stats.rto_count += 1;
        self.last_activity = self.last_activity.max(now);
        if self.state != TcpState::Established {
            // SYN or SYN-ACK lost: send it again, back off; a client's first
            // `syn_linear_timeouts` retries keep the initial RTO (Linux
            // tcp_syn_linear_timeouts), the later ones double (RFC 6298 §5.5).
            self.syn_pending = true;
            self.syn_retransmitted = true;
            self.stats.syn_retransmissions += 1;
            // Linux tcp_retransmit_timer: after the k-th retransmission the timer doubles
            // unless k < tcp_syn_linear_timeouts.
            let linear = match self.side {
                Side::Client => u64::from(self.cfg.syn_linear_timeouts),
                Side::Server => 0,
            };
            let k = self.stats.syn_retransmissions;
            self.backoff = (k + 1).saturating_sub(linear.max(1)) as u32;
            self.stats.max_backoff = self.stats.max_backoff.max(self.backoff);
            self.rto_deadline = Some(now + self.rto());
            return;
        }
        if self.snd_una == self.snd_nxt {
            self.rto_deadline = None;
            return;
        }
        // Linux tcp_enter_loss: ssthresh is reduced unless this window already was (a
        // timeout during a fast recovery, or a repeated timeout).
        let new_recovery = self.ca == CaState::Open;
        let reduce = new_recovery
            || self.high_seq <= self.snd_una
            || (self.ca == CaState::Loss && self.rto_retransmits == 0);
        if reduce {
            self.undo = Undo {
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
                self.stats.segments_lost += 1;
            }
            self.retx.insert(s.seq);
            let (seq, len) = (s.seq, s.len);
            self.trace.push_with(now, || {
                TraceEvent::SenderProbe(SenderProbe::Lost { seq, len })
            });
        }
        debug_assert_eq!(self.pipe, 0);
        self.ca = CaState::Loss;
        self.high_seq = self.snd_nxt;
        self.tlp = Tlp::default();
        self.tlp_pending = false;
        self.reo_deadline = None;
        // RFC 5682 §3.1 step 1 (Linux: not after a timeout during a fast recovery, except
        // for a repeated timeout on the same SND.UNA, §3.2).
        self.frto = if self.linux() && (new_recovery || self.rto_retransmits > 0) {
            Frto::Armed
        } else {
            Frto::Off
        };
        self.rto_retransmits += 1;
        self.dupacks = 0;
        self.dupack_credit = 0;
        self.backoff += 1;
        self.stats.max_backoff = self.stats.max_backoff.max(self.backoff);
        self.force_retransmit = true;
        self.rto_deadline = Some(now + self.rto());
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

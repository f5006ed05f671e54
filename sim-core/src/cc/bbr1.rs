//! `cc = "bbr1"`: BBR version 1 (Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, "BBR:
//! Congestion-Based Congestion Control", ACM Queue 14(5), 2016), as
//! draft-cardwell-iccrg-bbr-congestion-control-00 specifies it. Section numbers below are
//! that draft's.
//!
//! The model (§4.1): `BtlBw`, the windowed maximum of delivery-rate samples over 10
//! packet-timed round trips ([`super::rate_sample`], app-limited samples only when they
//! raise it), and `RTprop`, the minimum RTT over 10 s. The control parameters (§4.2):
//! pacing rate `pacing_gain · BtlBw` ([`CongestionController::pacing_rate`], which the
//! transport's pacer follows), and the window `cwnd_gain · BtlBw · RTprop + 3 ·
//! send_quantum`, reached by growing with every delivered byte, never below 4 packets
//! except in loss recovery and after a timeout. The state machine (§4.3): Startup (gains
//! 2/ln 2) until three rounds without 25 % bandwidth growth, Drain (pacing gain ln 2 / 2)
//! until the flight is down to one BDP, ProbeBW cycling the pacing gain through
//! 5/4, 3/4, 1 ×6 with cwnd gain 2 (each phase one `RTprop` long; the first phase chosen
//! at random, not 3/4, from the controller's own stream, [`super::CcContext::rng`]), and
//! ProbeRTT (cwnd 4 packets for at least 200 ms and one round) when `RTprop` has not been
//! refreshed for 10 s.
//!
//! Loss (§4.2.3.4): BBR does not reduce its model on loss. On entering recovery it saves
//! the window and uses packet conservation for one round (`cwnd = inflight + delivered`),
//! then grows back towards the target; the saved window comes back when recovery ends (or
//! an undo). On a retransmission timeout the window becomes `inflight + 1` packet.
//!
//! Not modelled (documented in `docs/bbr.md`): the restart-from-idle pacing
//! (§4.3.4.4), Linux's long-term ("policer") bandwidth sampling and its ACK-aggregation
//! extra window, TSO sizing. The send quantum enters the target window only; the
//! transport's pacer keeps its own burst size.

use super::{CongestionController, ControllerDef, ModelEstimate, RateSample, RttSnapshot};
use crate::rng::RngStream;
use crate::time::{SimDuration, SimTime};
use std::collections::VecDeque;

/// The name the controller reports and the scenario spelling.
pub const NAME: &str = "bbr1";

/// Its row of [`super::CONTROLLERS`].
pub const CONTROLLER: ControllerDef = ControllerDef {
    name: NAME,
    aliases: &[],
    trace_name: NAME,
    build: |ctx| Box::new(Bbr1::new(ctx.segment_size, ctx.initial_window, ctx.rng())),
    // SCTP feeds no rate samples and does not pace.
    sctp: false,
};

/// Fixed-point unit of the gains (1.0 = `GAIN_UNIT`).
pub const GAIN_UNIT: u64 = 1 << 16;

/// §4.3.2 (Startup): `BBRHighGain = 2/ln(2)`, the smallest gain that doubles the
/// sending rate each round. A compile-time IEEE division: the same on every target.
pub const HIGH_GAIN: u64 = (GAIN_UNIT as f64 * 2.0 / std::f64::consts::LN_2) as u64;
/// §4.3.3 (Drain): the pacing gain `1/BBRHighGain`, to drain Startup's queue in a round.
pub const DRAIN_GAIN: u64 = (GAIN_UNIT as f64 * std::f64::consts::LN_2 / 2.0) as u64;
/// §4.3.4 (ProbeBW): the cwnd gain 2.
pub const PROBE_BW_CWND_GAIN: u64 = 2 * GAIN_UNIT;
/// §4.3.4.3 (Gain Cycle Implementation): `BBRGainCycleLen = 8` phases, pacing gains
/// 5/4, 3/4, then 1 for six phases.
pub const PACING_GAIN_CYCLE: [u64; 8] = [
    GAIN_UNIT * 5 / 4,
    GAIN_UNIT * 3 / 4,
    GAIN_UNIT,
    GAIN_UNIT,
    GAIN_UNIT,
    GAIN_UNIT,
    GAIN_UNIT,
    GAIN_UNIT,
];
/// §4.1.1.2 (BBR.BtlBw Max Filter): `BtlBwFilterLen = 10` packet-timed round trips.
pub const BTLBW_FILTER_LEN: u64 = 10;
/// §4.1.2.2 (BBR.RTprop Min Filter): `RTpropFilterLen = 10` s.
pub const RTPROP_FILTER_LEN: SimDuration = SimDuration::from_secs(10);
/// §4.3.5 (ProbeRTT): `ProbeRTTDuration = 200` ms at the minimum window.
pub const PROBE_RTT_DURATION: SimDuration = SimDuration::from_millis(200);
/// §4.2.3.3 (Minimum cwnd): `BBRMinPipeCwnd = 4` packets.
pub const MIN_PIPE_CWND_PACKETS: u64 = 4;
/// §4.3.2.2 (Estimating When Startup has Filled the Pipe): the bandwidth must grow by
/// 25 % (×5/4) within a round ...
pub const FULL_BW_GROWTH_NUM: u64 = 5;
/// ... (denominator of the 25 % growth) ...
pub const FULL_BW_GROWTH_DEN: u64 = 4;
/// ... else, after three such rounds, the pipe is full.
pub const FULL_BW_ROUNDS: u32 = 3;
/// §4.2.3.2 (Target cwnd): `quanta = 3 · send_quantum` on top of the BDP.
pub const QUANTA_FACTOR: u64 = 3;
/// §4.2.2 (Send Quantum): below 1.2 Mbit/s one packet ...
pub const SEND_QUANTUM_LOW_RATE: u64 = 1_200_000 / 8;
/// ... below 24 Mbit/s two packets, else `min(pacing_rate · 1 ms, 64 KB)`.
pub const SEND_QUANTUM_HIGH_RATE: u64 = 24_000_000 / 8;
/// §4.2.2: the largest send quantum, 64 KB.
pub const SEND_QUANTUM_MAX: u64 = 64 * 1024;
/// §4.2.1 (Pacing Rate): without an RTT sample the initial pacing rate divides the
/// initial window by 1 ms.
pub const INITIAL_RTT_FOR_PACING: SimDuration = SimDuration::from_millis(1);

/// The state machine's states (§4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BbrState {
    /// §4.3.2.
    Startup,
    /// §4.3.3.
    Drain,
    /// §4.3.4.
    ProbeBw,
    /// §4.3.5.
    ProbeRtt,
}

impl BbrState {
    /// The trace name (`"startup"`, `"drain"`, `"probe_bw"`, `"probe_rtt"`).
    pub fn name(self) -> &'static str {
        match self {
            BbrState::Startup => "startup",
            BbrState::Drain => "drain",
            BbrState::ProbeBw => "probe_bw",
            BbrState::ProbeRtt => "probe_rtt",
        }
    }
}

/// An exact windowed maximum over packet-timed rounds (§4.1.1.2): a monotone deque of
/// `(round, value)`, values decreasing, entries older than the window dropped.
#[derive(Clone, Debug, Default)]
struct MaxFilter {
    window: u64,
    samples: VecDeque<(u64, u64)>,
}

impl MaxFilter {
    fn update(&mut self, round: u64, value: u64) {
        while self.samples.back().is_some_and(|&(_, v)| v <= value) {
            self.samples.pop_back();
        }
        self.samples.push_back((round, value));
        self.expire(round);
    }

    fn expire(&mut self, round: u64) {
        while self
            .samples
            .front()
            .is_some_and(|&(r, _)| r + self.window <= round)
        {
            self.samples.pop_front();
        }
    }

    fn get(&self) -> u64 {
        self.samples.front().map_or(0, |&(_, v)| v)
    }
}

/// BBRv1 state (draft-00 §4).
#[derive(Clone, Debug)]
pub struct Bbr1 {
    mss: u64,
    initial_cwnd: u64,
    cwnd: u64,
    state: BbrState,
    pacing_gain: u64,
    cwnd_gain: u64,
    pacing_rate: u64,
    // §4.1.1 BtlBw and round counting.
    btlbw: MaxFilter,
    round_count: u64,
    next_round_delivered: u64,
    round_start: bool,
    // §4.1.2 RTprop.
    rtprop: Option<SimDuration>,
    rtprop_stamp: SimTime,
    rtprop_expired: bool,
    // §4.3.2.2 full pipe.
    filled_pipe: bool,
    full_bw: u64,
    full_bw_count: u32,
    // §4.3.4 ProbeBW.
    cycle_index: usize,
    cycle_stamp: SimTime,
    rng: RngStream,
    // §4.3.5 ProbeRTT.
    probe_rtt_done_stamp: Option<SimTime>,
    probe_rtt_round_done: bool,
    /// Delivered-byte range whose samples ProbeRTT marks app-limited (§4.3.5 sets
    /// `C.app_limited`, which the transport's sampler owns; the controller keeps the
    /// same bubble on its side: samples of packets sent inside it are app-limited).
    app_limited_bubble: Option<(u64, u64)>,
    // §4.2.3.4 loss recovery.
    prior_cwnd: u64,
    packet_conservation: bool,
    recovery_start: Option<SimTime>,
    recovering: bool,
    exit_recovery: bool,
    /// Recovery was entered since the last sample: its round starts after this ACK.
    recovery_round_pending: bool,
    /// An RTT was seen: the initial pacing rate was recomputed from it.
    has_seen_rtt: bool,
    // Bookkeeping from the last sample.
    delivered: u64,
    target_cwnd: u64,
    /// ProbeRTT entries, for tests and traces.
    probe_rtt_count: u64,
    /// Round at which Startup ended (filled_pipe set), for tests.
    filled_pipe_round: Option<u64>,
}

impl Bbr1 {
    /// A controller sending `mss`-byte packets from `initial_window` bytes, drawing its
    /// ProbeBW start phase from `rng` (§4.3.1 Initialization).
    pub fn new(mss: u64, initial_window: u64, rng: RngStream) -> Self {
        let mss = mss.max(1);
        let initial_cwnd = initial_window.max(mss);
        let mut b = Bbr1 {
            mss,
            initial_cwnd,
            cwnd: initial_cwnd,
            state: BbrState::Startup,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            pacing_rate: 0,
            btlbw: MaxFilter {
                window: BTLBW_FILTER_LEN,
                samples: VecDeque::new(),
            },
            round_count: 0,
            next_round_delivered: 0,
            round_start: false,
            rtprop: None,
            rtprop_stamp: SimTime::ZERO,
            rtprop_expired: false,
            filled_pipe: false,
            full_bw: 0,
            full_bw_count: 0,
            cycle_index: 0,
            cycle_stamp: SimTime::ZERO,
            rng,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            app_limited_bubble: None,
            prior_cwnd: 0,
            packet_conservation: false,
            recovery_start: None,
            recovering: false,
            exit_recovery: false,
            recovery_round_pending: false,
            has_seen_rtt: false,
            delivered: 0,
            target_cwnd: initial_cwnd,
            probe_rtt_count: 0,
            filled_pipe_round: None,
        };
        b.init_pacing_rate(INITIAL_RTT_FOR_PACING);
        b
    }

    /// §4.2.1 `BBRInitPacingRate`: `high_gain · InitialCwnd / SRTT` (1 ms without an
    /// SRTT). The controller is built before any RTT sample, so, as Linux's
    /// `bbr_init_pacing_rate_from_rtt`, it is computed again from the first RTT sample.
    fn init_pacing_rate(&mut self, rtt: SimDuration) {
        let nominal = self.initial_cwnd as u128 * 1_000_000_000 / rtt.as_nanos().max(1) as u128;
        self.pacing_rate = (nominal * HIGH_GAIN as u128 / GAIN_UNIT as u128) as u64;
    }

    /// The state machine's state.
    pub fn state(&self) -> BbrState {
        self.state
    }

    /// `BBR.BtlBw`, bytes per second (0 before any sample).
    pub fn btlbw(&self) -> u64 {
        self.btlbw.get()
    }

    /// `BBR.RTprop` (`None` before any sample).
    pub fn rtprop(&self) -> Option<SimDuration> {
        self.rtprop
    }

    /// Packet-timed rounds counted so far (§4.1.1.3).
    pub fn round_count(&self) -> u64 {
        self.round_count
    }

    /// Whether Startup found the pipe full (§4.3.2.2), and in which round.
    pub fn filled_pipe_round(&self) -> Option<u64> {
        self.filled_pipe_round
    }

    /// How many times ProbeRTT was entered.
    pub fn probe_rtt_count(&self) -> u64 {
        self.probe_rtt_count
    }

    /// The current pacing gain (fixed point, [`GAIN_UNIT`]).
    pub fn pacing_gain(&self) -> u64 {
        self.pacing_gain
    }

    /// §4.2.3.2 `BBRInflight(gain)`: `gain · BtlBw · RTprop + quanta`; the initial window
    /// while there is no estimate.
    fn inflight(&self, gain: u64) -> u64 {
        let Some(rtprop) = self.rtprop else {
            return self.initial_cwnd;
        };
        let bw = self.btlbw.get();
        if bw == 0 {
            return self.initial_cwnd;
        }
        let bdp = bw as u128 * rtprop.as_nanos() as u128 / 1_000_000_000;
        let inflight = bdp * gain as u128 / GAIN_UNIT as u128;
        (inflight as u64).saturating_add(QUANTA_FACTOR * self.send_quantum())
    }

    /// §4.2.2 `BBRSetSendQuantum`.
    fn send_quantum(&self) -> u64 {
        if self.pacing_rate < SEND_QUANTUM_LOW_RATE {
            self.mss
        } else if self.pacing_rate < SEND_QUANTUM_HIGH_RATE {
            2 * self.mss
        } else {
            (self.pacing_rate / 1000).min(SEND_QUANTUM_MAX)
        }
    }

    fn min_pipe_cwnd(&self) -> u64 {
        MIN_PIPE_CWND_PACKETS * self.mss
    }

    fn enter_startup(&mut self) {
        self.state = BbrState::Startup;
        self.pacing_gain = HIGH_GAIN;
        self.cwnd_gain = HIGH_GAIN;
    }

    fn enter_drain(&mut self) {
        self.state = BbrState::Drain;
        self.pacing_gain = DRAIN_GAIN;
        self.cwnd_gain = HIGH_GAIN;
    }

    /// §4.3.4.3 `BBREnterProbeBW`: a random phase other than the 3/4 one
    /// (`cycle_index = BBRGainCycleLen − 1 − random_int_between(0, 6)`, then advanced).
    fn enter_probe_bw(&mut self, now: SimTime) {
        self.state = BbrState::ProbeBw;
        self.pacing_gain = GAIN_UNIT;
        self.cwnd_gain = PROBE_BW_CWND_GAIN;
        let r = (self.rng.next_u64() % 7) as usize;
        self.cycle_index = PACING_GAIN_CYCLE.len() - 1 - r;
        self.advance_cycle_phase(now);
    }

    fn advance_cycle_phase(&mut self, now: SimTime) {
        self.cycle_stamp = now;
        self.cycle_index = (self.cycle_index + 1) % PACING_GAIN_CYCLE.len();
        self.pacing_gain = PACING_GAIN_CYCLE[self.cycle_index];
    }

    /// §4.3.4.3 `BBRIsNextCyclePhase`.
    fn is_next_cycle_phase(&self, now: SimTime, rs: &RateSample, prior_inflight: u64) -> bool {
        let is_full_length = self
            .rtprop
            .is_some_and(|r| now.saturating_since(self.cycle_stamp) > r);
        if self.pacing_gain == GAIN_UNIT {
            return is_full_length;
        }
        if self.pacing_gain > GAIN_UNIT {
            return is_full_length
                && (rs.newly_lost > 0 || prior_inflight >= self.inflight(self.pacing_gain));
        }
        is_full_length || prior_inflight <= self.inflight(GAIN_UNIT)
    }

    fn save_cwnd(&mut self) {
        self.prior_cwnd = if !self.recovering && self.state != BbrState::ProbeRtt {
            self.cwnd
        } else {
            self.prior_cwnd.max(self.cwnd)
        };
    }

    fn restore_cwnd(&mut self) {
        self.cwnd = self.cwnd.max(self.prior_cwnd);
    }

    fn enter_recovery(&mut self, now: SimTime, bytes_in_flight: u64) {
        self.save_cwnd();
        self.recovery_start = Some(now);
        self.recovering = true;
        self.exit_recovery = false;
        // §4.2.3.4 BBROnEnterRecovery: cwnd = inflight + max(delivered, 1 packet), packet
        // conservation for one round (a new round starts after this ACK's deliveries,
        // as Linux's `next_rtt_delivered = tp->delivered` at recovery entry).
        self.cwnd = bytes_in_flight.saturating_add(self.mss);
        self.packet_conservation = true;
        self.recovery_round_pending = true;
    }

    /// The first RTT (the transport's smoothed RTT, else the sample's): the initial
    /// pacing rate from it (§4.2.1), unless a bandwidth sample came first.
    fn check_first_rtt(&mut self, rtt: &RttSnapshot, sample: Option<SimDuration>) {
        if self.has_seen_rtt {
            return;
        }
        let first = if rtt.smoothed_rtt > SimDuration::ZERO {
            Some(rtt.smoothed_rtt)
        } else {
            sample.filter(|r| *r > SimDuration::ZERO)
        };
        if let Some(r) = first {
            self.has_seen_rtt = true;
            if self.btlbw.get() == 0 {
                self.init_pacing_rate(r);
            }
        }
    }

    /// §4.1.1.3 `BBRUpdateRound`, §4.1.1.5 `BBRUpdateBtlBw`.
    fn update_btlbw(&mut self, rs: &RateSample, app_limited: bool) {
        self.round_start = false;
        if rs.rtt.is_some() && rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = rs.total_delivered;
            self.round_count += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.btlbw.expire(self.round_count);
        if let Some(rate) = rs.delivery_rate {
            if rate >= self.btlbw.get() || !app_limited {
                self.btlbw.update(self.round_count, rate);
            }
        }
    }

    /// §4.3.2.2 `BBRCheckFullPipe`.
    fn check_full_pipe(&mut self, app_limited: bool) {
        if self.filled_pipe || !self.round_start || app_limited {
            return;
        }
        let bw = self.btlbw.get();
        if bw as u128 * FULL_BW_GROWTH_DEN as u128
            >= self.full_bw as u128 * FULL_BW_GROWTH_NUM as u128
        {
            self.full_bw = bw;
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        if self.full_bw_count >= FULL_BW_ROUNDS {
            self.filled_pipe = true;
            self.filled_pipe_round = Some(self.round_count);
        }
    }

    /// §4.3.3 `BBRCheckDrain`.
    fn check_drain(&mut self, now: SimTime, bytes_in_flight: u64) {
        if self.state == BbrState::Startup && self.filled_pipe {
            self.enter_drain();
        }
        if self.state == BbrState::Drain && bytes_in_flight <= self.inflight(GAIN_UNIT) {
            self.enter_probe_bw(now);
        }
    }

    /// §4.1.2.3 `BBRUpdateRTprop`.
    fn update_rtprop(&mut self, now: SimTime, rs: &RateSample) {
        self.rtprop_expired = now > self.rtprop_stamp + RTPROP_FILTER_LEN;
        // Only unambiguous samples (Karn's rule, RFC 6298 §3): an ACK of a retransmitted
        // TCP segment timed from the retransmission can read far below the path's RTT
        // (Linux feeds `bbr_update_min_rtt` only `rs->rtt_us` from never-retransmitted
        // segments). QUIC's packet numbers are never reused: there it is `rs.rtt`.
        if let Some(rtt) = rs.karn_rtt {
            if self.rtprop.is_none_or(|r| rtt <= r) || self.rtprop_expired {
                self.rtprop = Some(rtt);
                self.rtprop_stamp = now;
            }
        }
    }

    /// §4.3.5 `BBRCheckProbeRTT` and `BBRHandleProbeRTT`.
    fn check_probe_rtt(&mut self, now: SimTime, bytes_in_flight: u64) {
        if self.state != BbrState::ProbeRtt && self.rtprop_expired {
            self.state = BbrState::ProbeRtt;
            self.pacing_gain = GAIN_UNIT;
            self.cwnd_gain = GAIN_UNIT;
            self.save_cwnd();
            self.probe_rtt_done_stamp = None;
            self.probe_rtt_count += 1;
        }
        if self.state == BbrState::ProbeRtt {
            // Ignore low-rate samples during ProbeRTT: C.app_limited = delivered + inflight.
            let end = self.delivered.saturating_add(bytes_in_flight).max(1);
            let start = self.app_limited_bubble.map_or(self.delivered, |(s, _)| s);
            self.app_limited_bubble = Some((start, end));
            match self.probe_rtt_done_stamp {
                None if bytes_in_flight <= self.min_pipe_cwnd() => {
                    self.probe_rtt_done_stamp = Some(now + PROBE_RTT_DURATION);
                    self.probe_rtt_round_done = false;
                    self.next_round_delivered = self.delivered;
                }
                Some(done) => {
                    if self.round_start {
                        self.probe_rtt_round_done = true;
                    }
                    if self.probe_rtt_round_done && now > done {
                        self.rtprop_stamp = now;
                        self.restore_cwnd();
                        // BBRExitProbeRTT.
                        if self.filled_pipe {
                            self.enter_probe_bw(now);
                        } else {
                            self.enter_startup();
                        }
                    }
                }
                None => {}
            }
        }
    }

    /// §4.2.1 `BBRSetPacingRateWithGain`.
    fn set_pacing_rate(&mut self) {
        let rate = (self.btlbw.get() as u128 * self.pacing_gain as u128 / GAIN_UNIT as u128) as u64;
        if rate > 0 && (self.filled_pipe || rate > self.pacing_rate) {
            self.pacing_rate = rate;
        }
    }

    /// §4.2.3 `BBRSetCwnd` with §4.2.3.4 (recovery) and §4.2.3.5 (ProbeRTT).
    fn set_cwnd(&mut self, rs: &RateSample) {
        self.target_cwnd = self.inflight(self.cwnd_gain);
        let acked = rs.newly_acked;
        // BBRModulateCwndForRecovery.
        if rs.newly_lost > 0 {
            self.cwnd = self.cwnd.saturating_sub(rs.newly_lost).max(self.mss);
        }
        if self.packet_conservation {
            self.cwnd = self.cwnd.max(rs.bytes_in_flight.saturating_add(acked));
        } else {
            if self.filled_pipe {
                self.cwnd = self.cwnd.saturating_add(acked).min(self.target_cwnd);
            } else if self.cwnd < self.target_cwnd || self.delivered < self.initial_cwnd {
                self.cwnd = self.cwnd.saturating_add(acked);
            }
            self.cwnd = self.cwnd.max(self.min_pipe_cwnd());
        }
        // BBRModulateCwndForProbeRTT.
        if self.state == BbrState::ProbeRtt {
            self.cwnd = self.cwnd.min(self.min_pipe_cwnd());
        }
    }
}

impl CongestionController for Bbr1 {
    fn on_packet_sent(&mut self, _now: SimTime, _bytes: u64, _bytes_in_flight_after: u64) {}

    fn on_packet_acked(
        &mut self,
        _now: SimTime,
        sent_time: SimTime,
        _bytes: u64,
        _app_limited: bool,
        rtt: &RttSnapshot,
    ) {
        // The handshake's packets give the first RTT before any rate sample.
        self.check_first_rtt(rtt, None);
        // A packet sent after the recovery period started ends it (the window comes back
        // in the sample that follows, §4.2.3.4).
        if self.recovering && !self.in_recovery(sent_time) {
            self.recovering = false;
            self.exit_recovery = true;
        }
    }

    fn on_congestion_event(
        &mut self,
        now: SimTime,
        newest_lost_sent_time: SimTime,
        bytes_in_flight: u64,
    ) {
        if self.in_recovery(newest_lost_sent_time) {
            return;
        }
        self.enter_recovery(now, bytes_in_flight);
    }

    fn on_ecn_ce(&mut self, _now: SimTime, _sent_time: SimTime, _ce: u64, _in_flight: u64) {
        // draft-cardwell-iccrg-bbr-congestion-control-00 has no ECN response (BBRv1
        // ignores CE marks; BBRv3 is the version that reacts to them).
    }

    fn on_persistent_congestion(&mut self, now: SimTime) {
        // §4.2.3.4: as a retransmission timeout, everything in flight is lost.
        self.on_retransmission_timeout(now, true);
    }

    fn on_retransmission_timeout(&mut self, now: SimTime, _reduce: bool) {
        // §4.2.3.4: upon a retransmission timeout, save the window and send one packet
        // (the transport considers nothing in flight any more).
        self.save_cwnd();
        self.recovery_start = Some(now);
        self.recovering = true;
        self.exit_recovery = false;
        self.packet_conservation = false;
        self.recovery_round_pending = false;
        self.cwnd = self.mss;
    }

    fn undo_reduction(&mut self, _now: SimTime, prior_cwnd: u64, _prior_ssthresh: Option<u64>) {
        // §4.2.3.4: an undo restores the last known good window like the end of recovery.
        self.cwnd = self.cwnd.max(prior_cwnd).max(self.prior_cwnd);
        self.recovering = false;
        self.packet_conservation = false;
        self.recovery_round_pending = false;
    }

    fn window(&self) -> u64 {
        self.cwnd
    }

    fn ssthresh(&self) -> Option<u64> {
        None
    }

    fn in_recovery(&self, sent_time: SimTime) -> bool {
        self.recovery_start.is_some_and(|r| sent_time <= r)
    }

    fn name(&self) -> &'static str {
        NAME
    }

    fn minimum_window(&self) -> u64 {
        // §4.2.3.4: one packet after a timeout and in loss recovery (4 otherwise).
        self.mss
    }

    fn loss_reduction_factor(&self) -> f64 {
        // BBR does not reduce multiplicatively on loss (§4.2.3.4).
        1.0
    }

    fn recovering(&self) -> bool {
        self.recovering
    }

    fn in_slow_start(&self) -> bool {
        self.state == BbrState::Startup
    }

    fn wants_rate_samples(&self) -> bool {
        true
    }

    /// §3.5.2 (Per-ACK Steps): `BBRUpdateModelAndState`, then
    /// `BBRUpdateControlParameters`.
    fn on_rate_sample(&mut self, now: SimTime, rs: &RateSample, rtt: &RttSnapshot) {
        self.delivered = rs.total_delivered;
        self.check_first_rtt(rtt, rs.karn_rtt);
        let prior_inflight = rs
            .bytes_in_flight
            .saturating_add(rs.newly_acked)
            .saturating_add(rs.newly_lost);
        // The controller's own app-limited bubble (ProbeRTT).
        let mut app_limited = rs.is_app_limited;
        if let Some((start, end)) = self.app_limited_bubble {
            if rs.prior_delivered >= start && rs.prior_delivered < end {
                app_limited = true;
            }
            if self.delivered > end && self.state != BbrState::ProbeRtt {
                self.app_limited_bubble = None;
            }
        }
        self.update_btlbw(rs, app_limited);
        if self.state == BbrState::ProbeBw && self.is_next_cycle_phase(now, rs, prior_inflight) {
            self.advance_cycle_phase(now);
        }
        self.check_full_pipe(app_limited);
        self.check_drain(now, rs.bytes_in_flight);
        self.update_rtprop(now, rs);
        self.check_probe_rtt(now, rs.bytes_in_flight);
        if self.recovery_round_pending {
            self.recovery_round_pending = false;
            self.packet_conservation = true;
            self.next_round_delivered = rs.total_delivered;
        }
        if self.exit_recovery {
            // §4.2.3.4: upon exiting loss recovery, restore the last known good window.
            self.exit_recovery = false;
            self.packet_conservation = false;
            self.restore_cwnd();
        }
        self.set_pacing_rate();
        self.set_cwnd(rs);
    }

    fn pacing_rate(&self) -> Option<u64> {
        Some(self.pacing_rate.max(1))
    }

    fn model(&self) -> Option<ModelEstimate> {
        Some(ModelEstimate {
            state: self.state.name(),
            bandwidth: self.btlbw.get(),
            min_rtt: self.rtprop.unwrap_or(SimDuration::ZERO),
            pacing_gain_permille: self.pacing_gain * 1000 / GAIN_UNIT,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_are_the_drafts() {
        // 2/ln 2 = 2.88539..., its inverse 0.34657...
        assert_eq!(HIGH_GAIN * 1000 / GAIN_UNIT, 2885);
        assert_eq!(DRAIN_GAIN * 1000 / GAIN_UNIT, 346);
        assert_eq!(PACING_GAIN_CYCLE.iter().sum::<u64>(), 8 * GAIN_UNIT);
    }

    #[test]
    fn max_filter_keeps_ten_rounds() {
        let mut f = MaxFilter {
            window: 10,
            samples: VecDeque::new(),
        };
        f.update(0, 100);
        f.update(1, 50);
        assert_eq!(f.get(), 100);
        f.expire(9);
        assert_eq!(f.get(), 100);
        f.expire(10);
        assert_eq!(f.get(), 50);
        f.update(11, 70);
        assert_eq!(f.get(), 70);
    }

    /// A synthetic sample: one ACK of `acked` bytes that starts a new round (its
    /// packet was sent after the previous round's last delivery), measuring `rate`.
    fn round_sample(
        total: &mut u64,
        acked: u64,
        rate: u64,
        rtt_ms: u64,
        inflight: u64,
    ) -> RateSample {
        let prior = *total;
        *total += acked;
        RateSample {
            delivery_rate: Some(rate),
            delivered: acked,
            interval: SimDuration::from_millis(rtt_ms),
            prior_delivered: prior,
            rtt: Some(SimDuration::from_millis(rtt_ms)),
            karn_rtt: Some(SimDuration::from_millis(rtt_ms)),
            newly_acked: acked,
            total_delivered: *total,
            bytes_in_flight: inflight,
            ..RateSample::default()
        }
    }

    /// §4.3.2.2: Startup ends after three rounds in a row without 25 % growth of BtlBw,
    /// counting a round of 18.75 % growth as no growth and a round of 25 % as growth.
    #[test]
    fn startup_exits_after_three_rounds_without_25_percent_growth() {
        let mut b = Bbr1::new(1000, 10_000, RngStream::derive(1, "t"));
        let snap = RttSnapshot::default();
        let mut total = 0;
        let mut t = SimTime::ZERO;
        // Rates per round: doubling, then +25 % exactly (growth: the counter restarts),
        // then +18.75 %, flat, flat: the third round without 25 % growth fills the pipe.
        let rates = [10_000, 20_000, 40_000, 50_000, 59_375, 59_375, 59_375];
        for (k, &rate) in rates.iter().enumerate() {
            t += SimDuration::from_millis(100);
            let rs = round_sample(&mut total, 1000, rate, 100, 50_000);
            b.on_rate_sample(t, &rs, &snap);
            assert_eq!(b.round_count(), k as u64 + 1);
            let filled = b.filled_pipe_round().is_some();
            assert_eq!(filled, k == 6, "round {}: filled {filled}", k + 1);
        }
        assert_eq!(b.filled_pipe_round(), Some(7));
        // §4.3.3: the pipe is full: Drain, pacing at 1/high_gain; with 50 kB in flight
        // above one BDP (59 375 B/s · 100 ms ≈ 5.9 kB) it stays in Drain.
        assert_eq!(b.state(), BbrState::Drain);
        assert_eq!(b.pacing_gain(), DRAIN_GAIN);
        assert_eq!(b.pacing_rate(), Some(59_375 * DRAIN_GAIN / GAIN_UNIT));
        // An app-limited round does not count (§4.3.2.2) ...
        let mut b2 = Bbr1::new(1000, 10_000, RngStream::derive(1, "t"));
        let mut total = 0;
        for k in 0..6 {
            let mut rs = round_sample(&mut total, 1000, 10_000, 100, 50_000);
            rs.is_app_limited = k > 0;
            b2.on_rate_sample(
                SimTime::ZERO + SimDuration::from_millis(100 * (k + 1)),
                &rs,
                &snap,
            );
        }
        assert_eq!(
            b2.filled_pipe_round(),
            None,
            "app-limited rounds never fill the pipe"
        );
        assert_eq!(b2.state(), BbrState::Startup);
    }

    /// §4.3.3, §4.3.4, §4.3.5, §4.2.3.5: Drain ends at one BDP in flight; ProbeBW paces
    /// at the cycle's gains with cwnd 2 BDP + quanta; 10 s without a lower RTT enter
    /// ProbeRTT (cwnd 4 packets), left after 200 ms at that flight and a round.
    #[test]
    fn drain_probe_bw_and_probe_rtt() {
        let mss = 1000;
        let mut b = Bbr1::new(mss, 10 * mss, RngStream::derive(7, "t"));
        let snap = RttSnapshot::default();
        let mut total = 0;
        let mut t = SimTime::ZERO;
        let bw = 1_000_000; // 1 MB/s, RTprop 100 ms: BDP 100 kB
        for _ in 0..4 {
            t += SimDuration::from_millis(100);
            let rs = round_sample(&mut total, mss, bw, 100, 250_000);
            b.on_rate_sample(t, &rs, &snap);
        }
        assert_eq!(b.state(), BbrState::Drain);
        // One BDP + quanta (pacing rate 1 MB/s < 3 MB/s: two packets each) in flight: ProbeBW.
        t += SimDuration::from_millis(10);
        let rs = round_sample(&mut total, mss, bw, 100, 100_000 + 6 * mss);
        b.on_rate_sample(t, &rs, &snap);
        assert_eq!(b.state(), BbrState::ProbeBw);
        assert_ne!(
            b.pacing_gain(),
            GAIN_UNIT * 3 / 4,
            "never starts in the 3/4 phase"
        );
        assert_eq!(b.inflight(PROBE_BW_CWND_GAIN), 200_000 + 6 * mss);
        // Steady: the window converges to cwnd_gain · BDP + quanta.
        for _ in 0..200 {
            t += SimDuration::from_millis(20);
            let rs = round_sample(&mut total, 2 * mss, bw, 100, 150_000);
            b.on_rate_sample(t, &rs, &snap);
            let gain = b.pacing_gain();
            assert!(PACING_GAIN_CYCLE.contains(&gain));
            assert_eq!(b.pacing_rate(), Some(bw * gain / GAIN_UNIT));
        }
        assert_eq!(b.window(), 200_000 + 6 * mss);
        assert_eq!(b.state(), BbrState::ProbeBw);
        // RTT samples above RTprop for 10 s: ProbeRTT on the first ACK after the filter
        // expired (rtprop_stamp = the last 100 ms sample).
        let stamp = t;
        let mut entered = None;
        while entered.is_none() {
            t += SimDuration::from_millis(20);
            let rs = round_sample(&mut total, 2 * mss, bw, 120, 150_000);
            b.on_rate_sample(t, &rs, &snap);
            if b.state() == BbrState::ProbeRtt {
                entered = Some(t);
            }
        }
        let entered = entered.unwrap();
        assert!(entered > stamp + RTPROP_FILTER_LEN);
        assert!(entered <= stamp + RTPROP_FILTER_LEN + SimDuration::from_millis(20));
        assert_eq!(b.window(), MIN_PIPE_CWND_PACKETS * mss);
        assert_eq!(b.probe_rtt_count(), 1);
        // The flight drains to 4 packets: the 200 ms start; exit after 200 ms and a round.
        let mut left = None;
        while left.is_none() {
            t += SimDuration::from_millis(20);
            let rs = round_sample(&mut total, mss, bw, 100, 4 * mss);
            b.on_rate_sample(t, &rs, &snap);
            if b.state() != BbrState::ProbeRtt {
                left = Some(t);
            }
        }
        let spent = left.unwrap().saturating_since(entered);
        assert!(spent > PROBE_RTT_DURATION, "{spent:?}");
        assert!(
            spent <= PROBE_RTT_DURATION + SimDuration::from_millis(60),
            "{spent:?}"
        );
        assert_eq!(
            b.state(),
            BbrState::ProbeBw,
            "the pipe was full: back to ProbeBW"
        );
        assert!(
            b.window() >= 200_000,
            "the saved window comes back: {}",
            b.window()
        );
        assert_eq!(b.rtprop(), Some(SimDuration::from_millis(100)));
    }

    /// §4.2.3.4: entering recovery keeps `inflight + 1 packet`, packet conservation for a
    /// round, the saved window back at the end of recovery; a timeout leaves one packet.
    #[test]
    fn loss_recovery_conserves_packets_and_restores_the_window() {
        let mss = 1000;
        let mut b = Bbr1::new(mss, 10 * mss, RngStream::derive(7, "t"));
        let snap = RttSnapshot::default();
        let mut total = 0;
        let mut t = SimTime::ZERO;
        for _ in 0..30 {
            t += SimDuration::from_millis(100);
            let rs = round_sample(&mut total, 20 * mss, 1_000_000, 100, 100_000);
            b.on_rate_sample(t, &rs, &snap);
        }
        let before = b.window();
        assert!(before > 100_000);
        b.on_congestion_event(t, t, 60_000);
        assert_eq!(b.window(), 61_000);
        assert!(b.recovering() && b.in_recovery(t));
        // Same round: the window follows the flight (conservation), minus the losses.
        let mut rs = round_sample(&mut total, 0, 1_000_000, 100, 59_000);
        rs.prior_delivered = 0; // an old packet: no new round
        rs.newly_acked = 2000;
        rs.newly_lost = 1000;
        b.on_rate_sample(t, &rs, &snap);
        assert_eq!(b.window(), 61_000, "max(61 000 − 1000, 59 000 + 2000)");
        // A packet sent after the recovery start is acknowledged: the window comes back.
        t += SimDuration::from_millis(100);
        b.on_packet_acked(t, t, mss, false, &snap);
        let rs = round_sample(&mut total, mss, 1_000_000, 100, 60_000);
        b.on_rate_sample(t, &rs, &snap);
        assert!(!b.recovering());
        assert_eq!(b.window(), before);
        b.on_retransmission_timeout(t, true);
        assert_eq!(b.window(), mss);
        assert_eq!(b.window(), b.minimum_window());
    }
}

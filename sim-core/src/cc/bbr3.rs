//! `cc = "bbr3"`: BBR version 3 as draft-ietf-ccwg-bbr-06 ("BBR Congestion Control",
//! Cardwell, Swett, Beshay, CCWG) specifies it. Section numbers below are that draft's.
//!
//! The model (§2.9, §5.5): `max_bw`, the windowed maximum of delivery-rate samples over the
//! current and the previous ProbeBW cycle (§5.5.3-§5.5.6; [`super::rate_sample`]);
//! `min_rtt`, the minimum RTT over 10 s, fed by `probe_rtt_min_delay`, the minimum over 5 s
//! that schedules ProbeRTT (§5.3.4.3); `extra_acked`, the ACK-aggregation estimate
//! (§5.5.9); the long-term bound `inflight_longterm` (the older drafts' `inflight_hi`) set
//! by excessive loss while probing (§5.5.10.2) and the short-term bounds `bw_shortterm` /
//! `inflight_shortterm` (`bw_lo` / `inflight_lo`) cut by `Beta` = 0.7 per round with loss
//! while not probing (§5.5.10.3). The control parameters (§5.6): the pacing rate
//! `pacing_gain · bw · 99 %`, the send quantum, and the window `cwnd_gain · bdp +
//! extra_acked` (+ quanta), bounded by the model (§5.6.4.7).
//!
//! The state machine (§5.3): Startup (pacing gain 2.77, cwnd gain 2) until three rounds
//! without 25 % bandwidth growth (§5.3.1.2) or excessive loss (§5.3.1.3); Drain (pacing gain
//! 0.5) until the flight is down to one BDP or three rounds passed (§5.3.2); ProbeBW's
//! DOWN (0.9), CRUISE (1.0), REFILL (1.0, one round), UP (1.25, cwnd gain 2.25) with the
//! probe timing of §5.3.3.8 (2-3 s, drawn from the controller's own stream,
//! [`super::CcContext::rng`], or the Reno-coexistence bound of 62-63 rounds, whichever is
//! first) and precautionary probing (§5.3.3.6); ProbeRTT (cwnd 0.5 BDP for at least 200 ms
//! and a round) when `probe_rtt_min_delay` was not refreshed for 5 s (§5.3.4).
//!
//! Adaptations to this simulator's controller interface (`docs/bbr.md`):
//! - losses reach the controller per ACK (the rate sample's `newly_lost`, `lost` and
//!   `tx_in_flight`), not per lost packet: `HandleLostPacket` (§5.5.10.2) is evaluated on
//!   the sample of the ACK that declared the loss, with the sample packet's
//!   `tx_in_flight` (the `InflightAtLoss` refinement needs the lost packet's own state);
//! - a "loss event" of §5.3.1.3 (a discontiguous lost range) is counted as one ACK that
//!   declared losses;
//! - `C.is_cwnd_limited`: a packet was sent within one segment of the window during the
//!   current or the previous round;
//! - the offload budget is the TCP one (§5.5.8.1, 3 send quanta) for both transports;
//! - restart from idle (§5.4) is not modelled;
//! - ECN: the draft (§3.7) asks only that CE marks count as congestion; [`Bbr3::on_ecn`] is
//!   the hook the ECN plumbing calls, with the response of Linux's BBRv3 and
//!   draft-cardwell-iccrg-bbr-congestion-control-02 (a round with a CE ratio above 0.5
//!   while probing bounds `inflight_longterm`; the CE-ratio EWMA `alpha` cuts
//!   `inflight_shortterm` by `alpha / 3` per round with CE marks when not probing). No
//!   transport calls it yet.

use super::{CongestionController, ControllerDef, ModelEstimate, RateSample, RttSnapshot};
use crate::rng::RngStream;
use crate::time::{SimDuration, SimTime};
use std::collections::VecDeque;

/// The name the controller reports and the scenario spelling.
pub const NAME: &str = "bbr3";

/// Its row of [`super::CONTROLLERS`].
pub const CONTROLLER: ControllerDef = ControllerDef {
    name: NAME,
    aliases: &[],
    trace_name: NAME,
    build: |ctx| Box::new(Bbr3::new(ctx.segment_size, ctx.initial_window, ctx.rng())),
    // SCTP feeds no rate samples and does not pace.
    sctp: false,
};

/// Fixed-point unit of gains and fractions (1.0 = `UNIT`): every constant below is an
/// exact multiple of 1/1000.
pub const UNIT: u64 = 1000;

/// §2.5 `StartupPacingGain` = 4 ln 2 ≈ 2.77.
pub const STARTUP_PACING_GAIN: u64 = 2770;
/// §2.5 `DrainPacingGain` = 0.5 (§5.3.2).
pub const DRAIN_PACING_GAIN: u64 = 500;
/// §2.6 `DefaultCwndGain` = 2.
pub const DEFAULT_CWND_GAIN: u64 = 2000;
/// §5.3.3.1: ProbeBW_DOWN paces at 0.90.
pub const PROBE_BW_DOWN_PACING_GAIN: u64 = 900;
/// §5.3.3.5: ProbeBW_UP paces at 1.25 ...
pub const PROBE_BW_UP_PACING_GAIN: u64 = 1250;
/// ... with cwnd gain 2.25.
pub const PROBE_BW_UP_CWND_GAIN: u64 = 2250;
/// §2.16.2 `ProbeRTTCwndGain` = 0.5.
pub const PROBE_RTT_CWND_GAIN: u64 = 500;
/// §2.8 `LossThresh` = 2 %.
pub const LOSS_THRESH: u64 = 20;
/// §2.8 `Beta` = 0.7.
pub const BETA: u64 = 700;
/// §2.8 `Headroom` = 0.15.
pub const HEADROOM: u64 = 150;
/// §5.6.2 `PacingMarginPercent` = 1.
pub const PACING_MARGIN_PERCENT: u64 = 1;
/// §2.8 `MinPipeCwnd` = 4 segments.
pub const MIN_PIPE_CWND_PACKETS: u64 = 4;
/// §2.11 `MaxBwFilterLen` = 2 ProbeBW cycles.
pub const MAX_BW_FILTER_LEN: u64 = 2;
/// §2.12 `ExtraAckedFilterLen` = 10 rounds (1 round in Startup, §5.5.9).
pub const EXTRA_ACKED_FILTER_LEN: u64 = 10;
/// §2.16.1 `MinRTTFilterLen` = 10 s.
pub const MIN_RTT_FILTER_LEN: SimDuration = SimDuration::from_secs(10);
/// §2.16.2 `ProbeRTTInterval` = 5 s.
pub const PROBE_RTT_INTERVAL: SimDuration = SimDuration::from_secs(5);
/// §2.16.2 `ProbeRTTDuration` = 200 ms.
pub const PROBE_RTT_DURATION: SimDuration = SimDuration::from_millis(200);
/// §5.3.1.2: the bandwidth must grow by 25 % (×5/4) in a round ...
pub const FULL_BW_GROWTH_NUM: u64 = 5;
/// ... (denominator of the 25 % growth) ...
pub const FULL_BW_GROWTH_DEN: u64 = 4;
/// ... else, after three such rounds, the pipe is full.
pub const FULL_BW_ROUNDS: u32 = 3;
/// §5.3.1.3 `BBRStartupFullLossCnt` = 6 loss events in a round.
pub const STARTUP_FULL_LOSS_CNT: u32 = 6;
/// §5.3.2: Drain ends after at most 3 rounds.
pub const DRAIN_MAX_ROUNDS: u64 = 3;
/// §5.3.3.8.2 `T_bbr`: 2 s plus a uniform draw in [0, 1] s.
pub const PROBE_WAIT_BASE: SimDuration = SimDuration::from_secs(2);
/// §5.3.3.8.3 `IsRenoCoexistenceProbeTime`: at most 63 rounds.
pub const RENO_ROUNDS_MAX: u64 = 63;
/// §5.3.3.9 `RaiseInflightLongtermSlope`: the doubling stops at 2^30.
pub const PROBE_UP_ROUNDS_MAX: u32 = 30;
/// §5.6.3 `SetSendQuantum`: at most 64 KB.
pub const SEND_QUANTUM_MAX: u64 = 64 * 1024;
/// §5.5.8.1 (TCP offload budget): 3 send quanta.
pub const OFFLOAD_QUANTA: u64 = 3;
/// §5.6.2 `InitPacingRate`: without an SRTT the initial window is divided by 1 ms.
pub const INITIAL_RTT_FOR_PACING: SimDuration = SimDuration::from_millis(1);
/// ECN (Linux BBRv3 `bbr_ecn_thresh`; draft-cardwell-iccrg-bbr-congestion-control-02):
/// a CE ratio above 0.5 of the delivered data in a round while probing is "inflight too
/// high".
pub const ECN_THRESH: u64 = 500;
/// ECN: the gain of the CE-ratio EWMA `alpha` (Linux `bbr_ecn_alpha_gain` = 1/16).
pub const ECN_ALPHA_GAIN: u64 = UNIT / 16;
/// ECN: `alpha` starts at 1 (Linux `bbr_ecn_alpha_init`).
pub const ECN_ALPHA_INIT: u64 = UNIT;
/// ECN: a round with CE marks cuts `inflight_shortterm` by `alpha · 1/3` (Linux
/// `bbr_ecn_factor`).
pub const ECN_FACTOR: u64 = UNIT / 3;

const INF: u64 = u64::MAX;

/// The state machine's states (§5.1, §5.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bbr3State {
    /// §5.3.1.
    Startup,
    /// §5.3.2.
    Drain,
    /// §5.3.3.1.
    ProbeBwDown,
    /// §5.3.3.2.
    ProbeBwCruise,
    /// §5.3.3.3.
    ProbeBwRefill,
    /// §5.3.3.4.
    ProbeBwUp,
    /// §5.3.4.
    ProbeRtt,
}

impl Bbr3State {
    /// The trace name (`"startup"`, `"drain"`, `"probe_bw_down"`, `"probe_bw_cruise"`,
    /// `"probe_bw_refill"`, `"probe_bw_up"`, `"probe_rtt"`).
    pub fn name(self) -> &'static str {
        match self {
            Bbr3State::Startup => "startup",
            Bbr3State::Drain => "drain",
            Bbr3State::ProbeBwDown => "probe_bw_down",
            Bbr3State::ProbeBwCruise => "probe_bw_cruise",
            Bbr3State::ProbeBwRefill => "probe_bw_refill",
            Bbr3State::ProbeBwUp => "probe_bw_up",
            Bbr3State::ProbeRtt => "probe_rtt",
        }
    }

    /// One of the four ProbeBW states (§5.3.3.9 `IsInAProbeBWState`).
    pub fn is_probe_bw(self) -> bool {
        matches!(
            self,
            Bbr3State::ProbeBwDown
                | Bbr3State::ProbeBwCruise
                | Bbr3State::ProbeBwRefill
                | Bbr3State::ProbeBwUp
        )
    }
}

/// §2.14 `BBR.ack_phase`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

/// An exact windowed maximum over a virtual time (rounds or cycles): a monotone deque of
/// `(time, value)`, values decreasing, entries older than the window dropped.
#[derive(Clone, Debug, Default)]
struct MaxFilter {
    samples: VecDeque<(u64, u64)>,
}

impl MaxFilter {
    fn update(&mut self, time: u64, value: u64, window: u64) {
        while self.samples.back().is_some_and(|&(_, v)| v <= value) {
            self.samples.pop_back();
        }
        self.samples.push_back((time, value));
        self.expire(time, window);
    }

    fn expire(&mut self, time: u64, window: u64) {
        while self
            .samples
            .front()
            .is_some_and(|&(t, _)| t + window <= time)
        {
            self.samples.pop_front();
        }
    }

    fn get(&self) -> u64 {
        self.samples.front().map_or(0, |&(_, v)| v)
    }
}

fn mul(x: u64, gain: u64) -> u64 {
    if x == INF {
        return INF;
    }
    (x as u128 * gain as u128 / UNIT as u128).min(INF as u128 - 1) as u64
}

/// BBRv3 state (draft-ietf-ccwg-bbr-06 §2).
#[derive(Clone, Debug)]
pub struct Bbr3 {
    mss: u64,
    initial_cwnd: u64,
    cwnd: u64,
    pacing_rate: u64,
    send_quantum: u64,
    state: Bbr3State,
    pacing_gain: u64,
    cwnd_gain: u64,
    rng: RngStream,
    // §5.5.1 rounds.
    round_count: u64,
    next_round_delivered: u64,
    round_start: bool,
    /// `C.delivered` after the last sample.
    delivered: u64,
    // §5.5.2-§5.5.6 max_bw.
    max_bw_filter: MaxFilter,
    cycle_count: u64,
    // §2.9 short-term and long-term model.
    bw_shortterm: u64,
    bw: u64,
    inflight_shortterm: u64,
    inflight_longterm: u64,
    max_inflight: u64,
    // §2.10 congestion signals.
    bw_latest: u64,
    inflight_latest: u64,
    loss_round_delivered: u64,
    loss_round_start: bool,
    is_loss_in_round: bool,
    // §5.3.1.3 Startup loss accounting for the current loss round.
    loss_events_in_round: u32,
    lost_in_round: u64,
    delivered_in_round: u64,
    /// Round at which the current recovery period started.
    recovery_round: Option<u64>,
    // §5.5.7 min_rtt and §5.3.4.3 probe_rtt_min_delay.
    min_rtt: Option<SimDuration>,
    min_rtt_stamp: SimTime,
    probe_rtt_min_delay: Option<SimDuration>,
    probe_rtt_min_stamp: SimTime,
    probe_rtt_expired: bool,
    probe_rtt_done_stamp: Option<SimTime>,
    probe_rtt_round_done: bool,
    /// Delivered-byte range whose samples ProbeRTT marks app-limited
    /// (`MarkConnectionAppLimited`, kept on the controller's side as in `bbr1`).
    app_limited_bubble: Option<(u64, u64)>,
    // §5.5.9 extra_acked.
    extra_acked_interval_start: SimTime,
    extra_acked_delivered: u64,
    extra_acked_filter: MaxFilter,
    // §5.3.1.2 full pipe.
    full_bw_reached: bool,
    full_bw_now: bool,
    full_bw: u64,
    full_bw_count: u32,
    drain_start_round: u64,
    // §2.14 ProbeBW.
    ack_phase: AckPhase,
    is_bw_probe_sample: bool,
    bw_probe_up_acked: u64,
    probe_up_acked_per_inc: u64,
    bw_probe_up_rounds: u32,
    rounds_since_probe_up: u64,
    bw_probe_wait: SimDuration,
    cycle_stamp: SimTime,
    prev_probe_too_high: bool,
    prev_probe_precautionary: bool,
    // C.is_cwnd_limited.
    cwnd_limited_this_round: bool,
    cwnd_limited_prev_round: bool,
    // §2.15 undo.
    undo_state: Option<Bbr3State>,
    undo_bw_shortterm: u64,
    undo_inflight_shortterm: u64,
    undo_inflight_longterm: u64,
    // §5.6.4.4 recovery.
    prior_cwnd: u64,
    recovery_start: Option<SimTime>,
    recovering: bool,
    exit_recovery: bool,
    has_seen_rtt: bool,
    // ECN (the hook, [`Bbr3::on_ecn`]).
    ecn_alpha: u64,
    ecn_round: u64,
    ecn_ce_in_round: u64,
    ecn_delivered_in_round: u64,
    ecn_in_round: bool,
    /// The last sample's `tx_in_flight` (for an ECN-driven "inflight too high").
    last_tx_in_flight: u64,
    /// The transport reported CE marks at least once (`on_ecn_ce`): from then on every
    /// rate sample feeds [`Bbr3::on_ecn`], so a round's CE share has its denominator.
    ecn_seen: bool,
    /// CE-marked bytes reported since the last rate sample.
    ecn_pending: u64,
    // Counters for tests and traces.
    probe_rtt_count: u64,
    full_bw_round: Option<u64>,
    startup_loss_exit: bool,
    probe_up_count: u64,
}

impl Bbr3 {
    /// A controller sending `mss`-byte packets from `initial_window` bytes, drawing its
    /// probe timing from `rng` (§5.2.1 `OnInit`).
    pub fn new(mss: u64, initial_window: u64, rng: RngStream) -> Self {
        let mss = mss.max(1);
        let initial_cwnd = initial_window.max(mss);
        let mut b = Bbr3 {
            mss,
            initial_cwnd,
            cwnd: initial_cwnd,
            pacing_rate: 0,
            send_quantum: 2 * mss,
            state: Bbr3State::Startup,
            pacing_gain: STARTUP_PACING_GAIN,
            cwnd_gain: DEFAULT_CWND_GAIN,
            rng,
            round_count: 0,
            next_round_delivered: 0,
            round_start: false,
            delivered: 0,
            max_bw_filter: MaxFilter::default(),
            cycle_count: 0,
            bw_shortterm: INF,
            bw: 0,
            inflight_shortterm: INF,
            inflight_longterm: INF,
            max_inflight: initial_cwnd,
            bw_latest: 0,
            inflight_latest: 0,
            loss_round_delivered: 0,
            loss_round_start: false,
            is_loss_in_round: false,
            loss_events_in_round: 0,
            lost_in_round: 0,
            delivered_in_round: 0,
            recovery_round: None,
            min_rtt: None,
            min_rtt_stamp: SimTime::ZERO,
            probe_rtt_min_delay: None,
            probe_rtt_min_stamp: SimTime::ZERO,
            probe_rtt_expired: false,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            app_limited_bubble: None,
            extra_acked_interval_start: SimTime::ZERO,
            extra_acked_delivered: 0,
            extra_acked_filter: MaxFilter::default(),
            full_bw_reached: false,
            full_bw_now: false,
            full_bw: 0,
            full_bw_count: 0,
            drain_start_round: 0,
            ack_phase: AckPhase::Init,
            is_bw_probe_sample: false,
            bw_probe_up_acked: 0,
            probe_up_acked_per_inc: INF,
            bw_probe_up_rounds: 0,
            rounds_since_probe_up: 0,
            bw_probe_wait: SimDuration::ZERO,
            cycle_stamp: SimTime::ZERO,
            prev_probe_too_high: false,
            prev_probe_precautionary: false,
            cwnd_limited_this_round: false,
            cwnd_limited_prev_round: false,
            undo_state: None,
            undo_bw_shortterm: 0,
            undo_inflight_shortterm: 0,
            undo_inflight_longterm: 0,
            prior_cwnd: 0,
            recovery_start: None,
            recovering: false,
            exit_recovery: false,
            has_seen_rtt: false,
            ecn_alpha: ECN_ALPHA_INIT,
            ecn_round: 0,
            ecn_ce_in_round: 0,
            ecn_delivered_in_round: 0,
            ecn_in_round: false,
            last_tx_in_flight: 0,
            ecn_seen: false,
            ecn_pending: 0,
            probe_rtt_count: 0,
            full_bw_round: None,
            startup_loss_exit: false,
            probe_up_count: 0,
        };
        b.init_pacing_rate(INITIAL_RTT_FOR_PACING);
        b
    }

    // ---- accessors (tests, traces) ----

    /// The state machine's state.
    pub fn state(&self) -> Bbr3State {
        self.state
    }

    /// `BBR.max_bw`, bytes per second.
    pub fn max_bw(&self) -> u64 {
        self.max_bw_filter.get()
    }

    /// `BBR.bw = min(max_bw, bw_shortterm)`, bytes per second.
    pub fn bw(&self) -> u64 {
        self.bw
    }

    /// `BBR.min_rtt` (`None` before any sample).
    pub fn min_rtt(&self) -> Option<SimDuration> {
        self.min_rtt
    }

    /// `BBR.inflight_longterm` (`None`: infinite).
    pub fn inflight_longterm(&self) -> Option<u64> {
        (self.inflight_longterm != INF).then_some(self.inflight_longterm)
    }

    /// `BBR.inflight_shortterm` (`None`: infinite).
    pub fn inflight_shortterm(&self) -> Option<u64> {
        (self.inflight_shortterm != INF).then_some(self.inflight_shortterm)
    }

    /// `BBR.bw_shortterm` (`None`: infinite).
    pub fn bw_shortterm(&self) -> Option<u64> {
        (self.bw_shortterm != INF).then_some(self.bw_shortterm)
    }

    /// `BBR.extra_acked`, bytes.
    pub fn extra_acked(&self) -> u64 {
        self.extra_acked_filter.get()
    }

    /// The ECN CE-ratio EWMA `alpha` (fixed point, [`UNIT`]).
    pub fn ecn_alpha(&self) -> u64 {
        self.ecn_alpha
    }

    /// Packet-timed rounds so far (§5.5.1).
    pub fn round_count(&self) -> u64 {
        self.round_count
    }

    /// The round in which `full_bw_reached` was first set, if it was.
    pub fn full_bw_round(&self) -> Option<u64> {
        self.full_bw_round
    }

    /// Whether Startup ended on excessive loss (§5.3.1.3).
    pub fn startup_loss_exit(&self) -> bool {
        self.startup_loss_exit
    }

    /// How many times ProbeRTT was entered.
    pub fn probe_rtt_count(&self) -> u64 {
        self.probe_rtt_count
    }

    /// How many ProbeBW_UP phases started.
    pub fn probe_up_count(&self) -> u64 {
        self.probe_up_count
    }

    /// The current pacing gain (fixed point, [`UNIT`]).
    pub fn pacing_gain(&self) -> u64 {
        self.pacing_gain
    }

    /// The current cwnd gain (fixed point, [`UNIT`]).
    pub fn cwnd_gain(&self) -> u64 {
        self.cwnd_gain
    }

    /// The wall-clock bound of the current wait before probing (§5.3.3.8.3 `PickProbeWait`).
    pub fn bw_probe_wait(&self) -> SimDuration {
        self.bw_probe_wait
    }

    // ---- model helpers ----

    /// §5.6.2 `InitPacingRate`: `StartupPacingGain · InitialCwnd / SRTT` (1 ms without an
    /// SRTT), computed again from the first RTT sample (the controller is built before any).
    fn init_pacing_rate(&mut self, rtt: SimDuration) {
        let nominal = self.initial_cwnd as u128 * 1_000_000_000 / rtt.as_nanos().max(1) as u128;
        self.pacing_rate = (nominal * STARTUP_PACING_GAIN as u128 / UNIT as u128) as u64;
    }

    fn min_pipe_cwnd(&self) -> u64 {
        MIN_PIPE_CWND_PACKETS * self.mss
    }

    /// `bw · min_rtt · gain` (§5.6.4.2 `BDPMultiple`); the initial window without an RTT.
    fn bdp_multiple(&self, bw: u64, gain: u64) -> u64 {
        let Some(rtt) = self.min_rtt else {
            return self.initial_cwnd;
        };
        let bdp = bw as u128 * rtt.as_nanos() as u128 / 1_000_000_000;
        (bdp * gain as u128 / UNIT as u128).min(INF as u128 - 1) as u64
    }

    /// `BBR.bdp = BBR.bw · BBR.min_rtt`.
    fn bdp(&self) -> u64 {
        self.bdp_multiple(self.bw, UNIT)
    }

    /// §5.6.4.2 `QuantizationBudget`.
    fn quantization_budget(&self, cap: u64) -> u64 {
        let offload_budget = OFFLOAD_QUANTA * self.send_quantum;
        let mut cap = cap.max(offload_budget).max(self.min_pipe_cwnd());
        if self.state == Bbr3State::ProbeBwUp {
            cap = cap.saturating_add(2 * self.mss);
        }
        cap
    }

    /// §5.6.4.2 `Inflight(bw, gain)`.
    fn inflight(&self, bw: u64, gain: u64) -> u64 {
        self.quantization_budget(self.bdp_multiple(bw, gain))
    }

    /// §5.3.3.9 `InflightWithHeadroom`.
    fn inflight_with_headroom(&self) -> u64 {
        if self.inflight_longterm == INF {
            return INF;
        }
        let headroom = self.mss.max(mul(self.inflight_longterm, HEADROOM));
        self.inflight_longterm
            .saturating_sub(headroom)
            .max(self.min_pipe_cwnd())
    }

    /// §5.3.3.8.3 `TargetInflight`: `min(bdp, cwnd)`.
    fn target_inflight(&self) -> u64 {
        self.bdp().min(self.cwnd)
    }

    fn is_cwnd_limited(&self) -> bool {
        self.cwnd_limited_this_round || self.cwnd_limited_prev_round
    }

    /// §5.5.1 `StartRound`.
    fn start_round(&mut self) {
        self.next_round_delivered = self.delivered;
    }

    // ---- state transitions ----

    fn enter_startup(&mut self) {
        self.state = Bbr3State::Startup;
        self.pacing_gain = STARTUP_PACING_GAIN;
        self.cwnd_gain = DEFAULT_CWND_GAIN;
    }

    fn enter_drain(&mut self) {
        self.state = Bbr3State::Drain;
        self.pacing_gain = DRAIN_PACING_GAIN;
        self.cwnd_gain = DEFAULT_CWND_GAIN;
        self.drain_start_round = self.round_count;
    }

    /// §5.3.3.9 `EnterProbeBW`.
    fn enter_probe_bw(&mut self, now: SimTime) {
        self.cwnd_gain = DEFAULT_CWND_GAIN;
        self.start_probe_bw_down(now);
    }

    fn start_probe_bw_down(&mut self, now: SimTime) {
        self.reset_congestion_signals();
        self.probe_up_acked_per_inc = INF;
        self.pick_probe_wait();
        self.cycle_stamp = now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.start_round();
        self.state = Bbr3State::ProbeBwDown;
        self.pacing_gain = PROBE_BW_DOWN_PACING_GAIN;
        self.cwnd_gain = DEFAULT_CWND_GAIN;
    }

    fn start_probe_bw_cruise(&mut self) {
        self.state = Bbr3State::ProbeBwCruise;
        self.pacing_gain = UNIT;
        self.cwnd_gain = DEFAULT_CWND_GAIN;
    }

    fn start_probe_bw_refill(&mut self) {
        self.reset_short_term_model();
        self.bw_probe_up_rounds = 0;
        self.bw_probe_up_acked = 0;
        self.prev_probe_precautionary = false;
        self.ack_phase = AckPhase::Refilling;
        self.start_round();
        self.state = Bbr3State::ProbeBwRefill;
        self.pacing_gain = UNIT;
        self.cwnd_gain = DEFAULT_CWND_GAIN;
    }

    fn start_probe_bw_up(&mut self, rs: &RateSample) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.start_round();
        self.reset_full_bw();
        self.full_bw = rs.delivery_rate.unwrap_or(0);
        self.state = Bbr3State::ProbeBwUp;
        self.pacing_gain = PROBE_BW_UP_PACING_GAIN;
        self.cwnd_gain = PROBE_BW_UP_CWND_GAIN;
        self.probe_up_count += 1;
        self.raise_inflight_longterm_slope();
    }

    /// §5.3.3.8.3 `PickProbeWait`: 0 or 1 round already counted, 2 s + U[0, 1] s.
    fn pick_probe_wait(&mut self) {
        self.rounds_since_probe_up = self.rng.next_u64() % 2;
        let extra = self.rng.next_u64() % 1_000_000_001;
        self.bw_probe_wait = PROBE_WAIT_BASE + SimDuration::from_nanos(extra);
    }

    /// §5.3.1.2 `ResetFullBW`.
    fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_count = 0;
        self.full_bw_now = false;
    }

    /// §5.5.10.3 `ResetCongestionSignals`.
    fn reset_congestion_signals(&mut self) {
        self.is_loss_in_round = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    /// §5.5.10.3 `ResetShortTermModel`.
    fn reset_short_term_model(&mut self) {
        self.bw_shortterm = INF;
        self.inflight_shortterm = INF;
    }

    /// §5.3.3.9 `IsProbingBW`.
    fn is_probing_bw(&self) -> bool {
        matches!(
            self.state,
            Bbr3State::Startup | Bbr3State::ProbeBwRefill | Bbr3State::ProbeBwUp
        )
    }

    // ---- per-ACK steps (§5.2.3) ----

    /// §5.5.10.3 `UpdateLatestDeliverySignals`.
    fn update_latest_delivery_signals(&mut self, rs: &RateSample) {
        self.loss_round_start = false;
        self.bw_latest = self.bw_latest.max(rs.delivery_rate.unwrap_or(0));
        self.inflight_latest = self.inflight_latest.max(rs.delivered);
        if rs.rtt.is_some() && rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = self.delivered;
            self.loss_round_start = true;
        }
    }

    /// §5.5.1 `UpdateRound` and §5.5.5 `UpdateMaxBw`.
    fn update_max_bw(&mut self, rs: &RateSample, app_limited: bool) {
        self.round_start = false;
        if rs.rtt.is_some() && rs.prior_delivered >= self.next_round_delivered {
            self.start_round();
            self.round_count += 1;
            self.rounds_since_probe_up += 1;
            self.round_start = true;
            self.cwnd_limited_prev_round = std::mem::take(&mut self.cwnd_limited_this_round);
        }
        if let Some(rate) = rs.delivery_rate {
            if rate > 0 && (rate >= self.max_bw_filter.get() || !app_limited) {
                self.max_bw_filter
                    .update(self.cycle_count, rate, MAX_BW_FILTER_LEN);
            }
        }
    }

    /// §5.5.10.3 `UpdateCongestionSignals` (with the Startup loss accounting of §5.3.1.3).
    fn update_congestion_signals(&mut self, rs: &RateSample, app_limited: bool) {
        self.update_max_bw(rs, app_limited);
        if !self.loss_round_start {
            return;
        }
        self.check_startup_high_loss();
        self.adapt_lower_bounds_from_congestion();
        self.is_loss_in_round = false;
        self.loss_events_in_round = 0;
        self.lost_in_round = 0;
        self.delivered_in_round = 0;
    }

    /// §5.5.10.2 `NoteLoss`.
    fn note_loss(&mut self) {
        if !self.is_loss_in_round {
            self.loss_round_delivered = self.delivered;
            self.save_state_upon_loss();
        }
        self.is_loss_in_round = true;
    }

    /// §5.5.10.3 `AdaptLowerBoundsFromCongestion` (`InitLowerBounds`, `LossLowerBounds`).
    fn adapt_lower_bounds_from_congestion(&mut self) {
        if self.is_probing_bw() || !self.is_loss_in_round {
            return;
        }
        self.init_lower_bounds();
        self.bw_shortterm = self.bw_latest.max(mul(self.bw_shortterm, BETA));
        self.inflight_shortterm = self
            .inflight_latest
            .max(mul(self.inflight_shortterm, BETA));
    }

    fn init_lower_bounds(&mut self) {
        if self.bw_shortterm == INF {
            self.bw_shortterm = self.max_bw_filter.get();
        }
        if self.inflight_shortterm == INF {
            self.inflight_shortterm = self.cwnd;
        }
    }

    /// §5.3.1.3 `CheckStartupHighLoss`, at the end of a loss round: in recovery for at
    /// least a full round, more than `LossThresh` of the round's data lost, and at least
    /// `StartupFullLossCnt` loss events.
    fn check_startup_high_loss(&mut self) {
        if self.state != Bbr3State::Startup || self.full_bw_reached {
            return;
        }
        let Some(start) = self.recovery_round else {
            return;
        };
        if !self.recovering || self.round_count < start + 1 {
            return;
        }
        let total = self.lost_in_round.saturating_add(self.delivered_in_round);
        let too_high = self.lost_in_round as u128 * UNIT as u128 > total as u128 * LOSS_THRESH as u128;
        if !too_high || self.loss_events_in_round < STARTUP_FULL_LOSS_CNT {
            return;
        }
        self.undo_state = Some(Bbr3State::Startup);
        self.set_full_bw_reached();
        self.startup_loss_exit = true;
        self.inflight_longterm = self.bdp().max(self.inflight_latest);
    }

    fn set_full_bw_reached(&mut self) {
        self.full_bw_reached = true;
        if self.full_bw_round.is_none() {
            self.full_bw_round = Some(self.round_count);
        }
    }

    /// §5.5.9 `UpdateACKAggregation`.
    fn update_ack_aggregation(&mut self, now: SimTime, rs: &RateSample) {
        let interval = now.saturating_since(self.extra_acked_interval_start);
        let mut expected =
            (self.bw as u128 * interval.as_nanos() as u128 / 1_000_000_000).min(INF as u128) as u64;
        if self.extra_acked_delivered <= expected {
            self.extra_acked_delivered = 0;
            self.extra_acked_interval_start = now;
            expected = 0;
        }
        self.extra_acked_delivered = self.extra_acked_delivered.saturating_add(rs.newly_acked);
        let extra = self
            .extra_acked_delivered
            .saturating_sub(expected)
            .min(self.cwnd);
        let len = if self.full_bw_reached {
            EXTRA_ACKED_FILTER_LEN
        } else {
            1
        };
        self.extra_acked_filter.update(self.round_count, extra, len);
    }

    /// §5.3.1.2 `CheckFullBWReached`.
    fn check_full_bw_reached(&mut self, rs: &RateSample, app_limited: bool) {
        if self.full_bw_now || !self.round_start || app_limited {
            return;
        }
        let rate = rs.delivery_rate.unwrap_or(0);
        if rate as u128 * FULL_BW_GROWTH_DEN as u128
            >= self.full_bw as u128 * FULL_BW_GROWTH_NUM as u128
        {
            self.reset_full_bw();
            self.full_bw = rate;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_now = self.full_bw_count >= FULL_BW_ROUNDS;
        if self.full_bw_now {
            self.set_full_bw_reached();
        }
    }

    /// §5.3.1 `CheckStartupDone` (the loss check runs at the end of the loss round) and
    /// §5.3.2 `CheckDrainDone`.
    fn check_startup_and_drain(&mut self, now: SimTime, inflight: u64) {
        if self.state == Bbr3State::Startup && self.full_bw_reached {
            self.enter_drain();
        }
        if self.state == Bbr3State::Drain
            && (inflight <= self.inflight(self.bw, UNIT)
                || self.round_count > self.drain_start_round + DRAIN_MAX_ROUNDS)
        {
            self.enter_probe_bw(now);
        }
    }

    /// §5.5.10.2 `IsInflightTooHigh` (the connection has selective acknowledgements).
    fn is_inflight_too_high(rs: &RateSample) -> bool {
        rs.lost as u128 * UNIT as u128 > rs.tx_in_flight as u128 * LOSS_THRESH as u128
    }

    /// §5.5.10.2 `HandleInflightTooHigh`.
    fn handle_inflight_too_high(&mut self, now: SimTime, tx_in_flight: u64, app_limited: bool) {
        self.prev_probe_too_high = true;
        self.is_bw_probe_sample = false;
        if !app_limited {
            self.inflight_longterm = tx_in_flight.max(mul(self.target_inflight(), BETA));
        }
        if self.state == Bbr3State::ProbeBwUp {
            self.undo_state = Some(Bbr3State::ProbeBwUp);
            self.start_probe_bw_down(now);
        }
    }

    /// §5.3.3.9 `RaiseInflightLongtermSlope`.
    fn raise_inflight_longterm_slope(&mut self) {
        let growth = 1u64 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(PROBE_UP_ROUNDS_MAX);
        self.probe_up_acked_per_inc = (self.cwnd / growth).max(self.mss);
    }

    /// §5.3.3.9 `ProbeInflightLongtermUpward`.
    fn probe_inflight_longterm_upward(&mut self, rs: &RateSample) {
        if !self.is_cwnd_limited() || self.cwnd < self.inflight_longterm {
            return;
        }
        self.bw_probe_up_acked = self.bw_probe_up_acked.saturating_add(rs.newly_acked);
        if self.bw_probe_up_acked >= self.probe_up_acked_per_inc {
            let delta = self.bw_probe_up_acked / self.probe_up_acked_per_inc;
            self.bw_probe_up_acked -= delta * self.probe_up_acked_per_inc;
            self.inflight_longterm = self
                .inflight_longterm
                .saturating_add(delta.saturating_mul(self.mss));
        }
        if self.round_start {
            self.raise_inflight_longterm_slope();
        }
    }

    /// §5.3.3.9 `AdaptLongTermModel`; true when it decided a state transition. A loss
    /// that makes the flight "too high" during a bandwidth probe is handled here, per ACK
    /// (§5.5.10.2's `HandleLostPacket`, see the module notes).
    fn adapt_long_term_model(&mut self, now: SimTime, rs: &RateSample, app_limited: bool) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            self.is_bw_probe_sample = false;
            self.ack_phase = AckPhase::Init;
            if self.state.is_probe_bw() && !app_limited {
                self.cycle_count += 1; // AdvanceMaxBwFilter
                self.max_bw_filter
                    .expire(self.cycle_count, MAX_BW_FILTER_LEN);
            }
            if self.state.is_probe_bw() && self.prev_probe_precautionary && !self.prev_probe_too_high
            {
                self.start_probe_bw_refill();
                return true;
            }
        }
        if Self::is_inflight_too_high(rs) {
            if self.is_bw_probe_sample && rs.newly_lost > 0 {
                let state = self.state;
                self.handle_inflight_too_high(now, rs.tx_in_flight, app_limited);
                return state != self.state;
            }
            return false;
        }
        if self.inflight_longterm == INF {
            return false;
        }
        if rs.tx_in_flight > self.inflight_longterm {
            self.inflight_longterm = rs.tx_in_flight;
        }
        if self.state == Bbr3State::ProbeBwUp {
            self.probe_inflight_longterm_upward(rs);
        }
        false
    }

    /// §5.3.3.8.3 `IsTimeToProbeBW` (with `IsRenoCoexistenceProbeTime`).
    fn is_time_reach_probe_bw(&mut self, now: SimTime) -> bool {
        let reno_rounds = self.target_inflight() / self.mss;
        let rounds = reno_rounds.min(RENO_ROUNDS_MAX);
        if now > self.cycle_stamp + self.bw_probe_wait || self.rounds_since_probe_up >= rounds {
            self.start_probe_bw_refill();
            return true;
        }
        false
    }

    /// §5.3.3.9 `IsTimeToCruise`.
    fn is_time_to_cruise(&self, inflight: u64) -> bool {
        inflight <= self.inflight_with_headroom()
            && inflight <= self.inflight(self.max_bw_filter.get(), UNIT)
    }

    /// §5.3.3.9 `IsTimeToGoDown`.
    fn is_time_to_go_down(&mut self, rs: &RateSample, inflight: u64) -> bool {
        if self.prev_probe_too_high && inflight >= self.inflight_longterm {
            self.prev_probe_precautionary = true;
            return true;
        }
        if self.is_cwnd_limited() && self.cwnd >= self.inflight_longterm {
            self.reset_full_bw();
            self.full_bw = rs.delivery_rate.unwrap_or(0);
        } else if self.full_bw_now {
            return true;
        }
        false
    }

    /// §5.3.3.9 `UpdateProbeBWCyclePhase`.
    fn update_probe_bw_cycle_phase(
        &mut self,
        now: SimTime,
        rs: &RateSample,
        app_limited: bool,
        inflight: u64,
    ) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_long_term_model(now, rs, app_limited) {
            return;
        }
        let state = self.state;
        match state {
            Bbr3State::ProbeBwDown => {
                if self.is_time_reach_probe_bw(now) {
                    return;
                }
                if self.is_time_to_cruise(inflight) {
                    self.start_probe_bw_cruise();
                }
            }
            Bbr3State::ProbeBwCruise => {
                self.is_time_reach_probe_bw(now);
            }
            // After one round of REFILL, UP.
            Bbr3State::ProbeBwRefill if self.round_start => {
                self.is_bw_probe_sample = true;
                self.start_probe_bw_up(rs);
            }
            Bbr3State::ProbeBwUp if self.is_time_to_go_down(rs, inflight) => {
                self.prev_probe_too_high = false; // no high loss (yet)
                self.start_probe_bw_down(now);
            }
            _ => {}
        }
    }

    /// §5.3.4.3 `UpdateMinRTT`.
    fn update_min_rtt(&mut self, now: SimTime, rs: &RateSample) {
        self.probe_rtt_expired = now > self.probe_rtt_min_stamp + PROBE_RTT_INTERVAL;
        // Only unambiguous samples (Karn's rule, RFC 6298 §3; `RateSample::karn_rtt`): an
        // ACK of a retransmitted TCP segment may answer the original.
        if let Some(rtt) = rs.karn_rtt {
            if self.probe_rtt_min_delay.is_none_or(|d| rtt < d) || self.probe_rtt_expired {
                self.probe_rtt_min_delay = Some(rtt);
                self.probe_rtt_min_stamp = now;
            }
        }
        let min_rtt_expired = now > self.min_rtt_stamp + MIN_RTT_FILTER_LEN;
        if let Some(d) = self.probe_rtt_min_delay {
            if self.min_rtt.is_none_or(|m| d < m) || min_rtt_expired {
                self.min_rtt = Some(d);
                self.min_rtt_stamp = self.probe_rtt_min_stamp;
            }
        }
    }

    /// §5.3.4.3 `ProbeRTTCwnd`.
    fn probe_rtt_cwnd(&self) -> u64 {
        self.bdp_multiple(self.bw, PROBE_RTT_CWND_GAIN)
            .max(self.min_pipe_cwnd())
    }

    /// §5.3.4.3 `CheckProbeRTT`, `HandleProbeRTT`, `CheckProbeRTTDone`; §5.3.4.4.
    fn check_probe_rtt(&mut self, now: SimTime, inflight: u64) {
        if self.state != Bbr3State::ProbeRtt && self.probe_rtt_expired {
            self.state = Bbr3State::ProbeRtt;
            self.pacing_gain = UNIT;
            self.cwnd_gain = PROBE_RTT_CWND_GAIN;
            self.save_cwnd();
            self.probe_rtt_done_stamp = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.start_round();
            self.probe_rtt_count += 1;
        }
        if self.state != Bbr3State::ProbeRtt {
            return;
        }
        // MarkConnectionAppLimited: C.app_limited = C.delivered + C.inflight.
        let end = self.delivered.saturating_add(inflight).max(1);
        let start = self.app_limited_bubble.map_or(self.delivered, |(s, _)| s);
        self.app_limited_bubble = Some((start, end));
        match self.probe_rtt_done_stamp {
            None if inflight <= self.probe_rtt_cwnd() => {
                self.probe_rtt_done_stamp = Some(now + PROBE_RTT_DURATION);
                self.probe_rtt_round_done = false;
                self.start_round();
            }
            Some(done) => {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done && now > done {
                    self.probe_rtt_min_stamp = now;
                    self.restore_cwnd();
                    // ExitProbeRTT.
                    self.reset_short_term_model();
                    if self.full_bw_reached {
                        self.start_probe_bw_down(now);
                        self.start_probe_bw_cruise();
                    } else {
                        self.enter_startup();
                    }
                }
            }
            None => {}
        }
    }

    /// §5.5.10.3 `AdvanceLatestDeliverySignals`.
    fn advance_latest_delivery_signals(&mut self, rs: &RateSample) {
        if self.loss_round_start {
            self.bw_latest = rs.delivery_rate.unwrap_or(0);
            self.inflight_latest = rs.delivered;
        }
    }

    /// §5.5.10.3 `BoundBWForModel`.
    fn bound_bw_for_model(&mut self) {
        self.bw = self.max_bw_filter.get().min(self.bw_shortterm);
    }

    /// §5.6.2 `SetPacingRate` (with the 1 % margin).
    fn set_pacing_rate(&mut self) {
        let rate = self.bw as u128 * self.pacing_gain as u128 / UNIT as u128
            * (100 - PACING_MARGIN_PERCENT) as u128
            / 100;
        let rate = rate.min(INF as u128) as u64;
        if rate > 0 && (self.full_bw_reached || rate > self.pacing_rate) {
            self.pacing_rate = rate;
        }
    }

    /// §5.6.3 `SetSendQuantum`.
    fn set_send_quantum(&mut self) {
        self.send_quantum = (self.pacing_rate / 1000)
            .min(SEND_QUANTUM_MAX)
            .max(2 * self.mss);
    }

    /// §5.6.4.6 `SetCwnd` with §5.6.4.2 `UpdateMaxInflight`, §5.6.4.5
    /// `BoundCwndForProbeRTT` and §5.6.4.7 `BoundCwndForModel`.
    fn set_cwnd(&mut self, rs: &RateSample) {
        let cap = self
            .bdp_multiple(self.bw, self.cwnd_gain)
            .saturating_add(self.extra_acked_filter.get());
        self.max_inflight = self.quantization_budget(cap);
        let acked = rs.newly_acked;
        if self.full_bw_reached {
            self.cwnd = self.cwnd.saturating_add(acked).min(self.max_inflight);
        } else if self.cwnd < self.max_inflight || self.delivered < self.initial_cwnd {
            self.cwnd = self.cwnd.saturating_add(acked);
        }
        self.cwnd = self.cwnd.max(self.min_pipe_cwnd());
        if self.state == Bbr3State::ProbeRtt {
            self.cwnd = self.cwnd.min(self.probe_rtt_cwnd());
        }
        let mut cap = INF;
        if self.state.is_probe_bw() && self.state != Bbr3State::ProbeBwCruise {
            cap = self.inflight_longterm;
        } else if matches!(self.state, Bbr3State::ProbeRtt | Bbr3State::ProbeBwCruise) {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_shortterm).max(self.min_pipe_cwnd());
        self.cwnd = self.cwnd.min(cap);
    }

    // ---- recovery and undo ----

    /// §5.6.4.4 `SaveCwnd`.
    fn save_cwnd(&mut self) {
        self.prior_cwnd = if !self.recovering && self.state != Bbr3State::ProbeRtt {
            self.cwnd
        } else {
            self.prior_cwnd.max(self.cwnd)
        };
    }

    /// §5.6.4.4 `RestoreCwnd`.
    fn restore_cwnd(&mut self) {
        self.cwnd = self.cwnd.max(self.prior_cwnd);
    }

    /// §5.5.11.1 `SaveStateUponLoss`.
    fn save_state_upon_loss(&mut self) {
        self.save_cwnd();
        self.undo_state = None;
        self.undo_bw_shortterm = self.bw_shortterm;
        self.undo_inflight_shortterm = self.inflight_shortterm;
        self.undo_inflight_longterm = self.inflight_longterm;
    }

    /// The first RTT (the transport's smoothed RTT, else the sample's): the initial
    /// pacing rate from it (§5.6.2), unless a bandwidth sample came first.
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
            if self.max_bw_filter.get() == 0 {
                self.init_pacing_rate(r);
            }
        }
    }

    // ---- ECN hook ----

    /// **The ECN hook** (draft-ietf-ccwg-bbr-06 §3.7: CE marks MUST count as congestion;
    /// the response is Linux BBRv3's / draft-cardwell-iccrg-bbr-congestion-control-02's).
    /// The transport calls it once per ACK that reports ECN counts, after
    /// [`CongestionController::on_rate_sample`], with `ce_bytes` the bytes newly reported
    /// CE-marked and `delivered_bytes` the bytes newly delivered by that ACK. No transport
    /// calls it yet.
    ///
    /// - Per call: while the samples come from a bandwidth probe (ProbeBW_REFILL/UP data),
    ///   `ce_bytes > ECN_THRESH · delivered_bytes` (0.5) is "inflight too high"
    ///   (§5.5.10.2 `HandleInflightTooHigh`: `inflight_longterm = max(tx_in_flight,
    ///   0.7 · target)`, and ProbeBW_UP goes down).
    /// - Per packet-timed round (closed on the first call of a later round): `alpha ←
    ///   (1 − 1/16) · alpha + 1/16 · ce_ratio` of the round; a round with CE marks, when
    ///   not probing, cuts `inflight_shortterm` (initialised to the window) to
    ///   `(1 − alpha/3) ·` its value.
    pub fn on_ecn(&mut self, now: SimTime, ce_bytes: u64, delivered_bytes: u64) {
        if self.round_count > self.ecn_round {
            self.end_ecn_round();
            self.ecn_round = self.round_count;
        }
        self.ecn_ce_in_round = self.ecn_ce_in_round.saturating_add(ce_bytes);
        self.ecn_delivered_in_round = self.ecn_delivered_in_round.saturating_add(delivered_bytes);
        if ce_bytes > 0 {
            self.ecn_in_round = true;
        }
        let too_high = ce_bytes as u128 * UNIT as u128 > delivered_bytes as u128 * ECN_THRESH as u128;
        if too_high && self.is_bw_probe_sample {
            self.handle_inflight_too_high(now, self.last_tx_in_flight, false);
        }
    }

    fn end_ecn_round(&mut self) {
        let delivered = self.ecn_delivered_in_round;
        if delivered > 0 {
            let ratio = (self.ecn_ce_in_round.min(delivered) as u128 * UNIT as u128
                / delivered as u128) as u64;
            self.ecn_alpha = (self.ecn_alpha * (UNIT - ECN_ALPHA_GAIN) + ratio * ECN_ALPHA_GAIN) / UNIT;
        }
        if self.ecn_in_round && !self.is_probing_bw() {
            if self.inflight_shortterm == INF {
                self.inflight_shortterm = self.cwnd;
            }
            let cut = UNIT - mul(self.ecn_alpha, ECN_FACTOR);
            self.inflight_shortterm = mul(self.inflight_shortterm, cut).max(self.min_pipe_cwnd());
        }
        self.ecn_ce_in_round = 0;
        self.ecn_delivered_in_round = 0;
        self.ecn_in_round = false;
    }
}

impl CongestionController for Bbr3 {
    fn on_packet_sent(&mut self, _now: SimTime, _bytes: u64, bytes_in_flight_after: u64) {
        if bytes_in_flight_after.saturating_add(self.mss) > self.cwnd {
            self.cwnd_limited_this_round = true;
        }
    }

    fn on_packet_acked(
        &mut self,
        _now: SimTime,
        sent_time: SimTime,
        _bytes: u64,
        _app_limited: bool,
        rtt: &RttSnapshot,
    ) {
        self.check_first_rtt(rtt, None);
        if self.recovering && !self.in_recovery(sent_time) {
            self.recovering = false;
            self.exit_recovery = true;
        }
    }

    fn on_congestion_event(
        &mut self,
        now: SimTime,
        newest_lost_sent_time: SimTime,
        _bytes_in_flight: u64,
    ) {
        if self.in_recovery(newest_lost_sent_time) {
            return;
        }
        // §5.6.4.4 OnEnterFastRecovery: SaveCwnd, SaveStateUponLoss (the window itself
        // follows the model, §5.5.10).
        self.save_state_upon_loss();
        self.recovery_start = Some(now);
        self.recovering = true;
        self.exit_recovery = false;
        self.recovery_round = Some(self.round_count);
    }

    fn on_persistent_congestion(&mut self, now: SimTime) {
        self.on_retransmission_timeout(now, true);
    }

    fn on_retransmission_timeout(&mut self, now: SimTime, _reduce: bool) {
        // §5.6.4.4 OnEnterRTO: SaveCwnd, SaveStateUponLoss, cwnd = inflight + 1 packet
        // (the transport considers nothing in flight any more).
        self.save_state_upon_loss();
        self.recovery_start = Some(now);
        self.recovering = true;
        self.exit_recovery = false;
        self.recovery_round = Some(self.round_count);
        self.cwnd = self.mss;
    }

    fn undo_reduction(&mut self, _now: SimTime, prior_cwnd: u64, _prior_ssthresh: Option<u64>) {
        // §5.5.11.2 HandleSpuriousLossDetection.
        self.cwnd = self.cwnd.max(prior_cwnd);
        self.restore_cwnd();
        self.recovering = false;
        self.exit_recovery = false;
        self.is_loss_in_round = false;
        self.reset_full_bw();
        self.bw_shortterm = self.bw_shortterm.max(self.undo_bw_shortterm);
        self.inflight_shortterm = self.inflight_shortterm.max(self.undo_inflight_shortterm);
        self.inflight_longterm = self.inflight_longterm.max(self.undo_inflight_longterm);
        match self.undo_state {
            Some(Bbr3State::Startup) if self.state != Bbr3State::Startup => {
                self.full_bw_reached = false;
                if self.state != Bbr3State::ProbeRtt {
                    self.enter_startup();
                }
            }
            Some(Bbr3State::ProbeBwUp)
                if self.state != Bbr3State::ProbeBwUp && self.state != Bbr3State::ProbeRtt =>
            {
                self.start_probe_bw_refill();
            }
            _ => {}
        }
        self.undo_state = None;
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
        // §5.6.4.4: one packet after a timeout (MinPipeCwnd otherwise).
        self.mss
    }

    fn loss_reduction_factor(&self) -> f64 {
        // §2.8 Beta: the multiplicative decrease per round with loss.
        BETA as f64 / UNIT as f64
    }

    fn recovering(&self) -> bool {
        self.recovering
    }

    fn in_slow_start(&self) -> bool {
        self.state == Bbr3State::Startup
    }

    fn wants_rate_samples(&self) -> bool {
        true
    }

    /// §5.2.3 `UpdateOnACK`: `UpdateModelAndState`, then `UpdateControlParameters`.
    fn on_rate_sample(&mut self, now: SimTime, rs: &RateSample, rtt: &RttSnapshot) {
        self.delivered = rs.total_delivered;
        self.check_first_rtt(rtt, rs.karn_rtt);
        if rs.rtt.is_some() {
            self.last_tx_in_flight = rs.tx_in_flight;
        }
        let inflight = rs.bytes_in_flight;
        let mut app_limited = rs.is_app_limited;
        if let Some((start, end)) = self.app_limited_bubble {
            if rs.prior_delivered >= start && rs.prior_delivered < end {
                app_limited = true;
            }
            if self.delivered > end && self.state != Bbr3State::ProbeRtt {
                self.app_limited_bubble = None;
            }
        }
        // §5.2.4 per-loss steps: the losses this ACK declared were detected before the
        // model update (§5.5.10.2 `NoteLoss`), with the Startup loss accounting of §5.3.1.3.
        if rs.newly_lost > 0 {
            self.note_loss();
            self.loss_events_in_round += 1;
        }
        self.lost_in_round = self.lost_in_round.saturating_add(rs.newly_lost);
        self.delivered_in_round = self.delivered_in_round.saturating_add(rs.newly_acked);
        self.update_latest_delivery_signals(rs);
        self.update_congestion_signals(rs, app_limited);
        self.update_ack_aggregation(now, rs);
        self.check_full_bw_reached(rs, app_limited);
        self.check_startup_and_drain(now, inflight);
        self.update_probe_bw_cycle_phase(now, rs, app_limited, inflight);
        self.update_min_rtt(now, rs);
        self.check_probe_rtt(now, inflight);
        self.advance_latest_delivery_signals(rs);
        self.bound_bw_for_model();
        if self.exit_recovery {
            // §5.6.4.4: upon exiting loss recovery, restore the last known good window
            // (then bounded by the model in SetCwnd).
            self.exit_recovery = false;
            self.recovery_round = None;
            self.restore_cwnd();
        }
        // The ACK's CE marks (reported before its rate sample, RFC 9002 §B.7 order) with
        // what it delivered: the round's CE share (`on_ecn`).
        if self.ecn_seen {
            let ce = std::mem::take(&mut self.ecn_pending);
            self.on_ecn(now, ce, rs.newly_acked);
        }
        self.set_pacing_rate();
        self.set_send_quantum();
        self.set_cwnd(rs);
    }

    /// CE marks are not a congestion event for BBRv3: no immediate reduction (the
    /// default of [`CongestionController::on_ecn_ce`]); the marked bytes (`ce_packets`
    /// full-sized packets) join the ACK's rate sample in [`Bbr3::on_ecn`], which bounds
    /// the model by the round's CE share.
    fn on_ecn_ce(&mut self, _now: SimTime, _sent_time: SimTime, ce_packets: u64, _bytes_in_flight: u64) {
        self.ecn_seen = true;
        self.ecn_pending = self
            .ecn_pending
            .saturating_add(ce_packets.saturating_mul(self.mss));
    }

    fn pacing_rate(&self) -> Option<u64> {
        Some(self.pacing_rate.max(1))
    }

    fn model(&self) -> Option<ModelEstimate> {
        Some(ModelEstimate {
            state: self.state.name(),
            bandwidth: self.bw,
            min_rtt: self.min_rtt.unwrap_or(SimDuration::ZERO),
            pacing_gain_permille: self.pacing_gain,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    /// 1 MB/s, 100 ms: BDP 100 kB.
    const BW: u64 = 1_000_000;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }

    /// Feeds synthetic rate samples: each [`Feeder::round`] is one ACK that starts a new
    /// packet-timed round (its packet was sent after the previous round's last delivery).
    struct Feeder {
        b: Bbr3,
        t: SimTime,
        total: u64,
        rtt: SimDuration,
    }

    impl Feeder {
        fn new(seed: u64) -> Self {
            Feeder {
                b: Bbr3::new(MSS, 10 * MSS, RngStream::derive(seed, "t")),
                t: SimTime::ZERO,
                total: 0,
                rtt: ms(100),
            }
        }

        fn sample(&mut self, dt: SimDuration, acked: u64, rate: u64, inflight: u64) -> RateSample {
            self.t += dt;
            let prior = self.total;
            self.total += acked;
            RateSample {
                delivery_rate: Some(rate),
                delivered: acked,
                interval: self.rtt,
                prior_delivered: prior,
                rtt: Some(self.rtt),
                karn_rtt: Some(self.rtt),
                newly_acked: acked,
                total_delivered: self.total,
                bytes_in_flight: inflight,
                tx_in_flight: inflight + acked,
                ..RateSample::default()
            }
        }

        fn feed(&mut self, rs: RateSample) {
            let t = self.t;
            self.b.on_rate_sample(t, &rs, &RttSnapshot::default());
        }

        fn round(&mut self, dt: SimDuration, acked: u64, rate: u64, inflight: u64) {
            let rs = self.sample(dt, acked, rate, inflight);
            self.feed(rs);
        }

        /// Startup at `BW` until the pipe is full, then Drain and ProbeBW (one BDP in
        /// flight).
        fn reach_probe_bw(&mut self) {
            for _ in 0..4 {
                self.round(ms(100), 10 * MSS, BW, 150_000);
            }
            assert_eq!(self.b.state(), Bbr3State::Drain);
            self.round(ms(100), 10 * MSS, BW, 100_000);
            assert!(self.b.state().is_probe_bw(), "{:?}", self.b.state());
        }
    }

    #[test]
    fn constants_are_the_drafts() {
        assert_eq!(STARTUP_PACING_GAIN, 2770);
        assert_eq!((4.0 * std::f64::consts::LN_2 * 100.0).round() as u64, 277);
        assert_eq!(
            (DRAIN_PACING_GAIN, PROBE_BW_DOWN_PACING_GAIN, PROBE_BW_UP_PACING_GAIN),
            (500, 900, 1250)
        );
        assert_eq!((LOSS_THRESH, BETA, HEADROOM), (20, 700, 150));
        assert_eq!(PROBE_RTT_INTERVAL, SimDuration::from_secs(5));
    }

    /// §5.3.1.2: Startup ends on the third round in a row without 25 % growth of the
    /// delivery rate (+25 % exactly is growth, +18.75 % is not); app-limited rounds do
    /// not count.
    #[test]
    fn startup_exits_after_three_rounds_without_25_percent_growth() {
        let mut f = Feeder::new(1);
        let rates = [10_000, 20_000, 40_000, 50_000, 59_375, 59_375, 59_375];
        for (k, &rate) in rates.iter().enumerate() {
            f.round(ms(100), 1000, rate, 50_000);
            assert_eq!(f.b.round_count(), k as u64 + 1);
            assert_eq!(f.b.full_bw_round().is_some(), k == 6, "round {}", k + 1);
        }
        assert_eq!(f.b.full_bw_round(), Some(7));
        assert!(!f.b.startup_loss_exit());
        // §5.3.2: Drain at pacing gain 0.5 (rate · 0.5 · 99 %).
        assert_eq!(f.b.state(), Bbr3State::Drain);
        assert_eq!(f.b.pacing_rate(), Some(59_375 * 500 / 1000 * 99 / 100));
        let mut g = Feeder::new(1);
        for k in 0..6 {
            let mut rs = g.sample(ms(100), 1000, 10_000, 50_000);
            rs.is_app_limited = k > 0;
            g.feed(rs);
        }
        assert_eq!(g.b.full_bw_round(), None);
        assert_eq!(g.b.state(), Bbr3State::Startup);
    }

    /// §5.3.1.3: in recovery for a full round, a round with more than 2 % of its data lost
    /// in at least 6 loss events ends Startup (inflight_longterm = max(bdp,
    /// inflight_latest)); 5 events, or 2 % exactly, do not.
    #[test]
    fn startup_exits_on_excessive_loss() {
        // (loss events, bytes lost per event out of 100 kB delivered in the round)
        for (events, lost_each, exits) in [(6, 400, true), (5, 1000, false), (6, 340, false)] {
            let mut f = Feeder::new(2);
            let mut rate = 100_000;
            for _ in 0..3 {
                f.round(ms(100), 10_000, rate, 50_000);
                rate *= 2; // still growing: no plateau exit
            }
            let t = f.t;
            f.b.on_congestion_event(t, t, 50_000);
            assert!(f.b.recovering());
            // One full round in recovery, no loss.
            f.round(ms(100), 10_000, rate, 50_000);
            rate *= 2;
            // The next round: 100 kB delivered in 10 ACKs, `events` of them with losses.
            for k in 0..10 {
                let mut rs = f.sample(ms(10), 10_000, rate, 50_000);
                if k > 0 {
                    rs.prior_delivered = f.total - 10_000 * (k + 1); // same round
                }
                if k < events {
                    rs.newly_lost = lost_each;
                }
                f.feed(rs);
            }
            assert_eq!(f.b.state(), Bbr3State::Startup);
            // The round ends: the check runs.
            f.round(ms(10), 10_000, rate, 50_000);
            assert_eq!(f.b.startup_loss_exit(), exits, "{events} x {lost_each}");
            if exits {
                assert!(f.b.state() != Bbr3State::Startup);
                assert!(f.b.inflight_longterm().is_some());
            } else {
                assert_eq!(f.b.state(), Bbr3State::Startup);
                assert_eq!(f.b.inflight_longterm(), None);
            }
        }
    }

    /// §5.3.3: ProbeBW goes DOWN → CRUISE (flight at one BDP) → REFILL (after the 2-3 s
    /// wait drawn at DOWN, before 63 rounds) → UP (after one round of REFILL) → DOWN (three
    /// rounds without 25 % growth), with the draft's gains in each.
    #[test]
    fn probe_bw_cycles_through_down_cruise_refill_up() {
        for seed in 1..=4 {
            let mut f = Feeder::new(seed);
            f.reach_probe_bw();
            assert_eq!(f.b.state(), Bbr3State::ProbeBwCruise, "one BDP in flight");
            let mut seen = vec![Bbr3State::ProbeBwDown, f.b.state()];
            let mut down_at = f.t;
            let mut wait = f.b.bw_probe_wait();
            assert!(wait >= ms(2000) && wait <= ms(3000), "{wait:?}");
            let mut refill_after = Vec::new();
            while seen.len() < 9 {
                // RTT samples keep decreasing by 1 ns: min_rtt keeps refreshing (no ProbeRTT).
                f.rtt = f.rtt.saturating_sub(SimDuration::from_nanos(1));
                f.round(ms(50), 5 * MSS, BW, 90_000);
                let s = f.b.state();
                let gains = (f.b.pacing_gain(), f.b.cwnd_gain());
                match s {
                    Bbr3State::ProbeBwDown => assert_eq!(gains, (900, 2000)),
                    Bbr3State::ProbeBwCruise | Bbr3State::ProbeBwRefill => {
                        assert_eq!(gains, (1000, 2000))
                    }
                    Bbr3State::ProbeBwUp => assert_eq!(gains, (1250, 2250)),
                    other => panic!("{other:?}"),
                }
                if s != *seen.last().unwrap() {
                    if s == Bbr3State::ProbeBwRefill {
                        refill_after.push((f.t.saturating_since(down_at), wait));
                    }
                    if s == Bbr3State::ProbeBwDown {
                        down_at = f.t;
                        wait = f.b.bw_probe_wait();
                    }
                    seen.push(s);
                }
            }
            use Bbr3State::*;
            assert_eq!(
                seen,
                [
                    ProbeBwDown,
                    ProbeBwCruise,
                    ProbeBwRefill,
                    ProbeBwUp,
                    ProbeBwDown,
                    ProbeBwCruise,
                    ProbeBwRefill,
                    ProbeBwUp,
                    ProbeBwDown
                ],
                "seed {seed}"
            );
            // REFILL starts on the first ACK after the wall-clock wait (ACKs 50 ms apart;
            // 63 rounds of 50 ms would be 3.15 s).
            for (after, wait) in refill_after {
                assert!(after > wait && after <= wait + ms(50), "{after:?} vs {wait:?}");
            }
            assert_eq!(f.b.probe_rtt_count(), 0);
        }
    }

    /// §5.3.4: 5 s without a lower RTT sample enter ProbeRTT (cwnd 0.5 BDP); it is left
    /// after 200 ms at that flight and a round, back to ProbeBW (CRUISE).
    #[test]
    fn probe_rtt_after_5_s_holds_200_ms_and_a_round() {
        let mut f = Feeder::new(3);
        f.reach_probe_bw();
        let stamp = f.t; // the last 100 ms sample that refreshed probe_rtt_min_delay
        let mut entered = None;
        while entered.is_none() {
            f.rtt = ms(110);
            f.round(ms(20), 2 * MSS, BW, 100_000);
            if f.b.state() == Bbr3State::ProbeRtt {
                entered = Some(f.t);
            }
        }
        let entered = entered.unwrap();
        // probe_rtt_min_delay is stamped at the first 100 ms sample (t = 100 ms), so 5 s
        // after it at the latest.
        assert!(entered > SimTime::ZERO + PROBE_RTT_INTERVAL, "{entered:?}");
        assert!(entered <= stamp + PROBE_RTT_INTERVAL + ms(20), "{entered:?}");
        assert_eq!(f.b.probe_rtt_count(), 1);
        assert_eq!(f.b.cwnd_gain(), PROBE_RTT_CWND_GAIN);
        // cwnd = max(0.5 · BDP, 4 packets) = 50 kB (bw 1 MB/s, min_rtt 100 ms).
        assert_eq!(f.b.window(), 50_000);
        // Flight drains to 0.5 BDP: 200 ms and a round from then.
        let mut left = None;
        let mut drained = None;
        while left.is_none() {
            f.rtt = ms(100);
            // Same-round ACKs every 20 ms, a new round every 100 ms.
            let rs = f.sample(ms(20), MSS, BW, 50_000);
            drained.get_or_insert(f.t);
            f.feed(rs);
            if f.b.state() != Bbr3State::ProbeRtt {
                left = Some(f.t);
            }
        }
        let spent = left.unwrap().saturating_since(drained.unwrap());
        assert!(spent > PROBE_RTT_DURATION, "{spent:?}");
        assert!(spent <= PROBE_RTT_DURATION + ms(20), "{spent:?}");
        assert_eq!(f.b.state(), Bbr3State::ProbeBwCruise);
        assert!(f.b.window() > 50_000, "the saved window comes back");
    }

    /// §5.5.10.3: outside a bandwidth probe, each round with loss sets the short-term
    /// model to max(latest, 0.7 · itself); REFILL resets it.
    #[test]
    fn loss_outside_probing_cuts_the_short_term_model_by_beta() {
        let mut f = Feeder::new(4);
        f.reach_probe_bw();
        assert_eq!(f.b.bw_shortterm(), None);
        // A round delivering 20 kB at 200 kB/s, with a loss in its second ACK ...
        f.round(ms(100), 20_000, 200_000, 100_000);
        let mut rs = f.sample(ms(10), 20_000, 200_000, 100_000);
        rs.prior_delivered -= 20_000; // same round
        rs.newly_lost = 1000;
        f.feed(rs);
        let cwnd = f.b.window();
        assert_eq!(f.b.bw_shortterm(), None);
        // ... is answered when the next (loss) round starts.
        f.round(ms(100), 20_000, 200_000, 100_000);
        assert_eq!(f.b.bw_shortterm(), Some(BW * 7 / 10));
        assert_eq!(f.b.inflight_shortterm(), Some(cwnd * 7 / 10));
        assert_eq!(f.b.bw(), BW * 7 / 10);
        assert!(f.b.window() <= cwnd * 7 / 10);
        // Without loss the bound stays.
        f.round(ms(100), 20_000, 200_000, 100_000);
        assert_eq!(f.b.bw_shortterm(), Some(BW * 7 / 10));
    }

    /// The ECN hook ([`Bbr3::on_ecn`]): the CE-ratio EWMA per round, the inflight_shortterm
    /// cut by alpha/3 when not probing, and a CE ratio above 0.5 while probing bounding
    /// inflight_longterm.
    #[test]
    fn ecn_hook() {
        let mut f = Feeder::new(5);
        f.reach_probe_bw();
        assert_eq!(f.b.ecn_alpha(), UNIT);
        // A round with 10 % CE marks ...
        let t = f.t;
        f.b.on_ecn(t, 1000, 10_000);
        assert_eq!(f.b.inflight_shortterm(), None, "answered at the round's end");
        // ... closed by the first call of the next round: alpha = 15/16 · 1 + 1/16 · 0.1,
        // inflight_shortterm = cwnd · (1 − alpha/3).
        f.round(ms(100), 10_000, BW, 100_000);
        let t = f.t;
        let cwnd = f.b.window();
        f.b.on_ecn(t, 0, 10_000);
        let alpha = (UNIT * (UNIT - ECN_ALPHA_GAIN) + 100 * ECN_ALPHA_GAIN) / UNIT;
        assert_eq!(f.b.ecn_alpha(), alpha);
        let cut = UNIT - alpha * ECN_FACTOR / UNIT;
        assert_eq!(f.b.inflight_shortterm(), Some(cwnd * cut / UNIT));
        // A round without CE: alpha decays, no cut.
        f.round(ms(100), 10_000, BW, 100_000);
        let t = f.t;
        f.b.on_ecn(t, 0, 10_000);
        assert_eq!(f.b.ecn_alpha(), alpha * (UNIT - ECN_ALPHA_GAIN) / UNIT);
        assert_eq!(f.b.inflight_shortterm(), Some(cwnd * cut / UNIT));
        // While probing (samples of a REFILL/UP phase) more than half CE-marked is
        // "inflight too high": inflight_longterm is set and UP goes down.
        let mut g = Feeder::new(5);
        g.reach_probe_bw();
        while g.b.state() != Bbr3State::ProbeBwUp {
            g.rtt = g.rtt.saturating_sub(SimDuration::from_nanos(1));
            g.round(ms(50), 5 * MSS, BW, 100_000);
        }
        assert_eq!(g.b.inflight_longterm(), None);
        let t = g.t;
        g.b.on_ecn(t, 5000, 10_000);
        assert_eq!(g.b.inflight_longterm(), None, "exactly 0.5 is not above");
        g.b.on_ecn(t, 5001, 10_000);
        assert_eq!(g.b.inflight_longterm(), Some(105_000), "the last tx_in_flight");
        assert_eq!(g.b.state(), Bbr3State::ProbeBwDown);
    }

    /// The transport's CE report (`on_ecn_ce`) reaches `on_ecn` with the next rate sample:
    /// no window cut at the report (not a congestion event), the round's CE share cuts
    /// `inflight_shortterm` when the round ends.
    #[test]
    fn ce_reports_feed_the_round_share_not_a_congestion_event() {
        let mut f = Feeder::new(5);
        f.reach_probe_bw();
        let cwnd = f.b.window();
        let t = f.t;
        f.b.on_ecn_ce(t, t, 2, 100_000);
        assert_eq!(f.b.window(), cwnd, "no reduction at the report");
        assert!(!f.b.recovering());
        f.round(ms(100), 10 * MSS, BW, 100_000);
        assert_eq!(f.b.inflight_shortterm(), None, "answered at the round's end");
        f.round(ms(100), 10 * MSS, BW, 100_000);
        assert!(f.b.inflight_shortterm().is_some());
        assert!(f.b.ecn_alpha() < UNIT);
    }
}

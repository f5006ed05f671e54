//! Congestion controllers, shared by QUIC and TCP (and SCTP's optional shared controllers);
//! users' own controllers plug in through [`registry`].
//!
//! The interface is byte-based and knows nothing of QUIC: a transport's loss-recovery
//! module owns `bytes_in_flight`, decides which packets are acknowledged or lost, and
//! reports them here. The controller only owns the congestion window and its own state.
//!
//! The call order a transport must follow (RFC 9002 Appendix A.7 / B) when an
//! acknowledgement arrives is: update the RTT estimate, report losses
//! ([`CongestionController::on_congestion_event`], then possibly
//! [`CongestionController::on_persistent_congestion`]), then report each newly acknowledged
//! in-flight packet ([`CongestionController::on_packet_acked`]).

use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

pub mod cubic_linux;
pub mod hybrid_slow_start;
pub mod hystart;
pub mod hystart_linux;
pub mod params;
pub mod rate_sample;
pub mod registry;
pub mod sctp;

#[cfg(test)]
mod proptests;

pub use cubic::{Cubic, CubicFlavor, CubicParams, HyStartFlavor};
pub use cubic_linux::LinuxCubic;
pub use hybrid_slow_start::HybridSlowStart;
pub use hystart::HyStart;
pub use hystart_linux::LinuxHyStart;
pub use newreno::NewReno;
pub use params::CcParams;
pub use rate_sample::{RateSample, RateSampler};
pub use registry::{CcContext, CcStreamId, ControllerFactory, ControllerRegistry, CustomCc};

/// A snapshot of the path's RTT estimate, passed to controllers that need it (CUBIC,
/// HyStart++, BBR). NewReno ignores it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RttSnapshot {
    /// Minimum RTT observed (RFC 9002 §5.2).
    pub min_rtt: SimDuration,
    /// Smoothed RTT (RFC 9002 §5.3).
    pub smoothed_rtt: SimDuration,
    /// Most recent RTT sample.
    pub latest_rtt: SimDuration,
    /// RTT variation.
    pub rttvar: SimDuration,
}

/// A byte-based congestion controller.
///
/// Every method takes the current simulated time so that time-based controllers (CUBIC)
/// fit the same interface. Implementations must be deterministic — the rules for a
/// user's controller ([`registry`]):
/// - time is the `now` handed in (integer nanoseconds); never read a clock;
/// - integer arithmetic, or `libm` for transcendental functions (`libm::cbrt`);
/// - no threads, no `HashMap` / `HashSet` iteration;
/// - randomness only from the stream its factory is handed, [`CcContext::rng`]
///   (derived from the run's seed and the controller's stable name, so runs are
///   reproducible and the draws shift no other random component).
///
/// The transport owns bytes in flight and reports every send, acknowledgement, loss and
/// persistent congestion; the window returned by [`CongestionController::window`] is
/// what it may have in flight. `quicsim`'s invariant checkers (`sim_core::testing`,
/// feature `testing`) check, among others, that the window never drops below
/// [`CongestionController::minimum_window`].
pub trait CongestionController: std::fmt::Debug {
    /// A packet counted in bytes in flight was sent. `bytes_in_flight_after` includes it.
    fn on_packet_sent(&mut self, now: SimTime, bytes: u64, bytes_in_flight_after: u64);

    /// One newly acknowledged in-flight packet of `bytes` bytes, sent at `sent_time`.
    /// `app_limited`: the sender was not congestion-window-limited when it was sent
    /// (RFC 9002 §7.8: do not grow the window then).
    fn on_packet_acked(
        &mut self,
        now: SimTime,
        sent_time: SimTime,
        bytes: u64,
        app_limited: bool,
        rtt: &RttSnapshot,
    );

    /// Loss (or an ECN-CE increase) of packets, the newest of which was sent at
    /// `newest_lost_sent_time` (RFC 9002 §7.3.2, B.6). `bytes_in_flight` is the value after
    /// the lost packets were removed from it.
    fn on_congestion_event(
        &mut self,
        now: SimTime,
        newest_lost_sent_time: SimTime,
        bytes_in_flight: u64,
    );

    /// ECN-CE feedback: the peer reported that `ce_packets` more packets arrived marked
    /// Congestion Experienced, in an acknowledgement of a packet sent at `sent_time`
    /// (QUIC: an increase of the ECN-CE count of a validated ACK frame, RFC 9000 §13.4.2,
    /// RFC 9002 §7.1 and B.7 `ProcessECN`, where `sent_time` is that of the largest
    /// acknowledged packet; TCP: an ACK with ECE, RFC 3168 §6.1.2, with the send time of
    /// the newest segment it acknowledges). Called before the ACK's losses are reported.
    ///
    /// Default, for NewReno and CUBIC: a congestion event exactly as for a loss
    /// ([`CongestionController::on_congestion_event`]; RFC 9002 §7.1: "treated as a
    /// congestion event", RFC 3168 §6.1.2: "the same as the congestion control algorithm
    /// for a single dropped packet", RFC 9438 §4.6 for CUBIC), so at most one reduction
    /// per recovery period: a mark on a packet sent before the current recovery started
    /// changes nothing.
    ///
    /// A controller that responds to the amount of marking overrides it: BBRv3
    /// (draft-ietf-ccwg-bbr) counts the CE-marked share of each round from `ce_packets`
    /// and its rate samples instead of reducing at once. BBRv1 ([`bbr1`]) overrides it
    /// with nothing: draft-cardwell-iccrg-bbr-congestion-control-00 does not react to ECN.
    fn on_ecn_ce(
        &mut self,
        now: SimTime,
        sent_time: SimTime,
        ce_packets: u64,
        bytes_in_flight: u64,
    ) {
        let _ = ce_packets;
        self.on_congestion_event(now, sent_time, bytes_in_flight);
    }

    /// Persistent congestion was established (RFC 9002 §7.6.2): collapse to the minimum
    /// window and leave any recovery period.
    fn on_persistent_congestion(&mut self, now: SimTime);

    /// A retransmission timeout (TCP: RFC 5681 §3.1; Linux `tcp_enter_loss`): with
    /// `reduce` (the first timeout of an episode) ssthresh is reduced as for a congestion
    /// event; the window becomes the loss window and any recovery period ends. The
    /// built-in controllers set the loss window to one segment (RFC 5681 §3.1 LW = 1
    /// SMSS). Default, for a controller without the hook:
    /// [`CongestionController::on_congestion_event`] (with `reduce`), then
    /// [`CongestionController::on_persistent_congestion`] (its own minimum window).
    fn on_retransmission_timeout(&mut self, now: SimTime, reduce: bool) {
        if reduce {
            self.on_congestion_event(now, now, 0);
        }
        self.on_persistent_congestion(now);
    }

    /// The last reduction was spurious (RFC 3708 DSACK, RFC 3522 timestamps, RFC 5682
    /// F-RTO; Linux `tcp_undo_cwnd_reduction`): the window becomes at least `prior_cwnd`
    /// and ssthresh at least `prior_ssthresh` (`None` = infinite). Default: nothing (a
    /// controller without the hook stays reduced).
    fn undo_reduction(&mut self, _now: SimTime, _prior_cwnd: u64, _prior_ssthresh: Option<u64>) {}

    /// The current congestion window in bytes.
    fn window(&self) -> u64;

    /// The slow-start threshold in bytes, `None` while it is still infinite.
    fn ssthresh(&self) -> Option<u64>;

    /// Whether a packet sent at `sent_time` was sent at or before the start of the current
    /// recovery period (RFC 9002 B.4 `InCongestionRecovery`).
    fn in_recovery(&self, sent_time: SimTime) -> bool;

    /// A short stable name (`"newreno"`), for traces and results.
    fn name(&self) -> &'static str;

    /// The smallest window the controller ever sets, in bytes (RFC 9002 §7.2
    /// kMinimumWindow: 2 segments of the controller's segment size).
    fn minimum_window(&self) -> u64;

    /// The multiplicative decrease a congestion event applies to the window
    /// (`ssthresh = factor · cwnd`): RFC 9002 §7.3.2 / Appendix B.2 kLossReductionFactor
    /// = 0.5 for NewReno, RFC 9438 §4.6 β_cubic = 0.7 for CUBIC (β_eff with emulated
    /// connections).
    fn loss_reduction_factor(&self) -> f64;

    /// Whether the controller is in a recovery period (RFC 9002 §7.3.2: from a congestion
    /// event until a packet sent after it is acknowledged). Default: never.
    fn recovering(&self) -> bool {
        false
    }

    /// The controller's state in qlog's congestion-state vocabulary (RFC 9002 §7.3):
    /// `"recovery"` while [`CongestionController::recovering`], else `"slow_start"` while
    /// [`CongestionController::in_slow_start`], else `"congestion_avoidance"` (qlog also
    /// names `"application_limited"`, which no controller here reports).
    fn state_name(&self) -> &'static str {
        if self.recovering() {
            STATE_RECOVERY
        } else if self.in_slow_start() {
            STATE_SLOW_START
        } else {
            STATE_CONGESTION_AVOIDANCE
        }
    }

    /// The variant of the algorithm when it has several (CUBIC: `"rfc9438"` or `"linux"`,
    /// [`CubicFlavor`]). Default: none.
    fn flavor(&self) -> Option<&'static str> {
        None
    }

    /// Whether the controller is in slow start (used by the pacer to choose its gain).
    /// Default: `cwnd < ssthresh` (an infinite ssthresh counts as slow start).
    fn in_slow_start(&self) -> bool {
        self.ssthresh().is_none_or(|s| self.window() < s)
    }

    /// Whether the transport should keep delivery-rate samples ([`rate_sample`]) and call
    /// [`CongestionController::on_rate_sample`] after every ACK (BBR). Asked once, when
    /// the transport is built. A controller that takes rate samples also sets its own
    /// window during a TCP fast recovery (as Linux's `cong_control` hook bypasses PRR).
    /// Default: no (nothing is sampled, nothing changes for the controller).
    fn wants_rate_samples(&self) -> bool {
        false
    }

    /// The rate sample of one ACK (after its losses, [`CongestionController::on_congestion_event`],
    /// and its acknowledged packets, [`CongestionController::on_packet_acked`], were
    /// reported), with the RTT estimate after it. Called only when
    /// [`CongestionController::wants_rate_samples`]. Default: nothing.
    fn on_rate_sample(&mut self, _now: SimTime, _rs: &RateSample, _rtt: &RttSnapshot) {}

    /// The pacing rate the controller asks for, in bytes per second (BBR: pacing_gain ·
    /// BtlBw). `Some` makes the transport pace at that rate whether or not the flow's
    /// `pacing` is on; `None` (the default) leaves the transport's own pacer (`gain ·
    /// cwnd / srtt`, when pacing is on).
    fn pacing_rate(&self) -> Option<u64> {
        None
    }

    /// A model-based controller's estimates for traces (BBR: state, bottleneck bandwidth,
    /// minimum RTT). Default: none.
    fn model(&self) -> Option<ModelEstimate> {
        None
    }
}

/// A model-based controller's current estimates ([`CongestionController::model`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelEstimate {
    /// The state machine's state (BBR: `"startup"`, `"drain"`, `"probe_bw"`,
    /// `"probe_rtt"`).
    pub state: &'static str,
    /// Estimated bottleneck bandwidth, bytes per second.
    pub bandwidth: u64,
    /// Estimated minimum round-trip time (zero before any sample).
    pub min_rtt: SimDuration,
    /// The pacing gain in force, permille.
    pub pacing_gain_permille: u64,
}

/// The states a model-based controller reports ([`ModelEstimate::state`]), numbered for
/// the time series' `bbr_state` column by their index here: BBRv1's four
/// (draft-cardwell-iccrg-bbr-congestion-control-00 §4.3), then BBRv3's ProbeBW phases
/// (draft-ietf-ccwg-bbr §4.3.3). A name not listed is `-1`.
pub const MODEL_STATES: &[&str] = &[
    "startup",
    "drain",
    "probe_bw",
    "probe_rtt",
    "probe_bw_down",
    "probe_bw_cruise",
    "probe_bw_refill",
    "probe_bw_up",
];

impl ModelEstimate {
    /// The time series' columns of a model-based controller: its bandwidth estimate
    /// (`bbr_bw_bps`, bit/s), its own minimum-RTT estimate (`bbr_min_rtt_s`, NaN before a
    /// sample) and its state ([`MODEL_STATES`] index, `bbr_state`).
    pub fn series(&self) -> [(String, f64); 3] {
        let state = MODEL_STATES
            .iter()
            .position(|s| *s == self.state)
            .map_or(-1.0, |i| i as f64);
        [
            ("bbr_bw_bps".to_string(), self.bandwidth as f64 * 8.0),
            (
                "bbr_min_rtt_s".to_string(),
                if self.min_rtt.as_nanos() > 0 {
                    self.min_rtt.as_secs_f64()
                } else {
                    f64::NAN
                },
            ),
            ("bbr_state".to_string(), state),
        ]
    }
}

/// [`CongestionController::state_name`] in slow start (RFC 9002 §7.3.1).
pub const STATE_SLOW_START: &str = "slow_start";
/// [`CongestionController::state_name`] in congestion avoidance (RFC 9002 §7.3.3).
pub const STATE_CONGESTION_AVOIDANCE: &str = "congestion_avoidance";
/// [`CongestionController::state_name`] in a recovery period (RFC 9002 §7.3.2): from a
/// congestion event until a packet sent after its start is acknowledged.
pub const STATE_RECOVERY: &str = "recovery";

/// One built-in congestion controller: a row of [`CONTROLLERS`], declared by the
/// controller's own file (`cc/newreno.rs`: `newreno::CONTROLLER`). Everything that lists
/// or parses controllers reads the table: the scenario names and aliases
/// ([`CcAlgorithm`]'s serde, [`ControllerRegistry::builtin`]), the schema's `cc` choices
/// (QUIC, TCP, and SCTP's shared controllers), the "one of ..." error texts, the property
/// tests. A new controller is its file plus its name in the `controllers!` line.
#[derive(Debug)]
pub struct ControllerDef {
    /// The scenario spelling (`cc = "new_reno"`), unique in the table.
    pub name: &'static str,
    /// Other accepted spellings (`"newreno"`).
    pub aliases: &'static [&'static str],
    /// The name the controller reports ([`CongestionController::name`]: traces, results).
    pub trace_name: &'static str,
    /// Builds one controller from the sender's parameters and the derived sizes.
    pub build: fn(&CcContext) -> Box<dyn CongestionController>,
    /// Whether SCTP may run it as a shared controller (fed per acknowledged chunk, with
    /// neither rate samples nor a controller pacing rate): `false` for a model-based
    /// controller ([`CongestionController::wants_rate_samples`], BBR).
    pub sctp: bool,
}

/// Declares the built-in controllers, one line: each is its module `cc/<name>.rs` holding
/// its `CONTROLLER` row, and [`CONTROLLERS`] lists the rows in the order of every list.
macro_rules! controllers {
    ($($module:ident),* $(,)?) => {
        $(pub mod $module;)*

        /// Every built-in controller. Order: the order lists are shown in (schema choices,
        /// registry names, error texts); nothing hashed or written depends on it (a controller is
        /// serialised by its name).
        pub const CONTROLLERS: &[&ControllerDef] = &[$(&$module::CONTROLLER),*];
    };
}

controllers!(newreno, cubic, bbr1, bbr3);

/// The scenario names of [`CONTROLLERS`], in order: the schema's `cc` choices.
pub const CONTROLLER_NAMES: [&str; CONTROLLERS.len()] = {
    let mut out = [""; CONTROLLERS.len()];
    let mut i = 0;
    while i < CONTROLLERS.len() {
        out[i] = CONTROLLERS[i].name;
        i += 1;
    }
    out
};

/// The built-in controller `name` stands for (its scenario name or an alias).
pub fn controller(name: &str) -> Option<&'static ControllerDef> {
    CONTROLLERS
        .iter()
        .copied()
        .find(|d| d.name == name || d.aliases.contains(&name))
}

/// Which congestion controller to use. Serialised as its scenario name (`"new_reno"`,
/// `"cubic"`, or a registered user controller's name, [`registry`]).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum CcAlgorithm {
    /// A built-in controller, a row of [`CONTROLLERS`] ([`CcAlgorithm::NewReno`],
    /// [`CcAlgorithm::Cubic`]).
    Builtin(&'static ControllerDef),
    /// A user's controller registered in a [`crate::registry::Registry`] ([`registry`]). Deserialising an
    /// unknown name gives an unresolved one, which validation rejects until a registry
    /// resolves it.
    Custom(CustomCc),
}

#[allow(non_upper_case_globals)] // spelled as the enum variants they were
impl CcAlgorithm {
    /// RFC 9002 Appendix B NewReno (`"new_reno"`, alias `"newreno"`).
    pub const NewReno: CcAlgorithm = CcAlgorithm::Builtin(&newreno::CONTROLLER);
    /// CUBIC with [`CubicParams`] (`"cubic"`): RFC 9438 ([`cubic::Cubic`]) or, with
    /// [`CubicFlavor::Linux`], Linux's `tcp_cubic.c` ([`cubic_linux::LinuxCubic`]).
    pub const Cubic: CcAlgorithm = CcAlgorithm::Builtin(&cubic::CONTROLLER);
}

impl Default for CcAlgorithm {
    fn default() -> Self {
        CcAlgorithm::NewReno
    }
}

impl CcAlgorithm {
    /// The controller's stable name, as returned by [`CongestionController::name`]
    /// (`"newreno"`, `"cubic"`; a custom controller's registered name).
    pub fn name(&self) -> &str {
        match self {
            CcAlgorithm::Builtin(d) => d.trace_name,
            CcAlgorithm::Custom(c) => c.name(),
        }
    }

    /// The scenario spelling (`"new_reno"`, `"cubic"`, a registered name).
    pub fn scenario_name(&self) -> &str {
        match self {
            CcAlgorithm::Builtin(d) => d.name,
            CcAlgorithm::Custom(c) => c.name(),
        }
    }

    /// Whether this is a custom name no registry has resolved yet.
    pub fn is_unresolved(&self) -> bool {
        matches!(self, CcAlgorithm::Custom(c) if c.factory().is_none())
    }

    /// The built-in controller of [`CONTROLLERS`] this is, `None` for a user's.
    pub fn builtin(&self) -> Option<&'static ControllerDef> {
        match self {
            CcAlgorithm::Builtin(d) => Some(d),
            CcAlgorithm::Custom(_) => None,
        }
    }

    /// The identity compared, ordered and hashed: built-in or not, and the scenario
    /// name (never a table position).
    fn key(&self) -> (bool, &str) {
        (matches!(self, CcAlgorithm::Custom(_)), self.scenario_name())
    }
}

impl PartialEq for CcAlgorithm {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for CcAlgorithm {}
impl PartialOrd for CcAlgorithm {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for CcAlgorithm {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}
impl std::hash::Hash for CcAlgorithm {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key().hash(state)
    }
}

impl Serialize for CcAlgorithm {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.scenario_name())
    }
}

impl<'de> Deserialize<'de> for CcAlgorithm {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(match controller(&s) {
            Some(def) => CcAlgorithm::Builtin(def),
            None => CcAlgorithm::Custom(CustomCc::unresolved(s)),
        })
    }
}

/// Builds the controller `params` describe, for datagrams of `max_datagram_size` bytes
/// (the unit of the initial window in packets and the default segment size). The one
/// controller factory: a built-in controller is built by its row's
/// [`ControllerDef::build`], a user's by its registered [`ControllerFactory`]; both get
/// the same [`CcContext`].
///
/// # Panics
/// On an unresolved custom name ([`CcAlgorithm::is_unresolved`]), which
/// [`crate::Config::validate`] rejects before a run.
pub fn build(params: &CcParams, max_datagram_size: u64) -> Box<dyn CongestionController> {
    let segment = params.segment_size(max_datagram_size);
    let ctx = CcContext {
        params,
        max_datagram_size,
        segment_size: segment,
        initial_window: params.initial_window(max_datagram_size),
        minimum_window: minimum_window(segment),
        stream: params.stream,
    };
    match &params.algorithm {
        CcAlgorithm::Builtin(def) => (def.build)(&ctx),
        CcAlgorithm::Custom(c) => {
            let factory = c.factory().unwrap_or_else(|| {
                panic!(
                    "controller {:?} was not resolved by a Registry (validation rejects it)",
                    c.name()
                )
            });
            factory.build(&ctx)
        }
    }
}

/// RFC 9002 §7.2 kInitialWindow: `min(10·mds, max(14720, 2·mds))` bytes.
pub fn default_initial_window(max_datagram_size: u64) -> u64 {
    (10 * max_datagram_size).min(14_720u64.max(2 * max_datagram_size))
}

/// RFC 9002 §7.2 kMinimumWindow: `2·mds` bytes.
pub fn minimum_window(max_datagram_size: u64) -> u64 {
    2 * max_datagram_size
}

/// Linux `tcp_undo_cwnd_reduction` with `tcp_reno_undo_cwnd` (the undo of Reno and of
/// CUBIC): the window back to at least the one before the reduction, ssthresh to the larger
/// of both (none when either is none, i.e. still in slow start).
pub(crate) fn reno_undo(
    cwnd: &mut u64,
    ssthresh: &mut Option<u64>,
    prior_cwnd: u64,
    prior_ssthresh: Option<u64>,
) {
    *cwnd = (*cwnd).max(prior_cwnd);
    *ssthresh = match (*ssthresh, prior_ssthresh) {
        (Some(s), Some(p)) => Some(s.max(p)),
        _ => None,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_default_windows() {
        // 1200 B: min(12000, max(14720, 2400)) = 12000.
        assert_eq!(default_initial_window(1200), 12_000);
        // 1472 B: min(14720, 14720) = 14720.
        assert_eq!(default_initial_window(1472), 14_720);
        // 1500 B: min(15000, 14720) = 14720.
        assert_eq!(default_initial_window(1500), 14_720);
        // 9000 B: min(90000, max(14720, 18000)) = 18000.
        assert_eq!(default_initial_window(9000), 18_000);
        assert_eq!(minimum_window(1200), 2400);
    }

    #[test]
    fn controller_table_names_are_unique_and_derived_lists_agree() {
        let mut seen = std::collections::BTreeSet::new();
        for d in CONTROLLERS {
            for n in std::iter::once(&d.name).chain(d.aliases) {
                assert!(seen.insert(*n), "{n} twice in CONTROLLERS");
            }
            assert_eq!(controller(d.name).map(|c| c.name), Some(d.name));
            let a = CcAlgorithm::Builtin(d);
            assert_eq!(
                build(
                    &CcParams {
                        algorithm: a.clone(),
                        ..CcParams::default()
                    },
                    1200
                )
                .name(),
                d.trace_name
            );
            let json = serde_json::to_string(&a).unwrap();
            assert_eq!(serde_json::from_str::<CcAlgorithm>(&json).unwrap(), a);
        }
        let names: Vec<&str> = CONTROLLERS.iter().map(|d| d.name).collect();
        assert_eq!(CONTROLLER_NAMES.to_vec(), names);
        assert_eq!(ControllerRegistry::builtin().names(), names);
        let schema = crate::validate::schema::QUIC.field("cc");
        assert_eq!(schema.choices, names, "the QUIC schema's cc choices");
        let schema = crate::validate::schema::TCP.field("cc");
        assert_eq!(schema.choices, names, "the TCP schema's cc choices");
        let sctp = crate::validate::schema::SCTP.field("cc");
        let shared: Vec<&str> = CONTROLLERS
            .iter()
            .filter(|d| d.sctp)
            .map(|d| d.name)
            .collect();
        assert_eq!(sctp.choices[1..], shared, "SCTP's shared controllers");
        for d in CONTROLLERS {
            let cc = build(
                &CcParams {
                    algorithm: CcAlgorithm::Builtin(d),
                    ..CcParams::default()
                },
                1200,
            );
            assert_eq!(
                d.sctp,
                !cc.wants_rate_samples(),
                "{}: SCTP feeds no rate samples",
                d.name
            );
            if !d.sctp {
                let err = crate::config::sctp::SctpCc::try_from(d.name.to_string()).unwrap_err();
                assert!(err.contains("delivery-rate samples"), "{err}");
            }
        }
    }

    #[test]
    fn build_and_serde_names() {
        assert_eq!(build(&CcParams::default(), 1200).name(), "cubic");
        let new_reno = CcParams {
            algorithm: CcAlgorithm::NewReno,
            ..CcParams::default()
        };
        let cc = build(&new_reno, 1200);
        assert_eq!(cc.name(), "newreno");
        assert_eq!(cc.window(), 12_000);
        assert_eq!(cc.ssthresh(), None);
        assert_eq!(CcAlgorithm::NewReno.name(), "newreno");
        #[derive(Deserialize, Serialize)]
        struct W {
            cc: CcAlgorithm,
        }
        let w: W = toml::from_str("cc = \"new_reno\"").unwrap();
        assert_eq!(w.cc, CcAlgorithm::NewReno);
        let w: W = toml::from_str("cc = \"newreno\"").unwrap();
        assert_eq!(w.cc, CcAlgorithm::NewReno);
        let w: W = toml::from_str("cc = \"cubic\"").unwrap();
        assert_eq!(w.cc, CcAlgorithm::Cubic);
        let cubic = CcParams {
            algorithm: CcAlgorithm::Cubic,
            ..CcParams::default()
        };
        let cc = build(&cubic, 1200);
        assert_eq!(cc.name(), "cubic");
        assert_eq!(cc.flavor(), Some("rfc9438"));
        assert_eq!(cc.window(), 12_000);
        assert!(cc.in_slow_start());
        // The Linux flavour is another controller with the same name.
        let linux = CcParams {
            cubic_flavor: CubicFlavor::Linux,
            ..cubic
        };
        let cc = build(&linux, 1200);
        assert_eq!((cc.name(), cc.flavor()), ("cubic", Some("linux")));
        assert_eq!(cc.window(), 12_000);
        assert_eq!(cc.loss_reduction_factor(), 717.0 / 1024.0);
        assert_eq!(build(&new_reno, 1200).flavor(), None);
    }
}

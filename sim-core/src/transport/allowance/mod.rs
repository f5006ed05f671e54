//! Receive-window allowances: when a receiver advertises more credit, and how much.
//!
//! A receiver (a QUIC stream or connection today; a TCP or SCTP receiver later) owns its
//! flow-control bookkeeping — the limit it advertised, the highest offset received, the
//! offset its application consumed — and asks its [`Allowance`] after every consumption
//! whether to advertise a new limit. The allowance decides; it never sends anything.
//!
//! One file per policy, registered in [`AllowanceKind`] and [`build`] (the four
//! allowances of paper 001, Lee & An 2022, "Enhanced flow control for low latency in
//! QUIC", §2-3; `docs/algorithms.md`):
//! - [`static_window`]: a fixed window refilled when less than half of it is left
//!   (`allowance = "static"`);
//! - [`improved_static`]: the same, one MSS earlier (`"improved_static"`, Volodina &
//!   Rathgeb 2020, paper 001's ref. 17);
//! - [`autotune`]: Google quiche's auto-tuning: at an update less than 2 RTT after the
//!   previous one, the window doubles up to an upper bound (`"autotune"`);
//! - [`fast_autotune`]: paper 001's Algorithm 1: the same trigger, a factor 2/4/8/16 chosen
//!   from the window's share of the upper bound (`"fast_autotune"`).
//!
//! Users' own policies plug in by name through [`registry`] (issue 16): a user crate
//! implements [`Allowance`] and an [`AllowanceFactory`], registers it with
//! `sim_core::Registry::register_allowance`, and writes `allowance = "my_policy"`.
//!
//! Every policy refills to `consumed + window` (paper 001 Algorithm 1 line 18: the maximum
//! offset grows by `window - available`), so the advertised limit never shrinks; the
//! growing ones never shrink the window either, and never take it past
//! [`AllowanceParams::max_window`].

use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

pub mod autotune;
pub mod fast_autotune;
pub mod improved_static;
pub mod registry;
pub mod static_window;

pub use autotune::AutotuneAllowance;
pub use fast_autotune::FastAutotuneAllowance;
pub use improved_static::ImprovedStaticAllowance;
pub use registry::{AllowanceFactory, AllowancePolicy, AllowanceRegistry, CustomAllowance};
pub use static_window::StaticAllowance;

/// Which allowance policy a receiver uses (the scenario's `allowance` and
/// `connection_allowance` keys). Serialised in snake_case (`"static"`,
/// `"improved_static"`, `"autotune"`, `"fast_autotune"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum AllowanceKind {
    /// Fixed window: when the unconsumed credit falls below half the window, advertise
    /// `consumed + window` (Google quiche / Cloudflare quiche threshold rule without
    /// auto-tuning, [`StaticAllowance`]). Default.
    #[default]
    Static,
    /// Fixed window, refilled one MSS earlier: when the credit falls below
    /// `window / 2 + mss` ([`ImprovedStaticAllowance`]).
    ImprovedStatic,
    /// Google quiche's auto-tuning: doubles the window at an update less than 2 smoothed
    /// RTTs after the previous one, up to the upper bound ([`AutotuneAllowance`]).
    Autotune,
    /// Paper 001's fast auto-tuning: the same trigger, factor 16/8/4/2 by the window's
    /// occupancy of the upper bound ([`FastAutotuneAllowance`]).
    FastAutotune,
}

impl AllowanceKind {
    /// The scenario names of every policy, computed from [`AllowanceKind::ALL`]: the schema's choices.
    pub const NAMES: [&'static str; AllowanceKind::ALL.len()] = {
        let mut out = [""; AllowanceKind::ALL.len()];
        let mut i = 0;
        while i < out.len() {
            out[i] = AllowanceKind::ALL[i].name();
            i += 1;
        }
        out
    };

    /// Every policy, in declaration order.
    pub const ALL: [AllowanceKind; 4] = [
        AllowanceKind::Static,
        AllowanceKind::ImprovedStatic,
        AllowanceKind::Autotune,
        AllowanceKind::FastAutotune,
    ];

    /// The scenario spelling.
    pub const fn name(self) -> &'static str {
        match self {
            AllowanceKind::Static => "static",
            AllowanceKind::ImprovedStatic => "improved_static",
            AllowanceKind::Autotune => "autotune",
            AllowanceKind::FastAutotune => "fast_autotune",
        }
    }

    /// Whether the policy grows its window, and so uses an upper bound
    /// ([`AllowanceParams::max_window`]).
    pub fn grows(self) -> bool {
        matches!(self, AllowanceKind::Autotune | AllowanceKind::FastAutotune)
    }

    /// Whether the policy uses the MSS ([`AllowanceParams::mss`]).
    pub fn uses_mss(self) -> bool {
        self == AllowanceKind::ImprovedStatic
    }
}

/// What an allowance is built from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllowanceParams {
    /// The initial window in bytes (the initial limit advertised to the peer).
    pub initial_window: u64,
    /// The largest window a growing policy may reach, in bytes (at least
    /// `initial_window`). Fixed-window policies ignore it.
    pub max_window: u64,
    /// The maximum segment size in bytes: the payload one full datagram carries.
    /// Only `improved_static` uses it.
    pub mss: u64,
}

impl AllowanceParams {
    /// A window of `window` bytes that may not grow (`max_window = initial_window`,
    /// `mss = 0`).
    pub fn fixed(window: u64) -> Self {
        AllowanceParams {
            initial_window: window,
            max_window: window,
            mss: 0,
        }
    }
}

/// What an allowance sees when asked for a window update. Offsets are absolute byte
/// offsets in the receiver's sequence space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllowanceInput {
    /// Current time.
    pub now: SimTime,
    /// The smoothed RTT of the receiver's path (the initial RTT before any sample).
    pub srtt: SimDuration,
    /// When the advertised limit last grew; `None` while the initial limit stands.
    pub last_update: Option<SimTime>,
    /// Bytes read by the application (the consumed offset).
    pub consumed: u64,
    /// Highest offset received (the peer's flow-control usage).
    pub received: u64,
    /// The limit currently advertised to the peer.
    pub limit: u64,
}

impl AllowanceInput {
    /// Credit not yet consumed: `limit - consumed` (paper 001's `W_avail`).
    pub fn available(&self) -> u64 {
        self.limit.saturating_sub(self.consumed)
    }
}

/// A receive-window update policy. One instance per flow-controlled receiver (a stream,
/// or a connection aggregating streams).
///
/// Implementations must be deterministic — the rules for a user's allowance
/// ([`registry`]): time is the `input.now` handed in (integer nanoseconds), never a
/// clock; integer arithmetic or `libm`; no threads, no `HashMap` / `HashSet` iteration; no
/// randomness (none is handed in: an allowance is a function of its inputs and state).
/// The receiver advertises what [`Allowance::update`] returns; `quicsim`'s invariant
/// checkers (`sim_core::testing`, feature `testing`) check that no sender exceeds an
/// advertised limit, and a run's status shows a policy that starves its sender (`stalled`
/// or the time limit).
pub trait Allowance: std::fmt::Debug {
    /// The current window size in bytes (what `limit - consumed` is refilled to).
    fn window(&self) -> u64;

    /// Called after data was consumed or received. Returns the new absolute limit to
    /// advertise, strictly greater than `input.limit`, or `None` to wait.
    fn update(&mut self, input: &AllowanceInput) -> Option<u64>;

    /// Called on a connection-level allowance with a stream's current window after that
    /// stream's allowance was asked for an update, so a connection window can follow its
    /// streams. The growing policies keep their window at least
    /// [`SESSION_WINDOW_MULTIPLIER`] times the stream window, up to their bound; the
    /// fixed-window ones ignore it (default).
    fn on_stream_window(&mut self, _stream_window: u64) {}

    /// How many times the window grew (0 for the fixed-window policies).
    fn increases(&self) -> u64 {
        0
    }

    /// A short stable name for results (the [`AllowanceKind`] spelling; a user's
    /// allowance: its own).
    fn name(&self) -> &'static str;
}

/// How much larger a connection window is kept than any stream window by the growing
/// policies, as a fraction `3/2`: Google quiche's `kSessionFlowControlMultiplier = 1.5`
/// (`quic_flow_controller.h`) and Cloudflare quiche's `CONNECTION_WINDOW_FACTOR = 1.5`.
pub const SESSION_WINDOW_MULTIPLIER: (u64, u64) = (3, 2);

/// The trigger shared by the fixed and growing Google-style policies: the credit left
/// (`limit - consumed`) fell strictly below half the window (Google quiche
/// `QuicFlowController::MaybeSendWindowUpdate`, paper 001 Algorithm 1 line 3).
pub(crate) fn below_half_window(input: &AllowanceInput, window: u64) -> bool {
    input.available() < window / 2
}

/// The growing policies' timing rule (Google quiche `MaybeIncreaseMaxWindowSize`, paper
/// 001 Algorithm 1 line 4): an update grows the window when less than 2 smoothed RTTs
/// passed since the previous update. Before the first update the first consumption
/// counts as one (quiche: "treat the initial window as if it is a window update");
/// `first_seen` remembers it. A zero RTT never grows (quiche: no RTT yet).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct UpdateClock {
    first_seen: Option<SimTime>,
}

impl UpdateClock {
    /// Records a call (the first one starts the clock).
    pub(crate) fn observe(&mut self, now: SimTime) {
        self.first_seen.get_or_insert(now);
    }

    /// Whether an update at `input.now` comes less than 2 smoothed RTTs after the
    /// previous one. Call after [`UpdateClock::observe`].
    pub(crate) fn within_two_rtt(&self, input: &AllowanceInput) -> bool {
        let Some(prev) = input.last_update.or(self.first_seen) else {
            return false;
        };
        input.srtt.as_nanos() > 0 && input.now.saturating_since(prev) < input.srtt.saturating_mul(2)
    }
}

/// `max(window, 1.5 x stream_window)` capped at `max_window`, never below `window`.
pub(crate) fn follow_stream(window: u64, stream_window: u64, max_window: u64) -> u64 {
    let (num, den) = SESSION_WINDOW_MULTIPLIER;
    let target = (stream_window as u128 * num as u128 / den as u128).min(max_window as u128) as u64;
    window.max(target)
}

/// Builds the allowance of `kind` from `params`.
pub fn build(kind: AllowanceKind, params: AllowanceParams) -> Box<dyn Allowance> {
    match kind {
        AllowanceKind::Static => Box::new(StaticAllowance::new(params.initial_window)),
        AllowanceKind::ImprovedStatic => Box::new(ImprovedStaticAllowance::new(
            params.initial_window,
            params.mss,
        )),
        AllowanceKind::Autotune => Box::new(AutotuneAllowance::new(
            params.initial_window,
            params.max_window,
        )),
        AllowanceKind::FastAutotune => Box::new(FastAutotuneAllowance::new(
            params.initial_window,
            params.max_window,
        )),
    }
}

#[cfg(test)]
mod paper001;
#[cfg(test)]
mod proptests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_serde_and_build() {
        #[derive(Deserialize, Serialize)]
        struct W {
            allowance: AllowanceKind,
        }
        let w: W = toml::from_str("allowance = \"static\"").unwrap();
        assert_eq!(w.allowance, AllowanceKind::Static);
        assert_eq!(
            toml::to_string(&w).unwrap().trim(),
            "allowance = \"static\""
        );
        assert!(toml::from_str::<W>("allowance = \"autotune_x\"").is_err());
        for kind in AllowanceKind::ALL {
            let text = format!("allowance = \"{}\"", kind.name());
            let w: W = toml::from_str(&text).unwrap();
            assert_eq!(w.allowance, kind);
            assert_eq!(toml::to_string(&w).unwrap().trim(), text);
            let a = build(
                kind,
                AllowanceParams {
                    initial_window: 1000,
                    max_window: 4000,
                    mss: 100,
                },
            );
            assert_eq!(a.name(), kind.name());
            assert_eq!(a.window(), 1000);
        }
    }

    #[test]
    fn scenario_choices_are_the_policies() {
        let names: Vec<&str> = AllowanceKind::ALL.iter().map(|k| k.name()).collect();
        for key in ["allowance", "connection_allowance"] {
            assert_eq!(crate::validate::schema::QUIC.field(key).choices, names);
        }
    }

    #[test]
    fn follow_stream_is_one_and_a_half_capped_and_never_shrinks() {
        assert_eq!(follow_stream(1000, 2000, 10_000), 3000);
        assert_eq!(follow_stream(1000, 2000, 2500), 2500);
        assert_eq!(follow_stream(5000, 2000, 10_000), 5000);
    }

    #[test]
    fn clock_counts_the_first_consumption_as_an_update() {
        let ms = |m: u64| SimTime(m * 1_000_000);
        let inp = |now, last| AllowanceInput {
            now,
            srtt: SimDuration::from_millis(10),
            last_update: last,
            consumed: 0,
            received: 0,
            limit: 0,
        };
        let mut c = UpdateClock::default();
        assert!(!c.within_two_rtt(&inp(ms(5), None)), "nothing seen yet");
        c.observe(ms(5));
        c.observe(ms(7)); // later calls do not move the start
        assert!(c.within_two_rtt(&inp(ms(24), None)));
        assert!(
            !c.within_two_rtt(&inp(ms(25), None)),
            "strictly under 2 RTT"
        );
        assert!(c.within_two_rtt(&inp(ms(44), Some(ms(25)))));
        assert!(!c.within_two_rtt(&inp(ms(45), Some(ms(25)))));
    }
}

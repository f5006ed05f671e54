//! Congestion-window policies for a connection that moved to a new network path
//! (connection migration, RFC 9000 §9; paper 004, Kim & Koh, "Adaptive control of
//! congestion window in QUIC").
//!
//! The transport owns the mechanism — it detects the path change, validates the new path
//! (RFC 9000 §8.2) and measures the PATH_CHALLENGE → PATH_RESPONSE delay — and asks its
//! [`WindowPolicy`] once, when the new path is validated, what congestion state to use
//! there. The policy decides; it never sends anything.
//!
//! One file per policy, registered in [`MigrationPolicyKind`] and [`build`]:
//! - [`reset`]: the initial window and a fresh RTT estimator (RFC 9000 §9.4, the rule);
//! - [`keep`]: the congestion controller and RTT estimator carry over unchanged (RFC 9000
//!   §9.4 allows it when only the peer's port changed, NAT rebinding);
//! - [`rtt_ratio`]: paper 004's `max((RTT_old − RTT_new) / RTT_old × cwnd_old, cwnd_init)`.

use crate::time::SimDuration;
use serde::{Deserialize, Serialize};

pub mod keep;
pub mod reset;
pub mod rtt_ratio;

pub use keep::Keep;
pub use reset::Reset;
pub use rtt_ratio::RttRatio;

/// Which window policy a migrated connection uses on its new path (the scenario's
/// `migration.policy`). Serialised in snake_case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum MigrationPolicyKind {
    /// Initial window and RTT estimator (RFC 9000 §9.4, [`Reset`]). Default.
    #[default]
    Reset,
    /// Congestion and RTT state kept (port-only changes, RFC 9000 §9.4, [`Keep`]).
    Keep,
    /// Paper 004's RTT-ratio window ([`RttRatio`]).
    RttRatio,
}

impl MigrationPolicyKind {
    /// Every policy, the table of this extension point: [`MigrationPolicyKind::NAMES`] and the schema's
    /// choices derive from it.
    pub const ALL: [MigrationPolicyKind; 3] = [
        MigrationPolicyKind::Reset,
        MigrationPolicyKind::Keep,
        MigrationPolicyKind::RttRatio,
    ];

    /// The scenario names of every policy, computed from [`MigrationPolicyKind::ALL`]: the schema's choices.
    pub const NAMES: [&'static str; MigrationPolicyKind::ALL.len()] = {
        let mut out = [""; MigrationPolicyKind::ALL.len()];
        let mut i = 0;
        while i < out.len() {
            out[i] = MigrationPolicyKind::ALL[i].name();
            i += 1;
        }
        out
    };

    /// The name used in scenarios.
    pub const fn name(self) -> &'static str {
        match self {
            MigrationPolicyKind::Reset => "reset",
            MigrationPolicyKind::Keep => "keep",
            MigrationPolicyKind::RttRatio => "rtt_ratio",
        }
    }
}

/// Paper 004 measures "the handover throughput from the start of the handover until
/// 100 ms afterward" (Section III.C).
pub const DEFAULT_THROUGHPUT_WINDOW: SimDuration = SimDuration::from_millis(100);

/// The scenario's `migration = { policy, throughput_window }`: a live connection follows
/// its client to a new address (RFC 9000 §9) and uses `policy` on the new path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MigrationConfig {
    /// The window policy on the new path.
    pub policy: MigrationPolicyKind,
    /// The interval after the switch over which the handover throughput is measured
    /// (paper 004: 100 ms).
    pub throughput_window: SimDuration,
}

impl Default for MigrationConfig {
    fn default() -> Self {
        MigrationConfig {
            policy: MigrationPolicyKind::Reset,
            throughput_window: DEFAULT_THROUGHPUT_WINDOW,
        }
    }
}

/// What a policy sees when the new path is validated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowInput {
    /// The congestion window on the old path just before the switch, in bytes.
    pub cwnd_old: u64,
    /// The minimum RTT observed on the old path (`None`: no sample was taken there).
    pub min_rtt_old: Option<SimDuration>,
    /// The new path's round trip: the delay from sending PATH_CHALLENGE to receiving the
    /// matching PATH_RESPONSE (RFC 9002 §6.2.2 lets it seed the new path's initial RTT).
    pub rtt_new: SimDuration,
    /// The controller's initial window in bytes.
    pub initial_window: u64,
    /// Only the peer's port changed (NAT rebinding), not its IP address.
    pub port_only: bool,
}

/// What the transport does with its congestion state on the new path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowDecision {
    /// Keep the controller and the RTT estimator as they are.
    Keep,
    /// A fresh controller whose initial window is `window` bytes (slow start), and an RTT
    /// estimator whose initial RTT is the validation round trip (no sample yet).
    Restart {
        /// The new path's initial congestion window in bytes.
        window: u64,
    },
}

/// A window policy for the new path of a migrated connection.
pub trait WindowPolicy: std::fmt::Debug {
    /// The decision once the new path is validated.
    fn on_validated(&self, input: &WindowInput) -> WindowDecision;
}

/// The policy `kind`.
pub fn build(kind: MigrationPolicyKind) -> Box<dyn WindowPolicy> {
    match kind {
        MigrationPolicyKind::Reset => Box::new(Reset),
        MigrationPolicyKind::Keep => Box::new(Keep),
        MigrationPolicyKind::RttRatio => Box::new(RttRatio),
    }
}

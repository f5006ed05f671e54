//! Receive-window allowances: when a receiver advertises more credit, and how much.
//!
//! A receiver (a QUIC stream or connection today; a TCP or SCTP receiver later) owns its
//! flow-control bookkeeping — the limit it advertised, the highest offset received, the
//! offset its application consumed — and asks its [`Allowance`] after every consumption
//! whether to advertise a new limit. The allowance decides; it never sends anything.
//!
//! One file per policy, registered in [`AllowanceKind`] and [`build`]:
//! - [`static_window`]: a fixed window refilled at half-window (`allowance = "static"`).
//!
//! The receive-window strategies of paper 001 (improved static, auto-tuning, fast
//! auto-tuning) fit the same trait: [`AllowanceInput`] carries the time, the smoothed RTT,
//! the time the limit last grew, the consumed and received offsets and the current limit,
//! and [`AllowanceParams`] the initial window and the upper bound a growing window may
//! reach.

use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

pub mod static_window;

pub use static_window::StaticAllowance;

/// Which allowance policy a receiver uses (the scenario's `allowance` key). Serialised in
/// snake_case (`"static"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum AllowanceKind {
    /// Fixed window: when the unconsumed credit falls below half the window, advertise
    /// `consumed + window` (Google quiche / Cloudflare quiche threshold rule without
    /// auto-tuning, [`StaticAllowance`]). Default.
    #[default]
    Static,
}

/// What an allowance is built from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllowanceParams {
    /// The initial window in bytes (the initial limit advertised to the peer).
    pub initial_window: u64,
    /// The largest window a growing policy may reach, in bytes (at least
    /// `initial_window`). Fixed-window policies ignore it.
    pub max_window: u64,
}

impl AllowanceParams {
    /// A window of `window` bytes that may not grow (`max_window = initial_window`).
    pub fn fixed(window: u64) -> Self {
        AllowanceParams {
            initial_window: window,
            max_window: window,
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

/// A receive-window update policy. One instance per flow-controlled receiver (a stream,
/// or a connection aggregating streams).
pub trait Allowance: std::fmt::Debug {
    /// The current window size in bytes (what `limit - consumed` is refilled to).
    fn window(&self) -> u64;

    /// Called after data was consumed or received. Returns the new absolute limit to
    /// advertise, strictly greater than `input.limit`, or `None` to wait.
    fn update(&mut self, input: &AllowanceInput) -> Option<u64>;

    /// Called on a connection-level allowance with a stream's current window after that
    /// stream's allowance was asked for an update, so a connection window can follow its
    /// streams (Google quiche keeps the session window at least 1.5 times the stream
    /// window). Default: ignore.
    fn on_stream_window(&mut self, _stream_window: u64) {}

    /// A short stable name for results (the [`AllowanceKind`] spelling).
    fn name(&self) -> &'static str;
}

/// Builds the allowance of `kind` from `params`.
pub fn build(kind: AllowanceKind, params: AllowanceParams) -> Box<dyn Allowance> {
    match kind {
        AllowanceKind::Static => Box::new(StaticAllowance::new(params.initial_window)),
    }
}

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
        let a = build(AllowanceKind::Static, AllowanceParams::fixed(1000));
        assert_eq!(a.name(), "static");
        assert_eq!(a.window(), 1000);
    }
}

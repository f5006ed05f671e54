//! # sim-core — the quicsim engine
//!
//! A deterministic, packet-level discrete-event simulator of QUIC (with TCP and SCTP
//! baselines to come) over impaired links. No I/O, no clock, no threads: the same
//! configuration and seed give the same bytes on every target, native or wasm.
//!
//! The one entry point is [`run`]:
//!
//! ```
//! let cfg = sim_core::scenario::parse_str(r#"
//!     [topology]
//!     kind = "two_hosts"
//!     link = { rate = "10Mbps", delay = "10ms" }
//!     [[flows]]
//!     kind = "cbr"
//!     rate = "1Mbps"
//!     size = "1000B"
//!     duration = "1s"
//! "#).unwrap();
//! let result = sim_core::run(&cfg.base, 42).unwrap();
//! assert_eq!(result.status, sim_core::metrics::RunStatus::Completed);
//! ```
//!
//! The same run can be advanced in steps with [`Simulation`] ([`sim`]): progress, pause and
//! cancel, with the same result as [`run`]. [`study`] turns a scenario into its jobs (sweep
//! point x run) with their seeds, stable ids and result order, and builds the results
//! document the CLI prints.
//!
//! Layers, bottom up (`docs/architecture.md`; checked by `tests/tests/layers.rs`):
//! [`time`] / [`units`] / [`hash`], [`rng`] / [`engine`] (scheduler), [`wire`] (packet
//! descriptors per protocol) / [`cc`], [`packet`] / [`config`], [`metrics`] /
//! [`validate`], [`trace`], [`endpoint`] (the sans-IO driver interface) / [`driver`] (a
//! stream transport's engine-facing half) / [`qlog`] /
//! [`link`], [`network`] (topologies and routing) / [`apps`] (traffic without a
//! transport), [`transport`] (the toolkit transports share), [`quic`],
//! [`workloads`] (bulk, connection sequences: written once against the stream-transport
//! interface), [`flows`] (flow config → endpoints: transport × workload), [`runner`] (the event loop), [`scenario`] (the
//! TOML format), [`sim`] and [`study`]. No layer below the transports names a protocol module.
//!
//! Users' own congestion controllers and receive-window allowances plug in through a
//! [`Registry`] ([`registry`], [`cc::registry`], [`transport::allowance::registry`],
//! [`scenario::parse_str_with`]); the feature `testing` adds `sim_core::testing`, the
//! property-testing kit (strategies, invariants, oracles, replay;
//! `docs/property-testing.md`).
#![warn(missing_docs)]

/// Test helper for enums with frozen codes: `pinned_codes!(Enum as u8; Variant => code, ...)`
/// gives an exhaustive match from each variant to the code it must keep (a new variant
/// fails to compile at the call until it is pinned) and the list of every variant, built
/// from the same arms.
#[cfg(test)]
macro_rules! pinned_codes {
    ($ty:ident as $code_ty:ty; $($v:ident => $code:expr),* $(,)?) => {{
        fn pinned(x: $ty) -> $code_ty {
            match x {
                $($ty::$v => $code,)*
            }
        }
        (pinned, [$($ty::$v),*])
    }};
}

pub mod apps;
pub mod breakdown;
pub mod cc;
pub mod config;
pub mod driver;
pub mod endpoint;
pub mod engine;
pub mod flows;
pub mod hash;
pub mod keys;
pub mod link;
pub mod metrics;
pub mod network;
pub mod packet;
pub mod qlog;
pub mod quic;
pub mod registry;
pub mod rng;
pub mod runner;
pub mod scenario;
pub mod sctp;
pub mod sim;
pub mod stats;
pub mod study;
pub mod tcp;
#[cfg(feature = "testing")]
pub mod testing;
pub mod time;
pub mod trace;
pub mod transport;
pub mod units;
pub mod validate;
pub mod wire;
pub mod workloads;

pub use config::Config;
pub use metrics::{RunResult, RunStatus};
pub use registry::Registry;
pub use runner::run;
pub use sim::Simulation;
pub use time::{SimDuration, SimTime};

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
//! Layers, bottom up: [`time`], [`engine`] (scheduler), [`rng`], [`wire`] (packet
//! descriptors per protocol), [`link`], [`network`]
//! (topologies and routing), [`endpoint`] (the sans-IO driver interface), [`apps`]
//! (traffic), [`cc`] and [`transport`] (the toolkit transports share), [`quic`], [`metrics`], [`config`] / [`scenario`] (the TOML format).
#![warn(missing_docs)]

pub mod apps;
pub mod cc;
pub mod config;
pub mod endpoint;
pub mod engine;
pub mod flows;
pub mod hash;
pub mod link;
pub mod metrics;
pub mod network;
pub mod packet;
pub mod qlog;
pub mod quic;
pub mod rng;
pub mod runner;
pub mod scenario;
pub mod time;
pub mod trace;
pub mod transport;
pub mod units;
pub mod validate;
pub mod wire;

pub use config::Config;
pub use metrics::{RunResult, RunStatus};
pub use runner::run;
pub use time::{SimDuration, SimTime};

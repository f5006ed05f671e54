//! The controller registry: users' congestion controllers under a name, beside the
//! built-in ones (issue 16).
//!
//! A user crate implements [`CongestionController`] and a [`ControllerFactory`] that builds
//! it, registers the factory in a [`Registry`] under a name, and writes `cc = "my_aimd"` in
//! a scenario parsed with [`crate::scenario::parse_str_with`] (or resolves a `Config` built
//! in code with [`crate::Config::resolve_controllers`]). The registry is a value passed with
//! the scenario text or the config, never global state: two runs with different
//! registries in one process cannot see each other's names, and the order in which runs
//! happen changes nothing.
//!
//! The resolved config carries the factory itself ([`CustomCc`]), so the engine needs no
//! registry: [`super::build`] asks the factory for a controller whenever a connection (or a
//! migrated path) needs one. [`Registry::builtin`] holds `new_reno` and `cubic`, which
//! resolve to [`CcAlgorithm::NewReno`] and [`CcAlgorithm::Cubic`]; `quicsim` (the CLI)
//! uses only those. A user's own binary can parse and run scenarios with its own registry
//! (`docs/property-testing.md` shows a ten-line runner).
//!
//! Transports: QUIC and TCP build their controller from [`CcParams`] and accept a
//! registered name. SCTP's default congestion control (RFC 9260 §7.2) is per-SACK and
//! owned by the association ([`super::sctp`]); its `cc` key takes `rfc9260` or a built-in
//! shared controller only.
//!
//! # Determinism rules for a user's controller
//!
//! The same scenario and seed must give the same bytes on every target (native, wasm):
//! - time is the [`SimTime`](crate::SimTime) handed to every method (integer nanoseconds);
//!   never read a clock;
//! - transcendental functions through `libm` (`libm::cbrt`, `libm::pow`), never `f64`'s
//!   methods that call the platform's libm;
//! - no threads, no `HashMap` / `HashSet` iteration (use `BTreeMap` / `Vec`), no
//!   addresses of allocations in decisions;
//! - randomness only from a [`crate::rng::RngStream`] derived with
//!   `RngStream::derive(seed, "cc/<your name>")` from a seed the factory holds (the run's
//!   seed is not handed to controllers).
//!
//! # Example
//!
//! ```
//! use sim_core::cc::{self, CcContext, ControllerFactory, CongestionController, Registry};
//! use std::sync::Arc;
//!
//! /// A factory that builds the built-in NewReno under another name.
//! #[derive(Debug)]
//! struct Renamed;
//! impl ControllerFactory for Renamed {
//!     fn build(&self, ctx: &CcContext) -> Box<dyn CongestionController> {
//!         Box::new(cc::NewReno::new(ctx.segment_size, ctx.initial_window))
//!     }
//! }
//!
//! let mut registry = Registry::builtin();
//! registry.register("my_reno", Arc::new(Renamed)).unwrap();
//! assert_eq!(registry.names(), vec!["new_reno", "cubic", "my_reno"]);
//! let scenario = sim_core::scenario::parse_str_with(r#"
//!     [topology]
//!     kind = "two_hosts"
//!     link = { rate = "10Mbps", delay = "10ms" }
//!     [[flows]]
//!     transport = "quic"
//!     cc = "my_reno"
//!     workload = { kind = "bulk", bytes = "50kB" }
//! "#, &registry).unwrap();
//! let result = sim_core::run(&scenario.base, 1).unwrap();
//! assert_eq!(result.status, sim_core::RunStatus::Completed);
//! // Without the registry the name is unknown, and the error lists the known names.
//! let text = sim_core::scenario::to_toml(&scenario.base).unwrap();
//! let err = sim_core::scenario::parse_str(&text).unwrap_err();
//! assert!(err.to_string().contains("\"new_reno\", \"cubic\""), "{err}");
//! ```

use super::{CcAlgorithm, CcParams, CongestionController};
use std::sync::Arc;

/// What a [`ControllerFactory`] gets to build one controller: the sender's
/// [`CcParams`] (every `cc*`, `pacing*`, `initial_cwnd_*` key of the flow) and the sizes
/// derived from them.
#[derive(Clone, Copy, Debug)]
pub struct CcContext<'a> {
    /// The sender's congestion-control parameters.
    pub params: &'a CcParams,
    /// The transport's largest datagram (QUIC: `max_udp_payload`; TCP: the effective MSS).
    pub max_datagram_size: u64,
    /// The segment size the window counts in ([`CcParams::segment_size`]).
    pub segment_size: u64,
    /// The initial window in bytes ([`CcParams::initial_window`]).
    pub initial_window: u64,
    /// The minimum window of RFC 9002 §7.2, `2 · segment_size` bytes (a controller may
    /// choose another, reported by [`CongestionController::minimum_window`]).
    pub minimum_window: u64,
}

/// Builds a user's controller. Implementations are shared between runs (`Send + Sync`)
/// and must build the same controller from the same context every time (see the module's
/// determinism rules).
pub trait ControllerFactory: std::fmt::Debug + Send + Sync {
    /// A fresh controller for one connection (or one new path after a migration).
    fn build(&self, ctx: &CcContext) -> Box<dyn CongestionController>;
}

/// A controller known by name only until a [`Registry`] resolves it: the `cc` value of a
/// scenario that is not a built-in name. Compared, ordered and serialised by its name.
#[derive(Clone)]
pub struct CustomCc {
    name: String,
    factory: Option<Arc<dyn ControllerFactory>>,
}

impl CustomCc {
    /// An unresolved name (what deserialising `cc = "name"` gives).
    pub fn unresolved(name: impl Into<String>) -> Self {
        CustomCc {
            name: name.into(),
            factory: None,
        }
    }

    /// A name with its factory (what [`Registry::algorithm`] gives).
    pub fn resolved(name: impl Into<String>, factory: Arc<dyn ControllerFactory>) -> Self {
        CustomCc {
            name: name.into(),
            factory: Some(factory),
        }
    }

    /// The scenario name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The factory, `None` until resolved.
    pub fn factory(&self) -> Option<&Arc<dyn ControllerFactory>> {
        self.factory.as_ref()
    }
}

impl std::fmt::Debug for CustomCc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CustomCc")
            .field("name", &self.name)
            .field("resolved", &self.factory.is_some())
            .finish()
    }
}

impl PartialEq for CustomCc {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}
impl Eq for CustomCc {}
impl PartialOrd for CustomCc {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for CustomCc {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.name.cmp(&other.name)
    }
}
impl std::hash::Hash for CustomCc {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state)
    }
}

/// One registered name.
#[derive(Clone, Debug)]
enum Entry {
    Builtin(CcAlgorithm),
    User(Arc<dyn ControllerFactory>),
}

/// Names → controllers, in registration order (a `Vec`: no hash-order iteration).
#[derive(Clone, Debug)]
pub struct Registry {
    entries: Vec<(String, Entry)>,
}

/// Why [`Registry::register`] refused a name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegisterError {
    /// The name is taken (built-in names included).
    Duplicate(String),
    /// The name is not a lowercase identifier `[a-z][a-z0-9_]*` of at most 64 characters.
    BadName(String),
}

impl std::fmt::Display for RegisterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RegisterError::Duplicate(n) => write!(f, "controller name {n:?} is already registered"),
            RegisterError::BadName(n) => write!(
                f,
                "controller name {n:?}: expected a lowercase identifier [a-z][a-z0-9_]* of at most 64 characters"
            ),
        }
    }
}

impl std::error::Error for RegisterError {}

/// Whether `name` is a valid controller name: `[a-z][a-z0-9_]*`, 1 to 64 characters.
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some('a'..='z'))
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

impl Registry {
    /// The built-in controllers: `new_reno` (RFC 9002 App. B, alias `newreno`) and
    /// `cubic` (RFC 9438). What the CLI and the browser use.
    pub fn builtin() -> Self {
        Registry {
            entries: vec![
                (
                    super::newreno::SCENARIO_NAME.to_string(),
                    Entry::Builtin(CcAlgorithm::NewReno),
                ),
                (
                    super::cubic::NAME.to_string(),
                    Entry::Builtin(CcAlgorithm::Cubic),
                ),
            ],
        }
    }

    /// Registers `factory` under `name`.
    pub fn register(
        &mut self,
        name: &str,
        factory: Arc<dyn ControllerFactory>,
    ) -> Result<&mut Self, RegisterError> {
        if !valid_name(name) {
            return Err(RegisterError::BadName(name.to_string()));
        }
        if self.algorithm(name).is_some() {
            return Err(RegisterError::Duplicate(name.to_string()));
        }
        self.entries.push((name.to_string(), Entry::User(factory)));
        Ok(self)
    }

    /// The registered names, in registration order (built-ins first).
    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// What a scenario's validation error shows as allowed: `one of "new_reno", "cubic"`.
    pub fn allowed(&self) -> String {
        let list: Vec<String> = self.names().iter().map(|n| format!("\"{n}\"")).collect();
        format!("one of {}", list.join(", "))
    }

    /// The algorithm `name` stands for (`newreno` is an alias of `new_reno`), `None` if
    /// the name is not registered.
    pub fn algorithm(&self, name: &str) -> Option<CcAlgorithm> {
        let name = if name == super::newreno::NAME {
            super::newreno::SCENARIO_NAME
        } else {
            name
        };
        self.entries
            .iter()
            .find(|(n, _)| n == name)
            .map(|(n, e)| match e {
                Entry::Builtin(a) => a.clone(),
                Entry::User(f) => CcAlgorithm::Custom(CustomCc::resolved(n.clone(), f.clone())),
            })
    }

    /// Resolves `algorithm` in place: a custom name gets its factory. Built-in variants
    /// are left alone. `Err` with the allowed names if the name is not registered.
    pub fn resolve(&self, algorithm: &mut CcAlgorithm) -> Result<(), String> {
        if let CcAlgorithm::Custom(c) = algorithm {
            match self.algorithm(c.name()) {
                Some(a) => *algorithm = a,
                None => return Err(self.allowed()),
            }
        }
        Ok(())
    }
}

impl Default for Registry {
    fn default() -> Self {
        Registry::builtin()
    }
}

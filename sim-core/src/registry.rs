//! The registry users' algorithms plug in through (issue 16): names → congestion
//! controllers and names → receive-window allowances, beside the built-in ones.
//!
//! Each half lives in its algorithm's own layer — [`crate::cc::ControllerRegistry`]
//! (`cc = "..."`, [`crate::cc::registry`]) and
//! [`crate::transport::allowance::AllowanceRegistry`] (`allowance = "..."`,
//! `connection_allowance = "..."`, [`crate::transport::allowance::registry`]) — and this
//! module, above both, holds the two so that a user passes one value wherever names are
//! resolved: [`crate::scenario::parse_str_with`], [`crate::Config::resolve_controllers`],
//! `sim_core::testing::hunt`. The two namespaces are separate (a controller and an
//! allowance may share a name). A registry is a value, never global state: two runs with
//! different registries in one process cannot see each other's names.
//!
//! The determinism rules users' code follows are written on the traits:
//! [`crate::cc::registry`] (controllers) and [`crate::transport::allowance::Allowance`]
//! (allowances).
//!
//! # Example
//!
//! ```
//! use sim_core::transport::allowance::{
//!     Allowance, AllowanceFactory, AllowanceParams, StaticAllowance,
//! };
//! use sim_core::Registry;
//! use std::sync::Arc;
//!
//! /// The built-in static policy under another name.
//! #[derive(Debug)]
//! struct Renamed;
//! impl AllowanceFactory for Renamed {
//!     fn build(&self, params: &AllowanceParams) -> Box<dyn Allowance> {
//!         Box::new(StaticAllowance::new(params.initial_window))
//!     }
//! }
//!
//! let mut registry = Registry::builtin();
//! registry.register_allowance("my_static", Arc::new(Renamed)).unwrap();
//! // After the built-ins (`AllowanceKind::NAMES`: "static", "improved_static", ...).
//! assert_eq!(registry.allowances().names().last(), Some(&"my_static"));
//! let scenario = sim_core::scenario::parse_str_with(r#"
//!     [topology]
//!     kind = "two_hosts"
//!     link = { rate = "10Mbps", delay = "10ms" }
//!     [[flows]]
//!     transport = "quic"
//!     allowance = "my_static"
//!     stream_window = "20kB"
//!     workload = { kind = "bulk", bytes = "50kB" }
//! "#, &registry).unwrap();
//! let result = sim_core::run(&scenario.base, 1).unwrap();
//! assert_eq!(result.status, sim_core::RunStatus::Completed);
//! // Without the registry the name is unknown, and the error lists the known names.
//! let text = sim_core::scenario::to_toml(&scenario.base).unwrap();
//! let err = sim_core::scenario::parse_str(&text).unwrap_err();
//! assert_eq!(err.field, "flows[0].allowance");
//! assert!(err.to_string().contains("\"static\", \"improved_static\""), "{err}");
//! ```

use crate::cc::registry::RegisterError;
use crate::cc::{CcAlgorithm, ControllerFactory, ControllerRegistry};
use crate::transport::allowance::{AllowanceFactory, AllowanceRegistry};
use std::sync::Arc;

/// Names → controllers and names → allowances, built-ins first, in registration order.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    controllers: ControllerRegistry,
    allowances: AllowanceRegistry,
}

impl Registry {
    /// The built-in names only: controllers `new_reno` (alias `newreno`), `cubic`;
    /// allowances `static`, `improved_static`, `autotune`, `fast_autotune`. What the CLI
    /// and the browser use.
    pub fn builtin() -> Self {
        Registry {
            controllers: ControllerRegistry::builtin(),
            allowances: AllowanceRegistry::builtin(),
        }
    }

    /// Registers a user's congestion controller `factory` under `name` (the `cc` key of
    /// QUIC and TCP flows).
    pub fn register(
        &mut self,
        name: &str,
        factory: Arc<dyn ControllerFactory>,
    ) -> Result<&mut Self, RegisterError> {
        self.controllers.register(name, factory)?;
        Ok(self)
    }

    /// Registers a user's receive-window allowance `factory` under `name` (QUIC's
    /// `allowance` / `connection_allowance` keys).
    pub fn register_allowance(
        &mut self,
        name: &str,
        factory: Arc<dyn AllowanceFactory>,
    ) -> Result<&mut Self, RegisterError> {
        self.allowances.register(name, factory)?;
        Ok(self)
    }

    /// The controllers: built-in and registered.
    pub fn controllers(&self) -> &ControllerRegistry {
        &self.controllers
    }

    /// The allowances: built-in and registered.
    pub fn allowances(&self) -> &AllowanceRegistry {
        &self.allowances
    }

    /// The controller names, in registration order (built-ins first).
    pub fn names(&self) -> Vec<&str> {
        self.controllers.names()
    }

    /// What a `cc` validation error shows as allowed: `one of "new_reno", "cubic"`.
    pub fn allowed(&self) -> String {
        self.controllers.allowed()
    }

    /// The controller `name` stands for, `None` if it is not registered.
    pub fn algorithm(&self, name: &str) -> Option<CcAlgorithm> {
        self.controllers.algorithm(name)
    }

    /// Resolves a controller name in place ([`ControllerRegistry::resolve`]).
    pub fn resolve(&self, algorithm: &mut CcAlgorithm) -> Result<(), String> {
        self.controllers.resolve(algorithm)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::allowance::{Allowance, AllowanceParams, StaticAllowance};

    #[derive(Debug)]
    struct Plain;
    impl AllowanceFactory for Plain {
        fn build(&self, params: &AllowanceParams) -> Box<dyn Allowance> {
            Box::new(StaticAllowance::new(params.initial_window))
        }
    }

    #[test]
    fn names_are_checked_and_namespaces_separate() {
        let mut r = Registry::builtin();
        assert_eq!(
            r.register_allowance("static", Arc::new(Plain)).unwrap_err(),
            RegisterError::Duplicate("static".into())
        );
        assert_eq!(
            r.register_allowance("Bad-Name", Arc::new(Plain))
                .unwrap_err(),
            RegisterError::BadName("Bad-Name".into())
        );
        // A controller name is free as an allowance name.
        r.register_allowance("cubic", Arc::new(Plain)).unwrap();
        assert_eq!(r.names(), crate::cc::CONTROLLER_NAMES);
        assert_eq!(r.allowances().names().last(), Some(&"cubic"));
        let p = r.allowances().policy("cubic").expect("registered");
        assert!(!p.is_unresolved());
        assert_eq!(p.build(AllowanceParams::fixed(1000)).window(), 1000);
    }
}

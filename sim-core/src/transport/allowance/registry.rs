//! Users' receive-window allowances under a name, beside the built-in ones (issue 16).
//!
//! A user crate implements [`Allowance`] and an [`AllowanceFactory`] that builds it,
//! registers the factory under a name (`sim_core::Registry::register_allowance`, which
//! keeps an [`AllowanceRegistry`] beside the controllers' registry), and writes
//! `allowance = "my_policy"` (or `connection_allowance`) in a QUIC flow of a scenario
//! parsed with `sim_core::scenario::parse_str_with` (or resolves a `Config` built in code
//! with `Config::resolve_controllers`). The built-in policies (`static`,
//! `improved_static`, `autotune`, `fast_autotune`) are entries of the same registry
//! ([`AllowanceRegistry::builtin`]); an unknown name is an error naming the field and
//! listing the registered ones. As with controllers, the registry is a value, never global
//! state, and the resolved config carries the factory ([`CustomAllowance`]), so the engine
//! needs no registry.
//!
//! This module sits in the allowances' own layer (`transport`) and names nothing above it;
//! `sim_core::registry` (example there) holds it together with the controllers.
//!
//! Which receivers: QUIC's streams (`allowance`) and connection (`connection_allowance`,
//! default: `allowance`). TCP's receive window (RFC 7323 / Linux DRS auto-tuning) and
//! SCTP's a_rwnd are the transports' own and take no allowance.
//!
//! # Determinism rules for a user's allowance
//!
//! Written on the trait, [`Allowance`]: time is the
//! [`AllowanceInput::now`](super::AllowanceInput::now) handed in (integer nanoseconds),
//! never a clock; `libm` for transcendental functions; no threads, no `HashMap` /
//! `HashSet` iteration; no randomness (an allowance is a function of its inputs and its
//! own state; none is handed in).

use super::{Allowance, AllowanceKind, AllowanceParams};
use crate::cc::registry::RegisterError;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Builds a user's allowance, one per flow-controlled receiver (a stream, or the
/// connection). Shared between runs (`Send + Sync`); must build the same allowance from
/// the same parameters every time (see the module's determinism rules).
pub trait AllowanceFactory: std::fmt::Debug + Send + Sync {
    /// A fresh allowance: `params.initial_window` is the limit first advertised (the
    /// transport parameter), `params.max_window` the flow's bound (`max_stream_window` /
    /// `max_connection_window` or their defaults), `params.mss` a full datagram's STREAM
    /// payload.
    fn build(&self, params: &AllowanceParams) -> Box<dyn Allowance>;
}

/// An allowance known by name only until a registry resolves it. Compared, ordered and
/// serialised by its name.
#[derive(Clone)]
pub struct CustomAllowance {
    name: String,
    factory: Option<Arc<dyn AllowanceFactory>>,
}

impl CustomAllowance {
    /// An unresolved name (what deserialising `allowance = "name"` gives).
    pub fn unresolved(name: impl Into<String>) -> Self {
        CustomAllowance {
            name: name.into(),
            factory: None,
        }
    }

    /// A name with its factory.
    pub fn resolved(name: impl Into<String>, factory: Arc<dyn AllowanceFactory>) -> Self {
        CustomAllowance {
            name: name.into(),
            factory: Some(factory),
        }
    }

    /// The scenario name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The factory, `None` until resolved.
    pub fn factory(&self) -> Option<&Arc<dyn AllowanceFactory>> {
        self.factory.as_ref()
    }
}

impl std::fmt::Debug for CustomAllowance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CustomAllowance")
            .field("name", &self.name)
            .field("resolved", &self.factory.is_some())
            .finish()
    }
}

impl PartialEq for CustomAllowance {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}
impl Eq for CustomAllowance {}
impl PartialOrd for CustomAllowance {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for CustomAllowance {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.name.cmp(&other.name)
    }
}
impl std::hash::Hash for CustomAllowance {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state)
    }
}

/// A receiver's allowance policy: a built-in [`AllowanceKind`] or a registered user
/// allowance. Serialised as its scenario name (`"static"`, ..., or the registered name).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum AllowancePolicy {
    /// A built-in policy.
    Builtin(AllowanceKind),
    /// A user's allowance (registered in an [`AllowanceRegistry`]). Deserialising an
    /// unknown name gives an unresolved one, which validation rejects until a registry
    /// resolves it.
    Custom(CustomAllowance),
}

impl Default for AllowancePolicy {
    fn default() -> Self {
        AllowancePolicy::Builtin(AllowanceKind::default())
    }
}

impl From<AllowanceKind> for AllowancePolicy {
    fn from(k: AllowanceKind) -> Self {
        AllowancePolicy::Builtin(k)
    }
}

impl PartialEq<AllowanceKind> for AllowancePolicy {
    fn eq(&self, other: &AllowanceKind) -> bool {
        *self == AllowancePolicy::Builtin(*other)
    }
}

impl AllowancePolicy {
    /// The scenario spelling.
    pub fn name(&self) -> &str {
        match self {
            AllowancePolicy::Builtin(k) => k.name(),
            AllowancePolicy::Custom(c) => c.name(),
        }
    }

    /// Whether the policy may grow its window, and so takes an upper bound
    /// ([`AllowanceParams::max_window`], keys `max_stream_window` /
    /// `max_connection_window`): the growing built-ins, and every user allowance.
    pub fn grows(&self) -> bool {
        match self {
            AllowancePolicy::Builtin(k) => k.grows(),
            AllowancePolicy::Custom(_) => true,
        }
    }

    /// Whether this is a user's name no registry has resolved yet.
    pub fn is_unresolved(&self) -> bool {
        matches!(self, AllowancePolicy::Custom(c) if c.factory().is_none())
    }

    /// Builds the allowance from `params`: a built-in through [`super::build`], a user's
    /// through its factory.
    ///
    /// # Panics
    /// On an unresolved name, which [`crate::Config::validate`] rejects before a run.
    pub fn build(&self, params: AllowanceParams) -> Box<dyn Allowance> {
        match self {
            AllowancePolicy::Builtin(k) => super::build(*k, params),
            AllowancePolicy::Custom(c) => c
                .factory()
                .unwrap_or_else(|| {
                    panic!(
                        "allowance {:?} was not resolved by a Registry (validation rejects it)",
                        c.name()
                    )
                })
                .build(&params),
        }
    }
}

impl Serialize for AllowancePolicy {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for AllowancePolicy {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if let Some(k) = AllowanceKind::ALL.into_iter().find(|k| k.name() == s) {
            return Ok(AllowancePolicy::Builtin(k));
        }
        if crate::cc::registry::valid_name(&s) {
            return Ok(AllowancePolicy::Custom(CustomAllowance::unresolved(s)));
        }
        Err(serde::de::Error::custom(format!(
            "allowance {s:?}: expected a lowercase identifier [a-z][a-z0-9_]*"
        )))
    }
}

/// One registered allowance name.
#[derive(Clone, Debug)]
enum Entry {
    Builtin(AllowanceKind),
    User(Arc<dyn AllowanceFactory>),
}

/// Allowance names → policies, in registration order (a `Vec`: no hash-order iteration).
/// `sim_core::Registry` holds one beside the controllers.
#[derive(Clone, Debug)]
pub struct AllowanceRegistry {
    entries: Vec<(String, Entry)>,
}

impl AllowanceRegistry {
    /// The built-in policies, [`AllowanceKind::ALL`] in order.
    pub fn builtin() -> Self {
        AllowanceRegistry {
            entries: AllowanceKind::ALL
                .into_iter()
                .map(|k| (k.name().to_string(), Entry::Builtin(k)))
                .collect(),
        }
    }

    /// Registers `factory` under `name` (a lowercase identifier not taken yet).
    pub fn register(
        &mut self,
        name: &str,
        factory: Arc<dyn AllowanceFactory>,
    ) -> Result<(), RegisterError> {
        if !crate::cc::registry::valid_name(name) {
            return Err(RegisterError::BadName(name.to_string()));
        }
        if self.policy(name).is_some() {
            return Err(RegisterError::Duplicate(name.to_string()));
        }
        self.entries.push((name.to_string(), Entry::User(factory)));
        Ok(())
    }

    /// The registered names, built-ins first.
    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// What a validation error shows as allowed: `one of "static", ...`.
    pub fn allowed(&self) -> String {
        let list: Vec<String> = self.names().iter().map(|n| format!("\"{n}\"")).collect();
        format!("one of {}", list.join(", "))
    }

    /// The policy `name` stands for, `None` if it is not registered.
    pub fn policy(&self, name: &str) -> Option<AllowancePolicy> {
        self.entries
            .iter()
            .find(|(n, _)| n == name)
            .map(|(n, e)| match e {
                Entry::Builtin(k) => AllowancePolicy::Builtin(*k),
                Entry::User(f) => {
                    AllowancePolicy::Custom(CustomAllowance::resolved(n.clone(), f.clone()))
                }
            })
    }

    /// Resolves `policy` in place (a user's name gets its factory; built-ins are left
    /// alone). `Err` with the allowed names if the name is not registered.
    pub fn resolve(&self, policy: &mut AllowancePolicy) -> Result<(), String> {
        if let AllowancePolicy::Custom(c) = policy {
            match self.policy(c.name()) {
                Some(p) => *policy = p,
                None => return Err(self.allowed()),
            }
        }
        Ok(())
    }
}

impl Default for AllowanceRegistry {
    fn default() -> Self {
        AllowanceRegistry::builtin()
    }
}

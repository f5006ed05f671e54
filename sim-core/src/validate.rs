//! Semantic checks on a typed [`Config`], and the error type of the whole scenario layer.
//!
//! [`Config::validate`] applies the rules of `docs/scenario-format.md` to a `Config` however
//! it was made: [`crate::scenario::parse_str`] runs the same checks (naming the TOML key the
//! value was written at) and then calls `validate` once more, and researchers who build a
//! `Config` in code get the same errors by calling it themselves. The runner's `run()` calls
//! it before it simulates anything.
//!
//! Error fields name the `Config` path, in the spelling of the scenario format:
//! `topology.forward.loss.p`, `topology.pairs[1].client_up.rate`, `flows[0].rate`,
//! `topology.handovers[0].pair`.

use crate::config::{
    AppConfig, Config, FlowConfig, Handover, LinkChange, LinkConfig, LossModel, QueueLimit,
    Topology, TransportConfig, WorkloadConfig,
};
use crate::config::{OutputConfig, SimLimits};
use crate::time::SimDuration;
use crate::units::{format_duration, format_rate, parse_bytes, parse_duration, parse_rate};
use crate::units::{Bytes, Rate};
use schema::{Field, Kind, Num, Table as Schema};
use serde::Serialize;
use std::fmt;

pub mod schema;
mod workloads;

/// A rejected scenario value: which field, what was written there, and what is allowed.
///
/// Every error of the scenario layer (TOML syntax, unknown keys, wrong units, values out of
/// range, inconsistent combinations) is one of these; nothing in the layer panics on bad
/// input.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    /// Full dotted path of the field, e.g. `topology.forward.loss.p`, `flows[0].rate`,
    /// `sweep."topology.link.delay"[1] -> topology.forward.queue`. For a TOML syntax error
    /// with no path, the position: `line 3, column 7`.
    pub field: String,
    /// The offending value as written (strings without quotes), or `(missing)`.
    pub value: String,
    /// What is allowed there, as a noun phrase that reads after "expected".
    pub allowed: String,
}

impl ConfigError {
    /// Builds an error.
    pub fn new(
        field: impl Into<String>,
        value: impl Into<String>,
        allowed: impl Into<String>,
    ) -> Self {
        ConfigError {
            field: field.into(),
            value: value.into(),
            allowed: allowed.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} is not allowed: expected {}",
            self.field, self.value, self.allowed
        )
    }
}

impl std::error::Error for ConfigError {}

/// The largest integer a TOML file can hold (TOML integers are signed 64-bit). Counts in a
/// `Config` are capped here so that every valid `Config` can be written back as TOML.
pub(crate) const MAX_TOML_INT: u64 = i64::MAX as u64;

/// Maps a key of the thing being checked to the full path of the field it was written at.
/// The empty key names the thing itself.
pub(crate) type PathFn<'a> = &'a dyn Fn(&str) -> String;

/// `base.key`, or `base` for the empty key.
pub(crate) fn join(base: &str, key: &str) -> String {
    if key.is_empty() {
        base.to_string()
    } else if base.is_empty() {
        key.to_string()
    } else {
        format!("{base}.{key}")
    }
}

/// Checks every key of `schema` that `value` (a typed table: a link, `[sim]`, a CBR app,
/// ...) holds against its descriptor's range ([`schema::Field`]), the same
/// check the scenario builder applies where the key is written. `value` is read through its
/// serde form, so a new key of the table is checked as soon as it has a descriptor.
pub(crate) fn check_scalars<T: Serialize>(
    schema: &Schema,
    value: &T,
    path: PathFn,
) -> Result<(), ConfigError> {
    let mut fields = Vec::new();
    // A value that is not a struct has no keys to check.
    let _ = value.serialize(scalars::Fields(&mut fields));
    for (name, v) in fields {
        let Some(f) = schema.fields.iter().find(|f| f.name == name) else {
            continue;
        };
        let unit = |parse: fn(&str) -> Option<u64>| match &v {
            Scalar::Str(s) => parse(s).map(Num::U),
            Scalar::U(n) => Some(Num::U(*n)),
            _ => None,
        };
        let num = match f.kind {
            Kind::Rate => unit(|s| parse_rate(s).ok().map(|r| r.0)),
            Kind::Time => unit(|s| parse_duration(s).ok().map(|d| d.0)),
            Kind::Size => unit(|s| parse_bytes(s).ok().map(|b| b.0)),
            Kind::Integer => unit(|_| None),
            Kind::Probability | Kind::Number => match v {
                Scalar::F(x) => Some(Num::F(x)),
                Scalar::U(n) => Some(Num::F(n as f64)),
                _ => None,
            },
            _ => None,
        };
        if let Some(n) = num {
            check_field(f, n, &path(f.name))?;
        }
    }
    Ok(())
}

use scalars::Scalar;

/// A serde serializer that collects the scalar fields of a struct (or of a struct variant
/// of an internally tagged enum): what [`check_scalars`] needs of a typed table, without a
/// copy of its field list.
mod scalars {
    use serde::ser::{self, Impossible, Serialize, SerializeStruct, Serializer};
    use std::fmt;

    /// A field's value; `None` for an absent option, `Other` for anything not scalar.
    #[derive(Debug)]
    pub enum Scalar {
        U(u64),
        F(f64),
        Str(String),
        None,
        Other,
    }

    #[derive(Debug)]
    pub struct NotScalar;
    impl fmt::Display for NotScalar {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("not a struct of scalars")
        }
    }
    impl std::error::Error for NotScalar {}
    impl ser::Error for NotScalar {
        fn custom<T: fmt::Display>(_: T) -> Self {
            NotScalar
        }
    }

    /// Serializes a struct into `(field, value)` pairs.
    pub struct Fields<'a>(pub &'a mut Vec<(&'static str, Scalar)>);

    impl SerializeStruct for Fields<'_> {
        type Ok = ();
        type Error = NotScalar;
        fn serialize_field<T: ?Sized + Serialize>(
            &mut self,
            key: &'static str,
            value: &T,
        ) -> Result<(), NotScalar> {
            let v = value.serialize(One).unwrap_or(Scalar::Other);
            self.0.push((key, v));
            Ok(())
        }
        fn end(self) -> Result<(), NotScalar> {
            Ok(())
        }
    }

    macro_rules! not_scalar {
        ($($f:ident: $t:ty),*) => {
            $(fn $f(self, _: $t) -> Result<Self::Ok, NotScalar> { Err(NotScalar) })*
        };
    }

    impl<'a> Serializer for Fields<'a> {
        type Ok = ();
        type Error = NotScalar;
        type SerializeSeq = Impossible<(), NotScalar>;
        type SerializeTuple = Impossible<(), NotScalar>;
        type SerializeTupleStruct = Impossible<(), NotScalar>;
        type SerializeTupleVariant = Impossible<(), NotScalar>;
        type SerializeMap = Impossible<(), NotScalar>;
        type SerializeStruct = Fields<'a>;
        type SerializeStructVariant = Impossible<(), NotScalar>;
        not_scalar!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
            serialize_i64: i64, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
            serialize_u64: u64, serialize_f32: f32, serialize_f64: f64, serialize_char: char,
            serialize_str: &str, serialize_bytes: &[u8], serialize_unit_struct: &'static str);
        fn serialize_none(self) -> Result<(), NotScalar> {
            Err(NotScalar)
        }
        fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<(), NotScalar> {
            v.serialize(self)
        }
        fn serialize_unit(self) -> Result<(), NotScalar> {
            Err(NotScalar)
        }
        fn serialize_unit_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
        ) -> Result<(), NotScalar> {
            Err(NotScalar)
        }
        fn serialize_newtype_struct<T: ?Sized + Serialize>(
            self,
            _: &'static str,
            v: &T,
        ) -> Result<(), NotScalar> {
            v.serialize(self)
        }
        fn serialize_newtype_variant<T: ?Sized + Serialize>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &T,
        ) -> Result<(), NotScalar> {
            Err(NotScalar)
        }
        fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NotScalar> {
            Err(NotScalar)
        }
        fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, NotScalar> {
            Err(NotScalar)
        }
        fn serialize_tuple_struct(
            self,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleStruct, NotScalar> {
            Err(NotScalar)
        }
        fn serialize_tuple_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleVariant, NotScalar> {
            Err(NotScalar)
        }
        fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NotScalar> {
            Err(NotScalar)
        }
        fn serialize_struct(self, _: &'static str, _: usize) -> Result<Fields<'a>, NotScalar> {
            Ok(self)
        }
        fn serialize_struct_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeStructVariant, NotScalar> {
            Err(NotScalar)
        }
    }

    /// Serializes one field's value into a [`Scalar`].
    struct One;

    impl Serializer for One {
        type Ok = Scalar;
        type Error = NotScalar;
        type SerializeSeq = Impossible<Scalar, NotScalar>;
        type SerializeTuple = Impossible<Scalar, NotScalar>;
        type SerializeTupleStruct = Impossible<Scalar, NotScalar>;
        type SerializeTupleVariant = Impossible<Scalar, NotScalar>;
        type SerializeMap = Impossible<Scalar, NotScalar>;
        type SerializeStruct = Impossible<Scalar, NotScalar>;
        type SerializeStructVariant = Impossible<Scalar, NotScalar>;
        not_scalar!(serialize_bool: bool, serialize_char: char, serialize_bytes: &[u8],
            serialize_unit_struct: &'static str);
        fn serialize_i8(self, v: i8) -> Result<Scalar, NotScalar> {
            self.serialize_i64(v.into())
        }
        fn serialize_i16(self, v: i16) -> Result<Scalar, NotScalar> {
            self.serialize_i64(v.into())
        }
        fn serialize_i32(self, v: i32) -> Result<Scalar, NotScalar> {
            self.serialize_i64(v.into())
        }
        fn serialize_i64(self, v: i64) -> Result<Scalar, NotScalar> {
            u64::try_from(v).map(Scalar::U).map_err(|_| NotScalar)
        }
        fn serialize_u8(self, v: u8) -> Result<Scalar, NotScalar> {
            Ok(Scalar::U(v.into()))
        }
        fn serialize_u16(self, v: u16) -> Result<Scalar, NotScalar> {
            Ok(Scalar::U(v.into()))
        }
        fn serialize_u32(self, v: u32) -> Result<Scalar, NotScalar> {
            Ok(Scalar::U(v.into()))
        }
        fn serialize_u64(self, v: u64) -> Result<Scalar, NotScalar> {
            Ok(Scalar::U(v))
        }
        fn serialize_f32(self, v: f32) -> Result<Scalar, NotScalar> {
            Ok(Scalar::F(v.into()))
        }
        fn serialize_f64(self, v: f64) -> Result<Scalar, NotScalar> {
            Ok(Scalar::F(v))
        }
        fn serialize_str(self, v: &str) -> Result<Scalar, NotScalar> {
            Ok(Scalar::Str(v.to_string()))
        }
        fn serialize_none(self) -> Result<Scalar, NotScalar> {
            Ok(Scalar::None)
        }
        fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<Scalar, NotScalar> {
            v.serialize(self)
        }
        fn serialize_unit(self) -> Result<Scalar, NotScalar> {
            Ok(Scalar::Other)
        }
        fn serialize_unit_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
        ) -> Result<Scalar, NotScalar> {
            Ok(Scalar::Other)
        }
        fn serialize_newtype_struct<T: ?Sized + Serialize>(
            self,
            _: &'static str,
            v: &T,
        ) -> Result<Scalar, NotScalar> {
            v.serialize(self)
        }
        fn serialize_newtype_variant<T: ?Sized + Serialize>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &T,
        ) -> Result<Scalar, NotScalar> {
            Ok(Scalar::Other)
        }
        fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NotScalar> {
            Err(NotScalar)
        }
        fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, NotScalar> {
            Err(NotScalar)
        }
        fn serialize_tuple_struct(
            self,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleStruct, NotScalar> {
            Err(NotScalar)
        }
        fn serialize_tuple_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleVariant, NotScalar> {
            Err(NotScalar)
        }
        fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NotScalar> {
            Err(NotScalar)
        }
        fn serialize_struct(
            self,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeStruct, NotScalar> {
            Err(NotScalar)
        }
        fn serialize_struct_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeStructVariant, NotScalar> {
            Err(NotScalar)
        }
    }
}

/// Checks `v` against the range of the key `f`; the error names `path`, shows the value
/// and says what [`schema::Field::allowed`] there.
pub(crate) fn check_field(f: &Field, v: impl Into<Num>, path: &str) -> Result<(), ConfigError> {
    let v = v.into();
    if f.contains(v) {
        Ok(())
    } else {
        Err(ConfigError::new(path, f.show(v), f.allowed))
    }
}

fn check_toml_int(v: u64, field: &str, what: &str) -> Result<(), ConfigError> {
    if v <= MAX_TOML_INT {
        Ok(())
    } else {
        Err(ConfigError::new(
            field,
            v.to_string(),
            format!("{what} <= 9223372036854775807 (the largest TOML integer)"),
        ))
    }
}

/// Rules of a loss model. `path("")` names the model, `path("p")` its key `p`.
pub(crate) fn check_loss(loss: &LossModel, path: PathFn) -> Result<(), ConfigError> {
    check_scalars(loss.keys(), loss, path)?;
    check_loss_rules(loss, path)
}

/// The rules of a loss model that tie its keys together (each key's own range is its
/// descriptor's; each model's are its `LossModelDef::check`): periodic `offset < every`,
/// Gilbert-Elliott `p + r > 0`, the four-state sums.
pub(crate) fn check_loss_rules(loss: &LossModel, path: PathFn) -> Result<(), ConfigError> {
    loss.check()
        .map_err(|(key, value, allowed)| ConfigError::new(path(key), value, allowed))
}

/// The rule of one scheduled change besides its keys' ranges: at least one field besides
/// `at`. `path` as for [`check_loss`], on the change.
pub(crate) fn check_change_rules(change: &LinkChange, path: PathFn) -> Result<(), ConfigError> {
    if change.rate.is_none()
        && change.delay.is_none()
        && change.loss.is_none()
        && change.corruption.is_none()
    {
        return Err(ConfigError::new(
            path(""),
            format!(
                "{{ at = \"{}\" }}",
                format_duration(crate::time::SimDuration(change.at.0))
            ),
            "at least one of rate, delay, loss, corruption besides at",
        ));
    }
    Ok(())
}

/// Changes in time order; `path` names the `changes` array.
pub(crate) fn check_changes_order(changes: &[LinkChange], path: &str) -> Result<(), ConfigError> {
    for (i, c) in changes.iter().enumerate().skip(1) {
        if c.at < changes[i - 1].at {
            return Err(ConfigError::new(
                format!("{path}[{i}].at"),
                format_duration(crate::time::SimDuration(c.at.0)),
                format!(
                    "a time >= the previous change's at ({}): changes must be in time order",
                    format_duration(crate::time::SimDuration(changes[i - 1].at.0))
                ),
            ));
        }
    }
    Ok(())
}

/// Rules of a link list of changes; `path` names the `changes` array.
pub(crate) fn check_changes(changes: &[LinkChange], path: &str) -> Result<(), ConfigError> {
    for (i, c) in changes.iter().enumerate() {
        let item = format!("{path}[{i}]");
        let at = |k: &str| join(&item, k);
        check_scalars(&schema::CHANGE, c, &at)?;
        if let Some(loss) = &c.loss {
            check_loss(loss, &|k| join(&at("loss"), k))?;
        }
        check_change_rules(c, &at)?;
    }
    check_changes_order(changes, path)
}

/// A queue's limits fit TOML integers; `path` names the queue.
pub(crate) fn check_queue(queue: &QueueLimit, path: &str) -> Result<(), ConfigError> {
    if let Some(b) = queue.bytes {
        check_toml_int(b, &join(path, "bytes"), "a byte count")?;
    }
    if let Some(p) = queue.packets {
        check_toml_int(p, &join(path, "packets"), "a packet count")?;
    }
    Ok(())
}

/// Rules of a link. `path(key)` names the field each key of the link was written at.
pub(crate) fn check_link(link: &LinkConfig, path: PathFn) -> Result<(), ConfigError> {
    check_scalars(&schema::LINK, link, path)?;
    check_queue(&link.queue, &path("queue"))?;
    check_loss(&link.loss, &|k| join(&path("loss"), k))?;
    check_changes(&link.changes, &path("changes"))?;
    if let Some(e) = &link.ecn {
        e.check().map_err(|(key, value, allowed)| {
            ConfigError::new(join(&path("ecn"), key), value, allowed)
        })?;
    }
    if let Some(t) = &link.trace {
        t.check().map_err(|e| {
            ConfigError::new(
                join(&path("rate"), "trace"),
                format!("{:?}", t.trace),
                format!(
                    "{}: {}",
                    crate::config::trace::TRACE_LINE_ALLOWED,
                    e.message
                ),
            )
        })?;
    }
    check_trace_changes(link.trace.is_some(), &link.changes, &path("changes"))
}

/// A trace-driven link's capacity is its trace: its scheduled changes may not set `rate`.
pub(crate) fn check_trace_changes(
    trace: bool,
    changes: &[LinkChange],
    path: &str,
) -> Result<(), ConfigError> {
    if !trace {
        return Ok(());
    }
    match changes.iter().position(|c| c.rate.is_some()) {
        Some(i) => Err(ConfigError::new(
            format!("{path}[{i}].rate"),
            changes[i]
                .rate
                .map(crate::units::format_rate)
                .unwrap_or_default(),
            "no rate change on a trace-driven link (its trace sets its capacity; a trace can hold an outage as a gap)",
        )),
        None => Ok(()),
    }
}

/// Rules of a flow on a network of `pairs` client/server pairs; `path(key)` as for links.
pub(crate) fn check_flow(flow: &FlowConfig, pairs: usize, path: PathFn) -> Result<(), ConfigError> {
    if flow.pair >= pairs {
        return Err(ConfigError::new(
            path("pair"),
            flow.pair.to_string(),
            format!(
                "a pair index in [0, {}] (the topology has {pairs} pair(s))",
                pairs.saturating_sub(1)
            ),
        ));
    }
    match &flow.app {
        AppConfig::Cbr {
            count, rate, size, ..
        } => {
            check_scalars(&schema::CBR, &flow.app, path)?;
            check_cbr_rate(*rate, *size, &path("rate"))?;
            check_toml_int(*count, &path("count"), "a number of datagrams")
        }
        AppConfig::Transport(t) => {
            let err = |(field, value, allowed): (&str, String, String)| {
                ConfigError::new(path(field), value, allowed)
            };
            // Each side's config; when they differ, named by side as the resolved form
            // writes them (`flows[0].quic.server.stream_window`).
            match &t.transport {
                TransportConfig::Quic(q) => check_sides(q, "quic", path, |c| c.validate())?,
                TransportConfig::Tcp(q) => check_sides(q, "tcp", path, |c| c.validate())?,
                TransportConfig::Sctp(q) => check_sides(q, "sctp", path, |c| c.validate())?,
            }
            check_controllers(t, path)?;
            check_transport_workload(t, path)?;
            check_transport_start(t, path)?;
            t.workload.validate().map_err(|(f, v, a)| err((&f, v, a)))?;
            if let WorkloadConfig::Sequence(s) = &t.workload {
                for (j, c) in s.connections.iter().enumerate() {
                    let item = path(&format!("connections[{j}]"));
                    check_scalars(&schema::CONNECTION, c, &|k| join(&item, k))?;
                }
                check_connections(&s.connections, path)?;
            }
            Ok(())
        }
    }
}

/// A custom `cc` name must have been resolved by a [`crate::registry::Registry`]
/// ([`Config::resolve_controllers`], [`crate::scenario::parse_str_with`]); SCTP takes the
/// built-in controllers only (its RFC 9260 congestion control is the association's).
fn check_controllers(t: &crate::config::TransportFlow, path: PathFn) -> Result<(), ConfigError> {
    fn resolved(a: &crate::cc::CcAlgorithm) -> Result<(), (&'static str, String, String)> {
        if a.is_unresolved() {
            return Err((
                "cc",
                a.scenario_name().to_string(),
                format!(
                    "{} (or a name registered in the Registry the config is resolved with: sim_core::scenario::parse_str_with, Config::resolve_controllers)",
                    crate::registry::Registry::builtin().allowed()
                ),
            ));
        }
        Ok(())
    }
    fn allowance_resolved(
        field: &'static str,
        a: Option<&crate::transport::allowance::AllowancePolicy>,
    ) -> Result<(), (&'static str, String, String)> {
        match a {
            Some(a) if a.is_unresolved() => Err((
                field,
                a.name().to_string(),
                format!(
                    "{} (or a name registered with Registry::register_allowance in the Registry the config is resolved with: sim_core::scenario::parse_str_with, Config::resolve_controllers)",
                    crate::transport::allowance::AllowanceRegistry::builtin().allowed()
                ),
            )),
            _ => Ok(()),
        }
    }
    match &t.transport {
        TransportConfig::Quic(q) => check_sides(q, "quic", path, |c| {
            resolved(&c.cc.algorithm)?;
            allowance_resolved("allowance", Some(&c.allowance))?;
            allowance_resolved("connection_allowance", c.connection_allowance.as_ref())
        }),
        TransportConfig::Tcp(q) => check_sides(q, "tcp", path, |c| resolved(&c.cc.algorithm)),
        TransportConfig::Sctp(q) => check_sides(q, "sctp", path, |c| {
            match &c.cc {
            crate::config::sctp::SctpCc::Shared(a @ crate::cc::CcAlgorithm::Custom(_)) => Err((
                "cc",
                a.scenario_name().to_string(),
                format!(
                    "one of {} (a registered user controller runs over QUIC and TCP; SCTP's congestion control is the association's, docs/sctp.md)",
                    crate::config::sctp::SCTP_CC_NAMES
                        .iter()
                        .map(|n| format!("\"{n}\""))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
            _ => Ok(()),
        }
        }),
    }
}

impl Config {
    /// Resolves every `cc` name of the config's QUIC and TCP flows, and every `allowance` /
    /// `connection_allowance` name of its QUIC flows, against `registry`: a registered
    /// user controller or allowance gets its factory ([`crate::cc::registry`],
    /// [`crate::transport::allowance::registry`]). Built-in
    /// names are left as they are. An unknown name is an error naming the field, with the
    /// registry's names as what is allowed. [`crate::scenario::parse_str_with`] calls this
    /// for every sweep point; a config built in code calls it before
    /// [`crate::run`].
    pub fn resolve_controllers(
        &mut self,
        registry: &crate::registry::Registry,
    ) -> Result<(), ConfigError> {
        for (i, flow) in self.flows.iter_mut().enumerate() {
            let AppConfig::Transport(t) = &mut flow.app else {
                continue;
            };
            if let TransportConfig::Quic(q) = &mut t.transport {
                let same = q.same();
                for (side, c) in [("client", &mut q.client), ("server", &mut q.server)] {
                    let keys = [
                        ("allowance", Some(&mut c.allowance)),
                        ("connection_allowance", c.connection_allowance.as_mut()),
                    ];
                    for (key, policy) in keys {
                        let Some(policy) = policy else { continue };
                        let written = policy.name().to_string();
                        registry.allowances().resolve(policy).map_err(|allowed| {
                            let field = if same {
                                format!("flows[{i}].{key}")
                            } else {
                                format!("flows[{i}].quic.{side}.{key}")
                            };
                            ConfigError::new(field, written, allowed)
                        })?;
                    }
                }
            }
            let (name, sides) = match &mut t.transport {
                TransportConfig::Quic(q) => {
                    let same = q.same();
                    (
                        "quic",
                        [
                            (same, "client", &mut q.client.cc.algorithm),
                            (same, "server", &mut q.server.cc.algorithm),
                        ],
                    )
                }
                TransportConfig::Tcp(q) => {
                    let same = q.same();
                    (
                        "tcp",
                        [
                            (same, "client", &mut q.client.cc.algorithm),
                            (same, "server", &mut q.server.cc.algorithm),
                        ],
                    )
                }
                TransportConfig::Sctp(_) => continue,
            };
            for (same, side, algorithm) in sides {
                let written = algorithm.scenario_name().to_string();
                registry.resolve(algorithm).map_err(|allowed| {
                    let field = if same {
                        format!("flows[{i}].cc")
                    } else {
                        format!("flows[{i}].{name}.{side}.cc")
                    };
                    ConfigError::new(field, written, allowed)
                })?;
            }
        }
        Ok(())
    }
}

/// Each side's config of a transport named `name`, checked by `validate`; when the sides
/// differ, an error is named by side as the resolved form writes them
/// (`flows[0].quic.server.stream_window`).
fn check_sides<T: PartialEq>(
    sides: &crate::config::Sides<T>,
    name: &str,
    path: PathFn,
    validate: impl Fn(&T) -> Result<(), (&'static str, String, String)>,
) -> Result<(), ConfigError> {
    if sides.same() {
        return validate(&sides.client)
            .map_err(|(field, value, allowed)| ConfigError::new(path(field), value, allowed));
    }
    for (side, c) in [("client", &sides.client), ("server", &sides.server)] {
        validate(c).map_err(|(field, value, allowed)| {
            ConfigError::new(path(&format!("{name}.{side}.{field}")), value, allowed)
        })?;
    }
    Ok(())
}

/// The workloads a transport runs, and the workload keys it does not support yet (and a
/// TCP flow's sides agreeing on `fast_open` / `early_data`): TCP and SCTP run `bulk` (without `read_rate`), `web_page`, `video` and `reconnects` (their application consumes data at once,
/// `docs/tcp.md`, `docs/sctp.md`).
pub(crate) fn check_transport_workload(
    t: &crate::config::TransportFlow,
    path: PathFn,
) -> Result<(), ConfigError> {
    let name = t.transport.name();
    if let TransportConfig::Tcp(s) = &t.transport {
        // Fast Open and 0-RTT need both ends (RFC 7413 §4.1, RFC 8446 §4.2.10); the model
        // takes them as agreed, so the two sides must say the same (docs/tcp.md).
        for (key, c, v) in [
            ("fast_open", s.client.fast_open, s.server.fast_open),
            ("early_data", s.client.early_data, s.server.early_data),
        ] {
            if c != v {
                return Err(ConfigError::new(
                    path(&format!("tcp.server.{key}")),
                    v.to_string(),
                    format!("{c}, the client's `{key}`: both sides of a TCP flow must agree (docs/tcp.md)"),
                ));
            }
        }
    }
    // An SCTP association carries the client's request streams on stream numbers below
    // `CLIENT_STREAMS` (the rest are the server's): more would never open and the run
    // ended `stalled` (found with issue 28).
    if let TransportConfig::Sctp(_) = &t.transport {
        let max = crate::config::sctp::MAX_CLIENT_STREAMS;
        let streams = t.workload.streams_per_connection();
        if let Some((key, n)) = streams.filter(|&(_, n)| n > max) {
            return Err(ConfigError::new(
                path(&format!("workload.{key}")),
                n.to_string(),
                format!("at most {max} on an SCTP flow: the client's streams of an association (RFC 9260 stream identifiers are 16-bit; the upper half is the server's)"),
            ));
        }
    }
    match (&t.transport, &t.workload) {
        (TransportConfig::Quic(_), _) => Ok(()),
        (_, WorkloadConfig::Bulk(b)) => match b.read_rate {
            Some(r) => Err(ConfigError::new(
                path("read_rate"),
                crate::units::format_rate(r),
                format!("no `read_rate` on a {name} flow (its application reads at once; docs/{name}.md)"),
            )),
            None => Ok(()),
        },
        (_, w) if !w.runs_on(name) => Err(ConfigError::new(
            path("kind"),
            w.kind(),
            schema::workloads_run_by(name),
        )),
        // Issue 28 item 15: neither TCP nor SCTP closes an idle connection (Linux keeps an
        // idle TCP connection open for ever, keep-alive only probes it; SCTP heartbeats keep
        // an idle association up, RFC 9260 §8.3), so the next connection would never start.
        (_, WorkloadConfig::Reconnects(r))
            if r.on == crate::config::workload::ReconnectOn::Idle =>
        {
            Err(ConfigError::new(
                // The default, written or not, is the workload's key.
                path("workload.on"),
                "idle",
                format!("\"close\" or \"address_change\" on a {name} flow: {} has no idle timeout, so a connection left idle never ends and the next one never starts (`on = \"idle\"` is QUIC's; docs/workloads.md)", name.to_uppercase()),
            ))
        }
        _ => Ok(()),
    }
}

/// A transport flow's `start`: `bulk` only (a sequence times its connections itself).
pub(crate) fn check_transport_start(
    t: &crate::config::TransportFlow,
    path: PathFn,
) -> Result<(), ConfigError> {
    match &t.workload {
        WorkloadConfig::Sequence(_) if t.start != crate::time::SimTime::ZERO => {
            Err(ConfigError::new(
                path("start"),
                format_duration(t.start.saturating_since(crate::time::SimTime::ZERO)),
                "no `start` with a `sequence` workload (its connections' `start` / `gap` time it)",
            ))
        }
        _ => Ok(()),
    }
}

/// Rules of a `quic_connections` list (`docs/lifecycle.md`).
/// The rules of a `quic_connections` list besides each key's range (`docs/lifecycle.md`):
/// at least one connection, not both `start` and `gap`, start times that do not go back,
/// sizes that fit TOML integers.
pub(crate) fn check_connections(
    connections: &[crate::config::workload::ConnectionSpec],
    path: PathFn,
) -> Result<(), ConfigError> {
    if connections.is_empty() {
        return Err(ConfigError::new(
            path("connections"),
            "[]",
            "at least one connection",
        ));
    }
    let mut last_start: Option<crate::time::SimTime> = None;
    for (j, c) in connections.iter().enumerate() {
        let at = |k: &str| path(&format!("connections[{j}].{k}"));
        if c.start.is_some() && c.gap.is_some() {
            return Err(ConfigError::new(
                at("gap"),
                format_duration(c.gap.unwrap_or_default()),
                "either `start` or `gap`, not both",
            ));
        }
        if let Some(s) = c.start {
            if last_start.is_some_and(|l| s < l) {
                return Err(ConfigError::new(
                    at("start"),
                    format_duration(crate::time::SimDuration(s.0)),
                    "start times that do not go back in time",
                ));
            }
            last_start = Some(s);
        }
        check_toml_int(c.bytes, &at("bytes"), "a number of bytes")?;
        check_toml_int(c.streams, &at("streams"), "a number of streams")?;
        check_toml_int(c.request_size, &at("request_size"), "a number of bytes")?;
    }
    Ok(())
}

/// Rules of the handover list on a network of `pairs` pairs; `path` names the list.
/// The links themselves are checked by the caller.
pub(crate) fn check_handover_order(
    handovers: &[Handover],
    pairs: usize,
    path: &str,
) -> Result<(), ConfigError> {
    for (i, h) in handovers.iter().enumerate() {
        if h.pair >= pairs {
            return Err(ConfigError::new(
                format!("{path}[{i}].pair"),
                h.pair.to_string(),
                format!(
                    "a pair index in [0, {}] (the topology has {pairs} pair(s))",
                    pairs.saturating_sub(1)
                ),
            ));
        }
        if i > 0 {
            let prev = &handovers[i - 1];
            if h.at < prev.at {
                return Err(ConfigError::new(
                    format!("{path}[{i}].at"),
                    format_duration(crate::time::SimDuration(h.at.0)),
                    "handovers sorted by `at`",
                ));
            }
        }
        if let Some(j) = handovers[..i]
            .iter()
            .position(|o| o.at == h.at && o.pair == h.pair)
        {
            return Err(ConfigError::new(
                format!("{path}[{i}].at"),
                format_duration(crate::time::SimDuration(h.at.0)),
                format!(
                    "a time different from handover [{j}] of the same pair {} (one handover per pair at a time)",
                    h.pair
                ),
            ));
        }
    }
    Ok(())
}

/// RFC 9000 §9.4 lets an endpoint keep its congestion and RTT state on a new path only
/// when the peer's port alone changed: a QUIC flow with `migration.policy = "keep"` may not
/// have a handover of its pair that changes the IP address.
pub(crate) fn check_migration_policies(
    flows: &[FlowConfig],
    handovers: &[Handover],
) -> Result<(), ConfigError> {
    use crate::transport::migration::MigrationPolicyKind;
    for (i, f) in flows.iter().enumerate() {
        let Some(sides) = f.quic() else { continue };
        let keeps = [&sides.client, &sides.server].iter().any(|q| {
            q.migration
                .is_some_and(|m| m.policy == MigrationPolicyKind::Keep)
        });
        if !keeps {
            continue;
        }
        if let Some(j) = handovers
            .iter()
            .position(|h| h.pair == f.pair && h.address == crate::config::AddressChange::Ip)
        {
            return Err(ConfigError::new(
                format!("flows[{i}].migration.policy"),
                "\"keep\"",
                format!(
                    "\"reset\" or \"rtt_ratio\": handover [{j}] changes the IP address of pair {} and RFC 9000 §9.4 allows keeping the window only when the port alone changes",
                    f.pair
                ),
            ));
        }
    }
    Ok(())
}

/// A `reconnects` flow with `on = "address_change"` reconnects only at handovers of its
/// pair: without one the key would do nothing, an error naming it.
pub(crate) fn check_address_change_reconnects(
    flows: &[FlowConfig],
    handovers: &[Handover],
) -> Result<(), ConfigError> {
    use crate::config::workload::ReconnectOn;
    for (i, f) in flows.iter().enumerate() {
        let changes = || {
            handovers
                .iter()
                .any(|h| h.pair == f.pair && h.address != crate::config::AddressChange::None)
        };
        let Some(WorkloadConfig::Reconnects(r)) = f.workload() else {
            continue;
        };
        if r.on == ReconnectOn::AddressChange && !changes() {
            return Err(ConfigError::new(
                format!("flows[{i}].workload.on"),
                "\"address_change\"",
                format!(
                    "{}: no handover ([[topology.handovers]] with address = \"ip\" or \"port\") changes the address of pair {}",
                    // TCP and SCTP have no idle timeout (item 15).
                    if f.quic().is_some() { "\"idle\" or \"close\"" } else { "\"close\"" },
                    f.pair
                ),
            ));
        }
    }
    Ok(())
}

/// Paper 000's history-based initial window learns from the earlier connections of a
/// sequence; a bulk flow has a single connection, so a `history` policy there could never
/// change anything: it is an error naming the key (a parameter the engine would ignore).
/// What a sequence-only QUIC key (resumption and 0-RTT, which act only across the
/// connections of a sequence or of reconnects) away from its default on a one-connection
/// workload (bulk, web_page, video) is told.
pub(crate) const SEQUENCE_ONLY_ALLOWED: &str = "resumption and 0-RTT act on the later connections of a workload = { kind = \"sequence\" } (kind = \"quic_connections\") or { kind = \"reconnects\" }, and this workload has one connection";

pub(crate) fn check_initial_window_workloads(flows: &[FlowConfig]) -> Result<(), ConfigError> {
    use crate::transport::initial_window::InitialWindowKind;
    for (i, f) in flows.iter().enumerate() {
        let Some(sides) = f.quic() else {
            continue;
        };
        let what = match f.workload() {
            // Several connections (a video that reconnects included): the sequence-only
            // keys act there.
            Some(w) if w.several_connections() => continue,
            Some(w) => crate::config::workload::a_workload(w.kind()),
            None => continue,
        };
        // A `Config` built in code: a sequence-only key away from its default.
        let d = crate::config::quic::QuicConfig::default();
        for q in [&sides.client, &sides.server] {
            let differs = [
                ("zero_rtt", q.zero_rtt != d.zero_rtt, q.zero_rtt.to_string()),
                (
                    "reject_zero_rtt",
                    q.reject_zero_rtt != d.reject_zero_rtt,
                    q.reject_zero_rtt.to_string(),
                ),
                (
                    "resumption_client_hello_size",
                    q.resumption_client_hello_size != d.resumption_client_hello_size,
                    q.resumption_client_hello_size.to_string(),
                ),
                (
                    "resumption_server_handshake_size",
                    q.resumption_server_handshake_size != d.resumption_server_handshake_size,
                    q.resumption_server_handshake_size.to_string(),
                ),
            ];
            if let Some((key, _, value)) = differs.into_iter().find(|x| x.1) {
                return Err(ConfigError::new(
                    format!("flows[{i}].{key}"),
                    value,
                    format!("its default on {what}: {SEQUENCE_ONLY_ALLOWED}"),
                ));
            }
        }
        if [&sides.client, &sides.server]
            .iter()
            .any(|q| q.initial_window.policy == InitialWindowKind::History)
        {
            return Err(ConfigError::new(
                format!("flows[{i}].initial_window.policy"),
                "\"history\"",
                format!("\"default\" for {what}: a history policy learns from the earlier connections of a workload = {{ kind = \"sequence\" }} (paper 000), and {what} has one connection"),
            ));
        }
    }
    Ok(())
}

impl Config {
    /// Checks every rule of the scenario format that can be checked on a typed `Config`:
    /// a `name` of at most [`MAX_NAME_CHARS`] characters, `runs >= 1`, positive time limit, sample interval and event budget, static link
    /// rates > 0, probabilities in [0, 1], loss-model constraints (Gilbert-Elliott
    /// p + r > 0, periodic 1 <= every, offset < every, four-state sums <= 1), link overhead
    /// <= 1000 B, changes in time order with at least one field each, handover and flow pair
    /// indices in range, handovers sorted with at most one per pair at a time, CBR rate > 0,
    /// size in [1, 65507] B and count >= 1, dumbbell with 1 to 10000 pairs, and every count
    /// small enough to be written as a TOML integer.
    ///
    /// Resolved quantities (`"1BDP"` queues, flow durations) are already numbers in a
    /// `Config`, so the rules about them live in [`crate::scenario`].
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_name(&self.name)?;
        check_field(schema::TOP.field("runs"), self.runs as u64, "runs")?;
        check_scalars(&schema::SIM, &self.sim, &|k| join("sim", k))?;
        check_toml_int(self.sim.max_events, "sim.max_events", "an integer")?;
        check_scalars(&schema::OUTPUT, &self.output, &|k| join("output", k))?;
        check_series(&self.output, &self.sim)?;
        let link_path = |base: String| move |k: &str| join(&base, k);
        let pairs = match &self.topology {
            Topology::TwoHosts {
                forward,
                reverse,
                handovers,
            } => {
                check_link(forward, &link_path("topology.forward".into()))?;
                check_link(reverse, &link_path("topology.reverse".into()))?;
                check_handovers(handovers, 1)?;
                1
            }
            Topology::Dumbbell {
                pairs,
                bottleneck_forward,
                bottleneck_reverse,
                handovers,
            } => {
                check_field(
                    schema::DUMBBELL.field("pairs"),
                    pairs.len() as u64,
                    "topology.pairs",
                )?;
                check_link(
                    bottleneck_forward,
                    &link_path("topology.bottleneck_forward".into()),
                )?;
                check_link(
                    bottleneck_reverse,
                    &link_path("topology.bottleneck_reverse".into()),
                )?;
                for (i, p) in pairs.iter().enumerate() {
                    for (name, l) in [
                        ("client_up", &p.client_up),
                        ("client_down", &p.client_down),
                        ("server_up", &p.server_up),
                        ("server_down", &p.server_down),
                    ] {
                        check_link(l, &link_path(format!("topology.pairs[{i}].{name}")))?;
                    }
                }
                check_handovers(handovers, pairs.len())?;
                pairs.len()
            }
        };
        for (i, flow) in self.flows.iter().enumerate() {
            check_flow(flow, pairs, &link_path(format!("flows[{i}]")))?;
        }
        let handovers = match &self.topology {
            Topology::TwoHosts { handovers, .. } | Topology::Dumbbell { handovers, .. } => {
                handovers
            }
        };
        check_migration_policies(&self.flows, handovers)?;
        check_address_change_reconnects(&self.flows, handovers)?;
        check_initial_window_workloads(&self.flows)?;
        check_foreground(&self.flows)?;
        Ok(())
    }
}

/// Flows that are all `background`: a run ends when its foreground flows are done, so it
/// would end at 0 s with nothing run (issue 28 item 18). No flows at all is allowed (an
/// empty network completes at once, docs/adversarial.md).
pub(crate) fn check_foreground(flows: &[FlowConfig]) -> Result<(), ConfigError> {
    if flows.is_empty() || flows.iter().any(|f| !f.background) {
        return Ok(());
    }
    Err(ConfigError::new(
        "flows",
        format!("{} flow(s), all with background = true", flows.len()),
        "at least one flow with background = false: a run ends when its foreground flows are done, so with background flows only it would end at 0 s without running them",
    ))
}

/// The longest scenario `name`, in characters. The CLI builds file names from it (qlog
/// traces, series CSVs; each character at most one byte there): bounded, they fit the
/// usual 255-byte limit of a file name with the seed, point and flow added.
pub const MAX_NAME_CHARS: usize = 100;

/// `name` has at most [`MAX_NAME_CHARS`] characters.
pub(crate) fn check_name(name: &str) -> Result<(), ConfigError> {
    let n = name.chars().count();
    if n <= MAX_NAME_CHARS {
        return Ok(());
    }
    let shown: String = name.chars().take(40).collect();
    Err(ConfigError::new(
        "name",
        format!("{shown}... ({n} characters)"),
        format!("a string of at most {MAX_NAME_CHARS} characters (file names are built from it)"),
    ))
}

/// The most time-series samples a run may take (`output.series`): one row of every column
/// per sample is kept in memory, so this bounds a run's series to some 10^8 values.
pub const MAX_SERIES_SAMPLES: u64 = 1_000_000;

/// With series on, `output.sample_interval` must leave at most [`MAX_SERIES_SAMPLES`]
/// samples in `sim.time_limit` (a `"1ns"` interval would fill memory without bound).
pub(crate) fn check_series(output: &OutputConfig, sim: &SimLimits) -> Result<(), ConfigError> {
    let dt = output.sample_interval.0.max(1);
    if !output.series || sim.time_limit.0 / dt <= MAX_SERIES_SAMPLES {
        return Ok(());
    }
    let min = SimDuration(sim.time_limit.0.div_ceil(MAX_SERIES_SAMPLES));
    Err(ConfigError::new(
        "output.sample_interval",
        format_duration(output.sample_interval),
        format!(
            "with series on, a sample interval of at least {} (at most {MAX_SERIES_SAMPLES} samples in sim.time_limit = {})",
            format_duration(min),
            format_duration(sim.time_limit)
        ),
    ))
}

/// A CBR source sends at most one datagram per nanosecond, the clock's resolution: a
/// faster `rate` would send several datagrams at one instant, work that no event bounds.
/// So `rate <= (size + 28 B) × 8 bit × 10^9 /s`.
pub(crate) fn check_cbr_rate(rate: Rate, size: Bytes, path: &str) -> Result<(), ConfigError> {
    // IPv4 (20 B) + UDP (8 B) headers count in a CBR rate (`apps::cbr::IP_UDP_HEADER`).
    let bits = (size.0 as u128 + 28) * 8;
    let max = bits * 1_000_000_000;
    if rate.0 as u128 <= max {
        return Ok(());
    }
    Err(ConfigError::new(
        path,
        format_rate(rate),
        format!(
            "a rate of at most {} for {}-byte datagrams (one datagram per nanosecond, the clock's resolution)",
            format_rate(Rate(max.min(u64::MAX as u128) as u64)),
            size.0
        ),
    ))
}

fn check_handovers(handovers: &[Handover], pairs: usize) -> Result<(), ConfigError> {
    check_handover_order(handovers, pairs, "topology.handovers")?;
    for (i, h) in handovers.iter().enumerate() {
        let fwd = format!("topology.handovers[{i}].forward");
        let rev = format!("topology.handovers[{i}].reverse");
        check_link(&h.forward, &|k| join(&fwd, k))?;
        check_link(&h.reverse, &|k| join(&rev, k))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::*;
    use crate::time::{SimDuration, SimTime};
    use crate::units::{Bytes, Rate};

    fn link() -> LinkConfig {
        LinkConfig {
            queue: QueueLimit {
                bytes: Some(25_000),
                packets: None,
            },
            ..LinkConfig::new(Rate(10_000_000), SimDuration::from_millis(10))
        }
    }

    fn config() -> Config {
        let mut c = Config::two_hosts(
            link(),
            link(),
            vec![FlowConfig::cbr_up(Rate(1_000_000), Bytes(1200), 10)],
        );
        c.name = "t".into();
        c
    }

    fn err(c: &Config) -> ConfigError {
        c.validate().expect_err("config should be rejected")
    }

    fn set_forward(c: &mut Config, f: impl FnOnce(&mut LinkConfig)) {
        match &mut c.topology {
            Topology::TwoHosts { forward, .. } => f(forward),
            Topology::Dumbbell { .. } => unreachable!(),
        }
    }

    fn set_cbr(c: &mut Config, f: impl FnOnce(&mut Rate, &mut Bytes, &mut u64)) {
        let AppConfig::Cbr {
            rate, size, count, ..
        } = &mut c.flows[0].app
        else {
            unreachable!("the test config has a cbr flow")
        };
        f(rate, size, count)
    }

    #[test]
    fn display_names_field_value_and_allowed() {
        let e = ConfigError::new("flows[0].rate", "0bps", "a rate > 0");
        assert_eq!(
            e.to_string(),
            "flows[0].rate: 0bps is not allowed: expected a rate > 0"
        );
        let _: &dyn std::error::Error = &e;
    }

    #[test]
    fn valid_config_passes() {
        config().validate().unwrap();
    }

    /// Issue 28 item 8: a 240-character name validated, then the CLI's file names built
    /// from it were too long.
    #[test]
    fn name_is_bounded() {
        let mut c = config();
        c.name = "é".repeat(MAX_NAME_CHARS);
        c.validate().unwrap();
        c.name.push('x');
        let e = err(&c);
        assert_eq!(e.field, "name");
        assert!(e.allowed.contains("at most 100 characters"), "{e}");
    }

    /// Issue 28 item 18: background flows alone "completed" at 0 s with 0 events.
    #[test]
    fn background_flows_alone_are_refused() {
        let mut c = config();
        c.flows[0].background = true;
        let e = err(&c);
        assert_eq!(e.field, "flows");
        assert!(e.allowed.contains("background = false"), "{e}");
        c.flows.clear();
        c.validate().unwrap();
    }

    #[test]
    fn runs_zero() {
        let mut c = config();
        c.runs = 0;
        let e = err(&c);
        assert_eq!(e.field, "runs");
        assert!(e.allowed.contains(">= 1"));
    }

    #[test]
    fn limits_and_interval_positive() {
        let mut c = config();
        c.sim.time_limit = SimDuration::ZERO;
        assert_eq!(err(&c).field, "sim.time_limit");
        let mut c = config();
        c.sim.max_events = 0;
        assert_eq!(err(&c).field, "sim.max_events");
        let mut c = config();
        c.output.sample_interval = SimDuration::ZERO;
        let e = err(&c);
        assert_eq!(e.field, "output.sample_interval");
        assert!(e.allowed.contains("> 0"));
    }

    #[test]
    fn static_rate_zero() {
        let mut c = config();
        set_forward(&mut c, |l| l.rate = Rate(0));
        let e = err(&c);
        assert_eq!(e.field, "topology.forward.rate");
        assert_eq!(e.value, "0bps");
        assert!(e.allowed.contains("> 0"));
    }

    #[test]
    fn probabilities_outside_unit_interval() {
        let mut c = config();
        set_forward(&mut c, |l| l.corruption = 1.5);
        let e = err(&c);
        assert_eq!(e.field, "topology.forward.corruption");
        assert!(e.allowed.contains("[0, 1]"));
        let mut c = config();
        set_forward(&mut c, |l| {
            l.loss = LossModel::Bernoulli(crate::config::loss::Bernoulli { p: -0.1 })
        });
        assert_eq!(err(&c).field, "topology.forward.loss.p");
        let mut c = config();
        set_forward(&mut c, |l| {
            l.loss = LossModel::Bernoulli(crate::config::loss::Bernoulli { p: f64::NAN })
        });
        assert_eq!(err(&c).field, "topology.forward.loss.p");
        let mut c = config();
        set_forward(&mut c, |l| {
            l.loss = LossModel::GilbertElliott(crate::config::loss::GilbertElliott {
                p: 0.1,
                r: 0.2,
                k: 2.0,
                h: 0.0,
            })
        });
        assert_eq!(err(&c).field, "topology.forward.loss.k");
    }

    #[test]
    fn ge_p_plus_r_zero() {
        let mut c = config();
        set_forward(&mut c, |l| {
            l.loss = LossModel::GilbertElliott(crate::config::loss::GilbertElliott {
                p: 0.0,
                r: 0.0,
                k: 1.0,
                h: 0.0,
            })
        });
        let e = err(&c);
        assert_eq!(e.field, "topology.forward.loss");
        assert!(e.allowed.contains("p + r > 0"));
    }

    #[test]
    fn periodic_rules() {
        let mut c = config();
        set_forward(&mut c, |l| {
            l.loss = LossModel::Periodic(crate::config::loss::Periodic {
                every: 0,
                offset: 0,
            })
        });
        let e = err(&c);
        assert_eq!(e.field, "topology.forward.loss.every");
        assert!(e.allowed.contains(">= 1"));
        let mut c = config();
        set_forward(&mut c, |l| {
            l.loss = LossModel::Periodic(crate::config::loss::Periodic {
                every: 4,
                offset: 4,
            })
        });
        let e = err(&c);
        assert_eq!(e.field, "topology.forward.loss.offset");
        assert!(e.allowed.contains("[0, 3]"));
    }

    #[test]
    fn four_state_sums() {
        let fs = |p13, p14, p31, p32| {
            LossModel::FourState(crate::config::loss::FourState {
                p13,
                p31,
                p32,
                p23: 0.5,
                p14,
            })
        };
        let mut c = config();
        set_forward(&mut c, |l| l.loss = fs(0.6, 0.5, 0.1, 0.1));
        let e = err(&c);
        assert_eq!(e.field, "topology.forward.loss");
        assert!(e.allowed.contains("p13 + p14 <= 1"));
        let mut c = config();
        set_forward(&mut c, |l| l.loss = fs(0.1, 0.1, 0.7, 0.4));
        assert!(err(&c).allowed.contains("p31 + p32 <= 1"));
    }

    #[test]
    fn overhead_cap() {
        let mut c = config();
        set_forward(&mut c, |l| l.overhead = Bytes(1001));
        let e = err(&c);
        assert_eq!(e.field, "topology.forward.overhead");
        assert!(e.allowed.contains("1000B"));
    }

    #[test]
    fn changes_order_and_content() {
        let ch = |ms: u64, rate| LinkChange {
            at: SimTime(ms * 1_000_000),
            rate,
            delay: None,
            loss: None,
            corruption: None,
        };
        let mut c = config();
        set_forward(&mut c, |l| {
            l.changes = vec![ch(10, Some(Rate(0))), ch(5, Some(Rate(1)))]
        });
        let e = err(&c);
        assert_eq!(e.field, "topology.forward.changes[1].at");
        assert!(e.allowed.contains("time order"));
        let mut c = config();
        set_forward(&mut c, |l| l.changes = vec![ch(10, None)]);
        assert_eq!(err(&c).field, "topology.forward.changes[0]");
    }

    #[test]
    fn flow_rules() {
        let mut c = config();
        c.flows[0].pair = 1;
        let e = err(&c);
        assert_eq!(e.field, "flows[0].pair");
        assert!(e.allowed.contains("[0, 0]"));
        let mut c = config();
        set_cbr(&mut c, |r, _, _| *r = Rate(0));
        assert_eq!(err(&c).field, "flows[0].rate");
        let mut c = config();
        set_cbr(&mut c, |_, s, _| *s = Bytes(0));
        assert_eq!(err(&c).field, "flows[0].size");
        let mut c = config();
        set_cbr(&mut c, |_, s, _| *s = Bytes(65_508));
        assert!(err(&c).allowed.contains("65507B"));
        let mut c = config();
        set_cbr(&mut c, |_, _, n| *n = 0);
        assert_eq!(err(&c).field, "flows[0].count");
    }

    #[test]
    fn handover_rules() {
        let h = |ms: u64, pair| Handover {
            at: SimTime(ms * 1_000_000),
            pair,
            forward: link(),
            reverse: link(),
            address: AddressChange::Ip,
        };
        let mut c = config();
        c.topology = Topology::TwoHosts {
            forward: link(),
            reverse: link(),
            handovers: vec![h(5, 1)],
        };
        let e = err(&c);
        assert_eq!(e.field, "topology.handovers[0].pair");
        let mut c = config();
        c.topology = Topology::TwoHosts {
            forward: link(),
            reverse: link(),
            handovers: vec![h(5, 0), h(5, 0)],
        };
        assert_eq!(err(&c).field, "topology.handovers[1].at");
        let mut c = config();
        c.topology = Topology::TwoHosts {
            forward: link(),
            reverse: link(),
            handovers: vec![h(6, 0), h(5, 0)],
        };
        assert!(err(&c).allowed.contains("sorted"));
    }

    #[test]
    fn dumbbell_paths() {
        let mut c = config();
        let mut bad = link();
        bad.rate = Rate(0);
        c.topology = Topology::Dumbbell {
            pairs: vec![
                PairLinks {
                    client_up: link(),
                    client_down: link(),
                    server_up: link(),
                    server_down: link(),
                },
                PairLinks {
                    client_up: link(),
                    client_down: link(),
                    server_up: link(),
                    server_down: bad,
                },
            ],
            bottleneck_forward: link(),
            bottleneck_reverse: link(),
            handovers: vec![],
        };
        assert_eq!(err(&c).field, "topology.pairs[1].server_down.rate");
        c.topology = Topology::Dumbbell {
            pairs: vec![],
            bottleneck_forward: link(),
            bottleneck_reverse: link(),
            handovers: vec![],
        };
        assert_eq!(err(&c).field, "topology.pairs");
    }
}

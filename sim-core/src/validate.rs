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
    AppConfig, Config, FlowConfig, Handover, LinkChange, LinkConfig, LossModel, Topology,
};
use crate::units::{format_bytes, format_duration, format_rate};
use std::fmt;

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
/// Most pairs a dumbbell may have.
pub(crate) const MAX_PAIRS: usize = 10_000;
/// Largest per-packet link overhead, in bytes.
pub(crate) const MAX_OVERHEAD: u64 = 1000;
/// Largest UDP payload of an IPv4 datagram (65535 - 20 - 8).
pub(crate) const MAX_UDP_PAYLOAD: u64 = 65_507;

pub(crate) const PROBABILITY: &str =
    "a probability in [0, 1]: a number such as 0.02 or a percentage string such as \"2%\"";

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

/// Shortest decimal that reads back as `v`.
pub(crate) fn fmt_f64(v: f64) -> String {
    format!("{v:?}")
}

pub(crate) fn check_probability(p: f64, field: &str) -> Result<(), ConfigError> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        Err(ConfigError::new(field, fmt_f64(p), PROBABILITY))
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
    match *loss {
        LossModel::None => Ok(()),
        LossModel::Bernoulli { p } => check_probability(p, &path("p")),
        LossModel::Periodic { every, offset } => {
            if every == 0 {
                return Err(ConfigError::new(
                    path("every"),
                    "0",
                    "an integer >= 1 (every n-th packet is lost)",
                ));
            }
            check_toml_int(every, &path("every"), "an integer")?;
            if offset >= every {
                return Err(ConfigError::new(
                    path("offset"),
                    offset.to_string(),
                    format!("an integer in [0, every - 1] = [0, {}]", every - 1),
                ));
            }
            Ok(())
        }
        LossModel::GilbertElliott { p, r, k, h } => {
            for (key, v) in [("p", p), ("r", r), ("k", k), ("h", h)] {
                check_probability(v, &path(key))?;
            }
            if p + r <= 0.0 {
                return Err(ConfigError::new(
                    path(""),
                    format!("p = {}, r = {}", fmt_f64(p), fmt_f64(r)),
                    "p + r > 0 (with p = r = 0 the chain never leaves its first state)",
                ));
            }
            Ok(())
        }
        LossModel::FourState {
            p13,
            p31,
            p32,
            p23,
            p14,
        } => {
            for (key, v) in [
                ("p13", p13),
                ("p31", p31),
                ("p32", p32),
                ("p23", p23),
                ("p14", p14),
            ] {
                check_probability(v, &path(key))?;
            }
            if p13 + p14 > 1.0 {
                return Err(ConfigError::new(
                    path(""),
                    format!("p13 + p14 = {}", fmt_f64(p13 + p14)),
                    "p13 + p14 <= 1 (they leave state 1)",
                ));
            }
            if p31 + p32 > 1.0 {
                return Err(ConfigError::new(
                    path(""),
                    format!("p31 + p32 = {}", fmt_f64(p31 + p32)),
                    "p31 + p32 <= 1 (they leave state 3)",
                ));
            }
            Ok(())
        }
    }
}

/// Rules of one scheduled change; `path` as for [`check_loss`], on the change.
pub(crate) fn check_change(change: &LinkChange, path: PathFn) -> Result<(), ConfigError> {
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
    if let Some(loss) = &change.loss {
        check_loss(loss, &|k| join(&path("loss"), k))?;
    }
    if let Some(c) = change.corruption {
        check_probability(c, &path("corruption"))?;
    }
    Ok(())
}

/// Rules of a link list of changes; `path` names the `changes` array.
pub(crate) fn check_changes(changes: &[LinkChange], path: &str) -> Result<(), ConfigError> {
    for (i, c) in changes.iter().enumerate() {
        let item = format!("{path}[{i}]");
        check_change(c, &|k| join(&item, k))?;
        if i > 0 && c.at < changes[i - 1].at {
            return Err(ConfigError::new(
                format!("{item}.at"),
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

/// Rules of a link. `path(key)` names the field each key of the link was written at.
pub(crate) fn check_link(link: &LinkConfig, path: PathFn) -> Result<(), ConfigError> {
    if link.rate.0 == 0 {
        return Err(ConfigError::new(
            path("rate"),
            format_rate(link.rate),
            "a rate > 0 (\"0bps\", a link that is down, is only allowed in `changes`)",
        ));
    }
    if link.overhead.0 > MAX_OVERHEAD {
        return Err(ConfigError::new(
            path("overhead"),
            format_bytes(link.overhead),
            "a per-packet overhead of at most 1000B",
        ));
    }
    if let Some(b) = link.queue.bytes {
        check_toml_int(b, &join(&path("queue"), "bytes"), "a byte count")?;
    }
    if let Some(p) = link.queue.packets {
        check_toml_int(p, &join(&path("queue"), "packets"), "a packet count")?;
    }
    check_loss(&link.loss, &|k| join(&path("loss"), k))?;
    check_probability(link.corruption, &path("corruption"))?;
    check_changes(&link.changes, &path("changes"))
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
            rate, size, count, ..
        } => {
            if rate.0 == 0 {
                return Err(ConfigError::new(
                    path("rate"),
                    format_rate(*rate),
                    "a rate > 0",
                ));
            }
            if size.0 == 0 || size.0 > MAX_UDP_PAYLOAD {
                return Err(ConfigError::new(
                    path("size"),
                    format_bytes(*size),
                    "a UDP payload size in [1B, 65507B]",
                ));
            }
            if *count == 0 {
                return Err(ConfigError::new(
                    path("count"),
                    "0",
                    "a number of datagrams >= 1",
                ));
            }
            check_toml_int(*count, &path("count"), "a number of datagrams")
        }
        AppConfig::QuicBulk(q) => q
            .validate()
            .map_err(|(field, value, allowed)| ConfigError::new(path(field), value, allowed)),
        AppConfig::QuicConnections { quic, connections } => {
            quic.validate()
                .map_err(|(field, value, allowed)| ConfigError::new(path(field), value, allowed))?;
            check_connections(connections, path)
        }
    }
}

/// Rules of a `quic_connections` list (`docs/lifecycle.md`).
fn check_connections(
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
        if c.streams == 0 {
            return Err(ConfigError::new(
                at("streams"),
                "0",
                "a number of streams >= 1",
            ));
        }
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

impl Config {
    /// Checks every rule of the scenario format that can be checked on a typed `Config`:
    /// `runs >= 1`, positive time limit, sample interval and event budget, static link
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
        if self.runs == 0 {
            return Err(ConfigError::new("runs", "0", "an integer >= 1"));
        }
        if self.sim.time_limit.0 == 0 {
            return Err(ConfigError::new(
                "sim.time_limit",
                format_duration(self.sim.time_limit),
                "a time > 0",
            ));
        }
        if self.sim.max_events == 0 {
            return Err(ConfigError::new("sim.max_events", "0", "an integer >= 1"));
        }
        check_toml_int(self.sim.max_events, "sim.max_events", "an integer")?;
        if self.output.sample_interval.0 == 0 {
            return Err(ConfigError::new(
                "output.sample_interval",
                format_duration(self.output.sample_interval),
                "a time > 0",
            ));
        }
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
                if pairs.is_empty() || pairs.len() > MAX_PAIRS {
                    return Err(ConfigError::new(
                        "topology.pairs",
                        pairs.len().to_string(),
                        format!("1 to {MAX_PAIRS} pairs"),
                    ));
                }
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
        Ok(())
    }
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
            rate: Rate(10_000_000),
            delay: SimDuration::from_millis(10),
            overhead: Bytes(28),
            queue: QueueLimit {
                bytes: Some(25_000),
                packets: None,
            },
            loss: LossModel::None,
            loss_position: LossPosition::Ingress,
            corruption: 0.0,
            jitter: None,
            changes: vec![],
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
        set_forward(&mut c, |l| l.loss = LossModel::Bernoulli { p: -0.1 });
        assert_eq!(err(&c).field, "topology.forward.loss.p");
        let mut c = config();
        set_forward(&mut c, |l| l.loss = LossModel::Bernoulli { p: f64::NAN });
        assert_eq!(err(&c).field, "topology.forward.loss.p");
        let mut c = config();
        set_forward(&mut c, |l| {
            l.loss = LossModel::GilbertElliott {
                p: 0.1,
                r: 0.2,
                k: 2.0,
                h: 0.0,
            }
        });
        assert_eq!(err(&c).field, "topology.forward.loss.k");
    }

    #[test]
    fn ge_p_plus_r_zero() {
        let mut c = config();
        set_forward(&mut c, |l| {
            l.loss = LossModel::GilbertElliott {
                p: 0.0,
                r: 0.0,
                k: 1.0,
                h: 0.0,
            }
        });
        let e = err(&c);
        assert_eq!(e.field, "topology.forward.loss");
        assert!(e.allowed.contains("p + r > 0"));
    }

    #[test]
    fn periodic_rules() {
        let mut c = config();
        set_forward(&mut c, |l| {
            l.loss = LossModel::Periodic {
                every: 0,
                offset: 0,
            }
        });
        let e = err(&c);
        assert_eq!(e.field, "topology.forward.loss.every");
        assert!(e.allowed.contains(">= 1"));
        let mut c = config();
        set_forward(&mut c, |l| {
            l.loss = LossModel::Periodic {
                every: 4,
                offset: 4,
            }
        });
        let e = err(&c);
        assert_eq!(e.field, "topology.forward.loss.offset");
        assert!(e.allowed.contains("[0, 3]"));
    }

    #[test]
    fn four_state_sums() {
        let fs = |p13, p14, p31, p32| LossModel::FourState {
            p13,
            p31,
            p32,
            p23: 0.5,
            p14,
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

//! The raw TOML layer: one serde struct per table of the format, and typed readers of
//! single values that name the field on error.
//!
//! Every raw struct denies unknown keys and holds its leaves as `toml::Value`, so serde
//! checks the keys of exactly one table at a time (the error then names the full path) and
//! the readers below check types, units and ranges with messages of our own.

use crate::time::{SimDuration, SimTime};
use crate::units::{parse_bytes, parse_duration, parse_rate, Bytes, Rate};
use crate::validate::{join, ConfigError, PROBABILITY};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use toml::Value;

/// Top level of a scenario file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScenario {
    pub name: Option<Value>,
    pub description: Option<Value>,
    pub seed: Option<Value>,
    pub runs: Option<Value>,
    pub sim: Option<Value>,
    pub topology: Option<Value>,
    pub flows: Option<Value>,
    pub output: Option<Value>,
    /// Expanded by the caller before the document is built; listed so that a typo's error
    /// message shows it among the expected keys.
    #[allow(dead_code)]
    pub sweep: Option<Value>,
}

/// `[sim]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSim {
    pub time_limit: Option<Value>,
    pub max_events: Option<Value>,
}

/// `[output]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOutput {
    pub series: Option<Value>,
    pub sample_interval: Option<Value>,
}

/// `[topology]` with `kind = "two_hosts"`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTwoHosts {
    #[allow(dead_code)]
    pub kind: Value,
    pub link: Option<Value>,
    pub forward: Option<Value>,
    pub reverse: Option<Value>,
    pub handovers: Option<Value>,
}

/// `[topology]` with `kind = "dumbbell"`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDumbbell {
    #[allow(dead_code)]
    pub kind: Value,
    pub pairs: Option<Value>,
    pub bottleneck: Option<Value>,
    pub bottleneck_forward: Option<Value>,
    pub bottleneck_reverse: Option<Value>,
    pub access: Option<Value>,
    pub client_access: Option<Value>,
    pub server_access: Option<Value>,
    pub pair: Option<Value>,
    pub handovers: Option<Value>,
}

/// One `[[topology.pair]]` entry of a dumbbell.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPairEntry {
    pub index: Option<Value>,
    pub client_up: Option<Value>,
    pub client_down: Option<Value>,
    pub server_up: Option<Value>,
    pub server_down: Option<Value>,
}

/// One `[[topology.handovers]]` entry.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawHandover {
    pub at: Option<Value>,
    pub pair: Option<Value>,
    pub address: Option<Value>,
    pub link: Option<Value>,
    pub forward: Option<Value>,
    pub reverse: Option<Value>,
}

/// A link table. Layers of these are merged key by key.
#[derive(Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLink {
    pub rate: Option<Value>,
    pub delay: Option<Value>,
    pub overhead: Option<Value>,
    pub queue: Option<Value>,
    pub loss: Option<Value>,
    pub loss_position: Option<Value>,
    pub corruption: Option<Value>,
    pub jitter: Option<Value>,
    pub changes: Option<Value>,
}

/// `queue = { bytes, packets }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawQueue {
    pub bytes: Option<Value>,
    pub packets: Option<Value>,
}

/// `jitter = { amount, distribution, reorder }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawJitter {
    pub amount: Option<Value>,
    pub distribution: Option<Value>,
    pub reorder: Option<Value>,
}

/// One entry of a link's `changes`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawChange {
    pub at: Option<Value>,
    pub rate: Option<Value>,
    pub delay: Option<Value>,
    pub loss: Option<Value>,
    pub corruption: Option<Value>,
}

/// `loss = { model = "none" }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLossNone {
    #[allow(dead_code)]
    pub model: Value,
}

/// `loss = { model = "bernoulli", p }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBernoulli {
    #[allow(dead_code)]
    pub model: Value,
    pub p: Option<Value>,
}

/// `loss = { model = "periodic", every, offset }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPeriodic {
    #[allow(dead_code)]
    pub model: Value,
    pub every: Option<Value>,
    pub offset: Option<Value>,
}

/// `loss = { model = "gilbert_elliott", p, r, k, h }` or `{ ..., gemodel }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGilbertElliott {
    #[allow(dead_code)]
    pub model: Value,
    pub p: Option<Value>,
    pub r: Option<Value>,
    pub k: Option<Value>,
    pub h: Option<Value>,
    pub gemodel: Option<Value>,
}

/// `loss = { model = "four_state", p13, p31, p32, p23, p14 }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFourState {
    #[allow(dead_code)]
    pub model: Value,
    pub p13: Option<Value>,
    pub p31: Option<Value>,
    pub p32: Option<Value>,
    pub p23: Option<Value>,
    pub p14: Option<Value>,
}

/// `[[flows]]` with `kind = "cbr"`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCbr {
    #[allow(dead_code)]
    pub kind: Value,
    pub pair: Option<Value>,
    pub background: Option<Value>,
    pub direction: Option<Value>,
    pub rate: Option<Value>,
    pub size: Option<Value>,
    pub start: Option<Value>,
    pub duration: Option<Value>,
    pub count: Option<Value>,
}

/// `[[flows]]` with `kind = "quic_bulk"`: `pair` and `background` as for every flow; every
/// other key is a field of [`crate::quic::QuicConfig`] (unknown keys are rejected when that
/// table is deserialised).
#[derive(Deserialize)]
pub(super) struct RawQuicBulk {
    #[allow(dead_code)]
    pub kind: Value,
    pub pair: Option<Value>,
    pub background: Option<Value>,
    #[serde(flatten)]
    pub quic: toml::Table,
}

/// `[[flows]]` with `kind = "quic_connections"`: like `quic_bulk` (every other key is a
/// field of [`crate::quic::QuicConfig`], shared by the connections), plus the
/// `[[flows.connections]]` list.
#[derive(Deserialize)]
pub(super) struct RawQuicConnections {
    #[allow(dead_code)]
    pub kind: Value,
    pub pair: Option<Value>,
    pub background: Option<Value>,
    pub connections: Option<Value>,
    #[serde(flatten)]
    pub quic: toml::Table,
}

/// One `[[flows.connections]]` entry.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawConnection {
    pub start: Option<Value>,
    pub gap: Option<Value>,
    pub resume: Option<Value>,
    pub bytes: Option<Value>,
    pub streams: Option<Value>,
    pub request_size: Option<Value>,
    pub close: Option<Value>,
}

/// What `value` shows of a TOML value: strings without quotes, everything else as inline
/// TOML, cut at 120 characters.
pub(super) fn render(v: &Value) -> String {
    let s = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if s.chars().count() > 120 {
        let mut cut: String = s.chars().take(117).collect();
        cut.push_str("...");
        cut
    } else {
        s
    }
}

/// The value shown for a required key that is absent.
pub(super) const MISSING: &str = "(missing)";

/// Deserializes the table `v` (at `path`) into the raw struct `T`, which describes `what`.
/// Unknown keys are reported at `path.key`, with serde's list of the expected keys.
pub(super) fn from_value<T: DeserializeOwned>(
    v: &Value,
    path: &str,
    what: &str,
) -> Result<T, ConfigError> {
    let Value::Table(table) = v else {
        return Err(ConfigError::new(
            path,
            render(v),
            format!("a table ({what})"),
        ));
    };
    v.clone().try_into::<T>().map_err(|e| {
        let msg = e.message().to_string();
        if let Some(key) = msg
            .strip_prefix("unknown field `")
            .and_then(|rest| rest.split_once('`'))
            .map(|(k, _)| k.to_string())
        {
            let value = table.get(&key).map(render).unwrap_or_default();
            ConfigError::new(join(path, &key), value, format!("a key of {what}: {msg}"))
        } else {
            ConfigError::new(path, render(v), format!("{what}: {msg}"))
        }
    })
}

/// The `expected` text of a unit parser.
fn unit_expected<T>(r: Result<T, crate::units::UnitError>) -> String {
    r.err().map(|e| e.expected).unwrap_or_default()
}

pub(super) fn rate_expected() -> String {
    unit_expected(parse_rate(""))
}

pub(super) fn time_expected() -> String {
    unit_expected(parse_duration(""))
}

pub(super) fn size_expected() -> String {
    unit_expected(parse_bytes(""))
}

/// A rate: a string with a unit, or an integer number of bit/s.
pub(super) fn get_rate(v: &Value, path: &str) -> Result<Rate, ConfigError> {
    match v {
        Value::String(s) => parse_rate(s).map_err(|e| ConfigError::new(path, s, e.expected)),
        Value::Integer(n) if *n >= 0 => Ok(Rate(*n as u64)),
        _ => Err(ConfigError::new(path, render(v), rate_expected())),
    }
}

/// A duration: a string with a unit, or an integer number of nanoseconds.
pub(super) fn get_duration(v: &Value, path: &str) -> Result<SimDuration, ConfigError> {
    match v {
        Value::String(s) => parse_duration(s).map_err(|e| ConfigError::new(path, s, e.expected)),
        Value::Integer(n) if *n >= 0 => Ok(SimDuration(*n as u64)),
        _ => Err(ConfigError::new(path, render(v), time_expected())),
    }
}

/// An instant since the start of the run, written like a duration.
pub(super) fn get_time(v: &Value, path: &str) -> Result<SimTime, ConfigError> {
    get_duration(v, path).map(|d| SimTime(d.0))
}

/// A size: a string with a unit, or an integer number of bytes.
pub(super) fn get_bytes(v: &Value, path: &str) -> Result<Bytes, ConfigError> {
    match v {
        Value::String(s) => parse_bytes(s).map_err(|e| ConfigError::new(path, s, e.expected)),
        Value::Integer(n) if *n >= 0 => Ok(Bytes(*n as u64)),
        _ => Err(ConfigError::new(path, render(v), size_expected())),
    }
}

/// An integer in `[min, max]`; `allowed` describes the range.
pub(super) fn get_int(
    v: &Value,
    path: &str,
    min: i64,
    max: i64,
    allowed: &str,
) -> Result<i64, ConfigError> {
    match v {
        Value::Integer(n) if (min..=max).contains(n) => Ok(*n),
        _ => Err(ConfigError::new(path, render(v), allowed)),
    }
}

/// `true` or `false`.
pub(super) fn get_bool(v: &Value, path: &str) -> Result<bool, ConfigError> {
    v.as_bool()
        .ok_or_else(|| ConfigError::new(path, render(v), "true or false"))
}

/// Any string.
pub(super) fn get_string(v: &Value, path: &str) -> Result<String, ConfigError> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| ConfigError::new(path, render(v), "a string"))
}

/// One of the strings `choices`.
pub(super) fn get_choice<'a>(
    v: &Value,
    path: &str,
    choices: &[&'a str],
) -> Result<&'a str, ConfigError> {
    let allowed = || {
        let list: Vec<String> = choices.iter().map(|c| format!("\"{c}\"")).collect();
        format!("one of {}", list.join(", "))
    };
    let s = v
        .as_str()
        .ok_or_else(|| ConfigError::new(path, render(v), allowed()))?;
    choices
        .iter()
        .find(|c| **c == s)
        .copied()
        .ok_or_else(|| ConfigError::new(path, s, allowed()))
}

/// A decimal number written with digits and at most one point: (mantissa, digits after the
/// point), e.g. "12.5" -> (125, 1). `None` for anything else (signs, exponents, nan).
pub(super) fn parse_decimal(s: &str) -> Option<(u128, u32)> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if (int.is_empty() && frac.is_empty())
        || !int.chars().all(|c| c.is_ascii_digit())
        || !frac.chars().all(|c| c.is_ascii_digit())
        || frac.len() > 30
    {
        return None;
    }
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    let mantissa = if digits.is_empty() {
        0
    } else {
        digits.parse().ok()?
    };
    Some((mantissa, frac.len() as u32))
}

/// `"2.5%"` -> 0.025, correctly rounded (the decimal is scaled before the one conversion
/// to binary). `None` unless the string is a plain decimal followed by `%`.
pub(super) fn parse_percent(s: &str) -> Option<f64> {
    let num = s.trim().strip_suffix('%')?.trim_end();
    parse_decimal(num)?;
    format!("{num}e-2").parse().ok()
}

/// A probability: a number, or a percentage string. The range is checked by the caller
/// (through [`crate::validate`]) so that every route gives the same message.
pub(super) fn get_prob(v: &Value, path: &str) -> Result<f64, ConfigError> {
    let p = match v {
        Value::Float(f) => Some(*f),
        Value::Integer(n) => Some(*n as f64),
        Value::String(s) => parse_percent(s),
        _ => None,
    };
    let p = p.ok_or_else(|| ConfigError::new(path, render(v), PROBABILITY))?;
    crate::validate::check_probability(p, path).map_err(|mut e| {
        e.value = render(v);
        e
    })?;
    Ok(p)
}

/// A required key: its value, or an error saying it is missing.
pub(super) fn required<'v>(
    v: &'v Option<Value>,
    path: &str,
    allowed: &str,
) -> Result<&'v Value, ConfigError> {
    v.as_ref()
        .ok_or_else(|| ConfigError::new(path, MISSING, format!("{allowed} (required)")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_is_correctly_rounded() {
        assert_eq!(parse_percent("2%"), Some(0.02));
        assert_eq!(parse_percent("0.1%"), Some(0.001));
        assert_eq!(parse_percent("12.5 %"), Some(0.125));
        assert_eq!(parse_percent("-1%"), None);
        assert_eq!(parse_percent("2"), None);
        assert_eq!(parse_percent("nan%"), None);
    }

    #[test]
    fn decimal() {
        assert_eq!(parse_decimal("12.5"), Some((125, 1)));
        assert_eq!(parse_decimal("0.05"), Some((5, 2)));
        assert_eq!(parse_decimal("1"), Some((1, 0)));
        assert_eq!(parse_decimal("."), None);
        assert_eq!(parse_decimal("1e3"), None);
    }
}

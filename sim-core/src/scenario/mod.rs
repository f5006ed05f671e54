//! The TOML scenario format: parsing, validation into a typed [`Config`], sweeps, and the
//! way back ([`to_toml`]).
//!
//! The format is documented key by key in `docs/scenario-format.md`. In short:
//!
//! ```toml
//! name = "ge-5pct"
//! seed = 7
//! [topology]
//! kind = "two_hosts"
//! link = { rate = "10Mbps", delay = "20ms" }              # both directions
//! forward = { loss = { model = "gilbert_elliott", p = 0.00125, r = 0.125, h = 0.5, k = 0.955 } }
//! [[flows]]
//! kind = "cbr"
//! rate = "1Mbps"
//! duration = "5s"
//! [sweep]
//! "topology.link.delay" = ["10ms", "50ms"]
//! ```
//!
//! Every key of every table is declared once, in [`mod@schema`] (unit kind, default,
//! allowed range, help); [`schema()`] returns the descriptors for tools, and
//! [`docs`] generates the key tables of the format's documentation from them.
//!
//! [`parse_str`] reads the TOML (syntax through `toml`; keys against the descriptors, one
//! table at a time so that errors carry the full dotted path), applies the defaults, merges
//! the link layers, resolves `"xBDP"` queues and flow durations, checks every rule once
//! (the same rules as [`Config::validate`], reported at the key where the value was
//! written), and expands the `[sweep]` grid. Every failure is a [`ConfigError`]; nothing
//! panics on bad input.
//!
//! [`to_toml`] writes a `Config` as a scenario that `parse_str` reads back to an equal
//! `Config` (the resolved shape: explicit links, byte queues, datagram counts).

mod build;
pub mod docs;
pub mod paper;
mod raw;
mod sweep;

pub use crate::validate::schema;
pub use schema::schema;

use crate::config::Config;
pub use crate::validate::ConfigError;
use crate::validate::MAX_TOML_INT;
use toml::{Table, Value};

/// A parsed scenario: the base configuration and the points of its sweep grid.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// The document without its `[sweep]` table.
    pub base: Config,
    /// The sweep grid in order (first key slowest). Without a sweep, one point equal to
    /// `base` with no params.
    pub points: Vec<SweepPoint>,
    /// The `[paper]` table of a reproduction scenario ([`paper`]): not part of any run.
    pub paper: Option<paper::Paper>,
}

/// One point of a sweep grid.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPoint {
    /// `(key, value)` for every sweep key, in the order of `[sweep]`: the key as written
    /// (`"topology.link.loss"`) and the value as written (`"0.02"`; strings without their
    /// quotes, tables and arrays as inline TOML).
    pub params: Vec<(String, String)>,
    /// The configuration at this point.
    pub config: Config,
}

/// 1-based line and column (in characters) of byte offset `pos`.
fn line_col(text: &str, pos: usize) -> (usize, usize, &str) {
    let pos = pos.min(text.len());
    let before = text.get(..pos).unwrap_or(text);
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let line_no = before.matches('\n').count() + 1;
    let col = before[line_start..].chars().count() + 1;
    let line_end = text[line_start..]
        .find('\n')
        .map(|i| line_start + i)
        .unwrap_or(text.len());
    (
        line_no,
        col,
        text[line_start..line_end].trim_end_matches('\r'),
    )
}

/// A TOML syntax error: the position (and the table it is in) as the field, the line as
/// the value, toml's message as what is allowed.
fn syntax_error(text: &str, e: &toml::de::Error) -> ConfigError {
    let Some(span) = e.span() else {
        return ConfigError::new("(document)", "", format!("valid TOML: {}", e.message()));
    };
    let (line, col, content) = line_col(text, span.start);
    // The last table header above the error's line.
    let above = text
        .get(..span.start)
        .unwrap_or(text)
        .rsplit_once('\n')
        .map(|(a, _)| a)
        .unwrap_or("");
    let header = above
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|h| format!(" (in {h})"))
        .unwrap_or_default();
    let mut value = content.trim().to_string();
    if value.chars().count() > 120 {
        value = value.chars().take(117).collect::<String>() + "...";
    }
    ConfigError::new(
        format!("line {line}, column {col}{header}"),
        value,
        format!("valid TOML: {}", e.message()),
    )
}

/// Parses a scenario file: validates it into its base [`Config`] and expands its sweep.
///
/// Errors name the full dotted field (`topology.forward.loss.p`, `flows[0].rate`,
/// `sweep."topology.link.delay"[1] -> topology.forward.queue`), the value and what is
/// allowed there. The document without `[sweep]` must be valid on its own (it is
/// [`Scenario::base`]); each sweep point is then validated as a whole.
pub fn parse_str(toml_text: &str) -> Result<Scenario, ConfigError> {
    let mut doc: Table = toml_text.parse().map_err(|e| syntax_error(toml_text, &e))?;
    let sweep = doc.remove("sweep");
    let paper_table = doc.remove("paper");
    let base = build::build(&doc)?;
    let Some(sweep) = sweep else {
        let paper = paper_table
            .map(|p| paper::parse(&p, &Vec::new()))
            .transpose()?;
        return Ok(Scenario {
            points: vec![SweepPoint {
                params: Vec::new(),
                config: base.clone(),
            }],
            base,
            paper,
        });
    };
    let keys = sweep::parse_sweep(toml_text, &sweep)?;
    let sweep_values: paper::SweepValues = keys
        .iter()
        .map(|k| (k.written.clone(), k.shown.clone()))
        .collect();
    let paper = paper_table
        .map(|p| paper::parse(&p, &sweep_values))
        .transpose()?;
    let mut points = Vec::new();
    let mut idx = vec![0usize; keys.len()];
    loop {
        let mut point_doc = doc.clone();
        let mut params = Vec::with_capacity(keys.len());
        for (k, &i) in keys.iter().zip(&idx) {
            let v = k.values[i].clone();
            params.push((k.written.clone(), k.shown[i].clone()));
            sweep::substitute(&mut point_doc, k, v)?;
        }
        let config = build::build(&point_doc).map_err(|e| sweep::attribute(e, &keys, &idx))?;
        points.push(SweepPoint { params, config });
        // Odometer: the last key moves fastest.
        let mut d = keys.len();
        loop {
            if d == 0 {
                return Ok(Scenario {
                    base,
                    points,
                    paper,
                });
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < keys[d].values.len() {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// Writes `cfg` as a scenario file that [`parse_str`] turns back into an equal `Config`.
///
/// The output is the resolved shape: every link written out in full (two_hosts `forward` /
/// `reverse`, dumbbell `bottleneck_forward` / `bottleneck_reverse` and one
/// `[[topology.pair]]` entry per pair), queues in bytes and packets, flows as datagram
/// counts, loss models as tables. A seed above 2^63 - 1 is written as a decimal string.
/// Fails only for a `Config` that [`Config::validate`] rejects as too large for TOML.
pub fn to_toml(cfg: &Config) -> Result<String, ConfigError> {
    let mut c = cfg.clone();
    let big_seed = c.seed > MAX_TOML_INT;
    if big_seed {
        c.seed = 0;
    }
    let mut v = Value::try_from(&c).map_err(|e| {
        ConfigError::new(
            "(config)",
            cfg.name.clone(),
            format!("a Config whose numbers fit TOML's signed 64-bit integers ({e})"),
        )
    })?;
    let Value::Table(top) = &mut v else {
        return Err(ConfigError::new(
            "(config)",
            "",
            "a Config that serialises to a table",
        ));
    };
    if big_seed {
        top.insert("seed".into(), Value::String(cfg.seed.to_string()));
    }
    // Flows: the app's keys sit next to pair/background in the format (a transport flow:
    // `transport`, its table and `workload`).
    if let Some(Value::Array(flows)) = top.get_mut("flows") {
        for f in flows.iter_mut() {
            if let Value::Table(ft) = f {
                if let Some(Value::Table(app)) = ft.remove("app") {
                    ft.extend(app);
                }
            }
        }
    }
    // Dumbbell: `pairs` is a count in the format; the links go into [[topology.pair]].
    if let Some(Value::Table(topo)) = top.get_mut("topology") {
        if let Some(Value::Array(pairs)) = topo.remove("pairs") {
            let n = pairs.len();
            let entries: Vec<Value> = pairs
                .into_iter()
                .enumerate()
                .map(|(i, p)| {
                    let mut t = match p {
                        Value::Table(t) => t,
                        _ => Table::new(),
                    };
                    t.insert("index".into(), Value::Integer(i as i64));
                    Value::Table(t)
                })
                .collect();
            topo.insert("pairs".into(), Value::Integer(n as i64));
            topo.insert("pair".into(), Value::Array(entries));
        }
    }
    toml::to_string(&v).map_err(|e| {
        ConfigError::new(
            "(config)",
            cfg.name.clone(),
            format!("a Config that can be written as TOML ({e})"),
        )
    })
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod transport_tests;

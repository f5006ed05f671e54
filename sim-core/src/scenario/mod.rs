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
pub mod labels;
mod paired;
pub mod paper;
mod raw;
mod sweep;
#[cfg(test)]
mod trace_tests;
mod traces;
mod workload;

pub use traces::TraceLoader;

pub use crate::validate::schema;
pub use schema::schema;

use crate::config::Config;
use crate::registry::Registry;
pub use crate::validate::ConfigError;
use crate::validate::MAX_TOML_INT;
use toml::{Table, Value};

/// A parsed scenario: the base configuration and the points of its sweep grid.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// The document without its `[sweep]` table.
    pub base: Config,
    /// The sweep grid in order (first key slowest). Without a sweep, one point equal to
    /// `base` with no params. A paired comparison has one point per variant of each grid
    /// point ([`Scenario::variants`]).
    pub points: Vec<SweepPoint>,
    /// The `[paper]` table of a reproduction scenario ([`paper`]): not part of any run.
    pub paper: Option<paper::Paper>,
    /// A paired comparison (a flow with `transports = [...]`, `docs/paired.md`): the
    /// variants' names in order, the first the baseline; empty otherwise. Each grid point
    /// then has one point per variant, the variant fastest: point `g * V + v` is variant
    /// `v` of grid point `g` (`V` = [`Scenario::variant_count`]), with the sweep's params
    /// followed by `("transports", name)`. [`Scenario::base`] is the baseline's config.
    pub variants: Vec<String>,
}

impl Scenario {
    /// Whether the scenario is a paired comparison.
    pub fn is_paired(&self) -> bool {
        !self.variants.is_empty()
    }

    /// Variants per grid point: the number of transports compared, 1 if not paired.
    pub fn variant_count(&self) -> usize {
        self.variants.len().max(1)
    }

    /// The variant of `point` (0 = the baseline; always 0 if not paired).
    pub fn variant_of(&self, point: usize) -> usize {
        point % self.variant_count()
    }

    /// The grid point (of the `[sweep]` grid) that `point` belongs to.
    pub fn grid_point(&self, point: usize) -> usize {
        point / self.variant_count()
    }
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
/// [`Scenario::base`]); each sweep point is then validated as a whole. A flow with
/// `transports = [...]` makes the scenario a paired comparison: every grid point is
/// expanded into one point per transport, each validated on its own
/// ([`Scenario::variants`], `docs/paired.md`).
///
/// Controller names (`cc`) are those of [`Registry::builtin`]; [`parse_str_with`] takes
/// users' controllers too.
pub fn parse_str(toml_text: &str) -> Result<Scenario, ConfigError> {
    parse_str_with(toml_text, &Registry::builtin())
}

/// [`parse_str`] with the controller names of `registry` ([`crate::cc::registry`]): a
/// `cc` key may name a registered user controller, which every config of the scenario then
/// carries (resolved, [`Config::resolve_controllers`]); an unknown name is an error
/// listing the registry's names.
pub fn parse_str_with(toml_text: &str, registry: &Registry) -> Result<Scenario, ConfigError> {
    parse_document(toml_text, registry, None, None)
}

/// [`parse_str`] for a scenario whose links may name trace files (`rate = { trace =
/// "file.trace" }`, Mahimahi format, [`crate::config::trace`]): `load` returns a named
/// file's text (the CLI reads it relative to the scenario file's directory) or why it
/// cannot. Each trace is parsed (errors name the file and the line) and carried whole by
/// the config, with its digest. [`parse_str`] refuses a trace file with a message saying
/// it cannot be read there.
pub fn parse_str_with_traces(toml_text: &str, load: &TraceLoader) -> Result<Scenario, ConfigError> {
    parse_document(toml_text, &Registry::builtin(), None, Some(load))
}

/// [`parse_str`] with `overrides` (scenario key paths, as a `[sweep]` names them, and
/// their values) written into the document before its sweep is expanded: how `quicsim
/// reproduce` runs a combination of a `[paper]` table's unstated parameters
/// ([`paper::Paper::overrides`]). The seeds are the scenario's, so every combination runs
/// the same seeds. An error in an override names it (`override "topology.reverse.loss"`).
pub fn parse_str_overriding(
    toml_text: &str,
    overrides: &[(String, Value)],
) -> Result<Scenario, ConfigError> {
    parse_document(toml_text, &Registry::builtin(), Some(overrides), None)
}

/// Writes `value` at the scenario key path `key` (as a `[sweep]` names it) in `doc`.
fn apply_override(doc: &mut Table, key: &str, value: Value) -> Result<(), ConfigError> {
    let field = format!("override \"{key}\"");
    let named = |e: ConfigError| ConfigError::new(field.clone(), e.value, e.allowed);
    let segs = sweep::parse_key(key).map_err(named)?;
    let k = sweep::SweepKey {
        written: key.to_string(),
        canonical: sweep::canonical(&segs),
        segs,
        values: Vec::new(),
        shown: Vec::new(),
    };
    sweep::substitute(doc, &k, value).map_err(named)
}

/// Checks that every alternative of every unstated parameter of `paper`, written into the
/// document without its sweep, gives a valid scenario: errors name the alternative
/// (`paper.unstated[0].values[1] -> topology.reverse.loss`).
fn check_unstated(
    doc: &Table,
    paper: &paper::Paper,
    registry: &Registry,
) -> Result<(), ConfigError> {
    for (i, u) in paper.unstated.iter().enumerate() {
        let form = if u.key.is_some() {
            "values"
        } else {
            "alternatives"
        };
        for (j, a) in u.alternatives.iter().enumerate() {
            let named = |e: ConfigError| {
                ConfigError::new(
                    format!("paper.unstated[{i}].{form}[{j}] -> {}", e.field),
                    e.value,
                    e.allowed,
                )
            };
            let mut d = doc.clone();
            for (k, v) in &a.set {
                apply_override(&mut d, k, v.clone()).map_err(named)?;
            }
            build_variants(&d, registry).map_err(named)?;
        }
    }
    Ok(())
}

fn parse_document(
    toml_text: &str,
    registry: &Registry,
    overrides: Option<&[(String, Value)]>,
    load: Option<&TraceLoader>,
) -> Result<Scenario, ConfigError> {
    let mut doc: Table = toml_text.parse().map_err(|e| syntax_error(toml_text, &e))?;
    if let Some(load) = load {
        traces::inline(&mut doc, load)?;
    }
    accept_resolved_shape(&mut doc);
    let sweep = doc.remove("sweep");
    let paper_table = doc.remove("paper");
    for (k, v) in overrides.unwrap_or_default() {
        apply_override(&mut doc, k, v.clone())?;
    }
    let (variants, base_configs) = build_variants(&doc, registry)?;
    let base = base_configs[0].clone();
    let with_variant = |params: &[(String, String)], v: usize| {
        let mut params = params.to_vec();
        if let Some(name) = variants.get(v) {
            params.push((paired::KEY.to_string(), name.clone()));
        }
        params
    };
    // A paired comparison's `transports` is a sweep key to the `[paper]` table (its points
    // carry it as a parameter), so a paper's points, plots and rankings can name it.
    let paired_values = |mut values: paper::SweepValues| {
        if !variants.is_empty() {
            values.push((paired::KEY.to_string(), variants.clone()));
        }
        values
    };
    let Some(sweep) = sweep else {
        let paper = paper_table
            .map(|p| paper::parse(&p, &paired_values(Vec::new())))
            .transpose()?;
        if let (Some(p), None) = (&paper, overrides) {
            check_unstated(&doc, p, registry)?;
        }
        let points = base_configs
            .into_iter()
            .enumerate()
            .map(|(v, config)| SweepPoint {
                params: with_variant(&[], v),
                config,
            })
            .collect();
        return Ok(Scenario {
            points,
            base,
            paper,
            variants,
        });
    };
    let keys = sweep::parse_sweep(toml_text, &sweep)?;
    let sweep_values: paper::SweepValues = paired_values(
        keys.iter()
            .map(|k| (k.written.clone(), k.shown.clone()))
            .collect(),
    );
    let paper = paper_table
        .map(|p| paper::parse(&p, &sweep_values))
        .transpose()?;
    if let (Some(p), None) = (&paper, overrides) {
        check_unstated(&doc, p, registry)?;
    }
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
        let (names, configs) =
            build_variants(&point_doc, registry).map_err(|e| sweep::attribute(e, &keys, &idx))?;
        if names != variants {
            let e = ConfigError::new(
                paired::KEY,
                names.join(", "),
                format!(
                    "the scenario's transports ({}): a sweep cannot change which transports are compared",
                    variants.join(", ")
                ),
            );
            return Err(sweep::attribute(e, &keys, &idx));
        }
        for (v, config) in configs.into_iter().enumerate() {
            points.push(SweepPoint {
                params: with_variant(&params, v),
                config,
            });
        }
        // Odometer: the last key moves fastest.
        let mut d = keys.len();
        loop {
            if d == 0 {
                let configs: Vec<&Config> = points.iter().map(|p| &p.config).collect();
                sweep::check_distinct(&keys, &configs, variants.len().max(1))?;
                return Ok(Scenario {
                    base,
                    points,
                    paper,
                    variants,
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

/// Reads the shape of `resolved_config` (the serde form of [`Config`] in the run output)
/// as the scenario format, so that resolved_config, written as TOML (its `null`s left
/// out), parses back to the same `Config` (issue 15 item 8): a flow's `app` table is
/// merged into the flow (unless one of its keys is also written flat: then `app` stays
/// and is reported as an unknown key), and a dumbbell's `pairs` written as the list of
/// its pairs' links becomes the count plus `[[topology.pair]]` entries, as [`to_toml`]
/// writes it.
fn accept_resolved_shape(doc: &mut Table) {
    if let Some(Value::Array(flows)) = doc.get_mut("flows") {
        for f in flows.iter_mut() {
            let Value::Table(ft) = f else { continue };
            let flat = match ft.get("app") {
                Some(Value::Table(app)) => app.keys().all(|k| !ft.contains_key(k)),
                _ => false,
            };
            if flat {
                if let Some(Value::Table(app)) = ft.remove("app") {
                    ft.extend(app);
                }
                // The serde form writes every QUIC key; the reader refuses the
                // sequence-only ones on a one-connection flow (issue 28 item 16).
                drop_sequence_only_defaults(ft);
            }
        }
    }
    if let Some(Value::Table(topo)) = doc.get_mut("topology") {
        if matches!(topo.get("pairs"), Some(Value::Array(_))) && !topo.contains_key("pair") {
            pairs_as_entries(topo);
        }
    }
}

/// A dumbbell's `pairs` list of pair links as the format writes it: `pairs` = the count
/// and one `[[topology.pair]]` entry per pair, with its `index`.
fn pairs_as_entries(topo: &mut Table) {
    if !matches!(topo.get("pairs"), Some(Value::Array(_))) {
        return;
    }
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

/// Builds a document without `[sweep]`: its variants' names (empty unless paired,
/// [`paired`]) and configs (one if not paired), each variant validated on its own, its
/// errors naming the variant.
fn build_variants(
    doc: &Table,
    registry: &Registry,
) -> Result<(Vec<String>, Vec<Config>), ConfigError> {
    let Some(exp) = paired::expand(doc, schema::TRANSPORTS)? else {
        return Ok((Vec::new(), vec![build::build(doc, registry)?]));
    };
    let mut configs = Vec::with_capacity(exp.variants.len());
    for (v, var) in exp.variants.iter().enumerate() {
        configs.push(build::build(&var.doc, registry).map_err(|e| paired::attribute(e, &exp, v))?);
    }
    Ok((exp.variants.into_iter().map(|v| v.name).collect(), configs))
}

/// A QUIC flow of one connection (bulk, web_page, a video that does not reconnect): its
/// resumption and 0-RTT keys, which the reader refuses there (issue 28 item 16), are left
/// out when at their defaults (a value away from the default fails validation before).
fn drop_sequence_only_defaults(ft: &mut Table) {
    if ft.get("transport").and_then(Value::as_str) != Some("quic") {
        return;
    }
    let one_connection = match ft.get("workload").and_then(Value::as_table) {
        Some(w) => match w.get("kind").and_then(Value::as_str) {
            Some("bulk" | "web_page") => true,
            Some("video") => {
                w.get("reconnections")
                    .and_then(Value::as_integer)
                    .unwrap_or(0)
                    == 0
            }
            _ => false,
        },
        None => false,
    };
    if !one_connection {
        return;
    }
    let Ok(Value::Table(d)) = Value::try_from(crate::config::quic::QuicConfig::default()) else {
        return;
    };
    let Some(Value::Table(q)) = ft.get_mut("quic") else {
        return;
    };
    let strip = |t: &mut Table| {
        for k in build::SEQUENCE_ONLY_QUIC_KEYS {
            if t.get(k).is_some() && t.get(k) == d.get(k) {
                t.remove(k);
            }
        }
    };
    if q.contains_key("client") && q.contains_key("server") {
        for side in ["client", "server"] {
            if let Some(Value::Table(t)) = q.get_mut(side) {
                strip(t);
            }
        }
    } else {
        strip(q);
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
                drop_sequence_only_defaults(ft);
            }
        }
    }
    // Dumbbell: `pairs` is a count in the format; the links go into [[topology.pair]].
    if let Some(Value::Table(topo)) = top.get_mut("topology") {
        pairs_as_entries(topo);
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
mod registry_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod transport_tests;

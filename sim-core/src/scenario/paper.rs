//! The `[paper]` table: what a reproduction scenario reproduces and what the paper
//! reported, typed in beside the setup.
//!
//! It describes the scenario and is never part of a run: it is not in [`crate::Config`]
//! (so it changes no job id, digest or `resolved_config`); `quicsim reproduce` reads it to
//! put our numbers beside the paper's. Its keys are documented in
//! `docs/scenario-format.md` ("Reproductions"); they are checked here, by hand, because
//! `point` tables take sweep keys as their keys.
//!
//! ```toml
//! [paper]
//! id = "000"
//! experiment = "Simple topology, 1 MB: default vs history initial window"
//! source = "Table 2"
//! metric = "flow0.ep0.completion_secs"
//! unit = "s"
//! baseline = { "flows.0.quic.initial_window.policy" = "default" }
//! plot = { x = "topology.link.delay", series = "flows.0.quic.initial_window.policy" }
//! [[paper.reported]]
//! point = { "flows.0.quic.initial_window.policy" = "default" }
//! value = 0.52
//! [[paper.unstated]]           # a testbed parameter the paper does not give
//! key = "topology.link.rate"
//! values = ["100Mbps", "1Gbps"]
//! why = "the paper gives no link rate"
//! ```
//!
//! `[[paper.unstated]]` entries ([`Unstated`]) are checked here against the sweep (a swept
//! key cannot be unstated) and each other; `scenario::parse_str` then builds every
//! alternative to check its values, and `scenario::parse_str_overriding` runs a
//! combination of them ([`Paper::combinations`], [`Paper::overrides`]).

use super::raw::render;
use super::sweep::{canonical, parse_key, Seg};
use crate::validate::ConfigError;
use serde::Serialize;
use toml::{Table, Value};

/// A scenario's `[paper]` table, validated.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Paper {
    /// The paper (`"000"` .. `"004"`, the file names in `seeds/`).
    pub id: String,
    /// What this scenario reproduces, one line.
    pub experiment: String,
    /// Where in the paper (`"Table 2"`, `"Fig. 7"`).
    pub source: String,
    /// The run metric compared with the paper (a name of
    /// [`crate::study::observations`], e.g. `flow0.ep0.completion_secs`).
    pub metric: String,
    /// Unit of the metric after `scale` (for tables and the figure's axis).
    pub unit: String,
    /// Factor applied to the metric before it is compared and shown (e.g. 1000 for ms).
    pub scale: f64,
    /// The sweep parameters that select the baseline of each effect: an effect is a
    /// reported point compared with the reported point that equals it except for these
    /// keys, which take these values. Empty: only absolute values are compared.
    pub baseline: Vec<(String, String)>,
    /// The figure: the sweep key on the x axis, the one drawn as separate lines.
    pub plot: Option<PaperPlot>,
    /// What the paper reported, per sweep point.
    pub reported: Vec<Reported>,
    /// Time-series figures.
    pub trace: Vec<Trace>,
    /// Rankings the paper claims without numbers (`[[paper.ranking]]`).
    pub ranking: Vec<Ranking>,
    /// Runs per sweep point that `quicsim reproduce` uses (the paper's count), instead of
    /// the scenario's `runs` (which `quicsim run` and the golden check use).
    pub runs: Option<u32>,
    /// Why our numbers may differ from the paper's, grounded in the model (written by
    /// whoever wrote the scenario; printed in the report).
    pub notes: String,
    /// Testbed parameters the paper leaves unstated, each with its plausible values
    /// (`[[paper.unstated]]`): `quicsim reproduce` judges every claim under each
    /// combination of them ([`Paper::combinations`]) and says whether its verdict is
    /// robust or depends on them.
    pub unstated: Vec<Unstated>,
}

/// Most combinations of `[[paper.unstated]]` alternatives a scenario may declare (each is
/// a whole sweep of the scenario).
pub const MAX_COMBINATIONS: usize = 64;

/// A testbed parameter the paper leaves unstated (`[[paper.unstated]]`): its plausible
/// alternatives, each a set of scenario keys and values applied to the scenario (before
/// its sweep) when `quicsim reproduce` runs that alternative.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Unstated {
    /// How the report names the parameter ("loss placement"; default: the `key`).
    pub name: String,
    /// The one scenario key of the `key = PATH, values = [..]` form (`None` for
    /// `alternatives`).
    pub key: Option<String>,
    /// Why it is unstated, in a line (printed in the report).
    pub why: String,
    /// The plausible alternatives, in the order given (at least two).
    pub alternatives: Vec<Alternative>,
}

/// One plausible alternative of an [`Unstated`] parameter.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Alternative {
    /// How the report names it: its `name`, or (for `values`) the value as written.
    pub name: String,
    /// Scenario key paths (as a `[sweep]` names them) and the values they take.
    pub set: Vec<(String, Value)>,
}

impl Paper {
    /// Every combination of the unstated parameters' alternatives: one alternative index
    /// per [`Paper::unstated`] entry, the first entry slowest (as a sweep grid). Empty when
    /// the scenario declares none.
    pub fn combinations(&self) -> Vec<Vec<usize>> {
        if self.unstated.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut idx = vec![0usize; self.unstated.len()];
        loop {
            out.push(idx.clone());
            let mut d = idx.len();
            loop {
                if d == 0 {
                    return out;
                }
                d -= 1;
                idx[d] += 1;
                if idx[d] < self.unstated[d].alternatives.len() {
                    break;
                }
                idx[d] = 0;
            }
        }
    }

    /// The scenario keys and values a combination sets, in the order of the unstated
    /// entries.
    pub fn overrides(&self, combination: &[usize]) -> Vec<(String, Value)> {
        self.unstated
            .iter()
            .zip(combination)
            .filter_map(|(u, &i)| u.alternatives.get(i))
            .flat_map(|a| a.set.iter().cloned())
            .collect()
    }

    /// A combination in words: its alternatives' names joined by `", "`.
    pub fn combination_label(&self, combination: &[usize]) -> String {
        self.unstated
            .iter()
            .zip(combination)
            .filter_map(|(u, &i)| u.alternatives.get(i))
            .map(|a| a.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// A combination as a file-name part, unique among the combinations and stable while
    /// the unstated entries keep their order: per entry the alternative's index and its
    /// name in lower-case letters, digits and `-` (`1-ack-path`), joined by `_`.
    pub fn combination_slug(&self, combination: &[usize]) -> String {
        self.unstated
            .iter()
            .zip(combination)
            .filter_map(|(u, &i)| u.alternatives.get(i).map(|a| (i, a)))
            .map(|(i, a)| {
                let mut s = String::new();
                for c in a.name.chars() {
                    if c.is_ascii_alphanumeric() || c == '.' {
                        s.push(c.to_ascii_lowercase());
                    } else if c == '%' {
                        s.push_str("pct");
                    } else if !s.ends_with('-') {
                        s.push('-');
                    }
                }
                let s = s.trim_matches('-');
                if s.is_empty() {
                    format!("{i}")
                } else {
                    format!("{i}-{s}")
                }
            })
            .collect::<Vec<_>>()
            .join("_")
    }
}

/// The figure of a reproduction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PaperPlot {
    /// Sweep key on the horizontal axis.
    pub x: String,
    /// Sweep key whose values are separate lines.
    pub series: Option<String>,
    /// The horizontal axis's label, instead of the one made from the key's descriptor.
    pub x_label: Option<String>,
    /// The vertical axis's label, instead of the one made from the metric and `unit`.
    pub y_label: Option<String>,
}

/// One number the paper reported.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Reported {
    /// The sweep point it belongs to: sweep key -> value as written in `[sweep]` (every
    /// key of the sweep that the paper's number depends on; keys left out match any value).
    /// A value given as a TOML table or number matches the sweep value it equals
    /// (`{ policy = "history" }` matches `{policy="history"}`); it is stored as the sweep
    /// wrote it.
    pub point: Vec<(String, String)>,
    /// The paper's value, in the unit of `[paper] unit`, if it gave one.
    pub value: Option<f64>,
    /// The paper's relative change against the baseline point (`-0.31` for "31 % lower"),
    /// for papers that report an effect without both absolute numbers.
    pub change: Option<f64>,
    /// The direction of the effect against the baseline point, for papers that state only
    /// a shape ("TCP much worse above 5 %"): judged by sign alone.
    pub direction: Option<Direction>,
    /// The run metric this number is about, if not `[paper] metric` (e.g. the loss ratio
    /// beside a latency experiment); in the unit of that metric (no `scale`).
    pub metric: Option<String>,
    /// The per-point statistic of the metric the paper reports (default the mean).
    pub statistic: Statistic,
    /// The number is read from the series of run 0 of the point instead of a run metric
    /// (needs `value`).
    pub series: Option<SeriesClaim>,
    /// The number is the metric divided by this run metric of the same point (the ratio of
    /// their means), e.g. the window after a migration over the window before it (needs
    /// `value`; judged as a value, not as an effect).
    pub over: Option<String>,
    /// The relative tolerance within which our number counts as the paper's `value`
    /// (`0.25`: within ±25 %). With it the value gets its own verdict; without it an
    /// absolute value is shown beside ours and judged only as part of an effect.
    pub tolerance: Option<f64>,
}

/// A reported effect's direction against the baseline (`direction = "lower" | "higher" |
/// "not_higher" | "not_lower"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// The point's statistic is below the baseline's.
    Lower,
    /// The point's statistic is above the baseline's.
    Higher,
    /// The point's statistic is below or equal to the baseline's ("less than or equal",
    /// paper 000 Fig. 13).
    NotHigher,
    /// The point's statistic is above or equal to the baseline's.
    NotLower,
}

impl Direction {
    /// The spelling in a scenario (`"lower"`, `"not_higher"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Direction::Lower => "lower",
            Direction::Higher => "higher",
            Direction::NotHigher => "not_higher",
            Direction::NotLower => "not_lower",
        }
    }

    /// The direction spelled `s`, if any.
    pub fn from_name(s: &str) -> Option<Direction> {
        [
            Direction::Lower,
            Direction::Higher,
            Direction::NotHigher,
            Direction::NotLower,
        ]
        .into_iter()
        .find(|d| d.name() == s)
    }

    /// The sign of the relative change the direction stands for (or allows, for the
    /// "or equal" directions).
    pub fn sign(self) -> f64 {
        match self {
            Direction::Lower | Direction::NotHigher => -1.0,
            Direction::Higher | Direction::NotLower => 1.0,
        }
    }

    /// Whether equality is part of the claim (`not_higher`, `not_lower`).
    pub fn or_equal(self) -> bool {
        matches!(self, Direction::NotHigher | Direction::NotLower)
    }
}

/// A number read from the series of run 0 of a sweep point (`series` in a
/// `[[paper.reported]]`): the sum of some series columns, either the time it first reaches
/// a value (a figure's "reaches 512 KB at 1.03 s") or its value at a time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeriesClaim {
    /// Series columns (`flow0.ep0.stream0_window`), summed sample by sample.
    pub columns: Vec<String>,
    /// What is read from the summed column.
    pub read: SeriesRead,
}

/// What a [`SeriesClaim`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SeriesRead {
    /// The time (seconds) of the first sample whose sum is at least this value; the
    /// paper's `value` is a time.
    Reaches(f64),
    /// The sum at the last sample at or before this time (seconds); the paper's `value` is
    /// in the columns' unit.
    At(f64),
}

/// The per-point statistic of the runs' values that a reported number is compared with
/// (`statistic = "mean" | "std_dev"`): the names of the sweep summary's fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Statistic {
    /// The mean over the point's runs.
    #[default]
    Mean,
    /// The sample standard deviation over the point's runs (n - 1 denominator).
    StdDev,
}

impl Statistic {
    /// The field of a sweep summary (`summary.json`) holding this statistic.
    pub fn field(self) -> &'static str {
        match self {
            Statistic::Mean => "mean",
            Statistic::StdDev => "std_dev",
        }
    }
}

/// A time-series figure of a reproduction (`[[paper.trace]]`): columns of the series of
/// run 0 of every sweep point, against time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Trace {
    /// Where in the paper (`"Fig. 11"`).
    pub source: String,
    /// What the figure shows, one line.
    pub title: String,
    /// Series columns (`flow0.ep1.cwnd`), each drawn for every sweep point.
    pub columns: Vec<String>,
    /// Factor applied to the values (e.g. 0.001 for KB).
    pub scale: f64,
    /// Unit after `scale` (the vertical axis).
    pub unit: String,
    /// Last time drawn, seconds (`None`: the whole run).
    pub until: Option<f64>,
    /// The vertical axis's label, instead of the one made from the columns and `unit`.
    pub y_label: Option<String>,
}

/// A ranking the paper claims without numbers (`[[paper.ranking]]`), e.g. "QUIC < SCTP <
/// TCP at every link delay": at every combination of the other sweep keys, the means of the
/// metric over the values of `by` are in the order `order` (smallest first). Optionally the
/// claim that the gap between the last and the first of `order` grows along a sweep key
/// ("the gaps grow with the link delay").
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ranking {
    /// The claim in the paper's words, one line.
    pub claim: String,
    /// The sweep key whose values are ranked (e.g. `transports`).
    pub by: String,
    /// Values of `by` (as written in the sweep), smallest metric first.
    pub order: Vec<String>,
    /// A sweep key along whose values (in sweep order) the gap `mean(last of order) -
    /// mean(first of order)` is claimed to grow.
    pub widens_along: Option<String>,
}

fn err(field: &str, v: Option<&Value>, allowed: &str) -> ConfigError {
    let value = match v {
        None => "(missing)".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    };
    ConfigError::new(field, value, allowed)
}

fn string(t: &Table, path: &str, key: &str, required: bool) -> Result<String, ConfigError> {
    match t.get(key) {
        Some(Value::String(s)) if !(required && s.is_empty()) => Ok(s.clone()),
        None if !required => Ok(String::new()),
        v => Err(err(
            &format!("{path}.{key}"),
            v,
            if required {
                "a non-empty string"
            } else {
                "a string"
            },
        )),
    }
}

/// An optional non-empty string.
fn optional_string(t: &Table, path: &str, key: &str) -> Result<Option<String>, ConfigError> {
    match t.get(key) {
        None => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
        v => Err(err(&format!("{path}.{key}"), v, "a non-empty string")),
    }
}

fn number(v: Option<&Value>) -> Option<f64> {
    match v {
        Some(Value::Float(x)) if x.is_finite() => Some(*x),
        Some(Value::Integer(i)) => Some(*i as f64),
        _ => None,
    }
}

/// The sweep keys and values (as written) of a scenario, for checking references to them.
pub(crate) type SweepValues = Vec<(String, Vec<String>)>;

fn point_map(
    v: Option<&Value>,
    path: &str,
    sweep: &SweepValues,
    required: bool,
) -> Result<Vec<(String, String)>, ConfigError> {
    let t = match v {
        None if !required => return Ok(Vec::new()),
        Some(Value::Table(t)) => t,
        v => return Err(err(
            path,
            v,
            "a table of sweep keys and their values, e.g. { \"topology.link.delay\" = \"20ms\" }",
        )),
    };
    let mut out = Vec::new();
    for (k, v) in t {
        let field = format!("{path}.\"{k}\"");
        let Some((_, values)) = sweep.iter().find(|(sk, _)| sk == k) else {
            let keys: Vec<&str> = sweep.iter().map(|(k, _)| k.as_str()).collect();
            return Err(err(
                &field,
                Some(&Value::String(k.clone())),
                &format!(
                    "a key of [sweep] ({})",
                    if keys.is_empty() {
                        "this scenario has no sweep".to_string()
                    } else {
                        keys.join(", ")
                    }
                ),
            ));
        };
        let Some(shown) = values.iter().find(|w| same_value(v, w)) else {
            return Err(err(
                &field,
                Some(v),
                &format!("one of the sweep's values: {}", values.join(", ")),
            ));
        };
        out.push((k.clone(), shown.clone()));
    }
    Ok(out)
}

/// Whether `v` (a value of a `[paper]` point) is the sweep value written `written`: equal
/// strings, or, for other values, equal once `written` is read as TOML (so a table or a
/// number matches however its source text is spaced).
fn same_value(v: &Value, written: &str) -> bool {
    match v {
        Value::String(s) => s == written,
        other => match format!("v = {written}").parse::<Table>() {
            Ok(t) => t
                .get("v")
                .is_some_and(|w| w == other || other.to_string() == written),
            Err(_) => other.to_string() == written,
        },
    }
}

fn trace(v: &Value, path: &str) -> Result<Trace, ConfigError> {
    let Value::Table(t) = v else {
        return Err(err(
            path,
            Some(v),
            "a table { source, title, columns = [..], scale, unit, until }",
        ));
    };
    const KEYS: &[&str] = &[
        "source", "title", "columns", "scale", "unit", "until", "y_label",
    ];
    for k in t.keys() {
        if !KEYS.contains(&k.as_str()) {
            return Err(err(
                &format!("{path}.{k}"),
                Some(&Value::String(k.clone())),
                &format!("a key of a trace: {}", KEYS.join(", ")),
            ));
        }
    }
    let columns = match t.get("columns") {
        Some(Value::Array(a)) if !a.is_empty() => a
            .iter()
            .enumerate()
            .map(|(i, c)| match c {
                Value::String(s) if !s.is_empty() => Ok(s.clone()),
                c => Err(err(
                    &format!("{path}.columns[{i}]"),
                    Some(c),
                    "a series column name, e.g. \"flow0.ep1.cwnd\"",
                )),
            })
            .collect::<Result<Vec<_>, _>>()?,
        v => {
            return Err(err(
                &format!("{path}.columns"),
                v,
                "a non-empty array of series column names",
            ))
        }
    };
    let positive = |key: &str| -> Result<Option<f64>, ConfigError> {
        match t.get(key) {
            None => Ok(None),
            v => match number(v) {
                Some(x) if x > 0.0 => Ok(Some(x)),
                _ => Err(err(&format!("{path}.{key}"), v, "a number > 0")),
            },
        }
    };
    Ok(Trace {
        source: string(t, path, "source", true)?,
        title: string(t, path, "title", true)?,
        columns,
        scale: positive("scale")?.unwrap_or(1.0),
        unit: string(t, path, "unit", false)?,
        until: positive("until")?,
        y_label: optional_string(t, path, "y_label")?,
    })
}

fn ranking(v: &Value, path: &str, sweep: &SweepValues) -> Result<Ranking, ConfigError> {
    let Value::Table(t) = v else {
        return Err(err(
            path,
            Some(v),
            "a table { claim, by = SWEEP KEY, order = [values, smallest first], widens_along }",
        ));
    };
    const KEYS: &[&str] = &["claim", "by", "order", "widens_along"];
    for k in t.keys() {
        if !KEYS.contains(&k.as_str()) {
            return Err(err(
                &format!("{path}.{k}"),
                Some(&Value::String(k.clone())),
                &format!("a key of a ranking: {}", KEYS.join(", ")),
            ));
        }
    }
    let sweep_key = |key: &str, required: bool| -> Result<Option<String>, ConfigError> {
        match t.get(key) {
            None if !required => Ok(None),
            Some(Value::String(s)) if sweep.iter().any(|(k, _)| k == s) => Ok(Some(s.clone())),
            v => {
                let keys: Vec<&str> = sweep.iter().map(|(k, _)| k.as_str()).collect();
                Err(err(
                    &format!("{path}.{key}"),
                    v,
                    &format!("a key of [sweep] ({})", keys.join(", ")),
                ))
            }
        }
    };
    let by = sweep_key("by", true)?.unwrap_or_default();
    let widens_along = sweep_key("widens_along", false)?;
    if widens_along.as_deref() == Some(by.as_str()) {
        return Err(err(
            &format!("{path}.widens_along"),
            t.get("widens_along"),
            "a sweep key other than `by`",
        ));
    }
    let values = &sweep
        .iter()
        .find(|(k, _)| *k == by)
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    let order = match t.get("order") {
        Some(Value::Array(a)) if a.len() >= 2 => a
            .iter()
            .enumerate()
            .map(|(i, x)| match values.iter().find(|w| same_value(x, w)) {
                Some(w) => Ok(w.clone()),
                None => Err(err(
                    &format!("{path}.order[{i}]"),
                    Some(x),
                    &format!("one of the values of {by:?}: {}", values.join(", ")),
                )),
            })
            .collect::<Result<Vec<_>, _>>()?,
        v => {
            return Err(err(
                &format!("{path}.order"),
                v,
                "an array of at least two values of `by`, smallest metric first",
            ))
        }
    };
    if let Some(i) = (1..order.len()).find(|&i| order[..i].contains(&order[i])) {
        return Err(err(
            &format!("{path}.order[{i}]"),
            Some(&Value::String(order[i].clone())),
            "a value not listed before",
        ));
    }
    Ok(Ranking {
        claim: string(t, path, "claim", true)?,
        by,
        order,
        widens_along,
    })
}

/// Longest `[paper] id`.
pub const MAX_ID_CHARS: usize = 64;

const ID_ALLOWED: &str = "1 to 64 characters of A-Z a-z 0-9 . _ -, not \".\" or \"..\" (the id names files and directories under `quicsim reproduce --out`: paper<ID>.md, sweeps/<ID>/)";

/// Whether `id` is a valid `[paper] id`: one plain file-name component, since
/// `quicsim reproduce` joins it to its output directory.
pub fn safe_id(id: &str) -> bool {
    !id.is_empty()
        && id.chars().count() <= MAX_ID_CHARS
        && id != "."
        && id != ".."
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// A scenario key path named by `[[paper.unstated]]` (at `field`), checked as a `[sweep]`
/// key is and against the sweep's own keys: a path that a sweep key covers (or that
/// covers one) would be overwritten at every point, so it cannot be unstated.
fn unstated_path(key: &str, field: &str, sweep: &SweepValues) -> Result<Vec<Seg>, ConfigError> {
    let segs = parse_key(key).map_err(|e| ConfigError::new(field, e.value, e.allowed))?;
    if matches!(canonical(&segs).as_str(), "seed" | "runs" | "paper") {
        return Err(ConfigError::new(
            field,
            key,
            "a key of the scenario other than `seed`, `runs` and `paper` (every combination runs the same seeds)",
        ));
    }
    for (sk, _) in sweep {
        let Ok(ss) = parse_key(sk) else { continue };
        if overlaps(&segs, &ss) {
            return Err(ConfigError::new(
                field,
                key,
                format!("a key path that no [sweep] key covers (`{sk}` is swept: make the unstated parameter a key outside it)"),
            ));
        }
    }
    Ok(segs)
}

/// Whether one path is a prefix of the other (setting one changes the other).
fn overlaps(a: &[Seg], b: &[Seg]) -> bool {
    let n = a.len().min(b.len());
    a[..n] == b[..n]
}

fn unstated(v: &Value, path: &str, sweep: &SweepValues) -> Result<Unstated, ConfigError> {
    const FORMS: &str = "a table { why, key = PATH, values = [..] } or { name, why, alternatives = [{ name, set = { PATH = VALUE, .. } }, ..] }";
    let Value::Table(t) = v else {
        return Err(err(path, Some(v), FORMS));
    };
    const KEYS: &[&str] = &["name", "why", "key", "values", "alternatives"];
    for k in t.keys() {
        if !KEYS.contains(&k.as_str()) {
            return Err(err(
                &format!("{path}.{k}"),
                Some(&Value::String(k.clone())),
                &format!("a key of an unstated parameter: {}", KEYS.join(", ")),
            ));
        }
    }
    let why = string(t, path, "why", true)?;
    let name = optional_string(t, path, "name")?;
    let (name, key, alternatives) = match t.get("alternatives") {
        Some(a) if t.contains_key("key") || t.contains_key("values") => {
            return Err(err(
                &format!("{path}.alternatives"),
                Some(a),
                "either `key` and `values` or `alternatives`, not both",
            ))
        }
        Some(Value::Array(a)) if a.len() >= 2 => {
            let Some(name) = name else {
                return Err(err(
                    &format!("{path}.name"),
                    None,
                    "a name for the parameter (\"loss placement\"): required with `alternatives`",
                ));
            };
            let mut alts: Vec<Alternative> = Vec::new();
            for (j, x) in a.iter().enumerate() {
                let field = format!("{path}.alternatives[{j}]");
                let alt = alternative(x, &field, sweep)?;
                if alts.iter().any(|b| b.name == alt.name) {
                    return Err(err(
                        &format!("{field}.name"),
                        Some(&Value::String(alt.name)),
                        "a name no other alternative of this parameter has",
                    ));
                }
                alts.push(alt);
            }
            (name, None, alts)
        }
        Some(v) => return Err(err(
            &format!("{path}.alternatives"),
            Some(v),
            "an array of at least two tables { name = TEXT, set = { \"key.path\" = VALUE, .. } }",
        )),
        None => {
            let key = match t.get("key") {
                Some(Value::String(s)) => {
                    unstated_path(s, &format!("{path}.key"), sweep)?;
                    s.clone()
                }
                v => {
                    return Err(err(
                        &format!("{path}.key"),
                        v,
                        "a scenario key path such as \"topology.reverse.loss\" (with `values`), or `alternatives`",
                    ))
                }
            };
            let values = match t.get("values") {
                Some(Value::Array(a)) if a.len() >= 2 => a,
                v => {
                    return Err(err(
                        &format!("{path}.values"),
                        v,
                        "an array of at least two plausible values of `key`",
                    ))
                }
            };
            let mut alts: Vec<Alternative> = Vec::new();
            for (j, x) in values.iter().enumerate() {
                if values[..j].contains(x) {
                    return Err(err(
                        &format!("{path}.values[{j}]"),
                        Some(x),
                        "a value not listed before",
                    ));
                }
                alts.push(Alternative {
                    name: render(x),
                    set: vec![(key.clone(), x.clone())],
                });
            }
            (name.unwrap_or_else(|| key.clone()), Some(key), alts)
        }
    };
    Ok(Unstated {
        name,
        key,
        why,
        alternatives,
    })
}

fn alternative(v: &Value, path: &str, sweep: &SweepValues) -> Result<Alternative, ConfigError> {
    let Value::Table(t) = v else {
        return Err(err(
            path,
            Some(v),
            "a table { name = TEXT, set = { \"key.path\" = VALUE, .. } }",
        ));
    };
    for k in t.keys() {
        if k != "name" && k != "set" {
            return Err(err(
                &format!("{path}.{k}"),
                Some(&Value::String(k.clone())),
                "name or set",
            ));
        }
    }
    let name = string(t, path, "name", true)?;
    let set = match t.get("set") {
        Some(Value::Table(s)) if !s.is_empty() => s,
        v => {
            return Err(err(
                &format!("{path}.set"),
                v,
                "a non-empty table of scenario key paths and values, e.g. { \"topology.reverse.loss\" = \"1%\" }",
            ))
        }
    };
    let mut out: Vec<(String, Value)> = Vec::new();
    let mut seen: Vec<Vec<Seg>> = Vec::new();
    for (k, x) in set {
        let field = format!("{path}.set.\"{k}\"");
        let segs = unstated_path(k, &field, sweep)?;
        if seen.iter().any(|s| overlaps(s, &segs)) {
            return Err(err(
                &field,
                Some(&Value::String(k.clone())),
                "a key path that no other key of this `set` contains or is contained in",
            ));
        }
        seen.push(segs);
        out.push((k.clone(), x.clone()));
    }
    Ok(Alternative { name, set: out })
}

/// Checks the `[[paper.unstated]]` entries against each other: distinct names, no key set
/// by two of them, at most [`MAX_COMBINATIONS`] combinations.
fn check_unstated_together(u: &[Unstated], v: Option<&Value>) -> Result<(), ConfigError> {
    let mut paths: Vec<(usize, Vec<Seg>)> = Vec::new();
    for (i, e) in u.iter().enumerate() {
        if u[..i].iter().any(|o| o.name == e.name) {
            return Err(err(
                &format!("paper.unstated[{i}].name"),
                Some(&Value::String(e.name.clone())),
                "a name no other [[paper.unstated]] entry has",
            ));
        }
        for a in &e.alternatives {
            for (k, _) in &a.set {
                let Ok(segs) = parse_key(k) else { continue };
                if let Some((j, _)) = paths.iter().find(|(j, s)| *j != i && overlaps(s, &segs)) {
                    return Err(err(
                        &format!("paper.unstated[{i}]"),
                        Some(&Value::String(k.clone())),
                        &format!(
                            "keys that no other [[paper.unstated]] entry sets (paper.unstated[{j}] sets it too: make them one parameter with `alternatives`)"
                        ),
                    ));
                }
                paths.push((i, segs));
            }
        }
    }
    let n = u
        .iter()
        .fold(1usize, |n, e| n.saturating_mul(e.alternatives.len()));
    if n > MAX_COMBINATIONS {
        return Err(err(
            "paper.unstated",
            v,
            &format!("at most {MAX_COMBINATIONS} combinations of alternatives (these make {n})"),
        ));
    }
    Ok(())
}

/// The `series` / `reaches` / `at` keys of a `[[paper.reported]]` table `r`, checked.
fn series_claim(r: &Table, path: &str) -> Result<Option<SeriesClaim>, ConfigError> {
    let columns = match r.get("series") {
        None => {
            for key in ["reaches", "at"] {
                if r.contains_key(key) {
                    return Err(err(
                        &format!("{path}.{key}"),
                        r.get(key),
                        "only with `series` (the series columns it reads)",
                    ));
                }
            }
            return Ok(None);
        }
        Some(Value::Array(a)) if !a.is_empty() => a
            .iter()
            .enumerate()
            .map(|(i, c)| match c {
                Value::String(s) if !s.is_empty() => Ok(s.clone()),
                c => Err(err(
                    &format!("{path}.series[{i}]"),
                    Some(c),
                    "a series column name, e.g. \"flow0.ep0.stream0_window\"",
                )),
            })
            .collect::<Result<Vec<_>, _>>()?,
        v => {
            return Err(err(
                &format!("{path}.series"),
                v,
                "a non-empty array of series column names (summed)",
            ))
        }
    };
    let read = match (r.get("reaches"), r.get("at")) {
        (Some(v), None) => match number(Some(v)) {
            Some(x) => SeriesRead::Reaches(x),
            None => return Err(err(&format!("{path}.reaches"), Some(v), "a number")),
        },
        (None, Some(v)) => match number(Some(v)) {
            Some(x) if x >= 0.0 => SeriesRead::At(x),
            _ => {
                return Err(err(
                    &format!("{path}.at"),
                    Some(v),
                    "a time in seconds >= 0",
                ))
            }
        },
        (a, b) => {
            let key = if a.is_some() { "at" } else { "reaches" };
            return Err(err(
                &format!("{path}.{key}"),
                b.or(a),
                "exactly one of `reaches` (the time the summed columns first reach this \
                 value) and `at` (their value at this time, seconds)",
            ));
        }
    };
    Ok(Some(SeriesClaim { columns, read }))
}

/// Parses and checks the `[paper]` table `v` against the scenario's sweep.
pub(crate) fn parse(v: &Value, sweep: &SweepValues) -> Result<Paper, ConfigError> {
    let Value::Table(t) = v else {
        return Err(err("paper", Some(v), "a table"));
    };
    const KEYS: &[&str] = &[
        "id",
        "experiment",
        "source",
        "metric",
        "unit",
        "scale",
        "baseline",
        "plot",
        "reported",
        "trace",
        "ranking",
        "runs",
        "notes",
        "unstated",
    ];
    for k in t.keys() {
        if !KEYS.contains(&k.as_str()) {
            return Err(err(
                &format!("paper.{k}"),
                Some(&Value::String(k.clone())),
                &format!("a key of [paper]: {}", KEYS.join(", ")),
            ));
        }
    }
    let id = string(t, "paper", "id", true)?;
    if !safe_id(&id) {
        return Err(err("paper.id", t.get("id"), ID_ALLOWED));
    }
    let experiment = string(t, "paper", "experiment", true)?;
    let source = string(t, "paper", "source", true)?;
    let metric = string(t, "paper", "metric", true)?;
    let unit = string(t, "paper", "unit", false)?;
    let notes = string(t, "paper", "notes", false)?;
    let scale = match t.get("scale") {
        None => 1.0,
        v => match number(v) {
            Some(x) if x > 0.0 => x,
            _ => return Err(err("paper.scale", v, "a number > 0")),
        },
    };
    let baseline = point_map(t.get("baseline"), "paper.baseline", sweep, false)?;
    let plot = match t.get("plot") {
        None => None,
        Some(Value::Table(p)) => {
            for k in p.keys() {
                if !["x", "series", "x_label", "y_label"].contains(&k.as_str()) {
                    return Err(err(
                        &format!("paper.plot.{k}"),
                        Some(&Value::String(k.clone())),
                        "x, series, x_label or y_label",
                    ));
                }
            }
            let key = |name: &str, required: bool| -> Result<Option<String>, ConfigError> {
                match p.get(name) {
                    None if !required => Ok(None),
                    Some(Value::String(s)) if sweep.iter().any(|(k, _)| k == s) => {
                        Ok(Some(s.clone()))
                    }
                    v => Err(err(&format!("paper.plot.{name}"), v, "a key of [sweep]")),
                }
            };
            Some(PaperPlot {
                x: key("x", true)?.unwrap_or_default(),
                series: key("series", false)?,
                x_label: optional_string(p, "paper.plot", "x_label")?,
                y_label: optional_string(p, "paper.plot", "y_label")?,
            })
        }
        v => {
            return Err(err(
                "paper.plot",
                v,
                "a table { x = KEY, series = KEY, x_label = TEXT, y_label = TEXT }",
            ))
        }
    };
    let mut reported = Vec::new();
    match t.get("reported") {
        None => {}
        Some(Value::Array(a)) => {
            for (i, r) in a.iter().enumerate() {
                let path = format!("paper.reported[{i}]");
                let Value::Table(r) = r else {
                    return Err(err(
                        &path,
                        Some(r),
                        "a table { point = {...}, value = NUMBER }",
                    ));
                };
                const RKEYS: &[&str] = &[
                    "point",
                    "value",
                    "change",
                    "direction",
                    "metric",
                    "statistic",
                    "series",
                    "reaches",
                    "at",
                    "over",
                    "tolerance",
                ];
                for k in r.keys() {
                    if !RKEYS.contains(&k.as_str()) {
                        return Err(err(
                            &format!("{path}.{k}"),
                            Some(&Value::String(k.clone())),
                            &RKEYS.join(", "),
                        ));
                    }
                }
                let point = point_map(r.get("point"), &format!("{path}.point"), sweep, false)?;
                let opt = |key: &str| match r.get(key) {
                    None => Ok(None),
                    v => number(v)
                        .map(Some)
                        .ok_or_else(|| err(&format!("{path}.{key}"), v, "a number")),
                };
                let (value, change) = (opt("value")?, opt("change")?);
                let direction = match r.get("direction") {
                    None => None,
                    Some(Value::String(s)) if Direction::from_name(s).is_some() => {
                        Direction::from_name(s)
                    }
                    v => {
                        return Err(err(
                            &format!("{path}.direction"),
                            v,
                            "\"lower\", \"higher\", \"not_higher\" (lower or equal) or \
                             \"not_lower\" (higher or equal), against the baseline point",
                        ))
                    }
                };
                let metric = match r.get("metric") {
                    None => None,
                    Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
                    v => return Err(err(
                        &format!("{path}.metric"),
                        v,
                        "a run metric name, e.g. \"flow0.ep1.connections.4.metrics.loss_ratio\"",
                    )),
                };
                let statistic = match r.get("statistic") {
                    None => Statistic::Mean,
                    Some(Value::String(s)) if s == "mean" => Statistic::Mean,
                    Some(Value::String(s)) if s == "std_dev" => Statistic::StdDev,
                    v => {
                        return Err(err(
                            &format!("{path}.statistic"),
                            v,
                            "\"mean\" or \"std_dev\"",
                        ))
                    }
                };
                let given = [value.is_some(), change.is_some(), direction.is_some()];
                if given.iter().filter(|g| **g).count() == 0 {
                    return Err(err(
                        &format!("{path}.value"),
                        None,
                        "a number (or `change`, the relative change against the baseline, or \
                         `direction`)",
                    ));
                }
                if direction.is_some() && (value.is_some() || change.is_some()) {
                    return Err(err(
                        &format!("{path}.direction"),
                        r.get("direction"),
                        "either `direction` (a shape only) or `value` / `change`, not both",
                    ));
                }
                for (key, given) in [
                    ("change", change.is_some()),
                    ("direction", direction.is_some()),
                ] {
                    if given && baseline.is_empty() {
                        return Err(err(
                            &format!("{path}.{key}"),
                            r.get(key),
                            &format!("a {key} needs a `baseline` in [paper]"),
                        ));
                    }
                }
                let series = series_claim(r, &path)?;
                if series.is_some() {
                    for (key, bad) in [
                        ("value", value.is_none()),
                        ("change", change.is_some()),
                        ("direction", direction.is_some()),
                        ("metric", metric.is_some()),
                        ("statistic", statistic != Statistic::Mean),
                    ] {
                        if bad {
                            return Err(err(
                                &format!("{path}.{key}"),
                                r.get(key),
                                "a `series` claim takes a `value` (the paper's time for \
                                 `reaches`, its number for `at`) and no `change`, \
                                 `direction`, `metric` or `statistic`",
                            ));
                        }
                    }
                }
                let over = match r.get("over") {
                    None => None,
                    Some(Value::String(m))
                        if !m.is_empty()
                            && value.is_some()
                            && change.is_none()
                            && direction.is_none()
                            && series.is_none() =>
                    {
                        Some(m.clone())
                    }
                    v => {
                        return Err(err(
                            &format!("{path}.over"),
                            v,
                            "a run metric name to divide by (e.g. \
                             \"flow0.ep1.migrations.0.cwnd_before\"), beside a `value` and \
                             without `change`, `direction` or `series`",
                        ))
                    }
                };
                let tolerance = match r.get("tolerance") {
                    None => None,
                    v => match number(v) {
                        Some(x) if x >= 0.0 && value.is_some() => Some(x),
                        _ => {
                            return Err(err(
                                &format!("{path}.tolerance"),
                                v,
                                "a number >= 0 (a relative tolerance, 0.25 = ±25 %) beside a \
                                 `value`",
                            ))
                        }
                    },
                };
                reported.push(Reported {
                    point,
                    value,
                    change,
                    direction,
                    metric,
                    statistic,
                    series,
                    over,
                    tolerance,
                });
            }
        }
        v => return Err(err("paper.reported", v, "an array of tables")),
    }
    let trace = match t.get("trace") {
        None => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, v)| trace(v, &format!("paper.trace[{i}]")))
            .collect::<Result<_, _>>()?,
        v => {
            return Err(err(
                "paper.trace",
                v,
                "an array of tables ([[paper.trace]])",
            ))
        }
    };
    let ranking = match t.get("ranking") {
        None => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, v)| ranking(v, &format!("paper.ranking[{i}]"), sweep))
            .collect::<Result<_, _>>()?,
        v => {
            return Err(err(
                "paper.ranking",
                v,
                "an array of tables ([[paper.ranking]])",
            ))
        }
    };
    let runs = match t.get("runs") {
        None => None,
        Some(Value::Integer(n)) if (1..=100_000).contains(n) => Some(*n as u32),
        v => return Err(err("paper.runs", v, "an integer from 1 to 100000")),
    };
    let unstated = match t.get("unstated") {
        None => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, v)| unstated(v, &format!("paper.unstated[{i}]"), sweep))
            .collect::<Result<Vec<_>, _>>()?,
        v => {
            return Err(err(
                "paper.unstated",
                v,
                "an array of tables ([[paper.unstated]])",
            ))
        }
    };
    check_unstated_together(&unstated, t.get("unstated"))?;
    Ok(Paper {
        id,
        experiment,
        source,
        metric,
        unit,
        scale,
        baseline,
        plot,
        reported,
        trace,
        ranking,
        runs,
        notes,
        unstated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep() -> SweepValues {
        vec![
            (
                "topology.link.delay".into(),
                vec!["10ms".into(), "20ms".into()],
            ),
            (
                "topology.link.loss".into(),
                vec!["0.0".into(), "0.01".into()],
            ),
        ]
    }

    fn parse_text(t: &str) -> Result<Paper, ConfigError> {
        let v: Value = Value::Table(t.parse::<Table>().unwrap());
        parse(&v["paper"], &sweep())
    }

    #[test]
    fn a_full_table_parses() {
        let p = parse_text(
            r#"
            [paper]
            id = "000"
            experiment = "x"
            source = "Table 2"
            metric = "flow0.ep0.completion_secs"
            unit = "ms"
            scale = 1000
            baseline = { "topology.link.loss" = 0.0 }
            plot = { x = "topology.link.delay", series = "topology.link.loss" }
            [[paper.reported]]
            point = { "topology.link.delay" = "10ms", "topology.link.loss" = 0.01 }
            value = 310
            "#,
        )
        .unwrap();
        assert_eq!(p.scale, 1000.0);
        assert_eq!(p.baseline, [("topology.link.loss".into(), "0.0".into())]);
        assert_eq!(p.reported[0].value, Some(310.0));
        assert_eq!(p.reported[0].point[1].1, "0.01");
        assert_eq!(
            p.plot.unwrap().series.as_deref(),
            Some("topology.link.loss")
        );
    }

    #[test]
    fn table_and_number_values_match_the_sweep_value_they_equal() {
        let sweep: SweepValues = vec![
            (
                "flows.0.quic.initial_window".into(),
                vec![
                    "{ policy = \"default\" }".into(),
                    "{ policy = \"history\" }".into(),
                ],
            ),
            (
                "topology.link.loss".into(),
                vec!["1e-2".into(), "0.05".into()],
            ),
        ];
        let text = r#"
            [paper]
            id = "000"
            experiment = "x"
            source = "Table 2"
            metric = "m"
            baseline = { "flows.0.quic.initial_window" = {policy="default"} }
            [[paper.reported]]
            point = { "flows.0.quic.initial_window" = {policy = "history"}, "topology.link.loss" = 0.01 }
            change = -0.31
            [[paper.trace]]
            source = "Fig. 3"
            title = "cwnd"
            columns = ["flow0.ep1.cwnd"]
            scale = 0.001
            unit = "KB"
        "#;
        let v = Value::Table(text.parse::<Table>().unwrap());
        let p = parse(&v["paper"], &sweep).unwrap();
        // Stored as the sweep wrote them, so they compare equal to a point's params.
        assert_eq!(
            p.baseline,
            [(
                "flows.0.quic.initial_window".into(),
                "{ policy = \"default\" }".into()
            )]
        );
        assert_eq!(
            p.reported[0].point,
            [
                (
                    "flows.0.quic.initial_window".into(),
                    "{ policy = \"history\" }".into()
                ),
                ("topology.link.loss".into(), "1e-2".into())
            ]
        );
        assert_eq!(
            (p.reported[0].value, p.reported[0].change),
            (None, Some(-0.31))
        );
        assert_eq!(p.trace[0].columns, ["flow0.ep1.cwnd"]);
        assert_eq!((p.trace[0].scale, p.trace[0].until), (0.001, None));
        // A table that is not a sweep value is refused, naming the field.
        let bad = text.replace("{policy = \"history\"}", "{policy = \"other\"}");
        let v = Value::Table(bad.parse::<Table>().unwrap());
        let e = parse(&v["paper"], &sweep).unwrap_err();
        assert_eq!(
            e.field,
            "paper.reported[0].point.\"flows.0.quic.initial_window\""
        );
    }

    #[test]
    fn rankings_parse_and_their_errors_name_the_field() {
        let mut sweep = sweep();
        sweep.push((
            "transports".into(),
            vec!["tcp".into(), "sctp".into(), "quic".into()],
        ));
        let base = "[paper]\nid = \"003\"\nexperiment = \"x\"\nsource = \"Fig. 8\"\nmetric = \"m\"\n[[paper.ranking]]\nclaim = \"QUIC < SCTP < TCP\"\n";
        let parse_with = |extra: &str| {
            let text = format!("{base}{extra}");
            let v = Value::Table(text.parse::<Table>().unwrap());
            parse(&v["paper"], &sweep)
        };
        let p = parse_with(
            "by = \"transports\"\norder = [\"quic\", \"sctp\", \"tcp\"]\nwidens_along = \"topology.link.delay\"\n",
        )
        .unwrap();
        assert_eq!(p.ranking[0].order, ["quic", "sctp", "tcp"]);
        assert_eq!(
            p.ranking[0].widens_along.as_deref(),
            Some("topology.link.delay")
        );
        // Values are matched as sweep values (a number matches the value it equals).
        let p = parse_with("by = \"topology.link.loss\"\norder = [0.01, 0.0]\n").unwrap();
        assert_eq!(p.ranking[0].order, ["0.01", "0.0"]);
        let cases = [
            ("order = [\"quic\", \"tcp\"]\n", "paper.ranking[0].by"),
            (
                "by = \"nope\"\norder = [\"quic\", \"tcp\"]\n",
                "paper.ranking[0].by",
            ),
            (
                "by = \"transports\"\norder = [\"quic\"]\n",
                "paper.ranking[0].order",
            ),
            (
                "by = \"transports\"\norder = [\"quic\", \"udp\"]\n",
                "paper.ranking[0].order[1]",
            ),
            (
                "by = \"transports\"\norder = [\"quic\", \"quic\"]\n",
                "paper.ranking[0].order[1]",
            ),
            (
                "by = \"transports\"\norder = [\"quic\", \"tcp\"]\nwidens_along = \"transports\"\n",
                "paper.ranking[0].widens_along",
            ),
            (
                "by = \"transports\"\norder = [\"quic\", \"tcp\"]\ncolour = 1\n",
                "paper.ranking[0].colour",
            ),
        ];
        for (extra, field) in cases {
            let e = parse_with(extra).unwrap_err();
            assert_eq!(e.field, field, "{extra}: {e}");
        }
    }

    #[test]
    fn directions_statistics_and_other_metrics_parse() {
        let p = parse_text(
            r#"
            [paper]
            id = "002"
            experiment = "x"
            source = "Fig. 9"
            metric = "flow0.ep0.completion_secs"
            baseline = { "topology.link.loss" = 0.0 }
            [[paper.reported]]
            point = { "topology.link.loss" = 0.01 }
            direction = "lower"
            [[paper.reported]]
            point = { "topology.link.loss" = 0.01 }
            metric = "flow0.ep1.loss_ratio"
            statistic = "std_dev"
            direction = "higher"
            [[paper.reported]]
            point = { "topology.link.loss" = 0.01 }
            change = 0.0
            "#,
        )
        .unwrap();
        let r = &p.reported;
        assert_eq!(
            (r[0].direction, r[0].metric.as_deref(), r[0].statistic),
            (Some(Direction::Lower), None, Statistic::Mean)
        );
        assert_eq!(
            (r[1].direction, r[1].metric.as_deref(), r[1].statistic),
            (
                Some(Direction::Higher),
                Some("flow0.ep1.loss_ratio"),
                Statistic::StdDev
            )
        );
        assert_eq!((r[2].direction, r[2].change), (None, Some(0.0)));
        assert_eq!(
            (Direction::Lower.sign(), Direction::Higher.sign()),
            (-1.0, 1.0)
        );
        // The "or equal" directions (paper 000 Fig. 13: "less than or equal").
        for (name, d, sign) in [
            ("not_higher", Direction::NotHigher, -1.0),
            ("not_lower", Direction::NotLower, 1.0),
        ] {
            let p = parse_text(&format!(
                "[paper]\nid = \"000\"\nexperiment = \"x\"\nsource = \"Fig. 13\"\nmetric = \"m\"\nbaseline = {{ \"topology.link.loss\" = 0.0 }}\n[[paper.reported]]\npoint = {{ \"topology.link.loss\" = 0.01 }}\nstatistic = \"std_dev\"\ndirection = \"{name}\"\n"
            ))
            .unwrap();
            assert_eq!(p.reported[0].direction, Some(d));
            assert_eq!((d.name(), d.sign(), d.or_equal()), (name, sign, true));
            assert_eq!(Direction::from_name(name), Some(d));
        }
        assert!(!Direction::Lower.or_equal() && !Direction::Higher.or_equal());
        assert_eq!(Direction::from_name("down"), None);
        assert_eq!(
            (Statistic::Mean.field(), Statistic::StdDev.field()),
            ("mean", "std_dev")
        );
    }

    /// Issue 28 item 1: `quicsim reproduce` joins the id to its output directory, so an id
    /// is one plain file-name component.
    #[test]
    fn ids_are_plain_file_name_components() {
        let with = |id: &str| {
            parse_text(&format!(
                "[paper]\nid = {id:?}\nexperiment = \"x\"\nsource = \"T1\"\nmetric = \"m\"\n"
            ))
        };
        for ok in ["000", "paper-1.b_c", &"a".repeat(MAX_ID_CHARS)] {
            assert_eq!(with(ok).unwrap().id, ok);
        }
        let long = "a".repeat(MAX_ID_CHARS + 1);
        for bad in [
            "../../..scratch/x",
            "/tmp/x",
            "a/b",
            "a\\b",
            ".",
            "..",
            "é",
            "a b",
            long.as_str(),
        ] {
            let e = with(bad).unwrap_err();
            assert_eq!(e.field, "paper.id", "{bad}: {e}");
            assert!(e.allowed.contains("A-Z a-z 0-9 . _ -"), "{e}");
        }
    }

    #[test]
    fn series_claims_and_tolerances_parse() {
        let p = parse_text(
            r#"
            [paper]
            id = "001"
            experiment = "x"
            source = "Fig. 11"
            metric = "flow0.ep0.goodput_bps"
            [[paper.reported]]
            point = { "topology.link.delay" = "10ms" }
            series = ["flow0.ep0.stream0_window", "flow0.ep0.stream4_window"]
            reaches = 16384
            value = 0.5
            tolerance = 0.25
            [[paper.reported]]
            series = ["flow0.ep0.stream0_window"]
            at = 0.7
            value = 24576
            [[paper.reported]]
            metric = "flow0.ep0.stream_window_max"
            value = 524288
            tolerance = 0
            [[paper.reported]]
            metric = "flow0.ep1.migrations.0.cwnd_after"
            over = "flow0.ep1.migrations.0.cwnd_before"
            value = 0.86
            tolerance = 0.1
            "#,
        )
        .unwrap();
        let r = &p.reported;
        let s0 = r[0].series.as_ref().unwrap();
        assert_eq!(
            s0.columns,
            ["flow0.ep0.stream0_window", "flow0.ep0.stream4_window"]
        );
        assert_eq!(s0.read, SeriesRead::Reaches(16384.0));
        assert_eq!((r[0].value, r[0].tolerance), (Some(0.5), Some(0.25)));
        assert_eq!(r[1].series.as_ref().unwrap().read, SeriesRead::At(0.7));
        assert_eq!(r[1].tolerance, None);
        assert_eq!((r[2].series.is_none(), r[2].tolerance), (true, Some(0.0)));
        assert_eq!(
            (r[3].over.as_deref(), r[3].value, r[2].over.as_deref()),
            (Some("flow0.ep1.migrations.0.cwnd_before"), Some(0.86), None)
        );
    }

    #[test]
    fn series_claim_and_tolerance_errors_name_the_field() {
        let base = "[paper]\nid = \"001\"\nexperiment = \"x\"\nsource = \"F\"\nmetric = \"m\"\nbaseline = { \"topology.link.loss\" = 0.0 }\n[[paper.reported]]\n";
        let cases = [
            (
                "series = []\nreaches = 1\nvalue = 1\n",
                "paper.reported[0].series",
            ),
            (
                "series = [\"\"]\nreaches = 1\nvalue = 1\n",
                "paper.reported[0].series[0]",
            ),
            ("series = [\"c\"]\nvalue = 1\n", "paper.reported[0].reaches"),
            (
                "series = [\"c\"]\nreaches = 1\nat = 1\nvalue = 1\n",
                "paper.reported[0].at",
            ),
            (
                "series = [\"c\"]\nat = -1\nvalue = 1\n",
                "paper.reported[0].at",
            ),
            (
                "series = [\"c\"]\nreaches = \"x\"\nvalue = 1\n",
                "paper.reported[0].reaches",
            ),
            ("reaches = 1\nvalue = 1\n", "paper.reported[0].reaches"),
            ("at = 1\nvalue = 1\n", "paper.reported[0].at"),
            (
                "series = [\"c\"]\nreaches = 1\nchange = 0.1\n",
                "paper.reported[0].value",
            ),
            (
                "series = [\"c\"]\nreaches = 1\nvalue = 1\nmetric = \"m2\"\n",
                "paper.reported[0].metric",
            ),
            (
                "series = [\"c\"]\nreaches = 1\nvalue = 1\nstatistic = \"std_dev\"\n",
                "paper.reported[0].statistic",
            ),
            (
                "value = 1\ntolerance = -0.1\n",
                "paper.reported[0].tolerance",
            ),
            (
                "change = 0.1\ntolerance = 0.1\n",
                "paper.reported[0].tolerance",
            ),
            ("change = 0.1\nover = \"m2\"\n", "paper.reported[0].over"),
            ("value = 1\nover = \"\"\n", "paper.reported[0].over"),
            ("value = 1\nover = 3\n", "paper.reported[0].over"),
            (
                "series = [\"c\"]\nreaches = 1\nvalue = 1\nover = \"m2\"\n",
                "paper.reported[0].over",
            ),
        ];
        for (extra, field) in cases {
            let text = format!("{base}{extra}");
            let e = parse_text(&text).unwrap_err();
            assert_eq!(e.field, field, "{text}: {e}");
        }
    }

    #[test]
    fn errors_name_the_field() {
        let base = "[paper]\nid = \"000\"\nexperiment = \"x\"\nsource = \"T1\"\nmetric = \"m\"\n";
        let cases = [
            ("", "paper.id", "[paper]\nexperiment = \"x\"\n"),
            ("scale = 0\n", "paper.scale", ""),
            ("runs = 0\n", "paper.runs", ""),
            ("colour = 1\n", "paper.colour", ""),
            (
                "baseline = { \"nope\" = 1 }\n",
                "paper.baseline.\"nope\"",
                "",
            ),
            (
                "baseline = { \"topology.link.delay\" = \"30ms\" }\n",
                "paper.baseline.\"topology.link.delay\"",
                "",
            ),
            ("plot = { x = \"nope\" }\n", "paper.plot.x", ""),
            (
                "[[paper.reported]]\npoint = {}\n",
                "paper.reported[0].value",
                "",
            ),
            (
                "[[paper.reported]]\nchange = 0.1\n",
                "paper.reported[0].change",
                "",
            ),
            (
                "[[paper.reported]]\ndirection = \"lower\"\n",
                "paper.reported[0].direction",
                "",
            ),
            (
                "baseline = { \"topology.link.loss\" = 0.0 }\n[[paper.reported]]\ndirection = \"down\"\n",
                "paper.reported[0].direction",
                "",
            ),
            (
                "baseline = { \"topology.link.loss\" = 0.0 }\n[[paper.reported]]\ndirection = \"lower\"\nchange = -0.1\n",
                "paper.reported[0].direction",
                "",
            ),
            (
                "[[paper.reported]]\nvalue = 1\nstatistic = \"median\"\n",
                "paper.reported[0].statistic",
                "",
            ),
            (
                "[[paper.reported]]\nvalue = 1\nmetric = \"\"\n",
                "paper.reported[0].metric",
                "",
            ),
            (
                "[[paper.trace]]\nsource = \"F\"\ntitle = \"t\"\ncolumns = []\n",
                "paper.trace[0].columns",
                "",
            ),
            (
                "[[paper.trace]]\nsource = \"F\"\ntitle = \"t\"\ncolumns = [\"c\"]\nuntil = -1\n",
                "paper.trace[0].until",
                "",
            ),
        ];
        for (extra, field, replace) in cases {
            let text = if replace.is_empty() {
                format!("{base}{extra}")
            } else {
                replace.to_string()
            };
            let e = parse_text(&text).unwrap_err();
            assert_eq!(e.field, field, "{text}: {e}");
        }
    }

    #[test]
    fn unstated_parameters_parse_in_both_forms_and_combine() {
        let p = parse_text(
            r#"
            [paper]
            id = "000"
            experiment = "x"
            source = "T1"
            metric = "m"
            [[paper.unstated]]
            name = "loss placement"
            why = "the paper does not say where netem sat"
            alternatives = [
              { name = "data path", set = { "topology.reverse.loss" = "1%" } },
              { name = "ACK path", set = { "topology.forward.loss" = "1%", "topology.reverse.loss" = "none" } },
            ]
            [[paper.unstated]]
            key = "topology.link.rate"
            values = ["100Mbps", "1Gbps", "10Mbps"]
            why = "only the nominal rate is given"
            "#,
        )
        .unwrap();
        let u = &p.unstated;
        assert_eq!(
            (u[0].name.as_str(), u[0].key.as_deref()),
            ("loss placement", None)
        );
        assert_eq!(u[0].alternatives[1].name, "ACK path");
        assert_eq!(
            u[0].alternatives[1].set,
            [
                (
                    "topology.forward.loss".to_string(),
                    Value::String("1%".into())
                ),
                (
                    "topology.reverse.loss".to_string(),
                    Value::String("none".into())
                )
            ]
        );
        // The key form: named by its key, each value an alternative named as written.
        assert_eq!(u[1].name, "topology.link.rate");
        assert_eq!(u[1].key.as_deref(), Some("topology.link.rate"));
        let names: Vec<&str> = u[1].alternatives.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["100Mbps", "1Gbps", "10Mbps"]);
        // Combinations: the first entry slowest, as a sweep grid.
        let c = p.combinations();
        assert_eq!(c.len(), 6);
        assert_eq!(
            (c[0].clone(), c[1].clone(), c[3].clone()),
            (vec![0, 0], vec![0, 1], vec![1, 0])
        );
        assert_eq!(p.combination_label(&[1, 2]), "ACK path, 10Mbps");
        assert_eq!(p.combination_slug(&[1, 2]), "1-ack-path_2-10mbps");
        assert_eq!(
            p.overrides(&[1, 0]),
            [
                (
                    "topology.forward.loss".to_string(),
                    Value::String("1%".into())
                ),
                (
                    "topology.reverse.loss".to_string(),
                    Value::String("none".into())
                ),
                (
                    "topology.link.rate".to_string(),
                    Value::String("100Mbps".into())
                ),
            ]
        );
        // Without unstated parameters there is nothing to combine.
        let plain =
            parse_text("[paper]\nid = \"0\"\nexperiment = \"x\"\nsource = \"s\"\nmetric = \"m\"\n")
                .unwrap();
        assert!(plain.combinations().is_empty());
    }

    #[test]
    fn unstated_errors_name_the_field() {
        let base = "[paper]\nid = \"000\"\nexperiment = \"x\"\nsource = \"T1\"\nmetric = \"m\"\n";
        let u = "[[paper.unstated]]\nwhy = \"w\"\n";
        let cases: Vec<(String, &str)> = vec![
            ("unstated = 1\n".into(), "paper.unstated"),
            (format!("{u}key = \"topology.reverse.loss\"\n"), "paper.unstated[0].values"),
            (format!("{u}key = \"topology.reverse.loss\"\nvalues = [0.01]\n"), "paper.unstated[0].values"),
            (format!("{u}key = \"topology.reverse.loss\"\nvalues = [0.01, 0.01]\n"), "paper.unstated[0].values[1]"),
            (format!("{u}values = [0.01, 0.02]\n"), "paper.unstated[0].key"),
            ("[[paper.unstated]]\nkey = \"topology.reverse.loss\"\nvalues = [0.01, 0.02]\n".into(), "paper.unstated[0].why"),
            (format!("{u}key = \"a..b\"\nvalues = [1, 2]\n"), "paper.unstated[0].key"),
            (format!("{u}key = \"seed\"\nvalues = [1, 2]\n"), "paper.unstated[0].key"),
            // A swept key (or a path inside or around one) cannot be unstated.
            (format!("{u}key = \"topology.link.delay\"\nvalues = [\"1ms\", \"2ms\"]\n"), "paper.unstated[0].key"),
            (format!("{u}key = \"topology.link\"\nvalues = [{{}}, {{ rate = \"1Mbps\" }}]\n"), "paper.unstated[0].key"),
            (format!("{u}key = \"topology.reverse.loss\"\nvalues = [1, 2]\ncolour = 1\n"), "paper.unstated[0].colour"),
            (format!("{u}name = \"p\"\nkey = \"topology.reverse.loss\"\nvalues = [0.1, 0.2]\nalternatives = []\n"), "paper.unstated[0].alternatives"),
            (format!("{u}alternatives = [{{ name = \"a\", set = {{ x = 1 }} }}, {{ name = \"b\", set = {{ x = 2 }} }}]\n"), "paper.unstated[0].name"),
            (format!("{u}name = \"p\"\nalternatives = [{{ name = \"a\", set = {{ x = 1 }} }}]\n"), "paper.unstated[0].alternatives"),
            (format!("{u}name = \"p\"\nalternatives = [{{ name = \"a\", set = {{ x = 1 }} }}, {{ name = \"a\", set = {{ x = 2 }} }}]\n"), "paper.unstated[0].alternatives[1].name"),
            (format!("{u}name = \"p\"\nalternatives = [{{ name = \"a\", set = {{}} }}, {{ name = \"b\", set = {{ x = 2 }} }}]\n"), "paper.unstated[0].alternatives[0].set"),
            (format!("{u}name = \"p\"\nalternatives = [{{ name = \"a\" }}, {{ name = \"b\", set = {{ x = 2 }} }}]\n"), "paper.unstated[0].alternatives[0].set"),
            (format!("{u}name = \"p\"\nalternatives = [{{ name = \"a\", set = {{ x = 1 }}, why = 1 }}, {{ name = \"b\", set = {{ x = 2 }} }}]\n"), "paper.unstated[0].alternatives[0].why"),
            (format!("{u}name = \"p\"\nalternatives = [{{ name = \"a\", set = {{ \"topology.link.loss\" = 0.1 }} }}, {{ name = \"b\", set = {{ x = 2 }} }}]\n"), "paper.unstated[0].alternatives[0].set.\"topology.link.loss\""),
            (format!("{u}name = \"p\"\nalternatives = [{{ name = \"a\", set = {{ \"a.b\" = 1, \"a.b.c\" = 2 }} }}, {{ name = \"b\", set = {{ x = 2 }} }}]\n"), "paper.unstated[0].alternatives[0].set.\"a.b.c\""),
            // Two entries: distinct names, no key set by both.
            (format!("{u}key = \"x\"\nvalues = [1, 2]\n{u}key = \"x\"\nvalues = [3, 4]\n"), "paper.unstated[1].name"),
            (format!("{u}key = \"x\"\nvalues = [1, 2]\n{u}name = \"other\"\nkey = \"x.y\"\nvalues = [3, 4]\n"), "paper.unstated[1]"),
            (format!("{u}key = \"a\"\nvalues = [1, 2, 3, 4, 5, 6, 7, 8]\n{u}key = \"b\"\nvalues = [1, 2, 3, 4, 5, 6, 7, 8, 9]\n"), "paper.unstated"),
        ];
        for (extra, field) in cases {
            let text = format!("{base}{extra}");
            let e = parse_text(&text).unwrap_err();
            assert_eq!(e.field, field, "{text}: {e}");
        }
        // The label overrides of the figure.
        let p = parse_text(&format!("{base}plot = {{ x = \"topology.link.delay\", x_label = \"RTT\", y_label = \"latency (s)\" }}\n")).unwrap();
        let plot = p.plot.unwrap();
        assert_eq!(
            (plot.x_label.as_deref(), plot.y_label.as_deref()),
            (Some("RTT"), Some("latency (s)"))
        );
        let e = parse_text(&format!(
            "{base}plot = {{ x = \"topology.link.delay\", x_label = \"\" }}\n"
        ))
        .unwrap_err();
        assert_eq!(e.field, "paper.plot.x_label");
    }
}

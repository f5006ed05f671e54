//! The scenario fuzz target of issue 15 and its input generator.
//!
//! [`check`] is the target: it parses and validates a scenario text, and for an accepted
//! one runs its first and last sweep points with a small budget, checking on the way that
//! - an error names a field;
//! - `to_toml` of each point's `Config` parses back to an equal `Config`;
//! - time never goes backwards (trace records arrive in time order);
//! - no QUIC datagram is larger than its sender's `max_udp_payload`, no SCTP packet than
//!   `mtu - 20`, no TCP segment than the effective MSS (these two: the kit's
//!   [`sim_core::testing::Watch::basic`], shared with the property tests);
//! - every run ends with a status (never `stopped`) within its event budget: live events
//!   plus series samples at most `sim.max_events`, the end time at most `sim.time_limit`;
//! - packets are conserved per flow: sent = delivered + dropped (by reason) + in network;
//! - a second run of the same point gives the same result, byte for byte.
//!
//! [`generate`] writes structure-aware inputs: a scenario of the project (`scenarios/`)
//! parsed into TOML, then mutated through the scenario schema ([`sim_core::scenario::schema`]):
//! keys of every table set to values of their kind (edge cases included: zero, one,
//! negative, overflowing, unknown units, wrong types), keys removed, keys of other
//! tables added, sweeps added; sometimes a line of the text is cut or doubled.
//!
//! Two drivers use them: `src/bin/fuzz-driver.rs` (stable toolchain: N inputs from a seed;
//! `scripts/test` runs it) and the cargo-fuzz targets in `fuzz/libfuzzer/` (nightly,
//! coverage-guided). `docs/fuzzing.md` says how to run both longer.

use sim_core::config::Config;
use sim_core::metrics::{RunResult, RunStatus};
use sim_core::scenario::schema::{self, Kind};
use sim_core::testing::Watch;
use sim_core::time::SimDuration;
use sim_core::trace::TraceRecord;
use toml::{Table, Value};

/// The scenarios the generator starts from.
pub const SEEDS: &[&str] = &[
    include_str!("../../scenarios/examples/quic-bulk.toml"),
    include_str!("../../scenarios/examples/quic-bulk-ge.toml"),
    include_str!("../../scenarios/examples/connection-lifecycle.toml"),
    include_str!("../../scenarios/examples/handover.toml"),
    include_str!("../../scenarios/examples/dumbbell-cbr.toml"),
    include_str!("../../scenarios/examples/link-down.toml"),
    include_str!("../../scenarios/examples/ge-netem.toml"),
    include_str!("../../scenarios/examples/sweep-loss-delay.toml"),
    include_str!("../../scenarios/examples/cbr-clean.toml"),
    include_str!("../../scenarios/paper004/handover-5g-campus.toml"),
];

/// The bounds a fuzzed run gets (a scenario's own are kept when smaller).
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// At most this many units of work (`sim.max_events`).
    pub max_events: u64,
    /// At most this much simulated time (`sim.time_limit`).
    pub time_limit: SimDuration,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            max_events: 20_000,
            time_limit: SimDuration::from_secs(120),
        }
    }
}

/// What [`check`] did with an input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Not valid TOML or not a valid scenario: the error's field.
    Rejected(String),
    /// Accepted; the statuses of the runs (first and last sweep point).
    Ran(Vec<RunStatus>),
}

/// The fuzz target: `Err` describes a violated invariant.
pub fn check(text: &str, budget: Budget) -> Result<Outcome, String> {
    let scenario = match sim_core::scenario::parse_str(text) {
        Ok(s) => s,
        Err(e) if e.field.is_empty() || e.allowed.is_empty() => {
            return Err(format!(
                "an error without a field or an allowed range: {e:?}"
            ))
        }
        Err(e) => return Ok(Outcome::Rejected(e.field)),
    };
    // An accepted `[paper] id` names files under `reproduce --out` (issue 28 item 1).
    if let Some(p) = &scenario.paper {
        if !sim_core::scenario::paper::safe_id(&p.id) {
            return Err(format!("an unsafe [paper] id accepted: {:?}", p.id));
        }
    }
    // Every accepted sweep point is a distinct configuration (issue 28 item 5: two equal
    // points made `sweep` fail for ever).
    if !scenario.is_paired() {
        let mut seen = std::collections::BTreeMap::new();
        for (i, p) in scenario.points.iter().enumerate() {
            let json = serde_json::to_string(&p.config).map_err(|e| e.to_string())?;
            if let Some(j) = seen.insert(json, i) {
                return Err(format!(
                    "sweep points {j} and {i} are the same configuration"
                ));
            }
        }
    }
    let mut points = vec![&scenario.points[0]];
    if scenario.points.len() > 1 {
        points.push(scenario.points.last().expect("non-empty"));
    }
    let mut statuses = Vec::new();
    for p in points {
        let mut cfg = p.config.clone();
        cfg.sim.max_events = cfg.sim.max_events.min(budget.max_events);
        cfg.sim.time_limit = cfg.sim.time_limit.min(budget.time_limit);
        if cfg.validate().is_err() {
            // Only a smaller budget than the scenario's: skip what it makes invalid.
            continue;
        }
        round_trip(&cfg)?;
        statuses.push(run_checked(&cfg)?);
    }
    Ok(Outcome::Ran(statuses))
}

fn round_trip(cfg: &Config) -> Result<(), String> {
    let text = sim_core::scenario::to_toml(cfg).map_err(|e| format!("to_toml failed: {e}"))?;
    let back = sim_core::scenario::parse_str(&text)
        .map_err(|e| format!("to_toml output does not parse back: {e}\n{text}"))?;
    if &back.base != cfg {
        return Err(format!("to_toml round trip changed the config:\n{text}"));
    }
    Ok(())
}

fn run_checked(cfg: &Config) -> Result<RunStatus, String> {
    // The property-testing kit's watch (`sim_core::testing`), its checks that hold for
    // any valid scenario: time order and every datagram / packet / segment size bound.
    let mut watch = Watch::basic(cfg);
    let mut tracer = |r: &TraceRecord| watch.record(r);
    let r = sim_core::runner::run_traced(cfg, cfg.seed, &mut tracer)
        .map_err(|e| format!("a validated config failed to run: {e}"))?;
    if let Some(v) = watch.violation {
        return Err(v);
    }
    check_result(cfg, &r)?;
    let again = sim_core::run(cfg, cfg.seed).map_err(|e| format!("second run failed: {e}"))?;
    let (a, b) = (json(&r)?, json(&again)?);
    if a != b {
        return Err("a second run of the same config and seed differs".into());
    }
    Ok(r.status)
}

fn json(r: &RunResult) -> Result<String, String> {
    serde_json::to_string(r).map_err(|e| format!("result does not serialise: {e}"))
}

fn check_result(cfg: &Config, r: &RunResult) -> Result<(), String> {
    sim_core::runner::check_run_invariants(cfg, r)
}

/// A small deterministic generator (SplitMix64), so that a seed names an input.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// The generator for `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// A generator seeded by bytes (the libFuzzer input of the structure-aware target).
    pub fn from_bytes(data: &[u8]) -> Self {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in data {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        Rng(h)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

fn s(x: &str) -> Value {
    Value::String(x.into())
}

/// One of `xs`, as a string value.
fn ps(rng: &mut Rng, xs: &[&str]) -> Value {
    s(xs[rng.below(xs.len())])
}

/// A value for a key of `kind` (with `choices` for an enum): mostly plausible, often an
/// edge case, sometimes of the wrong type.
pub fn value(rng: &mut Rng, kind: Kind, choices: &[&str]) -> Value {
    if rng.below(12) == 0 {
        return match rng.below(4) {
            0 => Value::Boolean(true),
            1 => s("bogus"),
            2 => Value::Integer(-1),
            _ => Value::Table(Table::new()),
        };
    }
    match kind {
        Kind::Time => match rng.below(3) {
            0 => Value::Integer(*rng.pick(&[0, 1, 1_000_000, -5, i64::MAX])),
            _ => ps(
                rng,
                &[
                    "0s",
                    "1ns",
                    "1us",
                    "100us",
                    "1ms",
                    "5ms",
                    "38ms",
                    "100ms",
                    "1s",
                    "2s",
                    "30s",
                    "600s",
                    "-5ms",
                    "1.5ns",
                    "99999999999999s",
                    "1min",
                    "1.5s",
                    "10 ms",
                ],
            ),
        },
        Kind::Rate => match rng.below(4) {
            0 => Value::Integer(*rng.pick(&[0, 1, 1_000_000, -5])),
            _ => ps(
                rng,
                &[
                    "0bps",
                    "1bps",
                    "1kbps",
                    "64kbps",
                    "1Mbps",
                    "10Mbps",
                    "100Mbps",
                    "1Gbps",
                    "10Gbps",
                    "1000000Gbps",
                    "999999999999Mbps",
                    "-5Mbps",
                    "1.5bps",
                ],
            ),
        },
        Kind::Size => match rng.below(3) {
            0 => Value::Integer(*rng.pick(&[0, 1, 1200, 1252, 16383, 20000, 65527, 100_000, -5])),
            _ => ps(
                rng,
                &[
                    "0B", "1B", "100B", "1200B", "1KB", "64KB", "1MB", "10MB", "1GB", "1TB",
                    "-5KB", "1.5B", "15MiB", "1BDP", "0.5BDP", "1000GB",
                ],
            ),
        },
        Kind::Probability => match rng.below(3) {
            0 => ps(rng, &["1%", "50%", "100%", "-1%", "x%"]),
            _ => Value::Float(*rng.pick(&[0.0, 0.001, 0.01, 0.1, 0.5, 1.0, 1.5, -0.1])),
        },
        Kind::Integer => Value::Integer(*rng.pick(&[
            0,
            1,
            2,
            3,
            4,
            10,
            100,
            1000,
            10_000,
            1_000_000,
            4_294_967_295,
            -1,
            i64::MAX,
        ])),
        Kind::Number => Value::Float(*rng.pick(&[0.0, 0.1, 0.5, 0.7, 1.0, 2.0, -1.0, 1e300])),
        Kind::Bool => Value::Boolean(rng.below(2) == 0),
        Kind::Enum => {
            if choices.is_empty() || rng.below(6) == 0 {
                s("bogus")
            } else {
                ps(rng, choices)
            }
        }
        Kind::String => ps(rng, &["x", "", "../a/b", "a/b", "..", "name with spaces"]),
        Kind::Table => Value::Table(Table::new()),
        Kind::Tables => Value::Array(Vec::new()),
    }
}

/// Number of tables in `t` (itself included), in the order [`with_table`] visits them.
fn count_tables(t: &Table) -> usize {
    1 + t.values().map(count_in_value).sum::<usize>()
}

fn count_in_value(v: &Value) -> usize {
    match v {
        Value::Table(t) => count_tables(t),
        Value::Array(a) => a.iter().map(count_in_value).sum(),
        _ => 0,
    }
}

/// Applies `f` to the `k`-th table of `t` (depth first); `true` once applied.
fn with_table(t: &mut Table, k: &mut usize, f: &mut dyn FnMut(&mut Table)) -> bool {
    if *k == 0 {
        f(t);
        return true;
    }
    *k -= 1;
    for (_, v) in t.iter_mut() {
        if with_value(v, k, f) {
            return true;
        }
    }
    false
}

fn with_value(v: &mut Value, k: &mut usize, f: &mut dyn FnMut(&mut Table)) -> bool {
    match v {
        Value::Table(t) => with_table(t, k, f),
        Value::Array(a) => a.iter_mut().any(|x| with_value(x, k, f)),
        _ => false,
    }
}

/// Every key of the scenario format, with its kind and choices.
fn all_fields() -> Vec<schema::Field> {
    let mut v: Vec<schema::Field> = sim_core::scenario::schema()
        .iter()
        .flat_map(|t| t.fields.iter().copied())
        .collect();
    v.sort_by_key(|f| f.name);
    v
}

/// Sweep keys the generator tries.
const SWEEP_KEYS: &[(&str, Kind)] = &[
    ("topology.link.delay", Kind::Time),
    ("topology.link.rate", Kind::Rate),
    ("topology.link.loss", Kind::Probability),
    ("flows[0].bytes", Kind::Size),
    ("flows[0].rate", Kind::Rate),
    ("seed", Kind::Integer),
    ("flows[0].streams", Kind::Integer),
    ("output.sample_interval", Kind::Time),
];

/// `[paper] id`s a hostile or careless user writes (issue 28 item 1): separators,
/// traversal, absolute paths, empty, too long, not ASCII; and plain ones.
const PAPER_IDS: &[&str] = &[
    "../../..scratch/x",
    "/tmp/quicsim-fuzz-abs",
    "a/b",
    "a\\b",
    "..",
    ".",
    "",
    " ",
    "000",
    "p-1.v2_x",
    "é",
    "a\u{0}b",
    "CON",
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
];

/// A `[paper]` table with a hostile or plain id (and the other required keys, sometimes
/// missing), or one of its keys swept.
fn mutate_paper(doc: &mut Table, rng: &mut Rng) {
    let id = match rng.below(4) {
        0 => value(rng, Kind::String, &[]),
        _ => s(rng.pick::<&str>(PAPER_IDS)),
    };
    let mut t = Table::new();
    t.insert("id".into(), id);
    for (k, v) in [
        ("experiment", "e"),
        ("source", "Table 1"),
        ("metric", "flow0.ep1.goodput_bps"),
    ] {
        if rng.below(8) != 0 {
            t.insert(k.into(), s(v));
        }
    }
    doc.insert("paper".into(), Value::Table(t));
    if rng.below(4) == 0 {
        let key = *rng.pick(&["paper.id", "paper.metric", "paper.source"]);
        let sweep = doc
            .entry("sweep")
            .or_insert_with(|| Value::Table(Table::new()));
        if let Value::Table(sw) = sweep {
            sw.insert(key.into(), Value::Array(vec![s("a"), s("b")]));
        }
    }
}

/// A `[sweep]` table a careless user writes (issue 28 items 5, 12): one point twice, the
/// same value in two spellings, one key in two spellings, swept `seed` / `runs`, empty or
/// non-array values, a key that names nothing, a table instead of values, many points.
fn mutate_sweep(doc: &mut Table, rng: &mut Rng) {
    let (key, kind) = *rng.pick(SWEEP_KEYS);
    let v = value(rng, kind, &[]);
    let same = |k: &str, v: &Value| -> Vec<(String, Value)> {
        vec![(k.to_string(), Value::Array(vec![v.clone(), v.clone()]))]
    };
    let entries: Vec<(String, Value)> = match rng.below(9) {
        0 => same(key, &v),
        1 => vec![(
            "topology.link.delay".into(),
            Value::Array(vec![s("1s"), s("1000ms"), Value::Integer(1_000_000_000)]),
        )],
        2 => vec![(
            "topology.link.loss".into(),
            Value::Array(vec![Value::Float(0.01), s("1%")]),
        )],
        3 => {
            // One key in two spellings.
            let other = key.replacen("[0]", ".0", 1);
            vec![
                (key.to_string(), Value::Array(vec![v.clone()])),
                (other, Value::Array(vec![value(rng, kind, &[])])),
            ]
        }
        4 => vec![(
            (*rng.pick(&[
                "seed",
                "runs",
                "name",
                "sweep",
                "nothing.here",
                "flows[99].bytes",
            ]))
            .to_string(),
            Value::Array(vec![Value::Integer(1), Value::Integer(2)]),
        )],
        5 => vec![(key.to_string(), Value::Array(Vec::new()))],
        6 => vec![(key.to_string(), v.clone())],
        7 => vec![(key.to_string(), Value::Table(Table::new()))],
        _ => {
            // Many points (each distinct); a sweep holds at most 1 000 000 jobs.
            let n = 1 + rng.below(2000);
            vec![(
                "topology.link.delay".into(),
                Value::Array((0..n).map(|i| s(&format!("{}ms", i + 1))).collect()),
            )]
        }
    };
    if rng.below(6) == 0 {
        doc.insert("sweep".into(), v);
        return;
    }
    let sweep = doc
        .entry("sweep")
        .or_insert_with(|| Value::Table(Table::new()));
    if let Value::Table(t) = sweep {
        t.extend(entries);
    }
}

/// One mutation of `doc`.
fn mutate(doc: &mut Table, rng: &mut Rng, fields: &[schema::Field]) {
    match rng.below(10) {
        // A hostile [paper] table or sweep table (issue 28).
        8 if rng.below(2) == 0 => mutate_paper(doc, rng),
        9 if rng.below(2) == 0 => mutate_sweep(doc, rng),
        // A [sweep] over a key with a few values.
        0 => {
            let (key, kind) = *rng.pick(SWEEP_KEYS);
            let n = 1 + rng.below(3);
            let vals: Vec<Value> = (0..n).map(|_| value(rng, kind, &[])).collect();
            let sweep = doc
                .entry("sweep")
                .or_insert_with(|| Value::Table(Table::new()));
            if let Value::Table(t) = sweep {
                t.insert(key.into(), Value::Array(vals));
            }
        }
        // Bounds and series.
        1 => {
            let sim = doc
                .entry("sim")
                .or_insert_with(|| Value::Table(Table::new()));
            if let Value::Table(t) = sim {
                let f = fields.iter().find(|f| f.name == "max_events").expect("key");
                t.insert("max_events".into(), value(rng, f.kind, f.choices));
            }
            let out = doc
                .entry("output")
                .or_insert_with(|| Value::Table(Table::new()));
            if let Value::Table(t) = out {
                t.insert("series".into(), Value::Boolean(rng.below(2) == 0));
                t.insert("sample_interval".into(), value(rng, Kind::Time, &[]));
            }
        }
        // A key of one table set, removed or replaced, anywhere in the document.
        _ => {
            let mut k = rng.below(count_tables(doc));
            let op = rng.below(10);
            let field = *rng.pick(fields);
            let pick_key = rng.next_u64();
            let v = value(rng, field.kind, field.choices);
            let mut f = |t: &mut Table| match op {
                0 | 1 if !t.is_empty() => {
                    let key = t.keys().nth(pick_key as usize % t.len()).cloned();
                    if let Some(key) = key {
                        t.remove(&key);
                    }
                }
                2..=7 if !t.is_empty() => {
                    // A value of the key's own kind, where the schema knows the key.
                    let key = t.keys().nth(pick_key as usize % t.len()).cloned();
                    if let Some(key) = key {
                        let known = sim_core::scenario::schema()
                            .iter()
                            .flat_map(|t| t.fields.iter())
                            .find(|f| f.name == key)
                            .map(|f| (f.kind, f.choices));
                        let mut r2 = Rng::new(pick_key);
                        let nv = match known {
                            Some((kind, choices)) => value(&mut r2, kind, choices),
                            None => v.clone(),
                        };
                        t.insert(key, nv);
                    }
                }
                _ => {
                    t.insert(field.name.into(), v.clone());
                }
            };
            with_table(doc, &mut k, &mut f);
        }
    }
}

/// One structure-aware input.
pub fn generate(rng: &mut Rng) -> String {
    let fields = all_fields();
    let base = *rng.pick(SEEDS);
    let mut doc: Table = base
        .parse()
        .expect("the project's scenarios are valid TOML");
    // Keep the seeds' own sweeps small: most inputs should run.
    if rng.below(2) == 0 {
        doc.remove("sweep");
    }
    doc.remove("paper");
    let n = 1 + rng.below(3);
    for _ in 0..n {
        mutate(&mut doc, rng, &fields);
    }
    let mut text = doc.to_string();
    if rng.below(10) == 0 {
        // A text-level cut: a line dropped or doubled.
        let mut lines: Vec<&str> = text.lines().collect();
        if !lines.is_empty() {
            let i = rng.below(lines.len());
            if rng.below(2) == 0 {
                lines.remove(i);
            } else {
                lines.insert(i, lines[i]);
            }
        }
        text = lines.join("\n");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 28: the generator also writes hostile `[paper]` ids and careless sweep
    /// tables (it removed `[paper]` and only added well-formed sweeps before), and the
    /// target refuses them with the field named.
    #[test]
    fn generator_writes_paper_ids_and_sweep_tables_the_target_refuses() {
        let (mut paper, mut spellings, mut duplicates) = (0, 0, 0);
        for seed in 0..3000 {
            let text = generate(&mut Rng::new(seed));
            paper += usize::from(text.contains("[paper]"));
            spellings += usize::from(text.contains("\"1000ms\""));
            duplicates += usize::from(text.contains("\"flows.0."));
        }
        assert!(paper > 30, "{paper} inputs with [paper]");
        assert!(
            spellings > 10,
            "{spellings} inputs with one time in two spellings"
        );
        assert!(
            duplicates > 5,
            "{duplicates} inputs with a key in two spellings"
        );
        let base = "[topology]\nkind = \"two_hosts\"\n[[flows]]\nkind = \"cbr\"\nrate = \"1Mbps\"\ncount = 5\n";
        let paper = |id: &str| {
            format!(
                "{base}[paper]\nid = {id:?}\nexperiment = \"e\"\nsource = \"T1\"\nmetric = \"m\"\n"
            )
        };
        for id in ["../../..scratch/x", "/tmp/x", "a/b", "..", ""] {
            assert_eq!(
                check(&paper(id), Budget::default()),
                Ok(Outcome::Rejected("paper.id".into())),
                "{id}"
            );
        }
        let sweep = format!("{base}[sweep]\n\"topology.link.delay\" = [\"1s\", \"1000ms\"]\n");
        assert_eq!(
            check(&sweep, Budget::default()),
            Ok(Outcome::Rejected("sweep.\"topology.link.delay\"[1]".into()))
        );
    }
}

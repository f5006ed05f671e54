//! From a raw TOML document (sweep already applied) to a validated [`Config`].
//!
//! Every table is read against its descriptors ([`super::schema`]) by [`Read`]: unknown
//! keys, units, ranges and defaults come from there, and each value is parsed and checked
//! once, at the key where it was written. What the descriptors cannot say is done here as
//! table pre-passes: link layering (`link` then `forward` / `reverse`, dumbbell `access`,
//! `client_access` / `server_access`, `[[topology.pair]]`, handovers), `"xBDP"` queues
//! (resolved once the round trip is known), the loss-model spellings and CBR durations.
//! The rules that tie keys together are the shared ones of [`crate::validate`].

use super::raw::*;
use super::schema::{
    self, DefaultValue, CBR, CHANGE, CONNECTION, DUMBBELL, ECN, FLOW, FLOW_KINDS, HANDOVER, JITTER,
    LINK, LOSS_MODELS, OUTPUT, PAIR, QUEUE, QUIC, SIM, TOP, TRANSPORT_FLOW, TRANSPORT_SIDES,
    TRANSPORT_START, TWO_HOSTS,
};
use crate::config::loss::{self, LossModelDef};
use crate::config::quic::QuicConfig;
use crate::config::sctp::SctpConfig;
use crate::config::tcp::TcpConfig;
use crate::config::workload::{self, WorkloadError};
use crate::config::{
    AppConfig, BulkSpec, Config, EcnMarking, FlowConfig, Handover, Jitter, JitterDistribution,
    LinkChange, LinkConfig, LossModel, OutputConfig, PairLinks, QueueLevel, QueueLimit,
    SequenceSpec, Sides, SimLimits, Topology, TransportConfig, WorkloadConfig,
};
use crate::time::{SimDuration, SimTime};
use crate::units::{format_duration, format_rate, parse_bytes, Bytes, Rate};
use crate::validate::{
    check_change_rules, check_changes_order, check_connections, check_queue, join, ConfigError,
    MAX_TOML_INT,
};
use std::collections::BTreeMap;
use toml::{Table, Value};

/// Defaults that no single key's descriptor holds.
pub(super) mod defaults {
    use crate::time::SimDuration;
    /// CBR `duration` when neither `duration` nor `count` is given (the CBR descriptor's
    /// `duration` help says so).
    pub const CBR_DURATION: SimDuration = SimDuration::from_secs(10);
    /// Bytes a CBR datagram counts for in its `rate`, besides its payload (IPv4 + UDP).
    pub const CBR_HEADER: u64 = 28;
}

const QUEUE_EXPECTED: &str = "\"1BDP\" or \"0.5BDP\" (a multiple of the path's bandwidth-delay product), a size such as \"64KB\", an integer number of packets, \"unlimited\", or a table { bytes = \"1BDP\" | \"64KB\", packets = 100 }";
const JITTER_EXPECTED: &str = "a time such as \"5ms\" (uniform, no reordering) or a table { amount = \"5ms\", distribution = \"uniform\" | \"normal\", reorder = true | false }";
/// What a loss value that is neither a probability, `"none"` nor a table is told; the
/// models listed are [`LOSS_MODELS`].
fn loss_expected() -> String {
    let models: Vec<String> = LOSS_MODELS.iter().map(|m| format!("\"{m}\"")).collect();
    format!(
        "a loss probability (0.02 or \"2%\" = Bernoulli), \"none\", or a table with model = {}",
        models.join(" | ")
    )
}

/// The `one of "a", "b"` text of a list of choices.
fn one_of(choices: &[&str]) -> String {
    let list: Vec<String> = choices.iter().map(|c| format!("\"{c}\"")).collect();
    format!("one of {}", list.join(", "))
}

/// A typed value's canonical TOML form (its serde form), for the typed struct it goes into.
fn canon<T: serde::Serialize>(x: &T, path: &str) -> Result<Value, ConfigError> {
    Value::try_from(x).map_err(|e| {
        ConfigError::new(
            path,
            "",
            format!("a value that can be written as TOML ({e})"),
        )
    })
}

// ---------------------------------------------------------------- links

/// The link tables that apply to one link, least specific first, each with its path.
#[derive(Clone, Default)]
struct Layers(Vec<(Table, String)>);

impl Layers {
    /// Adds the link table `v` (if present) as the most specific layer. Its keys are checked
    /// here, once, whatever the number of links it applies to.
    fn push(&mut self, v: Option<&Value>, path: &str) -> Result<(), ConfigError> {
        if let Some(v) = v {
            let Value::Table(t) = v else {
                return Err(ConfigError::new(
                    path,
                    render(v),
                    format!("a table ({})", LINK.what),
                ));
            };
            check_keys(t, path, &[&LINK])?;
            self.0.push((t.clone(), path.to_string()));
        }
        Ok(())
    }

    /// The same layers without their `changes` (a new link does not inherit the schedule of
    /// the link it replaces).
    fn without_changes(&self) -> Layers {
        Layers(
            self.0
                .iter()
                .map(|(t, p)| {
                    let mut t = t.clone();
                    t.remove("changes");
                    (t, p.clone())
                })
                .collect(),
        )
    }
}

/// The default link of a place: the default of key `key` of `table` as its descriptor
/// writes it (`{ rate = "100Mbps", delay = "10ms" }` for the two_hosts `link`), completed
/// with the defaults of the link keys' own descriptors. Parsed once per topology.
fn place(table: &schema::Table, key: &str) -> Table {
    let mut t = match table.field(key).default {
        DefaultValue::Value(text) => match default_value(text) {
            Value::Table(t) => t,
            _ => Table::new(),
        },
        _ => Table::new(),
    };
    for f in LINK.fields {
        if let DefaultValue::Value(text) = f.default {
            t.entry(f.name).or_insert_with(|| default_value(text));
        }
    }
    t
}

/// How many bytes a queue holds, before the path's RTT is known.
#[derive(Clone, Debug)]
enum BytesSpec {
    Exact(u64),
    /// `mantissa / 10^frac` times the BDP; `path` and `written` for the error message.
    Bdp {
        mantissa: u128,
        frac: u32,
        path: String,
        written: String,
    },
}

#[derive(Clone, Debug, Default)]
struct QueueSpec {
    bytes: Option<BytesSpec>,
    packets: Option<u64>,
}

/// A link whose queue is not resolved yet: the canonical values of its other keys, and the
/// path every key came from.
struct PartLink {
    keys: Table,
    rate: Rate,
    delay: SimDuration,
    queue: QueueSpec,
    paths: BTreeMap<&'static str, String>,
    canonical: String,
}

impl PartLink {
    fn path(&self, key: &str) -> String {
        self.paths
            .get(key)
            .cloned()
            .unwrap_or_else(|| join(&self.canonical, key))
    }

    /// Resolves the queue with the round trip `rtt` of the path the link is on.
    fn resolve(mut self, rtt: SimDuration) -> Result<LinkConfig, ConfigError> {
        let bytes = match self.queue.bytes.take() {
            None => None,
            Some(BytesSpec::Exact(b)) => Some(b),
            Some(BytesSpec::Bdp {
                mantissa,
                frac,
                path,
                written,
            }) => Some(resolve_bdp(
                mantissa, frac, self.rate, rtt, &path, &written,
            )?),
        };
        let queue = QueueLimit {
            bytes,
            packets: self.queue.packets,
        };
        check_queue(&queue, &self.path("queue"))?;
        self.keys
            .insert("queue".into(), canon(&queue, &self.path("queue"))?);
        typed(Value::Table(self.keys), &self.canonical)
    }
}

/// Merges the layers of one link key by key over the place's defaults (`place`, see
/// [`place`]); `canonical` is the `Config` path of the link, used for keys no
/// layer sets. Each key is read once, through its descriptor.
fn build_link(layers: &Layers, place: &Table, canonical: &str) -> Result<PartLink, ConfigError> {
    let mut keys = Table::new();
    let mut paths = BTreeMap::new();
    let mut queue = QueueSpec::default();
    let mut trace_rate: Option<Rate> = None;
    for f in LINK.fields {
        let written = layers
            .0
            .iter()
            .rev()
            .find_map(|(t, p)| t.get(f.name).map(|v| (v.clone(), join(p, f.name))));
        let from_layer = written.is_some();
        let default = || place.get(f.name).cloned();
        let Some((v, p)) = written.or_else(|| default().map(|v| (v, join(canonical, f.name))))
        else {
            continue;
        };
        if from_layer {
            paths.insert(f.name, p.clone());
        }
        // Keys whose value is a table (or one of its spellings) have their own parser; every
        // other key is read by its descriptor.
        let value = match f.name {
            "queue" => {
                queue = parse_queue(&v, &p)?;
                if !from_layer {
                    if let Some(BytesSpec::Bdp { written, .. }) = &mut queue.bytes {
                        *written = format!("{written} (the default)");
                    }
                }
                continue;
            }
            // A trace-driven rate: `{ trace = "file" }` (`traces`).
            "rate" if v.is_table() => {
                let t = super::traces::read_rate_table(&v, &p)?;
                trace_rate = Some(t.mean_rate());
                canon(&t, &p)?
            }
            "loss" => canon(&parse_loss(&v, &p)?, &p)?,
            "jitter" => canon(&parse_jitter(&v, &p)?, &p)?,
            "ecn" => canon(&parse_ecn(&v, &p)?, &p)?,
            "changes" => canon(&parse_changes(&v, &p)?, &p)?,
            _ => read(f, &v, &p)?,
        };
        keys.insert(f.name.to_string(), value);
    }
    let rate: Rate = match &trace_rate {
        Some(r) => *r,
        None => typed(
            keys.get("rate").cloned().unwrap_or(Value::Integer(0)),
            canonical,
        )?,
    };
    if trace_rate.is_some() {
        let changes: Vec<LinkChange> = typed(
            keys.get("changes")
                .cloned()
                .unwrap_or(Value::Array(Vec::new())),
            canonical,
        )?;
        let at = paths
            .get("changes")
            .cloned()
            .unwrap_or_else(|| join(canonical, "changes"));
        crate::validate::check_trace_changes(true, &changes, &at)?;
    }
    let delay: SimDuration = typed(
        keys.get("delay").cloned().unwrap_or(Value::Integer(0)),
        canonical,
    )?;
    Ok(PartLink {
        keys,
        rate,
        delay,
        queue,
        paths,
        canonical: canonical.to_string(),
    })
}

/// floor(mantissa / 10^frac × rate × rtt / 8 s), exactly.
fn resolve_bdp(
    mantissa: u128,
    frac: u32,
    rate: Rate,
    rtt: SimDuration,
    path: &str,
    written: &str,
) -> Result<u64, ConfigError> {
    let num = mantissa
        .checked_mul(rate.0 as u128)
        .and_then(|x| x.checked_mul(rtt.0 as u128));
    let den = 10u128
        .checked_pow(frac)
        .and_then(|x| x.checked_mul(8_000_000_000));
    let bytes = match (num, den) {
        (Some(n), Some(d)) => n / d,
        _ => u128::MAX,
    };
    if bytes == 0 {
        return Err(ConfigError::new(
            path,
            written,
            format!(
                "an explicit queue size such as \"64KB\" or a packet count: here {written} resolves to 0 bytes (rate {} × base RTT {} of the round trip)",
                format_rate(rate),
                format_duration(rtt)
            ),
        ));
    }
    if bytes > MAX_TOML_INT as u128 {
        return Err(ConfigError::new(
            path,
            written,
            "a queue that resolves to at most 9223372036854775807 bytes",
        ));
    }
    Ok(bytes as u64)
}

fn parse_queue_bytes(s: &str, path: &str) -> Result<BytesSpec, ConfigError> {
    let t = s.trim();
    if let Some(m) = t.strip_suffix("BDP") {
        return match parse_decimal(m.trim()) {
            Some((mantissa, frac)) if mantissa > 0 && frac <= 12 => Ok(BytesSpec::Bdp {
                mantissa,
                frac,
                path: path.to_string(),
                written: s.to_string(),
            }),
            _ => Err(ConfigError::new(
                path,
                s,
                "a positive multiple of the bandwidth-delay product such as \"1BDP\" or \"0.5BDP\"",
            )),
        };
    }
    parse_bytes(t)
        .map(|b| BytesSpec::Exact(b.0))
        .map_err(|_| ConfigError::new(path, s, QUEUE_EXPECTED))
}

fn parse_queue(v: &Value, path: &str) -> Result<QueueSpec, ConfigError> {
    match v {
        Value::String(s) if s.trim() == "unlimited" => Ok(QueueSpec::default()),
        Value::String(s) => Ok(QueueSpec {
            bytes: Some(parse_queue_bytes(s, path)?),
            packets: None,
        }),
        Value::Integer(n) if *n >= 0 => Ok(QueueSpec {
            bytes: None,
            packets: Some(*n as u64),
        }),
        Value::Table(_) => {
            let r = Read::open(v, path, &[&QUEUE])?;
            let bytes_path = r.at("bytes");
            let bytes = match r.raw("bytes") {
                None => None,
                Some(Value::String(s)) => Some(parse_queue_bytes(s, &bytes_path)?),
                Some(Value::Integer(n)) if *n >= 0 => Some(BytesSpec::Exact(*n as u64)),
                Some(other) => {
                    return Err(ConfigError::new(
                        bytes_path,
                        render(other),
                        QUEUE.field("bytes").allowed,
                    ))
                }
            };
            Ok(QueueSpec {
                bytes,
                packets: r.get("packets")?,
            })
        }
        _ => Err(ConfigError::new(path, render(v), QUEUE_EXPECTED)),
    }
}

fn parse_loss(v: &Value, path: &str) -> Result<LossModel, ConfigError> {
    // The Bernoulli shorthand: its `p`, written at the loss key itself.
    let bernoulli = || -> Result<LossModel, ConfigError> {
        let keys = <loss::Bernoulli as LossModelDef>::KEYS;
        Ok(LossModel::bernoulli(typed(
            read(keys.field("p"), v, path)?,
            path,
        )?))
    };
    match v {
        Value::Float(_) | Value::Integer(_) => return bernoulli(),
        Value::String(s) if s.trim() == "none" => return Ok(LossModel::NONE),
        Value::String(s) => {
            return match parse_percent(s) {
                Some(_) => bernoulli(),
                None => Err(ConfigError::new(path, s, loss_expected())),
            }
        }
        Value::Table(_) => {}
        _ => return Err(ConfigError::new(path, render(v), loss_expected())),
    }
    let model_path = join(path, "model");
    let model = match v.get("model") {
        Some(m) => get_choice(m, &model_path, LOSS_MODELS)?,
        None => {
            return Err(ConfigError::new(
                model_path,
                MISSING,
                format!("{} (required in a loss table)", one_of(LOSS_MODELS)),
            ))
        }
    };
    let Some(def) = loss::def(model) else {
        unreachable!("get_choice returned {model:?}, one of LOSS_MODELS");
    };
    // A model's row: its keys (checked by their descriptors), a spelling of its own
    // (netem's `gemodel`), its rules (`config/loss/<model>.rs`).
    let r = Read::open(v, path, std::slice::from_ref(&def.keys))?;
    let at = |(key, value, allowed): loss::FieldError| {
        ConfigError::new(join(path, key), render(&Value::String(value)), allowed)
    };
    let Value::Table(written) = v else {
        unreachable!("matched a table above");
    };
    if let Some(m) = (def.own_spelling)(written) {
        return m.map_err(at);
    }
    let keys: Value = r.deserialize(Table::new())?;
    (def.from_table)(keys).map_err(at)
}

fn parse_jitter(v: &Value, path: &str) -> Result<Jitter, ConfigError> {
    match v {
        Value::String(_) | Value::Integer(_) => Ok(Jitter {
            distribution: JitterDistribution::Uniform,
            amount: get_duration(v, path)
                .map_err(|e| ConfigError::new(path, e.value, JITTER_EXPECTED))?,
            reorder: false,
        }),
        Value::Table(_) => Read::open(v, path, &[&JITTER])?.deserialize(Table::new()),
        _ => Err(ConfigError::new(path, render(v), JITTER_EXPECTED)),
    }
}

/// A link's `ecn` table ([`crate::config::ecn`]): `mode`, then the keys of that mode.
fn parse_ecn(v: &Value, path: &str) -> Result<EcnMarking, ConfigError> {
    use crate::config::ecn::LEVEL_ALLOWED;
    let r = Read::open(v, path, &[&ECN])?;
    let mode: String = r.req("mode")?;
    let level = |key: &str| -> Result<Option<QueueLevel>, ConfigError> {
        match r.raw(key) {
            None => Ok(None),
            Some(Value::Integer(n)) if *n >= 0 => Ok(Some(QueueLevel::Bytes(*n as u64))),
            Some(Value::String(s)) => QueueLevel::parse(s)
                .map(Some)
                .ok_or_else(|| ConfigError::new(r.at(key), s, LEVEL_ALLOWED)),
            Some(other) => Err(ConfigError::new(r.at(key), render(other), LEVEL_ALLOWED)),
        }
    };
    let need = |key: &str| -> Result<QueueLevel, ConfigError> {
        level(key)?.ok_or_else(|| {
            ConfigError::new(
                r.at(key),
                MISSING,
                format!("{LEVEL_ALLOWED} (required with mode = \"{mode}\")"),
            )
        })
    };
    let (own, other): (&[&str], &str) = if mode == "step" {
        (&["min", "max", "max_p", "weight"], "red")
    } else {
        (&["threshold"], "step")
    };
    for k in own {
        if let Some(x) = r.raw(k) {
            return Err(ConfigError::new(
                r.at(k),
                render(x),
                format!("no `{k}` with mode = \"{mode}\" (it is a key of mode = \"{other}\")"),
            ));
        }
    }
    let m = if mode == "step" {
        EcnMarking::Step {
            threshold: need("threshold")?,
        }
    } else {
        EcnMarking::Red {
            min: need("min")?,
            max: need("max")?,
            max_p: r.req("max_p")?,
            weight: r.req("weight")?,
        }
    };
    m.check()
        .map_err(|(key, value, allowed)| ConfigError::new(join(path, key), value, allowed))?;
    Ok(m)
}

fn parse_changes(v: &Value, path: &str) -> Result<Vec<LinkChange>, ConfigError> {
    let Value::Array(items) = v else {
        return Err(ConfigError::new(
            path,
            render(v),
            "an array of tables { at, rate, delay, loss, corruption }",
        ));
    };
    let mut changes = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let r = Read::open(item, &p, &[&CHANGE])?;
        let mut extra = Table::new();
        if let Some(l) = r.raw("loss") {
            let lp = r.at("loss");
            extra.insert("loss".into(), canon(&parse_loss(l, &lp)?, &lp)?);
        }
        let change: LinkChange = r.deserialize(extra)?;
        check_change_rules(&change, &|k| join(&p, k))?;
        changes.push(change);
    }
    check_changes_order(&changes, path)?;
    Ok(changes)
}

fn pair_allowed(pairs: usize) -> String {
    format!(
        "a pair index in [0, {}] (the topology has {pairs} pair(s))",
        pairs.saturating_sub(1)
    )
}

/// A pair index `< pairs` written at `path`.
fn get_pair(v: &Value, path: &str, pairs: usize) -> Result<usize, ConfigError> {
    Ok(get_int(v, path, 0, pairs as i64 - 1, &pair_allowed(pairs))? as usize)
}

pub(super) fn array_of_tables<'v>(
    v: &'v Value,
    path: &str,
    what: &str,
) -> Result<&'v [Value], ConfigError> {
    match v {
        Value::Array(a) => Ok(a),
        _ => Err(ConfigError::new(
            path,
            render(v),
            format!("an array of tables ({what})"),
        )),
    }
}

/// A handover before its links are built.
struct PendingHandover {
    index: usize,
    at: SimTime,
    pair: usize,
    address: crate::config::AddressChange,
    link: Option<Value>,
    forward: Option<Value>,
    reverse: Option<Value>,
}

/// What handovers need to know of the topology: for each pair, the layers of the client's
/// current access links and the delay of the rest of its round trip.
struct HandoverCtx {
    current: Vec<(Layers, Layers)>,
    rest_rtt: Vec<SimDuration>,
    place: Table,
}

fn parse_handovers(v: Option<&Value>, mut ctx: HandoverCtx) -> Result<Vec<Handover>, ConfigError> {
    let Some(v) = v else {
        return Ok(Vec::new());
    };
    let pairs = ctx.current.len();
    let items = array_of_tables(v, "topology.handovers", "[[topology.handovers]]")?;
    let mut pending = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let p = format!("topology.handovers[{i}]");
        let r = Read::open(item, &p, &[&HANDOVER])?;
        let at: SimTime = r.req("at")?;
        let pair = match r.raw("pair") {
            Some(x) => get_pair(x, &r.at("pair"), pairs)?,
            None => 0,
        };
        // `repeat = N`, `every`: N handovers `every` apart, the same links each time.
        let repeat: u64 = r.req("repeat")?;
        let every: Option<SimDuration> = r.get("every")?;
        if repeat > 1 && every.is_none() {
            return Err(ConfigError::new(
                r.at("every"),
                MISSING,
                "a time > 0 (required when repeat > 1)",
            ));
        }
        let every = every.unwrap_or(SimDuration::ZERO);
        let address = r.req("address")?;
        for j in 0..repeat {
            pending.push(PendingHandover {
                index: i,
                at: at.saturating_add(SimDuration(every.0.saturating_mul(j))),
                pair,
                address,
                link: r.raw("link").cloned(),
                forward: r.raw("forward").cloned(),
                reverse: r.raw("reverse").cloned(),
            });
        }
    }
    pending.sort_by_key(|h| (h.at, h.index));
    for (n, h) in pending.iter().enumerate() {
        if let Some(o) = pending[..n]
            .iter()
            .find(|o| o.at == h.at && o.pair == h.pair)
        {
            let (first, second) = (o.index.min(h.index), o.index.max(h.index));
            return Err(ConfigError::new(
                format!("topology.handovers[{second}].at"),
                format_duration(SimDuration(h.at.0)),
                format!(
                    "a time different from handover [{first}] of the same pair {} (one handover per pair at a time)",
                    h.pair
                ),
            ));
        }
    }
    let mut out = Vec::with_capacity(pending.len());
    for h in pending {
        let p = format!("topology.handovers[{}]", h.index);
        let (cur_f, cur_r) = &ctx.current[h.pair];
        let mut fl = cur_f.without_changes();
        fl.push(h.link.as_ref(), &join(&p, "link"))?;
        fl.push(h.forward.as_ref(), &join(&p, "forward"))?;
        let mut rl = cur_r.without_changes();
        rl.push(h.link.as_ref(), &join(&p, "link"))?;
        rl.push(h.reverse.as_ref(), &join(&p, "reverse"))?;
        let f = build_link(&fl, &ctx.place, &join(&p, "forward"))?;
        let r = build_link(&rl, &ctx.place, &join(&p, "reverse"))?;
        let rtt = f
            .delay
            .saturating_add(r.delay)
            .saturating_add(ctx.rest_rtt[h.pair]);
        out.push(Handover {
            at: h.at,
            pair: h.pair,
            forward: f.resolve(rtt)?,
            reverse: r.resolve(rtt)?,
            address: h.address,
        });
        ctx.current[h.pair] = (fl, rl);
    }
    Ok(out)
}

fn two_hosts(v: &Value) -> Result<Topology, ConfigError> {
    let r = Read::open(v, "topology", &[&TWO_HOSTS])?;
    let core = place(&TWO_HOSTS, "link");
    let mut fl = Layers::default();
    fl.push(r.raw("link"), "topology.link")?;
    fl.push(r.raw("forward"), "topology.forward")?;
    let mut rl = Layers::default();
    rl.push(r.raw("link"), "topology.link")?;
    rl.push(r.raw("reverse"), "topology.reverse")?;
    let f = build_link(&fl, &core, "topology.forward")?;
    let rv = build_link(&rl, &core, "topology.reverse")?;
    let rtt = f.delay.saturating_add(rv.delay);
    let forward = f.resolve(rtt)?;
    let reverse = rv.resolve(rtt)?;
    let handovers = parse_handovers(
        r.raw("handovers"),
        HandoverCtx {
            current: vec![(fl, rl)],
            rest_rtt: vec![SimDuration::ZERO],
            place: core,
        },
    )?;
    Ok(Topology::TwoHosts {
        forward,
        reverse,
        handovers,
    })
}

fn dumbbell(v: &Value) -> Result<Topology, ConfigError> {
    let r = Read::open(v, "topology", &[&DUMBBELL])?;
    let pairs = r.req::<u64>("pairs")? as usize;
    let core = place(&DUMBBELL, "bottleneck");
    let access = place(&DUMBBELL, "access");

    let mut bfl = Layers::default();
    bfl.push(r.raw("bottleneck"), "topology.bottleneck")?;
    bfl.push(r.raw("bottleneck_forward"), "topology.bottleneck_forward")?;
    let mut brl = Layers::default();
    brl.push(r.raw("bottleneck"), "topology.bottleneck")?;
    brl.push(r.raw("bottleneck_reverse"), "topology.bottleneck_reverse")?;
    let mut client = Layers::default();
    client.push(r.raw("access"), "topology.access")?;
    client.push(r.raw("client_access"), "topology.client_access")?;
    let mut server = Layers::default();
    server.push(r.raw("access"), "topology.access")?;
    server.push(r.raw("server_access"), "topology.server_access")?;

    // Per-pair layers: [client_up, client_down, server_up, server_down].
    let names = ["client_up", "client_down", "server_up", "server_down"];
    let mut layers: Vec<[Layers; 4]> = (0..pairs)
        .map(|_| {
            [
                client.clone(),
                client.clone(),
                server.clone(),
                server.clone(),
            ]
        })
        .collect();
    if let Some(entries) = r.raw("pair") {
        let entries = array_of_tables(entries, "topology.pair", "[[topology.pair]]")?;
        let mut seen: Vec<Option<usize>> = vec![None; pairs];
        for (j, e) in entries.iter().enumerate() {
            let p = format!("topology.pair[{j}]");
            let re = Read::open(e, &p, &[&PAIR])?;
            let ip = re.at("index");
            let index = re.raw("index").ok_or_else(|| {
                ConfigError::new(&ip, MISSING, format!("{} (required)", pair_allowed(pairs)))
            })?;
            let i = get_pair(index, &ip, pairs)?;
            if let Some(prev) = seen[i] {
                return Err(ConfigError::new(
                    ip,
                    i.to_string(),
                    format!("an index not used by another [[topology.pair]] entry (topology.pair[{prev}] has it)"),
                ));
            }
            seen[i] = Some(j);
            for (k, name) in names.iter().enumerate() {
                layers[i][k].push(re.raw(name), &re.at(name))?;
            }
        }
    }

    let bf = build_link(&bfl, &core, "topology.bottleneck_forward")?;
    let br = build_link(&brl, &core, "topology.bottleneck_reverse")?;
    let mut parts = Vec::with_capacity(pairs);
    for (i, l) in layers.iter().enumerate() {
        let mut four = Vec::with_capacity(4);
        for (k, name) in names.iter().enumerate() {
            four.push(build_link(
                &l[k],
                &access,
                &format!("topology.pairs[{i}].{name}"),
            )?);
        }
        parts.push(four);
    }
    let core_rtt = bf.delay.saturating_add(br.delay);
    let rtts: Vec<SimDuration> = parts
        .iter()
        .map(|f| {
            f.iter()
                .fold(core_rtt, |acc, l| acc.saturating_add(l.delay))
        })
        .collect();
    let rest_rtt: Vec<SimDuration> = parts
        .iter()
        .map(|f| {
            core_rtt
                .saturating_add(f[2].delay)
                .saturating_add(f[3].delay)
        })
        .collect();
    let bottleneck_forward = bf.resolve(rtts[0])?;
    let bottleneck_reverse = br.resolve(rtts[0])?;
    let mut pair_links = Vec::with_capacity(pairs);
    for (part, rtt) in parts.into_iter().zip(&rtts) {
        let mut it = part.into_iter();
        let mut next = || -> Result<LinkConfig, ConfigError> {
            match it.next() {
                Some(l) => l.resolve(*rtt),
                None => Err(ConfigError::new(
                    "topology",
                    "",
                    "four access links per pair",
                )),
            }
        };
        pair_links.push(PairLinks {
            client_up: next()?,
            client_down: next()?,
            server_up: next()?,
            server_down: next()?,
        });
    }
    let current = layers.into_iter().map(|[cu, cd, _, _]| (cu, cd)).collect();
    let handovers = parse_handovers(
        r.raw("handovers"),
        HandoverCtx {
            current,
            rest_rtt,
            place: access,
        },
    )?;
    Ok(Topology::Dumbbell {
        pairs: pair_links,
        bottleneck_forward,
        bottleneck_reverse,
        handovers,
    })
}

fn parse_topology(v: Option<&Value>) -> Result<(Topology, usize), ConfigError> {
    let allowed = "a [topology] table with kind = \"two_hosts\" or \"dumbbell\"";
    let v =
        v.ok_or_else(|| ConfigError::new("topology", MISSING, format!("{allowed} (required)")))?;
    let Value::Table(t) = v else {
        return Err(ConfigError::new("topology", render(v), allowed));
    };
    let kind = match t.get("kind") {
        Some(k) => get_choice(k, "topology.kind", TWO_HOSTS.field("kind").choices)?,
        None => {
            return Err(ConfigError::new(
                "topology.kind",
                MISSING,
                format!("{} (required)", one_of(TWO_HOSTS.field("kind").choices)),
            ))
        }
    };
    let topology = match kind {
        "dumbbell" => dumbbell(v)?,
        _ => two_hosts(v)?,
    };
    let pairs = match &topology {
        Topology::TwoHosts { .. } => 1,
        Topology::Dumbbell { pairs, .. } => pairs.len(),
    };
    Ok((topology, pairs))
}

/// `ceil(duration × rate / ((size + 28) × 8 bit × 1 s))`: the number of datagrams a CBR
/// source sends in `duration` (datagram `i` leaves at
/// `start + ceil(i × (size + 28) × 8 × 10^9 / rate)` ns). `None` on overflow or zero rate.
pub(super) fn cbr_count(duration: SimDuration, rate: Rate, size: Bytes) -> Option<u128> {
    let bits_per_datagram = (size.0 as u128 + defaults::CBR_HEADER as u128) * 8;
    let num = (duration.0 as u128).checked_mul(rate.0 as u128)?;
    let den = bits_per_datagram.checked_mul(1_000_000_000)?;
    if den == 0 {
        return None;
    }
    Some(num.div_ceil(den))
}

/// The keys every flow kind shares: `pair` (its range is the topology's) and `background`.
fn flow_placement(r: &Read, pairs: usize) -> Result<(usize, bool), ConfigError> {
    let pair = match r.raw("pair") {
        Some(p) => get_pair(p, &r.at("pair"), pairs)?,
        None => 0,
    };
    Ok((pair, r.req("background")?))
}

fn parse_cbr(v: &Value, path: &str, pairs: usize) -> Result<FlowConfig, ConfigError> {
    let r = Read::open(v, path, &[&FLOW, &CBR])?;
    let (pair, background) = flow_placement(&r, pairs)?;
    let direction = r.req("direction")?;
    let rate: Rate = r.req("rate")?;
    let size: Bytes = r.req("size")?;
    crate::validate::check_cbr_rate(rate, size, &r.at("rate"))?;
    let start = r.req("start")?;
    let count = match (r.raw("duration"), r.raw("count")) {
        (Some(_), Some(c)) => {
            return Err(ConfigError::new(
                r.at("count"),
                render(c),
                "either `duration` or `count`, not both",
            ))
        }
        (None, Some(_)) => r.req::<u64>("count")?,
        (d, None) => {
            let duration_path = r.at("duration");
            let (duration, written) = match d {
                Some(d) => (get_duration(d, &duration_path)?, render(d)),
                None => (defaults::CBR_DURATION, "10s (the default)".to_string()),
            };
            let allowed = CBR.field("duration").allowed;
            match cbr_count(duration, rate, size) {
                Some(0) => return Err(ConfigError::new(duration_path, written, allowed)),
                Some(n) if n <= MAX_TOML_INT as u128 => n as u64,
                _ => {
                    return Err(ConfigError::new(
                        duration_path,
                        written,
                        "a duration of at most 9223372036854775807 datagrams at this rate",
                    ))
                }
            }
        }
    };
    Ok(FlowConfig {
        pair,
        background,
        app: AppConfig::Cbr {
            direction,
            rate,
            size,
            start,
            count,
        },
    })
}

/// Per-side overrides of a transport's keys (`quic = { client = { .. }, server = { .. } }`),
/// as the spelling pre-pass found them: each side's table, if written.
#[derive(Debug, Default)]
struct SideTables {
    client: Option<Table>,
    server: Option<Table>,
}

/// The QUIC keys that act only across the connections of a sequence or of reconnects
/// (resumption and 0-RTT).
pub(super) const SEQUENCE_ONLY_QUIC_KEYS: [&str; 4] = [
    "zero_rtt",
    "reject_zero_rtt",
    "resumption_client_hello_size",
    "resumption_server_handshake_size",
];

/// Issue 28 item 16: a sequence-only QUIC key written on a one-connection workload
/// (`what`: "a bulk workload", ...) is an error naming it where it was written, whatever
/// its value (`zero_rtt = true`, the default, was accepted and changed nothing). The
/// typed check (`check_initial_window_workloads`) sees only values away from the default;
/// `to_toml` leaves the defaults out for these workloads.
fn check_sequence_only_written(
    v: &Value,
    path: &str,
    sides: &SideTables,
    what: &str,
) -> Result<(), ConfigError> {
    let layers = [
        (v.as_table(), path.to_string()),
        (sides.client.as_ref(), join(&join(path, "quic"), "client")),
        (sides.server.as_ref(), join(&join(path, "quic"), "server")),
    ];
    for (table, at) in layers {
        let Some(t) = table else { continue };
        if let Some(k) = SEQUENCE_ONLY_QUIC_KEYS.iter().find(|k| t.contains_key(**k)) {
            return Err(ConfigError::new(
                join(&at, k),
                render(&t[*k]),
                format!(
                    "no `{k}` on {what}: {}",
                    crate::validate::SEQUENCE_ONLY_ALLOWED
                ),
            ));
        }
    }
    Ok(())
}

/// Each side's QUIC config of a flow table: the QUIC keys of the table (everything but the
/// keys of `FLOW` and of the workload's keys `workload`), then the side's own keys from
/// `sides` (`path.quic.client.<key>` / `path.quic.server.<key>`), with `profile`
/// resolved into explicit values per side (explicit keys win), checked by
/// `QuicConfig::validate`; an error names the key where its value was written.
fn quic_sides(
    v: &Value,
    path: &str,
    workload: &schema::Table,
    sides: &SideTables,
) -> Result<Sides<QuicConfig>, ConfigError> {
    let mut shared = match v {
        Value::Table(t) => t.clone(),
        _ => Table::new(),
    };
    shared.retain(|k, _| !FLOW.has(k) && !TRANSPORT_START.has(k) && !workload.has(k));
    // Each scalar value parsed by its kind, range-checked and written in its canonical
    // form at the key where it was written, as TCP's and SCTP's are (issue 28 item 17:
    // a time in integer nanoseconds, which the format allows, failed in serde with an
    // error naming the flow instead of the key).
    let canonical = |t: &mut Table, at: &str| -> Result<(), ConfigError> {
        let value = Value::Table(t.clone());
        let r = Read::open(&value, at, &[&QUIC])?;
        for k in t.keys().cloned().collect::<Vec<_>>() {
            if !is_scalar(QUIC.field(&k).kind) {
                continue;
            }
            if let Some(v) = r.canonical(&k)? {
                t.insert(k, v);
            }
        }
        Ok(())
    };
    canonical(&mut shared, path)?;
    let build = |own: Option<&Table>, side: &str| -> Result<QuicConfig, ConfigError> {
        let side_path = join(&join(path, "quic"), side);
        let mut table = shared.clone();
        if let Some(own) = own {
            // Each value parsed and range-checked at the key where it was written.
            let mut own = own.clone();
            canonical(&mut own, &side_path)?;
            table.extend(own);
        }
        if let Some(m) = table.get("migration") {
            // Its keys against their descriptors, each value parsed and range-checked, the
            // defaults filled in.
            let at = if own.is_some_and(|t| t.contains_key("migration")) {
                join(&side_path, "migration")
            } else {
                join(path, "migration")
            };
            let r = Read::open(m, &at, &[&schema::MIGRATION])?;
            let canonical: crate::transport::migration::MigrationConfig =
                r.deserialize(Table::new())?;
            let v = Value::try_from(canonical).expect("a migration table serialises");
            table.insert("migration".into(), v);
        }
        let written: Vec<String> = table.keys().cloned().collect();
        crate::config::quic::apply_profile(&mut table);
        let profile = table
            .get("profile")
            .and_then(|p| p.as_str())
            .map(str::to_owned);
        let own_key = |field: &str| own.is_some_and(|t| t.contains_key(field));
        let quic: QuicConfig =
            from_value(&Value::Table(table), path, QUIC.what).map_err(|mut e| {
                if let Some(k) = e.field.strip_prefix(&format!("{path}.")) {
                    if own_key(k) {
                        e.field = join(&side_path, k);
                    }
                }
                e
            })?;
        quic.validate()
            .map_err(|(field, mut allowed_value, allowed)| {
                let at = if own_key(field) {
                    join(&side_path, field)
                } else {
                    join(path, field)
                };
                // A value the profile filled in: say so, the key was not written.
                if let Some(p) = profile.as_deref() {
                    let set_by_profile = crate::config::quic::Profile::ALL
                        .into_iter()
                        .find(|x| x.name() == p)
                        .is_some_and(|x| x.keys().iter().any(|(k, _, _)| *k == field));
                    if set_by_profile && !written.iter().any(|k| k == field) {
                        allowed_value = format!("{allowed_value} (from profile = \"{p}\")");
                    }
                }
                ConfigError::new(at, allowed_value, allowed)
            })?;
        Ok(quic)
    };
    Ok(Sides {
        client: build(sides.client.as_ref(), "client")?,
        server: build(sides.server.as_ref(), "server")?,
    })
}

/// One `[[flows]]` entry: the transport × workload spelling ([`flow_spelling`], then
/// [`parse_transport_flow`] with the rows it found), else dispatched on its `kind`.
fn parse_flow(v: &Value, path: &str, pairs: usize) -> Result<FlowConfig, ConfigError> {
    let Value::Table(t) = v else {
        return Err(ConfigError::new(
            path,
            render(v),
            "a table [[flows]] with a kind, or a transport and a workload",
        ));
    };
    if let Some(spelled) = flow_spelling(t, path)? {
        let flat = Value::Table(spelled.flat);
        let flow = parse_transport_flow(
            &flat,
            path,
            pairs,
            &spelled.sides,
            spelled.transport,
            spelled.workload,
        );
        return flow.map_err(|e| at_origin(e, path, &spelled.origin));
    }
    parse_flow_kind(v, path, pairs, &SideTables::default())
}

/// One `[[flows]]` entry in the flow-kind spelling, dispatched on its `kind`.
fn parse_flow_kind(
    v: &Value,
    path: &str,
    pairs: usize,
    sides: &SideTables,
) -> Result<FlowConfig, ConfigError> {
    let Value::Table(t) = v else {
        return Err(ConfigError::new(
            path,
            render(v),
            "a table [[flows]] with a kind",
        ));
    };
    let kind_path = join(path, "kind");
    let kind = match t.get("kind") {
        Some(k) => get_choice(k, &kind_path, FLOW_KINDS)?,
        None => {
            return Err(ConfigError::new(
                kind_path,
                MISSING,
                format!("{} (required)", one_of(FLOW_KINDS)),
            ))
        }
    };
    match kind {
        "cbr" => parse_cbr(v, path, pairs),
        // The flow-kind spellings of QUIC + bulk and QUIC + sequence.
        "quic_bulk" => parse_transport_flow(v, path, pairs, sides, QUIC_NAME, workload_def("bulk")),
        "quic_connections" => {
            parse_transport_flow(v, path, pairs, sides, QUIC_NAME, workload_def("sequence"))
        }
        other => unreachable!("get_choice returned {other:?}, not one of FLOW_KINDS"),
    }
}

/// The transport name of QUIC (a row of [`schema::TRANSPORTS`]), whose keys are read by
/// [`quic_sides`] (profiles, migration) rather than [`transport_sides`].
const QUIC_NAME: &str = "quic";

/// The row of [`WORKLOAD_PARSERS`] of the built-in workload `name`.
fn workload_def(name: &str) -> &'static WorkloadParser {
    match WORKLOAD_PARSERS.iter().find(|w| w.name() == name) {
        Some(w) => w,
        None => panic!("no workload {name:?} in WORKLOAD_PARSERS"),
    }
}

/// How one workload of the transport × workload spelling is read: its key table
/// (`workload.<kind>`, a row of [`schema::WORKLOADS`]), the same keys as read flat in the
/// flow after the spelling pre-pass, and how its keys are read: a parser of this file for
/// a built-in whose keys need one (arrays of tables, presets, defaults that depend on other
/// keys), else through the workload's serde form (`config::workload::WorkloadRow`). Which
/// transports run it is [`schema::workload_runs_on`].
#[derive(Clone, Copy, Debug)]
pub(super) struct WorkloadParser {
    /// `workload = { kind = "<name>", ... }`.
    pub(super) table: &'static schema::Table,
    /// Its keys, flat in the flow.
    pub(super) flat: &'static schema::Table,
    /// Reads the workload's keys (`r` reads the flow's table, `path` is the flow's), for
    /// the built-ins in [`CUSTOM_WORKLOAD_PARSERS`].
    pub(super) parse: Option<WorkloadParse>,
    /// The workload from its checked keys (the other workloads).
    pub(super) from_table: fn(Value) -> Result<WorkloadConfig, WorkloadError>,
}

/// A parser of a workload's keys.
pub(super) type WorkloadParse = fn(&Read, &str) -> Result<WorkloadConfig, ConfigError>;

impl WorkloadParser {
    /// The workload's name (`workload.kind`), from its key table's id.
    pub(super) fn name(&self) -> &'static str {
        self.table
            .id
            .strip_prefix("workload.")
            .unwrap_or(self.table.id)
    }

    /// Reads the workload from the flow's keys (`r`, at `path`).
    fn read(&self, r: &Read, path: &str) -> Result<WorkloadConfig, ConfigError> {
        if let Some(parse) = self.parse {
            return parse(r, path);
        }
        let mut keys = Table::new();
        for f in self.flat.fields {
            let v = if is_scalar(f.kind) {
                r.canonical(f.name)?
            } else {
                r.raw(f.name).cloned()
            };
            if let Some(v) = v {
                keys.insert(f.name.to_string(), v);
            }
        }
        (self.from_table)(Value::Table(keys)).map_err(|(key, value, allowed)| {
            ConfigError::new(join(path, &key), render(&Value::String(value)), allowed)
        })
    }
}

/// The built-in workloads whose keys need a parser of their own.
const CUSTOM_WORKLOAD_PARSERS: &[(&str, WorkloadParse)] = &[
    ("bulk", |r, _| Ok(WorkloadConfig::Bulk(parse_bulk_spec(r)?))),
    ("sequence", |r, path| {
        Ok(WorkloadConfig::Sequence(parse_sequence_spec(r, path)?))
    }),
    ("web_page", |r, _| {
        Ok(WorkloadConfig::WebPage(super::workload::parse_web_page(r)?))
    }),
    ("video", |r, _| {
        Ok(WorkloadConfig::Video(super::workload::parse_video(r)?))
    }),
    ("reconnects", |r, _| {
        Ok(WorkloadConfig::Reconnects(parse_reconnects_spec(r)?))
    }),
];

/// Every workload's parser, in the order of [`schema::WORKLOAD_KINDS`]: one per row of
/// `config::workload`'s list.
pub(super) const WORKLOAD_PARSERS: &[WorkloadParser] =
    &workload_parsers::<{ workload::WORKLOAD_ROWS.len() }>();

const fn workload_parsers<const N: usize>() -> [WorkloadParser; N] {
    let rows = workload::WORKLOAD_ROWS;
    const fn parser(row: &workload::WorkloadRow) -> WorkloadParser {
        WorkloadParser {
            table: row.table,
            flat: row.flat,
            parse: None,
            from_table: row.from_table,
        }
    }
    let mut out = [parser(&rows[0]); N];
    let mut i = 0;
    while i < N {
        out[i] = parser(&rows[i]);
        let mut j = 0;
        while j < CUSTOM_WORKLOAD_PARSERS.len() {
            if schema::const_str_eq(CUSTOM_WORKLOAD_PARSERS[j].0, rows[i].name) {
                out[i].parse = Some(CUSTOM_WORKLOAD_PARSERS[j].1);
            }
            j += 1;
        }
        i += 1;
    }
    out
}

/// A transport flow: `transport`'s keys (per side, [`quic_sides`] / [`transport_sides`]),
/// `workload`'s keys read by its parser, the flow's placement and `start`, then the
/// workload keys the transport does not support
/// (`crate::validate::check_transport_workload`).
fn parse_transport_flow(
    v: &Value,
    path: &str,
    pairs: usize,
    sides: &SideTables,
    transport: &str,
    workload: &'static WorkloadParser,
) -> Result<FlowConfig, ConfigError> {
    let Some(keys) = schema::transport_keys(transport) else {
        unreachable!("every entry of TRANSPORTS has its key table");
    };
    let schemas = [&FLOW, &TRANSPORT_START, keys, workload.flat];
    let r = Read::open(v, path, &schemas)?;
    let (pair, background) = flow_placement(&r, pairs)?;
    let t = match transport {
        QUIC_NAME => TransportConfig::Quic(quic_sides(v, path, workload.flat, sides)?),
        "tcp" => TransportConfig::Tcp(transport_sides(
            &r,
            path,
            keys,
            &TcpConfig::default(),
            sides,
            TcpConfig::validate,
        )?),
        "sctp" => TransportConfig::Sctp(transport_sides(
            &r,
            path,
            keys,
            &SctpConfig::default(),
            sides,
            SctpConfig::validate,
        )?),
        other => unreachable!("transport {other:?} has a key table and no arm here"),
    };
    let w = workload.read(&r, path)?;
    if transport == QUIC_NAME {
        // Issue 28 item 16: resumption and 0-RTT keys on a one-connection workload.
        if !w.several_connections() {
            let what = workload::a_workload(w.kind());
            check_sequence_only_written(v, path, sides, &what)?
        }
    }
    let mut flow = FlowConfig {
        pair,
        background,
        ..FlowConfig::transport(t, w)
    };
    set_start(&mut flow, &r)?;
    if let Some(t) = flow.transport_flow() {
        crate::validate::check_transport_workload(t, &|k| join(path, k))?;
    }
    Ok(flow)
}

/// The `bulk` workload's keys.
fn parse_bulk_spec(r: &Read) -> Result<BulkSpec, ConfigError> {
    Ok(BulkSpec {
        bytes: r.req::<Bytes>("bytes")?.0,
        streams: r.req("streams")?,
        request_size: r.req::<Bytes>("request_size")?.0,
        read_rate: r.get("read_rate")?,
        duration: r.get("duration")?,
    })
}

/// The flow's `start` (a transport flow's key), checked against its workload.
fn set_start(flow: &mut FlowConfig, r: &Read) -> Result<(), ConfigError> {
    let start: SimTime = r.req("start")?;
    if let Some(t) = flow.transport_flow_mut() {
        t.start = start;
    }
    if let Some(t) = flow.transport_flow() {
        crate::validate::check_transport_start(t, &|k| r.at(k))?;
    }
    Ok(())
}

/// Each side's config of a transport whose keys are `keys` (TCP, SCTP): the serialised
/// `base` (the transport's defaults), then the transport keys written in the flow (`r`),
/// then the side's own keys from `sides` (`path.<transport>.client.<key>`); each value
/// parsed and range-checked by its descriptor where it was written, the whole checked by
/// `validate`, whose error names the key where its value was written.
fn transport_sides<T: serde::Serialize + serde::de::DeserializeOwned>(
    r: &Read,
    path: &str,
    keys: &'static schema::Table,
    base: &T,
    sides: &SideTables,
    validate: impl Fn(&T) -> Result<(), (&'static str, String, String)>,
) -> Result<Sides<T>, ConfigError> {
    let name = keys.id.strip_prefix("flow.").unwrap_or(keys.id);
    let Ok(Value::Table(mut shared)) = Value::try_from(base) else {
        panic!("a transport config serialises as a table");
    };
    for f in keys.fields {
        if r.raw(f.name).is_some() {
            if let Some(v) = r.canonical(f.name)? {
                shared.insert(f.name.to_string(), v);
            }
        }
    }
    let build = |own: Option<&Table>, side: &str| -> Result<T, ConfigError> {
        let side_path = join(&join(path, name), side);
        let mut table = shared.clone();
        if let Some(own) = own {
            let own_value = Value::Table(own.clone());
            let schemas = [keys];
            let r = Read::open(&own_value, &side_path, &schemas)?;
            for k in own.keys() {
                if let Some(v) = r.canonical(k)? {
                    table.insert(k.clone(), v);
                }
            }
        }
        let cfg: T = typed(Value::Table(table), path)?;
        validate(&cfg).map_err(|(field, value, allowed)| {
            let at = if own.is_some_and(|t| t.contains_key(field)) {
                join(&side_path, field)
            } else {
                join(path, field)
            };
            ConfigError::new(at, value, allowed)
        })?;
        Ok(cfg)
    };
    Ok(Sides {
        client: build(sides.client.as_ref(), "client")?,
        server: build(sides.server.as_ref(), "server")?,
    })
}

/// The `sequence` workload's keys (`docs/lifecycle.md`): the `[[flows.connections]]`
/// list whose workload keys default to the flow's.
fn parse_sequence_spec(r: &Read, path: &str) -> Result<SequenceSpec, ConfigError> {
    let mut seq = SequenceSpec {
        bytes: r.req::<Bytes>("bytes")?.0,
        streams: r.req("streams")?,
        request_size: r.req::<Bytes>("request_size")?.0,
        connections: Vec::new(),
    };
    let items = match r.raw("connections") {
        Some(c) => array_of_tables(c, &r.at("connections"), "[[flows.connections]]")?,
        None => &[],
    };
    for (j, item) in items.iter().enumerate() {
        let cpath = format!("{}[{j}]", r.at("connections"));
        let c = Read::open(item, &cpath, &[&CONNECTION])?;
        let mut spec = seq.connection(seq.bytes);
        spec.start = c.get("start")?;
        spec.gap = c.get("gap")?;
        spec.resume = c.req("resume")?;
        spec.close = c.req("close")?;
        if let Some(b) = c.get::<Bytes>("bytes")? {
            spec.bytes = b.0;
        }
        if let Some(s) = c.get("streams")? {
            spec.streams = s;
        }
        if let Some(b) = c.get::<Bytes>("request_size")? {
            spec.request_size = b.0;
        }
        seq.connections.push(spec);
    }
    check_connections(&seq.connections, &|k| join(path, k))?;
    Ok(seq)
}

/// The `reconnects` workload's keys.
fn parse_reconnects_spec(r: &Read) -> Result<crate::config::workload::ReconnectsSpec, ConfigError> {
    Ok(crate::config::workload::ReconnectsSpec {
        bytes: r.req::<Bytes>("bytes")?.0,
        reconnections: r.req("reconnections")?,
        on: r.req("on")?,
        streams: r.req("streams")?,
        request_size: r.req::<Bytes>("request_size")?.0,
    })
}

/// A flow in the transport × workload spelling, as the pre-pass read it: the flat table
/// (the flow's keys, the transport's and the workload's, without `transport` and
/// `workload`), which sub-table each key came from, the per-side overrides, and the
/// transport and workload rows it names.
#[derive(Debug)]
struct Spelled {
    flat: Table,
    origin: BTreeMap<String, &'static str>,
    sides: SideTables,
    transport: &'static str,
    workload: &'static WorkloadParser,
}

/// The transport × workload spelling of a flow (`docs/scenario-format.md`, "Transport ×
/// workload"): `transport = "quic"` with its keys flat or in a `quic = { ... }` table, and
/// `workload = { kind = "bulk" | "sequence", ... }`. A table pre-pass flattens it into one
/// table and finds the transport and the workload by name in their tables (never by
/// rewriting names), so both spellings build the same [`Config`]; the returned map says
/// which key came from which sub-table, so that errors name the key where it was
/// written. `None`: the flow uses the flow-kind spelling.
///
/// The keys, choices and error texts come from the descriptors ([`schema::TRANSPORT_FLOW`],
/// [`schema::WORKLOADS`]): a key added to a workload's table is accepted in `workload`.
fn flow_spelling(t: &Table, path: &str) -> Result<Option<Spelled>, ConfigError> {
    flow_spelling_in(t, path, WORKLOAD_PARSERS)
}

/// [`flow_spelling`] with the workloads `workloads` (each with its `workload.<kind>` table).
fn flow_spelling_in(
    t: &Table,
    path: &str,
    workloads: &'static [WorkloadParser],
) -> Result<Option<Spelled>, ConfigError> {
    // `start` is also a CBR key: it alone does not make a transport flow.
    if !TRANSPORT_FLOW
        .fields
        .iter()
        .any(|f| f.name != "start" && t.contains_key(f.name))
    {
        return Ok(None);
    }
    if let Some(k) = t.get("kind") {
        return Err(ConfigError::new(
            join(path, "kind"),
            render(k),
            "no `kind` in a flow written as `transport` + `workload` (drop `kind`, or write the flow as `kind = \"quic_bulk\"` / `\"quic_connections\"`)",
        ));
    }
    let transport = TRANSPORT_FLOW.field("transport");
    let tpath = join(path, transport.name);
    let transport = match t.get(transport.name) {
        Some(v) => get_choice(v, &tpath, transport.choices)?,
        None => {
            return Err(ConfigError::new(
                tpath,
                MISSING,
                format!("{} (required with `workload`)", one_of(transport.choices)),
            ))
        }
    };
    // The transport's key table; its keys may also be written in a table named after it.
    let Some(transport_keys) = schema::transport_keys(transport) else {
        unreachable!("every entry of TRANSPORTS has its key table");
    };
    let sub: &'static str = transport;
    // Another transport's table is an error, never ignored.
    for other in schema::TRANSPORTS {
        if *other != sub {
            if let Some(v) = t.get(*other) {
                return Err(ConfigError::new(
                    join(path, other),
                    render(v),
                    format!(
                        "no `{other}` table on a \"{sub}\" flow (its keys go flat or in `{sub}`)"
                    ),
                ));
            }
        }
    }
    let wfield = TRANSPORT_FLOW.field("workload");
    let wpath = join(path, wfield.name);
    let named: Vec<(&str, &'static WorkloadParser)> =
        workloads.iter().map(|w| (w.name(), w)).collect();
    let kinds: Vec<&str> = named.iter().map(|(k, _)| *k).collect();
    let quoted: Vec<String> = kinds.iter().map(|k| format!("\"{k}\"")).collect();
    let expected_workload = format!("a table {{ kind = {}, ... }}", quoted.join(" | "));
    let workload = match t.get(wfield.name) {
        Some(Value::Table(w)) => w,
        Some(v) => return Err(ConfigError::new(wpath, render(v), expected_workload)),
        None => {
            return Err(ConfigError::new(
                wpath,
                MISSING,
                format!("{expected_workload} (required with `transport`)"),
            ))
        }
    };
    let kpath = join(&wpath, "kind");
    let (wkind, wdef) = match workload.get("kind") {
        Some(k) => match named.iter().find(|(n, _)| k.as_str() == Some(*n)) {
            Some(&(n, w)) => (n, w),
            None => {
                return Err(ConfigError::new(kpath, render(k), one_of(&kinds)));
            }
        },
        None => {
            return Err(ConfigError::new(
                kpath,
                MISSING,
                format!("{} (required)", one_of(&kinds)),
            ))
        }
    };
    let wtable = wdef.table;
    let mut out = t.clone();
    for f in TRANSPORT_FLOW.fields {
        // `start` stays a key of the flow, read with the transport's keys.
        if f.name != sub && f.name != "start" {
            out.remove(f.name);
        }
    }
    let mut origin = BTreeMap::new();
    let mut put = |out: &mut Table, k: &str, v: &Value, from: &'static str| {
        let kp = join(&join(path, from), k);
        if out.contains_key(k) {
            return Err(ConfigError::new(
                kp,
                render(v),
                format!("`{k}` written once (it is also a key of the flow)"),
            ));
        }
        out.insert(k.to_string(), v.clone());
        origin.insert(k.to_string(), from);
        Ok(())
    };
    let own_keys: Vec<String> = wtable
        .fields
        .iter()
        .filter(|f| f.name != "kind")
        .map(|f| format!("`{}`", f.name))
        .collect();
    let mut sides = SideTables::default();
    if let Some(q) = out.remove(sub) {
        let qpath = join(path, sub);
        let Value::Table(q) = q else {
            return Err(ConfigError::new(
                qpath,
                render(&q),
                TRANSPORT_FLOW.field(sub).allowed,
            ));
        };
        for (k, v) in &q {
            // Per-side keys: `client = { .. }` / `server = { .. }`, transport keys only.
            if TRANSPORT_SIDES.has(k) {
                let spath = join(&qpath, k);
                let Value::Table(own) = v else {
                    return Err(ConfigError::new(
                        spath,
                        render(v),
                        TRANSPORT_SIDES.field(k).allowed,
                    ));
                };
                for (ok, ov) in own {
                    if !transport_keys.has(ok) || wtable.has(ok) || TRANSPORT_SIDES.has(ok) {
                        return Err(ConfigError::new(
                            join(&spath, ok),
                            render(ov),
                            format!(
                                "a {} key that one side may set (the workload's keys {} go in `workload`)",
                                sub.to_uppercase(),
                                own_keys.join(", ")
                            ),
                        ));
                    }
                }
                if k == "client" {
                    sides.client = Some(own.clone());
                } else {
                    sides.server = Some(own.clone());
                }
                continue;
            }
            // The workload's keys go in `workload`; the rest are the transport's.
            if !transport_keys.has(k) || wtable.has(k) {
                return Err(ConfigError::new(
                    join(&qpath, k),
                    render(v),
                    format!(
                        "a {} key (the workload's keys {} go in `workload`)",
                        sub.to_uppercase(),
                        own_keys.join(", ")
                    ),
                ));
            }
            put(&mut out, k, v, sub)?;
        }
    }
    for (k, v) in workload {
        if k == "kind" {
            continue;
        }
        if !wtable.has(k) {
            let list: Vec<String> = wtable
                .fields
                .iter()
                .map(|f| format!("`{}`", f.name))
                .collect();
            return Err(ConfigError::new(
                join(&wpath, k),
                render(v),
                format!("a key of {}: one of {}", wtable.what, list.join(", ")),
            ));
        }
        put(&mut out, k, v, "workload")?;
    }
    // A workload the transport does not run is an error naming what it runs.
    if !schema::workload_runs_on(wkind, sub) {
        return Err(ConfigError::new(
            join(&wpath, "kind"),
            wkind,
            schema::workloads_run_by(sub),
        ));
    }
    Ok(Some(Spelled {
        flat: out,
        origin,
        sides,
        transport: sub,
        workload: wdef,
    }))
}

/// `err` with its path moved to where the key was written (`flows[0].bytes` ->
/// `flows[0].workload.bytes`) when the key came from a sub-table of the transport ×
/// workload spelling.
fn at_origin(
    mut err: ConfigError,
    path: &str,
    origin: &BTreeMap<String, &'static str>,
) -> ConfigError {
    for (k, from) in origin {
        let flat = join(path, k);
        if err.field == flat
            || err.field.starts_with(&format!("{flat}."))
            || err.field.starts_with(&format!("{flat}["))
        {
            err.field = format!("{}{}", join(&join(path, from), k), &err.field[flat.len()..]);
            break;
        }
    }
    err
}

fn parse_flows(v: Option<&Value>, pairs: usize) -> Result<Vec<FlowConfig>, ConfigError> {
    let Some(v) = v else {
        return Ok(Vec::new());
    };
    let items = array_of_tables(v, "flows", "[[flows]]")?;
    let mut flows = Vec::with_capacity(items.len().min(MAX_FLOWS));
    let mut streams = 0u64;
    for (i, item) in items.iter().enumerate() {
        let path = format!("flows[{i}]");
        let flow = parse_flow(item, &path, pairs)?;
        // `copies = N`: N identical flows in place of this entry (every key but `copies`
        // was read and checked once, above).
        let copies = match item.as_table().and_then(|t| t.get("copies")) {
            Some(c) => {
                let at = join(&path, "copies");
                let n = read(FLOW.field("copies"), c, &at)?;
                n.as_integer().unwrap_or(1) as usize
            }
            None => 1,
        };
        // Issue 28 item 10: a run keeps the state of every flow and every request
        // stream to the end (for its metrics), so their totals are bounded before any
        // is built (1000 copies of 100 000 streams allocated 4 GB and aborted).
        let field = |key: &str| {
            if copies > 1 {
                join(&path, "copies")
            } else {
                join(&path, key)
            }
        };
        if flows.len() + copies > MAX_FLOWS {
            return Err(ConfigError::new(
                field("copies"),
                copies.to_string(),
                format!(
                    "at most {MAX_FLOWS} flows in all, copies included (here {} before this entry): a run keeps every flow's state",
                    flows.len()
                ),
            ));
        }
        let (each, key) = flow_streams(&flow);
        streams = streams.saturating_add(each.saturating_mul(copies as u64));
        if streams > MAX_TOTAL_STREAMS {
            return Err(ConfigError::new(
                field(key),
                if copies > 1 { copies.to_string() } else { each.to_string() },
                format!(
                    "at most {MAX_TOTAL_STREAMS} request streams in all the flows (flows x copies x streams per connection x connections; here {streams} with this entry): a run keeps every stream's state and completion time (about 1 KB each)"
                ),
            ));
        }
        flows.extend(std::iter::repeat_n(flow, copies));
    }
    Ok(flows)
}

/// Most flows a scenario may have, copies included (issue 28 item 10).
pub const MAX_FLOWS: usize = 10_000;

/// Most request streams all the flows of a scenario may open together, over every
/// connection (issue 28 item 10): about 1 GB of state and 10 s of run (10 flows of
/// 100 000 streams).
pub const MAX_TOTAL_STREAMS: u64 = 1_000_000;

/// The request streams one flow opens over all its connections, and the key that
/// multiplies them (for the error).
fn flow_streams(flow: &FlowConfig) -> (u64, &'static str) {
    match flow.workload() {
        None => (0, "count"),
        Some(w) => w.request_streams(),
    }
}

fn parse_seed(v: &Value) -> Result<u64, ConfigError> {
    let allowed = TOP.field("seed").allowed;
    match v {
        Value::Integer(n) if *n >= 0 => Ok(*n as u64),
        Value::String(s) if !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()) => {
            s.parse().map_err(|_| ConfigError::new("seed", s, allowed))
        }
        _ => Err(ConfigError::new("seed", render(v), allowed)),
    }
}

/// Builds and validates the `Config` of a document whose `[sweep]` has been removed. Every
/// rule of [`Config::validate`] is applied on the way, once, at the key where the value
/// was written.
pub(super) fn build(
    doc: &Table,
    registry: &crate::registry::Registry,
) -> Result<Config, ConfigError> {
    let doc = Value::Table(doc.clone());
    let r = Read::open(&doc, "", &[&TOP])?;
    let empty = Value::Table(Table::new());
    let seed = match r.raw("seed") {
        Some(v) => parse_seed(v)?,
        None => parse_seed(&default_value(match TOP.field("seed").default {
            DefaultValue::Value(d) => d,
            _ => "1",
        }))?,
    };
    let sim: SimLimits =
        Read::open(r.raw("sim").unwrap_or(&empty), "sim", &[&SIM])?.deserialize(Table::new())?;
    let (topology, pairs) = parse_topology(r.raw("topology"))?;
    let flows = parse_flows(r.raw("flows"), pairs)?;
    match &topology {
        Topology::TwoHosts { handovers, .. } | Topology::Dumbbell { handovers, .. } => {
            crate::validate::check_migration_policies(&flows, handovers)?;
            crate::validate::check_address_change_reconnects(&flows, handovers)?;
        }
    }
    crate::validate::check_initial_window_workloads(&flows)?;
    crate::validate::check_foreground(&flows)?;
    let output: OutputConfig = Read::open(r.raw("output").unwrap_or(&empty), "output", &[&OUTPUT])?
        .deserialize(Table::new())?;
    let cfg = Config {
        name: r.req("name")?,
        description: r.req("description")?,
        seed,
        runs: r.req("runs")?,
        sim,
        topology,
        flows,
        output,
    };
    crate::validate::check_name(&cfg.name)?;
    crate::validate::check_series(&cfg.output, &cfg.sim)?;
    // Controller names: the registry's (the schema let any valid name through).
    let mut cfg = cfg;
    cfg.resolve_controllers(registry)?;
    // The rules were applied above; `Config::validate` must agree.
    debug_assert_eq!(cfg.validate(), Ok(()), "build and validate disagree");
    Ok(cfg)
}

#[cfg(test)]
mod spelling_tests {
    use super::*;
    use crate::validate::schema::{TABLES, WORKLOADS};

    fn flow(workload: &str) -> Table {
        format!("transport = \"quic\"\nworkload = {workload}\n")
            .parse()
            .unwrap()
    }

    /// Every key of every table of the format, and one no table declares.
    fn all_keys() -> Vec<&'static str> {
        let mut keys: Vec<&str> = TABLES
            .iter()
            .flat_map(|t| t.fields.iter().map(|f| f.name))
            .collect();
        keys.push("no_such_key");
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    /// A key is accepted in `workload = { kind = K, ... }` exactly when the table of K
    /// declares it; accepted keys land in the flow, and the flow kind is the one K means.
    #[test]
    fn every_loss_model_has_a_parser() {
        // The schema's model choices, its `loss.<model>` key tables (in the docs' order)
        // and the parsers are the same list.
        let tables: Vec<&str> = schema::TABLES
            .iter()
            .filter_map(|t| t.id.strip_prefix("loss."))
            .collect();
        assert_eq!(tables, LOSS_MODELS);
        // Each model's example, written as a scenario would, reads back as itself
        // through the whole reader (descriptors, own spelling, rules).
        for m in loss::examples() {
            let v = Value::try_from(&m).unwrap();
            assert_eq!(parse_loss(&v, "loss").ok(), Some(m), "{v}");
        }
        for t in schema::TABLES.iter().filter(|t| t.id.starts_with("loss.")) {
            assert_eq!(t.field("model").choices, LOSS_MODELS, "{}", t.id);
        }
        // The expected text lists the table's models in its order (with the built-ins
        // of today: `model = "none" | "bernoulli" | "periodic" | ... | "four_state"`).
        let quoted: Vec<String> = LOSS_MODELS.iter().map(|m| format!("\"{m}\"")).collect();
        assert!(loss_expected().ends_with(&format!("model = {}", quoted.join(" | "))));
        // Each model parses from its own table.
        for m in LOSS_MODELS {
            let v: Value = toml::from_str::<Table>(&format!("loss = {{ model = \"{m}\" }}"))
                .unwrap()
                .remove("loss")
                .unwrap();
            if let Err(e) = parse_loss(&v, "loss") {
                assert_ne!(e.field, "loss.model", "{m}: {e:?}");
            }
        }
    }

    #[test]
    fn every_workload_has_a_parser() {
        // The parsers' key tables are the schema's workload tables, in the order of
        // WORKLOAD_KINDS (the `kind` choices); each flat table has the same keys but
        // `kind`.
        let tables: Vec<&str> = WORKLOAD_PARSERS.iter().map(|w| w.table.id).collect();
        let schema_tables: Vec<&str> = WORKLOADS.iter().map(|t| t.id).collect();
        assert_eq!(tables, schema_tables);
        let names: Vec<&str> = WORKLOAD_PARSERS.iter().map(|w| w.name()).collect();
        assert_eq!(names, schema::WORKLOAD_KINDS);
        for w in WORKLOAD_PARSERS {
            assert_eq!(w.table.field("kind").choices, schema::WORKLOAD_KINDS);
            let own: Vec<&str> = w
                .table
                .fields
                .iter()
                .map(|f| f.name)
                .filter(|n| *n != "kind")
                .collect();
            let flat: Vec<&str> = w.flat.fields.iter().map(|f| f.name).collect();
            assert_eq!(own, flat, "{}", w.name());
            // The same descriptors (`reuse`d, not re-declared), and documented.
            for f in &w.table.fields[1..] {
                assert!(w.flat.fields.contains(f), "{}.{}", w.name(), f.name);
            }
            assert!(
                schema::TABLES.iter().any(|t| t.id == w.table.id),
                "{} not in TABLES",
                w.name()
            );
        }
        for row in workload::WORKLOAD_ROWS {
            let only = row.only_on.unwrap_or(schema::TRANSPORTS);
            assert!(
                only.iter().all(|t| schema::TRANSPORTS.contains(t)),
                "{}",
                row.name
            );
        }
        // Each workload's example, written as a scenario writes it, reads back as itself
        // over every transport that runs it.
        for w in workload::examples() {
            for t in schema::TRANSPORTS.iter().filter(|t| w.runs_on(t)) {
                let text = format!(
                    "[topology]\nkind = \"two_hosts\"\nlink = {{ rate = \"10Mbps\", delay = \"10ms\" }}\n[[flows]]\ntransport = \"{t}\"\nworkload = {}\n",
                    toml::Value::try_from(&w).unwrap()
                );
                let s = crate::scenario::parse_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
                assert_eq!(s.base.flows[0].workload(), Some(&w), "{t}");
            }
        }
        // Every workload over every transport it runs: a flow that parses with the
        // workload asked for; over the others an error listing what they run.
        for w in WORKLOAD_PARSERS {
            for t in schema::TRANSPORTS {
                let text = format!(
                    "[topology]\nkind = \"two_hosts\"\nlink = {{ rate = \"10Mbps\", delay = \"10ms\" }}\n[[flows]]\ntransport = \"{t}\"\nworkload = {{ kind = \"{}\" }}\n",
                    w.name()
                );
                match crate::scenario::parse_str(&text) {
                    Ok(s) => {
                        assert!(schema::workload_runs_on(w.name(), t), "{t} {}", w.name());
                        let flow = &s.base.flows[0];
                        assert_eq!(flow.workload().map(|x| x.kind()), Some(w.name()));
                    }
                    Err(e) if schema::workload_runs_on(w.name(), t) => {
                        assert_ne!(e.field, "flows[0].workload.kind", "{t} {}: {e}", w.name());
                    }
                    Err(e) => assert_eq!(e.allowed, schema::workloads_run_by(t), "{t}"),
                }
            }
        }
        // The text names the transport and lists what it runs, "a, b or c".
        let tcp = schema::workloads_run_by("tcp");
        assert!(
            tcp.starts_with("a workload the \"tcp\" transport runs: \"bulk\", "),
            "{tcp}"
        );
        assert!(!tcp.contains("\"sequence\""), "{tcp}");
    }

    #[test]
    fn workload_keys_are_the_descriptors() {
        for w in WORKLOADS {
            let kind = w.id.strip_prefix("workload.").unwrap();
            for key in all_keys().into_iter().filter(|k| *k != "kind") {
                let t = flow(&format!("{{ kind = \"{kind}\", {key} = 1 }}"));
                let r = flow_spelling(&t, "flows[0]");
                if w.has(key) {
                    let spelled = r.expect("declared key accepted").unwrap();
                    assert!(spelled.flat.contains_key(key), "{kind}.{key}");
                    assert_eq!(spelled.origin.get(key), Some(&"workload"));
                    // Found by name in the tables, nothing rewritten.
                    assert_eq!(spelled.workload.name(), kind);
                    assert_eq!(spelled.transport, "quic");
                    assert!(!spelled.flat.contains_key("kind"));
                } else {
                    let e = r.expect_err("undeclared key rejected");
                    assert_eq!(e.field, format!("flows[0].workload.{key}"));
                    for f in w.fields {
                        assert!(e.allowed.contains(&format!("`{}`", f.name)), "{e}");
                    }
                }
            }
        }
    }

    /// The QUIC keys of a `quic = { ... }` table are those of the QUIC key table but the
    /// workload's.
    #[test]
    fn quic_table_keys_are_the_descriptors() {
        for w in WORKLOADS {
            let kind = w.id.strip_prefix("workload.").unwrap();
            for key in all_keys() {
                let t: Table = format!(
                    "transport = \"quic\"\nquic = {{ {key} = 1 }}\nworkload = {{ kind = \"{kind}\" }}\n"
                )
                .parse()
                .unwrap();
                let r = flow_spelling(&t, "flows[0]");
                if QUIC.has(key) && !w.has(key) {
                    assert!(r.is_ok(), "{kind}: quic.{key}");
                } else {
                    let e = r.expect_err("not a transport key");
                    assert_eq!(e.field, format!("flows[0].quic.{key}"));
                }
            }
        }
    }

    /// Adding a descriptor to a workload's table is all the spelling needs to accept it.
    #[test]
    fn a_new_descriptor_is_accepted() {
        const BULK_PLUS: schema::Table = schema::Table {
            fields: &[
                schema::WORKLOAD_BULK.fields[0],
                schema::WORKLOAD_BULK.fields[1],
                schema::WORKLOAD_BULK.fields[2],
                schema::WORKLOAD_BULK.fields[3],
                schema::WORKLOAD_BULK.fields[4],
                QUIC.fields[0],
            ],
            ..schema::WORKLOAD_BULK
        };
        assert_eq!(BULK_PLUS.fields[5].name, "scheduler");
        assert!(!schema::WORKLOAD_BULK.has("scheduler"));
        let t = flow("{ kind = \"bulk\", scheduler = \"sequential\" }");
        assert!(flow_spelling(&t, "f").is_err());
        const PLUS: &[WorkloadParser] = &[WorkloadParser {
            table: &BULK_PLUS,
            ..WORKLOAD_PARSERS[0]
        }];
        let spelled = flow_spelling_in(&t, "f", PLUS).unwrap().unwrap();
        assert_eq!(spelled.flat["scheduler"].as_str(), Some("sequential"));
        assert_eq!(spelled.origin["scheduler"], "workload");
        // ... and it is now a workload key, no longer one of the `quic` table.
        let t: Table = "transport = \"quic\"\nquic = { scheduler = \"sequential\" }\nworkload = { kind = \"bulk\" }\n".parse().unwrap();
        assert!(flow_spelling(&t, "f").is_ok());
        let Err(e) = flow_spelling_in(&t, "f", PLUS) else {
            panic!("a workload key in the quic table");
        };
        assert_eq!(e.field, "f.quic.scheduler");
        assert!(e.allowed.contains("`scheduler`"), "{e}");
    }

    /// The choices and "expected" texts name what the descriptors allow.
    #[test]
    fn choices_come_from_the_descriptors() {
        let e = flow_spelling(&flow("{ kind = \"podcast\" }"), "f").unwrap_err();
        assert_eq!(
            (e.field.as_str(), e.value.as_str(), e.allowed.as_str()),
            (
                "f.workload.kind",
                "podcast",
                one_of(schema::WORKLOAD_KINDS).as_str()
            )
        );
        assert!(one_of(schema::WORKLOAD_KINDS).starts_with("one of \"bulk\", \"sequence\", "));
        let t: Table = "transport = \"udp\"\nworkload = { kind = \"bulk\" }\n"
            .parse()
            .unwrap();
        let e = flow_spelling(&t, "f").unwrap_err();
        assert_eq!(
            (e.field.as_str(), e.value.as_str(), e.allowed.as_str()),
            ("f.transport", "udp", "one of \"quic\", \"tcp\", \"sctp\"")
        );
        let t: Table = "transport = \"quic\"\nworkload = 3\n".parse().unwrap();
        let e = flow_spelling(&t, "f").unwrap_err();
        let kinds: Vec<String> = schema::WORKLOAD_KINDS
            .iter()
            .map(|k| format!("\"{k}\""))
            .collect();
        assert_eq!(
            e.allowed,
            format!("a table {{ kind = {}, ... }}", kinds.join(" | "))
        );
        let t: Table = "transport = \"quic\"\nquic = 3\nworkload = { kind = \"bulk\" }\n"
            .parse()
            .unwrap();
        let e = flow_spelling(&t, "f").unwrap_err();
        assert_eq!(e.allowed, TRANSPORT_FLOW.field("quic").allowed);
    }
}

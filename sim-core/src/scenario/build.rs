//! From a raw TOML document (sweep already applied) to a validated [`Config`]: defaults,
//! link layering, `"xBDP"` queues, loss-model spellings, flow durations.

use super::raw::*;
use crate::config::{
    AddressChange, AppConfig, Config, Direction, FlowConfig, Handover, Jitter, JitterDistribution,
    LinkChange, LinkConfig, LossModel, LossPosition, OutputConfig, PairLinks, QueueLimit,
    SimLimits, Topology,
};
use crate::time::{SimDuration, SimTime};
use crate::units::{format_duration, format_rate, parse_bytes, Bytes, Rate};
use crate::validate::{
    check_changes, check_flow, check_link, check_loss, join, ConfigError, MAX_PAIRS, MAX_TOML_INT,
};
use std::collections::BTreeMap;
use toml::{Table, Value};

/// Defaults documented in `docs/scenario-format.md`.
pub(super) mod defaults {
    use crate::time::SimDuration;
    use crate::units::{Bytes, Rate};
    /// `name`.
    pub const NAME: &str = "scenario";
    /// `seed`.
    pub const SEED: u64 = 1;
    /// `runs`.
    pub const RUNS: u32 = 1;
    /// `sim.time_limit`.
    pub const TIME_LIMIT: SimDuration = SimDuration::from_secs(600);
    /// `sim.max_events`.
    pub const MAX_EVENTS: u64 = 100_000_000;
    /// `output.sample_interval`.
    pub const SAMPLE_INTERVAL: SimDuration = SimDuration::from_millis(10);
    /// two_hosts links and the dumbbell bottleneck: rate, delay.
    pub const CORE: (Rate, SimDuration) = (Rate(100_000_000), SimDuration::from_millis(10));
    /// Dumbbell access links: rate, delay.
    pub const ACCESS: (Rate, SimDuration) = (Rate(1_000_000_000), SimDuration::from_millis(1));
    /// Link `overhead` (IPv4 + UDP headers).
    pub const OVERHEAD: Bytes = Bytes(28);
    /// CBR datagram `size`.
    pub const CBR_SIZE: Bytes = Bytes(1200);
    /// CBR `duration` when neither `duration` nor `count` is given.
    pub const CBR_DURATION: SimDuration = SimDuration::from_secs(10);
    /// Bytes a CBR datagram counts for in its `rate`, besides its payload (IPv4 + UDP).
    pub const CBR_HEADER: u64 = 28;
}

const QUEUE_EXPECTED: &str = "\"1BDP\" or \"0.5BDP\" (a multiple of the path's bandwidth-delay product), a size such as \"64KB\", an integer number of packets, \"unlimited\", or a table { bytes = \"1BDP\" | \"64KB\", packets = 100 }";
const JITTER_EXPECTED: &str = "a time such as \"5ms\" (uniform, no reordering) or a table { amount = \"5ms\", distribution = \"uniform\" | \"normal\", reorder = true | false }";
const LOSS_EXPECTED: &str = "a loss probability (0.02 or \"2%\" = Bernoulli), \"none\", or a table with model = \"none\" | \"bernoulli\" | \"periodic\" | \"gilbert_elliott\" | \"four_state\"";
const GEMODEL_EXPECTED: &str = "netem's gemodel string \"p r 1-h 1-k\": four percentages in [0, 100] separated by spaces, e.g. \"0.125 12.5 50 4.5\"";
const LOSS_MODELS: &[&str] = &[
    "none",
    "bernoulli",
    "periodic",
    "gilbert_elliott",
    "four_state",
];
/// Flow kinds. A new kind = a raw struct in `raw.rs`, an entry here and an arm in
/// [`parse_flow`].
const FLOW_KINDS: &[&str] = &["cbr", "quic_bulk", "quic_connections"];

/// The link tables that apply to one link, least specific first, each with its path.
#[derive(Clone, Default)]
struct Layers(Vec<(RawLink, String)>);

impl Layers {
    /// Adds the table `v` (if present) as the most specific layer.
    fn push(&mut self, v: &Option<Value>, path: &str) -> Result<(), ConfigError> {
        if let Some(v) = v {
            self.0.push((
                from_value::<RawLink>(v, path, "a link table")?,
                path.to_string(),
            ));
        }
        Ok(())
    }

    /// The most specific value of `key` and the path it was written at.
    fn get(&self, key: &str, f: fn(&RawLink) -> &Option<Value>) -> Option<(&Value, String)> {
        self.0
            .iter()
            .rev()
            .find_map(|(l, p)| f(l).as_ref().map(|v| (v, join(p, key))))
    }

    /// The same layers without their `changes` (a new link does not inherit the schedule of
    /// the link it replaces).
    fn without_changes(&self) -> Layers {
        Layers(
            self.0
                .iter()
                .map(|(l, p)| {
                    let mut l = l.clone();
                    l.changes = None;
                    (l, p.clone())
                })
                .collect(),
        )
    }
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

/// A link whose queue is not resolved yet, with the path every key came from.
struct PartLink {
    link: LinkConfig,
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

    /// Resolves the queue with the round trip `rtt` of the path the link is on, and checks
    /// the link.
    fn resolve(mut self, rtt: SimDuration) -> Result<LinkConfig, ConfigError> {
        // Check the link first (a rate of 0 is reported as such, not as a 0-byte BDP).
        check_link(&self.link, &|k| self.path(k))?;
        let bytes = match self.queue.bytes.take() {
            None => None,
            Some(BytesSpec::Exact(b)) => Some(b),
            Some(BytesSpec::Bdp {
                mantissa,
                frac,
                path,
                written,
            }) => Some(resolve_bdp(
                mantissa,
                frac,
                self.link.rate,
                rtt,
                &path,
                &written,
            )?),
        };
        self.link.queue = QueueLimit {
            bytes,
            packets: self.queue.packets,
        };
        check_link(&self.link, &|k| self.path(k))?;
        Ok(self.link)
    }
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

/// Merges the layers of one link; `canonical` is the `Config` path of the link, used for
/// keys no layer sets.
fn build_link(
    layers: &Layers,
    defaults: (Rate, SimDuration),
    canonical: &str,
) -> Result<PartLink, ConfigError> {
    let mut paths = BTreeMap::new();
    let mut get = |key: &'static str, f: fn(&RawLink) -> &Option<Value>| {
        let found = layers.get(key, f);
        if let Some((_, p)) = &found {
            paths.insert(key, p.clone());
        }
        found
    };
    let rate = match get("rate", |l| &l.rate) {
        Some((v, p)) => get_rate(v, &p)?,
        None => defaults.0,
    };
    let delay = match get("delay", |l| &l.delay) {
        Some((v, p)) => get_duration(v, &p)?,
        None => defaults.1,
    };
    let overhead = match get("overhead", |l| &l.overhead) {
        Some((v, p)) => get_bytes(v, &p)?,
        None => defaults::OVERHEAD,
    };
    let queue = match get("queue", |l| &l.queue) {
        Some((v, p)) => parse_queue(v, &p)?,
        None => QueueSpec {
            bytes: Some(BytesSpec::Bdp {
                mantissa: 1,
                frac: 0,
                path: join(canonical, "queue"),
                written: "1BDP (the default)".into(),
            }),
            packets: None,
        },
    };
    let loss = match get("loss", |l| &l.loss) {
        Some((v, p)) => parse_loss(v, &p)?,
        None => LossModel::None,
    };
    let loss_position = match get("loss_position", |l| &l.loss_position) {
        Some((v, p)) => match get_choice(v, &p, &["ingress", "egress"])? {
            "egress" => LossPosition::Egress,
            _ => LossPosition::Ingress,
        },
        None => LossPosition::Ingress,
    };
    let corruption = match get("corruption", |l| &l.corruption) {
        Some((v, p)) => get_prob(v, &p)?,
        None => 0.0,
    };
    let jitter = match get("jitter", |l| &l.jitter) {
        Some((v, p)) => Some(parse_jitter(v, &p)?),
        None => None,
    };
    let changes = match get("changes", |l| &l.changes) {
        Some((v, p)) => parse_changes(v, &p)?,
        None => Vec::new(),
    };
    Ok(PartLink {
        link: LinkConfig {
            rate,
            delay,
            overhead,
            queue: QueueLimit {
                bytes: None,
                packets: None,
            },
            loss,
            loss_position,
            corruption,
            jitter,
            changes,
        },
        queue,
        paths,
        canonical: canonical.to_string(),
    })
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
            let raw: RawQueue = from_value(v, path, "a queue table")?;
            let bytes_path = join(path, "bytes");
            let bytes = match &raw.bytes {
                None => None,
                Some(Value::String(s)) => Some(parse_queue_bytes(s, &bytes_path)?),
                Some(Value::Integer(n)) if *n >= 0 => Some(BytesSpec::Exact(*n as u64)),
                Some(other) => return Err(ConfigError::new(
                    bytes_path,
                    render(other),
                    "\"1BDP\" / \"0.5BDP\", a size such as \"64KB\", or an integer number of bytes",
                )),
            };
            let packets = match &raw.packets {
                None => None,
                Some(p) => Some(get_int(
                    p,
                    &join(path, "packets"),
                    0,
                    i64::MAX,
                    "an integer number of packets >= 0",
                )? as u64),
            };
            Ok(QueueSpec { bytes, packets })
        }
        _ => Err(ConfigError::new(path, render(v), QUEUE_EXPECTED)),
    }
}

/// `1 - percent/100`, exactly in decimal and then correctly rounded.
fn complement_percent(mantissa: u128, frac: u32) -> Option<f64> {
    let hundred = 100u128.checked_mul(10u128.checked_pow(frac)?)?;
    let rest = hundred.checked_sub(mantissa)?;
    format!("{rest}e-{}", frac + 2).parse().ok()
}

/// netem's `gemodel p r 1-h 1-k` (percent) -> (p, r, k, h).
fn parse_gemodel(v: &Value, path: &str) -> Result<(f64, f64, f64, f64), ConfigError> {
    let err = || ConfigError::new(path, render(v), GEMODEL_EXPECTED);
    let s = v.as_str().ok_or_else(err)?;
    let tokens: Vec<&str> = s.split_whitespace().collect();
    if tokens.len() != 4 {
        return Err(err());
    }
    let mut parsed = Vec::with_capacity(4);
    for tok in &tokens {
        let num = tok.strip_suffix('%').unwrap_or(tok);
        let (mantissa, frac) = parse_decimal(num).ok_or_else(err)?;
        let hundred = 10u128
            .checked_pow(frac)
            .and_then(|x| x.checked_mul(100))
            .ok_or_else(err)?;
        if mantissa > hundred {
            return Err(err());
        }
        let direct: f64 = format!("{num}e-2").parse().map_err(|_| err())?;
        parsed.push((direct, mantissa, frac));
    }
    let p = parsed[0].0;
    let r = parsed[1].0;
    let h = complement_percent(parsed[2].1, parsed[2].2).ok_or_else(err)?;
    let k = complement_percent(parsed[3].1, parsed[3].2).ok_or_else(err)?;
    Ok((p, r, k, h))
}

fn parse_loss(v: &Value, path: &str) -> Result<LossModel, ConfigError> {
    let table = match v {
        Value::Float(_) | Value::Integer(_) => {
            return Ok(LossModel::Bernoulli {
                p: get_prob(v, path)?,
            })
        }
        Value::String(s) if s.trim() == "none" => return Ok(LossModel::None),
        Value::String(s) => {
            return match parse_percent(s) {
                Some(_) => Ok(LossModel::Bernoulli {
                    p: get_prob(v, path)?,
                }),
                None => Err(ConfigError::new(path, s, LOSS_EXPECTED)),
            }
        }
        Value::Table(t) => t,
        _ => return Err(ConfigError::new(path, render(v), LOSS_EXPECTED)),
    };
    let model_path = join(path, "model");
    let model = match table.get("model") {
        Some(m) => get_choice(m, &model_path, LOSS_MODELS)?,
        None => {
            return Err(ConfigError::new(
                model_path,
                MISSING,
                "one of \"none\", \"bernoulli\", \"periodic\", \"gilbert_elliott\", \"four_state\" (required in a loss table)",
            ))
        }
    };
    let at = |k: &str| join(path, k);
    let prob = |v: &Option<Value>, k: &str, what: &str| -> Result<f64, ConfigError> {
        get_prob(required(v, &at(k), what)?, &at(k))
    };
    let model =
        match model {
            "none" => {
                from_value::<RawLossNone>(v, path, "a loss table of model none")?;
                LossModel::None
            }
            "bernoulli" => {
                let raw: RawBernoulli = from_value(v, path, "a loss table of model bernoulli")?;
                LossModel::Bernoulli {
                    p: prob(&raw.p, "p", "the loss probability")?,
                }
            }
            "periodic" => {
                let raw: RawPeriodic = from_value(v, path, "a loss table of model periodic")?;
                let every = get_int(
                    required(&raw.every, &at("every"), "an integer >= 1")?,
                    &at("every"),
                    1,
                    i64::MAX,
                    "an integer >= 1 (every n-th packet is lost)",
                )? as u64;
                let offset = match &raw.offset {
                    Some(o) => get_int(
                        o,
                        &at("offset"),
                        0,
                        i64::MAX,
                        &format!("an integer in [0, every - 1] = [0, {}]", every - 1),
                    )? as u64,
                    // Default: the every-th packet (1-based) is lost, so `every = 200` loses
                    // packets 200, 400, ... and never the very first one.
                    None => every - 1,
                };
                LossModel::Periodic { every, offset }
            }
            "gilbert_elliott" => {
                let raw: RawGilbertElliott =
                    from_value(v, path, "a loss table of model gilbert_elliott")?;
                if let Some(g) = &raw.gemodel {
                    let canonical = [("p", &raw.p), ("r", &raw.r), ("k", &raw.k), ("h", &raw.h)];
                    if let Some((k, _)) = canonical.iter().find(|(_, v)| v.is_some()) {
                        return Err(ConfigError::new(
                            at("gemodel"),
                            render(g),
                            format!(
                            "either gemodel or the keys p, r, k, h, not both (`{k}` is also given)"
                        ),
                        ));
                    }
                    let (p, r, k, h) = parse_gemodel(g, &at("gemodel"))?;
                    let model = LossModel::GilbertElliott { p, r, k, h };
                    let gpath = at("gemodel");
                    check_loss(&model, &|_| gpath.clone()).map_err(|mut e| {
                        e.value = render(g);
                        e
                    })?;
                    return Ok(model);
                }
                LossModel::GilbertElliott {
                    p: prob(&raw.p, "p", "P(Good -> Bad), a probability")?,
                    r: prob(&raw.r, "r", "P(Bad -> Good), a probability")?,
                    k: match &raw.k {
                        Some(k) => get_prob(k, &at("k"))?,
                        None => 1.0,
                    },
                    h: match &raw.h {
                        Some(h) => get_prob(h, &at("h"))?,
                        None => 0.0,
                    },
                }
            }
            "four_state" => {
                let raw: RawFourState = from_value(v, path, "a loss table of model four_state")?;
                LossModel::FourState {
                    p13: prob(&raw.p13, "p13", "P(1 -> 3), a probability")?,
                    p31: prob(&raw.p31, "p31", "P(3 -> 1), a probability")?,
                    p32: prob(&raw.p32, "p32", "P(3 -> 2), a probability")?,
                    p23: prob(&raw.p23, "p23", "P(2 -> 3), a probability")?,
                    p14: prob(&raw.p14, "p14", "P(1 -> 4), a probability")?,
                }
            }
            other => return Err(ConfigError::new(
                model_path,
                other,
                "one of \"none\", \"bernoulli\", \"periodic\", \"gilbert_elliott\", \"four_state\"",
            )),
        };
    check_loss(&model, &|k| join(path, k))?;
    Ok(model)
}

fn parse_jitter(v: &Value, path: &str) -> Result<Jitter, ConfigError> {
    match v {
        Value::String(_) | Value::Integer(_) => Ok(Jitter {
            distribution: JitterDistribution::Uniform,
            amount: get_duration(v, path)
                .map_err(|e| ConfigError::new(path, e.value, JITTER_EXPECTED))?,
            reorder: false,
        }),
        Value::Table(_) => {
            let raw: RawJitter = from_value(v, path, "a jitter table")?;
            let amount_path = join(path, "amount");
            let amount = get_duration(
                required(&raw.amount, &amount_path, &time_expected())?,
                &amount_path,
            )?;
            let distribution = match &raw.distribution {
                Some(d) => {
                    match get_choice(d, &join(path, "distribution"), &["uniform", "normal"])? {
                        "normal" => JitterDistribution::Normal,
                        _ => JitterDistribution::Uniform,
                    }
                }
                None => JitterDistribution::Uniform,
            };
            let reorder = match &raw.reorder {
                Some(r) => get_bool(r, &join(path, "reorder"))?,
                None => false,
            };
            Ok(Jitter {
                distribution,
                amount,
                reorder,
            })
        }
        _ => Err(ConfigError::new(path, render(v), JITTER_EXPECTED)),
    }
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
        let raw: RawChange = from_value(item, &p, "a link change")?;
        let at_path = join(&p, "at");
        let at = get_time(required(&raw.at, &at_path, &time_expected())?, &at_path)?;
        changes.push(LinkChange {
            at,
            rate: raw
                .rate
                .as_ref()
                .map(|r| get_rate(r, &join(&p, "rate")))
                .transpose()?,
            delay: raw
                .delay
                .as_ref()
                .map(|d| get_duration(d, &join(&p, "delay")))
                .transpose()?,
            loss: raw
                .loss
                .as_ref()
                .map(|l| parse_loss(l, &join(&p, "loss")))
                .transpose()?,
            corruption: raw
                .corruption
                .as_ref()
                .map(|c| get_prob(c, &join(&p, "corruption")))
                .transpose()?,
        });
    }
    check_changes(&changes, path)?;
    Ok(changes)
}

fn pair_allowed(pairs: usize) -> String {
    format!(
        "a pair index in [0, {}] (the topology has {pairs} pair(s))",
        pairs.saturating_sub(1)
    )
}

fn array_of_tables<'v>(v: &'v Value, path: &str, what: &str) -> Result<&'v [Value], ConfigError> {
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
    address: AddressChange,
    link: Option<Value>,
    forward: Option<Value>,
    reverse: Option<Value>,
}

/// What handovers need to know of the topology: for each pair, the layers of the client's
/// current access links and the delay of the rest of its round trip.
struct HandoverCtx {
    current: Vec<(Layers, Layers)>,
    rest_rtt: Vec<SimDuration>,
    defaults: (Rate, SimDuration),
}

fn parse_handovers(v: &Option<Value>, mut ctx: HandoverCtx) -> Result<Vec<Handover>, ConfigError> {
    let Some(v) = v else {
        return Ok(Vec::new());
    };
    let pairs = ctx.current.len();
    let items = array_of_tables(v, "topology.handovers", "[[topology.handovers]]")?;
    let mut pending = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let p = format!("topology.handovers[{i}]");
        let raw: RawHandover = from_value(item, &p, "a handover")?;
        let at_path = join(&p, "at");
        let at = get_time(required(&raw.at, &at_path, &time_expected())?, &at_path)?;
        let pair = match &raw.pair {
            Some(x) => get_int(
                x,
                &join(&p, "pair"),
                0,
                pairs as i64 - 1,
                &pair_allowed(pairs),
            )? as usize,
            None => 0,
        };
        let address = match &raw.address {
            Some(a) => match get_choice(a, &join(&p, "address"), &["ip", "port", "none"])? {
                "port" => AddressChange::Port,
                "none" => AddressChange::None,
                _ => AddressChange::Ip,
            },
            None => AddressChange::Ip,
        };
        pending.push(PendingHandover {
            index: i,
            at,
            pair,
            address,
            link: raw.link,
            forward: raw.forward,
            reverse: raw.reverse,
        });
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
        fl.push(&h.link, &join(&p, "link"))?;
        fl.push(&h.forward, &join(&p, "forward"))?;
        let mut rl = cur_r.without_changes();
        rl.push(&h.link, &join(&p, "link"))?;
        rl.push(&h.reverse, &join(&p, "reverse"))?;
        let f = build_link(&fl, ctx.defaults, &join(&p, "forward"))?;
        let r = build_link(&rl, ctx.defaults, &join(&p, "reverse"))?;
        let rtt = f
            .link
            .delay
            .saturating_add(r.link.delay)
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
    let raw: RawTwoHosts = from_value(v, "topology", "a two_hosts topology")?;
    let mut fl = Layers::default();
    fl.push(&raw.link, "topology.link")?;
    fl.push(&raw.forward, "topology.forward")?;
    let mut rl = Layers::default();
    rl.push(&raw.link, "topology.link")?;
    rl.push(&raw.reverse, "topology.reverse")?;
    let f = build_link(&fl, defaults::CORE, "topology.forward")?;
    let r = build_link(&rl, defaults::CORE, "topology.reverse")?;
    let rtt = f.link.delay.saturating_add(r.link.delay);
    let forward = f.resolve(rtt)?;
    let reverse = r.resolve(rtt)?;
    let handovers = parse_handovers(
        &raw.handovers,
        HandoverCtx {
            current: vec![(fl, rl)],
            rest_rtt: vec![SimDuration::ZERO],
            defaults: defaults::CORE,
        },
    )?;
    Ok(Topology::TwoHosts {
        forward,
        reverse,
        handovers,
    })
}

fn dumbbell(v: &Value) -> Result<Topology, ConfigError> {
    let raw: RawDumbbell = from_value(v, "topology", "a dumbbell topology")?;
    let pairs_allowed = format!("an integer number of client/server pairs in [1, {MAX_PAIRS}]");
    let pairs = get_int(
        required(&raw.pairs, "topology.pairs", &pairs_allowed)?,
        "topology.pairs",
        1,
        MAX_PAIRS as i64,
        &pairs_allowed,
    )? as usize;

    let mut bfl = Layers::default();
    bfl.push(&raw.bottleneck, "topology.bottleneck")?;
    bfl.push(&raw.bottleneck_forward, "topology.bottleneck_forward")?;
    let mut brl = Layers::default();
    brl.push(&raw.bottleneck, "topology.bottleneck")?;
    brl.push(&raw.bottleneck_reverse, "topology.bottleneck_reverse")?;
    let mut client = Layers::default();
    client.push(&raw.access, "topology.access")?;
    client.push(&raw.client_access, "topology.client_access")?;
    let mut server = Layers::default();
    server.push(&raw.access, "topology.access")?;
    server.push(&raw.server_access, "topology.server_access")?;

    // Per-pair layers: [client_up, client_down, server_up, server_down].
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
    if let Some(entries) = &raw.pair {
        let entries = array_of_tables(entries, "topology.pair", "[[topology.pair]]")?;
        let mut seen: Vec<Option<usize>> = vec![None; pairs];
        for (j, e) in entries.iter().enumerate() {
            let p = format!("topology.pair[{j}]");
            let raw_e: RawPairEntry = from_value(e, &p, "a pair entry")?;
            let ip = join(&p, "index");
            let allowed = pair_allowed(pairs);
            let i = get_int(
                required(&raw_e.index, &ip, &allowed)?,
                &ip,
                0,
                pairs as i64 - 1,
                &allowed,
            )? as usize;
            if let Some(prev) = seen[i] {
                return Err(ConfigError::new(
                    ip,
                    i.to_string(),
                    format!("an index not used by another [[topology.pair]] entry (topology.pair[{prev}] has it)"),
                ));
            }
            seen[i] = Some(j);
            let l = &mut layers[i];
            l[0].push(&raw_e.client_up, &join(&p, "client_up"))?;
            l[1].push(&raw_e.client_down, &join(&p, "client_down"))?;
            l[2].push(&raw_e.server_up, &join(&p, "server_up"))?;
            l[3].push(&raw_e.server_down, &join(&p, "server_down"))?;
        }
    }

    let bf = build_link(&bfl, defaults::CORE, "topology.bottleneck_forward")?;
    let br = build_link(&brl, defaults::CORE, "topology.bottleneck_reverse")?;
    let names = ["client_up", "client_down", "server_up", "server_down"];
    let mut parts = Vec::with_capacity(pairs);
    for (i, l) in layers.iter().enumerate() {
        let mut four = Vec::with_capacity(4);
        for (k, name) in names.iter().enumerate() {
            four.push(build_link(
                &l[k],
                defaults::ACCESS,
                &format!("topology.pairs[{i}].{name}"),
            )?);
        }
        parts.push(four);
    }
    let core = bf.link.delay.saturating_add(br.link.delay);
    let rtts: Vec<SimDuration> = parts
        .iter()
        .map(|f| {
            f.iter()
                .fold(core, |acc, l| acc.saturating_add(l.link.delay))
        })
        .collect();
    let rest_rtt: Vec<SimDuration> = parts
        .iter()
        .map(|f| {
            core.saturating_add(f[2].link.delay)
                .saturating_add(f[3].link.delay)
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
        &raw.handovers,
        HandoverCtx {
            current,
            rest_rtt,
            defaults: defaults::ACCESS,
        },
    )?;
    Ok(Topology::Dumbbell {
        pairs: pair_links,
        bottleneck_forward,
        bottleneck_reverse,
        handovers,
    })
}

fn parse_topology(v: &Option<Value>) -> Result<(Topology, usize), ConfigError> {
    let v = required(
        v,
        "topology",
        "a [topology] table with kind = \"two_hosts\" or \"dumbbell\"",
    )?;
    let Value::Table(t) = v else {
        return Err(ConfigError::new(
            "topology",
            render(v),
            "a [topology] table with kind = \"two_hosts\" or \"dumbbell\"",
        ));
    };
    let kinds = ["two_hosts", "dumbbell"];
    let kind = get_choice(
        required(
            &t.get("kind").cloned(),
            "topology.kind",
            "one of \"two_hosts\", \"dumbbell\"",
        )?,
        "topology.kind",
        &kinds,
    )?;
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

/// The keys every flow kind shares: `pair` (default 0; its range is checked against the
/// topology in `check_flow`) and `background` (default false).
fn flow_placement(
    pair: &Option<Value>,
    background: &Option<Value>,
    path: &str,
    pairs: usize,
) -> Result<(usize, bool), ConfigError> {
    let pair = match pair {
        Some(p) => get_int(p, &join(path, "pair"), 0, i64::MAX, &pair_allowed(pairs))? as usize,
        None => 0,
    };
    let background = match background {
        Some(b) => get_bool(b, &join(path, "background"))?,
        None => false,
    };
    Ok((pair, background))
}

fn parse_cbr(v: &Value, path: &str, pairs: usize) -> Result<FlowConfig, ConfigError> {
    let raw: RawCbr = from_value(v, path, "a cbr flow")?;
    let at = |k: &str| join(path, k);
    let (pair, background) = flow_placement(&raw.pair, &raw.background, path, pairs)?;
    let direction = match &raw.direction {
        Some(d) => match get_choice(d, &at("direction"), &["up", "down"])? {
            "down" => Direction::Down,
            _ => Direction::Up,
        },
        None => Direction::Up,
    };
    let rate = get_rate(
        required(&raw.rate, &at("rate"), "a rate > 0 such as \"1Mbps\"")?,
        &at("rate"),
    )?;
    let size = match &raw.size {
        Some(s) => get_bytes(s, &at("size"))?,
        None => defaults::CBR_SIZE,
    };
    let start = match &raw.start {
        Some(s) => get_time(s, &at("start"))?,
        None => SimTime::ZERO,
    };
    let mut flow = FlowConfig {
        pair,
        background,
        app: AppConfig::Cbr {
            direction,
            rate,
            size,
            start,
            count: 1,
        },
    };
    check_flow(&flow, pairs, &|k| join(path, k))?;
    let count = match (&raw.duration, &raw.count) {
        (Some(_), Some(c)) => {
            return Err(ConfigError::new(
                at("count"),
                render(c),
                "either `duration` or `count`, not both",
            ))
        }
        (None, Some(c)) => {
            get_int(c, &at("count"), 1, i64::MAX, "a number of datagrams >= 1")? as u64
        }
        (d, None) => {
            let (duration, written) = match d {
                Some(d) => (get_duration(d, &at("duration"))?, render(d)),
                None => (defaults::CBR_DURATION, "10s (the default)".to_string()),
            };
            match cbr_count(duration, rate, size) {
                Some(0) => {
                    return Err(ConfigError::new(
                        at("duration"),
                        written,
                        "a time > 0 (the flow must send at least one datagram)",
                    ))
                }
                Some(n) if n <= MAX_TOML_INT as u128 => n as u64,
                _ => {
                    return Err(ConfigError::new(
                        at("duration"),
                        written,
                        "a duration of at most 9223372036854775807 datagrams at this rate",
                    ))
                }
            }
        }
    };
    if let AppConfig::Cbr { count: c, .. } = &mut flow.app {
        *c = count;
    }
    check_flow(&flow, pairs, &|k| join(path, k))?;
    Ok(flow)
}

/// One `[[flows]]` entry, dispatched on its `kind`.
fn parse_flow(v: &Value, path: &str, pairs: usize) -> Result<FlowConfig, ConfigError> {
    let Value::Table(t) = v else {
        return Err(ConfigError::new(
            path,
            render(v),
            "a table [[flows]] with a kind",
        ));
    };
    let kinds: Vec<String> = FLOW_KINDS.iter().map(|k| format!("\"{k}\"")).collect();
    let kind_allowed = format!("one of {}", kinds.join(", "));
    let kind_path = join(path, "kind");
    let kind = get_choice(
        required(&t.get("kind").cloned(), &kind_path, &kind_allowed)?,
        &kind_path,
        FLOW_KINDS,
    )?;
    match kind {
        "cbr" => parse_cbr(v, path, pairs),
        "quic_bulk" => {
            let raw: RawQuicBulk = from_value(v, path, "a quic_bulk flow")?;
            let at = |k: &str| join(path, k);
            let (pair, background) = flow_placement(&raw.pair, &raw.background, path, pairs)?;
            // `profile` resolves into explicit values; explicit keys win.
            let mut table = raw.quic;
            crate::quic::config::apply_profile(&mut table);
            let quic = from_value(&Value::Table(table), path, "a quic_bulk flow")?;
            let flow = FlowConfig {
                pair,
                background,
                app: AppConfig::QuicBulk(quic),
            };
            check_flow(&flow, pairs, &at)?;
            Ok(flow)
        }
        "quic_connections" => parse_quic_connections(v, path, pairs),
        other => Err(ConfigError::new(kind_path, other, kind_allowed)),
    }
}

/// A `quic_connections` flow (`docs/lifecycle.md`): the shared QUIC keys, and the
/// `[[flows.connections]]` list whose workload keys default to the flow's.
fn parse_quic_connections(v: &Value, path: &str, pairs: usize) -> Result<FlowConfig, ConfigError> {
    use crate::quic::lifecycle::{CloseMode, ConnectionSpec};
    let raw: RawQuicConnections = from_value(v, path, "a quic_connections flow")?;
    let at = |k: &str| join(path, k);
    let (pair, background) = flow_placement(&raw.pair, &raw.background, path, pairs)?;
    // `profile` resolves into explicit values, as for quic_bulk; explicit keys win.
    let mut table = raw.quic;
    crate::quic::config::apply_profile(&mut table);
    let quic: crate::quic::QuicConfig =
        from_value(&Value::Table(table), path, "a quic_connections flow")?;
    let items = match &raw.connections {
        Some(c) => array_of_tables(c, &at("connections"), "[[flows.connections]]")?,
        None => &[],
    };
    let mut connections = Vec::with_capacity(items.len());
    for (j, item) in items.iter().enumerate() {
        let cpath = format!("{}[{j}]", at("connections"));
        let c: RawConnection = from_value(item, &cpath, "a connection")?;
        let cat = |k: &str| join(&cpath, k);
        let mut spec = ConnectionSpec::new(&quic, quic.bytes);
        if let Some(x) = &c.start {
            spec.start = Some(get_time(x, &cat("start"))?);
        }
        if let Some(x) = &c.gap {
            spec.gap = Some(get_duration(x, &cat("gap"))?);
        }
        if let Some(x) = &c.resume {
            spec.resume = get_bool(x, &cat("resume"))?;
        }
        if let Some(x) = &c.bytes {
            spec.bytes = get_bytes(x, &cat("bytes"))?.0;
        }
        if let Some(x) = &c.streams {
            let allowed = "a number of streams >= 1";
            spec.streams = get_int(x, &cat("streams"), 0, i64::MAX, allowed)? as u64;
        }
        if let Some(x) = &c.request_size {
            spec.request_size = get_bytes(x, &cat("request_size"))?.0;
        }
        if let Some(x) = &c.close {
            spec.close = match get_choice(x, &cat("close"), &["explicit", "idle"])? {
                "idle" => CloseMode::Idle,
                _ => CloseMode::Explicit,
            };
        }
        connections.push(spec);
    }
    let flow = FlowConfig {
        pair,
        background,
        app: AppConfig::QuicConnections { quic, connections },
    };
    check_flow(&flow, pairs, &at)?;
    Ok(flow)
}

fn parse_flows(v: &Option<Value>, pairs: usize) -> Result<Vec<FlowConfig>, ConfigError> {
    let Some(v) = v else {
        return Ok(Vec::new());
    };
    let items = array_of_tables(v, "flows", "[[flows]]")?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| parse_flow(item, &format!("flows[{i}]"), pairs))
        .collect()
}

fn parse_seed(v: &Value) -> Result<u64, ConfigError> {
    let allowed = "an integer >= 0 (or a decimal string for seeds above 2^63 - 1)";
    match v {
        Value::Integer(n) if *n >= 0 => Ok(*n as u64),
        Value::String(s) if !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()) => {
            s.parse().map_err(|_| ConfigError::new("seed", s, allowed))
        }
        _ => Err(ConfigError::new("seed", render(v), allowed)),
    }
}

/// Builds and validates the `Config` of a document whose `[sweep]` has been removed.
pub(super) fn build(doc: &Table) -> Result<Config, ConfigError> {
    let raw: RawScenario = from_value(
        &Value::Table(doc.clone()),
        "",
        "the top level of a scenario",
    )?;
    let name = match &raw.name {
        Some(v) => get_string(v, "name")?,
        None => defaults::NAME.to_string(),
    };
    let description = match &raw.description {
        Some(v) => get_string(v, "description")?,
        None => String::new(),
    };
    let seed = match &raw.seed {
        Some(v) => parse_seed(v)?,
        None => defaults::SEED,
    };
    let runs = match &raw.runs {
        Some(v) => get_int(
            v,
            "runs",
            1,
            u32::MAX as i64,
            "an integer in [1, 4294967295]",
        )? as u32,
        None => defaults::RUNS,
    };
    let sim = match &raw.sim {
        Some(v) => {
            let s: RawSim = from_value(v, "sim", "the [sim] table")?;
            SimLimits {
                time_limit: match &s.time_limit {
                    Some(t) => get_duration(t, "sim.time_limit")?,
                    None => defaults::TIME_LIMIT,
                },
                max_events: match &s.max_events {
                    Some(m) => get_int(m, "sim.max_events", 1, i64::MAX, "an integer >= 1")? as u64,
                    None => defaults::MAX_EVENTS,
                },
            }
        }
        None => SimLimits {
            time_limit: defaults::TIME_LIMIT,
            max_events: defaults::MAX_EVENTS,
        },
    };
    let (topology, pairs) = parse_topology(&raw.topology)?;
    let flows = parse_flows(&raw.flows, pairs)?;
    let output = match &raw.output {
        Some(v) => {
            let o: RawOutput = from_value(v, "output", "the [output] table")?;
            OutputConfig {
                series: match &o.series {
                    Some(s) => get_bool(s, "output.series")?,
                    None => false,
                },
                sample_interval: match &o.sample_interval {
                    Some(s) => get_duration(s, "output.sample_interval")?,
                    None => defaults::SAMPLE_INTERVAL,
                },
            }
        }
        None => OutputConfig {
            series: false,
            sample_interval: defaults::SAMPLE_INTERVAL,
        },
    };
    let cfg = Config {
        name,
        description,
        seed,
        runs,
        sim,
        topology,
        flows,
        output,
    };
    cfg.validate()?;
    Ok(cfg)
}

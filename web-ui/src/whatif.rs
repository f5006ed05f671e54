//! The what-if strip: the knobs a teacher turns first, in plain words with units, above
//! the full parameter panel — packet loss, one-way delay, bottleneck rate, queue,
//! congestion controller, flow-control allowance, transfer size and streams, migration
//! policy. Each knob is a view of keys the panel already edits ([`crate::panel`]): which
//! links are the bottleneck (a dumbbell's `bottleneck`, else the two hosts' links), which
//! flows a controller change applies to (every foreground flow that has the key). Where
//! those keys hold one value the knob writes them all; where they differ there is one
//! knob per link direction or flow, so no knob hides a difference the scenario makes.
//!
//! A knob is a slider (two significant digits, the unit a scenario writes) or a choice;
//! a link whose loss model is not Bernoulli shows its model in words and is edited in the
//! panel below. Moving a knob rewrites the TOML exactly as the panel would, and the page
//! re-runs while the knob is dragged (a new run starts as soon as the previous one is done).

use crate::panel::{self, Section, Seg};
use crate::slider::{Scale, Slider, STEPS};
use crate::summary::{in_unit, RATE_UNITS};
use sim_core::scenario::schema::{self, DefaultValue, Field, Kind};
use toml_edit::{DocumentMut, Item, Value};

/// How a knob is moved.
#[derive(Clone, Debug, PartialEq)]
pub enum Control {
    /// A slider over `slider`, now at `pos`; `spell` turns a position into the text written.
    Slider {
        slider: Slider,
        pos: u32,
        spell: Spell,
    },
    /// One of `choices` (the first: the default, written by removing the key).
    Choice {
        /// `(value written, words)`; value `""` removes the key (the default applies).
        choices: Vec<(String, String)>,
        /// The value now written (`""`: not written).
        current: String,
    },
    /// Not edited here; the text says why (the panel below edits it).
    Fixed(String),
}

/// How a slider position is written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Spell {
    /// The slider's own spelling ([`Slider::value`]).
    Plain,
    /// A loss probability as a TOML float (`0.01`, `0.0`).
    Loss,
    /// A multiple of the link's bandwidth-delay product (`"0.5BDP"`).
    Bdp,
}

/// Where a knob writes: a table and one of its keys.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    /// The table.
    pub path: Vec<Seg>,
    /// The key.
    pub field: &'static Field,
}

/// One knob of the strip.
#[derive(Clone, Debug, PartialEq)]
pub struct Knob {
    /// Stable across re-renders of the same scenario: what it is and where it writes
    /// (`rate@topology.link`).
    pub key: String,
    /// In plain words: "Bottleneck rate", "Packet loss (server → client)".
    pub label: String,
    /// The value now in force, in words with its unit ("20 Mbit/s", "1 %", "1 × BDP").
    pub shown: String,
    /// What the help text says (the key's own help and where it is written).
    pub help: String,
    /// How it is moved.
    pub control: Control,
    /// Where it writes.
    pub targets: Vec<Target>,
}

/// Rate in words: `20 Mbit/s`.
fn rate_words(bps: f64) -> String {
    let (v, u) = in_unit(bps, RATE_UNITS);
    format!("{} {u}", short(v))
}

/// Time in words: `20 ms`.
fn time_words(ns: f64) -> String {
    let (v, u) = in_unit(ns, &[(1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns")]);
    format!("{} {u}", short(v))
}

/// Size in words: `10 MB`.
fn size_words(b: f64) -> String {
    let (v, u) = in_unit(b, &[(1e9, "GB"), (1e6, "MB"), (1e3, "KB"), (1.0, "bytes")]);
    format!("{} {u}", short(v))
}

/// A number with at most three significant digits and no trailing zeros.
fn short(v: f64) -> String {
    let s = if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The value written for `fv`, or its default as a scenario writes it.
fn current(value: &Option<String>, field: &Field) -> Option<String> {
    value.clone().or(match field.default {
        DefaultValue::Value(v) => Some(v.trim_matches('"').to_string()),
        _ => None,
    })
}

/// A link's loss probability when its model is none or Bernoulli (`Err`: the model's
/// name, edited in the panel).
fn loss_of(item: Option<&Item>) -> Result<f64, String> {
    let p = |s: &str| crate::slider::numeric(Kind::Probability, s);
    match item {
        None => Ok(0.0),
        Some(Item::Value(Value::Float(f))) => Ok(*f.value()),
        Some(Item::Value(Value::Integer(i))) => Ok(*i.value() as f64),
        Some(Item::Value(Value::String(s))) if s.value() == "none" => Ok(0.0),
        Some(Item::Value(Value::String(s))) => p(s.value()).ok_or_else(|| s.value().clone()),
        Some(other) => {
            let table = other.as_table_like().ok_or("a loss model")?;
            let model = table.get("model").and_then(|m| m.as_str()).unwrap_or("");
            match model {
                "none" => Ok(0.0),
                "bernoulli" => table
                    .get("p")
                    .and_then(|v| {
                        v.as_float()
                            .or(v.as_integer().map(|i| i as f64))
                            .or(v.as_str().and_then(p))
                    })
                    .ok_or_else(|| "bernoulli".to_string()),
                m => Err(m.to_string()),
            }
        }
    }
}

/// The words of a loss model name.
fn model_words(model: &str) -> String {
    match model {
        "gilbert_elliott" => "Gilbert-Elliott bursts".into(),
        "four_state" => "four-state bursts".into(),
        "periodic" => "periodic".into(),
        m => m.replace('_', " "),
    }
}

/// Words for a choice: controllers as their papers name them.
fn choice_words(key: &str, v: &str) -> String {
    match (key, v) {
        ("cc", "new_reno") => "NewReno".into(),
        ("cc", "rfc9260") => "RFC 9260".into(),
        ("cc", "cubic") => "CUBIC".into(),
        ("cc", "bbr1") => "BBRv1".into(),
        (_, v) => v.replace('_', " "),
    }
}

/// A candidate place for a knob: the section's field, its current value and what
/// distinguishes it from its siblings (a flow).
struct Spot<'a> {
    sec: &'a Section,
    fv: &'a panel::FieldView,
    /// The value in force, as written (the default when not written).
    value: String,
    /// "flow 1".
    which: String,
}

/// The bottleneck's link tables: the key holding both directions (`link`, a dumbbell's
/// `bottleneck`) and the per-direction tables that override its keys.
struct Bottleneck {
    base: Vec<Seg>,
    dirs: [(Vec<Seg>, &'static str); 2],
}

fn bottleneck(doc: &DocumentMut) -> Bottleneck {
    let kind = doc
        .get("topology")
        .and_then(|t| t.get("kind"))
        .and_then(|k| k.as_str())
        .or_else(|| doc.get("topology").and_then(|t| t.as_str()))
        .unwrap_or("two_hosts");
    let has = |name: &str| schema::table(&format!("topology.{kind}")).is_some_and(|t| t.has(name));
    let (base, fwd, rev) = if has("bottleneck") {
        ("bottleneck", "bottleneck_forward", "bottleneck_reverse")
    } else {
        ("link", "forward", "reverse")
    };
    let at = |k: &str| vec![Seg::Key("topology".into()), Seg::Key(k.into())];
    Bottleneck {
        base: at(base),
        dirs: [(at(fwd), "client → server"), (at(rev), "server → client")],
    }
}

/// The item at `path`.`key`, if written.
fn item_at<'a>(doc: &'a DocumentMut, path: &[Seg], key: &str) -> Option<&'a Item> {
    let mut t: &dyn toml_edit::TableLike = doc.as_table();
    for seg in path {
        t = match seg {
            Seg::Key(k) => t.get(k)?.as_table_like()?,
            Seg::Elem(..) => return None,
        };
    }
    t.get(key)
}

/// One knob's worth of a link key: the value in force, the directions it is for (`""`:
/// both) and the tables it writes.
struct LinkGroup {
    value: String,
    which: &'static str,
    targets: Vec<Vec<Seg>>,
}

/// The bottleneck's key `key` per direction (an override table's value, else the base
/// table's, else `default`), grouped: one group when both directions agree (written to
/// the base table and to every override that sets the key), else one per direction
/// (written to that direction's table).
fn link_groups(
    doc: &DocumentMut,
    b: &Bottleneck,
    key: &str,
    read: &dyn Fn(Option<&Item>) -> String,
) -> Vec<LinkGroup> {
    let base = read(item_at(doc, &b.base, key));
    let per: Vec<(String, bool)> = b
        .dirs
        .iter()
        .map(|(p, _)| match item_at(doc, p, key) {
            Some(i) => (read(Some(i)), true),
            None => (base.clone(), false),
        })
        .collect();
    if per[0].0 == per[1].0 {
        let mut targets = vec![b.base.clone()];
        for (i, (p, _)) in b.dirs.iter().enumerate() {
            if per[i].1 {
                targets.push(p.clone());
            }
        }
        vec![LinkGroup {
            value: per[0].0.clone(),
            which: "",
            targets,
        }]
    } else {
        b.dirs
            .iter()
            .zip(per)
            .map(|((p, words), (value, _))| LinkGroup {
                value,
                which: words,
                targets: vec![p.clone()],
            })
            .collect()
    }
}

/// A written value as the panel shows it (strings without quotes).
fn plain(item: Option<&Item>) -> String {
    match item {
        Some(Item::Value(v)) => match v.as_str() {
            Some(s) => s.to_string(),
            None => v.clone().decorated("", "").to_string(),
        },
        Some(other) => other.to_string().trim().to_string(),
        None => String::new(),
    }
}

/// A link's `loss` item as a probability when its model is none or Bernoulli
/// (`model:<name>` otherwise).
fn loss_text(item: Option<&Item>) -> String {
    match loss_of(item) {
        Ok(p) => format!("{p}"),
        Err(m) => format!("model:{m}"),
    }
}

/// The flow a section belongs to (`None`: not a flow's section).
fn flow_of(sec: &Section) -> Option<usize> {
    match sec.path.first() {
        Some(Seg::Elem(k, i)) if k == "flows" => Some(*i),
        _ => None,
    }
}

/// Flows marked `background = true`.
fn background_flows(sections: &[Section]) -> Vec<usize> {
    sections
        .iter()
        .filter(|s| s.table.id == "flow")
        .filter(|s| {
            s.fields
                .iter()
                .any(|f| f.field.name == "background" && f.value.as_deref() == Some("true"))
        })
        .filter_map(flow_of)
        .collect()
}

/// Groups spots by value: one knob when they agree, one per spot otherwise.
fn grouped<'a>(spots: Vec<Spot<'a>>) -> Vec<Vec<Spot<'a>>> {
    if spots.is_empty() {
        return vec![];
    }
    if spots.iter().all(|s| s.value == spots[0].value) {
        vec![spots]
    } else {
        spots.into_iter().map(|s| vec![s]).collect()
    }
}

/// The knob's words; `split`: the places differ, so each knob names its own.
fn label(base: &str, group: &[Spot], split: bool) -> String {
    match group {
        [one] if split && !one.which.is_empty() => format!("{base} ({})", one.which),
        _ => base.to_string(),
    }
}

fn targets(group: &[Spot]) -> Vec<Target> {
    group
        .iter()
        .map(|s| Target {
            path: s.sec.path.clone(),
            field: s.fv.field,
        })
        .collect()
}

fn key_of(id: &str, group: &[Spot]) -> String {
    let places: Vec<String> = group.iter().map(|s| s.fv.dotted.clone()).collect();
    format!("{id}@{}", places.join("+"))
}

fn help_of(group: &[Spot]) -> String {
    let places: Vec<&str> = group.iter().map(|s| s.fv.dotted.as_str()).collect();
    format!("{} — writes {}", group[0].fv.field.help, places.join(", "))
}

/// A slider spanning at least `lo..hi` (widened to take `v`) in `kind`'s unit.
fn span(kind: Kind, lo: f64, hi: f64, v: Option<f64>, scale: Scale) -> Slider {
    let (mut lo, mut hi) = (lo, hi);
    if let Some(v) = v {
        if v > hi {
            hi = v;
        }
        if v > 0.0 && v < lo && scale == Scale::Log {
            lo = v;
        }
    }
    Slider {
        kind,
        lo,
        hi,
        scale,
    }
}

/// The strip's knobs for a scenario text (none when it is not TOML). A knob whose key the
/// scenario sweeps names the swept values instead of moving: the sweep sets it per point.
pub fn knobs(text: &str) -> Vec<Knob> {
    // Parsed once: this runs on every scenario change, in the page's main thread.
    let Ok(doc) = text.parse::<DocumentMut>() else {
        return vec![];
    };
    let mut out = unswept_knobs(&doc);
    let Some(sweep) = doc.get("sweep").and_then(Item::as_table_like) else {
        return out;
    };
    for k in &mut out {
        for t in &k.targets {
            // Sweep keys are dotted with element indexes as parts: `flows.0.quic.cc`.
            let key = format!("{}.{}", panel::dotted(&t.path), t.field.name)
                .replace('[', ".")
                .replace(']', "");
            if let Some(values) = sweep.get(&key) {
                let values = values
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|v| {
                                v.as_str().map_or_else(
                                    || v.to_string().trim().to_string(),
                                    str::to_string,
                                )
                            })
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_default();
                k.shown = "swept".into();
                k.control =
                    Control::Fixed(format!("swept over {values}: edit [sweep] in the TOML"));
                break;
            }
        }
    }
    out
}

fn unswept_knobs(doc: &DocumentMut) -> Vec<Knob> {
    let sections = panel::sections_of(doc);
    let mut out = Vec::new();
    let b = bottleneck(doc);
    let link_knob =
        |id: &str, base: &str, g: &LinkGroup, shown: String, help: &str, control: Control| {
            let field: &'static Field = schema::LINK.field(id);
            let places: Vec<String> = g
                .targets
                .iter()
                .map(|p| format!("{}.{id}", panel::dotted(p)))
                .collect();
            Knob {
                key: format!("{id}@{}", places.join("+")),
                label: if g.which.is_empty() {
                    base.to_string()
                } else {
                    format!("{base} ({})", g.which)
                },
                shown,
                help: format!("{help} — writes {}", places.join(", ")),
                control,
                targets: g
                    .targets
                    .iter()
                    .map(|p| Target {
                        path: p.clone(),
                        field,
                    })
                    .collect(),
            }
        };

    // Packet loss: the bottleneck's Bernoulli probability per direction.
    for g in link_groups(doc, &b, "loss", &loss_text) {
        let (shown, control) = match g.value.strip_prefix("model:") {
            Some(m) => (
                model_words(m),
                Control::Fixed(format!(
                    "a {} loss model: edit it in the panel below",
                    model_words(m)
                )),
            ),
            None => {
                let p: f64 = g.value.parse().unwrap_or(0.0);
                let s = span(Kind::Probability, 0.0, 0.3, Some(p), Scale::Square);
                (
                    format!("{} %", short(p * 100.0)),
                    Control::Slider {
                        slider: s,
                        pos: s.position(&g.value).unwrap_or(0),
                        spell: Spell::Loss,
                    },
                )
            }
        };
        out.push(link_knob(
            "loss",
            "Packet loss",
            &g,
            shown,
            "each packet is lost independently with this probability (a Bernoulli loss model)",
            control,
        ));
    }
    // One-way delay, bottleneck rate, queue.
    for g in link_groups(doc, &b, "delay", &plain) {
        let v = crate::slider::numeric(Kind::Time, &g.value);
        let s = span(Kind::Time, 500e3, 500e6, v, Scale::Log);
        let control = Control::Slider {
            slider: s,
            pos: s.position(&g.value).unwrap_or(0),
            spell: Spell::Plain,
        };
        let shown = v.map(time_words).unwrap_or_else(|| g.value.clone());
        let help = schema::LINK.field("delay").help;
        out.push(link_knob(
            "delay",
            "One-way delay",
            &g,
            shown,
            help,
            control,
        ));
    }
    for g in link_groups(doc, &b, "rate", &plain) {
        let v = crate::slider::numeric(Kind::Rate, &g.value);
        let (shown, control) = match v {
            Some(v) => {
                let s = span(Kind::Rate, 100e3, 1e9, Some(v), Scale::Log);
                (
                    rate_words(v),
                    Control::Slider {
                        slider: s,
                        pos: s.position(&g.value).unwrap_or(0),
                        spell: Spell::Plain,
                    },
                )
            }
            // A trace-driven rate (`{ trace = "..." }`).
            None => (
                "from a trace file".to_string(),
                Control::Fixed("a trace-driven rate: edit it in the panel below".into()),
            ),
        };
        out.push(link_knob(
            "rate",
            "Bottleneck rate",
            &g,
            shown,
            "the link's serialisation rate",
            control,
        ));
    }
    let queue_text = |i: Option<&Item>| match i {
        None => "1BDP".to_string(),
        i => plain(i),
    };
    for g in link_groups(doc, &b, "queue", &queue_text) {
        let bdp = g
            .value
            .strip_suffix("BDP")
            .and_then(|x| x.parse::<f64>().ok());
        let s = span(Kind::Number, 0.1, 10.0, bdp, Scale::Log);
        let shown = match bdp {
            Some(x) => format!("{} × BDP", short(x)),
            None => match crate::slider::numeric(Kind::Size, &g.value) {
                Some(b) => size_words(b),
                None => g.value.clone(),
            },
        };
        let control = Control::Slider {
            slider: s,
            pos: bdp
                .and_then(|x| s.position(&format!("{x}")))
                .unwrap_or(STEPS / 2),
            spell: Spell::Bdp,
        };
        out.push(link_knob(
            "queue",
            "Queue (drop-tail)",
            &g,
            shown,
            "the drop-tail limit, here in multiples of the link's bandwidth-delay product",
            control,
        ));
    }

    // The flows' keys: foreground flows only.
    let background = background_flows(&sections);
    let flow_spots = |name: &str, table: Option<&str>| -> Vec<Spot> {
        sections
            .iter()
            .filter(|s| flow_of(s).is_some_and(|i| !background.contains(&i)))
            .filter(|s| table.is_none_or(|t| s.table.id.starts_with(t)))
            .flat_map(|sec| {
                sec.fields
                    .iter()
                    .filter(move |f| f.field.name == name)
                    .map(move |fv| Spot {
                        sec,
                        fv,
                        value: current(&fv.value, fv.field).unwrap_or_default(),
                        which: format!("flow {}", flow_of(sec).unwrap_or(0)),
                    })
            })
            .collect()
    };
    let mut choice = |id: &str, base: &str, spots: Vec<Spot>| {
        let groups = grouped(spots);
        let split = groups.len() > 1;
        for g in groups {
            let f = g[0].fv.field;
            let written = g[0].fv.value.clone().unwrap_or_default();
            let default = match f.default {
                DefaultValue::Value(v) => v.trim_matches('"').to_string(),
                DefaultValue::Unset(t) => t.to_string(),
                DefaultValue::Required => String::new(),
            };
            let mut choices = vec![(
                String::new(),
                format!("default ({})", choice_words(id, &default)),
            )];
            choices.extend(
                f.choices
                    .iter()
                    .map(|c| (c.to_string(), choice_words(id, c))),
            );
            let shown = if written.is_empty() {
                choice_words(id, &default)
            } else {
                choice_words(id, &written)
            };
            out.push(Knob {
                key: key_of(id, &g),
                label: label(base, &g, split),
                shown,
                help: help_of(&g),
                control: Control::Choice {
                    choices,
                    current: written,
                },
                targets: targets(&g),
            });
        }
    };
    choice("cc", "Congestion control", flow_spots("cc", Some("flow.")));
    choice(
        "allowance",
        "Flow-control allowance",
        flow_spots("allowance", Some("flow.")),
    );
    // Migration matters where the path changes: a topology with handovers.
    let handovers = doc
        .get("topology")
        .and_then(|t| t.get("handovers"))
        .is_some();
    if handovers {
        let mig: Vec<Spot> = flow_spots("migration", Some("flow.quic"));
        let policy: &'static Field = match schema::table("flow.quic.migration") {
            Some(t) => t.field("policy"),
            None => return out,
        };
        let mut spots = Vec::new();
        for s in &mig {
            let written =
                s.fv.value
                    .as_deref()
                    .and_then(|v| format!("m = {v}").parse::<DocumentMut>().ok())
                    .and_then(|d| {
                        d.get("m")
                            .and_then(|m| m.get("policy"))
                            .and_then(|p| p.as_str().map(str::to_string))
                    })
                    .unwrap_or_default();
            spots.push((s, written));
        }
        let same = spots.iter().all(|s| s.1 == spots[0].1);
        let groups: Vec<Vec<_>> = if same && !spots.is_empty() {
            vec![spots]
        } else {
            spots.into_iter().map(|s| vec![s]).collect()
        };
        for g in groups {
            let mut choices = vec![(String::new(), "none (keep the old address)".to_string())];
            choices.extend(
                policy
                    .choices
                    .iter()
                    .map(|c| (c.to_string(), c.replace('_', " "))),
            );
            let written = g[0].1.clone();
            let places: Vec<String> = g
                .iter()
                .map(|s| format!("{}.policy", s.0.fv.dotted))
                .collect();
            let label = match g.as_slice() {
                [one] if mig.len() > 1 => format!("Migration at a handover ({})", one.0.which),
                _ => "Migration at a handover".to_string(),
            };
            out.push(Knob {
                key: format!("migration@{}", places.join("+")),
                label,
                shown: if written.is_empty() {
                    "none".into()
                } else {
                    written.replace('_', " ")
                },
                help: format!("{} — writes {}", policy.help, places.join(", ")),
                control: Control::Choice {
                    choices,
                    current: written,
                },
                targets: g
                    .iter()
                    .map(|s| {
                        let mut path = s.0.sec.path.clone();
                        path.push(Seg::Key("migration".into()));
                        Target {
                            path,
                            field: policy,
                        }
                    })
                    .collect(),
            });
        }
    }

    // Transfer size and streams.
    for (id, base) in [("bytes", "Transfer size"), ("streams", "Streams")] {
        let spots: Vec<Spot> = flow_spots(id, None)
            .into_iter()
            .filter(|s| {
                s.fv.field.kind
                    == if id == "bytes" {
                        Kind::Size
                    } else {
                        Kind::Integer
                    }
            })
            .collect();
        let groups = grouped(spots);
        let split = groups.len() > 1;
        for g in groups {
            let (kind, lo, hi) = if id == "bytes" {
                (Kind::Size, 10e3, 100e6)
            } else {
                (Kind::Integer, 1.0, 100.0)
            };
            let v = crate::slider::numeric(kind, &g[0].value);
            let s = span(kind, lo, hi, v, Scale::Log);
            let shown = match (id, v) {
                ("bytes", Some(b)) => size_words(b),
                (_, Some(n)) => format!("{n}"),
                (_, None) => g[0].fv.value.clone().unwrap_or_else(|| "default".into()),
            };
            out.push(Knob {
                key: key_of(id, &g),
                label: label(base, &g, split),
                shown,
                help: help_of(&g),
                control: Control::Slider {
                    slider: s,
                    pos: v.and_then(|_| s.position(&g[0].value)).unwrap_or(0),
                    spell: Spell::Plain,
                },
                targets: targets(&g),
            });
        }
    }
    out
}

/// The text a slider knob writes at position `pos`.
pub fn slider_text(slider: &Slider, spell: Spell, pos: u32) -> String {
    match spell {
        Spell::Plain => slider.value(pos),
        Spell::Loss => {
            let v = slider.value(pos);
            if v.contains('.') {
                v
            } else {
                format!("{v}.0")
            }
        }
        Spell::Bdp => format!("\"{}BDP\"", slider.value(pos)),
    }
}

/// `text` with the knob set to `value` (a slider's [`slider_text`] or a choice's value)
/// at every place it writes.
pub fn set(text: &str, knob: &Knob, value: &str) -> Result<String, String> {
    let mut t = text.to_string();
    for target in &knob.targets {
        t = panel::set_value(&t, &target.path, target.field, value)?;
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::scenario::parse_str;

    fn example(name: &str) -> String {
        std::fs::read_to_string(format!(
            "{}/../scenarios/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    fn find<'a>(ks: &'a [Knob], label: &str) -> &'a Knob {
        ks.iter().find(|k| k.label == label).unwrap_or_else(|| {
            panic!(
                "no knob {label}: {:?}",
                ks.iter().map(|k| &k.label).collect::<Vec<_>>()
            )
        })
    }

    fn slide(text: &str, k: &Knob, pos: u32) -> String {
        let Control::Slider { slider, spell, .. } = &k.control else {
            panic!("{} is not a slider", k.label)
        };
        set(text, k, &slider_text(slider, *spell, pos)).unwrap()
    }

    #[test]
    fn quic_bulk_has_the_teachers_knobs_in_words() {
        let t = example("examples/quic-bulk.toml");
        let ks = knobs(&t);
        let labels: Vec<&str> = ks.iter().map(|k| k.label.as_str()).collect();
        for want in [
            "Packet loss",
            "One-way delay",
            "Bottleneck rate",
            "Queue (drop-tail)",
            "Congestion control",
            "Flow-control allowance",
            "Transfer size",
            "Streams",
        ] {
            assert!(labels.contains(&want), "{want} missing from {labels:?}");
        }
        assert_eq!(find(&ks, "Bottleneck rate").shown, "20 Mbit/s");
        assert_eq!(find(&ks, "One-way delay").shown, "20 ms");
        assert_eq!(find(&ks, "Packet loss").shown, "0 %");
        assert_eq!(find(&ks, "Queue (drop-tail)").shown, "1 × BDP");
        assert_eq!(find(&ks, "Transfer size").shown, "10 MB");
        assert_eq!(find(&ks, "Streams").shown, "4");
        assert_eq!(find(&ks, "Congestion control").shown, "CUBIC");
        // No handover: no migration knob.
        assert!(!labels.iter().any(|l| l.starts_with("Migration")));
    }

    #[test]
    fn every_knob_writes_a_scenario_that_validates_and_changes_the_value() {
        let t = example("examples/quic-bulk.toml");
        for k in knobs(&t) {
            match &k.control {
                Control::Slider { slider, spell, pos } => {
                    for p in [0, STEPS / 3, STEPS] {
                        if p == *pos {
                            continue;
                        }
                        let new = set(&t, &k, &slider_text(slider, *spell, p)).unwrap();
                        parse_str(&new).unwrap_or_else(|e| panic!("{} at {p}: {e}", k.label));
                        let again = knobs(&new);
                        let k2 = find(&again, &k.label);
                        assert_ne!(k2.shown, k.shown, "{} at {p}", k.label);
                    }
                }
                Control::Choice { choices, current } => {
                    for (v, _) in choices {
                        if v == current {
                            continue;
                        }
                        let new = set(&t, &k, v).unwrap();
                        parse_str(&new).unwrap_or_else(|e| panic!("{} = {v}: {e}", k.label));
                    }
                }
                Control::Fixed(_) => panic!("{} fixed on a Bernoulli link", k.label),
            }
        }
    }

    #[test]
    fn loss_slider_writes_a_bernoulli_probability() {
        let t = example("examples/quic-bulk.toml");
        let k = find(&knobs(&t), "Packet loss").clone();
        let new = slide(&t, &k, STEPS / 4);
        let cfg = parse_str(&new).unwrap();
        let again = knobs(&new);
        assert_eq!(find(&again, "Packet loss").shown, "1.9 %", "{new}");
        // Back to zero writes a float the parser takes.
        let zero = slide(&new, find(&again, "Packet loss"), 0);
        parse_str(&zero).unwrap();
        assert_eq!(find(&knobs(&zero), "Packet loss").shown, "0 %");
        drop(cfg);
    }

    #[test]
    fn forward_and_reverse_links_differing_get_one_knob_each() {
        // paper 000's ACK-loss scenario: loss on one direction only (`forward` overrides `link`).
        let t = example("paper000/good-ackloss.toml");
        let ks = knobs(&t);
        let losses: Vec<&Knob> = ks
            .iter()
            .filter(|k| k.label.starts_with("Packet loss"))
            .collect();
        assert_eq!(
            losses.len(),
            2,
            "{:?}",
            losses.iter().map(|k| &k.label).collect::<Vec<_>>()
        );
        assert!(losses
            .iter()
            .any(|k| k.label == "Packet loss (client → server)"));
        assert!(losses
            .iter()
            .any(|k| k.label == "Packet loss (server → client)"));
        // Equal rates on both: one knob writing both directions.
        // Equal rates both ways (set on `link`): one knob, written where they are set.
        let rate = find(&ks, "Bottleneck rate");
        assert_eq!(rate.targets.len(), 1);
        let new = slide(&t, rate, 10);
        parse_str(&new).unwrap();
        assert_eq!(
            find(&knobs(&new), "Bottleneck rate").shown,
            "160 kbit/s",
            "{new}"
        );
        // Moving the data direction's loss writes its own table and leaves the other.
        let rev = find(&ks, "Packet loss (server → client)");
        let new = slide(&t, rev, STEPS / 2);
        parse_str(&new).unwrap();
        let again = knobs(&new);
        assert_eq!(find(&again, "Packet loss (client → server)").shown, "1 %");
        assert_eq!(
            find(&again, "Packet loss (server → client)").shown,
            "7.5 %",
            "{new}"
        );
        // Setting both to one value joins them into one knob.
        let fwd = find(&again, "Packet loss (client → server)");
        let joined = slide(&new, fwd, STEPS / 2);
        let k = find(&knobs(&joined), "Packet loss").clone();
        assert_eq!(k.targets.len(), 3, "{joined}");
    }

    #[test]
    fn a_dumbbell_turns_its_bottleneck_not_its_access_links() {
        let t = example("examples/dumbbell-cbr.toml");
        let ks = knobs(&t);
        let rate = find(&ks, "Bottleneck rate");
        assert_eq!(rate.shown, "20 Mbit/s");
        assert!(
            rate.key.contains("topology.bottleneck.rate"),
            "{}",
            rate.key
        );
    }

    #[test]
    fn a_burst_loss_model_is_named_and_left_to_the_panel() {
        let t = example("examples/ge-link.toml");
        let ks = knobs(&t);
        let loss: Vec<&Knob> = ks
            .iter()
            .filter(|k| k.label.starts_with("Packet loss"))
            .collect();
        assert!(
            loss.iter()
                .any(|k| matches!(k.control, Control::Fixed(_)) && k.shown.contains("Gilbert")),
            "{loss:?}"
        );
    }

    #[test]
    fn a_handover_scenario_has_the_migration_policy() {
        let t = r#"
            [topology]
            kind = "two_hosts"
            link = { rate = "50Mbps", delay = "10ms" }
            [[topology.handovers]]
            at = "1s"
            address = "ip"
            link = { rate = "10Mbps", delay = "40ms" }
            [[flows]]
            transport = "quic"
            quic = { migration = { policy = "reset", throughput_window = "100ms" } }
            workload = { kind = "bulk", bytes = "2MB" }
        "#;
        let ks = knobs(t);
        let m = find(&ks, "Migration at a handover");
        assert_eq!(m.shown, "reset");
        let new = set(t, m, "rtt_ratio").unwrap();
        parse_str(&new).unwrap();
        assert_eq!(
            find(&knobs(&new), "Migration at a handover").shown,
            "rtt ratio"
        );
        // The table's other key is kept.
        assert!(new.contains("throughput_window"), "{new}");
    }

    #[test]
    fn a_swept_key_names_its_values_instead_of_moving() {
        let t = example("examples/sweep-loss-delay.toml");
        let ks = knobs(&t);
        let loss = find(&ks, "Packet loss");
        assert_eq!(loss.shown, "swept");
        assert!(
            matches!(&loss.control, Control::Fixed(w) if w.contains("0.0, 0.01, 0.05")),
            "{loss:?}"
        );
        assert!(matches!(
            find(&ks, "One-way delay").control,
            Control::Fixed(_)
        ));
        assert!(matches!(
            find(&ks, "Bottleneck rate").control,
            Control::Slider { .. }
        ));
        let t = example("paper004/handover-5g-campus.toml");
        assert_eq!(find(&knobs(&t), "Migration at a handover").shown, "swept");
    }

    #[test]
    fn controller_choice_applies_to_tcp_and_names_the_controllers() {
        let t = example("examples/tcp-bulk.toml");
        let ks = knobs(&t);
        let cc = find(&ks, "Congestion control");
        let Control::Choice { choices, .. } = &cc.control else {
            panic!()
        };
        assert!(choices.iter().any(|c| c.1 == "CUBIC"), "{choices:?}");
        let new = set(&t, cc, "cubic").unwrap();
        parse_str(&new).unwrap();
        assert_eq!(find(&knobs(&new), "Congestion control").shown, "CUBIC");
    }
}

//! The parameter panel's model, generated from the scenario format's field descriptors
//! ([`sim_core::scenario::schema`]): which tables a scenario text has (top level, `[sim]`,
//! the topology and its links with their loss models, every flow with its transport and
//! workload), each with the descriptors of its keys and the values as written, and the
//! edit that rewrites one key in the TOML text (comments and layout kept, by
//! `toml_edit`).
//!
//! Nothing here names a key of a table: the keys, kinds, defaults, ranges and help all
//! come from the descriptors. What is written here is only how tables nest (a topology's
//! table-valued keys are links, a link's `loss` is a loss model, a flow's `kind` or
//! `transport` and `workload` select their tables), so a new key, loss model, flow kind or
//! workload appears in the panel without a change here.

use sim_core::scenario::schema::{self, Field, Kind, Table};
use toml_edit::{DocumentMut, InlineTable, Item, TableLike, Value};

/// One step of a path in the document: a key, or the `i`-th element of an array of
/// tables under a key (`flows[0]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    /// A key of a table.
    Key(String),
    /// Element `.1` of the array of tables at key `.0`.
    Elem(String, usize),
}

/// The dotted spelling of a path, as validation errors write it: `flows[0].workload`.
pub fn dotted(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        if !s.is_empty() {
            s.push('.');
        }
        match seg {
            Seg::Key(k) => s.push_str(k),
            Seg::Elem(k, i) => s.push_str(&format!("{k}[{i}]")),
        }
    }
    s
}

/// One key of a section: its descriptor and its value as written.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldView {
    /// The key's descriptor.
    pub field: &'static Field,
    /// The value as written (strings without quotes, other values as inline TOML);
    /// `None` when the key is not written (the default applies).
    pub value: Option<String>,
    /// The full dotted name (`topology.link.rate`), the name errors use.
    pub dotted: String,
}

/// One table of the document with the keys the panel edits.
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    /// Heading: the table's place in the document and its descriptor's name.
    pub title: String,
    /// Where the table is (created on the first edit when missing).
    pub path: Vec<Seg>,
    /// The descriptor table.
    pub table: &'static Table,
    /// Whether the panel shows it opened (the long QUIC table starts closed).
    pub open: bool,
    /// The editable keys, in the descriptor's order.
    pub fields: Vec<FieldView>,
}

/// Whether the panel edits a key of this kind (arrays of tables stay in the editor).
fn editable(f: &Field) -> bool {
    f.kind != Kind::Tables
}

fn get<'a>(t: &'a dyn TableLike, seg: &Seg) -> Option<&'a dyn TableLike> {
    match seg {
        Seg::Key(k) => t.get(k)?.as_table_like(),
        Seg::Elem(k, i) => match t.get(k)? {
            Item::ArrayOfTables(a) => a.get(*i).map(|t| t as &dyn TableLike),
            Item::Value(Value::Array(a)) => {
                a.get(*i)?.as_inline_table().map(|t| t as &dyn TableLike)
            }
            _ => None,
        },
    }
}

fn lookup<'a>(doc: &'a DocumentMut, path: &[Seg]) -> Option<&'a dyn TableLike> {
    let mut t: &dyn TableLike = doc.as_table();
    for seg in path {
        t = get(t, seg)?;
    }
    Some(t)
}

/// A value as the panel shows it.
fn shown(item: &Item) -> Option<String> {
    match item {
        Item::Value(v) => Some(match v.as_str() {
            Some(s) => s.to_string(),
            None => v.clone().decorated("", "").to_string(),
        }),
        Item::Table(t) => {
            // A `[a.b]` table shown as its inline spelling.
            let mut inline = t.clone().into_inline_table();
            inline.fmt();
            Some(inline.to_string().trim().to_string())
        }
        _ => None,
    }
}

fn section(
    doc: &DocumentMut,
    title: String,
    path: Vec<Seg>,
    table: &'static Table,
    open: bool,
    skip: &[&str],
) -> Section {
    let t = lookup(doc, &path);
    let base = dotted(&path);
    let fields = table
        .fields
        .iter()
        .filter(|f| editable(f) && !skip.contains(&f.name))
        .map(|f| FieldView {
            field: f,
            value: t.and_then(|t| t.get(f.name)).and_then(shown),
            dotted: if base.is_empty() {
                f.name.to_string()
            } else {
                format!("{base}.{}", f.name)
            },
        })
        .collect();
    Section {
        title,
        path,
        table,
        open,
        fields,
    }
}

fn str_at(doc: &DocumentMut, path: &[Seg], key: &str) -> Option<String> {
    lookup(doc, path)?.get(key)?.as_str().map(str::to_string)
}

fn key(k: &str) -> Seg {
    Seg::Key(k.to_string())
}

/// The sections of a scenario text; `Err` with toml's message when it is not TOML.
pub fn sections(text: &str) -> Result<Vec<Section>, String> {
    let doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.to_string())?;
    Ok(sections_of(&doc))
}

/// The sections of a parsed scenario ([`sections`]).
pub fn sections_of(doc: &DocumentMut) -> Vec<Section> {
    let mut out = Vec::new();
    // Tables that have their own section are not edited as a raw value in their parent.
    let top_skip: Vec<&str> = vec!["sim", "topology", "output", "sweep"];
    out.push(section(
        doc,
        "Scenario".into(),
        vec![],
        &schema::TOP,
        true,
        &top_skip,
    ));
    out.push(section(
        doc,
        "[sim]".into(),
        vec![key("sim")],
        &schema::SIM,
        false,
        &[],
    ));

    // The topology and its links.
    let topo_kind = str_at(doc, &[], "topology")
        .or_else(|| str_at(doc, &[key("topology")], "kind"))
        .unwrap_or_else(|| "two_hosts".into());
    if let Some(topo) = schema::table(&format!("topology.{topo_kind}")) {
        let topo_path = vec![key("topology")];
        let written = lookup(doc, &topo_path);
        let links: Vec<&'static Field> = topo
            .fields
            .iter()
            .filter(|f| f.kind == Kind::Table)
            .collect();
        let mut shown_links: Vec<&'static Field> = links
            .iter()
            .copied()
            .filter(|f| written.is_some_and(|t| t.contains_key(f.name)))
            .collect();
        if shown_links.is_empty() {
            shown_links.extend(links.first().copied());
        }
        let skip: Vec<&str> = shown_links.iter().map(|f| f.name).collect();
        out.push(section(
            doc,
            "[topology]".into(),
            topo_path.clone(),
            topo,
            true,
            &skip,
        ));
        for l in shown_links {
            let mut p = topo_path.clone();
            p.push(key(l.name));
            out.push(section(
                doc,
                format!("Link topology.{}", l.name),
                p.clone(),
                &schema::LINK,
                true,
                &["loss"],
            ));
            p.push(key("loss"));
            out.push(loss_section(doc, p));
        }
    }

    // The flows.
    let n = lookup(doc, &[])
        .and_then(|t| t.get("flows"))
        .map(|i| match i {
            Item::ArrayOfTables(a) => a.len(),
            Item::Value(Value::Array(a)) => a.len(),
            _ => 0,
        })
        .unwrap_or(0);
    for i in 0..n {
        let fp = vec![Seg::Elem("flows".into(), i)];
        let name = format!("flows[{i}]");
        if let Some(transport) = str_at(doc, &fp, "transport") {
            out.push(section(
                doc,
                format!("Flow {name}"),
                fp.clone(),
                &schema::TRANSPORT_FLOW,
                true,
                &["workload", transport.as_str()],
            ));
            // The keys every flow has (`pair`, `background`, `copies`, ...), but `kind`:
            // a flow written with `transport` has none.
            out.push(section(
                doc,
                format!("Flow {name}: {}", schema::FLOW.what),
                fp.clone(),
                &schema::FLOW,
                true,
                &["kind"],
            ));
            let wp = {
                let mut p = fp.clone();
                p.push(key("workload"));
                p
            };
            let wkind = str_at(doc, &wp, "kind").unwrap_or_else(|| "bulk".into());
            let workload = schema::workload(&wkind);
            // The transport's keys, flat in the flow or in a table named after it; the
            // workload's keys belong to the workload table.
            if let Some(tt) = schema::table(&format!("flow.{transport}")) {
                let in_table = lookup(doc, &fp).is_some_and(|t| t.contains_key(&transport));
                let mut tp = fp.clone();
                if in_table {
                    tp.push(key(&transport));
                }
                let skip: Vec<&str> = workload
                    .map(|w| w.fields.iter().map(|f| f.name).collect())
                    .unwrap_or_default();
                out.push(section(
                    doc,
                    format!("Transport {name} ({transport})"),
                    tp,
                    tt,
                    false,
                    &skip,
                ));
            }
            if let Some(w) = workload {
                out.push(section(
                    doc,
                    format!("Workload {name}.workload"),
                    wp,
                    w,
                    true,
                    &[],
                ));
            }
        } else {
            out.push(section(
                doc,
                format!("Flow {name}"),
                fp.clone(),
                &schema::FLOW,
                true,
                &[],
            ));
            let kind = str_at(doc, &fp, "kind").unwrap_or_default();
            for t in flow_tables(&kind) {
                let open = t.fields.len() <= 12;
                out.push(section(
                    doc,
                    format!("{name}: {}", t.path),
                    fp.clone(),
                    t,
                    open,
                    &[],
                ));
            }
        }
    }
    out
}

/// The tables of a flow written with `kind = ...`: the one named after the kind
/// (`flow.cbr`), and for the QUIC kinds the QUIC keys (`flow.quic`).
fn flow_tables(kind: &str) -> Vec<&'static Table> {
    let mut v: Vec<&'static Table> = Vec::new();
    let ids = [
        format!("flow.{kind}"),
        format!("flow.{}", kind.trim_end_matches("_bulk")),
        format!("flow.{}", kind.split('_').next().unwrap_or(kind)),
    ];
    for id in ids {
        if let Some(t) = schema::table(&id) {
            if !v.iter().any(|x| x.id == t.id) {
                v.push(t);
            }
        }
    }
    v
}

/// `v` without its surrounding white space and comments (the default layout where it is
/// inserted).
fn undecorated(v: &Value) -> Value {
    let mut v = v.clone();
    v.decor_mut().clear();
    v
}

/// The probability a Bernoulli loss shorthand writes (`loss = 0.02`, `loss = "2%"`), as
/// text, if `item` is one.
fn loss_shorthand(item: &Item) -> Option<String> {
    match item {
        Item::Value(Value::Float(f)) => Some(f.value().to_string()),
        Item::Value(Value::Integer(i)) => Some(i.value().to_string()),
        Item::Value(Value::String(s)) if s.value().trim_end().ends_with('%') => {
            Some(s.value().clone())
        }
        _ => None,
    }
}

/// A link's loss model: written as a string (`"none"`), a table with `model`, or the
/// Bernoulli shorthand (`loss = 0.02` / `"2%"`), shown as model `bernoulli` with its `p`.
fn loss_section(doc: &DocumentMut, path: Vec<Seg>) -> Section {
    let parent = lookup(doc, &path[..path.len() - 1]);
    let item = parent.and_then(|t| t.get("loss"));
    let shorthand = item.and_then(loss_shorthand);
    let model = item
        .and_then(|i| match i {
            _ if shorthand.is_some() => Some("bernoulli".to_string()),
            Item::Value(Value::String(s)) => Some(s.value().clone()),
            other => other
                .as_table_like()?
                .get("model")?
                .as_str()
                .map(str::to_string),
        })
        .unwrap_or_else(|| "none".into());
    let table =
        schema::table(&format!("loss.{model}")).unwrap_or(sim_core::config::loss::LOSS_TABLES[0]);
    let mut sec = section(
        doc,
        format!("Loss model {}", dotted(&path)),
        path,
        table,
        true,
        &[],
    );
    if let Some(p) = shorthand {
        for f in sec.fields.iter_mut() {
            match f.field.name {
                "p" => f.value = Some(p.clone()),
                "model" => f.value = Some("bernoulli".into()),
                _ => {}
            }
        }
    }
    sec
}

/// The loss model names, for the model chooser.
pub fn loss_models() -> &'static [&'static str] {
    schema::LOSS_MODELS
}

/// The model a loss section's table describes (`loss.gilbert_elliott` -> `gilbert_elliott`).
pub fn loss_model_of(section: &Section) -> Option<&'static str> {
    section.table.id.strip_prefix("loss.")
}

/// A typed TOML value for text typed into the field: numbers stay numbers where the
/// kind takes them, anything else becomes a string, so a wrong value reaches the
/// scenario parser and gets its field-named error.
fn typed(field: &Field, input: &str) -> Value {
    let s = input.trim();
    let int = s.parse::<i64>().ok();
    match field.kind {
        Kind::Bool => match s {
            "true" => Value::from(true),
            "false" => Value::from(false),
            _ => Value::from(s),
        },
        Kind::Integer | Kind::Rate | Kind::Time | Kind::Size => match int {
            Some(i) => Value::from(i),
            None => Value::from(s),
        },
        Kind::Number | Kind::Probability => match (int, s.parse::<f64>()) {
            (Some(i), _) => Value::from(i),
            (None, Ok(f)) if f.is_finite() => Value::from(f),
            _ => Value::from(s),
        },
        Kind::Enum | Kind::String => Value::from(s),
        Kind::Table | Kind::Tables => {
            // Inline TOML (`{ bytes = "64KB" }`, `"1BDP"`), or a bare string.
            format!("v = {s}")
                .parse::<DocumentMut>()
                .ok()
                .and_then(|d| d.get("v").and_then(|i| i.as_value().cloned()))
                .unwrap_or_else(|| Value::from(s))
        }
    }
}

/// The table at `path`, created (and a non-table value there replaced) when `create`.
fn descend<'a>(t: &'a mut dyn TableLike, seg: &Seg, top: bool) -> Option<&'a mut dyn TableLike> {
    match seg {
        Seg::Key(k) => {
            let is_table = t.get(k).is_some_and(|i| i.is_table_like());
            if !is_table {
                let fresh = if top {
                    let mut tb = toml_edit::Table::new();
                    tb.set_implicit(false);
                    Item::Table(tb)
                } else {
                    Item::Value(Value::InlineTable(InlineTable::new()))
                };
                // A loss model written as a string becomes `{ model = "..." }`, the
                // Bernoulli shorthand (`0.02`, `"2%"`) `{ model = "bernoulli", p = ... }`.
                let old = t.get(k).cloned();
                let shorthand = match (&old, k.as_str()) {
                    (Some(Item::Value(v)), "loss") => old
                        .as_ref()
                        .and_then(loss_shorthand)
                        .map(|_| undecorated(v)),
                    _ => None,
                };
                let model = match &shorthand {
                    Some(_) => Some("bernoulli".to_string()),
                    None => old.as_ref().and_then(|i| i.as_str()).map(str::to_string),
                };
                t.insert(k, fresh);
                if let Some(m) = model {
                    t.get_mut(k)?
                        .as_table_like_mut()?
                        .insert("model", Item::Value(Value::from(m)));
                }
                if let Some(p) = shorthand {
                    t.get_mut(k)?
                        .as_table_like_mut()?
                        .insert("p", Item::Value(p));
                }
            }
            t.get_mut(k)?.as_table_like_mut()
        }
        Seg::Elem(k, i) => match t.get_mut(k)? {
            Item::ArrayOfTables(a) => a.get_mut(*i).map(|t| t as &mut dyn TableLike),
            Item::Value(Value::Array(a)) => a
                .get_mut(*i)?
                .as_inline_table_mut()
                .map(|t| t as &mut dyn TableLike),
            _ => None,
        },
    }
}

/// Rewrites key `field` of the table at `path` to the typed `input` (an empty input
/// removes the key: its default applies); the rest of the text is kept as written.
pub fn set_value(text: &str, path: &[Seg], field: &Field, input: &str) -> Result<String, String> {
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.to_string())?;
    let mut t: &mut dyn TableLike = doc.as_table_mut();
    for (n, seg) in path.iter().enumerate() {
        t = descend(t, seg, n == 0)
            .ok_or_else(|| format!("{} is not a table", dotted(&path[..=n])))?;
    }
    if input.trim().is_empty() {
        t.remove(field.name);
    } else {
        let v = typed(field, input);
        match t.get_mut(field.name) {
            // Keep the comment after the value.
            Some(Item::Value(old)) => {
                let decor = old.decor().clone();
                *old = v;
                *old.decor_mut() = decor;
            }
            _ => {
                t.insert(field.name, Item::Value(v));
            }
        }
    }
    Ok(doc.to_string())
}

/// Switches the loss model at `path` (a link's `loss`): `none` writes `"none"`, another
/// model a table `{ model = "..." }` keeping the keys that model also has.
pub fn set_loss_model(text: &str, path: &[Seg], model: &str) -> Result<String, String> {
    let (last, parent) = path.split_last().ok_or("empty path")?;
    let Seg::Key(loss_key) = last else {
        return Err("a loss model is a key".into());
    };
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.to_string())?;
    let mut t: &mut dyn TableLike = doc.as_table_mut();
    for (n, seg) in parent.iter().enumerate() {
        t = descend(t, seg, n == 0)
            .ok_or_else(|| format!("{} is not a table", dotted(&parent[..=n])))?;
    }
    let keep = schema::table(&format!("loss.{model}"));
    let mut inline = InlineTable::new();
    inline.insert("model", Value::from(model));
    // The Bernoulli shorthand keeps its probability as `p` when a model with a `p` is chosen.
    if let Some(Item::Value(v)) = t.get(loss_key).filter(|i| loss_shorthand(i).is_some()) {
        if keep.is_some_and(|k| k.has("p")) {
            inline.insert("p", undecorated(v));
        }
    }
    if let (Some(keep), Some(old)) = (keep, t.get(loss_key).and_then(|i| i.as_table_like())) {
        for (k, v) in old.iter() {
            if k != "model" && keep.has(k) {
                if let Some(v) = v.as_value() {
                    inline.insert(k, v.clone());
                }
            }
        }
    }
    let new = if model == "none" {
        Value::from("none")
    } else {
        Value::InlineTable(inline)
    };
    t.insert(loss_key, Item::Value(new));
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gallery;

    /// The Bernoulli shorthand (`loss = "1%"`, `loss = 0.02`) shows as model bernoulli
    /// with its `p`; editing `p` or choosing bernoulli writes a table the parser takes.
    #[test]
    fn a_loss_shorthand_is_a_bernoulli_model_with_its_p() {
        let e = gallery::find("paper000/good-ackloss.toml").unwrap();
        let secs = sections(e.toml).unwrap();
        let fwd = find(&secs, "Loss model topology.forward.loss");
        assert_eq!(loss_model_of(fwd), Some("bernoulli"));
        let p = fwd.fields.iter().find(|f| f.field.name == "p").unwrap();
        assert_eq!(p.value.as_deref(), Some("1%"));
        let edited = set_value(e.toml, &fwd.path, p.field, "0.05").unwrap();
        let cfg = sim_core::scenario::parse_str(&edited).unwrap();
        assert!(
            edited.contains("model = \"bernoulli\", p = 0.05"),
            "{edited}"
        );
        drop(cfg);
        let chosen = set_loss_model(e.toml, &fwd.path, "bernoulli").unwrap();
        assert!(
            chosen.contains("loss = { model = \"bernoulli\", p = \"1%\" }"),
            "{chosen}"
        );
        sim_core::scenario::parse_str(&chosen).unwrap();
        let text = e
            .toml
            .replace("forward = { loss = \"1%\" }", "forward = { loss = 0.02 }");
        let secs = sections(&text).unwrap();
        let fwd = find(&secs, "Loss model topology.forward.loss");
        let p = fwd.fields.iter().find(|f| f.field.name == "p").unwrap();
        assert_eq!(p.value.as_deref(), Some("0.02"));
    }

    fn find<'a>(s: &'a [Section], title: &str) -> &'a Section {
        s.iter()
            .find(|x| x.title == title)
            .unwrap_or_else(|| panic!("no section {title}"))
    }

    #[test]
    fn sections_come_from_the_descriptors() {
        let s = sections(gallery::SANDBOX).unwrap();
        let link = find(&s, "Link topology.link");
        // Every editable key of the link table, none written by hand here.
        let want: Vec<&str> = schema::LINK
            .fields
            .iter()
            .filter(|f| f.kind != Kind::Tables && f.name != "loss")
            .map(|f| f.name)
            .collect();
        let got: Vec<&str> = link.fields.iter().map(|f| f.field.name).collect();
        assert_eq!(got, want);
        let rate = link.fields.iter().find(|f| f.field.name == "rate").unwrap();
        assert_eq!(rate.value.as_deref(), Some("10Mbps"));
        assert_eq!(rate.dotted, "topology.link.rate");
        let loss = find(&s, "Loss model topology.link.loss");
        assert_eq!(loss_model_of(loss), Some("none"));
        // The sandbox is written `transport = "quic"` + `workload = { kind = "bulk" }`: its
        // QUIC keys and its transfer size and streams are all in the panel (issue 29).
        assert!(s
            .iter()
            .any(|x| x.title == "Transport flows[0] (quic)" && x.table.id == "flow.quic"));
        let w = find(&s, "Workload flows[0].workload");
        let bytes = w.fields.iter().find(|f| f.field.name == "bytes").unwrap();
        assert_eq!(bytes.value.as_deref(), Some("1MB"));
        assert_eq!(bytes.dotted, "flows[0].workload.bytes");
        assert!(w.fields.iter().any(|f| f.field.name == "streams"));
    }

    #[test]
    fn edits_rewrite_the_toml_and_keep_the_rest() {
        let text = "# keep me\n".to_string() + gallery::SANDBOX;
        let s = sections(&text).unwrap();
        let link = find(&s, "Link topology.link");
        let rate = link.fields.iter().find(|f| f.field.name == "rate").unwrap();
        let t2 = set_value(&text, &link.path, rate.field, "50Mbps").unwrap();
        assert!(t2.starts_with("# keep me\n"));
        let cfg = sim_core::scenario::parse_str(&t2).unwrap().base;
        let t3 = set_value(&t2, &link.path, rate.field, "-5").unwrap();
        let err = sim_core::scenario::parse_str(&t3).unwrap_err();
        assert!(err.field.contains("rate"), "{err}");
        assert_ne!(
            cfg,
            sim_core::scenario::parse_str(gallery::SANDBOX)
                .unwrap()
                .base
        );
        // A new [sim] table is created on the first edit.
        let sim = find(&s, "[sim]");
        let tl = sim
            .fields
            .iter()
            .find(|f| f.field.name == "time_limit")
            .unwrap();
        let t4 = set_value(&text, &sim.path, tl.field, "3s").unwrap();
        let c4 = sim_core::scenario::parse_str(&t4).unwrap().base;
        assert_eq!(c4.sim.time_limit, sim_core::time::SimDuration::from_secs(3));
    }

    #[test]
    fn loss_model_switch_and_its_fields() {
        let s = sections(gallery::SANDBOX).unwrap();
        let loss = find(&s, "Loss model topology.link.loss");
        let t = set_loss_model(gallery::SANDBOX, &loss.path, "gilbert_elliott").unwrap();
        // Required p and r missing: the parser names the field.
        let err = sim_core::scenario::parse_str(&t).unwrap_err();
        assert!(err.field.contains("loss"), "{err}");
        let s2 = sections(&t).unwrap();
        let ge = find(&s2, "Loss model topology.link.loss");
        assert_eq!(ge.table.id, "loss.gilbert_elliott");
        let p = ge.fields.iter().find(|f| f.field.name == "p").unwrap();
        let r = ge.fields.iter().find(|f| f.field.name == "r").unwrap();
        let t = set_value(&t, &ge.path, p.field, "0.01").unwrap();
        let t = set_value(&t, &ge.path, r.field, "0.3").unwrap();
        sim_core::scenario::parse_str(&t).unwrap();
        let back = set_loss_model(&t, &ge.path, "none").unwrap();
        sim_core::scenario::parse_str(&back).unwrap();
    }

    /// A transport × workload flow shows the keys every flow has (`pair`, `background`,
    /// `copies`, ...) from the flow descriptor, without `kind`; an edit there reaches the
    /// parser, and a bad value gets its field-named error.
    #[test]
    fn a_transport_flow_shows_the_common_flow_keys() {
        let text = r#"
[topology]
kind = "two_hosts"
link = { rate = "10Mbps", delay = "20ms" }

[[flows]]
transport = "tcp"
workload = { kind = "bulk", bytes = "100KB" }
"#;
        let s = sections(text).unwrap();
        let common = s
            .iter()
            .find(|x| x.table.id == "flow" && x.path == [Seg::Elem("flows".into(), 0)])
            .expect("the common flow keys");
        let want: Vec<&str> = schema::FLOW
            .fields
            .iter()
            .map(|f| f.name)
            .filter(|&n| n != "kind")
            .collect();
        let got: Vec<&str> = common.fields.iter().map(|f| f.field.name).collect();
        assert_eq!(got, want);
        let copies = common
            .fields
            .iter()
            .find(|f| f.field.name == "copies")
            .unwrap();
        assert_eq!(copies.dotted, "flows[0].copies");
        let t = set_value(text, &common.path, copies.field, "2").unwrap();
        let sc = sim_core::scenario::parse_str(&t).unwrap();
        assert_eq!(sc.base.flows.len(), 2);
        let bad = set_value(text, &common.path, copies.field, "0").unwrap();
        let err = sim_core::scenario::parse_str(&bad).unwrap_err();
        assert_eq!(err.field, "flows[0].copies", "{err}");
    }

    #[test]
    fn every_gallery_scenario_has_a_panel() {
        for e in gallery::entries() {
            let s = sections(e.toml).unwrap();
            assert!(
                s.iter()
                    .any(|x| x.title.starts_with("Link") || x.title == "[topology]"),
                "{}",
                e.id()
            );
        }
    }
}

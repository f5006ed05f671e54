//! Paired comparisons (`transports = ["tcp", "quic"]`): a document-level pre-pass that
//! expands a scenario into one document per transport, before any typed parsing.
//!
//! A flow that says `transports = [...]` instead of `transport = ...` is run once per listed
//! transport, with the same workload, links and seed (`docs/paired.md`). Variant `v` of the
//! document is the document with, in every such flow, `transports` replaced by
//! `transport = <v-th name>` and the tables of the other listed transports removed; each
//! transport's own keys therefore sit in its table (`[flows.quic]`, `[flows.tcp]`, per side
//! `[flows.quic.client]`) and apply to its variant only. The variants are then built and
//! validated like any scenario, so nothing here knows a transport: a new transport needs
//! only its name in [`schema::TRANSPORTS`](crate::validate::schema::TRANSPORTS).
//!
//! Several flows may be paired; they must list the same transports in the same order
//! (variant `v` runs every paired flow over the `v`-th transport).

use super::raw::render;
use crate::validate::schema::{FLOW, PAIRED, TRANSPORT_FLOW};
use crate::validate::{join, ConfigError};
use toml::{Table, Value};

/// The key a paired flow lists its transports under.
pub(super) const KEY: &str = "transports";

/// One variant of a paired document: its name (the transport) and the document.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Variant {
    pub name: String,
    pub doc: Table,
}

/// A paired document expanded: the variants (first = baseline) and the flows that were
/// paired (for error attribution).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Expansion {
    pub variants: Vec<Variant>,
    /// Indices of the flows that say `transports`.
    pub flows: Vec<usize>,
}

fn one_of(choices: &[&str]) -> String {
    let list: Vec<String> = choices.iter().map(|c| format!("\"{c}\"")).collect();
    format!("one of {}", list.join(", "))
}

/// Expands `doc` (without `[sweep]`) into its variants; `None` when no flow says
/// `transports`. `known` are the transport names a flow may list (the descriptors'
/// [`TRANSPORTS`](crate::validate::schema::TRANSPORTS); a parameter so that the expansion
/// is tested for transports the typed layer does not have yet).
pub(super) fn expand(doc: &Table, known: &[&str]) -> Result<Option<Expansion>, ConfigError> {
    let Some(Value::Array(flows)) = doc.get("flows") else {
        return Ok(None);
    };
    let allowed = PAIRED.field(KEY).allowed;
    // (flow index, its list)
    let mut paired: Vec<(usize, Vec<String>)> = Vec::new();
    for (i, f) in flows.iter().enumerate() {
        let Value::Table(t) = f else { continue };
        let Some(list) = t.get(KEY) else { continue };
        let path = format!("flows[{i}]");
        let kpath = join(&path, KEY);
        if let Some(v) = t.get("transport") {
            return Err(ConfigError::new(
                join(&path, "transport"),
                render(v),
                "either `transport` (one transport) or `transports` (a paired comparison), not both",
            ));
        }
        let Value::Array(items) = list else {
            return Err(ConfigError::new(kpath, render(list), allowed));
        };
        let mut names: Vec<String> = Vec::with_capacity(items.len());
        for (j, item) in items.iter().enumerate() {
            let ipath = format!("{kpath}[{j}]");
            let Some(name) = item.as_str().filter(|n| known.contains(n)) else {
                return Err(ConfigError::new(
                    ipath,
                    render(item),
                    format!("a transport: {}", one_of(known)),
                ));
            };
            if let Some(k) = names.iter().position(|n| n == name) {
                return Err(ConfigError::new(
                    ipath,
                    name,
                    format!("each transport once (\"{name}\" is also {kpath}[{k}])"),
                ));
            }
            names.push(name.to_string());
        }
        if names.len() < 2 {
            return Err(ConfigError::new(
                kpath,
                render(list),
                format!("{allowed} (a comparison needs at least two)"),
            ));
        }
        if let Some((first, theirs)) = paired.first() {
            if *theirs != names {
                return Err(ConfigError::new(
                    kpath,
                    render(list),
                    format!(
                        "the same transports in the same order as flows[{first}].transports ({}): variant v runs every paired flow over the v-th transport",
                        render(&Value::Array(
                            theirs.iter().map(|n| Value::String(n.clone())).collect()
                        ))
                    ),
                ));
            }
        }
        // Only flow keys, the workload and the tables of listed transports: a transport's
        // keys go in its table, so that they apply to its variant only.
        for (k, v) in t {
            let flow_key = FLOW.has(k) && k != "kind";
            let transport_table = known.contains(&k.as_str());
            let shared = TRANSPORT_FLOW.has(k) && !transport_table && k != "transport";
            if k == KEY || flow_key || shared {
                continue;
            }
            if transport_table {
                if !names.iter().any(|n| n == k) {
                    return Err(ConfigError::new(
                        join(&path, k),
                        render(v),
                        format!(
                            "a table for a transport the flow compares ({}); add \"{k}\" to `transports` or remove the table",
                            names.join(", ")
                        ),
                    ));
                }
                continue;
            }
            return Err(ConfigError::new(
                join(&path, k),
                render(v),
                format!(
                    "a key of a paired flow (`pair`, `background`, `workload`, one table per listed transport); a transport's key goes in its table, e.g. flows[{i}].{}.{k}",
                    names[0]
                ),
            ));
        }
        paired.push((i, names));
    }
    let Some((_, names)) = paired.first().cloned() else {
        return Ok(None);
    };
    let variants = names
        .iter()
        .map(|name| {
            let mut d = doc.clone();
            if let Some(Value::Array(fs)) = d.get_mut("flows") {
                for (i, _) in &paired {
                    if let Some(Value::Table(t)) = fs.get_mut(*i) {
                        t.remove(KEY);
                        for other in names.iter().filter(|n| *n != name) {
                            t.remove(other);
                        }
                        t.insert("transport".into(), Value::String(name.clone()));
                    }
                }
            }
            Variant {
                name: name.clone(),
                doc: d,
            }
        })
        .collect();
    Ok(Some(Expansion {
        variants,
        flows: paired.iter().map(|(i, _)| *i).collect(),
    }))
}

/// An error from building variant `v` named after the variant: the field is prefixed with
/// `flows[i].transports[v] -> ` (the first paired flow), unless it already lies in that
/// variant's own transport table.
pub(super) fn attribute(e: ConfigError, exp: &Expansion, v: usize) -> ConfigError {
    let name = &exp.variants[v].name;
    let own = exp.flows.iter().any(|i| {
        let table = format!("flows[{i}].{name}");
        e.field == table
            || e.field.starts_with(&format!("{table}."))
            || e.field.starts_with(&format!("{table}["))
    });
    if own {
        return e;
    }
    let first = exp.flows[0];
    ConfigError::new(
        format!("flows[{first}].{KEY}[{v}] -> {}", e.field),
        e.value,
        e.allowed,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: &[&str] = &["quic", "tcp", "sctp"];

    fn doc(flows: &str) -> Table {
        format!(
            "[topology]\nkind = \"two_hosts\"\nlink = {{ rate = \"10Mbps\", delay = \"10ms\" }}\n{flows}"
        )
        .parse()
        .unwrap()
    }

    fn err(flows: &str) -> ConfigError {
        expand(&doc(flows), KNOWN).expect_err("an error")
    }

    const PAIRED_FLOW: &str = r#"
[[flows]]
transports = ["tcp", "sctp", "quic"]
workload = { kind = "bulk", bytes = "1MB" }
[flows.tcp]
mss = 1460
[flows.quic]
cc = "new_reno"
[flows.quic.client]
stream_window = "64KB"
"#;

    #[test]
    fn one_document_per_transport_with_only_its_table() {
        let e = expand(&doc(PAIRED_FLOW), KNOWN).unwrap().unwrap();
        assert_eq!(e.flows, [0]);
        let names: Vec<&str> = e.variants.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["tcp", "sctp", "quic"]);
        let flow = |v: usize| e.variants[v].doc["flows"].as_array().unwrap()[0].clone();
        let tcp = flow(0);
        assert_eq!(tcp["transport"].as_str(), Some("tcp"));
        assert_eq!(tcp["tcp"]["mss"].as_integer(), Some(1460));
        assert!(tcp.get("quic").is_none() && tcp.get(KEY).is_none());
        let sctp = flow(1);
        assert_eq!(sctp["transport"].as_str(), Some("sctp"));
        assert!(sctp.get("quic").is_none() && sctp.get("tcp").is_none());
        let quic = flow(2);
        assert_eq!(quic["transport"].as_str(), Some("quic"));
        assert_eq!(quic["quic"]["cc"].as_str(), Some("new_reno"));
        assert_eq!(
            quic["quic"]["client"]["stream_window"].as_str(),
            Some("64KB")
        );
        assert!(quic.get("tcp").is_none());
        // The workload and the rest of the document are the same in every variant.
        for v in &e.variants {
            let f = v.doc["flows"].as_array().unwrap()[0].clone();
            assert_eq!(f["workload"], tcp["workload"]);
            assert_eq!(v.doc["topology"], doc(PAIRED_FLOW)["topology"]);
        }
        // Without `transports`: no expansion.
        let plain = "[[flows]]\ntransport = \"quic\"\nworkload = { kind = \"bulk\" }\n";
        assert_eq!(expand(&doc(plain), KNOWN).unwrap(), None);
        assert_eq!(expand(&doc(""), KNOWN).unwrap(), None);
    }

    #[test]
    fn several_paired_flows_share_the_variant() {
        let two = r#"
[[flows]]
kind = "cbr"
rate = "1Mbps"
[[flows]]
transports = ["tcp", "quic"]
workload = { kind = "bulk" }
[[flows]]
transports = ["tcp", "quic"]
workload = { kind = "bulk" }
background = true
"#;
        let e = expand(&doc(two), KNOWN).unwrap().unwrap();
        assert_eq!(e.flows, [1, 2]);
        for (v, want) in e.variants.iter().zip(["tcp", "quic"]) {
            let fs = v.doc["flows"].as_array().unwrap();
            assert!(
                fs[0].get("transport").is_none(),
                "the CBR flow is untouched"
            );
            assert_eq!(fs[1]["transport"].as_str(), Some(want));
            assert_eq!(fs[2]["transport"].as_str(), Some(want));
        }
        let e = err(&two
            .replacen("[\"tcp\", \"quic\"]", "[\"quic\", \"tcp\"]", 2)
            .replacen("[\"quic\", \"tcp\"]", "[\"tcp\", \"quic\"]", 1));
        assert_eq!(e.field, "flows[2].transports");
        assert!(e.allowed.contains("flows[1].transports"), "{}", e.allowed);
    }

    #[test]
    fn errors_name_the_field() {
        let w = "workload = { kind = \"bulk\" }";
        let cases: Vec<(String, &str, &str)> = vec![
            (
                format!("[[flows]]\ntransports = [\"tcp\", \"udp\"]\n{w}"),
                "flows[0].transports[1]",
                "one of \"quic\", \"tcp\", \"sctp\"",
            ),
            (
                format!("[[flows]]\ntransports = [\"tcp\", \"quic\", \"tcp\"]\n{w}"),
                "flows[0].transports[2]",
                "each transport once",
            ),
            (
                format!("[[flows]]\ntransports = [\"quic\"]\n{w}"),
                "flows[0].transports",
                "at least two",
            ),
            (
                format!("[[flows]]\ntransports = []\n{w}"),
                "flows[0].transports",
                "at least two",
            ),
            (
                format!("[[flows]]\ntransports = \"quic\"\n{w}"),
                "flows[0].transports",
                "an array",
            ),
            (
                format!("[[flows]]\ntransports = [\"tcp\", 3]\n{w}"),
                "flows[0].transports[1]",
                "a transport",
            ),
            (
                format!("[[flows]]\ntransport = \"quic\"\ntransports = [\"tcp\", \"quic\"]\n{w}"),
                "flows[0].transport",
                "not both",
            ),
            (
                format!("[[flows]]\ntransports = [\"tcp\", \"quic\"]\n{w}\n[flows.sctp]\nx = 1"),
                "flows[0].sctp",
                "a table for a transport the flow compares (tcp, quic)",
            ),
            (
                format!("[[flows]]\ntransports = [\"tcp\", \"quic\"]\ncc = \"cubic\"\n{w}"),
                "flows[0].cc",
                "flows[0].tcp.cc",
            ),
            (
                format!("[[flows]]\nkind = \"quic_bulk\"\ntransports = [\"tcp\", \"quic\"]\n{w}"),
                "flows[0].kind",
                "a key of a paired flow",
            ),
        ];
        for (text, field, allowed) in cases {
            let e = err(&text);
            assert_eq!(e.field, field, "{text}");
            assert!(e.allowed.contains(allowed), "{text}: {}", e.allowed);
        }
        // Flow keys and the workload are accepted.
        let ok = format!(
            "[[flows]]\ntransports = [\"sctp\", \"tcp\"]\npair = 0\nbackground = false\n{w}"
        );
        assert!(expand(&doc(&ok), KNOWN).unwrap().is_some());
    }

    #[test]
    fn parse_str_expands_before_typed_parsing() {
        // Through the scenario parser: the transports it knows are the descriptors'.
        let text = |list: &str| {
            format!(
                "[topology]\nkind = \"two_hosts\"\nlink = {{ rate = \"10Mbps\", delay = \"10ms\" }}\n[[flows]]\ntransports = {list}\nworkload = {{ kind = \"bulk\" }}\n"
            )
        };
        let e = crate::scenario::parse_str(&text("[\"quic\"]")).unwrap_err();
        assert_eq!(e.field, "flows[0].transports");
        let e = crate::scenario::parse_str(&text("[\"quic\", \"udp\"]")).unwrap_err();
        assert_eq!(e.field, "flows[0].transports[1]");
        assert!(e.allowed.contains("\"quic\""), "{}", e.allowed);
        // A plain scenario is not paired.
        let s = crate::scenario::parse_str(
            &text("[\"quic\"]").replace("transports = [\"quic\"]", "transport = \"quic\""),
        )
        .unwrap();
        assert!(!s.is_paired());
        assert_eq!(
            (s.variant_count(), s.variant_of(0), s.grid_point(0)),
            (1, 0, 0)
        );
    }

    #[test]
    fn variant_errors_are_attributed() {
        let e = expand(&doc(PAIRED_FLOW), KNOWN).unwrap().unwrap();
        let own = ConfigError::new("flows[0].quic.cc", "x", "y");
        assert_eq!(attribute(own.clone(), &e, 2), own);
        let shared = ConfigError::new("flows[0].workload.kind", "x", "y");
        assert_eq!(
            attribute(shared, &e, 1).field,
            "flows[0].transports[1] -> flows[0].workload.kind"
        );
        // Another variant's table is not "own".
        assert_eq!(
            attribute(own, &e, 0).field,
            "flows[0].transports[0] -> flows[0].quic.cc"
        );
    }
}

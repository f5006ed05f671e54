//! The layering of sim-core, checked from its sources (`docs/architecture.md`, "Layers").
//!
//! Every `crate::<module>` / `super::<module>` path in a source file of sim-core (comments
//! and test modules left out) is an arrow from the file's top-level module to `<module>`.
//! Two rules:
//! 1. a module only imports modules of a lower layer (the [`LAYERS`] table; the table is
//!    ordered, so the import graph has no cycle);
//! 2. no shared module (packet, trace, metrics, config, endpoint, driver, workloads, runner,
//!    link, network, qlog, wire, the ground layer) names a protocol module (`quic`, `tcp`, `sctp`), even
//!    where the ranks would allow it (the runner sits above the transports but builds
//!    them only through `flows`).
//!
//! A new module needs a row in [`LAYERS`]; a new arrow that goes up fails here.

use std::collections::BTreeMap;
use std::path::Path;

/// Top-level modules of sim-core by layer, bottom up. A module may import modules of a
/// strictly lower layer and the other modules of its own group only where
/// [`SAME_LAYER`] says so.
const LAYERS: &[&[&str]] = &[
    // 0 ground: integer time and units (one unit: `Display` of a duration is written by
    // `units`, which builds on `time`), the digest hash.
    &["time", "units", "hash"],
    // 0b summary statistics of repeated runs (statrs): pure functions on numbers.
    &["stats"],
    // 0c the key descriptors of the scenario format (`keys`: names, kinds, defaults,
    // ranges), which every extension point declares next to its code.
    &["keys"],
    // 1 ground: seeded random streams, the scheduler.
    &["rng", "engine"],
    // 2 what travels, per protocol; congestion controllers (pure algorithms on time).
    &["wire", "cc"],
    // 2b the toolkit every transport shares (RTT estimator, range sets, dense maps,
    // receive-window allowances): protocol-neutral, builds on `cc`.
    &["transport"],
    // 3 shared run types, bottom: datagrams, configuration data; the registry of users'
    // controllers and allowances (above `cc` and `transport`, whose halves it holds).
    &["packet", "config", "registry"],
    // 4 run results; config validation; the "where the time went" split (`breakdown`).
    &["metrics", "validate", "breakdown"],
    // 5 protocol-neutral trace events.
    &["trace"],
    // 6 the endpoint interface (and `driver`, the engine-facing half of a stream
    // transport that the generic workload endpoints drive), the qlog writer, links.
    &["endpoint", "driver", "qlog", "link"],
    // 7 topologies; apps without a transport.
    &["network", "apps"],
    // 8 transports.
    &["quic", "tcp", "sctp"],
    // 8b workloads (bulk, connection sequences), written once against the stream-transport
    // interface (`transport::stream`, `driver`): above the transports, naming none.
    &["workloads"],
    // 9 the flow factory: flow config -> endpoints.
    &["flows"],
    // 10 the run loop, and the same run advanced in steps.
    &["runner"],
    &["sim"],
    // 11 the scenario format.
    &["scenario"],
    // 12 a scenario as jobs (sweep point x run), seeds, ids, result order.
    &["study"],
    // 12b the property-testing kit (feature `testing`): strategies, invariants, replay.
    &["testing"],
    // 13 the crate root re-exports.
    &["lib"],
];

/// Arrows allowed inside one layer (`(from, to)`).
const SAME_LAYER: &[(&str, &str)] = &[("time", "units"), ("units", "time")];

/// Protocol modules: no shared module may name them.
const PROTOCOLS: &[&str] = &["quic", "tcp", "sctp"];

/// Shared modules: never import a protocol module.
const SHARED: &[&str] = &[
    "time",
    "units",
    "hash",
    "stats",
    "keys",
    "rng",
    "engine",
    "wire",
    "cc",
    "transport",
    "packet",
    "config",
    "registry",
    "metrics",
    "trace",
    "endpoint",
    "driver",
    "workloads",
    "qlog",
    "link",
    "network",
    "runner",
    "validate",
    "breakdown",
];

/// Allowed exceptions: `(file, line)` pairs, each with its reason. None today; nothing may
/// be added here without a reason.
const EXCEPTIONS: &[(&str, &str)] = &[];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// Removes `//` comments (doc comments included) and string literals' contents are kept
/// (paths do not appear in them in practice).
fn strip_comments(src: &str) -> String {
    src.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Drops inline `#[cfg(test)] mod tests { ... }` blocks (test code may use anything),
/// matching braces so that code after such a block is still checked.
fn strip_test_modules(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut rest = src;
    while let Some(i) = rest.find("#[cfg(test)]") {
        let after = rest[i + "#[cfg(test)]".len()..].trim_start();
        let Some(body) = after.strip_prefix("mod tests {") else {
            out.push_str(&rest[..i + 1]);
            rest = &rest[i + 1..];
            continue;
        };
        out.push_str(&rest[..i]);
        let mut depth = 1usize;
        let mut end = body.len();
        for (k, c) in body.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &body[end..];
    }
    out.push_str(rest);
    out
}

/// The modules a path prefix at `rest` (just after `crate::` or `super::`) names: one
/// identifier, or every first identifier of a `{a::x, b}` group.
fn named_modules(rest: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    if let Some(group) = rest.strip_prefix('{') {
        let mut out = Vec::new();
        let mut depth = 0usize;
        let mut start = true;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => start = true,
                c if c.is_whitespace() => {}
                _ => {
                    if start && depth == 0 {
                        out.push(ident(&group[i..]));
                    }
                    start = false;
                }
            }
        }
        out
    } else {
        vec![ident(rest)]
    }
}

/// One arrow: source file, the module it is in, the module it names, and the line.
#[derive(Debug)]
struct Arrow {
    file: String,
    from: String,
    to: String,
    line: String,
}

/// The arrows of one source file, `rel` being its path under `src/`.
fn arrows(rel: &str, src: &str) -> Vec<Arrow> {
    let parts: Vec<&str> = rel.trim_end_matches(".rs").split('/').collect();
    let from = parts[0].to_string();
    // `super::` in a top-level file (or a `mod.rs`) names a top-level module; deeper, it
    // stays inside the same top-level module.
    let top_level = parts.len() == 1 || (parts.len() == 2 && parts[1] == "mod");
    let code = strip_test_modules(&strip_comments(src));
    let mut out = Vec::new();
    for line in code.lines() {
        for (kw, is_super) in [("crate::", false), ("super::", true)] {
            let mut at = 0;
            while let Some(i) = line[at..].find(kw) {
                let pos = at + i;
                at = pos + kw.len();
                let before = line[..pos].chars().last();
                if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
                    continue; // `$crate::` or part of a longer path such as `x::super::`
                }
                if is_super && !top_level {
                    continue;
                }
                for to in named_modules(&line[at..]) {
                    if !to.is_empty() && to != from && to.chars().next().unwrap().is_lowercase() {
                        out.push(Arrow {
                            file: rel.to_string(),
                            from: from.clone(),
                            to,
                            line: line.trim().to_string(),
                        });
                    }
                }
            }
        }
    }
    out
}

/// Every violation of the two rules in `sources` (`(path under src/, text)`).
fn violations(sources: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    let mut used = vec![false; EXCEPTIONS.len()];
    for (rel, src) in sources {
        for a in arrows(rel, src) {
            if let Some(k) = EXCEPTIONS
                .iter()
                .position(|(f, l)| *f == a.file && *l == a.line)
            {
                used[k] = true;
                continue;
            }
            let (Some(lf), Some(lt)) = (layer_of(&a.from), layer_of(&a.to)) else {
                if layer_of(&a.from).is_none() {
                    out.push(format!(
                        "{}: module `{}` has no row in LAYERS",
                        a.file, a.from
                    ));
                }
                // Items of the crate root (`crate::run`, `crate::Config`) are lowercase only
                // for functions; a lowercase unknown name is a module without a row.
                if layer_of(&a.to).is_none() && a.to != "run" {
                    out.push(format!(
                        "{}: `{}` names unknown module `{}`",
                        a.file, a.line, a.to
                    ));
                }
                continue;
            };
            if SHARED.contains(&a.from.as_str()) && PROTOCOLS.contains(&a.to.as_str()) {
                out.push(format!(
                    "{}: shared module `{}` names protocol `{}`: `{}`",
                    a.file, a.from, a.to, a.line
                ));
            } else if lt > lf
                || (lt == lf && !SAME_LAYER.contains(&(a.from.as_str(), a.to.as_str())))
            {
                out.push(format!(
                    "{}: `{}` (layer {lf}) imports `{}` (layer {lt}): `{}`",
                    a.file, a.from, a.to, a.line
                ));
            }
        }
    }
    for (k, (f, l)) in EXCEPTIONS.iter().enumerate() {
        if !used[k] && sources.iter().any(|(p, _)| p.as_str() == *f) {
            out.push(format!(
                "{f}: exception `{l}` is no longer needed: remove it"
            ));
        }
    }
    out
}

/// The sources of sim-core (test-only files left out), sorted by path.
fn sim_core_sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sim-core/src");
    let mut files = BTreeMap::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read sim-core/src") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path
                    .strip_prefix(&root)
                    .expect("under src")
                    .to_string_lossy()
                    .replace('\\', "/");
                if rel.ends_with("tests.rs") {
                    continue; // `#[cfg(test)] mod tests;` files
                }
                files.insert(rel, std::fs::read_to_string(&path).expect("read source"));
            }
        }
    }
    files.into_iter().collect()
}

#[test]
fn sim_core_layers_hold() {
    let sources = sim_core_sources();
    assert!(sources.len() > 20, "found the sources");
    let v = violations(&sources);
    assert!(v.is_empty(), "layering violations:\n{}", v.join("\n"));
}

#[test]
fn the_check_catches_an_upward_import() {
    let mut sources = sim_core_sources();
    let trace = sources
        .iter_mut()
        .find(|(p, _)| p == "trace.rs")
        .expect("trace.rs");
    trace.1.push_str("\nuse crate::quic::QuicConfig;\n");
    let v = violations(&sources);
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(
        v[0].contains("shared module `trace` names protocol `quic`"),
        "{v:?}"
    );

    // An upward arrow between shared layers, and a grouped import, are caught too.
    let fake = vec![
        (
            "packet.rs".to_string(),
            "use crate::trace::TraceEvent;".to_string(),
        ),
        (
            "metrics.rs".to_string(),
            "use crate::{config::Config, runner::run};".to_string(),
        ),
        (
            "runner.rs".to_string(),
            "let e = crate::quic::QuicEndpoint::new();".to_string(),
        ),
    ];
    let v = violations(&fake);
    assert_eq!(v.len(), 3, "{v:?}");
}

//! The scenario gallery: every file under `scenarios/`, bundled at build time by
//! `build.rs` (a new file appears with no code change), grouped by folder, each with its
//! `description` as the one-liner; plus a blank sandbox. The trace files under
//! `scenarios/` are bundled too, so a trace-driven link runs in the page exactly as with
//! the CLI ([`parse`]).

mod bundled {
    include!(concat!(env!("OUT_DIR"), "/gallery.rs"));
}

/// One bundled scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Folder under `scenarios/` (`examples`, `validation`, `paper000`, ...).
    pub group: &'static str,
    /// File name (`quic-bulk.toml`).
    pub file: &'static str,
    /// The TOML text, as in the repository.
    pub toml: &'static str,
}

impl Entry {
    /// A stable id for links and selects: `examples/quic-bulk.toml`.
    pub fn id(&self) -> String {
        if self.group.is_empty() {
            self.file.to_string()
        } else {
            format!("{}/{}", self.group, self.file)
        }
    }

    /// The scenario's `description` (empty when it has none or does not parse).
    pub fn description(&self) -> String {
        top_string(self.toml, "description").unwrap_or_default()
    }

    /// The scenario's `name`, or the file name without `.toml`.
    pub fn name(&self) -> String {
        top_string(self.toml, "name")
            .unwrap_or_else(|| self.file.trim_end_matches(".toml").to_string())
    }
}

/// The text of a bundled trace file a scenario names (`rate = { trace = "..." }`). The CLI
/// reads the path relative to the scenario file; the page has no files, so the path is
/// read relative to `scenarios/`, leading `./` and `../` dropped (the bundled scenarios
/// write `"../traces/<name>.trace"`), and failing that by its file name alone.
pub fn trace_file(path: &str) -> Result<String, String> {
    let mut rel = path.trim().replace('\\', "/");
    while let Some(r) = rel.strip_prefix("../").or_else(|| rel.strip_prefix("./")) {
        rel = r.to_string();
    }
    let name = rel.rsplit('/').next().unwrap_or(&rel).to_string();
    bundled::TRACES
        .iter()
        .find(|(p, _)| *p == rel)
        .or_else(|| {
            bundled::TRACES
                .iter()
                .find(|(p, _)| p.rsplit('/').next() == Some(&name))
        })
        .map(|(_, text)| text.to_string())
        .ok_or_else(|| {
            let have: Vec<&str> = bundled::TRACES.iter().map(|(p, _)| *p).collect();
            format!(
                "the page has no trace file {path:?}; it bundles the traces under scenarios/: {}",
                have.join(", ")
            )
        })
}

/// Parses a scenario as the page runs it: [`sim_core::scenario::parse_str_with_traces`]
/// with the bundled trace files ([`trace_file`]).
pub fn parse(toml: &str) -> Result<sim_core::scenario::Scenario, sim_core::scenario::ConfigError> {
    sim_core::scenario::parse_str_with_traces(toml, &trace_file)
}

/// A top-level string key of a TOML document.
///
/// Top-level keys come before the first table header, so the text up to the first line
/// that starts with `[` is parsed first (the bundled scenarios keep their long `[paper]`
/// and topology tables below their name and description); when that prefix does not
/// parse on its own (the line was inside a multi-line value), the whole text is.
fn top_string(toml: &str, key: &str) -> Option<String> {
    let prefix = header_cut(toml).and_then(|n| toml[..n].parse::<toml_edit::DocumentMut>().ok());
    let doc = match prefix {
        Some(d) => d,
        None => toml.parse().ok()?,
    };
    doc.get(key)?.as_str().map(str::to_string)
}

/// The byte offset of the first line whose first non-blank character is `[`.
fn header_cut(toml: &str) -> Option<usize> {
    let mut at = 0;
    for line in toml.split_inclusive('\n') {
        if line.trim_start().starts_with('[') {
            return Some(at);
        }
        at += line.len();
    }
    None
}

/// A gallery folder: its name and each entry's (id, name, description).
pub type Folder = (&'static str, Vec<(String, String, String)>);

/// The gallery's folders with each entry's (id, name, description), read once per page:
/// the gallery re-renders on every selection, and reading the 93 entries' TOML each time
/// took some 80 ms of the main thread (issue 29 item 14).
pub fn listing() -> &'static [Folder] {
    static LISTING: std::sync::OnceLock<Vec<Folder>> = std::sync::OnceLock::new();
    LISTING.get_or_init(|| {
        groups()
            .into_iter()
            .map(|(g, es)| {
                let items = es
                    .iter()
                    .map(|e| (e.id(), e.name(), e.description()))
                    .collect();
                (g, items)
            })
            .collect()
    })
}

/// The sandbox: the smallest useful scenario, to start from scratch.
pub const SANDBOX: &str = r#"name = "sandbox"
description = "A blank sandbox: one QUIC bulk download over a clean link"
seed = 1

[topology]
kind = "two_hosts"
link = { rate = "10Mbps", delay = "20ms" }

[[flows]]
transport = "quic"
workload = { kind = "bulk", bytes = "1MB" }
"#;

/// Every bundled scenario, sorted by folder then file name.
pub fn entries() -> Vec<Entry> {
    bundled::FILES
        .iter()
        .map(|&(group, file, toml)| Entry { group, file, toml })
        .collect()
}

/// The entries grouped by folder, folders in sorted order.
pub fn groups() -> Vec<(&'static str, Vec<Entry>)> {
    let mut out: Vec<(&'static str, Vec<Entry>)> = Vec::new();
    for e in entries() {
        match out.iter_mut().find(|(g, _)| *g == e.group) {
            Some((_, v)) => v.push(e),
            None => out.push((e.group, vec![e])),
        }
    }
    out
}

/// The entry with [`Entry::id`] `id`.
pub fn find(id: &str) -> Option<Entry> {
    entries().into_iter().find(|e| e.id() == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The name and description read from the text before the first table header equal
    /// those of the whole document, for every bundled scenario; a cut inside a multi-line
    /// value falls back to the whole text.
    #[test]
    fn top_strings_from_the_prefix_equal_the_whole_documents() {
        let full = |t: &str, k: &str| {
            let d: toml_edit::DocumentMut = t.parse().ok()?;
            d.get(k)?.as_str().map(str::to_string)
        };
        for e in entries() {
            for k in ["name", "description"] {
                assert_eq!(top_string(e.toml, k), full(e.toml, k), "{} {k}", e.id());
            }
        }
        let tricky = "x = [\n  [1, 2],\n]\nname = \"late\"\n[t]\nname = \"table\"\n";
        assert_eq!(header_cut(tricky), Some(6));
        assert_eq!(top_string(tricky, "name").as_deref(), Some("late"));
        assert_eq!(top_string("[t]\nname = \"n\"\n", "name"), None);
        assert_eq!(top_string("name = \"n\"", "name").as_deref(), Some("n"));
        let l = listing();
        assert_eq!(
            l.iter().map(|(_, v)| v.len()).sum::<usize>(),
            entries().len()
        );
        let (_, items) = l.iter().find(|(g, _)| *g == "examples").unwrap();
        let qb = items
            .iter()
            .find(|(id, _, _)| id == "examples/quic-bulk.toml")
            .unwrap();
        assert!(qb.2.contains("QUIC bulk"), "{qb:?}");
    }

    /// Every file of `scenarios/` is bundled, and every bundled scenario parses.
    #[test]
    fn bundles_every_scenario_file() {
        fn count(dir: &std::path::Path) -> usize {
            std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .map(|p| {
                    if p.is_dir() {
                        count(&p)
                    } else {
                        usize::from(p.extension().is_some_and(|e| e == "toml"))
                    }
                })
                .sum()
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
        assert_eq!(entries().len(), count(&root));
        // Every entry parses as the page runs it, trace-driven links included.
        for e in entries() {
            if let Err(err) = parse(e.toml) {
                panic!("{}: {err}", e.id());
            }
        }
        assert!(groups().iter().any(|(g, _)| *g == "examples"));
        let qb = find("examples/quic-bulk.toml").unwrap();
        assert!(qb.description().contains("QUIC bulk"));
    }

    #[test]
    fn trace_files_resolve_as_the_cli_reads_them() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
        let file = std::fs::read_to_string(root.join("traces/4g-varying.trace")).unwrap();
        assert_eq!(trace_file("../traces/4g-varying.trace").unwrap(), file);
        assert_eq!(trace_file("traces/4g-varying.trace").unwrap(), file);
        assert_eq!(trace_file("4g-varying.trace").unwrap(), file);
        let e = trace_file("../traces/nope.trace").unwrap_err();
        assert!(
            e.contains("nope.trace") && e.contains("traces/train-outages.trace"),
            "{e}"
        );
        // The resolved link carries the same opportunities the CLI's file gives.
        let qt = find("examples/quic-trace-4g.toml").unwrap();
        let page = parse(qt.toml).unwrap().base;
        let cli = sim_core::scenario::parse_str_with_traces(qt.toml, &|p: &str| {
            std::fs::read_to_string(root.join("examples").join(p)).map_err(|e| e.to_string())
        })
        .unwrap()
        .base;
        assert_eq!(
            serde_json::to_string(&page).unwrap(),
            serde_json::to_string(&cli).unwrap()
        );
    }

    #[test]
    fn sandbox_parses() {
        sim_core::scenario::parse_str(SANDBOX).unwrap();
    }
}

//! The key tables of `docs/scenario-format.md`, generated from the descriptors of
//! [`mod@super::schema`].
//!
//! In the doc, each generated table sits between a marker naming the table(s) and an end
//! marker:
//!
//! ```text
//! <!-- keys: link -->
//! | Key | Kind | Default | Range | Meaning |
//! ...
//! <!-- /keys -->
//! ```
//!
//! [`render_doc`] rewrites everything between the markers and leaves the prose alone. A
//! test fails when the committed doc differs from the generated text; regenerate it with
//! `QUICSIM_BLESS=1 cargo test -p sim-core --lib scenario::docs`.

use super::schema::{table, DefaultValue, Field, Kind, Table, TABLES};

const BEGIN: &str = "<!-- keys: ";
const END: &str = "<!-- /keys -->";

/// A markdown table cell: `|` escaped.
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The range column: the enum's choices, `[0, 1]` for probabilities, else the bounds.
fn range(f: &Field) -> String {
    if !f.choices.is_empty() {
        let c: Vec<String> = f.choices.iter().map(|c| format!("`\"{c}\"`")).collect();
        return c.join(", ");
    }
    if f.kind == Kind::Probability {
        return "[0, 1]".into();
    }
    match (f.min, f.max) {
        (Some(lo), Some(hi)) => format!(
            "{}{}, {}{}",
            if lo.inclusive { "[" } else { "(" },
            lo.value,
            hi.value,
            if hi.inclusive { "]" } else { ")" }
        ),
        (Some(lo), None) => format!("{} {}", if lo.inclusive { "≥" } else { ">" }, lo.value),
        (None, Some(hi)) => format!("{} {}", if hi.inclusive { "≤" } else { "<" }, hi.value),
        (None, None) => String::new(),
    }
}

fn default(f: &Field) -> String {
    match f.default {
        DefaultValue::Value(v) => format!("`{v}`"),
        DefaultValue::Required => "**required**".into(),
        DefaultValue::Unset(t) => t.into(),
    }
}

/// The markdown key table of `t`.
pub fn key_table(t: &Table) -> String {
    let mut s = String::from("| Key | Kind | Default | Range | Meaning |\n|---|---|---|---|---|\n");
    for f in t.fields {
        s.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            f.name,
            f.kind.name(),
            cell(&default(f)),
            cell(&range(f)),
            cell(f.help)
        ));
    }
    s
}

/// Every key table of the format, each under a heading naming where it is written.
pub fn key_tables() -> String {
    let mut s = String::new();
    for t in TABLES {
        s.push_str(&format!("### {}\n\n{}\n", t.path, key_table(t)));
    }
    s
}

/// The tables a marker names: ids separated by commas, `prefix.*` standing for every table
/// whose id starts with `prefix.` in the order of [`TABLES`] (`loss.*`: every loss model,
/// so a new model needs no marker of its own).
fn marker_tables(ids: &str) -> Result<Vec<&'static Table>, String> {
    let mut tables = Vec::new();
    for id in ids.split(',').map(str::trim) {
        if let Some(prefix) = id.strip_suffix('*') {
            let before = tables.len();
            tables.extend(TABLES.iter().copied().filter(|t| t.id.starts_with(prefix)));
            if tables.len() == before {
                return Err(format!("no table matches {id:?}"));
            }
        } else {
            tables.push(table(id).ok_or_else(|| format!("no table with id {id:?}"))?);
        }
    }
    Ok(tables)
}

/// The generated text for a marker naming the tables `ids` ([`marker_tables`]): one
/// table, or several each under a bold line naming where it is written.
fn block(ids: &str) -> Result<String, String> {
    let tables = marker_tables(ids)?;
    let mut s = String::new();
    for t in &tables {
        if tables.len() > 1 {
            s.push_str(&format!("\n`{}`:\n\n", t.path));
        }
        s.push_str(&key_table(t));
    }
    Ok(s)
}

/// `doc` with the text between every `<!-- keys: id -->` and `<!-- /keys -->` replaced by
/// the generated table(s). Fails on an unknown id or an unclosed marker.
pub fn render_doc(doc: &str) -> Result<String, String> {
    let mut out = String::with_capacity(doc.len());
    let mut rest = doc;
    while let Some(i) = rest.find(BEGIN) {
        let after = &rest[i + BEGIN.len()..];
        let close = after.find("-->").ok_or("unclosed keys marker")?;
        let ids = after[..close].trim();
        let body_start = i + BEGIN.len() + close + 3;
        let end = rest[body_start..]
            .find(END)
            .ok_or_else(|| format!("no {END} after the marker for {ids}"))?;
        out.push_str(&rest[..body_start]);
        out.push('\n');
        out.push_str(&block(ids)?);
        out.push_str(END);
        rest = &rest[body_start + end + END.len()..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed `docs/scenario-format.md` is what [`render_doc`] generates.
    /// `QUICSIM_BLESS=1` rewrites it.
    #[test]
    fn scenario_format_doc_is_generated() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/scenario-format.md");
        let doc = std::fs::read_to_string(path).expect("docs/scenario-format.md");
        let generated = render_doc(&doc).expect("markers are well formed");
        if std::env::var_os("QUICSIM_BLESS").is_some() {
            std::fs::write(path, &generated).expect("write the doc");
            return;
        }
        assert!(
            doc == generated,
            "docs/scenario-format.md differs from the key tables generated from \
             sim-core/src/validate/schema.rs; regenerate it with \
             `QUICSIM_BLESS=1 cargo test -p sim-core --lib scenario::docs`"
        );
    }

    #[test]
    fn every_table_appears_in_the_doc() {
        let doc = include_str!("../../../docs/scenario-format.md");
        for t in TABLES {
            let listed = doc.match_indices(BEGIN).any(|(i, _)| {
                let ids = &doc[i + BEGIN.len()..];
                let ids = &ids[..ids.find("-->").unwrap_or(0)];
                marker_tables(ids).is_ok_and(|ts| ts.iter().any(|m| m.id == t.id))
            });
            assert!(listed, "table {} has no keys marker in the doc", t.id);
        }
    }

    #[test]
    fn markers_render() {
        let doc = "a\n<!-- keys: sim -->\nold\n<!-- /keys -->\nb";
        let r = render_doc(doc).unwrap();
        assert!(r.starts_with("a\n<!-- keys: sim -->\n| Key |"));
        assert!(r.contains("| `time_limit` | time | `\"600s\"` | > 0s |"));
        assert!(r.ends_with("<!-- /keys -->\nb"));
        assert_eq!(render_doc(&r).unwrap(), r);
        assert!(render_doc("<!-- keys: nope -->\n<!-- /keys -->").is_err());
        assert!(render_doc("<!-- keys: nope.* -->\n<!-- /keys -->").is_err());
        // `loss.*`: every loss model's table, in the list's order.
        let ids: Vec<&str> = marker_tables("loss.*")
            .unwrap()
            .iter()
            .map(|t| t.id)
            .collect();
        let models: Vec<String> = crate::config::loss::LOSS_MODEL_NAMES
            .iter()
            .map(|m| format!("loss.{m}"))
            .collect();
        assert_eq!(ids, models);
        assert!(key_tables().contains("### a link table"));
    }
}

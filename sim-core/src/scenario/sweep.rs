//! `[sweep]`: dotted paths into the raw document, each with a list of values; the grid is
//! their cartesian product.

use super::raw::render;
use crate::validate::ConfigError;
use toml::{Table, Value};

/// Most points a sweep grid may have.
pub(super) const MAX_POINTS: usize = 100_000;

/// One step of a sweep path.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Seg {
    Key(String),
    Index(usize),
}

/// One `[sweep]` entry.
#[derive(Clone, Debug)]
pub(super) struct SweepKey {
    /// The key as written, e.g. `flows.0.rate`.
    pub written: String,
    pub segs: Vec<Seg>,
    /// The path in the spelling of error fields, e.g. `flows[0].rate`.
    pub canonical: String,
    pub values: Vec<Value>,
    /// Each value as written in the file (strings without their quotes).
    pub shown: Vec<String>,
}

impl SweepKey {
    /// `sweep."<key>"`.
    pub fn field(&self) -> String {
        format!("sweep.\"{}\"", self.written)
    }
}

const KEY_ALLOWED: &str = "a dotted path into the scenario such as \"topology.link.delay\" or \"flows.0.rate\" (array elements by index)";

pub(super) fn parse_key(key: &str) -> Result<Vec<Seg>, ConfigError> {
    let err = |why: &str| {
        ConfigError::new(
            format!("sweep.\"{key}\""),
            key,
            format!("{KEY_ALLOWED}: {why}"),
        )
    };
    let mut segs = Vec::new();
    for part in key.split('.') {
        // `flows[0]` is accepted as well as `flows.0`.
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !name.is_empty() {
            if name.chars().all(|c| c.is_ascii_digit()) {
                segs.push(Seg::Index(
                    name.parse().map_err(|_| err("index too large"))?,
                ));
            } else {
                segs.push(Seg::Key(name.to_string()));
            }
        } else if rest.is_empty() {
            return Err(err("empty path segment"));
        }
        while !rest.is_empty() {
            let close = rest.find(']').ok_or_else(|| err("unclosed ["))?;
            let idx = rest[1..close]
                .parse()
                .map_err(|_| err("an index in [] must be an integer"))?;
            segs.push(Seg::Index(idx));
            rest = &rest[close + 1..];
            if !rest.is_empty() && !rest.starts_with('[') {
                return Err(err("unexpected text after ]"));
            }
        }
    }
    match segs.first() {
        Some(Seg::Key(k)) if k == "sweep" => Err(err("a sweep cannot change [sweep]")),
        // `[paper]` describes the reproduction, not a run: every point would run the same
        // simulation.
        Some(Seg::Key(k)) if k == "paper" => Err(err(
            "a sweep cannot change [paper] (it is not part of any run)",
        )),
        Some(Seg::Key(_)) => Ok(segs),
        _ => Err(err("the path must start with a key")),
    }
}

pub(super) fn canonical(segs: &[Seg]) -> String {
    let mut s = String::new();
    for seg in segs {
        match seg {
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// Where each key of `[sweep]` appears in `text` and the source text of each of its values.
fn positions(text: &str) -> Vec<(String, usize, Vec<String>)> {
    let mut out = Vec::new();
    let Ok(doc) = toml::de::DeTable::parse(text) else {
        return out;
    };
    let Some(t) = doc
        .get_ref()
        .get("sweep")
        .and_then(|s| s.get_ref().as_table())
    else {
        return out;
    };
    for (key, value) in t.iter() {
        let written = value
            .get_ref()
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|v| match v.get_ref().as_str() {
                        Some(s) => s.to_string(),
                        None => text.get(v.span()).unwrap_or_default().trim().to_string(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.push((key.get_ref().to_string(), key.span().start, written));
    }
    out
}

/// Reads `[sweep]`: keys in order of appearance, each a valid path with a non-empty array.
pub(super) fn parse_sweep(text: &str, sweep: &Value) -> Result<Vec<SweepKey>, ConfigError> {
    let Value::Table(table) = sweep else {
        return Err(ConfigError::new(
            "sweep",
            render(sweep),
            "a table of \"dotted.path\" = [values, ...]",
        ));
    };
    let pos = positions(text);
    let mut names: Vec<&String> = table.keys().collect();
    let find = |k: &str| pos.iter().find(|p| p.0 == k);
    names.sort_by_key(|k| (find(k).map(|p| p.1).unwrap_or(usize::MAX), k.to_string()));
    let mut keys = Vec::with_capacity(table.len());
    for key in names {
        let segs = parse_key(key)?;
        if matches!(canonical(&segs).as_str(), "seed" | "runs") {
            // The seeds of a point's runs come from the top-level `seed` and `runs` (or
            // `--seed` / `--runs`): a point never had its own, so a swept value was a
            // label on runs of the base seed.
            return Err(ConfigError::new(
                format!("sweep.\"{key}\""),
                render(table.get(key).expect("listed key")),
                "a key of the scenario other than `seed` and `runs`: every point runs `runs` seeds from `seed` (set them at the top level or with --seed / --runs)",
            ));
        }
        let values = match table.get(key) {
            Some(Value::Array(a)) if !a.is_empty() => a.clone(),
            other => {
                return Err(ConfigError::new(
                    format!("sweep.\"{key}\""),
                    other.map(render).unwrap_or_default(),
                    "a non-empty array of the values to try",
                ))
            }
        };
        let mut written: Vec<String> = find(key).map(|p| p.2.clone()).unwrap_or_default();
        if written.len() != values.len() || written.iter().any(String::is_empty) {
            written = values.iter().map(render).collect();
        }
        let canonical = canonical(&segs);
        // `flows.0.rate` and `flows[0].rate` are one key: the later spelling would
        // silently replace the earlier one's values at every point.
        if let Some(first) = keys.iter().find(|k: &&SweepKey| k.canonical == canonical) {
            return Err(ConfigError::new(
                format!("sweep.\"{key}\""),
                key.as_str(),
                format!(
                    "a path not swept twice: \"{}\" already sweeps {canonical}",
                    first.written
                ),
            ));
        }
        keys.push(SweepKey {
            written: key.clone(),
            canonical,
            segs,
            values,
            shown: written,
        });
    }
    let mut total: usize = 1;
    for k in &keys {
        total = total.saturating_mul(k.values.len());
    }
    if total > MAX_POINTS {
        return Err(ConfigError::new(
            "sweep",
            format!("{total} points"),
            format!("a grid of at most {MAX_POINTS} points"),
        ));
    }
    Ok(keys)
}

/// Writes `value` at the path of `key` in `doc`. Missing tables on the way are created
/// (whether the result is allowed is then up to validation); arrays are never extended.
pub(super) fn substitute(doc: &mut Table, key: &SweepKey, value: Value) -> Result<(), ConfigError> {
    let err =
        |why: String| ConfigError::new(key.field(), &key.written, format!("{KEY_ALLOWED}: {why}"));
    let mut cur: &mut Table = doc;
    let mut walked = String::new();
    let n = key.segs.len();
    // The first segment is always a key; walk table -> (key | key[index]...) -> ...
    let mut i = 0;
    while i < n {
        let Seg::Key(name) = &key.segs[i] else {
            return Err(err(format!("{walked} is not an array")));
        };
        if !walked.is_empty() {
            walked.push('.');
        }
        walked.push_str(name);
        if i + 1 == n {
            cur.insert(name.clone(), value);
            return Ok(());
        }
        // Indices that follow this key.
        let mut j = i + 1;
        let mut slot: &mut Value = if matches!(key.segs[j], Seg::Index(_)) {
            cur.get_mut(name)
                .ok_or_else(|| err(format!("{walked} does not exist, so it has no elements")))?
        } else {
            cur.entry(name.clone())
                .or_insert_with(|| Value::Table(Table::new()))
        };
        while j < n {
            let Seg::Index(idx) = key.segs[j] else { break };
            let Value::Array(arr) = slot else {
                return Err(err(format!("{walked} is not an array")));
            };
            let len = arr.len();
            let Some(elem) = arr.get_mut(idx) else {
                return Err(err(format!(
                    "{walked} has {len} element(s), so index {idx} does not exist"
                )));
            };
            walked.push_str(&format!("[{idx}]"));
            if j + 1 == n {
                *elem = value;
                return Ok(());
            }
            slot = elem;
            j += 1;
        }
        let Value::Table(t) = slot else {
            return Err(err(format!("{walked} is not a table")));
        };
        cur = t;
        i = j;
    }
    Ok(())
}

/// The index of each key's value at grid point `g` (the last key fastest).
fn grid_indices(keys: &[SweepKey], mut g: usize) -> Vec<usize> {
    let mut idx = vec![0; keys.len()];
    for (d, k) in keys.iter().enumerate().rev() {
        idx[d] = g % k.values.len();
        g /= k.values.len();
    }
    idx
}

/// Refuses a grid with two points of the same resolved configuration (`[5, 5]`,
/// `[0.01, "1%"]`, `["1s", "1000ms"]`, a key whose value no point uses): they would be the
/// same jobs of a study twice (the same job ids), which a sweep directory cannot hold.
/// `configs` are the points' configurations in order, `variants` per grid point
/// ([`super::Scenario::variant_count`]). The error names the keys whose values differ
/// between the two points, at the later point's value.
pub(super) fn check_distinct(
    keys: &[SweepKey],
    configs: &[&crate::config::Config],
    variants: usize,
) -> Result<(), ConfigError> {
    use crate::hash::Fnv1a64;
    // Hashes of the canonical serialisation (as job ids are made), confirmed by equality.
    let mut seen: std::collections::BTreeMap<u64, Vec<usize>> = Default::default();
    for (p, c) in configs.iter().enumerate() {
        let json = serde_json::to_vec(c).expect("a Config serialises to JSON");
        let mut h = Fnv1a64::new();
        h.write(&json);
        let same = seen.entry(h.finish()).or_default();
        if let Some(&q) = same.iter().find(|&&q| configs[q] == *c) {
            let (a, b) = (
                grid_indices(keys, q / variants),
                grid_indices(keys, p / variants),
            );
            let differ: Vec<usize> = (0..keys.len()).filter(|&d| a[d] != b[d]).collect();
            let field: Vec<String> = differ
                .iter()
                .map(|&d| format!("{}[{}]", keys[d].field(), b[d]))
                .collect();
            let show = |idx: &[usize]| {
                differ
                    .iter()
                    .map(|&d| format!("{} = {}", keys[d].written, keys[d].shown[idx[d]]))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(ConfigError::new(
                field.join(", "),
                show(&b),
                format!(
                    "a value giving another configuration than every other point: with it, point {p} resolves to the same configuration as point {q} ({}), so the sweep would run the same simulations twice",
                    show(&a)
                ),
            ));
        }
        same.push(p);
    }
    Ok(())
}

/// Names the sweep values of a failed point in an error from building it: the key whose
/// path contains the error's field, else every key of the point. An unknown key created by
/// the sweep is reported as a path that does not exist.
pub(super) fn attribute(e: ConfigError, keys: &[SweepKey], idx: &[usize]) -> ConfigError {
    let under = |field: &str, path: &str| {
        field == path
            || field.starts_with(&format!("{path}."))
            || field.starts_with(&format!("{path}["))
    };
    if e.allowed.contains("unknown field") {
        if let Some(k) = keys.iter().find(|k| under(&k.canonical, &e.field)) {
            return ConfigError::new(
                k.field(),
                &k.written,
                format!(
                    "a key path that exists in the scenario format (at {}: {})",
                    e.field, e.allowed
                ),
            );
        }
    }
    let matched: Vec<usize> = (0..keys.len())
        .filter(|&j| under(&e.field, &keys[j].canonical))
        .collect();
    let named: Vec<usize> = if matched.is_empty() {
        (0..keys.len()).collect()
    } else {
        matched
    };
    let names: Vec<String> = named
        .iter()
        .map(|&j| format!("{}[{}]", keys[j].field(), idx[j]))
        .collect();
    ConfigError::new(
        format!("{} -> {}", names.join(", "), e.field),
        e.value,
        e.allowed,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_syntax() {
        assert_eq!(
            parse_key("flows.0.rate").unwrap(),
            vec![
                Seg::Key("flows".into()),
                Seg::Index(0),
                Seg::Key("rate".into())
            ]
        );
        assert_eq!(
            parse_key("flows[0].rate").unwrap(),
            parse_key("flows.0.rate").unwrap()
        );
        assert_eq!(
            canonical(&parse_key("flows.0.rate").unwrap()),
            "flows[0].rate"
        );
        assert!(parse_key("a..b").is_err());
        assert!(parse_key("0.a").is_err());
        assert!(parse_key("sweep.x").is_err());
        assert!(parse_key("paper.id").is_err());
        assert!(parse_key("a[x]").is_err());
    }

    /// Issue 28 item 5: two points of one resolved configuration, or one key in two
    /// spellings, made `quicsim sweep` fail forever ("N records for M jobs") while
    /// `validate` and `run` accepted the file.
    #[test]
    fn duplicate_points_and_key_spellings_are_refused() {
        let base = "[topology]\nkind = \"two_hosts\"\n[[flows]]\nkind = \"cbr\"\nrate = \"1Mbps\"\ncount = 5\n[sweep]\n";
        let cases = [
            ("\"flows.0.count\" = [5, 5]", "sweep.\"flows.0.count\"[1]"),
            (
                "\"topology.link.loss\" = [0.01, \"1%\"]",
                "sweep.\"topology.link.loss\"[1]",
            ),
            (
                "\"topology.link.delay\" = [\"1s\", \"1000ms\"]",
                "sweep.\"topology.link.delay\"[1]",
            ),
            (
                "\"flows.0.count\" = [5, 6]\n\"flows[0].count\" = [7, 8]",
                "sweep.\"flows[0].count\"",
            ),
            ("\"paper.id\" = [\"a\", \"b\"]", "sweep.\"paper.id\""),
            // Two keys: points 1 and 2 are (5, 2%) and (6, 1%)... distinct; (5, 1%) and
            // (5, "1%") are not.
            (
                "\"flows.0.count\" = [5, 6]\n\"topology.link.loss\" = [0.01, \"1%\"]",
                "sweep.\"topology.link.loss\"[1]",
            ),
        ];
        for (sweep, field) in cases {
            let e = crate::scenario::parse_str(&format!("{base}{sweep}\n")).unwrap_err();
            assert_eq!(e.field, field, "{sweep}: {e}");
        }
        let e =
            crate::scenario::parse_str(&format!("{base}\"flows.0.count\" = [5, 5]\n")).unwrap_err();
        assert!(
            e.allowed.contains(
                "point 1 resolves to the same configuration as point 0 (flows.0.count = 5)"
            ),
            "{e}"
        );
        // Distinct values still sweep.
        let ok = crate::scenario::parse_str(&format!(
            "{base}\"flows.0.count\" = [5, 6]\n\"topology.link.loss\" = [0.01, 0.02]\n"
        ))
        .unwrap();
        assert_eq!(ok.points.len(), 4);
    }
}

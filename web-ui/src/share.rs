//! Share links and exports. The page's state (the gallery entry and the scenario text,
//! which holds every parameter) lives in the URL fragment, `#v=1&s=<entry>&toml=<text>`
//! (percent-encoded), so a link reproduces the view: opening it runs the same scenario
//! and shows the same digest. A link of another format version, a malformed one or one
//! whose scenario does not validate is refused with a message saying why, and the page
//! falls back to its defaults.
//!
//! Exports: the per-run results as CSV (one row per run and flow, with its sweep point).

use crate::summary::{PointInfo, RunLine};
use sim_core::scenario::parse_str;

/// The format version of share links.
pub const VERSION: &str = "1";

/// What a link carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shared {
    /// The gallery entry id (`""`: the sandbox or an edited text).
    pub selected: String,
    /// The scenario text.
    pub toml: String,
}

/// Percent-encodes everything but RFC 3986's unreserved characters.
pub fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 3 / 2);
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Decodes `%XX` escapes (and `+` as a space); `None` on a bad escape or bad UTF-8.
pub fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// The fragment (without `#`) of a link to `state`.
pub fn encode(state: &Shared) -> String {
    format!(
        "v={VERSION}&s={}&toml={}",
        percent_encode(&state.selected),
        percent_encode(&state.toml)
    )
}

/// Reads a link's fragment (with or without `#`): `Ok(None)` for no fragment (the
/// defaults), `Ok(Some(state))` for a good link, `Err(why)` for a malformed, outdated or
/// invalid one.
pub fn decode(fragment: &str) -> Result<Option<Shared>, String> {
    let f = fragment.strip_prefix('#').unwrap_or(fragment);
    if f.is_empty() {
        return Ok(None);
    }
    let mut version = None;
    let mut selected = String::new();
    let mut toml = None;
    for part in f.split('&') {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| format!("`{}` is not key=value", short(part)))?;
        let v = percent_decode(v)
            .ok_or_else(|| format!("the value of `{k}` is not percent-encoded UTF-8"))?;
        match k {
            "v" => version = Some(v),
            "s" => selected = v,
            "toml" => toml = Some(v),
            _ => return Err(format!("unknown key `{}`", short(k))),
        }
    }
    match version.as_deref() {
        Some(VERSION) => {}
        Some(v) => {
            return Err(format!(
                "it was made by another version of this page (link format v{}, this page reads v{VERSION})",
                short(v)
            ))
        }
        None => return Err("it has no format version (v=...)".into()),
    }
    let toml = toml.ok_or("it has no scenario (toml=...)")?;
    parse_str(&toml).map_err(|e| format!("its scenario is not valid: {e}"))?;
    Ok(Some(Shared { selected, toml }))
}

fn short(s: &str) -> String {
    s.chars().take(40).collect()
}

fn csv_num(v: Option<f64>) -> String {
    v.map(|v| format!("{v}")).unwrap_or_default()
}

/// A CSV cell: quoted (quotes doubled) when it holds a comma, a quote or a line break.
fn csv_text(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The per-run results as CSV: one row per run and flow, each with its sweep point (index
/// and parameters as written, `key = value; ...`) and its run index within the point.
pub fn results_csv(lines: &[RunLine], points: &[PointInfo]) -> String {
    let mut out = String::from(
        "point,point_params,run,seed,status,end_s,events,digest,flow,loss_ratio,completion_s,goodput_bps,handover_bps\n",
    );
    for l in lines {
        let params = points
            .get(l.point)
            .map(|p| {
                p.params
                    .iter()
                    .map(|(k, v)| format!("{k} = {v}"))
                    .collect::<Vec<_>>()
                    .join("; ")
            })
            .unwrap_or_default();
        for f in &l.flows {
            out.push_str(&format!(
                "{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                l.point,
                csv_text(&params),
                l.run,
                l.seed,
                l.status,
                l.end_s,
                l.events,
                l.digest,
                f.flow,
                csv_num(f.loss_ratio),
                csv_num(f.completion_s),
                csv_num(f.goodput_bps),
                csv_num(f.handover_bps)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gallery::SANDBOX;

    #[test]
    fn a_link_round_trips_the_state() {
        let s = Shared {
            selected: "examples/quic-bulk.toml".into(),
            toml: SANDBOX.to_string() + "# ünïcode & = % + #\n",
        };
        let f = encode(&s);
        assert!(!f.contains('#') && !f.contains(' ') && !f.contains('\n'));
        assert_eq!(decode(&format!("#{f}")).unwrap(), Some(s));
        assert_eq!(decode("").unwrap(), None);
        assert_eq!(decode("#").unwrap(), None);
    }

    #[test]
    fn bad_links_say_why() {
        let good = encode(&Shared {
            selected: String::new(),
            toml: SANDBOX.into(),
        });
        let e = decode(&good.replace("v=1", "v=0")).unwrap_err();
        assert!(e.contains("another version"), "{e}");
        assert!(decode("garbage").unwrap_err().contains("key=value"));
        assert!(decode("v=1&toml=%ZZ").unwrap_err().contains("percent"));
        assert!(decode("v=1").unwrap_err().contains("no scenario"));
        assert!(decode("v=1&x=2").unwrap_err().contains("unknown key"));
        // A scenario that does not validate names the field, as the CLI does.
        let bad = encode(&Shared {
            selected: String::new(),
            toml: SANDBOX.replace("\"10Mbps\"", "\"fast\""),
        });
        let e = decode(&bad).unwrap_err();
        assert!(e.contains("rate"), "{e}");
    }

    #[test]
    fn csv_has_a_row_per_run_and_flow() {
        let cfg = sim_core::scenario::parse_str(SANDBOX).unwrap().base;
        let r = sim_core::run(&cfg, 1).unwrap();
        let l = crate::summary::lines(std::slice::from_ref(&r));
        let csv = results_csv(&l, &PointInfo::all(&[vec![]]));
        let rows: Vec<&str> = csv.lines().collect();
        assert_eq!(rows.len(), 2);
        let cols = rows[0].split(',').count();
        assert_eq!(rows[1].split(',').count(), cols);
        assert!(rows[1].contains(&r.digest));
        assert!(rows[1].starts_with("0,,0,1,completed,"), "{}", rows[1]);
        // A point's parameters are one quoted cell.
        let pts = PointInfo::all(&[vec![(
            "flows.0.quic.initial_window".into(),
            "{ policy = \"history\", max = 3 }".into(),
        )]]);
        let csv = results_csv(&l, &pts);
        assert!(
            csv.lines().nth(1).unwrap().starts_with(
                "0,\"flows.0.quic.initial_window = { policy = \"\"history\"\", max = 3 }\",0,1,"
            ),
            "{csv}"
        );
    }
}

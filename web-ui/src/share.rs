//! Share links and exports. The page's state lives in the URL fragment, so a link
//! reproduces the view: the gallery entry, the scenario text (which holds every
//! parameter), the pinned A of an A/B comparison, and the packet timeline's flow,
//! connection and step when it is open. Opening a link runs A, pins it, runs B and opens
//! the timeline where it was, and shows the same digests.
//!
//! Format v2 (this page writes it): `#v=2&z=<payload>`, the payload being the v1-style
//! `key=value&...` text (percent-encoded values: `s`, `toml`, `a`, `tl`) deflated (RFC 1951,
//! `miniz_oxide`) and written base64url without padding (RFC 4648 §5), so a scenario of a
//! few KB makes a link of a few hundred characters; a scenario that is a gallery entry's
//! text unchanged is not written at all (the entry names it). Links of format v1
//! (`#v=1&s=<entry>&toml=<text>`, uncompressed) still open. A link of an unknown
//! version, a malformed one or one whose scenario does not validate is refused with a
//! message saying why, and the page falls back to its defaults.
//!
//! Exports: the per-run results as CSV (one row per run and flow, with its sweep point).

use crate::summary::{PointInfo, RunLine};

/// The format version of the share links this page writes.
pub const VERSION: &str = "2";

/// The packet timeline's place in a link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimelinePos {
    /// The flow traced.
    pub flow: u32,
    /// Its connection.
    pub connection: u32,
    /// The current step.
    pub step: u32,
}

/// What a link carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shared {
    /// The gallery entry id (`""`: the sandbox or an edited text).
    pub selected: String,
    /// The scenario text (B when A is pinned).
    pub toml: String,
    /// The pinned A's scenario text, if any.
    pub pinned: Option<String>,
    /// The open timeline, if any.
    pub timeline: Option<TimelinePos>,
}

impl Shared {
    /// A state with only an entry and a text (no A, no timeline).
    pub fn plain(selected: &str, toml: &str) -> Shared {
        Shared {
            selected: selected.into(),
            toml: toml.into(),
            pinned: None,
            timeline: None,
        }
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// base64url without padding (RFC 4648 §5).
pub fn base64url(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let n = chunk.len();
        let v = (chunk[0] as u32) << 16
            | (chunk.get(1).copied().unwrap_or(0) as u32) << 8
            | chunk.get(2).copied().unwrap_or(0) as u32;
        for i in 0..=n {
            out.push(B64[(v >> (18 - 6 * i)) as usize & 63] as char);
        }
    }
    out
}

/// Reads base64url without padding; `None` on a character outside its alphabet or a
/// length no encoding has.
pub fn unbase64url(s: &str) -> Option<Vec<u8>> {
    let val = |c: u8| B64.iter().position(|&b| b == c).map(|p| p as u32);
    let b = s.trim_end_matches('=').as_bytes();
    if b.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(b.len() * 3 / 4);
    for chunk in b.chunks(4) {
        let mut v = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            v |= val(c)? << (18 - 6 * i);
        }
        for i in 0..chunk.len() - 1 {
            out.push((v >> (16 - 8 * i)) as u8);
        }
    }
    Some(out)
}

/// The most a link's payload may inflate to (a scenario is a few KB; this bounds a
/// hostile link's memory).
const MAX_PAYLOAD: usize = 1 << 20;

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

/// The state a v2 link deflates: JSON (its strings escape only quotes, backslashes and
/// control characters, so the text compresses as written).
#[derive(serde::Serialize, serde::Deserialize)]
struct Payload {
    /// The gallery entry.
    s: String,
    /// The scenario text; absent when it is the entry's, unchanged, or written as `d`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    t: Option<String>,
    /// The scenario text as an edit of the entry's ([`Edit`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    d: Option<Edit>,
    /// The pinned A's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    a: Option<String>,
    /// The pinned A's text as an edit of the entry's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ad: Option<Edit>,
    /// The timeline: flow, connection, step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tl: Option<[u32; 3]>,
}

/// A text as an edit of a base text: the base's first `.0` bytes, then `.2`, then its
/// last `.1` bytes. A panel edit changes one value, so the edit of a gallery entry is a
/// few bytes however long the entry.
type Edit = (usize, usize, String);

/// `text` as an edit of `base`.
fn edit_of(base: &str, text: &str) -> Edit {
    let (b, t) = (base.as_bytes(), text.as_bytes());
    let mut pre = b.iter().zip(t).take_while(|(x, y)| x == y).count();
    while !text.is_char_boundary(pre) {
        pre -= 1;
    }
    let max_suf = b.len().min(t.len()) - pre;
    let mut suf = b
        .iter()
        .rev()
        .zip(t.iter().rev())
        .take(max_suf)
        .take_while(|(x, y)| x == y)
        .count();
    while !text.is_char_boundary(t.len() - suf) {
        suf -= 1;
    }
    (pre, suf, text[pre..t.len() - suf].to_string())
}

/// The text an edit of `base` makes; `None` if it does not fit `base`.
fn apply(base: &str, (pre, suf, mid): &Edit) -> Option<String> {
    let end = base.len().checked_sub(*suf)?;
    if *pre > end {
        return None;
    }
    Some(format!("{}{mid}{}", base.get(..*pre)?, base.get(end..)?))
}

/// A text for the payload: nothing when it is `entry`, an edit of `entry` when that is
/// shorter, else the whole text.
fn text_of(entry: Option<&str>, text: &str) -> (Option<String>, Option<Edit>) {
    match entry {
        Some(e) if e == text => (None, None),
        Some(e) => {
            let d = edit_of(e, text);
            if d.2.len() + 24 < text.len() {
                (None, Some(d))
            } else {
                (Some(text.to_string()), None)
            }
        }
        None => (Some(text.to_string()), None),
    }
}

fn payload(state: &Shared) -> String {
    let entry = crate::gallery::find(&state.selected).map(|e| e.toml);
    let (t, d) = text_of(entry, &state.toml);
    let (a, ad) = match &state.pinned {
        Some(pinned) => match text_of(entry, pinned) {
            // A pinned A equal to the entry: the edit that keeps all of it.
            (None, None) => (None, Some(edit_of(pinned, pinned))),
            other => other,
        },
        None => (None, None),
    };
    let p = Payload {
        s: state.selected.clone(),
        t,
        d,
        a,
        ad,
        tl: state.timeline.map(|t| [t.flow, t.connection, t.step]),
    };
    serde_json::to_string(&p).unwrap_or_default()
}

/// The fragment (without `#`) of a link to `state` (format v2).
pub fn encode(state: &Shared) -> String {
    let z = miniz_oxide::deflate::compress_to_vec(payload(state).as_bytes(), 9);
    format!("v={VERSION}&z={}", base64url(&z))
}

/// The fragment of the uncompressed format v1 (entry and text only), which this page
/// still reads.
pub fn encode_v1(state: &Shared) -> String {
    format!(
        "v=1&s={}&toml={}",
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
    let pairs = split(f)?;
    let version = pairs.iter().find(|(k, _)| k == "v").map(|(_, v)| v.clone());
    let (selected, toml, pinned, timeline) = match version.as_deref() {
        Some("1") => {
            let mut selected = String::new();
            let mut toml = None;
            for (k, v) in pairs {
                match k.as_str() {
                    "v" => {}
                    "s" => selected = v,
                    "toml" => toml = Some(v),
                    _ => return Err(format!("unknown key `{}`", short(&k))),
                }
            }
            (selected, toml, None, None)
        }
        Some(VERSION) => {
            let z = pairs
                .iter()
                .find(|(k, _)| k == "z")
                .map(|(_, v)| v.as_str())
                .ok_or("it has no state (z=...)")?;
            if let Some((k, _)) = pairs.iter().find(|(k, _)| k != "v" && k != "z") {
                return Err(format!("unknown key `{}`", short(k)));
            }
            let bytes = unbase64url(z).ok_or("its state (z=...) is not base64url")?;
            let text = miniz_oxide::inflate::decompress_to_vec_with_limit(&bytes, MAX_PAYLOAD)
                .map_err(|_| "its state (z=...) is not a deflated text of at most 1 MB")?;
            let p: Payload = serde_json::from_slice(&text)
                .map_err(|e| format!("its state is not this page's: {e}"))?;
            let timeline = p.tl.map(|[flow, connection, step]| TimelinePos {
                flow,
                connection,
                step,
            });
            let entry = crate::gallery::find(&p.s).map(|e| e.toml);
            let edited = |d: &Option<Edit>| -> Result<Option<String>, String> {
                match d {
                    None => Ok(None),
                    Some(d) => entry
                        .and_then(|e| apply(e, d))
                        .map(Some)
                        .ok_or_else(|| format!("its edit does not fit the gallery entry `{}`", short(&p.s))),
                }
            };
            let toml = p.t.clone().or(edited(&p.d)?);
            let pinned = p.a.clone().or(edited(&p.ad)?);
            (p.s, toml, pinned, timeline)
        }
        Some(v) => {
            return Err(format!(
                "it was made by another version of this page (link format v{}, this page reads v1 and v{VERSION})",
                short(v)
            ))
        }
        None => return Err("it has no format version (v=...)".into()),
    };
    let toml = match toml {
        Some(t) => t,
        None => crate::gallery::find(&selected)
            .map(|e| e.toml.to_string())
            .ok_or("it has no scenario (toml=...)")?,
    };
    crate::gallery::parse(&toml).map_err(|e| format!("its scenario is not valid: {e}"))?;
    if let Some(a) = &pinned {
        crate::gallery::parse(a).map_err(|e| format!("its pinned A is not valid: {e}"))?;
    }
    Ok(Some(Shared {
        selected,
        toml,
        pinned,
        timeline,
    }))
}

/// `k=v&...` with percent-decoded values.
fn split(f: &str) -> Result<Vec<(String, String)>, String> {
    f.split('&')
        .map(|part| {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("`{}` is not key=value", short(part)))?;
            let v = percent_decode(v)
                .ok_or_else(|| format!("the value of `{k}` is not percent-encoded UTF-8"))?;
            Ok((k.to_string(), v))
        })
        .collect()
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
        let s = Shared::plain(
            "examples/quic-bulk.toml",
            &(SANDBOX.to_string() + "# ünïcode & = % + #\n"),
        );
        let f = encode(&s);
        assert!(f.starts_with("v=2&z="), "{f}");
        assert!(!f.contains('#') && !f.contains(' ') && !f.contains('\n'));
        assert_eq!(decode(&format!("#{f}")).unwrap(), Some(s));
        assert_eq!(decode("").unwrap(), None);
        assert_eq!(decode("#").unwrap(), None);
    }

    #[test]
    fn a_link_carries_a_b_and_the_timeline_and_stays_short() {
        let e = crate::gallery::find("paper000/good.toml").unwrap();
        let b = e.toml.replace("runs = 10", "runs = 3");
        let s = Shared {
            selected: "paper000/good.toml".into(),
            toml: b.clone(),
            pinned: Some(e.toml.to_string()),
            timeline: Some(TimelinePos {
                flow: 0,
                connection: 2,
                step: 117,
            }),
        };
        let f = encode(&s);
        assert_eq!(decode(&f).unwrap(), Some(s.clone()));
        // Two edits of a 6 KB entry: a link of a few dozen characters where v1 wrote the
        // text percent-encoded.
        let v1 = encode_v1(&Shared::plain(&s.selected, &b));
        assert!(f.len() < 120, "{} vs {}", f.len(), v1.len());
        // A text of its own (the sandbox, edited) is deflated: far shorter than v1's.
        let own = Shared::plain("", &b);
        let f = encode(&own);
        assert_eq!(decode(&f).unwrap(), Some(own));
        assert!(f.len() * 2 < v1.len(), "{} vs {}", f.len(), v1.len());
        // An unchanged gallery entry is named, not written.
        let plain = encode(&Shared::plain("paper000/good.toml", e.toml));
        assert!(plain.len() < 80, "{plain}");
        assert_eq!(decode(&plain).unwrap().unwrap().toml, e.toml);
    }

    #[test]
    fn edits_round_trip_at_any_place() {
        let base = "name = \"x\"\nrate = \"10Mbps\" # ünï\nend\n";
        for text in [
            base.to_string(),
            base.replace("10Mbps", "12Mbps"),
            base.replace("ünï", "üni"),
            format!("# top\n{base}"),
            format!("{base}tail\n"),
            String::new(),
            "rate".into(),
        ] {
            let d = edit_of(base, &text);
            assert_eq!(apply(base, &d).as_deref(), Some(text.as_str()), "{d:?}");
        }
        assert_eq!(apply("ab", &(2, 1, String::new())), None);
    }

    #[test]
    fn v1_links_still_open() {
        let s = Shared::plain("", SANDBOX);
        assert_eq!(decode(&encode_v1(&s)).unwrap(), Some(s));
    }

    #[test]
    fn base64url_round_trips_every_length() {
        for n in 0..40u8 {
            let data: Vec<u8> = (0..n).map(|i| i.wrapping_mul(37) ^ 0xA5).collect();
            let t = base64url(&data);
            assert!(t.bytes().all(|c| B64.contains(&c)));
            assert_eq!(unbase64url(&t).unwrap(), data, "{n}");
        }
        assert_eq!(base64url(b"hello"), "aGVsbG8");
        assert!(unbase64url("a").is_none());
        assert!(unbase64url("a*bc").is_none());
    }

    #[test]
    fn bad_links_say_why() {
        let good = encode_v1(&Shared::plain("", SANDBOX));
        let e = decode(&good.replace("v=1", "v=0")).unwrap_err();
        assert!(e.contains("another version"), "{e}");
        assert!(decode("garbage").unwrap_err().contains("key=value"));
        assert!(decode("v=1&toml=%ZZ").unwrap_err().contains("percent"));
        assert!(decode("v=1").unwrap_err().contains("no scenario"));
        assert!(decode("v=1&x=2").unwrap_err().contains("unknown key"));
        assert!(decode("v=2").unwrap_err().contains("no state"));
        assert!(decode("v=2&z=*").unwrap_err().contains("base64url"));
        assert!(decode("v=2&z=aGVsbG8").unwrap_err().contains("deflated"));
        // A bomb: 2 MB of zeros deflates to a few KB and is refused.
        let bomb = miniz_oxide::deflate::compress_to_vec(&vec![b'a'; 2 << 20], 9);
        let e = decode(&format!("v=2&z={}", base64url(&bomb))).unwrap_err();
        assert!(e.contains("at most 1 MB"), "{e}");
        // A scenario that does not validate names the field, as the CLI does.
        let bad = encode(&Shared::plain(
            "",
            &SANDBOX.replace("\"10Mbps\"", "\"fast\""),
        ));
        let e = decode(&bad).unwrap_err();
        assert!(e.contains("rate"), "{e}");
        let bad_a = encode(&Shared {
            pinned: Some(SANDBOX.replace("\"10Mbps\"", "\"fast\"")),
            ..Shared::plain("", SANDBOX)
        });
        assert!(decode(&bad_a).unwrap_err().contains("pinned A"));
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

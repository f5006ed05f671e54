//! Sliders for the parameter panel's numeric keys, generated from the field descriptors:
//! a key's kind (rate, time, size, probability, integer, number) gives its unit and how
//! its value is written; its descriptor's `min` / `max` bound the slider. Where the
//! descriptor leaves an end open, the kind's usual span closes it (rates 100 kbit/s to
//! 10 Gbit/s, times 100 µs to 10 s, sizes 1 KB to 1 GB), widened to take the value
//! written. Wide spans move on a log scale; probabilities on a square scale, so the
//! small loss rates that matter get most of the track.
//!
//! A slider position is an integer in `0..=STEPS` (what `<input type=range>` holds, so
//! arrow keys move it one step); the value it writes is rounded to two significant
//! digits and spelled the way a scenario writes it (`"12Mbps"`, `"35ms"`, `0.012`).

use sim_core::scenario::schema::{Bound, DefaultValue, Field, Kind};
use sim_core::units::{
    format_bytes, format_duration, format_rate, parse_bytes, parse_duration, parse_rate,
};
use sim_core::units::{Bytes, Rate};
use sim_core::SimDuration;

/// Positions of a slider: `0..=STEPS`.
pub const STEPS: u32 = 200;

/// How positions map to values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scale {
    /// Equal steps.
    Linear,
    /// Equal ratios (both ends > 0).
    Log,
    /// `lo + (hi - lo) * x²`: fine steps near `lo`.
    Square,
}

/// A slider for one key.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slider {
    /// The key's kind (how a value is written).
    pub kind: Kind,
    /// Value at position 0, in the kind's unit (bit/s, ns, bytes, 1).
    pub lo: f64,
    /// Value at position [`STEPS`].
    pub hi: f64,
    /// The mapping.
    pub scale: Scale,
}

/// A value of `kind` as a number in its unit, if `text` is one.
pub fn numeric(kind: Kind, text: &str) -> Option<f64> {
    let s = text.trim().trim_matches('"');
    match kind {
        Kind::Rate => s
            .parse::<u64>()
            .ok()
            .or_else(|| parse_rate(s).ok().map(|r| r.0))
            .map(|v| v as f64),
        Kind::Time => s
            .parse::<u64>()
            .ok()
            .or_else(|| parse_duration(s).ok().map(|d| d.0))
            .map(|v| v as f64),
        Kind::Size => s
            .parse::<u64>()
            .ok()
            .or_else(|| parse_bytes(s).ok().map(|b| b.0))
            .map(|v| v as f64),
        Kind::Probability => match s.strip_suffix('%') {
            Some(p) => p.trim().parse::<f64>().ok().map(|p| p / 100.0),
            None => s.parse::<f64>().ok(),
        }
        .filter(|p| (0.0..=1.0).contains(p)),
        Kind::Integer | Kind::Number => s.parse::<f64>().ok(),
        _ => None,
    }
    .filter(|v| v.is_finite())
}

/// The kind's usual span, for a descriptor end left open.
fn kind_span(kind: Kind) -> Option<(f64, f64)> {
    match kind {
        Kind::Rate => Some((1e5, 1e10)),
        Kind::Time => Some((1e5, 1e10)),
        Kind::Size => Some((1e3, 1e9)),
        Kind::Probability => Some((0.0, 1.0)),
        _ => None,
    }
}

/// The slider of `field`, whose value is `value` as the panel shows it (`None`: not
/// written, the default applies). `None` for keys that are not numbers, and for integers
/// and numbers whose descriptor does not bound them.
pub fn slider(field: &Field, value: Option<&str>) -> Option<Slider> {
    let bound = |b: &Option<Bound>| b.and_then(|b| numeric(field.kind, b.value));
    let (dlo, dhi) = (bound(&field.min), bound(&field.max));
    let (klo, khi) = match (kind_span(field.kind), dlo, dhi) {
        (Some(s), _, _) => s,
        (None, Some(lo), Some(hi)) => (lo, hi),
        _ => return None,
    };
    let current = value.or(match field.default {
        DefaultValue::Value(v) => Some(v),
        _ => None,
    });
    let v = current.and_then(|c| numeric(field.kind, c));
    let mut lo = dlo.unwrap_or(klo);
    let mut hi = dhi.unwrap_or(khi);
    if field.kind != Kind::Probability {
        // An exclusive "> 0" lower bound: the kind's span starts above it.
        if lo <= 0.0 && dhi.is_none() {
            lo = klo.max(lo);
        }
        if let Some(v) = v {
            if v > hi && dhi.is_none() {
                hi = v;
            }
            if v > 0.0 && v < lo && dlo.is_none_or(|d| d <= v) {
                lo = v;
            }
        }
    }
    if matches!(field.kind, Kind::Integer | Kind::Number) && lo > 0.0 && hi / lo > 1e4 {
        // A huge descriptor range (runs up to 2^32): a thousandfold is what a slider can
        // reach usefully; the text field takes the rest.
        hi = (lo * 1e3).max(v.unwrap_or(0.0));
    }
    if hi <= lo {
        return None;
    }
    let scale = if field.kind == Kind::Probability {
        Scale::Square
    } else if lo > 0.0 && hi / lo > 100.0 {
        Scale::Log
    } else if lo <= 0.0 && hi > 100.0 {
        // A span from 0: square, so small values stay reachable.
        Scale::Square
    } else {
        Scale::Linear
    };
    Some(Slider {
        kind: field.kind,
        lo,
        hi,
        scale,
    })
}

/// `v` rounded to `digits` significant digits.
fn round_sig(v: f64, digits: i32) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let p = 10f64.powi(digits - 1 - v.abs().log10().floor() as i32);
    (v * p).round() / p
}

impl Slider {
    /// The number at position `pos` (clamped to `0..=STEPS`), before rounding.
    fn raw(&self, pos: u32) -> f64 {
        let x = pos.min(STEPS) as f64 / STEPS as f64;
        match self.scale {
            Scale::Linear => self.lo + (self.hi - self.lo) * x,
            Scale::Square => self.lo + (self.hi - self.lo) * x * x,
            Scale::Log => self.lo * (self.hi / self.lo).powf(x),
        }
    }

    /// The position nearest to the value `text` (`None` if it is not a value of the kind).
    pub fn position(&self, text: &str) -> Option<u32> {
        let v = numeric(self.kind, text)?.clamp(self.lo, self.hi);
        let x = match self.scale {
            Scale::Linear => (v - self.lo) / (self.hi - self.lo),
            Scale::Square => ((v - self.lo) / (self.hi - self.lo)).sqrt(),
            Scale::Log => (v / self.lo).ln() / (self.hi / self.lo).ln(),
        };
        Some((x * STEPS as f64).round().clamp(0.0, STEPS as f64) as u32)
    }

    /// The value position `pos` writes, as text typed into the field: two significant
    /// digits, in the unit a scenario uses (`"12Mbps"`, `"35ms"`, `"64KB"`, `0.012`).
    pub fn value(&self, pos: u32) -> String {
        let v = round_sig(self.raw(pos), 2).clamp(self.lo.min(self.hi), self.hi);
        // Rounding may step outside an exclusive bound; the parser names it if so.
        match self.kind {
            Kind::Rate => format_rate(Rate(v.round().max(1.0) as u64)),
            Kind::Time => format_duration(SimDuration(v.round() as u64)),
            Kind::Size => format_bytes(Bytes(v.round() as u64)),
            Kind::Integer => format!("{}", v.round() as i64),
            _ => {
                // The shortest decimal of the rounded value.
                let s = format!("{v}");
                if s.contains('e') {
                    format!("{v:.10}")
                        .trim_end_matches('0')
                        .trim_end_matches('.')
                        .to_string()
                } else {
                    s
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::scenario::schema::{self, Table};

    fn field(t: &Table, name: &str) -> &'static Field {
        t.fields.iter().find(|f| f.name == name).unwrap()
    }

    #[test]
    fn rate_slider_is_logarithmic_and_writes_a_rate() {
        let rate = field(&schema::LINK, "rate");
        let s = slider(rate, Some("10Mbps")).unwrap();
        assert_eq!(s.scale, Scale::Log);
        // The descriptor says "> 0": the span starts at the kind's 100 kbit/s.
        assert_eq!(s.lo, 1e5);
        let p = s.position("10Mbps").unwrap();
        assert_eq!(s.value(p), "10Mbps");
        // One step right is a larger rate, still a valid link rate.
        let up = s.value(p + 1);
        assert!(numeric(Kind::Rate, &up).unwrap() > 1e7, "{up}");
        assert_eq!(s.value(0), "100kbps");
        assert_eq!(s.value(STEPS), "10Gbps");
        assert_eq!(s.value(STEPS + 5), "10Gbps");
    }

    #[test]
    fn slider_values_parse_as_the_scenario_expects() {
        // Every numeric key of the link, every position: what the slider writes is what
        // the scenario parser accepts for that key.
        let base = crate::gallery::SANDBOX;
        let sections = crate::panel::sections(base).unwrap();
        let link = sections
            .iter()
            .find(|s| s.title == "Link topology.link")
            .unwrap();
        for name in ["rate", "delay", "overhead", "corruption"] {
            let f = field(&schema::LINK, name);
            let s = slider(f, None).or_else(|| slider(f, Some("1"))).unwrap();
            for pos in (0..=STEPS).step_by(7) {
                let v = s.value(pos);
                let x = numeric(f.kind, &v).unwrap_or_else(|| panic!("{name}: {v}"));
                assert!(x >= s.lo * 0.95 && x <= s.hi * 1.0001, "{name}: {v}");
                if pos > 0 {
                    let text = crate::panel::set_value(base, &link.path, f, &v).unwrap();
                    let parsed = sim_core::scenario::parse_str(&text);
                    assert!(parsed.is_ok(), "{name} = {v}: {:?}", parsed.err());
                }
            }
        }
        // The overhead's descriptor bounds it at 1000B.
        let o = slider(field(&schema::LINK, "overhead"), None).unwrap();
        assert_eq!(o.hi, 1000.0);
        assert_eq!(o.value(STEPS), "1KB");
    }

    #[test]
    fn probability_slider_has_fine_steps_near_zero() {
        let c = field(&schema::LINK, "corruption");
        let s = slider(c, Some("0.01")).unwrap();
        assert_eq!(s.scale, Scale::Square);
        assert_eq!(s.value(0), "0");
        assert_eq!(s.value(STEPS), "1");
        let one = numeric(Kind::Probability, &s.value(1)).unwrap();
        assert!(one > 0.0 && one < 1e-4, "{one}");
        assert_eq!(s.position("1%"), s.position("0.01"));
        assert_eq!(s.value(s.position("0.01").unwrap()), "0.01");
    }

    #[test]
    fn unbounded_integers_have_no_slider_and_bounded_ones_do() {
        assert!(slider(field(&schema::TOP, "seed"), Some("1")).is_none());
        assert!(slider(field(&schema::TOP, "name"), None).is_none());
        let runs = slider(field(&schema::TOP, "runs"), Some("1")).unwrap();
        assert_eq!(runs.value(0), "1");
    }
}

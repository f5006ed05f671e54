//! `loss = { model = "gilbert_elliott", p, r, k, h }` or `{ ..., gemodel }`: netem's
//! two-state Markov loss (`net/sched/sch_netem.c`, `loss_gilb_ell`).

use super::{key, model_key, DefaultValue, DropReason, FieldError, Kind, LossModelDef};
use super::{LossState, RngStream, Table};
use crate::units::parse_decimal;
use serde::{Deserialize, Serialize};

/// Two-state Gilbert-Elliott, as netem's `loss_gilb_ell`: starts in Good; a packet is
/// lost with probability 1-k in Good and 1-h in Bad, judged in the state it arrives in;
/// then the state moves (G->B with p, B->G with r).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GilbertElliott {
    /// P(Good -> Bad).
    pub p: f64,
    /// P(Bad -> Good).
    pub r: f64,
    /// P(delivered | Good).
    pub k: f64,
    /// P(delivered | Bad).
    pub h: f64,
}

/// State of the Gilbert-Elliott chain (netem `GOOD_STATE` / `BAD_STATE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GeState {
    /// Good: a packet is lost with probability `1 - k`.
    Good,
    /// Bad: a packet is lost with probability `1 - h`.
    Bad,
}

const GEMODEL_EXPECTED: &str = "netem's gemodel string \"p r 1-h 1-k\": four percentages in [0, 100] separated by spaces, e.g. \"0.125 12.5 50 4.5\"";

impl LossModelDef for GilbertElliott {
    const NAME: &'static str = "gilbert_elliott";
    const KEYS: Table = Table {
        id: "loss.gilbert_elliott",
        path: "loss = { model = \"gilbert_elliott\", ... }",
        what: "a loss table of model gilbert_elliott",
        fields: &[
            model_key(),
            key("p", Kind::Probability, DefaultValue::Required, "P(Good → Bad); `p + r > 0`"),
            key("r", Kind::Probability, DefaultValue::Required, "P(Bad → Good)"),
            key("k", Kind::Probability, DefaultValue::Value("1"), "P(delivered | Good)"),
            key("h", Kind::Probability, DefaultValue::Value("0"), "P(delivered | Bad)"),
            key("gemodel", Kind::String, DefaultValue::Unset("none"), "netem's spelling `\"P1 P2 P3 P4\"` = `gemodel p r 1-h 1-k` in percent, instead of `p`, `r`, `k`, `h`")
                .allowed(GEMODEL_EXPECTED),
        ],
    };
    const DROP: DropReason = DropReason::LossGilbertElliott;
    const DRAWS: u64 = 2;
    // `tc qdisc change` keeps netem's Good/Bad state; only the parameters change.
    const KEEPS_STATE_ON_CHANGE: bool = true;
    /// The state the next packet arrives in.
    type State = GeState;
    type Raw = GilbertElliott;

    fn from_raw(raw: GilbertElliott) -> Result<Self, FieldError> {
        Ok(raw)
    }
    fn own_spelling(written: &toml::Table) -> Option<Result<Self, FieldError>> {
        let g = written.get("gemodel")?;
        let shown = match g {
            toml::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        if let Some(k) = ["p", "r", "k", "h"].iter().find(|k| written.contains_key(**k)) {
            return Some(Err((
                "gemodel",
                shown,
                format!("either gemodel or the keys p, r, k, h, not both (`{k}` is also given)"),
            )));
        }
        let Some((p, r, k, h)) = g.as_str().and_then(parse_gemodel) else {
            return Some(Err(("gemodel", shown, GEMODEL_EXPECTED.into())));
        };
        let m = GilbertElliott { p, r, k, h };
        // Its rules are reported at `gemodel`, with the string as written.
        Some(match m.check() {
            Ok(()) => Ok(m),
            Err((_, _, allowed)) => Err(("gemodel", shown, allowed)),
        })
    }
    fn check(&self) -> Result<(), FieldError> {
        if self.p + self.r <= 0.0 {
            return Err((
                "",
                format!("p = {:?}, r = {:?}", self.p, self.r),
                "p + r > 0 (with p = r = 0 the chain never leaves its first state)".into(),
            ));
        }
        Ok(())
    }
    /// `(1-k)·π_G + (1-h)·π_B` with `π_G = r/(p+r)`, `π_B = p/(p+r)` (NOTES-rfc §7).
    fn stationary_loss(&self) -> Option<f64> {
        let GilbertElliott { p, r, k, h } = *self;
        if p + r <= 0.0 {
            return None;
        }
        let (pg, pb) = (r / (p + r), p / (p + r));
        Some((1.0 - k) * pg + (1.0 - h) * pb)
    }
    fn start(&self) -> GeState {
        GeState::Good
    }
    fn judge(&self, state: &mut GeState, rng: &mut RngStream) -> bool {
        let GilbertElliott { p, r, k, h } = *self;
        // sch_netem.c `loss_gilb_ell`: first draw decides the transition, second the loss;
        // the loss uses the state the packet ARRIVED in (the switch is on the old state),
        // the new state applies from the next packet on.
        let u_transition = rng.uniform();
        let u_loss = rng.uniform();
        let (lost, next) = match *state {
            GeState::Good => (
                u_loss < 1.0 - k,
                if u_transition < p {
                    GeState::Bad
                } else {
                    GeState::Good
                },
            ),
            // netem tests `rnd > h` (u32 scale); `u < 1 - h` has the same law.
            GeState::Bad => (
                u_loss < 1.0 - h,
                if u_transition < r {
                    GeState::Good
                } else {
                    GeState::Bad
                },
            ),
        };
        *state = next;
        lost
    }
    fn memory(state: &GeState) -> LossState {
        LossState::GilbertElliott(*state)
    }
    fn example() -> Self {
        GilbertElliott {
            p: 0.01,
            r: 0.5,
            k: 1.0,
            h: 0.0,
        }
    }
}

/// `1 - percent/100`, exactly in decimal and then correctly rounded.
fn complement_percent(mantissa: u128, frac: u32) -> Option<f64> {
    let hundred = 100u128.checked_mul(10u128.checked_pow(frac)?)?;
    let rest = hundred.checked_sub(mantissa)?;
    format!("{rest}e-{}", frac + 2).parse().ok()
}

/// netem's `gemodel p r 1-h 1-k` (percent) -> (p, r, k, h).
fn parse_gemodel(s: &str) -> Option<(f64, f64, f64, f64)> {
    let tokens: Vec<&str> = s.split_whitespace().collect();
    if tokens.len() != 4 {
        return None;
    }
    let mut parsed = Vec::with_capacity(4);
    for tok in &tokens {
        let num = tok.strip_suffix('%').unwrap_or(tok);
        let (mantissa, frac) = parse_decimal(num)?;
        let hundred = 10u128.checked_pow(frac).and_then(|x| x.checked_mul(100))?;
        if mantissa > hundred {
            return None;
        }
        let direct: f64 = format!("{num}e-2").parse().ok()?;
        parsed.push((direct, mantissa, frac));
    }
    let p = parsed[0].0;
    let r = parsed[1].0;
    let h = complement_percent(parsed[2].1, parsed[2].2)?;
    let k = complement_percent(parsed[3].1, parsed[3].2)?;
    Some((p, r, k, h))
}

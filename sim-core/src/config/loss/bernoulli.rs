//! `loss = { model = "bernoulli", p }` (or `loss = 0.02` / `"2%"`): each packet lost
//! independently with probability `p` (netem `loss random`).

use super::{key, model_key, DropReason, FieldError, Kind, LossModelDef, LossState, RngStream};
use super::{DefaultValue, Table};
use serde::{Deserialize, Serialize};

/// Each packet lost independently with probability `p`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bernoulli {
    /// Loss probability.
    pub p: f64,
}

impl LossModelDef for Bernoulli {
    const NAME: &'static str = "bernoulli";
    const KEYS: Table = Table {
        id: "loss.bernoulli",
        path: "loss = { model = \"bernoulli\", ... }",
        what: "a loss table of model bernoulli",
        fields: &[
            model_key(),
            key(
                "p",
                Kind::Probability,
                DefaultValue::Required,
                "each packet is lost independently with probability `p`",
            ),
        ],
    };
    const DROP: DropReason = DropReason::LossBernoulli;
    const DRAWS: u64 = 1;
    type State = ();
    type Raw = Bernoulli;

    fn from_raw(raw: Bernoulli) -> Result<Self, FieldError> {
        Ok(raw)
    }
    fn stationary_loss(&self) -> Option<f64> {
        Some(self.p)
    }
    fn start(&self) {}
    fn judge(&self, _: &mut (), rng: &mut RngStream) -> bool {
        // Lost iff u < p: P(lost) = p exactly for u uniform on [0, 1).
        rng.uniform() < self.p
    }
    fn memory(_: &()) -> LossState {
        LossState::Memoryless
    }
    fn example() -> Self {
        Bernoulli { p: 0.02 }
    }
}

//! `loss = "none"` / `{ model = "none" }`: nothing is lost.

use super::{model_key, DropReason, FieldError, LossModelDef, LossState, RngStream, Table};
use serde::{Deserialize, Serialize};

/// No loss.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoLoss {}

impl LossModelDef for NoLoss {
    const NAME: &'static str = "none";
    const KEYS: Table = Table {
        id: "loss.none",
        path: "loss = { model = \"none\" }",
        what: "a loss table of model none",
        fields: &[model_key()],
    };
    // Never used: nothing is dropped.
    const DROP: DropReason = DropReason::LossBernoulli;
    const DRAWS: u64 = 0;
    type State = ();
    type Raw = NoLoss;

    fn from_raw(raw: NoLoss) -> Result<Self, FieldError> {
        Ok(raw)
    }
    fn stationary_loss(&self) -> Option<f64> {
        Some(0.0)
    }
    fn start(&self) {}
    fn judge(&self, _: &mut (), _: &mut RngStream) -> bool {
        false
    }
    fn memory(_: &()) -> LossState {
        LossState::Memoryless
    }
    fn example() -> Self {
        NoLoss {}
    }
}

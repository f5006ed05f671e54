//! `loss = { model = "periodic", every, offset }`: a deterministic pattern.

use super::{check_toml_int, key, model_key, DefaultValue, DropReason, FieldError, Kind};
use super::{LossModelDef, LossState, RngStream, Table};
use serde::{Deserialize, Serialize};

/// Deterministic: packets number `offset`, `offset + every`, ... are lost, counting (from
/// 0) the packets this link's loss stage judged since the model was last set: the packets
/// arriving at the link with `loss_position = ingress`, the packets serialized with
/// `egress`. A scheduled change of the loss model restarts the count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Periodic {
    /// Period in packets (>= 1).
    pub every: u64,
    /// Index of the first lost packet (< every).
    pub offset: u64,
}

/// The keys as written: `offset` may be left out.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeriodicKeys {
    every: u64,
    offset: Option<u64>,
}

impl LossModelDef for Periodic {
    const NAME: &'static str = "periodic";
    const KEYS: Table = Table {
        id: "loss.periodic",
        path: "loss = { model = \"periodic\", ... }",
        what: "a loss table of model periodic",
        fields: &[
            model_key(),
            key("every", Kind::Integer, DefaultValue::Required, "period in packets")
                .min("1", true)
                .allowed("an integer >= 1 (every n-th packet is lost)"),
            key(
                "offset",
                Kind::Integer,
                DefaultValue::Unset("`every` − 1"),
                "index of the first lost packet, in [0, every − 1]",
            )
            .min("0", true)
            .allowed("an integer in [0, every - 1]"),
        ],
    };
    const DROP: DropReason = DropReason::LossPeriodic;
    const DRAWS: u64 = 0;
    /// The 0-based index of the next packet.
    type State = u64;
    type Raw = PeriodicKeys;

    fn from_raw(raw: PeriodicKeys) -> Result<Self, FieldError> {
        Ok(Periodic {
            every: raw.every,
            // Default: the every-th packet (1-based) is lost, so `every = 200` loses
            // packets 200, 400, ... and never the very first one.
            offset: raw.offset.unwrap_or(raw.every.saturating_sub(1)),
        })
    }
    fn check(&self) -> Result<(), FieldError> {
        check_toml_int(self.every, "every")?;
        if self.offset >= self.every {
            return Err((
                "offset",
                self.offset.to_string(),
                format!(
                    "an integer in [0, every - 1] = [0, {}]",
                    self.every.saturating_sub(1)
                ),
            ));
        }
        Ok(())
    }
    fn stationary_loss(&self) -> Option<f64> {
        Some(1.0 / self.every as f64)
    }
    fn start(&self) -> u64 {
        0
    }
    fn judge(&self, index: &mut u64, _: &mut RngStream) -> bool {
        let i = *index;
        *index = index.wrapping_add(1);
        // `every == 0` is rejected by the rules; never lose rather than divide by zero if
        // it slips through.
        i.checked_rem(self.every) == Some(self.offset)
    }
    fn memory(index: &u64) -> LossState {
        LossState::Periodic { next_index: *index }
    }
    fn example() -> Self {
        Periodic {
            every: 10,
            offset: 9,
        }
    }
}

//! `loss = { model = "four_state", p13, p31, p32, p23, p14 }`: netem's 4-state Markov loss
//! (`loss state p13 p31 p32 p23 p14`, `net/sched/sch_netem.c` `loss_4state`, after
//! Salsano et al. 2012).

use super::{key, model_key, DefaultValue, DropReason, FieldError, Kind, LossModelDef};
use super::{LossState, RngStream, Table};
use serde::{Deserialize, Serialize};

/// netem's 4-state model: the transition is drawn first, and the packet is lost if the
/// state entered is 3 or 4.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FourState {
    /// P(1 -> 3).
    pub p13: f64,
    /// P(3 -> 1).
    pub p31: f64,
    /// P(3 -> 2).
    pub p32: f64,
    /// P(2 -> 3).
    pub p23: f64,
    /// P(1 -> 4).
    pub p14: f64,
}

/// State of netem's 4-state chain, numbered as in Salsano et al. and netem's enum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FourStateId {
    /// State 1 (`TX_IN_GAP_PERIOD`): packet received, in a gap period.
    TxInGap = 1,
    /// State 2 (`TX_IN_BURST_PERIOD`): packet received, inside a burst period.
    TxInBurst = 2,
    /// State 3 (`LOST_IN_BURST_PERIOD`): packet lost, inside a burst period.
    LostInBurst = 3,
    /// State 4 (`LOST_IN_GAP_PERIOD`): isolated loss in a gap period.
    LostInGap = 4,
}

impl FourStateId {
    /// Whether a packet that makes the chain enter this state is lost (states 3 and 4).
    pub fn is_loss(self) -> bool {
        matches!(self, FourStateId::LostInBurst | FourStateId::LostInGap)
    }
}

impl LossModelDef for FourState {
    const NAME: &'static str = "four_state";
    const KEYS: Table = Table {
        id: "loss.four_state",
        path: "loss = { model = \"four_state\", ... }",
        what: "a loss table of model four_state",
        fields: &[
            model_key(),
            key("p13", Kind::Probability, DefaultValue::Required, "P(1 → 3); `p13 + p14 ≤ 1`"),
            key("p31", Kind::Probability, DefaultValue::Required, "P(3 → 1); `p31 + p32 ≤ 1`"),
            key("p32", Kind::Probability, DefaultValue::Required, "P(3 → 2)"),
            key("p23", Kind::Probability, DefaultValue::Required, "P(2 → 3)"),
            key("p14", Kind::Probability, DefaultValue::Required, "P(1 → 4)"),
        ],
    };
    const DROP: DropReason = DropReason::LossFourState;
    const DRAWS: u64 = 1;
    /// The state entered by the last packet (state 1 before the first).
    type State = FourStateId;
    type Raw = FourState;

    fn from_raw(raw: FourState) -> Result<Self, FieldError> {
        Ok(raw)
    }
    fn check(&self) -> Result<(), FieldError> {
        let FourState {
            p13, p31, p32, p14, ..
        } = *self;
        if p13 + p14 > 1.0 {
            return Err((
                "",
                format!("p13 + p14 = {:?}", p13 + p14),
                "p13 + p14 <= 1 (they leave state 1)".into(),
            ));
        }
        if p31 + p32 > 1.0 {
            return Err((
                "",
                format!("p31 + p32 = {:?}", p31 + p32),
                "p31 + p32 <= 1 (they leave state 3)".into(),
            ));
        }
        Ok(())
    }
    /// `π_3 + π_4` of the chain's stationary distribution (loss is decided by the state
    /// entered), which solves to unnormalised `π_1 = 1, π_3 = p13/p31, π_2 = π_3·p32/p23,
    /// π_4 = p14` (NOTES-rfc §7); `None` when it is not unique (e.g. p31 = 0).
    fn stationary_loss(&self) -> Option<f64> {
        let FourState {
            p13,
            p31,
            p32,
            p23,
            p14,
        } = *self;
        if p13 == 0.0 {
            // State 1 is never left for 3; only isolated losses via state 4.
            return Some(p14 / (1.0 + p14));
        }
        if p31 == 0.0 || (p32 > 0.0 && p23 == 0.0) {
            return None;
        }
        let pi3 = p13 / p31;
        let pi2 = if p32 > 0.0 { pi3 * p32 / p23 } else { 0.0 };
        let pi4 = p14;
        Some((pi3 + pi4) / (1.0 + pi2 + pi3 + pi4))
    }
    fn start(&self) -> FourStateId {
        FourStateId::TxInGap
    }
    fn judge(&self, state: &mut FourStateId, rng: &mut RngStream) -> bool {
        let FourState {
            p13,
            p31,
            p32,
            p23,
            p14,
        } = *self;
        // sch_netem.c `loss_4state`: one draw picks the transition out of the current
        // state; the packet is lost iff the state ENTERED is 3 or 4. Partition of [0, 1)
        // in netem's order (contiguous, as after the 2026 "fix probability gaps in 4-state
        // loss model" patch):
        //   1: [0, p14) -> 4, [p14, p14 + p13) -> 3, else stay 1
        //   2: [0, p23) -> 3, else stay 2
        //   3: [0, p32) -> 2, [p32, p32 + p31) -> 1, else stay 3
        //   4: -> 1 (the draw is still consumed)
        let u = rng.uniform();
        let next = match *state {
            FourStateId::TxInGap => {
                if u < p14 {
                    FourStateId::LostInGap
                } else if u < p14 + p13 {
                    FourStateId::LostInBurst
                } else {
                    FourStateId::TxInGap
                }
            }
            FourStateId::TxInBurst => {
                if u < p23 {
                    FourStateId::LostInBurst
                } else {
                    FourStateId::TxInBurst
                }
            }
            FourStateId::LostInBurst => {
                if u < p32 {
                    FourStateId::TxInBurst
                } else if u < p32 + p31 {
                    FourStateId::TxInGap
                } else {
                    FourStateId::LostInBurst
                }
            }
            FourStateId::LostInGap => FourStateId::TxInGap,
        };
        *state = next;
        next.is_loss()
    }
    fn memory(state: &FourStateId) -> LossState {
        LossState::FourState(*state)
    }
    fn example() -> Self {
        FourState {
            p13: 0.01,
            p31: 0.5,
            p32: 0.1,
            p23: 0.2,
            p14: 0.001,
        }
    }
}

//! Why a packet left the network undelivered ([`DropReason`]): declared in the config layer
//! so that the extension points that drop packets (a loss model in [`super::loss`]) name
//! their reason next to their code; its table of names and counters is
//! `metrics::DROP_REASONS`.

use serde::{Deserialize, Serialize};

/// Why a packet left the network without being delivered.
///
/// The explicit discriminants are the reasons' **frozen codes** ([`DropReason::code`],
/// hashed into the run digest; the derived order follows them). Never change or reuse one;
/// a new reason takes the next unused code wherever it is declared, a row in
/// [`crate::metrics::DROP_REASONS`] and a counter in [`crate::metrics::DropCounts`] (`metrics::tests` pins the codes and
/// checks that the table lists every reason once).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum DropReason {
    /// Drop-tail queue full.
    QueueOverflow = 0,
    /// Bernoulli loss stage.
    LossBernoulli = 1,
    /// Periodic loss stage.
    LossPeriodic = 2,
    /// Gilbert-Elliott loss stage.
    LossGilbertElliott = 3,
    /// 4-state loss stage.
    LossFourState = 4,
    /// Corrupted on a link; discarded by the receiving host.
    Corruption = 5,
    /// Queued or propagating on an access link when the host switched away from it.
    Handover = 6,
    /// No route to the destination address (e.g. an address abandoned after a handover).
    NoRoute = 7,
    /// The destination host has no endpoint on that port.
    NoEndpoint = 8,
}

impl DropReason {
    /// The reason's frozen code, hashed into the run digest.
    pub const fn code(self) -> u8 {
        self as u8
    }
}

//! Why a packet left the network undelivered ([`DropReason`]), one declared table: each
//! reason is one line of the `drop_reasons!` list below (its frozen code, its name, whether
//! a loss stage drops it, one line of doc), from which come the enum, its counter in
//! [`DropCounts`] (a field: the JSON key of every run's `drops`) and its row in
//! [`DROP_REASONS`]. Declared in the config layer so that the extension points that drop
//! packets (a loss model in [`super::loss`]) name their reason next to their code; the
//! sums and lists over reasons are `metrics`'s (`DropCounts::total`, `random_loss`,
//! `nonzero`, ...), computed from the table.

use serde::{Deserialize, Serialize};

/// Declares the drop reasons, one line each, in output order:
/// `Variant = code, counter_field, random_loss, "doc";`, optionally preceded by attributes
/// of the counter field (a reason added after the output format was frozen carries
/// `#[serde(default, skip_serializing_if = "is_zero")]`, so that its key appears only in a
/// run that counted it and every older run's JSON is unchanged). The codes are **frozen**: hashed
/// into the run digest, never changed or reused; a new reason takes the next unused code
/// wherever its line goes (`metrics::tests` pins the codes and checks each name is the
/// reason's serde name).
macro_rules! drop_reasons {
    ($($(#[$attr:meta])* $variant:ident = $code:literal, $field:ident, $random:literal, $doc:literal;)*) => {
        /// Why a packet left the network without being delivered.
        ///
        /// The explicit discriminants are the reasons' frozen codes ([`DropReason::code`],
        /// hashed into the run digest; the derived order follows them).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        #[repr(u8)]
        pub enum DropReason {
            $(
                #[doc = $doc]
                $variant = $code,
            )*
        }

        /// Drop counters by reason (one per row of [`DROP_REASONS`], in its order).
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
        pub struct DropCounts {
            $(
                #[doc = concat!("See [`DropReason::", stringify!($variant), "`].")]
                $(#[$attr])*
                pub $field: u64,
            )*
        }

        /// Every drop reason, in output order (the order of the [`DropCounts`] fields).
        /// Every sum or list over drop reasons is computed from it.
        pub const DROP_REASONS: [DropReasonDef; [$($code),*].len()] = [$(DropReasonDef {
            reason: DropReason::$variant,
            name: stringify!($field),
            random_loss: $random,
            counter: |d| &mut d.$field,
        }),*];
    };
}

drop_reasons! {
    QueueOverflow = 0, queue_overflow, false, "Drop-tail queue full.";
    LossBernoulli = 1, loss_bernoulli, true, "Bernoulli loss stage.";
    LossPeriodic = 2, loss_periodic, true, "Periodic loss stage.";
    LossGilbertElliott = 3, loss_gilbert_elliott, true, "Gilbert-Elliott loss stage.";
    LossFourState = 4, loss_four_state, true, "4-state loss stage.";
    Corruption = 5, corruption, false, "Corrupted on a link; discarded by the receiving host.";
    Handover = 6, handover, false, "Queued or propagating on an access link when the host switched away from it.";
    NoRoute = 7, no_route, false, "No route to the destination address (e.g. an address abandoned after a handover).";
    NoEndpoint = 8, no_endpoint, false, "The destination host has no endpoint on that port.";
    #[serde(default, skip_serializing_if = "is_zero")]
    Aqm = 9, aqm, false, "Not ECN-capable, dropped by a marking queue's AQM where an ECN-capable packet would have been marked CE (RFC 3168 §5).";
}

/// `skip_serializing_if` of the counters added after the output format was frozen.
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl DropReason {
    /// The reason's frozen code, hashed into the run digest.
    pub const fn code(self) -> u8 {
        self as u8
    }
}

/// One drop reason: its name, whether it is random loss, and its counter in [`DropCounts`]
/// (its code is [`DropReason::code`]).
#[derive(Clone, Copy, Debug)]
pub struct DropReasonDef {
    /// The reason.
    pub reason: DropReason,
    /// The name every output spells: the serde name of the reason and the JSON key of its
    /// counter.
    pub name: &'static str,
    /// Dropped by a loss stage (any model): counted by `DropCounts::random_loss`.
    pub random_loss: bool,
    /// The reason's counter.
    pub counter: fn(&mut DropCounts) -> &mut u64,
}

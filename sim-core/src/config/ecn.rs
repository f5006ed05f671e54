//! A link queue's ECN marking (RFC 3168 §5; issue 30 item 3): above a threshold the queue
//! marks an ECN-capable packet CE instead of dropping it, and drops a packet that is not
//! ECN-capable (`aqm` drop reason) where it would have marked it.
//!
//! Two modes:
//! - **step**: every packet offered while the backlog is at or above `threshold` gets the
//!   congestion signal (the step marking threshold of L4S, RFC 9332 §5.2 / RFC 9330 §4.2,
//!   and of DCTCP's switches, RFC 8257 §3.1);
//! - **red**: Random Early Detection (Floyd & Jacobson 1993, "Random Early Detection
//!   Gateways for Congestion Avoidance"; RFC 2309 / RFC 7567): an EWMA `avg` of the backlog
//!   with weight `weight`; below `min` no signal, at or above `max` every packet, in between
//!   with probability `p_b = max_p (avg − min) / (max − min)` spread by the count since the
//!   last signal, `p_a = p_b / (1 − count · p_b)`.
//!
//! The backlog is what waits for the serializer, in bytes (datagram size + overhead), when
//! the packet is offered (before it joins). A threshold written as a time is that many
//! seconds of the link's current rate (`t · rate / 8` bytes): the queuing delay the packet
//! would see, i.e. its sojourn time at a constant rate.

use crate::time::SimDuration;
use crate::units::{format_duration, parse_bytes, parse_duration};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A backlog level: a queuing delay at the link's current rate, or bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLevel {
    /// A queuing delay (`"5ms"`): `t · rate / 8` bytes at the rate in force.
    Delay(SimDuration),
    /// Bytes waiting (`"30KB"` or an integer).
    Bytes(u64),
}

/// What a [`QueueLevel`] accepts, for error messages.
pub const LEVEL_ALLOWED: &str =
    "a queuing delay such as \"5ms\" (at the link's rate), or a size such as \"30KB\" or an integer number of bytes";

impl QueueLevel {
    /// The level in bytes at `rate_bps` (a delay at a rate of 0 is 0 bytes: a link that is
    /// down has every waiting packet over any delay threshold).
    pub fn bytes(self, rate_bps: u64) -> u64 {
        match self {
            QueueLevel::Bytes(b) => b,
            QueueLevel::Delay(d) => {
                let b = d.as_nanos() as u128 * rate_bps as u128 / 8_000_000_000;
                u64::try_from(b).unwrap_or(u64::MAX)
            }
        }
    }

    /// Parses `"5ms"` (a delay), `"30KB"` (a size).
    pub fn parse(s: &str) -> Option<QueueLevel> {
        if let Ok(d) = parse_duration(s.trim()) {
            return Some(QueueLevel::Delay(d));
        }
        parse_bytes(s.trim()).ok().map(|b| QueueLevel::Bytes(b.0))
    }

    fn is_zero(self) -> bool {
        matches!(
            self,
            QueueLevel::Delay(SimDuration(0)) | QueueLevel::Bytes(0)
        )
    }
}

impl Serialize for QueueLevel {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            QueueLevel::Delay(d) => s.serialize_str(&format_duration(d)),
            QueueLevel::Bytes(b) => s.serialize_u64(b),
        }
    }
}

impl<'de> Deserialize<'de> for QueueLevel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            Int(u64),
            Text(String),
        }
        match Repr::deserialize(d)? {
            Repr::Int(b) => Ok(QueueLevel::Bytes(b)),
            Repr::Text(s) => QueueLevel::parse(&s).ok_or_else(|| {
                serde::de::Error::custom(format!("{s:?}: expected {LEVEL_ALLOWED}"))
            }),
        }
    }
}

/// A queue's ECN marking (scenario key `ecn` of a link).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case", deny_unknown_fields)]
pub enum EcnMarking {
    /// Signal every packet offered while the backlog is at or above `threshold`.
    Step {
        /// The marking threshold.
        threshold: QueueLevel,
    },
    /// Random Early Detection (Floyd & Jacobson 1993) on the averaged backlog.
    Red {
        /// `min_th`: no signal below it.
        min: QueueLevel,
        /// `max_th`: every packet signalled at or above it.
        max: QueueLevel,
        /// `max_p`: the signal probability as `avg` reaches `max`, in (0, 1].
        max_p: f64,
        /// `w_q`: the EWMA weight of each new backlog sample, in (0, 1] (Floyd & Jacobson
        /// suggest 0.002).
        weight: f64,
    },
}

/// RED's default `w_q` (Floyd & Jacobson 1993, §11: "w_q = 0.002").
pub const RED_DEFAULT_WEIGHT: f64 = 0.002;

/// A rule an [`EcnMarking`] breaks: `(key, value, allowed)`.
pub type EcnError = (&'static str, String, String);

impl EcnMarking {
    /// The rules of the parameters.
    pub fn check(&self) -> Result<(), EcnError> {
        match *self {
            EcnMarking::Step { threshold } => {
                if threshold.is_zero() {
                    return Err((
                        "threshold",
                        level_text(threshold),
                        format!("{LEVEL_ALLOWED}, > 0"),
                    ));
                }
            }
            EcnMarking::Red {
                min,
                max,
                max_p,
                weight,
            } => {
                let ordered = match (min, max) {
                    (QueueLevel::Delay(a), QueueLevel::Delay(b)) => a < b,
                    (QueueLevel::Bytes(a), QueueLevel::Bytes(b)) => a < b,
                    _ => {
                        return Err((
                            "max",
                            level_text(max),
                            "a level in the same unit as `min` (both delays or both sizes)"
                                .to_string(),
                        ))
                    }
                };
                if !ordered {
                    return Err((
                        "max",
                        level_text(max),
                        format!("a level above `min` = {}", level_text(min)),
                    ));
                }
                if !(max_p > 0.0 && max_p <= 1.0) {
                    return Err((
                        "max_p",
                        format!("{max_p}"),
                        "a probability in (0, 1]".into(),
                    ));
                }
                if !(weight > 0.0 && weight <= 1.0) {
                    return Err(("weight", format!("{weight}"), "a number in (0, 1]".into()));
                }
            }
        }
        Ok(())
    }
}

fn level_text(l: QueueLevel) -> String {
    match l {
        QueueLevel::Delay(d) => format_duration(d),
        QueueLevel::Bytes(b) => format!("{b}"),
    }
}

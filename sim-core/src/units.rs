//! Quantities with units, as written in scenario files: rates (`"100Mbps"`), times
//! (`"38ms"`), sizes (`"1MB"`). Parsing is exact (decimal strings are scaled in integer
//! arithmetic, never through floats), and formatting picks the largest unit that
//! represents the value exactly, so `format(parse(s))` round-trips.
//!
//! Units: rates `bps`, `kbps`, `Mbps`, `Gbps` (powers of 1000; `bit/s` spellings too);
//! times `ns`, `us`, `ms`, `s`, `min`; sizes `B`, `KB`, `MB`, `GB` (powers of 1000) and
//! `KiB`, `MiB`, `GiB` (powers of 1024).

use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Rate(pub u64);

/// A size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Bytes(pub u64);

impl Rate {
    /// Bits per second.
    pub const fn bps(self) -> u64 {
        self.0
    }
    /// Time to serialize `bytes` at this rate, rounded up to the next nanosecond.
    /// `None` if the rate is 0.
    pub fn tx_time(self, bytes: u64) -> Option<SimDuration> {
        if self.0 == 0 {
            return None;
        }
        let bits = bytes as u128 * 8 * 1_000_000_000;
        Some(SimDuration(bits.div_ceil(self.0 as u128) as u64))
    }
}

/// Why a quantity did not parse: the allowed form, for the caller to put next to the
/// field name and value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitError {
    /// What is allowed, e.g. "a rate such as \"100Mbps\" (units bps, kbps, Mbps, Gbps)".
    pub expected: String,
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "expected {}", self.expected)
    }
}

/// Splits `"12.5ms"` into ("12.5", "ms"), trimming spaces.
fn split_number(s: &str) -> Option<(&str, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    if end == 0 {
        return None;
    }
    Some((&s[..end], s[end..].trim()))
}

/// `number * scale` exactly, for a decimal `number` such as "12.5". `None` if the result
/// is not an integer or overflows.
fn scale_decimal(number: &str, scale: u128) -> Option<u128> {
    let (int, frac) = match number.split_once('.') {
        Some((i, f)) => (i, f),
        None => (number, ""),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.chars().all(|c| c.is_ascii_digit()) || !frac.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    if frac.len() > 18 {
        return None;
    }
    let digits = format!("{int}{frac}");
    let mantissa: u128 = if digits.is_empty() {
        0
    } else {
        digits.parse().ok()?
    };
    let denom = 10u128.pow(frac.len() as u32);
    let num = mantissa.checked_mul(scale)?;
    if num % denom != 0 {
        return None;
    }
    Some(num / denom)
}

const RATE_EXPECTED: &str =
    "a rate such as \"100Mbps\" (units bps, kbps, Mbps, Gbps; an integer number of bit/s)";
const TIME_EXPECTED: &str =
    "a time such as \"38ms\" (units ns, us, ms, s, min; an integer number of nanoseconds)";
const SIZE_EXPECTED: &str =
    "a size such as \"1MB\" (units B, KB, MB, GB = powers of 1000, KiB, MiB, GiB = powers of 1024; an integer number of bytes)";

/// The error for `s`, which did not parse as a quantity described by `expected`: says
/// when the value is negative, or when it is a number with a known unit but above the
/// largest value (`max`, 2^64 - 1 of the base unit).
fn unit_error(s: &str, expected: &str, scale: Option<u128>, max: &str) -> UnitError {
    let t = s.trim();
    let expected = if t.starts_with('-') {
        format!("{expected}, not negative")
    } else if let (Some(scale), Some((num, _))) = (scale, split_number(t)) {
        // Digits with a known unit that did not scale to a u64: too large, unless the
        // value is below the maximum and only not a whole number of the base unit.
        let int = num.split('.').next().unwrap_or("");
        let big = int.len() > 20
            || int
                .parse::<u128>()
                .is_ok_and(|n| n.saturating_mul(scale) > u64::MAX as u128);
        if big {
            format!("{expected}, at most {max}")
        } else {
            expected.to_string()
        }
    } else {
        expected.to_string()
    };
    UnitError { expected }
}

/// A negative integer where a quantity is expected: the text of the error.
pub fn negative_error(expected: &str) -> String {
    format!("{expected}, not negative")
}

/// Parses a rate such as `"100Mbps"`, `"1.5 Gbps"`, `"64kbit/s"`.
pub fn parse_rate(s: &str) -> Result<Rate, UnitError> {
    let max = "18446744073709551615bps";
    let err = || unit_error(s, RATE_EXPECTED, None, max);
    let (num, unit) = split_number(s).ok_or_else(err)?;
    let scale: u128 = match unit {
        "bps" | "bit/s" | "b/s" => 1,
        "kbps" | "Kbps" | "kbit/s" => 1_000,
        "Mbps" | "mbps" | "Mbit/s" => 1_000_000,
        "Gbps" | "gbps" | "Gbit/s" => 1_000_000_000,
        _ => return Err(err()),
    };
    let err = || unit_error(s, RATE_EXPECTED, Some(scale), max);
    let v = scale_decimal(num, scale).ok_or_else(err)?;
    u64::try_from(v).map(Rate).map_err(|_| err())
}

/// Parses a time such as `"38ms"`, `"1.5s"`, `"250us"`.
pub fn parse_duration(s: &str) -> Result<SimDuration, UnitError> {
    let max = "18446744073709551615ns (about 584 years)";
    let err = || unit_error(s, TIME_EXPECTED, None, max);
    let (num, unit) = split_number(s).ok_or_else(err)?;
    let scale: u128 = match unit {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "min" => 60_000_000_000,
        _ => return Err(err()),
    };
    let err = || unit_error(s, TIME_EXPECTED, Some(scale), max);
    let v = scale_decimal(num, scale).ok_or_else(err)?;
    u64::try_from(v).map(SimDuration).map_err(|_| err())
}

/// Parses a size such as `"1MB"`, `"1250B"`, `"64KiB"`.
pub fn parse_bytes(s: &str) -> Result<Bytes, UnitError> {
    let max = "18446744073709551615B";
    let err = || unit_error(s, SIZE_EXPECTED, None, max);
    let (num, unit) = split_number(s).ok_or_else(err)?;
    let scale: u128 = match unit {
        "B" => 1,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        _ => return Err(err()),
    };
    let err = || unit_error(s, SIZE_EXPECTED, Some(scale), max);
    let v = scale_decimal(num, scale).ok_or_else(err)?;
    u64::try_from(v).map(Bytes).map_err(|_| err())
}

fn format_scaled(v: u64, units: &[(u64, &str)]) -> String {
    for &(scale, name) in units {
        if v != 0 && v.is_multiple_of(scale) {
            return format!("{}{}", v / scale, name);
        }
    }
    // Not an exact multiple of any larger unit: the last entry has scale 1.
    let (_, base) = units[units.len() - 1];
    format!("{v}{base}")
}

/// Formats a rate exactly, e.g. `"100Mbps"`.
pub fn format_rate(r: Rate) -> String {
    format_scaled(
        r.0,
        &[
            (1_000_000_000, "Gbps"),
            (1_000_000, "Mbps"),
            (1_000, "kbps"),
            (1, "bps"),
        ],
    )
}

/// Formats a duration exactly, e.g. `"38ms"`.
pub fn format_duration(d: SimDuration) -> String {
    format_scaled(
        d.0,
        &[
            (1_000_000_000, "s"),
            (1_000_000, "ms"),
            (1_000, "us"),
            (1, "ns"),
        ],
    )
}

/// Formats a size exactly, e.g. `"1MB"`.
pub fn format_bytes(b: Bytes) -> String {
    format_scaled(
        b.0,
        &[
            (1_000_000_000, "GB"),
            (1 << 30, "GiB"),
            (1_000_000, "MB"),
            (1 << 20, "MiB"),
            (1_000, "KB"),
            (1 << 10, "KiB"),
            (1, "B"),
        ],
    )
}

macro_rules! string_serde {
    ($ty:ty, $fmt:expr, $parse:expr) => {
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&$fmt(*self))
            }
        }
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                $parse(&s).map_err(|e| serde::de::Error::custom(format!("{s:?}: {e}")))
            }
        }
    };
}

string_serde!(Rate, format_rate, parse_rate);
string_serde!(Bytes, format_bytes, parse_bytes);
string_serde!(SimDuration, format_duration, parse_duration);
string_serde!(
    SimTime,
    |t: SimTime| format_duration(SimDuration(t.0)),
    |s: &str| parse_duration(s).map(|d| SimTime(d.0))
);

/// Serde helpers for byte sizes written as an integer (bytes) or a unit string
/// (`"46720B"`, `"1.25MB"`, `"16KiB"`); they serialise as integers. Used with
/// `#[serde(deserialize_with = "...")]` by the typed configs.
pub mod serde_size {
    use serde::{Deserialize, Deserializer};

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum IntOrStr {
        Int(u64),
        Str(String),
    }

    fn conv<E: serde::de::Error>(v: IntOrStr) -> Result<u64, E> {
        match v {
            IntOrStr::Int(n) => Ok(n),
            IntOrStr::Str(s) => crate::units::parse_bytes(&s)
                .map(|b| b.0)
                .map_err(|e| E::custom(format!("{s:?}: {e}"))),
        }
    }

    /// A required size.
    pub fn de<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        conv(IntOrStr::deserialize(d)?)
    }

    /// An optional size.
    pub fn de_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        Option::<IntOrStr>::deserialize(d)?.map(conv).transpose()
    }
}

/// A decimal number written with digits and at most one point: (mantissa, digits after the
/// point), e.g. "12.5" -> (125, 1). `None` for anything else (signs, exponents, nan).
pub fn parse_decimal(s: &str) -> Option<(u128, u32)> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if (int.is_empty() && frac.is_empty())
        || !int.chars().all(|c| c.is_ascii_digit())
        || !frac.chars().all(|c| c.is_ascii_digit())
        || frac.len() > 30
    {
        return None;
    }
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    let mantissa = if digits.is_empty() {
        0
    } else {
        digits.parse().ok()?
    };
    Some((mantissa, frac.len() as u32))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn parses_and_round_trips() {
        assert_eq!(parse_rate("100Mbps").unwrap(), Rate(100_000_000));
        assert_eq!(parse_rate("1.5 Gbps").unwrap(), Rate(1_500_000_000));
        assert_eq!(parse_duration("38ms").unwrap(), SimDuration(38_000_000));
        assert_eq!(parse_duration("0.5s").unwrap(), SimDuration(500_000_000));
        assert_eq!(parse_bytes("1MB").unwrap(), Bytes(1_000_000));
        assert_eq!(parse_bytes("64KiB").unwrap(), Bytes(65_536));
        for s in ["100Mbps", "1bps", "2500kbps"] {
            assert_eq!(format_rate(parse_rate(s).unwrap()), s);
        }
        for s in ["38ms", "1s", "1ns", "250us"] {
            assert_eq!(format_duration(parse_duration(s).unwrap()), s);
        }
        assert_eq!(format_bytes(Bytes(1250)), "1250B");
        assert_eq!(format_bytes(Bytes(0)), "0B");
    }
    #[test]
    fn rejects_bad_units_and_fractions() {
        assert!(parse_rate("100").is_err());
        assert!(parse_rate("100MB").is_err());
        assert!(parse_duration("1.5ns").is_err());
        assert!(parse_bytes("-1B").is_err());
        assert!(parse_duration("ms").is_err());
        assert!(parse_bytes("1.2.3B").is_err());
    }
    #[test]
    fn tx_time_rounds_up() {
        // 1250 B at 100 Mbit/s = 100 us exactly; 1 B at 3 bit/s = 8/3 s rounded up.
        assert_eq!(
            Rate(100_000_000).tx_time(1250),
            Some(SimDuration::from_micros(100))
        );
        assert_eq!(Rate(3).tx_time(1), Some(SimDuration(2_666_666_667)));
        assert_eq!(Rate(0).tx_time(1), None);
    }
}

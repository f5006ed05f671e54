//! Trace-driven link capacity in the Mahimahi format (`rate = { trace = "file.trace" }`).
//!
//! A trace file has one line per **delivery opportunity** of [`OPPORTUNITY_BYTES`] bytes:
//! an integer millisecond timestamp, the timestamps non-decreasing (several lines may share
//! a millisecond: several opportunities then). The trace repeats after its last timestamp:
//! cycle `c` offers the opportunity of line `i` at `c × last + ms[i]` (Mahimahi `mm-link`).
//! How a link spends its opportunities is in [`crate::link`].
//!
//! sim-core reads no files: whoever loads a scenario (the CLI, relative to the scenario
//! file's directory) hands the file's text to
//! [`crate::scenario::parse_str_with_traces`], which parses it with [`parse_trace`] and
//! writes the timestamps into the link (`opportunities_ms`) with their [`digest`]. A
//! resolved config therefore carries the whole trace: it reruns without the file, and
//! `run --json` shows what ran.

use crate::hash::Fnv1a64;
use crate::units::Rate;
use serde::{Deserialize, Serialize};

/// Bytes one delivery opportunity carries (an Ethernet MTU, as Mahimahi's traces assume).
pub const OPPORTUNITY_BYTES: u64 = 1500;

/// The most opportunities (lines) a trace may hold.
pub const MAX_TRACE_LINES: usize = 2_000_000;

/// The largest timestamp a trace may hold, in milliseconds (one day).
pub const MAX_TRACE_MS: u64 = 86_400_000;

/// What a trace line must be, for error messages.
pub const TRACE_LINE_ALLOWED: &str =
    "one integer millisecond timestamp per line (Mahimahi format), non-decreasing";

/// A link's capacity as a trace of delivery opportunities.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkTrace {
    /// The trace file as the scenario names it (relative to the scenario file).
    pub trace: String,
    /// The opportunities: one millisecond timestamp each, non-decreasing, the last > 0.
    pub opportunities_ms: Vec<u64>,
    /// [`digest`] of `opportunities_ms`, to tell traces apart in run output.
    pub digest: String,
}

/// Why a trace's text is not a valid trace: the 1-based line (0 for the whole file) and
/// what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// 1-based line number; 0 when the error is about the whole trace.
    pub line: usize,
    /// What was found and what is expected.
    pub message: String,
}

/// Parses a trace file's text: one integer per line (blank lines are skipped, as Mahimahi's
/// reader skips white space). Errors name the line.
pub fn parse_trace(text: &str) -> Result<Vec<u64>, TraceError> {
    let mut out: Vec<u64> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let t = raw.trim();
        if t.is_empty() {
            continue;
        }
        let shown: String = t.chars().take(40).collect();
        let ms: u64 = match t.parse() {
            Ok(ms) if t.bytes().all(|b| b.is_ascii_digit()) => ms,
            _ => {
                return Err(TraceError {
                    line,
                    message: format!("{shown:?} is not an integer number of milliseconds"),
                })
            }
        };
        if ms > MAX_TRACE_MS {
            return Err(TraceError {
                line,
                message: format!("{ms} ms is beyond the limit of {MAX_TRACE_MS} ms (one day)"),
            });
        }
        if let Some(&prev) = out.last() {
            if ms < prev {
                return Err(TraceError {
                    line,
                    message: format!(
                        "{ms} is smaller than the previous timestamp {prev}: timestamps must be non-decreasing"
                    ),
                });
            }
        }
        if out.len() == MAX_TRACE_LINES {
            return Err(TraceError {
                line,
                message: format!("more than {MAX_TRACE_LINES} opportunities"),
            });
        }
        out.push(ms);
    }
    check_opportunities(&out)?;
    Ok(out)
}

/// The rules of a list of opportunities (also applied to one written inline in a resolved
/// config): non-empty, non-decreasing, bounded, the last timestamp (the period) > 0.
pub fn check_opportunities(ms: &[u64]) -> Result<(), TraceError> {
    let Some(&last) = ms.last() else {
        return Err(TraceError {
            line: 0,
            message: "an empty trace: no delivery opportunity".into(),
        });
    };
    if ms.len() > MAX_TRACE_LINES {
        return Err(TraceError {
            line: MAX_TRACE_LINES + 1,
            message: format!("more than {MAX_TRACE_LINES} opportunities"),
        });
    }
    for (i, w) in ms.windows(2).enumerate() {
        if w[1] < w[0] {
            return Err(TraceError {
                line: i + 2,
                message: format!(
                    "{} is smaller than the previous timestamp {}: timestamps must be non-decreasing",
                    w[1], w[0]
                ),
            });
        }
    }
    if last > MAX_TRACE_MS {
        return Err(TraceError {
            line: ms.len(),
            message: format!("{last} ms is beyond the limit of {MAX_TRACE_MS} ms (one day)"),
        });
    }
    if last == 0 {
        return Err(TraceError {
            line: ms.len(),
            message: "the last timestamp is 0: the trace repeats every last-timestamp ms, so it must be > 0".into(),
        });
    }
    Ok(())
}

/// The digest of a list of opportunities: `fnv1a64:` and 16 hex digits of the 64-bit
/// FNV-1a hash of the timestamps as little-endian `u64`s.
pub fn digest(ms: &[u64]) -> String {
    let mut h = Fnv1a64::new();
    for m in ms {
        h.write(&m.to_le_bytes());
    }
    format!("fnv1a64:{:016x}", h.finish())
}

impl LinkTrace {
    /// A trace named `trace` from its checked opportunities (computes the digest).
    pub fn new(trace: &str, opportunities_ms: Vec<u64>) -> Self {
        let digest = digest(&opportunities_ms);
        LinkTrace {
            trace: trace.to_string(),
            opportunities_ms,
            digest,
        }
    }

    /// Checks the opportunities and that the digest is theirs.
    pub fn check(&self) -> Result<(), TraceError> {
        check_opportunities(&self.opportunities_ms)?;
        let d = digest(&self.opportunities_ms);
        if d != self.digest {
            return Err(TraceError {
                line: 0,
                message: format!(
                    "digest {:?} does not match the opportunities (their digest is {d:?})",
                    self.digest
                ),
            });
        }
        Ok(())
    }

    /// The period of the trace (its last timestamp), in nanoseconds.
    pub fn period_ns(&self) -> u64 {
        self.opportunities_ms.last().copied().unwrap_or(0) * 1_000_000
    }

    /// The trace's mean rate: `opportunities × 1500 B × 8 / period` (floor, at least
    /// 1 bit/s). It stands for the link's rate wherever one rate is needed (a `"1BDP"`
    /// queue, the link's reported rate).
    pub fn mean_rate(&self) -> Rate {
        let n = self.opportunities_ms.len() as u128;
        let period_ms = self.opportunities_ms.last().copied().unwrap_or(0) as u128;
        if period_ms == 0 {
            return Rate(1);
        }
        let bps = n * OPPORTUNITY_BYTES as u128 * 8 * 1000 / period_ms;
        Rate(bps.clamp(1, u64::MAX as u128) as u64)
    }

    /// The simulated time (ns) of opportunity `index`, counting across cycles (`index / n`
    /// is the cycle). Saturates far in the future.
    pub fn opportunity_ns(&self, index: u64) -> u64 {
        let n = self.opportunities_ms.len() as u64;
        let cycle = index / n;
        let ms = self.opportunities_ms[(index % n) as usize];
        cycle
            .saturating_mul(self.period_ns())
            .saturating_add(ms * 1_000_000)
    }

    /// The index of the first opportunity strictly after `t` ns.
    pub fn first_after(&self, t: u64) -> u64 {
        let n = self.opportunities_ms.len() as u64;
        let period = self.period_ns();
        let cycle = t / period;
        let within = t - cycle * period;
        let pos = self
            .opportunities_ms
            .partition_point(|&ms| ms * 1_000_000 <= within) as u64;
        let mut i = cycle.saturating_mul(n).saturating_add(pos);
        // The next cycle's first opportunities may fall at the same instant as this cycle's
        // last (at `c × period + 0`): step past anything not strictly after `t`.
        while self.opportunity_ns(i) <= t && i < u64::MAX {
            i += 1;
        }
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_names_bad_lines() {
        assert_eq!(parse_trace("1\n1\n\n3\n").unwrap(), vec![1, 1, 3]);
        let e = parse_trace("1\n2\nx3\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("\"x3\""), "{}", e.message);
        let e = parse_trace("1\n5\n4\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("non-decreasing"), "{}", e.message);
        assert_eq!(parse_trace("").unwrap_err().line, 0);
        assert_eq!(parse_trace("\n \n").unwrap_err().line, 0);
        assert_eq!(parse_trace("-1\n").unwrap_err().line, 1);
        assert_eq!(parse_trace("1.5\n").unwrap_err().line, 1);
        assert_eq!(parse_trace("+2\n").unwrap_err().line, 1);
        assert_eq!(parse_trace("0\n0\n").unwrap_err().line, 2);
        assert_eq!(
            parse_trace("99999999999999999999999\n").unwrap_err().line,
            1
        );
        assert_eq!(parse_trace("86400001\n").unwrap_err().line, 1);
        let long = "1\n".repeat(MAX_TRACE_LINES + 1);
        assert_eq!(parse_trace(&long).unwrap_err().line, MAX_TRACE_LINES + 1);
    }

    #[test]
    fn digest_is_deterministic_and_checked() {
        let a = LinkTrace::new("a.trace", parse_trace("1\n2\n2\n10\n").unwrap());
        let b = LinkTrace::new("b.trace", parse_trace("1\n2\n2\n10\n").unwrap());
        assert_eq!(a.digest, b.digest);
        assert!(a.digest.starts_with("fnv1a64:") && a.digest.len() == 8 + 16);
        let c = LinkTrace::new("a.trace", vec![1, 2, 3, 10]);
        assert_ne!(a.digest, c.digest);
        a.check().unwrap();
        let mut bad = a.clone();
        bad.digest = c.digest.clone();
        assert!(bad.check().is_err());
    }

    #[test]
    fn mean_rate_and_repetition() {
        // 4 opportunities every 10 ms: 4 × 12000 bit / 10 ms = 4.8 Mbit/s.
        let t = LinkTrace::new("t", vec![1, 2, 2, 10]);
        assert_eq!(t.mean_rate(), Rate(4_800_000));
        assert_eq!(t.opportunity_ns(0), 1_000_000);
        assert_eq!(t.opportunity_ns(3), 10_000_000);
        assert_eq!(t.opportunity_ns(4), 11_000_000);
        assert_eq!(t.opportunity_ns(7), 20_000_000);
        assert_eq!(t.first_after(0), 0);
        assert_eq!(t.first_after(1_000_000), 1);
        assert_eq!(t.first_after(2_000_000), 3);
        assert_eq!(t.first_after(10_000_000), 4);
        assert_eq!(t.first_after(10_999_999), 4);
        // A trace starting at 0: the next cycle's first opportunity coincides with the last.
        let z = LinkTrace::new("z", vec![0, 5]);
        assert_eq!(z.opportunity_ns(2), 5_000_000);
        assert_eq!(z.first_after(5_000_000), 3);
    }
}

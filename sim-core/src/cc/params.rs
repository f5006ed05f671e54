//! [`CcParams`]: every parameter of a sender's congestion control and pacing, in one
//! struct a transport's configuration embeds (`#[serde(flatten)]`), so the scenario keys
//! stay flat (`cc = "cubic"`, `cubic_beta = 0.7`, ...) and each transport reads them the
//! same way.

use super::{CcAlgorithm, CubicFlavor, CubicParams, HyStartFlavor};
use serde::{Deserialize, Serialize};

/// Congestion-control and pacing parameters of one sender, each with its documented
/// default. Sizes are bytes; "datagrams" are of the transport's maximum datagram size
/// (QUIC: `max_udp_payload`), passed to the methods that need it.
///
/// Pacing belongs here because the pacing rate is an output of congestion control
/// (RFC 9002 §7.7: `N · cwnd / smoothed_rtt`; Google quiche asks its send algorithm for
/// `PacingRate`), and whether the sender paces changes HyStart++ (RFC 9406 §4.3).
///
/// Built into a controller by [`super::build`]. The serde keys are the scenario keys
/// (`cc` for [`CcParams::algorithm`]); a transport's config embeds this struct with
/// `#[serde(flatten)]`, so the field order here is the key order of `resolved_config`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CcParams {
    /// Congestion controller ([`CcAlgorithm`], key `cc`). Default `cubic` (RFC 9438), the
    /// default of quinn, s2n-quic, quiche, msquic and Linux; `new_reno` stays selectable.
    #[serde(rename = "cc")]
    pub algorithm: CcAlgorithm,
    /// Pace ack-eliciting packets (RFC 9002 §7.7 SHOULD): a token bucket refilled at
    /// `pacing_gain * cwnd / smoothed_rtt`, holding at most the initial congestion window
    /// (bursts limited to the initial window, §7.7). ACK-only packets and PTO probes are
    /// not paced. Default on.
    pub pacing: bool,
    /// Pacing rate factor N of RFC 9002 §7.7 (`rate = N * cwnd / smoothed_rtt`). Default
    /// 1.25, the RFC's example (quinn uses the same factor).
    pub pacing_gain: f64,
    /// Initial congestion window in datagrams; overrides the RFC 9002 §7.2 default
    /// `min(10 MDS, max(14720, 2 MDS))` when set. Default unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_cwnd_packets: Option<u64>,
    /// Initial congestion window in bytes; overrides `initial_cwnd_packets`. Default
    /// unset.
    #[serde(
        deserialize_with = "crate::units::serde_size::de_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub initial_cwnd_bytes: Option<u64>,
    /// The segment size (bytes) the congestion controller counts its window in: the
    /// unit of congestion-avoidance growth, CUBIC's `C`, the minimum window (2 segments)
    /// and HyStart++'s per-ACK cap. Default unset = the maximum datagram size (RFC 9002
    /// counts in max_datagram_size). Does not change the packet size.
    #[serde(
        deserialize_with = "crate::units::serde_size::de_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub cc_segment_size: Option<u64>,
    /// Pacing gain while the controller is in slow start. Default 1.25 (RFC 9002 §7.7
    /// has one gain: the same as `pacing_gain`).
    pub pacing_gain_slow_start: f64,
    /// Pacing burst allowance in datagrams: the token bucket's depth. Default unset = the
    /// initial congestion window (RFC 9002 §7.7: bursts limited to the initial window).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pacing_burst_packets: Option<u64>,
    /// CUBIC β (RFC 9438 §4.6). Default 0.7.
    pub cubic_beta: f64,
    /// CUBIC C in segments/s³ (RFC 9438 §4.2). Default 0.4.
    pub cubic_c: f64,
    /// CUBIC fast convergence (RFC 9438 §4.7 SHOULD). Default true.
    pub fast_convergence: bool,
    /// CUBIC emulated connections N (Chromium): β_eff = (N−1+β)/N, α = 3N²(1−β_eff)/
    /// (1+β_eff). Default 1 (RFC 9438).
    pub emulated_connections: u32,
    /// HyStart++ (RFC 9406) in slow start, with `new_reno` or `cubic`. Default false
    /// (RFC 9438 §4.10 recommends it for CUBIC; off so that the default controller is
    /// RFC 9002 Appendix B exactly).
    pub hystart: bool,
    /// Which slow-start exit `hystart` runs with the RFC 9438 CUBIC ([`HyStartFlavor`]):
    /// `rfc9406` (HyStart++) or `hybrid_slow_start` (Chromium's and quic-go's). Default
    /// `rfc9406`, not serialised (outputs without the key are unchanged).
    #[serde(skip_serializing_if = "HyStartFlavor::is_default")]
    pub hystart_flavor: HyStartFlavor,
    /// Which CUBIC ([`CubicFlavor`]). Not a scenario key of its own here: QUIC and SCTP
    /// always use RFC 9438 (the default); TCP sets it from its `cubic` key
    /// ([`crate::config::tcp::TcpConfig::cubic`]) in `TcpConfig::cc_params`.
    #[serde(skip)]
    pub cubic_flavor: CubicFlavor,
    /// Which controller of the run these parameters build, for a user controller's random
    /// stream ([`super::CcContext::rng`]). Not a scenario key: the runner sets it from the
    /// run's seed and the flow, side, connection and path. Built-in controllers ignore it.
    #[serde(skip)]
    pub stream: super::CcStreamId,
}

impl Default for CcParams {
    fn default() -> Self {
        CcParams {
            algorithm: CcAlgorithm::Cubic,
            pacing: true,
            pacing_gain: 1.25, // RFC 9002 §7.7
            initial_cwnd_packets: None,
            initial_cwnd_bytes: None,
            cc_segment_size: None,
            pacing_gain_slow_start: 1.25, // RFC 9002 §7.7 (one gain)
            pacing_burst_packets: None,
            cubic_beta: 0.7,        // RFC 9438 §4.6
            cubic_c: 0.4,           // RFC 9438 §4.2
            fast_convergence: true, // RFC 9438 §4.7
            emulated_connections: 1,
            hystart: false,
            hystart_flavor: HyStartFlavor::Rfc9406,
            cubic_flavor: CubicFlavor::Rfc9438,
            stream: super::CcStreamId::default(),
        }
    }
}

/// What `initial_cwnd_bytes` / `initial_cwnd_packets` allow (the error's "expected" text).
pub const INITIAL_WINDOW_ALLOWED: &str =
    "an initial window of at least the minimum window, 2 x cc_segment_size (kMinimumWindow, RFC 9002 §7.2)";

/// What `hystart_flavor` allows (the error's "expected" text).
pub const HYSTART_FLAVOR_ALLOWED: &str =
    "\"rfc9406\" unless cc = \"cubic\" with RFC 9438 (\"hybrid_slow_start\" is wired into QUIC's RFC 9438 CUBIC only)";

/// What `emulated_connections` allows with the Linux CUBIC (the error's "expected" text).
pub const EMULATED_CONNECTIONS_LINUX_ALLOWED: &str =
    "1 with cubic = \"linux\" (Linux's tcp_cubic.c emulates no connections; use cubic = \"rfc9438\")";

impl CcParams {
    /// The initial congestion window in bytes for datagrams of `max_datagram_size`
    /// bytes: `initial_cwnd_bytes`, else `initial_cwnd_packets` datagrams, else RFC 9002
    /// §7.2 `min(10 * MDS, max(14720, 2 * MDS))`.
    pub fn initial_window(&self, max_datagram_size: u64) -> u64 {
        if let Some(b) = self.initial_cwnd_bytes {
            return b;
        }
        if let Some(p) = self.initial_cwnd_packets {
            return p * max_datagram_size;
        }
        super::default_initial_window(max_datagram_size) // RFC 9002 §7.2
    }

    /// The segment size the controller counts in: `cc_segment_size`, else
    /// `max_datagram_size`.
    pub fn segment_size(&self, max_datagram_size: u64) -> u64 {
        self.cc_segment_size.unwrap_or(max_datagram_size)
    }

    /// The CUBIC parameters these values describe.
    pub fn cubic(&self) -> CubicParams {
        CubicParams {
            beta: self.cubic_beta,
            c: self.cubic_c,
            fast_convergence: self.fast_convergence,
            emulated_connections: self.emulated_connections,
            hystart: self.hystart,
            flavor: self.cubic_flavor,
            hystart_flavor: self.hystart_flavor,
        }
    }

    /// Checks the values for datagrams of `max_datagram_size` bytes. The error is
    /// `(key, value, allowed)`, the shape of [`crate::validate::ConfigError`]'s parts.
    pub fn validate(&self, max_datagram_size: u64) -> Result<(), (&'static str, String, String)> {
        fn bad<T: std::fmt::Display>(
            field: &'static str,
            v: T,
            allowed: &str,
        ) -> Result<(), (&'static str, String, String)> {
            Err((field, v.to_string(), allowed.to_string()))
        }
        if !(self.pacing_gain >= 1.0 && self.pacing_gain <= 100.0) {
            return bad("pacing_gain", self.pacing_gain, "a factor in [1, 100]");
        }
        if !(self.pacing_gain_slow_start >= 1.0 && self.pacing_gain_slow_start <= 100.0) {
            return bad(
                "pacing_gain_slow_start",
                self.pacing_gain_slow_start,
                "a factor in [1, 100]",
            );
        }
        if self.pacing_burst_packets == Some(0) {
            return bad("pacing_burst_packets", 0, "a number of datagrams >= 1");
        }
        if let Some(m) = self.cc_segment_size {
            if !(536..=65_527).contains(&m) {
                return bad(
                    "cc_segment_size",
                    m,
                    "a size in [536, 65527] bytes (omit it for max_udp_payload)",
                );
            }
        }
        // The controller's minimum window is 2 of its segments (RFC 9002 §7.2
        // kMinimumWindow); an initial window below it would grow on the first loss.
        let iw = self.initial_window(max_datagram_size);
        let segment = self.cc_segment_size.unwrap_or(max_datagram_size);
        if iw < 2 * segment {
            // Named as written (issue 28 item 17: `initial_cwnd_packets = 0` was reported
            // as `initial_cwnd_bytes`).
            return match (self.initial_cwnd_bytes, self.initial_cwnd_packets) {
                (None, Some(p)) => bad(
                    "initial_cwnd_packets",
                    p,
                    &format!(
                        "{INITIAL_WINDOW_ALLOWED}: at least {} datagrams of {max_datagram_size} bytes",
                        (2 * segment).div_ceil(max_datagram_size.max(1))
                    ),
                ),
                _ => bad("initial_cwnd_bytes", iw, INITIAL_WINDOW_ALLOWED),
            };
        }
        if !(self.cubic_beta > 0.0 && self.cubic_beta < 1.0) {
            return bad("cubic_beta", self.cubic_beta, "a factor in (0, 1)");
        }
        if !(self.cubic_c > 0.0 && self.cubic_c <= 100.0) {
            return bad("cubic_c", self.cubic_c, "a constant in (0, 100]");
        }
        if !(1..=100).contains(&self.emulated_connections) {
            return bad(
                "emulated_connections",
                self.emulated_connections,
                "a number of connections in [1, 100]",
            );
        }
        if self.hystart_flavor == HyStartFlavor::HybridSlowStart
            && (self.algorithm != CcAlgorithm::Cubic || self.cubic_flavor != CubicFlavor::Rfc9438)
        {
            return bad(
                "hystart_flavor",
                "\"hybrid_slow_start\"",
                HYSTART_FLAVOR_ALLOWED,
            );
        }
        if self.cubic_flavor == CubicFlavor::Linux && self.emulated_connections != 1 {
            // tcp_cubic.c has no emulated connections (a Chromium mechanism).
            return bad(
                "emulated_connections",
                self.emulated_connections,
                EMULATED_CONNECTIONS_LINUX_ALLOWED,
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The initial window may not start below the controller's own minimum window,
    /// 2 segments of `cc_segment_size` (RFC 9002 §7.2 kMinimumWindow): with 1460-byte
    /// segments and 1250-byte datagrams, 2 datagrams (2500 B) are below 2 x 1460 = 2920 B.
    #[test]
    fn initial_window_below_the_minimum_window_is_rejected() {
        let p = CcParams {
            initial_cwnd_packets: Some(2),
            cc_segment_size: Some(1460),
            ..CcParams::default()
        };
        let e = p.validate(1250).expect_err("2500 B < 2 x 1460 B");
        // Named as written (issue 28 item 17).
        assert_eq!(e.0, "initial_cwnd_packets");
        assert_eq!(e.1, "2");
        assert!(
            e.2.contains("at least 3 datagrams of 1250 bytes"),
            "{}",
            e.2
        );
        let ok = CcParams {
            initial_cwnd_bytes: Some(2920),
            cc_segment_size: Some(1460),
            ..CcParams::default()
        };
        assert!(ok.validate(1250).is_ok());
        // With segments of the datagram size the minimum stays 2 datagrams.
        let two = CcParams {
            initial_cwnd_packets: Some(2),
            ..CcParams::default()
        };
        assert!(two.validate(1250).is_ok());
        let one = CcParams {
            initial_cwnd_bytes: Some(2499),
            ..CcParams::default()
        };
        assert_eq!(
            one.validate(1250).expect_err("below 2 x 1250").0,
            "initial_cwnd_bytes"
        );
    }
}

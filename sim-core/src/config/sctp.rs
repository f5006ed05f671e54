//! [`SctpConfig`]: every parameter of the SCTP model (RFC 9260), each with a documented
//! default. Pure data, like [`crate::config::quic`]; the association that uses it is
//! `sctp/`.
//!
//! Two presets: [`SctpConfig::default`] is RFC 9260 (§16 protocol parameters, §7.2.1
//! initial window); [`SctpConfig::linux`] is the Linux kernel's SCTP defaults, which keep
//! RFC 4960's values (`net.sctp.rto_initial` = 3000 ms, initial window constant 4380).
//!
//! Security: SCTP has no built-in TLS. The model runs the plain four-way handshake
//! (INIT, INIT-ACK, COOKIE-ECHO with DATA bundled, COOKIE-ACK; RFC 9260 §5.1), as paper
//! 003 compares it with TCP + TLS 1.3 and QUIC; DTLS over SCTP (RFC 6083) would add its
//! own round trips and is not modelled.

use crate::cc::CcAlgorithm;
use crate::time::SimDuration;
use crate::wire::sctp::{COMMON_HEADER, DATA_HEADER, IPV4_HEADER};
use serde::{Deserialize, Serialize};

/// The scenario name of SCTP's own controller, [`SctpCc::Rfc9260`].
pub const RFC9260: &str = "rfc9260";

/// How many rows of [`crate::cc::CONTROLLERS`] SCTP may share ([`crate::cc::ControllerDef::sctp`]).
const SCTP_SHARED: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < crate::cc::CONTROLLERS.len() {
        if crate::cc::CONTROLLERS[i].sctp {
            n += 1;
        }
        i += 1;
    }
    n
};

/// The names of SCTP's `cc` key: [`RFC9260`], then every built-in shared controller of
/// [`crate::cc::CONTROLLERS`] SCTP may run ([`crate::cc::ControllerDef::sctp`]) in its
/// order (the schema's choices).
pub const SCTP_CC_NAMES: [&str; SCTP_SHARED + 1] = {
    let mut out = [RFC9260; SCTP_SHARED + 1];
    let mut i = 0;
    let mut k = 1;
    while i < crate::cc::CONTROLLERS.len() {
        if crate::cc::CONTROLLERS[i].sctp {
            out[k] = crate::cc::CONTROLLERS[i].name;
            k += 1;
        }
        i += 1;
    }
    out
};

/// What an unknown SCTP `cc` is told: `"rfc9260", "new_reno" or "cubic"`, from
/// [`SCTP_CC_NAMES`].
pub fn sctp_cc_expected() -> String {
    let quoted: Vec<String> = SCTP_CC_NAMES.iter().map(|n| format!("\"{n}\"")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.join(""),
    }
}

/// Which congestion controller an SCTP association runs. Scenarios write it as one
/// string: `"rfc9260"` or a built-in shared controller's name ([`SCTP_CC_NAMES`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum SctpCc {
    /// RFC 9260 §7.2 (slow start capped at one PMDCS per SACK, congestion avoidance by
    /// partial_bytes_acked, ssthresh floor 4 MTU, 1 MTU after a T3-rtx timeout):
    /// [`crate::cc::sctp::SctpReno`]. Default.
    #[default]
    Rfc9260,
    /// A shared byte-based controller of [`crate::cc`] (`new_reno`, `cubic`), fed per
    /// acknowledged DATA chunk; segments of PMDCS bytes, no pacing. Built-in controllers
    /// only: a registered user controller ([`crate::cc::registry`]) is for QUIC and TCP,
    /// and validation rejects it here.
    Shared(CcAlgorithm),
}

impl SctpCc {
    /// The scenario spelling: `"rfc9260"`, `"new_reno"`, `"cubic"`.
    pub fn name(&self) -> &str {
        match self {
            SctpCc::Rfc9260 => RFC9260,
            SctpCc::Shared(c) => c.scenario_name(),
        }
    }
}

impl From<SctpCc> for String {
    fn from(c: SctpCc) -> String {
        c.name().to_string()
    }
}

impl TryFrom<String> for SctpCc {
    type Error = String;
    fn try_from(s: String) -> Result<SctpCc, String> {
        if s == RFC9260 {
            return Ok(SctpCc::Rfc9260);
        }
        match crate::cc::controller(&s) {
            Some(def) if def.sctp => Ok(SctpCc::Shared(CcAlgorithm::Builtin(def))),
            Some(def) => Err(format!(
                "controller {:?} needs delivery-rate samples and its own pacing rate, which \
                 SCTP does not provide (QUIC and TCP do; docs/bbr.md), expected {}",
                def.name,
                sctp_cc_expected()
            )),
            None => Err(format!(
                "unknown controller {s:?}, expected {}",
                sctp_cc_expected()
            )),
        }
    }
}

/// The most request streams the client of an association opens: its stream numbers are
/// the lower half of the 16-bit identifiers (RFC 9260 §3.3.1), the upper half the
/// server's (`sctp::association::CLIENT_STREAMS`).
pub const MAX_CLIENT_STREAMS: u64 = 32_768;

/// The SCTP parameters of one endpoint. Sizes in bytes, times as [`SimDuration`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SctpConfig {
    /// Path MTU: the largest IP packet (IPv4 header included). Default 1500 (Ethernet).
    /// The largest SCTP packet is `mtu - 20`; the largest DATA payload (PMDCS) is
    /// `mtu - 20 - 12 - 16` = 1452.
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub mtu: u64,
    /// RTO.Initial (RFC 9260 §16). Default 1 s.
    pub rto_initial: SimDuration,
    /// RTO.Min (RFC 9260 §16). Default 1 s.
    pub rto_min: SimDuration,
    /// RTO.Max (RFC 9260 §16). Default 60 s.
    pub rto_max: SimDuration,
    /// Max.Burst (RFC 9260 §16, §6.1 D): new-DATA packets sent per transmission
    /// opportunity (per SACK, timeout or write). Default 4.
    pub max_burst: u64,
    /// Max.Init.Retransmits (RFC 9260 §16): INIT / COOKIE-ECHO retransmissions before the
    /// association attempt fails. Default 8.
    pub max_init_retransmits: u64,
    /// Association.Max.Retrans (RFC 9260 §16): consecutive T3-rtx expirations before the
    /// association is closed. Default 10.
    pub association_max_retrans: u64,
    /// SACK frequency: a SACK for every this many packets carrying DATA (RFC 9260 §6.2:
    /// "SHOULD ... for every second packet"). Default 2; 1 acknowledges every packet.
    pub sack_freq: u64,
    /// Delayed SACK timer (RFC 9260 §6.2: within 200 ms of the arrival of an
    /// unacknowledged DATA chunk, never more than 500 ms). Default 200 ms.
    pub sack_delay: SimDuration,
    /// Advertised receiver window credit, a_rwnd (RFC 9260 §6.2): the receive buffer.
    /// Default 1,250,000 B, the simulator's QUIC stream window (quinn's), so a paired
    /// comparison is not a comparison of buffer sizes.
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub a_rwnd: u64,
    /// Number of outbound streams requested in INIT / INIT-ACK. Default 10 (Linux
    /// `sctp_initmsg.sinit_num_ostreams`).
    pub outbound_streams: u64,
    /// Maximum inbound streams accepted. Default 65535 (Linux).
    pub inbound_streams: u64,
    /// State Cookie length in INIT-ACK and COOKIE-ECHO (RFC 9260 §5.1.3: implementation
    /// defined: the TCB state the server needs plus a MAC). Default 200 bytes.
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub cookie_size: u64,
    /// Optional INIT / INIT-ACK parameters other than the cookie, bytes (padded TLVs).
    /// Default 8: Supported Address Types with IPv4 (§3.3.2.1, 4 + 2 padded).
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub init_params_size: u64,
    /// The constant of the initial window `min(4 MTU, max(2 MTU, c))` (RFC 9260 §7.2.1:
    /// 4404 for an IPv4 peer, three full DATA chunks of 1468 B at a 1500-byte MTU; RFC 4960
    /// §7.2.1 and Linux: 4380). Default 4404.
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub initial_cwnd_constant: u64,
    /// Initial congestion window override, bytes. Default unset (the formula above).
    #[serde(
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::units::serde_size::de_opt",
        default
    )]
    pub initial_cwnd_bytes: Option<u64>,
    /// Congestion controller ([`SctpCc`]). Default `rfc9260`.
    pub cc: SctpCc,
    /// Which controller of the run a shared controller is ([`crate::cc::CcParams::stream`]):
    /// not a scenario key, set by the runner.
    #[serde(skip)]
    pub cc_stream: crate::cc::CcStreamId,
}

impl Default for SctpConfig {
    fn default() -> Self {
        SctpConfig {
            mtu: 1500,
            rto_initial: SimDuration::from_secs(1), // RFC 9260 §16
            rto_min: SimDuration::from_secs(1),     // RFC 9260 §16
            rto_max: SimDuration::from_secs(60),    // RFC 9260 §16
            max_burst: 4,                           // RFC 9260 §16
            max_init_retransmits: 8,                // RFC 9260 §16
            association_max_retrans: 10,            // RFC 9260 §16
            sack_freq: 2,                           // RFC 9260 §6.2
            sack_delay: SimDuration::from_millis(200), // RFC 9260 §6.2
            a_rwnd: 1_250_000,
            outbound_streams: 10,
            inbound_streams: 65_535,
            cookie_size: 200,
            init_params_size: 8,
            initial_cwnd_constant: 4404, // RFC 9260 §7.2.1, IPv4
            initial_cwnd_bytes: None,
            cc: SctpCc::Rfc9260,
            cc_stream: crate::cc::CcStreamId::default(),
        }
    }
}

impl SctpConfig {
    /// The Linux kernel's SCTP defaults (`Documentation/networking/ip-sysctl.rst`,
    /// `net.sctp.*`): `rto_initial` 3000 ms, `rto_min` 1000 ms, `rto_max` 60000 ms,
    /// `sack_timeout` 200 ms, `max_burst` 4; initial window constant 4380
    /// (`sctp_transport_route`: `min(4 * pathmtu, max(2 * pathmtu, 4380))`, RFC 4960
    /// §7.2.1). Everything else as [`SctpConfig::default`].
    pub fn linux() -> Self {
        SctpConfig {
            rto_initial: SimDuration::from_secs(3),
            initial_cwnd_constant: 4380,
            ..SctpConfig::default()
        }
    }

    /// Largest SCTP packet (common header + chunks): `mtu - 20` (IPv4).
    pub fn max_packet(&self) -> u64 {
        self.mtu - IPV4_HEADER
    }

    /// Path Maximum Data Chunk Size: the most user data one DATA chunk carries in one
    /// packet, `mtu - 20 - 12 - 16` (RFC 9260 §3.3.1 / §6.9 fragmentation).
    pub fn pmdcs(&self) -> u64 {
        self.mtu - IPV4_HEADER - COMMON_HEADER - DATA_HEADER
    }

    /// The initial congestion window: `initial_cwnd_bytes`, else
    /// `min(4 MTU, max(2 MTU, initial_cwnd_constant))` (RFC 9260 §7.2.1).
    pub fn initial_cwnd(&self) -> u64 {
        self.initial_cwnd_bytes
            .unwrap_or_else(|| (4 * self.mtu).min((2 * self.mtu).max(self.initial_cwnd_constant)))
    }

    /// Checks every value; the error is `(key, value, allowed)`.
    pub fn validate(&self) -> Result<(), (&'static str, String, String)> {
        fn bad<T: std::fmt::Display>(
            k: &'static str,
            v: T,
            allowed: &str,
        ) -> Result<(), (&'static str, String, String)> {
            Err((k, v.to_string(), allowed.to_string()))
        }
        if !(576..=65_535).contains(&self.mtu) {
            return bad("mtu", self.mtu, "an IP MTU in [576, 65535] bytes");
        }
        if self.rto_min.0 == 0 {
            return bad("rto_min", self.rto_min, "a duration > 0");
        }
        if self.rto_max < self.rto_min {
            return bad("rto_max", self.rto_max, "a duration >= rto_min");
        }
        if self.rto_initial < self.rto_min || self.rto_initial > self.rto_max {
            return bad(
                "rto_initial",
                self.rto_initial,
                "a duration in [rto_min, rto_max]",
            );
        }
        if self.max_burst == 0 {
            return bad("max_burst", 0, "a number of packets >= 1");
        }
        if !(1..=64).contains(&self.sack_freq) {
            return bad(
                "sack_freq",
                self.sack_freq,
                "a number of packets in [1, 64]",
            );
        }
        if self.sack_delay > SimDuration::from_millis(500) {
            return bad(
                "sack_delay",
                self.sack_delay,
                "a delay of at most 500ms (RFC 9260 §6.2)",
            );
        }
        if self.a_rwnd < 1500 || self.a_rwnd > u64::from(u32::MAX) {
            return bad(
                "a_rwnd",
                self.a_rwnd,
                "a window in [1500, 4294967295] bytes (RFC 9260 §6.2: at least 1500)",
            );
        }
        for (k, v) in [
            ("outbound_streams", self.outbound_streams),
            ("inbound_streams", self.inbound_streams),
        ] {
            if !(1..=65_535).contains(&v) {
                return bad(k, v, "a stream count in [1, 65535]");
            }
        }
        if self.cookie_size == 0 || self.cookie_size > 4096 {
            return bad("cookie_size", self.cookie_size, "a size in [1, 4096] bytes");
        }
        if !self.init_params_size.is_multiple_of(4) || self.init_params_size > 1024 {
            return bad(
                "init_params_size",
                self.init_params_size,
                "a multiple of 4 bytes up to 1024",
            );
        }
        if self.initial_cwnd() < self.mtu {
            return bad(
                "initial_cwnd_bytes",
                self.initial_cwnd(),
                "an initial window of at least one MTU",
            );
        }
        for (k, v) in [
            ("max_init_retransmits", self.max_init_retransmits),
            ("association_max_retrans", self.association_max_retrans),
        ] {
            if v == 0 {
                return bad(k, v, "a retransmission count >= 1");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_presets() {
        let c = SctpConfig::default();
        assert!(c.validate().is_ok());
        assert_eq!(c.pmdcs(), 1452);
        assert_eq!(c.max_packet(), 1480);
        // RFC 9260 §7.2.1: min(6000, max(3000, 4404)) = 4404 = 3 x (16 + 1452).
        assert_eq!(c.initial_cwnd(), 4404);
        let l = SctpConfig::linux();
        assert_eq!(l.initial_cwnd(), 4380);
        assert_eq!(l.rto_initial, SimDuration::from_secs(3));
        assert!(l.validate().is_ok());
        // Jumbo frames: 2 MTU dominates.
        let j = SctpConfig {
            mtu: 9000,
            ..SctpConfig::default()
        };
        assert_eq!(j.initial_cwnd(), 18_000);
        let bad = SctpConfig {
            sack_delay: SimDuration::from_millis(600),
            ..SctpConfig::default()
        };
        assert_eq!(bad.validate().unwrap_err().0, "sack_delay");
        let bad = SctpConfig {
            rto_initial: SimDuration::from_millis(100),
            ..SctpConfig::default()
        };
        assert_eq!(bad.validate().unwrap_err().0, "rto_initial");
    }
}

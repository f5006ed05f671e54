//! [`QuicConfig`]: every parameter of the QUIC model and of the `bulk` workload, each with
//! a documented default. These defaults move results: a study should state the ones it
//! relies on (the run output's `resolved_config` carries them all).

pub use crate::cc::CcAlgorithm;
use crate::time::SimDuration;
use crate::units::Rate;
use serde::{Deserialize, Serialize};

/// Receive-window update policy (see [`crate::quic::flow_control::Allowance`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum AllowanceKind {
    /// Fixed window: when the unconsumed credit falls below half the window, advertise
    /// `consumed + window` (Google quiche / Cloudflare quiche threshold rule without
    /// auto-tuning). Default.
    #[default]
    Static,
}

/// Which stream the sender serves next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SchedulerKind {
    /// Each frame goes to the stream after the one served last (frame-level round robin
    /// over streams with data). Default.
    #[default]
    RoundRobin,
    /// Lowest stream ID with data first (one stream at a time).
    Sequential,
}

/// Byte sizes accept an integer (bytes) or a unit string (`"1.25MB"`, `"16KiB"`); they
/// serialise as integers.
mod size {
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

    pub fn de<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        conv(IntOrStr::deserialize(d)?)
    }

    pub fn de_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        Option::<IntOrStr>::deserialize(d)?.map(conv).transpose()
    }
}

/// All QUIC model parameters. Sizes are in bytes (integers, or unit strings such as
/// `"1MB"` when deserialised).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QuicConfig {
    // ---- sizes --------------------------------------------------------------------
    /// Largest UDP payload the endpoints send: QUIC header + frames + 16-byte AEAD tag.
    /// Default 1250 (Chromium / Google quiche `kDefaultMaxPacketSize`); RFC 9000 §14
    /// requires at least 1200.
    #[serde(deserialize_with = "size::de")]
    pub max_udp_payload: u64,
    /// Connection ID length used by both endpoints. Default 8 (RFC 9000 §7.2: a client's
    /// first Destination Connection ID is at least 8 bytes; quinn's default length).
    pub cid_len: u64,

    // ---- handshake (TLS 1.3 message sizes; estimates, see docs/rfc-conformance.md) -
    /// ClientHello size carried in the client's Initial CRYPTO frames. Default 300: a
    /// TLS 1.3 ClientHello with one X25519 key share, SNI, ALPN and QUIC transport
    /// parameters is typically 250-350 bytes (estimate; hybrid post-quantum key shares
    /// push it above 1100 bytes and then it spans two Initial packets).
    #[serde(deserialize_with = "size::de")]
    pub client_hello_size: u64,
    /// ServerHello size (server Initial CRYPTO). Default 90: a TLS 1.3 ServerHello with
    /// an X25519 key share and supported_versions (4 + 2 + 32 + 1 + 2 + 1 + 2 + 6 + 40).
    #[serde(deserialize_with = "size::de")]
    pub server_hello_size: u64,
    /// Server Handshake flight size: EncryptedExtensions, Certificate, CertificateVerify
    /// and Finished. Default 3000: an RSA-2048 leaf plus one intermediate is about
    /// 2.5 KB of DER, CertificateVerify 264 B, Finished 36 B, EncryptedExtensions with
    /// transport parameters ~100 B (estimate). With the 90-byte ServerHello this fits in
    /// three datagrams, within the 3 x 1200 B anti-amplification budget.
    #[serde(deserialize_with = "size::de")]
    pub server_handshake_size: u64,
    /// Client Handshake flight size (Finished: 4-byte header + 32-byte HMAC-SHA256).
    /// Default 36.
    #[serde(deserialize_with = "size::de")]
    pub client_finished_size: u64,

    // ---- timers and ACKs --------------------------------------------------------------
    /// RTT assumed before the first sample. Default 333 ms (RFC 9002 §6.2.2 kInitialRtt).
    pub initial_rtt: SimDuration,
    /// Our max_ack_delay transport parameter. Default 25 ms (RFC 9000 §18.2).
    pub max_ack_delay: SimDuration,
    /// ack_delay_exponent transport parameter. Default 3 (RFC 9000 §18.2).
    pub ack_delay_exponent: u32,
    /// Acknowledge after this many ack-eliciting packets (application data space).
    /// Default 2 (RFC 9000 §13.2.2).
    pub ack_eliciting_threshold: u64,
    /// Most ACK ranges in one ACK frame (the most recent are kept). Default 32, as
    /// HAProxy's `QUIC_MAX_ACK_RANGES`; RFC 9000 §13.2.4 lets a receiver limit them.
    pub max_ack_ranges: usize,
    /// Ack-eliciting datagrams sent when a PTO fires. Default 2 (RFC 9002 §6.2.4: "MAY
    /// send up to two").
    pub pto_probes: u8,
    /// Packet reordering threshold for loss detection. Default 3 (RFC 9002 §6.1.1).
    pub packet_threshold: u64,
    /// Idle timeout: the connection is abandoned after this long without receiving
    /// anything (the effective value is at least 3 PTOs, RFC 9000 §10.1). Default 30 s
    /// (quinn's max_idle_timeout).
    pub idle_timeout: SimDuration,

    // ---- congestion control -------------------------------------------------------------
    /// Congestion controller ([`crate::cc::CcAlgorithm`]). Default `new_reno`.
    pub cc: CcAlgorithm,
    /// Pace ack-eliciting packets (RFC 9002 §7.7 SHOULD): a token bucket refilled at
    /// `pacing_gain * cwnd / smoothed_rtt`, holding at most the initial congestion window
    /// (bursts limited to the initial window, §7.7). ACK-only packets and PTO probes are
    /// not paced. Default on.
    pub pacing: bool,
    /// Pacing rate factor N of RFC 9002 §7.7 (`rate = N * cwnd / smoothed_rtt`). Default
    /// 1.25, the RFC's example (quinn uses the same factor).
    pub pacing_gain: f64,
    /// Initial congestion window in packets of `max_udp_payload` bytes; overrides the
    /// RFC 9002 §7.2 default `min(10 MDS, max(14720, 2 MDS))` when set. Default unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_cwnd_packets: Option<u64>,
    /// Initial congestion window in bytes; overrides `initial_cwnd_packets`. Default
    /// unset.
    #[serde(
        deserialize_with = "size::de_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub initial_cwnd_bytes: Option<u64>,

    // ---- flow control ---------------------------------------------------------------------
    /// initial_max_stream_data_bidi_* transport parameters and the stream receive window.
    /// Default 1,250,000 (quinn's `stream_receive_window`, sized for 100 Mb/s x 100 ms).
    #[serde(deserialize_with = "size::de")]
    pub stream_window: u64,
    /// initial_max_data transport parameter and connection receive window. Default
    /// 2^62 - 1 (quinn's `receive_window` = VarInt::MAX: no connection-level limit).
    #[serde(deserialize_with = "size::de")]
    pub connection_window: u64,
    /// initial_max_streams_bidi transport parameter. Default 100 (quinn's
    /// `max_concurrent_bidi_streams`).
    pub max_streams_bidi: u64,
    /// Receive-window update policy. Default `static`.
    pub allowance: AllowanceKind,
    /// Rate at which the client application reads the response data; unset = it reads
    /// everything as soon as it is in order. Data counts as consumed (for flow control
    /// and completion) when read. Default unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_rate: Option<Rate>,

    // ---- workload `bulk` ----------------------------------------------------------------
    /// Sender scheduler. Default round robin.
    pub scheduler: SchedulerKind,
    /// Number of bidirectional streams the client opens (one request each). Default 1.
    pub streams: u64,
    /// Total response bytes N, split evenly over the streams (the first `N mod S`
    /// streams get one byte more). Default 1,000,000.
    #[serde(deserialize_with = "size::de")]
    pub bytes: u64,
    /// Request size per stream, client to server. Default 100.
    #[serde(deserialize_with = "size::de")]
    pub request_size: u64,
}

impl Default for QuicConfig {
    fn default() -> Self {
        QuicConfig {
            max_udp_payload: 1250,
            cid_len: 8,
            client_hello_size: 300,
            server_hello_size: 90,
            server_handshake_size: 3000,
            client_finished_size: 36,
            initial_rtt: SimDuration::from_millis(333), // RFC 9002 §6.2.2
            max_ack_delay: SimDuration::from_millis(25), // RFC 9000 §18.2
            ack_delay_exponent: 3,                      // RFC 9000 §18.2
            ack_eliciting_threshold: 2,                 // RFC 9000 §13.2.2
            max_ack_ranges: 32,
            pto_probes: 2,       // RFC 9002 §6.2.4
            packet_threshold: 3, // RFC 9002 §6.1.1
            idle_timeout: SimDuration::from_secs(30),
            cc: CcAlgorithm::NewReno,
            pacing: true,
            pacing_gain: 1.25, // RFC 9002 §7.7
            initial_cwnd_packets: None,
            initial_cwnd_bytes: None,
            stream_window: 1_250_000,
            connection_window: (1 << 62) - 1,
            max_streams_bidi: 100,
            allowance: AllowanceKind::Static,
            read_rate: None,
            scheduler: SchedulerKind::RoundRobin,
            streams: 1,
            bytes: 1_000_000,
            request_size: 100,
        }
    }
}

impl QuicConfig {
    /// The initial congestion window in bytes: the explicit override, or RFC 9002 §7.2
    /// `min(10 * MDS, max(14720, 2 * MDS))`.
    pub fn initial_cwnd(&self) -> u64 {
        if let Some(b) = self.initial_cwnd_bytes {
            return b;
        }
        if let Some(p) = self.initial_cwnd_packets {
            return p * self.max_udp_payload;
        }
        crate::cc::default_initial_window(self.max_udp_payload) // RFC 9002 §7.2
    }

    /// Checks the values. The error is `(field, value, allowed)`: the key, the offending
    /// value as written, and what is allowed there (a noun phrase that reads after
    /// "expected"), the shape of [`crate::validate::ConfigError`].
    pub fn validate(&self) -> Result<(), (&'static str, String, String)> {
        fn bad<T: std::fmt::Display>(
            field: &'static str,
            v: T,
            allowed: &str,
        ) -> Result<(), (&'static str, String, String)> {
            Err((field, v.to_string(), allowed.to_string()))
        }
        if self.max_udp_payload < 1200 || self.max_udp_payload > 65_527 {
            return bad(
                "max_udp_payload",
                self.max_udp_payload,
                "a size in [1200, 65527] bytes (RFC 9000 §14, §18.2)",
            );
        }
        if !(1..=20).contains(&self.cid_len) {
            return bad(
                "cid_len",
                self.cid_len,
                "a length in [1, 20] (RFC 9000 §17.2)",
            );
        }
        if self.streams == 0 {
            return bad("streams", 0, "a number of streams >= 1");
        }
        if self.ack_eliciting_threshold == 0 {
            return bad("ack_eliciting_threshold", 0, "a number of packets >= 1");
        }
        if self.max_ack_ranges == 0 {
            return bad("max_ack_ranges", 0, "a number of ranges >= 1");
        }
        if self.pto_probes == 0 || self.pto_probes > 2 {
            return bad("pto_probes", self.pto_probes, "1 or 2 (RFC 9002 §6.2.4)");
        }
        if self.stream_window == 0 {
            return bad("stream_window", 0, "a window > 0 bytes");
        }
        if self.connection_window == 0 || self.connection_window >= 1 << 62 {
            return bad(
                "connection_window",
                self.connection_window,
                "a window in [1, 2^62 - 1] bytes",
            );
        }
        if self.max_streams_bidi == 0 || self.max_streams_bidi > 1 << 60 {
            return bad(
                "max_streams_bidi",
                self.max_streams_bidi,
                "a count in [1, 2^60] (RFC 9000 §4.6)",
            );
        }
        if self.ack_delay_exponent > 20 {
            return bad(
                "ack_delay_exponent",
                self.ack_delay_exponent,
                "an exponent in [0, 20] (RFC 9000 §18.2)",
            );
        }
        if self.packet_threshold < 3 {
            return bad(
                "packet_threshold",
                self.packet_threshold,
                "a threshold >= 3 (RFC 9002 §6.1.1: SHOULD NOT be below 3)",
            );
        }
        if self.initial_rtt.as_nanos() == 0 {
            return bad("initial_rtt", "0s", "a time > 0");
        }
        if self.max_ack_delay >= SimDuration::from_secs(16) {
            return bad(
                "max_ack_delay",
                self.max_ack_delay,
                "a time below 2^14 ms (RFC 9000 §18.2)",
            );
        }
        if self.initial_cwnd() < 2 * self.max_udp_payload {
            return bad(
                "initial_cwnd_bytes",
                self.initial_cwnd(),
                "an initial window of at least 2 datagrams (kMinimumWindow, RFC 9002 §7.2)",
            );
        }
        if !(self.pacing_gain >= 1.0 && self.pacing_gain <= 100.0) {
            return bad("pacing_gain", self.pacing_gain, "a factor in [1, 100]");
        }
        if let Some(r) = self.read_rate {
            if r.bps() == 0 {
                return bad("read_rate", "0bps", "a rate > 0 (omit it for unlimited)");
            }
        }
        if self.client_hello_size == 0 || self.server_hello_size == 0 {
            return bad(
                "client_hello_size",
                self.client_hello_size.min(self.server_hello_size),
                "TLS message sizes > 0 bytes",
            );
        }
        if self.server_handshake_size == 0 || self.client_finished_size == 0 {
            return bad(
                "server_handshake_size",
                self.server_handshake_size.min(self.client_finished_size),
                "TLS message sizes > 0 bytes",
            );
        }
        Ok(())
    }
}

//! [`QuicConfig`]: every parameter of the QUIC model (one side's: client and server may
//! differ, [`crate::config::transport::Sides`]), each with a documented default; the
//! workload's parameters are in [`crate::config::workload`]. These defaults move results: a study should state the ones it
//! relies on (the run output's `resolved_config` carries them all).

pub use crate::cc::CcAlgorithm;
use crate::cc::CcParams;
use crate::time::SimDuration;
use crate::transport::allowance::{AllowanceKind, AllowanceParams, AllowancePolicy};
use crate::transport::initial_window::InitialWindowConfig;
use crate::transport::migration::MigrationConfig;
use crate::wire::quic::{header_len_without_pn, PacketType, AEAD_TAG_LEN};
use serde::{Deserialize, Serialize};

/// A named set of defaults for the congestion-control and timing parameters
/// (`profile` in the `quic_bulk` table). A profile is resolved into explicit values when
/// the scenario is built ([`apply_profile`]): `resolved_config` shows every value it set,
/// and a key given explicitly next to `profile` wins over the profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// The RFC defaults documented on each [`QuicConfig`] and [`CcParams`] field. Default.
    #[default]
    Rfc,
    /// Chromium's QUIC stack (Google quiche `TcpCubicSenderBytes`): the values of
    /// [`CHROMIUM_PROFILE`] and nothing else.
    Chromium,
    /// quic-go as of v0.19-v0.20 (2020-2021, the releases of paper 003's time): the
    /// values of [`QUIC_GO_PROFILE`] and nothing else. Written `"quic-go"`.
    #[serde(rename = "quic-go")]
    QuicGo,
}

impl Profile {
    /// Every policy, the table of this extension point: [`Profile::NAMES`] and the schema's
    /// choices derive from it.
    pub const ALL: [Profile; 3] = [Profile::Rfc, Profile::Chromium, Profile::QuicGo];

    /// The scenario names of every profile, computed from [`Profile::ALL`]: the schema's choices.
    pub const NAMES: [&'static str; Profile::ALL.len()] = {
        let mut out = [""; Profile::ALL.len()];
        let mut i = 0;
        while i < out.len() {
            out[i] = Profile::ALL[i].name();
            i += 1;
        }
        out
    };

    /// The name used in scenarios (`"rfc"`, `"chromium"`, `"quic-go"`).
    pub const fn name(self) -> &'static str {
        match self {
            Profile::Rfc => "rfc",
            Profile::Chromium => "chromium",
            Profile::QuicGo => "quic-go",
        }
    }

    /// What the profile sets: `(key, value as written in a scenario, source)` (none for
    /// `rfc`).
    pub fn keys(self) -> &'static [(&'static str, &'static str, &'static str)] {
        match self {
            Profile::Rfc => &[],
            Profile::Chromium => CHROMIUM_PROFILE,
            Profile::QuicGo => QUIC_GO_PROFILE,
        }
    }
}

/// What `profile = "chromium"` sets: `(key, value as written in a scenario, source)`.
/// Every other key keeps its RFC default. Sources are Google quiche (the QUIC stack in
/// Chromium), `quiche/quic/core/`:
pub const CHROMIUM_PROFILE: &[(&str, &str, &str)] = &[
    (
        "initial_rtt",
        "\"100ms\"",
        "quic_constants.h kInitialRttMs = 100",
    ),
    (
        "initial_cwnd_bytes",
        "46720",
        "quic_constants.h kInitialCongestionWindow = 32 packets x kDefaultTCPMSS = 1460 B",
    ),
    (
        "cc_segment_size",
        "1460",
        "quic_constants.h kDefaultTCPMSS = 1460: TcpCubicSenderBytes and CubicBytes count \
         cwnd growth, the minimum window (2 x 1460) and the initial window in these units",
    ),
    (
        "max_udp_payload",
        "1250",
        "quic_constants.h kDefaultMaxPacketSize = 1250 (same value as the rfc profile's \
         default)",
    ),
    (
        "cc",
        "\"cubic\"",
        "TcpCubicSenderBytes (kCubicBytes), Chromium's default",
    ),
    (
        "emulated_connections",
        "2",
        "tcp_cubic_sender_bytes.cc kDefaultNumConnections = 2 (beta_eff = 0.85)",
    ),
    (
        "cubic_c",
        "0.400390625",
        "cubic_bytes.cc kCubeCongestionWindowScale / 2^10 = 410/1024",
    ),
    (
        "pacing_gain_slow_start",
        "2.0",
        "tcp_cubic_sender_bytes.cc PacingRate: 2 x cwnd/srtt in slow start",
    ),
    (
        "pacing_gain",
        "1.25",
        "tcp_cubic_sender_bytes.cc PacingRate: 1.25 x cwnd/srtt otherwise",
    ),
    (
        "pacing_burst_packets",
        "10",
        "pacing_sender.cc kInitialUnpacedBurst = 10 packets",
    ),
];

/// What `profile = "quic-go"` sets: `(key, value as written in a scenario, source)`.
/// Every other key keeps its RFC default. Sources are quic-go v0.19.3
/// (`github.com/lucas-clemente/quic-go`, commit c945c4c, December 2020: the release with
/// draft-29, the draft paper 003 cites; every value below is the same in v0.20.1, April
/// 2021), paths from the repository root:
pub const QUIC_GO_PROFILE: &[(&str, &str, &str)] = &[
    (
        "max_udp_payload",
        "1252",
        "internal/protocol/params.go MaxPacketSizeIPv4 = 1252 (no path MTU discovery \
         before v0.23)",
    ),
    (
        "cid_len",
        "4",
        "internal/protocol/params.go DefaultConnectionIDLength = 4 (a client dialling \
         with its own socket uses a zero-length ID, which the model does not allow)",
    ),
    (
        "initial_rtt",
        "\"100ms\"",
        "internal/utils/rtt_stats.go defaultInitialRTT = 100 ms",
    ),
    (
        "initial_cwnd_packets",
        "32",
        "internal/congestion/cubic_sender.go initialCongestionWindow = 32 x \
         maxDatagramSize (1252 B): 40 064 B",
    ),
    (
        "cc",
        "\"cubic\"",
        "internal/ackhandler/sent_packet_handler.go NewCubicSender(..., reno = false)",
    ),
    (
        "cubic_beta",
        "0.7",
        "internal/congestion/cubic.go beta = 0.7",
    ),
    (
        "cubic_c",
        "0.400390625",
        "internal/congestion/cubic.go cubeCongestionWindowScale = 410 over 2^10",
    ),
    (
        "fast_convergence",
        "true",
        "internal/congestion/cubic.go betaLastMax = 0.85 = (1 + beta) / 2",
    ),
    (
        "emulated_connections",
        "1",
        "internal/congestion/cubic.go defaultNumConnections = 1",
    ),
    (
        "hystart",
        "true",
        "internal/congestion/cubic_sender.go MaybeExitSlowStart: slow start ends on \
         hybridSlowStart.ShouldExitSlowStart (or on a loss)",
    ),
    (
        "hystart_flavor",
        "\"hybrid_slow_start\"",
        "internal/congestion/hybrid_slow_start.go: 8 samples a round, threshold \
         clamp(minRTT / 8, 4 ms, 16 ms), low window 16 packets, ssthresh = cwnd at once",
    ),
    (
        "pacing",
        "true",
        "internal/congestion/pacer.go, a token bucket (cubic_sender.go TimeUntilSend)",
    ),
    (
        "pacing_gain_slow_start",
        "1.25",
        "internal/congestion/pacer.go bw * 5 / 4 with BandwidthEstimate = cwnd / srtt, \
         in every state",
    ),
    (
        "pacing_gain",
        "1.25",
        "internal/congestion/pacer.go bw * 5 / 4",
    ),
    (
        "pacing_burst_packets",
        "10",
        "internal/congestion/pacer.go maxBurstSize = 10 x maxDatagramSize (or 2 ms at \
         the pacing rate, when larger)",
    ),
    (
        "ack_eliciting_threshold",
        "2",
        "internal/ackhandler/received_packet_tracker.go packetsBeforeAck = 2 (and at \
         once for a packet that was missing or leaves a new gap)",
    ),
    (
        "max_ack_delay",
        "\"25ms\"",
        "internal/protocol/params.go MaxAckDelay = 25 ms (advertised with the 1 ms timer \
         granularity: 26 ms)",
    ),
    (
        "max_ack_ranges",
        "500",
        "internal/protocol/params.go MaxNumAckRanges = 500 (and MaxAckFrameSize = 1000 B)",
    ),
    (
        "packet_threshold",
        "3",
        "internal/ackhandler/sent_packet_handler.go packetThreshold = 3 (time threshold \
         9/8, as RFC 9002)",
    ),
    (
        "idle_timeout",
        "\"30s\"",
        "internal/protocol/params.go DefaultIdleTimeout = 30 s",
    ),
    (
        "stream_window",
        "\"512KiB\"",
        "internal/protocol/params.go InitialMaxStreamData = 512 KiB",
    ),
    (
        "connection_window",
        "\"768KiB\"",
        "internal/protocol/params.go InitialMaxData = ConnectionFlowControlMultiplier \
         (1.5) x InitialMaxStreamData",
    ),
    (
        "allowance",
        "\"autotune\"",
        "internal/flowcontrol/base_flow_controller.go maybeAdjustWindowSize: the window \
         doubles when the last update's window was consumed in under 4 x fraction x srtt \
         (2 srtt for half of it), up to the maximum; connection window kept at 1.5 x the \
         stream window (stream_flow_controller.go EnsureMinimumWindowSize)",
    ),
    (
        "max_stream_window",
        "\"6MiB\"",
        "internal/protocol/params.go DefaultMaxReceiveStreamFlowControlWindow = 6 MiB",
    ),
    (
        "max_connection_window",
        "\"15MiB\"",
        "internal/protocol/params.go DefaultMaxReceiveConnectionFlowControlWindow = 15 MiB",
    ),
    (
        "max_streams_bidi",
        "100",
        "internal/protocol/params.go DefaultMaxIncomingStreams = 100",
    ),
];

/// Resolves `profile` in a `quic_bulk` table: inserts the profile's value of every key
/// the table does not set (explicit keys win). Unknown profile names are left for
/// deserialisation to reject.
pub fn apply_profile(table: &mut toml::Table) {
    let Some(toml::Value::String(name)) = table.get("profile") else {
        return;
    };
    let Some(profile) = Profile::ALL.into_iter().find(|p| p.name() == name.as_str()) else {
        return;
    };
    for (key, value, _) in profile.keys() {
        if !table.contains_key(*key) {
            let v: toml::Table =
                toml::from_str(&format!("v = {value}")).expect("profile values are valid TOML");
            table.insert((*key).to_string(), v["v"].clone());
        }
    }
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

/// All QUIC model parameters. Sizes are in bytes (integers, or unit strings such as
/// `"1MB"` when deserialised).
///
/// The serde impls are derived (`remote = "Self"`, see the `Serialize` and `Deserialize`
/// impls below) so that an unknown key is still reported with the list of every key,
/// which `#[serde(flatten)]` would otherwise drop from the message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", default, deny_unknown_fields)]
pub struct QuicConfig {
    // ---- sizes --------------------------------------------------------------------
    /// Largest UDP payload the endpoints send: QUIC header + frames + 16-byte AEAD tag.
    /// Default 1250 (Chromium / Google quiche `kDefaultMaxPacketSize`); RFC 9000 §14
    /// requires at least 1200.
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub max_udp_payload: u64,
    /// Connection ID length used by both endpoints. Default 8 (RFC 9000 §7.2: a client's
    /// first Destination Connection ID is at least 8 bytes; quinn's default length).
    pub cid_len: u64,

    // ---- handshake (TLS 1.3 message sizes; estimates, see docs/rfc-conformance.md) -
    /// ClientHello size carried in the client's Initial CRYPTO frames. Default 300: a
    /// TLS 1.3 ClientHello with one X25519 key share, SNI, ALPN and QUIC transport
    /// parameters is typically 250-350 bytes (estimate; hybrid post-quantum key shares
    /// push it above 1100 bytes and then it spans two Initial packets).
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub client_hello_size: u64,
    /// ServerHello size (server Initial CRYPTO). Default 90: a TLS 1.3 ServerHello with
    /// an X25519 key share and supported_versions (4 + 2 + 32 + 1 + 2 + 1 + 2 + 6 + 40).
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub server_hello_size: u64,
    /// Server Handshake flight size: EncryptedExtensions, Certificate, CertificateVerify
    /// and Finished. Default 3000: an RSA-2048 leaf plus one intermediate is about
    /// 2.5 KB of DER, CertificateVerify 264 B, Finished 36 B, EncryptedExtensions with
    /// transport parameters ~100 B (estimate). With the 90-byte ServerHello this fits in
    /// three datagrams, within the 3 x 1200 B anti-amplification budget.
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub server_handshake_size: u64,
    /// Client Handshake flight size (Finished: 4-byte header + 32-byte HMAC-SHA256).
    /// Default 36.
    #[serde(deserialize_with = "crate::units::serde_size::de")]
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
    /// Send ECN-capable packets (ECT(0)) and respond to CE marks (RFC 9000 §13.4, RFC 9002
    /// §7.1). The receiver always counts and reports the codepoints it sees (§13.4.1).
    /// Default `false`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ecn: bool,

    // ---- congestion control and pacing -------------------------------------------------
    /// Congestion-control and pacing parameters ([`CcParams`]: `cc`, `pacing`,
    /// `pacing_gain`, `initial_cwnd_packets`, `initial_cwnd_bytes`, `cc_segment_size`,
    /// `pacing_gain_slow_start`, `pacing_burst_packets`, `cubic_beta`, `cubic_c`,
    /// `fast_convergence`, `emulated_connections`, `hystart`), flattened: the keys sit
    /// in this table. Datagrams there are of `max_udp_payload` bytes.
    #[serde(flatten)]
    pub cc: CcParams,
    /// Parameter profile: `rfc` or `chromium` ([`Profile`]). Default `rfc`.
    pub profile: Profile,

    // ---- flow control ---------------------------------------------------------------------
    /// initial_max_stream_data_bidi_* transport parameters and the stream receive window.
    /// Default 1,250,000 (quinn's `stream_receive_window`, sized for 100 Mb/s x 100 ms).
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub stream_window: u64,
    /// initial_max_data transport parameter and connection receive window. Default
    /// 2^62 - 1 (quinn's `receive_window` = VarInt::MAX: no connection-level limit).
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub connection_window: u64,
    /// initial_max_streams_bidi transport parameter. Default 100 (quinn's
    /// `max_concurrent_bidi_streams`).
    pub max_streams_bidi: u64,
    /// Receive-window update policy of the streams, and of the connection unless
    /// `connection_allowance` is set ([`crate::transport::allowance::AllowanceKind`], or a
    /// user's allowance registered in a [`crate::Registry`]). Default `static`.
    pub allowance: AllowancePolicy,
    /// Receive-window update policy of the connection; unset = `allowance` (paper 001
    /// runs the same policy at both levels). Default unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connection_allowance: Option<AllowancePolicy>,
    /// Upper bound of a stream's receive window for a growing `allowance` (`autotune`,
    /// `fast_autotune`); an error with a fixed-window one. Unset = max(16 MiB,
    /// `stream_window`) (Google quiche `kStreamReceiveWindowLimit`). Default unset.
    #[serde(
        deserialize_with = "crate::units::serde_size::de_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_stream_window: Option<u64>,
    /// Upper bound of the connection's receive window for a growing connection policy;
    /// an error with a fixed-window one. Unset = max(24 MiB, `connection_window`) (Google
    /// quiche `kSessionReceiveWindowLimit`). Default unset.
    #[serde(
        deserialize_with = "crate::units::serde_size::de_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_connection_window: Option<u64>,

    // ---- sender --------------------------------------------------------------------------
    /// Sender scheduler: which stream the sender serves next. Default round robin.
    pub scheduler: SchedulerKind,

    // ---- resumption and 0-RTT (docs/lifecycle.md; used by `quic_connections`) ------------
    /// The server's initial-window policy for the connections of a sequence
    /// ([`InitialWindowConfig`], paper 000): `default` (the controller's initial window) or `history`.
    /// Default `{ policy = "default" }`, not serialised (outputs without the key are
    /// unchanged).
    #[serde(skip_serializing_if = "InitialWindowConfig::is_default")]
    pub initial_window: InitialWindowConfig,
    /// ClientHello size when resuming with a session ticket: the default 300-byte
    /// ClientHello plus a pre_shared_key extension (RFC 8446 §4.2.11: 4 B header, 2 B
    /// identities length, 2 B identity length, a ~160-byte ticket, 4 B obfuscated age,
    /// 2 B binders length, a 33-byte binder) and early_data (4 B). Default 510 (estimate).
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub resumption_client_hello_size: u64,
    /// Server Handshake flight on resumption: EncryptedExtensions and Finished, no
    /// Certificate or CertificateVerify (RFC 8446 §2.2). Default 140 (~100 B
    /// EncryptedExtensions with transport parameters and early_data, 36 B Finished;
    /// estimate). The ServerHello grows by its 6-byte pre_shared_key extension.
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub resumption_server_handshake_size: u64,
    /// A resuming client sends its requests in 0-RTT packets (RFC 9001 §4.6.1). Default
    /// on.
    pub zero_rtt: bool,
    /// The server rejects 0-RTT (RFC 9001 §4.6.2): it accepts the ticket but drops the
    /// 0-RTT packets; the client sends the data again in 1-RTT packets. Default off.
    pub reject_zero_rtt: bool,
    /// Size of the address-validation token (NEW_TOKEN, RFC 9000 §8.1.3) the server gives
    /// with each session ticket; the client puts it in the header of its Initial packets
    /// when it reconnects, and a valid token lifts the 3x anti-amplification limit
    /// (§8.1). 0: the server issues no token. Default 64 (estimate of an encrypted
    /// address + timestamp token).
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub address_token_size: u64,
    /// Connection migration (RFC 9000 §9): `None` (default) keeps today's model, where a
    /// live connection keeps its old address when the client's host changes address (so
    /// it does not survive an IP change); `Some` makes a live connection follow the
    /// client to its new address, with path validation and the window policy given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub migration: Option<MigrationConfig>,
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
            ecn: false,
            cc: CcParams::default(),
            profile: Profile::Rfc,
            stream_window: 1_250_000,
            connection_window: (1 << 62) - 1,
            max_streams_bidi: 100,
            allowance: AllowancePolicy::Builtin(AllowanceKind::Static),
            connection_allowance: None,
            max_stream_window: None,
            max_connection_window: None,
            scheduler: SchedulerKind::RoundRobin,
            initial_window: InitialWindowConfig::default(),
            resumption_client_hello_size: 510,
            resumption_server_handshake_size: 140,
            zero_rtt: true,
            reject_zero_rtt: false,
            address_token_size: 64,
            migration: None,
        }
    }
}

impl Serialize for QuicConfig {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        QuicConfig::serialize(self, s)
    }
}

impl<'de> Deserialize<'de> for QuicConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        QuicConfig::deserialize(d).map_err(with_key_list)
    }
}

/// Every key of a `QuicConfig` table in declaration order: the keys a config with every
/// optional value set serialises to (computed once).
fn quic_keys() -> &'static [&'static str] {
    static KEYS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        let mut full = QuicConfig::default();
        full.cc.initial_cwnd_packets = Some(1);
        full.cc.initial_cwnd_bytes = Some(1);
        full.cc.cc_segment_size = Some(1);
        full.cc.pacing_burst_packets = Some(1);
        full.cc.hystart_flavor = crate::cc::HyStartFlavor::HybridSlowStart;
        full.connection_allowance = Some(AllowanceKind::Static.into());
        full.max_stream_window = Some(1);
        full.max_connection_window = Some(1);
        full.migration = Some(crate::transport::migration::MigrationConfig::default());
        full.initial_window.policy = crate::transport::initial_window::InitialWindowKind::History;
        // The top-level keys in the order the serializer writes them (declaration order;
        // a sub-table such as `initial_window` at its place, not last as TOML sections).
        struct Keys(Vec<&'static str>);
        impl<'de> Deserialize<'de> for Keys {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = Keys;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str("a map")
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(
                        self,
                        mut m: A,
                    ) -> Result<Keys, A::Error> {
                        let mut keys = Vec::new();
                        while let Some(k) = m.next_key::<String>()? {
                            m.next_value::<serde::de::IgnoredAny>()?;
                            keys.push(&*Box::leak(k.into_boxed_str()));
                        }
                        Ok(Keys(keys))
                    }
                }
                d.deserialize_map(V)
            }
        }
        let text = serde_json::to_string(&full).expect("QuicConfig serialises");
        serde_json::from_str::<Keys>(&text)
            .expect("a JSON object")
            .0
    })
}

/// Turns the bare `unknown field `x`` error of a flattening struct into serde's usual
/// `unknown field `x`, expected one of ...`.
fn with_key_list<E: serde::de::Error>(e: E) -> E {
    let msg = e.to_string();
    match msg
        .trim_end()
        .strip_prefix("unknown field `")
        .and_then(|r| r.strip_suffix('`'))
    {
        Some(key) if !key.contains('`') => E::unknown_field(key, quic_keys()),
        _ => e,
    }
}

/// A growing stream allowance's upper bound when `max_stream_window` is unset (if
/// `stream_window` is not larger): 16 MiB, Google quiche's `kStreamReceiveWindowLimit`
/// (`quic_constants.h`; Cloudflare quiche's `MAX_STREAM_WINDOW` is the same).
pub const DEFAULT_MAX_STREAM_WINDOW: u64 = 16 << 20;

/// A growing connection allowance's upper bound when `max_connection_window` is unset (if
/// `connection_window` is not larger): 24 MiB, Google quiche's
/// `kSessionReceiveWindowLimit` (Cloudflare quiche's `MAX_CONNECTION_WINDOW` is the same).
pub const DEFAULT_MAX_CONNECTION_WINDOW: u64 = 24 << 20;

/// What `max_stream_window` allows (the error's "expected" text).
pub const MAX_STREAM_WINDOW_ALLOWED: &str =
    "a bound in [stream_window, 2^62 - 1] bytes (omit it for max(16 MiB, stream_window))";

/// What `max_connection_window` allows (the error's "expected" text).
pub const MAX_CONNECTION_WINDOW_ALLOWED: &str =
    "a bound in [connection_window, 2^62 - 1] bytes (omit it for max(24 MiB, connection_window))";

/// The smallest `stream_window` / `connection_window`: one datagram's payload at the
/// smallest `max_udp_payload` (1200 B, RFC 9000 §14).
pub const MIN_WINDOW: u64 = 1200;
const STREAM_WINDOW_ALLOWED: &str = "a window >= 1200 bytes (one datagram's payload)";
const CONNECTION_WINDOW_ALLOWED: &str =
    "a window in [1200, 2^62 - 1] bytes (at least one datagram's payload)";

impl QuicConfig {
    /// The initial congestion window in bytes: the explicit override, or RFC 9002 §7.2
    /// `min(10 * MDS, max(14720, 2 * MDS))` ([`CcParams::initial_window`]).
    pub fn initial_cwnd(&self) -> u64 {
        self.cc.initial_window(self.max_udp_payload)
    }

    /// The configuration `profile` resolves to, with every other field at its default
    /// (what a `quic_bulk` table holding only `profile = "..."` gives).
    pub fn for_profile(profile: Profile) -> QuicConfig {
        let mut t = toml::Table::new();
        t.insert("profile".into(), toml::Value::String(profile.name().into()));
        apply_profile(&mut t);
        toml::Value::Table(t)
            .try_into()
            .expect("profile values deserialise")
    }

    /// The congestion controller's segment size: `cc_segment_size`, else
    /// `max_udp_payload`.
    pub fn cc_segment(&self) -> u64 {
        self.cc.segment_size(self.max_udp_payload)
    }

    /// The pacer's bucket depth in bytes: `pacing_burst_packets` datagrams, else the
    /// initial window (at least one datagram).
    pub fn pacing_burst_bytes(&self) -> u64 {
        self.cc
            .pacing_burst_packets
            .map_or(self.initial_cwnd(), |p| p * self.max_udp_payload)
            .max(self.max_udp_payload)
    }

    /// The connection-level allowance policy: `connection_allowance`, else `allowance`.
    pub fn connection_allowance_kind(&self) -> AllowancePolicy {
        self.connection_allowance
            .clone()
            .unwrap_or_else(|| self.allowance.clone())
    }

    /// The maximum segment size `improved_static` refills early by: the STREAM payload of
    /// a full 1-RTT datagram of `max_udp_payload` bytes in a bulk transfer's steady state
    /// — short header (1 + `cid_len` bytes, RFC 9000 §17.3.1), a 2-byte packet number
    /// (§17.1, enough for up to 2^14 unacknowledged packets), the AEAD tag (16 B, RFC 9001
    /// §5.3), and a STREAM frame header with a 1-byte stream ID, a 4-byte offset
    /// (offsets in [2^14, 2^30)) and a 2-byte length (RFC 9000 §19.8, §16). 1215 B with
    /// the defaults, the `P` of `docs/validation.md`.
    pub fn stream_mss(&self) -> u64 {
        let header = header_len_without_pn(PacketType::OneRtt, self.cid_len, 0, 0);
        let stream_frame_header = 1 + 1 + 4 + 2;
        self.max_udp_payload
            .saturating_sub(header + 2 + AEAD_TAG_LEN + stream_frame_header)
    }

    /// The stream-level allowance: policy and parameters (initial window `stream_window`,
    /// bound `max_stream_window` or its default, [`QuicConfig::stream_mss`]).
    pub fn stream_allowance(&self) -> (AllowancePolicy, AllowanceParams) {
        let bound = self
            .max_stream_window
            .unwrap_or(DEFAULT_MAX_STREAM_WINDOW.max(self.stream_window));
        (
            self.allowance.clone(),
            AllowanceParams {
                initial_window: self.stream_window,
                max_window: if self.allowance.grows() {
                    bound
                } else {
                    self.stream_window
                },
                mss: self.stream_mss(),
            },
        )
    }

    /// The connection-level allowance: policy and parameters (initial window
    /// `connection_window`, bound `max_connection_window` or its default,
    /// [`QuicConfig::stream_mss`]).
    pub fn connection_allowance_params(&self) -> (AllowancePolicy, AllowanceParams) {
        let kind = self.connection_allowance_kind();
        let grows = kind.grows();
        let bound = self
            .max_connection_window
            .unwrap_or(DEFAULT_MAX_CONNECTION_WINDOW.max(self.connection_window));
        (
            kind,
            AllowanceParams {
                initial_window: self.connection_window,
                max_window: if grows { bound } else { self.connection_window },
                mss: self.stream_mss(),
            },
        )
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
        if self.ack_eliciting_threshold == 0 {
            return bad("ack_eliciting_threshold", 0, "a number of packets >= 1");
        }
        if self.max_ack_ranges == 0 {
            return bad("max_ack_ranges", 0, "a number of ranges >= 1");
        }
        if self.pto_probes == 0 || self.pto_probes > 2 {
            return bad("pto_probes", self.pto_probes, "1 or 2 (RFC 9002 §6.2.4)");
        }
        // Issue 15 item 6: a window below one datagram's payload (1200 B, the smallest
        // `max_udp_payload`, RFC 9000 §14) never carries a full packet, and below 2 B the
        // static policy (an update once less than window / 2 is left) never advances: the
        // transfer deadlocked and ended `stalled` at the idle timeout.
        if self.stream_window < MIN_WINDOW {
            return bad("stream_window", self.stream_window, STREAM_WINDOW_ALLOWED);
        }
        if self.connection_window < MIN_WINDOW || self.connection_window >= 1 << 62 {
            return bad(
                "connection_window",
                self.connection_window,
                CONNECTION_WINDOW_ALLOWED,
            );
        }
        if let Some(b) = self.max_stream_window {
            if !self.allowance.grows() {
                return bad(
                    "max_stream_window",
                    b,
                    &format!(
                        "no value with allowance = \"{}\" (only \"autotune\" and \"fast_autotune\" grow the stream window up to a bound)",
                        self.allowance.name()
                    ),
                );
            }
            if b < self.stream_window || b >= 1 << 62 {
                return bad("max_stream_window", b, MAX_STREAM_WINDOW_ALLOWED);
            }
        }
        if let Some(b) = self.max_connection_window {
            let kind = self.connection_allowance_kind();
            if !kind.grows() {
                return bad(
                    "max_connection_window",
                    b,
                    &format!(
                        "no value with a connection allowance of \"{}\" (only \"autotune\" and \"fast_autotune\" grow the connection window up to a bound; `connection_allowance` defaults to `allowance`)",
                        kind.name()
                    ),
                );
            }
            if b < self.connection_window || b >= 1 << 62 {
                return bad("max_connection_window", b, MAX_CONNECTION_WINDOW_ALLOWED);
            }
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
        self.cc.validate(self.max_udp_payload)?;
        self.initial_window
            .validate(self.cc_segment(), self.initial_cwnd())?;
        if self.client_hello_size == 0 || self.server_hello_size == 0 {
            return bad(
                "client_hello_size",
                self.client_hello_size.min(self.server_hello_size),
                "TLS message sizes > 0 bytes",
            );
        }
        if self.resumption_client_hello_size == 0 {
            return bad(
                "resumption_client_hello_size",
                0,
                "a TLS message size > 0 bytes",
            );
        }
        if self.resumption_server_handshake_size == 0 {
            return bad(
                "resumption_server_handshake_size",
                0,
                "a TLS message size > 0 bytes",
            );
        }
        if self.address_token_size > 512 {
            return bad(
                "address_token_size",
                self.address_token_size,
                "a token size in [0, 512] bytes (0: no token)",
            );
        }
        if self.server_handshake_size == 0 || self.client_finished_size == 0 {
            return bad(
                "server_handshake_size",
                self.server_handshake_size.min(self.client_finished_size),
                "TLS message sizes > 0 bytes",
            );
        }
        if let Some(m) = &self.migration {
            if m.throughput_window.0 == 0 {
                return bad(
                    "migration.throughput_window",
                    crate::units::format_duration(m.throughput_window),
                    MIGRATION_WINDOW_ALLOWED,
                );
            }
        }
        Ok(())
    }
}

/// The `allowed` text of `migration.throughput_window`.
pub const MIGRATION_WINDOW_ALLOWED: &str = "a time > 0";

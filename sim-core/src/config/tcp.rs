//! [`TcpConfig`]: the parameters of one TCP endpoint (with TLS and an HTTP/2-style
//! multiplexer on top), pure data with every default documented and cited. The TCP code
//! that uses them lives in `tcp/`.
//!
//! The defaults are a Linux-like preset (RTO minimum 200 ms, delayed-ACK timer 40 ms,
//! Linux's CUBIC with HyStart, no pacing); the RFC values are one key away (`rto_min = 1 s`,
//! RFC 6298 §2.4; `delayed_ack = 200 ms`, RFC 1122 §4.2.3.2 "SHOULD be less than
//! 0.5 seconds", the traditional BSD 200 ms).
//!
//! Scenarios write these keys with `transport = "tcp"` (flat, in `tcp = { ... }`, or per
//! side); their descriptors are `validate::schema::TCP`. Deserialising alone fills the
//! congestion-control keys from [`CcParams::default`] (the `#[serde(flatten)]`ed struct
//! has its own defaults), not from [`TcpConfig::default`]'s TCP preset: the scenario
//! builder starts from the serialised [`TcpConfig::default`] and overlays the written
//! keys, so a scenario gets the TCP preset.

use crate::cc::{CcAlgorithm, CcParams, CubicFlavor};
use crate::time::SimDuration;
use serde::{Deserialize, Serialize};

/// The TLS handshake run after the three-way handshake.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TlsVersion {
    /// No TLS: data after the three-way handshake (`"none"`).
    #[serde(rename = "none")]
    None,
    /// TLS 1.2 full handshake, 2 round trips (RFC 5246 §7.3) (`"1.2"`).
    #[serde(rename = "1.2")]
    Tls12,
    /// TLS 1.3 full handshake, 1 round trip (RFC 8446 §2) (`"1.3"`). Default.
    #[default]
    #[serde(rename = "1.3")]
    Tls13,
}

impl TlsVersion {
    /// Round trips the TLS handshake adds before the client may send application data
    /// (the handshake model of `docs/tcp.md`): 0, 2 or 1.
    pub fn round_trips(self) -> u64 {
        match self {
            TlsVersion::None => 0,
            TlsVersion::Tls12 => 2,
            TlsVersion::Tls13 => 1,
        }
    }
}

/// How the retransmission timeout is computed from the RTT estimate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RtoFormula {
    /// Linux (`tcp_set_rto`, `tcp_rtt_estimator`): the minimum floors the variance term,
    /// `RTO = SRTT + max(4·RTTVAR, rto_min)`, so the timer keeps `rto_min` of slack above
    /// the RTT on long, jitter-free paths. Default (the Linux preset).
    #[default]
    Linux,
    /// RFC 6298 §2.3-2.4: `RTO = max(rto_min, SRTT + max(G, 4·RTTVAR))`.
    Rfc6298,
}

/// The sender's loss recovery (`docs/tcp.md`, "Loss recovery").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TcpRecovery {
    /// Linux's defaults (`net.ipv4.tcp_recovery = 1`, `tcp_frto = 2`, `tcp_early_retrans
    /// = 3`): RACK-TLP loss detection (RFC 8985), PRR during fast recovery (RFC 6937),
    /// F-RTO (RFC 5682) and the undo of spurious reductions by DSACK (RFC 2883 / RFC 3708)
    /// and timestamps (RFC 3522). Default.
    #[default]
    Linux,
    /// The RFCs' conservative baseline: RFC 6675's DupThresh loss detection and `pipe`
    /// with the window at ssthresh during recovery (RFC 5681 §3.2), no RACK, TLP, PRR,
    /// F-RTO or undo.
    Rfc6675,
}

/// Parameters of one TCP endpoint, each with its documented default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TcpConfig {
    // ---- segments -----------------------------------------------------------------------
    /// Maximum segment size announced in the SYN (RFC 9293 §3.7.1), excluding the IP and
    /// TCP headers and options. Default 1460 (a 1500-byte Ethernet MTU minus 40). With
    /// timestamps a full segment carries `mss - 12` bytes (RFC 6691 §2).
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub mss: u64,
    /// Timestamps option on every segment (RFC 7323 §3; Linux default on). Default true.
    pub timestamps: bool,
    /// SACK (RFC 2018) and RFC 6675 loss recovery; off: NewReno (RFC 6582) with
    /// duplicate ACKs. Default true (Linux default on).
    pub sack: bool,
    /// Window scale option in the SYN (RFC 7323 §2; needed for windows above 64 KiB).
    /// Default true.
    pub window_scale: bool,
    /// Receive window the receiver advertises beyond its next expected byte (fixed: the
    /// application reads at once). Default 6 MiB (Linux `tcp_rmem[2]` = 6291456).
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub recv_window: u64,
    /// Receive-window auto-tuning modelled on Linux's dynamic right-sizing
    /// (`tcp_rcv_space_adjust`, after Fisher, "Dynamic right-sizing", 2002): once per
    /// round trip the window grows to twice the bytes the application read in that round
    /// trip plus 16 segments, up to `recv_window_max`; `recv_window` is then the initial
    /// window. It never shrinks (RFC 9293 §3.8.6). Default false: the window stays at
    /// `recv_window` (not serialised when false).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub recv_window_autotune: bool,
    /// Upper bound of the auto-tuned window (Linux `tcp_rmem[2]`). Only with
    /// `recv_window_autotune`. Default 6 MiB = 6291456 (not serialised at its default).
    #[serde(
        deserialize_with = "crate::units::serde_size::de",
        skip_serializing_if = "defaults::recv_window_max"
    )]
    pub recv_window_max: u64,

    // ---- TLS ----------------------------------------------------------------------------
    /// The TLS handshake ([`TlsVersion`]). Default TLS 1.3.
    pub tls: TlsVersion,
    /// ClientHello bytes on the stream. Default 300, QUIC's default ClientHello size
    /// (`QuicConfig::client_hello_size`, an estimate for one X25519 key share, SNI and
    /// ALPN) so that paired runs compare equal handshakes.
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub client_hello_size: u64,
    /// The server's first flight on the stream. Default 3090: QUIC's ServerHello (90) +
    /// EncryptedExtensions, Certificate, CertificateVerify and Finished (3000), the same
    /// estimate; TLS 1.2 (ServerHello, Certificate, ServerKeyExchange, ServerHelloDone)
    /// is close to it.
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub server_flight_size: u64,
    /// The client's second flight. Default 36 (TLS 1.3 Finished: 4-byte header and a
    /// 32-byte HMAC-SHA256, RFC 8446 §4.4.4); TLS 1.2 sends ClientKeyExchange (37 B with
    /// X25519), ChangeCipherSpec and Finished, about 100 B: set it when comparing.
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub client_finished_size: u64,
    /// TLS 1.2 only: the server's ChangeCipherSpec and Finished. Default 51 (a 6-byte
    /// ChangeCipherSpec record and a 45-byte encrypted Finished record with AES-GCM:
    /// 5 + 8 + 16 + 16; estimate).
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub server_finished_size: u64,
    /// Bytes each TLS record of application data adds (the model puts one HTTP/2-style
    /// frame in one record). Default unset = 22 for TLS 1.3 (5-byte header, 1-byte inner
    /// content type, 16-byte AEAD tag; RFC 8446 §5.2), 29 for TLS 1.2 with AES-GCM
    /// (5-byte header, 8-byte explicit nonce, 16-byte tag; RFC 5288 §3), 0 without TLS.
    #[serde(
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::units::serde_size::de_opt",
        default
    )]
    pub tls_record_overhead: Option<u64>,

    // ---- TCP Fast Open and TLS 1.3 0-RTT (docs/tcp.md, "Fast Open and 0-RTT") -------------
    /// TCP Fast Open (RFC 7413). A client holding a cookie for the server sends data in its
    /// SYN (§4.2: the ClientHello with TLS, the first request bytes without), the server
    /// delivers it on receipt of the SYN and may answer before the handshake completes
    /// (§4.2.2); a client without a cookie requests one with an empty Fast Open option
    /// (§4.1.1) and the SYN-ACK carries it (§4.1.2). Both sides must agree. Default false:
    /// today's three-way handshake exactly (not serialised when false).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub fast_open: bool,
    /// ECN (RFC 3168 §6.1): offer it in the SYN (ECE + CWR) / accept it in the SYN-ACK
    /// (ECE); once both sides agreed, data segments go ECT(0), the receiver echoes a CE
    /// mark with ECE until CWR, and the sender reduces its window once per window of data
    /// and sets CWR. Default false (not serialised when false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ecn: bool,
    /// TLS 1.3 0-RTT resumption (RFC 8446 §2.3, §4.2.10): on a resumed session (a later
    /// connection of a `reconnects` flow, or every connection with `resumed`) the
    /// ClientHello offers the ticket as a PSK with `early_data` and the client sends its
    /// requests right behind it; the server answers with the abbreviated flight (no
    /// Certificate, RFC 8446 §2.2) and its response at once. The server sends a
    /// NewSessionTicket (§4.6.1) after the client's Finished on every connection. TLS 1.3
    /// only; both sides must agree. Default false (not serialised when false).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub early_data: bool,
    /// The client talked to this server before the run: it holds a Fast Open cookie (with
    /// `fast_open`) and a session ticket (with `early_data`) from the first connection on.
    /// Needs `fast_open` or `early_data`; the server side ignores it. Default false (not
    /// serialised when false).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub resumed: bool,
    /// ClientHello offering a session ticket: the 300-byte ClientHello plus
    /// pre_shared_key (RFC 8446 §4.2.11: 4 B header, 2 B identities length, 2 B identity
    /// length, a ~160-byte ticket, 4 B obfuscated age, 2 B binders length, a 33-byte
    /// binder), psk_key_exchange_modes (§4.2.9) and early_data (§4.2.10, 4 B). Default
    /// 510, QUIC's `resumption_client_hello_size` (the same estimate).
    #[serde(
        deserialize_with = "crate::units::serde_size::de",
        skip_serializing_if = "defaults::resumption_client_hello_size"
    )]
    pub resumption_client_hello_size: u64,
    /// The server's flight on a resumed handshake: ServerHello with its 6-byte
    /// pre_shared_key extension (96), EncryptedExtensions with early_data and Finished, no
    /// Certificate or CertificateVerify (RFC 8446 §2.2). Default 236: QUIC's 90 + 6 + its
    /// `resumption_server_handshake_size` 140 (the same estimate).
    #[serde(
        deserialize_with = "crate::units::serde_size::de",
        skip_serializing_if = "defaults::resumption_server_flight_size"
    )]
    pub resumption_server_flight_size: u64,
    /// NewSessionTicket (RFC 8446 §4.6.1) the server sends after the client's Finished
    /// when `early_data` is on: 4 B handshake header, 4 B lifetime, 4 B age_add, a 9-byte
    /// nonce, a ~160-byte ticket with its 2-byte length, and extensions with early_data
    /// (max_early_data_size, 2 + 8 B). Default 193 (estimate).
    #[serde(
        deserialize_with = "crate::units::serde_size::de",
        skip_serializing_if = "defaults::new_session_ticket_size"
    )]
    pub new_session_ticket_size: u64,

    // ---- timers and ACKs ------------------------------------------------------------------
    /// RTO before the first RTT sample. Default 1 s (RFC 6298 §2.1; Linux
    /// TCP_TIMEOUT_INIT).
    pub initial_rto: SimDuration,
    /// Lower bound of the RTO. Default 200 ms (Linux TCP_RTO_MIN); RFC 6298 §2.4 says
    /// 1 s.
    pub rto_min: SimDuration,
    /// Upper bound of the backed-off RTO. Default 120 s (Linux TCP_RTO_MAX); RFC 6298
    /// §2.5 allows a maximum of at least 60 s.
    pub rto_max: SimDuration,
    /// How `rto_min` combines with the RTT estimate ([`RtoFormula`]). Default `linux`
    /// (`SRTT + max(4·RTTVAR, rto_min)`); `rfc6298` = `max(rto_min, SRTT + 4·RTTVAR)`.
    pub rto_formula: RtoFormula,
    /// Delayed-ACK timer. Default 40 ms (Linux TCP_DELACK_MIN); RFC 1122 §4.2.3.2:
    /// less than 500 ms, traditionally 200 ms.
    pub delayed_ack: SimDuration,
    /// Acknowledge at least every this many full-sized segments (RFC 5681 §4.2: every
    /// second; 1 = acknowledge every segment). Default 2.
    pub ack_every: u64,
    /// DupThresh (RFC 6675 §2, RFC 5681 §3.2). Default 3.
    pub dup_thresh: u64,
    /// Loss recovery ([`TcpRecovery`]). Default `linux`.
    pub recovery: TcpRecovery,
    /// Quick-ACK mode at the start of a connection: the receiver acknowledges every
    /// segment until it has sent this many ACKs (Linux `tcp_incr_quickack` with
    /// `TCP_MAX_QUICKACKS` = 16; 0 = off, RFC 5681 §4.2's every-second-segment rule from
    /// the start). Default 16.
    pub quickack: u64,
    /// SYN retransmissions sent at a constant `initial_rto` before the timer starts
    /// doubling (Linux `net.ipv4.tcp_syn_linear_timeouts`, default 4; 0 = RFC 6298 §5.5
    /// doubling from the first). Default 4.
    pub syn_linear_timeouts: u32,

    // ---- multiplexer ----------------------------------------------------------------------
    /// Streams one side may have open at once (RFC 9113 §6.5.2
    /// SETTINGS_MAX_CONCURRENT_STREAMS; "no smaller than 100" recommended). Default 100.
    pub max_concurrent_streams: u64,
    /// Largest DATA frame payload (RFC 9113 §6.5.2 SETTINGS_MAX_FRAME_SIZE initial value
    /// 2^14). Default 16384.
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub frame_size: u64,

    // ---- congestion control ---------------------------------------------------------------
    /// Which CUBIC when `cc = "cubic"` ([`CubicFlavor`]): `linux` (default) follows Linux's
    /// `net/ipv4/tcp_cubic.c` where it differs from RFC 9438 ([`crate::cc::cubic_linux`];
    /// with `hystart`, Linux HyStart), `rfc9438` the RFC as QUIC runs it (with `hystart`,
    /// HyStart++, RFC 9406).
    pub cubic: CubicFlavor,
    /// Congestion control and pacing ([`CcParams`]), in segments of the effective MSS.
    /// TCP preset: `cubic` (Linux default since 2.6.19) in its Linux flavour (`cubic`
    /// above) with `hystart` (Linux HyStart, on by default in Linux), `pacing` off (Linux
    /// paces CUBIC only under the fq qdisc), initial window unset = RFC 6928 `min(10 MSS,
    /// max(2 MSS, 14600))`.
    #[serde(flatten)]
    pub cc: CcParams,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1460,
            timestamps: true,
            sack: true,
            window_scale: true,
            recv_window: 6_291_456,
            recv_window_autotune: false,
            recv_window_max: 6_291_456, // Linux tcp_rmem[2]
            tls: TlsVersion::Tls13,
            client_hello_size: 300,
            server_flight_size: 3090,
            client_finished_size: 36,
            server_finished_size: 51,
            tls_record_overhead: None,
            fast_open: false,
            ecn: false,
            early_data: false,
            resumed: false,
            resumption_client_hello_size: 510,
            resumption_server_flight_size: 236,
            new_session_ticket_size: 193,
            initial_rto: SimDuration::from_secs(1), // RFC 6298 §2.1
            rto_min: SimDuration::from_millis(200), // Linux TCP_RTO_MIN
            rto_max: SimDuration::from_secs(120),   // Linux TCP_RTO_MAX
            rto_formula: RtoFormula::Linux,         // Linux tcp_set_rto
            delayed_ack: SimDuration::from_millis(40), // Linux TCP_DELACK_MIN
            ack_every: 2,                           // RFC 5681 §4.2
            dup_thresh: 3,                          // RFC 6675 §2
            recovery: TcpRecovery::Linux,           // Linux tcp_recovery = 1
            quickack: 16,                           // Linux TCP_MAX_QUICKACKS
            syn_linear_timeouts: 4,                 // Linux tcp_syn_linear_timeouts
            max_concurrent_streams: 100,            // RFC 9113 §6.5.2
            frame_size: 16_384,                     // RFC 9113 §6.5.2
            cubic: CubicFlavor::Linux,              // Linux net/ipv4/tcp_cubic.c
            cc: CcParams {
                algorithm: CcAlgorithm::Cubic,
                pacing: false,
                hystart: true,
                ..CcParams::default()
            },
        }
    }
}

/// `skip_serializing_if` tests: the new keys' defaults are not serialised, so resolved
/// configurations written before them are unchanged.
mod defaults {
    pub fn recv_window_max(v: &u64) -> bool {
        *v == 6_291_456
    }
    pub fn resumption_client_hello_size(v: &u64) -> bool {
        *v == 510
    }
    pub fn resumption_server_flight_size(v: &u64) -> bool {
        *v == 236
    }
    pub fn new_session_ticket_size(v: &u64) -> bool {
        *v == 193
    }
}

/// What `recv_window` allows (the error's "expected" text).
pub const RECV_WINDOW_ALLOWED: &str =
    "a window of at least one mss and at most 2^30 bytes (RFC 7323 §2.3), 65535 without window_scale (RFC 9293 §3.1)";

/// What `recv_window_max` allows with auto-tuning (the error's "expected" text).
pub const RECV_WINDOW_MAX_ALLOWED: &str =
    "unset unless recv_window_autotune = true; then a window of at least recv_window and at most 2^30 bytes (RFC 7323 §2.3), 65535 without window_scale (RFC 9293 §3.1)";

impl TcpConfig {
    /// The largest receive window this endpoint may advertise: `recv_window_max` with
    /// auto-tuning, else `recv_window`.
    pub fn max_recv_window(&self) -> u64 {
        if self.recv_window_autotune {
            self.recv_window_max
        } else {
            self.recv_window
        }
    }

    /// Payload bytes of a full segment: the MSS minus the per-segment options (12 with
    /// timestamps; RFC 6691 §2).
    pub fn effective_mss(&self) -> u64 {
        self.mss
            - if self.timestamps {
                crate::wire::tcp::TIMESTAMPS_OPTION_LEN
            } else {
                0
            }
    }

    /// The TLS record overhead per application-data record ([`TcpConfig::tls_record_overhead`]).
    pub fn record_overhead(&self) -> u64 {
        self.tls_record_overhead.unwrap_or(match self.tls {
            TlsVersion::None => 0,
            TlsVersion::Tls12 => 29, // RFC 5288 §3: 5 + 8 + 16
            TlsVersion::Tls13 => 22, // RFC 8446 §5.2: 5 + 1 + 16
        })
    }

    /// RFC 6928 §2 initial window for segments of `smss` bytes:
    /// `min(10 SMSS, max(2 SMSS, 14600))`.
    pub fn rfc6928_initial_window(smss: u64) -> u64 {
        (10 * smss).min((2 * smss).max(14_600))
    }

    /// The congestion-control parameters with the initial window resolved (the RFC 6928
    /// window unless `initial_cwnd_bytes` / `initial_cwnd_packets` say otherwise) and the
    /// CUBIC flavour of `cubic`.
    pub fn cc_params(&self) -> CcParams {
        let mut p = self.cc.clone();
        p.cubic_flavor = self.cubic;
        if p.initial_cwnd_bytes.is_none() && p.initial_cwnd_packets.is_none() {
            p.initial_cwnd_bytes = Some(Self::rfc6928_initial_window(self.effective_mss()));
        }
        p
    }

    /// Checks the values. The error is `(key, value, allowed)`.
    pub fn validate(&self) -> Result<(), (&'static str, String, String)> {
        fn bad<T: std::fmt::Display>(
            field: &'static str,
            v: T,
            allowed: &str,
        ) -> Result<(), (&'static str, String, String)> {
            Err((field, v.to_string(), allowed.to_string()))
        }
        if !(536..=65_495).contains(&self.mss) {
            // RFC 9293 §3.7.1: 536 is the default send MSS; 65535 - 40 the IPv4 maximum.
            return bad(
                "mss",
                self.mss,
                "a size in [536, 65495] bytes (RFC 9293 §3.7.1)",
            );
        }
        // RFC 7323 §2.3: a shift of at most 14, a window below 2^30; without the option
        // the 16-bit field (RFC 9293 §3.1); at least one segment.
        let max_window = if self.window_scale { 1 << 30 } else { 65_535 };
        if self.recv_window < self.mss || self.recv_window > max_window {
            return bad("recv_window", self.recv_window, RECV_WINDOW_ALLOWED);
        }
        if self.recv_window_autotune {
            if self.recv_window_max < self.recv_window || self.recv_window_max > max_window {
                return bad(
                    "recv_window_max",
                    self.recv_window_max,
                    RECV_WINDOW_MAX_ALLOWED,
                );
            }
        } else if self.recv_window_max != 6_291_456 {
            return bad(
                "recv_window_max",
                self.recv_window_max,
                RECV_WINDOW_MAX_ALLOWED,
            );
        }
        for (k, v) in [
            ("client_hello_size", self.client_hello_size),
            ("server_flight_size", self.server_flight_size),
            ("client_finished_size", self.client_finished_size),
            ("server_finished_size", self.server_finished_size),
            (
                "resumption_client_hello_size",
                self.resumption_client_hello_size,
            ),
            (
                "resumption_server_flight_size",
                self.resumption_server_flight_size,
            ),
            ("new_session_ticket_size", self.new_session_ticket_size),
        ] {
            if v == 0 || v > 1 << 20 {
                return bad(k, v, "a message size in [1, 1048576] bytes");
            }
        }
        // RFC 8446 §2.3, §4.2.10: early data is a TLS 1.3 mechanism.
        if self.early_data && self.tls != TlsVersion::Tls13 {
            return bad(
                "early_data",
                format!("true with tls = {:?}", self.tls),
                "false unless tls = \"1.3\" (0-RTT is TLS 1.3's, RFC 8446 §2.3)",
            );
        }
        if self.resumed && !self.fast_open && !self.early_data {
            return bad(
                "resumed",
                true,
                "false unless fast_open or early_data is on (a cookie or ticket to hold)",
            );
        }
        if let Some(o) = self.tls_record_overhead {
            if o > 256 {
                return bad("tls_record_overhead", o, "at most 256 bytes per record");
            }
        }
        if self.initial_rto == SimDuration::ZERO {
            return bad(
                "initial_rto",
                self.initial_rto,
                "a time > 0 (RFC 6298 §2.1)",
            );
        }
        if self.rto_min == SimDuration::ZERO {
            return bad("rto_min", self.rto_min, "a time > 0 (RFC 6298 §2.4)");
        }
        if self.rto_max < self.rto_min {
            return bad("rto_max", self.rto_max, "a time >= rto_min (RFC 6298 §2.5)");
        }
        if self.delayed_ack > SimDuration::from_millis(500) {
            return bad(
                "delayed_ack",
                self.delayed_ack,
                "a delay of at most 500ms (RFC 1122 §4.2.3.2, RFC 5681 §4.2)",
            );
        }
        if !(1..=64).contains(&self.ack_every) {
            return bad(
                "ack_every",
                self.ack_every,
                "a number of segments in [1, 64]",
            );
        }
        if !(1..=1000).contains(&self.dup_thresh) {
            return bad(
                "dup_thresh",
                self.dup_thresh,
                "a number of segments in [1, 1000]",
            );
        }
        if self.quickack > 1000 {
            return bad("quickack", self.quickack, "a number of ACKs in [0, 1000]");
        }
        if self.syn_linear_timeouts > 100 {
            return bad(
                "syn_linear_timeouts",
                self.syn_linear_timeouts,
                "a number of retransmissions in [0, 100]",
            );
        }
        if self.max_concurrent_streams == 0 {
            return bad("max_concurrent_streams", 0, "at least 1 stream");
        }
        if !(16_384..=16_777_215).contains(&self.frame_size) {
            return bad(
                "frame_size",
                self.frame_size,
                "a size in [16384, 16777215] bytes (RFC 9113 §6.5.2)",
            );
        }
        self.cc_params().validate(self.effective_mss())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recv_window_max_needs_autotuning_and_covers_the_initial_window() {
        let mut c = TcpConfig {
            recv_window_max: 1 << 20,
            ..TcpConfig::default()
        };
        // A key the fixed window does not use is an error naming it.
        assert_eq!(c.validate().unwrap_err().0, "recv_window_max");
        c.recv_window_autotune = true;
        c.recv_window = 65_536;
        assert!(c.validate().is_ok());
        assert_eq!(c.max_recv_window(), 1 << 20);
        c.recv_window = 2 << 20;
        assert_eq!(c.validate().unwrap_err().0, "recv_window_max");
        c.recv_window = 65_536;
        c.recv_window_max = (1 << 30) + 1;
        assert_eq!(c.validate().unwrap_err().0, "recv_window_max");
        // Off, the defaults are not serialised (resolved configurations unchanged).
        let j = serde_json::to_string(&TcpConfig::default()).unwrap();
        assert!(!j.contains("recv_window_autotune") && !j.contains("recv_window_max"));
    }

    #[test]
    fn defaults_are_valid_and_linux_like() {
        let c = TcpConfig::default();
        assert!(c.validate().is_ok());
        assert_eq!(c.effective_mss(), 1448);
        // RFC 6928: min(14480, max(2896, 14600)) = 14480 = 10 segments.
        assert_eq!(c.cc_params().initial_window(c.effective_mss()), 14_480);
        assert_eq!(TcpConfig::rfc6928_initial_window(1460), 14_600);
        // Above 1460 B the 14600-byte cap binds: 9000-byte segments start with 2.
        assert_eq!(TcpConfig::rfc6928_initial_window(9000), 18_000);
        assert_eq!(c.record_overhead(), 22);
    }

    #[test]
    fn bad_values_name_their_key() {
        let c = TcpConfig {
            mss: 100,
            ..TcpConfig::default()
        };
        assert_eq!(c.validate().unwrap_err().0, "mss");
        let c = TcpConfig {
            window_scale: false,
            ..TcpConfig::default()
        };
        assert_eq!(c.validate().unwrap_err().0, "recv_window");
        let c = TcpConfig {
            delayed_ack: SimDuration::from_secs(1),
            ..TcpConfig::default()
        };
        assert_eq!(c.validate().unwrap_err().0, "delayed_ack");
        let c = TcpConfig {
            ack_every: 0,
            ..TcpConfig::default()
        };
        assert_eq!(c.validate().unwrap_err().0, "ack_every");
        // 0-RTT is TLS 1.3's (RFC 8446 §2.3); `resumed` needs something to hold.
        for tls in [TlsVersion::Tls12, TlsVersion::None] {
            let c = TcpConfig {
                tls,
                early_data: true,
                ..TcpConfig::default()
            };
            assert_eq!(c.validate().unwrap_err().0, "early_data");
        }
        let c = TcpConfig {
            resumed: true,
            ..TcpConfig::default()
        };
        assert_eq!(c.validate().unwrap_err().0, "resumed");
        for (fast_open, early_data) in [(true, false), (false, true), (true, true)] {
            let c = TcpConfig {
                fast_open,
                early_data,
                resumed: true,
                ..TcpConfig::default()
            };
            assert!(c.validate().is_ok());
        }
    }
}

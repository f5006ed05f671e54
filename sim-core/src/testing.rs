//! Property testing for researchers (feature `testing`, issue 16): generators of valid
//! scenarios, invariant checkers, analytic oracles, and the replay of a shrunk failure.
//!
//! The pieces:
//! - **Strategies** ([`scenario`], [`link`], [`loss_model`], [`flow`], [`handover`]):
//!   proptest strategies of [`ScenarioSpec`], a small description of a valid scenario whose
//!   sizes a caller bounds ([`Bounds`]). A spec renders to scenario TOML with only the keys it
//!   needs ([`ScenarioSpec::to_toml`]), so a shrunk failure is a file of a few keys that
//!   `quicsim run` reads.
//! - **Invariants** ([`check_result`], [`Watch`], [`run_checked`], [`check_completed`]):
//!   on a [`RunResult`]
//!   (conservation per flow, delivery of every requested byte, status and budget) and on the
//!   trace of a run (time monotone, no QUIC datagram above `max_udp_payload`, the congestion
//!   window never below the controller's own minimum window, bytes in flight equal to the
//!   outstanding packets' bytes, flow-control limits respected, one final size per stream,
//!   exactly-once in-order delivery per stream).
//! - **Oracles** ([`lossless_completion_lower_bound`], [`mathis_window`],
//!   [`newreno_round_window`], [`cubic_response_window`]): the analytic models of
//!   `docs/validation.md` as functions.
//! - **Replay** ([`hunt`], [`Failure::write`]): runs a property over generated scenarios
//!   with proptest, and on a failure writes the shrunk scenario with its seed as a TOML
//!   file.
//!
//! Users' controllers: [`Bounds::controllers`] names them, and the [`Registry`] given to
//! [`hunt`] / [`ScenarioSpec::config`] resolves them (`docs/property-testing.md`).
//!
//! # Example
//!
//! ```
//! use sim_core::testing::{self, Bounds};
//! use sim_core::Registry;
//!
//! let bounds = Bounds { max_bytes: 40_000, ..Bounds::default() };
//! // Every built-in controller passes every invariant on 4 generated scenarios.
//! let outcome = testing::hunt(&bounds, &Registry::builtin(), 4, |cfg, seed| {
//!     testing::run_checked(cfg, seed).map(|_| ())
//! });
//! assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
//! ```

use crate::config::Config;
use crate::metrics::RunResult;
use crate::registry::Registry;
use crate::time::{SimDuration, SimTime};
use crate::trace::{
    ConnectionState, EndpointId, Initiator, ProtocolPacket, ProtocolParameters, SenderProbe,
    TraceEvent, TraceRecord, TraceSource, Vantage,
};
use crate::wire::quic::Frame;
use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, TestCaseError, TestError, TestRunner};
use std::collections::BTreeMap;

/// The sizes a generated scenario stays within. Every range is inclusive.
#[derive(Clone, Debug)]
pub struct Bounds {
    /// Link rate, kbit/s.
    pub rate_kbps: (u64, u64),
    /// One-way link delay, ms.
    pub delay_ms: (u64, u64),
    /// Drop-tail queue, packets.
    pub queue_packets: (u64, u64),
    /// Largest loss probability of any loss model (Bernoulli `p`, Gilbert-Elliott's mean).
    pub max_loss: f64,
    /// Bytes of a bulk transfer: `min_bytes..=max_bytes`.
    pub min_bytes: u64,
    /// See [`Bounds::min_bytes`].
    pub max_bytes: u64,
    /// Streams of a bulk transfer (QUIC; TCP and SCTP get 1): `1..=max_streams`.
    pub max_streams: u64,
    /// Flows on the network: `1..=max_flows` (more than one: a dumbbell of as many pairs).
    pub max_flows: usize,
    /// Transports to draw from (`"quic"`, `"tcp"`, `"sctp"`).
    pub transports: Vec<String>,
    /// Controllers (`cc`) to draw from: built-in names or names registered in the
    /// [`Registry`] the scenario is built with. Used for QUIC and TCP flows.
    pub controllers: Vec<String>,
    /// Receive-window allowances (`allowance`) to draw from for QUIC flows: built-in
    /// names or allowances registered in the [`Registry`]
    /// ([`Registry::register_allowance`]). Default `["static"]` (the default policy, not
    /// written).
    pub allowances: Vec<String>,
    /// Whether a two-host scenario may have one handover.
    pub handovers: bool,
    /// Simulated-time limit of a run (`sim.time_limit`), seconds.
    pub time_limit_secs: u64,
}

impl Default for Bounds {
    /// Small, cheap scenarios: one QUIC CUBIC or NewReno flow of 10-100 kB over
    /// 1-20 Mbit/s, 1-50 ms, queues of 4-100 packets, loss up to 5 %, no handover.
    fn default() -> Self {
        Bounds {
            rate_kbps: (1_000, 20_000),
            delay_ms: (1, 50),
            queue_packets: (4, 100),
            max_loss: 0.05,
            min_bytes: 10_000,
            max_bytes: 100_000,
            max_streams: 4,
            max_flows: 1,
            transports: vec!["quic".into()],
            controllers: vec!["cubic".into(), "new_reno".into()],
            allowances: vec!["static".into()],
            handovers: false,
            time_limit_secs: 60,
        }
    }
}

/// A loss model of a link (every model of the scenario format but `four_state`, whose
/// mean is what Gilbert-Elliott already covers). Probabilities in units of 10⁻⁴, so a
/// shrunk value prints short.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LossSpec {
    /// No loss.
    None,
    /// Loss every `every` packets (deterministic).
    Periodic {
        /// The period, ≥ 1.
        every: u64,
    },
    /// Independent loss with probability `p_e4 / 10⁴`.
    Bernoulli {
        /// The probability in 10⁻⁴.
        p_e4: u64,
    },
    /// Gilbert-Elliott: P(G→B) = `p_e4`, P(B→G) = `r_e4`, loss in Bad = 1 − h, in Good 0.
    GilbertElliott {
        /// P(Good → Bad), 10⁻⁴.
        p_e4: u64,
        /// P(Bad → Good), 10⁻⁴, ≥ 1.
        r_e4: u64,
        /// P(delivered | Bad), 10⁻⁴.
        h_e4: u64,
    },
}

fn e4(x: u64) -> String {
    format!("{}", x as f64 / 10_000.0)
}

impl LossSpec {
    /// The inline TOML table, `None` for no loss.
    pub fn to_toml(&self) -> Option<String> {
        match self {
            LossSpec::None => None,
            LossSpec::Periodic { every } => {
                Some(format!("{{ model = \"periodic\", every = {every} }}"))
            }
            LossSpec::Bernoulli { p_e4 } => {
                Some(format!("{{ model = \"bernoulli\", p = {} }}", e4(*p_e4)))
            }
            LossSpec::GilbertElliott { p_e4, r_e4, h_e4 } => Some(format!(
                "{{ model = \"gilbert_elliott\", p = {}, r = {}, h = {} }}",
                e4(*p_e4),
                e4(*r_e4),
                e4(*h_e4)
            )),
        }
    }
}

/// A link: rate, delay, queue, and the loss of its data direction (server → client).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkSpec {
    /// kbit/s.
    pub rate_kbps: u64,
    /// One-way delay, ms.
    pub delay_ms: u64,
    /// Drop-tail limit, packets.
    pub queue_packets: u64,
    /// Loss on the server → client direction (the data of a download).
    pub loss: LossSpec,
}

/// One bulk download flow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    /// `"quic"`, `"tcp"` or `"sctp"`.
    pub transport: String,
    /// The controller's name (QUIC, TCP); ignored for SCTP (RFC 9260 §7.2).
    pub cc: String,
    /// The receive-window allowance of both sides (QUIC; `"static"`, the default, is not
    /// written); ignored for TCP and SCTP.
    pub allowance: String,
    /// Bytes downloaded.
    pub bytes: u64,
    /// Streams (QUIC; 1 for the others).
    pub streams: u64,
}

/// A handover of the client at `at_ms` onto a link of `rate_kbps` and `delay_ms`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandoverSpec {
    /// When, ms.
    pub at_ms: u64,
    /// The new link's rate, kbit/s.
    pub rate_kbps: u64,
    /// The new link's one-way delay, ms.
    pub delay_ms: u64,
    /// `"ip"` (new address: QUIC migrates) or `"port"` (NAT rebinding).
    pub address: String,
}

/// A generated scenario: a two-host network (one flow) or a dumbbell of one pair per flow,
/// whose bottleneck is `link`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioSpec {
    /// The link (two hosts) or the bottleneck (dumbbell).
    pub link: LinkSpec,
    /// The flows (more than one: a dumbbell).
    pub flows: Vec<FlowSpec>,
    /// A handover (two hosts only).
    pub handover: Option<HandoverSpec>,
    /// The run's time limit, seconds.
    pub time_limit_secs: u64,
}

impl ScenarioSpec {
    /// The scenario text, keys at their defaults left out.
    pub fn to_toml(&self) -> String {
        let l = &self.link;
        let mut t = String::new();
        t.push_str(&format!(
            "sim = {{ time_limit = \"{}s\" }}\n\n[topology]\n",
            self.time_limit_secs
        ));
        let link = format!(
            "{{ rate = \"{}kbps\", delay = \"{}ms\", queue = {} }}",
            l.rate_kbps, l.delay_ms, l.queue_packets
        );
        let loss = l.loss.to_toml();
        if self.flows.len() > 1 {
            // Dumbbell: fast access links, the spec's link as the bottleneck.
            t.push_str(&format!(
                "kind = \"dumbbell\"\npairs = {}\n",
                self.flows.len()
            ));
            t.push_str(&format!("bottleneck = {link}\n"));
            if let Some(loss) = loss {
                t.push_str(&format!("bottleneck_reverse = {{ loss = {loss} }}\n"));
            }
        } else {
            t.push_str(&format!("kind = \"two_hosts\"\nlink = {link}\n"));
            if let Some(loss) = loss {
                t.push_str(&format!("reverse = {{ loss = {loss} }}\n"));
            }
            if let Some(h) = &self.handover {
                t.push_str(&format!(
                    "\n[[topology.handovers]]\nat = \"{}ms\"\naddress = \"{}\"\nlink = {{ rate = \"{}kbps\", delay = \"{}ms\" }}\n",
                    h.at_ms, h.address, h.rate_kbps, h.delay_ms
                ));
            }
        }
        for (i, f) in self.flows.iter().enumerate() {
            t.push_str(&format!("\n[[flows]]\ntransport = \"{}\"\n", f.transport));
            if self.flows.len() > 1 {
                t.push_str(&format!("pair = {i}\n"));
            }
            if f.transport != "sctp" {
                t.push_str(&format!("cc = \"{}\"\n", f.cc));
            }
            if f.transport == "quic" && f.allowance != "static" {
                t.push_str(&format!("allowance = \"{}\"\n", f.allowance));
            }
            if f.streams > 1 {
                t.push_str(&format!(
                    "workload = {{ kind = \"bulk\", bytes = \"{}B\", streams = {} }}\n",
                    f.bytes, f.streams
                ));
            } else {
                t.push_str(&format!(
                    "workload = {{ kind = \"bulk\", bytes = \"{}B\" }}\n",
                    f.bytes
                ));
            }
        }
        t
    }

    /// The validated config, controller names resolved by `registry`.
    pub fn config(&self, registry: &Registry) -> Result<Config, String> {
        crate::scenario::parse_str_with(&self.to_toml(), registry)
            .map(|s| s.base)
            .map_err(|e| format!("generated scenario rejected: {e}\n{}", self.to_toml()))
    }
}

/// A loss model within `max_loss` (its long-run loss rate). Shrinks towards no loss.
pub fn loss_model(max_loss: f64) -> BoxedStrategy<LossSpec> {
    let max_e4 = ((max_loss.clamp(0.0, 1.0)) * 10_000.0) as u64;
    if max_e4 == 0 {
        return Just(LossSpec::None).boxed();
    }
    let min_every = (10_000 / max_e4).max(1);
    prop_oneof![
        Just(LossSpec::None),
        (min_every..=min_every.saturating_mul(20)).prop_map(|every| LossSpec::Periodic { every }),
        (1..=max_e4).prop_map(|p_e4| LossSpec::Bernoulli { p_e4 }),
        // Mean loss p/(p + r)·(1 − h) ≤ p/r ≤ max_loss with r ≥ 10 p.
        (1..=max_e4.max(1), 1..=10_000u64, 0..=9_000u64).prop_map(move |(p, r, h)| {
            let r_e4 = r.max((p * 10_000).div_ceil(max_e4)).min(10_000);
            LossSpec::GilbertElliott {
                p_e4: p.min(r_e4),
                r_e4,
                h_e4: h,
            }
        }),
    ]
    .boxed()
}

/// A link within `b`'s rate, delay, queue and loss bounds.
pub fn link(b: &Bounds) -> BoxedStrategy<LinkSpec> {
    (
        b.rate_kbps.0..=b.rate_kbps.1,
        b.delay_ms.0..=b.delay_ms.1,
        b.queue_packets.0..=b.queue_packets.1,
        loss_model(b.max_loss),
    )
        .prop_map(|(rate_kbps, delay_ms, queue_packets, loss)| LinkSpec {
            rate_kbps,
            delay_ms,
            queue_packets,
            loss,
        })
        .boxed()
}

/// A bulk download over one of `b.transports` with one of `b.controllers` (and, for QUIC,
/// one of `b.allowances`).
pub fn flow(b: &Bounds) -> BoxedStrategy<FlowSpec> {
    assert!(!b.transports.is_empty() && !b.controllers.is_empty() && !b.allowances.is_empty());
    // One allowance draws nothing, so the bounds without allowances generate the same
    // cases as before they existed.
    let allowance = if b.allowances.len() == 1 {
        Just(b.allowances[0].clone()).boxed()
    } else {
        proptest::sample::select(b.allowances.clone()).boxed()
    };
    (
        proptest::sample::select(b.transports.clone()),
        proptest::sample::select(b.controllers.clone()),
        b.min_bytes..=b.max_bytes.max(b.min_bytes),
        1..=b.max_streams.max(1),
        allowance,
    )
        .prop_map(|(transport, cc, bytes, streams, allowance)| {
            let streams = if transport == "quic" { streams } else { 1 };
            FlowSpec {
                transport,
                cc,
                allowance,
                bytes,
                streams,
            }
        })
        .boxed()
}

/// A handover within `b`'s rate and delay bounds, in the first two seconds.
pub fn handover(b: &Bounds) -> BoxedStrategy<HandoverSpec> {
    (
        1..=2_000u64,
        b.rate_kbps.0..=b.rate_kbps.1,
        b.delay_ms.0..=b.delay_ms.1,
        proptest::sample::select(vec!["ip".to_string(), "port".to_string()]),
    )
        .prop_map(|(at_ms, rate_kbps, delay_ms, address)| HandoverSpec {
            at_ms,
            rate_kbps,
            delay_ms,
            address,
        })
        .boxed()
}

/// A scenario within `b`: a topology (two hosts, or a dumbbell when `max_flows > 1`
/// draws more than one flow), its flows, maybe a handover.
pub fn scenario(b: &Bounds) -> BoxedStrategy<ScenarioSpec> {
    let handover = if b.handovers {
        proptest::option::of(handover(b)).boxed()
    } else {
        Just(None).boxed()
    };
    let time_limit_secs = b.time_limit_secs;
    (
        link(b),
        proptest::collection::vec(flow(b), 1..=b.max_flows.max(1)),
        handover,
    )
        .prop_map(move |(link, flows, handover)| ScenarioSpec {
            handover: if flows.len() == 1 { handover } else { None },
            link,
            flows,
            time_limit_secs,
        })
        .boxed()
}

// ---------------------------------------------------------------- invariants

/// Watches a run's trace ([`crate::runner::run_traced`] takes it as a tracer) and checks,
/// record by record:
/// - time never goes back;
/// - no QUIC datagram exceeds its sender's `max_udp_payload`, no SCTP packet its
///   sender's `mtu - 20` (RFC 9260 §7.3);
/// - the congestion window never falls below the minimum window the controller declared
///   (`RecoveryParametersSet`, [`crate::cc::CongestionController::minimum_window`]); for
///   SCTP, which declares none, the association controller's floor: 1 MTU with
///   `cc = "rfc9260"` (RFC 9260 §7.2.3, after a T3-rtx timeout), 2 PMDCS with a shared
///   controller (RFC 9002 §7.2);
/// - **bytes in flight** (QUIC): every `bytes_in_flight` a sender reports
///   (`MetricsUpdated`) equals the bytes of its outstanding in-flight packets as the trace
///   shows them: ack-eliciting or padded packets sent (RFC 9002 §2), less those an ACK
///   frame it received covers, those declared lost, those of a packet number space whose
///   keys were discarded (RFC 9001 §4.9: Initial at the client's first Handshake packet
///   sent / the server's first Handshake packet received, both at handshake
///   confirmation) and those sent before a migration (RFC 9000 §9.4: they leave the new
///   path's bytes in flight). A rejected 0-RTT flight is not modelled, so run this on
///   scenarios without 0-RTT;
/// - **flow-control limits** (QUIC): no sender's STREAM data ends beyond the peer's
///   stream limit (`initial_max_stream_data_*` of the peer's transport parameters, raised
///   by MAX_STREAM_DATA) or, summed over its streams, beyond the connection limit
///   (`initial_max_data`, raised by MAX_DATA) (RFC 9000 §4.1). Data sent before the
///   peer's parameters arrive (0-RTT) is checked when they arrive;
/// - **one final size per stream** (QUIC receiver): once a STREAM frame with FIN fixed a
///   stream's final size, no frame ends beyond it or carries another FIN (RFC 9000 §4.5).
///
/// [`Watch::finish`] then checks **exactly-once in-order delivery** against the run's
/// result. The first violation is kept.
///
/// **TCP** (its connections emit the checkers' [`SenderProbe`]s, which the qlog writer
/// skips, so TCP qlog files are unchanged):
/// - no segment carries more than the sender's effective MSS (`mss` less the timestamps
///   option) and no IP packet exceeds the path MTU the MSS stands for, `mss + 40`
///   (RFC 9293 §3.7.1: MSS = MTU − 40, the IPv4 and TCP fixed headers);
/// - new data goes out in sequence without gaps, only an outstanding segment is
///   retransmitted, acknowledged or declared lost;
/// - **bytes in flight**: every `pipe` the sender reports equals the bytes of its
///   outstanding segments as the probes show them — each sent segment not acknowledged
///   and not declared lost, plus each retransmission in flight (RFC 6675 §2 `pipe`);
/// - the congestion window never falls below the controller's minimum window, and that
///   minimum is at least 1 SMSS, RFC 5681 §3.1's loss window after a timeout (the model
///   collapses to the controller's minimum, 2 SMSS: `docs/tcp.md`);
/// - **in-order exactly-once delivery**: the receiver hands the byte stream (TLS records
///   and the multiplexer's stream frames) up in order, each byte once, from offset 0.
///
/// **SCTP** (its associations emit the `Chunk*`, `StreamDelivered` and `Window`
/// [`SenderProbe`]s; the qlog writer skips them, so SCTP qlog files are unchanged):
/// - no packet exceeds `mtu - 20` (RFC 9260 §7.3);
/// - new TSNs go out in sequence; only an outstanding chunk not gap-acknowledged is
///   retransmitted, acknowledged or marked for retransmission (a stale SACK, whose
///   cumulative TSN ack is below the current one, is discarded by the association, RFC
///   9260 §6.2.1 D i, and emits nothing);
/// - **flight size**: every flight size the sender reports equals the bytes of its
///   outstanding chunks neither gap-acknowledged nor marked for retransmission (RFC 9260
///   §6.1, §7.2);
/// - the congestion window never falls below the floor the controller keeps, and that
///   floor is at least the configuration's: 1 MTU for RFC 9260's controller (§7.2.3 and
///   §6.3.3: a T3-rtx expiry sets cwnd = 1 MTU), a shared controller's RFC 9002 §7.2
///   minimum of 2 PMDCS;
/// - **in-order exactly-once delivery per stream**: each stream's bytes go up in order,
///   each once, from offset 0 (the model has no unordered DATA).
///
/// [`Watch::basic`] checks time and the size bounds only: what holds for any valid
/// scenario, whatever its keys (the fuzzer's checks, `fuzz/`).
#[derive(Debug)]
pub struct Watch<'c> {
    cfg: &'c Config,
    full: bool,
    last: SimTime,
    datagrams: BTreeMap<(u32, u32, u64), u64>,
    minimum: BTreeMap<(u32, u32), u64>,
    quic: BTreeMap<(u32, u32), QuicWatch>,
    tcp: BTreeMap<(u32, u32), TcpWatch>,
    sctp: BTreeMap<(u32, u32), SctpWatch>,
    /// The first violation seen, if any.
    pub violation: Option<String>,
}

/// What the [`Watch`] tracks of one TCP connection (one endpoint's side of it).
#[derive(Debug, Default)]
struct TcpWatch {
    /// Outstanding segments: first byte → (length, the original counts in flight, a
    /// retransmission counts in flight).
    segs: BTreeMap<u64, (u64, bool, bool)>,
    /// End of the new data sent so far.
    sent_end: u64,
    /// End of the byte stream delivered so far (receiver).
    delivered_end: u64,
}

impl TcpWatch {
    fn bytes_in_flight(&self) -> u64 {
        self.segs
            .values()
            .map(|&(len, orig, rexmit)| len * (orig as u64 + rexmit as u64))
            .sum()
    }

    /// Mirrors one probe; the violation if it breaks a rule.
    fn probe(&mut self, p: &SenderProbe) -> Option<String> {
        match *p {
            SenderProbe::Sent {
                seq,
                len,
                retransmission: false,
                ..
            } => {
                if seq != self.sent_end {
                    return Some(format!(
                        "new data [{seq}, {}) sent after [0, {}): the sequence space has a gap or an overlap",
                        seq + len,
                        self.sent_end
                    ));
                }
                self.sent_end = seq + len;
                self.segs.insert(seq, (len, true, false));
            }
            SenderProbe::Sent {
                seq,
                len,
                retransmission: true,
                ..
            } => match self.segs.get_mut(&seq) {
                Some(s) if s.0 == len => s.2 = true,
                _ => {
                    return Some(format!(
                        "retransmitted [{seq}, {}), which is not an outstanding segment",
                        seq + len
                    ))
                }
            },
            SenderProbe::Acked { seq, len } => {
                if self.segs.remove(&seq).is_none_or(|s| s.0 != len) {
                    return Some(format!(
                        "[{seq}, {}) acknowledged, which is not an outstanding segment",
                        seq + len
                    ));
                }
            }
            SenderProbe::Lost { seq, len } => match self.segs.get_mut(&seq) {
                Some(s) if s.0 == len => {
                    s.1 = false;
                    s.2 = false;
                }
                _ => {
                    return Some(format!(
                        "[{seq}, {}) declared lost, which is not an outstanding segment",
                        seq + len
                    ))
                }
            },
            SenderProbe::Restored { seq, len } => match self.segs.get_mut(&seq) {
                Some(s) if s.0 == len && !s.1 => s.1 = true,
                _ => {
                    return Some(format!(
                        "[{seq}, {}) counted in flight again, which is not a segment declared lost",
                        seq + len
                    ))
                }
            },
            SenderProbe::Window {
                cwnd,
                minimum,
                bytes_in_flight,
                smss,
            } => {
                if minimum < smss {
                    return Some(format!(
                        "the controller's minimum window {minimum} B is below 1 SMSS = {smss} B, RFC 5681 §3.1's loss window"
                    ));
                }
                if cwnd < minimum {
                    return Some(format!(
                        "congestion window {cwnd} B below the controller's minimum window {minimum} B (RFC 5681 §3.1)"
                    ));
                }
                let outstanding = self.bytes_in_flight();
                if bytes_in_flight != outstanding {
                    return Some(format!(
                        "pipe {bytes_in_flight} B != {outstanding} B of outstanding segments and retransmissions in flight (RFC 6675 §2)"
                    ));
                }
            }
            SenderProbe::ChunkSent { .. }
            | SenderProbe::ChunkAcked { .. }
            | SenderProbe::ChunkLost { .. }
            | SenderProbe::StreamDelivered { .. } => {
                return Some("an SCTP probe from a TCP connection".to_string())
            }
            SenderProbe::Delivered { offset, len } => {
                if offset != self.delivered_end {
                    return Some(format!(
                        "delivered [{offset}, {}) after [0, {}): the byte stream must go up in order, each byte once",
                        offset + len,
                        self.delivered_end
                    ));
                }
                self.delivered_end = offset + len;
            }
        }
        None
    }
}

/// What the [`Watch`] tracks of one SCTP association (one endpoint's side of it).
#[derive(Debug, Default)]
struct SctpWatch {
    /// Outstanding chunks: TSN → (bytes counted in the flight size, in flight, gap-acked).
    chunks: BTreeMap<u64, (u64, bool, bool)>,
    /// The next new TSN expected.
    next_tsn: Option<u64>,
    /// Bytes delivered in order per stream (receiver).
    delivered: BTreeMap<u64, u64>,
}

impl SctpWatch {
    fn flight_size(&self) -> u64 {
        self.chunks.values().filter(|c| c.1).map(|c| c.0).sum()
    }

    /// Mirrors one probe; the violation if it breaks a rule. `floor`: the window floor
    /// the configuration implies.
    fn probe(&mut self, p: &SenderProbe, floor: u64) -> Option<String> {
        match *p {
            SenderProbe::ChunkSent {
                tsn,
                size,
                retransmission: false,
                ..
            } => {
                if self.next_tsn.is_some_and(|n| n != tsn) {
                    return Some(format!(
                        "new chunk TSN {tsn} sent when TSN {} was next: TSNs go out in sequence (RFC 9260 §3.3.1)",
                        self.next_tsn.unwrap_or(0)
                    ));
                }
                self.next_tsn = Some(tsn + 1);
                self.chunks.insert(tsn, (size, true, false));
            }
            SenderProbe::ChunkSent {
                tsn,
                size,
                retransmission: true,
                ..
            } => match self.chunks.get_mut(&tsn) {
                // A chunk still in flight may go again (the model resends the DATA
                // bundled with a retransmitted COOKIE ECHO, RFC 9260 §5.1): it counts
                // once in the flight size.
                Some(c) if c.0 == size && !c.2 => c.1 = true,
                _ => {
                    return Some(format!(
                        "retransmitted TSN {tsn}, which is not an outstanding chunk missing at the peer"
                    ))
                }
            },
            SenderProbe::ChunkAcked { tsn, cumulative } => {
                let ok = if cumulative {
                    self.chunks.remove(&tsn).is_some()
                } else {
                    match self.chunks.get_mut(&tsn) {
                        Some(c) if !c.2 => {
                            c.1 = false;
                            c.2 = true;
                            true
                        }
                        _ => false,
                    }
                };
                if !ok {
                    return Some(format!(
                        "TSN {tsn} acknowledged ({}), which is not an outstanding chunk (RFC 9260 §6.2.1)",
                        if cumulative { "cumulatively" } else { "by a gap ack block" }
                    ));
                }
            }
            SenderProbe::ChunkLost { tsn } => match self.chunks.get_mut(&tsn) {
                Some(c) if !c.2 => c.1 = false,
                _ => {
                    return Some(format!(
                        "TSN {tsn} marked for retransmission, which is not an outstanding chunk missing at the peer"
                    ))
                }
            },
            SenderProbe::Window {
                cwnd,
                minimum,
                bytes_in_flight,
                ..
            } => {
                if minimum < floor {
                    return Some(format!(
                        "the reported minimum window {minimum} B is below the controller's floor {floor} B (RFC 9260 §7.2.3, §6.3.3: 1 MTU)"
                    ));
                }
                if cwnd < minimum {
                    return Some(format!(
                        "congestion window {cwnd} B below the minimum window {minimum} B (RFC 9260 §7.2.3, §6.3.3)"
                    ));
                }
                let outstanding = self.flight_size();
                if bytes_in_flight != outstanding {
                    return Some(format!(
                        "flight size {bytes_in_flight} B != {outstanding} B of outstanding chunks neither acknowledged nor marked for retransmission (RFC 9260 §6.1, §7.2)"
                    ));
                }
            }
            SenderProbe::StreamDelivered {
                stream,
                offset,
                len,
            } => {
                let end = self.delivered.entry(stream).or_default();
                if offset != *end {
                    return Some(format!(
                        "stream {stream}: delivered [{offset}, {}) after [0, {end}): each stream's data goes up in order, each byte once (RFC 9260 §6.6)",
                        offset + len
                    ));
                }
                *end = offset + len;
            }
            SenderProbe::Sent { .. }
            | SenderProbe::Acked { .. }
            | SenderProbe::Lost { .. }
            | SenderProbe::Restored { .. }
            | SenderProbe::Delivered { .. } => {
                return Some("a TCP probe from an SCTP association".to_string())
            }
        }
        None
    }
}

/// What the [`Watch`] tracks of one QUIC connection (one endpoint's side of it).
#[derive(Debug)]
struct QuicWatch {
    flow: u32,
    vantage: Vantage,
    /// In-flight packets sent, per packet number space: number → size.
    in_flight: [BTreeMap<u64, u64>; 3],
    discarded: [bool; 3],
    /// The last `bytes_in_flight` the sender reported.
    reported_bif: u64,
    /// The peer's transport parameters, once received.
    peer: Option<crate::wire::quic::TransportParameters>,
    /// The largest MAX_DATA received.
    max_data: u64,
    /// The largest MAX_STREAM_DATA received per stream.
    max_stream_data: BTreeMap<u64, u64>,
    /// The end of the data sent per stream, and their sum.
    sent_end: BTreeMap<u64, u64>,
    sent_total: u64,
    /// Received STREAM data per stream.
    recv: BTreeMap<u64, StreamRecv>,
}

/// The ranges of a stream a receiver got, merged, and its final size once known.
#[derive(Debug, Default)]
struct StreamRecv {
    ranges: BTreeMap<u64, u64>,
    final_size: Option<u64>,
}

impl StreamRecv {
    fn insert(&mut self, start: u64, end: u64) {
        if start >= end {
            return;
        }
        let (mut s, mut e) = (start, end);
        // Merge with every range that overlaps or touches [s, e).
        let touching: Vec<(u64, u64)> = self
            .ranges
            .range(..=e)
            .rev()
            .take_while(|(_, &re)| re >= s)
            .map(|(&rs, &re)| (rs, re))
            .collect();
        for (rs, re) in touching {
            self.ranges.remove(&rs);
            s = s.min(rs);
            e = e.max(re);
        }
        self.ranges.insert(s, e);
    }

    /// Bytes received in order from offset 0.
    fn prefix(&self) -> u64 {
        match self.ranges.first_key_value() {
            Some((0, &e)) => e,
            _ => 0,
        }
    }

    fn highest(&self) -> u64 {
        self.ranges.last_key_value().map_or(0, |(_, &e)| e)
    }
}

impl QuicWatch {
    fn new(flow: u32, vantage: Vantage) -> Self {
        QuicWatch {
            flow,
            vantage,
            in_flight: Default::default(),
            discarded: [false; 3],
            reported_bif: 0,
            peer: None,
            max_data: 0,
            max_stream_data: BTreeMap::new(),
            sent_end: BTreeMap::new(),
            sent_total: 0,
            recv: BTreeMap::new(),
        }
    }

    fn bytes_in_flight(&self) -> u64 {
        self.in_flight.iter().flat_map(|s| s.values()).sum()
    }

    fn discard(&mut self, space: usize) {
        self.discarded[space] = true;
        self.in_flight[space].clear();
    }

    /// The peer's limit on stream `id`'s send offset, once its parameters are known
    /// (RFC 9000 §18.2: an absent limit is 0; stream ID bits 0x1 server-initiated, 0x2
    /// unidirectional, §2.1).
    fn stream_limit(&self, id: u64) -> Option<u64> {
        let p = self.peer?;
        let initial = if id & 2 != 0 {
            p.initial_max_stream_data_uni
        } else if (id & 1 == 0) == (self.vantage == Vantage::Client) {
            // A bidirectional stream we opened: the peer's limit for remote streams.
            p.initial_max_stream_data_bidi_remote
        } else {
            p.initial_max_stream_data_bidi_local
        };
        let raised = self.max_stream_data.get(&id).copied().unwrap_or(0);
        Some(initial.unwrap_or(0).max(raised))
    }

    fn data_limit(&self) -> Option<u64> {
        let p = self.peer?;
        Some(p.initial_max_data.unwrap_or(0).max(self.max_data))
    }

    /// The first flow-control limit stream `id` (or the connection) exceeds.
    fn flow_control_violation(&self, id: u64) -> Option<String> {
        let end = self.sent_end.get(&id).copied().unwrap_or(0);
        if let Some(limit) = self.stream_limit(id) {
            if end > limit {
                return Some(format!(
                    "stream {id}: sent up to offset {end} > the peer's MAX_STREAM_DATA {limit} (RFC 9000 §4.1)"
                ));
            }
        }
        if let Some(limit) = self.data_limit() {
            if self.sent_total > limit {
                return Some(format!(
                    "sent {} stream bytes > the peer's MAX_DATA {limit} (RFC 9000 §4.1)",
                    self.sent_total
                ));
            }
        }
        None
    }
}

impl<'c> Watch<'c> {
    /// A watch of a run of `cfg`: every check.
    pub fn new(cfg: &'c Config) -> Self {
        Watch {
            cfg,
            full: true,
            last: SimTime::ZERO,
            datagrams: BTreeMap::new(),
            minimum: BTreeMap::new(),
            quic: BTreeMap::new(),
            tcp: BTreeMap::new(),
            sctp: BTreeMap::new(),
            violation: None,
        }
    }

    /// A watch of the checks that hold for any valid scenario of any keys (0-RTT, exotic
    /// transport parameters): time never goes back, and no QUIC datagram, SCTP packet or
    /// TCP segment exceeds its bound. The fuzzer (`fuzz/`) runs these on every input.
    pub fn basic(cfg: &'c Config) -> Self {
        Watch {
            full: false,
            ..Watch::new(cfg)
        }
    }

    /// The size bound `ev` breaks, if any: a QUIC datagram above its sender's
    /// `max_udp_payload` (RFC 9000 §18.2), an SCTP packet above `mtu - 20` (RFC 9260
    /// §7.3), a TCP segment above the effective MSS or its IP packet above `mss + 40`
    /// (RFC 9293 §3.7.1).
    fn size_violation(&mut self, id: &EndpointId, ev: &TraceEvent) -> Option<String> {
        let flow = self.cfg.flows.get(id.flow as usize)?;
        let who = format!("flow {} {:?}", id.flow, id.vantage);
        let client = id.vantage == Vantage::Client;
        match ev {
            TraceEvent::PacketSent {
                packet: ProtocolPacket::Quic(p),
                datagram_id,
                ..
            } => {
                let sides = flow.quic()?;
                let max = if client {
                    sides.client.max_udp_payload
                } else {
                    sides.server.max_udp_payload
                };
                let size = self
                    .datagrams
                    .entry((id.endpoint, id.connection, *datagram_id))
                    .or_default();
                *size += p.size;
                (*size > max)
                    .then(|| format!("{who} sent a datagram of {size} B > max_udp_payload {max}"))
            }
            TraceEvent::PacketSent {
                packet: ProtocolPacket::Sctp(p),
                ..
            } => {
                let sides = flow.sctp()?;
                let c = if client { &sides.client } else { &sides.server };
                (p.size() > c.max_packet()).then(|| {
                    format!(
                        "{who} sent an SCTP packet of {} B > mtu - 20 = {} B (RFC 9260 §7.3)",
                        p.size(),
                        c.max_packet()
                    )
                })
            }
            TraceEvent::SenderProbe(SenderProbe::ChunkSent {
                tsn, packet_size, ..
            }) => {
                let sides = flow.sctp()?;
                let c = if client { &sides.client } else { &sides.server };
                (*packet_size > c.max_packet()).then(|| {
                    format!(
                        "{who} sent TSN {tsn} in an SCTP packet of {packet_size} B > mtu - 20 = {} B (RFC 9260 §7.3)",
                        c.max_packet()
                    )
                })
            }
            TraceEvent::SenderProbe(SenderProbe::Sent {
                seq, len, ip_size, ..
            }) => {
                let sides = flow.tcp()?;
                let c = if client { &sides.client } else { &sides.server };
                let smss = c.effective_mss();
                if *len > smss {
                    return Some(format!(
                        "{who} sent a segment of {len} B at {seq} > the effective MSS {smss} B (RFC 9293 §3.7.1)"
                    ));
                }
                (*ip_size > c.mss + 40).then(|| {
                    format!(
                        "{who} sent an IP packet of {ip_size} B > mss + 40 = {} B, the path MTU (RFC 9293 §3.7.1)",
                        c.mss + 40
                    )
                })
            }
            _ => None,
        }
    }

    /// Checks one trace record.
    pub fn record(&mut self, r: &TraceRecord) {
        if self.violation.is_some() {
            return;
        }
        if r.time < self.last {
            self.violation = Some(format!(
                "time went back from {:?} to {:?}",
                self.last, r.time
            ));
            return;
        }
        self.last = r.time;
        let TraceSource::Endpoint(id) = &r.source else {
            return;
        };
        if let Some(v) = self.size_violation(id, &r.event) {
            self.violation = Some(v);
            return;
        }
        if !self.full {
            return;
        }
        let conn = (id.endpoint, id.connection);
        let who = format!("flow {} {:?}", id.flow, id.vantage);
        let sctp = self
            .cfg
            .flows
            .get(id.flow as usize)
            .and_then(|f| f.sctp())
            .map(|s| match id.vantage {
                Vantage::Client => &s.client,
                Vantage::Server => &s.server,
            });
        if let Some(c) = sctp {
            // SCTP declares no minimum window in its trace; the association's controller
            // has one: RFC 9260 §7.2.3 (a T3-rtx timeout sets cwnd = 1 MTU, the smallest
            // value `cc::sctp::SctpReno` sets), or a shared controller's RFC 9002 §7.2
            // kMinimumWindow of 2 PMDCS.
            self.minimum.entry(conn).or_insert(match &c.cc {
                crate::config::sctp::SctpCc::Rfc9260 => c.mtu,
                crate::config::sctp::SctpCc::Shared(_) => crate::cc::minimum_window(c.pmdcs()),
            });
        }
        match &r.event {
            TraceEvent::SenderProbe(p) if sctp.is_some() => {
                let floor = self.minimum.get(&conn).copied().unwrap_or(0);
                let t = self.sctp.entry(conn).or_default();
                if let Some(v) = t.probe(p, floor) {
                    self.violation = Some(format!("{who}: {v} at {:?}", r.time));
                }
            }
            TraceEvent::SenderProbe(p) => {
                let t = self.tcp.entry(conn).or_default();
                if let Some(v) = t.probe(p) {
                    self.violation = Some(format!("{who}: {v} at {:?}", r.time));
                }
            }
            TraceEvent::RecoveryParametersSet(p) => {
                self.minimum.insert(conn, p.minimum_congestion_window);
            }
            TraceEvent::MetricsUpdated(m) => {
                if let (Some(cwnd), Some(&min)) = (m.congestion_window, self.minimum.get(&conn)) {
                    if cwnd < min {
                        self.violation = Some(format!(
                            "{who}: congestion window {cwnd} B below the controller's minimum window {min} B at {:?} (RFC 9002 §7.2, §7.3.2)",
                            r.time
                        ));
                        return;
                    }
                }
                if let Some(q) = self.quic.get_mut(&conn) {
                    if let Some(b) = m.bytes_in_flight {
                        q.reported_bif = b;
                    }
                    let outstanding = q.bytes_in_flight();
                    if q.reported_bif != outstanding {
                        self.violation = Some(format!(
                            "{who}: bytes_in_flight {} B != {outstanding} B of outstanding in-flight packets at {:?} (RFC 9002 §2, A.5)",
                            q.reported_bif, r.time
                        ));
                    }
                }
            }
            TraceEvent::ParametersSet {
                initiator: Initiator::Remote,
                params: ProtocolParameters::Quic(p),
            } => {
                let q = self
                    .quic
                    .entry(conn)
                    .or_insert_with(|| QuicWatch::new(id.flow, id.vantage));
                q.peer = Some(*p);
                // 0-RTT data sent before the peer's limits were known must fit them too.
                if let Some(v) = q.sent_end.keys().find_map(|&s| q.flow_control_violation(s)) {
                    self.violation = Some(format!("{who}: {v}"));
                }
            }
            TraceEvent::PacketSent {
                packet: ProtocolPacket::Quic(p),
                ..
            } => {
                let q = self
                    .quic
                    .entry(conn)
                    .or_insert_with(|| QuicWatch::new(id.flow, id.vantage));
                let space = p.ty.space_index();
                // RFC 9002 §2: ack-eliciting packets and those with PADDING count in flight.
                let in_flight = p.is_ack_eliciting()
                    || p.frames.iter().any(|f| matches!(f, Frame::Padding { .. }));
                if in_flight && !q.discarded[space] {
                    q.in_flight[space].insert(p.pn, p.size);
                }
                if id.vantage == Vantage::Client && space == 1 && !q.discarded[0] {
                    // RFC 9001 §4.9.1: the client's first Handshake packet discards Initial.
                    q.discard(0);
                }
                for f in &p.frames {
                    if let Frame::Stream {
                        id: s, offset, len, ..
                    } = f
                    {
                        let end = offset + len;
                        let prev = q.sent_end.entry(*s).or_default();
                        if end > *prev {
                            q.sent_total += end - *prev;
                            *prev = end;
                        }
                        if let Some(v) = q.flow_control_violation(*s) {
                            self.violation = Some(format!("{who}: {v}"));
                            return;
                        }
                    }
                }
            }
            TraceEvent::PacketReceived {
                packet: ProtocolPacket::Quic(p),
                ..
            } => {
                let q = self
                    .quic
                    .entry(conn)
                    .or_insert_with(|| QuicWatch::new(id.flow, id.vantage));
                let space = p.ty.space_index();
                for f in &p.frames {
                    match f {
                        Frame::Ack { ranges, .. } => {
                            for &(lo, hi) in ranges {
                                let acked: Vec<u64> =
                                    q.in_flight[space].range(lo..=hi).map(|(&n, _)| n).collect();
                                for n in acked {
                                    q.in_flight[space].remove(&n);
                                }
                            }
                        }
                        Frame::MaxData(m) => q.max_data = q.max_data.max(*m),
                        Frame::MaxStreamData { id: s, max } => {
                            let e = q.max_stream_data.entry(*s).or_default();
                            *e = (*e).max(*max);
                        }
                        Frame::Stream {
                            id: s,
                            offset,
                            len,
                            fin,
                        } => {
                            let end = offset + len;
                            let st = q.recv.entry(*s).or_default();
                            let bad = match st.final_size {
                                Some(fs) => end > fs || (*fin && end != fs),
                                None => *fin && st.highest() > end,
                            };
                            if bad {
                                self.violation = Some(format!(
                                    "{who}: stream {s} received [{offset}, {end}){} against final size {:?} (highest {}) (RFC 9000 §4.5)",
                                    if *fin { " with FIN" } else { "" },
                                    st.final_size,
                                    st.highest()
                                ));
                                return;
                            }
                            if *fin {
                                st.final_size = Some(end);
                            }
                            st.insert(*offset, end);
                        }
                        _ => {}
                    }
                }
                if id.vantage == Vantage::Server && space == 1 && !q.discarded[0] {
                    // RFC 9001 §4.9.1: the server's first Handshake packet discards Initial.
                    q.discard(0);
                }
            }
            TraceEvent::PacketLost {
                packet: ProtocolPacket::Quic(p),
                ..
            } => {
                if let Some(q) = self.quic.get_mut(&conn) {
                    q.in_flight[p.ty.space_index()].remove(&p.pn);
                }
            }
            TraceEvent::ConnectionStateUpdated {
                new: ConnectionState::HandshakeConfirmed,
                ..
            } => {
                // RFC 9001 §4.9.2: Handshake (and any Initial left) keys go.
                if let Some(q) = self.quic.get_mut(&conn) {
                    q.discard(1);
                    q.discard(0);
                }
            }
            TraceEvent::MigrationStateUpdated {
                new: "migration_started",
                ..
            } => {
                // RFC 9000 §9.4: packets of the old path leave bytes in flight.
                if let Some(q) = self.quic.get_mut(&conn) {
                    for s in &mut q.in_flight {
                        s.clear();
                    }
                }
            }
            _ => {}
        }
    }

    /// Exactly-once in-order delivery per QUIC stream, checked against the run's result
    /// `r` once the trace is complete: each QUIC endpoint's application read
    /// (`stream_bytes_read`) no more than the bytes its streams received in order from
    /// offset 0 (a duplicate, or a byte read across a gap, would exceed them), and an
    /// endpoint whose transfer completed read exactly those bytes. Returns the first
    /// violation of [`Watch::record`] if there was one.
    pub fn finish(&self, r: &RunResult) -> Result<(), String> {
        if let Some(v) = &self.violation {
            return Err(v.clone());
        }
        let mut in_order: BTreeMap<(u32, Vantage), u64> = BTreeMap::new();
        for q in self.quic.values() {
            *in_order.entry((q.flow, q.vantage)).or_default() +=
                q.recv.values().map(StreamRecv::prefix).sum::<u64>();
        }
        for f in &r.flows {
            for t in f.endpoints.iter().filter_map(|e| e.transport()) {
                let vantage = match t.role.as_str() {
                    "client" => Vantage::Client,
                    "server" => Vantage::Server,
                    _ => continue,
                };
                let Some(&got) = in_order.get(&(f.flow, vantage)) else {
                    continue;
                };
                let read = t.stream_bytes_read;
                let completed = vantage == Vantage::Client && t.completion_secs.is_some();
                if read > got || (completed && read != got) {
                    return Err(format!(
                        "flow {} {vantage:?}: the application read {read} B, the streams received {got} B in order from offset 0{} (exactly-once in-order delivery)",
                        f.flow,
                        if completed { " and the transfer completed" } else { "" }
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Invariants of a finished run of `cfg`: a status other than `stopped`, the event and
/// time budgets kept, packets conserved per flow (sent = delivered + dropped + in the
/// network), and every completed bulk download delivered exactly its bytes to the
/// client's application.
pub fn check_result(cfg: &Config, r: &RunResult) -> Result<(), String> {
    crate::runner::check_run_invariants(cfg, r)?;
    for f in &r.flows {
        let Some(bulk) = cfg.flows.get(f.flow as usize).and_then(|c| c.bulk()) else {
            continue;
        };
        let client = f
            .endpoints
            .iter()
            .filter_map(|e| e.transport())
            .find(|t| t.role == "client");
        if let Some(c) = client {
            if c.completion_secs.is_some() && c.stream_bytes_read != bulk.bytes {
                return Err(format!(
                    "flow {}: completed with {} bytes read, {} requested",
                    f.flow, c.stream_bytes_read, bulk.bytes
                ));
            }
        }
    }
    Ok(())
}

/// Liveness: the run ended `completed` (every flow finished its workload), not `stalled`
/// or at the time limit. Not part of [`check_result`] (a generated lossy scenario may
/// legitimately not finish within its time limit); a property adds it where the bounds
/// make completion certain — it catches, e.g., a receive-window allowance that stops
/// advertising credit.
pub fn check_completed(r: &RunResult) -> Result<(), String> {
    if r.status == crate::metrics::RunStatus::Completed {
        return Ok(());
    }
    Err(format!(
        "liveness: the run ended {:?} at {:.3} s, not completed",
        r.status,
        r.end_time.as_secs_f64()
    ))
}

/// Runs `cfg` with `seed` under a [`Watch`] and checks the result ([`check_result`]).
/// The result is that of [`crate::run`] (tracing changes nothing in it).
pub fn run_checked(cfg: &Config, seed: u64) -> Result<RunResult, String> {
    let mut watch = Watch::new(cfg);
    let mut tracer = |r: &TraceRecord| watch.record(r);
    let r = crate::runner::run_traced(cfg, seed, &mut tracer).map_err(|e| e.to_string())?;
    watch.finish(&r)?;
    check_result(cfg, &r)?;
    Ok(r)
}

// ---------------------------------------------------------------- oracles

/// A lower bound on the completion time of a lossless bulk download of `bytes` over a
/// path of `rate_bps` and round trip `rtt`, after `handshake_rtts` round trips of
/// handshake (QUIC 1, TCP + TLS 1.3 2): the handshake, the request's way up, and the
/// payload's serialisation plus its way down. Headers only add time, so any run must
/// take at least this long.
pub fn lossless_completion_lower_bound(
    bytes: u64,
    rate_bps: u64,
    rtt: SimDuration,
    handshake_rtts: u64,
) -> SimDuration {
    let serialisation_ns = (bytes as u128 * 8 * 1_000_000_000).div_ceil(rate_bps.max(1) as u128);
    SimDuration(
        rtt.0
            .saturating_mul(handshake_rtts + 1)
            .saturating_add(serialisation_ns.min(u64::MAX as u128) as u64),
    )
}

/// Mathis et al.'s window, datagrams per RTT, at loss rate `p`: `sqrt(3/(2p))`
/// (`docs/validation.md` §3: packet-counting AIMD(1, 0.5)).
pub fn mathis_window(p: f64) -> f64 {
    libm::sqrt(3.0 / (2.0 * p))
}

/// The discrete refinement of `docs/validation.md` §3 (RFC 9002 NewReno under periodic
/// loss every `N = 1/p` datagrams): `(sqrt(1 + 24N) − 1)/4` datagrams per RTT, of which
/// `(N − 1)/N` is goodput.
pub fn newreno_round_window(p: f64) -> f64 {
    let n = 1.0 / p;
    (libm::sqrt(1.0 + 24.0 * n) - 1.0) / 4.0
}

/// RFC 9438's response function (§5; `docs/validation.md` §5.1): the average window in
/// datagrams per RTT, `max(W_cubic, W_reno)` with
/// `W_cubic = (C(3 + β)/(4(1 − β)))^(1/4) · (RTT/p)^(3/4)` and
/// `W_reno = sqrt(α(1 + β)/(2(1 − β)p))`, `α = 3(1 − β)/(1 + β)` (one connection).
/// `rtt_secs` in seconds, `c` in segments/s³ (0.4), `beta` 0.7.
pub fn cubic_response_window(p: f64, rtt_secs: f64, c: f64, beta: f64) -> f64 {
    let w_cubic =
        libm::pow(c * (3.0 + beta) / (4.0 * (1.0 - beta)), 0.25) * libm::pow(rtt_secs / p, 0.75);
    let alpha = 3.0 * (1.0 - beta) / (1.0 + beta);
    let w_reno = libm::sqrt(alpha * (1.0 + beta) / (2.0 * (1.0 - beta) * p));
    w_cubic.max(w_reno)
}

// ---------------------------------------------------------------- replay

/// A shrunk failing case: the minimal scenario, its seed and what failed.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The minimal scenario proptest shrank to.
    pub spec: ScenarioSpec,
    /// The run seed.
    pub seed: u64,
    /// The property's message.
    pub reason: String,
}

impl Failure {
    /// The scenario file: the spec's keys and `seed`, so `quicsim run` (or a runner with
    /// the same [`Registry`]) replays the failing run exactly.
    pub fn to_toml(&self) -> String {
        let mut reason = String::new();
        for line in self.reason.lines() {
            reason.push_str("# ");
            reason.push_str(line);
            reason.push('\n');
        }
        format!(
            "# A failing case shrunk by sim_core::testing::hunt.\n{reason}name = \"shrunk\"\nseed = {}\nruns = 1\n{}",
            self.seed,
            self.spec.to_toml()
        )
    }

    /// Writes [`Failure::to_toml`] to `path`.
    pub fn write(&self, path: impl AsRef<std::path::Path>) -> std::io::Result<()> {
        std::fs::write(path, self.to_toml())
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}\n--- minimal scenario ---\n{}",
            self.reason,
            self.to_toml()
        )
    }
}

/// The case count [`hunt`] uses: `PROPTEST_CASES` from the environment when it is set (as
/// proptest's own default config reads it: `scripts/test` caps it for CI, a long hunt
/// raises it), else `cases`. A value that is not a count ≥ 1 is an error naming the
/// variable.
pub fn cases_from_env(cases: u32) -> Result<u32, String> {
    match std::env::var("PROPTEST_CASES") {
        Err(std::env::VarError::NotPresent) => Ok(cases),
        Ok(v) => parse_cases(&v),
        Err(e) => Err(format!("PROPTEST_CASES: {e}")),
    }
}

fn parse_cases(v: &str) -> Result<u32, String> {
    match v.trim().parse::<u32>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "PROPTEST_CASES = {v:?}: expected a case count in [1, {}]",
            u32::MAX
        )),
    }
}

impl Failure {
    /// A failure before any scenario ran (a bad case count, proptest aborted).
    fn before_any_case(reason: String) -> Box<Failure> {
        Box::new(Failure {
            spec: ScenarioSpec {
                link: LinkSpec {
                    rate_kbps: 0,
                    delay_ms: 0,
                    queue_packets: 0,
                    loss: LossSpec::None,
                },
                flows: Vec::new(),
                handover: None,
                time_limit_secs: 0,
            },
            seed: 0,
            reason,
        })
    }
}

/// Runs `property(config, seed)` over `cases` scenarios drawn from [`scenario`]`(bounds)`
/// (with seeds in 1..=1000; `PROPTEST_CASES`, when set, replaces `cases`:
/// [`cases_from_env`]), controller names resolved by `registry`. On a failure,
/// proptest shrinks the case, and the minimal one comes back as a [`Failure`] (boxed). The
/// runner is deterministic (proptest's own RNG from a fixed seed, no persistence file),
/// so the same call finds the same case.
pub fn hunt(
    bounds: &Bounds,
    registry: &Registry,
    cases: u32,
    property: impl Fn(&Config, u64) -> Result<(), String>,
) -> Result<(), Box<Failure>> {
    let cases = cases_from_env(cases).map_err(Failure::before_any_case)?;
    let config = RunnerConfig {
        cases,
        failure_persistence: None,
        ..RunnerConfig::default()
    };
    let mut runner = TestRunner::new_with_rng(
        config,
        proptest::test_runner::TestRng::deterministic_rng(
            proptest::test_runner::RngAlgorithm::ChaCha,
        ),
    );
    let strategy = (scenario(bounds), 1..=1000u64);
    let outcome = runner.run(&strategy, |(spec, seed)| {
        let cfg = spec.config(registry).map_err(TestCaseError::fail)?;
        property(&cfg, seed).map_err(TestCaseError::fail)
    });
    match outcome {
        Ok(()) => Ok(()),
        Err(TestError::Fail(why, (spec, seed))) => {
            // The last failing run is the minimal one; re-run it to report its own reason.
            let reason = match spec.config(registry) {
                Ok(cfg) => property(&cfg, seed)
                    .err()
                    .unwrap_or_else(|| why.to_string()),
                Err(e) => e,
            };
            Err(Box::new(Failure { spec, seed, reason }))
        }
        Err(TestError::Abort(why)) => {
            Err(Failure::before_any_case(format!("proptest aborted: {why}")))
        }
    }
}

#[cfg(test)]
mod tests {
    //! The trace checkers of [`Watch`]: they pass on real runs of the built-in NewReno
    //! and CUBIC and catch a violation planted in a recorded trace.
    use super::*;

    fn scenario(cc: &str, extra: &str) -> Config {
        let text = format!(
            "sim = {{ time_limit = \"30s\" }}\n[topology]\nkind = \"two_hosts\"\n\
             link = {{ rate = \"4000kbps\", delay = \"15ms\", queue = 20 }}\n\
             reverse = {{ loss = {{ model = \"bernoulli\", p = 0.02 }} }}\n\
             [[flows]]\ntransport = \"quic\"\ncc = \"{cc}\"\n{extra}\
             workload = {{ kind = \"bulk\", bytes = \"150000B\", streams = 3 }}\n"
        );
        crate::scenario::parse_str_with(&text, &Registry::builtin())
            .expect("scenario")
            .base
    }

    /// Small windows, so MAX_DATA / MAX_STREAM_DATA updates drive the transfer.
    const WINDOWS: &str = "stream_window = \"16kB\"\nconnection_window = \"30kB\"\n";

    fn traced(cfg: &Config, seed: u64) -> (Vec<TraceRecord>, RunResult) {
        let mut recs = Vec::new();
        let mut tracer = |r: &TraceRecord| recs.push(r.clone());
        let r = crate::runner::run_traced(cfg, seed, &mut tracer).expect("run");
        (recs, r)
    }

    fn replay(cfg: &Config, recs: &[TraceRecord], r: &RunResult) -> Result<(), String> {
        let mut w = Watch::new(cfg);
        for rec in recs {
            w.record(rec);
        }
        w.finish(r)
    }

    fn is_client(r: &TraceRecord) -> bool {
        matches!(&r.source, TraceSource::Endpoint(id) if id.vantage == Vantage::Client)
    }

    fn quic(r: &TraceRecord) -> Option<&crate::wire::quic::QuicPacket> {
        match &r.event {
            TraceEvent::PacketSent {
                packet: ProtocolPacket::Quic(p),
                ..
            }
            | TraceEvent::PacketReceived {
                packet: ProtocolPacket::Quic(p),
                ..
            } => Some(p),
            _ => None,
        }
    }

    #[test]
    fn proptest_cases_is_a_count_of_at_least_one() {
        assert_eq!(parse_cases("48"), Ok(48));
        assert_eq!(parse_cases(" 7\n"), Ok(7));
        for bad in ["0", "-3", "many", "", "4294967296"] {
            let e = parse_cases(bad).expect_err(bad);
            assert!(e.contains("PROPTEST_CASES") && e.contains("[1, "), "{e}");
        }
    }

    #[test]
    fn builtin_controllers_pass_every_trace_checker() {
        for cc in crate::cc::CONTROLLER_NAMES {
            for extra in ["", WINDOWS] {
                for seed in [1, 2] {
                    let cfg = scenario(cc, extra);
                    let r = run_checked(&cfg, seed)
                        .unwrap_or_else(|e| panic!("{cc} {extra:?} seed {seed}: {e}"));
                    assert_eq!(
                        r.status,
                        crate::metrics::RunStatus::Completed,
                        "{cc} {extra:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn builtin_controllers_pass_over_generated_scenarios_with_handovers() {
        let bounds = Bounds {
            max_bytes: 60_000,
            handovers: true,
            ..Bounds::default()
        };
        let outcome = hunt(&bounds, &Registry::builtin(), 12, |cfg, seed| {
            run_checked(cfg, seed).map(|_| ())
        });
        assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }

    #[test]
    fn delivery_checker_catches_data_the_receiver_never_got() {
        let cfg = scenario("cubic", "");
        let (mut recs, r) = traced(&cfg, 1);
        replay(&cfg, &recs, &r).expect("the real trace passes");
        // Plant: the client never got the STREAM frames at offset 0 of a packet, yet its
        // application read every byte.
        let i = recs
            .iter()
            .position(|rec| {
                is_client(rec)
                    && matches!(rec.event, TraceEvent::PacketReceived { .. })
                    && quic(rec).is_some_and(|p| {
                        p.frames
                            .iter()
                            .any(|f| matches!(f, Frame::Stream { offset: 0, len, .. } if *len > 0))
                    })
            })
            .expect("a received STREAM frame");
        if let TraceEvent::PacketReceived {
            packet: ProtocolPacket::Quic(p),
            ..
        } = &mut recs[i].event
        {
            p.frames
                .retain(|f| !matches!(f, Frame::Stream { offset: 0, .. }));
        }
        let err = replay(&cfg, &recs, &r).expect_err("caught");
        assert!(err.contains("exactly-once in-order"), "{err}");
    }

    #[test]
    fn delivery_checker_catches_a_changed_final_size() {
        let cfg = scenario("new_reno", "");
        let (mut recs, r) = traced(&cfg, 1);
        // Plant: a second FIN on a stream, one byte past the first one.
        let (i, stream, end) = recs
            .iter()
            .enumerate()
            .find_map(|(i, rec)| {
                if !is_client(rec) || !matches!(rec.event, TraceEvent::PacketReceived { .. }) {
                    return None;
                }
                quic(rec)?.frames.iter().find_map(|f| match f {
                    Frame::Stream {
                        id,
                        offset,
                        len,
                        fin: true,
                    } => Some((i, *id, offset + len)),
                    _ => None,
                })
            })
            .expect("a FIN");
        let mut extra = recs[i].clone();
        if let TraceEvent::PacketReceived {
            packet: ProtocolPacket::Quic(p),
            ..
        } = &mut extra.event
        {
            p.frames = vec![Frame::Stream {
                id: stream,
                offset: end,
                len: 1,
                fin: true,
            }]
            .into();
        }
        recs.insert(i + 1, extra);
        let err = replay(&cfg, &recs, &r).expect_err("caught");
        assert!(err.contains("final size"), "{err}");
    }

    #[test]
    fn bytes_in_flight_checker_catches_an_unreported_packet() {
        let cfg = scenario("new_reno", "");
        let (mut recs, r) = traced(&cfg, 2);
        replay(&cfg, &recs, &r).expect("the real trace passes");
        // Plant: a 1-RTT PING the server sent that its bytes_in_flight never counted.
        let i = recs
            .iter()
            .position(|rec| {
                !is_client(rec)
                    && matches!(rec.event, TraceEvent::PacketSent { .. })
                    && quic(rec).is_some_and(|p| p.ty.space_index() == 2)
            })
            .expect("a 1-RTT packet");
        let mut extra = recs[i].clone();
        if let TraceEvent::PacketSent {
            packet: ProtocolPacket::Quic(p),
            datagram_id,
            ..
        } = &mut extra.event
        {
            p.pn = u64::MAX; // never acknowledged
            p.size = 30;
            p.frames = vec![Frame::Ping].into();
            *datagram_id = u64::MAX;
        }
        recs.insert(i + 1, extra);
        let err = replay(&cfg, &recs, &r).expect_err("caught");
        assert!(err.contains("bytes_in_flight"), "{err}");
    }

    #[test]
    fn bytes_in_flight_checker_catches_a_lost_packet_kept_in_flight() {
        let cfg = scenario("cubic", "");
        let (mut recs, r) = traced(&cfg, 1);
        // Plant: drop the trace of a loss, so the sender's bytes_in_flight fell by a
        // packet that is still outstanding.
        let i = recs
            .iter()
            .position(|rec| {
                matches!(
                    &rec.event,
                    TraceEvent::PacketLost { packet: ProtocolPacket::Quic(p), .. }
                        if p.ty.space_index() == 2
                )
            })
            .expect("a lost packet (2 % loss)");
        recs.remove(i);
        let err = replay(&cfg, &recs, &r).expect_err("caught");
        assert!(err.contains("bytes_in_flight"), "{err}");
    }

    #[test]
    fn flow_control_checker_catches_data_beyond_the_peers_limits() {
        let cfg = scenario("cubic", WINDOWS);
        let (recs, r) = traced(&cfg, 1);
        replay(&cfg, &recs, &r).expect("the real trace passes");
        // Plant 1: the server's record of the client's parameters halves the stream limit
        // (or the connection limit).
        let lower = |conn_only: bool| {
            let mut recs = recs.clone();
            for rec in recs.iter_mut().filter(|rec| !is_client(rec)) {
                if let TraceEvent::ParametersSet {
                    initiator: Initiator::Remote,
                    params: ProtocolParameters::Quic(p),
                } = &mut rec.event
                {
                    if conn_only {
                        p.initial_max_data = p.initial_max_data.map(|v| v / 2);
                    } else {
                        p.initial_max_stream_data_bidi_local =
                            p.initial_max_stream_data_bidi_local.map(|v| v / 2);
                    }
                }
            }
            // Plant 2: and the client's window updates never reached it.
            recs.retain(|rec| {
                is_client(rec)
                    || !matches!(rec.event, TraceEvent::PacketReceived { .. })
                    || !quic(rec).is_some_and(|p| {
                        p.frames
                            .iter()
                            .any(|f| matches!(f, Frame::MaxData(_) | Frame::MaxStreamData { .. }))
                    })
            });
            replay(&cfg, &recs, &r).expect_err("caught")
        };
        let err = lower(false);
        assert!(err.contains("MAX_STREAM_DATA"), "{err}");
        let err = lower(true);
        assert!(err.contains("MAX_DATA"), "{err}");
    }

    /// A user's allowance that forgets to advertise: it never raises the limit.
    #[derive(Debug)]
    struct Stingy(u64);

    impl crate::transport::allowance::Allowance for Stingy {
        fn window(&self) -> u64 {
            self.0
        }
        fn update(&mut self, _input: &crate::transport::allowance::AllowanceInput) -> Option<u64> {
            None // BUG: never `consumed + window`
        }
        fn name(&self) -> &'static str {
            "stingy"
        }
    }

    #[derive(Debug)]
    struct StingyFactory;

    impl crate::transport::allowance::AllowanceFactory for StingyFactory {
        fn build(
            &self,
            params: &crate::transport::allowance::AllowanceParams,
        ) -> Box<dyn crate::transport::allowance::Allowance> {
            Box::new(Stingy(params.initial_window))
        }
    }

    #[test]
    fn a_stingy_user_allowance_is_caught_shrunk_and_replayed() {
        let mut registry = Registry::builtin();
        registry
            .register_allowance("stingy", std::sync::Arc::new(StingyFactory))
            .unwrap();
        // Transfers just above the default stream window (1.25 MB): a policy that never
        // refills starves the sender.
        let bounds = |allowance: &str| Bounds {
            rate_kbps: (10_000, 20_000),
            delay_ms: (1, 10),
            min_bytes: 1_300_000,
            max_bytes: 1_400_000,
            max_streams: 1,
            max_loss: 0.0,
            time_limit_secs: 20,
            allowances: vec![allowance.into()],
            ..Bounds::default()
        };
        let property =
            |cfg: &Config, seed| run_checked(cfg, seed).and_then(|r| check_completed(&r));
        // The built-in policy, through the same registry, passes.
        let ok = hunt(&bounds("static"), &registry, 2, property);
        assert!(ok.is_ok(), "{}", ok.unwrap_err());
        let failure = hunt(&bounds("stingy"), &registry, 4, property).expect_err("caught");
        let text = failure.to_toml();
        assert!(text.contains("allowance = \"stingy\""), "{text}");
        // Shrunk towards the bounds' smallest link: 10 Mbit/s, 1 ms.
        assert_eq!(
            (failure.spec.link.rate_kbps, failure.spec.link.delay_ms),
            (10_000, 1),
            "{text}"
        );
        assert!(failure.reason.starts_with("liveness"), "{text}");
        // The file replays with the registry, and fails the same way.
        let s = crate::scenario::parse_str_with(&text, &registry).unwrap();
        let again = property(&s.base, failure.seed).expect_err("replays");
        assert_eq!(again, failure.reason, "{text}");
        // Without the registry the name is an error listing the registered allowances.
        let e = crate::scenario::parse_str(&text).unwrap_err();
        assert_eq!(e.field, "flows[0].allowance");
        assert_eq!(
            e.allowed,
            crate::transport::allowance::AllowanceRegistry::builtin().allowed()
        );
    }

    fn sctp_scenario() -> Config {
        let text = "sim = { time_limit = \"30s\" }\n[topology]\nkind = \"two_hosts\"\n\
             link = { rate = \"4000kbps\", delay = \"15ms\", queue = 20 }\n\
             reverse = { loss = { model = \"bernoulli\", p = 0.02 } }\n\
             [[flows]]\ntransport = \"sctp\"\n\
             workload = { kind = \"bulk\", bytes = \"150000B\" }\n";
        crate::scenario::parse_str_with(text, &Registry::builtin())
            .expect("scenario")
            .base
    }

    #[test]
    fn sctp_checkers_catch_planted_violations() {
        let cfg = sctp_scenario();
        let (recs, r) = traced(&cfg, 1);
        replay(&cfg, &recs, &r).expect("the real trace passes");
        let mtu = cfg.flows[0].sctp().unwrap().server.mtu;
        // A congestion window one byte under 1 MTU (RFC 9260 §7.2.3's floor).
        let mut bad = recs.clone();
        let m = bad
            .iter_mut()
            .find_map(|r| match &mut r.event {
                TraceEvent::MetricsUpdated(m) if m.congestion_window.is_some() => Some(m),
                _ => None,
            })
            .expect("an SCTP cwnd update");
        m.congestion_window = Some(mtu - 1);
        let e = replay(&cfg, &bad, &r).expect_err("caught");
        assert!(e.contains("below the controller's minimum window"), "{e}");
        // A packet above mtu - 20.
        let mut bad = recs.clone();
        let p = bad
            .iter_mut()
            .find_map(|r| match &mut r.event {
                TraceEvent::PacketSent {
                    packet: ProtocolPacket::Sctp(p),
                    ..
                } if p.data().next().is_some() => Some(p),
                _ => None,
            })
            .expect("an SCTP DATA packet");
        let extra = p.chunks[0].clone();
        while p.size() <= mtu - 20 {
            p.chunks.push(extra.clone());
        }
        let e = replay(&cfg, &bad, &r).expect_err("caught");
        assert!(e.contains("SCTP packet of"), "{e}");
    }

    fn sctp_bounds() -> Bounds {
        Bounds {
            max_bytes: 60_000,
            transports: vec!["sctp".into()],
            ..Bounds::default()
        }
    }

    #[test]
    fn sctp_passes_every_checker_over_generated_scenarios() {
        let outcome = hunt(&sctp_bounds(), &Registry::builtin(), 8, |cfg, seed| {
            run_checked(cfg, seed).map(|_| ())
        });
        assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }

    #[test]
    #[ignore = "many cases: run in release"]
    fn sctp_passes_every_checker_over_many_generated_scenarios() {
        let bounds = Bounds {
            max_flows: 3,
            ..sctp_bounds()
        };
        let outcome = hunt(&bounds, &Registry::builtin(), 256, |cfg, seed| {
            run_checked(cfg, seed).map(|_| ())
        });
        assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }

    fn tcp_scenario(extra: &str) -> Config {
        let text = format!(
            "sim = {{ time_limit = \"30s\" }}\n[topology]\nkind = \"two_hosts\"\n\
             link = {{ rate = \"4000kbps\", delay = \"15ms\", queue = 20 }}\n\
             reverse = {{ loss = {{ model = \"bernoulli\", p = 0.03 }} }}\n\
             [[flows]]\ntransport = \"tcp\"\n{extra}\
             workload = {{ kind = \"bulk\", bytes = \"150000B\" }}\n"
        );
        crate::scenario::parse_str_with(&text, &Registry::builtin())
            .expect("scenario")
            .base
    }

    fn probes(recs: &[TraceRecord]) -> BTreeMap<&'static str, usize> {
        let mut n = BTreeMap::new();
        for r in recs {
            if let TraceEvent::SenderProbe(p) = &r.event {
                let k = match p {
                    SenderProbe::Sent {
                        retransmission: false,
                        ..
                    } => "sent",
                    SenderProbe::Sent { .. } => "retransmitted",
                    SenderProbe::Acked { .. } => "acked",
                    SenderProbe::Lost { .. } => "lost",
                    SenderProbe::Restored { .. } => "restored",
                    SenderProbe::Window { .. } => "window",
                    SenderProbe::Delivered { .. } => "delivered",
                    SenderProbe::ChunkSent {
                        retransmission: false,
                        ..
                    } => "chunk_sent",
                    SenderProbe::ChunkSent { .. } => "chunk_retransmitted",
                    SenderProbe::ChunkAcked {
                        cumulative: true, ..
                    } => "chunk_cum_acked",
                    SenderProbe::ChunkAcked { .. } => "chunk_gap_acked",
                    SenderProbe::ChunkLost { .. } => "chunk_lost",
                    SenderProbe::StreamDelivered { .. } => "stream_delivered",
                };
                *n.entry(k).or_default() += 1;
            }
        }
        n
    }

    #[test]
    fn tcp_senders_pass_every_checker_with_sack_and_with_dupacks() {
        for (cc, extra) in [
            ("cubic", ""),
            ("new_reno", ""),
            ("new_reno", "sack = false\n"),
            ("cubic", "sack = false\n"),
        ] {
            let cfg = tcp_scenario(&format!("cc = \"{cc}\"\n{extra}"));
            for seed in 1..=3 {
                let (recs, r) = traced(&cfg, seed);
                replay(&cfg, &recs, &r).unwrap_or_else(|e| panic!("{cc} {extra} {seed}: {e}"));
                check_result(&cfg, &r).unwrap();
                // The probes cover sending, acknowledging, losing, retransmitting,
                // the window and delivery: the checks above had something to check.
                let n = probes(&recs);
                for k in [
                    "sent",
                    "acked",
                    "lost",
                    "retransmitted",
                    "window",
                    "delivered",
                ] {
                    assert!(
                        n.get(k).copied().unwrap_or(0) > 0,
                        "{cc} {extra}: no {k} in {n:?}"
                    );
                }
            }
        }
    }

    /// Forwards to a qlog writer, without the probes when `drop_probes`.
    struct Filter<'w, 'a>(&'w mut crate::qlog::QlogWriter<'a, Vec<u8>>, bool);

    impl crate::trace::Tracer for Filter<'_, '_> {
        fn begin(&mut self, info: &crate::trace::RunInfo) {
            self.0.begin(info)
        }
        fn record(&mut self, r: &TraceRecord) {
            let timeline_only = matches!(
                r.event,
                TraceEvent::SenderProbe(_) | TraceEvent::Tcp(_) | TraceEvent::RtoUpdated { .. }
            );
            if !(self.1 && timeline_only) {
                self.0.record(r)
            }
        }
        fn finish(&mut self, end: SimTime) {
            self.0.finish(end)
        }
    }

    #[test]
    fn tcp_probes_change_no_output() {
        // The probes are trace records only: the run's digest and its qlog files are
        // those of a trace without them.
        let cfg = tcp_scenario("");
        let (recs, traced_run) = traced(&cfg, 2);
        assert!(!probes(&recs).is_empty());
        assert_eq!(crate::run(&cfg, 2).unwrap().digest, traced_run.digest);
        let qlog = |drop_probes: bool| {
            let mut w = crate::qlog::QlogWriter::new(
                crate::qlog::QlogFormat::Draft,
                "t",
                Box::new(|_| Ok(Vec::new())),
            );
            crate::runner::run_traced(&cfg, 2, &mut Filter(&mut w, drop_probes)).unwrap();
            w.into_outputs().unwrap()
        };
        assert_eq!(qlog(false), qlog(true));
    }

    #[test]
    fn tcp_timeline_events_change_no_output() {
        // The packet timeline's TCP events (segments, losses with their rule, timers,
        // sender state) are trace records only: the digest is the untraced run's, and
        // the qlog writer skips them (checked with the probes above).
        use crate::trace::{TcpEvent, TcpLossRule};
        let cfg = tcp_scenario("");
        let (recs, traced_run) = traced(&cfg, 2);
        assert_eq!(crate::run(&cfg, 2).unwrap().digest, traced_run.digest);
        let tcp: Vec<&TcpEvent> = recs
            .iter()
            .filter_map(|r| match &r.event {
                TraceEvent::Tcp(e) => Some(e),
                _ => None,
            })
            .collect();
        let has = |f: &dyn Fn(&TcpEvent) -> bool| tcp.iter().any(|e| f(e));
        assert!(has(&|e| matches!(e, TcpEvent::SegmentSent(s) if s.syn)));
        assert!(has(
            &|e| matches!(e, TcpEvent::SegmentReceived(s) if s.len > 0)
        ));
        assert!(has(
            &|e| matches!(e, TcpEvent::SegmentSent(s) if !s.sack.is_empty())
        ));
        assert!(has(&|e| matches!(e, TcpEvent::State(_))));
        // Every loss has a rule; each probe `Lost` has its timeline twin.
        let lost = tcp
            .iter()
            .filter(|e| matches!(e, TcpEvent::Lost { .. }))
            .count();
        assert!(lost > 0);
        assert_eq!(lost, probes(&recs).get("lost").copied().unwrap_or(0));
        assert!(has(&|e| matches!(
            e,
            TcpEvent::Lost {
                rule: TcpLossRule::Rack | TcpLossRule::SackIsLost,
                ..
            }
        )));
    }

    /// Plants the three window violations a TCP or SCTP sender's `Window` probe can show,
    /// each in its own copy of `recs`, and has `caught` check the checker's message: the
    /// flight one byte off (`wants[0]`), cwnd one below the reported minimum (`wants[1]`),
    /// and a minimum (and cwnd) one below the transport's floor `floor` (`wants[2]`).
    fn window_violations_caught(
        recs: &[TraceRecord],
        floor: u64,
        wants: [&str; 3],
        caught: impl Fn(&[TraceRecord], &str),
    ) {
        let window = |p: &SenderProbe| matches!(p, SenderProbe::Window { .. });
        let mut bad = recs.to_vec();
        if let SenderProbe::Window {
            bytes_in_flight, ..
        } = tcp_probe_mut(&mut bad, 5, window)
        {
            *bytes_in_flight += 1;
        }
        caught(&bad, wants[0]);
        let mut bad = recs.to_vec();
        if let SenderProbe::Window { cwnd, minimum, .. } = tcp_probe_mut(&mut bad, 5, window) {
            *cwnd = *minimum - 1;
        }
        caught(&bad, wants[1]);
        let mut bad = recs.to_vec();
        if let SenderProbe::Window { minimum, cwnd, .. } = tcp_probe_mut(&mut bad, 5, window) {
            *minimum = floor - 1;
            *cwnd = floor - 1;
        }
        caught(&bad, wants[2]);
    }

    fn tcp_probe_mut(
        recs: &mut [TraceRecord],
        nth: usize,
        f: impl Fn(&SenderProbe) -> bool,
    ) -> &mut SenderProbe {
        recs.iter_mut()
            .filter_map(|r| match &mut r.event {
                TraceEvent::SenderProbe(p) if f(p) => Some(p),
                _ => None,
            })
            .nth(nth)
            .expect("a probe")
    }

    #[test]
    fn tcp_checkers_catch_planted_violations() {
        let cfg = tcp_scenario("");
        let (recs, r) = traced(&cfg, 1);
        replay(&cfg, &recs, &r).expect("the real trace passes");
        let smss = cfg.flows[0].tcp().unwrap().server.effective_mss();
        let caught = |bad: &[TraceRecord], want: &str| {
            let e = replay(&cfg, bad, &r).expect_err(want);
            assert!(e.contains(want), "{want}: {e}");
        };
        // pipe one byte off; a window under the controller's minimum; a controller whose
        // minimum is under 1 SMSS.
        let wants = [
            "outstanding segments",
            "below the controller's minimum window",
            "below 1 SMSS",
        ];
        window_violations_caught(&recs, smss, wants, caught);
        // A segment above the MSS.
        let mut bad = recs.clone();
        let sent = |p: &SenderProbe| matches!(p, SenderProbe::Sent { .. });
        if let SenderProbe::Sent { len, .. } = tcp_probe_mut(&mut bad, 3, sent) {
            *len = smss + 1;
        }
        caught(&bad, "effective MSS");
        // An IP packet above the MTU.
        let mut bad = recs.clone();
        if let SenderProbe::Sent { ip_size, .. } = tcp_probe_mut(&mut bad, 3, sent) {
            *ip_size = cfg.flows[0].tcp().unwrap().server.mss + 41;
        }
        caught(&bad, "path MTU");
        // A loss the sender forgot to take out of pipe: the probe dropped.
        let mut bad = recs.clone();
        let i = bad
            .iter()
            .position(|r| matches!(r.event, TraceEvent::SenderProbe(SenderProbe::Lost { .. })))
            .expect("a loss");
        bad.remove(i);
        caught(&bad, "outstanding segments");
        // A byte delivered twice.
        let mut bad = recs.clone();
        let delivered = |p: &SenderProbe| matches!(p, SenderProbe::Delivered { .. });
        if let SenderProbe::Delivered { offset, .. } = tcp_probe_mut(&mut bad, 4, delivered) {
            *offset -= 1;
        }
        caught(&bad, "in order, each byte once");
    }

    /// SCTP with losses both ways over two streams.
    fn sctp_lossy(cc: &str) -> Config {
        let text = format!(
            "sim = {{ time_limit = \"60s\" }}\n[topology]\nkind = \"two_hosts\"\n\
             link = {{ rate = \"4000kbps\", delay = \"15ms\", queue = 20, loss = {{ model = \"bernoulli\", p = 0.03 }} }}\n\
             reverse = {{ loss = {{ model = \"bernoulli\", p = 0.05 }} }}\n\
             [[flows]]\ntransport = \"sctp\"\ncc = \"{cc}\"\n\
             workload = {{ kind = \"bulk\", bytes = \"200000B\", streams = 2 }}\n"
        );
        crate::scenario::parse_str_with(&text, &Registry::builtin())
            .expect("scenario")
            .base
    }

    #[test]
    fn sctp_associations_pass_every_probe_checker_with_each_controller() {
        for cc in crate::config::sctp::SCTP_CC_NAMES {
            for seed in 1..=3 {
                let cfg = sctp_lossy(cc);
                let (recs, r) = traced(&cfg, seed);
                replay(&cfg, &recs, &r).unwrap_or_else(|e| panic!("{cc} seed {seed}: {e}"));
                check_completed(&r).unwrap_or_else(|e| panic!("{cc} seed {seed}: {e}"));
                let n = probes(&recs);
                for k in [
                    "chunk_sent",
                    "chunk_cum_acked",
                    "chunk_lost",
                    "chunk_retransmitted",
                    "window",
                    "stream_delivered",
                ] {
                    assert!(n.contains_key(k), "{cc} seed {seed}: no {k} probe: {n:?}");
                }
            }
        }
    }

    #[test]
    fn sctp_probes_change_no_output() {
        // The probes and the timeline's RTO records change neither the digest nor the
        // qlog files.
        let cfg = sctp_lossy("rfc9260");
        let (recs, traced_run) = traced(&cfg, 2);
        assert!(!probes(&recs).is_empty());
        assert!(recs
            .iter()
            .any(|r| matches!(r.event, TraceEvent::RtoUpdated { .. })));
        assert_eq!(crate::run(&cfg, 2).unwrap().digest, traced_run.digest);
        let qlog = |drop_probes: bool| {
            let mut w = crate::qlog::QlogWriter::new(
                crate::qlog::QlogFormat::Draft,
                "t",
                Box::new(|_| Ok(Vec::new())),
            );
            crate::runner::run_traced(&cfg, 2, &mut Filter(&mut w, drop_probes)).unwrap();
            w.into_outputs().unwrap()
        };
        assert_eq!(qlog(false), qlog(true));
    }

    #[test]
    fn sctp_probe_checkers_catch_planted_violations() {
        let cfg = sctp_lossy("rfc9260");
        let (recs, r) = traced(&cfg, 1);
        replay(&cfg, &recs, &r).expect("the real trace passes");
        let mtu = cfg.flows[0].sctp().unwrap().server.mtu;
        let caught = |bad: &[TraceRecord], want: &str| {
            let e = replay(&cfg, bad, &r).expect_err(want);
            assert!(e.contains(want), "{want}: {e}");
        };
        // Flight size one byte off; cwnd under the reported minimum; a minimum under
        // 1 MTU (RFC 9260 §7.2.3).
        let wants = [
            "outstanding chunks",
            "below the minimum window",
            "below the controller's floor",
        ];
        window_violations_caught(&recs, mtu, wants, caught);
        // A packet above mtu - 20.
        let mut bad = recs.clone();
        let sent = |p: &SenderProbe| matches!(p, SenderProbe::ChunkSent { .. });
        if let SenderProbe::ChunkSent { packet_size, .. } = tcp_probe_mut(&mut bad, 3, sent) {
            *packet_size = mtu - 19;
        }
        caught(&bad, "in an SCTP packet of");
        // A gap in the TSNs.
        let mut bad = recs.clone();
        let new = |p: &SenderProbe| {
            matches!(
                p,
                SenderProbe::ChunkSent {
                    retransmission: false,
                    ..
                }
            )
        };
        if let SenderProbe::ChunkSent { tsn, .. } = tcp_probe_mut(&mut bad, 3, new) {
            *tsn += 1;
        }
        caught(&bad, "TSNs go out in sequence");
        // A mark for retransmission the sender forgot to take out of the flight size.
        let mut bad = recs.clone();
        let i = bad
            .iter()
            .position(|r| {
                matches!(
                    r.event,
                    TraceEvent::SenderProbe(SenderProbe::ChunkLost { .. })
                )
            })
            .expect("a loss");
        bad.remove(i);
        caught(&bad, "outstanding chunks");
        // An acknowledgement of a TSN never sent.
        let mut bad = recs.clone();
        let acked = |p: &SenderProbe| matches!(p, SenderProbe::ChunkAcked { .. });
        if let SenderProbe::ChunkAcked { tsn, .. } = tcp_probe_mut(&mut bad, 3, acked) {
            *tsn += 1_000_000;
        }
        caught(&bad, "not an outstanding chunk");
        // A loss of a TSN already cumulatively acknowledged.
        let mut bad = recs.clone();
        let lost = |p: &SenderProbe| matches!(p, SenderProbe::ChunkLost { .. });
        if let SenderProbe::ChunkLost { tsn } = tcp_probe_mut(&mut bad, 0, lost) {
            *tsn = 0;
        }
        caught(&bad, "not an outstanding chunk");
        // A stream's bytes delivered twice.
        let mut bad = recs.clone();
        let delivered = |p: &SenderProbe| matches!(p, SenderProbe::StreamDelivered { .. });
        if let SenderProbe::StreamDelivered { offset, .. } = tcp_probe_mut(&mut bad, 4, delivered) {
            *offset -= 1;
        }
        caught(&bad, "in order, each byte once");
    }

    fn tcp_bounds() -> Bounds {
        Bounds {
            max_bytes: 60_000,
            transports: vec!["tcp".into()],
            ..Bounds::default()
        }
    }

    #[test]
    fn tcp_passes_every_checker_over_generated_scenarios() {
        let outcome = hunt(&tcp_bounds(), &Registry::builtin(), 8, |cfg, seed| {
            run_checked(cfg, seed).map(|_| ())
        });
        assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }

    #[test]
    #[ignore = "many cases: run in release"]
    fn tcp_passes_every_checker_over_many_generated_scenarios() {
        let bounds = Bounds {
            max_flows: 3,
            max_bytes: 300_000,
            ..tcp_bounds()
        };
        let outcome = hunt(&bounds, &Registry::builtin(), 256, |cfg, seed| {
            run_checked(cfg, seed).map(|_| ())
        });
        assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }

    #[test]
    fn basic_watch_checks_time_and_sizes_only() {
        // A planted pipe error passes the basic watch; a planted oversize segment and a
        // step back in time do not.
        let cfg = tcp_scenario("");
        let (recs, _) = traced(&cfg, 1);
        let run = |recs: &[TraceRecord]| {
            let mut w = Watch::basic(&cfg);
            for r in recs {
                w.record(r);
            }
            w.violation
        };
        assert_eq!(run(&recs), None);
        let mut bad = recs.clone();
        let window = |p: &SenderProbe| matches!(p, SenderProbe::Window { .. });
        if let SenderProbe::Window {
            bytes_in_flight, ..
        } = tcp_probe_mut(&mut bad, 5, window)
        {
            *bytes_in_flight += 1;
        }
        assert_eq!(run(&bad), None);
        let mut bad = recs.clone();
        let sent = |p: &SenderProbe| matches!(p, SenderProbe::Sent { .. });
        if let SenderProbe::Sent { len, .. } = tcp_probe_mut(&mut bad, 3, sent) {
            *len = 100_000;
        }
        assert!(run(&bad).unwrap().contains("effective MSS"));
        let mut bad = recs.clone();
        let k = bad.len() / 2;
        bad[k].time = SimTime::ZERO;
        assert!(run(&bad).unwrap().contains("time went back"));
    }
}

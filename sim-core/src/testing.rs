//! Property testing for researchers (feature `testing`, issue 16): generators of valid
//! scenarios, invariant checkers, analytic oracles, and the replay of a shrunk failure.
//!
//! The pieces:
//! - **Strategies** ([`scenario`], [`link`], [`loss_model`], [`flow`], [`handover`]):
//!   proptest strategies of [`ScenarioSpec`], a small description of a valid scenario whose
//!   sizes a caller bounds ([`Bounds`]). A spec renders to scenario TOML with only the keys it
//!   needs ([`ScenarioSpec::to_toml`]), so a shrunk failure is a file of a few keys that
//!   `quicsim run` reads.
//! - **Invariants** ([`check_result`], [`Watch`], [`run_checked`]): on a [`RunResult`]
//!   (conservation per flow, delivery of every requested byte, status and budget) and on the
//!   trace of a run (time monotone, no QUIC datagram above `max_udp_payload`, the congestion
//!   window never below the controller's own minimum window).
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
//! use sim_core::cc::Registry;
//!
//! let bounds = Bounds { max_bytes: 40_000, ..Bounds::default() };
//! // Every built-in controller passes every invariant on 4 generated scenarios.
//! let outcome = testing::hunt(&bounds, &Registry::builtin(), 4, |cfg, seed| {
//!     testing::run_checked(cfg, seed).map(|_| ())
//! });
//! assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
//! ```

use crate::cc::Registry;
use crate::config::Config;
use crate::metrics::{RunResult, RunStatus};
use crate::time::{SimDuration, SimTime};
use crate::trace::{ProtocolPacket, TraceEvent, TraceRecord, TraceSource, Vantage};
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

/// A bulk download over one of `b.transports` with one of `b.controllers`.
pub fn flow(b: &Bounds) -> BoxedStrategy<FlowSpec> {
    assert!(!b.transports.is_empty() && !b.controllers.is_empty());
    (
        proptest::sample::select(b.transports.clone()),
        proptest::sample::select(b.controllers.clone()),
        b.min_bytes..=b.max_bytes.max(b.min_bytes),
        1..=b.max_streams.max(1),
    )
        .prop_map(|(transport, cc, bytes, streams)| {
            let streams = if transport == "quic" { streams } else { 1 };
            FlowSpec {
                transport,
                cc,
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

/// Watches a run's trace ([`crate::runner::run_traced`] takes it as a tracer): time never
/// goes back, no QUIC datagram exceeds its sender's `max_udp_payload`, and the congestion
/// window never falls below the minimum window the controller declared
/// (`RecoveryParametersSet`, [`crate::cc::CongestionController::minimum_window`]). The
/// first violation is kept.
#[derive(Debug)]
pub struct Watch<'c> {
    cfg: &'c Config,
    last: SimTime,
    datagrams: BTreeMap<(u32, u32, u64), u64>,
    minimum: BTreeMap<(u32, u32), u64>,
    /// The first violation seen, if any.
    pub violation: Option<String>,
}

impl<'c> Watch<'c> {
    /// A watch of a run of `cfg`.
    pub fn new(cfg: &'c Config) -> Self {
        Watch {
            cfg,
            last: SimTime::ZERO,
            datagrams: BTreeMap::new(),
            minimum: BTreeMap::new(),
            violation: None,
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
        let conn = (id.endpoint, id.connection);
        match &r.event {
            TraceEvent::RecoveryParametersSet(p) => {
                self.minimum.insert(conn, p.minimum_congestion_window);
            }
            TraceEvent::MetricsUpdated(m) => {
                if let (Some(cwnd), Some(&min)) = (m.congestion_window, self.minimum.get(&conn)) {
                    if cwnd < min {
                        self.violation = Some(format!(
                            "flow {} {:?}: congestion window {cwnd} B below the controller's minimum window {min} B at {:?} (RFC 9002 §7.2, §7.3.2)",
                            id.flow, id.vantage, r.time
                        ));
                    }
                }
            }
            TraceEvent::PacketSent {
                packet: ProtocolPacket::Quic(p),
                datagram_id,
                ..
            } => {
                let Some(sides) = self.cfg.flows.get(id.flow as usize).and_then(|f| f.quic())
                else {
                    return;
                };
                let max = match id.vantage {
                    Vantage::Client => sides.client.max_udp_payload,
                    Vantage::Server => sides.server.max_udp_payload,
                };
                let size = self
                    .datagrams
                    .entry((id.endpoint, id.connection, *datagram_id))
                    .or_default();
                *size += p.size;
                if *size > max {
                    self.violation = Some(format!(
                        "flow {} {:?} sent a datagram of {size} B > max_udp_payload {max}",
                        id.flow, id.vantage
                    ));
                }
            }
            _ => {}
        }
    }
}

/// Invariants of a finished run of `cfg`: a status other than `stopped`, the event and
/// time budgets kept, packets conserved per flow (sent = delivered + dropped + in the
/// network), and every completed bulk download delivered exactly its bytes to the
/// client's application.
pub fn check_result(cfg: &Config, r: &RunResult) -> Result<(), String> {
    if r.status == RunStatus::Stopped {
        return Err("the run ended `stopped`".into());
    }
    if r.end_time.0 > cfg.sim.time_limit.0 {
        return Err(format!("ended at {:?} after the time limit", r.end_time));
    }
    for f in &r.flows {
        let out = f.packets_delivered + f.drops.total() + f.in_network;
        if f.packets_sent != out {
            return Err(format!(
                "flow {}: sent {} != delivered {} + dropped {} + in network {}",
                f.flow,
                f.packets_sent,
                f.packets_delivered,
                f.drops.total(),
                f.in_network
            ));
        }
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

/// Runs `cfg` with `seed` under a [`Watch`] and checks the result ([`check_result`]).
/// The result is that of [`crate::run`] (tracing changes nothing in it).
pub fn run_checked(cfg: &Config, seed: u64) -> Result<RunResult, String> {
    let mut watch = Watch::new(cfg);
    let mut tracer = |r: &TraceRecord| watch.record(r);
    let r = crate::runner::run_traced(cfg, seed, &mut tracer).map_err(|e| e.to_string())?;
    if let Some(v) = watch.violation {
        return Err(v);
    }
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

/// Runs `property(config, seed)` over `cases` scenarios drawn from [`scenario`]`(bounds)`
/// (with seeds in 1..=1000), controller names resolved by `registry`. On a failure,
/// proptest shrinks the case, and the minimal one comes back as a [`Failure`] (boxed). The
/// runner is deterministic (proptest's own RNG from a fixed seed, no persistence file),
/// so the same call finds the same case.
pub fn hunt(
    bounds: &Bounds,
    registry: &Registry,
    cases: u32,
    property: impl Fn(&Config, u64) -> Result<(), String>,
) -> Result<(), Box<Failure>> {
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
        Err(TestError::Abort(why)) => Err(Box::new(Failure {
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
            reason: format!("proptest aborted: {why}"),
        })),
    }
}

//! The typed, validated run configuration.
//!
//! Built from a TOML scenario by [`crate::scenario`], or directly in code by researchers who
//! script against sim-core. Every field is explicit: defaults were already applied, and
//! relative values such as `"1BDP"` were resolved when the config was built. `Config`
//! serialises back into the scenario format (`resolved_config` in run output), and that
//! output parses again to the same `Config`.

use crate::time::{SimDuration, SimTime};
use crate::units::{Bytes, Rate};
use serde::{Deserialize, Serialize};

pub mod drop_reason;
pub mod ecn;
pub mod loss;
pub mod quic;
mod repr;
pub mod sctp;
pub mod tcp;
pub mod trace;
pub mod transport;
pub mod workload;

pub use ecn::{EcnMarking, QueueLevel};
pub use loss::LossModel;
pub use transport::{Sides, TransportConfig};
pub use workload::{BulkSpec, ConnectionSpec, SequenceSpec, WorkloadConfig};

/// A complete, validated run configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Scenario name (for file names and reports).
    pub name: String,
    /// Free text.
    pub description: String,
    /// Base seed; run `i` of a multi-run uses `seed + i` (wrapping). Scenario files write
    /// seeds above 2^63 - 1 (TOML's integer limit) as decimal strings.
    pub seed: u64,
    /// Number of runs (seeds) per sweep point.
    pub runs: u32,
    /// Bounds every run.
    pub sim: SimLimits,
    /// Hosts, routers and links.
    pub topology: Topology,
    /// Applications (traffic).
    pub flows: Vec<FlowConfig>,
    /// What to record.
    pub output: OutputConfig,
}

/// Bounds on a run: it ends with status `time_limit` or `event_budget` when one is hit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimLimits {
    /// Simulated-time limit.
    pub time_limit: SimDuration,
    /// Maximum number of events processed.
    pub max_events: u64,
}

/// The network.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Topology {
    /// client - bottleneck - server: one link per direction.
    TwoHosts {
        /// client -> server.
        forward: LinkConfig,
        /// server -> client.
        reverse: LinkConfig,
        /// Scheduled switches of the client's path.
        handovers: Vec<Handover>,
    },
    /// N client/server pairs, each with its own access links, through router R1 (client
    /// side) and R2 (server side) joined by the shared bottleneck.
    Dumbbell {
        /// Per-pair access links.
        pairs: Vec<PairLinks>,
        /// R1 -> R2.
        bottleneck_forward: LinkConfig,
        /// R2 -> R1.
        bottleneck_reverse: LinkConfig,
        /// Scheduled switches of a client's access links.
        handovers: Vec<Handover>,
    },
}

/// Access links of one dumbbell pair.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairLinks {
    /// client -> R1.
    pub client_up: LinkConfig,
    /// R1 -> client.
    pub client_down: LinkConfig,
    /// server -> R2.
    pub server_up: LinkConfig,
    /// R2 -> server.
    pub server_down: LinkConfig,
}

/// At `at`, the client of pair `pair` (0 for `two_hosts`) leaves its current access links
/// for new ones. Packets queued or propagating on the old links are dropped (reason
/// `handover`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Handover {
    /// When.
    pub at: SimTime,
    /// Which client (pair index).
    pub pair: usize,
    /// New client -> network link (the whole forward path for `two_hosts`).
    pub forward: LinkConfig,
    /// New network -> client link.
    pub reverse: LinkConfig,
    /// What happens to the client's address.
    pub address: AddressChange,
}

/// Address effect of a handover.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AddressChange {
    /// Same address and port (a link change under the same address).
    None,
    /// New port, same IP (NAT rebinding).
    Port,
    /// New IP address (a new network).
    Ip,
}

/// One unidirectional link.
///
/// Its serde form (the scenario's link table) writes `rate` as a rate, or, for a
/// trace-driven link, as the trace table `{ trace, opportunities_ms, digest }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "LinkRepr", try_from = "LinkRepr")]
pub struct LinkConfig {
    /// Serialization rate in bit/s (> 0); for a trace-driven link the trace's mean rate
    /// ([`trace::LinkTrace::mean_rate`]), used where one rate is needed (`"1BDP"`).
    pub rate: Rate,
    /// The trace of delivery opportunities that replaces `rate` on the serializer
    /// (Mahimahi format, [`trace`]), if any.
    pub trace: Option<trace::LinkTrace>,
    /// One-way propagation delay.
    pub delay: SimDuration,
    /// Per-packet bytes added to the datagram size (IP + UDP headers = 28 by default).
    pub overhead: Bytes,
    /// Drop-tail limit on what waits for the serializer.
    pub queue: QueueLimit,
    /// Random or deterministic loss.
    pub loss: LossModel,
    /// Where loss is applied.
    pub loss_position: LossPosition,
    /// Probability that a packet is corrupted (uses link time, receiver discards it).
    pub corruption: f64,
    /// Delay variation.
    pub jitter: Option<Jitter>,
    /// Scheduled changes, sorted by time.
    pub changes: Vec<LinkChange>,
    /// ECN marking by the queue ([`ecn`]); `None` (the default): a plain drop-tail queue.
    pub ecn: Option<EcnMarking>,
}

/// The serde form of a link: [`LinkConfig`] with `rate` a rate or a trace table.
#[derive(Clone, Serialize, Deserialize)]
struct LinkRepr {
    rate: RateRepr,
    delay: SimDuration,
    overhead: Bytes,
    queue: QueueLimit,
    loss: LossModel,
    loss_position: LossPosition,
    corruption: f64,
    jitter: Option<Jitter>,
    changes: Vec<LinkChange>,
    // Written only when set: a link without marking serialises as before the key existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ecn: Option<EcnMarking>,
}

/// A link's `rate`: a fixed rate or a trace.
#[derive(Clone, Serialize, Deserialize)]
#[serde(untagged)]
enum RateRepr {
    Fixed(Rate),
    Trace(trace::LinkTrace),
}

impl From<LinkConfig> for LinkRepr {
    fn from(l: LinkConfig) -> Self {
        LinkRepr {
            rate: match l.trace {
                Some(t) => RateRepr::Trace(t),
                None => RateRepr::Fixed(l.rate),
            },
            delay: l.delay,
            overhead: l.overhead,
            queue: l.queue,
            loss: l.loss,
            loss_position: l.loss_position,
            corruption: l.corruption,
            jitter: l.jitter,
            changes: l.changes,
            ecn: l.ecn,
        }
    }
}

impl TryFrom<LinkRepr> for LinkConfig {
    type Error = String;
    fn try_from(l: LinkRepr) -> Result<Self, String> {
        let (rate, trace) = match l.rate {
            RateRepr::Fixed(r) => (r, None),
            RateRepr::Trace(t) => {
                t.check()
                    .map_err(|e| format!("trace {:?}: {}", t.trace, e.message))?;
                (t.mean_rate(), Some(t))
            }
        };
        Ok(LinkConfig {
            rate,
            trace,
            delay: l.delay,
            overhead: l.overhead,
            queue: l.queue,
            loss: l.loss,
            loss_position: l.loss_position,
            corruption: l.corruption,
            jitter: l.jitter,
            changes: l.changes,
            ecn: l.ecn,
        })
    }
}

/// Drop-tail limits. Counts packets waiting for the serializer only: not the one being
/// serialized, nor those propagating. `None` = unlimited in that unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueLimit {
    /// Limit in bytes (datagram size + overhead), resolved from `"1BDP"` etc.
    pub bytes: Option<u64>,
    /// Limit in packets.
    pub packets: Option<u64>,
}

/// Where the loss (and corruption) stages act.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossPosition {
    /// Before the queue, as netem: lost packets use no link time. Default.
    Ingress,
    /// After serialization, as on a radio link: lost packets used link time.
    Egress,
}

/// Delay variation added to the propagation delay of each packet.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Jitter {
    /// Distribution.
    pub distribution: JitterDistribution,
    /// Uniform: half-width J (delay in [d-J, d+J]); normal: standard deviation. The
    /// resulting delay is clamped at 0.
    pub amount: SimDuration,
    /// `false`: arrival = max(computed, previous arrival) (no reordering); `true`: packets
    /// may overtake each other.
    pub reorder: bool,
}

/// Jitter distribution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JitterDistribution {
    /// Uniform in [-J, +J].
    Uniform,
    /// Normal with standard deviation J (Box–Muller on libm).
    Normal,
}

/// A scheduled change of link parameters. Fields left `None` keep their value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkChange {
    /// When.
    pub at: SimTime,
    /// New rate; 0 means the link is down (packets wait in the queue).
    pub rate: Option<Rate>,
    /// New propagation delay (FIFO order is kept when it drops).
    pub delay: Option<SimDuration>,
    /// New loss model.
    pub loss: Option<LossModel>,
    /// New corruption probability.
    pub corruption: Option<f64>,
}

/// One application instance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowConfig {
    /// Which client/server pair carries it (0 for `two_hosts`).
    pub pair: usize,
    /// A background flow does not have to finish for the run to be `completed`.
    pub background: bool,
    /// What it does.
    pub app: AppConfig,
}

/// Applications: a flow without a transport (CBR), or a transport running a workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "repr::AppRepr", from = "repr::AppRepr")]
// A flow's config is built once per run; boxing the transport would only cost readability.
#[allow(clippy::large_enum_variant)]
pub enum AppConfig {
    /// Constant-bit-rate UDP (like `iperf -u`): fixed-size datagrams at fixed spacing.
    Cbr {
        /// client -> server (`up`) or server -> client (`down`).
        direction: Direction,
        /// Sending rate in bit/s, counting whole IPv4 packets: `(size + 28 B) * 8` bits per
        /// datagram (28 B = IPv4 + UDP headers), so a source at a link's rate exactly fills a
        /// link with the default 28 B overhead.
        rate: Rate,
        /// UDP payload size of each datagram.
        size: Bytes,
        /// First datagram at.
        start: SimTime,
        /// Number of datagrams to send.
        count: u64,
    },
    /// A transport (client on the pair's client host, server on its server host) running a
    /// workload: transport × workload ([`TransportFlow`]).
    Transport(TransportFlow),
}

/// A transport flow: which transport, with each side's parameters, and what the
/// application does over it. Any transport runs any workload; `flows::build` maps each
/// pair to its endpoints.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TransportFlow {
    /// The transport and its parameters ([`TransportConfig`]).
    pub transport: TransportConfig,
    /// The workload ([`WorkloadConfig`]).
    pub workload: WorkloadConfig,
    /// When both endpoints start (scenario key `start`; default 0, as before the key
    /// existed). `bulk` only: a `sequence` times its connections itself.
    pub start: SimTime,
}

/// Direction of a one-way flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// client -> server.
    Up,
    /// server -> client.
    Down,
}

/// What a run records besides its summary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutputConfig {
    /// Record time series (queue length per link, delivered bytes per flow).
    pub series: bool,
    /// Sampling interval of the time series.
    pub sample_interval: SimDuration,
}

impl LinkConfig {
    /// A link with the documented defaults (28 B overhead, unlimited queue, no loss, no
    /// jitter, no changes) and the given rate and delay. Handy for scripting; scenario files
    /// default the queue to `"1BDP"` instead.
    pub fn new(rate: Rate, delay: SimDuration) -> Self {
        LinkConfig {
            rate,
            trace: None,
            delay,
            overhead: Bytes(28),
            queue: QueueLimit {
                bytes: None,
                packets: None,
            },
            loss: LossModel::NONE,
            loss_position: LossPosition::Ingress,
            corruption: 0.0,
            jitter: None,
            changes: Vec::new(),
            ecn: None,
        }
    }
}

impl LinkChange {
    /// A change at `at` that changes nothing yet: set the fields to change, e.g.
    /// `LinkChange { rate: Some(Rate(0)), ..LinkChange::at(t) }`.
    pub fn at(at: SimTime) -> Self {
        LinkChange {
            at,
            rate: None,
            delay: None,
            loss: None,
            corruption: None,
        }
    }
}

impl Config {
    /// A `two_hosts` configuration with the given links and flows and default everything
    /// else (seed 1, one run, 600 s time limit, 10^8 events, no series).
    pub fn two_hosts(forward: LinkConfig, reverse: LinkConfig, flows: Vec<FlowConfig>) -> Self {
        Config {
            name: "scenario".into(),
            description: String::new(),
            seed: 1,
            runs: 1,
            sim: SimLimits {
                time_limit: SimDuration::from_secs(600),
                max_events: 100_000_000,
            },
            topology: Topology::TwoHosts {
                forward,
                reverse,
                handovers: Vec::new(),
            },
            flows,
            output: OutputConfig {
                series: false,
                sample_interval: SimDuration::from_millis(10),
            },
        }
    }
}

impl FlowConfig {
    /// A foreground flow on pair 0 running `app`.
    pub fn new(app: AppConfig) -> Self {
        FlowConfig {
            pair: 0,
            background: false,
            app,
        }
    }

    /// A foreground flow on pair 0: `transport` running `workload`.
    pub fn transport(transport: TransportConfig, workload: WorkloadConfig) -> Self {
        FlowConfig::new(AppConfig::Transport(TransportFlow {
            transport,
            workload,
            start: SimTime::ZERO,
        }))
    }

    /// A foreground QUIC flow on pair 0 running the `bulk` workload, with `quic` on both
    /// sides (`transport = "quic"`, `workload = { kind = "bulk", ... }`):
    ///
    /// ```
    /// use sim_core::config::{BulkSpec, FlowConfig, quic::QuicConfig};
    /// let flow = FlowConfig::quic_bulk(
    ///     QuicConfig { stream_window: 64_000, ..QuicConfig::default() },
    ///     BulkSpec { bytes: 10_000_000, streams: 4, ..BulkSpec::default() },
    /// );
    /// assert_eq!(flow.quic().unwrap().server.stream_window, 64_000);
    /// ```
    pub fn quic_bulk(quic: quic::QuicConfig, bulk: BulkSpec) -> Self {
        FlowConfig::transport(TransportConfig::quic(quic), WorkloadConfig::Bulk(bulk))
    }

    /// A foreground QUIC flow on pair 0 running the connection `sequence`, with `quic` on
    /// both sides (`transport = "quic"`, `workload = { kind = "sequence", ... }`).
    pub fn quic_sequence(quic: quic::QuicConfig, sequence: SequenceSpec) -> Self {
        FlowConfig::transport(
            TransportConfig::quic(quic),
            WorkloadConfig::Sequence(sequence),
        )
    }

    /// The transport flow, if this is one.
    pub fn transport_flow(&self) -> Option<&TransportFlow> {
        match &self.app {
            AppConfig::Transport(t) => Some(t),
            AppConfig::Cbr { .. } => None,
        }
    }

    /// The transport flow, mutably, if this is one.
    pub fn transport_flow_mut(&mut self) -> Option<&mut TransportFlow> {
        match &mut self.app {
            AppConfig::Transport(t) => Some(t),
            AppConfig::Cbr { .. } => None,
        }
    }

    /// Each side's QUIC config, if this is a QUIC flow.
    pub fn quic(&self) -> Option<&Sides<quic::QuicConfig>> {
        match &self.transport_flow()?.transport {
            TransportConfig::Quic(q) => Some(q),
            _ => None,
        }
    }

    /// Each side's TCP config, if this is a TCP flow.
    pub fn tcp(&self) -> Option<&Sides<tcp::TcpConfig>> {
        match &self.transport_flow()?.transport {
            TransportConfig::Tcp(t) => Some(t),
            _ => None,
        }
    }

    /// Each side's SCTP config, if this is an SCTP flow.
    pub fn sctp(&self) -> Option<&Sides<sctp::SctpConfig>> {
        match &self.transport_flow()?.transport {
            TransportConfig::Sctp(t) => Some(t),
            _ => None,
        }
    }

    /// Each side's QUIC config, mutably, if this is a QUIC flow.
    pub fn quic_mut(&mut self) -> Option<&mut Sides<quic::QuicConfig>> {
        match &mut self.transport_flow_mut()?.transport {
            TransportConfig::Quic(q) => Some(q),
            _ => None,
        }
    }

    /// The workload, if this is a transport flow.
    pub fn workload(&self) -> Option<&WorkloadConfig> {
        self.transport_flow().map(|t| &t.workload)
    }

    /// The `bulk` workload, if the flow runs it.
    pub fn bulk(&self) -> Option<&BulkSpec> {
        match self.workload()? {
            WorkloadConfig::Bulk(b) => Some(b),
            _ => None,
        }
    }

    /// The connection `sequence`, if the flow runs it.
    pub fn sequence(&self) -> Option<&SequenceSpec> {
        match self.workload()? {
            WorkloadConfig::Sequence(s) => Some(s),
            _ => None,
        }
    }

    /// A foreground CBR flow on pair 0, client -> server, starting at time zero.
    pub fn cbr_up(rate: Rate, size: Bytes, count: u64) -> Self {
        FlowConfig {
            pair: 0,
            background: false,
            app: AppConfig::Cbr {
                direction: Direction::Up,
                rate,
                size,
                start: SimTime::ZERO,
                count,
            },
        }
    }
}

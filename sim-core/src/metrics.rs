//! Run results: status, per-link and per-flow accounting, drops by reason, endpoint
//! metrics and optional time series. Everything here is serialisable (serde) and is what
//! the CLI prints, the browser renders and tests assert on.

use crate::config::Config;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

pub mod quic;
pub mod sctp;
pub mod tcp;
pub mod transport;
pub mod workload;

pub use transport::TransportMetrics;
pub use workload::WorkloadMetrics;

/// Version of the [`RunResult`] layout; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Every foreground endpoint finished and the network holds none of their packets.
    Completed,
    /// The simulated-time limit was reached first.
    TimeLimit,
    /// The event budget was exhausted first.
    EventBudget,
    /// Nothing was left to happen but the work was unfinished (e.g. a link went down for
    /// good, or every packet was lost and the protocol gave up).
    Stalled,
    /// The run was stopped before any of the above: [`crate::sim::Simulation::finish`] was
    /// called on a simulation that could still go on (a paused or cancelled run). Its
    /// results cover the run up to the time it reached. [`crate::run`] never gives it.
    /// Declared last so that the other statuses keep their digest codes (`status as u8`).
    Stopped,
}

impl RunStatus {
    /// The status as every output spells it (the JSON form): `completed`, `time_limit`,
    /// `event_budget`, `stalled`, `stopped`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Completed => "completed",
            RunStatus::TimeLimit => "time_limit",
            RunStatus::EventBudget => "event_budget",
            RunStatus::Stalled => "stalled",
            RunStatus::Stopped => "stopped",
        }
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a packet left the network without being delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// Drop-tail queue full.
    QueueOverflow,
    /// Bernoulli loss stage.
    LossBernoulli,
    /// Periodic loss stage.
    LossPeriodic,
    /// Gilbert-Elliott loss stage.
    LossGilbertElliott,
    /// 4-state loss stage.
    LossFourState,
    /// Corrupted on a link; discarded by the receiving host.
    Corruption,
    /// Queued or propagating on an access link when the host switched away from it.
    Handover,
    /// No route to the destination address (e.g. an address abandoned after a handover).
    NoRoute,
    /// The destination host has no endpoint on that port.
    NoEndpoint,
}

/// Drop counters by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DropCounts {
    /// See [`DropReason::QueueOverflow`].
    pub queue_overflow: u64,
    /// See [`DropReason::LossBernoulli`].
    pub loss_bernoulli: u64,
    /// See [`DropReason::LossPeriodic`].
    pub loss_periodic: u64,
    /// See [`DropReason::LossGilbertElliott`].
    pub loss_gilbert_elliott: u64,
    /// See [`DropReason::LossFourState`].
    pub loss_four_state: u64,
    /// See [`DropReason::Corruption`].
    pub corruption: u64,
    /// See [`DropReason::Handover`].
    pub handover: u64,
    /// See [`DropReason::NoRoute`].
    pub no_route: u64,
    /// See [`DropReason::NoEndpoint`].
    pub no_endpoint: u64,
}

impl DropCounts {
    /// Counts one drop.
    pub fn add(&mut self, reason: DropReason, n: u64) {
        *self.slot(reason) += n;
    }
    /// The counter for `reason`.
    pub fn get(&self, reason: DropReason) -> u64 {
        let mut c = *self;
        *c.slot(reason)
    }
    fn slot(&mut self, reason: DropReason) -> &mut u64 {
        match reason {
            DropReason::QueueOverflow => &mut self.queue_overflow,
            DropReason::LossBernoulli => &mut self.loss_bernoulli,
            DropReason::LossPeriodic => &mut self.loss_periodic,
            DropReason::LossGilbertElliott => &mut self.loss_gilbert_elliott,
            DropReason::LossFourState => &mut self.loss_four_state,
            DropReason::Corruption => &mut self.corruption,
            DropReason::Handover => &mut self.handover,
            DropReason::NoRoute => &mut self.no_route,
            DropReason::NoEndpoint => &mut self.no_endpoint,
        }
    }
    /// All drops.
    pub fn total(&self) -> u64 {
        self.queue_overflow
            + self.loss_bernoulli
            + self.loss_periodic
            + self.loss_gilbert_elliott
            + self.loss_four_state
            + self.corruption
            + self.handover
            + self.no_route
            + self.no_endpoint
    }
    /// Drops caused by a loss stage (any model), i.e. not queue, corruption or routing.
    pub fn random_loss(&self) -> u64 {
        self.loss_bernoulli + self.loss_periodic + self.loss_gilbert_elliott + self.loss_four_state
    }
    /// Adds another set of counters.
    pub fn merge(&mut self, o: &DropCounts) {
        self.queue_overflow += o.queue_overflow;
        self.loss_bernoulli += o.loss_bernoulli;
        self.loss_periodic += o.loss_periodic;
        self.loss_gilbert_elliott += o.loss_gilbert_elliott;
        self.loss_four_state += o.loss_four_state;
        self.corruption += o.corruption;
        self.handover += o.handover;
        self.no_route += o.no_route;
        self.no_endpoint += o.no_endpoint;
    }
}

/// What one unidirectional link saw.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkReport {
    /// Stable link name, e.g. `"forward"`, `"bottleneck_forward"`, `"pair0/client_up"`.
    pub name: String,
    /// Packets offered to the link.
    pub packets_in: u64,
    /// Bytes offered (datagram size + overhead).
    pub bytes_in: u64,
    /// Packets that reached the far end (corrupted ones included).
    pub packets_out: u64,
    /// Packets corrupted on this link.
    pub corrupted: u64,
    /// Drops on this link by reason (corruption is counted at the receiving host).
    pub drops: DropCounts,
    /// Largest number of packets waiting for the serializer.
    pub max_queue_packets: u64,
    /// Largest number of bytes waiting for the serializer.
    pub max_queue_bytes: u64,
    /// Time the serializer was busy, in seconds.
    pub busy_secs: f64,
    /// Packets judged by the loss stage.
    pub loss_judged: u64,
    /// Maximal runs of consecutive packets lost by the loss stage (in judging order).
    pub loss_bursts: u64,
    /// Mean length of those runs, in packets (0 if none).
    pub mean_loss_burst: f64,
    /// Measured: packets lost by the loss stage / packets judged (0 if none judged).
    pub loss_rate: f64,
    /// The long-run loss rate of the link's initial loss model, from its formula
    /// ([`crate::config::LossModel::stationary_loss`]); `None` if it has none.
    pub model_loss_rate: Option<f64>,
}

/// Network-level accounting of one flow.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FlowReport {
    /// Flow index.
    pub flow: u32,
    /// Datagrams handed to the network by the flow's endpoints.
    pub packets_sent: u64,
    /// Datagrams delivered intact to an endpoint.
    pub packets_delivered: u64,
    /// Drops by reason.
    pub drops: DropCounts,
    /// Datagrams still in the network when the run ended.
    pub in_network: u64,
    /// Drops (any reason) / packets sent.
    pub loss_ratio: f64,
    /// Endpoint metrics, one per endpoint of the flow (source first).
    pub endpoints: Vec<EndpointMetrics>,
}

/// Metrics an endpoint reports about itself: one variant per application or protocol,
/// serialised with its name as `kind`. A transport's payload holds the shared
/// [`TransportMetrics`] (read them protocol-blind with [`EndpointMetrics::transport`]),
/// its protocol-only extras and its [`WorkloadMetrics`]; the payload types are defined in
/// this layer (`metrics/<protocol>.rs`), never in the protocol module.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EndpointMetrics {
    /// A constant-bit-rate source.
    CbrSource {
        /// Datagrams sent.
        packets_sent: u64,
        /// UDP payload bytes sent.
        bytes_sent: u64,
        /// Time of the first datagram, seconds.
        first_sent_secs: Option<f64>,
        /// Time of the last datagram, seconds.
        last_sent_secs: Option<f64>,
    },
    /// A constant-bit-rate sink.
    CbrSink {
        /// Distinct datagrams received.
        packets_received: u64,
        /// UDP payload bytes received.
        bytes_received: u64,
        /// Datagrams that arrived with a lower sequence number than one already seen.
        reordered: u64,
        /// Datagrams seen twice.
        duplicates: u64,
        /// Sequence numbers never seen below the highest seen (holes).
        missing: u64,
        /// One-way delay, seconds: min / mean / max.
        delay_min_secs: Option<f64>,
        /// Mean one-way delay, seconds.
        delay_mean_secs: Option<f64>,
        /// Max one-way delay, seconds.
        delay_max_secs: Option<f64>,
        /// Payload throughput between first and last arrival, bit/s.
        goodput_bps: Option<f64>,
    },
    /// A QUIC endpoint (client or server); see [`quic::QuicMetrics`].
    Quic(Box<quic::QuicMetrics>),
    /// A TCP endpoint (client or server); see [`tcp::TcpMetrics`].
    Tcp(Box<tcp::TcpMetrics>),
    /// An SCTP endpoint (client or server); see [`sctp::SctpMetrics`].
    Sctp(Box<sctp::SctpMetrics>),
}

impl EndpointMetrics {
    /// The variant's name, as serialised in `kind`: `"cbr_source"`, `"cbr_sink"`,
    /// `"quic"`, `"tcp"`.
    pub fn kind(&self) -> &'static str {
        match self {
            EndpointMetrics::CbrSource { .. } => "cbr_source",
            EndpointMetrics::CbrSink { .. } => "cbr_sink",
            EndpointMetrics::Quic(_) => "quic",
            EndpointMetrics::Tcp(_) => "tcp",
            EndpointMetrics::Sctp(_) => "sctp",
        }
    }

    /// The shared transport metrics, if the endpoint runs a transport (not for CBR).
    pub fn transport(&self) -> Option<&TransportMetrics> {
        match self {
            EndpointMetrics::Quic(q) => Some(&q.transport),
            EndpointMetrics::Tcp(t) => Some(&t.transport),
            EndpointMetrics::Sctp(s) => Some(&s.transport),
            EndpointMetrics::CbrSource { .. } | EndpointMetrics::CbrSink { .. } => None,
        }
    }

    /// The workload metrics, if the endpoint runs a transport workload (not for CBR).
    pub fn workload(&self) -> Option<&WorkloadMetrics> {
        match self {
            EndpointMetrics::Quic(q) => Some(&q.workload),
            EndpointMetrics::Tcp(t) => Some(&t.workload),
            EndpointMetrics::Sctp(s) => Some(&s.workload),
            EndpointMetrics::CbrSource { .. } | EndpointMetrics::CbrSink { .. } => None,
        }
    }

    /// The workload metrics, mutable (a workload adds what only it knows).
    pub fn workload_mut(&mut self) -> Option<&mut WorkloadMetrics> {
        match self {
            EndpointMetrics::Quic(q) => Some(&mut q.workload),
            EndpointMetrics::Tcp(t) => Some(&mut t.workload),
            EndpointMetrics::Sctp(s) => Some(&mut s.workload),
            EndpointMetrics::CbrSource { .. } | EndpointMetrics::CbrSink { .. } => None,
        }
    }

    /// The QUIC metrics, if the endpoint is a QUIC endpoint.
    pub fn quic(&self) -> Option<&quic::QuicMetrics> {
        match self {
            EndpointMetrics::Quic(q) => Some(q),
            _ => None,
        }
    }
}

/// Sampled time series (when `output.series` is on).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Column names; the first is `time_s`.
    pub columns: Vec<String>,
    /// Rows of samples, one per sampling instant.
    pub rows: Vec<Vec<f64>>,
}

/// The result of one run: what [`crate::run`] returns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Version of sim-core that produced it.
    pub quicsim_version: String,
    /// The seed of this run.
    pub seed: u64,
    /// How the run ended.
    pub status: RunStatus,
    /// Simulated time at the end, seconds.
    pub end_time_secs: f64,
    /// End time in nanoseconds (exact).
    pub end_time: SimTime,
    /// Events processed.
    pub events: u64,
    /// FNV-1a 64 digest of the event trace, 16 hex digits.
    pub digest: String,
    /// Drops over all links and hosts by reason.
    pub drops: DropCounts,
    /// Per-link accounting.
    pub links: Vec<LinkReport>,
    /// Per-flow accounting and endpoint metrics.
    pub flows: Vec<FlowReport>,
    /// Time series, if asked for.
    pub series: Option<Series>,
    /// The configuration that ran, every default explicit.
    pub resolved_config: Config,
}

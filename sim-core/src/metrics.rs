//! Run results: status, per-link and per-flow accounting, drops by reason, endpoint
//! metrics and optional time series. Everything here is serialisable (serde) and is what
//! the CLI prints, the browser renders and tests assert on.

pub use crate::config::drop_reason::{DropCounts, DropReason, DropReasonDef, DROP_REASONS};
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
///
/// The explicit discriminants are the statuses' **frozen codes**: [`RunStatus::code`] is
/// hashed into the run digest and orders the statuses of a sweep point's summary. Never
/// change or reuse one; a new status takes the next unused code, wherever it is declared
/// (`metrics::tests::run_status_codes_are_pinned`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum RunStatus {
    /// Every foreground endpoint finished and the network holds none of their packets.
    Completed = 0,
    /// The simulated-time limit was reached first.
    TimeLimit = 1,
    /// The event budget was exhausted first.
    EventBudget = 2,
    /// Nothing was left to happen but the work was unfinished (e.g. a link went down for
    /// good, or every packet was lost and the protocol gave up).
    Stalled = 3,
    /// The run was stopped before any of the above: [`crate::sim::Simulation::finish`] was
    /// called on a simulation that could still go on (a paused or cancelled run). Its
    /// results cover the run up to the time it reached. [`crate::run`] never gives it.
    Stopped = 4,
}

impl RunStatus {
    /// The status's frozen code: hashed into the run digest, and the order of the
    /// statuses in a sweep point's summary.
    pub const fn code(self) -> u8 {
        self as u8
    }

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

impl DropReason {
    /// The reason's row in [`DROP_REASONS`].
    pub fn def(self) -> &'static DropReasonDef {
        DROP_REASONS
            .iter()
            .find(|d| d.reason == self)
            .expect("DROP_REASONS lists every drop reason")
    }

    /// The reason as every output spells it (`queue_overflow`, ...): its JSON name and its
    /// [`DropCounts`] key.
    pub fn as_str(self) -> &'static str {
        self.def().name
    }
}

impl std::fmt::Display for DropReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl DropCounts {
    /// Counts one drop.
    pub fn add(&mut self, reason: DropReason, n: u64) {
        *(reason.def().counter)(self) += n;
    }
    /// The counter for `reason`.
    pub fn get(&self, reason: DropReason) -> u64 {
        Self::read(self, reason.def())
    }
    fn read(&self, def: &DropReasonDef) -> u64 {
        let mut c = *self;
        *(def.counter)(&mut c)
    }
    /// `(reason, count)` for every row of [`DROP_REASONS`], in its order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static DropReasonDef, u64)> + '_ {
        DROP_REASONS.iter().map(|d| (d, self.read(d)))
    }
    /// `(name, count)` of the reasons with a nonzero count, in [`DROP_REASONS`] order.
    pub fn nonzero(&self) -> Vec<(&'static str, u64)> {
        self.iter()
            .filter(|&(_, n)| n > 0)
            .map(|(d, n)| (d.name, n))
            .collect()
    }
    /// All drops.
    pub fn total(&self) -> u64 {
        self.iter().map(|(_, n)| n).sum()
    }
    /// Drops caused by a loss stage (any model), i.e. not queue, corruption or routing.
    pub fn random_loss(&self) -> u64 {
        self.iter()
            .filter(|(d, _)| d.random_loss)
            .map(|(_, n)| n)
            .sum()
    }
    /// Adds another set of counters.
    pub fn merge(&mut self, o: &DropCounts) {
        for d in &DROP_REASONS {
            *(d.counter)(self) += o.read(d);
        }
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
    /// Packets marked CE by the link's ECN marking (RFC 3168 §5); present only on a link
    /// with `ecn` marking configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_marked: Option<u64>,
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
    /// Sampling stopped at `sim.max_events` rows before the run ended.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every drop reason with the code it must keep.
    fn drop_reasons() -> (fn(DropReason) -> u8, [DropReason; 10]) {
        pinned_codes!(DropReason as u8;
            QueueOverflow => 0,
            LossBernoulli => 1,
            LossPeriodic => 2,
            LossGilbertElliott => 3,
            LossFourState => 4,
            Corruption => 5,
            Handover => 6,
            NoRoute => 7,
            NoEndpoint => 8,
            Aqm => 9,
        )
    }

    fn assert_unique(codes: &[u8]) {
        let mut sorted = codes.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), codes.len(), "duplicate codes in {codes:?}");
    }

    #[test]
    fn drop_reason_codes_are_pinned() {
        let (pinned, all) = drop_reasons();
        for r in all {
            assert_eq!(r.code(), pinned(r), "{r:?}: its digest code changed");
        }
        assert_unique(&all.map(DropReason::code));
    }

    #[test]
    fn drop_table_lists_every_reason_once() {
        let (_, all) = drop_reasons();
        assert_eq!(DROP_REASONS.len(), all.len());
        for r in all {
            assert_eq!(
                DROP_REASONS.iter().filter(|d| d.reason == r).count(),
                1,
                "{r:?} must have one row in DROP_REASONS"
            );
            // The table's name is the serde name of the reason.
            assert_eq!(
                serde_json::to_value(r).unwrap(),
                serde_json::Value::from(r.as_str())
            );
        }
        // One counter per row, in table order, named like the row: the JSON keys of
        // `DropCounts` are the table's names, and each row's counter is its own field.
        // (All counters nonzero: a reason added after the format was frozen is written
        // only when counted.)
        let mut all_counted = DropCounts::default();
        for d in &DROP_REASONS {
            all_counted.add(d.reason, 1);
        }
        let json = serde_json::to_string(&all_counted).unwrap();
        let keys: Vec<&str> = json
            .trim_matches(|c| c == '{' || c == '}')
            .split(',')
            .map(|kv| kv.split(':').next().unwrap().trim_matches('"'))
            .collect();
        let names: Vec<&str> = DROP_REASONS.iter().map(|d| d.name).collect();
        assert_eq!(keys, names);
        for (i, d) in DROP_REASONS.iter().enumerate() {
            let mut c = DropCounts::default();
            c.add(d.reason, i as u64 + 1);
            let json = serde_json::to_value(c).unwrap();
            assert_eq!(json[d.name], i as u64 + 1, "{}", d.name);
            assert_eq!(c.total(), i as u64 + 1);
            assert_eq!(c.get(d.reason), i as u64 + 1);
            assert_eq!(c.nonzero(), vec![(d.name, i as u64 + 1)]);
        }
    }

    #[test]
    fn drop_sums_come_from_the_table() {
        let mut c = DropCounts::default();
        for (i, d) in DROP_REASONS.iter().enumerate() {
            c.add(d.reason, 1 << i);
        }
        assert_eq!(c.total(), (1 << DROP_REASONS.len()) - 1);
        assert_eq!(
            c.random_loss(),
            c.loss_bernoulli + c.loss_periodic + c.loss_gilbert_elliott + c.loss_four_state
        );
        let mut m = c;
        m.merge(&c);
        for d in &DROP_REASONS {
            assert_eq!(m.get(d.reason), 2 * c.get(d.reason));
        }
        let names: Vec<&str> = c.nonzero().into_iter().map(|(n, _)| n).collect();
        let table: Vec<&str> = DROP_REASONS.iter().map(|d| d.name).collect();
        assert_eq!(names, table);
    }

    #[test]
    fn run_status_codes_are_pinned() {
        let (pinned, all) = pinned_codes!(RunStatus as u8;
            Completed => 0,
            TimeLimit => 1,
            EventBudget => 2,
            Stalled => 3,
            Stopped => 4,
        );
        for s in all {
            assert_eq!(s.code(), pinned(s), "{s:?}: its digest code changed");
            assert_eq!(
                serde_json::to_value(s).unwrap(),
                serde_json::Value::from(s.as_str())
            );
        }
        assert_unique(&all.map(RunStatus::code));
    }
}

//! Workload metrics: what an endpoint's workload reports besides the transport's own
//! counters ([`WorkloadMetrics`]), and the per-connection reports of a connection
//! sequence (`quic_connections`, `docs/lifecycle.md`).

use crate::metrics::quic::QuicMetrics;
use crate::metrics::sctp::SctpMetrics;
use crate::metrics::tcp::TcpMetrics;
use crate::metrics::transport::TransportMetrics;
use serde::{Deserialize, Serialize};

/// What the workload of an endpoint reports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkloadMetrics {
    /// Per request stream (in stream order): client read completion, server
    /// acknowledgement completion, seconds from the connection start. Empty for the
    /// totals of a connection sequence.
    pub stream_completion_secs: Vec<Option<f64>>,
    /// Connection sequences: one report per connection (the transport fields are then the
    /// sequence's totals, see `docs/lifecycle.md`). Empty otherwise.
    pub connections: Vec<ConnectionReport>,
    /// Connection-sequence servers: the congestion-window samples taken at 0-RTT
    /// resumptions and connection closes (the history hook's input, paper 000).
    pub history: Vec<HistorySample>,
    /// Connection-sequence servers with an initial-window policy other than `default`:
    /// the window each connection got and the policy's store (paper 000). `None`
    /// otherwise (not serialised).
    pub initial_window: Option<InitialWindowReport>,
    /// `web_page`: the page load and each object (`None` for other workloads; not
    /// serialised then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<PageReport>,
    /// `video` client: startup, seek, rebuffering and each segment (`None` otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub video: Option<VideoReport>,
    /// `reconnects`: the transfer over its connections (`None` otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconnects: Option<ReconnectsReport>,
}

/// What a `reconnects` endpoint reports (besides the sequence's per-connection reports).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReconnectsReport {
    /// From the first connection's start to the last one's completion, seconds (`None`:
    /// the transfer did not complete).
    pub transfer_secs: Option<f64>,
    /// Each connection's handshake time (from its start), seconds, in order: the first is
    /// the initial connection, the others the reconnections.
    pub handshake_secs: Vec<Option<f64>>,
    /// Each connection resumed the previous session.
    pub resumed: Vec<bool>,
    /// Client with `on = "address_change"`: each address change of the client during
    /// the run, in order (empty otherwise; not serialised then).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub address_changes: Vec<AddressChangeReport>,
}

/// What became of the transfer at one address change of the client
/// (`reconnects` with `on = "address_change"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AddressChangeReport {
    /// When the address changed, seconds from the run start.
    pub at_secs: f64,
    /// `"reconnected"` (the connection was abandoned and a new one fetches the rest),
    /// `"migrated"` (the connection followed the address: QUIC migration) or `"none"`
    /// (no live transfer, or the `reconnections` limit was reached).
    pub action: String,
    /// Response bytes the client had read by then (over all connections).
    pub read_bytes: u64,
    /// When the client next read a response byte, seconds from the run start (`None`:
    /// never).
    pub resumed_secs: Option<f64>,
    /// Time lost: from the change to that read, seconds.
    pub lost_secs: Option<f64>,
}

/// What a `web_page` endpoint reports. Times are seconds from the connection start.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PageReport {
    /// Page load time: the client read every object (server: every response
    /// acknowledged); `None` if the page did not complete.
    pub page_load_secs: Option<f64>,
    /// One entry per object, in list order.
    pub objects: Vec<ObjectReport>,
}

/// One object of a page. Times are seconds from the connection start.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ObjectReport {
    /// The object's name.
    pub name: String,
    /// Response bytes.
    pub size: u64,
    /// Client: the request was written (server: read completely).
    pub request_secs: Option<f64>,
    /// Client: the first response byte became readable (server: the response was
    /// written).
    pub first_byte_secs: Option<f64>,
    /// Client: the response was read completely (server: acknowledged).
    pub complete_secs: Option<f64>,
}

/// What a `video` client reports. Times are seconds from the connection start; durations
/// in seconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VideoReport {
    /// From the start to the beginning of playback (`None`: it never started).
    pub startup_delay_secs: Option<f64>,
    /// When the seek happened (`None`: no seek, or the run ended first).
    pub seek_secs: Option<f64>,
    /// Loading delay after the seek: from the seek to playback resumed (`None` also
    /// when the seek came before playback started: see `seek_before_playback`).
    pub seek_loading_delay_secs: Option<f64>,
    /// 1 when the seek came before playback had started (a `seek_at` earlier than the
    /// startup on this path): the seek restarted the startup at the seek position, a cold
    /// start rather than a seek during playback, so no loading delay is reported. Not
    /// written otherwise (0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seek_before_playback: u64,
    /// Stalls after playback started, besides the seek's loading.
    pub rebuffer_count: u64,
    /// Total time of those stalls (an unfinished one counts up to the end of the run).
    pub rebuffer_secs: f64,
    /// Playback reached the end of the video.
    pub playback_end_secs: Option<f64>,
    /// Every segment request, in request order.
    pub segments: Vec<SegmentReport>,
}

/// One segment request of a video.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SegmentReport {
    /// Segment number (position in the video / segment duration).
    pub index: u64,
    /// `hd`, `fhd` or `qhd`.
    pub quality: String,
    /// Response bytes.
    pub bytes: u64,
    /// The measured delay the quality was chosen by, seconds.
    pub delay_secs: f64,
    /// Request written.
    pub request_secs: f64,
    /// Read completely (`None`: not yet, or abandoned by a seek).
    pub complete_secs: Option<f64>,
    /// Abandoned by a seek (the response still arrives; it is discarded).
    pub abandoned: bool,
}

/// What a server's initial-window policy did (`initial_window`, paper 000).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InitialWindowReport {
    /// The policy's name (`history`).
    pub policy: String,
    /// One entry per connection the server accepted, in acceptance order.
    pub connections: Vec<InitialWindowGrant>,
    /// The store at the end of the run, one entry per client address.
    pub store: Vec<HistoryStoreEntry>,
}

/// The initial congestion window a connection got.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InitialWindowGrant {
    /// Connection number.
    pub connection: u64,
    /// When the server accepted it, seconds from the run start.
    pub time_secs: f64,
    /// Client IP address (the store's key).
    pub client: String,
    /// It presented a valid session ticket.
    pub resumed: bool,
    /// The controller's initial window, bytes.
    pub default_cwnd: u64,
    /// The client's average in the store at that moment, bytes (`None`: no history).
    pub average: Option<u64>,
    /// The initial window it got, bytes.
    pub initial_cwnd: u64,
}

/// One client in a server's history store.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryStoreEntry {
    /// Client IP address.
    pub client: String,
    /// Samples averaged.
    pub samples: u64,
    /// The average, bytes (rounded down).
    pub average: u64,
}

/// What a connection's report says happened to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConnectionStatus {
    /// The workload completed (client: every response read; server: every response
    /// acknowledged).
    Completed,
    /// The connection closed before its workload completed.
    Failed,
    /// Still running at the end of the run.
    Open,
    /// Never started (client: the run ended first).
    NotStarted,
}

/// One connection of a sequence, in the endpoint's metrics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConnectionReport {
    /// Position in the sequence (the connection number).
    pub index: u64,
    /// This side's address for the connection.
    pub local: String,
    /// Start (client: connection opened; server: first datagram), seconds from the run
    /// start.
    pub start_secs: Option<f64>,
    /// When the connection closed at this side, seconds from the run start.
    pub close_secs: Option<f64>,
    /// `idle_timeout`, `local_close` (CONNECTION_CLOSE sent) or `peer_close` (received).
    pub close_reason: Option<String>,
    /// The last activity that restarted the idle timer (a datagram received, or the
    /// first ack-eliciting packet sent after one; RFC 9000 §10.1), seconds from the run
    /// start.
    pub last_activity_secs: f64,
    /// The effective idle timeout, `max(idle_timeout, 3 PTO)` (RFC 9000 §10.1), at the
    /// end (or at the close), seconds.
    pub idle_timeout_secs: f64,
    /// Outcome.
    pub status: ConnectionStatus,
    /// The client presented a session ticket (client) / the server accepted one (server).
    pub ticket: bool,
    /// The abbreviated (resumed) handshake was used.
    pub resumed: bool,
    /// 0-RTT: `None` if not attempted, else whether the server accepted it.
    pub zero_rtt_accepted: Option<bool>,
    /// Client: its Initials carried an address-validation token. Server: the token
    /// validated the client's address at the first Initial.
    pub token: bool,
    /// 0-RTT packets sent (client).
    pub zero_rtt_packets: u64,
    /// Stream bytes sent in 0-RTT packets (client).
    pub zero_rtt_stream_bytes: u64,
    /// 0-RTT packets dropped because 0-RTT was rejected (server).
    pub zero_rtt_packets_rejected: u64,
    /// The connection's own metrics, in its protocol's shape; times relative to its
    /// start.
    pub metrics: ReportMetrics,
}

/// A connection report's own metrics: one variant per protocol, serialised as that
/// protocol's flat object (untagged: a QUIC report's JSON is [`QuicMetrics`]' exactly).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ReportMetrics {
    /// A QUIC connection's.
    Quic(Box<QuicMetrics>),
    /// A TCP connection's.
    Tcp(Box<TcpMetrics>),
    /// An SCTP association's.
    Sctp(Box<SctpMetrics>),
}

impl ReportMetrics {
    /// The metrics every transport reports.
    pub fn transport(&self) -> &TransportMetrics {
        match self {
            ReportMetrics::Quic(m) => &m.transport,
            ReportMetrics::Tcp(m) => &m.transport,
            ReportMetrics::Sctp(m) => &m.transport,
        }
    }

    /// The workload's metrics.
    pub fn workload(&self) -> &WorkloadMetrics {
        match self {
            ReportMetrics::Quic(m) => &m.workload,
            ReportMetrics::Tcp(m) => &m.workload,
            ReportMetrics::Sctp(m) => &m.workload,
        }
    }

    /// The QUIC metrics, if this is a QUIC connection's report.
    pub fn quic(&self) -> Option<&QuicMetrics> {
        match self {
            ReportMetrics::Quic(m) => Some(m),
            _ => None,
        }
    }
}

impl From<QuicMetrics> for ReportMetrics {
    fn from(m: QuicMetrics) -> Self {
        ReportMetrics::Quic(Box::new(m))
    }
}

impl From<TcpMetrics> for ReportMetrics {
    fn from(m: TcpMetrics) -> Self {
        ReportMetrics::Tcp(Box::new(m))
    }
}

impl From<SctpMetrics> for ReportMetrics {
    fn from(m: SctpMetrics) -> Self {
        ReportMetrics::Sctp(Box::new(m))
    }
}

impl ConnectionReport {
    /// The report of connection `index` of a sequence that never started (the run ended
    /// first), at `local`, with `metrics` of an unused connection.
    pub fn not_started(index: u64, local: String, metrics: ReportMetrics) -> Self {
        ConnectionReport {
            index,
            local,
            start_secs: None,
            close_secs: None,
            close_reason: None,
            last_activity_secs: 0.0,
            idle_timeout_secs: 0.0,
            status: ConnectionStatus::NotStarted,
            ticket: false,
            resumed: false,
            zero_rtt_accepted: None,
            token: false,
            zero_rtt_packets: 0,
            zero_rtt_stream_bytes: 0,
            zero_rtt_packets_rejected: 0,
            metrics,
        }
    }
}

/// The event at which the server samples a connection for its history.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HistoryEvent {
    /// A resumed connection (ticket accepted) completed its handshake at the server.
    ResumptionComplete,
    /// The connection closed by idle timeout.
    IdleClose,
    /// The connection closed by CONNECTION_CLOSE (either side).
    ExplicitClose,
}

/// One sample for the server's history (paper 000: the congestion window at 0-RTT
/// resumptions and connection closes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistorySample {
    /// When, seconds from the run start.
    pub time_secs: f64,
    /// Which event.
    pub event: HistoryEvent,
    /// Connection number.
    pub connection: u64,
    /// Client address.
    pub client: String,
    /// Congestion window at the event, bytes.
    pub cwnd: u64,
    /// Smoothed RTT at the event, seconds.
    pub srtt_secs: f64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

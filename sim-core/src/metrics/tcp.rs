//! The TCP payload of [`crate::metrics::EndpointMetrics::Tcp`]: [`TcpMetrics`] = the
//! shared [`TransportMetrics`] + the TCP-only [`TcpExtras`] + the [`WorkloadMetrics`],
//! serialised as one flat object (shared keys first, then TCP's, then the workload's).
//! Pure data; `tcp/` fills it.

use crate::metrics::transport::TransportMetrics;
use crate::metrics::workload::WorkloadMetrics;
use serde::{Deserialize, Serialize};

/// What a TCP endpoint reports (client or server).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TcpMetrics {
    /// The metrics every transport reports (`bytes_sent`: datagram sizes, i.e. IP
    /// packets minus 28 B, the convention of `wire::tcp`; `pto_count`: RTO expirations).
    #[serde(flatten)]
    pub transport: TransportMetrics,
    /// The TCP-only ones.
    #[serde(flatten)]
    pub tcp: TcpExtras,
    /// The workload's.
    #[serde(flatten)]
    pub workload: WorkloadMetrics,
}

/// What only TCP reports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TcpExtras {
    /// `"none"`, `"1.2"` or `"1.3"`.
    pub tls: String,
    /// Three-way handshake completion (client: SYN-ACK received; server: its SYN-ACK
    /// acknowledged), seconds from the start.
    pub tcp_established_secs: Option<f64>,
    /// IP + TCP header and option bytes of every segment sent (the payload excluded).
    pub header_bytes_sent: u64,
    /// Segments sent without payload (pure ACKs, SYN, FIN).
    pub pure_acks_sent: u64,
    /// ACKs sent because the delayed-ACK timer expired.
    pub delayed_ack_timeouts: u64,
    /// SACK blocks sent (RFC 2018).
    pub sack_blocks_sent: u64,
    /// Fast-recovery episodes entered (RFC 6675 §5 / RFC 6582).
    pub fast_recoveries: u64,
    /// Largest RTO backoff exponent reached (RFC 6298 §5.5).
    pub max_rto_backoff: u32,
    /// SYN / SYN-ACK retransmissions.
    pub syn_retransmissions: u64,
    /// Segments found lost by RACK's time rule (RFC 8985 §6.2).
    #[serde(default)]
    pub rack_losses: u64,
    /// Lost retransmissions found without a timeout (RFC 8985 §6.2).
    #[serde(default)]
    pub lost_retransmissions: u64,
    /// Tail loss probes sent (RFC 8985 §7).
    #[serde(default)]
    pub tlp_probes: u64,
    /// Losses repaired by a retransmitted probe (RFC 8985 §7.4), each a reduction.
    #[serde(default)]
    pub tlp_recoveries: u64,
    /// Retransmission timeouts found spurious and undone (RFC 5682, RFC 3522).
    #[serde(default)]
    pub spurious_rtos: u64,
    /// D-SACK blocks received (RFC 2883).
    #[serde(default)]
    pub dsacks_received: u64,
    /// ECN use (`ecn = true` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<crate::metrics::transport::EcnReport>,
}

//! The SCTP payload of [`crate::metrics::EndpointMetrics::Sctp`]: [`SctpMetrics`] = the
//! shared [`TransportMetrics`] + the SCTP-only [`SctpExtras`] + the [`WorkloadMetrics`],
//! serialised as one flat object (pure data here; `sctp/` fills it).
//!
//! SCTP detects loss per DATA chunk, not per packet: `packets_lost` counts DATA chunks
//! declared lost (fast retransmit marks and T3-rtx expiries) and `pto_count` counts T3-rtx
//! expirations (RFC 9260 §6.3.3).

use crate::metrics::transport::TransportMetrics;
use crate::metrics::workload::WorkloadMetrics;
use serde::{Deserialize, Serialize};

/// What an SCTP endpoint reports.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SctpMetrics {
    /// The metrics every transport reports.
    #[serde(flatten)]
    pub transport: TransportMetrics,
    /// The SCTP-only ones.
    #[serde(flatten)]
    pub sctp: SctpExtras,
    /// The workload's.
    #[serde(flatten)]
    pub workload: WorkloadMetrics,
}

/// What only SCTP reports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SctpExtras {
    /// DATA chunks sent (first transmissions and retransmissions).
    pub data_chunks_sent: u64,
    /// DATA chunks sent again.
    pub chunks_retransmitted: u64,
    /// Fast retransmit events (RFC 9260 §7.2.4).
    pub fast_retransmits: u64,
    /// SACK chunks sent.
    pub sacks_sent: u64,
    /// Gap ack blocks sent over all SACKs.
    pub gap_blocks_sent: u64,
    /// Duplicate TSNs received.
    pub duplicate_tsns: u64,
    /// INIT / COOKIE-ECHO retransmissions.
    pub handshake_retransmits: u64,
    /// The retransmission timeout at the end, seconds.
    pub rto_end_secs: f64,
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::EndpointMetrics;

    /// The flat JSON form (`kind = "sctp"`, shared, SCTP and workload keys side by side)
    /// reads back to the same value.
    #[test]
    fn serde_round_trip_through_endpoint_metrics() {
        let m = EndpointMetrics::Sctp(Box::new(SctpMetrics {
            transport: TransportMetrics {
                role: "client".into(),
                handshake_secs: Some(0.2),
                completion_secs: Some(1.5),
                time_to_first_byte_secs: Some(0.4),
                goodput_bps: Some(8e6),
                stream_bytes_read: 1_500_000,
                bytes_sent: 4000,
                packets_sent: 40,
                packets_lost: 1,
                packets_retransmitted: 1,
                stream_bytes_retransmitted: 1452,
                spurious_losses: 0,
                duplicate_stream_bytes: 0,
                loss_ratio: 0.01,
                pto_count: 0,
                congestion_events: 1,
                cwnd_blocked_secs: 0.0,
                flow_control_blocked_secs: 0.0,
                bytes_in_flight_end: 0,
                cwnd_end: 4404,
                ssthresh_end: Some(6000),
                srtt_end_secs: 0.1,
                min_rtt_secs: 0.1,
                closed: false,
            },
            sctp: SctpExtras {
                data_chunks_sent: 30,
                chunks_retransmitted: 1,
                fast_retransmits: 1,
                sacks_sent: 2,
                gap_blocks_sent: 3,
                duplicate_tsns: 0,
                handshake_retransmits: 0,
                rto_end_secs: 1.0,
            },
            workload: WorkloadMetrics {
                stream_completion_secs: vec![Some(1.5), None],
                ..WorkloadMetrics::default()
            },
        }));
        let json = serde_json::to_string(&m).unwrap();
        assert!(
            json.starts_with("{\"kind\":\"sctp\",\"role\":\"client\""),
            "{json}"
        );
        assert!(json.contains("\"gap_blocks_sent\":3"));
        let back: EndpointMetrics = serde_json::from_str(&json).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.kind(), "sctp");
        assert_eq!(back.transport().unwrap().cwnd_end, 4404);
    }
}

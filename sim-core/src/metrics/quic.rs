//! The QUIC payload of [`crate::metrics::EndpointMetrics::Quic`]: [`QuicMetrics`] = the
//! shared [`TransportMetrics`] + the QUIC-only [`QuicExtras`] + the [`WorkloadMetrics`].
//!
//! These are pure data types, defined here in the low metrics layer (as the wire
//! descriptors are in [`crate::wire`]) so the shared run result can hold, clone, compare,
//! serialise and deserialise them without importing `quic/`; the QUIC code that fills them
//! lives in `quic/metrics.rs`.
//!
//! Serialised form: one flat JSON object whose keys and key order are those of the
//! original single QUIC metrics struct (shared, QUIC and workload keys interleave), so the
//! run output did not change when the struct was split. [`QuicMetrics`] converts to and
//! from that flat form ([`serde`]'s `from` / `into`).

use crate::metrics::transport::{EcnReport, TransportMetrics};
use crate::metrics::workload::{
    ConnectionReport, HistorySample, InitialWindowReport, PageReport, ReconnectsReport,
    VideoReport, WorkloadMetrics,
};
use serde::{Deserialize, Serialize};

/// What a QUIC endpoint reports (client or server; or the totals of a connection
/// sequence, with one report per connection in [`WorkloadMetrics::connections`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "QuicMetricsJson", into = "QuicMetricsJson")]
pub struct QuicMetrics {
    /// The metrics every transport reports.
    pub transport: TransportMetrics,
    /// The QUIC-only ones.
    pub quic: QuicExtras,
    /// The workload's.
    pub workload: WorkloadMetrics,
}

/// What only QUIC reports. Times are seconds from the connection start.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QuicExtras {
    /// Handshake confirmation (client: HANDSHAKE_DONE; server: same as completion;
    /// RFC 9001 §4.1.2).
    pub handshake_confirmed_secs: Option<f64>,
    /// UDP datagrams sent (several QUIC packets may be coalesced in one, RFC 9000 §12.2).
    pub datagrams_sent: u64,
    /// Persistent congestion declarations (RFC 9002 §7.6).
    pub persistent_congestion: u64,
    /// Time the server had stream data but was at its anti-amplification limit
    /// (RFC 9000 §8.1).
    pub amplification_blocked_secs: f64,
    /// DATA_BLOCKED frames sent.
    pub data_blocked_sent: u64,
    /// STREAM_DATA_BLOCKED frames sent.
    pub stream_data_blocked_sent: u64,
    /// MAX_DATA frames sent.
    pub max_data_sent: u64,
    /// MAX_STREAM_DATA frames sent.
    pub max_stream_data_sent: u64,
    /// Stream limit updates the receive-window allowances decided (summed over streams;
    /// each is sent as a MAX_STREAM_DATA frame unless the stream completed first).
    pub stream_window_updates: u64,
    /// Connection limit updates decided (sent as MAX_DATA).
    pub connection_window_updates: u64,
    /// Times a stream receive window grew (summed over streams; 0 with the fixed-window
    /// allowances).
    pub stream_window_increases: u64,
    /// Times the connection receive window grew.
    pub connection_window_increases: u64,
    /// The largest stream receive window at the end, in bytes (0 without streams).
    pub stream_window_max: u64,
    /// The connection receive window at the end, in bytes.
    pub connection_window_end: u64,
    /// Connection migrations (RFC 9000 §9), oldest first; empty without `migration`.
    pub migrations: Vec<MigrationMetrics>,
    /// ECN use (`ecn = true` only).
    pub ecn: Option<EcnReport>,
}

/// One connection migration as an endpoint saw it (RFC 9000 §9; paper 004). Times are
/// seconds; `switch_secs` from the connection start.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MigrationMetrics {
    /// The window policy (`reset`, `keep`, `rtt_ratio`).
    pub policy: String,
    /// `ip` or `port` (NAT rebinding).
    pub address_change: String,
    /// When this endpoint switched paths (client: the handover; server: the first
    /// non-probing packet from the new address).
    pub switch_secs: f64,
    /// `validating`, `validated`, `fallback` (server back on the old address) or `failed`
    /// (no path left: closed).
    pub outcome: String,
    /// From the switch to this endpoint's own validation of the new path.
    pub validation_secs: Option<f64>,
    /// Minimum RTT on the old path (`RTT_old` of paper 004).
    pub rtt_old_min_secs: Option<f64>,
    /// PATH_CHALLENGE → PATH_RESPONSE round trip on the new path (`RTT_new`).
    pub rtt_new_secs: Option<f64>,
    /// Smoothed RTT just before the switch.
    pub srtt_before_secs: f64,
    /// Smoothed RTT just after the window policy applied (at validation).
    pub srtt_after_secs: Option<f64>,
    /// Minimum RTT just after the window policy applied (`None`: no sample, as after a
    /// reset of the estimator).
    pub rtt_min_after_secs: Option<f64>,
    /// Congestion window just before the switch, bytes.
    pub cwnd_before: u64,
    /// Congestion window just after the window policy applied (at validation), bytes.
    pub cwnd_after: Option<u64>,
    /// The interval the handover throughput is measured over.
    pub throughput_window_secs: f64,
    /// Stream data received in `[switch, switch + throughput_window]`, bit/s.
    pub throughput_bps: f64,
    /// Stream bytes of packets sent before the switch and declared lost after it.
    pub bytes_lost: u64,
    /// Server: bytes sent to the new address before it was validated (at most 3x
    /// `unvalidated_bytes_received`, RFC 9000 §8.1).
    pub unvalidated_bytes_sent: u64,
    /// Server: bytes received from the new address before it was validated.
    pub unvalidated_bytes_received: u64,
}

/// The flat serialised form of [`QuicMetrics`]: every key in the order of the run output.
#[derive(Clone, Serialize, Deserialize)]
struct QuicMetricsJson {
    role: String,
    handshake_secs: Option<f64>,
    handshake_confirmed_secs: Option<f64>,
    completion_secs: Option<f64>,
    time_to_first_byte_secs: Option<f64>,
    goodput_bps: Option<f64>,
    stream_bytes_read: u64,
    stream_completion_secs: Vec<Option<f64>>,
    datagrams_sent: u64,
    bytes_sent: u64,
    packets_sent: u64,
    packets_lost: u64,
    packets_retransmitted: u64,
    stream_bytes_retransmitted: u64,
    spurious_losses: u64,
    duplicate_stream_bytes: u64,
    loss_ratio: f64,
    pto_count: u64,
    congestion_events: u64,
    persistent_congestion: u64,
    cwnd_blocked_secs: f64,
    flow_control_blocked_secs: f64,
    amplification_blocked_secs: f64,
    bytes_in_flight_end: u64,
    cwnd_end: u64,
    ssthresh_end: Option<u64>,
    srtt_end_secs: f64,
    min_rtt_secs: f64,
    data_blocked_sent: u64,
    stream_data_blocked_sent: u64,
    max_data_sent: u64,
    max_stream_data_sent: u64,
    #[serde(default)]
    stream_window_updates: u64,
    #[serde(default)]
    connection_window_updates: u64,
    #[serde(default)]
    stream_window_increases: u64,
    #[serde(default)]
    connection_window_increases: u64,
    #[serde(default)]
    stream_window_max: u64,
    #[serde(default)]
    connection_window_end: u64,
    closed: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    connections: Vec<ConnectionReport>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    history: Vec<HistorySample>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    initial_window: Option<InitialWindowReport>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    migrations: Vec<MigrationMetrics>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ecn: Option<EcnReport>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    page: Option<PageReport>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    video: Option<VideoReport>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reconnects: Option<ReconnectsReport>,
}

impl From<QuicMetrics> for QuicMetricsJson {
    fn from(m: QuicMetrics) -> Self {
        let QuicMetrics {
            transport: t,
            quic: q,
            workload: w,
        } = m;
        QuicMetricsJson {
            role: t.role,
            handshake_secs: t.handshake_secs,
            handshake_confirmed_secs: q.handshake_confirmed_secs,
            completion_secs: t.completion_secs,
            time_to_first_byte_secs: t.time_to_first_byte_secs,
            goodput_bps: t.goodput_bps,
            stream_bytes_read: t.stream_bytes_read,
            stream_completion_secs: w.stream_completion_secs,
            datagrams_sent: q.datagrams_sent,
            bytes_sent: t.bytes_sent,
            packets_sent: t.packets_sent,
            packets_lost: t.packets_lost,
            packets_retransmitted: t.packets_retransmitted,
            stream_bytes_retransmitted: t.stream_bytes_retransmitted,
            spurious_losses: t.spurious_losses,
            duplicate_stream_bytes: t.duplicate_stream_bytes,
            loss_ratio: t.loss_ratio,
            pto_count: t.pto_count,
            congestion_events: t.congestion_events,
            persistent_congestion: q.persistent_congestion,
            cwnd_blocked_secs: t.cwnd_blocked_secs,
            flow_control_blocked_secs: t.flow_control_blocked_secs,
            amplification_blocked_secs: q.amplification_blocked_secs,
            bytes_in_flight_end: t.bytes_in_flight_end,
            cwnd_end: t.cwnd_end,
            ssthresh_end: t.ssthresh_end,
            srtt_end_secs: t.srtt_end_secs,
            min_rtt_secs: t.min_rtt_secs,
            data_blocked_sent: q.data_blocked_sent,
            stream_data_blocked_sent: q.stream_data_blocked_sent,
            max_data_sent: q.max_data_sent,
            max_stream_data_sent: q.max_stream_data_sent,
            stream_window_updates: q.stream_window_updates,
            connection_window_updates: q.connection_window_updates,
            stream_window_increases: q.stream_window_increases,
            connection_window_increases: q.connection_window_increases,
            stream_window_max: q.stream_window_max,
            connection_window_end: q.connection_window_end,
            closed: t.closed,
            connections: w.connections,
            history: w.history,
            initial_window: w.initial_window,
            migrations: q.migrations,
            ecn: q.ecn,
            page: w.page,
            video: w.video,
            reconnects: w.reconnects,
        }
    }
}

impl From<QuicMetricsJson> for QuicMetrics {
    fn from(j: QuicMetricsJson) -> Self {
        QuicMetrics {
            transport: TransportMetrics {
                role: j.role,
                handshake_secs: j.handshake_secs,
                completion_secs: j.completion_secs,
                time_to_first_byte_secs: j.time_to_first_byte_secs,
                goodput_bps: j.goodput_bps,
                stream_bytes_read: j.stream_bytes_read,
                bytes_sent: j.bytes_sent,
                packets_sent: j.packets_sent,
                packets_lost: j.packets_lost,
                packets_retransmitted: j.packets_retransmitted,
                stream_bytes_retransmitted: j.stream_bytes_retransmitted,
                spurious_losses: j.spurious_losses,
                duplicate_stream_bytes: j.duplicate_stream_bytes,
                loss_ratio: j.loss_ratio,
                pto_count: j.pto_count,
                congestion_events: j.congestion_events,
                cwnd_blocked_secs: j.cwnd_blocked_secs,
                flow_control_blocked_secs: j.flow_control_blocked_secs,
                bytes_in_flight_end: j.bytes_in_flight_end,
                cwnd_end: j.cwnd_end,
                ssthresh_end: j.ssthresh_end,
                srtt_end_secs: j.srtt_end_secs,
                min_rtt_secs: j.min_rtt_secs,
                closed: j.closed,
            },
            quic: QuicExtras {
                handshake_confirmed_secs: j.handshake_confirmed_secs,
                datagrams_sent: j.datagrams_sent,
                persistent_congestion: j.persistent_congestion,
                amplification_blocked_secs: j.amplification_blocked_secs,
                data_blocked_sent: j.data_blocked_sent,
                stream_data_blocked_sent: j.stream_data_blocked_sent,
                max_data_sent: j.max_data_sent,
                max_stream_data_sent: j.max_stream_data_sent,
                stream_window_updates: j.stream_window_updates,
                connection_window_updates: j.connection_window_updates,
                stream_window_increases: j.stream_window_increases,
                connection_window_increases: j.connection_window_increases,
                stream_window_max: j.stream_window_max,
                connection_window_end: j.connection_window_end,
                migrations: j.migrations,
                ecn: j.ecn,
            },
            workload: WorkloadMetrics {
                stream_completion_secs: j.stream_completion_secs,
                connections: j.connections,
                history: j.history,
                initial_window: j.initial_window,
                page: j.page,
                video: j.video,
                reconnects: j.reconnects,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::EndpointMetrics;

    fn sample() -> QuicMetrics {
        let j: QuicMetricsJson = serde_json::from_str(
            r#"{"role":"client","handshake_secs":0.02,"handshake_confirmed_secs":0.04,
            "completion_secs":1.5,"time_to_first_byte_secs":0.06,"goodput_bps":8e6,
            "stream_bytes_read":1500000,"stream_completion_secs":[1.5,null],
            "datagrams_sent":10,"bytes_sent":11,"packets_sent":12,"packets_lost":13,
            "packets_retransmitted":14,"stream_bytes_retransmitted":15,"spurious_losses":16,
            "duplicate_stream_bytes":17,"loss_ratio":0.25,"pto_count":18,
            "congestion_events":19,"persistent_congestion":20,"cwnd_blocked_secs":0.5,
            "flow_control_blocked_secs":0.25,"amplification_blocked_secs":0.125,
            "bytes_in_flight_end":21,"cwnd_end":22,"ssthresh_end":null,"srtt_end_secs":0.03,
            "min_rtt_secs":0.02,"data_blocked_sent":23,"stream_data_blocked_sent":24,
            "max_data_sent":25,"max_stream_data_sent":26,"closed":false}"#,
        )
        .unwrap();
        QuicMetrics::from(j)
    }

    /// The run output's keys, in order: the split into shared, QUIC and workload parts
    /// must not change them.
    #[test]
    fn flat_keys_in_output_order() {
        let m = EndpointMetrics::Quic(Box::new(sample()));
        assert_eq!(m.kind(), "quic");
        let text = serde_json::to_string(&m).unwrap();
        let keys: Vec<&str> = text
            .split(['{', ','])
            .filter_map(|s| s.strip_prefix('"')?.split('"').next())
            .collect();
        assert_eq!(
            keys,
            [
                "kind",
                "role",
                "handshake_secs",
                "handshake_confirmed_secs",
                "completion_secs",
                "time_to_first_byte_secs",
                "goodput_bps",
                "stream_bytes_read",
                "stream_completion_secs",
                "datagrams_sent",
                "bytes_sent",
                "packets_sent",
                "packets_lost",
                "packets_retransmitted",
                "stream_bytes_retransmitted",
                "spurious_losses",
                "duplicate_stream_bytes",
                "loss_ratio",
                "pto_count",
                "congestion_events",
                "persistent_congestion",
                "cwnd_blocked_secs",
                "flow_control_blocked_secs",
                "amplification_blocked_secs",
                "bytes_in_flight_end",
                "cwnd_end",
                "ssthresh_end",
                "srtt_end_secs",
                "min_rtt_secs",
                "data_blocked_sent",
                "stream_data_blocked_sent",
                "max_data_sent",
                "max_stream_data_sent",
                "stream_window_updates",
                "connection_window_updates",
                "stream_window_increases",
                "connection_window_increases",
                "stream_window_max",
                "connection_window_end",
                "closed",
            ]
        );
        let back: EndpointMetrics = serde_json::from_str(&text).unwrap();
        assert_eq!(back, m);
        let t = m.transport().unwrap();
        assert_eq!((t.packets_sent, t.pto_count, t.cwnd_end), (12, 18, 22));
        let q = m.quic().unwrap();
        assert_eq!(
            (q.quic.datagrams_sent, q.quic.max_stream_data_sent),
            (10, 26)
        );
        assert_eq!(
            m.workload().unwrap().stream_completion_secs,
            [Some(1.5), None]
        );
    }
}

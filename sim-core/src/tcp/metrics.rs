//! How a [`TcpConnection`] fills its [`TcpMetrics`].

use super::connection::TcpConnection;
use crate::config::tcp::TlsVersion;
use crate::metrics::tcp::{TcpExtras, TcpMetrics};
use crate::metrics::transport::TransportMetrics;
use crate::metrics::workload::WorkloadMetrics;
use crate::time::SimTime;
use crate::transport::stream::Side;

/// The metrics of `c` at `now`, its workload having completed at `completed_at`.
pub fn connection_metrics(
    c: &TcpConnection,
    completed_at: Option<SimTime>,
    now: SimTime,
) -> TcpMetrics {
    let since = |t: Option<SimTime>| t.map(|t| t.saturating_since(c.started_at()).as_secs_f64());
    let st = &c.stats;
    let side = c.side();
    // Request streams: the client's (odd IDs, RFC 9113 §5.1.1), in order.
    let times = match side {
        Side::Client => c.read_complete_times(),
        Side::Server => c.send_complete_times(),
    };
    let stream_completion_secs = times
        .iter()
        .filter(|(id, _)| *id % 2 == 1)
        .map(|(_, &t)| since(Some(t)))
        .collect();
    let completion_secs = since(completed_at);
    let goodput_bps = match (side, completion_secs) {
        (Side::Client, Some(t)) if t > 0.0 => Some(st.app_bytes_read as f64 * 8.0 / t),
        _ => None,
    };
    let (cw, rw) = c.blocked_until(now);
    TcpMetrics {
        transport: TransportMetrics {
            role: match side {
                Side::Client => "client".into(),
                Side::Server => "server".into(),
            },
            handshake_secs: since(c.connected_at()),
            completion_secs,
            time_to_first_byte_secs: match side {
                Side::Client => since(c.first_byte_at()),
                Side::Server => None,
            },
            goodput_bps,
            stream_bytes_read: st.app_bytes_read,
            bytes_sent: st.bytes_sent,
            packets_sent: st.segments_sent,
            packets_lost: st.segments_lost,
            packets_retransmitted: st.segments_retransmitted,
            stream_bytes_retransmitted: st.bytes_retransmitted,
            spurious_losses: st.spurious_losses,
            duplicate_stream_bytes: st.duplicate_bytes,
            loss_ratio: if st.segments_sent > 0 {
                st.segments_lost as f64 / st.segments_sent as f64
            } else {
                0.0
            },
            pto_count: st.rto_count,
            congestion_events: st.congestion_events,
            cwnd_blocked_secs: cw.as_secs_f64(),
            flow_control_blocked_secs: rw.as_secs_f64(),
            bytes_in_flight_end: c.bytes_in_flight(),
            cwnd_end: c.cc().window(),
            ssthresh_end: c.cc().ssthresh(),
            srtt_end_secs: c.rtt().smoothed_rtt().as_secs_f64(),
            min_rtt_secs: c.rtt().min_rtt().as_secs_f64(),
            closed: c.closed().is_some(),
        },
        tcp: TcpExtras {
            tls: match c.config().tls {
                TlsVersion::None => "none",
                TlsVersion::Tls12 => "1.2",
                TlsVersion::Tls13 => "1.3",
            }
            .to_string(),
            tcp_established_secs: since(c.established_at()),
            header_bytes_sent: st.header_bytes_sent,
            pure_acks_sent: st.pure_acks_sent,
            delayed_ack_timeouts: st.delayed_ack_timeouts,
            sack_blocks_sent: st.sack_blocks_sent,
            fast_recoveries: st.fast_recoveries,
            max_rto_backoff: st.max_backoff,
            syn_retransmissions: st.syn_retransmissions,
            rack_losses: st.rack_losses,
            lost_retransmissions: st.lost_retransmissions,
            tlp_probes: st.tlp_probes,
            tlp_recoveries: st.tlp_recoveries,
            spurious_rtos: st.spurious_rtos,
            dsacks_received: st.dsacks_received,
            ecn: c.config().ecn.then(|| c.ecn_report()),
        },
        workload: WorkloadMetrics {
            stream_completion_secs,
            ..WorkloadMetrics::default()
        },
    }
}

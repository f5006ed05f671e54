//! QUIC metrics: how a connection fills [`QuicMetrics`] (the shared
//! [`crate::metrics::TransportMetrics`], the QUIC-only [`QuicExtras`] and the
//! [`crate::metrics::WorkloadMetrics`]), and the totals of a connection sequence.
//!
//! The types are pure data defined in the low metrics layer ([`crate::metrics::quic`]) so
//! the shared run result carries them without importing this module; they are re-exported
//! here for QUIC code.

use super::config::QuicConfig;
use super::connection::{Connection, Role};
pub use crate::metrics::quic::{MigrationMetrics, QuicExtras, QuicMetrics};
use crate::metrics::transport::TransportMetrics;
use crate::metrics::workload::{ConnectionReport, WorkloadMetrics};
use crate::time::SimTime;

/// The [`QuicMetrics`] of connection `c` at `now`, its workload having completed at
/// `completed_at` (times are relative to the connection's start).
pub fn connection_metrics(
    c: &Connection,
    completed_at: Option<SimTime>,
    now: SimTime,
) -> QuicMetrics {
    let secs_since_start =
        |t: Option<SimTime>| t.map(|t| t.saturating_since(c.started_at()).as_secs_f64());
    let st = &c.stats;
    let rs = c.recovery().stats();
    let rtt = c.recovery().rtt();
    let (cw, fc, amp) = c.blocked_times(now);
    let role = c.role();
    let mut ids: Vec<u64> = c
        .streams()
        .keys()
        .copied()
        .filter(|id| id % 4 == 0)
        .collect();
    ids.sort_unstable();
    let stream_completion_secs = ids
        .iter()
        .map(|id| {
            let s = &c.streams()[id];
            let t = match role {
                Role::Client => s.recv_complete_at,
                Role::Server => s.send_complete_at,
            };
            secs_since_start(t)
        })
        .collect();
    let first_byte = match role {
        Role::Client => c.streams().values().filter_map(|s| s.first_byte_at).min(),
        Role::Server => None,
    };
    let completion_secs = secs_since_start(completed_at);
    let goodput_bps = match (role, completion_secs) {
        (Role::Client, Some(t)) if t > 0.0 => Some(st.stream_bytes_read as f64 * 8.0 / t),
        _ => None,
    };
    QuicMetrics {
        transport: TransportMetrics {
            role: match role {
                Role::Client => "client".into(),
                Role::Server => "server".into(),
            },
            handshake_secs: secs_since_start(c.handshake_complete_at),
            completion_secs,
            time_to_first_byte_secs: secs_since_start(first_byte),
            goodput_bps,
            stream_bytes_read: st.stream_bytes_read,
            bytes_sent: st.bytes_sent,
            packets_sent: st.packets_sent,
            packets_lost: st.packets_lost,
            packets_retransmitted: st.packets_retransmitted,
            stream_bytes_retransmitted: st.stream_bytes_retransmitted,
            spurious_losses: rs.spurious_losses,
            duplicate_stream_bytes: st.duplicate_stream_bytes,
            loss_ratio: if st.packets_sent > 0 {
                st.packets_lost as f64 / st.packets_sent as f64
            } else {
                0.0
            },
            pto_count: rs.ptos,
            congestion_events: rs.congestion_events,
            cwnd_blocked_secs: cw.as_secs_f64(),
            flow_control_blocked_secs: fc.as_secs_f64(),
            bytes_in_flight_end: c.recovery().bytes_in_flight(),
            cwnd_end: c.recovery().cwnd(),
            ssthresh_end: c.recovery().cc().ssthresh(),
            srtt_end_secs: rtt.smoothed_rtt().as_secs_f64(),
            min_rtt_secs: rtt.min_rtt().as_secs_f64(),
            closed: c.is_closed(),
        },
        quic: QuicExtras {
            handshake_confirmed_secs: secs_since_start(c.handshake_confirmed_at),
            datagrams_sent: st.datagrams_sent,
            persistent_congestion: rs.persistent_congestion,
            amplification_blocked_secs: amp.as_secs_f64(),
            data_blocked_sent: st.data_blocked_sent,
            stream_data_blocked_sent: st.stream_data_blocked_sent,
            max_data_sent: st.max_data_sent,
            max_stream_data_sent: st.max_stream_data_sent,
            migrations: migration_metrics(c),
            ecn: c.config().ecn.then(|| {
                let v = c.ecn();
                crate::metrics::transport::EcnReport {
                    ect_sent: v.sent_ect0.iter().sum(),
                    ce_received: c.ecn_received().ce,
                    ce_signals: v.ce_increases,
                    congestion_events: rs.ecn_congestion_events,
                    disabled: v.failed,
                }
            }),
            stream_window_updates: c.streams().values().map(|s| s.recv_fc.updates).sum(),
            connection_window_updates: c.recv_flow().updates,
            stream_window_increases: c
                .streams()
                .values()
                .map(|s| s.recv_fc.allowance.increases())
                .sum(),
            connection_window_increases: c.recv_flow().allowance.increases(),
            stream_window_max: c
                .streams()
                .values()
                .map(|s| s.recv_fc.allowance.window())
                .max()
                .unwrap_or(0),
            connection_window_end: c.recv_flow().allowance.window(),
        },
        workload: WorkloadMetrics {
            stream_completion_secs,
            connections: Vec::new(),
            history: Vec::new(),
            initial_window: None,
            page: None,
            video: None,
            reconnects: None,
        },
    }
}

/// One [`MigrationMetrics`] per migration of `c` (none without `migration`).
fn migration_metrics(c: &Connection) -> Vec<MigrationMetrics> {
    let Some(m) = c.migration() else {
        return Vec::new();
    };
    let window = m.config.throughput_window;
    let amp = c.path().amplification;
    let last = m.records.len().saturating_sub(1);
    m.records
        .iter()
        .enumerate()
        .map(|(k, r)| {
            // A server still validating its last new path: the live counts.
            let (sent, received) = if k == last
                && c.role() == Role::Server
                && r.outcome == crate::quic::migration::Outcome::Validating
            {
                (amp.sent(), amp.received())
            } else {
                (r.unvalidated_sent, r.unvalidated_received)
            };
            MigrationMetrics {
                policy: m.config.policy.name().to_string(),
                address_change: if r.port_only { "port" } else { "ip" }.to_string(),
                switch_secs: r.switched_at.saturating_since(c.started_at()).as_secs_f64(),
                outcome: r.outcome.name().to_string(),
                validation_secs: r
                    .validated_at
                    .map(|t| t.saturating_since(r.switched_at).as_secs_f64()),
                rtt_old_min_secs: r.min_rtt_old.map(|d| d.as_secs_f64()),
                rtt_new_secs: r.rtt_new.map(|d| d.as_secs_f64()),
                srtt_before_secs: r.srtt_before.as_secs_f64(),
                srtt_after_secs: r.srtt_after.map(|d| d.as_secs_f64()),
                rtt_min_after_secs: r.min_rtt_after.map(|d| d.as_secs_f64()),
                cwnd_before: r.cwnd_before,
                cwnd_after: r.cwnd_after,
                throughput_window_secs: window.as_secs_f64(),
                throughput_bps: r.window_bytes as f64 * 8.0 / window.as_secs_f64(),
                bytes_lost: r.bytes_lost,
                unvalidated_bytes_sent: sent,
                unvalidated_bytes_received: received,
            }
        })
        .collect()
}

/// The metrics of a connection sequence at one side (`docs/lifecycle.md`): the last
/// connection's end state, the first one's handshake and first byte, counters summed over
/// the connections, completion over the whole sequence (when `all_completed`), and one
/// [`ConnectionReport`] per connection.
pub(crate) fn totals(
    role: Role,
    reports: Vec<ConnectionReport>,
    all_completed: bool,
) -> QuicMetrics {
    // A QUIC sequence's reports are QUIC connections' (`quic/stream_transport.rs`).
    let quics: Vec<&QuicMetrics> = reports
        .iter()
        .map(|r| r.metrics.quic().expect("a QUIC connection's report"))
        .collect();
    let mut m = match quics.last() {
        Some(r) => (*r).clone(),
        None => {
            let c = Connection::new(role, QuicConfig::default());
            connection_metrics(&c, None, SimTime::ZERO)
        }
    };
    if let Some(first) = quics.first() {
        m.transport.handshake_secs = first.transport.handshake_secs;
        m.quic.handshake_confirmed_secs = first.quic.handshake_confirmed_secs;
        m.transport.time_to_first_byte_secs = first.transport.time_to_first_byte_secs;
    }
    let sum = |f: fn(&QuicMetrics) -> u64| quics.iter().map(|r| f(r)).sum::<u64>();
    let sumf = |f: fn(&QuicMetrics) -> f64| quics.iter().map(|r| f(r)).sum::<f64>();
    let t = &mut m.transport;
    t.stream_bytes_read = sum(|m| m.transport.stream_bytes_read);
    t.bytes_sent = sum(|m| m.transport.bytes_sent);
    t.packets_sent = sum(|m| m.transport.packets_sent);
    t.packets_lost = sum(|m| m.transport.packets_lost);
    t.packets_retransmitted = sum(|m| m.transport.packets_retransmitted);
    t.stream_bytes_retransmitted = sum(|m| m.transport.stream_bytes_retransmitted);
    t.spurious_losses = sum(|m| m.transport.spurious_losses);
    t.duplicate_stream_bytes = sum(|m| m.transport.duplicate_stream_bytes);
    t.pto_count = sum(|m| m.transport.pto_count);
    t.congestion_events = sum(|m| m.transport.congestion_events);
    t.cwnd_blocked_secs = sumf(|m| m.transport.cwnd_blocked_secs);
    t.flow_control_blocked_secs = sumf(|m| m.transport.flow_control_blocked_secs);
    t.loss_ratio = if t.packets_sent > 0 {
        t.packets_lost as f64 / t.packets_sent as f64
    } else {
        0.0
    };
    t.completion_secs = None;
    t.goodput_bps = None;
    if all_completed && !reports.is_empty() {
        let start = reports[0].start_secs.unwrap_or(0.0);
        let end = reports
            .iter()
            .filter_map(|r| Some(r.start_secs? + r.metrics.transport().completion_secs?))
            .fold(start, f64::max);
        let total = end - start;
        t.completion_secs = Some(total);
        if role == Role::Client && total > 0.0 {
            t.goodput_bps = Some(t.stream_bytes_read as f64 * 8.0 / total);
        }
    }
    t.closed = reports.iter().all(|r| r.close_secs.is_some());
    let q = &mut m.quic;
    q.datagrams_sent = sum(|m| m.quic.datagrams_sent);
    q.persistent_congestion = sum(|m| m.quic.persistent_congestion);
    q.data_blocked_sent = sum(|m| m.quic.data_blocked_sent);
    q.stream_data_blocked_sent = sum(|m| m.quic.stream_data_blocked_sent);
    q.max_data_sent = sum(|m| m.quic.max_data_sent);
    q.max_stream_data_sent = sum(|m| m.quic.max_stream_data_sent);
    q.amplification_blocked_secs = sumf(|m| m.quic.amplification_blocked_secs);
    q.migrations = quics
        .iter()
        .flat_map(|r| r.quic.migrations.iter().cloned())
        .collect();
    q.stream_window_updates = sum(|m| m.quic.stream_window_updates);
    q.connection_window_updates = sum(|m| m.quic.connection_window_updates);
    q.stream_window_increases = sum(|m| m.quic.stream_window_increases);
    q.connection_window_increases = sum(|m| m.quic.connection_window_increases);
    // Window sizes: the last connection's (each connection starts at the initial windows).
    m.workload.stream_completion_secs = Vec::new();
    m.workload.connections = reports;
    m
}

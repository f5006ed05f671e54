//! The serde form of [`AppConfig`] (what `resolved_config` shows and `to_toml` writes):
//! for now still the flow-kind spelling (`kind = "quic_bulk"` with the workload keys among
//! the QUIC keys, `kind = "quic_connections"` with them under `quic`).

use super::quic::{Profile, QuicConfig, SchedulerKind};
use super::transport::{Sides, TransportConfig};
use super::workload::{BulkSpec, ConnectionSpec, SequenceSpec, WorkloadConfig};
use super::{AppConfig, Direction, TransportFlow};
use crate::cc::CcParams;
use crate::time::{SimDuration, SimTime};
use crate::transport::allowance::AllowanceKind;
use crate::units::{Bytes, Rate};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(super) enum AppRepr {
    Cbr {
        direction: Direction,
        rate: Rate,
        size: Bytes,
        start: SimTime,
        count: u64,
    },
    QuicBulk(FlatQuic),
    QuicConnections {
        quic: FlatQuic,
        connections: Vec<ConnectionSpec>,
    },
}

/// A [`QuicConfig`] with the workload keys among its keys, in the key order of the
/// flow-kind spelling.
#[derive(Serialize, Deserialize)]
pub(super) struct FlatQuic {
    max_udp_payload: u64,
    cid_len: u64,
    client_hello_size: u64,
    server_hello_size: u64,
    server_handshake_size: u64,
    client_finished_size: u64,
    initial_rtt: SimDuration,
    max_ack_delay: SimDuration,
    ack_delay_exponent: u32,
    ack_eliciting_threshold: u64,
    max_ack_ranges: usize,
    pto_probes: u8,
    packet_threshold: u64,
    idle_timeout: SimDuration,
    #[serde(flatten)]
    cc: CcParams,
    profile: Profile,
    stream_window: u64,
    connection_window: u64,
    max_streams_bidi: u64,
    allowance: AllowanceKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    read_rate: Option<Rate>,
    scheduler: SchedulerKind,
    streams: u64,
    bytes: u64,
    request_size: u64,
    resumption_client_hello_size: u64,
    resumption_server_handshake_size: u64,
    zero_rtt: bool,
    reject_zero_rtt: bool,
    address_token_size: u64,
}

impl FlatQuic {
    fn new(q: QuicConfig, w: BulkSpec) -> Self {
        FlatQuic {
            max_udp_payload: q.max_udp_payload,
            cid_len: q.cid_len,
            client_hello_size: q.client_hello_size,
            server_hello_size: q.server_hello_size,
            server_handshake_size: q.server_handshake_size,
            client_finished_size: q.client_finished_size,
            initial_rtt: q.initial_rtt,
            max_ack_delay: q.max_ack_delay,
            ack_delay_exponent: q.ack_delay_exponent,
            ack_eliciting_threshold: q.ack_eliciting_threshold,
            max_ack_ranges: q.max_ack_ranges,
            pto_probes: q.pto_probes,
            packet_threshold: q.packet_threshold,
            idle_timeout: q.idle_timeout,
            cc: q.cc,
            profile: q.profile,
            stream_window: q.stream_window,
            connection_window: q.connection_window,
            max_streams_bidi: q.max_streams_bidi,
            allowance: q.allowance,
            read_rate: w.read_rate,
            scheduler: q.scheduler,
            streams: w.streams,
            bytes: w.bytes,
            request_size: w.request_size,
            resumption_client_hello_size: q.resumption_client_hello_size,
            resumption_server_handshake_size: q.resumption_server_handshake_size,
            zero_rtt: q.zero_rtt,
            reject_zero_rtt: q.reject_zero_rtt,
            address_token_size: q.address_token_size,
        }
    }

    fn split(self) -> (QuicConfig, BulkSpec) {
        let q = QuicConfig {
            max_udp_payload: self.max_udp_payload,
            cid_len: self.cid_len,
            client_hello_size: self.client_hello_size,
            server_hello_size: self.server_hello_size,
            server_handshake_size: self.server_handshake_size,
            client_finished_size: self.client_finished_size,
            initial_rtt: self.initial_rtt,
            max_ack_delay: self.max_ack_delay,
            ack_delay_exponent: self.ack_delay_exponent,
            ack_eliciting_threshold: self.ack_eliciting_threshold,
            max_ack_ranges: self.max_ack_ranges,
            pto_probes: self.pto_probes,
            packet_threshold: self.packet_threshold,
            idle_timeout: self.idle_timeout,
            cc: self.cc,
            profile: self.profile,
            stream_window: self.stream_window,
            connection_window: self.connection_window,
            max_streams_bidi: self.max_streams_bidi,
            allowance: self.allowance,
            scheduler: self.scheduler,
            resumption_client_hello_size: self.resumption_client_hello_size,
            resumption_server_handshake_size: self.resumption_server_handshake_size,
            zero_rtt: self.zero_rtt,
            reject_zero_rtt: self.reject_zero_rtt,
            address_token_size: self.address_token_size,
        };
        let w = BulkSpec {
            bytes: self.bytes,
            streams: self.streams,
            request_size: self.request_size,
            read_rate: self.read_rate,
        };
        (q, w)
    }
}

impl From<AppConfig> for AppRepr {
    fn from(a: AppConfig) -> Self {
        match a {
            AppConfig::Cbr {
                direction,
                rate,
                size,
                start,
                count,
            } => AppRepr::Cbr {
                direction,
                rate,
                size,
                start,
                count,
            },
            AppConfig::Transport(TransportFlow {
                transport: TransportConfig::Quic(Sides { client, .. }),
                workload,
            }) => match workload {
                WorkloadConfig::Bulk(b) => AppRepr::QuicBulk(FlatQuic::new(client, b)),
                WorkloadConfig::Sequence(s) => AppRepr::QuicConnections {
                    quic: FlatQuic::new(
                        client,
                        BulkSpec {
                            bytes: s.bytes,
                            streams: s.streams,
                            request_size: s.request_size,
                            read_rate: None,
                        },
                    ),
                    connections: s.connections,
                },
            },
        }
    }
}

impl From<AppRepr> for AppConfig {
    fn from(r: AppRepr) -> Self {
        match r {
            AppRepr::Cbr {
                direction,
                rate,
                size,
                start,
                count,
            } => AppConfig::Cbr {
                direction,
                rate,
                size,
                start,
                count,
            },
            AppRepr::QuicBulk(f) => {
                let (q, w) = f.split();
                AppConfig::Transport(TransportFlow {
                    transport: TransportConfig::quic(q),
                    workload: WorkloadConfig::Bulk(w),
                })
            }
            AppRepr::QuicConnections { quic, connections } => {
                let (q, w) = quic.split();
                AppConfig::Transport(TransportFlow {
                    transport: TransportConfig::quic(q),
                    workload: WorkloadConfig::Sequence(SequenceSpec {
                        bytes: w.bytes,
                        streams: w.streams,
                        request_size: w.request_size,
                        connections,
                    }),
                })
            }
        }
    }
}

//! Workload specs of the flow kinds: pure configuration data, owned by the config layer
//! so that [`crate::config::AppConfig`] names no protocol module. Today: one connection of
//! a `quic_connections` sequence ([`ConnectionSpec`]) and how it ends ([`CloseMode`]);
//! the workloads that run them live above (`quic/lifecycle.rs`).

use crate::config::quic::QuicConfig;
use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

/// How a connection ends once its workload is complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CloseMode {
    /// The client sends CONNECTION_CLOSE as soon as it has read every response (RFC 9000
    /// §10.2). Default.
    #[default]
    Explicit,
    /// The client stays silent and both ends close at the idle timeout (RFC 9000 §10.1).
    Idle,
}

/// One connection of a `quic_connections` flow, resolved (every field set).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnectionSpec {
    /// Absolute start time. When unset, the connection starts `gap` after the previous
    /// one ended (the first: `gap` after time zero).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<SimTime>,
    /// Idle gap after the previous connection ended at the client (CONNECTION_CLOSE sent
    /// or received, or idle timeout); used when `start` is unset (unset too: 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<SimDuration>,
    /// Resume with the session ticket of an earlier connection, if the client has one
    /// (0-RTT when `zero_rtt` is on). Default `true`.
    pub resume: bool,
    /// Response bytes, split over the streams as in `bulk`.
    pub bytes: u64,
    /// Request streams.
    pub streams: u64,
    /// Request size per stream.
    pub request_size: u64,
    /// How the connection ends.
    pub close: CloseMode,
}

impl ConnectionSpec {
    /// A spec with `bytes` and the workload defaults of `q`: resume, explicit close, start
    /// right after the previous connection.
    pub fn new(q: &QuicConfig, bytes: u64) -> Self {
        ConnectionSpec {
            start: None,
            gap: None,
            resume: true,
            bytes,
            streams: q.streams,
            request_size: q.request_size,
            close: CloseMode::Explicit,
        }
    }

    /// The base config with this connection's workload.
    pub fn config(&self, base: &QuicConfig) -> QuicConfig {
        QuicConfig {
            bytes: self.bytes,
            streams: self.streams,
            request_size: self.request_size,
            ..base.clone()
        }
    }
}

//! Workloads: what the application does over a transport, as pure configuration data
//! holding no transport parameter ([`WorkloadConfig`]). Owned by the config layer so that
//! [`crate::config::AppConfig`] names no protocol module; the workloads that run them live
//! above (`workloads/bulk.rs`, `workloads/sequence.rs`).
//!
//! A new workload is a [`WorkloadConfig`] variant with its spec here, its keys'
//! descriptors in `validate/schema.rs`, its file in `workloads/` and one arm per transport
//! in `flows::build`.

use crate::time::{SimDuration, SimTime};
use crate::units::Rate;
use serde::{Deserialize, Serialize};

/// What the application does over a transport flow (`workload = { kind = ..., ... }`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WorkloadConfig {
    /// One connection: the client requests `bytes` over `streams` streams and the server
    /// answers ([`BulkSpec`]).
    Bulk(BulkSpec),
    /// A sequence of connections from the client to the server, each running the bulk
    /// workload with its own sizes, resuming with the session ticket of an earlier one,
    /// ending by an explicit close or the idle timeout ([`SequenceSpec`],
    /// `docs/lifecycle.md`).
    Sequence(SequenceSpec),
}

/// The `bulk` workload: once the handshake completes, the client opens `streams`
/// bidirectional streams and sends a `request_size`-byte request on each; the server
/// answers each with its share of `bytes`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BulkSpec {
    /// Total response bytes N, split evenly over the streams (the first `N mod S` streams
    /// get one byte more). Default 1,000,000.
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub bytes: u64,
    /// Number of bidirectional streams the client opens (one request each). Default 1.
    pub streams: u64,
    /// Request size per stream, client to server. Default 100.
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub request_size: u64,
    /// Rate at which the client application reads the response data; unset = it reads
    /// everything as soon as it is in order. Data counts as consumed (for flow control
    /// and completion) when read. Default unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_rate: Option<Rate>,
}

impl Default for BulkSpec {
    fn default() -> Self {
        BulkSpec {
            bytes: 1_000_000,
            streams: 1,
            request_size: 100,
            read_rate: None,
        }
    }
}

impl BulkSpec {
    /// `bytes` response bytes on one stream, the other keys at their defaults.
    pub fn bytes(bytes: u64) -> Self {
        BulkSpec {
            bytes,
            ..BulkSpec::default()
        }
    }

    /// Checks the values. The error is `(field, value, allowed)` as
    /// [`crate::config::quic::QuicConfig::validate`]'s.
    pub fn validate(&self) -> Result<(), (&'static str, String, String)> {
        if self.streams == 0 {
            return Err(("streams", "0".into(), "a number of streams >= 1".into()));
        }
        if let Some(r) = self.read_rate {
            if r.bps() == 0 {
                return Err((
                    "read_rate",
                    "0bps".into(),
                    "a rate > 0 (omit it for unlimited)".into(),
                ));
            }
        }
        Ok(())
    }
}

/// The `sequence` workload: the connections, in order, and the workload keys each
/// defaults to (written next to `connections`; every [`ConnectionSpec`] holds its
/// resolved values). Every connection reads at once (no `read_rate`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SequenceSpec {
    /// The connections' default response bytes. Default 1,000,000.
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub bytes: u64,
    /// The connections' default number of request streams. Default 1.
    pub streams: u64,
    /// The connections' default request size per stream. Default 100.
    #[serde(deserialize_with = "crate::units::serde_size::de")]
    pub request_size: u64,
    /// The connections, in order (at least one).
    pub connections: Vec<ConnectionSpec>,
}

impl SequenceSpec {
    /// A sequence of `connections` with the default workload keys.
    pub fn new(connections: Vec<ConnectionSpec>) -> Self {
        let d = BulkSpec::default();
        SequenceSpec {
            bytes: d.bytes,
            streams: d.streams,
            request_size: d.request_size,
            connections,
        }
    }

    /// A connection with `bytes` and this sequence's defaults: resume, explicit close,
    /// start right after the previous connection.
    pub fn connection(&self, bytes: u64) -> ConnectionSpec {
        ConnectionSpec {
            streams: self.streams,
            request_size: self.request_size,
            ..ConnectionSpec::new(bytes)
        }
    }
}

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

/// One connection of a `sequence` workload, resolved (every field set).
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
    /// A spec with `bytes` and the workload defaults of [`BulkSpec`] (one stream, 100-byte
    /// request): resume, explicit close, start right after the previous connection.
    pub fn new(bytes: u64) -> Self {
        let d = BulkSpec::default();
        ConnectionSpec {
            start: None,
            gap: None,
            resume: true,
            bytes,
            streams: d.streams,
            request_size: d.request_size,
            close: CloseMode::Explicit,
        }
    }
}

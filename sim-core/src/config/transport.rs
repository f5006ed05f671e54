//! Transports: the parameters of a flow's transport protocol, holding no workload
//! parameter ([`TransportConfig`]), each side's parameters kept apart ([`Sides`]).
//!
//! A new transport is a [`TransportConfig`] variant holding `Sides<its config>`, its
//! config file (`config/<p>.rs`, pure data with documented defaults), its keys'
//! descriptors in `validate/schema.rs`, and its arms in `flows::build`.

use crate::config::quic::QuicConfig;
use crate::config::sctp::SctpConfig;
use crate::config::tcp::TcpConfig;
use serde::{Deserialize, Serialize};

/// The transport of a flow, one variant per transport protocol.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(clippy::large_enum_variant)] // one per flow, built once: not worth a box per access
pub enum TransportConfig {
    /// QUIC (RFC 9000/9002): each side's [`QuicConfig`]. The transport parameters a side
    /// advertises come from its own config; the peer's are read from its handshake.
    Quic(Sides<QuicConfig>),
    /// TCP (RFC 9293) with TLS and an HTTP/2-style multiplexer on top: each side's
    /// [`TcpConfig`] (`docs/tcp.md`).
    Tcp(Sides<TcpConfig>),
    /// SCTP (RFC 9260): each side's [`SctpConfig`] (`docs/sctp.md`).
    Sctp(Sides<SctpConfig>),
}

impl TransportConfig {
    /// QUIC with the same `cfg` on both sides.
    pub fn quic(cfg: QuicConfig) -> Self {
        TransportConfig::Quic(Sides::both(cfg))
    }

    /// TCP with the same `cfg` on both sides.
    pub fn tcp(cfg: TcpConfig) -> Self {
        TransportConfig::Tcp(Sides::both(cfg))
    }

    /// SCTP with the same `cfg` on both sides.
    pub fn sctp(cfg: SctpConfig) -> Self {
        TransportConfig::Sctp(Sides::both(cfg))
    }

    /// The transport's name in scenarios (`transport = "quic"`), which is also the name
    /// of the table its keys may be written in.
    pub fn name(&self) -> &'static str {
        match self {
            TransportConfig::Quic(_) => "quic",
            TransportConfig::Tcp(_) => "tcp",
            TransportConfig::Sctp(_) => "sctp",
        }
    }
}

/// A value per side of a flow: the client's (on the pair's client host) and the
/// server's. Scenario files write the keys both sides share once and a side's own values
/// in a `client` / `server` table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sides<T> {
    /// The client's.
    pub client: T,
    /// The server's.
    pub server: T,
}

impl<T: Clone> Sides<T> {
    /// `value` on both sides.
    pub fn both(value: T) -> Self {
        Sides {
            client: value.clone(),
            server: value,
        }
    }
}

impl<T: PartialEq> Sides<T> {
    /// Whether both sides hold the same value.
    pub fn same(&self) -> bool {
        self.client == self.server
    }
}

//! QUIC (RFC 9000 / RFC 9001 / RFC 9002) endpoints for the simulator.
//!
//! Layout:
//! - packet and frame descriptors, carried in [`crate::packet::Payload::Quic`], live below
//!   the shared layers in [`crate::wire::quic`];
//! - [`config`]: [`QuicConfig`], every parameter with its documented default;
//! - [`ranges`]: an ordered set of half-open `u64` ranges (reassembly, ACK ranges);
//! - [`flow_control`]: the receiver's window-update policy ([`flow_control::Allowance`]);
//! - [`streams`]: send and receive halves of streams, and the sender's scheduler;
//! - [`connection`]: the connection state machine (handshake, packet number spaces, ACKs,
//!   frames, flow control, recovery glue);
//! - [`metrics`]: how a connection fills its [`crate::metrics::quic::QuicMetrics`] (the
//!   types are defined in the low metrics layer);
//! - [`endpoint`]: [`QuicEndpoint`], a connection plus the `bulk` workload, implementing
//!   [`crate::endpoint::Endpoint`];
//! - [`lifecycle`]: sequences of connections between one client and one server
//!   (session tickets, 0-RTT, address-validation tokens, idle timeout and close), the
//!   `quic_connections` workload;
//! - [`recovery`] and [`rtt`]: RFC 9002 loss detection, PTO and the RTT estimator;
//! - `dense`: an ordered map over dense `u64` keys (sent packets by packet number).

pub mod config;
pub mod connection;
mod dense;
pub mod endpoint;
pub mod flow_control;
pub mod lifecycle;
pub mod metrics;
pub mod ranges;
pub mod recovery;
pub mod rtt;
pub mod streams;

#[cfg(test)]
mod tests;

pub use config::QuicConfig;
pub use endpoint::{QuicEndpoint, Role};

//! QUIC (RFC 9000 / RFC 9001 / RFC 9002) endpoints for the simulator.
//!
//! Layout:
//! - packet and frame descriptors, carried in [`crate::packet::Payload::Quic`], live below
//!   the shared layers in [`crate::wire::quic`];
//! - [`config`]: [`QuicConfig`], every parameter with its documented default;
//! - [`flow_control`]: the receiver's flow-control bookkeeping
//!   ([`flow_control::RecvFlow`]) around a [`crate::transport::allowance::Allowance`];
//! - [`streams`]: send and receive halves of streams, and the sender's scheduler;
//! - [`connection`]: the connection state machine (handshake, packet number spaces, ACKs,
//!   frames, flow control, recovery glue);
//! - [`endpoint`]: [`QuicEndpoint`], a connection plus the `bulk` workload, implementing
//!   [`crate::endpoint::Endpoint`];
//! - [`lifecycle`]: sequences of connections between one client and one server
//!   (session tickets, 0-RTT, address-validation tokens, idle timeout and close), the
//!   `quic_connections` workload;
//! - [`recovery`]: RFC 9002 loss detection and PTO.
//!
//! The RTT estimator, range sets, the dense map and the allowance policies come from the shared
//! [`crate::transport`] toolkit.

pub mod config;
pub mod connection;
pub mod endpoint;
pub mod flow_control;
pub mod lifecycle;
pub mod path;
pub mod recovery;
pub mod state;
pub mod streams;
pub mod timers;

#[cfg(test)]
mod tests;

pub use config::QuicConfig;
pub use endpoint::{QuicEndpoint, Role};

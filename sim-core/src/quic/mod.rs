//! QUIC (RFC 9000 / RFC 9001 / RFC 9002) endpoints for the simulator.
//!
//! Layout:
//! - packet and frame descriptors, carried in [`crate::packet::Payload::Quic`], live below
//!   the shared layers in [`crate::wire::quic`];
//! - [`config`] (an alias of [`crate::config::quic`], where the data lives): [`QuicConfig`],
//!   every parameter with its documented default;
//! - [`flow_control`]: the receiver's flow-control bookkeeping
//!   ([`flow_control::RecvFlow`]) around a [`crate::transport::allowance::Allowance`],
//!   and the sender's ([`flow_control::SendFlow`]: the peer's limit, blocked frames);
//! - [`streams`]: send and receive halves of streams;
//! - [`connection`]: the sans-IO [`connection::Connection`], input, output and the glue
//!   between the state owners below (quinn-proto's split);
//! - [`state`]: the handshake / close state machine as one enum ([`state::ConnState`]);
//! - [`path`]: a network path's state ([`path::Path`]: recovery, pacer,
//!   anti-amplification, path validation), ready for a second path (migration);
//! - `spaces`: per packet number space state; `packetizer`: the ACK, CRYPTO and STREAM
//!   frame builders and the sender's scheduler, as functions over the owners they read;
//! - [`migration`]: connection migration state (RFC 9000 §9): the window policy, the
//!   active path's peer address, spare connection IDs, the fallback path and the records
//!   the metrics report (the mechanism is in `connection/migrate.rs`);
//! - [`timers`]: every deadline of a connection in one [`timers::TimerTable`];
//! - [`metrics`]: how a connection fills its [`crate::metrics::quic::QuicMetrics`] (the
//!   types are defined in the low metrics layer);
//! - [`stream_transport`]: QUIC as a stream transport — [`Connection`] implements
//!   [`crate::transport::stream::StreamTransport`] and [`crate::driver::TransportDriver`],
//!   so the workloads of [`crate::workloads`] (`bulk`, the connection sequence) run on it;
//! - [`lifecycle`]: re-exports of the connection-sequence spec types (the sequence itself
//!   is [`crate::workloads::sequence`]);
//! - [`recovery`]: RFC 9002 loss detection and PTO;
//! - [`sent_frames`]: the retransmittable frames of the sent-packet records, as linked
//!   slots of one slab per connection (the records stay fixed-size).
//!
//! The RTT estimator, range sets, the dense map and the allowance policies come from the shared
//! [`crate::transport`] toolkit.

/// The QUIC flow parameters live in the config layer ([`crate::config::quic`]); this alias
/// keeps `quic::config::QuicConfig` paths working.
pub use crate::config::quic as config;
pub mod connection;
pub mod ecn;
pub mod flow_control;
pub mod lifecycle;
pub mod metrics;
pub mod migration;
pub(crate) mod packetizer;
pub mod path;
pub mod recovery;
pub mod sent_frames;
pub(crate) mod spaces;
pub mod state;
pub mod stream_transport;
pub mod streams;
pub mod timers;

#[cfg(test)]
mod tests;

pub use config::QuicConfig;
pub use connection::{Connection, Role};

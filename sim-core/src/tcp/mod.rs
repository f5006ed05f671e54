//! TCP endpoints (RFC 9293) as a sans-IO stream transport: the three-way handshake, TLS
//! 1.3 / 1.2 / none as records on the byte stream, SACK (RFC 2018) with RFC 6675 loss
//! recovery (NewReno, RFC 6582, without SACK), RTO per RFC 6298, delayed ACKs, the shared
//! congestion controllers, RTT estimator, range sets and pacer, and an HTTP/2-style
//! multiplexer carrying the workload's streams on the one byte stream. See `docs/tcp.md`.
//!
//! - [`connection`]: [`TcpConnection`], the endpoint.
//! - [`mux`]: the multiplexer (frames, round robin, per-stream read progress).
//! - [`metrics`]: how a connection fills its [`crate::metrics::tcp::TcpMetrics`].
//! - [`stream_transport`]: `impl StreamTransport` and `impl TransportDriver`.

pub mod connection;
pub mod metrics;
pub mod mux;
pub mod recovery;
pub mod stream_transport;

#[cfg(test)]
mod tests;

pub use crate::config::tcp::{TcpConfig, TlsVersion};
pub use connection::{TcpConnection, TcpState};

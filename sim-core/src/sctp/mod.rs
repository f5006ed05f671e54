//! SCTP (RFC 9260) endpoints for the simulator: a sans-IO association implementing the
//! stream-transport interface, so the workloads of [`crate::workloads`] run on it.
//!
//! Layout:
//! - chunk descriptors with their exact sizes live in [`crate::wire::sctp`];
//! - the parameters in [`crate::config::sctp`] ([`SctpConfig`], RFC 9260 and Linux
//!   presets);
//! - RFC 9260 §7.2 congestion control in [`crate::cc::sctp`] (the shared controllers of
//!   [`crate::cc`] are selectable too);
//! - [`association`]: the sans-IO [`SctpAssociation`] (handshake, multi-streaming,
//!   SACK, RTO, fast retransmit);
//! - [`stream_transport`]: [`crate::transport::stream::StreamTransport`] and
//!   [`crate::driver::TransportDriver`] for [`SctpAssociation`], and how it fills
//!   [`crate::metrics::sctp::SctpMetrics`].
//!
//! The RTT estimator and range sets come from the shared [`crate::transport`] toolkit.
//! `docs/sctp.md` lists the RFC rules covered and every deviation.

pub use crate::config::sctp::{SctpCc, SctpConfig};
pub mod association;
mod sent;
pub mod stream_transport;

pub use association::{AssocState, SctpAssociation, SctpStats};

#[cfg(test)]
mod tests;

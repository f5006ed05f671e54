//! What travels: per-protocol datagram and packet descriptors with their exact encoded
//! sizes. Payload bytes are never materialised.
//!
//! Like smoltcp's `wire` module, this layer sits below everything that uses it: it imports
//! only the ground layer ([`crate::time`], [`crate::units`]), and [`crate::packet`],
//! [`crate::trace`], [`crate::qlog`] and the protocol modules import from it. One file per
//! protocol: [`quic`], [`tcp`], [`sctp`].

pub mod inline;
pub mod quic;
pub mod sctp;
pub mod tcp;

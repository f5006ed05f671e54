//! What travels through the network: datagrams with addresses, a size and a payload
//! descriptor. Payload bytes are never materialised; protocols carry frame descriptors.

use crate::time::SimTime;
use serde::{Deserialize, Serialize};
use std::fmt;

/// An IPv4-style address and port. Endpoints see only these, so an address change
/// (handover) or a port-only change (NAT rebinding) needs no engine change.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
pub struct Addr {
    /// IPv4 address as a big-endian integer (10.0.0.1 = 0x0a000001).
    pub ip: u32,
    /// UDP/TCP/SCTP port.
    pub port: u16,
}

impl Addr {
    /// An address from its parts.
    pub const fn new(ip: u32, port: u16) -> Self {
        Addr { ip, port }
    }
}

impl fmt::Display for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.ip.to_be_bytes();
        write!(f, "{}.{}.{}.{}:{}", b[0], b[1], b[2], b[3], self.port)
    }
}

/// Index of a flow (one application instance) in the run; used for per-flow accounting.
pub type FlowId = u32;

/// Protocol content of a datagram: descriptors only, no payload bytes.
#[derive(Clone, Debug, PartialEq)]
pub enum Payload {
    /// A constant-bit-rate UDP probe with its sequence number.
    Cbr {
        /// Sequence number, from 0.
        seq: u64,
    },
    /// An opaque tagged datagram (tests and examples).
    Raw {
        /// Free tag.
        tag: u64,
    },
    /// A QUIC datagram (one or more coalesced packets).
    Quic(Box<crate::wire::quic::QuicDatagram>),
    /// A TCP segment ([`crate::wire::tcp::Segment`]).
    Tcp(Box<crate::wire::tcp::Segment>),
    /// An SCTP packet (common header + bundled chunks).
    Sctp(Box<crate::wire::sctp::SctpPacket>),
}

/// A datagram handed to or received from the network.
#[derive(Clone, Debug, PartialEq)]
pub struct Datagram {
    /// Source address and port.
    pub src: Addr,
    /// Destination address and port.
    pub dst: Addr,
    /// Size in bytes above the IP and UDP headers (the UDP payload). Each link adds its own
    /// per-packet `overhead` on top when it computes serialization time and queue bytes.
    pub size: u32,
    /// The flow this datagram belongs to (for accounting; set by the sending endpoint).
    pub flow: FlowId,
    /// Protocol content.
    pub payload: Payload,
    /// Set by the network: when the datagram was handed to the first link.
    pub sent_at: SimTime,
    /// Set by the network: a corrupted datagram still uses link time, and the receiving
    /// host discards it (counted as a `corruption` drop) instead of delivering it.
    pub corrupted: bool,
}

impl Datagram {
    /// A new datagram; network-set fields start cleared.
    pub fn new(src: Addr, dst: Addr, size: u32, flow: FlowId, payload: Payload) -> Self {
        Datagram {
            src,
            dst,
            size,
            flow,
            payload,
            sent_at: SimTime::ZERO,
            corrupted: false,
        }
    }
}

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

/// The ECN field of the IP header (RFC 3168 §5): two bits a sender sets to say its
/// transport reacts to congestion marks (ECT), and a router sets to CE instead of dropping.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Ecn {
    /// `00` Not ECN-Capable Transport: a marking queue drops it (the default).
    #[default]
    NotEct,
    /// `10` ECN-Capable Transport ECT(0).
    Ect0,
    /// `01` ECN-Capable Transport ECT(1) (L4S, RFC 9331).
    Ect1,
    /// `11` Congestion Experienced: set by a queue on an ECT packet (RFC 3168 §5).
    Ce,
}

impl Ecn {
    /// ECT(0), ECT(1) or CE: a queue may mark it CE instead of dropping it (RFC 3168 §5).
    pub fn is_capable(self) -> bool {
        self != Ecn::NotEct
    }
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
    /// The IP header's ECN field: set by the sending endpoint, changed to CE by a marking
    /// queue ([`crate::config::EcnMarking`]).
    pub ecn: Ecn,
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
            ecn: Ecn::NotEct,
        }
    }
}

/// Emptied payload boxes for the next datagrams (issue 14: no allocation per packet in
/// steady state). The run owns one; a delivered or dropped datagram's payload box goes
/// back into it, and an endpoint building a datagram takes one out and overwrites the
/// whole content (TCP, SCTP) or builds in a box emptied on its return (QUIC,
/// [`PayloadPool::quic_box`]), so what a box held before never shows (every output is the
/// same with or without the pool). At most [`PayloadPool::CAP`] boxes of each kind are kept: the
/// pool holds at most what was in flight at once.
// The boxes themselves are what is kept: a `Vec<T>` of the contents would move them out of
// and back into new boxes, the allocation this pool is for.
#[allow(clippy::vec_box)]
#[derive(Debug, Default)]
pub struct PayloadPool {
    quic: Vec<Box<crate::wire::quic::QuicDatagram>>,
    tcp: Vec<Box<crate::wire::tcp::Segment>>,
    sctp: Vec<Box<crate::wire::sctp::SctpPacket>>,
}

impl PayloadPool {
    /// The most boxes of each kind kept.
    pub const CAP: usize = 4096;

    /// Keeps `payload`'s box for a later datagram (other payloads are dropped).
    pub fn recycle(&mut self, payload: Payload) {
        match payload {
            Payload::Quic(mut b) if self.quic.len() < Self::CAP => {
                // The content goes now, not when the box is next used: its ACK frames'
                // range buffers are shared with the sender's recovery records, which hand
                // them back to their connection's pool only once the frame is gone.
                // Emptied in place: the used packet slots only (making a whole default
                // datagram and dropping the old one cost about twice as much).
                // (Destructured, so a new field cannot be forgotten here.)
                let crate::wire::quic::QuicDatagram {
                    packets,
                    conn,
                    client_hello,
                    server_hello,
                } = &mut *b;
                packets.clear();
                *conn = 0;
                *client_hello = None;
                *server_hello = None;
                self.quic.push(b)
            }
            Payload::Tcp(b) if self.tcp.len() < Self::CAP => self.tcp.push(b),
            Payload::Sctp(b) if self.sctp.len() < Self::CAP => self.sctp.push(b),
            _ => {}
        }
    }

    /// An empty datagram box to build a QUIC datagram in (a recycled one if the pool has
    /// one; recycled boxes are emptied by [`PayloadPool::recycle`]). Give it back with
    /// [`PayloadPool::return_unused_quic_box`] when nothing was built in it.
    pub fn quic_box(&mut self) -> Box<crate::wire::quic::QuicDatagram> {
        let b = self.quic.pop().unwrap_or_default();
        debug_assert!(b.packets.is_empty() && b.client_hello.is_none() && b.server_hello.is_none());
        b
    }

    /// Gives back a box from [`PayloadPool::quic_box`] that nothing was built in (the
    /// empty poll): still empty, so kept as it is (no clearing, no match on the payload).
    #[inline]
    pub fn return_unused_quic_box(&mut self, b: Box<crate::wire::quic::QuicDatagram>) {
        debug_assert!(b.packets.is_empty() && b.conn == 0);
        debug_assert!(b.client_hello.is_none() && b.server_hello.is_none());
        if self.quic.len() < Self::CAP {
            self.quic.push(b);
        }
    }

    /// A recycled TCP segment box (its old content still in it), if the pool has one: the
    /// sender writes the new segment over it in place, its vectors keeping their capacity.
    pub fn tcp_box(&mut self) -> Option<Box<crate::wire::tcp::Segment>> {
        self.tcp.pop()
    }

    /// `p` in a box, and the box's old content if it was a recycled one.
    pub fn boxed_sctp(
        &mut self,
        p: crate::wire::sctp::SctpPacket,
    ) -> (
        Box<crate::wire::sctp::SctpPacket>,
        Option<crate::wire::sctp::SctpPacket>,
    ) {
        match self.sctp.pop() {
            Some(mut b) => {
                let old = std::mem::replace(&mut *b, p);
                (b, Some(old))
            }
            None => (Box::new(p), None),
        }
    }
}

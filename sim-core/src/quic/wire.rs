//! QUIC packet and frame descriptors carried in [`crate::packet::Payload::Quic`].

/// One UDP datagram's worth of QUIC packets (placeholder until the QUIC core lands).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct QuicDatagram {}

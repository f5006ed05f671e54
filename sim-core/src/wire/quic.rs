//! QUIC packet and frame descriptors carried in [`crate::packet::Payload::Quic`].
//!
//! Payload bytes are never materialised: a frame is a descriptor (offsets, lengths,
//! limits) and [`Frame::wire_size`] gives the number of bytes its RFC 9000 §19 encoding
//! would take, so datagram sizes, serialization times and queue occupancy are honest.
//!
//! # Byte accounting
//! `Datagram.size` (the UDP payload) is the sum of the sizes of the coalesced QUIC
//! packets it carries (RFC 9000 §12.2). One packet's size is
//! `header + packet number + frames + AEAD tag`, with
//! - long header (Initial, Handshake; RFC 9000 §17.2): 1 (first byte) + 4 (version)
//!   + 1 + DCID + 1 + SCID (+ token length varint + token for Initial, §17.2.2)
//!   + varint(Length), where Length covers the packet number, the frames and the tag;
//! - short header (1-RTT; §17.3.1): 1 + DCID;
//! - packet number: 1-4 bytes, chosen as RFC 9000 §17.1 / Appendix A.2 do from the
//!   distance to the largest packet number the peer acknowledged;
//! - [`AEAD_TAG_LEN`] = 16 bytes (RFC 9001 §5.3).
//!
//! The link adds its own per-packet overhead (IP + UDP headers) on top.
//!
//! Also here, as descriptors of what the wire carries: the transport parameters
//! ([`TransportParameters`], RFC 9000 §18.2) and a frameless view of a packet
//! ([`PacketRef`]) for traces of dropped datagrams.

use crate::time::SimDuration;
pub use crate::wire::inline::InlineVec;
use std::sync::Arc;

/// The frames of a packet: up to 2 in place (a data packet carries a STREAM frame, maybe
/// with an ACK or a flow-control update), more on the heap.
pub type FrameVec = InlineVec<Frame, 2>;

/// The ranges of an ACK frame: inclusive `(smallest, largest)`, read as a slice.
///
/// A shared buffer, so that the sender's recovery record of the packet that carried the
/// frame holds the same ranges without a copy (RFC 9000 §13.2.4 pruning needs them), and
/// the buffer goes back to the sender's pool for its next ACK frame once both the record
/// and the delivered frame are gone ([`AckRanges::make_mut`] writes in place when no
/// other holder is left). Not inline: ranges kept inline made every frame (and so every
/// packet and datagram) larger, and the bulk benchmarks' ACK frames mostly carry more
/// ranges than a few inline slots would hold (measured, issue 14 session 7). The empty
/// value holds no buffer. `==` and `Debug` are the slice's.
#[derive(Clone, Default)]
pub struct AckRanges(Option<Arc<Vec<(u64, u64)>>>);

impl AckRanges {
    /// The ranges as a slice.
    pub fn as_slice(&self) -> &[(u64, u64)] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }

    /// The ranges for writing: in place when no other value shares the buffer, else in a
    /// copy (then this value holds its own buffer).
    pub fn make_mut(&mut self) -> &mut Vec<(u64, u64)> {
        Arc::make_mut(self.0.get_or_insert_with(Default::default))
    }

    /// No other value shares the buffer (an empty value shares nothing).
    pub fn is_unique(&mut self) -> bool {
        self.0.as_mut().is_none_or(|a| Arc::get_mut(a).is_some())
    }
}

impl From<Vec<(u64, u64)>> for AckRanges {
    fn from(v: Vec<(u64, u64)>) -> Self {
        AckRanges(Some(Arc::new(v)))
    }
}

impl std::ops::Deref for AckRanges {
    type Target = [(u64, u64)];
    fn deref(&self) -> &[(u64, u64)] {
        self.as_slice()
    }
}

impl<'a> IntoIterator for &'a AckRanges {
    type Item = &'a (u64, u64);
    type IntoIter = std::slice::Iter<'a, (u64, u64)>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl PartialEq for AckRanges {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for AckRanges {}

impl std::fmt::Debug for AckRanges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

/// The packets of a datagram: one in place (every datagram after the handshake), the
/// coalesced handshake packets on the heap.
pub type PacketVec = InlineVec<QuicPacket, 1>;

/// Length of the AEAD authentication tag of every protected packet (RFC 9001 §5.3:
/// AEAD_AES_128_GCM and AEAD_CHACHA20_POLY1305 both have a 16-byte tag).
pub const AEAD_TAG_LEN: u64 = 16;

/// Header protection samples 16 bytes starting 4 bytes after the start of the packet
/// number (RFC 9001 §5.4.2), so packet number + frames must total at least 4 bytes;
/// senders pad shorter packets.
pub const MIN_PN_PLUS_PAYLOAD: u64 = 4;

/// QUIC version field length (RFC 9000 §17.2).
pub const VERSION_LEN: u64 = 4;

/// Bytes of a QUIC variable-length integer encoding `v` (RFC 9000 §16): 1, 2, 4 or 8.
pub fn varint_len(v: u64) -> u64 {
    if v < (1 << 6) {
        1
    } else if v < (1 << 14) {
        2
    } else if v < (1 << 30) {
        4
    } else {
        8
    }
}

/// Packet number length in bytes for `pn` given the largest packet number the peer has
/// acknowledged in the same space (RFC 9000 §17.1 and Appendix A.2): the encoding must
/// represent more than twice the number of unacknowledged packets.
pub fn pn_len(pn: u64, largest_acked: Option<u64>) -> u64 {
    let num_unacked = match largest_acked {
        Some(la) => pn.saturating_sub(la),
        None => pn + 1,
    };
    // min bits = floor(log2(num_unacked)) + 1 + 1, rounded up to whole bytes.
    let bits = 64 - num_unacked.leading_zeros() as u64 + 1;
    bits.div_ceil(8).clamp(1, 4)
}

/// The packet types the model sends. (`Default` is Initial: only the placeholder of an
/// empty [`PacketVec`] slot.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum PacketType {
    /// Long header, Initial packet number space (RFC 9000 §17.2.2).
    #[default]
    Initial,
    /// Long header, Handshake packet number space (RFC 9000 §17.2.4).
    Handshake,
    /// Short header, application data space (RFC 9000 §17.3.1).
    OneRtt,
    /// Long header, 0-RTT: early data from a resuming client, in the application data
    /// space shared with 1-RTT (RFC 9000 §17.2.3, §12.3).
    ZeroRtt,
}

impl PacketType {
    /// Index of the packet number space (0 Initial, 1 Handshake, 2 application data).
    pub fn space_index(self) -> usize {
        match self {
            PacketType::Initial => 0,
            PacketType::Handshake => 1,
            PacketType::OneRtt | PacketType::ZeroRtt => 2,
        }
    }

    /// The packet type of space index `i` (inverse of [`PacketType::space_index`]).
    pub fn of_space(i: usize) -> PacketType {
        match i {
            0 => PacketType::Initial,
            1 => PacketType::Handshake,
            _ => PacketType::OneRtt,
        }
    }
}

/// Header length in bytes, excluding the packet number and the Length field of long
/// headers (both depend on the packet; see [`packet_size`]).
pub fn header_len_without_pn(ty: PacketType, dcid_len: u64, scid_len: u64, token_len: u64) -> u64 {
    match ty {
        // first byte + version + DCID len + DCID + SCID len + SCID + token length + token
        PacketType::Initial => {
            1 + VERSION_LEN + 1 + dcid_len + 1 + scid_len + varint_len(token_len) + token_len
        }
        PacketType::Handshake | PacketType::ZeroRtt => {
            1 + VERSION_LEN + 1 + dcid_len + 1 + scid_len
        }
        // first byte + DCID (its length is implicit)
        PacketType::OneRtt => 1 + dcid_len,
    }
}

/// Full size of a packet: header (with the Length field of long headers) + packet number
/// + frames + AEAD tag.
pub fn packet_size(hdr_without_pn: u64, ty: PacketType, pn_len: u64, frames_len: u64) -> u64 {
    let protected = pn_len + frames_len + AEAD_TAG_LEN;
    let length_field = match ty {
        PacketType::OneRtt => 0,
        _ => varint_len(protected),
    };
    hdr_without_pn + length_field + protected
}

/// The ECN Counts of an ACK frame of type 0x03 (RFC 9000 §19.3.2): the packets of one
/// packet number space received with each codepoint (§13.4.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EcnCounts {
    /// ECT(0) Count.
    pub ect0: u64,
    /// ECT(1) Count.
    pub ect1: u64,
    /// ECN-CE Count.
    pub ce: u64,
}

impl EcnCounts {
    /// No ECN-marked packet counted.
    pub fn is_zero(&self) -> bool {
        *self == EcnCounts::default()
    }

    /// Bytes the three counts add to an ACK frame (§19.3.2: three varints).
    pub fn wire_size(&self) -> u64 {
        varint_len(self.ect0) + varint_len(self.ect1) + varint_len(self.ce)
    }
}

/// One frame, as a descriptor (RFC 9000 §19). Sizes are those of the encoding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// `len` PADDING bytes (type 0x00, one byte each; §19.1).
    Padding {
        /// Number of padding bytes.
        len: u64,
    },
    /// PING (0x01, §19.2).
    Ping,
    /// ACK (0x02, §19.3), or ACK with ECN counts (0x03, §19.3.2) when `ecn` is set.
    Ack {
        /// Acknowledged ranges, largest first, inclusive `(smallest, largest)`.
        ranges: AckRanges,
        /// The ACK Delay field as encoded: microseconds >> ack_delay_exponent.
        ack_delay_encoded: u64,
        /// The ECN Counts of the space (§19.3.2; type 0x03), if the receiver reports them:
        /// boxed, so that the frames of a run without ECN stay small.
        ecn: Option<Box<EcnCounts>>,
    },
    /// CRYPTO (0x06, §19.6).
    Crypto {
        /// Byte offset in the space's crypto stream.
        offset: u64,
        /// Length in bytes.
        len: u64,
    },
    /// STREAM (0x08-0x0f, §19.8). The model always sets the LEN bit and sets OFF only
    /// when the offset is non-zero.
    Stream {
        /// Stream ID.
        id: u64,
        /// Byte offset.
        offset: u64,
        /// Length in bytes (may be 0 with `fin`).
        len: u64,
        /// FIN bit: this frame ends the stream.
        fin: bool,
    },
    /// MAX_DATA (0x10, §19.9).
    MaxData(u64),
    /// MAX_STREAM_DATA (0x11, §19.10).
    MaxStreamData {
        /// Stream ID.
        id: u64,
        /// New limit (absolute offset).
        max: u64,
    },
    /// MAX_STREAMS (0x12 bidirectional / 0x13 unidirectional, §19.11).
    MaxStreams {
        /// Bidirectional (`true`) or unidirectional.
        bidi: bool,
        /// Cumulative stream count.
        max: u64,
    },
    /// DATA_BLOCKED (0x14, §19.12).
    DataBlocked(u64),
    /// STREAM_DATA_BLOCKED (0x15, §19.13).
    StreamDataBlocked {
        /// Stream ID.
        id: u64,
        /// The limit at which the sender is blocked.
        limit: u64,
    },
    /// NEW_CONNECTION_ID (0x18, §19.15).
    NewConnectionId {
        /// Sequence number.
        seq: u64,
        /// Retire Prior To.
        retire_prior_to: u64,
        /// Length of the connection ID (1-20).
        cid_len: u64,
    },
    /// PATH_CHALLENGE (0x1a, §19.17) with its 8-byte data.
    PathChallenge(u64),
    /// PATH_RESPONSE (0x1b, §19.18) echoing the challenge data.
    PathResponse(u64),
    /// CONNECTION_CLOSE (0x1c transport, §19.19).
    ConnectionClose {
        /// Error code.
        error_code: u64,
        /// Reason phrase length.
        reason_len: u64,
    },
    /// HANDSHAKE_DONE (0x1e, §19.20).
    HandshakeDone,
}

impl Default for Frame {
    /// Zero bytes of PADDING: only the placeholder of an empty [`FrameVec`] slot, never
    /// put on the wire.
    fn default() -> Self {
        Frame::Padding { len: 0 }
    }
}

impl Frame {
    /// Encoded size in bytes.
    pub fn wire_size(&self) -> u64 {
        match self {
            Frame::Padding { len } => *len,
            Frame::Ping | Frame::HandshakeDone => 1,
            Frame::Ack {
                ranges,
                ack_delay_encoded,
                ecn,
            } => {
                ack_frame_size(ranges, *ack_delay_encoded)
                    + ecn.as_deref().map_or(0, EcnCounts::wire_size)
            }
            Frame::Crypto { offset, len } => 1 + varint_len(*offset) + varint_len(*len) + len,
            Frame::Stream {
                id, offset, len, ..
            } => stream_frame_size(*id, *offset, *len),
            Frame::MaxData(v) | Frame::DataBlocked(v) => 1 + varint_len(*v),
            Frame::MaxStreamData { id, max } => 1 + varint_len(*id) + varint_len(*max),
            Frame::MaxStreams { max, .. } => 1 + varint_len(*max),
            Frame::StreamDataBlocked { id, limit } => 1 + varint_len(*id) + varint_len(*limit),
            Frame::NewConnectionId {
                seq,
                retire_prior_to,
                cid_len,
            } => {
                // type + seq + retire + length byte + CID + 16-byte stateless reset token
                1 + varint_len(*seq) + varint_len(*retire_prior_to) + 1 + cid_len + 16
            }
            Frame::PathChallenge(_) | Frame::PathResponse(_) => 1 + 8,
            Frame::ConnectionClose {
                error_code,
                reason_len,
            } => {
                // type + error code + frame type (1 byte) + reason length + reason
                1 + varint_len(*error_code) + 1 + varint_len(*reason_len) + reason_len
            }
        }
    }

    /// `true` for frames that elicit an acknowledgement (all but ACK, PADDING and
    /// CONNECTION_CLOSE; RFC 9002 §2).
    pub fn is_ack_eliciting(&self) -> bool {
        !matches!(
            self,
            Frame::Ack { .. } | Frame::Padding { .. } | Frame::ConnectionClose { .. }
        )
    }
}

/// Size of a STREAM frame: type + stream ID + offset (omitted when 0) + length + data.
pub fn stream_frame_size(id: u64, offset: u64, len: u64) -> u64 {
    let off = if offset > 0 { varint_len(offset) } else { 0 };
    1 + varint_len(id) + off + varint_len(len) + len
}

/// Size of an ACK frame with `ranges` (largest first, inclusive) and the encoded delay.
pub fn ack_frame_size(ranges: &[(u64, u64)], ack_delay_encoded: u64) -> u64 {
    let Some(&(first_lo, largest)) = ranges.first() else {
        return 0;
    };
    let mut n = 1 + varint_len(largest) + varint_len(ack_delay_encoded);
    n += varint_len(ranges.len() as u64 - 1);
    n += varint_len(largest - first_lo);
    let mut prev_lo = first_lo;
    for &(lo, hi) in &ranges[1..] {
        // Gap = previous smallest - this largest - 2; ACK Range Length = hi - lo (§19.3.1).
        n += varint_len(prev_lo - hi - 2) + varint_len(hi - lo);
        prev_lo = lo;
    }
    n
}

/// One QUIC packet inside a datagram. (`Default`: only the placeholder of an empty
/// [`PacketVec`] slot.)
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct QuicPacket {
    /// Packet type (and so packet number space).
    pub ty: PacketType,
    /// Full packet number.
    pub pn: u64,
    /// Size in bytes: header + packet number + frames + AEAD tag.
    pub size: u64,
    /// Frames, in order.
    pub frames: FrameVec,
}

impl QuicPacket {
    /// `true` if any frame is ack-eliciting.
    pub fn is_ack_eliciting(&self) -> bool {
        self.frames.iter().any(Frame::is_ack_eliciting)
    }
}

/// What a client's ClientHello and Initial header say about resumption, as a descriptor
/// (the TLS bytes are counted in the CRYPTO sizes, the token in the Initial header size).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientHelloInfo {
    /// ClientHello length in bytes (the server knows when it has all of it).
    pub hello_size: u64,
    /// Session ticket presented in the pre_shared_key extension (RFC 8446 §4.2.11).
    pub ticket: Option<u64>,
    /// Address-validation token in the Initial header (RFC 9000 §8.1.3, §17.2.2).
    pub token: Option<u64>,
    /// The client sends 0-RTT data (early_data extension, RFC 8446 §4.2.10).
    pub early_data: bool,
    /// The client's transport parameters (quic_transport_parameters extension, RFC 9000
    /// §7.4, §18).
    pub params: TransportParameters,
}

/// What the server's ServerHello and EncryptedExtensions say about resumption, as a
/// descriptor (the bytes are in the CRYPTO sizes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerHelloInfo {
    /// The server accepted the session ticket (abbreviated handshake, no certificate).
    pub resumed: bool,
    /// The server accepted the 0-RTT data (early_data in EncryptedExtensions, RFC 9001
    /// §4.6.2).
    pub early_data_accepted: bool,
    /// Length of the server's Handshake flight in bytes.
    pub handshake_size: u64,
    /// The server's transport parameters (in EncryptedExtensions, RFC 9000 §7.4, §18).
    pub params: TransportParameters,
}

/// One UDP datagram's worth of coalesced QUIC packets (RFC 9000 §12.2).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct QuicDatagram {
    /// The packets, in order (a short-header packet, if any, is last).
    pub packets: PacketVec,
    /// Which connection of the client-server pair the packets belong to: stands for the
    /// Destination Connection ID, which all coalesced packets share (RFC 9000 §12.2).
    /// 0 for a lone connection.
    pub conn: u64,
    /// Set by a client on every datagram: its ClientHello's resumption content.
    pub client_hello: Option<Box<ClientHelloInfo>>,
    /// Set by a server on every datagram: its handshake's resumption content.
    pub server_hello: Option<Box<ServerHelloInfo>>,
}

/// A QUIC packet as seen by the link that dropped it (no frames).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketRef {
    /// Packet type (and so number space).
    pub packet_type: PacketType,
    /// Packet number.
    pub packet_number: u64,
    /// Size in bytes (header + packet number + frames + AEAD tag).
    pub size: u64,
}

/// Transport parameters (RFC 9000 §18.2) as the model uses them (qlog `parameters_set`).
/// Durations are exact; absent fields were not set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransportParameters {
    /// `max_idle_timeout`.
    pub max_idle_timeout: Option<SimDuration>,
    /// `max_udp_payload_size`.
    pub max_udp_payload_size: Option<u64>,
    /// `ack_delay_exponent`.
    pub ack_delay_exponent: Option<u64>,
    /// `max_ack_delay`.
    pub max_ack_delay: Option<SimDuration>,
    /// `active_connection_id_limit`.
    pub active_connection_id_limit: Option<u64>,
    /// `initial_max_data`.
    pub initial_max_data: Option<u64>,
    /// `initial_max_stream_data_bidi_local`.
    pub initial_max_stream_data_bidi_local: Option<u64>,
    /// `initial_max_stream_data_bidi_remote`.
    pub initial_max_stream_data_bidi_remote: Option<u64>,
    /// `initial_max_stream_data_uni`.
    pub initial_max_stream_data_uni: Option<u64>,
    /// `initial_max_streams_bidi`.
    pub initial_max_streams_bidi: Option<u64>,
    /// `initial_max_streams_uni`.
    pub initial_max_streams_uni: Option<u64>,
    /// `disable_active_migration`.
    pub disable_active_migration: Option<bool>,
}

impl QuicDatagram {
    /// Sum of the packet sizes: the UDP payload size.
    pub fn size(&self) -> u64 {
        self.packets.iter().map(|p| p.size).sum()
    }

    /// The packets without their frames, in order (what a trace of a drop shows).
    pub fn packet_refs(&self) -> Vec<PacketRef> {
        self.packets
            .iter()
            .map(|p| PacketRef {
                packet_type: p.ty,
                packet_number: p.pn,
                size: p.size,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints() {
        assert_eq!(varint_len(0), 1);
        assert_eq!(varint_len(63), 1);
        assert_eq!(varint_len(64), 2);
        assert_eq!(varint_len(16383), 2);
        assert_eq!(varint_len(16384), 4);
        assert_eq!(varint_len((1 << 30) - 1), 4);
        assert_eq!(varint_len(1 << 30), 8);
    }

    #[test]
    fn packet_number_lengths() {
        // RFC 9000 A.2 example: largest acked 0xabe8b3, sending 0xac5c02 -> 16 bits.
        assert_eq!(pn_len(0xac5c02, Some(0xabe8b3)), 2);
        // ... sending 0xace8fe -> 24 bits.
        assert_eq!(pn_len(0xace8fe, Some(0xabe8b3)), 3);
        assert_eq!(pn_len(0, None), 1);
        assert_eq!(pn_len(127, None), 2);
    }

    #[test]
    fn ack_sizes() {
        // One range [0, 10], delay 0: type, largest, delay, count, first range.
        assert_eq!(ack_frame_size(&[(0, 10)], 0), 5);
        // Two ranges: + gap + length.
        assert_eq!(ack_frame_size(&[(8, 10), (0, 5)], 0), 7);
    }

    #[test]
    fn stream_and_header_sizes() {
        assert_eq!(stream_frame_size(0, 0, 100), 1 + 1 + 2 + 100);
        assert_eq!(stream_frame_size(4, 1000, 1000), 1 + 1 + 2 + 2 + 1000);
        // Short header with 8-byte DCID: 9 bytes before the packet number.
        assert_eq!(header_len_without_pn(PacketType::OneRtt, 8, 8, 0), 9);
        // Initial, 8-byte CIDs, no token: 1+4+1+8+1+8+1 = 24.
        assert_eq!(header_len_without_pn(PacketType::Initial, 8, 8, 0), 24);
        assert_eq!(packet_size(9, PacketType::OneRtt, 1, 100), 9 + 1 + 100 + 16);
        assert_eq!(
            packet_size(24, PacketType::Initial, 1, 100),
            24 + 2 + 1 + 100 + 16
        );
    }
}

//! SCTP packet and chunk descriptors carried in [`crate::packet::Payload::Sctp`]
//! (RFC 9260).
//!
//! Payload bytes are never materialised: a chunk is a descriptor (TSN, stream, lengths,
//! gap blocks) and [`Chunk::wire_size`] gives the bytes its RFC 9260 §3 encoding takes,
//! padding included, so packet sizes, serialization times and queue occupancy are honest.
//!
//! # Byte accounting
//! An SCTP packet is the 12-byte common header (§3.1: ports, verification tag, checksum)
//! followed by chunks; every chunk is padded to a multiple of 4 bytes (§3.2, the padding
//! counts on the wire, not in the chunk's Length field). `Datagram.size` is the SCTP
//! packet ([`SctpPacket::size`]: the IP payload). The link adds its per-packet `overhead`
//! on top: 20 B ([`IPV4_HEADER`]) gives native SCTP over IPv4; the links' default 28 B
//! (IPv4 + UDP) gives SCTP over UDP (RFC 6951, as usrsctp / WebRTC run it), 8 B more per
//! packet.
//!
//! Sizes, RFC 9260 §3.3:
//! - DATA (§3.3.1): 16-byte header (type, flags, length, TSN, stream identifier, stream
//!   sequence number, payload protocol identifier) + user data, padded;
//! - SACK (§3.3.4): 16 bytes (header, cumulative TSN ack, a_rwnd, number of gap blocks,
//!   number of duplicate TSNs) + 4 per gap ack block + 4 per duplicate TSN;
//! - INIT / INIT-ACK (§3.3.2, §3.3.3): 20 bytes (header, initiate tag, a_rwnd, outbound and
//!   inbound stream counts, initial TSN) + parameters (TLVs, §3.2.1, each padded);
//!   INIT-ACK carries the State Cookie parameter (4 + cookie bytes);
//! - COOKIE-ECHO (§3.3.11): 4 + cookie bytes; COOKIE-ACK (§3.3.12): 4;
//! - SHUTDOWN (§3.3.8): 8; SHUTDOWN-ACK (§3.3.9): 4; SHUTDOWN-COMPLETE (§3.3.13): 4.
//!
//! TSNs and stream sequence numbers are 32- and 16-bit serial numbers on the wire
//! (§1.6); the model numbers them without wrapping (`u64`), which changes no size.

/// IPv4 header without options (RFC 791), bytes: the path MTU minus this is the largest
/// SCTP packet.
pub const IPV4_HEADER: u64 = 20;
/// SCTP common header (RFC 9260 §3.1): source and destination ports, verification tag,
/// checksum.
pub const COMMON_HEADER: u64 = 12;
/// Chunk header: type, flags, length (RFC 9260 §3.2).
pub const CHUNK_HEADER: u64 = 4;
/// DATA chunk header (RFC 9260 §3.3.1): chunk header + TSN + stream identifier + stream
/// sequence number + payload protocol identifier.
pub const DATA_HEADER: u64 = 16;
/// SACK chunk without gap blocks and duplicate TSNs (RFC 9260 §3.3.4).
pub const SACK_FIXED: u64 = 16;
/// One gap ack block in a SACK (start and end offsets, 2 bytes each; §3.3.4).
pub const GAP_BLOCK: u64 = 4;
/// One duplicate TSN in a SACK (§3.3.4).
pub const DUP_TSN: u64 = 4;
/// INIT and INIT-ACK fixed part (RFC 9260 §3.3.2, §3.3.3).
pub const INIT_FIXED: u64 = 20;
/// A TLV parameter's header (type, length; §3.2.1).
pub const PARAM_HEADER: u64 = 4;
/// SHUTDOWN chunk (header + cumulative TSN ack; §3.3.8).
pub const SHUTDOWN_LEN: u64 = 8;

/// `n` rounded up to a multiple of 4 (chunk and parameter padding, RFC 9260 §3.2).
pub fn pad4(n: u64) -> u64 {
    n.div_ceil(4) * 4
}

/// Wire size of a DATA chunk carrying `len` bytes of user data (padded, §3.3.1).
pub fn data_chunk_size(len: u64) -> u64 {
    pad4(DATA_HEADER + len)
}

/// Wire size of a SACK with `gaps` gap ack blocks and `dups` duplicate TSNs (§3.3.4).
pub fn sack_size(gaps: u64, dups: u64) -> u64 {
    SACK_FIXED + GAP_BLOCK * gaps + DUP_TSN * dups
}

/// The parameters of an INIT or INIT-ACK (RFC 9260 §3.3.2.1, §3.3.3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InitParams {
    /// Initiate Tag (the verification tag the sender expects; the model uses the
    /// connection number).
    pub initiate_tag: u64,
    /// Advertised Receiver Window Credit (bytes).
    pub a_rwnd: u64,
    /// Number of Outbound Streams the sender wants.
    pub outbound_streams: u64,
    /// Maximum Inbound Streams the sender accepts.
    pub inbound_streams: u64,
    /// Initial TSN.
    pub initial_tsn: u64,
    /// Bytes of optional parameters other than the State Cookie (TLVs, already padded:
    /// e.g. Supported Address Types, 8 B for IPv4 only, §3.3.2.1).
    pub other_params: u64,
}

/// One DATA chunk (RFC 9260 §3.3.1) as a descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataChunk {
    /// Transmission Sequence Number (association-wide, one per chunk).
    pub tsn: u64,
    /// The workload stream the message belongs to: which request or response (the
    /// application's framing, as a request names its object; not a wire field). Equals
    /// `sid` unless the association reuses stream numbers (more workload streams than
    /// negotiated streams).
    pub stream: u64,
    /// Stream identifier on the wire (§3.3.1): the SCTP stream number.
    pub sid: u64,
    /// Stream sequence number of the message (per stream number, ordered delivery).
    pub ssn: u64,
    /// Byte offset of this fragment in the stream (the order SSN + B/E imply; carried
    /// for the simulation's reassembly, not a wire field).
    pub offset: u64,
    /// User data bytes (the stream bytes this fragment carries; 0 only for the 1-byte
    /// end-of-stream marker of an empty final message, see [`DataChunk::wire_len`]).
    pub len: u64,
    /// B bit: first fragment of a message.
    pub begin: bool,
    /// E bit: last fragment of a message.
    pub end: bool,
    /// The message ends the stream (the workload's framing: its end-of-stream mark).
    pub fin: bool,
}

impl DataChunk {
    /// User data bytes on the wire: `len`, or 1 for an empty end-of-stream message (a
    /// DATA chunk carries at least one byte, §3.3.1).
    pub fn wire_len(&self) -> u64 {
        self.len.max(1)
    }
}

/// One SACK chunk (RFC 9260 §3.3.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SackChunk {
    /// Cumulative TSN Ack: the highest TSN received in sequence.
    pub cum_tsn: u64,
    /// Advertised Receiver Window Credit (bytes).
    pub a_rwnd: u64,
    /// Gap ack blocks as inclusive absolute TSN ranges `(start, end)` above `cum_tsn + 1`,
    /// ascending (the wire carries them as 16-bit offsets from `cum_tsn`).
    pub gaps: Vec<(u64, u64)>,
    /// Duplicate TSNs received since the last SACK.
    pub dups: Vec<u64>,
}

/// One chunk, as a descriptor (RFC 9260 §3.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Chunk {
    /// INIT (§3.3.2).
    Init(InitParams),
    /// INIT-ACK (§3.3.3) with a State Cookie of `cookie` bytes.
    InitAck {
        /// The responder's parameters.
        params: InitParams,
        /// State Cookie length (bytes, before padding).
        cookie: u64,
    },
    /// COOKIE-ECHO (§3.3.11) echoing a cookie of `cookie` bytes.
    CookieEcho {
        /// Cookie length (bytes).
        cookie: u64,
    },
    /// COOKIE-ACK (§3.3.12).
    CookieAck,
    /// DATA (§3.3.1).
    Data(DataChunk),
    /// SACK (§3.3.4).
    Sack(SackChunk),
    /// SHUTDOWN (§3.3.8).
    Shutdown {
        /// Cumulative TSN Ack.
        cum_tsn: u64,
    },
    /// SHUTDOWN-ACK (§3.3.9).
    ShutdownAck,
    /// SHUTDOWN-COMPLETE (§3.3.13).
    ShutdownComplete,
}

impl Chunk {
    /// Bytes of the chunk on the wire, padding included.
    pub fn wire_size(&self) -> u64 {
        match self {
            Chunk::Init(p) => INIT_FIXED + p.other_params,
            Chunk::InitAck { params, cookie } => {
                INIT_FIXED + params.other_params + pad4(PARAM_HEADER + cookie)
            }
            Chunk::CookieEcho { cookie } => pad4(CHUNK_HEADER + cookie),
            Chunk::CookieAck | Chunk::ShutdownAck | Chunk::ShutdownComplete => CHUNK_HEADER,
            Chunk::Data(d) => data_chunk_size(d.wire_len()),
            Chunk::Sack(s) => sack_size(s.gaps.len() as u64, s.dups.len() as u64),
            Chunk::Shutdown { .. } => SHUTDOWN_LEN,
        }
    }

    /// A short name (`"DATA"`, `"SACK"`, ...), for traces.
    pub fn name(&self) -> &'static str {
        match self {
            Chunk::Init(_) => "INIT",
            Chunk::InitAck { .. } => "INIT_ACK",
            Chunk::CookieEcho { .. } => "COOKIE_ECHO",
            Chunk::CookieAck => "COOKIE_ACK",
            Chunk::Data(_) => "DATA",
            Chunk::Sack(_) => "SACK",
            Chunk::Shutdown { .. } => "SHUTDOWN",
            Chunk::ShutdownAck => "SHUTDOWN_ACK",
            Chunk::ShutdownComplete => "SHUTDOWN_COMPLETE",
        }
    }
}

/// One SCTP packet: the common header's verification tag and the bundled chunks
/// (RFC 9260 §3, §6.10 bundling).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SctpPacket {
    /// Verification tag (§3.1); the model puts the connection number here.
    pub vtag: u64,
    /// A number the sender gives its packets (for traces; not a wire field: SCTP numbers
    /// chunks, not packets).
    pub number: u64,
    /// The chunks, in order.
    pub chunks: Vec<Chunk>,
}

impl SctpPacket {
    /// Bytes of the packet: common header + chunks (the IP payload).
    pub fn size(&self) -> u64 {
        COMMON_HEADER + self.chunks.iter().map(Chunk::wire_size).sum::<u64>()
    }

    /// The DATA chunks it carries.
    pub fn data(&self) -> impl Iterator<Item = &DataChunk> + '_ {
        self.chunks.iter().filter_map(|c| match c {
            Chunk::Data(d) => Some(d),
            _ => None,
        })
    }
}

/// What an SCTP endpoint announces at association setup (for traces).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SctpParameters {
    /// Its INIT / INIT-ACK parameters.
    pub init: InitParams,
    /// Path MTU (bytes, IP packet).
    pub mtu: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(len: u64) -> Chunk {
        Chunk::Data(DataChunk {
            tsn: 1,
            stream: 0,
            sid: 0,
            ssn: 0,
            offset: 0,
            len,
            begin: true,
            end: true,
            fin: false,
        })
    }

    /// RFC 9260 §3.3.1: 16-byte DATA header, user data padded to 4 bytes; §3.3.4: SACK
    /// 16 + 4 per gap block + 4 per duplicate TSN; §3.1: 12-byte common header.
    #[test]
    fn chunk_sizes_follow_rfc_9260_section_3() {
        assert_eq!(data(1452).wire_size(), 1468);
        assert_eq!(data(1).wire_size(), 20);
        assert_eq!(data(5).wire_size(), 24);
        assert_eq!(
            data(0).wire_size(),
            20,
            "empty end-of-stream message: 1 byte"
        );
        let sack = Chunk::Sack(SackChunk {
            cum_tsn: 10,
            a_rwnd: 1000,
            gaps: vec![(12, 13), (15, 15)],
            dups: vec![4],
        });
        assert_eq!(sack.wire_size(), 16 + 8 + 4);
        let p = InitParams {
            initiate_tag: 1,
            a_rwnd: 65535,
            outbound_streams: 10,
            inbound_streams: 10,
            initial_tsn: 1,
            other_params: 8,
        };
        assert_eq!(Chunk::Init(p).wire_size(), 28);
        // State cookie of 37 bytes: 4 + 37 = 41 -> 44 padded.
        assert_eq!(
            Chunk::InitAck {
                params: p,
                cookie: 37
            }
            .wire_size(),
            28 + 44
        );
        assert_eq!(Chunk::CookieEcho { cookie: 37 }.wire_size(), 44);
        assert_eq!(Chunk::CookieAck.wire_size(), 4);
        assert_eq!(Chunk::Shutdown { cum_tsn: 3 }.wire_size(), 8);
        // A full packet at a 1500-byte IPv4 MTU: 12 + 16 + 1452 = 1480 = 1500 - 20.
        let pkt = SctpPacket {
            vtag: 0,
            number: 0,
            chunks: vec![data(1452)],
        };
        assert_eq!(pkt.size() + IPV4_HEADER, 1500);
        // Bundling: COOKIE-ECHO first, then DATA.
        let pkt = SctpPacket {
            vtag: 0,
            number: 0,
            chunks: vec![Chunk::CookieEcho { cookie: 200 }, data(100)],
        };
        assert_eq!(pkt.size(), 12 + 204 + 116);
        assert_eq!(pkt.data().count(), 1);
    }
}

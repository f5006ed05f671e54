//! TCP segment descriptors carried in [`crate::packet::Payload::Tcp`], with their exact
//! header sizes. Payload bytes are never materialised: a segment says which range of the
//! connection's byte stream it carries and which application records (TLS handshake
//! messages, HTTP/2-style DATA frames) overlap that range.
//!
//! # Byte accounting
//! An IPv4 packet carrying a TCP segment is `20 (IPv4, RFC 791) + 20 (TCP fixed header,
//! RFC 9293 §3.1) + options + payload` bytes. Options, as Linux lays them out:
//! - SYN and SYN-ACK (RFC 9293 §3.7.1, RFC 7323 §2.2 / §3.2, RFC 2018 §2): MSS (4),
//!   SACK-permitted (2), Timestamps (10), NOP (1) + Window Scale (3): 20 bytes with
//!   everything on; without timestamps MSS (4) + NOP NOP SACK-permitted (4) + NOP Window
//!   Scale (4) = 12 ([`syn_options_len`]).
//! - every other segment: Timestamps (RFC 7323 §3.2: kind, length, TSval, TSecr = 10
//!   bytes) after two NOPs = [`TIMESTAMPS_OPTION_LEN`] = 12 when timestamps are on; SACK
//!   blocks (RFC 2018 §3: kind, length and 8 bytes per block) after two NOPs =
//!   `4 + 8n` ([`sack_option_len`]). The 40-byte option space holds at most 3 blocks
//!   with timestamps and 4 without ([`max_sack_blocks`]).
//!
//! The MSS a side announces excludes the IP and TCP headers and the options (RFC 9293
//! §3.7.1, RFC 6691 §2): a full data segment carries `MSS - 12` payload bytes when
//! timestamps are on (1448 with the default 1460).
//!
//! [`crate::packet::Datagram::size`] is the size the link adds its per-packet `overhead`
//! to; the links' default overhead is 28 B (IPv4 + UDP, for QUIC and CBR). A TCP segment
//! has no UDP header, so its datagram size is the IP packet size minus
//! [`LINK_DEFAULT_OVERHEAD`] ([`Segment::datagram_size`]): on a link with the default
//! overhead it occupies exactly `IPv4 + TCP + options + payload` bytes, and a link
//! overhead raised by L2 framing adds that framing to TCP and QUIC alike.

/// IPv4 header without options (RFC 791 §3.1).
pub const IPV4_HEADER_LEN: u64 = 20;
/// TCP fixed header without options (RFC 9293 §3.1).
pub const TCP_HEADER_LEN: u64 = 20;
/// The links' default per-packet overhead, IPv4 (20) + UDP (8) headers, that
/// [`Segment::datagram_size`] is taken relative to.
pub const LINK_DEFAULT_OVERHEAD: u64 = 28;
/// Timestamps option (RFC 7323 §3.2: 10 bytes) aligned with two NOPs.
pub const TIMESTAMPS_OPTION_LEN: u64 = 12;
/// The TCP option space: data offset is at most 15 words (RFC 9293 §3.1), 60 - 20 bytes.
pub const MAX_OPTIONS_LEN: u64 = 40;

/// Bytes of a SACK option with `blocks` blocks (RFC 2018 §3: `2 + 8n`), aligned with two
/// NOPs; 0 without blocks.
pub fn sack_option_len(blocks: usize) -> u64 {
    if blocks == 0 {
        0
    } else {
        4 + 8 * blocks as u64
    }
}

/// The most SACK blocks that fit the option space next to the timestamps option (3) or
/// without it (4) (RFC 2018 §3).
pub fn max_sack_blocks(timestamps: bool) -> usize {
    let room = MAX_OPTIONS_LEN - if timestamps { TIMESTAMPS_OPTION_LEN } else { 0 };
    ((room - 4) / 8) as usize
}

/// Option bytes of a SYN or SYN-ACK (see the module documentation): MSS 4, SACK-permitted
/// 2 (+2 NOPs without timestamps), Timestamps 10, Window Scale 3 + 1 NOP.
pub fn syn_options_len(o: &SynOptions) -> u64 {
    let mut n = 4; // MSS (RFC 9293 §3.2)
    if o.timestamps {
        // SACK-permitted (2) + Timestamps (10) share one aligned 12-byte run; without
        // SACK-permitted two NOPs take its place.
        n += 12;
    } else if o.sack_permitted {
        n += 4; // NOP NOP SACK-permitted
    }
    if o.window_scale.is_some() {
        n += 4; // NOP + Window Scale (RFC 7323 §2.2)
    }
    if let Some(cookie) = o.fast_open {
        // RFC 7413 §4.1.1: kind 34, length 2 + cookie; options end on a 32-bit word
        // (RFC 9293 §3.1, NOP padding).
        n += (2 + cookie).next_multiple_of(4);
    }
    n
}

/// What a SYN or SYN-ACK announces (RFC 9293 §3.7.1, RFC 7323, RFC 2018).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SynOptions {
    /// Maximum segment size, bytes (excluding headers and options).
    pub mss: u64,
    /// Window scale shift (RFC 7323 §2), when offered.
    pub window_scale: Option<u8>,
    /// SACK-permitted (RFC 2018 §2).
    pub sack_permitted: bool,
    /// Timestamps offered (RFC 7323 §3).
    pub timestamps: bool,
    /// TCP Fast Open option (RFC 7413 §4.1.1, kind 34) carrying a cookie of this many
    /// bytes; `Some(0)`: an empty option, the client's cookie request. `None`: absent.
    pub fast_open: Option<u64>,
}

/// Length of the Fast Open cookie the server issues: 8 bytes (Linux
/// `TCP_FASTOPEN_COOKIE_SIZE`; RFC 7413 §4.1.1 allows 4 to 16).
pub const FAST_OPEN_COOKIE_LEN: u64 = 8;

/// The TLS handshake messages the model sends as records on the byte stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TlsMessage {
    /// ClientHello (RFC 8446 §4.1.2, RFC 5246 §7.4.1.2).
    ClientHello,
    /// The server's first flight: TLS 1.3 ServerHello, EncryptedExtensions, Certificate,
    /// CertificateVerify, Finished (RFC 8446 §2); TLS 1.2 ServerHello, Certificate,
    /// ServerKeyExchange, ServerHelloDone (RFC 5246 §7.3).
    ServerFlight,
    /// The client's second flight: TLS 1.3 Finished; TLS 1.2 ClientKeyExchange,
    /// ChangeCipherSpec, Finished.
    ClientFinished,
    /// TLS 1.2 only: the server's ChangeCipherSpec and Finished.
    ServerFinished,
    /// A ClientHello offering a session ticket as a PSK with early_data (RFC 8446
    /// §4.2.10-4.2.11): the application data behind it is 0-RTT data.
    ClientHelloPsk,
    /// The server's flight on a resumed handshake (ServerHello, EncryptedExtensions,
    /// Finished; RFC 8446 §2.2-2.3).
    ResumedServerFlight,
    /// NewSessionTicket (RFC 8446 §4.6.1), after the client's Finished.
    NewSessionTicket,
}

/// What one record of the byte stream is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordKind {
    /// A TLS handshake message (or flight).
    Tls(TlsMessage),
    /// An HTTP/2-style DATA frame (RFC 9113 §6.1) of stream `stream`: `payload`
    /// application bytes, END_STREAM when `fin`; its record also holds the 9-byte frame
    /// header (RFC 9113 §4.1) and the TLS record overhead.
    Data {
        /// Stream identifier (RFC 9113 §5.1.1: odd client-initiated).
        stream: u64,
        /// Application bytes carried.
        payload: u64,
        /// END_STREAM flag.
        fin: bool,
    },
}

/// A record: `len` bytes of the byte stream from `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// First byte, as an offset into the byte stream (sequence number minus ISN + 1).
    pub offset: u64,
    /// Bytes on the stream (headers included).
    pub len: u64,
    /// What it is.
    pub kind: RecordKind,
}

impl Record {
    /// One past the last byte.
    pub fn end(&self) -> u64 {
        self.offset + self.len
    }
}

/// Control flags the model uses (RFC 9293 §3.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    /// SYN.
    pub syn: bool,
    /// ACK: `ack` is valid.
    pub ack: bool,
    /// FIN.
    pub fin: bool,
    /// ECE, ECN-Echo (RFC 3168 §6.1): on a SYN, with CWR, asks for ECN; on a SYN-ACK,
    /// alone, accepts it; afterwards, a CE-marked segment arrived and no CWR since.
    pub ece: bool,
    /// CWR, Congestion Window Reduced (RFC 3168 §6.1.2): the sender reduced its window
    /// after an ECE.
    pub cwr: bool,
}

/// One TCP segment.
///
/// Sequence numbers are byte-stream offsets: `seq` 0 is the first data byte (the ISN + 1
/// of RFC 9293); the SYN's own sequence number is kept out of the stream and its
/// acknowledgement is the SYN-ACK (client) or the first ACK (server).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The connection's number in a connection sequence (0 otherwise); stands for the
    /// 4-tuple.
    pub conn: u64,
    /// Control flags.
    pub flags: Flags,
    /// First payload byte.
    pub seq: u64,
    /// Payload bytes.
    pub len: u64,
    /// Cumulative acknowledgement: the next byte expected (valid with `flags.ack`).
    pub ack: u64,
    /// Receive window from `ack`, bytes (the scaled 16-bit field, unscaled here).
    pub window: u64,
    /// SACK blocks `[start, end)` (RFC 2018 §3), most recent first.
    pub sack: Vec<(u64, u64)>,
    /// Options of a SYN / SYN-ACK.
    pub syn_options: Option<SynOptions>,
    /// Carries the timestamps option (RFC 7323 §3.2: on every segment once negotiated).
    pub timestamps: bool,
    /// TSval (RFC 7323 §3.2): the sender's clock in ms ticks when it was sent (with
    /// `timestamps`).
    pub ts_val: u64,
    /// TSecr (RFC 7323 §4.3): the TSval this end echoes (`TS.Recent`).
    pub ts_ecr: u64,
    /// The records overlapping `[seq, seq + len)` (whole records, in offset order).
    pub records: Vec<Record>,
    /// Sent again (a retransmission), for traces.
    pub retransmission: bool,
}

impl Segment {
    /// TCP header with options, bytes.
    pub fn header_len(&self) -> u64 {
        let opts = match &self.syn_options {
            Some(o) => syn_options_len(o),
            None => {
                (if self.timestamps {
                    TIMESTAMPS_OPTION_LEN
                } else {
                    0
                }) + sack_option_len(self.sack.len())
            }
        };
        TCP_HEADER_LEN + opts
    }

    /// The IPv4 packet: IP header + TCP header + options + payload.
    pub fn ip_len(&self) -> u64 {
        IPV4_HEADER_LEN + self.header_len() + self.len
    }

    /// The datagram size the link adds its overhead to: [`Segment::ip_len`] minus
    /// [`LINK_DEFAULT_OVERHEAD`] (see the module documentation).
    pub fn datagram_size(&self) -> u64 {
        self.ip_len() - LINK_DEFAULT_OVERHEAD
    }

    /// A frameless copy (no records) for traces of dropped datagrams.
    pub fn summary(&self) -> SegmentRef {
        SegmentRef {
            seq: self.seq,
            len: self.len,
            ack: self.flags.ack.then_some(self.ack),
            syn: self.flags.syn,
            fin: self.flags.fin,
            sack_blocks: self.sack.len() as u64,
        }
    }
}

/// What a trace says of a dropped TCP segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentRef {
    /// First payload byte.
    pub seq: u64,
    /// Payload bytes.
    pub len: u64,
    /// Cumulative acknowledgement, when the ACK flag is set.
    pub ack: Option<u64>,
    /// SYN flag.
    pub syn: bool,
    /// FIN flag.
    pub fin: bool,
    /// SACK blocks carried.
    pub sack_blocks: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(len: u64, ts: bool, sack: usize) -> Segment {
        Segment {
            conn: 0,
            flags: Flags {
                ack: true,
                ..Flags::default()
            },
            seq: 0,
            len,
            ack: 0,
            window: 0,
            sack: vec![(0, 1); sack],
            syn_options: None,
            timestamps: ts,
            ts_val: 0,
            ts_ecr: 0,
            records: Vec::new(),
            retransmission: false,
        }
    }

    #[test]
    fn header_sizes() {
        // A full Linux data segment: 20 + 20 + 12 + 1448 = 1500 (Ethernet MTU).
        assert_eq!(seg(1448, true, 0).ip_len(), 1500);
        assert_eq!(seg(1448, true, 0).datagram_size(), 1472);
        // A pure ACK: 52 bytes with timestamps, 40 without.
        assert_eq!(seg(0, true, 0).ip_len(), 52);
        assert_eq!(seg(0, false, 0).ip_len(), 40);
        // SACK: 4 + 8n, at most 3 blocks next to timestamps (40-byte option space).
        assert_eq!(seg(0, true, 3).header_len(), 20 + 12 + 28);
        assert_eq!(max_sack_blocks(true), 3);
        assert_eq!(max_sack_blocks(false), 4);
        assert_eq!(seg(0, false, 4).header_len(), 20 + 36);
        let all = SynOptions {
            mss: 1460,
            window_scale: Some(7),
            sack_permitted: true,
            timestamps: true,
            fast_open: None,
        };
        // Linux SYN: 20 option bytes, a 60-byte IP packet.
        assert_eq!(syn_options_len(&all), 20);
        let no_ts = SynOptions {
            timestamps: false,
            ..all
        };
        assert_eq!(syn_options_len(&no_ts), 12);
        // RFC 7413 §4.1.1: a cookie request adds 2 bytes (padded to 4), an 8-byte cookie
        // 10 (padded to 12).
        let request = SynOptions {
            fast_open: Some(0),
            ..all
        };
        assert_eq!(syn_options_len(&request), 24);
        let cookie = SynOptions {
            fast_open: Some(FAST_OPEN_COOKIE_LEN),
            ..all
        };
        assert_eq!(syn_options_len(&cookie), 32);
        let bare = SynOptions {
            mss: 536,
            window_scale: None,
            sack_permitted: false,
            timestamps: false,
            fast_open: None,
        };
        assert_eq!(syn_options_len(&bare), 4);
    }
}

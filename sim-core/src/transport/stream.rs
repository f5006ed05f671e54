//! The stream-transport interface workloads are written against ([`StreamTransport`]):
//! open a stream, write, finish, read, the events a workload reacts to
//! ([`StreamEvent`]) and the workload's reader the transport calls ([`AppReader`]). Protocol-neutral: QUIC implements it now
//! (`quic/stream_transport.rs`); TCP and SCTP implement it later. The engine-facing half
//! (datagrams, timers, metrics, creating and resuming connections) is
//! [`crate::driver::TransportDriver`].
//!
//! # The model
//! A connection carries numbered bidirectional streams. Either side opens streams within
//! the limit the peer grants; a stream is a byte stream ended by a FIN. The workload
//! writes lengths (the simulator moves byte counts, not contents) and learns from events
//! when the connection can carry data, when a stream has been read completely and when
//! everything it wrote was acknowledged.
//!
//! # Reading
//! Reading belongs to the workload: its application reader (an [`AppReader`], e.g.
//! [`crate::workloads::reader::Reader`]: at once, or paced at a read rate) calls
//! [`StreamTransport::read`] to consume received in-order bytes, and consumption is what
//! returns receive-window credit. When bytes become readable the transport tells the
//! reader at once — [`AppReader::on_readable`] is the `Readable` event, delivered
//! synchronously while the transport processes the data instead of queued with the
//! [`StreamEvent`]s — and a reader's own deadline ([`AppReader::deadline`]) is one of the
//! connection's timers, fired in the transport's timer order
//! ([`AppReader::on_deadline`]). The engine-facing calls that can make data readable or
//! fire timers take the reader ([`crate::driver::TransportDriver::handle_datagram`],
//! `handle_timeout`, `poll_timeout`).
//!
//! Why synchronous: the receive-window policies decide their updates at each
//! consumption, and the model consumes per received STREAM frame. A `Readable` event
//! queued with the others would be seen once per datagram (after the transport handled
//! all of it), and the advertised limits would differ. The workload sees the progress
//! ([`StreamTransport::stream_read_state`]) and [`StreamEvent::ReadComplete`] when a
//! stream was read up to its FIN.
//!
//! How each transport maps reading: QUIC consumes stream bytes in order from each
//! stream's receive buffer, calls the reader per STREAM frame that made bytes readable,
//! and returns credit with MAX_STREAM_DATA / MAX_DATA (RFC 9000 §4.2). TCP with an
//! HTTP/2-style multiplexer has one in-order byte stream: the multiplexer parses DATA
//! frames off it as TCP delivers in sequence order, a multiplexed stream becomes readable
//! (and the reader is called) only when the bytes before it in the TCP stream arrived
//! (head-of-line blocking), [`StreamTransport::read`] consumes from that stream's share,
//! and credit returns twice: the TCP receive window reopens as the multiplexer drains the
//! byte stream (RFC 9293 §3.8.6) and WINDOW_UPDATE per stream and for the connection as
//! the application reads (RFC 9113 §6.9). SCTP delivers whole messages per stream (in
//! order within a stream, no head-of-line blocking across streams): a stream becomes
//! readable when a complete message is reassembled, `read` consumes from it, and credit
//! returns through the a_rwnd of its SACKs (RFC 9260 §6.2).
//!
//! # How each transport maps
//! - **QUIC** (RFC 9000): streams are QUIC bidirectional streams (IDs `4k` client-initiated,
//!   `4k + 1` server-initiated, §2.1); the stream limit is MAX_STREAMS (§4.6);
//!   [`StreamEvent::Connected`] is handshake completion; [`StreamEvent::EarlyDataReady`] is
//!   0-RTT with a session ticket (RFC 9001 §4.6.1); acknowledgement of a stream is the ACK
//!   of all its STREAM frames and the FIN; [`StreamTransport::close`] sends
//!   CONNECTION_CLOSE (§10.2) and an idle connection closes at the idle timeout (§10.1).
//! - **TCP + an HTTP/2-style multiplexer** (RFC 9293, RFC 9113): one TCP connection
//!   carries the multiplexer's streams (odd IDs client-initiated, §5.1.1); the stream limit
//!   is SETTINGS_MAX_CONCURRENT_STREAMS; `Connected` is the end of the TCP (and TLS)
//!   handshake; `EarlyDataReady` is TCP Fast Open / TLS 1.3 early data; a stream is
//!   acknowledged when the TCP byte range holding its DATA frames (END_STREAM included) is
//!   cumulatively acknowledged; `close` is GOAWAY + FIN; idle close is a keep-alive
//!   timeout. Head-of-line blocking shows as the multiplexer's streams becoming readable
//!   only in TCP sequence order.
//! - **SCTP** (RFC 9260): streams are SCTP stream numbers of one association (the limit is
//!   the negotiated number of outbound streams, raised by RFC 6525 reconfiguration); a FIN
//!   is the last fragment of a message marked end-of-stream by the workload's framing;
//!   `Connected` is COOKIE-ACK; acknowledgement is the cumulative TSN covering the
//!   stream's last chunk; `close` is SHUTDOWN.

use crate::time::SimDuration;
use crate::time::SimTime;

/// A stream number as the transport numbers it (QUIC stream ID, HTTP/2 stream
/// identifier, SCTP stream number).
pub type StreamId = u64;

/// Which end of the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Side {
    /// Opens the connection (and, in today's workloads, the streams).
    Client,
    /// Accepts the connection.
    Server,
}

/// Why a connection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CloseKind {
    /// The idle timeout expired: closed silently.
    IdleTimeout,
    /// This end closed it ([`StreamTransport::close`]).
    LocalClose,
    /// The peer closed it.
    PeerClose,
    /// No network path was left (a migration whose new path failed validation).
    NoPath,
}

impl CloseKind {
    /// The spelling in connection reports (`close_reason`): `idle_timeout`,
    /// `local_close`, `peer_close`, `no_path`.
    pub fn name(self) -> &'static str {
        match self {
            CloseKind::IdleTimeout => "idle_timeout",
            CloseKind::LocalClose => "local_close",
            CloseKind::PeerClose => "peer_close",
            CloseKind::NoPath => "no_path",
        }
    }
}

/// Something the workload should know, in the order the transport produced it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamEvent {
    /// The handshake completed: streams may be opened and written.
    Connected,
    /// Resuming with early data (0-RTT): streams may be opened and written now, before
    /// the handshake completes, within the limits remembered from the earlier connection.
    EarlyDataReady,
    /// The peer raised the stream limit: more streams may be opened.
    StreamsAvailable,
    /// The peer opened this stream.
    StreamOpened(StreamId),
    /// Every byte of this stream up to its FIN was read by the application.
    ReadComplete(StreamId),
    /// Everything written on this stream, FIN included, was acknowledged.
    SendComplete(StreamId),
    /// The connection closed.
    Closed(CloseKind),
}

/// Read progress of one stream at the receiver (for time series).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamReadState {
    /// Bytes the application has read (consumed).
    pub read: u64,
    /// Receive-window credit advertised beyond what was read.
    pub window: u64,
    /// The receive window's size: what the credit is refilled to (grows with the
    /// auto-tuning allowances).
    pub window_size: u64,
}

/// One connection of a stream transport, as a workload drives it.
pub trait StreamTransport {
    /// This end of the connection.
    fn side(&self) -> Side;

    /// Takes the pending events, oldest first (empty when there are none).
    fn take_events(&mut self) -> Vec<StreamEvent>;

    /// Whether events are pending ([`Self::take_events`] would return some). `true`
    /// unless the transport says: a caller may only skip a connection on `false`.
    fn has_events(&self) -> bool {
        true
    }

    /// Opens a new locally initiated bidirectional stream, if the handshake state and the
    /// peer's stream limit allow (else `None`; [`StreamEvent::StreamsAvailable`] tells
    /// when to try again).
    fn open_stream(&mut self) -> Option<StreamId>;

    /// Writes `len` bytes on stream `id`, and the FIN when `fin` (nothing happens on a
    /// stream that does not exist).
    fn write(&mut self, id: StreamId, len: u64, fin: bool);

    /// Ends stream `id` without more data: a FIN.
    fn finish(&mut self, id: StreamId) {
        self.write(id, 0, true);
    }

    /// The ordinal of stream `id` among the streams of the side that opened it: `0` for
    /// the first stream a side opens, `1` for its second, ... (QUIC: `id / 4`).
    fn stream_index(&self, id: StreamId) -> u64;

    /// The ID of the `index`-th stream opened by `side` (the inverse of
    /// [`StreamTransport::stream_index`]).
    fn stream_id(&self, side: Side, index: u64) -> StreamId;

    /// Read progress of stream `id`, `None` while it does not exist.
    fn stream_read_state(&self, id: StreamId) -> Option<StreamReadState>;

    /// The application reads: consumes up to `max` of the in-order bytes received and
    /// not yet read on stream `id`, and returns how many it consumed (`0`, and nothing
    /// done, when none are readable or the stream does not exist). Consumption returns
    /// receive-window credit; reading up to the FIN queues [`StreamEvent::ReadComplete`].
    fn read(&mut self, now: SimTime, id: StreamId, max: u64) -> u64;

    /// The lowest-numbered stream above `after` (any stream when `None`) with readable
    /// bytes, and how many: `(stream, bytes)`; `None` when there is none.
    fn next_readable(&self, after: Option<StreamId>) -> Option<(StreamId, u64)>;

    /// Closes the connection now (graceful, no error).
    fn close(&mut self, now: SimTime);

    /// The connection closed (either way).
    fn is_closed(&self) -> bool;

    /// The connection's state is gone: nothing more is sent or accepted.
    fn is_terminated(&self) -> bool;

    /// The handshake is confirmed: the client may keep the session ticket the server
    /// issued with it.
    fn is_handshake_confirmed(&self) -> bool;

    /// The connection resumed an earlier session (a ticket the server accepted).
    fn is_resumed(&self) -> bool;

    /// The congestion window, bytes (for history samples).
    fn cwnd(&self) -> u64;

    /// The smoothed RTT (for history samples).
    fn smoothed_rtt(&self) -> SimDuration;
}

/// The application's reading of one connection, owned by the workload and called by the
/// transport synchronously (see [Reading](self#reading)): when bytes become readable and
/// when the reader's own deadline comes. It consumes through [`StreamTransport::read`] on
/// the transport it is handed (and should do nothing else with it: it runs in the middle
/// of the transport's input processing).
pub trait AppReader {
    /// The `Readable` event: stream `id` of `t` has new in-order bytes to read.
    fn on_readable(&mut self, now: SimTime, t: &mut dyn StreamTransport, id: StreamId);

    /// When the reader wants [`AppReader::on_deadline`] (`None`: never). The transport
    /// counts it among its timers while the connection is open.
    fn deadline(&self) -> Option<SimTime>;

    /// The deadline came (the transport calls it at [`AppReader::deadline`], in its own
    /// timer order).
    fn on_deadline(&mut self, now: SimTime, t: &mut dyn StreamTransport);

    /// `true` only while [`AppReader::on_readable`] does exactly
    /// `t.read(now, id, u64::MAX)` and nothing else: the transport may then consume the
    /// readable bytes itself, as that read would, instead of the call.
    fn reads_at_once(&self) -> bool {
        false
    }
}

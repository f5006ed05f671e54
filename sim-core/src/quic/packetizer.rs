//! Building frames into a packet's room, as functions over the state each frame kind
//! needs (not over the whole connection): ACK frames from a packet number space's
//! received ranges, CRYPTO frames from a space's handshake send buffer, STREAM frames
//! from the streams and the connection's send flow control. The connection's
//! `build_packet` chooses the packet type, header and padding and calls these in order
//! (ACK, control frames, CRYPTO or STREAM; RFC 9000 §12.4, §13).

use super::config::SchedulerKind;
use super::connection::SentInfo;
use super::flow_control::SendFlow;
use super::spaces::PnSpace;
use super::streams::{max_data_len, Chunk, SendBuf, Stream, StreamTable};
use crate::time::{SimDuration, SimTime};
use crate::wire::quic::{ack_frame_size, varint_len, AckRanges, Frame, FrameVec};

/// Appends `f` if it fits in `room` (and takes its bytes from `room`).
pub(crate) fn push_frame(f: Frame, frames: &mut FrameVec, room: &mut u64) -> bool {
    let n = f.wire_size();
    if n <= *room {
        *room -= n;
        frames.push(f);
        true
    } else {
        false
    }
}

/// Most emptied buffers a [`BufPool`] keeps (bounds its memory: about one window of
/// packets in flight needs one each at most, and a packet returns its buffers when
/// acknowledged or lost).
const POOL_MAX: usize = 1024;

/// Emptied buffers of sent-packet records kept for their allocations, so that a packet
/// in steady state allocates none for its recovery record: the retransmittable frames
/// and the ACK ranges of [`SentInfo`] come from here and return here when the packet is
/// acknowledged or declared lost. A buffer's contents never depend on where it came from.
#[derive(Debug, Default)]
pub(crate) struct BufPool {
    frames: Vec<Vec<Frame>>,
    ranges: Vec<Vec<(u64, u64)>>,
}

impl BufPool {
    /// An empty frame buffer (a kept one if any).
    pub(crate) fn frames(&mut self) -> Vec<Frame> {
        self.frames.pop().unwrap_or_default()
    }

    /// An empty range buffer (a kept one if any).
    pub(crate) fn ranges(&mut self) -> Vec<(u64, u64)> {
        self.ranges.pop().unwrap_or_default()
    }

    /// Keeps the buffers of a sent-packet record that is done with.
    pub(crate) fn recycle(&mut self, info: SentInfo) {
        let SentInfo {
            mut frames,
            ack_ranges,
            ..
        } = info;
        if frames.capacity() > 0 && self.frames.len() < POOL_MAX {
            frames.clear();
            self.frames.push(frames);
        }
        if let Some(mut r) = ack_ranges {
            if r.capacity() > 0 && self.ranges.len() < POOL_MAX {
                r.clear();
                self.ranges.push(r);
            }
        }
    }
}

/// Frames a lost packet's data may need again (RFC 9000 §13.3): never ACK, PADDING,
/// PING or PATH_*.
pub(crate) fn is_retransmittable(f: &Frame) -> bool {
    !matches!(
        f,
        Frame::Ack { .. }
            | Frame::Padding { .. }
            | Frame::Ping
            | Frame::PathChallenge(_)
            | Frame::PathResponse(_)
    )
}

/// The ACK frame of space `sp` fitting in `room` bytes, with its size: the most recent
/// `max_ack_ranges` ranges, largest first; ACK Delay encoded with our
/// `ack_delay_exponent`.
pub(crate) fn build_ack(
    sp: &PnSpace,
    now: SimTime,
    room: u64,
    max_ack_ranges: usize,
    ack_delay_exponent: u32,
) -> Option<(Frame, u64)> {
    let mut ranges: AckRanges = sp
        .to_ack
        .iter()
        .rev()
        .take(max_ack_ranges)
        .map(|(s, e)| (s, e - 1))
        .collect();
    if ranges.is_empty() {
        return None;
    }
    let largest = ranges[0].1;
    let delay = if sp.largest_recv == Some(largest) {
        now.saturating_since(sp.largest_recv_time)
    } else {
        SimDuration::ZERO
    };
    // RFC 9000 §19.3: ACK Delay in microseconds scaled down by 2^ack_delay_exponent.
    let ack_delay_encoded = (delay.as_nanos() / 1_000) >> ack_delay_exponent;
    loop {
        let size = ack_frame_size(&ranges, ack_delay_encoded);
        if size <= room {
            let f = Frame::Ack {
                ranges,
                ack_delay_encoded,
            };
            return Some((f, size));
        }
        ranges.pop();
        if ranges.is_empty() {
            return None;
        }
    }
}

/// CRYPTO frames from a space's handshake send buffer `cs`: retransmissions first, then
/// new bytes.
pub(crate) fn write_crypto_frames(
    cs: &mut SendBuf,
    frames: &mut FrameVec,
    room: &mut u64,
    info: &mut SentInfo,
) -> bool {
    let mut wrote = false;
    loop {
        let retx = cs.has_retx();
        let offset = if retx {
            cs.retx.first().map_or(cs.written, |r| r.0)
        } else {
            cs.sent
        };
        if !retx && cs.sent >= cs.written {
            break;
        }
        let fixed = 1 + varint_len(offset);
        let Some(max_len) = max_data_len(fixed, *room) else {
            break;
        };
        if max_len == 0 {
            break;
        }
        let chunk: Option<Chunk> = if retx {
            cs.next_retx(max_len)
        } else {
            cs.next_new(max_len, u64::MAX)
        };
        let Some(c) = chunk else { break };
        if c.len == 0 {
            break;
        }
        let f = Frame::Crypto {
            offset: c.offset,
            len: c.len,
        };
        *room -= f.wire_size();
        frames.push(f);
        info.retransmission |= c.retx;
        wrote = true;
    }
    wrote
}

/// What STREAM frames draw on: the streams, the connection's send flow control, the
/// scheduler and its round-robin cursor.
pub(crate) struct StreamSource<'a> {
    /// The streams, by ID.
    pub streams: &'a mut StreamTable,
    /// Connection-level send flow control.
    pub send_fc: &'a mut SendFlow,
    /// Which stream goes next.
    pub scheduler: SchedulerKind,
    /// The stream served last (round robin).
    pub rr_cursor: &'a mut Option<u64>,
    /// Stream bytes retransmitted (a counter of the connection's stats).
    pub bytes_retransmitted: &'a mut u64,
}

/// STREAM frames: retransmissions first (lowest stream ID first), then new data in
/// scheduler order within stream and connection flow control.
/// The smallest STREAM frame: type, a one-byte stream ID and a one-byte length (RFC 9000
/// §19.8; offset 0 has no Offset field). With less room `max_data_len` of every stream's
/// header (at least type and ID: 2 bytes, plus the length field's byte) is `None`.
const MIN_STREAM_FRAME: u64 = 3;

pub(crate) fn write_stream_frames(
    src: StreamSource<'_>,
    frames: &mut FrameVec,
    room: &mut u64,
    info: &mut SentInfo,
) -> bool {
    let StreamSource {
        streams,
        send_fc,
        scheduler,
        rr_cursor,
        bytes_retransmitted,
    } = src;
    let mut wrote = false;
    // Retransmissions (the index holds exactly the streams with something to resend).
    // Below `MIN_STREAM_FRAME` bytes of room no STREAM frame fits, whatever the stream
    // (`max_data_len` is `None` for every one): the loops stop without a scan.
    while *room >= MIN_STREAM_FRAME {
        let Some(id) = streams.first_retx() else {
            break;
        };
        let mut s = streams.get_mut(&id).expect("indexed");
        let offset = s.send.retx.first().map_or(s.send.written, |r| r.0);
        let fixed = 1 + varint_len(id) + if offset > 0 { varint_len(offset) } else { 0 };
        let Some(max_len) = max_data_len(fixed, *room) else {
            break;
        };
        if max_len == 0 && !s.send.retx.is_empty() {
            break;
        }
        let Some(c) = s.send.next_retx(max_len) else {
            break;
        };
        drop(s);
        let f = Frame::Stream {
            id,
            offset: c.offset,
            len: c.len,
            fin: c.fin,
        };
        *room -= f.wire_size();
        frames.push(f);
        *bytes_retransmitted += c.len;
        info.retransmission = true;
        wrote = true;
    }
    // New data.
    while *room >= MIN_STREAM_FRAME {
        let conn_credit = send_fc.credit();
        let eligible = |s: &Stream| {
            s.send.has_new() && (s.send.unsent() == 0 || (s.send_credit() > 0 && conn_credit > 0))
        };
        let pick = match scheduler {
            SchedulerKind::Sequential => streams.find_new(None, eligible),
            SchedulerKind::RoundRobin => streams.find_new_round_robin(*rr_cursor, eligible),
        };
        let Some(id) = pick else { break };
        let mut s = streams.get_mut(&id).expect("picked");
        let offset = s.send.sent;
        let fixed = 1 + varint_len(id) + if offset > 0 { varint_len(offset) } else { 0 };
        let Some(max_len) = max_data_len(fixed, *room) else {
            break;
        };
        if max_len == 0 && s.send.unsent() > 0 {
            break;
        }
        let credit = s.send_credit().min(conn_credit);
        let Some(c) = s.send.next_new(max_len, credit) else {
            break;
        };
        s.send_fc.on_sent(c.len);
        drop(s);
        send_fc.on_sent(c.len);
        let f = Frame::Stream {
            id,
            offset: c.offset,
            len: c.len,
            fin: c.fin,
        };
        *room -= f.wire_size();
        frames.push(f);
        *rr_cursor = Some(id);
        wrote = true;
    }
    wrote
}

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
use crate::wire::quic::{ack_frame_size, varint_len, AckRanges, EcnCounts, Frame, FrameVec};

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
/// packets in flight needs one each at most, and a packet returns its buffer when
/// acknowledged or lost).
const POOL_MAX: usize = 1024;

/// Emptied range buffers of ACK frames kept for their allocations: a frame's
/// [`AckRanges`] is shared by the packet (delivered to the peer) and its sent-packet
/// record ([`SentInfo`]), and returns here when the record is done with and the peer
/// dropped the frame (no other holder), so that a packet in steady state allocates none.
/// (The record's retransmittable frames live in the connection's
/// [`FrameSlab`](super::sent_frames::FrameSlab).) A buffer's contents never depend on
/// where it came from.
#[derive(Debug, Default)]
pub(crate) struct BufPool {
    /// Empty buffers no other value shares.
    ranges: Vec<AckRanges>,
}

impl BufPool {
    /// An empty range buffer that no other value shares (a kept one if any).
    pub(crate) fn ranges(&mut self) -> AckRanges {
        self.ranges.pop().unwrap_or_default()
    }

    /// Keeps an ACK frame's range buffer if nothing else holds it any more.
    pub(crate) fn recycle_ranges(&mut self, mut r: AckRanges) {
        if !r.is_empty() && r.is_unique() && self.ranges.len() < POOL_MAX {
            r.make_mut().clear();
            self.ranges.push(r);
        }
    }

    /// Keeps the range buffer of a sent-packet record that is done with (its frames
    /// are the slab's: the caller retires them). Inlined: most records carried no ACK
    /// frame, and then this is one test.
    #[inline]
    pub(crate) fn recycle(&mut self, info: SentInfo) {
        debug_assert!(info.frames.is_empty(), "frames retired before the record");
        if let Some(r) = info.ack_ranges {
            self.recycle_ranges(r);
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

/// An ACK frame planned for a packet before its ranges are written ([`plan_ack`],
/// [`fill_ack`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct AckPlan {
    /// The frame carries the first `n` ranges of the space's `ack_cache`.
    n: usize,
    /// The ACK Delay field.
    pub ack_delay_encoded: u64,
    /// The frame's wire size.
    pub size: u64,
    /// The ECN Counts the frame reports (RFC 9000 §19.3.2), if any packet of the space
    /// arrived ECN-marked.
    pub ecn: Option<EcnCounts>,
}

/// Plans the ACK frame of space `sp` fitting in `room` bytes: the most recent
/// `max_ack_ranges` ranges, largest first (the smallest dropped while it does not fit);
/// ACK Delay encoded with our `ack_delay_exponent`. The ranges are written by
/// [`fill_ack`] once the packet is sure to go (a packet that turns out to carry nothing
/// else and owes no ACK is not built: then nothing is written).
///
/// The ranges are collected from `to_ack` into `sp.ack_cache` only when `to_ack` changed
/// otherwise than by growing its highest range since the last plan (see
/// [`PnSpace::ack_insert`]); else the cached ranges get their first range's new top, and
/// the frame's size is O(1). The same ranges and size either way (checked in debug
/// builds against collecting again and against [`ack_frame_size`]).
pub(crate) fn plan_ack(
    sp: &mut PnSpace,
    now: SimTime,
    room: u64,
    max_ack_ranges: usize,
    ack_delay_exponent: u32,
) -> Option<AckPlan> {
    let (top_start, top_end) = sp.to_ack.last()?;
    let cached = sp.ack_cache_ok
        && sp.ack_cache_max == max_ack_ranges
        && sp.ack_cache.first().is_some_and(|&(s, _)| s == top_start);
    if cached {
        sp.ack_cache[0].1 = top_end - 1;
    } else if sp.to_ack.len() == 1 {
        // The only range (most often: pruning moved its start, RFC 9000 §13.2.4).
        sp.ack_cache.clear();
        sp.ack_cache.push((top_start, top_end - 1));
        sp.ack_cache_rest = 0;
        sp.ack_cache_max = max_ack_ranges;
        sp.ack_cache_ok = true;
    } else {
        sp.ack_cache.clear();
        sp.ack_cache.extend(
            sp.to_ack
                .iter()
                .rev()
                .take(max_ack_ranges)
                .map(|(s, e)| (s, e - 1)),
        );
        // RFC 9000 §19.3.1: each further range is a Gap and an ACK Range Length.
        sp.ack_cache_rest = sp
            .ack_cache
            .windows(2)
            .map(|w| varint_len(w[0].0 - w[1].1 - 2) + varint_len(w[1].1 - w[1].0))
            .sum();
        sp.ack_cache_max = max_ack_ranges;
        sp.ack_cache_ok = true;
    }
    debug_assert!(sp.ack_cache.iter().copied().eq(sp
        .to_ack
        .iter()
        .rev()
        .take(max_ack_ranges)
        .map(|(s, e)| (s, e - 1))));
    let (first_lo, largest) = sp.ack_cache[0];
    let delay = if sp.largest_recv == Some(largest) {
        now.saturating_since(sp.largest_recv_time)
    } else {
        SimDuration::ZERO
    };
    // RFC 9000 §19.3: ACK Delay in microseconds scaled down by 2^ack_delay_exponent.
    let ack_delay_encoded = (delay.as_nanos() / 1_000) >> ack_delay_exponent;
    // RFC 9000 §19.3: type, Largest Acknowledged, ACK Delay, ACK Range Count, First ACK
    // Range, then the further ranges.
    let mut n = sp.ack_cache.len();
    // RFC 9000 §13.4.1 / §19.3.2: an endpoint that received ECN-marked packets reports
    // its counts (type 0x03); none received, a plain ACK (0x02).
    let ecn = (!sp.ecn_received.is_zero()).then_some(sp.ecn_received);
    let ecn_size = ecn.as_ref().map_or(0, EcnCounts::wire_size);
    let size = 1
        + varint_len(largest)
        + varint_len(ack_delay_encoded)
        + varint_len(n as u64 - 1)
        + varint_len(largest - first_lo)
        + sp.ack_cache_rest;
    debug_assert_eq!(size, ack_frame_size(&sp.ack_cache, ack_delay_encoded));
    let size = size + ecn_size;
    if size <= room {
        return Some(AckPlan {
            n,
            ack_delay_encoded,
            size,
            ecn,
        });
    }
    // Too big for the room: the smallest ranges go first.
    while n > 1 {
        n -= 1;
        let size = ack_frame_size(&sp.ack_cache[..n], ack_delay_encoded) + ecn_size;
        if size <= room {
            return Some(AckPlan {
                n,
                ack_delay_encoded,
                size,
                ecn,
            });
        }
    }
    None
}

/// The ranges of `plan` (made by [`plan_ack`] for `sp`, `sp.to_ack` unchanged since),
/// largest first, into `out` (emptied first).
pub(crate) fn fill_ack(sp: &PnSpace, plan: &AckPlan, out: &mut Vec<(u64, u64)>) {
    out.clear();
    out.extend_from_slice(&sp.ack_cache[..plan.n]);
    debug_assert_eq!(
        ack_frame_size(out, plan.ack_delay_encoded)
            + plan.ecn.as_ref().map_or(0, EcnCounts::wire_size),
        plan.size
    );
}

/// The ACK frame of space `sp` fitting in `room` bytes, with its size ([`plan_ack`] and
/// [`fill_ack`] at once; its range buffer from `pool`).
pub(crate) fn build_ack(
    sp: &mut PnSpace,
    now: SimTime,
    room: u64,
    max_ack_ranges: usize,
    ack_delay_exponent: u32,
    pool: &mut BufPool,
) -> Option<(Frame, u64)> {
    let plan = plan_ack(sp, now, room, max_ack_ranges, ack_delay_exponent)?;
    let mut ranges = pool.ranges();
    fill_ack(sp, &plan, ranges.make_mut());
    let f = Frame::Ack {
        ranges,
        ack_delay_encoded: plan.ack_delay_encoded,
        ecn: plan.ecn.map(Box::new),
    };
    Some((f, plan.size))
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The ACK frame as collected from scratch: `to_ack`'s highest `max` ranges, the
    /// smallest dropped until it fits `room`.
    fn simple_ack(sp: &PnSpace, now: SimTime, room: u64, max: usize, exp: u32) -> Option<Frame> {
        let mut ranges: Vec<(u64, u64)> = sp
            .to_ack
            .iter()
            .rev()
            .take(max)
            .map(|(s, e)| (s, e - 1))
            .collect();
        let largest = ranges.first()?.1;
        let delay = if sp.largest_recv == Some(largest) {
            now.saturating_since(sp.largest_recv_time)
        } else {
            SimDuration::ZERO
        };
        let ack_delay_encoded = (delay.as_nanos() / 1_000) >> exp;
        while !ranges.is_empty() {
            if ack_frame_size(&ranges, ack_delay_encoded) <= room {
                return Some(Frame::Ack {
                    ranges: ranges.into(),
                    ack_delay_encoded,
                    ecn: None,
                });
            }
            ranges.pop();
        }
        None
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// The cached plan gives the frame collected from scratch, at every step of a
        /// random life of the to-ACK set (numbers arriving in order, out of order and
        /// repeated, ranges pruned as acknowledged ACKs would, frames built with varying
        /// room and range limits), and its size is the frame's wire size.
        #[test]
        fn planned_ack_matches_collected(
            ops in proptest::collection::vec((0u8..6, 0u64..200, 1u64..12), 1..150),
            exp in 0u32..4,
        ) {
            let mut sp = PnSpace::default();
            let mut pool = BufPool::default();
            let mut next = 0u64;
            let mut now = SimTime::ZERO;
            for (op, x, w) in ops {
                now += SimDuration::from_micros(x * 37);
                match op {
                    // In order: the next number (the cache's patch path), maybe a gap.
                    0 | 1 => {
                        next += if op == 1 { w } else { 1 };
                        sp.ack_insert(next);
                        sp.largest_recv = Some(next);
                        sp.largest_recv_time = now;
                    }
                    // Out of order or repeated: any number up to the largest.
                    2 => sp.ack_insert(x.min(next)),
                    // Pruned: a range the peer saw acknowledged.
                    3 => sp.ack_remove(x, x + w),
                    _ => {
                        let room = if op == 4 { 1000 } else { 4 + x / 4 };
                        let max = w as usize;
                        let want = simple_ack(&sp, now, room, max, exp);
                        let got = build_ack(&mut sp, now, room, max, exp, &mut pool);
                        if let Some((f, n)) = &got {
                            prop_assert_eq!(*n, f.wire_size());
                        }
                        prop_assert_eq!(got.as_ref().map(|(f, _)| f), want.as_ref());
                        // Its buffer serves the next frame (nothing else holds it).
                        if let Some((Frame::Ack { ranges, .. }, _)) = got {
                            pool.recycle_ranges(ranges);
                        }
                    }
                }
            }
        }
    }
}

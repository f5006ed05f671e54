//! Stream and crypto-stream buffers as byte-range bookkeeping (no payload bytes).
//!
//! [`SendBuf`] tracks what the application wrote, what was sent, what must be resent
//! and what was acknowledged; [`RecvBuf`] reassembles received ranges and delivers in
//! order. Both serve STREAM frames (RFC 9000 §2-3) and CRYPTO frames (§19.6).

use super::flow_control::{RecvFlow, SendFlow};
use crate::transport::ranges::RangeSet;

use crate::time::SimTime;

/// Largest data length a frame with `fixed` header bytes (type, id, offset) can carry in
/// `budget` bytes, accounting for the length field's own varint size.
pub fn max_data_len(fixed: u64, budget: u64) -> Option<u64> {
    let mut best: Option<u64> = None;
    for (lv, max_v) in [
        (1u64, 63u64),
        (2, 16_383),
        (4, (1 << 30) - 1),
        (8, (1 << 62) - 1),
    ] {
        if let Some(cap) = budget.checked_sub(fixed + lv) {
            let n = cap.min(max_v);
            best = Some(best.map_or(n, |b| b.max(n)));
        }
    }
    best
}

/// Send side of a stream (or crypto stream).
#[derive(Clone, Debug, Default)]
pub struct SendBuf {
    /// Bytes written by the application (the final size once `fin`).
    pub written: u64,
    /// Next new offset to send: everything below was sent at least once.
    pub sent: u64,
    /// Ranges to retransmit (declared lost or queued for a probe), not yet acknowledged.
    pub retx: RangeSet,
    /// Acknowledged ranges.
    pub acked: RangeSet,
    /// The application finished the stream.
    pub fin: bool,
    /// The FIN was sent at least once.
    pub fin_sent: bool,
    /// The FIN was acknowledged.
    pub fin_acked: bool,
    /// The FIN must be resent.
    pub fin_retx: bool,
}

/// A chunk chosen for a frame: offset, length, FIN, and whether it is a retransmission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// Offset.
    pub offset: u64,
    /// Length.
    pub len: u64,
    /// FIN bit.
    pub fin: bool,
    /// Retransmission of data sent before.
    pub retx: bool,
}

impl SendBuf {
    /// The application writes `len` more bytes, and finishes the stream if `fin`.
    pub fn write(&mut self, len: u64, fin: bool) {
        debug_assert!(!self.fin, "write after FIN");
        self.written += len;
        self.fin |= fin;
    }

    /// Something must be retransmitted.
    pub fn has_retx(&self) -> bool {
        !self.retx.is_empty() || self.fin_retx
    }

    /// New bytes not yet sent.
    pub fn unsent(&self) -> u64 {
        self.written - self.sent
    }

    /// New data or a first FIN waits.
    pub fn has_new(&self) -> bool {
        self.sent < self.written || (self.fin && !self.fin_sent)
    }

    /// The next retransmission chunk of at most `max_len` bytes.
    pub fn next_retx(&mut self, max_len: u64) -> Option<Chunk> {
        if let Some((s, e)) = self.retx.first() {
            let len = (e - s).min(max_len);
            if len == 0 {
                return None;
            }
            self.retx.remove(s, s + len);
            let fin = self.fin && s + len == self.written && (self.fin_retx || !self.fin_acked);
            if fin {
                self.fin_retx = false;
            }
            return Some(Chunk {
                offset: s,
                len,
                fin,
                retx: true,
            });
        }
        if self.fin_retx {
            self.fin_retx = false;
            return Some(Chunk {
                offset: self.written,
                len: 0,
                fin: true,
                retx: true,
            });
        }
        None
    }

    /// The next new chunk of at most `max_len` bytes and at most `credit` new bytes.
    pub fn next_new(&mut self, max_len: u64, credit: u64) -> Option<Chunk> {
        let len = self.unsent().min(max_len).min(credit);
        let end = self.sent + len;
        let fin = self.fin && end == self.written && !self.fin_sent;
        if len == 0 && !fin {
            return None;
        }
        let c = Chunk {
            offset: self.sent,
            len,
            fin,
            retx: false,
        };
        self.sent = end;
        if fin {
            self.fin_sent = true;
        }
        Some(c)
    }

    /// A frame `[offset, offset+len)` (+FIN) was acknowledged.
    pub fn on_ack(&mut self, offset: u64, len: u64, fin: bool) {
        self.acked.insert(offset, offset + len);
        self.retx.remove(offset, offset + len);
        if fin {
            self.fin_acked = true;
            self.fin_retx = false;
        }
    }

    /// A frame was declared lost (or is queued again for a probe): resend what is not
    /// acknowledged.
    pub fn on_lost(&mut self, offset: u64, len: u64, fin: bool) {
        let mut s = offset;
        let end = offset + len;
        while let Some((gs, ge)) = self.acked.first_gap_in(s, end) {
            self.retx.insert(gs, ge);
            s = ge;
        }
        if fin && !self.fin_acked {
            self.fin_retx = true;
        }
    }

    /// Everything written, including the FIN, was acknowledged.
    pub fn is_complete(&self) -> bool {
        self.fin && self.fin_acked && self.acked.covered(0, self.written) == self.written
    }
}

/// Receive side of a stream (or crypto stream).
#[derive(Clone, Debug, Default)]
pub struct RecvBuf {
    /// Ranges received.
    pub received: RangeSet,
    /// In-order end: all bytes below were received (readable by the application).
    pub delivered: u64,
    /// Bytes read by the application (≤ `delivered`).
    pub consumed: u64,
    /// Highest offset received.
    pub highest: u64,
    /// Final size, once a FIN arrived.
    pub final_size: Option<u64>,
    /// Bytes received more than once.
    pub duplicate_bytes: u64,
}

impl RecvBuf {
    /// Records a frame. Returns (newly received bytes, bytes newly delivered in order).
    pub fn on_data(&mut self, offset: u64, len: u64, fin: bool) -> (u64, u64) {
        let new = self.received.insert(offset, offset + len);
        self.duplicate_bytes += len - new;
        self.highest = self.highest.max(offset + len);
        if fin {
            self.final_size = Some(offset + len);
        }
        let before = self.delivered;
        self.delivered = self
            .received
            .contiguous_end(self.delivered)
            .max(self.delivered);
        (new, self.delivered - before)
    }

    /// All bytes up to the final size were received.
    pub fn is_fully_received(&self) -> bool {
        self.final_size.is_some_and(|f| self.delivered >= f)
    }

    /// All bytes up to the final size were read by the application.
    pub fn is_fully_read(&self) -> bool {
        self.final_size.is_some_and(|f| self.consumed >= f)
    }

    /// Bytes readable now (delivered, not yet consumed).
    pub fn readable(&self) -> u64 {
        self.delivered - self.consumed
    }
}

/// A bidirectional stream.
#[derive(Debug)]
pub struct Stream {
    /// Stream ID.
    pub id: u64,
    /// Send half.
    pub send: SendBuf,
    /// Send flow control: the peer's limit on our sending (MAX_STREAM_DATA) and the
    /// STREAM_DATA_BLOCKED bookkeeping.
    pub send_fc: SendFlow,
    /// Receive half.
    pub recv: RecvBuf,
    /// Receive flow control (our MAX_STREAM_DATA).
    pub recv_fc: RecvFlow,
    /// When the first byte was delivered in order.
    pub first_byte_at: Option<SimTime>,
    /// When the last byte was read by the application.
    pub recv_complete_at: Option<SimTime>,
    /// When the send half was fully acknowledged.
    pub send_complete_at: Option<SimTime>,
}

impl Stream {
    /// A new stream with the peer's initial limit `send_limit` and our receive flow.
    pub fn new(id: u64, send_limit: u64, recv_fc: RecvFlow) -> Self {
        Stream {
            id,
            send: SendBuf::default(),
            send_fc: SendFlow::new(send_limit),
            recv: RecvBuf::default(),
            recv_fc,
            first_byte_at: None,
            recv_complete_at: None,
            send_complete_at: None,
        }
    }

    /// Flow-control credit for new bytes on this stream.
    pub fn send_credit(&self) -> u64 {
        self.send_fc.limit().saturating_sub(self.send.sent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::quic::varint_len;

    #[test]
    fn data_len_fits_budget() {
        for budget in 3..3000u64 {
            if let Some(n) = max_data_len(2, budget) {
                assert!(2 + varint_len(n) + n <= budget, "budget {budget} n {n}");
                // Tight: one more byte would not fit.
                assert!(
                    2 + varint_len(n + 1) + n + 1 > budget,
                    "budget {budget} n {n}"
                );
            }
        }
    }

    #[test]
    fn send_buf_retransmits_unacked_only() {
        let mut b = SendBuf::default();
        b.write(3000, true);
        let c1 = b.next_new(1000, u64::MAX).unwrap();
        let c2 = b.next_new(1000, u64::MAX).unwrap();
        let c3 = b.next_new(1000, u64::MAX).unwrap();
        assert!(c3.fin && !c1.fin && !c2.fin);
        assert!(b.next_new(1000, u64::MAX).is_none());
        b.on_ack(500, 1000, false);
        b.on_lost(0, 1000, false);
        b.on_lost(2000, 1000, true);
        let r1 = b.next_retx(5000).unwrap();
        assert_eq!((r1.offset, r1.len, r1.fin), (0, 500, false));
        let r2 = b.next_retx(5000).unwrap();
        assert_eq!((r2.offset, r2.len, r2.fin), (2000, 1000, true));
        assert!(b.next_retx(5000).is_none());
        b.on_ack(0, 500, false);
        b.on_ack(1500, 1500, true);
        assert!(b.is_complete());
    }

    #[test]
    fn recv_buf_counts_duplicates() {
        let mut r = RecvBuf::default();
        assert_eq!(r.on_data(100, 100, false), (100, 0));
        assert_eq!(r.on_data(0, 150, false), (100, 200));
        assert_eq!(r.duplicate_bytes, 50);
        assert_eq!(r.on_data(200, 0, true), (0, 0));
        assert!(r.is_fully_received());
    }
}

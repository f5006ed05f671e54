//! The receiving half of a TCP endpoint: reassembly of the byte stream, the ACK and its
//! SACK / D-SACK blocks (RFC 2018, RFC 2883), delayed and quick ACKs (RFC 5681 §4.2, RFC
//! 1122 §4.2.3.2; Linux `icsk_ack`), TS.Recent (RFC 7323 §4.3) and the receive window
//! with its auto-tuning (Linux dynamic right-sizing). [`Receiver`] owns that state; what
//! the delivered records mean (TLS messages, multiplexer frames) is the connection's.

use super::TcpStats;
use crate::config::tcp::TcpConfig;
use crate::tcp::mux::MuxRecv;
use crate::time::SimTime;
use crate::transport::ranges::RangeSet;
use crate::transport::rtt::RttEstimator;
use crate::wire::tcp::{max_sack_blocks, Record, Segment};
use std::collections::BTreeMap;

/// Quick-ACK mode (Linux `icsk_ack.quick`, `tcp_incr_quickack`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum QuickAck {
    /// No data has arrived yet: the mode is entered with the first data segment.
    NotEntered,
    /// ACKs still to send at once.
    Left(u64),
}

impl QuickAck {
    fn left(self) -> u64 {
        match self {
            QuickAck::NotEntered => 0,
            QuickAck::Left(q) => q,
        }
    }
}

/// Dynamic right-sizing (Linux `tcp_rcv_space_adjust`): the start of the current
/// measurement, the bytes read by then, and the last measured per-RTT reading.
#[derive(Clone, Copy, Debug)]
struct RightSizing {
    time: Option<SimTime>,
    seq: u64,
    space: u64,
}

/// How a data segment changed the receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DataArrival {
    /// Nothing new in order (a duplicate or out-of-order data).
    NotInOrder,
    /// `rcv_nxt` advanced: records may be delivered.
    InOrder,
}

/// The receiver's state.
#[derive(Debug)]
pub(super) struct Receiver {
    pub(super) rcv_nxt: u64,
    ooo: RangeSet,
    rx_records: BTreeMap<u64, Record>,
    /// The offset of the record last put in `rx_records`: while its end is beyond
    /// `rcv_nxt` it is still there (only records ending at or below `rcv_nxt` leave), so
    /// the next segments of the same record skip the map.
    last_record: Option<u64>,
    last_rx: Option<u64>,
    pub(super) unacked_bytes: u64,
    /// An ACK is owed now.
    pub(super) ack_now: bool,
    /// The delayed-ACK timer (RFC 5681 §4.2).
    pub(super) delack_deadline: Option<SimTime>,
    /// TS.Recent (RFC 7323 §4.3): the timestamp this end echoes.
    pub(super) ts_recent: u64,
    /// Last.ACK.sent (RFC 7323 §4.3; Linux `rcv_wup`): the cumulative ACK last sent.
    rcv_wup: u64,
    quick: QuickAck,
    /// A duplicate to report in the next ACK's first SACK block (RFC 2883 §4).
    dsack: Option<(u64, u64)>,
    pub(super) mux_recv: MuxRecv,
    pub(super) delivered_end: u64,
    /// Receive window advertised beyond `rcv_nxt`: `recv_window`, grown by auto-tuning.
    pub(super) rcv_wnd: u64,
    drs: RightSizing,
}

impl Receiver {
    pub(super) fn new(cfg: &TcpConfig, smss: u64) -> Self {
        Receiver {
            rcv_nxt: 0,
            ooo: RangeSet::new(),
            rx_records: BTreeMap::new(),
            last_record: None,
            last_rx: None,
            unacked_bytes: 0,
            ack_now: false,
            delack_deadline: None,
            ts_recent: 0,
            rcv_wup: 0,
            quick: QuickAck::NotEntered,
            dsack: None,
            mux_recv: MuxRecv::default(),
            delivered_end: 0,
            rcv_wnd: cfg.recv_window,
            drs: RightSizing {
                time: None,
                seq: 0,
                // Linux tcp_init_buffer_space: rcvq_space.space = min(rcv_wnd, 10 * advmss).
                space: cfg.recv_window.min(10 * smss),
            },
        }
    }

    /// RFC 7323 §4.3 (2) and §5.3 R3 (Linux tcp_replace_ts_recent): TS.Recent
    /// follows the acceptable segments at or below Last.ACK.sent, so an ACK echoes
    /// the segment that last advanced the left window edge; a SYN sets it. A
    /// wholly old duplicate is not acceptable (RFC 9293 §3.10.7.4; Linux
    /// tcp_sequence: its end before rcv_wup): its ACK echoes the older value, which
    /// is how a retransmission's RTT sample grows under heavy loss.
    pub(super) fn update_ts_recent(&mut self, seg: &Segment) {
        let acceptable = seg.seq + seg.len >= self.rcv_wup;
        let in_window = seg.flags.syn || (seg.timestamps && seg.seq <= self.rcv_wup && acceptable);
        if in_window && seg.ts_val >= self.ts_recent {
            self.ts_recent = seg.ts_val;
        }
    }

    /// An ACK is on its way (any segment carries one).
    pub(super) fn ack_sent(&mut self) {
        // Linux tcp_event_ack_sent / tcp_dec_quickack_mode: an ACK of new data uses one
        // quick ACK.
        if let QuickAck::Left(q) = &mut self.quick {
            if self.rcv_nxt > self.rcv_wup && *q > 0 {
                *q -= 1;
            }
        }
        self.ack_now = false;
        self.unacked_bytes = 0;
        self.delack_deadline = None;
        // RFC 7323 §4.3 Last.ACK.sent (Linux rcv_wup).
        self.rcv_wup = self.rcv_nxt;
    }

    /// RFC 2018 §4: the block holding the most recent segment first, then the others,
    /// highest first, as many as fit.
    /// Written over `out` (cleared first; its capacity kept, issue 14).
    pub(super) fn sack_blocks(&mut self, cfg: &TcpConfig, out: &mut Vec<(u64, u64)>) {
        out.clear();
        let dsack = self.dsack.take();
        if !cfg.sack || (self.ooo.is_empty() && dsack.is_none()) {
            return;
        }
        let max = max_sack_blocks(cfg.timestamps);
        out.reserve(max);
        // RFC 2883 §4: a duplicate is reported in the first block (a D-SACK), the
        // ordinary blocks follow.
        if let Some(d) = dsack {
            out.push(d);
        }
        let first = self
            .last_rx
            .and_then(|v| self.ooo.iter().find(|&(a, b)| a <= v && v < b));
        if let Some(b) = first {
            out.push(b);
        }
        for b in self.ooo.iter().rev() {
            if out.len() >= max {
                break;
            }
            if Some(b) != first {
                out.push(b);
            }
        }
    }

    /// A segment with payload arrived: reassembly and the ACK it calls for.
    pub(super) fn on_data(
        &mut self,
        now: SimTime,
        seg: &Segment,
        cfg: &TcpConfig,
        smss: u64,
        stats: &mut TcpStats,
    ) -> DataArrival {
        let end = seg.seq + seg.len;
        if self.quick == QuickAck::NotEntered {
            // Linux tcp_event_data_recv: the first data enters quick-ACK mode
            // (tcp_incr_quickack: min(rcv_wnd / (2 MSS), TCP_MAX_QUICKACKS)).
            self.quick = QuickAck::Left(match self.rcv_wnd / (2 * smss) {
                _ if cfg.quickack == 0 => 0,
                0 => 2.min(cfg.quickack),
                q => q.min(cfg.quickack),
            });
        }
        if end <= self.rcv_nxt {
            // RFC 5681 §4.2 / RFC 2883: acknowledge a duplicate at once, reporting it in
            // a D-SACK block.
            stats.duplicate_bytes += seg.len;
            self.ack_now = true;
            if cfg.sack {
                self.dsack = Some((seg.seq, end));
            }
            return DataArrival::NotInOrder;
        }
        if end > self.rcv_nxt + self.rcv_wnd {
            stats.beyond_window_bytes += end - (self.rcv_nxt + self.rcv_wnd);
        }
        let start = seg.seq.max(self.rcv_nxt);
        let had_gap = !self.ooo.is_empty();
        // Without a gap, in-order data never enters the out-of-order set: it would be
        // inserted and removed again at once.
        let in_order_no_gap = !had_gap && seg.seq <= self.rcv_nxt;
        let fresh = if in_order_no_gap {
            end - start
        } else {
            self.ooo.insert(start, end)
        };
        stats.duplicate_bytes += seg.len - fresh;
        if fresh == 0 && cfg.sack {
            // RFC 2883 §4.2: a duplicate of out-of-order data is a D-SACK too.
            self.dsack = Some((start, end));
        }
        for r in &seg.records {
            if r.end() > self.rcv_nxt && self.last_record != Some(r.offset) {
                self.rx_records.entry(r.offset).or_insert(*r);
                self.last_record = Some(r.offset);
            }
        }
        if seg.seq > self.rcv_nxt {
            // Out of order: immediate ACK with SACK (RFC 5681 §4.2, RFC 2018 §4).
            self.last_rx = Some(seg.seq);
            self.ack_now = true;
            return DataArrival::NotInOrder;
        }
        let new_nxt = if in_order_no_gap {
            end
        } else {
            let n = self.ooo.contiguous_end(self.rcv_nxt);
            self.ooo.remove(self.rcv_nxt, n);
            n
        };
        self.rcv_nxt = new_nxt;
        self.last_rx = None;
        if had_gap {
            // It filled (part of) a hole: immediate ACK (RFC 5681 §4.2).
            self.ack_now = true;
        } else {
            self.unacked_bytes += seg.len;
            if self.quick.left() > 0 || self.unacked_bytes >= cfg.ack_every * smss {
                self.ack_now = true;
            } else if self.delack_deadline.is_none() {
                self.delack_deadline = Some(now + cfg.delayed_ack);
            }
        }
        DataArrival::InOrder
    }

    /// The next record wholly received in order, taken out of reassembly.
    pub(super) fn next_record(&mut self) -> Option<Record> {
        let (_, r) = self.rx_records.first_key_value()?;
        if r.end() > self.rcv_nxt {
            return None;
        }
        self.rx_records.pop_first().map(|(_, r)| r)
    }

    /// Receive-window auto-tuning after Linux's dynamic right-sizing
    /// (`tcp_rcv_space_adjust`): once at least one RTT has passed since the measurement
    /// began, if the application read more than in the previous measurement, the window
    /// becomes `2 x read + 16 segments` (never less than before: RFC 9293 §3.8.6, no
    /// shrinking), capped at `recv_window_max` (`tcp_rmem[2]`). The application reads at
    /// once, so "read" is `rcv_nxt`. Linux's receiver RTT estimate (`rcv_rtt_est`) is this
    /// endpoint's smoothed RTT here (`docs/tcp.md`).
    pub(super) fn rcv_space_adjust(
        &mut self,
        now: SimTime,
        rtt: &RttEstimator,
        cfg: &TcpConfig,
        smss: u64,
    ) {
        let Some(start) = self.drs.time else {
            self.drs.time = Some(now);
            self.drs.seq = self.rcv_nxt;
            return;
        };
        if rtt.first_sample_time().is_none() || now.saturating_since(start) < rtt.smoothed_rtt() {
            return;
        }
        let copied = self.rcv_nxt - self.drs.seq;
        if copied > self.drs.space {
            // Linux: rcvwin = (copied << 1) + 16 * advmss.
            let want = (2 * copied + 16 * smss).min(cfg.recv_window_max);
            self.rcv_wnd = self.rcv_wnd.max(want);
        }
        self.drs.space = copied;
        self.drs.seq = self.rcv_nxt;
        self.drs.time = Some(now);
    }
}

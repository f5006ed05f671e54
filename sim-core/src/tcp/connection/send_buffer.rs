//! The sender's byte stream: the records (TLS messages, multiplexer frames) put on it and
//! not yet wholly acknowledged, and the multiplexer that cuts the workload's streams into
//! frames as room comes. [`SendBuffer`] owns them; which bytes go out when is the
//! connection's (`connection/output.rs`).

use crate::tcp::mux::MuxSend;
use crate::wire::tcp::{Record, RecordKind};
use std::collections::VecDeque;

/// The records of the byte stream and the multiplexer.
#[derive(Debug)]
pub(super) struct SendBuffer {
    /// Records of the byte stream not yet wholly acknowledged: records ending at or below
    /// `snd_una` are dropped (no segment is built below `snd_una` again), so memory is
    /// bounded by what is in flight, not by what was transferred (issue 14).
    records: VecDeque<Record>,
    /// The end of the byte stream written so far.
    pub(super) stream_end: u64,
    pub(super) mux: MuxSend,
}

impl SendBuffer {
    pub(super) fn new(mux: MuxSend) -> Self {
        SendBuffer {
            records: VecDeque::new(),
            stream_end: 0,
            mux,
        }
    }

    /// Records kept.
    pub(super) fn kept(&self) -> usize {
        self.records.len()
    }

    /// Puts a record of `len` bytes at the end of the stream.
    pub(super) fn push_record(&mut self, kind: RecordKind, len: u64) {
        self.records.push_back(Record {
            offset: self.stream_end,
            len,
            kind,
        });
        self.stream_end += len;
    }

    /// Cuts multiplexer frames until the stream holds `target` bytes (or nothing waits).
    pub(super) fn fill(&mut self, target: u64) {
        while self.stream_end < target {
            let Some(r) = self.mux.next_frame(self.stream_end) else {
                break;
            };
            self.records.push_back(r);
            self.stream_end = r.end();
        }
    }

    /// Appends the records overlapping `[start, end)` (`start < end`) to `out`.
    #[inline(always)]
    pub(super) fn records_in(&self, start: u64, end: u64, out: &mut Vec<Record>) {
        // New data is cut from the last record, as a rule wholly (a multiplexer frame is
        // larger than a segment): records are contiguous, so no other one overlaps.
        if let Some(last) = self.records.back() {
            if last.offset <= start && end <= last.end() {
                out.push(*last);
                return;
            }
        }
        self.records_in_search(start, end, out);
    }

    /// [`SendBuffer::records_in`] when the last record does not hold the whole range.
    #[inline(never)]
    fn records_in_search(&self, start: u64, end: u64, out: &mut Vec<Record>) {
        // A few steps back from the end find them; a retransmission further back is a
        // binary search.
        let n = self.records.len();
        let mut i = n;
        while i > 0 && n - i < 4 && self.records[i - 1].end() > start {
            i -= 1;
        }
        if i > 0 && self.records[i - 1].end() > start {
            i = self.records.partition_point(|r| r.end() <= start);
        }
        while let Some(r) = self.records.get(i).filter(|r| r.offset < end) {
            out.push(*r);
            i += 1;
        }
    }

    /// The cumulative ACK reached `ack`: the records wholly below it are dropped.
    pub(super) fn release_acked(&mut self, ack: u64) {
        while self.records.front().is_some_and(|r| r.end() <= ack) {
            self.records.pop_front();
        }
    }
}

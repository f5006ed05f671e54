//! The receiving half of the association (RFC 9260 §6.2, §6.7): the TSNs received (the
//! cumulative point, the TSNs above it, duplicates), delivery to the streams and the SACK
//! with its gap blocks, sent every `sack_freq` packets or after `sack_delay`.
//! [`Receiver`] owns that state.

use super::*;

/// The TSNs received and the SACK owed.
#[derive(Debug)]
pub(super) struct Receiver {
    pub(super) recv_cum: u64,
    pub(super) recv_above: RangeSet,
    pub(super) dups: Vec<u64>,
    /// Bytes received and not yet delivered (occupying the receive buffer).
    pub(super) held: u64,
    pub(super) sack_pending: bool,
    pub(super) sack_now: bool,
    pub(super) packets_unacked: u64,
    pub(super) sack_timer: Option<SimTime>,
}

impl Receiver {
    pub(super) fn new() -> Self {
        Receiver {
            recv_cum: INITIAL_TSN - 1,
            recv_above: RangeSet::new(),
            dups: Vec::new(),
            held: 0,
            sack_pending: false,
            sack_now: false,
            packets_unacked: 0,
            sack_timer: None,
        }
    }

    /// A packet with DATA arrived (`had_gaps`: TSNs were missing before it; `dup`: it
    /// carried a duplicate): when the SACK goes.
    pub(super) fn on_data_packet(
        &mut self,
        now: SimTime,
        cfg: &SctpConfig,
        had_gaps: bool,
        dup: bool,
    ) {
        // §6.2: a SACK every `sack_freq` packets with DATA, within `sack_delay`;
        // §6.7: at once on a gap or duplicates (and while gaps are being filled).
        self.sack_pending = true;
        self.packets_unacked += 1;
        let gaps = !self.recv_above.is_empty();
        if dup || gaps || had_gaps || self.packets_unacked >= cfg.sack_freq {
            self.sack_now = true;
        } else if self.sack_timer.is_none() {
            self.sack_timer = Some(now + cfg.sack_delay);
        }
    }
}

impl SctpAssociation {
    /// One DATA chunk; returns whether it was a duplicate.
    pub(super) fn receive_data(&mut self, now: SimTime, d: &DataChunk) -> bool {
        if d.tsn <= self.rx.recv_cum || self.rx.recv_above.contains(d.tsn) {
            self.rx.dups.push(d.tsn);
            self.stats.duplicate_tsns += 1;
            self.stats.duplicate_stream_bytes += d.len;
            return true;
        }
        if d.tsn == self.rx.recv_cum + 1 && self.rx.recv_above.is_empty() {
            // The next TSN with nothing above it: the cumulative point moves, the set of
            // TSNs above it stays empty (as inserting and removing it again would leave it).
            self.rx.recv_cum = d.tsn;
        } else {
            self.rx.recv_above.insert(d.tsn, d.tsn + 1);
            if let Some((s, e)) = self.rx.recv_above.first() {
                if s == self.rx.recv_cum + 1 {
                    self.rx.recv_cum = e - 1;
                    self.rx.recv_above.remove(s, e);
                }
            }
        }
        let is_new = !self.streams.recv_streams.contains_key(&d.stream);
        let rs = self
            .streams
            .recv_streams
            .entry(d.stream)
            .or_insert_with(|| RecvStream {
                sid: d.sid,
                ..RecvStream::default()
            });
        if is_new
            && !self
                .streams
                .send_streams
                .get(&d.stream)
                .is_some_and(|s| s.local)
        {
            self.events.push(StreamEvent::StreamOpened(d.stream));
        }
        let new = rs.received.insert(d.offset, d.offset + d.len);
        self.stats.duplicate_stream_bytes += d.len - new;
        self.rx.held += new;
        if d.fin && d.end {
            rs.fin_at = Some(d.offset + d.len);
        }
        // Deliver the stream's in-order prefix (immediate reader).
        let end = if rs.received.is_empty() {
            rs.delivered
        } else {
            rs.received.contiguous_end(rs.delivered).max(rs.delivered)
        };
        if end > rs.delivered {
            if rs.first_byte_at.is_none() {
                rs.first_byte_at = Some(now);
            }
            let n = end - rs.delivered;
            #[cfg(test)]
            self.delivery_log.push((d.stream, rs.delivered, end));
            let (stream, offset) = (d.stream, rs.delivered);
            self.trace.push_with(now, || {
                TraceEvent::SenderProbe(SenderProbe::StreamDelivered {
                    stream,
                    offset,
                    len: n,
                })
            });
            rs.delivered = end;
            self.rx.held -= n;
            self.stats.stream_bytes_read += n;
        }
        if !rs.read_complete && rs.fin_at == Some(rs.delivered) {
            rs.read_complete = true;
            rs.complete_at = Some(now);
            self.events.push(StreamEvent::ReadComplete(d.stream));
            self.check_exchange_done(d.stream);
        }
        false
    }

    /// The SACK describing what was received (gap blocks as fit `room`, lowest first).
    pub(super) fn build_sack(&mut self, room: u64) -> Chunk {
        let dups = std::mem::take(&mut self.rx.dups);
        let max_gaps = room.saturating_sub(sack_size(0, dups.len() as u64)) / 4;
        let gaps: Vec<(u64, u64)> = self
            .rx
            .recv_above
            .iter()
            .take(max_gaps as usize)
            .map(|(s, e)| (s, e - 1))
            .collect();
        self.stats.sacks_sent += 1;
        self.stats.gap_blocks_sent += gaps.len() as u64;
        self.rx.sack_pending = false;
        self.rx.sack_now = false;
        self.rx.packets_unacked = 0;
        self.rx.sack_timer = None;
        Chunk::Sack(SackChunk {
            cum_tsn: self.rx.recv_cum,
            a_rwnd: self.a_rwnd(),
            gaps,
            dups,
        })
    }
}

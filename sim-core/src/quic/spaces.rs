//! Per packet number space state (RFC 9000 §12.3): packet numbers sent, what was
//! received and must be acknowledged (with the ACK-delay bookkeeping of RFC 9000 §13.2),
//! the handshake bytes of the space (CRYPTO), and whether its keys were discarded.

use super::streams::{RecvBuf, SendBuf};
use crate::packet::Ecn;
use crate::time::SimTime;
use crate::transport::ranges::RangeSet;
use crate::wire::quic::EcnCounts;

/// One packet number space (0 Initial, 1 Handshake, 2 application data).
#[derive(Debug, Default)]
pub(crate) struct PnSpace {
    /// Next packet number to send.
    pub next_pn: u64,
    /// Largest packet number the peer acknowledged.
    pub largest_acked_by_peer: Option<u64>,
    /// Every packet number received (duplicate detection).
    pub received: RangeSet,
    /// Packet numbers still to report in ACK frames. Changed only through
    /// [`PnSpace::ack_insert`] and [`PnSpace::ack_remove`] (they keep `ack_cache` honest).
    pub to_ack: RangeSet,
    /// The ranges of the last ACK frame built, before trimming to a packet's room: the
    /// `ack_cache_max` highest ranges of `to_ack`, largest first, inclusive (see
    /// `packetizer::plan_ack`).
    pub ack_cache: Vec<(u64, u64)>,
    /// The `max_ack_ranges` that `ack_cache` was collected with.
    pub ack_cache_max: usize,
    /// Wire bytes of `ack_cache`'s ranges after the first (gaps and lengths, RFC 9000
    /// §19.3.1): they do not change when only the first range grows.
    pub ack_cache_rest: u64,
    /// Since `ack_cache` was collected, `to_ack` changed at most by growing its highest
    /// range upwards, so `ack_cache` with its first range's top patched is what
    /// collecting again would give.
    pub ack_cache_ok: bool,
    /// Largest packet number received.
    pub largest_recv: Option<u64>,
    /// When it arrived (ACK Delay, RFC 9000 §13.2.5).
    pub largest_recv_time: SimTime,
    /// Ack-eliciting packets received since the last ACK sent.
    pub eliciting_since_ack: u64,
    /// An ACK must go out now.
    pub ack_immediate: bool,
    /// A delayed ACK is due then (max_ack_delay).
    pub ack_deadline: Option<SimTime>,
    /// Packets arrived since the last ACK sent.
    pub new_since_ack: bool,
    /// Our CRYPTO bytes.
    pub crypto_send: SendBuf,
    /// The peer's CRYPTO bytes.
    pub crypto_recv: RecvBuf,
    /// The space's keys were discarded (RFC 9001 §4.9).
    pub discarded: bool,
    /// PTO probes still owed in this space (RFC 9002 §6.2.4).
    pub probes: u8,
    /// Packets of this space received with each ECN codepoint (RFC 9000 §13.4.1),
    /// reported in ACK frames.
    pub ecn_received: EcnCounts,
}

impl PnSpace {
    /// Counts one packet received with `ecn` (RFC 9000 §13.4.1; Not-ECT counts nothing).
    pub fn count_ecn(&mut self, ecn: Ecn) {
        let c = &mut self.ecn_received;
        match ecn {
            Ecn::NotEct => {}
            Ecn::Ect0 => c.ect0 += 1,
            Ecn::Ect1 => c.ect1 += 1,
            Ecn::Ce => c.ce += 1,
        }
    }

    /// Packet `pn` must be acknowledged.
    pub fn ack_insert(&mut self, pn: u64) {
        // Growing the highest range by its next number keeps `ack_cache` valid; anything
        // else (a new range, a hole filled, a range grown downwards) may not.
        if self.to_ack.last().is_none_or(|(_, end)| end != pn) {
            self.ack_cache_ok = false;
        }
        self.to_ack.insert(pn, pn + 1);
    }

    /// Packets `[lo, end)` need no more acknowledging.
    pub fn ack_remove(&mut self, lo: u64, end: u64) {
        self.ack_cache_ok = false;
        self.to_ack.remove(lo, end);
    }

    /// An ACK is owed now (immediately, or the delayed ACK's deadline passed).
    pub fn ack_due(&self, now: SimTime) -> bool {
        self.ack_immediate || self.ack_deadline.is_some_and(|d| d <= now)
    }

    /// An ACK frame was sent: nothing owed until new packets arrive.
    pub fn on_ack_sent(&mut self) {
        self.ack_immediate = false;
        self.ack_deadline = None;
        self.eliciting_since_ack = 0;
        self.new_since_ack = false;
    }
}

//! Per packet number space state (RFC 9000 §12.3): packet numbers sent, what was
//! received and must be acknowledged (with the ACK-delay bookkeeping of RFC 9000 §13.2),
//! the handshake bytes of the space (CRYPTO), and whether its keys were discarded.

use super::streams::{RecvBuf, SendBuf};
use crate::time::SimTime;
use crate::transport::ranges::RangeSet;

/// One packet number space (0 Initial, 1 Handshake, 2 application data).
#[derive(Debug, Default)]
pub(crate) struct PnSpace {
    /// Next packet number to send.
    pub next_pn: u64,
    /// Largest packet number the peer acknowledged.
    pub largest_acked_by_peer: Option<u64>,
    /// Every packet number received (duplicate detection).
    pub received: RangeSet,
    /// Packet numbers still to report in ACK frames.
    pub to_ack: RangeSet,
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
}

impl PnSpace {
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

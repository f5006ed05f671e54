//! Flow control (RFC 9000 §4): the receive side ([`RecvFlow`], when to advertise a new
//! limit) and the send side ([`SendFlow`], the peer's limit and the blocked frames).
//!
//! The policy is an [`Allowance`] from the shared toolkit
//! ([`crate::transport::allowance`], one file per policy). One instance runs per stream
//! and one for the connection. The connection owns the bookkeeping ([`RecvFlow`]) and
//! asks the allowance after every consumption by the application whether to send
//! MAX_STREAM_DATA / MAX_DATA; after a stream's allowance was asked, the
//! connection-level one is told that stream's current window
//! ([`Allowance::on_stream_window`]).

use crate::time::{SimDuration, SimTime};
use crate::transport::allowance::{
    Allowance, AllowanceInput, AllowanceKind, AllowanceParams, AllowancePolicy,
};

/// Receive-side flow-control state of one stream or of the connection.
#[derive(Debug)]
pub struct RecvFlow {
    /// The limit advertised to the peer (absolute offset; MAX_STREAM_DATA / MAX_DATA).
    pub limit: u64,
    /// Highest offset received (for the connection: the sum over streams).
    pub received: u64,
    /// Bytes consumed by the application.
    pub consumed: u64,
    /// The update policy.
    pub allowance: Box<dyn Allowance>,
    /// A new limit waits to be sent.
    pub update_pending: bool,
    /// Number of limit updates decided.
    pub updates: u64,
    /// When the limit last grew (`None`: the initial limit stands).
    pub last_update: Option<SimTime>,
}

impl RecvFlow {
    /// Initial state with a fixed window: the window is the initial limit (a transport
    /// parameter).
    pub fn new(kind: AllowanceKind, window: u64) -> Self {
        Self::with_params((kind.into(), AllowanceParams::fixed(window)))
    }

    /// Initial state for the allowance `kind` built from `params` (e.g.
    /// [`crate::quic::QuicConfig::stream_allowance`]): the limit is the initial window.
    pub fn with_params((kind, params): (AllowancePolicy, AllowanceParams)) -> Self {
        RecvFlow {
            limit: params.initial_window,
            received: 0,
            consumed: 0,
            allowance: kind.build(params),
            update_pending: false,
            updates: 0,
            last_update: None,
        }
    }

    /// Asks the allowance for an update; marks one pending if the limit grew.
    pub fn maybe_update(&mut self, now: SimTime, srtt: SimDuration) -> bool {
        let input = AllowanceInput {
            now,
            srtt,
            last_update: self.last_update,
            consumed: self.consumed,
            received: self.received,
            limit: self.limit,
        };
        match self.allowance.update(&input) {
            Some(l) if l > self.limit => {
                self.limit = l;
                self.update_pending = true;
                self.updates += 1;
                self.last_update = Some(now);
                true
            }
            _ => false,
        }
    }

    /// Credit the peer still has: `limit - received`.
    pub fn credit(&self) -> u64 {
        self.limit.saturating_sub(self.received)
    }
}

/// Send-side flow control of one stream or of the connection (RFC 9000 §4.1): the peer's
/// limit (MAX_STREAM_DATA / MAX_DATA, first from its transport parameters), the bytes sent
/// against it, and the blocked-frame bookkeeping (STREAM_DATA_BLOCKED / DATA_BLOCKED, once
/// per limit). Invariants: nothing is sent beyond the limit; the limit never shrinks
/// (a smaller MAX_* frame is ignored, RFC 9000 §4.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SendFlow {
    /// The peer's limit (absolute offset).
    limit: u64,
    /// Bytes sent (for a stream: the highest offset sent).
    sent: u64,
    /// The limit at which a blocked frame was last queued.
    blocked_at: Option<u64>,
    /// A blocked frame waits to be sent.
    blocked_pending: bool,
}

impl SendFlow {
    /// Nothing sent yet, the peer's initial limit `limit`.
    pub fn new(limit: u64) -> Self {
        SendFlow {
            limit,
            ..Self::default()
        }
    }

    /// The peer's limit.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Bytes sent.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Bytes that may still be sent.
    pub fn credit(&self) -> u64 {
        self.limit.saturating_sub(self.sent)
    }

    /// The peer raised its limit to `limit` (MAX_DATA / MAX_STREAM_DATA or a transport
    /// parameter); a smaller value changes nothing.
    pub fn raise(&mut self, limit: u64) {
        self.limit = self.limit.max(limit);
    }

    /// `n` new bytes were sent.
    pub fn on_sent(&mut self, n: u64) {
        self.sent += n;
        debug_assert!(
            self.sent <= self.limit,
            "sent {} > limit {}",
            self.sent,
            self.limit
        );
    }

    /// Data waits at the limit: queue a blocked frame, once per limit (RFC 9000 §4.1).
    pub fn on_blocked(&mut self) {
        if self.blocked_at != Some(self.limit) {
            self.blocked_at = Some(self.limit);
            self.blocked_pending = true;
        }
    }

    /// The limit at which the sender last found itself blocked (debug checks).
    #[cfg(debug_assertions)]
    pub(crate) fn blocked_at(&self) -> Option<u64> {
        self.blocked_at
    }

    /// A blocked frame waits to be sent.
    pub fn blocked_pending(&self) -> bool {
        self.blocked_pending
    }

    /// The blocked frame was sent.
    pub fn on_blocked_sent(&mut self) {
        self.blocked_pending = false;
    }

    /// A blocked frame announcing `limit` was lost: queue it again if it still tells the
    /// truth (same limit, still blocked, and `waiting` data; RFC 9000 §13.3).
    pub fn on_blocked_lost(&mut self, limit: u64, waiting: bool) {
        if limit == self.limit && self.sent >= limit && waiting {
            self.blocked_pending = true;
        }
    }

    /// The invariants: never beyond the limit.
    pub fn check_invariants(&self) -> Result<(), String> {
        if self.sent > self.limit {
            return Err(format!("sent {} > limit {}", self.sent, self.limit));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_updates_at_half_window() {
        let mut f = RecvFlow::new(AllowanceKind::Static, 1000);
        let now = SimTime::ZERO;
        let srtt = SimDuration::from_millis(10);
        f.received = 600;
        f.consumed = 500;
        // available 500 = window/2: not yet.
        assert!(!f.maybe_update(now, srtt));
        f.consumed = 501;
        assert!(f.maybe_update(now, srtt));
        assert_eq!(f.limit, 1501);
        assert!(f.update_pending);
    }
    #[test]
    fn send_flow_limits_only_grow_and_blocked_once_per_limit() {
        let mut f = SendFlow::new(100);
        f.on_sent(100);
        assert_eq!(f.credit(), 0);
        f.on_blocked();
        assert!(f.blocked_pending());
        f.on_blocked_sent();
        f.on_blocked();
        assert!(!f.blocked_pending(), "once per limit");
        f.on_blocked_lost(100, true);
        assert!(f.blocked_pending());
        f.on_blocked_sent();
        f.raise(50);
        assert_eq!(f.limit(), 100, "limits never shrink");
        f.raise(150);
        f.on_blocked_lost(100, true);
        assert!(!f.blocked_pending(), "stale limit");
        assert_eq!(f.credit(), 50);
        assert!(f.check_invariants().is_ok());
    }
}

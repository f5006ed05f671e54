//! Receive-side flow control (RFC 9000 §4): when to advertise a new limit.
//!
//! The policy is a trait, [`Allowance`], so the receive-window strategies of paper 001
//! (static, improved static, autotuning, fast autotuning) are interchangeable
//! implementations; this module has the `static` one. One instance runs per stream and
//! one for the connection. The connection owns the bookkeeping ([`RecvFlow`]) and asks the
//! allowance after every consumption by the application whether to send
//! MAX_STREAM_DATA / MAX_DATA; after a stream's allowance was asked, the connection-level
//! one is told that stream's current window ([`Allowance::on_stream_window`]).

use super::config::AllowanceKind;
use crate::time::{SimDuration, SimTime};

/// What an allowance sees when asked for a window update.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllowanceInput {
    /// Current time.
    pub now: SimTime,
    /// The connection's smoothed RTT (the initial RTT before any sample).
    pub srtt: SimDuration,
    /// Bytes read by the application (the absolute consumed offset).
    pub consumed: u64,
    /// Highest absolute offset received (the peer's flow-control usage).
    pub received: u64,
    /// The limit currently advertised to the peer (absolute offset).
    pub limit: u64,
}

/// A receive-window update policy.
pub trait Allowance: std::fmt::Debug {
    /// The current window size in bytes (what `limit - consumed` is refilled to).
    fn window(&self) -> u64;

    /// Called after data was consumed or received. Returns the new absolute limit to
    /// advertise, strictly greater than `input.limit`, or `None` to wait.
    fn update(&mut self, input: &AllowanceInput) -> Option<u64>;

    /// Called on the connection-level allowance with a stream's current window after that
    /// stream's allowance was asked for an update, so a connection window can follow its
    /// streams (Google quiche keeps the session window at least 1.5 times the stream
    /// window). Default: ignore.
    fn on_stream_window(&mut self, _stream_window: u64) {}

    /// A short stable name for results.
    fn name(&self) -> &'static str;
}

/// The static allowance: a fixed window; when the credit left (`limit - consumed`) falls
/// below half the window, advertise `consumed + window` (the threshold rule of Google
/// quiche's `QuicFlowController` and Cloudflare quiche's `FlowControl`, without
/// auto-tuning).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaticAllowance {
    window: u64,
}

impl StaticAllowance {
    /// A static allowance of `window` bytes.
    pub fn new(window: u64) -> Self {
        StaticAllowance { window }
    }
}

impl Allowance for StaticAllowance {
    fn window(&self) -> u64 {
        self.window
    }

    fn update(&mut self, input: &AllowanceInput) -> Option<u64> {
        let available = input.limit.saturating_sub(input.consumed);
        if available >= self.window / 2 {
            return None;
        }
        let new_limit = input.consumed.saturating_add(self.window);
        (new_limit > input.limit).then_some(new_limit)
    }

    fn name(&self) -> &'static str {
        "static"
    }
}

/// Builds the allowance of `kind` with an initial window of `window` bytes.
pub fn build(kind: AllowanceKind, window: u64) -> Box<dyn Allowance> {
    match kind {
        AllowanceKind::Static => Box::new(StaticAllowance::new(window)),
    }
}

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
}

impl RecvFlow {
    /// Initial state: the window is the initial limit (a transport parameter).
    pub fn new(kind: AllowanceKind, window: u64) -> Self {
        RecvFlow {
            limit: window,
            received: 0,
            consumed: 0,
            allowance: build(kind, window),
            update_pending: false,
            updates: 0,
        }
    }

    /// Asks the allowance for an update; marks one pending if the limit grew.
    pub fn maybe_update(&mut self, now: SimTime, srtt: SimDuration) -> bool {
        let input = AllowanceInput {
            now,
            srtt,
            consumed: self.consumed,
            received: self.received,
            limit: self.limit,
        };
        match self.allowance.update(&input) {
            Some(l) if l > self.limit => {
                self.limit = l;
                self.update_pending = true;
                self.updates += 1;
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
}

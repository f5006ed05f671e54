//! Receive-side flow control (RFC 9000 §4): when to advertise a new limit.
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
    self, Allowance, AllowanceInput, AllowanceKind, AllowanceParams,
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
    /// Initial state: the window is the initial limit (a transport parameter).
    pub fn new(kind: AllowanceKind, window: u64) -> Self {
        RecvFlow {
            limit: window,
            received: 0,
            consumed: 0,
            allowance: allowance::build(kind, AllowanceParams::fixed(window)),
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

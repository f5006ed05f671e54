//! `keep`: the congestion controller and the RTT estimator carry over to the new path.
//! RFC 9000 §9.4: "Because port-only changes are commonly the result of NAT rebinding or
//! other middlebox activity, the endpoint MAY instead retain its congestion control state
//! and round-trip estimate in those cases instead of reverting to initial values."
//! Paper 004 (Section I): "a change in port number maintains the window size". The
//! scenario allows `keep` only for flows whose handovers change the port alone.

use super::{WindowDecision, WindowInput, WindowPolicy};

/// Congestion and RTT state unchanged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Keep;

impl WindowPolicy for Keep {
    fn on_validated(&self, _input: &WindowInput) -> WindowDecision {
        WindowDecision::Keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimDuration;

    #[test]
    fn keeps() {
        let d = Keep.on_validated(&WindowInput {
            cwnd_old: 123_456,
            min_rtt_old: None,
            rtt_new: SimDuration::from_millis(3),
            initial_window: 12_000,
            port_only: true,
        });
        assert_eq!(d, WindowDecision::Keep);
    }
}

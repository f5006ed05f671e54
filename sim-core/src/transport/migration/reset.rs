//! `reset`: RFC 9000 §9.4 — "On confirming a peer's ownership of its new address, an
//! endpoint MUST immediately reset the congestion controller and round-trip time
//! estimator for the new path to initial values (see Appendices A.3 and B.3 of
//! [QUIC-RECOVERY])". Chromium does the same (`TcpCubicSenderBytes::OnConnectionMigration`:
//! initial window, hybrid slow start restarted); paper 004 calls it "cwnd-initial".

use super::{WindowDecision, WindowInput, WindowPolicy};

/// The initial window and a fresh RTT estimator on every new path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reset;

impl WindowPolicy for Reset {
    fn on_validated(&self, input: &WindowInput) -> WindowDecision {
        WindowDecision::Restart {
            window: input.initial_window,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimDuration;

    #[test]
    fn the_initial_window_whatever_the_old_path() {
        for (cwnd_old, rtt_new) in [(10_000, 1), (1_000_000, 30), (46_720, 200)] {
            let d = Reset.on_validated(&WindowInput {
                cwnd_old,
                min_rtt_old: Some(SimDuration::from_millis(40)),
                rtt_new: SimDuration::from_millis(rtt_new),
                initial_window: 46_720,
                port_only: false,
            });
            assert_eq!(d, WindowDecision::Restart { window: 46_720 });
        }
    }
}

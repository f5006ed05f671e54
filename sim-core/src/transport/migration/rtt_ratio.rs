//! `rtt_ratio`: paper 004 (Kim & Koh, "Adaptive control of congestion window in QUIC",
//! Section II):
//!
//! ```text
//! cwnd_new = max(((RTT_old − RTT_new) / RTT_old) × cwnd_old, cwnd_init)
//! ```
//!
//! `RTT_old` is the minimum RTT observed on the old path, `RTT_new` the round trip the
//! server measured with its own PATH_CHALLENGE on the new path, `cwnd_old` the window
//! just before the switch and `cwnd_init` the controller's initial window. When
//! `RTT_new >= RTT_old` the fraction is zero or negative and the window is `cwnd_init`:
//! the paper reads a longer round trip as a possibly worse network and falls back to the
//! implementation's initial value, i.e. the `reset` policy. Without an RTT sample on the
//! old path there is no `RTT_old`: `cwnd_init` too. The RTT estimator restarts as with
//! `reset` (its initial RTT is the validation round trip); the window starts in slow
//! start (a fresh controller whose initial window is `cwnd_new`), as the paper's "initial
//! congestion window size" for the new network.

use super::{WindowDecision, WindowInput, WindowPolicy};

/// Paper 004's adaptive window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RttRatio;

impl RttRatio {
    /// The paper's formula in integer arithmetic: `cwnd_old × (RTT_old − RTT_new) /
    /// RTT_old` (rounded down, computed in `u128` nanoseconds), at least `initial`.
    pub fn window(input: &WindowInput) -> u64 {
        let Some(old) = input.min_rtt_old.filter(|d| d.0 > 0) else {
            return input.initial_window;
        };
        if input.rtt_new >= old {
            return input.initial_window;
        }
        let scaled =
            u128::from(input.cwnd_old) * u128::from(old.0 - input.rtt_new.0) / u128::from(old.0);
        u64::try_from(scaled)
            .unwrap_or(u64::MAX)
            .max(input.initial_window)
    }
}

impl WindowPolicy for RttRatio {
    fn on_validated(&self, input: &WindowInput) -> WindowDecision {
        WindowDecision::Restart {
            window: RttRatio::window(input),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimDuration;

    fn input(cwnd_old: u64, old_ms: u64, new_us: u64) -> WindowInput {
        WindowInput {
            cwnd_old,
            min_rtt_old: Some(SimDuration::from_millis(old_ms)),
            rtt_new: SimDuration::from_micros(new_us),
            initial_window: 46_720,
            port_only: false,
        }
    }

    /// Paper 004's handover: 5G (RTT 27-48 ms) to campus (1.7-3.5 ms). With RTT_old =
    /// 27 ms and RTT_new = 3.5 ms the new window keeps (27 − 3.5) / 27 = 87 % of the old
    /// one, close to the "about 86 %" the paper reports.
    #[test]
    fn paper_004_handover_keeps_most_of_the_window() {
        let w = RttRatio::window(&input(1_000_000, 27, 3_500));
        assert_eq!(w, 1_000_000 * 23_500 / 27_000);
        assert!((860_000..=880_000).contains(&w), "{w}");
    }

    #[test]
    fn a_longer_or_equal_new_rtt_gives_the_initial_window() {
        assert_eq!(RttRatio::window(&input(1_000_000, 30, 30_000)), 46_720);
        assert_eq!(RttRatio::window(&input(1_000_000, 30, 90_000)), 46_720);
    }

    #[test]
    fn never_below_the_initial_window() {
        // 50 % of 60 000 = 30 000 < 46 720.
        assert_eq!(RttRatio::window(&input(60_000, 40, 20_000)), 46_720);
        let mut i = input(1_000_000, 40, 1_000);
        i.min_rtt_old = None;
        assert_eq!(RttRatio::window(&i), 46_720);
    }
}

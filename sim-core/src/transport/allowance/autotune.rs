//! The `autotune` allowance: Google quiche's receive-window auto-tuning (R. Shade, "Flow
//! control in Google QUIC", 2016; `quiche/quic/core/quic_flow_controller.cc`
//! `MaybeSendWindowUpdate` / `MaybeIncreaseMaxWindowSize`; paper 001 §2, its ref. 16).

use super::{below_half_window, follow_stream, Allowance, AllowanceInput, UpdateClock};

/// Auto-tuning: the `static` trigger (credit below half the window, refill to
/// `consumed + window`); at an update less than 2 smoothed RTTs after the previous one
/// (the first consumption counts as the first update), the window doubles first, up to
/// `max_window`. It never shrinks.
///
/// At connection level it also follows the streams ([`Allowance::on_stream_window`]): the
/// window is raised to `1.5 x` a stream's window (capped at `max_window`) whenever that is
/// larger — Cloudflare quiche's `ensure_window_lower_bound` and the intent Google quiche
/// states for `kSessionFlowControlMultiplier` (its `EnsureWindowAtLeast` returns early
/// unless the asked size exceeds the session limit, which with its default limits never
/// happens; this model follows the stated intent). The raised window takes effect at the
/// next threshold check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AutotuneAllowance {
    window: u64,
    max_window: u64,
    clock: UpdateClock,
    increases: u64,
}

impl AutotuneAllowance {
    /// Starts at `window` bytes, grows up to `max_window` (at least `window`).
    pub fn new(window: u64, max_window: u64) -> Self {
        AutotuneAllowance {
            window,
            max_window: max_window.max(window),
            clock: UpdateClock::default(),
            increases: 0,
        }
    }
}

impl Allowance for AutotuneAllowance {
    fn window(&self) -> u64 {
        self.window
    }

    fn update(&mut self, input: &AllowanceInput) -> Option<u64> {
        self.clock.observe(input.now);
        if !below_half_window(input, self.window) {
            return None;
        }
        if self.clock.within_two_rtt(input) && self.window < self.max_window {
            // quiche `IncreaseWindowSize`: double, capped at the limit.
            self.window = self.window.saturating_mul(2).min(self.max_window);
            self.increases += 1;
        }
        let new_limit = input.consumed.saturating_add(self.window);
        (new_limit > input.limit).then_some(new_limit)
    }

    fn on_stream_window(&mut self, stream_window: u64) {
        let w = follow_stream(self.window, stream_window, self.max_window);
        if w > self.window {
            self.window = w;
            self.increases += 1;
        }
    }

    fn increases(&self) -> u64 {
        self.increases
    }

    fn name(&self) -> &'static str {
        "autotune"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{SimDuration, SimTime};

    fn at(ms: u64, last: Option<u64>, consumed: u64, limit: u64) -> AllowanceInput {
        AllowanceInput {
            now: SimTime(ms * 1_000_000),
            srtt: SimDuration::from_millis(10),
            last_update: last.map(|m| SimTime(m * 1_000_000)),
            consumed,
            received: consumed,
            limit,
        }
    }

    #[test]
    fn doubles_under_two_rtt_up_to_the_bound() {
        let mut a = AutotuneAllowance::new(1000, 3000);
        assert_eq!(a.update(&at(0, None, 100, 1000)), None, "first consumption");
        // 5 ms after the first consumption (< 20 ms): doubles to 2000.
        assert_eq!(a.update(&at(5, None, 501, 1000)), Some(2501));
        assert_eq!(a.window(), 2000);
        // 30 ms later (>= 2 RTT): no growth.
        assert_eq!(a.update(&at(35, Some(5), 1600, 2501)), Some(3600));
        assert_eq!(a.window(), 2000);
        // 10 ms later: doubles, capped at 3000.
        assert_eq!(a.update(&at(45, Some(35), 2700, 3600)), Some(5700));
        assert_eq!(a.window(), 3000);
        assert_eq!(a.update(&at(46, Some(45), 4300, 5700)), Some(7300));
        assert_eq!(a.window(), 3000);
        assert_eq!(a.increases(), 2);
    }

    #[test]
    fn follows_stream_windows_up_to_its_bound() {
        let mut c = AutotuneAllowance::new(1000, 5000);
        c.on_stream_window(500);
        assert_eq!(c.window(), 1000);
        c.on_stream_window(2000);
        assert_eq!(c.window(), 3000);
        c.on_stream_window(4000);
        assert_eq!(c.window(), 5000);
    }
}

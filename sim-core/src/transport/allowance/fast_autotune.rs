//! The `fast_autotune` allowance: paper 001's Algorithm 1 (Lee & An, "Enhanced flow
//! control for low latency in QUIC", Energies 2022, §3).

use super::{below_half_window, follow_stream, Allowance, AllowanceInput, UpdateClock};

/// Fast auto-tuning: the `autotune` trigger and timing (credit below half the window;
/// growth at an update less than 2 smoothed RTTs after the previous one, the first
/// consumption counting as the first update), but the window is multiplied by a factor
/// chosen from the buffer occupancy `B = window / upper bound x 100` (paper 001 Eq. 1-2,
/// Algorithm 1 lines 5-12): `B >= 75` -> 2, `50 <= B < 75` -> 4, `25 <= B < 50` -> 8,
/// `B < 25` -> 16; then `window = min(window x F, upper bound)` (line 15) and the limit
/// becomes `consumed + window` (line 18: the max offset grows by `window - available`).
///
/// Occupancy at connection level: Eq. 2 writes `S_win / C_upper`; this model reads
/// `S_win` there as the connection's own window (Algorithm 1 uses one `W_max` for either
/// level), so a connection's factor comes from its own window and bound.
///
/// At connection level it follows the streams like [`super::AutotuneAllowance`] (at least
/// `1.5 x` a stream's window, capped at its bound): the paper builds on Google's
/// auto-tuning and does not change that rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FastAutotuneAllowance {
    window: u64,
    max_window: u64,
    clock: UpdateClock,
    increases: u64,
}

impl FastAutotuneAllowance {
    /// Starts at `window` bytes, grows up to `max_window` (at least `window`).
    pub fn new(window: u64, max_window: u64) -> Self {
        FastAutotuneAllowance {
            window,
            max_window: max_window.max(window),
            clock: UpdateClock::default(),
            increases: 0,
        }
    }

    /// The increase factor for `window` under `upper` (paper 001 Algorithm 1 lines 5-12),
    /// from the occupancy `B = 100 x window / upper` compared in integers.
    pub fn factor(window: u64, upper: u64) -> u64 {
        let (w, u) = (window as u128, upper as u128);
        if 4 * w >= 3 * u {
            2 // B >= 75
        } else if 2 * w >= u {
            4 // 50 <= B < 75
        } else if 4 * w >= u {
            8 // 25 <= B < 50
        } else {
            16 // B < 25
        }
    }
}

impl Allowance for FastAutotuneAllowance {
    fn window(&self) -> u64 {
        self.window
    }

    fn update(&mut self, input: &AllowanceInput) -> Option<u64> {
        self.clock.observe(input.now);
        if !below_half_window(input, self.window) {
            return None;
        }
        if self.clock.within_two_rtt(input) && self.window < self.max_window {
            let f = Self::factor(self.window, self.max_window);
            self.window = self.window.saturating_mul(f).min(self.max_window);
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
        "fast_autotune"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factor_by_occupancy_bands() {
        // Paper 001 Algorithm 1: band edges belong to the upper band.
        assert_eq!(FastAutotuneAllowance::factor(75, 100), 2);
        assert_eq!(FastAutotuneAllowance::factor(100, 100), 2);
        assert_eq!(FastAutotuneAllowance::factor(74, 100), 4);
        assert_eq!(FastAutotuneAllowance::factor(50, 100), 4);
        assert_eq!(FastAutotuneAllowance::factor(49, 100), 8);
        assert_eq!(FastAutotuneAllowance::factor(25, 100), 8);
        assert_eq!(FastAutotuneAllowance::factor(24, 100), 16);
        assert_eq!(FastAutotuneAllowance::factor(0, 100), 16);
        assert_eq!(FastAutotuneAllowance::factor(u64::MAX, u64::MAX), 2);
    }
}

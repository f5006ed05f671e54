//! The `improved_static` allowance: a fixed window refilled one MSS earlier than
//! `static` (Volodina & Rathgeb, "Flow control in the context of the multiplexed
//! transport protocol QUIC", LCN 2020; paper 001 §2, its ref. 17).

use super::{Allowance, AllowanceInput};

/// The improved static allowance: a fixed window; the receiver advertises
/// `consumed + window` once the bytes consumed since the limit was last set exceed
/// `window / 2 - mss` (paper 001 §2: "the MAX_STREAM_DATA frame is sent one packet earlier
/// than the static allowance"), i.e. once the credit left falls below
/// `window / 2 + mss`. With `mss = 0` it is the `static` rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImprovedStaticAllowance {
    window: u64,
    mss: u64,
}

impl ImprovedStaticAllowance {
    /// An improved static allowance of `window` bytes refilled `mss` bytes early.
    pub fn new(window: u64, mss: u64) -> Self {
        ImprovedStaticAllowance { window, mss }
    }
}

impl Allowance for ImprovedStaticAllowance {
    fn window(&self) -> u64 {
        self.window
    }

    fn update(&mut self, input: &AllowanceInput) -> Option<u64> {
        if input.available() >= (self.window / 2).saturating_add(self.mss) {
            return None;
        }
        let new_limit = input.consumed.saturating_add(self.window);
        (new_limit > input.limit).then_some(new_limit)
    }

    fn name(&self) -> &'static str {
        "improved_static"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{SimDuration, SimTime};
    use crate::transport::allowance::StaticAllowance;

    fn input(consumed: u64, limit: u64) -> AllowanceInput {
        AllowanceInput {
            now: SimTime::ZERO,
            srtt: SimDuration::from_millis(10),
            last_update: None,
            consumed,
            received: consumed,
            limit,
        }
    }

    #[test]
    fn refills_one_mss_before_static() {
        // Window 4000, MSS 1000: static waits for credit < 2000 (consumed > 2000), the
        // improved rule for credit < 3000 (consumed > 1000 = window/2 - MSS).
        let mut a = ImprovedStaticAllowance::new(4000, 1000);
        let mut s = StaticAllowance::new(4000);
        assert_eq!(a.update(&input(1000, 4000)), None);
        assert_eq!(a.update(&input(1001, 4000)), Some(5001));
        assert_eq!(s.update(&input(1001, 4000)), None);
        assert_eq!(s.update(&input(2001, 4000)), Some(6001));
        assert_eq!(a.window(), 4000, "the window never changes");
    }

    #[test]
    fn zero_mss_is_static() {
        let mut a = ImprovedStaticAllowance::new(1001, 0);
        let mut s = StaticAllowance::new(1001);
        for consumed in 0..=1001 {
            assert_eq!(
                a.update(&input(consumed, 1001)),
                s.update(&input(consumed, 1001))
            );
        }
    }
}

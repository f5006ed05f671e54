//! The `static` allowance: a fixed window, refilled when half of it is used.

use super::{Allowance, AllowanceInput};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{SimDuration, SimTime};

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
    fn refills_below_half_window() {
        let mut a = StaticAllowance::new(1000);
        // Credit 500 = window/2: not yet (the rule is strict).
        assert_eq!(a.update(&input(500, 1000)), None);
        assert_eq!(a.update(&input(501, 1000)), Some(1501));
        assert_eq!(a.window(), 1000);
    }
}

//! A user's congestion controller plugged into quicsim without forking it: an AIMD with a
//! planted bug, registered under the name `broken_aimd` (`docs/property-testing.md`).
//!
//! The bug: on a congestion event the window is halved, `cwnd = cwnd / 2`, and never
//! raised back to the minimum window. RFC 9002 §7.3.2 / Appendix B.6 sets
//! `congestion_window = max(ssthresh, kMinimumWindow)`; without the `max`, a few losses in
//! a row take the window below the 2 datagrams the controller itself declares as its
//! minimum ([`CongestionController::minimum_window`]), which
//! `sim_core::testing::Watch` reports. [`Aimd::fixed`] is the same controller with the
//! floor, which passes.

use sim_core::cc::{CcContext, CongestionController, ControllerFactory, RttSnapshot};
use sim_core::time::SimTime;
use sim_core::Registry;
use std::sync::Arc;

/// The registered name of the broken controller.
pub const NAME: &str = "broken_aimd";
/// The registered name of the fixed one.
pub const FIXED_NAME: &str = "fixed_aimd";

/// AIMD(1, 0.5) counted in bytes: slow start (+1 segment per acknowledged segment) up to
/// `ssthresh`, then +1 segment per window (RFC 9002 Appendix B).
#[derive(Debug)]
pub struct Aimd {
    segment: u64,
    cwnd: u64,
    ssthresh: Option<u64>,
    recovery_start: Option<SimTime>,
    /// Whether the RFC 9002 §7.3.2 floor at the minimum window is applied.
    floor: bool,
    name: &'static str,
}

impl Aimd {
    /// The broken controller (no floor on a decrease).
    pub fn broken(segment: u64, initial_window: u64) -> Self {
        Aimd {
            segment,
            cwnd: initial_window,
            ssthresh: None,
            recovery_start: None,
            floor: false,
            name: NAME,
        }
    }

    /// The same controller with the floor of RFC 9002 §7.3.2.
    pub fn fixed(segment: u64, initial_window: u64) -> Self {
        Aimd {
            floor: true,
            name: FIXED_NAME,
            ..Aimd::broken(segment, initial_window)
        }
    }
}

impl CongestionController for Aimd {
    fn on_packet_sent(&mut self, _now: SimTime, _bytes: u64, _bytes_in_flight_after: u64) {}

    fn on_packet_acked(
        &mut self,
        _now: SimTime,
        sent_time: SimTime,
        bytes: u64,
        app_limited: bool,
        _rtt: &RttSnapshot,
    ) {
        // RFC 9002 §7.8 (app-limited) and B.5 (no growth in recovery).
        if app_limited || self.in_recovery(sent_time) {
            return;
        }
        self.recovery_start = None;
        if self.ssthresh.is_none_or(|s| self.cwnd < s) {
            self.cwnd += bytes;
        } else {
            self.cwnd += self.segment * bytes / self.cwnd.max(1);
        }
    }

    fn on_congestion_event(&mut self, now: SimTime, newest_lost_sent_time: SimTime, _bif: u64) {
        if self.in_recovery(newest_lost_sent_time) {
            return;
        }
        self.recovery_start = Some(now);
        let half = self.cwnd / 2;
        // THE BUG: RFC 9002 §7.3.2 says max(ssthresh, kMinimumWindow).
        let half = if self.floor {
            half.max(self.minimum_window())
        } else {
            half
        };
        self.ssthresh = Some(half);
        self.cwnd = half;
    }

    fn on_persistent_congestion(&mut self, _now: SimTime) {
        // RFC 9002 §7.6.2: collapse to the minimum window.
        self.cwnd = self.minimum_window();
        self.recovery_start = None;
    }

    fn window(&self) -> u64 {
        self.cwnd
    }

    fn ssthresh(&self) -> Option<u64> {
        self.ssthresh
    }

    fn in_recovery(&self, sent_time: SimTime) -> bool {
        self.recovery_start.is_some_and(|r| sent_time <= r)
    }

    fn recovering(&self) -> bool {
        self.recovery_start.is_some()
    }

    fn name(&self) -> &'static str {
        self.name
    }

    fn minimum_window(&self) -> u64 {
        2 * self.segment // RFC 9002 §7.2 kMinimumWindow
    }

    fn loss_reduction_factor(&self) -> f64 {
        0.5 // RFC 9002 §7.3.2 kLossReductionFactor
    }
}

/// Builds [`Aimd`] for each connection.
#[derive(Debug)]
pub struct Factory {
    /// Build the fixed controller rather than the broken one.
    pub fixed: bool,
}

impl ControllerFactory for Factory {
    fn build(&self, ctx: &CcContext) -> Box<dyn CongestionController> {
        if self.fixed {
            Box::new(Aimd::fixed(ctx.segment_size, ctx.initial_window))
        } else {
            Box::new(Aimd::broken(ctx.segment_size, ctx.initial_window))
        }
    }
}

/// The built-in controllers plus `broken_aimd` and `fixed_aimd`.
pub fn registry() -> Registry {
    let mut r = Registry::builtin();
    r.register(NAME, Arc::new(Factory { fixed: false }))
        .expect("a new name");
    r.register(FIXED_NAME, Arc::new(Factory { fixed: true }))
        .expect("a new name");
    r
}

/// What the runner prints for a scenario: one line per run, `seed digest status`.
pub fn run_scenario(text: &str) -> Result<Vec<String>, String> {
    let scenario =
        sim_core::scenario::parse_str_with(text, &registry()).map_err(|e| e.to_string())?;
    let mut lines = Vec::new();
    for point in &scenario.points {
        let cfg = &point.config;
        for run in 0..cfg.runs {
            let seed = sim_core::study::run_seed(cfg.seed, run);
            let r = sim_core::run(cfg, seed).map_err(|e| e.to_string())?;
            lines.push(format!("{seed} {} {:?}", r.digest, r.status));
        }
    }
    Ok(lines)
}

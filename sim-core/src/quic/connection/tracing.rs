//! Trace emission (observes only, never changes behaviour): recovery parameters,
//! connection and congestion state updates, recovery metrics, blocked reasons.

use super::*;

impl Connection {
    // ----- tracing (observes only) ------------------------------------------------------

    pub(super) fn recovery_parameters(&self) -> RecoveryParameters {
        let rc = self.path.recovery.config();
        RecoveryParameters {
            reordering_threshold: rc.packet_threshold,
            time_threshold: rc.time_threshold_num as f64 / rc.time_threshold_den as f64,
            timer_granularity: rc.granularity,
            initial_rtt: rc.initial_rtt,
            max_datagram_size: rc.max_datagram_size,
            initial_congestion_window: rc.initial_window,
            minimum_congestion_window: self.path.recovery.cc().minimum_window(),
            loss_reduction_factor: self.path.recovery.cc().loss_reduction_factor(),
            persistent_congestion_threshold: rc.persistent_congestion_threshold,
            congestion_controller: self.path.recovery.cc().name(),
        }
    }

    pub(super) fn trace_connection_state(&mut self, now: SimTime, new: ConnectionState) {
        if self.trace.is_on() && self.trace_state != Some(new) {
            let old = self.trace_state;
            self.trace
                .push(now, TraceEvent::ConnectionStateUpdated { old, new });
        }
        self.trace_state = Some(new);
    }

    /// Emits the recovery metrics that changed since the last emission, and the
    /// congestion state when the window moved.
    #[inline]
    pub(super) fn trace_metrics_update(&mut self, now: SimTime) {
        // The test inline, the event out of line: called twice per packet, traced in
        // few runs.
        if self.trace.is_on() {
            self.trace_metrics_update_on(now);
        }
    }

    /// [`Connection::trace_metrics_update`] with tracing on.
    #[inline(never)]
    fn trace_metrics_update_on(&mut self, now: SimTime) {
        let r = &self.path.recovery;
        let rtt = r.rtt();
        let srtt = rtt.smoothed_rtt();
        let packets_in_flight = Space::ALL
            .iter()
            .flat_map(|&sp| r.outstanding(sp))
            .filter(|p| p.in_flight)
            .count() as u64;
        let pacing_rate = if let Some(rate) = r.cc().pacing_rate() {
            // A controller's own rate (BBR), bytes/s to bits/s.
            Some(rate.saturating_mul(8))
        } else if self.cfg.cc.pacing && srtt.as_nanos() > 0 {
            let bits = self.pacing_gain() as u128 * r.cwnd() as u128 * 8 * 1_000_000;
            Some((bits / srtt.as_nanos() as u128).min(u64::MAX as u128) as u64)
        } else {
            None
        };
        let now_m = RecoveryMetrics {
            min_rtt: rtt.has_sample().then(|| rtt.min_rtt()),
            smoothed_rtt: Some(srtt),
            latest_rtt: rtt.has_sample().then(|| rtt.latest_rtt()),
            rtt_variance: Some(rtt.rttvar()),
            pto_count: Some(r.pto_count()),
            congestion_window: Some(r.cwnd()),
            bytes_in_flight: Some(r.bytes_in_flight()),
            ssthresh: r.cc().ssthresh(),
            packets_in_flight: Some(packets_in_flight),
            pacing_rate,
            model_bandwidth: r.cc().model().map(|m| m.bandwidth.saturating_mul(8)),
            model_min_rtt: r
                .cc()
                .model()
                .map(|m| m.min_rtt)
                .filter(|t| t.as_nanos() > 0),
        };
        let d = RecoveryMetrics::changes(self.trace_metrics.as_ref(), &now_m);
        if !d.is_empty() {
            self.trace.push(now, TraceEvent::MetricsUpdated(d));
        }
        self.trace_metrics = Some(now_m);
        self.trace_cwnd_state(now, None);
    }

    /// Congestion state from the window: `recovery` after a reduction, then
    /// `slow_start` / `congestion_avoidance` once it grows again.
    ///
    /// A model-based controller ([`crate::cc::CongestionController::model`], BBR) reports
    /// its own state instead (`startup`, `drain`, `probe_bw`, `probe_rtt`, or `recovery`
    /// while it is in a recovery period).
    pub(super) fn trace_cwnd_state(&mut self, now: SimTime, trigger: Option<&'static str>) {
        let cwnd = self.path.recovery.cwnd();
        if let Some(m) = self.path.recovery.cc().model() {
            let new = if self.path.recovery.cc().recovering() {
                "recovery"
            } else {
                m.state
            };
            self.trace_last_cwnd = cwnd;
            if self.trace_cc_state != Some(new) {
                let old = self.trace_cc_state;
                let trigger = trigger.or((new == "recovery").then_some("loss"));
                self.trace.push(
                    now,
                    TraceEvent::CongestionStateUpdated { old, new, trigger },
                );
                self.trace_cc_state = Some(new);
            }
            return;
        }
        let ss = self.path.recovery.cc().ssthresh();
        let grown_state = if ss.is_none_or(|s| cwnd < s) {
            "slow_start"
        } else {
            "congestion_avoidance"
        };
        let new = if self.trace_cc_state.is_none() {
            grown_state
        } else if cwnd < self.trace_last_cwnd {
            "recovery"
        } else if cwnd > self.trace_last_cwnd {
            grown_state
        } else {
            self.trace_cc_state.unwrap_or(grown_state)
        };
        self.trace_last_cwnd = cwnd;
        if self.trace_cc_state != Some(new) {
            let old = self.trace_cc_state;
            let trigger = trigger.or(match new {
                "recovery" => Some("loss"),
                _ => None,
            });
            self.trace.push(
                now,
                TraceEvent::CongestionStateUpdated { old, new, trigger },
            );
            self.trace_cc_state = Some(new);
        }
    }

    pub(super) fn blocked_reason(&self, st: BlockState) -> Option<(Option<u64>, BlockedReason)> {
        match st {
            BlockState::None => None,
            BlockState::Cwnd => Some((None, BlockedReason::CongestionControl)),
            BlockState::Amplification => Some((None, BlockedReason::AmplificationProtection)),
            BlockState::FlowControl => {
                if self.send_fc.credit() == 0 {
                    Some((None, BlockedReason::ConnectionFlowControl))
                } else {
                    // Streams with unsent data are among those with new data.
                    let id = self
                        .streams
                        .find_new(None, |s| s.send.unsent() > 0 && s.send_credit() == 0);
                    Some((id, BlockedReason::StreamFlowControl))
                }
            }
        }
    }
}

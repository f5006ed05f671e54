//! CUBIC (RFC 9438), byte-based, with optional HyStart++ and Chromium-style emulation of
//! N connections.
//!
//! Windows are bytes; the RFC's segment formulas are scaled by the maximum datagram size
//! (MSS here): `W_cubic(t) = C·MSS·(t−K)³ + W_max` with `K = cbrt((W_max − cwnd_epoch) /
//! (C·MSS))`, `t` in seconds since the epoch started (app-limited time excluded, §5.8).
//! Float math goes through `libm` so native and wasm agree bit for bit.
//!
//! - Slow start: `cwnd += acked` (or HyStart++'s growth, RFC 9406).
//! - Congestion avoidance, per acknowledged packet (§4.2–4.5):
//!   `target = clamp(W_cubic(t + srtt), cwnd, 1.5·cwnd)`;
//!   `W_est += α·MSS·acked/cwnd`, α switching to 1 once `W_est ≥ cwnd_prior` (§4.3);
//!   if `W_cubic(t) < W_est` then `cwnd = W_est` (Reno-friendly region), else
//!   `cwnd += (target − cwnd)·acked/cwnd` (concave and convex regions).
//! - Congestion event, once per recovery period (§4.6, §4.7, RFC 9002 B.6):
//!   with fast convergence and `cwnd < W_max`: `W_max = cwnd·(1+β)/2`, else `W_max = cwnd`;
//!   `cwnd_prior = cwnd`; `ssthresh = max(β·cwnd, 2·MSS)` (§4.6 allows cwnd instead of the
//!   flight size for senders that do not grow cwnd while app-limited, as here); `cwnd =
//!   ssthresh`; the next congestion-avoidance epoch starts afresh.
//! - Persistent congestion (the QUIC analogue of a timeout, §4.8): `ssthresh = max(β·cwnd,
//!   2·MSS)`, `cwnd = 2·MSS` (RFC 9002 kMinimumWindow), and the first epoch after it uses
//!   `K = 0`, `W_max = W_est = cwnd` at the epoch start.
//! - Slow start left without loss (HyStart++): `cwnd_prior = W_max = cwnd`, `K = 0` (§4.10).
//! - N emulated connections (Chromium's `kDefaultNumConnections = 2`):
//!   `β_eff = (N − 1 + β)/N`, `α = 3N²(1 − β_eff)/(1 + β_eff)`, fast-convergence factor
//!   `(N − 1 + (1 + β)/2)/N`. With N = 1 these are the RFC's β, `3(1−β)/(1+β)` and `(1+β)/2`.

use super::hybrid_slow_start::HybridSlowStart;
use super::hystart::{HyStart, Verdict};
use super::{minimum_window, CongestionController, RttSnapshot};
use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

/// The name [`Cubic`] reports.
pub const NAME: &str = "cubic";

/// CUBIC's row of [`super::CONTROLLERS`]: RFC 9438 ([`Cubic`]) or Linux's
/// ([`super::LinuxCubic`]) as `cubic_flavor` says.
pub const CONTROLLER: super::ControllerDef = super::ControllerDef {
    name: NAME,
    aliases: &[],
    trace_name: NAME,
    build: |ctx| {
        let (segment, iw, p) = (ctx.segment_size, ctx.initial_window, ctx.params);
        match p.cubic().flavor {
            CubicFlavor::Rfc9438 => Box::new(Cubic::new(segment, iw, p.cubic(), p.pacing)),
            CubicFlavor::Linux => {
                Box::new(super::LinuxCubic::new(segment, iw, p.cubic(), p.pacing))
            }
        }
    },
    sctp: true,
};

/// Which CUBIC: the RFC as written, or Linux's `net/ipv4/tcp_cubic.c` where it differs.
/// Serialised as `"rfc9438"` / `"linux"` (TCP's scenario key `cubic`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CubicFlavor {
    /// RFC 9438 ([`Cubic`], with HyStart++ when `hystart` is on). Default, and QUIC's.
    #[default]
    Rfc9438,
    /// Linux's `tcp_cubic.c` ([`super::cubic_linux::LinuxCubic`], with Linux HyStart when
    /// `hystart` is on). TCP's default.
    Linux,
}

impl CubicFlavor {
    /// The scenario spelling (`"rfc9438"`, `"linux"`).
    pub fn name(self) -> &'static str {
        match self {
            CubicFlavor::Rfc9438 => "rfc9438",
            CubicFlavor::Linux => "linux",
        }
    }
}

/// Which slow-start exit `hystart = true` runs with the RFC 9438 CUBIC (`hystart_flavor`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HyStartFlavor {
    /// HyStart++ (RFC 9406, [`super::hystart`]): on a delay increase, conservative slow
    /// start for up to 5 rounds. Default.
    #[default]
    Rfc9406,
    /// Chromium's and quic-go's `HybridSlowStart` ([`super::hybrid_slow_start`]): on a
    /// delay increase over the connection's minimum RTT, leave slow start at once.
    HybridSlowStart,
}

impl HyStartFlavor {
    /// Every flavour, in declaration order (`validate::schema`'s tests check it lists
    /// every variant).
    pub const ALL: [HyStartFlavor; 2] = [HyStartFlavor::Rfc9406, HyStartFlavor::HybridSlowStart];

    /// The scenario names of every flavour, from [`HyStartFlavor::ALL`]: the schema's
    /// `hystart_flavor` choices.
    pub const NAMES: [&'static str; HyStartFlavor::ALL.len()] = {
        let mut out = [""; HyStartFlavor::ALL.len()];
        let mut i = 0;
        while i < out.len() {
            out[i] = HyStartFlavor::ALL[i].name();
            i += 1;
        }
        out
    };

    /// The scenario spelling.
    pub const fn name(self) -> &'static str {
        match self {
            HyStartFlavor::Rfc9406 => "rfc9406",
            HyStartFlavor::HybridSlowStart => "hybrid_slow_start",
        }
    }

    /// Whether this is the default (not serialised then).
    pub fn is_default(&self) -> bool {
        *self == HyStartFlavor::default()
    }
}

/// CUBIC parameters (defaults: RFC 9438 §4.1 and §4.6, and RFC 9406 for HyStart++).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CubicParams {
    /// β_cubic, the multiplicative decrease factor (RFC 9438 §4.6: 0.7).
    pub beta: f64,
    /// C, in segments/s³ (RFC 9438 §4.2: 0.4).
    pub c: f64,
    /// Fast convergence (RFC 9438 §4.7: SHOULD be on; SHOULD be off with a single flow).
    pub fast_convergence: bool,
    /// Number of emulated connections N (Chromium uses 2; the RFC is N = 1).
    pub emulated_connections: u32,
    /// Use HyStart++ (RFC 9406) in slow start (RFC 9438 §4.10 SHOULD); with the Linux
    /// flavour, Linux HyStart ([`super::hystart_linux`]) instead.
    pub hystart: bool,
    /// RFC 9438 or Linux's `tcp_cubic.c` ([`CubicFlavor`]). Default RFC 9438.
    pub flavor: CubicFlavor,
    /// The slow-start exit `hystart` runs with RFC 9438 ([`HyStartFlavor`]). Default
    /// HyStart++.
    pub hystart_flavor: HyStartFlavor,
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams {
            beta: 0.7,
            c: 0.4,
            fast_convergence: true,
            emulated_connections: 1,
            hystart: false,
            flavor: CubicFlavor::Rfc9438,
            hystart_flavor: HyStartFlavor::Rfc9406,
        }
    }
}

impl CubicParams {
    /// β_eff = (N − 1 + β)/N.
    pub fn beta_eff(&self) -> f64 {
        let n = self.emulated_connections.max(1) as f64;
        (n - 1.0 + self.beta) / n
    }
    /// α for the Reno-friendly estimate: 3N²(1 − β_eff)/(1 + β_eff) (RFC 9438 §4.3 for N = 1).
    pub fn alpha(&self) -> f64 {
        let n = self.emulated_connections.max(1) as f64;
        let b = self.beta_eff();
        3.0 * n * n * (1.0 - b) / (1.0 + b)
    }
    /// Fast-convergence factor: (N − 1 + (1 + β)/2)/N (RFC 9438 §4.7 for N = 1).
    pub fn fast_convergence_factor(&self) -> f64 {
        let n = self.emulated_connections.max(1) as f64;
        (n - 1.0 + (1.0 + self.beta) / 2.0) / n
    }
}

/// CUBIC congestion controller state.
#[derive(Clone, Debug)]
pub struct Cubic {
    p: CubicParams,
    mss: u64,
    min_window: u64,
    cwnd: u64,
    ssthresh: Option<u64>,
    recovery_start: Option<SimTime>,
    /// Bytes; the window before the last reduction.
    cwnd_prior: f64,
    /// Bytes.
    w_max: f64,
    /// Seconds.
    k: f64,
    epoch_start: Option<SimTime>,
    cwnd_epoch: f64,
    w_est: f64,
    alpha: f64,
    /// Fractional bytes of growth carried between acknowledgements.
    carry: f64,
    last_ack: Option<SimTime>,
    after_timeout: bool,
    hystart: Option<HyStart>,
    /// Chromium / quic-go hybrid slow start, if `hystart_flavor` chooses it (then
    /// `hystart` is `None`).
    hybrid: Option<HybridSlowStart>,
    /// A recovery period is under way: no packet sent after its start has been
    /// acknowledged yet (RFC 9002 §7.3.2).
    recovering: bool,
}

impl Cubic {
    /// A controller with `initial_window` bytes and datagrams of `mss` bytes.
    pub fn new(mss: u64, initial_window: u64, params: CubicParams, paced: bool) -> Self {
        assert!(mss > 0, "mss must be positive");
        Cubic {
            p: params,
            mss,
            min_window: minimum_window(mss),
            cwnd: initial_window.max(1),
            ssthresh: None,
            recovery_start: None,
            cwnd_prior: 0.0,
            w_max: 0.0,
            k: 0.0,
            epoch_start: None,
            cwnd_epoch: 0.0,
            w_est: 0.0,
            alpha: params.alpha(),
            carry: 0.0,
            last_ack: None,
            after_timeout: false,
            hystart: (params.hystart && params.hystart_flavor == HyStartFlavor::Rfc9406)
                .then(|| HyStart::new(mss, paced)),
            hybrid: (params.hystart && params.hystart_flavor == HyStartFlavor::HybridSlowStart)
                .then(|| HybridSlowStart::new(mss)),
            recovering: false,
        }
    }

    /// The parameters.
    pub fn params(&self) -> &CubicParams {
        &self.p
    }
    /// W_max in bytes.
    pub fn w_max(&self) -> f64 {
        self.w_max
    }
    /// K in seconds (of the current epoch).
    pub fn k(&self) -> f64 {
        self.k
    }
    /// The Reno-friendly estimate W_est in bytes.
    pub fn w_est(&self) -> f64 {
        self.w_est
    }
    /// Current α used for W_est.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    /// The window before the last reduction, in bytes.
    pub fn cwnd_prior(&self) -> f64 {
        self.cwnd_prior
    }
    /// HyStart++ state, if enabled.
    pub fn hystart(&self) -> Option<&HyStart> {
        self.hystart.as_ref()
    }

    fn in_slow_start(&self) -> bool {
        self.ssthresh.is_none_or(|s| self.cwnd < s)
    }

    /// K = cbrt((W_max − cwnd_epoch)/(C·MSS)) seconds (RFC 9438 Figure 2), 0 when
    /// W_max ≤ cwnd_epoch.
    pub fn compute_k(w_max: f64, cwnd_epoch: f64, c: f64, mss: f64) -> f64 {
        if w_max <= cwnd_epoch {
            0.0
        } else {
            libm::cbrt((w_max - cwnd_epoch) / (c * mss))
        }
    }

    /// W_cubic(t) in bytes (RFC 9438 Figure 1), t in seconds since the epoch started.
    pub fn w_cubic(&self, t: f64) -> f64 {
        let d = t - self.k;
        self.p.c * self.mss as f64 * d * d * d + self.w_max
    }

    fn start_epoch(&mut self, now: SimTime) {
        self.epoch_start = Some(now);
        self.cwnd_epoch = self.cwnd as f64;
        self.carry = 0.0;
        if self.after_timeout || self.w_max <= self.cwnd_epoch {
            // §4.8 (first epoch after a timeout) and §4.10 (slow start left without loss):
            // K = 0 and W_max = the window at the epoch start.
            self.w_max = self.w_max.max(self.cwnd_epoch);
            if self.after_timeout {
                self.w_max = self.cwnd_epoch;
            }
            self.k = 0.0;
        } else {
            self.k = Self::compute_k(self.w_max, self.cwnd_epoch, self.p.c, self.mss as f64);
        }
        // §4.3: W_est starts at cwnd_epoch.
        self.w_est = self.cwnd_epoch;
        self.after_timeout = false;
    }

    fn congestion_avoidance(&mut self, now: SimTime, bytes: u64, rtt: &RttSnapshot) {
        if self.epoch_start.is_none() {
            self.start_epoch(now);
        }
        let epoch = self.epoch_start.expect("epoch started");
        let t = now.saturating_since(epoch).as_secs_f64();
        let cwnd = self.cwnd as f64;
        let mss = self.mss as f64;
        // Reno-friendly estimate (§4.3, Eq. 4 in bytes).
        self.w_est += self.alpha * mss * bytes as f64 / cwnd;
        if self.w_est >= self.cwnd_prior {
            self.alpha = 1.0;
        }
        let w_cubic_t = self.w_cubic(t);
        let new_cwnd = if w_cubic_t < self.w_est {
            // Reno-friendly region (§4.4).
            self.w_est
        } else {
            // Concave / convex regions (§4.5): target at one RTT ahead, clamped.
            let rtt_s = rtt.smoothed_rtt.as_secs_f64();
            let target = self.w_cubic(t + rtt_s).clamp(cwnd, 1.5 * cwnd);
            cwnd + (target - cwnd) * bytes as f64 / cwnd
        };
        // Integer window with the fractional part carried, so small per-ACK increments
        // are not lost to truncation.
        let grown = new_cwnd + self.carry;
        let whole = libm::floor(grown);
        self.carry = grown - whole;
        // The window never shrinks in congestion avoidance.
        self.cwnd = (whole as u64).max(self.cwnd);
    }
}

impl CongestionController for Cubic {
    fn on_packet_sent(&mut self, now: SimTime, _bytes: u64, _bytes_in_flight_after: u64) {
        if let Some(h) = self.hystart.as_mut() {
            h.on_packet_sent(now);
        }
        if let Some(h) = self.hybrid.as_mut() {
            h.on_packet_sent(now);
        }
    }

    fn on_packet_acked(
        &mut self,
        now: SimTime,
        sent_time: SimTime,
        bytes: u64,
        app_limited: bool,
        rtt: &RttSnapshot,
    ) {
        let last_ack = self.last_ack.replace(now);
        if self.in_recovery(sent_time) {
            return;
        }
        // RFC 9002 §7.3.2: a packet sent after the recovery start ends the period.
        self.recovering = false;
        if app_limited {
            // §5.8: no growth while application-limited, and the time does not count
            // towards t: slide the epoch forward by the time since the previous ACK.
            if let (Some(start), Some(prev)) = (self.epoch_start, last_ack) {
                self.epoch_start = Some(start + now.saturating_since(prev));
            }
            return;
        }
        if self.in_slow_start() {
            if let Some(h) = self.hybrid.as_mut() {
                if !h.on_ack(now, sent_time, rtt.latest_rtt, rtt.min_rtt, self.cwnd) {
                    self.cwnd = self.cwnd.saturating_add(bytes);
                    return;
                }
                // quic-go `MaybeExitSlowStart`: ssthresh = cwnd, before the ACK's packets
                // are counted (they grow the window in congestion avoidance); RFC 9438
                // §4.10: cwnd_prior = W_max = cwnd, K = 0.
                self.ssthresh = Some(self.cwnd);
                self.cwnd_prior = self.cwnd as f64;
                self.w_max = self.cwnd as f64;
                self.epoch_start = None;
                self.congestion_avoidance(now, bytes, rtt);
                return;
            }
            match self.hystart.as_mut() {
                Some(h) => match h.on_ack(sent_time, bytes, rtt.latest_rtt) {
                    Verdict::Grow(b) => self.cwnd = self.cwnd.saturating_add(b),
                    Verdict::ExitToCongestionAvoidance => {
                        // RFC 9406 §4.2: ssthresh = cwnd; RFC 9438 §4.10: cwnd_prior =
                        // W_max = cwnd, K = 0 (done at the epoch start).
                        self.ssthresh = Some(self.cwnd);
                        self.cwnd_prior = self.cwnd as f64;
                        self.w_max = self.cwnd as f64;
                        self.epoch_start = None;
                    }
                },
                None => self.cwnd = self.cwnd.saturating_add(bytes),
            }
            return;
        }
        self.congestion_avoidance(now, bytes, rtt);
    }

    fn on_congestion_event(
        &mut self,
        now: SimTime,
        newest_lost_sent_time: SimTime,
        _bytes_in_flight: u64,
    ) {
        if self.in_recovery(newest_lost_sent_time) {
            return;
        }
        self.recovery_start = Some(now);
        self.recovering = true;
        if let Some(h) = self.hystart.as_mut() {
            h.on_congestion();
        }
        let cwnd = self.cwnd as f64;
        // §4.7 fast convergence.
        self.w_max = if self.p.fast_convergence && cwnd < self.w_max {
            cwnd * self.p.fast_convergence_factor()
        } else {
            cwnd
        };
        self.cwnd_prior = cwnd;
        // §4.6 multiplicative decrease.
        let ss = ((cwnd * self.p.beta_eff()) as u64).max(self.min_window);
        self.ssthresh = Some(ss);
        self.cwnd = ss;
        self.alpha = self.p.alpha();
        self.epoch_start = None;
    }

    fn on_persistent_congestion(&mut self, _now: SimTime) {
        // §4.8 with RFC 9002 §7.6.2. A transport following RFC 9002 (A.9, B.7) reports
        // the losses that establish persistent congestion through `on_congestion_event`
        // first, in the same ACK: that call already set ssthresh = β·cwnd and cwnd_prior
        // for them (or they fell in a recovery period that had). Applying β again here
        // would reduce twice for one congestion signal, so ssthresh is only set when no
        // reduction happened yet.
        if self.ssthresh.is_none() {
            let ss = ((self.cwnd as f64 * self.p.beta_eff()) as u64).max(self.min_window);
            self.ssthresh = Some(ss);
            self.cwnd_prior = self.cwnd as f64;
        }
        self.cwnd = self.min_window;
        self.recovery_start = None;
        self.recovering = false;
        self.epoch_start = None;
        self.after_timeout = true;
        self.alpha = self.p.alpha();
        if let Some(h) = self.hystart.as_mut() {
            h.on_congestion();
        }
        if let Some(h) = self.hybrid.as_mut() {
            // quic-go `OnRetransmissionTimeout`: `hybridSlowStart.Restart()`.
            h.restart();
        }
    }

    fn on_retransmission_timeout(&mut self, _now: SimTime, reduce: bool) {
        if reduce {
            // §4.6-4.7 as for a congestion event (Linux: the timeout calls the same
            // `bictcp_recalc_ssthresh`).
            let cwnd = self.cwnd as f64;
            self.w_max = if self.p.fast_convergence && cwnd < self.w_max {
                cwnd * self.p.fast_convergence_factor()
            } else {
                cwnd
            };
            self.cwnd_prior = cwnd;
            self.ssthresh = Some(((cwnd * self.p.beta_eff()) as u64).max(self.min_window));
        }
        // §4.8 / RFC 5681 §3.1: the loss window, one segment; the next epoch starts with
        // K = 0 (Linux `bictcp_state(TCP_CA_Loss)` resets the curve).
        self.cwnd = self.mss;
        self.recovery_start = None;
        self.recovering = false;
        self.epoch_start = None;
        self.after_timeout = true;
        self.alpha = self.p.alpha();
        if let Some(h) = self.hystart.as_mut() {
            h.on_congestion();
        }
        if let Some(h) = self.hybrid.as_mut() {
            // quic-go `OnRetransmissionTimeout`: `hybridSlowStart.Restart()`.
            h.restart();
        }
    }

    fn undo_reduction(&mut self, _now: SimTime, prior_cwnd: u64, prior_ssthresh: Option<u64>) {
        // Linux tcp_undo_cwnd_reduction; CUBIC's undo_cwnd is tcp_reno_undo_cwnd.
        super::reno_undo(
            &mut self.cwnd,
            &mut self.ssthresh,
            prior_cwnd,
            prior_ssthresh,
        );
        self.recovery_start = None;
        self.recovering = false;
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

    fn name(&self) -> &'static str {
        NAME
    }

    fn minimum_window(&self) -> u64 {
        self.min_window
    }

    /// β_eff = (N − 1 + β)/N: RFC 9438 §4.6 β_cubic = 0.7 for N = 1. Chromium's 0.85 is
    /// this with its N = 2 (Google quiche `cubic_bytes.cc` `CubicBytes::Beta()` =
    /// `(num_connections − 1 + kBeta) / num_connections` with kBeta = 0.7, and
    /// `tcp_cubic_sender_bytes.cc` kDefaultNumConnections = 2).
    fn loss_reduction_factor(&self) -> f64 {
        self.p.beta_eff()
    }

    fn recovering(&self) -> bool {
        self.recovering
    }

    fn flavor(&self) -> Option<&'static str> {
        Some(CubicFlavor::Rfc9438.name())
    }
}

/// Convenience for tests and traces: RTT snapshot with every field equal to `rtt`.
pub fn flat_rtt(rtt: SimDuration) -> RttSnapshot {
    RttSnapshot {
        min_rtt: rtt,
        smoothed_rtt: rtt,
        latest_rtt: rtt,
        rttvar: SimDuration::ZERO,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn t(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000)
    }

    #[test]
    fn k_matches_the_rfc_worked_example() {
        // W_max = 100, cwnd_epoch = 70 segments, C = 0.4: K = cbrt(75) = 4.2172 s.
        let k = Cubic::compute_k(100_000.0, 70_000.0, 0.4, 1000.0);
        assert!((k - libm::cbrt(75.0)).abs() < 1e-12, "{k}");
        assert_eq!(Cubic::compute_k(50.0, 70.0, 0.4, 1.0), 0.0);
    }

    #[test]
    fn parameters_for_one_and_two_connections() {
        let p = CubicParams::default();
        assert!((p.beta_eff() - 0.7).abs() < 1e-15);
        assert!((p.alpha() - 9.0 / 17.0).abs() < 1e-12);
        assert!((p.fast_convergence_factor() - 0.85).abs() < 1e-15);
        let c = CubicParams {
            emulated_connections: 2,
            ..p
        };
        // Chromium N = 2: beta_eff 0.85, alpha = 3*4*0.15/1.85 = 0.973, fc factor 0.925.
        assert!((c.beta_eff() - 0.85).abs() < 1e-15);
        assert!((c.alpha() - 12.0 * 0.15 / 1.85).abs() < 1e-12);
        assert!((c.fast_convergence_factor() - 0.925).abs() < 1e-15);
    }

    /// A controller in congestion avoidance right after a loss at `w` segments.
    fn after_loss(w: u64, fc: bool) -> Cubic {
        let p = CubicParams {
            fast_convergence: fc,
            ..Default::default()
        };
        let mut c = Cubic::new(MSS, w * MSS, p, false);
        c.on_congestion_event(t(0), t(0), 0);
        c
    }

    #[test]
    fn reduction_with_and_without_fast_convergence() {
        let mut c = after_loss(100, false);
        assert_eq!(c.window(), 70_000);
        assert_eq!(c.ssthresh(), Some(70_000));
        assert_eq!(c.w_max(), 100_000.0);
        assert_eq!(c.cwnd_prior(), 100_000.0);
        // Second loss below W_max without fast convergence: W_max = cwnd.
        c.on_congestion_event(t(10), t(5), 0);
        assert_eq!(c.w_max(), 70_000.0);
        assert_eq!(c.window(), 49_000);
        let mut f = after_loss(100, true);
        f.on_congestion_event(t(10), t(5), 0);
        // With fast convergence: W_max = 70 000 * 0.85.
        assert!((f.w_max() - 59_500.0).abs() < 1e-9);
        assert_eq!(f.window(), 49_000);
    }

    #[test]
    fn w_cubic_values_and_target_clamp_at_one_and_a_half_cwnd() {
        // W_max 100 segments, cwnd_epoch 70: K = cbrt(75) s (RFC 9438 Figure 2).
        let mut c = after_loss(100, false);
        let rtt = flat_rtt(SimDuration::from_millis(100));
        c.on_packet_acked(t(1), t(1), MSS, false, &rtt); // starts the epoch
        let k = libm::cbrt(75.0);
        assert!((c.k() - k).abs() < 1e-12);
        // Figure 1: W_cubic(t) = C·(t − K)³ + W_max, in bytes (× MSS).
        assert!((c.w_cubic(0.0) - 70_000.0).abs() < 1e-6);
        assert!((c.w_cubic(k) - 100_000.0).abs() < 1e-6);
        assert!((c.w_cubic(k + 1.0) - 100_400.0).abs() < 1e-6);
        assert!((c.w_cubic(k - 2.0) - 96_800.0).abs() < 1e-6);
        // Deep in the convex region the target is clamped to 1.5·cwnd (§4.2): one MSS
        // acknowledged grows the window by (1.5·cwnd − cwnd)·MSS/cwnd = MSS/2.
        let before = c.window();
        c.on_packet_acked(t(100_000), t(100_000), MSS, false, &rtt);
        let grew = c.window() - before;
        assert!((499..=500).contains(&grew), "{grew}");
    }

    #[test]
    fn hooks_state_names_factor_and_minimum_window() {
        let c = Cubic::new(MSS, 10 * MSS, CubicParams::default(), false);
        assert_eq!(c.loss_reduction_factor(), 0.7); // RFC 9438 §4.6
        assert_eq!(c.minimum_window(), 2 * MSS);
        assert_eq!(c.state_name(), "slow_start");
        let two = CubicParams {
            emulated_connections: 2,
            ..Default::default()
        };
        // Chromium: beta_eff = (2 - 1 + 0.7)/2 = 0.85.
        assert_eq!(
            Cubic::new(1460, 14_600, two, false).loss_reduction_factor(),
            0.85
        );
        assert_eq!(Cubic::new(1460, 14_600, two, false).minimum_window(), 2920);
        let mut c = after_loss(100, false);
        assert_eq!(c.state_name(), "recovery");
        let rtt = flat_rtt(SimDuration::from_millis(10));
        c.on_packet_acked(t(1), t(0), MSS, false, &rtt);
        assert_eq!(c.state_name(), "recovery");
        c.on_packet_acked(t(2), t(1), MSS, false, &rtt);
        assert_eq!(c.state_name(), "congestion_avoidance");
        c.on_congestion_event(t(3), t(2), 0);
        c.on_persistent_congestion(t(3));
        assert_eq!(c.state_name(), "slow_start");
        assert_eq!(c.window(), c.minimum_window());
    }

    #[test]
    fn once_per_recovery_period() {
        let mut c = after_loss(100, false);
        c.on_congestion_event(t(5), t(0), 0); // sent before recovery started: ignored
        assert_eq!(c.window(), 70_000);
    }

    #[test]
    fn concave_growth_reaches_w_max_at_k_and_target_is_clamped() {
        // Large window so the cubic term dominates the Reno estimate.
        let mut c = after_loss(1000, false);
        let rtt = flat_rtt(SimDuration::from_millis(100));
        let k = Cubic::compute_k(1_000_000.0, 700_000.0, 0.4, 1000.0);
        // Ack a full window every RTT; sent times after the recovery start.
        let mut now_ms = 1;
        let mut max_step = 0.0f64;
        while (now_ms as f64) < (k * 1000.0) + 50.0 {
            let before = c.window() as f64;
            let per_ack = MSS;
            let acks = c.window() / per_ack;
            for _ in 0..acks {
                c.on_packet_acked(t(now_ms), t(now_ms), per_ack, false, &rtt);
            }
            max_step = max_step.max(c.window() as f64 / before);
            now_ms += 100;
        }
        // Concave: at t = K (+ one RTT of lookahead) the window is back at W_max.
        let w = c.window() as f64;
        assert!(
            (w - 1_000_000.0).abs() / 1_000_000.0 < 0.02,
            "window {w} at t={now_ms} ms, K = {k}"
        );
        // Growth per RTT never exceeds the 1.5x clamp.
        assert!(max_step <= 1.5 + 1e-9, "{max_step}");
        assert!(c.w_est() < w, "cubic region, W_est {} below", c.w_est());
    }

    #[test]
    fn w_est_grows_by_alpha_per_rtt_and_alpha_switches_to_one() {
        // Small window and short RTT: the Reno-friendly region.
        let mut c = after_loss(10, false);
        let rtt = flat_rtt(SimDuration::from_millis(1));
        let mut now = 1;
        // One RTT of acks: W_est += alpha * MSS * (cwnd/MSS acks * MSS) / cwnd = alpha * MSS.
        let acks = c.window() / MSS;
        for _ in 0..acks {
            c.on_packet_acked(t(now), t(now), MSS, false, &rtt);
        }
        // W_est grows by alpha*MSS*acked/cwnd per ACK while cwnd itself follows W_est up
        // from 7000 B, so one window of ACKs adds between alpha*MSS*7000/7600 and alpha*MSS.
        let alpha = 9.0 / 17.0;
        let grew = c.w_est() - 7000.0;
        assert!(
            grew <= alpha * 1000.0 && grew >= alpha * 1000.0 * 7000.0 / 7600.0,
            "{grew}"
        );
        assert!((c.alpha() - 9.0 / 17.0).abs() < 1e-12);
        // Keep acking until W_est passes cwnd_prior (10 000): alpha becomes 1.
        while c.w_est() < 10_000.0 {
            now += 1;
            c.on_packet_acked(t(now), t(now), MSS, false, &rtt);
        }
        assert_eq!(c.alpha(), 1.0);
        // In the Reno-friendly region cwnd follows W_est.
        assert!((c.window() as f64 - c.w_est()).abs() < 1.0);
    }

    #[test]
    fn timeout_rule_uses_k_zero_and_w_max_at_epoch_start() {
        let mut c = after_loss(100, true);
        // RFC 9002 order: the losses are reported as a congestion event, then persistent
        // congestion is declared in the same ACK. β is applied once: 70 000 * 0.7.
        c.on_congestion_event(t(50), t(40), 0);
        c.on_persistent_congestion(t(50));
        assert_eq!(c.window(), 2 * MSS);
        assert_eq!(c.ssthresh(), Some(49_000));
        assert_eq!(c.cwnd_prior(), 70_000.0);
        // Persistent congestion without an earlier reduction (slow start): ssthresh = β·cwnd.
        let mut s = Cubic::new(MSS, 10 * MSS, CubicParams::default(), false);
        s.on_persistent_congestion(t(5));
        assert_eq!(s.ssthresh(), Some(7_000));
        assert_eq!(s.window(), 2 * MSS);
        // Slow start back up to ssthresh, then the first CA epoch: K = 0, W_max = cwnd.
        let rtt = flat_rtt(SimDuration::from_millis(10));
        let mut now = 60;
        while c.window() < 49_000 {
            c.on_packet_acked(t(now), t(now), MSS, false, &rtt);
            now += 1;
        }
        c.on_packet_acked(t(now), t(now), MSS, false, &rtt);
        assert_eq!(c.k(), 0.0);
        assert!((c.w_max() - c.w_est()).abs() < MSS as f64 * 2.0);
    }

    #[test]
    fn app_limited_acks_do_not_grow_and_freeze_the_clock() {
        let mut a = after_loss(100, false);
        let mut b = after_loss(100, false);
        let rtt = flat_rtt(SimDuration::from_millis(50));
        a.on_packet_acked(t(1), t(1), MSS, false, &rtt);
        b.on_packet_acked(t(1), t(1), MSS, false, &rtt);
        // b is app-limited for 2 s.
        for i in 0..20 {
            b.on_packet_acked(t(100 * i + 100), t(100 * i + 100), MSS, true, &rtt);
        }
        let wb = b.window();
        assert_eq!(wb, a.window());
        // Then both ack once more: a after 1 ms, b after 2 s of app-limited time + 1 ms.
        a.on_packet_acked(t(2), t(2), MSS, false, &rtt);
        b.on_packet_acked(t(2001), t(2001), MSS, false, &rtt);
        assert_eq!(a.window(), b.window());
    }

    #[test]
    fn hystart_exit_sets_w_max_and_cwnd_prior() {
        let p = CubicParams {
            hystart: true,
            ..Default::default()
        };
        let mut c = Cubic::new(MSS, 10 * MSS, p, true);
        let mut next = 0u64;
        let mut sent: std::collections::VecDeque<u64> = Default::default();
        for _ in 0..10 {
            c.on_packet_sent(SimTime(next), MSS, 0);
            sent.push_back(next);
            next += 1;
        }
        // RTT grows 1 ms per 10 acks: a sustained increase.
        let mut acks = 0u64;
        while c.ssthresh().is_none() && acks < 100_000 {
            let s = sent.pop_front().unwrap();
            let rtt = flat_rtt(SimDuration::from_millis(20 + acks / 10));
            c.on_packet_acked(SimTime(s), SimTime(s), MSS, false, &rtt);
            acks += 1;
            // Ack-clocked: keep the window full.
            while (sent.len() as u64) * MSS < c.window() {
                c.on_packet_sent(SimTime(next), MSS, 0);
                sent.push_back(next);
                next += 1;
            }
        }
        let ss = c.ssthresh().expect("HyStart++ left slow start");
        assert_eq!(ss, c.window());
        assert_eq!(c.cwnd_prior(), ss as f64);
        assert_eq!(c.w_max(), ss as f64);
        assert_eq!(c.hystart().unwrap().css_entries, 1);
    }
}

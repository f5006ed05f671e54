//! CUBIC as Linux runs it (`net/ipv4/tcp_cubic.c` with `tcp_slow_start` and
//! `tcp_cong_avoid_ai` of `net/ipv4/tcp_cong.c`, Linux 6.x), byte-based: TCP's default
//! controller ([`super::CubicFlavor::Linux`]). Where Linux differs from RFC 9438 as
//! [`super::cubic::Cubic`] implements it:
//!
//! - **Reno-friendly estimate** (`bictcp_update`, "TCP Friendly"): `tcp_cwnd` gains one
//!   segment per `(cwnd · beta_scale) >> 3` acknowledged segments, `beta_scale =
//!   8(1024 + β)/3/(1024 − β)` in integers (15 for β = 717/1024), i.e. α = 8/15 ≈ 0.53
//!   segment per RTT for ever: no switch to α = 1 (RFC 9438 §4.3). When `tcp_cwnd` is
//!   above cwnd the window is not set to it (RFC §4.4) but grows one segment per
//!   `cwnd / (tcp_cwnd − cwnd)` acknowledged segments, catching up in about one RTT.
//! - **Growth as a count** (`bictcp_update`, `tcp_cong_avoid_ai`): cwnd grows one segment
//!   per `cnt` acknowledged segments, `cnt = cwnd / (target − cwnd)` (`100 · cwnd` when
//!   the target is not above cwnd), at least 2 (at most 1.5× per RTT, as RFC §4.2's
//!   clamp), at most 20 (≥ 5 % per RTT) until the first loss (`last_max_cwnd == 0`).
//!   `cnt` is recomputed at most once per jiffy, and only when cwnd changed or 1/32 s
//!   passed.
//! - **Target time** (`bictcp_update`): `W_cubic(t + delay_min)` with `delay_min` the
//!   minimum RTT the controller saw (`cubictcp_acked`; no samples in the first second of
//!   an epoch), not `t + smoothed RTT` (RFC §4.2 lets the RTT be chosen). Time in jiffies
//!   (HZ = 1000, [`HZ`]) scaled to 1/1024 s (`BICTCP_HZ`).
//! - **Constants in Linux's integers** (`cubictcp_register`): β = `round(cubic_beta ·
//!   1024)` (717 for 0.7), C = `bic_scale · 10 / 1024` with `bic_scale = round(cubic_c ·
//!   1024 / 10)` (41 for 0.4: C = 0.4004); windows in whole segments.
//! - **Reduction** (`cubictcp_recalc_ssthresh`): `ssthresh = max(cwnd · β / 1024, 2)`
//!   segments; `last_max_cwnd` with fast convergence `cwnd (1024 + β) / 2048`; the epoch
//!   restarts at the first acknowledgement the controller sees afterwards (TCP feeds
//!   none during fast recovery): origin `last_max_cwnd` and `K = cbrt((last_max_cwnd −
//!   cwnd) / C)` if above cwnd, else origin cwnd and `K = 0`; `tcp_cwnd = cwnd`.
//! - **Slow start** (`tcp_slow_start`): cwnd grows by the acknowledged bytes up to
//!   ssthresh; the rest of that ACK goes to congestion avoidance. Linux HyStart
//!   ([`super::hystart_linux`]) instead of HyStart++, leaving slow start with `ssthresh =
//!   cwnd` and `last_max_cwnd` still 0 (so the first epoch starts at K = 0, growing ≥ 5 %
//!   per RTT).
//! - **Timeout** (`cubictcp_state(TCP_CA_Loss)` → `bictcp_reset`): all CUBIC state cleared
//!   (`last_max_cwnd`, `delay_min`, epoch) and HyStart re-armed.
//! - **Idle** (`cubictcp_cwnd_event(CA_EVENT_TX_START)`): a send with nothing in flight
//!   moves the epoch start forward by the time since the previous send (capped at now).
//!   App-limited acknowledgements (`tcp_is_cwnd_limited` false) do not grow the window and
//!   do not move the epoch (RFC 9438 §5.8 does).
//!
//! Not modelled: `cubic_root`'s table approximation (here `libm::cbrt`, Linux's is within
//! 0.2 %), the spurious-loss undo (`tcp_reno_undo_cwnd`), `snd_cwnd_clamp`.

use super::hystart_linux::{self, LinuxHyStart};
use super::{minimum_window, CongestionController, CubicFlavor, CubicParams, RttSnapshot};
use crate::time::{SimDuration, SimTime};

/// Jiffies per second: Linux's `tcp_jiffies32` ticks at HZ; this model takes HZ = 1000
/// (1 ms), the common server configuration.
pub const HZ: u64 = 1000;
/// tcp_cubic.c `BICTCP_BETA_SCALE`: β in 1/1024.
pub const BETA_SCALE: u64 = 1024;
/// tcp_cubic.c `BICTCP_HZ`: time in the cubic function is in 1/2^10 s.
pub const BICTCP_HZ: u32 = 10;
/// tcp_cubic.c `bictcp_update`: `cnt` is capped at 20 (≥ 5 % growth per RTT) while
/// `last_max_cwnd` is 0.
pub const INITIAL_MAX_CNT: u64 = 20;
/// tcp_cubic.c `bictcp_update`: the smallest `cnt`, one segment per 2 acknowledged
/// (at most 1.5× per RTT).
pub const MIN_CNT: u64 = 2;

fn jiffies(t: SimTime) -> u64 {
    t.0 / (1_000_000_000 / HZ)
}

/// Linux CUBIC state (`struct bictcp` plus the window fields of `tcp_sock` it drives).
#[derive(Clone, Debug)]
pub struct LinuxCubic {
    p: CubicParams,
    mss: u64,
    min_window: u64,
    cwnd: u64,
    ssthresh: Option<u64>,
    recovery_start: Option<SimTime>,
    recovering: bool,
    /// β in 1/1024 (`beta`, 717).
    beta: u64,
    /// `beta_scale` (15 for β = 717).
    beta_scale: u64,
    /// `cube_rtt_scale` = `bic_scale · 10` (410).
    cube_rtt_scale: u64,
    /// `cube_factor` = 2^40 / cube_rtt_scale.
    cube_factor: u64,
    /// `cnt`: acknowledged segments per one-segment increase.
    cnt: u64,
    /// `last_max_cwnd`, segments (0: no loss yet, or reset by a timeout).
    last_max_cwnd: u64,
    /// `last_cwnd`, segments.
    last_cwnd: u64,
    /// `last_time`, jiffies.
    last_time: u64,
    /// `bic_origin_point`, segments.
    origin_point: u64,
    /// `bic_K`, in 1/1024 s.
    k: u64,
    /// `delay_min` (None = 0, no sample yet).
    delay_min: Option<SimDuration>,
    /// `epoch_start`, jiffies (None = 0).
    epoch_start: Option<u64>,
    /// `ack_cnt`, in bytes (Linux: segments).
    ack_cnt: u64,
    /// `tcp_cwnd`, segments.
    tcp_cwnd: u64,
    /// `snd_cwnd_cnt` of `tcp_cong_avoid_ai`, in bytes (Linux: segments).
    cwnd_cnt: u64,
    /// `lsndtime`: the last send.
    last_send: Option<SimTime>,
    /// The last acknowledgement's time (one RTT sample per ACK).
    last_sample_at: Option<SimTime>,
    hystart: Option<LinuxHyStart>,
}

impl LinuxCubic {
    /// A controller with `initial_window` bytes and segments of `mss` bytes; `paced`: the
    /// sender paces (Linux HyStart's ACK-train threshold is halved when it does not).
    pub fn new(mss: u64, initial_window: u64, params: CubicParams, paced: bool) -> Self {
        assert!(mss > 0, "mss must be positive");
        // cubictcp_register: module parameters beta (717) and bic_scale (41) from ours.
        let beta = (libm::round(params.beta * BETA_SCALE as f64) as u64).clamp(1, BETA_SCALE - 1);
        let beta_scale = 8 * (BETA_SCALE + beta) / 3 / (BETA_SCALE - beta);
        let bic_scale = (libm::round(params.c * BETA_SCALE as f64 / 10.0) as u64).max(1);
        let cube_rtt_scale = bic_scale * 10;
        let cube_factor = (1u64 << (10 + 3 * BICTCP_HZ)) / cube_rtt_scale;
        LinuxCubic {
            p: CubicParams {
                flavor: CubicFlavor::Linux,
                ..params
            },
            mss,
            min_window: minimum_window(mss),
            cwnd: initial_window.max(1),
            ssthresh: None,
            recovery_start: None,
            recovering: false,
            beta,
            beta_scale,
            cube_rtt_scale,
            cube_factor,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            origin_point: 0,
            k: 0,
            delay_min: None,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            cwnd_cnt: 0,
            last_send: None,
            last_sample_at: None,
            hystart: params.hystart.then(|| LinuxHyStart::new(paced)),
        }
    }

    /// The parameters.
    pub fn params(&self) -> &CubicParams {
        &self.p
    }
    /// β in 1/1024 (`beta`).
    pub fn beta_1024(&self) -> u64 {
        self.beta
    }
    /// `beta_scale`: the Reno-friendly estimate gains a segment per `(cwnd · beta_scale)
    /// >> 3` acknowledged segments.
    pub fn beta_scale(&self) -> u64 {
        self.beta_scale
    }
    /// `cnt`: acknowledged segments per one-segment increase, as last computed.
    pub fn cnt(&self) -> u64 {
        self.cnt
    }
    /// `last_max_cwnd` in segments.
    pub fn last_max_cwnd(&self) -> u64 {
        self.last_max_cwnd
    }
    /// `bic_K` in 1/1024 s.
    pub fn k(&self) -> u64 {
        self.k
    }
    /// The Reno-friendly estimate `tcp_cwnd` in segments.
    pub fn tcp_cwnd(&self) -> u64 {
        self.tcp_cwnd
    }
    /// `delay_min`, the minimum RTT the controller uses.
    pub fn delay_min(&self) -> Option<SimDuration> {
        self.delay_min
    }
    /// The epoch start in jiffies, if an epoch is running.
    pub fn epoch_start(&self) -> Option<u64> {
        self.epoch_start
    }
    /// HyStart state, if enabled.
    pub fn hystart(&self) -> Option<&LinuxHyStart> {
        self.hystart.as_ref()
    }

    fn in_slow_start(&self) -> bool {
        self.ssthresh.is_none_or(|s| self.cwnd < s)
    }

    fn cwnd_segments(&self) -> u64 {
        self.cwnd / self.mss
    }

    /// tcp_cubic.c `cubictcp_acked`: one RTT sample per ACK, for `delay_min` and HyStart.
    fn on_rtt_sample(&mut self, now: SimTime, sent_time: SimTime, rtt: &RttSnapshot) {
        let delay = rtt.latest_rtt;
        if delay == SimDuration::ZERO {
            return; // no sample yet
        }
        // "Discard delay samples right after fast recovery": the first second (HZ) of an epoch.
        if let Some(e) = self.epoch_start {
            if jiffies(now).saturating_sub(e) < HZ {
                return;
            }
        }
        let first_of_ack = self.last_sample_at != Some(now);
        self.last_sample_at = Some(now);
        if first_of_ack {
            self.delay_min = Some(self.delay_min.map_or(delay, |d| d.min(delay)));
        }
        if !self.in_slow_start() {
            return;
        }
        let cwnd_segments = self.cwnd_segments();
        let delay_min = self.delay_min.unwrap_or(delay);
        let ack_delay = hystart_linux::ack_delay(self.pacing_rate(rtt.smoothed_rtt));
        if let Some(h) = self.hystart.as_mut() {
            if h.on_ack(now, sent_time, cwnd_segments, delay, delay_min, ack_delay)
                .is_some()
            {
                // hystart_update: leave slow start at once.
                self.ssthresh = Some(self.cwnd);
            }
        }
    }

    /// `sk_pacing_rate` as `tcp_update_pacing_rate` computes it (bytes/s): cwnd / srtt ×
    /// 200 % (`tcp_pacing_ss_ratio`) below half ssthresh, else × 120 %
    /// (`tcp_pacing_ca_ratio`); 0 before an RTT sample.
    fn pacing_rate(&self, srtt: SimDuration) -> u64 {
        if srtt == SimDuration::ZERO {
            return 0;
        }
        let ratio: u128 = if self.ssthresh.is_none_or(|s| self.cwnd < s / 2) {
            200
        } else {
            120
        };
        (self.cwnd as u128 * ratio * 1_000_000_000 / 100 / srtt.0 as u128) as u64
    }

    /// tcp_cong.c `tcp_slow_start`: grow by the acknowledged bytes up to ssthresh; returns
    /// the bytes left for congestion avoidance.
    fn slow_start(&mut self, bytes: u64) -> u64 {
        let ss = self.ssthresh.unwrap_or(u64::MAX);
        let cwnd = self.cwnd.saturating_add(bytes).min(ss).max(self.cwnd);
        let left = bytes - (cwnd - self.cwnd);
        self.cwnd = cwnd;
        left
    }

    /// tcp_cubic.c `bictcp_update`: recompute `cnt` for `bytes` newly acknowledged.
    fn update(&mut self, now: SimTime, bytes: u64) {
        let cwnd = self.cwnd_segments().max(1);
        let now_j = jiffies(now);
        self.ack_cnt += bytes;
        // Unchanged window and less than HZ/32 since the last computation: keep cnt.
        if self.last_cwnd == cwnd && now_j.saturating_sub(self.last_time) <= HZ / 32 {
            return;
        }
        // At most once per jiffy (a reduction clears the epoch and forces it).
        if !(self.epoch_start.is_some() && now_j == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = now_j;
            if self.epoch_start.is_none() {
                self.epoch_start = Some(now_j);
                self.ack_cnt = bytes;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.k = 0;
                    self.origin_point = cwnd;
                } else {
                    // K = cbrt((W_max − cwnd) / C) in 1/1024 s (libm, not cubic_root's table).
                    let a = self.cube_factor as f64 * (self.last_max_cwnd - cwnd) as f64;
                    self.k = libm::cbrt(a) as u64;
                    self.origin_point = self.last_max_cwnd;
                }
            }
            let epoch = self.epoch_start.expect("epoch started");
            // t = now − epoch_start + delay_min (usecs_to_jiffies rounds up), in 1/1024 s.
            let dm = self
                .delay_min
                .map_or(0, |d| d.0.div_ceil(1_000_000_000 / HZ));
            let t = ((now_j.saturating_sub(epoch) + dm) << BICTCP_HZ) / HZ;
            let offs = t.abs_diff(self.k) as u128;
            let delta = ((self.cube_rtt_scale as u128 * offs * offs * offs) >> (10 + 3 * BICTCP_HZ))
                .min(u64::MAX as u128 / 2) as u64;
            let target = if t < self.k {
                self.origin_point.saturating_sub(delta)
            } else {
                self.origin_point.saturating_add(delta)
            };
            self.cnt = if target > cwnd {
                cwnd / (target - cwnd)
            } else {
                100 * cwnd // very small increment
            };
            // Before the first loss the cubic function may be too slow: ≥ 5 % per RTT.
            if self.last_max_cwnd == 0 && self.cnt > INITIAL_MAX_CNT {
                self.cnt = INITIAL_MAX_CNT;
            }
        }
        // TCP friendliness: tcp_cwnd += 1 per (cwnd · beta_scale) >> 3 acked segments.
        let per = ((cwnd * self.beta_scale) >> 3).max(1) * self.mss;
        if self.ack_cnt > per {
            let n = (self.ack_cnt - 1) / per;
            self.ack_cnt -= n * per;
            self.tcp_cwnd += n;
        }
        if self.tcp_cwnd > cwnd {
            // Slower than Reno: catch up within about one RTT.
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            self.cnt = self.cnt.min(max_cnt);
        }
        self.cnt = self.cnt.max(MIN_CNT);
    }

    /// tcp_cong.c `tcp_cong_avoid_ai`: one segment per `cnt` acknowledged segments.
    fn cong_avoid_ai(&mut self, bytes: u64) {
        let w = self.cnt.max(1) * self.mss;
        // Credits accumulated at a higher cnt are applied gently.
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd += self.mss;
        }
        self.cwnd_cnt += bytes;
        if self.cwnd_cnt >= w {
            let d = self.cwnd_cnt / w;
            self.cwnd_cnt -= d * w;
            self.cwnd += d * self.mss;
        }
    }

    /// `bictcp_reset` (+ `tcp_enter_loss`'s `snd_cwnd_cnt = 0`).
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.origin_point = 0;
        self.k = 0;
        self.delay_min = None;
        self.epoch_start = None;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.cwnd_cnt = 0;
    }
}

impl CongestionController for LinuxCubic {
    fn on_packet_sent(&mut self, now: SimTime, bytes: u64, bytes_in_flight_after: u64) {
        // cubictcp_cwnd_event(CA_EVENT_TX_START): sending with nothing in flight after
        // idle moves the epoch by the idle time (capped at now).
        if bytes_in_flight_after <= bytes {
            if let (Some(e), Some(last)) = (self.epoch_start, self.last_send) {
                let idle = jiffies(now).saturating_sub(jiffies(last));
                if idle > 0 {
                    self.epoch_start = Some((e + idle).min(jiffies(now)));
                }
            }
        }
        self.last_send = Some(now);
        if let Some(h) = self.hystart.as_mut() {
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
        if self.in_recovery(sent_time) {
            return;
        }
        // RFC 9002 §7.3.2: a packet sent after the recovery start ends the period.
        self.recovering = false;
        self.on_rtt_sample(now, sent_time, rtt);
        // cubictcp_cong_avoid: no growth unless cwnd-limited (tcp_is_cwnd_limited).
        if app_limited {
            return;
        }
        let mut bytes = bytes;
        if self.in_slow_start() {
            bytes = self.slow_start(bytes);
            if bytes == 0 {
                return;
            }
        }
        self.update(now, bytes);
        self.cong_avoid_ai(bytes);
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
        // cubictcp_recalc_ssthresh.
        self.epoch_start = None;
        let cwnd = self.cwnd_segments();
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.p.fast_convergence {
            cwnd * (BETA_SCALE + self.beta) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        let ss = (cwnd * self.beta / BETA_SCALE).max(2) * self.mss;
        self.ssthresh = Some(ss);
        // The window after recovery (tcp_end_cwnd_reduction: cwnd = ssthresh); the
        // transport holds it during recovery. tcp_init_cwnd_reduction: snd_cwnd_cnt = 0.
        self.cwnd = ss.max(self.min_window);
        self.cwnd_cnt = 0;
    }

    fn on_persistent_congestion(&mut self, now: SimTime) {
        // A timeout (tcp_enter_loss): ssthresh from the congestion event reported first
        // (as Cubic), then cubictcp_state(TCP_CA_Loss) clears the CUBIC state.
        if self.ssthresh.is_none() {
            let ss = (self.cwnd_segments() * self.beta / BETA_SCALE).max(2) * self.mss;
            self.ssthresh = Some(ss);
        }
        self.cwnd = self.min_window;
        self.recovery_start = None;
        self.recovering = false;
        self.reset();
        if let Some(h) = self.hystart.as_mut() {
            h.reset(now);
        }
    }

    fn on_retransmission_timeout(&mut self, now: SimTime, reduce: bool) {
        if reduce {
            // tcp_enter_loss calls cubictcp_recalc_ssthresh for a window not reduced yet.
            let cwnd = self.cwnd_segments();
            self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.p.fast_convergence {
                cwnd * (BETA_SCALE + self.beta) / (2 * BETA_SCALE)
            } else {
                cwnd
            };
            self.ssthresh = Some((cwnd * self.beta / BETA_SCALE).max(2) * self.mss);
        }
        // tcp_enter_loss: cwnd = in flight + 1 = one segment (RFC 5681 §3.1 LW), then
        // cubictcp_state(TCP_CA_Loss) clears the CUBIC state and re-arms HyStart.
        self.cwnd = self.mss;
        self.recovery_start = None;
        self.recovering = false;
        self.reset();
        if let Some(h) = self.hystart.as_mut() {
            h.reset(now);
        }
    }

    fn undo_reduction(&mut self, _now: SimTime, prior_cwnd: u64, prior_ssthresh: Option<u64>) {
        // tcp_undo_cwnd_reduction with cubic's undo_cwnd = tcp_reno_undo_cwnd.
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
        super::cubic::NAME
    }

    fn minimum_window(&self) -> u64 {
        self.min_window
    }

    /// β = 717/1024 (tcp_cubic.c `beta`).
    fn loss_reduction_factor(&self) -> f64 {
        self.beta as f64 / BETA_SCALE as f64
    }

    fn recovering(&self) -> bool {
        self.recovering
    }

    fn flavor(&self) -> Option<&'static str> {
        Some(CubicFlavor::Linux.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::cubic::{flat_rtt, Cubic};

    const MSS: u64 = 1000;

    fn t(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000)
    }

    fn linux_params() -> CubicParams {
        CubicParams {
            flavor: CubicFlavor::Linux,
            ..CubicParams::default()
        }
    }

    #[test]
    fn integer_constants_are_linuxs() {
        let c = LinuxCubic::new(MSS, 10 * MSS, linux_params(), false);
        assert_eq!(c.beta_1024(), 717);
        assert_eq!(c.beta_scale(), 15);
        assert_eq!(c.cube_rtt_scale, 410);
        assert_eq!(c.cube_factor, (1u64 << 40) / 410);
        assert_eq!(c.loss_reduction_factor(), 717.0 / 1024.0);
        assert_eq!(c.flavor(), Some("linux"));
        assert_eq!(c.name(), "cubic");
    }

    /// cubictcp_recalc_ssthresh: ssthresh = max(cwnd · 717 / 1024, 2) segments; W_max
    /// with fast convergence cwnd · (1024 + 717) / 2048.
    #[test]
    fn reduction_in_whole_segments_with_fast_convergence() {
        let mut c = LinuxCubic::new(MSS, 100 * MSS, linux_params(), false);
        c.on_congestion_event(t(0), t(0), 0);
        assert_eq!(c.ssthresh(), Some(70 * MSS)); // 100 · 717 / 1024 = 70.02
        assert_eq!(c.window(), 70 * MSS);
        assert_eq!(c.last_max_cwnd(), 100);
        c.on_congestion_event(t(10), t(5), 0);
        assert_eq!(c.window(), 49 * MSS); // 70 · 717 / 1024 = 49.01
        assert_eq!(c.last_max_cwnd(), 70 * 1741 / 2048); // 59
        let mut small = LinuxCubic::new(MSS, 2 * MSS, linux_params(), false);
        small.on_congestion_event(t(0), t(0), 0);
        assert_eq!(small.window(), 2 * MSS);
    }

    /// Acks one window of full segments at `now`, each its own ACK 1 ms apart from `now`
    /// on; returns the time after the last.
    fn ack_window<C: CongestionController>(c: &mut C, now: &mut u64, rtt: &RttSnapshot) {
        let n = c.window() / MSS;
        for _ in 0..n {
            c.on_packet_acked(t(*now), t(*now), MSS, false, rtt);
            *now += 1;
        }
    }

    /// (a) The Reno-friendly estimate: with the window kept low (a short RTT, the cubic
    /// term negligible), RFC 9438's W_est grows α = 0.53 segment per RTT until it passes
    /// cwnd_prior, then 1 (§4.3); Linux's tcp_cwnd stays at 8/15 = 0.53 segment per RTT
    /// after passing the window before the reduction.
    #[test]
    fn reno_friendly_rate_stays_0_53_after_cwnd_prior_in_linux_and_becomes_1_in_rfc9438() {
        let rtt = flat_rtt(SimDuration::from_millis(1));
        // RFC 9438.
        let mut rfc = Cubic::new(MSS, 20 * MSS, CubicParams::default(), false);
        rfc.on_congestion_event(t(0), t(0), 0); // cwnd 14 segments, cwnd_prior 20
        let mut now = 1;
        // (W_est before, W_est gained) per window of ACKs.
        let mut rfc_rates = Vec::new();
        for _ in 0..60 {
            let before = rfc.w_est();
            ack_window(&mut rfc, &mut now, &rtt);
            rfc_rates.push((before, (rfc.w_est() - before) / MSS as f64));
        }
        let below: Vec<f64> = rfc_rates
            .iter()
            .filter(|r| r.0 + r.1 * (MSS as f64) < 20_000.0)
            .map(|r| r.1)
            .collect();
        let above: Vec<f64> = rfc_rates
            .iter()
            .filter(|r| r.0 >= 20_000.0)
            .map(|r| r.1)
            .collect();
        assert!(below.len() > 3 && above.len() > 10, "{rfc_rates:?}");
        for r in &below[1..] {
            assert!((0.45..0.56).contains(r), "RFC below cwnd_prior: {r}");
        }
        for r in &above {
            assert!((0.9..1.01).contains(r), "RFC above cwnd_prior: {r}");
        }
        // Linux: tcp_cwnd in segments, over windows of ACKs, long after passing 20.
        let mut lx = LinuxCubic::new(MSS, 20 * MSS, linux_params(), false);
        lx.on_congestion_event(t(0), t(0), 0);
        assert_eq!(lx.window(), 14 * MSS);
        let mut now = 1;
        let start_est = {
            ack_window(&mut lx, &mut now, &rtt);
            lx.tcp_cwnd()
        };
        let mut windows = 0.0;
        while lx.tcp_cwnd() < 60 {
            ack_window(&mut lx, &mut now, &rtt);
            windows += 1.0;
        }
        let rate = (lx.tcp_cwnd() - start_est) as f64 / windows;
        assert!(
            (0.5..0.57).contains(&rate),
            "Linux Reno-friendly rate {rate}"
        );
        // And the window follows it (cnt catches up within about one RTT).
        let w = lx.window() / MSS;
        assert!(
            w + 2 >= lx.tcp_cwnd() && w <= lx.tcp_cwnd() + 1,
            "{w} vs {}",
            lx.tcp_cwnd()
        );
    }

    /// (b) The target uses the minimum RTT, not the smoothed RTT: the same history with a
    /// smoothed RTT of 50 ms or 500 ms (min 50 ms both) grows the same; RFC 9438's grows
    /// faster with the larger smoothed RTT (its target looks further ahead).
    #[test]
    fn target_uses_the_minimum_rtt() {
        let run_linux = |srtt_ms: u64, min_ms: u64| {
            let mut c = LinuxCubic::new(MSS, 1000 * MSS, linux_params(), false);
            // The minimum RTT comes from slow-start samples (before any epoch).
            let first = RttSnapshot {
                min_rtt: SimDuration::from_millis(min_ms),
                smoothed_rtt: SimDuration::from_millis(min_ms),
                latest_rtt: SimDuration::from_millis(min_ms),
                rttvar: SimDuration::ZERO,
            };
            c.on_packet_acked(t(0), t(0), MSS, false, &first);
            c.on_congestion_event(t(1), t(1), 0);
            let rtt = RttSnapshot {
                min_rtt: SimDuration::from_millis(min_ms),
                smoothed_rtt: SimDuration::from_millis(srtt_ms),
                latest_rtt: SimDuration::from_millis(srtt_ms),
                rttvar: SimDuration::ZERO,
            };
            // 3 s of ACKs, 10 per ms.
            for ms in 2..3000u64 {
                for _ in 0..10 {
                    c.on_packet_acked(t(ms), t(ms), MSS, false, &rtt);
                }
            }
            (c.window(), c.delay_min())
        };
        let (a, dm) = run_linux(50, 50);
        let (b, _) = run_linux(500, 50);
        assert_eq!(dm, Some(SimDuration::from_millis(50)));
        assert_eq!(a, b, "Linux: the smoothed RTT does not matter");
        let (c, _) = run_linux(200, 200);
        assert!(
            c > a,
            "Linux: a larger minimum RTT looks further ahead ({c} vs {a})"
        );
        let run_rfc = |srtt_ms: u64| {
            let p = CubicParams {
                fast_convergence: true,
                ..CubicParams::default()
            };
            let mut c = Cubic::new(MSS, 1000 * MSS, p, false);
            c.on_congestion_event(t(1), t(1), 0);
            let rtt = RttSnapshot {
                min_rtt: SimDuration::from_millis(50),
                smoothed_rtt: SimDuration::from_millis(srtt_ms),
                latest_rtt: SimDuration::from_millis(srtt_ms),
                rttvar: SimDuration::ZERO,
            };
            for ms in 2..3000u64 {
                for _ in 0..10 {
                    c.on_packet_acked(t(ms), t(ms), MSS, false, &rtt);
                }
            }
            c.window()
        };
        assert!(
            run_rfc(500) > run_rfc(50),
            "RFC 9438: the target is t + srtt"
        );
    }

    /// The epoch starts at the first acknowledgement after the reduction, with K from
    /// last_max_cwnd: W_max 100 → cwnd 70 gives K = cbrt(30 / 0.4004) s = 4.216 s, in
    /// 1/1024 s.
    #[test]
    fn epoch_starts_at_the_first_ack_with_k_from_last_max_cwnd() {
        let p = CubicParams {
            fast_convergence: false,
            ..linux_params()
        };
        let mut c = LinuxCubic::new(MSS, 100 * MSS, p, false);
        c.on_congestion_event(t(0), t(0), 0);
        assert_eq!(c.epoch_start(), None);
        let rtt = flat_rtt(SimDuration::from_millis(100));
        c.on_packet_acked(t(500), t(500), MSS, false, &rtt);
        assert_eq!(c.epoch_start(), Some(500));
        let k_s = c.k() as f64 / 1024.0;
        assert!(
            (k_s - libm::cbrt(30.0 * 1024.0 / 410.0)).abs() < 2e-3,
            "{k_s}"
        );
        // Below the plateau: cnt = cwnd / (target − cwnd) ≥ 2.
        assert!(c.cnt() >= MIN_CNT);
    }

    /// Growth per RTT is capped at 1.5× (cnt ≥ 2) and is at least 5 % per RTT before
    /// any loss (cnt ≤ 20 while last_max_cwnd = 0).
    #[test]
    fn cnt_floor_and_initial_cap() {
        // Far above the plateau: one window of ACKs grows the window by half.
        let mut c = LinuxCubic::new(MSS, 100 * MSS, linux_params(), false);
        c.on_congestion_event(t(0), t(0), 0);
        let rtt = flat_rtt(SimDuration::from_millis(10));
        c.on_packet_acked(t(1), t(1), MSS, false, &rtt);
        let w0 = c.window();
        let mut now = 100_000; // 100 s later: the cubic target is far above
        ack_window(&mut c, &mut now, &rtt);
        let grew = (c.window() - w0) as f64 / w0 as f64;
        assert!((0.45..=0.5).contains(&grew), "{grew}");
        // Slow start left without loss (ssthresh set, last_max_cwnd 0): cnt = 20.
        let mut s = LinuxCubic::new(MSS, 100 * MSS, linux_params(), false);
        s.ssthresh = Some(100 * MSS);
        let mut now = 1;
        ack_window(&mut s, &mut now, &rtt);
        assert_eq!(s.last_max_cwnd(), 0);
        assert_eq!(s.cnt(), INITIAL_MAX_CNT);
        assert_eq!(s.window(), 105 * MSS);
    }

    /// tcp_slow_start: the window stops at ssthresh and the rest of the ACK goes to
    /// congestion avoidance.
    #[test]
    fn slow_start_stops_at_ssthresh() {
        let mut c = LinuxCubic::new(MSS, 10 * MSS, linux_params(), false);
        c.ssthresh = Some(12 * MSS + 500);
        let rtt = flat_rtt(SimDuration::from_millis(10));
        c.on_packet_acked(t(1), t(1), 2 * MSS, false, &rtt);
        assert_eq!(c.window(), 12 * MSS);
        c.on_packet_acked(t(2), t(2), 2 * MSS, false, &rtt);
        assert_eq!(c.window(), 12 * MSS + 500);
        assert!(!c.in_slow_start());
        assert!(
            c.epoch_start().is_some(),
            "the rest went to congestion avoidance"
        );
    }

    /// A timeout clears the CUBIC state (bictcp_reset) and re-arms HyStart.
    #[test]
    fn timeout_resets_the_cubic_state() {
        let p = CubicParams {
            hystart: true,
            ..linux_params()
        };
        let mut c = LinuxCubic::new(MSS, 100 * MSS, p, false);
        let rtt = flat_rtt(SimDuration::from_millis(10));
        c.on_packet_acked(t(1), t(1), MSS, false, &rtt);
        c.on_congestion_event(t(2), t(2), 0);
        c.on_packet_acked(t(3), t(3), MSS, false, &rtt);
        assert_eq!(c.last_max_cwnd(), 101);
        c.on_congestion_event(t(50), t(40), 0);
        c.on_persistent_congestion(t(50));
        assert_eq!(c.window(), 2 * MSS);
        assert_eq!(c.last_max_cwnd(), 0);
        assert_eq!(c.delay_min(), None);
        assert_eq!(c.epoch_start(), None);
        assert!(c.in_slow_start());
        assert_eq!(c.hystart().unwrap().found(), None);
    }

    /// CA_EVENT_TX_START: a send with nothing in flight moves the epoch by the idle time;
    /// app-limited ACKs neither grow the window nor move the epoch.
    #[test]
    fn idle_restart_moves_the_epoch() {
        let mut c = LinuxCubic::new(MSS, 100 * MSS, linux_params(), false);
        c.on_congestion_event(t(0), t(0), 0);
        let rtt = flat_rtt(SimDuration::from_millis(10));
        c.on_packet_sent(t(1), MSS, 50 * MSS);
        c.on_packet_acked(t(10), t(1), MSS, false, &rtt);
        assert_eq!(c.epoch_start(), Some(10));
        let w = c.window();
        c.on_packet_acked(t(20), t(2), MSS, true, &rtt);
        assert_eq!((c.window(), c.epoch_start()), (w, Some(10)));
        // Idle from 1 ms (the last send) to 1001 ms: the epoch moves 1000 ms, capped at
        // now (it started after that send).
        c.on_packet_sent(t(1001), MSS, MSS);
        assert_eq!(c.epoch_start(), Some(1001));
        // Not when something is in flight.
        c.on_packet_sent(t(1100), MSS, 3 * MSS);
        assert_eq!(c.epoch_start(), Some(1001));
        // Idle from 1100 to 2100 ms: 1001 + 1000.
        c.on_packet_sent(t(2100), MSS, MSS);
        assert_eq!(c.epoch_start(), Some(2001));
    }

    /// (c) with the controller: Linux HyStart leaves slow start at once (ssthresh = cwnd)
    /// on a delay increase; below 16 segments it does nothing.
    #[test]
    fn hystart_exit_sets_ssthresh_to_cwnd_at_once() {
        let p = CubicParams {
            hystart: true,
            ..linux_params()
        };
        let mut c = LinuxCubic::new(MSS, 10 * MSS, p, false);
        let base = flat_rtt(SimDuration::from_millis(40));
        let high = flat_rtt(SimDuration::from_millis(60));
        let mut now = 0u64;
        c.on_packet_sent(t(0), MSS, MSS);
        // Below 16 segments a high RTT does nothing (and seeds delay_min with 40 ms first).
        c.on_packet_acked(t(now), t(0), MSS, false, &base);
        while c.window() < 15 * MSS {
            now += 10;
            c.on_packet_acked(t(now), t(0), MSS, false, &high);
        }
        assert!(c.ssthresh().is_none());
        // From 16 on: the round's minimum (60 ms) is above 40 + 5 ms: exit on the ninth
        // ACK of the round.
        let mut acks = 0;
        while c.ssthresh().is_none() {
            now += 10;
            c.on_packet_acked(t(now), t(0), MSS, false, &high);
            acks += 1;
            assert!(acks < 20);
        }
        assert_eq!(c.ssthresh(), Some(c.window()));
        assert!(!c.in_slow_start());
        assert_eq!(
            c.hystart().unwrap().found(),
            Some(hystart_linux::Exit::Delay)
        );
    }
}

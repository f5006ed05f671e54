//! Per-packet impairment stages of a link: loss, corruption and delay jitter.
//!
//! Each stage owns its own [`RngStream`], and every judgement draws a *fixed* number of
//! values from it whatever the outcome, so the realisation seen by packet number `i` of a
//! link depends only on the seed, the stage and `i`. Two protocols run under one seed
//! therefore meet the same losses by packet index (paired comparisons).
//!
//! Draws per call:
//!
//! | stage / model                 | draws |
//! |-------------------------------|-------|
//! | loss `none`                   | 0     |
//! | loss `bernoulli`              | 1     |
//! | loss `periodic`               | 0     |
//! | loss `gilbert_elliott`        | 2     |
//! | loss `four_state`             | 1     |
//! | corruption                    | 1     |
//! | jitter `None`                 | 0     |
//! | jitter `uniform`              | 1     |
//! | jitter `normal`               | 2     |
//!
//! The Markov models follow Linux netem (`net/sched/sch_netem.c`, `loss_gilb_ell` and
//! `loss_4state`), itself after Salsano et al., "Definition of a general and intuitive loss
//! model for packet networks and its implementation in the Netem module in the Linux kernel"
//! (2012). The order of the draws and the partition of `[0, 1)` are netem's; the random
//! source is ours, so realisations are not bit-identical to a kernel, only equal in law.

use crate::config::{Jitter, JitterDistribution, LossModel};
use crate::metrics::DropReason;
use crate::rng::RngStream;
use crate::time::SimDuration;

pub use crate::config::loss::{AnyLossState, FourStateId, GeState, LossState};

/// The loss stage of a link: judges each packet under a [`LossModel`] (each model's
/// judgement is its file in `config/loss/`).
#[derive(Clone, Debug)]
pub struct LossStage {
    model: LossModel,
    rng: RngStream,
    /// The model's memory.
    state: AnyLossState,
}

impl LossStage {
    /// A stage applying `model`, starting in netem's initial state (Good / state 1 /
    /// index 0). `rng` is this stage's own stream.
    pub fn new(model: &LossModel, rng: RngStream) -> Self {
        LossStage {
            model: model.clone(),
            rng,
            state: model.start(),
        }
    }

    /// Number of random values [`LossStage::judge`] draws per packet under `model`.
    pub fn draws_per_packet(model: &LossModel) -> u64 {
        model.draws_per_packet()
    }

    /// Judges one packet: `Some(reason)` if it is lost.
    ///
    /// Draws a fixed number of random values per packet for the model, whatever the
    /// outcome (see [`LossStage::draws_per_packet`]), so two protocols under one seed see
    /// the same loss realisation by packet index.
    pub fn judge(&mut self) -> Option<DropReason> {
        self.model.judge(&mut self.state, &mut self.rng)
    }

    /// Replaces the model (a scheduled link change). The rng stream is kept.
    ///
    /// State rule: a Gilbert-Elliott -> Gilbert-Elliott change keeps the current Good/Bad
    /// state (only the parameters change, as `tc qdisc change` does in netem; a model's
    /// `KEEPS_STATE_ON_CHANGE`). Any other change, including periodic -> periodic and
    /// 4-state -> 4-state, resets the state to Good / state 1 / packet index 0, as if the
    /// stage were new.
    pub fn set_model(&mut self, model: &LossModel) {
        self.state = model.state_after_change(self.state);
        self.model = model.clone();
    }

    /// The model in force.
    pub fn model(&self) -> &LossModel {
        &self.model
    }

    /// The memory carried to the next packet (for traces and tests).
    pub fn state(&self) -> LossState {
        self.state.memory()
    }
}

/// The corruption stage of a link: each packet is corrupted independently with
/// probability `p` (netem `corrupt`, without correlation).
#[derive(Clone, Debug)]
pub struct CorruptionStage {
    p: f64,
    rng: RngStream,
    /// Draws owed to `rng` while `p` was 0 (their outcome is known: no corruption); made
    /// up by [`RngStream::skip_u64`] before the next real draw, so the stream stands
    /// where one draw per packet puts it.
    owed: u64,
}

impl CorruptionStage {
    /// A stage corrupting with probability `p`. `rng` is this stage's own stream.
    pub fn new(p: f64, rng: RngStream) -> Self {
        CorruptionStage { p, rng, owed: 0 }
    }

    /// Judges one packet: `true` if it is corrupted. Always exactly one draw.
    pub fn judge(&mut self) -> bool {
        // A uniform draw in [0, 1) is never below 0: with p = 0 the draw is only counted
        // (most links corrupt nothing, and a ChaCha draw per packet and link was ~1.5 %
        // of a TCP transfer's instructions).
        if self.p == 0.0 {
            self.owed += 1;
            return false;
        }
        self.rng.skip_u64(std::mem::take(&mut self.owed));
        self.rng.uniform() < self.p
    }

    /// Replaces the probability (a scheduled link change). The rng stream is kept.
    pub fn set_p(&mut self, p: f64) {
        self.p = p;
    }

    /// The probability in force.
    pub fn p(&self) -> f64 {
        self.p
    }
}

/// The jitter stage of a link: draws the per-packet propagation delay around a base.
///
/// Only the delay value is produced here; whether packets may overtake each other
/// ([`Jitter::reorder`]) is the link's business.
#[derive(Clone, Debug)]
pub struct JitterStage {
    jitter: Option<Jitter>,
    rng: RngStream,
}

impl JitterStage {
    /// A stage applying `jitter` (`None`: no variation). `rng` is this stage's own stream.
    pub fn new(jitter: Option<Jitter>, rng: RngStream) -> Self {
        JitterStage { jitter, rng }
    }

    /// The delay of one packet whose nominal delay is `base`.
    ///
    /// - uniform: `base + U(-J, +J)` (one draw: `J * (2u - 1)`),
    /// - normal: `base + J * N(0, 1)` (two draws, Box–Muller on `libm`),
    /// - `None`: `base` unchanged and no draw.
    ///
    /// The offset is rounded to whole nanoseconds (`libm::round`, ties away from zero),
    /// added in integer arithmetic, and the result clamped to `[0, SimDuration::MAX]`.
    /// A zero amount still draws, so the draw count depends on the distribution only.
    pub fn sample(&mut self, base: SimDuration) -> SimDuration {
        let Some(jitter) = self.jitter else {
            return base;
        };
        let amount = jitter.amount.as_nanos() as f64;
        let offset = match jitter.distribution {
            JitterDistribution::Uniform => amount * (2.0 * self.rng.uniform() - 1.0),
            JitterDistribution::Normal => amount * self.rng.standard_normal(),
        };
        // f64 -> i128 saturates; both operands fit i128 exactly.
        let offset_ns = libm::round(offset) as i128;
        let total = base.as_nanos() as i128 + offset_ns;
        SimDuration::from_nanos(total.clamp(0, u64::MAX as i128) as u64)
    }

    /// The jitter in force.
    pub fn jitter(&self) -> Option<&Jitter> {
        self.jitter.as_ref()
    }
}

#[cfg(test)]
mod tests {
    //! Statistical tests use fixed seeds and 4-sigma bounds with the variance of the
    //! actual (autocorrelated) process: see NOTES-rfc.md §7.3.
    use super::*;
    use crate::config::JitterDistribution;

    // ----- helpers: finite Markov chains -----

    /// Row-stochastic matrix.
    type Matrix = Vec<Vec<f64>>;

    /// Stationary distribution of an irreducible chain, solved exactly (Gaussian
    /// elimination on pi (T - I) = 0 with one equation replaced by sum(pi) = 1).
    fn stationary(t: &Matrix) -> Vec<f64> {
        let m = t.len();
        let mut a = vec![vec![0.0; m + 1]; m];
        for (i, row) in a.iter_mut().enumerate().take(m - 1) {
            for (j, x) in row.iter_mut().enumerate().take(m) {
                *x = t[j][i] - if i == j { 1.0 } else { 0.0 };
            }
        }
        a[m - 1] = vec![1.0; m + 1];
        for col in 0..m {
            let piv = (col..m)
                .max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))
                .unwrap();
            a.swap(col, piv);
            assert!(a[col][col].abs() > 1e-14, "singular: chain not irreducible");
            let pivot_row = a[col].clone();
            for (r, row) in a.iter_mut().enumerate() {
                if r != col {
                    let f = row[col] / pivot_row[col];
                    for (x, y) in row.iter_mut().zip(&pivot_row).skip(col) {
                        *x -= f * y;
                    }
                }
            }
        }
        (0..m).map(|i| a[i][m] / a[i][i]).collect()
    }

    fn mat_vec(t: &Matrix, v: &[f64]) -> Vec<f64> {
        t.iter()
            .map(|row| row.iter().zip(v).map(|(a, b)| a * b).sum())
            .collect()
    }

    /// Asymptotic variance of the sample mean of f(Z_n) for a stationary finite chain:
    /// n Var(mean) -> Var(f) + 2 sum_{k>=1} Cov(f(Z_0), f(Z_k)), with
    /// Cov(f(Z_0), f(Z_k)) = sum_i pi_i g_i (T^k g)_i and g = f - mu. The series is summed
    /// until T^k g is negligible.
    fn asymptotic_variance(t: &Matrix, pi: &[f64], f: &[f64]) -> f64 {
        let mu: f64 = pi.iter().zip(f).map(|(p, x)| p * x).sum();
        let g: Vec<f64> = f.iter().map(|x| x - mu).collect();
        let var0: f64 = pi.iter().zip(&g).map(|(p, x)| p * x * x).sum();
        let scale = g.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let mut v = g.clone();
        let mut sum = 0.0;
        for _ in 0..10_000_000 {
            v = mat_vec(t, &v);
            sum += pi
                .iter()
                .zip(&g)
                .zip(&v)
                .map(|((p, a), b)| p * a * b)
                .sum::<f64>();
            if v.iter().fold(0.0f64, |m, x| m.max(x.abs())) < 1e-15 * scale {
                return var0 + 2.0 * sum;
            }
        }
        panic!("autocovariance series did not converge");
    }

    /// The chain of consecutive pairs (Z_n, Z_{n+1}); state (i, j) has index i * m + j.
    fn pair_chain(t: &Matrix) -> Matrix {
        let m = t.len();
        let mut out = vec![vec![0.0; m * m]; m * m];
        for i in 0..m {
            for j in 0..m {
                for k in 0..m {
                    out[i * m + j][j * m + k] = t[j][k];
                }
            }
        }
        out
    }

    /// Loss statistics of a chain whose packet n is lost iff `loss[Z_n]`.
    struct ChainStats {
        /// Stationary loss probability.
        mu: f64,
        /// Asymptotic variance of the loss rate (times n).
        sigma2: f64,
        /// P(loss at n, delivery at n+1).
        loss_then_ok: f64,
        /// E[burst] = mu / loss_then_ok.
        burst_mean: f64,
        /// Asymptotic variance (times n) of losses - E[burst] * bursts, for the ratio
        /// estimator of the mean burst length (delta method).
        burst_sigma2: f64,
    }

    fn chain_stats(t: &Matrix, loss: &[bool]) -> ChainStats {
        let m = t.len();
        let pi = stationary(t);
        let f: Vec<f64> = loss.iter().map(|&l| if l { 1.0 } else { 0.0 }).collect();
        let mu: f64 = pi.iter().zip(&f).map(|(p, x)| p * x).sum();
        let sigma2 = asymptotic_variance(t, &pi, &f);
        let pt = pair_chain(t);
        let ppi: Vec<f64> = (0..m * m).map(|s| pi[s / m] * t[s / m][s % m]).collect();
        let end: Vec<f64> = (0..m * m)
            .map(|s| {
                if loss[s / m] && !loss[s % m] {
                    1.0
                } else {
                    0.0
                }
            })
            .collect();
        let loss_then_ok: f64 = ppi.iter().zip(&end).map(|(p, x)| p * x).sum();
        let burst_mean = mu / loss_then_ok;
        // Ratio estimator R = sum X_n / sum X_n (1 - X_{n+1}); R - E ~ (1/b) mean(g) with
        // g = X_n - E X_n (1 - X_{n+1}), an additive functional of the pair chain.
        let g: Vec<f64> = (0..m * m).map(|s| f[s / m] - burst_mean * end[s]).collect();
        let burst_sigma2 = asymptotic_variance(&pt, &ppi, &g);
        ChainStats {
            mu,
            sigma2,
            loss_then_ok,
            burst_mean,
            burst_sigma2,
        }
    }

    /// Gilbert-Elliott as a chain on W_n = (S_n, X_n), index 2 s + x, s = 0 Good / 1 Bad:
    /// the packet's loss depends on its arrival state only, and the next state on the
    /// arrival state only (two independent draws).
    fn ge_chain(p: f64, r: f64, k: f64, h: f64) -> (Matrix, Vec<bool>) {
        let trans = [[1.0 - p, p], [r, 1.0 - r]];
        let l = [1.0 - k, 1.0 - h];
        let mut t = vec![vec![0.0; 4]; 4];
        for s in 0..2 {
            for x in 0..2 {
                for s2 in 0..2 {
                    t[2 * s + x][2 * s2 + 1] = trans[s][s2] * l[s2];
                    t[2 * s + x][2 * s2] = trans[s][s2] * (1.0 - l[s2]);
                }
            }
        }
        (t, vec![false, true, false, true])
    }

    /// netem's 4-state chain on the state entered; index = state - 1.
    fn four_chain(p13: f64, p31: f64, p32: f64, p23: f64, p14: f64) -> (Matrix, Vec<bool>) {
        let t = vec![
            vec![1.0 - p13 - p14, 0.0, p13, p14],
            vec![0.0, 1.0 - p23, p23, 0.0],
            vec![p31, p32, 1.0 - p31 - p32, 0.0],
            vec![1.0, 0.0, 0.0, 0.0],
        ];
        (t, vec![false, false, true, true])
    }

    /// Closed forms of NOTES-rfc §7.3 for Gilbert-Elliott.
    fn ge_closed_form(p: f64, r: f64, k: f64, h: f64) -> (f64, f64, f64) {
        let (lg, lb) = (1.0 - k, 1.0 - h);
        let (pg, pb) = (r / (p + r), p / (p + r));
        let mu = pg * lg + pb * lb;
        let lambda = 1.0 - p - r;
        let sigma2 = mu * (1.0 - mu) + 2.0 * pg * pb * (lg - lb).powi(2) * lambda / (1.0 - lambda);
        // E[burst] = P(loss) / P(loss at n, delivery at n+1)
        //          = mu / sum_s pi_s l_s sum_s' P(s -> s') (1 - l_s').
        // (= 1/r only for the simple Gilbert case k = 1, h = 0.)
        let b = pg * lg * ((1.0 - p) * (1.0 - lg) + p * (1.0 - lb))
            + pb * lb * (r * (1.0 - lg) + (1.0 - r) * (1.0 - lb));
        (mu, sigma2, mu / b)
    }

    /// Paper 002: p = 0.00125, r = 0.125, h = 0.5, k solved for a target loss:
    /// ploss = (1-k) pi_G + (1-h) pi_B.
    fn paper002(target: f64) -> LossModel {
        let (p, r, h) = (0.00125, 0.125, 0.5);
        let (pg, pb) = (r / (p + r), p / (p + r));
        let k = 1.0 - (target - (1.0 - h) * pb) / pg;
        LossModel::GilbertElliott(crate::config::loss::GilbertElliott { p, r, k, h })
    }

    /// Runs `n` packets; returns (losses, bursts, sum of squared burst lengths) where a
    /// burst is a maximal run of losses.
    fn run_bursts(model: &LossModel, seed: u64, n: u64) -> (u64, u64, u64) {
        let mut st = LossStage::new(model, RngStream::derive(seed, "test/loss"));
        let (mut losses, mut bursts, mut sq, mut run) = (0u64, 0u64, 0u64, 0u64);
        for _ in 0..n {
            if st.judge().is_some() {
                losses += 1;
                run += 1;
            } else if run > 0 {
                bursts += 1;
                sq += run * run;
                run = 0;
            }
        }
        if run > 0 {
            bursts += 1;
            sq += run * run;
        }
        (losses, bursts, sq)
    }

    fn run_losses(model: &LossModel, seed: u64, n: u64) -> u64 {
        run_bursts(model, seed, n).0
    }

    /// Checks measured loss rate and mean burst length against a chain, within 4 sigma.
    fn check_chain(name: &str, model: &LossModel, t: &Matrix, loss: &[bool], seed: u64, n: u64) {
        let cs = chain_stats(t, loss);
        let (losses, bursts, sq) = run_bursts(model, seed, n);
        let rate = losses as f64 / n as f64;
        let sd = (cs.sigma2 / n as f64).sqrt();
        let mean_burst = losses as f64 / bursts as f64;
        // Tolerance of the mean burst length. It is the ratio losses / bursts; by the delta
        // method its sd is sqrt(Var_asympt(g) / n) / b with b = P(loss, then delivery) and
        // g as in `chain_stats`. With B ~ n b bursts this is sd(L) / sqrt(B) times a factor
        // for the correlation between successive burst lengths (bursts in the Bad state
        // come in clusters); the naive sd(L) / sqrt(B) is printed for comparison, and the
        // two must agree within a factor 2 (so the bound is neither vacuous nor blind to
        // the correlation).
        let burst_sd = (cs.burst_sigma2 / n as f64).sqrt() / cs.loss_then_ok;
        let var_l = sq as f64 / bursts as f64 - mean_burst * mean_burst;
        let naive_sd = (var_l / bursts as f64).sqrt();
        println!(
            "{name}: loss {rate:.6} vs {:.6} (4sd {:.6}, sd/binomial {:.2}); burst {mean_burst:.4} \
             vs {:.4} (4sd {:.4} = {:.2} x naive, {bursts} bursts)",
            cs.mu,
            4.0 * sd,
            (cs.sigma2 / (cs.mu * (1.0 - cs.mu))).sqrt(),
            cs.burst_mean,
            4.0 * burst_sd,
            burst_sd / naive_sd
        );
        assert!((rate - cs.mu).abs() < 4.0 * sd, "{name}: loss rate");
        assert!(
            (mean_burst - cs.burst_mean).abs() < 4.0 * burst_sd,
            "{name}: burst mean"
        );
        assert!(
            (0.5..2.0).contains(&(burst_sd / naive_sd)),
            "{name}: burst sd"
        );
    }

    // ----- the helpers themselves -----

    #[test]
    fn helpers_reproduce_ge_closed_forms() {
        for &(p, r, k, h) in &[
            (0.05, 0.3, 1.0, 0.0),
            (0.02, 0.25, 0.99, 0.3),
            (0.00125, 0.125, 0.9545, 0.5),
            (0.1, 0.9, 1.0, 0.0), // Bernoulli as GE: lambda = 0
        ] {
            let (t, loss) = ge_chain(p, r, k, h);
            let cs = chain_stats(&t, &loss);
            let (mu, sigma2, burst) = ge_closed_form(p, r, k, h);
            assert!((cs.mu - mu).abs() < 1e-12, "mu");
            assert!(
                (cs.sigma2 - sigma2).abs() < 1e-9 * sigma2,
                "{} vs {}",
                cs.sigma2,
                sigma2
            );
            assert!((cs.burst_mean - burst).abs() < 1e-9 * burst, "burst");
        }
        // Simple Gilbert: E[burst] = 1/r; sigma is 2.2x binomial for p = 0.05, r = 0.3.
        let (mu, sigma2, burst) = ge_closed_form(0.05, 0.3, 1.0, 0.0);
        assert!((burst - 1.0 / 0.3).abs() < 1e-12);
        let ratio = (sigma2 / (mu * (1.0 - mu))).sqrt();
        assert!((ratio - 2.2).abs() < 0.05, "{ratio}");
        // Paper 002 5 %: sigma 1.26x binomial.
        let LossModel::GilbertElliott(crate::config::loss::GilbertElliott { p, r, k, h }) =
            paper002(0.05)
        else {
            unreachable!()
        };
        let (mu, sigma2, _) = ge_closed_form(p, r, k, h);
        let ratio = (sigma2 / (mu * (1.0 - mu))).sqrt();
        assert!((ratio - 1.26).abs() < 0.01, "{ratio}");
    }

    #[test]
    fn stationary_solver_matches_four_state_closed_form() {
        // Balance across the cut {1,4} | {2,3}: pi1 p13 = pi3 p31; pi4 = p14 pi1;
        // pi2 p23 = pi3 p32.
        let (p13, p31, p32, p23, p14) = (0.01, 0.3, 0.2, 0.4, 0.005);
        let (t, _) = four_chain(p13, p31, p32, p23, p14);
        let pi = stationary(&t);
        let (a1, a3) = (1.0, p13 / p31);
        let (a2, a4) = (a3 * p32 / p23, p14);
        let z = a1 + a2 + a3 + a4;
        for (got, want) in pi.iter().zip([a1 / z, a2 / z, a3 / z, a4 / z]) {
            assert!((got - want).abs() < 1e-14, "{got} vs {want}");
        }
    }

    // ----- Bernoulli -----

    #[test]
    fn bernoulli_rate_within_4_binomial_sigma() {
        let n = 1_000_000u64;
        for (i, &p) in [0.001, 0.01, 0.05, 0.2, 0.5].iter().enumerate() {
            let losses = run_losses(
                &LossModel::Bernoulli(crate::config::loss::Bernoulli { p }),
                100 + i as u64,
                n,
            );
            let mean = n as f64 * p;
            let sd = (n as f64 * p * (1.0 - p)).sqrt();
            println!("bernoulli p={p}: {losses} vs {mean} (4sd {:.1})", 4.0 * sd);
            assert!((losses as f64 - mean).abs() < 4.0 * sd, "p = {p}");
        }
        assert_eq!(
            run_losses(
                &LossModel::Bernoulli(crate::config::loss::Bernoulli { p: 0.0 }),
                1,
                10_000
            ),
            0
        );
        assert_eq!(
            run_losses(
                &LossModel::Bernoulli(crate::config::loss::Bernoulli { p: 1.0 }),
                1,
                10_000
            ),
            10_000
        );
        assert_eq!(run_losses(&LossModel::NONE, 1, 10_000), 0);
    }

    #[test]
    fn bernoulli_is_u_below_p_on_the_stage_stream() {
        let p = 0.3;
        let mut st = LossStage::new(
            &LossModel::Bernoulli(crate::config::loss::Bernoulli { p }),
            RngStream::derive(5, "s"),
        );
        let mut shadow = RngStream::derive(5, "s");
        for _ in 0..10_000 {
            let want = shadow.uniform() < p;
            assert_eq!(st.judge(), want.then_some(DropReason::LossBernoulli));
        }
    }

    // ----- Gilbert-Elliott -----

    #[test]
    fn ge_paper002_burst_formula_values() {
        for (target, want) in [(0.05, 1.093), (0.10, 1.129), (0.25, 1.337)] {
            let LossModel::GilbertElliott(crate::config::loss::GilbertElliott { p, r, k, h }) =
                paper002(target)
            else {
                unreachable!()
            };
            let (mu, _, burst) = ge_closed_form(p, r, k, h);
            assert!((mu - target).abs() < 1e-12);
            println!("paper002 {target}: k = {k:.6}, E[burst] = {burst:.5}");
            assert!((burst - want).abs() < 0.0005, "{target}: {burst}");
        }
    }

    #[test]
    fn ge_loss_rate_and_bursts_match_the_chain() {
        let n = 2_000_000;
        let sets: Vec<(&str, LossModel)> = vec![
            ("paper002 5%", paper002(0.05)),
            ("paper002 10%", paper002(0.10)),
            ("paper002 25%", paper002(0.25)),
            (
                "simple gilbert",
                LossModel::GilbertElliott(crate::config::loss::GilbertElliott {
                    p: 0.05,
                    r: 0.3,
                    k: 1.0,
                    h: 0.0,
                }),
            ),
            (
                "general",
                LossModel::GilbertElliott(crate::config::loss::GilbertElliott {
                    p: 0.02,
                    r: 0.25,
                    k: 0.99,
                    h: 0.3,
                }),
            ),
        ];
        for (i, (name, model)) in sets.iter().enumerate() {
            let LossModel::GilbertElliott(crate::config::loss::GilbertElliott { p, r, k, h }) =
                *model
            else {
                unreachable!()
            };
            let (t, loss) = ge_chain(p, r, k, h);
            check_chain(name, model, &t, &loss, 200 + i as u64, n);
        }
    }

    /// Reference for the draw order: u1 = transition, u2 = loss, loss judged in the
    /// arrival state (statistics alone cannot tell u1 from u2).
    #[test]
    fn ge_draw_order_and_arrival_state_semantics() {
        let (p, r, k, h) = (0.1, 0.3, 0.8, 0.4);
        let model = LossModel::GilbertElliott(crate::config::loss::GilbertElliott { p, r, k, h });
        let mut st = LossStage::new(&model, RngStream::derive(9, "ge"));
        let mut shadow = RngStream::derive(9, "ge");
        let mut bad = false;
        let mut lost_total = 0;
        for _ in 0..100_000 {
            let u1 = shadow.uniform();
            let u2 = shadow.uniform();
            let lost = u2 < if bad { 1.0 - h } else { 1.0 - k };
            bad = if bad { u1 >= r } else { u1 < p };
            lost_total += lost as u32;
            assert_eq!(st.judge(), lost.then_some(DropReason::LossGilbertElliott));
            let want_state = if bad { GeState::Bad } else { GeState::Good };
            assert_eq!(st.state(), LossState::GilbertElliott(want_state));
        }
        assert!(lost_total > 0);
        // The first packet is judged in Good even if the chain moves to Bad at once.
        let mut st = LossStage::new(
            &LossModel::GilbertElliott(crate::config::loss::GilbertElliott {
                p: 1.0,
                r: 0.0,
                k: 1.0,
                h: 0.0,
            }),
            RngStream::derive(1, "x"),
        );
        assert_eq!(st.judge(), None);
        assert_eq!(st.judge(), Some(DropReason::LossGilbertElliott));
    }

    // ----- 4-state -----

    #[test]
    fn four_state_loss_rate_and_bursts_match_the_chain() {
        let n = 2_000_000;
        // (a) GI-style: long gaps (mean 1/(p13+p14) = 67 packets) with rare isolated losses,
        // loss periods mixing lost and received packets (3.6 % loss overall);
        // (b) heavier; (c) no state 2 (p32 = 0) and no isolated losses (p14 = 0).
        let sets = [
            ("gi", (0.01, 0.3, 0.2, 0.4, 0.005)),
            ("heavy", (0.05, 0.5, 0.3, 0.6, 0.02)),
            ("no state 2/4", (0.02, 0.4, 0.0, 0.0, 0.0)),
        ];
        for (i, &(name, (p13, p31, p32, p23, p14))) in sets.iter().enumerate() {
            let model = LossModel::FourState(crate::config::loss::FourState {
                p13,
                p31,
                p32,
                p23,
                p14,
            });
            let (mut t, mut loss) = four_chain(p13, p31, p32, p23, p14);
            if p32 == 0.0 && p14 == 0.0 {
                // States 2 and 4 are unreachable from 1: restrict to {1, 3} so the chain
                // is irreducible.
                t = vec![vec![1.0 - p13, p13], vec![p31, 1.0 - p31]];
                loss = vec![false, true];
            }
            let pi = stationary(&t);
            if loss.len() == 4 {
                println!("{name}: pi = {pi:?}, loss = pi3 + pi4 = {}", pi[2] + pi[3]);
            }
            check_chain(name, &model, &t, &loss, 300 + i as u64, n);
        }
    }

    /// Reference for netem's partition order of [0, 1) (statistics cannot tell it apart).
    #[test]
    fn four_state_partition_order_matches_netem() {
        let (p13, p31, p32, p23, p14) = (0.2, 0.3, 0.25, 0.4, 0.1);
        let model = LossModel::FourState(crate::config::loss::FourState {
            p13,
            p31,
            p32,
            p23,
            p14,
        });
        let mut st = LossStage::new(&model, RngStream::derive(11, "4s"));
        let mut shadow = RngStream::derive(11, "4s");
        let mut s = 1u8;
        let mut visits = [0u32; 5];
        for _ in 0..100_000 {
            let u = shadow.uniform();
            s = match s {
                1 if u < p14 => 4,
                1 if u < p14 + p13 => 3,
                1 => 1,
                2 if u < p23 => 3,
                2 => 2,
                3 if u < p32 => 2,
                3 if u < p32 + p31 => 1,
                3 => 3,
                _ => 1,
            };
            visits[s as usize] += 1;
            let lost = s >= 3;
            assert_eq!(st.judge(), lost.then_some(DropReason::LossFourState));
            let LossState::FourState(id) = st.state() else {
                panic!()
            };
            assert_eq!(id as u8, s);
        }
        assert!(visits[1..].iter().all(|&v| v > 1000), "{visits:?}");
    }

    // ----- periodic -----

    #[test]
    fn periodic_exact_positions() {
        let (every, offset) = (7u64, 3u64);
        let mut st = LossStage::new(
            &LossModel::Periodic(crate::config::loss::Periodic { every, offset }),
            RngStream::derive(0, "p"),
        );
        let n = 1_000_000u64;
        let mut lost_at = Vec::new();
        for i in 0..n {
            if let Some(reason) = st.judge() {
                assert_eq!(reason, DropReason::LossPeriodic);
                lost_at.push(i);
            }
        }
        let want: Vec<u64> = (offset..n).step_by(every as usize).collect();
        assert_eq!(lost_at.len(), 142_857);
        assert_eq!(lost_at, want);
        assert_eq!(st.state(), LossState::Periodic { next_index: n });

        // every = 1: all lost; a model change restarts the index at 0.
        st.set_model(&LossModel::Periodic(crate::config::loss::Periodic {
            every: 1,
            offset: 0,
        }));
        assert!((0..100).all(|_| st.judge().is_some()));
        st.set_model(&LossModel::Periodic(crate::config::loss::Periodic {
            every: 4,
            offset: 2,
        }));
        let pattern: Vec<bool> = (0..8).map(|_| st.judge().is_some()).collect();
        assert_eq!(
            pattern,
            [false, false, true, false, false, false, true, false]
        );
        // every = 0 (invalid, rejected by config validation) never loses, never panics.
        st.set_model(&LossModel::Periodic(crate::config::loss::Periodic {
            every: 0,
            offset: 0,
        }));
        assert!((0..100).all(|_| st.judge().is_none()));
    }

    // ----- fixed draws per packet -----

    #[test]
    fn loss_draws_are_fixed_per_packet() {
        let models = [
            (LossModel::NONE, 0),
            (
                LossModel::Bernoulli(crate::config::loss::Bernoulli { p: 0.0 }),
                1,
            ),
            (
                LossModel::Bernoulli(crate::config::loss::Bernoulli { p: 1.0 }),
                1,
            ),
            (
                LossModel::Bernoulli(crate::config::loss::Bernoulli { p: 0.3 }),
                1,
            ),
            (
                LossModel::Periodic(crate::config::loss::Periodic {
                    every: 3,
                    offset: 1,
                }),
                0,
            ),
            (
                LossModel::GilbertElliott(crate::config::loss::GilbertElliott {
                    p: 0.3,
                    r: 0.2,
                    k: 0.7,
                    h: 0.1,
                }),
                2,
            ),
            (
                LossModel::GilbertElliott(crate::config::loss::GilbertElliott {
                    p: 1.0,
                    r: 0.0,
                    k: 1.0,
                    h: 0.0,
                }),
                2,
            ),
            (
                LossModel::FourState(crate::config::loss::FourState {
                    p13: 0.2,
                    p31: 0.3,
                    p32: 0.3,
                    p23: 0.5,
                    p14: 0.3,
                }),
                1,
            ),
        ];
        let n = 10_007u64;
        for (i, (model, draws)) in models.iter().enumerate() {
            assert_eq!(LossStage::draws_per_packet(model), *draws);
            let name = format!("m{i}");
            let mut st = LossStage::new(model, RngStream::derive(3, &name));
            let mut losses = 0;
            for _ in 0..n {
                losses += st.judge().is_some() as u64;
            }
            let mut fresh = RngStream::derive(3, &name);
            for _ in 0..draws * n {
                fresh.next_u64();
            }
            assert_eq!(st.rng.next_u64(), fresh.next_u64(), "{model:?}");
            println!("{model:?}: {losses} losses");
        }
    }

    #[test]
    fn paired_realisation_survives_same_model_changes() {
        // Stage b gets GE -> GE changes (same parameters) every 1000 packets: with the
        // state kept and draws fixed, its losses coincide packet for packet with a's.
        let model = LossModel::GilbertElliott(crate::config::loss::GilbertElliott {
            p: 0.01,
            r: 0.2,
            k: 0.98,
            h: 0.2,
        });
        let mut a = LossStage::new(&model, RngStream::derive(4, "pair"));
        let mut b = LossStage::new(&model, RngStream::derive(4, "pair"));
        let mut losses = 0;
        for i in 0..100_000 {
            if i % 1000 == 999 {
                b.set_model(&model);
            }
            let (x, y) = (a.judge(), b.judge());
            assert_eq!(x, y, "packet {i}");
            losses += x.is_some() as u32;
        }
        assert!(losses > 1000);
    }

    #[test]
    fn set_model_state_rules() {
        let to_bad = LossModel::GilbertElliott(crate::config::loss::GilbertElliott {
            p: 1.0,
            r: 0.0,
            k: 1.0,
            h: 0.0,
        });
        let stay = LossModel::GilbertElliott(crate::config::loss::GilbertElliott {
            p: 0.0,
            r: 0.0,
            k: 1.0,
            h: 0.0,
        });
        // GE -> GE keeps Bad: the next packet arrives in Bad and is lost (h = 0).
        let mut st = LossStage::new(&to_bad, RngStream::derive(1, "m"));
        assert_eq!(st.judge(), None);
        assert_eq!(st.state(), LossState::GilbertElliott(GeState::Bad));
        st.set_model(&stay);
        assert_eq!(st.model(), &stay);
        assert_eq!(st.state(), LossState::GilbertElliott(GeState::Bad));
        assert_eq!(st.judge(), Some(DropReason::LossGilbertElliott));
        // GE -> Bernoulli -> GE resets to Good: never lost under `stay` (k = 1).
        st.set_model(&LossModel::Bernoulli(crate::config::loss::Bernoulli {
            p: 0.5,
        }));
        assert_eq!(st.state(), LossState::Memoryless);
        st.set_model(&stay);
        assert_eq!(st.state(), LossState::GilbertElliott(GeState::Good));
        assert!((0..100).all(|_| st.judge().is_none()));
        // 4-state -> 4-state resets to state 1.
        let to3 = LossModel::FourState(crate::config::loss::FourState {
            p13: 1.0,
            p31: 0.0,
            p32: 0.0,
            p23: 0.0,
            p14: 0.0,
        });
        let mut st = LossStage::new(&to3, RngStream::derive(1, "f"));
        assert_eq!(st.judge(), Some(DropReason::LossFourState));
        assert_eq!(st.state(), LossState::FourState(FourStateId::LostInBurst));
        st.set_model(&to3);
        assert_eq!(st.state(), LossState::FourState(FourStateId::TxInGap));
    }

    // ----- corruption -----

    #[test]
    fn corruption_rate_and_draws() {
        let n = 1_000_000u64;
        let p = 0.03;
        let mut st = CorruptionStage::new(p, RngStream::derive(21, "c"));
        let hits = (0..n).filter(|_| st.judge()).count() as f64;
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        println!(
            "corruption: {hits} vs {} (4sd {:.1})",
            n as f64 * p,
            4.0 * sd
        );
        assert!((hits - n as f64 * p).abs() < 4.0 * sd);
        st.set_p(0.0);
        assert_eq!(st.p(), 0.0);
        assert!((0..1000).all(|_| !st.judge()));
        st.set_p(1.0);
        assert!((0..1000).all(|_| st.judge()));
        let mut fresh = RngStream::derive(21, "c");
        for _ in 0..n + 2000 {
            fresh.next_u64();
        }
        assert_eq!(st.rng.next_u64(), fresh.next_u64());
    }

    // ----- jitter -----

    fn jitter(distribution: JitterDistribution, amount: SimDuration) -> Option<Jitter> {
        Some(Jitter {
            distribution,
            amount,
            reorder: false,
        })
    }

    #[test]
    fn jitter_uniform_range_mean_variance() {
        let n = 1_000_000u64;
        let (base, j) = (20_000_000i64, 5_000_000i64);
        let mut st = JitterStage::new(
            jitter(
                JitterDistribution::Uniform,
                SimDuration::from_nanos(j as u64),
            ),
            RngStream::derive(31, "j"),
        );
        let (mut sum, mut sum2) = (0.0, 0.0);
        let (mut lo, mut hi) = (i64::MAX, i64::MIN);
        for _ in 0..n {
            let d = st.sample(SimDuration::from_nanos(base as u64)).as_nanos() as i64 - base;
            lo = lo.min(d);
            hi = hi.max(d);
            sum += d as f64;
            sum2 += (d as f64) * (d as f64);
        }
        let jf = j as f64;
        let mean = sum / n as f64;
        let var = sum2 / n as f64 - mean * mean;
        // U(-J, J): sd = J/sqrt(3); Var(sample variance) ~ (mu4 - sigma^4)/n with
        // mu4 = J^4/5, sigma^4 = J^4/9.
        let mean_tol = 4.0 * jf / 3f64.sqrt() / (n as f64).sqrt();
        let var_tol = 4.0 * jf * jf * (1.0 / 5.0 - 1.0 / 9.0f64).sqrt() / (n as f64).sqrt();
        println!(
            "uniform: offset range [{lo}, {hi}], mean {mean:.0} (4sd {mean_tol:.0}), var/J^2 {:.5} \
             vs 0.33333 (4sd {:.5})",
            var / (jf * jf),
            var_tol / (jf * jf)
        );
        assert!(lo >= -j && hi <= j);
        assert!(lo < -j + j / 1000 && hi > j - j / 1000, "range not covered");
        assert!(mean.abs() < mean_tol);
        assert!((var - jf * jf / 3.0).abs() < var_tol);
    }

    #[test]
    fn jitter_normal_mean_and_sd() {
        let n = 1_000_000u64;
        let (base, j) = (50_000_000i64, 2_000_000i64);
        let mut st = JitterStage::new(
            jitter(
                JitterDistribution::Normal,
                SimDuration::from_nanos(j as u64),
            ),
            RngStream::derive(32, "j"),
        );
        let (mut sum, mut sum2, mut within1) = (0.0, 0.0, 0u64);
        for _ in 0..n {
            let d = st.sample(SimDuration::from_nanos(base as u64)).as_nanos() as i64 - base;
            sum += d as f64;
            sum2 += (d as f64) * (d as f64);
            within1 += (d.abs() <= j) as u64;
        }
        let jf = j as f64;
        let nf = n as f64;
        let mean = sum / nf;
        let var = sum2 / nf - mean * mean;
        // Var(sample variance) = 2 sigma^4 / n for a normal.
        let var_tol = 4.0 * jf * jf * (2.0 / nf).sqrt();
        let p1 = 0.682_689_492_137_085_9; // P(|N| <= 1)
        let frac_tol = 4.0 * (p1 * (1.0 - p1) / nf).sqrt();
        println!(
            "normal: mean {mean:.0} (4sd {:.0}), sd/J {:.5} , P(|d|<=J) {:.5} vs {p1:.5}",
            4.0 * jf / nf.sqrt(),
            var.sqrt() / jf,
            within1 as f64 / nf
        );
        assert!(mean.abs() < 4.0 * jf / nf.sqrt());
        assert!((var - jf * jf).abs() < var_tol);
        assert!((within1 as f64 / nf - p1).abs() < frac_tol);
    }

    #[test]
    fn jitter_none_draws_nothing_and_counts_are_fixed() {
        let base = SimDuration::from_millis(10);
        let mut st = JitterStage::new(None, RngStream::derive(33, "j"));
        for _ in 0..1000 {
            assert_eq!(st.sample(base), base);
        }
        assert_eq!(st.jitter(), None);
        assert_eq!(st.rng.next_u64(), RngStream::derive(33, "j").next_u64());

        for (dist, draws) in [
            (JitterDistribution::Uniform, 1u64),
            (JitterDistribution::Normal, 2),
        ] {
            for amount in [SimDuration::ZERO, SimDuration::from_millis(3)] {
                let mut st = JitterStage::new(jitter(dist, amount), RngStream::derive(34, "j"));
                for _ in 0..1000 {
                    let d = st.sample(base);
                    if amount == SimDuration::ZERO {
                        assert_eq!(d, base);
                    }
                }
                let mut fresh = RngStream::derive(34, "j");
                for _ in 0..draws * 1000 {
                    fresh.next_u64();
                }
                assert_eq!(st.rng.next_u64(), fresh.next_u64(), "{dist:?}");
            }
        }
    }

    #[test]
    fn jitter_clamps_at_zero_and_saturates() {
        let n = 1_000_000u64;
        // Uniform, base 1 ms, J = 5 ms: P(delay = 0) = P(U < -1 ms) = 4/10 (the rounding
        // band at 0 has probability ~1e-7).
        let mut st = JitterStage::new(
            jitter(JitterDistribution::Uniform, SimDuration::from_millis(5)),
            RngStream::derive(35, "j"),
        );
        let base = SimDuration::from_millis(1);
        let mut zeros = 0u64;
        for _ in 0..n {
            let d = st.sample(base);
            assert!(d <= SimDuration::from_millis(6));
            zeros += (d == SimDuration::ZERO) as u64;
        }
        let sd = (n as f64 * 0.4 * 0.6).sqrt();
        println!(
            "uniform clamp: {zeros} zeros vs {} (4sd {:.0})",
            n as f64 * 0.4,
            4.0 * sd
        );
        assert!((zeros as f64 - n as f64 * 0.4).abs() < 4.0 * sd);

        // Normal around 0: about half clamp to 0.
        let mut st = JitterStage::new(
            jitter(JitterDistribution::Normal, SimDuration::from_millis(1)),
            RngStream::derive(36, "j"),
        );
        let zeros = (0..n)
            .filter(|_| st.sample(SimDuration::ZERO) == SimDuration::ZERO)
            .count();
        let sd = (n as f64 * 0.25).sqrt();
        println!(
            "normal clamp: {zeros} zeros vs {} (4sd {:.0})",
            n / 2,
            4.0 * sd
        );
        assert!((zeros as f64 - n as f64 * 0.5).abs() < 4.0 * sd);

        // No overflow at the top.
        let mut st = JitterStage::new(
            jitter(JitterDistribution::Uniform, SimDuration::from_secs(1)),
            RngStream::derive(37, "j"),
        );
        let mut saturated = 0;
        for _ in 0..1000 {
            let d = st.sample(SimDuration::MAX);
            assert!(d >= SimDuration::MAX.saturating_sub(SimDuration::from_secs(1)));
            saturated += (d == SimDuration::MAX) as u32;
        }
        assert!(saturated > 400 && saturated < 600, "{saturated}");
    }

    #[test]
    fn jitter_is_deterministic() {
        let j = jitter(JitterDistribution::Normal, SimDuration::from_micros(700));
        let mut a = JitterStage::new(j, RngStream::derive(38, "j"));
        let mut b = JitterStage::new(j, RngStream::derive(38, "j"));
        for i in 0..10_000u64 {
            let base = SimDuration::from_micros(i);
            assert_eq!(a.sample(base), b.sample(base));
        }
    }
}

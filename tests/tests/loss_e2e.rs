//! Loss statistics end to end: 10^6 CBR packets through a link whose loss stage is the only
//! source of drops, against each model's formula (NOTES-rfc §7.3). Losses of a Markov model
//! are autocorrelated, so the tolerance is 4 sigma of the chain's asymptotic variance, not
//! a binomial interval.

use sim_core::config::*;
use sim_core::metrics::RunResult;
use sim_core::units::{Bytes, Rate};
use sim_core::SimDuration;

const N: u64 = 1_000_000;

fn run_with(loss: LossModel, seed: u64) -> RunResult {
    let mut fwd = LinkConfig::new(Rate(1_000_000_000), SimDuration::from_millis(1));
    fwd.loss = loss;
    let rev = LinkConfig::new(Rate(1_000_000_000), SimDuration::from_millis(1));
    // 100 B datagrams at 500 Mbit/s: half the link, no queueing.
    let cfg = Config::two_hosts(
        fwd,
        rev,
        vec![FlowConfig::cbr_up(Rate(500_000_000), Bytes(100), N)],
    );
    let r = sim_core::run(&cfg, seed).unwrap();
    assert_eq!(r.links[0].loss_judged, N);
    assert_eq!(r.drops.queue_overflow, 0);
    r
}

/// Asymptotic variance of the mean of f(S_n) for a finite Markov chain with transition
/// matrix `p` and stationary `pi`: Var f + 2 sum_k Cov(f(S_0), f(S_k)), summed until the
/// terms vanish.
fn markov_sigma2(p: &[Vec<f64>], pi: &[f64], f: &[f64]) -> f64 {
    let n = pi.len();
    let mu: f64 = (0..n).map(|i| pi[i] * f[i]).sum();
    let var: f64 = (0..n).map(|i| pi[i] * f[i] * f[i]).sum::<f64>() - mu * mu;
    // g_k(i) = E[f(S_k) | S_0 = i]
    let mut g = f.to_vec();
    let mut sum = 0.0;
    for _ in 0..200_000 {
        let next: Vec<f64> = (0..n)
            .map(|i| (0..n).map(|j| p[i][j] * g[j]).sum())
            .collect();
        g = next;
        let cov: f64 = (0..n).map(|i| pi[i] * f[i] * g[i]).sum::<f64>() - mu * mu;
        sum += cov;
        if cov.abs() < 1e-15 {
            break;
        }
    }
    var + 2.0 * sum
}

fn ge_check(p: f64, r: f64, k: f64, h: f64, seed: u64) {
    let res = run_with(
        LossModel::GilbertElliott(sim_core::config::loss::GilbertElliott { p, r, k, h }),
        seed,
    );
    let lost = res.drops.loss_gilbert_elliott as f64;
    let (pg, pb) = (r / (p + r), p / (p + r));
    let (lg, lb) = (1.0 - k, 1.0 - h);
    let mu = pg * lg + pb * lb;
    let lambda = 1.0 - p - r;
    let sigma2 = mu * (1.0 - mu) + 2.0 * pg * pb * (lg - lb).powi(2) * lambda / (1.0 - lambda);
    let sd = (sigma2 / N as f64).sqrt();
    let measured = lost / N as f64;
    assert!(
        (measured - mu).abs() < 4.0 * sd,
        "GE p={p} r={r} k={k} h={h}: measured {measured} vs {mu} (4 sd = {})",
        4.0 * sd
    );
    // Mean burst length: P(loss) / P(loss at n, delivery at n+1).
    let loss_then_ok = pg * lg * ((1.0 - p) * k + p * h) + pb * lb * (r * k + (1.0 - r) * h);
    let burst = mu / loss_then_ok;
    let measured_burst = res.links[0].mean_loss_burst;
    // The burst count is ~ N * loss_then_ok; bursts are roughly geometric, so the mean has a
    // relative sd of about sqrt(1 - 1/burst) / sqrt(count). 5 of those is generous.
    let count = N as f64 * loss_then_ok;
    let tol = 5.0 * burst * (1.0 - 1.0 / burst).max(0.01).sqrt() / count.sqrt();
    assert!(
        (measured_burst - burst).abs() < tol.max(0.01),
        "GE burst: measured {measured_burst} vs {burst} (tol {tol})"
    );
    // The engine's formula agrees with the test's.
    let model = LossModel::GilbertElliott(sim_core::config::loss::GilbertElliott { p, r, k, h });
    assert!((model.stationary_loss().unwrap() - mu).abs() < 1e-12);
}

#[test]
fn gilbert_elliott_paper_002_settings_match_the_formula() {
    // Paper 002: p = 0.00125, r = 0.125, h = 0.5; k solved for the target loss:
    // ploss = (1-k) pi_G + (1-h) pi_B.
    let (p, r, h) = (0.00125, 0.125, 0.5);
    let (pg, pb) = (r / (p + r), p / (p + r));
    for (i, target) in [0.05, 0.10, 0.25].into_iter().enumerate() {
        let k = 1.0 - (target - (1.0 - h) * pb) / pg;
        ge_check(p, r, k, h, 100 + i as u64);
    }
}

#[test]
fn gilbert_elliott_simple_gilbert_matches_the_formula() {
    ge_check(0.05, 0.3, 1.0, 0.0, 7);
}

#[test]
fn bernoulli_is_within_its_binomial_bound() {
    for (i, p) in [0.001, 0.02, 0.2].into_iter().enumerate() {
        let res = run_with(
            LossModel::Bernoulli(sim_core::config::loss::Bernoulli { p }),
            40 + i as u64,
        );
        let lost = res.drops.loss_bernoulli as f64;
        let sd = (N as f64 * p * (1.0 - p)).sqrt();
        assert!(
            (lost - N as f64 * p).abs() < 4.0 * sd,
            "Bernoulli {p}: {lost}"
        );
    }
}

#[test]
fn four_state_matches_its_stationary_loss() {
    // A bursty 4-state set: rare entry into bursts, short bursts with good gaps inside.
    let (p13, p31, p32, p23, p14) = (0.01, 0.3, 0.2, 0.4, 0.005);
    let model = LossModel::FourState(sim_core::config::loss::FourState {
        p13,
        p31,
        p32,
        p23,
        p14,
    });
    let res = run_with(model.clone(), 77);
    let mu = model.stationary_loss().unwrap();
    // Chain over states 1..4 (indices 0..3); loss = state entered is 3 or 4.
    let p = vec![
        vec![1.0 - p13 - p14, 0.0, p13, p14],
        vec![0.0, 1.0 - p23, p23, 0.0],
        vec![p31, p32, 1.0 - p31 - p32, 0.0],
        vec![1.0, 0.0, 0.0, 0.0],
    ];
    // Stationary distribution by power iteration (independent of stationary_loss()).
    let mut pi = vec![0.25; 4];
    for _ in 0..100_000 {
        pi = (0..4)
            .map(|j| (0..4).map(|i| pi[i] * p[i][j]).sum())
            .collect();
    }
    let f = [0.0, 0.0, 1.0, 1.0];
    assert!((pi[2] + pi[3] - mu).abs() < 1e-9, "{pi:?} vs {mu}");
    let sd = (markov_sigma2(&p, &pi, &f) / N as f64).sqrt();
    let measured = res.drops.loss_four_state as f64 / N as f64;
    assert!(
        (measured - mu).abs() < 4.0 * sd,
        "4-state: measured {measured} vs {mu} (4 sd = {})",
        4.0 * sd
    );
}

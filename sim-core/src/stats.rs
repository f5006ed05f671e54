//! Summary statistics of repeated runs: mean, standard deviation, a Student-t 95 %
//! confidence interval of the mean, median and the 10th / 90th percentiles.
//!
//! Used by sweeps (`quicsim sweep`, one summary per grid point and metric) and by the
//! browser for repeated runs. The t quantile and the order statistics come from `statrs`:
//! quantiles by its `OrderStatistics::quantile` (Hyndman & Fan type 8, the median-unbiased
//! definition statrs implements), the median as the middle value or the mean of the two
//! middle values.
//!
//! ```
//! let s = sim_core::stats::Summary::of(&[1.0, 2.0, 3.0, 4.0]);
//! assert_eq!((s.n, s.mean, s.median), (4, 2.5, 2.5));
//! // sd = sqrt(5/3); t(0.975, 3) = 3.182446...; half width = t * sd / 2
//! let (lo, hi) = s.ci95.unwrap();
//! assert!((hi - 2.5 - 3.182446305284263 * (5.0f64 / 3.0).sqrt() / 2.0).abs() < 1e-12);
//! assert!((lo + hi - 5.0).abs() < 1e-12);
//! ```

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};
use statrs::statistics::{Data, OrderStatistics};

/// Summary of a sample of `n` values.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Sample size.
    pub n: usize,
    /// Arithmetic mean (NaN-free: `None`-valued inputs are the caller's to drop).
    pub mean: f64,
    /// Sample standard deviation (denominator `n - 1`); `None` for `n < 2`.
    pub std_dev: Option<f64>,
    /// 95 % confidence interval of the mean, `mean ± t(0.975, n-1) · sd / sqrt(n)`
    /// (Student t); `None` for `n < 2`.
    pub ci95: Option<(f64, f64)>,
    /// Median.
    pub median: f64,
    /// 10th percentile (type-8 quantile).
    pub p10: f64,
    /// 90th percentile (type-8 quantile).
    pub p90: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

/// The two-sided 95 % Student-t quantile `t(0.975, df)`, `df >= 1`.
pub fn t95(df: usize) -> f64 {
    let t = StudentsT::new(0.0, 1.0, df as f64).expect("df >= 1 is a valid Student t");
    t.inverse_cdf(0.975)
}

impl Summary {
    /// The summary of `values` (finite numbers; at least one).
    ///
    /// # Panics
    /// If `values` is empty.
    pub fn of(values: &[f64]) -> Summary {
        assert!(!values.is_empty(), "a summary needs at least one value");
        let n = values.len();
        // Sums in input order: the caller passes values in job order, so the result does
        // not depend on which run finished first.
        let mean = values.iter().sum::<f64>() / n as f64;
        let (std_dev, ci95) = if n >= 2 {
            let ss: f64 = values.iter().map(|x| (x - mean) * (x - mean)).sum();
            let sd = libm::sqrt(ss / (n - 1) as f64);
            let half = t95(n - 1) * sd / libm::sqrt(n as f64);
            (Some(sd), Some((mean - half, mean + half)))
        } else {
            (None, None)
        };
        let mut data = Data::new(values.to_vec());
        let median = data.median();
        let p10 = data.quantile(0.1);
        let p90 = data.quantile(0.9);
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Summary {
            n,
            mean,
            std_dev,
            ci95,
            median,
            p10,
            p90,
            min,
            max,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn t_quantiles_match_the_tables() {
        // Two-sided 95 % critical values from any t table.
        for (df, want) in [
            (1, 12.706),
            (2, 4.303),
            (4, 2.776),
            (9, 2.262),
            (29, 2.045),
            (49, 2.010),
        ] {
            assert!((t95(df) - want).abs() < 5e-4, "df {df}: {}", t95(df));
        }
    }

    #[test]
    fn summary_by_hand() {
        // Ten values 1..=10: mean 5.5, sd = sqrt(sum (x-5.5)^2 / 9) = sqrt(82.5 / 9).
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        let s = Summary::of(&v);
        assert_eq!(s.n, 10);
        assert!(close(s.mean, 5.5));
        let sd = (82.5f64 / 9.0).sqrt();
        assert!(close(s.std_dev.unwrap(), sd));
        let half = 2.262_157_162_798_205 * sd / 10f64.sqrt();
        let (lo, hi) = s.ci95.unwrap();
        assert!(close(lo, 5.5 - half) && close(hi, 5.5 + half), "{lo} {hi}");
        assert!(close(s.median, 5.5));
        // Type 8: h = (n + 1/3) p + 1/3; p = 0.1 -> h = 1.3667: x1 + 0.3667 (x2 - x1).
        assert!(close(
            s.p10,
            1.0 + (10.0 + 1.0 / 3.0) * 0.1 + 1.0 / 3.0 - 1.0
        ));
        // p = 0.9 -> h = 9.6333: x9 + 0.6333 (x10 - x9) = 9.6333.
        assert!(close(s.p90, (10.0 + 1.0 / 3.0) * 0.9 + 1.0 / 3.0));
        assert_eq!((s.min, s.max), (1.0, 10.0));
        // Order of the input does not matter for the order statistics.
        let mut r = v.clone();
        r.reverse();
        let t = Summary::of(&r);
        assert_eq!((t.median, t.p10, t.p90), (s.median, s.p10, s.p90));
    }

    #[test]
    fn one_value_has_no_spread() {
        let s = Summary::of(&[3.25]);
        assert_eq!(
            (s.n, s.mean, s.median, s.p10, s.p90),
            (1, 3.25, 3.25, 3.25, 3.25)
        );
        assert_eq!((s.std_dev, s.ci95), (None, None));
        // A constant sample: zero width.
        let s = Summary::of(&[2.0, 2.0, 2.0]);
        assert_eq!(s.std_dev, Some(0.0));
        assert_eq!(s.ci95, Some((2.0, 2.0)));
    }
}

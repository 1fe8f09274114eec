//! A seeded, reproducible percentile bootstrap over clusters.
//!
//! Resampling whole clusters (for example all the judgments of one participant, or of
//! one comparison set) keeps the dependence inside a cluster, which resampling single
//! judgments would ignore. The generator is xoshiro256** (Blackman & Vigna 2018) seeded
//! through SplitMix64, implemented here so that a seed gives the same interval on every
//! platform and every version of this crate.

use serde::Serialize;

pub use crate::rng::{SplitMix64, Xoshiro256};

/// A percentile bootstrap confidence interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BootstrapCi {
    /// The statistic on the original sample.
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    pub confidence: f64,
    /// Resamples drawn.
    pub n_resamples: usize,
    /// Resamples whose statistic was defined (the interval uses only these).
    pub n_valid: usize,
    pub seed: u64,
}

/// The q-quantile of sorted values with linear interpolation between order statistics
/// (numpy's default `percentile` method). `None` for no values or q outside [0, 1].
pub fn quantile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    let frac = h - lo as f64;
    Some(sorted[lo] + frac * (sorted[hi] - sorted[lo]))
}

/// Percentile bootstrap CI of `statistic` over resampled clusters.
///
/// Draws `n_resamples` samples of `clusters.len()` clusters with replacement (from
/// [`Xoshiro256`] seeded with `seed`), evaluates `statistic` on each, drops resamples
/// where it is undefined (`None` or non-finite) and returns the `(1-confidence)/2` and
/// `(1+confidence)/2` quantiles of the rest (linear interpolation). The same inputs and
/// seed always give the same interval.
///
/// `None` when there are no clusters, `n_resamples` is 0, `confidence` is not in
/// (0, 1), the statistic is undefined on the original sample, or on every resample.
pub fn percentile_bootstrap_ci<T, F>(
    clusters: &[T],
    mut statistic: F,
    n_resamples: usize,
    confidence: f64,
    seed: u64,
) -> Option<BootstrapCi>
where
    F: FnMut(&[&T]) -> Option<f64>,
{
    if clusters.is_empty() || n_resamples == 0 || !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let all: Vec<&T> = clusters.iter().collect();
    let estimate = statistic(&all).filter(|x| x.is_finite())?;
    let mut rng = Xoshiro256::seed_from_u64(seed);
    let n = clusters.len();
    let mut sample: Vec<&T> = Vec::with_capacity(n);
    let mut stats = Vec::with_capacity(n_resamples);
    for _ in 0..n_resamples {
        sample.clear();
        for _ in 0..n {
            let i = rng.below(n as u64)? as usize;
            sample.push(&clusters[i]);
        }
        if let Some(x) = statistic(&sample).filter(|x| x.is_finite()) {
            stats.push(x);
        }
    }
    stats.sort_by(f64::total_cmp);
    let alpha = (1.0 - confidence) / 2.0;
    Some(BootstrapCi {
        estimate,
        low: quantile_sorted(&stats, alpha)?,
        high: quantile_sorted(&stats, 1.0 - alpha)?,
        confidence,
        n_resamples,
        n_valid: stats.len(),
        seed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_reference_values() {
        // Reference outputs of SplitMix64 from seed 1234567.
        let mut sm = SplitMix64::new(1_234_567);
        assert_eq!(sm.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(sm.next_u64(), 3_203_168_211_198_807_973);
    }

    #[test]
    fn below_is_in_range_and_roughly_uniform() {
        let mut rng = Xoshiro256::seed_from_u64(7);
        let mut hist = [0usize; 5];
        for _ in 0..50_000 {
            hist[rng.below(5).unwrap() as usize] += 1;
        }
        for h in hist {
            assert!((9_000..11_000).contains(&h), "{hist:?}");
        }
        assert_eq!(rng.below(0), None);
        let x = rng.next_f64();
        assert!((0.0..1.0).contains(&x));
    }

    #[test]
    fn quantiles_like_numpy() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile_sorted(&v, 0.0), Some(1.0));
        assert_eq!(quantile_sorted(&v, 1.0), Some(4.0));
        assert_eq!(quantile_sorted(&v, 0.5), Some(2.5));
        assert!((quantile_sorted(&v, 0.025).unwrap() - 1.075).abs() < 1e-12);
        assert_eq!(quantile_sorted(&[], 0.5), None);
    }

    fn mean(xs: &[&f64]) -> Option<f64> {
        (!xs.is_empty()).then(|| xs.iter().copied().sum::<f64>() / xs.len() as f64)
    }

    #[test]
    fn reproducible_and_sensible() {
        let data: Vec<f64> = (0..40).map(|i| f64::from(i % 7)).collect();
        let a = percentile_bootstrap_ci(&data, mean, 2000, 0.95, 42).unwrap();
        let b = percentile_bootstrap_ci(&data, mean, 2000, 0.95, 42).unwrap();
        assert_eq!(a, b);
        let c = percentile_bootstrap_ci(&data, mean, 2000, 0.95, 43).unwrap();
        assert_ne!(a.low, c.low);
        assert!(a.low < a.estimate && a.estimate < a.high);
        assert_eq!(a.n_valid, 2000);
        // Roughly mean +- 1.96 * sd / sqrt(n).
        let m = a.estimate;
        let sd = (data.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 39.0).sqrt();
        let half = 1.96 * sd / 40f64.sqrt();
        assert!((a.high - a.low - 2.0 * half).abs() < 0.25 * half, "{a:?}");
    }

    #[test]
    fn clusters_are_resampled_whole() {
        // Two clusters with 3 judgments each: every resample's statistic is one of the
        // three possible cluster mixes, never a mix within a cluster.
        let clusters = vec![vec![0.0, 0.0, 0.0], vec![1.0, 1.0, 1.0]];
        let stat = |cs: &[&Vec<f64>]| {
            let all: Vec<f64> = cs.iter().flat_map(|c| c.iter().copied()).collect();
            Some(all.iter().sum::<f64>() / all.len() as f64)
        };
        let ci = percentile_bootstrap_ci(&clusters, stat, 500, 0.9, 1).unwrap();
        assert_eq!((ci.low, ci.high), (0.0, 1.0));
    }

    #[test]
    fn degenerate() {
        let empty: Vec<f64> = Vec::new();
        assert_eq!(percentile_bootstrap_ci(&empty, mean, 10, 0.95, 1), None);
        assert_eq!(percentile_bootstrap_ci(&[1.0], mean, 0, 0.95, 1), None);
        assert_eq!(percentile_bootstrap_ci(&[1.0], mean, 10, 1.0, 1), None);
        assert_eq!(percentile_bootstrap_ci(&[1.0], |_| None, 10, 0.95, 1), None);
        let one = percentile_bootstrap_ci(&[3.0], mean, 10, 0.95, 1).unwrap();
        assert_eq!((one.low, one.high), (3.0, 3.0));
    }
}

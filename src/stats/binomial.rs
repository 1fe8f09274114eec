//! Binomial proportion: estimate, exact test and confidence intervals.
//!
//! References matched (see `tests/data/golden/README.md`): `scipy.stats.binomtest`
//! (two-sided p by R's rule: sum of `pmf(i)` over every i with
//! `pmf(i) <= pmf(k)(1 + 1e-7)`), its `proportion_ci(method="exact")` (Clopper-Pearson,
//! Beta quantiles) and `proportion_ci(method="wilson")` without continuity correction.

use serde::Serialize;
use statrs::distribution::{Beta, Binomial, ContinuousCDF, Discrete, DiscreteCDF};

use super::{Z_95, finite, normal_quantile};

/// The alternative hypothesis of the binomial test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Alternative {
    /// `p != p0`.
    TwoSided,
    /// `p > p0`.
    Greater,
    /// `p < p0`.
    Less,
}

impl Alternative {
    /// Parses scipy's names: "two-sided", "greater", "less".
    pub fn parse(s: &str) -> Option<Alternative> {
        match s {
            "two-sided" => Some(Alternative::TwoSided),
            "greater" => Some(Alternative::Greater),
            "less" => Some(Alternative::Less),
            _ => None,
        }
    }
}

/// A binomial test of k successes in n trials against p0, with 95% intervals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BinomialTest {
    pub k: u64,
    pub n: u64,
    pub p0: f64,
    pub alternative: Alternative,
    /// k/n.
    pub estimate: f64,
    pub p_value: f64,
    /// Clopper-Pearson, always two-sided.
    pub ci95_exact: (f64, f64),
    /// Wilson without continuity correction, always two-sided.
    pub ci95_wilson: (f64, f64),
}

/// The binomial test and intervals; `None` when n = 0, k > n or p0 is not in [0, 1].
pub fn binomial_test(k: u64, n: u64, p0: f64, alternative: Alternative) -> Option<BinomialTest> {
    Some(BinomialTest {
        k,
        n,
        p0,
        alternative,
        estimate: estimate(k, n)?,
        p_value: binomial_p_value(k, n, p0, alternative)?,
        ci95_exact: clopper_pearson(k, n, 0.95)?,
        ci95_wilson: wilson(k, n, 0.95)?,
    })
}

/// k/n; `None` when n = 0 or k > n.
pub fn estimate(k: u64, n: u64) -> Option<f64> {
    (n > 0 && k <= n).then(|| k as f64 / n as f64)
}

/// The exact binomial test's p-value, as `scipy.stats.binomtest(k, n, p0, alternative)`.
/// Two-sided uses R's rule (`pmf(i) <= pmf(k)(1+1e-7)`), computed like scipy: the tail
/// on k's side plus the tail on the other side of the mode up to the last such i.
/// `None` when n = 0, k > n or p0 is not in [0, 1].
pub fn binomial_p_value(k: u64, n: u64, p0: f64, alternative: Alternative) -> Option<f64> {
    if n == 0 || k > n || !(0.0..=1.0).contains(&p0) {
        return None;
    }
    // Parameters outside the distribution's domain: no figure (`None`).
    let dist = Binomial::new(p0, n).ok()?;
    // P(X <= x) and P(X >= x), with the empty cases handled.
    let cdf = |x: u64| dist.cdf(x);
    let sf_ge = |x: u64| if x == 0 { 1.0 } else { dist.sf(x - 1) };
    let p = match alternative {
        Alternative::Less => cdf(k),
        Alternative::Greater => sf_ge(k),
        Alternative::TwoSided => {
            let mean = p0 * n as f64;
            let kf = k as f64;
            if kf == mean {
                1.0
            } else {
                let d = dist.pmf(k);
                let thr = d * (1.0 + 1e-7);
                if kf < mean {
                    // Other tail: i in [ceil(mean), n] with pmf(i) <= thr; pmf decreases
                    // there, so it is [first such i, n].
                    let lo = mean.ceil() as u64;
                    let first = first_at_most(lo, n, |i| dist.pmf(i) <= thr, true);
                    let upper = first.map_or(0.0, sf_ge);
                    cdf(k) + upper
                } else {
                    // Other tail: i in [0, floor(mean)] with pmf(i) <= thr; pmf increases
                    // there, so it is [0, last such i].
                    let hi = mean.floor() as u64;
                    let last = first_at_most(0, hi, |i| dist.pmf(i) <= thr, false);
                    let lower = last.map_or(0.0, cdf);
                    lower + sf_ge(k)
                }
            }
        }
    };
    finite(p.clamp(0.0, 1.0))
}

/// Binary search over `[lo, hi]` for a monotone predicate. With `from_high = true` the
/// predicate holds on a suffix and the first index of it is returned; otherwise it holds
/// on a prefix and the last index of it is returned. `None` when it holds nowhere.
fn first_at_most(lo: u64, hi: u64, pred: impl Fn(u64) -> bool, from_high: bool) -> Option<u64> {
    if lo > hi {
        return None;
    }
    if from_high {
        if !pred(hi) {
            return None;
        }
        let (mut a, mut b) = (lo, hi); // pred(b) holds
        while a < b {
            let mid = a + (b - a) / 2;
            if pred(mid) {
                b = mid;
            } else {
                a = mid + 1;
            }
        }
        Some(b)
    } else {
        if !pred(lo) {
            return None;
        }
        let (mut a, mut b) = (lo, hi); // pred(a) holds
        while a < b {
            let mid = a + (b - a).div_ceil(2);
            if pred(mid) {
                a = mid;
            } else {
                b = mid - 1;
            }
        }
        Some(a)
    }
}

/// Clopper-Pearson exact interval at `confidence` (two-sided):
/// `[Beta(k, n-k+1).ppf(a/2), Beta(k+1, n-k).ppf(1-a/2)]`, with 0 for k = 0 and 1 for
/// k = n. `None` when n = 0, k > n or the confidence is not in (0, 1).
pub fn clopper_pearson(k: u64, n: u64, confidence: f64) -> Option<(f64, f64)> {
    if n == 0 || k > n || !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let alpha = (1.0 - confidence) / 2.0;
    let (kf, nf) = (k as f64, n as f64);
    let low = if k == 0 {
        0.0
    } else {
        // A degenerate Beta (no trials): no bound.
        Beta::new(kf, nf - kf + 1.0).ok()?.inverse_cdf(alpha)
    };
    let high = if k == n {
        1.0
    } else {
        // A degenerate Beta (no trials): no bound.
        Beta::new(kf + 1.0, nf - kf).ok()?.inverse_cdf(1.0 - alpha)
    };
    Some((finite(low)?, finite(high)?))
}

/// Wilson score interval without continuity correction at `confidence` (two-sided), as
/// scipy: `r = (p + z^2/(2n))/t`, `delta = (z/t) sqrt(p(1-p)/n + (z/(2n))^2)` with
/// `t = 1 + z^2/n`. `None` when n = 0, k > n or the confidence is not in (0, 1).
pub fn wilson(k: u64, n: u64, confidence: f64) -> Option<(f64, f64)> {
    if n == 0 || k > n || !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let z = if confidence == 0.95 {
        Z_95
    } else {
        normal_quantile(0.5 + 0.5 * confidence)?
    };
    let nf = n as f64;
    let p = k as f64 / nf;
    let t = 1.0 + z * z / nf;
    let r = (p + z * z / (2.0 * nf)) / t;
    let delta = z / t * (p * (1.0 - p) / nf + (z / (2.0 * nf)).powi(2)).sqrt();
    Some((finite(r - delta)?, finite(r + delta)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scipy_examples() {
        let t = binomial_test(32, 50, 0.5, Alternative::TwoSided).unwrap();
        assert!((t.p_value - 0.06490864707227217).abs() < 1e-12);
        assert!((t.ci95_exact.0 - 0.4919313522854438).abs() < 1e-9);
        assert!((t.ci95_wilson.1 - 0.7586125034815326).abs() < 1e-12);
        let t = binomial_test(0, 20, 0.1, Alternative::TwoSided).unwrap();
        assert!((t.p_value - 0.25452997802490435).abs() < 1e-12);
        assert_eq!(t.ci95_exact.0, 0.0);
    }

    #[test]
    fn one_sided_and_edges() {
        // P(X >= 32 | n=50, p=.5) and P(X <= 32).
        let g = binomial_p_value(32, 50, 0.5, Alternative::Greater).unwrap();
        assert!((g - 0.03245432353613609).abs() < 1e-12, "{g}");
        let l = binomial_p_value(32, 50, 0.5, Alternative::Less).unwrap();
        assert!((l - 0.9835804312178658).abs() < 1e-12, "{l}");
        assert_eq!(
            binomial_p_value(5, 10, 0.5, Alternative::TwoSided),
            Some(1.0)
        );
        assert_eq!(binomial_p_value(0, 0, 0.5, Alternative::TwoSided), None);
        assert_eq!(binomial_p_value(3, 2, 0.5, Alternative::TwoSided), None);
        assert_eq!(binomial_p_value(1, 2, 1.5, Alternative::TwoSided), None);
        assert_eq!(
            binomial_p_value(0, 5, 0.0, Alternative::TwoSided),
            Some(1.0)
        );
        assert_eq!(
            binomial_p_value(1, 5, 0.0, Alternative::TwoSided),
            Some(0.0)
        );
        assert_eq!(
            binomial_p_value(5, 5, 1.0, Alternative::TwoSided),
            Some(1.0)
        );
        assert_eq!(clopper_pearson(10, 10, 0.95).map(|c| c.1), Some(1.0));
        assert_eq!(wilson(0, 0, 0.95), None);
        assert_eq!(binomial_test(0, 0, 0.5, Alternative::Less), None);
    }
}

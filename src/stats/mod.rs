//! Statistics as pure functions over plain data: agreement between raters, ranks and
//! the study's tests. No database, no HTTP; tested against reference vectors.
//!
//! Every figure here is checked against `tests/data/golden/agreement.json` (computed by
//! statsmodels, scikit-learn, scipy, krippendorff, irrCAC, pingouin and pyirr; see that
//! folder's README for every formula and convention) by `tests/golden.rs`.
//!
//! # Conventions
//!
//! * Categories are **indexes** into a declared category list. The declared list fixes
//!   the table shape and `q` (PABAK, Gwet's AC1, Randolph), even for unused categories.
//!   [`label_index`] and [`index_labels`] turn labels into indexes.
//! * **Undefined is `None`**, never NaN, 0 or 1 by accident: kappa-type coefficients when
//!   the chance agreement `p_e` is 1, Krippendorff's alpha when the expected disagreement
//!   is 0, `z` and p-values when their standard error is 0, anything over no items.
//! * A variance with `|var| < 1e-12` is exactly 0; a clearly negative variance (which
//!   only rounding could produce) gives an undefined standard error rather than the
//!   square root of a negative number.
//! * Nothing here panics on input: malformed input is a [`StatsError`], degenerate
//!   input gives `None`-filled results.
//!
//! # Modules
//!
//! * [`agreement`]: two raters, from a contingency table ([`agreement::Table`]): percent
//!   agreement, Cohen's kappa (with the Fleiss-Cohen-Everitt SE), weighted kappa, PABAK,
//!   Scott's pi, Gwet's AC1; pooling of tables.
//! * [`multi`]: any number of raters with missing ratings ([`multi::Ratings`]): Fleiss,
//!   Randolph, irrCAC's Fleiss and AC1 with Gwet's SE, Conger, pairwise Cohen and
//!   Light, Krippendorff's alpha (nominal, ordinal, interval).
//! * [`ranks`]: mean rank and SD per source, Friedman, Kendall's W and the F form.
//! * [`binomial`]: exact binomial test, Clopper-Pearson and Wilson intervals.
//! * [`circular`]: the human baseline under circular evaluation: vanilla and circular
//!   accuracy with their intervals, the position bias, agreement over the content chosen.
//! * [`signal`]: d' from signal detection theory.
//! * [`bootstrap`]: a seeded percentile bootstrap over clusters and its PRNG.
//! * [`quality`]: how good the review is: each rater's sensitivity and specificity,
//!   the prevalence of defects and the defects left in the retained set (a Dawid-Skene
//!   latent-class model anchored by known items), and the rates on known items.
//! * [`sampling`]: sampled review: the single sampling plan, the exact upper bound on
//!   the defect rate, the sample that shows a rate with no defect found.
//!
//! What it holds, part by part:
//!
//! pure statistics: agreement for two raters from their table (`agreement`: Cohen,
//! weighted, PABAK, Scott, Gwet's AC1 from a table) and for many (`multi`: Fleiss, Gwet,
//! Krippendorff, Conger), both on two raters' pairs (`pairs`), ranks (Friedman, Kendall's
//! W), binomial tests, d', a seeded bootstrap, sampled review (`sampling`: the single
//! sampling plan, the exact upper bound, the zero-defect sample), the human baseline under
//! circular evaluation (`circular`: vanilla and circular accuracy with their intervals, the
//! position bias, agreement over the option chosen), how good the review is (`quality`: a
//! Dawid-Skene latent-class model per stage fitted by EM over patterns of ratings, anchored
//! by known items, the author one more rater; identified: posterior means and credible
//! intervals by a seeded Gibbs sampler, its chains on every core, each with its own
//! generator; not identified: the bounds over the 95% profile-likelihood region, every
//! rater's accuracy and every task's prevalence profiled on every core; the model-free
//! catch and pass rates on known items with Wilson intervals; a simulator of reviews with
//! known truth); undefined is `None`

pub mod agreement;
pub mod binomial;
pub mod bootstrap;
pub mod circular;
pub mod multi;
pub mod pairs;
pub mod quality;
pub mod ranks;
pub mod sampling;
pub mod signal;

use statrs::distribution::{ChiSquared, ContinuousCDF, FisherSnedecor, StudentsT};

/// `norm.isf(0.025)`: the two-sided 95% normal quantile used by statsmodels and scipy.
pub const Z_95: f64 = 1.959_963_984_540_054;

/// Variances with an absolute value below this are exactly 0 (README convention).
pub const VAR_EPS: f64 = 1e-12;

/// Why an input could not be used at all. Degenerate but well-formed input is not an
/// error: it gives `None` for the figures that it leaves undefined.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StatsError {
    /// A label is not among the declared categories.
    #[error("label {label} is not a declared category")]
    UnknownLabel { label: String },
    /// A category index is not below the number of declared categories.
    #[error("category index {index} is out of range for {q} declared categories")]
    CategoryOutOfRange { index: usize, q: usize },
    /// Rows of a matrix have different lengths.
    #[error("row {row} has {len} entries, expected {expected}")]
    Ragged {
        row: usize,
        len: usize,
        expected: usize,
    },
    /// A table is not square, or tables to pool have different shapes.
    #[error("table shape mismatch: {0}")]
    Shape(String),
    /// A cell or value is negative, NaN or infinite.
    #[error("invalid value {value} at {at}")]
    InvalidValue { value: String, at: String },
    /// Nothing to work on where something is required (for example pooling no tables).
    #[error("empty input: {0}")]
    Empty(String),
}

/// The index of `label` in the declared `categories`.
pub fn label_index<L: PartialEq>(categories: &[L], label: &L) -> Option<usize> {
    categories.iter().position(|c| c == label)
}

/// Maps labels to indexes into `categories`; fails on the first undeclared label.
pub fn index_labels<L: PartialEq + std::fmt::Debug>(
    categories: &[L],
    labels: &[L],
) -> Result<Vec<usize>, StatsError> {
    labels
        .iter()
        .map(|l| {
            label_index(categories, l).ok_or_else(|| StatsError::UnknownLabel {
                label: format!("{l:?}"),
            })
        })
        .collect()
}

/// Applies the variance conventions: non-finite or clearly negative is undefined,
/// `|var| < 1e-12` is exactly 0.
pub(crate) fn clean_var(var: f64) -> Option<f64> {
    if !var.is_finite() {
        None
    } else if var.abs() < VAR_EPS {
        Some(0.0)
    } else if var < 0.0 {
        None
    } else {
        Some(var)
    }
}

/// Standard error from a variance under [`clean_var`]'s conventions.
pub(crate) fn se_from_var(var: f64) -> Option<f64> {
    clean_var(var).map(f64::sqrt)
}

/// `x > threshold`, false for NaN: `!is_above(x, t)` is the NaN-safe "not above".
pub(crate) fn is_above(x: f64, threshold: f64) -> bool {
    x > threshold
}

/// `Some(x)` when `x` is finite.
pub(crate) fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// Upper tail of the standard normal, `Phi_bar(z) = erfc(z/sqrt 2)/2` (as statrs and
/// scipy's `norm.sf`).
pub(crate) fn normal_sf(z: f64) -> f64 {
    0.5 * statrs::function::erf::erfc(z / std::f64::consts::SQRT_2)
}

/// The standard normal quantile at `p` in (0, 1).
pub(crate) fn normal_quantile(p: f64) -> Option<f64> {
    if !(p > 0.0 && p < 1.0) {
        return None;
    }
    finite(-std::f64::consts::SQRT_2 * statrs::function::erf::erfc_inv(2.0 * p))
}

/// `(z, one-sided p = Phi_bar(z), two-sided p = 2 Phi_bar(|z|))` for `value / se`;
/// all `None` when the SE is undefined or 0.
pub(crate) fn z_test(value: f64, se: Option<f64>) -> (Option<f64>, Option<f64>, Option<f64>) {
    match se {
        Some(se) if se > 0.0 => {
            let z = value / se;
            if !z.is_finite() {
                return (None, None, None);
            }
            (Some(z), Some(normal_sf(z)), Some(2.0 * normal_sf(z.abs())))
        }
        _ => (None, None, None),
    }
}

/// Student-t upper quantile `t_{df}(p)`.
pub(crate) fn t_quantile(p: f64, df: f64) -> Option<f64> {
    if !(p > 0.0 && p < 1.0) {
        return None;
    }
    // Degrees of freedom the distribution refuses: no figure.
    let t = StudentsT::new(0.0, 1.0, df).ok()?;
    finite(t.inverse_cdf(p))
}

/// Two-sided Student-t p-value `2 (1 - T_df(|t|))`, computed as `2 sf(|t|)`.
pub(crate) fn t_two_sided_p(t: f64, df: f64) -> Option<f64> {
    if !t.is_finite() {
        return None;
    }
    // Degrees of freedom the distribution refuses: no figure.
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    finite((2.0 * dist.sf(t.abs())).min(1.0))
}

/// Chi-square survival function.
pub(crate) fn chi2_sf(x: f64, df: f64) -> Option<f64> {
    if !x.is_finite() {
        return None;
    }
    // Degrees of freedom the distribution refuses: no figure.
    let dist = ChiSquared::new(df).ok()?;
    finite(dist.sf(x.max(0.0)))
}

/// F survival function.
pub(crate) fn f_sf(x: f64, d1: f64, d2: f64) -> Option<f64> {
    if !x.is_finite() {
        return None;
    }
    // Degrees of freedom the distribution refuses: no figure.
    let dist = FisherSnedecor::new(d1, d2).ok()?;
    finite(dist.sf(x.max(0.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variance_conventions() {
        assert_eq!(clean_var(5e-13), Some(0.0));
        assert_eq!(clean_var(-5e-13), Some(0.0));
        assert_eq!(clean_var(-1e-6), None);
        assert_eq!(clean_var(f64::NAN), None);
        assert_eq!(se_from_var(4.0), Some(2.0));
    }

    #[test]
    fn normal_helpers() {
        assert!((normal_sf(0.0) - 0.5).abs() < 1e-15);
        let z = normal_quantile(0.975).unwrap();
        assert!((z - Z_95).abs() < 1e-12, "{z}");
        assert_eq!(normal_quantile(1.0), None);
        assert_eq!(z_test(1.0, Some(0.0)), (None, None, None));
    }

    #[test]
    fn t_quantiles_small_df() {
        // Closed forms: df 1 is Cauchy, tan(pi (p - 1/2)); df 2 is (2p-1)/sqrt(2p(1-p)).
        let t1 = t_quantile(0.975, 1.0).unwrap();
        assert!((t1 - 12.706204736174696).abs() < 1e-9, "{t1}");
        let t2 = t_quantile(0.975, 2.0).unwrap();
        assert!((t2 - 4.302652729749462).abs() < 1e-11, "{t2}");
        assert_eq!(t_quantile(0.975, 0.0), None);
        let p = t_two_sided_p(t2, 2.0).unwrap();
        assert!((p - 0.05).abs() < 1e-13, "{p}");
    }

    #[test]
    fn labels() {
        let cats = ["pass", "reject"];
        assert_eq!(
            index_labels(&cats, &["reject", "pass"]).unwrap(),
            vec![1, 0]
        );
        assert!(index_labels(&cats, &["maybe"]).is_err());
    }
}

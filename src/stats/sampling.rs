//! Sampled review: how many items to review and what the sample says of the whole.
//!
//! A lab that reviews a random sample instead of every item (TUMTraffic-VideoQA's
//! "selective quality evaluation") needs three figures, each exact under the binomial
//! model (items drawn at random from a large lot, each defective with probability p):
//!
//! * [`plan`]: the binomial single sampling plan for an acceptable quality level (AQL,
//!   the defect rate the lab is content with) and a rejectable one (RQL), with the
//!   producer's risk alpha (rejecting a lot at the AQL) and the consumer's risk beta
//!   (accepting one at the RQL): review n items, accept the lot when at most c are
//!   defective. Of the plans that meet both risks, the smallest n, then the smallest c,
//!   found by exact search (not the Poisson approximation of printed tables).
//! * [`upper_bound`]: the exact one-sided (Clopper-Pearson) upper confidence bound on the
//!   whole's defect rate after finding k defects in n reviewed items.
//! * [`zero_defect_n`]: the smallest sample that shows a defect rate below p at a given
//!   confidence when it finds no defect.
//!
//! References matched (`tests/data/golden/sampling.json`, made by `sampling.py` beside
//! it): scipy's `binom.cdf` in an exact search, and `binomtest(k, n,
//! alternative="less").proportion_ci(method="exact")`.

use serde::Serialize;
use statrs::distribution::{Beta, Binomial, ContinuousCDF, DiscreteCDF};

/// The largest sample [`plan`] considers: risks that need more are refused.
pub const MAX_PLAN_N: u64 = 1_000_000;

/// A single sampling plan and how it treats lots at the two quality levels.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// Items to review.
    pub n: u64,
    /// The acceptance number: the lot is accepted with at most this many defects.
    pub c: u64,
    /// The probability of accepting a lot whose defect rate is the AQL (at least
    /// 1 - alpha).
    pub accept_at_aql: f64,
    /// The probability of accepting a lot whose defect rate is the RQL (at most beta).
    pub accept_at_rql: f64,
}

impl Plan {
    /// Whether a sample with `defects` defects accepts the lot.
    pub fn accepts(&self, defects: u64) -> bool {
        defects <= self.c
    }
}

/// Why figures cannot be computed, naming the value at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SamplingError {
    #[error("{name} must be greater than 0 and less than 1, not {value}")]
    NotAProportion { name: &'static str, value: f64 },
    #[error("the AQL ({aql}) must be less than the RQL ({rql})")]
    LevelsOutOfOrder { aql: f64, rql: f64 },
    #[error("the defects ({defects}) cannot exceed the items reviewed ({n})")]
    MoreDefectsThanItems { defects: u64, n: u64 },
    #[error("at least one item must be reviewed")]
    NoItems,
    #[error(
        "no plan of at most {MAX_PLAN_N} items meets these risks: widen the gap between the AQL and the RQL or accept larger risks"
    )]
    TooLarge,
}

fn proportion(name: &'static str, value: f64) -> Result<f64, SamplingError> {
    if value > 0.0 && value < 1.0 {
        Ok(value)
    } else {
        Err(SamplingError::NotAProportion { name, value })
    }
}

/// P(at most `c` defects among `n` items | defect rate `p`).
fn accept_probability(n: u64, c: u64, p: f64) -> f64 {
    match Binomial::new(p, n) {
        Ok(b) => b.cdf(c),
        // Unreachable for a checked p in (0, 1); a refusal to accept is the safe side.
        Err(_) => 0.0,
    }
}

/// The binomial single sampling plan for the quality levels `aql` < `rql` and the
/// risks `alpha` (producer's) and `beta` (consumer's): of the plans (n, c) with
/// P(accept | AQL) >= 1 - alpha and P(accept | RQL) <= beta, the smallest n, then the
/// smallest c.
pub fn plan(aql: f64, rql: f64, alpha: f64, beta: f64) -> Result<Plan, SamplingError> {
    plan_within(aql, rql, alpha, beta, MAX_PLAN_N)
}

/// [`plan`], looking at samples of at most `max_n` items.
fn plan_within(
    aql: f64,
    rql: f64,
    alpha: f64,
    beta: f64,
    max_n: u64,
) -> Result<Plan, SamplingError> {
    let aql = proportion("the AQL", aql)?;
    let rql = proportion("the RQL", rql)?;
    let alpha = proportion("alpha", alpha)?;
    let beta = proportion("beta", beta)?;
    if aql >= rql {
        return Err(SamplingError::LevelsOutOfOrder { aql, rql });
    }
    // For each n, the smallest c that the producer's risk allows; it never decreases
    // as n grows (P(X <= c) falls with n), so it is carried from one n to the next.
    // That c is also the best for the consumer's risk (P(X <= c | RQL) grows with c).
    let mut c = 0;
    for n in 1..=max_n {
        while c < n && accept_probability(n, c, aql) < 1.0 - alpha {
            c += 1;
        }
        let at_rql = accept_probability(n, c, rql);
        if at_rql <= beta {
            return Ok(Plan {
                n,
                c,
                accept_at_aql: accept_probability(n, c, aql),
                accept_at_rql: at_rql,
            });
        }
    }
    Err(SamplingError::TooLarge)
}

/// The exact one-sided upper bound at `confidence` on the defect rate of the whole,
/// after `defects` defects among `n` items drawn at random: `Beta(k+1, n-k)` at
/// `confidence`, 1 when every item was defective, `1 - (1 - confidence)^(1/n)` when
/// none was.
pub fn upper_bound(defects: u64, n: u64, confidence: f64) -> Result<f64, SamplingError> {
    let confidence = proportion("the confidence", confidence)?;
    if n == 0 {
        return Err(SamplingError::NoItems);
    }
    if defects > n {
        return Err(SamplingError::MoreDefectsThanItems { defects, n });
    }
    if defects == n {
        return Ok(1.0);
    }
    if defects == 0 {
        // Closed form: (1 - u)^n = 1 - confidence.
        return Ok(-((1.0 - confidence).ln() / n as f64).exp_m1());
    }
    let (k, nf) = (defects as f64, n as f64);
    let beta = Beta::new(k + 1.0, nf - k).map_err(|_| SamplingError::NoItems)?;
    Ok(beta.inverse_cdf(confidence).clamp(0.0, 1.0))
}

/// The smallest number of items that, with no defect found among them, shows the
/// whole's defect rate to be at most `p` at `confidence`: the smallest n with
/// [`upper_bound`]`(0, n, confidence) <= p`.
pub fn zero_defect_n(p: f64, confidence: f64) -> Result<u64, SamplingError> {
    let p = proportion("p", p)?;
    let confidence = proportion("the confidence", confidence)?;
    // (1 - p)^n <= 1 - confidence, solved, then checked against the bound itself
    // either way (the logarithms round).
    let estimate = ((1.0 - confidence).ln() / (-p).ln_1p()).ceil();
    let mut n = if estimate.is_finite() && estimate >= 1.0 {
        estimate as u64
    } else {
        1
    };
    let holds = |n: u64| upper_bound(0, n, confidence).is_ok_and(|u| u <= p);
    while n > 1 && holds(n - 1) {
        n -= 1;
    }
    while !holds(n) {
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_textbook_plan_for_one_and_five_percent() {
        let p = plan(0.01, 0.05, 0.05, 0.10).unwrap();
        assert_eq!((p.n, p.c), (132, 3));
        assert!(p.accept_at_aql >= 0.95 && p.accept_at_rql <= 0.10, "{p:?}");
        assert!(p.accepts(3) && !p.accepts(4));
    }

    #[test]
    fn the_plan_is_the_smallest_that_meets_both_risks() {
        let (aql, rql, alpha, beta) = (0.02, 0.08, 0.05, 0.10);
        let p = plan(aql, rql, alpha, beta).unwrap();
        // No smaller sample meets both risks with any acceptance number.
        for n in 1..p.n {
            for c in 0..=n {
                let ok = accept_probability(n, c, aql) >= 1.0 - alpha
                    && accept_probability(n, c, rql) <= beta;
                assert!(!ok, "({n}, {c}) is smaller than {p:?}");
            }
        }
        // And no smaller acceptance number at that n.
        for c in 0..p.c {
            assert!(accept_probability(p.n, c, aql) < 1.0 - alpha);
        }
    }

    #[test]
    fn bad_values_are_named() {
        assert_eq!(
            plan(0.05, 0.01, 0.05, 0.1),
            Err(SamplingError::LevelsOutOfOrder {
                aql: 0.05,
                rql: 0.01
            })
        );
        assert!(
            plan(0.0, 0.01, 0.05, 0.1)
                .unwrap_err()
                .to_string()
                .starts_with("the AQL must be")
        );
        assert!(
            plan(0.01, 0.05, 1.0, 0.1)
                .unwrap_err()
                .to_string()
                .starts_with("alpha must be")
        );
        assert!(
            plan(0.01, 0.05, 0.05, f64::NAN)
                .unwrap_err()
                .to_string()
                .starts_with("beta must be")
        );
        assert_eq!(upper_bound(3, 0, 0.95), Err(SamplingError::NoItems));
        assert_eq!(
            upper_bound(4, 3, 0.95),
            Err(SamplingError::MoreDefectsThanItems { defects: 4, n: 3 })
        );
        assert!(zero_defect_n(1.0, 0.95).is_err());
        assert_eq!(
            plan_within(0.01, 0.05, 0.05, 0.10, 131),
            Err(SamplingError::TooLarge),
            "the plan needs 132 items"
        );
    }

    #[test]
    fn no_defect_in_zero_defect_n_items_bounds_the_rate_by_p() {
        for (p, conf) in [(0.01, 0.95), (0.05, 0.9), (0.001, 0.99)] {
            let n = zero_defect_n(p, conf).unwrap();
            assert!(upper_bound(0, n, conf).unwrap() <= p);
            assert!(n == 1 || upper_bound(0, n - 1, conf).unwrap() > p);
        }
    }
}

//! The model's posterior by Gibbs sampling, for the identified case (known items of both
//! kinds): each sweep draws every item's class given the parameters, then every
//! parameter from its Beta given the classes (a rater's accuracy held better than
//! chance, `se + sp > 1`). Chains start from the posterior's mode (EM's fit), so a chain
//! starts where the labels are the right way round; each chain has its own generator,
//! seeded in turn from the options' seed, and runs on a core of its own.
//!
//! A sweep costs the number of patterns plus the items drawn into the rarer class: a
//! pattern's class count is binomial, drawn by geometric skips over its items.

use statrs::distribution::{Beta, ContinuousCDF};

use super::{Figure, Fit, PRIOR, Pattern, RaterQuality, empty_figure};
use crate::cores::on_cores;
use crate::rng::{SplitMix64, Xoshiro256};

/// Independent chains (each on a core when there are cores).
pub(super) const CHAINS: usize = 4;
/// Sweeps of each chain discarded before its draws are kept: the chains start at the
/// mode, so they only need to spread to the posterior's width.
pub(super) const BURN_IN: usize = 200;

/// One kept sweep.
pub(super) struct Draw {
    pub sensitivity: Vec<f64>,
    pub specificity: Vec<f64>,
    pub prevalence: Vec<f64>,
    /// The share of the retained items that the sweep drew defective.
    pub realised: Option<f64>,
    /// The retained items' mean probability of a defect given the sweep's parameters.
    pub expected: Option<f64>,
}

/// The kept draws of every chain, and each pattern's probability of a defect averaged
/// over them.
pub(super) struct Posterior {
    pub draws: Vec<Draw>,
    pub probability: Vec<f64>,
}

impl Posterior {
    /// Every rater's (with ratings) and group's (with items) figures from the draws,
    /// and the residual rate's (empty when nothing is retained).
    pub(super) fn figures(
        &self,
        raters: &mut [RaterQuality],
        prevalence: &mut [Figure],
        has_group: &[bool],
        seed: u64,
    ) -> Figure {
        let method = format!(
            "Bayesian posterior of the Dawid-Skene model anchored by known items (Beta(1/2, \
             1/2) priors, raters better than chance), by Gibbs sampling: posterior mean, 95% \
             credible interval ({} draws of {CHAINS} chains, seed {seed})",
            self.draws.len(),
        );
        let figure = |xs: Vec<f64>, method: &str| {
            let (estimate, ci95) = summary(xs);
            Figure {
                estimate,
                ci95,
                bounds: None,
                method: method.to_string(),
            }
        };
        for (r, rq) in raters.iter_mut().enumerate() {
            if rq.ratings > 0 {
                rq.sensitivity = figure(
                    self.draws.iter().map(|d| d.sensitivity[r]).collect(),
                    &method,
                );
                rq.specificity = figure(
                    self.draws.iter().map(|d| d.specificity[r]).collect(),
                    &method,
                );
            }
        }
        for (g, pf) in prevalence.iter_mut().enumerate() {
            if has_group[g] {
                *pf = figure(
                    self.draws.iter().map(|d| d.prevalence[g]).collect(),
                    &method,
                );
            }
        }
        let (_, ci95) = summary(self.draws.iter().filter_map(|d| d.realised).collect());
        let (estimate, _) = summary(self.draws.iter().filter_map(|d| d.expected).collect());
        if estimate.is_none() {
            return empty_figure();
        }
        Figure {
            estimate,
            ci95,
            bounds: None,
            method: format!(
                "{method}; the estimate is the retained items' mean probability of a defect, \
                 the interval that of the share of them defective"
            ),
        }
    }
}

/// The mean of draws and their 95% credible interval ([`credible`]).
fn summary(mut xs: Vec<f64>) -> (Option<f64>, Option<[f64; 2]>) {
    xs.sort_by(f64::total_cmp);
    let mean = (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64);
    (mean, credible(&xs))
}

/// `draws` kept sweeps in all (spread over [`CHAINS`] chains, after [`BURN_IN`] each).
pub(super) fn sample(
    patterns: &[Pattern],
    weights: &[f64],
    (n_raters, n_groups): (usize, usize),
    mode: &Fit,
    draws: usize,
    seed: u64,
) -> Posterior {
    let mut seeds = SplitMix64::new(seed);
    let seeds: Vec<u64> = (0..CHAINS).map(|_| seeds.next_u64()).collect();
    let per_chain = draws.div_ceil(CHAINS);
    let chains = on_cores(&seeds, |&seed| {
        let mut chain = Chain {
            rng: Xoshiro256::seed_from_u64(seed),
            se: mode.sensitivity.clone(),
            sp: mode.specificity.clone(),
            pi: mode.prevalence.clone(),
            q: vec![0.0; patterns.len()],
            probability: vec![0.0; patterns.len()],
        };
        let mut kept = Vec::with_capacity(per_chain);
        for sweep in 0..BURN_IN + per_chain {
            let draw = chain.sweep(patterns, weights, (n_raters, n_groups), sweep >= BURN_IN);
            if sweep >= BURN_IN {
                kept.push(draw);
            }
        }
        (kept, chain.probability)
    });
    let mut probability = vec![0.0; patterns.len()];
    let mut all = Vec::with_capacity(per_chain * CHAINS);
    for (kept, sums) in chains {
        for (p, s) in probability.iter_mut().zip(sums) {
            *p += s;
        }
        all.extend(kept);
    }
    let n = all.len().max(1) as f64;
    probability.iter_mut().for_each(|p| *p /= n);
    Posterior {
        draws: all,
        probability,
    }
}

struct Chain {
    rng: Xoshiro256,
    se: Vec<f64>,
    sp: Vec<f64>,
    pi: Vec<f64>,
    /// Each pattern's probability of a defect given the current parameters.
    q: Vec<f64>,
    /// Sums of `q` over the kept sweeps.
    probability: Vec<f64>,
}

impl Chain {
    /// Draws the classes, then the parameters; gives the sweep's parameters (the ones it
    /// started from, which the classes were drawn under) and retained shares.
    fn sweep(
        &mut self,
        patterns: &[Pattern],
        weights: &[f64],
        (n_raters, n_groups): (usize, usize),
        keep: bool,
    ) -> Draw {
        super::e_step(
            patterns,
            weights,
            &self.se,
            &self.sp,
            &self.pi,
            &mut self.q,
            false,
        );
        let mut caught = vec![0.0; n_raters];
        let mut missed = vec![0.0; n_raters];
        let mut passed = vec![0.0; n_raters];
        let mut flagged = vec![0.0; n_raters];
        let mut group_defects = vec![0.0; n_groups];
        let mut group_items = vec![0.0; n_groups];
        let (mut kept_defects, mut kept_expected, mut kept) = (0.0, 0.0, 0.0);
        for ((p, &w), &q) in patterns.iter().zip(weights).zip(&self.q) {
            if w == 0.0 {
                continue;
            }
            let defects = binomial(&mut self.rng, w as u64, q) as f64;
            let sound = w - defects;
            for &(r, rejected) in &p.ratings {
                if rejected {
                    caught[r] += defects;
                    flagged[r] += sound;
                } else {
                    missed[r] += defects;
                    passed[r] += sound;
                }
            }
            if p.known.is_none() {
                group_defects[p.group] += defects;
                group_items[p.group] += w;
            }
            if p.retained {
                kept_defects += defects;
                kept_expected += w * q;
                kept += w;
            }
        }
        if keep {
            for (s, &q) in self.probability.iter_mut().zip(&self.q) {
                *s += q;
            }
        }
        let draw = Draw {
            sensitivity: self.se.clone(),
            specificity: self.sp.clone(),
            prevalence: self.pi.clone(),
            realised: (kept > 0.0).then(|| kept_defects / kept),
            expected: (kept > 0.0).then(|| kept_expected / kept),
        };
        let rng = &mut self.rng;
        for (g, pi) in self.pi.iter_mut().enumerate() {
            let (d, n) = (group_defects[g], group_items[g]);
            *pi = beta(rng, PRIOR + d, PRIOR + n - d, 0.0);
        }
        for r in 0..n_raters {
            self.se[r] = beta(rng, PRIOR + caught[r], PRIOR + missed[r], 1.0 - self.sp[r]);
            self.sp[r] = beta(rng, PRIOR + passed[r], PRIOR + flagged[r], 1.0 - self.se[r]);
        }
        draw
    }
}

/// A Binomial(n, p) count, by geometric skips over the trials of the rarer outcome
/// (the work is the count of that outcome, not `n`).
fn binomial(rng: &mut Xoshiro256, n: u64, p: f64) -> u64 {
    if p <= 0.0 || n == 0 {
        return 0;
    }
    if p >= 1.0 {
        return n;
    }
    if p > 0.5 {
        return n - binomial(rng, n, 1.0 - p);
    }
    let log_q = (-p).ln_1p();
    let (mut k, mut at) = (0u64, 0u64);
    loop {
        // Trials up to and including the next success: 1 + Geometric(p) failures.
        let u = 1.0 - rng.next_f64();
        let skip = (u.ln() / log_q).floor();
        if !skip.is_finite() || skip >= (n - at) as f64 {
            return k;
        }
        at += skip as u64 + 1;
        k += 1;
        if at >= n {
            return k;
        }
    }
}

/// A standard normal draw (Box-Muller).
fn normal(rng: &mut Xoshiro256) -> f64 {
    let u = 1.0 - rng.next_f64();
    let v = rng.next_f64();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// A Gamma(shape, 1) draw (Marsaglia and Tsang 2000; below a shape of 1, boosted by
/// `U^(1/shape)`).
fn gamma(rng: &mut Xoshiro256, shape: f64) -> f64 {
    if shape < 1.0 {
        let u = 1.0 - rng.next_f64();
        return gamma(rng, shape + 1.0) * u.powf(1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = 1.0 - rng.next_f64();
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

/// A Beta(a, b) draw above `floor`: by rejection while the floor cuts little, else by
/// the inverse of the distribution function above it.
fn beta(rng: &mut Xoshiro256, a: f64, b: f64, floor: f64) -> f64 {
    for _ in 0..32 {
        let x = gamma(rng, a);
        let y = gamma(rng, b);
        let v = x / (x + y);
        if v > floor && v.is_finite() {
            return v;
        }
    }
    let u = rng.next_f64();
    match Beta::new(a, b) {
        Ok(dist) => {
            let at = dist.cdf(floor);
            let v = dist.inverse_cdf(at + u * (1.0 - at));
            if v > floor && v < 1.0 {
                v
            } else {
                floor + (1.0 - floor) * (0.5 + 0.5 * u)
            }
        }
        Err(_) => floor + (1.0 - floor) * u,
    }
}

/// The 95% credible interval of `xs` (sorted): the equal-tailed one, unless the
/// posterior piles against 0 or 1 (its shortest 95% window starts at the least draw or
/// ends at the greatest, within a window's width of the end), where it is the one-sided
/// 95% interval reaching that end: a rater who never erred, a task without defects.
pub(super) fn credible(xs: &[f64]) -> Option<[f64; 2]> {
    use super::quantile_sorted;
    let n = xs.len();
    if n == 0 {
        return None;
    }
    let m = ((0.95 * n as f64).ceil() as usize).clamp(1, n);
    let mut best = 0;
    for i in 1..=n - m {
        if xs[i + m - 1] - xs[i] < xs[best + m - 1] - xs[best] {
            best = i;
        }
    }
    let width = xs[best + m - 1] - xs[best];
    if best == 0 && xs[0] <= width {
        return quantile_sorted(xs, 0.95).map(|hi| [0.0, hi]);
    }
    if best == n - m && 1.0 - xs[n - 1] <= width {
        return quantile_sorted(xs, 0.05).map(|lo| [lo, 1.0]);
    }
    quantile_sorted(xs, 0.025)
        .zip(quantile_sorted(xs, 0.975))
        .map(|(a, b)| [a, b])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_draws_have_their_distributions_moments() {
        let mut rng = Xoshiro256::seed_from_u64(5);
        let n = 40_000;
        for (a, b) in [(0.5, 0.5), (3.0, 7.0), (200.5, 2.5)] {
            let xs: Vec<f64> = (0..n).map(|_| beta(&mut rng, a, b, 0.0)).collect();
            let mean = xs.iter().sum::<f64>() / n as f64;
            let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
            let (m, v) = (a / (a + b), a * b / ((a + b).powi(2) * (a + b + 1.0)));
            assert!(
                (mean - m).abs() < 4.0 * (v / n as f64).sqrt(),
                "{a},{b}: {mean}"
            );
            assert!((var / v - 1.0).abs() < 0.05, "{a},{b}: {var} for {v}");
        }
        for (trials, p) in [(1_000u64, 0.003), (50, 0.5), (80, 0.97), (7, 0.2)] {
            let ks: Vec<f64> = (0..n)
                .map(|_| binomial(&mut rng, trials, p) as f64)
                .collect();
            let mean = ks.iter().sum::<f64>() / n as f64;
            let var = ks.iter().map(|k| (k - mean).powi(2)).sum::<f64>() / n as f64;
            let (m, v) = (trials as f64 * p, trials as f64 * p * (1.0 - p));
            assert!(
                (mean - m).abs() < 4.0 * (v / n as f64).sqrt(),
                "{trials},{p}: {mean}"
            );
            assert!((var / v - 1.0).abs() < 0.05, "{trials},{p}: {var} for {v}");
            assert!(ks.iter().all(|&k| k <= trials as f64));
        }
        // Above a floor: every draw above it.
        assert!((0..1_000).all(|_| beta(&mut rng, 2.0, 30.0, 0.4) > 0.4));
    }

    #[test]
    fn a_posterior_against_an_end_gets_the_interval_that_reaches_it() {
        let mut rng = Xoshiro256::seed_from_u64(9);
        let mut near_one: Vec<f64> = (0..2_000)
            .map(|_| beta(&mut rng, 150.5, 0.5, 0.0))
            .collect();
        near_one.sort_by(f64::total_cmp);
        let [lo, hi] = credible(&near_one).unwrap();
        assert_eq!(hi, 1.0);
        assert!(lo > 0.97 && lo < 0.999, "{lo}");
        let mut middle: Vec<f64> = (0..2_000)
            .map(|_| beta(&mut rng, 40.0, 10.0, 0.0))
            .collect();
        middle.sort_by(f64::total_cmp);
        let [lo, hi] = credible(&middle).unwrap();
        // Beta(40, 10)'s 2.5% and 97.5% quantiles, scipy.stats.beta.ppf([0.025, 0.975],
        // 40, 10): 0.679779 and 0.897551.
        assert!(
            (lo - 0.679_779).abs() < 0.01 && (hi - 0.897_551).abs() < 0.01,
            "{lo} {hi}"
        );
        let mut zero: Vec<f64> = vec![0.0; 1_900];
        zero.extend((0..100).map(|k| f64::from(k) / 1_000.0));
        let [lo, _] = credible(&zero).unwrap();
        assert_eq!(lo, 0.0);
    }
}

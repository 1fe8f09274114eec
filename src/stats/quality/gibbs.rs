//! The model's posterior by Markov chain Monte Carlo, for the identified case (known
//! items of both kinds). Each sweep first moves the sensitivity and specificity of every
//! rater who rated no known item (the author) by a few random-walk Metropolis steps with
//! the items' classes summed out (their steps tuned during the burn-in), then draws every item's class given the
//! parameters and every parameter from its Beta given the classes (Gibbs), a rater's
//! accuracy held better than chance (`se + sp > 1`). The Metropolis steps are what let
//! a weakly identified rater (the author, seen on splits alone) move: given drawn classes
//! alone its accuracy hardly moves between sweeps, and four chains of 500 draws
//! disagreed (split R-hat up to 1.11; with the steps and 2,000 draws a chain, 1.004-1.017
//! at the paper's size). Chains start from the posterior's mode (EM's fit),
//! so a chain starts where the labels are the right way round; each chain has its own
//! generator, seeded in turn from the options' seed, and runs on a core of its own. The
//! figures' method gives the largest split R-hat, and says so when it is above 1.01.
//!
//! A Gibbs sweep costs the number of patterns plus the items drawn into the rarer class:
//! a pattern's class count is binomial, drawn by geometric skips over its items.

use statrs::distribution::{Beta, ContinuousCDF};

use super::{Figure, Fit, PRIOR, Pattern, RaterQuality, empty_figure, tally};
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
        let per_rater = |r: usize| {
            [
                self.draws
                    .iter()
                    .map(|d| d.sensitivity[r])
                    .collect::<Vec<f64>>(),
                self.draws.iter().map(|d| d.specificity[r]).collect(),
            ]
        };
        let mut series: Vec<Vec<f64>> = Vec::new();
        for (r, rq) in raters.iter().enumerate() {
            if rq.ratings > 0 {
                series.extend(per_rater(r));
            }
        }
        for (g, &has) in has_group.iter().enumerate() {
            if has {
                series.push(self.draws.iter().map(|d| d.prevalence[g]).collect());
            }
        }
        series.push(self.draws.iter().filter_map(|d| d.realised).collect());
        let r_hat = series
            .iter()
            .filter_map(|xs| split_r_hat(xs, CHAINS))
            .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))));
        let mixing = match r_hat {
            Some(r) if r > R_HAT_LIMIT => format!(
                "; the chains disagree (largest split R-hat {r:.3}, above {R_HAT_LIMIT}): \
                 read these figures with care"
            ),
            Some(r) => format!("; largest split R-hat {r:.3}"),
            None => String::new(),
        };
        let method = format!(
            "Bayesian posterior of the Dawid-Skene model anchored by known items (Beta(1/2, \
             1/2) priors, raters better than chance), by Gibbs sampling with Metropolis \
             steps: posterior mean, 95% credible interval ({} draws of {CHAINS} chains, \
             seed {seed}{mixing})",
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
                let [se, sp] = per_rater(r);
                rq.sensitivity = figure(se, &method);
                rq.specificity = figure(sp, &method);
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

/// Above this split R-hat the chains have not mixed (Vehtari, Gelman, Simpson, Carpenter
/// and Bürkner 2021 recommend 1.01).
pub(super) const R_HAT_LIMIT: f64 = 1.01;

/// The split R-hat of draws laid out chain after chain, `chains` chains of equal length
/// (Gelman et al., *Bayesian Data Analysis*, 3rd ed., 11.4): each chain cut in halves, the
/// between- and within-sequence variances compared. `None` for fewer than two draws a
/// half-chain or draws that do not vary.
pub(super) fn split_r_hat(xs: &[f64], chains: usize) -> Option<f64> {
    let per = xs.len().checked_div(chains)?;
    let n = per / 2;
    if n < 2 || per * chains != xs.len() {
        return None;
    }
    let halves: Vec<&[f64]> = xs
        .chunks_exact(per)
        .flat_map(|c| [&c[..n], &c[per - n..]])
        .collect();
    let m = halves.len() as f64;
    let nf = n as f64;
    let means: Vec<f64> = halves.iter().map(|h| h.iter().sum::<f64>() / nf).collect();
    let grand = means.iter().sum::<f64>() / m;
    let b = nf / (m - 1.0) * means.iter().map(|x| (x - grand).powi(2)).sum::<f64>();
    let w = halves
        .iter()
        .zip(&means)
        .map(|(h, mean)| h.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (nf - 1.0))
        .sum::<f64>()
        / m;
    if w <= 0.0 {
        return None;
    }
    let var_plus = (nf - 1.0) / nf * w + b / nf;
    Some((var_plus / w).sqrt())
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
    // The patterns each rater rated (with weight), for the Metropolis steps of the raters
    // who rated no known item (the author): a known item's class is not drawn, so it
    // anchors its raters' draws; the others' accuracies are seen through drawn classes
    // alone and move slowly without the steps.
    let mut of_rater: Vec<Vec<usize>> = vec![Vec::new(); n_raters];
    let mut anchored = vec![false; n_raters];
    for (i, (p, &w)) in patterns.iter().zip(weights).enumerate() {
        if w > 0.0 {
            for &(r, _) in &p.ratings {
                of_rater[r].push(i);
                anchored[r] |= p.known.is_some();
            }
        }
    }
    for (mine, _) in of_rater.iter_mut().zip(&anchored).filter(|(_, a)| **a) {
        mine.clear();
    }
    let chains = on_cores(&seeds, |&seed| {
        let mut chain = Chain {
            rng: Xoshiro256::seed_from_u64(seed),
            se: mode.sensitivity.clone(),
            sp: mode.specificity.clone(),
            pi: mode.prevalence.clone(),
            q: vec![0.0; patterns.len()],
            probability: vec![0.0; patterns.len()],
            step: vec![STEP; n_raters],
            tried: vec![0; n_raters],
            taken: vec![0; n_raters],
        };
        let mut kept = Vec::with_capacity(per_chain);
        for sweep in 0..BURN_IN + per_chain {
            let draw = chain.sweep(
                patterns,
                weights,
                (n_raters, n_groups),
                sweep >= BURN_IN,
                &of_rater,
            );
            if sweep >= BURN_IN {
                kept.push(draw);
            } else if sweep % TUNE_EVERY == TUNE_EVERY - 1 {
                chain.tune();
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
    /// Each rater's Metropolis step (logit scale), tuned during the burn-in, and the
    /// steps proposed and accepted since it was last tuned.
    step: Vec<f64>,
    tried: Vec<u32>,
    taken: Vec<u32>,
}

impl Chain {
    /// [`STEPS`] random-walk Metropolis steps on rater `r`'s sensitivity and specificity
    /// together (on the logit scale, the prior's density and the step's Jacobian
    /// included), with every item's class summed out: the classes drawn next are then
    /// drawn from their conditional, so the sweep keeps the posterior. Drawing the
    /// accuracies only given drawn classes moves slowly where a rater is weakly
    /// identified (the author, seen on splits alone); these steps move along the ridge.
    fn metropolis(&mut self, patterns: &[Pattern], weights: &[f64], r: usize, mine: &[usize]) {
        let logit = |x: f64| (x / (1.0 - x)).ln();
        let expit = |y: f64| 1.0 / (1.0 + (-y).exp());
        let terms = self.terms(patterns, weights, r, mine);
        let target = |se: f64, sp: f64| {
            collapsed(&terms, se, sp)
                + PRIOR * (se.ln() + (1.0 - se).ln() + sp.ln() + (1.0 - sp).ln())
        };
        let mut at = target(self.se[r], self.sp[r]);
        let step = self.step[r];
        for _ in 0..STEPS {
            self.tried[r] += 1;
            let se = expit(logit(self.se[r]) + step * normal(&mut self.rng));
            let sp = expit(logit(self.sp[r]) + step * normal(&mut self.rng));
            if !(se > 0.0 && se < 1.0 && sp > 0.0 && sp < 1.0 && se + sp > 1.0) {
                continue;
            }
            let proposed = target(se, sp);
            if (1.0 - self.rng.next_f64()).ln() < proposed - at {
                (self.se[r], self.sp[r], at) = (se, sp, proposed);
                self.taken[r] += 1;
            }
        }
    }

    /// Rater `r`'s patterns as the collapsed likelihood needs them: the other raters'
    /// log-likelihood of each class with the class's prior (or the known class alone),
    /// whether `r` rejected, and the weight.
    fn terms(&self, patterns: &[Pattern], weights: &[f64], r: usize, mine: &[usize]) -> Vec<Term> {
        mine.iter()
            .map(|&i| {
                let p = &patterns[i];
                let (mut l1, mut l0) = match p.known {
                    Some(true) => (0.0, f64::NEG_INFINITY),
                    Some(false) => (f64::NEG_INFINITY, 0.0),
                    None => (self.pi[p.group].ln(), (1.0 - self.pi[p.group]).ln()),
                };
                let mut rejected = false;
                for &(j, rej) in &p.ratings {
                    if j == r {
                        rejected = rej;
                    } else if rej {
                        l1 += self.se[j].ln();
                        l0 += (1.0 - self.sp[j]).ln();
                    } else {
                        l1 += (1.0 - self.se[j]).ln();
                        l0 += self.sp[j].ln();
                    }
                }
                Term {
                    defect: l1,
                    sound: l0,
                    rejected,
                    weight: weights[i],
                }
            })
            .collect()
    }

    /// During the burn-in: each rater's step grows when most of its proposals were
    /// taken and shrinks when few were (towards about a third taken, a random walk's
    /// best in two dimensions); fixed afterwards, so the kept draws are a Markov chain's.
    fn tune(&mut self) {
        for ((step, tried), taken) in self
            .step
            .iter_mut()
            .zip(&mut self.tried)
            .zip(&mut self.taken)
        {
            if *tried > 0 {
                let rate = f64::from(*taken) / f64::from(*tried);
                if rate > 0.45 {
                    *step *= 1.5;
                } else if rate < 0.2 {
                    *step /= 1.5;
                }
            }
            (*tried, *taken) = (0, 0);
        }
    }

    /// Draws the classes, then the parameters; gives the sweep's parameters (the ones it
    /// started from, which the classes were drawn under) and retained shares.
    fn sweep(
        &mut self,
        patterns: &[Pattern],
        weights: &[f64],
        (n_raters, n_groups): (usize, usize),
        keep: bool,
        of_rater: &[Vec<usize>],
    ) -> Draw {
        for (r, mine) in of_rater.iter().enumerate() {
            if !mine.is_empty() {
                self.metropolis(patterns, weights, r, mine);
            }
        }
        super::e_step(
            patterns,
            weights,
            &self.se,
            &self.sp,
            &self.pi,
            &mut self.q,
            false,
        );
        let drawn: Vec<f64> = weights
            .iter()
            .zip(&self.q)
            .map(|(&w, &q)| {
                if w == 0.0 {
                    0.0
                } else {
                    binomial(&mut self.rng, w as u64, q) as f64
                }
            })
            .collect();
        let t = tally(patterns, weights, &drawn, (n_raters, n_groups));
        let (mut kept_defects, mut kept_expected, mut kept) = (0.0, 0.0, 0.0);
        for (((p, &w), &q), &d) in patterns.iter().zip(weights).zip(&self.q).zip(&drawn) {
            if p.retained {
                kept_defects += d;
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
            let (d, n) = (t.group_defects[g], t.group_items[g]);
            *pi = beta(rng, PRIOR + d, PRIOR + n - d, 0.0);
        }
        for r in 0..n_raters {
            self.se[r] = beta(
                rng,
                PRIOR + t.caught[r],
                PRIOR + t.missed[r],
                1.0 - self.sp[r],
            );
            self.sp[r] = beta(
                rng,
                PRIOR + t.passed[r],
                PRIOR + t.flagged[r],
                1.0 - self.se[r],
            );
        }
        draw
    }
}

/// Metropolis steps per rater and sweep, and their size on the logit scale.
const STEPS: usize = 4;
const STEP: f64 = 0.25;
/// Sweeps between two tunings of the steps during the burn-in.
const TUNE_EVERY: usize = 20;

/// One pattern a rater rated, with the rest of the model fixed (see [`Chain::terms`]).
struct Term {
    defect: f64,
    sound: f64,
    rejected: bool,
    weight: f64,
}

/// The log-likelihood of a rater's patterns with its sensitivity and specificity at `se`
/// and `sp`, every unknown item's class summed out (a known item's is its class's).
fn collapsed(terms: &[Term], se: f64, sp: f64) -> f64 {
    let (l_se, l_miss, l_sp, l_false) = (se.ln(), (1.0 - se).ln(), sp.ln(), (1.0 - sp).ln());
    terms
        .iter()
        .map(|t| {
            let (a, b) = if t.rejected {
                (t.defect + l_se, t.sound + l_false)
            } else {
                (t.defect + l_miss, t.sound + l_sp)
            };
            let m = a.max(b);
            t.weight * (m + ((a - m).exp() + (b - m).exp()).ln())
        })
        .sum()
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

    /// Against ArviZ 0.23.4, `arviz.rhat(xs, method="split")` on the same draws (4 chains
    /// of 10: `sin(1.3 i + c) + 0.1 c`, and `+ c` for chains that disagree).
    #[test]
    fn split_r_hat_is_arviz_s() {
        let draws = |shift: f64| -> Vec<f64> {
            (0..4)
                .flat_map(|c| {
                    (0..10).map(move |i| {
                        (1.3 * f64::from(i) + f64::from(c)).sin() + shift * f64::from(c)
                    })
                })
                .collect()
        };
        let mixed = split_r_hat(&draws(0.1), 4).unwrap();
        assert!((mixed - 0.910_563_003_584_282_4).abs() < 1e-12, "{mixed}");
        let apart = split_r_hat(&draws(1.0), 4).unwrap();
        assert!((apart - 1.776_463_094_788_225_2).abs() < 1e-12, "{apart}");
        assert_eq!(split_r_hat(&[0.5; 40], 4), None);
        assert_eq!(split_r_hat(&[0.1, 0.2, 0.3], 4), None);
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

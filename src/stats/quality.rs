//! How good the review is: each rater's sensitivity (the share of defective items they
//! reject) and specificity (the share of sound items they pass), the prevalence of
//! defects per task, each item's probability of being defective, and the **residual
//! defect rate** of the retained set: the expected share of kept items that are
//! defective.
//!
//! # The model
//!
//! A latent-class model (Dawid & Skene 1979) for two classes: an item is defective
//! (`z = 1`) with the prevalence of its group (a task); rater `j` rejects a defective item
//! with probability `se_j` and passes a sound one with probability `sp_j`, independently
//! of the other raters given `z`. The author who resolves a disagreement is one more
//! rater with an accuracy of its own, not the truth. Known items (planted items whose
//! truth the lab knows) have `z` fixed: they anchor the raters' accuracies and are left
//! out of the prevalence (their mix of defects is chosen by the lab, not found).
//!
//! [`fit`] finds the maximum of the posterior with a Beta(1/2, 1/2) prior on every
//! probability (Jeffreys'), by expectation-maximisation: the E step gives each item's
//! probability of a defect, the M step the weighted shares. The prior keeps an estimate
//! off 0 and 1 when a rater never erred; its pull is half an item.
//!
//! # Identification
//!
//! With two ratings an item and no known item the model is not identified: a
//! prevalence and accuracies that explain the pairs' agreement can be traded against
//! each other. [`estimate`] then gives no number for a figure but the least and the
//! most it takes over the simultaneous 95% likelihood-ratio region of all the model's
//! parameters: fits with one parameter held at each point of a grid, kept when their
//! log-likelihood is within half the 95% chi-square quantile with as many degrees of
//! freedom as parameters of the best and every rater is better than chance (`se + sp >
//! 1`); the residual rate's are each such fit's expected share of defective retained
//! items widened by 1.96 standard deviations of the share realised.
//!
//! With known items of both kinds the figures are estimated from the model's posterior
//! under the same priors, raters held better than chance, drawn by Gibbs sampling with
//! Metropolis steps on each rater's accuracy ([`gibbs`]): each figure's posterior mean with its 95% credible interval (equal-tailed,
//! or one-sided where the posterior piles against 0 or 1: a rater who never erred, a
//! task without defects). The residual rate's estimate is the retained items' mean
//! probability of a defect, its interval that of the share of them actually defective,
//! drawn with the classes. A percentile bootstrap of the fit, used before, collapsed
//! where a rater made no error of one kind (every resample holds none either) and missed
//! the author's weakly identified accuracy; the posterior has neither fault.
//!
//! [`known_item_rates`] is the simpler, model-free figure on known items alone: the
//! catch rate and the pass rate with Wilson intervals, over the whole campaign and
//! over the last K known defects, and whether the recent catch rate is surely below a
//! threshold (its interval's upper end under it).
//!
//! [`simulate`] makes reviews with known truth, for the tests and the benchmark.

use serde::Serialize;

use super::StatsError;
use super::binomial::wilson;
use super::bootstrap::quantile_sorted;
use crate::cores::on_cores;

/// One item of the review: the ratings it received and what is known of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// The group whose prevalence it shares (a task), below `n_groups`.
    pub group: usize,
    /// `(rater, rejected)`: each rater at most once.
    pub ratings: Vec<(usize, bool)>,
    /// `Some(true)` for a known defect, `Some(false)` for a known sound item.
    pub known: Option<bool>,
    /// In the retained set (never a known item).
    pub retained: bool,
}

/// The review to estimate: items, how many raters and groups their indexes run over.
#[derive(Debug, Clone, PartialEq)]
pub struct Review {
    pub n_raters: usize,
    pub n_groups: usize,
    pub items: Vec<Item>,
}

impl Review {
    /// Checks every index and that no rater rates an item twice; names the item.
    pub fn check(&self) -> Result<(), StatsError> {
        for (i, item) in self.items.iter().enumerate() {
            if item.group >= self.n_groups {
                return Err(StatsError::InvalidValue {
                    value: item.group.to_string(),
                    at: format!("item {i}: group (of {})", self.n_groups),
                });
            }
            if item.known.is_some() && item.retained {
                return Err(StatsError::InvalidValue {
                    value: "retained".into(),
                    at: format!("item {i}: a known item is never retained"),
                });
            }
            for (n, &(r, _)) in item.ratings.iter().enumerate() {
                if r >= self.n_raters {
                    return Err(StatsError::InvalidValue {
                        value: r.to_string(),
                        at: format!("item {i}: rater (of {})", self.n_raters),
                    });
                }
                if item.ratings[..n].iter().any(|&(o, _)| o == r) {
                    return Err(StatsError::InvalidValue {
                        value: r.to_string(),
                        at: format!("item {i}: rater rated it twice"),
                    });
                }
            }
        }
        Ok(())
    }
}

/// Items alike for the model (the same group, ratings, knowledge and retention) are
/// one pattern with a weight: the fit's cost is the number of patterns, not of items,
/// and a bootstrap resample is a new set of weights.
#[derive(Debug, Clone, PartialEq)]
struct Pattern {
    group: usize,
    ratings: Vec<(usize, bool)>,
    known: Option<bool>,
    retained: bool,
}

/// The distinct patterns of `items`, and each item's pattern.
fn compress(items: &[Item]) -> (Vec<Pattern>, Vec<usize>) {
    let mut index: std::collections::HashMap<Pattern, usize> = std::collections::HashMap::new();
    let mut patterns = Vec::new();
    let of_item = items
        .iter()
        .map(|it| {
            let mut ratings = it.ratings.clone();
            ratings.sort_unstable();
            let key = Pattern {
                group: it.group,
                ratings,
                known: it.known,
                retained: it.retained,
            };
            *index.entry(key.clone()).or_insert_with(|| {
                patterns.push(key);
                patterns.len() - 1
            })
        })
        .collect();
    (patterns, of_item)
}

impl std::hash::Hash for Pattern {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        (self.group, &self.ratings, self.known, self.retained).hash(h);
    }
}
impl Eq for Pattern {}

/// A fitted model.
#[derive(Debug, Clone, PartialEq)]
struct Fit {
    sensitivity: Vec<f64>,
    specificity: Vec<f64>,
    prevalence: Vec<f64>,
    /// Each pattern's probability of a defect (a known one's is its truth, 0 or 1).
    posterior: Vec<f64>,
    /// The log-likelihood of the ratings (without the prior).
    log_likelihood: f64,
    converged: bool,
}

impl Fit {
    /// The share of defective retained items this fit expects, less and more 1.96
    /// standard deviations of the share realised (each retained item defective with its
    /// probability, independently), within [0, 1] (`None` when none is retained).
    fn realised(&self, patterns: &[Pattern], weights: &[f64]) -> Option<[f64; 2]> {
        let (mut mean, mut var, mut n) = (0.0, 0.0, 0.0);
        for ((p, &w), q) in patterns.iter().zip(weights).zip(&self.posterior) {
            if p.retained {
                mean += w * q;
                var += w * q * (1.0 - q);
                n += w;
            }
        }
        (n > 0.0).then(|| {
            let (m, sd) = (mean / n, var.sqrt() / n);
            [(m - 1.96 * sd).max(0.0), (m + 1.96 * sd).min(1.0)]
        })
    }
}

/// The Beta prior's pseudo-count on each side (Jeffreys').
const PRIOR: f64 = 0.5;
/// How far below the best log-likelihood the simultaneous 95% region of `k`
/// parameters reaches: half the 95% quantile of chi-square with `k` degrees of freedom
/// (Wilks; with fewer identified directions than parameters the region is wider than
/// needed, never narrower).
fn region_drop(k: usize) -> f64 {
    use statrs::distribution::{ChiSquared, ContinuousCDF};
    ChiSquared::new(k.max(1) as f64).map_or(1.920_729_410_347_062, |c| c.inverse_cdf(0.95) / 2.0)
}

/// How far below the region's edge (in log-likelihood) a profile walks before it
/// stops: two points this far out end a side.
const WALK_SLACK: f64 = 2.0;

/// When EM stops.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Steps {
    max_iterations: usize,
    tolerance: f64,
}

/// The best fit's: tight.
const FULL: Steps = Steps {
    max_iterations: 5_000,
    tolerance: 1e-8,
};
/// A bootstrap resample's or a profile point's, started from the best fit: a change
/// of 1e-5 in a probability moves no reported figure (they are given to three places,
/// and a resample's own noise is a hundred times larger).
const REFIT: Steps = Steps {
    max_iterations: 500,
    tolerance: 1e-5,
};

/// Fits the model by EM to the patterns with their weights, from `start` when given (a
/// warm start) or else from each pattern's share of rejections. `fixed_prevalence`
/// holds every group's prevalence at that value (for the profile).
/// One parameter held at a value while EM fits the others (a profile's point).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Hold {
    Nothing,
    /// One group's prevalence.
    Prevalence(usize, f64),
    Sensitivity(usize, f64),
    Specificity(usize, f64),
}

impl Hold {
    fn apply(self, se: &mut [f64], sp: &mut [f64], pi: &mut [f64]) {
        let (xs, i, v) = match self {
            Hold::Nothing => return,
            Hold::Prevalence(g, v) => (pi, g, v),
            Hold::Sensitivity(r, v) => (se, r, v),
            Hold::Specificity(r, v) => (sp, r, v),
        };
        if let Some(x) = xs.get_mut(i) {
            *x = v;
        }
    }
}

fn fit(
    patterns: &[Pattern],
    weights: &[f64],
    (n_raters, n_groups): (usize, usize),
    start: Option<&Fit>,
    hold: Hold,
    steps: Steps,
) -> Fit {
    let mut q: Vec<f64> = patterns
        .iter()
        .map(|it| match it.known {
            Some(z) => f64::from(u8::from(z)),
            None if it.ratings.is_empty() => 0.5,
            None => it.ratings.iter().filter(|r| r.1).count() as f64 / it.ratings.len() as f64,
        })
        .collect();
    let (mut se, mut sp, mut pi) = match start {
        Some(s) => (
            s.sensitivity.clone(),
            s.specificity.clone(),
            s.prevalence.clone(),
        ),
        None => m_step(patterns, weights, &q, n_raters, n_groups),
    };
    hold.apply(&mut se, &mut sp, &mut pi);
    let mut converged = false;
    e_step(patterns, weights, &se, &sp, &pi, &mut q, false);
    for _ in 0..steps.max_iterations {
        let (mut nse, mut nsp, mut npi) = m_step(patterns, weights, &q, n_raters, n_groups);
        hold.apply(&mut nse, &mut nsp, &mut npi);
        let change = max_change(&se, &nse)
            .max(max_change(&sp, &nsp))
            .max(max_change(&pi, &npi));
        (se, sp, pi) = (nse, nsp, npi);
        e_step(patterns, weights, &se, &sp, &pi, &mut q, false);
        if change < steps.tolerance {
            converged = true;
            break;
        }
    }
    let log_likelihood = e_step(patterns, weights, &se, &sp, &pi, &mut q, true);
    Fit {
        sensitivity: se,
        specificity: sp,
        prevalence: pi,
        posterior: q,
        log_likelihood,
        converged,
    }
}

fn max_change(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// What the M step and a Gibbs sweep both count, each pattern with `defects[i]` of its
/// `weights[i]` items defective (expected or drawn): per rater the defective items
/// caught and missed and the sound ones passed and flagged; per group its defects and
/// items (known items left out: their mix is the lab's).
struct Tally {
    caught: Vec<f64>,
    missed: Vec<f64>,
    passed: Vec<f64>,
    flagged: Vec<f64>,
    group_defects: Vec<f64>,
    group_items: Vec<f64>,
}

fn tally(
    patterns: &[Pattern],
    weights: &[f64],
    defects: &[f64],
    (n_raters, n_groups): (usize, usize),
) -> Tally {
    let mut t = Tally {
        caught: vec![0.0; n_raters],
        missed: vec![0.0; n_raters],
        passed: vec![0.0; n_raters],
        flagged: vec![0.0; n_raters],
        group_defects: vec![0.0; n_groups],
        group_items: vec![0.0; n_groups],
    };
    for ((it, &w), &d) in patterns.iter().zip(weights).zip(defects) {
        if w == 0.0 {
            continue;
        }
        let g = w - d;
        for &(r, rejected) in &it.ratings {
            if rejected {
                t.caught[r] += d;
                t.flagged[r] += g;
            } else {
                t.missed[r] += d;
                t.passed[r] += g;
            }
        }
        if it.known.is_none() {
            t.group_defects[it.group] += d;
            t.group_items[it.group] += w;
        }
    }
    t
}

/// The weighted shares, each with the prior's half item on either side.
fn m_step(
    patterns: &[Pattern],
    weights: &[f64],
    q: &[f64],
    n_raters: usize,
    n_groups: usize,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let expected: Vec<f64> = weights.iter().zip(q).map(|(w, q)| w * q).collect();
    let t = tally(patterns, weights, &expected, (n_raters, n_groups));
    let shares = |k: &[f64], other: &[f64]| -> Vec<f64> {
        k.iter()
            .zip(other)
            .map(|(&k, &o)| (k + PRIOR) / (k + o + 2.0 * PRIOR))
            .collect()
    };
    let sound: Vec<f64> = (t.group_items.iter().zip(&t.group_defects))
        .map(|(n, d)| n - d)
        .collect();
    (
        shares(&t.caught, &t.missed),
        shares(&t.passed, &t.flagged),
        shares(&t.group_defects, &sound),
    )
}

/// Each pattern's probability of a defect given the parameters; with `likelihood`, also
/// the log-likelihood (known items count their ratings given their truth), else 0.
fn e_step(
    patterns: &[Pattern],
    weights: &[f64],
    se: &[f64],
    sp: &[f64],
    pi: &[f64],
    q: &mut [f64],
    likelihood: bool,
) -> f64 {
    let (l_se, l_miss): (Vec<f64>, Vec<f64>) = se.iter().map(|s| (s.ln(), (1.0 - s).ln())).unzip();
    let (l_sp, l_false): (Vec<f64>, Vec<f64>) = sp.iter().map(|s| (s.ln(), (1.0 - s).ln())).unzip();
    let logit: Vec<f64> = pi.iter().map(|p| (p / (1.0 - p)).ln()).collect();
    let mut ll = 0.0;
    for ((it, &w), qi) in patterns.iter().zip(weights).zip(q.iter_mut()) {
        let (mut l1, mut l0) = (0.0, 0.0);
        for &(r, rejected) in &it.ratings {
            if rejected {
                l1 += l_se[r];
                l0 += l_false[r];
            } else {
                l1 += l_miss[r];
                l0 += l_sp[r];
            }
        }
        match it.known {
            Some(true) => {
                *qi = 1.0;
                ll += w * l1;
            }
            Some(false) => {
                *qi = 0.0;
                ll += w * l0;
            }
            None => {
                *qi = 1.0 / (1.0 + (l0 - l1 - logit[it.group]).exp());
                if likelihood && w > 0.0 {
                    let p = pi[it.group];
                    let a = p.ln() + l1;
                    let b = (1.0 - p).ln() + l0;
                    let m = a.max(b);
                    ll += w * (m + ((a - m).exp() + (b - m).exp()).ln());
                }
            }
        }
    }
    ll
}

/// One figure: an estimate with its 95% interval when the data identify it, else the
/// range the data allow.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure {
    pub estimate: Option<f64>,
    pub ci95: Option<[f64; 2]>,
    /// When not identified: the least and the most the data allow.
    pub bounds: Option<[f64; 2]>,
    pub method: String,
}

/// A rater's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RaterQuality {
    pub sensitivity: Figure,
    pub specificity: Figure,
    /// Ratings given, and of them on known defects and on known sound items.
    pub ratings: usize,
    pub known_defects: usize,
    pub known_sound: usize,
}

/// Everything [`estimate`] finds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Quality {
    pub identified: bool,
    /// Why not, when not.
    pub reason: Option<String>,
    pub raters: Vec<RaterQuality>,
    pub prevalence: Vec<Figure>,
    pub residual_defect_rate: Figure,
    /// Each item's probability of a defect under the best fit (a known item's is its
    /// truth).
    pub posterior: Vec<f64>,
    pub items: usize,
    pub retained: usize,
    pub known_defects: usize,
    pub known_sound: usize,
    pub converged: bool,
}

/// How [`estimate`] works.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Posterior draws kept (over every chain).
    pub draws: usize,
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            draws: 8_000,
            seed: 20_261_203,
        }
    }
}

/// Estimates the review's quality (see the module's documentation for the model, the
/// identification rule and the intervals).
pub fn estimate(review: &Review, options: Options) -> Result<Quality, StatsError> {
    review.check()?;
    let items = &review.items;
    let dims = (review.n_raters, review.n_groups);
    let (patterns, of_item) = compress(items);
    let mut weights = vec![0.0; patterns.len()];
    for &p in &of_item {
        weights[p] += 1.0;
    }
    let best = fit(&patterns, &weights, dims, None, Hold::Nothing, FULL);
    let known_defects = items.iter().filter(|i| i.known == Some(true)).count();
    let known_sound = items.iter().filter(|i| i.known == Some(false)).count();
    let retained = items.iter().filter(|i| i.retained).count();
    let mut raters: Vec<RaterQuality> = (0..review.n_raters)
        .map(|_| RaterQuality {
            sensitivity: empty_figure(),
            specificity: empty_figure(),
            ratings: 0,
            known_defects: 0,
            known_sound: 0,
        })
        .collect();
    for it in items {
        for &(r, _) in &it.ratings {
            let rq = &mut raters[r];
            rq.ratings += 1;
            match it.known {
                Some(true) => rq.known_defects += 1,
                Some(false) => rq.known_sound += 1,
                None => {}
            }
        }
    }
    let identified = known_defects > 0 && known_sound > 0;
    let reason = (!identified).then(|| {
        if items.is_empty() {
            "no items".to_string()
        } else {
            "not identified: without known items of both kinds (defects and sound items) \
             the raters' accuracies and the prevalence can be traded against each other; \
             the bounds are the least and the most over the simultaneous 95% \
             likelihood-ratio region of all parameters, raters assumed better than \
             chance"
                .to_string()
        }
    });
    let has_group: Vec<bool> = (0..review.n_groups)
        .map(|g| items.iter().any(|i| i.group == g && i.known.is_none()))
        .collect();
    let mut prevalence: Vec<Figure> = (0..review.n_groups).map(|_| empty_figure()).collect();
    let mut residual_defect_rate = empty_figure();
    let mut posterior: Vec<f64> = of_item.iter().map(|&p| best.posterior[p]).collect();
    if items.is_empty() {
        // Nothing to say: every figure stays empty.
    } else if identified {
        let post = gibbs::sample(
            &patterns,
            &weights,
            dims,
            &best,
            options.draws,
            options.seed,
        );
        residual_defect_rate = post.figures(&mut raters, &mut prevalence, &has_group, options.seed);
        posterior = of_item.iter().map(|&p| post.probability[p]).collect();
    } else {
        let (region, level) = profile(&patterns, &weights, &best, dims);
        let method = format!(
            "not identified: the least and the most over the simultaneous 95% \
             likelihood-ratio region of all {level} parameters (raters better than chance)"
        );
        let range = |f: &dyn Fn(&Fit) -> Option<[f64; 2]>, method: &str| -> Figure {
            let vals: Vec<[f64; 2]> = region.iter().filter_map(f).collect();
            let lo = vals.iter().map(|v| v[0]).reduce(f64::min);
            let hi = vals.iter().map(|v| v[1]).reduce(f64::max);
            Figure {
                estimate: None,
                ci95: None,
                bounds: lo.zip(hi).map(|(a, b)| [a, b]),
                method: method.to_string(),
            }
        };
        for (r, rq) in raters.iter_mut().enumerate() {
            if rq.ratings > 0 {
                rq.sensitivity = range(&|f| Some([f.sensitivity[r]; 2]), &method);
                rq.specificity = range(&|f| Some([f.specificity[r]; 2]), &method);
            }
        }
        for (g, pf) in prevalence.iter_mut().enumerate() {
            if has_group[g] {
                *pf = range(&|f| Some([f.prevalence[g]; 2]), &method);
            }
        }
        if retained > 0 {
            residual_defect_rate = range(
                &|f| f.realised(&patterns, &weights),
                &format!(
                    "{method}; each fit's expected share of defective retained items \
                     widened by the spread of the share realised (1.96 standard deviations)"
                ),
            );
        }
    }
    Ok(Quality {
        identified,
        reason,
        raters,
        prevalence,
        residual_defect_rate,
        posterior,
        items: items.len(),
        retained,
        known_defects,
        known_sound,
        converged: best.converged,
    })
}

fn empty_figure() -> Figure {
    Figure {
        estimate: None,
        ci95: None,
        bounds: None,
        method: "no data".into(),
    }
}

/// The fits in the simultaneous 95% likelihood-ratio region, every rater better than
/// chance, and how many parameters it spans: for each parameter (every active rater's
/// sensitivity and specificity, every group's prevalence) the parameter is held at each
/// point of a grid (steps of 1/40, finer within 0.025 of 0 and 1) and EM fits the rest;
/// a fit is in the region when its log-likelihood is within half the 95% chi-square
/// quantile with as many degrees of freedom as parameters of the best. The range of a
/// parameter over the region is then the region's shadow on it (its profile's level set)
/// to within a grid step; the range of a derived figure (the residual defect rate) is
/// the range over these fits, which the region's own range can only exceed. A profile is walked outward from the
/// best fit's value, each point started from its neighbour, and a side stops after two
/// points more than [`WALK_SLACK`] below the region's edge. Empty when no fit has every
/// rater better than chance (then no figure has bounds).
fn profile(
    patterns: &[Pattern],
    weights: &[f64],
    best: &Fit,
    dims: (usize, usize),
) -> (Vec<Fit>, usize) {
    let mut active = vec![false; dims.0];
    let mut has_group = vec![false; dims.1];
    for (p, &w) in patterns.iter().zip(weights) {
        if w > 0.0 {
            for &(r, _) in &p.ratings {
                active[r] = true;
            }
            if p.known.is_none() {
                has_group[p.group] = true;
            }
        }
    }
    #[derive(Clone, Copy)]
    enum Param {
        Prevalence(usize),
        Sensitivity(usize),
        Specificity(usize),
    }
    let mut params = Vec::new();
    for r in (0..dims.0).filter(|&r| active[r]) {
        params.extend([Param::Sensitivity(r), Param::Specificity(r)]);
    }
    params.extend((0..dims.1).filter(|&g| has_group[g]).map(Param::Prevalence));
    let drop = region_drop(params.len());
    // Finer near the ends, where good raters' accuracies and rare defects sit.
    let grid: Vec<f64> = [0.001, 0.005, 0.01, 0.0175]
        .into_iter()
        .chain((1..40).map(|k| f64::from(k) / 40.0))
        .chain([0.9825, 0.99, 0.995, 0.999])
        .collect();
    let chains = on_cores(&params, |&param| {
        // The parameter's value in the best fit, and the hold of it at a grid point.
        let (at, hold, i): (f64, fn(usize, f64) -> Hold, usize) = match param {
            Param::Prevalence(g) => (best.prevalence[g], Hold::Prevalence, g),
            Param::Sensitivity(r) => (best.sensitivity[r], Hold::Sensitivity, r),
            Param::Specificity(r) => (best.specificity[r], Hold::Specificity, r),
        };
        let split = grid.partition_point(|&v| v < at);
        let mut fits = Vec::with_capacity(grid.len());
        let up: Vec<f64> = grid[split..].to_vec();
        let down: Vec<f64> = grid[..split].iter().rev().copied().collect();
        for side in [up, down] {
            let mut prev: Option<Fit> = None;
            let mut outside = 0;
            for v in side {
                let f = fit(
                    patterns,
                    weights,
                    dims,
                    prev.as_ref().or(Some(best)),
                    hold(i, v),
                    REFIT,
                );
                // Past the region the profile only falls: two points well outside it
                // end this side (at the paper's scale after a few points).
                if f.log_likelihood < best.log_likelihood - drop - WALK_SLACK {
                    outside += 1;
                } else {
                    outside = 0;
                }
                prev = Some(f.clone());
                fits.push(f);
                if outside == 2 {
                    break;
                }
            }
        }
        fits
    });
    let better_than_chance =
        |f: &Fit| (0..dims.0).all(|r| !active[r] || f.sensitivity[r] + f.specificity[r] > 1.0);
    let fits: Vec<Fit> = std::iter::once(best.clone())
        .chain(chains.into_iter().flatten())
        .filter(|f| better_than_chance(f))
        .collect();
    let top = fits
        .iter()
        .map(|f| f.log_likelihood)
        .fold(f64::NEG_INFINITY, f64::max);
    let region: Vec<Fit> = fits
        .into_iter()
        .filter(|f| f.log_likelihood >= top - drop)
        .collect();
    (region, params.len())
}

/// A rater's record on known items, in the order the ratings were given: `(truth,
/// rejected)` for each known item they rated.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KnownRates {
    /// Known defects rejected, of known defects rated, with the Wilson 95% interval.
    pub caught: usize,
    pub defects: usize,
    pub sensitivity: Option<[f64; 3]>,
    /// Known sound items passed, of those rated.
    pub passed: usize,
    pub sound: usize,
    pub specificity: Option<[f64; 3]>,
    /// Over the last `window` known defects: caught, rated, and the rate with its
    /// interval.
    pub recent_caught: usize,
    pub recent_defects: usize,
    pub recent_sensitivity: Option<[f64; 3]>,
    /// The recent catch rate's interval lies wholly below the threshold.
    pub below_threshold: bool,
}

/// The catch and pass rates on known items (estimate, low, high), over all and over the
/// last `window` known defects; `below_threshold` when the recent rate's upper end is
/// under `threshold` (so chance alone does not flag a good rater).
pub fn known_item_rates(record: &[(bool, bool)], window: usize, threshold: f64) -> KnownRates {
    let rate = |k: usize, n: usize| {
        let (lo, hi) = wilson(k as u64, n as u64, 0.95)?;
        Some([k as f64 / n as f64, lo, hi])
    };
    let defects: Vec<bool> = record.iter().filter(|r| r.0).map(|r| r.1).collect();
    let caught = defects.iter().filter(|&&c| c).count();
    let sound = record.iter().filter(|r| !r.0).count();
    let passed = record.iter().filter(|r| !r.0 && !r.1).count();
    let recent = &defects[defects.len().saturating_sub(window)..];
    let recent_caught = recent.iter().filter(|&&c| c).count();
    let recent_sensitivity = rate(recent_caught, recent.len());
    KnownRates {
        caught,
        defects: defects.len(),
        sensitivity: rate(caught, defects.len()),
        passed,
        sound,
        specificity: rate(passed, sound),
        recent_caught,
        recent_defects: recent.len(),
        recent_sensitivity,
        below_threshold: recent_sensitivity.is_some_and(|r| r[2] < threshold),
    }
}

mod gibbs;
pub mod simulate;

#[cfg(test)]
mod tests;

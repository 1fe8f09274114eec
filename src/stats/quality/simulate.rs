//! Reviews with known truth, and how often [`estimate`](super::estimate)'s intervals
//! hold it: for the tests, the methods documentation's coverage table
//! (`TANDEM_BENCH_COVERAGE=200 cargo bench --bench quality`) and the benchmark.

use super::{Figure, Item, Options, Quality, Review, StatsError, estimate};
use crate::rng::Xoshiro256;

/// One stage to simulate.
#[derive(Debug, Clone, PartialEq)]
pub struct Setup {
    /// Each validator's sensitivity and specificity.
    pub validators: Vec<(f64, f64)>,
    /// The author's (who rates every disagreement).
    pub author: (f64, f64),
    /// Each task's prevalence of defects.
    pub prevalence: Vec<f64>,
    /// Real items (clips or questions), each in a task drawn at random.
    pub items: usize,
    /// Known defects and known sound items, spread over the tasks.
    pub known: (usize, usize),
    pub seed: u64,
}

impl Setup {
    /// The paper's shape, one stage: 12 validators with sensitivities 0.60-0.95 and
    /// specificities 0.85-0.99, an author at 0.95 and 0.95, 7 tasks; Stage 1 has 1,200
    /// clips with defects at 0.2, Stage 2 9,800 questions at 0.1; known items at 5% of
    /// the real ones, half of them defects; `scale` multiplies the items.
    pub fn paper(stage: u8, scale: f64, seed: u64) -> Setup {
        let validators = (0..12)
            .map(|v| {
                let t = f64::from(v) / 11.0;
                (0.60 + 0.35 * t, 0.99 - 0.14 * ((v * 5 % 12) as f64 / 11.0))
            })
            .collect();
        let (items, prevalence) = if stage == 1 {
            (1_200.0, 0.2)
        } else {
            (9_800.0, 0.1)
        };
        let items = (items * scale).round() as usize;
        let known = (items as f64 * 0.05 / 2.0).round() as usize;
        Setup {
            validators,
            author: (0.95, 0.95),
            prevalence: vec![prevalence; 7],
            items,
            known: (known, known),
            seed,
        }
    }
}

/// The hard cases beside the paper's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// The paper's shape.
    Main,
    /// No known items: the model is not identified, only bounds are given.
    NoKnownItems,
    /// Validators who never err (no splits, so the author rates nothing).
    PerfectRaters,
    /// The first task has no defects.
    TaskWithoutDefects,
    /// One known defect and one known sound item.
    OneKnownOfEach,
}

impl Scenario {
    pub const ALL: [Scenario; 5] = [
        Scenario::Main,
        Scenario::NoKnownItems,
        Scenario::PerfectRaters,
        Scenario::TaskWithoutDefects,
        Scenario::OneKnownOfEach,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Scenario::Main => "the paper's shape",
            Scenario::NoKnownItems => "no known items",
            Scenario::PerfectRaters => "perfect validators",
            Scenario::TaskWithoutDefects => "a task without defects",
            Scenario::OneKnownOfEach => "one known item of each kind",
        }
    }

    pub fn setup(self, stage: u8, scale: f64, seed: u64) -> Setup {
        let mut s = Setup::paper(stage, scale, seed);
        match self {
            Scenario::Main => {}
            Scenario::NoKnownItems => s.known = (0, 0),
            Scenario::PerfectRaters => s.validators.iter_mut().for_each(|v| *v = (1.0, 1.0)),
            Scenario::TaskWithoutDefects => s.prevalence[0] = 0.0,
            Scenario::OneKnownOfEach => s.known = (1, 1),
        }
        s
    }
}

/// A simulated review and its truth (one per item).
pub struct Simulated {
    pub review: Review,
    pub truth: Vec<bool>,
    /// Every rater's sensitivity and specificity: the validators', then the author's.
    pub accuracy: Vec<(f64, f64)>,
    pub prevalence: Vec<f64>,
}

impl Simulated {
    /// The share of retained items that are truly defective.
    pub fn true_residual(&self) -> Option<f64> {
        let (mut k, mut n) = (0usize, 0usize);
        for (it, &z) in self.review.items.iter().zip(&self.truth) {
            if it.retained {
                n += 1;
                k += usize::from(z);
            }
        }
        (n > 0).then(|| k as f64 / n as f64)
    }
}

/// Every item reviewed by two distinct validators drawn at random, the author rating
/// each disagreement of a real item, a real item retained when both pass it (or the
/// author passes a disagreement); known items rated by two validators, never retained.
/// Raters: the validators, then the author.
pub fn review(setup: &Setup) -> Simulated {
    let mut rng = Xoshiro256::seed_from_u64(setup.seed);
    let nv = setup.validators.len() as u64;
    let author = setup.validators.len();
    let tasks = setup.prevalence.len().max(1) as u64;
    let mut accuracy = setup.validators.clone();
    accuracy.push(setup.author);
    let (kd, ks) = setup.known;
    let all = setup.items + kd + ks;
    let mut items = Vec::with_capacity(all);
    let mut truth = Vec::with_capacity(all);
    for i in 0..all {
        let group = rng.below(tasks).unwrap_or(0) as usize;
        let is_known = i >= setup.items;
        let z = if is_known {
            i < setup.items + kd
        } else {
            rng.next_f64() < setup.prevalence[group]
        };
        let a = rng.below(nv).unwrap_or(0) as usize;
        let mut b = rng.below(nv - 1).unwrap_or(0) as usize;
        if b >= a {
            b += 1;
        }
        let rate = |r: usize, rng: &mut Xoshiro256| {
            let (se, sp) = accuracy[r];
            let u = rng.next_f64();
            if z { u < se } else { u >= sp }
        };
        let ra = rate(a, &mut rng);
        let rb = rate(b, &mut rng);
        let mut ratings = vec![(a, ra), (b, rb)];
        let mut retained = !ra && !rb;
        if !is_known && ra != rb {
            let rc = rate(author, &mut rng);
            ratings.push((author, rc));
            retained = !rc;
        }
        items.push(Item {
            group,
            ratings,
            known: is_known.then_some(z),
            retained: retained && !is_known,
        });
        truth.push(z);
    }
    Simulated {
        review: Review {
            n_raters: accuracy.len(),
            n_groups: tasks as usize,
            items,
        },
        truth,
        accuracy,
        prevalence: setup.prevalence.clone(),
    }
}

/// The kinds of figure whose intervals are counted.
pub const KINDS: [&str; 6] = [
    "validator sensitivity",
    "validator specificity",
    "author sensitivity",
    "author specificity",
    "prevalence",
    "residual defect rate",
];

/// How often each kind's interval (or, when not identified, its bounds) held the
/// truth, and the residual rate's mean estimate against the truth's mean.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Coverage {
    /// Per kind of [`KINDS`]: intervals holding the truth, of intervals given.
    pub held: [(usize, usize); 6],
    /// Sums over the seeds with an estimate: the residual estimate and the truth.
    pub residual_sum: (f64, f64),
    pub seeds: usize,
}

impl Coverage {
    /// The share held for a kind (`None` when no interval was given).
    pub fn share(&self, kind: usize) -> Option<f64> {
        let (k, n) = self.held[kind];
        (n > 0).then(|| k as f64 / n as f64)
    }

    /// The residual's mean estimate over the mean truth, less one (`None` without
    /// estimates or with a truth of 0).
    pub fn residual_bias(&self) -> Option<f64> {
        let (e, t) = self.residual_sum;
        (t > 0.0).then(|| e / t - 1.0)
    }
}

/// The interval a figure gives: its `ci95`, or its bounds when not identified.
fn interval(f: &Figure) -> Option<[f64; 2]> {
    f.ci95.or(f.bounds)
}

/// Counts what one estimate held of its simulation's truth into `c`.
pub fn count(c: &mut Coverage, sim: &Simulated, q: &Quality) {
    let mut hold = |kind: usize, f: &Figure, truth: f64| {
        if let Some([lo, hi]) = interval(f) {
            c.held[kind].1 += 1;
            c.held[kind].0 += usize::from(lo <= truth && truth <= hi);
        }
    };
    let author = sim.accuracy.len() - 1;
    for (r, rq) in q.raters.iter().enumerate() {
        let (se, sp) = sim.accuracy[r];
        let base = if r == author { 2 } else { 0 };
        hold(base, &rq.sensitivity, se);
        hold(base + 1, &rq.specificity, sp);
    }
    for (g, f) in q.prevalence.iter().enumerate() {
        hold(4, f, sim.prevalence[g]);
    }
    if let Some(t) = sim.true_residual() {
        hold(5, &q.residual_defect_rate, t);
        if let Some(e) = q.residual_defect_rate.estimate {
            c.residual_sum.0 += e;
            c.residual_sum.1 += t;
        }
    }
    c.seeds += 1;
}

/// Coverage of one scenario and stage over `seeds`, each simulated and estimated.
pub fn coverage(
    scenario: Scenario,
    stage: u8,
    scale: f64,
    seeds: std::ops::Range<u64>,
    options: Options,
) -> Result<Coverage, StatsError> {
    let mut c = Coverage::default();
    for seed in seeds {
        let sim = review(&scenario.setup(stage, scale, seed));
        let q = estimate(
            &sim.review,
            Options {
                seed: options.seed.wrapping_add(seed),
                ..options
            },
        )?;
        count(&mut c, &sim, &q);
    }
    Ok(c)
}

//! The review-quality estimates (`tandem::stats::quality`): the Dawid-Skene fit, its
//! 200-resample bootstrap, on a simulated review at the paper's scale (1,200 clips,
//! 9,800 questions, 12 validators, known items at 5%) and at ten times it; and, before
//! the timings, the residual defect rate's interval's coverage of the true rate over 50
//! seeds at the paper's scale (the unit tests check 20 seeds at a tenth of it); and the
//! bounds without known items at the paper's scale.
//!
//! Run: `cargo bench --bench quality`. Numbers and the machine are in BENCHMARKS.md.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use divan::Bencher;
use std::time::Instant;
use tandem::stats::quality::simulate::{Setup, review};
use tandem::stats::quality::{Options, estimate};

fn main() {
    if std::env::var("TANDEM_BENCH_COVERAGE").as_deref() != Ok("0") {
        coverage(50);
    }
    divan::main();
}

/// Prints how often the 95% interval of the residual defect rate holds the true share
/// of defective retained items, and the largest errors of the validators' estimates.
fn coverage(seeds: u64) {
    let started = Instant::now();
    let (mut covered, mut width, mut worst_se, mut worst_sp, mut worst_res) =
        (0, 0.0, 0.0f64, 0.0f64, 0.0f64);
    for seed in 0..seeds {
        let setup = Setup::paper(1.0, 50_000 + seed);
        let sim = review(&setup);
        let q = estimate(
            &sim.review,
            Options {
                resamples: 200,
                seed,
            },
        )
        .unwrap();
        let truth = sim.true_residual().unwrap();
        let [lo, hi] = q.residual_defect_rate.ci95.unwrap();
        covered += usize::from(lo <= truth && truth <= hi);
        width += hi - lo;
        worst_res = worst_res.max((q.residual_defect_rate.estimate.unwrap() - truth).abs());
        for (v, &(se, sp)) in setup.validators.iter().enumerate() {
            let r = &q.raters[v];
            worst_se = worst_se.max((r.sensitivity.estimate.unwrap() - se).abs());
            worst_sp = worst_sp.max((r.specificity.estimate.unwrap() - sp).abs());
        }
    }
    println!(
        "coverage at the paper's scale over {seeds} seeds: the residual rate's 95% interval \
         held the true rate in {covered} ({:.0}%), mean width {:.4}; largest errors: \
         residual {worst_res:.4}, sensitivity {worst_se:.3}, specificity {worst_sp:.3} \
         ({:.1} s)",
        100.0 * covered as f64 / seeds as f64,
        width / seeds as f64,
        started.elapsed().as_secs_f64()
    );
}

fn bench_at(bencher: Bencher, scale: f64) {
    let sim = review(&Setup::paper(scale, 1));
    bencher.bench(|| estimate(&sim.review, Options::default()).unwrap());
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn estimates_paper_scale(bencher: Bencher) {
    bench_at(bencher, 1.0);
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn estimates_10x(bencher: Bencher) {
    bench_at(bencher, 10.0);
}

/// The paper's scale without known items: not identified, so no bootstrap but a
/// profile of every rater's accuracy and every task's prevalence (every campaign's
/// case until known items are planted).
#[divan::bench(sample_count = 5, sample_size = 1)]
fn bounds_paper_scale_without_known_items(bencher: Bencher) {
    let mut setup = Setup::paper(1.0, 1);
    setup.known_share = 0.0;
    let sim = review(&setup);
    bencher.bench(|| estimate(&sim.review, Options::default()).unwrap());
}

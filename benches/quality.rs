//! The review-quality estimates (`tandem::stats::quality`): the Dawid-Skene fit and its
//! Gibbs sampler on a simulated stage of the paper's shape (Stage 2: 9,800 questions,
//! 12 validators, known items at 5%) and at ten times it, and the bounds without known
//! items. With `TANDEM_BENCH_COVERAGE=N`, first the coverage table of the methods
//! documentation: over N seeds of every scenario and both stages, how often each kind
//! of interval held its truth, and the residual rate's bias.
//!
//! Run: `cargo bench --bench quality` (`TANDEM_BENCH_COVERAGE=200` for the table).
//! Numbers and the machine are in BENCHMARKS.md.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use divan::Bencher;
use std::time::Instant;
use tandem::stats::quality::simulate::{KINDS, Scenario, Setup, coverage, review};
use tandem::stats::quality::{Options, estimate};

fn main() {
    if let Some(seeds) = std::env::var("TANDEM_BENCH_COVERAGE")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
    {
        table(seeds);
    }
    divan::main();
}

/// Prints the coverage table as Markdown.
fn table(seeds: u64) {
    let scale = std::env::var("TANDEM_BENCH_COVERAGE_SCALE")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(1.0);
    println!("coverage over {seeds} seeds, items x{scale}\n");
    print!("| scenario | stage |");
    for k in KINDS {
        print!(" {k} |");
    }
    println!(" residual: mean estimate / truth - 1 | seconds |");
    println!("|{}", " --- |".repeat(KINDS.len() + 4));
    for scenario in Scenario::ALL {
        for stage in [1, 2] {
            let started = Instant::now();
            let c = coverage(scenario, stage, scale, 0..seeds, Options::default()).unwrap();
            print!("| {} | {stage} |", scenario.name());
            for k in 0..KINDS.len() {
                match c.share(k) {
                    Some(s) => print!(" {s:.3} ({}) |", c.held[k].1),
                    None => print!(" - |"),
                }
            }
            match c.residual_bias() {
                Some(b) => print!(" {:+.1}% |", 100.0 * b),
                None => print!(" - |"),
            }
            println!(" {:.0} |", started.elapsed().as_secs_f64());
        }
    }
    println!();
}

fn bench_at(bencher: Bencher, scale: f64) {
    let sim = review(&Setup::paper(2, scale, 1));
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

/// The paper's scale without known items: not identified, so no sampler but a profile
/// of every rater's accuracy and every task's prevalence (every campaign's case until
/// known items are planted).
#[divan::bench(sample_count = 5, sample_size = 1)]
fn bounds_paper_scale_without_known_items(bencher: Bencher) {
    let sim = review(&Scenario::NoKnownItems.setup(2, 1.0, 1));
    bencher.bench(|| estimate(&sim.review, Options::default()).unwrap());
}

//! Tables 14 and 15 built from raw responses (`report::study::build`, pure): the paper's
//! study (50 sets x 4 sources x 3 participants) and a crowd-sourced one 80 times larger
//! in responses (200 sets x 4 sources x 60 participants). The build includes the
//! bootstrap interval (10,000 resamples over clips).
//!
//! Run: `cargo bench --bench study`. Numbers and the machine are in BENCHMARKS.md.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use divan::Bencher;
use tandem::domain::facts::{ResponseFact, StudyClipFact, StudyData};
use tandem::domain::study::{Axis, RANK_AXES, Truth};
use tandem::stats::bootstrap::Xoshiro256;

#[global_allocator]
static ALLOC: divan::AllocProfiler = divan::AllocProfiler::system();

fn main() {
    divan::main();
}

/// Complete responses of `participants` to `sets` sets of 4 clips: random rankings
/// and labels (generated clips judged fake more often), from a fixed seed.
fn study(sets: usize, participants: usize) -> StudyData {
    let sources = ["PerceptionTest", "EgoExoBench", "VSI-Bench", "VGenST"];
    let mut rng = Xoshiro256::seed_from_u64(7);
    let mut clips = Vec::new();
    for s in 0..sets {
        for (k, src) in sources.iter().enumerate() {
            clips.push(StudyClipFact {
                id: (s * 4 + k) as i64,
                set_id: s as i64,
                set_key: format!("S{s:03}"),
                clip_key: format!("S{s:03}_{k}"),
                source: src.to_string(),
                truth: if k == 3 { Truth::Fake } else { Truth::Real },
            });
        }
    }
    let mut responses = Vec::new();
    for p in 0..participants {
        let who = format!("P{p:03}");
        for s in 0..sets {
            for axis in RANK_AXES {
                let mut ranks = [1, 2, 3, 4];
                for i in (1..4).rev() {
                    let j = rng.below(i as u64 + 1).unwrap() as usize;
                    ranks.swap(i, j);
                }
                for (k, r) in ranks.iter().enumerate() {
                    responses.push(ResponseFact {
                        participant: who.clone(),
                        clip_id: (s * 4 + k) as i64,
                        axis,
                        value: r.to_string(),
                    });
                }
            }
            for k in 0..4 {
                let p_fake = if k == 3 { 0.63 } else { 0.2 };
                let fake = rng.next_f64() < p_fake;
                responses.push(ResponseFact {
                    participant: who.clone(),
                    clip_id: (s * 4 + k) as i64,
                    axis: Axis::RealFake,
                    value: if fake { "fake" } else { "real" }.into(),
                });
            }
        }
    }
    StudyData {
        sources: sources.iter().map(|s| s.to_string()).collect(),
        clips,
        responses,
    }
}

#[divan::bench(sample_count = 20, sample_size = 1)]
fn t14_t15_paper_scale(bencher: Bencher) {
    let data = study(50, 3);
    bencher.bench_local(|| tandem::report::study::build(&data));
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn t14_t15_crowd(bencher: Bencher) {
    let data = study(200, 60);
    bencher.bench_local(|| tandem::report::study::build(&data));
}

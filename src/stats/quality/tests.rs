use super::simulate::{Setup, review};
use super::*;

#[test]
fn at_the_papers_scale_each_validator_and_the_residual_rate_are_found() {
    let setup = Setup::paper(2, 1.0, 7);
    let sim = review(&setup);
    let q = estimate(&sim.review, Options::default()).unwrap();
    assert!(q.identified && q.converged, "{:?}", q.reason);
    // Each validator's posterior mean near the truth (it has about 200 defects to go by),
    // and the truth inside the credible interval for all but the odd one.
    let (mut se_held, mut sp_held) = (0, 0);
    for (v, &(se, sp)) in setup.validators.iter().enumerate() {
        let r = &q.raters[v];
        let (es, ep) = (
            r.sensitivity.estimate.unwrap(),
            r.specificity.estimate.unwrap(),
        );
        assert!(
            (es - se).abs() < 0.1,
            "validator {v}: sensitivity {es} for {se}"
        );
        assert!(
            (ep - sp).abs() < 0.04,
            "validator {v}: specificity {ep} for {sp}"
        );
        let [lo, hi] = r.sensitivity.ci95.unwrap();
        assert!(lo <= es && es <= hi);
        se_held += usize::from(lo <= se && se <= hi);
        let [lo, hi] = r.specificity.ci95.unwrap();
        sp_held += usize::from(lo <= sp && sp <= hi);
    }
    assert!(se_held >= 10 && sp_held >= 10, "{se_held}, {sp_held} of 12");
    let truth = sim.true_residual().unwrap();
    let est = q.residual_defect_rate.estimate.unwrap();
    assert!((est - truth).abs() < 0.02, "residual {est} for {truth}");
    for g in 0..q.prevalence.len() {
        let p = q.prevalence[g].estimate.unwrap();
        assert!((p - 0.1).abs() < 0.08, "group {g}: prevalence {p}");
    }
    // Known items keep their truth; every probability is one.
    for (it, p) in sim.review.items.iter().zip(&q.posterior) {
        assert!((0.0..=1.0).contains(p));
        if let Some(z) = it.known {
            assert_eq!(*p, f64::from(u8::from(z)));
        }
    }
}

/// At a tenth of Stage 2's size with defects at 0.2 (at 0.1 the interval covers less:
/// the methods documentation's coverage table has it).
#[test]
fn the_residual_rates_interval_covers_the_truth_in_most_seeds() {
    let mut covered = 0;
    for seed in 0..20 {
        let mut setup = Setup::paper(2, 0.1, 1_000 + seed);
        setup.prevalence = vec![0.2; 7];
        let sim = review(&setup);
        let q = estimate(&sim.review, Options { draws: 2_000, seed }).unwrap();
        let [lo, hi] = q.residual_defect_rate.ci95.unwrap();
        let t = sim.true_residual().unwrap();
        if lo <= t && t <= hi {
            covered += 1;
        }
    }
    assert!(covered >= 16, "covered in {covered} of 20");
}

#[test]
fn without_known_items_there_is_no_number_but_bounds_that_hold_the_truth() {
    let mut setup = Setup::paper(1, 0.2, 3);
    setup.known = (0, 0);
    let sim = review(&setup);
    let q = estimate(&sim.review, Options::default()).unwrap();
    assert!(!q.identified);
    assert!(q.reason.as_deref().unwrap().contains("not identified"));
    let r = &q.residual_defect_rate;
    assert_eq!((r.estimate, r.ci95), (None, None));
    let [lo, hi] = r.bounds.unwrap();
    let t = sim.true_residual().unwrap();
    assert!(lo <= hi && (0.0..=1.0).contains(&lo) && hi <= 1.0);
    assert!(lo <= t + 0.01 && t - 0.01 <= hi, "[{lo}, {hi}] for {t}");
    assert!(q.raters[0].sensitivity.bounds.is_some());
    assert_eq!(q.raters[0].sensitivity.estimate, None);
}

/// Two validators and the author on their splits, without known items: a few items
/// allow a wide range, never a point that reads as precise, and more items narrow
/// it (a profile that followed one path through the prevalence alone gave ranges
/// of width 0 here).
#[test]
fn bounds_from_few_items_are_wide_and_narrow_as_items_come() {
    let it = |r: Vec<(usize, bool)>, retained| Item {
        group: 0,
        ratings: r,
        known: None,
        retained,
    };
    let width = |b: Option<[f64; 2]>| b.map_or(0.0, |[lo, hi]| hi - lo);
    let mut widths = Vec::new();
    for scale in [1usize, 20] {
        let mut items = Vec::new();
        for _ in 0..scale {
            items.extend((0..7).map(|_| it(vec![(0, false), (1, false)], true)));
            items.push(it(vec![(0, true), (1, true)], false));
            items.push(it(vec![(0, true), (1, false), (2, true)], false));
            items.push(it(vec![(0, false), (1, true), (2, false)], true));
        }
        let review = Review {
            n_raters: 3,
            n_groups: 1,
            items,
        };
        let q = estimate(&review, Options::default()).unwrap();
        assert!(!q.identified);
        if scale == 1 {
            for r in &q.raters {
                assert!(width(r.sensitivity.bounds) >= 0.3, "{:?}", r.sensitivity);
                assert!(width(r.specificity.bounds) >= 0.1, "{:?}", r.specificity);
            }
        }
        widths.push(width(q.residual_defect_rate.bounds));
    }
    assert!(widths[0] >= 0.3, "ten items: {widths:?}");
    assert!(widths[1] < widths[0] / 4.0, "{widths:?}");
}

#[test]
fn bad_input_is_named_and_nothing_is_estimated_from_nothing() {
    let item = |group, ratings: Vec<(usize, bool)>| Item {
        group,
        ratings,
        known: None,
        retained: false,
    };
    let bad = Review {
        n_raters: 2,
        n_groups: 1,
        items: vec![item(0, vec![(0, true)]), item(0, vec![(2, true)])],
    };
    let e = estimate(&bad, Options::default()).unwrap_err().to_string();
    assert!(e.contains("item 1: rater"), "{e}");
    let twice = Review {
        n_raters: 2,
        n_groups: 1,
        items: vec![item(0, vec![(1, true), (1, false)])],
    };
    assert!(estimate(&twice, Options::default()).is_err());
    let group = Review {
        n_raters: 1,
        n_groups: 1,
        items: vec![item(1, vec![])],
    };
    assert!(estimate(&group, Options::default()).is_err());
    let empty = Review {
        n_raters: 3,
        n_groups: 2,
        items: vec![],
    };
    let q = estimate(&empty, Options::default()).unwrap();
    assert_eq!(q.residual_defect_rate.estimate, None);
    assert_eq!(q.residual_defect_rate.bounds, None);
    assert_eq!(q.raters.len(), 3);
}

#[test]
fn the_same_seed_gives_the_same_figures() {
    let sim = review(&Setup::paper(2, 0.05, 11));
    let a = estimate(
        &sim.review,
        Options {
            draws: 400,
            seed: 1,
        },
    )
    .unwrap();
    let b = estimate(
        &sim.review,
        Options {
            draws: 400,
            seed: 1,
        },
    )
    .unwrap();
    assert_eq!(a, b);
}

#[test]
fn known_item_rates_pause_only_when_the_recent_rate_is_surely_low() {
    // 20 known defects of which the last 10 all missed; 5 sound items passed.
    let mut record: Vec<(bool, bool)> = (0..10).map(|_| (true, true)).collect();
    record.extend((0..10).map(|_| (true, false)));
    record.extend((0..5).map(|_| (false, false)));
    let r = known_item_rates(&record, 10, 0.7);
    assert_eq!((r.caught, r.defects, r.passed, r.sound), (10, 20, 5, 5));
    assert_eq!((r.recent_caught, r.recent_defects), (0, 10));
    assert!(r.below_threshold);
    let s = r.sensitivity.unwrap();
    assert_eq!(s[0], 0.5);
    // scipy: binomtest(10, 20).proportion_ci(method="wilson") = (0.29929800..., 0.70070199...)
    assert!((s[1] - 0.299_298_008_198_212_3).abs() < 1e-12, "{s:?}");
    assert!((s[2] - 0.700_701_991_801_787_7).abs() < 1e-12, "{s:?}");
    // One miss in three is not sure evidence of a low rate.
    let few = known_item_rates(&[(true, true), (true, false), (true, true)], 20, 0.7);
    assert!(!few.below_threshold);
    let none = known_item_rates(&[], 20, 0.7);
    assert_eq!(none.sensitivity, None);
    assert!(!none.below_threshold);
}

/// Without known items the bounds are the simultaneous 95% region's: over seeds every
/// kind of figure's bounds hold its truth at that level or more (the residual rate's,
/// the share realised), and they still say something (the validators' are not all of
/// [0, 1]).
#[test]
fn without_known_items_the_bounds_hold_the_truth_at_their_level() {
    use super::simulate::{KINDS, Scenario, coverage};
    let c = coverage(
        Scenario::NoKnownItems,
        1,
        0.25,
        0..10,
        Options { draws: 0, seed: 1 },
    )
    .unwrap();
    for (k, kind) in KINDS.iter().enumerate() {
        let (held, of) = c.held[k];
        assert!(of > 0, "{kind}: no bounds");
        assert!(held as f64 >= 0.95 * of as f64, "{kind}: {held} of {of}");
    }
    let sim = review(&Scenario::NoKnownItems.setup(1, 0.25, 0));
    let q = estimate(&sim.review, Options::default()).unwrap();
    let narrow = q
        .raters
        .iter()
        .filter_map(|r| r.specificity.bounds)
        .filter(|[lo, hi]| hi - lo < 0.5)
        .count();
    assert!(narrow >= 6, "{:?}", q.raters);
}

/// Over 200 seeds of each scenario with known items at a tenth of Stage 1's size (120
/// clips, 7 tasks, 12 validators of about 20 ratings each, the author on the splits):
/// the validators' credible intervals hold their truth at 0.93 or more, a perfect
/// validator's reach 1 and a task without defects' prevalence reaches 0 (where a
/// bootstrap held 0 of them); the author's and the residual rate's, weakly identified
/// at this size, hold 0.85 or more (the methods documentation's table gives every
/// figure at the paper's size).
#[test]
fn credible_intervals_hold_their_truth_over_200_seeds_of_each_scenario() {
    use super::simulate::{Coverage, KINDS, Scenario, count};
    let options = |seed| Options { draws: 1_000, seed };
    for scenario in [
        Scenario::Main,
        Scenario::PerfectRaters,
        Scenario::TaskWithoutDefects,
        Scenario::OneKnownOfEach,
    ] {
        let mut c = Coverage::default();
        let (mut zero_held, mut one_held) = (0, 0);
        for seed in 0..200 {
            let sim = review(&scenario.setup(1, 0.1, seed));
            let q = estimate(&sim.review, options(seed)).unwrap();
            count(&mut c, &sim, &q);
            zero_held += usize::from(q.prevalence[0].ci95.is_some_and(|[lo, _]| lo == 0.0));
            one_held += q.raters[..12]
                .iter()
                .filter(|r| r.sensitivity.ci95.is_some_and(|[_, hi]| hi == 1.0))
                .count();
        }
        let name = scenario.name();
        for (k, kind) in KINDS.iter().enumerate() {
            let floor = if k < 2 {
                0.93
            } else if k == 4 {
                0.9
            } else {
                0.85
            };
            if let Some(share) = c.share(k) {
                assert!(
                    share >= floor,
                    "{name}: {kind} held {share} of {}",
                    c.held[k].1
                );
            }
        }
        match scenario {
            Scenario::PerfectRaters => assert!(one_held >= 2_350, "{one_held} of 2,400"),
            Scenario::TaskWithoutDefects => assert!(zero_held >= 186, "{zero_held} of 200"),
            _ => {}
        }
    }
}

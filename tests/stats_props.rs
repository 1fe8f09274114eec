//! Property tests of the agreement statistics: invariances that must hold for every
//! input, not just the golden vectors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use tandem::stats::agreement::{self, KappaWeights, Table};
use tandem::stats::multi::{self, AlphaLevel, Ratings};

const EPS: f64 = 1e-12;

fn same(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => (x - y).abs() <= EPS * (1.0 + x.abs().max(y.abs())),
        _ => false,
    }
}

/// q declared categories and 1..80 index pairs over them.
fn pairs_strategy() -> impl Strategy<Value = (usize, Vec<(usize, usize)>)> {
    (2usize..6).prop_flat_map(|q| (Just(q), prop::collection::vec((0..q, 0..q), 1..80)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Two raters who always agree, with at least two categories used: kappa = 1, its
    /// SE is exactly 0 and the CI collapses to [1, 1].
    #[test]
    fn kappa_is_one_for_identical_raters(
        (q, labels) in (2usize..6).prop_flat_map(|q| (Just(q), prop::collection::vec(0..q, 2..80)))
    ) {
        prop_assume!(labels.iter().any(|&l| l != labels[0]));
        let pairs: Vec<(usize, usize)> = labels.iter().map(|&l| (l, l)).collect();
        let t = Table::from_index_pairs(q, &pairs).unwrap();
        let c = agreement::cohen_kappa(&t);
        prop_assert!(same(c.kappa, Some(1.0)), "{:?}", c);
        prop_assert_eq!(c.std_kappa, Some(0.0));
        prop_assert_eq!((c.ci95_low, c.ci95_high), (c.kappa, c.kappa));
        prop_assert!(same(agreement::weighted_kappa(&t, KappaWeights::Linear).kappa, Some(1.0)));
        prop_assert!(same(agreement::weighted_kappa(&t, KappaWeights::Quadratic).kappa, Some(1.0)));
    }

    /// Swapping the raters (transposing the table) changes nothing.
    #[test]
    fn kappa_is_symmetric_in_the_raters((q, pairs) in pairs_strategy()) {
        let t = Table::from_index_pairs(q, &pairs).unwrap();
        let a = agreement::cohen_kappa(&t);
        let b = agreement::cohen_kappa(&t.transpose());
        prop_assert!(same(a.kappa, b.kappa), "{:?} vs {:?}", a, b);
        prop_assert!(same(a.std_kappa, b.std_kappa), "{:?} vs {:?}", a, b);
        prop_assert!(same(a.std_kappa0, b.std_kappa0), "{:?} vs {:?}", a, b);
        prop_assert!(same(a.z, b.z));
        for w in [KappaWeights::Linear, KappaWeights::Quadratic] {
            let wa = agreement::weighted_kappa(&t, w);
            let wb = agreement::weighted_kappa(&t.transpose(), w);
            prop_assert!(same(wa.kappa, wb.kappa));
            prop_assert!(same(wa.std_kappa, wb.std_kappa));
        }
    }

    /// Renaming the categories (any permutation) leaves the nominal coefficients
    /// unchanged; reversing an ordinal scale leaves weighted kappa unchanged.
    #[test]
    fn nominal_coefficients_ignore_category_labels(
        (q, pairs, perm) in pairs_strategy().prop_flat_map(|(q, pairs)| {
            (Just(q), Just(pairs), Just((0..q).collect::<Vec<usize>>()).prop_shuffle())
        })
    ) {
        let t = Table::from_index_pairs(q, &pairs).unwrap();
        let p = t.permuted(&perm).unwrap();
        let (a, b) = (agreement::cohen_kappa(&t), agreement::cohen_kappa(&p));
        prop_assert!(same(a.kappa, b.kappa));
        prop_assert!(same(a.std_kappa, b.std_kappa));
        prop_assert!(same(a.std_kappa0, b.std_kappa0));
        prop_assert!(same(agreement::scott_pi(&t), agreement::scott_pi(&p)));
        prop_assert!(same(agreement::pabak(&t), agreement::pabak(&p)));
        prop_assert!(same(
            agreement::gwet_ac1_table(&t).map(|g| g.value),
            agreement::gwet_ac1_table(&p).map(|g| g.value)
        ));
        let relabelled: Vec<(usize, usize)> = pairs
            .iter()
            .map(|&(x, y)| {
                let inv = |v: usize| perm.iter().position(|&o| o == v).unwrap();
                (inv(x), inv(y))
            })
            .collect();
        let r1 = Ratings::from_pairs(q, &pairs).unwrap();
        let r2 = Ratings::from_pairs(q, &relabelled).unwrap();
        prop_assert!(same(
            multi::krippendorff_alpha(&r1, AlphaLevel::Nominal),
            multi::krippendorff_alpha(&r2, AlphaLevel::Nominal)
        ));
        prop_assert!(same(
            multi::gwet_ac1(&r1).map(|g| g.value),
            multi::gwet_ac1(&r2).map(|g| g.value)
        ));

        let reversed: Vec<usize> = (0..q).rev().collect();
        let rev = t.permuted(&reversed).unwrap();
        for w in [KappaWeights::Linear, KappaWeights::Quadratic] {
            let (wa, wb) = (agreement::weighted_kappa(&t, w), agreement::weighted_kappa(&rev, w));
            prop_assert!(same(wa.kappa, wb.kappa));
            prop_assert!(same(wa.std_kappa, wb.std_kappa));
            prop_assert!(same(wa.std_kappa0, wb.std_kappa0));
        }
    }

    /// Fleiss' kappa with two raters is Scott's pi; irrCAC's Fleiss on complete data
    /// equals statsmodels' Fleiss.
    #[test]
    fn fleiss_with_two_raters_is_scotts_pi((q, pairs) in pairs_strategy()) {
        let t = Table::from_index_pairs(q, &pairs).unwrap();
        let r = Ratings::from_pairs(q, &pairs).unwrap();
        let f = multi::fleiss_kappa(&r).unwrap();
        prop_assert!(same(f.kappa, agreement::scott_pi(&t)), "{:?} vs {:?}", f.kappa, agreement::scott_pi(&t));
        prop_assert!(same(multi::fleiss_gwet(&r).map(|g| g.value), f.kappa));
    }

    /// With both raters' marginals at 50/50 (table [[a, b], [b, a]]), p_e is 1/2 for
    /// both Cohen and Gwet, so kappa = AC1 (from the table and from the raw ratings).
    #[test]
    fn kappa_equals_ac1_with_balanced_marginals(a in 0usize..60, b in 0usize..60) {
        prop_assume!(a + b > 0);
        let t = Table::from_rows(&[[a as f64, b as f64], [b as f64, a as f64]]).unwrap();
        let c = agreement::cohen_kappa(&t);
        prop_assert!(same(c.p_e, Some(0.5)));
        let g = agreement::gwet_ac1_table(&t).unwrap();
        prop_assert!(same(c.kappa, Some(g.value)), "{:?} vs {}", c.kappa, g.value);
        let mut pairs = Vec::new();
        pairs.extend(std::iter::repeat_n((0, 0), a));
        pairs.extend(std::iter::repeat_n((1, 1), a));
        pairs.extend(std::iter::repeat_n((0, 1), b));
        pairs.extend(std::iter::repeat_n((1, 0), b));
        let raw = tandem::stats::pairs::gwet_ac1_pairs(2, &pairs).unwrap().unwrap();
        prop_assert!(same(c.kappa, Some(raw.value)));
    }

    /// Every rating in one category: kappa-type coefficients are undefined (None), not
    /// 0 or 1, and nothing is NaN.
    #[test]
    fn kappa_undefined_when_all_ratings_in_one_category(q in 1usize..6, c in 0usize..6, n in 1usize..100) {
        let c = c % q;
        let pairs = vec![(c, c); n];
        let t = Table::from_index_pairs(q, &pairs).unwrap();
        let k = agreement::cohen_kappa(&t);
        prop_assert_eq!(k.kappa, None);
        prop_assert_eq!(k.std_kappa, None);
        prop_assert_eq!(k.z, None);
        prop_assert_eq!(k.p_two_sided, None);
        prop_assert_eq!(k.p_e, Some(1.0));
        prop_assert!(k.undefined_reason.is_some());
        prop_assert_eq!(agreement::scott_pi(&t), None);
        prop_assert_eq!(agreement::weighted_kappa(&t, KappaWeights::Quadratic).kappa, None);
        let r = Ratings::from_pairs(q, &pairs).unwrap();
        prop_assert_eq!(multi::fleiss_kappa(&r).unwrap().kappa, None);
        prop_assert_eq!(multi::fleiss_gwet(&r), None);
        prop_assert_eq!(multi::conger_kappa(&r), None);
        prop_assert_eq!(multi::krippendorff_alpha(&r, AlphaLevel::Nominal), None);
        prop_assert_eq!(multi::light_kappa(&r), None);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// More defects in the same sample never lower the bound; more items with the same
    /// defects never raise it; the bound is at least the sample's own rate.
    #[test]
    fn the_upper_bound_moves_the_right_way(n in 1u64..2000, k in 0u64..2000, conf in 0.5f64..0.999) {
        let k = k.min(n);
        let sampling = tandem::stats::sampling::upper_bound;
        let b = sampling(k, n, conf).unwrap();
        prop_assert!(b >= k as f64 / n as f64 - 1e-12 && b <= 1.0);
        if k < n {
            prop_assert!(sampling(k + 1, n, conf).unwrap() >= b - 1e-12);
        }
        prop_assert!(sampling(k, n + 1, conf).unwrap() <= b + 1e-12);
        prop_assert!(sampling(k, n, (conf + 1.0) / 2.0).unwrap() >= b - 1e-12);
    }

    /// Every plan meets both of its risks.
    #[test]
    fn a_plan_meets_both_risks(aql in 0.005f64..0.1, gap in 1.5f64..6.0, alpha in 0.01f64..0.2, beta in 0.01f64..0.2) {
        use statrs::distribution::{Binomial, DiscreteCDF};
        let rql = (aql * gap).min(0.9);
        let p = tandem::stats::sampling::plan(aql, rql, alpha, beta).unwrap();
        let accept = |q: f64| Binomial::new(q, p.n).unwrap().cdf(p.c);
        prop_assert!(accept(aql) >= 1.0 - alpha);
        prop_assert!(accept(rql) <= beta);
    }
}

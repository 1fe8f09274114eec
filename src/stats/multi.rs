//! Agreement among any number of raters, with missing ratings allowed.
//!
//! Input is a [`Ratings`] matrix: items x raters, each cell an index into the declared
//! categories or `None` when that rater did not rate that item. Items with no rating at
//! all are ignored (dropped when the matrix is built, as irrCAC does); items with a
//! single rating are kept but are not pairable.
//!
//! References matched (see `tests/data/golden/README.md`):
//! * [`fleiss_kappa`]: statsmodels `fleiss_kappa(counts)`, with the Fleiss, Nee & Landis
//!   (1979) SE under H0 as in R `irr::kappam.fleiss` (complete data only).
//! * [`randolph_kappa`]: statsmodels `fleiss_kappa(counts, method="randolph")`.
//! * [`fleiss_gwet`], [`gwet_ac1`], [`conger_kappa`]: irrCAC `raw.CAC.fleiss()`,
//!   `.gwet()`, `.conger()` (Gwet 2014), with our convention that a zero SE gives
//!   `ci95 = [value, value]` and no p-value.
//! * [`krippendorff_alpha`]: the `krippendorff` package's `alpha()`.
//! * [`pairwise_cohen_kappa`] / [`light_kappa`]: scikit-learn `cohen_kappa_score` per
//!   rater pair and their mean.

use serde::Serialize;

use super::agreement::{Table, cohen_kappa};
use super::{
    StatsError, finite, is_above, label_index, se_from_var, t_quantile, t_two_sided_p, z_test,
};

/// Reason given when Fleiss' kappa is 0/0.
pub const UNDEFINED_ONE_CATEGORY: &str = "p_e == 1 (every rating in one category): 0/0";

/// A validated items x raters matrix of category indexes (`None` = missing).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ratings {
    q: usize,
    n_raters: usize,
    items: Vec<Vec<Option<usize>>>,
    unrated_items: usize,
}

impl Ratings {
    /// Builds the matrix over `q` declared categories. Every row must have the same
    /// length (the number of raters) and every index must be below `q`. Rows without
    /// any rating are dropped (counted in [`Ratings::unrated_items`]).
    pub fn new(q: usize, rows: Vec<Vec<Option<usize>>>) -> Result<Self, StatsError> {
        let n_raters = rows.first().map_or(0, Vec::len);
        let mut items = Vec::with_capacity(rows.len());
        let mut unrated_items = 0;
        for (i, row) in rows.into_iter().enumerate() {
            if row.len() != n_raters {
                return Err(StatsError::Ragged {
                    row: i,
                    len: row.len(),
                    expected: n_raters,
                });
            }
            for &c in row.iter().flatten() {
                if c >= q {
                    return Err(StatsError::CategoryOutOfRange { index: c, q });
                }
            }
            if row.iter().all(Option::is_none) {
                unrated_items += 1;
            } else {
                items.push(row);
            }
        }
        Ok(Ratings {
            q,
            n_raters,
            items,
            unrated_items,
        })
    }

    /// Builds the matrix from labels over the declared `categories`.
    pub fn from_labels<L: PartialEq + std::fmt::Debug>(
        categories: &[L],
        rows: &[Vec<Option<L>>],
    ) -> Result<Self, StatsError> {
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let mut r = Vec::with_capacity(row.len());
            for cell in row {
                r.push(match cell {
                    None => None,
                    Some(l) => Some(label_index(categories, l).ok_or_else(|| {
                        StatsError::UnknownLabel {
                            label: format!("{l:?}"),
                        }
                    })?),
                });
            }
            out.push(r);
        }
        Ratings::new(categories.len(), out)
    }

    /// Two raters, every item rated by both.
    pub fn from_pairs(q: usize, pairs: &[(usize, usize)]) -> Result<Self, StatsError> {
        Ratings::new(
            q,
            pairs.iter().map(|&(a, b)| vec![Some(a), Some(b)]).collect(),
        )
    }

    /// Number of declared categories.
    pub fn q(&self) -> usize {
        self.q
    }

    /// Number of raters (columns).
    pub fn n_raters(&self) -> usize {
        self.n_raters
    }

    /// Number of items with at least one rating.
    pub fn n_items(&self) -> usize {
        self.items.len()
    }

    /// Number of input rows that had no rating and were dropped.
    pub fn unrated_items(&self) -> usize {
        self.unrated_items
    }

    /// The items (rows with at least one rating).
    pub fn items(&self) -> &[Vec<Option<usize>>] {
        &self.items
    }

    /// Number of ratings given.
    pub fn n_ratings(&self) -> usize {
        self.items.iter().flatten().flatten().count()
    }

    /// Whether every rater rated every item (and there is at least one item).
    pub fn is_complete(&self) -> bool {
        !self.items.is_empty() && self.items.iter().flatten().all(Option::is_some)
    }

    /// Items x categories: how many raters put item i in category k.
    pub fn counts(&self) -> Vec<Vec<usize>> {
        self.items
            .iter()
            .map(|row| {
                let mut c = vec![0usize; self.q];
                for &k in row.iter().flatten() {
                    c[k] += 1;
                }
                c
            })
            .collect()
    }

    /// Raters x categories: how many items each rater put in each category.
    pub fn per_rater_counts(&self) -> Vec<Vec<usize>> {
        let mut out = vec![vec![0usize; self.q]; self.n_raters];
        for row in &self.items {
            for (g, cell) in row.iter().enumerate() {
                if let Some(k) = cell {
                    out[g][*k] += 1;
                }
            }
        }
        out
    }

    /// Total ratings per category.
    fn category_totals(&self) -> Vec<usize> {
        let mut t = vec![0usize; self.q];
        for &k in self.items.iter().flatten().flatten() {
            t[k] += 1;
        }
        t
    }

    /// Every rating is in one category (so p_e = 1 for Fleiss-type coefficients).
    fn all_one_category(&self) -> bool {
        self.category_totals().iter().filter(|&&c| c > 0).count() == 1
    }

    /// The items x categories counts as f64 with each item's number of ratings.
    fn counts_f64(&self) -> (Vec<Vec<f64>>, Vec<f64>) {
        let counts: Vec<Vec<f64>> = self
            .counts()
            .into_iter()
            .map(|r| r.into_iter().map(|x| x as f64).collect())
            .collect();
        let ri = counts.iter().map(|r| r.iter().sum()).collect();
        (counts, ri)
    }
}

/// Percent agreement (irrCAC `p_a`, Fleiss' P-bar): the mean over items with at least
/// two ratings of `sum_k r_ik(r_ik-1)/(r_i(r_i-1))`. `None` when no item is pairable.
pub fn percent_agreement(r: &Ratings) -> Option<f64> {
    let (counts, ri) = r.counts_f64();
    pa_irr(&counts, &ri).map(|(pa, _)| pa)
}

/// `(p_a, n2)` over pairable items.
fn pa_irr(counts: &[Vec<f64>], ri: &[f64]) -> Option<(f64, usize)> {
    let mut sum = 0.0;
    let mut n2 = 0usize;
    for (row, &r) in counts.iter().zip(ri) {
        if r >= 2.0 {
            let s: f64 = row.iter().map(|x| x * (x - 1.0)).sum();
            sum += s / (r * (r - 1.0));
            n2 += 1;
        }
    }
    (n2 > 0).then(|| (sum / n2 as f64, n2))
}

/// Fleiss' kappa for complete data, with the Fleiss-Nee-Landis SE under H0.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FleissKappa {
    pub kappa: Option<f64>,
    /// Observed agreement P-bar.
    pub p_a: f64,
    /// `sum_j p_j^2` over pooled category proportions.
    pub p_e: f64,
    /// Fleiss, Nee & Landis (1979) standard error under H0.
    pub se0: Option<f64>,
    pub z: Option<f64>,
    pub p_two_sided: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undefined_reason: Option<String>,
}

/// Fleiss' kappa (statsmodels `fleiss_kappa(counts, method="fleiss")`), complete data
/// only: `None` when a rating is missing, there are no items or fewer than 2 raters.
///
/// `se0 = sqrt(2)/(spq sqrt(N m (m-1))) sqrt(spq^2 - sum_j p_j q_j (q_j - p_j))` with
/// `spq = sum_j p_j q_j` (Fleiss, Nee & Landis 1979; R `irr::kappam.fleiss`),
/// `z = kappa/se0`, `p_two_sided = 2 Phi_bar(|z|)`. Kappa is undefined (with a reason)
/// when every rating is in one category.
pub fn fleiss_kappa(r: &Ratings) -> Option<FleissKappa> {
    if !r.is_complete() || r.n_raters < 2 {
        return None;
    }
    let m = r.n_raters as f64;
    let big_n = r.n_items() as f64;
    let (counts, _) = r.counts_f64();
    let total = big_n * m;
    let p: Vec<f64> = r
        .category_totals()
        .iter()
        .map(|&c| c as f64 / total)
        .collect();
    let p_bar = counts
        .iter()
        .map(|row| (row.iter().map(|x| x * x).sum::<f64>() - m) / (m * (m - 1.0)))
        .sum::<f64>()
        / big_n;
    let p_e: f64 = p.iter().map(|x| x * x).sum();
    let mut out = FleissKappa {
        kappa: None,
        p_a: p_bar,
        p_e,
        se0: None,
        z: None,
        p_two_sided: None,
        undefined_reason: None,
    };
    if r.all_one_category() || !is_above(1.0 - p_e, 0.0) {
        out.undefined_reason = Some(UNDEFINED_ONE_CATEGORY.to_string());
        return Some(out);
    }
    let kappa = finite((p_bar - p_e) / (1.0 - p_e))?;
    out.kappa = Some(kappa);
    let spq: f64 = p.iter().map(|pj| pj * (1.0 - pj)).sum();
    let third: f64 = p.iter().map(|pj| pj * (1.0 - pj) * ((1.0 - pj) - pj)).sum();
    let var0 = 2.0 / (spq * spq * (big_n * m * (m - 1.0))) * (spq * spq - third);
    out.se0 = se_from_var(var0);
    let (z, _, p2) = z_test(kappa, out.se0);
    out.z = z;
    out.p_two_sided = p2;
    Some(out)
}

/// Randolph's free-marginal kappa (statsmodels `fleiss_kappa(method="randolph")`):
/// `(P-bar - 1/q)/(1 - 1/q)` over the declared categories. Complete data only; `None`
/// when q < 2, a rating is missing or there are fewer than 2 raters.
pub fn randolph_kappa(r: &Ratings) -> Option<f64> {
    if !r.is_complete() || r.n_raters < 2 || r.q < 2 {
        return None;
    }
    let p_bar = percent_agreement(r)?;
    let p_e = 1.0 / r.q as f64;
    finite((p_bar - p_e) / (1.0 - p_e))
}

/// An irrCAC-style coefficient with Gwet's linearised standard error.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct CacEstimate {
    pub value: f64,
    pub p_a: f64,
    pub p_e: f64,
    /// `None` with fewer than 2 items.
    pub se: Option<f64>,
    /// `value - t_{n-1}(0.975) se`; `value` when se = 0.
    pub ci95_low: Option<f64>,
    /// `min(1, value + t_{n-1}(0.975) se)`; `value` when se = 0.
    pub ci95_high: Option<f64>,
    /// `2 (1 - T_{n-1}(|value/se|))`; `None` when se = 0.
    pub p_value: Option<f64>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum CacKind {
    Fleiss,
    Gwet,
}

fn irr_cac(r: &Ratings, kind: CacKind) -> Option<CacEstimate> {
    let n_items = r.n_items();
    if n_items == 0 {
        return None;
    }
    let q = r.q;
    if kind == CacKind::Gwet && q < 2 {
        return None;
    }
    let n = n_items as f64;
    let (counts, ri) = r.counts_f64();
    let (pa, n2) = pa_irr(&counts, &ri)?;
    let mut pi = vec![0.0; q];
    for (row, &rr) in counts.iter().zip(&ri) {
        for (acc, x) in pi.iter_mut().zip(row) {
            *acc += x / rr / n;
        }
    }
    let qm1 = q as f64 - 1.0;
    let pe = match kind {
        CacKind::Fleiss => {
            if r.all_one_category() {
                return None;
            }
            pi.iter().map(|x| x * x).sum::<f64>()
        }
        CacKind::Gwet => pi.iter().map(|x| x * (1.0 - x)).sum::<f64>() / qm1,
    };
    if !is_above(1.0 - pe, 0.0) {
        return None;
    }
    let value = finite((pa - pe) / (1.0 - pe))?;
    let mut est = CacEstimate {
        value,
        p_a: pa,
        p_e: pe,
        se: None,
        ci95_low: None,
        ci95_high: None,
        p_value: None,
    };
    if n_items < 2 {
        return Some(est);
    }
    let n2 = n2 as f64;
    let mut ss = 0.0;
    for (row, &rr) in counts.iter().zip(&ri) {
        let (pa_i, pe_r2) = if rr >= 2.0 {
            let s: f64 = row.iter().map(|x| x * (x - 1.0)).sum();
            (s / (rr * (rr - 1.0)), pe)
        } else {
            (0.0, 0.0)
        };
        let v_i = (n / n2) * (pa_i - pe_r2) / (1.0 - pe);
        let pe_i = match kind {
            CacKind::Fleiss => row.iter().zip(&pi).map(|(x, p)| x / rr * p).sum::<f64>(),
            CacKind::Gwet => {
                row.iter()
                    .zip(&pi)
                    .map(|(x, p)| x / rr * (1.0 - p))
                    .sum::<f64>()
                    / qm1
            }
        };
        let v_star = v_i - 2.0 * (1.0 - value) * (pe_i - pe) / (1.0 - pe);
        ss += (v_star - value).powi(2);
    }
    let var = ss / (n * (n - 1.0));
    est.se = se_from_var(var);
    match est.se {
        Some(se) if se > 0.0 => {
            let df = n - 1.0;
            if let Some(tq) = t_quantile(0.975, df) {
                est.ci95_low = finite(value - tq * se);
                est.ci95_high = finite((value + tq * se).min(1.0));
            }
            est.p_value = t_two_sided_p(value / se, df);
        }
        Some(_) => {
            est.ci95_low = Some(value);
            est.ci95_high = Some(value);
        }
        None => {}
    }
    Some(est)
}

/// Fleiss' kappa generalised to missing ratings, irrCAC `raw.CAC.fleiss()`:
/// `pi_k` = mean over items of `r_ik/r_i`, `p_e = sum_k pi_k^2`, and Gwet's linearised
/// variance `(1/(n(n-1))) sum_i (kappa*_i - kappa)^2` with
/// `kappa_i = (n/n2)(pa_i - p_e [r_i>=2])/(1-p_e)`, `pe_i = sum_k (r_ik/r_i) pi_k` and
/// `kappa*_i = kappa_i - 2(1-kappa)(pe_i-p_e)/(1-p_e)`. CI from Student's t with n-1 df,
/// upper bound capped at 1. `None` when no item is pairable or every rating is in one
/// category. On complete data the value equals [`fleiss_kappa`].
pub fn fleiss_gwet(r: &Ratings) -> Option<CacEstimate> {
    irr_cac(r, CacKind::Fleiss)
}

/// Gwet's AC1 for any number of raters with missing ratings, irrCAC `raw.CAC.gwet()`:
/// `p_e = sum_k pi_k(1-pi_k)/(q-1)` over the q declared categories, and the variance
/// of [`fleiss_gwet`] with `pe_i = (1/(q-1)) sum_k (r_ik/r_i)(1-pi_k)`. `None` when no
/// item is pairable or q < 2.
pub fn gwet_ac1(r: &Ratings) -> Option<CacEstimate> {
    irr_cac(r, CacKind::Gwet)
}

/// Conger's (1980) kappa, irrCAC `raw.CAC.conger()` coefficient: Fleiss' `p_a` with
/// `p_e = sum_k (pbar_k^2 - s2_k/r)`, where `p_gk` is rater g's proportion in category k
/// over the items g rated, `pbar_k` its mean over raters and `s2_k` its variance
/// (ddof = 1). `None` with fewer than 2 raters, a rater with no rating, no pairable
/// item, or every rating in one category.
pub fn conger_kappa(r: &Ratings) -> Option<f64> {
    let nr = r.n_raters;
    if nr < 2 || r.q == 0 || r.all_one_category() {
        return None;
    }
    let (counts, ri) = r.counts_f64();
    let (pa, _) = pa_irr(&counts, &ri)?;
    let classif = r.per_rater_counts();
    let mut pgk = Vec::with_capacity(nr);
    for row in &classif {
        let ng: usize = row.iter().sum();
        if ng == 0 {
            return None;
        }
        pgk.push(
            row.iter()
                .map(|&c| c as f64 / ng as f64)
                .collect::<Vec<f64>>(),
        );
    }
    let rf = nr as f64;
    let mut pe = 0.0;
    for k in 0..r.q {
        let mean = pgk.iter().map(|row| row[k]).sum::<f64>() / rf;
        let sumsq = pgk.iter().map(|row| row[k] * row[k]).sum::<f64>();
        let s2 = (sumsq - rf * mean * mean) / (rf - 1.0);
        pe += mean * mean - s2 / rf;
    }
    if !is_above(1.0 - pe, 0.0) {
        return None;
    }
    finite((pa - pe) / (1.0 - pe))
}

/// Cohen's kappa for every rater pair (0,1), (0,2), ..., (1,2), ... in that order, as
/// scikit-learn `cohen_kappa_score`. Complete data only (`None` otherwise); a pair
/// whose kappa is undefined gives `None` in its place.
pub fn pairwise_cohen_kappa(r: &Ratings) -> Option<Vec<Option<f64>>> {
    if !r.is_complete() {
        return None;
    }
    let mut out = Vec::new();
    for a in 0..r.n_raters {
        for b in (a + 1)..r.n_raters {
            let pairs: Vec<(usize, usize)> = r
                .items
                .iter()
                .filter_map(|row| Some((row[a]?, row[b]?)))
                .collect();
            // Indexes were validated when the matrix was built.
            let t = Table::from_index_pairs(r.q, &pairs).unwrap_or_else(|_| Table::zeros(r.q));
            out.push(cohen_kappa(&t).kappa);
        }
    }
    Some(out)
}

/// Light's kappa: the mean of [`pairwise_cohen_kappa`]. `None` when the data are
/// incomplete, there is no pair, or any pairwise kappa is undefined.
pub fn light_kappa(r: &Ratings) -> Option<f64> {
    let pw = pairwise_cohen_kappa(r)?;
    if pw.is_empty() {
        return None;
    }
    let vals: Option<Vec<f64>> = pw.into_iter().collect();
    let vals = vals?;
    finite(vals.iter().sum::<f64>() / vals.len() as f64)
}

/// Level of measurement for Krippendorff's alpha.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AlphaLevel {
    Nominal,
    /// Krippendorff's ordinal metric on the category order (rank sums of `n_c`).
    Ordinal,
    /// Squared difference of the category indexes 0..q-1.
    Interval,
}

/// Krippendorff's alpha, as the `krippendorff` package's `alpha()` with the declared
/// categories as value domain (interval values = indexes 0..q-1).
///
/// The coincidence matrix sums, over units with `m_u >= 2` ratings,
/// `(n_uc n_uk - [c=k] n_uc)/(m_u - 1)`; with `n_c = sum_k o_ck`, `n = sum n_c` and
/// `e_ck = (n_c n_k - [c=k] n_c)/(n - 1)`, `alpha = 1 - sum o d / sum e d`. `None` when
/// no unit is pairable or the expected disagreement is 0 (one value only).
pub fn krippendorff_alpha(r: &Ratings, level: AlphaLevel) -> Option<f64> {
    let q = r.q;
    if q < 2 {
        return None;
    }
    let mut o = vec![0.0; q * q];
    let mut any = false;
    for row in r.counts() {
        let m: usize = row.iter().sum();
        if m < 2 {
            continue;
        }
        any = true;
        let denom = (m - 1) as f64;
        for c in 0..q {
            if row[c] == 0 {
                continue;
            }
            for k in 0..q {
                let mut v = (row[c] * row[k]) as f64;
                if c == k {
                    v -= row[c] as f64;
                }
                o[c * q + k] += v / denom;
            }
        }
    }
    if !any {
        return None;
    }
    let n_v: Vec<f64> = (0..q).map(|k| (0..q).map(|c| o[c * q + k]).sum()).collect();
    let n: f64 = n_v.iter().sum();
    if !is_above(n, 1.0) {
        return None;
    }
    let dist = |c: usize, k: usize| -> f64 {
        match level {
            AlphaLevel::Nominal => {
                if c == k {
                    0.0
                } else {
                    1.0
                }
            }
            AlphaLevel::Ordinal => {
                let (lo, hi) = if c <= k { (c, k) } else { (k, c) };
                let between: f64 = n_v[lo..=hi].iter().sum();
                (between - (n_v[lo] + n_v[hi]) / 2.0).powi(2)
            }
            AlphaLevel::Interval => {
                let diff = c as f64 - k as f64;
                diff * diff
            }
        }
    };
    let mut obs = 0.0;
    let mut exp = 0.0;
    for c in 0..q {
        for k in 0..q {
            let d = dist(c, k);
            obs += o[c * q + k] * d;
            let mut e = n_v[c] * n_v[k];
            if c == k {
                e -= n_v[c];
            }
            exp += e / (n - 1.0) * d;
        }
    }
    if !is_above(exp, 0.0) {
        return None;
    }
    finite(1.0 - obs / exp)
}

/// Everything the multi-rater report shows for one set of items.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MultiRaterSummary {
    /// Items with at least one rating: the `n` every figure is over (irrCAC's n).
    pub n_items: usize,
    /// Items declared, rated or not (the rows given).
    pub n_items_declared: usize,
    /// Declared items nobody rated, left out of every figure.
    pub n_items_unrated: usize,
    pub n_raters: usize,
    pub complete: bool,
    pub n_ratings: usize,
    pub counts: Vec<Vec<usize>>,
    pub percent_agreement: Option<f64>,
    pub fleiss: Option<FleissKappa>,
    pub randolph_kappa: Option<f64>,
    pub fleiss_gwet: Option<CacEstimate>,
    pub gwet_ac1: Option<CacEstimate>,
    pub krippendorff_alpha_nominal: Option<f64>,
    pub conger_kappa: Option<f64>,
    pub pairwise_cohen_kappa: Option<Vec<Option<f64>>>,
    pub light_kappa: Option<f64>,
    /// Raters x categories.
    pub per_rater_counts: Vec<Vec<usize>>,
}

/// All multi-rater statistics for one matrix.
pub fn multi_rater_summary(r: &Ratings) -> MultiRaterSummary {
    MultiRaterSummary {
        n_items: r.n_items(),
        n_items_declared: r.n_items() + r.unrated_items(),
        n_items_unrated: r.unrated_items(),
        n_raters: r.n_raters(),
        complete: r.is_complete(),
        n_ratings: r.n_ratings(),
        counts: r.counts(),
        percent_agreement: percent_agreement(r),
        fleiss: fleiss_kappa(r),
        randolph_kappa: randolph_kappa(r),
        fleiss_gwet: fleiss_gwet(r),
        gwet_ac1: gwet_ac1(r),
        krippendorff_alpha_nominal: krippendorff_alpha(r, AlphaLevel::Nominal),
        conger_kappa: conger_kappa(r),
        pairwise_cohen_kappa: pairwise_cohen_kappa(r),
        light_kappa: light_kappa(r),
        per_rater_counts: r.per_rater_counts(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ratings(q: usize, rows: &[&[Option<usize>]]) -> Ratings {
        Ratings::new(q, rows.iter().map(|r| r.to_vec()).collect()).unwrap()
    }

    #[test]
    fn krippendorff_2011_example() {
        // Krippendorff (2011): 4 observers x 12 units, values 1..5 as indexes 0..4.
        let n = None;
        let s = |v: usize| Some(v - 1);
        let r = ratings(
            5,
            &[
                &[s(1), s(1), n, s(1)],
                &[s(2), s(2), s(3), s(2)],
                &[s(3), s(3), s(3), s(3)],
                &[s(3), s(3), s(3), s(3)],
                &[s(2), s(2), s(2), s(2)],
                &[s(1), s(2), s(3), s(4)],
                &[s(4), s(4), s(4), s(4)],
                &[s(1), s(1), s(2), s(1)],
                &[s(2), s(2), s(2), s(2)],
                &[n, s(5), s(5), s(5)],
                &[n, n, s(1), s(1)],
                &[n, s(3), n, n],
            ],
        );
        let a = krippendorff_alpha(&r, AlphaLevel::Nominal).unwrap();
        assert!((a - 0.743421052631579).abs() < 1e-12, "{a}");
        assert_eq!(fleiss_kappa(&r), None);
        assert_eq!(pairwise_cohen_kappa(&r), None);
        let g = gwet_ac1(&r).unwrap();
        assert!((g.value - 0.775444068126995).abs() < 1e-12);
    }

    #[test]
    fn the_summary_reports_the_declared_items_and_those_nobody_rated() {
        // 15 declared items, 3 raters; items 4 and 11 have no rating at all.
        let rows: Vec<Vec<Option<usize>>> = (0..15)
            .map(|i| {
                if i == 4 || i == 11 {
                    vec![None, None, None]
                } else {
                    vec![Some(i % 2), Some(i % 2), Some((i / 3) % 2)]
                }
            })
            .collect();
        let all_rated: Vec<Vec<Option<usize>>> = rows
            .iter()
            .filter(|r| r.iter().any(Option::is_some))
            .cloned()
            .collect();
        let s = multi_rater_summary(&Ratings::new(2, rows).unwrap());
        assert_eq!(
            (s.n_items, s.n_items_declared, s.n_items_unrated),
            (13, 15, 2)
        );
        // Every figure is over the 13 rated items, exactly as without the empty rows.
        let rated = multi_rater_summary(&Ratings::new(2, all_rated).unwrap());
        assert_eq!(rated.n_items_declared, 13);
        assert_eq!(s.fleiss, rated.fleiss);
        assert_eq!(
            s.krippendorff_alpha_nominal,
            rated.krippendorff_alpha_nominal
        );
        assert_eq!(s.gwet_ac1, rated.gwet_ac1);
    }

    #[test]
    fn degenerate_inputs() {
        let empty = Ratings::new(2, vec![]).unwrap();
        let s = multi_rater_summary(&empty);
        assert_eq!(s.n_items, 0);
        assert_eq!(s.percent_agreement, None);
        assert_eq!(s.fleiss, None);
        assert_eq!(s.gwet_ac1, None);
        assert_eq!(s.krippendorff_alpha_nominal, None);
        assert_eq!(s.conger_kappa, None);

        let unrated = Ratings::new(2, vec![vec![None, None], vec![None, None]]).unwrap();
        assert_eq!(unrated.n_items(), 0);
        assert_eq!(unrated.unrated_items(), 2);
        let _ = multi_rater_summary(&unrated);

        let singles = ratings(2, &[&[Some(0), None], &[None, Some(1)]]);
        let s = multi_rater_summary(&singles);
        assert_eq!(s.percent_agreement, None);
        assert_eq!(s.gwet_ac1, None);
        assert_eq!(s.krippendorff_alpha_nominal, None);

        let one_item = ratings(2, &[&[Some(0), Some(1)]]);
        let g = gwet_ac1(&one_item).unwrap();
        assert_eq!(g.se, None);
        assert_eq!(g.p_value, None);

        let one_rater = ratings(2, &[&[Some(0)], &[Some(1)]]);
        let s = multi_rater_summary(&one_rater);
        assert_eq!(s.fleiss, None);
        assert_eq!(s.conger_kappa, None);
        assert_eq!(s.light_kappa, None);

        let all_same = ratings(
            2,
            &[&[Some(1), Some(1), Some(1)], &[Some(1), Some(1), Some(1)]],
        );
        let f = fleiss_kappa(&all_same).unwrap();
        assert_eq!(f.kappa, None);
        assert_eq!(f.p_e, 1.0);
        assert!(f.undefined_reason.is_some());
        assert_eq!(randolph_kappa(&all_same), Some(1.0));
        assert_eq!(fleiss_gwet(&all_same), None);
        let g = gwet_ac1(&all_same).unwrap();
        assert_eq!((g.value, g.se, g.p_value), (1.0, Some(0.0), None));
        assert_eq!((g.ci95_low, g.ci95_high), (Some(1.0), Some(1.0)));

        assert!(Ratings::new(2, vec![vec![Some(0)], vec![Some(0), None]]).is_err());
        assert!(Ratings::new(2, vec![vec![Some(2)]]).is_err());
        let q1 = ratings(1, &[&[Some(0), Some(0)]]);
        let s = multi_rater_summary(&q1);
        assert_eq!(s.gwet_ac1, None);
        assert_eq!(s.randolph_kappa, None);
        assert_eq!(s.krippendorff_alpha_nominal, None);
    }

    #[test]
    fn from_labels() {
        let cats = ["real", "fake"];
        let r = Ratings::from_labels(
            &cats,
            &[
                vec![Some("real"), Some("fake"), None],
                vec![None, None, None],
                vec![Some("fake"), Some("fake"), Some("fake")],
            ],
        )
        .unwrap();
        assert_eq!(r.n_items(), 2);
        assert_eq!(r.unrated_items(), 1);
        assert_eq!(r.n_ratings(), 5);
        assert!(!r.is_complete());
        assert_eq!(r.counts(), vec![vec![1, 1], vec![0, 3]]);
        assert_eq!(
            r.per_rater_counts(),
            vec![vec![1, 1], vec![0, 2], vec![0, 1]]
        );
        assert!(Ratings::from_labels(&cats, &[vec![Some("maybe")]]).is_err());
    }

    #[test]
    fn fleiss_wikipedia() {
        // Wikipedia's example as counts per subject (14 raters, 5 categories).
        let counts = [
            [0, 0, 0, 0, 14],
            [0, 2, 6, 4, 2],
            [0, 0, 3, 5, 6],
            [0, 3, 9, 2, 0],
            [2, 2, 8, 1, 1],
            [7, 7, 0, 0, 0],
            [3, 2, 6, 3, 0],
            [2, 5, 3, 2, 2],
            [6, 5, 2, 1, 0],
            [0, 2, 2, 3, 7],
        ];
        let rows = counts
            .iter()
            .map(|c| {
                c.iter()
                    .enumerate()
                    .flat_map(|(k, &n)| std::iter::repeat_n(Some(k), n))
                    .collect()
            })
            .collect();
        let r = Ratings::new(5, rows).unwrap();
        let f = fleiss_kappa(&r).unwrap();
        assert!((f.kappa.unwrap() - 0.20993070442195522).abs() < 1e-12);
    }
}

//! Agreement between two raters, computed from a k x k contingency table over the
//! declared categories (rows = rater A, columns = rater B).
//!
//! References matched (see `tests/data/golden/README.md`):
//! * Cohen's kappa and weighted kappa with their standard errors:
//!   `statsmodels.stats.inter_rater.cohens_kappa` (Fleiss, Cohen & Everitt 1969).
//! * PABAK: irrCAC `bp()`, `(q p_o - 1)/(q - 1)`.
//! * Scott's pi: statsmodels `fleiss_kappa` with two raters (irrCAC `table.CAC.scott()`).
//! * Gwet's AC1 from a table: irrCAC `table.CAC.gwet()` (value and `p_e`); from raw
//!   pairs: irrCAC `raw.CAC.gwet()` in `stats::pairs` (which calls `stats::multi`).

use serde::Serialize;

use super::{StatsError, Z_95, finite, is_above, label_index, se_from_var, z_test};

/// Reason given when a kappa-type coefficient is 0/0 for two raters.
pub const UNDEFINED_TWO_RATERS: &str = "p_e == 1 (both raters used a single category): 0/0";

/// A square contingency table of (possibly fractional) non-negative counts.
/// Row `i`, column `j` counts the items that rater A put in category `i` and rater B in
/// category `j`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table {
    k: usize,
    cells: Vec<f64>,
}

impl Table {
    /// An empty k x k table.
    pub fn zeros(k: usize) -> Self {
        Table {
            k,
            cells: vec![0.0; k * k],
        }
    }

    /// A table from its rows; it must be square with finite, non-negative cells.
    pub fn from_rows<R: AsRef<[f64]>>(rows: &[R]) -> Result<Self, StatsError> {
        let k = rows.len();
        let mut t = Table::zeros(k);
        for (i, row) in rows.iter().enumerate() {
            let row = row.as_ref();
            if row.len() != k {
                return Err(StatsError::Shape(format!(
                    "row {i} has {} cells, a {k} x {k} table needs {k}",
                    row.len()
                )));
            }
            for (j, &x) in row.iter().enumerate() {
                if !x.is_finite() || x < 0.0 {
                    return Err(StatsError::InvalidValue {
                        value: x.to_string(),
                        at: format!("cell ({i}, {j})"),
                    });
                }
                t.cells[i * k + j] = x;
            }
        }
        Ok(t)
    }

    /// Counts index pairs `(a, b)` into a k x k table.
    pub fn from_index_pairs(k: usize, pairs: &[(usize, usize)]) -> Result<Self, StatsError> {
        let mut t = Table::zeros(k);
        for &(a, b) in pairs {
            for idx in [a, b] {
                if idx >= k {
                    return Err(StatsError::CategoryOutOfRange { index: idx, q: k });
                }
            }
            t.cells[a * k + b] += 1.0;
        }
        Ok(t)
    }

    /// Counts label pairs `(rater A, rater B)` over the declared `categories`.
    pub fn from_label_pairs<L: PartialEq + std::fmt::Debug>(
        categories: &[L],
        pairs: &[(L, L)],
    ) -> Result<Self, StatsError> {
        let idx = index_pairs(categories, pairs)?;
        Table::from_index_pairs(categories.len(), &idx)
    }

    /// Number of categories.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Cell (i, j); 0 outside the table.
    pub fn get(&self, i: usize, j: usize) -> f64 {
        if i < self.k && j < self.k {
            self.cells[i * self.k + j]
        } else {
            0.0
        }
    }

    /// The rows as vectors.
    pub fn rows(&self) -> Vec<Vec<f64>> {
        if self.k == 0 {
            return Vec::new();
        }
        self.cells.chunks(self.k).map(<[f64]>::to_vec).collect()
    }

    /// Total count n.
    pub fn total(&self) -> f64 {
        self.cells.iter().sum()
    }

    /// Row sums (rater A's counts per category).
    pub fn row_sums(&self) -> Vec<f64> {
        (0..self.k)
            .map(|i| (0..self.k).map(|j| self.get(i, j)).sum())
            .collect()
    }

    /// Column sums (rater B's counts per category).
    pub fn col_sums(&self) -> Vec<f64> {
        (0..self.k)
            .map(|j| (0..self.k).map(|i| self.get(i, j)).sum())
            .collect()
    }

    /// The table with the raters swapped.
    pub fn transpose(&self) -> Table {
        let mut t = Table::zeros(self.k);
        for i in 0..self.k {
            for j in 0..self.k {
                t.cells[j * self.k + i] = self.get(i, j);
            }
        }
        t
    }

    /// The table with categories reordered: new category `c` is old category `perm[c]`.
    /// `perm` must be a permutation of `0..k`.
    pub fn permuted(&self, perm: &[usize]) -> Result<Table, StatsError> {
        let mut seen = vec![false; self.k];
        if perm.len() != self.k {
            return Err(StatsError::Shape("permutation length".into()));
        }
        for &p in perm {
            match seen.get_mut(p) {
                Some(s) if !*s => *s = true,
                _ => return Err(StatsError::Shape("not a permutation".into())),
            }
        }
        let mut t = Table::zeros(self.k);
        for i in 0..self.k {
            for j in 0..self.k {
                t.cells[i * self.k + j] = self.get(perm[i], perm[j]);
            }
        }
        Ok(t)
    }

    /// `Some(c)` when every count is in the single diagonal cell (c, c): both raters
    /// used one and the same category, so every chance-corrected coefficient is 0/0.
    /// `None` for an empty table too.
    pub fn single_shared_category(&self) -> Option<usize> {
        let n = self.total();
        if n <= 0.0 {
            return None;
        }
        (0..self.k).find(|&c| self.get(c, c) == n)
    }
}

/// Maps label pairs to index pairs over the declared categories.
pub fn index_pairs<L: PartialEq + std::fmt::Debug>(
    categories: &[L],
    pairs: &[(L, L)],
) -> Result<Vec<(usize, usize)>, StatsError> {
    pairs
        .iter()
        .map(|(a, b)| {
            let ia = label_index(categories, a).ok_or_else(|| StatsError::UnknownLabel {
                label: format!("{a:?}"),
            })?;
            let ib = label_index(categories, b).ok_or_else(|| StatsError::UnknownLabel {
                label: format!("{b:?}"),
            })?;
            Ok((ia, ib))
        })
        .collect()
}

/// Sums tables of the same shape into one pooled table (the paper's pooled kappa is
/// computed from the 2x2 table summed over all validator pairs).
pub fn pool_tables(tables: &[Table]) -> Result<Table, StatsError> {
    let first = tables
        .first()
        .ok_or_else(|| StatsError::Empty("no tables to pool".into()))?;
    let mut pooled = Table::zeros(first.k);
    for (n, t) in tables.iter().enumerate() {
        if t.k != first.k {
            return Err(StatsError::Shape(format!(
                "table {n} is {0} x {0}, table 0 is {1} x {1}",
                t.k, first.k
            )));
        }
        for (acc, x) in pooled.cells.iter_mut().zip(&t.cells) {
            *acc += x;
        }
    }
    Ok(pooled)
}

/// Proportions of a table: `(p_ij, p_i., p_.j, n)`; `None` when n is 0.
struct Props {
    n: f64,
    k: usize,
    p: Vec<f64>,
    row: Vec<f64>,
    col: Vec<f64>,
}

impl Props {
    fn of(t: &Table) -> Option<Props> {
        let n = t.total();
        if !is_above(n, 0.0) || !n.is_finite() || t.k == 0 {
            return None;
        }
        Some(Props {
            n,
            k: t.k,
            p: t.cells.iter().map(|x| x / n).collect(),
            row: t.row_sums().iter().map(|x| x / n).collect(),
            col: t.col_sums().iter().map(|x| x / n).collect(),
        })
    }

    fn p(&self, i: usize, j: usize) -> f64 {
        self.p[i * self.k + j]
    }
}

/// Observed agreement `p_o = sum_i p_ii`; `None` for an empty table.
pub fn percent_agreement(t: &Table) -> Option<f64> {
    let n = t.total();
    if !is_above(n, 0.0) {
        return None;
    }
    let diag: f64 = (0..t.k).map(|i| t.get(i, i)).sum();
    finite(diag / n)
}

/// Cohen's kappa with statsmodels' `cohens_kappa(table)` results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CohenKappa {
    /// Number of items (table total).
    pub n: f64,
    /// Observed agreement.
    pub p_o: Option<f64>,
    /// Chance agreement from each rater's own marginals, `sum_i p_i. p_.i`.
    pub p_e: Option<f64>,
    pub kappa: Option<f64>,
    /// `(sum_i min(p_i., p_.i) - p_e)/(1 - p_e)`.
    pub kappa_max: Option<f64>,
    /// Fleiss-Cohen-Everitt (1969) large-sample standard error.
    pub std_kappa: Option<f64>,
    /// `kappa - 1.959963984540054 std_kappa`, not clipped.
    pub ci95_low: Option<f64>,
    pub ci95_high: Option<f64>,
    /// Standard error under H0 (kappa = 0).
    pub std_kappa0: Option<f64>,
    /// `kappa / std_kappa0`.
    pub z: Option<f64>,
    pub p_one_sided: Option<f64>,
    pub p_two_sided: Option<f64>,
    /// Why `kappa` is undefined, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undefined_reason: Option<String>,
}

impl CohenKappa {
    fn empty(n: f64) -> Self {
        CohenKappa {
            n,
            p_o: None,
            p_e: None,
            kappa: None,
            kappa_max: None,
            std_kappa: None,
            ci95_low: None,
            ci95_high: None,
            std_kappa0: None,
            z: None,
            p_one_sided: None,
            p_two_sided: None,
            undefined_reason: None,
        }
    }
}

/// The method of [`kappa_ci95_bounded`], as the JSON names it (`cohen_kappa_ci95_method`).
pub const KAPPA_CI95_BOUNDED_METHOD: &str = "wald_truncated";

/// The same, in words for a table's note or a plot's caption.
pub const KAPPA_CI95_BOUNDED_NOTE: &str =
    "95% CI: Wald interval (Fleiss-Cohen-Everitt large-sample SE) truncated to [-1, 1]";

/// Kappa's 95% Wald interval cut to the range kappa can take, [-1, 1] (the truncated
/// Wald interval). The unclipped interval (`ci95_low`, `ci95_high` of [`CohenKappa`])
/// is what statsmodels reports; this one is what a reader should see, since kappa can
/// exceed neither bound. `None` when either end is undefined or not a number.
pub fn kappa_ci95_bounded(low: Option<f64>, high: Option<f64>) -> Option<[f64; 2]> {
    let (lo, hi) = (low?, high?);
    if !lo.is_finite() || !hi.is_finite() || lo > hi {
        return None;
    }
    Some([lo.clamp(-1.0, 1.0), hi.clamp(-1.0, 1.0)])
}

/// Cohen's kappa, matching `statsmodels.stats.inter_rater.cohens_kappa(table)`:
///
/// * `kappa = (p_o - p_e)/(1 - p_e)`, `p_e = sum_i p_i. p_.i`;
/// * `var = [sum_i p_ii(1-(p_i.+p_.i)(1-k))^2 + (1-k)^2 sum_{i!=j} p_ij(p_.i+p_j.)^2
///   - (k-p_e(1-k))^2] / (n(1-p_e)^2)` (Fleiss, Cohen & Everitt 1969);
/// * `var0 = [p_e + p_e^2 - sum_i p_i. p_.i (p_i.+p_.i)] / (n(1-p_e)^2)`;
/// * `ci95 = kappa -/+ 1.959963984540054 std_kappa`, `z = kappa/std_kappa0`,
///   `p_one_sided = Phi_bar(z)`, `p_two_sided = 2 Phi_bar(|z|)`.
///
/// Undefined (`None`, with a reason) when `p_e = 1`, i.e. both raters used one and the
/// same category; everything is `None` for an empty table.
pub fn cohen_kappa(t: &Table) -> CohenKappa {
    let Some(pr) = Props::of(t) else {
        return CohenKappa::empty(t.total().max(0.0));
    };
    let k = pr.k;
    let p_o: f64 = (0..k).map(|i| pr.p(i, i)).sum();
    let p_e: f64 = (0..k).map(|i| pr.row[i] * pr.col[i]).sum();
    let mut out = CohenKappa::empty(pr.n);
    out.p_o = finite(p_o);
    out.p_e = finite(p_e);
    if t.single_shared_category().is_some() || !is_above(1.0 - p_e, 0.0) {
        out.undefined_reason = Some(UNDEFINED_TWO_RATERS.to_string());
        return out;
    }
    let kappa = (p_o - p_e) / (1.0 - p_e);
    let Some(kappa) = finite(kappa) else {
        return out;
    };
    out.kappa = Some(kappa);
    let min_sum: f64 = (0..k).map(|i| pr.row[i].min(pr.col[i])).sum();
    out.kappa_max = finite((min_sum - p_e) / (1.0 - p_e));

    // Variance (statsmodels' term_a, term_b, term_c).
    let term_a: f64 = (0..k)
        .map(|i| pr.p(i, i) * (1.0 - (pr.row[i] + pr.col[i]) * (1.0 - kappa)).powi(2))
        .sum();
    let mut term_b = 0.0;
    for i in 0..k {
        for j in 0..k {
            if i != j {
                term_b += pr.p(i, j) * (pr.col[i] + pr.row[j]).powi(2);
            }
        }
    }
    let term_b = (1.0 - kappa).powi(2) * term_b;
    let term_c = (kappa - p_e * (1.0 - kappa)).powi(2);
    let var = (term_a + term_b - term_c) / (1.0 - p_e).powi(2) / pr.n;
    out.std_kappa = se_from_var(var);
    if let Some(se) = out.std_kappa {
        out.ci95_low = finite(kappa - Z_95 * se);
        out.ci95_high = finite(kappa + Z_95 * se);
    }
    let term_c0: f64 = (0..k)
        .map(|i| pr.col[i] * pr.row[i] * (pr.col[i] + pr.row[i]))
        .sum();
    let var0 = (p_e + p_e * p_e - term_c0) / ((1.0 - p_e).powi(2) * pr.n);
    out.std_kappa0 = se_from_var(var0);
    let (z, p1, p2) = z_test(kappa, out.std_kappa0);
    out.z = z;
    out.p_one_sided = p1;
    out.p_two_sided = p2;
    out
}

/// Disagreement weights for weighted kappa, on the category **index** over the declared
/// categories: `d_ij = |i-j|/(k-1)` or `(i-j)^2/(k-1)^2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum KappaWeights {
    Linear,
    Quadratic,
}

impl KappaWeights {
    /// Disagreement weight d_ij for a k-category scale; `None` when k < 2.
    pub fn disagreement(self, i: usize, j: usize, k: usize) -> Option<f64> {
        if k < 2 {
            return None;
        }
        let span = (k - 1) as f64;
        let d = (i as f64 - j as f64).abs();
        Some(match self {
            KappaWeights::Linear => d / span,
            KappaWeights::Quadratic => (d * d) / (span * span),
        })
    }
}

/// Weighted kappa with its Fleiss-Cohen-Everitt standard errors.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WeightedKappa {
    pub weights: KappaWeights,
    pub n: f64,
    pub kappa: Option<f64>,
    /// Weighted chance agreement `p_e(w) = sum p_i. p_.j w_ij` with `w = 1 - d`.
    pub p_e: Option<f64>,
    pub std_kappa: Option<f64>,
    pub ci95_low: Option<f64>,
    pub ci95_high: Option<f64>,
    pub std_kappa0: Option<f64>,
    pub z: Option<f64>,
    pub p_one_sided: Option<f64>,
    pub p_two_sided: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undefined_reason: Option<String>,
}

/// Weighted kappa, matching statsmodels `cohens_kappa(table, wt="linear"|"quadratic")`
/// with the table over all declared categories:
///
/// * `kappa_w = 1 - sum d_ij p_ij / sum d_ij p_i. p_.j`;
/// * with `w = 1 - d`, `wbar_i. = sum_j p_.j w_ij`, `wbar_.j = sum_i p_i. w_ij`:
///   `var = [sum p_ij (w_ij-(wbar_i.+wbar_.j)(1-k))^2 - (k-p_e(w)(1-k))^2] / (n(1-p_e(w))^2)`,
///   `var0 = [sum p_i. p_.j (w_ij-(wbar_i.+wbar_.j))^2 - p_e(w)^2] / (n(1-p_e(w))^2)`.
///
/// Undefined when both raters used one and the same category, or fewer than 2
/// categories are declared.
pub fn weighted_kappa(t: &Table, weights: KappaWeights) -> WeightedKappa {
    let mut out = WeightedKappa {
        weights,
        n: t.total().max(0.0),
        kappa: None,
        p_e: None,
        std_kappa: None,
        ci95_low: None,
        ci95_high: None,
        std_kappa0: None,
        z: None,
        p_one_sided: None,
        p_two_sided: None,
        undefined_reason: None,
    };
    let Some(pr) = Props::of(t) else {
        return out;
    };
    let k = pr.k;
    if k < 2 {
        return out;
    }
    // Disagreement d and agreement w = 1 - d.
    let mut d = vec![0.0; k * k];
    for i in 0..k {
        for j in 0..k {
            d[i * k + j] = weights.disagreement(i, j, k).unwrap_or(0.0);
        }
    }
    let w: Vec<f64> = d.iter().map(|x| 1.0 - x).collect();
    let wij = |i: usize, j: usize| w[i * k + j];
    let mut p_e_w = 0.0;
    for i in 0..k {
        for j in 0..k {
            p_e_w += wij(i, j) * pr.col[j] * pr.row[i];
        }
    }
    out.p_e = finite(p_e_w);
    let mut num = 0.0;
    let mut den = 0.0;
    for i in 0..k {
        for j in 0..k {
            num += d[i * k + j] * t.get(i, j);
            den += d[i * k + j] * pr.row[i] * pr.col[j];
        }
    }
    if t.single_shared_category().is_some() || !is_above(den, 0.0) {
        out.undefined_reason = Some(UNDEFINED_TWO_RATERS.to_string());
        return out;
    }
    let Some(kappa) = finite(1.0 - num / pr.n / den) else {
        return out;
    };
    out.kappa = Some(kappa);
    let w_row: Vec<f64> = (0..k)
        .map(|i| (0..k).map(|j| pr.col[j] * wij(i, j)).sum())
        .collect();
    let w_col: Vec<f64> = (0..k)
        .map(|j| (0..k).map(|i| pr.row[i] * wij(i, j)).sum())
        .collect();
    let fac = 1.0 / ((1.0 - p_e_w).powi(2) * pr.n);
    let mut term_a = 0.0;
    let mut term0 = 0.0;
    for (i, wr) in w_row.iter().enumerate() {
        for (j, wc) in w_col.iter().enumerate() {
            term_a += pr.p(i, j) * (wij(i, j) - (wc + wr) * (1.0 - kappa)).powi(2);
            term0 += pr.col[j] * pr.row[i] * (wij(i, j) - (wc + wr)).powi(2);
        }
    }
    let var = (term_a - (kappa - p_e_w * (1.0 - kappa)).powi(2)) * fac;
    let var0 = (term0 - p_e_w * p_e_w) * fac;
    out.std_kappa = se_from_var(var);
    if let Some(se) = out.std_kappa {
        out.ci95_low = finite(kappa - Z_95 * se);
        out.ci95_high = finite(kappa + Z_95 * se);
    }
    out.std_kappa0 = se_from_var(var0);
    let (z, p1, p2) = z_test(kappa, out.std_kappa0);
    out.z = z;
    out.p_one_sided = p1;
    out.p_two_sided = p2;
    out
}

/// Prevalence- and bias-adjusted kappa (Brennan-Prediger), irrCAC `bp()`:
/// `(q p_o - 1)/(q - 1)` with q the number of declared categories. `None` when q < 2 or
/// the table is empty.
pub fn pabak(t: &Table) -> Option<f64> {
    let q = t.k;
    if q < 2 {
        return None;
    }
    let p_o = percent_agreement(t)?;
    finite((q as f64 * p_o - 1.0) / (q as f64 - 1.0))
}

/// Pooled category proportions `pi_k = (p_k. + p_.k)/2`.
fn pooled_props(pr: &Props) -> Vec<f64> {
    (0..pr.k).map(|c| (pr.row[c] + pr.col[c]) / 2.0).collect()
}

/// Scott's pi: `(p_o - sum pi_k^2)/(1 - sum pi_k^2)` with pooled marginals, as
/// statsmodels `fleiss_kappa` with two raters and irrCAC `table.CAC.scott()`.
/// `None` when the table is empty or both raters used a single category.
pub fn scott_pi(t: &Table) -> Option<f64> {
    let pr = Props::of(t)?;
    if t.single_shared_category().is_some() {
        return None;
    }
    let p_o: f64 = (0..pr.k).map(|i| pr.p(i, i)).sum();
    let p_e: f64 = pooled_props(&pr).iter().map(|x| x * x).sum();
    if !is_above(1.0 - p_e, 0.0) {
        return None;
    }
    finite((p_o - p_e) / (1.0 - p_e))
}

/// Gwet's AC1 from a table (irrCAC `table.CAC.gwet()`): coefficient and its parts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GwetTable {
    pub value: f64,
    pub p_a: f64,
    pub p_e: f64,
}

/// Gwet's AC1 from a table: `p_e = sum_k pi_k(1-pi_k)/(q-1)` with
/// `pi_k = (p_k. + p_.k)/2` and q the number of declared categories. `None` for an empty
/// table or q < 2. (irrCAC's table-form SE differs from the raw form and is not given;
/// use [`gwet_ac1_pairs`] for an SE.)
pub fn gwet_ac1_table(t: &Table) -> Option<GwetTable> {
    let pr = Props::of(t)?;
    let q = pr.k;
    if q < 2 {
        return None;
    }
    let p_a: f64 = (0..q).map(|i| pr.p(i, i)).sum();
    let p_e: f64 = pooled_props(&pr).iter().map(|x| x * (1.0 - x)).sum::<f64>() / (q as f64 - 1.0);
    if !is_above(1.0 - p_e, 0.0) {
        return None;
    }
    Some(GwetTable {
        value: finite((p_a - p_e) / (1.0 - p_e))?,
        p_a,
        p_e,
    })
}

/// Krippendorff's alpha (nominal) for two raters from their table, with no missing
/// values: every item is a unit with two values, so the coincidence matrix is
/// `T + T'` and `alpha = 1 - (n-1) sum_{c!=k} o_ck / (n^2 - sum_c n_c^2)` with
/// `n = 2N` and `n_c = p_c. + p_.c` counts. Equals [`crate::stats::pairs::krippendorff_alpha_pairs`] without
/// expanding the table into pairs. `None` when the expected disagreement is 0 or there
/// are fewer than two items.
pub fn krippendorff_alpha_table(t: &Table) -> Option<f64> {
    let k = t.k;
    let items = t.total();
    if !is_above(items, 1.0) {
        return None;
    }
    let n = 2.0 * items;
    let rows = t.row_sums();
    let cols = t.col_sums();
    let sum_nc2: f64 = (0..k).map(|c| (rows[c] + cols[c]).powi(2)).sum();
    let mut off = 0.0;
    for c in 0..k {
        for j in 0..k {
            if c != j {
                off += t.get(c, j) + t.get(j, c);
            }
        }
    }
    let denominator = n * n - sum_nc2;
    if !is_above(denominator, 0.0) {
        return None;
    }
    finite(1.0 - (n - 1.0) * off / denominator)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::multi::AlphaLevel;
    use crate::stats::pairs::{krippendorff_alpha_pairs, two_rater_summary};

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-12)
    }

    #[test]
    fn the_bounded_interval_stays_within_minus_one_and_one() {
        // A small table whose Wald interval passes 1 (the demo's [-0.41, 1.07] kind).
        let t = Table::from_rows(&[[3.0, 0.0], [1.0, 1.0]]).unwrap();
        let c = cohen_kappa(&t);
        let (lo, hi) = (c.ci95_low.unwrap(), c.ci95_high.unwrap());
        assert!(hi > 1.0, "the unclipped interval passes 1: {hi}");
        let [blo, bhi] = kappa_ci95_bounded(c.ci95_low, c.ci95_high).unwrap();
        assert_eq!((blo, bhi), (lo.max(-1.0), 1.0));
        assert!(blo <= c.kappa.unwrap() && c.kappa.unwrap() <= bhi);
        // Both ends out of range, an interval inside, and undefined ends.
        assert_eq!(kappa_ci95_bounded(Some(-1.4), Some(1.2)), Some([-1.0, 1.0]));
        assert_eq!(kappa_ci95_bounded(Some(0.2), Some(0.6)), Some([0.2, 0.6]));
        assert_eq!(kappa_ci95_bounded(None, Some(0.6)), None);
        assert_eq!(kappa_ci95_bounded(Some(f64::NAN), Some(0.6)), None);
        assert_eq!(kappa_ci95_bounded(Some(0.7), Some(0.6)), None);
    }

    #[test]
    fn the_bounded_interval_holds_for_every_small_table() {
        // Every 2x2 table with up to 6 items in each cell.
        for a in 0..=6 {
            for b in 0..=6 {
                for c in 0..=6 {
                    for d in 0..=6 {
                        let t = Table::from_rows(&[[a as f64, b as f64], [c as f64, d as f64]])
                            .unwrap();
                        let k = cohen_kappa(&t);
                        let Some([lo, hi]) = kappa_ci95_bounded(k.ci95_low, k.ci95_high) else {
                            assert!(k.ci95_low.is_none() || k.ci95_high.is_none());
                            continue;
                        };
                        assert!((-1.0..=1.0).contains(&lo) && (-1.0..=1.0).contains(&hi));
                        assert!(lo <= hi);
                        let kappa = k.kappa.unwrap();
                        assert!(
                            lo <= kappa + 1e-12 && kappa <= hi + 1e-12,
                            "{a} {b} {c} {d}"
                        );
                        // Where the Wald interval is inside the range, it is unchanged.
                        if k.ci95_low.unwrap() >= -1.0 && k.ci95_high.unwrap() <= 1.0 {
                            assert_eq!((lo, hi), (k.ci95_low.unwrap(), k.ci95_high.unwrap()));
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn hand_example() {
        // 5 both pass, 2 both reject, 2 A-pass/B-reject, 1 A-reject/B-pass.
        let t = Table::from_rows(&[[5.0, 2.0], [1.0, 2.0]]).unwrap();
        let c = cohen_kappa(&t);
        assert!(close(c.p_o, 0.7));
        assert!(close(c.p_e, 0.54));
        assert!(close(c.kappa, 0.16 / 0.46));
        assert!(close(pabak(&t), 0.4));
    }

    #[test]
    fn undefined_when_one_category() {
        let t = Table::from_rows(&[[12.0, 0.0], [0.0, 0.0]]).unwrap();
        let c = cohen_kappa(&t);
        assert_eq!(c.kappa, None);
        assert_eq!(c.p_e, Some(1.0));
        assert_eq!(c.std_kappa, None);
        assert_eq!(c.z, None);
        assert!(c.undefined_reason.is_some());
        assert_eq!(scott_pi(&t), None);
        assert_eq!(weighted_kappa(&t, KappaWeights::Linear).kappa, None);
        assert_eq!(pabak(&t), Some(1.0));
        let g = gwet_ac1_table(&t).unwrap();
        assert_eq!(g.value, 1.0);
    }

    #[test]
    fn empty_and_degenerate_inputs_do_not_panic() {
        for t in [Table::zeros(0), Table::zeros(1), Table::zeros(2)] {
            let c = cohen_kappa(&t);
            assert_eq!(c.kappa, None);
            assert_eq!(c.p_o, None);
            assert_eq!(percent_agreement(&t), None);
            assert_eq!(pabak(&t), None);
            assert_eq!(scott_pi(&t), None);
            assert_eq!(gwet_ac1_table(&t), None);
            assert_eq!(weighted_kappa(&t, KappaWeights::Quadratic).kappa, None);
        }
        let one = Table::from_rows(&[[3.0]]).unwrap();
        assert_eq!(cohen_kappa(&one).kappa, None);
        assert_eq!(pabak(&one), None);
        assert!(Table::from_rows(&[vec![1.0, 2.0]]).is_err());
        assert!(Table::from_rows(&[[1.0, -2.0], [0.0, 0.0]]).is_err());
        assert!(Table::from_rows(&[[1.0, f64::NAN], [0.0, 0.0]]).is_err());
        assert!(Table::from_index_pairs(2, &[(0, 2)]).is_err());
        assert!(two_rater_summary(2, &[]).is_ok());
    }

    #[test]
    fn pooling_sums_cells() {
        let a = Table::from_rows(&[[1.0, 2.0], [3.0, 4.0]]).unwrap();
        let b = Table::from_rows(&[[10.0, 0.0], [0.5, 1.0]]).unwrap();
        let p = pool_tables(&[a.clone(), b]).unwrap();
        assert_eq!(p.rows(), vec![vec![11.0, 2.0], vec![3.5, 5.0]]);
        assert!(pool_tables(&[]).is_err());
        assert!(pool_tables(&[a, Table::zeros(3)]).is_err());
    }

    #[test]
    fn paper_pooled_tables() {
        let s1 = Table::from_rows(&[[1045.0, 42.5], [42.5, 70.0]]).unwrap();
        assert!((cohen_kappa(&s1).kappa.unwrap() - 0.5831417624521075).abs() < 1e-12);
        let s2 = Table::from_rows(&[[9677.0, 21.5], [21.5, 80.0]]).unwrap();
        assert!((cohen_kappa(&s2).kappa.unwrap() - 0.78596050224617).abs() < 1e-12);
    }

    #[test]
    fn labels_build_tables() {
        let cats = ["pass", "reject"];
        let t = Table::from_label_pairs(&cats, &[("pass", "reject"), ("pass", "pass")]).unwrap();
        assert_eq!(t.rows(), vec![vec![1.0, 1.0], vec![0.0, 0.0]]);
        assert!(Table::from_label_pairs(&cats, &[("pass", "maybe")]).is_err());
    }

    #[test]
    fn alpha_from_the_table_equals_alpha_from_the_pairs() {
        let pairs = [
            (0, 0),
            (0, 0),
            (0, 1),
            (1, 0),
            (1, 1),
            (0, 0),
            (1, 1),
            (0, 1),
            (2, 2),
            (2, 0),
        ];
        let t = Table::from_index_pairs(3, &pairs).unwrap();
        let a = krippendorff_alpha_table(&t).unwrap();
        let b = krippendorff_alpha_pairs(3, &pairs, AlphaLevel::Nominal)
            .unwrap()
            .unwrap();
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
        let same = Table::from_index_pairs(2, &[(0, 0), (0, 0)]).unwrap();
        assert_eq!(krippendorff_alpha_table(&same), None);
    }
}

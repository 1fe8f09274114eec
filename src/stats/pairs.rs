//! Two raters' verdicts as index pairs, with every estimator the two-rater report
//! shows: the table's own (`agreement`: Cohen, PABAK, Scott) beside the multi-rater
//! estimators applied to two raters (`multi`: Gwet's AC1 with its SE, Krippendorff's
//! alpha at each level).

use serde::Serialize;

use super::StatsError;
use super::agreement::{
    CohenKappa, KappaWeights, Table, WeightedKappa, cohen_kappa, pabak, percent_agreement,
    scott_pi, weighted_kappa,
};
use super::multi::{self, AlphaLevel, CacEstimate, Ratings};

/// Gwet's AC1 with its SE, t-based CI and p-value from raw index pairs over `q`
/// declared categories: irrCAC `raw.CAC(ratings, categories=declared).gwet()` with two
/// raters. See [`multi::gwet_ac1`].
pub fn gwet_ac1_pairs(
    q: usize,
    pairs: &[(usize, usize)],
) -> Result<Option<CacEstimate>, StatsError> {
    Ok(multi::gwet_ac1(&Ratings::from_pairs(q, pairs)?))
}

/// Krippendorff's alpha for two raters from index pairs (no missing values).
pub fn krippendorff_alpha_pairs(
    q: usize,
    pairs: &[(usize, usize)],
    level: AlphaLevel,
) -> Result<Option<f64>, StatsError> {
    Ok(multi::krippendorff_alpha(
        &Ratings::from_pairs(q, pairs)?,
        level,
    ))
}

/// Everything the two-rater report shows for one set of pairs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TwoRaterSummary {
    pub n: usize,
    pub table: Table,
    pub percent_agreement: Option<f64>,
    pub cohen: CohenKappa,
    pub pabak: Option<f64>,
    pub scott_pi: Option<f64>,
    pub gwet_ac1: Option<CacEstimate>,
    pub krippendorff_alpha_nominal: Option<f64>,
}

/// All nominal two-rater statistics for index pairs over `q` declared categories.
pub fn two_rater_summary(
    q: usize,
    pairs: &[(usize, usize)],
) -> Result<TwoRaterSummary, StatsError> {
    let table = Table::from_index_pairs(q, pairs)?;
    let ratings = Ratings::from_pairs(q, pairs)?;
    Ok(TwoRaterSummary {
        n: pairs.len(),
        percent_agreement: percent_agreement(&table),
        cohen: cohen_kappa(&table),
        pabak: pabak(&table),
        scott_pi: scott_pi(&table),
        gwet_ac1: multi::gwet_ac1(&ratings),
        krippendorff_alpha_nominal: multi::krippendorff_alpha(&ratings, AlphaLevel::Nominal),
        table,
    })
}

/// Ordinal two-rater statistics: weighted kappas and Krippendorff's alpha on the index
/// scale 0..q-1.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OrdinalSummary {
    pub n: usize,
    pub table: Table,
    pub percent_agreement: Option<f64>,
    pub unweighted: CohenKappa,
    pub linear: WeightedKappa,
    pub quadratic: WeightedKappa,
    pub krippendorff_alpha_ordinal: Option<f64>,
    pub krippendorff_alpha_interval: Option<f64>,
}

/// All ordinal two-rater statistics for index pairs over `q` ordered categories.
pub fn ordinal_summary(q: usize, pairs: &[(usize, usize)]) -> Result<OrdinalSummary, StatsError> {
    let table = Table::from_index_pairs(q, pairs)?;
    let ratings = Ratings::from_pairs(q, pairs)?;
    Ok(OrdinalSummary {
        n: pairs.len(),
        percent_agreement: percent_agreement(&table),
        unweighted: cohen_kappa(&table),
        linear: weighted_kappa(&table, KappaWeights::Linear),
        quadratic: weighted_kappa(&table, KappaWeights::Quadratic),
        krippendorff_alpha_ordinal: multi::krippendorff_alpha(&ratings, AlphaLevel::Ordinal),
        krippendorff_alpha_interval: multi::krippendorff_alpha(&ratings, AlphaLevel::Interval),
        table,
    })
}

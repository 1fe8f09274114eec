//! Rankings: mean rank and spread per source, the Friedman test, Kendall's W and the
//! F form of the Friedman test.
//!
//! A block is the ranks one judge gave to the k sources of one set, in a fixed source
//! order; 1 = best, ties averaged (1, 2.5, 2.5, 4).
//!
//! References matched (see `tests/data/golden/README.md`): numpy mean and
//! `std(ddof=1)`; `scipy.stats.friedmanchisquare` (tie-corrected chi-square, p from
//! the chi-square sf with k-1 df); `pingouin.friedman` for Kendall's W (tie-corrected)
//! and `method="f"`. Like scipy and pingouin, the tests re-rank every block with
//! average ranks, so blocks of scores work too; the per-source mean and SD use the
//! values as given.

use serde::Serialize;

use super::{StatsError, chi2_sf, f_sf, finite, is_above};

/// Mean and sample standard deviation (ddof = 1) of one source's ranks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SourceRankStats {
    pub n: usize,
    /// `None` when n = 0.
    pub mean: Option<f64>,
    /// `None` when n < 2.
    pub std: Option<f64>,
}

/// Friedman's chi-square test.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Friedman {
    pub chi2: f64,
    pub dof: usize,
    pub p_value: f64,
}

/// The F form of the Friedman test (pingouin `friedman(method="f")`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FriedmanF {
    #[serde(rename = "F")]
    pub f: f64,
    pub dof1: f64,
    pub dof2: f64,
    pub p_value: f64,
}

/// Everything the ranking report shows for one axis.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankingSummary {
    pub n_blocks: usize,
    pub k: usize,
    /// Whether any block has tied values.
    pub has_ties: bool,
    /// One entry per source, in block order.
    pub per_source: Vec<SourceRankStats>,
    pub friedman: Option<Friedman>,
    pub kendall_w: Option<f64>,
    pub friedman_f: Option<FriedmanF>,
}

/// Ranks of `values` (1 = smallest), ties given their average rank, as
/// `scipy.stats.rankdata(method="average")`. NaN values compare as equal to each other
/// and greater than everything else (callers validate finiteness first).
pub fn average_ranks(values: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..values.len()).collect();
    idx.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && values[idx[j + 1]] == values[idx[i]] {
            j += 1;
        }
        // Positions i..=j (0-based) share the average of ranks i+1..=j+1.
        let avg = (i + j) as f64 / 2.0 + 1.0;
        for &p in &idx[i..=j] {
            ranks[p] = avg;
        }
        i = j + 1;
    }
    ranks
}

/// Sizes of the groups of tied values (only groups of 2 or more).
fn tie_groups(values: &[f64]) -> Vec<usize> {
    let mut v: Vec<f64> = values.to_vec();
    v.sort_by(f64::total_cmp);
    let mut out = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[i] {
            j += 1;
        }
        if j > i {
            out.push(j - i + 1);
        }
        i = j + 1;
    }
    out
}

/// Mean and sample SD (ddof = 1).
pub fn mean_std(values: &[f64]) -> SourceRankStats {
    let n = values.len();
    if n == 0 {
        return SourceRankStats {
            n,
            mean: None,
            std: None,
        };
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let std = (n >= 2).then(|| {
        let ss: f64 = values.iter().map(|x| (x - mean).powi(2)).sum();
        (ss / (n - 1) as f64).sqrt()
    });
    SourceRankStats {
        n,
        mean: finite(mean),
        std: std.and_then(finite),
    }
}

/// Checks that blocks are non-empty, of equal length and finite; returns k.
fn validate(blocks: &[Vec<f64>]) -> Result<usize, StatsError> {
    let k = blocks.first().map_or(0, Vec::len);
    for (b, block) in blocks.iter().enumerate() {
        if block.len() != k {
            return Err(StatsError::Ragged {
                row: b,
                len: block.len(),
                expected: k,
            });
        }
        for (j, x) in block.iter().enumerate() {
            if !x.is_finite() {
                return Err(StatsError::InvalidValue {
                    value: x.to_string(),
                    at: format!("block {b}, source {j}"),
                });
            }
        }
    }
    Ok(k)
}

/// Sum of squared column rank sums and the tie term `sum_blocks sum_ties (t^3 - t)`.
fn rank_sums(blocks: &[Vec<f64>], k: usize) -> (f64, f64) {
    let mut col = vec![0.0; k];
    let mut ties = 0.0;
    for block in blocks {
        for (acc, r) in col.iter_mut().zip(average_ranks(block)) {
            *acc += r;
        }
        for t in tie_groups(block) {
            let t = t as f64;
            ties += t * (t * t - 1.0);
        }
    }
    (col.iter().map(|r| r * r).sum(), ties)
}

/// Friedman's chi-square, tie-corrected, as `scipy.stats.friedmanchisquare`:
/// `chi2 = (12/(n k (k+1)) sum R_j^2 - 3 n (k+1)) / (1 - sum(t^3-t)/(n k (k^2-1)))`,
/// `p = chi2.sf(chi2, k-1)`. `None` for malformed blocks, n = 0, k < 2, or when every
/// block is fully tied.
pub fn friedman(blocks: &[Vec<f64>]) -> Option<Friedman> {
    let k = validate(blocks).ok()?;
    let n = blocks.len();
    if n == 0 || k < 2 {
        return None;
    }
    let (nf, kf) = (n as f64, k as f64);
    let (ssbn, ties) = rank_sums(blocks, k);
    let c = 1.0 - ties / (kf * (kf * kf - 1.0) * nf);
    if !is_above(c, 1e-12) {
        return None;
    }
    let chi2 = finite((12.0 / (kf * nf * (kf + 1.0)) * ssbn - 3.0 * nf * (kf + 1.0)) / c)?;
    let p_value = chi2_sf(chi2, kf - 1.0)?;
    Some(Friedman {
        chi2,
        dof: k - 1,
        p_value,
    })
}

/// Kendall's W with tie correction, as `pingouin.friedman(...)["W"]`:
/// `W = (12 sum R_j^2 - 3 n^2 k (k+1)^2) / (n^2 k (k^2-1) - n sum(t^3-t))`.
/// `None` for malformed blocks, n = 0, k < 2, or when every block is fully tied.
pub fn kendall_w(blocks: &[Vec<f64>]) -> Option<f64> {
    let k = validate(blocks).ok()?;
    let n = blocks.len();
    if n == 0 || k < 2 {
        return None;
    }
    let (nf, kf) = (n as f64, k as f64);
    let (ssbn, ties) = rank_sums(blocks, k);
    let den = nf * nf * kf * (kf * kf - 1.0) - nf * ties;
    if !is_above(den, 1e-12) {
        return None;
    }
    finite((12.0 * ssbn - 3.0 * nf * nf * kf * (kf + 1.0).powi(2)) / den)
}

/// The F form of the Friedman test, as `pingouin.friedman(method="f")`:
/// `F = W(n-1)/(1-W)`, `dof1 = k-1-2/n`, `dof2 = (n-1) dof1`, p from the F sf.
/// `None` when W is undefined or 1 (F infinite), or `dof1 <= 0`.
pub fn friedman_f(blocks: &[Vec<f64>]) -> Option<FriedmanF> {
    let w = kendall_w(blocks)?;
    let n = blocks.len() as f64;
    let k = blocks.first().map_or(0, Vec::len) as f64;
    if !is_above(1.0 - w, 0.0) {
        return None;
    }
    let f = finite(w * (n - 1.0) / (1.0 - w))?;
    let dof1 = k - 1.0 - 2.0 / n;
    let dof2 = (n - 1.0) * dof1;
    if !(dof1 > 0.0 && dof2 > 0.0) {
        return None;
    }
    let p_value = f_sf(f, dof1, dof2)?;
    Some(FriedmanF {
        f,
        dof1,
        dof2,
        p_value,
    })
}

/// All ranking statistics for blocks of k values each (one block per judge and set).
pub fn ranking_summary(blocks: &[Vec<f64>]) -> Result<RankingSummary, StatsError> {
    let k = validate(blocks)?;
    let per_source = (0..k)
        .map(|j| {
            let col: Vec<f64> = blocks.iter().map(|b| b[j]).collect();
            mean_std(&col)
        })
        .collect();
    Ok(RankingSummary {
        n_blocks: blocks.len(),
        k,
        has_ties: blocks.iter().any(|b| !tie_groups(b).is_empty()),
        per_source,
        friedman: friedman(blocks),
        kendall_w: kendall_w(blocks),
        friedman_f: friedman_f(blocks),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn average_ranks_ties() {
        assert_eq!(
            average_ranks(&[10.0, 20.0, 20.0, 30.0]),
            vec![1.0, 2.5, 2.5, 4.0]
        );
        assert_eq!(average_ranks(&[3.0, 1.0, 2.0]), vec![3.0, 1.0, 2.0]);
        assert!(average_ranks(&[]).is_empty());
    }

    #[test]
    fn hand_example() {
        let blocks: Vec<Vec<f64>> = [
            [1, 2, 3, 4],
            [1, 3, 2, 4],
            [2, 1, 3, 4],
            [1, 2, 4, 3],
            [1, 2, 3, 4],
            [2, 1, 4, 3],
        ]
        .iter()
        .map(|b| b.iter().map(|&x| f64::from(x)).collect())
        .collect();
        let s = ranking_summary(&blocks).unwrap();
        let f = s.friedman.unwrap();
        assert!((f.chi2 - 13.0).abs() < 1e-12);
        assert!((s.kendall_w.unwrap() - 0.7222222222222222).abs() < 1e-12);
        assert!((s.friedman_f.unwrap().f - 13.0).abs() < 1e-9);
    }

    #[test]
    fn degenerate() {
        assert!(ranking_summary(&[]).is_ok());
        assert_eq!(friedman(&[]), None);
        let tied = vec![vec![1.5, 1.5], vec![1.5, 1.5]];
        let s = ranking_summary(&tied).unwrap();
        assert!(s.has_ties);
        assert_eq!(s.friedman, None);
        assert_eq!(s.kendall_w, None);
        assert_eq!(s.friedman_f, None);
        let perfect = vec![vec![1.0, 2.0, 3.0]; 4];
        assert_eq!(kendall_w(&perfect), Some(1.0));
        assert_eq!(friedman_f(&perfect), None);
        assert!(ranking_summary(&[vec![1.0, 2.0], vec![1.0]]).is_err());
        assert!(ranking_summary(&[vec![1.0, f64::NAN]]).is_err());
        assert_eq!(mean_std(&[2.0]).std, None);
        let one = ranking_summary(&[vec![1.0, 2.0]]).unwrap();
        assert_eq!(one.friedman_f, None);
    }
}

//! How good the review is, from the QC's counted verdicts: each validator's sensitivity
//! and specificity, the author's, the prevalence of defects per task and the residual
//! defect rate of the retained set, per stage (`tandem::stats::quality` does the
//! estimating; this turns the store's counts into its input and its output into the
//! reply). A verdict `reject` is a rating "defective"; the author who resolves a split
//! is one more rater ("author", every author together), not the truth.

use crate::domain::facts::OutcomeCount;
use crate::domain::taxonomy::Taxonomy;
use crate::stats::quality::{self, Figure, Item, Options, Review};
use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// One figure: an estimate with its 95% interval when the data identify it, or the
/// bounds the data allow when they do not.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct QualityFigure {
    pub estimate: Option<f64>,
    pub ci95: Option<[f64; 2]>,
    /// When not identified: the least and the most the data allow.
    pub bounds: Option<[f64; 2]>,
    /// How the figure was made, in words.
    pub method: String,
}

impl From<&Figure> for QualityFigure {
    fn from(f: &Figure) -> Self {
        QualityFigure {
            estimate: f.estimate,
            ci95: f.ci95,
            bounds: f.bounds,
            method: f.method.clone(),
        }
    }
}

/// One rater's accuracy in one stage.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RaterQualityReply {
    /// The validator's name (`author` in the author's rows).
    pub validator: String,
    pub stage: i64,
    /// The share of defective items rejected.
    pub sensitivity: QualityFigure,
    /// The share of sound items passed.
    pub specificity: QualityFigure,
    /// Counted verdicts, and of them on known defects and known sound items.
    pub ratings: usize,
    pub known_defects: usize,
    pub known_sound: usize,
}

/// One stage's estimates.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct StageQualityReply {
    pub stage: i64,
    pub identified: bool,
    /// Why not, when not.
    pub reason: Option<String>,
    /// Items reviewed by both validators (and known items), of them retained.
    pub items: usize,
    pub retained: usize,
    pub known_items: usize,
    /// The expected share of the stage's retained items that are defective.
    pub residual_defect_rate: QualityFigure,
    /// The share of defective items per task.
    pub prevalence: BTreeMap<String, QualityFigure>,
}

/// `review_quality` in the statistics.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ReviewQualityReply {
    /// Every validator in every stage they reviewed.
    pub validators: Vec<RaterQualityReply>,
    /// The authors who resolved splits, as one rater, per stage.
    pub author: Vec<RaterQualityReply>,
    /// The retained benchmark's: Stage 2's (the questions kept), or Stage 1's in a
    /// campaign without question review.
    pub residual_defect_rate: QualityFigure,
    /// Per stage: the residual rate, the prevalence per task, and whether the data
    /// identify them.
    pub stages: Vec<StageQualityReply>,
    /// The model in words.
    pub model: String,
}

/// The name the authors share as a rater.
pub const AUTHOR: &str = "author";

/// One stage's review from the counted outcomes: decided items only (not pending, not
/// retained by sample), each row expanded to its count.
fn stage_review(tax: &Taxonomy, outcomes: &[OutcomeCount], stage: i64) -> (Review, Vec<String>) {
    let rows: Vec<&OutcomeCount> = outcomes
        .iter()
        .filter(|c| c.stage == stage && c.outcome != "pending" && c.outcome != "by_sample")
        .collect();
    let mut raters: Vec<String> = rows
        .iter()
        .flat_map(|c| [c.rater1.clone(), c.rater2.clone()])
        .collect();
    raters.sort();
    raters.dedup();
    // The author is the last rater, never looked up by name (a validator may be
    // called anything).
    let author = raters.len();
    let index = |name: &str| raters.iter().position(|r| r == name).unwrap_or(author);
    let mut items = Vec::new();
    for c in rows {
        let Some(group) = tax.tasks.iter().position(|t| t.code == c.task) else {
            continue;
        };
        let rejected = |v: &Option<String>| v.as_deref() == Some("reject");
        let mut ratings = vec![
            (index(&c.rater1), rejected(&c.verdict1)),
            (index(&c.rater2), rejected(&c.verdict2)),
        ];
        match c.outcome.as_str() {
            "split_accepted" => ratings.push((author, false)),
            "split_rejected" => ratings.push((author, true)),
            _ => {}
        }
        let retained = c.outcome == "both_pass" || c.outcome == "split_accepted";
        for _ in 0..c.n.max(0) {
            items.push(Item {
                group,
                ratings: ratings.clone(),
                known: None,
                retained,
            });
        }
    }
    raters.push(AUTHOR.to_string());
    (
        Review {
            n_raters: raters.len(),
            n_groups: tax.tasks.len(),
            items,
        },
        raters,
    )
}

/// The estimates for every stage the campaign reviews (`stages`: 1 and 2, or 2 alone).
pub fn build(
    tax: &Taxonomy,
    outcomes: &[OutcomeCount],
    stages: &[i64],
    options: Options,
) -> Result<ReviewQualityReply, crate::stats::StatsError> {
    let mut validators = Vec::new();
    let mut authors = Vec::new();
    let mut out = Vec::new();
    for &stage in stages {
        let (review, names) = stage_review(tax, outcomes, stage);
        let q = quality::estimate(&review, options)?;
        for (i, (name, r)) in names.iter().zip(&q.raters).enumerate() {
            if r.ratings == 0 {
                continue;
            }
            let row = RaterQualityReply {
                validator: name.clone(),
                stage,
                sensitivity: (&r.sensitivity).into(),
                specificity: (&r.specificity).into(),
                ratings: r.ratings,
                known_defects: r.known_defects,
                known_sound: r.known_sound,
            };
            if i + 1 == names.len() {
                authors.push(row);
            } else {
                validators.push(row);
            }
        }
        out.push(StageQualityReply {
            stage,
            identified: q.identified,
            reason: q.reason.clone(),
            items: q.items,
            retained: q.retained,
            known_items: q.known_defects + q.known_sound,
            residual_defect_rate: (&q.residual_defect_rate).into(),
            prevalence: tax
                .tasks
                .iter()
                .zip(&q.prevalence)
                .filter(|(_, f)| f.estimate.is_some() || f.bounds.is_some())
                .map(|(t, f)| (t.code.clone(), f.into()))
                .collect(),
        });
    }
    let residual_defect_rate = out
        .last()
        .map(|s| s.residual_defect_rate.clone())
        .unwrap_or_else(|| {
            (&Figure {
                estimate: None,
                ci95: None,
                bounds: None,
                method: "no data".into(),
            })
                .into()
        });
    Ok(ReviewQualityReply {
        validators,
        author: authors,
        residual_defect_rate,
        stages: out,
        model: "Dawid-Skene latent-class model per stage (two classes: defective or sound), \
                fitted by EM with Jeffreys' Beta(1/2, 1/2) priors; a reject is a rating \
                \"defective\"; the authors who resolve splits are one more rater; known \
                items anchor the raters' accuracies"
            .into(),
    })
}

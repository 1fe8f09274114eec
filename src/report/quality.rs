//! How good the review is, from the QC's counted verdicts: each validator's sensitivity
//! and specificity, the author's, the prevalence of defects per task and the residual
//! defect rate of the retained set, per stage (`tandem::stats::quality` does the
//! estimating; this turns the store's counts into its input and its output into the
//! reply). A verdict `reject` is a rating "defective"; the author who resolves a split
//! is one more rater ("author", every author together), not the truth.

use super::format::{Col, CsvTable, tex};
use super::svg::{self, Caption};
use crate::domain::facts::OutcomeCount;
use crate::domain::records::KnownRecord;
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
    /// Set when too few ratings (a rater's) or decided items (a stage's) stand behind
    /// the figure: then it is not given (below [`MIN_QUALITY_COUNT`]).
    pub withheld: Option<super::Withheld>,
}

impl From<&Figure> for QualityFigure {
    fn from(f: &Figure) -> Self {
        QualityFigure {
            estimate: f.estimate,
            ci95: f.ci95,
            bounds: f.bounds,
            method: f.method.clone(),
            withheld: None,
        }
    }
}

/// The fewest counted ratings of a rater, or decided items of a stage, whose
/// review-quality figures are given: below it even the bounds rest on a handful of
/// verdicts and read more precise than they are (the same minimum as the agreement
/// figures'). README states it.
pub const MIN_QUALITY_COUNT: usize = 10;

impl QualityFigure {
    /// `self`, or nothing but the reason when `count` (of `what`) is below the minimum.
    fn unless_too_few(self, count: usize, what: &str) -> QualityFigure {
        if count >= MIN_QUALITY_COUNT {
            return self;
        }
        QualityFigure {
            estimate: None,
            ci95: None,
            bounds: None,
            method: self.method,
            withheld: Some(super::Withheld {
                items: count as i64,
                minimum: MIN_QUALITY_COUNT as i64,
                reason: format!("too few {what} ({count})"),
            }),
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
/// retained by sample), each row expanded to its count; and the known items of the
/// live queue, each with the verdicts it received and its truth (never retained).
fn stage_review(
    tax: &Taxonomy,
    outcomes: &[OutcomeCount],
    known: &[KnownRecord],
    stage: i64,
) -> (Review, Vec<String>, Vec<Option<usize>>) {
    let rows: Vec<(usize, &OutcomeCount)> = outcomes
        .iter()
        .enumerate()
        .filter(|(_, c)| c.stage == stage && c.outcome != "pending" && c.outcome != "by_sample")
        .collect();
    let known: Vec<&KnownRecord> = known.iter().filter(|k| k.stage == stage).collect();
    let mut raters: Vec<String> = rows
        .iter()
        .flat_map(|(_, c)| [c.rater1.clone(), c.rater2.clone()])
        .chain(known.iter().map(|k| k.validator.clone()))
        .collect();
    raters.sort();
    raters.dedup();
    // The author is the last rater, never looked up by name (a validator may be
    // called anything).
    let author = raters.len();
    let index = |name: &str| raters.iter().position(|r| r == name).unwrap_or(author);
    let mut items = Vec::new();
    // Each item's row of `outcomes` (none for a known item).
    let mut origin = Vec::new();
    for (row, c) in rows {
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
            origin.push(Some(row));
        }
    }
    let mut by_item: BTreeMap<&str, Vec<&KnownRecord>> = BTreeMap::new();
    for k in known {
        by_item.entry(k.item_id.as_str()).or_default().push(k);
    }
    for ks in by_item.into_values() {
        let Some(group) = tax.tasks.iter().position(|t| t.code == ks[0].task) else {
            continue;
        };
        items.push(Item {
            group,
            ratings: ks
                .iter()
                .map(|k| (index(&k.validator), k.rejected()))
                .collect(),
            known: Some(ks[0].defect()),
            retained: false,
        });
        origin.push(None);
    }
    raters.push(AUTHOR.to_string());
    (
        Review {
            n_raters: raters.len(),
            n_groups: tax.tasks.len(),
            items,
        },
        raters,
        origin,
    )
}

/// One decided item's probability of a defect under the stage's fitted model.
#[derive(Debug, Clone, PartialEq)]
pub struct DefectProbability {
    pub stage: i64,
    pub item_id: String,
    pub clip_id: String,
    pub task: String,
    pub outcome: String,
    pub retained: bool,
    /// `None` when the stage's data do not identify the model (no known items of both
    /// kinds): then no item has a probability, only the bounds of the figures.
    pub probability: Option<f64>,
}

/// Each decided item's probability of a defect (the posterior of the stage's best
/// Dawid-Skene fit, anchored by the known items), for the stages given.
pub fn defect_probabilities(
    tax: &Taxonomy,
    items: &[crate::domain::facts::DecidedItem],
    known: &[KnownRecord],
    stages: &[i64],
    options: Options,
) -> Result<Vec<DefectProbability>, crate::stats::StatsError> {
    let counts: Vec<OutcomeCount> = items.iter().map(|d| d.count.clone()).collect();
    let mut p: Vec<Option<f64>> = vec![None; items.len()];
    for &stage in stages {
        let (review, _, origin) = stage_review(tax, &counts, known, stage);
        if review.items.is_empty() {
            continue;
        }
        let q = quality::estimate(&review, options)?;
        if !q.identified {
            continue;
        }
        for (post, from) in q.posterior.iter().zip(&origin) {
            if let Some(row) = from {
                p[*row] = Some(*post);
            }
        }
    }
    Ok(items
        .iter()
        .zip(p)
        .filter(|(d, _)| stages.contains(&d.count.stage))
        .map(|(d, probability)| DefectProbability {
            stage: d.count.stage,
            item_id: d.item_id.clone(),
            clip_id: d.clip_id.clone(),
            task: d.count.task.clone(),
            outcome: d.count.outcome.clone(),
            retained: d.count.outcome == "both_pass" || d.count.outcome == "split_accepted",
            probability,
        })
        .collect())
}

/// The items' probabilities as CSV (`defect-probabilities.csv`).
pub fn defect_csv(rows: &[DefectProbability]) -> CsvTable {
    let mut t = CsvTable::new(&[
        ("stage", Col::Num),
        ("item_id", Col::Text),
        ("clip_id", Col::Text),
        ("task", Col::Text),
        ("outcome", Col::Text),
        ("retained", Col::Num),
        ("defect_probability", Col::Num),
    ]);
    for r in rows {
        t.rows.push(vec![
            r.stage.to_string(),
            r.item_id.clone(),
            r.clip_id.clone(),
            r.task.clone(),
            r.outcome.clone(),
            u8::from(r.retained).to_string(),
            r.probability.map_or_else(String::new, |p| format!("{p}")),
        ]);
    }
    t
}

/// The estimates for every stage the campaign reviews (`stages`: 1 and 2, or 2 alone).
pub fn build(
    tax: &Taxonomy,
    outcomes: &[OutcomeCount],
    known: &[KnownRecord],
    stages: &[i64],
    options: Options,
) -> Result<ReviewQualityReply, crate::stats::StatsError> {
    let mut validators = Vec::new();
    let mut authors = Vec::new();
    let mut out = Vec::new();
    for &stage in stages {
        let (review, names, _) = stage_review(tax, outcomes, known, stage);
        let q = quality::estimate(&review, options)?;
        for (i, (name, r)) in names.iter().zip(&q.raters).enumerate() {
            if r.ratings == 0 {
                continue;
            }
            let row = RaterQualityReply {
                validator: name.clone(),
                stage,
                sensitivity: QualityFigure::from(&r.sensitivity)
                    .unless_too_few(r.ratings, "ratings"),
                specificity: QualityFigure::from(&r.specificity)
                    .unless_too_few(r.ratings, "ratings"),
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
            residual_defect_rate: QualityFigure::from(&q.residual_defect_rate)
                .unless_too_few(q.items, "items"),
            prevalence: tax
                .tasks
                .iter()
                .zip(&q.prevalence)
                .filter(|(_, f)| f.estimate.is_some() || f.bounds.is_some())
                .map(|(t, f)| {
                    (
                        t.code.clone(),
                        QualityFigure::from(f).unless_too_few(q.items, "items"),
                    )
                })
                .collect(),
        });
    }
    // The retained benchmark's: the last stage that retained anything (Stage 1's in a
    // campaign whose questions are not reviewed yet or at all).
    let residual_defect_rate = out
        .iter()
        .rev()
        .find(|s| s.retained > 0)
        .or(out.last())
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

impl QualityFigure {
    /// In words for a table: "0.852 [0.781, 0.910]" when estimated, "0.40 to 1.00
    /// (bounds)" when the data do not identify it, "no data" when there is nothing.
    pub fn text(&self, places: usize) -> String {
        match (self.estimate, self.ci95, self.bounds) {
            (Some(e), Some([lo, hi]), _) => format!("{e:.places$} [{lo:.places$}, {hi:.places$}]"),
            (Some(e), None, _) => format!("{e:.places$}"),
            (None, _, Some([lo, hi])) => format!("{lo:.places$} to {hi:.places$} (bounds)"),
            _ => self
                .withheld
                .as_ref()
                .map_or_else(|| "no data".into(), |w| w.reason.clone()),
        }
    }
}

impl ReviewQualityReply {
    /// One stage's raters: its validators by name, then the author.
    pub fn raters(&self, stage: i64) -> Vec<&RaterQualityReply> {
        self.validators
            .iter()
            .filter(|r| r.stage == stage)
            .chain(self.author.iter().filter(|r| r.stage == stage))
            .collect()
    }

    pub fn stage(&self, stage: i64) -> Option<&StageQualityReply> {
        self.stages.iter().find(|s| s.stage == stage)
    }
}

/// A stage's name in the figures and tables.
fn stage_name(stage: i64) -> &'static str {
    if stage == 1 {
        "Stage 1 (clips)"
    } else {
        "Stage 2 (questions)"
    }
}

/// One stage's raters as a forest plot: sensitivity and specificity side by side, a
/// point and its 95% interval when estimated, a pale bar over the bounds when the data
/// do not identify the figure; the residual defect rate in the notes.
pub fn forest(q: &ReviewQualityReply, stage: i64, caption: &Caption) -> String {
    use std::fmt::Write;
    use svg::{GRID, INK, MUTED, esc};
    let raters = q.raters(stage);
    let st = q.stage(stage);
    let (left, panel, gap, right, row) = (170u32, 220u32, 40u32, 24u32, 20u32);
    let title = format!(
        "Review quality · {}: each rater's sensitivity and specificity",
        stage_name(stage)
    );
    let top = 58u32;
    let n = raters.len().max(1) as u32;
    let axis_y = top + row * n + 4;
    let notes = forest_notes(st);
    let legend_y = axis_y + 46;
    let w = (left + 2 * panel + gap + right).max(svg::MIN_WIDTH);
    let h = legend_y + 8 + svg::footer_height(&notes);
    let mut s = svg::figure_open(w, h, &title);
    let panels = [
        (left, "Sensitivity (defects rejected)"),
        (left + panel + gap, "Specificity (sound items passed)"),
    ];
    for (x0, name) in panels {
        let x_of = |v: f64| f64::from(x0) + v.clamp(0.0, 1.0) * f64::from(panel);
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" font-weight=\"700\" fill=\"{MUTED}\">{}</text>",
            x_of(0.5),
            top - 12,
            esc(name)
        );
        for tick in [0.0, 0.25, 0.5, 0.75, 1.0] {
            let x = x_of(tick);
            let _ = write!(
                s,
                "<line x1=\"{x:.1}\" y1=\"{top}\" x2=\"{x:.1}\" y2=\"{axis_y}\" stroke=\"{GRID}\"/><text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\" fill=\"{MUTED}\">{tick}</text>",
                axis_y + 16
            );
        }
    }
    if raters.is_empty() {
        let _ = write!(
            s,
            "<text x=\"{left}\" y=\"{}\" fill=\"{MUTED}\">no decided items yet</text>",
            top + 14
        );
    }
    for (i, r) in raters.iter().enumerate() {
        let y = top + row * i as u32;
        let cy = y + 10;
        let author = r.validator == AUTHOR && i + 1 == raters.len() && !q.author.is_empty();
        let weight = if author { "700" } else { "400" };
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-weight=\"{weight}\">{}</text>",
            left - 8,
            y + 14,
            esc(&format!("{}, n={}", r.validator, r.ratings))
        );
        for ((x0, name), f) in panels.iter().zip([&r.sensitivity, &r.specificity]) {
            let x_of = |v: f64| f64::from(*x0) + v.clamp(0.0, 1.0) * f64::from(panel);
            let tip = esc(&format!("{} of {}: {}", name, r.validator, f.text(3)));
            match (f.estimate, f.ci95, f.bounds) {
                (Some(e), ci, _) => {
                    if let Some([lo, hi]) = ci {
                        let (l, rr) = (x_of(lo), x_of(hi));
                        let _ = write!(
                            s,
                            "<line x1=\"{l:.1}\" y1=\"{cy}\" x2=\"{rr:.1}\" y2=\"{cy}\" stroke=\"#b3361f\" stroke-width=\"1.5\"/>"
                        );
                        for e in [l, rr] {
                            let _ = write!(
                                s,
                                "<line x1=\"{e:.1}\" y1=\"{}\" x2=\"{e:.1}\" y2=\"{}\" stroke=\"#b3361f\" stroke-width=\"1.5\"/>",
                                cy - 4,
                                cy + 4
                            );
                        }
                    }
                    let fill = if author { INK } else { "#2b5fab" };
                    let _ = write!(
                        s,
                        "<circle cx=\"{:.1}\" cy=\"{cy}\" r=\"4\" fill=\"{fill}\"><title>{tip}</title></circle>",
                        x_of(e)
                    );
                }
                (None, _, Some([lo, hi])) => {
                    let (l, rr) = (x_of(lo), x_of(hi));
                    let _ = write!(
                        s,
                        "<rect x=\"{l:.1}\" y=\"{}\" width=\"{:.1}\" height=\"10\" fill=\"#c9d6ea\" stroke=\"#2b5fab\" stroke-width=\"0.75\"><title>{tip}</title></rect>",
                        cy - 5,
                        (rr - l).max(1.5)
                    );
                }
                _ => {
                    let _ = write!(
                        s,
                        "<text x=\"{}\" y=\"{}\" fill=\"#8a6100\">{}</text>",
                        x0 + 4,
                        y + 14,
                        esc(&f.text(3))
                    );
                }
            }
        }
    }
    // Legend.
    let mut x = 8;
    let _ = write!(
        s,
        "<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"#2b5fab\"/><text x=\"{}\" y=\"{legend_y}\">estimate</text>",
        x + 6,
        legend_y - 4,
        x + 16
    );
    x += 80;
    let _ = write!(
        s,
        "<line x1=\"{x}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#b3361f\" stroke-width=\"1.5\"/><text x=\"{}\" y=\"{legend_y}\">95% interval</text>",
        legend_y - 4,
        x + 16,
        legend_y - 4,
        x + 22
    );
    x += 120;
    svg::swatch(
        &mut s,
        x,
        legend_y,
        "#c9d6ea",
        "#2b5fab",
        "bounds the data allow (not identified)",
    );
    svg::figure_close(s, h, &notes, caption)
}

/// The forest's notes under the figure: the residual rate, what the bars mean, the model.
fn forest_notes(st: Option<&StageQualityReply>) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(st) = st {
        notes.push(format!(
            "Residual defect rate of the {} retained item(s): {} ({} reviewed by both, {} known item(s)).",
            st.retained,
            st.residual_defect_rate.text(3),
            st.items,
            st.known_items
        ));
        if !st.identified {
            notes.push(
                "Not identified (no known items of both kinds): the bars are the bounds the data allow, not estimates."
                    .into(),
            );
        }
    }
    notes.push(
        "Sensitivity: share of defective items rejected; specificity: share of sound items passed."
            .into(),
    );
    notes.push(if st.is_some_and(|st| st.identified) {
        "Dawid-Skene model anchored by known items; points: posterior means, whiskers: 95% credible intervals (Markov chain Monte Carlo); the author (all authors as one) rates splits."
            .into()
    } else {
        "Dawid-Skene model, not identified: bars over the simultaneous 95% region's bounds; the author (all authors as one) rates splits; n: counted verdicts.".into()
    });
    notes
}

/// The review-quality figures, one per reviewed stage, each captioned with its
/// stage's scope.
pub fn figures(
    q: &ReviewQualityReply,
    report: &super::QcReport,
    caption: &Caption,
) -> Vec<svg::Figure> {
    q.stages
        .iter()
        .map(|st| svg::Figure {
            name: if st.stage == 1 {
                "quality-stage1"
            } else {
                "quality-stage2"
            },
            svg: forest(q, st.stage, &report.stage_caption(st.stage, caption)),
        })
        .collect()
}

/// The raters' table as CSV: one row per rater and stage, then one per stage for the
/// residual defect rate (rater empty, `figure` = `residual_defect_rate`).
pub fn csv_table(q: &ReviewQualityReply) -> CsvTable {
    let mut t = CsvTable::new(&[
        ("stage", Col::Num),
        ("rater", Col::Text),
        ("figure", Col::Text),
        ("estimate", Col::Num),
        ("ci95_low", Col::Num),
        ("ci95_high", Col::Num),
        ("bound_low", Col::Num),
        ("bound_high", Col::Num),
        ("ratings", Col::Num),
        ("known_defects", Col::Num),
        ("known_sound", Col::Num),
        ("method", Col::Text),
    ]);
    let num = |x: Option<f64>| x.map_or_else(String::new, |v| format!("{v}"));
    let cells = |f: &QualityFigure| {
        vec![
            num(f.estimate),
            num(f.ci95.map(|c| c[0])),
            num(f.ci95.map(|c| c[1])),
            num(f.bounds.map(|c| c[0])),
            num(f.bounds.map(|c| c[1])),
        ]
    };
    for st in &q.stages {
        for r in q.raters(st.stage) {
            for (name, f) in [
                ("sensitivity", &r.sensitivity),
                ("specificity", &r.specificity),
            ] {
                let mut row = vec![st.stage.to_string(), r.validator.clone(), name.into()];
                row.extend(cells(f));
                row.extend([
                    r.ratings.to_string(),
                    r.known_defects.to_string(),
                    r.known_sound.to_string(),
                    f.method.clone(),
                ]);
                t.rows.push(row);
            }
        }
        let f = &st.residual_defect_rate;
        let mut row = vec![
            st.stage.to_string(),
            String::new(),
            "residual_defect_rate".into(),
        ];
        row.extend(cells(f));
        row.extend([
            st.retained.to_string(),
            String::new(),
            String::new(),
            f.method.clone(),
        ]);
        t.rows.push(row);
    }
    t
}

/// The raters' table as LaTeX (booktabs), with a caption a paper can use.
pub fn latex_table(q: &ReviewQualityReply) -> String {
    let mut out = String::new();
    out.push_str(
        "% Review quality: each rater's sensitivity and specificity. Generated by Tandem.\n",
    );
    out.push_str("% Needs \\usepackage{booktabs}.\n");
    out.push_str("\\begin{table}[t]\n\\centering\n");
    let identified = q.stages.iter().all(|s| s.identified);
    let how = if identified {
        "posterior means with 95\\% credible intervals (Dawid--Skene model anchored by known items, Beta(1/2, 1/2) priors, Markov chain Monte Carlo)"
    } else {
        "without known items of both kinds the model is not identified, so each cell gives the bounds the data allow (the least and the most over the simultaneous 95\\% likelihood-ratio region of all parameters, raters assumed better than chance), not an estimate"
    };
    out.push_str(&format!(
        "\\caption{{Review quality per rater: sensitivity (share of defective items rejected) and specificity (share of sound items passed), from a Dawid--Skene latent-class model fitted by EM per stage, the authors who resolved disagreements counted as one more rater; {how}. The last row of each stage is the expected share of defective items among the retained ones.}}\n"
    ));
    out.push_str("\\label{tab:review-quality}\n");
    out.push_str("\\begin{tabular}{llrll}\n\\toprule\nStage & Rater & Ratings & Sensitivity & Specificity \\\\\n\\midrule\n");
    for (i, st) in q.stages.iter().enumerate() {
        if i > 0 {
            out.push_str("\\midrule\n");
        }
        for r in q.raters(st.stage) {
            out.push_str(&format!(
                "{} & {} & {} & {} & {} \\\\\n",
                st.stage,
                tex(&r.validator),
                r.ratings,
                tex(&r.sensitivity.text(2)),
                tex(&r.specificity.text(2))
            ));
        }
        out.push_str(&format!(
            "{} & \\multicolumn{{2}}{{l}}{{residual defect rate ({} retained)}} & \\multicolumn{{2}}{{l}}{{{}}} \\\\\n",
            st.stage,
            st.retained,
            tex(&st.residual_defect_rate.text(3))
        ));
    }
    out.push_str("\\bottomrule\n\\end{tabular}\n\\end{table}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::facts::Scope;
    use std::collections::HashMap;

    fn count(r1: &str, r2: &str, outcome: &str, v: (&str, &str), n: i64) -> OutcomeCount {
        OutcomeCount {
            stage: 1,
            task: "MC_F_EGO_STA".into(),
            rater1: r1.into(),
            rater2: r2.into(),
            qa_type: None,
            outcome: outcome.into(),
            verdict1: Some(v.0.into()),
            verdict2: Some(v.1.into()),
            reasons1: Some(String::new()),
            reasons2: Some(String::new()),
            n,
        }
    }

    fn caption() -> Caption {
        Caption {
            campaign: "c".into(),
            scope: "Stage 1 over first versions".into(),
            computed: "2026-12-01T00:00:00Z".into(),
        }
    }

    /// Each decided item's probability of a defect: none without known items, and with
    /// them a rejected item's above a passed one's, each item beside its own row.
    #[test]
    fn each_item_has_its_patterns_probability_of_a_defect_once_known_items_identify_it() {
        let decided =
            |id: &str, outcome: &str, v: (&str, &str)| crate::domain::facts::DecidedItem {
                item_id: id.into(),
                clip_id: id.into(),
                count: count("a", "b", outcome, v, 1),
            };
        let mut items = Vec::new();
        for i in 0..30 {
            items.push(decided(&format!("p{i}"), "both_pass", ("valid", "valid")));
        }
        for i in 0..8 {
            items.push(decided(
                &format!("r{i}"),
                "both_reject",
                ("reject", "reject"),
            ));
        }
        items.push(decided("s0", "split_rejected", ("reject", "valid")));
        let tax = Taxonomy::vgenst();
        let none = defect_probabilities(&tax, &items, &[], &[1], Options::default()).unwrap();
        assert_eq!(none.len(), items.len());
        assert!(none.iter().all(|d| d.probability.is_none()));
        let mut known = Vec::new();
        for i in 0..6 {
            for (who, caught) in [("a", i != 0), ("b", true)] {
                known.push(KnownRecord {
                    stage: 1,
                    item_id: format!("k{i}"),
                    clip_id: format!("k{i}"),
                    task: "MC_F_EGO_STA".into(),
                    validator: who.into(),
                    verdict: if caught { "reject" } else { "valid" }.into(),
                    reasons: String::new(),
                    known_verdict: if i < 4 { "reject" } else { "valid" }.into(),
                    known_reasons: String::new(),
                    decided_at: i,
                    known_from: None,
                });
            }
        }
        // k4 and k5 are sound: b passes them, a rejected them (a false alarm each).
        for k in known
            .iter_mut()
            .filter(|k| k.known_verdict == "valid" && k.validator == "b")
        {
            k.verdict = "valid".into();
        }
        let p = defect_probabilities(&tax, &items, &known, &[1], Options::default()).unwrap();
        assert_eq!(p.len(), items.len(), "known items are not listed");
        let of = |id: &str| {
            p.iter()
                .find(|d| d.item_id == id)
                .and_then(|d| d.probability)
                .unwrap()
        };
        assert!(
            of("r0") > 0.5 && of("p0") < 0.5,
            "{} {}",
            of("r0"),
            of("p0")
        );
        assert_eq!(of("p0"), of("p29"), "one pattern, one probability");
        assert!(
            p.iter()
                .find(|d| d.item_id == "p0")
                .is_some_and(|d| d.retained)
        );
        assert_eq!(defect_csv(&p).rows.len(), items.len());
    }

    /// A Stage 1 review without known items: bounds, drawn as bars, said so in the
    /// notes and the tables.
    #[test]
    fn a_review_without_known_items_is_drawn_and_tabled_as_bounds() {
        let counts = vec![
            count("<b>a</b>", "b&c", "both_pass", ("valid", "valid"), 40),
            count("<b>a</b>", "b&c", "both_reject", ("reject", "reject"), 8),
            count("<b>a</b>", "b&c", "split_accepted", ("valid", "reject"), 3),
            count("<b>a</b>", "b&c", "split_rejected", ("reject", "valid"), 2),
        ];
        let tax = Taxonomy::vgenst();
        let q = build(&tax, &counts, &[], &[1], Options::default()).unwrap();
        assert!(!q.stages[0].identified);
        // No question decided yet: the benchmark's residual rate is Stage 1's.
        let both = build(&tax, &counts, &[], &[1, 2], Options::default()).unwrap();
        assert_eq!(both.stages[1].items, 0);
        assert_eq!(
            both.residual_defect_rate,
            both.stages[0].residual_defect_rate
        );
        assert!(both.residual_defect_rate.bounds.is_some());
        let raters: Vec<&str> = q.raters(1).iter().map(|r| r.validator.as_str()).collect();
        assert_eq!(
            raters,
            ["<b>a</b>", "b&c", AUTHOR],
            "validators, then the author"
        );
        let svg = forest(&q, 1, &caption());
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(!svg.contains("style=") && !svg.contains("<script") && !svg.contains("<b>"));
        assert!(svg.contains("&lt;b&gt;a&lt;/b&gt;, n=53"), "{svg}");
        assert!(
            svg.contains("Not identified"),
            "the notes say the bars are bounds"
        );
        assert_eq!(
            svg.matches("<circle").count(),
            1,
            "the legend's point alone: no estimates"
        );
        assert_eq!(
            svg.matches("<rect").count(),
            1 + 1 + 2 * 2,
            "the background, the legend's swatch and a bounds bar per validator and figure"
        );
        // The author rated five splits: below the minimum, said instead of drawn.
        assert_eq!(q.author[0].ratings, 5);
        assert!(svg.contains("too few ratings (5)"), "{svg}");
        assert_eq!(q.author[0].sensitivity.bounds, None);
        assert!(svg.contains("Campaign c · computed 2026-12-01T00:00:00Z"));
        assert!(
            crate::report::render::png(&svg).is_ok() && crate::report::render::pdf(&svg).is_ok()
        );
        let tex = latex_table(&q);
        assert!(tex.contains("\\label{tab:review-quality}") && tex.contains("not identified"));
        assert!(tex.contains("b\\&c"), "names escaped for LaTeX: {tex}");
        assert!(tex.contains("(bounds)"), "{tex}");
        let csv = csv_table(&q).to_csv().unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[0],
            "stage,rater,figure,estimate,ci95_low,ci95_high,bound_low,bound_high,ratings,known_defects,known_sound,method"
        );
        assert_eq!(
            lines.len(),
            1 + 3 * 2 + 1,
            "two figures per rater, then the residual"
        );
        assert!(
            lines[1].starts_with("1,<b>a</b>,sensitivity,,,,0."),
            "{csv}"
        );
        // The figures are the QC report's, captioned with the stage's scope.
        let report = crate::report::build("c", &tax, &Scope::default(), &counts, &HashMap::new());
        let figures = figures(&q, &report, &caption());
        assert_eq!(figures.len(), 1);
        assert_eq!(figures[0].name, "quality-stage1");
    }

    #[test]
    fn a_figure_reads_as_its_estimate_its_bounds_or_nothing() {
        let f = |estimate, ci95, bounds| QualityFigure {
            estimate,
            ci95,
            bounds,
            method: String::new(),
            withheld: None,
        };
        assert_eq!(
            f(Some(0.8523), Some([0.78, 0.9101]), None).text(3),
            "0.852 [0.780, 0.910]"
        );
        assert_eq!(
            f(None, None, Some([0.4, 1.0])).text(2),
            "0.40 to 1.00 (bounds)"
        );
        assert_eq!(f(None, None, None).text(2), "no data");
    }
}

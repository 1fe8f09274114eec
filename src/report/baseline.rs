//! The human baseline's tables (VGenST-Bench Appendix F, Figure 5): vanilla and circular accuracy
//! overall, per task, QA type, level and participant, each with its interval and the
//! interval's method; the position bias overall and per participant; the agreement
//! between participants over the content chosen. Built from answers checked whole
//! (by `io::baseline`); the figures are [`crate::stats::circular`]'s.

use std::collections::BTreeMap;

use serde::Serialize;

use super::format::{Col, CsvTable, Format, num, tex};
use super::svg::{
    Caption, Figure, GRID, INK, MIN_WIDTH, MUTED, esc, figure_close, figure_open, footer_height,
    swatch,
};
use crate::domain::baseline::{BaselineQuestion, CheckedAnswers, letter};
use crate::domain::taxonomy::{Table, Tables};
use crate::stats::StatsError;
use crate::stats::circular::{
    self, Accuracy, Answer, ContentAgreement, IntervalMethod, PositionBias, Proportion, Question,
    content_agreement, position_bias,
};

/// The baseline's tables, as `tandem stats --json` gives them under `baseline`.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct BaselineReport {
    /// The interval every accuracy carries.
    pub interval_method: IntervalMethod,
    /// Participants with at least one answer.
    pub participants: usize,
    /// Questions answered by at least one participant.
    pub questions: usize,
    /// Presentations answered, all participants together.
    pub presentations: usize,
    /// Answers stored for questions the baseline no longer asks (not retained any more:
    /// the clip regenerated, a linked pair broken), not counted in any figure.
    pub left_out: usize,
    pub overall: Accuracy,
    pub per_task: BTreeMap<String, Accuracy>,
    pub per_qa_type: BTreeMap<String, Accuracy>,
    pub per_level: BTreeMap<String, Accuracy>,
    pub per_participant: BTreeMap<String, Accuracy>,
    /// Linked pairs scored jointly (a pair counts only when both its questions do);
    /// `None` when no question answered is in a linked pair.
    pub linked_pairs: Option<LinkedPairs>,
    pub position_bias: PositionBias,
    pub position_bias_per_participant: BTreeMap<String, PositionBias>,
    pub agreement: ContentAgreement,
}

/// Linked pairs scored jointly.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct LinkedPairs {
    /// Pairs with both questions among the questions asked.
    pub pairs: usize,
    pub overall: Accuracy,
    pub per_participant: BTreeMap<String, Accuracy>,
}

/// The tables over `answers` to `questions` (the same list the answers were checked
/// against: their question indexes point into it).
pub fn baseline(
    questions: &[BaselineQuestion],
    answers: &CheckedAnswers,
    method: IntervalMethod,
) -> Result<BaselineReport, StatsError> {
    let stats_qs: Vec<Question> = questions
        .iter()
        .map(|q| Question {
            options: q.options,
            key: q.key,
        })
        .collect();
    let all: Vec<Answer> = answers
        .answers
        .iter()
        .map(|a| Answer {
            participant: a.participant,
            question: a.question,
            presentation: a.presentation,
            shown: a.shown.clone(),
            chosen: a.chosen,
        })
        .collect();
    let scored = circular::score(&stats_qs, &all)?;
    let name = |p: usize| answers.participants.get(p).cloned();
    let of = |c: &circular::Cell| questions.get(c.question);
    let mut per_participant_bias = BTreeMap::new();
    for (p, who) in answers.participants.iter().enumerate() {
        per_participant_bias.insert(
            who.clone(),
            position_bias(all.iter().filter(|a| a.participant == p)),
        );
    }
    let mut by_pair: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, q) in questions.iter().enumerate() {
        if let Some(p) = &q.pair {
            by_pair.entry(p.as_str()).or_default().push(i);
        }
    }
    let links: Vec<(usize, usize)> = by_pair
        .values()
        .filter_map(|qs| match qs.as_slice() {
            &[a, b] => Some((a, b)),
            _ => None,
        })
        .collect();
    let joint = scored.joint(&links);
    let linked_pairs = (!joint.cells.is_empty()).then(|| LinkedPairs {
        pairs: links.len(),
        overall: joint.overall(method),
        per_participant: joint.by(method, |c| name(c.participant)),
    });
    let mut answered: Vec<usize> = scored.cells.iter().map(|c| c.question).collect();
    answered.sort_unstable();
    answered.dedup();
    Ok(BaselineReport {
        interval_method: method,
        participants: answers.participants.len(),
        questions: answered.len(),
        presentations: all.len(),
        left_out: 0,
        overall: scored.overall(method),
        per_task: scored.by(method, |c| of(c).map(|q| q.task.clone())),
        per_qa_type: scored.by(method, |c| of(c).map(|q| q.qa_type.clone())),
        per_level: scored.by(method, |c| of(c).map(|q| q.level.clone())),
        per_participant: scored.by(method, |c| name(c.participant)),
        linked_pairs,
        position_bias: position_bias(all.iter()),
        position_bias_per_participant: per_participant_bias,
        agreement: content_agreement(&stats_qs, &all),
    })
}

/// The accuracy table in one format: JSON (the whole report, as in `stats.json`), CSV (the
/// accuracy table) or LaTeX.
pub fn render(r: &BaselineReport, format: Format) -> crate::error::Result<String> {
    match format {
        Format::Json => serde_json::to_string_pretty(r)
            .map(|s| s + "\n")
            .map_err(|e| crate::error::Error::fault("cannot write JSON", e)),
        Format::Csv => accuracy_table(r).to_csv(),
        Format::Latex => Ok(latex(r)),
    }
}

impl BaselineReport {
    /// What the baseline's figures say about themselves (`computed`: µs since the epoch).
    pub fn caption(&self, campaign: &str, computed: i64) -> Caption {
        Caption {
            campaign: campaign.to_string(),
            scope: format!(
                "human baseline: every answer ({} participant(s), {} question(s))",
                self.participants, self.questions
            ),
            computed: crate::clock::to_rfc3339(computed),
        }
    }
}

/// The baseline's figures: accuracy with intervals, and answers per position.
pub fn figures(r: &BaselineReport, caption: &Caption) -> Vec<Figure> {
    vec![
        Figure {
            name: "baseline-accuracy",
            svg: accuracy_figure(r, caption),
        },
        Figure {
            name: "baseline-positions",
            svg: position_figure(r, caption),
        },
    ]
}

/// The paper's Table 16, the annotator pool: how many people each group of the campaign
/// holds. One role per person and campaign keeps the groups disjoint.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Groups {
    /// Validators (quality control: both review stages).
    pub quality_control: i64,
    /// Participants of the blind video-quality study who answered (as Tables 14 and 15
    /// count them).
    pub study: i64,
    /// Participants of the human baseline who answered (as Table 7 counts them).
    pub baseline: i64,
    /// The three groups together.
    pub total: i64,
    /// Authors, who resolve splits (not counted in the total, as in the paper).
    pub authors: i64,
    /// Always true: a person holds one role per campaign.
    pub disjoint: bool,
    /// The study's participants who never answered (not begun), beside the table.
    pub study_invited: i64,
    /// The baseline's participants who never answered (invited by a link not used,
    /// revoked, or not begun), beside the table.
    pub baseline_invited: i64,
}

impl Groups {
    /// From the store's counts (`store::areas::baseline::group_sizes`): `(kind, role,
    /// n)`, kind `member` (every role), `answered` or `silent` (the baseline's and the
    /// study's).
    pub fn from_counts(counts: &[(String, String, i64)]) -> Groups {
        let n = |k: &str, r: &str| {
            counts
                .iter()
                .filter(|(kind, role, _)| kind == k && role == r)
                .map(|(_, _, n)| *n)
                .sum::<i64>()
        };
        let (quality_control, study, baseline) = (
            n("member", "validator"),
            n("answered", "participant"),
            n("answered", "baseline"),
        );
        Groups {
            quality_control,
            study,
            baseline,
            total: quality_control + study + baseline,
            authors: n("member", "author"),
            disjoint: true,
            study_invited: n("silent", "participant"),
            baseline_invited: n("silent", "baseline"),
        }
    }

    fn rows(&self) -> [(&'static str, i64, &'static str); 3] {
        [
            (
                "Quality control",
                self.quality_control,
                "Two-stage video and QA review (intersection rule)",
            ),
            (
                "Video quality study",
                self.study,
                "Ordinal ranking and real-vs-fake judgment",
            ),
            (
                "Human baseline",
                self.baseline,
                "Base MCQs under circular evaluation",
            ),
        ]
    }

    /// Table 16 as CSV: group, n, task; then the total.
    pub fn table(&self) -> CsvTable {
        use Col::{Num, Text};
        let mut t = CsvTable::new(&[("group", Text), ("n", Num), ("task", Text)]);
        for (g, n, task) in self.rows() {
            t.rows
                .push(vec![g.to_string(), n.to_string(), task.to_string()]);
        }
        t.rows.push(vec![
            "Total".into(),
            self.total.to_string(),
            "All groups mutually disjoint".into(),
        ]);
        t
    }

    /// Table 16 in booktabs LaTeX.
    pub fn latex(&self, tables: &Tables) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        let title = tables.titled(Table::T16, ": ", "the annotator pool");
        let _ = writeln!(s, "% {title}. Generated by Tandem.");
        s.push_str("% Needs \\usepackage{booktabs}.\n");
        s.push_str("\\begin{table}[t]\n\\centering\n");
        let _ = writeln!(
            s,
            "\\caption{{Human annotator pool: the campaign's groups and their sizes. A person holds one role per campaign, so the groups are mutually disjoint{}.}}",
            if self.authors > 0 {
                format!(
                    "; {} author(s) resolving splits are not counted",
                    self.authors
                )
            } else {
                String::new()
            }
        );
        s.push_str("\\label{tab:annotator-pool}\n\\begin{tabular}{lrl}\n\\toprule\n");
        s.push_str("Group & $N$ & Task \\\\\n\\midrule\n");
        for (g, n, task) in self.rows() {
            let _ = writeln!(s, "{g} & {n} & {} \\\\", tex(task));
        }
        let _ = writeln!(
            s,
            "\\midrule\nTotal & {} & All groups mutually disjoint \\\\",
            self.total
        );
        s.push_str("\\bottomrule\n\\end{tabular}\n\\end{table}\n");
        s
    }

    /// Table 16 in one format.
    pub fn render(&self, tables: &Tables, format: Format) -> crate::error::Result<String> {
        match format {
            Format::Json => serde_json::to_string_pretty(self)
                .map(|s| s + "\n")
                .map_err(|e| crate::error::Error::fault("cannot write JSON", e)),
            Format::Csv => self.table().to_csv(),
            Format::Latex => Ok(self.latex(tables)),
        }
    }
}

/// The groups of the accuracy table, in order: (group, key, accuracy).
fn accuracy_rows(r: &BaselineReport) -> Vec<(&'static str, String, &Accuracy)> {
    let mut rows = vec![("overall", String::new(), &r.overall)];
    rows.extend(r.per_level.iter().map(|(k, a)| ("level", k.clone(), a)));
    rows.extend(r.per_task.iter().map(|(k, a)| ("task", k.clone(), a)));
    rows.extend(r.per_qa_type.iter().map(|(k, a)| ("qa_type", k.clone(), a)));
    rows.extend(
        r.per_participant
            .iter()
            .map(|(k, a)| ("participant", k.clone(), a)),
    );
    if let Some(lp) = &r.linked_pairs {
        rows.push(("linked_pairs", String::new(), &lp.overall));
        rows.extend(
            lp.per_participant
                .iter()
                .map(|(k, a)| ("linked_pairs_participant", k.clone(), a)),
        );
    }
    rows
}

fn method_name(m: IntervalMethod) -> &'static str {
    match m {
        IntervalMethod::ClopperPearson => "clopper-pearson",
        IntervalMethod::Wilson => "wilson",
    }
}

/// The accuracy table as CSV: one row per group (overall, each level, task, QA type and
/// participant, linked pairs), vanilla and circular accuracy each with its counts, its
/// 95% interval and the interval's method; `incomplete` counts the questions left out
/// of circular accuracy.
pub fn accuracy_table(r: &BaselineReport) -> CsvTable {
    use Col::{Num, Text};
    let mut t = CsvTable::new(&[
        ("group", Text),
        ("key", Text),
        ("vanilla_correct", Num),
        ("vanilla_n", Num),
        ("vanilla_accuracy", Num),
        ("vanilla_ci95_low", Num),
        ("vanilla_ci95_high", Num),
        ("circular_correct", Num),
        ("circular_n", Num),
        ("circular_accuracy", Num),
        ("circular_ci95_low", Num),
        ("circular_ci95_high", Num),
        ("incomplete", Num),
        ("interval_method", Text),
    ]);
    for (group, key, a) in accuracy_rows(r) {
        let mut row = vec![group.to_string(), key];
        for p in [&a.vanilla, &a.circular] {
            row.push(p.correct.to_string());
            row.push(p.n.to_string());
            row.push(num(p.accuracy));
            row.push(num(p.interval.map(|i| i.0)));
            row.push(num(p.interval.map(|i| i.1)));
        }
        row.push(a.incomplete.to_string());
        row.push(method_name(a.vanilla.method).to_string());
        t.rows.push(row);
    }
    t
}

/// The position bias as CSV: overall, then per participant, the answers given at each
/// displayed position (A, B, ...), their shares, the shares expected of a position-blind
/// answerer, and the chi-square test against them.
pub fn position_table(r: &BaselineReport) -> CsvTable {
    use Col::{Num, Text};
    let width = std::iter::once(&r.position_bias)
        .chain(r.position_bias_per_participant.values())
        .map(|b| b.counts.len())
        .max()
        .unwrap_or(0);
    let mut columns: Vec<(String, Col)> =
        vec![("scope".into(), Text), ("participant".into(), Text)];
    for i in 0..width {
        columns.push((format!("answers_{}", letter(i)), Num));
    }
    for i in 0..width {
        columns.push((format!("share_{}", letter(i)), Num));
    }
    for i in 0..width {
        columns.push((format!("expected_{}", letter(i)), Num));
    }
    for c in ["chi_square", "df", "p_value"] {
        columns.push((c.into(), Num));
    }
    let mut t = CsvTable {
        columns,
        rows: Vec::new(),
    };
    let scopes = std::iter::once(("overall", String::new(), &r.position_bias)).chain(
        r.position_bias_per_participant
            .iter()
            .map(|(p, b)| ("participant", p.clone(), b)),
    );
    for (scope, who, b) in scopes {
        let mut row = vec![scope.to_string(), who];
        for i in 0..width {
            row.push(b.counts.get(i).map_or_else(String::new, u64::to_string));
        }
        for i in 0..width {
            row.push(num(b.shares.get(i).copied()));
        }
        for i in 0..width {
            row.push(num(b.expected_shares.get(i).copied()));
        }
        row.push(num(b.chi_square));
        row.push(b.df.to_string());
        row.push(num(b.p_value));
        t.rows.push(row);
    }
    t
}

fn pct_ci(p: &Proportion) -> String {
    match (p.accuracy, p.interval) {
        (Some(a), Some((lo, hi))) => {
            format!("{:.1} [{:.1}, {:.1}]", a * 100.0, lo * 100.0, hi * 100.0)
        }
        (Some(a), None) => format!("{:.1}", a * 100.0),
        _ => "undefined".into(),
    }
}

/// The accuracy table in booktabs LaTeX: vanilla and circular accuracy (%, with the 95% interval)
/// overall, per level, task and QA type, and linked pairs; the caption names the
/// interval's method, the participants, and the position bias test.
pub fn latex(r: &BaselineReport) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    s.push_str("% The human baseline under circular evaluation. Generated by Tandem.\n");
    s.push_str("% Needs \\usepackage{booktabs}.\n");
    s.push_str("\\begin{table}[t]\n\\centering\n");
    let bias = match (r.position_bias.chi_square, r.position_bias.p_value) {
        (Some(c), Some(p)) => format!(
            "Position bias over all answers: $\\chi^2({}) = {c:.2}$, $p = {}$ against equal shares per displayed position.",
            r.position_bias.df,
            if p < 0.001 {
                "<0.001".to_string()
            } else {
                format!("{p:.3}")
            }
        ),
        _ => "Position bias: undefined (answers at one position count only).".to_string(),
    };
    let _ = writeln!(
        s,
        "\\caption{{Human baseline: accuracy (\\%) of {} participant(s) on {} question(s), {} presentation(s). Vanilla counts the presentation in the original option order; circular counts a question only if every rotation of its options was answered correctly ({} question(s) with a rotation unanswered are left out of circular accuracy). Brackets: 95\\% {} interval. {bias}}}",
        r.participants,
        r.questions,
        r.presentations,
        r.overall.incomplete,
        match r.interval_method {
            IntervalMethod::ClopperPearson => "Clopper-Pearson (exact binomial)",
            IntervalMethod::Wilson => "Wilson score",
        },
    );
    s.push_str("\\label{tab:human-baseline}\n\\begin{tabular}{llrrrr}\n\\toprule\n");
    s.push_str("Group & & $n$ & Vanilla & $n$ & Circular \\\\\n\\midrule\n");
    let mut last = "";
    for (group, key, a) in accuracy_rows(r) {
        if group == "participant" || group == "linked_pairs_participant" {
            continue;
        }
        if !last.is_empty() && last != group {
            s.push_str("\\midrule\n");
        }
        last = group;
        let name = match group {
            "overall" => "Overall",
            "level" => "Level",
            "task" => "Task",
            "qa_type" => "QA type",
            _ => "Linked pairs",
        };
        let _ = writeln!(
            s,
            "{name} & {} & {} & {} & {} & {} \\\\",
            tex(&key),
            a.vanilla.n,
            pct_ci(&a.vanilla),
            a.circular.n,
            pct_ci(&a.circular)
        );
    }
    s.push_str("\\bottomrule\n\\end{tabular}\n\\end{table}\n");
    s
}

/// Vanilla and circular accuracy with their intervals, overall and per level and task,
/// as a figure.
pub fn accuracy_figure(r: &BaselineReport, caption: &Caption) -> String {
    use std::fmt::Write as _;
    let (left, plot, right, row) = (200u32, 360u32, 230u32, 22u32);
    let rows: Vec<(String, &Accuracy)> = accuracy_rows(r)
        .into_iter()
        .filter(|(g, _, _)| matches!(*g, "overall" | "level" | "task" | "linked_pairs"))
        .map(|(g, k, a)| {
            let label = match g {
                "overall" => "overall".to_string(),
                "linked_pairs" => "linked pairs (jointly)".to_string(),
                _ => k,
            };
            (label, a)
        })
        .collect();
    let top = 36u32;
    let n = rows.len() as u32;
    let axis_y = top + row * n + 4;
    let notes = vec![
        format!(
            "Dots: accuracy; whiskers: 95% {} interval. Circular counts a question only if every rotation was answered correctly.",
            match r.interval_method {
                IntervalMethod::ClopperPearson => "Clopper-Pearson",
                IntervalMethod::Wilson => "Wilson",
            }
        ),
        format!(
            "{} participant(s), {} question(s), {} presentation(s).",
            r.participants, r.questions, r.presentations
        ),
    ];
    let legend_y = axis_y + 50;
    let w = (left + plot + right).max(MIN_WIDTH);
    let h = legend_y + 8 + footer_height(&notes);
    let x_of = |v: f64| f64::from(left) + v.clamp(0.0, 1.0) * f64::from(plot);
    let mut s = figure_open(w, h, "Human baseline: vanilla and circular accuracy");
    for tick in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let x = x_of(tick);
        let _ = write!(
            s,
            "<line x1=\"{x:.1}\" y1=\"{top}\" x2=\"{x:.1}\" y2=\"{axis_y}\" stroke=\"{GRID}\"/><text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\" fill=\"{MUTED}\">{}%</text>",
            axis_y + 16,
            tick * 100.0
        );
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" fill=\"{MUTED}\">accuracy</text>",
        x_of(0.5),
        axis_y + 32
    );
    for (i, (label, a)) in rows.iter().enumerate() {
        let y = top + row * i as u32;
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            left - 8,
            y + 15,
            esc(label)
        );
        for (p, colour, dy) in [
            (&a.vanilla, "#2b5fab", 7u32),
            (&a.circular, "#b3361f", 15u32),
        ] {
            let cy = y + dy;
            if let Some((lo, hi)) = p.interval {
                let _ = write!(
                    s,
                    "<line x1=\"{:.1}\" y1=\"{cy}\" x2=\"{:.1}\" y2=\"{cy}\" stroke=\"{colour}\" stroke-width=\"1.5\"/>",
                    x_of(lo),
                    x_of(hi)
                );
            }
            if let Some(v) = p.accuracy {
                let _ = write!(
                    s,
                    "<circle cx=\"{:.1}\" cy=\"{cy}\" r=\"3.5\" fill=\"{colour}\"><title>{:.1}%</title></circle>",
                    x_of(v),
                    v * 100.0
                );
            }
        }
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" font-size=\"11\">{} · {}</text>",
            left + plot + 8,
            y + 15,
            esc(&pct_ci(&a.vanilla)),
            esc(&pct_ci(&a.circular))
        );
    }
    let mut x = 8;
    x = swatch(
        &mut s,
        x,
        legend_y,
        "#2b5fab",
        "#2b5fab",
        "vanilla (original order)",
    );
    swatch(
        &mut s,
        x,
        legend_y,
        "#b3361f",
        "#b3361f",
        "circular (every rotation)",
    );
    figure_close(s, h, &notes, caption)
}

/// The share of all answers at each displayed position against the equal shares a
/// position-blind answerer gives, as a figure.
pub fn position_figure(r: &BaselineReport, caption: &Caption) -> String {
    use std::fmt::Write as _;
    let b = &r.position_bias;
    let (left, plot, row) = (60u32, 420u32, 24u32);
    let top = 36u32;
    let n = b.counts.len() as u32;
    let axis_y = top + row * n + 4;
    let test = match (b.chi_square, b.p_value) {
        (Some(c), Some(p)) => format!(
            "Chi-square against equal shares: {c:.2} (df {}), p = {p:.4}.",
            b.df
        ),
        _ => "Chi-square against equal shares: undefined.".to_string(),
    };
    let notes = vec![
        "Bars: share of all answers given at each displayed position; line: the equal share expected.".to_string(),
        test,
    ];
    let w = (left + plot + 160).max(MIN_WIDTH);
    let h = axis_y + 40 + footer_height(&notes);
    let max = b
        .shares
        .iter()
        .chain(b.expected_shares.iter())
        .fold(0.0f64, |m, &v| m.max(v))
        .max(0.05);
    let x_of = |v: f64| f64::from(left) + (v / max).clamp(0.0, 1.0) * f64::from(plot);
    let mut s = figure_open(w, h, "Human baseline: answers per displayed position");
    for (i, (count, share)) in b.counts.iter().zip(&b.shares).enumerate() {
        let y = top + row * i as u32;
        // The figure's text right of both the bar and the expected share's line.
        let text_x = x_of(*share).max(b.expected_shares.get(i).map_or(0.0, |e| x_of(*e))) + 6.0;
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text><rect x=\"{left}\" y=\"{}\" width=\"{:.1}\" height=\"14\" fill=\"#2b5fab\"/><text x=\"{:.1}\" y=\"{}\" font-size=\"11\">{:.1}% ({count})</text>",
            left - 8,
            y + 15,
            letter(i),
            y + 4,
            x_of(*share) - f64::from(left),
            text_x,
            y + 15,
            share * 100.0
        );
        if let Some(e) = b.expected_shares.get(i) {
            let x = x_of(*e);
            let _ = write!(
                s,
                "<line x1=\"{x:.1}\" y1=\"{}\" x2=\"{x:.1}\" y2=\"{}\" stroke=\"{INK}\" stroke-width=\"2\"/>",
                y + 1,
                y + 21
            );
        }
    }
    let _ = write!(
        s,
        "<text x=\"{left}\" y=\"{}\" fill=\"{MUTED}\">{} answer(s) in all</text>",
        axis_y + 16,
        b.counts.iter().sum::<u64>()
    );
    figure_close(s, h, &notes, caption)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::io::baseline::{check_answers, read_answers};
    use std::collections::HashSet;

    fn question(id: &str, task: &str, level: &str, key: usize) -> BaselineQuestion {
        BaselineQuestion {
            question_id: id.into(),
            task: task.into(),
            qa_type: if task == "T1" { "YN" } else { "MC" }.into(),
            level: level.into(),
            options: 2,
            key,
            pair: (task == "T2").then(|| "P".to_string()),
        }
    }

    #[test]
    fn the_tables_group_each_participants_questions() {
        // Two-option questions: presentation 0 shows AB, presentation 1 BA.
        // ann: q1 right in both, q2 right at 0 and wrong at 1, q3 only at 1.
        // ben: q1 wrong at 0 and right at 1, q2 right in both.
        let csv = "participant,question_id,presentation,shown,chosen\n\
                   ann,q1,1,BA,B\n\
                   ann,q1,0,AB,A\n\
                   ann,q2,0,AB,B\n\
                   ann,q2,1,BA,B\n\
                   ann,q3,1,BA,A\n\
                   ben,q1,0,AB,B\n\
                   ben,q1,1,BA,B\n\
                   ben,q2,0,AB,B\n\
                   ben,q2,1,BA,A\n";
        let questions = [
            question("q1", "T1", "L1", 0),
            question("q2", "T2", "L2", 1),
            question("q3", "T2", "L3", 0),
        ];
        let (rows, problems) = read_answers(csv.as_bytes());
        assert_eq!(problems, []);
        let people: HashSet<String> = ["ann", "ben"].map(String::from).into();
        let checked = check_answers(&rows, &questions, &HashSet::new(), &people).unwrap();
        let r = baseline(&questions, &checked, IntervalMethod::ClopperPearson).unwrap();
        assert_eq!((r.participants, r.questions, r.presentations), (2, 3, 9));
        let counts = |a: &Accuracy| {
            (
                a.vanilla.correct,
                a.vanilla.n,
                a.circular.correct,
                a.circular.n,
                a.incomplete,
            )
        };
        assert_eq!(counts(&r.overall), (3, 4, 2, 4, 1));
        assert_eq!(counts(&r.per_participant["ann"]), (2, 2, 1, 2, 1));
        assert_eq!(counts(&r.per_participant["ben"]), (1, 2, 1, 2, 0));
        assert_eq!(counts(&r.per_task["T1"]), (1, 2, 1, 2, 0));
        assert_eq!(counts(&r.per_task["T2"]), (2, 2, 1, 2, 1));
        assert_eq!(counts(&r.per_qa_type["YN"]), counts(&r.per_task["T1"]));
        assert_eq!(counts(&r.per_level["L3"]), (0, 0, 0, 0, 1));
        assert_eq!(r.per_level["L3"].vanilla.accuracy, None);
        assert_eq!(r.position_bias.counts, [3, 6]);
        assert_eq!(r.position_bias_per_participant["ben"].counts, [1, 3]);
        assert_eq!(r.agreement.items, 4);
        // q2 and q3 are one linked pair: ann's is incomplete (q3 asked once), ben's
        // has q2 alone (q3 never asked): incomplete as well, and no vanilla.
        let pairs = r.linked_pairs.as_ref().unwrap();
        assert_eq!(pairs.pairs, 1);
        assert_eq!(counts(&pairs.overall), (0, 0, 0, 0, 2));
        assert_eq!(counts(&pairs.per_participant["ann"]), (0, 0, 0, 0, 1));

        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["interval_method"], "clopper-pearson");
        assert_eq!(json["overall"]["circular"]["accuracy"], 0.5);
        assert_eq!(json["overall"]["circular"]["method"], "clopper-pearson");
        assert!(json["per_participant"]["ann"]["vanilla"]["interval"].is_array());
    }
}

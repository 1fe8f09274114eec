//! The paper's QC tables (Tables 11, 12 and 13 of VGenST-Bench, Appendix D.3) built
//! from the counts the store aggregates, and written as JSON, CSV, LaTeX (booktabs)
//! and SVG plots. Pure: no database, no HTTP.
//!
//! What it holds, part by part:
//!
//! the blind key check's figures (`blind`: per QA type and level the share of blind answers
//! that are the key, with Wilson intervals; the keys in doubt); the known items' (`known`:
//! each validator's catch and pass rates on known items per stage, with Wilson intervals,
//! over the campaign and the last K known defects since their last pause, and the rule that
//! pauses a queue, `pause_reason`); the human baseline's tables (`baseline`: accuracy
//! overall, per task, QA type, level and participant, the position bias, the agreement; as
//! CSV, booktabs LaTeX and SVG figures; Table 16, the annotator pool, `Groups`: the
//! campaign's disjoint groups and their sizes); the QC tables (T11-T13; for a protocol
//! without clip review no Table 11 and no Stage 1 in any table, figure or summary,
//! `QcReport::stages`) built from the store's aggregated counts with `stats`, written as
//! JSON (typed: `reply`, the API's schemas), CSV (each table declaring its numeric
//! columns), booktabs LaTeX (`format`) and SVG figures with title, axes, legend and caption
//! (`svg`); the study's tables and figures (T14, T15 with W, Friedman, the bootstrap error
//! rate, hit and false-alarm rates, d') built from the raw responses, in each format
//! (`study`); how good the review is (`quality`: the counted verdicts as a `stats::quality`
//! review per stage, the known items' verdicts as its anchors, each decided item's
//! probability of a defect (`defect_probabilities`), the reply with figures withheld below
//! ten ratings or items, its table as CSV and LaTeX and a forest plot per stage); figures
//! to PDF and PNG with the built-in font (`render`); the paper bundle's files (`bundle`,
//! pure)

pub mod baseline;
pub mod blind;
pub mod bundle;
pub mod format;
pub mod known;
pub mod quality;
pub mod render;
pub mod reply;
pub mod study;
pub mod svg;

pub use reply::StatsReply;

use crate::domain::facts::{OutcomeCount, Scope, ValidatorActivity, Versions};
use crate::domain::taxonomy::Taxonomy;
use crate::stats::agreement::{
    KAPPA_CI95_BOUNDED_METHOD, Table, cohen_kappa, gwet_ac1_table, kappa_ci95_bounded,
    krippendorff_alpha_table, pabak, percent_agreement,
};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// T11: one task's Stage 1.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct T11Cell {
    /// Clips whose two verdicts are in.
    pub reviewed: i64,
    /// Both passed, or the author accepted the split.
    pub retained: i64,
    /// Retained unreviewed: its lot's sample passed (a campaign with sampled review;
    /// never counted as reviewed).
    pub by_sample: i64,
    /// Of `reviewed`, clips whose split waits for an author: not retained (yet), so
    /// the table is a snapshot while this is above 0.
    pub waiting: i64,
}

/// T12: one task x QA type cell of Stage 2.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct T12Cell {
    pub reviewed: i64,
    /// Both rejected, or the author rejected the split.
    pub rejected: i64,
    /// Retained unreviewed: its lot's sample passed.
    pub by_sample: i64,
}

/// The fewest items whose 2x2 table gets chance-corrected figures (kappa and its
/// interval, AC1, PABAK, alpha): below it a kappa is all noise (over 1-3 items it can
/// read "0.00 [0.00, 0.00]", which looks precise), so the figures are `null` with the
/// count and the reason, and the tables say "too few items (n)". README states it.
pub const MIN_AGREEMENT_ITEMS: i64 = 10;

/// Why a table's chance-corrected figures are not given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Withheld {
    pub items: i64,
    pub minimum: i64,
    pub reason: String,
}

/// Agreement figures of one 2x2 table (rater 1 x rater 2; valid, reject).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agreement {
    /// Rows rater 1 (valid, reject), columns rater 2 (valid, reject).
    pub table: [[i64; 2]; 2],
    pub raw_agreement: Option<f64>,
    pub cohen_kappa: Option<f64>,
    pub cohen_kappa_se: Option<f64>,
    /// The large-sample Wald interval as statsmodels computes it, not clipped.
    pub cohen_kappa_ci95: Option<[f64; 2]>,
    /// The same interval truncated to [-1, 1] ([`KAPPA_CI95_BOUNDED_METHOD`]): what
    /// tables and plots show.
    pub cohen_kappa_ci95_bounded: Option<[f64; 2]>,
    pub gwet_ac1: Option<f64>,
    pub pabak: Option<f64>,
    pub krippendorff_alpha: Option<f64>,
    /// Set when the table has fewer than [`MIN_AGREEMENT_ITEMS`] items (but some): the
    /// chance-corrected figures above are then `None`.
    pub withheld: Option<Withheld>,
}

impl Agreement {
    /// The figures of `table`; below [`MIN_AGREEMENT_ITEMS`] items only the table and
    /// the raw agreement, the rest withheld with the count and the reason.
    pub fn of(table: [[i64; 2]; 2]) -> Agreement {
        let items: i64 = table.iter().flatten().sum();
        if items > 0 && items < MIN_AGREEMENT_ITEMS {
            let full = Agreement::computed(table);
            return Agreement {
                table,
                raw_agreement: full.raw_agreement,
                cohen_kappa: None,
                cohen_kappa_se: None,
                cohen_kappa_ci95: None,
                cohen_kappa_ci95_bounded: None,
                gwet_ac1: None,
                pabak: None,
                krippendorff_alpha: None,
                withheld: Some(Withheld {
                    items,
                    minimum: MIN_AGREEMENT_ITEMS,
                    reason: format!(
                        "too few items ({items}): chance-corrected agreement needs at least \
                         {MIN_AGREEMENT_ITEMS}"
                    ),
                }),
            };
        }
        Agreement::computed(table)
    }

    /// Every figure, whatever the count.
    fn computed(table: [[i64; 2]; 2]) -> Agreement {
        let rows: Vec<Vec<f64>> = table
            .iter()
            .map(|r| r.iter().map(|&x| x as f64).collect())
            .collect();
        let t = Table::from_rows(&rows).unwrap_or_else(|_| Table::zeros(2));
        let k = cohen_kappa(&t);
        Agreement {
            table,
            raw_agreement: percent_agreement(&t),
            cohen_kappa: k.kappa,
            cohen_kappa_se: k.std_kappa,
            cohen_kappa_ci95: k.ci95_low.zip(k.ci95_high).map(|(a, b)| [a, b]),
            cohen_kappa_ci95_bounded: kappa_ci95_bounded(k.ci95_low, k.ci95_high),
            gwet_ac1: gwet_ac1_table(&t).map(|g| g.value),
            pabak: pabak(&t),
            krippendorff_alpha: krippendorff_alpha_table(&t),
            withheld: None,
        }
    }

    pub fn items(&self) -> i64 {
        self.table.iter().flatten().sum()
    }

    /// `figure` to three places, or why it is not given: "too few items (n)" below the
    /// minimum, `undefined` when the table leaves it undefined (one category only).
    pub fn show(&self, figure: Option<f64>, places: usize) -> String {
        match (figure, &self.withheld) {
            (Some(v), _) => format!("{v:.places$}"),
            (None, Some(w)) => format!("too few items ({})", w.items),
            (None, None) => "undefined".into(),
        }
    }
}

/// T13: the agreement of one pair on one task.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairAgreement {
    pub task: String,
    pub rater1: String,
    pub rater2: String,
    pub items: i64,
    #[serde(flatten)]
    pub agreement: Agreement,
}

/// T13: one pair over every task it reviewed: the 2x2 tables of its tasks summed (a
/// pair listed the other way round on some task has that table transposed first, so
/// `rater1` is always the same person; kappa does not depend on the orientation).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RaterPairAgreement {
    pub rater1: String,
    pub rater2: String,
    /// The tasks pooled, in taxonomy order.
    pub tasks: Vec<String>,
    pub items: i64,
    #[serde(flatten)]
    pub agreement: Agreement,
}

/// T13: one stage (a column of the paper's table).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageSummary {
    /// Items whose two verdicts are in.
    pub items_reviewed: i64,
    pub both_pass: i64,
    pub both_reject: i64,
    /// All splits: accepted, rejected and waiting for an author.
    pub split: i64,
    pub split_accepted: i64,
    pub split_rejected: i64,
    pub split_pending: i64,
    /// Items with fewer than two verdicts, left out of every figure.
    pub pending: i64,
    /// Items retained unreviewed because their lot's sample passed: never reviewed items,
    /// never in the agreement figures.
    pub by_sample: i64,
    /// Pooled over every pair: the one 2x2 table summed over pairs, rater 1 being
    /// each pair's first member.
    #[serde(flatten)]
    pub pooled: Agreement,
    /// One row per task and pair (`per_pair` in the JSON: each row carries its task).
    pub per_pair: Vec<PairAgreement>,
    /// One row per pair, its tasks pooled (`per_rater_pair` in the JSON).
    pub per_rater_pair: Vec<RaterPairAgreement>,
}

/// The reasons given with counted rejects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct ReasonRow {
    pub stage: i64,
    pub task: String,
    pub reason: String,
    pub n: i64,
}

/// Linked pairs of one task (questions asked in both directions; GLIMPSE counts a pair
/// only when both directions hold): the QC tables count questions, this counts pairs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct PairRow {
    pub task: String,
    /// Pairs whose questions are in review or reviewed.
    pub pairs: i64,
    /// Both questions decided (a split counts once the author resolved it).
    pub reviewed: i64,
    /// Both questions retained: the pair is in the benchmark.
    pub retained: i64,
    /// At least one question rejected: the pair is not.
    pub rejected: i64,
}

/// The pair counts per task, in the taxonomy's order, from the questions of linked
/// pairs; empty when the campaign links none.
pub fn pair_rows(taxonomy: &Taxonomy, items: &[crate::domain::facts::PairItem]) -> Vec<PairRow> {
    use crate::domain::Outcome;
    let mut by_pair: BTreeMap<(&str, i64, &str), Vec<Outcome>> = BTreeMap::new();
    for it in items {
        by_pair
            .entry((it.task.as_str(), it.version, it.pair.as_str()))
            .or_default()
            .push(it.outcome);
    }
    let final_ = |o: &Outcome| o.is_retained() || o.is_rejected();
    taxonomy
        .tasks
        .iter()
        .filter_map(|t| {
            let mut row = PairRow {
                task: t.code.clone(),
                ..PairRow::default()
            };
            for ((task, _, _), outcomes) in &by_pair {
                if *task != t.code {
                    continue;
                }
                row.pairs += 1;
                let whole = outcomes.len() == 2;
                if whole && outcomes.iter().all(final_) {
                    row.reviewed += 1;
                }
                if whole && outcomes.iter().all(|o| o.is_retained()) {
                    row.retained += 1;
                }
                if outcomes.iter().any(|o| o.is_rejected()) {
                    row.rejected += 1;
                }
            }
            (row.pairs > 0).then_some(row)
        })
        .collect()
}

/// Tables 11 to 13 and the operational figures, for one campaign and scope.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QcReport {
    pub campaign: String,
    pub versions: Versions,
    pub task: Option<String>,
    pub pair: Option<(String, String)>,
    /// In taxonomy order.
    pub t11: Vec<(String, T11Cell)>,
    /// In taxonomy order; only the cells of the applicability matrix.
    pub t12: Vec<(String, Vec<(String, T12Cell)>)>,
    pub stage1: StageSummary,
    pub stage2: StageSummary,
    pub reasons: Vec<ReasonRow>,
    pub validators: Vec<ValidatorActivity>,
    /// Linked pairs per task (`pair_rows`); empty when the campaign links none.
    pub pairs: Vec<PairRow>,
    /// Whether the campaign's protocol reviews some stratum by sample: the tables then
    /// carry a column of the items retained by sample.
    pub sampled: bool,
    /// Whether the campaign's protocol reviews clips: without clip review there is no
    /// Table 11 and no Stage 1 in Table 13, the figures or the summaries (rather than
    /// an empty column).
    pub clip_review: bool,
}

/// (task, rater 1, rater 2).
type PairKey = (String, String, String);

fn stage_summary(counts: &[OutcomeCount], stage: i64) -> StageSummary {
    let mut s = StageSummary {
        items_reviewed: 0,
        both_pass: 0,
        both_reject: 0,
        split: 0,
        split_accepted: 0,
        split_rejected: 0,
        split_pending: 0,
        pending: 0,
        by_sample: 0,
        pooled: Agreement::of([[0, 0], [0, 0]]),
        per_pair: Vec::new(),
        per_rater_pair: Vec::new(),
    };
    let mut pooled = [[0i64; 2]; 2];
    // (task, rater1, rater2) in first-seen order (the store sorts by task position).
    let mut pairs: Vec<(PairKey, [[i64; 2]; 2])> = Vec::new();
    for c in counts.iter().filter(|c| c.stage == stage) {
        match c.outcome.as_str() {
            "pending" => {
                s.pending += c.n;
                continue;
            }
            "by_sample" => {
                s.by_sample += c.n;
                continue;
            }
            "both_pass" => s.both_pass += c.n,
            "both_reject" => s.both_reject += c.n,
            "split" => s.split_pending += c.n,
            "split_accepted" => s.split_accepted += c.n,
            "split_rejected" => s.split_rejected += c.n,
            _ => {}
        }
        s.items_reviewed += c.n;
        let idx = |v: &Option<String>| usize::from(v.as_deref() == Some("reject"));
        let (i, j) = (idx(&c.verdict1), idx(&c.verdict2));
        pooled[i][j] += c.n;
        let key = (c.task.clone(), c.rater1.clone(), c.rater2.clone());
        match pairs.iter_mut().find(|(k, _)| *k == key) {
            Some((_, t)) => t[i][j] += c.n,
            None => {
                let mut t = [[0i64; 2]; 2];
                t[i][j] += c.n;
                pairs.push((key, t));
            }
        }
    }
    s.split = s.split_pending + s.split_accepted + s.split_rejected;
    s.pooled = Agreement::of(pooled);
    s.per_rater_pair = pool_over_tasks(&pairs);
    s.per_pair = pairs
        .into_iter()
        .map(|((task, rater1, rater2), t)| {
            let agreement = Agreement::of(t);
            PairAgreement {
                task,
                rater1,
                rater2,
                items: agreement.items(),
                agreement,
            }
        })
        .collect();
    s
}

/// Sums each pair's tables over its tasks, in the order pairs first appear.
fn pool_over_tasks(pairs: &[(PairKey, [[i64; 2]; 2])]) -> Vec<RaterPairAgreement> {
    // (rater 1, rater 2, tasks, summed table)
    type Pooled = (String, String, Vec<String>, [[i64; 2]; 2]);
    let mut out: Vec<Pooled> = Vec::new();
    for ((task, r1, r2), t) in pairs {
        let same = out.iter().position(|(a, b, _, _)| a == r1 && b == r2);
        let swapped = out.iter().position(|(a, b, _, _)| a == r2 && b == r1);
        let (at, table) = match (same, swapped) {
            (Some(i), _) => (i, *t),
            (None, Some(i)) => (i, [[t[0][0], t[1][0]], [t[0][1], t[1][1]]]),
            (None, None) => {
                out.push((r1.clone(), r2.clone(), Vec::new(), [[0; 2]; 2]));
                (out.len() - 1, *t)
            }
        };
        let entry = &mut out[at];
        if !entry.2.contains(task) {
            entry.2.push(task.clone());
        }
        for (i, row) in table.iter().enumerate() {
            for (j, n) in row.iter().enumerate() {
                entry.3[i][j] += n;
            }
        }
    }
    out.into_iter()
        .map(|(rater1, rater2, tasks, t)| {
            let agreement = Agreement::of(t);
            RaterPairAgreement {
                rater1,
                rater2,
                tasks,
                items: agreement.items(),
                agreement,
            }
        })
        .collect()
}

/// Builds the report from the store's counts (see [`Store::outcome_counts`]) and the
/// validators' median times.
///
/// [`Store::outcome_counts`]: crate::store::Store::outcome_counts
pub fn build(
    campaign: &str,
    taxonomy: &Taxonomy,
    scope: &Scope,
    outcomes: &[OutcomeCount],
    medians: &HashMap<(String, i64), Option<f64>>,
) -> QcReport {
    let task = scope.task.as_deref();
    let in_scope = |code: &str| task.is_none_or(|t| t == code);
    // Decided by both validators (or an author): not pending, not retained by sample.
    let decided = |c: &&OutcomeCount| c.outcome != "pending" && c.outcome != "by_sample";
    let by_sample = |c: &&OutcomeCount| c.outcome == "by_sample";
    let t11 = taxonomy
        .tasks
        .iter()
        .filter(|t| in_scope(&t.code))
        .map(|t| {
            let mut cell = T11Cell::default();
            let of_task = |c: &&OutcomeCount| c.stage == 1 && c.task == t.code;
            cell.by_sample = outcomes
                .iter()
                .filter(of_task)
                .filter(by_sample)
                .map(|c| c.n)
                .sum();
            for c in outcomes.iter().filter(of_task).filter(decided) {
                cell.reviewed += c.n;
                if c.outcome == "both_pass" || c.outcome == "split_accepted" {
                    cell.retained += c.n;
                }
                if c.outcome == "split" {
                    cell.waiting += c.n;
                }
            }
            (t.code.clone(), cell)
        })
        .collect();
    let t12 = taxonomy
        .tasks
        .iter()
        .filter(|t| in_scope(&t.code))
        .map(|t| {
            let row = taxonomy
                .qa_types
                .iter()
                .filter(|q| taxonomy.applies(&t.code, &q.code))
                .map(|q| {
                    let mut cell = T12Cell::default();
                    let of_cell = |c: &&OutcomeCount| {
                        c.stage == 2
                            && c.task == t.code
                            && c.qa_type.as_deref() == Some(q.code.as_str())
                    };
                    cell.by_sample = outcomes
                        .iter()
                        .filter(of_cell)
                        .filter(by_sample)
                        .map(|c| c.n)
                        .sum();
                    for c in outcomes.iter().filter(of_cell).filter(decided) {
                        cell.reviewed += c.n;
                        if c.outcome == "both_reject" || c.outcome == "split_rejected" {
                            cell.rejected += c.n;
                        }
                    }
                    (q.code.clone(), cell)
                })
                .collect();
            (t.code.clone(), row)
        })
        .collect();
    // The reasons of the counted rejects, and each validator's counted verdicts.
    let mut reason_rows: BTreeMap<(i64, String, String), i64> = BTreeMap::new();
    let mut verdicts: BTreeMap<(String, i64), (i64, i64)> = BTreeMap::new();
    for c in outcomes.iter().filter(decided) {
        for (who, verdict, reasons) in [
            (&c.rater1, &c.verdict1, &c.reasons1),
            (&c.rater2, &c.verdict2, &c.reasons2),
        ] {
            let entry = verdicts.entry((who.clone(), c.stage)).or_default();
            entry.0 += c.n;
            if verdict.as_deref() == Some("valid") {
                entry.1 += c.n;
            } else {
                for reason in reasons
                    .as_deref()
                    .unwrap_or("")
                    .split(';')
                    .filter(|x| !x.is_empty())
                {
                    *reason_rows
                        .entry((c.stage, c.task.clone(), reason.to_string()))
                        .or_default() += c.n;
                }
            }
        }
    }
    QcReport {
        campaign: campaign.to_string(),
        versions: scope.versions,
        task: task.map(str::to_string),
        pair: scope.pair.clone(),
        t11,
        t12,
        stage1: stage_summary(outcomes, 1),
        stage2: stage_summary(outcomes, 2),
        reasons: reason_rows
            .into_iter()
            .map(|((stage, task, reason), n)| ReasonRow {
                stage,
                task,
                reason,
                n,
            })
            .collect(),
        validators: verdicts
            .into_iter()
            .map(|((validator, stage), (n, valid))| ValidatorActivity {
                median_ms: medians.get(&(validator.clone(), stage)).copied().flatten(),
                validator,
                stage,
                verdicts: n,
                valid,
            })
            .collect(),
        pairs: Vec::new(),
        sampled: !taxonomy.sampling.is_empty(),
        clip_review: taxonomy.clip_review,
    }
}

impl QcReport {
    /// The scope in words, for captions and the paper bundle's README.
    /// The task and pair chosen, in words.
    fn who_text(&self) -> String {
        format!(
            "{}; {}",
            self.task
                .as_deref()
                .map_or("all tasks".to_string(), |t| format!("task {t}")),
            self.pair
                .as_ref()
                .map_or("all pairs".to_string(), |(a, b)| {
                    format!("pair {a} (rater 1) + {b} (rater 2)")
                })
        )
    }

    pub fn scope_text(&self) -> String {
        let who = self.who_text();
        if !self.clip_review {
            return format!("{who}; every question (no clip review)");
        }
        format!(
            "Stage 1 over {}; {who}; Stage 2 over every question of a retained clip",
            match self.versions {
                Versions::First => "the first version of every clip",
                Versions::All => "every version of every clip",
            },
        )
    }

    /// The caption of this report's figures, computed at `computed` (µs since the epoch).
    pub fn caption(&self, computed: i64) -> svg::Caption {
        svg::Caption {
            campaign: self.campaign.clone(),
            scope: self.scope_text(),
            computed: crate::clock::to_rfc3339(computed),
        }
    }

    /// `caption` narrowed to one stage's scope: a Stage 1 figure names what Stage 1
    /// covered (which versions), a Stage 2 figure what Stage 2 covered, each with the
    /// task and pair chosen.
    pub fn stage_caption(&self, stage: i64, caption: &svg::Caption) -> svg::Caption {
        let who = self.who_text();
        let scope = match (stage, self.clip_review) {
            (1, _) => format!(
                "Stage 1 over {}; {who}",
                match self.versions {
                    Versions::First => "the first version of every clip",
                    Versions::All => "every version of every clip",
                }
            ),
            (_, true) => format!("Stage 2 over every question of a retained clip; {who}"),
            (_, false) => format!("{who}; every question (no clip review)"),
        };
        svg::Caption {
            scope,
            ..caption.clone()
        }
    }

    /// `t11` as SPEC section 7 gives it: `{ TASK: {"reviewed", "retained"} }`.
    /// Without clip review, empty.
    pub fn t11_json(&self) -> Value {
        serde_json::to_value(self.t11_reply()).unwrap_or(Value::Null)
    }

    /// `t12`: `{ TASK: { QA_TYPE: {"reviewed", "rejected"} } }`, matrix cells only.
    pub fn t12_json(&self) -> Value {
        serde_json::to_value(self.t12_reply()).unwrap_or(Value::Null)
    }

    /// `t13`: `{"stage1": S, "stage2": S}`; without clip review `{"stage2": S}`.
    pub fn t13_json(&self) -> Value {
        serde_json::to_value(self.t13_reply()).unwrap_or(Value::Null)
    }

    /// The stages the campaign reviews, with their summaries: (`stage1`, Stage 1) only
    /// with clip review, then (`stage2`, Stage 2).
    pub fn stages(&self) -> Vec<(&'static str, &StageSummary)> {
        let mut out = Vec::with_capacity(2);
        if self.clip_review {
            out.push(("stage1", &self.stage1));
        }
        out.push(("stage2", &self.stage2));
        out
    }

    /// Everything, as `tandem stats --json` prints it.
    pub fn json(&self) -> Value {
        serde_json::to_value(self.reply()).unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests;

//! The figures of `GET /api/v1/campaigns/{c}/stats` and `tandem stats --json` as types:
//! the JSON is these serialized (the OpenAPI document's schemas are made from them, so
//! the two cannot drift). Keys of SPEC section 7; undefined figures are null.

use super::study::{BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, StudyReport};
use super::{Agreement, KAPPA_CI95_BOUNDED_METHOD, PairRow, QcReport, ReasonRow, StageSummary};
use crate::domain::facts::Versions;
use crate::domain::study::{RANK_AXES, Truth};
use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// Every figure of a campaign in a scope: Tables 11-13, the reasons, the validators'
/// figures, linked pairs, and the study's Tables 14 and 15 once it has answers.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct StatsReply {
    pub campaign: String,
    pub scope: ScopeReply,
    /// Table 11 by task (empty without clip review).
    pub t11: BTreeMap<String, T11Reply>,
    /// Table 12 by task, then QA type: the cells of the applicability matrix.
    pub t12: BTreeMap<String, BTreeMap<String, T12Reply>>,
    pub t13: T13Reply,
    pub reasons: Vec<ReasonRow>,
    pub validators: Vec<ValidatorReply>,
    /// Linked question pairs per task; only in a campaign that links questions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pairs: Option<Vec<PairRow>>,
    /// Table 14 by source, then axis; only once the study has answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t14: Option<BTreeMap<String, BTreeMap<String, T14Cell>>>,
    /// Kendall's W and the Friedman test per axis.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t14_tests: Option<BTreeMap<String, T14Test>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t15: Option<T15Reply>,
    /// The human baseline under circular evaluation, over every answer
    /// whatever the scope; only once it has answers. Intervals are Clopper-Pearson.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<super::baseline::BaselineReport>,
    /// Table 16, the annotator pool: the campaign's groups and their sizes.
    pub t16: super::baseline::Groups,
    /// How good the review is: each validator's sensitivity and specificity, the
    /// prevalence of defects, the defects left in the retained set (a latent-class
    /// model; without known items, bounds instead of numbers). Over the scope's items.
    pub review_quality: Option<super::quality::ReviewQualityReply>,
    /// The blind key check: validators' answers before the key against the key, per
    /// QA type and level, and the keys in doubt; only once there are blind answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blind_key_check: Option<super::blind::BlindKeyReply>,
    /// The known items of the live queue: each validator's catch rate on known defects
    /// and pass rate on known sound items, with Wilson intervals, over the campaign and
    /// recently; only once a known item has a verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub known_items: Option<super::known::KnownItemsReply>,
}

/// What the figures count.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ScopeReply {
    #[schema(value_type = String, example = "first")]
    pub versions: Versions,
    pub task: Option<String>,
    pub pair: Option<PairScope>,
    pub note: String,
}

/// A pair of validators, rater 1 first.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PairScope {
    pub rater1: String,
    pub rater2: String,
}

/// Table 11: one task's clips.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct T11Reply {
    /// Clips whose two verdicts are in.
    pub reviewed: i64,
    /// Both passed, or the author accepted the split.
    pub retained: i64,
    /// Of `reviewed`, clips whose split waits for an author: counted as not retained
    /// until the author decides.
    pub waiting_for_author: i64,
    /// Retained unreviewed (their lot's sample passed); only with sampled review.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retained_by_sample: Option<i64>,
}

/// Table 12: one task x QA type cell of Stage 2.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct T12Reply {
    pub reviewed: i64,
    /// Both rejected, or the author rejected the split.
    pub rejected: i64,
    /// Retained unreviewed; only with sampled review.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retained_by_sample: Option<i64>,
}

/// Table 13: Stage 1 (clips; only with clip review) and Stage 2 (questions).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct T13Reply {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage1: Option<StageReply>,
    pub stage2: StageReply,
}

/// One stage of Table 13: the outcomes, the pooled agreement (over the one 2x2 table
/// summed over pairs) and the agreement of each pair.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct StageReply {
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
    #[serde(flatten)]
    pub agreement: AgreementReply,
    /// One row per task and pair.
    pub per_pair: Vec<PairAgreementReply>,
    /// One row per pair, its tasks pooled.
    pub per_rater_pair: Vec<RaterPairAgreementReply>,
    /// Retained unreviewed; only with sampled review.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retained_by_sample: Option<i64>,
}

/// The agreement figures of one 2x2 table.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AgreementReply {
    /// Rows rater 1 (valid, reject), columns rater 2 (valid, reject).
    pub table: [[i64; 2]; 2],
    pub raw_agreement: Option<f64>,
    pub cohen_kappa: Option<f64>,
    pub cohen_kappa_se: Option<f64>,
    /// The large-sample Wald interval as statsmodels computes it, not clipped.
    pub cohen_kappa_ci95: Option<[f64; 2]>,
    /// The same interval truncated to [-1, 1]: what tables and plots show.
    pub cohen_kappa_ci95_bounded: Option<[f64; 2]>,
    /// How the bounded interval is made, in words.
    pub cohen_kappa_ci95_method: String,
    pub gwet_ac1: Option<f64>,
    pub pabak: Option<f64>,
    pub krippendorff_alpha: Option<f64>,
    /// Set when the table holds fewer items than the minimum for chance-corrected
    /// figures: they are then `null`, and this says how many items and why.
    pub withheld: Option<super::Withheld>,
}

/// Table 13: one pair on one task.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PairAgreementReply {
    pub task: String,
    pub rater1: String,
    pub rater2: String,
    pub items: i64,
    #[serde(flatten)]
    pub agreement: AgreementReply,
}

/// Table 13: one pair over every task it reviewed.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RaterPairAgreementReply {
    pub rater1: String,
    pub rater2: String,
    /// The tasks pooled, in taxonomy order.
    pub tasks: Vec<String>,
    pub items: i64,
    #[serde(flatten)]
    pub agreement: AgreementReply,
}

/// A validator's verdicts in one stage.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ValidatorReply {
    pub validator: String,
    pub stage: i64,
    pub verdicts: i64,
    /// The share of `valid` verdicts.
    pub pass_rate: Option<f64>,
    /// The median time per decision, in ms.
    pub median_ms: Option<f64>,
}

/// Table 14: one source's ranks on one axis.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct T14Cell {
    pub mean: Option<f64>,
    pub std: Option<f64>,
    pub n: usize,
}

/// Kendall's W and the Friedman test of one axis.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct T14Test {
    pub n_blocks: usize,
    pub kendall_w: Option<f64>,
    pub friedman: Option<FriedmanReply>,
}

/// Friedman's chi-square test.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FriedmanReply {
    pub chi2: f64,
    pub dof: usize,
    pub p_value: f64,
}

/// Table 15: the real/fake judgments, per source and pooled.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct T15Reply {
    pub sources: BTreeMap<String, T15Source>,
    pub pooled_fleiss_kappa: Option<f64>,
    pub pooled_fleiss_kappa_missing_data: Option<f64>,
    pub pooled_krippendorff_alpha: Option<f64>,
    /// Whether every participant labelled every clip.
    pub complete: bool,
    pub participants: Vec<String>,
    pub human_error_rate: Option<f64>,
    pub human_error_rate_ci95: Option<[f64; 2]>,
    pub bootstrap: Bootstrap,
    pub detection: Vec<DetectionReply>,
}

/// One source's judgments.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct T15Source {
    /// `real` or `fake`, when the study knows.
    pub truth: Option<String>,
    pub items: usize,
    pub items_unlabelled: usize,
    pub judgments: usize,
    pub judged_fake: Option<f64>,
    /// Per participant: how many of this source's clips they judged fake (null: they
    /// labelled none).
    pub fake_counts: BTreeMap<String, Option<usize>>,
    /// Per participant: how many of this source's clips they labelled.
    pub labels: BTreeMap<String, usize>,
    pub fleiss_kappa: Option<f64>,
    pub fleiss_kappa_missing_data: Option<f64>,
    pub krippendorff_alpha: Option<f64>,
}

/// How the intervals of Table 15 are drawn.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Bootstrap {
    pub resamples: usize,
    pub seed: u64,
    pub confidence: f64,
    pub over: String,
}

/// One participant's detection of fakes.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DetectionReply {
    pub participant: String,
    pub fakes: u64,
    pub hits: u64,
    pub hit_rate: Option<f64>,
    pub hit_rate_ci95: Option<[f64; 2]>,
    pub reals: u64,
    pub false_alarms: u64,
    pub false_alarm_rate: Option<f64>,
    pub false_alarm_rate_ci95: Option<[f64; 2]>,
    pub d_prime: Option<f64>,
}

fn pair(x: Option<(f64, f64)>) -> Option<[f64; 2]> {
    x.map(|(a, b)| [a, b])
}

impl AgreementReply {
    pub fn of(a: &Agreement) -> AgreementReply {
        AgreementReply {
            table: a.table,
            raw_agreement: a.raw_agreement,
            cohen_kappa: a.cohen_kappa,
            cohen_kappa_se: a.cohen_kappa_se,
            cohen_kappa_ci95: a.cohen_kappa_ci95,
            cohen_kappa_ci95_bounded: a.cohen_kappa_ci95_bounded,
            cohen_kappa_ci95_method: KAPPA_CI95_BOUNDED_METHOD.to_string(),
            gwet_ac1: a.gwet_ac1,
            pabak: a.pabak,
            krippendorff_alpha: a.krippendorff_alpha,
            withheld: a.withheld.clone(),
        }
    }
}

impl StageReply {
    pub fn of(s: &StageSummary, sampled: bool) -> StageReply {
        StageReply {
            items_reviewed: s.items_reviewed,
            both_pass: s.both_pass,
            both_reject: s.both_reject,
            split: s.split,
            split_accepted: s.split_accepted,
            split_rejected: s.split_rejected,
            split_pending: s.split_pending,
            pending: s.pending,
            agreement: AgreementReply::of(&s.pooled),
            per_pair: s
                .per_pair
                .iter()
                .map(|p| PairAgreementReply {
                    task: p.task.clone(),
                    rater1: p.rater1.clone(),
                    rater2: p.rater2.clone(),
                    items: p.items,
                    agreement: AgreementReply::of(&p.agreement),
                })
                .collect(),
            per_rater_pair: s
                .per_rater_pair
                .iter()
                .map(|p| RaterPairAgreementReply {
                    rater1: p.rater1.clone(),
                    rater2: p.rater2.clone(),
                    tasks: p.tasks.clone(),
                    items: p.items,
                    agreement: AgreementReply::of(&p.agreement),
                })
                .collect(),
            retained_by_sample: sampled.then_some(s.by_sample),
        }
    }
}

impl QcReport {
    /// `t11` as SPEC section 7 gives it; without clip review, empty.
    pub fn t11_reply(&self) -> BTreeMap<String, T11Reply> {
        if !self.clip_review {
            return BTreeMap::new();
        }
        self.t11
            .iter()
            .map(|(task, c)| {
                let cell = T11Reply {
                    reviewed: c.reviewed,
                    retained: c.retained,
                    waiting_for_author: c.waiting,
                    retained_by_sample: self.sampled.then_some(c.by_sample),
                };
                (task.clone(), cell)
            })
            .collect()
    }

    /// `t12`: the cells of the applicability matrix.
    pub fn t12_reply(&self) -> BTreeMap<String, BTreeMap<String, T12Reply>> {
        self.t12
            .iter()
            .map(|(task, row)| {
                let cells = row
                    .iter()
                    .map(|(qa, c)| {
                        let cell = T12Reply {
                            reviewed: c.reviewed,
                            rejected: c.rejected,
                            retained_by_sample: self.sampled.then_some(c.by_sample),
                        };
                        (qa.clone(), cell)
                    })
                    .collect();
                (task.clone(), cells)
            })
            .collect()
    }

    /// `t13`: Stage 1 only with clip review, then Stage 2.
    pub fn t13_reply(&self) -> T13Reply {
        T13Reply {
            stage1: self
                .clip_review
                .then(|| StageReply::of(&self.stage1, self.sampled)),
            stage2: StageReply::of(&self.stage2, self.sampled),
        }
    }

    /// Everything of Tables 11-13 and the operational figures (the study's tables are
    /// added by [`StatsReply::with_study`]).
    pub fn reply(&self) -> StatsReply {
        StatsReply {
            campaign: self.campaign.clone(),
            scope: ScopeReply {
                versions: self.versions,
                task: self.task.clone(),
                pair: self.pair.as_ref().map(|(a, b)| PairScope {
                    rater1: a.clone(),
                    rater2: b.clone(),
                }),
                note: "Stage 1 counts the first version of every clip unless versions is \"all\"; Stage 2 counts every question reviewed; items with fewer than two verdicts are left out and counted under \"pending\".".into(),
            },
            t11: self.t11_reply(),
            t12: self.t12_reply(),
            t13: self.t13_reply(),
            reasons: self.reasons.clone(),
            validators: self
                .validators
                .iter()
                .map(|v| ValidatorReply {
                    validator: v.validator.clone(),
                    stage: v.stage,
                    verdicts: v.verdicts,
                    pass_rate: (v.verdicts > 0).then(|| v.valid as f64 / v.verdicts as f64),
                    median_ms: v.median_ms,
                })
                .collect(),
            // Only a campaign with linked questions has pair counts.
            pairs: (!self.pairs.is_empty()).then(|| self.pairs.clone()),
            t14: None,
            t14_tests: None,
            t15: None,
            baseline: None,
            t16: Default::default(),
            review_quality: None,
            blind_key_check: None,
            known_items: None,
        }
    }
}

impl StatsReply {
    /// The figures with the study's Tables 14 and 15.
    pub fn with_baseline(mut self, r: Option<super::baseline::BaselineReport>) -> StatsReply {
        self.baseline = r;
        self
    }

    pub fn with_review_quality(mut self, q: super::quality::ReviewQualityReply) -> StatsReply {
        self.review_quality = Some(q);
        self
    }

    pub fn with_blind_key_check(mut self, b: Option<super::blind::BlindKeyReply>) -> StatsReply {
        self.blind_key_check = b;
        self
    }

    pub fn with_known_items(mut self, k: Option<super::known::KnownItemsReply>) -> StatsReply {
        self.known_items = k;
        self
    }

    pub fn with_groups(mut self, g: super::baseline::Groups) -> StatsReply {
        self.t16 = g;
        self
    }

    pub fn with_study(mut self, r: &StudyReport) -> StatsReply {
        self.t14 = Some(r.t14_reply());
        self.t14_tests = Some(r.t14_tests_reply());
        self.t15 = Some(r.t15_reply());
        self
    }
}

impl StudyReport {
    /// `t14`: `{SOURCE: {AXIS: {mean, std, n}}}` (SPEC section 7).
    pub fn t14_reply(&self) -> BTreeMap<String, BTreeMap<String, T14Cell>> {
        self.sources
            .iter()
            .zip(&self.t14)
            .map(|(s, row)| {
                let axes = RANK_AXES
                    .iter()
                    .zip(row)
                    .map(|(axis, cell)| {
                        let cell = T14Cell {
                            mean: cell.mean,
                            std: cell.std,
                            n: cell.n,
                        };
                        (axis.as_str().to_string(), cell)
                    })
                    .collect();
                (s.clone(), axes)
            })
            .collect()
    }

    /// Kendall's W and the Friedman test per axis.
    pub fn t14_tests_reply(&self) -> BTreeMap<String, T14Test> {
        RANK_AXES
            .iter()
            .zip(&self.tests)
            .map(|(axis, t)| {
                let test = T14Test {
                    n_blocks: t.n_blocks,
                    kendall_w: t.kendall_w,
                    friedman: t.friedman.as_ref().map(|f| FriedmanReply {
                        chi2: f.chi2,
                        dof: f.dof,
                        p_value: f.p_value,
                    }),
                };
                (axis.as_str().to_string(), test)
            })
            .collect()
    }

    /// `t15` with the keys of SPEC section 7 and more.
    pub fn t15_reply(&self) -> T15Reply {
        let sources = self
            .t15
            .iter()
            .map(|j| {
                let source = T15Source {
                    truth: j.truth.map(|t| Truth::as_str(t).to_string()),
                    items: j.items,
                    items_unlabelled: j.items_unlabelled,
                    judgments: j.judgments,
                    judged_fake: j.judged_fake,
                    fake_counts: j
                        .fake_counts
                        .iter()
                        .map(|(p, n)| {
                            let given = j.labels.get(p).copied().unwrap_or(0);
                            (p.clone(), (given > 0).then_some(*n))
                        })
                        .collect(),
                    labels: j.labels.clone(),
                    fleiss_kappa: j.agreement.fleiss_kappa,
                    fleiss_kappa_missing_data: j.agreement.fleiss_kappa_missing_data,
                    krippendorff_alpha: j.agreement.krippendorff_alpha,
                };
                (j.source.clone(), source)
            })
            .collect();
        T15Reply {
            sources,
            pooled_fleiss_kappa: self.pooled.fleiss_kappa,
            pooled_fleiss_kappa_missing_data: self.pooled.fleiss_kappa_missing_data,
            pooled_krippendorff_alpha: self.pooled.krippendorff_alpha,
            complete: self.complete,
            participants: self.participants.clone(),
            human_error_rate: self.human_error_rate,
            human_error_rate_ci95: pair(self.human_error_rate_ci95),
            bootstrap: Bootstrap {
                resamples: BOOTSTRAP_RESAMPLES,
                seed: BOOTSTRAP_SEED,
                confidence: 0.95,
                over: "clips".into(),
            },
            detection: self
                .detection
                .iter()
                .map(|d| DetectionReply {
                    participant: d.participant.clone(),
                    fakes: d.fakes,
                    hits: d.hits,
                    hit_rate: d.hit_rate,
                    hit_rate_ci95: pair(d.hit_rate_ci95),
                    reals: d.reals,
                    false_alarms: d.false_alarms,
                    false_alarm_rate: d.false_alarm_rate,
                    false_alarm_rate_ci95: pair(d.false_alarm_rate_ci95),
                    d_prime: d.d_prime,
                })
                .collect(),
        }
    }
}

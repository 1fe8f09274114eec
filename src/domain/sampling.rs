//! Sampled review inside a campaign (TUMTraffic-VideoQA's "selective quality
//! evaluation"): a protocol may say that a stratum (a task's clips in Stage 1; a task's
//! questions of one QA type, or of every QA type, in Stage 2) is reviewed by sample.
//!
//! Its items are held when they arrive (in no queue). Drawing takes every held item of
//! the stratum as one lot, draws the plan's n of them from a seed stored with the lot
//! (every item when the lot is no larger) and puts those in their pair's queues; they go
//! through the same paired review as any other item. Once every drawn item is final
//! (both verdicts in, a split resolved), settling decides the lot: at most c defects
//! (drawn items the review rejected) accept it, and its undrawn items are retained "by
//! sample" (no reviewer); more reject it, and its undrawn items go to full review. The
//! lot's figures are the defects in the sample and the exact upper bound on the whole's
//! defect rate.
//!
//! Everything here is pure: the draw is a function of the seed and the lot's members.

use super::{Outcome, Stage};
use crate::rng::Xoshiro256;
use serde::{Deserialize, Serialize};

/// How a stratum's sample size and acceptance number are found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PlanSpec {
    /// The binomial single sampling plan for an acceptable and a rejectable quality
    /// level and the producer's and consumer's risks (`tandem sampling plan`).
    Risks {
        aql: f64,
        rql: f64,
        alpha: f64,
        beta: f64,
    },
    /// Show the defect rate below `p` with no defect in the sample (c = 0; the
    /// sample size of `tandem sampling zero` at the rule's confidence).
    ZeroDefect { p: f64 },
    /// A plan the lab chose itself: review `n`, accept with at most `c` defects.
    Fixed { n: u64, c: u64 },
}

/// A protocol's rule that reviews a stratum by sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SamplingRule {
    pub stage: Stage,
    /// The task it covers; every task when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// Stage 2: the QA type it covers; every QA type when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qa_type: Option<String>,
    pub plan: PlanSpec,
    /// The confidence of the upper bound stated for each lot (and of a zero-defect
    /// plan's sample size).
    pub confidence: f64,
}

impl SamplingRule {
    /// Whether the rule covers an item of `stage`, `task` and (Stage 2) `qa_type`.
    pub fn covers(&self, stage: Stage, task: &str, qa_type: Option<&str>) -> bool {
        self.stage == stage
            && self.task.as_deref().is_none_or(|t| t == task)
            && self
                .qa_type
                .as_deref()
                .is_none_or(|q| qa_type.is_some_and(|x| x == q))
    }

    /// Whether two rules could cover the same item.
    pub fn overlaps(&self, other: &SamplingRule) -> bool {
        let same = |a: &Option<String>, b: &Option<String>| match (a, b) {
            (Some(x), Some(y)) => x == y,
            _ => true,
        };
        self.stage == other.stage
            && same(&self.task, &other.task)
            && same(&self.qa_type, &other.qa_type)
    }

    /// "Stage 2, task VQA, QA type CNT", for messages.
    pub fn describe(&self) -> String {
        let mut s = format!("Stage {}", self.stage);
        s.push_str(&match &self.task {
            Some(t) => format!(", task {t}"),
            None => ", every task".into(),
        });
        if self.stage == Stage::Question {
            s.push_str(&match &self.qa_type {
                Some(q) => format!(", QA type {q}"),
                None => ", every QA type".into(),
            });
        }
        s
    }
}

/// The place in `rules` of the rule that covers an item, if any (rules do not overlap:
/// the protocol file refuses two that could).
pub fn rule_index(
    rules: &[SamplingRule],
    stage: Stage,
    task: &str,
    qa_type: Option<&str>,
) -> Option<usize> {
    rules.iter().position(|r| r.covers(stage, task, qa_type))
}

/// The rule of `rules` that covers an item, if any.
pub fn rule_for<'a>(
    rules: &'a [SamplingRule],
    stage: Stage,
    task: &str,
    qa_type: Option<&str>,
) -> Option<&'a SamplingRule> {
    rule_index(rules, stage, task, qa_type).map(|i| &rules[i])
}

/// The items of a lot to review: `n` of `members` (item id, item key), drawn by a
/// seeded shuffle of the members in key order, so that the same seed and members give
/// the same sample whatever order they were read in; every member when there are no
/// more than `n`. Returned in key order.
pub fn draw(seed: u64, members: &[(i64, String)], n: u64) -> Vec<i64> {
    let mut sorted: Vec<&(i64, String)> = members.iter().collect();
    sorted.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
    let take = usize::try_from(n).unwrap_or(usize::MAX).min(sorted.len());
    let mut rng = Xoshiro256::seed_from_u64(seed);
    // A partial Fisher-Yates shuffle: the first `take` places hold the sample.
    for i in 0..take {
        let left = (sorted.len() - i) as u64;
        let j = i + rng.below(left).unwrap_or(0) as usize;
        sorted.swap(i, j);
    }
    let mut chosen: Vec<&(i64, String)> = sorted[..take].to_vec();
    chosen.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
    chosen.into_iter().map(|m| m.0).collect()
}

/// What a lot's sample shows once reviewed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LotReview {
    /// Some drawn items are not final yet: `open` of them.
    Open { open: u64 },
    /// Every drawn item is final: the defects among them and whether the lot passes.
    Done { defects: u64, accepted: bool },
}

/// The review of a lot from the outcomes of its drawn items and its acceptance number.
/// A defect is a drawn item the review rejected (both rejected, or the author rejected
/// a split); a pending item or an unresolved split keeps the lot open.
pub fn review_of(drawn: &[Outcome], c: u64) -> LotReview {
    let open = drawn
        .iter()
        .filter(|o| !o.is_retained() && !o.is_rejected())
        .count() as u64;
    if open > 0 {
        return LotReview::Open { open };
    }
    let defects = drawn.iter().filter(|o| o.is_rejected()).count() as u64;
    LotReview::Done {
        defects,
        accepted: defects <= c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(n: i64) -> Vec<(i64, String)> {
        (1..=n).map(|i| (i, format!("q{i:04}"))).collect()
    }

    #[test]
    fn a_draw_is_reproducible_from_its_seed_and_not_from_the_read_order() {
        let m = members(200);
        let a = draw(42, &m, 20);
        assert_eq!(a.len(), 20);
        let mut reversed = m.clone();
        reversed.reverse();
        assert_eq!(draw(42, &reversed, 20), a, "the read order does not matter");
        assert_ne!(draw(43, &m, 20), a, "another seed, another sample");
        let mut unique = a.clone();
        unique.dedup();
        assert_eq!(unique.len(), 20, "no item twice");
        assert!(a.iter().all(|id| (1..=200).contains(id)));
    }

    #[test]
    fn a_lot_no_larger_than_the_sample_is_reviewed_whole() {
        let m = members(7);
        assert_eq!(draw(1, &m, 20), (1..=7).collect::<Vec<_>>());
        assert_eq!(draw(1, &m, 7).len(), 7);
        assert!(draw(1, &[], 5).is_empty());
    }

    #[test]
    fn every_item_is_equally_likely_to_be_drawn() {
        // 10,000 draws of 5 of 20: each item drawn about 2,500 times.
        let m = members(20);
        let mut count = [0u32; 20];
        for seed in 0..10_000 {
            for id in draw(seed, &m, 5) {
                count[(id - 1) as usize] += 1;
            }
        }
        for c in count {
            assert!((2_300..=2_700).contains(&c), "{count:?}");
        }
    }

    #[test]
    fn a_lot_is_decided_once_every_drawn_item_is_final() {
        use Outcome::*;
        assert_eq!(
            review_of(&[BothPass, Pending, Split], 1),
            LotReview::Open { open: 2 }
        );
        assert_eq!(
            review_of(&[BothPass, SplitRejected, BothReject], 1),
            LotReview::Done {
                defects: 2,
                accepted: false
            }
        );
        assert_eq!(
            review_of(&[BothPass, SplitAccepted, BothReject], 1),
            LotReview::Done {
                defects: 1,
                accepted: true
            }
        );
        assert_eq!(
            review_of(&[], 0),
            LotReview::Done {
                defects: 0,
                accepted: true
            }
        );
    }

    #[test]
    fn rules_cover_their_stratum_and_overlap_when_they_could_share_an_item() {
        let rule = |stage, task: Option<&str>, qa: Option<&str>| SamplingRule {
            stage,
            task: task.map(String::from),
            qa_type: qa.map(String::from),
            plan: PlanSpec::Fixed { n: 5, c: 0 },
            confidence: 0.95,
        };
        let all2 = rule(Stage::Question, None, None);
        let vqa_cnt = rule(Stage::Question, Some("VQA"), Some("CNT"));
        let vqa1 = rule(Stage::Clip, Some("VQA"), None);
        assert!(all2.covers(Stage::Question, "ROC", Some("CAP")));
        assert!(vqa_cnt.covers(Stage::Question, "VQA", Some("CNT")));
        assert!(!vqa_cnt.covers(Stage::Question, "VQA", Some("POS")));
        assert!(!vqa_cnt.covers(Stage::Clip, "VQA", None));
        assert!(vqa1.covers(Stage::Clip, "VQA", None));
        assert!(all2.overlaps(&vqa_cnt));
        assert!(!vqa_cnt.overlaps(&vqa1));
        assert!(!vqa_cnt.overlaps(&rule(Stage::Question, Some("VQA"), Some("POS"))));
        assert_eq!(
            rule_for(
                &[vqa1.clone(), vqa_cnt.clone()],
                Stage::Question,
                "VQA",
                Some("CNT")
            ),
            Some(&vqa_cnt)
        );
        assert_eq!(vqa_cnt.describe(), "Stage 2, task VQA, QA type CNT");
        assert_eq!(vqa1.describe(), "Stage 1, task VQA");
    }
}

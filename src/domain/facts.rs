//! The facts the tables are computed from: what the store returns and `report` reads.
//! Plain data, no I/O; the store fills them, the report never reaches the store.

use super::study::{Axis, Truth};
use serde::Serialize;

/// Which clip versions Stage 1 counts: the first review of every clip (the paper's
/// Table 13 counts the 1,200 first reviews), or every version including regenerated
/// ones. Stage 2 always counts every question reviewed (only versions that reached
/// Stage 2 have reviewed questions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Versions {
    #[default]
    First,
    All,
}

impl Versions {
    pub fn parse(s: &str) -> std::result::Result<Versions, String> {
        match s {
            "first" => Ok(Versions::First),
            "all" => Ok(Versions::All),
            other => Err(format!("versions must be `first` or `all`, not `{other}`")),
        }
    }
}

/// What the tables cover.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    pub versions: Versions,
    /// One task only (its code).
    pub task: Option<String>,
    /// One pair only: (rater 1, rater 2) names, in that order.
    pub pair: Option<(String, String)>,
}

impl Scope {
    /// A scope from the command line's or the page's words: a task code, a pair as
    /// `RATER1,RATER2`, and `first` or `all` versions.
    pub fn parse(
        task: Option<String>,
        pair: Option<&str>,
        versions: &str,
    ) -> Result<Scope, super::rules::FieldError> {
        use super::rules::FieldError;
        let pair = match pair {
            None => None,
            Some(p) => match p.split_once(',') {
                Some((a, b)) if !a.trim().is_empty() && !b.trim().is_empty() => {
                    Some((a.trim().to_string(), b.trim().to_string()))
                }
                _ => {
                    return Err(FieldError::new(
                        "pair",
                        format!("give the pair as RATER1,RATER2, not `{p}`"),
                    ));
                }
            },
        };
        Ok(Scope {
            versions: Versions::parse(versions).map_err(|m| FieldError::new("versions", m))?,
            task,
            pair,
        })
    }

    /// A known item's verdict is in the scope: of its task, and given by one of its
    /// pair's validators (the known items rated by others say nothing of the pair).
    pub fn holds_known(&self, k: &super::records::KnownRecord) -> bool {
        self.task.as_ref().is_none_or(|t| *t == k.task)
            && self
                .pair
                .as_ref()
                .is_none_or(|(a, b)| *a == k.validator || *b == k.validator)
    }
}

/// Items of one stage, task (and QA type), pair and outcome with the same counted
/// verdicts and reasons.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OutcomeCount {
    pub stage: i64,
    pub task: String,
    /// Stage 2: the question's QA type.
    pub qa_type: Option<String>,
    /// The item's pair (fixed at its first verdict); empty for items not started.
    pub rater1: String,
    pub rater2: String,
    pub outcome: String,
    /// The counted verdicts and their reasons, once both decided.
    pub verdict1: Option<String>,
    pub verdict2: Option<String>,
    pub reasons1: Option<String>,
    pub reasons2: Option<String>,
    pub n: i64,
}

/// One decided item of the benchmark (current version, not pending, not retained by
/// sample) with its counted verdicts: one row of [`OutcomeCount`] with `n` = 1.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecidedItem {
    pub item_id: String,
    pub clip_id: String,
    pub count: OutcomeCount,
}

/// One validator's counted verdicts in a stage.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ValidatorActivity {
    pub validator: String,
    pub stage: i64,
    /// Counted verdicts (one per item whose pair completed).
    pub verdicts: i64,
    pub valid: i64,
    /// Median time per decision, in ms, over all the validator's decisions of the
    /// stage in the campaign that have a time (changes included).
    pub median_ms: Option<f64>,
}

/// Everything the study's tables are computed from.
#[derive(Debug, Clone, Default)]
pub struct StudyData {
    pub sources: Vec<String>,
    pub clips: Vec<StudyClipFact>,
    pub responses: Vec<ResponseFact>,
}

#[derive(Debug, Clone)]
pub struct StudyClipFact {
    pub id: i64,
    pub set_id: i64,
    /// The set's and the clip's ids as the sets file named them.
    pub set_key: String,
    pub clip_key: String,
    pub source: String,
    pub truth: Truth,
}

#[derive(Debug, Clone)]
pub struct ResponseFact {
    pub participant: String,
    pub clip_id: i64,
    pub axis: Axis,
    pub value: String,
}

/// A question of a linked pair (one question asked in both directions), as the pair
/// counts read it: its task, its clip version, the pair's key and its outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairItem {
    pub task: String,
    pub version: i64,
    pub pair: String,
    pub outcome: super::Outcome,
}

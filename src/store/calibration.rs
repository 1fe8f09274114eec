//! Calibration: before reviewing, each validator decides held-out items whose verdicts
//! are known, sees the known verdict after each one, and opens the main queue once they
//! agree with enough of them. Calibration verdicts live in their own table and never
//! reach the QC statistics or the exports. (The types; the SQL is in
//! `store/areas/calibration.rs`.)

use super::review::{ClipView, QuestionView};
use crate::domain::{Reason, Stage, Verdict};
use serde::Serialize;

pub use crate::domain::calibration::{CalibrationState, CalibrationStatus, KnownVerdict};

/// What the validator gets back after a calibration verdict.
/// A clip the author resolved, copied as a known clip for validators who did not
/// review it (`areas::known::copy_resolved`).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct KnownCopy {
    /// The copy's clip id.
    pub clip_id: String,
    /// The clip it copies.
    pub source: String,
    /// The copy's items that carry the author's verdict as their known one.
    pub known_items: Vec<String>,
    /// The two validators it is served to (neither reviewed the source).
    pub validators: Vec<String>,
}

/// An item of the benchmark the author resolved, which its clip's copy can make a known
/// item for the validators who did not review it.
impl KnownCopy {
    /// The copy in words, for the CLI and the admin page.
    pub fn words(&self) -> String {
        format!(
            "{} is a known copy of {}, served to {} (who did not review it); known: {}",
            self.clip_id,
            self.source,
            self.validators.join(" and "),
            self.known_items.join(", ")
        )
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ResolvedItem {
    pub clip_id: String,
    pub task: String,
    pub stage: Stage,
    pub item_id: String,
    /// The author's verdict: `accept` or `reject`.
    pub verdict: String,
    /// The pair that reviewed it.
    pub reviewers: Vec<String>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct CalibrationFeedback {
    pub verdict: Verdict,
    pub reasons: Vec<Reason>,
    pub agrees: bool,
    pub known: KnownVerdict,
    pub status: CalibrationStatus,
}

/// A calibration item as its validator sees it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct CalibrationItem {
    pub stage: Stage,
    pub item_id: String,
    pub clip: ClipView,
    pub question: Option<QuestionView>,
    /// Once decided in the current round: the verdict and the known one.
    pub feedback: Option<CalibrationFeedback>,
}

/// One calibration item with its known verdict, for the admin.
#[derive(Debug, Clone, Serialize)]
pub struct CalibrationKey {
    pub stage: Stage,
    pub item_id: String,
    pub known: KnownVerdict,
}

/// A validator's calibration, for the admin.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct CalibrationScore {
    pub validator: String,
    #[serde(flatten)]
    pub status: CalibrationStatus,
}

/// One verdict of a calibration round, beside the known one.
#[derive(Debug, Clone, Serialize)]
pub struct RoundDecision {
    pub stage: Stage,
    pub item_id: String,
    pub verdict: Verdict,
    pub reasons: Vec<Reason>,
    pub agrees: bool,
    pub known: KnownVerdict,
}

/// How a round ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RoundResult {
    Passed,
    Failed,
    /// The validator's current round, not finished.
    Open,
    /// A round the known items opened, lifted by an admin before it was passed.
    Lifted,
}

/// One round of one validator's calibration, with every verdict in it.
#[derive(Debug, Clone, Serialize)]
pub struct CalibrationRound {
    pub validator: String,
    pub round: i64,
    pub result: RoundResult,
    /// The admin who started it (none for the first, or one the known items opened).
    pub started_by: Option<String>,
    /// µs since the epoch (not in the records the conformance test compares: a time).
    #[serde(skip)]
    pub started_at: i64,
    /// Why the known items of the live queue opened it (pausing the queue).
    pub reopened: Option<String>,
    /// The admin who lifted that pause.
    pub lifted_by: Option<String>,
    pub decisions: Vec<RoundDecision>,
}

impl CalibrationRound {
    pub fn agreed(&self) -> usize {
        self.decisions.iter().filter(|d| d.agrees).count()
    }

    /// The items decided otherwise than the known verdict.
    pub fn missed(&self) -> impl Iterator<Item = &RoundDecision> {
        self.decisions.iter().filter(|d| !d.agrees)
    }
}

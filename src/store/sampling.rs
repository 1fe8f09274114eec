//! Sampled review in the store's terms: a protocol's rule with the plan found for it,
//! the lots a run draws and settles, and a lot as the status shows it.

use crate::domain::Stage;
use crate::domain::sampling::SamplingRule;
use serde::Serialize;

/// A protocol's rule with its plan: review `n` of a lot, accept it with at most `c`
/// defects (found by the caller, from `stats::sampling`).
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedRule {
    pub rule: SamplingRule,
    pub n: u64,
    pub c: u64,
}

/// What one run did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, utoipa::ToSchema)]
pub struct SamplingRun {
    /// The lots whose reviewed sample decided them.
    pub settled: Vec<SettledLot>,
    /// The lots drawn from the held items.
    pub drawn: Vec<DrawnLot>,
    /// Held items that no rule covers any longer (the protocol changed), now in review.
    pub released: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct SettledLot {
    pub lot: i64,
    pub defects: u64,
    pub accepted: bool,
    /// Its undrawn items: retained by sample (accepted) or sent to full review.
    pub undrawn: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct DrawnLot {
    pub lot: i64,
    pub size: u64,
    pub drawn: u64,
}

/// A lot as stored, with its sample's progress.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Lot {
    pub id: i64,
    pub stage: Stage,
    pub task: String,
    /// The rule's QA type; none: every QA type of the task.
    pub qa_type: Option<String>,
    pub rule: SamplingRule,
    pub protocol_version: i64,
    /// The seed its sample was drawn from: the same seed and members draw the same
    /// items (`domain::sampling::draw`).
    pub seed: u64,
    /// Its items.
    pub size: u64,
    /// Drawn into the sample (the plan's n, or every item of a smaller lot).
    pub n: u64,
    /// The acceptance number.
    pub c: u64,
    pub drawn_at: i64,
    /// Settled: whether the sample accepted it.
    pub accepted: Option<bool>,
    /// Settled: the defects its sample held.
    pub defects: Option<u64>,
    pub settled_at: Option<i64>,
    /// Drawn items the review has decided (retained or rejected) so far.
    pub reviewed: u64,
    /// ... of which rejected: the defects so far.
    pub rejected: u64,
}

/// Items held for a draw: stage, task, QA type (Stage 2) and how many.
pub type Waiting = (Stage, String, Option<String>, u64);

/// A lot's members and its sample, to show that the draw is the stored seed's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LotMembers {
    /// (item id, item key) of every item of the lot, in key order.
    pub members: Vec<(i64, String)>,
    /// The ids its sample drew.
    pub drawn: Vec<i64>,
}

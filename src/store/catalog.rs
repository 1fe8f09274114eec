//! Campaigns, their tasks and pairs, imports and progress (the types; the SQL is in
//! `store/sql/catalog.rs`).

use crate::domain::taxonomy::Taxonomy;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub struct Campaign {
    pub id: i64,
    pub name: String,
    pub taxonomy: Arc<Taxonomy>,
    pub settings: Settings,
    /// Bumped by every change of the campaign's own row (its settings).
    pub revision: i64,
}

/// A campaign's targets and calibration rules.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Settings {
    /// Retained clips wanted per task.
    pub target_per_task: i64,
    /// Agreement with the known verdicts a validator needs in calibration.
    pub calibration_threshold: f64,
    /// ... over at least this many calibration items (or all of them, if fewer).
    pub calibration_min_items: i64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            target_per_task: 100,
            calibration_threshold: 0.8,
            calibration_min_items: 10,
        }
    }
}

/// A task with the pair in force.
#[derive(Debug, Clone, Serialize)]
pub struct TaskInfo {
    #[serde(skip)]
    pub id: i64,
    pub position: i64,
    pub code: String,
    pub name: String,
    /// The taxonomy's attributes of the task (VGenST: scale, perspective, dynamics).
    #[serde(flatten)]
    pub attributes: BTreeMap<String, String>,
    pub rater1: Option<String>,
    pub rater2: Option<String>,
    /// Whether an admin set this pair (rather than the pool's default rule).
    pub overridden: bool,
    /// Why the task has no pair, when it has none.
    pub pair_problem: Option<String>,
}

impl TaskInfo {
    /// The attributes' values in the taxonomy's order, for a line of text.
    pub fn attribute_line(&self, order: &[&str]) -> String {
        let mut out: Vec<&str> = order
            .iter()
            .filter_map(|k| self.attributes.get(*k).map(String::as_str))
            .collect();
        for (k, v) in &self.attributes {
            if !order.contains(&k.as_str()) {
                out.push(v);
            }
        }
        out.join(", ")
    }
}

/// What an import stored.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct ImportSummary {
    pub campaign: String,
    pub clips_new: usize,
    pub versions_new: usize,
    pub unchanged: usize,
    pub questions_new: usize,
}

impl std::fmt::Display for ImportSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "campaign `{}`: {} new clip(s), {} new version(s) of known clips, {} question(s) added, {} clip(s) unchanged",
            self.campaign, self.clips_new, self.versions_new, self.questions_new, self.unchanged
        )
    }
}

/// Counts of one task in one stage (newest clip versions only).
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct StageProgress {
    /// Items open for review (Stage 2: questions of retained clips).
    pub items: i64,
    /// Open items without any verdict yet.
    pub unstarted: i64,
    /// Open items with one verdict of two.
    pub half_decided: i64,
    pub both_pass: i64,
    pub both_reject: i64,
    /// Splits waiting for an author.
    pub split: i64,
    pub split_accepted: i64,
    pub split_rejected: i64,
    /// Stage 2 only: questions whose clip is not (yet) retained.
    pub not_open: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct TaskProgress {
    pub task: String,
    pub stage1: StageProgress,
    pub stage2: StageProgress,
}

//! Campaigns, their tasks and pairs, imports and progress (the types; the SQL is in
//! `store/areas/catalog.rs`).

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
    /// The version of its protocol in force: 1 at creation, one more at each change.
    /// Every decision records the version it was checked under.
    pub protocol_version: i64,
}

/// A campaign's targets and calibration rules.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Retained clips wanted per task.
    #[schema(minimum = 1)]
    pub target_per_task: i64,
    /// Agreement with the known verdicts a validator needs in calibration.
    #[schema(exclusive_minimum = 0, maximum = 1)]
    pub calibration_threshold: f64,
    /// ... over a round of this many calibration items, drawn from them (all of them, if
    /// there are no more).
    #[schema(minimum = 1)]
    pub calibration_min_items: i64,
    /// The blind key check (Stage 2): a validator answers each question from the video
    /// before its keyed answer is shown, then gives the verdict. Off unless given.
    #[serde(default)]
    pub blind_key_check: bool,
    /// How many of a validator's latest known defects (the known items of the live
    /// queue) the recent catch rate looks at; when its 95% interval lies wholly below
    /// the calibration threshold, the validator's queue pauses for a calibration round.
    /// 20 unless given.
    #[serde(default = "default_known_window")]
    #[schema(minimum = 1, maximum = 10000)]
    pub known_window: i64,
    /// The share of known clips served beside each task's real clips (0.05: one known
    /// clip for every twenty real ones, rounded up); the others wait in reserve until the
    /// real clips grow. 0, the default: every known clip imported is served.
    #[serde(default)]
    #[schema(minimum = 0, maximum = 1)]
    pub known_rate: f64,
}

fn default_known_window() -> i64 {
    20
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            target_per_task: 100,
            calibration_threshold: 0.8,
            calibration_min_items: 10,
            blind_key_check: false,
            known_window: default_known_window(),
            known_rate: 0.0,
        }
    }
}

/// A task with the pair in force.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
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
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct ImportSummary {
    pub campaign: String,
    pub clips_new: usize,
    pub versions_new: usize,
    pub unchanged: usize,
    pub questions_new: usize,
    /// The new versions' videos whose frame rate and count were read, could not be
    /// read, and were not tried (no reader for the container and no ffprobe).
    pub videos_timed: usize,
    pub videos_unreadable: usize,
    pub videos_untried: usize,
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
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq, utoipa::ToSchema)]
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
    /// Items of a stratum reviewed by sample held in no queue: waiting for a draw, or
    /// undrawn in a lot whose sample is under review (not counted in `items`).
    #[serde(skip_serializing_if = "is_zero")]
    pub held: i64,
    /// Retained unreviewed: their lot's sample passed (counted in `items`).
    #[serde(skip_serializing_if = "is_zero")]
    pub by_sample: i64,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// Where one item stands, as the overview counts it (newest clip versions, no
/// calibration items): one classification for the counts and for the lists behind
/// them, so that a list always holds exactly the items its number counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemClass {
    /// Stage 2: its clip is not (yet) retained.
    NotOpen,
    Unstarted,
    HalfDecided,
    BothPass,
    BothReject,
    /// A split waiting for an author.
    Split,
    SplitAccepted,
    SplitRejected,
    /// Held for a sample: in no queue until its lot is drawn, or (undrawn) settled.
    Held,
    /// Retained unreviewed: its lot's sample passed.
    BySample,
}

impl ItemClass {
    /// From the item's stored outcome, whether a verdict is in, whether it is open and
    /// whether it is held for a sample.
    pub fn of(
        outcome: &str,
        started: bool,
        open: bool,
        held: bool,
    ) -> crate::error::Result<ItemClass> {
        Ok(match (open, outcome) {
            (false, _) => ItemClass::NotOpen,
            (true, _) if held => ItemClass::Held,
            (true, "by_sample") => ItemClass::BySample,
            (true, "pending") if !started => ItemClass::Unstarted,
            (true, "pending") => ItemClass::HalfDecided,
            (true, "both_pass") => ItemClass::BothPass,
            (true, "both_reject") => ItemClass::BothReject,
            (true, "split") => ItemClass::Split,
            (true, "split_accepted") => ItemClass::SplitAccepted,
            (true, "split_rejected") => ItemClass::SplitRejected,
            (true, other) => {
                return Err(crate::error::Error::Internal(format!(
                    "stored outcome `{other}`"
                )));
            }
        })
    }

    /// In words, for the pages.
    pub fn words(self) -> &'static str {
        match self {
            ItemClass::NotOpen => "not open (clip not retained)",
            ItemClass::Unstarted => "not started",
            ItemClass::HalfDecided => "one verdict in",
            ItemClass::BothPass => "both pass",
            ItemClass::BothReject => "both reject",
            ItemClass::Split => "split, waiting for an author",
            ItemClass::SplitAccepted => "split, accepted by the author",
            ItemClass::SplitRejected => "split, rejected by the author",
            ItemClass::Held => "held for a sample",
            ItemClass::BySample => "retained by sample (not reviewed)",
        }
    }
}

/// A group of item classes: what one number of the overview counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemGroup {
    /// Every item, open or not.
    All,
    /// Every open item.
    Open,
    One(ItemClass),
    /// Both pass, split accepted, or retained by sample.
    Retained,
    /// Both reject or split rejected (Stage 1: waiting for a new version; Stage 2:
    /// dropped).
    Rejected,
    /// Not started, one verdict in, or waiting for an author.
    InReview,
    /// Every open item with both verdicts in.
    Reviewed,
}

impl ItemGroup {
    /// The names the overview's links use.
    pub const NAMES: [&'static str; 16] = [
        "all",
        "open",
        "not_open",
        "unstarted",
        "half_decided",
        "both_pass",
        "both_reject",
        "split",
        "split_accepted",
        "split_rejected",
        "held",
        "by_sample",
        "retained",
        "rejected",
        "in_review",
        "reviewed",
    ];

    pub fn parse(name: &str) -> Option<ItemGroup> {
        use ItemClass::*;
        Some(match name {
            "all" => ItemGroup::All,
            "open" => ItemGroup::Open,
            "not_open" => ItemGroup::One(NotOpen),
            "unstarted" => ItemGroup::One(Unstarted),
            "half_decided" => ItemGroup::One(HalfDecided),
            "both_pass" => ItemGroup::One(BothPass),
            "both_reject" => ItemGroup::One(BothReject),
            "split" => ItemGroup::One(Split),
            "split_accepted" => ItemGroup::One(SplitAccepted),
            "split_rejected" => ItemGroup::One(SplitRejected),
            "held" => ItemGroup::One(Held),
            "by_sample" => ItemGroup::One(BySample),
            "retained" => ItemGroup::Retained,
            "rejected" => ItemGroup::Rejected,
            "in_review" => ItemGroup::InReview,
            "reviewed" => ItemGroup::Reviewed,
            _ => return None,
        })
    }

    pub fn contains(self, c: ItemClass) -> bool {
        use ItemClass::*;
        match self {
            ItemGroup::All => true,
            ItemGroup::Open => !matches!(c, NotOpen | Held),
            ItemGroup::One(x) => c == x,
            ItemGroup::Retained => matches!(c, BothPass | SplitAccepted | BySample),
            ItemGroup::Rejected => matches!(c, BothReject | SplitRejected),
            ItemGroup::InReview => matches!(c, Unstarted | HalfDecided | Split),
            ItemGroup::Reviewed => {
                matches!(
                    c,
                    BothPass | BothReject | Split | SplitAccepted | SplitRejected
                )
            }
        }
    }

    /// In words, for the page's title.
    pub fn words(self) -> &'static str {
        match self {
            ItemGroup::All => "of every kind",
            ItemGroup::Open => "open for review",
            ItemGroup::One(c) => c.words(),
            ItemGroup::Retained => "retained",
            ItemGroup::Rejected => "rejected",
            ItemGroup::InReview => "in review",
            ItemGroup::Reviewed => "reviewed by both",
        }
    }
}

impl StageProgress {
    /// Counts one item (or `n` of one class).
    pub fn count(&mut self, class: ItemClass, n: i64) {
        match class {
            ItemClass::NotOpen => {
                self.not_open += n;
                return;
            }
            ItemClass::Held => {
                self.held += n;
                return;
            }
            _ => {}
        }
        self.items += n;
        match class {
            ItemClass::NotOpen | ItemClass::Held => {}
            ItemClass::BySample => self.by_sample += n,
            ItemClass::Unstarted => self.unstarted += n,
            ItemClass::HalfDecided => self.half_decided += n,
            ItemClass::BothPass => self.both_pass += n,
            ItemClass::BothReject => self.both_reject += n,
            ItemClass::Split => self.split += n,
            ItemClass::SplitAccepted => self.split_accepted += n,
            ItemClass::SplitRejected => self.split_rejected += n,
        }
    }
}

/// A task whose pair in force a change of the pool would change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PairChange {
    pub task: String,
    /// The pair in force now (none: the task has no pair).
    pub from: Option<(String, String)>,
    pub to: Option<(String, String)>,
    /// Open items of the task that no one has started, which would move to the new pair.
    pub unstarted_moving: i64,
    /// Items of the task that someone has started: they keep the pair they have.
    pub started: i64,
}

/// Whether a change of pairs touches anyone's work (a task that had a pair and has
/// items): then it is shown and done only once confirmed. Tasks without items, or
/// without a pair before, change freely (a campaign being set up).
pub fn needs_confirmation(changes: &[PairChange]) -> bool {
    changes
        .iter()
        .any(|c| c.from.is_some() && c.unstarted_moving + c.started > 0)
}

impl PairChange {
    /// "MC_F_EGO_STA: val00 + val01 -> val00 + val04 (3 unstarted items move)".
    pub fn describe(&self) -> String {
        let p = |x: &Option<(String, String)>| match x {
            Some((a, b)) => format!("{a} + {b}"),
            None => "no pair".to_string(),
        };
        format!(
            "{}: {} -> {} ({} unstarted item(s) move)",
            self.task,
            p(&self.from),
            p(&self.to),
            self.unstarted_moving
        )
    }
}

/// One item in a list behind an overview number.
/// Which items of a stage one of the admin's item lists shows, and its page.
#[derive(Debug, Clone)]
pub struct ItemListQuery {
    /// One task's code.
    pub task: Option<String>,
    pub group: ItemGroup,
    /// Only items whose id, or whose clip's id, starts with this.
    pub prefix: Option<String>,
    pub cursor: Option<crate::domain::paging::Cursor>,
    /// A page by its number (the pager's jump), in place of the cursor.
    pub page: Option<usize>,
    pub limit: usize,
}

impl ItemListQuery {
    /// Every item of a group, on one page.
    pub fn whole(group: ItemGroup) -> ItemListQuery {
        ItemListQuery {
            task: None,
            group,
            prefix: None,
            cursor: None,
            page: None,
            limit: usize::MAX,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ClassifiedItem {
    pub item_id: String,
    pub clip_id: String,
    pub task: String,
    pub class: ItemClass,
    pub rater1: Option<String>,
    pub rater2: Option<String>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct TaskProgress {
    pub task: String,
    pub stage1: StageProgress,
    pub stage2: StageProgress,
}

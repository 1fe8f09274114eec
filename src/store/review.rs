//! Verdicts, queues, the intersection rule and the resolution of splits (the types;
//! the SQL is in `store/areas/review.rs` and its `ops`, the rules in `domain::verdict`).

use crate::domain::{Outcome, Reason, Resolution, Stage, Verdict};
use crate::error::{Error, Result};
use serde::Serialize;
use serde_json::Value;

pub use crate::domain::verdict::{Dedupe, Path, VersionRule};

/// A verdict as a validator sends it.
#[derive(Debug, Clone)]
pub struct VerdictRequest {
    pub verdict: Verdict,
    pub reasons: Vec<String>,
    pub note: String,
    pub time_spent_ms: Option<i64>,
    /// What `time_spent_ms` measures (stored with the decision).
    pub time_measure: Option<crate::domain::TimeMeasure>,
    pub version: VersionRule,
}

/// An author's resolution as sent.
#[derive(Debug, Clone)]
pub struct ResolutionRequest {
    pub verdict: Resolution,
    pub note: String,
}

/// An author's withdrawal of a retained question: the reason (a Stage 2 reason of the
/// protocol) and why.
#[derive(Debug, Clone)]
pub struct WithdrawalRequest {
    pub reason: String,
    pub note: String,
}

/// One of the validator's own decisions on an item.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct OwnDecision {
    /// 1 for the first verdict, 2 for the first change, ...
    pub change: i64,
    pub verdict: Verdict,
    pub reasons: Vec<Reason>,
    pub note: String,
    #[serde(serialize_with = "crate::clock::ser_time")]
    #[schema(value_type = String, format = DateTime)]
    pub decided_at: i64,
    pub time_spent_ms: Option<i64>,
}

/// A validator's answer to a question without its key (the blind key check), and the
/// key it is then shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct BlindAnswer {
    /// 0-based index of the option the validator chose.
    pub answer: i64,
    /// 0-based index of the keyed answer.
    pub key: i64,
    /// Whether they are the same.
    pub agrees: bool,
    /// The time spent on the question before the answer, in ms (none when not sent, or
    /// recorded before it was kept); the verdict's own time includes it.
    pub time_spent_ms: Option<i64>,
}

/// What a verdict did: the decision as stored, whether this request added it, and
/// whether the item's verdicts are final.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Recorded {
    pub decision: OwnDecision,
    /// False when the request repeated a stored decision and nothing was added.
    pub recorded: bool,
    /// True once both verdicts are in: this one can no longer change.
    #[serde(rename = "final")]
    pub is_final: bool,
}

/// A clip as reviewers see it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ClipView {
    pub clip_id: String,
    pub task: String,
    pub version: i64,
    pub theme: Option<String>,
    /// The model or source that made the clip: for the author and the admin only (a
    /// validator's views leave it out, [`ClipView::for_validator`]: in a benchmark of
    /// generated clips the model's name can sway a verdict).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generator: Option<String>,
    /// The manifest's scene graph of the clip, as imported.
    #[schema(value_type = Object)]
    pub scene_graph: Value,
    /// The manifest's scenario of the clip, as imported.
    #[schema(value_type = Object)]
    pub scenario: Value,
    pub media_type: String,
    #[serde(skip)]
    pub media_sha256: String,
    #[serde(skip)]
    pub version_id: i64,
    /// The clip file's URL for whoever asked (API replies; under the same rules as
    /// the pages, with the session or the API token).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(format = "uri-reference", example = "/media/5Yq0c2lzcGJ0dG9rZW4")]
    pub media_url: Option<String>,
    /// The frame strip's URL, when this server can draw strips.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(format = "uri-reference", example = "/media/5Yq0c2lzcGJ0dG9rZW4/strip")]
    pub strip_url: Option<String>,
    /// The manifest line's other scalar fields, as text, for the pages to show those
    /// the protocol declares ([`ClipView::declared`]); never sent as such.
    #[serde(skip)]
    pub manifest_fields: std::collections::BTreeMap<String, String>,
    /// The version's frame rate and count, once ffprobe has read them.
    #[serde(skip)]
    pub timing: Option<crate::domain::video::FrameTiming>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct QuestionView {
    pub question_id: String,
    pub qa_type: String,
    pub level: String,
    pub question: String,
    pub options: Vec<String>,
    /// 0-based index of the keyed answer; absent while the blind key check hides it
    /// (a validator's view before their own answer, `ValidatorItem::blind`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<i64>,
    /// The other question of its linked pair (the same question asked in the other
    /// direction), when the manifest links it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub linked: Option<LinkedQuestion>,
}

/// A question's partner in a linked pair, as its reviewers see it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct LinkedQuestion {
    pub question_id: String,
    pub question: String,
    pub options: Vec<String>,
    /// 0-based index of its keyed answer; absent while the blind key check hides the
    /// question's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<i64>,
}

/// The other question of `key`'s linked pair, from its clip version's stored line.
fn linked_question(fields: &Value, key: &str) -> Option<LinkedQuestion> {
    let pairs = crate::domain::records::pair_keys(fields);
    let pair = pairs.get(key)?;
    let (id, _) = pairs
        .iter()
        .find(|(id, p)| *p == pair && id.as_str() != key)?;
    let line = fields
        .get("questions")?
        .as_array()?
        .iter()
        .find(|q| q.get("question_id").and_then(Value::as_str) == Some(id.as_str()))?;
    Some(LinkedQuestion {
        question_id: id.clone(),
        question: line.get("question")?.as_str()?.to_string(),
        options: line
            .get("options")
            .and_then(Value::as_array)
            .map(|o| {
                o.iter()
                    .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        answer: line.get("answer").and_then(Value::as_i64),
    })
}

/// Where a validator stands in one stage.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct QueueStatus {
    pub stage: Stage,
    pub done: i64,
    pub total: i64,
    /// The next item to decide, if any.
    pub next: Option<String>,
}

impl ClipView {
    /// The fields the protocol declares, in its order, as (label, value); a field the
    /// clip's line lacks is left out.
    pub fn declared(&self, taxonomy: &crate::domain::taxonomy::Taxonomy) -> Vec<(String, String)> {
        taxonomy
            .fields
            .iter()
            .filter_map(|f| {
                self.manifest_fields
                    .get(&f.name)
                    .map(|v| (f.label.clone(), v.clone()))
            })
            .collect()
    }

    /// The clip as a validator sees it: without what names its source.
    pub fn for_validator(self) -> ClipView {
        ClipView {
            generator: None,
            ..self
        }
    }
}

/// An item as its validator sees it: never the partner's verdict, never the outcome,
/// never the clip's generator.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ValidatorItem {
    pub stage: Stage,
    pub item_id: String,
    pub clip: ClipView,
    pub question: Option<QuestionView>,
    /// The validator's own decisions on the item, oldest first.
    pub my_decisions: Vec<OwnDecision>,
    /// True once the validator's verdict can no longer change.
    pub locked: bool,
    /// The blind key check, when the campaign has it on (questions only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blind: Option<BlindCheck>,
}

/// The blind key check on a question, as its validator sees it: their answer without
/// the key is asked before the key and the verdict.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct BlindCheck {
    /// True while the key is hidden: the answer is asked first
    /// (`POST .../queue/2/items/{item}/blind-answer`); no verdict is taken till then.
    pub asked: bool,
    /// Their answer and the key, once answered.
    pub answered: Option<BlindAnswer>,
}

/// One side of a split, for the author.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct SplitSide {
    pub validator: String,
    pub verdict: Verdict,
    pub reasons: Vec<Reason>,
    pub note: String,
    #[serde(serialize_with = "crate::clock::ser_time")]
    #[schema(value_type = String, format = DateTime)]
    pub decided_at: i64,
    pub time_spent_ms: Option<i64>,
    /// Their answer before the key was shown (the blind key check, Stage 2): a 0-based
    /// index into the question's options; none without one.
    pub blind_answer: Option<i64>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ResolutionView {
    pub author: String,
    pub verdict: Resolution,
    pub note: String,
    #[serde(serialize_with = "crate::clock::ser_time")]
    #[schema(value_type = String, format = DateTime)]
    pub decided_at: i64,
}

/// A split as the author sees it: both verdicts with their reasons and notes.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct SplitItem {
    pub stage: Stage,
    pub item_id: String,
    pub outcome: Outcome,
    pub clip: ClipView,
    pub question: Option<QuestionView>,
    pub rater1: SplitSide,
    pub rater2: SplitSide,
    pub resolution: Option<ResolutionView>,
}

/// Which rows of a validator's queue a page lists.
#[derive(Debug, Clone)]
pub struct QueueQuery {
    /// One task's code.
    pub task: Option<String>,
    /// Only the decided (true) or undecided (false) rows.
    pub decided: Option<bool>,
    /// Only items whose id starts with this.
    pub prefix: Option<String>,
    /// Beside which row the page lies (none: the first page).
    pub cursor: Option<crate::domain::paging::Cursor>,
    /// A page by its number (the pager's jump), in place of the cursor.
    pub page: Option<usize>,
    pub limit: usize,
}

impl QueueQuery {
    /// From a request's text fields (a page's query string, the API's): `show` is
    /// `undecided`, `decided` or empty; `id` an id prefix; `after`/`before` a row's
    /// cursor. Also answers the `show` value as links keep it.
    pub fn from_fields(
        task: &str,
        show: &str,
        id: &str,
        after: &str,
        before: &str,
        limit: Option<usize>,
    ) -> Result<(&'static str, QueueQuery)> {
        use crate::domain::paging;
        let (show, decided) = match show.trim() {
            "" => ("", None),
            "undecided" => ("undecided", Some(false)),
            "decided" => ("decided", Some(true)),
            other => {
                return Err(Error::field(
                    "show",
                    format!("`{other}` is not one of: undecided, decided (or empty: everything)"),
                ));
            }
        };
        let task = task.trim();
        Ok((
            show,
            QueueQuery {
                task: (!task.is_empty()).then(|| task.to_string()),
                decided,
                prefix: paging::prefix("id", Some(id))?,
                cursor: paging::Cursor::parse(Some(after), Some(before))?,
                page: None,
                limit: paging::limit(limit)?,
            },
        ))
    }
}

impl Default for QueueQuery {
    fn default() -> Self {
        QueueQuery {
            task: None,
            decided: None,
            prefix: None,
            cursor: None,
            page: None,
            limit: crate::domain::paging::PAGE_ROWS,
        }
    }
}

/// A page of a validator's queue and the tasks the whole queue holds (for its filter).
#[derive(Debug, Clone)]
pub struct QueueListing {
    pub page: crate::domain::paging::Page<QueueEntry>,
    pub tasks: Vec<String>,
    /// The rows of the whole queue, whatever the filters.
    pub all: usize,
}

/// One item of a validator's queue, as the queue page lists it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct QueueEntry {
    pub item_id: String,
    pub decided: bool,
    pub task: String,
    /// Stage 2: the question's QA type and level.
    pub qa_type: Option<String>,
    pub level: Option<String>,
    /// The validator's own latest verdict and when, once given.
    pub verdict: Option<Verdict>,
    #[serde(serialize_with = "crate::clock::ser_opt_time")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub decided_at: Option<i64>,
}

crate::store::db::row! {
/// The columns of an item as reviewers see it, read by every view of an item.
#[derive(Debug, Clone)]
pub(crate) struct ItemViewRow {
    pub id: i64,
    pub stage: i64,
    pub outcome: String,
    pub item_key: String,
    pub version_id: i64,
    pub version: i64,
    pub fields: String,
    pub media_type: String,
    pub media_sha256: String,
    pub fps: Option<f64>,
    pub frame_count: Option<i64>,
    pub constant_rate: Option<i64>,
    pub task: String,
    pub clip_key: String,
    pub qa_type: Option<String>,
    pub level: Option<String>,
    pub body: Option<String>,
    pub options: Option<String>,
    pub answer: Option<i64>,
}
}

/// An item as reviewers see it: its stage, outcome, clip and question.
pub(crate) struct ItemHeader {
    pub id: i64,
    pub stage: Stage,
    pub key: String,
    pub outcome: Outcome,
    pub clip: ClipView,
    pub question: Option<QuestionView>,
}

impl TryFrom<ItemViewRow> for ItemHeader {
    type Error = Error;
    fn try_from(r: ItemViewRow) -> Result<ItemHeader> {
        let fields: Value = serde_json::from_str(&r.fields)
            .map_err(|e| Error::fault(format!("stored fields of `{}`", r.clip_key), e))?;
        let text = |k: &str| fields.get(k).and_then(Value::as_str).map(str::to_string);
        let stage = Stage::from_number(r.stage)
            .ok_or_else(|| Error::Internal(format!("stored stage {}", r.stage)))?;
        let clip = ClipView {
            clip_id: r.clip_key,
            task: r.task,
            version: r.version,
            theme: text("theme"),
            generator: text("generator"),
            scene_graph: fields.get("scene_graph").cloned().unwrap_or(Value::Null),
            scenario: fields.get("scenario").cloned().unwrap_or(Value::Null),
            media_type: r.media_type,
            media_sha256: r.media_sha256,
            version_id: r.version_id,
            media_url: None,
            strip_url: None,
            manifest_fields: match &fields {
                Value::Object(o) => o
                    .iter()
                    .filter(|(k, _)| !crate::domain::taxonomy::MANIFEST_KEYS.contains(&k.as_str()))
                    .filter_map(|(k, v)| {
                        let text = match v {
                            Value::String(s) => s.clone(),
                            Value::Number(n) => n.to_string(),
                            Value::Bool(b) => b.to_string(),
                            _ => return None,
                        };
                        Some((k.clone(), text))
                    })
                    .collect(),
                _ => Default::default(),
            },
            timing: match (r.fps, r.frame_count, r.constant_rate) {
                (Some(fps), Some(frames), Some(constant)) => {
                    Some(crate::domain::video::FrameTiming {
                        fps,
                        constant: constant == 1,
                        frames: u64::try_from(frames).unwrap_or(0),
                    })
                }
                _ => None,
            },
        };
        let question = match stage {
            Stage::Clip => None,
            Stage::Question => Some(QuestionView {
                question_id: r.item_key.clone(),
                qa_type: r.qa_type.unwrap_or_default(),
                level: r.level.unwrap_or_default(),
                question: r.body.unwrap_or_default(),
                options: serde_json::from_str(r.options.as_deref().unwrap_or("[]"))
                    .map_err(|e| Error::fault("stored options", e))?,
                answer: Some(r.answer.unwrap_or(0)),
                linked: linked_question(&fields, &r.item_key),
            }),
        };
        Ok(ItemHeader {
            id: r.id,
            stage,
            key: r.item_key,
            outcome: Outcome::parse(&r.outcome)
                .ok_or_else(|| Error::Internal(format!("stored outcome `{}`", r.outcome)))?,
            clip,
            question,
        })
    }
}

crate::store::db::row! {
    /// A stored decision as its validator sees it.
    #[derive(Debug, Clone)]
    pub(crate) struct DecisionRowDb {
        pub id: i64,
        pub validator_id: i64,
        pub seq: i64,
        pub verdict: String,
        pub reasons: String,
        pub note: String,
        pub decided_at: i64,
        pub time_spent_ms: Option<i64>,
    }
}

impl DecisionRowDb {
    pub(crate) fn fact(self) -> Result<crate::domain::verdict::DecisionFact> {
        Ok(crate::domain::verdict::DecisionFact {
            id: self.id,
            validator: self.validator_id,
            seq: self.seq,
            verdict: Verdict::parse(&self.verdict).map_err(Error::Internal)?,
            reasons: self.reasons,
            note: self.note,
            decided_at: self.decided_at,
            time_spent_ms: self.time_spent_ms,
        })
    }
}

impl TryFrom<crate::domain::verdict::DecisionFact> for OwnDecision {
    type Error = Error;
    fn try_from(d: crate::domain::verdict::DecisionFact) -> Result<OwnDecision> {
        Ok(OwnDecision {
            change: d.seq,
            verdict: d.verdict,
            reasons: Reason::split_stored(&d.reasons)
                .map_err(|m| Error::fault(format!("decision #{}", d.id), m))?,
            note: d.note,
            decided_at: d.decided_at,
            time_spent_ms: d.time_spent_ms,
        })
    }
}

/// A validator's queue in one statement (`:campaign`, `:validator`, `:stage`).
/// Their gate, done and total from `queue_counts` (kept by triggers; on PostgreSQL
/// in eight parts that are summed, at most eight rows of the key), and the next
/// undecided item: one index seek in each of `items_queue1` and `items_queue2`, so
/// its cost does not grow with the campaign.
pub const QUEUE: &str = "SELECT
    (SELECT m.cleared FROM pool_members m WHERE m.campaign_id = :campaign AND m.user_id = :validator) AS gate,
    COALESCE((SELECT CAST(SUM(total) AS BIGINT) FROM queue_counts WHERE campaign_id = :campaign AND stage = :stage AND user_id = :validator), 0) AS total,
    COALESCE((SELECT CAST(SUM(done) AS BIGINT) FROM queue_counts WHERE campaign_id = :campaign AND stage = :stage AND user_id = :validator), 0) AS done,
    (SELECT n.item_key FROM (
         SELECT a.item_key, a.sort_key FROM (
             SELECT item_key, sort_key FROM items
             WHERE queue1 = :validator AND campaign_id = :campaign AND stage = :stage AND decided1 = 0
             ORDER BY sort_key LIMIT 1) a
         UNION ALL
         SELECT b.item_key, b.sort_key FROM (
             SELECT item_key, sort_key FROM items
             WHERE queue2 = :validator AND campaign_id = :campaign AND stage = :stage AND decided2 = 0
             ORDER BY sort_key LIMIT 1) b
     ) n ORDER BY n.sort_key LIMIT 1) AS next";

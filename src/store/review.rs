//! Verdicts, queues, the intersection rule and the resolution of splits.
//!
//! [`record_verdict_in`] is the one place where a verdict is stored and where the
//! intersection rule is applied: the API, the browser and `decisions import` all go
//! through it, inside one transaction that first locks the item's row.

use super::accounts::{User, user_by_id_in};
use super::catalog::Campaign;
use super::{Conn, Store, col, conn};
use crate::clock::now_micros;
use crate::domain::rules::resolve;
use crate::domain::verdict::{
    DecisionFact, ItemFacts, Plan, Refusal, VerdictInput, decide_verdict,
};
use crate::domain::{Level, Origin, Outcome, Reason, Resolution, Stage, Verdict};
use crate::error::{Error, Result};
use serde::Serialize;
use serde_json::Value;

/// A verdict as a validator sends it.
#[derive(Debug, Clone)]
pub struct VerdictRequest {
    pub verdict: Verdict,
    pub reasons: Vec<String>,
    pub note: String,
    pub time_spent_ms: Option<i64>,
    pub version: VersionRule,
}

pub use crate::domain::verdict::{Dedupe, Path, VersionRule};

/// An author's resolution as sent.
#[derive(Debug, Clone)]
pub struct ResolutionRequest {
    pub verdict: Resolution,
    pub note: String,
}

/// One of the validator's own decisions on an item.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct OwnDecision {
    /// 1 for the first verdict, 2 for the first change, ...
    pub change: i64,
    pub verdict: Verdict,
    pub reasons: Vec<Reason>,
    pub note: String,
    #[serde(serialize_with = "crate::clock::ser_time")]
    pub decided_at: i64,
    pub time_spent_ms: Option<i64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Recorded {
    pub decision: OwnDecision,
    /// False when the request repeated a stored decision and nothing was added.
    pub recorded: bool,
}

fn own_decision_of(row: &sqlx::any::AnyRow) -> Result<OwnDecision> {
    let verdict: String = col(row, "verdict")?;
    let reasons: String = col(row, "reasons")?;
    Ok(OwnDecision {
        change: col(row, "seq")?,
        verdict: Verdict::parse(&verdict).map_err(Error::Internal)?,
        reasons: Reason::split_stored(&reasons),
        note: col(row, "note")?,
        decided_at: col(row, "decided_at")?,
        time_spent_ms: col(row, "time_spent_ms")?,
    })
}

async fn own_decisions_in(
    c: &mut Conn,
    item_id: i64,
    validator_id: i64,
) -> Result<Vec<OwnDecision>> {
    sqlx::query(
        "SELECT seq, verdict, reasons, note, decided_at, time_spent_ms FROM decisions
         WHERE item_id = $1 AND validator_id = $2 ORDER BY seq",
    )
    .bind(item_id)
    .bind(validator_id)
    .fetch_all(&mut *c)
    .await?
    .iter()
    .map(own_decision_of)
    .collect()
}

/// The item of `stage` named `key` (a clip id in Stage 1, a question id in Stage 2),
/// in the clip's newest version.
pub(crate) async fn resolve_item_in(
    c: &mut Conn,
    campaign_id: i64,
    stage: Stage,
    key: &str,
) -> Result<Option<i64>> {
    let sql = match stage {
        Stage::Clip => {
            "SELECT i.id FROM clips c JOIN items i ON i.clip_version_id = c.current_version_id AND i.stage = 1
             WHERE c.campaign_id = $1 AND c.clip_key = $2"
        }
        Stage::Question => {
            "SELECT i.id FROM questions q
             JOIN items i ON i.question_id = q.id AND i.stage = 2
             WHERE q.question_key = $2
               AND EXISTS (SELECT 1 FROM clips c
                           WHERE c.current_version_id = q.clip_version_id AND c.campaign_id = $1)"
        }
    };
    Ok(sqlx::query_scalar(sql)
        .bind(campaign_id)
        .bind(key)
        .fetch_optional(&mut *c)
        .await?)
}

async fn user_name_in(c: &mut Conn, id: i64) -> Result<String> {
    Ok(user_by_id_in(c, id)
        .await?
        .map_or_else(|| format!("user #{id}"), |u| u.name))
}

/// The columns [`load_item_in`] reads.
macro_rules! facts_columns {
    () => {
        "SELECT i.id, i.stage, i.outcome, i.rater1_id, i.rater2_id, i.clip_version, i.calibration,
                CASE WHEN c.current_version_id = i.clip_version_id THEN 1 ELSE 0 END AS is_current,
                c.clip_key, t.code AS task, t.rater1_id AS task_rater1, t.rater2_id AS task_rater2,
                t.pair_problem, q.level, q.question_key, p.outcome AS parent_outcome,
                p.rater1_id AS parent_rater1, p.rater2_id AS parent_rater2
         FROM items i
         JOIN tasks t ON t.id = i.task_id
         JOIN clip_versions v ON v.id = i.clip_version_id
         JOIN clips c ON c.id = v.clip_id
         LEFT JOIN questions q ON q.id = i.question_id
         LEFT JOIN items p ON p.id = i.parent_item_id "
    };
}

fn pair(a: Option<i64>, b: Option<i64>) -> Option<(i64, i64)> {
    a.zip(b)
}

/// Everything the verdict rules need about the item of `stage` named `key` (in the
/// clip's newest version, or in `version`), in one statement.
pub(crate) async fn load_item_in(
    c: &mut Conn,
    campaign_id: i64,
    stage: Stage,
    key: &str,
    version: Option<i64>,
) -> Result<Option<ItemFacts>> {
    let sql = match (stage, version.is_some()) {
        (Stage::Clip, false) => concat!(
            facts_columns!(),
            "WHERE i.stage = 1 AND c.campaign_id = $1 AND c.clip_key = $2 AND i.clip_version_id = c.current_version_id AND $3 = 0"
        ),
        (Stage::Clip, true) => concat!(
            facts_columns!(),
            "WHERE i.stage = 1 AND c.campaign_id = $1 AND c.clip_key = $2 AND v.version = $3"
        ),
        (Stage::Question, false) => concat!(
            facts_columns!(),
            "WHERE i.stage = 2 AND q.question_key = $2 AND c.campaign_id = $1 AND i.clip_version_id = c.current_version_id AND $3 = 0"
        ),
        (Stage::Question, true) => concat!(
            facts_columns!(),
            "WHERE i.stage = 2 AND q.question_key = $2 AND c.campaign_id = $1 AND v.version = $3"
        ),
    };
    let Some(row) = sqlx::query(sql)
        .bind(campaign_id)
        .bind(key)
        .bind(version.unwrap_or(0))
        .fetch_optional(&mut *c)
        .await?
    else {
        return Ok(None);
    };
    let outcome: String = col(&row, "outcome")?;
    let parent: Option<String> = col(&row, "parent_outcome")?;
    Ok(Some(ItemFacts {
        id: col(&row, "id")?,
        stage,
        key: key.to_string(),
        clip_key: col(&row, "clip_key")?,
        task: col(&row, "task")?,
        version: col(&row, "clip_version")?,
        is_current: col::<i64>(&row, "is_current")? == 1,
        calibration: col::<i64>(&row, "calibration")? != 0,
        level: col::<Option<String>>(&row, "level")?
            .as_deref()
            .and_then(|l| Level::parse(l).ok()),
        outcome: Outcome::parse(&outcome)
            .ok_or_else(|| Error::Internal(format!("stored outcome `{outcome}`")))?,
        raters: pair(col(&row, "rater1_id")?, col(&row, "rater2_id")?),
        inherited: pair(col(&row, "parent_rater1")?, col(&row, "parent_rater2")?),
        in_force: pair(col(&row, "task_rater1")?, col(&row, "task_rater2")?),
        pair_problem: col(&row, "pair_problem")?,
        parent_retained: match stage {
            Stage::Clip => None,
            Stage::Question => Some(
                parent
                    .as_deref()
                    .and_then(Outcome::parse)
                    .is_some_and(Outcome::is_retained),
            ),
        },
    }))
}

/// Every decision on an item, in one statement.
async fn decisions_in(c: &mut Conn, item_id: i64) -> Result<Vec<DecisionFact>> {
    sqlx::query(
        "SELECT id, validator_id, seq, verdict, reasons, note, decided_at, time_spent_ms
         FROM decisions WHERE item_id = $1 ORDER BY seq",
    )
    .bind(item_id)
    .fetch_all(&mut *c)
    .await?
    .iter()
    .map(|r| {
        Ok(DecisionFact {
            id: col(r, "id")?,
            validator: col(r, "validator_id")?,
            seq: col(r, "seq")?,
            verdict: Verdict::parse(&col::<String>(r, "verdict")?).map_err(Error::Internal)?,
            reasons: col(r, "reasons")?,
            note: col(r, "note")?,
            decided_at: col(r, "decided_at")?,
            time_spent_ms: col(r, "time_spent_ms")?,
        })
    })
    .collect()
}

/// Where a verdict is sent: the item named by stage and key (and version), as seen
/// from a validator's queue or from a file of records.
pub(crate) struct Target<'a> {
    pub campaign_id: i64,
    pub stage: Stage,
    pub key: &'a str,
    pub version: Option<i64>,
    pub path: Path,
}

/// Stores one verdict and, when it completes the pair, applies the intersection rule:
/// load the item (one statement) and its decisions (one), decide with
/// [`decide_verdict`], then write the decision (one) and the item's new state (one,
/// when the pair is fixed or completes). Must run inside a write transaction, which
/// holds the database's write lock.
pub(crate) async fn record_verdict_in(
    c: &mut Conn,
    target: &Target<'_>,
    validator: &User,
    req: &VerdictRequest,
    decided_at: i64,
    origin: Origin,
    dedupe: Dedupe,
) -> Result<Recorded> {
    let stage = target.stage;
    let key = target.key;
    let not_found = || match target.path {
        Path::Queue => Error::NotFound(format!(
            "no {} `{key}` in your Stage {stage} queue",
            stage.item_noun()
        )),
        Path::Records => Error::NotFound(format!(
            "no {} `{key}`{}",
            stage.item_noun(),
            target
                .version
                .map(|v| format!(" in version {v} of its clip"))
                .unwrap_or_default()
        )),
    };
    let item = load_item_in(c, target.campaign_id, stage, key, target.version)
        .await?
        .ok_or_else(not_found)?;
    let decisions = decisions_in(c, item.id).await?;
    let input = VerdictInput {
        validator: validator.id,
        verdict: req.verdict,
        reasons: &req.reasons,
        note: &req.note,
        time_spent_ms: req.time_spent_ms,
        version: req.version,
        decided_at,
        dedupe,
        path: target.path,
    };
    let plan = match decide_verdict(&item, &decisions, &input) {
        Ok(p) => p,
        Err(Refusal::NotInQueue) => return Err(not_found()),
        Err(Refusal::NotInPair((a, b))) => {
            let (a, b) = (user_name_in(c, a).await?, user_name_in(c, b).await?);
            return Err(Error::Forbidden(format!(
                "{} is not in the pair of {} `{key}` (it is reviewed by {a} and {b})",
                validator.name,
                stage.item_noun()
            )));
        }
        Err(Refusal::NoPair(problem)) => {
            return Err(Error::Forbidden(format!(
                "task {} has no validator pair yet ({problem})",
                item.task
            )));
        }
        Err(Refusal::Conflict(m)) => return Err(Error::Conflict(m)),
        Err(Refusal::Field(e)) => return Err(e.into()),
    };
    let record = match plan {
        Plan::Repeat(d) => {
            return Ok(Recorded {
                decision: OwnDecision {
                    change: d.seq,
                    verdict: d.verdict,
                    reasons: Reason::split_stored(&d.reasons),
                    note: d.note,
                    decided_at: d.decided_at,
                    time_spent_ms: d.time_spent_ms,
                },
                recorded: false,
            });
        }
        Plan::Record(r) => r,
    };
    let decision_id: i64 = sqlx::query_scalar(
        "INSERT INTO decisions (item_id, validator_id, seq, verdict, reasons, note, time_spent_ms, decided_at, recorded_at, origin, campaign_id, stage)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id",
    )
    .bind(item.id)
    .bind(validator.id)
    .bind(record.seq)
    .bind(record.checked.verdict.as_str())
    .bind(&record.reasons)
    .bind(&record.checked.note)
    .bind(record.time_spent_ms)
    .bind(decided_at)
    .bind(now_micros())
    .bind(origin.as_str())
    .bind(target.campaign_id)
    .bind(stage.number())
    .fetch_one(&mut *c)
    .await?;
    if let Some(done) = &record.completes {
        let (f1, f2) = if done.mine_is_first {
            (decision_id, done.partner_decision)
        } else {
            (done.partner_decision, decision_id)
        };
        let updated = sqlx::query(
            "UPDATE items SET rater1_id = $1, rater2_id = $2, outcome = $3, verdict1 = $4, verdict2 = $5,
                              final1_id = $6, final2_id = $7, reasons1 = $8, reasons2 = $9, completed_at = $10
             WHERE id = $11 AND outcome = 'pending'",
        )
        .bind(record.pair.0)
        .bind(record.pair.1)
        .bind(done.outcome.as_str())
        .bind(done.verdict1.as_str())
        .bind(done.verdict2.as_str())
        .bind(f1)
        .bind(f2)
        .bind(&done.reasons1)
        .bind(&done.reasons2)
        .bind(now_micros())
        .bind(item.id)
        .execute(&mut *c)
        .await?;
        if updated.rows_affected() != 1 {
            return Err(Error::Internal(format!(
                "item #{} changed under its lock",
                item.id
            )));
        }
    } else if record.fix_pair {
        sqlx::query("UPDATE items SET rater1_id = $1, rater2_id = $2 WHERE id = $3")
            .bind(record.pair.0)
            .bind(record.pair.1)
            .bind(item.id)
            .execute(&mut *c)
            .await?;
    }
    Ok(Recorded {
        decision: OwnDecision {
            change: record.seq,
            verdict: record.checked.verdict,
            reasons: record.checked.reasons,
            note: record.checked.note,
            decided_at,
            time_spent_ms: record.time_spent_ms,
        },
        recorded: true,
    })
}

/// Stores an author's resolution of a split. Must run inside a write transaction.
/// Returns false when the same resolution was already stored.
pub(crate) async fn resolve_in(
    c: &mut Conn,
    item_id: i64,
    author: &User,
    verdict: Resolution,
    note: &str,
    decided_at: i64,
    origin: Origin,
) -> Result<bool> {
    sqlx::query("UPDATE items SET revision = revision + 1 WHERE id = $1")
        .bind(item_id)
        .execute(&mut *c)
        .await?;
    let note = note.trim();
    crate::domain::text::check(note).map_err(|m| Error::field("note", m))?;
    if note.is_empty() {
        return Err(Error::field("note", "a resolution needs a note saying why"));
    }
    if note.chars().count() > crate::domain::rules::MAX_NOTE_CHARS {
        return Err(Error::field("note", "the note is too long"));
    }
    let outcome: String = sqlx::query_scalar("SELECT outcome FROM items WHERE id = $1")
        .bind(item_id)
        .fetch_optional(&mut *c)
        .await?
        .ok_or_else(|| Error::NotFound(format!("no item #{item_id}")))?;
    let outcome = Outcome::parse(&outcome)
        .ok_or_else(|| Error::Internal(format!("stored outcome `{outcome}`")))?;
    let existing =
        sqlx::query("SELECT author_id, verdict, note FROM resolutions WHERE item_id = $1")
            .bind(item_id)
            .fetch_optional(&mut *c)
            .await?;
    if let Some(e) = existing {
        let same = col::<i64>(&e, "author_id")? == author.id
            && col::<String>(&e, "verdict")? == verdict.as_str()
            && col::<String>(&e, "note")? == note;
        if same {
            return Ok(false);
        }
    }
    let new_outcome = resolve(outcome, verdict).map_err(Error::Conflict)?;
    sqlx::query(
        "INSERT INTO resolutions (item_id, author_id, verdict, note, decided_at, recorded_at, origin)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(item_id)
    .bind(author.id)
    .bind(verdict.as_str())
    .bind(note)
    .bind(decided_at)
    .bind(now_micros())
    .bind(origin.as_str())
    .execute(&mut *c)
    .await?;
    sqlx::query("UPDATE items SET outcome = $1 WHERE id = $2 AND outcome = 'split'")
        .bind(new_outcome.as_str())
        .bind(item_id)
        .execute(&mut *c)
        .await?;
    Ok(true)
}

// ---------------------------------------------------------------------------------
// Views

/// A clip as reviewers see it.
#[derive(Debug, Clone, Serialize)]
pub struct ClipView {
    pub clip_id: String,
    pub task: String,
    pub version: i64,
    pub theme: Option<String>,
    pub generator: Option<String>,
    pub scene_graph: Value,
    pub scenario: Value,
    pub media_type: String,
    #[serde(skip)]
    pub media_sha256: String,
    #[serde(skip)]
    pub version_id: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct QuestionView {
    pub question_id: String,
    pub qa_type: String,
    pub level: String,
    pub question: String,
    pub options: Vec<String>,
    /// 0-based index of the keyed answer.
    pub answer: i64,
}

/// The columns [`item_header`] reads; every item query selects them.
#[macro_export]
#[doc(hidden)]
macro_rules! item_columns {
    () => {
        "i.id, i.stage, i.outcome, v.id AS version_id, t.code AS task, t.position AS task_position, c.clip_key, v.version, v.fields, v.media_type, v.media_sha256,
         q.question_key, q.qa_type, q.level, q.body, q.options, q.answer, q.position AS question_position"
    };
}

/// The joins every item query uses.
#[macro_export]
#[doc(hidden)]
macro_rules! item_joins {
    () => {
        " FROM items i
         JOIN tasks t ON t.id = i.task_id
         JOIN clip_versions v ON v.id = i.clip_version_id
         JOIN clips c ON c.id = v.clip_id
         LEFT JOIN questions q ON q.id = i.question_id
         LEFT JOIN items p ON p.id = i.parent_item_id "
    };
}

/// Whether the validator `$n` is in the pair of item `i` (task `t`, parent item `p`):
/// the pair fixed at its first verdict; before any verdict, for a question the pair
/// that reviewed its clip, for a clip the task's pair in force. The one definition of
/// "this item is theirs", used by the queues and by clip serving.
#[macro_export]
#[doc(hidden)]
macro_rules! pair_member {
    ($n:literal) => {
        concat!(
            "(i.rater1_id = ",
            $n,
            " OR i.rater2_id = ",
            $n,
            " OR (i.rater1_id IS NULL AND ((i.stage = 1 AND (t.rater1_id = ",
            $n,
            " OR t.rater2_id = ",
            $n,
            "))",
            " OR (i.stage = 2 AND (p.rater1_id = ",
            $n,
            " OR p.rater2_id = ",
            $n,
            ")))))"
        )
    };
}

/// The items in a validator's queue: `$1` campaign, `$2` stage, `$3` validator. An
/// item is theirs by [`pair_member!`]; only the newest version of a clip counts, and a
/// question only once its clip is retained.
macro_rules! validator_scope {
    () => {
        concat!(
            " WHERE i.campaign_id = $1 AND i.stage = $2 AND i.calibration = 0
               AND c.current_version_id = v.id AND ",
            pair_member!("$3"),
            " AND (i.stage = 1 OR p.outcome IN ('both_pass', 'split_accepted')) "
        )
    };
}

pub(crate) struct ItemHeader {
    pub(crate) id: i64,
    pub(crate) stage: Stage,
    pub(crate) outcome: Outcome,
    pub(crate) clip: ClipView,
    pub(crate) question: Option<QuestionView>,
}

impl ItemHeader {
    fn key(&self) -> &str {
        match &self.question {
            Some(q) => &q.question_id,
            None => &self.clip.clip_id,
        }
    }
}

pub(crate) fn item_header(row: &sqlx::any::AnyRow) -> Result<ItemHeader> {
    let fields: String = col(row, "fields")?;
    let fields: Value = serde_json::from_str(&fields).unwrap_or(Value::Null);
    let text = |k: &str| fields.get(k).and_then(Value::as_str).map(str::to_string);
    let clip = ClipView {
        clip_id: col(row, "clip_key")?,
        task: col(row, "task")?,
        version: col(row, "version")?,
        theme: text("theme"),
        generator: text("generator"),
        scene_graph: fields.get("scene_graph").cloned().unwrap_or(Value::Null),
        scenario: fields.get("scenario").cloned().unwrap_or(Value::Null),
        media_type: col(row, "media_type")?,
        media_sha256: col(row, "media_sha256")?,
        version_id: col(row, "version_id")?,
    };
    let question = match col::<Option<String>>(row, "question_key")? {
        None => None,
        Some(key) => {
            let options: String = col(row, "options")?;
            Some(QuestionView {
                question_id: key,
                qa_type: col(row, "qa_type")?,
                level: col(row, "level")?,
                question: col(row, "body")?,
                options: serde_json::from_str(&options)
                    .map_err(|e| Error::Internal(format!("stored options: {e}")))?,
                answer: col(row, "answer")?,
            })
        }
    };
    let outcome: String = col(row, "outcome")?;
    Ok(ItemHeader {
        id: col(row, "id")?,
        stage: Stage::from_number(col(row, "stage")?)
            .ok_or_else(|| Error::Internal("stored stage".into()))?,
        outcome: Outcome::parse(&outcome)
            .ok_or_else(|| Error::Internal(format!("stored outcome `{outcome}`")))?,
        clip,
        question,
    })
}

/// Where a validator stands in one stage.
#[derive(Debug, Clone, Serialize)]
pub struct QueueStatus {
    pub stage: Stage,
    pub done: i64,
    pub total: i64,
    /// The next item to decide, if any.
    pub next: Option<String>,
}

/// An item as its validator sees it: never the partner's verdict, never the outcome.
#[derive(Debug, Clone, Serialize)]
pub struct ValidatorItem {
    pub stage: Stage,
    pub item_id: String,
    pub clip: ClipView,
    pub question: Option<QuestionView>,
    /// The validator's own decisions on the item, oldest first.
    pub my_decisions: Vec<OwnDecision>,
    /// True once the validator's verdict can no longer change.
    pub locked: bool,
}

/// One side of a split, for the author.
#[derive(Debug, Clone, Serialize)]
pub struct SplitSide {
    pub validator: String,
    pub verdict: Verdict,
    pub reasons: Vec<Reason>,
    pub note: String,
    #[serde(serialize_with = "crate::clock::ser_time")]
    pub decided_at: i64,
    pub time_spent_ms: Option<i64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ResolutionView {
    pub author: String,
    pub verdict: Resolution,
    pub note: String,
    #[serde(serialize_with = "crate::clock::ser_time")]
    pub decided_at: i64,
}

/// A split as the author sees it: both verdicts with their reasons and notes.
#[derive(Debug, Clone, Serialize)]
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

async fn split_sides_in(
    c: &mut Conn,
    item_id: i64,
) -> Result<(SplitSide, SplitSide, Option<ResolutionView>)> {
    let row = sqlx::query(
        "SELECT d1.verdict AS r1_verdict, d1.reasons AS r1_reasons, d1.note AS r1_note,
                d1.decided_at AS r1_decided_at, d1.time_spent_ms AS r1_time_spent_ms, u1.name AS r1_name,
                d2.verdict AS r2_verdict, d2.reasons AS r2_reasons, d2.note AS r2_note,
                d2.decided_at AS r2_decided_at, d2.time_spent_ms AS r2_time_spent_ms, u2.name AS r2_name
         FROM items i
         JOIN decisions d1 ON d1.id = i.final1_id JOIN users u1 ON u1.id = d1.validator_id
         JOIN decisions d2 ON d2.id = i.final2_id JOIN users u2 ON u2.id = d2.validator_id
         WHERE i.id = $1",
    )
    .bind(item_id)
    .fetch_optional(&mut *c)
    .await?
    .ok_or_else(|| Error::Internal(format!("item #{item_id} is a split without both verdicts")))?;
    let side = |p: &str| -> Result<SplitSide> {
        let verdict: String = col(&row, &format!("{p}_verdict"))?;
        let reasons: String = col(&row, &format!("{p}_reasons"))?;
        Ok(SplitSide {
            validator: col(&row, &format!("{p}_name"))?,
            verdict: Verdict::parse(&verdict).map_err(Error::Internal)?,
            reasons: Reason::split_stored(&reasons),
            note: col(&row, &format!("{p}_note"))?,
            decided_at: col(&row, &format!("{p}_decided_at"))?,
            time_spent_ms: col(&row, &format!("{p}_time_spent_ms"))?,
        })
    };
    let (r1, r2) = (side("r1")?, side("r2")?);
    let resolution = sqlx::query(
        "SELECT r.verdict, r.note, r.decided_at, u.name FROM resolutions r JOIN users u ON u.id = r.author_id WHERE r.item_id = $1",
    )
    .bind(item_id)
    .fetch_optional(&mut *c)
    .await?
    .map(|r| -> Result<ResolutionView> {
        Ok(ResolutionView {
            author: col(&r, "name")?,
            verdict: Resolution::parse(&col::<String>(&r, "verdict")?).map_err(Error::Internal)?,
            note: col(&r, "note")?,
            decided_at: col(&r, "decided_at")?,
        })
    })
    .transpose()?;
    Ok((r1, r2, resolution))
}

impl Store {
    /// Whether a validator is in a campaign's pool.
    pub async fn in_pool(&self, campaign: &Campaign, validator: &User) -> Result<bool> {
        let member: Option<i64> = sqlx::query_scalar(
            "SELECT user_id FROM pool_members WHERE campaign_id = $1 AND user_id = $2",
        )
        .bind(campaign.id)
        .bind(validator.id)
        .fetch_optional(self.pool())
        .await?;
        Ok(member.is_some())
    }

    /// A validator may use the main queue: in the pool, and through calibration.
    async fn require_pool_member(&self, campaign: &Campaign, validator: &User) -> Result<()> {
        if !self.in_pool(campaign, validator).await? {
            return Err(Error::Forbidden(format!(
                "{} is not in the validator pool of campaign `{}`",
                validator.name, campaign.name
            )));
        }
        self.require_calibrated(campaign, validator).await?;
        Ok(())
    }

    /// The validator's progress in a stage and the next item to decide.
    pub async fn queue(
        &self,
        campaign: &Campaign,
        validator: &User,
        stage: Stage,
    ) -> Result<QueueStatus> {
        self.require_pool_member(campaign, validator).await?;
        let mut c = conn(self).await?;
        let counts = sqlx::query(concat!(
            "SELECT COUNT(*) AS total, COUNT(mine.item_id) AS done",
            item_joins!(),
            " LEFT JOIN (SELECT DISTINCT item_id FROM decisions WHERE validator_id = $3) mine ON mine.item_id = i.id",
            validator_scope!()
        ))
        .bind(campaign.id)
        .bind(stage.number())
        .bind(validator.id)
        .fetch_one(&mut *c)
        .await?;
        let next = sqlx::query(concat!(
            "SELECT ",
            item_columns!(),
            item_joins!(),
            validator_scope!(),
            " AND i.outcome = 'pending'
              AND NOT EXISTS (SELECT 1 FROM decisions d WHERE d.item_id = i.id AND d.validator_id = $3)
             ORDER BY t.position, c.clip_key, q.position LIMIT 1"
        ))
        .bind(campaign.id)
        .bind(stage.number())
        .bind(validator.id)
        .fetch_optional(&mut *c)
        .await?;
        Ok(QueueStatus {
            stage,
            done: col(&counts, "done")?,
            total: col(&counts, "total")?,
            next: next
                .as_ref()
                .map(item_header)
                .transpose()?
                .map(|h| h.key().to_string()),
        })
    }

    /// The items of the validator's queue in a stage, in review order, with whether
    /// they decided each.
    pub async fn queue_items(
        &self,
        campaign: &Campaign,
        validator: &User,
        stage: Stage,
    ) -> Result<Vec<(String, bool)>> {
        self.require_pool_member(campaign, validator).await?;
        let rows = sqlx::query(concat!(
            "SELECT ",
            item_columns!(),
            ", CASE WHEN EXISTS (SELECT 1 FROM decisions d WHERE d.item_id = i.id AND d.validator_id = $3) THEN 1 ELSE 0 END AS decided",
            item_joins!(),
            validator_scope!(),
            " ORDER BY t.position, c.clip_key, q.position"
        ))
        .bind(campaign.id)
        .bind(stage.number())
        .bind(validator.id)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok((
                    item_header(r)?.key().to_string(),
                    col::<i64>(r, "decided")? != 0,
                ))
            })
            .collect()
    }

    /// One item of the validator's queue. Anything outside their queue is "not found".
    pub async fn validator_item(
        &self,
        campaign: &Campaign,
        validator: &User,
        stage: Stage,
        key: &str,
    ) -> Result<ValidatorItem> {
        self.require_pool_member(campaign, validator).await?;
        let mut c = conn(self).await?;
        let id = self
            .scoped_item_id(&mut c, campaign, validator, stage, key)
            .await?;
        let row = sqlx::query(concat!(
            "SELECT ",
            item_columns!(),
            item_joins!(),
            " WHERE i.id = $1"
        ))
        .bind(id)
        .fetch_one(&mut *c)
        .await?;
        let header = item_header(&row)?;
        let my_decisions = own_decisions_in(&mut c, id, validator.id).await?;
        Ok(ValidatorItem {
            stage,
            item_id: header.key().to_string(),
            locked: header.outcome != Outcome::Pending,
            clip: header.clip,
            question: header.question,
            my_decisions,
        })
    }

    async fn scoped_item_id(
        &self,
        c: &mut Conn,
        campaign: &Campaign,
        validator: &User,
        stage: Stage,
        key: &str,
    ) -> Result<i64> {
        let not_found = || {
            Error::NotFound(format!(
                "no {} `{key}` in your Stage {stage} queue",
                stage.item_noun()
            ))
        };
        let id = resolve_item_in(c, campaign.id, stage, key)
            .await?
            .ok_or_else(not_found)?;
        let visible: Option<i64> = sqlx::query_scalar(concat!(
            "SELECT i.id",
            item_joins!(),
            validator_scope!(),
            " AND i.id = $4"
        ))
        .bind(campaign.id)
        .bind(stage.number())
        .bind(validator.id)
        .bind(id)
        .fetch_optional(&mut *c)
        .await?;
        visible.ok_or_else(not_found)
    }

    /// Records a validator's verdict on an item of their queue.
    pub async fn record_verdict(
        &self,
        campaign: &Campaign,
        validator: &User,
        stage: Stage,
        key: &str,
        req: &VerdictRequest,
        origin: Origin,
    ) -> Result<Recorded> {
        self.require_pool_member(campaign, validator).await?;
        let mut tx = self.begin_write().await?;
        let target = Target {
            campaign_id: campaign.id,
            stage,
            key,
            version: None,
            path: Path::Queue,
        };
        let recorded = record_verdict_in(
            &mut tx,
            &target,
            validator,
            req,
            now_micros(),
            origin,
            Dedupe::SameAsLatest,
        )
        .await?;
        tx.commit().await?;
        Ok(recorded)
    }

    /// The splits of a stage; with `all`, resolved ones too.
    pub async fn splits(
        &self,
        campaign: &Campaign,
        stage: Stage,
        all: bool,
    ) -> Result<Vec<SplitItem>> {
        let mut c = conn(self).await?;
        let rows = sqlx::query(concat!(
            "SELECT ",
            item_columns!(),
            item_joins!(),
            " WHERE i.campaign_id = $1 AND i.stage = $2
               AND (i.outcome = 'split' OR ($3 = 1 AND i.outcome IN ('split_accepted', 'split_rejected')))
             ORDER BY t.position, c.clip_key, v.version, q.position"
        ))
        .bind(campaign.id)
        .bind(stage.number())
        .bind(i64::from(all))
        .fetch_all(&mut *c)
        .await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            let h = item_header(r)?;
            let (rater1, rater2, resolution) = split_sides_in(&mut c, h.id).await?;
            out.push(SplitItem {
                stage: h.stage,
                item_id: h.key().to_string(),
                outcome: h.outcome,
                clip: h.clip,
                question: h.question,
                rater1,
                rater2,
                resolution,
            });
        }
        Ok(out)
    }

    /// One split (resolved or not) of the newest version.
    pub async fn split_item(
        &self,
        campaign: &Campaign,
        stage: Stage,
        key: &str,
    ) -> Result<SplitItem> {
        let mut c = conn(self).await?;
        let not_found = || {
            Error::NotFound(format!(
                "no split {} `{key}` in Stage {stage}",
                stage.item_noun()
            ))
        };
        let id = resolve_item_in(&mut c, campaign.id, stage, key)
            .await?
            .ok_or_else(not_found)?;
        let row = sqlx::query(concat!(
            "SELECT ",
            item_columns!(),
            item_joins!(),
            " WHERE i.id = $1"
        ))
        .bind(id)
        .fetch_one(&mut *c)
        .await?;
        let h = item_header(&row)?;
        if !matches!(
            h.outcome,
            Outcome::Split | Outcome::SplitAccepted | Outcome::SplitRejected
        ) {
            return Err(not_found());
        }
        let (rater1, rater2, resolution) = split_sides_in(&mut c, h.id).await?;
        Ok(SplitItem {
            stage: h.stage,
            item_id: h.key().to_string(),
            outcome: h.outcome,
            clip: h.clip,
            question: h.question,
            rater1,
            rater2,
            resolution,
        })
    }

    /// An author resolves a split, finally.
    pub async fn resolve_split(
        &self,
        campaign: &Campaign,
        author: &User,
        stage: Stage,
        key: &str,
        req: &ResolutionRequest,
        origin: Origin,
    ) -> Result<bool> {
        let mut tx = self.begin_write().await?;
        let id = resolve_item_in(&mut tx, campaign.id, stage, key)
            .await?
            .ok_or_else(|| {
                Error::NotFound(format!("no {} `{key}` in Stage {stage}", stage.item_noun()))
            })?;
        let recorded = resolve_in(
            &mut tx,
            id,
            author,
            req.verdict,
            &req.note,
            now_micros(),
            origin,
        )
        .await?;
        tx.commit().await?;
        Ok(recorded)
    }
}

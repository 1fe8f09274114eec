// Verdicts, queues, the intersection rule and the resolution of splits. (Shared SQL:
// compiled once per backend, see store/mod.rs.)
//
// A verdict is four statements: load the item with everything the rules need (one),
// load its decisions (one), decide (`domain::verdict::decide_verdict`, no database),
// write the decision (one) and the item's new state (one, skipped when nothing about
// the item changes). When a clip is retained, one more statement opens its questions.

use crate::clock::now_micros;
use crate::domain::rules::resolve;
use crate::domain::verdict::{
    DecisionFact, ItemFacts, Plan, Record, Refusal, VerdictInput, decide_verdict,
};
use crate::domain::{Level, Origin, Outcome, Resolution, Stage, Verdict};
use crate::error::{Error, Result};
use crate::store::Lock;
use crate::store::accounts::User;
use crate::store::catalog::Campaign;
use crate::store::review::{
    DecisionRowDb, Dedupe, ItemHeader, ItemViewRow, OwnDecision, Path, QueueEntry, QueueStatus,
    Recorded, ResolutionRequest, ResolutionView, SplitItem, SplitSide, ValidatorItem,
    VerdictRequest,
};

/// An item with everything the verdict rules need, and the validator's gate.
#[derive(sqlx::FromRow)]
pub(crate) struct FactsRow {
    pub id: i64,
    pub outcome: String,
    pub rater1_id: Option<i64>,
    pub rater2_id: Option<i64>,
    pub queue1: Option<i64>,
    pub queue2: Option<i64>,
    pub decided1: i64,
    pub decided2: i64,
    pub clip_version: i64,
    pub is_current: i64,
    pub calibration: i64,
    pub level: Option<String>,
    pub clip_key: String,
    pub task: String,
    pub task_rater1: Option<i64>,
    pub task_rater2: Option<i64>,
    pub pair_problem: Option<String>,
    pub parent_item_id: Option<i64>,
    pub parent_outcome: Option<String>,
    pub parent_rater1: Option<i64>,
    pub parent_rater2: Option<i64>,
    pub gate: Option<i64>,
}

/// What the apply step needs beyond the rules' facts.
pub(crate) struct Loaded {
    pub facts: ItemFacts,
    queue: (Option<i64>, Option<i64>),
    decided: (i64, i64),
    /// The validator's calibration gate: None outside the pool.
    pub gate: Option<i64>,
}

/// A validator's calibration gate in a campaign (`$1`, `$2`): no row outside the pool,
/// 0 before calibration is passed, 1 after.
const GATE: &str = "SELECT cleared FROM pool_members WHERE campaign_id = $1 AND user_id = $2";

fn outcome(s: &str) -> Result<Outcome> {
    Outcome::parse(s).ok_or_else(|| Error::Internal(format!("stored outcome `{s}`")))
}

/// One item with everything the rules need, its row locked: `$1` campaign, `$2` stage,
/// `$3` key, `$4` the validator whose calibration gate is read, `$5` the version named
/// (0: the clip's newest). The joins are spelled out (not `item_details`) so that the
/// lock falls on the item's row alone.
pub(crate) const FACTS: &str = concat!(
    "SELECT i.id, i.outcome, i.rater1_id, i.rater2_id, i.queue1, i.queue2, i.decided1, i.decided2,
            i.clip_version, i.is_current, i.calibration, i.level, c.clip_key, t.code AS task,
            t.rater1_id AS task_rater1, t.rater2_id AS task_rater2, t.pair_problem, i.parent_item_id,
            p.outcome AS parent_outcome, p.rater1_id AS parent_rater1, p.rater2_id AS parent_rater2,
            (SELECT m.cleared FROM pool_members m WHERE m.campaign_id = $1 AND m.user_id = $4) AS gate
     FROM items i
     JOIN tasks t ON t.id = i.task_id
     JOIN clip_versions v ON v.id = i.clip_version_id
     JOIN clips c ON c.id = v.clip_id
     LEFT JOIN items p ON p.id = i.parent_item_id
     WHERE i.campaign_id = $1 AND i.stage = $2 AND i.item_key = $3
       AND CASE WHEN $5 = 0 THEN i.is_current = 1 ELSE i.clip_version = $5 END",
    for_update!("i")
);

/// Every decision on an item (`$1`), in order.
pub(crate) const DECISIONS: &str =
    "SELECT id, validator_id, seq, verdict, reasons, note, decided_at, time_spent_ms
     FROM decisions WHERE item_id = $1 ORDER BY seq";

/// The text of [`INSERT_DECISION`], also the first part of PostgreSQL's one-statement
/// writes.
macro_rules! insert_decision {
    () => {
        "INSERT INTO decisions (item_id, validator_id, seq, verdict, reasons, note, time_spent_ms, decided_at, recorded_at, origin, campaign_id, stage, time_measure)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id"
    };
}

/// A new decision, `$1`..`$13` as [`DecisionInsert`] orders them.
pub(crate) const INSERT_DECISION: &str = insert_decision!();

/// The pair fixed and the queue's marks (`$1`..`$5`, see [`ItemWrite::Marks`]).
pub(crate) const UPDATE_MARKS: &str =
    "UPDATE items SET rater1_id = $1, rater2_id = $2, decided1 = $3, decided2 = $4 WHERE id = $5";

/// The pair completes (`$1`..`$13`, see [`ItemWrite::Complete`]).
pub(crate) const UPDATE_COMPLETE: &str =
    "UPDATE items SET rater1_id = $1, rater2_id = $2, decided1 = $3, decided2 = $4,
                      outcome = $5, verdict1 = $6, verdict2 = $7, final1_id = $8, final2_id = $9,
                      reasons1 = $10, reasons2 = $11, completed_at = $12
     WHERE id = $13 AND outcome = 'pending'";

/// A retained clip's questions enter the queues of the pair that reviewed it (`$1`,
/// `$2` the pair, `$3` the clip's item).
pub(crate) const OPEN_QUESTIONS: &str = "UPDATE items SET queue1 = $1, queue2 = $2
     WHERE parent_item_id = $3 AND is_current = 1 AND calibration = 0 AND rater1_id IS NULL";

impl FactsRow {
    /// The rules' facts of the item of `stage` named `key`.
    pub(crate) fn loaded(self, stage: Stage, key: &str) -> Result<Loaded> {
        let r = self;
        let pair = |a: Option<i64>, b: Option<i64>| a.zip(b);
        let facts = ItemFacts {
            id: r.id,
            stage,
            key: key.to_string(),
            clip_key: r.clip_key,
            task: r.task,
            version: r.clip_version,
            is_current: r.is_current == 1,
            calibration: r.calibration != 0,
            level: r.level.as_deref().and_then(|l| Level::parse(l).ok()),
            outcome: outcome(&r.outcome)?,
            raters: pair(r.rater1_id, r.rater2_id),
            inherited: pair(r.parent_rater1, r.parent_rater2),
            in_force: pair(r.task_rater1, r.task_rater2),
            pair_problem: r.pair_problem,
            parent_retained: match (stage, r.parent_item_id) {
                (Stage::Question, Some(_)) => Some(
                    r.parent_outcome
                        .as_deref()
                        .and_then(Outcome::parse)
                        .is_some_and(Outcome::is_retained),
                ),
                _ => None,
            },
        };
        Ok(Loaded {
            facts,
            queue: (r.queue1, r.queue2),
            decided: (r.decided1, r.decided2),
            gate: r.gate,
        })
    }
}

/// Loads the item of `stage` named `key` (in the clip's newest version, or in
/// `version`) with everything the rules need, locking its row: one statement.
pub(crate) async fn load_item_in(
    c: &mut Conn,
    campaign_id: i64,
    stage: Stage,
    key: &str,
    version: Option<i64>,
    validator: i64,
) -> Result<Option<Loaded>> {
    let Some(r) = qa::<FactsRow>(FACTS)
        .bind(campaign_id)
        .bind(stage.number())
        .bind(key)
        .bind(validator)
        .bind(version.unwrap_or(0))
        .fetch_optional(&mut *c)
        .await?
    else {
        return Ok(None);
    };
    Ok(Some(r.loaded(stage, key)?))
}

/// Every decision on an item: one statement.
async fn decisions_in(c: &mut Conn, item_id: i64) -> Result<Vec<DecisionFact>> {
    qa::<DecisionRowDb>(DECISIONS)
        .bind(item_id)
        .fetch_all(&mut *c)
        .await?
        .into_iter()
        .map(DecisionRowDb::fact)
        .collect()
}

async fn user_name_in(c: &mut Conn, id: i64) -> Result<String> {
    Ok(super::base::user_by_id_in(c, id)
        .await?
        .map_or_else(|| format!("user #{id}"), |u| u.name))
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

impl Target<'_> {
    /// The answer for an item that is not there (or not the validator's to see).
    pub(crate) fn not_found(&self) -> Error {
        let (stage, key) = (self.stage, self.key);
        match self.path {
            Path::Queue => Error::NotFound(format!(
                "no {} `{key}` in your Stage {stage} queue",
                stage.item_noun()
            )),
            Path::Records => Error::NotFound(format!(
                "no {} `{key}`{}",
                stage.item_noun(),
                self.version
                    .map(|v| format!(" in version {v} of its clip"))
                    .unwrap_or_default()
            )),
        }
    }
}

/// The refusal of a validator whose gate is closed: why, in their words.
async fn gate_refusal(c: &mut Conn, campaign_id: i64, validator: &User, gate: Option<i64>) -> Error {
    match gate {
        None => Error::Forbidden(format!(
            "{} is not in this campaign's validator pool",
            validator.name
        )),
        Some(_) => match super::gates::status_of_in(c, campaign_id, validator.id).await {
            Ok(s) => super::gates::not_cleared(&s),
            Err(e) => e,
        },
    }
}

/// What the rules make of a verdict on its loaded item: an answer now, a refusal whose
/// words need one more lookup, or a decision to write.
pub(crate) enum Decided {
    Answer(Result<Recorded>),
    /// The validator's gate is closed (the calibration status says why).
    Gate,
    /// The validator is not in the item's pair (their names say so).
    NotInPair((i64, i64)),
    Write(Record),
}

/// Applies the rules (`domain::verdict::decide_verdict`) to a loaded item and its
/// decisions: no database.
pub(crate) fn decide(
    target: &Target<'_>,
    loaded: &Loaded,
    decisions: &[DecisionFact],
    input: &VerdictInput<'_>,
) -> Decided {
    if target.path == Path::Queue && loaded.gate != Some(1) {
        return Decided::Gate;
    }
    let refused = |e: Error| Decided::Answer(Err(e));
    match decide_verdict(&loaded.facts, decisions, input) {
        Ok(Plan::Record(r)) => Decided::Write(r),
        Ok(Plan::Repeat(d)) => Decided::Answer(Ok(Recorded {
            decision: d.into(),
            recorded: false,
            is_final: loaded.facts.outcome != Outcome::Pending,
        })),
        Err(Refusal::NotInQueue) => refused(target.not_found()),
        Err(Refusal::NotInPair(pair)) => Decided::NotInPair(pair),
        Err(Refusal::NoPair(problem)) => refused(Error::Forbidden(format!(
            "task {} has no validator pair yet ({problem})",
            loaded.facts.task
        ))),
        Err(Refusal::Conflict(m)) => refused(Error::Conflict(m)),
        Err(Refusal::Field(e)) => refused(e.into()),
    }
}

/// The answer to a verdict that was written.
pub(crate) fn recorded(record: Record, decided_at: i64) -> Recorded {
    Recorded {
        is_final: record.completes.is_some(),
        decision: OwnDecision {
            change: record.seq,
            verdict: record.checked.verdict,
            reasons: record.checked.reasons,
            note: record.checked.note,
            decided_at,
            time_spent_ms: record.time_spent_ms,
        },
        recorded: true,
    }
}

/// The values of [`INSERT_DECISION`], in its order.
pub(crate) struct DecisionInsert<'a> {
    pub item: i64,
    pub validator: i64,
    pub seq: i64,
    pub verdict: &'static str,
    pub reasons: &'a str,
    pub note: &'a str,
    pub time_spent_ms: Option<i64>,
    pub decided_at: i64,
    pub recorded_at: i64,
    pub origin: &'static str,
    pub campaign_id: i64,
    pub stage: i64,
    pub time_measure: Option<&'static str>,
}

impl<'a> DecisionInsert<'a> {
    pub(crate) fn of(
        target: &Target<'_>,
        loaded: &Loaded,
        record: &'a Record,
        validator: i64,
        req: &VerdictRequest,
        decided_at: i64,
        origin: Origin,
    ) -> DecisionInsert<'a> {
        DecisionInsert {
            item: loaded.facts.id,
            validator,
            seq: record.seq,
            verdict: record.checked.verdict.as_str(),
            reasons: &record.reasons,
            note: &record.checked.note,
            time_spent_ms: record.time_spent_ms,
            decided_at,
            recorded_at: now_micros(),
            origin: origin.as_str(),
            campaign_id: target.campaign_id,
            stage: target.stage.number(),
            time_measure: record
                .time_spent_ms
                .and(req.time_measure)
                .map(crate::domain::TimeMeasure::as_str),
        }
    }
}

/// The item's new state after a recorded verdict.
pub(crate) enum ItemWrite<'a> {
    /// Nothing about the item changes.
    Nothing,
    /// [`UPDATE_MARKS`]: the pair fixed and the queue's "decided" marks.
    Marks {
        pair: (i64, i64),
        decided: (i64, i64),
        item: i64,
    },
    /// [`UPDATE_COMPLETE`], and [`OPEN_QUESTIONS`] when a current clip is retained.
    Complete {
        pair: (i64, i64),
        decided: (i64, i64),
        outcome: &'static str,
        verdicts: (&'static str, &'static str),
        finals: Finals,
        reasons: (&'a str, &'a str),
        completed_at: i64,
        item: i64,
        open_questions: bool,
    },
}

impl<'a> ItemWrite<'a> {
    /// The pair fixed, the queue's "decided" mark, and the outcome when the pair
    /// completes (none when nothing about the item changes).
    pub(crate) fn of(loaded: &Loaded, record: &'a Record, validator: i64) -> ItemWrite<'a> {
        let mut decided = loaded.decided;
        if loaded.queue.0 == Some(validator) {
            decided.0 = 1;
        }
        if loaded.queue.1 == Some(validator) {
            decided.1 = 1;
        }
        let marks = decided != loaded.decided;
        let item = loaded.facts.id;
        match &record.completes {
            None if !record.fix_pair && !marks => ItemWrite::Nothing,
            None => ItemWrite::Marks {
                pair: record.pair,
                decided,
                item,
            },
            Some(done) => ItemWrite::Complete {
                pair: record.pair,
                decided,
                outcome: done.outcome.as_str(),
                verdicts: (done.verdict1.as_str(), done.verdict2.as_str()),
                finals: Finals {
                    mine_is_first: done.mine_is_first,
                    partner: done.partner_decision,
                },
                reasons: (&done.reasons1, &done.reasons2),
                completed_at: now_micros(),
                item,
                open_questions: loaded.facts.stage == Stage::Clip
                    && done.outcome.is_retained()
                    && loaded.facts.is_current,
            },
        }
    }
}

/// Which of the pair's final decisions is the one being written, and the partner's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Finals {
    pub mine_is_first: bool,
    pub partner: i64,
}

impl Finals {
    /// `final1_id` and `final2_id`, the new decision being `mine`.
    pub(crate) fn ids(self, mine: i64) -> (i64, i64) {
        if self.mine_is_first {
            (mine, self.partner)
        } else {
            (self.partner, mine)
        }
    }
}

/// An UPDATE_COMPLETE that found the item no longer pending.
pub(crate) fn changed_under_lock(item: i64) -> Error {
    Error::Internal(format!("item #{item} changed under its lock"))
}

/// Stores one verdict and, when it completes the pair, applies the intersection rule.
/// Runs inside a write, which holds the item's row lock from its first statement on.
pub(crate) async fn record_verdict_in(
    c: &mut Conn,
    target: &Target<'_>,
    validator: &User,
    req: &VerdictRequest,
    decided_at: i64,
    origin: Origin,
    dedupe: Dedupe,
) -> Result<Recorded> {
    let loaded = load_item_in(c, target.campaign_id, target.stage, target.key, target.version, validator.id)
        .await?
        .ok_or_else(|| target.not_found())?;
    let decisions = if target.path == Path::Queue && loaded.gate != Some(1) {
        Vec::new()
    } else {
        decisions_in(c, loaded.facts.id).await?
    };
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
    let record = match decide(target, &loaded, &decisions, &input) {
        Decided::Answer(a) => return a,
        Decided::Gate => {
            return Err(gate_refusal(c, target.campaign_id, validator, loaded.gate).await);
        }
        Decided::NotInPair((a, b)) => {
            let (a, b) = (user_name_in(c, a).await?, user_name_in(c, b).await?);
            return Err(Error::Forbidden(format!(
                "{} is not in the pair of {} `{}` (it is reviewed by {a} and {b})",
                validator.name,
                target.stage.item_noun(),
                target.key
            )));
        }
        Decided::Write(r) => r,
    };
    let d = DecisionInsert::of(target, &loaded, &record, validator.id, req, decided_at, origin);
    let write = ItemWrite::of(&loaded, &record, validator.id);
    if ONE_STATEMENT_WRITES {
        write_in_one(c, &d, &write).await?;
    } else {
        let decision_id: i64 = bind_decision(qs(INSERT_DECISION), &d)
            .fetch_one(&mut *c)
            .await?;
        apply_in(c, &write, decision_id).await?;
    }
    Ok(recorded(record, decided_at))
}

/// Binds a [`DecisionInsert`] as `$1`..`$13` of [`INSERT_DECISION`].
fn bind_decision<'q, O>(
    query: sqlx::query::QueryScalar<'q, Db, O, <Db as sqlx::Database>::Arguments>,
    d: &DecisionInsert<'q>,
) -> sqlx::query::QueryScalar<'q, Db, O, <Db as sqlx::Database>::Arguments> {
    query
        .bind(d.item)
        .bind(d.validator)
        .bind(d.seq)
        .bind(d.verdict)
        .bind(d.reasons)
        .bind(d.note)
        .bind(d.time_spent_ms)
        .bind(d.decided_at)
        .bind(d.recorded_at)
        .bind(d.origin)
        .bind(d.campaign_id)
        .bind(d.stage)
        .bind(d.time_measure)
}

/// [`INSERT_DECISION`] and [`UPDATE_MARKS`] as one statement (`$14`.. the marks).
const WRITE_MARKS: &str = concat!(
    "WITH d AS (",
    insert_decision!(),
    "),
     u AS (UPDATE items SET rater1_id = $14, rater2_id = $15, decided1 = $16, decided2 = $17 WHERE id = $18)
     SELECT 1::BIGINT FROM d"
);

/// [`INSERT_DECISION`], [`UPDATE_COMPLETE`] (the new decision's id taken from the
/// insert, `$21` saying whether it is the first final) and, when `$27`,
/// [`OPEN_QUESTIONS`], as one statement: the number of completed items (1, or 0 when
/// the item was no longer pending).
const WRITE_COMPLETE: &str = concat!(
    "WITH d AS (",
    insert_decision!(),
    "),
     u AS (UPDATE items SET rater1_id = $14, rater2_id = $15, decided1 = $16, decided2 = $17,
                outcome = $18, verdict1 = $19, verdict2 = $20,
                final1_id = CASE WHEN $21 THEN (SELECT id FROM d) ELSE $22 END,
                final2_id = CASE WHEN $21 THEN $22 ELSE (SELECT id FROM d) END,
                reasons1 = $23, reasons2 = $24, completed_at = $25
           WHERE id = $26 AND outcome = 'pending' RETURNING id),
     o AS (UPDATE items SET queue1 = $14, queue2 = $15
           WHERE $27 AND parent_item_id = $26 AND is_current = 1 AND calibration = 0 AND rater1_id IS NULL)
     SELECT COUNT(*) FROM u"
);

/// The decision and the item's new state in one statement (PostgreSQL: a
/// data-modifying `WITH`; the queue counters' statement trigger fires once for both
/// updates of `items`).
async fn write_in_one(c: &mut Conn, d: &DecisionInsert<'_>, write: &ItemWrite<'_>) -> Result<()> {
    match *write {
        ItemWrite::Nothing => {
            bind_decision(qs::<i64>(INSERT_DECISION), d)
                .fetch_one(&mut *c)
                .await?;
        }
        ItemWrite::Marks {
            pair,
            decided,
            item,
        } => {
            bind_decision(qs::<i64>(WRITE_MARKS), d)
                .bind(pair.0)
                .bind(pair.1)
                .bind(decided.0)
                .bind(decided.1)
                .bind(item)
                .fetch_one(&mut *c)
                .await?;
        }
        ItemWrite::Complete {
            pair,
            decided,
            outcome,
            verdicts,
            finals,
            reasons,
            completed_at,
            item,
            open_questions,
        } => {
            let completed: i64 = bind_decision(qs(WRITE_COMPLETE), d)
                .bind(pair.0)
                .bind(pair.1)
                .bind(decided.0)
                .bind(decided.1)
                .bind(outcome)
                .bind(verdicts.0)
                .bind(verdicts.1)
                .bind(finals.mine_is_first)
                .bind(finals.partner)
                .bind(reasons.0)
                .bind(reasons.1)
                .bind(completed_at)
                .bind(item)
                .bind(open_questions)
                .fetch_one(&mut *c)
                .await?;
            if completed != 1 {
                return Err(changed_under_lock(item));
            }
        }
    }
    Ok(())
}

/// Writes the item's new state after a recorded verdict (one statement, none when
/// nothing about the item changes); a retained clip opens its questions (one more).
async fn apply_in(c: &mut Conn, write: &ItemWrite<'_>, decision_id: i64) -> Result<()> {
    match *write {
        ItemWrite::Nothing => {}
        ItemWrite::Marks {
            pair,
            decided,
            item,
        } => {
            q(UPDATE_MARKS)
                .bind(pair.0)
                .bind(pair.1)
                .bind(decided.0)
                .bind(decided.1)
                .bind(item)
                .execute(&mut *c)
                .await?;
        }
        ItemWrite::Complete {
            pair,
            decided,
            outcome,
            verdicts,
            finals,
            reasons,
            completed_at,
            item,
            open_questions,
        } => {
            let finals = finals.ids(decision_id);
            let updated = q(UPDATE_COMPLETE)
                .bind(pair.0)
                .bind(pair.1)
                .bind(decided.0)
                .bind(decided.1)
                .bind(outcome)
                .bind(verdicts.0)
                .bind(verdicts.1)
                .bind(finals.0)
                .bind(finals.1)
                .bind(reasons.0)
                .bind(reasons.1)
                .bind(completed_at)
                .bind(item)
                .execute(&mut *c)
                .await?;
            if updated.rows_affected() != 1 {
                return Err(changed_under_lock(item));
            }
            if open_questions {
                q(OPEN_QUESTIONS)
                    .bind(pair.0)
                    .bind(pair.1)
                    .bind(item)
                    .execute(&mut *c)
                    .await?;
            }
        }
    }
    Ok(())
}

/// A retained clip's questions enter the queues of the pair that reviewed it.
async fn open_questions_in(c: &mut Conn, clip_item: i64, pair: (i64, i64)) -> Result<()> {
    q(OPEN_QUESTIONS)
        .bind(pair.0)
        .bind(pair.1)
        .bind(clip_item)
        .execute(&mut *c)
        .await?;
    Ok(())
}

/// The resolution of a split, with the item it is about.
#[derive(sqlx::FromRow)]
struct SplitStateRow {
    id: i64,
    outcome: String,
    is_current: i64,
    rater1_id: Option<i64>,
    rater2_id: Option<i64>,
    author_id: Option<i64>,
    verdict: Option<String>,
    note: Option<String>,
}

/// Stores an author's resolution of a split, on the item of `stage` named `key`
/// (locked). Returns false when the same resolution was already stored.
pub(crate) async fn resolve_in(
    c: &mut Conn,
    campaign_id: i64,
    stage: Stage,
    key: &str,
    author: &User,
    verdict: Resolution,
    note: &str,
    decided_at: i64,
    origin: Origin,
) -> Result<bool> {
    let note = note.trim();
    crate::domain::text::check(note).map_err(|m| Error::field("note", m))?;
    if note.is_empty() {
        return Err(Error::field("note", "a resolution needs a note saying why"));
    }
    if note.chars().count() > crate::domain::rules::MAX_NOTE_CHARS {
        return Err(Error::field("note", "the note is too long"));
    }
    let row = qa::<SplitStateRow>(concat!(
        "SELECT i.id, i.outcome, i.is_current, i.rater1_id, i.rater2_id, r.author_id, r.verdict, r.note
         FROM items i LEFT JOIN resolutions r ON r.item_id = i.id
         WHERE i.campaign_id = $1 AND i.stage = $2 AND i.item_key = $3 AND i.is_current = 1",
        for_update!("i")
    ))
    .bind(campaign_id)
    .bind(stage.number())
    .bind(key)
    .fetch_optional(&mut *c)
    .await?
    .ok_or_else(|| Error::NotFound(format!("no {} `{key}` in Stage {stage}", stage.item_noun())))?;
    if row.author_id == Some(author.id)
        && row.verdict.as_deref() == Some(verdict.as_str())
        && row.note.as_deref() == Some(note)
    {
        return Ok(false);
    }
    let new_outcome = resolve(outcome(&row.outcome)?, verdict).map_err(Error::Conflict)?;
    q("INSERT INTO resolutions (item_id, author_id, verdict, note, decided_at, recorded_at, origin)
       VALUES ($1, $2, $3, $4, $5, $6, $7)")
    .bind(row.id)
    .bind(author.id)
    .bind(verdict.as_str())
    .bind(note)
    .bind(decided_at)
    .bind(now_micros())
    .bind(origin.as_str())
    .execute(&mut *c)
    .await?;
    q("UPDATE items SET outcome = $1 WHERE id = $2 AND outcome = 'split'")
        .bind(new_outcome.as_str())
        .bind(row.id)
        .execute(&mut *c)
        .await?;
    if stage == Stage::Clip
        && new_outcome.is_retained()
        && row.is_current == 1
        && let Some(pair) = row.rater1_id.zip(row.rater2_id)
    {
        open_questions_in(c, row.id, pair).await?;
    }
    Ok(true)
}

/// Both counted verdicts of a split, with names, and its resolution.
#[derive(sqlx::FromRow)]
struct SplitRow {
    #[sqlx(flatten)]
    item: ItemViewRow,
    r1_verdict: String,
    r1_reasons: String,
    r1_note: String,
    r1_decided_at: i64,
    r1_time: Option<i64>,
    r1_name: String,
    r2_verdict: String,
    r2_reasons: String,
    r2_note: String,
    r2_decided_at: i64,
    r2_time: Option<i64>,
    r2_name: String,
    res_verdict: Option<String>,
    res_note: Option<String>,
    res_decided_at: Option<i64>,
    res_author: Option<String>,
}

impl TryFrom<SplitRow> for SplitItem {
    type Error = Error;
    fn try_from(r: SplitRow) -> Result<SplitItem> {
        let side = |verdict: &str, reasons: &str, note: String, at: i64, time, name: String| {
            Ok::<_, Error>(SplitSide {
                validator: name,
                verdict: Verdict::parse(verdict).map_err(Error::Internal)?,
                reasons: crate::domain::Reason::split_stored(reasons),
                note,
                decided_at: at,
                time_spent_ms: time,
            })
        };
        let rater1 = side(&r.r1_verdict, &r.r1_reasons, r.r1_note, r.r1_decided_at, r.r1_time, r.r1_name)?;
        let rater2 = side(&r.r2_verdict, &r.r2_reasons, r.r2_note, r.r2_decided_at, r.r2_time, r.r2_name)?;
        let resolution = match (r.res_verdict, r.res_note, r.res_decided_at, r.res_author) {
            (Some(v), Some(note), Some(at), Some(author)) => Some(ResolutionView {
                author,
                verdict: Resolution::parse(&v).map_err(Error::Internal)?,
                note,
                decided_at: at,
            }),
            _ => None,
        };
        let h = ItemHeader::try_from(r.item)?;
        Ok(SplitItem {
            stage: h.stage,
            item_id: h.key,
            outcome: h.outcome,
            clip: h.clip,
            question: h.question,
            rater1,
            rater2,
            resolution,
        })
    }
}

/// A validator's queue in a stage: their gate, done and total, and the next item.
#[derive(sqlx::FromRow)]
struct QueueRow {
    gate: Option<i64>,
    total: i64,
    done: i64,
    next: Option<String>,
}

/// A validator's queue in one statement: `$1` campaign, `$2` validator, `$3` stage.
/// Their gate, done and total from `queue_counts` (kept by triggers; on PostgreSQL
/// in eight parts that are summed, at most eight rows of the key), and the next
/// undecided item: one index seek in each of `items_queue1` and `items_queue2`, so
/// its cost does not grow with the campaign.
pub(crate) const QUEUE: &str = "SELECT
    (SELECT m.cleared FROM pool_members m WHERE m.campaign_id = $1 AND m.user_id = $2) AS gate,
    COALESCE((SELECT CAST(SUM(total) AS BIGINT) FROM queue_counts WHERE campaign_id = $1 AND stage = $3 AND user_id = $2), 0) AS total,
    COALESCE((SELECT CAST(SUM(done) AS BIGINT) FROM queue_counts WHERE campaign_id = $1 AND stage = $3 AND user_id = $2), 0) AS done,
    (SELECT n.item_key FROM (
         SELECT a.item_key, a.sort_key FROM (
             SELECT item_key, sort_key FROM items
             WHERE queue1 = $2 AND campaign_id = $1 AND stage = $3 AND decided1 = 0
             ORDER BY sort_key LIMIT 1) a
         UNION ALL
         SELECT b.item_key, b.sort_key FROM (
             SELECT item_key, sort_key FROM items
             WHERE queue2 = $2 AND campaign_id = $1 AND stage = $3 AND decided2 = 0
             ORDER BY sort_key LIMIT 1) b
     ) n ORDER BY n.sort_key LIMIT 1) AS next";

impl Backend {
    pub(crate) async fn in_pool(&self, campaign: &Campaign, validator: &User) -> Result<bool> {
        let found: Option<i64> =
            qs("SELECT user_id FROM pool_members WHERE campaign_id = $1 AND user_id = $2")
                .bind(campaign.id)
                .bind(validator.id)
                .fetch_optional(&mut *self.read().await?)
                .await?;
        Ok(found.is_some())
    }

    /// The plan the database chooses for [`QUEUE`], one line per step.
    pub(crate) async fn explain_next_item(
        &self,
        campaign: &Campaign,
        validator: &User,
        stage: Stage,
    ) -> Result<Vec<String>> {
        let mut c = self.read().await?;
        super::explain(&mut c, QUEUE, &[campaign.id, validator.id, stage.number()]).await
    }

    pub(crate) async fn queue(
        &self,
        campaign: &Campaign,
        validator: &User,
        stage: Stage,
    ) -> Result<QueueStatus> {
        let mut c = self.read().await?;
        let r = qa::<QueueRow>(QUEUE)
        .bind(campaign.id)
        .bind(validator.id)
        .bind(stage.number())
        .fetch_one(&mut *c)
        .await?;
        if r.gate != Some(1) {
            return Err(gate_refusal(&mut c, campaign.id, validator, r.gate).await);
        }
        Ok(QueueStatus {
            stage,
            done: r.done,
            total: r.total,
            next: r.next,
        })
    }

    pub(crate) async fn queue_items(
        &self,
        campaign: &Campaign,
        validator: &User,
        stage: Stage,
    ) -> Result<Vec<QueueEntry>> {
        let mut c = self.read().await?;
        let gate: Option<i64> = qs(GATE)
            .bind(campaign.id)
            .bind(validator.id)
            .fetch_optional(&mut *c)
            .await?;
        if gate != Some(1) {
            return Err(gate_refusal(&mut c, campaign.id, validator, gate).await);
        }
        #[derive(sqlx::FromRow)]
        struct Row {
            item_key: String,
            decided: i64,
            task: String,
            qa_type: Option<String>,
            level: Option<String>,
            verdict: Option<String>,
            decided_at: Option<i64>,
        }
        let rows: Vec<Row> = qa(
            "SELECT x.item_key, x.decided, t.code AS task, x.qa_type, x.level,
                    d.verdict, d.decided_at
             FROM (SELECT id, task_id, item_key, sort_key, qa_type, level, decided1 AS decided
                   FROM items WHERE queue1 = $2 AND campaign_id = $1 AND stage = $3
                   UNION ALL
                   SELECT id, task_id, item_key, sort_key, qa_type, level, decided2 AS decided
                   FROM items WHERE queue2 = $2 AND campaign_id = $1 AND stage = $3) x
             JOIN tasks t ON t.id = x.task_id
             LEFT JOIN decisions d ON d.item_id = x.id AND d.validator_id = $2
                  AND d.seq = (SELECT MAX(seq) FROM decisions e WHERE e.item_id = x.id AND e.validator_id = $2)
             ORDER BY x.sort_key",
        )
        .bind(campaign.id)
        .bind(validator.id)
        .bind(stage.number())
        .fetch_all(&mut *c)
        .await?;
        rows.into_iter()
            .map(|r| {
                Ok(QueueEntry {
                    item_id: r.item_key,
                    decided: r.decided != 0,
                    task: r.task,
                    qa_type: r.qa_type,
                    level: r.level,
                    verdict: r
                        .verdict
                        .as_deref()
                        .map(Verdict::parse)
                        .transpose()
                        .map_err(Error::Internal)?,
                    decided_at: r.decided_at,
                })
            })
            .collect()
    }

    pub(crate) async fn validator_item(
        &self,
        campaign: &Campaign,
        validator: &User,
        stage: Stage,
        key: &str,
    ) -> Result<ValidatorItem> {
        let mut c = self.read().await?;
        #[derive(sqlx::FromRow)]
        struct Row {
            #[sqlx(flatten)]
            item: ItemViewRow,
            queue1: Option<i64>,
            queue2: Option<i64>,
            gate: Option<i64>,
        }
        let row = qa::<Row>(
            "SELECT i.*,
                    (SELECT m.cleared FROM pool_members m WHERE m.campaign_id = $1 AND m.user_id = $4) AS gate
             FROM item_details i
             WHERE i.campaign_id = $1 AND i.stage = $2 AND i.item_key = $3 AND i.is_current = 1",
        )
        .bind(campaign.id)
        .bind(stage.number())
        .bind(key)
        .bind(validator.id)
        .fetch_optional(&mut *c)
        .await?;
        let not_found = || {
            Error::NotFound(format!(
                "no {} `{key}` in your Stage {stage} queue",
                stage.item_noun()
            ))
        };
        // The gate is read even when the item is not found.
        let gate: Option<i64> = match &row {
            Some(r) => r.gate,
            None => {
                qs(GATE)
                    .bind(campaign.id)
                    .bind(validator.id)
                    .fetch_optional(&mut *c)
                    .await?
            }
        };
        if gate != Some(1) {
            return Err(gate_refusal(&mut c, campaign.id, validator, gate).await);
        }
        let row = row.ok_or_else(not_found)?;
        if row.queue1 != Some(validator.id) && row.queue2 != Some(validator.id) {
            return Err(not_found());
        }
        let header = ItemHeader::try_from(row.item)?;
        let my_decisions = qa::<DecisionRowDb>(
            "SELECT id, validator_id, seq, verdict, reasons, note, decided_at, time_spent_ms
             FROM decisions WHERE item_id = $1 AND validator_id = $2 ORDER BY seq",
        )
        .bind(header.id)
        .bind(validator.id)
        .fetch_all(&mut *c)
        .await?
        .into_iter()
        .map(|d| d.fact().map(OwnDecision::from))
        .collect::<Result<Vec<_>>>()?;
        Ok(ValidatorItem {
            stage,
            item_id: header.key,
            locked: header.outcome != Outcome::Pending,
            clip: header.clip,
            question: header.question,
            my_decisions,
        })
    }

    /// A verdict as one write job of the backend's general road (PostgreSQL's only
    /// road; on SQLite, the one for the rare refusals whose words need more lookups).
    pub(crate) async fn record_verdict_job(
        &self,
        campaign: &Campaign,
        validator: &User,
        stage: Stage,
        key: &str,
        req: &VerdictRequest,
        origin: Origin,
    ) -> Result<Recorded> {
        let (campaign_id, key, req, validator) =
            (campaign.id, key.to_string(), req.clone(), validator.clone());
        self.write(Lock::Item, move |c| {
            let (key, req, validator) = (key.clone(), req.clone(), validator.clone());
            Box::pin(async move {
                let target = Target {
                    campaign_id,
                    stage,
                    key: &key,
                    version: None,
                    path: Path::Queue,
                };
                record_verdict_in(
                    c,
                    &target,
                    &validator,
                    &req,
                    now_micros(),
                    origin,
                    Dedupe::SameAsLatest,
                )
                .await
            })
        })
        .await
    }

    pub(crate) async fn splits(
        &self,
        campaign: &Campaign,
        stage: Stage,
        all: bool,
    ) -> Result<Vec<SplitItem>> {
        qa::<SplitRow>(
            "SELECT * FROM split_details
             WHERE campaign_id = $1 AND stage = $2 AND is_current = 1
               AND (outcome = 'split' OR ($3 = 1 AND outcome IN ('split_accepted', 'split_rejected')))
             ORDER BY sort_key",
        )
        .bind(campaign.id)
        .bind(stage.number())
        .bind(i64::from(all))
        .fetch_all(&mut *self.read().await?)
        .await?
        .into_iter()
        .map(SplitItem::try_from)
        .collect()
    }

    pub(crate) async fn split_item(
        &self,
        campaign: &Campaign,
        stage: Stage,
        key: &str,
    ) -> Result<SplitItem> {
        let row = qa::<SplitRow>(
            "SELECT * FROM split_details
             WHERE campaign_id = $1 AND stage = $2 AND item_key = $3 AND is_current = 1
               AND outcome IN ('split', 'split_accepted', 'split_rejected')",
        )
        .bind(campaign.id)
        .bind(stage.number())
        .bind(key)
        .fetch_optional(&mut *self.read().await?)
        .await?;
        row.map(SplitItem::try_from).transpose()?.ok_or_else(|| {
            Error::NotFound(format!(
                "no split {} `{key}` in Stage {stage}",
                stage.item_noun()
            ))
        })
    }

    pub(crate) async fn resolve_split(
        &self,
        campaign: &Campaign,
        author: &User,
        stage: Stage,
        key: &str,
        req: &ResolutionRequest,
        origin: Origin,
    ) -> Result<bool> {
        let (campaign_id, key, req, author) =
            (campaign.id, key.to_string(), req.clone(), author.clone());
        self.write(Lock::Item, move |c| {
            let (key, req, author) = (key.clone(), req.clone(), author.clone());
            Box::pin(async move {
                resolve_in(
                    c,
                    campaign_id,
                    stage,
                    &key,
                    &author,
                    req.verdict,
                    &req.note,
                    now_micros(),
                    origin,
                )
                .await
            })
        })
        .await
    }
}

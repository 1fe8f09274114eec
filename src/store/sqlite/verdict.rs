//! A verdict on SQLite's writer thread, called in place (rusqlite): the same four
//! statements as `review::record_verdict_in` (the SQL and the rules are shared with it),
//! without a round trip to another thread for each. A refusal whose words need more
//! lookups (a closed calibration gate, a validator outside the item's pair) is handed
//! back to the general road, which loads the item again and answers.

use super::review::{
    DECISIONS, Decided, DecisionInsert, FACTS, FactsRow, INSERT_DECISION, ItemWrite, Loaded,
    OPEN_QUESTIONS, Target, UPDATE_COMPLETE, UPDATE_MARKS, changed_under_lock, decide, recorded,
};
use crate::domain::Origin;
use crate::domain::verdict::{DecisionFact, VerdictInput};
use crate::error::{Error, Result};
use crate::store::accounts::User;
use crate::store::review::{DecisionRowDb, Dedupe, Recorded, VerdictRequest};
use rusqlite::types::ToSql;
use rusqlite::{Connection, OptionalExtension};

/// What the writer thread made of a verdict.
pub(crate) enum Fast {
    Done(Recorded),
    /// The general road answers (it needs lookups this one does not make).
    Elsewhere,
}

/// Whether SQLite said it cannot write (a full disk, an I/O error).
pub(crate) fn cannot_write(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _)
        if crate::error::cannot_write(Some(&f.extended_code.to_string())))
}

/// A rusqlite error as the store's: a full disk is unavailable, a unique violation a
/// conflict, anything else internal.
pub(crate) fn error(e: rusqlite::Error) -> Error {
    if let rusqlite::Error::SqliteFailure(f, _) = &e {
        if cannot_write(&e) {
            tracing::error!(error = %e, "the database cannot write");
            return Error::Unavailable(
                "the database cannot write right now (the disk may be full); nothing was stored: try again later"
                    .into(),
            );
        }
        if f.code == rusqlite::ErrorCode::ConstraintViolation
            && matches!(
                f.extended_code,
                rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                    | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
            )
        {
            return Error::Conflict(
                "another request stored the same thing at the same moment; reload and try again"
                    .into(),
            );
        }
    }
    Error::Internal(format!("database: {e}"))
}

/// Runs one statement (cached, prepared once per connection) with `$1`.. bound by
/// name, counting it.
pub(super) struct Db<'c> {
    c: &'c Connection,
    statements: u64,
}

impl<'c> Db<'c> {
    pub(super) fn new(c: &'c Connection) -> Db<'c> {
        Db { c, statements: 0 }
    }

    /// The statements run so far.
    pub(super) fn statements(&self) -> u64 {
        self.statements
    }

    /// The rowid of the last row inserted.
    pub(super) fn last_insert_rowid(&self) -> i64 {
        self.c.last_insert_rowid()
    }

    pub(super) fn statement(&mut self, sql: &str) -> Result<rusqlite::CachedStatement<'_>> {
        self.statements += 1;
        self.c.prepare_cached(sql).map_err(error)
    }

    fn execute(&mut self, sql: &str, args: &[(&str, &dyn ToSql)]) -> Result<usize> {
        self.statement(sql)?.execute(args).map_err(error)
    }
}

fn load(db: &mut Db<'_>, target: &Target<'_>, validator: i64) -> Result<Option<Loaded>> {
    let row = db
        .statement(FACTS)?
        .query_row(
            &[
                ("$1", &target.campaign_id as &dyn ToSql),
                ("$2", &target.stage.number()),
                ("$3", &target.key),
                ("$4", &validator),
                ("$5", &target.version.unwrap_or(0)),
            ],
            |r| {
                Ok(FactsRow {
                    id: r.get("id")?,
                    outcome: r.get("outcome")?,
                    rater1_id: r.get("rater1_id")?,
                    rater2_id: r.get("rater2_id")?,
                    queue1: r.get("queue1")?,
                    queue2: r.get("queue2")?,
                    decided1: r.get("decided1")?,
                    decided2: r.get("decided2")?,
                    clip_version: r.get("clip_version")?,
                    is_current: r.get("is_current")?,
                    calibration: r.get("calibration")?,
                    level: r.get("level")?,
                    clip_key: r.get("clip_key")?,
                    task: r.get("task")?,
                    task_rater1: r.get("task_rater1")?,
                    task_rater2: r.get("task_rater2")?,
                    pair_problem: r.get("pair_problem")?,
                    parent_item_id: r.get("parent_item_id")?,
                    parent_outcome: r.get("parent_outcome")?,
                    parent_rater1: r.get("parent_rater1")?,
                    parent_rater2: r.get("parent_rater2")?,
                    gate: r.get("gate")?,
                })
            },
        )
        .optional()
        .map_err(error)?;
    row.map(|r| r.loaded(target.stage, target.key)).transpose()
}

fn decisions(db: &mut Db<'_>, item: i64) -> Result<Vec<DecisionFact>> {
    let mut st = db.statement(DECISIONS)?;
    let rows = st
        .query_map(&[("$1", &item as &dyn ToSql)], |r| {
            Ok(DecisionRowDb {
                id: r.get("id")?,
                validator_id: r.get("validator_id")?,
                seq: r.get("seq")?,
                verdict: r.get("verdict")?,
                reasons: r.get("reasons")?,
                note: r.get("note")?,
                decided_at: r.get("decided_at")?,
                time_spent_ms: r.get("time_spent_ms")?,
            })
        })
        .map_err(error)?;
    let mut out = Vec::new();
    for r in rows {
        out.push(r.map_err(error)?.fact()?);
    }
    Ok(out)
}

/// Records a validator's verdict from their queue (the store's `record_verdict`), in
/// the writer's savepoint; the count of statements it sent is added to `statements`.
pub(crate) fn record_verdict(
    c: &Connection,
    statements: &mut u64,
    target: &Target<'_>,
    validator: &User,
    req: &VerdictRequest,
    decided_at: i64,
    origin: Origin,
) -> Result<Fast> {
    let mut db = Db::new(c);
    let answer = record(&mut db, target, validator, req, decided_at, origin);
    *statements += db.statements();
    answer
}

fn record(
    db: &mut Db<'_>,
    target: &Target<'_>,
    validator: &User,
    req: &VerdictRequest,
    decided_at: i64,
    origin: Origin,
) -> Result<Fast> {
    let loaded = load(db, target, validator.id)?.ok_or_else(|| target.not_found())?;
    if loaded.gate != Some(1) {
        return Ok(Fast::Elsewhere);
    }
    let decisions = decisions(db, loaded.facts.id)?;
    let input = VerdictInput {
        validator: validator.id,
        verdict: req.verdict,
        reasons: &req.reasons,
        note: &req.note,
        time_spent_ms: req.time_spent_ms,
        version: req.version,
        decided_at,
        dedupe: Dedupe::SameAsLatest,
        path: target.path,
    };
    let record = match decide(target, &loaded, &decisions, &input) {
        Decided::Answer(a) => return a.map(Fast::Done),
        Decided::Gate | Decided::NotInPair(_) => return Ok(Fast::Elsewhere),
        Decided::Write(r) => r,
    };
    let d = DecisionInsert::of(
        target,
        &loaded,
        &record,
        validator.id,
        req,
        decided_at,
        origin,
    );
    let decision_id: i64 = db
        .statement(INSERT_DECISION)?
        .query_row(
            &[
                ("$1", &d.item as &dyn ToSql),
                ("$2", &d.validator),
                ("$3", &d.seq),
                ("$4", &d.verdict),
                ("$5", &d.reasons),
                ("$6", &d.note),
                ("$7", &d.time_spent_ms),
                ("$8", &d.decided_at),
                ("$9", &d.recorded_at),
                ("$10", &d.origin),
                ("$11", &d.campaign_id),
                ("$12", &d.stage),
                ("$13", &d.time_measure),
            ],
            |r| r.get(0),
        )
        .map_err(error)?;
    match ItemWrite::of(&loaded, &record, validator.id) {
        ItemWrite::Nothing => {}
        ItemWrite::Marks {
            pair,
            decided,
            item,
        } => {
            db.execute(
                UPDATE_MARKS,
                &[
                    ("$1", &pair.0),
                    ("$2", &pair.1),
                    ("$3", &decided.0),
                    ("$4", &decided.1),
                    ("$5", &item),
                ],
            )?;
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
            let updated = db.execute(
                UPDATE_COMPLETE,
                &[
                    ("$1", &pair.0),
                    ("$2", &pair.1),
                    ("$3", &decided.0),
                    ("$4", &decided.1),
                    ("$5", &outcome),
                    ("$6", &verdicts.0),
                    ("$7", &verdicts.1),
                    ("$8", &finals.0),
                    ("$9", &finals.1),
                    ("$10", &reasons.0),
                    ("$11", &reasons.1),
                    ("$12", &completed_at),
                    ("$13", &item),
                ],
            )?;
            if updated != 1 {
                return Err(changed_under_lock(item));
            }
            if open_questions {
                db.execute(
                    OPEN_QUESTIONS,
                    &[("$1", &pair.0), ("$2", &pair.1), ("$3", &item)],
                )?;
            }
        }
    }
    Ok(Fast::Done(recorded(record, decided_at)))
}

//! A verdict and a resolution, each written once for every backend.
//!
//! A verdict is four statements on SQLite (three on PostgreSQL): load the item with
//! everything the rules need ([`FACTS`], its row locked on PostgreSQL), load its
//! decisions ([`DECISIONS`]), decide (`domain::verdict::decide_verdict`, no database),
//! then [`apply`]: the decision and the item's new state (SQLite: an insert and at most
//! one update, one more when a retained clip's questions open; PostgreSQL: one
//! data-modifying statement, so that the item's row and its validator's counter stay
//! locked one round trip less).

mod ops;
mod withdraw;

use super::{base, gates};
use crate::clock::now_micros;
use crate::domain::import::ItemKind;
use crate::domain::rules::resolve as resolve_outcome;
use crate::domain::verdict::{
    Blind, DecisionFact, ItemFacts, Plan, Record, Refusal, VerdictInput, decide_verdict,
};
use crate::domain::{Origin, Outcome, Resolution, Stage};
use crate::error::{Error, Result};
use crate::store::accounts::User;
use crate::store::catalog::Campaign;
use crate::store::db::{Arg, Dialect, Sql, Tx, locked, named, row, sql};
use crate::store::review::{DecisionRowDb, Dedupe, OwnDecision, Path, Recorded, VerdictRequest};

row! {
    /// An item with everything the verdict rules need, and the validator's gate.
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
        pub protocol_version: i64,
        pub held: i64,
        pub blind_key_check: i64,
        pub blind_given: i64,
    }
}

/// What the apply step needs beyond the rules' facts.
pub(crate) struct Loaded {
    pub facts: ItemFacts,
    queue: (Option<i64>, Option<i64>),
    decided: (i64, i64),
    /// The validator's calibration gate: None outside the pool.
    pub gate: Option<i64>,
    /// The version of the campaign's protocol in force, as the write read it.
    pub protocol_version: i64,
}

fn outcome(s: &str) -> Result<Outcome> {
    Outcome::parse(s).ok_or_else(|| Error::Internal(format!("stored outcome `{s}`")))
}

/// One item with everything the rules need, its row locked: `:campaign` (whose protocol
/// version in force is read), `:stage`, `:key`, `:validator` (whose calibration gate is
/// read), `:version` (0: the clip's newest). The joins are spelled out (not `item_details`) so that the lock falls on the
/// item's row alone.
pub(crate) const FACTS: crate::store::db::Sql = locked!(
    "SELECT i.id, i.outcome, i.rater1_id, i.rater2_id, i.queue1, i.queue2, i.decided1, i.decided2,
            i.clip_version, i.is_current, i.calibration, i.level, c.clip_key, t.code AS task,
            t.rater1_id AS task_rater1, t.rater2_id AS task_rater2, t.pair_problem, i.parent_item_id,
            p.outcome AS parent_outcome, p.rater1_id AS parent_rater1, p.rater2_id AS parent_rater2,
            (SELECT m.cleared FROM pool_members m
             WHERE m.campaign_id = :campaign AND m.user_id = :validator) AS gate,
            (SELECT k.protocol_version FROM campaigns k WHERE k.id = :campaign) AS protocol_version,
            i.held,
            (SELECT k.blind_key_check FROM campaigns k WHERE k.id = :campaign) AS blind_key_check,
            (SELECT COUNT(*) FROM blind_answers b
             WHERE b.item_id = i.id AND b.validator_id = :validator) AS blind_given
     FROM items i
     JOIN tasks t ON t.id = i.task_id
     JOIN clip_versions v ON v.id = i.clip_version_id
     JOIN clips c ON c.id = v.clip_id
     LEFT JOIN items p ON p.id = i.parent_item_id
     WHERE i.campaign_id = :campaign AND i.stage = :stage AND i.item_key = :key
       AND CASE WHEN :version = 0 THEN i.is_current = 1 ELSE i.clip_version = :version END",
    "i"
);

/// Every decision on an item (`:item`), in order.
pub(crate) const DECISIONS: &str =
    "SELECT id, validator_id, seq, verdict, reasons, note, decided_at, time_spent_ms
     FROM decisions WHERE item_id = :item ORDER BY seq";

/// The text of [`INSERT_DECISION`] (without its `RETURNING id`), also the first part of
/// PostgreSQL's one-statement writes.
macro_rules! insert_decision {
    () => {
        "INSERT INTO decisions (item_id, validator_id, seq, verdict, reasons, note, time_spent_ms,
                                decided_at, recorded_at, origin, campaign_id, stage, time_measure,
                                protocol_version)
         VALUES (:item, :validator, :seq, :verdict, :reasons, :note, :time_spent,
                 :decided_at, :recorded_at, :origin, :campaign, :stage, :time_measure,
                 :protocol_version)"
    };
}

/// A new decision, its values from [`DecisionInsert::args`]; its id by [`Tx::insert_id`].
pub(crate) const INSERT_DECISION: Sql = Sql {
    sqlite: insert_decision!(),
    postgres: concat!(insert_decision!(), " RETURNING id"),
};

/// The pair and the queue's marks, as every verdict's write sets them.
macro_rules! set_marks {
    () => {
        "rater1_id = :rater1, rater2_id = :rater2, decided1 = :decided1, decided2 = :decided2"
    };
}

/// The outcome's fields that a completing verdict sets besides the final decisions.
macro_rules! set_outcome {
    () => {
        "outcome = :outcome, verdict1 = :verdict1, verdict2 = :verdict2,
         reasons1 = :reasons1, reasons2 = :reasons2, completed_at = :completed_at"
    };
}

/// The questions of a retained clip (`:item`) that no pair has reviewed yet.
macro_rules! questions_to_open {
    () => {
        "parent_item_id = :item AND is_current = 1 AND calibration <> 1 AND rater1_id IS NULL
         AND held = 0"
    };
}

/// The pair fixed and the queue's marks ([`ItemWrite::Marks`]).
pub(crate) const UPDATE_MARKS: &str =
    concat!("UPDATE items SET ", set_marks!(), " WHERE id = :item");

/// The pair completes ([`ItemWrite::Complete`]).
pub(crate) const UPDATE_COMPLETE: &str = concat!(
    "UPDATE items SET ",
    set_marks!(),
    ", ",
    set_outcome!(),
    ", final1_id = :final1, final2_id = :final2
     WHERE id = :item AND outcome = 'pending'"
);

/// A retained clip's questions enter the queues of the pair that reviewed it (`:item`
/// the clip's item).
pub(crate) const OPEN_QUESTIONS: &str = concat!(
    "UPDATE items SET queue1 = :rater1, queue2 = :rater2 WHERE ",
    questions_to_open!()
);

/// PostgreSQL: [`INSERT_DECISION`] and [`UPDATE_MARKS`] as one statement.
pub(crate) const WRITE_MARKS: &str = concat!(
    "WITH d AS (",
    insert_decision!(),
    " RETURNING id), u AS (UPDATE items SET ",
    set_marks!(),
    " WHERE id = :item) SELECT 1::BIGINT FROM d"
);

/// PostgreSQL: [`INSERT_DECISION`], [`UPDATE_COMPLETE`] (the new decision's id taken
/// from the insert, `:mine_first` saying whether it is the first final) and, when
/// `:open`, [`OPEN_QUESTIONS`], as one statement: the number of completed items (1, or 0
/// when the item was no longer pending).
pub(crate) const WRITE_COMPLETE: &str = concat!(
    "WITH d AS (",
    insert_decision!(),
    " RETURNING id), u AS (UPDATE items SET ",
    set_marks!(),
    ", ",
    set_outcome!(),
    ",
         final1_id = CASE WHEN :mine_first THEN (SELECT id FROM d) ELSE :partner END,
         final2_id = CASE WHEN :mine_first THEN :partner ELSE (SELECT id FROM d) END
     WHERE id = :item AND outcome = 'pending' RETURNING id),
     o AS (UPDATE items SET queue1 = :rater1, queue2 = :rater2 WHERE :open AND ",
    questions_to_open!(),
    ") SELECT COUNT(*) FROM u"
);

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
            calibration: r.calibration == ItemKind::Calibration.stored(),
            level: gates::stored_level(r.level.as_deref(), key)?,
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
            held: r.held == 1,
            blind: match (r.blind_key_check, r.blind_given) {
                (0, _) => Blind::Off,
                (_, 0) => Blind::Unanswered,
                _ => Blind::Answered,
            },
        };
        Ok(Loaded {
            facts,
            queue: (r.queue1, r.queue2),
            decided: (r.decided1, r.decided2),
            gate: r.gate,
            protocol_version: r.protocol_version,
        })
    }
}

/// Where a verdict is sent: the item named by stage and key (and version), as seen
/// from a validator's queue or from a file of records.
pub(crate) struct Target<'a> {
    pub campaign_id: i64,
    /// The campaign as the caller read it (its protocol, up to a second old: the write
    /// checks by the version in force, `base::protocol_in_force`).
    pub campaign: &'a Campaign,
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

/// Loads the item a verdict is for with everything the rules need, locking its row:
/// one statement.
pub(crate) async fn facts(
    tx: &mut impl Tx,
    target: &Target<'_>,
    validator: i64,
) -> Result<Option<Loaded>> {
    let row: Option<FactsRow> = tx
        .fetch_opt(
            FACTS,
            named! {
                campaign: target.campaign_id,
                stage: target.stage.number(),
                key: target.key,
                validator,
                version: target.version.unwrap_or(0),
            },
        )
        .await?;
    row.map(|r| r.loaded(target.stage, target.key)).transpose()
}

/// Every decision on an item: one statement.
pub(crate) async fn decisions(tx: &mut impl Tx, item: i64) -> Result<Vec<DecisionFact>> {
    tx.fetch::<DecisionRowDb>(sql!(DECISIONS), named! { item })
        .await?
        .into_iter()
        .map(DecisionRowDb::fact)
        .collect()
}

/// The refusal of a validator whose gate is closed: why, in their words.
pub(crate) async fn gate_refusal(
    tx: &mut impl Tx,
    campaign_id: i64,
    validator: &User,
    gate: Option<i64>,
) -> Error {
    match gate {
        None => Error::Forbidden(format!(
            "{} is not in this campaign's validator pool",
            validator.name
        )),
        Some(_) => match gates::calibration_status(tx, campaign_id, validator.id).await {
            Ok(s) => gates::not_cleared(&s),
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
        Ok(Plan::Repeat(d)) => Decided::Answer(OwnDecision::try_from(d).map(|decision| Recorded {
            decision,
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

/// The values of a new decision ([`INSERT_DECISION`]).
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
    pub protocol_version: i64,
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
            protocol_version: loaded.protocol_version,
        }
    }

    /// Its parameters by name, for [`INSERT_DECISION`] and the statements that start
    /// with it.
    pub(crate) fn args(&self) -> Vec<Arg<'a>> {
        named! {
            item: self.item,
            validator: self.validator,
            seq: self.seq,
            verdict: self.verdict,
            reasons: self.reasons,
            note: self.note,
            time_spent: self.time_spent_ms,
            decided_at: self.decided_at,
            recorded_at: self.recorded_at,
            origin: self.origin,
            campaign: self.campaign_id,
            stage: self.stage,
            time_measure: self.time_measure,
            protocol_version: self.protocol_version,
        }
        .to_vec()
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

/// Writes the decision and the item's new state: on SQLite, the insert, then at most
/// one update (and one that opens a retained clip's questions); on PostgreSQL one
/// statement (a data-modifying `WITH`; the queue counters' statement trigger fires once
/// for both updates of `items`).
pub(crate) async fn apply<T: Tx>(
    tx: &mut T,
    d: &DecisionInsert<'_>,
    write: &ItemWrite<'_>,
) -> Result<()> {
    let mut args = d.args();
    if T::DIALECT == Dialect::Postgres {
        match *write {
            ItemWrite::Nothing => {
                tx.insert_id(INSERT_DECISION, &args).await?;
            }
            ItemWrite::Marks { pair, decided, .. } => {
                args.extend_from_slice(named! {
                    rater1: pair.0,
                    rater2: pair.1,
                    decided1: decided.0,
                    decided2: decided.1,
                });
                tx.scalar::<i64>(sql!(WRITE_MARKS), &args).await?;
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
                args.extend_from_slice(named! {
                    rater1: pair.0,
                    rater2: pair.1,
                    decided1: decided.0,
                    decided2: decided.1,
                    outcome,
                    verdict1: verdicts.0,
                    verdict2: verdicts.1,
                    mine_first: finals.mine_is_first,
                    partner: finals.partner,
                    reasons1: reasons.0,
                    reasons2: reasons.1,
                    completed_at,
                    open: open_questions,
                });
                let completed: i64 = tx.scalar(sql!(WRITE_COMPLETE), &args).await?;
                if completed != 1 {
                    return Err(changed_under_lock(item));
                }
            }
        }
        return Ok(());
    }
    let decision = tx.insert_id(INSERT_DECISION, &args).await?;
    match *write {
        ItemWrite::Nothing => {}
        ItemWrite::Marks {
            pair,
            decided,
            item,
        } => {
            tx.exec(
                sql!(UPDATE_MARKS),
                named! {
                    rater1: pair.0,
                    rater2: pair.1,
                    decided1: decided.0,
                    decided2: decided.1,
                    item,
                },
            )
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
            let (final1, final2) = finals.ids(decision);
            let updated = tx
                .exec(
                    sql!(UPDATE_COMPLETE),
                    named! {
                        rater1: pair.0,
                        rater2: pair.1,
                        decided1: decided.0,
                        decided2: decided.1,
                        outcome,
                        verdict1: verdicts.0,
                        verdict2: verdicts.1,
                        final1,
                        final2,
                        reasons1: reasons.0,
                        reasons2: reasons.1,
                        completed_at,
                        item,
                    },
                )
                .await?;
            if updated != 1 {
                return Err(changed_under_lock(item));
            }
            if open_questions {
                open_questions_of(tx, item, pair).await?;
            }
        }
    }
    Ok(())
}

/// A retained clip's questions enter the queues of the pair that reviewed it.
async fn open_questions_of(tx: &mut impl Tx, clip_item: i64, pair: (i64, i64)) -> Result<()> {
    tx.exec(
        sql!(OPEN_QUESTIONS),
        named! { rater1: pair.0, rater2: pair.1, item: clip_item },
    )
    .await?;
    Ok(())
}

/// Stores one verdict and, when it completes the pair, applies the intersection rule:
/// load, load, decide, apply. Runs inside a write, which holds the item's row lock from
/// its first statement on.
pub(crate) async fn record_verdict(
    tx: &mut impl Tx,
    target: &Target<'_>,
    validator: &User,
    req: &VerdictRequest,
    decided_at: i64,
    origin: Origin,
    dedupe: Dedupe,
) -> Result<Recorded> {
    let loaded = facts(tx, target, validator.id)
        .await?
        .ok_or_else(|| target.not_found())?;
    let decisions = if target.path == Path::Queue && loaded.gate != Some(1) {
        Vec::new()
    } else {
        decisions(tx, loaded.facts.id).await?
    };
    let taxonomy = base::protocol_in_force(tx, target.campaign, loaded.protocol_version).await?;
    let input = VerdictInput {
        taxonomy: &taxonomy,
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
            return Err(gate_refusal(tx, target.campaign_id, validator, loaded.gate).await);
        }
        Decided::NotInPair((a, b)) => {
            let (a, b) = (base::user_name(tx, a).await?, base::user_name(tx, b).await?);
            return Err(Error::Forbidden(format!(
                "{} is not in the pair of {} `{}` (it is reviewed by {a} and {b})",
                validator.name,
                target.stage.item_noun(),
                target.key
            )));
        }
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
    let write = ItemWrite::of(&loaded, &record, validator.id);
    apply(tx, &d, &write).await?;
    Ok(recorded(record, decided_at))
}

row! {
    /// The resolution of a split, with the item it is about.
    struct SplitState {
        id: i64,
        outcome: String,
        is_current: i64,
        rater1_id: Option<i64>,
        rater2_id: Option<i64>,
        author_id: Option<i64>,
        verdict: Option<String>,
        note: Option<String>,
    }
}

/// An author's resolution of a split, on the item of `stage` named `key` (locked): the
/// resolution row and the item's new outcome; a retained clip's questions open. Returns
/// false when the same resolution was already stored.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn resolve(
    tx: &mut impl Tx,
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
    let row: SplitState = tx
        .fetch_opt(
            locked!(
                "SELECT i.id, i.outcome, i.is_current, i.rater1_id, i.rater2_id, r.author_id,
                        r.verdict, r.note
                 FROM items i LEFT JOIN resolutions r ON r.item_id = i.id
                 WHERE i.campaign_id = :campaign AND i.stage = :stage AND i.item_key = :key
                   AND i.is_current = 1 AND i.calibration = 0",
                "i"
            ),
            named! { campaign: campaign_id, stage: stage.number(), key },
        )
        .await?
        .ok_or_else(|| {
            Error::NotFound(format!("no {} `{key}` in Stage {stage}", stage.item_noun()))
        })?;
    if row.author_id == Some(author.id)
        && row.verdict.as_deref() == Some(verdict.as_str())
        && row.note.as_deref() == Some(note)
    {
        return Ok(false);
    }
    let new_outcome = resolve_outcome(outcome(&row.outcome)?, verdict).map_err(Error::Conflict)?;
    tx.exec(
        sql!(
            "INSERT INTO resolutions (item_id, author_id, verdict, note, decided_at, recorded_at, origin)
             VALUES (:item, :author, :verdict, :note, :decided_at, :recorded_at, :origin)"
        ),
        named! {
            item: row.id,
            author: author.id,
            verdict: verdict.as_str(),
            note,
            decided_at,
            recorded_at: now_micros(),
            origin: origin.as_str(),
        },
    )
    .await?;
    tx.exec(
        sql!("UPDATE items SET outcome = :outcome WHERE id = :item AND outcome = 'split'"),
        named! { outcome: new_outcome.as_str(), item: row.id },
    )
    .await?;
    if stage == Stage::Clip
        && new_outcome.is_retained()
        && row.is_current == 1
        && let Some(pair) = row.rater1_id.zip(row.rater2_id)
    {
        open_questions_of(tx, row.id, pair).await?;
    }
    Ok(true)
}

row! {
    /// A question's keyed answer and how many options it has (as JSON).
    struct KeyRow {
        answer: i64,
        options: String,
    }
}

/// A validator's answer to a question of their queue before its key is shown (the
/// blind key check, `domain::verdict::check_blind_answer`): four statements (the item's
/// facts, its decisions, its key, the insert), the item's row locked on PostgreSQL.
pub(crate) async fn record_blind_answer(
    tx: &mut impl Tx,
    target: &Target<'_>,
    validator: &User,
    (answer, time_spent_ms): (i64, Option<i64>),
) -> Result<crate::store::review::BlindAnswer> {
    let Some(loaded) = facts(tx, target, validator.id).await? else {
        return Err(target.not_found());
    };
    if loaded.gate != Some(1) {
        return Err(gate_refusal(tx, target.campaign_id, validator, loaded.gate).await);
    }
    let item = loaded.facts.id;
    let stored = decisions(tx, item).await?;
    let key: KeyRow = tx
        .fetch_one(
            sql!(
                "SELECT q.answer, q.options FROM items i JOIN questions q ON q.id = i.question_id
                 WHERE i.id = :item"
            ),
            named! { item },
        )
        .await?;
    let options = serde_json::from_str::<Vec<serde_json::Value>>(&key.options)
        .map_err(|e| Error::fault(format!("stored options of `{}`", target.key), e))?
        .len();
    match crate::domain::verdict::check_blind_answer(
        &loaded.facts,
        &stored,
        validator.id,
        options,
        (answer, time_spent_ms),
    ) {
        Ok(()) => {}
        Err(Refusal::NotInQueue) => return Err(target.not_found()),
        Err(Refusal::Field(e)) => return Err(e.into()),
        Err(Refusal::Conflict(m)) => return Err(Error::Conflict(m)),
        Err(Refusal::NotInPair(_) | Refusal::NoPair(_)) => return Err(target.not_found()),
    }
    let agrees = answer == key.answer;
    tx.exec(
        sql!(
            "INSERT INTO blind_answers (item_id, validator_id, campaign_id, answer, agrees, answered_at, time_spent_ms)
             VALUES (:item, :validator, :campaign, :answer, :agrees, :at, :spent)"
        ),
        named! {
            item,
            validator: validator.id,
            campaign: target.campaign_id,
            answer,
            agrees: i64::from(agrees),
            at: now_micros(),
            spent: time_spent_ms,
        },
    )
    .await?;
    Ok(crate::store::review::BlindAnswer {
        answer,
        key: key.answer,
        agrees,
        time_spent_ms,
    })
}

// Verdicts, queues, the intersection rule and the resolution of splits. (Shared SQL:
// compiled once per backend, see store/mod.rs.)
//
// A verdict is four statements: load the item with everything the rules need (one),
// load its decisions (one), decide (`domain::verdict::decide_verdict`, no database),
// write the decision (one) and the item's new state (one, skipped when nothing about
// the item changes). When a clip is retained, one more statement opens its questions.

use crate::clock::now_micros;
use crate::domain::{Origin, Outcome, Resolution, Stage, Verdict};
use crate::error::{Error, Result};
use crate::store::Lock;
use crate::store::write;
use crate::store::write::review::Target;
use crate::store::accounts::User;
use crate::store::catalog::Campaign;
use crate::store::review::{
    DecisionRowDb, Dedupe, ItemHeader, ItemViewRow, OwnDecision, Path, QueueEntry, QueueListing,
    QueueQuery, QueueStatus,
    BlindAnswer, BlindCheck, Recorded, ResolutionRequest, ResolutionView, SplitItem, SplitSide,
    ValidatorItem,
    VerdictRequest,
};

/// A validator's calibration gate in a campaign (`$1`, `$2`): no row outside the pool,
/// 0 before calibration is passed, 1 after.
const GATE: &str = "SELECT cleared FROM pool_members WHERE campaign_id = $1 AND user_id = $2";

/// A validator's queue (`$1` campaign, `$2` validator, `$3` stage) as rows of one
/// table: each item where the validator is rater 1 or rater 2, with that side's
/// decided flag. Both halves seek the `items_queue1`/`items_queue2` indexes.
macro_rules! queue_rows {
    () => {
        "(SELECT id, task_id, item_key, decided1 AS decided
          FROM items WHERE queue1 = $2 AND campaign_id = $1 AND stage = $3
          UNION ALL
          SELECT id, task_id, item_key, decided2 AS decided
          FROM items WHERE queue2 = $2 AND campaign_id = $1 AND stage = $3) u"
    };
}

/// The filters of a queue's page on one side's columns (`$decided$side`: `decided1`
/// or `decided2`): `$4` a task's id (or 0), `$5` decided 0 or 1 (or -1: both), `$6` an
/// id prefix (or '').
macro_rules! queue_filters {
    ($task:literal, $decided:literal, $side:literal, $key:literal) => {
        concat!(
            "($4 = '' OR ", $task, " = (SELECT id FROM tasks WHERE campaign_id = $1 AND code = $4))
             AND ($5 < 0 OR ", $decided, $side, " = $5)
             AND ($6 = '' OR substr(", $key, ", 1, length($6)) = $6)"
        )
    };
}

/// One side of a queue's page (`$side`: 1 or 2), beside a cursor (`$7` decided, `$8`
/// sort key, `$9` id; `$7` = -1: from the end the order starts at), at most `$10` rows
/// in the queue's order (undecided first, then the sort key, then the id), which is
/// the order of the side's index: the walk stops after `$10` rows.
macro_rules! queue_side {
    ($side:literal, $cmp:literal, $order:literal) => {
        concat!(
            "SELECT * FROM (SELECT id, task_id, item_key, sort_key, qa_type, level, decided", $side, " AS decided
             FROM items
             WHERE queue", $side, " = $2 AND campaign_id = $1 AND stage = $3
               AND ", queue_filters!("task_id", "decided", $side, "item_key"), "
               AND ($7 < 0 OR decided", $side, " ", $cmp, " $7
                    OR (decided", $side, " = $7 AND (sort_key ", $cmp, " $8
                                             OR (sort_key = $8 AND id ", $cmp, " $9))))
             ORDER BY decided", $side, " ", $order, ", sort_key ", $order, ", id ", $order, "
             LIMIT $10) q", $side
        )
    };
}

/// A page of a queue: both sides' pages merged, cut to `$10` rows, and only then the
/// validator's own latest decision joined to its rows.
macro_rules! queue_page {
    ($cmp:literal, $order:literal) => {
        concat!(
            "SELECT p.item_key, p.decided, t.code AS task, p.qa_type, p.level,
                    d.verdict, d.decided_at
             FROM (SELECT * FROM (", queue_side!("1", $cmp, $order), " UNION ALL ",
                   queue_side!("2", $cmp, $order), ") s
                   ORDER BY s.decided ", $order, ", s.sort_key ", $order, ", s.id ", $order, "
                   LIMIT $10) p
             JOIN tasks t ON t.id = p.task_id
             LEFT JOIN decisions d ON d.item_id = p.id AND d.validator_id = $2
                  AND d.seq = (SELECT MAX(seq) FROM decisions e WHERE e.item_id = p.id AND e.validator_id = $2)
             ORDER BY p.decided ", $order, ", p.sort_key ", $order, ", p.id ", $order
        )
    };
}

const QUEUE_PAGE_AFTER: &str = queue_page!(">", "ASC");
const QUEUE_PAGE_BEFORE: &str = queue_page!("<", "DESC");

/// Per task of a queue (in pairing order): its rows, and how many of them the filters
/// keep. One pass over the queue gives the filter's task menu and both counts.
const QUEUE_COUNTS: &str = concat!(
    "SELECT t.code, COUNT(*) AS all_rows,
            COALESCE(SUM(CASE WHEN ", queue_filters!("u.task_id", "u.decided", "", "u.item_key"), " THEN 1 ELSE 0 END), 0) AS matching
     FROM ", queue_rows!(), " JOIN tasks t ON t.id = u.task_id
     GROUP BY t.id, t.code, t.position
     ORDER BY t.position"
);

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

/// A split read back, its two sides' reasons checked against the campaign's protocol.
fn checked_split(campaign: &Campaign, r: SplitRow) -> Result<SplitItem> {
    let s = SplitItem::try_from(r)?;
    for side in [&s.rater1, &s.rater2] {
        campaign
            .taxonomy
            .check_stored(s.stage, &side.reasons)
            .map_err(|m| {
                Error::Internal(format!(
                    "the counted verdict of {} on `{}`: {m}",
                    side.validator, s.item_id
                ))
            })?;
    }
    Ok(s)
}

impl TryFrom<SplitRow> for SplitItem {
    type Error = Error;
    fn try_from(r: SplitRow) -> Result<SplitItem> {
        let key = r.item.item_key.clone();
        let side = |verdict: &str, reasons: &str, note: String, at: i64, time, name: String| {
            Ok::<_, Error>(SplitSide {
                reasons: crate::domain::Reason::split_stored(reasons).map_err(|m| {
                    Error::Internal(format!("the counted verdict of {name} on `{key}`: {m}"))
                })?,
                validator: name,
                verdict: Verdict::parse(verdict).map_err(Error::Internal)?,
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

use crate::store::review::QUEUE;

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
            return Err(write::review::gate_refusal(&mut *c, campaign.id, validator, r.gate).await);
        }
        Ok(QueueStatus {
            stage,
            done: r.done,
            total: r.total,
            next: r.next,
        })
    }

    pub(crate) async fn queue_page(
        &self,
        campaign: &Campaign,
        validator: &User,
        stage: Stage,
        query: &QueueQuery,
    ) -> Result<QueueListing> {
        use crate::domain::paging::{Side, cut};
        let mut c = self.read().await?;
        let gate: Option<i64> = qs(GATE)
            .bind(campaign.id)
            .bind(validator.id)
            .fetch_optional(&mut *c)
            .await?;
        if gate != Some(1) {
            return Err(write::review::gate_refusal(&mut *c, campaign.id, validator, gate).await);
        }
        let (campaign_id, user_id, stage_no) = (campaign.id, validator.id, stage.number());
        let task = query.task.as_deref().unwrap_or("");
        let decided = query.decided.map_or(-1, i64::from);
        let prefix = query.prefix.as_deref().unwrap_or("");
        // The tasks of the queue (for its filter) and how many rows the filters keep.
        #[derive(sqlx::FromRow)]
        struct Count {
            code: String,
            all_rows: i64,
            matching: i64,
        }
        let counts: Vec<Count> = qa(QUEUE_COUNTS)
            .bind(campaign_id)
            .bind(user_id)
            .bind(stage_no)
            .bind(task)
            .bind(decided)
            .bind(prefix)
            .fetch_all(&mut *c)
            .await?;
        let all: i64 = counts.iter().map(|r| r.all_rows).sum();
        let matching: i64 = counts.iter().map(|r| r.matching).sum();
        let tasks: Vec<String> = counts.into_iter().map(|r| r.code).collect();
        // The cursor's row: its place in the order (the decided part as the cursor
        // carries it, then the sort key, then the id).
        let (at_decided, at_sort, at_id) = match &query.cursor {
            // The first page read forward, the last one backward, from either end.
            None => (-1, String::new(), 0),
            Some(cursor) if cursor.is_end() => (-1, String::new(), 0),
            Some(cursor) => {
                let found: Option<(String, i64)> = qa(
                    "SELECT sort_key, id FROM items
                     WHERE campaign_id = $1 AND stage = $3 AND item_key = $4
                       AND (queue1 = $2 OR queue2 = $2)
                     ORDER BY id DESC LIMIT 1",
                )
                .bind(campaign_id)
                .bind(user_id)
                .bind(stage_no)
                .bind(cursor.key.as_str())
                .fetch_optional(&mut *c)
                .await?;
                let Some((sort, id)) = found else {
                    let field = if cursor.side == Side::After { "after" } else { "before" };
                    return Err(Error::field(
                        field,
                        format!("no item `{}` in your Stage {stage} queue", cursor.key),
                    ));
                };
                (i64::from(cursor.decided), sort, id)
            }
        };
        let backward = query.cursor.as_ref().is_some_and(|c| c.side == Side::Before);
        let sql = if backward { QUEUE_PAGE_BEFORE } else { QUEUE_PAGE_AFTER };
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
        let rows: Vec<Row> = qa(sql)
            .bind(campaign_id)
            .bind(user_id)
            .bind(stage_no)
            .bind(task)
            .bind(decided)
            .bind(prefix)
            .bind(at_decided)
            .bind(at_sort)
            .bind(at_id)
            .bind(i64::try_from(query.limit).unwrap_or(i64::MAX).saturating_add(1))
            .fetch_all(&mut *c)
            .await?;
        let read = rows
            .into_iter()
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
            .collect::<Result<Vec<_>>>()?;
        Ok(QueueListing {
            page: cut(
                read,
                query.limit,
                query.cursor.as_ref(),
                usize::try_from(matching).unwrap_or(0),
            ),
            tasks,
            all: usize::try_from(all).unwrap_or(0),
        })
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
            return Err(write::review::gate_refusal(&mut *c, campaign.id, validator, gate).await);
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
        .map(|d| d.fact().and_then(OwnDecision::try_from))
        .collect::<Result<Vec<_>>>()?;
        for d in &my_decisions {
            campaign
                .taxonomy
                .check_stored(stage, &d.reasons)
                .map_err(|m| Error::Internal(format!("change {} of `{key}`: {m}", d.change)))?;
        }
        // The blind key check: the key stays hidden until the validator's own answer
        // (unless a verdict of theirs came before the check was turned on).
        let blind = if stage == Stage::Question && campaign.settings.blind_key_check {
            let given: Option<(i64, i64)> = qa(
                "SELECT b.answer, b.agrees FROM blind_answers b
                 WHERE b.item_id = $1 AND b.validator_id = $2",
            )
            .bind(header.id)
            .bind(validator.id)
            .fetch_optional(&mut *c)
            .await?;
            let key = header.question.as_ref().and_then(|q| q.answer).unwrap_or(0);
            Some(BlindCheck {
                asked: given.is_none()
                    && my_decisions.is_empty()
                    && header.outcome == Outcome::Pending,
                answered: given.map(|(answer, agrees)| BlindAnswer {
                    answer,
                    key,
                    agrees: agrees == 1,
                }),
            })
        } else {
            None
        };
        let mut question = header.question;
        if let (Some(q), Some(b)) = (question.as_mut(), &blind)
            && b.asked
        {
            q.answer = None;
        }
        Ok(ValidatorItem {
            stage,
            item_id: header.key,
            locked: header.outcome != Outcome::Pending,
            clip: header.clip.for_validator(),
            question,
            my_decisions,
            blind,
        })
    }

    /// A validator's verdict from their queue (`write::review::record_verdict`): one
    /// write, its item's row locked on PostgreSQL.
    pub(crate) async fn record_verdict(
        &self,
        campaign: &Campaign,
        validator: &User,
        stage: Stage,
        key: &str,
        req: &VerdictRequest,
        origin: Origin,
    ) -> Result<Recorded> {
        let (campaign, key, req, validator) =
            (campaign.clone(), key.to_string(), req.clone(), validator.clone());
        self.write_tx(Lock::Item, move |tx| {
            let (campaign, key, req, validator) =
                (campaign.clone(), key.clone(), req.clone(), validator.clone());
            Box::pin(async move {
                let target = Target {
                    campaign_id: campaign.id,
                    campaign: &campaign,
                    stage,
                    key: &key,
                    version: None,
                    path: Path::Queue,
                };
                write::review::record_verdict(
                    tx,
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

    pub(crate) async fn record_blind_answer(
        &self,
        campaign: &Campaign,
        validator: &User,
        key: &str,
        answer: i64,
    ) -> Result<crate::store::review::BlindAnswer> {
        let (campaign, key, validator) = (campaign.clone(), key.to_string(), validator.clone());
        self.write_tx(Lock::Item, move |tx| {
            let (campaign, key, validator) = (campaign.clone(), key.clone(), validator.clone());
            Box::pin(async move {
                let target = Target {
                    campaign_id: campaign.id,
                    campaign: &campaign,
                    stage: Stage::Question,
                    key: &key,
                    version: None,
                    path: Path::Queue,
                };
                write::review::record_blind_answer(tx, &target, &validator, answer).await
            })
        })
        .await
    }

    pub(crate) async fn blind_records(
        &self,
        campaign: &Campaign,
    ) -> Result<Vec<crate::domain::records::BlindRecord>> {
        #[derive(sqlx::FromRow)]
        struct Row {
            item_key: String,
            clip_key: String,
            qa_type: String,
            level: String,
            name: String,
            answer: i64,
            keyed: i64,
            outcome: String,
            answered_at: i64,
        }
        let rows = qa::<Row>(
            "SELECT i.item_key, c.clip_key, q.qa_type, q.level, u.name, b.answer, q.answer AS keyed,
                    i.outcome, b.answered_at
             FROM blind_answers b JOIN items i ON i.id = b.item_id
             JOIN questions q ON q.id = i.question_id
             JOIN clip_versions v ON v.id = i.clip_version_id JOIN clips c ON c.id = v.clip_id
             JOIN users u ON u.id = b.validator_id
             WHERE b.campaign_id = $1 AND i.is_current = 1
             ORDER BY i.item_key, u.name",
        )
        .bind(campaign.id)
        .fetch_all(&mut *self.read().await?)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| crate::domain::records::BlindRecord {
                question_id: r.item_key,
                clip_id: r.clip_key,
                qa_type: r.qa_type,
                level: r.level,
                validator: r.name,
                answer: r.answer,
                key: r.keyed,
                outcome: r.outcome,
                answered_at: r.answered_at,
            })
            .collect())
    }

    pub(crate) async fn known_records(
        &self,
        campaign: &Campaign,
    ) -> Result<Vec<crate::domain::records::KnownRecord>> {
        #[derive(sqlx::FromRow)]
        struct Row {
            stage: i64,
            item_key: String,
            clip_key: String,
            task: String,
            name: String,
            verdict: String,
            reasons: String,
            k_verdict: String,
            k_reasons: String,
            decided_at: i64,
            known_from: Option<String>,
        }
        let rows = qa::<Row>(
            "SELECT i.stage, i.item_key, c.clip_key, t.code AS task, u.name, d.verdict, d.reasons,
                    k.verdict AS k_verdict, k.reasons AS k_reasons, d.decided_at,
                    sc.clip_key AS known_from
             FROM decisions d JOIN items i ON i.id = d.item_id
             JOIN calibration_keys k ON k.item_id = i.id
             JOIN tasks t ON t.id = i.task_id
             JOIN clip_versions v ON v.id = i.clip_version_id JOIN clips c ON c.id = v.clip_id
             LEFT JOIN clip_versions sv ON sv.id = v.copy_of LEFT JOIN clips sc ON sc.id = sv.clip_id
             JOIN users u ON u.id = d.validator_id
             WHERE d.campaign_id = $1 AND i.calibration = 2 AND i.is_current = 1
               AND d.seq = (SELECT MAX(e.seq) FROM decisions e
                            WHERE e.item_id = d.item_id AND e.validator_id = d.validator_id)
             ORDER BY d.decided_at, d.id",
        )
        .bind(campaign.id)
        .fetch_all(&mut *self.read().await?)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| crate::domain::records::KnownRecord {
                stage: r.stage,
                item_id: r.item_key,
                clip_id: r.clip_key,
                task: r.task,
                validator: r.name,
                verdict: r.verdict,
                reasons: r.reasons,
                known_verdict: r.k_verdict,
                known_reasons: r.k_reasons,
                decided_at: r.decided_at,
                known_from: r.known_from,
            })
            .collect())
    }

    pub(crate) async fn splits(
        &self,
        campaign: &Campaign,
        stage: Stage,
        all: bool,
    ) -> Result<Vec<SplitItem>> {
        qa::<SplitRow>(
            "SELECT * FROM split_details
             WHERE campaign_id = $1 AND stage = $2 AND is_current = 1 AND calibration = 0
               AND (outcome = 'split' OR ($3 = 1 AND outcome IN ('split_accepted', 'split_rejected')))
             ORDER BY sort_key",
        )
        .bind(campaign.id)
        .bind(stage.number())
        .bind(i64::from(all))
        .fetch_all(&mut *self.read().await?)
        .await?
        .into_iter()
        .map(|r| checked_split(campaign, r))
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
               AND calibration = 0 AND outcome IN ('split', 'split_accepted', 'split_rejected')",
        )
        .bind(campaign.id)
        .bind(stage.number())
        .bind(key)
        .fetch_optional(&mut *self.read().await?)
        .await?;
        row.map(|r| checked_split(campaign, r))
            .transpose()?
            .ok_or_else(|| {
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
        self.write_tx(Lock::Item, move |tx| {
            let (key, req, author) = (key.clone(), req.clone(), author.clone());
            Box::pin(async move {
                write::review::resolve(
                    tx,
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

//! The review's entry points on [`Store`]: queues and their pages, an item as its
//! validator sees it, verdicts, blind answers, splits and their resolution. The
//! writes they run are in the parent module.

use super::Target;
use crate::clock::now_micros;
use crate::domain::paging::{Side, cut};
use crate::domain::records::{BlindRecord, KnownRecord};
use crate::domain::{Origin, Outcome, Resolution, Stage, Verdict};
use crate::error::{Error, Result};
use crate::store::accounts::User;
use crate::store::catalog::Campaign;
use crate::store::db::{self, FromRow, Row, Tx, named, row, sql};
use crate::store::review::{
    BlindAnswer, BlindCheck, DecisionRowDb, Dedupe, ItemHeader, ItemViewRow, OwnDecision, Path,
    QUEUE, QueueEntry, QueueListing, QueueQuery, QueueStatus, Recorded, ResolutionRequest,
    ResolutionView, SplitItem, SplitSide, ValidatorItem, VerdictRequest,
};
use crate::store::{Lock, Store};

/// A validator's calibration gate in a campaign: no row outside the pool, 0 before
/// calibration is passed, 1 after.
const GATE: &str =
    "SELECT cleared FROM pool_members WHERE campaign_id = :campaign AND user_id = :validator";

/// A validator's queue (`:campaign`, `:validator`, `:stage`) as rows of one
/// table: each item where the validator is rater 1 or rater 2, with that side's
/// decided flag. Both halves seek the `items_queue1`/`items_queue2` indexes.
macro_rules! queue_rows {
    () => {
        "(SELECT id, task_id, item_key, decided1 AS decided
          FROM items WHERE queue1 = :validator AND campaign_id = :campaign AND stage = :stage
          UNION ALL
          SELECT id, task_id, item_key, decided2 AS decided
          FROM items WHERE queue2 = :validator AND campaign_id = :campaign AND stage = :stage) u"
    };
}

/// The filters of a queue's page on one side's columns (`$decided$side`: `decided1`
/// or `decided2`): `:task` a task's code (or ''), `:decided` 0 or 1 (or -1: both),
/// `:prefix` an id prefix (or '').
macro_rules! queue_filters {
    ($task:literal, $decided:literal, $side:literal, $key:literal) => {
        concat!(
            "(:task = '' OR ",
            $task,
            " = (SELECT id FROM tasks WHERE campaign_id = :campaign AND code = :task))
             AND (:decided < 0 OR ",
            $decided,
            $side,
            " = :decided)
             AND (:prefix = '' OR substr(",
            $key,
            ", 1, length(:prefix)) = :prefix)"
        )
    };
}

/// One side of a queue's page (`$side`: 1 or 2), beside a cursor (`:at_decided`,
/// `:at_sort` its sort key, `:at_id`; `:at_decided` = -1: from the end the order starts
/// at), at most `:limit` rows in the queue's order (undecided first, then the sort key, then the id), which is
/// the order of the side's index: the walk stops after `:limit` rows.
macro_rules! queue_side {
    ($side:literal, $cmp:literal, $order:literal) => {
        concat!(
            "SELECT * FROM (SELECT id, task_id, item_key, sort_key, qa_type, level, decided",
            $side,
            " AS decided
             FROM items
             WHERE queue",
            $side,
            " = :validator AND campaign_id = :campaign AND stage = :stage
               AND ",
            queue_filters!("task_id", "decided", $side, "item_key"),
            "
               AND (:at_decided < 0 OR decided",
            $side,
            " ",
            $cmp,
            " :at_decided
                    OR (decided",
            $side,
            " = :at_decided AND (sort_key ",
            $cmp,
            " :at_sort
                                             OR (sort_key = :at_sort AND id ",
            $cmp,
            " :at_id))))
             ORDER BY decided",
            $side,
            " ",
            $order,
            ", sort_key ",
            $order,
            ", id ",
            $order,
            "
             LIMIT :limit) q",
            $side
        )
    };
}

/// A page of a queue: both sides' pages merged, cut to `:limit` rows, and only then the
/// validator's own latest decision joined to its rows.
macro_rules! queue_page {
    ($cmp:literal, $order:literal) => {
        concat!(
            "SELECT p.item_key, p.decided, t.code AS task, p.qa_type, p.level,
                    d.verdict, d.decided_at
             FROM (SELECT * FROM (", queue_side!("1", $cmp, $order), " UNION ALL ",
                   queue_side!("2", $cmp, $order), ") s
                   ORDER BY s.decided ", $order, ", s.sort_key ", $order, ", s.id ", $order, "
                   LIMIT :limit) p
             JOIN tasks t ON t.id = p.task_id
             LEFT JOIN decisions d ON d.item_id = p.id AND d.validator_id = :validator
                  AND d.seq = (SELECT MAX(seq) FROM decisions e WHERE e.item_id = p.id AND e.validator_id = :validator)
             ORDER BY p.decided ", $order, ", p.sort_key ", $order, ", p.id ", $order
        )
    };
}

/// One side of [`NEXT_FILTERED`]: its first undecided item under the filters.
macro_rules! next_side {
    ($side:literal) => {
        concat!(
            "SELECT * FROM (SELECT item_key, sort_key, id FROM items
             WHERE queue",
            $side,
            " = :validator AND campaign_id = :campaign AND stage = :stage AND decided",
            $side,
            " = 0 AND ",
            queue_filters!("task_id", "decided", $side, "item_key"),
            "
             ORDER BY sort_key, id LIMIT 1) n",
            $side
        )
    };
}

/// The next undecided item of a validator's queue under a page's task and id filters
/// (`:decided` is 0): the first of each side's, in the queue's order.
const NEXT_FILTERED: &str = concat!(
    "SELECT item_key FROM (",
    next_side!("1"),
    " UNION ALL ",
    next_side!("2"),
    ") s ORDER BY s.sort_key, s.id LIMIT 1"
);

const QUEUE_PAGE_AFTER: &str = queue_page!(">", "ASC");
const QUEUE_PAGE_BEFORE: &str = queue_page!("<", "DESC");

/// Per task of a queue (in pairing order): its rows, and how many of them the filters
/// keep. One pass over the queue gives the filter's task menu and both counts.
const QUEUE_COUNTS: &str = concat!(
    "SELECT t.code, COUNT(*) AS all_rows,
            COALESCE(SUM(CASE WHEN ",
    queue_filters!("u.task_id", "u.decided", "", "u.item_key"),
    " THEN 1 ELSE 0 END), 0) AS matching
     FROM ",
    queue_rows!(),
    " JOIN tasks t ON t.id = u.task_id
     GROUP BY t.id, t.code, t.position
     ORDER BY t.position"
);

/// Both counted verdicts of a split, with names, and its resolution.
struct SplitRow {
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

impl FromRow for SplitRow {
    fn from_row(r: &impl Row) -> Result<Self> {
        Ok(SplitRow {
            item: ItemViewRow::from_row(r)?,
            r1_verdict: r.get("r1_verdict")?,
            r1_reasons: r.get("r1_reasons")?,
            r1_note: r.get("r1_note")?,
            r1_decided_at: r.get("r1_decided_at")?,
            r1_time: r.get("r1_time")?,
            r1_name: r.get("r1_name")?,
            r2_verdict: r.get("r2_verdict")?,
            r2_reasons: r.get("r2_reasons")?,
            r2_note: r.get("r2_note")?,
            r2_decided_at: r.get("r2_decided_at")?,
            r2_time: r.get("r2_time")?,
            r2_name: r.get("r2_name")?,
            res_verdict: r.get("res_verdict")?,
            res_note: r.get("res_note")?,
            res_decided_at: r.get("res_decided_at")?,
            res_author: r.get("res_author")?,
        })
    }
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
                blind_answer: None,
            })
        };
        let rater1 = side(
            &r.r1_verdict,
            &r.r1_reasons,
            r.r1_note,
            r.r1_decided_at,
            r.r1_time,
            r.r1_name,
        )?;
        let rater2 = side(
            &r.r2_verdict,
            &r.r2_reasons,
            r.r2_note,
            r.r2_decided_at,
            r.r2_time,
            r.r2_name,
        )?;
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

row! {
    /// A validator's queue in a stage: their gate, done and total, and the next item.
    struct QueueRow {
        gate: Option<i64>,
        total: i64,
        done: i64,
        next: Option<String>,
    }
}

impl Store {
    /// Whether a validator is in a campaign's pool.
    pub async fn in_pool(&self, campaign: &Campaign, validator: &User) -> Result<bool> {
        let (campaign, validator) = (campaign.id, validator.id);
        let found: Option<i64> = read_tx!(self, |c| {
            c.scalar_opt(sql!(GATE), named! { campaign, validator })
                .await
        })?;
        Ok(found.is_some())
    }

    /// The plan the database chooses for a validator's next item (the statement behind
    /// `queue`), one line per step: for checking that it seeks an index.
    pub async fn explain_next_item(
        &self,
        campaign: &Campaign,
        validator: &User,
        stage: Stage,
    ) -> Result<Vec<String>> {
        let numbered = db::numbered(QUEUE);
        let binds: Vec<i64> = numbered
            .names
            .iter()
            .map(|n| match *n {
                "campaign" => Ok(campaign.id),
                "validator" => Ok(validator.id),
                "stage" => Ok(stage.number()),
                other => Err(Error::Internal(format!("QUEUE names `:{other}`"))),
            })
            .collect::<Result<_>>()?;
        self.explain(&numbered.text, &binds).await
    }

    /// The validator's progress in a stage and the next item to decide: one statement.
    pub async fn queue(
        &self,
        campaign: &Campaign,
        validator: &User,
        stage: Stage,
    ) -> Result<QueueStatus> {
        read_tx!(self, |c| {
            let r: QueueRow = c
                .fetch_one(
                    sql!(QUEUE),
                    named! { campaign: campaign.id, validator: validator.id, stage: stage.number() },
                )
                .await?;
            if r.gate != Some(1) {
                return Err(super::gate_refusal(c, campaign.id, validator, r.gate).await);
            }
            Ok(QueueStatus {
                stage,
                done: r.done,
                total: r.total,
                next: r.next,
            })
        })
    }

    /// The next item to decide in the validator's queue among those of `task` (a code, or
    /// empty: every task) whose id starts with `prefix` (or empty): what the review
    /// follows while the queue's page is filtered. `None` when the filtered list is
    /// done. (The gate is the caller's: a page drawn, a verdict stored.)
    pub async fn next_filtered(
        &self,
        campaign: &Campaign,
        validator: &User,
        stage: Stage,
        (task, prefix): (&str, &str),
    ) -> Result<Option<String>> {
        read_tx!(self, |c| {
            c.scalar_opt(
                sql!(NEXT_FILTERED),
                named! {
                    campaign: campaign.id,
                    validator: validator.id,
                    stage: stage.number(),
                    task,
                    decided: 0_i64,
                    prefix,
                },
            )
            .await
        })
    }

    /// A page of the validator's queue in a stage, in review order (undecided first),
    /// under the query's filters, with how many rows they keep: three statements, and
    /// one more to find the row a later page starts beside.
    pub async fn queue_page(
        &self,
        campaign: &Campaign,
        validator: &User,
        stage: Stage,
        query: &QueueQuery,
    ) -> Result<QueueListing> {
        read_tx!(self, long, |c| {
            // A page by number: the same query from that page's cursor.
            let jumped;
            let query = match query.page {
                Some(n) => {
                    jumped = QueueQuery {
                        cursor: pager::page_cursor(c, campaign, validator, stage, query, n).await?,
                        ..query.clone()
                    };
                    &jumped
                }
                None => query,
            };
            let mut listing = queue_page(c, campaign, validator, stage, query).await?;
            if listing.page.offset.is_none()
                && let Some(cursor) = &query.cursor
            {
                let before =
                    pager::rows_before(c, campaign, validator, stage, query, cursor).await?;
                listing.page.offset = Some(match cursor.side {
                    Side::After => before,
                    Side::Before => before.saturating_sub(listing.page.rows.len()),
                });
            }
            Ok::<_, Error>(listing)
        })
    }

    /// One item of the validator's queue. Anything outside their queue is "not found".
    pub async fn validator_item(
        &self,
        campaign: &Campaign,
        validator: &User,
        stage: Stage,
        key: &str,
    ) -> Result<ValidatorItem> {
        read_tx!(self, |c| validator_item(c, campaign, validator, stage, key)
            .await)
    }

    /// Records a validator's verdict on an item of their queue (`record_verdict`): one
    /// write, its item's row locked on PostgreSQL.
    pub async fn record_verdict(
        &self,
        campaign: &Campaign,
        validator: &User,
        stage: Stage,
        key: &str,
        req: &VerdictRequest,
        origin: Origin,
    ) -> Result<Recorded> {
        write_tx!(self, Lock::Item, (campaign, key, req, validator), |tx| {
            let target = Target {
                campaign_id: campaign.id,
                campaign,
                stage,
                key,
                version: None,
                path: Path::Queue,
            };
            super::record_verdict(
                tx,
                &target,
                validator,
                req,
                now_micros(),
                origin,
                Dedupe::SameAsLatest,
            )
            .await
        })
    }

    /// Records a validator's answer to a question of their Stage 2 queue before its key
    /// is shown (the blind key check), with the time spent on it, and answers with the
    /// key.
    pub async fn record_blind_answer(
        &self,
        campaign: &Campaign,
        validator: &User,
        key: &str,
        answer: (i64, Option<i64>),
    ) -> Result<BlindAnswer> {
        write_tx!(self, Lock::Item, (campaign, key, validator), |tx| {
            let target = Target {
                campaign_id: campaign.id,
                campaign,
                stage: Stage::Question,
                key,
                version: None,
                path: Path::Queue,
            };
            super::record_blind_answer(tx, &target, validator, answer).await
        })
    }

    /// Every blind answer to a question of the campaign's current versions, beside its
    /// key, by question id and validator.
    pub async fn blind_records(&self, campaign: &Campaign) -> Result<Vec<BlindRecord>> {
        row! {
            struct Found {
                item_key: String,
                clip_key: String,
                qa_type: String,
                level: String,
                name: String,
                answer: i64,
                keyed: i64,
                outcome: String,
                answered_at: i64,
                time_spent_ms: Option<i64>,
                options: String,
            }
        }
        let campaign = campaign.id;
        let rows: Vec<Found> = read_tx!(self, long, |c| {
            c.fetch(
                sql!(
                    "SELECT i.item_key, c.clip_key, q.qa_type, q.level, u.name, b.answer,
                            q.answer AS keyed, i.outcome, b.answered_at, b.time_spent_ms,
                            q.options
                     FROM blind_answers b JOIN items i ON i.id = b.item_id
                     JOIN questions q ON q.id = i.question_id
                     JOIN clip_versions v ON v.id = i.clip_version_id
                     JOIN clips c ON c.id = v.clip_id
                     JOIN users u ON u.id = b.validator_id
                     WHERE b.campaign_id = :campaign AND i.is_current = 1
                     ORDER BY i.item_key, u.name"
                ),
                named! { campaign },
            )
            .await
        })?;
        rows.into_iter()
            .map(|r| {
                let options = serde_json::from_str(&r.options)
                    .map_err(|e| Error::fault(format!("stored options of `{}`", r.item_key), e))?;
                Ok(BlindRecord {
                    options,
                    question_id: r.item_key,
                    clip_id: r.clip_key,
                    qa_type: r.qa_type,
                    level: r.level,
                    validator: r.name,
                    answer: r.answer,
                    key: r.keyed,
                    outcome: r.outcome,
                    answered_at: r.answered_at,
                    time_spent_ms: r.time_spent_ms,
                })
            })
            .collect()
    }

    /// Every validator's latest verdict on each known item of the live queue (current
    /// versions, with a known verdict), beside it, in the order they were given.
    pub async fn known_records(&self, campaign: &Campaign) -> Result<Vec<KnownRecord>> {
        row! {
            struct Found {
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
        }
        let campaign = campaign.id;
        let rows: Vec<Found> = read_tx!(self, long, |c| {
            c.fetch(
                sql!(
                    "SELECT i.stage, i.item_key, c.clip_key, t.code AS task, u.name, d.verdict,
                            d.reasons, k.verdict AS k_verdict, k.reasons AS k_reasons,
                            d.decided_at, sc.clip_key AS known_from
                     FROM decisions d JOIN items i ON i.id = d.item_id
                     JOIN calibration_keys k ON k.item_id = i.id
                     JOIN tasks t ON t.id = i.task_id
                     JOIN clip_versions v ON v.id = i.clip_version_id
                     JOIN clips c ON c.id = v.clip_id
                     LEFT JOIN clip_versions sv ON sv.id = v.copy_of
                     LEFT JOIN clips sc ON sc.id = sv.clip_id
                     JOIN users u ON u.id = d.validator_id
                     WHERE d.campaign_id = :campaign AND i.calibration = 2 AND i.is_current = 1
                       AND d.seq = (SELECT MAX(e.seq) FROM decisions e
                                    WHERE e.item_id = d.item_id
                                      AND e.validator_id = d.validator_id)
                     ORDER BY d.decided_at, d.id"
                ),
                named! { campaign },
            )
            .await
        })?;
        Ok(rows
            .into_iter()
            .map(|r| KnownRecord {
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

    /// The splits of a stage; with `all`, resolved ones too.
    pub async fn splits(
        &self,
        campaign: &Campaign,
        stage: Stage,
        all: bool,
    ) -> Result<Vec<SplitItem>> {
        let (id, stage, all) = (campaign.id, stage.number(), i64::from(all));
        let rows: Vec<SplitRow> = read_tx!(self, long, |c| {
            c.fetch(
                sql!(
                    "SELECT * FROM split_details
                     WHERE campaign_id = :campaign AND stage = :stage AND is_current = 1
                       AND calibration = 0
                       AND (outcome = 'split'
                            OR (:all = 1 AND outcome IN ('split_accepted', 'split_rejected')))
                     ORDER BY sort_key"
                ),
                named! { campaign: id, stage, all },
            )
            .await
        })?;
        rows.into_iter()
            .map(|r| checked_split(campaign, r))
            .collect()
    }

    /// One split (resolved or not) of the newest version.
    pub async fn split_item(
        &self,
        campaign: &Campaign,
        stage: Stage,
        key: &str,
    ) -> Result<SplitItem> {
        self.reviewed_item(campaign, stage, key, true).await
    }

    /// One item of the newest version that both of its pair decided, with both sides
    /// (`splits_only`: a split, resolved or not).
    pub async fn reviewed_item(
        &self,
        campaign: &Campaign,
        stage: Stage,
        key: &str,
        splits_only: bool,
    ) -> Result<SplitItem> {
        let (id, number, any) = (campaign.id, stage.number(), i64::from(!splits_only));
        let (row, blind): (Option<SplitRow>, Vec<(String, i64)>) = read_tx!(self, |c| {
            let row = c
                .fetch_opt(
                    sql!(
                        "SELECT * FROM split_details
                         WHERE campaign_id = :campaign AND stage = :stage AND item_key = :key
                           AND is_current = 1 AND calibration = 0
                           AND (:any = 1 OR outcome IN ('split', 'split_accepted', 'split_rejected'))"
                    ),
                    named! { campaign: id, stage: number, key, any },
                )
                .await?;
            // The validators' blind answers (the blind key check), for the author to see.
            let blind = if row.is_some() && stage == Stage::Question {
                c.fetch(
                    sql!(
                        "SELECT u.name, b.answer FROM blind_answers b
                         JOIN items i ON i.id = b.item_id JOIN users u ON u.id = b.validator_id
                         WHERE i.campaign_id = :campaign AND i.stage = 2 AND i.item_key = :key
                           AND i.is_current = 1"
                    ),
                    named! { campaign: id, key },
                )
                .await?
            } else {
                Vec::new()
            };
            Ok::<_, Error>((row, blind))
        })?;
        let mut split = row
            .map(|r| checked_split(campaign, r))
            .transpose()?
            .ok_or_else(|| {
                Error::NotFound(format!(
                    "no {} {} `{key}` in Stage {stage}",
                    if splits_only { "split" } else { "reviewed" },
                    stage.item_noun()
                ))
            })?;
        for side in [&mut split.rater1, &mut split.rater2] {
            side.blind_answer = blind
                .iter()
                .find(|(name, _)| *name == side.validator)
                .map(|(_, a)| *a);
        }
        Ok(split)
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
        let campaign_id = campaign.id;
        write_tx!(self, Lock::Item, (key, req, author), |tx| {
            super::resolve(
                tx,
                campaign_id,
                stage,
                key,
                author,
                req.verdict,
                &req.note,
                now_micros(),
                origin,
            )
            .await
        })
    }
}

async fn queue_page(
    c: &mut impl Tx,
    campaign: &Campaign,
    validator: &User,
    stage: Stage,
    query: &QueueQuery,
) -> Result<QueueListing> {
    let (campaign_id, user_id, stage_no) = (campaign.id, validator.id, stage.number());
    let gate: Option<i64> = c
        .scalar_opt(
            sql!(GATE),
            named! { campaign: campaign_id, validator: user_id },
        )
        .await?;
    if gate != Some(1) {
        return Err(super::gate_refusal(c, campaign_id, validator, gate).await);
    }
    let task = query.task.as_deref().unwrap_or("");
    let decided = query.decided.map_or(-1, i64::from);
    let prefix = query.prefix.as_deref().unwrap_or("");
    // The tasks of the queue (for its filter) and how many rows the filters keep.
    let counts: Vec<(String, i64, i64)> = c
        .fetch(
            sql!(QUEUE_COUNTS),
            named! {
                campaign: campaign_id, validator: user_id, stage: stage_no, task, decided, prefix,
            },
        )
        .await?;
    let all: i64 = counts.iter().map(|r| r.1).sum();
    let matching: i64 = counts.iter().map(|r| r.2).sum();
    let tasks: Vec<String> = counts.into_iter().map(|r| r.0).collect();
    // The cursor's row: its place in the order (the decided part as the cursor
    // carries it, then the sort key, then the id).
    let (at_decided, at_sort, at_id) = match &query.cursor {
        // The first page read forward, the last one backward, from either end.
        None => (-1, String::new(), 0),
        Some(cursor) if cursor.is_end() => (-1, String::new(), 0),
        Some(cursor) => {
            let found = pager::cursor_place(c, campaign, validator, stage, &cursor.key).await?;
            let Some((sort, id)) = found else {
                let field = if cursor.side == Side::After {
                    "after"
                } else {
                    "before"
                };
                return Err(Error::field(
                    field,
                    format!("no item `{}` in your Stage {stage} queue", cursor.key),
                ));
            };
            (i64::from(cursor.decided), sort, id)
        }
    };
    let backward = query
        .cursor
        .as_ref()
        .is_some_and(|c| c.side == Side::Before);
    let page = if backward {
        QUEUE_PAGE_BEFORE
    } else {
        QUEUE_PAGE_AFTER
    };
    row! {
        struct Found {
            item_key: String,
            decided: i64,
            task: String,
            qa_type: Option<String>,
            level: Option<String>,
            verdict: Option<String>,
            decided_at: Option<i64>,
        }
    }
    let rows: Vec<Found> = c
        .fetch(
            sql!(page),
            named! {
                campaign: campaign_id,
                validator: user_id,
                stage: stage_no,
                task,
                decided,
                prefix,
                at_decided,
                at_sort: &at_sort,
                at_id,
                limit: i64::try_from(query.limit).unwrap_or(i64::MAX).saturating_add(1),
            },
        )
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

// After the queue's macros above, which it uses.
mod pager;

async fn validator_item(
    c: &mut impl Tx,
    campaign: &Campaign,
    validator: &User,
    stage: Stage,
    key: &str,
) -> Result<ValidatorItem> {
    struct Found {
        item: ItemViewRow,
        queue1: Option<i64>,
        queue2: Option<i64>,
        gate: Option<i64>,
    }
    impl FromRow for Found {
        fn from_row(r: &impl Row) -> Result<Self> {
            Ok(Found {
                item: ItemViewRow::from_row(r)?,
                queue1: r.get("queue1")?,
                queue2: r.get("queue2")?,
                gate: r.get("gate")?,
            })
        }
    }
    let row: Option<Found> = c
        .fetch_opt(
            sql!(
                "SELECT i.*,
                        (SELECT m.cleared FROM pool_members m
                         WHERE m.campaign_id = :campaign AND m.user_id = :validator) AS gate
                 FROM item_details i
                 WHERE i.campaign_id = :campaign AND i.stage = :stage AND i.item_key = :key
                   AND i.is_current = 1"
            ),
            named! { campaign: campaign.id, stage: stage.number(), key, validator: validator.id },
        )
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
            c.scalar_opt(
                sql!(GATE),
                named! { campaign: campaign.id, validator: validator.id },
            )
            .await?
        }
    };
    if gate != Some(1) {
        return Err(super::gate_refusal(c, campaign.id, validator, gate).await);
    }
    let row = row.ok_or_else(not_found)?;
    if row.queue1 != Some(validator.id) && row.queue2 != Some(validator.id) {
        return Err(not_found());
    }
    let header = ItemHeader::try_from(row.item)?;
    let mine: Vec<DecisionRowDb> = c
        .fetch(
            sql!(
                "SELECT id, validator_id, seq, verdict, reasons, note, decided_at, time_spent_ms
                 FROM decisions WHERE item_id = :item AND validator_id = :validator ORDER BY seq"
            ),
            named! { item: header.id, validator: validator.id },
        )
        .await?;
    let my_decisions = mine
        .into_iter()
        .map(|d| d.fact().and_then(OwnDecision::try_from))
        .collect::<Result<Vec<_>>>()?;
    for d in &my_decisions {
        campaign
            .taxonomy
            .check_stored(stage, &d.reasons)
            .map_err(|m| Error::fault(format!("change {} of `{key}`", d.change), m))?;
    }
    // The blind key check: the key stays hidden until the validator's own answer
    // (unless a verdict of theirs came before the check was turned on).
    let blind = if stage == Stage::Question && campaign.settings.blind_key_check {
        let given: Option<(i64, i64, Option<i64>)> = c
            .fetch_opt(
                sql!(
                    "SELECT b.answer, b.agrees, b.time_spent_ms FROM blind_answers b
                     WHERE b.item_id = :item AND b.validator_id = :validator"
                ),
                named! { item: header.id, validator: validator.id },
            )
            .await?;
        let key = header.question.as_ref().and_then(|q| q.answer).unwrap_or(0);
        Some(BlindCheck {
            asked: given.is_none() && my_decisions.is_empty() && header.outcome == Outcome::Pending,
            answered: given.map(|(answer, agrees, time_spent_ms)| BlindAnswer {
                answer,
                key,
                agrees: agrees == 1,
                time_spent_ms,
            }),
        })
    } else {
        None
    };
    let mut question = header.question;
    if let (Some(q), Some(b)) = (question.as_mut(), &blind)
        && b.asked
    {
        // The linked direction's key would tell this one's.
        q.answer = None;
        if let Some(l) = q.linked.as_mut() {
            l.answer = None;
        }
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

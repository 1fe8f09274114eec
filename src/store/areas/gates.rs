//! What structural writes recompute in the write that changes it: each task's pair in
//! force (from the pool and the admin's overrides) with the queues of the items no one
//! has started, and each pool member's calibration gate (from the campaign's rules, its
//! calibration items and the member's rounds; the rules themselves are
//! `domain::calibration`'s).

use crate::domain::calibration::{
    CalItem, CalibrationState, CalibrationStatus, History, KnownVerdict, Rules, status,
};
use crate::domain::pairing::{Member, Pairing, default_pair, least_open_work};
use crate::domain::{Reason, Stage, Verdict};
use crate::error::{Error, Result};
use crate::store::db::{FromRow, Row, Tx, named, row, sql};
use std::collections::{HashMap, HashSet};

/// A task's pair: (rater 1, rater 2, why there is none).
pub(crate) type PairInForce = (Option<i64>, Option<i64>, Option<String>);

row! {
    struct TaskPair {
        id: i64,
        code: String,
        position: i64,
        pair_rater1: Option<i64>,
        pair_rater2: Option<i64>,
        rater1_id: Option<i64>,
        rater2_id: Option<i64>,
        pair_problem: Option<String>,
    }
}

/// Why a task has no pair in a campaign that pairs per clip.
pub(crate) const PER_CLIP: &str =
    "pairs are chosen per clip, by least open work (the protocol's `pairing`)";

/// How the campaign's protocol in force pairs reviewers, read in the caller's write.
pub(crate) async fn pairing_of(tx: &mut impl Tx, campaign_id: i64) -> Result<Pairing> {
    #[derive(serde::Deserialize)]
    struct Stored {
        #[serde(default)]
        pairing: Pairing,
    }
    let json: String = tx
        .scalar(
            sql!("SELECT taxonomy FROM campaigns WHERE id = :campaign"),
            named! { campaign: campaign_id },
        )
        .await?;
    serde_json::from_str::<Stored>(&json)
        .map(|s| s.pairing)
        .map_err(|e| Error::fault(format!("campaign #{campaign_id}'s taxonomy"), e))
}

/// Each task's pair in force now and as the pool (with `joining`, a validator about to
/// join at an index) makes it: (task id, code, now, then). In a campaign that pairs per
/// clip no task has a pair (`PER_CLIP`, or why the pool cannot make one).
pub(crate) async fn planned_pairs(
    tx: &mut impl Tx,
    campaign_id: i64,
    joining: Option<(i64, i64)>,
) -> Result<Vec<(i64, String, PairInForce, PairInForce)>> {
    let pairing = pairing_of(tx, campaign_id).await?;
    pairs_under(tx, campaign_id, pairing, joining).await
}

/// `planned_pairs` under the campaign's pairing rule, read by the caller.
async fn pairs_under(
    tx: &mut impl Tx,
    campaign_id: i64,
    pairing: Pairing,
    joining: Option<(i64, i64)>,
) -> Result<Vec<(i64, String, PairInForce, PairInForce)>> {
    let per_clip = pairing == Pairing::LeastOpenWork;
    let mut pool: Vec<(i64, i64)> = tx
        .fetch(
            sql!(
                "SELECT pool_index, user_id FROM pool_members WHERE campaign_id = :campaign
                 ORDER BY pool_index"
            ),
            named! { campaign: campaign_id },
        )
        .await?;
    if let Some(j) = joining {
        pool.push(j);
        pool.sort_unstable();
    }
    let tasks: Vec<TaskPair> = tx
        .fetch(
            sql!(
                "SELECT id, code, position, pair_rater1, pair_rater2, rater1_id, rater2_id, pair_problem
                 FROM tasks WHERE campaign_id = :campaign ORDER BY position"
            ),
            named! { campaign: campaign_id },
        )
        .await?;
    Ok(tasks
        .into_iter()
        .map(|t| {
            let pair = match (t.pair_rater1, t.pair_rater2) {
                _ if per_clip => default_pair(0, &pool).and(Err(PER_CLIP.to_string())),
                (Some(a), Some(b)) => Ok((a, b)),
                _ => default_pair(usize::try_from(t.position).unwrap_or(0), &pool),
            };
            let then = match pair {
                Ok((a, b)) => (Some(a), Some(b), None),
                Err(p) => (None, None, Some(p)),
            };
            (
                t.id,
                t.code,
                (t.rater1_id, t.rater2_id, t.pair_problem),
                then,
            )
        })
        .collect())
}

/// Recomputes the pair in force for every task of a campaign (the admin's override,
/// else the default pair from the pool), then moves the campaign's open items that no
/// one has started to their task's pair: the queues hold what the pairs say. Called in
/// the write that changes the pool or an override, so the tasks and the queues never
/// disagree with them.
pub(crate) async fn refresh_pairs(tx: &mut impl Tx, campaign_id: i64) -> Result<()> {
    let pairing = pairing_of(tx, campaign_id).await?;
    let mut changed = false;
    for (id, _, now, then) in pairs_under(tx, campaign_id, pairing, None).await? {
        if now == then {
            continue;
        }
        changed = true;
        tx.exec(
            sql!(
                "UPDATE tasks SET rater1_id = :rater1, rater2_id = :rater2, pair_problem = :problem
                 WHERE id = :task"
            ),
            named! { rater1: then.0, rater2: then.1, problem: then.2.as_deref(), task: id },
        )
        .await?;
    }
    if changed {
        // Items that someone started keep their pair; a question goes with its clip.
        tx.exec(sql!(MOVE_UNSTARTED), named! { campaign: campaign_id })
            .await?;
    }
    // Per clip: the clips waiting for a pair (the pool had fewer than two validators,
    // or the campaign paired by task until now) get one.
    assign_under(tx, campaign_id, pairing).await.map(drop)
}

/// The items that wait for a pair in a campaign that pairs per clip: current, open,
/// not started, in no queue and not held, each of no reviewed clip (a clip's own
/// item, a question without clip review, or a question of a clip retained by sample).
macro_rules! needs_pair {
    () => {
        " FROM items i LEFT JOIN items p ON p.id = i.parent_item_id
     WHERE i.campaign_id = :campaign AND i.is_current = 1 AND i.calibration <> 1
       AND i.held = 0 AND i.outcome = 'pending' AND i.rater1_id IS NULL AND i.queue1 IS NULL
       AND (p.id IS NULL OR (p.rater1_id IS NULL AND p.outcome = 'by_sample'))"
    };
}

/// Each clip version with items waiting for a pair, in review order, with how many, and
/// the pair its other items already have (a question drawn for a sample after its
/// clip's other questions were paired): a clip's items share one pair.
const NEEDS_PAIR: &str = concat!(
    "SELECT i.clip_version_id, COUNT(*) AS n, MIN(i.sort_key) AS first,
            (SELECT MIN(o.rater1_id) FROM items o
             WHERE o.clip_version_id = i.clip_version_id AND o.calibration <> 1) AS had1,
            (SELECT MIN(o.rater2_id) FROM items o
             WHERE o.clip_version_id = i.clip_version_id AND o.calibration <> 1) AS had2",
    needs_pair!(),
    " GROUP BY i.clip_version_id ORDER BY first"
);

row! {
    struct Waiting {
        clip_version_id: i64,
        n: i64,
        had1: Option<i64>,
        had2: Option<i64>,
    }
}

/// Gives a clip version's waiting items their pair, fixed (as a first verdict fixes it).
const GIVE_PAIR: &str = concat!(
    "UPDATE items SET rater1_id = :rater1, rater2_id = :rater2, queue1 = :rater1,
                      queue2 = :rater2
     WHERE id IN (SELECT i.id",
    needs_pair!(),
    " AND i.clip_version_id = :version)"
);

/// The pool with each validator's open work (items in their queues without their
/// verdict), in pool order; a disabled account takes no new work.
pub(crate) async fn open_work(tx: &mut impl Tx, campaign_id: i64) -> Result<Vec<Member>> {
    let rows: Vec<(i64, i64, i64)> = tx
        .fetch(
            sql!(
                "SELECT p.pool_index, p.user_id,
                        CAST(COALESCE((SELECT SUM(q.total - q.done) FROM queue_counts q
                                       WHERE q.campaign_id = p.campaign_id
                                         AND q.user_id = p.user_id), 0) AS BIGINT)
                 FROM pool_members p JOIN users u ON u.id = p.user_id
                 WHERE p.campaign_id = :campaign AND u.disabled_at IS NULL
                 ORDER BY p.pool_index"
            ),
            named! { campaign: campaign_id },
        )
        .await?;
    Ok(rows
        .into_iter()
        .map(|(index, id, open)| Member { index, id, open })
        .collect())
}

/// In a campaign that pairs per clip, gives every clip whose items wait for a pair the
/// two validators with the least open work, clip by clip in review order; nothing in a
/// campaign that pairs by task, or while the pool has fewer than two validators who
/// can sign in. Returns the clips paired.
pub(crate) async fn assign_pairs(tx: &mut impl Tx, campaign_id: i64) -> Result<u64> {
    let pairing = pairing_of(tx, campaign_id).await?;
    assign_under(tx, campaign_id, pairing).await
}

/// `assign_pairs` under the campaign's pairing rule, read by the caller.
async fn assign_under(tx: &mut impl Tx, campaign_id: i64, pairing: Pairing) -> Result<u64> {
    if pairing != Pairing::LeastOpenWork {
        return Ok(0);
    }
    let mut pool = open_work(tx, campaign_id).await?;
    if pool.len() < 2 {
        return Ok(0);
    }
    let waiting: Vec<Waiting> = tx
        .fetch(sql!(NEEDS_PAIR), named! { campaign: campaign_id })
        .await?;
    let mut paired = 0;
    for w in waiting {
        let (version, n) = (w.clip_version_id, w.n);
        let pair = match w.had1.zip(w.had2) {
            Some((a, b)) => {
                for m in pool.iter_mut().filter(|m| m.id == a || m.id == b) {
                    m.open = m.open.saturating_add(n);
                }
                Some((a, b))
            }
            None => least_open_work(&mut pool, n),
        };
        let Some((rater1, rater2)) = pair else {
            break;
        };
        tx.exec(
            sql!(GIVE_PAIR),
            named! { rater1, rater2, campaign: campaign_id, version },
        )
        .await?;
        paired += 1;
    }
    Ok(paired)
}

/// Moves the open items no one has started to their task's pair in force (the items
/// that `pool_change_preview` counts).
pub(crate) const MOVE_UNSTARTED: &str =
    "UPDATE items SET queue1 = t.rater1_id, queue2 = t.rater2_id
   FROM tasks t
   WHERE t.id = items.task_id AND items.campaign_id = :campaign AND items.is_current = 1
     AND items.calibration <> 1 AND items.rater1_id IS NULL AND items.held = 0
     AND (items.stage = 1 OR items.parent_item_id IS NULL)
     AND (items.queue1 IS DISTINCT FROM t.rater1_id OR items.queue2 IS DISTINCT FROM t.rater2_id)";

/// The campaign's calibration rules.
pub(crate) async fn rules(tx: &mut impl Tx, campaign_id: i64) -> Result<Rules> {
    let (threshold, min_items): (f64, i64) = tx
        .fetch_one(
            sql!(
                "SELECT calibration_threshold, calibration_min_items FROM campaigns
                 WHERE id = :campaign"
            ),
            named! { campaign: campaign_id },
        )
        .await?;
    Ok(Rules {
        threshold,
        min_items,
    })
}

/// The columns of a calibration item's known verdict (`calibration_keys` as `k`), under
/// the names [`KeyRow`] reads.
macro_rules! key_columns {
    () => {
        "k.verdict AS k_verdict, k.reasons AS k_reasons, k.note AS k_note,
         k.flaw_unit AS k_flaw_unit, k.flaw_from AS k_flaw_from, k.flaw_to AS k_flaw_to"
    };
}
pub(crate) use key_columns;

row! {
    /// A calibration item's known verdict as stored (the columns of `key_columns!`).
    pub(crate) struct KeyRow {
        k_verdict: String,
        k_reasons: String,
        k_note: String,
        k_flaw_unit: Option<String>,
        k_flaw_from: Option<i64>,
        k_flaw_to: Option<i64>,
    }
}

impl KeyRow {
    /// The known verdict of the calibration item `item` (named in an error).
    pub(crate) fn known(self, item: &str) -> Result<KnownVerdict> {
        Ok(KnownVerdict {
            verdict: Verdict::parse(&self.k_verdict).map_err(Error::Internal)?,
            reasons: Reason::split_stored(&self.k_reasons).map_err(|m| {
                Error::Internal(format!(
                    "the known verdict of calibration item `{item}`: {m}"
                ))
            })?,
            note: self.k_note,
            flaw: crate::domain::video::Flaw::from_columns(
                self.k_flaw_unit.as_deref(),
                self.k_flaw_from,
                self.k_flaw_to,
            ),
        })
    }
}

struct CalItemRow {
    id: i64,
    stage: i64,
    item_key: String,
    level: Option<String>,
    key: KeyRow,
}

impl FromRow for CalItemRow {
    fn from_row(r: &impl Row) -> Result<Self> {
        Ok(CalItemRow {
            id: r.get("id")?,
            stage: r.get("stage")?,
            item_key: r.get("item_key")?,
            level: r.get("level")?,
            key: KeyRow::from_row(r)?,
        })
    }
}

/// The calibration items of a campaign in the order they are shown (clips, then
/// questions), with their known verdicts.
pub(crate) async fn calibration_items(tx: &mut impl Tx, campaign_id: i64) -> Result<Vec<CalItem>> {
    let rows: Vec<CalItemRow> = tx
        .fetch(
            sql!(concat!(
                "SELECT i.id, i.stage, i.item_key, i.level, ",
                key_columns!(),
                " FROM items i
                 JOIN calibration_keys k ON k.item_id = i.id
                 JOIN clip_versions v ON v.id = i.clip_version_id
                 JOIN clips c ON c.id = v.clip_id
                 LEFT JOIN questions q ON q.id = i.question_id
                 WHERE i.campaign_id = :campaign AND i.calibration = 1 AND i.is_current = 1
                 ORDER BY i.stage, c.clip_key, q.position"
            )),
            named! { campaign: campaign_id },
        )
        .await?;
    rows.into_iter()
        .map(|r| {
            Ok(CalItem {
                id: r.id,
                stage: Stage::from_number(r.stage)
                    .ok_or_else(|| Error::Internal(format!("stored stage {}", r.stage)))?,
                level: stored_level(r.level.as_deref(), &r.item_key)?,
                known: r.key.known(&r.item_key)?,
                key: r.item_key,
            })
        })
        .collect()
}

/// Every validator's history in a campaign (or one validator's): two statements, each
/// a seek on its table's key when one validator is asked for (a verdict's write reads
/// only its validator's, however many others there are).
pub(crate) async fn histories(
    tx: &mut impl Tx,
    campaign_id: i64,
    user: Option<i64>,
) -> Result<HashMap<i64, History>> {
    let mut out: HashMap<i64, History> = HashMap::new();
    type RoundRow = (
        i64,
        i64,
        Option<i64>,
        Option<String>,
        Option<String>,
        Option<i64>,
    );
    let rounds: Vec<RoundRow> = match user {
        Some(user) => {
            tx.fetch(
                sql!(
                    "SELECT user_id, round, passed_at, items, reopened, lifted_at
                     FROM calibration_rounds
                     WHERE campaign_id = :campaign AND user_id = :user ORDER BY round"
                ),
                named! { campaign: campaign_id, user },
            )
            .await?
        }
        None => {
            tx.fetch(
                sql!(
                    "SELECT user_id, round, passed_at, items, reopened, lifted_at
                     FROM calibration_rounds
                     WHERE campaign_id = :campaign ORDER BY user_id, round"
                ),
                named! { campaign: campaign_id },
            )
            .await?
        }
    };
    for (u, round, passed, items, reopened, lifted_at) in rounds {
        let h = out.entry(u).or_default();
        h.rounds.push((round, passed.is_some()));
        if let Some(why) = reopened.filter(|_| lifted_at.is_none()) {
            h.reopened = Some((round, why));
        }
        if let Some(items) = items.filter(|i| !i.is_empty()) {
            let ids = items
                .split(',')
                .map(|id| {
                    id.parse::<i64>()
                        .map_err(|_| Error::Internal(format!("stored round items `{items}`")))
                })
                .collect::<Result<HashSet<i64>>>()?;
            h.drawn.insert(round, ids);
        }
    }
    let decisions: Vec<(i64, i64, i64, i64)> = match user {
        Some(user) => {
            tx.fetch(
                sql!(
                    "SELECT validator_id, round, item_id, agrees FROM calibration_decisions
                     WHERE campaign_id = :campaign AND validator_id = :user"
                ),
                named! { campaign: campaign_id, user },
            )
            .await?
        }
        None => {
            tx.fetch(
                sql!(
                    "SELECT validator_id, round, item_id, agrees FROM calibration_decisions
                     WHERE campaign_id = :campaign"
                ),
                named! { campaign: campaign_id },
            )
            .await?
        }
    };
    for (u, round, item, agrees) in decisions {
        out.entry(u)
            .or_default()
            .decisions
            .push((round, item, agrees == 1));
    }
    Ok(out)
}

/// What a validator's calibration is computed from: the campaign's rules, its
/// calibration items, and the validators' histories (every one's with `None`).
pub(crate) async fn calibration_facts(
    tx: &mut impl Tx,
    campaign_id: i64,
    user: Option<i64>,
) -> Result<(Rules, Vec<CalItem>, HashMap<i64, History>)> {
    Ok((
        rules(tx, campaign_id).await?,
        calibration_items(tx, campaign_id).await?,
        histories(tx, campaign_id, user).await?,
    ))
}

/// One validator's calibration status, the rules read now.
pub(crate) async fn calibration_status(
    tx: &mut impl Tx,
    campaign_id: i64,
    user_id: i64,
) -> Result<CalibrationStatus> {
    let (rules, items, histories) = calibration_facts(tx, campaign_id, Some(user_id)).await?;
    Ok(status(&items, rules, histories.get(&user_id), user_id))
}

/// Why a validator's main queue is not open.
pub(crate) fn not_cleared(s: &CalibrationStatus) -> Error {
    if s.paused.is_some() {
        // Which items were known is not said to the validator.
        return Error::Forbidden(match s.state {
            CalibrationState::InProgress => format!(
                "your review is paused: checks on your recent verdicts caught fewer defects than the threshold asks; pass calibration round {} ({} of {} decided) or ask an admin to open it again",
                s.round, s.decided, s.required
            ),
            _ => "your review is paused: checks on your recent verdicts caught fewer defects than the threshold asks; an admin can open it again".into(),
        });
    }
    Error::Forbidden(match s.state {
        CalibrationState::Failed => format!(
            "calibration was not passed in round {} ({} of {} agreed); an admin can start another round",
            s.round, s.agreed, s.decided
        ),
        _ => format!(
            "finish calibration first: {} of {} calibration items decided",
            s.decided, s.required
        ),
    })
}

/// Recomputes every pool member's gate in a campaign (after new calibration items or
/// new rules): open when the campaign has no calibration items or the member passed.
pub(crate) async fn refresh_gates(tx: &mut impl Tx, campaign_id: i64) -> Result<()> {
    let (rules, items, histories) = calibration_facts(tx, campaign_id, None).await?;
    let members: Vec<(i64, i64)> = tx
        .fetch(
            sql!("SELECT user_id, cleared FROM pool_members WHERE campaign_id = :campaign"),
            named! { campaign: campaign_id },
        )
        .await?;
    for (user, cleared) in members {
        let open = i64::from(status(&items, rules, histories.get(&user), user).open());
        if open != cleared {
            tx.exec(
                sql!(
                    "UPDATE pool_members SET cleared = :open
                     WHERE campaign_id = :campaign AND user_id = :user"
                ),
                named! { open, campaign: campaign_id, user },
            )
            .await?;
        }
    }
    Ok(())
}

/// A stored question's level (none for a clip); one that is not a level is an error
/// naming the item, never a question without a level.
pub(crate) fn stored_level(
    level: Option<&str>,
    item: &str,
) -> Result<Option<crate::domain::Level>> {
    level
        .map(|l| {
            if l.trim().is_empty() {
                Err(Error::Internal(format!(
                    "the stored level of item `{item}` is empty"
                )))
            } else {
                Ok(crate::domain::Level::new(l))
            }
        })
        .transpose()
}

row! {
    /// A known clip, for `place_known`: its Stage 1 item, or (without clip review) its
    /// questions, all known, as one.
    struct KnownClip {
        stage: i64,
        version: i64,
        task_id: i64,
        held: i64,
        started: i64,
    }
}

/// The known clips of a campaign, by stage and task in import order: a known clip's
/// Stage 1 item, or, where clips are not reviewed (questions with no clip item), a clip
/// version all of whose questions are known. A real clip's known question is not one:
/// it is served with its clip. Only the versions that hold a known item are grouped (by
/// `items_version`), not every item of the campaign. A copy of a resolved clip
/// (`clip_versions.copy_of`, `areas::known`) is not one either: the admin chose it, and
/// its pair is fixed to validators who did not review its source.
const KNOWN_CLIPS: &str = "SELECT stage, clip_version_id AS version, task_id, MAX(held) AS held,
        MAX(CASE WHEN decided1 = 1 OR decided2 = 1 OR outcome <> 'pending' THEN 1 ELSE 0 END) AS started
   FROM items
   WHERE campaign_id = :campaign AND is_current = 1 AND parent_item_id IS NULL
     AND clip_version_id IN (SELECT k.clip_version_id FROM items k
                             JOIN clip_versions v ON v.id = k.clip_version_id
                             WHERE k.campaign_id = :campaign AND k.calibration = 2 AND k.is_current = 1
                               AND v.copy_of IS NULL)
   GROUP BY stage, task_id, clip_version_id
   HAVING MIN(calibration) = 2 AND MAX(calibration) = 2
   ORDER BY stage, task_id, MIN(id)";

/// Real clips per stage and task, counted as `KNOWN_CLIPS` counts known ones.
const REAL_CLIPS: &str = "SELECT stage, task_id, COUNT(DISTINCT clip_version_id) FROM items
   WHERE campaign_id = :campaign AND is_current = 1 AND parent_item_id IS NULL AND calibration = 0
   GROUP BY stage, task_id";

/// Keeps the known clips served in each task at the campaign's `known_rate` (a share of
/// the task's real clips; 0: every known clip), chosen by
/// `domain::import::known_to_serve`: one beyond it waits in reserve (held, in no queue,
/// its pair cleared) until the real clips grow; one released goes to its task's pair (or,
/// paired per clip, to the two with the least open work). A known clip anyone decided
/// stays served. A known clip is its Stage 1 item, or without clip review its questions
/// together. Run by the writes that change what it depends on (an import, the settings),
/// in their transaction.
pub(crate) async fn place_known(tx: &mut impl Tx, campaign_id: i64) -> Result<()> {
    let known: Vec<KnownClip> = tx
        .fetch(sql!(KNOWN_CLIPS), named! { campaign: campaign_id })
        .await?;
    if known.is_empty() {
        return Ok(());
    }
    let rate: f64 = tx
        .scalar(
            sql!("SELECT known_rate FROM campaigns WHERE id = :campaign"),
            named! { campaign: campaign_id },
        )
        .await?;
    let real: HashMap<(i64, i64), i64> = tx
        .fetch::<(i64, i64, i64)>(sql!(REAL_CLIPS), named! { campaign: campaign_id })
        .await?
        .into_iter()
        .map(|(stage, task, n)| ((stage, task), n))
        .collect();
    let mut changed = false;
    for task in known.chunk_by(|a, b| (a.stage, a.task_id) == (b.stage, b.task_id)) {
        let key = (task[0].stage, task[0].task_id);
        let n = usize::try_from(real.get(&key).copied().unwrap_or(0)).unwrap_or(0);
        let now: Vec<(i64, bool, bool)> = task
            .iter()
            .map(|k| (k.version, k.held == 0, k.started == 1))
            .collect();
        for ((version, serve), k) in crate::domain::import::known_to_serve(rate, n, &now)
            .into_iter()
            .zip(task)
        {
            let stage = k.stage;
            if serve && k.held == 1 {
                tx.exec(
                    sql!(
                        "UPDATE items SET held = 0,
                                queue1 = (SELECT t.rater1_id FROM tasks t WHERE t.id = items.task_id),
                                queue2 = (SELECT t.rater2_id FROM tasks t WHERE t.id = items.task_id)
                         WHERE clip_version_id = :version AND stage = :stage
                           AND calibration = 2 AND is_current = 1"
                    ),
                    named! { version, stage },
                )
                .await?;
                changed = true;
            } else if !serve && k.held == 0 {
                tx.exec(
                    sql!(
                        "UPDATE items SET held = 1, queue1 = NULL, queue2 = NULL,
                                          rater1_id = NULL, rater2_id = NULL
                         WHERE clip_version_id = :version AND stage = :stage
                           AND calibration = 2 AND is_current = 1
                           AND decided1 = 0 AND decided2 = 0 AND outcome = 'pending'"
                    ),
                    named! { version, stage },
                )
                .await?;
            }
        }
    }
    if changed {
        assign_pairs(tx, campaign_id).await?;
    }
    Ok(())
}

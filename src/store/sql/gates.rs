// What structural writes recompute in the write that changes it: each task's pair in
// force (from the pool and the admin's overrides) with the queues of the items no one
// has started, and each pool member's calibration gate (from the campaign's rules, its
// calibration items and the member's rounds). (Shared SQL: compiled once per backend,
// see store/mod.rs.)

use crate::domain::pairing::default_pair;
use crate::domain::{Reason, Stage, Verdict};
use crate::error::{Error, Result};
use crate::store::calibration::{CalibrationState, CalibrationStatus, KnownVerdict};
use std::collections::{HashMap, HashSet};

/// A task's pair in force now and as the pool (with `joining`, a validator about to
/// join at an index) makes it: (task id, code, now, then), each as (rater 1, rater 2,
/// problem).
pub(crate) type PairInForce = (Option<i64>, Option<i64>, Option<String>);

pub(crate) async fn planned_pairs_in(
    c: &mut Conn,
    campaign_id: i64,
    joining: Option<(i64, i64)>,
) -> Result<Vec<(i64, String, PairInForce, PairInForce)>> {
    let mut pool: Vec<(i64, i64)> = qa(
        "SELECT pool_index, user_id FROM pool_members WHERE campaign_id = $1 ORDER BY pool_index",
    )
    .bind(campaign_id)
    .fetch_all(&mut *c)
    .await?;
    if let Some(j) = joining {
        pool.push(j);
        pool.sort_unstable();
    }
    #[derive(sqlx::FromRow)]
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
    let tasks: Vec<TaskPair> = qa(
        "SELECT id, code, position, pair_rater1, pair_rater2, rater1_id, rater2_id, pair_problem
         FROM tasks WHERE campaign_id = $1 ORDER BY position",
    )
    .bind(campaign_id)
    .fetch_all(&mut *c)
    .await?;
    Ok(tasks
        .into_iter()
        .map(|t| {
            let pair = match (t.pair_rater1, t.pair_rater2) {
                (Some(a), Some(b)) => Ok((a, b)),
                _ => default_pair(usize::try_from(t.position).unwrap_or(0), &pool),
            };
            let then = match pair {
                Ok((a, b)) => (Some(a), Some(b), None),
                Err(p) => (None, None, Some(p)),
            };
            (t.id, t.code, (t.rater1_id, t.rater2_id, t.pair_problem), then)
        })
        .collect())
}

/// Recomputes the pair in force for every task of a campaign (the admin's override,
/// else the default pair from the pool), then moves the campaign's open items that no
/// one has started to their task's pair: the queues hold what the pairs say. Called in
/// the write that changes the pool or an override, so the tasks and the queues never
/// disagree with them.
pub(crate) async fn refresh_pairs_in(c: &mut Conn, campaign_id: i64) -> Result<()> {
    let mut changed = false;
    for (id, _, now, then) in planned_pairs_in(c, campaign_id, None).await? {
        if now == then {
            continue;
        }
        changed = true;
        q("UPDATE tasks SET rater1_id = $1, rater2_id = $2, pair_problem = $3 WHERE id = $4")
            .bind(then.0)
            .bind(then.1)
            .bind(then.2)
            .bind(id)
            .execute(&mut *c)
            .await?;
    }
    if changed {
        // Items that someone started keep their pair; a question goes with its clip.
        q(MOVE_UNSTARTED).bind(campaign_id).execute(&mut *c).await?;
    }
    Ok(())
}

/// Moves the open items no one has started to their task's pair in force (the items
/// that `pool_change_preview` counts).
const MOVE_UNSTARTED: &str = "UPDATE items SET queue1 = t.rater1_id, queue2 = t.rater2_id
   FROM tasks t
   WHERE t.id = items.task_id AND items.campaign_id = $1 AND items.is_current = 1
     AND items.calibration = 0 AND items.rater1_id IS NULL
     AND (items.stage = 1 OR items.parent_item_id IS NULL)
     AND (items.queue1 IS DISTINCT FROM t.rater1_id OR items.queue2 IS DISTINCT FROM t.rater2_id)";

/// The campaign's calibration rules.
#[derive(Debug, Clone, Copy, sqlx::FromRow)]
pub(crate) struct Rules {
    pub(crate) calibration_threshold: f64,
    pub(crate) calibration_min_items: i64,
}

pub(crate) async fn rules_in(c: &mut Conn, campaign_id: i64) -> Result<Rules> {
    Ok(qa::<Rules>(
        "SELECT calibration_threshold, calibration_min_items FROM campaigns WHERE id = $1",
    )
    .bind(campaign_id)
    .fetch_one(&mut *c)
    .await?)
}

/// A calibration item with its known verdict.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct CalItem {
    pub(crate) id: i64,
    pub(crate) stage: i64,
    pub(crate) item_key: String,
    pub(crate) k_verdict: String,
    pub(crate) k_reasons: String,
    pub(crate) k_note: String,
}

impl CalItem {
    pub(crate) fn stage(&self) -> Result<Stage> {
        Stage::from_number(self.stage).ok_or_else(|| Error::Internal("stored stage".into()))
    }

    pub(crate) fn known(&self) -> Result<KnownVerdict> {
        Ok(KnownVerdict {
            verdict: Verdict::parse(&self.k_verdict).map_err(Error::Internal)?,
            reasons: Reason::split_stored(&self.k_reasons),
            note: self.k_note.clone(),
        })
    }
}

/// The calibration items of a campaign in the order they are shown: clips, then
/// questions.
pub(crate) async fn items_in(c: &mut Conn, campaign_id: i64) -> Result<Vec<CalItem>> {
    Ok(qa::<CalItem>(
        "SELECT i.id, i.stage, i.item_key, k.verdict AS k_verdict, k.reasons AS k_reasons, k.note AS k_note
         FROM items i
         JOIN calibration_keys k ON k.item_id = i.id
         JOIN clip_versions v ON v.id = i.clip_version_id
         JOIN clips c ON c.id = v.clip_id
         LEFT JOIN questions q ON q.id = i.question_id
         WHERE i.campaign_id = $1 AND i.calibration = 1 AND i.is_current = 1
         ORDER BY i.stage, c.clip_key, q.position",
    )
    .bind(campaign_id)
    .fetch_all(&mut *c)
    .await?)
}

/// One validator's rounds and the verdicts of their current round.
#[derive(Default)]
pub(crate) struct History {
    /// (round, passed)
    pub(crate) rounds: Vec<(i64, bool)>,
    /// The items each round drew, once it started (rounds from before: none).
    pub(crate) drawn: HashMap<i64, HashSet<i64>>,
    /// (round, item, agrees)
    pub(crate) decisions: Vec<(i64, i64, bool)>,
}

/// Every validator's history in a campaign (or one validator's): two statements.
pub(crate) async fn histories_in(
    c: &mut Conn,
    campaign_id: i64,
    user: Option<i64>,
) -> Result<HashMap<i64, History>> {
    let mut out: HashMap<i64, History> = HashMap::new();
    let rounds: Vec<(i64, i64, Option<i64>, Option<String>)> = qa(
        "SELECT user_id, round, passed_at, items FROM calibration_rounds
         WHERE campaign_id = $1 AND ($2 = 0 OR user_id = $2) ORDER BY user_id, round",
    )
    .bind(campaign_id)
    .bind(user.unwrap_or(0))
    .fetch_all(&mut *c)
    .await?;
    for (u, round, passed, items) in rounds {
        let h = out.entry(u).or_default();
        h.rounds.push((round, passed.is_some()));
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
    let decisions: Vec<(i64, i64, i64, i64)> = qa(
        "SELECT validator_id, round, item_id, agrees FROM calibration_decisions
         WHERE campaign_id = $1 AND ($2 = 0 OR validator_id = $2)",
    )
    .bind(campaign_id)
    .bind(user.unwrap_or(0))
    .fetch_all(&mut *c)
    .await?;
    for (u, round, item, agrees) in decisions {
        out.entry(u).or_default().decisions.push((round, item, agrees == 1));
    }
    Ok(out)
}

/// The items of a validator's round, in the pool's order: those it drew when it started
/// (stored); before that, the whole pool when it holds no more than a round needs
/// (`calibration_min_items`), otherwise that many, drawn anew each round: first the items they decided in the fewest earlier rounds, ties
/// broken by a draw seeded by (validator, round), so round 2 does not repeat round 1
/// while the pool has items they have not seen.
pub(crate) fn round_items<'a>(
    items: &'a [CalItem],
    size: usize,
    h: &History,
    user: i64,
    round: i64,
) -> Vec<&'a CalItem> {
    if let Some(drawn) = h.drawn.get(&round) {
        let kept: Vec<&CalItem> = items.iter().filter(|it| drawn.contains(&it.id)).collect();
        // A round whose items have all left the set (replaced versions) draws anew.
        if !kept.is_empty() {
            return kept;
        }
    }
    if items.len() <= size {
        return items.iter().collect();
    }
    let mut seen: HashMap<i64, u32> = HashMap::new();
    let mut counted: HashSet<(i64, i64)> = HashSet::new();
    for (r, item, _) in &h.decisions {
        if *r < round && counted.insert((*r, *item)) {
            *seen.entry(*item).or_default() += 1;
        }
    }
    let seed = (user as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (round as u64);
    let mut ranked: Vec<(u32, u64, usize)> = items
        .iter()
        .enumerate()
        .map(|(i, it)| {
            let draw = crate::rng::SplitMix64::new(seed ^ (it.id as u64).rotate_left(32)).next_u64();
            (seen.get(&it.id).copied().unwrap_or(0), draw, i)
        })
        .collect();
    ranked.sort_unstable();
    let mut chosen: Vec<usize> = ranked.into_iter().take(size).map(|r| r.2).collect();
    chosen.sort_unstable();
    chosen.into_iter().map(|i| &items[i]).collect()
}

/// A validator's calibration status from the items, the rules and their history.
pub(crate) fn status_from(
    items: &[CalItem],
    rules: Rules,
    h: Option<&History>,
    user: i64,
) -> Result<CalibrationStatus> {
    let pool = i64::try_from(items.len()).unwrap_or(i64::MAX);
    let size = usize::try_from(rules.calibration_min_items.max(1)).unwrap_or(usize::MAX);
    let mut status = CalibrationStatus {
        state: CalibrationState::NotRequired,
        round: 0,
        decided: 0,
        agreed: 0,
        total: pool,
        pool,
        required: rules.calibration_min_items.min(pool),
        threshold: rules.calibration_threshold,
        next: None,
    };
    if pool == 0 {
        return Ok(status);
    }
    let empty = History::default();
    let h = h.unwrap_or(&empty);
    status.round = h.rounds.last().map_or(1, |r| r.0);
    let passed = h.rounds.iter().any(|r| r.1);
    let mine = round_items(items, size, h, user, status.round);
    status.total = i64::try_from(mine.len()).unwrap_or(i64::MAX);
    status.required = status.total;
    let in_round: HashSet<i64> = mine.iter().map(|it| it.id).collect();
    let mut decided_items = HashSet::new();
    for (round, item, agrees) in &h.decisions {
        if *round == status.round && in_round.contains(item) {
            decided_items.insert(*item);
            status.agreed += i64::from(*agrees);
        }
    }
    status.decided = i64::try_from(decided_items.len()).unwrap_or(i64::MAX);
    let reached = status.decided >= status.required
        && status.agreed as f64 >= rules.calibration_threshold * status.decided as f64 - 1e-9;
    let undecided = mine.iter().find(|it| !decided_items.contains(&it.id));
    status.state = if passed || reached {
        CalibrationState::Passed
    } else if undecided.is_none() {
        CalibrationState::Failed
    } else {
        CalibrationState::InProgress
    };
    if status.state == CalibrationState::InProgress
        && let Some(it) = undecided
    {
        status.next = Some((it.stage()?, it.item_key.clone()));
    }
    Ok(status)
}

/// The items of round `round` as stored when it starts: their ids joined by commas.
pub(crate) fn drawn_ids(items: &[CalItem], rules: Rules, h: &History, user: i64, round: i64) -> String {
    let size = usize::try_from(rules.calibration_min_items.max(1)).unwrap_or(usize::MAX);
    round_items(items, size, h, user, round)
        .iter()
        .map(|it| it.id.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Whether `item` is one of the validator's current round.
pub(crate) fn in_round(items: &[CalItem], rules: Rules, h: &History, user: i64, round: i64, item: i64) -> bool {
    let size = usize::try_from(rules.calibration_min_items.max(1)).unwrap_or(usize::MAX);
    round_items(items, size, h, user, round)
        .iter()
        .any(|it| it.id == item)
}

/// One validator's calibration status, the rules read now.
pub(crate) async fn status_of_in(
    c: &mut Conn,
    campaign_id: i64,
    user_id: i64,
) -> Result<CalibrationStatus> {
    let rules = rules_in(c, campaign_id).await?;
    let items = items_in(c, campaign_id).await?;
    let h = histories_in(c, campaign_id, Some(user_id)).await?;
    status_from(&items, rules, h.get(&user_id), user_id)
}

/// Why a validator's main queue is not open.
pub(crate) fn not_cleared(s: &CalibrationStatus) -> Error {
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
pub(crate) async fn refresh_gates_in(c: &mut Conn, campaign_id: i64) -> Result<()> {
    let rules = rules_in(c, campaign_id).await?;
    let items = items_in(c, campaign_id).await?;
    let histories = histories_in(c, campaign_id, None).await?;
    let members: Vec<(i64, i64)> =
        qa("SELECT user_id, cleared FROM pool_members WHERE campaign_id = $1")
            .bind(campaign_id)
            .fetch_all(&mut *c)
            .await?;
    for (user, cleared) in members {
        let open = i64::from(status_from(&items, rules, histories.get(&user), user)?.open());
        if open != cleared {
            q("UPDATE pool_members SET cleared = $1 WHERE campaign_id = $2 AND user_id = $3")
                .bind(open)
                .bind(campaign_id)
                .bind(user)
                .execute(&mut *c)
                .await?;
        }
    }
    Ok(())
}

//! Sampled review's writes (`domain::sampling` says what a lot is): one run settles every
//! lot whose sample is reviewed, releases the held items no rule covers any longer, and
//! draws every stratum's held items as a new lot, all in one write under the structure
//! lock (SQLite: the writer; PostgreSQL: the exclusive advisory lock that imports take),
//! so that no import or pair change sees half a lot.

use crate::clock::now_micros;
use crate::domain::sampling::{LotReview, draw, review_of, rule_index};
use crate::domain::{Outcome, Stage};
use crate::error::{Error, Result};
use crate::rng::SplitMix64;
use crate::store::Lock;
use crate::store::areas::{base, gates};
use crate::store::catalog::Campaign;
use crate::store::db::{Tx, named, row, sql};
use crate::store::sampling::{
    DrawnLot, Lot, LotMembers, PlannedRule, SamplingRun, SettledLot, Waiting,
};
use std::collections::BTreeMap;

impl crate::store::Store {
    /// One run of a campaign's sampled review: settles every lot whose sample is
    /// reviewed, releases held items no rule covers, draws every stratum's held items
    /// as a lot (`planned`: the rules of protocol version `version` with their plans;
    /// refused under another version).
    pub async fn run_sampling(
        &self,
        campaign: &str,
        version: i64,
        planned: &[PlannedRule],
        seed: u64,
    ) -> Result<SamplingRun> {
        write_tx!(self, Lock::Structure, (campaign, planned), |tx| {
            run(tx, campaign, version, planned, seed).await
        })
    }

    /// A campaign's lots, oldest first, and the items held for a draw.
    pub async fn sampling_lots(&self, campaign: &Campaign) -> Result<(Vec<Lot>, Vec<Waiting>)> {
        read_tx!(self, long, |c| lots(c, campaign.id).await)
    }

    /// A lot's members (item id, key) and the ids its sample drew.
    pub async fn lot_members(&self, lot: i64) -> Result<LotMembers> {
        read_tx!(self, long, |c| lot_members(c, lot).await)
    }
}

/// The pair a released item's queue takes: the one that reviewed its clip, else its
/// task's pair in force (none: it waits, as any item does, for the pool to give one;
/// in a campaign that pairs per clip, `gates::assign_pairs` gives it one at the run's end).
macro_rules! pair_queue {
    () => {
        "queue1 = COALESCE((SELECT p.rater1_id FROM items p WHERE p.id = items.parent_item_id),
                           (SELECT t.rater1_id FROM tasks t WHERE t.id = items.task_id)),
         queue2 = COALESCE((SELECT p.rater2_id FROM items p WHERE p.id = items.parent_item_id),
                           (SELECT t.rater2_id FROM tasks t WHERE t.id = items.task_id))"
    };
}

/// The held items that a draw may take: current, not calibration items, still pending,
/// and (a question) of a clip that is retained or of no reviewed clip.
macro_rules! held_items {
    () => {
        concat!(
            " FROM items i JOIN tasks t ON t.id = i.task_id
     LEFT JOIN items p ON p.id = i.parent_item_id
     WHERE i.campaign_id = :campaign AND i.held = 1 AND i.lot_id IS NULL AND i.is_current = 1
       AND i.calibration = 0 AND i.outcome = 'pending'
       AND (p.id IS NULL OR ",
            $crate::store::db::retained!("p"),
            ")"
        )
    };
}

const HELD: &str = concat!(
    "SELECT i.id, i.item_key, i.stage, i.task_id, t.code AS task, i.qa_type",
    held_items!(),
    " ORDER BY i.id"
);

row! {
    struct HeldRow {
        id: i64,
        item_key: String,
        stage: i64,
        task_id: i64,
        task: String,
        qa_type: Option<String>,
    }
}

row! {
    struct OpenLot {
        id: i64,
        stage: i64,
        c: i64,
    }
}

/// Takes a held item (drawn, or of a lot that goes to full review, or no longer covered)
/// out of hold and into its pair's queues.
const RELEASE: &str = concat!(
    "UPDATE items SET held = 0, drawn = :drawn, ",
    pair_queue!(),
    " WHERE id = :item AND held = 1"
);

/// Every undrawn item of a rejected lot goes to full review.
const RELEASE_LOT: &str = concat!(
    "UPDATE items SET held = 0, ",
    pair_queue!(),
    " WHERE lot_id = :lot AND drawn = 0 AND held = 1"
);

/// Every undrawn item of an accepted lot is retained by sample.
const RETAIN_BY_SAMPLE: &str =
    "UPDATE items SET held = 0, outcome = 'by_sample', completed_at = :now,
                                revision = revision + 1
     WHERE lot_id = :lot AND drawn = 0 AND held = 1 AND outcome = 'pending'";

/// The questions of the clips an accepted Stage 1 lot retained open, as a retained
/// clip's do: in the queues of the task's pair (no one reviewed the clip), unless
/// their own stratum holds them for a sample.
const OPEN_QUESTIONS_BY_SAMPLE: &str = "UPDATE items SET
         queue1 = (SELECT t.rater1_id FROM tasks t WHERE t.id = items.task_id),
         queue2 = (SELECT t.rater2_id FROM tasks t WHERE t.id = items.task_id)
     WHERE parent_item_id IN (SELECT id FROM items WHERE lot_id = :lot AND outcome = 'by_sample')
       AND is_current = 1 AND calibration = 0 AND rater1_id IS NULL AND held = 0";

/// One run for the campaign named `campaign`: settle, release, draw. `planned` are the
/// protocol's rules with their plans, computed by the caller from the version it read;
/// a run under another version is refused (nothing written) so that no lot is drawn
/// by a plan its rule does not give. `seed` seeds the lots' own seeds.
pub(crate) async fn run(
    tx: &mut impl Tx,
    campaign: &str,
    version: i64,
    planned: &[PlannedRule],
    seed: u64,
) -> Result<SamplingRun> {
    let c = base::existing_campaign(tx, campaign).await?;
    if c.protocol_version != version {
        return Err(Error::Conflict(format!(
            "the protocol of campaign `{campaign}` changed (version {} now, not {version}) while the sample was being planned: run it again",
            c.protocol_version
        )));
    }
    let rules: Vec<_> = planned.iter().map(|p| p.rule.clone()).collect();
    if rules != c.taxonomy.sampling {
        return Err(Error::Internal(
            "the planned rules are not the protocol's".into(),
        ));
    }
    let now = now_micros();
    // Settle the lots whose sample is reviewed, then draw.
    let mut out = SamplingRun {
        settled: settle(tx, c.id, now).await?,
        ..SamplingRun::default()
    };

    // Draw: the held items, by the rule that covers each (released when none does).
    let held: Vec<HeldRow> = tx.fetch(sql!(HELD), named! { campaign: c.id }).await?;
    let mut lots: BTreeMap<(usize, i64), Vec<&HeldRow>> = BTreeMap::new();
    for h in &held {
        let stage = Stage::from_number(h.stage)
            .ok_or_else(|| Error::Internal(format!("item {} has stage {}", h.id, h.stage)))?;
        match rule_index(&c.taxonomy.sampling, stage, &h.task, h.qa_type.as_deref()) {
            Some(index) => lots.entry((index, h.task_id)).or_default().push(h),
            None => {
                tx.exec(sql!(RELEASE), named! { drawn: 0i64, item: h.id })
                    .await?;
                out.released += 1;
            }
        }
    }
    let mut seeds = SplitMix64::new(seed);
    for ((index, task_id), members) in lots {
        let plan = &planned[index];
        let lot_seed = seeds.next_u64();
        let keyed: Vec<(i64, String)> =
            members.iter().map(|m| (m.id, m.item_key.clone())).collect();
        let chosen = draw(lot_seed, &keyed, plan.n);
        let rule_json = serde_json::to_string(&plan.rule)
            .map_err(|e| Error::fault("a rule does not serialise", e))?;
        let lot_id: i64 = tx
            .scalar(
                sql!(
                    "INSERT INTO sample_lots (campaign_id, stage, task_id, qa_type, rule,
                                              protocol_version, seed, lot_size, n, c, drawn_at)
                     VALUES (:campaign, :stage, :task, :qa_type, :rule, :version, :seed,
                             :size, :n, :c, :now)
                     RETURNING id"
                ),
                named! {
                    campaign: c.id,
                    stage: plan.rule.stage.number(),
                    task: task_id,
                    qa_type: plan.rule.qa_type.as_deref(),
                    rule: &rule_json,
                    version,
                    seed: lot_seed as i64,
                    size: count(keyed.len()),
                    n: count(chosen.len()),
                    c: i64::try_from(plan.c).unwrap_or(i64::MAX),
                    now,
                },
            )
            .await?;
        for m in &members {
            tx.exec(
                sql!("UPDATE items SET lot_id = :lot WHERE id = :item AND held = 1"),
                named! { lot: lot_id, item: m.id },
            )
            .await?;
        }
        for item in &chosen {
            tx.exec(sql!(RELEASE), named! { drawn: 1i64, item: *item })
                .await?;
        }
        out.drawn.push(DrawnLot {
            lot: lot_id,
            size: keyed.len() as u64,
            drawn: chosen.len() as u64,
        });
    }
    // Pairing per clip: the items this run put in review without a clip's pair get one.
    gates::assign_pairs(tx, c.id).await?;
    Ok(out)
}

/// Settles every lot whose sample is reviewed: accepted (its undrawn items retained by
/// sample, a clip's questions opened) or rejected (its undrawn items sent to review).
async fn settle(tx: &mut impl Tx, campaign: i64, now: i64) -> Result<Vec<SettledLot>> {
    let mut settled = Vec::new();
    let open: Vec<OpenLot> = tx
        .fetch(
            sql!(
                "SELECT id, stage, c FROM sample_lots
                 WHERE campaign_id = :campaign AND decision IS NULL ORDER BY id"
            ),
            named! { campaign },
        )
        .await?;
    for lot in open {
        let outcomes: Vec<(String,)> = tx
            .fetch(
                sql!("SELECT outcome FROM items WHERE lot_id = :lot AND drawn = 1"),
                named! { lot: lot.id },
            )
            .await?;
        let mut drawn = Vec::with_capacity(outcomes.len());
        for (o,) in &outcomes {
            drawn.push(
                Outcome::parse(o)
                    .ok_or_else(|| Error::Internal(format!("unknown outcome `{o}`")))?,
            );
        }
        let LotReview::Done { defects, accepted } =
            review_of(&drawn, u64::try_from(lot.c).unwrap_or(0))
        else {
            continue;
        };
        let decision = if accepted { "accepted" } else { "rejected" };
        tx.exec(
            sql!(
                "UPDATE sample_lots SET decision = :decision, defects = :defects, settled_at = :now
                 WHERE id = :lot AND decision IS NULL"
            ),
            named! {
                decision,
                defects: i64::try_from(defects).unwrap_or(i64::MAX),
                now,
                lot: lot.id,
            },
        )
        .await?;
        let moved = if accepted {
            let n = tx
                .exec(sql!(RETAIN_BY_SAMPLE), named! { now, lot: lot.id })
                .await?;
            if lot.stage == Stage::Clip.number() {
                tx.exec(sql!(OPEN_QUESTIONS_BY_SAMPLE), named! { lot: lot.id })
                    .await?;
            }
            n
        } else {
            tx.exec(sql!(RELEASE_LOT), named! { lot: lot.id }).await?
        };
        settled.push(SettledLot {
            lot: lot.id,
            defects,
            accepted,
            undrawn: moved,
        });
    }
    Ok(settled)
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

row! {
    struct LotRow {
        id: i64,
        stage: i64,
        task: String,
        qa_type: Option<String>,
        rule: String,
        protocol_version: i64,
        seed: i64,
        lot_size: i64,
        n: i64,
        c: i64,
        drawn_at: i64,
        decision: Option<String>,
        defects: Option<i64>,
        settled_at: Option<i64>,
        reviewed: i64,
        rejected: i64,
    }
}

/// Every lot of a campaign with its sample's progress, oldest first, and the held items
/// waiting for a draw per (stage, task, QA type).
pub(crate) async fn lots(
    tx: &mut impl Tx,
    campaign_id: i64,
) -> Result<(Vec<Lot>, Vec<(Stage, String, Option<String>, u64)>)> {
    let rows: Vec<LotRow> = tx
        .fetch(
            sql!(
                "SELECT l.id, l.stage, t.code AS task, l.qa_type, l.rule, l.protocol_version,
                        l.seed, l.lot_size, l.n, l.c, l.drawn_at, l.decision, l.defects,
                        l.settled_at,
                        (SELECT COUNT(*) FROM items i WHERE i.lot_id = l.id AND i.drawn = 1
                           AND i.outcome IN ('both_pass', 'split_accepted', 'both_reject', 'split_rejected')) AS reviewed,
                        (SELECT COUNT(*) FROM items i WHERE i.lot_id = l.id AND i.drawn = 1
                           AND i.outcome IN ('both_reject', 'split_rejected')) AS rejected
                 FROM sample_lots l JOIN tasks t ON t.id = l.task_id
                 WHERE l.campaign_id = :campaign ORDER BY l.id"
            ),
            named! { campaign: campaign_id },
        )
        .await?;
    let mut lots = Vec::with_capacity(rows.len());
    for r in rows {
        let stage = Stage::from_number(r.stage)
            .ok_or_else(|| Error::Internal(format!("lot {} has stage {}", r.id, r.stage)))?;
        let rule = serde_json::from_str(&r.rule)
            .map_err(|e| Error::fault(format!("lot {}'s rule is unreadable", r.id), e))?;
        lots.push(Lot {
            id: r.id,
            stage,
            task: r.task,
            qa_type: r.qa_type,
            rule,
            protocol_version: r.protocol_version,
            seed: r.seed as u64,
            size: r.lot_size as u64,
            n: r.n as u64,
            c: r.c as u64,
            drawn_at: r.drawn_at,
            accepted: r.decision.as_deref().map(|d| d == "accepted"),
            defects: r.defects.map(|d| d as u64),
            settled_at: r.settled_at,
            reviewed: r.reviewed as u64,
            rejected: r.rejected as u64,
        });
    }
    let held: Vec<(i64, String, Option<String>, i64)> = tx
        .fetch(
            sql!(concat!(
                "SELECT i.stage, t.code, i.qa_type, COUNT(*)",
                held_items!(),
                " GROUP BY i.stage, t.code, i.qa_type ORDER BY i.stage, t.code, i.qa_type"
            )),
            named! { campaign: campaign_id },
        )
        .await?;
    let mut waiting = Vec::with_capacity(held.len());
    for (stage, task, qa, n) in held {
        let stage = Stage::from_number(stage)
            .ok_or_else(|| Error::Internal(format!("an item has stage {stage}")))?;
        waiting.push((stage, task, qa, n as u64));
    }
    Ok((lots, waiting))
}

/// The members of a lot (item id, key) and the ids it drew, to show that the draw is
/// the seed's.
pub(crate) async fn lot_members(tx: &mut impl Tx, lot: i64) -> Result<LotMembers> {
    let rows: Vec<(i64, String, i64)> = tx
        .fetch(
            sql!("SELECT id, item_key, drawn FROM items WHERE lot_id = :lot ORDER BY item_key, id"),
            named! { lot },
        )
        .await?;
    let drawn = rows.iter().filter(|r| r.2 == 1).map(|r| r.0).collect();
    Ok(LotMembers {
        members: rows.into_iter().map(|r| (r.0, r.1)).collect(),
        drawn,
    })
}

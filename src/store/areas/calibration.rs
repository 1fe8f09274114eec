//! Calibration writes: a calibration verdict (loaded, decided by
//! `domain::calibration::decide_calibration`, written), another round for a validator
//! who failed, and a clip made a calibration clip. Each reads the rules, the items and
//! the validator's history inside its own write; the gate (`pool_members.cleared`) is
//! set in the same write that changes it.

mod ops;

use super::{base, gates};
use crate::clock::now_micros;
use crate::domain::calibration::{
    CalibrationInput, CalibrationPlan, CalibrationRecord, CalibrationRefusal, CalibrationState,
    EarlierVerdict, decide_calibration, next_round, status,
};
use crate::domain::rules::CheckedVerdict;
use crate::domain::{Role, Stage, Verdict};
use crate::error::{Error, Result};
use crate::store::accounts::User;
use crate::store::calibration::CalibrationFeedback;
use crate::store::catalog::Campaign;
use crate::store::db::{Tx, locked, named, sql};
use crate::store::review::VerdictRequest;

/// Records a calibration verdict and answers with the known one.
pub(crate) async fn record(
    tx: &mut impl Tx,
    campaign: &Campaign,
    validator: &User,
    stage: Stage,
    key: &str,
    req: &VerdictRequest,
) -> Result<CalibrationFeedback> {
    let (campaign_id, campaign_name) = (campaign.id, campaign.name.as_str());
    // The membership row is this validator's lock for their calibration; the campaign's
    // row says which version of its protocol is in force.
    let member: Option<(i64, i64)> = tx
        .fetch_opt(
            locked!(
                "SELECT m.cleared,
                        (SELECT k.protocol_version FROM campaigns k WHERE k.id = :campaign)
                 FROM pool_members m
                 WHERE m.campaign_id = :campaign AND m.user_id = :user",
                "m"
            ),
            named! { campaign: campaign_id, user: validator.id },
        )
        .await?;
    let Some((_, protocol_version)) =
        member.filter(|_| validator.role_in(campaign_id) == Some(Role::Validator))
    else {
        return Err(Error::Forbidden(format!(
            "{} is not in the validator pool of campaign `{campaign_name}`",
            validator.name
        )));
    };
    let (rules, items, mut histories) =
        gates::calibration_facts(tx, campaign_id, Some(validator.id)).await?;
    let history = histories.remove(&validator.id).unwrap_or_default();
    let round = status(&items, rules, Some(&history), validator.id).round;
    let item = items.iter().find(|it| it.stage == stage && it.key == key);
    let earlier = match item {
        None => None,
        Some(it) => tx
            .fetch_opt::<(String, String, String, i64)>(
                sql!(
                    "SELECT verdict, reasons, note, agrees FROM calibration_decisions
                     WHERE item_id = :item AND validator_id = :user AND round = :round"
                ),
                named! { item: it.id, user: validator.id, round },
            )
            .await?
            .map(
                |(verdict, reasons, note, agrees)| -> Result<EarlierVerdict> {
                    Ok(EarlierVerdict {
                        verdict: Verdict::parse(&verdict).map_err(Error::Internal)?,
                        reasons,
                        note,
                        agrees: agrees == 1,
                    })
                },
            )
            .transpose()?,
    };
    let taxonomy = base::protocol_in_force(tx, campaign, protocol_version).await?;
    let plan = decide_calibration(&CalibrationInput {
        taxonomy: &taxonomy,
        items: &items,
        rules,
        history: &history,
        user: validator.id,
        stage,
        key,
        verdict: req.verdict,
        reasons: &req.reasons,
        note: &req.note,
        time_spent_ms: req.time_spent_ms,
        earlier,
    });
    let record = match plan {
        Ok(CalibrationPlan::Repeat {
            checked,
            agrees,
            known,
            status,
        }) => {
            return Ok(CalibrationFeedback {
                verdict: checked.verdict,
                reasons: checked.reasons,
                agrees,
                known,
                status,
            });
        }
        Ok(CalibrationPlan::Record(r)) => r,
        Err(CalibrationRefusal::NoItem) => {
            return Err(Error::NotFound(format!(
                "no calibration {} `{key}` in Stage {stage}",
                stage.item_noun()
            )));
        }
        Err(CalibrationRefusal::Field(e)) => return Err(e.into()),
        Err(CalibrationRefusal::Conflict(m)) => return Err(Error::Conflict(m)),
    };
    write_record(tx, campaign_id, validator.id, &record, protocol_version).await?;
    Ok(CalibrationFeedback {
        verdict: record.checked.verdict,
        reasons: record.checked.reasons,
        agrees: record.agrees,
        known: record.known,
        status: record.after,
    })
}

/// Writes a calibration verdict decided by `decide_calibration`: its round (whose items
/// are fixed from its first verdict on), the decision, and, when it passes the round, the
/// round's pass and the gate opened.
async fn write_record(
    tx: &mut impl Tx,
    campaign_id: i64,
    user: i64,
    record: &CalibrationRecord,
    protocol_version: i64,
) -> Result<()> {
    let now = now_micros();
    // The round's items are fixed from its first verdict on.
    tx.exec(
        sql!(
            "INSERT INTO calibration_rounds (campaign_id, user_id, round, started_at, items)
             VALUES (:campaign, :user, :round, :now, :items)
             ON CONFLICT (campaign_id, user_id, round)
             DO UPDATE SET items = COALESCE(calibration_rounds.items, excluded.items)"
        ),
        named! {
            campaign: campaign_id,
            user,
            round: record.round,
            now,
            items: &record.drawn,
        },
    )
    .await?;
    tx.exec(
        sql!(
            "INSERT INTO calibration_decisions (campaign_id, item_id, validator_id, round, verdict,
                                                reasons, note, time_spent_ms, decided_at, agrees,
                                                protocol_version)
             VALUES (:campaign, :item, :user, :round, :verdict, :reasons, :note, :time_spent,
                     :now, :agrees, :protocol_version)"
        ),
        named! {
            campaign: campaign_id,
            item: record.item,
            user,
            round: record.round,
            verdict: record.checked.verdict.as_str(),
            reasons: &record.reasons,
            note: &record.checked.note,
            time_spent: record.time_spent_ms,
            now,
            agrees: i64::from(record.agrees),
            protocol_version,
        },
    )
    .await?;
    if record.passes() {
        tx.exec(
            sql!(
                "UPDATE calibration_rounds SET passed_at = :now
                 WHERE campaign_id = :campaign AND user_id = :user AND round = :round
                   AND passed_at IS NULL"
            ),
            named! { now, campaign: campaign_id, user, round: record.after.round },
        )
        .await?;
        tx.exec(
            sql!(
                "UPDATE pool_members SET cleared = 1
                 WHERE campaign_id = :campaign AND user_id = :user"
            ),
            named! { campaign: campaign_id, user },
        )
        .await?;
    }
    Ok(())
}

/// Starts another calibration round for a validator who failed theirs; returns its
/// number and what it drew (how many items repeat, how many more the pool needs). The
/// failed round stays on record; the next draws its items now.
pub(crate) async fn reset(
    tx: &mut impl Tx,
    campaign_id: i64,
    name: &str,
    by: &str,
) -> Result<crate::domain::calibration::RoundDraw> {
    let user = base::user_by_name(tx, name)
        .await?
        .ok_or_else(|| Error::NotFound(format!("no user named `{name}`")))?;
    let (rules, items, mut histories) =
        gates::calibration_facts(tx, campaign_id, Some(user.id)).await?;
    let history = histories.remove(&user.id).unwrap_or_default();
    let (failed, next, drawn) = next_round(&items, rules, &history, user.id).map_err(|state| {
        Error::Conflict(format!(
            "{name} has not failed calibration (it is {}); only a failed round is reset",
            match state {
                CalibrationState::Passed => "passed",
                CalibrationState::InProgress => "in progress",
                _ => "not required",
            }
        ))
    })?;
    let now = now_micros();
    // Keep the failed round on record (it may have been made implicitly).
    tx.exec(
        sql!(
            "INSERT INTO calibration_rounds (campaign_id, user_id, round, started_at)
             VALUES (:campaign, :user, :round, :now)
             ON CONFLICT (campaign_id, user_id, round) DO NOTHING"
        ),
        named! { campaign: campaign_id, user: user.id, round: failed, now },
    )
    .await?;
    tx.exec(
        sql!(
            "INSERT INTO calibration_rounds (campaign_id, user_id, round, started_at, reset_by, items)
             VALUES (:campaign, :user, :round, :now, :by, :items)"
        ),
        named! { campaign: campaign_id, user: user.id, round: next, now, by, items: &drawn },
    )
    .await?;
    Ok(crate::domain::calibration::round_draw(
        &items, rules, &history, next, &drawn,
    ))
}

/// Makes an imported clip that nobody has decided yet a calibration clip, with the
/// known verdict of its Stage 1 item; the gates follow.
pub(crate) async fn mark(
    tx: &mut impl Tx,
    campaign: (i64, &str),
    clip_key: &str,
    known: &CheckedVerdict,
) -> Result<()> {
    let (campaign_id, campaign_name) = campaign;
    let (clip_pk, version_id, item_id): (i64, i64, Option<i64>) = tx
        .fetch_opt(
            sql!(
                "SELECT c.id, v.id, i.id FROM clips c
                 JOIN clip_versions v ON v.id = c.current_version_id
                 LEFT JOIN items i ON i.clip_version_id = v.id AND i.stage = 1
                 WHERE c.campaign_id = :campaign AND c.clip_key = :clip"
            ),
            named! { campaign: campaign_id, clip: clip_key },
        )
        .await?
        .ok_or_else(|| {
            Error::NotFound(format!(
                "no clip `{clip_key}` in campaign `{campaign_name}`"
            ))
        })?;
    let Some(item_id) = item_id else {
        return Err(Error::Conflict(format!(
            "campaign `{campaign_name}` reviews no clips (its protocol sets clip_review = false): a clip has no known verdict of its own; import a calibration clip with a known verdict on each question"
        )));
    };
    let decided: i64 = tx
        .scalar(
            sql!(
                "SELECT COUNT(*) FROM decisions d JOIN items i ON i.id = d.item_id
                 WHERE i.clip_version_id = :version"
            ),
            named! { version: version_id },
        )
        .await?;
    if decided > 0 {
        return Err(Error::Conflict(format!(
            "clip `{clip_key}` already has verdicts; only a clip nobody decided becomes a calibration clip"
        )));
    }
    // A lot is decided by its drawn items: none of them, nor an item waiting for its
    // lot's decision, may leave the QC.
    let sampled: i64 = tx
        .scalar(
            sql!(
                "SELECT COUNT(*) FROM items
                 WHERE clip_version_id = :version AND (lot_id IS NOT NULL OR outcome = 'by_sample')"
            ),
            named! { version: version_id },
        )
        .await?;
    if sampled > 0 {
        return Err(Error::Conflict(format!(
            "clip `{clip_key}` is in a lot of the sampled review; only a clip no lot took becomes a calibration clip"
        )));
    }
    tx.exec(
        sql!("UPDATE clips SET calibration = 1 WHERE id = :clip"),
        named! { clip: clip_pk },
    )
    .await?;
    tx.exec(
        sql!(
            "UPDATE items SET calibration = 1, rater1_id = NULL, rater2_id = NULL, queue1 = NULL,
                              queue2 = NULL
             WHERE clip_version_id = :version"
        ),
        named! { version: version_id },
    )
    .await?;
    tx.exec(
        sql!("DELETE FROM calibration_keys WHERE item_id = :item"),
        named! { item: item_id },
    )
    .await?;
    base::insert_keys(tx, &[(item_id, known)]).await?;
    gates::refresh_gates(tx, campaign_id).await
}

/// Pauses a validator's main queue because their recent catch rate on the known items
/// of the live queue is surely below the threshold (`why` says so, with the figures):
/// a calibration round opens, marked with why, and the gate closes in this write. Does
/// nothing (answers `None`) when the queue is not open or a pause is already on; else
/// answers the round that opened.
pub(crate) async fn pause(
    tx: &mut impl Tx,
    campaign_id: i64,
    user_id: i64,
    why: &str,
) -> Result<Option<i64>> {
    // The membership row is this validator's lock for their calibration.
    let cleared: Option<i64> = tx
        .scalar_opt(
            locked!(
                "SELECT m.cleared FROM pool_members m
                 WHERE m.campaign_id = :campaign AND m.user_id = :user",
                "m"
            ),
            named! { campaign: campaign_id, user: user_id },
        )
        .await?;
    if cleared != Some(1) {
        return Ok(None);
    }
    let (rules, items, mut histories) =
        gates::calibration_facts(tx, campaign_id, Some(user_id)).await?;
    let history = histories.remove(&user_id).unwrap_or_default();
    if history.reopened.is_some() && !status(&items, rules, Some(&history), user_id).open() {
        return Ok(None);
    }
    let round = history.rounds.last().map_or(1, |r| r.0 + 1);
    let drawn = crate::domain::calibration::drawn_ids(&items, rules, &history, user_id, round);
    tx.exec(
        sql!(
            "INSERT INTO calibration_rounds (campaign_id, user_id, round, started_at, items, reopened)
             VALUES (:campaign, :user, :round, :now, :items, :why)"
        ),
        named! { campaign: campaign_id, user: user_id, round, now: now_micros(), items: &drawn, why },
    )
    .await?;
    tx.exec(
        sql!(
            "UPDATE pool_members SET cleared = 0
             WHERE campaign_id = :campaign AND user_id = :user"
        ),
        named! { campaign: campaign_id, user: user_id },
    )
    .await?;
    Ok(Some(round))
}

/// An admin lifts the pause the known items put on a validator's queue: the round it
/// opened stays on record, marked lifted, and the gate follows in this write.
pub(crate) async fn lift(tx: &mut impl Tx, campaign_id: i64, name: &str, by: &str) -> Result<i64> {
    let user = base::user_by_name(tx, name)
        .await?
        .ok_or_else(|| Error::NotFound(format!("no user named `{name}`")))?;
    let round: Option<i64> = tx
        .scalar(
            sql!(
                "SELECT MAX(round) FROM calibration_rounds
                 WHERE campaign_id = :campaign AND user_id = :user AND reopened IS NOT NULL
                   AND lifted_at IS NULL"
            ),
            named! { campaign: campaign_id, user: user.id },
        )
        .await?;
    let Some(round) = round else {
        return Err(Error::Conflict(format!(
            "{name}'s queue is not paused by the known items; there is nothing to lift"
        )));
    };
    tx.exec(
        sql!(
            "UPDATE calibration_rounds SET lifted_by = :by, lifted_at = :now
             WHERE campaign_id = :campaign AND user_id = :user AND reopened IS NOT NULL
               AND lifted_at IS NULL"
        ),
        named! { by, now: now_micros(), campaign: campaign_id, user: user.id },
    )
    .await?;
    gates::refresh_gates(tx, campaign_id).await?;
    Ok(round)
}

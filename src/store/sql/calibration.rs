// Calibration: held-out items with known verdicts, rounds, and the gate on the main
// queue. The gate is kept on the pool membership (`pool_members.cleared`), so that a
// verdict and a queue read it in the statement they already run; every write that can
// change it (a calibration verdict, new calibration items, the campaign's rules)
// recomputes it here. (Shared SQL: compiled once per backend, see store/mod.rs.)

use super::gates::{drawn_ids, histories_in, in_round, items_in, not_cleared, refresh_gates_in, rules_in, status_from, status_of_in};
use crate::clock::now_micros;
use crate::domain::rules::{CheckedVerdict, check_time_spent, check_verdict};
use crate::domain::{Level, Reason, Role, Stage, Verdict};
use crate::error::{Error, Result};
use crate::store::Lock;
use crate::store::accounts::User;
use crate::store::calibration::{
    CalibrationFeedback, CalibrationItem, CalibrationKey, CalibrationRound, CalibrationScore,
    CalibrationState, CalibrationStatus, KnownVerdict, RoundDecision, RoundResult,
};
use crate::store::catalog::Campaign;
use crate::store::review::{ItemHeader, ItemViewRow, VerdictRequest};
use std::collections::HashMap;

/// The calibration item of `stage` named `key` with its view and known verdict.
async fn item_view_in(
    c: &mut Conn,
    campaign_id: i64,
    stage: Stage,
    key: &str,
) -> Result<(ItemHeader, KnownVerdict)> {
    #[derive(sqlx::FromRow)]
    struct Row {
        #[sqlx(flatten)]
        item: ItemViewRow,
        k_verdict: String,
        k_reasons: String,
        k_note: String,
    }
    let row = qa::<Row>(
        "SELECT i.*, k.verdict AS k_verdict, k.reasons AS k_reasons, k.note AS k_note
         FROM item_details i JOIN calibration_keys k ON k.item_id = i.id
         WHERE i.campaign_id = $1 AND i.stage = $2 AND i.item_key = $3 AND i.is_current = 1
           AND i.calibration = 1",
    )
    .bind(campaign_id)
    .bind(stage.number())
    .bind(key)
    .fetch_optional(&mut *c)
    .await?
    .ok_or_else(|| {
        Error::NotFound(format!(
            "no calibration {} `{key}` in Stage {stage}",
            stage.item_noun()
        ))
    })?;
    let known = KnownVerdict {
        verdict: Verdict::parse(&row.k_verdict).map_err(Error::Internal)?,
        reasons: Reason::split_stored(&row.k_reasons),
        note: row.k_note,
    };
    Ok((ItemHeader::try_from(row.item)?, known))
}

async fn require_pool_in(c: &mut Conn, campaign: &Campaign, validator: &User) -> Result<()> {
    let member: Option<i64> =
        qs("SELECT user_id FROM pool_members WHERE campaign_id = $1 AND user_id = $2")
            .bind(campaign.id)
            .bind(validator.id)
            .fetch_optional(&mut *c)
            .await?;
    if validator.role != Role::Validator || member.is_none() {
        return Err(Error::Forbidden(format!(
            "{} is not in the validator pool of campaign `{}`",
            validator.name, campaign.name
        )));
    }
    Ok(())
}

impl Backend {
    pub(crate) async fn calibration_status(
        &self,
        campaign: &Campaign,
        validator: &User,
    ) -> Result<CalibrationStatus> {
        status_of_in(&mut *self.read().await?, campaign.id, validator.id).await
    }

    pub(crate) async fn require_calibrated(
        &self,
        campaign: &Campaign,
        validator: &User,
    ) -> Result<()> {
        let s = self.calibration_status(campaign, validator).await?;
        if s.open() {
            Ok(())
        } else {
            Err(not_cleared(&s))
        }
    }

    pub(crate) async fn calibration_item(
        &self,
        campaign: &Campaign,
        validator: &User,
        stage: Stage,
        key: &str,
    ) -> Result<CalibrationItem> {
        let mut c = self.read().await?;
        require_pool_in(&mut c, campaign, validator).await?;
        let (header, known) = item_view_in(&mut c, campaign.id, stage, key).await?;
        let status = status_of_in(&mut c, campaign.id, validator.id).await?;
        let mine: Option<(String, String, i64)> = qa(
            "SELECT verdict, reasons, agrees FROM calibration_decisions
             WHERE item_id = $1 AND validator_id = $2 AND round = $3",
        )
        .bind(header.id)
        .bind(validator.id)
        .bind(status.round)
        .fetch_optional(&mut *c)
        .await?;
        let feedback = mine
            .map(|(verdict, reasons, agrees)| -> Result<CalibrationFeedback> {
                Ok(CalibrationFeedback {
                    verdict: Verdict::parse(&verdict).map_err(Error::Internal)?,
                    reasons: Reason::split_stored(&reasons),
                    agrees: agrees == 1,
                    known: known.clone(),
                    status: status.clone(),
                })
            })
            .transpose()?;
        Ok(CalibrationItem {
            stage,
            item_id: key.to_string(),
            clip: header.clip,
            question: header.question,
            feedback,
        })
    }

    pub(crate) async fn record_calibration(
        &self,
        campaign: &Campaign,
        validator: &User,
        stage: Stage,
        key: &str,
        req: &VerdictRequest,
    ) -> Result<CalibrationFeedback> {
        let (campaign, validator, key, req) =
            (campaign.clone(), validator.clone(), key.to_string(), req.clone());
        self.write(Lock::Item, move |c| {
            let (campaign, validator, key, req) =
                (campaign.clone(), validator.clone(), key.clone(), req.clone());
            Box::pin(async move {
                // The membership row is this validator's lock for their calibration.
                let member: Option<i64> = qs(concat!(
                    "SELECT m.cleared FROM pool_members m WHERE m.campaign_id = $1 AND m.user_id = $2",
                    for_update!("m")
                ))
                .bind(campaign.id)
                .bind(validator.id)
                .fetch_optional(&mut *c)
                .await?;
                if validator.role != Role::Validator || member.is_none() {
                    return Err(Error::Forbidden(format!(
                        "{} is not in the validator pool of campaign `{}`",
                        validator.name, campaign.name
                    )));
                }
                let rules = rules_in(c, campaign.id).await?;
                let items = items_in(c, campaign.id).await?;
                let mut history = histories_in(c, campaign.id, Some(validator.id))
                    .await?
                    .remove(&validator.id)
                    .unwrap_or_default();
                let item = items
                    .iter()
                    .find(|it| it.stage == stage.number() && it.item_key == key)
                    .ok_or_else(|| {
                        Error::NotFound(format!(
                            "no calibration {} `{key}` in Stage {stage}",
                            stage.item_noun()
                        ))
                    })?;
                let known = item.known()?;
                let level: Option<String> = qs("SELECT level FROM items WHERE id = $1")
                    .bind(item.id)
                    .fetch_one(&mut *c)
                    .await?;
                let level = level.as_deref().and_then(|l| Level::parse(l).ok());
                let checked: CheckedVerdict =
                    check_verdict(stage, level, req.verdict, &req.reasons, &req.note)?;
                let time_spent = check_time_spent(req.time_spent_ms)?;
                let status = status_from(&items, rules, Some(&history), validator.id)?;
                let reasons = Reason::join(&checked.reasons);
                let earlier: Option<(String, String, String, i64)> = qa(
                    "SELECT verdict, reasons, note, agrees FROM calibration_decisions
                     WHERE item_id = $1 AND validator_id = $2 AND round = $3",
                )
                .bind(item.id)
                .bind(validator.id)
                .bind(status.round)
                .fetch_optional(&mut *c)
                .await?;
                if let Some((v, r, n, agrees)) = earlier {
                    if v == checked.verdict.as_str() && r == reasons && n == checked.note {
                        return Ok(CalibrationFeedback {
                            verdict: checked.verdict,
                            reasons: checked.reasons,
                            agrees: agrees == 1,
                            known,
                            status,
                        });
                    }
                    return Err(Error::Conflict(format!(
                        "{} `{key}` is already decided in this calibration round; calibration verdicts do not change",
                        stage.item_noun()
                    )));
                }
                if status.state == CalibrationState::InProgress
                    && !in_round(&items, rules, &history, validator.id, status.round, item.id)
                {
                    return Err(Error::Conflict(format!(
                        "{} `{key}` is not in your calibration round {}; {}",
                        stage.item_noun(),
                        status.round,
                        match &status.next {
                            Some((_, next)) => format!("the next one is `{next}`"),
                            None => "your round is complete".into(),
                        }
                    )));
                }
                if status.state != CalibrationState::InProgress {
                    return Err(Error::Conflict(match status.state {
                        CalibrationState::Failed => {
                            "this calibration round is over; an admin can start another".into()
                        }
                        CalibrationState::NotRequired => "this campaign has no calibration".into(),
                        _ => "calibration is passed; the main queue is open".into(),
                    }));
                }
                let now = now_micros();
                // The round's items are fixed from its first verdict on.
                let drawn = drawn_ids(&items, rules, &history, validator.id, status.round);
                q("INSERT INTO calibration_rounds (campaign_id, user_id, round, started_at, items) VALUES ($1, $2, $3, $4, $5)
                   ON CONFLICT (campaign_id, user_id, round)
                   DO UPDATE SET items = COALESCE(calibration_rounds.items, excluded.items)")
                .bind(campaign.id)
                .bind(validator.id)
                .bind(status.round)
                .bind(now)
                .bind(&drawn)
                .execute(&mut *c)
                .await?;
                history
                    .drawn
                    .entry(status.round)
                    .or_insert_with(|| drawn.split(',').filter_map(|id| id.parse().ok()).collect());
                let agrees = checked.verdict == known.verdict;
                q("INSERT INTO calibration_decisions (campaign_id, item_id, validator_id, round, verdict, reasons, note, time_spent_ms, decided_at, agrees)
                   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)")
                .bind(campaign.id)
                .bind(item.id)
                .bind(validator.id)
                .bind(status.round)
                .bind(checked.verdict.as_str())
                .bind(&reasons)
                .bind(&checked.note)
                .bind(time_spent)
                .bind(now)
                .bind(i64::from(agrees))
                .execute(&mut *c)
                .await?;
                if history.rounds.is_empty() {
                    history.rounds.push((status.round, false));
                }
                history.decisions.push((status.round, item.id, agrees));
                let after = status_from(&items, rules, Some(&history), validator.id)?;
                if after.state == CalibrationState::Passed {
                    q("UPDATE calibration_rounds SET passed_at = $1
                       WHERE campaign_id = $2 AND user_id = $3 AND round = $4 AND passed_at IS NULL")
                    .bind(now)
                    .bind(campaign.id)
                    .bind(validator.id)
                    .bind(after.round)
                    .execute(&mut *c)
                    .await?;
                    q("UPDATE pool_members SET cleared = 1 WHERE campaign_id = $1 AND user_id = $2")
                        .bind(campaign.id)
                        .bind(validator.id)
                        .execute(&mut *c)
                        .await?;
                }
                Ok(CalibrationFeedback {
                    verdict: checked.verdict,
                    reasons: checked.reasons,
                    agrees,
                    known,
                    status: after,
                })
            })
        })
        .await
    }

    pub(crate) async fn reset_calibration(
        &self,
        campaign: &Campaign,
        name: &str,
        by: &str,
    ) -> Result<i64> {
        let (campaign_id, name, by) = (campaign.id, name.to_string(), by.to_string());
        self.write(Lock::Item, move |c| {
            let (name, by) = (name.clone(), by.clone());
            Box::pin(async move {
                let user = super::base::user_by_name_in(c, &name)
                    .await?
                    .ok_or_else(|| Error::NotFound(format!("no user named `{name}`")))?;
                let rules = rules_in(c, campaign_id).await?;
                let items = items_in(c, campaign_id).await?;
                let history = histories_in(c, campaign_id, Some(user.id))
                    .await?
                    .remove(&user.id)
                    .unwrap_or_default();
                let status = status_from(&items, rules, Some(&history), user.id)?;
                if status.state != CalibrationState::Failed {
                    return Err(Error::Conflict(format!(
                        "{name} has not failed calibration (it is {}); only a failed round is reset",
                        match status.state {
                            CalibrationState::Passed => "passed",
                            CalibrationState::InProgress => "in progress",
                            _ => "not required",
                        }
                    )));
                }
                let now = now_micros();
                // Keep the failed round on record (it may have been made implicitly).
                q("INSERT INTO calibration_rounds (campaign_id, user_id, round, started_at) VALUES ($1, $2, $3, $4)
                   ON CONFLICT (campaign_id, user_id, round) DO NOTHING")
                .bind(campaign_id)
                .bind(user.id)
                .bind(status.round)
                .bind(now)
                .execute(&mut *c)
                .await?;
                // The next round draws its items now, after every verdict of the
                // rounds before it.
                let next = status.round + 1;
                let drawn = drawn_ids(&items, rules, &history, user.id, next);
                q("INSERT INTO calibration_rounds (campaign_id, user_id, round, started_at, reset_by, items) VALUES ($1, $2, $3, $4, $5, $6)")
                    .bind(campaign_id)
                    .bind(user.id)
                    .bind(next)
                    .bind(now)
                    .bind(&by)
                    .bind(&drawn)
                    .execute(&mut *c)
                    .await?;
                Ok(next)
            })
        })
        .await
    }

    pub(crate) async fn calibration_scores(
        &self,
        campaign: &Campaign,
    ) -> Result<Vec<CalibrationScore>> {
        let mut c = self.read().await?;
        let pool: Vec<(i64, String)> = qa(
            "SELECT u.id, u.name FROM pool_members p JOIN users u ON u.id = p.user_id
             WHERE p.campaign_id = $1 ORDER BY p.pool_index",
        )
        .bind(campaign.id)
        .fetch_all(&mut *c)
        .await?;
        let rules = rules_in(&mut c, campaign.id).await?;
        let items = items_in(&mut c, campaign.id).await?;
        let histories = histories_in(&mut c, campaign.id, None).await?;
        pool.into_iter()
            .map(|(id, name)| {
                Ok(CalibrationScore {
                    validator: name,
                    status: status_from(&items, rules, histories.get(&id), id)?,
                })
            })
            .collect()
    }

    /// Every round of every validator in the pool (or of one), each with its verdicts
    /// beside the known ones, in the order they were made: four statements.
    pub(crate) async fn calibration_rounds(
        &self,
        campaign: &Campaign,
        validator: Option<&User>,
    ) -> Result<Vec<CalibrationRound>> {
        #[derive(sqlx::FromRow)]
        struct Row {
            validator_id: i64,
            round: i64,
            stage: i64,
            item_key: String,
            verdict: String,
            reasons: String,
            agrees: i64,
            k_verdict: String,
            k_reasons: String,
            k_note: String,
        }
        let mut c = self.read().await?;
        let only = validator.map_or(0, |u| u.id);
        let rules = rules_in(&mut c, campaign.id).await?;
        let items = items_in(&mut c, campaign.id).await?;
        let histories = histories_in(&mut c, campaign.id, validator.map(|u| u.id)).await?;
        #[derive(sqlx::FromRow)]
        struct RoundRow {
            user_id: i64,
            name: String,
            round: i64,
            passed_at: Option<i64>,
            reset_by: Option<String>,
        }
        let rounds = qa::<RoundRow>(
            "SELECT r.user_id, u.name, r.round, r.passed_at, r.reset_by
             FROM calibration_rounds r JOIN users u ON u.id = r.user_id
             WHERE r.campaign_id = $1 AND ($2 = 0 OR r.user_id = $2)
             ORDER BY u.name, r.round",
        )
        .bind(campaign.id)
        .bind(only)
        .fetch_all(&mut *c)
        .await?;
        let rows = qa::<Row>(
            "SELECT d.validator_id, d.round, i.stage, i.item_key, d.verdict, d.reasons, d.agrees,
                    k.verdict AS k_verdict, k.reasons AS k_reasons, k.note AS k_note
             FROM calibration_decisions d
             JOIN items i ON i.id = d.item_id
             JOIN calibration_keys k ON k.item_id = d.item_id
             WHERE d.campaign_id = $1 AND ($2 = 0 OR d.validator_id = $2)
             ORDER BY d.decided_at, d.id",
        )
        .bind(campaign.id)
        .bind(only)
        .fetch_all(&mut *c)
        .await?;
        let mut out: Vec<CalibrationRound> = Vec::with_capacity(rounds.len());
        let mut at: HashMap<(i64, i64), usize> = HashMap::new();
        let last: HashMap<i64, i64> = rounds.iter().map(|r| (r.user_id, r.round)).collect();
        for RoundRow {
            user_id: user,
            name,
            round,
            passed_at,
            reset_by,
        } in rounds
        {
            let result = if passed_at.is_some() {
                RoundResult::Passed
            } else if last.get(&user) == Some(&round) {
                match status_from(&items, rules, histories.get(&user), user)?.state {
                    CalibrationState::InProgress => RoundResult::Open,
                    CalibrationState::Passed => RoundResult::Passed,
                    _ => RoundResult::Failed,
                }
            } else {
                RoundResult::Failed
            };
            at.insert((user, round), out.len());
            out.push(CalibrationRound {
                validator: name,
                round,
                result,
                started_by: reset_by,
                decisions: Vec::new(),
            });
        }
        for r in rows {
            let Some(&i) = at.get(&(r.validator_id, r.round)) else {
                continue;
            };
            out[i].decisions.push(RoundDecision {
                stage: Stage::from_number(r.stage)
                    .ok_or_else(|| Error::Internal("stored stage".into()))?,
                item_id: r.item_key,
                verdict: Verdict::parse(&r.verdict).map_err(Error::Internal)?,
                reasons: Reason::split_stored(&r.reasons),
                agrees: r.agrees == 1,
                known: KnownVerdict {
                    verdict: Verdict::parse(&r.k_verdict).map_err(Error::Internal)?,
                    reasons: Reason::split_stored(&r.k_reasons),
                    note: r.k_note,
                },
            });
        }
        Ok(out)
    }

    pub(crate) async fn calibration_keys(&self, campaign: &Campaign) -> Result<Vec<CalibrationKey>> {
        items_in(&mut *self.read().await?, campaign.id)
            .await?
            .into_iter()
            .map(|it| {
                Ok(CalibrationKey {
                    stage: it.stage()?,
                    known: it.known()?,
                    item_id: it.item_key,
                })
            })
            .collect()
    }

    pub(crate) async fn mark_calibration(
        &self,
        campaign: &Campaign,
        clip_key: &str,
        known: &CheckedVerdict,
    ) -> Result<()> {
        let (campaign_id, campaign_name, clip_key, known) = (
            campaign.id,
            campaign.name.clone(),
            clip_key.to_string(),
            known.clone(),
        );
        self.write(Lock::Structure, move |c| {
            let (campaign_name, clip_key, known) =
                (campaign_name.clone(), clip_key.clone(), known.clone());
            Box::pin(async move {
                let (clip_pk, version_id, item_id): (i64, i64, i64) = qa(
                    "SELECT c.id, v.id, i.id FROM clips c
                     JOIN clip_versions v ON v.id = c.current_version_id
                     JOIN items i ON i.clip_version_id = v.id AND i.stage = 1
                     WHERE c.campaign_id = $1 AND c.clip_key = $2",
                )
                .bind(campaign_id)
                .bind(&clip_key)
                .fetch_optional(&mut *c)
                .await?
                .ok_or_else(|| {
                    Error::NotFound(format!(
                        "no clip `{clip_key}` in campaign `{campaign_name}`"
                    ))
                })?;
                let decided: i64 = qs(
                    "SELECT COUNT(*) FROM decisions d JOIN items i ON i.id = d.item_id WHERE i.clip_version_id = $1",
                )
                .bind(version_id)
                .fetch_one(&mut *c)
                .await?;
                if decided > 0 {
                    return Err(Error::Conflict(format!(
                        "clip `{clip_key}` already has verdicts; only a clip nobody decided becomes a calibration clip"
                    )));
                }
                q("UPDATE clips SET calibration = 1 WHERE id = $1")
                    .bind(clip_pk)
                    .execute(&mut *c)
                    .await?;
                q("UPDATE items SET calibration = 1, rater1_id = NULL, rater2_id = NULL, queue1 = NULL, queue2 = NULL
                   WHERE clip_version_id = $1")
                .bind(version_id)
                .execute(&mut *c)
                .await?;
                q("DELETE FROM calibration_keys WHERE item_id = $1")
                    .bind(item_id)
                    .execute(&mut *c)
                    .await?;
                super::base::insert_keys_in(c, &[(item_id, &known)]).await?;
                refresh_gates_in(c, campaign_id).await
            })
        })
        .await
    }
}

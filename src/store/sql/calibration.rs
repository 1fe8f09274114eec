// Calibration: held-out items with known verdicts, rounds, and the gate on the main
// queue. The gate is kept on the pool membership (`pool_members.cleared`), so that a
// verdict and a queue read it in the statement they already run; every write that can
// change it (a calibration verdict, new calibration items, the campaign's rules)
// recomputes it here. (Shared SQL: compiled once per backend, see store/mod.rs.)

use crate::domain::calibration::status;
use crate::store::write;
use crate::domain::rules::CheckedVerdict;
use crate::domain::{Reason, Role, Stage, Verdict};
use crate::error::{Error, Result};
use crate::store::Lock;
use crate::store::accounts::User;
use crate::store::calibration::{
    CalibrationFeedback, CalibrationItem, CalibrationKey, CalibrationRound, CalibrationScore,
    CalibrationState, CalibrationStatus, KnownCopy, KnownVerdict, ResolvedItem, RoundDecision,
    RoundResult,
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
        k_flaw_unit: Option<String>,
        k_flaw_from: Option<i64>,
        k_flaw_to: Option<i64>,
    }
    let row = qa::<Row>(
        "SELECT i.*, k.verdict AS k_verdict, k.reasons AS k_reasons, k.note AS k_note, k.flaw_unit AS k_flaw_unit,
                        k.flaw_from AS k_flaw_from, k.flaw_to AS k_flaw_to
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
        reasons: Reason::split_stored(&row.k_reasons).map_err(|m| {
            Error::Internal(format!("the known verdict of calibration item `{key}`: {m}"))
        })?,
        note: row.k_note,
        flaw: crate::domain::video::Flaw::from_columns(
            row.k_flaw_unit.as_deref(),
            row.k_flaw_from,
            row.k_flaw_to,
        ),
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
    if validator.role_in(campaign.id) != Some(Role::Validator) || member.is_none() {
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
        write::gates::calibration_status(&mut *self.read().await?, campaign.id, validator.id).await
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
            Err(write::gates::not_cleared(&s))
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
        campaign
            .taxonomy
            .check_stored(stage, &known.reasons)
            .map_err(|m| {
                Error::Internal(format!("the known verdict of calibration item `{key}`: {m}"))
            })?;
        let status = write::gates::calibration_status(&mut *c, campaign.id, validator.id).await?;
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
                    reasons: Reason::split_stored(&reasons)
                        .and_then(|rs| campaign.taxonomy.check_stored(stage, &rs).map(|()| rs))
                        .map_err(|m| {
                        Error::Internal(format!(
                            "the calibration verdict of {} on `{key}`: {m}",
                            validator.name
                        ))
                    })?,
                    agrees: agrees == 1,
                    known: known.clone(),
                    status: status.clone(),
                })
            })
            .transpose()?;
        Ok(CalibrationItem {
            stage,
            item_id: key.to_string(),
            clip: header.clip.for_validator(),
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
        let (campaign, validator, key, req) = (
            campaign.clone(),
            validator.clone(),
            key.to_string(),
            req.clone(),
        );
        self.write_tx(Lock::Item, move |tx| {
            let (campaign, validator, key, req) =
                (campaign.clone(), validator.clone(), key.clone(), req.clone());
            Box::pin(async move {
                write::calibration::record(
                    tx,
                    &campaign,
                    &validator,
                    stage,
                    &key,
                    &req,
                )
                .await
            })
        })
        .await
    }

    pub(crate) async fn reset_calibration(
        &self,
        campaign: &Campaign,
        name: &str,
        by: &str,
    ) -> Result<crate::domain::calibration::RoundDraw> {
        let (campaign_id, name, by) = (campaign.id, name.to_string(), by.to_string());
        self.write_tx(Lock::Item, move |tx| {
            let (name, by) = (name.clone(), by.clone());
            Box::pin(async move { write::calibration::reset(tx, campaign_id, &name, &by).await })
        })
        .await
    }

    pub(crate) async fn pause_for_known_items(
        &self,
        campaign: &Campaign,
        user_id: i64,
        why: &str,
    ) -> Result<Option<i64>> {
        let (campaign_id, why) = (campaign.id, why.to_string());
        self.write_tx(Lock::Item, move |tx| {
            let why = why.clone();
            Box::pin(async move { write::calibration::pause(tx, campaign_id, user_id, &why).await })
        })
        .await
    }

    pub(crate) async fn pause_starts(&self, campaign: &Campaign) -> Result<Vec<(String, i64)>> {
        qa::<(String, i64)>(
            "SELECT u.name, MAX(r.started_at) FROM calibration_rounds r
             JOIN users u ON u.id = r.user_id
             WHERE r.campaign_id = $1 AND r.reopened IS NOT NULL
             GROUP BY u.name",
        )
        .bind(campaign.id)
        .fetch_all(&mut *self.read().await?)
        .await
        .map_err(Error::from)
    }

    /// The known copies of resolved clips in a campaign, by copy id: each with its
    /// source, its items that carry a known verdict and the pair it is served to. One
    /// statement over the copies' items.
    pub(crate) async fn known_copies(&self, campaign: &Campaign) -> Result<Vec<KnownCopy>> {
        type Row = (String, String, String, i64, Option<String>, Option<String>);
        let rows: Vec<Row> = qa::<Row>(
            "SELECT c2.clip_key, c.clip_key, i.item_key,
                    CAST(CASE WHEN k.item_id IS NULL THEN 0 ELSE 1 END AS BIGINT), u1.name, u2.name
             FROM clip_versions v2 JOIN clips c2 ON c2.id = v2.clip_id
             JOIN clip_versions v ON v.id = v2.copy_of JOIN clips c ON c.id = v.clip_id
             JOIN items i ON i.clip_version_id = v2.id
             LEFT JOIN calibration_keys k ON k.item_id = i.id
             LEFT JOIN users u1 ON u1.id = i.rater1_id LEFT JOIN users u2 ON u2.id = i.rater2_id
             WHERE c2.campaign_id = $1 AND v2.copy_of IS NOT NULL
             ORDER BY c2.clip_key, i.stage, i.sort_key",
        )
        .bind(campaign.id)
        .fetch_all(&mut *self.read().await?)
        .await?;
        let mut out: Vec<KnownCopy> = Vec::new();
        for (copy, source, item, keyed, r1, r2) in rows {
            if out.last().is_none_or(|k| k.clip_id != copy) {
                out.push(KnownCopy {
                    clip_id: copy,
                    source,
                    known_items: Vec::new(),
                    validators: Vec::new(),
                });
            }
            let Some(last) = out.last_mut() else { continue };
            if keyed == 1 {
                last.known_items.push(item);
            }
            if last.validators.is_empty()
                && let (Some(a), Some(b)) = (r1, r2)
            {
                let mut pair = vec![a, b];
                pair.sort();
                last.validators = pair;
            }
        }
        Ok(out)
    }

    /// The items of the benchmark the author resolved (current versions), in review
    /// order, with their pair: at most `limit`.
    pub(crate) async fn resolved_items(
        &self,
        campaign: &Campaign,
        limit: i64,
    ) -> Result<Vec<ResolvedItem>> {
        type Row = (String, String, i64, String, String, Option<String>, Option<String>);
        let rows: Vec<Row> = qa::<Row>(
            "SELECT c.clip_key, t.code, i.stage, i.item_key, r.verdict, u1.name, u2.name
             FROM items i JOIN resolutions r ON r.item_id = i.id
             JOIN clip_versions v ON v.id = i.clip_version_id
             JOIN clips c ON c.id = v.clip_id
             JOIN tasks t ON t.id = i.task_id
             LEFT JOIN users u1 ON u1.id = i.rater1_id LEFT JOIN users u2 ON u2.id = i.rater2_id
             WHERE i.campaign_id = $1 AND i.calibration = 0 AND i.is_current = 1
               AND i.outcome IN ('split_accepted', 'split_rejected')
             ORDER BY i.sort_key, i.stage LIMIT $2",
        )
        .bind(campaign.id)
        .bind(limit)
        .fetch_all(&mut *self.read().await?)
        .await?;
        rows.into_iter()
            .map(|(clip_id, task, stage, item_id, verdict, r1, r2)| {
                Ok(ResolvedItem {
                    clip_id,
                    task,
                    stage: Stage::from_number(stage)
                        .ok_or_else(|| Error::Internal(format!("stored stage {stage}")))?,
                    item_id,
                    verdict,
                    reviewers: r1.into_iter().chain(r2).collect(),
                })
            })
            .collect()
    }

    pub(crate) async fn copy_resolved(
        &self,
        campaign: &Campaign,
        source: &str,
        copy: &str,
    ) -> Result<crate::store::calibration::KnownCopy> {
        let (name, source, copy) = (
            campaign.name.clone(),
            source.to_string(),
            copy.to_string(),
        );
        let made = self
            .write_tx(Lock::Import, move |tx| {
                let (name, source, copy) = (name.clone(), source.clone(), copy.clone());
                Box::pin(
                    async move { write::known::copy_resolved(tx, &name, &source, &copy).await },
                )
            })
            .await?;
        if let Err(e) = self.refresh_statistics().await {
            tracing::warn!(error = %e, "cannot refresh the planner's statistics after an import");
        }
        Ok(made)
    }

    pub(crate) async fn lift_pause(&self, campaign: &Campaign, name: &str, by: &str) -> Result<i64> {
        let (campaign_id, name, by) = (campaign.id, name.to_string(), by.to_string());
        self.write_tx(Lock::Item, move |tx| {
            let (name, by) = (name.clone(), by.clone());
            Box::pin(async move { write::calibration::lift(tx, campaign_id, &name, &by).await })
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
        let (rules, items, histories) =
            write::gates::calibration_facts(&mut *c, campaign.id, None).await?;
        Ok(pool
            .into_iter()
            .map(|(id, name)| CalibrationScore {
                validator: name,
                status: status(&items, rules, histories.get(&id), id),
            })
            .collect())
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
            k_flaw_unit: Option<String>,
            k_flaw_from: Option<i64>,
            k_flaw_to: Option<i64>,
        }
        let mut c = self.read().await?;
        let only = validator.map_or(0, |u| u.id);
        let (rules, items, histories) =
            write::gates::calibration_facts(&mut *c, campaign.id, validator.map(|u| u.id)).await?;
        #[derive(sqlx::FromRow)]
        struct RoundRow {
            user_id: i64,
            name: String,
            round: i64,
            passed_at: Option<i64>,
            reset_by: Option<String>,
            started_at: i64,
            reopened: Option<String>,
            lifted_by: Option<String>,
        }
        let rounds = qa::<RoundRow>(
            "SELECT r.user_id, u.name, r.round, r.passed_at, r.reset_by, r.started_at, r.reopened,
                    r.lifted_by
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
                    k.verdict AS k_verdict, k.reasons AS k_reasons, k.note AS k_note, k.flaw_unit AS k_flaw_unit,
                        k.flaw_from AS k_flaw_from, k.flaw_to AS k_flaw_to
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
            started_at,
            reopened,
            lifted_by,
        } in rounds
        {
            let result = if passed_at.is_some() {
                RoundResult::Passed
            } else if lifted_by.is_some() {
                RoundResult::Lifted
            } else if last.get(&user) == Some(&round) {
                match status(&items, rules, histories.get(&user), user).state {
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
                started_at,
                reopened,
                lifted_by,
                decisions: Vec::new(),
            });
        }
        for r in rows {
            let Some(&i) = at.get(&(r.validator_id, r.round)) else {
                continue;
            };
            let reasons = Reason::split_stored(&r.reasons).map_err(|m| {
                Error::Internal(format!("a calibration verdict on `{}`: {m}", r.item_key))
            })?;
            let known_reasons = Reason::split_stored(&r.k_reasons).map_err(|m| {
                Error::Internal(format!(
                    "the known verdict of calibration item `{}`: {m}",
                    r.item_key
                ))
            })?;
            out[i].decisions.push(RoundDecision {
                stage: Stage::from_number(r.stage)
                    .ok_or_else(|| Error::Internal("stored stage".into()))?,
                item_id: r.item_key,
                verdict: Verdict::parse(&r.verdict).map_err(Error::Internal)?,
                reasons,
                agrees: r.agrees == 1,
                known: KnownVerdict {
                    verdict: Verdict::parse(&r.k_verdict).map_err(Error::Internal)?,
                    reasons: known_reasons,
                    note: r.k_note,
                    flaw: crate::domain::video::Flaw::from_columns(
                        r.k_flaw_unit.as_deref(),
                        r.k_flaw_from,
                        r.k_flaw_to,
                    ),
                },
            });
        }
        Ok(out)
    }

    pub(crate) async fn calibration_keys(&self, campaign: &Campaign) -> Result<Vec<CalibrationKey>> {
        Ok(
            write::gates::calibration_items(&mut *self.read().await?, campaign.id)
                .await?
                .into_iter()
                .map(|it| CalibrationKey {
                    stage: it.stage,
                    known: it.known,
                    item_id: it.key,
                })
                .collect(),
        )
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
        self.write_tx(Lock::Structure, move |tx| {
            let (campaign_name, clip_key, known) =
                (campaign_name.clone(), clip_key.clone(), known.clone());
            Box::pin(async move {
                write::calibration::mark(tx, (campaign_id, &campaign_name), &clip_key, &known)
                    .await
            })
        })
        .await
    }
}

//! Calibration's entry points on [`Store`]: a validator's status and items, their
//! verdicts and rounds, the known items' pauses, and the known copies of resolved
//! clips. The gate is kept on the pool membership (`pool_members.cleared`), so that a
//! verdict and a queue read it in the statement they already run; the writes that can
//! change it are in the parent module and `gates`.

use crate::domain::calibration::{RoundDraw, status};
use crate::domain::rules::CheckedVerdict;
use crate::domain::{Reason, Role, Stage, Verdict};
use crate::error::{Error, Result};
use crate::store::accounts::User;
use crate::store::areas::gates::{KeyRow, key_columns};
use crate::store::areas::{gates, known as known_items};
use crate::store::calibration::{
    CalibrationFeedback, CalibrationItem, CalibrationKey, CalibrationRound, CalibrationScore,
    CalibrationState, CalibrationStatus, KnownCopy, KnownVerdict, ResolvedItem, RoundDecision,
    RoundResult,
};
use crate::store::catalog::Campaign;
use crate::store::db::{FromRow, Row, Tx, named, row, sql};
use crate::store::review::{ItemHeader, ItemViewRow, VerdictRequest};
use crate::store::{Lock, Store};
use std::collections::HashMap;

impl Store {
    /// A validator's calibration status in a campaign.
    pub async fn calibration_status(
        &self,
        campaign: &Campaign,
        validator: &User,
    ) -> Result<CalibrationStatus> {
        read_tx!(self, |c| gates::calibration_status(
            c,
            campaign.id,
            validator.id
        )
        .await)
    }

    /// Refuses a validator whose main queue is not open yet.
    pub async fn require_calibrated(&self, campaign: &Campaign, validator: &User) -> Result<()> {
        let s = self.calibration_status(campaign, validator).await?;
        if s.open() {
            Ok(())
        } else {
            Err(gates::not_cleared(&s))
        }
    }

    /// One calibration item, with the known verdict once decided in this round.
    pub async fn calibration_item(
        &self,
        campaign: &Campaign,
        validator: &User,
        stage: Stage,
        key: &str,
    ) -> Result<CalibrationItem> {
        read_tx!(self, |c| calibration_item(
            c, campaign, validator, stage, key
        )
        .await)
    }

    /// Records a calibration verdict and answers with the known one.
    pub async fn record_calibration(
        &self,
        campaign: &Campaign,
        validator: &User,
        stage: Stage,
        key: &str,
        req: &VerdictRequest,
    ) -> Result<CalibrationFeedback> {
        write_tx!(self, Lock::Item, (campaign, validator, key, req), |tx| {
            super::record(tx, campaign, validator, stage, key, req).await
        })
    }

    /// Starts another calibration round for a validator who did not pass.
    pub async fn reset_calibration(
        &self,
        campaign: &Campaign,
        name: &str,
        by: &str,
    ) -> Result<RoundDraw> {
        let campaign_id = campaign.id;
        write_tx!(self, Lock::Item, (name, by), |tx| {
            super::reset(tx, campaign_id, name, by).await
        })
    }

    /// Pauses a validator's main queue for their catch rate on the known items (`why`
    /// says so): a calibration round opens and the gate closes, in one write. `None`
    /// when the queue was not open or is paused already; else the round opened.
    pub async fn pause_for_known_items(
        &self,
        campaign: &Campaign,
        user_id: i64,
        why: &str,
    ) -> Result<Option<i64>> {
        let campaign_id = campaign.id;
        write_tx!(self, Lock::Item, (why), |tx| {
            super::pause(tx, campaign_id, user_id, why).await
        })
    }

    /// When each validator's queue was last paused by the known items (µs), by name.
    pub async fn pause_starts(&self, campaign: &Campaign) -> Result<Vec<(String, i64)>> {
        let campaign = campaign.id;
        read_tx!(self, long, |c| {
            c.fetch(
                sql!(
                    "SELECT u.name, MAX(r.started_at) FROM calibration_rounds r
                     JOIN users u ON u.id = r.user_id
                     WHERE r.campaign_id = :campaign AND r.reopened IS NOT NULL
                     GROUP BY u.name"
                ),
                named! { campaign },
            )
            .await
        })
    }

    /// The known copies of resolved clips in a campaign, by copy id: each with its
    /// source, its items that carry a known verdict and the pair it is served to. One
    /// statement over the copies' items.
    pub async fn known_copies(&self, campaign: &Campaign) -> Result<Vec<KnownCopy>> {
        type Found = (String, String, String, i64, Option<String>, Option<String>);
        let campaign = campaign.id;
        let rows: Vec<Found> = read_tx!(self, long, |c| {
            c.fetch(
                sql!(
                    "SELECT c2.clip_key, c.clip_key, i.item_key,
                            CAST(CASE WHEN k.item_id IS NULL THEN 0 ELSE 1 END AS BIGINT),
                            u1.name, u2.name
                     FROM clip_versions v2 JOIN clips c2 ON c2.id = v2.clip_id
                     JOIN clip_versions v ON v.id = v2.copy_of JOIN clips c ON c.id = v.clip_id
                     JOIN items i ON i.clip_version_id = v2.id
                     LEFT JOIN calibration_keys k ON k.item_id = i.id
                     LEFT JOIN users u1 ON u1.id = i.rater1_id
                     LEFT JOIN users u2 ON u2.id = i.rater2_id
                     WHERE c2.campaign_id = :campaign AND v2.copy_of IS NOT NULL
                     ORDER BY c2.clip_key, i.stage, i.sort_key"
                ),
                named! { campaign },
            )
            .await
        })?;
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
    pub async fn resolved_items(
        &self,
        campaign: &Campaign,
        limit: i64,
    ) -> Result<Vec<ResolvedItem>> {
        type Found = (
            String,
            String,
            i64,
            String,
            String,
            Option<String>,
            Option<String>,
        );
        let campaign = campaign.id;
        let rows: Vec<Found> = read_tx!(self, long, |c| {
            c.fetch(
                sql!(
                    "SELECT c.clip_key, t.code, i.stage, i.item_key, r.verdict, u1.name, u2.name
                     FROM items i JOIN resolutions r ON r.item_id = i.id
                     JOIN clip_versions v ON v.id = i.clip_version_id
                     JOIN clips c ON c.id = v.clip_id
                     JOIN tasks t ON t.id = i.task_id
                     LEFT JOIN users u1 ON u1.id = i.rater1_id
                     LEFT JOIN users u2 ON u2.id = i.rater2_id
                     WHERE i.campaign_id = :campaign AND i.calibration = 0 AND i.is_current = 1
                       AND i.outcome IN ('split_accepted', 'split_rejected')
                     ORDER BY i.sort_key, i.stage LIMIT :limit"
                ),
                named! { campaign, limit },
            )
            .await
        })?;
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

    /// Copies a clip the author resolved as a known clip under a new id, served to a pair
    /// that reviewed none of it, the author's verdicts its known ones (one write, alone
    /// as an import is; then the planner's statistics follow).
    pub async fn copy_resolved(
        &self,
        campaign: &Campaign,
        source: &str,
        copy: &str,
    ) -> Result<KnownCopy> {
        let name = &campaign.name;
        let made = write_tx!(self, Lock::Import, (name, source, copy), |tx| {
            known_items::copy_resolved(tx, name, source, copy).await
        })?;
        self.after_import().await;
        Ok(made)
    }

    /// An admin lifts the known items' pause on a validator's queue: the round it
    /// opened stays on record, marked lifted; answers that round.
    pub async fn lift_pause(&self, campaign: &Campaign, name: &str, by: &str) -> Result<i64> {
        let campaign_id = campaign.id;
        write_tx!(self, Lock::Item, (name, by), |tx| {
            super::lift(tx, campaign_id, name, by).await
        })
    }

    /// Every pool validator's calibration, for the admin.
    pub async fn calibration_scores(&self, campaign: &Campaign) -> Result<Vec<CalibrationScore>> {
        let campaign = campaign.id;
        let (pool, (rules, items, histories)) = read_tx!(self, long, |c| {
            let pool: Vec<(i64, String)> = c
                .fetch(
                    sql!(
                        "SELECT u.id, u.name FROM pool_members p JOIN users u ON u.id = p.user_id
                         WHERE p.campaign_id = :campaign ORDER BY p.pool_index"
                    ),
                    named! { campaign },
                )
                .await?;
            Ok::<_, Error>((pool, gates::calibration_facts(c, campaign, None).await?))
        })?;
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
    pub async fn calibration_rounds(
        &self,
        campaign: &Campaign,
        validator: Option<&User>,
    ) -> Result<Vec<CalibrationRound>> {
        read_tx!(self, long, |c| calibration_rounds(
            c,
            campaign.id,
            validator.map(|u| u.id)
        )
        .await)
    }

    /// The calibration items with their known verdicts.
    pub async fn calibration_keys(&self, campaign: &Campaign) -> Result<Vec<CalibrationKey>> {
        let items = read_tx!(self, long, |c| gates::calibration_items(c, campaign.id)
            .await)?;
        Ok(items
            .into_iter()
            .map(|it| CalibrationKey {
                stage: it.stage,
                known: it.known,
                item_id: it.key,
            })
            .collect())
    }

    /// Makes an imported clip that nobody has decided yet a calibration clip, with the
    /// known verdict of its Stage 1 item.
    pub async fn mark_calibration(
        &self,
        campaign: &Campaign,
        clip_key: &str,
        known: &CheckedVerdict,
    ) -> Result<()> {
        let (campaign_id, campaign_name) = (campaign.id, &campaign.name);
        write_tx!(
            self,
            Lock::Structure,
            (campaign_name, clip_key, known),
            |tx| super::mark(tx, (campaign_id, campaign_name), clip_key, known).await
        )
    }
}

/// The calibration item of `stage` named `key` with its view and known verdict.
async fn item_view_in(
    c: &mut impl Tx,
    campaign: i64,
    stage: Stage,
    key: &str,
) -> Result<(ItemHeader, KnownVerdict)> {
    struct Found {
        item: ItemViewRow,
        key: KeyRow,
    }
    impl FromRow for Found {
        fn from_row(r: &impl Row) -> Result<Self> {
            Ok(Found {
                item: ItemViewRow::from_row(r)?,
                key: KeyRow::from_row(r)?,
            })
        }
    }
    let row: Found = c
        .fetch_opt(
            sql!(concat!(
                "SELECT i.*, ",
                key_columns!(),
                " FROM item_details i JOIN calibration_keys k ON k.item_id = i.id
                 WHERE i.campaign_id = :campaign AND i.stage = :stage AND i.item_key = :key
                   AND i.is_current = 1 AND i.calibration = 1"
            )),
            named! { campaign, stage: stage.number(), key },
        )
        .await?
        .ok_or_else(|| {
            Error::NotFound(format!(
                "no calibration {} `{key}` in Stage {stage}",
                stage.item_noun()
            ))
        })?;
    Ok((ItemHeader::try_from(row.item)?, row.key.known(key)?))
}

async fn require_pool_in(c: &mut impl Tx, campaign: &Campaign, validator: &User) -> Result<()> {
    let member: Option<i64> = c
        .scalar_opt(
            sql!(
                "SELECT user_id FROM pool_members
                 WHERE campaign_id = :campaign AND user_id = :validator"
            ),
            named! { campaign: campaign.id, validator: validator.id },
        )
        .await?;
    if validator.role_in(campaign.id) != Some(Role::Validator) || member.is_none() {
        return Err(Error::Forbidden(format!(
            "{} is not in the validator pool of campaign `{}`",
            validator.name, campaign.name
        )));
    }
    Ok(())
}

async fn calibration_item(
    c: &mut impl Tx,
    campaign: &Campaign,
    validator: &User,
    stage: Stage,
    key: &str,
) -> Result<CalibrationItem> {
    require_pool_in(c, campaign, validator).await?;
    let (header, known) = item_view_in(c, campaign.id, stage, key).await?;
    campaign
        .taxonomy
        .check_stored(stage, &known.reasons)
        .map_err(|m| {
            Error::Internal(format!(
                "the known verdict of calibration item `{key}`: {m}"
            ))
        })?;
    let status = gates::calibration_status(c, campaign.id, validator.id).await?;
    let mine: Option<(String, String, i64)> = c
        .fetch_opt(
            sql!(
                "SELECT verdict, reasons, agrees FROM calibration_decisions
                 WHERE item_id = :item AND validator_id = :validator AND round = :round"
            ),
            named! { item: header.id, validator: validator.id, round: status.round },
        )
        .await?;
    let feedback = mine
        .map(
            |(verdict, reasons, agrees)| -> Result<CalibrationFeedback> {
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
            },
        )
        .transpose()?;
    Ok(CalibrationItem {
        stage,
        item_id: key.to_string(),
        clip: header.clip.for_validator(),
        question: header.question,
        feedback,
    })
}

async fn calibration_rounds(
    c: &mut impl Tx,
    campaign: i64,
    validator: Option<i64>,
) -> Result<Vec<CalibrationRound>> {
    row! {
        struct Decided {
            validator_id: i64,
            round: i64,
            stage: i64,
            item_key: String,
            verdict: String,
            reasons: String,
            agrees: i64,
        }
    }
    struct Found {
        d: Decided,
        key: KeyRow,
    }
    impl FromRow for Found {
        fn from_row(r: &impl Row) -> Result<Self> {
            Ok(Found {
                d: Decided::from_row(r)?,
                key: KeyRow::from_row(r)?,
            })
        }
    }
    row! {
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
    }
    let only = validator.unwrap_or(0);
    let (rules, items, histories) = gates::calibration_facts(c, campaign, validator).await?;
    let rounds: Vec<RoundRow> = c
        .fetch(
            sql!(
                "SELECT r.user_id, u.name, r.round, r.passed_at, r.reset_by, r.started_at,
                        r.reopened, r.lifted_by
                 FROM calibration_rounds r JOIN users u ON u.id = r.user_id
                 WHERE r.campaign_id = :campaign AND (:only = 0 OR r.user_id = :only)
                 ORDER BY u.name, r.round"
            ),
            named! { campaign, only },
        )
        .await?;
    let rows: Vec<Found> = c
        .fetch(
            sql!(concat!(
                "SELECT d.validator_id, d.round, i.stage, i.item_key, d.verdict, d.reasons,
                        d.agrees, ",
                key_columns!(),
                " FROM calibration_decisions d
                 JOIN items i ON i.id = d.item_id
                 JOIN calibration_keys k ON k.item_id = d.item_id
                 WHERE d.campaign_id = :campaign AND (:only = 0 OR d.validator_id = :only)
                 ORDER BY d.decided_at, d.id"
            )),
            named! { campaign, only },
        )
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
    for Found { d: r, key } in rows {
        let Some(&i) = at.get(&(r.validator_id, r.round)) else {
            continue;
        };
        let reasons = Reason::split_stored(&r.reasons).map_err(|m| {
            Error::Internal(format!("a calibration verdict on `{}`: {m}", r.item_key))
        })?;
        let known = key.known(&r.item_key)?;
        out[i].decisions.push(RoundDecision {
            stage: Stage::from_number(r.stage)
                .ok_or_else(|| Error::Internal("stored stage".into()))?,
            item_id: r.item_key,
            verdict: Verdict::parse(&r.verdict).map_err(Error::Internal)?,
            reasons,
            agrees: r.agrees == 1,
            known,
        });
    }
    Ok(out)
}

//! Calibration: before reviewing, each validator decides held-out items whose verdicts
//! are known, sees the known verdict after each one, and opens the main queue once they
//! agree with enough of them. Calibration verdicts live in their own table and never
//! reach the QC statistics or the exports.

use super::accounts::{User, user_by_name_in};
use super::catalog::{Campaign, insert_key};
use super::review::{ClipView, QuestionView, VerdictRequest};
use super::{Conn, Store, col, conn};
use crate::clock::now_micros;
use crate::domain::rules::{CheckedVerdict, check_time_spent, check_verdict};
use crate::domain::{Level, Reason, Role, Stage, Verdict};
use crate::error::{Error, Result};
use serde::Serialize;

/// Where a validator stands in calibration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CalibrationState {
    /// The campaign has no calibration items: nothing to pass.
    NotRequired,
    InProgress,
    Passed,
    /// Every item of the round decided, below the threshold: waiting for an admin.
    Failed,
}

#[derive(Debug, Clone, Serialize)]
pub struct CalibrationStatus {
    pub state: CalibrationState,
    pub round: i64,
    pub decided: i64,
    pub agreed: i64,
    /// Calibration items in the campaign.
    pub total: i64,
    /// Items to decide before the agreement can pass.
    pub required: i64,
    pub threshold: f64,
    /// The next item to decide: (stage, item id).
    pub next: Option<(Stage, String)>,
}

impl CalibrationStatus {
    pub fn agreement(&self) -> Option<f64> {
        (self.decided > 0).then(|| self.agreed as f64 / self.decided as f64)
    }

    /// Whether the main queue is open.
    pub fn open(&self) -> bool {
        matches!(
            self.state,
            CalibrationState::NotRequired | CalibrationState::Passed
        )
    }
}

/// A known verdict.
#[derive(Debug, Clone, Serialize)]
pub struct KnownVerdict {
    pub verdict: Verdict,
    pub reasons: Vec<Reason>,
    pub note: String,
}

/// What the validator gets back after a calibration verdict.
#[derive(Debug, Clone, Serialize)]
pub struct CalibrationFeedback {
    pub verdict: Verdict,
    pub reasons: Vec<Reason>,
    pub agrees: bool,
    pub known: KnownVerdict,
    pub status: CalibrationStatus,
}

/// A calibration item as its validator sees it.
#[derive(Debug, Clone, Serialize)]
pub struct CalibrationItem {
    pub stage: Stage,
    pub item_id: String,
    pub clip: ClipView,
    pub question: Option<QuestionView>,
    /// Once decided in the current round: the verdict and the known one.
    pub feedback: Option<CalibrationFeedback>,
}

/// One calibration item with its known verdict, for the admin.
#[derive(Debug, Clone, Serialize)]
pub struct CalibrationKey {
    pub stage: Stage,
    pub item_id: String,
    pub known: KnownVerdict,
}

/// A validator's calibration, for the admin.
#[derive(Debug, Clone, Serialize)]
pub struct CalibrationScore {
    pub validator: String,
    #[serde(flatten)]
    pub status: CalibrationStatus,
}

fn known_of(row: &sqlx::any::AnyRow) -> Result<KnownVerdict> {
    Ok(KnownVerdict {
        verdict: Verdict::parse(&col::<String>(row, "k_verdict")?).map_err(Error::Internal)?,
        reasons: Reason::split_stored(&col::<String>(row, "k_reasons")?),
        note: col(row, "k_note")?,
    })
}

/// The calibration items of a campaign in the order they are shown: clips, then
/// questions. (id, stage, item key)
async fn calibration_items_in(c: &mut Conn, campaign_id: i64) -> Result<Vec<(i64, Stage, String)>> {
    let rows = sqlx::query(
        "SELECT i.id, i.stage, c.clip_key, q.question_key
         FROM items i
         JOIN calibration_keys k ON k.item_id = i.id
         JOIN clip_versions v ON v.id = i.clip_version_id
         JOIN clips c ON c.id = v.clip_id AND c.current_version_id = v.id
         LEFT JOIN questions q ON q.id = i.question_id
         WHERE i.campaign_id = $1 AND i.calibration = 1
         ORDER BY i.stage, c.clip_key, q.position",
    )
    .bind(campaign_id)
    .fetch_all(&mut *c)
    .await?;
    rows.iter()
        .map(|r| {
            let stage = Stage::from_number(col(r, "stage")?)
                .ok_or_else(|| Error::Internal("stored stage".into()))?;
            let key = match stage {
                Stage::Clip => col(r, "clip_key")?,
                Stage::Question => col::<Option<String>>(r, "question_key")?.unwrap_or_default(),
            };
            Ok((col(r, "id")?, stage, key))
        })
        .collect()
}

async fn status_in(c: &mut Conn, campaign: &Campaign, user_id: i64) -> Result<CalibrationStatus> {
    let items = calibration_items_in(c, campaign.id).await?;
    let total = i64::try_from(items.len()).unwrap_or(i64::MAX);
    let s = campaign.settings;
    let required = s.calibration_min_items.min(total);
    let mut status = CalibrationStatus {
        state: CalibrationState::NotRequired,
        round: 0,
        decided: 0,
        agreed: 0,
        total,
        required,
        threshold: s.calibration_threshold,
        next: None,
    };
    if total == 0 {
        return Ok(status);
    }
    let rounds = sqlx::query(
        "SELECT round, passed_at FROM calibration_rounds WHERE campaign_id = $1 AND user_id = $2 ORDER BY round",
    )
    .bind(campaign.id)
    .bind(user_id)
    .fetch_all(&mut *c)
    .await?;
    status.round = match rounds.last() {
        Some(r) => col(r, "round")?,
        None => 1,
    };
    let passed = rounds
        .iter()
        .map(|r| col::<Option<i64>>(r, "passed_at"))
        .collect::<Result<Vec<_>>>()?
        .iter()
        .any(Option::is_some);
    let decided_rows = sqlx::query(
        "SELECT item_id, agrees FROM calibration_decisions WHERE campaign_id = $1 AND validator_id = $2 AND round = $3",
    )
    .bind(campaign.id)
    .bind(user_id)
    .bind(status.round)
    .fetch_all(&mut *c)
    .await?;
    let mut decided_items = std::collections::HashSet::new();
    for r in &decided_rows {
        decided_items.insert(col::<i64>(r, "item_id")?);
        status.agreed += col::<i64>(r, "agrees")?;
    }
    status.decided = i64::try_from(decided_items.len()).unwrap_or(i64::MAX);
    let reached = status.decided >= required
        && status.agreed as f64 >= s.calibration_threshold * status.decided as f64 - 1e-9;
    status.state = if passed || reached {
        CalibrationState::Passed
    } else if status.decided >= total {
        CalibrationState::Failed
    } else {
        CalibrationState::InProgress
    };
    if status.state == CalibrationState::InProgress {
        status.next = items
            .into_iter()
            .find(|(id, _, _)| !decided_items.contains(id))
            .map(|(_, stage, key)| (stage, key));
    }
    Ok(status)
}

/// The calibration item of `stage` named `key`: (item id, clip and question views,
/// the question's level, the known verdict).
async fn calibration_item_in(
    c: &mut Conn,
    campaign: &Campaign,
    stage: Stage,
    key: &str,
) -> Result<(
    i64,
    ClipView,
    Option<QuestionView>,
    Option<Level>,
    KnownVerdict,
)> {
    let items = calibration_items_in(c, campaign.id).await?;
    let (id, _, _) = items
        .into_iter()
        .find(|(_, s, k)| *s == stage && k == key)
        .ok_or_else(|| {
            Error::NotFound(format!(
                "no calibration {} `{key}` in Stage {stage}",
                stage.item_noun()
            ))
        })?;
    let row = sqlx::query(concat!(
        "SELECT ",
        crate::item_columns!(),
        ", k.verdict AS k_verdict, k.reasons AS k_reasons, k.note AS k_note",
        crate::item_joins!(),
        " JOIN calibration_keys k ON k.item_id = i.id WHERE i.id = $1"
    ))
    .bind(id)
    .fetch_one(&mut *c)
    .await?;
    let header = super::review::item_header(&row)?;
    let level = header
        .question
        .as_ref()
        .and_then(|q| Level::parse(&q.level).ok());
    Ok((id, header.clip, header.question, level, known_of(&row)?))
}

impl Store {
    /// A validator's calibration status in a campaign.
    pub async fn calibration_status(
        &self,
        campaign: &Campaign,
        validator: &User,
    ) -> Result<CalibrationStatus> {
        status_in(&mut *conn(self).await?, campaign, validator.id).await
    }

    /// Refuses a validator whose main queue is not open yet.
    pub async fn require_calibrated(&self, campaign: &Campaign, validator: &User) -> Result<()> {
        let s = self.calibration_status(campaign, validator).await?;
        if s.open() {
            return Ok(());
        }
        Err(Error::Forbidden(match s.state {
            CalibrationState::Failed => format!(
                "calibration was not passed in round {} ({} of {} agreed); an admin can start another round",
                s.round, s.agreed, s.decided
            ),
            _ => format!(
                "finish calibration first: {} of {} calibration items decided",
                s.decided, s.required
            ),
        }))
    }

    /// One calibration item, with the known verdict once decided in this round.
    pub async fn calibration_item(
        &self,
        campaign: &Campaign,
        validator: &User,
        stage: Stage,
        key: &str,
    ) -> Result<CalibrationItem> {
        self.require_pool(campaign, validator).await?;
        let mut c = conn(self).await?;
        let (id, clip, question, _, known) =
            calibration_item_in(&mut c, campaign, stage, key).await?;
        let status = status_in(&mut c, campaign, validator.id).await?;
        let mine = sqlx::query(
            "SELECT verdict, reasons, agrees FROM calibration_decisions
             WHERE item_id = $1 AND validator_id = $2 AND round = $3",
        )
        .bind(id)
        .bind(validator.id)
        .bind(status.round)
        .fetch_optional(&mut *c)
        .await?;
        let feedback = mine
            .map(|r| -> Result<CalibrationFeedback> {
                Ok(CalibrationFeedback {
                    verdict: Verdict::parse(&col::<String>(&r, "verdict")?)
                        .map_err(Error::Internal)?,
                    reasons: Reason::split_stored(&col::<String>(&r, "reasons")?),
                    agrees: col::<i64>(&r, "agrees")? == 1,
                    known: known.clone(),
                    status: status.clone(),
                })
            })
            .transpose()?;
        Ok(CalibrationItem {
            stage,
            item_id: key.to_string(),
            clip,
            question,
            feedback,
        })
    }

    async fn require_pool(&self, campaign: &Campaign, validator: &User) -> Result<()> {
        if validator.role != Role::Validator || !self.in_pool(campaign, validator).await? {
            return Err(Error::Forbidden(format!(
                "{} is not in the validator pool of campaign `{}`",
                validator.name, campaign.name
            )));
        }
        Ok(())
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
        self.require_pool(campaign, validator).await?;
        let mut tx = self.begin_write().await?;
        let (id, _, _, level, known) = calibration_item_in(&mut tx, campaign, stage, key).await?;
        let checked: CheckedVerdict =
            check_verdict(stage, level, req.verdict, &req.reasons, &req.note)?;
        let time_spent = check_time_spent(req.time_spent_ms)?;
        let status = status_in(&mut tx, campaign, validator.id).await?;
        let reasons = Reason::join(&checked.reasons);
        let earlier = sqlx::query(
            "SELECT verdict, reasons, note, agrees FROM calibration_decisions
             WHERE item_id = $1 AND validator_id = $2 AND round = $3",
        )
        .bind(id)
        .bind(validator.id)
        .bind(status.round)
        .fetch_optional(&mut *tx)
        .await?;
        if let Some(e) = earlier {
            let same = col::<String>(&e, "verdict")? == checked.verdict.as_str()
                && col::<String>(&e, "reasons")? == reasons
                && col::<String>(&e, "note")? == checked.note;
            if same {
                return Ok(CalibrationFeedback {
                    verdict: checked.verdict,
                    reasons: checked.reasons,
                    agrees: col::<i64>(&e, "agrees")? == 1,
                    known,
                    status,
                });
            }
            return Err(Error::Conflict(format!(
                "{} `{key}` is already decided in this calibration round; calibration verdicts do not change",
                stage.item_noun()
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
        sqlx::query(
            "INSERT INTO calibration_rounds (campaign_id, user_id, round, started_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (campaign_id, user_id, round) DO NOTHING",
        )
        .bind(campaign.id)
        .bind(validator.id)
        .bind(status.round)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        let agrees = checked.verdict == known.verdict;
        sqlx::query(
            "INSERT INTO calibration_decisions (campaign_id, item_id, validator_id, round, verdict, reasons, note, time_spent_ms, decided_at, agrees)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        )
        .bind(campaign.id)
        .bind(id)
        .bind(validator.id)
        .bind(status.round)
        .bind(checked.verdict.as_str())
        .bind(&reasons)
        .bind(&checked.note)
        .bind(time_spent)
        .bind(now)
        .bind(i64::from(agrees))
        .execute(&mut *tx)
        .await?;
        let after = status_in(&mut tx, campaign, validator.id).await?;
        if after.state == CalibrationState::Passed {
            sqlx::query(
                "UPDATE calibration_rounds SET passed_at = $1 WHERE campaign_id = $2 AND user_id = $3 AND round = $4 AND passed_at IS NULL",
            )
            .bind(now)
            .bind(campaign.id)
            .bind(validator.id)
            .bind(after.round)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(CalibrationFeedback {
            verdict: checked.verdict,
            reasons: checked.reasons,
            agrees,
            known,
            status: after,
        })
    }

    /// Starts another calibration round for a validator who did not pass.
    pub async fn reset_calibration(
        &self,
        campaign: &Campaign,
        name: &str,
        by: &str,
    ) -> Result<i64> {
        let mut tx = self.begin_write().await?;
        let user = user_by_name_in(&mut tx, name)
            .await?
            .ok_or_else(|| Error::NotFound(format!("no user named `{name}`")))?;
        let status = status_in(&mut tx, campaign, user.id).await?;
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
        sqlx::query(
            "INSERT INTO calibration_rounds (campaign_id, user_id, round, started_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (campaign_id, user_id, round) DO NOTHING",
        )
        .bind(campaign.id)
        .bind(user.id)
        .bind(status.round)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        let next = status.round + 1;
        sqlx::query(
            "INSERT INTO calibration_rounds (campaign_id, user_id, round, started_at, reset_by) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(campaign.id)
        .bind(user.id)
        .bind(next)
        .bind(now)
        .bind(by)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(next)
    }

    /// Every pool validator's calibration, for the admin.
    pub async fn calibration_scores(&self, campaign: &Campaign) -> Result<Vec<CalibrationScore>> {
        let mut c = conn(self).await?;
        let pool = sqlx::query(
            "SELECT u.id, u.name FROM pool_members p JOIN users u ON u.id = p.user_id
             WHERE p.campaign_id = $1 ORDER BY p.pool_index",
        )
        .bind(campaign.id)
        .fetch_all(&mut *c)
        .await?;
        let mut out = Vec::new();
        for r in &pool {
            out.push(CalibrationScore {
                validator: col(r, "name")?,
                status: status_in(&mut c, campaign, col(r, "id")?).await?,
            });
        }
        Ok(out)
    }

    /// The calibration items with their known verdicts.
    pub async fn calibration_keys(&self, campaign: &Campaign) -> Result<Vec<CalibrationKey>> {
        let mut c = conn(self).await?;
        let items = calibration_items_in(&mut c, campaign.id).await?;
        let mut out = Vec::new();
        for (_, stage, key) in items {
            let (_, _, _, _, known) = calibration_item_in(&mut c, campaign, stage, &key).await?;
            out.push(CalibrationKey {
                stage,
                item_id: key,
                known,
            });
        }
        Ok(out)
    }

    /// Makes an imported clip that nobody has decided yet a calibration clip, with the
    /// known verdict of its Stage 1 item.
    pub async fn mark_calibration(
        &self,
        campaign: &Campaign,
        clip_key: &str,
        known: &CheckedVerdict,
    ) -> Result<()> {
        let mut tx = self.begin_write().await?;
        let row = sqlx::query(
            "SELECT c.id AS clip_pk, v.id AS version_id, i.id AS item_id FROM clips c
             JOIN clip_versions v ON v.id = c.current_version_id
             JOIN items i ON i.clip_version_id = v.id AND i.stage = 1
             WHERE c.campaign_id = $1 AND c.clip_key = $2",
        )
        .bind(campaign.id)
        .bind(clip_key)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(|| {
            Error::NotFound(format!(
                "no clip `{clip_key}` in campaign `{}`",
                campaign.name
            ))
        })?;
        let version_id: i64 = col(&row, "version_id")?;
        let decided: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM decisions d JOIN items i ON i.id = d.item_id WHERE i.clip_version_id = $1",
        )
        .bind(version_id)
        .fetch_one(&mut *tx)
        .await?;
        if decided > 0 {
            return Err(Error::Conflict(format!(
                "clip `{clip_key}` already has verdicts; only a clip nobody decided becomes a calibration clip"
            )));
        }
        sqlx::query("UPDATE clips SET calibration = 1 WHERE id = $1")
            .bind(col::<i64>(&row, "clip_pk")?)
            .execute(&mut *tx)
            .await?;
        sqlx::query("UPDATE items SET calibration = 1, rater1_id = NULL, rater2_id = NULL WHERE clip_version_id = $1")
            .bind(version_id)
            .execute(&mut *tx)
            .await?;
        let item_id: i64 = col(&row, "item_id")?;
        sqlx::query("DELETE FROM calibration_keys WHERE item_id = $1")
            .bind(item_id)
            .execute(&mut *tx)
            .await?;
        insert_key(&mut tx, item_id, known).await?;
        tx.commit().await?;
        Ok(())
    }
}

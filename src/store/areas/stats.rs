//! The facts behind the QC tables (`domain::facts`): a few rows per task, pair and
//! outcome from one scan of the items table, whatever the number of decisions, so that
//! memory does not grow with the campaign; and every validator's median time per stage
//! from one statement.

use super::base;
use crate::domain::Outcome;
use crate::domain::facts::{DecidedItem, OutcomeCount, PairItem, Scope, Versions};
use crate::error::{Error, Result};
use crate::store::Store;
use crate::store::catalog::Campaign;
use crate::store::db::{FromRow, Row, Tx, named, sql};
use std::collections::HashMap;

crate::store::db::row! {
/// The columns of an [`OutcomeCount`], as the statements below name them.
struct CountRow {
    stage: i64,
    task: String,
    qa_type: Option<String>,
    rater1: Option<String>,
    rater2: Option<String>,
    outcome: String,
    verdict1: Option<String>,
    verdict2: Option<String>,
    reasons1: Option<String>,
    reasons2: Option<String>,
    n: i64,
}
}

impl From<CountRow> for OutcomeCount {
    fn from(r: CountRow) -> OutcomeCount {
        OutcomeCount {
            stage: r.stage,
            task: r.task,
            qa_type: r.qa_type,
            rater1: r.rater1.unwrap_or_default(),
            rater2: r.rater2.unwrap_or_default(),
            outcome: r.outcome,
            verdict1: r.verdict1,
            verdict2: r.verdict2,
            reasons1: r.reasons1,
            reasons2: r.reasons2,
            n: r.n,
        }
    }
}

impl Store {
    /// Items by stage, task, QA type, pair, outcome, counted verdicts and reasons: one
    /// scan of the campaign's items.
    pub async fn outcome_counts(
        &self,
        campaign: &Campaign,
        scope: &Scope,
    ) -> Result<Vec<OutcomeCount>> {
        read_tx!(self, long, |c| outcome_counts(c, campaign, scope).await)
    }

    /// Every decided item of the campaign's current versions (not pending, not retained
    /// by sample, no calibration or known item) with its pair and counted verdicts, by
    /// stage and review order.
    pub async fn decided_items(&self, campaign: &Campaign) -> Result<Vec<DecidedItem>> {
        struct Found {
            item_key: String,
            clip_key: String,
            count: CountRow,
        }
        impl FromRow for Found {
            fn from_row(r: &impl Row) -> Result<Self> {
                Ok(Found {
                    item_key: r.get("item_key")?,
                    clip_key: r.get("clip_key")?,
                    count: CountRow::from_row(r)?,
                })
            }
        }
        let campaign = campaign.id;
        let rows: Vec<Found> = read_tx!(self, long, |c| {
            c.fetch(
                sql!(
                    "SELECT i.stage, i.item_key, c.clip_key, t.code AS task, i.qa_type,
                            u1.name AS rater1, u2.name AS rater2, i.outcome, i.verdict1,
                            i.verdict2, i.reasons1, i.reasons2, CAST(1 AS BIGINT) AS n
                     FROM items i
                     JOIN tasks t ON t.id = i.task_id
                     JOIN clip_versions v ON v.id = i.clip_version_id
                     JOIN clips c ON c.id = v.clip_id
                     LEFT JOIN users u1 ON u1.id = i.rater1_id
                     LEFT JOIN users u2 ON u2.id = i.rater2_id
                     WHERE i.campaign_id = :campaign AND i.calibration = 0 AND i.is_current = 1
                       AND i.outcome NOT IN ('pending', 'by_sample')
                     ORDER BY i.stage, i.sort_key, i.id"
                ),
                named! { campaign },
            )
            .await
        })?;
        Ok(rows
            .into_iter()
            .map(|r| DecidedItem {
                item_id: r.item_key,
                clip_id: r.clip_key,
                count: r.count.into(),
            })
            .collect())
    }

    /// The Stage 2 items of linked questions in scope, each with its clip version, pair
    /// key and outcome: one statement over the items whose clip's line links questions.
    pub async fn pair_items(&self, campaign: &Campaign, scope: &Scope) -> Result<Vec<PairItem>> {
        let (rater1, rater2) = scope.pair.clone().unwrap_or_default();
        let task = scope.task.as_deref().unwrap_or_default();
        let campaign = campaign.id;
        // The same Stage 2 items as `outcome_counts` counts, of the clip versions whose
        // line links questions (the pair keys are in the line).
        let rows: Vec<(String, i64, String, String, String)> = read_tx!(self, long, |c| {
            c.fetch(
                sql!(
                    "SELECT t.code AS task, v.id AS version, v.fields, i.item_key, i.outcome
                     FROM items i
                     JOIN tasks t ON t.id = i.task_id
                     JOIN clip_versions v ON v.id = i.clip_version_id
                     LEFT JOIN users u1 ON u1.id = i.rater1_id
                     LEFT JOIN users u2 ON u2.id = i.rater2_id
                     WHERE i.campaign_id = :campaign AND i.calibration = 0 AND i.stage = 2
                       AND (:task = '' OR t.code = :task)
                       AND (:rater1 = '' OR (u1.name = :rater1 AND u2.name = :rater2))
                       AND (i.outcome <> 'pending' OR i.queue1 IS NOT NULL)
                       AND v.fields LIKE '%\"pair\"%'
                     ORDER BY v.id"
                ),
                named! { campaign, task, rater1: &rater1, rater2: &rater2 },
            )
            .await
        })?;
        let mut out = Vec::new();
        let mut keys: Option<(i64, std::collections::BTreeMap<String, String>)> = None;
        for (task, version, fields, item_key, outcome) in rows {
            if keys.as_ref().is_none_or(|(v, _)| *v != version) {
                let fields: serde_json::Value = serde_json::from_str(&fields)
                    .map_err(|e| Error::fault("stored fields of a clip version", e))?;
                keys = Some((version, crate::domain::records::pair_keys(&fields)));
            }
            let Some(pair) = keys.as_ref().and_then(|(_, k)| k.get(&item_key)) else {
                continue;
            };
            out.push(PairItem {
                task,
                version,
                pair: pair.clone(),
                outcome: Outcome::parse(&outcome)
                    .ok_or_else(|| Error::Internal(format!("stored outcome `{outcome}`")))?,
            });
        }
        Ok(out)
    }

    /// The median time each validator spent per decision in each stage, by validator
    /// name and stage: one statement.
    pub async fn median_times(&self, campaign: &Campaign) -> Result<HashMap<(String, i64), f64>> {
        let campaign = campaign.id;
        let rows: Vec<(String, i64, f64)> = read_tx!(self, long, |c| {
            c.fetch(
                sql!(
                    "SELECT u.name, m.stage, CAST(AVG(m.time_spent_ms) AS DOUBLE PRECISION) AS median
                     FROM (SELECT validator_id, stage, time_spent_ms,
                                  ROW_NUMBER() OVER (PARTITION BY validator_id, stage
                                                     ORDER BY time_spent_ms) AS rn,
                                  COUNT(*) OVER (PARTITION BY validator_id, stage) AS n
                           FROM decisions
                           WHERE campaign_id = :campaign AND time_spent_ms IS NOT NULL) m
                     JOIN users u ON u.id = m.validator_id
                     WHERE m.rn = (m.n + 1) / 2 OR m.rn = (m.n + 2) / 2
                     GROUP BY u.name, m.stage"
                ),
                named! { campaign },
            )
            .await
        })?;
        Ok(rows
            .into_iter()
            .map(|(name, stage, median)| ((name, stage), median))
            .collect())
    }
}

async fn outcome_counts(
    c: &mut impl Tx,
    campaign: &Campaign,
    scope: &Scope,
) -> Result<Vec<OutcomeCount>> {
    let task = scope.task.as_deref().unwrap_or_default();
    if !task.is_empty() {
        let known: Option<i64> = c
            .scalar_opt(
                sql!("SELECT id FROM tasks WHERE campaign_id = :campaign AND code = :task"),
                named! { campaign: campaign.id, task },
            )
            .await?;
        if known.is_none() {
            return Err(Error::NotFound(format!(
                "campaign `{}` has no task `{task}`",
                campaign.name
            )));
        }
    }
    if let Some((a, b)) = &scope.pair {
        for name in [a, b] {
            if base::user_by_name(c, name).await?.is_none() {
                return Err(Error::NotFound(format!("no user named `{name}`")));
            }
        }
    }
    let (rater1, rater2) = scope.pair.clone().unwrap_or_default();
    struct Found {
        position: i64,
        count: CountRow,
    }
    impl FromRow for Found {
        fn from_row(r: &impl Row) -> Result<Self> {
            Ok(Found {
                position: r.get("position")?,
                count: CountRow::from_row(r)?,
            })
        }
    }
    // A Stage 2 item counts once its clip was retained (it entered the queues): the
    // questions of a rejected version never open and are not "pending".
    let mut rows: Vec<Found> = c
        .fetch(
            sql!(
                "SELECT i.stage, t.position, t.code AS task, i.qa_type, u1.name AS rater1,
                        u2.name AS rater2, i.outcome, i.verdict1, i.verdict2, i.reasons1,
                        i.reasons2, COUNT(*) AS n
                 FROM items i
                 JOIN tasks t ON t.id = i.task_id
                 LEFT JOIN users u1 ON u1.id = i.rater1_id
                 LEFT JOIN users u2 ON u2.id = i.rater2_id
                 WHERE i.campaign_id = :campaign AND i.calibration = 0
                   AND (:task = '' OR t.code = :task)
                   AND (:rater1 = '' OR (u1.name = :rater1 AND u2.name = :rater2))
                   AND (i.stage = 2 OR :all_versions = 1 OR i.clip_version = 1)
                   AND (i.stage = 1 OR i.outcome <> 'pending' OR i.queue1 IS NOT NULL)
                 GROUP BY i.stage, t.position, t.code, i.qa_type, u1.name, u2.name, i.outcome,
                          i.verdict1, i.verdict2, i.reasons1, i.reasons2"
            ),
            named! {
                campaign: campaign.id,
                task,
                rater1: &rater1,
                rater2: &rater2,
                all_versions: i64::from(scope.versions == Versions::All),
            },
        )
        .await?;
    // In one order whatever the database's grouping returned (PostgreSQL's hashed and
    // parallel groups come in any order): the estimates sum over these rows in floating
    // point, and the same data must give the same figures to the last digit, in
    // `stats --json`, the page and the paper bundle alike.
    let key = |r: &Found| {
        let c = &r.count;
        (
            (c.stage, r.position, c.rater1.clone(), c.rater2.clone()),
            (c.task.clone(), c.qa_type.clone(), c.outcome.clone()),
            (c.verdict1.clone(), c.verdict2.clone()),
            (c.reasons1.clone(), c.reasons2.clone()),
        )
    };
    rows.sort_by_cached_key(key);
    Ok(rows.into_iter().map(|r| r.count.into()).collect())
}

// The counts behind the QC tables. (Shared SQL: compiled once per backend, see
// store/mod.rs.)

use crate::domain::Outcome;
use crate::domain::facts::{OutcomeCount, PairItem, Scope, Versions};
use crate::error::{Error, Result};
use crate::store::catalog::Campaign;
use std::collections::HashMap;

/// The columns of an [`OutcomeCount`], as the statements below name them.
#[derive(sqlx::FromRow)]
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

impl Backend {
    pub(crate) async fn outcome_counts(
        &self,
        campaign: &Campaign,
        scope: &Scope,
    ) -> Result<Vec<OutcomeCount>> {
        let mut c = self.read().await?;
        if let Some(code) = &scope.task {
            let known: Option<i64> =
                qs("SELECT id FROM tasks WHERE campaign_id = $1 AND code = $2")
                    .bind(campaign.id)
                    .bind(code)
                    .fetch_optional(&mut *c)
                    .await?;
            if known.is_none() {
                return Err(Error::NotFound(format!(
                    "campaign `{}` has no task `{code}`",
                    campaign.name
                )));
            }
        }
        if let Some((a, b)) = &scope.pair {
            for name in [a, b] {
                if crate::store::write::base::user_by_name(&mut *c, name).await?.is_none() {
                    return Err(Error::NotFound(format!("no user named `{name}`")));
                }
            }
        }
        let (r1, r2) = scope.pair.clone().unwrap_or_default();
        #[derive(sqlx::FromRow)]
        struct Row {
            position: i64,
            #[sqlx(flatten)]
            count: CountRow,
        }
        // A Stage 2 item counts once its clip was retained (it entered the queues): the
        // questions of a rejected version never open and are not "pending".
        let rows: Vec<Row> = qa(
            "SELECT i.stage, t.position, t.code AS task, i.qa_type, u1.name AS rater1, u2.name AS rater2, i.outcome,
                    i.verdict1, i.verdict2, i.reasons1, i.reasons2, COUNT(*) AS n
             FROM items i
             JOIN tasks t ON t.id = i.task_id
             LEFT JOIN users u1 ON u1.id = i.rater1_id
             LEFT JOIN users u2 ON u2.id = i.rater2_id
             WHERE i.campaign_id = $1 AND i.calibration = 0
               AND ($2 = '' OR t.code = $2)
               AND ($3 = '' OR (u1.name = $3 AND u2.name = $4))
               AND (i.stage = 2 OR $5 = 1 OR i.clip_version = 1)
               AND (i.stage = 1 OR i.outcome <> 'pending' OR i.queue1 IS NOT NULL)
             GROUP BY i.stage, t.position, t.code, i.qa_type, u1.name, u2.name, i.outcome,
                      i.verdict1, i.verdict2, i.reasons1, i.reasons2",
        )
        .bind(campaign.id)
        .bind(scope.task.clone().unwrap_or_default())
        .bind(r1)
        .bind(r2)
        .bind(i64::from(scope.versions == Versions::All))
        .fetch_all(&mut *c)
        .await?;
        let mut rows = rows;
        rows.sort_by(|a, b| {
            (a.count.stage, a.position, &a.count.rater1, &a.count.rater2).cmp(&(
                b.count.stage,
                b.position,
                &b.count.rater1,
                &b.count.rater2,
            ))
        });
        Ok(rows.into_iter().map(|r| r.count.into()).collect())
    }

    pub(crate) async fn decided_items(
        &self,
        campaign: &Campaign,
    ) -> Result<Vec<crate::domain::facts::DecidedItem>> {
        #[derive(sqlx::FromRow)]
        struct Row {
            item_key: String,
            clip_key: String,
            #[sqlx(flatten)]
            count: CountRow,
        }
        let rows: Vec<Row> = qa(
            "SELECT i.stage, i.item_key, c.clip_key, t.code AS task, i.qa_type, u1.name AS rater1,
                    u2.name AS rater2, i.outcome, i.verdict1, i.verdict2, i.reasons1, i.reasons2,
                    CAST(1 AS BIGINT) AS n
             FROM items i
             JOIN tasks t ON t.id = i.task_id
             JOIN clip_versions v ON v.id = i.clip_version_id JOIN clips c ON c.id = v.clip_id
             LEFT JOIN users u1 ON u1.id = i.rater1_id
             LEFT JOIN users u2 ON u2.id = i.rater2_id
             WHERE i.campaign_id = $1 AND i.calibration = 0 AND i.is_current = 1
               AND i.outcome NOT IN ('pending', 'by_sample')
             ORDER BY i.stage, i.sort_key, i.id",
        )
        .bind(campaign.id)
        .fetch_all(&mut *self.read().await?)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| crate::domain::facts::DecidedItem {
                item_id: r.item_key,
                clip_id: r.clip_key,
                count: r.count.into(),
            })
            .collect())
    }

    pub(crate) async fn pair_items(
        &self,
        campaign: &Campaign,
        scope: &Scope,
    ) -> Result<Vec<PairItem>> {
        let (r1, r2) = scope.pair.clone().unwrap_or_default();
        #[derive(sqlx::FromRow)]
        struct Row {
            task: String,
            version: i64,
            fields: String,
            item_key: String,
            outcome: String,
        }
        // The same Stage 2 items as `outcome_counts` counts, of the clip versions whose
        // line links questions (the pair keys are in the line).
        let rows: Vec<Row> = qa(
            "SELECT t.code AS task, v.id AS version, v.fields, i.item_key, i.outcome
             FROM items i
             JOIN tasks t ON t.id = i.task_id
             JOIN clip_versions v ON v.id = i.clip_version_id
             LEFT JOIN users u1 ON u1.id = i.rater1_id
             LEFT JOIN users u2 ON u2.id = i.rater2_id
             WHERE i.campaign_id = $1 AND i.calibration = 0 AND i.stage = 2
               AND ($2 = '' OR t.code = $2)
               AND ($3 = '' OR (u1.name = $3 AND u2.name = $4))
               AND (i.outcome <> 'pending' OR i.queue1 IS NOT NULL)
               AND v.fields LIKE '%\"pair\"%'
             ORDER BY v.id",
        )
        .bind(campaign.id)
        .bind(scope.task.clone().unwrap_or_default())
        .bind(r1)
        .bind(r2)
        .fetch_all(&mut *self.read().await?)
        .await?;
        let mut out = Vec::new();
        let mut keys: Option<(i64, std::collections::BTreeMap<String, String>)> = None;
        for r in rows {
            if keys.as_ref().is_none_or(|(v, _)| *v != r.version) {
                let fields: serde_json::Value = serde_json::from_str(&r.fields)
                    .map_err(|e| Error::Internal(format!("stored fields of a clip version: {e}")))?;
                keys = Some((r.version, crate::domain::records::pair_keys(&fields)));
            }
            let Some(pair) = keys.as_ref().and_then(|(_, k)| k.get(&r.item_key)) else {
                continue;
            };
            out.push(PairItem {
                task: r.task,
                version: r.version,
                pair: pair.clone(),
                outcome: Outcome::parse(&r.outcome)
                    .ok_or_else(|| Error::Internal(format!("stored outcome `{}`", r.outcome)))?,
            });
        }
        Ok(out)
    }

    pub(crate) async fn median_times(
        &self,
        campaign: &Campaign,
    ) -> Result<HashMap<(String, i64), f64>> {
        let rows: Vec<(String, i64, f64)> = qa(
            "SELECT u.name, m.stage, CAST(AVG(m.time_spent_ms) AS DOUBLE PRECISION) AS median
             FROM (SELECT validator_id, stage, time_spent_ms,
                          ROW_NUMBER() OVER (PARTITION BY validator_id, stage ORDER BY time_spent_ms) AS rn,
                          COUNT(*) OVER (PARTITION BY validator_id, stage) AS n
                   FROM decisions WHERE campaign_id = $1 AND time_spent_ms IS NOT NULL) m
             JOIN users u ON u.id = m.validator_id
             WHERE m.rn = (m.n + 1) / 2 OR m.rn = (m.n + 2) / 2
             GROUP BY u.name, m.stage",
        )
        .bind(campaign.id)
        .fetch_all(&mut *self.read().await?)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(name, stage, median)| ((name, stage), median))
            .collect())
    }
}

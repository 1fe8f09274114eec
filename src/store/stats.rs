//! The counts behind the QC tables, aggregated in SQL in one scan of the items table:
//! a few rows per task, pair and outcome, whatever the number of decisions, so that
//! memory does not grow with the campaign.

use super::catalog::Campaign;
use super::{Store, col};
use crate::domain::facts::{OutcomeCount, Scope, Versions};
use crate::error::{Error, Result};
use std::collections::HashMap;

impl Store {
    /// Items by stage, task, QA type, pair, outcome, counted verdicts and reasons: one
    /// scan of the campaign's items.
    pub async fn outcome_counts(
        &self,
        campaign: &Campaign,
        scope: &Scope,
    ) -> Result<Vec<OutcomeCount>> {
        let tasks = self.tasks(campaign).await?;
        let task_id = match &scope.task {
            None => 0,
            Some(code) => tasks
                .iter()
                .find(|t| t.code == *code)
                .map(|t| t.id)
                .ok_or_else(|| {
                    Error::NotFound(format!("campaign `{}` has no task `{code}`", campaign.name))
                })?,
        };
        let (has_pair, r1, r2) = match &scope.pair {
            None => (0, 0, 0),
            Some((a, b)) => {
                let id = |name: &str| {
                    let name = name.to_string();
                    async move {
                        self.user_by_name(&name)
                            .await?
                            .map(|u| u.id)
                            .ok_or_else(|| Error::NotFound(format!("no user named `{name}`")))
                    }
                };
                (1, id(a).await?, id(b).await?)
            }
        };
        // A Stage 2 item counts once its clip was retained: the questions of a rejected
        // version never open and are not "pending". Only undecided items need the check.
        let rows = sqlx::query(
            "SELECT i.stage, i.task_id, i.qa_type, i.rater1_id, i.rater2_id, i.outcome,
                    i.verdict1, i.verdict2, i.reasons1, i.reasons2, COUNT(*) AS n
             FROM items i
             WHERE i.campaign_id = $1 AND i.calibration = 0
               AND ($2 = 0 OR i.task_id = $2)
               AND ($3 = 0 OR (i.rater1_id = $4 AND i.rater2_id = $5))
               AND (i.stage = 2 OR $6 = 1 OR i.clip_version = 1)
               AND (i.stage = 1 OR i.outcome <> 'pending'
                    OR EXISTS (SELECT 1 FROM items p WHERE p.id = i.parent_item_id
                               AND p.outcome IN ('both_pass', 'split_accepted')))
             GROUP BY i.stage, i.task_id, i.qa_type, i.rater1_id, i.rater2_id, i.outcome,
                      i.verdict1, i.verdict2, i.reasons1, i.reasons2",
        )
        .bind(campaign.id)
        .bind(task_id)
        .bind(has_pair)
        .bind(r1)
        .bind(r2)
        .bind(i64::from(scope.versions == Versions::All))
        .fetch_all(self.pool())
        .await?;
        let names: HashMap<i64, String> = self
            .users()
            .await?
            .into_iter()
            .map(|u| (u.id, u.name))
            .collect();
        let name = |id: Option<i64>| id.and_then(|i| names.get(&i).cloned()).unwrap_or_default();
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            let tid: i64 = col(r, "task_id")?;
            let task = tasks
                .iter()
                .find(|t| t.id == tid)
                .ok_or_else(|| Error::Internal(format!("item of unknown task #{tid}")))?;
            out.push((
                task.position,
                OutcomeCount {
                    stage: col(r, "stage")?,
                    task: task.code.clone(),
                    qa_type: col(r, "qa_type")?,
                    rater1: name(col(r, "rater1_id")?),
                    rater2: name(col(r, "rater2_id")?),
                    outcome: col(r, "outcome")?,
                    verdict1: col(r, "verdict1")?,
                    verdict2: col(r, "verdict2")?,
                    reasons1: col(r, "reasons1")?,
                    reasons2: col(r, "reasons2")?,
                    n: col(r, "n")?,
                },
            ));
        }
        out.sort_by(|a, b| {
            (a.1.stage, a.0, &a.1.rater1, &a.1.rater2).cmp(&(
                b.1.stage,
                b.0,
                &b.1.rater1,
                &b.1.rater2,
            ))
        });
        Ok(out.into_iter().map(|(_, c)| c).collect())
    }

    /// The median time each validator spent per decision in each stage of a campaign
    /// (every decision of theirs with a time, changes included), by validator name and
    /// stage: one statement.
    pub async fn median_times(&self, campaign: &Campaign) -> Result<HashMap<(String, i64), f64>> {
        let rows = sqlx::query(
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
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| Ok(((col(r, "name")?, col(r, "stage")?), col(r, "median")?)))
            .collect()
    }
}

//! The counts behind the QC tables, aggregated in SQL in one scan of the items table:
//! a few rows per task, pair and outcome, whatever the number of decisions, so that
//! memory does not grow with the campaign.

use super::catalog::Campaign;
use super::{Store, col};
use crate::error::{Error, Result};
use serde::Serialize;
use std::collections::HashMap;

/// Which clip versions Stage 1 counts: the first review of every clip (the paper's
/// Table 13 counts the 1,200 first reviews), or every version including regenerated
/// ones. Stage 2 always counts every question reviewed (only versions that reached
/// Stage 2 have reviewed questions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Versions {
    #[default]
    First,
    All,
}

impl Versions {
    pub fn parse(s: &str) -> std::result::Result<Versions, String> {
        match s {
            "first" => Ok(Versions::First),
            "all" => Ok(Versions::All),
            other => Err(format!("versions must be `first` or `all`, not `{other}`")),
        }
    }
}

/// What the tables cover.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    pub versions: Versions,
    /// One task only (its code).
    pub task: Option<String>,
    /// One pair only: (rater 1, rater 2) names, in that order.
    pub pair: Option<(String, String)>,
}

/// Items of one stage, task (and QA type), pair and outcome with the same counted
/// verdicts and reasons.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OutcomeCount {
    pub stage: i64,
    pub task: String,
    /// Stage 2: the question's QA type.
    pub qa_type: Option<String>,
    /// The item's pair (fixed at its first verdict); empty for items not started.
    pub rater1: String,
    pub rater2: String,
    pub outcome: String,
    /// The counted verdicts and their reasons, once both decided.
    pub verdict1: Option<String>,
    pub verdict2: Option<String>,
    pub reasons1: Option<String>,
    pub reasons2: Option<String>,
    pub n: i64,
}

/// One validator's counted verdicts in a stage.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ValidatorActivity {
    pub validator: String,
    pub stage: i64,
    /// Counted verdicts (one per item whose pair completed).
    pub verdicts: i64,
    pub valid: i64,
    /// Median time per decision, in ms, over all the validator's decisions of the
    /// stage in the campaign that have a time (changes included).
    pub median_ms: Option<f64>,
}

impl Store {
    /// Tables 11 to 13 with the reasons and the validators' figures, for a scope.
    pub async fn qc_report(
        &self,
        campaign: &Campaign,
        scope: &Scope,
    ) -> Result<crate::report::QcReport> {
        let outcomes = self.outcome_counts(campaign, scope).await?;
        let mut medians = HashMap::new();
        for c in &outcomes {
            for who in [&c.rater1, &c.rater2] {
                if !who.is_empty() && c.outcome != "pending" {
                    medians.entry((who.clone(), c.stage)).or_insert(None);
                }
            }
        }
        for ((who, stage), m) in medians.iter_mut() {
            *m = self.median_time(campaign, who, *stage).await?;
        }
        Ok(crate::report::build(
            &campaign.name,
            &campaign.taxonomy,
            scope,
            &outcomes,
            &medians,
        ))
    }

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

    /// The median time a validator spent per decision in a stage of a campaign (every
    /// decision of theirs with a time): two walks of the `decisions_time` index.
    async fn median_time(
        &self,
        campaign: &Campaign,
        validator: &str,
        stage: i64,
    ) -> Result<Option<f64>> {
        let Some(user) = self.user_by_name(validator).await? else {
            return Ok(None);
        };
        let n: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM decisions
             WHERE validator_id = $1 AND campaign_id = $2 AND stage = $3 AND time_spent_ms IS NOT NULL",
        )
        .bind(user.id)
        .bind(campaign.id)
        .bind(stage)
        .fetch_one(self.pool())
        .await?;
        if n == 0 {
            return Ok(None);
        }
        let middle: Vec<i64> = sqlx::query_scalar(
            "SELECT time_spent_ms FROM decisions
             WHERE validator_id = $1 AND campaign_id = $2 AND stage = $3 AND time_spent_ms IS NOT NULL
             ORDER BY time_spent_ms LIMIT $4 OFFSET $5",
        )
        .bind(user.id)
        .bind(campaign.id)
        .bind(stage)
        .bind(2 - n % 2)
        .bind((n - 1) / 2)
        .fetch_all(self.pool())
        .await?;
        if middle.is_empty() {
            return Ok(None);
        }
        Ok(Some(
            middle.iter().map(|&x| x as f64).sum::<f64>() / middle.len() as f64,
        ))
    }
}

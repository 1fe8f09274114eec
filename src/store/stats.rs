//! The counts behind the QC tables, aggregated in SQL: a few rows per task and pair,
//! whatever the number of decisions, so that memory does not grow with the campaign.

use super::catalog::Campaign;
use super::{Store, col};
use crate::error::{Error, Result};
use serde::Serialize;

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

/// Items of one stage, task and pair with the same outcome and counted verdicts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OutcomeCount {
    pub stage: i64,
    pub task: String,
    /// The item's pair (fixed at its first verdict); empty for items not started.
    pub rater1: String,
    pub rater2: String,
    pub outcome: String,
    /// The counted verdicts, once both decided.
    pub verdict1: Option<String>,
    pub verdict2: Option<String>,
    pub n: i64,
}

/// Stage 2 items of one task, QA type and outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CellCount {
    pub task: String,
    pub qa_type: String,
    pub outcome: String,
    pub n: i64,
}

/// Counted reject verdicts of one stage and task with the same reasons.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReasonCount {
    pub stage: i64,
    pub task: String,
    /// `;`-separated, as stored.
    pub reasons: String,
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
    /// Median time per decision, in ms, over the validator's decisions with a time.
    pub median_ms: Option<f64>,
}

/// The scope's filter, shared by every query: `$1` campaign, `$2` task code or NULL,
/// `$3` 1 when a pair is given, `$4`/`$5` the pair's user ids, `$6` 1 for all versions.
/// A Stage 2 item counts only when its clip was retained (`p` is its Stage 1 item): the
/// questions of a rejected version never open and are not "pending".
macro_rules! scope_filter {
    () => {
        " i.campaign_id = $1
          AND ($2 IS NULL OR t.code = $2)
          AND ($3 = 0 OR (i.rater1_id = $4 AND i.rater2_id = $5))
          AND (i.stage = 2 OR $6 = 1 OR v.version = 1)
          AND (i.stage = 1 OR p.outcome IN ('both_pass', 'split_accepted')) "
    };
}

struct Bound {
    task: Option<String>,
    has_pair: i64,
    r1: i64,
    r2: i64,
    all: i64,
}

impl Store {
    /// Tables 11 to 13 with the reasons and the validators' figures, for a scope.
    pub async fn qc_report(
        &self,
        campaign: &Campaign,
        scope: &Scope,
    ) -> Result<crate::report::QcReport> {
        if let Some(t) = &scope.task
            && campaign.taxonomy.task(t).is_none()
        {
            return Err(Error::NotFound(format!(
                "campaign `{}` has no task `{t}`",
                campaign.name
            )));
        }
        let outcomes = self.outcome_counts(campaign, scope).await?;
        let cells = self.cell_counts(campaign, scope).await?;
        let reasons = self.reason_counts(campaign, scope).await?;
        let validators = self.validator_activity(campaign, scope).await?;
        Ok(crate::report::build(
            &campaign.name,
            &campaign.taxonomy,
            scope.versions,
            scope.task.as_deref(),
            scope.pair.clone(),
            &outcomes,
            &cells,
            &reasons,
            validators,
        ))
    }

    async fn bind_scope(&self, scope: &Scope) -> Result<Bound> {
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
        Ok(Bound {
            task: scope.task.clone(),
            has_pair,
            r1,
            r2,
            all: i64::from(scope.versions == Versions::All),
        })
    }

    /// Items by stage, task, pair, outcome and counted verdicts.
    pub async fn outcome_counts(
        &self,
        campaign: &Campaign,
        scope: &Scope,
    ) -> Result<Vec<OutcomeCount>> {
        let b = self.bind_scope(scope).await?;
        let rows = sqlx::query(concat!(
            "SELECT i.stage, t.code AS task, COALESCE(u1.name, '') AS rater1, COALESCE(u2.name, '') AS rater2,
                    i.outcome, i.verdict1, i.verdict2, COUNT(*) AS n
             FROM items i
             JOIN tasks t ON t.id = i.task_id
             JOIN clip_versions v ON v.id = i.clip_version_id
             LEFT JOIN items p ON p.id = i.parent_item_id
             LEFT JOIN users u1 ON u1.id = i.rater1_id
             LEFT JOIN users u2 ON u2.id = i.rater2_id
             WHERE",
            scope_filter!(),
            "GROUP BY i.stage, t.code, t.position, u1.name, u2.name, i.outcome, i.verdict1, i.verdict2
             ORDER BY i.stage, t.position, u1.name, u2.name"
        ))
        .bind(campaign.id)
        .bind(b.task)
        .bind(b.has_pair)
        .bind(b.r1)
        .bind(b.r2)
        .bind(b.all)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(OutcomeCount {
                    stage: col(r, "stage")?,
                    task: col(r, "task")?,
                    rater1: col(r, "rater1")?,
                    rater2: col(r, "rater2")?,
                    outcome: col(r, "outcome")?,
                    verdict1: col(r, "verdict1")?,
                    verdict2: col(r, "verdict2")?,
                    n: col(r, "n")?,
                })
            })
            .collect()
    }

    /// Stage 2 items by task, QA type and outcome.
    pub async fn cell_counts(&self, campaign: &Campaign, scope: &Scope) -> Result<Vec<CellCount>> {
        let b = self.bind_scope(scope).await?;
        let rows = sqlx::query(concat!(
            "SELECT t.code AS task, q.qa_type, i.outcome, COUNT(*) AS n
             FROM items i
             JOIN tasks t ON t.id = i.task_id
             JOIN clip_versions v ON v.id = i.clip_version_id
             LEFT JOIN items p ON p.id = i.parent_item_id
             JOIN questions q ON q.id = i.question_id
             WHERE i.stage = 2 AND",
            scope_filter!(),
            "GROUP BY t.code, q.qa_type, i.outcome"
        ))
        .bind(campaign.id)
        .bind(b.task)
        .bind(b.has_pair)
        .bind(b.r1)
        .bind(b.r2)
        .bind(b.all)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(CellCount {
                    task: col(r, "task")?,
                    qa_type: col(r, "qa_type")?,
                    outcome: col(r, "outcome")?,
                    n: col(r, "n")?,
                })
            })
            .collect()
    }

    /// The reasons of the counted reject verdicts, by stage and task.
    pub async fn reason_counts(
        &self,
        campaign: &Campaign,
        scope: &Scope,
    ) -> Result<Vec<ReasonCount>> {
        let b = self.bind_scope(scope).await?;
        let rows = sqlx::query(concat!(
            "SELECT stage, task, reasons, CAST(SUM(n) AS BIGINT) AS n FROM (
               SELECT i.stage, t.code AS task, d.reasons, COUNT(*) AS n
               FROM items i JOIN tasks t ON t.id = i.task_id
               JOIN clip_versions v ON v.id = i.clip_version_id
               LEFT JOIN items p ON p.id = i.parent_item_id
               JOIN decisions d ON d.id = i.final1_id
               WHERE d.verdict = 'reject' AND",
            scope_filter!(),
            "GROUP BY i.stage, t.code, d.reasons
               UNION ALL
               SELECT i.stage, t.code AS task, d.reasons, COUNT(*) AS n
               FROM items i JOIN tasks t ON t.id = i.task_id
               JOIN clip_versions v ON v.id = i.clip_version_id
               LEFT JOIN items p ON p.id = i.parent_item_id
               JOIN decisions d ON d.id = i.final2_id
               WHERE d.verdict = 'reject' AND",
            scope_filter!(),
            "GROUP BY i.stage, t.code, d.reasons
             ) AS both_raters GROUP BY stage, task, reasons ORDER BY stage, task, reasons"
        ))
        .bind(campaign.id)
        .bind(b.task)
        .bind(b.has_pair)
        .bind(b.r1)
        .bind(b.r2)
        .bind(b.all)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(ReasonCount {
                    stage: col(r, "stage")?,
                    task: col(r, "task")?,
                    reasons: col(r, "reasons")?,
                    n: col(r, "n")?,
                })
            })
            .collect()
    }

    /// Each validator's counted verdicts, pass rate and median time, per stage.
    pub async fn validator_activity(
        &self,
        campaign: &Campaign,
        scope: &Scope,
    ) -> Result<Vec<ValidatorActivity>> {
        let b = self.bind_scope(scope).await?;
        let rows = sqlx::query(concat!(
            "SELECT validator_id, name, stage, CAST(SUM(n) AS BIGINT) AS n, CAST(SUM(valid) AS BIGINT) AS valid FROM (
               SELECT d.validator_id, u.name, i.stage, COUNT(*) AS n,
                      SUM(CASE WHEN d.verdict = 'valid' THEN 1 ELSE 0 END) AS valid
               FROM items i JOIN tasks t ON t.id = i.task_id
               JOIN clip_versions v ON v.id = i.clip_version_id
               LEFT JOIN items p ON p.id = i.parent_item_id
               JOIN decisions d ON d.id = i.final1_id JOIN users u ON u.id = d.validator_id
               WHERE",
            scope_filter!(),
            "GROUP BY d.validator_id, u.name, i.stage
               UNION ALL
               SELECT d.validator_id, u.name, i.stage, COUNT(*) AS n,
                      SUM(CASE WHEN d.verdict = 'valid' THEN 1 ELSE 0 END) AS valid
               FROM items i JOIN tasks t ON t.id = i.task_id
               JOIN clip_versions v ON v.id = i.clip_version_id
               LEFT JOIN items p ON p.id = i.parent_item_id
               JOIN decisions d ON d.id = i.final2_id JOIN users u ON u.id = d.validator_id
               WHERE",
            scope_filter!(),
            "GROUP BY d.validator_id, u.name, i.stage
             ) AS both_raters GROUP BY validator_id, name, stage ORDER BY name, stage"
        ))
        .bind(campaign.id)
        .bind(b.task.clone())
        .bind(b.has_pair)
        .bind(b.r1)
        .bind(b.r2)
        .bind(b.all)
        .fetch_all(self.pool())
        .await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            let validator_id: i64 = col(r, "validator_id")?;
            let stage: i64 = col(r, "stage")?;
            out.push(ValidatorActivity {
                validator: col(r, "name")?,
                stage,
                verdicts: col(r, "n")?,
                valid: col(r, "valid")?,
                median_ms: self.median_time(campaign, validator_id, stage).await?,
            });
        }
        Ok(out)
    }

    /// The median time a validator spent per decision in a stage (every decision of
    /// theirs with a time, changes included), read from the database's own sort.
    async fn median_time(
        &self,
        campaign: &Campaign,
        validator_id: i64,
        stage: i64,
    ) -> Result<Option<f64>> {
        let n: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM decisions d JOIN items i ON i.id = d.item_id
             WHERE d.validator_id = $1 AND i.campaign_id = $2 AND i.stage = $3 AND d.time_spent_ms IS NOT NULL",
        )
        .bind(validator_id)
        .bind(campaign.id)
        .bind(stage)
        .fetch_one(self.pool())
        .await?;
        if n == 0 {
            return Ok(None);
        }
        let middle: Vec<i64> = sqlx::query_scalar(
            "SELECT d.time_spent_ms FROM decisions d JOIN items i ON i.id = d.item_id
             WHERE d.validator_id = $1 AND i.campaign_id = $2 AND i.stage = $3 AND d.time_spent_ms IS NOT NULL
             ORDER BY d.time_spent_ms LIMIT $4 OFFSET $5",
        )
        .bind(validator_id)
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

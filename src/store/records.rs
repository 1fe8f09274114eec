//! Bulk records: bringing an existing QC run in (decisions and resolutions, applied in
//! file order in one transaction) and reading the campaign out (every decision, the
//! retained benchmark).

use super::accounts::{User, user_by_name_in};
use super::catalog::Campaign;
use super::review::{
    Dedupe, VerdictRequest, VersionRule, record_verdict_in, resolve_in, resolve_item_in,
    resolve_item_version_in,
};
use super::{Store, col};
use crate::domain::{Origin, Outcome, Resolution, Role, Stage, Verdict};
use crate::error::{Error, LineError, Rejected, Result};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;

/// Most problems listed for one refused file.
const MAX_PROBLEMS: usize = 200;

/// One row of a decisions file.
#[derive(Debug, Clone)]
pub struct DecisionRow {
    pub line: usize,
    pub stage: Stage,
    pub item_id: String,
    pub validator: String,
    pub verdict: Verdict,
    pub reasons: Vec<String>,
    pub note: String,
    pub decided_at: i64,
    pub time_spent_ms: Option<i64>,
    /// The clip version the row is about; the newest when the file does not say.
    pub clip_version: Option<i64>,
}

/// One row of a resolutions file.
#[derive(Debug, Clone)]
pub struct ResolutionRow {
    pub line: usize,
    pub stage: Stage,
    pub item_id: String,
    pub author: String,
    pub verdict: Resolution,
    pub note: String,
    pub decided_at: i64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct BulkSummary {
    pub rows: usize,
    pub recorded: usize,
    /// Rows that repeated a stored record and added nothing.
    pub repeated: usize,
}

impl std::fmt::Display for BulkSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} row(s): {} recorded, {} already stored",
            self.rows, self.recorded, self.repeated
        )
    }
}

/// Maps a refusal of one row to the field it is about.
fn row_problem(line: usize, e: Error, actor_field: &str) -> Result<LineError> {
    Ok(match e {
        Error::Field { field, message } => LineError::new(line, Some(&field), message),
        Error::Forbidden(m) => LineError::new(line, Some(actor_field), m),
        Error::NotFound(m) | Error::Conflict(m) | Error::Invalid(m) => {
            LineError::new(line, Some("item_id"), m)
        }
        other => return Err(other),
    })
}

fn finish(what: &str, mut problems: Vec<LineError>) -> Error {
    problems.sort_by_key(|p| p.line);
    let extra = problems.len().saturating_sub(MAX_PROBLEMS);
    problems.truncate(MAX_PROBLEMS);
    if extra > 0 {
        let line = problems.last().map_or(0, |p| p.line);
        problems.push(LineError::new(
            line,
            None,
            format!("... and {extra} more problem(s)"),
        ));
    }
    Error::Rejected(Rejected {
        what: what.to_string(),
        problems,
    })
}

struct People<'a> {
    cache: HashMap<String, Option<User>>,
    role: Role,
    field: &'a str,
}

impl People<'_> {
    async fn get(
        &mut self,
        c: &mut super::Conn,
        name: &str,
    ) -> Result<std::result::Result<User, String>> {
        if !self.cache.contains_key(name) {
            let u = user_by_name_in(c, name).await?;
            self.cache.insert(name.to_string(), u);
        }
        Ok(match self.cache.get(name).cloned().flatten() {
            None => Err(format!("no user named `{name}`")),
            Some(u) if u.role != self.role => Err(format!(
                "`{name}` is a {}, not a{} {}",
                u.role,
                if self.role == Role::Admin { "n" } else { "" },
                self.role
            )),
            Some(u) => Ok(u),
        })
    }
}

impl Store {
    /// Applies decision rows in file order, all or nothing. `problems` carries what
    /// was already wrong with the file; if anything is wrong, nothing is stored.
    pub async fn import_decisions(
        &self,
        campaign: &Campaign,
        rows: &[DecisionRow],
        mut problems: Vec<LineError>,
        what: &str,
    ) -> Result<BulkSummary> {
        let mut tx = self.begin_write().await?;
        let mut people = People {
            cache: HashMap::new(),
            role: Role::Validator,
            field: "validator",
        };
        let mut summary = BulkSummary {
            rows: rows.len(),
            ..BulkSummary::default()
        };
        for row in rows {
            let validator = match people.get(&mut tx, &row.validator).await? {
                Ok(u) => u,
                Err(m) => {
                    problems.push(LineError::new(row.line, Some(people.field), m));
                    continue;
                }
            };
            let found = match row.clip_version {
                Some(v) => {
                    resolve_item_version_in(&mut tx, campaign.id, row.stage, &row.item_id, v)
                        .await?
                }
                None => resolve_item_in(&mut tx, campaign.id, row.stage, &row.item_id).await?,
            };
            let Some(item) = found else {
                problems.push(LineError::new(
                    row.line,
                    Some("item_id"),
                    format!(
                        "no {} `{}`{} in campaign `{}`",
                        row.stage.item_noun(),
                        row.item_id,
                        row.clip_version
                            .map(|v| format!(" in version {v} of its clip"))
                            .unwrap_or_default(),
                        campaign.name
                    ),
                ));
                continue;
            };
            let req = VerdictRequest {
                verdict: row.verdict,
                reasons: row.reasons.clone(),
                note: row.note.clone(),
                time_spent_ms: row.time_spent_ms,
                version: if row.clip_version.is_some() {
                    VersionRule::Named
                } else {
                    VersionRule::Newest
                },
            };
            match record_verdict_in(
                &mut tx,
                item,
                &validator,
                &req,
                row.decided_at,
                Origin::Import,
                Dedupe::SameRecord,
            )
            .await
            {
                Ok(r) if r.recorded => summary.recorded += 1,
                Ok(_) => summary.repeated += 1,
                Err(e) => problems.push(row_problem(row.line, e, "validator")?),
            }
        }
        if !problems.is_empty() {
            return Err(finish(what, problems));
        }
        tx.commit().await?;
        Ok(summary)
    }

    /// Applies resolution rows in file order, all or nothing.
    pub async fn import_resolutions(
        &self,
        campaign: &Campaign,
        rows: &[ResolutionRow],
        mut problems: Vec<LineError>,
        what: &str,
    ) -> Result<BulkSummary> {
        let mut tx = self.begin_write().await?;
        let mut people = People {
            cache: HashMap::new(),
            role: Role::Author,
            field: "author",
        };
        let mut summary = BulkSummary {
            rows: rows.len(),
            ..BulkSummary::default()
        };
        for row in rows {
            let author = match people.get(&mut tx, &row.author).await? {
                Ok(u) => u,
                Err(m) => {
                    problems.push(LineError::new(row.line, Some(people.field), m));
                    continue;
                }
            };
            let Some(item) = resolve_item_in(&mut tx, campaign.id, row.stage, &row.item_id).await?
            else {
                problems.push(LineError::new(
                    row.line,
                    Some("item_id"),
                    format!(
                        "no {} `{}` in campaign `{}`",
                        row.stage.item_noun(),
                        row.item_id,
                        campaign.name
                    ),
                ));
                continue;
            };
            match resolve_in(
                &mut tx,
                item,
                &author,
                row.verdict,
                &row.note,
                row.decided_at,
                Origin::Import,
            )
            .await
            {
                Ok(true) => summary.recorded += 1,
                Ok(false) => summary.repeated += 1,
                Err(e) => problems.push(row_problem(row.line, e, "author")?),
            }
        }
        if !problems.is_empty() {
            return Err(finish(what, problems));
        }
        tx.commit().await?;
        Ok(summary)
    }

    /// Every decision of a campaign, in the order they were recorded.
    pub async fn decision_records(&self, campaign: &Campaign) -> Result<Vec<DecisionRecord>> {
        let rows = sqlx::query(
            "SELECT i.stage, c.clip_key, q.question_key, u.name, d.verdict, d.reasons, d.note,
                    d.decided_at, d.time_spent_ms, v.version,
                    CASE WHEN d.id = i.final1_id OR d.id = i.final2_id THEN 1 ELSE 0 END AS counted
             FROM decisions d
             JOIN items i ON i.id = d.item_id
             JOIN users u ON u.id = d.validator_id
             JOIN clip_versions v ON v.id = i.clip_version_id
             JOIN clips c ON c.id = v.clip_id
             LEFT JOIN questions q ON q.id = i.question_id
             WHERE i.campaign_id = $1
             ORDER BY d.id",
        )
        .bind(campaign.id)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                let stage: i64 = col(r, "stage")?;
                Ok(DecisionRecord {
                    stage,
                    item_id: if stage == 1 {
                        col(r, "clip_key")?
                    } else {
                        col::<Option<String>>(r, "question_key")?.unwrap_or_default()
                    },
                    validator: col(r, "name")?,
                    verdict: col(r, "verdict")?,
                    reasons: col(r, "reasons")?,
                    note: col(r, "note")?,
                    decided_at: col(r, "decided_at")?,
                    time_spent_ms: col(r, "time_spent_ms")?,
                    clip_version: col(r, "version")?,
                    counted: col::<i64>(r, "counted")? == 1,
                })
            })
            .collect()
    }

    /// Every resolution of a campaign, in the order they were recorded.
    pub async fn resolution_records(&self, campaign: &Campaign) -> Result<Vec<ResolutionRecord>> {
        let rows = sqlx::query(
            "SELECT i.stage, c.clip_key, q.question_key, u.name, r.verdict, r.note, r.decided_at, v.version
             FROM resolutions r
             JOIN items i ON i.id = r.item_id
             JOIN users u ON u.id = r.author_id
             JOIN clip_versions v ON v.id = i.clip_version_id
             JOIN clips c ON c.id = v.clip_id
             LEFT JOIN questions q ON q.id = i.question_id
             WHERE i.campaign_id = $1
             ORDER BY r.id",
        )
        .bind(campaign.id)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                let stage: i64 = col(r, "stage")?;
                Ok(ResolutionRecord {
                    stage,
                    item_id: if stage == 1 {
                        col(r, "clip_key")?
                    } else {
                        col::<Option<String>>(r, "question_key")?.unwrap_or_default()
                    },
                    author: col(r, "name")?,
                    verdict: col(r, "verdict")?,
                    note: col(r, "note")?,
                    decided_at: col(r, "decided_at")?,
                    clip_version: col(r, "version")?,
                })
            })
            .collect()
    }

    /// The clips whose newest version is retained in Stage 1, each with its retained
    /// questions, and the counts of everything else.
    pub async fn retained(
        &self,
        campaign: &Campaign,
    ) -> Result<(Vec<RetainedClip>, RetainedCounts)> {
        let clips = sqlx::query(
            "SELECT c.clip_key, t.code AS task, v.id AS version_id, v.version, v.fields,
                    v.media_sha256, v.media_type, i.outcome
             FROM clips c
             JOIN clip_versions v ON v.id = c.current_version_id
             JOIN tasks t ON t.id = c.task_id
             JOIN items i ON i.clip_version_id = v.id AND i.stage = 1
             WHERE c.campaign_id = $1
             ORDER BY t.position, c.clip_key",
        )
        .bind(campaign.id)
        .fetch_all(self.pool())
        .await?;
        let questions = sqlx::query(
            "SELECT q.clip_version_id, q.question_key, q.qa_type, q.level, q.body, q.options, q.answer, i.outcome
             FROM questions q
             JOIN clips c ON c.current_version_id = q.clip_version_id
             JOIN items i ON i.question_id = q.id AND i.stage = 2
             WHERE c.campaign_id = $1
             ORDER BY q.clip_version_id, q.position",
        )
        .bind(campaign.id)
        .fetch_all(self.pool())
        .await?;
        let mut counts = RetainedCounts::default();
        let mut by_version: HashMap<i64, Vec<RetainedQuestion>> = HashMap::new();
        let mut question_outcomes: HashMap<i64, Vec<Outcome>> = HashMap::new();
        for q in &questions {
            let outcome = parse_outcome(&col::<String>(q, "outcome")?)?;
            let version_id: i64 = col(q, "clip_version_id")?;
            question_outcomes
                .entry(version_id)
                .or_default()
                .push(outcome);
            if outcome.is_retained() {
                let options: String = col(q, "options")?;
                by_version
                    .entry(version_id)
                    .or_default()
                    .push(RetainedQuestion {
                        question_id: col(q, "question_key")?,
                        qa_type: col(q, "qa_type")?,
                        level: col(q, "level")?,
                        question: col(q, "body")?,
                        options: serde_json::from_str(&options)
                            .map_err(|e| Error::Internal(format!("stored options: {e}")))?,
                        answer: usize::try_from(col::<i64>(q, "answer")?).unwrap_or(0),
                    });
            }
        }
        let mut out = Vec::new();
        for c in &clips {
            let outcome = parse_outcome(&col::<String>(c, "outcome")?)?;
            let version_id: i64 = col(c, "version_id")?;
            counts.clips += 1;
            if outcome.is_retained() {
                counts.clips_retained += 1;
                for o in question_outcomes.get(&version_id).into_iter().flatten() {
                    counts.questions += 1;
                    if o.is_retained() {
                        counts.questions_retained += 1;
                    } else if o.is_rejected() {
                        counts.questions_rejected += 1;
                    } else {
                        counts.questions_open += 1;
                    }
                }
                let fields: String = col(c, "fields")?;
                out.push(RetainedClip {
                    clip_id: col(c, "clip_key")?,
                    task: col(c, "task")?,
                    version: col(c, "version")?,
                    fields: serde_json::from_str(&fields)
                        .map_err(|e| Error::Internal(format!("stored fields: {e}")))?,
                    media_sha256: col(c, "media_sha256")?,
                    media_type: col(c, "media_type")?,
                    questions: by_version.remove(&version_id).unwrap_or_default(),
                });
            } else if outcome.is_rejected() {
                counts.clips_rejected += 1;
            } else {
                counts.clips_open += 1;
            }
        }
        Ok((out, counts))
    }
}

fn parse_outcome(s: &str) -> Result<Outcome> {
    Outcome::parse(s).ok_or_else(|| Error::Internal(format!("stored outcome `{s}`")))
}

/// One decision as exported.
#[derive(Debug, Clone, Serialize)]
pub struct DecisionRecord {
    pub stage: i64,
    pub item_id: String,
    pub validator: String,
    pub verdict: String,
    pub reasons: String,
    pub note: String,
    pub decided_at: i64,
    pub time_spent_ms: Option<i64>,
    pub clip_version: i64,
    /// Whether this is the verdict that counted when the pair completed.
    pub counted: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct ResolutionRecord {
    pub stage: i64,
    pub item_id: String,
    pub author: String,
    pub verdict: String,
    pub note: String,
    pub decided_at: i64,
    pub clip_version: i64,
}

#[derive(Debug, Clone)]
pub struct RetainedQuestion {
    pub question_id: String,
    pub qa_type: String,
    pub level: String,
    pub question: String,
    pub options: Vec<String>,
    pub answer: usize,
}

#[derive(Debug, Clone)]
pub struct RetainedClip {
    pub clip_id: String,
    pub task: String,
    pub version: i64,
    /// The manifest line's fields (without `file`).
    pub fields: Value,
    pub media_sha256: String,
    pub media_type: String,
    pub questions: Vec<RetainedQuestion>,
}

/// Where the campaign stands, for the export's README.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct RetainedCounts {
    /// Clips (newest versions).
    pub clips: usize,
    pub clips_retained: usize,
    /// Rejected in Stage 1 and waiting for a new version.
    pub clips_rejected: usize,
    /// Still in Stage 1 review or waiting for an author.
    pub clips_open: usize,
    /// Questions of retained clips.
    pub questions: usize,
    pub questions_retained: usize,
    pub questions_rejected: usize,
    pub questions_open: usize,
}

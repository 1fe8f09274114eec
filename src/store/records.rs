//! Bulk records: bringing an existing QC run in (decisions and resolutions, applied in
//! file order in one transaction) and reading the campaign out (every decision, the
//! retained benchmark).

use super::accounts::{User, user_by_name_in};
use super::catalog::Campaign;
use super::review::{
    Dedupe, Path, Target, VerdictRequest, VersionRule, record_verdict_in, resolve_in,
    resolve_item_in,
};
use super::{Store, col};
use crate::domain::records::{
    AuditEvent, DecisionRecord, DecisionRow, RegenerationItem, ResolutionRecord, ResolutionRow,
    RetainedClip, RetainedCounts, RetainedQuestion,
};
use crate::domain::{Origin, Outcome, Role};
use crate::error::{Error, LineError, Rejected, Result};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;

/// Most problems listed for one refused file.
const MAX_PROBLEMS: usize = 200;

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
            let target = Target {
                campaign_id: campaign.id,
                stage: row.stage,
                key: &row.item_id,
                version: row.clip_version,
                path: Path::Records,
            };
            match record_verdict_in(
                &mut tx,
                &target,
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
             WHERE c.campaign_id = $1 AND c.calibration = 0
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
             WHERE c.campaign_id = $1 AND c.calibration = 0
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

/// The joins and the filter of every audit query: `$1` campaign, `$2` one clip or NULL.
macro_rules! audit_scope {
    () => {
        " JOIN clip_versions v ON v.id = i.clip_version_id JOIN clips c ON c.id = v.clip_id
          LEFT JOIN questions q ON q.id = i.question_id
          WHERE c.campaign_id = $1 AND ($2 IS NULL OR c.clip_key = $2)"
    };
}

impl Store {
    /// The clips whose newest version was rejected in Stage 1, with the reasons given.
    pub async fn regeneration_list(&self, campaign: &Campaign) -> Result<Vec<RegenerationItem>> {
        let rows = sqlx::query(
            "SELECT c.clip_key, t.code AS task, v.version, v.fields, i.outcome, i.reasons1, i.reasons2,
                    d1.note AS note1, d2.note AS note2, r.note AS author_note
             FROM clips c
             JOIN tasks t ON t.id = c.task_id
             JOIN clip_versions v ON v.id = c.current_version_id
             JOIN items i ON i.clip_version_id = v.id AND i.stage = 1
             LEFT JOIN decisions d1 ON d1.id = i.final1_id
             LEFT JOIN decisions d2 ON d2.id = i.final2_id
             LEFT JOIN resolutions r ON r.item_id = i.id
             WHERE c.campaign_id = $1 AND c.calibration = 0
               AND i.outcome IN ('both_reject', 'split_rejected')
             ORDER BY t.position, c.clip_key",
        )
        .bind(campaign.id)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                let fields: Value = serde_json::from_str(&col::<String>(r, "fields")?)
                    .map_err(|e| Error::Internal(format!("stored fields: {e}")))?;
                let both = format!(
                    "{};{}",
                    col::<Option<String>>(r, "reasons1")?.unwrap_or_default(),
                    col::<Option<String>>(r, "reasons2")?.unwrap_or_default()
                );
                let reasons: Vec<String> =
                    crate::domain::Reason::join(&crate::domain::Reason::split_stored(&both))
                        .split(';')
                        .filter(|x| !x.is_empty())
                        .map(str::to_string)
                        .collect();
                let notes: Vec<String> = ["note1", "note2", "author_note"]
                    .iter()
                    .map(|k| col::<Option<String>>(r, k))
                    .collect::<Result<Vec<_>>>()?
                    .into_iter()
                    .flatten()
                    .filter(|n| !n.is_empty())
                    .collect();
                Ok(RegenerationItem {
                    clip_id: col(r, "clip_key")?,
                    task: col(r, "task")?,
                    version: col(r, "version")?,
                    outcome: col(r, "outcome")?,
                    scene_graph: fields.get("scene_graph").cloned().unwrap_or(Value::Null),
                    scenario: fields.get("scenario").cloned().unwrap_or(Value::Null),
                    reasons,
                    notes,
                })
            })
            .collect()
    }

    /// Every event of a clip (or of every clip), in order: its imports and new
    /// versions, each verdict and change, each outcome and resolution, and the
    /// calibration verdicts given on a calibration clip.
    pub async fn audit(&self, campaign: &Campaign, clip: Option<&str>) -> Result<Vec<AuditEvent>> {
        let mut out = Vec::new();
        let key = |stage: i64, clip: &str, q: Option<String>| {
            if stage == 1 {
                clip.to_string()
            } else {
                q.unwrap_or_default()
            }
        };
        let rows = sqlx::query(
            "SELECT c.clip_key, v.version, v.created_at, v.source_file, im.manifest
             FROM clip_versions v JOIN clips c ON c.id = v.clip_id JOIN imports im ON im.id = v.import_id
             WHERE c.campaign_id = $1 AND ($2 IS NULL OR c.clip_key = $2)",
        )
        .bind(campaign.id)
        .bind(clip)
        .fetch_all(self.pool())
        .await?;
        for r in &rows {
            let version: i64 = col(r, "version")?;
            let clip_id: String = col(r, "clip_key")?;
            out.push(AuditEvent {
                at: col(r, "created_at")?,
                item_id: clip_id.clone(),
                clip_id,
                version,
                stage: None,
                event: if version == 1 {
                    "import".into()
                } else {
                    "new_version".into()
                },
                who: String::new(),
                detail: format!(
                    "{} from {}",
                    col::<String>(r, "source_file")?,
                    col::<String>(r, "manifest")?
                ),
                order: 0,
            });
        }
        let rows = sqlx::query(concat!(
            "SELECT c.clip_key, v.version, i.stage, q.question_key, d.seq, d.verdict, d.reasons, d.note, d.decided_at, d.origin, u.name
             FROM decisions d JOIN items i ON i.id = d.item_id JOIN users u ON u.id = d.validator_id",
            audit_scope!()
        ))
        .bind(campaign.id)
        .bind(clip)
        .fetch_all(self.pool())
        .await?;
        for r in &rows {
            let stage: i64 = col(r, "stage")?;
            let clip_id: String = col(r, "clip_key")?;
            let seq: i64 = col(r, "seq")?;
            let reasons: String = col(r, "reasons")?;
            let note: String = col(r, "note")?;
            let mut detail = col::<String>(r, "verdict")?;
            if !reasons.is_empty() {
                detail.push_str(&format!(" ({})", reasons.replace(';', ", ")));
            }
            if !note.is_empty() {
                detail.push_str(&format!(": {note}"));
            }
            detail.push_str(&format!(" [via {}]", col::<String>(r, "origin")?));
            out.push(AuditEvent {
                at: col(r, "decided_at")?,
                item_id: key(stage, &clip_id, col(r, "question_key")?),
                clip_id,
                version: col(r, "version")?,
                stage: Some(stage),
                event: if seq == 1 {
                    "verdict".into()
                } else {
                    format!("change #{}", seq - 1)
                },
                who: col(r, "name")?,
                detail,
                order: 1,
            });
        }
        // An outcome happens with the later of the two counted verdicts.
        let rows = sqlx::query(concat!(
            "SELECT c.clip_key, v.version, i.stage, q.question_key, i.verdict1, i.verdict2,
                    CASE WHEN d1.decided_at > d2.decided_at THEN d1.decided_at ELSE d2.decided_at END AS at,
                    CASE WHEN i.outcome IN ('split_accepted', 'split_rejected') THEN 'split' ELSE i.outcome END AS outcome
             FROM items i JOIN decisions d1 ON d1.id = i.final1_id JOIN decisions d2 ON d2.id = i.final2_id",
            audit_scope!()
        ))
        .bind(campaign.id)
        .bind(clip)
        .fetch_all(self.pool())
        .await?;
        for r in &rows {
            let stage: i64 = col(r, "stage")?;
            let clip_id: String = col(r, "clip_key")?;
            let outcome: String = col(r, "outcome")?;
            let detail = match outcome.as_str() {
                "both_pass" => "both pass: retained".to_string(),
                "both_reject" => "both reject: rejected".to_string(),
                _ => "split: waiting for an author".to_string(),
            };
            out.push(AuditEvent {
                at: col(r, "at")?,
                item_id: key(stage, &clip_id, col(r, "question_key")?),
                clip_id,
                version: col(r, "version")?,
                stage: Some(stage),
                event: "outcome".into(),
                who: String::new(),
                detail,
                order: 2,
            });
        }
        let rows = sqlx::query(concat!(
            "SELECT c.clip_key, v.version, i.stage, q.question_key, r.verdict, r.note, r.decided_at, u.name
             FROM resolutions r JOIN items i ON i.id = r.item_id JOIN users u ON u.id = r.author_id",
            audit_scope!()
        ))
        .bind(campaign.id)
        .bind(clip)
        .fetch_all(self.pool())
        .await?;
        for r in &rows {
            let stage: i64 = col(r, "stage")?;
            let clip_id: String = col(r, "clip_key")?;
            let verdict: String = col(r, "verdict")?;
            out.push(AuditEvent {
                at: col(r, "decided_at")?,
                item_id: key(stage, &clip_id, col(r, "question_key")?),
                clip_id,
                version: col(r, "version")?,
                stage: Some(stage),
                event: "resolution".into(),
                who: col(r, "name")?,
                detail: format!(
                    "{}: {}",
                    if verdict == "accept" {
                        "split accepted, retained"
                    } else {
                        "split rejected"
                    },
                    col::<String>(r, "note")?
                ),
                order: 3,
            });
        }
        let rows = sqlx::query(concat!(
            "SELECT c.clip_key, v.version, i.stage, q.question_key, d.verdict, d.agrees, d.round, d.decided_at, u.name
             FROM calibration_decisions d JOIN items i ON i.id = d.item_id JOIN users u ON u.id = d.validator_id",
            audit_scope!()
        ))
        .bind(campaign.id)
        .bind(clip)
        .fetch_all(self.pool())
        .await?;
        for r in &rows {
            let stage: i64 = col(r, "stage")?;
            let clip_id: String = col(r, "clip_key")?;
            out.push(AuditEvent {
                at: col(r, "decided_at")?,
                item_id: key(stage, &clip_id, col(r, "question_key")?),
                clip_id,
                version: col(r, "version")?,
                stage: Some(stage),
                event: "calibration_verdict".into(),
                who: col(r, "name")?,
                detail: format!(
                    "{} ({} the known verdict, round {})",
                    col::<String>(r, "verdict")?,
                    if col::<i64>(r, "agrees")? == 1 {
                        "agrees with"
                    } else {
                        "differs from"
                    },
                    col::<i64>(r, "round")?
                ),
                order: 1,
            });
        }
        // Per clip and version: the import first, then everything in time order.
        out.sort_by(|a, b| {
            let k = |e: &AuditEvent| {
                (
                    e.clip_id.clone(),
                    e.version,
                    e.order > 0,
                    e.at,
                    e.order,
                    e.item_id.clone(),
                )
            };
            k(a).cmp(&k(b))
        });
        Ok(out)
    }
}

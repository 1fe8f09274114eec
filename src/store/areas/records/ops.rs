//! Records' entry points on [`Store`]: bulk imports of decisions and resolutions, and
//! the campaign read out (every decision and resolution, the retained benchmark, the
//! regeneration list, the audit trail). The bulk write is in the parent module, the
//! audit's statements in `audit`.

use super::Rows;
use super::audit::{audit, audit_page};
use crate::domain::Outcome;
use crate::domain::paging::Page;
use crate::domain::records::{
    AuditEvent, AuditFilter, AuditPaging, DecisionRecord, DecisionRow, RegenerationItem,
    ResolutionRecord, ResolutionRow, RetainedClip, RetainedCounts, RetainedQuestion,
};
use crate::error::{Error, LineError, Result};
use crate::store::catalog::Campaign;
use crate::store::db::{Tx, named, row, sql};
use crate::store::records::BulkSummary;
use crate::store::{Lock, Store};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

fn parse_outcome(s: &str) -> Result<Outcome> {
    Outcome::parse(s).ok_or_else(|| Error::Internal(format!("stored outcome `{s}`")))
}

impl Store {
    /// Applies decision rows in file order, all or nothing. `problems` carries what
    /// was already wrong with the file; if anything is wrong, nothing is stored.
    pub async fn import_decisions(
        &self,
        campaign: &Campaign,
        rows: &[DecisionRow],
        problems: Vec<LineError>,
        what: &str,
    ) -> Result<BulkSummary> {
        let rows = Arc::new(rows.to_vec());
        write_tx!(
            self,
            Lock::Structure,
            (campaign, rows, problems, what),
            |tx| {
                super::import(tx, campaign, Rows::Decisions(rows), problems.clone(), what).await
            }
        )
    }

    /// Applies resolution rows in file order, all or nothing.
    pub async fn import_resolutions(
        &self,
        campaign: &Campaign,
        rows: &[ResolutionRow],
        problems: Vec<LineError>,
        what: &str,
    ) -> Result<BulkSummary> {
        let rows = Arc::new(rows.to_vec());
        write_tx!(
            self,
            Lock::Structure,
            (campaign, rows, problems, what),
            |tx| {
                super::import(
                    tx,
                    campaign,
                    Rows::Resolutions(rows),
                    problems.clone(),
                    what,
                )
                .await
            }
        )
    }

    /// How many decisions and resolutions a campaign holds (counted, not loaded).
    pub async fn record_counts(&self, campaign: &Campaign) -> Result<(usize, usize)> {
        let (d, r): (i64, i64) = read_tx!(self, long, |c| {
            c.fetch_one(
                sql!(
                    "SELECT (SELECT COUNT(*) FROM decisions d JOIN items i ON i.id = d.item_id
                     WHERE d.campaign_id = :campaign AND i.calibration = 0),
                    (SELECT COUNT(*) FROM resolutions r JOIN items i ON i.id = r.item_id
                     WHERE i.campaign_id = :campaign)"
                ),
                named! { campaign: campaign.id },
            )
            .await
        })?;
        Ok((
            usize::try_from(d).unwrap_or(0),
            usize::try_from(r).unwrap_or(0),
        ))
    }

    /// Every decision of a campaign, in the order they were recorded.
    pub async fn decision_records(&self, campaign: &Campaign) -> Result<Vec<DecisionRecord>> {
        row! {
            struct Row {
                stage: i64,
                item_key: String,
                name: String,
                verdict: String,
                reasons: String,
                note: String,
                decided_at: i64,
                time_spent_ms: Option<i64>,
                time_measure: Option<String>,
                clip_version: i64,
                counted: i64,
                protocol_version: i64,
            }
        }
        Ok(read_tx!(self, long, |c| {
            c.fetch::<Row>(
                sql!("SELECT i.stage, i.item_key, u.name, d.verdict, d.reasons, d.note, d.decided_at,
                    d.time_spent_ms, d.time_measure, i.clip_version,
                    CAST(CASE WHEN d.id = i.final1_id OR d.id = i.final2_id THEN 1 ELSE 0 END AS BIGINT) AS counted,
                    d.protocol_version
             FROM decisions d
             JOIN items i ON i.id = d.item_id
             JOIN users u ON u.id = d.validator_id
             WHERE d.campaign_id = :campaign AND i.calibration = 0
             ORDER BY d.id"),
                named! { campaign: campaign.id },
            )
            .await
        })?
        .into_iter()
        .map(|r| DecisionRecord {
            stage: r.stage,
            item_id: r.item_key,
            validator: r.name,
            verdict: r.verdict,
            reasons: r.reasons,
            note: r.note,
            decided_at: r.decided_at,
            time_spent_ms: r.time_spent_ms,
            time_measure: r.time_measure,
            clip_version: r.clip_version,
            counted: r.counted == 1,
            protocol_version: r.protocol_version,
        })
        .collect())
    }

    /// Every resolution of a campaign, in the order they were recorded.
    pub async fn resolution_records(&self, campaign: &Campaign) -> Result<Vec<ResolutionRecord>> {
        row! {
            struct Row {
                stage: i64,
                item_key: String,
                name: String,
                verdict: String,
                note: String,
                decided_at: i64,
                clip_version: i64,
            }
        }
        Ok(read_tx!(self, long, |c| {
            c.fetch::<Row>(
                sql!("SELECT i.stage, i.item_key, u.name, r.verdict, r.note, r.decided_at, i.clip_version
             FROM resolutions r
             JOIN items i ON i.id = r.item_id
             JOIN users u ON u.id = r.author_id
             WHERE i.campaign_id = :campaign
             ORDER BY r.id"),
                named! { campaign: campaign.id },
            )
            .await
        })?
        .into_iter()
        .map(|r| ResolutionRecord {
            stage: r.stage,
            item_id: r.item_key,
            author: r.name,
            verdict: r.verdict,
            note: r.note,
            decided_at: r.decided_at,
            clip_version: r.clip_version,
        })
        .collect())
    }

    /// The clips whose newest version is retained in Stage 1, each with its retained
    /// questions, and the counts of everything else.
    pub async fn retained(
        &self,
        campaign: &Campaign,
    ) -> Result<(Vec<RetainedClip>, RetainedCounts)> {
        row! {
            struct ClipRow {
                clip_key: String,
                task: String,
                version_id: i64,
                version: i64,
                fields: String,
                media_sha256: String,
                media_type: String,
                outcome: Option<String>,
            }
        }
        // A clip's Stage 1 item (none in a protocol without clip review, where every
        // clip stands and its questions decide).
        let clips: Vec<ClipRow> = read_tx!(self, long, |c| c
            .fetch(
                sql!(
                    "SELECT c.clip_key, t.code AS task, v.id AS version_id, v.version, v.fields,
                    v.media_sha256, v.media_type, i.outcome
             FROM clips c
             JOIN clip_versions v ON v.id = c.current_version_id
             JOIN tasks t ON t.id = c.task_id
             LEFT JOIN items i ON i.clip_version_id = v.id AND i.stage = 1
             WHERE c.campaign_id = :campaign AND c.calibration = 0
             ORDER BY t.position, c.clip_key"
                ),
                named! { campaign: campaign.id },
            )
            .await)?;
        row! {
            struct QuestionRow {
                clip_version_id: i64,
                question_key: String,
                qa_type: String,
                level: String,
                body: String,
                options: String,
                answer: i64,
                outcome: String,
                withdrawn: i64,
            }
        }
        // A retained question an author withdrew (its key in doubt) is counted apart.
        let questions: Vec<QuestionRow> = read_tx!(self, long, |c| {
            c.fetch(
                sql!("SELECT q.clip_version_id, q.question_key, q.qa_type, q.level, q.body, q.options, q.answer, i.outcome,
                    CASE WHEN w.id IS NULL THEN 0 ELSE 1 END AS withdrawn
             FROM items i
             JOIN questions q ON q.id = i.question_id
             LEFT JOIN withdrawals w ON w.item_id = i.id
             WHERE i.campaign_id = :campaign AND i.stage = 2 AND i.is_current = 1 AND i.calibration = 0
             ORDER BY q.clip_version_id, q.position"),
                named! { campaign: campaign.id },
            )
            .await
        })?;
        let mut counts = RetainedCounts::default();
        let mut by_version: HashMap<i64, Vec<RetainedQuestion>> = HashMap::new();
        let mut question_outcomes: HashMap<i64, Vec<(Outcome, bool)>> = HashMap::new();
        for q in questions {
            let outcome = parse_outcome(&q.outcome)?;
            let withdrawn = q.withdrawn == 1;
            question_outcomes
                .entry(q.clip_version_id)
                .or_default()
                .push((outcome, withdrawn));
            if outcome.is_retained() && !withdrawn {
                by_version
                    .entry(q.clip_version_id)
                    .or_default()
                    .push(RetainedQuestion {
                        question_id: q.question_key,
                        qa_type: q.qa_type,
                        level: q.level,
                        question: q.body,
                        options: serde_json::from_str(&q.options)
                            .map_err(|e| Error::fault("stored options", e))?,
                        answer: usize::try_from(q.answer).unwrap_or(0),
                        by_sample: outcome == Outcome::BySample,
                    });
            }
        }
        let mut out = Vec::new();
        for c in clips {
            let (retained, rejected, by_sample) = match (&c.outcome, campaign.taxonomy.clip_review)
            {
                (Some(o), _) => {
                    let o = parse_outcome(o)?;
                    (o.is_retained(), o.is_rejected(), o == Outcome::BySample)
                }
                (None, false) => (true, false, false),
                (None, true) => {
                    return Err(Error::Internal(format!(
                        "clip `{}` has no Stage 1 item",
                        c.clip_key
                    )));
                }
            };
            counts.clips += 1;
            if retained {
                counts.clips_retained += 1;
                if by_sample {
                    counts.clips_by_sample += 1;
                }
                for (o, withdrawn) in question_outcomes.get(&c.version_id).into_iter().flatten() {
                    counts.questions += 1;
                    if *withdrawn {
                        counts.questions_withdrawn += 1;
                    } else if o.is_retained() {
                        counts.questions_retained += 1;
                        if *o == Outcome::BySample {
                            counts.questions_by_sample += 1;
                        }
                    } else if o.is_rejected() {
                        counts.questions_rejected += 1;
                    } else {
                        counts.questions_open += 1;
                    }
                }
                out.push(RetainedClip {
                    clip_id: c.clip_key,
                    task: c.task,
                    version: c.version,
                    fields: serde_json::from_str(&c.fields)
                        .map_err(|e| Error::fault("stored fields", e))?,
                    media_sha256: c.media_sha256,
                    media_type: c.media_type,
                    by_sample,
                    questions: by_version.remove(&c.version_id).unwrap_or_default(),
                });
            } else if rejected {
                counts.clips_rejected += 1;
            } else {
                counts.clips_open += 1;
            }
        }
        Ok((out, counts))
    }

    /// The clips whose newest version was rejected in Stage 1, with the reasons given.
    pub async fn regeneration_list(&self, campaign: &Campaign) -> Result<Vec<RegenerationItem>> {
        row! {
            struct Row {
                clip_key: String,
                task: String,
                version: i64,
                fields: String,
                outcome: String,
                reasons1: Option<String>,
                reasons2: Option<String>,
                note1: Option<String>,
                note2: Option<String>,
                author_note: Option<String>,
            }
        }
        let rows: Vec<Row> = read_tx!(self, long, |c| {
            c.fetch(
                sql!("SELECT c.clip_key, t.code AS task, v.version, v.fields, i.outcome, i.reasons1, i.reasons2,
                    d1.note AS note1, d2.note AS note2, r.note AS author_note
             FROM clips c
             JOIN tasks t ON t.id = c.task_id
             JOIN clip_versions v ON v.id = c.current_version_id
             JOIN items i ON i.clip_version_id = v.id AND i.stage = 1
             LEFT JOIN decisions d1 ON d1.id = i.final1_id
             LEFT JOIN decisions d2 ON d2.id = i.final2_id
             LEFT JOIN resolutions r ON r.item_id = i.id
             WHERE c.campaign_id = :campaign AND c.calibration = 0
               AND i.outcome IN ('both_reject', 'split_rejected')
             ORDER BY t.position, c.clip_key"),
                named! { campaign: campaign.id },
            )
            .await
        })?;
        rows.into_iter()
            .map(|r| {
                let fields: Value = serde_json::from_str(&r.fields)
                    .map_err(|e| Error::fault("stored fields", e))?;
                let both = format!(
                    "{};{}",
                    r.reasons1.unwrap_or_default(),
                    r.reasons2.unwrap_or_default()
                );
                let mut reasons = crate::domain::Reason::split_stored(&both).map_err(|m| {
                    Error::Internal(format!("clip `{}`, its Stage 1 item: {m}", r.clip_key))
                })?;
                campaign
                    .taxonomy
                    .order_reasons(crate::domain::Stage::Clip, &mut reasons);
                let reasons: Vec<String> = reasons.iter().map(|x| x.as_str().to_string()).collect();
                let notes: Vec<String> = [r.note1, r.note2, r.author_note]
                    .into_iter()
                    .flatten()
                    .filter(|n| !n.is_empty())
                    .collect();
                Ok(RegenerationItem {
                    clip_id: r.clip_key,
                    task: r.task,
                    version: r.version,
                    outcome: r.outcome,
                    scene_graph: fields.get("scene_graph").cloned().unwrap_or(Value::Null),
                    scenario: fields.get("scenario").cloned().unwrap_or(Value::Null),
                    reasons,
                    notes,
                })
            })
            .collect()
    }

    /// The events the filter names: per clip and version in time order, or with a
    /// `limit`, the latest that many, newest first.
    pub async fn audit(
        &self,
        campaign: &Campaign,
        filter: &AuditFilter,
    ) -> Result<Vec<AuditEvent>> {
        read_tx!(self, long, |c| audit(c, campaign, filter).await)
    }

    /// A page of the events the filter names, with how many match: one statement per
    /// kind of event for the page, and one per kind to count.
    pub async fn audit_page(
        &self,
        campaign: &Campaign,
        filter: &AuditFilter,
        paging: &AuditPaging,
    ) -> Result<Page<AuditEvent>> {
        read_tx!(self, long, |c| audit_page(c, campaign, filter, paging)
            .await)
    }
}

// Bulk records: decisions and resolutions brought in (in file order, in one write),
// and the campaign read out: every decision and resolution, the retained benchmark,
// the regeneration list, the audit trail. (Shared SQL: compiled once per backend, see
// store/mod.rs.)

use crate::store::write;
use crate::domain::records::{
    AuditEvent, AuditFilter, AuditPaging, AuditPosition, DecisionRecord, DecisionRow, RegenerationItem, ResolutionRecord, ResolutionRow,
    RetainedClip, RetainedCounts, RetainedQuestion,
};
use crate::domain::Outcome;
use crate::error::{Error, LineError, Result};
use crate::store::Lock;
use crate::store::catalog::Campaign;
use crate::store::records::BulkSummary;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// One kind of audit event: its columns (the clip's key, the item's when the kind has
/// one, the person's when it has one, its time, its row's id) and its rank among kinds
/// at the same time (`AuditPosition::kind`).
struct AuditKind {
    /// The query up to where the campaign's id goes.
    base: &'static str,
    clip: &'static str,
    item: Option<&'static str>,
    who: Option<&'static str>,
    at: &'static str,
    row: &'static str,
    kind: i64,
}

const IMPORTS: AuditKind = AuditKind {
    base: "SELECT c.clip_key, v.version, v.created_at, v.source_file, im.manifest, v.id AS row_id
           FROM clip_versions v JOIN clips c ON c.id = v.clip_id JOIN imports im ON im.id = v.import_id
           WHERE c.campaign_id = ",
    clip: "c.clip_key",
    item: None,
    who: None,
    at: "v.created_at",
    row: "v.id",
    kind: 0,
};

const VERDICTS: AuditKind = AuditKind {
    base: "SELECT c.clip_key, i.clip_version AS version, i.stage, i.item_key, d.seq, d.verdict, d.reasons,
                  d.note, d.decided_at, d.origin, u.name, d.id AS row_id
           FROM decisions d JOIN items i ON i.id = d.item_id JOIN users u ON u.id = d.validator_id
           JOIN clip_versions v ON v.id = i.clip_version_id JOIN clips c ON c.id = v.clip_id
           WHERE d.campaign_id = ",
    clip: "c.clip_key",
    item: Some("i.item_key"),
    who: Some("u.name"),
    at: "d.decided_at",
    row: "d.id",
    kind: 1,
};

// An outcome happens with the later of the two counted verdicts.
const OUTCOMES: AuditKind = AuditKind {
    base: "SELECT x.* FROM (
             SELECT c.clip_key, i.clip_version AS version, i.stage, i.item_key,
                    CASE WHEN d1.decided_at > d2.decided_at THEN d1.decided_at ELSE d2.decided_at END AS at,
                    CASE WHEN i.outcome IN ('split_accepted', 'split_rejected') THEN 'split' ELSE i.outcome END AS outcome,
                    i.campaign_id, i.id AS row_id
             FROM items i JOIN decisions d1 ON d1.id = i.final1_id JOIN decisions d2 ON d2.id = i.final2_id
             JOIN clip_versions v ON v.id = i.clip_version_id JOIN clips c ON c.id = v.clip_id
           ) x WHERE x.campaign_id = ",
    clip: "x.clip_key",
    item: Some("x.item_key"),
    who: None,
    at: "x.at",
    row: "x.row_id",
    kind: 2,
};

// Sampled review: each item a lot took, at its draw (drawn, or held for the lot's
// decision) or at its lot's decision (retained by sample, or sent to full review).
const SAMPLES: AuditKind = AuditKind {
    base: "SELECT x.* FROM (
             SELECT c.clip_key, i.clip_version AS version, i.stage, i.item_key, l.id AS lot,
                    l.n, l.lot_size, l.c, i.drawn, l.decision, l.defects,
                    CASE WHEN i.drawn = 1 OR l.settled_at IS NULL THEN l.drawn_at
                         ELSE l.settled_at END AS at,
                    i.campaign_id, i.id AS row_id
             FROM items i JOIN sample_lots l ON l.id = i.lot_id
             JOIN clip_versions v ON v.id = i.clip_version_id JOIN clips c ON c.id = v.clip_id
           ) x WHERE x.campaign_id = ",
    clip: "x.clip_key",
    item: Some("x.item_key"),
    who: None,
    at: "x.at",
    row: "x.row_id",
    kind: 3,
};

const RESOLUTIONS: AuditKind = AuditKind {
    base: "SELECT c.clip_key, i.clip_version AS version, i.stage, i.item_key, r.verdict, r.note,
                  r.decided_at, u.name, r.id AS row_id
           FROM resolutions r JOIN items i ON i.id = r.item_id JOIN users u ON u.id = r.author_id
           JOIN clip_versions v ON v.id = i.clip_version_id JOIN clips c ON c.id = v.clip_id
           WHERE i.campaign_id = ",
    clip: "c.clip_key",
    item: Some("i.item_key"),
    who: Some("u.name"),
    at: "r.decided_at",
    row: "r.id",
    kind: 4,
};

const CALIBRATIONS: AuditKind = AuditKind {
    base: "SELECT c.clip_key, i.clip_version AS version, i.stage, i.item_key, d.verdict, d.agrees,
                  d.round, d.decided_at, u.name, d.id AS row_id
           FROM calibration_decisions d JOIN items i ON i.id = d.item_id JOIN users u ON u.id = d.validator_id
           JOIN clip_versions v ON v.id = i.clip_version_id JOIN clips c ON c.id = v.clip_id
           WHERE d.campaign_id = ",
    clip: "c.clip_key",
    item: Some("i.item_key"),
    who: Some("u.name"),
    at: "d.decided_at",
    row: "d.id",
    kind: 5,
};

// The blind key check: a validator's answer before the key was shown.
const BLIND_ANSWERS: AuditKind = AuditKind {
    base: "SELECT x.* FROM (
             SELECT c.clip_key, i.clip_version AS version, i.stage, i.item_key, b.answer,
                    q.answer AS keyed, b.answered_at, u.name, b.campaign_id,
                    b.id AS row_id
             FROM blind_answers b JOIN items i ON i.id = b.item_id
             JOIN questions q ON q.id = i.question_id JOIN users u ON u.id = b.validator_id
             JOIN clip_versions v ON v.id = i.clip_version_id JOIN clips c ON c.id = v.clip_id
           ) x WHERE x.campaign_id = ",
    clip: "x.clip_key",
    item: Some("x.item_key"),
    who: Some("x.name"),
    at: "x.answered_at",
    row: "x.row_id",
    kind: 6,
};

const AUDIT_KINDS: [AuditKind; 7] = [
    IMPORTS,
    VERDICTS,
    OUTCOMES,
    SAMPLES,
    RESOLUTIONS,
    CALIBRATIONS,
    BLIND_ANSWERS,
];

/// How an audit query reads: every matching row, the latest `limit` (newest first),
/// a page's rows beside its position, or the count of matching rows.
#[derive(Clone, Copy)]
enum AuditRead<'a> {
    Rows,
    Page(&'a AuditPaging),
    Count,
}

impl AuditKind {
    /// Whether a filter's events can be of this kind: events without a person (imports,
    /// outcomes, sample draws) do not match a person.
    fn matches(&self, filter: &AuditFilter) -> bool {
        filter.who.is_none() || self.who.is_some()
    }

    /// The kind's query: only the filter's conditions that are given (the clip, an id
    /// prefix of the clip or, when the kind has one, of the item, the person, the
    /// window on the time), so that the planner can take the indexes they name; then
    /// as `read` says.
    fn query(&self, campaign_id: i64, filter: &AuditFilter, read: AuditRead) -> sqlx::QueryBuilder<Db> {
        let mut q = sqlx::QueryBuilder::<Db>::new(match read {
            AuditRead::Count => format!("SELECT COUNT(*) FROM ({}", self.base),
            _ => self.base.to_string(),
        });
        q.push_bind(campaign_id);
        if let Some(clip) = &filter.clip {
            q.push(format!(" AND {} = ", self.clip)).push_bind(clip.as_str());
        }
        if let Some(prefix) = &filter.prefix {
            // The same test on both backends (SQLite's LIKE ignores case, PostgreSQL's
            // does not); the campaign's own index narrows the rows first.
            q.push(format!(" AND (substr({}, 1, length(", self.clip))
                .push_bind(prefix.clone())
                .push(")) = ")
                .push_bind(prefix.clone());
            if let Some(item_key) = self.item {
                q.push(format!(" OR substr({item_key}, 1, length("))
                    .push_bind(prefix.clone())
                    .push(")) = ")
                    .push_bind(prefix.clone());
            }
            q.push(")");
        }
        if let (Some(name), Some(col)) = (&filter.who, self.who) {
            q.push(format!(" AND {col} = ")).push_bind(name.as_str());
        }
        let at = self.at;
        if let Some(from) = filter.from {
            q.push(format!(" AND {at} >= ")).push_bind(from);
        }
        if let Some(to) = filter.to {
            q.push(format!(" AND {at} <= ")).push_bind(to);
        }
        match read {
            AuditRead::Count => {
                q.push(") n");
            }
            AuditRead::Rows => {
                q.push(format!(" ORDER BY {at} DESC"));
                if let Some(limit) = filter.limit {
                    q.push(" LIMIT ")
                        .push_bind(i64::try_from(limit).unwrap_or(i64::MAX));
                }
            }
            AuditRead::Page(page) => {
                // The rows on the page's side of its position (`AuditPosition` orders
                // by time, kind, row), nearest first.
                let up = page.reads_up();
                if let Some(p) = page.at {
                    let (strict, or_equal) = if up { (">", ">=") } else { ("<", "<=") };
                    let row = self.row;
                    if self.kind == p.kind {
                        q.push(format!(" AND ({at} {strict} "))
                            .push_bind(p.at)
                            .push(format!(" OR ({at} = "))
                            .push_bind(p.at)
                            .push(format!(" AND {row} {strict} "))
                            .push_bind(p.row)
                            .push("))");
                    } else {
                        // A later kind at the same time lies above the position.
                        let op = if (self.kind > p.kind) == up { or_equal } else { strict };
                        q.push(format!(" AND {at} {op} ")).push_bind(p.at);
                    }
                }
                let dir = if up { "ASC" } else { "DESC" };
                q.push(format!(" ORDER BY {at} {dir}, {} {dir} LIMIT ", self.row))
                    .push_bind(i64::try_from(page.limit.saturating_add(1)).unwrap_or(i64::MAX));
            }
        }
        q
    }
}

fn parse_outcome(s: &str) -> Result<Outcome> {
    Outcome::parse(s).ok_or_else(|| Error::Internal(format!("stored outcome `{s}`")))
}

impl Backend {
    pub(crate) async fn import_decisions(
        &self,
        campaign: &Campaign,
        rows: &[DecisionRow],
        problems: Vec<LineError>,
        what: &str,
    ) -> Result<BulkSummary> {
        let (campaign, rows, what) = (campaign.clone(), Arc::new(rows.to_vec()), what.to_string());
        self.write_tx(Lock::Structure, move |tx| {
            let (campaign, rows, problems, what) =
                (campaign.clone(), rows.clone(), problems.clone(), what.clone());
            Box::pin(async move {
                let rows = write::records::Rows::Decisions(&rows);
                write::records::import(tx, &campaign, rows, problems, &what)
                    .await
            })
        })
        .await
    }

    pub(crate) async fn import_resolutions(
        &self,
        campaign: &Campaign,
        rows: &[ResolutionRow],
        problems: Vec<LineError>,
        what: &str,
    ) -> Result<BulkSummary> {
        let (campaign, rows, what) = (campaign.clone(), Arc::new(rows.to_vec()), what.to_string());
        self.write_tx(Lock::Structure, move |tx| {
            let (campaign, rows, problems, what) =
                (campaign.clone(), rows.clone(), problems.clone(), what.clone());
            Box::pin(async move {
                let rows = write::records::Rows::Resolutions(&rows);
                write::records::import(tx, &campaign, rows, problems, &what)
                    .await
            })
        })
        .await
    }

    pub(crate) async fn record_counts(&self, campaign: &Campaign) -> Result<(usize, usize)> {
        let (d, r): (i64, i64) = qa(
            "SELECT (SELECT COUNT(*) FROM decisions d JOIN items i ON i.id = d.item_id
                     WHERE d.campaign_id = $1 AND i.calibration = 0),
                    (SELECT COUNT(*) FROM resolutions r JOIN items i ON i.id = r.item_id
                     WHERE i.campaign_id = $1)",
        )
        .bind(campaign.id)
        .fetch_one(&mut *self.read().await?)
        .await?;
        Ok((
            usize::try_from(d).unwrap_or(0),
            usize::try_from(r).unwrap_or(0),
        ))
    }

    pub(crate) async fn decision_records(&self, campaign: &Campaign) -> Result<Vec<DecisionRecord>> {
        #[derive(sqlx::FromRow)]
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
        Ok(qa::<Row>(
            "SELECT i.stage, i.item_key, u.name, d.verdict, d.reasons, d.note, d.decided_at,
                    d.time_spent_ms, d.time_measure, i.clip_version,
                    CAST(CASE WHEN d.id = i.final1_id OR d.id = i.final2_id THEN 1 ELSE 0 END AS BIGINT) AS counted,
                    d.protocol_version
             FROM decisions d
             JOIN items i ON i.id = d.item_id
             JOIN users u ON u.id = d.validator_id
             WHERE d.campaign_id = $1 AND i.calibration = 0
             ORDER BY d.id",
        )
        .bind(campaign.id)
        .fetch_all(&mut *self.read().await?)
        .await?
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

    pub(crate) async fn resolution_records(
        &self,
        campaign: &Campaign,
    ) -> Result<Vec<ResolutionRecord>> {
        #[derive(sqlx::FromRow)]
        struct Row {
            stage: i64,
            item_key: String,
            name: String,
            verdict: String,
            note: String,
            decided_at: i64,
            clip_version: i64,
        }
        Ok(qa::<Row>(
            "SELECT i.stage, i.item_key, u.name, r.verdict, r.note, r.decided_at, i.clip_version
             FROM resolutions r
             JOIN items i ON i.id = r.item_id
             JOIN users u ON u.id = r.author_id
             WHERE i.campaign_id = $1
             ORDER BY r.id",
        )
        .bind(campaign.id)
        .fetch_all(&mut *self.read().await?)
        .await?
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

    pub(crate) async fn retained(
        &self,
        campaign: &Campaign,
    ) -> Result<(Vec<RetainedClip>, RetainedCounts)> {
        let mut c = self.read().await?;
        #[derive(sqlx::FromRow)]
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
        // A clip's Stage 1 item (none in a protocol without clip review, where every
        // clip stands and its questions decide).
        let clips: Vec<ClipRow> = qa(
            "SELECT c.clip_key, t.code AS task, v.id AS version_id, v.version, v.fields,
                    v.media_sha256, v.media_type, i.outcome
             FROM clips c
             JOIN clip_versions v ON v.id = c.current_version_id
             JOIN tasks t ON t.id = c.task_id
             LEFT JOIN items i ON i.clip_version_id = v.id AND i.stage = 1
             WHERE c.campaign_id = $1 AND c.calibration = 0
             ORDER BY t.position, c.clip_key",
        )
        .bind(campaign.id)
        .fetch_all(&mut *c)
        .await?;
        #[derive(sqlx::FromRow)]
        struct QuestionRow {
            clip_version_id: i64,
            question_key: String,
            qa_type: String,
            level: String,
            body: String,
            options: String,
            answer: i64,
            outcome: String,
        }
        let questions: Vec<QuestionRow> = qa(
            "SELECT q.clip_version_id, q.question_key, q.qa_type, q.level, q.body, q.options, q.answer, i.outcome
             FROM items i
             JOIN questions q ON q.id = i.question_id
             WHERE i.campaign_id = $1 AND i.stage = 2 AND i.is_current = 1 AND i.calibration = 0
             ORDER BY q.clip_version_id, q.position",
        )
        .bind(campaign.id)
        .fetch_all(&mut *c)
        .await?;
        let mut counts = RetainedCounts::default();
        let mut by_version: HashMap<i64, Vec<RetainedQuestion>> = HashMap::new();
        let mut question_outcomes: HashMap<i64, Vec<Outcome>> = HashMap::new();
        for q in questions {
            let outcome = parse_outcome(&q.outcome)?;
            question_outcomes
                .entry(q.clip_version_id)
                .or_default()
                .push(outcome);
            if outcome.is_retained() {
                by_version
                    .entry(q.clip_version_id)
                    .or_default()
                    .push(RetainedQuestion {
                        question_id: q.question_key,
                        qa_type: q.qa_type,
                        level: q.level,
                        question: q.body,
                        options: serde_json::from_str(&q.options)
                            .map_err(|e| Error::Internal(format!("stored options: {e}")))?,
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
                for o in question_outcomes.get(&c.version_id).into_iter().flatten() {
                    counts.questions += 1;
                    if o.is_retained() {
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
                        .map_err(|e| Error::Internal(format!("stored fields: {e}")))?,
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

    pub(crate) async fn regeneration_list(
        &self,
        campaign: &Campaign,
    ) -> Result<Vec<RegenerationItem>> {
        #[derive(sqlx::FromRow)]
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
        let rows: Vec<Row> = qa(
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
        .fetch_all(&mut *self.read().await?)
        .await?;
        rows.into_iter()
            .map(|r| {
                let fields: Value = serde_json::from_str(&r.fields)
                    .map_err(|e| Error::Internal(format!("stored fields: {e}")))?;
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
                let reasons: Vec<String> =
                    reasons.iter().map(|x| x.as_str().to_string()).collect();
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

    pub(crate) async fn audit(
        &self,
        campaign: &Campaign,
        filter: &AuditFilter,
    ) -> Result<Vec<AuditEvent>> {
        let mut out = self.audit_rows(campaign, filter, AuditRead::Rows).await?;
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
        if let Some(limit) = filter.limit {
            // The latest `limit` events, newest first.
            out.sort_by_key(|e| std::cmp::Reverse((e.at, e.order)));
            out.truncate(limit);
        }
        Ok(out)
    }

    pub(crate) async fn audit_page(
        &self,
        campaign: &Campaign,
        filter: &AuditFilter,
        paging: &AuditPaging,
    ) -> Result<crate::domain::paging::Page<AuditEvent>> {
        let read = self.audit_rows(campaign, filter, AuditRead::Page(paging)).await?;
        let mut matching = 0usize;
        let mut c = self.read().await?;
        for kind in AUDIT_KINDS.iter().filter(|k| k.matches(filter)) {
            let mut q = kind.query(campaign.id, filter, AuditRead::Count);
            super::super::count::add(1);
            let (n,): (i64,) = q.build_query_as().fetch_one(&mut *c).await?;
            matching += usize::try_from(n).unwrap_or(0);
        }
        Ok(paging.cut(read, matching))
    }

    /// The events of each kind the filter names, read as `read` says (each kind
    /// newest first, at most the filter's `limit` of it, so that the latest `limit` of
    /// all are among them; or a page's rows beside its position), not yet merged.
    async fn audit_rows(
        &self,
        campaign: &Campaign,
        filter: &AuditFilter,
        read: AuditRead<'_>,
    ) -> Result<Vec<AuditEvent>> {
        let mut c = self.read().await?;
        let mut out = Vec::new();
        #[derive(sqlx::FromRow)]
        struct Versions {
            row_id: i64,
            clip_key: String,
            version: i64,
            created_at: i64,
            source_file: String,
            manifest: String,
        }
        if IMPORTS.matches(filter) {
            let mut q = IMPORTS.query(campaign.id, filter, read);
            super::super::count::add(1);
            for r in q.build_query_as::<Versions>().fetch_all(&mut *c).await? {
                out.push(AuditEvent {
                    at: r.created_at,
                    item_id: r.clip_key.clone(),
                    clip_id: r.clip_key,
                    version: r.version,
                    stage: None,
                    event: if r.version == 1 {
                        "import".into()
                    } else {
                        "new_version".into()
                    },
                    who: String::new(),
                    detail: format!("{} from {}", r.source_file, r.manifest),
                    order: 0,
                    position: AuditPosition { at: r.created_at, kind: IMPORTS.kind, row: r.row_id },
                });
            }
        }
        #[derive(sqlx::FromRow)]
        struct Decided {
            row_id: i64,
            clip_key: String,
            version: i64,
            stage: i64,
            item_key: String,
            seq: i64,
            verdict: String,
            reasons: String,
            note: String,
            decided_at: i64,
            origin: String,
            name: String,
        }
        let mut q = VERDICTS.query(campaign.id, filter, read);
        super::super::count::add(1);
        for r in q.build_query_as::<Decided>().fetch_all(&mut *c).await? {
            let mut detail = r.verdict;
            if !r.reasons.is_empty() {
                detail.push_str(&format!(" ({})", r.reasons.replace(';', ", ")));
            }
            if !r.note.is_empty() {
                detail.push_str(&format!(": {}", r.note));
            }
            detail.push_str(&format!(" [via {}]", r.origin));
            out.push(AuditEvent {
                at: r.decided_at,
                item_id: r.item_key,
                clip_id: r.clip_key,
                version: r.version,
                stage: Some(r.stage),
                event: if r.seq == 1 {
                    "verdict".into()
                } else {
                    format!("change #{}", r.seq - 1)
                },
                who: r.name,
                detail,
                order: 1,
                    position: AuditPosition { at: r.decided_at, kind: VERDICTS.kind, row: r.row_id },
            });
        }
        #[derive(sqlx::FromRow)]
        struct Completed {
            row_id: i64,
            clip_key: String,
            version: i64,
            stage: i64,
            item_key: String,
            at: i64,
            outcome: String,
        }
        if OUTCOMES.matches(filter) {
            let mut q = OUTCOMES.query(campaign.id, filter, read);
            super::super::count::add(1);
            for r in q.build_query_as::<Completed>().fetch_all(&mut *c).await? {
                let detail = match r.outcome.as_str() {
                    "both_pass" => "both pass: retained".to_string(),
                    "both_reject" => "both reject: rejected".to_string(),
                    _ => "split: waiting for an author".to_string(),
                };
                out.push(AuditEvent {
                    at: r.at,
                    item_id: r.item_key,
                    clip_id: r.clip_key,
                    version: r.version,
                    stage: Some(r.stage),
                    event: "outcome".into(),
                    who: String::new(),
                    detail,
                    order: 2,
                    position: AuditPosition { at: r.at, kind: OUTCOMES.kind, row: r.row_id },
                });
            }
        }
        // Sampled review: each item a lot took, at its draw (drawn, or held for the
        // lot's decision) or at its lot's decision (retained by sample, or sent to full
        // review).
        #[derive(sqlx::FromRow)]
        struct Sampled {
            row_id: i64,
            clip_key: String,
            version: i64,
            stage: i64,
            item_key: String,
            lot: i64,
            n: i64,
            lot_size: i64,
            c: i64,
            drawn: i64,
            decision: Option<String>,
            defects: Option<i64>,
            at: i64,
        }
        if SAMPLES.matches(filter) {
            let mut q = SAMPLES.query(campaign.id, filter, read);
            super::super::count::add(1);
            for r in q.build_query_as::<Sampled>().fetch_all(&mut *c).await? {
                let plan = format!(
                    "lot {}: {} of {} drawn, accepted with at most {} defect(s)",
                    r.lot, r.n, r.lot_size, r.c
                );
                let sample = format!("{} defect(s) in its sample of {}", r.defects.unwrap_or(0), r.n);
                let detail = match (r.drawn, r.decision.as_deref()) {
                    (1, _) => format!("drawn for review ({plan})"),
                    (_, None) => format!("not drawn: held for the lot's decision ({plan})"),
                    (_, Some("accepted")) => {
                        format!("retained by sample: lot {} accepted, {sample}", r.lot)
                    }
                    _ => format!("sent to full review: lot {} rejected, {sample}", r.lot),
                };
                out.push(AuditEvent {
                    at: r.at,
                    item_id: r.item_key,
                    clip_id: r.clip_key,
                    version: r.version,
                    stage: Some(r.stage),
                    event: "sample".into(),
                    who: String::new(),
                    detail,
                    order: 1,
                    position: AuditPosition { at: r.at, kind: SAMPLES.kind, row: r.row_id },
                });
            }
        }
        #[derive(sqlx::FromRow)]
        struct Resolved {
            row_id: i64,
            clip_key: String,
            version: i64,
            stage: i64,
            item_key: String,
            verdict: String,
            note: String,
            decided_at: i64,
            name: String,
        }
        let mut q = RESOLUTIONS.query(campaign.id, filter, read);
        super::super::count::add(1);
        for r in q.build_query_as::<Resolved>().fetch_all(&mut *c).await? {
            out.push(AuditEvent {
                at: r.decided_at,
                item_id: r.item_key,
                clip_id: r.clip_key,
                version: r.version,
                stage: Some(r.stage),
                event: "resolution".into(),
                who: r.name,
                detail: format!(
                    "{}: {}",
                    if r.verdict == "accept" {
                        "split accepted, retained"
                    } else {
                        "split rejected"
                    },
                    r.note
                ),
                order: 3,
                    position: AuditPosition { at: r.decided_at, kind: RESOLUTIONS.kind, row: r.row_id },
            });
        }
        #[derive(sqlx::FromRow)]
        struct Calibrated {
            row_id: i64,
            clip_key: String,
            version: i64,
            stage: i64,
            item_key: String,
            verdict: String,
            agrees: i64,
            round: i64,
            decided_at: i64,
            name: String,
        }
        let mut q = CALIBRATIONS.query(campaign.id, filter, read);
        super::super::count::add(1);
        for r in q.build_query_as::<Calibrated>().fetch_all(&mut *c).await? {
            out.push(AuditEvent {
                at: r.decided_at,
                item_id: r.item_key,
                clip_id: r.clip_key,
                version: r.version,
                stage: Some(r.stage),
                event: "calibration_verdict".into(),
                who: r.name,
                detail: format!(
                    "{} ({} the known verdict, round {})",
                    r.verdict,
                    if r.agrees == 1 {
                        "agrees with"
                    } else {
                        "differs from"
                    },
                    r.round
                ),
                order: 1,
                    position: AuditPosition { at: r.decided_at, kind: CALIBRATIONS.kind, row: r.row_id },
            });
        }
        #[derive(sqlx::FromRow)]
        struct Blind {
            row_id: i64,
            clip_key: String,
            version: i64,
            stage: i64,
            item_key: String,
            answer: i64,
            keyed: i64,
            answered_at: i64,
            name: String,
        }
        let mut q = BLIND_ANSWERS.query(campaign.id, filter, read);
        super::super::count::add(1);
        for r in q.build_query_as::<Blind>().fetch_all(&mut *c).await? {
            let letter = crate::domain::records::option_letter;
            out.push(AuditEvent {
                at: r.answered_at,
                item_id: r.item_key,
                clip_id: r.clip_key,
                version: r.version,
                stage: Some(r.stage),
                event: "blind_answer".into(),
                who: r.name,
                detail: format!(
                    "answered {} before the key was shown; the key is {}{}",
                    letter(r.answer),
                    letter(r.keyed),
                    if r.answer == r.keyed { "" } else { " (they differ)" }
                ),
                order: 1,
                position: AuditPosition {
                    at: r.answered_at,
                    kind: BLIND_ANSWERS.kind,
                    row: r.row_id,
                },
            });
        }
        Ok(out)
    }
}

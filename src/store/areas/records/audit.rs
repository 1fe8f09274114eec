//! The audit trail: one statement per kind of event, with only the filter's conditions
//! that are given (so that the planner takes the indexes they name), read in full, as
//! the latest few, as a page beside a position, or counted.

use crate::domain::paging::Page;
use crate::domain::records::{AuditEvent, AuditFilter, AuditPaging, AuditPosition};
use crate::error::Result;
use crate::store::catalog::Campaign;
use crate::store::db::{Tx, Value, row};

/// A statement made at run time: its text with `$1`, `$2`, ... in the order its
/// values were bound.
struct Built<'a> {
    text: String,
    args: Vec<Value<'a>>,
}

impl<'a> Built<'a> {
    fn new(text: String) -> Built<'a> {
        Built {
            text,
            args: Vec::new(),
        }
    }

    fn push(&mut self, text: impl AsRef<str>) -> &mut Self {
        self.text.push_str(text.as_ref());
        self
    }

    fn push_bind(&mut self, value: impl Into<Value<'a>>) -> &mut Self {
        self.args.push(value.into());
        self.text.push('$');
        self.text.push_str(&self.args.len().to_string());
        self
    }

    fn done(self) -> (String, Vec<Value<'a>>) {
        (self.text, self.args)
    }
}

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

// An author's withdrawal of a retained question (its key in doubt).
const WITHDRAWALS: AuditKind = AuditKind {
    base: "SELECT c.clip_key, i.clip_version AS version, i.stage, i.item_key, w.reason, w.note,
                  w.decided_at, w.origin, u.name, w.id AS row_id
           FROM withdrawals w JOIN items i ON i.id = w.item_id JOIN users u ON u.id = w.author_id
           JOIN clip_versions v ON v.id = i.clip_version_id JOIN clips c ON c.id = v.clip_id
           WHERE w.campaign_id = ",
    clip: "c.clip_key",
    item: Some("i.item_key"),
    who: Some("u.name"),
    at: "w.decided_at",
    row: "w.id",
    kind: 7,
};

const AUDIT_KINDS: [AuditKind; 8] = [
    IMPORTS,
    VERDICTS,
    OUTCOMES,
    SAMPLES,
    RESOLUTIONS,
    CALIBRATIONS,
    BLIND_ANSWERS,
    WITHDRAWALS,
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
    fn query<'a>(
        &self,
        campaign_id: i64,
        filter: &'a AuditFilter,
        read: AuditRead,
    ) -> (String, Vec<Value<'a>>) {
        let mut q = Built::new(match read {
            AuditRead::Count => format!("SELECT COUNT(*) FROM ({}", self.base),
            _ => self.base.to_string(),
        });
        q.push_bind(campaign_id);
        if let Some(clip) = &filter.clip {
            q.push(format!(" AND {} = ", self.clip))
                .push_bind(clip.as_str());
        }
        if let Some(prefix) = &filter.prefix {
            // The same test on both backends (SQLite's LIKE ignores case, PostgreSQL's
            // does not); the campaign's own index narrows the rows first.
            q.push(format!(" AND (substr({}, 1, length(", self.clip))
                .push_bind(prefix.as_str())
                .push(")) = ")
                .push_bind(prefix.as_str());
            if let Some(item_key) = self.item {
                q.push(format!(" OR substr({item_key}, 1, length("))
                    .push_bind(prefix.as_str())
                    .push(")) = ")
                    .push_bind(prefix.as_str());
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
                        let op = if (self.kind > p.kind) == up {
                            or_equal
                        } else {
                            strict
                        };
                        q.push(format!(" AND {at} {op} ")).push_bind(p.at);
                    }
                }
                let dir = if up { "ASC" } else { "DESC" };
                q.push(format!(" ORDER BY {at} {dir}, {} {dir} LIMIT ", self.row))
                    .push_bind(i64::try_from(page.limit.saturating_add(1)).unwrap_or(i64::MAX));
            }
        }
        q.done()
    }
}

pub(super) async fn audit(
    c: &mut impl Tx,
    campaign: &Campaign,
    filter: &AuditFilter,
) -> Result<Vec<AuditEvent>> {
    let mut out = audit_rows(c, campaign, filter, AuditRead::Rows).await?;
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

pub(super) async fn audit_page(
    c: &mut impl Tx,
    campaign: &Campaign,
    filter: &AuditFilter,
    paging: &AuditPaging,
) -> Result<Page<AuditEvent>> {
    let read = audit_rows(c, campaign, filter, AuditRead::Page(paging)).await?;
    let mut matching = 0usize;
    for kind in AUDIT_KINDS.iter().filter(|k| k.matches(filter)) {
        let (text, args) = kind.query(campaign.id, filter, AuditRead::Count);
        let counted: Vec<(i64,)> = c.fetch_built(&text, &args).await?;
        let n = counted.first().map_or(0, |r| r.0);
        matching += usize::try_from(n).unwrap_or(0);
    }
    Ok(paging.cut(read, matching))
}

/// The events of each kind the filter names, read as `read` says (each kind
/// newest first, at most the filter's `limit` of it, so that the latest `limit` of
/// all are among them; or a page's rows beside its position), not yet merged.
async fn audit_rows(
    c: &mut impl Tx,
    campaign: &Campaign,
    filter: &AuditFilter,
    read: AuditRead<'_>,
) -> Result<Vec<AuditEvent>> {
    let mut out = Vec::new();
    imports_and_verdicts(c, campaign, filter, read, &mut out).await?;
    outcomes_and_samples(c, campaign, filter, read, &mut out).await?;
    resolutions_and_answers(c, campaign, filter, read, &mut out).await?;
    withdrawals(c, campaign, filter, read, &mut out).await?;
    Ok(out)
}

/// Imports (and new versions) and verdicts.
async fn imports_and_verdicts(
    c: &mut impl Tx,
    campaign: &Campaign,
    filter: &AuditFilter,
    read: AuditRead<'_>,
    out: &mut Vec<AuditEvent>,
) -> Result<()> {
    row! {
        struct Versions {
            row_id: i64,
            clip_key: String,
            version: i64,
            created_at: i64,
            source_file: String,
            manifest: String,
        }
    }
    if IMPORTS.matches(filter) {
        let (text, args) = IMPORTS.query(campaign.id, filter, read);
        for r in c.fetch_built::<Versions>(&text, &args).await? {
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
                position: AuditPosition {
                    at: r.created_at,
                    kind: IMPORTS.kind,
                    row: r.row_id,
                },
            });
        }
    }
    row! {
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
    }
    let (text, args) = VERDICTS.query(campaign.id, filter, read);
    for r in c.fetch_built::<Decided>(&text, &args).await? {
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
            position: AuditPosition {
                at: r.decided_at,
                kind: VERDICTS.kind,
                row: r.row_id,
            },
        });
    }
    Ok(())
}

/// Outcomes, and each item a sampled lot took.
async fn outcomes_and_samples(
    c: &mut impl Tx,
    campaign: &Campaign,
    filter: &AuditFilter,
    read: AuditRead<'_>,
    out: &mut Vec<AuditEvent>,
) -> Result<()> {
    row! {
        struct Completed {
            row_id: i64,
            clip_key: String,
            version: i64,
            stage: i64,
            item_key: String,
            at: i64,
            outcome: String,
        }
    }
    if OUTCOMES.matches(filter) {
        let (text, args) = OUTCOMES.query(campaign.id, filter, read);
        for r in c.fetch_built::<Completed>(&text, &args).await? {
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
                position: AuditPosition {
                    at: r.at,
                    kind: OUTCOMES.kind,
                    row: r.row_id,
                },
            });
        }
    }
    // Sampled review: each item a lot took, at its draw (drawn, or held for the
    // lot's decision) or at its lot's decision (retained by sample, or sent to full
    // review).
    row! {
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
    }
    if SAMPLES.matches(filter) {
        let (text, args) = SAMPLES.query(campaign.id, filter, read);
        for r in c.fetch_built::<Sampled>(&text, &args).await? {
            let plan = format!(
                "lot {}: {} of {} drawn, accepted with at most {} defect(s)",
                r.lot, r.n, r.lot_size, r.c
            );
            let sample = format!(
                "{} defect(s) in its sample of {}",
                r.defects.unwrap_or(0),
                r.n
            );
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
                position: AuditPosition {
                    at: r.at,
                    kind: SAMPLES.kind,
                    row: r.row_id,
                },
            });
        }
    }
    Ok(())
}

/// Authors' resolutions, calibration verdicts and blind answers.
async fn resolutions_and_answers(
    c: &mut impl Tx,
    campaign: &Campaign,
    filter: &AuditFilter,
    read: AuditRead<'_>,
    out: &mut Vec<AuditEvent>,
) -> Result<()> {
    row! {
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
    }
    let (text, args) = RESOLUTIONS.query(campaign.id, filter, read);
    for r in c.fetch_built::<Resolved>(&text, &args).await? {
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
            position: AuditPosition {
                at: r.decided_at,
                kind: RESOLUTIONS.kind,
                row: r.row_id,
            },
        });
    }
    row! {
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
    }
    let (text, args) = CALIBRATIONS.query(campaign.id, filter, read);
    for r in c.fetch_built::<Calibrated>(&text, &args).await? {
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
            position: AuditPosition {
                at: r.decided_at,
                kind: CALIBRATIONS.kind,
                row: r.row_id,
            },
        });
    }
    row! {
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
    }
    let (text, args) = BLIND_ANSWERS.query(campaign.id, filter, read);
    for r in c.fetch_built::<Blind>(&text, &args).await? {
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
                if r.answer == r.keyed {
                    ""
                } else {
                    " (they differ)"
                }
            ),
            order: 1,
            position: AuditPosition {
                at: r.answered_at,
                kind: BLIND_ANSWERS.kind,
                row: r.row_id,
            },
        });
    }
    Ok(())
}

/// Authors' withdrawals of retained questions.
async fn withdrawals(
    c: &mut impl Tx,
    campaign: &Campaign,
    filter: &AuditFilter,
    read: AuditRead<'_>,
    out: &mut Vec<AuditEvent>,
) -> Result<()> {
    row! {
        struct Withdrawn {
            row_id: i64,
            clip_key: String,
            version: i64,
            stage: i64,
            item_key: String,
            reason: String,
            note: String,
            decided_at: i64,
            origin: String,
            name: String,
        }
    }
    let (text, args) = WITHDRAWALS.query(campaign.id, filter, read);
    for r in c.fetch_built::<Withdrawn>(&text, &args).await? {
        out.push(AuditEvent {
            at: r.decided_at,
            item_id: r.item_key,
            clip_id: r.clip_key,
            version: r.version,
            stage: Some(r.stage),
            event: "withdrawal".into(),
            who: r.name,
            detail: format!(
                "withdrawn from the retained benchmark ({}): {} [via {}]",
                r.reason, r.note, r.origin
            ),
            order: 3,
            position: AuditPosition {
                at: r.decided_at,
                kind: WITHDRAWALS.kind,
                row: r.row_id,
            },
        });
    }
    Ok(())
}

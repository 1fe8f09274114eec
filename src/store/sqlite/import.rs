//! A manifest's write on SQLite's writer thread, called in place (rusqlite): the same
//! lookups, plan and rows as `catalog::import_manifest_in` (the SQL and the plan are
//! shared with it), one prepared statement per table run once per row. Through sqlx,
//! every statement and every returned row is a round trip to another thread, and
//! SQLite's statements stay small (`MAX_PARAMS`): 100,000 clips took 5 s, during which
//! no verdict could be written. A manifest with calibration keys goes the general road,
//! which also refreshes the calibration gates.

use super::base::values;
use super::catalog::{
    IMPORT_EARLIER, IMPORT_KNOWN, IMPORT_OWNERS, IMPORT_TASKS, INSERT_CLIPS, INSERT_IMPORT,
    INSERT_QUESTIONS, INSERT_STAGE1, INSERT_STAGE2, INSERT_VERSIONS, ImportTask, Known, KnownClip,
    POINT_AT_NEW_VERSIONS, RETIRE_REPLACED, plan_import, sort_key,
};
use super::verdict::Db;
use crate::domain::import::CheckedManifest;
use crate::error::{Error, Result};
use crate::store::catalog::{Campaign, ImportSummary};
use rusqlite::{Connection, params};
use std::collections::{HashMap, HashSet};

/// Whether the general road must store this manifest: it has calibration keys, whose
/// gates that road refreshes.
pub(crate) fn needs_general_road(manifest: &CheckedManifest) -> bool {
    manifest
        .clips
        .iter()
        .any(|c| c.calibration.is_some() || c.questions.iter().any(|q| q.calibration.is_some()))
}

fn known(db: &mut Db<'_>, campaign_id: i64) -> Result<Known> {
    let mut tasks = HashMap::new();
    {
        let mut st = db.statement(IMPORT_TASKS)?;
        let rows = st
            .query_map(params![campaign_id], |r| {
                Ok(ImportTask {
                    id: r.get("id")?,
                    code: r.get("code")?,
                    position: r.get("position")?,
                    rater1_id: r.get("rater1_id")?,
                    rater2_id: r.get("rater2_id")?,
                })
            })
            .map_err(super::verdict::error)?;
        for t in rows {
            let t = t.map_err(super::verdict::error)?;
            tasks.insert(t.code.clone(), t);
        }
    }
    let mut clips = HashMap::new();
    {
        let mut st = db.statement(IMPORT_KNOWN)?;
        let rows = st
            .query_map(params![campaign_id], |r| {
                Ok(KnownClip {
                    id: r.get("id")?,
                    clip_key: r.get("clip_key")?,
                    task: r.get("task")?,
                    media_sha256: r.get("media_sha256")?,
                    fields: r.get("fields")?,
                    version: r.get("version")?,
                    outcome: r.get("outcome")?,
                    rater1_id: r.get("rater1_id")?,
                    rater2_id: r.get("rater2_id")?,
                })
            })
            .map_err(super::verdict::error)?;
        for k in rows {
            let k = k.map_err(super::verdict::error)?;
            clips.insert(k.clip_key.clone(), k);
        }
    }
    let earlier = pairs(db, IMPORT_EARLIER, campaign_id)?
        .into_iter()
        .collect();
    let owners = pairs(db, IMPORT_OWNERS, campaign_id)?.into_iter().collect();
    Ok(Known {
        tasks,
        clips,
        earlier,
        owners,
    })
}

fn pairs(db: &mut Db<'_>, sql: &str, campaign_id: i64) -> Result<Vec<(String, String)>> {
    let mut st = db.statement(sql)?;
    let rows = st
        .query_map(params![campaign_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(super::verdict::error)?;
    rows.map(|r| r.map_err(super::verdict::error)).collect()
}

fn id(i: usize) -> i64 {
    i64::try_from(i).unwrap_or(i64::MAX)
}

/// Stores `manifest` in `campaign`, in the caller's savepoint: what it stored and the
/// videos it uses; a refused manifest stores nothing (`Rejected`, every problem with
/// its line and field).
pub(crate) fn import_manifest(
    c: &Connection,
    statements: &mut u64,
    campaign: &Campaign,
    manifest: &CheckedManifest,
) -> Result<(ImportSummary, HashSet<String>)> {
    let mut db = Db::new(c);
    let result = store(&mut db, campaign, manifest);
    *statements += db.statements();
    result
}

fn store(
    db: &mut Db<'_>,
    campaign: &Campaign,
    manifest: &CheckedManifest,
) -> Result<(ImportSummary, HashSet<String>)> {
    let e = super::verdict::error;
    let known = known(db, campaign.id)?;
    let (plans, summary) = plan_import(campaign, manifest, &known)?;
    if plans.is_empty() {
        // Nothing new: leave the database exactly as it was.
        return Ok((summary, HashSet::new()));
    }
    let tasks = &known.tasks;
    let task = |code: &str| {
        tasks
            .get(code)
            .ok_or_else(|| Error::Internal(format!("task `{code}` vanished")))
    };
    let now = crate::clock::now_micros();
    let import_id: i64 = db
        .statement(INSERT_IMPORT)?
        .query_row(
            params![
                campaign.id,
                manifest.path.display().to_string(),
                manifest.sha256,
                id(summary.clips_new),
                id(summary.versions_new),
                now
            ],
            |r| r.get(0),
        )
        .map_err(e)?;

    // New clips, then every clip's new version.
    let mut clip_pk: HashMap<&str, i64> = HashMap::with_capacity(plans.len());
    {
        let sql = format!("{INSERT_CLIPS}{}", values(1, 4, 1));
        for p in &plans {
            let pk = match p.clip_pk {
                Some(pk) => pk,
                None => {
                    db.statement(&sql)?
                        .execute(params![
                            campaign.id,
                            task(&p.clip.task)?.id,
                            p.clip.clip_id,
                            i64::from(p.clip.calibration.is_some())
                        ])
                        .map_err(e)?;
                    db.last_insert_rowid()
                }
            };
            clip_pk.insert(&p.clip.clip_id, pk);
        }
    }
    let mut version_of: Vec<i64> = Vec::with_capacity(plans.len()); // by plan
    {
        let sql = format!("{INSERT_VERSIONS}{}", values(1, 9, 1));
        for p in &plans {
            db.statement(&sql)?
                .execute(params![
                    clip_pk.get(p.clip.clip_id.as_str()).copied().unwrap_or(0),
                    p.version,
                    p.clip.media.sha256,
                    p.clip.media.media_type,
                    i64::try_from(p.clip.media.size).unwrap_or(i64::MAX),
                    p.clip.file,
                    p.clip.fields,
                    import_id,
                    now
                ])
                .map_err(e)?;
            version_of.push(db.last_insert_rowid());
        }
    }
    if summary.versions_new > 0 {
        db.statement(RETIRE_REPLACED)?
            .execute(params![import_id])
            .map_err(e)?;
    }
    db.statement(POINT_AT_NEW_VERSIONS)?
        .execute(params![import_id])
        .map_err(e)?;

    // Stage 1 items, then the questions with their Stage 2 items (in no queue until the
    // clip is retained).
    let stage1 = format!("{INSERT_STAGE1}{}", values(1, 13, 1));
    let question = format!("{INSERT_QUESTIONS}{}", values(1, 8, 1));
    let stage2 = format!("{INSERT_STAGE2}{}", values(1, 13, 1));
    for (p, version_id) in plans.iter().zip(&version_of) {
        let t = task(&p.clip.task)?;
        let queue = p.queue(t);
        db.statement(&stage1)?
            .execute(params![
                campaign.id,
                t.id,
                1i64,
                version_id,
                p.clip.clip_id,
                p.version,
                sort_key(t.position, &p.clip.clip_id, None),
                p.pair.0,
                p.pair.1,
                queue.0,
                queue.1,
                i64::from(p.clip.calibration.is_some()),
                1i64
            ])
            .map_err(e)?;
        let parent = db.last_insert_rowid();
        for (i, qu) in p.clip.questions.iter().enumerate() {
            let options = serde_json::to_string(&qu.options)
                .map_err(|e| Error::Internal(format!("options do not serialise: {e}")))?;
            db.statement(&question)?
                .execute(params![
                    version_id,
                    id(i),
                    qu.question_id,
                    qu.qa_type,
                    qu.level.as_str(),
                    qu.question,
                    options,
                    id(qu.answer)
                ])
                .map_err(e)?;
            let question_id = db.last_insert_rowid();
            db.statement(&stage2)?
                .execute(params![
                    campaign.id,
                    t.id,
                    2i64,
                    version_id,
                    question_id,
                    parent,
                    qu.question_id,
                    p.version,
                    qu.qa_type,
                    qu.level.as_str(),
                    sort_key(t.position, &p.clip.clip_id, Some(id(i))),
                    i64::from(p.clip.calibration.is_some()),
                    1i64
                ])
                .map_err(e)?;
        }
    }
    let stored = plans.iter().map(|p| p.clip.media.sha256.clone()).collect();
    Ok((summary, stored))
}

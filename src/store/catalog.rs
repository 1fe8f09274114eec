//! Campaigns, their tasks and pairs, and the import of clips with their questions.

use super::{Conn, Store, col, conn};
use crate::clock::now_micros;
use crate::domain::import::{CheckedManifest, ManifestClip};
use crate::domain::pairing::default_pair;
use crate::domain::rules::CheckedVerdict;
use crate::domain::taxonomy::Taxonomy;
use crate::domain::{Outcome, check_identifier};
use crate::error::{Error, LineError, Rejected, Result};
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

#[derive(Debug, Clone)]
pub struct Campaign {
    pub id: i64,
    pub name: String,
    pub taxonomy: Arc<Taxonomy>,
    pub settings: Settings,
}

/// A campaign's targets and calibration rules.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Settings {
    /// Retained clips wanted per task.
    pub target_per_task: i64,
    /// Agreement with the known verdicts a validator needs in calibration.
    pub calibration_threshold: f64,
    /// ... over at least this many calibration items (or all of them, if fewer).
    pub calibration_min_items: i64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            target_per_task: 100,
            calibration_threshold: 0.8,
            calibration_min_items: 10,
        }
    }
}

pub(crate) async fn campaign_in(c: &mut Conn, name: &str) -> Result<Option<Campaign>> {
    let row = sqlx::query(
        "SELECT id, name, taxonomy, target_per_task, calibration_threshold, calibration_min_items
         FROM campaigns WHERE name = $1",
    )
    .bind(name)
    .fetch_optional(&mut *c)
    .await?;
    let Some(row) = row else { return Ok(None) };
    let taxonomy: String = col(&row, "taxonomy")?;
    let taxonomy: Taxonomy = serde_json::from_str(&taxonomy)
        .map_err(|e| Error::Internal(format!("stored taxonomy of `{name}` is unreadable: {e}")))?;
    Ok(Some(Campaign {
        id: col(&row, "id")?,
        name: col(&row, "name")?,
        taxonomy: Arc::new(taxonomy),
        settings: Settings {
            target_per_task: col(&row, "target_per_task")?,
            calibration_threshold: col(&row, "calibration_threshold")?,
            calibration_min_items: col(&row, "calibration_min_items")?,
        },
    }))
}

/// The campaign named `name`, created with the built-in taxonomy if it does not exist.
pub(crate) async fn ensure_campaign_in(c: &mut Conn, name: &str) -> Result<Campaign> {
    if let Some(found) = campaign_in(c, name).await? {
        return Ok(found);
    }
    check_identifier("campaign name", name).map_err(|m| Error::field("campaign", m))?;
    let taxonomy = Taxonomy::vgenst();
    let json = serde_json::to_string(&taxonomy)
        .map_err(|e| Error::Internal(format!("taxonomy does not serialise: {e}")))?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO campaigns (name, taxonomy, created_at) VALUES ($1, $2, $3) RETURNING id",
    )
    .bind(name)
    .bind(json)
    .bind(now_micros())
    .fetch_one(&mut *c)
    .await?;
    for (position, t) in taxonomy.tasks.iter().enumerate() {
        sqlx::query(
            "INSERT INTO tasks (campaign_id, position, code, name, scale, perspective, dynamics)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(id)
        .bind(i64::try_from(position).unwrap_or(i64::MAX))
        .bind(&t.code)
        .bind(&t.name)
        .bind(&t.scale)
        .bind(&t.perspective)
        .bind(&t.dynamics)
        .execute(&mut *c)
        .await?;
    }
    refresh_pairs_in(c, id).await?;
    Ok(Campaign {
        id,
        name: name.to_string(),
        taxonomy: Arc::new(taxonomy),
        settings: Settings::default(),
    })
}

/// Recomputes the pair in force for every task of a campaign: the admin's override,
/// else the default pair from the pool. Called in the transaction that changes the
/// pool or an override, so the tasks table never disagrees with them.
pub(crate) async fn refresh_pairs_in(c: &mut Conn, campaign_id: i64) -> Result<()> {
    let pool: Vec<(i64, i64)> = sqlx::query(
        "SELECT pool_index, user_id FROM pool_members WHERE campaign_id = $1 ORDER BY pool_index",
    )
    .bind(campaign_id)
    .fetch_all(&mut *c)
    .await?
    .iter()
    .map(|r| Ok((col(r, "pool_index")?, col(r, "user_id")?)))
    .collect::<Result<_>>()?;
    let tasks = sqlx::query(
        "SELECT id, position, pair_rater1, pair_rater2 FROM tasks WHERE campaign_id = $1",
    )
    .bind(campaign_id)
    .fetch_all(&mut *c)
    .await?;
    for t in tasks {
        let id: i64 = col(&t, "id")?;
        let position: i64 = col(&t, "position")?;
        let over: (Option<i64>, Option<i64>) = (col(&t, "pair_rater1")?, col(&t, "pair_rater2")?);
        let pair = match over {
            (Some(a), Some(b)) => Ok((a, b)),
            _ => default_pair(usize::try_from(position).unwrap_or(0), &pool),
        };
        let (r1, r2, problem) = match pair {
            Ok((a, b)) => (Some(a), Some(b), None),
            Err(p) => (None, None, Some(p)),
        };
        sqlx::query(
            "UPDATE tasks SET rater1_id = $1, rater2_id = $2, pair_problem = $3 WHERE id = $4",
        )
        .bind(r1)
        .bind(r2)
        .bind(problem)
        .bind(id)
        .execute(&mut *c)
        .await?;
    }
    Ok(())
}

/// A task with the pair in force.
#[derive(Debug, Clone, Serialize)]
pub struct TaskInfo {
    #[serde(skip)]
    pub id: i64,
    pub position: i64,
    pub code: String,
    pub name: String,
    pub scale: String,
    pub perspective: String,
    pub dynamics: String,
    pub rater1: Option<String>,
    pub rater2: Option<String>,
    /// Whether an admin set this pair (rather than the pool's default rule).
    pub overridden: bool,
    /// Why the task has no pair, when it has none.
    pub pair_problem: Option<String>,
}

/// What an import stored.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct ImportSummary {
    pub campaign: String,
    pub clips_new: usize,
    pub versions_new: usize,
    pub unchanged: usize,
    pub questions_new: usize,
}

impl std::fmt::Display for ImportSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "campaign `{}`: {} new clip(s), {} new version(s) of known clips, {} question(s) added, {} clip(s) unchanged",
            self.campaign, self.clips_new, self.versions_new, self.questions_new, self.unchanged
        )
    }
}

enum Plan<'a> {
    NewClip(&'a ManifestClip),
    NewVersion {
        clip: &'a ManifestClip,
        clip_pk: i64,
        version: i64,
        /// The pair that reviewed the rejected version reviews the new one.
        pair: (Option<i64>, Option<i64>),
    },
}

impl Store {
    /// The campaign named `name`.
    pub async fn campaign(&self, name: &str) -> Result<Campaign> {
        campaign_in(&mut *conn(self).await?, name)
            .await?
            .ok_or_else(|| Error::NotFound(format!("no campaign named `{name}`")))
    }

    /// The taxonomy a manifest for `name` is checked against: the campaign's own, or the
    /// built-in one for a campaign that the import will create.
    pub async fn taxonomy_for(&self, name: &str) -> Result<Arc<Taxonomy>> {
        Ok(match campaign_in(&mut *conn(self).await?, name).await? {
            Some(c) => c.taxonomy,
            None => Arc::new(Taxonomy::vgenst()),
        })
    }

    /// Changes a campaign's targets and calibration rules.
    pub async fn set_settings(&self, campaign: &Campaign, settings: Settings) -> Result<()> {
        if settings.target_per_task < 1 {
            return Err(Error::field(
                "target_per_task",
                "the target is at least 1 clip per task",
            ));
        }
        if !(settings.calibration_threshold > 0.0 && settings.calibration_threshold <= 1.0) {
            return Err(Error::field(
                "calibration_threshold",
                "the calibration threshold is a fraction above 0 and at most 1 (0.8 is 80%)",
            ));
        }
        if settings.calibration_min_items < 1 {
            return Err(Error::field(
                "calibration_min_items",
                "at least 1 calibration item",
            ));
        }
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "UPDATE campaigns SET target_per_task = $1, calibration_threshold = $2, calibration_min_items = $3 WHERE id = $4",
        )
        .bind(settings.target_per_task)
        .bind(settings.calibration_threshold)
        .bind(settings.calibration_min_items)
        .bind(campaign.id)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// The SHA-256 of every stored video, newest first.
    pub async fn media_hashes(&self) -> Result<Vec<String>> {
        let rows = sqlx::query(
            "SELECT media_sha256 FROM clip_versions GROUP BY media_sha256 ORDER BY MAX(id) DESC",
        )
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(|r| col(r, "media_sha256")).collect()
    }

    /// The campaigns a person works in: a validator's pools; participants none;
    /// everyone else all of them.
    pub async fn campaign_names_for(
        &self,
        user: &crate::store::accounts::User,
    ) -> Result<Vec<String>> {
        use crate::domain::Role;
        match user.role {
            Role::Participant => Ok(Vec::new()),
            Role::Admin | Role::Author => self.campaign_names().await,
            Role::Validator => {
                let rows = sqlx::query(
                    "SELECT c.name FROM campaigns c JOIN pool_members p ON p.campaign_id = c.id
                     WHERE p.user_id = $1 ORDER BY c.name",
                )
                .bind(user.id)
                .fetch_all(self.pool())
                .await?;
                rows.iter().map(|r| col(r, "name")).collect()
            }
        }
    }

    pub async fn campaign_names(&self) -> Result<Vec<String>> {
        let rows = sqlx::query("SELECT name FROM campaigns ORDER BY name")
            .fetch_all(self.pool())
            .await?;
        rows.iter().map(|r| col(r, "name")).collect()
    }

    /// The tasks of a campaign in pairing order, with the pair in force.
    pub async fn tasks(&self, campaign: &Campaign) -> Result<Vec<TaskInfo>> {
        let rows = sqlx::query(
            "SELECT t.id, t.position, t.code, t.name, t.scale, t.perspective, t.dynamics,
                    t.pair_rater1, t.pair_problem, u1.name AS rater1, u2.name AS rater2
             FROM tasks t
             LEFT JOIN users u1 ON u1.id = t.rater1_id
             LEFT JOIN users u2 ON u2.id = t.rater2_id
             WHERE t.campaign_id = $1 ORDER BY t.position",
        )
        .bind(campaign.id)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(TaskInfo {
                    id: col(r, "id")?,
                    position: col(r, "position")?,
                    code: col(r, "code")?,
                    name: col(r, "name")?,
                    scale: col(r, "scale")?,
                    perspective: col(r, "perspective")?,
                    dynamics: col(r, "dynamics")?,
                    rater1: col(r, "rater1")?,
                    rater2: col(r, "rater2")?,
                    overridden: col::<Option<i64>>(r, "pair_rater1")?.is_some(),
                    pair_problem: col(r, "pair_problem")?,
                })
            })
            .collect()
    }

    /// Overrides a task's pair (`Some((rater1, rater2))`) or goes back to the default
    /// pair from the pool (`None`). Items that already have a verdict keep the pair
    /// that started them.
    pub async fn set_pair(
        &self,
        campaign: &Campaign,
        task_code: &str,
        pair: Option<(&str, &str)>,
    ) -> Result<TaskInfo> {
        let mut tx = self.begin_write().await?;
        let task_id: Option<i64> =
            sqlx::query_scalar("SELECT id FROM tasks WHERE campaign_id = $1 AND code = $2")
                .bind(campaign.id)
                .bind(task_code)
                .fetch_optional(&mut *tx)
                .await?;
        let task_id = task_id.ok_or_else(|| {
            Error::NotFound(format!(
                "no task `{task_code}` in campaign `{}`",
                campaign.name
            ))
        })?;
        let ids = match pair {
            None => (None, None),
            Some((a, b)) => {
                if a == b {
                    return Err(Error::Invalid(
                        "a pair needs two different validators".into(),
                    ));
                }
                let mut ids = Vec::new();
                for name in [a, b] {
                    let id: Option<i64> = sqlx::query_scalar(
                        "SELECT u.id FROM users u JOIN pool_members p ON p.user_id = u.id
                         WHERE u.name = $1 AND p.campaign_id = $2",
                    )
                    .bind(name)
                    .bind(campaign.id)
                    .fetch_optional(&mut *tx)
                    .await?;
                    ids.push(id.ok_or_else(|| {
                        Error::Invalid(format!(
                            "`{name}` is not a validator in the pool of campaign `{}`",
                            campaign.name
                        ))
                    })?);
                }
                (Some(ids[0]), Some(ids[1]))
            }
        };
        sqlx::query("UPDATE tasks SET pair_rater1 = $1, pair_rater2 = $2 WHERE id = $3")
            .bind(ids.0)
            .bind(ids.1)
            .bind(task_id)
            .execute(&mut *tx)
            .await?;
        refresh_pairs_in(&mut tx, campaign.id).await?;
        tx.commit().await?;
        self.tasks(campaign)
            .await?
            .into_iter()
            .find(|t| t.id == task_id)
            .ok_or_else(|| Error::Internal("task vanished".into()))
    }

    /// Stores a checked manifest: new clips, new versions of known clips (a new video
    /// file), their questions and their Stage 1 and Stage 2 items, all in one write
    /// transaction (the videos are in the media folder already: `app::import_manifest`
    /// copies them first). Clips already stored with the same video and fields are left
    /// as they are, so importing the same manifest twice changes nothing. Returns what
    /// it stored and the SHA-256 of the videos of the versions it added.
    pub async fn import_manifest(
        &self,
        campaign_name: &str,
        manifest: &CheckedManifest,
    ) -> Result<(ImportSummary, HashSet<String>)> {
        let mut tx = self.begin_write().await?;
        let campaign = ensure_campaign_in(&mut tx, campaign_name).await?;
        let tasks: BTreeMap<String, i64> =
            sqlx::query("SELECT id, code FROM tasks WHERE campaign_id = $1")
                .bind(campaign.id)
                .fetch_all(&mut *tx)
                .await?
                .iter()
                .map(|r| Ok((col(r, "code")?, col(r, "id")?)))
                .collect::<Result<_>>()?;

        let mut problems = Vec::new();
        let mut plans = Vec::new();
        let mut summary = ImportSummary {
            campaign: campaign.name.clone(),
            ..ImportSummary::default()
        };
        for clip in &manifest.clips {
            if !tasks.contains_key(&clip.task) {
                problems.push(LineError::new(
                    clip.line,
                    Some("task"),
                    format!("campaign `{}` has no task `{}`", campaign.name, clip.task),
                ));
                continue;
            }
            let known = sqlx::query(
                "SELECT c.id, t.code AS task, v.media_sha256, v.fields, v.version,
                        i.outcome, i.rater1_id, i.rater2_id
                 FROM clips c JOIN tasks t ON t.id = c.task_id
                 JOIN clip_versions v ON v.id = c.current_version_id
                 JOIN items i ON i.clip_version_id = v.id AND i.stage = 1
                 WHERE c.campaign_id = $1 AND c.clip_key = $2",
            )
            .bind(campaign.id)
            .bind(&clip.clip_id)
            .fetch_optional(&mut *tx)
            .await?;
            let plan = match known {
                None => Plan::NewClip(clip),
                Some(row) => {
                    let task: String = col(&row, "task")?;
                    let sha: String = col(&row, "media_sha256")?;
                    let fields: String = col(&row, "fields")?;
                    let clip_pk: i64 = col(&row, "id")?;
                    if task != clip.task {
                        problems.push(LineError::new(
                            clip.line,
                            Some("task"),
                            format!(
                                "clip `{}` is already imported under task `{task}`; a clip cannot change task",
                                clip.clip_id
                            ),
                        ));
                        continue;
                    }
                    if sha == clip.media.sha256 {
                        if fields != clip.fields {
                            problems.push(LineError::new(
                                clip.line,
                                None,
                                format!(
                                    "clip `{}` is already imported with this video but different fields or questions; a changed clip needs a new video file (a new version)",
                                    clip.clip_id
                                ),
                            ));
                        } else {
                            summary.unchanged += 1;
                        }
                        continue;
                    }
                    // A video this clip had before (an older manifest imported again)
                    // is not a new version.
                    let earlier: Option<i64> = sqlx::query_scalar(
                        "SELECT version FROM clip_versions WHERE clip_id = $1 AND media_sha256 = $2",
                    )
                    .bind(clip_pk)
                    .bind(&clip.media.sha256)
                    .fetch_optional(&mut *tx)
                    .await?;
                    if earlier.is_some() {
                        summary.unchanged += 1;
                        continue;
                    }
                    // Only a clip rejected in Stage 1 gets a new version: one in review,
                    // waiting for an author or retained keeps its video.
                    let outcome: String = col(&row, "outcome")?;
                    if !Outcome::parse(&outcome).is_some_and(Outcome::is_rejected) {
                        let state = match outcome.as_str() {
                            "pending" => "still in Stage 1 review",
                            "split" => "waiting for an author",
                            _ => "retained",
                        };
                        problems.push(LineError::new(
                            clip.line,
                            Some("file"),
                            format!(
                                "clip `{}` has a new video but is {state}; only a clip rejected in Stage 1 gets a new version",
                                clip.clip_id
                            ),
                        ));
                        continue;
                    }
                    Plan::NewVersion {
                        clip,
                        clip_pk,
                        version: col::<i64>(&row, "version")? + 1,
                        pair: (col(&row, "rater1_id")?, col(&row, "rater2_id")?),
                    }
                }
            };
            // A question id belongs to one clip of the campaign.
            for (i, q) in clip.questions.iter().enumerate() {
                let owner: Option<String> = sqlx::query_scalar(
                    // CROSS JOIN keeps SQLite's planner on the question id's index
                    // (one probe) rather than walking the campaign's clips.
                    "SELECT c.clip_key FROM questions q
                     CROSS JOIN clip_versions v CROSS JOIN clips c
                     WHERE q.question_key = $2 AND v.id = q.clip_version_id AND c.id = v.clip_id
                       AND c.campaign_id = $1 AND c.clip_key <> $3
                     LIMIT 1",
                )
                .bind(campaign.id)
                .bind(&q.question_id)
                .bind(&clip.clip_id)
                .fetch_optional(&mut *tx)
                .await?;
                if let Some(owner) = owner {
                    problems.push(LineError::new(
                        clip.line,
                        Some(&format!("questions[{i}].question_id")),
                        format!(
                            "question_id `{}` already belongs to clip `{owner}`",
                            q.question_id
                        ),
                    ));
                }
            }
            plans.push(plan);
        }
        if !problems.is_empty() {
            return Err(Error::Rejected(Rejected {
                what: format!("manifest {}", manifest.path.display()),
                problems,
            }));
        }
        if plans.is_empty() {
            // Nothing new: leave the database exactly as it was.
            return Ok((summary, HashSet::new()));
        }

        let now = now_micros();
        let import_id: i64 = sqlx::query_scalar(
            "INSERT INTO imports (campaign_id, manifest, manifest_sha256, clips_new, versions_new, imported_at)
             VALUES ($1, $2, $3, 0, 0, $4) RETURNING id",
        )
        .bind(campaign.id)
        .bind(manifest.path.display().to_string())
        .bind(&manifest.sha256)
        .bind(now)
        .fetch_one(&mut *tx)
        .await?;
        for plan in &plans {
            let (clip, clip_pk, version, pair) = match plan {
                Plan::NewClip(clip) => {
                    let pk: i64 = sqlx::query_scalar(
                        "INSERT INTO clips (campaign_id, task_id, clip_key, calibration) VALUES ($1, $2, $3, $4) RETURNING id",
                    )
                    .bind(campaign.id)
                    .bind(tasks[&clip.task])
                    .bind(&clip.clip_id)
                    .bind(i64::from(clip.calibration.is_some()))
                    .fetch_one(&mut *tx)
                    .await?;
                    summary.clips_new += 1;
                    (*clip, pk, 1, (None, None))
                }
                Plan::NewVersion {
                    clip,
                    clip_pk,
                    version,
                    pair,
                } => {
                    summary.versions_new += 1;
                    (*clip, *clip_pk, *version, *pair)
                }
            };
            let task_id = tasks[&clip.task];
            let version_id: i64 = sqlx::query_scalar(
                "INSERT INTO clip_versions (clip_id, version, media_sha256, media_type, media_size, source_file, fields, import_id, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
            )
            .bind(clip_pk)
            .bind(version)
            .bind(&clip.media.sha256)
            .bind(clip.media.media_type)
            .bind(i64::try_from(clip.media.size).unwrap_or(i64::MAX))
            .bind(&clip.file)
            .bind(&clip.fields)
            .bind(import_id)
            .bind(now)
            .fetch_one(&mut *tx)
            .await?;
            sqlx::query("UPDATE clips SET current_version_id = $1 WHERE id = $2")
                .bind(version_id)
                .bind(clip_pk)
                .execute(&mut *tx)
                .await?;
            let calibration = i64::from(clip.calibration.is_some());
            let stage1: i64 = sqlx::query_scalar(
                "INSERT INTO items (campaign_id, task_id, stage, clip_version_id, clip_version, rater1_id, rater2_id, calibration)
                 VALUES ($1, $2, 1, $3, $4, $5, $6, $7) RETURNING id",
            )
            .bind(campaign.id)
            .bind(task_id)
            .bind(version_id)
            .bind(version)
            .bind(pair.0)
            .bind(pair.1)
            .bind(calibration)
            .fetch_one(&mut *tx)
            .await?;
            if let Some(key) = &clip.calibration {
                insert_key(&mut tx, stage1, key).await?;
            }
            for (position, q) in clip.questions.iter().enumerate() {
                let options = serde_json::to_string(&q.options)
                    .map_err(|e| Error::Internal(format!("options do not serialise: {e}")))?;
                let qid: i64 = sqlx::query_scalar(
                    "INSERT INTO questions (clip_version_id, position, question_key, qa_type, level, body, options, answer)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
                )
                .bind(version_id)
                .bind(i64::try_from(position).unwrap_or(i64::MAX))
                .bind(&q.question_id)
                .bind(&q.qa_type)
                .bind(q.level.as_str())
                .bind(&q.question)
                .bind(options)
                .bind(i64::try_from(q.answer).unwrap_or(i64::MAX))
                .fetch_one(&mut *tx)
                .await?;
                let item: i64 = sqlx::query_scalar(
                    "INSERT INTO items (campaign_id, task_id, stage, clip_version_id, question_id, parent_item_id, clip_version, qa_type, calibration)
                     VALUES ($1, $2, 2, $3, $4, $5, $6, $7, $8) RETURNING id",
                )
                .bind(campaign.id)
                .bind(task_id)
                .bind(version_id)
                .bind(qid)
                .bind(stage1)
                .bind(version)
                .bind(&q.qa_type)
                .bind(calibration)
                .fetch_one(&mut *tx)
                .await?;
                if let Some(key) = &q.calibration {
                    insert_key(&mut tx, item, key).await?;
                }
                summary.questions_new += 1;
            }
        }
        sqlx::query("UPDATE imports SET clips_new = $1, versions_new = $2 WHERE id = $3")
            .bind(i64::try_from(summary.clips_new).unwrap_or(i64::MAX))
            .bind(i64::try_from(summary.versions_new).unwrap_or(i64::MAX))
            .bind(import_id)
            .execute(&mut *tx)
            .await?;

        tx.commit().await?;
        let stored = plans
            .iter()
            .map(|p| match p {
                Plan::NewClip(c) | Plan::NewVersion { clip: c, .. } => c.media.sha256.clone(),
            })
            .collect();
        Ok((summary, stored))
    }
}

/// Stores the known verdict of a calibration item.
pub(crate) async fn insert_key(c: &mut Conn, item_id: i64, key: &CheckedVerdict) -> Result<()> {
    sqlx::query(
        "INSERT INTO calibration_keys (item_id, verdict, reasons, note) VALUES ($1, $2, $3, $4)",
    )
    .bind(item_id)
    .bind(key.verdict.as_str())
    .bind(crate::domain::Reason::join(&key.reasons))
    .bind(&key.note)
    .execute(&mut *c)
    .await?;
    Ok(())
}

/// Counts of one task in one stage (newest clip versions only).
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct StageProgress {
    /// Items open for review (Stage 2: questions of retained clips).
    pub items: i64,
    /// Open items without any verdict yet.
    pub unstarted: i64,
    /// Open items with one verdict of two.
    pub half_decided: i64,
    pub both_pass: i64,
    pub both_reject: i64,
    /// Splits waiting for an author.
    pub split: i64,
    pub split_accepted: i64,
    pub split_rejected: i64,
    /// Stage 2 only: questions whose clip is not (yet) retained.
    pub not_open: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct TaskProgress {
    pub task: String,
    pub stage1: StageProgress,
    pub stage2: StageProgress,
}

impl Store {
    /// Where each task stands in both stages.
    pub async fn progress(&self, campaign: &Campaign) -> Result<Vec<TaskProgress>> {
        let rows = sqlx::query(
            "SELECT t.code, i.stage, i.outcome,
                    CASE WHEN EXISTS (SELECT 1 FROM decisions d WHERE d.item_id = i.id) THEN 1 ELSE 0 END AS started,
                    CASE WHEN i.stage = 1 OR p.outcome IN ('both_pass', 'split_accepted') THEN 1 ELSE 0 END AS is_open,
                    COUNT(*) AS n
             FROM items i
             JOIN tasks t ON t.id = i.task_id
             JOIN clips c ON c.current_version_id = i.clip_version_id
             LEFT JOIN items p ON p.id = i.parent_item_id
             WHERE i.campaign_id = $1 AND i.calibration = 0
             GROUP BY t.code, i.stage, i.outcome,
                      CASE WHEN EXISTS (SELECT 1 FROM decisions d WHERE d.item_id = i.id) THEN 1 ELSE 0 END,
                      CASE WHEN i.stage = 1 OR p.outcome IN ('both_pass', 'split_accepted') THEN 1 ELSE 0 END",
        )
        .bind(campaign.id)
        .fetch_all(self.pool())
        .await?;
        let mut out: Vec<TaskProgress> = self
            .tasks(campaign)
            .await?
            .into_iter()
            .map(|t| TaskProgress {
                task: t.code,
                stage1: StageProgress::default(),
                stage2: StageProgress::default(),
            })
            .collect();
        for r in rows {
            let code: String = col(&r, "code")?;
            let Some(tp) = out.iter_mut().find(|t| t.task == code) else {
                continue;
            };
            let s = if col::<i64>(&r, "stage")? == 1 {
                &mut tp.stage1
            } else {
                &mut tp.stage2
            };
            let n: i64 = col(&r, "n")?;
            if col::<i64>(&r, "is_open")? == 0 {
                s.not_open += n;
                continue;
            }
            s.items += n;
            let outcome: String = col(&r, "outcome")?;
            match outcome.as_str() {
                "pending" if col::<i64>(&r, "started")? == 0 => s.unstarted += n,
                "pending" => s.half_decided += n,
                "both_pass" => s.both_pass += n,
                "both_reject" => s.both_reject += n,
                "split" => s.split += n,
                "split_accepted" => s.split_accepted += n,
                "split_rejected" => s.split_rejected += n,
                other => return Err(Error::Internal(format!("stored outcome `{other}`"))),
            }
        }
        Ok(out)
    }
}

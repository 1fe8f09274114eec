// Campaigns, their tasks and pairs, the import of clips with their questions, and
// progress. (Shared SQL: compiled once per backend, see store/mod.rs.)

use super::base::{campaign_in, chunk_rows, ensure_campaign_in, insert_keys_in, values};
use super::gates::{PairInForce, planned_pairs_in, refresh_pairs_in};
use crate::clock::now_micros;
use crate::domain::import::{CheckedManifest, ManifestClip};
use crate::domain::taxonomy::Taxonomy;
use crate::domain::{Outcome, Role};
use crate::error::{Error, LineError, Rejected, Result};
use crate::store::Lock;
use crate::store::accounts::User;
use crate::domain::Stage;
use crate::store::catalog::{
    Campaign, ClassifiedItem, ImportSummary, ItemClass, ItemGroup, PairChange, Settings,
    StageProgress, TaskInfo, TaskProgress,
};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

impl Backend {
    /// Per task, the pairs that have reviewed its Stage 1 items (newest versions, no
    /// calibration items) and how many items each: (task, rater 1, rater 2, items).
    pub(crate) async fn reviewing_pairs(
        &self,
        campaign: &Campaign,
    ) -> Result<Vec<(String, String, String, i64)>> {
        Ok(qa::<(String, String, String, i64)>(
            "SELECT t.code, u1.name, u2.name, COUNT(*)
             FROM items i JOIN tasks t ON t.id = i.task_id
             JOIN users u1 ON u1.id = i.rater1_id JOIN users u2 ON u2.id = i.rater2_id
             WHERE i.campaign_id = $1 AND i.stage = 1 AND i.is_current = 1 AND i.calibration = 0
             GROUP BY t.code, u1.name, u2.name
             ORDER BY t.code, COUNT(*) DESC, u1.name, u2.name",
        )
        .bind(campaign.id)
        .fetch_all(&mut *self.read().await?)
        .await?)
    }

    /// What placing a validator at `index` in a campaign's pool would change, before it
    /// does: each task whose pair in force changes, from and to whom, and how many of
    /// its unstarted items would move to the new pair (the items `MOVE_UNSTARTED`
    /// moves). Nothing is written.
    pub(crate) async fn pool_change_preview(
        &self,
        campaign_name: &str,
        name: &str,
        index: i64,
    ) -> Result<Vec<PairChange>> {
        let mut c = self.read().await?;
        let Some(campaign) = campaign_in(&mut c, campaign_name).await? else {
            // A campaign made by this placement has no tasks yet: nothing moves.
            return Ok(Vec::new());
        };
        const JOINING: i64 = -1;
        let planned = planned_pairs_in(&mut c, campaign.id, Some((index, JOINING))).await?;
        let names: HashMap<i64, String> = qa::<(i64, String)>(
            "SELECT u.id, u.name FROM pool_members p JOIN users u ON u.id = p.user_id WHERE p.campaign_id = $1",
        )
        .bind(campaign.id)
        .fetch_all(&mut *c)
        .await?
        .into_iter()
        .chain([(JOINING, name.to_string())])
        .collect();
        // Per task: the items MOVE_UNSTARTED would move, and those someone started.
        let counts: HashMap<i64, (i64, i64)> = qa::<(i64, i64, i64)>(
            "SELECT items.task_id,
                    SUM(CASE WHEN items.rater1_id IS NULL AND (items.stage = 1 OR items.parent_item_id IS NULL)
                             THEN 1 ELSE 0 END),
                    SUM(CASE WHEN items.rater1_id IS NOT NULL THEN 1 ELSE 0 END)
             FROM items
             WHERE items.campaign_id = $1 AND items.is_current = 1 AND items.calibration = 0
             GROUP BY items.task_id",
        )
        .bind(campaign.id)
        .fetch_all(&mut *c)
        .await?
        .into_iter()
        .map(|(t, u, s)| (t, (u, s)))
        .collect();
        let pair = |p: &PairInForce| -> Option<(String, String)> {
            let n = |id: i64| names.get(&id).cloned().unwrap_or_else(|| format!("user #{id}"));
            p.0.zip(p.1).map(|(a, b)| (n(a), n(b)))
        };
        Ok(planned
            .into_iter()
            .filter(|(_, _, now, then)| now != then)
            .map(|(id, code, now, then)| PairChange {
                task: code,
                from: pair(&now),
                to: pair(&then),
                unstarted_moving: counts.get(&id).map_or(0, |c| c.0),
                started: counts.get(&id).map_or(0, |c| c.1),
            })
            .collect())
    }
}

/// A clip of the manifest that is new to the campaign, or a new version of a known one.
pub(crate) struct Plan<'a> {
    pub(crate) clip: &'a ManifestClip,
    /// The known clip, for a new version.
    pub(crate) clip_pk: Option<i64>,
    pub(crate) version: i64,
    /// The pair that reviewed the rejected version reviews the new one.
    pub(crate) pair: (Option<i64>, Option<i64>),
}

impl Plan<'_> {
    /// The queue of its Stage 1 item: the pair that reviewed the rejected version, or
    /// the task's pair in force; a calibration item is in no queue.
    pub(crate) fn queue(&self, task: &ImportTask) -> (Option<i64>, Option<i64>) {
        if self.clip.calibration.is_some() {
            (None, None)
        } else if self.pair.0.is_some() {
            self.pair
        } else {
            (task.rater1_id, task.rater2_id)
        }
    }
}

/// A clip as stored, for an import to compare with.
#[derive(sqlx::FromRow)]
pub(crate) struct KnownClip {
    pub(crate) id: i64,
    pub(crate) clip_key: String,
    pub(crate) task: String,
    pub(crate) media_sha256: String,
    pub(crate) fields: String,
    pub(crate) version: i64,
    pub(crate) outcome: String,
    pub(crate) rater1_id: Option<i64>,
    pub(crate) rater2_id: Option<i64>,
}

impl Backend {
    pub(crate) async fn load_campaign(&self, name: &str) -> Result<Option<Campaign>> {
        campaign_in(&mut *self.read().await?, name).await
    }

    pub(crate) async fn taxonomy_for(&self, name: &str) -> Result<Arc<Taxonomy>> {
        Ok(match campaign_in(&mut *self.read().await?, name).await? {
            Some(c) => c.taxonomy,
            None => Arc::new(Taxonomy::vgenst()),
        })
    }

    pub(crate) async fn set_settings(&self, campaign: &Campaign, settings: Settings) -> Result<()> {
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
        let id = campaign.id;
        self.write(Lock::Structure, move |c| {
            Box::pin(async move {
                q("UPDATE campaigns SET target_per_task = $1, calibration_threshold = $2,
                          calibration_min_items = $3, revision = revision + 1 WHERE id = $4")
                .bind(settings.target_per_task)
                .bind(settings.calibration_threshold)
                .bind(settings.calibration_min_items)
                .bind(id)
                .execute(&mut *c)
                .await?;
                // A lower threshold can pass someone: the gates follow the rules.
                super::gates::refresh_gates_in(c, id).await
            })
        })
        .await
    }

    /// The videos whose frame timing nobody has asked ffprobe for yet.
    pub(crate) async fn media_without_timing(&self) -> Result<Vec<String>> {
        Ok(qs(
            "SELECT media_sha256 FROM clip_versions WHERE timing_probed_at IS NULL
             GROUP BY media_sha256 ORDER BY MAX(id) DESC",
        )
        .fetch_all(&mut *self.read().await?)
        .await?)
    }

    /// Stores what ffprobe said about a video (none: it could not tell) on every clip
    /// version showing it.
    pub(crate) async fn set_frame_timing(
        &self,
        sha256: &str,
        timing: Option<crate::domain::video::FrameTiming>,
    ) -> Result<()> {
        let sha = sha256.to_string();
        self.write(Lock::Rows, move |c| {
            let sha = sha.clone();
            Box::pin(async move {
                q("UPDATE clip_versions SET fps = $1, frame_count = $2, constant_rate = $3, timing_probed_at = $4
                   WHERE media_sha256 = $5")
                .bind(timing.map(|t| t.fps))
                .bind(timing.and_then(|t| i64::try_from(t.frames).ok()))
                .bind(timing.map(|t| i64::from(t.constant)))
                .bind(now_micros())
                .bind(&sha)
                .execute(&mut *c)
                .await?;
                Ok(())
            })
        })
        .await
    }

    pub(crate) async fn media_hashes(&self) -> Result<Vec<String>> {
        Ok(qs(
            "SELECT media_sha256 FROM clip_versions GROUP BY media_sha256 ORDER BY MAX(id) DESC",
        )
        .fetch_all(&mut *self.read().await?)
        .await?)
    }

    pub(crate) async fn campaign_names_for(&self, user: &User) -> Result<Vec<String>> {
        match user.role {
            Role::Participant => Ok(Vec::new()),
            Role::Admin | Role::Author => self.campaign_names().await,
            Role::Validator => Ok(qs(
                "SELECT c.name FROM campaigns c JOIN pool_members p ON p.campaign_id = c.id
                 WHERE p.user_id = $1 ORDER BY c.name",
            )
            .bind(user.id)
            .fetch_all(&mut *self.read().await?)
            .await?),
        }
    }

    pub(crate) async fn campaign_names(&self) -> Result<Vec<String>> {
        Ok(qs("SELECT name FROM campaigns ORDER BY name")
            .fetch_all(&mut *self.read().await?)
            .await?)
    }

    pub(crate) async fn tasks(&self, campaign: &Campaign) -> Result<Vec<TaskInfo>> {
        tasks_in(&mut *self.read().await?, campaign.id).await
    }

    pub(crate) async fn set_pair(
        &self,
        campaign: &Campaign,
        task_code: &str,
        pair: Option<(&str, &str)>,
    ) -> Result<TaskInfo> {
        let (campaign_id, campaign_name, task_code) =
            (campaign.id, campaign.name.clone(), task_code.to_string());
        let pair = pair.map(|(a, b)| (a.to_string(), b.to_string()));
        if let Some((a, b)) = &pair
            && a == b
        {
            return Err(Error::Invalid(
                "a pair needs two different validators".into(),
            ));
        }
        let task_id = self
            .write(Lock::Structure, move |c| {
                let (campaign_name, task_code, pair) =
                    (campaign_name.clone(), task_code.clone(), pair.clone());
                Box::pin(async move {
                    let task_id: i64 =
                        qs("SELECT id FROM tasks WHERE campaign_id = $1 AND code = $2")
                            .bind(campaign_id)
                            .bind(&task_code)
                            .fetch_optional(&mut *c)
                            .await?
                            .ok_or_else(|| {
                                Error::NotFound(format!(
                                    "no task `{task_code}` in campaign `{campaign_name}`"
                                ))
                            })?;
                    let ids = match &pair {
                        None => (None, None),
                        Some((a, b)) => {
                            let members: Vec<(String, i64)> = qa(
                                "SELECT u.name, u.id FROM users u JOIN pool_members p ON p.user_id = u.id
                                 WHERE p.campaign_id = $1 AND (u.name = $2 OR u.name = $3)",
                            )
                            .bind(campaign_id)
                            .bind(a)
                            .bind(b)
                            .fetch_all(&mut *c)
                            .await?;
                            let id = |name: &str| {
                                members
                                    .iter()
                                    .find(|(n, _)| n == name)
                                    .map(|(_, id)| *id)
                                    .ok_or_else(|| {
                                        Error::Invalid(format!(
                                            "`{name}` is not a validator in the pool of campaign `{campaign_name}`"
                                        ))
                                    })
                            };
                            (Some(id(a)?), Some(id(b)?))
                        }
                    };
                    q("UPDATE tasks SET pair_rater1 = $1, pair_rater2 = $2 WHERE id = $3")
                        .bind(ids.0)
                        .bind(ids.1)
                        .bind(task_id)
                        .execute(&mut *c)
                        .await?;
                    refresh_pairs_in(c, campaign_id).await?;
                    Ok(task_id)
                })
            })
            .await?;
        self.tasks(campaign)
            .await?
            .into_iter()
            .find(|t| t.id == task_id)
            .ok_or_else(|| Error::Internal("task vanished".into()))
    }

    /// Stores a checked manifest through a write job (`import_manifest_in`).
    pub(crate) async fn import_manifest_job(
        &self,
        campaign_name: &str,
        manifest: Arc<CheckedManifest>,
    ) -> Result<(ImportSummary, HashSet<String>)> {
        let campaign_name = campaign_name.to_string();
        self.write(Lock::Structure, move |c| {
            let (campaign_name, manifest) = (campaign_name.clone(), manifest.clone());
            Box::pin(async move { import_manifest_in(c, &campaign_name, &manifest).await })
        })
        .await
    }

    /// After an import: the planner's statistics, so that queues keep their indexes.
    pub(crate) async fn after_import(&self) {
        if let Err(e) = self.refresh_statistics().await {
            // The import is stored; only the planner's estimates wait for autovacuum.
            tracing::warn!(error = %e, "cannot refresh the planner's statistics after an import");
        }
    }

    pub(crate) async fn progress(&self, campaign: &Campaign) -> Result<Vec<TaskProgress>> {
        let mut c = self.read().await?;
        #[derive(sqlx::FromRow)]
        struct Row {
            code: String,
            stage: i64,
            outcome: String,
            started: i64,
            is_open: i64,
            n: i64,
        }
        let rows: Vec<Row> = qa(
            "SELECT t.code, i.stage, i.outcome,
                    CAST(CASE WHEN i.rater1_id IS NOT NULL THEN 1 ELSE 0 END AS BIGINT) AS started,
                    CAST(CASE WHEN i.stage = 1 OR i.parent_item_id IS NULL
                                   OR p.outcome IN ('both_pass', 'split_accepted') THEN 1 ELSE 0 END AS BIGINT) AS is_open,
                    COUNT(*) AS n
             FROM items i
             JOIN tasks t ON t.id = i.task_id
             LEFT JOIN items p ON p.id = i.parent_item_id
             WHERE i.campaign_id = $1 AND i.calibration = 0 AND i.is_current = 1
             GROUP BY t.code, i.stage, i.outcome,
                      CASE WHEN i.rater1_id IS NOT NULL THEN 1 ELSE 0 END,
                      CASE WHEN i.stage = 1 OR i.parent_item_id IS NULL
                                OR p.outcome IN ('both_pass', 'split_accepted') THEN 1 ELSE 0 END",
        )
        .bind(campaign.id)
        .fetch_all(&mut *c)
        .await?;
        let mut out: Vec<TaskProgress> = tasks_in(&mut c, campaign.id)
            .await?
            .into_iter()
            .map(|t| TaskProgress {
                task: t.code,
                stage1: StageProgress::default(),
                stage2: StageProgress::default(),
            })
            .collect();
        for r in rows {
            let Some(tp) = out.iter_mut().find(|t| t.task == r.code) else {
                continue;
            };
            let s = if r.stage == 1 {
                &mut tp.stage1
            } else {
                &mut tp.stage2
            };
            s.count(ItemClass::of(&r.outcome, r.started == 1, r.is_open == 1)?, r.n);
        }
        Ok(out)
    }
}

impl Backend {
    /// The items of a stage (of one task, or all) in one group of the overview, in task
    /// and item order: at most `limit`, and how many there are in all. Classified by
    /// the same `ItemClass::of` as the overview's counts, over the same rows.
    pub(crate) async fn items_in_group(
        &self,
        campaign: &Campaign,
        stage: Stage,
        task: Option<&str>,
        group: ItemGroup,
        limit: usize,
    ) -> Result<(Vec<ClassifiedItem>, usize)> {
        #[derive(sqlx::FromRow)]
        struct Row {
            item_key: String,
            clip_key: String,
            code: String,
            outcome: String,
            started: i64,
            is_open: i64,
            rater1: Option<String>,
            rater2: Option<String>,
        }
        let rows: Vec<Row> = qa(
            "SELECT i.item_key, c.clip_key, t.code, i.outcome,
                    CAST(CASE WHEN i.rater1_id IS NOT NULL THEN 1 ELSE 0 END AS BIGINT) AS started,
                    CAST(CASE WHEN i.stage = 1 OR i.parent_item_id IS NULL
                                   OR p.outcome IN ('both_pass', 'split_accepted') THEN 1 ELSE 0 END AS BIGINT) AS is_open,
                    u1.name AS rater1, u2.name AS rater2
             FROM items i
             JOIN tasks t ON t.id = i.task_id
             JOIN clip_versions v ON v.id = i.clip_version_id JOIN clips c ON c.id = v.clip_id
             LEFT JOIN items p ON p.id = i.parent_item_id
             LEFT JOIN users u1 ON u1.id = i.rater1_id LEFT JOIN users u2 ON u2.id = i.rater2_id
             WHERE i.campaign_id = $1 AND i.calibration = 0 AND i.is_current = 1 AND i.stage = $2
               AND ($3 = '' OR t.code = $3)
             ORDER BY t.position, i.item_key",
        )
        .bind(campaign.id)
        .bind(stage.number())
        .bind(task.unwrap_or(""))
        .fetch_all(&mut *self.read().await?)
        .await?;
        let mut out = Vec::new();
        let mut total = 0usize;
        for r in rows {
            let class = ItemClass::of(&r.outcome, r.started == 1, r.is_open == 1)?;
            if !group.contains(class) {
                continue;
            }
            total += 1;
            if out.len() < limit {
                out.push(ClassifiedItem {
                    item_id: r.item_key,
                    clip_id: r.clip_key,
                    task: r.code,
                    class,
                    rater1: r.rater1,
                    rater2: r.rater2,
                });
            }
        }
        Ok((out, total))
    }
}

pub(crate) async fn tasks_in(c: &mut Conn, campaign_id: i64) -> Result<Vec<TaskInfo>> {
    #[derive(sqlx::FromRow)]
    struct Row {
        id: i64,
        position: i64,
        code: String,
        name: String,
        attributes: String,
        pair_rater1: Option<i64>,
        pair_problem: Option<String>,
        rater1: Option<String>,
        rater2: Option<String>,
    }
    let rows: Vec<Row> = qa(
        "SELECT t.id, t.position, t.code, t.name, t.attributes, t.pair_rater1, t.pair_problem,
                u1.name AS rater1, u2.name AS rater2
         FROM tasks t
         LEFT JOIN users u1 ON u1.id = t.rater1_id
         LEFT JOIN users u2 ON u2.id = t.rater2_id
         WHERE t.campaign_id = $1 ORDER BY t.position",
    )
    .bind(campaign_id)
    .fetch_all(&mut *c)
    .await?;
    rows.into_iter()
        .map(|r| {
            let attributes: BTreeMap<String, serde_json::Value> =
                serde_json::from_str(&r.attributes).map_err(|e| {
                    Error::Internal(format!("stored attributes of task {}: {e}", r.code))
                })?;
            Ok(TaskInfo {
                id: r.id,
                position: r.position,
                code: r.code,
                name: r.name,
                attributes: attributes
                    .into_iter()
                    .map(|(k, v)| {
                        let text = match v {
                            serde_json::Value::String(s) => s,
                            other => other.to_string(),
                        };
                        (k, text)
                    })
                    .collect(),
                rater1: r.rater1,
                rater2: r.rater2,
                overridden: r.pair_rater1.is_some(),
                pair_problem: r.pair_problem,
            })
        })
        .collect()
}

/// The order items are reviewed in: by task, then clip, then question.
pub(crate) fn sort_key(task_position: i64, clip_key: &str, question: Option<i64>) -> String {
    match question {
        None => format!("{task_position:06}|{clip_key}"),
        Some(p) => format!("{task_position:06}|{clip_key}|{p:06}"),
    }
}

/// The database part of an import: what the manifest adds is decided from three reads
/// of the campaign (its clips, its questions' owners, its clips' earlier videos), then
/// written with multi-row inserts. Returns what it stored and the SHA-256 of the videos
/// of the versions it added.
/// The campaign's tasks, as an import needs them.
pub(crate) const IMPORT_TASKS: &str =
    "SELECT id, code, position, rater1_id, rater2_id FROM tasks WHERE campaign_id = $1";
/// Every clip of the campaign with its current version and Stage 1 item.
pub(crate) const IMPORT_KNOWN: &str =
    "SELECT c.id, c.clip_key, t.code AS task, v.media_sha256, v.fields, v.version,
            i.outcome, i.rater1_id, i.rater2_id
     FROM clips c JOIN tasks t ON t.id = c.task_id
     JOIN clip_versions v ON v.id = c.current_version_id
     JOIN items i ON i.clip_version_id = v.id AND i.stage = 1
     WHERE c.campaign_id = $1";
/// Every earlier video of a known clip.
pub(crate) const IMPORT_EARLIER: &str =
    "SELECT c.clip_key, v.media_sha256 FROM clip_versions v JOIN clips c ON c.id = v.clip_id
     WHERE c.campaign_id = $1";
/// The owner of every question id.
pub(crate) const IMPORT_OWNERS: &str = "SELECT q.question_key, c.clip_key FROM questions q
     JOIN clip_versions v ON v.id = q.clip_version_id JOIN clips c ON c.id = v.clip_id
     WHERE c.campaign_id = $1";
pub(crate) const INSERT_IMPORT: &str = "INSERT INTO imports (campaign_id, manifest, manifest_sha256, clips_new, versions_new, imported_at)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING id";
/// The versions an import replaces leave the queues.
pub(crate) const RETIRE_REPLACED: &str = "UPDATE items SET is_current = 0, queue1 = NULL, queue2 = NULL
     WHERE is_current = 1 AND clip_version_id IN
         (SELECT c.current_version_id FROM clips c JOIN clip_versions v ON v.clip_id = c.id
          WHERE v.import_id = $1)";
/// The clips an import brought a version of point at it.
pub(crate) const POINT_AT_NEW_VERSIONS: &str =
    "UPDATE clips SET current_version_id = (SELECT v.id FROM clip_versions v
                                            WHERE v.clip_id = clips.id AND v.import_id = $1)
     WHERE id IN (SELECT clip_id FROM clip_versions WHERE import_id = $1)";
/// The rows an import inserts, without their `VALUES`.
pub(crate) const INSERT_CLIPS: &str =
    "INSERT INTO clips (campaign_id, task_id, clip_key, calibration) VALUES ";
pub(crate) const INSERT_VERSIONS: &str = "INSERT INTO clip_versions (clip_id, version, media_sha256, media_type, media_size, source_file, fields, import_id, created_at) VALUES ";
pub(crate) const INSERT_STAGE1: &str = "INSERT INTO items (campaign_id, task_id, stage, clip_version_id, item_key, clip_version, sort_key,
                          rater1_id, rater2_id, queue1, queue2, calibration, is_current) VALUES ";
pub(crate) const INSERT_QUESTIONS: &str = "INSERT INTO questions (clip_version_id, position, question_key, qa_type, level, body, options, answer) VALUES ";
pub(crate) const INSERT_STAGE2: &str = "INSERT INTO items (campaign_id, task_id, stage, clip_version_id, question_id, parent_item_id,
                          item_key, clip_version, qa_type, level, sort_key, calibration, is_current) VALUES ";

/// A task as an import needs it.
#[derive(sqlx::FromRow)]
pub(crate) struct ImportTask {
    pub(crate) id: i64,
    pub(crate) code: String,
    pub(crate) position: i64,
    pub(crate) rater1_id: Option<i64>,
    pub(crate) rater2_id: Option<i64>,
}

/// What an import compares its manifest with, read inside its write.
pub(crate) struct Known {
    /// Tasks by code.
    pub(crate) tasks: HashMap<String, ImportTask>,
    /// Clips by key.
    pub(crate) clips: HashMap<String, KnownClip>,
    /// (clip key, video) of every version.
    pub(crate) earlier: HashSet<(String, String)>,
    /// Question key -> clip key.
    pub(crate) owners: HashMap<String, String>,
}

async fn known_in(c: &mut Conn, campaign_id: i64) -> Result<Known> {
    let tasks = qa::<ImportTask>(IMPORT_TASKS)
        .bind(campaign_id)
        .fetch_all(&mut *c)
        .await?
        .into_iter()
        .map(|t| (t.code.clone(), t))
        .collect();
    let clips = qa::<KnownClip>(IMPORT_KNOWN)
        .bind(campaign_id)
        .fetch_all(&mut *c)
        .await?
        .into_iter()
        .map(|k| (k.clip_key.clone(), k))
        .collect();
    let earlier = qa::<(String, String)>(IMPORT_EARLIER)
        .bind(campaign_id)
        .fetch_all(&mut *c)
        .await?
        .into_iter()
        .collect();
    let owners = qa::<(String, String)>(IMPORT_OWNERS)
        .bind(campaign_id)
        .fetch_all(&mut *c)
        .await?
        .into_iter()
        .collect();
    Ok(Known {
        tasks,
        clips,
        earlier,
        owners,
    })
}

/// What an import stores, decided from the manifest and what the campaign holds (no
/// database): every clip that is new or a new version, or every problem with line and
/// field. An empty plan stores nothing.
pub(crate) fn plan_import<'m>(
    campaign: &Campaign,
    manifest: &'m CheckedManifest,
    known: &Known,
) -> Result<(Vec<Plan<'m>>, ImportSummary)> {
    let mut problems = Vec::new();
    let mut plans: Vec<Plan<'m>> = Vec::new();
    let mut summary = ImportSummary {
        campaign: campaign.name.clone(),
        ..ImportSummary::default()
    };
    for clip in &manifest.clips {
        if !known.tasks.contains_key(&clip.task) {
            problems.push(LineError::new(
                clip.line,
                Some("task"),
                format!("campaign `{}` has no task `{}`", campaign.name, clip.task),
            ));
            continue;
        }
        let plan = match known.clips.get(&clip.clip_id) {
            None => Plan {
                clip,
                clip_pk: None,
                version: 1,
                pair: (None, None),
            },
            Some(k) => {
                if k.task != clip.task {
                    problems.push(LineError::new(
                        clip.line,
                        Some("task"),
                        format!(
                            "clip `{}` is already imported under task `{}`; a clip cannot change task",
                            clip.clip_id, k.task
                        ),
                    ));
                    continue;
                }
                if k.media_sha256 == clip.media.sha256 {
                    if k.fields != clip.fields {
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
                // A video this clip had before (an older manifest imported again) is
                // not a new version.
                if known.earlier.contains(&(clip.clip_id.clone(), clip.media.sha256.clone())) {
                    summary.unchanged += 1;
                    continue;
                }
                // Only a clip rejected in Stage 1 gets a new version: one in review,
                // waiting for an author or retained keeps its video.
                if !Outcome::parse(&k.outcome).is_some_and(Outcome::is_rejected) {
                    let state = match k.outcome.as_str() {
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
                Plan {
                    clip,
                    clip_pk: Some(k.id),
                    version: k.version + 1,
                    pair: (k.rater1_id, k.rater2_id),
                }
            }
        };
        // A question id belongs to one clip of the campaign.
        for (i, q) in clip.questions.iter().enumerate() {
            if let Some(owner) = known.owners.get(&q.question_id)
                && *owner != clip.clip_id
            {
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
    summary.clips_new = plans.iter().filter(|p| p.clip_pk.is_none()).count();
    summary.versions_new = plans.len() - summary.clips_new;
    summary.questions_new = plans.iter().map(|p| p.clip.questions.len()).sum();
    Ok((plans, summary))
}

async fn import_manifest_in(
    c: &mut Conn,
    campaign_name: &str,
    manifest: &CheckedManifest,
) -> Result<(ImportSummary, HashSet<String>)> {
    let campaign = ensure_campaign_in(c, campaign_name).await?;
    let known = known_in(c, campaign.id).await?;
    let (plans, summary) = plan_import(&campaign, manifest, &known)?;
    if plans.is_empty() {
        // Nothing new: leave the database exactly as it was.
        return Ok((summary, HashSet::new()));
    }
    let tasks = &known.tasks;

    let now = now_micros();
    let import_id: i64 = qs(INSERT_IMPORT)
    .bind(campaign.id)
    .bind(manifest.path.display().to_string())
    .bind(&manifest.sha256)
    .bind(i64::try_from(summary.clips_new).unwrap_or(i64::MAX))
    .bind(i64::try_from(summary.versions_new).unwrap_or(i64::MAX))
    .bind(now)
    .fetch_one(&mut *c)
    .await?;

    // New clips.
    let new_clips: Vec<&Plan<'_>> = plans.iter().filter(|p| p.clip_pk.is_none()).collect();
    let mut clip_pk: HashMap<String, i64> = plans
        .iter()
        .filter_map(|p| p.clip_pk.map(|pk| (p.clip.clip_id.clone(), pk)))
        .collect();
    for chunk in new_clips.chunks(chunk_rows(4)) {
        let sql = format!(
            "{INSERT_CLIPS}{} RETURNING id, clip_key",
            values(1, 4, chunk.len())
        );
        let mut insert = qa::<(i64, String)>(sqlx::AssertSqlSafe(sql));
        for p in chunk {
            insert = insert
                .bind(campaign.id)
                .bind(tasks[&p.clip.task].id)
                .bind(p.clip.clip_id.clone())
                .bind(i64::from(p.clip.calibration.is_some()));
        }
        for (id, key) in insert.fetch_all(&mut *c).await? {
            clip_pk.insert(key, id);
        }
    }
    // Their versions.
    let mut version_of: HashMap<i64, i64> = HashMap::new(); // clip pk -> new version id
    for chunk in plans.chunks(chunk_rows(9)) {
        let sql = format!(
            "{INSERT_VERSIONS}{} RETURNING id, clip_id",
            values(1, 9, chunk.len())
        );
        let mut insert = qa::<(i64, i64)>(sqlx::AssertSqlSafe(sql));
        for p in chunk {
            let pk = clip_pk.get(&p.clip.clip_id).copied().unwrap_or(0);
            insert = insert
                .bind(pk)
                .bind(p.version)
                .bind(p.clip.media.sha256.clone())
                .bind(p.clip.media.media_type)
                .bind(i64::try_from(p.clip.media.size).unwrap_or(i64::MAX))
                .bind(p.clip.file.clone())
                .bind(p.clip.fields.clone())
                .bind(import_id)
                .bind(now);
        }
        for (id, clip) in insert.fetch_all(&mut *c).await? {
            version_of.insert(clip, id);
        }
    }
    // The versions they replace leave the queues.
    if summary.versions_new > 0 {
        q(RETIRE_REPLACED)
        .bind(import_id)
        .execute(&mut *c)
        .await?;
    }
    q(POINT_AT_NEW_VERSIONS)
    .bind(import_id)
    .execute(&mut *c)
    .await?;

    // Stage 1 items: in the queue of the pair that reviewed the rejected version, or of
    // the task's pair in force; calibration items in no queue.
    let mut stage1: HashMap<i64, i64> = HashMap::new(); // version id -> item id
    let mut keys: Vec<(i64, &crate::domain::rules::CheckedVerdict)> = Vec::new();
    for chunk in plans.chunks(chunk_rows(13)) {
        let sql = format!(
            "{INSERT_STAGE1}{} RETURNING id, clip_version_id",
            values(1, 13, chunk.len())
        );
        let mut insert = qa::<(i64, i64)>(sqlx::AssertSqlSafe(sql));
        for p in chunk {
            let task = &tasks[&p.clip.task];
            let pk = clip_pk.get(&p.clip.clip_id).copied().unwrap_or(0);
            let version_id = version_of.get(&pk).copied().unwrap_or(0);
            let queue = p.queue(task);
            insert = insert
                .bind(campaign.id)
                .bind(task.id)
                .bind(1i64)
                .bind(version_id)
                .bind(p.clip.clip_id.clone())
                .bind(p.version)
                .bind(sort_key(task.position, &p.clip.clip_id, None))
                .bind(p.pair.0)
                .bind(p.pair.1)
                .bind(queue.0)
                .bind(queue.1)
                .bind(i64::from(p.clip.calibration.is_some()))
                .bind(1i64);
        }
        for (id, version) in insert.fetch_all(&mut *c).await? {
            stage1.insert(version, id);
        }
    }
    for p in &plans {
        if let Some(key) = &p.clip.calibration {
            let pk = clip_pk.get(&p.clip.clip_id).copied().unwrap_or(0);
            let version_id = version_of.get(&pk).copied().unwrap_or(0);
            if let Some(item) = stage1.get(&version_id) {
                keys.push((*item, key));
            }
        }
    }
    // Questions, and their Stage 2 items (in no queue until the clip is retained).
    let questions: Vec<(&Plan<'_>, usize, &crate::domain::import::ManifestQuestion)> = plans
        .iter()
        .flat_map(|p| p.clip.questions.iter().enumerate().map(move |(i, q)| (p, i, q)))
        .collect();
    let mut question_id: HashMap<(i64, i64), i64> = HashMap::new(); // (version, position) -> id
    for chunk in questions.chunks(chunk_rows(8)) {
        let sql = format!(
            "{INSERT_QUESTIONS}{} RETURNING id, clip_version_id, position",
            values(1, 8, chunk.len())
        );
        let mut insert = qa::<(i64, i64, i64)>(sqlx::AssertSqlSafe(sql));
        for (p, i, qu) in chunk {
            let pk = clip_pk.get(&p.clip.clip_id).copied().unwrap_or(0);
            let version_id = version_of.get(&pk).copied().unwrap_or(0);
            let options = serde_json::to_string(&qu.options)
                .map_err(|e| Error::Internal(format!("options do not serialise: {e}")))?;
            insert = insert
                .bind(version_id)
                .bind(i64::try_from(*i).unwrap_or(i64::MAX))
                .bind(qu.question_id.clone())
                .bind(qu.qa_type.clone())
                .bind(qu.level.as_str())
                .bind(qu.question.clone())
                .bind(options)
                .bind(i64::try_from(qu.answer).unwrap_or(i64::MAX));
        }
        for (id, version, position) in insert.fetch_all(&mut *c).await? {
            question_id.insert((version, position), id);
        }
    }
    let mut question_item: HashMap<i64, i64> = HashMap::new(); // question id -> item id
    for chunk in questions.chunks(chunk_rows(13)) {
        let sql = format!(
            "{INSERT_STAGE2}{} RETURNING id, question_id",
            values(1, 13, chunk.len())
        );
        let mut insert = qa::<(i64, i64)>(sqlx::AssertSqlSafe(sql));
        for (p, i, qu) in chunk {
            let task = &tasks[&p.clip.task];
            let pk = clip_pk.get(&p.clip.clip_id).copied().unwrap_or(0);
            let version_id = version_of.get(&pk).copied().unwrap_or(0);
            let position = i64::try_from(*i).unwrap_or(i64::MAX);
            let qid = question_id.get(&(version_id, position)).copied().unwrap_or(0);
            insert = insert
                .bind(campaign.id)
                .bind(task.id)
                .bind(2i64)
                .bind(version_id)
                .bind(qid)
                .bind(stage1.get(&version_id).copied())
                .bind(qu.question_id.clone())
                .bind(p.version)
                .bind(qu.qa_type.clone())
                .bind(qu.level.as_str())
                .bind(sort_key(task.position, &p.clip.clip_id, Some(position)))
                .bind(i64::from(p.clip.calibration.is_some()))
                .bind(1i64);
        }
        for (id, qid) in insert.fetch_all(&mut *c).await? {
            question_item.insert(qid, id);
        }
    }
    for (p, i, qu) in &questions {
        if let Some(key) = &qu.calibration {
            let pk = clip_pk.get(&p.clip.clip_id).copied().unwrap_or(0);
            let version_id = version_of.get(&pk).copied().unwrap_or(0);
            let position = i64::try_from(*i).unwrap_or(i64::MAX);
            if let Some(item) = question_id
                .get(&(version_id, position))
                .and_then(|qid| question_item.get(qid))
            {
                keys.push((*item, key));
            }
        }
    }
    if !keys.is_empty() {
        insert_keys_in(c, &keys).await?;
        super::gates::refresh_gates_in(c, campaign.id).await?;
    }
    let stored = plans.iter().map(|p| p.clip.media.sha256.clone()).collect();
    Ok((summary, stored))
}

// Campaigns, their tasks and pairs, the import of clips with their questions, and
// progress. (Shared SQL: compiled once per backend, see store/mod.rs.)

use crate::domain::import::CheckedManifest;
use crate::domain::taxonomy::Taxonomy;
use crate::error::{Error, Result};
use crate::store::Lock;
use crate::store::db::question_open;
use crate::store::write;
use crate::store::accounts::User;
use crate::domain::Stage;
use crate::store::catalog::{
    ItemListQuery,
    Campaign, ClassifiedItem, ImportSummary, ItemClass, PairChange, Settings,
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

    /// The pool with each validator's open work (`write::gates::open_work`: what the
    /// least-open-work rule weighs), by pool index, and every member's name.
    pub(crate) async fn open_work(
        &self,
        campaign: &Campaign,
    ) -> Result<Vec<(i64, String, Option<i64>)>> {
        let mut c = self.read().await?;
        let work: HashMap<i64, i64> = write::gates::open_work(&mut *c, campaign.id)
            .await?
            .into_iter()
            .map(|m| (m.id, m.open))
            .collect();
        let members = qa::<(i64, i64, String)>(
            "SELECT p.pool_index, u.id, u.name FROM pool_members p JOIN users u ON u.id = p.user_id
             WHERE p.campaign_id = $1 ORDER BY p.pool_index",
        )
        .bind(campaign.id)
        .fetch_all(&mut *c)
        .await?;
        // A disabled member takes no new work: none.
        Ok(members
            .into_iter()
            .map(|(index, id, name)| (index, name, work.get(&id).copied()))
            .collect())
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
        let Some(campaign) = write::base::campaign(&mut *c, campaign_name).await? else {
            // A campaign made by this placement has no tasks yet: nothing moves.
            return Ok(Vec::new());
        };
        const JOINING: i64 = -1;
        let planned =
            write::gates::planned_pairs(&mut *c, campaign.id, Some((index, JOINING))).await?;
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
                    SUM(CASE WHEN items.rater1_id IS NULL AND items.held = 0
                                  AND (items.stage = 1 OR items.parent_item_id IS NULL)
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
        let pair = |p: &write::gates::PairInForce| -> Option<(String, String)> {
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

impl Backend {
    pub(crate) async fn load_campaign(&self, name: &str) -> Result<Option<Campaign>> {
        write::base::campaign(&mut *self.read().await?, name).await
    }

    /// Creates a campaign with its protocol's taxonomy (`write::base::create_campaign`).
    pub(crate) async fn create_campaign(
        &self,
        name: &str,
        taxonomy: &Taxonomy,
        target: Option<i64>,
    ) -> Result<Campaign> {
        let (name, taxonomy) = (name.to_string(), taxonomy.clone());
        self.write_tx(Lock::Structure, move |tx| {
            let (name, taxonomy) = (name.clone(), taxonomy.clone());
            Box::pin(async move {
                write::base::create_campaign(tx, &name, taxonomy, target).await
            })
        })
        .await
    }

    /// Another protocol for a campaign (`write::catalog::change_protocol`).
    pub(crate) async fn change_protocol(&self, name: &str, taxonomy: &Taxonomy) -> Result<Campaign> {
        let (name, taxonomy) = (name.to_string(), taxonomy.clone());
        self.write_tx(Lock::Structure, move |tx| {
            let (name, taxonomy) = (name.clone(), taxonomy.clone());
            Box::pin(async move { write::catalog::change_protocol(tx, &name, taxonomy).await })
        })
        .await
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
        if !(0.0..=1.0).contains(&settings.known_rate) {
            return Err(Error::field(
                "known_rate",
                "the known clips' share is a fraction from 0 (every known clip) to 1 (0.05 is 5%)",
            ));
        }
        if !(1..=10_000).contains(&settings.known_window) {
            return Err(Error::field(
                "known_window",
                "the recent catch rate looks at the last 1 to 10000 known defects",
            ));
        }
        let id = campaign.id;
        self.write_tx(Lock::Structure, move |tx| {
            Box::pin(async move { write::catalog::set_settings(tx, id, &settings).await })
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
        self.write_tx(Lock::Rows, move |tx| {
            let sha = sha.clone();
            Box::pin(async move { write::catalog::set_frame_timing(tx, &sha, timing).await })
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
        if user.admin {
            return self.campaign_names().await;
        }
        // Participants never learn a campaign's name (it could hint at the sources).
        let mut names: Vec<String> = user
            .roles
            .iter()
            .filter(|r| r.role.is_staff())
            .map(|r| r.campaign.clone())
            .collect();
        names.sort();
        Ok(names)
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
            .write_tx(Lock::Structure, move |tx| {
                let (campaign_name, task_code, pair) =
                    (campaign_name.clone(), task_code.clone(), pair.clone());
                Box::pin(async move {
                    let pair = pair.as_ref().map(|(a, b)| (a.as_str(), b.as_str()));
                    write::catalog::set_pair(tx, (campaign_id, &campaign_name), &task_code, pair)
                        .await
                })
            })
            .await?;
        self.tasks(campaign)
            .await?
            .into_iter()
            .find(|t| t.id == task_id)
            .ok_or_else(|| Error::Internal("task vanished".into()))
    }

    /// Stores a checked manifest (`write::catalog::import_manifest`), alone in its
    /// transaction; then the planner's statistics follow.
    pub(crate) async fn import_manifest(
        &self,
        campaign_name: &str,
        manifest: &CheckedManifest,
    ) -> Result<(ImportSummary, HashSet<String>)> {
        let campaign_name = campaign_name.to_string();
        let manifest = Arc::new(manifest.clone());
        let stored = self
            .write_tx(Lock::Import, move |tx| {
                let (campaign_name, manifest) = (campaign_name.clone(), manifest.clone());
                Box::pin(async move {
                    write::catalog::import_manifest(tx, &campaign_name, &manifest).await
                })
            })
            .await?;
        self.after_import().await;
        Ok(stored)
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
            held: i64,
            n: i64,
        }
        let rows: Vec<Row> = qa(concat!(
            "SELECT t.code, i.stage, i.outcome,
                    CAST(CASE WHEN i.decided1 = 1 OR i.decided2 = 1 THEN 1 ELSE 0 END AS BIGINT) AS started,
                    CAST(",
            question_open!(),
            " AS BIGINT) AS is_open,
                    i.held,
                    COUNT(*) AS n
             FROM items i
             JOIN tasks t ON t.id = i.task_id
             LEFT JOIN items p ON p.id = i.parent_item_id
             WHERE i.campaign_id = $1 AND i.calibration = 0 AND i.is_current = 1
             GROUP BY t.code, i.stage, i.outcome,
                      CASE WHEN i.decided1 = 1 OR i.decided2 = 1 THEN 1 ELSE 0 END, ",
            question_open!(),
            ", i.held"
        ))
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
            s.count(ItemClass::of(&r.outcome, r.started == 1, r.is_open == 1, r.held == 1)?, r.n);
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
        query: &ItemListQuery,
    ) -> Result<crate::domain::paging::Page<ClassifiedItem>> {
        #[derive(sqlx::FromRow)]
        struct Row {
            item_key: String,
            clip_key: String,
            code: String,
            outcome: String,
            started: i64,
            is_open: i64,
            held: i64,
            rater1: Option<String>,
            rater2: Option<String>,
        }
        let rows: Vec<Row> = qa(concat!(
            "SELECT i.item_key, c.clip_key, t.code, i.outcome,
                    CAST(CASE WHEN i.decided1 = 1 OR i.decided2 = 1 THEN 1 ELSE 0 END AS BIGINT) AS started,
                    CAST(",
            question_open!(),
            " AS BIGINT) AS is_open,
                    i.held,
                    u1.name AS rater1, u2.name AS rater2
             FROM items i
             JOIN tasks t ON t.id = i.task_id
             JOIN clip_versions v ON v.id = i.clip_version_id JOIN clips c ON c.id = v.clip_id
             LEFT JOIN items p ON p.id = i.parent_item_id
             LEFT JOIN users u1 ON u1.id = i.rater1_id LEFT JOIN users u2 ON u2.id = i.rater2_id
             WHERE i.campaign_id = $1 AND i.calibration = 0 AND i.is_current = 1 AND i.stage = $2
               AND ($3 = '' OR t.code = $3)
             ORDER BY t.position, i.item_key"
        ))
        .bind(campaign.id)
        .bind(stage.number())
        .bind(query.task.as_deref().unwrap_or(""))
        .fetch_all(&mut *self.read().await?)
        .await?;
        // Every row of the stage is classified (as the overview counts them), so that
        // the group is counted whole and a page's cursor keeps its place even when
        // its row has left the group since.
        let all = rows
            .into_iter()
            .map(|r| {
                Ok(ClassifiedItem {
                    class: ItemClass::of(&r.outcome, r.started == 1, r.is_open == 1, r.held == 1)?,
                    item_id: r.item_key,
                    clip_id: r.clip_key,
                    task: r.code,
                    rater1: r.rater1,
                    rater2: r.rater2,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let prefix = query.prefix.as_deref().unwrap_or("");
        Ok(crate::domain::paging::page_of(
            all,
            |i| &i.item_id,
            |i| {
                query.group.contains(i.class)
                    && (i.item_id.starts_with(prefix) || i.clip_id.starts_with(prefix))
            },
            query.cursor.as_ref(),
            query.limit,
        )?)
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

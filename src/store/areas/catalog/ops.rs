//! The catalogue's entry points on [`Store`]: campaigns (a copy of each kept a second),
//! their tasks and pairs, the pool's open work, progress and the overview's groups.
//! The writes they run are in the parent module.

use crate::domain::Stage;
use crate::domain::import::CheckedManifest;
use crate::domain::taxonomy::Taxonomy;
use crate::error::{Error, Result};
use crate::store::accounts::User;
use crate::store::areas::{base, gates};
use crate::store::catalog::{
    Campaign, ClassifiedItem, ImportSummary, ItemClass, ItemListQuery, PairChange, Settings,
    StageProgress, TaskInfo, TaskProgress,
};
use crate::store::db::{Tx, named, question_open, row, sql};
use crate::store::{Lock, Store};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

impl Store {
    /// The campaign named `name` (a copy at most a second old: what a write depends on
    /// is read inside the write itself).
    pub async fn campaign(&self, name: &str) -> Result<Campaign> {
        if let Some(c) = self.inner.cache.campaign(name) {
            return Ok(c);
        }
        let found = read_tx!(self, |c| base::campaign(c, name).await)?;
        let c = found.ok_or_else(|| base::no_campaign(name))?;
        self.inner.cache.put_campaign(&c);
        Ok(c)
    }

    /// Creates a campaign that reviews by `protocol` (its taxonomy and its target per
    /// task); a campaign of that name is a conflict (`base::create_campaign`).
    pub async fn create_campaign(
        &self,
        name: &str,
        protocol: &crate::domain::protocol::Protocol,
    ) -> Result<Campaign> {
        let (taxonomy, target) = (&protocol.taxonomy, protocol.target_per_task);
        let r = write_tx!(self, Lock::Structure, (name, taxonomy), |tx| {
            base::create_campaign(tx, name, taxonomy.clone(), target).await
        });
        self.inner.cache.forget_campaigns();
        r
    }

    /// Gives a campaign another protocol's taxonomy when its stored clips and questions
    /// keep their meaning under it (see `domain::protocol::change_problems`); refused
    /// whole, each problem named, otherwise. This server sees the change at once, others
    /// within a second; an import checked before it is checked again in its write.
    pub async fn change_protocol(&self, name: &str, taxonomy: &Taxonomy) -> Result<Campaign> {
        let r = write_tx!(self, Lock::Structure, (name, taxonomy), |tx| {
            super::change_protocol(tx, name, taxonomy.clone()).await
        });
        self.inner.cache.forget_campaigns();
        r
    }

    /// Changes a campaign's targets and calibration rules.
    pub async fn set_settings(&self, campaign: &Campaign, settings: Settings) -> Result<()> {
        check_settings(&settings)?;
        let id = campaign.id;
        let r = write_tx!(self, Lock::Structure, (settings), |tx| {
            super::set_settings(tx, id, settings).await
        });
        self.inner.cache.forget_campaigns();
        r
    }

    /// Per task, the pairs that have reviewed its Stage 1 items (newest versions, no
    /// calibration items) and how many items each: (task, rater 1, rater 2, items).
    pub async fn reviewing_pairs(
        &self,
        campaign: &Campaign,
    ) -> Result<Vec<(String, String, String, i64)>> {
        let campaign = campaign.id;
        read_tx!(self, |c| {
            c.fetch(
                sql!(
                    "SELECT t.code, u1.name, u2.name, COUNT(*)
                     FROM items i JOIN tasks t ON t.id = i.task_id
                     JOIN users u1 ON u1.id = i.rater1_id JOIN users u2 ON u2.id = i.rater2_id
                     WHERE i.campaign_id = :campaign AND i.stage = 1 AND i.is_current = 1
                       AND i.calibration = 0
                     GROUP BY t.code, u1.name, u2.name
                     ORDER BY t.code, COUNT(*) DESC, u1.name, u2.name"
                ),
                named! { campaign },
            )
            .await
        })
    }

    /// The pool with each validator's open work (`gates::open_work`: what the
    /// least-open-work rule weighs), by pool index, and every member's name (a disabled
    /// member takes no new work: none).
    pub async fn open_work(&self, campaign: &Campaign) -> Result<Vec<(i64, String, Option<i64>)>> {
        let campaign = campaign.id;
        let (work, members) = read_tx!(self, long, |c| {
            let work = gates::open_work(c, campaign).await?;
            let members: Vec<(i64, i64, String)> = c
                .fetch(
                    sql!(
                        "SELECT p.pool_index, u.id, u.name
                         FROM pool_members p JOIN users u ON u.id = p.user_id
                         WHERE p.campaign_id = :campaign ORDER BY p.pool_index"
                    ),
                    named! { campaign },
                )
                .await?;
            Ok::<_, Error>((work, members))
        })?;
        let work: HashMap<i64, i64> = work.into_iter().map(|m| (m.id, m.open)).collect();
        Ok(members
            .into_iter()
            .map(|(index, id, name)| (index, name, work.get(&id).copied()))
            .collect())
    }

    /// What placing `name` at pool `index` of a campaign would change, before it does:
    /// each task whose pair in force changes, from and to whom, and how many of its
    /// unstarted items would move to the new pair (the items `MOVE_UNSTARTED` moves).
    /// Nothing is written.
    pub async fn pool_change_preview(
        &self,
        campaign_name: &str,
        name: &str,
        index: i64,
    ) -> Result<Vec<PairChange>> {
        read_tx!(self, long, |c| pool_change_preview(
            c,
            campaign_name,
            name,
            index
        )
        .await)
    }

    /// The SHA-256 of every stored video, newest first.
    pub async fn media_hashes(&self) -> Result<Vec<String>> {
        let rows: Vec<(String,)> = read_tx!(self, long, |c| {
            c.fetch(
                sql!(
                    "SELECT media_sha256 FROM clip_versions
                     GROUP BY media_sha256 ORDER BY MAX(id) DESC"
                ),
                &[],
            )
            .await
        })?;
        Ok(rows.into_iter().map(|r| r.0).collect())
    }

    /// The videos whose frame timing nobody has asked ffprobe for yet.
    pub async fn media_without_timing(&self) -> Result<Vec<String>> {
        let rows: Vec<(String,)> = read_tx!(self, long, |c| {
            c.fetch(
                sql!(
                    "SELECT media_sha256 FROM clip_versions WHERE timing_probed_at IS NULL
                     GROUP BY media_sha256 ORDER BY MAX(id) DESC"
                ),
                &[],
            )
            .await
        })?;
        Ok(rows.into_iter().map(|r| r.0).collect())
    }

    /// Stores what ffprobe said about a video (none: it could not tell) on every clip
    /// version showing it.
    pub async fn set_frame_timing(
        &self,
        sha256: &str,
        timing: Option<crate::domain::video::FrameTiming>,
    ) -> Result<()> {
        write_tx!(self, Lock::Rows, (sha256), |tx| {
            super::set_frame_timing(tx, sha256, timing).await
        })
    }

    /// The campaigns a person works in: a validator's pools; participants none;
    /// everyone else all of them.
    pub async fn campaign_names_for(&self, user: &User) -> Result<Vec<String>> {
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

    pub async fn campaign_names(&self) -> Result<Vec<String>> {
        let rows: Vec<(String,)> = read_tx!(self, |c| {
            c.fetch(sql!("SELECT name FROM campaigns ORDER BY name"), &[])
                .await
        })?;
        Ok(rows.into_iter().map(|r| r.0).collect())
    }

    /// The tasks of a campaign in pairing order, with the pair in force.
    pub async fn tasks(&self, campaign: &Campaign) -> Result<Vec<TaskInfo>> {
        read_tx!(self, |c| tasks_in(c, campaign.id).await)
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
        if let Some((a, b)) = pair
            && a == b
        {
            return Err(Error::Invalid(
                "a pair needs two different validators".into(),
            ));
        }
        let campaign_id = campaign.id;
        let campaign_name = &campaign.name;
        let pair = pair.map(|(a, b)| (a.to_string(), b.to_string()));
        let task_id = write_tx!(
            self,
            Lock::Structure,
            (campaign_name, task_code, pair),
            |tx| {
                let pair = pair.as_ref().map(|(a, b)| (a.as_str(), b.as_str()));
                super::set_pair(tx, (campaign_id, campaign_name), task_code, pair).await
            }
        )?;
        self.tasks(campaign)
            .await?
            .into_iter()
            .find(|t| t.id == task_id)
            .ok_or_else(|| Error::Internal("task vanished".into()))
    }

    /// Stores a checked manifest in one short write, alone in its transaction (the
    /// videos are in the media folder already: `app::import_manifest` copies them
    /// first); returns what it stored and the SHA-256 of the videos of the versions it
    /// added. Then the planner's statistics follow.
    pub async fn import_manifest(
        &self,
        campaign_name: &str,
        manifest: &CheckedManifest,
    ) -> Result<(ImportSummary, HashSet<String>)> {
        let manifest = Arc::new(manifest.clone());
        let stored = write_tx!(self, Lock::Import, (campaign_name, manifest), |tx| {
            super::import_manifest(tx, campaign_name, manifest).await
        })?;
        self.after_import().await;
        Ok(stored)
    }

    /// Where each task stands in both stages.
    pub async fn progress(&self, campaign: &Campaign) -> Result<Vec<TaskProgress>> {
        read_tx!(self, long, |c| progress(c, campaign.id).await)
    }

    /// The items of a stage (of one task, or all) in one group of the overview, in task
    /// and item order: at most `limit`, and how many there are in all. Classified by
    /// the same `ItemClass::of` as the overview's counts, over the same rows.
    pub async fn items_in_group(
        &self,
        campaign: &Campaign,
        stage: Stage,
        query: &ItemListQuery,
    ) -> Result<crate::domain::paging::Page<ClassifiedItem>> {
        row! {
            struct Found {
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
        }
        const ITEMS: &str = concat!(
            "SELECT i.item_key, c.clip_key, t.code, i.outcome,
                    CAST(CASE WHEN i.decided1 = 1 OR i.decided2 = 1 THEN 1 ELSE 0 END AS BIGINT)
                      AS started,
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
             WHERE i.campaign_id = :campaign AND i.calibration = 0 AND i.is_current = 1
               AND i.stage = :stage AND (:task = '' OR t.code = :task)
             ORDER BY t.position, i.item_key"
        );
        let (campaign, stage) = (campaign.id, stage.number());
        let task = query.task.as_deref().unwrap_or("");
        let rows: Vec<Found> = read_tx!(self, long, |c| {
            c.fetch(sql!(ITEMS), named! { campaign, stage, task }).await
        })?;
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
        let keep = |i: &ClassifiedItem| {
            query.group.contains(i.class)
                && (i.item_id.starts_with(prefix) || i.clip_id.starts_with(prefix))
        };
        fn key(i: &ClassifiedItem) -> &str {
            &i.item_id
        }
        let cursor = match query.page {
            Some(n) => crate::domain::paging::cursor_of_page(&all, key, keep, n, query.limit),
            None => query.cursor.clone(),
        };
        Ok(crate::domain::paging::page_of(
            all,
            key,
            keep,
            cursor.as_ref(),
            query.limit,
        )?)
    }
}

/// Checks a campaign's settings before they are stored, naming the field at fault.
fn check_settings(settings: &Settings) -> Result<()> {
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
    Ok(())
}

async fn pool_change_preview(
    c: &mut impl Tx,
    campaign_name: &str,
    name: &str,
    index: i64,
) -> Result<Vec<PairChange>> {
    let Some(campaign) = base::campaign(c, campaign_name).await? else {
        // A campaign made by this placement has no tasks yet: nothing moves.
        return Ok(Vec::new());
    };
    const JOINING: i64 = -1;
    let planned = gates::planned_pairs(c, campaign.id, Some((index, JOINING))).await?;
    let campaign = campaign.id;
    let members: Vec<(i64, String)> = c
        .fetch(
            sql!(
                "SELECT u.id, u.name FROM pool_members p JOIN users u ON u.id = p.user_id
                 WHERE p.campaign_id = :campaign"
            ),
            named! { campaign },
        )
        .await?;
    let names: HashMap<i64, String> = members
        .into_iter()
        .chain([(JOINING, name.to_string())])
        .collect();
    // Per task: the items MOVE_UNSTARTED would move, and those someone started.
    let counts: Vec<(i64, i64, i64)> = c
        .fetch(
            sql!(
                "SELECT items.task_id,
                        SUM(CASE WHEN items.rater1_id IS NULL AND items.held = 0
                                      AND (items.stage = 1 OR items.parent_item_id IS NULL)
                                 THEN 1 ELSE 0 END),
                        SUM(CASE WHEN items.rater1_id IS NOT NULL THEN 1 ELSE 0 END)
                 FROM items
                 WHERE items.campaign_id = :campaign AND items.is_current = 1
                   AND items.calibration = 0
                 GROUP BY items.task_id"
            ),
            named! { campaign },
        )
        .await?;
    let counts: HashMap<i64, (i64, i64)> =
        counts.into_iter().map(|(t, u, s)| (t, (u, s))).collect();
    let pair = |p: &gates::PairInForce| -> Option<(String, String)> {
        let n = |id: i64| {
            names
                .get(&id)
                .cloned()
                .unwrap_or_else(|| format!("user #{id}"))
        };
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

async fn progress(c: &mut impl Tx, campaign: i64) -> Result<Vec<TaskProgress>> {
    row! {
        struct Found {
            code: String,
            stage: i64,
            outcome: String,
            started: i64,
            is_open: i64,
            held: i64,
            n: i64,
        }
    }
    const PROGRESS: &str = concat!(
        "SELECT t.code, i.stage, i.outcome,
                CAST(CASE WHEN i.decided1 = 1 OR i.decided2 = 1 THEN 1 ELSE 0 END AS BIGINT)
                  AS started,
                CAST(",
        question_open!(),
        " AS BIGINT) AS is_open,
                i.held,
                COUNT(*) AS n
         FROM items i
         JOIN tasks t ON t.id = i.task_id
         LEFT JOIN items p ON p.id = i.parent_item_id
         WHERE i.campaign_id = :campaign AND i.calibration = 0 AND i.is_current = 1
         GROUP BY t.code, i.stage, i.outcome,
                  CASE WHEN i.decided1 = 1 OR i.decided2 = 1 THEN 1 ELSE 0 END, ",
        question_open!(),
        ", i.held"
    );
    let rows: Vec<Found> = c.fetch(sql!(PROGRESS), named! { campaign }).await?;
    let mut out: Vec<TaskProgress> = tasks_in(c, campaign)
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
        s.count(
            ItemClass::of(&r.outcome, r.started == 1, r.is_open == 1, r.held == 1)?,
            r.n,
        );
    }
    Ok(out)
}

/// The tasks of a campaign in pairing order, with the pair in force.
pub(crate) async fn tasks_in(c: &mut impl Tx, campaign: i64) -> Result<Vec<TaskInfo>> {
    row! {
        struct Found {
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
    }
    let rows: Vec<Found> = c
        .fetch(
            sql!(
                "SELECT t.id, t.position, t.code, t.name, t.attributes, t.pair_rater1,
                        t.pair_problem, u1.name AS rater1, u2.name AS rater2
                 FROM tasks t
                 LEFT JOIN users u1 ON u1.id = t.rater1_id
                 LEFT JOIN users u2 ON u2.id = t.rater2_id
                 WHERE t.campaign_id = :campaign ORDER BY t.position"
            ),
            named! { campaign },
        )
        .await?;
    rows.into_iter()
        .map(|r| {
            let attributes: BTreeMap<String, serde_json::Value> =
                serde_json::from_str(&r.attributes).map_err(|e| {
                    Error::fault(format!("stored attributes of task {}", r.code), e)
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

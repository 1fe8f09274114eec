//! Campaigns, their tasks and pairs, their settings, and the import of clips with their
//! questions: what a manifest adds is decided by [`plan_import`] (no database) from
//! what the campaign holds, then written by [`import_manifest`], the same on every
//! backend (SQLite runs each row's insert prepared once; PostgreSQL multi-row inserts).

mod ops;

use super::{base, gates};
use crate::clock::now_micros;
use crate::domain::import::{CheckedManifest, ItemKind, ManifestClip, ManifestQuestion};
use crate::domain::pairing::{Pairing, least_open_work};
use crate::domain::protocol::{InUse, change_problems};
use crate::domain::rules::CheckedVerdict;
use crate::domain::sampling::rule_for;
use crate::domain::taxonomy::Taxonomy;
use crate::domain::video::{FrameTiming, TimingRead};
use crate::domain::{Level, Outcome, Reason, Stage};
use crate::error::{Error, LineError, Rejected, Result};
use crate::store::catalog::{Campaign, ImportSummary, Settings};
use crate::store::db::{Tx, Value, named, row, sql};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The campaign's tasks, as an import needs them.
pub(crate) const IMPORT_TASKS: &str =
    "SELECT id, code, position, rater1_id, rater2_id FROM tasks WHERE campaign_id = :campaign";
/// Every clip of the campaign with its current version and Stage 1 item (none in a
/// protocol without clip review).
pub(crate) const IMPORT_KNOWN: &str =
    "SELECT c.id, c.clip_key, t.code AS task, v.media_sha256, v.fields, v.version,
            i.outcome, i.rater1_id, i.rater2_id
     FROM clips c JOIN tasks t ON t.id = c.task_id
     JOIN clip_versions v ON v.id = c.current_version_id
     LEFT JOIN items i ON i.clip_version_id = v.id AND i.stage = 1
     WHERE c.campaign_id = :campaign";
/// Every earlier video of a known clip.
pub(crate) const IMPORT_EARLIER: &str =
    "SELECT c.clip_key, v.media_sha256 FROM clip_versions v JOIN clips c ON c.id = v.clip_id
     WHERE c.campaign_id = :campaign";
/// The owner of every question id.
pub(crate) const IMPORT_OWNERS: &str = "SELECT q.question_key, c.clip_key FROM questions q
     JOIN clip_versions v ON v.id = q.clip_version_id JOIN clips c ON c.id = v.clip_id
     WHERE c.campaign_id = :campaign";
pub(crate) const INSERT_IMPORT: &str = "INSERT INTO imports (campaign_id, manifest, manifest_sha256, clips_new, versions_new, imported_at)
     VALUES (:campaign, :manifest, :sha256, :clips_new, :versions_new, :now) RETURNING id";
/// The versions an import replaces leave the queues.
pub(crate) const RETIRE_REPLACED: &str =
    "UPDATE items SET is_current = 0, queue1 = NULL, queue2 = NULL
     WHERE is_current = 1 AND clip_version_id IN
         (SELECT c.current_version_id FROM clips c JOIN clip_versions v ON v.clip_id = c.id
          WHERE v.import_id = :import)";
/// The clips an import brought a version of point at it.
pub(crate) const POINT_AT_NEW_VERSIONS: &str =
    "UPDATE clips SET current_version_id = (SELECT v.id FROM clip_versions v
                                            WHERE v.clip_id = clips.id AND v.import_id = :import)
     WHERE id IN (SELECT clip_id FROM clip_versions WHERE import_id = :import)";
/// The rows an import inserts, up to their `VALUES`.
pub(crate) const INSERT_CLIPS: &str =
    "INSERT INTO clips (campaign_id, task_id, clip_key, calibration)";
pub(crate) const INSERT_VERSIONS: &str = "INSERT INTO clip_versions (clip_id, version, media_sha256, media_type, media_size, source_file, fields, import_id, created_at,
                           fps, frame_count, constant_rate, timing_probed_at, copy_of)";
pub(crate) const INSERT_STAGE1: &str = "INSERT INTO items (campaign_id, task_id, stage, clip_version_id, item_key, clip_version, sort_key,
                          rater1_id, rater2_id, queue1, queue2, calibration, is_current, held)";
pub(crate) const INSERT_QUESTIONS: &str = "INSERT INTO questions (clip_version_id, position, question_key, qa_type, level, body, options, answer)";
pub(crate) const INSERT_STAGE2: &str =
    "INSERT INTO items (campaign_id, task_id, stage, clip_version_id, question_id, parent_item_id,
                          item_key, clip_version, qa_type, level, sort_key, calibration, is_current,
                          queue1, queue2, held, rater1_id, rater2_id)";

row! {
    /// A task as an import needs it.
    pub(crate) struct ImportTask {
        pub(crate) id: i64,
        pub(crate) code: String,
        pub(crate) position: i64,
        pub(crate) rater1_id: Option<i64>,
        pub(crate) rater2_id: Option<i64>,
    }
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
        if self.clip.is_calibration() {
            (None, None)
        } else if self.pair.0.is_some() {
            self.pair
        } else {
            (task.rater1_id, task.rater2_id)
        }
    }
}

row! {
/// A clip as stored, for an import to compare with.
pub(crate) struct KnownClip {
    pub(crate) id: i64,
    pub(crate) clip_key: String,
    pub(crate) task: String,
    pub(crate) media_sha256: String,
    pub(crate) fields: String,
    pub(crate) version: i64,
    // Its Stage 1 item's outcome; none without clip review.
    pub(crate) outcome: Option<String>,
    pub(crate) rater1_id: Option<i64>,
    pub(crate) rater2_id: Option<i64>,
}
}

/// The order items are reviewed in: by task, then clip, then question.
pub(crate) fn sort_key(task_position: i64, clip_key: &str, question: Option<i64>) -> String {
    match question {
        None => format!("{task_position:06}|{clip_key}"),
        Some(p) => format!("{task_position:06}|{clip_key}|{p:06}"),
    }
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
        // The manifest was checked against the protocol before this write; a protocol
        // changed since then is caught here.
        for (i, q) in clip.questions.iter().enumerate() {
            let field = format!("questions[{i}].qa_type");
            match campaign.taxonomy.qa_type(&q.qa_type) {
                Some(d) if campaign.taxonomy.applies(&clip.task, &q.qa_type) && d.level == q.level => {}
                _ => problems.push(LineError::new(
                    clip.line,
                    Some(&field),
                    format!(
                        "QA type `{}` at level {} is not a cell of task `{}` in campaign `{}`'s protocol (it changed since the manifest was checked: import it again)",
                        q.qa_type,
                        q.level.as_str(),
                        clip.task,
                        campaign.name
                    ),
                )),
            }
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
                if known
                    .earlier
                    .contains(&(clip.clip_id.clone(), clip.media.sha256.clone()))
                {
                    summary.unchanged += 1;
                    continue;
                }
                // Without clip review a clip is never rejected as a clip: its video
                // stays (a new video is a new clip, under a new id).
                let Some(outcome) = &k.outcome else {
                    problems.push(LineError::new(
                        clip.line,
                        Some("file"),
                        format!(
                            "clip `{}` has a new video, but campaign `{}`'s protocol reviews no clips (clip_review = false): a clip keeps its video; import a new one under a new clip_id",
                            clip.clip_id, campaign.name
                        ),
                    ));
                    continue;
                };
                // Only a clip rejected in Stage 1 gets a new version: one in review,
                // waiting for an author or retained keeps its video.
                if !Outcome::parse(outcome).is_some_and(Outcome::is_rejected) {
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

/// What the campaign's stored clips and questions use of its protocol.
async fn in_use(tx: &mut impl Tx, campaign_id: i64) -> Result<InUse> {
    let tasks = tx
        .fetch::<(String,)>(
            sql!(
                "SELECT DISTINCT t.code FROM clips c JOIN tasks t ON t.id = c.task_id
                 WHERE c.campaign_id = :campaign"
            ),
            named! { campaign: campaign_id },
        )
        .await?
        .into_iter()
        .map(|(code,)| code)
        .collect();
    let mut used = InUse {
        tasks,
        ..InUse::default()
    };
    for (task, qa, level) in tx
        .fetch::<(String, String, String)>(
            sql!(
                "SELECT DISTINCT t.code, q.qa_type, q.level
                 FROM questions q
                 JOIN clip_versions v ON v.id = q.clip_version_id
                 JOIN clips c ON c.id = v.clip_id
                 JOIN tasks t ON t.id = c.task_id
                 WHERE c.campaign_id = :campaign"
            ),
            named! { campaign: campaign_id },
        )
        .await?
    {
        if level.trim().is_empty() {
            return Err(Error::Internal(format!(
                "a stored question of QA type `{qa}` has no level"
            )));
        }
        let level = Level::new(&level);
        used.cells.insert((task, qa.clone()));
        used.levels.insert(qa, level);
    }
    for (stage, reasons) in tx
        .fetch::<(i64, String)>(
            sql!(
                "SELECT DISTINCT stage, reasons FROM decisions
                 WHERE campaign_id = :campaign AND reasons <> ''
                 UNION
                 SELECT DISTINCT i.stage, d.reasons FROM calibration_decisions d
                 JOIN items i ON i.id = d.item_id
                 WHERE d.campaign_id = :campaign AND d.reasons <> ''
                 UNION
                 SELECT DISTINCT i.stage, k.reasons FROM calibration_keys k
                 JOIN items i ON i.id = k.item_id
                 WHERE i.campaign_id = :campaign AND k.reasons <> ''"
            ),
            named! { campaign: campaign_id },
        )
        .await?
    {
        let stage = Stage::from_number(stage)
            .ok_or_else(|| Error::Internal(format!("a stored decision of stage {stage}")))?;
        for r in Reason::split_stored(&reasons).map_err(Error::Internal)? {
            used.reasons.insert((stage, r.as_str().to_string()));
        }
    }
    Ok(used)
}

/// Gives campaign `name` another protocol's taxonomy, when its stored records keep their
/// meaning under it (`domain::protocol::change_problems`, checked here, inside the write,
/// against what is stored now): the existing tasks' names and attributes follow it, new
/// tasks are added after them and paired. Refused whole otherwise, each problem named.
pub(crate) async fn change_protocol(
    tx: &mut impl Tx,
    name: &str,
    taxonomy: Taxonomy,
) -> Result<Campaign> {
    let campaign = base::existing_campaign(tx, name).await?;
    if *campaign.taxonomy == taxonomy {
        return Ok(campaign);
    }
    let used = in_use(tx, campaign.id).await?;
    let problems = change_problems(&campaign.taxonomy, &taxonomy, &used);
    if !problems.is_empty() {
        return Err(Error::Conflict(format!(
            "campaign `{name}` keeps its protocol, nothing was changed: {} problem{}\n  {}",
            problems.len(),
            if problems.len() == 1 { "" } else { "s" },
            problems.join("\n  ")
        )));
    }
    let json = serde_json::to_string(&taxonomy)
        .map_err(|e| Error::fault("taxonomy does not serialise", e))?;
    let version = campaign.protocol_version + 1;
    tx.exec(
        sql!(
            "UPDATE campaigns SET taxonomy = :taxonomy, revision = revision + 1,
                    protocol_version = :version
             WHERE id = :campaign"
        ),
        named! { taxonomy: &json, version, campaign: campaign.id },
    )
    .await?;
    base::keep_protocol(tx, campaign.id, version, &json).await?;
    // `change_problems` kept every existing task at its place: the new ones follow.
    let kept = campaign.taxonomy.tasks.len().min(taxonomy.tasks.len());
    let (existing, added) = taxonomy.tasks.split_at(kept);
    for t in existing {
        let attributes = serde_json::json!(t.all_attributes()).to_string();
        tx.exec(
            sql!(
                "UPDATE tasks SET name = :name, attributes = :attributes
                 WHERE campaign_id = :campaign AND code = :code"
            ),
            named! {
                name: &t.name,
                attributes: &attributes,
                campaign: campaign.id,
                code: &t.code,
            },
        )
        .await?;
    }
    base::insert_tasks(tx, campaign.id, added, kept).await?;
    gates::refresh_pairs(tx, campaign.id).await?;
    Ok(Campaign {
        taxonomy: Arc::new(taxonomy),
        revision: campaign.revision + 1,
        protocol_version: version,
        ..campaign
    })
}

/// Changes a campaign's targets and calibration rules (checked by the caller); the
/// gates follow the rules in the same write (a lower threshold can pass someone).
pub(crate) async fn set_settings(tx: &mut impl Tx, campaign_id: i64, s: &Settings) -> Result<()> {
    tx.exec(
        sql!(
            "UPDATE campaigns SET target_per_task = :target, calibration_threshold = :threshold,
                    calibration_min_items = :min_items, blind_key_check = :blind,
                    known_window = :window, known_rate = :rate, revision = revision + 1
             WHERE id = :campaign"
        ),
        named! {
            target: s.target_per_task,
            threshold: s.calibration_threshold,
            min_items: s.calibration_min_items,
            blind: i64::from(s.blind_key_check),
            window: s.known_window,
            rate: s.known_rate,
            campaign: campaign_id,
        },
    )
    .await?;
    gates::place_known(tx, campaign_id).await?;
    gates::refresh_gates(tx, campaign_id).await
}

/// Stores what the frame timing of a video is (none: it could not be read) on every
/// clip version showing it.
pub(crate) async fn set_frame_timing(
    tx: &mut impl Tx,
    sha256: &str,
    timing: Option<FrameTiming>,
) -> Result<()> {
    tx.exec(
        sql!(
            "UPDATE clip_versions SET fps = :fps, frame_count = :frames, constant_rate = :constant,
                    timing_probed_at = :now
             WHERE media_sha256 = :sha256"
        ),
        named! {
            fps: timing.map(|t| t.fps),
            // A frame count beyond i64 is not stored (no real video has one).
            frames: timing.and_then(|t| i64::try_from(t.frames).ok()),
            constant: timing.map(|t| i64::from(t.constant)),
            now: now_micros(),
            sha256,
        },
    )
    .await?;
    Ok(())
}

/// Overrides a task's pair (two validators of the pool, by name) or goes back to the
/// pool's default (`None`); returns the task's id. Items that already have a verdict
/// keep the pair that started them.
pub(crate) async fn set_pair(
    tx: &mut impl Tx,
    campaign: (i64, &str),
    task_code: &str,
    pair: Option<(&str, &str)>,
) -> Result<i64> {
    let (campaign_id, campaign_name) = campaign;
    if gates::pairing_of(tx, campaign_id).await? == Pairing::LeastOpenWork {
        return Err(Error::Conflict(format!(
            "campaign `{campaign_name}` pairs per clip, by least open work (its protocol's `pairing`): a task has no pair to set"
        )));
    }
    let task_id: i64 = tx
        .scalar_opt(
            sql!("SELECT id FROM tasks WHERE campaign_id = :campaign AND code = :code"),
            named! { campaign: campaign_id, code: task_code },
        )
        .await?
        .ok_or_else(|| {
            Error::NotFound(format!(
                "no task `{task_code}` in campaign `{campaign_name}`"
            ))
        })?;
    let ids = match pair {
        None => (None, None),
        Some((a, b)) => {
            let members: Vec<(String, i64)> = tx
                .fetch(
                    sql!(
                        "SELECT u.name, u.id FROM users u JOIN pool_members p ON p.user_id = u.id
                         WHERE p.campaign_id = :campaign AND (u.name = :a OR u.name = :b)"
                    ),
                    named! { campaign: campaign_id, a, b },
                )
                .await?;
            let id = |name: &str| {
                members
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, id)| *id)
                    .ok_or_else(|| {
                        // The pool, not the request's form, refuses: 409.
                        Error::Conflict(format!(
                            "`{name}` is not a validator in the pool of campaign `{campaign_name}`"
                        ))
                    })
            };
            (Some(id(a)?), Some(id(b)?))
        }
    };
    tx.exec(
        sql!("UPDATE tasks SET pair_rater1 = :rater1, pair_rater2 = :rater2 WHERE id = :task"),
        named! { rater1: ids.0, rater2: ids.1, task: task_id },
    )
    .await?;
    gates::refresh_pairs(tx, campaign_id).await?;
    Ok(task_id)
}

/// What the campaign holds that an import compares its manifest with: four reads.
async fn known(tx: &mut impl Tx, campaign_id: i64) -> Result<Known> {
    let tasks = tx
        .fetch::<ImportTask>(sql!(IMPORT_TASKS), named! { campaign: campaign_id })
        .await?
        .into_iter()
        .map(|t| (t.code.clone(), t))
        .collect();
    let clips = tx
        .fetch::<KnownClip>(sql!(IMPORT_KNOWN), named! { campaign: campaign_id })
        .await?
        .into_iter()
        .map(|k| (k.clip_key.clone(), k))
        .collect();
    let earlier = tx
        .fetch::<(String, String)>(sql!(IMPORT_EARLIER), named! { campaign: campaign_id })
        .await?
        .into_iter()
        .collect();
    let owners = tx
        .fetch::<(String, String)>(sql!(IMPORT_OWNERS), named! { campaign: campaign_id })
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

fn int(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Stores a checked manifest in `campaign_name` (made on first use), in the caller's
/// transaction: what it stored and the SHA-256 of the videos of the versions it added;
/// a refused manifest stores nothing (`Rejected`, every problem with its line and
/// field). Calibration clips' known verdicts are stored with them, and the gates follow.
pub(crate) async fn import_manifest(
    tx: &mut impl Tx,
    campaign_name: &str,
    manifest: &CheckedManifest,
) -> Result<(ImportSummary, HashSet<String>)> {
    let campaign = base::existing_campaign(tx, campaign_name).await?;
    let known = known(tx, campaign.id).await?;
    let (plans, summary) = plan_import(&campaign, manifest, &known)?;
    if plans.is_empty() {
        // Nothing new: leave the database exactly as it was.
        return Ok((summary, HashSet::new()));
    }
    let now = now_micros();
    let manifest_path = manifest.path.display().to_string();
    let import_id: i64 = tx
        .scalar(
            sql!(INSERT_IMPORT),
            named! {
                campaign: campaign.id,
                manifest: &manifest_path,
                sha256: &manifest.sha256,
                clips_new: int(summary.clips_new),
                versions_new: int(summary.versions_new),
                now,
            },
        )
        .await?;
    let mut placed = Placed {
        campaign: &campaign,
        known: &known,
        clip_pk: HashMap::new(),
        version_of: HashMap::new(),
        assigned: HashMap::new(),
    };
    insert_versions(tx, &mut placed, &plans, import_id, now).await?;
    // The versions they replace leave the queues.
    if summary.versions_new > 0 {
        tx.exec(sql!(RETIRE_REPLACED), named! { import: import_id })
            .await?;
    }
    tx.exec(sql!(POINT_AT_NEW_VERSIONS), named! { import: import_id })
        .await?;
    if campaign.taxonomy.pairing == Pairing::LeastOpenWork {
        placed.assigned = pair_new_clips(tx, &campaign, &plans).await?;
    }
    let (stage1, mut keys) = insert_clip_items(tx, &placed, &plans).await?;
    keys.extend(insert_questions(tx, &placed, &plans, &stage1).await?);
    if !keys.is_empty() {
        base::insert_keys(tx, &keys).await?;
        gates::refresh_gates(tx, campaign.id).await?;
    }
    // New real clips raise the known clips' share; new known clips may wait in reserve.
    gates::place_known(tx, campaign.id).await?;
    let stored = plans.iter().map(|p| p.clip.media.sha256.clone()).collect();
    Ok((summary, stored))
}

/// What an import's write has stored so far, for the rows that point at it.
struct Placed<'a> {
    campaign: &'a Campaign,
    known: &'a Known,
    /// Clip key -> clip id, the new clips' included.
    clip_pk: HashMap<String, i64>,
    /// Clip id -> the id of its version this import added.
    version_of: HashMap<i64, i64>,
    /// Paired per clip: each new clip that enters review now -> its two validators.
    assigned: HashMap<&'a str, (i64, i64)>,
}

impl Placed<'_> {
    fn task(&self, code: &str) -> Result<&ImportTask> {
        self.known
            .tasks
            .get(code)
            .ok_or_else(|| Error::Internal(format!("task `{code}` vanished")))
    }

    fn clip_id(&self, p: &Plan<'_>) -> i64 {
        self.clip_pk.get(&p.clip.clip_id).copied().unwrap_or(0)
    }

    fn version_id(&self, p: &Plan<'_>) -> i64 {
        self.version_of.get(&self.clip_id(p)).copied().unwrap_or(0)
    }
}

/// A new clip of a stratum reviewed by sample waits for its lot's draw (a new version
/// goes back to the pair that rejected the one before).
fn held_clip(campaign: &Campaign, p: &Plan<'_>) -> bool {
    p.clip.kind() == ItemKind::Real
        && p.clip_pk.is_none()
        && rule_for(&campaign.taxonomy.sampling, Stage::Clip, &p.clip.task, None).is_some()
}

/// A question of a stratum reviewed by sample waits for its lot's draw too.
fn held_question(campaign: &Campaign, p: &Plan<'_>, qu: &ManifestQuestion) -> bool {
    p.clip.question_kind(qu) == ItemKind::Real
        && rule_for(
            &campaign.taxonomy.sampling,
            Stage::Question,
            &p.clip.task,
            Some(&qu.qa_type),
        )
        .is_some()
}

/// The new clips, then every clip's new version (with the timing read when its video
/// was taken in).
async fn insert_versions(
    tx: &mut impl Tx,
    placed: &mut Placed<'_>,
    plans: &[Plan<'_>],
    import_id: i64,
    now: i64,
) -> Result<()> {
    placed.clip_pk = plans
        .iter()
        .filter_map(|p| p.clip_pk.map(|pk| (p.clip.clip_id.clone(), pk)))
        .collect();
    let mut rows: Vec<Vec<Value<'_>>> = Vec::new();
    for p in plans.iter().filter(|p| p.clip_pk.is_none()) {
        rows.push(vec![
            placed.campaign.id.into(),
            placed.task(&p.clip.task)?.id.into(),
            p.clip.clip_id.as_str().into(),
            p.clip.kind().stored().into(),
        ]);
    }
    for (id, key) in tx
        .insert_rows::<(i64, String)>(INSERT_CLIPS, "id, clip_key", &rows)
        .await?
    {
        placed.clip_pk.insert(key, id);
    }
    let sizes: Vec<i64> = plans
        .iter()
        .map(|p| i64::try_from(p.clip.media.size).unwrap_or(i64::MAX))
        .collect();
    let rows: Vec<Vec<Value<'_>>> = plans
        .iter()
        .zip(&sizes)
        .map(|(p, size)| {
            // The timing read when the video was taken in (none: asked later).
            let (fps, frames, constant, probed) = match p.clip.timing {
                TimingRead::Read(t) => (
                    Some(t.fps),
                    // A frame count beyond i64 is not stored (no real video has one).
                    i64::try_from(t.frames).ok(),
                    Some(i64::from(t.constant)),
                    Some(now),
                ),
                TimingRead::Unreadable => (None, None, None, Some(now)),
                TimingRead::NotTried => (None, None, None, None),
            };
            vec![
                placed.clip_id(p).into(),
                p.version.into(),
                p.clip.media.sha256.as_str().into(),
                p.clip.media.media_type.into(),
                (*size).into(),
                p.clip.file.as_str().into(),
                p.clip.fields.as_str().into(),
                import_id.into(),
                now.into(),
                fps.into(),
                frames.into(),
                constant.into(),
                probed.into(),
                p.clip.copy_of.into(),
            ]
        })
        .collect();
    placed.version_of = tx
        .insert_rows::<(i64, i64)>(INSERT_VERSIONS, "id, clip_id", &rows)
        .await?
        .into_iter()
        .map(|(id, clip)| (clip, id))
        .collect();
    Ok(())
}

/// Pairing per clip: each new clip that enters review now goes to the two validators
/// with the least open work, counting what this import gives them.
async fn pair_new_clips<'m>(
    tx: &mut impl Tx,
    campaign: &Campaign,
    plans: &[Plan<'m>],
) -> Result<HashMap<&'m str, (i64, i64)>> {
    let clip_review = campaign.taxonomy.clip_review;
    let mut assigned = HashMap::new();
    let mut pool = gates::open_work(tx, campaign.id).await?;
    for p in plans
        .iter()
        .filter(|p| p.clip_pk.is_none() && !p.clip.is_calibration())
    {
        let weight = if clip_review {
            i64::from(!held_clip(campaign, p))
        } else {
            int(p
                .clip
                .questions
                .iter()
                .filter(|q| !held_question(campaign, p, q))
                .count())
        };
        if weight > 0
            && let Some(pair) = least_open_work(&mut pool, weight)
        {
            assigned.insert(p.clip.clip_id.as_str(), pair);
        }
    }
    Ok(assigned)
}

/// Stage 1 items: in the queue of the pair that reviewed the rejected version, or of
/// the task's pair in force; calibration items in no queue. None without clip review.
/// Gives version id -> item id, and the known verdicts of calibration and known clips.
async fn insert_clip_items<'m>(
    tx: &mut impl Tx,
    placed: &Placed<'_>,
    plans: &[Plan<'m>],
) -> Result<(HashMap<i64, i64>, Vec<(i64, &'m CheckedVerdict)>)> {
    let reviewed: &[Plan<'_>] = if placed.campaign.taxonomy.clip_review {
        plans
    } else {
        &[]
    };
    let mut sort_keys: Vec<String> = Vec::with_capacity(reviewed.len());
    for p in reviewed {
        sort_keys.push(sort_key(
            placed.task(&p.clip.task)?.position,
            &p.clip.clip_id,
            None,
        ));
    }
    let mut rows: Vec<Vec<Value<'_>>> = Vec::with_capacity(reviewed.len());
    for (p, key) in reviewed.iter().zip(&sort_keys) {
        let t = placed.task(&p.clip.task)?;
        let held = held_clip(placed.campaign, p);
        let pair = placed
            .assigned
            .get(p.clip.clip_id.as_str())
            .map_or(p.pair, |&(a, b)| (Some(a), Some(b)));
        let queue = if held {
            (None, None)
        } else if pair.0.is_some() && !p.clip.is_calibration() {
            pair
        } else {
            p.queue(t)
        };
        rows.push(vec![
            placed.campaign.id.into(),
            t.id.into(),
            1i64.into(),
            placed.version_id(p).into(),
            p.clip.clip_id.as_str().into(),
            p.version.into(),
            key.as_str().into(),
            pair.0.into(),
            pair.1.into(),
            queue.0.into(),
            queue.1.into(),
            p.clip.kind().stored().into(),
            1i64.into(),
            i64::from(held).into(),
        ]);
    }
    let stage1: HashMap<i64, i64> = tx
        .insert_rows::<(i64, i64)>(INSERT_STAGE1, "id, clip_version_id", &rows)
        .await?
        .into_iter()
        .map(|(id, version)| (version, id))
        .collect();
    let mut keys = Vec::new();
    for p in plans {
        if let Some(key) = p.clip.calibration.as_ref().or(p.clip.known.as_ref())
            && let Some(item) = stage1.get(&placed.version_id(p))
        {
            keys.push((*item, key));
        }
    }
    Ok((stage1, keys))
}

/// Questions, and their Stage 2 items: in no queue until the clip is retained, or,
/// without clip review, in the queue of the task's pair at once. Gives the known
/// verdicts of calibration and known questions.
async fn insert_questions<'m>(
    tx: &mut impl Tx,
    placed: &Placed<'_>,
    plans: &[Plan<'m>],
    stage1: &HashMap<i64, i64>,
) -> Result<Vec<(i64, &'m CheckedVerdict)>> {
    let clip_review = placed.campaign.taxonomy.clip_review;
    let questions: Vec<(&Plan<'m>, usize, &'m ManifestQuestion)> = plans
        .iter()
        .flat_map(|p| {
            p.clip
                .questions
                .iter()
                .enumerate()
                .map(move |(i, q)| (p, i, q))
        })
        .collect();
    let mut options: Vec<String> = Vec::with_capacity(questions.len());
    for (_, _, qu) in &questions {
        options.push(
            serde_json::to_string(&qu.options)
                .map_err(|e| Error::fault("options do not serialise", e))?,
        );
    }
    let rows: Vec<Vec<Value<'_>>> = questions
        .iter()
        .zip(&options)
        .map(|((p, i, qu), options)| {
            vec![
                placed.version_id(p).into(),
                int(*i).into(),
                qu.question_id.as_str().into(),
                qu.qa_type.as_str().into(),
                qu.level.as_str().into(),
                qu.question.as_str().into(),
                options.as_str().into(),
                int(qu.answer).into(),
            ]
        })
        .collect();
    let question_id: HashMap<(i64, i64), i64> = tx
        .insert_rows::<(i64, i64, i64)>(INSERT_QUESTIONS, "id, clip_version_id, position", &rows)
        .await?
        .into_iter()
        .map(|(id, version, position)| ((version, position), id))
        .collect();
    let qid = |p: &Plan<'_>, i: usize| {
        question_id
            .get(&(placed.version_id(p), int(i)))
            .copied()
            .unwrap_or(0)
    };
    let mut sort_keys: Vec<String> = Vec::with_capacity(questions.len());
    for (p, i, _) in &questions {
        sort_keys.push(sort_key(
            placed.task(&p.clip.task)?.position,
            &p.clip.clip_id,
            Some(int(*i)),
        ));
    }
    let mut rows: Vec<Vec<Value<'_>>> = Vec::with_capacity(questions.len());
    for ((p, i, qu), key) in questions.iter().zip(&sort_keys) {
        // Held for a sample when its stratum is reviewed by sample: it opens (when its
        // clip is retained, or at once without clip review) only when its lot is drawn.
        let held = held_question(placed.campaign, p, qu);
        let task = placed.task(&p.clip.task)?;
        let queue = if clip_review || held {
            (None, None)
        } else {
            p.queue(task)
        };
        // Without clip review, a clip paired per clip fixes its questions' pair.
        let (pair, queue) = match placed.assigned.get(p.clip.clip_id.as_str()) {
            Some(&(a, b)) if !clip_review && !held => ((Some(a), Some(b)), (Some(a), Some(b))),
            _ => ((None, None), queue),
        };
        rows.push(vec![
            placed.campaign.id.into(),
            task.id.into(),
            2i64.into(),
            placed.version_id(p).into(),
            qid(p, *i).into(),
            stage1.get(&placed.version_id(p)).copied().into(),
            qu.question_id.as_str().into(),
            p.version.into(),
            qu.qa_type.as_str().into(),
            qu.level.as_str().into(),
            key.as_str().into(),
            p.clip.question_kind(qu).stored().into(),
            1i64.into(),
            queue.0.into(),
            queue.1.into(),
            i64::from(held).into(),
            pair.0.into(),
            pair.1.into(),
        ]);
    }
    let question_item: HashMap<i64, i64> = tx
        .insert_rows::<(i64, i64)>(INSERT_STAGE2, "id, question_id", &rows)
        .await?
        .into_iter()
        .map(|(id, question)| (question, id))
        .collect();
    let mut keys = Vec::new();
    for (p, i, qu) in &questions {
        if let Some(key) = qu.calibration.as_ref().or(qu.known.as_ref())
            && let Some(item) = question_item.get(&qid(p, *i))
        {
            keys.push((*item, key));
        }
    }
    Ok(keys)
}

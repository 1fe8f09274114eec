//! The blind study: its comparison sets, each participant's stored order with opaque
//! clip tokens, their answers, and responses brought in from an earlier study.
//!
//! Blinding lives here: a participant's pages and clip URLs are built only from what
//! these methods return for them (positions, letters and random tokens), never from a
//! set id, clip id, source, file name or import position.

use super::catalog::{Campaign, ensure_campaign_in};
use super::{Conn, Store, col, conn};
use crate::clock::now_micros;
use crate::domain::Role;
use crate::domain::facts::{ResponseFact, StudyClipFact, StudyData};
use crate::domain::import::{CheckedSets, ResponseRow};
use crate::domain::study::{
    Axis, Display, RANK_AXES, SetAnswer, Truth, check_ranking, label, participant_order,
};
use crate::error::{Error, LineError, Rejected, Result};
use crate::store::accounts::User;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};

/// A campaign's study.
#[derive(Debug, Clone, Serialize)]
pub struct Study {
    pub id: i64,
    pub campaign_id: i64,
    /// The declared sources, in table order.
    pub sources: Vec<String>,
    pub display: Display,
    /// K, the frames of a strip.
    pub frames: i64,
    pub seed: i64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct StudyImportSummary {
    pub sets_new: usize,
    pub sets_known: usize,
    pub clips_new: usize,
    /// Whether the served copies had their metadata removed (ffmpeg was there).
    pub metadata_removed: bool,
}

impl std::fmt::Display for StudyImportSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} new set(s) with {} clip(s), {} set(s) already there",
            self.sets_new, self.clips_new, self.sets_known
        )
    }
}

/// A participant's place in the study.
#[derive(Debug, Clone, Serialize)]
pub struct StudyProgress {
    pub total: i64,
    pub answered: i64,
    /// The first set (1-based position in this participant's order) not answered yet.
    pub next: Option<i64>,
}

/// One clip as a participant sees it: a letter and an opaque token.
#[derive(Debug, Clone, Serialize)]
pub struct ShownClip {
    pub label: String,
    pub token: String,
}

/// One set as a participant sees it.
#[derive(Debug, Clone, Serialize)]
pub struct ShownSet {
    pub position: i64,
    pub total: i64,
    pub answered_sets: i64,
    /// The first set of this participant's order not answered yet.
    pub next: Option<i64>,
    pub clips: Vec<ShownClip>,
    /// This participant's own answer, once given.
    pub answer: Option<SetAnswer>,
}

/// A clip file behind a participant's token.
#[derive(Debug, Clone)]
pub struct StudyMedia {
    pub participant_id: i64,
    pub sha256: String,
    pub media_type: String,
    pub frames: i64,
}

/// A participant's progress, for the admin.
#[derive(Debug, Clone, Serialize)]
pub struct ParticipantProgress {
    pub name: String,
    pub answered: i64,
    pub total: i64,
    /// Answers of theirs that came from a file.
    pub imported: bool,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ResponsesSummary {
    pub added: usize,
    pub already_there: usize,
    pub participants: usize,
}

impl std::fmt::Display for ResponsesSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} response(s) added from {} participant(s), {} already there",
            self.added, self.participants, self.already_there
        )
    }
}

fn study_of(row: &sqlx::any::AnyRow) -> Result<Study> {
    let sources: String = col(row, "sources")?;
    let display: String = col(row, "display_mode")?;
    Ok(Study {
        id: col(row, "id")?,
        campaign_id: col(row, "campaign_id")?,
        sources: serde_json::from_str(&sources)
            .map_err(|e| Error::Internal(format!("stored sources are not JSON: {e}")))?,
        display: Display::parse(&display).map_err(Error::Internal)?,
        frames: col(row, "strip_frames")?,
        seed: col(row, "seed")?,
    })
}

async fn study_in(c: &mut Conn, campaign_id: i64) -> Result<Option<Study>> {
    let row = sqlx::query(
        "SELECT id, campaign_id, sources, display_mode, strip_frames, seed FROM studies WHERE campaign_id = $1",
    )
    .bind(campaign_id)
    .fetch_optional(&mut *c)
    .await?;
    row.as_ref().map(study_of).transpose()
}

async fn started_in(c: &mut Conn, study_id: i64) -> Result<bool> {
    let n: i64 = sqlx::query_scalar(
        "SELECT (SELECT COUNT(*) FROM study_orders WHERE study_id = $1)
              + (SELECT COUNT(*) FROM study_responses WHERE study_id = $1)",
    )
    .bind(study_id)
    .fetch_one(&mut *c)
    .await?;
    Ok(n > 0)
}

impl Store {
    pub async fn study(&self, campaign: &Campaign) -> Result<Option<Study>> {
        study_in(&mut *conn(self).await?, campaign.id).await
    }

    /// The campaign's study, or a clear error when it has none.
    pub async fn require_study(&self, campaign: &Campaign) -> Result<Study> {
        self.study(campaign).await?.ok_or_else(|| {
            Error::NotFound(format!(
                "campaign `{}` has no study yet; import its comparison sets first (`tandem study import SETS.jsonl`)",
                campaign.name
            ))
        })
    }

    /// Stores checked comparison sets, all or nothing, with the copies participants
    /// receive (prepared by `app::import_study`). A set already in the study with the
    /// same clips changes nothing; new sets are refused once participants have begun.
    /// `display` sets how clips are shown.
    pub async fn import_study(
        &self,
        campaign_name: &str,
        sets: &CheckedSets,
        prepared: &[crate::domain::import::ServedCopy],
        display: Option<(Display, i64)>,
    ) -> Result<(StudyImportSummary, Study)> {
        let what = format!("study sets file {}", sets.path.display());
        let mut tx = self.begin_write().await?;
        let campaign = ensure_campaign_in(&mut tx, campaign_name).await?;
        let study = match study_in(&mut tx, campaign.id).await? {
            Some(s) => s,
            None => {
                let mut seed = [0u8; 8];
                crate::auth::random_bytes(&mut seed)?;
                let seed = i64::from_le_bytes(seed) & i64::MAX;
                let sources = serde_json::to_string(&sets.sources)
                    .map_err(|e| Error::Internal(format!("sources do not serialise: {e}")))?;
                sqlx::query(
                    "INSERT INTO studies (campaign_id, sources, seed, created_at) VALUES ($1, $2, $3, $4)",
                )
                .bind(campaign.id)
                .bind(sources)
                .bind(seed)
                .bind(now_micros())
                .execute(&mut *tx)
                .await?;
                study_in(&mut tx, campaign.id)
                    .await?
                    .ok_or_else(|| Error::Internal("the new study is not there".into()))?
            }
        };
        let mut problems = Vec::new();
        if study.sources != sets.sources {
            problems.push(LineError::new(
                1,
                Some("clips"),
                format!(
                    "the study compares the sources {}; this file has {}",
                    study.sources.join(", "),
                    sets.sources.join(", ")
                ),
            ));
        }
        // What is stored already: set -> its clips (clip id, source, truth, file hash).
        let rows = sqlx::query(
            "SELECT s.set_key, c.clip_key, c.source, c.truth, c.source_sha256
             FROM study_sets s JOIN study_clips c ON c.set_id = s.id WHERE s.study_id = $1",
        )
        .bind(study.id)
        .fetch_all(&mut *tx)
        .await?;
        let mut stored: HashMap<String, Vec<(String, String, String, String)>> = HashMap::new();
        let mut stored_clips: HashMap<String, String> = HashMap::new();
        for r in &rows {
            let set: String = col(r, "set_key")?;
            let clip: String = col(r, "clip_key")?;
            stored_clips.insert(clip.clone(), set.clone());
            stored.entry(set).or_default().push((
                clip,
                col(r, "source")?,
                col(r, "truth")?,
                col(r, "source_sha256")?,
            ));
        }
        let mut new_sets = Vec::new();
        let mut summary = StudyImportSummary::default();
        for set in &sets.sets {
            let mut mine: Vec<(String, String, String, String)> = set
                .clips
                .iter()
                .map(|c| {
                    (
                        c.clip_id.clone(),
                        c.source.clone(),
                        c.truth.as_str().to_string(),
                        c.media.sha256.clone(),
                    )
                })
                .collect();
            match stored.get_mut(&set.set_id) {
                Some(theirs) => {
                    theirs.sort();
                    mine.sort();
                    if *theirs == mine {
                        summary.sets_known += 1;
                    } else {
                        problems.push(LineError::new(
                            set.line,
                            Some("clips"),
                            format!(
                                "set `{}` is already in the study with other clips, sources, truths or files; a set cannot change",
                                set.set_id
                            ),
                        ));
                    }
                }
                None => {
                    for c in &set.clips {
                        if let Some(other) = stored_clips.get(&c.clip_id) {
                            problems.push(LineError::new(
                                set.line,
                                Some("clips"),
                                format!(
                                    "clip `{}` is already in the study, in set `{other}`",
                                    c.clip_id
                                ),
                            ));
                        }
                    }
                    new_sets.push(set);
                }
            }
        }
        if !new_sets.is_empty() && problems.is_empty() && started_in(&mut tx, study.id).await? {
            problems.push(LineError::new(
                new_sets[0].line,
                Some("set_id"),
                format!(
                    "the study has begun (participants have orders or answers), so no set can be added; `{}` is new",
                    new_sets[0].set_id
                ),
            ));
        }
        if !problems.is_empty() {
            return Err(Error::Rejected(Rejected { what, problems }));
        }
        let served: HashMap<&str, &crate::domain::import::ServedCopy> =
            prepared.iter().map(|p| (p.clip_key.as_str(), p)).collect();
        let mut position: i64 = sqlx::query_scalar(
            "SELECT CAST(COALESCE(MAX(position), 0) AS BIGINT) FROM study_sets WHERE study_id = $1",
        )
        .bind(study.id)
        .fetch_one(&mut *tx)
        .await?;
        for set in new_sets {
            position += 1;
            let set_id: i64 = sqlx::query_scalar(
                "INSERT INTO study_sets (study_id, set_key, position) VALUES ($1, $2, $3) RETURNING id",
            )
            .bind(study.id)
            .bind(&set.set_id)
            .bind(position)
            .fetch_one(&mut *tx)
            .await?;
            for c in &set.clips {
                let p = served.get(c.clip_id.as_str()).ok_or_else(|| {
                    Error::Internal(format!("no served copy of clip {}", c.clip_id))
                })?;
                sqlx::query(
                    "INSERT INTO study_clips (study_id, set_id, clip_key, source, truth, source_file,
                         source_sha256, media_sha256, media_type, media_size)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                )
                .bind(study.id)
                .bind(set_id)
                .bind(&c.clip_id)
                .bind(&c.source)
                .bind(c.truth.as_str())
                .bind(&c.file)
                .bind(&c.media.sha256)
                .bind(&p.sha256)
                .bind(&p.media_type)
                .bind(p.size)
                .execute(&mut *tx)
                .await?;
                summary.clips_new += 1;
            }
            summary.sets_new += 1;
        }
        if let Some((d, k)) = display {
            sqlx::query("UPDATE studies SET display_mode = $1, strip_frames = $2 WHERE id = $3")
                .bind(d.as_str())
                .bind(k)
                .bind(study.id)
                .execute(&mut *tx)
                .await?;
        }
        let study = study_in(&mut tx, campaign.id)
            .await?
            .ok_or_else(|| Error::Internal("the study is not there".into()))?;
        tx.commit().await?;
        Ok((summary, study))
    }

    /// The videos a study shows (their SHA-256), for drawing its strips.
    pub async fn study_media_hashes(&self, study: &Study) -> Result<Vec<String>> {
        Ok(sqlx::query_scalar(
            "SELECT DISTINCT media_sha256 FROM study_clips WHERE study_id = $1 ORDER BY 1",
        )
        .bind(study.id)
        .fetch_all(self.pool())
        .await?)
    }

    /// Sets how clips are shown (the strips must be drawn before: `app::set_study_display`).
    pub async fn set_study_display(
        &self,
        study: &Study,
        display: Display,
        frames: i64,
    ) -> Result<()> {
        let mut tx = self.begin_write().await?;
        sqlx::query("UPDATE studies SET display_mode = $1, strip_frames = $2 WHERE id = $3")
            .bind(display.as_str())
            .bind(frames)
            .bind(study.id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Draws this participant's order if it has not been drawn yet.
    async fn ensure_order(&self, study: &Study, user: &User) -> Result<()> {
        let have: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM study_orders WHERE study_id = $1 AND participant_id = $2",
        )
        .bind(study.id)
        .bind(user.id)
        .fetch_one(self.pool())
        .await?;
        if have > 0 {
            return Ok(());
        }
        let mut tx = self.begin_write().await?;
        let have: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM study_orders WHERE study_id = $1 AND participant_id = $2",
        )
        .bind(study.id)
        .bind(user.id)
        .fetch_one(&mut *tx)
        .await?;
        if have > 0 {
            return Ok(());
        }
        // Sets in import order, each with its clips in source order: the draw below
        // shuffles both, from the study's seed and the participant.
        let rows = sqlx::query(
            "SELECT s.id AS set_id, c.id AS clip_id, c.source
             FROM study_sets s JOIN study_clips c ON c.set_id = s.id
             WHERE s.study_id = $1 ORDER BY s.position, c.id",
        )
        .bind(study.id)
        .fetch_all(&mut *tx)
        .await?;
        let mut sets: Vec<(i64, Vec<(String, i64)>)> = Vec::new();
        for r in &rows {
            let set_id: i64 = col(r, "set_id")?;
            if sets.last().map(|s| s.0) != Some(set_id) {
                sets.push((set_id, Vec::new()));
            }
            if let Some(last) = sets.last_mut() {
                last.1.push((col(r, "source")?, col(r, "clip_id")?));
            }
        }
        for (_, clips) in &mut sets {
            clips.sort_by_key(|(source, _)| study.sources.iter().position(|s| s == source));
        }
        let n = study.sources.len();
        let order = participant_order(study.seed as u64, user.id, sets.len(), n);
        for (pos, (set_index, slots)) in order.into_iter().enumerate() {
            let (set_id, clips) = &sets[set_index];
            let order_id: i64 = sqlx::query_scalar(
                "INSERT INTO study_orders (study_id, participant_id, set_id, position)
                 VALUES ($1, $2, $3, $4) RETURNING id",
            )
            .bind(study.id)
            .bind(user.id)
            .bind(set_id)
            .bind(i64::try_from(pos + 1).unwrap_or(i64::MAX))
            .fetch_one(&mut *tx)
            .await?;
            for (slot, &k) in slots.iter().enumerate() {
                let Some((_, clip_id)) = clips.get(k) else {
                    return Err(Error::Internal(format!(
                        "a set holds {} clips where the study has {n} sources",
                        clips.len()
                    )));
                };
                sqlx::query(
                    "INSERT INTO study_views (order_id, clip_id, slot, token) VALUES ($1, $2, $3, $4)",
                )
                .bind(order_id)
                .bind(clip_id)
                .bind(i64::try_from(slot).unwrap_or(i64::MAX))
                .bind(crate::auth::random_id(16)?)
                .execute(&mut *tx)
                .await?;
            }
        }
        tx.commit().await?;
        Ok(())
    }

    /// Which sets of this participant's order are answered: a set counts as answered
    /// when they have given any response on its clips.
    async fn answered_positions(&self, study: &Study, user: &User) -> Result<Vec<(i64, bool)>> {
        let rows = sqlx::query(
            "SELECT o.position,
                    CASE WHEN EXISTS (SELECT 1 FROM study_responses r JOIN study_clips c ON c.id = r.clip_id
                            WHERE r.participant_id = o.participant_id AND c.set_id = o.set_id)
                    THEN 1 ELSE 0 END AS done
             FROM study_orders o WHERE o.study_id = $1 AND o.participant_id = $2
             ORDER BY o.position",
        )
        .bind(study.id)
        .bind(user.id)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| Ok((col(r, "position")?, col::<i64>(r, "done")? != 0)))
            .collect()
    }

    /// A participant's progress, drawing their order on their first visit.
    pub async fn study_progress(&self, study: &Study, user: &User) -> Result<StudyProgress> {
        self.ensure_order(study, user).await?;
        let done = self.answered_positions(study, user).await?;
        Ok(StudyProgress {
            total: i64::try_from(done.len()).unwrap_or(i64::MAX),
            answered: i64::try_from(done.iter().filter(|d| d.1).count()).unwrap_or(i64::MAX),
            next: done.iter().find(|d| !d.1).map(|d| d.0),
        })
    }

    /// A participant's progress without drawing their order: listing the studies has
    /// no side effect (a drawn order marks the study begun and freezes its sets).
    pub async fn study_overview(&self, study: &Study, user: &User) -> Result<StudyProgress> {
        let drawn: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM study_orders WHERE study_id = $1 AND participant_id = $2",
        )
        .bind(study.id)
        .bind(user.id)
        .fetch_one(self.pool())
        .await?;
        if drawn > 0 {
            return self.study_progress(study, user).await;
        }
        let (sets, _) = self.study_size(study).await?;
        Ok(StudyProgress {
            total: sets,
            answered: 0,
            next: (sets > 0).then_some(1),
        })
    }

    /// The set at `position` of this participant's order, as they see it.
    pub async fn study_set(&self, study: &Study, user: &User, position: i64) -> Result<ShownSet> {
        let progress = self.study_progress(study, user).await?;
        let rows = sqlx::query(
            "SELECT v.slot, v.token, v.clip_id FROM study_orders o JOIN study_views v ON v.order_id = o.id
             WHERE o.study_id = $1 AND o.participant_id = $2 AND o.position = $3 ORDER BY v.slot",
        )
        .bind(study.id)
        .bind(user.id)
        .bind(position)
        .fetch_all(self.pool())
        .await?;
        if rows.is_empty() {
            return Err(Error::NotFound(format!(
                "there is no set {position}; the study has {} sets",
                progress.total
            )));
        }
        let mut clips = Vec::new();
        let mut clip_ids = Vec::new();
        for r in &rows {
            let slot: i64 = col(r, "slot")?;
            clips.push(ShownClip {
                label: label(usize::try_from(slot).unwrap_or(0)),
                token: col(r, "token")?,
            });
            clip_ids.push(col::<i64>(r, "clip_id")?);
        }
        let answer = stored_answer(&mut *conn(self).await?, user.id, &clip_ids).await?;
        Ok(ShownSet {
            position,
            total: progress.total,
            answered_sets: progress.answered,
            next: progress.next,
            clips,
            answer,
        })
    }

    /// Records a participant's answer to the set at `position`, in one transaction.
    /// The same answer sent again records nothing more; a different one is refused
    /// (answers are final).
    pub async fn answer_study_set(
        &self,
        study: &Study,
        user: &User,
        position: i64,
        answer: &SetAnswer,
    ) -> Result<()> {
        self.ensure_order(study, user).await?;
        let mut tx = self.begin_write().await?;
        let clip_ids: Vec<i64> = sqlx::query_scalar(
            "SELECT v.clip_id FROM study_orders o JOIN study_views v ON v.order_id = o.id
             WHERE o.study_id = $1 AND o.participant_id = $2 AND o.position = $3 ORDER BY v.slot",
        )
        .bind(study.id)
        .bind(user.id)
        .bind(position)
        .fetch_all(&mut *tx)
        .await?;
        if clip_ids.is_empty() {
            return Err(Error::NotFound(format!("there is no set {position}")));
        }
        let problems = answer.problems(clip_ids.len());
        if !problems.is_empty() {
            return Err(Error::Invalid(problems.join("\n")));
        }
        if let Some(before) = stored_answer(&mut tx, user.id, &clip_ids).await? {
            if before == *answer {
                return Ok(());
            }
            return Err(Error::Conflict(format!(
                "set {position} is already answered; answers are final"
            )));
        }
        let now = now_micros();
        for (slot, clip_id) in clip_ids.iter().enumerate() {
            let mut values: Vec<(Axis, String)> = RANK_AXES
                .iter()
                .zip(&answer.ranks)
                .filter_map(|(axis, ranks)| ranks[slot].map(|r| (*axis, r.to_string())))
                .collect();
            if let Some(t) = answer.labels[slot] {
                values.push((Axis::RealFake, t.as_str().to_string()));
            }
            for (axis, value) in values {
                insert_response(
                    &mut tx, study.id, user.id, *clip_id, axis, &value, "web", now,
                )
                .await?;
            }
        }
        tx.commit().await?;
        Ok(())
    }

    /// The file behind a participant's clip token.
    pub async fn study_media(&self, token: &str) -> Result<Option<StudyMedia>> {
        let row = sqlx::query(
            "SELECT o.participant_id, c.media_sha256, c.media_type, s.strip_frames
             FROM study_views v JOIN study_orders o ON o.id = v.order_id
             JOIN study_clips c ON c.id = v.clip_id JOIN studies s ON s.id = o.study_id
             WHERE v.token = $1",
        )
        .bind(token)
        .fetch_optional(self.pool())
        .await?;
        row.map(|r| {
            Ok(StudyMedia {
                participant_id: col(&r, "participant_id")?,
                sha256: col(&r, "media_sha256")?,
                media_type: col(&r, "media_type")?,
                frames: col(&r, "strip_frames")?,
            })
        })
        .transpose()
    }

    /// Sets and clips in the study.
    pub async fn study_size(&self, study: &Study) -> Result<(i64, i64)> {
        let row = sqlx::query(
            "SELECT (SELECT COUNT(*) FROM study_sets WHERE study_id = $1) AS sets,
                    (SELECT COUNT(*) FROM study_clips WHERE study_id = $1) AS clips",
        )
        .bind(study.id)
        .fetch_one(self.pool())
        .await?;
        Ok((col(&row, "sets")?, col(&row, "clips")?))
    }

    /// Every participant with an order or answers, and how far they are.
    pub async fn study_participants(&self, study: &Study) -> Result<Vec<ParticipantProgress>> {
        let (sets, _) = self.study_size(study).await?;
        let rows = sqlx::query(
            "SELECT u.name,
                    (SELECT COUNT(DISTINCT c.set_id) FROM study_responses r JOIN study_clips c ON c.id = r.clip_id
                      WHERE r.participant_id = u.id AND r.study_id = $1) AS answered,
                    (SELECT COUNT(*) FROM study_responses r
                      WHERE r.participant_id = u.id AND r.study_id = $1 AND r.origin = 'import') AS imported
             FROM users u
             WHERE u.id IN (SELECT participant_id FROM study_orders WHERE study_id = $1
                            UNION SELECT participant_id FROM study_responses WHERE study_id = $1)
             ORDER BY u.name",
        )
        .bind(study.id)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(ParticipantProgress {
                    name: col(r, "name")?,
                    answered: col(r, "answered")?,
                    total: sets,
                    imported: col::<i64>(r, "imported")? > 0,
                })
            })
            .collect()
    }

    /// The raw material of Tables 14 and 15.
    pub async fn study_data(&self, study: &Study) -> Result<StudyData> {
        let mut c = conn(self).await?;
        let clips = sqlx::query(
            "SELECT c.id, c.set_id, s.set_key, c.clip_key, c.source, c.truth
             FROM study_clips c JOIN study_sets s ON s.id = c.set_id
             WHERE c.study_id = $1 ORDER BY s.position, c.id",
        )
        .bind(study.id)
        .fetch_all(&mut *c)
        .await?
        .iter()
        .map(|r| {
            let truth: String = col(r, "truth")?;
            Ok(StudyClipFact {
                id: col(r, "id")?,
                set_id: col(r, "set_id")?,
                set_key: col(r, "set_key")?,
                clip_key: col(r, "clip_key")?,
                source: col(r, "source")?,
                truth: Truth::parse(&truth).map_err(Error::Internal)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
        let responses = sqlx::query(
            "SELECT u.name, r.clip_id, r.axis, r.value FROM study_responses r JOIN users u ON u.id = r.participant_id
             WHERE r.study_id = $1 ORDER BY r.id",
        )
        .bind(study.id)
        .fetch_all(&mut *c)
        .await?
        .iter()
        .map(|r| {
            let axis: String = col(r, "axis")?;
            Ok(ResponseFact {
                participant: col(r, "name")?,
                clip_id: col(r, "clip_id")?,
                axis: Axis::parse(&axis).map_err(Error::Internal)?,
                value: col(r, "value")?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
        Ok(StudyData {
            sources: study.sources.clone(),
            clips,
            responses,
        })
    }

    /// Imports responses of an earlier study: all or nothing. Every (participant, set,
    /// axis) the file names must be complete: a rank for each clip without ties, or a
    /// label for each clip. Rows already stored with the same value are skipped.
    pub async fn import_responses(
        &self,
        campaign: &Campaign,
        rows: &[ResponseRow],
        mut problems: Vec<LineError>,
        what: &str,
    ) -> Result<ResponsesSummary> {
        let study = self.require_study(campaign).await?;
        let n = study.sources.len();
        let mut tx = self.begin_write().await?;
        // set key -> (clip key -> clip id), in source order for the names.
        let mut sets: HashMap<String, BTreeMap<String, i64>> = HashMap::new();
        for r in sqlx::query(
            "SELECT s.set_key, c.clip_key, c.id FROM study_sets s JOIN study_clips c ON c.set_id = s.id
             WHERE s.study_id = $1",
        )
        .bind(study.id)
        .fetch_all(&mut *tx)
        .await?
        .iter()
        {
            sets.entry(col(r, "set_key")?)
                .or_default()
                .insert(col(r, "clip_key")?, col(r, "id")?);
        }
        let mut people: HashMap<String, Option<User>> = HashMap::new();
        let mut seen: HashMap<(String, i64, Axis), usize> = HashMap::new();
        // (participant, set, axis) -> (first line, clip key -> value)
        let mut groups: BTreeMap<(String, String, Axis), AxisGroup> = BTreeMap::new();
        let mut accepted = Vec::new();
        for row in rows {
            let mut bad = false;
            let Some(clips) = sets.get(&row.set_id) else {
                problems.push(LineError::new(
                    row.line,
                    Some("set_id"),
                    format!("no set `{}` in the study", row.set_id),
                ));
                continue;
            };
            let clip_id = match clips.get(&row.clip_id) {
                Some(id) => Some(*id),
                None => {
                    problems.push(LineError::new(
                        row.line,
                        Some("clip_id"),
                        format!("clip `{}` is not in set `{}`", row.clip_id, row.set_id),
                    ));
                    bad = true;
                    None
                }
            };
            if !people.contains_key(&row.participant) {
                let u = super::accounts::user_by_name_in(&mut tx, &row.participant).await?;
                people.insert(row.participant.clone(), u);
            }
            let user = match people.get(&row.participant).cloned().flatten() {
                Some(u) if u.role == Role::Participant => Some(u),
                Some(u) => {
                    problems.push(LineError::new(
                        row.line,
                        Some("participant"),
                        format!(
                            "`{}` is not a study participant (the account's role is {})",
                            row.participant, u.role
                        ),
                    ));
                    bad = true;
                    None
                }
                None => {
                    problems.push(LineError::new(
                        row.line,
                        Some("participant"),
                        format!(
                            "no participant named `{}` (create it: tandem user add {} --role participant)",
                            row.participant, row.participant
                        ),
                    ));
                    bad = true;
                    None
                }
            };
            if let crate::domain::import::ResponseValue::Rank(r) = row.value
                && r > n as i64
            {
                problems.push(LineError::new(
                    row.line,
                    Some("value"),
                    format!("rank {r} is outside 1-{n} (the sets hold {n} clips)"),
                ));
                bad = true;
            }
            let (Some(user), Some(clip_id), false) = (user, clip_id, bad) else {
                continue;
            };
            if let Some(first) = seen.insert((user.name.clone(), clip_id, row.axis), row.line) {
                problems.push(LineError::new(
                    row.line,
                    Some("axis"),
                    format!(
                        "a second {} answer of {} for clip `{}` (first on line {first})",
                        row.axis, user.name, row.clip_id
                    ),
                ));
                continue;
            }
            groups
                .entry((user.name.clone(), row.set_id.clone(), row.axis))
                .or_insert_with(|| (row.line, BTreeMap::new()))
                .1
                .insert(row.clip_id.clone(), row.value.text());
            accepted.push((row, user, clip_id));
        }
        for ((who, set, axis), (line, values)) in &groups {
            let Some(clips) = sets.get(set) else { continue };
            let names: Vec<String> = clips.keys().cloned().collect();
            if *axis == Axis::RealFake {
                let missing: Vec<&str> = names
                    .iter()
                    .filter(|c| !values.contains_key(*c))
                    .map(String::as_str)
                    .collect();
                if !missing.is_empty() {
                    problems.push(LineError::new(
                        *line,
                        Some("clip_id"),
                        format!(
                            "{who} labels only part of set `{set}`: no real_fake for {}",
                            missing.join(", ")
                        ),
                    ));
                }
            } else {
                let ranks: Vec<Option<i64>> = names
                    .iter()
                    .map(|c| values.get(c).and_then(|v| v.parse().ok()))
                    .collect();
                if let Err(m) = check_ranking(*axis, &names, &ranks) {
                    problems.push(LineError::new(
                        *line,
                        Some("value"),
                        format!("{who}, set `{set}`: {m}"),
                    ));
                }
            }
        }
        // What is stored already for these participants.
        let mut summary = ResponsesSummary::default();
        let mut stored: HashMap<(i64, i64, String), String> = HashMap::new();
        for r in sqlx::query(
            "SELECT participant_id, clip_id, axis, value FROM study_responses WHERE study_id = $1",
        )
        .bind(study.id)
        .fetch_all(&mut *tx)
        .await?
        .iter()
        {
            stored.insert(
                (
                    col(r, "participant_id")?,
                    col(r, "clip_id")?,
                    col(r, "axis")?,
                ),
                col(r, "value")?,
            );
        }
        let mut to_insert = Vec::new();
        for (row, user, clip_id) in &accepted {
            let value = row.value.text();
            match stored.get(&(user.id, *clip_id, row.axis.as_str().to_string())) {
                Some(v) if *v == value => summary.already_there += 1,
                Some(v) => problems.push(LineError::new(
                    row.line,
                    Some("value"),
                    format!(
                        "{} already answered {} = {v} for clip `{}`; answers are final",
                        user.name, row.axis, row.clip_id
                    ),
                )),
                None => to_insert.push((user.id, *clip_id, row.axis, value)),
            }
        }
        if !problems.is_empty() {
            problems.sort_by_key(|p| p.line);
            return Err(Error::Rejected(Rejected {
                what: what.to_string(),
                problems,
            }));
        }
        let now = now_micros();
        for (user_id, clip_id, axis, value) in &to_insert {
            insert_response(
                &mut tx, study.id, *user_id, *clip_id, *axis, value, "import", now,
            )
            .await?;
        }
        tx.commit().await?;
        summary.added = to_insert.len();
        summary.participants = accepted
            .iter()
            .map(|(_, u, _)| u.id)
            .collect::<HashSet<_>>()
            .len();
        Ok(summary)
    }
}

/// One participant's answers on one axis of one set: the first line, clip -> value.
type AxisGroup = (usize, BTreeMap<String, String>);

#[allow(clippy::too_many_arguments)]
async fn insert_response(
    c: &mut Conn,
    study_id: i64,
    participant_id: i64,
    clip_id: i64,
    axis: Axis,
    value: &str,
    origin: &str,
    at: i64,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO study_responses (study_id, participant_id, clip_id, axis, value, origin, answered_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(study_id)
    .bind(participant_id)
    .bind(clip_id)
    .bind(axis.as_str())
    .bind(value)
    .bind(origin)
    .bind(at)
    .execute(&mut *c)
    .await?;
    Ok(())
}

/// A participant's stored answer on these clips (in slot order), if any: one query
/// over the set's clips (the set's clips all share one `set_id`).
async fn stored_answer(
    c: &mut Conn,
    participant_id: i64,
    clip_ids: &[i64],
) -> Result<Option<SetAnswer>> {
    let n = clip_ids.len();
    let Some(first) = clip_ids.first() else {
        return Ok(None);
    };
    let rows = sqlx::query(
        "SELECT r.clip_id, r.axis, r.value FROM study_responses r JOIN study_clips c ON c.id = r.clip_id
         WHERE r.participant_id = $1 AND c.set_id = (SELECT set_id FROM study_clips WHERE id = $2)",
    )
    .bind(participant_id)
    .bind(first)
    .fetch_all(&mut *c)
    .await?;
    if rows.is_empty() {
        return Ok(None);
    }
    let mut answer = SetAnswer {
        ranks: [vec![None; n], vec![None; n], vec![None; n]],
        labels: vec![None; n],
    };
    for r in &rows {
        let clip: i64 = col(r, "clip_id")?;
        let Some(slot) = clip_ids.iter().position(|c| *c == clip) else {
            continue;
        };
        let axis: String = col(r, "axis")?;
        let value: String = col(r, "value")?;
        match Axis::parse(&axis).map_err(Error::Internal)? {
            Axis::RealFake => {
                answer.labels[slot] = Some(Truth::parse(&value).map_err(Error::Internal)?);
            }
            a => {
                if let Some(i) = RANK_AXES.iter().position(|x| *x == a) {
                    answer.ranks[i][slot] = value.parse().ok();
                }
            }
        }
    }
    Ok(Some(answer))
}

impl Store {
    /// The study with this id.
    pub async fn study_by_id(&self, id: i64) -> Result<Study> {
        let row = sqlx::query(
            "SELECT id, campaign_id, sources, display_mode, strip_frames, seed FROM studies WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        row.as_ref()
            .map(study_of)
            .transpose()?
            .ok_or_else(|| Error::NotFound(format!("there is no study {id}")))
    }

    /// Every study's id, oldest first: participants take part in all of them.
    pub async fn study_ids(&self) -> Result<Vec<i64>> {
        Ok(sqlx::query_scalar("SELECT id FROM studies ORDER BY id")
            .fetch_all(self.pool())
            .await?)
    }
}

// The blind study: sets, each participant's stored order and clip tokens, answers, and
// responses brought in. (Shared SQL: compiled once per backend, see store/mod.rs.)

use crate::domain::facts::{ResponseFact, StudyClipFact, StudyData};
use crate::domain::import::{CheckedSets, ResponseRow, ServedCopy};
use crate::domain::study::{
    Axis, Display, SetAnswer, Truth, label,
};
use crate::error::{Error, LineError, Result};
use crate::store::Lock;
use crate::store::write;
use crate::store::accounts::User;
use crate::store::catalog::Campaign;
use crate::store::study::{
    ParticipantProgress, ResponsesSummary, ShownClip, ShownSet, Study, StudyImportSummary,
    StudyMedia, StudyProgress,
};
use std::sync::Arc;


impl Backend {
    pub(crate) async fn study(&self, campaign: &Campaign) -> Result<Option<Study>> {
        write::study::study_of(&mut *self.read().await?, campaign.id).await
    }

    pub(crate) async fn require_study(&self, campaign: &Campaign) -> Result<Study> {
        self.study(campaign).await?.ok_or_else(|| {
            Error::NotFound(format!(
                "campaign `{}` has no study yet; import its comparison sets first (`tandem study import SETS.jsonl`)",
                campaign.name
            ))
        })
    }

    pub(crate) async fn import_study(
        &self,
        campaign_name: &str,
        sets: &CheckedSets,
        prepared: &[ServedCopy],
        display: Option<(Display, i64)>,
    ) -> Result<(StudyImportSummary, Study)> {
        let (campaign_name, sets, prepared) = (
            campaign_name.to_string(),
            Arc::new(sets.clone()),
            Arc::new(prepared.to_vec()),
        );
        self.write_tx(Lock::Structure, move |tx| {
            let (campaign_name, sets, prepared) =
                (campaign_name.clone(), sets.clone(), prepared.clone());
            Box::pin(async move {
                write::study::import_sets(tx, &campaign_name, &sets, &prepared, display).await
            })
        })
        .await
    }

    pub(crate) async fn study_media_hashes(&self, study: &Study) -> Result<Vec<String>> {
        Ok(qs(
            "SELECT DISTINCT media_sha256 FROM study_clips WHERE study_id = $1 ORDER BY 1",
        )
        .bind(study.id)
        .fetch_all(&mut *self.read().await?)
        .await?)
    }

    pub(crate) async fn set_study_display(
        &self,
        study: &Study,
        display: Display,
        frames: i64,
    ) -> Result<()> {
        let id = study.id;
        self.write_tx(Lock::Structure, move |tx| {
            Box::pin(async move { write::study::set_display(tx, id, display, frames).await })
        })
        .await
    }

    /// Draws the participant's order when it is not there yet (a write only then).
    async fn ensure_order(&self, study: &Study, user: &User) -> Result<()> {
        if write::study::has_order(&mut *self.read().await?, study, user).await? {
            return Ok(());
        }
        let (study, user) = (study.clone(), user.clone());
        self.write_tx(Lock::Item, move |tx| {
            let (study, user) = (study.clone(), user.clone());
            Box::pin(async move { write::study::ensure_order(tx, &study, &user).await })
        })
        .await
    }

    pub(crate) async fn study_progress(&self, study: &Study, user: &User) -> Result<StudyProgress> {
        self.ensure_order(study, user).await?;
        let done = write::study::answered_positions(&mut *self.read().await?, study, user).await?;
        Ok(write::study::progress(&done))
    }

    pub(crate) async fn study_overview(&self, study: &Study, user: &User) -> Result<StudyProgress> {
        let mut c = self.read().await?;
        let done = write::study::answered_positions(&mut *c, study, user).await?;
        if !done.is_empty() {
            return Ok(write::study::progress(&done));
        }
        let sets: i64 = qs("SELECT COUNT(*) FROM study_sets WHERE study_id = $1")
            .bind(study.id)
            .fetch_one(&mut *c)
            .await?;
        Ok(StudyProgress {
            total: sets,
            answered: 0,
            next: (sets > 0).then_some(1),
        })
    }

    pub(crate) async fn study_set(&self, study: &Study, user: &User, position: i64) -> Result<ShownSet> {
        self.ensure_order(study, user).await?;
        let mut c = self.read().await?;
        let progress = write::study::progress(&write::study::answered_positions(&mut *c, study, user).await?);
        let rows = write::study::views(&mut *c, study, user, position).await?;
        if rows.is_empty() {
            return Err(Error::NotFound(format!(
                "there is no set {position}; the study has {} sets",
                progress.total
            )));
        }
        let clips = rows
            .iter()
            .map(|(slot, token, _)| ShownClip {
                label: label(usize::try_from(*slot).unwrap_or(0)),
                token: token.clone(),
            })
            .collect();
        let clip_ids: Vec<i64> = rows.iter().map(|r| r.2).collect();
        let answer = write::study::stored_answer(&mut *c, user.id, &clip_ids).await?;
        Ok(ShownSet {
            position,
            total: progress.total,
            answered_sets: progress.answered,
            next: progress.next,
            clips,
            answer,
        })
    }

    pub(crate) async fn answer_study_set(
        &self,
        study: &Study,
        user: &User,
        position: i64,
        answer: &SetAnswer,
    ) -> Result<StudyProgress> {
        let (study, user, answer) = (study.clone(), user.clone(), answer.clone());
        self.write_tx(Lock::Item, move |tx| {
            let (study, user, answer) = (study.clone(), user.clone(), answer.clone());
            Box::pin(async move {
                write::study::answer_set(tx, &study, &user, position, &answer).await
            })
        })
        .await
    }

    pub(crate) async fn study_media(&self, token: &str) -> Result<Option<StudyMedia>> {
        let row: Option<(i64, String, String, i64)> = qa(
            "SELECT o.participant_id, c.media_sha256, c.media_type, s.strip_frames
             FROM study_views v JOIN study_orders o ON o.id = v.order_id
             JOIN study_clips c ON c.id = v.clip_id JOIN studies s ON s.id = o.study_id
             WHERE v.token = $1",
        )
        .bind(token)
        .fetch_optional(&mut *self.read().await?)
        .await?;
        Ok(row.map(|(participant_id, sha256, media_type, frames)| StudyMedia {
            participant_id,
            sha256,
            media_type,
            frames,
        }))
    }

    pub(crate) async fn study_size(&self, study: &Study) -> Result<(i64, i64)> {
        Ok(qa(
            "SELECT (SELECT COUNT(*) FROM study_sets WHERE study_id = $1),
                    (SELECT COUNT(*) FROM study_clips WHERE study_id = $1)",
        )
        .bind(study.id)
        .fetch_one(&mut *self.read().await?)
        .await?)
    }

    pub(crate) async fn study_participants(
        &self,
        study: &Study,
    ) -> Result<Vec<ParticipantProgress>> {
        let (sets, _) = self.study_size(study).await?;
        let rows: Vec<(String, i64, i64)> = qa(
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
        .fetch_all(&mut *self.read().await?)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(name, answered, imported)| ParticipantProgress {
                name,
                answered,
                total: sets,
                imported: imported > 0,
            })
            .collect())
    }

    pub(crate) async fn study_data(&self, study: &Study) -> Result<StudyData> {
        let mut c = self.read().await?;
        let clips: Vec<(i64, i64, String, String, String, String)> = qa(
            "SELECT c.id, c.set_id, s.set_key, c.clip_key, c.source, c.truth
             FROM study_clips c JOIN study_sets s ON s.id = c.set_id
             WHERE c.study_id = $1 ORDER BY s.position, c.id",
        )
        .bind(study.id)
        .fetch_all(&mut *c)
        .await?;
        let clips = clips
            .into_iter()
            .map(|(id, set_id, set_key, clip_key, source, truth)| {
                Ok(StudyClipFact {
                    id,
                    set_id,
                    set_key,
                    clip_key,
                    source,
                    truth: Truth::parse(&truth).map_err(Error::Internal)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let responses: Vec<(String, i64, String, String)> = qa(
            "SELECT u.name, r.clip_id, r.axis, r.value FROM study_responses r JOIN users u ON u.id = r.participant_id
             WHERE r.study_id = $1 ORDER BY r.id",
        )
        .bind(study.id)
        .fetch_all(&mut *c)
        .await?;
        let responses = responses
            .into_iter()
            .map(|(participant, clip_id, axis, value)| {
                Ok(ResponseFact {
                    participant,
                    clip_id,
                    axis: Axis::parse(&axis).map_err(Error::Internal)?,
                    value,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(StudyData {
            sources: study.sources.clone(),
            clips,
            responses,
        })
    }

    pub(crate) async fn import_responses(
        &self,
        campaign: &Campaign,
        rows: &[ResponseRow],
        problems: Vec<LineError>,
        what: &str,
    ) -> Result<ResponsesSummary> {
        let study = self.require_study(campaign).await?;
        let (rows, what) = (Arc::new(rows.to_vec()), what.to_string());
        self.write_tx(Lock::Structure, move |tx| {
            let (study, rows, problems, what) =
                (study.clone(), rows.clone(), problems.clone(), what.clone());
            Box::pin(async move {
                write::study::import_responses(tx, &study, &rows, problems, &what).await
            })
        })
        .await
    }

    pub(crate) async fn study_by_id(&self, id: i64) -> Result<Study> {
        qa::<write::study::StudyRow>(
            "SELECT id, campaign_id, sources, display_mode, strip_frames, seed FROM studies WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&mut *self.read().await?)
        .await?
        .map(Study::try_from)
        .transpose()?
        .ok_or_else(|| Error::NotFound(format!("there is no study {id}")))
    }

    pub(crate) async fn study_ids(&self) -> Result<Vec<i64>> {
        Ok(qs("SELECT id FROM studies ORDER BY id")
            .fetch_all(&mut *self.read().await?)
            .await?)
    }
}

//! The blind study's entry points on [`Store`]: the study (a copy kept a second), its
//! sets and clips, each participant's order, progress and answers, and responses
//! brought in. The writes are in the parent module.

use crate::domain::Role;
use crate::domain::facts::{ResponseFact, StudyClipFact, StudyData};
use crate::domain::import::{CheckedSets, ResponseRow, ServedCopy};
use crate::domain::study::{Axis, Display, SetAnswer, Truth, label};
use crate::error::{Error, LineError, Result};
use crate::store::accounts::User;
use crate::store::catalog::Campaign;
use crate::store::db::{Tx, named, sql};
use crate::store::study::{
    ParticipantProgress, ResponsesSummary, ShownClip, ShownSet, Study, StudyImportSummary,
    StudyMedia, StudyProgress,
};
use crate::store::{Lock, Store};
use std::sync::Arc;

impl Store {
    /// The study with this id (a copy at most a second old, as campaigns are; its
    /// sources never change, and a change of display forgets this server's copies).
    pub async fn study_by_id(&self, id: i64) -> Result<Study> {
        if let Some(s) = self.inner.cache.study(id) {
            return Ok(s);
        }
        let s = self.study_by_id_read(id).await?;
        self.inner.cache.put_study(&s);
        Ok(s)
    }

    /// Sets how a study's clips are shown (the strips must be drawn before).
    pub async fn set_study_display(
        &self,
        study: &Study,
        display: Display,
        frames: i64,
    ) -> Result<()> {
        let id = study.id;
        let r = write_tx!(self, Lock::Structure, (), |tx| {
            super::set_display(tx, id, display, frames).await
        });
        self.inner.cache.forget_campaigns();
        r
    }

    /// The file behind a participant's clip token (a copy never changes; kept in
    /// memory once read).
    pub async fn study_media(&self, token: &str) -> Result<Option<StudyMedia>> {
        if let Some(m) = self.inner.cache.study_media(token) {
            return Ok(Some(m));
        }
        let m = self.study_media_read(token).await?;
        if let Some(m) = &m {
            self.inner.cache.put_study_media(token, m);
        }
        Ok(m)
    }

    /// The studies `user` takes part in: those of the campaigns where they are a
    /// participant.
    pub async fn study_ids_for(&self, user: &User) -> Result<Vec<i64>> {
        let mut ids = Vec::new();
        for id in self.study_ids().await? {
            let study = self.study_by_id(id).await?;
            if user.role_in(study.campaign_id) == Some(Role::Participant) {
                ids.push(id);
            }
        }
        Ok(ids)
    }

    /// The campaign's study, if it has one.
    pub async fn study(&self, campaign: &Campaign) -> Result<Option<Study>> {
        read_tx!(self, |c| super::study_of(c, campaign.id).await)
    }

    /// The campaign's study, or a clear error when it has none.
    pub async fn require_study(&self, campaign: &Campaign) -> Result<Study> {
        self.study(campaign).await?.ok_or_else(|| {
            Error::NotFound(format!(
                "campaign `{}` has no study yet; import its comparison sets first \
                 (`tandem study import SETS.jsonl`)",
                campaign.name
            ))
        })
    }

    /// Stores checked comparison sets, all or nothing, with the copies participants
    /// receive (prepared by `app::import_study`).
    pub async fn import_study(
        &self,
        campaign_name: &str,
        sets: &CheckedSets,
        prepared: &[ServedCopy],
        display: Option<(Display, i64)>,
    ) -> Result<(StudyImportSummary, Study)> {
        let (sets, prepared) = (Arc::new(sets.clone()), Arc::new(prepared.to_vec()));
        write_tx!(
            self,
            Lock::Structure,
            (campaign_name, sets, prepared),
            |tx| super::import_sets(tx, campaign_name, sets, prepared, display).await
        )
    }

    /// The videos a study shows (their SHA-256), for drawing its strips.
    pub async fn study_media_hashes(&self, study: &Study) -> Result<Vec<String>> {
        let study = study.id;
        let rows: Vec<(String,)> = read_tx!(self, long, |c| {
            c.fetch(
                sql!(
                    "SELECT DISTINCT media_sha256 FROM study_clips WHERE study_id = :study
                     ORDER BY 1"
                ),
                named! { study },
            )
            .await
        })?;
        Ok(rows.into_iter().map(|r| r.0).collect())
    }

    /// Draws the participant's order when it is not there yet (a write only then).
    async fn ensure_order(&self, study: &Study, user: &User) -> Result<()> {
        if read_tx!(self, |c| super::has_order(c, study, user).await)? {
            return Ok(());
        }
        write_tx!(self, Lock::Item, (study, user), |tx| {
            super::ensure_order(tx, study, user).await
        })
    }

    /// A participant's progress, drawing their order on their first visit.
    pub async fn study_progress(&self, study: &Study, user: &User) -> Result<StudyProgress> {
        self.ensure_order(study, user).await?;
        let done = read_tx!(self, |c| super::answered_positions(c, study, user).await)?;
        Ok(super::progress(&done))
    }

    /// A participant's progress without drawing their order.
    pub async fn study_overview(&self, study: &Study, user: &User) -> Result<StudyProgress> {
        read_tx!(self, |c| {
            let done = super::answered_positions(c, study, user).await?;
            if !done.is_empty() {
                return Ok(super::progress(&done));
            }
            let sets: i64 = c
                .scalar(
                    sql!("SELECT COUNT(*) FROM study_sets WHERE study_id = :study"),
                    named! { study: study.id },
                )
                .await?;
            Ok(StudyProgress {
                total: sets,
                answered: 0,
                next: (sets > 0).then_some(1),
            })
        })
    }

    /// The set at `position` of this participant's order, as they see it.
    pub async fn study_set(&self, study: &Study, user: &User, position: i64) -> Result<ShownSet> {
        self.ensure_order(study, user).await?;
        read_tx!(self, |c| {
            let progress = super::progress(&super::answered_positions(c, study, user).await?);
            let rows = super::views(c, study, user, position).await?;
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
            let answer = super::stored_answer(c, user.id, &clip_ids).await?;
            Ok(ShownSet {
                position,
                total: progress.total,
                answered_sets: progress.answered,
                next: progress.next,
                clips,
                answer,
            })
        })
    }

    /// Records a participant's answer to the set at `position`, in one write; returns
    /// their progress after it (read in the same write).
    pub async fn answer_study_set(
        &self,
        study: &Study,
        user: &User,
        position: i64,
        answer: &SetAnswer,
    ) -> Result<StudyProgress> {
        write_tx!(self, Lock::Item, (study, user, answer), |tx| {
            super::answer_set(tx, study, user, position, answer).await
        })
    }

    /// The file behind a participant's clip token, read afresh.
    async fn study_media_read(&self, token: &str) -> Result<Option<StudyMedia>> {
        let row: Option<(i64, String, String, i64)> = read_tx!(self, |c| {
            c.fetch_opt(
                sql!(
                    "SELECT o.participant_id, c.media_sha256, c.media_type, s.strip_frames
                     FROM study_views v JOIN study_orders o ON o.id = v.order_id
                     JOIN study_clips c ON c.id = v.clip_id JOIN studies s ON s.id = o.study_id
                     WHERE v.token = :token"
                ),
                named! { token },
            )
            .await
        })?;
        Ok(
            row.map(|(participant_id, sha256, media_type, frames)| StudyMedia {
                participant_id,
                sha256,
                media_type,
                frames,
            }),
        )
    }

    /// Sets and clips in the study.
    pub async fn study_size(&self, study: &Study) -> Result<(i64, i64)> {
        read_tx!(self, long, |c| {
            c.fetch_one(
                sql!(
                    "SELECT (SELECT COUNT(*) FROM study_sets WHERE study_id = :study),
                            (SELECT COUNT(*) FROM study_clips WHERE study_id = :study)"
                ),
                named! { study: study.id },
            )
            .await
        })
    }

    /// Every participant with an order or answers, and how far they are.
    pub async fn study_participants(&self, study: &Study) -> Result<Vec<ParticipantProgress>> {
        let (sets, _) = self.study_size(study).await?;
        let rows: Vec<(String, i64, i64)> = read_tx!(self, long, |c| {
            c.fetch(
                sql!(
                    "SELECT u.name,
                            (SELECT COUNT(DISTINCT c.set_id)
                             FROM study_responses r JOIN study_clips c ON c.id = r.clip_id
                             WHERE r.participant_id = u.id AND r.study_id = :study) AS answered,
                            (SELECT COUNT(*) FROM study_responses r
                             WHERE r.participant_id = u.id AND r.study_id = :study
                               AND r.origin = 'import') AS imported
                     FROM users u
                     WHERE u.id IN (SELECT participant_id FROM study_orders WHERE study_id = :study
                                    UNION
                                    SELECT participant_id FROM study_responses
                                    WHERE study_id = :study)
                     ORDER BY u.name"
                ),
                named! { study: study.id },
            )
            .await
        })?;
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

    /// The raw material of Tables 14 and 15 (or what the protocol calls them).
    pub async fn study_data(&self, study: &Study) -> Result<StudyData> {
        let id = study.id;
        type Clip = (i64, i64, String, String, String, String);
        type Response = (String, i64, String, String);
        let (clips, responses): (Vec<Clip>, Vec<Response>) = read_tx!(self, long, |c| {
            let clips = c
                .fetch(
                    sql!(
                        "SELECT c.id, c.set_id, s.set_key, c.clip_key, c.source, c.truth
                             FROM study_clips c JOIN study_sets s ON s.id = c.set_id
                             WHERE c.study_id = :study ORDER BY s.position, c.id"
                    ),
                    named! { study: id },
                )
                .await?;
            let responses = c
                .fetch(
                    sql!(
                        "SELECT u.name, r.clip_id, r.axis, r.value
                             FROM study_responses r JOIN users u ON u.id = r.participant_id
                             WHERE r.study_id = :study ORDER BY r.id"
                    ),
                    named! { study: id },
                )
                .await?;
            Ok::<_, Error>((clips, responses))
        })?;
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

    /// Imports responses of an earlier study: all or nothing.
    pub async fn import_responses(
        &self,
        campaign: &Campaign,
        rows: &[ResponseRow],
        problems: Vec<LineError>,
        what: &str,
    ) -> Result<ResponsesSummary> {
        let study = self.require_study(campaign).await?;
        let rows = Arc::new(rows.to_vec());
        write_tx!(self, Lock::Structure, (study, rows, problems, what), |tx| {
            super::import_responses(tx, study, rows, problems.clone(), what).await
        })
    }

    /// The study with this id, read afresh.
    async fn study_by_id_read(&self, id: i64) -> Result<Study> {
        let row: Option<super::StudyRow> = read_tx!(self, |c| {
            c.fetch_opt(
                sql!(
                    "SELECT id, campaign_id, sources, display_mode, strip_frames, seed
                     FROM studies WHERE id = :id"
                ),
                named! { id },
            )
            .await
        })?;
        row.map(Study::try_from)
            .transpose()?
            .ok_or_else(|| Error::NotFound(format!("there is no study {id}")))
    }

    /// Every study's id, oldest first: participants take part in all of them.
    pub async fn study_ids(&self) -> Result<Vec<i64>> {
        let rows: Vec<(i64,)> = read_tx!(self, |c| {
            c.fetch(sql!("SELECT id FROM studies ORDER BY id"), &[])
                .await
        })?;
        Ok(rows.into_iter().map(|r| r.0).collect())
    }
}

//! The blind study through the API: a participant's studies, sets and answers (the
//! same rules as the pages: positions in their own order, letters and tokens only), and
//! the study's set-up and progress for admins and authors.

use super::ApiJson;
use crate::domain::study::{SetAnswer, Truth};
use crate::error::Error;
use crate::store::accounts::User;
use crate::store::study::{ParticipantProgress, ShownSet, Study};
use crate::web::media::study_clip_urls;
use crate::web::routes::api;
use crate::web::routes::{ADMIN, PARTICIPANT, Route};
use crate::web::state::AppState;
use axum::extract::{Path, State};
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use utoipa::{IntoParams, ToSchema};

/// A set of a study, at its place in the participant's own order.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct SetPath {
    /// The study's number (from `GET /api/v1/studies`)
    study: i64,
    /// The set's place, 1-based, in this participant's own order
    position: i64,
}

/// A campaign.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct CampaignPath {
    /// The campaign's name
    campaign: String,
}

/// One set as its participant sees it.
#[derive(Serialize, ToSchema)]
pub struct StudySet {
    pub position: i64,
    pub total: i64,
    pub answered_sets: i64,
    /// `video` (the clips play) or `strip` (each clip is a strip of frames)
    #[schema(example = "video")]
    pub display: &'static str,
    /// The clips, labelled A, B, ...: nothing names a clip's source, file or id.
    pub clips: Vec<StudyClip>,
    /// This participant's own answer, once given.
    pub answer: Option<StudyAnswer>,
}

/// A clip of a set: its letter and its opaque, per-participant URL.
#[derive(Serialize, ToSchema)]
pub struct StudyClip {
    #[schema(example = "A")]
    pub label: String,
    /// The clip (with display `video`).
    #[schema(format = "uri-reference", example = "/study/m/0c2lzcGJ0dG9rZW4")]
    pub video: Option<String>,
    /// Its frames (with display `strip`).
    #[schema(format = "uri-reference", example = "/study/m/0c2lzcGJ0dG9rZW4/frames")]
    pub strip: Option<String>,
}

/// A participant's answer to a set: per axis, each clip's rank (1 is best); per clip,
/// real or fake. Null where nothing was given.
#[derive(Serialize, ToSchema)]
pub struct StudyAnswer {
    pub photorealism: BTreeMap<String, Option<i64>>,
    pub temporal_coherence: BTreeMap<String, Option<i64>>,
    pub comprehensibility: BTreeMap<String, Option<i64>>,
    /// `real` or `fake`
    pub real_fake: BTreeMap<String, Option<String>>,
}

fn answer_reply(labels: &[String], a: &SetAnswer) -> StudyAnswer {
    let ranks = |r: &Vec<Option<i64>>| labels.iter().cloned().zip(r.iter().copied()).collect();
    StudyAnswer {
        photorealism: ranks(&a.ranks[0]),
        temporal_coherence: ranks(&a.ranks[1]),
        comprehensibility: ranks(&a.ranks[2]),
        real_fake: labels
            .iter()
            .cloned()
            .zip(
                a.labels
                    .iter()
                    .map(|t| t.map(|t| Truth::as_str(t).to_string())),
            )
            .collect(),
    }
}

fn shown(study: &Study, set: &ShownSet) -> StudySet {
    let labels: Vec<String> = set.clips.iter().map(|c| c.label.clone()).collect();
    StudySet {
        position: set.position,
        total: set.total,
        answered_sets: set.answered_sets,
        display: study.display.as_str(),
        clips: set
            .clips
            .iter()
            .map(|c| {
                let (video, strip) = study_clip_urls(study.display, &c.token);
                StudyClip {
                    label: c.label.clone(),
                    video,
                    strip,
                }
            })
            .collect(),
        answer: set.answer.as_ref().map(|a| answer_reply(&labels, a)),
    }
}

/// The studies a participant takes.
#[derive(Serialize, ToSchema)]
pub struct Studies {
    pub studies: Vec<StudyProgressReply>,
}

/// A participant's progress in one study.
#[derive(Serialize, ToSchema)]
pub struct StudyProgressReply {
    /// The study's number
    pub study: i64,
    pub total: i64,
    pub answered: i64,
    /// The first set not answered yet (none when all are)
    pub next: Option<i64>,
}

/// The studies this participant takes, with their progress (answered, total, next set).
#[utoipa::path(
    get,
    path = "/api/v1/studies",
    tag = "study",
    operation_id = "list_studies",
    responses((status = 200, description = "The participant's studies", body = Studies))
)]
pub async fn studies(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
) -> Result<Json<Studies>, Error> {
    let mut studies = Vec::new();
    for id in state.store.study_ids_for(&user).await? {
        let study = state.store.study_by_id(id).await?;
        let p = state.store.study_overview(&study, &user).await?;
        studies.push(StudyProgressReply {
            study: id,
            total: p.total,
            answered: p.answered,
            next: p.next,
        });
    }
    Ok(Json(Studies { studies }))
}

/// One set as this participant sees it: clips labelled A, B, ... with opaque
/// per-participant URLs, and their own answer once given. Nothing in the answer names
/// a clip's source, file or id.
#[utoipa::path(
    get,
    path = "/api/v1/studies/{study}/sets/{position}",
    tag = "study",
    operation_id = "get_study_set",
    params(SetPath),
    responses((status = 200, description = "The set", body = StudySet))
)]
pub async fn set(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(p): Path<SetPath>,
) -> Result<Json<StudySet>, Error> {
    let study = state.store.study_by_id(p.study).await?;
    let set = state.store.study_set(&study, &user, p.position).await?;
    Ok(Json(shown(&study, &set)))
}

/// The body of an answer: per axis, each clip letter's rank (1..n, no ties); per clip,
/// `real` or `fake`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"photorealism": {"A": 1, "B": 2}, "temporal_coherence": {"A": 2, "B": 1}, "comprehensibility": {"A": 1, "B": 2}, "real_fake": {"A": "real", "B": "fake"}}))]
pub struct AnswerBody {
    pub photorealism: HashMap<String, i64>,
    pub temporal_coherence: HashMap<String, i64>,
    pub comprehensibility: HashMap<String, i64>,
    pub real_fake: HashMap<String, String>,
}

/// What an answer did.
#[derive(Serialize, ToSchema)]
pub struct AnswerReply {
    pub recorded: bool,
    pub answered: i64,
    pub total: i64,
    /// The next set to answer (none when all are)
    pub next: Option<i64>,
}

/// Answer a set: a rank 1..n without ties per axis, and real or fake per clip. Answers
/// are final; the same answer sent again records nothing more.
#[utoipa::path(
    post,
    path = "/api/v1/studies/{study}/sets/{position}",
    tag = "study",
    operation_id = "answer_study_set",
    params(SetPath),
    request_body = AnswerBody,
    responses(
        (status = 200, description = "Recorded; the participant's progress", body = AnswerReply),
        (status = 409, description = "The set was answered otherwise (answers are final)"),
    )
)]
pub async fn answer(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(path): Path<SetPath>,
    ApiJson(body): ApiJson<AnswerBody>,
) -> Result<Json<AnswerReply>, Error> {
    let (id, position) = (path.study, path.position);
    let study = state.store.study_by_id(id).await?;
    let n = study.sources.len();
    let labels: Vec<String> = (0..n).map(crate::domain::study::label).collect();
    for (axis, map) in [
        ("photorealism", body.photorealism.keys().collect::<Vec<_>>()),
        (
            "temporal_coherence",
            body.temporal_coherence.keys().collect(),
        ),
        ("comprehensibility", body.comprehensibility.keys().collect()),
        ("real_fake", body.real_fake.keys().collect()),
    ] {
        if let Some(k) = map.iter().find(|k| !labels.contains(k)) {
            return Err(Error::field(
                axis,
                format!("no clip `{k}` in the set (clips are {})", labels.join(", ")),
            ));
        }
    }
    let pick = |m: &HashMap<String, i64>| labels.iter().map(|l| m.get(l).copied()).collect();
    let mut truths = Vec::new();
    for l in &labels {
        truths.push(match body.real_fake.get(l) {
            None => None,
            Some(v) => Some(Truth::parse(v).map_err(|m| Error::field("real_fake", m))?),
        });
    }
    let answer = SetAnswer {
        ranks: [
            pick(&body.photorealism),
            pick(&body.temporal_coherence),
            pick(&body.comprehensibility),
        ],
        labels: truths,
    };
    let p = state
        .store
        .answer_study_set(&study, &user, position, &answer)
        .await?;
    Ok(Json(AnswerReply {
        recorded: true,
        answered: p.answered,
        total: p.total,
        next: p.next,
    }))
}

/// A campaign's blind study, for its admins.
#[derive(Serialize, ToSchema)]
pub struct StudyStatus {
    /// The study's number
    pub study: i64,
    /// The sources compared (generators, or `real`)
    pub sources: Vec<String>,
    /// `video` or `strip`
    pub display: &'static str,
    /// Frames in a strip
    pub frames: i64,
    pub sets: i64,
    pub clips: i64,
    pub participants: Vec<ParticipantProgress>,
}

/// The campaign's blind study: sources, display, sets, clips and each participant's
/// progress.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/study",
    tag = "study",
    operation_id = "get_study",
    params(CampaignPath),
    responses((status = 200, description = "The study", body = StudyStatus))
)]
pub async fn status(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
) -> Result<Json<StudyStatus>, Error> {
    let campaign = state.store.campaign(&p.campaign).await?;
    study_status(&state, &campaign).await.map(Json)
}

/// A campaign's study as its admins see it.
pub(super) async fn study_status(
    state: &AppState,
    campaign: &crate::store::catalog::Campaign,
) -> Result<StudyStatus, Error> {
    let study = state.store.require_study(campaign).await?;
    let (sets, clips) = state.store.study_size(&study).await?;
    let participants = state.store.study_participants(&study).await?;
    Ok(StudyStatus {
        study: study.id,
        sources: study.sources.clone(),
        display: study.display.as_str(),
        frames: study.frames,
        sets,
        clips,
        participants,
    })
}

/// How the study shows its clips.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"display": "strip", "frames": 8}))]
pub struct DisplayBody {
    /// `video` or `strip`
    #[schema(example = "strip", pattern = "^(video|strip)$")]
    display: String,
    /// Frames in a strip (with `strip`)
    #[serde(default = "default_frames")]
    #[schema(minimum = 2, maximum = 32)]
    frames: i64,
}

fn default_frames() -> i64 {
    8
}

/// Set how the study shows its clips to participants: the videos, or strips of frames
/// (drawn now, for every clip of the study).
#[utoipa::path(
    put,
    path = "/api/v1/campaigns/{campaign}/study/display",
    tag = "study",
    operation_id = "set_study_display",
    params(super::CampaignPath),
    request_body = DisplayBody,
    responses((status = 200, description = "The study as it now stands", body = StudyStatus))
)]
pub async fn set_study_display(
    State(state): State<AppState>,
    Path(p): Path<super::CampaignPath>,
    ApiJson(body): ApiJson<DisplayBody>,
) -> crate::error::Result<Json<StudyStatus>> {
    let campaign = super::campaign(&state, &p.campaign).await?;
    let display = crate::domain::study::Display::parse(&body.display)
        .map_err(|m| Error::field("display", m))?;
    crate::app::set_study_display(&state.store, &state.config, &campaign, display, body.frames)
        .await?;
    study_status(&state, &campaign).await.map(Json)
}

/// The study for its participants; its set-up and progress for admins.
pub fn routes() -> Vec<Route> {
    vec![
        api!(ADMIN, status),
        api!(ADMIN, set_study_display),
        api!(PARTICIPANT, studies),
        api!(PARTICIPANT, set),
        api!(PARTICIPANT, answer),
    ]
}

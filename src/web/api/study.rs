//! The blind study through the API: a participant's studies, sets and answers (the
//! same rules as the pages: positions in their own order, letters and tokens only), and
//! the study's set-up and progress for admins and authors.

use super::ApiJson;
use crate::AppState;
use crate::domain::study::{Axis, RANK_AXES, SetAnswer, Truth};
use crate::error::Error;
use crate::store::accounts::User;
use crate::store::study::{ShownSet, Study};
use crate::web::media::study_clip_urls;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::json;
use std::collections::HashMap;

fn shown_json(study: &Study, set: &ShownSet) -> serde_json::Value {
    json!({
        "position": set.position,
        "total": set.total,
        "answered_sets": set.answered_sets,
        "display": study.display.as_str(),
        "clips": set.clips.iter().map(|c| {
            let (video, strip) = study_clip_urls(study.display, &c.token);
            json!({ "label": c.label, "video": video, "strip": strip })
        }).collect::<Vec<_>>(),
        "answer": set.answer.as_ref().map(|a| answer_json(&set.clips.iter().map(|c| c.label.clone()).collect::<Vec<_>>(), &a.ranks, &a.labels)),
    })
}

fn answer_json(
    labels: &[String],
    ranks: &[Vec<Option<i64>>; 3],
    truths: &[Option<Truth>],
) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    for (axis, r) in RANK_AXES.iter().zip(ranks) {
        let m: serde_json::Map<String, serde_json::Value> = labels
            .iter()
            .zip(r)
            .map(|(l, v)| (l.clone(), json!(v)))
            .collect();
        out.insert(axis.as_str().into(), serde_json::Value::Object(m));
    }
    let m: serde_json::Map<String, serde_json::Value> = labels
        .iter()
        .zip(truths)
        .map(|(l, v)| (l.clone(), json!(v.map(Truth::as_str))))
        .collect();
    out.insert(Axis::RealFake.as_str().into(), serde_json::Value::Object(m));
    serde_json::Value::Object(out)
}

/// `GET /api/v1/studies`: the studies a participant can take, with their progress.
pub async fn studies(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
) -> Result<Response, Error> {
    let mut out = Vec::new();
    for id in state.store.study_ids_for(&user).await? {
        let study = state.store.study_by_id(id).await?;
        let p = state.store.study_overview(&study, &user).await?;
        out.push(json!({"study": id, "total": p.total, "answered": p.answered, "next": p.next}));
    }
    Ok(Json(json!({"studies": out})).into_response())
}

pub async fn set(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path((id, position)): Path<(i64, i64)>,
) -> Result<Response, Error> {
    let study = state.store.study_by_id(id).await?;
    let set = state.store.study_set(&study, &user, position).await?;
    Ok(Json(shown_json(&study, &set)).into_response())
}

/// The body of an answer: per axis, each clip letter's rank; per clip, real or fake.
#[derive(Debug, Deserialize)]
pub struct AnswerBody {
    pub photorealism: HashMap<String, i64>,
    pub temporal_coherence: HashMap<String, i64>,
    pub comprehensibility: HashMap<String, i64>,
    pub real_fake: HashMap<String, String>,
}

pub async fn answer(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path((id, position)): Path<(i64, i64)>,
    ApiJson(body): ApiJson<AnswerBody>,
) -> Result<Response, Error> {
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
    Ok(
        Json(json!({"recorded": true, "answered": p.answered, "total": p.total, "next": p.next}))
            .into_response(),
    )
}

/// `GET /api/v1/campaigns/{c}/study`: the study's set-up and everyone's progress.
pub async fn status(
    State(state): State<AppState>,
    Path(c): Path<String>,
) -> Result<Response, Error> {
    let campaign = state.store.campaign(&c).await?;
    let study = state.store.require_study(&campaign).await?;
    let (sets, clips) = state.store.study_size(&study).await?;
    let participants = state.store.study_participants(&study).await?;
    Ok(Json(json!({
        "study": study.id,
        "sources": study.sources,
        "display": study.display.as_str(),
        "frames": study.frames,
        "sets": sets,
        "clips": clips,
        "participants": participants,
    }))
    .into_response())
}

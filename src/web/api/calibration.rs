//! Calibration through the API: a validator's status, items and verdicts; for admins
//! the scores, new rounds, lifting a pause, known copies and the campaign's settings.

use super::review::VerdictBody;
use super::{ApiJson, CampaignPath, ItemPath, campaign, clip_urls, stage};
use crate::error::Result;
use crate::store::accounts::User;
use crate::store::calibration::{CalibrationFeedback, CalibrationItem, CalibrationScore};
use crate::store::catalog::Settings;
use crate::web::routes::api;
use crate::web::routes::{ADMIN, Route, VALIDATOR};
use crate::web::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// The validator's calibration: state (not_required, in_progress, passed, failed),
/// round, decided, agreed, required, threshold, next item.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/calibration",
    tag = "calibration",
    operation_id = "get_calibration",
    params(CampaignPath),
    responses((status = 200, description = "Where the validator stands", body = crate::domain::calibration::CalibrationStatus))
)]
pub async fn calibration_status(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(p): Path<CampaignPath>,
) -> Result<Json<crate::domain::calibration::CalibrationStatus>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let s = state.store.calibration_status(&campaign, &user).await?;
    Ok(Json(s))
}

/// A calibration item; once decided in this round, with the known verdict.
///
/// `clip.media_url` (and `clip.strip_url` when the server draws strips) fetch the clip
/// with this same token (byte ranges, ETag, 304).
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/calibration/{stage}/{item}",
    tag = "calibration",
    operation_id = "get_calibration_item",
    params(ItemPath),
    responses((status = 200, description = "The calibration item", body = CalibrationItem))
)]
pub async fn calibration_item(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(p): Path<ItemPath>,
) -> Result<Json<CalibrationItem>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let mut item = state
        .store
        .calibration_item(&campaign, &user, stage(&p.stage)?, &p.item)
        .await?;
    clip_urls(&state, &user, &mut item.clip)?;
    Ok(Json(item))
}

/// A calibration verdict; answers with the known verdict, its reasons and note, and the
/// calibration state.
#[utoipa::path(
    post,
    path = "/api/v1/campaigns/{campaign}/calibration/{stage}/{item}/verdict",
    tag = "calibration",
    operation_id = "record_calibration_verdict",
    params(ItemPath),
    request_body = VerdictBody,
    responses(
        (status = 200, description = "The verdict beside the known one", body = CalibrationFeedback),
        (status = 409, description = "The item was decided otherwise in this round, or the round is over"),
    )
)]
pub async fn calibration_verdict(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(p): Path<ItemPath>,
    ApiJson(body): ApiJson<VerdictBody>,
) -> Result<Json<CalibrationFeedback>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let req = body.request()?;
    let feedback = state
        .store
        .record_calibration(&campaign, &user, stage(&p.stage)?, &p.item, &req)
        .await?;
    Ok(Json(feedback))
}

/// Every pool validator's calibration, and the campaign's settings.
#[derive(Serialize, ToSchema)]
pub struct CalibrationScores {
    pub validators: Vec<CalibrationScore>,
    pub settings: Settings,
}

/// Every pool validator's calibration, and the campaign's settings.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/calibration-scores",
    tag = "calibration",
    operation_id = "list_calibration_scores",
    params(CampaignPath),
    responses((status = 200, description = "Per validator", body = CalibrationScores))
)]
pub async fn calibration_scores(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
) -> Result<Json<CalibrationScores>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let validators = state.store.calibration_scores(&campaign).await?;
    Ok(Json(CalibrationScores {
        validators,
        settings: campaign.settings,
    }))
}

/// A validator of a campaign.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct ValidatorPath {
    /// The campaign's name
    campaign: String,
    /// The validator's name
    validator: String,
}

/// A validator's new calibration round.
#[derive(Serialize, ToSchema)]
pub struct NewRound {
    pub validator: String,
    pub round: i64,
    /// The round's items; of them, those the validator already decided in an earlier
    /// round (the pool holds too few unseen ones).
    pub items: usize,
    pub repeated: usize,
    /// Calibration items to add for a round of unseen items only (0 when it is one).
    pub more_items_needed: usize,
}

/// Start another calibration round for a validator who did not pass (drawn afresh from
/// the campaign's calibration items).
#[utoipa::path(
    post,
    path = "/api/v1/campaigns/{campaign}/calibration-scores/{validator}/rounds",
    tag = "calibration",
    operation_id = "start_calibration_round",
    params(ValidatorPath),
    responses(
        (status = 201, description = "The new round", body = NewRound),
        (status = 409, description = "The validator passed, or their round is still open"),
    )
)]
pub async fn new_round(
    State(state): State<AppState>,
    Extension(admin): Extension<User>,
    Path(p): Path<ValidatorPath>,
) -> Result<(StatusCode, Json<NewRound>)> {
    let campaign = campaign(&state, &p.campaign).await?;
    let draw = state
        .store
        .reset_calibration(&campaign, &p.validator, &admin.name)
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(NewRound {
            validator: p.validator,
            round: draw.round,
            items: draw.items,
            repeated: draw.repeated,
            more_items_needed: draw.more_items_needed,
        }),
    ))
}

/// The known items' pause lifted.
#[derive(Debug, Serialize, ToSchema)]
pub struct PauseLifted {
    pub validator: String,
    /// The calibration round the pause opened (kept on record, marked lifted).
    pub round: i64,
}

/// Lift the pause the known items of the live queue put on a validator's queue (their
/// recent catch rate on known defects was surely below the calibration threshold): the
/// queue opens again without the calibration round the pause opened.
#[utoipa::path(
    delete,
    path = "/api/v1/campaigns/{campaign}/calibration-scores/{validator}/pause",
    tag = "calibration",
    operation_id = "lift_pause",
    params(ValidatorPath),
    responses(
        (status = 200, description = "The pause is lifted", body = PauseLifted),
        (status = 409, description = "The validator's queue is not paused by the known items"),
    )
)]
pub async fn lift_pause(
    State(state): State<AppState>,
    Extension(admin): Extension<User>,
    Path(p): Path<ValidatorPath>,
) -> Result<Json<PauseLifted>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let round = state
        .store
        .lift_pause(&campaign, &p.validator, &admin.name)
        .await?;
    Ok(Json(PauseLifted {
        validator: p.validator,
        round,
    }))
}

/// A clip the author resolved, to be copied as a known clip.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"clip_id": "MC_F_EGO_STA_0007", "as": "MC_F_EGO_STA_0131"}))]
pub struct NewKnownCopy {
    /// The clip of the benchmark with an item the author resolved.
    clip_id: String,
    /// The copy's clip id: new to the campaign; give it one like the real clips' (its
    /// questions' ids follow it): letters, digits, `_`, `-` and `.`, not first `.` or `-`.
    #[serde(rename = "as")]
    #[schema(pattern = "^[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}$")]
    copy: String,
}

/// Make a clip the author resolved a known item for the validators who did not review
/// it: its current version is copied under a new id (the same video, fields and
/// questions), each item the author resolved known with the author's verdict (a reject
/// with the reasons of the validator who rejected), and served to a pair that reviewed
/// none of the clip: the task's pair in force when neither of them did, or, pairing per
/// clip, the two others with the least open work. The copy is scored and kept out of the
/// benchmark as any known item; the campaign's `known_rate` does not hold it back.
#[utoipa::path(
    post,
    path = "/api/v1/campaigns/{campaign}/known-copies",
    tag = "calibration",
    operation_id = "copy_resolved",
    params(CampaignPath),
    request_body = NewKnownCopy,
    responses(
        (status = 201, description = "The copy, served", body = crate::store::calibration::KnownCopy),
        (status = 404, description = "No such clip in the campaign"),
        (status = 409, description = "The clip has no item the author resolved, is not a clip of the benchmark, the id is taken, or no pair reviewed none of it (the detail says which)"),
    )
)]
pub async fn copy_resolved(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
    ApiJson(body): ApiJson<NewKnownCopy>,
) -> Result<(StatusCode, Json<crate::store::calibration::KnownCopy>)> {
    let campaign = campaign(&state, &p.campaign).await?;
    let made = state
        .store
        .copy_resolved(&campaign, body.clip_id.trim(), body.copy.trim())
        .await?;
    Ok((StatusCode::CREATED, Json(made)))
}

/// The known copies of resolved clips in the campaign, by copy id: each with the clip it
/// copies, its items that carry the author's verdict as their known one, and the pair it
/// is served to.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/known-copies",
    tag = "calibration",
    operation_id = "known_copies",
    params(CampaignPath),
    responses((status = 200, description = "The copies", body = Vec<crate::store::calibration::KnownCopy>))
)]
pub async fn known_copies(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
) -> Result<Json<Vec<crate::store::calibration::KnownCopy>>> {
    let campaign = campaign(&state, &p.campaign).await?;
    Ok(Json(state.store.known_copies(&campaign).await?))
}

/// Set a campaign's target and calibration rules.
#[utoipa::path(
    put,
    path = "/api/v1/campaigns/{campaign}/settings",
    tag = "calibration",
    operation_id = "set_settings",
    params(CampaignPath),
    request_body = Settings,
    responses((status = 200, description = "The settings in force", body = Settings))
)]
pub async fn set_settings(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
    ApiJson(body): ApiJson<Settings>,
) -> Result<Json<Settings>> {
    let campaign = campaign(&state, &p.campaign).await?;
    state.store.set_settings(&campaign, body).await?;
    Ok(Json(body))
}

/// Calibration for validators, its administration for admins.
pub fn routes() -> Vec<Route> {
    vec![
        api!(VALIDATOR, calibration_status),
        api!(VALIDATOR, calibration_item),
        api!(VALIDATOR, calibration_verdict),
        api!(ADMIN, calibration_scores),
        api!(ADMIN, new_round),
        api!(ADMIN, lift_pause),
        api!(ADMIN, copy_resolved),
        api!(ADMIN, known_copies),
        api!(ADMIN, set_settings),
    ]
}

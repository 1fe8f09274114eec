//! What admins do through the API beyond the review: accounts (create, roles, tokens),
//! a campaign's calibration rounds and settings, and the study's display. Each calls the
//! same use case as the admin pages.

use super::{ApiJson, CampaignPath, UserPath, campaign};
use crate::app::accounts::{Created, NewUser};
use crate::domain::Role;
use crate::domain::study::Display;
use crate::error::{Error, Result};
use crate::store::accounts::User;
use crate::store::catalog::Settings;
use crate::web::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// A new account.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"name": "val04", "role": "validator", "campaign": "default", "index": 4}))]
pub struct NewAccount {
    name: String,
    role: Role,
    /// The campaign a validator, author or participant works in (none for an admin).
    campaign: Option<String>,
    /// A validator's place in the campaign's pool.
    index: Option<i64>,
    /// The password (checked for strength); none: one is made and given once in the
    /// reply.
    password: Option<String>,
    /// Placing a validator that gives tasks with items a new default pair is refused
    /// (409, the changes in words) unless this is true.
    #[serde(default)]
    confirm: bool,
}

/// A new account, with the password made for it (given once; only its hash is kept).
#[derive(Serialize, ToSchema)]
pub struct CreatedAccount {
    pub user: User,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
}

/// Create an account: an admin (server-wide), or a validator (placed in a campaign's
/// pool), author or participant of a campaign.
#[utoipa::path(
    post,
    path = "/api/v1/users",
    tag = "accounts",
    operation_id = "create_user",
    request_body = NewAccount,
    responses(
        (status = 201, description = "Created", body = CreatedAccount),
        (status = 409, description = "The name is taken, or the placement gives tasks new pairs and was not confirmed (`confirm`): the detail lists them"),
    )
)]
pub async fn create_user(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<NewAccount>,
) -> Result<(StatusCode, Json<CreatedAccount>)> {
    let new = NewUser {
        name: body.name.trim().to_string(),
        role: body.role,
        password: body.password,
        campaign: body.campaign.map(|c| c.trim().to_string()),
        index: body.index,
        confirmed: body.confirm,
    };
    match crate::app::accounts::create_user(&state.store, new).await? {
        Created::NeedsConfirmation(changes) => Err(Error::Conflict(format!(
            "placing this validator gives {} task(s) a new pair ({}); send again with \"confirm\": true",
            changes.len(),
            changes
                .iter()
                .map(|c| c.describe())
                .collect::<Vec<_>>()
                .join("; ")
        ))),
        Created::User {
            user,
            generated_password,
        } => Ok((
            StatusCode::CREATED,
            Json(CreatedAccount {
                user,
                password: generated_password,
            }),
        )),
    }
}

/// An account's role in one campaign.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct RolePath {
    /// The account's name
    name: String,
    /// The campaign's name
    campaign: String,
}

/// The role to hold in a campaign.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"role": "author"}))]
pub struct RoleBody {
    /// `author` or `participant`; null takes the role away (a validator keeps their pool
    /// place). A validator's role comes with a pool place (`POST /api/v1/users`).
    role: Option<Role>,
}

/// Give an account an author's or participant's role in a campaign, or take its role
/// there away; it holds at the account's next request, on every server.
#[utoipa::path(
    put,
    path = "/api/v1/users/{name}/roles/{campaign}",
    tag = "accounts",
    operation_id = "set_role",
    params(RolePath),
    request_body = RoleBody,
    responses(
        (status = 200, description = "The account with its roles", body = User),
        (status = 409, description = "The account holds another role there"),
    )
)]
pub async fn set_role(
    State(state): State<AppState>,
    Path(p): Path<RolePath>,
    ApiJson(body): ApiJson<RoleBody>,
) -> Result<Json<User>> {
    state
        .store
        .set_role(&p.name, &p.campaign, body.role)
        .await?;
    let user = state
        .store
        .user_by_name(&p.name)
        .await?
        .ok_or_else(|| Error::NotFound(format!("no user named `{}`", p.name)))?;
    Ok(Json(user))
}

/// A new API token's label.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"label": "generation pipeline"}))]
pub struct TokenBody {
    /// What the token is for (kept with it)
    #[serde(default)]
    label: String,
}

/// A new API token, given once (only its digest is kept).
#[derive(Serialize, ToSchema)]
pub struct NewToken {
    pub user: String,
    pub token: String,
}

/// Issue an API token for an account.
#[utoipa::path(
    post,
    path = "/api/v1/users/{name}/tokens",
    tag = "accounts",
    operation_id = "create_token",
    params(UserPath),
    request_body = TokenBody,
    responses(
        (status = 201, description = "The token", body = NewToken),
        (status = 409, description = "The account is disabled"),
    )
)]
pub async fn create_token(
    State(state): State<AppState>,
    Path(p): Path<UserPath>,
    ApiJson(body): ApiJson<TokenBody>,
) -> Result<(StatusCode, Json<NewToken>)> {
    let label = if body.label.trim().is_empty() {
        "api"
    } else {
        body.label.trim()
    };
    let token = state.store.create_token(&p.name, label).await?;
    Ok((
        StatusCode::CREATED,
        Json(NewToken {
            user: p.name,
            token,
        }),
    ))
}

/// How many tokens were revoked.
#[derive(Serialize, ToSchema)]
pub struct Revoked {
    pub user: String,
    pub revoked: u64,
}

/// Revoke every API token of an account, at once on every server.
#[utoipa::path(
    delete,
    path = "/api/v1/users/{name}/tokens",
    tag = "accounts",
    operation_id = "revoke_tokens",
    params(UserPath),
    responses((status = 200, description = "The tokens that were live are revoked", body = Revoked))
)]
pub async fn revoke_tokens(
    State(state): State<AppState>,
    Path(p): Path<UserPath>,
) -> Result<Json<Revoked>> {
    let revoked = state.store.revoke_tokens(&p.name).await?;
    Ok(Json(Revoked {
        user: p.name,
        revoked,
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
    /// questions' ids follow it).
    #[serde(rename = "as")]
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

/// How the study shows its clips.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"display": "strip", "frames": 8}))]
pub struct DisplayBody {
    /// `video` or `strip`
    #[schema(example = "strip")]
    display: String,
    /// Frames in a strip (with `strip`)
    #[serde(default = "default_frames")]
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
    params(CampaignPath),
    request_body = DisplayBody,
    responses((status = 200, description = "The study as it now stands", body = super::study::StudyStatus))
)]
pub async fn set_study_display(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
    ApiJson(body): ApiJson<DisplayBody>,
) -> Result<Json<super::study::StudyStatus>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let display = Display::parse(&body.display).map_err(|m| Error::field("display", m))?;
    crate::app::set_study_display(&state.store, &state.config, &campaign, display, body.frames)
        .await?;
    super::study::study_status(&state, &campaign)
        .await
        .map(Json)
}

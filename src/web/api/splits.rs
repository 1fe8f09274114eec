//! The authors' work through the API: splits, keys in doubt, resolutions and
//! withdrawals.

use super::{ApiJson, CampaignPath, ItemPath, QuestionPath, StagePath, campaign, clip_urls, stage};
use crate::domain::{Origin, Resolution};
use crate::error::{Error, Result};
use crate::store::accounts::User;
use crate::store::review::SplitItem;
use crate::store::review::{ResolutionRequest, WithdrawalRequest};
use crate::web::routes::api;
use crate::web::routes::{AUTHOR, AUTHOR_OR_ADMIN, Route};
use crate::web::state::AppState;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// Questions whose key is in doubt, and the questions authors withdrew.
#[derive(Serialize, ToSchema)]
pub struct KeysInDoubt {
    pub keys_in_doubt: Vec<crate::report::blind::KeyInDoubt>,
    /// Retained questions an author withdrew from the benchmark, in id order.
    pub withdrawals: Vec<crate::domain::records::Withdrawal>,
}

/// The questions both of whose validators answered, blind (the blind key check),
/// otherwise than the key: for the authors to check the key.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/keys-in-doubt",
    tag = "authors",
    operation_id = "list_keys_in_doubt",
    params(CampaignPath),
    responses((status = 200, description = "The questions", body = KeysInDoubt))
)]
pub async fn keys_in_doubt(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
) -> Result<Json<KeysInDoubt>> {
    let campaign = campaign(&state, &p.campaign).await?;
    Ok(Json(KeysInDoubt {
        keys_in_doubt: crate::report::blind::keys_in_doubt(
            &state.store.blind_records(&campaign).await?,
        ),
        withdrawals: state.store.withdrawals(&campaign, None).await?,
    }))
}

/// Which splits to list.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SplitsQuery {
    /// Resolved splits too
    #[serde(default)]
    all: bool,
}

/// Splits of a stage.
#[derive(Serialize, ToSchema)]
pub struct Splits {
    pub splits: Vec<SplitItem>,
}

/// Splits waiting for an author (with `all=true` resolved ones too), with both
/// verdicts, reasons and notes.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/splits/{stage}",
    tag = "authors",
    operation_id = "list_splits",
    params(StagePath, SplitsQuery),
    responses((status = 200, description = "The splits", body = Splits))
)]
pub async fn splits(
    State(state): State<AppState>,
    Path(p): Path<StagePath>,
    Query(q): Query<SplitsQuery>,
) -> Result<Json<Splits>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let splits = state
        .store
        .splits(&campaign, stage(&p.stage)?, q.all)
        .await?;
    Ok(Json(Splits { splits }))
}

/// One split with both verdicts.
///
/// `clip.media_url` (and `clip.strip_url` when the server draws strips) fetch the clip
/// with this same token (byte ranges, ETag, 304).
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/splits/{stage}/{item}",
    tag = "authors",
    operation_id = "get_split",
    params(ItemPath),
    responses((status = 200, description = "The split", body = SplitItem))
)]
pub async fn split(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(p): Path<ItemPath>,
) -> Result<Json<SplitItem>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let mut split = state
        .store
        .split_item(&campaign, stage(&p.stage)?, &p.item)
        .await?;
    clip_urls(&state, &user, &mut split.clip)?;
    Ok(Json(split))
}

/// An author's resolution of a split.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"verdict": "accept", "note": "the artifact is in the background only"}))]
pub struct ResolutionBody {
    /// `accept` or `reject`
    #[schema(value_type = crate::domain::Resolution)]
    verdict: String,
    /// Why (at most 4000 characters)
    #[serde(default)]
    note: String,
}

/// A resolution and the split it resolved.
#[derive(Serialize, ToSchema)]
pub struct ResolutionReply {
    /// False when the same resolution was already stored (nothing was added).
    pub recorded: bool,
    pub split: SplitItem,
}

/// Resolve a split: accept or reject, with a note; final.
#[utoipa::path(
    post,
    path = "/api/v1/campaigns/{campaign}/splits/{stage}/{item}/resolution",
    tag = "authors",
    operation_id = "resolve_split",
    params(ItemPath),
    request_body = ResolutionBody,
    responses(
        (status = 201, description = "Recorded", body = ResolutionReply),
        (status = 200, description = "The same resolution was already stored", body = ResolutionReply),
        (status = 409, description = "The split was resolved otherwise, or a newer version of the clip arrived"),
    )
)]
pub async fn resolution(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(p): Path<ItemPath>,
    ApiJson(body): ApiJson<ResolutionBody>,
) -> Result<(StatusCode, Json<ResolutionReply>)> {
    let campaign = campaign(&state, &p.campaign).await?;
    let verdict = Resolution::parse(&body.verdict).map_err(|m| Error::field("verdict", m))?;
    let stage = stage(&p.stage)?;
    let recorded = state
        .store
        .resolve_split(
            &campaign,
            &user,
            stage,
            &p.item,
            &ResolutionRequest {
                verdict,
                note: body.note,
            },
            Origin::Api,
        )
        .await?;
    let mut split = state.store.split_item(&campaign, stage, &p.item).await?;
    clip_urls(&state, &user, &mut split.clip)?;
    let status = if recorded {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(ResolutionReply { recorded, split })))
}

/// An author's withdrawal of a retained question.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"reason": "incorrect_answer", "note": "both validators saw the orb roll left"}))]
pub struct WithdrawalBody {
    /// A Stage 2 reason of the campaign's protocol (`incorrect_answer` in VGenST-Bench's)
    reason: String,
    /// Why (required, at most 4000 characters)
    #[serde(default)]
    note: String,
}

/// A withdrawal as stored.
#[derive(Serialize, ToSchema)]
pub struct WithdrawalReply {
    /// False when the same withdrawal was already stored (nothing was added).
    pub recorded: bool,
    pub withdrawal: crate::domain::records::Withdrawal,
}

/// Withdraw a retained question from the benchmark (its key in doubt after the blind
/// key check, or found wrong otherwise): with a reason and a note; final. The review's
/// outcome and the agreement tables stay; the retained export and the baseline leave
/// the question out, and the audit trail records the withdrawal.
#[utoipa::path(
    post,
    path = "/api/v1/campaigns/{campaign}/questions/{question}/withdrawal",
    tag = "authors",
    operation_id = "withdraw_question",
    params(QuestionPath),
    request_body = WithdrawalBody,
    responses(
        (status = 201, description = "Recorded", body = WithdrawalReply),
        (status = 200, description = "The same withdrawal was already stored", body = WithdrawalReply),
        (status = 409, description = "The question is not retained, or was withdrawn otherwise"),
    )
)]
pub async fn withdrawal(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(p): Path<QuestionPath>,
    ApiJson(body): ApiJson<WithdrawalBody>,
) -> Result<(StatusCode, Json<WithdrawalReply>)> {
    let campaign = campaign(&state, &p.campaign).await?;
    let request = WithdrawalRequest {
        reason: body.reason,
        note: body.note,
    };
    let recorded = state
        .store
        .withdraw_question(&campaign, &user, &p.question, &request, Origin::Api)
        .await?;
    let withdrawal = state
        .store
        .withdrawals(&campaign, Some(&p.question))
        .await?
        .pop()
        .ok_or_else(|| Error::Internal(format!("withdrawal of `{}` not read back", p.question)))?;
    let status = if recorded {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(WithdrawalReply {
            recorded,
            withdrawal,
        }),
    ))
}

/// Splits for authors (and admins, who read them), resolutions and withdrawals for
/// authors.
pub fn routes() -> Vec<Route> {
    vec![
        api!(AUTHOR_OR_ADMIN, splits),
        api!(AUTHOR_OR_ADMIN, keys_in_doubt),
        api!(AUTHOR_OR_ADMIN, split),
        api!(AUTHOR, resolution),
        api!(AUTHOR, withdrawal),
    ]
}

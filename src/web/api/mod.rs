//! The JSON API under `/api/v1`. Handlers parse the request into domain types and
//! call the store; they hold no rules of their own.

pub mod study;

use crate::AppState;
use crate::app::exports;
use crate::domain::{Origin, Resolution, Stage, Verdict};
use crate::error::{Error, Result};
use crate::store::accounts::User;
use crate::store::catalog::Campaign;
use crate::store::review::{ResolutionRequest, VerdictRequest, VersionRule};
use crate::web::media::download;
use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Path, Query, Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::json;

/// A JSON body whose errors come back in the API's error format.
pub struct ApiJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = Error;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        // Read as plain JSON first, so that text no field may hold (NUL, control
        // characters) is refused by name before anything is decoded or stored.
        let value = match Json::<serde_json::Value>::from_request(req, state).await {
            Ok(Json(v)) => v,
            Err(rejection) => {
                return Err(match rejection {
                    JsonRejection::MissingJsonContentType(_) => Error::Invalid(
                        "send the body as JSON with `Content-Type: application/json`".into(),
                    ),
                    other => Error::Invalid(format!("invalid JSON body: {}", other.body_text())),
                });
            }
        };
        crate::domain::text::check_json(&value)
            .map_err(|(field, message)| Error::Field { field, message })?;
        serde_json::from_value::<T>(value)
            .map(ApiJson)
            .map_err(|e| Error::Invalid(format!("invalid JSON body: {e}")))
    }
}

async fn campaign(state: &AppState, name: &str) -> Result<Campaign> {
    state.store.campaign(name).await
}

fn stage(s: &str) -> Result<Stage> {
    Stage::parse(s).map_err(|m| Error::NotFound(format!("no such stage: {m}")))
}

static OPENAPI: &str = include_str!("../openapi.json");

/// Puts the URLs of a clip's file and strip, made for `user`, into an API reply.
/// They answer to this user's token (or session) only, under the pages' rules.
fn clip_urls(
    state: &AppState,
    user: &User,
    clip: &mut crate::store::review::ClipView,
) -> Result<()> {
    let token = state.store.media_grant(user, clip.version_id)?;
    clip.media_url = Some(format!("/media/{token}"));
    clip.strip_url = crate::web::media::strips_possible().then(|| format!("/media/{token}/strip"));
    Ok(())
}

pub async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}

/// The signed-in account: whether it is an admin and its role in each campaign. A
/// participant's roles are listed without the campaign's name (it could hint at the
/// source of the clips).
pub async fn me(Extension(user): Extension<User>) -> Json<serde_json::Value> {
    let roles: Vec<serde_json::Value> = user
        .roles
        .iter()
        .map(|r| match r.role {
            crate::domain::Role::Participant => json!({ "role": r.role }),
            _ => json!({ "campaign": r.campaign, "role": r.role }),
        })
        .collect();
    Json(json!({
        "id": user.id,
        "name": user.name,
        "admin": user.admin,
        "roles": roles,
    }))
}

/// Every account, with whether it is disabled.
pub async fn users(State(state): State<AppState>) -> Result<Response> {
    let accounts = state.store.accounts().await?;
    Ok(Json(json!({ "users": accounts })).into_response())
}

/// Disables an account: its sessions end and its tokens are revoked at once.
pub async fn disable_user(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Response> {
    let changed = state.store.set_disabled(&name, true).await?;
    Ok(Json(json!({"user": name, "disabled": true, "changed": changed})).into_response())
}

/// Enables a disabled account again.
pub async fn enable_user(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Response> {
    let changed = state.store.set_disabled(&name, false).await?;
    Ok(Json(json!({"user": name, "disabled": false, "changed": changed})).into_response())
}

/// The campaigns the caller works in: a validator's pools; admins and authors see all.
pub async fn campaigns(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
) -> Result<Json<serde_json::Value>> {
    let names = state.store.campaign_names_for(&user).await?;
    Ok(Json(json!({ "campaigns": names })))
}

pub async fn queue(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path((c, s)): Path<(String, String)>,
) -> Result<Response> {
    let campaign = campaign(&state, &c).await?;
    let q = state.store.queue(&campaign, &user, stage(&s)?).await?;
    Ok(Json(q).into_response())
}

pub async fn queue_items(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path((c, s)): Path<(String, String)>,
) -> Result<Response> {
    let campaign = campaign(&state, &c).await?;
    let items = state
        .store
        .queue_items(&campaign, &user, stage(&s)?)
        .await?;
    Ok(Json(json!({ "items": items })).into_response())
}

pub async fn item(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path((c, s, key)): Path<(String, String, String)>,
) -> Result<Response> {
    let campaign = campaign(&state, &c).await?;
    let item = state
        .store
        .validator_item(&campaign, &user, stage(&s)?, &key)
        .await?;
    let mut item = item;
    clip_urls(&state, &user, &mut item.clip)?;
    Ok(Json(item).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerdictBody {
    verdict: String,
    #[serde(default)]
    reasons: Vec<String>,
    #[serde(default)]
    note: String,
    time_spent_ms: Option<i64>,
    /// The clip version the validator reviewed; refused with 409 if a newer one arrived.
    version: Option<i64>,
}

impl VerdictBody {
    fn request(self) -> Result<VerdictRequest> {
        Ok(VerdictRequest {
            verdict: Verdict::parse(&self.verdict).map_err(|m| Error::field("verdict", m))?,
            reasons: self.reasons,
            note: self.note,
            time_spent_ms: self.time_spent_ms,
            time_measure: Some(crate::domain::TimeMeasure::Client),
            version: self.version.map_or(VersionRule::Newest, VersionRule::Shown),
        })
    }
}

pub async fn verdict(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path((c, s, key)): Path<(String, String, String)>,
    ApiJson(body): ApiJson<VerdictBody>,
) -> Result<Response> {
    let campaign = campaign(&state, &c).await?;
    let req = body.request()?;
    let recorded = state
        .store
        .record_verdict(&campaign, &user, stage(&s)?, &key, &req, Origin::Api)
        .await?;
    let status = if recorded.recorded {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(recorded)).into_response())
}

#[derive(Deserialize)]
pub struct SplitsQuery {
    #[serde(default)]
    all: bool,
}

pub async fn splits(
    State(state): State<AppState>,
    Path((c, s)): Path<(String, String)>,
    Query(q): Query<SplitsQuery>,
) -> Result<Response> {
    let campaign = campaign(&state, &c).await?;
    let splits = state.store.splits(&campaign, stage(&s)?, q.all).await?;
    Ok(Json(json!({ "splits": splits })).into_response())
}

pub async fn split(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path((c, s, key)): Path<(String, String, String)>,
) -> Result<Response> {
    let campaign = campaign(&state, &c).await?;
    let mut split = state.store.split_item(&campaign, stage(&s)?, &key).await?;
    clip_urls(&state, &user, &mut split.clip)?;
    Ok(Json(split).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResolutionBody {
    verdict: String,
    #[serde(default)]
    note: String,
}

pub async fn resolution(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path((c, s, key)): Path<(String, String, String)>,
    ApiJson(body): ApiJson<ResolutionBody>,
) -> Result<Response> {
    let campaign = campaign(&state, &c).await?;
    let verdict = Resolution::parse(&body.verdict).map_err(|m| Error::field("verdict", m))?;
    let stage = stage(&s)?;
    let recorded = state
        .store
        .resolve_split(
            &campaign,
            &user,
            stage,
            &key,
            &ResolutionRequest {
                verdict,
                note: body.note,
            },
            Origin::Api,
        )
        .await?;
    let mut split = state.store.split_item(&campaign, stage, &key).await?;
    clip_urls(&state, &user, &mut split.clip)?;
    let status = if recorded {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(json!({"recorded": recorded, "split": split}))).into_response())
}

/// The campaign's protocol in force, with its version: the tasks, QA types and
/// applicability that imports are checked by, and the reasons (with their keys, levels
/// and note rule) that verdicts are.
pub async fn protocol(State(state): State<AppState>, Path(c): Path<String>) -> Result<Response> {
    let campaign = campaign(&state, &c).await?;
    let t = &campaign.taxonomy;
    Ok(Json(json!({
        "campaign": campaign.name,
        "name": t.name,
        "version": campaign.protocol_version,
        "tasks": t.tasks.iter().map(|task| json!({
            "code": task.code,
            "name": task.name,
            "attributes": task.all_attributes(),
            "qa_types": t.applicability.get(&task.code).cloned().unwrap_or_default(),
        })).collect::<Vec<_>>(),
        "levels": t.levels,
        "qa_types": t.qa_types,
        "reasons": t.reasons.iter().map(|r| json!({
            "stage": r.stage,
            "code": r.code,
            "label": r.label,
            "key": r.key,
            "levels": r.levels,
            "note_required": r.note,
        })).collect::<Vec<_>>(),
        "export_variants": t.variants,
        "pairing": t.pairing.as_str(),
    }))
    .into_response())
}

pub async fn tasks(State(state): State<AppState>, Path(c): Path<String>) -> Result<Response> {
    let campaign = campaign(&state, &c).await?;
    let tasks = state.store.tasks(&campaign).await?;
    Ok(Json(json!({ "tasks": tasks })).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairBody {
    rater1: String,
    rater2: String,
}

pub async fn set_pair(
    State(state): State<AppState>,
    Path((c, task)): Path<(String, String)>,
    ApiJson(body): ApiJson<PairBody>,
) -> Result<Response> {
    let campaign = campaign(&state, &c).await?;
    let t = state
        .store
        .set_pair(&campaign, &task, Some((&body.rater1, &body.rater2)))
        .await?;
    Ok(Json(t).into_response())
}

pub async fn clear_pair(
    State(state): State<AppState>,
    Path((c, task)): Path<(String, String)>,
) -> Result<Response> {
    let campaign = campaign(&state, &c).await?;
    let t = state.store.set_pair(&campaign, &task, None).await?;
    Ok(Json(t).into_response())
}

pub async fn progress(State(state): State<AppState>, Path(c): Path<String>) -> Result<Response> {
    let campaign = campaign(&state, &c).await?;
    let p = state.store.progress(&campaign).await?;
    Ok(Json(json!({ "tasks": p })).into_response())
}

pub async fn export_decisions(
    State(state): State<AppState>,
    Path(c): Path<String>,
) -> Result<Response> {
    let campaign = campaign(&state, &c).await?;
    Ok(download(exports::decisions(&state.store, &campaign).await?))
}

pub async fn export_resolutions(
    State(state): State<AppState>,
    Path(c): Path<String>,
) -> Result<Response> {
    let campaign = campaign(&state, &c).await?;
    Ok(download(
        exports::resolutions(&state.store, &campaign).await?,
    ))
}

pub async fn calibration_status(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(c): Path<String>,
) -> Result<Response> {
    let campaign = campaign(&state, &c).await?;
    let s = state.store.calibration_status(&campaign, &user).await?;
    Ok(Json(s).into_response())
}

pub async fn calibration_item(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path((c, s, key)): Path<(String, String, String)>,
) -> Result<Response> {
    let campaign = campaign(&state, &c).await?;
    let item = state
        .store
        .calibration_item(&campaign, &user, stage(&s)?, &key)
        .await?;
    let mut item = item;
    clip_urls(&state, &user, &mut item.clip)?;
    Ok(Json(item).into_response())
}

pub async fn calibration_verdict(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path((c, s, key)): Path<(String, String, String)>,
    ApiJson(body): ApiJson<VerdictBody>,
) -> Result<Response> {
    let campaign = campaign(&state, &c).await?;
    let req = body.request()?;
    let feedback = state
        .store
        .record_calibration(&campaign, &user, stage(&s)?, &key, &req)
        .await?;
    Ok(Json(feedback).into_response())
}

pub async fn calibration_scores(
    State(state): State<AppState>,
    Path(c): Path<String>,
) -> Result<Response> {
    let campaign = campaign(&state, &c).await?;
    let scores = state.store.calibration_scores(&campaign).await?;
    Ok(Json(json!({ "validators": scores, "settings": campaign.settings })).into_response())
}

/// A campaign's sampled review: its rules with their plans, its lots (each with its
/// state and the upper bound on its whole's defect rate) and the items held.
pub async fn sampling_status(
    State(state): State<AppState>,
    Path(c): Path<String>,
) -> Result<Response> {
    let campaign = campaign(&state, &c).await?;
    let status = crate::app::sampling::status(&state.store, &campaign).await?;
    Ok(Json(status).into_response())
}

/// One run of a campaign's sampled review: settle, release, draw.
pub async fn sampling_run(
    State(state): State<AppState>,
    Path(c): Path<String>,
) -> Result<Response> {
    let run = crate::app::sampling::run(&state.store, &c).await?;
    Ok(Json(run).into_response())
}

pub async fn regeneration(
    State(state): State<AppState>,
    Path(c): Path<String>,
) -> Result<Response> {
    let campaign = campaign(&state, &c).await?;
    let items = state.store.regeneration_list(&campaign).await?;
    Ok(Json(json!({ "clips": items })).into_response())
}

#[derive(Deserialize)]
pub struct AuditQuery {
    clip: Option<String>,
    validator: Option<String>,
    from: Option<String>,
    to: Option<String>,
    latest: Option<usize>,
}

pub async fn audit(
    State(state): State<AppState>,
    Path(c): Path<String>,
    Query(q): Query<AuditQuery>,
) -> Result<Response> {
    let campaign = campaign(&state, &c).await?;
    let mut filter = crate::domain::records::AuditFilter::parse(
        q.clip.as_deref(),
        q.validator.as_deref(),
        q.from.as_deref(),
        q.to.as_deref(),
    )?;
    filter.limit = q.latest;
    let events = state.store.audit(&campaign, &filter).await?;
    Ok(Json(json!({ "events": events })).into_response())
}

/// The same figures as the dashboard, as JSON for scripts: `GET /api/v1/campaigns/{c}/stats`.
pub async fn stats(
    State(state): State<AppState>,
    Path(c): Path<String>,
    Query(q): Query<crate::web::scope::ScopeQuery>,
) -> Result<Response> {
    let campaign = campaign(&state, &c).await?;
    let json = crate::app::stats_json(&state.store, &campaign, &q.scope()?).await?;
    Ok(Json(json).into_response())
}
